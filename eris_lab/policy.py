"""The policy layer: from scored hits to a decision of how wide to open the door.

``decide`` applies DESIGN.md's rules in a fixed order and reports which one decided:

1. dialog pairing from the session's recent successful tools ("delete that email" after
   ``mail:check``) -> that domain's verbs, the cue's verb first; agenda > mail > calendar > doc;
   then conversation (the short-input guard) -> nothing offered; then the relevance gate (knob
   ``relevance_floor``, off in the reference knobs) and the uncovered rule (knob
   ``uncovered_floor``, :func:`uncovered`): "no tool fits" -> nothing offered (never for an
   information question when the catalogue can search the web: :func:`open_question`);
2. split forced hits (>= ``forced_floor``) from embedding hits (with ``subset_margin`` below 2,
   only hits near the top, at most ``widen_k``);
3. a lone embedding hit below ``single_hit_floor`` is demoted (never GBNF-lock onto a coin flip);
   with nothing left, fall back to the full roster, (knob) that tool's domain cluster, or the
   ``widen_k`` best-scored tools (``ranked``: bounded widening);
4. near-tie within ``margin`` of the top: widen to the union of domain clusters only when the
   tied hits sharing an affinity group with the top span two or more domains; otherwise keep
   the ranked subset (an unrelated near-tie never dumps clusters);
5. append forced hits; 6. re-rank by the original cosine (cluster siblings inherit their domain's
   best score minus 1e-4; with ``subset_margin`` below 2, a union of clusters larger than
   ``widen_k`` keeps the clusters seated in rank order up to it); 7. empty -> full roster, nothing, or ``ranked`` (knob ``empty_fallback``).

After ``decide``, the router applies :func:`retry_failed` (a failed tool offered again),
:func:`with_intents` (each request of a joined message keeps its best tool), :func:`with_slots`
(tools whose required arguments the message cannot fill are not offered; none left: nothing),
:func:`with_memory` (tools of the previous turn kept when this message continues that work) and
:func:`with_added` (tools the catalogue just gained, first).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Iterable, Literal, Mapping, Sequence

import numpy as np

from .catalog import Catalog, base_name, domain_of, family_of, lexical_text, name_words
from .guard import (countdown_tools, is_conversational, mostly_german, names_code, names_duration, one_edit_apart, only_short, singular,
                    tool_keywords, unread_script, without_small_talk)
from .knobs import Knobs
from .lexicon import (ACTION_WORDS, ENGLISH_CUES, GOODS_QUESTION_WORDS, GOODS_TOOL_RE, OPEN_SUBJECT_WORDS,
                      QUESTION_WORDS, READ_VERBS, REQUEST_WORDS, STOPWORDS)
from .slots import MissingSlot, has_evidence, required_slots

__all__ = [
    "Rule",
    "Kind",
    "Hit",
    "Decision",
    "decide",
    "decide_turn",
    "AFFINITY_GROUPS",
    "affinity_group",
    "SIBLING_OFFSET",
    "embedding_mask",
    "decision_keys",
    "retry_failed",
    "with_intents",
    "requested_action",
    "action_of",
    "action_order",
    "idle_countdowns",
    "with_memory",
    "with_added",
    "with_slots",
    "uncovered",
    "names_declared_keyword",
    "open_question",
    "MEMORY_MAX",
]


class Rule(StrEnum):
    """Rule ids a decision reports (DESIGN.md)."""

    CONVERSATIONAL = "CONVERSATIONAL"
    AGENDA_DIALOG_PAIRING = "AGENDA_DIALOG_PAIRING"
    MAIL_DIALOG_PAIRING = "MAIL_DIALOG_PAIRING"
    CALENDAR_DIALOG_PAIRING = "CALENDAR_DIALOG_PAIRING"
    DOC_DIALOG_PAIRING = "DOC_DIALOG_PAIRING"
    SINGLE_STRONG_HIT = "SINGLE_STRONG_HIT"
    RANKED_SUBSET = "RANKED_SUBSET"
    AFFINITY_MARGIN_UNION = "AFFINITY_MARGIN_UNION"
    LEXICAL_FORCED_ONLY = "LEXICAL_FORCED_ONLY"
    MIXED_EMBED_AND_LEXICAL = "MIXED_EMBED_AND_LEXICAL"
    UNSURE_FULL_ROSTER = "UNSURE_FULL_ROSTER"
    UNSURE_DOMAIN_CLUSTER = "UNSURE_DOMAIN_CLUSTER"
    #: Bounded widening (issue 18): unsure, so the ``widen_k`` best-scored tools, not the roster.
    UNSURE_RANKED = "UNSURE_RANKED"
    #: The relevance gate judged that no tool fits: nothing is offered (the grammar allows an answer).
    NO_TOOL_FITS = "NO_TOOL_FITS"
    EMPTY_AFTER_POLICY = "EMPTY_AFTER_POLICY"
    #: A tool call that failed is offered again for the user's reply (:func:`retry_failed`).
    FAILED_TOOL_RETRY = "FAILED_TOOL_RETRY"
    #: Tools the catalogue gained since the last user message, offered for the pending request
    #: the relevance gate had refused (:func:`with_added`).
    TOOLS_ADDED = "TOOLS_ADDED"
    #: The tools the policy chose need values the message does not give (:func:`with_slots`):
    #: nothing is offered, so the model asks for them instead of inventing them under the grammar.
    MISSING_ARGUMENTS = "MISSING_ARGUMENTS"
    #: Not a policy rule: an offer built by hand (``Offer.given``) for a flag, a benchmark's fixed
    #: roster, a schema-recovery round or the meta-tools; ``decide`` never reports it.
    GIVEN = "GIVEN"


Kind = Literal["subset", "cluster", "full_roster", "conversational"]

#: Near-ties widen only inside one group (DESIGN.md "Affinity groups"); other domains stand alone.
AFFINITY_GROUPS: dict[str, frozenset[str]] = {
    "time": frozenset({"agenda", "clock", "calendar"}),
    "web": frozenset({"web", "news", "wiki"}),
    "knowledge": frozenset({"doc", "vault", "memory", "media"}),
    "system": frozenset({"system", "skills"}),
}
_GROUP_OF = {domain: group for group, members in AFFINITY_GROUPS.items() for domain in members}

#: Cluster siblings rank just under their domain's best hit (issue #2, policy step 6).
SIBLING_OFFSET = 1e-4


def affinity_group(domain: str) -> str:
    """The affinity group of ``domain``, or ``""`` when it stands alone."""
    return _GROUP_OF.get(domain, "")


@dataclass(frozen=True, kw_only=True, slots=True)
class Hit:
    """A tool and its score for one message: a cosine in [-1, 1], or 1.0 for a forced hit."""

    name: str
    score: float


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """What the policy decided, and why.

    Attributes
    ----------
    rule : Rule
        Which rule decided (DESIGN.md rule ids).
    kind : {"subset", "cluster", "full_roster", "conversational"}
    names : tuple of str
        Tools to offer, best first (every tool for ``full_roster``, none for ``conversational``).
    reason : str
        One human sentence, shown by the CLI and the notebooks.
    sources : tuple of (str, str)
        Names added after the rules, each with what added it (``("cd", "memory")``:
        :func:`with_memory`); empty when the rules chose every name.
    missing : tuple of (str, str)
        With ``MISSING_ARGUMENTS``: the best chosen tool and each required argument the message
        gave no value for, described (``("salon.find", "city (a place)")``); the prompt asks the
        model to ask for them (``prompt.slim``).
    """

    rule: Rule
    kind: Kind
    names: tuple[str, ...]
    reason: str = ""
    sources: tuple[tuple[str, str], ...] = ()
    missing: tuple[tuple[str, str], ...] = ()


# ---------------------------------------------------------------------------------------------
# Rule 1: dialog pairing
# ---------------------------------------------------------------------------------------------

# "that one", "the second one", "the oat milk one", "the one from the bank"
_ONE = r"(?:the|that|this)\s+(?:[\w'-]+\s+){0,3}?one"
_ANAPHOR = (r"\b(?:that|this|it|those|these|them|the\s+(?:last|same|previous)|das|dies\w*|den|die|es|"
            # an item of what was just listed: "read the first one", "open the second", "die erste"
            r"the\s+(?:first|second|third|fourth|fifth|next|other|top|latest|newest|oldest)|" + _ONE + "|"
            r"(?:der|die|das|den)\s+(?:erste|zweite|dritte|nächste|letzte)\w*)\b")


@dataclass(frozen=True, slots=True)
class _Pairing:
    rule: Rule
    domain: str
    nouns: re.Pattern[str]
    verbs: tuple[tuple[re.Pattern[str], str], ...]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


#: Verbs that delete, shared by every domain's pairing ("drop the 3pm one" after calendar:list was
#: the whole roster until 2026-12-04: calendar knew only cancel, delete, remove and call off).
_DELETE = (r"delete|remove|drop|scrap|ditch|trash|bin|axe|kill|scratch|toss|nuke|chuck|junk|wipe|zap|erase|purge|"
           r"get\s+rid(?:\s+of)?|lösch\w*|losch\w*|entfern\w*")
#: A question about what an item says ("what does the second one say about pricing"): the verb that
#: reads it (a helper's variants, 2026-12-04, after doc:list, mail:check and calendar:list).
_SAYS = r"says?|said|mentions?|covers?|contains?|talks?\s+about|steht|sagt"

#: Continuation cues, in priority order (agenda > mail > calendar > doc; issue #2). A cue needs
#: an anaphor, a domain noun and a verb: a bare "remove it" never pairs.
PAIRINGS: tuple[_Pairing, ...] = (
    _Pairing(
        Rule.AGENDA_DIALOG_PAIRING, "agenda",
        _rx(r"\b(?:agenda|reminders?|to-?dos?|tasks?|items?|entry|entries|lists?|erinnerung\w*|aufgabe\w*|"
            r"eintr[aä]g\w*|liste\w*|punkt\w*)\b"),
        (
            (_rx(r"\b(?:" + _DELETE + r"|cancel|clear|take\b.{0,40}\boff|streich\w*)\b"), "agenda:remove"),
            (_rx(r"\b(?:complete|done|finish\w*|tick\w*|check\s+off|erledig\w*|abhak\w*)\b"), "agenda:complete"),
            (_rx(r"\b(?:push|postpone|delay|snooze|later|verschieb\w*)\b"), "agenda:push"),
            (_rx(r"\b(?:remind|erinner\w*)\b"), "agenda:remind_at"),
            (_rx(r"\b(?:show|list|read|zeig\w*)\b"), "agenda:list"),
        ),
    ),
    _Pairing(
        Rule.MAIL_DIALOG_PAIRING, "mail",
        _rx(r"\b(?:e-?mails?|mails?|messages?|inbox|nachricht\w*)\b"),
        (
            (_rx(r"\b(?:" + _DELETE + r")\b"), "mail:delete"),
            (_rx(r"\b(?:archive|move|file|archivier\w*|verschieb\w*)\b"), "mail:move"),
            (_rx(r"\b(?:reply|answer|respond|forward|antwort\w*|beantwort\w*|weiterleit\w*)\b"), "mail:write"),
            (_rx(r"\b(?:read|open|show|lies|zeig\w*|öffne|" + _SAYS + r")\b"), "mail:read"),
        ),
    ),
    _Pairing(
        Rule.CALENDAR_DIALOG_PAIRING, "calendar",
        _rx(r"\b(?:meetings?|appointments?|events?|calendar|termin\w*|besprechung\w*|kalender\w*)\b"),
        (
            (_rx(r"\b(?:" + _DELETE + r"|cancel|call\s+off|absag\w*|sag\w*\b.*\bab)\b"), "calendar:delete"),
            (_rx(r"\b(?:move|reschedule|change|update|postpone|shift|push|bump|rename|retitle|edit|modify|"
                 r"verschieb\w*|änder\w*|umbenenn\w*|benenn\w*)\b"), "calendar:update"),
            (_rx(r"\b(?:show|details?|open|tell\s+me\s+(?:more\s+)?about|more\s+about|zeig\w*|" + _SAYS + r")\b"),
             "calendar:get"),
        ),
    ),
    _Pairing(
        Rule.DOC_DIALOG_PAIRING, "doc",
        _rx(r"\b(?:documents?|docs?|pdfs?|dokument\w*)\b"),
        (
            (_rx(r"\b(?:" + _DELETE + r")\b"), "doc:delete"),
            (_rx(r"\b(?:read|open|show|lies|zeig\w*)\b"), "doc:read"),
            # a question about what it says ("what does the second one say about pricing")
            (_rx(r"\b(?:summari[sz]e|ask|query|search|question|" + _SAYS + r")\b"), "doc:query"),
        ),
    ),
)
_ANAPHOR_RE = _rx(_ANAPHOR)


def _dialog_pairing(text: str, catalog: Catalog, recent: Sequence[str]) -> Decision | None:
    """A continuation cue: an anaphor, a domain noun and a verb, that domain among the recent tools;
    right after a listing of that domain, a noun and a verb without an anaphor ("please remove
    the dentist reminder from my agenda" after ``agenda:list``: the item is one just listed)."""
    if not recent:
        return None
    anaphor = bool(_ANAPHOR_RE.search(text))
    listed = domain_of(recent[-1]) if _is_listing(recent[-1]) else None
    if not anaphor and listed is None:
        return None
    recent_domains = {domain_of(name) for name in recent} if anaphor else {listed}
    for pairing in PAIRINGS:
        cluster = catalog.cluster(pairing.domain)
        if not cluster or pairing.domain not in recent_domains:
            continue
        noun = pairing.nouns.search(text)
        if not noun:
            continue
        verb_tool = next((tool for pattern, tool in pairing.verbs if pattern.search(text)), "")
        if not verb_tool:
            continue
        first = (verb_tool,) if verb_tool in cluster else ()
        names = first + tuple(n for n in cluster if n not in first)
        last = next(n for n in reversed(recent) if domain_of(n) == pairing.domain)
        return Decision(
            rule=pairing.rule, kind="cluster", names=names,
            reason=f"continuation cue ({noun.group(0)!r}) after {last}: offering {pairing.domain} verbs, "
                   f"{names[0]} first",
        )
    return _pairing_on_last(text, catalog, recent) if anaphor else None


def _is_listing(name: str) -> bool:
    """Whether a tool only reads (a word of its name is in :data:`~eris_lab.lexicon.READ_VERBS`):
    right after it, "the first one" or "the dentist reminder" is one of what it listed."""
    return bool(set(name_words(base_name(name))) & READ_VERBS)


#: Longest message (words) that an anaphor and a verb pair with the last tool's domain without a
#: domain noun: "reply to it and say yes, Thursday works for me" after ``mail:read`` is ten (six
#: until 2026-12-03 left eleven of a helper's follow-ups on the whole roster).
PAIRING_MAX_WORDS = 10
_ONE_RE = _rx(r"\b" + _ONE + r"\b")


def _pairing_on_last(text: str, catalog: Catalog, recent: Sequence[str]) -> Decision | None:
    """An anaphor and a verb without a domain noun ("please remove it") act on the last tool's domain.

    Right after a listing (the last recent tool's name holds a read verb,
    :data:`~eris_lab.lexicon.READ_VERBS`), "it" is what was listed, and after any tool of the
    domain "that one" is what it made or showed: that domain's cluster is offered, the cue's verb
    first, for a message of at most :data:`PAIRING_MAX_WORDS` words. A cluster, never one tool: a
    lone destructive verb widens and never locks the grammar onto it (issue 16).
    """
    last = recent[-1]
    pairing = next((p for p in PAIRINGS if p.domain == domain_of(last)), None)
    cluster = catalog.cluster(pairing.domain) if pairing else ()
    if not cluster or len(text.split()) > PAIRING_MAX_WORDS:
        return None
    if not _is_listing(last) and not _ONE_RE.search(text):
        return None  # "it" after a change may be anything; "that one" is the item just made
    verb_tool = next((tool for pattern, tool in pairing.verbs if pattern.search(text)), "")
    if not verb_tool:
        return None
    first = (verb_tool,) if verb_tool in cluster else ()
    names = first + tuple(n for n in cluster if n not in first)
    return Decision(rule=pairing.rule, kind="cluster", names=names,
                    reason=f"continuation cue right after {recent[-1]}: offering {pairing.domain} verbs, {names[0]} first")


def with_intents(decision: Decision, intents: Sequence[Hit], catalog: Catalog, knobs: Knobs) -> Decision:
    """Add the best tool of each request of a message that joins several, beside ``decision``.

    Parameters
    ----------
    decision : Decision
    intents : sequence of Hit
        Each clause's best tool and its score, with same-domain siblings within ``margin`` of it
        (``Router.last_intents``; ``guard.clauses`` splits).
    catalog : Catalog
    knobs : Knobs
        Only calibrated knobs (``subset_margin`` below 2) add intents; DESIGN.md's reference rules
        stay as they are. A clause's best tool counts from ``threshold`` on.

    Returns
    -------
    Decision
        Unchanged for a full roster, nothing to offer, or no missing intent; else the same rule
        and kind with the missing tools appended, the reason saying so.

    Notes
    -----
    Issue 18 item 8 and bad input row 30: one message with six requests was locked onto three
    tools of one domain; per-clause scores alone are drowned when the policy keeps hits near the
    overall top only. Under the reference knobs a clause that is no request ("they're going to
    ruin my weekend with this rain, what's it doing tomorrow?", case route-01) would add its tool.
    """
    if decision.kind in ("full_roster", "conversational") or len(intents) < 2 or knobs.subset_margin >= 2.0:
        return decision
    extra = tuple(dict.fromkeys(h.name for h in intents if h.name in catalog and h.score >= knobs.threshold
                                and h.name not in decision.names))
    if not extra:
        return decision
    return Decision(rule=decision.rule, kind=decision.kind, names=decision.names + extra,
                    reason=f"{decision.reason}; plus the best tools of each further request: {', '.join(extra)}")


#: Most tools dialog memory adds to one offer.
MEMORY_MAX = 2


def _family(catalog: Catalog, name: str) -> str:
    """A tool's family (``catalog.family_of``: its domain, else its description's first sentence)."""
    return family_of(catalog.tool(name))


#: A message that only asks to repeat the last turn ("do that again", "same again", "once more
#: please", "nochmal"): the previous turn's tools come first, whatever their family (demo hist-013).
REPEAT_RE = re.compile(
    r"(?i)^\W*(?:(?:ok(?:ay)?|and|now|please|pls)\W+)*(?:(?:do|run|try)\s+(?:that|it|this)(?:\s+one)?\s+"
    r"(?:again|once\s+more|one\s+more\s+time)|(?:the\s+)?same\s+again|again|once\s+more|one\s+more\s+time|"
    r"repeat\s+(?:that|it|this)|(?:noch\s*(?:ein)?mal|nochmals)(?:\s+bitte)?|mach\s+(?:das|es)\s+(?:noch\s*(?:ein)?mal|nochmals)"
    r"|wiederhol\w*\s+(?:das|es))(?:\W+(?:please|bitte))?\W*$")


def with_memory(decision: Decision, last_turn: Sequence[str], ranked: Sequence[Hit], catalog: Catalog,
                knobs: Knobs, *, points_back: bool = False, repeat: bool = False) -> Decision:
    """Keep tools that ran on the previous turn in the offer, when this message continues that work.

    Parameters
    ----------
    decision : Decision
    last_turn : sequence of str
        Tools that ran since the previous user message, in call order (names outside ``catalog``
        are ignored).
    ranked : sequence of Hit
        This message's score for every tool (``Router.last_ranked``), best first.
    catalog : Catalog
    knobs : Knobs
        Only calibrated knobs (``subset_margin`` below 2) use memory, as :func:`with_intents`;
        reads ``threshold``.
    points_back : bool
        The message points back at the last turn ("it", "that file", "the same"): then a
        remembered tool of the same family as the offer's first tool is kept whatever it scores.
    repeat : bool
        The message only asks to repeat the last turn (:data:`REPEAT_RE`): the last turn's tools
        (at most :data:`MEMORY_MAX`) come first, of any family.

    Returns
    -------
    Decision
        Unchanged for a full roster, nothing to offer, or nothing to keep; else at most
        :data:`MEMORY_MAX` remembered tools appended, each recorded in ``sources`` as ``memory``.

    Notes
    -----
    A remembered tool is kept only when it belongs to the family of the tool the policy put first
    (its domain, else the shared first sentence of BFCL's class descriptions) and either scores at
    or above ``threshold`` for this message, or the message points back. A turn on another API
    never drags the last turn's tools along (issue 15: prepending the previous turn to the message
    lowered BFCL multi-turn top-5 recall from 0.721 to 0.621).
    """
    if decision.kind in ("full_roster", "conversational") or not decision.names or knobs.subset_margin >= 2.0:
        return decision
    if repeat:
        again = tuple(dict.fromkeys(n for n in reversed(tuple(last_turn)) if n in catalog))[:MEMORY_MAX]
        if again:
            return Decision(rule=decision.rule, kind=decision.kind,
                            names=again + tuple(n for n in decision.names if n not in again),
                            reason=f"{decision.reason}; a repeat of the last turn: {', '.join(again)} first",
                            sources=decision.sources + tuple((n, "memory") for n in again))
    family = _family(catalog, decision.names[0])
    score = {h.name: h.score for h in ranked}
    keep = []
    for name in dict.fromkeys(reversed(tuple(last_turn))):  # the latest call first
        if name not in catalog or name in decision.names or _family(catalog, name) != family:
            continue
        if points_back or score.get(name, -1.0) >= knobs.threshold:
            keep.append(name)
        if len(keep) >= MEMORY_MAX:
            break
    if not keep:
        return decision
    return Decision(rule=decision.rule, kind=decision.kind, names=decision.names + tuple(keep),
                    reason=f"{decision.reason}; memory: {', '.join(keep)} ran on the previous turn",
                    sources=decision.sources + tuple((n, "memory") for n in keep))


#: Rules whose tools come from the conversation, not from this message's words: a dialog pairing
#: acts on what the last tool returned ("delete that email"), a failed or added tool waits for the
#: reply, and a forced hit read the value it needs (the URL) off the message. :func:`with_slots`
#: leaves them alone.
_SLOTS_EXEMPT = frozenset({
    Rule.AGENDA_DIALOG_PAIRING, Rule.MAIL_DIALOG_PAIRING, Rule.CALENDAR_DIALOG_PAIRING, Rule.DOC_DIALOG_PAIRING,
    Rule.FAILED_TOOL_RETRY, Rule.TOOLS_ADDED, Rule.LEXICAL_FORCED_ONLY, Rule.MIXED_EMBED_AND_LEXICAL,
})


def with_slots(decision: Decision, catalog: Catalog, knobs: Knobs, text: str, *, after_tools: bool = False) -> Decision:
    """Offer only tools whose required arguments ``text`` can fill (:mod:`eris_lab.slots`).

    Parameters
    ----------
    decision : Decision
    catalog : Catalog
    knobs : Knobs
        Reads ``slot_check``: ``off`` (the reference), ``gate`` (nothing is offered when no chosen
        tool can be filled) or ``prune`` (a subset or cluster also loses the tools it cannot fill).
    text : str
        Where values may come from: the message, and the previous user message of a follow-up.
    after_tools : bool
        Tools already ran in this conversation (dialog memory is not empty): their results are
        in the model's context and may hold any value ("What about the standard deviation?" of
        numbers a file read returned, BFCL ``multi_turn_base``), so nothing is checked.

    Returns
    -------
    Decision
        Unchanged when the check is off or ``after_tools``, for nothing to offer, for
        :data:`_SLOTS_EXEMPT` rules, or when one chosen tool can be filled (``gate``);
        ``MISSING_ARGUMENTS`` (nothing offered, the reason naming what the best tool lacks) when
        none can; with ``prune``, the fillable tools alone under the same rule, the reason naming
        those dropped. A full roster is never pruned.

    Notes
    -----
    The grammar makes the model write every required argument (``grammar.compile``), so a tool
    offered without its values makes the model invent them. BFCL counts a call in that situation
    as a failure of relevance detection (its ``irrelevance`` and ``live_irrelevance`` categories).
    Measured with the calibrated knobs (README, "Calibrated offers"): empty offers on irrelevance
    0.167 -> 0.446 and live_irrelevance 0.363 -> 0.619, live_multiple recall 0.984 -> 0.981.
    """
    if (knobs.slot_check == "off" or after_tools or decision.kind == "conversational" or not decision.names
            or decision.rule in _SLOTS_EXEMPT):
        return decision
    slots = catalog.derived("policy.required_slots", lambda _: {})  # tool -> its slots, filled as tools come up
    evidence: dict[str, bool] = {}  # kind -> found in the text, each kind tested once

    def found(kind: str) -> bool:
        if kind not in evidence:
            evidence[kind] = has_evidence(kind, text)
        return evidence[kind]

    keep: list[str] = []
    first_missing: tuple[str, tuple[MissingSlot, ...]] | None = None
    for name in decision.names:
        if name not in catalog:
            continue
        if name not in slots:
            slots[name] = required_slots(catalog.tool(name).parameters)
        missing = tuple(MissingSlot(arg, kind) for arg, kind in slots[name] if not found(kind))
        if not missing:
            keep.append(name)
            if knobs.slot_check == "gate" or decision.kind == "full_roster":
                return decision  # one tool can be called: the offer stands
        elif first_missing is None:
            first_missing = (name, missing)
    if first_missing is None:  # every chosen tool can be filled (prune), or none is in the catalogue
        return decision
    if not keep:
        name, missing = first_missing
        others = ", nor for the required arguments of the other chosen tools" if len(decision.names) > 1 else ""
        return Decision(rule=Rule.MISSING_ARGUMENTS, kind="conversational", names=(),
                        reason=f"{decision.reason}; but the message gives no value for {name}'s "
                               f"{', '.join(m.describe() for m in missing)}{others}: offering nothing, so the model asks",
                        missing=tuple((name, m.describe()) for m in missing))
    kept = set(keep)
    dropped = [n for n in decision.names if n not in kept]
    return Decision(rule=decision.rule, kind=decision.kind, names=tuple(keep),
                    reason=f"{decision.reason}; without {', '.join(dropped)} (required arguments the message "
                           "does not give)",
                    sources=tuple(s for s in decision.sources if s[0] in kept))


def with_added(decision: Decision, added: Sequence[str], catalog: Catalog) -> Decision:
    """Offer tools the catalogue gained since the last user message first: the pending request waits for them.

    Parameters
    ----------
    decision : Decision
    added : sequence of str
        Tools listed since the last user message (``router.added_tools``); names outside
        ``catalog`` are ignored.
    catalog : Catalog

    Returns
    -------
    Decision
        Unchanged without added tools, for a full roster or a greeting (``CONVERSATIONAL``); a
        message the relevance gate refused becomes ``TOOLS_ADDED`` (the added tools alone);
        otherwise the added tools go first, each recorded in ``sources`` as ``added``.

    Notes
    -----
    Issue 15, ``multi_turn_miss_func``: BFCL withholds a function, then hands it back for the
    request still pending; re-scored like any tool, it was offered on 0.845 of those turns
    (docs/results/conversation-2026-11-30.json). A host announces new tools (MCP's
    ``notifications/tools/list_changed``) because something asked for them.
    """
    added = tuple(n for n in dict.fromkeys(added) if n in catalog)
    if not added or decision.kind == "full_roster" or decision.rule == Rule.CONVERSATIONAL:
        return decision
    if decision.kind == "conversational":
        return Decision(rule=Rule.TOOLS_ADDED, kind="subset", names=added,
                        reason=f"{decision.reason}; but {', '.join(added)} were just added for the pending request: "
                               "offering them", sources=tuple((n, "added") for n in added))
    rest = tuple(n for n in decision.names if n not in added)
    return Decision(rule=decision.rule, kind=decision.kind, names=added + rest,
                    reason=f"{decision.reason}; {', '.join(added)} just added to the catalogue: offered first",
                    sources=decision.sources + tuple((n, "added") for n in added if n not in decision.names))


def retry_failed(decision: Decision, failed: Sequence[str], hits: Sequence[Hit], catalog: Catalog) -> Decision:
    """Offer recent tool calls that failed again, beside what ``decision`` offers.

    Parameters
    ----------
    decision : Decision
        What :func:`decide` made of the message.
    failed : sequence of str
        Tools whose last call failed (names outside ``catalog`` are ignored), e.g. a weather call
        without a location; the user's reply ("I'm in Leeds") may supply what it lacked.
    hits : sequence of Hit
        The hits ``decide`` saw, score descending; they follow the failed tools when the decision
        was unsure.
    catalog : Catalog

    Returns
    -------
    Decision
        Unchanged without failed tools or for a greeting (``CONVERSATIONAL``). An unsure, empty
        or full-roster decision becomes ``FAILED_TOOL_RETRY``: the failed tools first, then the
        unsure decision's own ranked subset, or the hits after a full roster or an empty offer (none
        after the gate's ``NO_TOOL_FITS``); a confident one keeps its rule and gets the failed tools
        appended.

    Notes
    -----
    The fix reported with case route-23 (isair/jarvis PR #352: "when the previous tool reported
    failure, union it back into the allowed set"); carried over only on failure.
    """
    failed = tuple(n for n in dict.fromkeys(failed) if n in catalog)
    if not failed or decision.rule == Rule.CONVERSATIONAL:
        return decision
    unsure = decision.kind in ("full_roster", "conversational") or decision.rule in (
        Rule.UNSURE_FULL_ROSTER, Rule.UNSURE_DOMAIN_CLUSTER, Rule.UNSURE_RANKED, Rule.EMPTY_AFTER_POLICY)
    if unsure:
        # after the relevance gate's "no tool fits" only the failed tools come back: the message is
        # a reply to their call, and the hits are what the gate just refused
        # a ranked widening keeps its bound (a helper's variant of route-23: "Lisbon" after a failed
        # clock:now was offered 51 of 56 tools, every hit over the calibrated threshold)
        ranked = () if decision.rule == Rule.NO_TOOL_FITS else (
            decision.names if decision.kind == "subset" and decision.names else tuple(h.name for h in hits))
        names = failed + tuple(n for n in dict.fromkeys(ranked) if n in catalog and n not in failed)
        return Decision(rule=Rule.FAILED_TOOL_RETRY, kind="subset", names=names,
                        reason=f"the last call of {', '.join(failed)} failed; the reply may supply what it lacked: "
                               f"offering it again" + (f" ({decision.rule} set aside)" if decision.rule else ""))
    extra = tuple(n for n in failed if n not in decision.names)
    if not extra:
        return decision
    return Decision(rule=decision.rule, kind=decision.kind, names=decision.names + extra,
                    reason=f"{decision.reason}; failed {', '.join(extra)} offered again")


# ---------------------------------------------------------------------------------------------
# A message whose subject no tool covers
# ---------------------------------------------------------------------------------------------

_SUBJECT_WORD_RE = re.compile(r"[A-Za-z]{3,}")


def _subject_words(text: str) -> set[str]:
    """Content words of ``text`` (three letters or more; stop words and :data:`REQUEST_WORDS` out),
    lower-cased, a plural ``s`` off, cut to six letters so "equations" meets "equation" and
    "triangular" meets "triangle"."""
    words = (w.lower() for w in _SUBJECT_WORD_RE.findall(text))
    return {singular(w)[:6] for w in words if w not in STOPWORDS and w not in REQUEST_WORDS}


def _declared_keyword_re(catalog: Catalog) -> re.Pattern[str] | None:
    """One pattern for every tool's declared ``keywords`` (whole words, any case), or None."""
    words = sorted({k.strip().lower() for tool in catalog for k in tool.keywords if k.strip()}, key=len, reverse=True)
    if not words:
        return None
    return re.compile(r"(?i)(?<![\w-])(?:" + "|".join(re.escape(w) for w in words) + r")(?![\w-])")


def names_declared_keyword(text: str, catalog: Catalog) -> bool:
    """Whether ``text`` holds a word a descriptor declares as its tool's keyword (``keywords``).

    The relevance gate never refuses such a message: a keyword is the catalogue author's explicit
    routing word ("remember that my car is a blue Golf" for ``memory:stage``, demo plain-028;
    "make a note: the wifi password ..."), while the gate judges cosines it learned from
    pseudo-queries. A keyword of six letters or more is read through one typo ("remeber that i
    hate olives", demo typo-020). Name words do not count (measured: live_irrelevance 0.708 ->
    0.706 with them); BFCL's tools declare none, so its suites are unchanged."""
    pattern = catalog.derived("policy.declared_keyword_re", _declared_keyword_re)
    if pattern is None:
        return False
    if pattern.search(text) is not None:
        return True
    long_keywords = catalog.derived("policy.long_keywords", _long_keywords)
    return any(one_edit_apart(word, keyword) for word in {w.lower() for w in re.findall(r"[^\W\d_]{5,}", text)}
               for n in (len(word) - 1, len(word), len(word) + 1) for keyword in long_keywords.get(n, ()))


def _long_keywords(catalog: Catalog) -> dict[int, frozenset[str]]:
    """Declared one-word keywords of six letters or more, by length (typos are read for these)."""
    out: dict[int, set[str]] = {}
    for tool in catalog:
        for k in tool.keywords:
            k = k.strip().lower()
            if len(k) >= 6 and k.isalpha():
                out.setdefault(len(k), set()).add(k)
    return {n: frozenset(ws) for n, ws in out.items()}


def _tool_subject_words(catalog: Catalog) -> tuple[frozenset[str] | None, ...]:
    """Per tool, its :func:`_subject_words`; None for a tool whose subject is open (a web search).

    The open-subject words are whole words, as written or singular ("search engines"), or two or
    three words joined ("Duck Duck Go", live_multiple_30-10-0): cut to
    subject words, "news" was "new" and matched no tool's "news", while six-letter prefixes marked
    "international" and "engineer" open."""
    out = []
    for tool in catalog:
        text = lexical_text(tool)
        out.append(None if _names_a_word_of(text, OPEN_SUBJECT_WORDS) else frozenset(_subject_words(text)))
    return tuple(out)


#: A tool whose text holds fewer subject words than this (a one-line description and no
#: parameters: "Change code in a file.") says too little to tell what it does not cover, so beside
#: it a command ("hey, fix the login bug", route-14) is never judged uncovered; a question still is
#: ("hi, what's the capital of Peru?"). BFCL's tools hold more: 4 of the 1,621 distinct tools of
#: irrelevance, live_irrelevance and live_multiple hold fewer than 5, and moving the bound to 4..7
#: changed none of those suites' offers; the handed cases' tools hold a median of 4.
THIN_TOOL_WORDS = 5
#: Words that open a statement or a question, not a command: wh-words, pronouns, auxiliaries.
_NOT_A_COMMAND = STOPWORDS | ENGLISH_CUES | QUESTION_WORDS | frozenset(
    """i i'm im we we're they he she it's its there there's here was were don't may might must
    have has had am be been being if then so but just also maybe""".split())
_LEADING_FILLER_RE = re.compile(
    r"(?i)^(?:\W*(?:hey|hi|hiya|hello|yo|howdy|ok|okay|alright|so|morning|good (?:morning|afternoon|evening)|there|"
    r"please|pls|kindly|(?:can|could|would|will) (?:you|u))\b)+\W*")


def _is_command(text: str) -> bool:
    """Whether a sentence or clause of ``text`` (small talk in front left out,
    ``guard.without_small_talk``) opens, after a greeting and a "please" or "can you", with a word
    that is no wh-word, pronoun, auxiliary or function word: an imperative ("hey, fix the login
    bug", "could you refactor the payment module", "why is the login failing? fix it", "hello, the
    login is broken, please fix it"), not a question or a statement ("how are you?", "the build is
    red"). A word-list reading, no tagger: "time flies when ..." reads as a command too, which is
    why only :func:`uncovered`'s thin-tool exemption asks it."""
    for sentence in re.split(r"(?<=[.!?,;])\s+", (without_small_talk(text) or text).strip()):
        # any sentence or clause may be the command: "why is the login failing? fix it", "hello,
        # the login is broken, please fix it"
        rest = _LEADING_FILLER_RE.sub("", sentence)
        match = re.match(r"[A-Za-z][A-Za-z']*", rest)
        if match and match.group(0).lower() not in _NOT_A_COMMAND:
            return True
    return False


def uncovered(text: str, names: Iterable[str], catalog: Catalog) -> bool:
    """True when ``text`` reads English and no content word of it is in the text of any of ``names``.

    The tools' text is ``catalog.lexical_text`` (name words, description, keywords, parameter
    descriptions and enum values); a tool whose text names the web, news or an encyclopedia
    (:data:`~eris_lab.lexicon.OPEN_SUBJECT_WORDS`) covers every subject, and one that names goods
    covers a question about selling, buying or prices (:data:`~eris_lab.lexicon.GOODS_TOOL_RE`). A message in another
    language or mostly in another script (``guard.unread_script``: a lone "π" in an English
    question does not count) never counts, nor one without a content word or without an English
    function word ("Triangle area, base 4" is left to the other rules).

    Notes
    -----
    Issue 18 item 4: a message that "names an object the tool's description does not cover"
    ("Calculate the area of a triangle" beside ``determine_body_mass_index``). With a low top
    cosine it is the relevance rule :data:`~eris_lab.knobs.Knobs` ``uncovered_floor`` (measured in
    ``calibration.UNCOVERED_FLOOR``'s notes).
    """
    names = list(names)
    words = _subject_words(text)
    if not words or mostly_german(text) or unread_script(text):
        return False
    if not any(w.lower() in ENGLISH_CUES for w in re.findall(r"[A-Za-z]+", text)):
        return False
    own = catalog.derived("policy.tool_subject_words", _tool_subject_words)
    tools = [own[catalog.position(n)] for n in names if n in catalog]
    # a command, or a name from code ("where is parse_config defined?"), may be what a thin tool does
    thin_covers = _is_command(text) or names_code(text)
    names_goods = catalog.derived("policy.names_goods", _names_goods)
    goods = bool(words & GOODS_QUESTION_WORDS) and any(names_goods[catalog.position(n)] for n in names if n in catalog)
    return bool(tools) and not goods and not any(t is None or words & t or (thin_covers and len(t) < THIN_TOOL_WORDS)
                                                 for t in tools)


def _names_goods(catalog: Catalog) -> tuple[bool, ...]:
    """Per tool, whether its text names goods (:data:`~eris_lab.lexicon.GOODS_TOOL_RE`)."""
    pattern = re.compile(GOODS_TOOL_RE)
    return tuple(bool(pattern.search(lexical_text(tool))) for tool in catalog)


def _names_a_word_of(text: str, vocabulary: frozenset[str]) -> bool:
    """Whether a word of ``text``, as written or singular, or a run of two or three of its words
    joined, is in ``vocabulary``: a name split into words is read joined too ("Duck Duck Go" of
    ``duck_duck_go.search`` is duckduckgo)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", text)]
    runs = words + [a + b for a, b in zip(words, words[1:])] + [a + b + c for a, b, c in zip(words, words[1:], words[2:])]
    return any(w in vocabulary or singular(w) in vocabulary for w in runs)


_SEARCH_RE = re.compile(r"(?i)\bsearch|\blook(?:s|ing)? up\b")
#: Words a web search's name may hold beside a vendor or an acronym without naming a subject.
_SEARCH_NAME_WORDS = frozenset("search searches query tool api web internet online engine results json".split())
#: An information question: a wh-word opening the message, after an optional "can you tell me".
_INFORMATION_QUESTION_RE = re.compile(
    r"(?i)^\W*(?:(?:can|could|would) (?:you|u) (?:please )?(?:tell me|find out|look up|search)\s+)?"
    r"(?:who|what|what's|whats|when|where|which|why|how)\b")
_ADDRESSEE_RE = re.compile(r"(?i)\b(?:you|your|yours|yourself|u)\b")


def _web_search_tools(catalog: Catalog) -> tuple[str, ...]:
    """The tools of ``catalog`` that search the web on any subject: name and description say
    search and name the web, an engine or an encyclopedia (not news), and every word of the name
    is a search word, an acronym or part of an engine's name (``HNA_WQA.search``,
    ``duck_duck_go.search``; not ``search_for_sea_pictures``)."""
    web_words = OPEN_SUBJECT_WORDS - {"news"}
    out = []
    for tool in catalog:
        text = f"{tool.name.replace('_', ' ').replace('.', ' ')} {tool.description or ''}"
        if not _SEARCH_RE.search(text) or not _names_a_word_of(text, web_words):
            continue
        parts = re.findall(r"[A-Z]+(?![a-z])|[A-Za-z][a-z]*", tool.name)
        named = [p.lower() in _SEARCH_NAME_WORDS | STOPWORDS or (len(p) > 1 and p.isupper()) for p in parts]
        lower = [p.lower() for p in parts]
        for n in (1, 2, 3):  # runs that spell an engine: Google, duck duck go
            for k in range(len(parts) - n + 1):
                if "".join(lower[k:k + n]) in web_words:
                    named[k:k + n] = [True] * n
        if all(named):
            out.append(tool.name)
    return tuple(out)


def open_question(text: str, catalog: Catalog) -> bool:
    """True when ``text`` asks for information on a subject and ``catalog`` can search the web.

    "what is Imjin war" or "who is park ji sung" beside ``HNA_WQA.search`` ("Retrieve up-to-date
    information by searching the web") is a request however low its cosines: neither the
    relevance gate nor the uncovered rule says "no tool fits" then (live_multiple_9-4-1 and 11-4-3
    were refused). The question opens with a wh-word, has a content word, gives fewer than two
    numbers ("How many legs do 10 dogs and 2 monkeys have?" is a computation: BFCL
    live_irrelevance_166-21-2) and does not ask about the assistant ("what is your name?"); a
    news search does not count ("who is ji sung park?" beside ``HNA_NEWS.search`` is BFCL
    live_irrelevance_136-13-2).

    A catalogue's web searches are found once (``Catalog.derived``).
    """
    if not _INFORMATION_QUESTION_RE.search(text) or not _subject_words(text):
        return False
    if len(re.findall(r"\d+", text)) >= 2:  # a computation over the numbers it gives, no lookup
        return False
    asked = re.sub(r"(?i)^\W*(?:can|could|would) (?:you|u)\b", "", text)
    if _ADDRESSEE_RE.search(asked):
        return False
    return bool(catalog.derived("policy.web_search_tools", _web_search_tools))


# ---------------------------------------------------------------------------------------------
# decide
# ---------------------------------------------------------------------------------------------


def _full_roster(rule: Rule, catalog: Catalog, reason: str) -> Decision:
    return Decision(rule=rule, kind="full_roster", names=catalog.names, reason=reason)


def idle_countdowns(text: str, catalog: Catalog) -> frozenset[str]:
    """Countdown tools (``guard.countdown_tools``) that ``text`` cannot need: it names no duration
    and is in a script the duration words can read; empty otherwise.

    "remind me to ring the vet on Thursday" names a day, "nudge me Friday to water the plants" no
    time at all: a timer counts down a duration, so neither needs it (reported case route-27, whose
    ``expected_offer_excludes`` is the timer). The router demotes these in its ranking; a widening
    leaves them out.
    """
    if names_duration(text) or unread_script(text):
        return frozenset()
    return countdown_tools(catalog)


def _ranked_widening(rule: Rule, ranked: Sequence[Hit], catalog: Catalog, knobs: Knobs, note: str,
                     text: str = "") -> Decision:
    """Bounded widening: the ``widen_k`` best-scored tools with whole domains seated.

    A catalogue of at most ``max_whole_roster`` tools, or a widening that would seat every tool,
    is offered whole (kind ``full_roster``), so the rate of full-roster offers stays honest. With
    nothing scored (``ranked`` empty: the router could not read the message) the roster is offered
    whole too: the first ``widen_k`` tools of the catalogue would be a lottery. Either way a
    countdown tool ``text`` cannot need (:func:`idle_countdowns`) is left out (kind ``subset``
    when the roster loses it).
    """
    idle = idle_countdowns(text, catalog)
    if len(catalog) <= max(knobs.max_whole_roster, knobs.widen_k) or not ranked:
        whole = f"{note}: offering the whole roster of {len(catalog)}" + ("" if ranked else " (no tool was scored)")
        names = tuple(n for n in catalog.names if n not in idle)
        if len(names) == len(catalog) or not names:
            return _full_roster(rule, catalog, whole)
        return Decision(rule=rule, kind="subset", names=names,
                        reason=f"{whole} but {', '.join(n for n in catalog.names if n in idle)} (a countdown, "
                               "and the message names no duration)")
    order = [h.name for h in sorted(ranked, key=lambda h: -h.score) if h.name in catalog and h.name not in idle]
    if len(order) < knobs.widen_k:  # too few scored tools: fill up in catalogue order
        seen = set(order) | idle
        order += [n for n in catalog.names if n not in seen]
    names, _ = catalog.seat_domains(order, max(knobs.widen_k, 1))
    names = tuple(n for n in names if n not in idle)  # a seated domain brings its timer along
    return Decision(rule=rule, kind="subset", names=names,
                    reason=f"{note}: offering the {len(names)} best-ranked tools (widen_k {knobs.widen_k})")


def _tie_words(top: Hit, tied: Sequence[Hit]) -> str:
    """"same-domain a, b; unrelated c" for the reason sentence (bad input row 32: tools of the top
    hit's own domain were called unrelated)."""
    domain = domain_of(top.name)
    same = [h.name for h in tied if domain and domain_of(h.name) == domain]
    other = [h.name for h in tied if h.name not in same]
    return "; ".join(filter(None, [f"same-domain {', '.join(same)}" if same else "",
                                   f"unrelated {', '.join(other)}" if other else ""]))


def _rank(scores: dict[str, float], catalog: Catalog) -> tuple[str, ...]:
    return tuple(sorted(scores, key=lambda n: (-scores[n], catalog.position(n))))


def _with_clusters(hits: Iterable[Hit], domains: Iterable[str], catalog: Catalog) -> dict[str, float]:
    """Scores of ``hits`` plus every sibling of ``domains`` at its domain's best score minus 1e-4."""
    scores = {h.name: h.score for h in hits}
    for domain in domains:
        best = max((s for n, s in scores.items() if domain_of(n) == domain), default=0.0)
        for sibling in catalog.cluster(domain):
            scores.setdefault(sibling, best - SIBLING_OFFSET)
    return scores


def decide(text: str, hits: Sequence[Hit], catalog: Catalog, *, recent: Sequence[str] = (),
           knobs: Knobs = Knobs(), follow_up: bool = False, ranked: Sequence[Hit] = (),
           relevance: float | None = None, top_cosine: float | None = None) -> Decision:
    """Decide which tools to offer for one message.

    Parameters
    ----------
    text : str
        The (cleaned) user message; read for conversation and continuation cues.
    hits : sequence of Hit
        Scored tools, any order; scores >= ``knobs.forced_floor`` count as forced (lexical).
        Hits naming tools outside ``catalog`` are ignored.
    catalog : Catalog
        The registry: clusters and the full roster come from it.
    recent : sequence of str
        The session's recent successful tools, oldest first; the last ``knobs.dialog_memory`` count.
    knobs : Knobs
        Reads threshold, single_hit_floor, margin, forced_floor, unsure_fallback, empty_fallback,
        dialog_memory, short_max_words, short_max_chars.
    follow_up : bool
        The message continues a dialog (the router saw an earlier user turn): short input is
        then not conversation (``guard.is_conversational``).
    ranked : sequence of Hit
        Every tool's score, threshold or not (the router passes its best ones): what the
        ``"ranked"`` fallbacks widen to. Empty: the given ``hits``, then catalogue order.
    relevance : float, optional
        P(some tool fits) from the relevance gate (``calibration.RelevanceGate``); below
        ``knobs.relevance_floor`` nothing is offered (rule ``NO_TOOL_FITS``) unless a hit is forced
        or the message follows up (``follow_up``) after tools ran (``recent``).
    top_cosine : float, optional
        The message's best raw cosine (the gate's first feature); below ``knobs.uncovered_floor``,
        with no content word of the message in the best-ranked tools' text (:func:`uncovered`),
        nothing is offered (rule ``NO_TOOL_FITS``), under the same exceptions as the gate.

    Returns
    -------
    Decision
        ``names`` best first; never raises on any text.

    Notes
    -----
    Rule order and ids: DESIGN.md and issue #2. Re-ranking of cluster siblings at the domain's
    best score minus :data:`SIBLING_OFFSET` keeps the hit that caused a widening in front.
    """
    # 1. dialog pairing (before the short-input guard: "cancel that meeting" after calendar:list
    #    is three words, and a request)
    window = tuple(recent)[-knobs.dialog_memory:] if knobs.dialog_memory else ()
    paired = _dialog_pairing(text, catalog, window)
    if paired is not None:
        return paired

    forced = [h for h in hits if h.name in catalog and h.score >= knobs.forced_floor]
    short_rule = dict(max_words=knobs.short_max_words, max_chars=knobs.short_max_chars, follow_up=follow_up)
    if not forced and is_conversational(text, tool_keywords(catalog), **short_rule) and not (
            # short input is still a request when a tool clears the single-hit floor ("lint the
            # project" beside run_linter; guard.only_short)
            only_short(text, tool_keywords(catalog), **short_rule)
            and any(h.name in catalog and h.score >= knobs.single_hit_floor for h in hits)):
        return Decision(rule=Rule.CONVERSATIONAL, kind="conversational", names=(),
                        reason="short or greeting message with no URL and no tool keyword: conversation")

    # the relevance gate: "no tool fits" is not "unsure" (issue 18); a forced (lexical) hit overrides.
    # It judges a message that stands alone: a follow-up once tools have run ("read the first one"
    # after mail:check) is read with the dialog, and the rules below decide (demo hist-020, hist-026)
    standalone = not forced and not (window and follow_up)
    gate_refuses = (knobs.relevance_floor > 0 and relevance is not None and relevance < knobs.relevance_floor
                    and standalone and not names_declared_keyword(text, catalog))
    low_cosine = knobs.uncovered_floor > 0 and top_cosine is not None and top_cosine < knobs.uncovered_floor and standalone
    # an information question beside a web search is a request, whatever its cosines (open_question);
    # asked only when a refusal is in view
    asks_the_web = (gate_refuses or low_cosine) and open_question(text, catalog)
    if gate_refuses and not asks_the_web:
        return Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=(),
                        reason=f"relevance {relevance:.2f} below the gate's floor {knobs.relevance_floor:.2f}: "
                               "no tool fits, offering nothing")
    ranked = tuple(ranked) or tuple(h for h in hits if h.name in catalog)
    if (low_cosine and ranked and not asks_the_web
            and uncovered(text, [h.name for h in sorted(ranked, key=lambda h: -h.score)][:max(knobs.widen_k, 1)],
                          catalog)):
        return Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=(),
                        reason=f"no word of the message is in the best tools' text and the top cosine "
                               f"{top_cosine:.2f} is below {knobs.uncovered_floor:.2f}: no tool fits, offering nothing")

    # 2. split forced from embedding hits (keep the best score per tool)
    cut_note = ""
    best: dict[str, float] = {}
    for h in hits:
        if h.name in catalog and h.score >= knobs.threshold:
            best[h.name] = max(h.score, best.get(h.name, -1.0))
    forced_hits = [Hit(name=n, score=s) for n, s in best.items() if s >= knobs.forced_floor]
    embed_hits = sorted((Hit(name=n, score=s) for n, s in best.items() if s < knobs.forced_floor),
                        key=lambda h: -h.score)
    if embed_hits and knobs.subset_margin < 2.0:  # calibrated offers: hits near the top, at most widen_k
        near = [h for h in embed_hits if embed_hits[0].score - h.score <= knobs.subset_margin]
        if len(near) > knobs.widen_k:
            # which stay is the widening's order (router.widening_key: the lexical share joins the
            # cosine on a catalogue without routing hints); what stays keeps its own score
            position = {h.name: i for i, h in enumerate(ranked)}
            keep = {h.name for h in sorted(near, key=lambda h: position.get(h.name, len(position)))[:knobs.widen_k]}
            if keep != {h.name for h in near[:knobs.widen_k]}:
                cut_note = (f"; {len(near)} were near the top: the {knobs.widen_k} first by score plus the message's "
                            "lexical share kept (widen_lexical_weight)")
            near = [h for h in near if h.name in keep]
        embed_hits = near

    # 3. demote a lone weak embedding hit
    demoted = ""
    if len(embed_hits) == 1 and embed_hits[0].score < knobs.single_hit_floor:
        demoted = embed_hits[0].name
        embed_hits = []
        if not forced_hits:
            note = (f"lone hit {demoted} at {best[demoted]:.3f} is below the single-hit floor "
                    f"{knobs.single_hit_floor:.2f}")
            domain = domain_of(demoted)
            if knobs.unsure_fallback == "ranked":
                return _ranked_widening(Rule.UNSURE_RANKED, ranked, catalog, knobs, note, text)
            if knobs.unsure_fallback == "domain_cluster" and len(catalog.cluster(domain)) > 1:
                names = _rank(_with_clusters([Hit(name=demoted, score=best[demoted])], [domain], catalog), catalog)
                return Decision(rule=Rule.UNSURE_DOMAIN_CLUSTER, kind="cluster", names=names,
                                reason=f"{note}: offering the {domain} cluster")
            return _full_roster(Rule.UNSURE_FULL_ROSTER, catalog, f"{note}: offering the full roster")

    # 4. near-tie widening along affinity
    rule: Rule | None = None
    reason = ""
    widened = False
    scores: dict[str, float] = {h.name: h.score for h in embed_hits}
    if embed_hits:
        top = embed_hits[0]
        tied = [h for h in embed_hits[1:] if top.score - h.score <= knobs.margin]
        group = affinity_group(domain_of(top.name))
        allied = [top] + [h for h in tied if group and affinity_group(domain_of(h.name)) == group]
        allied_domains = tuple(dict.fromkeys(domain_of(h.name) for h in allied))
        if tied and len(allied_domains) >= 2:
            scores = _with_clusters(embed_hits, allied_domains, catalog)
            widened = True
            rule = Rule.AFFINITY_MARGIN_UNION
            reason = (f"near-tie within {knobs.margin:.2f} of {top.name} across related domains "
                      f"({', '.join(allied_domains)}; group {group}): offering their clusters")
        elif len(embed_hits) == 1:
            rule = Rule.SINGLE_STRONG_HIT
            reason = f"one hit, {top.name} at {top.score:.3f}, at or above the single-hit floor"
        else:
            rule = Rule.RANKED_SUBSET
            reason = (f"{len(embed_hits)} hits >= {knobs.threshold:.2f}, top {top.name} at {top.score:.3f}"
                      + (f"; near-tie with {_tie_words(top, tied)} kept ranked" if tied else "") + cut_note)

    # 5. append forced hits, 6. re-rank
    if forced_hits:
        for h in forced_hits:
            scores[h.name] = h.score
        forced_names = ", ".join(h.name for h in sorted(forced_hits, key=lambda h: -h.score))
        if rule is None:
            rule = Rule.LEXICAL_FORCED_ONLY
            reason = f"lexical/forced hits only ({forced_names})" + (f"; lone weak {demoted} demoted" if demoted else "")
        else:
            rule = Rule.MIXED_EMBED_AND_LEXICAL
            reason = f"forced hits ({forced_names}) plus embedding hits: {reason}"
    names = _rank(scores, catalog)
    if widened and knobs.subset_margin < 2.0 and len(names) > knobs.widen_k:
        # calibrated offers stay bounded: the union's clusters seated in rank order, up to widen_k
        names, seated = catalog.seat_domains(names, knobs.widen_k)
        reason += f"; seated {', '.join(seated)} within widen_k {knobs.widen_k}"

    # 7. empty -> full roster (or nothing)
    if not names:
        if knobs.empty_fallback == "ranked":
            return _ranked_widening(Rule.UNSURE_RANKED, ranked, catalog, knobs,
                                    f"no hit >= {knobs.threshold:.2f} and not judged irrelevant", text)
        if knobs.empty_fallback == "none":
            return Decision(rule=Rule.EMPTY_AFTER_POLICY, kind="conversational", names=(),
                            reason=f"no hit >= {knobs.threshold:.2f}: offering nothing (empty_fallback=none)")
        return _full_roster(Rule.EMPTY_AFTER_POLICY, catalog,
                            f"no hit >= {knobs.threshold:.2f}: offering the full roster")
    kind: Kind = "cluster" if widened else "subset"
    return Decision(rule=rule, kind=kind, names=names, reason=reason)


#: :func:`action_order` moves a tool forward past siblings scoring at most this much more (cosine):
#: enough to undo a near-tie between the verbs of one domain (calendar:list 0.54 against
#: calendar:create 0.47 for "add a calendar entry for friday at 3"), never a clear lead.
ACTION_ORDER_SLACK = 0.10


def requested_action(text: str) -> str:
    """The state-changing CRUD action (:data:`~eris_lab.lexicon.ACTION_WORDS`) an imperative opens with, or "".

    Only the first word after a greeting, "please" or "can you" counts: "email alice that the
    meeting moved" asks for no update, "move the meeting to 3pm" does.
    """
    rest = _LEADING_FILLER_RE.sub("", text.strip())
    match = re.match(r"[A-Za-z]+", rest)
    word = match.group(0).lower() if match else ""
    return next((action for action, words in ACTION_WORDS.items() if word in words), "")


def action_of(name: str) -> str:
    """The CRUD action a tool's name says (its first name word in an action set), or ""."""
    for word in name_words(base_name(name)):
        for action, words in ACTION_WORDS.items():
            if word in words:
                return action
    return ""


def action_order(names: Sequence[str], text: str, scores: Mapping[str, float]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``names`` with the tools whose name does what the message asks for first within their domain,
    and the tools moved: ``(names, moved)``.

    ``scores``: each tool's cosine (the offer's sort key, ``offer.ordered``). A tool moves ahead of
    the siblings of its domain that precede it, when the message opens with a CRUD verb
    (:func:`requested_action`), the tool's name says that action and the ones it passes do not, and
    they score at most :data:`ACTION_ORDER_SLACK` more. The set never changes, only its order (the
    first tool is what a small model picks most often).
    """
    action = requested_action(text)
    out = list(names)
    if not action or len(out) < 2:
        return tuple(out), ()
    does = {name: action_of(name) == action for name in out}  # once per tool: a roster may be long
    moved = []
    for name in names:
        if not does[name] or name not in scores:
            continue
        i = out.index(name)
        domain = domain_of(name)
        passed = [j for j in range(i) if not does[out[j]] and domain_of(out[j]) == domain]
        if passed and all(scores.get(out[j], 1.0) - scores[name] <= ACTION_ORDER_SLACK for j in passed):
            out.insert(passed[0], out.pop(i))
            moved.append(name)
    return tuple(out), tuple(moved)


def decide_turn(text: str, hits: Sequence[Hit], catalog: Catalog, *, knobs: Knobs = Knobs(),
                recent: Sequence[str] = (), follow_up: bool = False, ranked: Sequence[Hit] = (),
                relevance: float | None = None, failed: Sequence[str] = (), intents: Sequence[Hit] = (),
                last_turn: Sequence[str] | None = (), points_back: bool = False,
                added: Sequence[str] | None = (), previous: str = "", top_cosine: float | None = None) -> Decision:
    """One message's whole decision: :func:`decide`, then what the conversation adds, in this order:
    :func:`retry_failed` (``failed``), :func:`with_intents` (each clause's best hits),
    :func:`with_slots` (values read from ``text`` and, for a follow-up, the ``previous`` user
    message; nothing is checked once tools ran, ``recent``), :func:`with_memory` (``last_turn``,
    the tools of the previous turn; None leaves memory out) and :func:`with_added` (tools the user
    added to the conversation; None leaves them out).

    The one owner of this sequence: ``Router.route`` and the embedding strategy
    (``strategies.embedding``, which turns memory and added tools off for its ablations) both call
    it. Parameters as in those functions; ``hits`` feed both :func:`decide` and :func:`retry_failed`.
    """
    decision = decide(text, hits, catalog, recent=recent, knobs=knobs, follow_up=follow_up, ranked=ranked,
                      relevance=relevance, top_cosine=top_cosine)
    decision = retry_failed(decision, failed, hits, catalog)
    decision = with_intents(decision, intents, catalog, knobs)
    decision = with_slots(decision, catalog, knobs, f"{previous} {text}" if previous and follow_up else text,
                          after_tools=bool(recent))
    if last_turn is not None:
        decision = with_memory(decision, last_turn, ranked, catalog, knobs, points_back=points_back,
                               repeat=bool(REPEAT_RE.match(text)))
    if added is not None:
        decision = with_added(decision, added, catalog)
    return decision


# ---------------------------------------------------------------------------------------------
# The decision key: what decide reads of the knobs, for the tuning view's fast path
# ---------------------------------------------------------------------------------------------


def embedding_mask(hits: Sequence[Hit], catalog: Catalog, knobs: Knobs) -> np.ndarray:
    """Which of ``hits`` :func:`decide` counts as embedding hits (its step 2), ``(len(hits),) bool``.

    A hit names a catalogue tool, is the first (best) hit of its name, and scores below
    ``knobs.forced_floor``; the others are forced hits or ignored. ``hits`` sorted descending.
    """
    seen: set[str] = set()
    mask = np.zeros(len(hits), dtype=bool)
    for i, hit in enumerate(hits):
        mask[i] = hit.name in catalog and hit.name not in seen and hit.score < knobs.forced_floor
        seen.add(hit.name)
    return mask


def decision_keys(n_embed: np.ndarray, top: np.ndarray, gaps: np.ndarray, floors: np.ndarray,
                  margin: float, widens: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """How :func:`decide`'s steps 3 and 4 read the knobs, for many messages and knob columns at once.

    Given a message's kept hits (:func:`~eris_lab.router.kept_hits` at a threshold), ``decide``
    depends on the knobs only through: ``k``, the number of kept hits; whether the lone
    embedding hit is demoted (step 3, the only read of ``single_hit_floor``); how many embedding
    hits tie with the top (step 4, the only read of ``margin``); and which fallback it reads:
    ``unsure_fallback`` exactly when demoted, ``empty_fallback`` exactly when ``n_embed == 0``
    (step 7). Equal keys give equal names, kind and rule (only the ``reason`` sentence differs);
    ``tests/test_policy.py`` checks that against ``decide`` on a grid of knobs, and the tuning
    view (``lab.workbench``) memoises one decision per key.

    Parameters
    ----------
    n_embed : ndarray of int, shape ``(n_messages, n_columns)``
        Embedding hits (:func:`embedding_mask`) among each message's kept hits, per column.
    top : ndarray of float, shape ``(n_messages,)``
        Each message's best embedding score (nan when it has none).
    gaps : ndarray of float, shape ``(n_messages, n_gaps)``
        ``top`` minus each further embedding score, non-decreasing, padded with +inf.
    floors : ndarray of float, shape ``(n_columns,)``
        ``single_hit_floor`` of each column.
    margin : float
        The near-tie ``margin`` (cosine units).
    widens : ndarray of bool, shape ``(n_messages,)``, optional
        Whether a near-tie can widen the message's offer at all: its top embedding hit's domain
        belongs to an affinity group (:func:`affinity_group`). Where it cannot, step 4 keeps the
        ranked subset whatever ties, so ``tied`` is reported 0 and a margin drag re-decides
        nothing (a catalogue without affinity groups, such as BFCL's, never widens).

    Returns
    -------
    demoted : ndarray of bool, shape ``(n_messages, n_columns)``
    tied : ndarray of int, shape ``(n_messages, n_columns)``
        Embedding hits after the top within ``margin`` of it (a prefix of them, as ``gaps`` grows);
        0 where ``widens`` is False.
    """
    with np.errstate(invalid="ignore"):
        demoted = (n_embed == 1) & (top[:, None] < np.asarray(floors, dtype=float)[None, :])
    within = (gaps <= float(margin)).sum(axis=1)
    if widens is not None:
        within = np.where(np.asarray(widens, dtype=bool), within, 0)
    tied = np.minimum(np.maximum(n_embed - 1, 0), within[:, None])
    return demoted, tied
