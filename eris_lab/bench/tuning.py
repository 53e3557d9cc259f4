"""The tuning view's redraw time under a slider drag.

Notebook 02's tuning view under a simulated slider drag (:data:`DRAG`) on the demo and pooled
BFCL suites: the one-off scoring, then p50/p95 per redraw of re-deciding + metrics, the curve,
rendering, and the total; embedder calls counted before and after (a drag embeds nothing).
``--baseline`` also times the reference path (the algorithm before the fast path) on the same
drag, in the same process.

Run: ``eris-lab bench tuning [--help]``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from .._files import write_atomic
from ..embed import share_identity
from ._stats import p50_p95

__all__ = ["tuning_bench", "DRAG", "START", "main"]


#: The simulated slider drag of ``tuning``, from the default knobs (0.50, 0.58, 0.05, policy):
#: 20 threshold steps down (lower thresholds keep more hits: the dearer decisions), 5 floor and
#: 5 margin steps, then every strategy. Each entry is one debounced redraw.
DRAG: tuple[tuple[float, float, float, str], ...] = (
    tuple((round(0.49 - 0.01 * i, 2), 0.58, 0.05, "policy") for i in range(20))
    + tuple((0.30, round(0.59 + 0.01 * i, 2), 0.05, "policy") for i in range(5))
    + tuple((0.30, 0.63, round(0.055 + 0.005 * i, 3), "policy") for i in range(5))
    + tuple((0.30, 0.63, 0.075, s) for s in ("policy-cluster", "policy-abstain", "dense", "policy"))
)
START = (0.50, 0.58, 0.05, "policy")  # the knobs of the first (cold) view


class _Counting:
    """An embedder view that counts calls and texts (the model behind the memo, or the memo)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        share_identity(self, inner)  # keys its cached vectors as the embedder's (embed.vector_key)
        self.calls = 0
        self.texts = 0

    def embed(self, texts):
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)


def _count_calls(obj, methods) -> dict[str, int]:
    """Count calls of ``obj``'s ``methods`` (instance attributes shadow them; every holder of ``obj`` counts)."""
    counter = {"calls": 0}
    for name in methods:
        method = getattr(obj, name)

        def counted(*args, _method=method, **kwargs):
            counter["calls"] += 1
            return _method(*args, **kwargs)

        setattr(obj, name, counted)
    return counter


def _redraw(workbench, bench, knobs, reference: bool) -> dict[str, float]:
    """One redraw as the panel does it: view, then the tables and the figure as ``viz.show`` publishes it (ms)."""
    start = time.perf_counter()
    v = workbench.view(bench, *knobs, reference=reference)
    viewed = time.perf_counter()
    _table, fig, _misrouted = workbench.render(bench, v)
    fig.to_html(full_html=False, include_plotlyjs=False), fig.to_plotly_json()  # what viz.show sends
    end = time.perf_counter()
    return {"decide": v.timings_ms["decide"], "curve": v.timings_ms["curve"], "render": (end - viewed) * 1000,
            "total": (end - start) * 1000}


def _drag(workbench, bench, passes: int, reference: bool) -> dict:
    """``passes`` times: forget the memos, a cold first view at :data:`START`, then :data:`DRAG`."""
    first: list[dict[str, float]] = []
    moves: dict[str, list[float]] = {"decide": [], "curve": [], "render": [], "total": []}
    for _ in range(passes):
        bench.clear_caches()
        first.append(_redraw(workbench, bench, START, reference))
        for knobs in DRAG:
            for key, ms in _redraw(workbench, bench, knobs, reference).items():
                moves[key].append(ms)
    out = {"redraws": len(moves["total"]),
           "first_view_ms": {k: round(float(np.median([f[k] for f in first])), 2) for k in first[0]}}
    for key, values in moves.items():
        p50, p95 = p50_p95(values)
        out[f"{key}_p50_ms"], out[f"{key}_p95_ms"] = round(p50, 2), round(p95, 2)
    out["max_total_ms"] = round(max(moves["total"]), 2)
    return out


def tuning_bench(suites=("demo", "bfcl-pooled"), repeats: int = 3, baseline: bool = False, embedder=None,
                 limit: int | None = None) -> dict:
    """Time notebook 02's tuning view under a slider drag, per suite.

    Parameters
    ----------
    suites : sequence of str
        Suite names with one shared catalogue (``load_suite``).
    repeats : int
        Passes over :data:`DRAG`, each after ``Workbench.clear_caches`` (no pass profits from
        the one before).
    baseline : bool
        Also one pass with ``view(..., reference=True)`` (every query re-decided at every curve
        threshold, ``evaluate``): the algorithm before the fast path, in the same process.
    embedder : Embedder, optional
        Default: the bundled MiniLM (its disk vector cache makes a second run embed nothing).
    limit : int, optional
        At most this many queries per suite (``load_suite``'s ``limit``).

    Returns
    -------
    dict
        ``{"suites": [{"suite", "n_queries", "n_tools", "one_off_s", "embedder", "fast",
        "baseline"?, "speedup"?}], "drag": len(DRAG), "repeats"}``; times in ms unless ``_s``.
        ``embedder`` counts model calls and texts during the build and during the drag (0).
    """
    from ..embed import default_embedder
    from ..eval.datasets import load_suite
    from ..lab import workbench
    from ..strategies import MemoEmbedder

    rows = []
    model = _Counting(embedder if embedder is not None else default_embedder())
    for name in suites:
        start = time.perf_counter()
        suite = load_suite(name, limit=limit)
        load_s = time.perf_counter() - start
        memo = MemoEmbedder(model)
        calls_before = (model.calls, model.texts)
        start = time.perf_counter()
        bench = workbench.Workbench(suite, memo)
        build_s = time.perf_counter() - start
        built = (model.calls, model.texts)
        # from here on every lookup in the memo counts too: a slider move must not ask for any vector
        lookups = _count_calls(memo, ("embed", "prime"))
        _redraw(workbench, bench, START, False)  # warm-up: importing plotly is the kernel's one-off, not a redraw's
        fast = _drag(workbench, bench, repeats, reference=False)
        row = {
            "suite": name, "n_queries": len(suite.queries), "n_tools": len(suite.catalog),
            "one_off_s": {"load_suite": round(load_s, 2), **{k: round(v, 3) for k, v in bench.seconds.items()},
                          "workbench": round(build_s, 2)},
            "embedder": {"build_model_calls": built[0] - calls_before[0],
                         "build_model_texts": built[1] - calls_before[1],
                         "drag_model_calls": model.calls - built[0], "drag_model_texts": model.texts - built[1],
                         "drag_memo_calls": lookups["calls"]},
            "fast": fast,
            "scoring_over_redraw_p95": round(build_s * 1000 / max(fast["total_p95_ms"], 1e-6), 1),
        }
        print(f"{name}: {row['n_queries']} queries x {row['n_tools']} tools; workbench (one-off scoring) "
              f"{build_s:.2f} s; embedder during drag: {row['embedder']['drag_model_texts']} texts, "
              f"{lookups['calls']} lookups", file=sys.stderr)
        if baseline:
            row["baseline"] = _drag(workbench, bench, 1, reference=True)
            row["embedder"]["drag_model_texts"] = model.texts - built[1]
            row["embedder"]["drag_memo_calls"] = lookups["calls"]
            row["speedup"] = {k: round(row["baseline"][f"{k}_ms"] / max(fast[f"{k}_ms"], 1e-6), 1)
                              for k in ("total_p50", "total_p95")}
        _print_tuning(row, build_s)
        rows.append(row)
    return {"suites": rows, "drag": len(DRAG), "repeats": repeats,
            "threads": os.environ.get("OMP_NUM_THREADS", "default")}


def _print_tuning(row: dict, build_s: float) -> None:
    """The per-redraw table of one suite (stderr): ms p50/p95 per part, against the one-off scoring."""
    paths = [("fast", row["fast"])] + ([("baseline", row["baseline"])] if "baseline" in row else [])
    print(f"  {'path':<9} {'part':<7} {'p50 ms':>9} {'p95 ms':>9} {'first ms':>9} {'p95/scoring':>12}", file=sys.stderr)
    for label, r in paths:
        for part in ("decide", "curve", "render", "total"):
            share = r[f"{part}_p95_ms"] / (build_s * 1000)
            print(f"  {label:<9} {part:<7} {r[f'{part}_p50_ms']:>9.1f} {r[f'{part}_p95_ms']:>9.1f} "
                  f"{r['first_view_ms'][part]:>9.1f} {share:>11.2%}", file=sys.stderr)
    if "speedup" in row:
        print(f"  speed-up of the total: p50 x{row['speedup']['total_p50']}, p95 x{row['speedup']['total_p95']}",
              file=sys.stderr)


def main(argv=None) -> int:
    """``eris-lab bench tuning``: print the JSON (progress on stderr)."""
    from ..cli import Parser

    parser = Parser(prog="eris-lab bench tuning", description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="demo,bfcl-pooled", help="comma-separated: demo, bfcl-pooled, FILE.jsonl")
    parser.add_argument("--repeats", type=int, default=3, help="passes over the drag, caches cleared before each")
    parser.add_argument("--baseline", action="store_true", help="also one pass of the reference path (slow on BFCL)")
    parser.add_argument("--limit", type=int, help="at most this many queries per suite")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    result = tuning_bench(tuple(s for s in args.suite.split(",") if s), args.repeats, args.baseline, limit=args.limit)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        write_atomic(Path(args.out), text)
    return 0

