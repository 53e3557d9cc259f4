"""The transfer benchmark (issue 18 item 5): which cells are transfers, the table, a tiny run."""

from __future__ import annotations

import json

import pytest

from eris_lab import cli
from eris_lab.bench import transfer
from eris_lab.eval import harness

from conftest import FakeEmbedder


@pytest.mark.parametrize("source, target, same", [
    ("demo-train, labelled", "demo-test", "split"),  # held-out half of the catalogue it was fitted on
    ("demo, label-free", "demo-test", "catalogue"),
    ("bfcl-pooled, labelled", "live_multiple", "queries"),  # the pooled suite's own messages
    ("bfcl-pooled, labelled", "bfcl-pooled", "queries"),
    ("bfcl-pooled, label-free", "bfcl-pooled", "catalogue"),
    ("bfcl-pooled, label-free", "live_multiple", None),  # other catalogues (each case's own)
    ("demo-train, labelled", "parallel_multiple-pooled", None),
    ("reference", "demo-test", None),
])
def test_cells_that_share_what_the_source_read_are_marked(source, target, same):
    assert transfer._same(source, target) == same


def test_a_tiny_transfer_run_skips_shared_queries_and_prints_coverage(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(harness, "default_embedder", FakeEmbedder)
    out = tmp_path / "t.json"
    status = cli.main(["bench", "transfer", "--sources", "reference", "own, label-free", "--targets", "multiple",
                       "irrelevance", "demo-test", "--limit", "6", "--out", str(out), "--quiet"])
    assert status == 0
    report = json.loads(out.read_text())
    assert [(c["source"], c["target"]) for c in report["cells"]] == [  # queries shared: skipped (none here)
        ("reference", "multiple"), ("own, label-free", "multiple"),
        ("reference", "irrelevance"), ("own, label-free", "irrelevance"),
        ("reference", "demo-test"), ("own, label-free", "demo-test")]
    assert all(c["n"] == 6 for c in report["cells"])
    # reference knobs promise nothing; per-case catalogues are each too small to calibrate a promise;
    # the demo catalogue, calibrated label-free, promises 1 - alpha or (the fake embedder's words
    # rank it worse than 16 seats hold) what its capped widening covers
    promised = [c["promised_coverage"] for c in report["cells"]]
    assert promised[:5] == [None] * 5 and 0 < promised[5] <= 0.95
    printed = capsys.readouterr().out
    assert "knobs from" in printed and "empty " in printed
    assert "own, label-free            -> demo-test" in printed and printed.count(f"promised {promised[5]:.3f}") == 1


@pytest.mark.parametrize("argv, message", [
    (["--sources", "mine"], "unknown source 'mine'"),
    (["--targets", "nope"], "unknown suite 'nope'"),
    (["--limit", "0"], "expected an integer >= 1"),
])
def test_bad_flags_are_one_line(capsys, argv, message):
    assert cli.main(["bench", "transfer", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_latest_recorded_run_is_the_newest_readable_one_and_renders_as_rows(tmp_path):
    assert transfer.latest_recorded(tmp_path) is None
    old = {"targets": ["multiple"], "sources": {"reference": None}, "created": "a", "limit": None,
           "cells": [{"source": "reference", "target": "multiple", "same": None, "recall": 0.9, "mean_offer": 2.5}]}
    (tmp_path / "transfer-2026-11-01.json").write_text(json.dumps(old))
    (tmp_path / "transfer-2026-11-30.json").write_text("{broken")  # newest, unreadable: skipped
    path, report = transfer.latest_recorded(tmp_path)
    assert path.name == "transfer-2026-11-01.json"
    assert transfer.table_rows(report) == [{"knobs from": "reference", "multiple": "0.900 / 2.5"}]
    # the date decides, not the name: "slots" sorts after "sentences"
    (tmp_path / "transfer-slots-2026-12-01.json").write_text(json.dumps(old))
    (tmp_path / "transfer-sentences-2026-12-02.json").write_text(json.dumps(old))
    assert transfer.latest_recorded(tmp_path)[0].name == "transfer-sentences-2026-12-02.json"
