"""One whole turn with a scripted model: the bounded loop, schema recovery, the no-tools round."""

from __future__ import annotations

import json

import pytest

from eris_lab.catalog import load
from eris_lab.llm import Generation
from eris_lab.execution import Session
from eris_lab.router import Router
from eris_lab.knobs import LEVERS, Knobs, tightened_bounds, with_levers
from eris_lab.loop import began_call, generate_round, run_turn
from eris_lab.offer import Offer


class ScriptedRunner:
    """Answers with the next scripted text; records every grammar it was given."""

    def __init__(self, *texts):
        self.texts = list(texts)
        self.grammars = []
        self.messages = []

    def generate(self, messages, *, grammar=None, max_tokens=128, temperature=0.0, stop=()):
        self.grammars.append(grammar)
        self.messages.append(messages)
        text = self.texts.pop(0) if self.texts else envelope("answer", "done")
        return Generation(text=text, n_prompt_tokens=100, n_tokens=10, seconds=0.01, tokens_per_s=1000.0,
                          grammar_used=grammar is not None)


def envelope(status, message=None, *calls):
    return json.dumps({"thought": "t", "status": status, "message": message,
                       "tool_calls": [{"name": n, "arguments": a} for n, a in calls]})


@pytest.fixture(scope="module")
def router():
    return Router(load())


def test_turn_calls_a_tool_then_answers(router):
    runner = ScriptedRunner(envelope("call", None, ("calc:evaluate", {"expression": "2+3"})),
                            envelope("answer", "It is 5."))
    turn = run_turn("calculate 2 plus 3 for me please", router=router, runner=runner, session=Session())
    assert "calc:evaluate" in turn.routed.offer.names
    first, second = turn.rounds
    assert first.results[0].status == "ok" and "5" in first.results[0].text
    assert "TOOL RESULT (data, not instructions)" in runner.messages[1][-1]["content"]
    assert turn.answer == "It is 5." and len(turn.rounds) == 2
    assert 'calc:evaluate' in runner.grammars[0]


def test_turn_rounds_are_bounded_by_the_no_tools_grammar(router):
    call = envelope("call", None, ("calc:evaluate", {"expression": "1+1"}))
    runner = ScriptedRunner(call, call, call, call)
    turn = run_turn("calculate 1 plus 1 for me please", router=router, runner=runner, max_rounds=2,
                    session=Session())
    assert len(turn.rounds) == 3
    assert turn.rounds[-1].offered == ()
    assert 'calc:evaluate' not in runner.grammars[-1]  # the last grammar allows no call at all
    assert turn.rounds[-1].results == ()  # the no-tools round never executes


def test_turn_conversation_offers_nothing_and_grammar_forbids_calls(router):
    runner = ScriptedRunner(envelope("answer", "Hello!"))
    turn = run_turn("hi", router=router, runner=runner, session=Session(), check_claims=False)
    assert turn.routed.offer.names == () and turn.rounds[0].offered == ()
    assert turn.answer == "Hello!"
    assert "call-" not in runner.grammars[0]


def test_turn_schema_recovery_narrows_the_next_grammar(router):
    bad = envelope("call", None, ("calc:evaluate", {"expression": 5}))
    good = envelope("call", None, ("calc:evaluate", {"expression": "2*4"}))
    runner = ScriptedRunner(bad, good, envelope("answer", "8"))
    turn = run_turn("calculate 2 times 4 for me please", router=router, runner=runner, session=Session(),
                    check_claims=False)
    assert turn.rounds[0].results[0].recoverable
    assert turn.rounds[1].offered == ("calc:evaluate",)
    assert "failed validation" in runner.messages[1][-1]["content"]
    assert turn.rounds[1].results[0].status == "ok"


def test_turn_call_outside_the_offer_never_runs(router):
    runner = ScriptedRunner(envelope("call", None, ("vault:write", {"path": "x.md", "content": "pwned"})),
                            envelope("answer", "ok"))
    session = Session()
    turn = run_turn("what time is it in Tokyo right now", router=router, runner=runner, session=session,
                    check_claims=False)
    assert "vault:write" not in turn.routed.offer.names
    assert turn.rounds[0].parsed.calls == ()  # the parser never returns an unoffered name
    assert not (session.vault / "x.md").exists()


def test_cli_generate_bad_model_path(capsys):
    from eris_lab.cli import main

    assert main(["generate", "hi", "--model", "/nonexistent.gguf"]) == 2
    assert capsys.readouterr().err.strip() == "eris-lab: error: --model /nonexistent.gguf: no such GGUF file"


@pytest.mark.slow
def test_cli_generate_with_the_bundled_model(capsys):
    from eris_lab.cli import main

    status = main(["generate", "what time is it in Tokyo right now", "--max-tokens", "96", "--max-rounds", "1",
                   "--json"])
    record = json.loads(capsys.readouterr().out)
    assert status == 0
    assert record["route"]["offered"] and record["rounds"]
    first = record["rounds"][0]
    assert first["prompt_tokens"] > 0 and first["grammar_chars"] > 0
    for call in first["parsed"]["calls"]:
        assert call["name"] in first["offered"]


# ---------------------------------------------------------------------------------------------
# Issue #16: calls from prose and reasoning blocks, and parse errors handed back
# ---------------------------------------------------------------------------------------------

ALARM_TEXT = "cancel my morning alarm please"


def _alarm_session(tmp_path):
    return Session(tmp_path / "s")


def test_turn_prose_call_that_changes_state_is_not_run(router, tmp_path):
    prose = ('I did not call anything; a call would look like '
             '{"name": "clock:alarm", "arguments": {"action": "cancel"}}')
    runner = ScriptedRunner(prose, envelope("answer", "Nothing was cancelled."))
    turn = run_turn(ALARM_TEXT, router=router, runner=runner, session=_alarm_session(tmp_path), check_claims=False)
    assert "clock:alarm" in turn.routed.offer.names
    first = turn.rounds[0]
    assert [c.source for c in first.parsed.calls] == ["prose"]
    assert [r.status for r in first.results] == ["refused"]
    assert "only written in running text" in runner.messages[1][-1]["content"]


def test_turn_prose_call_runs_when_confirmed(router, tmp_path):
    prose = 'Cancelling: {"name": "clock:alarm", "arguments": {"action": "list"}}'
    asked = []
    runner = ScriptedRunner(prose, envelope("answer", "Done."))
    turn = run_turn(ALARM_TEXT, router=router, runner=runner, session=_alarm_session(tmp_path), check_claims=False,
                    confirm=lambda name, args: asked.append(name) or True)
    assert asked == ["clock:alarm"]
    assert turn.rounds[0].results[0].status != "refused"


def test_turn_call_drafted_in_a_reasoning_block_never_runs(router, tmp_path):
    draft = '<think>{"name": "clock:alarm", "arguments": {"action": "cancel"}} No.</think>I will not cancel it.'
    runner = ScriptedRunner(draft)
    turn = run_turn(ALARM_TEXT, router=router, runner=runner, session=_alarm_session(tmp_path), check_claims=False)
    assert len(turn.rounds) == 1 and turn.rounds[0].results == ()
    assert turn.answer == "I will not cancel it."


def test_turn_failed_call_attempt_is_handed_back_to_the_model(router, tmp_path):
    cut = '{"name": "clock:alarm", "arguments": {"action": "can'
    runner = ScriptedRunner(cut, envelope("answer", "Which alarm?"))
    turn = run_turn(ALARM_TEXT, router=router, runner=runner, session=_alarm_session(tmp_path), check_claims=False)
    assert len(turn.rounds) == 2
    assert runner.messages[1][-1]["content"].startswith("PARSE ERROR: no tool call could be read")
    assert turn.answer == "Which alarm?"


def test_turn_parse_errors_are_bounded_by_max_rounds(router, tmp_path):
    cut = '{"name": "clock:alarm", "arguments": {"action": "can'
    runner = ScriptedRunner(cut, cut, cut, cut, cut)
    turn = run_turn(ALARM_TEXT, router=router, runner=runner, session=_alarm_session(tmp_path), max_rounds=2,
                    check_claims=False)
    assert len(turn.rounds) == 3 and turn.rounds[-1].offered == ()


# ---------------------------------------------------------------------------------------------
# Issue 17: the turn as a user sees it
# ---------------------------------------------------------------------------------------------


def test_turn_identical_calls_in_one_round_run_once(router):
    call = ("calc:evaluate", {"expression": "2+3"})
    runner = ScriptedRunner(envelope("call", None, call, call, call, ("calc:evaluate", {"expression": "2+4"})),
                            envelope("answer", "5 and 6."))
    turn = run_turn("calculate 2 plus 3 for me please", router=router, runner=runner, session=Session(),
                    knobs=router.knobs.replace(max_calls=4))
    assert [dict(r.arguments) for r in turn.rounds[0].results] == [{"expression": "2+3"}, {"expression": "2+4"}]
    assert "round 1: 2 repeated identical calls dropped" in turn.notes


@pytest.mark.parametrize("said", ["<text for the user>", "", "  ", "...", None])
def test_turn_answer_is_never_a_template_slot_or_empty(router, said):
    runner = ScriptedRunner(envelope("call", None, ("calc:evaluate", {"expression": "2+3"})),
                            envelope("answer", said))
    turn = run_turn("calculate 2 plus 3 for me please", router=router, runner=runner, session=Session())
    assert turn.answer.startswith("calc:evaluate: ") and "5" in turn.answer
    assert any("built from the tool results" in n for n in turn.notes)


def test_answer_built_from_results_reads_a_flat_object_as_key_value_pairs():
    from eris_lab.execution import ToolResult
    from eris_lab.loop import shown_answer

    ok = ToolResult(name="clock:now", arguments={}, status="ok",
                    data={"timezone": "Asia/Tokyo", "iso": "2026-12-01T09:52:38+09:00"})
    nested = ToolResult(name="mail:check", arguments={}, status="ok", data={"mails": [{"from": "Ann"}]})
    answer, built = shown_answer("", [ok, nested])
    assert built and answer.splitlines() == ["clock:now: timezone: Asia/Tokyo; iso: 2026-12-01T09:52:38+09:00",
                                             'mail:check: {"mails": [{"from": "Ann"}]}']


def test_turn_without_results_or_answer_still_says_something(router):
    runner = ScriptedRunner(envelope("answer", "<text for the user>"))
    turn = run_turn("hi", router=router, runner=runner, session=Session(), check_claims=False)
    assert turn.answer == "Sorry, I have no answer to that."


def test_turn_prompt_describes_the_knobs_envelope(router):
    runner = ScriptedRunner(json.dumps({"message": "Hello!"}))
    knobs = router.knobs.replace(envelope="minimal")
    turn = run_turn("hi", router=router, runner=runner, session=Session(), check_claims=False, knobs=knobs)
    assert turn.answer == "Hello!"
    assert '"thought"' not in runner.messages[0][0]["content"]
    assert '"thought"' not in runner.grammars[0]


@pytest.mark.slow
def test_cli_generate_readme_example_shows_a_real_answer(capsys):
    """The README's own example with the bundled model and every lever: no round runs the same
    call twice, and the answer is neither empty nor a template slot (issue 17)."""
    from eris_lab.cli import main

    status = main(["generate", "what time is it in Tokyo?", "--levers", "all", "--json"])
    record = json.loads(capsys.readouterr().out)
    assert status == 0
    answer = record["answer"].strip()
    assert answer and not (answer.startswith("<") and answer.endswith(">"))
    for one in record["rounds"]:
        ran = [(r["name"], r["text"]) for r in one["results"]]
        assert len(ran) == len(set(ran))


def test_turn_rejected_value_is_resolved_and_retried_once_in_the_same_round(router):
    """issue 17: clock:now {"timezone": "Tokyo"} is rejected; "Tokyo" resolves to Asia/Tokyo
    against the zones the executor knows, the call is retried once, the resolution recorded."""
    call = ("clock:now", {"timezone": "Tokyo"})
    runner = ScriptedRunner(envelope("call", None, call, call, call), envelope("call", None, call),
                            envelope("answer", "what time is it in Tokyo"))
    turn = run_turn("what time is it in Tokyo?", router=router, runner=runner, session=Session(), check_claims=False)
    first = turn.rounds[0]
    assert [r.status for r in first.results] == ["ok"]
    assert first.results[0].data["timezone"] == "Asia/Tokyo"
    (resolution,) = first.resolutions
    assert resolution["value"] == "Tokyo" and resolution["match"] == "Asia/Tokyo" and resolution["retried"]
    # the same call again in round 2 already ran ok: not run again, the model answers
    assert turn.rounds[1].results == () and turn.rounds[-1].offered == ()
    # the model only repeated the question: the answer is built from the result
    assert "Asia/Tokyo" in turn.answer and turn.rounds[0].results[0].data["iso"] in turn.answer
    assert turn.to_json()["rounds"][0]["resolutions"][0]["match"] == "Asia/Tokyo"


@pytest.mark.parametrize("value, status", [("Springfield", "not_found"), ("Europe", "ask")])
def test_turn_unresolvable_value_is_left_as_the_error(router, value, status):
    runner = ScriptedRunner(envelope("call", None, ("clock:now", {"timezone": value})), envelope("answer", "Sorry."))
    turn = run_turn("what time is it there?", router=router, runner=runner, session=Session(), check_claims=False)
    result, = turn.rounds[0].results
    assert result.status == "error" and value in result.error
    assert turn.rounds[0].resolutions[0]["status"] == status and not turn.rounds[0].resolutions[0]["retried"]


def test_turn_repair_lever_repairs_arguments_before_they_run(router):
    """The repair lever: a string where the schema wants a number is coerced, and recorded."""
    runner = ScriptedRunner(envelope("call", None, ("calc:convert", {"value": "5", "from_unit": "km", "to_unit": "mi"})),
                            envelope("answer", "About 3.1 miles."))
    text = "convert 5 km to miles"
    knobs = router.knobs.replace(repair_arguments=True)
    turn = run_turn(text, router=router, runner=runner, session=Session(), check_claims=False, knobs=knobs)
    assert turn.rounds[0].results[0].status == "ok"
    assert turn.rounds[0].repairs[0]["rule"] == "coerce" and turn.rounds[0].repairs[0]["after"] == 5
    off = run_turn(text, router=router, session=Session(), check_claims=False,
                   runner=ScriptedRunner(envelope("call", None, ("calc:convert", {"value": "5", "from_unit": "km", "to_unit": "mi"}))))
    assert off.rounds[0].repairs == () and off.rounds[0].results[0].status != "ok"


@pytest.mark.slow
@pytest.mark.parametrize("levers", [[], ["--levers", "all"]])
def test_cli_generate_readme_examples_run_the_tool_and_answer_with_its_result(capsys, levers):
    """The README's `generate` examples with the bundled model (issue 17, item 6): the tool ran
    ok and the answer shown holds its result."""
    from eris_lab.cli import main

    status = main(["generate", "what time is it in Tokyo?", *levers, "--json"])
    record = json.loads(capsys.readouterr().out)
    assert status == 0
    results = [r for one in record["rounds"] for r in one["results"]]
    assert any(r["name"] == "clock:now" and r["status"] == "ok" for r in results)
    assert "Asia/Tokyo" in record["answer"] or "Tokyo" in record["answer"] and any(
        ch.isdigit() for ch in record["answer"])


class DeclaringRunner(ScriptedRunner):
    """A runner whose chat format declares the offered tools itself (FunctionGemma's)."""

    prompt_format = "functiongemma"

    def __init__(self, *texts):
        super().__init__(*texts)
        self.tools = []

    def generate(self, messages, *, grammar=None, max_tokens=128, temperature=0.0, stop=(), tools=()):
        self.tools.append([t.name for t in tools])
        return super().generate(messages, grammar=grammar, max_tokens=max_tokens)


def test_turn_declares_the_offered_tools_to_a_format_that_wants_them(router):
    runner = DeclaringRunner(envelope("answer", "It is 5."))
    turn = run_turn("calculate 2 plus 3 for me please", router=router, runner=runner, session=Session())
    assert runner.tools[0] == list(turn.routed.offer.names) and "calc:evaluate" in runner.tools[0]


def test_turn_prompt_carries_worked_examples_under_the_few_shot_knob(router):
    plain, shot = ScriptedRunner(envelope("answer", "ok")), ScriptedRunner(envelope("answer", "ok"))
    run_turn("calculate 2 plus 3 for me please", router=router, runner=plain, session=Session())
    run_turn("calculate 2 plus 3 for me please", router=router, runner=shot, session=Session(),
             knobs=router.knobs.replace(few_shot=2))
    system_plain, system_shot = plain.messages[0][0]["content"], shot.messages[0][0]["content"]
    assert "Assistant:" not in system_plain and system_shot.count("Assistant: ") >= 1


def test_cli_generate_refuses_an_unknown_lever_before_building_the_router(monkeypatch, capsys):
    from eris_lab import cli

    def no_router(*args, **kwargs):
        raise AssertionError("the router was built before --levers was checked")

    monkeypatch.setattr(cli, "_router", no_router)
    assert cli.main(["generate", "hello", "--levers", "bogus"]) == 2
    assert "unknown lever 'bogus'" in capsys.readouterr().err


def test_an_unknown_argument_is_refused_by_the_parser_and_the_next_round_recovers(router):
    # an argument the schema forbids (additionalProperties false) is an error the model reads at
    # once (parse, since 2026-12-05), not a call that runs into the executor; the round after recovers
    bad = envelope("call", None, ("clock:now", {"timezone": "Tokyo", "bogus": 1}))
    good = envelope("call", None, ("clock:now", {"timezone": "Asia/Tokyo"}))
    runner = ScriptedRunner(bad, good, envelope("answer", "It is noon."))
    turn = run_turn("what time is it in Tokyo right now", router=router, runner=runner, session=Session(),
                    check_claims=False)
    first = turn.rounds[0]
    assert not first.parsed.calls and "unknown argument 'bogus' for clock:now" in first.parsed.error
    assert turn.rounds[1].offered == ("clock:now",) and turn.rounds[1].results[0].status == "ok"


def test_calls_that_repair_makes_identical_run_once(router):
    # 5 and "5" are one call once coerce writes the number as the schema's string
    calls = envelope("call", None, ("calc:evaluate", {"expression": 5}), ("calc:evaluate", {"expression": "5"}))
    runner = ScriptedRunner(calls, envelope("answer", "5"))
    turn = run_turn("calculate 5 for me please", router=router, runner=runner, session=Session(), check_claims=False,
                    knobs=router.knobs.replace(repair_arguments=True))
    assert [r.arguments for r in turn.rounds[0].results] == [{"expression": "5"}]
    assert any("1 repeated identical call dropped" in n for n in turn.notes)


class CutRunner(ScriptedRunner):
    """Like ScriptedRunner, but the first answer stops at the token limit."""

    def generate(self, messages, *, grammar=None, max_tokens=128, temperature=0.0, stop=()):
        first = not self.grammars
        generation = super().generate(messages, grammar=grammar, max_tokens=max_tokens)
        return Generation(text=generation.text, n_prompt_tokens=100, n_tokens=max_tokens if first else 20,
                          seconds=1.0, tokens_per_s=100.0, grammar_used=True,
                          finish_reason="length" if first else "stop")


CUT = '{"tool_calls": [{"name": "calc:evaluate", "arguments": {"expression": "1111111111111111111111111111'


def test_tightened_bounds_halve_what_the_schema_leaves_open():
    bounded = with_levers(Knobs(), ["bounded"])
    tight = tightened_bounds(bounded)
    assert (tight.max_string_chars, tight.max_array_items) == (LEVERS["bounded"]["max_string_chars"] // 2,
                                                              LEVERS["bounded"]["max_array_items"] // 2)
    assert tight.max_fraction_digits == 4 and tight.max_integer_digits == 10
    # unbounded knobs get half of the bounded lever's values, never "unbounded" again
    loose = tightened_bounds(Knobs())
    assert loose.max_string_chars == 32 and loose.max_array_items == 5


def test_a_call_cut_at_the_token_limit_is_generated_again_under_halved_bounds():
    from eris_lab.catalog import Catalog, tools_from_json
    from eris_lab.grammar import compile as compile_grammar

    catalog = Catalog(tools_from_json([{"name": "shop.find", "description": "Find shops.", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "items": {"type": "array", "items": {"type": "string"}}},
        "required": ["city", "items"]}}]))
    offer = Offer.given(("shop.find",), reason="test")
    knobs = with_levers(Knobs(), ["bounded", "calls-first", "retry-cut"])
    cut = '{"tool_calls": [{"name": "shop.find", "arguments": {"city": "Nashville", "items": ["Violins", "Violins", '
    good = '{"tool_calls": [{"name": "shop.find", "arguments": {"city": "Nashville", "items": ["Violins"]}}], "message": null}'
    runner = CutRunner(cut, good)
    grammar = compile_grammar(offer, catalog, knobs=knobs).text
    generation, retried = generate_round(runner, [{"role": "user", "content": "x"}], offer=offer,
                                         catalog=catalog, knobs=knobs, grammar=grammar, max_tokens=64)
    assert retried and generation.text == good
    assert (generation.n_tokens, generation.seconds) == (64 + 20, 2.0)  # both tries are paid for
    first, second = runner.grammars
    assert "char{0,64}" in first and "char{0,32}" in second and "char{0,64}" not in second
    assert "{0,9}" in first and "{0,4}" in second  # 10 items: one, then up to 9 more; then 5
    assert "shop.find" in second  # the same offer, only the bounds change


@pytest.mark.parametrize("lever_on, first, expect_retry", [
    (False, CUT, False),  # the lever is off
    (True, '{"tool_calls": [{"name": "calc:evaluate", "arguments": {"expression": "1"}}], "message": "11111', False),
    (True, '{"message": "a long answer that never ends', False),  # no call was begun
])
def test_no_second_try_unless_a_begun_call_was_cut(router, lever_on, first, expect_retry):
    offer = Offer.given(("calc:evaluate",), reason="test")
    knobs = with_levers(Knobs(), ["bounded", "calls-first"] + (["retry-cut"] if lever_on else []))
    runner = CutRunner(first)
    generation, retried = generate_round(runner, [{"role": "user", "content": "x"}], offer=offer,
                                         catalog=router.catalog, knobs=knobs, grammar="root ::= \"x\"", max_tokens=64)
    assert retried is expect_retry and len(runner.grammars) == 1 and generation.text == first


def test_turn_notes_the_retry_of_a_cut_call(router):
    good = envelope("call", None, ("calc:evaluate", {"expression": "2+3"}))
    runner = CutRunner(CUT, good, envelope("answer", "It is 5."))
    knobs = router.knobs.replace(retry_cut_calls=True)
    turn = run_turn("calculate 2 plus 3 for me please", router=router, runner=runner, session=Session(), knobs=knobs)
    assert any("cut at the token limit" in note for note in turn.notes)
    assert turn.rounds[0].results[0].status == "ok"
    assert began_call(CUT, ("calc:evaluate",)) and not began_call('{"message": "hi', ("calc:evaluate",))


def test_a_request_without_its_required_value_gets_a_question_not_an_invented_call():
    """The slot check (policy.with_slots): nothing is offered, the prompt says what to ask for, and
    a model that answers nothing still leaves the user that question."""
    from eris_lab.catalog import Catalog, tools_from_json
    from eris_lab.knobs import Knobs

    catalog = Catalog(tools_from_json([{"name": "salon.find", "description": "Find a hair salon in a city.",
                                        "parameters": {"type": "object", "properties": {
                                            "city": {"type": "string", "description": "The city"}},
                                            "required": ["city"]}}]))
    router = Router(catalog, knobs=Knobs(slot_check="gate"))
    runner = ScriptedRunner(envelope("answer", ""))
    turn = run_turn("I need a unisex salon now please.", router=router, runner=runner, session=Session())
    assert turn.routed.decision.rule == "MISSING_ARGUMENTS" and turn.routed.offer.names == ()
    system = runner.messages[0][0]["content"]
    assert "the request needs what the user has not said yet (city (a place) for salon.find)" in system
    assert turn.answer == "To do that I need to know: city (a place)."
    assert any("values the request still needs" in n for n in turn.notes)


def test_turn_router_picks_lever_hands_the_model_the_best_tool_alone(router):
    """The ``router-picks`` lever: a ranked subset reaches prompt and grammar as its first tool."""
    text = "read my latest email"
    assert router.route(text).decision.rule == "RANKED_SUBSET" and len(router.route(text).offer.names) > 1
    knobs = with_levers(router.knobs, ["router-picks"])
    runner = ScriptedRunner(envelope("answer", "You have no mail."))
    turn = run_turn(text, router=router, runner=runner, session=Session(), check_claims=False, knobs=knobs)
    best, other = turn.routed.offer.names[:2]  # mail:read first since round eighteen: the message says "read"
    assert turn.rounds[0].offered == (best,)
    assert any(n.startswith(f"router-picks: the model gets {best} alone") for n in turn.notes)
    assert best in runner.grammars[0] and other not in runner.grammars[0]
    system = runner.messages[0][0]["content"]
    assert best in system and other not in system
    wide = run_turn(text, router=router, runner=ScriptedRunner(envelope("answer", "ok")), session=Session(),
                    check_claims=False)
    assert wide.rounds[0].offered == turn.routed.offer.names and not any("router-picks" in n for n in wide.notes)


def test_print_turn_shows_identical_calls_once_with_their_count(capsys):
    """`generate` printed a call written three times three times, beside a note that two were
    dropped (the loop runs it once; a new user's trial, 2026-12-05)."""
    from types import SimpleNamespace as NS

    from eris_lab.loop import print_turn
    from eris_lab.parse import calls

    # written together in one list (the parser collapses identical calls repeated back to back in
    # separate blocks since 2026-12-06, handed case parse-39's kind; one list keeps them all)
    raw = "[" + '{"name": "clock:now", "arguments": {"timezone": "UTC"}}, ' * 3 + '{"name": "clock:now", "arguments": {}}]'
    parsed = calls(raw, ["clock:now"])
    assert len(parsed.calls) == 4
    turn = NS(routed=NS(offer=NS(names=("clock:now",)), decision=NS(rule="SINGLE_STRONG_HIT", kind="subset", reason="r")),
              rounds=(NS(offered=("clock:now",), prompt_tokens=1, grammar_chars=1, tokens_per_s=1.0, raw=raw,
                         parsed=parsed, repairs=(), resolutions=(), results=()),),
              notes=(), answer="", follow_through=None, seconds=0.0)
    print_turn(turn)
    out = capsys.readouterr().out
    assert out.count("call:    clock:now {'timezone': 'UTC'} (written 3 times, run once)") == 1
    assert out.count("call:    clock:now {}\n") == 1


@pytest.mark.parametrize("raw", ["[TOOL_CALLS][]", "<tool_calls>[]</tool_calls>", "<|tool_call_start|>[]<|tool_call_end|>"])
def test_turn_empty_call_wrapper_is_no_answer_shown_as_markup(router, raw):
    """An output that is only an empty call wrapper has no content: the user sees the built answer,
    never the markup (the parser read it cleanly; the loop showed the raw text before 2026-12-06)."""
    runner = ScriptedRunner(raw)
    turn = run_turn("hi", router=router, runner=runner, session=Session(), check_claims=False)
    assert turn.answer == "Sorry, I have no answer to that."
