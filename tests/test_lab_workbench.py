"""The tuning widgets' callbacks, as functions: cached scores, views, tuner, debouncer."""

from __future__ import annotations

import asyncio

import pytest

from conftest import FakeEmbedder
from eris_lab.lab import workbench
from eris_lab.eval.datasets import load_suite
from eris_lab.knobs import Knobs


class CountingEmbedder:
    """Wraps the fake embedder and counts texts embedded (a slider move must embed none)."""

    def __init__(self, inner):
        self.inner = inner
        self.model_id = "counting-" + inner.model_id
        self.n = 0

    def embed(self, texts):
        self.n += len(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def bench():
    suite = load_suite("demo", limit=40)
    emb = CountingEmbedder(FakeEmbedder())
    from eris_lab.strategies import MemoEmbedder

    return workbench.Workbench(suite, MemoEmbedder(emb, disk=False)), emb


def test_view_rescoring_never_embeds(bench):
    wb, emb = bench
    before = emb.n
    for t in (0.3, 0.4, 0.5, 0.6):
        v = workbench.view(wb, t, max(t, 0.58), 0.05, "policy")
        assert set(workbench.METRIC_KEYS) <= set(v.metrics)
    assert emb.n == before


def test_view_threshold_moves_offer_size(bench):
    wb, _ = bench
    low = workbench.view(wb, 0.0, 0.0, 0.05, "dense").metrics["mean_offer"]
    high = workbench.view(wb, 0.99, 0.99, 0.05, "dense").metrics["mean_offer"]
    assert low > high
    assert high == 0.0


def test_view_curve_and_misrouted_shapes(bench):
    wb, _ = bench
    v = workbench.view(wb, 0.5, 0.58, 0.05, "policy", max_misrouted=3)
    assert len(v.curve) == len(workbench.CURVE_THRESHOLDS)
    assert all({"threshold", "mean_offer", "recall", "lock_in"} <= set(p) for p in v.curve)
    assert len(v.misrouted) <= 3
    assert v.metrics["n_misrouted"] >= len(v.misrouted)


def test_view_abstain_variant_offers_nothing_when_no_hit(bench):
    wb, _ = bench
    v = workbench.view(wb, 0.999, 0.999, 0.0, "policy-abstain")
    assert v.metrics["full_roster_rate"] == 0.0


def test_view_unknown_strategy_is_an_error(bench):
    wb, _ = bench
    with pytest.raises(ValueError, match="unknown strategy 'nope'"):
        workbench.view(wb, 0.5, 0.58, 0.05, "nope")


def test_tune_and_save_writes_loadable_knobs(bench, tmp_path):
    wb, emb = bench
    before = emb.n
    out = tmp_path / "knobs.toml"
    knobs = workbench.tune_and_save(wb, out, grid={"threshold": (0.4, 0.5), "single_hit_floor": (0.58,), "margin": (0.05,)})
    assert out.is_file()
    assert Knobs.load(out).threshold == knobs.threshold in (0.4, 0.5)
    assert emb.n == before


def test_panel_static_renders_tables_and_figure(bench, capsys):
    wb, _ = bench
    v = workbench.panel(wb, threshold=0.5, single_hit_floor=0.58, margin=0.05, interactive=False)
    assert isinstance(v, workbench.View)


def test_panel_interactive_builds_widgets(bench):
    pytest.importorskip("ipywidgets")
    wb, _ = bench
    box = workbench.panel(wb, threshold=0.5, single_hit_floor=0.58, margin=0.05, interactive=True)
    assert box.children
    status = box.children[0].children[1].children[2]
    assert "drawn in" in status.value and "nothing re-embedded" in status.value  # redraw time, render included


def test_debouncer_without_a_running_loop_calls_at_once():
    calls = []
    d = workbench.Debouncer(lambda x: calls.append(x), wait_s=10)
    d(1), d(2)
    assert calls == [1, 2] and d.calls == 2
    assert d.flush() is None and d.calls == 2


def test_debouncer_in_a_loop_coalesces_bursts():
    calls = []

    async def burst():
        d = workbench.Debouncer(lambda x: calls.append(x), wait_s=0.05)
        for i in range(5):
            d(i)
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.2)
        return d.calls

    assert asyncio.run(burst()) == 1
    assert calls == [4]


# -- the fast path (memoised decisions, cached curves) equals the reference path ------------------

#: Knob settings across every variant: thresholds on and off the curve grid, the floor below and
#: above the threshold, margins from none to wide (near-ties, demotions, empty fallbacks all occur).
SETTINGS = [(0.5, 0.58, 0.05, "policy"), (0.41, 0.6, 0.0, "policy"), (0.3, 0.7, 0.2, "policy"),
            (0.2, 0.58, 0.05, "policy-cluster"), (0.45, 0.65, 0.03, "policy-cluster"),
            (0.55, 0.5, 0.05, "policy-abstain"), (0.35, 0.62, 0.1, "policy-abstain"),
            (0.25, 0.58, 0.05, "dense"), (0.6, 0.58, 0.05, "dense")]
CURVE_SAMPLE = (0.2, 0.26, 0.33, 0.41, 0.5, 0.62, 0.8)  # a sub-grid keeps the reference curve quick


@pytest.fixture(scope="module")
def demo_bench():
    """The whole demo suite (every rule occurs there), fake embedder, counting the texts it embeds."""
    from eris_lab.strategies import MemoEmbedder

    emb = CountingEmbedder(FakeEmbedder())
    return workbench.Workbench(load_suite("demo"), MemoEmbedder(emb, disk=False)), emb


def test_fast_headline_equals_reference_metrics_and_misrouted(demo_bench):
    wb, _ = demo_bench
    rules = set()
    for t, f, m, s in SETTINGS:
        fast = wb.headline(t, f, m, s, max_misrouted=400)
        reference = workbench._headline_of(wb.metrics(t, f, m, s), 400)
        assert fast == reference, (t, f, m, s)
        rules |= {r.rule for r in wb.results(t, f, m, s)}
    # the comparison covers the policy's branches, not only the easy ones
    assert {"RANKED_SUBSET", "AFFINITY_MARGIN_UNION", "SINGLE_STRONG_HIT", "UNSURE_FULL_ROSTER",
            "UNSURE_DOMAIN_CLUSTER", "EMPTY_AFTER_POLICY", "CONVERSATIONAL", "LEXICAL_FORCED_ONLY"} <= rules


def test_fast_curve_equals_reference_curve(demo_bench):
    wb, _ = demo_bench
    for _, f, m, s in SETTINGS:
        assert wb.curve(f, m, s, CURVE_SAMPLE) == wb.curve(f, m, s, CURVE_SAMPLE, reference=True), (f, m, s)


def test_fast_view_equals_reference_view(demo_bench):
    wb, _ = demo_bench
    fast, reference = (workbench.view(wb, 0.47, 0.6, 0.05, "policy", reference=r) for r in (False, True))
    assert (fast.metrics, fast.curve, fast.misrouted) == (reference.metrics, reference.curve, reference.misrouted)
    assert set(fast.timings_ms) == {"decide", "curve"}


def test_fast_path_honours_domain_floors():
    from eris_lab.strategies import MemoEmbedder

    knobs = Knobs(domain_floors={"mail": 0.45, "web": 0.5, "calendar": 0.4})
    wb = workbench.Workbench(load_suite("demo", limit=150), MemoEmbedder(FakeEmbedder(), disk=False), base_knobs=knobs)
    assert wb._raw is not wb._kept  # some hit falls under a floor: the filtered path is exercised
    for t, f, m, s in SETTINGS[::2]:
        assert wb.headline(t, f, m, s, max_misrouted=200) == workbench._headline_of(wb.metrics(t, f, m, s), 200)
    assert wb.curve(0.58, 0.05, "policy", CURVE_SAMPLE) == wb.curve(0.58, 0.05, "policy", CURVE_SAMPLE, reference=True)


def test_a_slider_drag_asks_the_embedder_for_nothing(demo_bench):
    wb, emb = demo_bench
    wb.clear_caches()
    before, lookups = emb.n, []
    wb.memo.embed = lambda texts, _embed=wb.memo.embed: lookups.append(texts) or _embed(texts)  # counts memo hits too
    try:
        for t in (0.5, 0.49, 0.48, 0.31):
            workbench.render(wb, workbench.view(wb, t, 0.58, 0.05, "policy"))
        for f, m, s in ((0.6, 0.05, "policy"), (0.6, 0.08, "policy"), (0.6, 0.08, "policy-cluster"),
                        (0.6, 0.08, "policy-abstain"), (0.6, 0.08, "dense")):
            workbench.render(wb, workbench.view(wb, 0.31, f, m, s))
    finally:
        del wb.memo.embed
    assert emb.n == before and lookups == []


def test_curve_is_cached_per_floor_margin_strategy_and_copied(demo_bench):
    wb, _ = demo_bench
    wb.clear_caches()
    first = wb.curve(0.58, 0.05, "policy")
    decided = len(wb._entries)
    first[0]["recall"] = -1.0  # a caller's edit does not reach the cache
    again = wb.curve(0.58, 0.05, "policy")
    assert len(wb._entries) == decided and again[0]["recall"] != -1.0
    workbench.view(wb, 0.37, 0.58, 0.05, "policy")  # a threshold move: the same curve, no new curve decisions
    assert len(wb._curves) == 1


def test_tuning_bench_reports_every_part_and_no_re_embedding(capsys):
    from eris_lab.bench import tuning as bench

    result = bench.tuning_bench(("demo",), repeats=1, baseline=True, embedder=FakeEmbedder(), limit=25)
    (row,) = result["suites"]
    assert row["n_queries"] == 25 and result["drag"] == len(bench.DRAG)
    for path in ("fast", "baseline"):
        assert row[path]["redraws"] == len(bench.DRAG)
        assert {f"{p}_{q}_ms" for p in ("decide", "curve", "render", "total") for q in ("p50", "p95")} <= set(row[path])
    assert row["embedder"]["drag_model_texts"] == 0 and row["embedder"]["drag_memo_calls"] == 0
    assert row["embedder"]["build_model_texts"] > 0
    assert "p95/scoring" in capsys.readouterr().err


def test_fast_path_with_repeated_and_forced_hits_equals_reference():
    """A Scored whose hits repeat a name (the router never does) or carry forced scores: decide keeps the best."""
    from dataclasses import replace

    from eris_lab.policy import Hit
    from eris_lab.strategies import MemoEmbedder

    wb = workbench.Workbench(load_suite("demo", limit=60), MemoEmbedder(FakeEmbedder(), disk=False))
    for i, s in enumerate(wb.scored):
        if len(s.hits) > 3 and i % 3 == 0:
            top = s.hits[0]
            extra = (Hit(name=s.hits[2].name, score=1.0),) if i % 2 else ()
            hits = sorted(extra + s.hits + (Hit(name=top.name, score=top.score - 0.01),), key=lambda h: -h.score)
            wb.scored[i] = replace(s, hits=tuple(hits))
    wb._index()
    wb.clear_caches()
    for t, f, m, s in SETTINGS:
        assert wb.headline(t, f, m, s, max_misrouted=100) == workbench._headline_of(wb.metrics(t, f, m, s), 100)
        assert wb.curve(f, m, s, CURVE_SAMPLE) == wb.curve(f, m, s, CURVE_SAMPLE, reference=True)


def test_panel_redraw_replaces_outputs_through_widget_state(bench):
    """A slider move sets each Output's ``outputs`` (a state sync JupyterLab always shows); output
    captured with ``with out:`` in the debounced callback is dropped by JupyterLab (the browser test
    in test_lab_server_browser.py caught a panel that never redrew)."""
    pytest.importorskip("ipywidgets")
    wb, _ = bench
    box = workbench.panel(wb, threshold=0.5, single_hit_floor=0.58, margin=0.05, interactive=True)
    threshold = box.children[0].children[0].children[0]
    out_table, out_fig = box.children[1], box.children[2]
    assert "threshold 0.50" in out_table.outputs[0]["data"]["text/html"]
    threshold.value = 0.6  # no running event loop here: the debouncer redraws at once
    assert len(out_table.outputs) == 1 and "threshold 0.60" in out_table.outputs[0]["data"]["text/html"]
    assert "application/vnd.plotly.v1+json" in out_fig.outputs[0]["data"]


def test_policy_variants_re_decide_like_the_registered_strategies(bench):
    """The picker's policy variants are the registry's (strategies.STRATEGIES): at a variant's own
    knobs, the view's offers are the offers of make(name) routing each query."""
    from eris_lab.strategies import Context, make

    wb, _ = bench
    # the view's "policy" slides the reference policy's knobs (the calibrated "policy" strategy
    # fits its own per catalogue): it is the registry's "policy-reference"
    for name in ("policy", "policy-cluster", "policy-abstain"):
        strategy = make("policy-reference" if name == "policy" else name, embedder=wb.memo).fit(wb.suite.catalog)
        k = strategy.knobs_
        results = wb.results(k.threshold, k.single_hit_floor, k.margin, name)
        assert [strategy.offer(q.query, Context(history=q.history)).names for q in wb.suite.queries] == \
            [r.offered for r in results]


def test_a_margin_drag_re_decides_nothing_without_affinity_groups():
    """Tools without a domain never widen on a near-tie (policy.decision_keys' ``widens``), so a
    margin move re-decides no message; the fast view still equals the reference one."""
    from eris_lab.catalog import Catalog, tools_from_json
    from eris_lab.eval.datasets import Query, Suite
    from eris_lab.strategies import MemoEmbedder

    words = ["weather forecast", "stock price", "flight search", "hotel booking", "news headlines",
             "currency rates", "movie times", "recipe search"]
    catalog = Catalog(tools_from_json([{"name": w.replace(" ", "_"), "description": f"Get the {w} for a user.",
                                        "parameters": {"type": "object", "properties": {}}} for w in words]))
    queries = tuple(Query(id=f"q{i}", query=f"please show me the {w} and the {words[(i + 1) % len(words)]} today",
                          gold=(w.replace(" ", "_"),)) for i, w in enumerate(words))
    wb = workbench.Workbench(Suite(name="flat", queries=queries, catalog=catalog), MemoEmbedder(FakeEmbedder(), disk=False))
    assert not wb._widens.any()
    wb.curve(0.58, 0.0, "policy")
    decided = len(wb._entries)
    for margin in (0.05, 0.1, 0.3):
        wb.curve(0.58, margin, "policy")
        assert len(wb._entries) == decided  # every key was already decided
        assert wb.curve(0.58, margin, "policy") == wb.curve(0.58, margin, "policy", reference=True)
