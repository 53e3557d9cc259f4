"""Policy rules, one by one, and the handed policy cases (injected hits, no embedder)."""

from __future__ import annotations

import pytest

from eris_lab.catalog import Catalog
from eris_lab.knobs import Knobs
from eris_lab.offer import build
from eris_lab.policy import Hit, Rule, decide

from conftest import load_cases

POLICY = load_cases("policy_cases.json")
VARIANTS = load_cases("policy_variants.json")
REGISTRY = Catalog.from_names(POLICY["registry"])


def hits(*pairs):
    return [Hit(name=n, score=s) for n, s in pairs]


@pytest.mark.parametrize("case", POLICY["cases"] + VARIANTS["cases"], ids=[c["id"] for c in POLICY["cases"] + VARIANTS["cases"]])
def test_policy_case(case):
    knobs = Knobs(unsure_fallback=case["fallback"])
    decision = decide(case["text"], [Hit(name=n, score=s) for n, s in case["hits"]], REGISTRY,
                      recent=case["recent"], knobs=knobs)
    offered = build(decision, REGISTRY, knobs=knobs).names
    want = case["expected"]
    assert decision.rule == want.get("rule", decision.rule)
    if "kind" in want:
        assert decision.kind == want["kind"]
    if decision.kind == "full_roster":
        assert offered == REGISTRY.names
    if "first" in want:
        assert offered[0] == want["first"]
    for name in want.get("include", []):
        assert name in offered
    for name in want.get("exclude", []):
        assert name not in offered
    if "before" in want:
        a, b = want["before"]
        assert offered.index(a) < offered.index(b)
    if "names_exact" in want:
        assert list(offered) == want["names_exact"]
    for domain in want.get("all_of_domain", []):
        assert set(REGISTRY.cluster(domain)) <= set(offered)


def test_decide_greeting_is_conversational_even_with_hits():
    d = decide("hi!", hits(("clock:now", 0.7)), REGISTRY)
    assert (d.rule, d.kind, d.names) == (Rule.CONVERSATIONAL, "conversational", ())


def test_decide_short_text_with_tool_keyword_is_not_conversational():
    d = decide("weather?", hits(("weather:current", 0.7)), REGISTRY)
    assert d.rule == Rule.SINGLE_STRONG_HIT and d.names == ("weather:current",)


def test_decide_forced_hit_beats_conversation_guard():
    d = decide("example.org", hits(("web:fetch", 1.0)), REGISTRY)
    assert d.rule == Rule.LEXICAL_FORCED_ONLY and d.names == ("web:fetch",)


def test_decide_lone_hit_below_floor_demotes_to_domain_cluster_when_asked():
    d = decide("please check something about my mail stuff", hits(("mail:read", 0.52)), REGISTRY,
               knobs=Knobs(unsure_fallback="domain_cluster"))
    assert d.rule == Rule.UNSURE_DOMAIN_CLUSTER and d.kind == "cluster"
    assert d.names[0] == "mail:read" and set(d.names) == set(REGISTRY.cluster("mail"))


def test_decide_lone_hit_at_floor_is_single_strong_hit():
    d = decide("please read my latest mail message now", hits(("mail:read", 0.58)), REGISTRY)
    assert d.rule == Rule.SINGLE_STRONG_HIT


def test_decide_unrelated_near_tie_keeps_ranked_subset():
    # weather and doc share no affinity group: no cluster dump
    d = decide("what does my weather document say about rain", hits(("weather:current", 0.62), ("doc:query", 0.60)),
               REGISTRY)
    assert d.rule == Rule.RANKED_SUBSET and d.names == ("weather:current", "doc:query")


def test_decide_near_tie_inside_one_domain_is_not_a_union():
    d = decide("what is the weather doing in Berlin right now", hits(("weather:current", 0.70), ("weather:forecast", 0.69)),
               REGISTRY)
    assert d.rule == Rule.RANKED_SUBSET and d.kind == "subset"


def test_decide_affinity_union_siblings_rank_under_their_domain_best():
    d = decide("remind me tomorrow at ten please", hits(("clock:alarm", 0.61), ("agenda:remind_at", 0.59)), REGISTRY)
    assert d.rule == Rule.AFFINITY_MARGIN_UNION
    assert d.names[:3] == ("clock:alarm", "clock:now", "clock:timer")
    assert d.names[3] == "agenda:remind_at"
    assert "calendar:list" not in d.names


def test_decide_mixed_forced_and_embedding_hits():
    d = decide("summarise https://example.org and the weather", hits(("web:fetch", 1.0), ("weather:current", 0.7)),
               REGISTRY)
    assert d.rule == Rule.MIXED_EMBED_AND_LEXICAL and d.names == ("web:fetch", "weather:current")


def test_decide_no_hits_falls_back_to_full_roster():
    d = decide("please do the thing we discussed before lunch", [], REGISTRY)
    assert d.rule == Rule.EMPTY_AFTER_POLICY and d.kind == "full_roster" and d.names == REGISTRY.names


def test_decide_no_hits_offers_nothing_with_empty_fallback_none():
    d = decide("please do the thing we discussed before lunch", [], REGISTRY, knobs=Knobs(empty_fallback="none"))
    assert d.rule == Rule.EMPTY_AFTER_POLICY and d.names == ()


def test_decide_hits_below_threshold_are_ignored():
    d = decide("please do the thing we discussed before lunch", hits(("mail:read", 0.3)), REGISTRY)
    assert d.rule == Rule.EMPTY_AFTER_POLICY


@pytest.mark.parametrize(
    ("text", "recent", "rule", "first"),
    [
        ("delete that email please", ["mail:check"], Rule.MAIL_DIALOG_PAIRING, "mail:delete"),
        ("archive that mail", ["mail:read"], Rule.MAIL_DIALOG_PAIRING, "mail:move"),
        ("cancel that meeting", ["calendar:list"], Rule.CALENDAR_DIALOG_PAIRING, "calendar:delete"),
        ("remove it from my agenda", ["agenda:list"], Rule.AGENDA_DIALOG_PAIRING, "agenda:remove"),
        ("delete that document", ["doc:list"], Rule.DOC_DIALOG_PAIRING, "doc:delete"),
        ("lösche die E-Mail", ["mail:check"], Rule.MAIL_DIALOG_PAIRING, "mail:delete"),
    ],
)
def test_decide_dialog_pairing(text, recent, rule, first):
    d = decide(text, [], REGISTRY, recent=recent)
    assert d.rule == rule and d.names[0] == first and d.kind == "cluster"


def test_decide_bare_remove_it_never_pairs_without_a_listing_last():
    d = decide("remove it", [], REGISTRY, recent=["agenda:list", "mail:delete"])
    assert d.rule not in {Rule.AGENDA_DIALOG_PAIRING, Rule.MAIL_DIALOG_PAIRING}
    assert decide("remove it", [], REGISTRY).rule == Rule.CONVERSATIONAL


@pytest.mark.parametrize(
    ("text", "last", "rule", "first"),
    [
        ("please remove it", "agenda:list", Rule.AGENDA_DIALOG_PAIRING, "agenda:remove"),
        ("delete it", "mail:check", Rule.MAIL_DIALOG_PAIRING, "mail:delete"),
        ("remove it", "mail:check", Rule.MAIL_DIALOG_PAIRING, "mail:delete"),
        ("cancel that one", "calendar:list", Rule.CALENDAR_DIALOG_PAIRING, "calendar:delete"),
        ("lösche es bitte", "doc:list", Rule.DOC_DIALOG_PAIRING, "doc:delete"),
        # an item of the listing named by its place (demo hist-002)
        ("read the first one", "mail:check", Rule.MAIL_DIALOG_PAIRING, "mail:read"),
        ("open the second", "doc:list", Rule.DOC_DIALOG_PAIRING, "doc:read"),
        ("delete the oldest one", "mail:check", Rule.MAIL_DIALOG_PAIRING, "mail:delete"),
        ("lies die erste vor", "mail:check", Rule.MAIL_DIALOG_PAIRING, "mail:read"),
    ],
)
def test_decide_anaphor_and_verb_right_after_a_listing_act_on_what_was_listed(text, last, rule, first):
    # issue 16: an action on what was just listed; a cluster, never one tool locked in
    d = decide(text, [], REGISTRY, recent=["clock:now", last])
    assert d.rule == rule and d.names[0] == first and d.kind == "cluster" and len(d.names) > 1


def test_retry_failed_offers_the_failed_tool_again_only_on_failure():
    from eris_lab.policy import retry_failed

    unsure = decide("I'm in Leeds", [], REGISTRY, follow_up=True)
    assert unsure.kind == "full_roster"
    d = retry_failed(unsure, ["weather:current"], [], REGISTRY)
    assert d.rule == Rule.FAILED_TOOL_RETRY and d.names == ("weather:current",) and d.kind == "subset"
    assert retry_failed(unsure, [], [], REGISTRY) is unsure
    greeting = decide("thanks", [], REGISTRY, follow_up=True)
    assert retry_failed(greeting, ["weather:current"], [], REGISTRY).names == ()
    strong = decide("set an alarm", hits(("clock:alarm", 0.8)), REGISTRY)
    both = retry_failed(strong, ["weather:current", "nope:unknown"], [], REGISTRY)
    assert both.rule == strong.rule and both.names == ("clock:alarm", "weather:current")


@pytest.mark.parametrize("reply", ["Rotterdam", "New York", "Frankfurt am Main", "SW1A 1AA", "Leeds."])
def test_a_bare_value_after_a_failed_call_offers_the_failed_tool_alone(reply):
    """Round twelve's variant of route-23 (2026-12-06, night): "Rotterdam", read with the weather
    question before it, kept web search (0.51) beside the failed weather tool."""
    from eris_lab.policy import retry_failed

    confident = decide(reply, hits(("weather:current", 0.84), ("web:search", 0.51)), REGISTRY, follow_up=True)
    d = retry_failed(confident, ["weather:current"], hits(("weather:current", 0.84), ("web:search", 0.51)),
                     REGISTRY, Knobs(), text=reply)
    assert d.rule == Rule.FAILED_TOOL_RETRY and d.names == ("weather:current",)


@pytest.mark.parametrize("reply", ["rotterdam please check the news", "Cancel", "on second thought, check the news",
                                   "Check News", "Read The News"])  # title case: round thirteen
def test_a_request_after_a_failed_call_is_no_bare_value(reply):
    from eris_lab.policy import retry_failed

    strong = decide(reply, hits(("news:today", 0.8)), REGISTRY, follow_up=True)
    assert "news:today" in retry_failed(strong, ["weather:current"], hits(("news:today", 0.8)), REGISTRY, Knobs(),
                                        text=reply).names


def test_retry_after_the_gates_no_tool_fits_offers_the_failed_tool_and_not_the_refused_hits():
    from eris_lab.policy import Decision, retry_failed

    refused = Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=(), reason="gate")
    weak = hits(("news:today", 0.31), ("clock:now", 0.2))
    assert retry_failed(refused, ["weather:current"], weak, REGISTRY).names == ("weather:current",)
    unsure = decide("I'm in Leeds", [], REGISTRY, follow_up=True)  # unsure (not refused): the hits follow
    assert retry_failed(unsure, ["weather:current"], weak, REGISTRY).names == ("weather:current", "news:today",
                                                                             "clock:now")


def test_retry_after_a_ranked_widening_keeps_its_bound():
    """A helper's variant of route-23 (2026-12-05): "Lisbon" after a failed clock:now was offered 51
    of 56 tools, every hit over the calibrated threshold, instead of the widening's 14."""
    from eris_lab.policy import Decision, retry_failed

    failed, first, second = REGISTRY.names[:3]
    ranked = Decision(rule=Rule.UNSURE_RANKED, kind="subset", names=(first, second), reason="r")
    many = hits(*((n, 0.3) for n in REGISTRY.names))
    d = retry_failed(ranked, [failed], many, REGISTRY)
    assert len(REGISTRY.names) > 3 and d.rule == Rule.FAILED_TOOL_RETRY and d.names == (failed, first, second)


def test_decide_turn_is_decide_then_the_conversation_steps_each_optional():
    from eris_lab.policy import decide_turn, retry_failed, with_added

    unsure = decide("I'm in Leeds", [], REGISTRY, follow_up=True)
    assert decide_turn("I'm in Leeds", [], REGISTRY, follow_up=True) == unsure  # nothing else given
    retried = decide_turn("I'm in Leeds", [], REGISTRY, follow_up=True, failed=["weather:current"])
    assert retried == retry_failed(unsure, ["weather:current"], [], REGISTRY, Knobs(), "I'm in Leeds")
    assert retried.names == ("weather:current",)  # a reply that only supplies a value
    strong = decide("set an alarm", hits(("clock:alarm", 0.8)), REGISTRY)
    added = decide_turn("set an alarm", hits(("clock:alarm", 0.8)), REGISTRY, added=["clock:timer"])
    assert added == with_added(strong, ["clock:timer"], REGISTRY) and added.names[0] == "clock:timer"
    # None leaves a step out (the strategies' ablations without memory or added tools)
    assert decide_turn("set an alarm", hits(("clock:alarm", 0.8)), REGISTRY, added=None) == strong
    # calibrated knobs (subset_margin < 2): every step acts, in order; memory reads `ranked`
    knobs = Knobs(subset_margin=0.1)
    ranked = hits(("clock:alarm", 0.8), ("weather:current", 0.6), ("clock:timer", 0.55))
    turn = dict(knobs=knobs, ranked=ranked, failed=["mail:check"], last_turn=["clock:timer"],
                intents=hits(("clock:alarm", 0.8), ("weather:current", 0.6)), added=["calendar:list"])
    d = decide_turn("set an alarm and check the weather", hits(("clock:alarm", 0.8)), REGISTRY, **turn)
    assert d.names == ("calendar:list", "clock:alarm", "mail:check", "weather:current", "clock:timer")
    assert ("clock:timer", "memory") in d.sources
    no_memory = decide_turn("set an alarm and check the weather", hits(("clock:alarm", 0.8)), REGISTRY,
                            **(turn | {"last_turn": None}))
    assert "clock:timer" not in no_memory.names and "weather:current" in no_memory.names


def test_decide_pairing_needs_that_domain_in_recent():
    d = decide("delete that email please", [], REGISTRY, recent=["calendar:list"])
    assert d.rule != Rule.MAIL_DIALOG_PAIRING


def test_decide_agenda_pairing_wins_over_mail():
    d = decide("remove that email reminder from my agenda", [], REGISTRY, recent=["mail:check", "agenda:list"])
    assert d.rule == Rule.AGENDA_DIALOG_PAIRING


def test_decide_dialog_memory_window_forgets_old_tools():
    recent = ["mail:check"] + ["clock:now"] * 12
    d = decide("delete that email please", [], REGISTRY, recent=recent)
    assert d.rule != Rule.MAIL_DIALOG_PAIRING
    d = decide("delete that email please", [], REGISTRY, recent=recent[1:] + ["mail:check"])
    assert d.rule == Rule.MAIL_DIALOG_PAIRING


def test_decide_ignores_hits_outside_the_catalogue():
    d = decide("what is the weather in Berlin now", hits(("nope:tool", 0.9), ("weather:current", 0.7)), REGISTRY)
    assert d.names == ("weather:current",)


@pytest.mark.parametrize("text", ["", "   ", "\n", "\x00\x01", "a" * 1_000_000, "héllo мир 你好 🤖 " * 100,
                                  "a-" * 100_000])  # every letter a start of a file name: minutes until round eighteen
def test_decide_never_raises_on_odd_text(text):
    d = decide(text, hits(("weather:current", 0.7)), REGISTRY)
    assert d.rule in set(Rule)


def test_decide_on_one_tool_catalogue():
    one = Catalog.from_names(["clock:now"])
    d = decide("what time is it in Tokyo right now", hits(("clock:now", 0.52)), one)
    assert d.rule == Rule.UNSURE_FULL_ROSTER and d.names == ("clock:now",)
    d = decide("what time is it in Tokyo right now", hits(("clock:now", 0.52)), one,
               knobs=Knobs(unsure_fallback="domain_cluster"))
    assert d.rule == Rule.UNSURE_FULL_ROSTER  # a one-tool cluster would lock onto the weak guess


def test_decision_keys_determine_decide_on_a_grid_of_knobs():
    """policy.decision_keys (the tuning view's fast path) against decide itself: wherever two knob
    settings give one message the same key, decide gives the same names, kind and rule."""
    import itertools
    import random

    import numpy as np

    from eris_lab.catalog import domain_of
    from eris_lab.policy import affinity_group, decision_keys, embedding_mask
    from eris_lab.router import kept_hits

    rng = random.Random(7)
    names = list(REGISTRY.names)
    messages = []
    for i in range(60):
        scored = [Hit(name=n, score=round(rng.uniform(0.2, 0.75), 3)) for n in rng.sample(names, rng.randint(0, 6))]
        if i % 7 == 0:
            scored.append(Hit(name="web:fetch", score=1.0))  # a forced (lexical) hit
        if i % 11 == 0:
            scored.append(Hit(name="not:in_catalog", score=0.7))
        messages.append(tuple(sorted(scored, key=lambda h: -h.score)))
    grid = list(itertools.product((0.3, 0.45, 0.5, 0.6), (0.5, 0.58, 0.7), (0.0, 0.03, 0.1),
                                  ("full_roster", "domain_cluster"), ("full_roster", "none")))
    seen: dict[tuple, tuple] = {}
    distinct = set()
    # long enough not to be chit-chat; and an information question beside web:search, which seats the
    # search only without a confident hit (round eighteen)
    texts = ("could you take care of that thing for me before lunch", "who won the world cup in 2014?")
    for i, (hits_i, TEXT) in enumerate(itertools.product(messages, texts)):
        for t, f, margin, unsure, empty in grid:
            knobs = Knobs(threshold=t, single_hit_floor=max(f, t), margin=margin, unsure_fallback=unsure,
                          empty_fallback=empty)
            kept = kept_hits(hits_i, TEXT, knobs)
            mask = embedding_mask(kept, REGISTRY, knobs)
            embed_scores = [h.score for h, m in zip(kept, mask) if m]
            top = np.array([embed_scores[0] if embed_scores else np.nan])
            gaps = np.array([[embed_scores[0] - s for s in embed_scores[1:]] + [np.inf]])
            first = next((h for h, m in zip(kept, mask) if m), None)
            widens = np.array([first is not None and bool(affinity_group(domain_of(first.name)))])
            demoted, tied, confident = decision_keys(np.array([[int(mask.sum())]]), top, gaps,
                                                     np.array([knobs.single_hit_floor]), margin, widens)
            key = (i, len(kept), bool(demoted[0, 0]), int(tied[0, 0]),
                   unsure if demoted[0, 0] else None, empty if mask.sum() == 0 else None, bool(confident[0, 0]))
            d = decide(TEXT, kept, REGISTRY, knobs=knobs)
            outcome = (d.names, d.kind, d.rule)
            assert seen.setdefault(key, outcome) == outcome, (key, knobs)
            distinct.add(outcome)
    assert len(seen) > 200 and len(distinct) > 50  # the grid really moves the decisions


# -- bounded widening, subset margin, the relevance gate (issue 18) ----------------------------------

RANKED = Knobs(unsure_fallback="ranked", empty_fallback="ranked", widen_k=4, max_whole_roster=3)
WIDE = Catalog.from_names(["clock:now", "clock:timer", "clock:alarm", "mail:check", "mail:write",
                           "web:search", "wiki:summary", "calc:evaluate", "media:play", "media:pause"])


def test_unsure_ranked_widens_to_the_best_scored_tools_with_whole_domains():
    ranked = hits(("web:search", 0.45), ("mail:check", 0.40), ("calc:evaluate", 0.2), ("clock:now", 0.1))
    decision = decide("look something up for me please", hits(("web:search", 0.55)), WIDE, knobs=RANKED,
                      ranked=ranked)
    assert decision.rule == Rule.UNSURE_RANKED and decision.kind == "subset"
    # web:search seats its domain (1 tool), then mail seats both verbs; 3 < 4 so calc is seated too
    assert decision.names == ("web:search", "mail:check", "mail:write", "calc:evaluate")


def test_empty_ranked_never_amputates_a_domain_and_never_offers_the_roster():
    ranked = hits(("clock:alarm", 0.3), ("web:search", 0.29), ("mail:check", 0.28))
    decision = decide("something about the morning routine, 10 minutes", [], WIDE, knobs=RANKED, ranked=ranked)
    assert decision.rule == Rule.UNSURE_RANKED and decision.kind == "subset"
    # (without a duration the timer alone would be left out: idle_countdowns)
    assert set(decision.names) == {"clock:alarm", "clock:now", "clock:timer", "web:search"}
    assert len(decision.names) < len(WIDE)


@pytest.mark.parametrize("size", [2, 3])
def test_ranked_widening_on_a_small_catalogue_is_the_whole_roster_honestly(size):
    small = Catalog.from_names(WIDE.names[2:2 + size])  # no timer: test_a_widening_leaves_out_a_countdown...
    decision = decide("something about the morning routine", [], small, knobs=RANKED)
    assert decision.kind == "full_roster" and decision.names == small.names


def test_subset_margin_keeps_only_hits_near_the_top():
    knobs = Knobs(subset_margin=0.05)
    got = decide("send a mail and check the news", hits(("mail:write", 0.7), ("mail:check", 0.67),
                                                        ("web:search", 0.6)), WIDE, knobs=knobs)
    assert got.names == ("mail:write", "mail:check") and got.rule == Rule.RANKED_SUBSET
    assert decide("send a mail and check the news", hits(("mail:write", 0.7), ("mail:check", 0.67),
                                                         ("web:search", 0.6)), WIDE).names[-1] == "web:search"


def test_a_ranked_subset_over_widen_k_keeps_the_hits_first_in_the_widening_order():
    # more hits near the top than widen_k: which stay is the router's widening order (`ranked`,
    # router.widening_key), not the cosine alone; what stays keeps its own score and order
    near = hits(("mail:write", 0.70), ("mail:check", 0.69), ("web:search", 0.68), ("wiki:summary", 0.67))
    knobs = Knobs(subset_margin=0.5, widen_k=2)
    by_cosine = decide("summarise the wiki page", near, WIDE, knobs=knobs)
    assert by_cosine.names == ("mail:write", "mail:check")
    ranked = hits(("wiki:summary", 0.97), ("mail:write", 0.70), ("mail:check", 0.69), ("web:search", 0.68))
    by_widening = decide("summarise the wiki page", near, WIDE, knobs=knobs, ranked=ranked)
    assert by_widening.rule == Rule.RANKED_SUBSET and by_widening.names == ("mail:write", "wiki:summary")
    assert "4 were near the top: the 2 first by score plus the message's lexical share kept" in by_widening.reason
    assert "lexical share" not in by_cosine.reason
    # within widen_k the order changes nothing
    assert decide("summarise the wiki page", near, WIDE, knobs=Knobs(subset_margin=0.5, widen_k=4),
                  ranked=ranked).names == ("mail:write", "mail:check", "web:search", "wiki:summary")


def test_calibrated_affinity_union_stays_within_widen_k_seating_whole_clusters():
    # the near-tie across related domains (clock, agenda) unions their clusters; under calibrated
    # knobs (subset_margin below 2) the union is seated in rank order up to widen_k, never amputated
    tie = hits(("clock:alarm", 0.61), ("agenda:remind_at", 0.59))
    free = decide("remind me tomorrow at ten please", tie, REGISTRY)
    knobs = Knobs(subset_margin=0.5, widen_k=4)
    bounded = decide("remind me tomorrow at ten please", tie, REGISTRY, knobs=knobs)
    assert bounded.rule == free.rule == Rule.AFFINITY_MARGIN_UNION and len(free.names) > 4
    clock = REGISTRY.cluster("clock")
    assert set(bounded.names) == set(clock) and bounded.names[0] == "clock:alarm" and len(clock) <= 4
    assert "within widen_k 4" in bounded.reason
    # reference knobs: DESIGN's rule unchanged
    assert decide("remind me tomorrow at ten please", tie, REGISTRY, knobs=Knobs(widen_k=4)).names == free.names


GATED = Knobs(relevance_floor=0.5, relevance_weights=(0.0, 1.0, 0.0, 0.0))


def test_relevance_below_the_floor_offers_nothing_even_with_hits():
    decision = decide("time flies when you're having fun", hits(("clock:timer", 0.7)), WIDE, knobs=GATED,
                      relevance=0.2)
    assert decision.rule == Rule.NO_TOOL_FITS and decision.kind == "conversational" and decision.names == ()
    assert build(decision, WIDE, knobs=GATED).names == ()


def test_relevance_at_the_floor_or_unknown_leaves_the_policy_alone():
    for relevance in (0.5, 0.9, None):
        decision = decide("set a timer for ten minutes", hits(("clock:timer", 0.7)), WIDE, knobs=GATED,
                          relevance=relevance)
        assert decision.rule == Rule.SINGLE_STRONG_HIT


def test_a_forced_hit_overrides_the_relevance_gate():
    decision = decide("open https://example.org", hits(("web:search", 1.0)), WIDE, knobs=GATED, relevance=0.01)
    assert decision.rule == Rule.LEXICAL_FORCED_ONLY and decision.names == ("web:search",)


def test_the_relevance_gate_does_not_refuse_a_follow_up_once_tools_ran():
    # demo hist-020: "do that again but for vegetarian chili" after web:search was refused (0.13)
    text, found = "do that again but for vegetarian chili", hits(("web:search", 0.45), ("web:fetch", 0.40))
    alone = decide(text, found, WIDE, knobs=GATED, relevance=0.13)
    assert alone.rule == Rule.NO_TOOL_FITS
    followed = decide(text, found, WIDE, knobs=GATED, relevance=0.13, recent=["web:search"], follow_up=True)
    assert followed.rule != Rule.NO_TOOL_FITS and "web:search" in followed.names
    # tools that ran, without a follow-up (a new session's message), or a follow-up without tools: refused
    assert decide(text, found, WIDE, knobs=GATED, relevance=0.13, recent=["web:search"]).rule == Rule.NO_TOOL_FITS
    assert decide(text, found, WIDE, knobs=GATED, relevance=0.13, follow_up=True).rule == Rule.NO_TOOL_FITS


def test_gate_floor_without_weights_is_refused():
    from eris_lab.errors import KnobsError

    with pytest.raises(KnobsError, match="relevance_weights"):
        Knobs(relevance_floor=0.3)


def test_each_request_of_a_joined_message_gets_its_best_tool():
    from eris_lab.policy import with_intents

    calibrated = Knobs(subset_margin=0.2)
    decision = decide("set a timer and email bob", hits(("clock:timer", 0.8)), WIDE, knobs=calibrated)
    assert decision.rule == Rule.SINGLE_STRONG_HIT and decision.names == ("clock:timer",)
    intents = hits(("clock:timer", 0.8), ("mail:write", 0.55), ("web:search", 0.2))
    joined = with_intents(decision, intents, WIDE, calibrated)
    assert joined.names == ("clock:timer", "mail:write") and joined.rule == decision.rule  # 0.2 < threshold
    assert "mail:write" in joined.reason
    assert with_intents(decision, intents[:1], WIDE, calibrated) == decision  # one request: unchanged
    assert with_intents(decision, intents, WIDE, Knobs()) == decision  # reference knobs: DESIGN's rules
    roster = decide("hm", [], WIDE)
    assert with_intents(roster, intents, WIDE, calibrated) == roster


def test_near_tie_reason_calls_same_domain_tools_same_domain_not_unrelated():
    # bad input row 32: "weather?" -> "near-tie with unrelated weather:forecast"
    catalog = Catalog.from_names(["weather:current", "weather:forecast", "news:today"])
    got = decide("weather?", hits(("weather:current", 0.62), ("weather:forecast", 0.58)), catalog)
    assert "same-domain weather:forecast" in got.reason and "unrelated" not in got.reason
    got = decide("weather news", hits(("weather:current", 0.62), ("news:today", 0.6)), catalog)
    assert "unrelated news:today" in got.reason


@pytest.mark.parametrize("text, recent, hits_, rule, first", [
    # variants of the pairing cases in other words (a list item, a German entry, a separable verb)
    ("delete the second item on that list please", "agenda:list", [("doc:delete", 0.56), ("mail:delete", 0.53)],
     Rule.AGENDA_DIALOG_PAIRING, "agenda:remove"),
    ("bitte lösche den Eintrag mit der Hafermilch aus meiner Liste", "agenda:list", [("doc:delete", 0.53)],
     Rule.AGENDA_DIALOG_PAIRING, "agenda:remove"),
    ("bitte sage den Termin am Freitag im Kalender ab", "calendar:list", [("agenda:remove", 0.53)],
     Rule.CALENDAR_DIALOG_PAIRING, "calendar:delete"),
])
def test_dialog_pairing_reads_other_words_for_the_same_cue(text, recent, hits_, rule, first):
    catalog = Catalog.from_names(["agenda:list", "agenda:remove", "agenda:complete", "calendar:list",
                                  "calendar:delete", "calendar:get", "doc:delete", "mail:delete"])
    decision = decide(text, hits(*hits_), catalog, recent=[recent])
    assert decision.rule == rule and decision.names[0] == first and decision.kind == "cluster"


@pytest.mark.parametrize("text, recent, hits_, rule, first", [
    # a tester's fresh variants (f9-p05..p30, 2026-12-06): the whole roster or conversation before
    ("borra la de la leche de avena", "agenda:list", [("doc:delete", 0.55)], Rule.AGENDA_DIALOG_PAIRING, "agenda:remove"),
    ("usuń ten z mlekiem", "agenda:list", [("doc:delete", 0.54)], Rule.AGENDA_DIALOG_PAIRING, "agenda:remove"),
    ("push the standup back half an hour", "calendar:list", [("agenda:push", 0.57)], Rule.CALENDAR_DIALOG_PAIRING,
     "calendar:update"),
    ("cancela la reunión del martes", "calendar:list", [("agenda:remove", 0.55)], Rule.CALENDAR_DIALOG_PAIRING,
     "calendar:delete"),
    ("cancella la seconda", "mail:check", [("doc:delete", 0.55)], Rule.MAIL_DIALOG_PAIRING, "mail:delete"),
    ("odpowiedz mu, że się zgadzam", "mail:read", [("social:search", 0.52)], Rule.MAIL_DIALOG_PAIRING, "mail:write"),
])
def test_dialog_pairing_reads_spanish_italian_portuguese_polish_dutch_and_named_things(text, recent, hits_, rule,
                                                                                        first):
    decision = decide(text, hits(*hits_), REGISTRY, recent=[recent])
    assert decision.rule == rule and decision.names[0] == first and decision.kind == "cluster"
    # never without that domain's tool among the recent ones
    assert not decide(text, hits(*hits_), REGISTRY, recent=["weather:current"]).rule.endswith("_PAIRING")


@pytest.mark.parametrize("text, recent, hits_, rule, first", [
    # a tester's fresh variants (f10-p07/p10/p13/p14/p18/p20, 2026-12-06): the whole roster or conversation before
    ("ta bort den andra", "agenda:list", [("doc:delete", 0.55)], Rule.AGENDA_DIALOG_PAIRING, "agenda:remove"),
    ("slet den første", "agenda:list", [("doc:delete", 0.55)], Rule.AGENDA_DIALOG_PAIRING, "agenda:remove"),
    ("flytta mötet till fredag", "calendar:list", [("agenda:push", 0.55)], Rule.CALENDAR_DIALOG_PAIRING,
     "calendar:update"),
    ("zruš tu schůzku", "calendar:list", [("agenda:remove", 0.55)], Rule.CALENDAR_DIALOG_PAIRING, "calendar:delete"),
    ("svara att jag kommer", "mail:read", [("social:search", 0.52)], Rule.MAIL_DIALOG_PAIRING, "mail:write"),
    ("ikincisini sil", "doc:list", [("mail:delete", 0.55)], Rule.DOC_DIALOG_PAIRING, "doc:delete"),
    # definite objects without a preposed article: a Nordic definite ending, a Turkish accusative
    ("flytt tannlegen til fredag", "calendar:list", [("agenda:push", 0.55)], Rule.CALENDAR_DIALOG_PAIRING,
     "calendar:update"),
    ("dişçiyi cumaya ertele", "calendar:list", [("agenda:push", 0.55)], Rule.CALENDAR_DIALOG_PAIRING,
     "calendar:update"),
])
def test_dialog_pairing_reads_swedish_danish_norwegian_czech_turkish(text, recent, hits_, rule, first):
    decision = decide(text, hits(*hits_), REGISTRY, recent=[recent])
    assert decision.rule == rule and decision.names[0] == first and decision.kind == "cluster"
    assert not decide(text, hits(*hits_), REGISTRY, recent=["weather:current"]).rule.endswith("_PAIRING")


def test_short_words_of_the_new_languages_point_back_only_in_their_language():
    """Czech "to"/"tu" are English and French words: an anaphor only beside a Czech verb; Norwegian
    "les" is a French article: a reading verb only before its object; Swedish "igen" (again) ends
    like a definite noun but names nothing."""
    from eris_lab.policy import _ANAPHOR_RE, _definite_object_tool, PAIRINGS

    assert _ANAPHOR_RE.search("smaž to") and _ANAPHOR_RE.search("zruš tu schůzku")
    assert not _ANAPHOR_RE.search("go to Berlin") and not _ANAPHOR_RE.search("tu viens demain")
    calendar = next(p for p in PAIRINGS if p.domain == "calendar")
    assert _definite_object_tool(calendar, "flytta tandläkaren till fredag", REGISTRY) == "calendar:update"
    assert _definite_object_tool(calendar, "flytta igen", REGISTRY) == ""
    mail = next(p for p in PAIRINGS if p.domain == "mail")
    assert mail.verb_tool("les den siste e-posten") == "mail:read"
    assert mail.verb_tool("et les autres") == ""


def test_a_named_thing_after_a_listing_is_not_another_tools_thing():
    """"cancel the train" right after calendar:list names a transit tool's thing when the catalogue
    has one (its name words), so it does not pair; "cancel the dentist" does."""
    names = ["calendar:list", "calendar:delete", "calendar:update", "calendar:get"]
    with_train = Catalog.from_names(names + ["transit:train_times"])
    assert decide("cancel the train", [], Catalog.from_names(names), recent=["calendar:list"]).rule == \
        Rule.CALENDAR_DIALOG_PAIRING
    assert decide("cancel the train", [], with_train, recent=["calendar:list"]).rule != Rule.CALENDAR_DIALOG_PAIRING
    assert decide("cancel the dentist", [], with_train, recent=["calendar:list"]).rule == Rule.CALENDAR_DIALOG_PAIRING
    # only right after a listing, and only an acting verb: "show the dentist" reads, it names no listed item
    assert decide("cancel the dentist", [], with_train, recent=["calendar:delete"]).rule != \
        Rule.CALENDAR_DIALOG_PAIRING
    assert decide("show the dentist", [], with_train, recent=["calendar:list"]).rule != Rule.CALENDAR_DIALOG_PAIRING


# -- the uncovered rule: a message whose subject no tool's text holds ---------------------------------

def _bfcl_catalog():
    from eris_lab.catalog import tools_from_json

    functions = [
        {"name": "determine_body_mass_index", "description": "Calculate body mass index given weight and height.",
         "parameters": {"type": "object", "properties": {"weight": {"type": "number", "description": "Weight in kilograms."},
                                                         "height": {"type": "number", "description": "Height in meters."}},
                        "required": ["weight", "height"]}},
        {"name": "duck_duck_go.search", "description": "Search the web with DuckDuckGo.",
         "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}},
        {"name": "HNA_NEWS.search", "description": "Searches for recent events and headlines.",
         "parameters": {"type": "object", "properties": {"keyword": {"type": "string"}}, "required": ["keyword"]}},
        {"name": "event.create", "description": "Create a new event in the calendar.",
         "parameters": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}},
    ]
    return Catalog(tools_from_json(functions, source="test"), source="test")


UNCOVERED = Knobs(uncovered_floor=0.25)


def test_uncovered_reads_the_subject_words_against_the_tools_text():
    from eris_lab.policy import uncovered

    catalog = _bfcl_catalog()
    bmi = ["determine_body_mass_index"]
    # BFCL irrelevance: only request words ("calculate") in common
    assert uncovered("Calculate the area of a triangle with base 10 and height 5.", bmi, catalog) is False  # height
    assert uncovered("Calculate the area of a triangle given its base.", bmi, catalog) is True
    assert uncovered("What is the body mass index of a 70 kg man?", bmi, catalog) is False
    # a web search covers every subject
    assert uncovered("Calculate the area of a triangle given its base.", ["duck_duck_go.search"], catalog) is False
    # "news" as written, in its name too (a subject word would be "new": no open subject)
    assert uncovered("What's happening in China right now?", ["HNA_NEWS.search"], catalog) is False
    assert uncovered("What's happening in China right now?", ["event.create"], catalog) is True
    # another language, another script, or no content word: never uncovered
    assert uncovered("Berechne die Fläche eines Dreiecks", bmi, catalog) is False
    assert uncovered("三角形の面積を計算して", bmi, catalog) is False
    # a lone Greek letter in an English question is no other script (a new user's check)
    assert uncovered("Calculate the area of a circle with radius 2, π = 3.14", bmi, catalog) is True
    assert uncovered("what is it", bmi, catalog) is False


def test_an_uncovered_message_with_a_low_cosine_offers_nothing():
    catalog = _bfcl_catalog()
    text = "Calculate the area of a triangle given its base."
    found = hits(("determine_body_mass_index", 0.97))
    refused = decide(text, found, catalog, knobs=UNCOVERED, top_cosine=0.18)
    assert refused.rule == Rule.NO_TOOL_FITS and refused.names == ()
    assert "no word of the message" in refused.reason and "0.18 is below 0.25" in refused.reason
    # a cosine at the floor, no cosine, the knob off, or a covered message: the policy as before
    for knobs, cosine in ((UNCOVERED, 0.25), (UNCOVERED, None), (Knobs(), 0.18)):
        assert decide(text, found, catalog, knobs=knobs, top_cosine=cosine).rule != Rule.NO_TOOL_FITS
    covered = "What is the body mass index of someone who weighs 70 kg?"
    assert decide(covered, found, catalog, knobs=UNCOVERED, top_cosine=0.18).rule != Rule.NO_TOOL_FITS


def test_question_words_and_vague_nouns_cover_nothing():
    """Round sixteen's variants (2026-12-07): "where" and "place" in a tool's text covered any
    question that asked where a place is."""
    from eris_lab.catalog import tools_from_json
    from eris_lab.policy import uncovered

    catalog = Catalog(tools_from_json([
        {"name": "find_file", "description": "Tell where a file is stored and which place in the tree holds it."},
        {"name": "pin_location", "description": "Drop a pin on the map at a place the user names."},
    ], source="test"), source="test")
    assert uncovered("where is a good place for sushi tonight?", ["find_file"], catalog) is True
    assert uncovered("which thing should I cook for dinner?", ["find_file"], catalog) is True
    # a subject word still covers: "file", "map"
    assert uncovered("where is the config file?", ["find_file"], catalog) is False
    assert uncovered("where on the map is Lisbon?", ["pin_location"], catalog) is False
    # nothing but such words is no subject at all: never uncovered
    assert uncovered("where is that place?", ["find_file"], catalog) is False


def test_an_uncovered_follow_up_is_read_with_its_previous_message():
    """Round sixteen's variants (2026-12-07): "and for a 90 kg one?" after a body mass index
    question names no subject of its own and was refused as uncovered; the previous message's
    subject is what the tools must cover."""
    catalog = _bfcl_catalog()
    found = hits(("determine_body_mass_index", 0.41))
    follow_up = "and for a 90 kg one after that?"
    alone = decide(follow_up, found, catalog, knobs=UNCOVERED, top_cosine=0.18, follow_up=True)
    assert alone.rule == Rule.NO_TOOL_FITS
    kept = decide(follow_up, found, catalog, knobs=UNCOVERED, top_cosine=0.18, follow_up=True,
                  previous="What is the body mass index of a 70 kg man?")
    assert kept.rule != Rule.NO_TOOL_FITS and "determine_body_mass_index" in kept.names
    # a previous message on another subject covers nothing, and a message that is no follow-up
    # is read alone
    other = decide(follow_up, found, catalog, knobs=UNCOVERED, top_cosine=0.18, follow_up=True,
                   previous="Calculate the area of a triangle given its base.")
    assert other.rule == Rule.NO_TOOL_FITS
    standalone = decide("Calculate the area of a triangle given its base.", found, catalog, knobs=UNCOVERED,
                        top_cosine=0.18, previous="What is the body mass index of a 70 kg man?")
    assert standalone.rule == Rule.NO_TOOL_FITS


def test_the_weather_asked_by_a_state_of_it_is_never_refused_beside_a_weather_tool():
    """Round seventeen's variants (2026-12-07): on one-sentence catalogues "is it foggy on the
    motorway to Bristol right now?" was refused by the uncovered rule and "will the roads be icy
    tomorrow?" by the gate, though a weather tool was there."""
    from eris_lab.catalog import tools_from_json
    from eris_lab.policy import asks_the_weather

    tools = [{"name": "get_weather", "description": "Current weather and forecast for a city."},
             {"name": "lock_doors", "description": "Lock all doors of the car."}]
    catalog = Catalog(tools_from_json(tools, source="test"), source="test")
    text = "is it foggy on the motorway to Bristol right now?"
    assert asks_the_weather(text, catalog) is True
    found = hits(("get_weather", 0.45), ("lock_doors", 0.30))
    kept = decide(text, found, catalog, knobs=UNCOVERED, top_cosine=0.21)
    assert kept.rule != Rule.NO_TOOL_FITS and "get_weather" in kept.names
    # no weather tool, or no weather asked: the refusal stands
    no_weather = Catalog(tools_from_json(tools[1:], source="test"), source="test")
    assert asks_the_weather(text, no_weather) is False
    assert decide(text, hits(("lock_doors", 0.30)), no_weather, knobs=UNCOVERED, top_cosine=0.21).rule == Rule.NO_TOOL_FITS
    toll = "how much is the motorway toll to Bristol?"
    assert asks_the_weather(toll, catalog) is False
    assert decide(toll, found, catalog, knobs=UNCOVERED, top_cosine=0.21).rule == Rule.NO_TOOL_FITS


def test_a_yes_no_question_about_a_named_thing_is_an_information_question():
    """Round seventeen's variants (2026-12-07): "is the new Zelda game out yet?" beside a web search
    was refused by the gate; only a wh-word opened an information question."""
    from eris_lab.catalog import tools_from_json
    from eris_lab.policy import open_question

    catalog = Catalog(tools_from_json([{"name": "web_search", "description": "Search the web for a query."}],
                                      source="test"), source="test")
    assert open_question("is the new Zelda game out yet?", catalog) is True
    # round nineteen's variants: whether a thing is safe or allowed is asked of the web too
    assert open_question("is it safe to take paracetamol with alcohol", catalog) is True
    assert open_question("is it done yet", catalog) is False
    assert open_question("is the Louvre open on Tuesdays", catalog) is True  # no question mark (round eighteen)
    assert open_question("is the Louvre still open on Mondays?", catalog) is True
    assert open_question("is it raining?", catalog) is False  # no thing named
    assert open_question("is a tomato a fruit or a vegetable?", catalog) is False  # knowledge, no news (none-010)
    assert open_question("the new Zelda game is out", catalog) is False  # no question


def test_an_information_question_kept_from_refusal_is_offered_the_web_search():
    """Round seventeen, left alone then (2026-12-07): "is the new Zelda game out yet?" on the demo
    catalogue was kept from refusal for ``web:search`` and then offered the clock and calendar
    clusters its low cosines tied, without the search."""
    from eris_lab.catalog import tools_from_json

    tools = [{"name": "web_search", "description": "Search the web for a query."},
             {"name": "set_alarm", "description": "Set an alarm clock."},
             {"name": "list_events", "description": "List calendar events."}]
    catalog = Catalog(tools_from_json(tools, source="test"), source="test")
    found = hits(("set_alarm", 0.21), ("list_events", 0.20), ("web_search", 0.10))
    knobs = Knobs(threshold=0.16, relevance_floor=0.23, relevance_weights=(0.0, 1.0, 0.0, 0.0), uncovered_floor=0.25)
    text = "is the new Zelda game out yet?"
    decision = decide(text, found, catalog, knobs=knobs, relevance=0.12, top_cosine=0.21)
    assert decision.names[:2] == ("set_alarm", "list_events")  # the order of the rest is kept
    assert decision.names[-1] == "web_search" and ("web_search", "web question") in decision.sources
    # a request the gate does not refuse is offered what its cosines give, no search added
    plain = decide("set an alarm for the new Zelda game", found, catalog, knobs=knobs, relevance=0.5, top_cosine=0.21)
    assert "web_search" not in plain.names and not plain.sources
    # an information question the gate lets through is seated the search when the rules are unsure
    # ("why is the sky blue" was offered the two weather tools "sky" pulled; round eighteen) ...
    sky = decide("why is the sky blue", found, catalog, knobs=knobs, relevance=0.5, top_cosine=0.21)
    assert sky.rule == Rule.RANKED_SUBSET and sky.names[-1] == "web_search"
    # ... but a single strong hit stays one tool
    strong = decide("why is the sky blue", hits(("set_alarm", 0.8)), catalog, knobs=knobs, relevance=0.9, top_cosine=0.8)
    assert strong.rule == Rule.SINGLE_STRONG_HIT and strong.names == ("set_alarm",)
    # with nothing to search the web with, the question is refused as before
    no_web = Catalog(tools_from_json(tools[1:], source="test"), source="test")
    assert decide(text, found[:2], no_web, knobs=knobs, relevance=0.12, top_cosine=0.21).rule == Rule.NO_TOOL_FITS


def test_an_information_question_is_seated_one_web_search_the_best_scored():
    """One search answers a question: BFCL's pooled catalogue holds eight, and seating every one
    added 0.3 tools to its mean offer at the same recall (2026-12-07, the session after round
    eighteen). The best-scored search is seated; none when the rules offer one already."""
    from eris_lab.catalog import tools_from_json

    tools = [{"name": "web_search", "description": "Search the web for a query."},
             {"name": "duck_duck_go", "description": "Search the web with DuckDuckGo."},
             {"name": "search_engine_query", "description": "Query a web search engine."},
             {"name": "set_alarm", "description": "Set an alarm clock."},
             {"name": "list_events", "description": "List calendar events."}]
    catalog = Catalog(tools_from_json(tools, source="test"), source="test")
    knobs = Knobs(threshold=0.16, relevance_floor=0.23, relevance_weights=(0.0, 1.0, 0.0, 0.0), uncovered_floor=0.25)
    found = hits(("set_alarm", 0.21), ("list_events", 0.20))
    ranked = hits(("set_alarm", 0.21), ("list_events", 0.20), ("duck_duck_go", 0.12), ("web_search", 0.10))
    sky = decide("why is the sky blue", found, catalog, knobs=knobs, relevance=0.5, top_cosine=0.21, ranked=ranked)
    assert sky.names == ("set_alarm", "list_events", "duck_duck_go")
    assert sky.sources == (("duck_duck_go", "web question"),)
    # unscored searches: the first in catalogue order
    plain = decide("why is the sky blue", found, catalog, knobs=knobs, relevance=0.5, top_cosine=0.21)
    assert plain.names[2:] == ("web_search",)
    # a search the rules chose answers it: no second one
    chosen = decide("why is the sky blue", hits(("set_alarm", 0.21), ("search_engine_query", 0.20)), catalog,
                    knobs=knobs, relevance=0.5, top_cosine=0.21, ranked=ranked)
    assert set(chosen.names) == {"set_alarm", "search_engine_query"} and not chosen.sources


def test_an_idiom_after_lets_asks_for_nothing():
    """Round seventeen (2026-12-07): "let's call it a day" was offered 14 tools: "let's" made it a
    request, so any hit at the threshold counted."""
    from eris_lab.catalog import load
    from eris_lab._files import repo_root

    catalog = load(repo_root() / "descriptors")
    found = hits(("media:pause", 0.40))
    knobs = Knobs(threshold=0.3, single_hit_floor=0.5)
    refused = decide("let's call it a day", found, catalog, knobs=knobs, figurative=True)
    assert refused.rule == Rule.NO_TOOL_FITS
    # a request beside the idiom still asks: the threshold is its floor
    kept = decide("let's call it a day, then pause the music", found, catalog, knobs=knobs, figurative=True)
    assert kept.rule != Rule.NO_TOOL_FITS


def test_a_web_search_written_as_separate_words_covers_every_subject():
    from eris_lab.catalog import tools_from_json
    from eris_lab.policy import uncovered

    # live_multiple_30-10-0: "Duck Duck Go" in the description, duck_duck_go in the name
    catalog = Catalog(tools_from_json([{"name": "duck_duck_go.search", "description": "Performs a search using the "
                                        "Duck Duck Go Search API.", "parameters": {"type": "object", "properties": {}}},
                                       {"name": "duck.pond", "description": "Feed the ducks at the village pond and go home."}],
                                      source="test"), source="test")
    text = "Find information on LangFuse and its application in generative AI projects"
    assert uncovered(text, ["duck_duck_go.search"], catalog) is False
    assert uncovered(text, ["duck.pond"], catalog) is True  # "ducks and go" spell no engine


_THIN_CODE = (("edit_file", "Change code in a file."), ("run_tests", "Run the test suite."),
              ("search_code", "Search the code base."), ("git_log", "Show history of commits for a file."))
_THIN_ASSISTANT = (("send_email", "Send an email."), ("set_alarm", "Set an alarm."), ("play_music", "Play a song."))


def test_a_question_about_goods_is_covered_by_a_tool_that_names_goods():
    """A helper's variants of route-18 (2026-12-05): refused as uncovered beside a shop's search."""
    from eris_lab.policy import uncovered

    catalog = _search_catalog(("search_products", "Search the product catalogue."),
                              ("get_order_status", "Get the status of an order by its id."))
    for text in ("do you sell waterproof hiking boots?", "how much do the red trail runners cost?"):
        assert uncovered(text, catalog.names, catalog) is False
    # the goods must be asked about: the capital of Peru stays uncovered beside the shop
    assert uncovered("what is the capital of Peru?", catalog.names, catalog) is True


@pytest.mark.parametrize("tools, text", [
    (_THIN_CODE, "hey, fix the login bug"),  # route-14
    (_THIN_CODE, "hello! please refactor the payment module"),
    (_THIN_CODE, "yo, patch the memory leak in the cache"),
    (_THIN_CODE, "could you fix the crash in parser.py"),
    (_THIN_ASSISTANT, "hi, tell bob that I'm running late"),
    (_THIN_ASSISTANT, "good morning, put on some jazz"),
])
def test_a_command_beside_thin_tools_is_never_uncovered(tools, text):
    from eris_lab.policy import uncovered

    catalog = _search_catalog(*tools)
    assert uncovered(text, catalog.names, catalog) is False
    # the same tools with a fuller text are judged: the message's words are in none of them
    fuller = _search_catalog(*((n, d + " Works on one repository or mailbox: its owner, settings, branches, labels "
                                   "and folders.") for n, d in tools))
    assert uncovered(text, fuller.names, fuller) is True


@pytest.mark.parametrize("text", ["hi, what's the capital of Peru?", "hey, how are you doing today?",
                                  "the weather is lovely in Lisbon", "is it true that cats sleep all day?"])
def test_a_question_or_statement_beside_thin_tools_is_still_judged(text):
    from eris_lab.policy import uncovered

    catalog = _search_catalog(*_THIN_CODE, *_THIN_ASSISTANT)
    assert uncovered(text, catalog.names, catalog) is True


@pytest.mark.parametrize("text, command", [
    ("fix the login bug", True), ("Hey there, please debug the signup form", True),
    ("Could you refactor the payment module?", True), ("ok so rerun the tests", True),
    ("how are you?", False), ("What's the capital of Peru?", False), ("I think the build is red", False),
    ("the build is red", False), ("Is it raining?", False), ("hey", False), ("", False), ("42 apples", False),
])
def test_is_command_reads_an_imperative_after_a_greeting_and_please(text, command):
    from eris_lab.policy import _is_command

    assert _is_command(text) is command


def _search_catalog(*tools):
    from eris_lab.catalog import tools_from_json

    return Catalog(tools_from_json([{"name": n, "description": d} for n, d in tools], source="test"), source="test")


@pytest.mark.parametrize("name, description, web", [
    ("HNA_WQA.search", "Retrieve up-to-date information by searching the web using keywords.", True),
    ("duck_duck_go.search", "Performs a search using the Duck Duck Go Search API.", True),
    ("GoogleSearch", "Search Google for a query.", True),
    ("search_web_tool", "Search the web.", True),
    ("search_for_sea_pictures", "Searches the web for pictures of the sea.", False),  # its name names a subject
    ("HNA_NEWS.search", "Searches for recent events and news based on the keyword.", False),  # news, not the web
    ("requests.get", "Sends a GET request to a web address.", False),  # no search
])
def test_which_tools_search_the_web_on_any_subject(name, description, web):
    from eris_lab.policy import open_question

    catalog = _search_catalog((name, description), ("cookbook.search_recipe", "Searches for cooking recipes."))
    assert open_question("who is park ji sung", catalog) is web


@pytest.mark.parametrize("text, asks", [
    ("what is Imjin war", True),  # live_multiple_9-4-1
    ("who is ji sung park?", True),
    ("Can you tell me who won the 2022 world cup?", True),
    ("what is your name?", False),  # about the assistant
    ("how are you?", False),  # no content word
    ("what are the tools u know for booking flights", False),
    ("How many legs do 10 dogs and 2 monkeys have?", False),  # a computation over its numbers
    ("Search for Imjin war", False),  # no question: the cosines decide
    ("what a lovely chat, have a good evening", False),  # an exclamation (round eighteen: seated the search)
    ("how kind of you to help", False),
])
def test_an_information_question_beside_a_web_search_is_never_refused(text, asks):
    from eris_lab.policy import open_question

    catalog = _search_catalog(("HNA_WQA.search", "Retrieve information by searching the web."),
                              ("ControlAppliance.execute", "Control a home appliance."))
    assert open_question(text, catalog) is asks
    found = hits(("ControlAppliance.execute", 0.20), ("HNA_WQA.search", 0.14))
    knobs = Knobs(relevance_floor=0.23, relevance_weights=(0.0, 1.0, 0.0, 0.0), uncovered_floor=0.25)
    decision = decide(text, found, catalog, knobs=knobs, relevance=0.12, top_cosine=0.14)
    assert (decision.kind != "conversational") is asks  # refused, or met as conversation


def test_uncovered_floor_is_a_cosine_knob():
    from eris_lab.errors import KnobsError

    with pytest.raises(KnobsError, match="uncovered_floor"):
        Knobs(uncovered_floor=1.5)
    with pytest.raises(KnobsError, match="uncovered_floor"):
        Knobs(uncovered_floor=-0.1)


def test_the_gate_never_refuses_a_message_holding_a_declared_keyword():
    from eris_lab.catalog import tools_from_json
    from eris_lab.policy import names_declared_keyword

    catalog = Catalog(tools_from_json([
        {"name": "memory:stage", "description": "Stage a fact about the user.", "keywords": ["remember", "keep in mind"]},
        {"name": "vault:write", "description": "Write a note.", "keywords": ["note"]},
        {"name": "clock:now", "description": "The current time."},
    ], source="test"), source="test")
    for text in ("remember that my car is a blue Golf", "Keep in mind that I'm allergic to penicillin",
                 "make a note: the wifi password is on the router"):
        assert names_declared_keyword(text, catalog)
        decision = decide(text, hits(("memory:stage", 0.3)), catalog, knobs=GATED, relevance=0.1)
        assert decision.rule != Rule.NO_TOOL_FITS, decision.reason
    # a keyword inside another word, a name word, or no keyword: the gate judges
    for text in ("the notebook is on the desk by the window", "what time is it in the evening there",
                 "remembering names is hard for me"):
        assert not names_declared_keyword(text, catalog)
        decision = decide(text, hits(("memory:stage", 0.3)), catalog, knobs=GATED, relevance=0.1)
        assert decision.rule == Rule.NO_TOOL_FITS


@pytest.mark.parametrize("text, named", [
    ("remeber that i hate olives", True), ("rememebr my shoe size is 43", True), ("rember this", False),  # two edits
    ("please remembers it", True), ("members only", False), ("a note for later", True), ("a nose for later", False),
])
def test_a_long_declared_keyword_is_read_through_one_typo(text, named):
    from eris_lab.catalog import tools_from_json
    from eris_lab.policy import names_declared_keyword

    catalog = Catalog(tools_from_json([{"name": "memory:stage", "description": "Stage a fact.", "keywords": ["remember"]},
                                       {"name": "vault:write", "description": "Write a note.", "keywords": ["note"]}],
                                      source="test"), source="test")
    assert names_declared_keyword(text, catalog) is named


@pytest.mark.parametrize("text, repeat", [
    ("do that again", True), ("Do it again, please!", True), ("same again", True), ("once more", True),
    ("ok, one more time", True), ("nochmal bitte", True), ("mach das noch einmal", True), ("repeat that", True),
    ("do that again for Berlin", False), ("again the weather is bad", False), ("set a timer again for 5 minutes", False),
])
def test_repeat_re_reads_a_message_that_only_asks_to_repeat(text, repeat):
    from eris_lab.policy import REPEAT_RE

    assert bool(REPEAT_RE.match(text)) is repeat


def test_a_repeat_puts_the_last_turns_tools_first_of_any_family():
    from eris_lab.policy import with_memory

    from eris_lab.policy import Decision

    calibrated = Knobs(subset_margin=0.1)
    offered = Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("media:play", "media:pause", "mail:write"),
                       reason="3 hits")
    again = with_memory(offered, ["clock:timer"], [], WIDE, calibrated, repeat=True)
    assert again.names[0] == "clock:timer" and set(offered.names) < set(again.names)
    assert ("clock:timer", "memory") in again.sources and "a repeat of the last turn" in again.reason
    # not a repeat: another family's tool stays out unless it scores
    assert "clock:timer" not in with_memory(offered, ["clock:timer"], [], WIDE, calibrated).names


@pytest.mark.parametrize("text, last, rule, first", [
    ("please remove the dentist reminder from my agenda", "agenda:list", Rule.AGENDA_DIALOG_PAIRING, "agenda:remove"),
    ("please move the dentist meeting to 4pm", "calendar:list", Rule.CALENDAR_DIALOG_PAIRING, "calendar:update"),
    ("please read the first email", "mail:check", Rule.MAIL_DIALOG_PAIRING, "mail:read"),
    ("open the second document", "doc:list", Rule.DOC_DIALOG_PAIRING, "doc:read"),
])
def test_right_after_a_listing_a_named_item_pairs_without_an_anaphor(text, last, rule, first):
    d = decide(text, hits(("doc:delete", 0.56), ("mail:delete", 0.53)), REGISTRY, recent=[last])
    assert d.rule == rule and d.names[0] == first and d.kind == "cluster" and len(d.names) > 1


def test_without_an_anaphor_only_the_last_listing_pairs():
    # the agenda was listed two tools ago; the mail check came last: no agenda pairing without "it"
    d = decide("please remove the dentist reminder from my agenda", hits(("doc:delete", 0.56)), REGISTRY,
               recent=["agenda:list", "mail:check"])
    assert d.rule != Rule.AGENDA_DIALOG_PAIRING
    # a write tool last is no listing
    d = decide("please remove the dentist reminder from my agenda", hits(("doc:delete", 0.56)), REGISTRY,
               recent=["agenda:remind_at"])
    assert d.rule != Rule.AGENDA_DIALOG_PAIRING


@pytest.mark.parametrize("text, last, first", [
    # a tester's families (2026-12-05), in other words than policy_variants.json: done, moved,
    # called off, attendees, a question about the item; English, German, French
    ("tick it off", "agenda:list", "agenda:complete"),
    ("mark that one as finished", "agenda:list", "agenda:complete"),
    ("cross out the bread one", "agenda:list", "agenda:complete"),
    ("hak ihn bitte ab", "agenda:list", "agenda:complete"),
    ("bump it to next week", "agenda:list", "agenda:push"),
    ("how about 9 instead?", "agenda:remind_at", "agenda:push"),
    ("reschedule the dentist one for 5", "calendar:list", "calendar:update"),
    ("décale-le à mardi", "calendar:list", "calendar:update"),
    ("verschieb ihn auf Freitag", "calendar:list", "calendar:update"),
    ("drop my 10:30", "calendar:list", "calendar:delete"),
    ("sag ihn ab", "calendar:list", "calendar:delete"),
    ("annule-la", "calendar:create", "calendar:delete"),
    ("put Tom on the invite", "calendar:list", "calendar:update"),
    ("include Sarah as well", "calendar:create", "calendar:update"),
    ("where's that one?", "calendar:list", "calendar:get"),
    ("what room is it in?", "calendar:create", "calendar:get"),
    ("qui vient ?", "calendar:list", "calendar:get"),
    ("what's left?", "agenda:list", "agenda:list"),
    ("who is that one from?", "mail:check", "mail:read"),
    ("delete it", "doc:ingest", "doc:delete"),
    ("call it off", "calendar:update", "calendar:delete"),
    # round nineteen (2026-12-07): a passive, "strike", "get shot of", "shove", a colloquial German
    # "schieb"; each was the whole roster beside one weak wrong hit
    ("that one can be binned", "mail:check", "mail:delete"),
    ("strike the fourth one", "agenda:list", "agenda:remove"),
    ("get shot of the Tuesday one", "calendar:list", "calendar:delete"),
    ("shove the newsletter into the promotions folder", "mail:check", "mail:move"),
    ("Schieb das zweite auf nächste Woche", "agenda:list", "agenda:push"),
])
def test_a_follow_up_on_the_item_just_listed_or_made_pairs_with_its_verb(text, last, first):
    d = decide(text, hits(("clock:alarm", 0.55)), REGISTRY, recent=["clock:now", last])
    assert d.rule.endswith("DIALOG_PAIRING") and d.names[0] == first and d.kind == "cluster" and len(d.names) > 1


@pytest.mark.parametrize("text, recent", [
    ("what's the weather in Oslo", ["calendar:create"]),
    ("set an alarm for 7 instead", ["agenda:remind_at"]),
    ("move that alarm to 7", ["calendar:create"]),  # another domain's thing
    ("delete that email", ["calendar:create"]),  # another pairing domain's thing
    ("when is it going to rain", ["calendar:create"]),
    ("remove it", ["calendar:delete"]),  # a delete leaves no item
    ("cross the road", []),
    ("cross the street and then turn off the light", ["agenda:list"]),
    ("check out the recipe", ["agenda:list"]),
    ("ok done", ["agenda:list"]),  # a bare "done" closes a conversation too
    ("invite Anna to dinner on Friday at our place", ["calendar:list"]),
    ("I think I will push it to the limit at the gym today and then cancel my plans", ["calendar:create"]),
])
def test_a_follow_up_about_something_else_never_pairs(text, recent):
    d = decide(text, hits(("clock:alarm", 0.55)), REGISTRY, recent=recent)
    assert not d.rule.endswith("DIALOG_PAIRING")


def test_a_verb_the_domain_lacks_pairs_with_its_cluster_in_catalogue_order():
    small = Catalog.from_names(["agenda:list", "agenda:remove", "agenda:complete", "calendar:list", "calendar:update"])
    d = decide("actually make it 8 instead", [], small, recent=["agenda:list"])
    assert d.rule == Rule.AGENDA_DIALOG_PAIRING and d.names == small.cluster("agenda")


# ---------------------------------------------------------------------------------------------
# Action order: the tool that does what the imperative asks for goes first (bad-inputs #30)
# ---------------------------------------------------------------------------------------------

from eris_lab.policy import ACTION_ORDER_SLACK, action_order, requested_action  # noqa: E402


@pytest.mark.parametrize("text, action", [
    ("add a calendar entry for friday at 3", "create"),
    ("please create a new event", "create"),
    ("hey, could you put the dentist on my calendar", "create"),
    ("Reschedule the standup to 10", "update"),
    ("can you cancel my 3pm", "delete"),
    ("email alice that the meeting moved to 3pm", ""),  # "moved" is no opening imperative
    ("what meetings do I have today", ""),
    ("show my calendar", ""),  # reads are no action: they open requests of every kind
    ("", ""),
    # a follow-up's "then", "also" or "now" stands before the verb as "please" does (one filler set,
    # guard.LEADING_FILLER_RE, since the clauses' and the policy's readers were merged)
    ("then delete the second one", "delete"),
    ("ok now cancel it", "delete"),
    ("also remove the reminder", "delete"),
])
def test_requested_action_reads_only_the_opening_imperative(text, action):
    assert requested_action(text) == action


def test_action_order_moves_the_tool_that_does_it_past_near_ties_of_its_domain():
    scores = {"calendar:list": 0.54, "calendar:create": 0.47, "agenda:remind_at": 0.47, "calendar:delete": 0.37}
    names, moved = action_order(list(scores), "add a calendar entry for friday at 3", scores)
    assert names == ("calendar:create", "calendar:list", "agenda:remind_at", "calendar:delete")
    assert moved == ("calendar:create",)
    # the set never changes, and a clear lead stays in front
    lead = dict(scores, **{"calendar:list": 0.47 + ACTION_ORDER_SLACK + 0.01})
    assert action_order(list(lead), "add a calendar entry", lead) == (tuple(lead), ())
    # another domain is not passed over: agenda:push stays first
    other = {"agenda:push": 0.6, "calendar:list": 0.55, "calendar:create": 0.5}
    assert action_order(list(other), "create an event", other)[0] == ("agenda:push", "calendar:create", "calendar:list")
    # no action verb, or the first tool already does it: unchanged
    assert action_order(list(scores), "what is on friday", scores) == (tuple(scores), ())
    done = {"calendar:create": 0.5, "calendar:list": 0.49}
    assert action_order(list(done), "add an event", done) == (tuple(done), ())


def test_a_widening_leaves_out_a_countdown_the_message_names_no_duration_for():
    """Reported case route-27's kind: a timer counts down a duration; "nudge me Friday to water the
    plants" names none, so neither the whole small roster nor a bounded widening offers it."""
    small = Catalog.from_names(["clock:timer", "agenda:remind_at", "clock:alarm"])
    unsure = decide("nudge me Friday to water the plants", [], small, knobs=RANKED)
    assert unsure.rule == Rule.UNSURE_RANKED and unsure.kind == "subset"
    assert unsure.names == ("agenda:remind_at", "clock:alarm") and "countdown" in unsure.reason
    timed = decide("ping me in 10 minutes", [], small, knobs=RANKED)
    assert timed.kind == "full_roster" and "clock:timer" in timed.names
    ranked = hits(("clock:timer", 0.3), ("clock:alarm", 0.29), ("web:search", 0.28))
    wide = decide("something about the morning routine on Friday", [], WIDE, knobs=RANKED, ranked=ranked)
    assert "clock:timer" not in wide.names and "clock:alarm" in wide.names
    reference = decide("nudge me Friday to water the plants", [], small)  # the reference fallback: whole roster
    assert reference.kind == "full_roster" and reference.names == small.names


@pytest.mark.parametrize("text, recent, first", [
    ("could u pls remvoe the 3rd", "agenda:list", "agenda:remove"),  # round seventeen, left alone then
    ("plz delte the second one", "mail:check", "mail:delete"),
    ("cancle the 2nd", "calendar:list", "calendar:delete"),
    ("pls mark the first one as dnoe", "agenda:list", "agenda:complete"),
    ("mvoe it to the archive", "mail:read", "mail:move"),
])
def test_a_mistyped_verb_in_a_follow_up_is_read_by_the_pairing(text, recent, first):
    """The router fixes a typo only to the catalogue's words, and the pairing read the message as
    written: "could u pls remvoe the 3rd" after a listing paired with no verb (the listing first)."""
    from eris_lab.catalog import load
    from eris_lab._files import repo_root

    catalog = load(repo_root() / "descriptors")
    decision = decide(text, hits(), catalog, recent=(recent,), knobs=Knobs())
    assert decision.names[0] == first, decision.reason
    # an English word one letter off a pairing word is left as written: "remote" is no "remove"
    assert _pairing_reads("could u pls remote the 3rd") == "could u pls remote the 3rd"
    # nor is a word that starts with one of its stems: "reporte-la" is French ("report" is a stem)
    assert _pairing_reads("reporte-la à demain") == "reporte-la à demain"
    # nor a message in another language: "poista" (Finnish, delete) is no typo of "posta"
    assert _pairing_reads("poista tämä muistutus") == "poista tämä muistutus"


def _pairing_reads(text):
    from eris_lab.policy import pairing_spelling

    return pairing_spelling(text)


# -- a follow-up on an item a plain catalogue's listing tool listed (round nineteen, 2026-12-07) --

_DEVOPS = [{"name": "list_tickets", "description": "List tickets assigned to the user or matching a filter."},
           {"name": "create_ticket", "description": "Open an issue ticket in the tracker with a title."},
           {"name": "update_ticket", "description": "Change a ticket's status, assignee or priority."},
           {"name": "list_alerts", "description": "List the monitoring alerts that are firing."},
           {"name": "acknowledge_alert", "description": "Acknowledge a firing alert so it stops paging."},
           {"name": "merge_pull_request", "description": "Merge an open pull request."},
           {"name": "git_checkout", "description": "Switch to another branch."},
           {"name": "restart_service", "description": "Restart a running service."}]


def test_listed_siblings_share_the_listings_head_noun():
    from eris_lab.catalog import tools_from_json
    from eris_lab.policy import listed_siblings

    catalog = Catalog(tools_from_json(_DEVOPS, source="test"), source="test")
    assert listed_siblings("list_tickets", catalog) == ("list_tickets", "create_ticket", "update_ticket")
    assert listed_siblings("list_alerts", catalog) == ("list_alerts", "acknowledge_alert")
    assert listed_siblings("restart_service", catalog) == ()  # only itself holds "service"
    assert listed_siblings("agenda:list", REGISTRY)[0].startswith("agenda:")


@pytest.mark.parametrize("text, last, first", [
    ("close the first one", "list_tickets", "update_ticket"),  # cosines led merge_pull_request
    ("ack the disk one", "list_alerts", "acknowledge_alert"),  # cosines led the tickets
])
def test_a_follow_up_on_a_listed_item_seats_the_items_tools(text, last, first):
    """Round nineteen's variants on a devops catalogue: a plain catalogue has no dialog pairing, and
    the follow-up's verb alone ranked another domain's tools first."""
    from eris_lab.catalog import tools_from_json
    from eris_lab.policy import Decision, with_listing

    catalog = Catalog(tools_from_json(_DEVOPS, source="test"), source="test")
    before = Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("merge_pull_request", "git_checkout",
                                                                     "restart_service"), reason="r")
    ranked = hits(("merge_pull_request", 0.3), ("git_checkout", 0.25), ("update_ticket", 0.2),
                  ("acknowledge_alert", 0.18), ("restart_service", 0.15))
    after = with_listing(before, text, [last], catalog, ranked)
    assert first in after.names[:2] and len(after.names) == 3
    assert all(n in dict(after.sources) for n in after.names if n not in before.names)
    # no listing last, no item named, a long message, or the gate's refusal: unchanged
    assert with_listing(before, text, ["restart_service"], catalog, ranked) == before
    assert with_listing(before, "restart the payment service in staging", [last], catalog, ranked) == before
    assert with_listing(before, f"{text} and then tell me how the deploy of the week went", [last],
                        catalog, ranked) == before
    assert after.rule == Rule.LISTING_FOLLOW_UP
    # the gate's refusal of a command is overruled (alone, "close the first one" scores like chit-chat);
    # of a remark it is not
    nothing = Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=(), reason="r")
    assert first in with_listing(nothing, text, [last], catalog, ranked).names
    assert with_listing(nothing, "that one is great", [last], catalog, ranked) == nothing
