"""The benchmark runner on a tiny suite (fake embedder): rows, goals, skipped suites, atomic JSON."""

from __future__ import annotations

import json
from pathlib import Path

from eris_lab import cli
from eris_lab.bench import strategies as bench
from eris_lab.eval import datasets, embedders

from conftest import FakeEmbedder

DATA = Path(__file__).resolve().parent / "data"


def test_bench_runs_every_strategy_and_reports_skipped_suites(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(embedders.EMBEDDERS, "minilm", FakeEmbedder)
    monkeypatch.setitem(embedders.EMBEDDERS, "other", FakeEmbedder)
    monkeypatch.setattr(datasets, "DEMO_QUERIES", tmp_path / "missing.jsonl")
    out = tmp_path / "r" / "bench.json"
    status = cli.main(["bench", "strategies", "--suites", str(DATA / "mini_queries.jsonl"), "demo", "--catalog", str(DATA / "mini_catalog.toml"),
                         "--strategies", "keyword", "bm25", "dense", "policy", "--embedders", "minilm", "other",
                         "--out", str(out), "--quiet"])
    assert status == 0
    report = json.loads(out.read_text())
    labels = [r["strategy"] for r in report["rows"]]
    # lexical strategies run once; embedding strategies once per embedder
    assert labels == ["keyword", "bm25", "dense", "policy", "dense@other", "policy@other"]
    assert "demo" in report["skipped"] and "has not landed yet" in report["skipped"]["demo"]
    assert set(report["goals"]) == set(bench.GOALS)
    assert all(r["n"] == 10 for r in report["rows"])
    printed = capsys.readouterr().out
    assert "goals (issue 4)" in printed and f"wrote {out}" in printed
    assert [p.name for p in out.parent.iterdir()] == ["bench.json"]
    # where one name has schema variants the promise counts any of them, and so does the observed side
    row = {**report["rows"][3], "promised_coverage": 0.9, "recall": 0.8}
    assert "observed 0.800  (-0.100)\n" in bench.format_table({**report, "rows": [row]}) + "\n"
    text = bench.format_table({**report, "rows": [{**row, "name_recall": 0.95}]})
    assert "promised 0.900  observed 0.950  (+0.050)  by name; strictly 0.800" in text


def test_bench_rejects_unknown_suite(capsys):
    assert cli.main(["bench", "strategies", "--suites", "nope"]) == 2
    assert "unknown suite 'nope'" in capsys.readouterr().err
