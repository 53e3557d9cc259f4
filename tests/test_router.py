"""Router: guards, scoring, the handed routing cases with the real embedder, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from eris_lab.catalog import Catalog, Tool, routing_phrases, tools_from_json
from eris_lab.embed import SentenceTransformerEmbedder, VectorCache
from eris_lab.errors import CatalogError
from eris_lab.knobs import Knobs
from eris_lab.policy import Hit, Rule
from eris_lab.router import Router, kept_hits, top_scores

from conftest import load_cases

ROUTING = load_cases("routing_cases.json")


@pytest.fixture(scope="module")
def real_embedder():
    return SentenceTransformerEmbedder()


@pytest.mark.parametrize("case", ROUTING["cases"], ids=[c["id"] for c in ROUTING["cases"]])
def test_routing_case_with_real_embedder(case, real_embedder):
    catalog = Catalog(tools_from_json(case["tools"]))
    routed = Router(catalog, real_embedder).route(case["query"], history=case.get("history", []))
    offered = routed.offer.names
    if case.get("expected_offer_empty"):
        assert offered == ()
    for name in case.get("expected_offer_contains", []):
        assert name in offered, routed.decision.reason
    if case.get("expected_offer_excludes"):
        assert routed.decision.kind != "full_roster", routed.decision.reason
        for name in case["expected_offer_excludes"]:
            assert name not in offered


@pytest.mark.parametrize("text", ["", "   ", "\n", "\t\r\n"])
def test_route_empty_input_is_conversation_without_embedding(text, fake_embedder):
    catalog = Catalog.from_names(["weather:current", "clock:now"])
    routed = Router(catalog, fake_embedder).route(text)
    assert routed.decision.rule == Rule.CONVERSATIONAL and routed.offer.names == ()
    assert fake_embedder.calls == 0


def test_route_url_forces_fetch_at_one(fake_embedder):
    catalog = Catalog.from_names(["web:fetch", "web:find", "web:search", "clock:now"])
    routed = Router(catalog, fake_embedder).route("Open https://example.org/changelog and summarise the page")
    assert routed.hits[0].name == "web:fetch" and routed.hits[0].score == 1.0
    assert routed.offer.names[:2] == ("web:fetch", "web:find")


def test_route_page_phrase_forces_fetch_but_bare_open_does_not(fake_embedder):
    catalog = Catalog.from_names(["web:fetch", "clock:now"])
    router = Router(catalog, fake_embedder)
    assert router.route("please open the page you found before").hits[0].name == "web:fetch"
    assert all(h.score < 1.0 for h in router.route("you will open the way for all of us").hits)


def test_route_file_names_are_not_urls(fake_embedder):
    catalog = Catalog.from_names(["web:fetch", "vault:read"])
    routed = Router(catalog, fake_embedder).route("read notes/today.md and test.txt from my vault")
    assert all(h.score < 1.0 for h in routed.hits)


def test_route_domain_floor_drops_weak_hits_unless_domain_named(fake_embedder):
    catalog = Catalog.from_names(["weather:current", "clock:now"])
    text = "weather current please tell"
    base = Router(catalog, fake_embedder, knobs=Knobs(threshold=0.1)).route(text)
    assert "weather:current" in [h.name for h in base.hits]
    floored = Router(catalog, fake_embedder, knobs=Knobs(threshold=0.1, domain_floors={"weather": 0.99})).route(
        "current please tell me now")
    assert "weather:current" not in [h.name for h in floored.hits]
    named = Router(catalog, fake_embedder, knobs=Knobs(threshold=0.1, domain_floors={"weather": 0.99})).route(text)
    assert "weather:current" in [h.name for h in named.hits]


def test_route_huge_and_odd_input_never_raises(fake_embedder):
    catalog = Catalog.from_names(["weather:current", "clock:now"])
    router = Router(catalog, fake_embedder)
    routed = router.route("weather " * 200_000)  # about 1.6 MB
    assert len(routed.text) == Knobs().max_query_chars
    routed = router.route("wetter\x00\x07 in Köln 天気 погода 🌧️ weather")
    assert "\x00" not in routed.text and routed.decision.rule in set(Rule)


def test_router_rejects_an_empty_catalogue(fake_embedder):
    with pytest.raises(CatalogError, match="the catalogue has no tools"):
        Router(Catalog([]), fake_embedder)


def test_router_one_tool_catalogue(fake_embedder):
    catalog = Catalog([Tool(name="clock:now", description="current time in a time zone")])
    routed = Router(catalog, fake_embedder).route("what is the current time in a time zone please")
    assert routed.offer.names == ("clock:now",)


def test_route_json_record_has_contract_keys(fake_embedder):
    catalog = Catalog.from_names(["weather:current", "clock:now"])
    record = Router(catalog, fake_embedder).route("weather current in Berlin please").to_json()
    assert {"hits", "decision", "offered", "timings_ms"} <= set(record)
    assert {"rule", "kind", "names"} <= set(record["decision"])
    assert {"embed", "score", "policy", "total"} <= set(record["timings_ms"])


def test_tool_vectors_are_cached_on_disk(fake_embedder, tmp_path):
    catalog = Catalog.from_names(["weather:current", "clock:now", "mail:read"])
    cache = VectorCache(fake_embedder, tmp_path / "vec")
    first = Router(catalog, fake_embedder, cache=cache).tool_vectors
    assert cache.misses == len({p for t in catalog for p in routing_phrases(t)})
    calls = fake_embedder.texts_embedded
    second = Router(catalog, fake_embedder, cache=VectorCache(fake_embedder, tmp_path / "vec")).tool_vectors
    assert fake_embedder.texts_embedded == calls  # a warm start embeds nothing
    np.testing.assert_array_equal(first, second)
    bigger = Catalog.from_names(["weather:current", "clock:now", "mail:read", "news:today"])
    store = VectorCache(fake_embedder, tmp_path / "vec")
    Router(bigger, fake_embedder, cache=store).tool_vectors
    assert store.misses == len(routing_phrases(bigger.tool("news:today")))  # only the new tool's phrases


def test_vector_cache_rebuilds_a_corrupt_file(fake_embedder, tmp_path):
    store = VectorCache(fake_embedder, tmp_path)
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_bytes(b"not an npz")
    assert store.embed(["a b", "c"]).shape == (2, fake_embedder.dim)


def test_top_scores_sorted_descending():
    scores = np.array([0.1, 0.9, 0.5, 0.7], dtype=np.float32)
    idx, vals = top_scores(scores, 3)
    assert idx.tolist() == [1, 3, 2] and vals.tolist() == pytest.approx([0.9, 0.7, 0.5])


def test_calibration_auto_applies_only_without_routing_hints(fake_embedder):
    bare = Catalog([Tool(name="get_weather", description="weather forecast")])
    hinted = Catalog([Tool(name="weather:current", description="weather", routing_hints=("is it raining",))])
    assert Router(bare, fake_embedder).calibrated
    assert not Router(hinted, fake_embedder).calibrated
    assert not Router(bare, fake_embedder, knobs=Knobs(calibration="none")).calibrated


def test_calibrated_scores_never_look_forced(fake_embedder):
    catalog = Catalog([Tool(name="get_weather", description="weather forecast"),
                       Tool(name="set_timer", description="countdown timer minutes")])
    router = Router(catalog, fake_embedder)
    scores = router.scores(["weather forecast"])
    assert scores.max() <= 0.98


def test_short_follow_up_after_a_user_turn_is_routed_not_conversation(fake_embedder):
    catalog = Catalog([Tool(name="weather:forecast", description="weather forecast tomorrow rain"),
                       Tool(name="clock:now", description="current time zone")])
    router = Router(catalog, fake_embedder, knobs=Knobs(threshold=0.3, single_hit_floor=0.3))
    alone = router.route("and tomorrow?")
    assert alone.decision.rule == Rule.CONVERSATIONAL
    history = [{"role": "user", "content": "weather forecast in Rome"}, {"role": "tool_used", "name": "weather:forecast"}]
    followed = router.route("and tomorrow?", history=history)
    assert "weather:forecast" in followed.offer.names and followed.decision.rule != Rule.CONVERSATIONAL
    assert router.route("thanks!", history=history).decision.rule == Rule.CONVERSATIONAL


def test_embed_tools_is_the_mean_of_phrase_vectors(fake_embedder):
    from eris_lab.catalog import routing_phrases
    from eris_lab.embed import normalize_rows
    from eris_lab.router import embed_tools

    tool = Tool(name="weather:current", description="x", short_description="Weather now.",
                routing_hints=("is it raining", "how warm is it"))
    vectors = embed_tools(Catalog([tool]), fake_embedder.embed)
    phrases = fake_embedder.embed(list(routing_phrases(tool)))
    np.testing.assert_allclose(vectors[0], normalize_rows(phrases.mean(axis=0, keepdims=True))[0], rtol=1e-5)


def test_kept_hits_applies_threshold_then_domain_floors():
    hits = [Hit(name="web:fetch", score=1.0), Hit(name="mail:check", score=0.62), Hit(name="news:today", score=0.55),
            Hit(name="clock:now", score=0.49)]
    knobs = Knobs(threshold=0.5, domain_floors={"mail": 0.7, "web": 1.0})
    # mail:check is under its floor; the forced web:fetch never is; clock:now is under the threshold
    assert [h.name for h in kept_hits(hits, "anything new today", knobs)] == ["web:fetch", "news:today"]
    # a message that names the domain lifts its floor
    assert [h.name for h in kept_hits(hits, "check my mail", knobs)] == ["web:fetch", "mail:check", "news:today"]
