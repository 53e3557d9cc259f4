"""The labelled query set for the demo catalogue: ``data/demo_queries.jsonl`` (see data/README.md)."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from eris_lab.catalog import load

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ROOT / "data" / "demo_queries.jsonl"
CATALOG = load(ROOT / "descriptors")

#: Every tag the set may use (data/README.md "Tags").
TAGS = frozenset(
    {"synonym", "german", "mixed_de_en", "history", "figurative", "near_tie", "url", "greeting",
     "multi_intent", "typo", "no_tool", "plain"}
)
#: Position within its primary tag (0-based, id order) modulo 10 that puts a query in the test split.
TEST_POSITIONS = frozenset({2, 5, 8})
KEYS = {"id", "query", "gold", "history", "split", "tags"}


def _rows() -> list[dict]:
    lines = QUERIES.read_text(encoding="utf-8").splitlines()
    rows = []
    for number, line in enumerate(lines, start=1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            pytest.fail(f"{QUERIES.name}:{number}: not valid JSON ({exc.msg})")
    return rows


ROWS = _rows()


def test_query_set_has_at_least_300_lines():
    assert len(ROWS) >= 300


def test_every_line_is_an_object_with_exactly_the_documented_keys():
    for row in ROWS:
        assert isinstance(row, dict) and set(row) == KEYS, row
        assert isinstance(row["query"], str) and row["query"].strip(), row["id"]
        assert row["split"] in ("train", "test"), row["id"]


def test_ids_are_unique():
    duplicates = [i for i, n in Counter(r["id"] for r in ROWS).items() if n > 1]
    assert not duplicates


def test_every_gold_name_is_a_demo_catalogue_tool():
    for row in ROWS:
        assert isinstance(row["gold"], list), row["id"]
        assert len(set(row["gold"])) == len(row["gold"]), row["id"]
        unknown = [g for g in row["gold"] if g not in CATALOG]
        assert not unknown, f"{row['id']}: unknown gold {unknown}"


def test_every_demo_tool_is_gold_somewhere():
    used = {g for row in ROWS for g in row["gold"]}
    assert set(CATALOG.names) - used == set()


def test_history_entries_are_user_turns_or_tools_used():
    for row in ROWS:
        for turn in row["history"]:
            if turn.get("role") == "user":
                assert set(turn) == {"role", "content"} and turn["content"].strip(), row["id"]
            else:
                assert turn.get("role") == "tool_used" and set(turn) == {"role", "name"}, row["id"]
                assert turn["name"] in CATALOG, row["id"]


def test_every_tag_is_known_and_tags_do_not_repeat():
    for row in ROWS:
        assert row["tags"] and set(row["tags"]) <= TAGS, row["id"]
        assert len(set(row["tags"])) == len(row["tags"]), row["id"]


def test_tags_agree_with_the_labels():
    for row in ROWS:
        tags = set(row["tags"])
        if tags & {"figurative", "no_tool"}:
            assert row["gold"] == [], row["id"]
        if "multi_intent" in tags:
            assert len(row["gold"]) >= 2, row["id"]
        if "history" in tags:
            assert row["history"], row["id"]
        else:
            assert row["history"] == [], row["id"]
        if "url" in tags:
            assert re.search(r"https?://|www\.|\w\.(?:com|org|net|de|at|io)\b", row["query"]), row["id"]


def test_both_splits_present_and_about_70_30():
    counts = Counter(r["split"] for r in ROWS)
    assert counts["train"] and counts["test"]
    assert 0.25 <= counts["test"] / len(ROWS) <= 0.35


def test_every_tag_appears_in_both_splits():
    splits = defaultdict(set)
    for row in ROWS:
        for tag in row["tags"]:
            splits[tag].add(row["split"])
    assert {tag: s for tag, s in splits.items() if s != {"train", "test"}} == {}
    assert set(splits) == TAGS


def test_split_follows_the_documented_deterministic_rule():
    """Stratified by primary tag (the first): positions 2, 5, 8 of every ten, in id order, are test."""
    by_primary = defaultdict(list)
    for row in ROWS:
        by_primary[row["tags"][0]].append(row)
    for rows in by_primary.values():
        rows.sort(key=lambda r: (r["id"].rsplit("-", 1)[0], int(r["id"].rsplit("-", 1)[1])))
        for position, row in enumerate(rows):
            expected = "test" if position % 10 in TEST_POSITIONS else "train"
            assert row["split"] == expected, row["id"]
