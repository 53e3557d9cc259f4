"""Route latency and start-up.

Route latency p50/p95 split into embed and score (+ policy and offer) at catalogue sizes 50,
1,000, 10,000 and 100,000 tools (the real demo vectors, then seeded random unit vectors as
synthetic tools), and start-up time with a cold and a warm vector cache.

Run: ``eris-lab bench route [--help]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .._files import write_atomic
from ._stats import p50_p95

__all__ = ["route_bench", "QUERIES", "main"]

QUERIES = (
    "what's the weather in Berlin tomorrow", "remind me at 10 to call mum", "delete that email",
    "open https://example.org/changelog and summarise it", "wie spät ist es in Tokio",
    "play some jazz", "how many km is 12 miles", "what's on my calendar on friday",
    "summarise the PDF I ingested yesterday", "when does the next bus leave", "hi",
    "find the latest news about the election", "write a note to my vault about the meeting",
    "how warm is it outside", "set a timer for 5 minutes", "what do you remember about my sister",
    "lösche die Erinnerung", "search wikipedia for Ada Lovelace", "battery status please",
    "tell me something nice",
)


def route_bench(sizes=(50, 1_000, 10_000, 100_000), repeats: int = 3, catalog_path: str | None = None) -> dict:
    """Measure routing latency per catalogue size and start-up with cold and warm caches.

    Returns
    -------
    dict
        ``{"startup_ms": {...}, "sizes": [{"n_tools", "embed_p50_ms", "embed_p95_ms", "score_p50_ms",
        "score_p95_ms", "policy_offer_p50_ms", "total_p50_ms", "total_p95_ms"}]}``.
    """
    from ..catalog import Catalog, Tool, load
    from ..embed import SentenceTransformerEmbedder, VectorCache
    from ..router import Router

    catalog = load(catalog_path)
    embedder = SentenceTransformerEmbedder()
    start = time.perf_counter()
    embedder.embed(["warm up"])
    model_load_ms = (time.perf_counter() - start) * 1000

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        cold = Router(catalog, embedder, cache=VectorCache(embedder, tmp))
        real = cold.tool_vectors
        cold_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        Router(catalog, embedder, cache=VectorCache(embedder, tmp)).tool_vectors
        warm_ms = (time.perf_counter() - start) * 1000

    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        extra = max(0, n - len(catalog))
        synthetic = rng.standard_normal((extra, real.shape[1])).astype(np.float32)
        vectors = np.concatenate([real[:n], synthetic])
        tools = list(catalog)[:n] + [Tool(name=f"synthetic:t{i}", description=f"synthetic tool {i}") for i in range(extra)]
        router = Router(Catalog(tools), embedder, tool_vectors=vectors)
        timings: dict[str, list[float]] = {"embed": [], "score": [], "policy_offer": [], "total": []}
        for _ in range(repeats):
            for q in QUERIES:
                t = router.route(q).timings_ms
                timings["embed"].append(t.get("embed", 0.0))
                timings["score"].append(t.get("score", 0.0))
                timings["policy_offer"].append(t.get("policy", 0.0) + t.get("offer", 0.0))
                timings["total"].append(t["total"])
        row = {"n_tools": n}
        for key, values in timings.items():
            p50, p95 = p50_p95(values)
            row[f"{key}_p50_ms"], row[f"{key}_p95_ms"] = round(p50, 3), round(p95, 3)
        rows.append(row)
        print(f"  {n:>7} tools: total p50 {row['total_p50_ms']:.2f} ms p95 {row['total_p95_ms']:.2f} ms | "
              f"embed p50 {row['embed_p50_ms']:.2f} | score p50 {row['score_p50_ms']:.2f} p95 {row['score_p95_ms']:.2f} | "
              f"policy+offer p50 {row['policy_offer_p50_ms']:.2f}", file=sys.stderr)
    return {
        "catalog": catalog.source, "n_real_tools": len(catalog), "queries": len(QUERIES), "repeats": repeats,
        "startup_ms": {"model_load": round(model_load_ms, 1), "cold_cache": round(cold_ms, 1),
                       "warm_cache": round(warm_ms, 1), "cold_over_warm": round(cold_ms / max(warm_ms, 1e-6), 1)},
        "sizes": rows,
        "threads": os.environ.get("OMP_NUM_THREADS", "default"),
    }


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated tool counts >= 1, got {text!r}")
    return sizes


def main(argv=None) -> int:
    """``eris-lab bench route``: print the JSON (progress on stderr)."""
    from ..cli import Parser

    parser = Parser(prog="eris-lab bench route", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=_sizes, default=(50, 1_000, 10_000, 100_000), metavar="N,N,...",
                        help="catalogue sizes in tools (default 50,1000,10000,100000)")
    parser.add_argument("--repeats", type=int, default=3, help="passes over the 20 queries per size (default 3)")
    parser.add_argument("--catalog", help="catalogue whose tool vectors seed the sizes (default descriptors/)")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    result = route_bench(args.sizes, args.repeats, args.catalog)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        write_atomic(Path(args.out), text)
    return 0

