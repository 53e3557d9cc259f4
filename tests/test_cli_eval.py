"""`eris-lab eval` and `eris-lab tune` through cli.main, plus a fixed BFCL sample end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eris_lab import cli
from eris_lab.eval import harness
from eris_lab.eval.datasets import fetch_bfcl, load_suite
from eris_lab.eval.metrics import DESIGN_KEYS
from eris_lab.knobs import Knobs

from conftest import FakeEmbedder

DATA = Path(__file__).resolve().parent / "data"
MINI = ["--suite", str(DATA / "mini_queries.jsonl"), "--catalog", str(DATA / "mini_catalog.toml")]


@pytest.fixture
def fake_default(monkeypatch):
    """The harness's default embedder becomes the fake one (no model load)."""
    monkeypatch.setattr(harness, "default_embedder", FakeEmbedder)


def test_eval_json_has_the_design_keys(capsys, fake_default):
    assert cli.main(["eval", *MINI, "--strategy", "policy", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert tuple(record)[: len(DESIGN_KEYS)] == DESIGN_KEYS
    assert record["n"] == 10 and record["strategy"] == "policy"
    assert record["embedding_model"] == FakeEmbedder.model_id
    assert isinstance(record["misrouted"], list)


def test_eval_table_by_default(capsys):
    assert cli.main(["eval", *MINI, "--strategy", "bm25"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"suite {DATA / 'mini_queries.jsonl'} · strategy bm25 · n 10")
    assert "recall@5" in out and "domain" in out


def test_eval_split_limit_and_strategy_params(capsys):
    assert cli.main(["eval", *MINI, "--strategy", "bm25:k=1", "--split", "test", "--limit", "3", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["n"] == 3 and record["strategy"] == "bm25:k=1" and record["max_offer"] <= 1


def test_eval_reads_knobs(capsys, fake_default, tmp_path):
    path = Knobs(threshold=-1.0, margin=1.0, single_hit_floor=-1.0).save(tmp_path / "k.toml")
    assert cli.main(["eval", *MINI, "--knobs", str(path), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["max_offer"] == 11  # every tool is a hit and ties widen


@pytest.mark.parametrize("argv,message", [
    (["eval", "--suite", "nope"], "eris-lab: error: --suite: unknown suite 'nope'"),
    (["eval", *MINI, "--strategy", "magic"], "eris-lab: error: --strategy: unknown strategy 'magic'"),
    (["eval", "--suite", str(DATA / "mini_queries.jsonl"), "--catalog", str(DATA / "nope.toml")],
     f"eris-lab: error: {DATA / 'nope.toml'}: no such file or folder"),
    (["eval", *MINI, "--limit", "0"], "eris-lab: error: --limit: expected an integer >= 1, got 0"),
])
def test_eval_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_tune_writes_knobs_that_route_reads(capsys, fake_default, tmp_path):
    out = tmp_path / "knobs.toml"
    assert cli.main(["tune", *MINI, "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["out"] == str(out) and Knobs.load(out).notes["split"] == "train"
    assert cli.main(["tune", *MINI, "--out", str(out)]) == 0
    assert "Pareto front" in capsys.readouterr().out


# -- a small fixed sample of every BFCL suite, end to end ------------------------------------------

@pytest.fixture(scope="module")
def bfcl():
    return fetch_bfcl()


@pytest.mark.parametrize("suite", ["multiple", "live_multiple", "irrelevance", "live_irrelevance", "live_relevance",
                                   "bfcl-pooled"])
@pytest.mark.parametrize("strategy", ["keyword", "bm25", "dense", "hybrid-rrf", "policy", "toolkit"])
def test_bfcl_sample_end_to_end_fake_embedder(bfcl, suite, strategy):
    s = load_suite(suite, limit=5)
    record = harness.run_eval(s, strategy, embedder=FakeEmbedder(), progress=False)
    assert record["n"] == 5 and tuple(record)[: len(DESIGN_KEYS)] == DESIGN_KEYS
    if suite in ("irrelevance", "live_irrelevance"):
        assert record["recall"] is None and record["irrelevance_empty_rate"] is not None
    else:
        assert 0.0 <= record["recall"] <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("suite", ["multiple", "live_multiple", "irrelevance", "live_irrelevance", "live_relevance",
                                   "bfcl-pooled"])
def test_bfcl_sample_end_to_end_real_embedder(bfcl, suite):
    record = harness.run_eval(load_suite(suite, limit=10), "policy", progress=False)
    assert record["n"] == 10
    if suite in ("multiple", "live_multiple"):
        assert record["recall"] >= 0.5  # per-case candidates: the router finds most gold tools
