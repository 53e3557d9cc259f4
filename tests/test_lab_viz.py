"""viz: tables, figures and the data behind them (no UMAP compile in the fast suite)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import FakeEmbedder
from eris_lab.bench import llm as llm_bench
from eris_lab.lab import report, viz
from eris_lab.eval.datasets import load_suite
from eris_lab.strategies import MemoEmbedder


def test_table_colours_cells_and_escapes():
    html = viz.table([{"a": "<b>", "b": 0.5}], colours={(0, "b"): viz.BAD}).data
    assert "&lt;b&gt;" in html and f"color:{viz.BAD}" in html and "0.500" in html


def test_project_small_inputs_without_umap():
    xy = viz.project(np.eye(3, 8, dtype=np.float32))
    assert xy.shape == (3, 2)


def test_nightly_table_marks_regressions_red():
    rows = report.compare([{"suite": "demo", "strategy": "policy", "recall": 0.5, "mean_offer": 2.0}],
                          [{"suite": "demo", "strategy": "policy", "recall": 0.9}])
    assert f"color:{viz.BAD}" in viz.nightly_table(rows).data
    assert len(viz.nightly_figure(rows).data) == 1 and len(viz.tradeoff_figure(rows).data) == 1


def test_curve_figure_draws_points_the_pareto_front_and_marks_current_threshold():
    curve = [{"threshold": 0.3, "mean_offer": 5.0, "recall": 0.9}, {"threshold": 0.5, "mean_offer": 2.0, "recall": 0.7},
             {"threshold": 0.4, "mean_offer": 6.0, "recall": 0.8}]  # dominated: more tools, less recall
    fig = viz.curve_figure(curve, 0.5, marked={"calibrated": {"mean_offer": 3.0, "recall": 0.85}})
    points, front, current, marked = fig.data
    assert points.mode == "markers" and list(points.marker.color) == [0.3, 0.5, 0.4]
    assert front.x == (2.0, 5.0) and front.y == (0.7, 0.9)  # the dominated point is off the front
    assert current.x == (2.0,) and current.y == (0.7,) and marked.name == "calibrated"


def test_pareto_front_keeps_only_undominated_points():
    pts = [{"mean_offer": m, "recall": r} for m, r in ((1, 0.5), (2, 0.5), (3, 0.9), (2.5, 0.95), (4, None))]
    assert [(p["mean_offer"], p["recall"]) for p in viz.pareto_front(pts)] == [(1, 0.5), (2.5, 0.95)]


def test_width_cases_put_gold_in_every_offer():
    suite = load_suite("demo", limit=30)
    cases = llm_bench.width_cases(suite, [1, 3], n_cases=4, embedder=MemoEmbedder(FakeEmbedder(), disk=False))
    assert len(cases) == 4
    for c in cases:
        assert c["offers"][1] == (c["gold"],)
        assert len(c["offers"][3]) == 3 and c["gold"] in c["offers"][3]


def test_width_summary_aggregates_per_width_and_mode():
    rows = [{"width": 1, "mode": "grammar", "correct": True, "valid": True, "tokens_per_s": 10.0, "n_prompt_tokens": 100},
            {"width": 1, "mode": "grammar", "correct": False, "valid": True, "tokens_per_s": 20.0, "n_prompt_tokens": 100},
            {"width": 1, "mode": "free", "correct": False, "valid": False, "tokens_per_s": 30.0, "n_prompt_tokens": 100}]
    out = {(r["width"], r["mode"]): r for r in llm_bench.width_summary(rows)}
    assert out[(1, "grammar")]["accuracy"] == 0.5 and out[(1, "grammar")]["tokens_per_s"] == 15.0
    assert out[(1, "free")]["valid_call_rate"] == 0.0


@pytest.mark.slow
def test_space_points_mark_misrouted_queries():
    from eris_lab.eval.harness import run
    from eris_lab.strategies import make

    memo = MemoEmbedder(FakeEmbedder(), disk=False)
    suite = load_suite("demo", limit=30)
    results = run(make("dense:k=1", embedder=memo), suite, progress=False)
    points = viz.space_points(suite, results, embedder=memo)
    assert sum(p["kind"] == "tool" for p in points) == len(suite.catalog)
    assert sum(p["misrouted"] for p in points) == sum(not r.correct for r in results)
    assert viz.space_figure(points).data
