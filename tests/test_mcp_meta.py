"""The meta-tool route: search (hybrid and keyword fallback), permissions, grammars, MCP server.

Fast by default: the keyword path needs no model, the hybrid path runs on the FakeEmbedder, the
grammars are judged by llama.cpp's own engine (vocabulary only). The real MiniLM and the bundled
Gemma run only under ``-m slow``.
"""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, FakeEmbedder
from eris_lab.catalog import Catalog, Tool, load, tools_from_json
from eris_lab.errors import EmbedError, ErisLabError
from eris_lab.mcp.meta import META_NAMES, MetaSession, ToolSearch, access_of, meta_catalog, terms
from eris_lab.strategies.meta import MetaStrategy


@pytest.fixture(scope="module")
def demo() -> Catalog:
    return load(ROOT / "descriptors")


class BrokenEmbedder:
    """An embedder whose model is missing: every call raises EmbedError."""

    model_id = "broken"

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        raise EmbedError("the bundled embedding model is missing")


# the three ways search can run: keyword only, hybrid (fake embedder), an embedder that fails
PATHS = {
    "keyword": lambda: None,
    "hybrid": FakeEmbedder,
    "broken-embedder": BrokenEmbedder,
}


def _session(catalog, path, **kwargs) -> MetaSession:
    return MetaSession(catalog, PATHS[path](), **kwargs)


# ---------------------------------------------------------------------------------------------
# terms and access
# ---------------------------------------------------------------------------------------------


class TestTerms:
    def test_terms_fold_umlauts_and_map_german_aliases(self):
        assert "@overdue" in terms("überfällige Aufgaben") or "@overdue" in terms("überfällig")
        assert terms("überfällig") == terms("ueberfaellig")
        assert "@task" in terms("Aufgaben")

    def test_terms_match_whole_words_only(self):
        # "mail" is not found inside "mailbox"-like words, nor "archive" inside "archived" stems
        assert "mail" not in terms("gmailer")
        assert "@mail" not in terms("gmailer")

    def test_terms_e_mail_spellings_share_the_mail_group(self):
        for text in ("mail", "E-Mail", "emails", "Nachrichten"):
            assert "@mail" in terms(text), text

    def test_terms_drop_stopwords(self):
        assert terms("archive that mail") == ("archive", "@archive", "mail", "@mail")


class TestAccess:
    @pytest.mark.parametrize("name, expected", [
        ("agenda:list", "read"), ("agenda:remove", "write"), ("agenda:remind_at", "write"),
        ("mail:move", "write"), ("mail:check", "read"), ("clock:now", "read"), ("calc:evaluate", "read"),
        ("weather:forecast", "read"), ("memory:staged_list", "read"), ("memory:commit_all", "write"),
        ("get_current_weather", "read"), ("Alarm_1_AddAlarm", "write"), ("frobnicate", "write"),
    ])
    def test_access_of_reads_the_verb_table(self, name, expected):
        assert access_of(Tool(name=name, description="x")) == expected

    def test_access_of_prefers_the_descriptor_field(self):
        assert access_of(Tool(name="agenda:list", description="x", access="write")) == "write"

    def test_access_of_reads_mcp_read_only_hint(self):
        tools = tools_from_json({"tools": [
            {"name": "wipe_everything", "description": "d", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": True}},
            {"name": "list_things", "description": "d", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": False}}]})
        assert [access_of(t) for t in tools] == ["read", "write"]

    def test_access_field_rejects_unknown_values(self, tmp_path):
        path = tmp_path / "x.toml"
        path.write_text('[[tools]]\nname = "x:list"\nshort_description = "d"\naccess = "maybe"\n')
        with pytest.raises(ErisLabError) as err:
            load(path)
        assert str(err.value) == f"{path}: tools[0].access: expected one of ('read', 'write'), got 'maybe'"


# ---------------------------------------------------------------------------------------------
# search: the known traps, on every path
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", list(PATHS))
class TestSearch:
    def test_archive_that_mail_finds_the_mail_move_tool_first(self, demo, path):
        result = _session(demo, path).search("archive that mail")
        assert result["hits"][0]["name"] == "mail:move"

    @pytest.mark.parametrize("query", ["overdue tasks", "überfällige Aufgaben", "ueberfaellige Aufgaben"])
    def test_overdue_tasks_rank_the_read_tool_above_write_tools(self, demo, path, query):
        hits = _session(demo, path).search(query)["hits"]
        names = [h["name"] for h in hits]
        assert "agenda:list" in names
        first_write = min((i for i, h in enumerate(hits) if h["access"] == "write"), default=len(hits))
        assert names.index("agenda:list") < first_write

    @pytest.mark.parametrize("query", ["Archiviere die E-Mail von Tom", "archivieren mail"])
    def test_german_archive_finds_mail_move(self, demo, path, query):
        names = [h["name"] for h in _session(demo, path).search(query)["hits"]]
        assert "mail:move" in names[:2]

    def test_search_reports_its_path(self, demo, path):
        session = _session(demo, path)
        result = session.search("what time is it")
        assert result["mode"] == ("hybrid" if path == "hybrid" else "keyword")

    def test_hits_are_compact(self, demo, path):
        hit = _session(demo, path).search("archive that mail", k=3)["hits"][0]
        assert set(hit) == {"name", "description", "required", "optional", "access", "executable"}
        assert hit["required"] == ["messages", "folder"]
        assert len(hit["description"]) <= 100
        assert "properties" not in json.dumps(hit)

    def test_k_bounds_the_hits(self, demo, path):
        assert len(_session(demo, path).search("mail", k=2)["hits"]) == 2


def test_broken_embedder_falls_back_once_and_stays_on_keywords(demo):
    embedder = BrokenEmbedder()
    search = ToolSearch(demo, embedder)
    search.search("archive that mail")
    search.search("overdue tasks")
    assert search.last_mode == "keyword"
    assert embedder.calls == 1


def test_keyword_search_of_nothing_known_returns_no_hits(demo):
    assert _session(demo, "keyword").search("zzqx blorf")["hits"] == []


# ---------------------------------------------------------------------------------------------
# permissions are not ranking (both paths)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", list(PATHS))
class TestPermissions:
    def test_read_only_session_never_executes_a_write_tool_even_when_it_ranks_first(self, demo, path):
        session = _session(demo, path, read_only=True, show_forbidden=True)
        hits = session.search("archive that mail")["hits"]
        assert hits[0]["name"] == "mail:move" and hits[0]["executable"] is False
        result = session.execute("mail:move", {"messages": ["from:Tom"], "folder": "archive"})
        assert result.status == "refused"
        assert "read-only" in result.error
        assert "mail:move" not in session.executable

    def test_read_only_session_hides_write_tools_by_default(self, demo, path):
        session = _session(demo, path, read_only=True)
        hits = session.search("archive that mail")["hits"]
        assert hits and all(h["access"] == "read" and h["executable"] for h in hits)

    def test_hit_outside_the_allowed_catalogue_is_never_executable(self, demo, path):
        allowed = [n for n in demo.names if n != "mail:move"]
        session = _session(demo, path, allowed=allowed, show_forbidden=True, scope="catalogue")
        hits = session.search("archive that mail")["hits"]
        assert hits[0]["name"] == "mail:move" and hits[0]["executable"] is False
        assert session.execute("mail:move", {"messages": ["x"], "folder": "archive"}).status == "refused"
        assert "mail:move" not in session.executable
        schema = session.execute_schema()
        assert "mail:move" not in json.dumps(schema)

    def test_execute_needs_a_search_that_returned_the_tool(self, demo, path):
        session = _session(demo, path)
        assert session.execute("clock:now", {}).status == "refused"
        session.search("what time is it now")
        assert "clock:now" in session.last_search
        assert session.execute("clock:now", {"timezone": "UTC"}).status == "ok"

    def test_read_only_session_executes_a_read_tool(self, demo, path):
        session = _session(demo, path, read_only=True)
        session.search("calculate 17 times 23")
        result = session.execute("calc:evaluate", {"expression": "17*23"})
        assert result.status == "ok" and "391" in result.text

    def test_unknown_tool_is_refused(self, demo, path):
        session = _session(demo, path, scope="catalogue")
        assert session.execute("rm:rf", {}).status == "refused"


def test_descriptor_access_field_overrides_the_verb_table_for_permissions(demo):
    tools = [Tool(name="x:list", description="list things but actually deletes", access="write"),
             Tool(name="x:wipe", description="wipe", access="read")]
    session = MetaSession(Catalog(tools), None, read_only=True, scope="catalogue")
    assert session.executable == ("x:wipe",)


# ---------------------------------------------------------------------------------------------
# describe / call dispatch
# ---------------------------------------------------------------------------------------------


def test_describe_returns_the_full_schema_and_records_it(demo):
    session = MetaSession(demo, None)
    out = session.describe("mail:move")
    assert out["parameters"] == demo.tool("mail:move").parameters
    assert session.described == ("mail:move",)
    assert session.describe("nope:nope") == {"error": "unknown tool 'nope:nope'; call tool_search first"}


def test_call_dispatches_the_three_meta_tools(demo):
    session = MetaSession(demo, None)
    text, error = session.call("tool_search", {"query": "calculate 2+2"})
    assert not error and json.loads(text)["hits"][0]["name"] == "calc:evaluate"
    text, error = session.call("tool_describe", {"name": "calc:evaluate"})
    assert not error and "expression" in json.loads(text)["parameters"]["properties"]
    text, error = session.call("tool_execute", {"name": "calc:evaluate", "arguments": {"expression": "2+2"}})
    assert not error and "4" in text
    assert session.call("tool_frob", {})[1] is True


def test_meta_catalog_is_three_valid_tools():
    catalog = meta_catalog()
    assert catalog.names == META_NAMES == ("tool_search", "tool_describe", "tool_execute")
    assert [t.parameters["required"] for t in catalog] == [["query"], ["name"], ["name", "arguments"]]


# ---------------------------------------------------------------------------------------------
# grammars, judged by llama.cpp's own engine
# ---------------------------------------------------------------------------------------------


def _envelope(name: str, arguments: dict) -> str:
    return json.dumps({"thought": "t", "status": "call", "message": None,
                       "tool_calls": [{"name": name, "arguments": arguments}]})


@pytest.fixture(scope="module")
def judge():
    pytest.importorskip("llama_cpp")
    from eris_lab.grammar.oracle import oracle

    return oracle()


class TestGrammar:
    def test_before_any_search_only_tool_search_is_offered(self, demo, judge):
        session = MetaSession(demo, None)
        assert session.offer().names == ("tool_search",)
        gbnf = session.grammar().text
        assert judge.accepts(gbnf, _envelope("tool_search", {"query": "archive that mail"}))
        assert not judge.accepts(gbnf, _envelope("tool_execute", {"name": "mail:move", "arguments": {}}))

    def test_execute_name_is_constrained_to_the_last_search(self, demo, judge):
        session = MetaSession(demo, None)
        session.search("archive that mail", k=3)
        assert session.offer().names == META_NAMES
        gbnf = session.grammar().text
        found = session.last_search[0]
        assert judge.accepts(gbnf, _envelope("tool_execute", {"name": found, "arguments": {}}))
        assert not judge.accepts(gbnf, _envelope("tool_execute", {"name": "clock:now", "arguments": {}}))
        assert not judge.accepts(gbnf, _envelope("tool_describe", {"name": "clock:now"}))
        assert judge.accepts(gbnf, _envelope("tool_describe", {"name": found}))

    def test_described_tool_arguments_follow_its_schema(self, demo, judge):
        session = MetaSession(demo, None)
        session.search("calculate 17 times 23", k=3)
        assert session.last_search[0] == "calc:evaluate"
        before = session.execute_grammar().text
        assert judge.accepts(before, json.dumps({"name": "calc:evaluate", "arguments": {"nonsense": 1}}))
        session.describe("calc:evaluate")
        after = session.execute_grammar().text
        assert judge.accepts(after, json.dumps({"name": "calc:evaluate", "arguments": {"expression": "17*23"}}))
        assert not judge.accepts(after, json.dumps({"name": "calc:evaluate", "arguments": {"nonsense": 1}}))
        assert not judge.accepts(after, json.dumps({"name": "calc:evaluate", "arguments": {}}))
        other = session.last_search[1]
        assert judge.accepts(after, json.dumps({"name": other, "arguments": {"anything": True}}))
        envelope = session.grammar().text
        assert judge.accepts(envelope, _envelope("tool_execute", {"name": "calc:evaluate",
                                                                  "arguments": {"expression": "1+1"}}))
        assert not judge.accepts(envelope, _envelope("tool_execute", {"name": "calc:evaluate",
                                                                      "arguments": {"expr": "1+1"}}))

    def test_read_only_grammar_cannot_name_a_write_tool(self, demo, judge):
        session = MetaSession(demo, None, read_only=True, show_forbidden=True)
        session.search("archive that mail")
        assert session.last_search[0] == "mail:move"
        gbnf = session.execute_grammar().text
        assert not judge.accepts(gbnf, json.dumps({"name": "mail:move", "arguments": {}}))
        assert judge.accepts(gbnf, json.dumps({"name": session.executable[0], "arguments": {}}))

    def test_catalogue_scope_names_every_executable_tool(self, demo, judge):
        session = MetaSession(demo, None, scope="catalogue", read_only=True)
        gbnf = session.execute_grammar().text
        assert judge.accepts(gbnf, json.dumps({"name": "clock:now", "arguments": {}}))
        assert not judge.accepts(gbnf, json.dumps({"name": "agenda:remove", "arguments": {}}))

    def test_progress_drops_search_after_a_search_and_leaves_execute_after_describe(self, demo, judge):
        session = MetaSession(demo, None, progress=True)
        session.search("calculate 17 times 23")
        assert session.offer().names == ("tool_describe", "tool_execute")
        gbnf = session.grammar().text
        assert not judge.accepts(gbnf, _envelope("tool_search", {"query": "again"}))
        session.describe("calc:evaluate")
        assert session.offer().names == ("tool_execute",)
        session.search("zzqx blorf")  # nothing executable: search stays on offer
        assert session.offer().names == ("tool_search",)

    def test_execute_grammar_before_a_search_is_an_error(self, demo):
        with pytest.raises(ErisLabError) as err:
            MetaSession(demo, None).execute_grammar()
        assert str(err.value) == "tool_execute: no tool is executable yet; call tool_search first"


# ---------------------------------------------------------------------------------------------
# strategy
# ---------------------------------------------------------------------------------------------


def test_strategy_offer_is_the_executable_hits_of_one_search(demo):
    strategy = MetaStrategy(search="keyword", k=3, read_only=True).fit(demo)
    offer = strategy.offer("overdue tasks")
    assert offer.names[0] == "agenda:list"
    assert all(access_of(demo.tool(n)) == "read" for n in offer.names)
    assert strategy.offer("zzqx blorf").kind == "conversational"


def test_strategy_needs_fit():
    with pytest.raises(ErisLabError):
        MetaStrategy().offer("x")


# ---------------------------------------------------------------------------------------------
# slow: the real embedding model
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_traps_hold_with_the_bundled_minilm(demo):
    from eris_lab.embed import SentenceTransformerEmbedder

    session = MetaSession(demo, SentenceTransformerEmbedder())
    assert session.search("archive that mail")["hits"][0]["name"] == "mail:move"
    assert session.searcher.last_mode == "hybrid"
    hits = session.search("overdue tasks")["hits"]
    assert hits[0]["name"] == "agenda:list"


# ---------------------------------------------------------------------------------------------
# meta_bench, model-free (a scripted runner) and slow (the bundled Gemma)
# ---------------------------------------------------------------------------------------------


class ScriptedRunner:
    """A runner that answers from a script and records each grammar it was given."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.grammars = []

    def generate(self, messages, *, grammar=None, max_tokens=128, temperature=0.0):
        from eris_lab.llm import Generation

        self.grammars.append(grammar)
        return Generation(text=self.replies.pop(0), n_prompt_tokens=0, n_tokens=0, seconds=0.0,
                          tokens_per_s=0.0, grammar_used=grammar is not None)


def test_run_meta_counts_model_calls_until_execute(demo):
    from eris_lab.bench.meta import Task, run_meta

    runner = ScriptedRunner([_envelope("tool_search", {"query": "calculate"}),
                             _envelope("tool_execute", {"name": "calc:evaluate",
                                                        "arguments": {"expression": "17*23"}})])
    record = run_meta(Task(text="Calculate 17 times 23", gold="calc:evaluate"), runner, demo, progress=True)
    assert record["model_calls"] == 2 and record["reached"] and record["found"]
    assert record["status"] == "ok"


def test_run_meta_counts_a_refused_execute_as_not_reached(demo):
    from eris_lab.bench.meta import Task, run_meta

    runner = ScriptedRunner([_envelope("tool_search", {"query": "weather"}),
                             _envelope("tool_execute", {"name": "calc:evaluate", "arguments": {}})])
    record = run_meta(Task(text="Calculate 17 times 23", gold="calc:evaluate"), runner, demo)
    assert record["status"] == "refused" and not record["reached"]


def test_prompt_tokens_compares_the_three_first_prompts(demo):
    from eris_lab.bench.meta import prompt_tokens

    class Router:
        def route(self, text):
            from eris_lab.strategies.meta import MetaStrategy

            class R:
                offer = MetaStrategy(k=2, search="keyword").fit(demo).offer(text)
            return R

    row = prompt_tokens(demo, ["archive that mail"], router=Router(), tokenizer=lambda t: t.split())
    assert row["meta"] < row["catalogue"] and row["routed_mean"] < row["catalogue"]
    assert row["routed_mean_offer"] == 2


@pytest.mark.slow
def test_bench_routes_run_with_the_bundled_model(demo):
    from eris_lab.embed import SentenceTransformerEmbedder
    from eris_lab.llm import LlamaRunner
    from eris_lab.bench.meta import DEMO_TASKS, run_meta, run_routed
    from eris_lab.router import Router

    embedder = SentenceTransformerEmbedder()
    runner = LlamaRunner(n_threads=1, n_ctx=4096)
    task = DEMO_TASKS[1]
    routed = run_routed(task, runner, Router(demo, embedder), demo, max_tokens=64)
    meta = run_meta(task, runner, demo, embedder=embedder, progress=True, max_steps=2, max_tokens=64)
    assert routed["model_calls"] == 1
    assert 1 <= meta["model_calls"] <= 2
