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


def test_bench_rejects_unknown_suite(capsys):
    assert cli.main(["bench", "strategies", "--suites", "nope"]) == 2
    assert "unknown suite 'nope'" in capsys.readouterr().err
