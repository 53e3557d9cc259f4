"""Label-free calibration time: first fit (cold cache) and a warm start, per catalogue.

For each catalogue (default: the demo descriptors and the pooled BFCL catalogue, 1,041 tools) it
times, with the embedding model already loaded and tool vectors cached as a router would have them:
the first ``calibrated_knobs`` call in an empty calibration cache (pseudo-queries and negatives
embedded, the gate fitted), then a second call that reads the cached knobs. It prints both and
their ratio; issue 18 asks for under 60 s cold and under 1 s warm at 1,000 tools on 2 cores.

Run: ``eris-lab bench calibration [--catalogs demo bfcl-pooled] [--repeat 3]``.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Sequence

__all__ = ["calibration_bench", "main"]


def _catalog(name: str):
    from ..catalog import load
    from ..eval.datasets import POOLED_SUITES, load_suite

    if name in POOLED_SUITES:
        return load_suite(name).catalog
    return load(None if name == "demo" else name)


def calibration_bench(catalogs: Sequence[str] = ("demo", "bfcl-pooled"), *, repeat: int = 3) -> list[dict]:
    """Rows ``{"catalog", "n_tools", "n_pseudo_queries", "cold_s", "warm_ms", "ratio"}``.

    ``warm_ms`` is the median of ``repeat`` warm calls, in milliseconds.
    """
    from ..calibration import calibrated_knobs
    from ..embed import default_embedder
    from ..router import embed_tools

    embedder = default_embedder()
    embedder.embed(["warm the model up"])  # loading the model is not calibration time
    rows = []
    for name in catalogs:
        catalog = _catalog(name)
        vectors = embed_tools(catalog, embedder.embed)
        previous = os.environ.get("ERIS_LAB_CALIBRATION_CACHE")
        with tempfile.TemporaryDirectory() as folder:
            os.environ["ERIS_LAB_CALIBRATION_CACHE"] = folder
            try:
                start = time.perf_counter()
                knobs = calibrated_knobs(catalog, embedder, tool_vectors=vectors)
                cold = time.perf_counter() - start
                warm = []
                for _ in range(max(repeat, 1)):
                    start = time.perf_counter()
                    calibrated_knobs(catalog, embedder, tool_vectors=vectors)
                    warm.append(time.perf_counter() - start)
            finally:
                if previous is None:
                    os.environ.pop("ERIS_LAB_CALIBRATION_CACHE", None)
                else:
                    os.environ["ERIS_LAB_CALIBRATION_CACHE"] = previous
        warm_s = sorted(warm)[len(warm) // 2]
        rows.append({"catalog": name, "n_tools": len(catalog),
                     "n_pseudo_queries": knobs.notes.get("calibration", {}).get("n_pseudo_queries"),
                     "cold_s": round(cold, 2), "warm_ms": round(warm_s * 1000, 1),
                     "ratio": round(cold / warm_s, 1) if warm_s else None})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """``eris-lab bench calibration``: print cold and warm calibration times."""
    from ..cli import Parser

    parser = Parser(prog="eris-lab bench calibration", description=__doc__.split("\n")[0])
    parser.add_argument("--catalogs", nargs="+", default=["demo", "bfcl-pooled"],
                        help="demo, a pooled suite (bfcl-pooled, parallel_multiple-pooled) or a catalogue path")
    parser.add_argument("--repeat", type=int, default=3, help="warm calls timed (median kept)")
    args = parser.parse_args(argv)
    rows = calibration_bench(args.catalogs, repeat=args.repeat)
    print(f"{'catalog':<28} {'tools':>6} {'pseudo':>7} {'cold s':>8} {'warm ms':>8} {'cold/warm':>10}")
    for r in rows:
        print(f"{r['catalog']:<28} {r['n_tools']:>6} {r['n_pseudo_queries'] or 0:>7} {r['cold_s']:>8.2f} "
              f"{r['warm_ms']:>8.1f} {r['ratio'] or 0:>10.0f}")
    return 0
