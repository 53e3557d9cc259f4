"""Routing a conversation (issue 15): BFCL multi-turn suites, companions, dialog memory.

Synthetic conversations (a tiny fake BFCL data folder) test the loader's rules; the real BFCL
data (fetched once per session, as test_eval_datasets does) tests the shipped suites.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from eris_lab.catalog import Catalog, Tool, tools_from_json
from eris_lab.companions import (
    PAIR_FEATURES,
    LearnedCompanions,
    co_occurrence,
    declared,
    default_table,
    from_dataflow,
    from_schemas,
    merge,
    pair_features,
)
from eris_lab.errors import DataError
from eris_lab.eval import conversation
from eris_lab.eval.conversation import conversation_metrics, gold_functions, turn_kind
from eris_lab.eval.datasets import fetch_bfcl, load_suite
from eris_lab.eval.metrics import QueryResult
from eris_lab.knobs import Knobs
from eris_lab.offer import build
from eris_lab.policy import Decision, Hit, Rule, with_added, with_memory
from eris_lab.router import added_tools, last_turn_tools

# -- gold parsing ------------------------------------------------------------------------------------


@pytest.mark.parametrize("calls, names", [
    (["cd(folder='document')", "mkdir(dir_name='temp')", "mv(source='a', destination='temp')"], ("cd", "mkdir", "mv")),
    (["cd(folder='temp')", "grep(file_name='f.pdf',pattern='budget analysis')", "cd(folder='..')"], ("cd", "grep")),
    (["sort('final_report.pdf')"], ("sort",)),
    (["GorillaFileSystem.ls(a=True)"], ("ls",)),
    (["place_order(order_type='Buy', symbol='AAPL', price=1.5e2, amount=100)"], ("place_order",)),
    (["send_message(receiver_id='USR002', message='it (really) works, \"ok\"')"], ("send_message",)),
    ([], ()),
])
def test_gold_functions_parse_call_strings_with_ast(calls, names):
    assert gold_functions(calls) == names


@pytest.mark.parametrize("bad", [["cd(folder='x'"], ["42"], ["(lambda: 1)()"], [None], ["a = f(1)"]])
def test_gold_functions_refuse_what_is_not_a_named_call(bad):
    with pytest.raises(DataError, match="turn 2"):
        gold_functions(bad, where="x.json: c1 turn 2")


@pytest.mark.parametrize("gold, previous, kind", [
    (("cd", "grep"), None, "first"), (("cd", "grep"), ("cd", "mv"), "follow-up"), (("sort",), ("cd", "mv"), "switch")])
def test_turn_kind(gold, previous, kind):
    assert turn_kind(gold, previous) == kind


# -- a fake BFCL data folder -------------------------------------------------------------------------

FS = [
    {"name": "cd", "description": "This tool belongs to the file system. Tool description: Change the current directory.",
     "parameters": {"type": "dict", "properties": {"folder": {"type": "string", "description": "Folder to go to."}},
                    "required": ["folder"]},
     "response": {"type": "dict", "properties": {"current_working_directory": {"type": "string"}}}},
    {"name": "mv", "description": "This tool belongs to the file system. Tool description: Move a file.",
     "parameters": {"type": "dict", "properties": {
         "source": {"type": "string", "description": "File name from the current directory."},
         "destination": {"type": "string", "description": "Destination folder."}},
         "required": ["source", "destination"]}},
    {"name": "sort", "description": "This tool belongs to the file system. Tool description: Sort a file by line.",
     "parameters": {"type": "dict", "properties": {
         "file_name": {"type": "string", "description": "The file name in the current directory."}},
         "required": ["file_name"]}},
    {"name": "pwd", "description": "This tool belongs to the file system. Tool description: Print the directory.",
     "parameters": {"type": "dict", "properties": {}},
     "response": {"type": "dict", "properties": {"current_working_directory": {"type": "string"}}}},
]
TRAVEL = [
    {"name": "authenticate_travel", "description": "This tool belongs to the travel API. Tool description: Log in.",
     "parameters": {"type": "dict", "properties": {"client_id": {"type": "string"}}, "required": ["client_id"]},
     "response": {"type": "dict", "properties": {"access_token": {"type": "string"}}}},
    {"name": "book_flight", "description": "This tool belongs to the travel API. Tool description: Book a flight.",
     "parameters": {"type": "dict", "properties": {"access_token": {"type": "string"}, "to": {"type": "string"}},
                    "required": ["access_token", "to"]},
     "response": {"type": "dict", "properties": {"booking_id": {"type": "string"}}}},
    {"name": "cancel_booking", "description": "This tool belongs to the travel API. Tool description: Cancel.",
     "parameters": {"type": "dict", "properties": {"access_token": {"type": "string"}, "booking_id": {"type": "string"}},
                    "required": ["access_token", "booking_id"]}},
]


def _write(folder, name, rows):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def fake_bfcl(tmp_path, monkeypatch):
    data = tmp_path / "bfcl_eval" / "data"
    _write(data / "multi_turn_func_doc", "gorilla_file_system.json", FS)
    _write(data / "multi_turn_func_doc", "travel_booking.json", TRAVEL)
    for stem in set(conversation.CLASS_FILES.values()) - {"gorilla_file_system", "travel_booking"}:
        _write(data / "multi_turn_func_doc", f"{stem}.json", [])
    user = lambda text: [{"role": "user", "content": text}]  # noqa: E731
    base = [{"id": "c0", "involved_classes": ["GorillaFileSystem"], "excluded_function": ["pwd"],
             "question": [user("move a.txt into temp"), user("now sort it"), user("and move b.txt too")]}]
    base_truth = [{"id": "c0", "ground_truth": [["cd(folder='doc')", "mv(source='a.txt',destination='temp')"],
                                                ["sort(file_name='a.txt')"], ["mv(source='b.txt',destination='t')"]]}]
    miss = [{"id": "m0", "involved_classes": ["GorillaFileSystem", "TravelAPI"], "missed_function": {"2": ["sort"]},
             "question": [user("move a.txt into temp"), user("sort a.txt please"), [], user("book me a flight")]}]
    miss_truth = [{"id": "m0", "ground_truth": [["cd(folder='d')", "mv(source='a.txt',destination='temp')"], [],
                                                ["sort(file_name='a.txt')"],
                                                ["authenticate_travel(client_id='x')", "book_flight(access_token='t',to='LA')"]]}]
    _write(data, "BFCL_v4_multi_turn_base.json", base)
    _write(data / "possible_answer", "BFCL_v4_multi_turn_base.json", base_truth)
    _write(data, "BFCL_v4_multi_turn_miss_func.json", miss)
    _write(data / "possible_answer", "BFCL_v4_multi_turn_miss_func.json", miss_truth)
    monkeypatch.setattr(conversation, "_bfcl_data", lambda: data)
    conversation._load_from.cache_clear()
    conversation._class_docs.cache_clear()
    yield data
    conversation._load_from.cache_clear()
    conversation._class_docs.cache_clear()


def test_one_record_per_turn_with_gold_history_and_own_catalogue(fake_bfcl):
    suite = conversation.load_multi_turn("multi_turn_base")
    assert [q.id for q in suite.queries] == ["c0:0", "c0:1", "c0:2"]
    q0, q1, q2 = suite.queries
    assert q0.gold == ("cd", "mv") and q0.history == () and "first" in q0.tags
    assert q1.history == ({"role": "user", "content": "move a.txt into temp"},
                          {"role": "tool_used", "name": "cd"}, {"role": "tool_used", "name": "mv"})
    assert "switch" in q1.tags and "api:GorillaFileSystem" in q1.tags
    assert "switch" in q2.tags  # shares no tool with the turn before (sort), though it shares mv with turn 0
    assert q0.catalog.names == ("cd", "mv", "sort")  # pwd excluded by the conversation
    assert q0.catalog is q2.catalog  # one catalogue object per distinct catalogue: one fit


def test_miss_func_withholds_the_function_until_its_turn(fake_bfcl):
    suite = conversation.load_multi_turn("multi_turn_miss_func")
    asked, back, later = suite.queries[1], suite.queries[2], suite.queries[3]
    assert "sort" not in asked.catalog and asked.gold == () and asked.expect == "none"
    assert "withheld" in asked.tags
    assert "sort" in back.catalog and back.gold == ("sort",) and {"returned", "back:sort"} <= set(back.tags)
    assert back.query == "sort a.txt please"  # the pending request, since the turn has no message
    assert back.history[-1] == {"role": "tools_added", "names": ["sort"]}  # BFCL lists it again here
    assert added_tools(back.history) == ("sort",) and added_tools(later.history) == ()
    assert "sort" in later.catalog and later.gold == ("authenticate_travel", "book_flight")
    # the withheld turn's catalogue cannot hold it, whatever a strategy offers
    assert set(asked.catalog.names) == {"cd", "mv", "pwd", "authenticate_travel", "book_flight", "cancel_booking"}


def test_a_returned_function_reenters_the_vectors_calibration_and_offer(fake_bfcl, fake_embedder):
    from eris_lab.calibration import catalog_fingerprint
    from eris_lab.strategies import Context, EmbeddingPolicy

    suite = conversation.load_multi_turn("multi_turn_miss_func")
    asked, back = suite.queries[1], suite.queries[2]
    assert catalog_fingerprint(asked.catalog) != catalog_fingerprint(back.catalog)  # a new calibration cache key
    policy = EmbeddingPolicy(embedder=fake_embedder).fit(asked.catalog)
    assert len(policy.router_.tool_vectors) == len(asked.catalog)
    policy.fit(back.catalog)
    assert len(policy.router_.tool_vectors) == len(back.catalog)  # the vectors hold the function again
    narrow = Knobs(threshold=-1.0, single_hit_floor=-1.0, subset_margin=0.0, widen_k=1, max_whole_roster=1)
    offers = {added: EmbeddingPolicy(embedder=fake_embedder, knobs=narrow, added=added, companions="").fit(
        back.catalog).offer(back.query, Context(history=back.history)) for added in (True, False)}
    top = offers[False].names  # the one best-scored tool
    assert len(top) == 1 and offers[True].names == ("sort",) + tuple(n for n in top if n != "sort")


def test_miss_func_gold_calling_a_withheld_function_keeps_it_and_says_so(fake_bfcl):
    rows = [json.loads(line) for line in (fake_bfcl / "possible_answer" / "BFCL_v4_multi_turn_miss_func.json").open()]
    rows[0]["ground_truth"][0].append("sort(file_name='x')")  # BFCL's multi_turn_miss_func_49 does this
    _write(fake_bfcl / "possible_answer", "BFCL_v4_multi_turn_miss_func.json", rows)
    suite = conversation.load_multi_turn("multi_turn_miss_func")
    assert "sort" in suite.queries[0].catalog and "sort" not in suite.queries[1].catalog
    assert "1 turns call a function BFCL withholds" in suite.notes


def test_malformed_conversations_are_data_errors_naming_the_case(fake_bfcl):
    _write(fake_bfcl, "BFCL_v4_multi_turn_base.json", [{"id": "c0", "involved_classes": ["Nope"], "question": []}])
    with pytest.raises(DataError, match="unknown API class 'Nope'"):
        conversation.load_multi_turn("multi_turn_base")
    conversation._load_from.cache_clear()
    _write(fake_bfcl, "BFCL_v4_multi_turn_base.json",
           [{"id": "c0", "involved_classes": ["GorillaFileSystem"], "question": [[{"role": "user", "content": "x"}]]}])
    _write(fake_bfcl / "possible_answer", "BFCL_v4_multi_turn_base.json", [{"id": "c0", "ground_truth": [["cat(f='x')"]]}])
    with pytest.raises(DataError, match="'cat' is not in the turn's catalogue"):
        conversation.load_multi_turn("multi_turn_base")


# -- companions ----------------------------------------------------------------------------------------


def _catalog(rows, source="t"):
    return Catalog(tools_from_json(rows, source=source), source=source)


def test_companions_from_schemas_link_ids_tokens_and_the_current_directory():
    fs, travel = from_schemas(_catalog(FS)), from_schemas(_catalog(TRAVEL))
    assert fs["mv"] == (("cd", "schema"),) and fs["sort"] == (("cd", "schema"),)
    assert "cd" not in fs  # cd reads no current-directory parameter; pwd only reports it (takes nothing)
    assert all(c != "pwd" for pairs in fs.values() for c, _ in pairs)
    assert travel["book_flight"] == (("authenticate_travel", "schema"),)
    assert dict(travel["cancel_booking"]) == {"authenticate_travel": "schema", "book_flight": "schema"}
    assert "authenticate_travel" not in travel  # it hands the token out, it needs none


def test_schema_links_need_an_identifier_not_any_shared_name():
    rows = [{"name": "post", "description": "Post a message.", "parameters": {
                "type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]}},
            {"name": "get", "description": "Get a post.", "parameters": {"type": "object", "properties": {}},
             "response": {"type": "object", "properties": {"content": {"type": "string"}}}}]
    assert from_schemas(_catalog(rows)) == {}


TRADING = [
    {"name": "get_stock_info", "description": "This tool belongs to the trading system. Tool description: Stock details.",
     "parameters": {"type": "dict", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]},
     "response": {"type": "dict", "properties": {"price": {"type": "float"}, "volume": {"type": "float"}}}},
    {"name": "get_order_details", "description": "This tool belongs to the trading system. Tool description: An order.",
     "parameters": {"type": "dict", "properties": {"order_id": {"type": "integer"}}, "required": ["order_id"]},
     "response": {"type": "dict", "properties": {"price": {"type": "float"}}}},
    {"name": "get_zipcode", "description": "This tool belongs to the trading system. Tool description: A zipcode.",
     "parameters": {"type": "dict", "properties": {"city": {"type": "string"}}, "required": ["city"]},
     "response": {"type": "dict", "properties": {"zipcode": {"type": "string"}}}},
    {"name": "place_order", "description": "This tool belongs to the trading system. Tool description: Place an order.",
     "parameters": {"type": "dict", "properties": {
         "price": {"type": "float"}, "where": {"type": "string", "description": "The zipcode of the branch."},
         "volume": {"type": "float"}},
         "required": ["price", "where"]},
     "response": {"type": "dict", "properties": {"status": {"type": "string"}, "price": {"type": "float"}}}},
    {"name": "get_weather", "description": "This tool belongs to the weather service. Tool description: Weather.",
     "parameters": {"type": "dict", "properties": {}},
     "response": {"type": "dict", "properties": {"price": {"type": "float"}}}},
]


def test_dataflow_companions_supply_a_required_value_from_a_lookup_of_the_same_family():
    table = from_dataflow(_catalog(TRADING))
    # price by name, the zipcode named in the parameter's description; volume is not required
    assert table == {"place_order": (("get_stock_info", "dataflow"), ("get_zipcode", "dataflow"))}
    # not: a lookup that needs an identifier (get_order_details), another family (get_weather),
    # a value that is not the lookup's first result (volume), a generic field (status)
    assert from_dataflow(_catalog(FS)) == {} and from_dataflow(_catalog(TRAVEL)) == {}


def test_declared_companions_from_a_descriptor_field_and_the_reference_table(tmp_path):
    toml = tmp_path / "d.toml"
    text = ('domain = "trip"\n[[tools]]\nname = "trip:book"\nshort_description = "Book a trip."\n'
            'companions = ["trip:login", "trip:gone"]\n'
            '[[tools]]\nname = "trip:login"\nshort_description = "Log in."\n')
    toml.write_text(text, encoding="utf-8")
    from eris_lab.catalog import load
    from eris_lab.errors import CatalogError

    with pytest.raises(CatalogError, match="companion 'trip:gone' is not a tool of this catalogue"):
        load(toml)  # a misspelt companion is refused where the file loads (bad_inputs.md row 69)
    toml.write_text(text.replace(', "trip:gone"', ""), encoding="utf-8")
    catalog = load(toml)
    assert catalog.tool("trip:book").companions == ("trip:login",)
    subset = Catalog([dataclasses.replace(catalog.tool("trip:book"), companions=("trip:login", "trip:gone")),
                      catalog.tool("trip:login")])
    assert declared(subset) == {"trip:book": (("trip:login", "declared"),)}  # a tool a subset leaves out is skipped
    offer = build(Decision(rule=Rule.SINGLE_STRONG_HIT, kind="subset", names=("trip:book",)), catalog)
    assert offer.names == ("trip:book", "trip:login")
    assert offer.overlays == ("companion trip:login <- trip:book",)
    web = Catalog.from_names(["web:fetch", "web:find"])
    assert declared(web) == {"web:fetch": (("web:find", "declared"),)}


def test_offer_overlay_names_the_source_and_inferred_companions_follow_only_the_first_tools():
    catalog = _catalog(FS)
    table = default_table(catalog)
    offer = build(Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("sort", "mv")), catalog, companions=table)
    assert offer.names == ("sort", "cd", "mv") and offer.overlays == ("companion cd <- sort (schema)",)
    far = build(Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("pwd", "pwd2", "x", "mv")),
                Catalog(list(catalog) + [Tool(name="pwd2", description="d"), Tool(name="x", description="d")]),
                companions=table)
    assert "cd" not in far.names  # mv is fourth: an inferred link does not fan out over a widened offer
    assert build(Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("sort",)), catalog, companions={}).names == ("sort",)


def test_merge_keeps_the_first_source():
    assert merge({"a": (("b", "declared"),)}, {"a": (("b", "schema"), ("c", "schema"))}) == {
        "a": (("b", "declared"), ("c", "schema"))}


def test_learned_companions_fit_on_sequences_and_apply_to_another_catalogue():
    fs, travel = _catalog(FS), _catalog(TRAVEL)
    turns = [("cd", "mv"), ("cd", "sort"), ("cd", "mv"), ("sort",), ("cd", "sort"), ("mv", "cd")] * 2
    labels = co_occurrence(turns, min_rate=0.7)
    assert ("mv", "cd") in labels and ("cd", "mv") not in labels
    pairs, features = pair_features(fs)
    assert features.shape == (len(pairs), len(PAIR_FEATURES)) == (12, len(PAIR_FEATURES))
    model = LearnedCompanions().fit(features, np.array([p in labels for p in pairs]))
    table = model.table(travel)  # another API: no travel label was seen
    assert set(table) <= set(travel.names)
    assert all(src == "learned" and c in travel for pairs_ in table.values() for c, src in pairs_)
    assert "authenticate_travel" in dict(table.get("book_flight", ()))  # the schema link transfers
    with pytest.raises(ValueError, match="both"):
        LearnedCompanions().fit(features, np.zeros(len(pairs)))


# -- dialog memory ---------------------------------------------------------------------------------------

KNOBS = Knobs(threshold=0.3, single_hit_floor=0.4, subset_margin=0.2, widen_k=5)


def test_last_turn_tools_are_those_after_the_last_user_message():
    history = [{"role": "user", "content": "a"}, {"role": "tool_used", "name": "ls"},
               {"role": "user", "content": "b"}, {"role": "tool_used", "name": "cd"},
               {"role": "tool_used", "name": "mv", "status": "error"}, {"role": "tool_used", "name": "cd"}]
    assert last_turn_tools(history) == ("cd",)
    assert last_turn_tools(history + [{"role": "user", "content": "c"}]) == ()


def test_added_tools_are_those_listed_after_the_last_user_message():
    history = [{"role": "user", "content": "a"}, {"role": "tools_added", "names": ["ls"]},
               {"role": "user", "content": "b"}, {"role": "tool_used", "name": "cd"},
               {"role": "tools_added", "names": ["sort", 3, "sort"]}]
    assert added_tools(history) == ("sort",)
    assert added_tools(history + [{"role": "user", "content": "c"}]) == ()
    assert added_tools(history + [{"role": "tool_used", "name": "sort"}]) == ()  # served


def test_added_tools_go_first_and_override_the_gate_but_not_a_greeting_or_the_roster():
    catalog = _catalog(FS)
    ranked = Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("mv", "sort", "cd"))
    first = with_added(ranked, ("sort", "gone"), catalog)
    assert first.names == ("sort", "mv", "cd") and first.rule == Rule.RANKED_SUBSET and first.sources == ()
    missing = with_added(Decision(rule=Rule.SINGLE_STRONG_HIT, kind="subset", names=("mv",)), ("sort",), catalog)
    assert missing.names == ("sort", "mv") and missing.sources == (("sort", "added"),)
    refused = with_added(Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=()), ("sort",), catalog)
    assert (refused.rule, refused.kind, refused.names) == (Rule.TOOLS_ADDED, "subset", ("sort",))
    greeting = Decision(rule=Rule.CONVERSATIONAL, kind="conversational", names=())
    roster = Decision(rule=Rule.UNSURE_FULL_ROSTER, kind="full_roster", names=catalog.names)
    for decision in (greeting, roster, ranked):
        assert with_added(decision, () if decision is ranked else ("sort",), catalog) == decision


def test_memory_keeps_a_relevant_tool_of_the_same_family():
    catalog = _catalog(FS + TRAVEL)
    decision = Decision(rule=Rule.SINGLE_STRONG_HIT, kind="subset", names=("sort",))
    ranked = [Hit(name="sort", score=0.7), Hit(name="cd", score=0.35), Hit(name="mv", score=0.1)]
    kept = with_memory(decision, ("cd", "mv"), ranked, catalog, KNOBS)
    assert kept.names == ("sort", "cd") and kept.sources == (("cd", "memory"),)
    assert "memory: cd" in kept.reason
    pointed = with_memory(decision, ("cd", "mv"), ranked, catalog, KNOBS, points_back=True)
    assert set(pointed.names) == {"sort", "cd", "mv"}


@pytest.mark.parametrize("last_turn", [("cd", "mv"), ("mv",), ("cd",)])
def test_memory_never_drags_tools_into_a_turn_on_another_api(last_turn):
    catalog = _catalog(FS + TRAVEL)
    decision = Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("book_flight", "cancel_booking"))
    ranked = [Hit(name="book_flight", score=0.8), Hit(name="cd", score=0.5), Hit(name="mv", score=0.5)]
    for points_back in (False, True):
        assert with_memory(decision, last_turn, ranked, catalog, KNOBS, points_back=points_back) == decision


def test_memory_leaves_weak_stale_tools_reference_knobs_and_full_rosters_alone():
    catalog = _catalog(FS)
    decision = Decision(rule=Rule.SINGLE_STRONG_HIT, kind="subset", names=("sort",))
    weak = [Hit(name="sort", score=0.7), Hit(name="mv", score=0.05)]
    assert with_memory(decision, ("mv",), weak, catalog, KNOBS) == decision  # stale: below threshold, no cue
    assert with_memory(decision, ("mv",), weak, catalog, Knobs(), points_back=True) == decision
    roster = Decision(rule=Rule.UNSURE_FULL_ROSTER, kind="full_roster", names=catalog.names)
    assert with_memory(roster, ("mv",), weak, catalog, KNOBS, points_back=True) == roster


def test_conversation_metrics_count_memory_only_tools_on_switch_turns():
    def result(tags, offered, overlays=(), gold=("a",)):
        return QueryResult(id="x", query="q", gold=gold, expect="all", offered=offered, tags=tags, overlays=overlays)

    rs = [result(("switch",), ("a", "b", "c", "m"), ("memory m",)),
          result(("switch",), ("a", "b", "c", "d")),
          result(("follow-up",), ("x", "m"), ("memory m",), gold=("m",)),
          result(("returned", "back:a"), ("a", "cd"), ("companion cd <- a (schema)",), gold=("a", "cd")),
          result(("returned", "back:a"), ("a",), gold=("a", "cd"))]
    m = conversation_metrics(rs)
    assert m["switch_memory_share"] == 0.125 and m["follow_up_recall"] == 1.0 and m["switch_recall"] == 1.0
    assert m["returned_recall"] == 0.5 and m["memory_hit_rate"] == 0.5 and m["companion_hit_rate"] == 1.0
    assert m["returned_function_recall"] == 1.0  # the function that came back is offered on both


# -- the real BFCL suites --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bfcl():
    return fetch_bfcl()


def test_real_multi_turn_base_turns_and_gold(bfcl):
    suite = load_suite("multi_turn_base")
    assert len(suite) == 734 and sum(q.expect == "all" for q in suite.queries) == 731
    q = suite.queries[0]
    assert q.id == "multi_turn_base_0:0" and q.gold == ("cd", "mkdir", "mv")
    assert "cp" not in q.catalog  # excluded by the conversation
    assert {"GorillaFileSystem", "TwitterAPI"} == {t[4:] for t in q.tags if t.startswith("api:")}


def test_real_miss_func_returned_turns_offerable_only_when_back(bfcl):
    suite = load_suite("multi_turn_miss_func")
    returned = [q for q in suite.queries if "returned" in q.tags]
    assert len(returned) == 200
    by_id = {q.id: q for q in suite.queries}
    for q in returned:
        conv, turn = q.id.rsplit(":", 1)
        before = by_id[f"{conv}:{int(turn) - 1}"]
        assert set(q.gold) <= set(q.catalog.names)
        assert set(before.catalog.names) < set(q.catalog.names), q.id  # what was withheld is back
        assert before.gold == () and "withheld" in before.tags
        assert set(added_tools(q.history)) == set(q.catalog.names) - set(before.catalog.names), q.id


def test_miss_causes_name_why_each_gold_function_was_not_offered():
    from eris_lab.eval.datasets import Query

    def pair(gold, offered, ranking, history=()):
        hits = tuple(Hit(name=n, score=1.0 - i / 10) for i, n in enumerate(ranking))
        return (QueryResult(id="x", query="q", gold=gold, expect="all", offered=offered, hits=hits),
                Query(id="x", query="q", gold=gold, history=tuple(history)))

    cases = [pair(("a",), (), ("a", "b")),                                                  # nothing offered
             pair(("a", "b"), ("b",), ("b", "c", "a"), [{"role": "tools_added", "names": ["a"]}]),
             pair(("a", "b"), ("b",), ("b", "c", "a"), [{"role": "tool_used", "name": "a"}]),
             pair(("a",), ("b", "c"), ("a", "b", "c")),                                     # ranked within, left out
             pair(("a", "b"), ("b", "c"), ("b", "c", "d", "a")),                            # companion
             pair(("a",), ("b", "c"), ("b", "c", "d", "a")),                                # ranked below
             pair(("a",), ("a",), ("a",))]                                                  # no miss
    out = conversation.miss_causes([r for r, _ in cases], [q for _, q in cases])
    assert out["turns_missed"] == 6 and out["functions_missed"] == 6 and out["functions"] == {"a": 6}
    assert list(out["causes"].values()) == [1, 1, 1, 1, 1, 1]


def test_size_bound_keeps_to_the_budget_and_bounds_every_cap():
    results = [QueryResult(id=str(i), query="q", gold=(f"t{i % 4}",), expect="all", offered=(),
                           hits=tuple(Hit(name=f"t{j}", score=1.0 - j / 100) for j in range(10))) for i in range(8)]
    best = conversation.size_bound(results, 3.0)
    assert best["mean_offer"] <= 3.0 and best["cap"] == 3 and best["recall"] == 0.75  # t3 is fourth
    assert conversation.size_bound(results, 4.0)["recall"] == 1.0
    assert conversation.size_bound(results, 0.5)["recall"] is None  # no grid point is that small


@pytest.mark.parametrize("classes, fold", [(("GorillaFileSystem", "MathAPI"), 0), (("TradingBot",), 1),
                                           (("GorillaFileSystem", "TwitterAPI"), None), ((), None)])
def test_fold_of_a_conversation_needs_every_class_in_one_fold(classes, fold):
    from eris_lab.eval.datasets import Query

    q = Query(id="c:0", query="q", gold=(), tags=("multi_turn_base",) + tuple(f"api:{c}" for c in classes))
    assert conversation.fold_of(q) == fold
