"""Benchmarks that print numbers (never timed tests), one module each, one way to run them.

``eris-lab bench NAME [ARGS]`` (also ``python -m eris_lab.bench NAME [ARGS]``) runs the ``main``
of ``eris_lab.bench.<NAME>``; ``--help`` after the name lists its options. Errors go through
``cli.main`` like every command's: one line, exit status 2. Speed and memory
targets live here as ratios against a baseline run in the same process, never in timed tests.
"""

from __future__ import annotations

__all__ = ["BENCHES"]

#: Benchmark name -> what it measures (the module ``eris_lab.bench.<name>`` holds it).
BENCHES: dict[str, str] = {
    "route": "route latency per catalogue size (embed, score, policy, offer) and start-up",
    "tuning": "the tuning view's redraw time under a slider drag (fast path vs reference)",
    "strategies": "every routing strategy on every suite: recall, offer size, tokens",
    "generation": "the bundled Gemma on BFCL: whole roster vs grammar vs routed offer (hours on CPU)",
    "grammar": "grammar compile time, size, prompt tokens, sampling speed, differential checks",
    "llm": "generation speed with and without a grammar; offer width vs accuracy",
    "meta": "routed offer vs search/describe/execute meta-tools on the same tasks",
    "calibration": "label-free calibration per catalogue: first fit vs a warm start from the cache",
    "transfer": "knobs fitted on one catalogue or labelled suite, judged on the others (promised vs observed coverage)",
    "conversation": "BFCL multi-turn conversations: every tool a turn needs, companions and memory side by side",
}
