"""The calibrated policy in the tuning notebook (02): its point, its coverage, its relevance gate.

The sliders of the tuning view move DESIGN.md's reference knobs; the default policy is calibrated
per catalogue instead (``eris_lab.calibration``). This module puts it beside them, from cached
scores (each message embedded once, re-decided per knob setting with
``EmbeddingPolicy.decide_scored``):

- :meth:`Decided.point`: the calibrated offer as one point on the offer-size vs recall plane;
- :func:`coverage_rows`: promised against observed coverage across the miscoverage ``alpha``,
  label-free and (when the suite has a train split) fitted on the labelled train half, observed on
  the test half;
- :func:`relevance_rows`: the relevance gate's trade-off, recall on messages that need a tool
  against the empty-offer rate on messages that need none, one row per gate floor (issue 18:
  "measured jointly, never one side alone"), with and without the slot check (``slots.py``).

Suites with per-case catalogues (BFCL) are supported: each case keeps its own fitted policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..eval.datasets import Query, Suite
from ..eval.harness import prime, result_of, shared_embedder
from ..eval.metrics import QueryResult
from ..knobs import Knobs
from ..strategies import Context, EmbeddingPolicy
from ..strategies.embedding import Scored

__all__ = ["Decided", "coverage_rows", "relevance_rows", "RELEVANCE_FLOORS", "ALPHAS"]

#: Gate floors of the relevance trade-off (probabilities; 0 turns the gate off).
RELEVANCE_FLOORS = tuple(round(float(x), 2) for x in np.linspace(0.0, 0.95, 20))
#: Miscoverage levels of the coverage view.
ALPHAS = (0.02, 0.05, 0.1, 0.2, 0.3)


@dataclass
class _Case:
    query: Query
    policy: EmbeddingPolicy
    scored: Scored


class Decided:
    """Every query of one or more suites scored once under the calibrated policy of its catalogue.

    Parameters
    ----------
    suites : sequence of Suite
    embedder : Embedder, optional
        Shared (memoised) across suites; default the bundled MiniLM.
    knobs : Knobs, optional
        Knobs for every catalogue (default: each catalogue calibrated label-free, cached).
    """

    def __init__(self, suites: Sequence[Suite], embedder=None, *, knobs: Knobs | None = None) -> None:
        self.memo = shared_embedder(embedder)
        self.cases: list[_Case] = []
        for suite in suites:
            prime(self.memo, suite)
            fitted: dict[int, EmbeddingPolicy] = {}
            for q in suite.queries:
                catalog = suite.catalog_of(q)
                if len(catalog) == 0:  # a BFCL case without candidates: nothing to decide
                    continue
                if id(catalog) not in fitted:
                    fitted[id(catalog)] = EmbeddingPolicy(knobs=knobs, embedder=self.memo).fit(catalog)
                policy = fitted[id(catalog)]
                self.cases.append(_Case(q, policy, policy.scored(q.query, Context(history=q.history))))

    def results(self, **overrides: Any) -> list[QueryResult]:
        """Each query decided under its policy's knobs with ``overrides`` (``Knobs`` fields) laid over."""
        out = []
        for c in self.cases:
            routed = c.policy.decide_scored(c.scored, c.policy.knobs_.replace(**overrides) if overrides else None)
            out.append(result_of(c.query, routed))
        return out

    def point(self, **overrides: Any) -> dict[str, float]:
        """``{"mean_offer", "recall", "name_recall"}`` of the messages that need a tool (a point for
        ``viz.curve_figure``); ``name_recall`` counts any schema variant of a gold name (bfcl-pooled)."""
        needing = [r for r in self.results(**overrides) if r.needs_tool]
        return {"mean_offer": float(np.mean([len(r.offered) for r in needing])) if needing else 0.0,
                "recall": float(np.mean([r.recalled for r in needing])) if needing else float("nan"),
                "name_recall": float(np.mean([r.name_recalled for r in needing])) if needing else float("nan")}


def relevance_rows(decided: Decided, floors: Sequence[float] = RELEVANCE_FLOORS, **overrides: Any) -> list[dict[str, float]]:
    """The relevance gate's trade-off: one row per floor.

    ``overrides``: ``Knobs`` fields laid over every catalogue's knobs besides the floor
    (``slot_check="off"``: the same curve without ``policy.with_slots``).

    Returns
    -------
    list of dict
        ``{"floor", "recall", "empty_rate", "n_relevant", "n_irrelevant"}``: recall over the
        messages that need a tool, the empty-offer rate over those that need none (both in
        [0, 1]). Each query keeps its catalogue's gate weights; only the floor moves. A catalogue
        without a gate (no weights) never refuses, whatever the floor.
    """
    rows = []
    for floor in floors:
        results = decided.results(relevance_floor=float(floor), **overrides)
        relevant = [r for r in results if r.needs_tool]
        irrelevant = [r for r in results if not r.needs_tool]
        rows.append({"floor": float(floor),
                     "recall": float(np.mean([r.recalled for r in relevant])) if relevant else float("nan"),
                     "empty_rate": float(np.mean([not r.offered for r in irrelevant])) if irrelevant else float("nan"),
                     "n_relevant": len(relevant), "n_irrelevant": len(irrelevant)})
    return rows


def coverage_rows(suite: Suite, embedder=None, alphas: Sequence[float] = ALPHAS) -> list[dict[str, Any]]:
    """Promised against observed coverage of the calibrated offer, per ``alpha``.

    Label-free knobs are fitted on the suite's catalogue and observed on every labelled message
    (none was read by the fit). When the suite has a ``train`` split, knobs are also fitted on the
    train messages (``calibrate(labelled=...)``) and observed on the ``test`` split alone.

    Returns
    -------
    list of dict
        ``{"alpha", "promised", "label_free", "label_free_offer", "labelled", "labelled_offer"}``
        (coverage in [0, 1], offers in tools; the labelled pair is None without a train split).
        On a catalogue whose names have schema variants the promise and the observed coverage
        count any variant of a gold name (``calibration.name_variants``).

    Raises
    ------
    ErisLabError
        The suite has per-case catalogues (no one catalogue to calibrate).
    """
    from ..calibration import calibrate, name_variants
    from ..errors import ErisLabError

    if suite.catalog is None:
        raise ErisLabError(f"suite {suite.name!r} has per-case catalogues; coverage needs one shared catalogue",
                           where="coverage_rows")
    memo = shared_embedder(embedder)
    train = [q for q in suite.queries if q.split == "train" and q.gold]
    test = Suite(name=f"{suite.name} (test)", queries=tuple(q for q in suite.queries if q.split == "test"),
                 catalog=suite.catalog) if train else None
    observed = "name_recall" if name_variants(suite.catalog) is not None else "recall"
    rows = []
    for alpha in alphas:
        free = Decided([suite], memo, knobs=calibrate(suite.catalog, memo, alpha=alpha)).point()
        row = {"alpha": alpha, "promised": round(1 - alpha, 4), "label_free": free[observed],
               "label_free_offer": free["mean_offer"], "labelled": None, "labelled_offer": None}
        if test is not None:
            knobs = calibrate(suite.catalog, memo, alpha=alpha, labelled=[(q.query, q.gold) for q in train],
                              labelled_source=f"{suite.name} train split")
            held = Decided([test], memo, knobs=knobs).point()
            row.update(labelled=held[observed], labelled_offer=held["mean_offer"])
        rows.append(row)
    return rows
