"""Evaluation: labelled query sets (BFCL and our own), metrics, the harness and the threshold tuner.

Modules: :mod:`.datasets` (suites), :mod:`.metrics` (one report per suite and strategy),
:mod:`.harness` (runs a strategy over a suite), :mod:`.tuner` (``ThresholdTuner``),
:mod:`.embedders` (other embedding models). Benchmarks over these live in :mod:`eris_lab.bench`.
"""

from .datasets import Query, Suite, fetch_bfcl, load_suite
from .metrics import QueryResult, evaluate

__all__ = ["Query", "Suite", "fetch_bfcl", "load_suite", "QueryResult", "evaluate"]
