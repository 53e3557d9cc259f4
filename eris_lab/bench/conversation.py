"""Routing BFCL conversations: every gold tool of a turn offered, side by side (issue 15).

One run over ``multi_turn_base``, ``multi_turn_miss_func`` and ``multi_turn_long_context``:
dense top-k, the reference policy, the calibrated policy with every lever (declared, schema and
dataflow companions, dialog memory, tools added back first), the last stop's default
(``policy-2026-11-30``) and each lever added to it alone, the same with learned companions
(cross-fitted on the other fold of API classes, ``eval.conversation.FOLDS``), and the calibrated
policy without companions and without memory. Each message is scored once per catalogue and knobs
(``EmbeddingPolicy.scored``); the calibrated variants re-decide from the same scores, so they
differ only in what they add. Per suite also: why the misses miss (``miss_causes``), the best
recall any offer size reaches at a mean of 8 (``size_bound``, a bound) and a per-turn offer size
cross-fitted on the other fold (:func:`_size_lever`).

Run: ``eris-lab bench conversation [--suites A,B] [--limit N] [--out FILE]`` (prints the table,
then the JSON; about 80 seconds on 2 busy CPU cores with vectors and calibrations cached, about
10 minutes cold).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from .._files import write_atomic

__all__ = ["VARIANTS", "run_conversations", "format_table", "main"]

#: Row name -> (strategy spec, parameters laid over the calibrated policy). ``None``: its own run.
#: ``policy`` has every lever on; ``policy-2026-11-30`` is the last stop's default (declared and
#: schema companions, memory), and each ``+lever`` row adds one lever to it alone.
VARIANTS: dict[str, tuple[str, dict[str, Any]] | None] = {
    "dense:k=5": None,
    "dense:k=8": None,
    "policy-reference": None,
    "policy": ("policy", {}),
    "policy-2026-11-30": ("policy", {"companions": "declared,schema", "added": False}),
    "+dataflow": ("policy", {"companions": "declared,schema,dataflow", "added": False}),
    "+added": ("policy", {"companions": "declared,schema", "added": True}),
    "policy+learned": ("policy", {"companions": "declared,schema,dataflow,learned"}),
    "policy-no-companions": ("policy", {"companions": ""}),
    "policy-no-memory": ("policy", {"memory": False}),
    "policy-no-slots": ("policy", {"slot_check": "off"}),
}
COLUMNS = ("n", "recall", "mean_offer", "full_roster_rate", "returned_function_recall", "returned_recall", "other_recall", "follow_up_recall", "switch_recall",
           "switch_memory_share", "companion_hit_rate", "memory_hit_rate")


def _prime(memo, suite) -> None:
    """Embed in batches every text the router will score: messages, their clauses and sentence
    parts, previous + message."""
    from ..guard import clauses, clean_text, sentence_parts
    from ..router import previous_user_text

    texts = []
    for q in suite.queries:
        clean = clean_text(q.query, 4000)
        texts.append(clean)
        texts.extend(clauses(clean))
        texts.extend(sentence_parts(clean))
        previous = previous_user_text(q.history)
        if previous:
            texts.append(f"{previous} {clean}")
    memo.prime(texts)


def _calibrated_runs(suite, memo, learned, progress: bool) -> dict[str, list]:
    """One scoring pass of the calibrated policy, re-decided for each calibrated variant."""
    from ..eval.harness import result_of
    from ..eval.metrics import ToolTokens
    from ..strategies import EmbeddingPolicy
    from ..strategies.base import Context

    tokens = ToolTokens()
    variants = {name: params for name, spec in VARIANTS.items() if spec is not None for params in [spec[1]]}
    out: dict[str, list] = {name: [] for name in variants}
    policy = EmbeddingPolicy(embedder=memo, learned=learned, companions="declared,schema,dataflow,learned")
    default = EmbeddingPolicy()
    fitted = None
    tables: dict[tuple[int, str], dict] = {}
    for i, q in enumerate(suite.queries):
        catalog = suite.catalog_of(q)
        if fitted is not catalog:
            policy.fit(catalog)
            fitted = catalog
        scored = policy.scored(q.query, Context(history=q.history))
        for name, params in variants.items():
            policy.memory = params.get("memory", default.memory)
            policy.added = params.get("added", default.added)
            source = params.get("companions", default.companions)
            key = (id(catalog), source)
            if key not in tables:
                policy.companions = source
                tables[key] = policy.companion_table()
            policy.companions_ = tables[key]
            knobs = policy.knobs_.replace(slot_check=params["slot_check"]) if "slot_check" in params else None
            routed = policy.decide_scored(scored, knobs)
            offer = routed.offer
            out[name].append(result_of(q, routed, offer_tokens=tokens.of(catalog, offer.names),
                                       catalog_tokens=tokens.catalog(catalog)))
        if progress and i % 100 == 0:
            print(f"  {suite.name}: {i}/{len(suite.queries)}", file=sys.stderr)
    return out


def _size_lever(suite, memo, results) -> dict[str, Any]:
    """A per-turn offer size fitted on the other fold's conversations, judged on this fold's (issue 15).

    For each fold of ``FOLDS``: on the turns of conversations whose API classes all lie in it, the
    calibrated policy's rankings (``results``, the ``policy`` row) fit the margin and cap of
    ``eval.conversation.size_bound`` at a mean of 8 tools less the companions the policy added
    there; the other fold's turns are then re-decided with ``subset_margin`` and ``widen_k`` set
    to them. Conversations over classes of both folds have no fold that never saw them: they are
    left out, and the calibrated policy is reported on the same turns.
    """
    from ..eval.conversation import added_by, fold_of, size_bound
    from ..eval.metrics import rate
    from ..strategies import EmbeddingPolicy
    from ..strategies.base import Context

    folds = [fold_of(q) for q in suite.queries]
    fitted: dict[int, dict[str, Any]] = {}
    for i in (0, 1):
        own = [r for r, f in zip(results, folds) if f == i and r.expect == "all"]
        companions = sum(len(added_by(r, "companion")) for r in own) / max(len(own), 1)
        fitted[i] = {**size_bound(own, 8.0 - companions), "budget": round(8.0 - companions, 3), "n": len(own)}
    policy = EmbeddingPolicy(embedder=memo)
    judged, baseline, catalog = [], [], None
    for q, fold, base in zip(suite.queries, folds, results):
        if fold is None or q.expect != "all" or fitted[1 - fold]["margin"] is None:
            continue
        if catalog is not suite.catalog_of(q):
            catalog = suite.catalog_of(q)
            policy.fit(catalog)
        knobs = policy.knobs_.replace(subset_margin=fitted[1 - fold]["margin"], widen_k=fitted[1 - fold]["cap"])
        offer = policy.decide_scored(policy.scored(q.query, Context(history=q.history)), knobs).offer
        judged.append((all(g in offer.names for g in q.gold), len(offer.names)))
        baseline.append((base.recalled, len(base.offered)))

    def summary(pairs):
        return {"n": len(pairs), "recall": rate([p[0] for p in pairs]),
                "mean_offer": round(sum(p[1] for p in pairs) / len(pairs), 3) if pairs else None}

    return {"fitted_on_fold": {str(i): fitted[i] for i in fitted}, "cross_fitted": summary(judged),
            "policy_same_turns": summary(baseline)}


def run_conversations(suites=("multi_turn_base", "multi_turn_miss_func", "multi_turn_long_context"), *,
                      limit: int | None = None, progress: bool = True) -> dict[str, Any]:
    """Every row of :data:`VARIANTS` on every suite; the record written to docs/results.

    Returns
    -------
    dict
        ``{"suites": {suite: {"rows": {variant: {COLUMNS..., "recall_at", "seconds"}}, "notes",
        "size_bound_at_8", "size_lever", "misses"}}, "folds", "seconds"}``; ``size_lever``:
        :func:`_size_lever`; ``misses``: ``eval.conversation.miss_causes``
        of the last stop's default and of today's; ``size_bound_at_8`` is
        ``eval.conversation.size_bound`` of the calibrated policy's rankings (a bound, chosen on
        the reported turns).
    """
    from ..embed import default_embedder
    from ..eval.conversation import (
        FOLDS,
        CrossFitted,
        conversation_metrics,
        miss_causes,
        size_bound,
    )
    from ..eval.datasets import load_suite
    from ..eval.harness import run, shared_embedder
    from ..eval.metrics import evaluate
    from ..strategies import make

    start = time.perf_counter()
    memo = shared_embedder(default_embedder())
    learned = CrossFitted.fit(memo)
    record: dict[str, Any] = {"suites": {}, "folds": [list(f) for f in FOLDS], "embedding_model": memo.model_id,
                              "learned_weights": [m.weights_ for m in learned.models]}
    for name in suites:
        suite = load_suite(name, limit=limit)
        _prime(memo, suite)
        rows: dict[str, Any] = {}
        results_by = {}
        for variant, spec in VARIANTS.items():
            if spec is None:
                t = time.perf_counter()
                results_by[variant] = (run(make(variant, embedder=memo), suite, progress=progress),
                                       time.perf_counter() - t)
        t = time.perf_counter()
        calibrated = _calibrated_runs(suite, memo, learned, progress)
        seconds = time.perf_counter() - t
        for variant in calibrated:
            results_by[variant] = (calibrated[variant], seconds)
        for variant in VARIANTS:
            results, secs = results_by[variant]
            rec = evaluate(results, suite=name, strategy=variant)
            rec.update(conversation_metrics(results))
            rows[variant] = {**{c: rec.get(c) for c in COLUMNS}, "recall_at": rec["recall_at"],
                             "seconds": round(secs, 1)}
        record["suites"][name] = {"notes": suite.notes, "rows": rows,
                                  "size_lever": _size_lever(suite, memo, results_by["policy"][0]),
                                  "size_bound_at_8": size_bound(results_by["policy"][0], 8.0),
                                  "misses": {v: miss_causes(results_by[v][0], suite.queries)
                                             for v in ("policy-2026-11-30", "policy")}}
        print(format_table(name, rows), file=sys.stderr)
        print(f"  offer-size bound at a mean of 8: {record['suites'][name]['size_bound_at_8']}", file=sys.stderr)
        print(f"  misses: {record['suites'][name]['misses']}", file=sys.stderr)
        print(f"  per-turn size cross-fitted: {record['suites'][name]['size_lever']}", file=sys.stderr)
    record["seconds"] = round(time.perf_counter() - start, 1)
    return record


def format_table(suite: str, rows: dict[str, dict[str, Any]]) -> str:
    """One suite's rows as a Markdown table (docs/conversations.md's)."""
    from ..eval.metrics import format_value

    head = "| " + suite + " | " + " | ".join(COLUMNS) + " |"
    lines = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    for variant, row in rows.items():
        lines.append(f"| {variant} | " + " | ".join(format_value(row.get(c), c) for c in COLUMNS) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    """``eris-lab bench conversation``: print the tables, then the JSON (``--out``: also write it)."""
    from ..cli import Parser

    parser = Parser(prog="eris-lab bench conversation", description=__doc__.splitlines()[0])
    parser.add_argument("--suites", default="multi_turn_base,multi_turn_miss_func,multi_turn_long_context",
                        help="comma-separated multi-turn suites")
    parser.add_argument("--limit", type=int, help="first N turns of each suite")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args(argv)
    record = run_conversations(tuple(s.strip() for s in args.suites.split(",") if s.strip()), limit=args.limit)
    text = json.dumps(record, indent=2)
    for name, entry in record["suites"].items():
        print(format_table(name, entry["rows"]))
        print()
    if args.out:
        write_atomic(Path(args.out), text)
    else:
        print(text)
    return 0
