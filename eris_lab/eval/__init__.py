"""Evaluation: labelled query sets (BFCL and our own), metrics, the threshold tuner, the benchmark.

Modules: :mod:`.datasets` (suites), :mod:`.metrics` (one report per suite and strategy),
:mod:`.harness` (runs a strategy over a suite), :mod:`.tuner` (``ThresholdTuner``),
:mod:`.bench` (every strategy on every suite; ``python -m eris_lab.eval.bench``).
"""

from .datasets import Query, Suite, fetch_bfcl, load_suite
from .metrics import QueryResult, evaluate

__all__ = ["Query", "Suite", "fetch_bfcl", "load_suite", "QueryResult", "evaluate"]
