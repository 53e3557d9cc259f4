"""Offer overlays (companions, cap) and offers no policy decided (Offer.given)."""

from __future__ import annotations

from eris_lab.catalog import Catalog
from eris_lab.knobs import Knobs
import numpy as np

from eris_lab.offer import Offer, build, for_model, ordered
from eris_lab.policy import Decision, Hit, Rule

from conftest import load_cases

REGISTRY = Catalog.from_names(load_cases("policy_cases.json")["registry"] + ["vault:write"])


def decision(*names, kind="subset"):
    return Decision(rule=Rule.RANKED_SUBSET, kind=kind, names=tuple(names))


def test_build_fetch_brings_find_right_after_it():
    offer = build(decision("web:fetch", "weather:current"), REGISTRY)
    assert offer.names == ("web:fetch", "web:find", "weather:current")
    assert offer.overlays == ("companion web:find <- web:fetch",)


def test_build_doc_read_brings_vault_write():
    assert build(decision("doc:read"), REGISTRY).names == ("doc:read", "vault:write")


def test_build_companion_missing_from_catalogue_is_skipped():
    small = Catalog.from_names(["web:fetch", "clock:now"])
    assert build(decision("web:fetch"), small).names == ("web:fetch",)


def test_build_cap_seats_whole_domains_in_rank_order():
    d = decision("weather:current", "mail:read", "clock:now")
    offer = build(d, REGISTRY, knobs=Knobs(offer_cap=4))
    # weather (2 verbs) seated and completed; mail (6 verbs) would overflow; clock (3) would overflow
    assert offer.names == ("weather:current", "weather:forecast")
    offer = build(d, REGISTRY, knobs=Knobs(offer_cap=5))
    assert offer.names == ("weather:current", "weather:forecast", "clock:now", "clock:alarm", "clock:timer")


def test_build_cap_always_seats_the_first_domain_whole():
    offer = build(decision("mail:read"), REGISTRY, knobs=Knobs(offer_cap=2))
    assert set(offer.names) == set(REGISTRY.cluster("mail")) and offer.names[0] == "mail:read"


def test_build_full_roster_is_never_capped():
    d = Decision(rule=Rule.EMPTY_AFTER_POLICY, kind="full_roster", names=REGISTRY.names)
    assert build(d, REGISTRY, knobs=Knobs(offer_cap=3)).names == REGISTRY.names


def test_build_conversational_offers_nothing():
    d = Decision(rule=Rule.CONVERSATIONAL, kind="conversational", names=())
    assert build(d, REGISTRY).names == ()


def test_build_drops_unknown_and_duplicate_names():
    assert build(decision("clock:now", "nope", "clock:now"), REGISTRY).names == ("clock:now",)


def test_given_offer_is_exactly_the_names_under_its_own_rule():
    offer = Offer.given(("web:fetch", "clock:now", "web:fetch"), reason="--offer")
    assert offer.names == ("web:fetch", "clock:now")  # no companion overlay: nobody decided it
    assert offer.decision.rule == Rule.GIVEN and offer.kind == "subset" and offer.decision.reason == "--offer"
    assert offer.overlays == ()


def test_given_empty_offer_is_conversational_and_a_roster_can_say_so():
    assert Offer.given((), reason="answer only").kind == "conversational"
    roster = Offer.given(REGISTRY.names, kind="full_roster", rule=Rule.UNSURE_FULL_ROSTER, reason="bench")
    assert roster.kind == "full_roster" and roster.decision.rule == Rule.UNSURE_FULL_ROSTER


PICKS = Knobs(router_picks=True)


def test_for_model_router_picks_the_best_tool_of_a_ranked_subset():
    offer = build(decision("weather:forecast", "weather:current", "clock:now"), REGISTRY)
    picked = for_model(offer, knobs=PICKS)
    assert picked.names == ("weather:forecast",)
    assert picked.decision.rule == Rule.RANKED_SUBSET and picked.decision.names == ("weather:forecast",)
    assert "router picks weather:forecast of 3" in picked.decision.reason


def test_for_model_leaves_the_offer_without_the_knob():
    offer = build(decision("weather:forecast", "weather:current"), REGISTRY)
    assert for_model(offer) is offer and for_model(offer, knobs=Knobs()) is offer


def test_for_model_keeps_unsure_widenings_and_rosters_wide():
    # never lock a grammar onto a lone weak guess (DESIGN.md): only a ranked subset is narrowed
    for rule, kind in ((Rule.UNSURE_RANKED, "subset"), (Rule.AFFINITY_MARGIN_UNION, "cluster"),
                       (Rule.UNSURE_FULL_ROSTER, "full_roster")):
        offer = build(Decision(rule=rule, kind=kind, names=("clock:now", "clock:alarm")), REGISTRY)
        assert for_model(offer, knobs=PICKS) is offer


def test_for_model_keeps_what_an_overlay_or_memory_added():
    with_companion = build(decision("web:fetch", "weather:current"), REGISTRY)
    assert with_companion.overlays and for_model(with_companion, knobs=PICKS) is with_companion
    remembered = build(Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("clock:now", "clock:alarm"),
                                sources=(("clock:alarm", "memory"),)), REGISTRY)
    assert for_model(remembered, knobs=PICKS) is remembered


def test_for_model_keeps_each_request_its_tool():
    offer = build(decision("weather:forecast", "clock:timer"), REGISTRY)
    two = (Hit(name="weather:forecast", score=0.7), Hit(name="clock:timer", score=0.6))
    assert for_model(offer, intents=two, intent_floor=0.5, knobs=PICKS) is offer
    # a clause whose best tool scores below the router's threshold is no request
    assert for_model(offer, intents=two, intent_floor=0.65, knobs=PICKS).names == ("weather:forecast",)
    same = (Hit(name="weather:forecast", score=0.7), Hit(name="weather:forecast", score=0.6))
    assert for_model(offer, intents=same, intent_floor=0.5, knobs=PICKS).names == ("weather:forecast",)


def test_ordered_puts_the_failed_tools_first_under_failed_tool_retry():
    # the reply supplies what the failed call lacked (DESIGN); the key alone ranks it last
    names = ("weather:current", "mail:read", "clock:now")
    key = np.zeros(len(REGISTRY.names))
    for rank, name in enumerate(names):
        key[REGISTRY.position(name)] = 3 - rank
    retry = Offer(names=names, decision=Decision(rule=Rule.FAILED_TOOL_RETRY, kind="subset", names=names))
    assert ordered(retry, REGISTRY, key, failed=("clock:now",)).names == ("clock:now", "weather:current", "mail:read")
    # another rule keeps the key's order, failed or not
    ranked = Offer(names=names, decision=decision(*names))
    assert ordered(ranked, REGISTRY, key, failed=("clock:now",)).names == names
