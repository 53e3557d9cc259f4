"""Slot filling (eris_lab/slots.py) and the policy step that reads it (policy.with_slots)."""

from __future__ import annotations

import json

import pytest

from eris_lab import cli
from eris_lab.catalog import Catalog, tools_from_json
from eris_lab.knobs import Knobs
from eris_lab.policy import Decision, Hit, Rule, decide_turn, with_slots
from eris_lab.slots import MissingSlot, count_numbers, has_evidence, missing_slots, slot_kind

STRING = {"type": "string"}


@pytest.mark.parametrize("name, spec, kind", [
    ("weight", {"type": "number"}, "number"),
    ("count", {"type": "integer"}, "number"),
    ("cash_flows", {"type": "array", "items": {"type": "number"}}, "number"),
    ("year", {"type": "integer"}, "time"),  # a number named for a time is a time
    ("start_date", STRING, "time"),
    ("departureTime", STRING, "time"),
    ("city", STRING, "place"),
    ("loc", STRING, "place"),
    ("destination", {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}, "place"),
    ("destination", {"type": "string", "description": "The folder to move the file to"}, "free"),
    ("url", STRING, "url"),
    ("host", STRING, "url"),
    ("email", STRING, "email"),
    ("file_path", STRING, "path"),
    ("websiteId", STRING, "id"),
    ("user_id", {"type": "integer"}, "id"),  # a number that identifies: the message may name it instead
    ("days", {"type": "integer"}, "time"),  # "for the next week"
    ("number", {"type": "integer"}, "number"),
    ("api_key", STRING, "id"),
    ("ticker", STRING, "id"),
    ("keyword", STRING, "free"),  # ends in neither id nor key: a search term
    ("unit", {"type": "string", "enum": ["celsius", "fahrenheit"]}, "free"),
    ("enabled", {"type": "boolean"}, "free"),
    ("tags", {"type": "array", "items": STRING}, "free"),
    ("options", {"type": "object"}, "free"),
    ("location", {"type": ["string", "null"]}, "place"),
    ("latitude", {"type": "number"}, "place"),  # a place gives its coordinates
    ("coordinates", {"type": "array", "items": {"type": "number"}}, "place"),
    # the name before the description: a host's "IP address" is no place (live_multiple_71-31-0)
    ("host", {"type": "string", "description": "The hostname or IP address of the Postgres server"}, "url"),
    ("server", {"type": "string", "description": "The IP address of the server"}, "free"),
    ("recipient", {"type": "string", "description": "The email address to write to"}, "free"),
    ("destination", {"type": "string", "description": "The address to deliver to"}, "place"),
    ("password", STRING, "secret"),
    ("user_pwd", STRING, "free"),  # only a whole "pwd" is a password
    ("pwd", STRING, "secret"),
])
def test_slot_kind_reads_the_type_then_the_name(name, spec, kind):
    assert slot_kind(name, spec) == kind


@pytest.mark.parametrize("text, n", [
    ("2 bedrooms and 2 bathrooms", 2),  # equal values are still two numbers
    ("a ninety dollar transaction", 1),
    ("revenue of $200,000 and expenses of $150,000.5", 2),
    ("fill the tank completely", 1),
    ("starting from the first record", 1),
    ("zwei Tickets bitte", 1),
    ("the roots of bx + c = 0", 1),
    ("what is a holy book?", 0),
])
def test_count_numbers(text, n):
    assert count_numbers(text) == n


@pytest.mark.parametrize("kind, text, found", [
    ("time", "book it for next Tuesday", True),
    ("time", "on 2024-03-10", True),
    ("time", "morgen um acht", True),
    ("time", "book a table for one", False),
    ("place", "weather in Shanghai", True),
    ("place", "weather in shanghai", True),  # lower case after a locative preposition
    ("place", "I need a unisex salon now please.", False),  # "I" is no name
    ("place", "Find me some attractions to visit", False),  # a sentence's first word is no name
    ("place", "restaurants near me", True),
    ("place", "music events in the big apple this weekend", True),
    ("place", "天気を教えて", True),  # a script the checks cannot read is given the benefit of the doubt
    ("place", "flights to NYC", True),
    ("place", "Ich brauche einen Unisex-Friseur", False),  # German capitalises nouns: no name
    # a capitalised word straight after a preposition is a name (round fourteen, 2026-12-07)
    ("id", "Wie viel kostet eine Aktie von Siemens gerade?", True),
    ("id", "Wie viel kostet eine Aktie gerade?", False),
    ("place", "Ich brauche einen Friseur in Berlin", True),
    ("url", "fetch https://example.org/a", True),
    ("url", "connect to localhost", True),
    ("url", "add a new server", False),
    ("email", "write to anna@example.org", True),
    ("email", "write to Anna", False),
    ("path", "read notes/today.md", True),
    ("path", "read my notes", False),
    ("id", "ticket 3726", True),
    ("id", "the project 'PrimaryDB'", True),
    ("id", "the host agent zzw-zeem", True),
    ("id", "where is my order", False),
    ("secret", "my username is dbadmin and the password is 'secure*pwd123'", True),
    ("secret", "create a new postgres server http://plgah.ca. Username is pascal", False),
    ("url", "the host is 'db.company.com'", True),
    ("free", "", True),
])
def test_has_evidence(kind, text, found):
    assert has_evidence(kind, text) is found


BMI = {"type": "object", "properties": {"weight": {"type": "number"}, "height": {"type": "number"}},
       "required": ["weight", "height"]}
SALON = {"type": "object", "properties": {"city": {"type": "string", "description": "City of the salon"},
                                          "is_unisex": {"type": "boolean", "default": False}},
         "required": ["city"]}


def test_missing_slots_needs_a_number_for_number_arguments():
    # one number fills them all: the model knows the others ("a deck of 52 cards": 4 kings)
    assert missing_slots("the area of a triangle with base 10 and height 5", BMI) == ()
    assert missing_slots("my height is 180", BMI) == ()
    assert missing_slots("what is my body mass index?", BMI) == (MissingSlot("weight", "number"),
                                                                  MissingSlot("height", "number"))


def test_missing_slots_names_a_missing_place_and_skips_defaults():
    assert missing_slots("I need a unisex salon now please.", SALON) == (MissingSlot("city", "place"),)
    assert missing_slots("a unisex salon in Berkeley", SALON) == ()
    optional = {"type": "object", "properties": {"city": STRING}, "required": []}
    assert missing_slots("anything", optional) == ()
    defaulted = {"type": "object", "properties": {"city": {"type": "string", "default": "Oslo"}}, "required": ["city"]}
    assert missing_slots("weather please", defaulted) == ()


@pytest.mark.parametrize("description, missing", [
    ("Number of entries per page. If user doesn't specify, please use 100.", False),  # live_multiple_144-56-0
    ("How many results to return. Defaults to 10.", False),
    ("How many results to return (default: 5).", False),
    ("How many results to return.", True),
    ("The port of the server. Defaults to the standard PostgreSQL port.", True),  # no number stated
    ("The year of publishing. If not specified, fetches the most recent paper.", True),  # BFCL irrelevance_38
])
def test_a_number_the_description_states_as_default_fills_a_required_argument(description, missing):
    schema = {"type": "object", "required": ["count"], "properties": {"count": {"type": "integer", "description": description}}}
    assert bool(missing_slots("the lowest temperature across all sensors", schema)) is missing


@pytest.mark.parametrize("schema", [None, {}, "not a schema", {"type": "object", "properties": [], "required": "city"}])
def test_missing_slots_never_raises_on_odd_schemas(schema):
    assert missing_slots("text", schema) == ()


def test_missing_slot_describes_itself():
    assert MissingSlot("city", "place").describe() == "city (a place)"


# -- the policy step --------------------------------------------------------------------------

def _catalog() -> Catalog:
    return Catalog(tools_from_json([
        {"name": "salon.find", "description": "Find a hair salon in a city.", "parameters": SALON},
        {"name": "health.bmi", "description": "Body mass index from weight and height.", "parameters": BMI},
        {"name": "clock.now", "description": "The current time.", "parameters": {"type": "object", "properties": {}}},
    ]))


GATE = Knobs(slot_check="gate")


def test_with_slots_offers_nothing_when_no_chosen_tool_can_be_filled():
    catalog = _catalog()
    chosen = Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("salon.find", "health.bmi"), reason="2 hits")
    decision = with_slots(chosen, catalog, GATE, "I need a unisex salon now please.")
    assert decision.rule == Rule.MISSING_ARGUMENTS and decision.kind == "conversational" and decision.names == ()
    assert "salon.find's city (a place)" in decision.reason
    # one tool that can be called keeps the whole offer under "gate"
    assert with_slots(chosen, catalog, GATE, "a salon in Berkeley") is chosen


def test_with_slots_prune_drops_the_tools_it_cannot_fill():
    catalog = _catalog()
    chosen = Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("salon.find", "health.bmi", "clock.now"))
    pruned = with_slots(chosen, catalog, Knobs(slot_check="prune"), "a salon in Berkeley")
    assert pruned.rule == Rule.RANKED_SUBSET and pruned.names == ("salon.find", "clock.now")
    assert "without health.bmi" in pruned.reason
    roster = Decision(rule=Rule.UNSURE_RANKED, kind="full_roster", names=catalog.names)
    assert with_slots(roster, catalog, Knobs(slot_check="prune"), "a salon in Berkeley") is roster  # never pruned


@pytest.mark.parametrize("decision, knobs, after_tools", [
    (Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("salon.find",)), Knobs(), False),  # the reference: off
    (Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("salon.find",)), GATE, True),  # tools ran: their results
    (Decision(rule=Rule.FAILED_TOOL_RETRY, kind="subset", names=("salon.find",)), GATE, False),
    (Decision(rule=Rule.LEXICAL_FORCED_ONLY, kind="subset", names=("salon.find",)), GATE, False),
    (Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=()), GATE, False),
])
def test_with_slots_leaves_alone(decision, knobs, after_tools):
    assert with_slots(decision, _catalog(), knobs, "I need a salon", after_tools=after_tools) is decision


def test_decide_turn_reads_the_previous_message_of_a_follow_up():
    catalog = _catalog()
    hits = [Hit(name="salon.find", score=0.9)]
    alone = decide_turn("yes, a unisex one", hits, catalog, knobs=GATE)
    assert alone.rule == Rule.MISSING_ARGUMENTS
    follow = decide_turn("yes, a unisex one", hits, catalog, knobs=GATE, follow_up=True,
                         previous="find me a salon in Berkeley")
    assert follow.rule == Rule.SINGLE_STRONG_HIT and follow.names == ("salon.find",)
    after = decide_turn("yes, a unisex one", hits, catalog, knobs=GATE, recent=("clock.now",))
    assert after.rule == Rule.SINGLE_STRONG_HIT


def test_route_cli_offers_nothing_for_a_request_without_its_city(tmp_path, capsys):
    # the calibrated default of a catalogue nobody tuned (BFCL-style functions, real MiniLM)
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([
        {"name": "Services_1_FindProvider", "description": "Search for a hair stylist by city and optionally "
         "filter by whether the salon is unisex.", "parameters": {"type": "object", "properties": {
             "city": {"type": "string", "description": "The city where the salon is located, e.g. 'Berkeley, CA'."},
             "is_unisex": {"type": "boolean", "default": False}}, "required": ["city"]}},
        {"name": "Weather_1_GetWeather", "description": "Retrieves the weather of a city on a date.",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    ]), encoding="utf-8")
    assert cli.main(["route", "I need a unisex salon now please.", "--catalog", str(path), "--json"]) == 0
    refused = json.loads(capsys.readouterr().out)
    assert refused["decision"]["rule"] == "MISSING_ARGUMENTS" and refused["offered"] == []
    assert cli.main(["route", "I need a unisex salon in Berkeley now please.", "--catalog", str(path), "--json"]) == 0
    offered = json.loads(capsys.readouterr().out)
    assert "Services_1_FindProvider" in offered["offered"]


# -- asking for what is missing -----------------------------------------------------------------

def test_a_refusal_for_missing_values_asks_for_them_in_prompt_and_answer():
    from eris_lab import prompt
    from eris_lab.loop import shown_answer
    from eris_lab.offer import build

    catalog = _catalog()
    decision = decide_turn("I need a unisex salon now please.", [Hit(name="salon.find", score=0.9)], catalog,
                           knobs=GATE)
    assert decision.missing == (("salon.find", "city (a place)"),)
    text = prompt.slim(build(decision, catalog), catalog)
    assert text.startswith("No tool may be called this turn: the request needs what the user has not said yet "
                           "(city (a place) for salon.find); ask for it")
    # a model that answers nothing still leaves the user a question, never an empty reply
    assert shown_answer("", [], missing=decision.missing) == ("To do that I need to know: city (a place).", True)
    assert shown_answer("Which city?", [], missing=decision.missing) == ("Which city?", False)
    refused = Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=())
    assert prompt.slim(build(refused, catalog), catalog).startswith("No tool may be called this turn: answer in the message.")
