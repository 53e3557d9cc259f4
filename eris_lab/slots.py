"""Slot filling: can the message give a value for each argument a tool requires?

The grammar compiled from an offer makes the model write every required argument of the tool it
calls (``grammar.compile``: required keys are not optional). Offering a tool whose required
arguments the message does not give therefore forces the model to invent them: "I need a unisex
salon now please" routed to ``FindProvider(city)`` comes back with a made-up city. The right
turn is an answer that asks. BFCL scores exactly this as irrelevance: its ``live_irrelevance``
cases are mostly requests for an offered tool that lack a required value ("Find me some
attractions to visit" with ``FindAttractions(location)``), and many ``irrelevance`` cases give
symbolic or missing values ("the roots of bx + c = 0" for ``find_roots(a, b, c)``).

:func:`missing_slots` reads a tool's JSON Schema and the message: each required argument without
a default gets a **kind** (:func:`slot_kind`) from its type and name, and each kind a cheap test
for evidence in the text (:func:`has_evidence`). Kinds whose values a message cannot be checked
for (free text, enums, booleans, objects) always count as filled: the check only refuses what
it can see is missing, so it never narrows an offer on a guess about prose.

========  ====================================================  ==========================================
kind      a required argument ...                               filled when the text has ...
========  ====================================================  ==========================================
number    of type integer or number, or an array of them        a number (digits, a number word, an
                                                                ordinal, "completely")
time      named for a date, a time or a duration (``date``,     a digit, a month or weekday, or a
          ``start_time``, ``days``)                             relative time word (``tomorrow``)
place     named or described as a city, location, address, or   a name (a capitalised word inside a
          coordinates of any type                               sentence, an all-caps code), a word after
                                                                in/at/near/from (the), a non-Latin word,
                                                                or ``here`` / ``near me``
url       named url, link, endpoint, website, domain, host      a URL, a domain, an IP address, localhost
email     named email                                           an address with ``@``
path      named path or file                                    a slash, a backslash or a file name
id        named id, key, token, code, symbol, sku ...           a digit, a quoted value, a capitalised
          (numbers too, when named id or code)                  or all-caps word, a word with ``_`` or ``-``
secret    named password, passphrase, passcode, pin, secret     the word password (pwd, passcode, pin ...)
free      anything else                                         (always filled)
========  ====================================================  ==========================================

Measured (2026-12-01, before the password kind and the stated defaults of 2026-12-03, whose
effect docs/journal.md (2026-12-03) gives; each BFCL case's own functions, halves by ``eval.datasets``' case-id split;
the rules were written on the *train* halves): the gold tool cannot be filled for 5 of 554
live_multiple requests (train) and 1 of 499 (test); no offered function can be filled for 45 of
143 irrelevance cases (train) and 39 of 97 (test), and for 156 of 437 and 161 of 443
live_irrelevance cases. The policy step that uses this is ``policy.with_slots``; docs/calibrated-offers.md
has what it does to the offers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from .guard import mostly_german
from .lexicon import BOUND_WORDS, MONTH_WORDS, NUMBER_WORDS, ORDINAL_WORDS, RELATIVE_TIME_WORDS, WEEKDAY_WORDS
from .schema import normalize_types

__all__ = ["SLOT_KINDS", "MissingSlot", "slot_kind", "has_evidence", "count_numbers", "required_slots", "missing_slots",
           "can_fill"]

#: Every slot kind (the module docstring's table; :func:`slot_kind` says in which order it tries them).
SLOT_KINDS = ("number", "time", "place", "url", "email", "path", "id", "secret", "free")

# -- what an argument's name says it holds (the name, lower-cased, without separators) ------------
_TIME_NAME_RE = re.compile(r"date|time|when|deadline|until|year|month|weekday|hour|schedule")
#: Numbers a time phrase gives ("for the next week" -> days): durations named by their unit.
_DURATION_NAME_RE = re.compile(r"days?$|weeks?$|hours?$|minutes?$|seconds?$|duration|period|interval|timespan")
#: Numbers that identify a thing the message may name instead (``province_id`` for "in Bangkok").
_NUMERIC_ID_NAME_RE = re.compile(r"id$|ids$|uuid|code$")
#: Numbers a place gives (the model knows where New York lies): read off live_relevance_3-3-0
#: ("the current temperature in New York, using its latitude and longitude coordinates").
_COORDINATE_NAME_RE = re.compile(r"latitude|longitude|^lat$|^lon$|^lng$|^long$|coordinates?$|^coords?$")
_PLACE_NAME_RE = re.compile(r"city|location|address|country|region|province|place|venue|airport|zip|postal|"
                            r"neighbo(?:u)?rhood|^loc$|^area$|^state$|^where")
_PLACE_DESCRIPTION_RE = re.compile(r"\b(?:city|town|location|(?<!ip )(?<!e-mail )(?<!email )(?<!mac )(?<!web )address|"
                                   r"country|airport)\b", re.I)
_FILE_DESCRIPTION_RE = re.compile(r"\b(?:file|folder|directory|path)\b", re.I)
_URL_NAME_RE = re.compile(r"url|uri$|link|endpoint|website$|domain|^host")
#: A description that tells the model which number to use when the user gives none ("If user
#: doesn't specify, please use 100", "Defaults to 10"): the model may write it, as for a schema
#: ``default`` (live_multiple_144-56-0: ``perPage`` was a missing number). Only a stated number
#: counts: "If not specified, fetches the most recent paper" or "Defaults to the standard port"
#: leave the model to invent a value (BFCL irrelevance_38, live_irrelevance_231-37-0).
_STATED_DEFAULT_RE = re.compile(
    r"(?i)\b(?:defaults?(?:\s+value)?(?:\s+(?:is|to|of|will be)|\s*[:=(])|(?:if|when) (?:the )?user "
    r"(?:does not|doesn't|did not|didn't) (?:specify|provide|give|mention)[^.]*?\buse)\s+['\"]?\d")
_EMAIL_NAME_RE = re.compile(r"e?mail(?:address)?$")
_PATH_NAME_RE = re.compile(r"path|file(?:name)?$")
#: A password the model cannot guess (BFCL live_irrelevance_231-37-0: "create a new postgres
#: server http://plgah.ca. Username is pascal" gives none; live_multiple_71-31-0 does).
_SECRET_NAME_RE = re.compile(r"password|passwd|passphrase|passcode|^pwd$|^pin$|secret$")
_SECRET_WORD_RE = re.compile(r"(?i)\b(?:password|passwort|passwd|passphrase|passcode|pwd|pin|secret)\b")
_ID_NAME_RE = re.compile(r"id$|ids$|uuid|(?:^|api)key$|token$|code$|number$|^sku|isbn|ticker|symbol")

# -- what a message holds --------------------------------------------------------------------------
_NUMBER_RE = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_DIGIT_RE = re.compile(r"\d")
_URL_RE = re.compile(r"(?i)https?://|www\.|\blocalhost\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[\w-]+(?:\.[\w-]+)*\.[a-z]{2,6}\b(?!\.\w)")
_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_PATH_RE = re.compile(r"[/\\~]|\b[\w-]+\.[A-Za-z0-9]{1,5}\b")
_QUOTED_RE = re.compile(r"(?<!\w)(['\"`\u201c\u2018])[^'\"`\u201d\u2019]+['\"`\u201d\u2019]")
_WORD_RE = re.compile(r"[\w'-]+", re.UNICODE)
_SENTENCE_RE = re.compile(r"(?<=[.!?\n])\s+")
# "to" and "into" are left out: lower case, what follows them is mostly a verb ("attractions to visit")
_LOCATIVE_RE = re.compile(r"(?i)\b(?:in|at|near|from|around|nach|bei|von|aus)\s+(?:the\s+|der\s+|dem\s+)?([^\W\d_][\w'-]*)")
_DEICTIC_PLACE_RE = re.compile(r"(?i)\b(?:here|nearby|near me|around me|my (?:location|area|city)|"
                               r"current location|local|hier|in der nähe)\b")
#: A capitalised word straight after a German preposition: a name (``_has_name``).
_GERMAN_NAME_RE = re.compile(r"\b(?:[Vv]on|[Bb]ei|[Nn]ach|[Aa]us|[Ii]n|[Ff]ür|[Üü]ber|[Mm]it)\s+([A-ZÄÖÜ][\w'-]+)")
#: German nouns that follow a preposition without an article in fixed phrases.
_GERMAN_NOT_NAMES = frozenset("Hause Haus Zukunft Anfang Ende Zeit Bedarf Ordnung Ruhe Eile Kürze Sicht Ausnahme "
                              "Urlaub Arbeit Bett Morgen Abend Mittag Nacht Minuten Stunden Tagen Wochen".split())
#: Capitalised words that are no names: pronouns, greetings and the verbs a request starts with.
_NOT_NAMES = frozenset(
    "I I'm I'd I'll I've Im Hi Hello Hey Please Can Could Would Will Should What When Where Who How Why Which "
    "Is Are Do Does Did Find Get Show Tell Give Book Search List Make Let Let's OK Ok Okay Thanks Thank USER "
    "Ich Bitte Kannst Können Wie Wo Was Wann".split())
#: Words after a locative preposition that name no place ("in my", "at least", "from this").
_NOT_PLACES = frozenset(
    "a an the my your our their his her its this that these those some any all least most first last next "
    "me you him them us it be do get go see find know make have buy book order rent".split())
_TIME_WORDS = MONTH_WORDS | WEEKDAY_WORDS | RELATIVE_TIME_WORDS


@dataclass(frozen=True, slots=True)
class MissingSlot:
    """A required argument the message gives no value for: its name and :data:`SLOT_KINDS` kind."""

    name: str
    kind: str

    def describe(self) -> str:
        """``"location (a place)"``, for a decision's reason."""
        article = {"number": "a number", "time": "a date or time", "place": "a place", "url": "a URL",
                   "email": "an email address", "path": "a file path", "id": "an identifier", "secret": "a password"}
        return f"{self.name} ({article.get(self.kind, self.kind)})"


def slot_kind(name: str, spec: Mapping[str, Any]) -> str:
    """The kind of a required argument ``name`` with JSON Schema ``spec`` (:data:`SLOT_KINDS`).

    Order: an ``enum`` or ``const``, a boolean or an object is ``free`` (nothing to check);
    coordinates (``latitude``, ``coordinates``) are a ``place``, whatever their type; an array of
    non-numbers is ``free``; numbers and arrays of numbers are ``number``, unless named for a time
    or a duration (``time``) or as an identifier (``province_id``: ``id``); then strings by name:
    secret, id, time, place, url, then place by a description naming a city, location or address
    (not an IP or email address; unless it names a file), then email, path; else ``free``.
    """
    spec = spec if isinstance(spec, Mapping) else {}
    key = re.sub(r"[^a-z0-9]", "", str(name).lower())
    kind = spec.get("type")
    kind = next((t for t in kind if t != "null"), None) if isinstance(kind, list) else kind
    if "enum" in spec or "const" in spec or kind in ("boolean", "object"):
        return "free"
    if kind in ("integer", "number", "array") and _COORDINATE_NAME_RE.search(key):
        return "place"
    if kind == "array":
        items = spec.get("items") if isinstance(spec.get("items"), Mapping) else {}
        return "number" if items.get("type") in ("integer", "number") and "enum" not in items else "free"
    if kind in ("integer", "number"):
        if _TIME_NAME_RE.search(key) or _DURATION_NAME_RE.search(key):
            return "time"
        return "id" if _NUMERIC_ID_NAME_RE.search(key) else "number"
    if kind not in (None, "string"):
        return "free"
    description = str(spec.get("description", ""))
    if _SECRET_NAME_RE.search(key):
        return "secret"
    if _ID_NAME_RE.search(key) and not _TIME_NAME_RE.search(key):
        return "id"
    if _TIME_NAME_RE.search(key):
        return "time"
    names_a_file = bool(_FILE_DESCRIPTION_RE.search(description))
    if _PLACE_NAME_RE.search(key) and not names_a_file:
        return "place"
    # the name before the description: "host" is "The hostname or IP address of the server", no
    # place (live_multiple_71-31-0 was refused for a missing place beside host 'db.company.com')
    if _URL_NAME_RE.search(key):
        return "url"
    if _PLACE_DESCRIPTION_RE.search(description) and not names_a_file:
        return "place"
    if _EMAIL_NAME_RE.search(key):
        return "email"
    if _PATH_NAME_RE.search(key):
        return "path"
    return "free"


def count_numbers(text: str) -> int:
    """How many numbers ``text`` gives: digit runs (``12,000`` and ``3.5`` count once), number
    words, ordinals and bounds ("completely", "max"; :data:`~eris_lab.lexicon.NUMBER_WORDS`,
    :data:`~eris_lab.lexicon.ORDINAL_WORDS`, :data:`~eris_lab.lexicon.BOUND_WORDS`)."""
    words = [w.lower() for w in _WORD_RE.findall(text)]
    spelled = sum(1 for w in words if w in NUMBER_WORDS or w.rstrip("s") in NUMBER_WORDS or w in ORDINAL_WORDS
                  or w in BOUND_WORDS)
    return len(_NUMBER_RE.findall(text)) + spelled


def _has_name(text: str) -> bool:
    """A capitalised word inside a sentence (not its first word, not ``I`` or a request verb), or an
    all-caps code of two letters or more (``NYC``, ``CA``). German capitalises every noun, so in a
    message that reads German (``guard.mostly_german``) only the all-caps codes count: "Ich brauche
    einen Unisex-Friseur" names no place. There a capitalised word straight after a preposition, with
    no article between, is a name ("eine Aktie von Siemens", "Flüge nach Lissabon"): a common noun
    takes its article ("von der Bank"), but for a few fixed phrases ("nach Hause"); the stock price
    asked "von Siemens" was refused for its missing symbol (round fourteen's variants, 2026-12-07)."""
    nouns_capitalised = mostly_german(text)
    if nouns_capitalised and any(m.group(1) not in _GERMAN_NOT_NAMES for m in _GERMAN_NAME_RE.finditer(text)):
        return True
    for sentence in _SENTENCE_RE.split(text.strip()):
        words = _WORD_RE.findall(sentence)
        for i, word in enumerate(words):
            if word in _NOT_NAMES:
                continue
            if len(word) >= 2 and word.isupper() and word.isalpha():
                return True
            if i > 0 and word[0].isupper() and word[0].isalpha() and not nouns_capitalised:
                return True
    return False


def _non_latin(text: str) -> bool:
    return any(ch.isalpha() and ord(ch) > 0x024F for ch in text)


def has_evidence(kind: str, text: str) -> bool:
    """Whether ``text`` holds something a ``kind`` argument could be filled from (module table).

    ``free`` (and any kind not in :data:`SLOT_KINDS`) is always True.
    """
    if kind == "number":
        return count_numbers(text) > 0
    if kind == "time":
        return bool(_DIGIT_RE.search(text)) or any(w.lower() in _TIME_WORDS for w in _WORD_RE.findall(text))
    if kind == "place":
        return (_has_name(text) or _non_latin(text) or bool(_DEICTIC_PLACE_RE.search(text))
                or any(m.group(1).lower() not in _NOT_PLACES | _TIME_WORDS for m in _LOCATIVE_RE.finditer(text)))
    if kind == "url":
        return bool(_URL_RE.search(text))
    if kind == "email":
        return bool(_EMAIL_RE.search(text))
    if kind == "path":
        return bool(_PATH_RE.search(text))
    if kind == "secret":
        return bool(_SECRET_WORD_RE.search(text))
    if kind == "id":
        return (bool(_DIGIT_RE.search(text)) or bool(_QUOTED_RE.search(text)) or _has_name(text) or _non_latin(text)
                or any(("_" in w or "-" in w.strip("-")) for w in _WORD_RE.findall(text)))
    return True


def required_slots(parameters: Any) -> tuple[tuple[str, str], ...]:
    """``(argument, kind)`` of each required argument without a default, in the schema's
    ``required`` order (:func:`slot_kind`); empty when the schema is no object schema. A default
    is a schema ``default`` or one the description states ("If not specified, use 100").

    A tool's slots depend on its schema alone: ``policy.with_slots`` reads them once per tool
    (``Catalog.derived``) and tests the message once per kind.
    """
    params = normalize_types(parameters) if isinstance(parameters, Mapping) else {}
    props = params.get("properties") if isinstance(params.get("properties"), Mapping) else {}
    required = params.get("required") if isinstance(params.get("required"), list) else []
    out = []
    for name in dict.fromkeys(r for r in required if isinstance(r, str)):
        spec = props.get(name)
        spec = spec if isinstance(spec, Mapping) else {}
        # a default fills it, given in the schema or stated in the description
        if "default" not in spec and not _STATED_DEFAULT_RE.search(str(spec.get("description", ""))):
            out.append((name, slot_kind(name, spec)))
    return tuple(out)


def missing_slots(text: str, parameters: Any) -> tuple[MissingSlot, ...]:
    """Required arguments of a tool (its ``parameters`` JSON Schema) that ``text`` gives no value for.

    Parameters
    ----------
    text : str
        What the values may come from: the message, and the previous user turn when the router
        read it as a follow-up (``policy.with_slots``).
    parameters : mapping
        The tool's parameters schema (``Tool.parameters``; BFCL's Python-ish types normalised).

    Returns
    -------
    tuple of MissingSlot
        In the schema's ``required`` order (:func:`required_slots`); empty when every required
        argument can be filled, when the tool requires nothing, or when the schema is not an
        object schema.

    Notes
    -----
    One number in the message fills every number argument: counting one number per argument
    refused more BFCL ``irrelevance`` requests (65 against 60 of the train half's 143), but also
    right calls whose other numbers the model knows ("the probability of drawing a king from a deck
    of 52 cards": 4 kings; BFCL ``multiple``: 3 of its test half's 112 requests).
    """
    return tuple(MissingSlot(name, kind) for name, kind in required_slots(parameters) if not has_evidence(kind, text))


def can_fill(text: str, parameters: Any) -> bool:
    """True when :func:`missing_slots` finds nothing missing."""
    return not missing_slots(text, parameters)
