"""grammar.explain: rules explained, example replies, llama.cpp's verdicts, costs."""

from __future__ import annotations

from eris_lab.catalog import load
from eris_lab.grammar import envelope, explain
from eris_lab.offer import Offer
from eris_lab.schema import validate


def _offer(*names):
    return Offer.given(names, reason="test")


def test_rules_explain_envelope_calls_and_arguments():
    cat = load(None)
    offer = _offer("weather:current", "clock:now")
    rows = {r["rule"]: r["explains"] for r in explain.rules(envelope.compile(offer, cat, check=False).text, offer.names)}
    assert rows["root"].startswith("the whole reply")
    assert rows["call-weather-current"] == "a call of weather:current: the name literal locks its argument shape"
    assert rows["tool-weather-current"] == "the arguments object of weather:current"
    assert rows["tool-weather-current-units-kv"] == "weather:current: argument 'units' (key and value)"
    assert rows["char"].startswith("builtin")


def test_example_value_follows_simple_schemas():
    schema = {"type": "object", "required": ["n", "when", "kind", "tags"],
              "properties": {"n": {"type": "integer", "minimum": 3}, "when": {"type": "string", "format": "date"},
                             "kind": {"enum": ["a", "b"]}, "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                             "optional": {"type": "string"}}}
    value = explain.example_value(schema)
    assert list(value) == ["n", "when", "kind", "tags"]  # required properties only
    assert value["n"] >= 3 and value["kind"] == "a" and len(value["tags"]) == 1
    assert validate(schema, value) is None


def test_examples_are_judged_as_expected_by_llama_cpp():
    cat = load(None)
    offer = _offer("weather:current", "clock:now")
    gbnf = envelope.compile(offer, cat).text
    verdicts = explain.judge(gbnf, explain.examples(offer.names, cat))
    assert {v["expect"] for v in verdicts} == {True, False}
    assert all(v["agrees"] for v in verdicts), [v for v in verdicts if not v["agrees"]]


def test_costs_grow_with_offer_size():
    cat = load(None)
    rows = explain.costs(cat, [1, 5], repeat=1, tokenizer=lambda s: s.split())
    assert [r["tools"] for r in rows] == [1, 5]
    assert rows[0]["chars"] < rows[1]["chars"]
    assert rows[0]["slim_prompt_tokens"] < rows[1]["slim_prompt_tokens"] < rows[1]["full_prompt_tokens"]
