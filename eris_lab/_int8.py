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

Where the CPU has AVX-512 VNNI (Intel since Cascade Lake and Ice Lake, AMD since Zen 4),
:func:`vnni_dots` computes the same integers with ``vpdpbusd``, which multiplies 64 byte pairs and
adds them four at a time into sixteen int32 lanes in one instruction. LLVM does not find that
instruction for :func:`int8_dots`'s loop (it widens to 16 bits and uses ``vpmaddwd``), so
:func:`_row_dot` writes it as an LLVM intrinsic. ``vpdpbusd`` multiplies unsigned by signed
bytes: the query is shifted to ``q + 128`` (1..255), and ``128 * sum(tool row)`` is subtracted
again, so the result is exact. On the 2-core box (AVX-512 VNNI, one thread, 100,000 tools of 384
dimensions): one query row 2.01 -> 1.30 ms, three rows 6.28 -> 1.51 ms (:data:`HAS_VNNI` says
whether this host takes that path).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import binding as _llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["int8_dots", "vnni_dots", "HAS_VNNI", "VNNI_WIDTH"]

#: Bytes one ``vpdpbusd`` reads from each operand; :func:`vnni_dots` needs rows of a multiple of it.
VNNI_WIDTH = 64

#: Whether :func:`vnni_dots` can run here: the host has AVX-512 VNNI and numba compiles for the
#: host (``$NUMBA_CPU_NAME`` unset; a portable cache built for another CPU must not meet the
#: instruction).
HAS_VNNI = bool(_llvm.get_host_cpu_features().get("avx512vnni", False)) and numba.config.CPU_NAME is None

_I32X16 = ir.VectorType(ir.IntType(32), 16)


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


@intrinsic
def _row_dot(typingctx, tools, row, query):  # pragma: no cover - compiled
    """``int32(query . tools[row])`` with ``vpdpbusd``: ``tools`` ``(n, dim) int8`` C-contiguous,
    ``query`` ``(dim,) uint8`` contiguous, ``dim`` a multiple of :data:`VNNI_WIDTH` (the caller pads)."""
    if not all(isinstance(a, types.Array) and a.layout == "C" and a.ndim == d
               for a, d in ((tools, 2), (query, 1))):
        return None  # the loads below read bytes in a row one after another
    signature = types.int32(tools, row, query)

    def codegen(context, builder, sig, args):
        tools_value, row_value, query_value = args
        tools_array = context.make_array(sig.args[0])(context, builder, tools_value)
        query_array = context.make_array(sig.args[2])(context, builder, query_value)
        dim = builder.extract_value(tools_array.shape, 1)
        byte_pointer = ir.IntType(8).as_pointer()
        row_start = builder.mul(row_value, builder.extract_value(tools_array.strides, 0))
        tool_bytes = builder.gep(builder.bitcast(tools_array.data, byte_pointer), [row_start])
        query_bytes = builder.bitcast(query_array.data, byte_pointer)
        module = builder.module
        dpbusd = cgutils.get_or_insert_function(
            module, ir.FunctionType(_I32X16, [_I32X16, _I32X16, _I32X16]), "llvm.x86.avx512.vpdpbusd.512")
        total = cgutils.get_or_insert_function(
            module, ir.FunctionType(ir.IntType(32), [_I32X16]), "llvm.vector.reduce.add.v16i32")
        lanes = cgutils.alloca_once_value(builder, ir.Constant(_I32X16, None))  # sixteen int32 sums
        zero, step = ir.Constant(dim.type, 0), ir.Constant(dim.type, VNNI_WIDTH)
        with cgutils.for_range_slice(builder, zero, dim, step) as (j, _):
            tool_chunk = builder.load(builder.bitcast(builder.gep(tool_bytes, [j]), _I32X16.as_pointer()), align=1)
            query_chunk = builder.load(builder.bitcast(builder.gep(query_bytes, [j]), _I32X16.as_pointer()), align=1)
            builder.store(builder.call(dpbusd, [builder.load(lanes), query_chunk, tool_chunk]), lanes)
        return builder.call(total, [builder.load(lanes)])

    return signature, codegen


@numba.njit(cache=True, nogil=True, boundscheck=False)
def vnni_dots(tools: np.ndarray, tool_sums: np.ndarray, queries: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """The integers of :func:`int8_dots` through AVX-512 VNNI; call only where :data:`HAS_VNNI`.

    Parameters
    ----------
    tools : ndarray, ``(n_tools, dim) int8``, C-contiguous, ``dim`` a multiple of :data:`VNNI_WIDTH`
    tool_sums : ndarray, ``(n_tools,) int32``, each tool row's sum
    queries : ndarray, ``(m, dim) int8``, values in [-127, 127]
    out : ndarray, ``(m, n_tools) int32``, written in place: ``queries[r] . tools[i]``

    Notes
    -----
    ``(q + 128) . t - 128 * sum(t) = q . t`` exactly: every partial sum stays far inside int32.
    """
    m, dim = queries.shape
    shifted = np.empty((m, dim), dtype=np.uint8)
    for r in range(m):
        for j in range(dim):
            shifted[r, j] = np.uint8(np.int16(queries[r, j]) + 128)
    for i in range(tools.shape[0]):
        correction = np.int32(128) * tool_sums[i]
        for r in range(m):
            out[r, i] = _row_dot(tools, i, shifted[r]) - correction
