"""Metric functions on hand-made results with answers worked out by hand."""

from __future__ import annotations

import pytest

from eris_lab.catalog import Catalog, Tool
from eris_lab.eval.metrics import DESIGN_KEYS, QueryResult, ToolTokens, approx_tokens, evaluate
from eris_lab.policy import Hit


def _r(id, gold, offered, *, expect=None, kind="subset", hits=(), toolkit=None, rule="RANKED_SUBSET"):
    gold = tuple(gold)
    return QueryResult(
        id=id, query=f"query {id}", gold=gold, expect=expect or ("all" if gold else "none"),
        offered=tuple(offered), kind=kind, rule=rule, reason="r",
        hits=tuple(Hit(name=n, score=s) for n, s in hits),
        offer_tokens=10 * len(offered), catalog_tokens=100,
        toolkit=toolkit if toolkit is not None else (gold[0].split(":")[0] if gold else ""),
    )


ROSTER = ("mail:check", "mail:delete", "web:fetch", "web:search")

#: Six queries: answers below are counted by hand.
RESULTS = [
    _r("a", ["mail:check"], ["mail:check", "mail:delete"], hits=[("mail:check", 0.8), ("mail:delete", 0.7)]),
    _r("b", ["web:fetch"], ["web:search"], hits=[("web:search", 0.6)]),                      # lock-in, miss
    _r("c", ["web:search"], ROSTER, kind="full_roster", hits=[("web:fetch", 0.4)]),          # roster: recalled, top1 wrong
    _r("d", ["mail:check", "web:fetch"], ["web:fetch"], hits=[("web:fetch", 0.9)]),          # multi-gold: miss, not lock-in
    _r("e", [], [], kind="conversational", rule="CONVERSATIONAL"),                           # correct abstention
    _r("f", [], ["web:fetch"], hits=[("web:fetch", 0.55)]),                                  # irrelevant: lock-in
]


@pytest.fixture(scope="module")
def record():
    return evaluate(RESULTS, suite="hand", strategy="made")


def test_evaluate_has_design_keys_first_in_order(record):
    assert tuple(record)[: len(DESIGN_KEYS)] == DESIGN_KEYS
    assert record["suite"] == "hand" and record["strategy"] == "made" and record["n"] == 6


def test_recall_counts_every_gold_offered_and_full_roster_as_everything(record):
    # needing a tool: a, b, c, d -> recalled a, c
    assert record["recall"] == 0.5
    assert record["n_needs_tool"] == 4 and record["n_no_tool"] == 2


def test_top1_is_the_best_scored_tool(record):
    # a: mail:check ok; b: web:search wrong; c: web:fetch wrong; d: web:fetch is a gold tool -> ok
    assert record["top1"] == 0.5


def test_offer_size_mean_and_p95(record):
    sizes = [2, 1, 4, 1, 0, 1]
    assert record["mean_offer"] == round(sum(sizes) / 6, 4)
    # numpy linear percentile of [0,1,1,1,2,4] at 95: 2 + 0.75 * (4 - 2) = 3.5
    assert record["p95_offer"] == 3.5
    assert record["max_offer"] == 4


def test_lock_in_is_a_single_wrong_tool(record):
    # b (wrong single) and f (single on an irrelevant query); d's single tool is gold -> not lock-in
    assert record["lock_in"] == round(2 / 6, 6)


def test_full_roster_and_empty_rates(record):
    assert record["full_roster_rate"] == round(1 / 6, 6)
    assert record["empty_rate"] == round(1 / 6, 6)


def test_relevance_recall_beside_irrelevance_empty_rate(record):
    assert record["relevance_recall"] == 1.0  # every tool-needing query was offered something
    assert record["irrelevance_empty_rate"] == 0.5  # e empty, f not


def test_recall_at_k_uses_the_ranking(record):
    # a: mail:check first -> @1; d needs two tools but the ranking holds one -> never
    assert record["recall_at"] == {"1": 0.25, "5": 0.25, "10": 0.25}


def test_tokens_are_means_per_query(record):
    assert record["offer_tokens"] == round(10 * 9 / 6, 2)
    assert record["catalog_tokens"] == 100


def test_misrouted_lists_failures_with_scores_and_rule(record):
    by_id = {m["id"]: m for m in record["misrouted"]}
    assert sorted(by_id) == ["b", "d", "f"]  # c fell back to the roster: recalled
    assert by_id["b"]["why"] == "locked onto a wrong tool"
    assert by_id["d"]["why"] == "gold not offered"
    assert by_id["f"]["why"] == "tools offered when none is needed"
    assert by_id["b"]["scores"] == [{"name": "web:search", "score": 0.6}]
    assert by_id["b"]["rule"] == "RANKED_SUBSET" and by_id["b"]["n_offered"] == 1


def test_per_domain_breakdown(record):
    per = record["per_domain"]
    assert set(per) == {"mail", "web", "(none)"}
    assert per["mail"]["n"] == 2 and per["mail"]["recall"] == 0.5  # a yes, d no
    assert per["web"]["n"] == 2 and per["web"]["recall"] == 0.5  # c yes, b no
    assert per["(none)"]["recall"] is None and per["(none)"]["empty_rate"] == 0.5


def test_per_tool_breakdown_counts_false_offers(record):
    per = record["per_tool"]
    assert per["web:fetch"]["n"] == 2 and per["web:fetch"]["recall"] == 0.0  # b missed, d missed
    # web:fetch offered without being gold in c (roster) and f
    assert per["web:fetch"]["false_offers"] == 2
    assert per["mail:delete"] == {"n": 0, "recall": None, "top1": None, "false_offers": 2}


def test_per_tag_breakdown():
    rs = [QueryResult(id="1", query="q", gold=("a",), expect="all", offered=("a",), tags=("german", "typo")),
          QueryResult(id="2", query="q", gold=("a",), expect="all", offered=("b",), tags=("german",))]
    per = evaluate(rs)["per_tag"]
    assert per["german"]["n"] == 2 and per["german"]["recall"] == 0.5
    assert per["typo"]["recall"] == 1.0


def test_expect_any_needs_one_candidate_offered():
    r = [_r("x", ["a", "b"], ["b"], expect="any"), _r("y", ["a", "b"], [], expect="any")]
    record = evaluate(r)
    assert record["recall"] == 0.5
    assert record["lock_in"] == 0.0  # b is acceptable
    assert record["top1"] is None  # defined on single-answer (expect all) queries only


def test_irrelevance_only_suite_has_no_recall():
    record = evaluate([_r("e", [], []), _r("f", [], ["x"])])
    assert record["recall"] is None and record["top1"] is None
    assert record["empty_rate"] == 0.5 and record["irrelevance_empty_rate"] == 0.5


def test_empty_results():
    record = evaluate([])
    assert record["n"] == 0 and record["recall"] is None and record["mean_offer"] is None


def test_approx_tokens_counts_words_and_punctuation():
    assert approx_tokens('{"name":"web_fetch"}') == 9  # { " name " : " web_fetch " }
    assert approx_tokens("") == 0
    assert approx_tokens("hello, world") == 3


def test_tool_tokens_memoise_and_sum():
    calls = []

    def tok(s):
        calls.append(s)
        return 5

    cat = Catalog([Tool(name="a", description="A"), Tool(name="b", description="B")])
    tt = ToolTokens(tok)
    assert tt.of(cat, ["a", "b"]) == 10
    assert tt.catalog(cat) == 10
    assert len(calls) == 2


def test_the_metrics_table_names_every_number_of_the_record_once():
    from eris_lab.eval.metrics import HEADLINE, METRICS, format_value
    from eris_lab.lab.report import HIGHER_IS_BETTER, LOWER_IS_BETTER

    record = evaluate([QueryResult(id="a", query="x", gold=("t:a",), expect="all", offered=("t:a",), kind="subset",
                                   rule="RANKED_SUBSET")])
    names = [m.name for m in METRICS]
    assert len(set(names)) == len(names) and set(names) <= set(record) and set(HEADLINE) <= set(names)
    assert all(m.better in ("higher", "lower", "") for m in METRICS)
    assert set(HIGHER_IS_BETTER) == {m.name for m in METRICS if m.better == "higher"} and "recall" in HIGHER_IS_BETTER
    assert set(LOWER_IS_BETTER) == {m.name for m in METRICS if m.better == "lower"} and "lock_in" in LOWER_IS_BETTER
    assert (format_value(None, "recall"), format_value(0.5, "recall"), format_value(123.4, "offer_tokens"),
            format_value(7, "n")) == ("-", "0.500", "123", "7")


def test_name_recall_counts_any_schema_variant_and_appears_only_on_pooled_names():
    from eris_lab.eval.metrics import QueryResult, evaluate

    pooled = [QueryResult(id="a", query="q", gold=("f",), expect="all", offered=("f~2", "g"), kind="subset"),
              QueryResult(id="b", query="q", gold=("g~3",), expect="all", offered=("g~3",), kind="subset"),
              QueryResult(id="c", query="q", gold=("h",), expect="all", offered=("k",), kind="subset")]
    record = evaluate(pooled)
    assert record["recall"] == round(1 / 3, 6) and record["name_recall"] == round(2 / 3, 6)
    plain = [QueryResult(id="a", query="q", gold=("f",), expect="all", offered=("f",), kind="subset")]
    assert "name_recall" not in evaluate(plain)
