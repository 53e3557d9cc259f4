"""Route latency and start-up, per encoder and scorer, as ratios against torch + exact scoring.

Route latency p50/p95 split into embed and score (+ policy and offer) at catalogue sizes 50,
1,000, 10,000 and 100,000 tools (the real demo vectors, then seeded random unit vectors as
synthetic tools: the worst case for any shortlist, since nothing clusters), for every encoder
(``embed.ENCODERS``) and scorer (``scorer.SCORERS``); one query's embedding alone (and its
tokenizing); scoring alone with recall of the best k against exact scoring at k = 1, 5, 8, 32, 64;
model load, cold and warm vector cache, and the wall time of a new ``eris-lab route`` process
(warm caches) per encoder.

On a shared box absolute milliseconds swing with other jobs: the variants take turns on each
query, so the ratios against torch + exact (same run, same load) are the numbers to read; p50
over many queries, the minimum and the CPU time (``time.process_time``: no waiting for a core)
are printed beside them. Each router is also timed alone (its queries in a block, after a pause):
the latency of a process that routes with one encoder, whose threads then have the cores.

Run: ``eris-lab bench route [--help]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .._files import shown_path, write_atomic
from ._stats import p50_p95

__all__ = ["route_bench", "QUERIES", "ENCODER_NAMES", "SCORER_NAMES", "RECALL_KS", "main"]

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


ENCODER_NAMES = ("torch", "onnx", "onnx-int8")
SCORER_NAMES = ("exact", "int8")
#: Offer sizes at which scorers are compared with exact scoring (offers reach about 20-32 tools on
#: the pooled BFCL catalogues; 64 = RANKED_HITS, the widening's pool).
RECALL_KS = (1, 5, 8, 32, 64)
STARTUP_TEXT = "what's the weather in Oslo tomorrow"


STAGES = ("guard", "embed", "score", "policy_offer", "total")


def _time_routes(routers: dict, repeats: int) -> dict[object, dict[str, float]]:
    """Route timings per stage of each router, p50 / p95 / min in ms.

    The routers take turns on each query (not one after the other), so load that comes and goes
    on a shared box falls on all of them alike and their ratios stay fair.
    """
    timings = {key: {stage: [] for stage in STAGES} for key in routers}
    embedded: dict[object, list[float]] = {key: [] for key in routers}
    cpu_ms: dict[object, list[float]] = {key: [] for key in routers}  # CPU time of the process: no waiting for a core
    for _ in range(repeats):
        for q in QUERIES:
            for key, router in routers.items():
                cpu = time.process_time()
                t = router.route(q).timings_ms
                cpu_ms[key].append((time.process_time() - cpu) * 1000)
                for stage in ("guard", "embed", "score", "total"):
                    timings[key][stage].append(t.get(stage, 0.0))
                timings[key]["policy_offer"].append(t.get("policy", 0.0) + t.get("offer", 0.0))
                if t.get("embed", 0.0) > 0:  # "hi" is conversation: no embedding, no scoring
                    embedded[key].append(t["total"])
    rows = {}
    for key, stages in timings.items():
        row: dict[str, float] = {}
        for stage, values in stages.items():
            p50, p95 = p50_p95(values)
            row[f"{stage}_p50_ms"], row[f"{stage}_p95_ms"] = round(p50, 3), round(p95, 3)
        row["total_min_ms"] = round(min(embedded[key], default=0.0), 3)  # of the routes that embedded
        row["total_cpu_p50_ms"] = round(float(np.median(cpu_ms[key])), 3)
        rows[key] = row
    return rows


def _time_alone(routers: dict, repeats: int) -> dict[object, dict[str, float]]:
    """Route totals of each router run on its own, p50 / p95 in ms: ``alone_total_p50_ms`` ...

    Interleaving is fair to ratios but not to an encoder with several threads: the other
    encoders' runtimes (torch's OpenMP, ONNX Runtime) keep their worker threads spinning for a
    while after each call, on the same cores. A process that routes uses one encoder, so its
    latency is this one: the router's queries in a block, after a pause that lets the others'
    threads go to sleep. Only routes that embedded count ("hi" is conversation).
    """
    rows = {}
    for key, router in routers.items():
        time.sleep(0.5)
        totals = []
        for _ in range(repeats):
            for q in QUERIES:
                t = router.route(q).timings_ms
                if t.get("embed", 0.0) > 0:
                    totals.append(t["total"])
        p50, p95 = p50_p95(totals)
        rows[key] = {"alone_total_p50_ms": round(p50, 3), "alone_total_p95_ms": round(p95, 3)}
    return rows


def _scorers_only(scorers: list, queries: np.ndarray, exact_rows: np.ndarray, floor: float, repeats: int) -> list[dict]:
    """Scoring alone (one query row -> raw cosines, the scorers taking turns on each row) and recall
    of the best k against exact scoring."""
    times: list[list[float]] = [[] for _ in scorers]
    cpu_times: list[list[float]] = [[] for _ in scorers]  # CPU time of the process: no waiting for a core
    for _ in range(repeats):
        for i in range(len(queries)):
            for j, scorer in enumerate(scorers):
                start, cpu = time.perf_counter(), time.process_time()
                scorer.raw(queries[i:i + 1], k=max(RECALL_KS), floor=floor)
                times[j].append((time.perf_counter() - start) * 1000)
                cpu_times[j].append((time.process_time() - cpu) * 1000)
    records = []
    for scorer, spent, cpu in zip(scorers, times, cpu_times):
        hits = {k: 0.0 for k in RECALL_KS}
        for i in range(len(queries)):
            raw = scorer.raw(queries[i:i + 1], k=max(RECALL_KS), floor=floor)[0]
            for k in RECALL_KS:
                truth = set(np.argsort(-exact_rows[i], kind="stable")[:k].tolist())
                hits[k] += len(truth & set(np.argsort(-raw, kind="stable")[:k].tolist())) / min(k, len(truth))
        p50, p95 = p50_p95(spent)
        records.append({"scorer": scorer.name, "scorer_p50_ms": round(p50, 3), "scorer_p95_ms": round(p95, 3),
                        "scorer_min_ms": round(min(spent), 3), "scorer_cpu_p50_ms": round(float(np.median(cpu)), 3),
                        "recall_at": {str(k): round(v / len(queries), 4) for k, v in hits.items()},
                        "rescored": getattr(scorer, "last_rescored", None),
                        "kernel": getattr(getattr(scorer, "inner", scorer), "kernel", None)})
    return records


class _Renamed:
    """A scorer under another name in the benchmark's rows (the int8 scorer on its portable kernel)."""

    def __init__(self, inner, name: str) -> None:
        self.inner, self.name = inner, name

    def raw(self, queries, *, k, floor):
        result = self.inner.raw(queries, k=k, floor=floor)
        self.last_rescored = self.inner.last_rescored
        return result


class _Int8Only:
    """The int8 scorer without its exact re-score: what the shortlist bound buys (recall row)."""

    name = "int8-no-rescore"

    def __init__(self, inner) -> None:
        self.inner = inner

    def raw(self, queries, *, k, floor):
        return self.inner.approximate(queries)[0]


def _time_embedding(embedders: dict, info: dict, repeats: int) -> None:
    """Per query: the whole embedding and, for the ONNX encoders, the tokenizer alone (p50 in ms, the
    encoders taking turns on each query); written into ``info[name]``."""
    spent = {name: ([], []) for name in embedders}
    for _ in range(repeats):
        for q in QUERIES:
            for name, embedder in embedders.items():
                start = time.perf_counter()
                if hasattr(embedder, "tokenize"):
                    embedder.tokenize([q])
                middle = time.perf_counter()
                embedder.embed([q])
                end = time.perf_counter()
                spent[name][0].append((middle - start) * 1000)
                spent[name][1].append((end - middle) * 1000)
    base = float(np.median(spent["torch"][1]))
    for name, (tokenize, embed) in spent.items():
        info[name] |= {"query_embed_p50_ms": round(float(np.median(embed)), 3),
                       "query_embed_min_ms": round(min(embed), 3),
                       "query_embed_speedup_vs_torch": round(base / max(float(np.median(embed)), 1e-6), 2)}
        if hasattr(embedders[name], "tokenize"):
            info[name]["tokenize_p50_ms"] = round(float(np.median(tokenize)), 3)
        print(f"  encoder {name}: one query embedded in p50 {info[name]['query_embed_p50_ms']:.2f} ms (min "
              f"{info[name]['query_embed_min_ms']:.2f}; x{info[name]['query_embed_speedup_vs_torch']:.2f} vs torch)"
              + (f", of which tokenizing {info[name]['tokenize_p50_ms']:.3f} ms" if "tokenize_p50_ms" in info[name] else ""),
              file=sys.stderr)


def _startup(encoder: str, catalog_path: str | None, runs: int) -> dict:
    """Wall time of new ``eris-lab route`` processes, warm caches (one untimed run warms them)."""
    command = [sys.executable, "-m", "eris_lab", "route", STARTUP_TEXT, "--encoder", encoder]
    if catalog_path:
        command += ["--catalog", catalog_path]
    env = os.environ | {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    subprocess.run(command, capture_output=True, env=env, check=True, timeout=1800)
    import resource

    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, env=env, check=True, timeout=600)
        walls.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    # CPU time (user + system) is what the process costs; the wall time also holds waiting for a
    # core on a shared box
    return {"first_route_wall_ms": round(float(np.median(walls)), 1), "runs": runs,
            "first_route_cpu_ms": round(float(np.median(cpus)), 1),
            "first_route_wall_ms_all": [round(w, 1) for w in walls]}


def route_bench(sizes=(50, 1_000, 10_000, 100_000), repeats: int = 3, catalog_path: str | None = None, *,
                encoders=ENCODER_NAMES, scorers=SCORER_NAMES, startup_runs: int = 3) -> dict:
    """Every encoder and scorer side by side per catalogue size, as ratios against torch + exact.

    Parameters
    ----------
    sizes : tuple of int
        Catalogue sizes; beyond the real catalogue, seeded random unit vectors stand for tools.
    repeats : int
        Passes over :data:`QUERIES` per row.
    encoders, scorers : tuple of str
        ``embed.ENCODERS`` and ``scorer.SCORERS`` names; ``torch`` and ``exact`` are the baseline.
    startup_runs : int
        Timed new ``eris-lab route`` processes per encoder (0: skip start-up).

    Returns
    -------
    dict
        ``{"encoders": {name: {"model_load_ms", "cosine_vs_torch_min", "cosine_vs_torch_mean",
        "query_embed_p50_ms", "tokenize_p50_ms", startup...}},
        "sizes": [{"n_tools", "encoder", "scorer", <timings p50/p95 ms>, "speedup_vs_baseline",
        "alone_total_p50_ms", "alone_total_p95_ms"}],
        "scoring": [{"n_tools", "scorer", "scorer_p50_ms", "recall_at": {k: recall}}], ...}``.
    """
    from ..catalog import Catalog, Tool, load
    from ..embed import VectorCache, encoder_threads, make_encoder
    from ..knobs import Knobs
    from ..router import Router
    from ..scorer import ExactScorer, Int8Scorer, make_scorer

    torch_loaded_before = "torch" in sys.modules  # then OMP_WAIT_POLICY (set by main) came too late
    catalog = load(catalog_path)
    baseline = ("torch", "exact")
    encoders = tuple(dict.fromkeys(("torch", *encoders)))
    scorers = tuple(dict.fromkeys(("exact", *scorers)))
    embedders, info = {}, {}
    for name in encoders:
        embedder = make_encoder(name)
        start = time.perf_counter()
        embedder.embed(["warm up"])
        info[name] = {"model_load_ms": round((time.perf_counter() - start) * 1000, 1)}
        embedders[name] = embedder
    reference = embedders["torch"].embed(list(QUERIES))
    for name, embedder in embedders.items():
        cosines = (embedder.embed(list(QUERIES)) * reference).sum(axis=1)
        info[name] |= {"cosine_vs_torch_min": round(float(cosines.min()), 5),
                       "cosine_vs_torch_mean": round(float(cosines.mean()), 5)}
        print(f"  encoder {name}: model load {info[name]['model_load_ms']:.0f} ms, cosine with torch "
              f"min {cosines.min():.4f} mean {cosines.mean():.4f}", file=sys.stderr)

    _time_embedding(embedders, info, repeats)

    real: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, embedder in embedders.items():
            start = time.perf_counter()
            real[name] = Router(catalog, embedder, cache=VectorCache(embedder, tmp)).tool_vectors
            info[name]["cold_cache_ms"] = round((time.perf_counter() - start) * 1000, 1)
            start = time.perf_counter()
            np.asarray(Router(catalog, embedder, cache=VectorCache(embedder, tmp)).tool_vectors).sum()
            info[name]["warm_cache_ms"] = round((time.perf_counter() - start) * 1000, 2)

    rng = np.random.default_rng(0)
    rows, scoring = [], []
    floor = Knobs().threshold
    for n in sizes:
        extra = max(0, n - len(catalog))
        synthetic = rng.standard_normal((extra, reference.shape[1])).astype(np.float32)
        tools = list(catalog)[:n] + [Tool(name=f"synthetic:t{i}", description=f"synthetic tool {i}") for i in range(extra)]
        big = Catalog(tools)
        routers = {}
        for enc in encoders:
            vectors = np.concatenate([real[enc][:n], synthetic])
            for sc in scorers:
                routers[enc, sc] = Router(big, embedders[enc], tool_vectors=vectors, scorer=sc)
                routers[enc, sc].route("warm up the scorer")
        timed = _time_routes(routers, repeats)
        alone = _time_alone(routers, repeats)
        base_total = timed[baseline]["total_p50_ms"]
        for (enc, sc), timing in timed.items():
            row = {"n_tools": n, "encoder": enc, "scorer": sc} | timing | alone[enc, sc]
            row["speedup_vs_baseline"] = round(base_total / max(row["total_p50_ms"], 1e-6), 2)
            rows.append(row)
            print(f"  {n:>7} tools {enc:>9} + {sc:<5}: total p50 {row['total_p50_ms']:7.2f} p95 "
                  f"{row['total_p95_ms']:7.2f} min {row['total_min_ms']:6.2f} CPU p50 {row['total_cpu_p50_ms']:6.2f} ms | guard {row['guard_p50_ms']:5.2f} "
                  f"embed {row['embed_p50_ms']:6.2f} score {row['score_p50_ms']:6.2f} policy+offer "
                  f"{row['policy_offer_p50_ms']:5.2f} | x{row['speedup_vs_baseline']:.2f} | alone p50 "
                  f"{row['alone_total_p50_ms']:6.2f} p95 {row['alone_total_p95_ms']:6.2f} ms", file=sys.stderr)
        # scoring alone, on the default encoder's query vectors against this size's tools
        query_vectors = embedders[encoders[-1] if "onnx" not in encoders else "onnx"].embed(list(QUERIES))
        tool_matrix = Router(big, embedders["torch"], tool_vectors=np.concatenate([real["torch"][:n], synthetic])).tool_vectors
        exact = ExactScorer(tool_matrix)
        exact_rows = exact.raw(query_vectors)
        candidates = [exact] + [make_scorer(sc, tool_matrix) for sc in scorers if sc != "exact"]
        if "int8" in scorers:
            int8 = next(c for c in candidates if c.name == "int8")
            if int8.kernel != "portable":  # the same scorer on the kernel every CPU has
                candidates.append(_Renamed(Int8Scorer(tool_matrix, kernel="portable"), "int8-portable"))
            candidates.append(_Int8Only(int8))
        records = _scorers_only(candidates, query_vectors, exact_rows, floor, repeats)
        for record in records:
            record = {"n_tools": n} | record
            record["speedup_vs_exact"] = round(records[0]["scorer_p50_ms"] / max(record["scorer_p50_ms"], 1e-6), 2)
            scoring.append(record)
            print(f"  {n:>7} tools scoring {record['scorer']:<16}: p50 {record['scorer_p50_ms']:6.2f} p95 "
                  f"{record['scorer_p95_ms']:6.2f} min {record['scorer_min_ms']:6.2f} CPU p50 {record['scorer_cpu_p50_ms']:6.2f}"
                  f" ms x{record['speedup_vs_exact']:.2f}"
                  f" | recall@k {record['recall_at']}", file=sys.stderr)

    if startup_runs:
        for name in encoders:
            info[name] |= _startup(name, catalog_path, startup_runs)
            print(f"  start-up {name}: a new `eris-lab route` prints in {info[name]['first_route_wall_ms']:.0f} ms "
                  f"(CPU {info[name]['first_route_cpu_ms']:.0f} ms; warm caches, median)", file=sys.stderr)
        base = info["torch"]["first_route_wall_ms"]
        for name in encoders:
            info[name]["startup_speedup_vs_torch"] = round(base / max(info[name]["first_route_wall_ms"], 1e-6), 2)
    return {
        "catalog": shown_path(catalog.source), "n_real_tools": len(catalog), "queries": len(QUERIES), "repeats": repeats,
        "baseline": "+".join(baseline), "encoders": info, "sizes": rows, "scoring": scoring,
        "recall_floor": floor, "cpu_count": os.cpu_count(),
        "threads": os.environ.get("OMP_NUM_THREADS", "default"), "encoder_threads": encoder_threads(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "") if not torch_loaded_before else "torch loaded before",
        "commit": _commit(),
    }


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated tool counts >= 1, got {text!r}")
    return sizes


def _names(allowed: tuple[str, ...]):
    def parse(text: str) -> tuple[str, ...]:
        names = tuple(n.strip() for n in text.split(",") if n.strip())
        if not names or any(n not in allowed for n in names):
            raise argparse.ArgumentTypeError(f"expected comma-separated names from {','.join(allowed)}, got {text!r}")
        return names
    return parse


def _commit() -> str:
    """The checkout's git commit (``+dirty`` with uncommitted changes), ``""`` outside a git checkout."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return head + ("+dirty" if dirty else "")


def main(argv=None) -> int:
    """``eris-lab bench route``: print the JSON (progress on stderr)."""
    from ..cli import Parser

    parser = Parser(prog="eris-lab bench route", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=_sizes, default=(50, 1_000, 10_000, 100_000), metavar="N,N,...",
                        help="catalogue sizes in tools (default 50,1000,10000,100000)")
    parser.add_argument("--repeats", type=int, default=3, help="passes over the 20 queries per size (default 3)")
    parser.add_argument("--catalog", help="catalogue whose tool vectors seed the sizes (default descriptors/)")
    parser.add_argument("--encoders", type=_names(ENCODER_NAMES), default=ENCODER_NAMES, metavar="E,E,...",
                        help=f"encoders beside torch (default {','.join(ENCODER_NAMES)})")
    parser.add_argument("--scorers", type=_names(SCORER_NAMES), default=SCORER_NAMES, metavar="S,S,...",
                        help=f"scorers beside exact (default {','.join(SCORER_NAMES)})")
    parser.add_argument("--startup-runs", type=int, default=3, metavar="N",
                        help="timed new `eris-lab route` processes per encoder (default 3; 0 skips)")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # OpenMP workers (torch's) spin after each call by default and take the cores from the next
    # encoder's threads in the interleaved timing; passive waiting, set before torch loads (this
    # process is the benchmark's own), measured: onnx + exact p50 6.1 -> 4.2 ms, torch 47 -> 23 ms
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    result = route_bench(args.sizes, args.repeats, args.catalog, encoders=args.encoders, scorers=args.scorers,
                         startup_runs=max(0, args.startup_runs))
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        write_atomic(Path(args.out), text)
    return 0

