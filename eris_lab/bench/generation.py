"""Generation benchmark: does the grammar (and the router's offer) make the small model call right?

``python -m eris_lab.bench generation [--suites ...] [--limit N] [--conditions a,b,c] [--out FILE]``

A benchmark, not a test (issue 5, "CLI and measurements"). With the bundled Gemma 3 270M (a
*base* model, prompted in the plain format of ``llm.plain_prompt``), each BFCL case runs under
up to three conditions:

``a``  whole roster (the case's candidate functions), ``prompt.full`` (every schema), **no
       grammar**; the free text goes through ``parse.calls`` and its text fallbacks.
``b``  whole roster, the same full prompt, **with the grammar**: the reply envelope of
       ``grammar.compile`` over an Offer of every candidate.
``c``  the **router's offer** (``router.Router`` over the case's candidates, bundled MiniLM),
       ``prompt.slim`` of that offer and its grammar. The router's decision passes through as
       it is: an empty offer (the router judged the message conversational or irrelevant)
       compiles to the answer-only grammar, so the model answers and cannot call (issue 17).

``--levers`` applies issue 17's generation levers (``knobs.LEVERS``: bounded values, compact
JSON, an envelope variant) to the grammar and prompt of b and c; the router's knobs stay, and
``router-picks`` hands c's model a ranked subset's best tool alone (``offer.for_model``). The
``repair`` lever repairs the first call's arguments before it is scored (``repair.py``; each
change in the case's ``repairs``), and ``--replay-repair FILE`` replays it over a saved run's
raw outputs, per rule, without the model (:func:`replay_repair`).

Suites: BFCL ``multiple`` (200 cases), a fixed seeded sample of :data:`SAMPLE_SIZE` cases of
``live_multiple``, and ``irrelevance`` (240 cases). Every suite is put in one seeded order
(:data:`SEED`), so ``--limit N`` takes the first N of a random order, never the first N of the
file; the live_multiple sample is the first 200 of its order. ``live_multiple-holdout`` (not run by
default) is the next 200 of that order, to check the rules of ``repair.py`` on cases they were not
read off (:data:`HOLDOUT_SUITES`). Since 2026-12-02 three mends were read off its first 100 (the
``span`` and ``format`` mends, ``ungrounded`` choices), so only its second 100 are unread.

Metrics, per suite and condition:

``name_accuracy``
    The first parsed call names a gold function (``multiple``, ``live_multiple``).
``ast_accuracy``
    The first call also passes :func:`match_call` against BFCL's ``possible_answer``.
``empty_call_rate``
    No call was made (``irrelevance``: the right thing there). A reply cut off at the token
    limit after it began a call (envelope ``"status": "call"``, or ``"name": "<offered tool>"``
    in the text) is **not** empty: the model chose to call, the budget only hid the call.
``cut_call_rate``
    Replies that began a call but were cut off before one was complete (no parsed call). They
    fail name and AST accuracy, as in BFCL, where an unparsable reply fails.
Speed: generation tokens/s (prompt evaluation excluded, wall clock) without a grammar
(condition a) and with one (b, c), and the share of generation time spent in grammar work
(``llm.Generation.grammar_s``: everything the greedy grammar check adds after the plain
argmax), summed over the grammar runs.

Simplifications against BFCL's own ``ast_checker`` (documented, deliberate):

* Only the **first** call is scored; BFCL's ``multiple`` categories expect exactly one call
  and fail a reply with more. ``multi_call_rate`` reports how often there were more (only
  possible in condition a: the grammar conditions allow one call, :data:`BENCH_KNOBS`).
* Types are judged by value, not by BFCL's per-language type table: a string matches a string
  (after BFCL's ``standardize_string``), a bool only a bool, a number a number of equal value;
  a float where the schema says ``integer`` fails (BFCL: a type error, even for ``5.0``), an
  integer where it says ``float`` passes (BFCL converts it). No "any" type special cases.
* Nested objects follow BFCL's dict checker (each key known, each value accepted, keys without
  ``""`` among their accepted values present); lists must match an accepted list element by
  element, strings standardised (BFCL's list checker), lists of objects the same way.
* Names are compared verbatim (BFCL rewrites dots to underscores for some model families).
* The parser runs without ``schemas``: a call missing a required argument is still a call
  (it counts for name accuracy and fails AST), rather than being dropped as the tool loop would.

Timing: one pinned thread (``--threads``, default 1); the machine's load average is recorded at
start and end. Results are written atomically (``_files.write_atomic``) after every case, so an
interrupted run leaves a readable partial file, and ``--resume`` continues it: cases already in
``--out`` are kept, not rerun (the settings must match). A full run is hours on two CPU cores
(about 30 s per case for the three conditions), so one process per suite on its own core and
``--merge`` afterwards is the fast way::

    python -m eris_lab.bench generation --suites multiple --limit 200 --out m.json --resume &
    python -m eris_lab.bench generation --suites live_multiple --limit 200 --out l.json --resume &
    python -m eris_lab.bench generation --merge m.json l.json --out all.json

and ``--offset N`` starts a further process on the tail of a suite (cases N onwards of its order).
"""

from __future__ import annotations

import json
import os
import random
import re
import statistics
import sys
import time
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .. import prompt as prompts
from .._files import repo_root, shown_path, write_atomic
from ..catalog import Catalog
from ..errors import DataError, ErisLabError
from ..eval.datasets import BFCL_SUITES, Query, fetch_bfcl, load_suite, read_lines
from ..grammar import compile as compile_grammar
from ..grammar.envelope import ENVELOPE_KEYS, STATUSES
from ..knobs import Knobs, parse_levers, with_levers
from ..loop import SYSTEM, began_call, generate_round
from ..offer import Offer, for_model
from ..parse import calls as parse_calls
from ..repair import DEFAULT_RULES, RULES, repair_arguments
from ..schema import normalize_types

__all__ = [
    "Outcome",
    "standardize_string",
    "value_matches",
    "match_call",
    "score",
    "cases",
    "bench",
    "rescore",
    "merge",
    "replay_repair",
    "main",
    "CONDITIONS",
    "SUITES",
    "HOLDOUT_SUITES",
    "ALL_SUITES",
    "bfcl_category",
    "SEED",
    "SAMPLE_SIZE",
    "BENCH_KNOBS",
]

#: Conditions (module docstring): id -> description.
CONDITIONS: dict[str, str] = {
    "a": "whole roster, full prompt, no grammar",
    "b": "whole roster, full prompt, grammar",
    "c": "router offer, slim prompt, grammar",
}
#: Suites run by default, in this order.
SUITES: tuple[str, ...] = ("multiple", "live_multiple", "irrelevance")
#: Held-out samples: suite -> its BFCL category. Its cases are the :data:`SAMPLE_SIZE` after the
#: benchmark's own sample in the same seeded order (the repair rules were read off the first 200 of
#: ``multiple`` and ``live_multiple``; ``multiple`` has no more cases).
HOLDOUT_SUITES: dict[str, str] = {"live_multiple-holdout": "live_multiple"}
#: Every suite ``--suites`` accepts.
ALL_SUITES: tuple[str, ...] = SUITES + tuple(HOLDOUT_SUITES)
#: Seed of every suite's order and of the live_multiple sample (issue 5: "a fixed 200-case sample").
SEED = 5
#: Cases in the live_multiple sample (issue 5).
SAMPLE_SIZE = 200
#: Envelope bounds for this benchmark: a 270M base model fills the default 400-character
#: thought and 2,000-character message with template echo, and with the default three calls
#: per reply it adds calls BFCL's ``multiple`` categories do not want (each case expects exactly
#: one); all of that only burns the token budget (first calibration run, 2026-11-29: two or three
#: calls per grammar reply, every one cut at 128 tokens). Only these three knobs differ from
#: the defaults (knobs.py).
BENCH_KNOBS = Knobs(max_thought_chars=60, max_message_chars=200, max_calls=1)
#: Default generation budget per run, in tokens (arguments of a BFCL call fit in it once the
#: envelope is bounded; measured on the first live_multiple cases, 2026-11-29).
MAX_TOKENS = 128
#: Context window, tokens. Every full prompt of ``multiple`` fits; in the live_multiple sample one
#: (live_multiple_217-93-0, 6,858 tokens with every schema) does not: conditions a and b record
#: the overflow as an error (no call), c's slim prompt fits. That is the cost of a whole roster,
#: kept visible rather than hidden by a larger window (2026-11-29 run).
N_CTX = 4096
#: Characters of raw model output kept per case in the JSON record.
RAW_CHARS = 400

# BFCL ast_checker.standardize_string: drop spaces and , . / - _ * ^, lowercase, ' -> ".
_STANDARDIZE_RE = re.compile(r"[ \,\.\/\-\_\*\^]")


# ---------------------------------------------------------------------------------------------
# The AST matcher (BFCL-style, simplified: module docstring)
# ---------------------------------------------------------------------------------------------


def standardize_string(text: str) -> str:
    """BFCL's string normalisation: no spaces or ``,./-_*^``, lower case, ``'`` -> ``"``."""
    return _STANDARDIZE_RE.sub("", text).lower().replace("'", '"')


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _accepted_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _dict_matches(value: Any, expected: Mapping[str, Any]) -> bool:
    """BFCL's dict checker: ``expected`` maps each key to its list of accepted values."""
    if not isinstance(value, Mapping):
        return False
    for key, item in value.items():
        if key not in expected or not value_matches(item, _accepted_list(expected[key])):
            return False
    return all(key in value or "" in _accepted_list(accepted) for key, accepted in expected.items())


def _same(value: Any, accepted: Any) -> bool:
    if isinstance(accepted, Mapping):
        return _dict_matches(value, accepted)
    if isinstance(accepted, list):
        return (isinstance(value, (list, tuple)) and len(value) == len(accepted)
                and all(_same(v, a) for v, a in zip(value, accepted)))
    if isinstance(accepted, str):
        return isinstance(value, str) and standardize_string(value) == standardize_string(accepted)
    if isinstance(accepted, bool):
        return isinstance(value, bool) and value == accepted
    if _is_number(accepted):
        return _is_number(value) and value == accepted
    return value is None and accepted is None


def value_matches(value: Any, accepted: Sequence[Any]) -> bool:
    """True when ``value`` equals one of ``accepted`` (one parameter's list in possible_answer).

    Parameters
    ----------
    value : JSON value
        What the model sent.
    accepted : list
        BFCL's accepted values; ``""`` among them means the parameter may be omitted (an
        explicit ``""`` still matches it). A dict among them is a nested possible answer (each
        key -> its own list of accepted values); a list is one accepted list.

    Returns
    -------
    bool
    """
    return any(_same(value, a) for a in accepted)


def match_call(name: str, arguments: Any, ground_truth: Mapping[str, Mapping[str, Sequence[Any]]],
               schema: Mapping[str, Any] | None = None) -> tuple[bool, str]:
    """Judge one call against one BFCL ground-truth entry, BFCL-style (simplified).

    Parameters
    ----------
    name : str
        The called function.
    arguments : mapping
        The call's arguments.
    ground_truth : mapping
        One entry of possible_answer's ``ground_truth``: ``{function: {param: [accepted...]}}``.
    schema : mapping, optional
        The function's parameter schema (BFCL types are normalised here); supplies
        ``required`` and the known ``properties``. Without it only the ground truth is used.

    Returns
    -------
    (bool, str)
        ``(True, "")`` when the call passes, else ``(False, reason)``. Checks, in order: the
        name; arguments an object; every required parameter present; no parameter unknown to
        the schema or the ground truth; no float for an ``integer`` parameter;
        each value among the accepted ones; every ground-truth parameter without ``""`` among
        its accepted values present.
    """
    if name not in ground_truth:
        return False, f"wrong function {name!r}; expected {', '.join(map(repr, ground_truth))}"
    expected = ground_truth[name]
    if not isinstance(arguments, Mapping):
        return False, f"arguments are not an object: {arguments!r}"
    schema = normalize_types(dict(schema)) if schema else {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else None
    for param in schema.get("required", ()) or ():
        if param not in arguments:
            return False, f"missing required parameter {param!r}"
    for param, value in arguments.items():
        if (properties is not None and param not in properties) or param not in expected:
            return False, f"unknown parameter {param!r}"
        spec = properties.get(param) if properties is not None else None
        if isinstance(spec, Mapping) and spec.get("type") == "integer" and isinstance(value, float):
            return False, f"parameter {param!r}: expected an integer, got the float {value!r}"
        if not value_matches(value, _accepted_list(expected[param])):
            return False, f"parameter {param!r}: {value!r} is not among {expected[param]!r}"
    for param, accepted in expected.items():
        if param not in arguments and "" not in _accepted_list(accepted):
            return False, f"missing parameter {param!r} (no default accepted)"
    return True, ""


# ---------------------------------------------------------------------------------------------
# Records and scoring
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    """One case under one condition.

    Attributes
    ----------
    suite, id, condition : str
    expect : {"all", "none"}
        ``all``: a gold call is expected; ``none``: no call is (irrelevance).
    gold : tuple of str
        Gold function names (empty for irrelevance).
    offered : int
        Tools offered (the grammar's and prompt's list; whole roster in a and b).
    offer_kind : str
        The offer's kind (``full_roster`` in a and b; the router's decision in c).
    calls : tuple of str
        Names of the parsed calls, in output order.
    name_ok, ast_ok : bool
        First call names a gold function; and passes :func:`match_call`.
    ast_reason : str
        Why AST failed (``""`` when it passed or no call was expected).
    prompt_tokens, n_tokens : int
    seconds : float
        Wall seconds of the model call (prompt evaluation included); 0 when skipped.
    tokens_per_s : float
        Generation rate, prompt evaluation excluded.
    grammar_s : float
        Of the generation time, seconds of grammar work (0 without a grammar).
    grammar : bool
        A grammar constrained this run.
    skipped : str
        Why the model was not run (empty offer), else ``""``.
    finish_reason : str
        ``"stop"`` or ``"length"`` (cut at ``max_tokens``).
    started_call : bool
        No complete call, but the output began one (module docstring, ``cut_call_rate``).
    error : str
        An LLM error (e.g. prompt longer than the context), else ``""``. Counts as no call.
    raw : str
        The first :data:`RAW_CHARS` characters of the output.
    repairs : tuple of str
        With the ``repair`` lever: each change to the first call's arguments, ``rule:argument``
        (``repair.repair_arguments``); it is the repaired call that is scored.
    retried : bool
        With the ``retry-cut`` lever: the first try was a call cut at the token limit and this is
        the second, under halved bounds (``loop.generate_round``); tokens and seconds are both tries'.
    """

    suite: str
    id: str
    condition: str
    expect: str
    gold: tuple[str, ...] = ()
    offered: int = 0
    offer_kind: str = ""
    calls: tuple[str, ...] = ()
    name_ok: bool = False
    ast_ok: bool = False
    ast_reason: str = ""
    prompt_tokens: int = 0
    n_tokens: int = 0
    seconds: float = 0.0
    tokens_per_s: float = 0.0
    grammar_s: float = 0.0
    grammar: bool = False
    skipped: str = ""
    finish_reason: str = ""
    started_call: bool = False
    error: str = ""
    raw: str = ""
    repairs: tuple[str, ...] = ()
    retried: bool = False

    @property
    def empty(self) -> bool:
        """No call was made, nor begun (a call cut off by the token limit is not empty)."""
        return not self.calls and not self.started_call

    @property
    def generation_s(self) -> float:
        """Seconds of generation (prompt evaluation excluded), from tokens and rate."""
        return self.n_tokens / self.tokens_per_s if self.tokens_per_s > 0 else 0.0


def _rate(flags: Sequence[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def _speed(runs: Sequence[Outcome]) -> dict[str, Any]:
    ran = [o for o in runs if not o.skipped and not o.error and o.n_tokens > 0]
    gen_s = sum(o.generation_s for o in ran)
    tokens = sum(o.n_tokens for o in ran)
    grammar_s = sum(o.grammar_s for o in ran)
    return {
        "runs": len(ran),
        "tokens": tokens,
        "tokens_per_s_median": _median([o.tokens_per_s for o in ran]),
        "tokens_per_s_pooled": round(tokens / gen_s, 2) if gen_s else None,
        "grammar_share": round(grammar_s / gen_s, 4) if gen_s and any(o.grammar for o in ran) else None,
    }


def score(outcomes: Iterable[Outcome]) -> dict[str, Any]:
    """Aggregate outcomes per suite and condition, plus speed with and without a grammar.

    Returns
    -------
    dict
        ``{"suites": {suite: {condition: {...}}}, "speed": {"no_grammar", "grammar"}}``. Per
        condition: ``n``, ``name_accuracy`` and ``ast_accuracy`` (expect ``all``; ``None``
        otherwise), ``call_rate`` (complete calls), ``multi_call_rate``, ``empty_call_rate``,
        ``cut_call_rate``, ``truncated_rate`` (cut at the token limit), ``errors``,
        ``skipped``, ``mean_offer``, ``mean_prompt_tokens``, ``tokens_per_call`` (generated
        tokens of the runs that made a complete call), and the :func:`_speed` fields.
        Rates are fractions in [0, 1], rounded to 4 places; ``None`` for no cases.
    """
    outcomes = list(outcomes)
    suites: dict[str, dict[str, Any]] = {}
    for suite in dict.fromkeys(o.suite for o in outcomes):
        suites[suite] = {}
        for condition in dict.fromkeys(o.condition for o in outcomes if o.suite == suite):
            group = [o for o in outcomes if o.suite == suite and o.condition == condition]
            expected = [o for o in group if o.expect == "all"]
            prompted = [o.prompt_tokens for o in group if o.prompt_tokens]
            per_call = [o.n_tokens for o in group if o.calls]
            suites[suite][condition] = {
                "n": len(group),
                "name_accuracy": _rate([o.name_ok for o in expected]),
                "ast_accuracy": _rate([o.ast_ok for o in expected]),
                "call_rate": _rate([bool(o.calls) for o in group]),
                "multi_call_rate": _rate([len(o.calls) > 1 for o in group]),
                "empty_call_rate": _rate([o.empty for o in group]),
                "cut_call_rate": _rate([o.started_call for o in group]),
                "truncated_rate": _rate([o.finish_reason == "length" for o in group]),
                "retried_rate": _rate([o.retried for o in group]),
                "errors": sum(1 for o in group if o.error),
                "skipped": sum(1 for o in group if o.skipped),
                "mean_offer": round(statistics.fmean([o.offered for o in group]), 2) if group else None,
                "mean_prompt_tokens": round(statistics.fmean(prompted), 1) if prompted else None,
                "tokens_per_call": round(statistics.fmean(per_call), 1) if per_call else None,
                **_speed(group),
            }
    return {
        "suites": suites,
        "speed": {"no_grammar": _speed([o for o in outcomes if not o.grammar]),
                  "grammar": _speed([o for o in outcomes if o.grammar])},
    }


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------


def bfcl_category(suite: str) -> str:
    """The BFCL category a benchmark suite draws from (``live_multiple-holdout`` -> ``live_multiple``)."""
    return HOLDOUT_SUITES.get(suite, suite)


def _answers(suite: str) -> dict[str, list[dict[str, Any]]]:
    """possible_answer ``ground_truth`` per case id (``{}`` for a suite without answers)."""
    suite = bfcl_category(suite)
    if BFCL_SUITES.get(suite) != "all":
        return {}
    path = fetch_bfcl() / "bfcl_eval" / "data" / "possible_answer" / f"BFCL_v4_{suite}.json"
    return {row["id"]: row.get("ground_truth", []) for row in read_lines(path)}


def cases(suite: str, *, limit: int | None = None, seed: int = SEED) -> tuple[Query, ...]:
    """The benchmark's cases of one suite, in its fixed seeded order.

    Parameters
    ----------
    suite : {"multiple", "live_multiple", "irrelevance", "live_multiple-holdout"}
    limit : int, optional
        Keep the first ``limit`` of the order.
    seed : int

    Returns
    -------
    tuple of Query
        ``live_multiple``: the first :data:`SAMPLE_SIZE` of its order (the fixed sample);
        ``live_multiple-holdout``: the next :data:`SAMPLE_SIZE`.

    Raises
    ------
    DataError
        An unknown suite or a bad ``limit``.
    """
    if suite not in ALL_SUITES:
        raise DataError(f"unknown suite {suite!r}; expected one of {', '.join(ALL_SUITES)}", where="--suites")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise DataError(f"expected an integer >= 1, got {limit!r}", where="--limit")
    category = bfcl_category(suite)
    queries = list(load_suite(category).queries)
    random.Random(f"{seed}:{category}").shuffle(queries)
    if suite in HOLDOUT_SUITES:
        queries = queries[SAMPLE_SIZE:2 * SAMPLE_SIZE]
    elif suite == "live_multiple":
        queries = queries[:SAMPLE_SIZE]
    return tuple(queries[:limit] if limit is not None else queries)


def _whole_roster(catalog: Catalog) -> Offer:
    names = catalog.names
    return Offer.given(names, kind="full_roster", reason="benchmark: the case's whole roster")


def _messages(system: str, query: Query) -> list[dict[str, str]]:
    history = [{"role": str(m.get("role")), "content": str(m.get("content", ""))} for m in query.history
               if m.get("role") in ("system", "user", "assistant")]
    return [{"role": "system", "content": system}, *history, {"role": "user", "content": query.query}]


def _run(runner: Any, *, suite: str, query: Query, condition: str, offer: Offer, catalog: Catalog, system: str,
         grammar: str | None, truth: Sequence[Mapping[str, Any]], max_tokens: int, knobs: Knobs = BENCH_KNOBS) -> Outcome:
    base = Outcome(suite=suite, id=query.id, condition=condition, expect=query.expect, gold=query.gold,
                   offered=len(offer.names), offer_kind=offer.kind, grammar=grammar is not None)
    if not offer.names and grammar is None:
        return replace(base, skipped="empty offer without a grammar: nothing to call; model not run")
    try:
        generation, retried = generate_round(runner, _messages(system, query), offer=offer, catalog=catalog,
                                             knobs=knobs, grammar=grammar, max_tokens=max_tokens)
    except ErisLabError as exc:
        return replace(base, error=str(exc), ast_reason="no call" if query.expect == "all" else "")
    parsed = parse_calls(generation.text, offer.names)
    names = tuple(c.name for c in parsed.calls)
    started = not names and began_call(generation.text, offer.names)
    name_ok = ast_ok = False
    reason = ""
    changes: tuple[str, ...] = ()
    if query.expect == "all":
        if parsed.calls:
            first = parsed.calls[0]
            name_ok = first.name in query.gold
            entry = truth[0] if truth else {}
            schema = catalog.tool(first.name).parameters if first.name in catalog else None
            arguments = dict(first.arguments)
            if knobs.repair_arguments:
                arguments, repairs = repair_arguments(arguments, schema, query.query)
                changes = tuple(f"{r.rule}:{r.argument}" for r in repairs if r.changed)
            ast_ok, reason = match_call(first.name, arguments, entry, schema)
        else:
            reason = "no call (one begun, cut off at the token limit)" if started else "no call"
    return replace(base, calls=names, started_call=started, finish_reason=generation.finish_reason,
                   name_ok=name_ok, ast_ok=ast_ok, ast_reason=reason,
                   prompt_tokens=generation.n_prompt_tokens, n_tokens=generation.n_tokens,
                   seconds=round(generation.seconds, 3), tokens_per_s=round(generation.tokens_per_s, 2),
                   grammar_s=round(getattr(generation, "grammar_s", 0.0), 4), raw=generation.text[:RAW_CHARS],
                   repairs=changes, retried=retried)


def run_case(runner: Any, query: Query, *, suite: str, conditions: Sequence[str], truth: Sequence[Mapping[str, Any]],
             router_for: Any = None, knobs: Knobs = BENCH_KNOBS, max_tokens: int = MAX_TOKENS) -> list[Outcome]:
    """Run one case under each condition (a and b share the full prompt, so its evaluation is cached).

    ``router_for(catalog) -> Router`` is needed for condition c.
    """
    catalog = query.catalog
    if catalog is None:  # pragma: no cover - BFCL cases always carry their candidates
        raise DataError("the case has no candidate functions", where=f"{suite}: {query.id}")
    whole = _whole_roster(catalog)
    out = []
    for condition in conditions:
        try:
            if condition in ("a", "b"):
                offer = whole
                system = SYSTEM + "\n\n" + prompts.full(catalog, knobs=knobs)
                grammar = None if condition == "a" else compile_grammar(offer, catalog, knobs=knobs).text
            else:
                if len(catalog):
                    router = router_for(catalog)
                    offer = for_model(router.route(query.query, history=query.history).offer,
                                      intents=router.last_intents, intent_floor=router.knobs.threshold, knobs=knobs)
                else:
                    offer = replace(whole, names=())
                # the router's decision as it is: an empty offer compiles to the answer-only grammar
                system = SYSTEM + "\n\n" + prompts.slim(offer, catalog, knobs=knobs)
                grammar = compile_grammar(offer, catalog, knobs=knobs).text
        except ErisLabError as exc:  # a schema the compiler refuses: recorded, counted as no call
            out.append(Outcome(suite=suite, id=query.id, condition=condition, expect=query.expect, gold=query.gold,
                               grammar=condition != "a", error=str(exc), ast_reason="no call"))
            continue
        out.append(_run(runner, suite=suite, query=query, condition=condition, offer=offer, catalog=catalog,
                        system=system, grammar=grammar, truth=truth, max_tokens=max_tokens,
                        knobs=knobs))
    return out


# ---------------------------------------------------------------------------------------------
# The benchmark
# ---------------------------------------------------------------------------------------------


#: The router's knobs in condition c: ``calibrated`` (each case's catalogue calibrated without
#: labels, the default of ``route``, ``eval`` and ``generate``: its relevance gate may offer
#: nothing, issue 17 item 7) or ``reference`` (DESIGN.md's values; the 2026-11-29 run's router).
ROUTER_KNOBS = ("calibrated", "reference")


def _router_factory(knobs: Knobs, router_knobs: str = "calibrated"):
    from ..embed import default_embedder
    from ..router import Router
    from ..strategies import MemoEmbedder

    memo = MemoEmbedder(default_embedder())

    def make(catalog: Catalog):
        if router_knobs == "calibrated":
            return Router.with_calibrated_knobs(catalog, memo, cache=False)
        return Router(catalog, embedder=memo, knobs=knobs, cache=False)

    return make


def bench(runner: Any, *, suites: Sequence[str] = SUITES, conditions: Sequence[str] = tuple(CONDITIONS),
          limit: int | None = None, max_tokens: int = MAX_TOKENS, knobs: Knobs = BENCH_KNOBS,
          router_for: Any = None, out: str | os.PathLike[str] | None = None, progress: bool = True,
          resume: bool = False, offset: int = 0, levers: Sequence[str] = (),
          router_knobs: str = "calibrated") -> dict[str, Any]:
    """Run the benchmark; return (and, with ``out``, keep writing) the JSON record.

    Parameters
    ----------
    runner : llm.LlamaRunner or a fake with ``generate``
    suites : sequence of str
        From :data:`SUITES`.
    conditions : sequence of {"a", "b", "c"}
    limit : int, optional
        Cases per suite (the first of each suite's fixed order).
    max_tokens : int
        Generation budget per run.
    knobs : Knobs
        Envelope bounds for the grammar and the router's knobs (default :data:`BENCH_KNOBS`).
    router_for : callable, optional
        ``catalog -> Router`` for condition c; default a Router over the bundled MiniLM with
        ``router_knobs``.
    router_knobs : {"calibrated", "reference"}
        The default router's knobs (:data:`ROUTER_KNOBS`); recorded in the settings.
    out : path, optional
        JSON file rewritten atomically after every case.
    offset : int
        Skip the first ``offset`` cases of each suite's order (of the ``limit`` kept): a second
        process can start on the tail of a suite while the first works from its head, and
        :func:`merge` pools the two.
    resume : bool
        Keep the cases ``out`` already holds (a run cut short) and run only the others; the
        saved settings must match these (:func:`_comparable`).
    levers : sequence of str
        Issue 17's generation levers (``knobs.LEVERS`` names) applied over ``knobs``; recorded
        in the settings (None when there are none, as in records made before levers existed).

    Returns
    -------
    dict
        ``settings``, ``scores`` (:func:`score`), ``seconds_per_case`` (wall, every condition
        of a case together, per suite and overall), ``case_seconds`` (suite -> case id -> wall s),
        ``cases`` (every :class:`Outcome`).

    Raises
    ------
    DataError
        An unknown condition, a negative offset or one past every case; with ``resume``, a saved file that is unreadable or was run with
        other settings.
    """
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad or not conditions:
        raise DataError(f"unknown condition {bad[0] if bad else ''!r}; expected some of {','.join(CONDITIONS)}",
                        where="--conditions")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise DataError(f"expected an integer >= 0, got {offset!r}", where="--offset")
    levers = list(parse_levers(",".join(levers), where="--levers"))
    if router_knobs not in ROUTER_KNOBS:
        raise DataError(f"expected one of {', '.join(ROUTER_KNOBS)}, got {router_knobs!r}", where="--router-knobs")
    if "c" in conditions and router_for is None:
        router_for = _router_factory(knobs, router_knobs)  # the levers only change the grammar, not the router
    knobs = with_levers(knobs, levers)
    plan = [(suite, q) for suite in suites for q in cases(suite, limit=limit)[offset:]]
    if offset and not plan:
        sizes = ", ".join(f"{suite} {len(cases(suite, limit=limit))}" for suite in suites)
        raise DataError(f"{offset} skips every case ({sizes}): nothing would run", where="--offset")
    truths = {suite: _answers(suite) for suite in suites}
    record: dict[str, Any] = {
        "benchmark": "generation",
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "settings": {
            # the model's file name: records are committed, another machine's path means nothing there
            "model": Path(str(getattr(runner, "path", ""))).name, "n_threads": getattr(runner, "n_threads", None),
            "n_ctx": getattr(runner, "n_ctx", None), "max_tokens": max_tokens, "limit": limit, "offset": offset, "seed": SEED,
            "sample_size": SAMPLE_SIZE, "suites": list(suites), "conditions": {c: CONDITIONS[c] for c in conditions},
            "max_thought_chars": knobs.max_thought_chars, "max_message_chars": knobs.max_message_chars,
            "max_calls": knobs.max_calls, "levers": levers or None,
            # records before this key existed routed with the reference knobs
            "router_knobs": router_knobs if "c" in conditions else None,
            "loadavg_1m_start": round(os.getloadavg()[0], 2),
        },
    }
    outcomes: list[Outcome] = []
    case_s: dict[str, dict[str, float]] = {s: {} for s in suites}
    if resume and out is not None and Path(out).exists():
        saved = _load(out)
        _check_comparable(record["settings"], saved.get("settings", {}), where=str(out))
        record["started"] = saved.get("started", record["started"])
        wanted = {(suite, q.id) for suite, q in plan}
        kept, kept_s = _saved_cases(saved, set(conditions))
        for (suite, case_id), rows in kept.items():
            if (suite, case_id) in wanted:
                outcomes.extend(rows)
                case_s[suite][case_id] = kept_s[(suite, case_id)]
        plan = [(suite, q) for suite, q in plan if q.id not in case_s[suite]]
        record["settings"]["resumed_cases"] = sum(len(v) for v in case_s.values())
    iterator: Any = plan
    if progress:
        from tqdm import tqdm

        iterator = tqdm(plan, desc="generation", file=sys.stderr, unit="case")
    for suite, query in iterator:
        started = time.perf_counter()
        outcomes.extend(run_case(runner, query, suite=suite, conditions=conditions, truth=truths[suite].get(query.id, []),
                                 router_for=router_for, knobs=knobs, max_tokens=max_tokens))
        case_s[suite][query.id] = time.perf_counter() - started
        _fill(record, outcomes, case_s)
        if out is not None:
            write_atomic(out, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    _fill(record, outcomes, case_s)
    record["settings"]["loadavg_1m_end"] = round(os.getloadavg()[0], 2)
    if out is not None:
        write_atomic(out, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return record


def _fill(record: dict[str, Any], outcomes: list[Outcome], case_s: Mapping[str, Mapping[str, float]]) -> None:
    every = [s for values in case_s.values() for s in values.values()]
    record["scores"] = score(outcomes)
    record["seconds_per_case"] = {
        **{suite: round(statistics.fmean(v.values()), 1) for suite, v in case_s.items() if v},
        "all": round(statistics.fmean(every), 1) if every else None,
        "cases": len(every), "total_s": round(sum(every), 1),
    }
    record["case_seconds"] = {suite: {k: round(v, 2) for k, v in values.items()} for suite, values in case_s.items()}
    record["cases"] = [{**asdict(o), "empty": o.empty} for o in outcomes]


#: Settings two runs must share to be resumed or merged: the same model, budget, order and
#: envelope bounds (thread count, limit and suites may differ).
COMPARABLE = ("max_tokens", "seed", "sample_size", "max_thought_chars", "max_message_chars", "max_calls", "levers",
              "router_knobs")


def _load(path: str | os.PathLike[str]) -> dict[str, Any]:
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read a saved run ({exc})", where=str(path)) from None
    if not isinstance(record, dict) or record.get("benchmark") != "generation" or not isinstance(record.get("cases"), list):
        raise DataError("not a generation benchmark record (no 'benchmark': 'generation' with 'cases')", where=str(path))
    return record


def _comparable(settings: Mapping[str, Any], key: str) -> Any:
    """``settings[key]`` as :data:`COMPARABLE` reads it: a record made before ``router_knobs`` was
    recorded routed condition c with the reference knobs."""
    if key == "router_knobs" and key not in settings:
        return "reference" if "c" in (settings.get("conditions") or {}) else None
    return settings.get(key)


def _check_comparable(ours: Mapping[str, Any], theirs: Mapping[str, Any], *, where: str) -> None:
    for key in COMPARABLE:
        mine, other = _comparable(ours, key), _comparable(theirs, key)
        if mine != other:
            raise DataError(f"was run with {key}={other!r}, this run has {key}={mine!r}", where=where)
    if Path(str(ours.get("model", ""))).name != Path(str(theirs.get("model", ""))).name:
        raise DataError(f"was run with model {Path(str(theirs.get('model', ''))).name!r}, this run has "
                        f"{Path(str(ours.get('model', ''))).name!r}", where=where)


def _outcome(case: Mapping[str, Any]) -> Outcome:
    fields = set(Outcome.__dataclass_fields__)
    return Outcome(**{k: tuple(v) if isinstance(v, list) else v for k, v in case.items() if k in fields})


def _saved_cases(record: Mapping[str, Any], conditions: set[str]) -> tuple[dict[tuple[str, str], list[Outcome]],
                                                                       dict[tuple[str, str], float]]:
    """Complete saved cases: (suite, id) -> outcomes of exactly ``conditions``, and wall seconds.

    A case missing a condition is dropped (rerun). Records written before ``case_seconds``
    existed give each case the sum of its runs' generation seconds (a lower bound of its wall time).
    """
    rows: dict[tuple[str, str], list[Outcome]] = {}
    for case in record["cases"]:
        outcome = _outcome(case)
        rows.setdefault((outcome.suite, outcome.id), []).append(outcome)
    wall = record.get("case_seconds") or {}
    kept, seconds = {}, {}
    for key, outcomes in rows.items():
        if {o.condition for o in outcomes} != conditions or len(outcomes) != len(conditions):
            continue
        kept[key] = outcomes
        seconds[key] = float(wall.get(key[0], {}).get(key[1], sum(o.seconds for o in outcomes)))
    return kept, seconds


def merge(paths: Sequence[str | os.PathLike[str]]) -> dict[str, Any]:
    """One record from several runs (e.g. one process per suite): cases pooled, scores recomputed.

    Raises
    ------
    DataError
        A file that is not a generation record, runs with different :data:`COMPARABLE` settings
        or conditions, or the same case in two files.
    """
    if not paths:
        raise DataError("nothing to merge", where="--merge")
    records = [(str(p), _load(p)) for p in paths]
    first_path, first = records[0]
    conditions = set(first["settings"].get("conditions", {}))
    outcomes: list[Outcome] = []
    case_s: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], str] = {}
    for path, record in records:
        _check_comparable(first["settings"], record.get("settings", {}), where=path)
        if set(record["settings"].get("conditions", {})) != conditions:
            raise DataError(f"has conditions {','.join(sorted(record['settings'].get('conditions', {})))}, "
                            f"{first_path} has {','.join(sorted(conditions))}", where=path)
        kept, kept_s = _saved_cases(record, conditions)
        for key, rows in kept.items():
            if key in seen:
                raise DataError(f"case {key[0]}/{key[1]} is also in {seen[key]}", where=path)
            seen[key] = path
            outcomes.extend(rows)
            case_s.setdefault(key[0], {})[key[1]] = kept_s[key]
    settings = dict(first["settings"])
    settings["suites"] = list(dict.fromkeys(s for _, r in records for s in r["settings"].get("suites", [])))
    # a record is committed: a run file outside the checkout is named, not given another machine's path
    settings["merged_from"] = [shown if not Path(shown).is_absolute() else Path(shown).name
                               for shown in (shown_path(p) for p, _ in records)]
    # a merged record holds a list already: merging it again flattens it
    threads = [r["settings"].get("n_threads") for _, r in records]
    settings["n_threads"] = sorted({t for x in threads for t in (x if isinstance(x, list) else [x])}, key=str)
    loads = [r["settings"].get(k) for _, r in records for k in ("loadavg_1m_start", "loadavg_1m_end")]
    settings["loadavg_1m_start"] = max((x for x in loads[0::2] if x is not None), default=None)
    settings["loadavg_1m_end"] = max((x for x in loads[1::2] if x is not None), default=None)
    merged: dict[str, Any] = {"benchmark": "generation", "started": min(r.get("started", "") for _, r in records),
                              "settings": settings}
    _fill(merged, outcomes, case_s)
    return merged


def rescore(record: Mapping[str, Any]) -> dict[str, Any]:
    """Recompute ``scores`` of a saved record from its ``cases`` (after a scoring change; no model)."""
    outcomes = [_outcome(case) for case in record.get("cases", [])]
    out = dict(record)
    out["scores"] = score(outcomes)
    out["cases"] = [{**asdict(o), "empty": o.empty} for o in outcomes]
    return out


def _pct(value: float | None) -> str:
    return "   -  " if value is None else f"{100 * value:5.1f}%"


def print_table(record: Mapping[str, Any]) -> None:
    """The record as a readable table (stdout)."""
    settings = record["settings"]
    print(f"model {Path(settings['model']).name}  threads {settings['n_threads']}  max_tokens {settings['max_tokens']}  "
          f"limit {settings['limit']}  seed {settings['seed']}  load {settings['loadavg_1m_start']} -> "
          f"{settings.get('loadavg_1m_end')}")
    print(f"{'suite':<14} {'cond':<4} {'n':>4} {'name acc':>8} {'AST acc':>8} {'call':>7} {'multi':>7} {'empty':>7} {'cut':>6} "
          f"{'offer':>6} {'prompt':>7} {'tok/s':>6} {'gram.share':>10} {'err':>4} {'skip':>4}")
    for suite, conditions in record["scores"]["suites"].items():
        for condition, row in conditions.items():
            print(f"{suite:<14} {condition:<4} {row['n']:>4} {_pct(row['name_accuracy']):>8} {_pct(row['ast_accuracy']):>8} "
                  f"{_pct(row['call_rate']):>7} {_pct(row['multi_call_rate']):>7} {_pct(row['empty_call_rate']):>7} {_pct(row['cut_call_rate']):>6} "
                  f"{row['mean_offer'] or 0:>6.1f} {row['mean_prompt_tokens'] or 0:>7.0f} "
                  f"{row['tokens_per_s_median'] or 0:>6.1f} {_pct(row['grammar_share']):>10} {row['errors']:>4} "
                  f"{row['skipped']:>4}")
    speed = record["scores"]["speed"]
    for key, label in (("no_grammar", "without grammar"), ("grammar", "with grammar")):
        row = speed[key]
        print(f"tokens/s {label:<16} median {row['tokens_per_s_median']}  pooled {row['tokens_per_s_pooled']}  "
              f"({row['runs']} runs, {row['tokens']} tokens)"
              + (f"  grammar share of generation time {_pct(row['grammar_share']).strip()}" if key == "grammar" else ""))
    per = record["seconds_per_case"]
    print("seconds per case (wall, all conditions): " + "  ".join(
        f"{k} {v}" for k, v in per.items() if k not in ("cases", "total_s")) + f"  ({per['cases']} cases, {per['total_s']} s)")


def compare(records: Mapping[str, Mapping[str, Any]], *, condition: str = "c") -> list[dict[str, Any]]:
    """An ablation table: one row per (record, suite) of ``condition``, scores recomputed from the cases.

    Parameters
    ----------
    records : mapping of label -> saved record
        E.g. ``{"baseline": ..., "bounded": ..., "all": ...}``, run on the same cases.

    Returns
    -------
    list of dict
        ``{"run", "levers", "suite", "n", "name_accuracy", "ast_accuracy", "empty_call_rate",
        "cut_call_rate", "tokens_per_call", "mean_prompt_tokens", "seconds_per_case"}``;
        ``seconds_per_case`` is the suite's mean wall time per case (every condition of the run).

    Raises
    ------
    DataError
        Two records that do not hold the same cases of a suite (not comparable).
    """
    rows, ids = [], {}
    for label, record in records.items():
        rescored = rescore(record)
        for suite, conditions in rescored["scores"]["suites"].items():
            case_ids = sorted(c["id"] for c in record["cases"] if c["suite"] == suite and c["condition"] == condition)
            if ids.setdefault(suite, (label, case_ids))[1] != case_ids:
                raise DataError(f"holds other {suite} cases than {ids[suite][0]}", where=label)
            row = conditions.get(condition)
            if row is None:
                continue
            rows.append({"run": label, "levers": record["settings"].get("levers"), "suite": suite, "n": row["n"],
                         **{k: row.get(k) for k in ("name_accuracy", "ast_accuracy", "empty_call_rate", "cut_call_rate",
                                                    "tokens_per_call", "mean_prompt_tokens")},
                         "seconds_per_case": record.get("seconds_per_case", {}).get(suite)})
    return rows


def replay_repair(record: Mapping[str, Any], *, condition: str = "c",
                  rules: Sequence[str] = RULES) -> dict[str, Any]:
    """Replay argument repair over a saved run's calls (no model): what each rule fixes and breaks.

    Every case of ``record`` under ``condition`` with a gold call is parsed again from its saved
    ``raw`` output; the first call is judged by :func:`match_call` as saved, then after each rule
    alone and after all of ``rules`` together (``repair.repair_arguments``).

    Returns
    -------
    dict
        ``rules`` -> suite -> ``{"changes", "asks", "cases_fixed", "cases_broken", "values_fixed",
        "values_broken", "ast_before", "ast_after", "calls"}``, with ``"all"`` for the rules
        together; ``changes`` lists every change with its case, argument, values and whether the
        value was right (among BFCL's accepted ones) before and after; ``reparse_mismatch`` counts
        cases whose saved AST verdict the re-parse of a raw output (cut at :data:`RAW_CHARS`)
        does not reproduce.
    """
    queries = {}
    truths = {}
    for suite in {c["suite"] for c in record["cases"]}:
        if BFCL_SUITES.get(bfcl_category(suite)) == "all":
            queries[suite] = {q.id: q for q in load_suite(bfcl_category(suite)).queries}
            truths[suite] = _answers(suite)
    runs = {rule: (rule,) for rule in rules}
    runs["all"] = tuple(rules)
    out: dict[str, Any] = {name: {} for name in runs}
    mismatch = 0
    for case in record["cases"]:
        suite = case["suite"]
        if case["condition"] != condition or suite not in queries:
            continue
        query = queries[suite][case["id"]]
        catalog = query.catalog
        parsed = parse_calls(case.get("raw", ""), catalog.names)
        truth = truths[suite].get(case["id"]) or [{}]
        for name in runs:
            out[name].setdefault(suite, {"calls": 0, "ast_before": 0, "ast_after": 0, "cases_fixed": 0,
                                         "cases_broken": 0, "values_fixed": 0, "values_broken": 0, "asks": 0,
                                         "changes": []})
        if not parsed.calls:
            continue
        first = parsed.calls[0]
        schema = catalog.tool(first.name).parameters if first.name in catalog else None
        before, _ = match_call(first.name, dict(first.arguments), truth[0], schema)
        mismatch += before != bool(case.get("ast_ok"))
        expected = truth[0].get(first.name, {})
        for name, chosen in runs.items():
            row = out[name][suite]
            arguments, repairs = repair_arguments(dict(first.arguments), schema, query.query, rules=chosen)
            after, _ = match_call(first.name, arguments, truth[0], schema)
            row["calls"] += 1
            row["ast_before"] += before
            row["ast_after"] += after
            row["cases_fixed"] += after and not before
            row["cases_broken"] += before and not after
            row["asks"] += sum(1 for r in repairs if r.status == "ask")
            for argument in dict.fromkeys(r.argument for r in repairs if r.changed):  # argument order: stable records
                accepted = _accepted_list(expected.get(argument, []))
                right_before = argument in expected and (value_matches(first.arguments[argument], accepted)
                                                         if argument in first.arguments else "" in accepted)  # left out
                right_after = argument in expected and (value_matches(arguments[argument], accepted)
                                                        if argument in arguments else "" in accepted)  # dropped
                row["values_fixed"] += right_after and not right_before
                row["values_broken"] += right_before and not right_after
                row["changes"].append({"id": case["id"], "tool": first.name, "argument": argument,
                                       "rules": [r.rule for r in repairs if r.changed and r.argument == argument],
                                       "before": first.arguments.get(argument), "after": arguments.get(argument),
                                       "right_before": right_before, "right_after": right_after,
                                       "call_before": before, "call_after": after})
    return {"condition": condition, "rules": out, "reparse_mismatch": mismatch}


def print_replay(replay: Mapping[str, Any]) -> None:
    """The per-rule table of :func:`replay_repair`: calls, AST before -> after, cases and values fixed/broken."""
    print(f"{'rules':<8} {'suite':<14} {'calls':>5} {'AST before':>10} {'after':>6} {'fixed':>6} {'broken':>6} "
          f"{'v.fixed':>7} {'v.broken':>8} {'changes':>7} {'asks':>5}")
    for name, suites in replay["rules"].items():
        for suite, row in suites.items():
            print(f"{name:<8} {suite:<14} {row['calls']:>5} {row['ast_before']:>10} {row['ast_after']:>6} "
                  f"{row['cases_fixed']:>6} {row['cases_broken']:>6} {row['values_fixed']:>7} {row['values_broken']:>8} "
                  f"{len(row['changes']):>7} {row['asks']:>5}")
    print(f"re-parse mismatches (raw cut at {RAW_CHARS} characters): {replay['reparse_mismatch']}")


def _save_and_print(record: Mapping[str, Any], path: str | os.PathLike[str], done: str) -> None:
    """Write ``record`` atomically to ``path``, print its table and the ``done`` line."""
    write_atomic(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print_table(record)
    print(done)


def main(argv: Sequence[str] | None = None) -> int:
    """``eris-lab bench generation``: run, print the table, write the JSON (bad input raises ``DataError``)."""
    from ..cli import Parser

    parser = Parser(prog="eris-lab bench generation", description=__doc__.splitlines()[0])
    parser.add_argument("--suites", nargs="+", default=list(SUITES), choices=ALL_SUITES,
                        help="default: " + " ".join(SUITES) + "; live_multiple-holdout: the next 200 live_multiple "
                             "cases, held out from the repair rules")
    parser.add_argument("--conditions", default=",".join(CONDITIONS),
                        help="comma-separated, from a (no grammar), b (grammar), c (router + grammar); default a,b,c")
    parser.add_argument("--limit", type=int, help="cases per suite (first of each suite's fixed order)")
    parser.add_argument("--offset", type=int, default=0,
                        help="skip the first N of those cases (a second process on a suite's tail; --merge pools them)")
    parser.add_argument("--model", help="a GGUF file (default: the bundled Gemma 3 270M Q4_K_M)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads, pinned (default 1)")
    parser.add_argument("--chat-format", choices=("auto", "plain", "functiongemma"), default="auto",
                        help="how messages become the prompt: auto (FunctionGemma's format for its GGUF, else the "
                             "GGUF's template, else plain), plain, functiongemma (default auto)")
    parser.add_argument("--max-tokens", type=int, default=MAX_TOKENS)
    parser.add_argument("--out", help="JSON file (default reports/generation-<UTC time>.json)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--router-knobs", choices=ROUTER_KNOBS, default="calibrated",
                        help="condition c's router: calibrated per case without labels (the default of route, eval "
                             "and generate; its relevance gate may offer nothing) or reference (DESIGN.md's values)")
    parser.add_argument("--levers", default="", metavar="L,M|all",
                        help="issue 17 generation levers: bounded, compact, calls-first or minimal, repair, few-shot, "
                             "retry-cut, router-picks; all = bounded,compact,calls-first,repair,retry-cut,router-picks "
                             "(default none: the reference grammar and prompt)")
    parser.add_argument("--rescore", metavar="FILE", help="recompute the scores of a saved run (no model) and rewrite it")
    parser.add_argument("--resume", action="store_true",
                        help="keep the cases --out already holds (an interrupted run) and run only the rest")
    parser.add_argument("--compare", nargs="+", metavar="LABEL=FILE",
                        help="print an ablation table of saved runs of the same cases (condition c; no model)")
    parser.add_argument("--merge", nargs="+", metavar="FILE",
                        help="pool saved runs (e.g. one per suite) into --out (no model)")
    parser.add_argument("--replay-repair", metavar="FILE",
                        help="replay argument repair over a saved run's condition c calls, per rule (no model)")
    args = parser.parse_args(argv)
    if args.replay_repair:
        replay = replay_repair(_load(args.replay_repair))
        source = Path(args.replay_repair).resolve()
        try:  # a committed record names its source relative to the checkout, never by an absolute path
            shown = source.relative_to(repo_root()).as_posix()
        except ValueError:
            shown = source.name
        replay = {"benchmark": "generation-repair-replay", "record": shown,
                  "default_rules": list(DEFAULT_RULES), **replay}
        if args.out:
            write_atomic(args.out, json.dumps(replay, indent=1, ensure_ascii=False) + "\n")
        print_replay(replay)
        return 0
    if args.compare:
        records = {}
        for item in args.compare:
            label, sep, path = item.partition("=")
            if not sep or not label or not path:
                raise DataError(f"expected LABEL=FILE, got {item!r}", where="--compare")
            records[label] = _load(path)
        rows = compare(records)
        if args.out:
            write_atomic(args.out, json.dumps(rows, indent=1) + "\n")
        print(f"{'run':<24} {'suite':<14} {'n':>3} {'name':>7} {'AST':>7} {'empty':>7} {'cut':>7} {'tok/call':>8} "
              f"{'prompt':>7} {'s/case':>7}")
        for r in rows:
            print(f"{r['run']:<24} {r['suite']:<14} {r['n']:>3} {_pct(r['name_accuracy']):>7} {_pct(r['ast_accuracy']):>7} "
                  f"{_pct(r['empty_call_rate']):>7} {_pct(r['cut_call_rate']):>7} {r['tokens_per_call'] or 0:>8.1f} "
                  f"{r['mean_prompt_tokens'] or 0:>7.0f} {r['seconds_per_case'] or 0:>7.1f}")
        return 0
    if args.merge:
        if not args.out:
            raise DataError("give --out FILE for the merged record", where="--merge")
        record = merge(args.merge)
        _save_and_print(record, args.out, f"merged {len(args.merge)} runs into {args.out}")
        return 0
    if args.rescore:
        try:
            record = rescore(json.loads(Path(args.rescore).read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError) as exc:
            raise DataError(f"cannot rescore ({exc})", where=args.rescore) from None
        _save_and_print(record, args.rescore, f"rescored {args.rescore}")
        return 0
    conditions = tuple(c.strip() for c in args.conditions.split(",") if c.strip())
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = Path(args.out) if args.out else repo_root() / "reports" / f"generation-{stamp}.json"
    if args.limit is not None and args.limit < 1:
        raise DataError(f"expected an integer >= 1, got {args.limit!r}", where="--limit")
    if args.max_tokens < 1:
        raise DataError(f"expected an integer >= 1, got {args.max_tokens!r}", where="--max-tokens")
    levers = parse_levers(args.levers)
    from ..llm import LlamaRunner

    runner = LlamaRunner(args.model, n_threads=args.threads, n_ctx=N_CTX, chat_template=args.chat_format)
    record = bench(runner, suites=args.suites, conditions=conditions, limit=args.limit,
                   max_tokens=args.max_tokens, out=out, progress=not args.quiet, resume=args.resume,
                   offset=args.offset, levers=levers, router_knobs=args.router_knobs)
    print_table(record)
    print(f"wrote {out}")
    return 0

