"""ThresholdTuner: scikit-learn conventions, the constrained objective, cached scoring, saved knobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from eris_lab.errors import ErisLabError, NotFittedError
from eris_lab.eval.datasets import load_suite
from eris_lab.eval.tuner import DEFAULT_GRID, ThresholdTuner, catalog_hash, tune_command
from eris_lab.knobs import Knobs
from eris_lab.strategies import MemoEmbedder

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def suite():
    return load_suite(str(DATA / "mini_queries.jsonl"), catalog=DATA / "mini_catalog.toml")


@pytest.fixture
def xy(suite):
    return list(suite.queries), [q.gold for q in suite.queries]


@pytest.fixture
def memo(fake_embedder):
    return MemoEmbedder(fake_embedder, disk=False)


SMALL_GRID = {"threshold": (0.3, 0.5), "single_hit_floor": (0.5, 0.6), "margin": (0.05,), "offer_cap": (0,),
              "unsure_fallback": ("full_roster",)}


def test_init_stores_params_unchanged_and_get_params_reads_the_signature(memo, suite):
    grid = {"threshold": [0.4]}
    t = ThresholdTuner(catalog=suite.catalog, embedder=memo, grid=grid, max_mean_offer=3)
    params = t.get_params()
    assert params["grid"] is grid and params["max_mean_offer"] == 3 and params["random_state"] == 0
    assert t.set_params(n_iter=5) is t and t.n_iter == 5


def test_fit_returns_self_and_sets_fitted_attributes(memo, suite, xy):
    t = ThresholdTuner(catalog=suite.catalog, embedder=memo, grid=SMALL_GRID, domain_floors=False)
    assert t.fit(*xy) is t
    assert isinstance(t.knobs_, Knobs)
    assert len(t.scores_) == 4  # 2 x 2 x 1 points, all with floor >= threshold
    assert t.front_ and all(a["mean_offer"] <= b["mean_offer"] and a["recall"] < b["recall"]
                            for a, b in zip(t.front_, t.front_[1:]))
    assert t.knobs_.notes["objective"] == "recall" and t.knobs_.notes["n_train"] == 10


def test_grid_points_rescore_cached_similarities_and_never_re_embed(fake_embedder, suite, xy):
    small = MemoEmbedder(fake_embedder, disk=False)
    ThresholdTuner(catalog=suite.catalog, embedder=small, grid={**SMALL_GRID, "threshold": (0.5,)},
                   domain_floors=False).fit(*xy)
    embedded = fake_embedder.texts_embedded
    big = ThresholdTuner(catalog=suite.catalog, embedder=small).fit(*xy)  # hundreds of points, same texts
    assert len(big.scores_) > 200
    assert fake_embedder.texts_embedded == embedded


def test_chosen_point_maximises_recall_within_the_constraints(memo, suite, xy):
    t = ThresholdTuner(catalog=suite.catalog, embedder=memo, max_lock_in=0.0, max_mean_offer=4.0,
                       domain_floors=False).fit(*xy)
    feasible = [e for e in t.scores_ if e["lock_in"] <= 0.0 and e["mean_offer"] <= 4.0]
    assert t.feasible_ and t.best_["recall"] == max(e["recall"] for e in feasible)
    assert t.best_["lock_in"] == 0.0 and t.best_["mean_offer"] <= 4.0


def test_impossible_constraints_keep_the_least_violating_point_and_say_so(memo, suite, xy):
    t = ThresholdTuner(catalog=suite.catalog, embedder=memo, max_mean_offer=0.0, grid=SMALL_GRID,
                       domain_floors=False).fit(*xy)
    assert not t.feasible_ and t.knobs_.notes["feasible"] is False
    assert t.best_["mean_offer"] == min(e["mean_offer"] for e in t.scores_)


def test_offer_cap_and_fallback_are_searched_too(memo, suite, xy):
    t = ThresholdTuner(catalog=suite.catalog, embedder=memo, grid={**SMALL_GRID, "offer_cap": (0, 2),
                                                                   "unsure_fallback": ("full_roster", "domain_cluster")},
                       domain_floors=False).fit(*xy)
    assert len(t.scores_) == 16
    assert {(e["offer_cap"], e["unsure_fallback"]) for e in t.scores_} == {
        (0, "full_roster"), (0, "domain_cluster"), (2, "full_roster"), (2, "domain_cluster")}
    assert t.knobs_.offer_cap == t.best_["offer_cap"]


def test_random_search_is_reproducible_with_random_state(memo, suite, xy):
    a = ThresholdTuner(catalog=suite.catalog, embedder=memo, search="random", n_iter=7, domain_floors=False).fit(*xy)
    b = ThresholdTuner(catalog=suite.catalog, embedder=memo, search="random", n_iter=7, domain_floors=False).fit(*xy)
    assert [e["threshold"] for e in a.scores_] == [e["threshold"] for e in b.scores_]
    assert len(a.scores_) == 7


def test_domain_floors_are_kept_only_when_they_improve_the_objective(memo, suite, xy):
    t = ThresholdTuner(catalog=suite.catalog, embedder=memo, grid=SMALL_GRID).fit(*xy)
    plain = ThresholdTuner(catalog=suite.catalog, embedder=memo, grid=SMALL_GRID, domain_floors=False).fit(*xy)
    if t.knobs_.domain_floors:
        assert t.best_["mean_offer"] < plain.best_["mean_offer"] or t.best_["recall"] > plain.best_["recall"]
    else:
        assert t.best_ == plain.best_


def test_score_reports_other_queries_and_needs_fit(memo, suite, xy):
    t = ThresholdTuner(catalog=suite.catalog, embedder=memo, grid=SMALL_GRID)
    with pytest.raises(NotFittedError, match="not fitted yet. Call 'fit'"):
        t.score(*xy)
    t.fit(*xy)
    assert set(t.score(*xy)) >= {"recall", "lock_in", "mean_offer"}


@pytest.mark.parametrize("params,message", [
    ({"objective": "f1"}, "The 'objective' parameter of ThresholdTuner must be a str among"),
    ({"max_lock_in": 2}, "The 'max_lock_in' parameter of ThresholdTuner must be a float in the range [0.0, 1.0]. Got 2 instead."),
    ({"n_iter": 0}, "The 'n_iter' parameter of ThresholdTuner must be an int in the range [1, inf). Got 0 instead."),
])
def test_parameters_are_validated_in_fit(memo, suite, xy, params, message):
    t = ThresholdTuner(catalog=suite.catalog, embedder=memo, **params)  # construction never validates
    with pytest.raises(ErisLabError) as err:
        t.fit(*xy)
    assert message in str(err.value)


def test_inconsistent_lengths_name_both_counts(memo, suite, xy):
    with pytest.raises(ErisLabError, match=r"inconsistent numbers of samples: \[10, 9\]"):
        ThresholdTuner(catalog=suite.catalog, embedder=memo).fit(xy[0], xy[1][:9])


def test_plain_text_queries_use_the_catalog_param(memo, suite):
    t = ThresholdTuner(catalog=suite.catalog, embedder=memo, grid=SMALL_GRID).fit(
        ["check my inbox for new email", "hello there"], [["mail:check"], []])
    assert t.best_["recall"] in (0.0, 1.0)


def test_tune_command_saves_knobs_with_provenance(tmp_path, fake_embedder):
    out = tmp_path / "k" / "knobs.toml"
    report = tune_command(str(DATA / "mini_queries.jsonl"), catalog=str(DATA / "mini_catalog.toml"), out=str(out),
                          embedder=fake_embedder, progress=False)
    knobs = Knobs.load(out)
    notes = knobs.notes
    assert notes["model"] == fake_embedder.model_id == knobs.embedding_model
    assert notes["catalog_sha256"] == catalog_hash(load_suite(str(DATA / "mini_queries.jsonl"),
                                                              catalog=DATA / "mini_catalog.toml").catalog)
    assert notes["split"] == "train" and notes["test_suite"].endswith("(test split)")
    assert set(notes["train"]) >= {"recall", "lock_in", "mean_offer"} and "recall" in notes["test"]
    assert set(report) >= {"defaults", "grid", "random", "front", "knobs"}
    assert knobs.threshold in DEFAULT_GRID["threshold"]
    assert [p.name for p in out.parent.iterdir()] == ["knobs.toml"]  # atomic write left no temp file
