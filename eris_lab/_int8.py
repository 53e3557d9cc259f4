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

Where the CPU has VNNI, :func:`vnni_dots` computes the same integers with ``vpdpbusd``, which
multiplies 64 byte pairs (32 on AVX-VNNI) and adds them four at a time into int32 lanes in one
instruction: AVX-512 VNNI (Intel server CPUs since Cascade Lake, AMD since Zen 4), or AVX-VNNI
(Intel desktop CPUs since Alder Lake, which have no AVX-512). LLVM does not find that
instruction for :func:`int8_dots`'s loop (it widens to 16 bits and uses ``vpmaddwd``), so
:func:`_vnni_row_dot` writes it as an LLVM intrinsic. ``vpdpbusd`` multiplies unsigned by signed
bytes: the query is shifted to ``q + 128`` (1..255), and ``128 * sum(tool row)`` is subtracted
again, so the result is exact. On the 2-core box (AVX-512 VNNI, one thread, 100,000 tools of 384
dimensions): one query row 2.01 -> 1.30 ms, three rows 6.28 -> 1.51 ms (:data:`VNNI_BITS` says
which path this host takes; :func:`vnni_works` checks it once against the portable loop).

Where the CPU has AVX2 but no VNNI (AMD before Zen 4, Intel from Haswell to Skylake),
:func:`avx2_dots` computes the same integers with ``vpmaddubsw``, which multiplies 32 unsigned by
signed byte pairs and adds them two at a time into int16 lanes, then ``vpmaddwd`` by ones into
int32. ``q * t = |q| * (t * sign(q))``: ``vpsignb`` moves the query's sign onto the tool byte and
the query's magnitude (0..127, computed once per query) is the unsigned operand, so a pair sums to
at most ``2 * 127 * 127 = 32,258`` and never saturates int16 (the trick of ggml's
``mul_sum_i8_pairs``, llama.cpp). On the 2-core AMD EPYC box (AVX2, no VNNI, one thread, 100,000
tools of 384 dimensions): one query row 2.74 -> 2.11 ms, three rows 6.40 -> 3.15 ms
(:func:`avx2_works` checks it once against the portable loop).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import binding as _llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["int8_dots", "vnni_dots", "vnni_works", "avx2_dots", "avx2_works", "HAS_VNNI", "HAS_AVX2", "VNNI_BITS",
           "VNNI_WIDTH"]

#: :func:`vnni_dots` and :func:`avx2_dots` need rows of a multiple of this many bytes (the scorer
#: pads with zeros): one 512-bit ``vpdpbusd`` reads 64 bytes of each operand, a 256-bit one or a
#: ``vpmaddubsw`` 32.
VNNI_WIDTH = 64


#: This host's CPU features as LLVM names them; none when numba compiles for another CPU
#: (``$NUMBA_CPU_NAME``: a cache built for it must not meet the instructions below).
_FEATURES = {} if numba.config.CPU_NAME is not None else dict(_llvm.get_host_cpu_features())
#: Width of :func:`vnni_dots`'s ``vpdpbusd`` on this host in bits: 512 (AVX-512 VNNI), 256
#: (AVX-VNNI) or 0 (no VNNI).
VNNI_BITS = 512 if _FEATURES.get("avx512vnni", False) else 256 if _FEATURES.get("avxvnni", False) else 0
HAS_VNNI = VNNI_BITS > 0
#: Whether this host runs :func:`avx2_dots`.
HAS_AVX2 = bool(_FEATURES.get("avx2", False))


def _c_arrays(*typed: tuple[types.Type, int]) -> bool:
    """Whether each numba type is a C-contiguous array of its ``ndim``: the intrinsics below read the
    bytes of a row one after another."""
    return all(isinstance(a, types.Array) and a.layout == "C" and a.ndim == d for a, d in typed)


def _bytes_of(context, builder, array_type, value, row=None):  # pragma: no cover - compiled
    """The array struct of ``value`` and an ``i8*`` to its data, or to row ``row`` of a 2-D array."""
    array = context.make_array(array_type)(context, builder, value)
    data = builder.bitcast(array.data, ir.IntType(8).as_pointer())
    if row is not None:
        data = builder.gep(data, [builder.mul(row, builder.extract_value(array.strides, 0))])
    return array, data


def _load_chunk(builder, base, offset, vector):  # pragma: no cover - compiled
    """``vector`` loaded from the bytes at ``base + offset``, unaligned."""
    return builder.load(builder.bitcast(builder.gep(base, [offset]), vector.as_pointer()), align=1)


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


def _vnni_row_dot(lanes: int):
    """An intrinsic ``int32(query . tools[row])`` through ``vpdpbusd`` on ``lanes`` int32 lanes
    (16: AVX-512 VNNI, 8: AVX-VNNI): ``tools`` ``(n, dim) int8`` and ``query`` ``(dim,) uint8``,
    both C-contiguous, ``dim`` a multiple of :data:`VNNI_WIDTH` (the caller pads)."""
    vector = ir.VectorType(ir.IntType(32), lanes)
    chunk = 4 * lanes  # bytes per instruction

    def typer(typingctx, tools, row, query):  # pragma: no cover - compiled
        return (types.int32(tools, row, query), codegen) if _c_arrays((tools, 2), (query, 1)) else None

    def codegen(context, builder, sig, args):  # pragma: no cover - compiled
        tools_value, row_value, query_value = args
        tools_array, tool_bytes = _bytes_of(context, builder, sig.args[0], tools_value, row_value)
        _, query_bytes = _bytes_of(context, builder, sig.args[2], query_value)
        dim = builder.extract_value(tools_array.shape, 1)
        module = builder.module
        dpbusd = cgutils.get_or_insert_function(
            module, ir.FunctionType(vector, [vector] * 3), f"llvm.x86.avx512.vpdpbusd.{32 * lanes}")
        total = cgutils.get_or_insert_function(
            module, ir.FunctionType(ir.IntType(32), [vector]), f"llvm.vector.reduce.add.v{lanes}i32")
        sums = cgutils.alloca_once_value(builder, ir.Constant(vector, None))  # the int32 lanes
        zero, step = ir.Constant(dim.type, 0), ir.Constant(dim.type, chunk)
        with cgutils.for_range_slice(builder, zero, dim, step) as (j, _):
            query_chunk, tool_chunk = _load_chunk(builder, query_bytes, j, vector), _load_chunk(builder, tool_bytes, j, vector)
            builder.store(builder.call(dpbusd, [builder.load(sums), query_chunk, tool_chunk]), sums)
        return builder.call(total, [builder.load(sums)])

    typer.__name__ = f"_row_dot_{32 * lanes}"
    return intrinsic(typer)


_row_dot_512 = _vnni_row_dot(16)
_row_dot_256 = _vnni_row_dot(8)


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _shifted(queries: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """``queries + 128`` as uint8, ``(m, dim)``: the unsigned operand of ``vpdpbusd``."""
    m, dim = queries.shape
    shifted = np.empty((m, dim), dtype=np.uint8)
    for r in range(m):
        for j in range(dim):
            shifted[r, j] = np.uint8(np.int16(queries[r, j]) + 128)
    return shifted


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _vnni512_dots(tools, tool_sums, queries, out):  # pragma: no cover - compiled
    shifted = _shifted(queries)
    for i in range(tools.shape[0]):
        correction = np.int32(128) * tool_sums[i]
        for r in range(shifted.shape[0]):
            out[r, i] = _row_dot_512(tools, i, shifted[r]) - correction


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _vnni256_dots(tools, tool_sums, queries, out):  # pragma: no cover - compiled
    shifted = _shifted(queries)
    for i in range(tools.shape[0]):
        correction = np.int32(128) * tool_sums[i]
        for r in range(shifted.shape[0]):
            out[r, i] = _row_dot_256(tools, i, shifted[r]) - correction


_VNNI_KERNELS = {512: _vnni512_dots, 256: _vnni256_dots}


def vnni_dots(tools: np.ndarray, tool_sums: np.ndarray, queries: np.ndarray, out: np.ndarray, *,
              bits: int | None = None) -> None:
    """The integers of :func:`int8_dots` through ``vpdpbusd``; call only where :data:`HAS_VNNI`.

    Parameters
    ----------
    tools : ndarray, ``(n_tools, dim) int8``, C-contiguous, ``dim`` a multiple of :data:`VNNI_WIDTH`
    tool_sums : ndarray, ``(n_tools,) int32``, each tool row's sum
    queries : ndarray, ``(m, dim) int8``, values in [-127, 127]
    out : ndarray, ``(m, n_tools) int32``, written in place: ``queries[r] . tools[i]``
    bits : {512, 256}, optional
        The instruction's width; default :data:`VNNI_BITS` (a test runs both where the host has both).

    Notes
    -----
    ``(q + 128) . t - 128 * sum(t) = q . t`` exactly: every partial sum stays far inside int32.
    The kernel releases the GIL (the scorer splits tool rows between threads).
    """
    _VNNI_KERNELS[bits or VNNI_BITS](tools, tool_sums, queries, out)


def _avx2_row_dot():
    """An intrinsic ``int32(query . tools[row])`` through ``vpsignb``, ``vpmaddubsw`` and
    ``vpmaddwd`` on 32-byte chunks: ``tools`` ``(n, dim) int8``, ``magnitude`` ``(dim,) uint8`` (the
    query's ``|q|``) and ``query`` ``(dim,) int8``, all C-contiguous, ``dim`` a multiple of 32."""
    bytes32 = ir.VectorType(ir.IntType(8), 32)
    shorts = ir.VectorType(ir.IntType(16), 16)
    lanes = ir.VectorType(ir.IntType(32), 8)

    def typer(typingctx, tools, row, magnitude, query):  # pragma: no cover - compiled
        typed = _c_arrays((tools, 2), (magnitude, 1), (query, 1))
        return (types.int32(tools, row, magnitude, query), codegen) if typed else None

    def codegen(context, builder, sig, args):  # pragma: no cover - compiled
        tools_value, row_value, magnitude_value, query_value = args
        tools_array, tool_bytes = _bytes_of(context, builder, sig.args[0], tools_value, row_value)
        _, magnitude_bytes = _bytes_of(context, builder, sig.args[2], magnitude_value)
        _, query_bytes = _bytes_of(context, builder, sig.args[3], query_value)
        dim = builder.extract_value(tools_array.shape, 1)
        module = builder.module
        sign = cgutils.get_or_insert_function(module, ir.FunctionType(bytes32, [bytes32] * 2), "llvm.x86.avx2.psign.b")
        pair_sums = cgutils.get_or_insert_function(module, ir.FunctionType(shorts, [bytes32] * 2),
                                                   "llvm.x86.avx2.pmadd.ub.sw")
        widen = cgutils.get_or_insert_function(module, ir.FunctionType(lanes, [shorts] * 2), "llvm.x86.avx2.pmadd.wd")
        total = cgutils.get_or_insert_function(module, ir.FunctionType(ir.IntType(32), [lanes]),
                                               "llvm.vector.reduce.add.v8i32")
        ones = ir.Constant(shorts, [1] * 16)
        sums = cgutils.alloca_once_value(builder, ir.Constant(lanes, None))  # the int32 lanes
        zero, step = ir.Constant(dim.type, 0), ir.Constant(dim.type, 32)

        def chunk(base, j):
            return _load_chunk(builder, base, j, bytes32)

        with cgutils.for_range_slice(builder, zero, dim, step) as (j, _):
            signed = builder.call(sign, [chunk(tool_bytes, j), chunk(query_bytes, j)])  # t * sign(q)
            pairs = builder.call(pair_sums, [chunk(magnitude_bytes, j), signed])  # q * t, two per int16
            builder.store(builder.add(builder.load(sums), builder.call(widen, [pairs, ones])), sums)
        return builder.call(total, [builder.load(sums)])

    typer.__name__ = "_row_dot_avx2"
    return intrinsic(typer)


_row_dot_avx2 = _avx2_row_dot()


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _avx2_kernel(tools, queries, out):  # pragma: no cover - compiled
    m, dim = queries.shape
    magnitude = np.empty((m, dim), dtype=np.uint8)
    for r in range(m):
        for j in range(dim):
            magnitude[r, j] = np.uint8(abs(np.int16(queries[r, j])))
    for i in range(tools.shape[0]):
        for r in range(m):
            out[r, i] = _row_dot_avx2(tools, i, magnitude[r], queries[r])


def avx2_dots(tools: np.ndarray, queries: np.ndarray, out: np.ndarray) -> None:
    """The integers of :func:`int8_dots` through ``vpmaddubsw``; call only where :data:`HAS_AVX2`.

    Parameters
    ----------
    tools : ndarray, ``(n_tools, dim) int8``, C-contiguous, ``dim`` a multiple of :data:`VNNI_WIDTH`
    queries : ndarray, ``(m, dim) int8``, C-contiguous, values in [-127, 127] (-128 would overflow ``|q|``)
    out : ndarray, ``(m, n_tools) int32``, written in place: ``queries[r] . tools[i]``

    Notes
    -----
    Exact (module docstring); the kernel releases the GIL, as the others do.
    """
    _avx2_kernel(tools, queries, out)


_VNNI_CHECKED: dict[int, bool] = {}
_AVX2_CHECKED: dict[str, bool] = {}


def _agrees_with_portable(product) -> bool:
    """Whether ``product(tools, queries, out)`` gives :func:`int8_dots`'s integers on a small sample
    holding every int8 extreme (tool rows of all 127 and all -127, query rows of all -127 and all
    127, ``VNNI_WIDTH`` columns); False where it raises (LLVM could not select its instructions)."""
    rng = np.random.default_rng(0)
    tools = rng.integers(-127, 128, (5, VNNI_WIDTH)).astype(np.int8)
    tools[0], tools[1] = 127, -127
    queries = np.vstack([np.full(VNNI_WIDTH, -127), np.full(VNNI_WIDTH, 127),
                         rng.integers(-127, 128, VNNI_WIDTH)]).astype(np.int8)
    expected, got = np.empty((3, 5), np.int32), np.empty((3, 5), np.int32)
    int8_dots(tools, queries, expected)
    try:
        product(tools, queries, got)
    except Exception:  # noqa: BLE001 - LLVM could not select the instructions: the portable loop stays
        return False
    return bool(np.array_equal(expected, got))


def avx2_works() -> bool:
    """Whether :func:`avx2_dots` compiles here and gives :func:`int8_dots`'s integers
    (:func:`_agrees_with_portable`); checked once per process. False where :data:`HAS_AVX2` is false
    or LLVM could not select the instructions (the scorer then runs the portable loop)."""
    if "avx2" not in _AVX2_CHECKED:
        _AVX2_CHECKED["avx2"] = HAS_AVX2 and _agrees_with_portable(avx2_dots)
    return _AVX2_CHECKED["avx2"]


def vnni_works(bits: int | None = None) -> bool:
    """Whether :func:`vnni_dots` compiles here and gives :func:`int8_dots`'s integers
    (:func:`_agrees_with_portable`); checked once per process. False where :data:`HAS_VNNI` is
    false, or where LLVM could not select the instruction (the scorer then runs the portable loop)."""
    bits = bits or VNNI_BITS
    if bits not in _VNNI_CHECKED:
        _VNNI_CHECKED[bits] = bits in _VNNI_KERNELS and _agrees_with_portable(
            lambda tools, queries, out: vnni_dots(tools, tools.sum(axis=1, dtype=np.int32), queries, out, bits=bits))
    return _VNNI_CHECKED[bits]
