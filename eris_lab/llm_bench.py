"""Generation speed with and without a grammar: ``python -m eris_lab.llm_bench``.

One process, one model load, pinned threads. Each mode generates from the same prompt at
temperature 0 for ``--runs`` runs; the first run of each mode is a warm-up and is not counted.
Tokens per second exclude prompt evaluation (``Generation.tokens_per_s``); the grammar overhead
is the extra milliseconds per generated token against free generation. The load average is
printed with the numbers: on a shared machine it moves them more than anything else.

Modes: ``free`` (no grammar), ``tool_json`` (a small tool-call envelope: an enum of three names
and one bounded string argument), ``json`` (llama.cpp's generic ``json.gbnf``, as shipped in
llama-cpp-python); each grammar mode runs with the runner's greedy grammar check and, as
``*_chain``, with llama-cpp-python's own sampler chain (grammar over the whole vocabulary at
every step).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from typing import Any, Sequence

from .errors import ErisLabError
from .llm import LlamaRunner

__all__ = ["bench", "main", "TOOL_JSON_GBNF", "PROMPT"]

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
    for mode, (grammar, check) in _modes().items():
        runner.greedy_grammar_check = check
        runner.generate(prompt, grammar=grammar, max_tokens=max_tokens)  # warm-up
        rates, ms_per_token, tokens, texts = [], [], [], []
        for _ in range(runs):
            out = runner.generate(prompt, grammar=grammar, max_tokens=max_tokens)
            rates.append(out.tokens_per_s)
            ms_per_token.append(1000.0 / out.tokens_per_s if out.tokens_per_s else float("nan"))
            tokens.append(out.n_tokens)
            texts.append(out.text)
        record["modes"][mode] = {
            "tokens_per_s_median": round(statistics.median(rates), 2),
            "tokens_per_s_runs": [round(r, 2) for r in rates],
            "ms_per_token_median": round(statistics.median(ms_per_token), 2),
            "n_tokens": tokens, "text": texts[-1][:200], "note": out.note,
        }
    runner.greedy_grammar_check = True
    free = record["modes"]["free"]["ms_per_token_median"]
    for mode, row in record["modes"].items():
        row["grammar_overhead_ms_per_token"] = round(row["ms_per_token_median"] - free, 2)
        row["grammar_overhead_pct"] = round(100.0 * (row["ms_per_token_median"] - free) / free, 1) if free else None
    record["loadavg_1m"] = round(os.getloadavg()[0], 2)
    return record


def main(argv: Sequence[str] | None = None) -> int:
    """Print the benchmark (a table, or JSON with ``--json``); exit 2 on bad input."""
    parser = argparse.ArgumentParser(prog="python -m eris_lab.llm_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a GGUF file (default: the bundled Gemma 3 270M Q4_K_M)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads, pinned (default 1)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        record = bench(LlamaRunner(args.model, n_threads=args.threads, n_ctx=512), runs=args.runs,
                       max_tokens=args.max_tokens)
    except ErisLabError as exc:
        print(f"eris-lab: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return 0
    print(f"model {record['model']}  threads {record['n_threads']}  gpu_offload {record['info']['gpu_offload']}  "
          f"runs {record['runs']}  max_tokens {record['max_tokens']}  load average {record['loadavg_1m']}")
    print(f"{'mode':<10} {'tok/s':>8} {'ms/tok':>8} {'overhead':>9}  tokens")
    for mode, row in record["modes"].items():
        print(f"{mode:<10} {row['tokens_per_s_median']:>8.1f} {row['ms_per_token_median']:>8.1f} "
              f"{row['grammar_overhead_pct']:>8.1f}%  {row['n_tokens']}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
