"""Follow-through: a reply that claims an action the turn never performed.

Small models write "I'll remind you tomorrow at 10" without calling the reminder tool, or print
"[Image Generated]" when nothing was generated. This module finds such claims (pure functions,
no model), then asks the model one small structured question under a GBNF grammar: did it agree
to act, with which offered tool, and when, in the user's local time? The answer becomes a call for
the tool loop; a due time that does not parse is dropped, never guessed. A claimed placeholder with
no matching call is removed from the reply.

Detection is lexical and deliberately narrow: a sentence is a claim when it has a first-person
commitment or completion marker with a verb of doing (``CLAIM_MARKER_RE``) *and* a word of one
action family
(``ACTION_FAMILIES``); questions and negations are not claims. A claim is fulfilled when a call of
the turn has a name word of the claim's family (``catalog.name_words``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from typing import Any, Callable, Mapping, Sequence

from .catalog import name_words
from .errors import ErisLabError

__all__ = [
    "Claim",
    "Answer",
    "FollowThrough",
    "claims",
    "unfulfilled",
    "placeholders",
    "clean",
    "question",
    "grammar",
    "read_answer",
    "call_for",
    "follow_through",
    "ACTION_FAMILIES",
    "CLAIM_MARKER_RE",
    "DOING_VERBS",
    "PLACEHOLDER_RE",
    "TIME_PARAMETERS",
    "WHEN_PATTERN",
    "answer_schema",
]

#: Action families: (verb pattern that makes a sentence claim this action, words a tool name
#: carries when it performs it). Order matters: the first family whose verb matches wins.
#: Tool words follow the demo catalogue (descriptors/: agenda:remind_at, clock:alarm,
#: calendar:create, mail:write, memory:commit, vault:write) and common OpenAI-style names.
ACTION_FAMILIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "remind": (
        r"remind|reminder|alarm|wake you|timer|erinner|wecker|wecke",
        ("remind", "reminder", "reminders", "agenda", "alarm", "timer", "push", "todo", "task", "tasks"),
    ),
    "schedule": (
        r"schedul|book(?:ed)?\b|calendar|appointment|meeting|\bevent\b|termin|kalender",
        ("calendar", "event", "events", "meeting", "appointment", "schedule", "agenda", "book"),
    ),
    "send": (
        r"\bsen[dt]\b|e-?mail|\bmail\b|message|\btext(?:ed)? you\b|forward|schick|geschickt|gesendet",
        ("mail", "email", "message", "messages", "send", "sms", "chat", "forward"),
    ),
    "image": (
        r"image|picture|photo|draw|drew|illustrat|render|paint|\bbild|\bfoto",
        ("image", "images", "picture", "photo", "draw", "paint", "illustration", "art", "imagine", "diffusion"),
    ),
    "save": (
        r"\bsav(?:e|ed)\b|\bnoted?\b|note (?:that|it|this)|remember|write (?:it|that|this) down|\bstor(?:e|ed)\b|"
        r"\bmerk|speicher|notier",
        ("memory", "vault", "note", "notes", "doc", "save", "commit", "stage", "store", "remember", "write"),
    ),
}

#: Verbs of doing that follow a first-person marker in a claim ("I'll *remind* you", "I've
#: *added* it"); a marker followed by another verb ("I'll explain how reminders work") is no claim.
DOING_VERBS = (
    r"set|add|added|create|created|schedule|scheduled|remind|send|sent|save|saved|note|noted|book|booked|"
    r"draw|drew|generate|generated|make|made|put|write|wrote|e-?mail|mail|text|wake|store|stored|remember|"
    r"ping|notify|notified|forward|forwarded|render|rendered|paint|painted|go ahead and \w+|"
    r"erinnern|schicken|geschickt|senden|gesendet|speichern|gespeichert|merken|gemerkt|notieren|notiert|"
    r"eintragen|eingetragen|anlegen|angelegt|erstellen|erstellt|wecken"
)

#: A claim: a first-person promise or report followed within three words by a doing verb
#: ("I'll remind", "I have just sent", "let me set", "Ich werde dich morgen erinnern"), or a
#: completed state ("... is set", "has been scheduled"), or a German first-person present
#: ("Ich erinnere dich", "ich trage ... ein"). English and German.
CLAIM_MARKER_RE = re.compile(
    r"(?i)\b(?:(?:i['’]ll|i will|i shall|i['’]m going to|i am going to|let me|i['’]ve|i have|i just|"
    r"ich werde|ich habe)\s+(?:[\w'’-]+\s+){0,3}?(?:" + DOING_VERBS + r")\b|"
    r"(?:has|have) been (?:set|added|created|scheduled|sent|saved|booked|noted)\b|"
    r"(?:is|are) (?:now |all )?(?:set|scheduled|booked|saved|sent|noted)\b|"
    r"ich (?:erinnere|schicke|sende|speichere|merke|notiere|trage|lege|erstelle|wecke)\b)"
)
_NEGATION_RE = re.compile(
    r"(?i)\b(?:can['’]?not|can['’]t|cannot|won['’]t|unable|not able|don['’]t have|do not have|"
    r"will not|shall not|do not|did not|kann nicht|kann ich nicht|leider nicht|werde nicht|nicht m\w+glich)\b"
)
_SENTENCE_RE = re.compile(r"[^.!?\n]+[.!?]*")

#: A claimed artefact in square brackets ("[Image Generated]", "[image]", "[Image: a cat]",
#: "[File attached]", "[Reminder set]"), at most 60 characters, not a markdown link text; or a
#: markdown image with an empty or placeholder target (``![cat]()``, ``![cat](#)``,
#: ``![cat](attachment://x)``, ``![cat](sandbox:/x)``).
PLACEHOLDER_RE = re.compile(
    r"(?i)(?:\*{0,2}_?)"
    r"(?:\[(?=[^\[\]\n]{0,60}\])[^\[\]\n]*?\b(?:image|picture|photo|drawing|illustration|audio|video|"
    r"file|attachment|chart|diagram|screenshot|bild|foto|reminder|alarm|email|e-mail|"
    r"generated|attached|created|uploaded)s?\b[^\[\]\n]*\](?!\()"
    r"|!\[[^\[\]\n]{0,60}\]\((?:\s*|#|attachment:[^)\s]*|sandbox:[^)\s]*)\))"
    r"(?:_?\*{0,2})"
)

#: Parameter names that take a due time, when a tool schema has no ``format: date-time``.
TIME_PARAMETERS: tuple[str, ...] = (
    "when", "due", "due_at", "remind_at", "at", "time", "datetime", "date_time", "start", "start_time",
    "date", "deadline",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Claim:
    """A sentence of a reply that claims an action.

    Attributes
    ----------
    family : str
        Key of ``ACTION_FAMILIES`` (``"remind"``, ``"schedule"``, ``"send"``, ``"image"``, ``"save"``).
    text : str
        The sentence, stripped.
    start, end : int
        Character span of the sentence in the reply.
    """

    family: str
    text: str
    start: int
    end: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Answer:
    """The model's answer to the follow-through question, checked.

    Attributes
    ----------
    agreed : bool
        The model says it agreed to act.
    action : str
        An offered tool name; ``""`` when the answer named none that is offered.
    when : str
        ISO 8601 due time in the user's time zone (``2026-11-30T10:00:00+01:00``) or a date
        (``2026-11-30``); ``""`` when none was given or it was dropped.
    dropped : str
        A due time that was given but dropped (unparseable, or before ``now``), else ``""``.
    raw : str
        The model's text.
    error : str
        Why the answer could not be read (not JSON, wrong shape), else ``""``.
    """

    agreed: bool
    action: str = ""
    when: str = ""
    dropped: str = ""
    raw: str = ""
    error: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class FollowThrough:
    """What follow-through did with one reply.

    Attributes
    ----------
    reply : str
        The reply with unmatched placeholders removed.
    claims : tuple of Claim
        The unfulfilled claims (empty: nothing was asked).
    removed : tuple of str
        The placeholders removed from the reply.
    answer : Answer or None
        The checked answer; None when no question was asked.
    calls : tuple of dict
        ``{"name", "arguments"}`` to run (zero or one), for the tool loop.
    results : tuple
        What ``act`` returned for each call (empty without ``act``).
    note : str
        Why nothing was asked or done, or what was dropped.
    """

    reply: str
    claims: tuple[Claim, ...] = ()
    removed: tuple[str, ...] = ()
    answer: Answer | None = None
    calls: tuple[dict[str, Any], ...] = ()
    results: tuple[Any, ...] = ()
    note: str = ""


# ---------------------------------------------------------------------------------------------
# Detection (pure)
# ---------------------------------------------------------------------------------------------


def _family(sentence: str) -> str:
    for family, (verbs, _) in ACTION_FAMILIES.items():
        if re.search(verbs, sentence, re.IGNORECASE):
            return family
    return ""


def claims(reply: str) -> tuple[Claim, ...]:
    """Every sentence of ``reply`` that claims an action, in reply order.

    A claim has a marker (``CLAIM_MARKER_RE``) and an action verb (``ACTION_FAMILIES``); a
    question (ends with ``?``) or a negated sentence ("I can't remind you") is not a claim, and
    placeholders are not sentences (see :func:`placeholders`).
    """
    text = PLACEHOLDER_RE.sub(lambda m: " " * len(m.group(0)), reply)
    out = []
    for match in _SENTENCE_RE.finditer(text):
        sentence = match.group(0).strip()
        if not sentence or sentence.endswith("?"):
            continue
        if not CLAIM_MARKER_RE.search(sentence) or _NEGATION_RE.search(sentence):
            continue
        family = _family(sentence)
        if family:
            out.append(Claim(family=family, text=sentence, start=match.start(), end=match.end()))
    return tuple(out)


def _performs(family: str, tool_name: str) -> bool:
    return bool(set(ACTION_FAMILIES[family][1]) & set(name_words(tool_name)))


def unfulfilled(reply: str, called: Sequence[str]) -> tuple[Claim, ...]:
    """The claims of ``reply`` that no tool in ``called`` (names called this turn) performs."""
    return tuple(c for c in claims(reply) if not any(_performs(c.family, name) for name in called))


def placeholders(reply: str) -> tuple[str, ...]:
    """The claimed artefacts in ``reply`` (``PLACEHOLDER_RE``), as written, in order."""
    return tuple(m.group(0) for m in PLACEHOLDER_RE.finditer(reply))


def clean(reply: str, called: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """Remove placeholders that no call of the turn backs.

    A placeholder is backed when a called tool performs its family (``"[Image Generated]"`` by
    ``image:generate``, ``"[Reminder set]"`` by ``agenda:remind_at``). Lines left empty are
    dropped and runs of spaces collapsed.

    Returns
    -------
    (str, tuple of str)
        The cleaned reply and the placeholders removed.
    """
    removed: list[str] = []

    def drop(match: re.Match) -> str:
        family = _family(match.group(0)) or "image"
        if any(_performs(family, name) for name in called):
            return match.group(0)
        removed.append(match.group(0))
        return ""

    text = PLACEHOLDER_RE.sub(drop, reply)
    if not removed:
        return reply, ()
    lines = [re.sub(r"[ \t]{2,}", " ", line).strip() for line in text.splitlines()]
    text = "\n".join(line for line in lines if line)
    return text.strip(), tuple(removed)


# ---------------------------------------------------------------------------------------------
# The question (pure)
# ---------------------------------------------------------------------------------------------


#: A due time the answer may carry: a date, or a local date and time (no offset: the user's zone
#: is added when the answer is read, ``read_answer``).
WHEN_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2})?)?$"


def answer_schema(offered: Sequence[str]) -> dict[str, Any]:
    """The JSON Schema of the answer: ``{"agreed": bool, "action": <offered>, "when": date|null}``.

    ``action`` is an enum of the offered names; ``when`` is ``null`` or a string matching
    :data:`WHEN_PATTERN` (``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM[:SS]``).

    Raises
    ------
    ErisLabError
        ``offered`` is empty (there is nothing to act with).
    """
    names = list(dict.fromkeys(offered))
    if not names:
        raise ErisLabError("expected at least one tool name, got none", where="offered")
    return {
        "type": "object",
        "properties": {
            "agreed": {"type": "boolean"},
            "action": {"enum": names},
            "when": {"anyOf": [{"type": "null"}, {"type": "string", "pattern": WHEN_PATTERN}]},
        },
        "required": ["agreed", "action", "when"],
        "additionalProperties": False,
    }


def grammar(offered: Sequence[str]) -> str:
    """The GBNF grammar of the answer: :func:`answer_schema` compiled by ``grammar.compile_schema``.

    Raises
    ------
    ErisLabError
        ``offered`` is empty.
    """
    from .grammar import compile_schema

    return compile_schema(answer_schema(offered)).text


def question(reply: str, *, offered: Sequence[str], now: datetime, user_text: str = "") -> str:
    """The follow-through prompt: the exchange, the offered tools, the current local time.

    Written as a document to continue (the bundled model is a base model); the grammar forces the
    answer's shape, the prompt only has to make its content likely.

    Parameters
    ----------
    reply : str
        The assistant's reply that claims an action.
    offered : sequence of str
        Tool names the answer may pick (the turn's offer).
    now : datetime
        The user's current local time (aware: its offset is shown).
    user_text : str
        The user's message the reply answered.
    """
    when = now.isoformat(timespec="minutes")
    lines = ["A conversation between a user and an assistant with tools.", ""]
    if user_text:
        lines.append(f"User: {user_text.strip()}")
    lines += [f"Assistant: {reply.strip()}", "",
              f"Tools: {', '.join(offered)}",
              f"Current local time of the user: {when} ({now.strftime('%A')})", "",
              "Did the assistant agree to do something for the user? Which tool does that? "
              "When is it due, in the user's local time (YYYY-MM-DDTHH:MM, null if no time was said)?",
              "Answer as JSON:", ""]
    return "\n".join(lines)


def read_answer(text: str, *, offered: Sequence[str], now: datetime, tz: tzinfo | None = None) -> Answer:
    """Check the model's answer; never raises.

    ``action`` must be an offered name (else ``""``). ``when`` must parse as ISO 8601; a naive time
    is the user's local time (``tz``, default ``now``'s zone). A time that does not parse, or lies
    before ``now``, is dropped (``Answer.dropped``), never repaired or guessed.
    """
    raw = text
    try:
        data = json.loads(text)
    except ValueError:
        return Answer(agreed=False, raw=raw, error="the answer is not JSON")
    if not isinstance(data, dict):
        return Answer(agreed=False, raw=raw, error=f"expected a JSON object, got {type(data).__name__}")
    agreed = data.get("agreed")
    if not isinstance(agreed, bool):
        return Answer(agreed=False, raw=raw, error=f"agreed: expected true or false, got {agreed!r}")
    action = data.get("action")
    action = action if isinstance(action, str) and action in offered else ""
    value = data.get("when")
    if value is None:
        return Answer(agreed=agreed, action=action, raw=raw)
    zone = tz or now.tzinfo
    due: str = ""
    if isinstance(value, str):
        due = _iso(value.strip(), zone=zone, now=now)
    if not due:
        return Answer(agreed=agreed, action=action, dropped=str(value), raw=raw)
    return Answer(agreed=agreed, action=action, when=due, raw=raw)


def _iso(value: str, *, zone: tzinfo | None, now: datetime) -> str:
    """ISO text of ``value`` in ``zone``, or ``""`` when it does not parse or is in the past."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        try:
            day = date.fromisoformat(value)
        except ValueError:
            return ""
        return day.isoformat() if day >= now.date() else ""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?", value):
        return ""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return ""
    if zone is not None:
        moment = moment.replace(tzinfo=zone) if moment.tzinfo is None else moment.astimezone(zone)
    later, reference = moment, now
    if (later.tzinfo is None) != (reference.tzinfo is None):  # no zone known: compare wall clocks
        later, reference = later.replace(tzinfo=None), reference.replace(tzinfo=None)
    if later < reference:
        return ""
    return moment.isoformat()


def call_for(answer: Answer, parameters: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The call an answer asks for: ``{"name": action, "arguments": {<time parameter>: when}}``.

    The due time goes to the schema's first property with ``format`` ``date-time`` or ``date``,
    else to the first of ``TIME_PARAMETERS`` the schema has, else (no schema given) to ``"when"``.
    Other required arguments are left for the tool loop's schema check to ask for. None when the
    model did not agree or named no offered tool.
    """
    if not answer.agreed or not answer.action:
        return None
    arguments: dict[str, Any] = {}
    if answer.when:
        key = _time_parameter(parameters) if parameters is not None else "when"
        if key:
            arguments[key] = answer.when
    return {"name": answer.action, "arguments": arguments}


def _time_parameter(parameters: Mapping[str, Any]) -> str:
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    if not isinstance(properties, Mapping):
        return ""
    for name, schema in properties.items():
        if isinstance(schema, Mapping) and schema.get("format") in ("date-time", "date"):
            return name
    for name in TIME_PARAMETERS:
        if name in properties:
            return name
    return ""


# ---------------------------------------------------------------------------------------------
# The one function that runs a model
# ---------------------------------------------------------------------------------------------


def follow_through(runner: Any, reply: str, *, called: Sequence[str], offered: Sequence[str],
                   now: datetime, user_text: str = "", tz: tzinfo | None = None,
                   schemas: Mapping[str, Mapping[str, Any]] | None = None,
                   act: Callable[[str, dict[str, Any]], Any] | None = None,
                   max_tokens: int = 64) -> FollowThrough:
    """Clean the reply, and ask the model about an unfulfilled claim; act on a clear answer.

    Parameters
    ----------
    runner : object with ``generate(prompt, *, grammar, max_tokens, temperature)``
        ``llm.LlamaRunner`` (or ``llm.OpenAIBackend`` with a ``grammar_field``); its answer's
        ``.text`` is read.
    reply : str
        The assistant's final reply of the turn.
    called : sequence of str
        Names of the tools called this turn.
    offered : sequence of str
        The turn's offer (what the answer may pick).
    now : datetime
        The user's current local time (aware, in the user's zone).
    user_text : str
        The user's message.
    tz : tzinfo, optional
        The user's zone, default ``now.tzinfo``.
    schemas : mapping, optional
        Tool name -> JSON Schema of its parameters (where the due time goes, see
        :func:`call_for`).
    act : callable(name, arguments), optional
        Runs the call (e.g. the tool loop's execute); its return values go to ``results``.
    max_tokens : int
        Budget of the answer (the longest answer of the grammar is about 40 tokens plus the name).

    Returns
    -------
    FollowThrough
    """
    text, removed = clean(reply, called)
    pending = unfulfilled(text, called)
    if not pending:
        return FollowThrough(reply=text, removed=removed)
    if not offered:
        return FollowThrough(reply=text, claims=pending, removed=removed,
                        note="a claim was not acted on, and no tool is offered to act with")
    prompt = question(text, offered=offered, now=now, user_text=user_text)
    generation = runner.generate(prompt, grammar=grammar(offered), max_tokens=max_tokens, temperature=0.0)
    answer = read_answer(generation.text, offered=offered, now=now, tz=tz)
    call = call_for(answer, (schemas or {}).get(answer.action) if schemas is not None else None)
    notes = []
    if answer.error:
        notes.append(answer.error)
    if answer.dropped:
        notes.append(f"due time {answer.dropped!r} dropped: it does not parse or is in the past")
    if call is None and not answer.error:
        notes.append("the model did not agree to an offered action" if not answer.agreed or not answer.action
                     else "")
    results: tuple[Any, ...] = ()
    if call is not None and act is not None:
        results = (act(call["name"], dict(call["arguments"])),)
    return FollowThrough(reply=text, claims=pending, removed=removed, answer=answer,
                    calls=(call,) if call is not None else (), results=results,
                    note="; ".join(n for n in notes if n))
