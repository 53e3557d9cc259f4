"""Suites: our JSONL files, the BFCL fetch (checked, atomic, idempotent) and the BFCL loaders.

The BFCL fixture fetches the real wheel once per session (network to PyPI allowed). A failed
fetch fails the tests that need it with the reason; nothing is skipped silently.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from eris_lab.errors import DataError
from eris_lab.eval import datasets
from eris_lab.eval.datasets import Query, fetch_bfcl, load_jsonl, load_suite

DATA = Path(__file__).resolve().parent / "data"
MINI_CATALOG = DATA / "mini_catalog.toml"
MINI_QUERIES = DATA / "mini_queries.jsonl"


# -- our JSONL files -------------------------------------------------------------------------------

def test_jsonl_suite_loads_queries_gold_history_and_splits():
    suite = load_suite(str(MINI_QUERIES), catalog=MINI_CATALOG)
    assert len(suite) == 10 and suite.catalog is not None and len(suite.catalog) == 11
    q4 = next(q for q in suite.queries if q.id == "q4")
    assert q4.gold == ("mail:delete",) and q4.expect == "all" and q4.split == "test"
    assert q4.history[1] == {"role": "tool_used", "name": "mail:check"}
    q6 = next(q for q in suite.queries if q.id == "q6")
    assert q6.gold == () and q6.expect == "none"


def test_split_and_limit_filter_in_that_order():
    suite = load_suite(str(MINI_QUERIES), catalog=MINI_CATALOG, split="test", limit=2)
    assert [q.id for q in suite.queries] == ["q4", "q6"]


def test_a_split_of_a_file_without_splits_says_how_to_give_one(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"query": "check my mail", "gold": ["mail:check"]}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r'no queries with split .train.: its lines carry no "split"; give each line '
                                        r'"split": "train" or "test", or pass --test-suite'):
        load_suite(str(path), catalog=MINI_CATALOG, split="train")
    # a file that has splits, just not this one, gets no such hint
    path.write_text('{"query": "check my mail", "gold": ["mail:check"], "split": "test"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"no queries with split 'train'$"):
        load_suite(str(path), catalog=MINI_CATALOG, split="train")


@pytest.mark.parametrize("line,message", [
    ('{"gold": []}', "expected a non-empty string 'query', got None"),
    ('{"query": "x"}', "missing required field 'gold' (a list of tool names, empty = no tool)"),
    ('{"query": "x", "gold": "mail:check"}', "expected a list of strings, got 'mail:check'"),
    ('{"query": "x", "gold": ["nope:tool"]}', "unknown tool 'nope:tool'; not in the catalogue"),
    ('{"query": "x", "gold": [], "split": "dev"}', "expected 'train' or 'test', got 'dev'"),
    ("not json", "not valid JSON (line 1 column 1: Expecting value)"),
])
def test_bad_jsonl_lines_name_file_and_line(tmp_path, line, message):
    from eris_lab.catalog import load

    path = tmp_path / "q.jsonl"
    path.write_text('{"query": "fine", "gold": []}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        load_jsonl(path, catalog=load(MINI_CATALOG))
    assert str(err.value).startswith(f"{path}:2")
    assert message in str(err.value)


def test_unknown_suite_and_bad_options_are_clear_errors():
    with pytest.raises(DataError, match=r"^--suite: unknown suite 'nope'; expected one of multiple, "):
        load_suite("nope")
    with pytest.raises(DataError, match=r"^--split: expected 'train' or 'test', got 'dev'$"):
        load_suite(str(MINI_QUERIES), split="dev")
    with pytest.raises(DataError, match=r"^--limit: expected an integer >= 1, got 0$"):
        load_suite(str(MINI_QUERIES), limit=0)
    with pytest.raises(DataError, match="no such query file"):
        load_suite(str(DATA / "missing.jsonl"), catalog=MINI_CATALOG)


def test_demo_suite_names_the_missing_query_file(monkeypatch, tmp_path):
    monkeypatch.setattr(datasets, "DEMO_QUERIES", tmp_path / "demo_queries.jsonl")
    with pytest.raises(DataError, match="the demo query set has not landed yet"):
        load_suite("demo-train", catalog=MINI_CATALOG)


def test_demo_train_reads_the_train_split(monkeypatch):
    monkeypatch.setattr(datasets, "DEMO_QUERIES", MINI_QUERIES)
    suite = load_suite("demo-train", catalog=MINI_CATALOG)
    assert {q.split for q in suite.queries} == {"train"} and len(suite) == 5


# -- fetching --------------------------------------------------------------------------------------

def _fake_wheel(path: Path) -> str:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("bfcl_eval/data/BFCL_v4_multiple.json", "{}\n")
        z.writestr("bfcl_eval/data/possible_answer/BFCL_v4_multiple.json", "{}\n")
        z.writestr("bfcl_eval/__init__.py", "print('never unpacked')\n")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_fetch_unpacks_only_the_data_folder_atomically_and_is_idempotent(tmp_path):
    wheel = tmp_path / "w.whl"
    digest = _fake_wheel(wheel)
    dest = tmp_path / "cache" / "bfcl"
    assert fetch_bfcl(dest, wheel=wheel, sha256=digest) == dest
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert files == [".complete", "bfcl_eval/data/BFCL_v4_multiple.json",
                     "bfcl_eval/data/possible_answer/BFCL_v4_multiple.json"]
    assert json.loads((dest / ".complete").read_text())["sha256"] == digest
    wheel.unlink()  # a finished cache needs neither the wheel nor the network
    assert fetch_bfcl(dest, wheel=wheel, sha256=digest) == dest
    assert [p.name for p in dest.parent.iterdir()] == ["bfcl"]  # no temp folders left behind


def test_fetch_with_a_wrong_sha256_fails_and_unpacks_nothing(tmp_path):
    wheel = tmp_path / "w.whl"
    digest = _fake_wheel(wheel)
    dest = tmp_path / "cache" / "bfcl"
    with pytest.raises(DataError) as err:
        fetch_bfcl(dest, wheel=wheel, sha256="0" * 64)
    assert str(err.value) == f"w.whl: SHA-256 mismatch; got {digest}, expected {'0' * 64} (nothing unpacked)"
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []


def test_bfcl_cache_folder_can_be_overridden(monkeypatch, tmp_path):
    monkeypatch.setenv("ERIS_LAB_BFCL_DIR", str(tmp_path / "elsewhere"))
    assert datasets.bfcl_dir() == tmp_path / "elsewhere"


# -- BFCL (the real wheel) ---------------------------------------------------------------------------

@pytest.fixture(scope="session")
def bfcl():
    """Fetch BFCL once (the repository's git-ignored .cache/bfcl/ unless ERIS_LAB_BFCL_DIR is set)."""
    return fetch_bfcl()


@pytest.mark.parametrize("name,n,expect", [
    ("multiple", 200, "all"), ("live_multiple", 1053, "all"), ("irrelevance", 240, "none"),
    ("live_irrelevance", 884, "none"), ("live_relevance", 16, "any"),
])
def test_bfcl_suites_have_their_cases_and_per_case_catalogues(bfcl, name, n, expect):
    suite = load_suite(name)
    assert len(suite) == n and suite.catalog is None
    for q in suite.queries:
        assert q.expect == expect and q.catalog is not None and q.query
        assert all(g in q.catalog for g in q.gold)
        assert (q.gold == ()) == (expect == "none")
        assert q.split in ("train", "test")


def test_bfcl_gold_comes_from_possible_answer(bfcl):
    q = load_suite("live_multiple", limit=1).queries[0]
    assert q.id == "live_multiple_0-0-0" and q.gold == ("ChaDri.change_drink",)
    assert set(q.catalog.names) == {"ChaFod", "ChaDri.change_drink"}


def test_bfcl_system_messages_become_history(bfcl):
    with_system = [q for q in load_suite("live_multiple").queries if q.history]
    assert len(with_system) == 37 and all(h["role"] == "system" for q in with_system for h in q.history)


def test_bfcl_pooled_catalogue_is_distinct_by_name_and_schema(bfcl):
    suite = load_suite("bfcl-pooled")
    assert len(suite) == 1053 and len(suite.catalog) == 1041
    names = suite.catalog.names
    variants = [n for n in names if "~" in n]
    assert variants and all(n.split("~")[0] in suite.catalog for n in variants)
    assert all(all(g in suite.catalog for g in q.gold) for q in suite.queries)
    assert all(q.catalog is None for q in suite.queries)


def test_bfcl_pooled_gold_is_the_variant_of_the_case(bfcl):
    pooled = load_suite("bfcl-pooled")
    by_id = {q.id: q for q in pooled.queries}
    for q in load_suite("live_multiple").queries:
        gold = by_id[q.id].gold[0]
        assert gold.split("~")[0] == q.gold[0]
        assert pooled.catalog.tool(gold).parameters == q.catalog.tool(q.gold[0]).parameters


def test_bfcl_suites_refuse_a_catalogue(bfcl):
    with pytest.raises(DataError, match=r"^--catalog: BFCL suite 'multiple' brings its own functions; drop --catalog$"):
        load_suite("multiple", catalog=MINI_CATALOG)


def test_query_is_a_frozen_record():
    q = Query(id="x", query="y", gold=())
    with pytest.raises(AttributeError):
        q.query = "z"  # type: ignore[misc]
