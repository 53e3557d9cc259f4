"""The int8 scorer's integer product, compiled by numba (machinery of :mod:`eris_lab.scorer`).

Imported only when an int8 scorer is built (``import numba`` costs about 0.5 s); the compiled
kernel is cached beside this file (``__pycache__``), so only the first process compiles it (about
1 s on a 2-core box).

Why a loop of our own and not ONNX Runtime's ``MatMulInteger`` (the first version of the int8
scorer): for one query row against 100,000 int8 tool rows of 384 dimensions, this kernel took
1.3 ms against ONNX Runtime's 1.8 ms (the memory read alone, a sum over the 38 MB, takes 1.0 ms),
and for 2 and 4 rows 2.4 and 4.7 ms against 10 ms (MLAS packs the whole tool matrix per call when
there is more than one row); usearch's exact int8 search took 14 ms (one kernel call per pair).
Measured on 2 cores, one thread each, 100,000 random unit vectors (the kernel alone; the scorer's
rows in docs/results/route-fast-2026-11-30.json).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["int8_dots"]


@numba.njit(cache=True, nogil=True, boundscheck=False)
def int8_dots(tools: np.ndarray, queries: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[r, i] = queries[r] . tools[i]`` in exact int32 arithmetic.

    Parameters
    ----------
    tools : ndarray, ``(n_tools, dim) int8``, C-contiguous
    queries : ndarray, ``(m, dim) int8``, C-contiguous
    out : ndarray, ``(m, n_tools) int32``, written in place

    Notes
    -----
    Each tool row is read once for all query rows; the inner loop over ``dim`` is what LLVM
    vectorises (int8 widened to int32; at most ``dim * 127 * 127``, far inside int32 for any
    embedding width below 130,000). An epilogue that converts to float inside the loop measured
    3x slower (it stopped the vectorisation), so the caller dequantises.
    """
    n, dim = tools.shape
    m = queries.shape[0]
    for i in range(n):
        for r in range(m):
            acc = np.int32(0)
            for j in range(dim):
                acc += np.int32(tools[i, j]) * np.int32(queries[r, j])
            out[r, i] = acc
