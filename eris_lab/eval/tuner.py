"""Fit the router's thresholds on labelled queries, scikit-learn style, with an explicit objective.

``ThresholdTuner(...).fit(queries, labels)`` embeds every query **once** (``EmbeddingPolicy.scored``:
every tool's cosine, guards applied, no threshold), then re-decides those cached scores at each
candidate point (``EmbeddingPolicy.decide_scored``), so a grid of hundreds of points costs
policy calls, never model calls.

Objective (``objective="recall"``): maximise recall subject to ``lock_in <= max_lock_in`` and
``mean_offer <= max_mean_offer``; ties go to the smaller mean offer, then to the point nearest
the defaults. When no point meets the constraints, the one violating them least is kept and
``feasible_`` is False (the reason is recorded, not hidden). ``objective="cost"`` minimises
``(1 - recall) + lock_in_weight * lock_in + offer_weight * mean_offer / n_tools`` instead.

``search="grid"`` walks :data:`DEFAULT_GRID` (or ``grid``); ``search="random"`` draws ``n_iter``
points uniformly around the defaults (threshold and floor +-0.1, margin in [0, 0.1]), the way
semantic-router's ``fit`` random-searches thresholds, for comparison (the discrete knobs are
drawn from the grid's values, so both searches reach the same kinds of point). After the global point,
per-domain floors are tried greedily (``domain_floors=True``) and kept only when they improve
the objective on the training data.

The tuner states no coverage: for knobs that promise one from labelled queries (split conformal,
issue 18), ``eris-lab calibrate --suite NAME`` (``calibration.calibrate(labelled=...)``).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import inspect
import itertools
import json
import math
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..catalog import Catalog, domain_of, enrich_for_routing
from ..embed import Embedder
from ..errors import ErisLabError, NotFittedError
from ..knobs import Knobs
from ..strategies import Context, EmbeddingPolicy
from ..strategies.embedding import Scored
from .datasets import Query

__all__ = ["ThresholdTuner", "NotFittedError", "DEFAULT_GRID", "catalog_hash", "tune_command", "format_tune"]

#: Grid of the global knobs: cosines centred on DESIGN.md's defaults 0.50 / 0.58 / 0.05, plus the
#: two knobs that bound the offer size (``offer_cap``; ``unsure_fallback``: a demoted lone hit
#: falls back to the full roster or to its domain). Without them a mean offer <= 5 is out of
#: reach on the demo catalogue: lower thresholds offer every hit, higher ones fall back to the
#: roster (measured with this tuner, reports/knobs-demo.toml, first run). Thresholds go down to
#: 0.20 because MiniLM's best cosine on the demo catalogue is often below 0.40. The grid is kept
#: small (738 points) because each point costs one ``policy.decide`` per query (~0.6 ms on the
#: 56-tool demo catalogue, most of it ``guard.tool_keywords`` recomputed per call).
DEFAULT_GRID: dict[str, tuple[Any, ...]] = {
    "threshold": tuple(round(float(x), 2) for x in np.arange(0.20, 0.701, 0.05)),
    "single_hit_floor": (0.40, 0.50, 0.58, 0.65, 0.75),
    "margin": (0.0, 0.05, 0.10),
    "offer_cap": (0, 4, 8),
    "unsure_fallback": ("full_roster", "domain_cluster"),
}
_CONTINUOUS = ("threshold", "single_hit_floor", "margin")
DOMAIN_FLOOR_STEPS = (0.03, 0.06, 0.10, 0.15)  # above the fitted threshold
OBJECTIVES = ("recall", "cost")
SEARCHES = ("grid", "random")


def catalog_hash(catalog: Catalog) -> str:
    """SHA-256 of the catalogue's names, routing texts and schemas (records what knobs were fitted on)."""
    data = [[t.name, enrich_for_routing(t), t.parameters] for t in catalog]
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def _param_error(owner: str, name: str, allowed: str, value: Any) -> ErisLabError:
    return ErisLabError(f"The {name!r} parameter of {owner} must be {allowed}. Got {value!r} instead.")


@dataclass(frozen=True, slots=True)
class _Item:
    strategy: EmbeddingPolicy
    scored: Scored
    gold: frozenset[str]
    needs_tool: bool
    any_gold: bool  # BFCL live_relevance: one offered candidate is enough
    n_tools: int


class ThresholdTuner:
    """Fit ``threshold``, ``single_hit_floor``, ``margin`` and per-domain floors.

    Parameters
    ----------
    catalog : Catalog, optional
        The catalogue for plain-text queries (a :class:`~.datasets.Query` with its own catalogue
        uses that). Default None.
    embedder : Embedder, optional
        Default: the bundled all-MiniLM-L6-v2. Wrap it in ``MemoEmbedder`` to share vectors.
    base_knobs : Knobs, optional
        Knobs not tuned here come from it. Default ``Knobs()``.
    objective : {"recall", "cost"}
        Default ``"recall"`` (constrained, see module docstring).
    max_lock_in : float in [0, 1]
        Default 0.01.
    max_mean_offer : float > 0
        Default 5.0.
    lock_in_weight, offer_weight : float
        Weights of the ``cost`` objective. Defaults 10.0 and 1.0.
    search : {"grid", "random"}
        Default ``"grid"``.
    grid : mapping of str to sequence of float, optional
        Overrides :data:`DEFAULT_GRID` entries.
    n_iter : int
        Points drawn by random search. Default 60.
    domain_floors : bool
        Also fit per-domain floors (greedy, after the global point). Default True.
    random_state : int or None
        Seed of random search; turned into a generator in ``fit``. Default 0.

    Attributes
    ----------
    knobs_ : Knobs
        The chosen knobs (``notes`` records objective, constraints and train scores).
    scores_ : list of dict
        Every evaluated point: its knobs and metrics (``recall``, ``lock_in``, ``mean_offer``,
        ``empty_rate``, ``full_roster_rate``, ``feasible``, ``cost``).
    front_ : list of dict
        Pareto points of ``scores_`` over (mean_offer lower, recall higher), by mean offer.
    best_ : dict
        The chosen point's entry (after domain floors).
    feasible_ : bool
        Whether the chosen point meets the constraints.

    Examples
    --------
    >>> tuner = ThresholdTuner(catalog=cat, embedder=emb).fit(texts, golds)  # doctest: +SKIP
    >>> tuner.knobs_.save("knobs.toml")  # doctest: +SKIP
    """

    def __init__(self, *, catalog: Catalog | None = None, embedder: Embedder | None = None,
                 base_knobs: Knobs | None = None, objective: str = "recall", max_lock_in: float = 0.01,
                 max_mean_offer: float = 5.0, lock_in_weight: float = 10.0, offer_weight: float = 1.0,
                 search: str = "grid", grid: Mapping[str, Sequence[float]] | None = None, n_iter: int = 60,
                 domain_floors: bool = True, random_state: int | None = 0) -> None:
        self.catalog = catalog
        self.embedder = embedder
        self.base_knobs = base_knobs
        self.objective = objective
        self.max_lock_in = max_lock_in
        self.max_mean_offer = max_mean_offer
        self.lock_in_weight = lock_in_weight
        self.offer_weight = offer_weight
        self.search = search
        self.grid = grid
        self.n_iter = n_iter
        self.domain_floors = domain_floors
        self.random_state = random_state

    # -- scikit-learn's BaseEstimator surface --------------------------------------------------
    @classmethod
    def _get_param_names(cls) -> list[str]:
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> "ThresholdTuner":
        valid = self._get_param_names()
        for key, value in params.items():
            if key not in valid:
                raise ErisLabError(f"Invalid parameter {key!r} for ThresholdTuner; valid parameters are {valid}.")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.get_params().items() if v is not inspect.signature(type(self).__init__).parameters[k].default}
        return f"ThresholdTuner({', '.join(f'{k}={v!r}' for k, v in changed.items() if k not in ('embedder', 'catalog'))})"

    def _validate_params(self) -> None:
        owner = "ThresholdTuner"
        if self.objective not in OBJECTIVES:
            raise _param_error(owner, "objective", f"a str among {set(OBJECTIVES)}", self.objective)
        if self.search not in SEARCHES:
            raise _param_error(owner, "search", f"a str among {set(SEARCHES)}", self.search)
        for name, low, high in (("max_lock_in", 0.0, 1.0), ("max_mean_offer", 0.0, math.inf)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise _param_error(owner, name, f"a float in the range [{low}, {high}]", value)
        if isinstance(self.n_iter, bool) or not isinstance(self.n_iter, int) or self.n_iter < 1:
            raise _param_error(owner, "n_iter", "an int in the range [1, inf)", self.n_iter)
        for key in (self.grid or {}):
            if key not in DEFAULT_GRID:
                raise _param_error(owner, "grid", f"a dict with keys among {set(DEFAULT_GRID)}", dict(self.grid))

    # -- fitting ----------------------------------------------------------------------------------
    def _items(self, queries: Sequence[Any], labels: Sequence[Sequence[str]]) -> list[_Item]:
        if len(queries) != len(labels):
            raise ErisLabError(f"Found input variables with inconsistent numbers of samples: [{len(queries)}, {len(labels)}]")
        if not queries:
            raise ErisLabError("ThresholdTuner.fit needs at least one query; got 0")
        base = self.base_knobs if self.base_knobs is not None else Knobs()
        strategies: dict[int, EmbeddingPolicy] = {}
        items: list[_Item] = []
        for q, gold in zip(queries, labels):
            if isinstance(q, Query):
                text, context, catalog = q.query, Context(history=q.history), q.catalog or self.catalog
            else:
                text, context, catalog = str(q), Context(), self.catalog
            if catalog is not None and len(catalog) == 0:
                continue  # a BFCL case without candidates: no knob changes its (empty) offer
            if catalog is None:
                raise ErisLabError("a query has no catalogue; pass catalog= or Query records with one",
                                   where="ThresholdTuner.fit")
            strategy = strategies.get(id(catalog))
            if strategy is None:
                strategy = EmbeddingPolicy(knobs=base, embedder=self.embedder).fit(catalog)
                strategies[id(catalog)] = strategy
            expect_any = isinstance(q, Query) and q.expect == "any"
            items.append(_Item(strategy, strategy.scored(text, context), frozenset(gold), bool(gold), expect_any,
                               len(catalog)))
        return items

    def _metrics(self, items: Sequence[_Item], knobs: Knobs) -> dict[str, Any]:
        recalled, locked, sizes, empty, roster = [], [], [], [], []
        offer_frac = []
        for it in items:
            offer = it.strategy.decide_scored(it.scored, knobs).offer
            names = set(offer.names)
            if it.needs_tool:
                recalled.append(bool(names & it.gold) if it.any_gold else it.gold <= names)
            locked.append(len(offer.names) == 1 and offer.names[0] not in it.gold)
            sizes.append(len(offer.names))
            offer_frac.append(len(offer.names) / max(it.n_tools, 1))
            empty.append(not offer.names)
            roster.append(offer.kind == "full_roster")
        recall = float(np.mean(recalled)) if recalled else 0.0
        lock_in = float(np.mean(locked))
        mean_offer = float(np.mean(sizes))
        feasible = lock_in <= self.max_lock_in + 1e-12 and mean_offer <= self.max_mean_offer + 1e-12
        cost = (1 - recall) + self.lock_in_weight * lock_in + self.offer_weight * float(np.mean(offer_frac))
        violation = max(0.0, lock_in - self.max_lock_in) * 100 + max(0.0, mean_offer - self.max_mean_offer)
        return {"recall": round(recall, 6), "lock_in": round(lock_in, 6), "mean_offer": round(mean_offer, 4),
                "empty_rate": round(float(np.mean(empty)), 6), "full_roster_rate": round(float(np.mean(roster)), 6),
                "feasible": feasible, "cost": round(cost, 6), "violation": round(violation, 6)}

    def _key(self, entry: Mapping[str, Any], base: Knobs) -> tuple:
        distance = (abs(entry["threshold"] - base.threshold) + abs(entry["single_hit_floor"] - base.single_hit_floor)
                    + abs(entry["margin"] - base.margin))
        if self.objective == "cost":
            return (-entry["cost"], -distance)
        if entry["feasible"]:
            return (1, entry["recall"], -entry["mean_offer"], -distance)
        return (0, -entry["violation"], entry["recall"], -distance)

    def _points(self, base: Knobs) -> list[dict[str, Any]]:
        grid = {**DEFAULT_GRID, **{k: tuple(v) for k, v in (self.grid or {}).items()}}
        if self.search == "grid":
            keys = list(grid)
            points = [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]
            return [{k: (float(v) if k in _CONTINUOUS else v) for k, v in p.items()}
                    for p in points if p["single_hit_floor"] >= p["threshold"]]
        rng = np.random.default_rng(self.random_state)
        points = []
        for _ in range(self.n_iter):
            t = float(np.clip(base.threshold + rng.uniform(-0.1, 0.1), -1, 1))
            f = float(np.clip(base.single_hit_floor + rng.uniform(-0.1, 0.1), t, 1))
            m = float(rng.uniform(0.0, 0.1))
            point = {"threshold": round(t, 4), "single_hit_floor": round(f, 4), "margin": round(m, 4)}
            for key in grid:
                if key not in _CONTINUOUS:
                    values = grid[key]
                    point[key] = values[int(rng.integers(len(values)))]
            points.append(point)
        return points

    def fit(self, queries: Sequence[Any], labels: Sequence[Sequence[str]]) -> "ThresholdTuner":
        """Fit on ``queries`` (strings, or :class:`~.datasets.Query` records) and their gold tool names.

        Parameters
        ----------
        queries : sequence of str or Query, length n_samples
        labels : sequence of sequence of str, length n_samples
            Gold tool names per query; empty = no tool should be offered.

        Returns
        -------
        self
        """
        self._validate_params()
        base = self.base_knobs if self.base_knobs is not None else Knobs()
        items = self._items(list(queries), list(labels))
        self._items_ = items
        scores = []
        for point in self._points(base):
            scores.append({**point, **self._metrics(items, base.replace(**point))})
        best = max(scores, key=lambda e: self._key(e, base))
        point = {k: best[k] for k in best if k in DEFAULT_GRID}
        knobs = base.replace(**point)
        best = dict(best)
        floors: dict[str, float] = {}
        if self.domain_floors:
            domains = sorted({domain_of(h.name) for it in items for h in it.scored.hits[:5]} - {""})
            for domain in domains:
                for step in DOMAIN_FLOOR_STEPS:
                    trial_floors = {**floors, domain: round(min(1.0, knobs.threshold + step), 4)}
                    trial = knobs.replace(domain_floors=trial_floors)
                    entry = {**point, "domain_floors": trial_floors, **self._metrics(items, trial)}
                    scores.append(entry)
                    if self._key(entry, base) > self._key(best, base):
                        best, floors = entry, trial_floors
            knobs = knobs.replace(domain_floors=floors)
        self.scores_ = scores
        self.best_ = best
        self.feasible_ = bool(best["feasible"])
        self.front_ = _pareto(scores)
        self.knobs_ = knobs.replace(notes={
            "tuner": "ThresholdTuner",
            "objective": self.objective,
            "search": self.search,
            "constraints": {"max_lock_in": self.max_lock_in, "max_mean_offer": self.max_mean_offer},
            "feasible": self.feasible_,
            "n_points": len(scores),
            "n_train": len(items),
            "train": {k: best[k] for k in ("recall", "lock_in", "mean_offer", "empty_rate", "full_roster_rate")},
        })
        return self

    def score(self, queries: Sequence[Any], labels: Sequence[Sequence[str]], knobs: Knobs | None = None) -> dict[str, Any]:
        """Metrics of ``knobs`` (default the fitted ``knobs_``) on other queries (the test split)."""
        if knobs is None:
            if not hasattr(self, "knobs_"):
                raise NotFittedError("This ThresholdTuner instance is not fitted yet. Call 'fit' with appropriate "
                                     "arguments before using this estimator.")
            knobs = self.knobs_
        self._validate_params()
        return self._metrics(self._items(list(queries), list(labels)), knobs)


def _pareto(scores: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Points not beaten on both mean offer (lower) and recall (higher), by mean offer."""
    front: list[dict[str, Any]] = []
    for e in sorted(scores, key=lambda e: (e["mean_offer"], -e["recall"])):
        if not front or e["recall"] > front[-1]["recall"]:
            front.append(dict(e))
    return front


# ---------------------------------------------------------------------------------------------
# The `eris-lab tune` command
# ---------------------------------------------------------------------------------------------


def _cases_hash(suite) -> str:
    """SHA-256 over the per-case catalogues of a BFCL suite (sorted hashes of the distinct ones)."""
    distinct = {id(q.catalog): q.catalog for q in suite.queries if q.catalog is not None}
    hashes = sorted(catalog_hash(c) for c in distinct.values())
    return hashlib.sha256("".join(hashes).encode()).hexdigest()


def _test_suite_name(train: str) -> str | None:
    return train[: -len("-train")] + "-test" if train.endswith("-train") else None


def tune_command(suite: str, *, test_suite: str | None = None, catalog: str | None = None, out: str,
                 max_lock_in: float = 0.01, max_mean_offer: float = 5.0, limit: int | None = None,
                 embedder: Embedder | None = None, progress: bool = True) -> dict[str, Any]:
    """Fit on ``suite`` (grid and random search), report on the test suite, save the grid knobs.

    The test suite is ``test_suite``, else the ``-test`` twin of a ``-train`` name, else the
    ``test`` split of the same suite (then the fit uses its ``train`` split).

    Returns
    -------
    dict
        ``suite``, ``test_suite``, ``out``, ``knobs``, ``defaults`` / ``grid`` / ``random``
        (each with ``train`` and ``test`` metrics), ``front`` and ``n_points``.
    """
    from .datasets import load_suite
    from .harness import prime, shared_embedder

    if test_suite is None and _test_suite_name(suite):
        train = load_suite(suite, catalog=catalog, limit=limit)
        test = load_suite(_test_suite_name(suite), catalog=catalog, limit=limit)
        test_name = _test_suite_name(suite)
    elif test_suite is not None:
        train = load_suite(suite, catalog=catalog, limit=limit)
        test = load_suite(test_suite, catalog=catalog, limit=limit)
        test_name = test_suite
    else:
        train = load_suite(suite, catalog=catalog, split="train", limit=limit)
        test = load_suite(suite, catalog=catalog, split="test", limit=limit)
        test_name = f"{suite} (test split)"
    memo = shared_embedder(embedder)
    for s in (train, test):
        prime(memo, s)

    def labelled(s):
        return list(s.queries), [q.gold for q in s.queries]

    xtr, ytr = labelled(train)
    xte, yte = labelled(test)
    common = dict(catalog=train.catalog, embedder=memo, max_lock_in=max_lock_in, max_mean_offer=max_mean_offer)
    if progress:
        print(f"tuning on {len(xtr)} queries of {suite}; testing on {len(xte)}", file=sys.stderr)
    grid = ThresholdTuner(**common).fit(xtr, ytr)
    rand = ThresholdTuner(**common, search="random", domain_floors=False).fit(xtr, ytr)
    defaults = Knobs()
    report = {
        "suite": suite,
        "test_suite": test_name,
        "out": str(out),
        "defaults": {"train": grid.score(xtr, ytr, defaults), "test": grid.score(xte, yte, defaults)},
        "grid": {"train": grid.best_, "test": grid.score(xte, yte), "feasible": grid.feasible_},
        "random": {"train": rand.best_, "test": rand.score(xte, yte), "feasible": rand.feasible_},
        "front": grid.front_,
        "n_points": {"grid": len(grid.scores_), "random": len(rand.scores_)},
    }
    cat = train.catalog
    notes = dict(grid.knobs_.notes)
    notes.update({
        "model": memo.model_id,
        "catalog": cat.source if cat is not None else "per-case candidates",
        "catalog_sha256": catalog_hash(cat) if cat is not None else _cases_hash(train),
        "train_suite": suite,
        "test_suite": test_name,
        "split": "train",
        "test": {k: report["grid"]["test"][k] for k in ("recall", "lock_in", "mean_offer", "empty_rate", "full_roster_rate")},
        "random_search_test": {k: report["random"]["test"][k] for k in ("recall", "lock_in", "mean_offer")},
        "defaults_test": {k: report["defaults"]["test"][k] for k in ("recall", "lock_in", "mean_offer")},
        "fitted_at": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    })
    knobs = grid.knobs_.replace(notes=notes, embedding_model=memo.model_id)
    knobs.save(out)
    report["knobs"] = {k: v for k, v in knobs.to_dict().items() if k != "notes"}
    return report


def format_tune(report: Mapping[str, Any]) -> str:
    """A readable summary of :func:`tune_command`'s report."""
    lines = [f"fit on {report['suite']}, tested on {report['test_suite']}; knobs written to {report['out']}", ""]
    header = (f"{'':10} {'split':6} {'recall':>7} {'lock_in':>8} {'mean_offer':>10} {'threshold':>9} {'floor':>6} "
              f"{'margin':>6} {'cap':>4} unsure_fallback")
    lines.append(header)
    defaults = Knobs()
    for name in ("defaults", "grid", "random"):
        entry = report[name]
        point = entry["train"] if name != "defaults" else {k: getattr(defaults, k) for k in DEFAULT_GRID}
        for split in ("train", "test"):
            m = entry[split]
            lines.append(f"{name:10} {split:6} {m['recall']:7.3f} {m['lock_in']:8.3f} {m['mean_offer']:10.2f} "
                         f"{point.get('threshold', 0):9.2f} {point.get('single_hit_floor', 0):6.2f} "
                         f"{point.get('margin', 0):6.2f} {point.get('offer_cap', 0):4} {point.get('unsure_fallback', '')}")
    floors = report["knobs"].get("domain_floors") or {}
    if floors:
        lines.append("domain floors: " + ", ".join(f"{d} {v:.2f}" for d, v in floors.items()))
    if not report["grid"]["feasible"]:
        lines.append("note: no grid point met the constraints; the least violating one was kept")
    lines.append("")
    lines.append("Pareto front (mean offer vs recall, train): "
                 + "; ".join(f"{e['mean_offer']:.2f} -> {e['recall']:.3f}" for e in report["front"][:12]))
    return "\n".join(lines)
