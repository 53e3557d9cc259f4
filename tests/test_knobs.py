"""Knobs: defaults, validation, TOML round trip, atomic writes."""

from __future__ import annotations

import pytest

from eris_lab.errors import KnobsError
from eris_lab.knobs import Knobs


def test_defaults_are_design_defaults():
    k = Knobs()
    assert (k.threshold, k.single_hit_floor, k.margin, k.forced_floor) == (0.50, 0.58, 0.05, 0.99)
    assert (k.unsure_fallback, k.dialog_memory, k.offer_cap) == ("full_roster", 12, 0)


def test_round_trip_toml(tmp_path):
    k = Knobs(threshold=0.42, domain_floors={"weather": 0.6}, notes={"run": "t1", "recall": 0.9})
    path = k.save(tmp_path / "knobs.toml")
    assert Knobs.load(path) == k


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"threshold": 2}, "knobs.toml: threshold: expected a cosine in [-1, 1], got 2"),
        ({"threshold": "high"}, "knobs.toml: threshold: expected a number, got 'high'"),
        ({"unsure_fallback": "guess"}, "knobs.toml: unsure_fallback: expected one of full_roster, domain_cluster, ranked, got 'guess'"),
        ({"offer_cap": -1}, "knobs.toml: offer_cap: expected an integer >= 0, got -1"),
        ({"treshold": 0.4}, "knobs.toml: unknown knob 'treshold'; expected one of"),
        ({"domain_floors": {"mail": 3}}, "knobs.toml: domain_floors.mail: expected a cosine in [-1, 1], got 3"),
    ],
)
def test_invalid_knobs_name_the_key(tmp_path, data, message):
    with pytest.raises(KnobsError) as info:
        Knobs.from_dict(data, where="knobs.toml")
    assert str(info.value).startswith(message)


def test_load_errors(tmp_path):
    with pytest.raises(KnobsError, match="no such file"):
        Knobs.load(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("threshold = = 1")
    with pytest.raises(KnobsError, match="not valid TOML"):
        Knobs.load(bad)


def test_levers_parse_and_apply():
    from eris_lab.knobs import ALL_LEVERS, GENERATION_LEVERS, parse_levers, with_levers

    assert parse_levers("all") == ALL_LEVERS and parse_levers("") == () and parse_levers(None) == ()
    assert parse_levers("compact, bounded,compact") == ("compact", "bounded")
    assert parse_levers("all,few-shot") == (*ALL_LEVERS, "few-shot")
    assert with_levers(Knobs(), ("few-shot",)).few_shot == 2 and Knobs().few_shot == 0
    knobs = with_levers(Knobs(), ALL_LEVERS)
    assert {k: getattr(knobs, k) for k in GENERATION_LEVERS} == GENERATION_LEVERS
    assert with_levers(Knobs(), ()) == Knobs() and with_levers(Knobs(), ("minimal",)).envelope == "minimal"
    assert with_levers(Knobs(), ("repair",)).repair_arguments and not Knobs().repair_arguments
    assert "repair" in parse_levers("all")
    with pytest.raises(KnobsError, match="unknown lever 'fast'"):
        parse_levers("bounded,fast")
    with pytest.raises(KnobsError, match="two envelopes"):
        parse_levers("calls-first,minimal")


@pytest.mark.parametrize(("key", "value"), [("envelope", "loose"), ("max_integer_digits", 0), ("max_integer_digits", 20),
                                            ("max_string_chars", 2001), ("max_array_items", -1), ("compact_json", 1), ("max_fraction_digits", 25),
                                            ("repair_arguments", "yes"),
                                            ("few_shot", 4), ("few_shot", -1)])
def test_generation_knobs_out_of_range_are_refused(key, value):
    with pytest.raises(KnobsError, match=key):
        Knobs.from_dict({key: value})


@pytest.mark.parametrize("value", [-0.1, float("nan"), True, "0.3"])
def test_a_widening_lexical_weight_that_is_not_a_number_at_least_zero_is_refused(value):
    with pytest.raises(KnobsError, match="widen_lexical_weight"):
        Knobs.from_dict({"widen_lexical_weight": value})


def test_envelope_string_bound_is_the_grammar_compilers_count_cap():
    """knobs.MAX_ENVELOPE_CHARS is a copy (routing loads no grammar compiler): the two must agree."""
    from eris_lab.grammar.builtins import MAX_COUNT
    from eris_lab.knobs import MAX_ENVELOPE_CHARS

    assert MAX_ENVELOPE_CHARS == MAX_COUNT


def test_knob_copies_agree_with_their_owners():
    """knobs.MAX_CALLS and GATE_WEIGHTS are copies (routing loads neither the grammar nor the gate)."""
    from eris_lab.calibration import GATE_FEATURES
    from eris_lab.grammar.envelope import MAX_CALLS
    from eris_lab import knobs

    assert knobs.MAX_CALLS == MAX_CALLS and knobs.GATE_WEIGHTS == len(GATE_FEATURES) + 1


@pytest.mark.parametrize("table, where", [
    ({"relevance_floor": 0.5, "relevance_weights": [1.0, 2.0]}, "relevance_weights"),
    ({"relevance_floor": 0.5, "relevance_weights": [1e308] * 4}, "relevance_weights"),
    ({"fix_spelling": "yes"}, "fix_spelling"),
    ({"order_by_cosine": "no"}, "order_by_cosine"),
    ({"max_calls": 10_000_000}, "max_calls"),
])
def test_knobs_a_helper_broke_are_refused_naming_them(table, where):
    """A helper's bad knobs, 2026-12-05: each passed, then failed in a matrix product, overflowed,
    or was refused only when a grammar was compiled."""
    with pytest.raises(KnobsError, match=where):
        Knobs.from_dict(table)


def test_knobs_outside_the_knobs_table_and_huge_integers_are_refused(tmp_path):
    path = tmp_path / "k.toml"
    path.write_text("threshold = 0.99\n[knobs]\nsingle_hit_floor = 0.99\n", encoding="utf-8")
    with pytest.raises(KnobsError, match="'threshold' stands outside the \\[knobs\\] table"):
        Knobs.load(path)
    path.write_text("threshold = 1" + "0" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(KnobsError, match="not valid TOML"):
        Knobs.load(path)
