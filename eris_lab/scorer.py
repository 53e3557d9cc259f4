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
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import numpy as np

from .errors import ErisLabError

__all__ = ["Scorer", "ExactScorer", "Int8Scorer", "SCORERS", "INT8_KERNELS", "AUTO_INT8_MIN_TOOLS", "make_scorer"]

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

#: Kernels of the int8 product (``Int8Scorer(kernel=...)``); the default is the first of ``vnni`` and
#: ``avx2`` that this CPU has and that passes its check (:func:`eris_lab._int8.vnni_works`,
#: :func:`eris_lab._int8.avx2_works`), else ``portable``. All give the same integers.
INT8_KERNELS: dict[str, str] = {
    "vnni": "vpdpbusd, 64 byte products per instruction (AVX-512 VNNI), 32 (AVX-VNNI)",
    "avx2": "vpsignb + vpmaddubsw + vpmaddwd, 32 byte products per step (AVX2, as ggml's mul_sum_i8_pairs)",
    "portable": "a loop LLVM vectorises for any CPU (16-bit products, vpmaddwd on x86)",
}

#: Added to the int8 error bound: float32 rounding of the dequantised scores (cosines in [-1, 1]).
_ROUNDING_SLACK = 1e-4

#: Fewer tools than this per thread and the int8 product runs on one thread: handing a share to
#: another thread costs about 0.05 ms, what a thread's product of 20,000 tools takes.
_MIN_TOOLS_PER_THREAD = 20_000

#: The int8 scorer bounds each row's k-th largest score from the best lower bound of each group of
#: this many tools (:class:`Int8Scorer`): at 100,000 tools, 3,125 group maxima and a pool of about
#: 450 tools to re-check for k = 64 (random vectors), instead of a partition of all 100,000.
_GROUP_SIZE = 32


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
    threads : int, optional
        Threads of the int8 product (:meth:`_product`); default the encoder's
        (``embed.encoder_threads``: ``$OMP_NUM_THREADS``, else up to two cores). A catalogue below
        ``2 * _MIN_TOOLS_PER_THREAD`` tools is scored on one.
    kernel : {"vnni", "avx2", "portable"}, optional
        The integer product's kernel (:data:`INT8_KERNELS`); default ``vnni`` where the CPU has
        AVX-512 VNNI or AVX-VNNI, else ``avx2`` where it has AVX2, else ``portable``. All give the
        same integers.

    Raises
    ------
    ErisLabError
        numba is not installed (``pip install numba``); an unknown ``kernel``, or ``vnni`` (``avx2``)
        on a CPU without VNNI (AVX2).

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

    No step partitions every tool (0.8 ms at 100,000): each group of :data:`_GROUP_SIZE` tools
    gives its best lower bound ``approx_i - err_i - slack`` (``slack`` bounds the query's share of
    ``e_i`` by the largest norm), and the ``k``-th largest of those, ``low``, is at most the row's
    exact ``k``-th largest cosine (``k`` distinct tools reach it). Only tools with ``approx_i +
    err_i >= min(low, floor) - slack``, about 450 of 100,000 random tools for ``k = 64``, can
    matter; ``L`` and the shortlist come from those, row by row (each row pools at least its ``k``
    group leaders). A group is every ``n / 32``-th tool, so its maximum is one vectorised pass; a
    strided sample of 2,048 tools in place of the group maxima pooled 9,000 (its ``k``-th best
    ranks about 3,000th) and cost 0.3 ms more per row.
    """

    name = "int8"

    def __init__(self, vectors: np.ndarray, *, threads: int | None = None, kernel: str | None = None) -> None:
        try:
            from . import _int8
        except ImportError as exc:
            raise ErisLabError(f"the int8 scorer needs `pip install numba` ({exc.name} is missing)",
                               where="scorer int8") from None
        from .embed import encoder_threads

        if kernel not in (None, *INT8_KERNELS):
            raise ErisLabError(f"expected one of {', '.join(INT8_KERNELS)}, got {kernel!r}", where="scorer int8 kernel")
        if kernel == "vnni" and not _int8.vnni_works():
            raise ErisLabError("this CPU has no VNNI (or $NUMBA_CPU_NAME is set, or LLVM could not select "
                               "vpdpbusd): use kernel='portable'", where="scorer int8 kernel")
        if kernel == "avx2" and not _int8.avx2_works():
            raise ErisLabError("this CPU has no AVX2 (or $NUMBA_CPU_NAME is set, or LLVM could not select "
                               "vpmaddubsw): use kernel='portable'", where="scorer int8 kernel")
        self.kernel = kernel or ("vnni" if _int8.vnni_works() else "avx2" if _int8.avx2_works() else "portable")
        self._int8 = _int8
        self.threads = max(1, threads if threads is not None else encoder_threads())
        # threads start on the first split product (ThreadPoolExecutor starts them on demand)
        self._pool = (ThreadPoolExecutor(max_workers=self.threads - 1, thread_name_prefix="eris-int8")
                      if self.threads > 1 else None)
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        peak = np.abs(self.vectors).max(axis=1)
        scale = np.where(peak > 0, 127.0 / np.maximum(peak, 1e-12), 1.0).astype(np.float32)  # (n,)
        self._weights = np.clip(np.rint(self.vectors * scale[:, None]), -127, 127).astype(np.int8)  # (n, dim)
        if self.kernel in ("vnni", "avx2"):  # zero columns up to whole 64-byte chunks: no product changes
            pad = -self.vectors.shape[1] % _int8.VNNI_WIDTH
            self._weights = np.ascontiguousarray(np.pad(self._weights, ((0, 0), (0, pad))))
        self._weight_sums = self._weights.sum(axis=1, dtype=np.int32) if self.kernel == "vnni" else None  # (n,) its correction
        self._inverse = (1.0 / scale).astype(np.float32)  # (n,) dequantisation factors
        dequantised = self._weights[:, :self.vectors.shape[1]].astype(np.float32) * self._inverse[:, None]
        self._err_rows = np.linalg.norm(self.vectors - dequantised, axis=1).astype(np.float32)  # (n,)
        self._norms = np.linalg.norm(dequantised, axis=1).astype(np.float32)  # (n,)
        self._err_tools = float(self._err_rows.max(initial=0.0))
        self._max_norm = float(self._norms.max(initial=0.0))
        self.last_rescored = 0  # tools re-scored in float32 by the last call (all rows together)

    def approximate(self, queries: np.ndarray) -> tuple[np.ndarray, float]:
        """``(m, n_tools) float32`` dequantised int8 cosines and their error bound ``eps`` (every tool)."""
        approx, err_query = self._approximate(queries)
        return approx, self._err_tools + float(err_query.max(initial=0.0)) * self._max_norm + _ROUNDING_SLACK

    def _approximate(self, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Dequantised int8 cosines ``(m, n_tools) float32`` and each query row's own quantisation
        error ``||q - q8 / s_q||``, ``(m,) float32``."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        peak = np.abs(queries).max(axis=1, keepdims=True)
        q_scale = np.where(peak > 0, 127.0 / np.maximum(peak, 1e-12), 1.0).astype(np.float32)  # (m, 1)
        q8 = np.clip(np.rint(queries * q_scale), -127, 127)
        err_query = np.linalg.norm(queries - q8 / q_scale, axis=1).astype(np.float32)
        q8 = q8.astype(np.int8)
        if q8.shape[1] < self._weights.shape[1]:  # the VNNI or AVX2 kernel's zero columns
            q8 = np.pad(q8, ((0, 0), (0, self._weights.shape[1] - q8.shape[1])))
        ints = np.empty((len(queries), len(self._weights)), dtype=np.int32)
        self._product(q8, ints)
        approx = np.multiply(ints, self._inverse, dtype=np.float32)
        approx /= q_scale
        return approx, err_query

    def _product(self, q8: np.ndarray, out: np.ndarray) -> None:
        """``out = q8 @ weights.T`` in int32, the tool rows split between :attr:`threads` threads.

        The kernel releases the GIL, so each thread reads its own share of the int8 matrix; the
        calling thread takes the first share, and the helpers sleep between calls (no spinning that
        would take the cores the encoder needs next). Measured at 100,000 tools on the 2-core box
        (the kernel alone, interleaved, p50): one query row 1.31 -> 1.10 ms on two threads (reading
        the 38 MB bounds it), three rows 3.65 -> 1.91 ms (the products bound it).
        """
        n = len(self._weights)
        shares = min(self.threads, max(1, n // _MIN_TOOLS_PER_THREAD))
        if shares == 1 or self._pool is None:
            self._dots(0, n, q8, out)
            return
        bounds = np.linspace(0, n, shares + 1).astype(int)
        pending = [self._pool.submit(self._dots, a, b, q8, out[:, a:b]) for a, b in zip(bounds[1:-1], bounds[2:])]
        self._dots(0, bounds[1], q8, out[:, :bounds[1]])
        for job in pending:
            job.result()

    def _dots(self, start: int, stop: int, q8: np.ndarray, out: np.ndarray) -> None:
        """``out = q8 @ weights[start:stop].T`` in int32 with :attr:`kernel` (:mod:`eris_lab._int8`)."""
        if self.kernel == "vnni":
            self._int8.vnni_dots(self._weights[start:stop], self._weight_sums[start:stop], q8, out)
        elif self.kernel == "avx2":
            self._int8.avx2_dots(self._weights[start:stop], q8, out)
        else:
            self._int8.int8_dots(self._weights[start:stop], q8, out)

    def raw(self, queries: np.ndarray, *, k: int, floor: float) -> np.ndarray:
        """``(m, n_tools) float32``: exact where it can matter (class docstring), approximate below."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        approx, err_query = self._approximate(queries)
        n = approx.shape[1]
        if n == 0:  # an empty catalogue: nothing to rank or re-score
            self.last_rescored = 0
            return approx
        k = min(max(k, 1), n)
        # e_i <= err_rows_i + slack: the query's share bounded by the largest dequantised norm
        slack = err_query * self._max_norm + _ROUNDING_SLACK  # (m,)
        groups = n // _GROUP_SIZE
        if groups >= k:  # low <= each row's exact k-th largest: the k-th best of the groups' best lower bounds
            lower = approx - (self._err_rows + slack[:, None])  # (m, n) <= exact cosines
            # group g holds tools g, g + groups, g + 2 groups, ...: a max over rows of a (size, groups) view
            best = lower[:, :groups * _GROUP_SIZE].reshape(len(lower), _GROUP_SIZE, groups).max(axis=1)
            best = np.hstack([best, lower[:, groups * _GROUP_SIZE:]])  # the last few tools lead alone
            low = -np.partition(-best, k - 1, axis=1)[:, k - 1]
        else:
            low = np.full(len(approx), -np.inf, dtype=np.float32)
        reach = np.minimum(low, floor) - slack  # (m,) a tool below it in approx + err_rows cannot matter
        loose = approx + self._err_rows  # (m, n)
        chosen = []
        for r in range(len(approx)):
            pool = np.flatnonzero(loose[r] >= reach[r])  # every tool that can matter to row r
            near = approx[r, pool]
            err = self._err_rows[pool] + (err_query[r] * self._norms[pool] + _ROUNDING_SLACK)  # e_i
            bound = -np.partition(-(near - err), k - 1)[k - 1]  # L <= the row's exact k-th largest
            chosen.append(pool[near + err >= min(bound, floor)])
        candidates = np.unique(np.concatenate(chosen)) if len(chosen) > 1 else chosen[0]
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
