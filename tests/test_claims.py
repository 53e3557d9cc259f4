"""claims: claimed but unperformed actions, placeholders, and the follow-through question (fake runner)."""

from __future__ import annotations

import json

import pytest

from eris_lab import claims as ft
from eris_lab.errors import ErisLabError
from test_llm import NOW, OFFERED, FakeRunner


# ---------------------------------------------------------------------------------------------
# detection and cleaning (pure)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reply, families", [
    ("Sure! I'll remind you tomorrow at 10 to call mom.", ["remind"]),
    ("Okay, I've added the meeting to your calendar for Monday.", ["schedule"]),
    ("Done, I have sent the email to Bob.", ["send"]),
    ("Your reminder is set for 10:00.", ["remind"]),
    ("Let me set an alarm for 7.", ["remind"]),
    ("I will note that you like tea.", ["save"]),
    ("Ich erinnere dich morgen um 10 Uhr.", ["remind"]),
    ("Ich werde dich morgen erinnern.", ["remind"]),
    ("I'll explain how reminders work.", []),
    ("I can't set reminders, sorry.", []),
    ("Shall I remind you tomorrow?", []),
    ("I have a reminder feature.", []),
    ("The weather is sunny.", []),
], ids=lambda v: v if isinstance(v, str) else None)
def test_claims_families(reply, families):
    assert [c.family for c in ft.claims(reply)] == families


def test_claim_is_fulfilled_by_a_call_of_its_family():
    reply = "I'll remind you tomorrow at 10. I have sent the email to Bob."
    assert [c.family for c in ft.unfulfilled(reply, ["agenda:remind_at"])] == ["send"]
    assert ft.unfulfilled(reply, ["agenda:remind_at", "mail:write"]) == ()
    assert [c.text for c in ft.unfulfilled(reply, ["weather:current"])] == [
        "I'll remind you tomorrow at 10.", "I have sent the email to Bob."]


@pytest.mark.parametrize("reply, called, cleaned, removed", [
    ("Here is your cat. [Image Generated] Enjoy!", [], "Here is your cat. Enjoy!", ["[Image Generated]"]),
    ("Here you go:\n\n[image]\n\nA cat.", [], "Here you go:\nA cat.", ["[image]"]),
    ("**[Image: a cat on a sofa]**", [], "", ["**[Image: a cat on a sofa]**"]),
    ("![a cat]() There.", [], "There.", ["![a cat]()"]),
    ("[Image Generated]", ["image:generate"], "[Image Generated]", []),
    ("Done. [Reminder set]", ["weather:current"], "Done.", ["[Reminder set]"]),
    ("Done. [Reminder set]", ["agenda:remind_at"], "Done. [Reminder set]", []),
    ("See [image](https://x.org/a.png) and [1].", [], "See [image](https://x.org/a.png) and [1].", []),
])
def test_clean_removes_unbacked_placeholders(reply, called, cleaned, removed):
    assert ft.clean(reply, called) == (cleaned, tuple(removed))


def test_grammar_offers_exactly_the_offered_names():
    """The answer grammar is answer_schema compiled by the compiler; llama.cpp's engine judges it."""
    pytest.importorskip("llama_cpp")
    from eris_lab.grammar.oracle import oracle

    text = ft.grammar(["agenda:remind_at", 'odd"name'])
    judge = oracle()
    assert judge.accepts(text, '{"agreed": true, "action": "agenda:remind_at", "when": null}')
    assert judge.accepts(text, '{"agreed": false, "action": "odd\\"name", "when": "2026-11-30T10:00"}')
    assert judge.accepts(text, '{"agreed": true, "action": "agenda:remind_at", "when": "2026-11-30"}')
    assert not judge.accepts(text, '{"agreed": true, "action": "mail:write", "when": null}')
    assert not judge.accepts(text, '{"agreed": true, "action": "agenda:remind_at", "when": "tomorrow at 10"}')
    assert not judge.accepts(text, '{"agreed": "yes", "action": "agenda:remind_at", "when": null}')
    with pytest.raises(ErisLabError) as info:
        ft.grammar([])
    assert str(info.value) == "offered: expected at least one tool name, got none"


@pytest.mark.parametrize("when, expected, dropped", [
    ("2026-11-30T10:00", "2026-11-30T10:00:00+01:00", ""),
    ("2026-11-30T09:00:00Z", "2026-11-30T10:00:00+01:00", ""),
    ("2026-11-30", "2026-11-30", ""),
    ("2026-13-45T99:00", "", "2026-13-45T99:00"),
    ("tomorrow at 10", "", "tomorrow at 10"),
    ("2026-11-28T10:00", "", "2026-11-28T10:00"),
])
def test_read_answer_due_time_parses_or_is_dropped(when, expected, dropped):
    text = json.dumps({"agreed": True, "action": "agenda:remind_at", "when": when})
    answer = ft.read_answer(text, offered=OFFERED, now=NOW)
    assert (answer.when, answer.dropped, answer.agreed, answer.action) == (expected, dropped, True, "agenda:remind_at")


def test_read_answer_never_raises_and_rejects_unoffered_action():
    assert ft.read_answer("not json", offered=OFFERED, now=NOW).error == "the answer is not JSON"
    assert ft.read_answer("[1]", offered=OFFERED, now=NOW).error == "expected a JSON object, got list"
    answer = ft.read_answer('{"agreed": true, "action": "mail:write", "when": null}', offered=OFFERED, now=NOW)
    assert answer.action == "" and ft.call_for(answer) is None


def test_call_for_puts_the_due_time_in_the_schemas_date_time_parameter():
    answer = ft.Answer(agreed=True, action="agenda:remind_at", when="2026-11-30T10:00:00+01:00")
    schema = {"type": "object", "properties": {"text": {"type": "string"},
                                               "due": {"type": "string", "format": "date-time"}}}
    assert ft.call_for(answer, schema) == {"name": "agenda:remind_at",
                                           "arguments": {"due": "2026-11-30T10:00:00+01:00"}}
    assert ft.call_for(answer) == {"name": "agenda:remind_at", "arguments": {"when": "2026-11-30T10:00:00+01:00"}}
    assert ft.call_for(ft.Answer(agreed=False, action="agenda:remind_at")) is None


# ---------------------------------------------------------------------------------------------
# the question, with a fake runner
# ---------------------------------------------------------------------------------------------


def test_follow_through_asks_under_the_grammar_and_acts_on_the_answer():
    runner = FakeRunner('{"agreed": true, "action": "agenda:remind_at", "when": "2026-11-30T10:00"}')
    acted = []
    out = ft.follow_through(runner, "Sure, I'll remind you tomorrow at 10 to call mom.", called=[],
                            offered=OFFERED, now=NOW, user_text="remind me to call mom tomorrow at 10",
                            act=lambda name, args: acted.append((name, args)) or "ok")
    assert out.calls == ({"name": "agenda:remind_at", "arguments": {"when": "2026-11-30T10:00:00+01:00"}},)
    assert acted == [("agenda:remind_at", {"when": "2026-11-30T10:00:00+01:00"})] and out.results == ("ok",)
    assert runner.grammars == [ft.grammar(OFFERED)]
    assert "Current local time of the user: 2026-11-29T12:00+01:00 (Sunday)" in runner.prompts[0]
    assert "User: remind me to call mom tomorrow at 10" in runner.prompts[0]
    assert out.note == ""


def test_follow_through_drops_an_unparseable_due_time_instead_of_guessing():
    runner = FakeRunner('{"agreed": true, "action": "clock:alarm", "when": "2026-02-30T07:00"}')
    out = ft.follow_through(runner, "I'll set an alarm for 7.", called=[], offered=OFFERED, now=NOW)
    assert out.answer.dropped == "2026-02-30T07:00" and out.answer.when == ""
    assert out.calls == ({"name": "clock:alarm", "arguments": {}},)
    assert out.note == "due time '2026-02-30T07:00' dropped: it does not parse or is in the past"


def test_follow_through_model_did_not_agree_means_no_call():
    runner = FakeRunner('{"agreed": false, "action": "clock:alarm", "when": null}')
    out = ft.follow_through(runner, "I'll set an alarm for 7.", called=[], offered=OFFERED, now=NOW)
    assert out.calls == () and out.note == "the model did not agree to an offered action"


def test_follow_through_without_claims_asks_nothing_but_cleans_placeholders():
    runner = FakeRunner()
    out = ft.follow_through(runner, "A cat! [Image Generated]", called=[], offered=OFFERED, now=NOW)
    assert (out.reply, out.removed, out.answer, runner.prompts) == ("A cat!", ("[Image Generated]",), None, [])


def test_follow_through_fulfilled_claim_asks_nothing():
    runner = FakeRunner()
    out = ft.follow_through(runner, "I'll remind you at 10.", called=["agenda:remind_at"], offered=OFFERED, now=NOW)
    assert out.claims == () and runner.prompts == []


def test_follow_through_with_nothing_offered_reports_the_claim():
    out = ft.follow_through(FakeRunner(), "I'll remind you at 10.", called=[], offered=[], now=NOW)
    assert [c.family for c in out.claims] == ["remind"] and out.calls == ()
    assert out.note == "a claim was not acted on, and no tool is offered to act with"
