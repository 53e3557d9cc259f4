"""Every tunable number of the router and policy, in one record that round-trips TOML.

No threshold literal lives anywhere else in the package: modules read a :class:`Knobs`.
The defaults are DESIGN.md's reference defaults, calibrated for all-MiniLM-L6-v2
(semantic-router ships 0.5 as that model's score threshold too: ``encoders/huggingface.py``).
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal

from ._files import load_toml_file, write_atomic
from .errors import KnobsError

__all__ = ["Knobs", "FALLBACKS", "ENVELOPES", "LEVERS", "ALL_LEVERS", "GENERATION_LEVERS", "parse_levers", "tightened_bounds",
           "with_levers"]

FALLBACKS = ("full_roster", "domain_cluster", "ranked")
#: What ``policy.with_slots`` does with tools whose required arguments the message cannot fill.
SLOT_CHECKS = ("off", "gate", "prune")
EMPTY_FALLBACKS = ("full_roster", "none", "ranked")
CALIBRATIONS = ("auto", "none", "background")
#: Reply envelope variants (issue 17, lever 3); ``grammar.envelope`` owns their shapes.
ENVELOPES = ("reference", "calls-first", "minimal")
DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


#: The largest envelope string bound (``max_thought_chars``, ``max_message_chars``): the grammar
#: compiler's count cap (``grammar.builtins.MAX_COUNT``, about 25,000 tokens); 10,000,000 said
#: "input nested too deeply" (a helper's bad knobs, 2026-12-05).
MAX_ENVELOPE_CHARS = 100_000  # not imported from the grammar: routing loads no grammar compiler
#: The most calls one envelope may carry (``grammar.envelope.MAX_CALLS``, a copy for the same reason);
#: refused when knobs load, not first when a grammar is compiled (a helper's bad knobs, 2026-12-05).
MAX_CALLS = 100

#: Lowest ``forced_floor``: forced hits are lexical evidence (a name or keyword in the message,
#: scored 0.99 in DESIGN), above any cosine a paraphrase reaches with MiniLM; below 0.5 ordinary
#: embedding hits would count as forced and escape the lone-hit demotion (``forced_floor = -1``
#: was accepted, a helper's bad knobs, 2026-12-05).
MIN_FORCED_FLOOR = 0.5

#: ``relevance_weights``: an intercept and one weight per gate feature (``calibration.GATE_FEATURES``:
#: top cosine, its z-score, the chit-chat cosine); 2 numbers failed inside a matrix product.
GATE_WEIGHTS = 4
#: Largest gate weight by size: fitted ones are tens at most; 1e308 overflowed to NaN.
MAX_GATE_WEIGHT = 1e4


@dataclass(frozen=True, kw_only=True, slots=True)
class Knobs:
    """Tunable settings of guards, router and policy (DESIGN.md "Defaults").

    Every field is a knob; a tuner run writes a new TOML file of them (``Knobs.save``), and
    ``eris-lab route --knobs FILE`` reads one back (``Knobs.load``).

    Raises
    ------
    KnobsError
        From ``load`` / ``from_dict`` / ``replace``: unknown key, wrong type or out-of-range value.
    """

    threshold: float = 0.50  # cosine below this is not a hit; DESIGN.md defaults
    single_hit_floor: float = 0.58  # a lone embedding hit below this is demoted; DESIGN.md
    margin: float = 0.05  # hits within this cosine of the top are a near-tie; DESIGN.md
    forced_floor: float = 0.99  # hits at or above this are lexical/forced, never demoted; DESIGN.md
    unsure_fallback: Literal["full_roster", "domain_cluster", "ranked"] = "full_roster"  # after a demotion
    empty_fallback: Literal["full_roster", "none", "ranked"] = "full_roster"  # no hit at all; DESIGN step 7
    # Bounded widening (issue 18): "ranked" offers the widen_k best-scored tools (whole domains seated)
    # instead of the roster; a catalogue of at most max_whole_roster tools is still offered whole.
    widen_k: int = 8
    max_whole_roster: int = 8
    # on a catalogue without routing hints the widening (and each request's tool) ranks by cosine
    # + this x the message's lexical share (router.widening_key); 0: cosine alone
    widen_lexical_weight: float = 0.3
    # hits further than this below the top are dropped from a ranked subset (>= 2: off, the reference)
    subset_margin: float = 2.0
    # the relevance gate: P(some tool fits) below relevance_floor offers nothing (0: gate off);
    # relevance_weights = intercept, then one weight per calibration.GATE_FEATURES entry
    relevance_floor: float = 0.0
    relevance_weights: tuple[float, ...] = ()
    # a message with no content word in the best tools' text and a top cosine below this offers
    # nothing (policy.uncovered; 0: off, the reference)
    uncovered_floor: float = 0.0
    # tools whose required arguments the message gives no value for (slots.py): off (the reference),
    # gate (none fillable: nothing offered, rule MISSING_ARGUMENTS) or prune (also dropped from an offer)
    slot_check: Literal["off", "gate", "prune"] = "off"
    dialog_memory: int = 12  # recent successful tools kept per session; DESIGN.md
    offer_cap: int = 0  # tools seated before whole domains stop being added (a seated domain keeps all its verbs, so an offer may hold more), 0 = uncapped; DESIGN.md
    short_max_words: int = 3  # input of <= this many words is conversation (no URL/keyword)
    short_max_chars: int = 15  # ... or of <= this many characters; DESIGN.md
    max_query_chars: int = 4000  # longer input is cut before embedding (MiniLM reads 256 pieces)
    fix_spelling: bool = True  # also score the message with misspelt words fixed to catalogue words (guard.spelling_fixes)
    calibration: Literal["auto", "none", "background"] = "auto"  # see router.calibrate; auto = background
    # only for catalogues without routing hints (bare OpenAI/MCP descriptions)
    background_z: float = 2.5  # with calibration: z over neutral chit-chat that maps to `threshold`
    background_slope: float = 0.15  # cosine units per standard deviation above the background
    order_by_cosine: bool = True  # with background calibration: the offer's order is raw cosine (offer.ordered)
    max_calls: int = 3  # tool calls one reply envelope may carry; issue #3 "up to a knob"
    max_thought_chars: int = 400  # bound on the envelope's thought string (a runaway must end); issue #3
    max_message_chars: int = 2000  # bound on the envelope's message string, in characters; issue #3
    # How the grammar spells values (issue 17, levers 1-3). The defaults are the reference grammar;
    # LEVERS (below) name the bounded, compact and envelope settings.
    max_integer_digits: int = 19  # integer part where the schema leaves a side open; int64 has 19
    max_fraction_digits: int = 24  # digits after the point where the bounds need no more
    max_string_chars: int = 0  # longest string without maxLength/pattern/format; 0 = unbounded
    max_array_items: int = 0  # most items of an array without maxItems; 0 = unbounded
    compact_json: bool = False  # whitespace is nothing or one space (no newline, no indentation)
    envelope: Literal["reference", "calls-first", "minimal"] = "reference"  # the reply object's shape
    repair_arguments: bool = False  # repair parsed arguments from the schema and the message (issue 17, repair.py)
    retry_cut_calls: bool = False  # a call cut at the token limit is generated once more under halved bounds (loop.generate_round)
    few_shot: int = 0  # worked examples (a request and its exact reply) in the prompt, one per offered tool; lever 4
    router_picks: bool = False  # a one-request ranked subset reaches the model as its best tool alone (offer.for_model)
    domain_floors: dict[str, float] = field(default_factory=dict)  # per-domain min cosine
    embedding_model: str = DEFAULT_EMBEDDING_MODEL  # the model these numbers were fitted for
    notes: dict[str, Any] = field(default_factory=dict)  # provenance: tuner run, split, scores

    def __post_init__(self) -> None:
        for name in ("threshold", "single_hit_floor", "margin", "forced_floor"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise KnobsError(f"expected a number, got {value!r}", where=name)
            if not -1.0 <= value <= 1.0:
                raise KnobsError(f"expected a cosine in [-1, 1], got {value!r}", where=name)
        if self.margin < 0:
            raise KnobsError(f"expected >= 0, got {self.margin!r}", where="margin")
        if self.forced_floor < MIN_FORCED_FLOOR:
            raise KnobsError(f"expected a cosine in [{MIN_FORCED_FLOOR}, 1], got {self.forced_floor!r}; below it "
                             "embedding hits would count as forced and escape the lone-hit demotion",
                             where="forced_floor")
        for name in ("subset_margin", "relevance_floor", "widen_lexical_weight", "uncovered_floor"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise KnobsError(f"expected a number >= 0, got {value!r}", where=name)
        if self.widen_lexical_weight > 10:  # a share in [0, 1] beside cosines; more drowns the cosine (and 1e308 overflowed)
            raise KnobsError(f"expected a weight in [0, 10], got {self.widen_lexical_weight!r}", where="widen_lexical_weight")
        if self.relevance_floor > 1:
            raise KnobsError(f"expected a probability in [0, 1], got {self.relevance_floor!r}", where="relevance_floor")
        if self.uncovered_floor > 1:
            raise KnobsError(f"expected a cosine in [0, 1], got {self.uncovered_floor!r}", where="uncovered_floor")
        if isinstance(self.relevance_weights, list):
            object.__setattr__(self, "relevance_weights", tuple(self.relevance_weights))
        if not isinstance(self.relevance_weights, tuple) or not all(
                isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) for w in self.relevance_weights):
            raise KnobsError(f"expected a list of numbers, got {self.relevance_weights!r}", where="relevance_weights")
        if self.relevance_weights and len(self.relevance_weights) != GATE_WEIGHTS:
            raise KnobsError(f"expected {GATE_WEIGHTS} numbers (an intercept and one weight per gate feature), got "
                             f"{len(self.relevance_weights)}", where="relevance_weights")
        if any(abs(w) > MAX_GATE_WEIGHT for w in self.relevance_weights):
            raise KnobsError(f"expected weights in [-{MAX_GATE_WEIGHT:g}, {MAX_GATE_WEIGHT:g}], got "
                             f"{list(self.relevance_weights)!r}", where="relevance_weights")
        if self.relevance_floor > 0 and not self.relevance_weights:
            raise KnobsError("a relevance_floor > 0 needs relevance_weights (run eris-lab calibrate)",
                             where="relevance_floor")
        if self.unsure_fallback not in FALLBACKS:
            raise KnobsError(
                f"expected one of {', '.join(FALLBACKS)}, got {self.unsure_fallback!r}",
                where="unsure_fallback",
            )
        if self.empty_fallback not in EMPTY_FALLBACKS:
            raise KnobsError(
                f"expected one of {', '.join(EMPTY_FALLBACKS)}, got {self.empty_fallback!r}",
                where="empty_fallback",
            )
        if self.slot_check not in SLOT_CHECKS:
            raise KnobsError(f"expected one of {', '.join(SLOT_CHECKS)}, got {self.slot_check!r}", where="slot_check")
        if self.envelope not in ENVELOPES:
            raise KnobsError(f"expected one of {', '.join(ENVELOPES)}, got {self.envelope!r}", where="envelope")
        for name in ("compact_json", "repair_arguments", "retry_cut_calls", "router_picks", "fix_spelling",
                     "order_by_cosine"):
            if not isinstance(getattr(self, name), bool):
                raise KnobsError(f"expected true or false, got {getattr(self, name)!r}", where=name)
        for name, lo, hi in (("max_integer_digits", 1, 19), ("max_fraction_digits", 1, 24),
                             ("max_string_chars", 0, 2000), ("max_array_items", 0, 2000), ("few_shot", 0, 3)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise KnobsError(f"expected an integer in [{lo}, {hi}], got {value!r}", where=name)
        if self.calibration not in CALIBRATIONS:
            raise KnobsError(
                f"expected one of {', '.join(CALIBRATIONS)}, got {self.calibration!r}", where="calibration"
            )
        for name in ("background_z", "background_slope"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise KnobsError(f"expected a number >= 0, got {value!r}", where=name)
            # z-scores over chit-chat: beyond 100 the standardised cosines overflow or collapse (1e300
            # gave NumPy overflow warnings and a full roster, a helper's bad knobs, 2026-12-05)
            low_open = name == "background_slope"  # a zero slope maps every z-score to one cosine
            if value > 100 or (low_open and value == 0):
                raise KnobsError(f"expected a number in {'(0' if low_open else '[0'}, 100], got {value!r}", where=name)
        for name in ("widen_k", "max_whole_roster", "dialog_memory", "offer_cap", "short_max_words", "short_max_chars", "max_query_chars",
                     "max_calls", "max_thought_chars", "max_message_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise KnobsError(f"expected an integer >= 0, got {value!r}", where=name)
        if self.widen_k < 1:  # a ranked widening of no tools gave the whole roster (a helper's bad knobs)
            raise KnobsError(f"expected an integer >= 1, got {self.widen_k!r} (the tools a ranked widening "
                             'offers; for no offer when nothing clears the bar set empty_fallback = "none")',
                             where="widen_k")
        if self.max_calls > MAX_CALLS:
            raise KnobsError(f"{self.max_calls:,} is above {MAX_CALLS}, the most calls one reply may carry",
                             where="max_calls")
        for name in ("max_thought_chars", "max_message_chars"):  # the grammar spells these counts out
            if getattr(self, name) > MAX_ENVELOPE_CHARS:
                raise KnobsError(f"{getattr(self, name):,} is above {MAX_ENVELOPE_CHARS:,}, the largest count the "
                                 "grammar compiler spells out", where=name)
        if not isinstance(self.domain_floors, dict):
            raise KnobsError(f"expected a table of domain = cosine, got {self.domain_floors!r}", where="domain_floors")
        for domain, value in self.domain_floors.items():
            if not isinstance(domain, str) or not domain:
                raise KnobsError(f"expected a domain name, got {domain!r}", where="domain_floors")
            if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
                    or not -1.0 <= value <= 1.0):
                raise KnobsError(f"expected a cosine in [-1, 1], got {value!r}", where=f"domain_floors.{domain}")
        if not isinstance(self.embedding_model, str) or not self.embedding_model.strip():
            raise KnobsError(f"expected a model id string, got {self.embedding_model!r}", where="embedding_model")
        if not isinstance(self.notes, dict):
            raise KnobsError(f"expected a table, got {self.notes!r}", where="notes")

    def check_consistent(self, *, where: str = "knobs") -> "Knobs":
        """Refuse knobs that pass the type checks but cannot work together; returns ``self``.

        Checked for knobs read from a file (``load``, ``from_dict``), not for every construction:
        the tuning views try points freely. ``threshold <= single_hit_floor <= forced_floor``: a
        lone-hit floor below the threshold never acts (every hit already cleared a higher bar),
        and a forced floor below the lone-hit floor exempts from demotion the very hits it
        should demote.

        Raises
        ------
        KnobsError
            Naming both knobs and their values.
        """
        if self.single_hit_floor < self.threshold:
            raise KnobsError(f"{self.single_hit_floor!r} is below threshold {self.threshold!r}; a lone-hit floor "
                             "under the threshold never acts (expected threshold <= single_hit_floor)",
                             where=f"{where}: single_hit_floor")
        if self.forced_floor < self.single_hit_floor:
            raise KnobsError(f"{self.forced_floor!r} is below single_hit_floor {self.single_hit_floor!r} "
                             "(expected single_hit_floor <= forced_floor)", where=f"{where}: forced_floor")
        return self

    def check_against(self, *, domains: Iterable[str] | None = None, model_id: str | None = None,
                      where: str = "knobs") -> "Knobs":
        """Refuse knobs that cannot work with this catalogue or embedding model; returns ``self``.

        Parameters
        ----------
        domains : iterable of str, optional
            The catalogue's domains: every key of ``domain_floors`` must be one of them (a floor
            for a domain that does not exist is a typo, and would silently do nothing).
        model_id : str, optional
            The embedding model in use: cosines of another model are on another scale, so
            thresholds fitted for it mean nothing here (semantic-router ties thresholds to models).

        Raises
        ------
        KnobsError
            Naming the knob, the value and what was expected.
        """
        if domains is not None:
            known = set(domains)
            for domain in self.domain_floors:
                if domain not in known:
                    shown = ", ".join(sorted(known)[:12]) + (", ..." if len(known) > 12 else "")
                    expected = (f"expected one of {shown}" if known else
                                "this catalogue has no domains (no tool name has a 'domain:' prefix): "
                                "remove domain_floors")
                    raise KnobsError(f"unknown domain {domain!r} in this catalogue; {expected}",
                                     where=f"{where}: domain_floors")
        if model_id is not None and self.embedding_model != model_id:
            raise KnobsError(f"fitted for {self.embedding_model!r}, but the model in use is {model_id!r}; "
                             "refit the knobs for this model", where=f"{where}: embedding_model")
        return self

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any], *, where: str = "knobs") -> "Knobs":
        """Build from a mapping (a parsed TOML table); unknown keys are an error, not ignored."""
        if not isinstance(data, dict):
            raise KnobsError(f"expected a table, got {type(data).__name__}", where=where)
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise KnobsError(
                f"unknown knob {unknown[0]!r}; expected one of {', '.join(sorted(names))}", where=where
            )
        try:
            knobs = cls(**data)
        except KnobsError as exc:
            raise exc.within(where) from None
        except TypeError as exc:  # pragma: no cover - defensive, fields are all keyword
            raise KnobsError(str(exc), where=where) from None
        return knobs.check_consistent(where=where)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "Knobs":
        """Read a knobs TOML file (``[knobs]`` table, or knob keys at top level).

        Raises
        ------
        KnobsError
            The file is missing, a folder, too large, not UTF-8, not TOML, or holds an unknown,
            invalid or inconsistent knob (:meth:`check_consistent`).
        """
        path = Path(path)
        data = load_toml_file(path, error=KnobsError)  # a folder, /dev/zero, bad UTF-8: one line
        if not data or data == {"knobs": {}}:  # an empty file silently gave the reference knobs
            raise KnobsError("holds no knobs; give --knobs reference for DESIGN's reference values, or leave "
                             "--knobs out for the calibrated ones", where=str(path))
        if "knobs" in data:
            # beside the [knobs] table nothing else is read: a knob left outside it was dropped
            # without a word (a helper's bad knobs, 2026-12-05)
            outside = sorted(k for k in data if k != "knobs")
            if outside:
                raise KnobsError(f"{outside[0]!r} stands outside the [knobs] table; put every knob inside it",
                                 where=str(path))
            return cls.from_dict(data["knobs"], where=str(path))
        return cls.from_dict(data, where=str(path))

    def replace(self, **changes: Any) -> "Knobs":
        """Return a copy with some knobs changed (validated like construction)."""
        return dataclasses.replace(self, **changes)

    # -- output ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The knobs as a plain mapping (TOML- and JSON-ready)."""
        return dataclasses.asdict(self)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the knobs as TOML atomically (a temp file renamed over ``path``).

        A crash mid-write leaves the previous file untouched.
        """
        import tomli_w

        text = tomli_w.dumps({"knobs": _drop_none(self.to_dict())})
        return write_atomic(path, text)


#: The generation levers of issue 17 that are knobs, each a named set of knob changes (apply with
#: :func:`with_levers`). Sources for ``bounded``: 10 integer digits hold every int32 (OpenAPI's
#: default integer format); 8 fraction digits give a GPS coordinate to about 1 mm. Strings and
#: arrays from BFCL 2026.3.23 gold answers of categories never used to report generation
#: (simple_python, parallel, live_simple, parallel_multiple; 4,375 strings, 588 arrays): strings
#: p99 57, max 224 characters -> 64 (first 100; 64 cut fewer calls at the token limit and broke
#: no right call in the final run, docs/generation.md, "The final run at full size"); arrays p99 10, max 20
#: items -> 10; integers at most 9 digits, fractions at most 4 (both inside the bounds above). ``few-shot``: two worked examples,
#: the issue's "one or two" (each costs about 40-70 prompt tokens: ``eris-lab prompt --tokens``).
LEVERS: dict[str, dict[str, Any]] = {
    "bounded": {"max_integer_digits": 10, "max_fraction_digits": 8, "max_string_chars": 64, "max_array_items": 10},
    "compact": {"compact_json": True},
    "calls-first": {"envelope": "calls-first"},
    "minimal": {"envelope": "minimal"},
    "repair": {"repair_arguments": True},
    "few-shot": {"few_shot": 2},
    "retry-cut": {"retry_cut_calls": True},
    "router-picks": {"router_picks": True},
}
#: What ``--levers all`` means: every lever, with the calls-first envelope. ``repair`` changes no
#: grammar: it repairs parsed arguments (``repair.py``; it broke no right value on BFCL multiple
#: or live_multiple, docs/results/repair-2026-11-30.json). ``router-picks`` since 2026-12-02
#: (names 151 -> 171 of 200 held-out live_multiple cases, docs/results/generation-holdout-router-picks-2026-12-02.json).
ALL_LEVERS = ("bounded", "compact", "calls-first", "repair", "retry-cut", "router-picks")
#: The knob changes of :data:`ALL_LEVERS` together.
GENERATION_LEVERS: dict[str, Any] = {k: v for name in ALL_LEVERS for k, v in LEVERS[name].items()}


def tightened_bounds(knobs: Knobs) -> Knobs:
    """The knobs of a second try after a call was cut at the token limit (``retry_cut_calls``).

    Strings and arrays without a schema bound get half the ``bounded`` lever's length (64
    characters and 10 items: 32 and 5, also when the knobs leave them unbounded), fractions at most
    half its 8 digits and integers at most its 10 digits; a bound the schema states is kept. Read
    off the 2026-12-01 final run, where every call cut at 128 tokens ran on inside a repeated array
    item, a string of digits or a long fraction (docs/generation.md, "A cut call generated again").
    """
    bounded = LEVERS["bounded"]

    def half(value: int, default: int) -> int:
        return max(1, (value or default) // 2)

    return dataclasses.replace(knobs,
                               max_string_chars=half(knobs.max_string_chars, bounded["max_string_chars"]),
                               max_array_items=half(knobs.max_array_items, bounded["max_array_items"]),
                               max_fraction_digits=min(knobs.max_fraction_digits, bounded["max_fraction_digits"] // 2),
                               max_integer_digits=min(knobs.max_integer_digits, bounded["max_integer_digits"]))


def parse_levers(text: str | None, *, where: str = "--levers") -> tuple[str, ...]:
    """Lever names from a comma-separated list (``all`` = :data:`ALL_LEVERS`, also beside others:
    ``all,few-shot``; empty = none).

    Raises
    ------
    KnobsError
        An unknown lever, or two envelope variants at once.
    """
    names = [n.strip() for n in (text or "").split(",") if n.strip()]
    names = [m for n in names for m in (ALL_LEVERS if n == "all" else (n,))]
    unknown = [n for n in names if n not in LEVERS]
    if unknown:
        raise KnobsError(f"unknown lever {unknown[0]!r}; expected all or some of {', '.join(LEVERS)}", where=where)
    if "calls-first" in names and "minimal" in names:
        raise KnobsError("calls-first and minimal are two envelopes; choose one", where=where)
    return tuple(dict.fromkeys(names))


def with_levers(knobs: "Knobs", names: Iterable[str]) -> "Knobs":
    """``knobs`` with the named :data:`LEVERS` applied (validated like construction)."""
    changes: dict[str, Any] = {}
    for name in names:
        changes.update(LEVERS[name])
    return knobs.replace(**changes) if changes else knobs


def _drop_none(value: Any) -> Any:
    """TOML has no null: drop None entries from nested mappings before writing."""
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_drop_none(v) for v in value]
    return value
