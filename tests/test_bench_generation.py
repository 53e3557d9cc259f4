"""The generation benchmark: the BFCL-style AST matcher, the scoring, and (slow) one real run.

Fast tests use hand-made ground truths and a fake runner; the ``slow`` test loads the bundled
Gemma 3 270M and runs two BFCL cases through every condition.
"""

from __future__ import annotations

import json

import pytest

from eris_lab import cli
from eris_lab.catalog import Catalog, tools_from_json
from eris_lab.bench import generation
from eris_lab.eval.datasets import Query
from eris_lab.loop import began_call
from eris_lab.bench.generation import Outcome, match_call, run_case, score, standardize_string, value_matches
from eris_lab.llm import Generation
from eris_lab.knobs import Knobs, with_levers
from eris_lab.policy import Rule

SCHEMA = {
    "type": "dict",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "ratio": {"type": "float"},
        "metric": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "budget": {"type": "dict", "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}}},
    },
    "required": ["city", "days"],
}
TRUTH = {"weather.get": {
    "city": ["San Diego", "SD"],
    "days": [3],
    "ratio": ["", 0.5],
    "metric": ["", True],
    "tags": [["sun", "Rain"], ""],
    "budget": [{"min": [300000], "max": [400000, ""]}, ""],
}}


# -- standardize_string and value_matches ---------------------------------------------------------

@pytest.mark.parametrize("raw,expected", [
    ("April 1, 2024", "april12024"),
    ("San-Diego_CA.", "sandiegoca"),
    ("it's", 'it"s'),
    ("a/b*c^d", "abcd"),
])
def test_standardize_string_is_bfcls_normalisation(raw, expected):
    assert standardize_string(raw) == expected


@pytest.mark.parametrize("value,accepted,ok", [
    ("san diego", ["San Diego"], True),
    ("San Diego, CA", ["San Diego"], False),
    (3, [3], True),
    (3.0, [3], True),  # by value; the integer type check lives in match_call
    (3, [3.0], True),
    ("3", [3], False),
    (True, [1], False),
    (1, [True], False),
    (True, ["", True], True),
    ("", ["", True], True),
    (None, [None], True),
    (["sun", "rain"], [["sun", "Rain"]], True),
    (["rain", "sun"], [["sun", "Rain"]], False),
    (["sun"], [["sun", "Rain"]], False),
    ({"min": 300000}, [{"min": [300000], "max": [400000, ""]}], True),
    ({"max": 400000}, [{"min": [300000], "max": [400000, ""]}], False),
    ({"min": 300000, "extra": 1}, [{"min": [300000], "max": [400000, ""]}], False),
    ([{"a": "X"}], [[{"a": ["x"]}]], True),
    ("x", [], False),
])
def test_value_matches_table(value, accepted, ok):
    assert value_matches(value, accepted) is ok


# -- match_call ----------------------------------------------------------------------------------

@pytest.mark.parametrize("arguments,reason", [
    ({"city": "SD", "days": 3}, ""),
    ({"city": "sd", "days": 3, "ratio": 0.5, "metric": True, "tags": ["Sun", "rain"],
      "budget": {"min": 300000, "max": 400000}}, ""),
    ({"city": "SD", "days": 3, "ratio": 1}, "parameter 'ratio': 1 is not among ['', 0.5]"),
    ({"city": "SD"}, "missing required parameter 'days'"),
    ({"city": "SD", "days": 3, "units": "C"}, "unknown parameter 'units'"),
    ({"city": "SD", "days": 3.0}, "parameter 'days': expected an integer, got the float 3.0"),
    ({"city": "Boston", "days": 3}, "parameter 'city': 'Boston' is not among ['San Diego', 'SD']"),
    ("city=SD", "arguments are not an object: 'city=SD'"),
])
def test_match_call_judges_arguments_against_possible_answer(arguments, reason):
    ok, why = match_call("weather.get", arguments, TRUTH, SCHEMA)
    assert (ok, why) == (reason == "", reason)


def test_match_call_wrong_name_fails_first():
    assert match_call("weather.other", {}, TRUTH, SCHEMA) == (False, "wrong function 'weather.other'; expected 'weather.get'")


def test_match_call_parameter_the_ground_truth_lacks_is_unknown_even_if_the_schema_has_it():
    truth = {"f": {"a": [1]}}
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    assert match_call("f", {"a": 1, "b": "x"}, truth, schema) == (False, "unknown parameter 'b'")


def test_match_call_ground_truth_parameter_without_default_must_be_sent():
    truth = {"f": {"a": [1], "b": ["x"]}}
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]}
    assert match_call("f", {"a": 1}, truth, schema) == (False, "missing parameter 'b' (no default accepted)")


def test_match_call_without_schema_uses_the_ground_truth_only():
    assert match_call("f", {"a": 1}, {"f": {"a": [1], "b": [""]}}) == (True, "")


# -- score ---------------------------------------------------------------------------------------

def _o(**kw) -> Outcome:
    base = dict(suite="multiple", id="m1", condition="a", expect="all", gold=("f",), offered=3, offer_kind="full_roster")
    base.update(kw)
    return Outcome(**base)


def test_score_rates_per_suite_and_condition():
    outcomes = [
        _o(id="m1", calls=("f",), name_ok=True, ast_ok=True, n_tokens=10, tokens_per_s=10.0, prompt_tokens=100),
        _o(id="m2", calls=("g", "f"), name_ok=False, n_tokens=20, tokens_per_s=20.0, prompt_tokens=300),
        _o(id="m3", error="n_ctx: too long"),
        _o(id="m4", calls=("f",), name_ok=True, ast_ok=False, n_tokens=30, tokens_per_s=30.0, prompt_tokens=200),
        _o(id="m1", condition="b", calls=("f",), name_ok=True, ast_ok=True, grammar=True, n_tokens=40,
           tokens_per_s=20.0, grammar_s=0.5),
        _o(suite="irrelevance", id="i1", condition="b", expect="none", gold=(), grammar=True, n_tokens=10,
           tokens_per_s=10.0, grammar_s=0.5),
        _o(suite="irrelevance", id="i2", condition="c", expect="none", gold=(), offered=0, skipped="empty offer"),
        _o(suite="irrelevance", id="i3", condition="c", expect="none", gold=(), calls=("f",), grammar=True),
    ]
    scores = score(outcomes)
    a = scores["suites"]["multiple"]["a"]
    assert (a["n"], a["name_accuracy"], a["ast_accuracy"], a["call_rate"], a["multi_call_rate"]) == (4, 0.5, 0.25, 0.75, 0.25)
    assert (a["empty_call_rate"], a["errors"], a["mean_prompt_tokens"], a["tokens_per_s_median"]) == (0.25, 1, 200.0, 20.0)
    assert a["tokens_per_s_pooled"] == 20.0 and a["grammar_share"] is None  # 60 tokens in 3 s
    irr = scores["suites"]["irrelevance"]
    assert irr["b"]["empty_call_rate"] == 1.0 and irr["b"]["name_accuracy"] is None
    assert (irr["c"]["empty_call_rate"], irr["c"]["skipped"], irr["c"]["mean_offer"]) == (0.5, 1, 1.5)
    speed = scores["speed"]
    assert speed["no_grammar"]["runs"] == 3 and speed["no_grammar"]["grammar_share"] is None
    assert speed["grammar"]["runs"] == 2 and speed["grammar"]["grammar_share"] == 0.3333  # 1 s of 3 s


def test_score_a_call_cut_off_by_the_token_limit_is_not_empty_and_fails_accuracy():
    outcomes = [
        _o(suite="irrelevance", id="i1", expect="none", gold=(), started_call=True, finish_reason="length"),
        _o(suite="irrelevance", id="i2", expect="none", gold=(), finish_reason="stop"),
        _o(id="m1", started_call=True, finish_reason="length", ast_reason="no call (one begun, cut off at the token limit)"),
        _o(id="m2", calls=("f",), name_ok=True, ast_ok=True, finish_reason="stop"),
    ]
    suites = score(outcomes)["suites"]
    irr, mul = suites["irrelevance"]["a"], suites["multiple"]["a"]
    assert (irr["empty_call_rate"], irr["cut_call_rate"], irr["truncated_rate"], irr["call_rate"]) == (0.5, 0.5, 0.5, 0.0)
    assert (mul["name_accuracy"], mul["cut_call_rate"], mul["empty_call_rate"]) == (0.5, 0.5, 0.0)


@pytest.mark.parametrize("text,began", [
    ('{"thought": "", "status": "call", "message": null, "tool_calls": [{"name": "weather.get", "argu', True),
    ('{"thought": "", "status": "answer", "message": "no tool fits"', False),
    ('Sure: {"name": "weather.get", "arguments": {"city": "S', True),
    ('Sure: {"name": "other.tool", "arguments": {', False),
    ("I'm a sports fan. I'm a sports fan.", False),
])
def test_began_call_reads_a_cut_envelope_or_an_offered_name(text, began):
    assert began_call(text, ("weather.get", "news.get")) is began


def test_rescore_recomputes_scores_from_saved_cases(tmp_path, capsys):
    outcomes = [_o(id="m1", calls=("f",), name_ok=True, ast_ok=True), _o(id="m2", started_call=True)]
    record = {"settings": {"model": "m.gguf", "n_threads": 1, "max_tokens": 8, "limit": 2, "seed": 5,
                           "loadavg_1m_start": 1.0, "loadavg_1m_end": 1.0},
              "scores": {}, "seconds_per_case": {"multiple": 1.0, "all": 1.0, "cases": 2, "total_s": 2.0},
              "cases": [{**generation.asdict(o), "empty": o.empty} for o in outcomes]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    assert cli.main(["bench", "generation", "--rescore", str(path)]) == 0
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["scores"] == score(outcomes)
    assert "rescored" in capsys.readouterr().out


def test_score_of_nothing_is_empty():
    assert score([]) == {"suites": {}, "speed": {
        "no_grammar": {"runs": 0, "tokens": 0, "tokens_per_s_median": None, "tokens_per_s_pooled": None, "grammar_share": None},
        "grammar": {"runs": 0, "tokens": 0, "tokens_per_s_median": None, "tokens_per_s_pooled": None, "grammar_share": None}}}


# -- run_case with a fake runner -----------------------------------------------------------------

class FakeRunner:
    """Answers free text with a bare JSON call and, under a grammar, with an envelope."""

    def __init__(self):
        self.seen = []

    def generate(self, messages, *, grammar=None, max_tokens=128, temperature=0.0, stop=(), tools=()):
        self.seen.append((messages, grammar))
        if grammar is None:
            text = 'Sure. {"name": "weather.get", "arguments": {"city": "SD", "days": 3.0}}'
        else:
            text = json.dumps({"thought": "", "status": "call", "message": None,
                               "tool_calls": [{"name": "weather.get", "arguments": {"city": "San Diego", "days": 3}}]})
        return Generation(text=text, n_prompt_tokens=50, n_tokens=20, seconds=2.0, tokens_per_s=10.0,
                          grammar_used=grammar is not None, grammar_s=0.2 if grammar else 0.0)


class FixedRouter:
    """Offers ``names`` whatever the message, as the rule ``rule`` (what ``Router`` exposes of a route)."""

    knobs = Knobs()
    last_intents = ()

    def __init__(self, names, rule=Rule.GIVEN):
        self.names, self.rule = names, rule

    def route(self, text, history=()):
        from eris_lab.offer import Offer

        offer = Offer.given(self.names, reason="fake router", rule=self.rule)
        return type("Routed", (), {"offer": offer})()


def _catalog() -> Catalog:
    functions = [{"name": "weather.get", "description": "Weather forecast for a city.", "parameters": SCHEMA},
                 {"name": "news.get", "description": "News headlines.",
                  "parameters": {"type": "dict", "properties": {"topic": {"type": "string"}}, "required": ["topic"]}}]
    return Catalog(tools_from_json(functions, source="test"), source="test")


def test_run_case_scores_each_condition_from_what_the_model_said():
    catalog = _catalog()
    query = Query(id="m1", query="Weather in San Diego for 3 days?", gold=("weather.get",), catalog=catalog)
    runner = FakeRunner()
    out = run_case(runner, query, suite="multiple", conditions=("a", "b", "c"), truth=[TRUTH],
                   router_for=lambda cat: FixedRouter(("weather.get",)))
    a, b, c = out
    assert (a.calls, a.name_ok, a.ast_ok, a.grammar) == (("weather.get",), True, False, False)
    assert a.ast_reason == "parameter 'days': expected an integer, got the float 3.0"
    assert (b.name_ok, b.ast_ok, b.grammar, b.offered, b.grammar_s) == (True, True, True, 2, 0.2)
    assert (c.name_ok, c.ast_ok, c.offered, c.offer_kind) == (True, True, 1, "subset")
    systems = [m[0]["content"] for m, _ in runner.seen]
    assert '"parameters"' in systems[0] and systems[0] == systems[1]  # full prompt with schemas, shared by a and b
    assert '"parameters"' not in systems[2]  # slim prompt
    assert runner.seen[0][1] is None and "weather.get" in runner.seen[1][1] and "news.get" not in runner.seen[2][1]


def test_run_case_reply_cut_at_the_token_limit_counts_as_a_begun_call():
    class CutRunner(FakeRunner):
        def generate(self, messages, *, grammar=None, max_tokens=128, temperature=0.0, stop=(), tools=()):
            text = '{"thought": "", "status": "call", "message": null, "tool_calls": [{"name": "weather.get", "arguments": {"city": "San'
            return Generation(text=text, n_prompt_tokens=50, n_tokens=128, seconds=2.0, tokens_per_s=64.0,
                              grammar_used=True, finish_reason="length")

    query = Query(id="i1", query="Is the sky blue?", gold=(), expect="none", catalog=_catalog())
    (b,) = run_case(CutRunner(), query, suite="irrelevance", conditions=("b",), truth=[])
    assert (b.calls, b.started_call, b.empty, b.finish_reason) == ((), True, False, "length")


class AnswerRunner(FakeRunner):
    """Answers every request without a call, as the answer-only grammar forces."""

    def generate(self, messages, *, grammar=None, max_tokens=128, temperature=0.0, stop=(), tools=()):
        self.seen.append((messages, grammar))
        return Generation(text='{"tool_calls": [], "message": "Ha."}', n_prompt_tokens=40, n_tokens=9, seconds=1.0,
                          tokens_per_s=9.0, grammar_used=grammar is not None)


@pytest.mark.parametrize("levers", [(), ("bounded", "compact", "calls-first")])
def test_run_case_empty_router_offer_runs_the_answer_only_grammar(levers):
    """Issue 17 lever 7: condition c passes the router's empty offer through to the model, under
    the grammar that allows no call, and the case counts as no call."""
    from eris_lab.knobs import with_levers

    catalog = _catalog()
    query = Query(id="i1", query="Tell me a joke", gold=(), expect="none", catalog=catalog)
    runner = AnswerRunner()
    (c,) = run_case(runner, query, suite="irrelevance", conditions=("c",), truth=[],
                    router_for=lambda cat: FixedRouter(()), knobs=with_levers(generation.BENCH_KNOBS, levers))
    assert c.empty and not c.skipped and c.offered == 0 and c.grammar and c.n_tokens == 9
    (messages, grammar), = runner.seen
    assert "call-" not in grammar and '"\\"tool_calls\\""' in grammar
    assert "No tool may be called this turn" in messages[0]["content"]


def test_bench_records_its_levers_and_refuses_to_resume_across_them(tmp_path):
    from eris_lab.errors import DataError

    out = tmp_path / "run.json"
    record = generation.bench(AnswerRunner(), suites=("irrelevance",), conditions=("c",), limit=1, out=out,
                              progress=False, router_for=lambda cat: FixedRouter(()), levers=("compact",))
    assert record["settings"]["levers"] == ["compact"]
    with pytest.raises(DataError, match="levers"):
        generation.bench(AnswerRunner(), suites=("irrelevance",), conditions=("c",), limit=1, out=out,
                         progress=False, router_for=lambda cat: FixedRouter(()), resume=True)


def test_bench_rejects_an_unknown_condition():
    from eris_lab.errors import DataError

    with pytest.raises(DataError) as err:
        generation.bench(FakeRunner(), conditions=("d",))
    assert str(err.value) == "--conditions: unknown condition 'd'; expected some of a,b,c"


def test_an_offset_past_every_case_is_one_line_exit_2(capsys):
    assert cli.main(["bench", "generation", "--suites", "live_multiple-holdout", "--limit", "1", "--offset", "200"]) == 2
    assert capsys.readouterr().err == ("eris-lab: error: --offset: 200 skips every case (live_multiple-holdout 1): "
                                       "nothing would run\n")


def test_main_bad_limit_is_one_line_exit_2(capsys):
    assert cli.main(["bench", "generation", "--limit", "0"]) == 2
    assert capsys.readouterr().err == "eris-lab: error: --limit: expected an integer >= 1, got 0\n"


def test_holdout_sample_is_the_next_200_of_live_multiples_order_and_scored_against_its_answers():
    sample = generation.cases("live_multiple")
    holdout = generation.cases("live_multiple-holdout")
    assert len(sample) == len(holdout) == generation.SAMPLE_SIZE
    assert not {q.id for q in sample} & {q.id for q in holdout}
    assert all(q.id.startswith("live_multiple_") and q.expect == "all" for q in holdout)
    assert generation.cases("live_multiple-holdout", limit=3) == holdout[:3]
    answers = generation._answers("live_multiple-holdout")
    assert all(q.id in answers for q in holdout)
    assert "live_multiple-holdout" not in generation.SUITES  # run only when asked for


# -- resume and merge (fake runner, hand-made cases) ----------------------------------------------

@pytest.fixture
def two_cases(monkeypatch):
    """Suites of two hand-made cases each instead of BFCL's (no data needed)."""
    catalog = _catalog()

    def fake_cases(suite, *, limit=None, seed=generation.SEED):
        expect = "none" if suite == "irrelevance" else "all"
        gold = () if expect == "none" else ("weather.get",)
        rows = tuple(Query(id=f"{suite}_{i}", query="Weather in San Diego for 3 days?", gold=gold, expect=expect,
                           catalog=catalog) for i in range(2))
        return rows[:limit] if limit else rows

    monkeypatch.setattr(generation, "cases", fake_cases)
    monkeypatch.setattr(generation, "_answers", lambda suite: {f"{suite}_{i}": [TRUTH] for i in range(2)})


class StopAfter(FakeRunner):
    """Raises KeyboardInterrupt on call ``n`` (a run cut short)."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def generate(self, messages, **kwargs):
        if len(self.seen) == self.n:
            raise KeyboardInterrupt
        return super().generate(messages, **kwargs)


def test_resume_keeps_saved_cases_and_runs_only_the_rest(tmp_path, two_cases):
    out = tmp_path / "run.json"
    with pytest.raises(KeyboardInterrupt):  # dies during the second case
        generation.bench(StopAfter(3), suites=("multiple",), conditions=("a", "b"), out=out, progress=False)
    assert json.loads(out.read_text())["seconds_per_case"]["cases"] == 1
    runner = FakeRunner()
    record = generation.bench(runner, suites=("multiple",), conditions=("a", "b"), out=out, progress=False, resume=True)
    assert len(runner.seen) == 2  # only the second case, both conditions
    assert record["settings"]["resumed_cases"] == 1
    assert record["scores"]["suites"]["multiple"]["b"]["n"] == 2
    assert set(record["case_seconds"]["multiple"]) == {"multiple_0", "multiple_1"}
    assert json.loads(out.read_text())["scores"] == record["scores"]


def test_resume_reads_a_record_written_before_case_seconds(tmp_path, two_cases):
    out = tmp_path / "run.json"
    generation.bench(FakeRunner(), suites=("multiple",), conditions=("a", "b"), out=out, progress=False, limit=1)
    old = json.loads(out.read_text())
    del old["case_seconds"]
    out.write_text(json.dumps(old))
    record = generation.bench(FakeRunner(), suites=("multiple",), conditions=("a", "b"), out=out, progress=False,
                              resume=True)
    assert record["case_seconds"]["multiple"]["multiple_0"] == 4.0  # the fake's two runs of 2.0 s each


def test_resume_refuses_a_run_with_other_settings(tmp_path, two_cases):
    out = tmp_path / "run.json"
    generation.bench(FakeRunner(), suites=("multiple",), conditions=("b",), out=out, progress=False, max_tokens=64)
    with pytest.raises(generation.DataError) as err:
        generation.bench(FakeRunner(), suites=("multiple",), conditions=("b",), out=out, progress=False, resume=True)
    assert str(err.value) == f"{out}: was run with max_tokens=64, this run has max_tokens=128"


def test_resume_reruns_a_case_missing_a_condition(tmp_path, two_cases):
    out = tmp_path / "run.json"
    generation.bench(FakeRunner(), suites=("multiple",), conditions=("b",), out=out, progress=False)
    runner = FakeRunner()
    record = generation.bench(runner, suites=("multiple",), conditions=("a", "b"), out=out, progress=False, resume=True)
    assert len(runner.seen) == 4 and record["settings"]["resumed_cases"] == 0


def test_offset_runs_the_tail_of_a_suite_and_merge_pools_head_and_tail(tmp_path, two_cases, capsys):
    head, tail, merged = tmp_path / "head.json", tmp_path / "tail.json", tmp_path / "all.json"
    generation.bench(FakeRunner(), suites=("multiple",), conditions=("b",), out=head, progress=False, limit=1)
    runner = FakeRunner()
    record = generation.bench(runner, suites=("multiple",), conditions=("b",), out=tail, progress=False, offset=1)
    assert [c["id"] for c in record["cases"]] == ["multiple_1"] and len(runner.seen) == 1
    assert cli.main(["bench", "generation", "--merge", str(head), str(tail), "--out", str(merged)]) == 0
    assert json.loads(merged.read_text())["scores"]["suites"]["multiple"]["b"]["n"] == 2
    # a committed record names its run files, not this machine's paths
    assert json.loads(merged.read_text())["settings"]["merged_from"] == ["head.json", "tail.json"]
    # a merged record merges again (a re-run of some cases beside the rest)
    rest = json.loads(merged.read_text())
    rest["cases"] = [c for c in rest["cases"] if c["id"] != "multiple_1"]
    (tmp_path / "rest.json").write_text(json.dumps(rest))
    again = tmp_path / "again.json"
    assert cli.main(["bench", "generation", "--merge", str(tmp_path / "rest.json"), str(tail), "--out", str(again)]) == 0
    assert json.loads(again.read_text())["scores"]["suites"]["multiple"]["b"]["n"] == 2
    assert cli.main(["bench", "generation", "--offset", "-1"]) == 2
    assert capsys.readouterr().err.endswith("eris-lab: error: --offset: expected an integer >= 0, got -1\n")


def test_merge_pools_runs_per_suite_and_refuses_a_case_twice(tmp_path, two_cases, capsys):
    first, second, merged = tmp_path / "m.json", tmp_path / "i.json", tmp_path / "all.json"
    generation.bench(FakeRunner(), suites=("multiple",), conditions=("a", "b"), out=first, progress=False)
    generation.bench(FakeRunner(), suites=("irrelevance",), conditions=("a", "b"), out=second, progress=False)
    assert cli.main(["bench", "generation", "--merge", str(first), str(second), "--out", str(merged)]) == 0
    record = json.loads(merged.read_text())
    assert record["settings"]["suites"] == ["multiple", "irrelevance"]
    assert record["scores"]["suites"]["multiple"]["b"]["ast_accuracy"] == 1.0
    assert record["scores"]["suites"]["irrelevance"]["a"]["empty_call_rate"] == 0.0
    assert record["seconds_per_case"]["cases"] == 4
    capsys.readouterr()
    assert cli.main(["bench", "generation", "--merge", str(first), str(first), "--out", str(merged)]) == 2
    assert capsys.readouterr().err == f"eris-lab: error: {first}: case multiple/multiple_0 is also in {first}\n"
    assert cli.main(["bench", "generation", "--merge", str(first)]) == 2
    assert "give --out FILE" in capsys.readouterr().err
    (tmp_path / "junk.json").write_text("[]")
    assert cli.main(["bench", "generation", "--merge", str(tmp_path / "junk.json"), "--out", str(merged)]) == 2
    assert "not a generation benchmark record" in capsys.readouterr().err
    assert json.loads(merged.read_text())["seconds_per_case"]["cases"] == 4  # a failed merge keeps the last good file


# -- slow: the real model on two BFCL cases ------------------------------------------------------

@pytest.fixture(scope="session")
def bundled_model(tmp_path_factory):
    from eris_lab import llm

    return llm.default_model_path(tmp_path_factory.mktemp("models"))


@pytest.mark.slow
def test_end_to_end_two_cases_every_condition(tmp_path, bundled_model, capsys):
    out = tmp_path / "generation.json"
    code = cli.main(["bench", "generation", "--suites", "multiple", "irrelevance", "--limit", "1",
                     "--model", str(bundled_model), "--max-tokens", "48", "--out", str(out), "--quiet"])
    assert code == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert len(record["cases"]) == 6 and record["seconds_per_case"]["cases"] == 2
    assert set(record["scores"]["suites"]) == {"multiple", "irrelevance"}
    for case in record["cases"]:
        assert case["error"] == ""
        assert case["skipped"] or case["n_tokens"] > 0
    assert record["scores"]["speed"]["no_grammar"]["runs"] == 2
    assert "name acc" in capsys.readouterr().out


def test_compare_lines_up_runs_of_the_same_cases_and_refuses_others(tmp_path, capsys):
    from eris_lab.errors import DataError

    kwargs = dict(suites=("irrelevance",), conditions=("c",), progress=False, router_for=lambda cat: FixedRouter(()))
    one = generation.bench(AnswerRunner(), limit=2, **kwargs)
    two = generation.bench(AnswerRunner(), limit=2, levers=("bounded",), **kwargs)
    rows = generation.compare({"baseline": one, "bounded": two})
    assert [(r["run"], r["levers"], r["n"], r["empty_call_rate"], r["tokens_per_call"]) for r in rows] == \
        [("baseline", None, 2, 1.0, None), ("bounded", ["bounded"], 2, 1.0, None)]
    with pytest.raises(DataError, match="holds other irrelevance cases than baseline"):
        generation.compare({"baseline": one, "short": generation.bench(AnswerRunner(), limit=1, **kwargs)})
    (tmp_path / "a.json").write_text(json.dumps(one))
    assert generation.main(["--compare", f"base={tmp_path / 'a.json'}"]) == 0
    assert "base" in capsys.readouterr().out
    with pytest.raises(DataError, match="expected LABEL=FILE"):
        generation.main(["--compare", str(tmp_path / "a.json")])


# -- issue 17, item 5: the repair lever and its offline replay ------------------------------------

RUNAWAY = json.dumps({"thought": "", "status": "call", "message": None, "tool_calls": [
    {"name": "weather.get", "arguments": {"city": "San Diego", "days": 3000000000000000000}}]})


class RunawayRunner(FakeRunner):
    def generate(self, messages, *, grammar=None, max_tokens=128, temperature=0.0, stop=(), tools=()):
        return Generation(text=RUNAWAY, n_prompt_tokens=50, n_tokens=40, seconds=1.0, tokens_per_s=40.0,
                          grammar_used=True)


@pytest.mark.parametrize("levers, ast_ok, repairs", [((), False, ()), (("repair",), True, ("number:days",))])
def test_run_case_repair_lever_scores_the_repaired_call(levers, ast_ok, repairs):
    from eris_lab.knobs import with_levers

    query = Query(id="m1", query="Weather in San Diego for 3 days?", gold=("weather.get",), catalog=_catalog())
    (c,) = run_case(RunawayRunner(), query, suite="multiple", conditions=("c",), truth=[TRUTH],
                    router_for=lambda cat: FixedRouter(("weather.get",)),
                    knobs=with_levers(generation.BENCH_KNOBS, levers))
    assert (c.ast_ok, c.repairs) == (ast_ok, repairs)


def test_replay_repair_counts_fixes_and_breaks_per_rule(monkeypatch, capsys, tmp_path):
    catalog = _catalog()
    query = Query(id="m1", query="Weather in San Diego for 3 days?", gold=("weather.get",), catalog=catalog)
    monkeypatch.setattr(generation, "load_suite", lambda suite: type("Suite", (), {"queries": (query,)})())
    monkeypatch.setattr(generation, "_answers", lambda suite: {"m1": [TRUTH]})
    record = {"benchmark": "generation", "cases": [{"suite": "multiple", "id": "m1", "condition": "c", "raw": RUNAWAY, "ast_ok": False},
                        {"suite": "multiple", "id": "m1", "condition": "b", "raw": RUNAWAY, "ast_ok": False}]}
    replay = generation.replay_repair(record)
    number, span, together = (replay["rules"][r]["multiple"] for r in ("number", "span", "all"))
    assert (number["calls"], number["ast_before"], number["ast_after"], number["cases_fixed"]) == (1, 0, 1, 1)
    assert (number["values_fixed"], number["values_broken"]) == (1, 0)
    assert number["changes"][0]["before"] == 3000000000000000000 and number["changes"][0]["after"] == 3
    assert (span["ast_after"], span["changes"]) == (0, [])
    assert together["cases_fixed"] == 1 and replay["reparse_mismatch"] == 0
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    out = tmp_path / "replay.json"
    assert cli.main(["bench", "generation", "--replay-repair", str(path), "--out", str(out)]) == 0
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["record"] == "run.json" and saved["rules"]["number"]["multiple"]["cases_fixed"] == 1
    assert "number   multiple" in capsys.readouterr().out


def test_condition_c_routes_with_the_calibrated_knobs_by_default():
    # the router of route / eval / generate (its relevance gate may offer nothing, issue 17 item 7);
    # the 2026-11-29 run routed with the reference knobs, which never refuse
    catalog = Catalog(tools_from_json([{"name": "get_weather", "description": "Current weather for a city."},
                                       {"name": "set_alarm", "description": "Set an alarm clock for a time."}]))
    calibrated = generation._router_factory(generation.BENCH_KNOBS)(catalog)
    reference = generation._router_factory(generation.BENCH_KNOBS, "reference")(catalog)
    assert calibrated.knobs.relevance_floor > 0 and calibrated.knobs.relevance_weights
    assert reference.knobs == generation.BENCH_KNOBS


def test_bench_refuses_an_unknown_router_knobs_value():
    with pytest.raises(generation.DataError, match="--router-knobs"):
        generation.bench(object(), conditions=("c",), router_knobs="tuned")


def test_a_record_from_before_router_knobs_resumes_only_with_the_reference_router(tmp_path, two_cases):
    # records made before the key existed routed condition c with DESIGN's reference knobs
    out = tmp_path / "run.json"
    generation.bench(FakeRunner(), suites=("multiple",), conditions=("c",), out=out, progress=False, limit=1,
                     router_for=lambda cat: FixedRouter(()), router_knobs="reference")
    old = json.loads(out.read_text())
    del old["settings"]["router_knobs"]
    out.write_text(json.dumps(old))
    record = generation.bench(FakeRunner(), suites=("multiple",), conditions=("c",), out=out, progress=False,
                              resume=True, router_for=lambda cat: FixedRouter(()), router_knobs="reference")
    assert record["settings"]["resumed_cases"] == 1
    with pytest.raises(generation.DataError, match="router_knobs='reference', this run has router_knobs='calibrated'"):
        generation.bench(FakeRunner(), suites=("multiple",), conditions=("c",), out=out, progress=False,
                         resume=True, router_for=lambda cat: FixedRouter(()))


@pytest.mark.parametrize("prompt_format, declared", [("functiongemma", ["weather.get", "news.get"]),
                                                     ("gguf-template", None), (None, None)])
def test_run_case_declares_the_offered_tools_only_to_a_format_that_wants_them(prompt_format, declared):
    # as generate does: a GGUF chat template would list the tools a second time beside the slim prompt
    class Declaring(FakeRunner):
        def generate(self, messages, *, tools=None, **kwargs):
            self.tools = None if tools is None else [t.name for t in tools]
            return super().generate(messages, **kwargs)

    runner = Declaring()
    if prompt_format is not None:
        runner.prompt_format = prompt_format
    query = Query(id="m1", query="Weather in San Diego for 3 days?", gold=("weather.get",), catalog=_catalog())
    run_case(runner, query, suite="multiple", conditions=("b",), truth=[])
    assert runner.tools == declared


def test_a_record_names_the_model_by_its_file_name(tmp_path, two_cases):
    # records are committed: the machine's path to the GGUF means nothing elsewhere
    runner = FakeRunner()
    runner.path = tmp_path / "models" / "my-model.gguf"
    record = generation.bench(runner, suites=("multiple",), conditions=("b",), progress=False, limit=1)
    assert record["settings"]["model"] == "my-model.gguf"


def test_run_case_router_picks_lever_hands_the_model_the_first_tool_of_a_ranked_subset():
    catalog = _catalog()
    query = Query(id="m1", query="Weather in San Diego for 3 days?", gold=("weather.get",), catalog=catalog)
    ranked = lambda cat: FixedRouter(("weather.get", "news.get"), rule=Rule.RANKED_SUBSET)  # noqa: E731
    for levers, offered in (((), 2), (("router-picks",), 1)):
        runner = FakeRunner()
        (c,) = run_case(runner, query, suite="multiple", conditions=("c",), truth=[TRUTH], router_for=ranked,
                        knobs=with_levers(generation.BENCH_KNOBS, levers))
        assert (c.offered, c.name_ok, c.ast_ok) == (offered, True, True)
        assert ("news.get" in runner.seen[0][1]) == (offered == 2)
