"""Summary statistics the benchmarks print (machinery shared by ``route`` and ``tuning``)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["p50_p95"]


def p50_p95(values: Sequence[float]) -> tuple[float, float]:
    """Median and 95th percentile of ``values`` (numpy's default, linear percentile)."""
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))
