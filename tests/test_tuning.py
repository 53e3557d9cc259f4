"""The tuning widgets' callbacks, as functions: cached scores, views, tuner, debouncer."""

from __future__ import annotations

import asyncio

import pytest

from conftest import FakeEmbedder
from eris_lab import tuning
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

    return tuning.Workbench(suite, MemoEmbedder(emb, disk=False)), emb


def test_view_rescoring_never_embeds(bench):
    wb, emb = bench
    before = emb.n
    for t in (0.3, 0.4, 0.5, 0.6):
        v = tuning.view(wb, t, max(t, 0.58), 0.05, "policy")
        assert set(tuning.METRIC_KEYS) <= set(v.metrics)
    assert emb.n == before


def test_view_threshold_moves_offer_size(bench):
    wb, _ = bench
    low = tuning.view(wb, 0.0, 0.0, 0.05, "dense").metrics["mean_offer"]
    high = tuning.view(wb, 0.99, 0.99, 0.05, "dense").metrics["mean_offer"]
    assert low > high
    assert high == 0.0


def test_view_curve_and_misrouted_shapes(bench):
    wb, _ = bench
    v = tuning.view(wb, 0.5, 0.58, 0.05, "policy", max_misrouted=3)
    assert len(v.curve) == len(tuning.CURVE_THRESHOLDS)
    assert all({"threshold", "mean_offer", "recall", "lock_in"} <= set(p) for p in v.curve)
    assert len(v.misrouted) <= 3
    assert v.metrics["n_misrouted"] >= len(v.misrouted)


def test_view_abstain_variant_offers_nothing_when_no_hit(bench):
    wb, _ = bench
    v = tuning.view(wb, 0.999, 0.999, 0.0, "policy-abstain")
    assert v.metrics["full_roster_rate"] == 0.0


def test_view_unknown_strategy_is_an_error(bench):
    wb, _ = bench
    with pytest.raises(ValueError, match="unknown strategy 'nope'"):
        tuning.view(wb, 0.5, 0.58, 0.05, "nope")


def test_tune_and_save_writes_loadable_knobs(bench, tmp_path):
    wb, emb = bench
    before = emb.n
    out = tmp_path / "knobs.toml"
    knobs = tuning.tune_and_save(wb, out, grid={"threshold": (0.4, 0.5), "single_hit_floor": (0.58,), "margin": (0.05,)})
    assert out.is_file()
    assert Knobs.load(out).threshold == knobs.threshold in (0.4, 0.5)
    assert emb.n == before


def test_panel_static_renders_tables_and_figure(bench, capsys):
    wb, _ = bench
    v = tuning.panel(wb, threshold=0.5, single_hit_floor=0.58, margin=0.05, interactive=False)
    assert isinstance(v, tuning.View)


def test_panel_interactive_builds_widgets(bench):
    pytest.importorskip("ipywidgets")
    wb, _ = bench
    box = tuning.panel(wb, threshold=0.5, single_hit_floor=0.58, margin=0.05, interactive=True)
    assert box.children


def test_debouncer_without_a_running_loop_calls_at_once():
    calls = []
    d = tuning.Debouncer(lambda x: calls.append(x), wait_s=10)
    d(1), d(2)
    assert calls == [1, 2] and d.calls == 2
    assert d.flush() is None and d.calls == 2


def test_debouncer_in_a_loop_coalesces_bursts():
    calls = []

    async def burst():
        d = tuning.Debouncer(lambda x: calls.append(x), wait_s=0.05)
        for i in range(5):
            d(i)
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.2)
        return d.calls

    assert asyncio.run(burst()) == 1
    assert calls == [4]


def test_panel_redraw_replaces_outputs_through_widget_state(bench):
    """A slider move sets each Output's ``outputs`` (a state sync JupyterLab always shows); output
    captured with ``with out:`` in the debounced callback is dropped by JupyterLab (the browser test
    in test_lab_browser.py caught a panel that never redrew)."""
    pytest.importorskip("ipywidgets")
    wb, _ = bench
    box = tuning.panel(wb, threshold=0.5, single_hit_floor=0.58, margin=0.05, interactive=True)
    threshold = box.children[0].children[0].children[0]
    out_table, out_fig = box.children[1], box.children[2]
    assert "threshold 0.50" in out_table.outputs[0]["data"]["text/html"]
    threshold.value = 0.6  # no running event loop here: the debouncer redraws at once
    assert len(out_table.outputs) == 1 and "threshold 0.60" in out_table.outputs[0]["data"]["text/html"]
    assert "application/vnd.plotly.v1+json" in out_fig.outputs[0]["data"]
