"""Label-free calibration (issue 18): pseudo-queries, negatives, conformal sizes, the gate, the cache."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eris_lab import calibration
from eris_lab.calibration import (
    GATE_FEATURES,
    MIN_PSEUDO_QUERIES,
    WIDEN_BOUNDS,
    RelevanceGate,
    _promised,
    calibrate,
    calibrated_knobs,
    conformal_quantile,
    covered_at,
    fit_offer_knobs,
    load_negatives,
    pseudo_queries,
)
from eris_lab.catalog import Catalog, Example, Tool, tools_from_json
from eris_lab.errors import DataError
from eris_lab.knobs import Knobs

from conftest import ROOT


def _tool(name, description, params=None, examples=()):
    parameters = {"type": "object", "properties": params or {}}
    return Tool(name=name, description=description, parameters=parameters,
                examples_good=tuple(Example(text=e) for e in examples))


# -- pseudo-queries ------------------------------------------------------------------------------


def test_pseudo_queries_prefer_examples_then_parameter_descriptions():
    catalog = Catalog([
        _tool("a:one", "Does one thing.", {"city": {"type": "string", "description": "the city to look up"}},
              examples=("what is it like in Paris",)),
        _tool("b:two", "Does two things.", {"n": {"type": "integer", "description": "how many items to show"},
                                            "x": {"type": "string", "description": "ab"}}),
    ])
    got = [(p.text, p.tool) for p in pseudo_queries(catalog)]
    assert got[0] == ("what is it like in Paris", 0)
    assert ("the city to look up", 0) in got
    assert ("how many items to show", 1) in got
    assert not any(text == "ab" for text, _ in got)  # under three words: no pseudo-query


def test_pseudo_queries_of_a_bare_tool_come_from_its_text_held_out_and_are_capped():
    catalog = Catalog([
        _tool("get_weather", "The weather service for you. Tells you if it rains in a city."),
        _tool("set_timer", "Timer."),
        _tool("many", "Many.", {f"p{i}": {"type": "string", "description": f"parameter number {i} here"}
                                for i in range(9)}),
    ])
    got = pseudo_queries(catalog, per_tool=3)
    weather = [p for p in got if p.tool == 0]
    assert [p.text for p in weather] == ["The weather service for you.", "Tells you if it rains in a city.",
                                         "get weather"]
    for p in weather:  # leave-one-out: the tool is scored without the pseudo-query's own text
        assert p.held_out and not any(p.text in phrase for phrase in p.held_out)
    assert [p.text for p in got if p.tool == 1] == ["set timer"]
    assert len([p for p in got if p.tool == 2]) == 3 and all(p.held_out is None for p in got if p.tool == 2)


# -- conformal quantile ----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [19, 50, 200])
def test_conformal_quantile_covers_a_fresh_draw_at_the_promised_rate(n):
    # exchangeable scores: the quantile of n draws covers a new draw with probability >= 1 - alpha
    rng = np.random.default_rng(n)
    alpha = 0.1
    hits = []
    for _ in range(2000):
        draw = rng.normal(size=n + 1)
        hits.append(draw[-1] <= conformal_quantile(draw[:-1], alpha))
    assert np.mean(hits) >= 1 - alpha - 0.02


def test_conformal_quantile_with_too_few_scores_is_their_maximum_and_empty_is_infinite():
    assert conformal_quantile(np.array([0.1, 0.3, 0.2]), 0.05) == 0.3
    assert math.isinf(conformal_quantile(np.array([]), 0.05))


# -- negatives -------------------------------------------------------------------------------------


def test_shipped_negatives_hold_english_and_german_without_comments():
    negatives = load_negatives()
    assert len(negatives) >= 100 and len(set(negatives)) == len(negatives)
    assert not any(n.startswith("#") for n in negatives)
    assert "tell me something funny about penguins" in negatives and "kennst du einen guten Spruch" in negatives


def test_no_negative_copies_a_message_of_the_demo_suite():
    """The negatives train the relevance gate and the demo suite is reported: a negative that is
    (nearly) a demo message grades the gate on its own training data. 16 of demo's 64 no-tool
    messages had a copy among the negatives until 2026-12-01 (9 verbatim)."""
    import re

    from eris_lab.embed import make_encoder, normalize_rows
    from eris_lab.eval.datasets import load_suite

    def words(text):
        return re.findall(r"\w+", text.lower())

    negatives = load_negatives()
    messages = [q.query for q in load_suite("demo").queries]
    for negative in negatives:
        n = set(words(negative))
        for message in messages:
            m = set(words(message))
            assert " ".join(words(negative)) not in " ".join(words(message)), (negative, message)
            assert len(n & m) / len(n | m) < 0.6, (negative, message)
    encoder = make_encoder()
    cosines = normalize_rows(encoder.embed(messages)) @ normalize_rows(encoder.embed(list(negatives))).T
    i, j = np.unravel_index(cosines.argmax(), cosines.shape)
    assert cosines[i, j] < 0.8, (messages[i], negatives[j], float(cosines[i, j]))


def test_cache_key_follows_an_edited_negatives_file(tmp_path, monkeypatch):
    """The calibration cache is keyed on the negatives' text; the digest is memoised per file
    version, so an edit (new size or time) must still change it."""
    import os

    from eris_lab import calibration

    path = tmp_path / "negatives.txt"
    path.write_text("tell me a joke\nhow are you\n", encoding="utf-8")
    monkeypatch.setattr(calibration, "NEGATIVES_PATH", path)
    first = calibration._negatives_digest()
    assert calibration._negatives_digest() == first
    path.write_text("tell me a joke\nhow are you today\n", encoding="utf-8")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
    assert calibration._negatives_digest() != first


def test_negatives_file_that_cannot_be_read_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="negatives"):
        load_negatives(tmp_path / "missing.txt")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe hello")
    with pytest.raises(DataError):
        load_negatives(bad)


# -- the gate ----------------------------------------------------------------------------------------


def test_gate_features_shape_and_self_exclusion(fake_embedder):
    catalog = Catalog([_tool("w:now", "weather now in a city"), _tool("t:set", "start a timer")])
    vectors = fake_embedder.embed(["weather now in a city", "start a timer"])
    negatives = fake_embedder.embed(["tell me a joke", "how are you"])
    gate = RelevanceGate(catalog, vectors, negatives)
    feats = gate.features(negatives)
    assert feats.shape == (2, len(GATE_FEATURES))
    assert np.allclose(feats[:, 2], 1.0)  # each negative is its own nearest chit-chat ...
    assert (gate.features(negatives, exclude_negative=[0, 1])[:, 2] < 1.0).all()  # ... unless excluded
    p = RelevanceGate.probability(feats, (0.0, 1.0, 0.0, -1.0))
    assert p.shape == (2,) and ((0 < p) & (p < 1)).all()


# -- calibrate -------------------------------------------------------------------------------------


def _catalog_with_params(n_tools: int) -> Catalog:
    topics = ["weather", "timer", "music", "email", "calendar", "news", "map", "note", "photo", "bank",
              "train", "recipe", "stock", "light", "door", "shop", "translate", "book", "movie", "game"]
    tools = []
    for i in range(n_tools):
        topic = topics[i % len(topics)]
        tools.append(_tool(f"{topic}_{i}", f"Handle {topic} requests, variant {i}.",
                           {"q": {"type": "string", "description": f"the {topic} question to answer {i}"},
                            "r": {"type": "string", "description": f"extra {topic} detail for case {i}"}}))
    return Catalog(tools)


def test_calibrate_fits_ordered_knobs_with_provenance(fake_embedder):
    catalog = _catalog_with_params(30)  # 2 parameter descriptions + 1 held-out sentence per tool
    knobs = calibrate(catalog, fake_embedder, alpha=0.1)
    prov = knobs.notes["calibration"]
    assert prov["n_pseudo_queries"] == 90 >= MIN_PSEUDO_QUERIES and prov["promised_coverage"] == 0.9
    assert prov["embedding_model"] == fake_embedder.model_id == knobs.embedding_model
    assert knobs.threshold <= knobs.single_hit_floor <= knobs.forced_floor
    assert 3 <= knobs.widen_k <= calibration.WIDEN_BOUNDS[1] and knobs.offer_cap == 0
    assert knobs.unsure_fallback == knobs.empty_fallback == "ranked"
    assert knobs.uncovered_floor == calibration.UNCOVERED_FLOOR > Knobs().uncovered_floor == 0
    assert len(knobs.relevance_weights) == 1 + len(GATE_FEATURES) and 0 < knobs.relevance_floor < 1
    # the gate keeps about 1 - alpha of the pseudo-queries it was fitted on
    assert prov["pseudo_recall_at_threshold"] >= 0.9


def test_calibrate_a_tiny_catalogue_borrows_the_demo_catalogues_gate_only(fake_embedder, monkeypatch):
    demo = Knobs(threshold=0.2, single_hit_floor=0.6, subset_margin=0.12, widen_k=9, relevance_floor=0.3,
                 relevance_weights=(-1.0, 1.0, 0.5, -2.0), calibration="none")
    monkeypatch.setattr(calibration, "_prior_knobs", lambda embedder, alpha: demo)
    knobs = calibrate(Catalog([_tool("a", "first tool"), _tool("b", "second tool")]), fake_embedder)
    assert (knobs.relevance_floor, knobs.relevance_weights) == (demo.relevance_floor, demo.relevance_weights)
    reference = Knobs()
    # offer sizes stay the reference ones, on cosines standardised against the background
    for name in ("threshold", "single_hit_floor", "subset_margin", "widen_k", "calibration"):
        assert getattr(knobs, name) == getattr(reference, name), name
    assert knobs.unsure_fallback == "ranked" and "demo catalogue" in knobs.notes["calibration"]["method"]
    assert knobs.uncovered_floor == calibration.UNCOVERED_FLOOR  # BFCL's one-tool irrelevance cases land here


def test_calibrate_a_tiny_catalogue_keeps_reference_knobs_with_bounded_widening(fake_embedder, monkeypatch):
    monkeypatch.setattr(calibration, "_prior_knobs", lambda embedder, alpha: None)
    catalog = Catalog([_tool("a", "first tool"), _tool("b", "second tool")])
    knobs = calibrate(catalog, fake_embedder)
    reference = Knobs()
    assert (knobs.threshold, knobs.single_hit_floor, knobs.margin) == (
        reference.threshold, reference.single_hit_floor, reference.margin)
    assert knobs.unsure_fallback == "ranked" and knobs.relevance_floor == 0
    assert "too few pseudo-queries" in knobs.notes["calibration"]["method"]


def test_calibrate_rejects_alpha_outside_the_open_interval(fake_embedder):
    with pytest.raises(ValueError, match="alpha"):
        calibrate(_catalog_with_params(2), fake_embedder, alpha=1.0)


def test_calibrated_knobs_round_trip_and_come_from_the_cache(fake_embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("ERIS_LAB_CACHE", str(tmp_path / "own-cache"))
    monkeypatch.delenv("ERIS_LAB_CALIBRATION_CACHE")
    catalog = _catalog_with_params(25)
    first = calibrated_knobs(catalog, fake_embedder)
    files = list((tmp_path / "own-cache" / "calibration").glob("*.toml"))
    assert len(files) == 1 and Knobs.load(files[0]) == first
    monkeypatch.setattr(calibration, "calibrate", lambda *a, **k: pytest.fail("refitted despite the cache"))
    cached = calibrated_knobs(catalog, fake_embedder)
    assert cached.replace(notes={}) == first.replace(notes={})
    assert cached.notes["calibration"]["cached"] is True and "cached" not in first.notes["calibration"]
    assert cached.notes["calibration"]["catalog"] == catalog.source
    # a changed catalogue is another fingerprint: refitted
    with pytest.raises(pytest.fail.Exception):
        calibrated_knobs(Catalog(list(catalog)[:-1]), fake_embedder)


def test_a_damaged_cache_entry_is_refitted_not_trusted(fake_embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("ERIS_LAB_CALIBRATION_CACHE", str(tmp_path / "c" / "calibration"))
    catalog = _catalog_with_params(25)
    first = calibrated_knobs(catalog, fake_embedder)
    (path,) = (tmp_path / "c" / "calibration").glob("*.toml")
    path.write_text("threshold = 'broken", encoding="utf-8")
    refit = calibrated_knobs(catalog, fake_embedder)
    assert refit.replace(notes={}) == first.replace(notes={})  # only the timing in the provenance differs
    assert Knobs.load(path) == refit


def test_fit_offer_knobs_covers_every_gold_tool_of_exchangeable_messages():
    """Split conformal on ``top - lowest gold cosine``: the set of tools within ``subset_margin`` of
    the top holds every gold tool for about ``1 - alpha`` of fresh messages from the same source."""
    rng = np.random.default_rng(7)
    catalog = Catalog([_tool(f"t{i}", f"tool {i}") for i in range(40)])

    def draw(n):
        scores = rng.normal(0.3, 0.1, size=(n, 40))
        gold = [tuple(rng.choice(40, size=rng.integers(1, 3), replace=False)) for _ in range(n)]
        for row, g in zip(scores, gold):
            row[list(g)] += rng.uniform(0.0, 0.3, size=len(g))  # gold tools score higher, not always top
        return scores, gold

    alpha = 0.1
    fitted = fit_offer_knobs(catalog, *draw(400), alpha)
    test_scores, test_gold = draw(2000)
    top = test_scores.max(axis=1)
    covered = [all(top[i] - test_scores[i, g] <= fitted["subset_margin"] for g in gold)
               for i, gold in enumerate(test_gold)]
    assert abs(np.mean(covered) - (1 - alpha)) <= 0.03
    assert fitted["threshold"] <= fitted["single_hit_floor"] and 3 <= fitted["widen_k"] <= 16
    # a message that needs two tools is never "right" as a lone hit: the floor rises above single ones
    both = fit_offer_knobs(catalog, test_scores[:50], [tuple(range(2)) for _ in range(50)], alpha)
    assert both["single_hit_floor"] >= fitted["single_hit_floor"]


def test_widen_k_is_fitted_in_the_widening_order_with_the_pseudo_query_cut_out_of_its_tool():
    """``router.widening_key`` joins a lexical share on a catalogue without routing hints; a
    pseudo-query made of a parameter description would be its own tool's perfect lexical match, so
    the tool's share is read with that text cut out (leave-one-out, as for the cosines)."""
    from eris_lab.calibration import _pseudo_widening_key
    from eris_lab.router import lexical_shares

    tools = [Tool(name=f"tool_{i}", description=f"Does task number {i}.", parameters={"type": "object", "properties": {
        "value": {"type": "string", "description": f"the unique marker{i} word of tool {i}"}}}) for i in range(9)]
    catalog = Catalog(tools)
    pseudo = [p for p in pseudo_queries(catalog) if "marker" in p.text]
    assert pseudo
    scores = np.zeros((len(pseudo), len(catalog)), dtype=np.float32)
    key = _pseudo_widening_key(catalog, pseudo, scores, Knobs())
    plain = lexical_shares(catalog, [p.text for p in pseudo])
    for i, p in enumerate(pseudo):
        others = np.delete(np.arange(len(catalog)), p.tool)
        # the text is the tool's own parameter description: only it holds "markerN"
        assert plain[i, p.tool] == pytest.approx(1.0) and plain[i, others].max() < 0.9
        assert key[i, p.tool] < key[i, others].max()  # cut out, the other tools hold more of its words
    # widen_k follows the order it is given
    gold = [(p.tool,) for p in pseudo]
    worst = -np.eye(len(catalog), dtype=np.float32)[[p.tool for p in pseudo]]  # the gold tool last
    assert fit_offer_knobs(catalog, scores, gold, 0.1, widening=worst)["widen_k"] > \
        fit_offer_knobs(catalog, scores, gold, 0.1, widening=-worst)["widen_k"]
    hinted = Catalog([Tool(name="a", description="one thing", routing_hints=("do a",)), *tools[1:]])
    assert _pseudo_widening_key(hinted, pseudo, scores, Knobs()) is None
    assert _pseudo_widening_key(catalog, pseudo, scores, Knobs(widen_lexical_weight=0.0)) is None


def test_covered_at_is_the_exchangeable_lower_bound_on_coverage():
    seated = np.array([1, 2, 2, 3, 5, 8, 13, 40, 70])  # seats each of 9 calibration messages needed
    assert covered_at(seated, 3) == pytest.approx(4 / 10)
    assert covered_at(seated, 100) == pytest.approx(9 / 10)  # never 1: the new message is the 10th
    assert covered_at(np.array([], dtype=int), 5) == 0.0
    # a fresh draw from the same distribution needs at most k seats at least that often
    rng = np.random.default_rng(3)
    hits = []
    for _ in range(400):
        draw = rng.geometric(0.1, size=31)
        hits.append((draw[-1] <= 12) - covered_at(draw[:-1], 12))
    assert np.mean(hits) >= -0.02


def test_fit_promises_what_the_capped_widening_covers():
    scores = np.tile(np.linspace(1.0, 0.0, 40, dtype=np.float32), (60, 1))  # tool 0 best, tool 39 worst
    catalog = Catalog([Tool(name=f"t{i}", description="x") for i in range(40)])
    near = fit_offer_knobs(catalog, scores, [(i % 5,) for i in range(60)], 0.1)  # needs 5 seats
    far = fit_offer_knobs(catalog, scores, [(i % 40,) for i in range(60)], 0.1)  # needs 36 or more
    assert near["widen_needed"] == 5 and _promised(near, 0.1, labelled=False) == 0.9
    assert far["widen_needed"] > far["widen_k"] == WIDEN_BOUNDS[1]
    assert _promised(far, 0.1, labelled=False) == round(far["coverage_at_widen_k"], 4) < 0.9
    assert _promised(far, 0.1, labelled=True) == round(far["coverage_at_widen_k"] - 0.05, 4)


def test_schema_variants_of_one_name_serve_the_same_need():
    """BFCL's pooled catalogue keeps several schemas under one name ('f', 'f~2'): a need is covered
    when any variant is seated, so a twin ranked just above the gold variant costs no seat and no
    margin (counted strictly, bfcl-pooled's pseudo-queries promised 0.756 where real messages got 0.949
    by name)."""
    from eris_lab.calibration import name_variants

    plain = Catalog([Tool(name=f"t{i}", description="x") for i in range(6)])
    assert name_variants(plain) is None
    names = ["f", "f~2", "g", "h", "h~2", "h~3", *(f"t{i}" for i in range(34))]
    catalog = Catalog([Tool(name=n, description="x") for n in names])
    variants = name_variants(catalog)
    assert variants[0] == variants[1] == (0, 1) and variants[2] == (2,) and variants[5] == (3, 4, 5)
    # each message needs row 1 (f~2); its twin f (row 0) scores at the top, f~2 falls further each time
    rng = np.random.default_rng(5)
    scores = rng.uniform(0.0, 0.5, size=(60, len(names)))
    scores[:, 0] = 0.9
    scores[:, 1] = 0.5 - np.linspace(0.0, 0.45, 60)
    gold = [(1,)] * 60
    strict = fit_offer_knobs(catalog, scores, gold, 0.1)
    by_name = fit_offer_knobs(catalog, scores, gold, 0.1, variants=variants)
    assert by_name["widen_needed"] == 1 < strict["widen_needed"]
    assert abs(by_name["subset_margin"]) < 1e-9 < strict["subset_margin"]
    assert by_name["coverage_at_widen_k"] > strict["coverage_at_widen_k"]
    assert by_name["single_hit_floor"] <= 0.9 < strict["single_hit_floor"]  # the twin on top is right
    # a message needing two names is covered only once a variant of each is seated
    two = fit_offer_knobs(catalog, scores, [(1, 5)] * 60, 0.1, variants=variants)
    assert two["widen_needed"] > 1


def test_labelled_calibration_fits_the_offer_on_real_queries_and_lowers_the_gate(fake_embedder):
    catalog = _catalog_with_params(30)
    names = catalog.names
    free = calibrate(catalog, fake_embedder, alpha=0.1)
    # messages unlike the pseudo-queries: the gold tool's words are absent
    labelled = [(f"please do the thing number {i} for me", (names[i % 30],)) for i in range(60)]
    labelled.append(("hello there", ()))  # needs no tool: skipped
    knobs = calibrate(catalog, fake_embedder, alpha=0.1, labelled=labelled, labelled_source="unit test")
    prov = knobs.notes["calibration"]
    assert prov["n_labelled_queries"] == 60 and prov["labelled_source"] == "unit test"
    assert prov["method"].startswith("labelled") and prov["target_coverage"] == 0.9
    # these messages need more seats than WIDEN_BOUNDS allows: the promise says what 16 seats cover
    assert prov["widen_k_needed"] > knobs.widen_k == WIDEN_BOUNDS[1] and 0 < prov["promised_coverage"] < 0.9
    assert knobs.relevance_weights == free.relevance_weights  # the gate's model stays label-free ...
    assert knobs.relevance_floor <= free.relevance_floor  # ... its floor only ever lowered
    # at least 1 - alpha/2 of the labelled messages pass the gate
    from eris_lab.router import embed_tools

    vectors = embed_tools(catalog, fake_embedder.embed)
    q = fake_embedder.embed([t for t, g in labelled if g])
    gate = RelevanceGate(catalog, vectors, fake_embedder.embed(list(load_negatives())))
    p = RelevanceGate.probability(gate.features(q), knobs.relevance_weights)
    assert (p >= knobs.relevance_floor).mean() >= 0.95


@pytest.mark.parametrize("n_tools", [30, 4])  # a catalogue that fits, and one too small to fit on its own
def test_too_few_labelled_messages_never_promise_the_target(fake_embedder, n_tools):
    """A new user's trial: 9 labelled messages promised 0.95. Nine messages prove at most 9/10
    (split conformal: the new message is the tenth), less the gate's alpha/2, and the provenance
    says no finite-sample guarantee holds."""
    catalog = _catalog_with_params(n_tools)
    names = catalog.names
    labelled = [(f"{names[i % n_tools].split('_')[0]} question {i}", (names[i % n_tools],)) for i in range(9)]
    prov = calibrate(catalog, fake_embedder, alpha=0.05, labelled=labelled).notes["calibration"]
    assert prov["finite_sample_guarantee"] is False
    assert prov["promised_coverage"] <= round(9 / 10 - 0.025, 4) < prov["target_coverage"]
    many = [(f"{names[i % n_tools].split('_')[0]} question {i}", (names[i % n_tools],)) for i in range(80)]
    assert calibrate(catalog, fake_embedder, alpha=0.05, labelled=many).notes["calibration"]["finite_sample_guarantee"]


def test_labelled_calibration_rejects_unknown_gold_and_all_no_tool_queries(fake_embedder):
    catalog = _catalog_with_params(30)
    with pytest.raises(DataError, match="not in the catalogue"):
        calibrate(catalog, fake_embedder, labelled=[("do it", ("nope",))])
    with pytest.raises(DataError, match="no labelled query needs a tool"):
        calibrate(catalog, fake_embedder, labelled=[("hi", ())])


# -- with the real embedder: an unseen, hint-less catalogue is narrowed -----------------------------


@pytest.fixture(scope="module")
def minilm():
    from eris_lab.embed import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def test_defaults_narrow_an_unseen_hintless_catalogue(minilm):
    """Issue 18 item 5: BFCL functions stripped to name and description, never seen by any
    hand-tuning; the calibrated defaults must not fall back to the whole roster."""
    from eris_lab.eval.datasets import load_suite
    from eris_lab.strategies import Context, make

    suite = load_suite("bfcl-pooled")
    queries = suite.queries[::12]  # 88 messages, a fixed sample
    gold = {g for q in queries for g in q.gold}
    # a few hundred tools: every gold tool of the sample, then the pool's first tools as distractors
    tools = [t for t in suite.catalog if t.name in gold]
    tools += [t for t in suite.catalog if t.name not in gold][:300 - len(tools)]
    stripped = Catalog(tools_from_json([{"name": t.name, "description": t.description} for t in tools]))
    memo_policy = make("policy", embedder=minilm).fit(stripped)
    dense = make("dense:k=8", embedder=minilm).fit(stripped)
    offers = [memo_policy.offer(q.query, Context(history=q.history)) for q in queries]
    full = np.mean([o.kind == "full_roster" for o in offers])
    mean_offer = np.mean([len(o.names) for o in offers])
    recall = np.mean([all(g in o.names for g in q.gold) for o, q in zip(offers, queries)])
    dense_recall = np.mean([all(g in dense.offer(q.query).names for g in q.gold) for q in queries])
    assert full <= 0.05 and mean_offer <= 16
    assert recall >= dense_recall - 0.05, (recall, dense_recall, mean_offer)


def test_cache_key_changes_with_the_negatives(tmp_path, monkeypatch):
    catalog = Catalog([Tool(name="a:b", description="read a file")])
    before = calibration._cache_path(catalog, "m", 0.05)
    edited = tmp_path / "negatives.txt"
    edited.write_text(calibration.NEGATIVES_PATH.read_text(encoding="utf-8") + "\none more line\n", encoding="utf-8")
    monkeypatch.setattr(calibration, "NEGATIVES_PATH", edited)
    assert calibration._cache_path(catalog, "m", 0.05) != before


def test_is_cached_tells_a_first_fit_from_a_warm_start(tmp_path, monkeypatch, fake_embedder, capsys):
    """The command line says why a first route waits (calibration.is_cached), and only then."""
    from eris_lab import cli
    from eris_lab.calibration import calibrated_knobs, is_cached
    from eris_lab.catalog import load

    monkeypatch.setenv("ERIS_LAB_CALIBRATION_CACHE", str(tmp_path / "cal"))
    catalog = load(ROOT / "tests" / "data" / "mini_catalog.toml")
    assert not is_cached(catalog, fake_embedder)
    calibrated_knobs(catalog, fake_embedder)
    assert is_cached(catalog, fake_embedder)
    assert not is_cached(catalog, fake_embedder, alpha=0.2)  # another promise is another fit

    monkeypatch.setattr(cli.sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.setattr("eris_lab.embed.make_encoder", lambda *a, **k: fake_embedder)
    cli._router(catalog, None)
    assert "calibrating its knobs" not in capsys.readouterr().err  # warm: nothing said
    cli._router(load(ROOT / "descriptors" / "clock.toml"), None)
    assert "first use of this catalogue" in capsys.readouterr().err
