"""Scorers: query vectors in, cosines with every tool out; exact, or int8 with an exact re-score.

The router scores a message with one matrix product against every tool vector (semantic-router's
``linear.py``). At 100,000 tools that product reads 150 MB of float32 per message. The int8 scorer
reads a quarter of that through an int8 product (numba, :mod:`eris_lab._int8`) and re-scores exactly every tool that
could belong to the best ``k`` or clear the ``floor``, so what the router reads (the best ``k``
tools, every tool at or above the floor, each row's best tool) is the exact scorer's.

Scorers (:data:`SCORERS`, ``Router(scorer=...)``, ``eris-lab bench route``): ``exact``; ``int8``;
``auto`` (the default): exact below :data:`AUTO_INT8_MIN_TOOLS` tools, int8 from there on.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Protocol

import numpy as np

from .errors import ErisLabError

__all__ = ["Scorer", "ExactScorer", "Int8Scorer", "SCORERS", "AUTO_INT8_MIN_TOOLS", "make_scorer"]

#: Scorer name -> what it does.
SCORERS: dict[str, str] = {
    "auto": "exact below AUTO_INT8_MIN_TOOLS tools, int8 from there on (default)",
    "exact": "float32 matrix product with every tool vector",
    "int8": "int8 matrix product (numba), exact float32 re-score of every tool that could matter",
}

#: From this many tools on, ``auto`` scores in int8 (docs/results/route-fast-quieter-2026-12-01.json:
#: at 100,000 tools int8 is 5.8x faster than exact on a quiet box, 3.8x on a busy one; at 10,000 about 2.5x, but exact then takes about 1 ms a
#: message, and the int8 scorer's one-time set-up, the numba import and kernel load, about 0.6 s,
#: plus quantisation, about 0.2 s per 10,000 tools on a busy 2-core box, outweighs that for a
#: process that routes a few messages).
AUTO_INT8_MIN_TOOLS = 20_000

#: Added to the int8 error bound: float32 rounding of the dequantised scores (cosines in [-1, 1]).
_ROUNDING_SLACK = 1e-4

#: The int8 scorer looks for each row's k-th largest score in a strided sample of this many times
#: k tools first (:class:`Int8Scorer`): at 100,000 tools and k = 64, a sample of 2,048 and a pool
#: of about 3,000 tools instead of a partition of all 100,000.
_SAMPLE_PER_K = 32


class Scorer(Protocol):
    """What the router needs: ``raw(queries, k=, floor=) -> (m, n_tools) float32`` cosines.

    Entries of the best ``k`` tools of each row, and of every tool whose cosine may reach ``floor``,
    are exact; any other entry is below both (the int8 scorer leaves its approximation there).
    """

    name: str

    def raw(self, queries: np.ndarray, *, k: int, floor: float) -> np.ndarray: ...


class ExactScorer:
    """``queries @ vectors.T`` in float32.

    Parameters
    ----------
    vectors : ndarray, ``(n_tools, dim) float32``
        L2-normalised tool vectors (a memory map is fine).
    """

    name = "exact"

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = vectors

    def raw(self, queries: np.ndarray, *, k: int = 0, floor: float = 1.0) -> np.ndarray:
        """``(m, n_tools) float32`` exact cosines (``k`` and ``floor`` are not needed).

        The product runs on one BLAS thread: the encoder's threads need the cores next, and
        OpenBLAS's idle workers spin for a while after a threaded product. Measured in a process
        that routes the 20 benchmark messages back to back at 1,000 tools (onnx encoder, two
        threads): p50 7.1 ms with two BLAS threads, 2.9 ms with one; alone, one thread costs
        0.1 ms more per three-row product at 1,000 tools and 3.6 ms more at 20,000, where ``auto``
        switches to the int8 scorer.
        """
        with _one_blas_thread():
            return queries @ self.vectors.T


_BLAS = None
_BLAS_LOCK = threading.Lock()


@contextlib.contextmanager
def _one_blas_thread():
    """A context in which numpy's BLAS uses one thread (threadpoolctl; a no-op without it).

    The limit is process-wide, and each exit restores what its entry saw, so two threads inside at
    once could leave BLAS at one thread for good: a lock makes them take turns (a product inside
    takes well under a millisecond). Costs about 0.02 ms a call (the limit set and restored).
    """
    global _BLAS
    with _BLAS_LOCK:
        if _BLAS is None:
            try:
                from threadpoolctl import ThreadpoolController
                _BLAS = ThreadpoolController()  # finds the BLAS numpy loaded (numpy is imported above)
            except ImportError:  # pragma: no cover - a dependency; only slower without it
                _BLAS = False
        if _BLAS is False:
            yield
            return
        with _BLAS.limit(limits=1, user_api="blas"):
            yield


class Int8Scorer:
    """int8 scores (a numba kernel, :mod:`eris_lab._int8`), then an exact re-score of every tool that may matter.

    Parameters
    ----------
    vectors : ndarray, ``(n_tools, dim) float32``
        L2-normalised tool vectors; quantised per row (scale ``127 / max |v|``) once, here.

    Raises
    ------
    ErisLabError
        numba is not installed (``pip install numba``).

    Notes
    -----
    The error of tool ``i``'s dequantised cosine is at most ``e_i = ||v_i - v8_i / s_i|| +
    ||q - q8 / s_q|| * ||v8_i / s_i||`` (Cauchy-Schwarz, both vectors of norm about 1), and ``eps =
    max_i e_i``. Per row, the ``k``-th largest of ``approx - e`` is a lower bound ``L`` of the exact
    ``k``-th largest cosine, so a tool with ``approx_i + e_i < min(L, floor)`` can be neither among
    the best ``k`` nor at the floor; every other tool is re-scored in float32. The set read
    downstream is therefore exact, whatever the data (the approximation only decides how many tools
    are re-scored). Idea as in "quantise, then re-rank the shortlist" of vector search libraries
    (e.g. usearch, faiss ``IndexRefine``); the bound makes the shortlist provably complete instead
    of a fixed size. Per-tool ``e_i`` instead of ``eps`` halved the shortlist at 100,000 random
    tools (669 -> 344).

    No step touches every tool beyond one comparison: the ``k``-th largest score of a strided
    sample of :data:`_SAMPLE_PER_K` ``* k`` tools (``low``) is at most the row's own, so the tools
    at or above ``min(low, floor) - 2 eps``, a few thousand, hold every tool that can matter (a
    tool below it scores exactly below ``low - eps``, under ``k`` sampled tools); ``L`` and the
    shortlist come from those. A partition of every tool costs 0.5 ms at 100,000.
    """

    name = "int8"

    def __init__(self, vectors: np.ndarray) -> None:
        try:
            from ._int8 import int8_dots
        except ImportError as exc:
            raise ErisLabError(f"the int8 scorer needs `pip install numba` ({exc.name} is missing)",
                               where="scorer int8") from None
        self._dots = int8_dots
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        peak = np.abs(self.vectors).max(axis=1)
        scale = np.where(peak > 0, 127.0 / np.maximum(peak, 1e-12), 1.0).astype(np.float32)  # (n,)
        self._weights = np.clip(np.rint(self.vectors * scale[:, None]), -127, 127).astype(np.int8)  # (n, dim)
        self._inverse = (1.0 / scale).astype(np.float32)  # (n,) dequantisation factors
        dequantised = self._weights.astype(np.float32) * self._inverse[:, None]
        self._err_rows = np.linalg.norm(self.vectors - dequantised, axis=1).astype(np.float32)  # (n,)
        self._norms = np.linalg.norm(dequantised, axis=1).astype(np.float32)  # (n,)
        self._err_tools = float(self._err_rows.max(initial=0.0))
        self._max_norm = float(self._norms.max(initial=0.0))
        self.last_rescored = 0  # tools re-scored in float32 by the last call (all rows together)

    def approximate(self, queries: np.ndarray) -> tuple[np.ndarray, float]:
        """``(m, n_tools) float32`` dequantised int8 cosines and their error bound ``eps`` (every tool)."""
        approx, err_query = self._approximate(queries)
        return approx, self._err_tools + err_query * self._max_norm + _ROUNDING_SLACK

    def _approximate(self, queries: np.ndarray) -> tuple[np.ndarray, float]:
        """Dequantised int8 cosines ``(m, n_tools) float32`` and the queries' own quantisation error."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        peak = np.abs(queries).max(axis=1, keepdims=True)
        q_scale = np.where(peak > 0, 127.0 / np.maximum(peak, 1e-12), 1.0).astype(np.float32)  # (m, 1)
        q8 = np.clip(np.rint(queries * q_scale), -127, 127)
        err_query = float(np.linalg.norm(queries - q8 / q_scale, axis=1).max(initial=0.0))
        ints = np.empty((len(queries), len(self._weights)), dtype=np.int32)
        self._dots(self._weights, q8.astype(np.int8), ints)
        approx = ints.astype(np.float32)
        approx *= self._inverse
        approx /= q_scale
        return approx, err_query

    def raw(self, queries: np.ndarray, *, k: int, floor: float) -> np.ndarray:
        """``(m, n_tools) float32``: exact where it can matter (class docstring), approximate below."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        approx, err_query = self._approximate(queries)
        eps = self._err_tools + err_query * self._max_norm + _ROUNDING_SLACK
        n = approx.shape[1]
        if n == 0:  # an empty catalogue: nothing to rank or re-score
            self.last_rescored = 0
            return approx
        k = min(max(k, 1), n)
        step = n // (k * _SAMPLE_PER_K)
        if step > 1:  # low: at most each row's k-th largest, from a sample of n / step >= k tools
            low = -np.partition(-approx[:, ::step], k - 1, axis=1)[:, k - 1]
            pool = np.flatnonzero((approx >= np.minimum(low, floor)[:, None] - 2 * eps).any(axis=0))
        else:
            pool = np.arange(n)
        near = approx[:, pool]  # every tool that can matter, and each row's best k approximations
        err = self._err_rows[pool] + (err_query * self._norms[pool] + _ROUNDING_SLACK)  # (len(pool),) e_i
        bound = -np.partition(-(near - err), k - 1, axis=1)[:, k - 1]  # (m,) L <= exact k-th largest
        candidates = pool[(near + err >= np.minimum(bound, floor)[:, None]).any(axis=0)]  # union over rows
        with _one_blas_thread():
            approx[:, candidates] = queries @ self.vectors[candidates].T
        self.last_rescored = len(candidates)
        return approx


def make_scorer(name: str, vectors: np.ndarray) -> Scorer:
    """The scorer ``name`` (:data:`SCORERS`) over ``vectors``; ``auto`` picks by catalogue size.

    Raises :class:`ErisLabError` (``where="scorer"``) for an unknown name.
    """
    if name not in SCORERS:
        raise ErisLabError(f"expected one of {', '.join(SCORERS)}, got {name!r}", where="scorer")
    if name == "auto":
        name = "int8" if len(vectors) >= AUTO_INT8_MIN_TOOLS else "exact"
    return Int8Scorer(vectors) if name == "int8" else ExactScorer(vectors)
