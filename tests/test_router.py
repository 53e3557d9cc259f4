"""Router: guards, scoring, the handed routing cases with the real embedder, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from eris_lab.catalog import Catalog, Tool, routing_phrases, tools_from_json
from eris_lab.embed import SentenceTransformerEmbedder, VectorCache
from eris_lab.errors import CatalogError
from eris_lab.knobs import Knobs
from eris_lab.policy import Hit, Rule
from eris_lab.router import Router, gloss_german, kept_hits, rank_catch_all_last, top_scores

from conftest import load_cases

ROUTING = load_cases("routing_cases.json")
VARIANTS = load_cases("routing_variants.json")


@pytest.fixture(scope="module")
def real_embedder():
    return SentenceTransformerEmbedder()


@pytest.mark.parametrize("knobs", ["reference", "calibrated"])
@pytest.mark.parametrize("case", ROUTING["cases"], ids=[c["id"] for c in ROUTING["cases"]])
def test_routing_case_with_real_embedder(case, knobs, real_embedder):
    """Each handed case under the Router's reference knobs and under the catalogue's calibrated
    knobs, which ``eris-lab route`` uses by default (route-14 failed only under the latter)."""
    catalog = Catalog(tools_from_json(case["tools"]))
    router = (Router(catalog, real_embedder) if knobs == "reference"
              else Router.with_calibrated_knobs(catalog, real_embedder))
    _check_case(case, router.route(case["query"], history=case.get("history", [])))


def _check_case(case, routed) -> None:
    """A routing case's expectations (routing_cases.json's fields) against what was routed."""
    offered = routed.offer.names
    if case.get("expected_offer_empty"):
        assert offered == (), routed.decision.reason
    for name in case.get("expected_offer_contains", []):
        assert name in offered, routed.decision.reason
    if case.get("expected_offer_first"):
        assert offered[:1] == (case["expected_offer_first"],), (offered, routed.decision.reason)
    if case.get("expected_offer_excludes"):
        assert routed.decision.kind != "full_roster", routed.decision.reason
        for name in case["expected_offer_excludes"]:
            assert name not in offered


@pytest.mark.parametrize("case", VARIANTS["cases"], ids=[c["id"] for c in VARIANTS["cases"]])
def test_routing_variant_of_a_handed_case(case, real_embedder):
    """Variants of the handed cases, of the same kinds, under the calibrated knobs ``route`` uses:
    other languages (route-08, -10), reminders without a duration (route-27), greetings and small
    talk in front of a request (route-14), thanks and requests for writing (route-20), "never mind"
    after a failed call (route-23), chat spellings and "extra ones" (route-03)."""
    catalog = Catalog(tools_from_json(case["tools"]))
    _check_case(case, Router.with_calibrated_knobs(catalog, real_embedder).route(case["query"],
                                                                                history=case.get("history", [])))


@pytest.mark.parametrize("text, contains, excludes", [
    # bad input row 30: the calendar clause's "put" asks for calendar:create, 0.09 below calendar:list
    ("Check my mail, put a dentist appointment on my calendar for Friday at 3, set an alarm for 7, tell me the "
     "weather in Berlin, convert 100 dollars to euros and read notes/today.md",
     ["mail:check", "calendar:create", "clock:alarm", "weather:current", "calc:convert", "vault:read"], []),
    # a greeting is no further request: it added mail:check and memory tools
    ("hi there, set an alarm for 6", ["clock:alarm"], ["mail:check", "mail:digest"]),
    ("hello there, what's the weather in Rome?", ["weather:current"], ["memory:stage", "memory:query"]),
    ("Wie geht es dir heute so?", [], None),
    # a greeting in front is no subject: "morning" ranked clock:alarm first and seated the clock domain
    ("morning, add milk to my shopping list", ["agenda:remind_self"], ["clock:alarm", "clock:timer"]),
    # text handed over pulls no tool of its own (a helper's variants of the quoted-payload cases, 2026-12-05):
    # clock:alarm was first and three calendar tools offered, mail:write fifth
    ('email Bob: "set an alarm for 7 and cancel my meetings"', ["mail:write"],
     ["clock:alarm", "calendar:delete", "calendar:update"]),
    ('email bob@example.org saying "set an alarm for 7 and cancel my meetings"', ["mail:write"], ["clock:alarm"]),
    ("what does 'delete all my emails' mean in German?", [], ["mail:delete"]),
    # a helper's variants of route-20, third stop of 2026-12-05: each was offered 2 to 14 tools
    ("thanks for the help with the calendar earlier!", [], None),
    ("summarize this paragraph: The meeting was moved to Friday because the room was booked.", [], None),
    ("what rhymes with timer?", [], None),
    ("let's play twenty questions", [], None),
    ("wish me luck for my exam tomorrow", [], None),
    # route-10 and route-26 kinds: an existence question about one's own items, a local file loaded
    ("do I already have a reminder for the dentist?", ["agenda:list"], []),
    ("read notes/today.md", ["vault:read"], ["web:fetch"]),
    # route-27's kind through a seated cluster (a helper's variant, 2026-12-05): the near-tie of
    # clock:alarm and agenda:remind_at seated clock:timer with the clock cluster
    ("remind me at 7:45 to take out the trash", ["agenda:remind_at"], ["clock:timer"]),
    # route-20's kind, chit-chat in French (a helper's variant, 2026-12-05)
    ("Raconte-moi une blague", [], None),
    # round twelve (2026-12-06, night): "weer" was fixed to "week" and the calendar led; a remark
    # about the assistant was offered 14 tools; "15 minuts" named no duration and the timer was cut
    ("wat voor weer wordt het morgen in Utrecht", ["weather:forecast"], ["calendar:list", "calendar:get"]),
    ("You're a lifesaver!", [], None),
    ("set a timr for 15 minuts", ["clock:timer"], []),  # passed before here (the cluster seated it): a guard
    # round thirteen (the same night): Dutch "is" made this English, "weer" was fixed to "week";
    # "you've been" and an adverb in -ly
    ("Wat voor weer is het vandaag in Gent?", ["weather:current", "weather:forecast"], []),
    ("You've been so helpful today", [], None),
    # round fourteen (2026-12-07): Turkish "hava" was fixed to "have" and the memory tools led; a
    # three-word Swedish request was conversation; a URL to keep in the document store demoted the
    # store; "what time is it there?" was read as pointing back and the clock left out; "rather
    # than a timer" led with the timer; a message that only vents got fourteen tools
    ("Hava yarın nasıl olacak?", ["weather:forecast"], []),
    ("Yarın İstanbul'da hava nasıl olacak?", ["weather:forecast"], []),
    ("Spela lite jazz", ["media:play"], []),
    ("save www.example.org/guide.pdf into my documents", ["doc:ingest", "web:fetch"], []),
    ("what's the weather in Lyon and what time is it there?", ["weather:current", "clock:now"], []),
    ("remind me at 4pm to stretch rather than a timer", ["agenda:remind_at"], ["clock:timer"]),
    ("rather than a timer, remind me at 4pm to stretch", ["agenda:remind_at"], ["clock:timer"]),
    ("my week has been a total disaster and I'm exhausted", [], None),
    ("tack så mycket", [], None),  # passed before: thanks in a language the lab does not read (a guard)
    # round fifteen (2026-12-07): a report of something done was offered the tool that would redo it
    # (clock:alarm locked, six mail tools, the timer and the to-do tools); praise of a reminder got the
    # reminder tools; a quantity asked in another unit was conversation; the tool a set-aside names led
    ("I already set an alarm for six, no worries", [], None),
    ("I sent the invoice email to Marta yesterday afternoon", [], None),
    ("the timer already went off, the pasta's done", [], None),
    ("Ich habe den Wecker für morgen schon gestellt", [], None),
    ("just finished reading the article you fetched for me earlier", [], None),
    ("thanks, that reminder was perfect", [], None),
    ("12 km in miles?", ["calc:convert"], []),
    ("150 USD to EUR", ["calc:convert"], []),
    ("rather than an alarm, remind me at 7 to take my pills", ["agenda:remind_at"], ["clock:alarm"]),
    ("Anstatt einer E-Mail setz bitte 'Steuer machen' auf meine To-do-Liste", ["agenda:remind_self"], ["mail:write"]),
    # guards: a command with "just" and a form a past tense shares; a report beside a request; a
    # report of something that came to the user asks for it to be read
    ("just put 'renew passport' on my to-do list", ["agenda:remind_self"], []),
    ("instead of a calendar event, just put 'renew passport' on my to-do list", ["agenda:remind_self"], ["calendar:create"]),
    ("I already set the alarm, but could you also start a 10 minute timer?", ["clock:timer"], []),
    ("I got an email from Bob", ["mail:read"], []),
    # round sixteen (2026-12-07): a report without a subject, how a tool's work went and praise with
    # its object were offered the tool; rain by another word and a clearing sky seated transit and news
    ("paid the gas bill this morning", [], None),
    ("booked the hotel yesterday", [], None),
    ("sent the invoice to Anna last week", [], None),
    ("the timer worked perfectly", [], None),
    ("nice work with the playlist", [], None),
    ("it's pouring in Leeds", ["weather:forecast"], ["transit:route", "transit:departures", "news:today"]),
    ("will it clear up by noon in Bath?", ["weather:forecast"], ["transit:departures", "clock:now"]),
    # guards: a filter by time, and praise before a request
    ("sent emails from last week", ["mail:check"], []),
    ("the timer worked perfectly, now set another one for 10 minutes", ["clock:timer"], []),
    # round seventeen (2026-12-07): longer praise, reports in more forms, idioms; guards that broke: a
    # request after praise of its object or after a request for writing was dropped as conversation
    ("the playlist you put on was spot on", [], None),
    ("Danke, der Timer hat super funktioniert", [], None),
    ("cancelled the 3pm myself, no action needed", [], None),
    ("let's call it a day", [], None),
    ("I'm over the moon about the news", [], None),
    ("great job on the playlist, play it again", ["media:play"], []),
    ("tell me a joke and then set an alarm for 7", ["clock:alarm"], []),
    ("write a haiku and email it to Jo", ["mail:write"], []),
    # round eighteen (2026-12-07): a closing of an evening, a hyphenated keyword in one of two requests,
    # an information question the weather tools pulled, the web search seated for the Zelda question
    ("what a lovely chat, have a good evening", [], None),
    ("list my to-dos and show me tomorrow's meetings", ["agenda:list", "calendar:list"], []),
    ("list my to-dos", ["agenda:list"], []),
    ("why is the sky blue", ["web:search"], []),
    ("is the new Zelda game out yet?", ["web:search"], []),
    # guards: a question about the user's own things, a request after thanks
    ("what does my weather document say about rain", [], ["web:search"]),
    ("thanks, now play the next song", ["media:play"], []),
    # round nineteen (2026-12-07): a topic word inside a feeling or an idiom, a feeling in French or
    # German, reports with a weekday or an afternoon that is over, a German participle without "ge"
    ("that news totally broke my heart", [], None),
    ("my inbox is a bottomless pit, honestly", [], None),
    ("that song has been stuck in my head all day", [], None),
    ("Ich bin heute total fertig", [], None),
    ("je suis complètement crevé ce soir", [], None),
    ("finally cleared my to-do list this afternoon", [], None),
    ("Ich habe die Mail schon beantwortet", [], None),
    ("estoy en las nubes hoy", [], None),
    # guards: the same words asking
    ("what's the latest news", ["news:today"], []),
    ("clear my to-do list", ["agenda:remove"], []),
])
def test_demo_catalogue_variants_of_handed_kinds(text, contains, excludes, real_embedder):
    from eris_lab._files import repo_root
    from eris_lab.catalog import load

    routed = Router.with_calibrated_knobs(load(repo_root() / "descriptors"), real_embedder).route(text)
    if excludes is None:
        assert routed.offer.names == (), routed.decision.reason
        return
    for name in contains:
        assert name in routed.offer.names, routed.decision.reason
    for name in excludes:
        assert name not in routed.offer.names, routed.decision.reason


@pytest.mark.parametrize("text, expected", [
    ("Bestell mir bitte Sushi.", "order Sushi"),  # a helper's variant of route-08: 0.57 glossed, 0.77 so
    ("Schreibe die Datei /data/test.txt mit dem Inhalt hallo.", "write die file /data/test.txt content hallo"),
    ("order me some sushi please", ""),  # English: nothing to translate
])
def test_translate_german_reads_a_german_message_word_for_word(text, expected):
    from eris_lab.router import translate_german

    assert translate_german(text) == expected


@pytest.mark.parametrize("text, elliptic", [
    ("what about the bedroom?", True), ("how about tomorrow", True), ("and in Hamburg?", True),
    ("and for two people", True), ("same for the garage", True), ("louder please", True),
    ("a bit warmer", True), ("und morgen?", True), ("Was ist mit Berlin?", True), ("etwas leiser bitte", True),
    ("what about a workflow for this?", True),
    ("what is the weather in Hamburg", False), ("and", False), ("the louder the better, play metal", False),
    ("android apps for notes", False), ("play something louder than yesterday", False),
    # round fourteen (2026-12-07): what changes first, "too" or "as well" last; small talk is none
    ("the hallway as well", True), ("the bathroom too", True), ("Paris too!", True),
    ("me too", False), ("thanks, you too", False), ("it is raining too", False),
])
def test_an_ellipsis_names_only_what_changes(text, elliptic):
    """Variants of cases route-03 and route-05: after an earlier turn these are read with it."""
    from eris_lab.router import ELLIPSIS_RE

    assert bool(ELLIPSIS_RE.match(text)) is elliptic


def test_relevance_gate_judges_the_most_relevant_reading_and_sentence(real_embedder):
    """A sentence of chit-chat in front of a request no longer sinks it: the gate takes the best
    relevance over the message's readings and sentence parts, as the hits take each tool's best
    score (until 2026-12-04 it judged the best-scoring row alone: on bfcl-pooled "Could you stream
    the song by Spice from the album Captured? It was released in 2018." was refused). The floor is
    set between the whole message's relevance (0.50) and its request's (0.97), so only the sentence
    can pass (no word of it is a declared keyword, which would pass the gate anyway)."""
    from eris_lab._files import repo_root
    from eris_lab.calibration import RelevanceGate
    from eris_lab.catalog import load

    text, request = "Life is strange sometimes. I keep thinking. Turn the sound up a bit.", "Turn the sound up a bit."
    router = Router.with_calibrated_knobs(load(repo_root() / "descriptors"), real_embedder)
    q = real_embedder.embed([text, request])
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    whole, part = RelevanceGate.probability(router.gate().features(q), router.knobs.relevance_weights)
    assert part > whole + 0.02, (whole, part)
    knobs = router.knobs.replace(relevance_floor=round(float(whole + part) / 2, 6))
    routed = Router(router.catalog, real_embedder, knobs=knobs, tool_vectors=router.tool_vectors).route(text)
    assert routed.decision.rule != Rule.NO_TOOL_FITS and "system:volume" in routed.offer.names, routed.decision.reason
    refused = Router(router.catalog, real_embedder, knobs=knobs, tool_vectors=router.tool_vectors).route(
        "Life is strange sometimes. I keep thinking.")
    assert refused.offer.names == (), refused.decision.reason  # the floor does refuse the chit-chat alone


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
    routed = router.route("weather " * 200_000)  # about 1.6 MB: cut, then the repeated word kept once
    assert routed.text.startswith("weather") and len(routed.text) < 20
    routed = router.route(" ".join(f"weather{i}" for i in range(200_000)))  # nothing repeats: cut only
    assert Knobs().max_query_chars - 20 < len(routed.text) <= Knobs().max_query_chars + 5
    assert routed.text.startswith("weather0 ") and routed.text.endswith(" weather199999")
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


def test_first_message_reports_the_start_up_it_waited_for(fake_embedder, tmp_path, monkeypatch):
    """A new user's first, cold `route` took 6.5 s and reported model_load 0.0 ms: the model had
    loaded, unseen, inside the tool vectors and the calibration. The start-up now shows in the
    first message's timings, once."""
    import time as _time

    class Slow:
        model_id = fake_embedder.model_id

        def load(self):
            _time.sleep(0.05)

        def embed(self, texts):
            return fake_embedder.embed(texts)

    monkeypatch.setenv("ERIS_LAB_CALIBRATION_CACHE", str(tmp_path / "cal"))
    catalog = Catalog.from_names(["weather:current", "clock:now", "mail:read"])
    router = Router.with_calibrated_knobs(catalog, Slow(), cache=False)
    first = router.route("weather current in Berlin please").to_json()["timings_ms"]
    assert first["model_load"] >= 50 and {"vectors", "calibration"} <= set(first)
    second = router.route("weather current in Paris please").to_json()["timings_ms"]
    assert not {"model_load", "calibration"} & set(second)


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


# -- issue 16: the guard in a dialog ------------------------------------------------------------------

SLOT_TOOLS = [
    {"name": "get_weather", "description": "Current conditions and forecast for a city or place. Needs a location."},
    {"name": "web_search", "description": "Search the web for pages, news, articles and facts."},
    {"name": "log_meal", "description": "Record what the user ate in their food diary."},
    {"name": "play_music", "description": "Play a song, an artist or a playlist."},
]


@pytest.mark.parametrize("reply", ["I'm in Leeds", "Leeds", "try Paris", "Manchester, UK"])
@pytest.mark.parametrize("status", ["failed", "error"])
def test_failed_tool_in_history_comes_back_for_a_short_reply(reply, status, fake_embedder):
    router = Router(Catalog(tools_from_json(SLOT_TOOLS)), fake_embedder)
    history = [{"role": "tool_used", "name": "get_weather", "status": status},
               {"role": "assistant", "content": "Which city?"}]
    routed = router.route(reply, history=history)
    assert routed.offer.names[0] == "get_weather" and "web_search" not in routed.offer.names
    assert routed.decision.rule == Rule.FAILED_TOOL_RETRY


def test_failed_tool_is_offered_again_only_on_failure(fake_embedder):
    router = Router(Catalog(tools_from_json(SLOT_TOOLS)), fake_embedder)
    ok = [{"role": "tool_used", "name": "get_weather", "status": "ok"}]
    assert router.route("I'm in Leeds", history=ok).decision.rule == Rule.CONVERSATIONAL
    # a failure before the last user message is answered already
    old = [{"role": "tool_used", "name": "get_weather", "status": "failed"}, {"role": "user", "content": "never mind"}]
    assert "get_weather" not in router.route("record my porridge in the food diary", history=old).offer.names
    # the explicit flag does the same as the history
    assert router.route("Leeds", failed=["get_weather"]).offer.names == ("get_weather",)
    assert router.route("thanks", failed=["get_weather"]).offer.names == ()


def test_a_request_that_stands_alone_does_not_drag_the_last_turn_along(real_embedder):
    # route-23's note: after a successful call, a new short request does not pull the old tool
    router = Router(Catalog(tools_from_json(SLOT_TOOLS)), real_embedder)
    history = [{"role": "user", "content": "what's the weather going to be like tomorrow?"},
               {"role": "tool_used", "name": "get_weather", "status": "ok"}]
    for text in ["I had porridge for breakfast", "log my porridge", "play some jazz"]:
        assert "get_weather" not in router.route(text, history=history).offer.names, text
    for text in ["and in Leeds?", "what about Sunday?"]:
        assert "get_weather" in router.route(text, history=history).offer.names, text


def test_failed_tool_slot_answer_with_the_real_embedder_and_no_earlier_message(real_embedder):
    router = Router(Catalog(tools_from_json(SLOT_TOOLS)), real_embedder)
    for reply in ["I'm in Leeds", "Berlin", "it's Glasgow"]:
        routed = router.route(reply, failed=["get_weather"])
        assert "get_weather" in routed.offer.names and "web_search" not in routed.offer.names, reply


CATCH_ALL_TOOLS = [
    {"name": "execute_python", "description": "Run any Python code in the embedded interpreter. Can read and write "
                                              "files, call web APIs, transform data and script anything."},
    {"name": "http_get", "description": "Download the body of a URL (JSON, text or binary) over HTTP."},
    {"name": "write_file", "description": "Write text or bytes to a file in the project folder."},
    {"name": "read_file", "description": "Read a file from the project folder."},
    {"name": "spawn_actor", "description": "Place a new actor in the open level at a location."},
    {"name": "build_lighting", "description": "Rebuild lighting for the current level."},
]


@pytest.mark.parametrize(("text", "dedicated"), [
    ("download https://example.com/a.csv and save it to Data/a.csv", {"http_get", "write_file"}),
    ("read the file Config/game.ini", {"read_file"}),
    ("fetch http://x.io/list.txt then write it into Saved/list.txt", {"http_get", "write_file"}),
])
def test_catch_all_tool_rides_behind_the_dedicated_tools(text, dedicated, real_embedder):
    routed = Router(Catalog(tools_from_json(CATCH_ALL_TOOLS)), real_embedder).route(text)
    names = routed.offer.names
    assert dedicated <= set(names), routed.decision.reason
    if "execute_python" in names:
        assert all(names.index(d) < names.index("execute_python") for d in dedicated)


def test_rank_catch_all_last_caps_at_the_lowest_dedicated_hit():
    catalog = Catalog(tools_from_json(CATCH_ALL_TOOLS))
    hits = [Hit(name="execute_python", score=0.9), Hit(name="http_get", score=0.8), Hit(name="write_file", score=0.6),
            Hit(name="read_file", score=0.3)]
    ranked = rank_catch_all_last(hits, catalog, threshold=0.5, forced_floor=0.99)
    assert [h.name for h in ranked][:3] == ["http_get", "write_file", "execute_python"]
    assert ranked[2].score == pytest.approx(0.6 - 1e-4)
    alone = [Hit(name="execute_python", score=0.9), Hit(name="read_file", score=0.3)]
    assert rank_catch_all_last(alone, catalog, threshold=0.5, forced_floor=0.99) == alone


TIME_TOOLS = [
    {"name": "set_timer", "description": "Start a countdown for a duration such as 10 minutes."},
    {"name": "set_alarm", "description": "Alarm that rings at a clock time, e.g. to wake up."},
    {"name": "add_reminder", "description": "Save a to-do that notifies the user on a given day or at a given time."},
    {"name": "send_message", "description": "Send a text message to a contact."},
]


@pytest.mark.parametrize("text", ["remind me at 09:05 to take my pills", "remind me on Friday at 9 to call mum",
                                  "remind me to water the plants tomorrow morning",
                                  "remind me to ring the dentist on Monday"])
def test_a_point_in_time_never_pulls_the_countdown(text, real_embedder):
    routed = Router(Catalog(tools_from_json(TIME_TOOLS)), real_embedder).route(text)
    assert "add_reminder" in routed.offer.names and "set_timer" not in routed.offer.names, routed.decision.reason


@pytest.mark.parametrize("text", ["set a timer for 10 minutes", "remind me in 20 minutes to check the oven",
                                  "start a countdown for five minutes"])
def test_a_duration_still_finds_the_countdown(text, real_embedder):
    assert "set_timer" in Router(Catalog(tools_from_json(TIME_TOOLS)), real_embedder).route(text).offer.names


CJK_TOOLS = [
    {"name": "get_weather", "description": "查询城市的天气预报"},
    {"name": "set_alarm", "description": "设置闹钟，在指定时间响铃"},
    {"name": "send_message", "description": "给联系人发送短信"},
    {"name": "play_music", "description": "播放音乐或歌曲"},
    {"name": "get_news", "description": "今日のニュースを読む"},
]


@pytest.mark.parametrize(("text", "tool"), [("明天北京的天气怎么样", "get_weather"), ("明天早上七点的闹钟", "set_alarm"),
                                            ("给妈妈发短信", "send_message"), ("ニュースを見せて", "get_news")])
def test_a_key_noun_written_verbatim_finds_its_tool_in_cjk(text, tool, fake_embedder):
    routed = Router(Catalog(tools_from_json(CJK_TOOLS)), fake_embedder).route(text)
    assert routed.offer.names and routed.offer.names[0] == tool, routed.decision.reason
    assert routed.decision.rule != Rule.CONVERSATIONAL


def test_cjk_request_on_an_english_catalogue_gets_the_roster_not_nothing(fake_embedder):
    routed = Router(Catalog(tools_from_json(SLOT_TOOLS)), fake_embedder).route("天気は？")
    assert routed.decision.kind != "conversational" and routed.offer.names


def _numbered_tools(n: int) -> Catalog:
    topics = ["weather", "alarm", "music", "mail", "calendar", "news", "timer", "files"]
    return Catalog([Tool(name=f"{topics[i % 8]}_tool_{i}", description=f"handle {topics[i % 8]} task number {i}")
                    for i in range(n)])


@pytest.mark.parametrize("text", ["поставь будильник на 7 утра завтра", "내일 아침 7시에 알람 맞춰줘", "天気は？"])
def test_unreadable_request_without_a_catalogue_word_gets_the_whole_roster_not_noise(text, fake_embedder):
    """Cosines of a script the embedder cannot read are noise: a calibrated policy offers a
    catalogue of up to BLIND_ROSTER_MAX tools whole (the Russian alarm request lost clock:alarm
    to a noise-ranked subset of 5), and a larger one the bounded widening, never a lone hit."""
    from eris_lab.router import BLIND_ROSTER_MAX

    knobs = Knobs(empty_fallback="ranked", unsure_fallback="ranked", widen_k=5, max_whole_roster=4)
    small = _numbered_tools(40)
    routed = Router(small, fake_embedder, knobs=knobs, cache=False).route(text)
    assert routed.offer.names == small.names and "cannot read" in routed.guard
    large = _numbered_tools(BLIND_ROSTER_MAX + 16)
    routed = Router(large, fake_embedder, knobs=knobs, cache=False).route(text)
    assert routed.decision.rule == Rule.UNSURE_RANKED and 1 < len(routed.offer.names) < len(large)
    # eval's strategy widens over the same ranking (it offered the whole 1,041-tool pooled roster)
    from eris_lab.strategies import Context, EmbeddingPolicy

    strategy = EmbeddingPolicy(embedder=fake_embedder, knobs=knobs).fit(large)
    assert strategy.route(text, Context()).offer.names == routed.offer.names


def test_a_foreign_word_in_a_parameter_enum_finds_its_tool():
    """live_multiple's ControlAppliance.execute states its Korean commands only in the ``command``
    parameter; lexical terms read parameter descriptions and enum values too."""
    from eris_lab.router import _lexical_docs

    catalog = Catalog([Tool(name="weather", description="current weather for a city"),
                       Tool(name="appliance", description="control a home appliance",
                            parameters={"type": "object", "properties": {"command": {
                                "type": "string", "description": "room, appliance, operation",
                                "enum": ["거실, 에어컨, 실행", "다용도실, 통돌이, 중지"]}}})])
    docs, _ = _lexical_docs(catalog)
    assert "에어" in docs[1] and "에어" not in docs[0]
    router = Router(catalog, None, cache=False, tool_vectors=np.eye(2, dtype=np.float32))
    scores = router._lexical_scores("거실 에어컨 실행")
    assert scores[1] > 0 == scores[0]


@pytest.mark.parametrize("text", [
    "mail the report to Anna", "find flights such as the one to Rome", "he lies about the wiki page",
    "what was the weather like", "regen the thumbnails",
    "list the files in my folder",  # "list" stems like the key "liste": no German evidence
    "find flights to cities such as Des Moines",  # a German particle inside a name is no evidence
    "mail the report to Ursula von der Leyen", "such a nice day in Baden bei Wien",
    "I recently caught wind of some stellar performance",  # "wind" is no gloss key: German and English alike
    "a bad day in the garage", "grad school applications",  # English words are no German evidence
])
def test_english_message_with_german_homographs_is_not_glossed(text):
    # an English word that is also a German gloss key ("mail", "such", "lies") is no evidence of German
    assert gloss_german(text) == ""


@pytest.mark.parametrize(("text", "gloss"), [
    ("schicke eine Mail an Anna", "send email"),  # a homograph counts beside German evidence
    ("lies die Datei notes.md", "read file"),
    ("Mail an Anna, bitte", "email"),  # a German function word alone is evidence
    ("wie wird das Wetter morgen", "weather tomorrow"),
    ("Lautstärke runter", "volume"),
    ("Spiel bitte das nächste Lied", "play next song"),  # inflected forms by their stem
    ("Löschen Sie die Dateien", "delete files"),
    # weather verbs and states (a German variant of case route-01 offered politics beside the weather)
    ("Wird es morgen in Hamburg regnen?", "tomorrow rain"),
    ("Regnet es heute?", "rain today"),
    ("Schneit es am Wochenende in den Alpen?", "snow"),
    ("Wird es morgen sonnig oder bewölkt?", "tomorrow sunny cloudy"),
    # the home (a new user's smart-home catalogue): rooms, devices, their verbs
    ("Stell die Heizung im Wohnzimmer auf 22 Grad", "set heating thermostat room degrees"),
    ("Schließ bitte die Haustür ab", "lock close front door"),
])
def test_german_message_is_glossed(text, gloss):
    assert gloss_german(text) == gloss


def test_short_german_stem_is_no_gloss():
    # "seite" (page) stems to "seit" (since): a stem that short is a word of its own
    assert gloss_german("Was ist der Unterschied zwischen 'seit' und 'seid'?") == ""


def test_a_misspelt_message_is_scored_with_its_fixed_words_too(fake_embedder):
    catalog = Catalog([Tool(name="mail:check", description="check email inbox"),
                       Tool(name="transit:departures", description="next bus departures from a station")])
    knobs = Knobs(threshold=0.3, single_hit_floor=0.3)
    routed = Router(catalog, fake_embedder, knobs=knobs).route("please chek my emial inbox now")
    assert "spelling chek->check, emial->email" in routed.guard
    fixed_score = routed.hits[0].score
    plain = Router(catalog, fake_embedder, knobs=knobs.replace(fix_spelling=False)).route("please chek my emial inbox now")
    assert "spelling" not in plain.guard
    assert routed.hits[0].name == "mail:check" and fixed_score > plain.hits[0].score  # more words now match


def test_calibrated_scores_keep_their_order_near_the_cap(fake_embedder):
    catalog = Catalog([Tool(name=f"tool_{i}", description=f"word{i} shared") for i in range(6)])
    router = Router(catalog, fake_embedder, cache=False)
    raw = np.linspace(0.2, 0.95, 6, dtype=np.float32)[None, :]  # far above every tool's background
    scores = router.calibrate(raw)[0]
    mean, std = router._background
    z = (raw[0] - mean) / std
    assert scores.max() <= 0.98 and len(set(scores.tolist())) == 6  # squashed, never tied at the cap
    assert np.argsort(scores).tolist() == np.argsort(z).tolist()  # in the order of the standardised cosines


def test_offer_is_ordered_by_raw_cosine_under_background_calibration(fake_embedder):
    """The standardised score sizes the offer; the raw cosine orders it (offer.ordered). A tool the
    background rates high keeps a lower standardised score though its cosine is the best."""
    from eris_lab.strategies import Context, EmbeddingPolicy

    catalog = Catalog([Tool(name="get_weather", description="weather forecast for a city tomorrow"),
                       Tool(name="web_search", description="search the web for pages"),
                       Tool(name="log_meal", description="record a meal in the food diary"),
                       Tool(name="set_timer", description="start a countdown timer for minutes")])
    text = "weather forecast tomorrow, search the web pages"
    background = (np.array([0.07, 0.40, 0.10, 0.04]), np.array([0.08, 0.05, 0.10, 0.07]))
    offers = {}
    for on in (True, False):
        router = Router(catalog, fake_embedder, knobs=Knobs(order_by_cosine=on), cache=False)
        assert router.calibrated
        router._background = background  # web_search: the best cosine, the lower standardised score
        routed = router.route(text)
        assert [h.name for h in routed.hits[:2]] == ["get_weather", "web_search"]
        offers[on] = routed.offer.names
    assert offers[True] == ("web_search", "get_weather")
    assert offers[False] == ("get_weather", "web_search")
    strategy = EmbeddingPolicy(embedder=fake_embedder, knobs=Knobs()).fit(catalog)
    strategy.router_._background = background
    assert strategy.route(text, Context()).offer.names == offers[True]  # eval measures what route runs


def test_offer_order_keeps_forced_hits_first_and_demoted_tools_last(fake_embedder):
    """The order key keeps the guards' moves: a forced hit (a URL) leads though its cosine is lower,
    a countdown tool without a duration in the message (case route-27) trails though its cosine is higher."""
    from eris_lab.embed import normalize_rows

    catalog = Catalog([Tool(name="set_timer", description="start a countdown timer for minutes"),
                       Tool(name="web_fetch", description="fetch a web page by its url"),
                       Tool(name="web_search", description="search the web for pages")])
    text = "start a web search for pages at https://example.org, a start for minutes"
    router = Router(catalog, fake_embedder, cache=False)
    assert router.calibrated
    routed = router.route(text)
    cosine = dict(zip(catalog.names, router.tool_vectors @ normalize_rows(fake_embedder.embed([text]))[0]))
    assert cosine["web_fetch"] < cosine["web_search"] and cosine["set_timer"] > 0
    assert routed.offer.names[:2] == ("web_fetch", "web_search")
    key = dict(zip(catalog.names, router.last_order))
    assert key["web_fetch"] > 2 > 1 > key["web_search"] > 0 > key["set_timer"]


# -- several requests in several sentences (issue 18 item 8) ----------------------------------------

@pytest.fixture(scope="module")
def parallel_pooled():
    from eris_lab.eval.datasets import fetch_bfcl, load_suite

    fetch_bfcl()
    suite = load_suite("parallel_multiple-pooled")
    return suite, Router.with_calibrated_knobs(suite.catalog)


# every gold tool is the best of one sentence; without the sentence parts each offer missed one
# (the third request's tool in 145 and 179, the library in 159)
@pytest.mark.parametrize("case_id", ["parallel_multiple_145", "parallel_multiple_159", "parallel_multiple_179"])
def test_each_sentence_adds_its_best_tool(parallel_pooled, case_id, monkeypatch):
    from eris_lab.catalog import base_name

    suite, router = parallel_pooled
    query = next(q for q in suite.queries if q.id == case_id)
    routed = router.route(query.query)
    # by name: the pooled catalogue holds schema variants of one function ("find_card_in_deck~2",
    # whose deck "will be a default standard 52 card deck", is the one the words of 179 pick)
    assert {base_name(g) for g in query.gold} <= {base_name(n) for n in routed.offer.names}, routed.decision.reason
    assert "sentence parts" in routed.guard
    # the parts only add tools: the message's own hits are those it has without them
    monkeypatch.setattr("eris_lab.router.sentence_parts", lambda text: ())
    alone = router.route(query.query)
    # (the same names and scores; a batch of other texts moves a vector by float noise only)
    assert [h.name for h in routed.hits] == [h.name for h in alone.hits]
    np.testing.assert_allclose([h.score for h in routed.hits], [h.score for h in alone.hits], atol=1e-5)
    assert not {base_name(g) for g in query.gold} <= {base_name(n) for n in alone.offer.names}
    assert set(alone.offer.names) < set(routed.offer.names)


def test_a_sentence_that_names_no_tool_adds_none(monkeypatch):
    # "Could you help me with a few things?" clears the demo catalogue's calibrated threshold (0.16)
    # with some tool; the relevance gate keeps its best tool out of the intents
    from eris_lab.catalog import load

    router = Router.with_calibrated_knobs(load("descriptors"))
    opener = "Could you help me with a few things?"
    text = f"{opener} First, I want to know the weather in Berlin tomorrow."
    assert router.route(text).offer.names  # a request
    monkeypatch.setattr("eris_lab.router.sentence_parts", lambda text: ())
    without = router.route(text)
    monkeypatch.setattr("eris_lab.router.sentence_parts", lambda text: (opener,))
    scores = router.scores([opener])[0]
    assert scores.max() >= router.knobs.threshold  # its best tool would clear the threshold
    assert router.catalog.names[int(scores.argmax())] not in without.offer.names
    assert router.route(text).offer.names == without.offer.names
    router.knobs = router.knobs.replace(relevance_floor=0.0)  # no gate: the opener's best tool comes in
    assert router.catalog.names[int(scores.argmax())] in router.route(text).offer.names


@pytest.fixture(scope="module")
def demo_calibrated():
    from eris_lab.catalog import load

    return Router.with_calibrated_knobs(load("descriptors"))


def test_the_request_without_its_quoted_text_adds_its_best_tool(demo_calibrated, monkeypatch):
    # what a task or a message should say is no request; read without it, the request names its tool
    # (demo plain: "mark 'renew car insurance' as done" was refused by the gate), and like a sentence
    # part that reading adds its best tool and raises no score
    text = "mark 'renew car insurance' as done"
    routed = demo_calibrated.route(text)
    assert "agenda:complete" in routed.offer.names and "quoted text left out" in routed.guard, routed.decision.reason
    monkeypatch.setattr("eris_lab.router.without_payload", lambda text, **_: "")
    alone = demo_calibrated.route(text)
    assert not alone.offer.names
    assert [h.name for h in routed.hits] == [h.name for h in alone.hits]


@pytest.mark.parametrize("text", ["message Bob 'buy more Tesla shares before the earnings call'",
                                  "tell Anna via message: 'I just sold my Nvidia stock at a loss'"])
def test_a_quoted_body_does_not_hide_the_messaging_tool_on_a_small_catalogue(text):
    # below the calibration minimum the reference rules keep every hit over the threshold: the request
    # without its quoted body is a reading beside the message (a helper's variants: three stock tools)
    catalog = Catalog([Tool(name="send_message", description="Send a text message to a contact."),
                       Tool(name="get_stock_price", description="Current share price of a stock ticker."),
                       Tool(name="buy_stock", description="Buy shares of a stock."),
                       Tool(name="sell_stock", description="Sell shares of a stock."),
                       Tool(name="get_weather", description="Current weather for a city.")])
    routed = Router.with_calibrated_knobs(catalog).route(text)
    assert "send_message" in routed.offer.names and "quoted text left out" in routed.guard, routed.decision.reason


def test_a_quoted_message_body_does_not_route_the_message(demo_calibrated):
    # the body named an alarm and a forecast, and the offer was those two, without mail:write
    routed = demo_calibrated.route("write to alice@example.org: 'set an alarm for the 7am train, the forecast says rain'")
    assert "mail:write" in routed.offer.names, routed.decision.reason


class _OneVector:
    """Every text embeds to one fixed vector (the cosines are then the tool matrix's product)."""

    model_id = "fixed"

    def __init__(self, vector):
        self.vector = np.asarray(vector, dtype=np.float32)

    def embed(self, texts):
        return np.tile(self.vector, (len(texts), 1))


_BARE = [Tool(name="convert_currency", description="Convert an amount between two currencies."),
         Tool(name="get_weather", description="Current weather of a city."),
         Tool(name="transfer_funds", description="Send money.", parameters={"type": "object", "properties": {
             "iban": {"type": "string", "description": "International bank account number of the payee"}}})]


def test_lexical_shares_weigh_the_message_terms_each_tool_holds():
    from eris_lab.router import lexical_shares

    catalog = Catalog(_BARE)
    shares = lexical_shares(catalog, ["payee bank account", "weather", "", "zzzz qqqq"])
    assert shares.shape == (4, 3) and shares.dtype == np.float32
    assert shares[0, 2] == pytest.approx(1.0) and shares[0, 0] == shares[0, 1] == 0  # parameter words count
    assert shares[1, 1] == pytest.approx(1.0) and shares[1, 0] == 0
    assert not shares[2].any() and not shares[3].any()  # no terms; terms no tool holds
    # function words name no tool: "on" in one description ("Switch on a lamp") scored "put on some
    # jazz" for it on a small catalogue (a new user's check)
    lamp = Catalog([*_BARE, Tool(name="turn_on_light", description="Switch on a lamp.")])
    assert lexical_shares(lamp, ["put on some jazz"])[0, 3] == 0
    # a term no tool holds still weighs: half the message is unknown
    assert 0 < lexical_shares(catalog, ["weather zzzz"])[0, 1] < 1


def test_the_widening_order_adds_the_lexical_share_only_without_routing_hints():
    from eris_lab.router import uses_lexical_widening, widening_key

    knobs = Knobs(calibration="none")
    scores = np.array([[0.68, 0.57, 0.46], [0.5, 0.4, 0.3]], dtype=np.float32)
    shares = np.array([[0.0, 0.0, 0.5], [0.0, 0.0, 0.0]], dtype=np.float32)
    key = widening_key(scores, shares, knobs)
    assert key[0, 2] == pytest.approx(0.46 + knobs.widen_lexical_weight) and key[0, 0] == pytest.approx(0.68)
    assert np.array_equal(key[1], scores[1])  # a message sharing no term keeps its scores
    bare = Catalog(_BARE)
    hinted = Catalog([*_BARE[:2], Tool(name="transfer_funds", description="Send money.", routing_hints=("pay someone",))])
    assert uses_lexical_widening(bare, knobs) and not uses_lexical_widening(hinted, knobs)
    assert not uses_lexical_widening(bare, knobs.replace(widen_lexical_weight=0.0))

    # the router's ranking for widening: cosine puts convert_currency first, the message's words
    # are transfer_funds' parameter; the hinted catalogue and weight 0 keep the cosine order
    def ranked(catalog, weight):
        router = Router(catalog, _OneVector([0.6, 0.5, 0.4]), cache=False, tool_vectors=np.eye(3, dtype=np.float32),
                        knobs=knobs.replace(widen_lexical_weight=weight, threshold=-1.0))
        router.route("pay the invoice to the payee's bank account")
        return [h.name for h in router.last_ranked]

    assert ranked(bare, 0.3) == ["transfer_funds", "convert_currency", "get_weather"]
    assert ranked(bare, 0.0) == ranked(hinted, 0.3) == ["convert_currency", "get_weather", "transfer_funds"]


def test_each_request_of_a_message_names_its_tool_in_the_widening_order():
    """A message with several requests: each clause's and sentence's tool (its intent) is read in
    the widening order too, so the words of each request find their tool where the cosines of every
    part point at one (here all parts embed alike)."""
    def intents(weight):
        router = Router(Catalog(_BARE), _OneVector([0.6, 0.5, 0.4]), cache=False,
                        tool_vectors=np.eye(3, dtype=np.float32),
                        knobs=Knobs(calibration="none", threshold=-1.0, subset_margin=0.5, widen_lexical_weight=weight))
        router.route("Send the rent to the payee's bank account. Then tell me the weather in Oslo today.")
        return {h.name for h in router.last_intents}

    assert intents(0.3) == {"transfer_funds", "get_weather"}
    assert intents(0.0) == {"convert_currency"}


def test_router_hands_the_policy_its_top_cosine_for_the_uncovered_rule(real_embedder):
    """BFCL irrelevance's kind: a unit conversion beside a lone BMI tool passes the relevance gate
    but is refused by the calibrated knobs (the tool's text holds no word of it, its cosine is
    low); the BMI request is not."""
    from eris_lab.catalog import Catalog, tools_from_json

    functions = [{"name": "determine_body_mass_index", "description": "Calculate body mass index given weight and height.",
                  "parameters": {"type": "object", "properties": {"weight": {"type": "number", "description": "Weight in kilograms."},
                                                                  "height": {"type": "number", "description": "Height in meters."}},
                                 "required": ["weight", "height"]}}]
    router = Router.with_calibrated_knobs(Catalog(tools_from_json(functions, source="test"), source="test"),
                                          real_embedder, cache=False)
    text = "Convert 30 degrees Celsius to Fahrenheit."
    refused = router.route(text)
    assert router.top_cosine() < router.knobs.uncovered_floor and router.relevance() >= router.knobs.relevance_floor
    assert refused.decision.rule == "NO_TOOL_FITS" and "no word of the message" in refused.decision.reason
    off = Router(router.catalog, real_embedder, knobs=router.knobs.replace(uncovered_floor=0.0), cache=False)
    assert off.route(text).offer.names == ("determine_body_mass_index",)  # the gate alone lets it through
    asked = router.route("What is the body mass index of a man weighing 80 kg and 1.8 m tall?")
    assert asked.offer.names == ("determine_body_mass_index",)


@pytest.mark.parametrize("text, gloss", [
    ("Lösch alle Werbemails von gestern", "delete email"),  # demo de-020
    ("Zeig mir meine Einkaufsliste", "show list"),
    ("Wie wird das Regenwetter morgen?", "rain weather tomorrow"),
    ("Lösch bitte die Spammails", "delete email"),
    ("Lösch die Bahnhofsuhr", "delete"),  # "uhr" is too short a key to be read as a head
    ("Erstelle einen Kalendereintrag für Montag", "create calendar entry"),  # a leading key and the head
    ("Füge Milch zur Einkaufsliste hinzu", "add list"),
    ("Schick eine Nachricht an Lisa", "send message"),
])
def test_gloss_german_reads_a_compound_by_its_head(text, gloss):
    assert gloss_german(text) == gloss


@pytest.mark.parametrize("text", ["is there a video for that?", "any video on that?", "what about a video for this?"])
def test_a_follow_up_that_points_back_is_scored_without_its_pointer(text, real_embedder):
    """A helper's variant of route-05: "for that" lowered find_video's cosine below the threshold
    and the whole roster, ask_clarification included, was offered."""
    catalog = Catalog(tools_from_json([
        {"name": "search_docs", "description": "Search the product documentation for a topic."},
        {"name": "find_video", "description": "Find a video walkthrough on a topic."},
        {"name": "open_ticket", "description": "Open a support ticket."},
        {"name": "ask_clarification", "description": "Ask the user what they mean when the request is unclear."}]))
    history = [{"role": "user", "content": "how do I configure single sign-on with Okta in the admin console?"},
               {"role": "tool_used", "name": "search_docs"}]
    for router in (Router(catalog, real_embedder), Router.with_calibrated_knobs(catalog, real_embedder)):
        routed = router.route(text, history=history)
        assert "find_video" in routed.offer.names and "ask_clarification" not in routed.offer.names, routed.decision


@pytest.mark.parametrize("text, first", [
    ("add a calendar entry for friday at 3", "calendar:create"),  # bad-inputs #30: calendar:list was first
    ("create a calendar event for friday at 3", "calendar:create"),
    ("put a dentist appointment on my calendar for monday", "calendar:create"),
    ("please schedule a meeting with bob on tuesday at 10", "calendar:create"),
    ("delete the meeting with bob", "calendar:delete"),
    ("move the dentist appointment to 4pm", "calendar:update"),
])
def test_the_tool_that_does_what_the_message_asks_comes_first(text, first, real_embedder):
    """Under the calibrated knobs ``eris-lab route`` uses (the reference knobs offer the whole demo
    roster, in catalogue order, for most of these)."""
    from eris_lab.catalog import load
    from conftest import ROOT

    routed = Router.with_calibrated_knobs(load(ROOT / "descriptors"), real_embedder).route(text)
    assert routed.offer.names[0] == first, (routed.offer.names, routed.offer.decision.reason)


def test_a_quoted_payload_lowers_only_the_tools_it_alone_pulls():
    """``router.without_payload_pull``: rows ``(m + 2, n_tools)``, the last two the request without
    its payload and the payload alone; a tool the payload pulls more than the request gets no more
    than the request gives it, in every row; a tool the request pulls keeps its scores."""
    from eris_lab.router import without_payload_pull

    message = np.array([[0.60, 0.70, 0.20], [0.50, 0.65, 0.10]], dtype=np.float32)
    request = np.array([[0.55, 0.30, 0.15]], dtype=np.float32)  # tool 1 is what the payload talks about
    payload = np.array([[0.20, 0.80, 0.10]], dtype=np.float32)
    out = without_payload_pull(np.vstack([message, request, payload]))
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out[:, 0], message[:, 0])  # the request's own tool keeps its score
    np.testing.assert_allclose(out[:, 1], [0.30, 0.30])  # the payload's tool: no more than the request gives
    np.testing.assert_allclose(out[:, 2], message[:, 2])


def test_a_one_word_command_hands_over_its_quote(real_embedder):
    """A helper's second round on quoted text (2026-12-05): 'tweet: "..."' left one word outside the
    quote, too little for the reading without it, so the quote's alarm, meetings and pizza were
    offered; a German payload's glossed words escaped the cap."""
    tools = [{"name": n, "description": d} for n, d in [
        ("send_email", "Send an email message to a contact."), ("delete_emails", "Delete emails from the inbox."),
        ("set_alarm", "Set an alarm clock for a given time."), ("cancel_meeting", "Cancel a meeting on the calendar."),
        ("translate_text", "Translate text into another language."),
        ("post_tweet", "Publish a post on the user's social media account."),
        ("create_note", "Save a note with some text."), ("order_pizza", "Order a pizza for delivery.")]]
    router = Router.with_calibrated_knobs(Catalog(tools_from_json(tools)), real_embedder)
    offer = router.route('tweet: "alarm set for 6, meetings cancelled, pizza tonight"').offer.names
    assert "post_tweet" in offer and not {"set_alarm", "cancel_meeting", "order_pizza"} & set(offer)


@pytest.mark.parametrize("text", ["stop it", "cancel it"])
def test_a_pointer_right_after_a_countdown_keeps_the_countdown(text, real_embedder):
    """A helper's variants of route-03 (2026-12-05): the countdown demotion (route-27: no duration in
    the message) left clock:timer out of "stop it" right after "start a 5 minute timer"."""
    from eris_lab._files import repo_root
    from eris_lab.catalog import load

    router = Router.with_calibrated_knobs(load(repo_root() / "descriptors"), real_embedder)
    history = [{"role": "user", "content": "start a 5 minute timer"}, {"role": "tool_used", "name": "clock:timer"}]
    routed = router.route(text, history=history)
    assert routed.offer.names[:1] == ("clock:timer",), routed.decision.reason


@pytest.mark.parametrize("text, expected", [
    ("¿Tengo correos nuevos?", "emails new"),
    ("Jaka jest pogoda w Krakowie?", "weather Krakowie"),
    ("Envía un correo a Luis diciendo que llego tarde", "send email Luis"),
    ("check the weather in Berlin", ""),  # English: nothing to gloss
    ("Wie wird das Wetter morgen?", ""),  # German has its own glosses
    # round twelve (2026-12-06, night): a case ending ("muzykę" is "muzyka" as an object), a verb of listening
    ("Włącz jakąś muzykę Chopina", "turn on music Chopina"),
    ("Je voudrais écouter du jazz", "listen to jazz"),
])
def test_gloss_foreign_reads_everyday_words_of_other_languages(text, expected):
    from eris_lab.router import gloss_foreign

    assert gloss_foreign(text) == expected


@pytest.mark.parametrize("text, gold", [
    ("¿Tengo correos nuevos?", "mail:check"),  # was conversation
    ("Jaka jest pogoda w Krakowie?", "weather:current"),  # 16 tools, no weather tool
    ("Envía un correo a Luis diciendo que llego tarde", "mail:write"),  # the doc domain's cluster
])
def test_short_requests_in_other_languages_reach_their_tool(text, gold, real_embedder):
    """A helper's variants of route-08 (2026-12-05): MiniLM reads neither Spanish nor Polish."""
    from eris_lab._files import repo_root
    from eris_lab.catalog import load

    routed = Router.with_calibrated_knobs(load(repo_root() / "descriptors"), real_embedder).route(text)
    assert gold in routed.offer.names[:5], routed.decision.reason


@pytest.mark.parametrize("text, plain", [
    ("I'm feeling a bit under the weather today", "I'm feeling a bit unwell today"),
    ("Time flies when you're having fun", "life goes by quickly when you're having fun"),
    ("can I take a rain check on dinner?", "can I decline for now on dinner?"),
    ("what's the weather today?", ""),  # a literal use is left alone
    ("it's raining cats and dogs, will it stop by 5?", ""),
    # weather and time said of a person, a mind or a workload (a helper's variants, 2026-12-05)
    ("I'm completely snowed under at work", "I'm completely overloaded at work"),
    ("she stole my thunder again", "she take the credit again"),
    ("it's raining cats and dogs in my inbox", "it's piling up in my inbox"),
    ("my brain is so foggy today", "I can't think clearly today"),
    ("you can't search your way out of heartbreak", "you cannot escape heartbreak"),
    ("is it pouring on the office roof?", ""),  # a place, not a workload
    ("will it snow in my town tomorrow?", ""),
    # the kitchen's (round eighteen's variants, 2026-12-07: "too many cooks spoil the broth" was offered
    # delete_recipe and save_recipe on a kitchen's catalogue, "you really know your onions" five recipe tools)
    ("too many cooks spoil the broth, as they say", "too many people in charge, as they say"),
    ("you really know your onions, thank you", "you really know the subject well, thank you"),
    ("this plan is a recipe for disaster", "this plan is sure to go wrong"),
    ("we're in a pickle now", "we're in trouble now"),
    ("save this onion soup recipe", ""), ("add onions to the shopping list", ""),
    # a garden, a school and a heart said of people (round nineteen's variants, 2026-12-07)
    ("he's been leading me up the garden path all week", "he's been misleading all week"),
    ("I'm a late bloomer when it comes to cooking", "I'm slow to start when it comes to cooking"),
    ("that news totally broke my heart", "that news totally made me very sad"),
    ("that song has been stuck in my head all day", "that song has been on my mind all day"),
    ("show me the garden path lights", ""), ("what's stuck in the print queue?", ""),
    # a body, a machine and code said of a mood (round nineteen's variants, health and devops catalogues)
    ("my heart skipped a beat when I saw the bill", "I was startled when I saw the bill"),
    ("my brain needs a reboot after that call", "I am tired after that call"),
    ("my motivation has completely crashed today", "my mood is low today"),
    ("time to commit to a healthier lifestyle", "time to decide on a better lifestyle"),
    ("commit the changes to the new branch", ""), ("my server crashed today", ""),
    ("show my heart rate", ""), ("restart the service after the call", ""),
])
def test_figures_of_speech_are_read_plainly(text, plain):
    from eris_lab.guard import literal_idioms

    assert literal_idioms(text) == plain


@pytest.mark.parametrize("text, foreign", [
    ("me cobraron dos veces, quiero un reembolso", True),  # "me" is Spanish too
    ("on a reçu la facture deux fois", True),  # "on" is French too
    ("call me at 7 on Friday", False), ("set me an alarm", False), ("email me the report", False),
])
def test_an_english_cue_shared_with_other_languages_proves_no_english(text, foreign):
    from eris_lab.guard import foreign_language

    assert foreign_language(text) is foreign


def test_a_figure_of_speech_read_plainly_with_no_hit_offers_nothing(real_embedder):
    """"time flies when you're having fun" on six tools: the plain reading has no hit, yet the gate
    let it through and the roster was offered (a helper's variants of route-20, 2026-12-05); a
    literal request beside a figure keeps its tool."""
    catalog = Catalog(tools_from_json(ROUTING["cases"][-3]["tools"]))  # route-23's six tools
    router = Router.with_calibrated_knobs(catalog, real_embedder)
    routed = router.route("time flies when you're having fun")
    assert routed.offer.names == () and "figure of speech" in routed.decision.reason
    assert "get_weather" in router.route("I'm snowed under, but what's the weather in Oslo tomorrow?").offer.names


@pytest.mark.parametrize("text, gold", [
    ("I'm feeling a bit under the weather today", None),  # 13 hits over the demo's threshold 0.16, best 0.31
    ("it's raining cats and dogs in my inbox", None),
    ("my brain is foggy, remind me to drink water at 3pm", "agenda:remind_at"),  # a request beside the figure
    ("I'm snowed under, can you check my mail?", "mail:check"),
])
def test_a_figure_of_speech_that_asks_nothing_needs_a_confident_hit(text, gold, real_embedder):
    """On the demo catalogue (calibrated threshold 0.16) the plain reading of a figure keeps weak
    hits: a statement that asks nothing then needs one at the single-hit floor (a helper's variants
    of route-20, 2026-12-05: "under the weather" widened to 13 tools)."""
    from eris_lab._files import repo_root
    from eris_lab.catalog import load

    routed = Router.with_calibrated_knobs(load(repo_root() / "descriptors"), real_embedder).route(text)
    if gold is None:
        assert routed.offer.names == (), routed.decision.reason
    else:
        assert gold in routed.offer.names, routed.decision.reason


def test_route_takes_none_for_no_history(real_embedder):
    """``history=None`` (and ``recent``/``failed``) means none; it raised a TypeError."""
    router = Router.with_calibrated_knobs(Catalog(tools_from_json(ROUTING["cases"][0]["tools"])), real_embedder)
    routed = router.route("will it rain in Leeds tomorrow?", history=None, recent=None, failed=None)
    assert routed.offer.names[:1] == ("get_weather",)


@pytest.mark.parametrize("text, slot_answer", [
    ("from 12 Baker Street", True), ("to the airport please", True), ("I'm in Leeds", True),
    ("on second thought, play some music instead", False), ("in Leeds?", False),
])
def test_a_reply_that_only_supplies_a_value_gets_the_failed_tool_alone(text, slot_answer):
    """After a failed call, a reply that only gives a value is offered the failed tool, not what
    else scored ("from 12 Baker Street" kept web_search 0.58 beside order_taxi: a helper's variant
    of route-23, 2026-12-06)."""
    from eris_lab.knobs import Knobs
    from eris_lab.policy import Decision, Hit, Rule, retry_failed

    catalog = Catalog(tools_from_json([{"name": "order_taxi", "description": "Order a taxi."},
                                       {"name": "web_search", "description": "Search the web."},
                                       {"name": "play_music", "description": "Play a song."}]))
    decided = Decision(rule=Rule.RANKED_SUBSET, kind="subset", names=("web_search", "order_taxi"), reason="r")
    hits = (Hit(name="web_search", score=0.58), Hit(name="order_taxi", score=0.56))
    out = retry_failed(decided, ["order_taxi"], hits, catalog, Knobs(), text)
    assert (out.names == ("order_taxi",)) is slot_answer


def test_a_problem_report_is_read_only_beside_a_support_tool(real_embedder):
    """"Missing name for redirect." beside product tools: read as a problem to report, it let the
    relevance gate pass a message it refuses (live_irrelevance_796-305-0, 2026-12-06); beside a
    support tool the reading stays ("my laptop won't turn on", a helper's variant of route-18)."""
    products = Catalog(tools_from_json([{"name": "product_list", "description": "Retrieve a list of all product names."},
                                        {"name": "get_products", "description": "Retrieves a list of products with SLA metrics."}]))
    routed = Router.with_calibrated_knobs(products, real_embedder).route("Missing name for redirect.")
    assert "problem report" not in routed.guard and routed.offer.names == ()
    helpdesk = Catalog(tools_from_json([{"name": "create_it_ticket", "description": "Create an IT helpdesk ticket."},
                                        {"name": "book_room", "description": "Book a meeting room."}]))
    routed = Router.with_calibrated_knobs(helpdesk, real_embedder).route("my laptop won't turn on")
    assert "problem report read" in routed.guard and routed.offer.names[:1] == ("create_it_ticket",)


def test_a_gloss_key_may_differ_in_its_last_letter_only_when_its_stem_is_unambiguous():
    from eris_lab.router import foreign_gloss

    assert foreign_gloss("muzykę") == "music" and foreign_gloss("pogodę") == "weather"
    assert foreign_gloss("muzyka") == "music" and foreign_gloss("MUZYKA") == "music"
    assert foreign_gloss("muz") == "" and foreign_gloss("xxxxxq") == ""
    assert foreign_gloss("luz") == "light"  # a short key is exact


def test_what_a_message_says_not_to_do_does_not_lead_the_offer(real_embedder):
    """Round twelve's variant (2026-12-06, night): ``mail:delete`` led; the negated verb is left out
    of the request (``guard.without_negated``), the email it names stays."""
    from eris_lab._files import repo_root
    from eris_lab.catalog import load

    router = Router.with_calibrated_knobs(load(repo_root() / "descriptors"), real_embedder)
    routed = router.route("don't delete the email from Sarah, just move it to the archive")
    assert routed.offer.names[:1] == ("mail:move",), routed.decision.reason
    # round thirteen: the object put in front of the request read as a request to read it (mail:read
    # led); it takes the place of the request's pronoun
    for text, first in (("don't archive the email from Tom, delete it", "mail:delete"),
                        ("don't delete the email from Acme, just file it in the Finance folder", "mail:move")):
        routed = router.route(text)
        assert routed.offer.names[:1] == (first,), (text, routed.offer.names, routed.decision.reason)
