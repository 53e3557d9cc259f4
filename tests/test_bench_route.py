"""The route benchmark (issue 14): every encoder and scorer as ratios against torch + exact, a tiny run."""

from __future__ import annotations

import pytest

from eris_lab.bench import route


@pytest.mark.slow
def test_a_tiny_route_run_reports_ratios_stages_and_exact_recall():
    result = route.route_bench(sizes=(3_000,), repeats=1, encoders=("onnx",), scorers=("int8",), startup_runs=0)
    assert set(result["encoders"]) == {"torch", "onnx"}
    onnx = result["encoders"]["onnx"]
    assert onnx["cosine_vs_torch_min"] >= 0.999
    assert 0 < onnx["tokenize_p50_ms"] < onnx["query_embed_p50_ms"] + onnx["tokenize_p50_ms"]
    rows = {(r["encoder"], r["scorer"]): r for r in result["sizes"]}
    assert set(rows) == {("torch", "exact"), ("torch", "int8"), ("onnx", "exact"), ("onnx", "int8")}
    assert rows["torch", "exact"]["speedup_vs_baseline"] == 1.0
    for row in rows.values():
        assert row["total_min_ms"] <= row["total_p50_ms"] <= row["total_p95_ms"]
        assert row["embed_p50_ms"] <= row["total_p95_ms"]
        assert 0 < row["alone_total_p50_ms"] <= row["alone_total_p95_ms"]  # each router on its own
    scoring = {r["scorer"]: r for r in result["scoring"]}
    assert set(scoring) == {"exact", "int8", "int8-no-rescore"}
    # the re-score makes the int8 scorer's best k the exact scorer's at every offer size
    assert all(v == 1.0 for v in scoring["int8"]["recall_at"].values())
    assert set(scoring["int8"]["recall_at"]) == {str(k) for k in route.RECALL_KS}
