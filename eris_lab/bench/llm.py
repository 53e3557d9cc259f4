"""Generation speed with and without a grammar.

One process, one model load, pinned threads. Each mode generates from the same prompt at
temperature 0 for ``--runs`` runs; the first run of each mode is a warm-up and is not counted.
Tokens per second exclude prompt evaluation (``Generation.tokens_per_s``, wall clock). Beside
them, CPU milliseconds per generated token (``time.process_time`` of this process, one pinned
thread): on a shared machine the wall clock moves with other people's load, CPU time much
less. The grammar overhead is each mode's extra CPU time per token against free generation.
Modes run round robin (one run of each per round) so that a burst of load hits all of them.

Modes: ``free`` (no grammar), ``tool_json`` (a small tool-call envelope: an enum of three names
and one bounded string argument), ``json`` (llama.cpp's generic ``json.gbnf``, as shipped in
llama-cpp-python); each grammar mode runs with the runner's greedy grammar check and, as
``*_chain``, with llama-cpp-python's own sampler chain (grammar over the whole vocabulary at
every step).

Run: ``eris-lab bench llm [--help]``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any, Sequence

from ..llm import LlamaRunner

__all__ = ["bench", "main", "TOOL_JSON_GBNF", "PROMPT", "width_cases", "width_run", "width_summary"]

PROMPT = ("Tools: weather:current(city), clock:now(zone), news:today(topic).\n"
          "User: What is the weather like in Berlin right now? Describe it in detail.\n"
          "Call:")

#: A small tool-call grammar: name from an enum, one string argument of at most 60 characters.
TOOL_JSON_GBNF = r'''root ::= "{\"name\": " name ", \"arguments\": {\"" key "\": " str "}}"
name ::= "\"weather:current\"" | "\"clock:now\"" | "\"news:today\""
key ::= "city" | "zone" | "topic"
str ::= "\"" [A-Za-z0-9 ,.'-]{1,60} "\""
'''


def _modes() -> dict[str, tuple[str | None, bool]]:
    """mode -> (grammar, greedy_grammar_check); ``*_chain`` = llama-cpp-python's own sampler chain."""
    from llama_cpp.llama_grammar import JSON_GBNF

    return {"free": (None, True), "tool_json": (TOOL_JSON_GBNF, True), "tool_json_chain": (TOOL_JSON_GBNF, False),
            "json": (JSON_GBNF, True), "json_chain": (JSON_GBNF, False)}


def bench(runner: LlamaRunner, *, runs: int = 3, max_tokens: int = 48, prompt: str = PROMPT) -> dict[str, Any]:
    """Measure tokens/s of each mode; returns a JSON-ready record (see module docstring).

    Parameters
    ----------
    runner : LlamaRunner
    runs : int
        Counted runs per mode (plus one warm-up).
    max_tokens : int
        Generation budget per run.
    """
    record: dict[str, Any] = {"model": str(runner.path), "n_threads": runner.n_threads, "runs": runs,
                              "max_tokens": max_tokens, "modes": {}}
    record["info"] = runner.info()
    modes = _modes()
    rows: dict[str, dict[str, list]] = {m: {"rates": [], "cpu": [], "tokens": [], "texts": [], "notes": []} for m in modes}

    def one(mode: str) -> tuple[Any, float]:
        grammar, check = modes[mode]
        runner.greedy_grammar_check = check
        cpu = time.process_time()
        out = runner.generate(prompt, grammar=grammar, max_tokens=max_tokens)
        return out, time.process_time() - cpu

    for mode in modes:  # warm-up: load, prompt cache, first grammar parse
        one(mode)
    for _ in range(runs):  # round robin, so a burst of load on the shared machine hits every mode
        for mode in modes:
            out, cpu_s = one(mode)
            row = rows[mode]
            row["rates"].append(out.tokens_per_s)
            row["cpu"].append(1000.0 * cpu_s / out.n_tokens if out.n_tokens else float("nan"))
            row["tokens"].append(out.n_tokens)
            row["texts"].append(out.text)
            row["notes"].append(out.note)
    for mode, row in rows.items():
        rate = statistics.median(row["rates"])
        record["modes"][mode] = {
            "tokens_per_s_median": round(rate, 2),
            "tokens_per_s_runs": [round(r, 2) for r in row["rates"]],
            "ms_per_token_median": round(1000.0 / rate, 2) if rate else None,
            "cpu_ms_per_token_median": round(statistics.median(row["cpu"]), 2),
            "n_tokens": row["tokens"], "text": row["texts"][-1][:200], "note": row["notes"][-1],
        }
    runner.greedy_grammar_check = True
    free = record["modes"]["free"]
    for row in record["modes"].values():
        for key, base in (("ms_per_token_median", "grammar_overhead_pct"), ("cpu_ms_per_token_median", "grammar_cpu_overhead_pct")):
            row[base] = (round(100.0 * (row[key] - free[key]) / free[key], 1)
                         if row[key] is not None and free[key] else None)
        cpu, base_cpu = row["cpu_ms_per_token_median"], free["cpu_ms_per_token_median"]
        row["grammar_share_of_cpu"] = round(max(0.0, cpu - base_cpu) / cpu, 3) if cpu else None
    record["loadavg_1m"] = round(os.getloadavg()[0], 2)
    return record


# ---------------------------------------------------------------------------------------------
# Offer width: grammar vs free, tool-name accuracy (notebook 05)
# ---------------------------------------------------------------------------------------------


def width_cases(suite, widths: Sequence[int], *, n_cases: int, seed: int = 0, embedder=None) -> list[dict[str, Any]]:
    """Cases of a shared-catalogue suite (single gold tool) with one offer per width.

    Each offer holds the gold tool and the ``width - 1`` tools nearest to the query by cosine
    (the hardest distractors), ranked by cosine, so the gold tool is not always first.

    Returns
    -------
    list of dict
        ``{"id", "query", "gold", "offers": {width: (names...)}}``, ``n_cases`` of them (seeded sample).
    """
    import numpy as np

    from ..catalog import enrich_for_routing
    from ..eval.harness import shared_embedder
    from ..guard import clean_text

    memo = shared_embedder(embedder)
    pool = [q for q in suite.queries if q.expect == "all" and len(q.gold) == 1]
    rng = np.random.default_rng(seed)
    chosen = [pool[i] for i in sorted(rng.choice(len(pool), min(n_cases, len(pool)), replace=False))]
    names = suite.catalog.names
    tool_texts = [enrich_for_routing(t) for t in suite.catalog]
    query_texts = [clean_text(q.query, 4000) for q in chosen]
    memo.prime(tool_texts + query_texts)  # one batch, through the disk cache
    tools, queries = memo.embed(tool_texts), memo.embed(query_texts)
    cases = []
    for q, vec in zip(chosen, queries):
        scores = tools @ vec
        order = [names[i] for i in np.argsort(-scores, kind="stable")]
        offers = {}
        for w in widths:
            picked = [n for n in order if n != q.gold[0]][: max(0, w - 1)] + [q.gold[0]]
            offers[int(w)] = tuple(sorted(picked, key=lambda n: -float(scores[names.index(n)])))
        cases.append({"id": q.id, "query": q.query, "gold": q.gold[0], "offers": offers})
    return cases


def width_run(runner: LlamaRunner, catalog, cases: Sequence[dict[str, Any]], *, modes: Sequence[str] = ("grammar", "free"),
              max_tokens: int = 96, knobs=None, progress: bool = True) -> list[dict[str, Any]]:
    """Generate a reply for every case, width and mode; read the called tool with ``parse.calls``.

    ``grammar`` constrains sampling with the offer's envelope grammar (``grammar.envelope``);
    ``free`` gets the same slim prompt without a grammar. Greedy (temperature 0).

    Returns
    -------
    list of dict
        ``id, width, mode, gold, called, correct, valid, n_tokens, n_prompt_tokens, tokens_per_s, seconds, text``.
    """
    from ..grammar.envelope import compile as compile_envelope
    from ..knobs import Knobs
    from ..offer import Offer
    from ..parse import calls
    from ..prompt import slim

    knobs = knobs or Knobs(max_thought_chars=80, max_message_chars=200, max_calls=1)
    jobs = [(c, w, m) for c in cases for w in c["offers"] for m in modes]
    iterator: Any = jobs
    if progress:
        from tqdm import tqdm

        iterator = tqdm(jobs, desc="generations", file=sys.stderr, leave=False)
    rows = []
    for case, width, mode in iterator:
        names = case["offers"][width]
        offer = Offer.given(names, reason=f"width {width}")
        messages = [{"role": "system", "content": slim(offer, catalog)}, {"role": "user", "content": case["query"]}]
        grammar = compile_envelope(offer, catalog, knobs=knobs).text if mode == "grammar" else None
        out = runner.generate(messages, grammar=grammar, max_tokens=max_tokens, temperature=0.0)
        parsed = calls(out.text, names)
        called = parsed.calls[0].name if parsed.calls else ""
        rows.append({"id": case["id"], "width": width, "mode": mode, "gold": case["gold"], "called": called,
                     "correct": called == case["gold"], "valid": bool(parsed.calls) and parsed.error is None,
                     "n_tokens": out.n_tokens, "n_prompt_tokens": out.n_prompt_tokens,
                     "tokens_per_s": round(out.tokens_per_s, 2), "seconds": round(out.seconds, 3),
                     "text": out.text[:300]})
    return rows


def width_summary(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (width, mode): ``n``, ``accuracy`` (tool name), ``valid_call_rate``, median ``tokens_per_s``, prompt tokens."""
    groups: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["width"], r["mode"]), []).append(r)
    out = []
    for (width, mode), rs in sorted(groups.items()):
        rates = [r["tokens_per_s"] for r in rs if r["tokens_per_s"]]
        out.append({"width": width, "mode": mode, "n": len(rs),
                    "accuracy": round(sum(r["correct"] for r in rs) / len(rs), 4),
                    "valid_call_rate": round(sum(r["valid"] for r in rs) / len(rs), 4),
                    "tokens_per_s": round(statistics.median(rates), 2) if rates else 0.0,
                    "prompt_tokens": round(statistics.mean(r["n_prompt_tokens"] for r in rs), 1)})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``eris-lab bench llm``: print the benchmark (a table, or JSON with ``--json``)."""
    from ..cli import Parser

    parser = Parser(prog="eris-lab bench llm", description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a GGUF file (default: the bundled Gemma 3 270M Q4_K_M)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads, pinned (default 1)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    record = bench(LlamaRunner(args.model, n_threads=args.threads, n_ctx=512), runs=args.runs,
                   max_tokens=args.max_tokens)
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return 0
    print(f"model {record['model']}  threads {record['n_threads']}  gpu_offload {record['info']['gpu_offload']}  "
          f"runs {record['runs']}  max_tokens {record['max_tokens']}  load average {record['loadavg_1m']}")
    print(f"{'mode':<16} {'tok/s':>7} {'ms/tok':>7} {'cpu ms/tok':>10} {'cpu overhead':>12} {'grammar share':>13}  tokens")
    for mode, row in record["modes"].items():
        print(f"{mode:<16} {row['tokens_per_s_median']:>7.1f} {row['ms_per_token_median'] or 0:>7.1f} "
              f"{row['cpu_ms_per_token_median']:>10.1f} {row['grammar_cpu_overhead_pct'] or 0:>11.1f}% {row['grammar_share_of_cpu'] or 0:>13.2f}  {row['n_tokens']}")
    return 0

