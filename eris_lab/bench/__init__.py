"""Benchmarks that print numbers (never timed tests), one module each, one way to run them.

``python -m eris_lab.bench NAME [ARGS]`` (also ``eris-lab bench NAME [ARGS]``) runs the ``main``
of ``eris_lab.bench.<NAME>``; ``--help`` after the name lists its options. Speed and memory
targets live here as ratios against a baseline run in the same process, never in timed tests.
"""

from __future__ import annotations

import importlib
import sys
from typing import Sequence

__all__ = ["BENCHES", "main"]

#: Benchmark name -> what it measures (the module ``eris_lab.bench.<name>`` holds it).
BENCHES: dict[str, str] = {
    "route": "route latency per catalogue size (embed, score, policy, offer) and start-up",
    "tuning": "the tuning view's redraw time under a slider drag (fast path vs reference)",
    "strategies": "every routing strategy on every suite: recall, offer size, tokens",
    "generation": "the bundled Gemma on BFCL: whole roster vs grammar vs routed offer (hours on CPU)",
    "grammar": "grammar compile time, size, prompt tokens, sampling speed, differential checks",
    "llm": "generation speed with and without a grammar; offer width vs accuracy",
    "meta": "routed offer vs search/describe/execute meta-tools on the same tasks",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``BENCH [ARGS]``: the named benchmark's ``main(ARGS)``; an unknown name exits 2."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print("usage: python -m eris_lab.bench NAME [ARGS]   (NAME --help for its options)\n")
        for name, what in BENCHES.items():
            print(f"  {name:<11} {what}")
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in BENCHES:
        print(f"eris-lab: error: bench: unknown benchmark {name!r}; expected one of {', '.join(BENCHES)}",
              file=sys.stderr)
        return 2
    return importlib.import_module(f"{__name__}.{name}").main(rest)
