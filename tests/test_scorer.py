"""Scorers: the int8 scorer's exact set (best k, everything >= floor, each row's best) equals the exact one."""

from __future__ import annotations

import numpy as np
import pytest

from eris_lab.catalog import Catalog, Tool
from eris_lab.errors import ErisLabError
from eris_lab.router import Router
from eris_lab.scorer import AUTO_INT8_MIN_TOOLS, ExactScorer, Int8Scorer, make_scorer

pytest.importorskip("numba", reason="numba is not installed (pyproject lists it; CI has it)")


def _unit(a):
    return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)


def _data(kind: str, n: int, m: int, seed: int):
    """Tool vectors and queries: random (the worst case: no structure), clustered, or near-duplicates."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        tools = _unit(rng.standard_normal((n, 64)))
    elif kind == "clustered":
        centres = _unit(rng.standard_normal((20, 64)))
        tools = _unit(centres[rng.integers(0, 20, n)] + 0.3 * rng.standard_normal((n, 64)))
    else:  # near-duplicates: ties within the int8 error
        base = _unit(rng.standard_normal((n // 10, 64)))
        tools = _unit(np.repeat(base, 10, axis=0) + 1e-3 * rng.standard_normal((n // 10 * 10, 64)))
    queries = _unit(tools[rng.integers(0, len(tools), m)] + 0.5 * rng.standard_normal((m, 64)))
    return tools, queries


@pytest.mark.parametrize("kind", ["random", "clustered", "near-duplicates"])
@pytest.mark.parametrize("k,floor", [(64, 0.5), (1, 1.0), (8, 0.2), (200, -1.0)])
def test_int8_matches_exact_where_the_router_reads(kind, k, floor):
    tools, queries = _data(kind, 5_000, 3, seed=k)
    exact = ExactScorer(tools).raw(queries)
    int8 = Int8Scorer(tools)
    got = int8.raw(queries, k=k, floor=floor)
    assert got.shape == exact.shape and got.dtype == np.float32
    for row_got, row_exact in zip(got, exact):
        top = np.argsort(-row_exact, kind="stable")[:k]
        np.testing.assert_allclose(row_got[top], row_exact[top], atol=1e-6)  # the best k, exact
        above = np.flatnonzero(row_exact >= floor)
        np.testing.assert_allclose(row_got[above], row_exact[above], atol=1e-6)  # every tool at the floor
        assert set(np.argsort(-row_got, kind="stable")[:k]) == set(top)  # nothing else sneaks in
        assert row_got.argmax() == row_exact.argmax()
    assert 0 < int8.last_rescored < len(tools) or floor <= -1.0


def test_int8_matches_exact_at_scale_through_its_block_lower_bound():
    """50,000 tools: each row's k-th score is bounded from 1,563 blocks' best lower bounds, two rows at once."""
    tools, queries = _data("random", 50_000, 2, seed=7)
    exact = ExactScorer(tools).raw(queries)
    int8 = Int8Scorer(tools)
    got = int8.raw(queries, k=64, floor=0.5)
    for row_got, row_exact in zip(got, exact):
        top = np.argsort(-row_exact, kind="stable")[:64]
        np.testing.assert_allclose(row_got[top], row_exact[top], atol=1e-6)
        assert set(np.argsort(-row_got, kind="stable")[:64]) == set(top)
    assert 64 <= int8.last_rescored < 5_000  # a shortlist, not the catalogue


@pytest.mark.parametrize("kind", ["random", "clustered"])
def test_int8_product_split_between_threads_scores_as_on_one(kind):
    """50,000 tools on two threads (two shares of 25,000 rows, three query rows): the same scores."""
    tools, queries = _data(kind, 50_000, 3, seed=3)
    one, two = Int8Scorer(tools, threads=1), Int8Scorer(tools, threads=2)
    calls = []
    kernel = two._dots
    two._dots = lambda start, stop, q, out: (calls.append(stop - start), kernel(start, stop, q, out))
    np.testing.assert_array_equal(two.raw(queries, k=64, floor=0.5), one.raw(queries, k=64, floor=0.5))
    assert sorted(calls) == [25_000, 25_000]
    calls.clear()
    small = Int8Scorer(tools[:30_000], threads=2)
    small._dots = lambda start, stop, q, out: (calls.append(stop - start), kernel(start, stop, q, out))
    small.raw(queries, k=8, floor=0.5)
    assert calls == [30_000]  # below two shares' worth of tools: one thread


def _vnni_or_skip(bits=None):
    from eris_lab import _int8

    if not _int8.HAS_VNNI or (bits == 512 and _int8.VNNI_BITS < 512):
        pytest.skip(f"this CPU has no {'AVX-512 ' if bits == 512 else ''}VNNI: only the portable kernel runs here")
    return _int8


@pytest.mark.parametrize("bits", [512, 256])
@pytest.mark.parametrize("dim", [64, 384, 100, 1])
def test_vnni_kernel_gives_the_portable_kernels_integers(dim, bits):
    """Every int8 value, the extremes included (q = -127 shifts to 1, q = 127 to 255), any width:
    a width that is not a multiple of 64 is padded with zero columns, as the scorer pads. Both
    instruction widths where the host has AVX-512 VNNI (it runs AVX-VNNI's 256-bit form too)."""
    _int8 = _vnni_or_skip(bits)
    assert _int8.vnni_works(bits)
    rng = np.random.default_rng(dim)
    tools = rng.integers(-127, 128, (300, dim)).astype(np.int8)
    tools[0], tools[1] = 127, -127
    queries = rng.integers(-127, 128, (3, dim)).astype(np.int8)
    queries[0], queries[1] = -127, 127
    expected = np.empty((3, 300), dtype=np.int32)
    _int8.int8_dots(tools, queries, expected)
    np.testing.assert_array_equal(expected, queries.astype(np.int64) @ tools.T.astype(np.int64))
    pad = -dim % _int8.VNNI_WIDTH
    wide, wide_queries = np.pad(tools, ((0, 0), (0, pad))), np.pad(queries, ((0, 0), (0, pad)))
    got = np.empty_like(expected)
    _int8.vnni_dots(wide, wide.sum(axis=1, dtype=np.int32), wide_queries, got, bits=bits)
    np.testing.assert_array_equal(got, expected)


def _avx2_or_skip():
    from eris_lab import _int8

    if not _int8.HAS_AVX2:
        pytest.skip("this CPU has no AVX2: only the portable kernel runs here")
    return _int8


@pytest.mark.parametrize("dim", [64, 384, 100, 1])
def test_avx2_kernel_gives_the_portable_kernels_integers(dim):
    """Every int8 value, the extremes included: |q| = 127 times t = +-127 in both bytes of a pair
    sums to 32,258, inside int16 (vpmaddubsw would saturate at 32,767 with a query shifted to
    0..255, as the VNNI kernel shifts it); a width that is not a multiple of 64 is padded."""
    _int8 = _avx2_or_skip()
    assert _int8.avx2_works()
    rng = np.random.default_rng(dim)
    tools = rng.integers(-127, 128, (300, dim)).astype(np.int8)
    tools[0], tools[1] = 127, -127
    queries = rng.integers(-127, 128, (3, dim)).astype(np.int8)
    queries[0], queries[1] = -127, 127
    expected = queries.astype(np.int64) @ tools.T.astype(np.int64)
    pad = -dim % _int8.VNNI_WIDTH
    got = np.empty((3, 300), dtype=np.int32)
    _int8.avx2_dots(np.pad(tools, ((0, 0), (0, pad))), np.pad(queries, ((0, 0), (0, pad))), got)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kernel", ["vnni", "avx2"])
@pytest.mark.parametrize("dim", [384, 100])
def test_int8_scorer_scores_alike_on_each_kernel(dim, kernel):
    """The fast kernels give the portable loop's scores and shortlists, on two threads (each
    thread a share of the rows) and on one."""
    _vnni_or_skip() if kernel == "vnni" else _avx2_or_skip()
    rng = np.random.default_rng(dim)
    tools, queries = _unit(rng.standard_normal((3_000, dim))), _unit(rng.standard_normal((2, dim)))
    portable = Int8Scorer(tools, kernel="portable")
    for threads in (1, 2):
        fast = Int8Scorer(tools, kernel=kernel, threads=threads)
        assert (fast.kernel, portable.kernel) == (kernel, "portable")
        np.testing.assert_array_equal(fast.raw(queries, k=8, floor=0.3), portable.raw(queries, k=8, floor=0.3))
        assert fast.last_rescored == portable.last_rescored


def test_int8_kernel_names_are_checked():
    from eris_lab import _int8

    tools = _unit(np.ones((3, 4)))
    with pytest.raises(ErisLabError, match="^scorer int8 kernel: expected one of vnni, avx2, portable, got 'avx'$"):
        Int8Scorer(tools, kernel="avx")
    best = "vnni" if _int8.vnni_works() else "avx2" if _int8.avx2_works() else "portable"
    assert Int8Scorer(tools).kernel == best
    if not _int8.vnni_works():
        with pytest.raises(ErisLabError, match="no VNNI"):
            Int8Scorer(tools, kernel="vnni")
    if not _int8.avx2_works():
        with pytest.raises(ErisLabError, match="no AVX2"):
            Int8Scorer(tools, kernel="avx2")


def _failing(*args):
    raise RuntimeError("LLVM could not select the instruction")


def test_a_vnni_kernel_that_fails_its_check_leaves_the_next_kernel(monkeypatch):
    """Where LLVM cannot select vpdpbusd (or it gave other integers) the scorer takes the AVX2
    kernel where it works, else the portable loop; where that fails too, the portable loop."""
    from eris_lab import _int8

    monkeypatch.setattr(_int8, "_VNNI_CHECKED", {})
    monkeypatch.setitem(_int8._VNNI_KERNELS, _int8.VNNI_BITS or 512, _failing)
    assert not _int8.vnni_works()
    assert Int8Scorer(_unit(np.ones((3, 4)))).kernel == ("avx2" if _int8.avx2_works() else "portable")
    monkeypatch.setattr(_int8, "_AVX2_CHECKED", {})
    monkeypatch.setattr(_int8, "_avx2_kernel", _failing)
    assert not _int8.avx2_works()
    assert Int8Scorer(_unit(np.ones((3, 4)))).kernel == "portable"


def test_int8_approximation_error_stays_within_its_bound():
    tools, queries = _data("random", 2_000, 4, seed=1)
    approx, eps = Int8Scorer(tools).approximate(queries)
    assert 0 < eps < 0.05
    assert np.abs(approx - queries @ tools.T).max() <= eps


def test_make_scorer_auto_picks_by_size_and_rejects_unknown_names():
    small = _unit(np.ones((3, 4)))
    assert make_scorer("auto", small).name == "exact" and make_scorer("int8", small).name == "int8"
    assert make_scorer("auto", np.zeros((AUTO_INT8_MIN_TOOLS, 4), dtype=np.float32)).name == "int8"
    with pytest.raises(ErisLabError) as info:
        make_scorer("hnsw", small)
    assert str(info.value) == "scorer: expected one of auto, exact, int8, got 'hnsw'"
    with pytest.raises(ErisLabError, match="^scorer: expected one of auto, exact, int8, got 'fast'$"):
        Router(Catalog([Tool(name="a:b", description="x")]), scorer="fast")


def test_router_routes_the_same_with_every_scorer(fake_embedder):
    """Synthetic tools around the fake embedder's vectors: hits, ranked tools and offers agree."""
    rng = np.random.default_rng(3)
    words = ["weather", "forecast", "mail", "timer", "note", "music", "news", "calendar", "battery", "convert"]
    tools = [Tool(name=f"d{i % 25}:t{i}", description=f"{words[i % 10]} {words[(i * 7) % 10]} tool {i}")
             for i in range(3_000)]
    catalog = Catalog(tools)
    vectors = fake_embedder.embed([t.description for t in tools]) + 0.05 * rng.standard_normal((3_000, 256))
    routed = {}
    for scorer in ("exact", "int8"):
        router = Router(catalog, fake_embedder, tool_vectors=vectors.astype(np.float32), scorer=scorer)
        routed[scorer] = [(r.hits, r.offer.names, router.last_ranked) for r in
                          (router.route(q) for q in ("weather forecast for tomorrow please", "play some music now",
                                                     "set a timer and convert the units", "what is new in the news"))]
    assert routed["exact"] == routed["int8"]


@pytest.mark.parametrize("scorer", [ExactScorer, Int8Scorer])
def test_a_scorer_over_no_tools_returns_no_columns(scorer):
    raw = scorer(np.zeros((0, 8), dtype=np.float32)).raw(np.ones((2, 8), dtype=np.float32), k=5, floor=0.3)
    assert raw.shape == (2, 0)


def test_exact_product_runs_on_one_blas_thread_and_restores_the_pool():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def numpy_blas_threads():  # numpy's own BLAS (scipy or torch may load others later)
        return [p["num_threads"] for p in threadpoolctl.threadpool_info() if "numpy" in p["filepath"]]

    if not numpy_blas_threads():
        pytest.skip("numpy's BLAS is not one threadpoolctl finds by path")
    seen = []

    class Recording:
        def __init__(self, vectors):
            self.vectors = vectors

        @property
        def T(self):  # read inside the product's context
            seen.append(numpy_blas_threads())
            return self.vectors.T

    vectors = np.eye(4, dtype=np.float32)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):  # as on a 2-core box, whatever this one has
        out = ExactScorer(Recording(vectors)).raw(vectors[:2])
        assert numpy_blas_threads() == [2]  # restored after the product
    np.testing.assert_array_equal(out, vectors[:2])
    assert seen == [[1]]  # OpenBLAS's spinning workers would take the encoder's cores

