"""The router: one message in, scored hits, a policy decision and the offer out.

One matrix product scores the message against every tool vector (cosine, since all rows are
L2-normalised; scoring as semantic-router's ``linear.py``). Guards run first and may skip the
embedder entirely (conversation) or force the fetch tool (URLs). Tool vectors come from
``catalog.routing_phrases`` (the mean of the phrase vectors, ``embed_tools``); phrase vectors are
cached on disk per model (``embed.VectorCache``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .catalog import Catalog, base_name, domain_of, lexical_text, name_words, routing_phrases
from .embed import Embedder, VectorCache, default_embedder, normalize_rows
from .errors import CatalogError, ErisLabError
from .guard import (
    FORCED_SCORE,
    apply_spelling,
    asking_tools,
    canned_reply_tools,
    catch_all_tools,
    clauses,
    clean_text,
    countdown_tools,
    fetch_tool,
    find_urls,
    foreign_by_function_words,
    foreign_by_letters,
    foreign_language,
    german_stem,
    is_conversational,
    is_language_question,
    language_tools,
    literal_idioms,
    only_short,
    opening_word,
    known_words,
    lexical_terms,
    mostly_german,
    names_domain,
    names_duration,
    page_phrase,
    quoted_payloads,
    addresses_apart,
    read_addresses,
    read_billing,
    read_problem,
    reports_problem,
    support_tools,
    read_code_question,
    read_existence,
    read_idioms,
    read_local_file,
    read_weather,
    sentence_parts,
    singular,
    spelling_fixes,
    spelling_index,
    tool_keywords,
    unread_script,
    without_greeting,
    without_payload,
    venting_apart,
    without_negated,
    without_venting,
    without_pointers,
    without_small_talk,
    words_unread,
)
from .knobs import Knobs
from .lexicon import BACKGROUND_QUERIES, ENGLISH_HOMOGRAPHS, FOREIGN_GLOSSES, GERMAN_CUES, GERMAN_GLOSSES, STOPWORDS
from .offer import Offer, build, ordered
from .policy import (ACTION_ORDER_SLACK, SIBLING_OFFSET, Decision, Hit, action_of, decide_turn,
                     requested_action)

__all__ = ["Router", "Routed", "embed_tools", "kept_hits", "passes_domain_floor", "previous_user_text", "top_scores",
           "dialog_tools", "last_turn_tools", "added_tools", "rank_catch_all_last", "without_asking", "without_pull", "REFERRING_CUE_RE", "FAILED_STATUSES"]

#: ``status`` values of a ``tool_used`` history turn that mean the call failed.
FAILED_STATUSES = frozenset({"failed", "failure", "fail", "error", "errored", "timeout"})

#: A follow-up that points back ("more", "this", "again"), or any short message after an earlier
#: user turn ("and tomorrow?"), is routed with the previous user message prepended too (the fix
#: reported with case route-05: forward the last full turn). Scores are the max of both routings.
REFERRING_CUE_RE = re.compile(
    r"(?i)\b(?:this|that|it|them|those|these|more|again|same|another|one more|the rest|"
    r"extra|others|other\s+ones|das|dies\w*|nochmal|noch\s+mehr|mehr|wieder|davon|weitere\w*)\b"
)

#: A message that leaves out what it asks for and names only what changes ("what about the
#: bedroom?", "and in Hamburg?", "louder please", "und morgen?"): after an earlier turn it is read
#: with that turn, whatever its own words score ("bedroom" alone scored a hotel booking at 0.96
#: after "turn off the kitchen lights", a new user's trial; the kind of cases route-03 and route-05).
#: What changes may come first and "too" or "as well" last ("the hallway as well", "Paris too":
#: round fourteen's variants, 2026-12-07; "the bathroom too" ranked a door lock first), in at most
#: five words that open with no pronoun ("me too", "you too" are small talk).
ELLIPSIS_RE = re.compile(
    r"(?i)^\W*(?:(?=(?!(?:me|you|i|we|it|he|she|they|there|thanks?|thank|same|love)\b)(?:[\w'’-]+\s+){0,4}(?:too|as\s+well|also)\W*$)|"
    r"(?:and|what|how)\s+about|and\s+(?:in|for|at|on|with|by|to|the|tomorrow|today|now|from|of|"
    r"into|near|over|under|after|before|without|during|per)\b|same\s+(?:for|thing|again)|"
    r"now\s+for|und\s+(?:in|für|am|um|mit|morgen|heute|jetzt|von|aus|nach|über|ohne)|was\s+ist\s+mit|wie\s+wäre?'?s\s+mit|"
    r"(?:a\s+(?:bit|little)\s+|(?:etwas|ein\s+bisschen)\s+)?(?:louder|quieter|brighter|dimmer|darker|warmer|"
    r"cooler|colder|hotter|faster|slower|higher|lower|bigger|smaller|longer|shorter|lauter|leiser|heller|"
    r"dunkler|wärmer|kälter|schneller|langsamer|höher|tiefer|größer|kleiner|länger|kürzer)\b)"
)

_WORD_RE = re.compile(r"[\wäöüß-]+", re.IGNORECASE)

RANKED_HITS = 64  # best-scored tools kept for bounded widening (more than any widen_k)
_MIN_BACKGROUND_STD = 0.03  # guards the z-score against a tool the background never moves
_MAX_CALIBRATED = 0.98  # a calibrated score never reaches forced_floor (0.99): forced means lexical
#: Largest catalogue offered whole for a message the router cannot read (a script the embedder does
#: not know, no word shared with the catalogue): the demo's 56 tools are about 9,500 prompt tokens
#: (38 kB in the full prompt), within a small model's context; bfcl-pooled's 1,041 would be 270,000,
#: so a larger catalogue gets the bounded widening over the (noisy) cosines instead.
BLIND_ROSTER_MAX = 64

#: How far (cosine units) a short message's own best tool must lead its second for the message to
#: keep its own ranking when it is read with the previous turn: "I had a banana" right after a
#: weather question scores log_meal 0.41, its second 0.15, but read with the question it ranked the
#: weather tool first (a helper's variants of route-23, 2026-12-05). "I'm in Paris now" (0.48 vs
#: 0.39) leads by too little and is read with the turn before, as a follow-up.
OWN_LEAD = 0.2
_SQUASH_WIDTH = 0.01  # calibrated scores above _MAX_CALIBRATED - this are squashed, keeping their order


def gloss_german(text: str) -> str:
    """English glosses of the known German words of a German message
    (:data:`~eris_lab.lexicon.GERMAN_GLOSSES`); ``""`` if none or if the message does not read German.

    A key that is an English word too (:data:`~eris_lab.lexicon.ENGLISH_HOMOGRAPHS`: "mail", "such",
    "lies") counts only beside other German evidence: another gloss key, German function words
    (:data:`~eris_lab.lexicon.GERMAN_CUES`) outnumbering English ones (:data:`~eris_lab.lexicon.ENGLISH_CUES`:
    "Des Moines" and "von der Leyen" sit in English sentences), or a German letter. Otherwise "find flights such as..."
    was glossed "search" and "mail the report" was labelled a German gloss. In a German message an
    inflected form finds its key by its Snowball stem ("spiel", "löschen"; snowballstemmer).
    """
    words = [w.lower() for w in _WORD_RE.findall(text)]
    reads_german = any(w in GERMAN_GLOSSES and w not in ENGLISH_HOMOGRAPHS for w in words) or mostly_german(text)
    if not reads_german:  # a stem match alone is no evidence: English "list" stems like "liste"
        return ""
    by_stem = _gloss_stems()
    keys = [k for w in words for k in _gloss_keys(w, by_stem)]
    return " ".join(dict.fromkeys(GERMAN_GLOSSES[k] for k in keys))


def translate_german(text: str, gloss: str | None = None) -> str:
    """``text`` read word for word in English: each known German word replaced by its gloss
    (:func:`gloss_german`), German function words (:data:`~eris_lab.lexicon.GERMAN_CUES`) left out,
    every other word (a name, "Sushi") kept; ``""`` when the message does not read German or
    nothing was glossed. ``gloss``: :func:`gloss_german` of ``text`` where the caller has it.

    The glosses appended to the German message left a food order at cosine 0.57 ("Bestell mir
    bitte Sushi. (order)"), below the single-hit floor, where "order Sushi" scores 0.77 (a helper's
    variant of route-08, 2026-12-05). Scored beside the message, so it can raise a score, never
    lower one."""
    if not (gloss if gloss is not None else gloss_german(text)):
        return ""
    by_stem = _gloss_stems()

    def glosses(word: str) -> tuple[str, ...]:
        keys = _gloss_keys(word.lower(), by_stem) if _WORD_RE.fullmatch(word) else ()
        return tuple(GERMAN_GLOSSES[k] for k in keys)

    return _word_for_word(text, glosses, lambda i, word: word.lower() not in GERMAN_CUES)


def gloss_foreign(text: str, *, whole: bool = False, names: bool = True) -> str:
    """``text`` read word for word in English through :data:`~eris_lab.lexicon.FOREIGN_GLOSSES`
    (Spanish, French, Italian, Portuguese, Dutch, Polish: "¿Tengo correos nuevos?" -> "emails new";
    other words stay only when they name something), or ``""`` when the text reads English or
    German (``guard.foreign_language``) or no word is known. Scored beside the message, so it can
    raise a score, never lower one (a helper's variants of route-08, 2026-12-05: the first was
    conversation, "Jaka jest pogoda w Krakowie?" ranked no weather tool).

    With ``whole``, ``""`` also when a word of four letters or more has no gloss and names nothing:
    the gloss then says all the message does ("Raconte-moi une blague" -> "tell me joke"), and the
    short-input guard may measure it (``policy.decide``'s ``gloss``). With ``names`` false, only
    the glossed words: names, numbers and paths are left out too."""
    if not foreign_language(text):
        return ""
    if whole and any(len(w) >= 4 and not foreign_gloss(w) and not _names_something(i, w)
                     for i, w in enumerate(t.strip(_TOKEN_EDGE) for t in text.split())):
        return ""

    def glosses(word: str) -> tuple[str, ...]:
        gloss = foreign_gloss(word)
        return (gloss,) if gloss else ()

    return _word_for_word(text, glosses, _names_something if names else lambda i, word: False)


#: Shortest word whose last letter may differ from its gloss key's (:func:`foreign_gloss`).
INFLECTED_GLOSS_MIN_LETTERS = 5


@functools.lru_cache(maxsize=1)
def _glosses_by_stem() -> dict[str, str]:
    """Gloss keys of :data:`INFLECTED_GLOSS_MIN_LETTERS` letters or more by all but their last
    letter, each stem's gloss kept only when its keys agree."""
    out: dict[str, str | None] = {}
    for key, gloss in FOREIGN_GLOSSES.items():
        if len(key) >= INFLECTED_GLOSS_MIN_LETTERS:
            stem = key[:-1]
            out[stem] = gloss if out.get(stem, gloss) == gloss else None
    return {stem: gloss for stem, gloss in out.items() if gloss}


def foreign_gloss(word: str) -> str:
    """The English gloss of one word of another language (:data:`~eris_lab.lexicon.FOREIGN_GLOSSES`),
    or ``""``.

    A word of :data:`INFLECTED_GLOSS_MIN_LETTERS` letters or more that is no key may differ from
    one in its last letter only, a case or gender ending: Polish "muzykę" is "muzyka" as an
    object (round twelve's variants, 2026-12-06: "Włącz jakąś muzykę Chopina" offered the lights
    alone; the lexicon held "pogodę" beside "pogoda" by hand). A stem whose keys gloss differently
    glosses nothing.
    """
    word = word.lower()
    gloss = FOREIGN_GLOSSES.get(word)
    if gloss or len(word) < INFLECTED_GLOSS_MIN_LETTERS:
        return gloss or ""
    return _glosses_by_stem().get(word[:-1], "")


def _names_something(i: int, word: str) -> bool:
    """A name ("Krakowie", "Luis": capitalised after the first word), a number or a path: kept
    as written in a word-for-word gloss."""
    return bool(re.search(r"[\d/@.:_]", word)) or (i > 0 and word[:1].isupper())


#: Punctuation stripped from a token's ends before it is glossed.
_TOKEN_EDGE = ".,;:!?¿¡\"'()[]"


def _word_for_word(text: str, glosses: Callable[[str], tuple[str, ...]], keep: Callable[[int, str], bool]) -> str:
    """``text`` token by token (a path or an address stays one token): a word's English glosses
    where it has some, else the word itself where ``keep(position, word)``; ``""`` if no word has a
    gloss (shared by :func:`translate_german` and :func:`gloss_foreign`)."""
    out, known = [], False
    for i, token in enumerate(text.split()):
        word = token.strip(_TOKEN_EDGE)
        found = glosses(word) if word else ()
        known = known or bool(found)
        out.extend(found or ((word,) if word and keep(i, word) else ()))
    return " ".join(out) if known else ""


def _gloss_keys(word: str, by_stem: dict[str, str]) -> tuple[str, ...]:
    """The gloss keys of one lower-case word: itself, its Snowball stem's key, else a compound's."""
    if word in GERMAN_GLOSSES:
        return (word,)
    stemmed = by_stem.get(german_stem(word))
    return (stemmed,) if stemmed else _compound_keys_of(word)


def _compound_keys_of(word: str) -> tuple[str, ...]:
    """A compound's gloss keys: a leading key that names what kind ("kalender" of
    "kalendereintrag", five letters or more) and its head (:func:`_compound_head`)."""
    head = _compound_head(word)
    if head is None:
        return ()
    before_head = len(word) - len(head)  # the letters a leading key may take
    lead = max((k for k in _compound_keys() if len(k) >= 5 and word.startswith(k) and len(k) <= before_head),
               key=len, default=None)
    return (lead, head) if lead and lead != head else (head,)


#: Endings a compound's head may carry (plural, case, the linking "s" before it is the prefix's).
_HEAD_ENDINGS = ("", "s", "n", "en", "e", "er")


def _compound_head(word: str) -> str | None:
    """The gloss key a German compound ends in: its head, the part that names the thing
    ("werbemails" -> "mail", "einkaufsliste" -> "liste", "regenwetter" -> "wetter"), with at least
    three letters before it and a key of four letters or more; the longest such key, else None.
    Demo de-020: "Lösch alle Werbemails von gestern" offered no mail tool."""
    best = None
    for key in _compound_keys():
        for ending in _HEAD_ENDINGS:
            head = key + ending
            if len(word) >= len(head) + 3 and word.endswith(head) and (best is None or len(key) > len(best)):
                best = key
    return best


@functools.cache
def _compound_keys() -> tuple[str, ...]:
    return tuple(k for k in GERMAN_GLOSSES if len(k) >= 4 and k.isalpha())


@functools.cache
def _gloss_stems() -> dict[str, str]:
    """Snowball stem -> gloss key, for keys whose stem has 5+ letters and is no function word (a
    short stem is a word of its own too often: "seite" stems to "seit", "since"; "nächste" to
    "nach", "after")."""
    stems: dict[str, str] = {}
    for key in GERMAN_GLOSSES:
        stem = german_stem(key)
        if len(stem) >= 5 and stem not in GERMAN_CUES and key not in ENGLISH_HOMOGRAPHS:
            stems.setdefault(stem, key)
    return stems


def embed_tools(catalog: Catalog, embed) -> np.ndarray:
    """One routing vector per tool: the normalised mean of its phrase embeddings.

    Parameters
    ----------
    catalog : Catalog
    embed : callable
        ``embed(texts) -> (n, dim) float32`` L2-normalised (an ``Embedder.embed`` or a
        ``VectorCache.embed``).

    Returns
    -------
    ndarray, ``(n_tools, dim) float32``
        Rows in catalogue order, L2-normalised.

    Notes
    -----
    Measured on data/demo_queries.jsonl with all-MiniLM-L6-v2: embedding the phrases joined into
    one long text put the right tool first for 64.3% of tool queries; the centroid of the phrase
    vectors for 73.5%, and it raised the gold tool's median cosine from 0.37 to 0.48.
    """
    phrases = [routing_phrases(tool) for tool in catalog]
    flat = [p for group in phrases for p in group]
    if not flat:
        return np.zeros((0, 0), dtype=np.float32)
    vectors = normalize_rows(embed(flat))
    bounds = np.cumsum([0] + [len(g) for g in phrases])
    centroids = np.stack([vectors[a:b].mean(axis=0) for a, b in zip(bounds[:-1], bounds[1:])])
    return normalize_rows(centroids)


def passes_domain_floor(hit: Hit, text: str, knobs: Knobs) -> bool:
    """Whether ``hit`` clears its domain's floor (knob ``domain_floors``) for this message.

    A domain without a floor, a score at or above the floor, a forced hit (>= ``forced_floor``)
    or a message that names the domain as a word (``guard.names_domain``) passes. The floor does
    not depend on the threshold, so the tuning view applies it once to its cached scores.
    """
    domain = domain_of(hit.name)
    floor = knobs.domain_floors.get(domain)
    return (floor is None or hit.score >= floor or hit.score >= knobs.forced_floor
            or names_domain(text, domain))


def kept_hits(hits: Sequence[Hit], text: str, knobs: Knobs) -> tuple[Hit, ...]:
    """The hits ``policy.decide`` sees: score >= ``threshold``, then :func:`passes_domain_floor`.

    Parameters
    ----------
    hits : sequence of Hit
        Score descending (as :meth:`Router.hits` and ``Scored.hits`` are).
    text : str
        The cleaned message (a floor yields to a message naming its domain).
    knobs : Knobs
        Reads ``threshold``, ``domain_floors``, ``forced_floor``.

    Returns
    -------
    tuple of Hit
        In the given order. The one owner of this rule: the router, the embedding + policy
        strategy and the tuning view (``lab.workbench``) all call it.
    """
    out = []
    for hit in hits:
        if hit.score < knobs.threshold:
            break  # sorted descending
        if not knobs.domain_floors or passes_domain_floor(hit, text, knobs):
            out.append(hit)
    return tuple(out)


def top_scores(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and values of the ``k`` largest scores, sorted descending.

    ``argpartition`` returns the top k unordered, so they are re-sorted (semantic-router does
    the same in ``linear.top_scores``).
    """
    k = min(k, scores.shape[0])
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=scores.dtype)
    idx = np.argpartition(-scores, k - 1)[:k]
    idx = idx[np.argsort(-scores[idx], kind="stable")]
    return idx, scores[idx]


@dataclass(frozen=True, kw_only=True, slots=True)
class Routed:
    """The result of routing one message (the ``eris-lab route --json`` record).

    Attributes
    ----------
    text : str
        The cleaned message.
    hits : tuple of Hit
        Hits >= threshold, score descending (forced hits at 1.0 first).
    decision : Decision
    offer : Offer
    timings_ms : dict of str to float
        ``guard``, ``embed``, ``score``, ``policy``, ``offer``, ``total`` in milliseconds; also
        ``vectors`` (tool vectors, from the cache when warm) and, on a router's first embedded
        message, ``model_load`` (the encoder's load, apart from the query's ``embed``).
    guard : str
        What the guards did (``conversation``, ``url``, ``page phrase``, ``follow-up``...).
    """

    text: str
    hits: tuple[Hit, ...]
    decision: Decision
    offer: Offer
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    guard: str = ""

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON record: ``hits``, ``decision``, ``offered``, ``timings_ms`` (+ extras)."""
        return {
            "text": self.text,
            "hits": [{"name": h.name, "score": round(float(h.score), 6)} for h in self.hits],
            "decision": self.decision.to_json(),
            "offered": list(self.offer.names),
            "overlays": list(self.offer.overlays),
            "guard": self.guard,
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }


class Router:
    """Routes messages against one catalogue.

    Parameters
    ----------
    catalog : Catalog
        At least one tool.
    embedder : Embedder, optional
        Default: the bundled all-MiniLM-L6-v2 (loaded on first use).
    knobs : Knobs, optional
    cache : bool or VectorCache
        True (default) caches tool vectors on disk; False embeds at every start.
    tool_vectors : ndarray, optional
        ``(n_tools, dim) float32`` precomputed vectors (benchmarks, tests); skips embedding tools.
    scorer : str
        ``auto`` (default), ``exact`` or ``int8`` (:data:`~eris_lab.scorer.SCORERS`): how a message
        is scored against every tool. Every scorer yields the same hits and ranked tools; ``int8``
        is faster on large catalogues. Cosines standardised against the background
        (:attr:`calibrated`) are always scored exactly.

    Raises
    ------
    CatalogError
        The catalogue has no tools.
    """

    def __init__(self, catalog: Catalog, embedder: Embedder | None = None, *, knobs: Knobs = Knobs(),
                 cache: bool | VectorCache = True, tool_vectors: np.ndarray | None = None,
                 scorer: str = "auto") -> None:
        if len(catalog) == 0:
            raise CatalogError("the catalogue has no tools; a router needs at least one", where=catalog.source or "catalog")
        self.catalog = catalog
        self.embedder = embedder if embedder is not None else default_embedder()
        self.knobs = knobs
        self.cache = cache
        from .scorer import SCORERS

        if scorer not in SCORERS:
            raise ErisLabError(f"expected one of {', '.join(SCORERS)}, got {scorer!r}", where="scorer")
        self.scorer = scorer
        self._scorer = None  # built on first use over tool_vectors (scorer.make_scorer)
        # start-up costs in ms (model_load, and for calibrated knobs vectors and calibration),
        # reported in the first routed message's timings
        self._loaded: dict[str, float] = {}
        self._reported = False
        self._vectors = None if tool_vectors is None else normalize_rows(tool_vectors)
        self._keywords = tool_keywords(catalog)
        self._fetch = fetch_tool(catalog)
        self.startup_ms = 0.0
        #: Where lexical scores start (:meth:`_lexical_scores`): the threshold of the knobs that
        #: judge the hits (a strategy scoring with open knobs sets its own).
        self.score_floor = knobs.threshold
        self._background: tuple[np.ndarray, np.ndarray] | None = None
        self._gate = None  # calibration.RelevanceGate, built on first use
        #: The last message's gate features ``(len(GATE_FEATURES),)`` and its ranked hits (every
        #: tool's score, best ``RANKED_HITS``), for :meth:`route`'s relevance gate and widening.
        self.last_features: np.ndarray | None = None
        self.last_ranked: tuple[Hit, ...] = ()
        #: The best tool of each clause of the last message, when it joins several requests.
        self.last_intents: tuple[Hit, ...] = ()
        #: The last message's offer order key ``(n_tools,) float64`` (:meth:`_order_key`), or None
        #: where the offer keeps the score order (raw cosines, or knob ``order_by_cosine`` off).
        self.last_order: np.ndarray | None = None
        #: Whether the last message's tool words were a figure of speech, read plainly
        #: (``guard.literal_idioms``): with no hit left, ``policy.decide`` offers nothing.
        self.last_figurative = False
        #: What the router scored as the last message's request, with what it says not to do left
        #: out (``guard.without_negated``), or ``""`` when that is the message: the offer puts the
        #: tool of the verb it opens with first (``policy.action_order``).
        self.last_request = ""
        #: The last message read word for word in English when it is wholly in another language
        #: (:func:`gloss_foreign` with ``whole``), else ``""``: the short-input rule's measure, here
        #: and in ``policy.decide`` (computed once per message).
        self.last_gloss = ""

    @classmethod
    def with_calibrated_knobs(cls, catalog: Catalog, embedder: Embedder | None = None, *,
                              cache: bool | VectorCache = True, scorer: str = "auto", **overrides: Any) -> "Router":
        """A router whose knobs are calibrated for ``catalog`` and ``embedder`` without labels.

        ``calibration.calibrated_knobs`` (cached by catalogue fingerprint and model id); what
        ``eris-lab route``, ``generate`` and the MCP server use unless given ``--knobs``.
        ``overrides`` replace fitted knobs (e.g. ``max_calls``).
        """
        from .calibration import calibrated_knobs

        router = cls(catalog, embedder, cache=cache, scorer=scorer)
        router._load_model()
        start = time.perf_counter()
        vectors = router.tool_vectors
        router._loaded["vectors"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        knobs = calibrated_knobs(catalog, router.embedder, tool_vectors=vectors)
        router._loaded["calibration"] = (time.perf_counter() - start) * 1000  # a first fit, or the cache read
        router.knobs = knobs.replace(**overrides) if overrides else knobs
        router.score_floor = router.knobs.threshold
        return router

    def _load_model(self) -> float:
        """Load the embedding model once, timed apart from any query (``_loaded["model_load"]``);
        the milliseconds this call spent loading it (0.0 once loaded)."""
        load = getattr(self.embedder, "load", None)
        if load is None or "model_load" in self._loaded:
            return 0.0
        start = time.perf_counter()
        load()
        self._loaded["model_load"] = (time.perf_counter() - start) * 1000
        return self._loaded["model_load"]

    @property
    def calibrated(self) -> bool:
        """True when cosines are standardised against :data:`~eris_lab.lexicon.BACKGROUND_QUERIES` (knob ``calibration``).

        ``auto`` calibrates catalogues in which no tool has routing hints: DESIGN.md's default
        thresholds were set for hint-rich descriptors, and bare one-line descriptions score far
        lower for the right tool (reported cases route-01, -05, -18, -22 score 0.30 to 0.39).
        """
        if self.knobs.calibration == "auto":
            return not any(t.routing_hints for t in self.catalog)
        return self.knobs.calibration == "background"

    def _embed_cached(self, texts: list[str]) -> np.ndarray:
        if self.cache is False:
            return normalize_rows(self.embedder.embed(texts))
        store = self.cache if isinstance(self.cache, VectorCache) else VectorCache(self.embedder)
        return normalize_rows(store.embed(texts))

    def calibrate(self, raw: np.ndarray) -> np.ndarray:
        """Map raw cosines ``(..., n_tools)`` onto the threshold scale (identity when not calibrated).

        ``score = threshold + background_slope * (z - background_z)`` (``threshold``: the judging
        knobs', :attr:`score_floor`), where ``z`` is how many
        standard deviations the cosine lies above that tool's cosines with neutral chit-chat
        (:data:`~eris_lab.lexicon.BACKGROUND_QUERIES`). Squashed below 0.98 (order kept) so no
        embedding hit looks forced.

        Notes
        -----
        A per-tool background standardisation, in the spirit of hubness corrections for
        nearest-neighbour retrieval. ``background_z = 2.5`` (2.5 standard deviations above
        chit-chat is a hit) and ``background_slope = 0.15`` were set on the reported routing cases
        (tests/cases/routing_cases.json); the tuner can refit both.
        """
        if not self.calibrated:
            return raw
        if self._background is None:
            bg = self._embed_cached(list(BACKGROUND_QUERIES)) @ self.tool_vectors.T
            self._background = (bg.mean(axis=0), np.maximum(bg.std(axis=0), _MIN_BACKGROUND_STD))
        mean, std = self._background
        z = (raw - mean) / std
        # onto the scale of the knobs that judge the hits (score_floor): a strategy that scores with
        # an open threshold of -1 must see the scores Router.route sees
        score = self.score_floor + self.knobs.background_slope * (z - self.knobs.background_z)
        # squashed into the last 0.01 below the cap, not clipped: clipped scores tie at the cap and
        # the ranking falls back to catalogue order (live_multiple: gold tool offered first 0.742 -> 0.819)
        knee = _MAX_CALIBRATED - _SQUASH_WIDTH
        above = np.maximum(score - knee, 0.0)
        score = np.where(score > knee, knee + _SQUASH_WIDTH * above / (above + 0.3), score)  # 0.3: two sd
        return np.clip(score, -1.0, _MAX_CALIBRATED).astype(np.float32)

    @property
    def tool_vectors(self) -> np.ndarray:
        """``(n_tools, dim) float32`` routing vectors, rows in catalogue order (embedded once).

        With the disk cache on, the matrix itself is cached under a hash of the catalogue's
        routing phrases (``VectorCache.matrix``) and memory-mapped on a warm start.
        """
        if self._vectors is None:
            start = time.perf_counter()
            if self.cache is False:
                self._vectors = embed_tools(self.catalog, self._embed_cached)
            else:
                store = self.cache if isinstance(self.cache, VectorCache) else VectorCache(self.embedder)
                digest = hashlib.sha256(json.dumps([routing_phrases(t) for t in self.catalog]).encode()).hexdigest()
                self._vectors = store.matrix(f"tools-{digest[:20]}", lambda: embed_tools(self.catalog, store.embed))
            self.startup_ms = (time.perf_counter() - start) * 1000
        return self._vectors

    def score_raw(self, queries: np.ndarray, *, k: int, floor: float) -> np.ndarray:
        """Raw cosines ``(m, n_tools) float32`` of L2-normalised ``queries`` by the router's scorer.

        Exact for each row's best ``k`` tools and every tool at or above ``floor``
        (:class:`~eris_lab.scorer.Scorer`); the exact product when cosines are :attr:`calibrated`
        (a per-tool standardisation reorders tools, so no shortlist of raw cosines is safe).
        """
        if self.calibrated:
            from .scorer import ExactScorer

            return ExactScorer(self.tool_vectors).raw(queries)  # on one BLAS thread, as every route's
        if self._scorer is None:
            from .scorer import make_scorer

            self._scorer = make_scorer(self.scorer, self.tool_vectors)
        return self._scorer.raw(queries, k=k, floor=floor)

    def gate(self):
        """The catalogue's :class:`~eris_lab.calibration.RelevanceGate` (negatives embedded once, cached)."""
        if self._gate is None:
            from .calibration import RelevanceGate, load_negatives

            negatives = self._embed_cached(list(load_negatives()))
            self._gate = RelevanceGate(self.catalog, self.tool_vectors, negatives)
        return self._gate

    def top_cosine(self) -> float | None:
        """The last scored message's best raw cosine (the gate's first feature), or None when the
        gate is off or the message was not embedded."""
        from .calibration import RelevanceGate

        return RelevanceGate.top_cosine(self.last_features)

    def relevance(self, knobs: Knobs | None = None) -> float | None:
        """P(some tool fits) of the last scored message under ``knobs`` (default the router's); None
        when the gate is off (``relevance_floor`` 0) or the message was not embedded."""
        from .calibration import RelevanceGate

        return RelevanceGate.relevance(self.last_features, knobs if knobs is not None else self.knobs)

    # -- scoring ---------------------------------------------------------------------------
    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """Scores of each text against every tool: ``(len(texts), n_tools) float32``.

        Cosines, passed through :meth:`calibrate` (identity unless calibration applies).
        """
        queries = normalize_rows(self.embedder.embed(list(texts)))
        return self.calibrate(queries @ self.tool_vectors.T)

    def _forced(self, text: str) -> tuple[list[Hit], str]:
        words = language_tools(self.catalog)
        if words and is_language_question(text):  # "what does 'serendipity' mean?" beside a dictionary
            return [Hit(name=n, score=FORCED_SCORE) for n in words], "a question about words: the language tools"
        if not self._fetch:
            return [], ""
        urls = find_urls(text)
        if urls:
            return [Hit(name=self._fetch, score=FORCED_SCORE)], f"url {urls[0]}"
        phrase = page_phrase(text)
        if phrase:
            return [Hit(name=self._fetch, score=FORCED_SCORE)], f"page phrase {phrase!r}"
        return [], ""

    def hits(self, text: str, *, history: Sequence[Mapping[str, Any]] = ()) -> tuple[Hit, ...]:
        """Hits for one message: forced hits, then cosine hits >= threshold, score descending."""
        recent, failed = dialog_tools(history)
        return self.guarded_hits(clean_text(text, self.knobs.max_query_chars), previous_user_text(history), {},
                                 recent=recent, failed=failed)[0]

    def is_follow_up(self, text: str, previous: str = "", *, recent: Sequence[str] = (),
                     failed: Sequence[str] = ()) -> bool:
        """Whether ``text`` continues the dialog, so that short input is not conversation.

        True after an earlier user message (``previous``) or a tool call that failed (the reply may
        supply what it lacked: "I'm in Leeds"), and after a recent tool when the message points
        back at it ("please remove it" after a listing). Only a greeting is then conversation.
        """
        return bool(previous or failed) or bool(recent and (REFERRING_CUE_RE.search(text) or ELLIPSIS_RE.match(text)))

    def _lexical_scores(self, text: str) -> np.ndarray:
        """``(n_tools,)`` scores from shared index terms (:func:`lexical_shares`), 0 = none.

        For text the English-only embedder cannot read: the share mapped through its square root
        onto ``[score_floor, 0.98]``: one key noun of a sentence (a share near 1/8) lands above
        the reference ``single_hit_floor``, so a key noun written verbatim in a tool's description
        finds that tool (issue 16). Character bigrams for scripts without spaces.
        """
        share = lexical_shares(self.catalog, [text])[0]
        floor = self.score_floor
        return np.where(share > 0, floor + np.sqrt(share) * (_MAX_CALIBRATED - floor), 0.0).astype(np.float32)

    def guarded_hits(self, text: str, previous: str = "", timings: dict[str, float] | None = None, *,
                     recent: Sequence[str] = (), failed: Sequence[str] = ()) -> tuple[tuple[Hit, ...], str]:
        """Hits of a cleaned message and what the guards did (``Routed.guard``).

        Parameters
        ----------
        text : str
            The message, already ``guard.clean_text``-ed.
        previous : str
            The previous user message (``""``: none); a follow-up is scored with it too.
        timings : dict, optional
            Filled with ``guard``, ``embed``, ``score`` (and ``vectors``) in milliseconds.
        recent, failed : sequence of str
            Recent successful tools and tool calls that failed (:meth:`is_follow_up`); the last
            recent tool's description is context for a short message that points back at it.

        Returns
        -------
        (tuple of Hit, str)
            Kept hits (:func:`kept_hits`), score descending; the guard note.

        Notes
        -----
        The message is scored alone, with misspelt words fixed to catalogue words (knob
        ``fix_spelling``, :func:`~eris_lab.guard.spelling_fixes`), per clause
        (:func:`~eris_lab.guard.clauses`) and with a German gloss; each tool keeps its best score.
        Context (the previous message, or the last recent tool) is added only when the message
        alone has no hit at or above ``single_hit_floor``, or is short and points back: a new
        request that stands on its own does not drag the last turn's tool along (reported case
        route-23's note). Text in a script
        the embedder cannot read also gets :meth:`_lexical_scores`; with no shared term (and no
        readable context) it has no hit at all, and up to :data:`BLIND_ROSTER_MAX` tools no ranking
        either (its cosines are noise). A countdown tool without a
        duration in the message, and a run-anything tool ahead of dedicated tools, are moved
        down (:func:`rank_catch_all_last`; cases route-26, route-27).
        """
        timings = {} if timings is None else timings
        self.last_features, self.last_ranked, self.last_intents, self.last_order = None, (), (), None
        self.last_figurative = False
        self.last_request = ""
        self.last_gloss = gloss_foreign(text, whole=True)
        start = time.perf_counter()
        forced, guard = self._forced(text)
        follow_up = self.is_follow_up(text, previous, recent=recent, failed=failed)
        short_rule = dict(max_words=self.knobs.short_max_words, max_chars=self.knobs.short_max_chars, follow_up=follow_up)
        # text in another language is measured by its English gloss: "Raconte-moi une blague" is
        # "tell me joke", as short as "Tell me a joke" (a helper's variants of route-20, 2026-12-05)
        measured = (self.last_gloss or text) if not forced else text
        conversational = not forced and is_conversational(measured, self._keywords, **short_rule)
        # short input the keyword list does not know is scored, and stays conversation unless a
        # tool clears the single-hit floor ("lint the project", "countdown 90 seconds")
        short_only = conversational and only_short(measured, self._keywords, **short_rule)
        timings["guard"] = (time.perf_counter() - start) * 1000
        if conversational and not short_only:
            timings["embed"] = timings["score"] = 0.0
            return (), "conversation"
        if short_only:
            hits, guard = self._scored_hits(text, forced, guard, previous, recent, follow_up, timings, start)
            if not any(h.score >= self.knobs.single_hit_floor for h in hits):
                return (), "conversation"
            return hits, "; ".join(filter(None, [guard, "short, but a tool clears the single-hit floor"]))
        return self._scored_hits(text, forced, guard, previous, recent, follow_up, timings, start)

    def _scored_hits(self, text: str, forced: Sequence[Hit], guard: str, previous: str, recent: Sequence[str],
                     follow_up: bool, timings: dict[str, float], start: float) -> tuple[tuple[Hit, ...], str]:
        """:meth:`guarded_hits` past the conversation guard: readings, embedding, scores, hits."""
        notes = [guard]
        request = without_small_talk(text)
        ungreeted = "" if request else without_greeting(text)
        if request:  # "hey, how are you? fix the login bug": the request alone is scored
            text = request
            notes.append("small talk in front left out")
        elif ungreeted:  # "morning, add milk to my shopping list": no clock:alarm for "morning"
            text = ungreeted
            notes.append("greeting in front left out")
        # the request beside venting statements and the venting, scored below (the request read as
        # the message is: "how long till the storm hits Boston?" with "weather forecast")
        vent_request, vented = venting_apart(text)
        vent_request = (read_weather(vent_request) or translate_german(vent_request) or gloss_foreign(vent_request)
                        or vent_request)
        calm = without_venting(text)
        if calm:  # "ugh this airline is a total disaster, I'm absolutely furious - is BA283 delayed?"
            text = calm
            notes.append("venting left out")
        wanted = without_negated(text)
        set_aside: set[int] = set()
        if wanted:  # "don't email him, just remind me to call Peter": the email tool led
            # a tool the left-out part names and the request does not is none of the request's
            # ("rather than an alarm, remind me at 7 to take my pills": the alarm led a near tie;
            # round fifteen's variants, 2026-12-07)
            left_out = {singular(w) for w in re.findall(r"[a-z]+", text.lower())}
            kept = {singular(w) for w in re.findall(r"[a-z]+", wanted.lower())}
            set_aside = {self.catalog.position(t.name) for t in self.catalog
                         if (words := {singular(w) for w in name_words(base_name(t.name)) if len(w) >= 4})
                         and words & (left_out - kept) and not words & kept}
            text = self.last_request = wanted
            notes.append("what not to do left out")
        plain = literal_idioms(text)
        if plain:  # "I'm feeling a bit under the weather today": no weather asked for
            text = plain
            notes.append("figure of speech read plainly")
            self.last_figurative = True
        queries = [text]
        fixes = spelling_fixes(text, lambda: spelling_index(self.catalog), known_words().__contains__) if (
            self.knobs.fix_spelling and not foreign_by_function_words(text) and not foreign_by_letters(text)) else {}
        fixed = apply_spelling(text, fixes)
        if fixes:  # scored beside the message as written: a fix can raise a score, never lower one
            queries.append(fixed)
            notes.append("spelling " + ", ".join(f"{a}->{b}" for a, b in fixes.items()))
        gloss = gloss_german(fixed)
        if gloss:
            queries.append(f"{fixed} ({gloss})")
            word_for_word = translate_german(fixed, gloss)  # "Bestell mir bitte Sushi" -> "order Sushi"
            if word_for_word:
                queries.append(word_for_word)
            notes.append("german gloss")
        foreign = gloss_foreign(fixed)
        foreign_row, translators = None, ()
        if foreign:  # likewise for a few other languages' everyday words: "¿Tengo correos nuevos?"
            queries.append(foreign)
            notes.append("foreign words glossed")
            translators = () if is_language_question(text) else language_tools(self.catalog)
            if translators:
                # what the glossed words alone give the translation tools: the cap below (names kept
                # in the gloss, "Dawida Podsiadły", read as foreign words pull them too)
                foreign_row = len(queries)
                queries.append(gloss_foreign(fixed, names=False))
        addressed = read_addresses(fixed)
        if addressed:  # like a spelling fix, scored beside the message as written
            queries.append(addressed)
            notes.append("email address read")
        plain = read_idioms(fixed)
        if plain:  # likewise: "don't let me forget to pay the rent" read as "remind me to pay the rent"
            queries.append(plain)
            notes.append("idiom read")
        weather = read_weather(fixed)
        if weather:  # likewise: "is it going to be sunny on Sunday?" read with "weather forecast"
            queries.append(weather)
            notes.append("weather question read")
        billing = read_billing(fixed)
        if billing:  # likewise: "you took my money twice, I want it back" read with "refund"
            queries.append(billing)
            notes.append("billing complaint read")
        # a complaint in another language through its gloss ("mi hanno addebitato l'abbonamento ..."
        # -> "charged": a helper's variant f10-r36 of route-18, 2026-12-06)
        problem = (read_problem(fixed) or (foreign and reports_problem(foreign) and f"{fixed} ({foreign}) "
                   "(a problem to report: open a support ticket)") or "") if support_tools(self.catalog) else ""
        if problem:  # likewise: "my laptop won't turn on" read as a problem to report
            queries.append(problem)
            notes.append("problem report read")
        code = read_code_question(fixed)
        if code:  # likewise: "who calls getUserById?" read as a code search for it
            queries.append(code)
            notes.append("code question read as a search")
        existence = read_existence(fixed)
        if existence:  # likewise: "is there a program starting ZOK?" read as a search for one
            queries.append(existence)
            notes.append("existence question read as a search")
        local = read_local_file(fixed)
        if local:  # likewise: "load Content/Data/enemies.json" read as a local file, not a download
            queries.append(local)
            notes.append("local file read")
        unpointed = without_pointers(fixed)
        if unpointed:  # likewise: "is there a video for that?" read as "is there a video?"
            queries.append(unpointed)
        # the request without the text it hands over ("message Bob 'buy more Tesla shares'"); the
        # reference rules keep every hit over the threshold, so this reading beside the message can
        # only add; calibrated offers keep hits near the top, where raising another tool's score can
        # push the right one out ("add 'buy a birthday card for Tim' to my to-do list" read "add to
        # my to-do list", best agenda:remove), so there it adds its best tool like a sentence part
        bare = without_payload(fixed, min_words=1)
        unquoted = bare if len(bare.split()) >= 2 else ""
        unquoted = without_pointers(unquoted) or unquoted
        # the payload and the request without it, scored after the readings and cut off again: a tool
        # the payload pulls more than the request does gets no more than the request gives it (below)
        # (one word is enough of a request here: 'tweet: "alarm set for 6, meetings cancelled"'); the
        # payload is glossed as the message is, or a German payload's glossed words would escape the cap
        request_alone = unquoted if len(unquoted.split()) >= 2 else bare
        payload = " ".join(quoted_payloads(fixed))
        payload_gloss = gloss and gloss_german(payload)
        payload_rows = [request_alone, f"{payload} ({payload_gloss})" if payload_gloss else payload] if (
            request_alone and payload) else []
        held_rows = slice(None)  # the rows the payload's pull is held in
        if not payload_rows:  # likewise what a URL's path or a file path spells (guard.addresses_apart),
            # in the message's own rows only: a clause or a reading that names the file ("save it to a
            # file", "read the local file PATH") keeps what it gives (variant-route-26-01)
            addressed_request, spelled = addresses_apart(fixed)
            if spelled and len(addressed_request.split()) >= 2:
                payload_rows = [addressed_request, spelled]
                held_rows = slice(0, 2 if fixes else 1)
                notes.append("addresses held to the request")
        if len(unquoted.split()) < 2 or unquoted in queries:
            unquoted = ""
        if unquoted and self.knobs.subset_margin >= 2.0:
            queries.append(unquoted)
            notes.append("quoted text left out")
        # each clause with its own German gloss ("Schalte das Licht in der Küche an und spiel etwas
        # Musik": the light's clause, unglossed, named no tool)
        parts = tuple(f"{p} ({g})" if (g := gloss and gloss_german(p)) else p for p in clauses(text))
        first_clause = len(queries)
        if parts:
            queries.extend(parts)
            notes.append(f"{len(parts)} clauses")
        own = len(queries)
        short = len(text.split()) <= self.knobs.short_max_words or len(text) <= self.knobs.short_max_chars
        elliptic = bool(ELLIPSIS_RE.match(text))
        cue = elliptic or bool(REFERRING_CUE_RE.search(text))
        context = ""
        if previous and (short or cue):
            queries.append(f"{previous} {text}")
            context = "follow-up with previous turn"
        elif not previous and recent and cue and recent[-1] in self.catalog:
            queries.append(f"{self.catalog.tool(recent[-1]).description} {text}")
            context = f"follow-up on {recent[-1]}"
        first_sentence = len(queries)
        if self.knobs.subset_margin < 2.0:  # only calibrated offers add intents (policy.with_intents)
            sentences = [p for p in sentence_parts(text) if p not in queries]
            if unquoted and unquoted not in sentences:  # ("send her a message saying '100 shares ...'")
                sentences.append(unquoted)
                notes.append("quoted text left out")
            queries.extend(sentences)
            if sentences:
                notes.append(f"{len(sentences)} sentence parts")
        start = time.perf_counter()
        load_ms = self._load_model()  # before the tool vectors, whose embedding would load it unseen
        _ = self.tool_vectors
        if self._loaded and not self._reported:  # the first message of a process pays these: say so
            timings.update(self._loaded)
            self._reported = True
        embed_start = time.perf_counter()
        vent_rows = [vent_request, vented] if vent_request else []
        q = normalize_rows(self.embedder.embed(queries + payload_rows + vent_rows))
        timings["embed"] = (time.perf_counter() - embed_start) * 1000
        score_start = time.perf_counter()
        # a countdown needs a duration in the message (case route-27)
        # ... in the message, or in the turn it follows up: "stop it" right after "start a 5 minute timer"
        # acts on that timer (a helper's variants of route-03, 2026-12-05: clock:timer was left out);
        # a countdown that just ran is never demoted
        countdowns = set() if names_duration(text) or (follow_up and previous and names_duration(previous)) else {
            self.catalog.position(n) for n in countdown_tools(self.catalog) if n not in recent}
        # exact for the best RANKED_HITS (+ the countdowns demoted below) and everything >= threshold
        raw = self.score_raw(q, k=RANKED_HITS + len(countdowns) + len(set_aside), floor=min(self.knobs.threshold, self.score_floor))
        rows = self.calibrate(raw)
        n = len(queries)
        if payload_rows:  # what the quoted text alone pulls is held to what the request gives
            for matrix in (raw, rows):
                matrix[:n][held_rows] = without_pull(matrix[:n][held_rows], matrix[n], matrix[n + 1])
        if vent_rows and rows[-2].max() >= self.knobs.threshold:
            # once the request alone names a tool, it is a reading of the message, and the venting
            # may pull no tool in; a request that needs the statement names none alone ("what's it
            # doing tomorrow?" beside "they're going to ruin my whole weekend with this rain", route-01)
            # and no tool scores more in the whole message than in the better of its two pieces: "this
            # government is a joke honestly. what's the forecast for Saturday?" gave the politics tool
            # 0.63, its pieces 0.27 and 0.40 (a helper's variants of route-01, 2026-12-05)
            raw[:n], rows[:n] = (np.minimum(without_pull(raw[:n], raw[-2], raw[-1]), np.maximum(raw[-2], raw[-1])),
                                 np.minimum(without_pull(rows[:n], rows[-2], rows[-1]), np.maximum(rows[-2], rows[-1])))
            raw[0], rows[0] = np.maximum(raw[0], raw[-2]), np.maximum(rows[0], rows[-2])
            notes.append("venting held to the request")
        if foreign_row is not None:
            # a message in another language pulls the translation tools by its language, not its
            # request: they score no more than its glossed words give them ("Mandami un promemoria
            # domani alle 9" led with translate_text; round twelve's variants, 2026-12-06, night;
            # "Puść mi piosenkę Dawida Podsiadły", round thirteen's). A gloss that asks to translate
            # ("traduce ...") keeps them.
            held = [self.catalog.position(name) for name in translators]
            for matrix in (raw, rows):
                matrix[:n, held] = np.minimum(matrix[:n, held], matrix[foreign_row, held])
        q, raw, rows = q[:n], raw[:n], rows[:n]
        # a Latin-script language the lab reads neither directly nor through a gloss ("Yarın hava
        # nasıl?", Turkish, ranked the memory tools first; round fourteen's variants of route-08,
        # 2026-12-07): its cosines are noise as another script's are
        unread = unread_script(text) or (not gloss and not foreign and words_unread(fixed))
        names = self.catalog.names
        # each request's best tool (issue 18 item 8): the clauses' rows, then the sentences' rows,
        # which raise no score of their own (guard.sentence_parts)
        requests, sentence_features = self._requests(q, raw, first_sentence)
        sentence_rows = rows[first_sentence:][requests]
        intent_rows = np.vstack([rows[first_clause:own], sentence_rows])
        clause_best = intent_rows.argmax(axis=1)
        texts: list[str] = []
        if len(intent_rows):  # each part's words too, in the widening's order
            texts = queries[first_clause:own] + [t for t, keep in zip(queries[first_sentence:], requests) if keep]
            clause_best = widening_order(self.catalog, intent_rows, texts, self.knobs).argmax(axis=1)
        for i in () if unread else countdowns | set_aside:
            rows[:, i] = np.minimum(rows[:, i], -1.0)
        scores = rows[:own].max(axis=0)
        used = own  # rows the hits come from; the gate judges the same rows
        if context and (not (scores >= self.knobs.single_hit_floor).any() or (short and cue) or elliptic):
            best, second = np.sort(scores)[::-1][:2] if len(scores) > 1 else (scores.max(), -1.0)
            if not (cue or elliptic) and best - second >= OWN_LEAD:
                # a whole message of its own, clearly about one tool: the previous turn may add
                # tools, never rank one above the message's own best (OWN_LEAD), in the scores and
                # in the raw cosines that order the offer
                for matrix in (rows, raw):
                    cap = np.nextafter(matrix[:own].max(), np.float32(-2.0))
                    matrix[own:first_sentence] = np.minimum(matrix[own:first_sentence], cap)
                context += ", own ranking kept"
            scores = np.maximum(scores, rows[own:first_sentence].max(axis=0))
            notes.append(context)
            used = first_sentence
        if unread:
            lexical = self._lexical_scores(text)
            if not lexical.any() and not forced and used == own:  # (the previous turn's text is readable)
                # the cosines of text the embedder cannot read are noise ("поставь будильник на 7
                # утра" on the demo catalogue: calc:evaluate first, clock:alarm out of the offer; a
                # Korean news request locked onto a weather tool in live_multiple): no hit, so the
                # policy's fallback decides; no ranking either up to BLIND_ROSTER_MAX tools, so a
                # bounded widening offers the roster, not the noise's best
                if len(self.catalog) > BLIND_ROSTER_MAX:
                    idx, values = top_scores(scores, RANKED_HITS)
                    self.last_ranked = tuple(Hit(name=names[i], score=float(v)) for i, v in zip(idx, values))
                timings["score"] = (time.perf_counter() - score_start) * 1000
                timings.setdefault("vectors", (embed_start - start) * 1000 - load_ms)
                return (), "; ".join(filter(None, notes + ["text the embedder cannot read, no word in the catalogue"]))
            scores = np.maximum(scores, lexical)
            notes.append("lexical terms (text the embedder cannot read)")
        if self.knobs.relevance_floor > 0 and not unread and not foreign_language(text):
            # the gate reads raw cosines, as calibration fitted it; text the embedder cannot read
            # (another script, or a language other than English and German) is not judged by it
            # (its cosines are noise): the hits and the policy decide
            # each reading of the message is judged, and the gate takes the one it finds most
            # relevant, as the hits take each tool's best score over the readings: a reading
            # added beside the message (a spelling fix, an address read, a clause) can then let
            # it through, never refuse it (until 2026-12-04 the best-scoring row was judged)
            from .calibration import RelevanceGate

            features = self.gate().features(q[:used], scores=raw[:used])  # the readings, then the sentences
            if sentence_features is not None:
                features = np.vstack([features, sentence_features])
            relevance = RelevanceGate.probability(features, self.knobs.relevance_weights)
            self.last_features = features[int(relevance.argmax())]
        # the widening's order (the ranked Hits' scores): the score, plus the lexical share on a
        # catalogue without routing hints (widening_key)
        idx, values = top_scores(widening_order(self.catalog, scores[None, :], [text], self.knobs)[0], RANKED_HITS)
        self.last_ranked = tuple(Hit(name=names[i], score=float(v)) for i, v in zip(idx, values))
        # a clause whose best tool is a countdown without a duration names no intent; a sibling of the
        # same domain within margin of the best is one too ("add a calendar entry": calendar:list
        # 0.551, calendar:create 0.553 in bad input row 30: which one wins is a coin flip)
        intents: list[Hit] = []
        domain_positions = self.catalog.derived("router.domain_positions", _domain_positions)
        for i, row, part in zip(clause_best, intent_rows, texts):
            if int(i) in countdowns:
                continue
            # positions of the best tool's domain, in registry order (vectorised: a domain may hold
            # thousands of tools, and a loop over them cost 3 ms per clause at 950)
            at = domain_positions.get(domain_of(names[int(i)]), np.array([int(i)]))
            chosen = at[row[at] >= row[i] - self.knobs.margin]
            action = requested_action(part) if len(at) > 1 else ""
            if action:  # and the sibling doing what the part asks for ("put a dentist appointment on my
                # calendar ...": calendar:create 0.09 below calendar:list in bad input row 30)
                doing = [j for j in at[row[at] >= row[i] - ACTION_ORDER_SLACK] if action_of(names[j]) == action]
                chosen = np.union1d(chosen, np.array(doing, dtype=chosen.dtype))
            verb = opening_word(part) if len(at) > 1 else ""
            if verb and verb not in STOPWORDS:  # the sibling named by the part's own verb: "list my to-dos" and
                # agenda:list (agenda:remove led by 0.05; round eighteen's variants, 2026-12-07)
                named = [j for j in at[row[at] >= row[i] - ACTION_ORDER_SLACK] if verb in name_words(base_name(names[j]))]
                chosen = np.union1d(chosen, np.array(named, dtype=chosen.dtype))
            intents += [Hit(name=names[j], score=float(row[j])) for j in chosen if j not in countdowns]
        self.last_intents = tuple(sorted(intents, key=lambda h: -h.score))
        keep = np.flatnonzero(scores >= self.knobs.threshold)
        order = keep[np.argsort(-scores[keep], kind="stable")]
        found = {h.name: h for h in forced}  # a forced tool keeps its forced score
        for i in order:
            found.setdefault(names[i], Hit(name=names[i], score=float(scores[i])))
        ranked = rank_catch_all_last(sorted(found.values(), key=lambda h: -h.score), self.catalog,
                                     threshold=self.score_floor, forced_floor=self.knobs.forced_floor)
        ranked = without_asking(ranked, self.catalog, strong=self.knobs.single_hit_floor,
                                forced_floor=self.knobs.forced_floor)
        hits = kept_hits(ranked, text, self.knobs)
        if self.calibrated and self.knobs.order_by_cosine and not unread:
            self.last_order = self._order_key(raw[:used].max(axis=0), forced, countdowns, found, ranked)
        timings["score"] = (time.perf_counter() - score_start) * 1000
        timings.setdefault("vectors", (embed_start - start) * 1000 - load_ms)
        return hits, "; ".join(filter(None, notes))

    def _requests(self, q: np.ndarray, raw: np.ndarray, start: int) -> tuple[np.ndarray, np.ndarray | None]:
        """``(len(q) - start,) bool``: which sentence parts (rows ``start:``) the relevance gate lets
        through, all of them when the gate is off; and their gate features (None then), which the
        gate's judgement of the whole message reads again. "Could you help me with a few things?"
        names no tool, and its best cosine would add a stray one to the offer."""
        from .calibration import RelevanceGate

        if start == len(q) or self.knobs.relevance_floor <= 0:  # (Knobs refuses a floor without weights)
            return np.ones(len(q) - start, dtype=bool), None
        features = self.gate().features(q[start:], scores=raw[start:])
        passed = RelevanceGate.probability(features, self.knobs.relevance_weights) >= self.knobs.relevance_floor
        return passed, features

    def _order_key(self, cosines: np.ndarray, forced: Sequence[Hit], countdowns: set[int],
                   found: Mapping[str, Hit], ranked: Sequence[Hit]) -> np.ndarray:
        """:attr:`last_order`: each tool's best raw cosine ``(n_tools,) float64``, with the guards' moves kept.

        Forced hits go first (+3), countdowns without a duration and run-anything tools that
        :func:`rank_catch_all_last` moved down go last (-3), as they do in the hits.
        """
        key = cosines.astype(np.float64)
        position = self.catalog.position
        for i in countdowns:
            key[i] -= 3.0
        for hit in ranked:
            if hit.score < found[hit.name].score:  # a catch-all held below the dedicated hits
                key[position(hit.name)] -= 3.0
        for hit in forced:
            key[position(hit.name)] += 3.0
        return key

    # -- the first half of a turn -----------------------------------------------------------
    def route(self, text: str, *, recent: Sequence[str] | None = (), failed: Sequence[str] | None = (),
              history: Sequence[Mapping[str, Any]] | None = ()) -> Routed:
        """Route one message: guards -> hits -> ``policy.decide`` -> ``offer.build``.

        Parameters
        ----------
        text : str
            Raw user message (any length; cleaned and cut to ``max_query_chars``).
        recent : sequence of str
            Recent successful tools of the session, oldest first (dialog memory).
        failed : sequence of str
            Recent tool calls that failed (the reply may supply what they lacked): they are
            offered again (``policy.retry_failed``) and make short input a follow-up.
        history : sequence of mapping
            Earlier turns: ``{"role": "user", "content": ...}`` and ``{"role": "tool_used", "name": ...,
            "status": ...}``. Tools used there extend ``recent``, or ``failed`` when their status is
            a failure after the last user message (:func:`dialog_tools`).

        None for any of the three means none (as an empty sequence).

        Returns
        -------
        Routed
        """
        recent, failed, history = recent or (), failed or (), history or ()
        total = time.perf_counter()
        timings: dict[str, float] = {}
        clean = clean_text(text, self.knobs.max_query_chars)
        previous = previous_user_text(history)
        used, lacking = dialog_tools(history)
        recent = used + tuple(recent)
        failed = tuple(dict.fromkeys(lacking + tuple(failed)))
        hits, guard = self.guarded_hits(clean, previous, timings, recent=recent, failed=failed)
        start = time.perf_counter()
        decision = decide_turn(clean, hits, self.catalog, knobs=self.knobs, recent=recent,
                               follow_up=self.is_follow_up(clean, previous, recent=recent, failed=failed),
                               ranked=self.last_ranked, relevance=self.relevance(), failed=failed,
                               intents=self.last_intents, last_turn=last_turn_tools(history),
                               points_back=bool(REFERRING_CUE_RE.search(clean)), added=added_tools(history),
                               previous=previous, top_cosine=self.top_cosine(), gloss=self.last_gloss,
                               figurative=self.last_figurative)
        timings["policy"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        from .companions import default_table

        offer = ordered(build(decision, self.catalog, knobs=self.knobs,
                              companions=default_table(self.catalog) if self.knobs.subset_margin < 2.0 else None),
                        self.catalog, self.last_order, text=self.last_request or clean,
                        scores={h.name: h.score for h in hits},
                        failed=failed)
        timings["offer"] = (time.perf_counter() - start) * 1000
        timings["total"] = (time.perf_counter() - total) * 1000
        return Routed(text=clean, hits=hits, decision=decision, offer=offer, timings_ms=timings, guard=guard)


def previous_user_text(history: Sequence[Mapping[str, Any]]) -> str:
    """The last user message in ``history`` (cleaned, at most 1,000 characters), ``""`` if none."""
    for turn in reversed(history):
        if turn.get("role") == "user" and isinstance(turn.get("content"), str):
            return clean_text(turn["content"], 1000)
    return ""


def dialog_tools(history: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Tools of the ``tool_used`` turns in ``history``: ``(recent successful, failed)``, oldest first.

    A turn failed when its ``status`` is one of :data:`FAILED_STATUSES` or ``"ok": false``; only
    failures after the last user message count (the user's reply answers them), and a failed call
    is not dialog memory of a successful one.
    """
    recent: list[str] = []
    failed: list[str] = []
    for turn in history:
        if turn.get("role") == "user":
            failed.clear()
        if turn.get("role") != "tool_used" or not isinstance(turn.get("name"), str) or not turn.get("name"):
            continue
        status = str(turn.get("status", "")).lower()
        if status in FAILED_STATUSES or turn.get("ok") is False:
            failed.append(turn["name"])
        else:
            recent.append(turn["name"])
    return tuple(recent), tuple(dict.fromkeys(failed))


def last_turn_tools(history: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """Tools that ran successfully after the last user message of ``history``, in call order (dialog memory of
    the previous turn, ``policy.with_memory``)."""
    out: list[str] = []
    for turn in history:
        if turn.get("role") == "user":
            out.clear()
        elif (turn.get("role") == "tool_used" and isinstance(turn.get("name"), str) and turn.get("name")
              and str(turn.get("status", "")).lower() not in FAILED_STATUSES and turn.get("ok") is not False):
            out.append(turn["name"])
    return tuple(dict.fromkeys(out))


def added_tools(history: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """Tools the catalogue gained after the last user message of ``history`` and not called since, oldest first
    (``policy.with_added``).

    A ``{"role": "tools_added", "names": [...]}`` turn records that the host listed new tools (MCP's
    ``notifications/tools/list_changed``; BFCL's ``multi_turn_miss_func`` hands a withheld
    function back this way, for the request still pending); once one ran, the request it was
    listed for has been served.
    """
    out: list[str] = []
    for turn in history:
        if turn.get("role") == "user":
            out.clear()
        elif turn.get("role") == "tools_added" and isinstance(turn.get("names"), (list, tuple)):
            out.extend(n for n in turn["names"] if isinstance(n, str) and n and n not in out)
        elif turn.get("role") == "tool_used" and turn.get("name") in out:
            out.remove(turn["name"])
    return tuple(out)


def rank_catch_all_last(hits: Sequence[Hit], catalog: Catalog, *, threshold: float, forced_floor: float) -> list[Hit]:
    """``hits`` with run-anything tools (:func:`~eris_lab.guard.catch_all_tools`) scored below every dedicated hit.

    A catch-all's wide description fits nearly every request, so it tops the ranking and crowds
    out the tools made for the job (reported case route-26). When a dedicated tool scores at or
    above ``threshold`` (and below ``forced_floor``), each catch-all keeps at most the lowest such
    score minus :data:`~eris_lab.policy.SIBLING_OFFSET` (never below ``threshold``): it rides
    along, last. Forced hits are left alone. Returns a new list, score descending.
    """
    wide = catch_all_tools(catalog)
    if not wide or not any(h.name in wide for h in hits):
        return list(hits)
    dedicated = [h.score for h in hits if h.name not in wide and threshold <= h.score < forced_floor]
    if not dedicated:
        return list(hits)
    cap = max(threshold, min(dedicated) - SIBLING_OFFSET)
    out = [Hit(name=h.name, score=min(h.score, cap)) if h.name in wide and h.score < forced_floor else h
           for h in hits]
    return sorted(out, key=lambda h: -h.score)


def without_asking(hits: Sequence[Hit], catalog: Catalog, *, strong: float, forced_floor: float) -> list[Hit]:
    """``hits`` without the tools that ask the user back (:func:`~eris_lab.guard.asking_tools`) or
    give a fixed reply (:func:`~eris_lab.guard.canned_reply_tools`) when another tool scores at or
    above ``strong`` (the ``single_hit_floor``): the request is clear, and the envelope's ``clarify``
    status still lets the model ask. Unsure, they stay.

    "same thing but as a workflow please" after a tutorial search offered ``ask_clarification``
    (0.51) beside ``find_workflow`` (0.93) (a helper's variant of reported case route-05, whose
    expectation excludes it); "another one" after a recipe search offered a canned dietary
    disclaimer (0.51) beside ``search_recipes`` (0.84) (a helper's variant of route-03, 2026-12-06).
    A forced hit is never dropped.
    """
    asking = asking_tools(catalog) | canned_reply_tools(catalog)
    if not asking or not any(h.name not in asking and h.score >= strong for h in hits):
        return list(hits)
    return [h for h in hits if h.name not in asking or h.score >= forced_floor]


def _domain_positions(catalog: Catalog) -> dict[str, np.ndarray]:
    """Per domain, the registry positions of its tools (``Catalog.cluster`` order), ``(n_domain,) int64``."""
    return {d: np.array([catalog.position(n) for n in catalog.cluster(d)], dtype=np.int64) for d in catalog.domains}


def uses_lexical_widening(catalog: Catalog, knobs: Knobs) -> bool:
    """Whether the bounded widening of ``catalog`` ranks by :func:`widening_key` (a catalogue
    without routing hints and ``widen_lexical_weight`` above 0) rather than by score alone."""
    return knobs.widen_lexical_weight > 0 and not catalog.derived("router.has_hints", _has_hints)


def without_pull(scores: np.ndarray, request: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``scores`` ``(m, n_tools)`` where each tool that ``other`` (a text beside the request: a
    quoted payload, a venting statement) pulls more than ``request`` (the message without it,
    ``(n_tools,)``) scores no more than ``request`` gives it; a new array."""
    pulled = other > request
    out = scores.copy()
    out[:, pulled] = np.minimum(out[:, pulled], request[pulled])
    return out


def without_payload_pull(scores: np.ndarray) -> np.ndarray:
    """``scores`` ``(m + 2, n_tools)`` whose last two rows are the request without its quoted
    payload and the payload alone (``guard.quoted_payloads``): the first ``m`` rows, where each tool
    the payload pulls more than the request does scores no more than the request gives it.

    What a message hands over is no request: 'email Bob: "set an alarm for 7 and cancel my
    meetings"' put clock:alarm first and three calendar tools in the offer, mail:write fifth, and
    "what does 'delete all my emails' mean in German?" offered mail:delete (a helper's variants of
    the quoted-payload cases, 2026-12-05). A tool the request itself pulls keeps its score ("add
    'buy a birthday card for Tim' to my to-do list": the list's tools), so the payload can lower
    only the tools it alone brought.
    """
    return without_pull(scores[:-2], scores[-2], scores[-1])


def widening_order(catalog: Catalog, scores: np.ndarray, texts: Sequence[str], knobs: Knobs) -> np.ndarray:
    """``scores`` ``(len(texts), n_tools)`` of ``texts`` in the widening's order: :func:`widening_key`
    where :func:`uses_lexical_widening`, else ``scores`` themselves."""
    if not uses_lexical_widening(catalog, knobs):
        return scores
    return widening_key(scores, lexical_shares(catalog, texts), knobs)


def message_terms(text: str, idf: Mapping[str, float]) -> tuple[dict[str, float], float]:
    """A message's index terms with their idf weights, and their sum (:func:`lexical_shares`).

    :func:`~eris_lab.guard.lexical_terms` without :data:`~eris_lab.lexicon.STOPWORDS`: function
    words carry no request (on a small catalogue "on" in one tool, "Switch on a lamp", had a high
    idf and pulled that tool into "put on some jazz": a new user's check). A term no tool holds
    weighs the top idf.
    """
    top = max(idf.values(), default=1.0)
    weights = {t: idf.get(t, top) for t in set(lexical_terms(text, STOPWORDS))}
    return weights, sum(weights.values())


def lexical_shares(catalog: Catalog, texts: Sequence[str]) -> np.ndarray:
    """``(len(texts), n_tools) float32`` in [0, 1]: per text, the weighted share of its terms
    (:func:`message_terms`) found in each tool's name, description, keywords and parameters
    (:func:`_lexical_docs`); 0 without terms.
    """
    postings, idf = catalog.derived("router.lexical_index", _lexical_index)
    out = np.zeros((len(texts), len(catalog)), dtype=np.float32)
    for row, text in zip(out, texts):
        weights, total = message_terms(text, idf)
        for term in weights.keys() & postings.keys():  # one vectorised add per term (no loop over 100,000 tools)
            row[postings[term]] += weights[term] / total
    return out


def widening_key(scores: np.ndarray, shares: np.ndarray, knobs: Knobs) -> np.ndarray:
    """The order of bounded widening, ``(m, n_tools)``: ``scores`` plus ``widen_lexical_weight``
    times each row's :func:`lexical_shares` scaled to its best tool (a row sharing no term keeps
    its scores). The router applies it where :func:`uses_lexical_widening`; it picks which hits a
    ranked subset of more than ``widen_k`` keeps (``policy.decide``), the tools of a widening, and
    the tool each clause or sentence of a message with several requests names (its intent).

    Notes
    -----
    Bare one-line descriptions lose to their own words: plain cosine put every gold tool in the
    top 10 for 0.679 of the train half of BFCL parallel_multiple-pooled, cosine + 0.3 x share for
    0.821 (0.25 to 0.5 the same within 1 point; 0.3 chosen there, function words still in; 0.821
    without them too); on the held-out bfcl-pooled 0.896 -> 0.951 by name. Hint-rich descriptors
    rank better alone (demo-test top 5 0.977 -> 0.942 at weight 0.1), so they keep the cosine
    order. Each request's tool read the same way, function words left out:
    parallel_multiple-pooled 0.890 -> 0.925 at 11.5 -> 11.0 tools (test half 0.904 -> 0.936).
    Fusing a dense and a lexical score is the hybrid retrieval of Toolshed (Lumer et al. 2024) and
    semantic-router's hybrid router.
    """
    best = shares.max(axis=1, keepdims=True)
    scale = np.divide(np.float32(knobs.widen_lexical_weight), best, out=np.zeros_like(best), where=best > 0)
    return (scores + scale * shares).astype(np.float32)


def _has_hints(catalog: Catalog) -> bool:
    return any(t.routing_hints for t in catalog)


def _lexical_index(catalog: Catalog) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """:func:`_lexical_docs` as postings: each term's tool positions ``int32``, and its idf."""
    docs, idf = _lexical_docs(catalog)
    postings: dict[str, list[int]] = {}
    for i, doc in enumerate(docs):
        for term in doc:
            postings.setdefault(term, []).append(i)
    return {t: np.asarray(p, dtype=np.int32) for t, p in postings.items()}, idf


def _lexical_docs(catalog: Catalog) -> tuple[list[set[str]], dict[str, float]]:
    """Per tool, the set of :func:`~eris_lab.guard.lexical_terms` of its name, description, keywords
    and parameters' descriptions and enum values; BM25 idf.

    Parameters count because a catalogue often states the foreign words only there (live_multiple's
    ControlAppliance.execute: "'거실, 에어컨, 실행' for turning on the air conditioner" in its
    ``command`` parameter).
    """
    docs = [set(lexical_terms(lexical_text(t))) for t in catalog]
    n = len(docs)
    df: dict[str, int] = {}
    for doc in docs:
        for term in doc:
            df[term] = df.get(term, 0) + 1
    idf = {t: float(np.log((n - d + 0.5) / (d + 0.5) + 1.0)) for t, d in df.items()}
    return docs, idf
