"""Benchmark: every strategy on every suite in one run (a benchmark, not a test).

``python -m eris_lab.bench strategies [--suites ...] [--strategies ...] [--limit N] [--out FILE]``
prints one table and writes the JSON atomically (default ``reports/bench-<UTC time>.json``,
git-ignored). One shared :class:`~eris_lab.strategies.MemoEmbedder` embeds every distinct text
once for the whole run. The ``goals`` section sets plain cosine (``dense``) and BM25 beside the
numbers quoted in issue 4: top-1 on ``live_multiple`` per-case catalogues, and recall@1/5/10 on
``bfcl-pooled``. A suite that cannot be loaded (the demo set before it lands) is reported under
``skipped`` with the reason, never dropped silently.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from .._files import repo_root, write_atomic
from ..errors import ErisLabError
from ..eval.datasets import SUITES, load_suite
from ..eval.harness import prime, run, shared_embedder
from ..eval.metrics import METRICS, evaluate, format_value

__all__ = ["main", "bench", "DEFAULT_SUITES", "DEFAULT_STRATEGIES", "GOALS"]

DEFAULT_SUITES = ("demo", "multiple", "live_multiple", "irrelevance", "live_irrelevance", "live_relevance",
                  "bfcl-pooled")
DEFAULT_STRATEGIES = ("keyword", "bm25", "dense", "dense:k=8", "dense:query_prefix=query: ", "hybrid-rrf",
                      "hybrid-weighted", "policy", "policy-reference", "policy-abstain", "toolkit")
#: Numbers measured before this work (issue 4, "Goals to report against").
GOALS = {
    "live_multiple top1, plain MiniLM cosine": 0.891,
    "live_multiple top1, BM25": 0.685,
    "live_multiple, Qwen3-0.6B choosing by itself": 0.561,
    "bfcl-pooled recall@1, plain cosine (937 tools)": 0.714,
    "bfcl-pooled recall@5, plain cosine (937 tools)": 0.869,
    "bfcl-pooled recall@10, plain cosine (937 tools)": 0.915,
}
MISROUTED_KEPT = 25  # misrouted queries kept per row in the JSON (the count is always complete)


def bench(suites: Sequence[str] = DEFAULT_SUITES, strategies: Sequence[str] = DEFAULT_STRATEGIES, *,
          limit: int | None = None, catalog: str | None = None, embedders: Sequence[str] = ("minilm",),
          checkpoint: Path | None = None, progress: bool = True) -> dict[str, Any]:
    """Run every strategy on every suite (embedding strategies once per embedder).

    Returns ``{"rows", "goals", "skipped", "errors", ...}``; a row's ``strategy`` carries
    ``@<embedder>`` for every embedder after the first. A strategy that raises on a suite is
    listed under ``errors`` (with the message) and the run goes on. With ``checkpoint``, the
    report so far is written there (atomically) after every suite.
    """
    from ..eval.embedders import make_embedder
    from ..strategies import make

    memos = {name: shared_embedder(make_embedder(name)) for name in embedders}
    memo = memos[embedders[0]]
    rows: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    errors: list[dict[str, str]] = []
    started = time.perf_counter()
    for name in suites:
        try:
            suite = load_suite(name, limit=limit, catalog=catalog if name.startswith("demo") or name.endswith(".jsonl") else None)
        except ErisLabError as exc:
            skipped[name] = str(exc)
            print(f"skipped {name}: {exc}", file=sys.stderr)
            continue
        for e_name, e_memo in memos.items():
            built = [(spec, make(spec, embedder=e_memo)) for spec in strategies]
            if e_name != embedders[0]:
                built = [(f"{spec}@{e_name}", s) for spec, s in built if s.uses_embedder]
            rows.extend(_run_suite(suite, built, e_memo, progress, errors))
        if checkpoint is not None:
            write_atomic(checkpoint, json.dumps({"partial": True, "rows": rows, "skipped": skipped, "errors": errors},
                                                indent=1, ensure_ascii=False) + "\n")
    by = {(r["suite"], r["strategy"]): r for r in rows}

    def get(suite: str, strategy: str, key: str, sub: str | None = None):
        r = by.get((suite, strategy))
        if r is None:
            return None
        return r[key][sub] if sub else r[key]

    measured = {
        "live_multiple top1, plain MiniLM cosine": get("live_multiple", "dense", "top1"),
        "live_multiple top1, BM25": get("live_multiple", "bm25", "top1"),
        "live_multiple, Qwen3-0.6B choosing by itself": None,
        "bfcl-pooled recall@1, plain cosine (937 tools)": get("bfcl-pooled", "dense", "recall_at", "1"),
        "bfcl-pooled recall@5, plain cosine (937 tools)": get("bfcl-pooled", "dense", "recall_at", "5"),
        "bfcl-pooled recall@10, plain cosine (937 tools)": get("bfcl-pooled", "dense", "recall_at", "10"),
    }
    by_name = {f"bfcl-pooled name_recall@{k}, plain cosine": get("bfcl-pooled", "dense", "name_recall_at", k)
               for k in ("1", "5", "10")}
    best = {}
    for suite in dict.fromkeys(r["suite"] for r in rows):
        candidates = [r for r in rows if r["suite"] == suite and r["top1"] is not None]
        if candidates:
            top = max(candidates, key=lambda r: r["top1"])
            best[suite] = {"best_top1": top["top1"], "strategy": top["strategy"],
                           "best_recall_at_1": max((r["recall_at"]["1"] or 0) for r in candidates)}
    return {
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "embedding_model": memo.model_id,
        "embedders": {name: m.model_id for name, m in memos.items()},
        "limit": limit,
        "suites": list(suites),
        "strategies": list(strategies),
        "seconds": round(time.perf_counter() - started, 1),
        "goals": {k: {"reference": GOALS[k], "measured": measured[k]} for k in GOALS},
        "pooled_by_name": by_name,
        "best": best,
        "skipped": skipped,
        "errors": errors,
        "rows": rows,
    }


def _run_suite(suite, built, memo, progress: bool, errors: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Rows of one suite: prime the embedder once, then run each (label, strategy)."""
    t0 = time.perf_counter()
    prime(memo, suite, tuple(dict.fromkeys(getattr(s, "query_prefix", "") for _, s in built if s.uses_embedder)))
    embed_s = time.perf_counter() - t0
    rows = []
    for label, strategy in built:
        t0 = time.perf_counter()
        try:
            results = run(strategy, suite, progress=progress)
        except Exception as exc:  # a benchmark reports a broken strategy and carries on
            errors.append({"suite": suite.name, "strategy": label, "error": f"{type(exc).__name__}: {exc}"})
            print(f"error: {label} on {suite.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        record = evaluate(results, suite=suite.name, strategy=label)
        record["seconds"] = round(time.perf_counter() - t0, 2)
        record["embed_seconds_suite"] = round(embed_s, 2)
        record["n_misrouted"] = len(record["misrouted"])
        record["misrouted"] = record["misrouted"][:MISROUTED_KEPT]
        record["notes"] = suite.notes
        promised = (getattr(strategy, "knobs_", None) and strategy.knobs_.notes.get("calibration", {})
                    .get("promised_coverage"))
        if promised and suite.catalog is not None:  # one calibration for the suite: its promise is stated
            record["promised_coverage"] = promised
        rows.append(record)
        if progress:
            print(_row_line(record), file=sys.stderr)
    return rows


#: The table's metric columns: every number of eval.metrics.METRICS after ``n``, recall@k between
#: the rates and the token counts (their widths: 7 for rates, 8 for tokens).
_RATE_COLUMNS = tuple(m for m in METRICS[1:] if m.fmt != ".0f")
_TOKEN_COLUMNS = tuple(m for m in METRICS[1:] if m.fmt == ".0f")


def _row_line(r: dict[str, Any]) -> str:
    return (f"{r['suite']:<16} {r['strategy']:<26} {r['n']:>5} "
            + " ".join(f"{format_value(r[m.name], m.name):>7}" for m in _RATE_COLUMNS)
            + " " + " ".join(f"{format_value(r['recall_at'][k]):>6}" for k in ("1", "5", "10"))
            + " " + " ".join(f"{format_value(r[m.name], m.name):>8}" for m in _TOKEN_COLUMNS) + f" {r['seconds']:>6.1f}")


def format_table(report: dict[str, Any]) -> str:
    """The benchmark as a fixed-width table, then goals and skipped suites."""
    head = (f"{'suite':<16} {'strategy':<26} {'n':>5} " + " ".join(f"{m.short:>7}" for m in _RATE_COLUMNS)
            + " " + " ".join(f"{h:>6}" for h in ("r@1", "r@5", "r@10"))
            + " " + " ".join(f"{m.short:>8}" for m in _TOKEN_COLUMNS) + f" {'sec':>6}")
    lines = [head, "-" * len(head)] + [_row_line(r) for r in report["rows"]]
    lines += ["", "goals (issue 4)          reference  measured"]
    for k, v in report["goals"].items():
        lines.append(f"  {k:<50} {format_value(v['reference']):>7} {format_value(v['measured']):>9}")
    for k, v in report.get("pooled_by_name", {}).items():
        lines.append(f"  {k:<50} {'':>7} {format_value(v):>9}")
    promised = [r for r in report["rows"] if r.get("promised_coverage") and r.get("recall") is not None]
    if promised:
        lines += ["", "coverage of the calibrated offers (label-free; promised for messages like the pseudo-queries)"]
        for r in promised:
            # where one name has several schemas the promise counts any variant (calibration.name_variants)
            observed = r.get("name_recall", r["recall"])
            gap = observed - r["promised_coverage"]
            lines.append(f"  {r['suite']:<16} {r['strategy']:<26} promised {r['promised_coverage']:.3f}  "
                         f"observed {observed:.3f}  ({gap:+.3f})"
                         + (f"  by name; strictly {r['recall']:.3f}" if "name_recall" in r else ""))
    for name, reason in report["skipped"].items():
        lines.append(f"skipped {name}: {reason}")
    for e in report["errors"]:
        lines.append(f"error {e['strategy']} on {e['suite']}: {e['error']}")
    lines.append(f"model {report['embedding_model']}; {report['seconds']} s")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``eris-lab bench strategies``: run, print the table, write the JSON."""
    from ..cli import Parser

    parser = Parser(prog="eris-lab bench strategies", description=__doc__.split("\n")[0])
    parser.add_argument("--suites", nargs="+", default=list(DEFAULT_SUITES), help=f"default: {' '.join(DEFAULT_SUITES)}")
    parser.add_argument("--strategies", nargs="+", default=list(DEFAULT_STRATEGIES))
    parser.add_argument("--limit", type=int, help="first N queries of each suite (a quick run)")
    parser.add_argument("--embedders", nargs="+", default=["minilm"],
                        help="minilm, use-multilingual (embedding strategies run once per embedder)")
    parser.add_argument("--catalog", help="catalogue for demo suites and files (default descriptors/)")
    parser.add_argument("--out", help="JSON file (default reports/bench-<UTC time>.json)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    unknown = [s for s in args.suites if s not in SUITES and not s.endswith(".jsonl")]
    if unknown:
        raise ErisLabError(f"unknown suite {unknown[0]!r}; expected one of {', '.join(SUITES)}", where="--suites")
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else repo_root() / "reports" / f"bench-{stamp}.json"
    report = bench(args.suites, args.strategies, limit=args.limit, catalog=args.catalog,
                   embedders=args.embedders, checkpoint=out, progress=not args.quiet)
    write_atomic(out, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(format_table(report))
    print(f"wrote {out}")
    return 0

