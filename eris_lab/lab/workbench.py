"""Threshold tuning on cached similarities: the engine behind notebook 02's sliders.

A :class:`Workbench` scores every query of a suite against every tool **once**
(``EmbeddingPolicy.scored``: guards included, no threshold) and afterwards only re-decides
(``EmbeddingPolicy.decide_scored``) for new knobs: a slider move never re-embeds. The widget
callbacks are plain functions of this module (:func:`view`, :func:`tune_and_save`) so they are
tested as functions; :func:`panel` wires them to ipywidgets with a :class:`Debouncer`, or, with
``interactive=False`` (papermill), renders the same tables and figure once, statically.

A redraw stays well under a second on the pooled BFCL suite (1,053 queries x 1,041 tools):
decisions are memoised per decision key and curves per (floor, margin, strategy), see
:class:`Workbench`; ``python -m eris_lab.bench tuning`` measures it.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import islice, takewhile
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..catalog import domain_of
from ..errors import ErisLabError
from ..eval.datasets import Suite
from ..eval.metrics import HEADLINE, QueryResult, evaluate, misrouted_row, rate
from ..knobs import Knobs
from ..policy import affinity_group, decision_keys, embedding_mask
from ..router import passes_domain_floor
from ..strategies import (
    Context,
    DenseTopK,
    EmbeddingPolicy,
    MemoEmbedder,
    knob_overrides,
)
from ..strategies.embedding import MAX_HITS

__all__ = ["Workbench", "View", "view", "tune_and_save", "panel", "Debouncer", "VARIANTS", "CURVE_THRESHOLDS",
           "METRIC_KEYS", "MISROUTED_KEYS", "QUICK_GRID", "REPORT_GRID", "GRIDS"]

#: Strategies of the registry (``strategies.STRATEGIES``) the picker offers, all re-decided from the
#: same cached scores: each policy variant with its ``knob_overrides``, and ``dense`` as
#: ``DenseTopK`` with the threshold slider as its ``min_score`` (the best ``DENSE_K`` tools at or
#: above it; the picker re-decides from the policy's cached scores, guards included). The view's
#: ``policy`` slides the three knobs of the reference policy (``policy-reference`` in the registry);
#: the calibrated ``policy`` strategy fits its knobs per catalogue (``calibration``) and is marked
#: as one point on the curve by the notebook.
VARIANTS: dict[str, dict[str, Any]] = {name: knob_overrides(name)
                                       for name in ("policy", "policy-cluster", "policy-abstain", "dense")}
DENSE_K = DenseTopK().k  # tools the ``dense`` variant offers at most: the registered strategy's default
CURVE_THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.20, 0.86, 0.02))  # threshold sweep of the curve
METRIC_KEYS = HEADLINE  # the view's metrics row: eval.metrics' headline numbers
MISROUTED_KEYS = ("query", "gold", "offered", "n_offered", "why", "rule")  # columns of the misrouted table
DEBOUNCE_S = 0.25  # slider changes closer than this redraw once
# The fast path (Workbench.headline / curve) memoises one verdict row per distinct decision key:
VERDICTS = ("n_offered", "recalled", "locked_in", "correct", "full_roster", "empty", "top1")
V_OFFERED, V_RECALLED, V_LOCKED, V_CORRECT, V_FULL_ROSTER, V_EMPTY, V_TOP1 = range(len(VERDICTS))
#: Knob fields a variant may override and still use the fast path: its key knows where the
#: policy reads these two (any other override falls back to the reference path).
_FAST_OVERRIDES = frozenset({"unsure_fallback", "empty_fallback"})
_FALLBACK_RADIX = 8  # fallback values in a decision key: 0 = not read, then one code per value
MEMO_MAX = 1_000_000  # memoised decisions before the memo starts over (bounded memory)
CURVE_CACHE = 64  # curves kept, least recently used dropped; one per (floor, margin, strategy)
K_CACHE = 1024  # thresholds whose per-query hit counts are kept
#: Tuner grids by name (notebook 02's ``tuner_grid``): ``full`` is ``eval.tuner.DEFAULT_GRID``
#: (about 1,300 points, 5 minutes on demo-train on a loaded 2-core box), ``report`` about 250
#: points around the defaults (the default report), ``quick`` 96 points.
QUICK_GRID: dict[str, tuple[Any, ...]] = {"threshold": (0.40, 0.45, 0.50, 0.55), "single_hit_floor": (0.55, 0.60, 0.65),
                                          "margin": (0.03, 0.06), "offer_cap": (0, 8),
                                          "unsure_fallback": ("full_roster", "domain_cluster")}
REPORT_GRID: dict[str, tuple[Any, ...]] = {"threshold": (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60),
                                           "single_hit_floor": (0.50, 0.55, 0.60, 0.65, 0.70),
                                           "margin": (0.0, 0.05), "offer_cap": (0, 8),
                                           "unsure_fallback": ("full_roster", "domain_cluster")}
GRIDS: dict[str, dict[str, tuple[Any, ...]] | None] = {"full": None, "report": REPORT_GRID, "quick": QUICK_GRID}


class Workbench:
    """Cached scores of one suite (shared catalogue) for fast re-decisions.

    Parameters
    ----------
    suite : Suite
        A suite with one shared catalogue (``demo*``, ``bfcl-pooled``, a JSONL file).
    embedder : Embedder or MemoEmbedder, optional
        Default: the bundled MiniLM, memoised (vectors cached on disk).
    base_knobs : Knobs, optional

    Attributes
    ----------
    scored : list of Scored
        One per query, in suite order.
    seconds : dict of str to float
        Wall seconds of the one-off work: ``prime`` (embed or load every text), ``fit`` (tool
        vectors), ``score`` (every query against every tool), ``index`` (the fast path's arrays).

    Notes
    -----
    Two paths give the same numbers. The **reference** path (:meth:`results`, :meth:`metrics`,
    ``curve(..., reference=True)``) calls ``EmbeddingPolicy.decide_scored`` for every query at
    every knob setting and aggregates with ``evaluate``. The **fast** path (:meth:`headline`,
    :meth:`curve`, what :func:`view` uses) notes that, given the cached scores, a query's offer
    (names, kind, rule) depends on the knobs only through a few integers: ``k``, the hits at or
    above the threshold; whether the lone embedding hit is below the single-hit floor; how many
    embedding hits are within the margin of the top one; and which fallback is read. It decides
    once per distinct key (memoised across slider moves) and counts verdicts with numpy. On the
    pooled BFCL suite the 33-threshold curve needs about 2,100 distinct decisions instead of
    34,749. Only the ``reason`` sentence differs between keys' members, and the view never shows
    it. ``tests/test_lab_workbench.py`` checks fast == reference over a grid of knobs.
    """

    def __init__(self, suite: Suite, embedder=None, *, base_knobs: Knobs | None = None) -> None:
        if suite.catalog is None:
            raise ErisLabError(f"suite {suite.name!r} has per-case catalogues; pick one with a shared catalogue",
                               where="Workbench")
        from ..eval.harness import prime, shared_embedder

        self.suite = suite
        self.memo: MemoEmbedder = shared_embedder(embedder)
        self.base_knobs = base_knobs if base_knobs is not None else Knobs()
        self.seconds: dict[str, float] = {}
        start = time.perf_counter()
        prime(self.memo, suite)
        self.seconds["prime"] = time.perf_counter() - start
        start = time.perf_counter()
        self.strategy = EmbeddingPolicy(knobs=self.base_knobs, embedder=self.memo).fit(suite.catalog)
        self.seconds["fit"] = time.perf_counter() - start
        start = time.perf_counter()
        self.scored = [self.strategy.scored(q.query, Context(history=q.history)) for q in suite.queries]
        self.seconds["score"] = time.perf_counter() - start
        start = time.perf_counter()
        self._index()
        self.seconds["index"] = time.perf_counter() - start
        self._cache: dict[tuple, list[QueryResult]] = {}
        self.clear_caches()

    # -- one-off: threshold-free arrays of the cached scores --------------------------------------
    def _index(self) -> None:
        """Build the fast path's per-query arrays (rows: queries in suite order; float64 cosines).

        ``_kept`` ``(n_queries, width)``: the scores of the hits that survive the base knobs'
        domain floors (``decide_scored`` drops the others at any threshold), descending, padded
        with -inf; the hits ``decide_scored`` keeps at threshold ``t`` are exactly the first
        ``(_kept[i] >= t).sum()`` of them. ``_raw`` the same for every hit (the ``dense``
        variant skips the floors). ``_embed_cum`` ``(n_queries, width + 1)`` int: embedding
        (non-forced, in-catalogue, first-seen) hits among the first ``k`` kept, for every ``k``.
        ``_top`` ``(n_queries,)``: the best embedding score (nan when none); ``_widens``
        ``(n_queries,)`` bool: its tool's domain has an affinity group (a near-tie can widen). ``_gaps``
        ``(n_queries, n_embed - 1)``: top minus each further embedding score, non-decreasing,
        padded with +inf; decide's near-tie test ``top - h <= margin`` holds for a prefix of them.
        """
        knobs, catalog = self.base_knobs, self.suite.catalog
        kept_hits = [[h for h in s.hits if passes_domain_floor(h, s.text, knobs)] if knobs.domain_floors else list(s.hits)
                     for s in self.scored]
        n = len(self.scored)
        width = max((len(k) for k in kept_hits), default=0)
        self._kept = np.full((n, width), -np.inf)
        self._embed_cum = np.zeros((n, width + 1), dtype=np.int64)
        embeds, widens = [], []
        for i, kept in enumerate(kept_hits):
            scores = np.array([h.score for h in kept], dtype=np.float64)
            is_embed = embedding_mask(kept, catalog, knobs)
            first = next((h for h, e in zip(kept, is_embed) if e), None)  # the top embedding hit
            widens.append(first is not None and bool(affinity_group(domain_of(first.name))))
            self._kept[i, :len(kept)] = scores
            cum = np.cumsum(is_embed)
            self._embed_cum[i, 1:len(kept) + 1] = cum
            self._embed_cum[i, len(kept) + 1:] = cum[-1] if len(cum) else 0
            embeds.append(scores[is_embed])
        self._top = np.array([e[0] if len(e) else np.nan for e in embeds])
        self._widens = np.array(widens, dtype=bool)
        self._gaps = np.full((n, max((len(e) - 1 for e in embeds), default=0)), np.inf)
        for i, e in enumerate(embeds):
            if len(e) > 1:
                self._gaps[i, :len(e) - 1] = e[0] - e[1:]
        if all(len(k) == len(s.hits) for k, s in zip(kept_hits, self.scored)):
            self._raw = self._kept  # no hit dropped by a domain floor: share the array
        else:
            self._raw = np.full((n, max((len(s.hits) for s in self.scored), default=0)), -np.inf)
            for i, s in enumerate(self.scored):
                self._raw[i, :len(s.hits)] = [h.score for h in s.hits]
        self._needing = np.array([q.expect in ("all", "any") for q in self.suite.queries], dtype=bool)
        self._single = np.array([q.expect == "all" for q in self.suite.queries], dtype=bool)
        # mixed-radix code of a decision key: query, k, demoted, tied, unsure code, empty code, dense, confident
        self._radices = (n, max(self._kept.shape[1], self._raw.shape[1]) + 1, 2, self._gaps.shape[1] + 1,
                         _FALLBACK_RADIX, _FALLBACK_RADIX, 2, 2)
        self._codable = math.prod(self._radices) < 2 ** 62

    def clear_caches(self) -> None:
        """Forget every memoised decision, curve and result (the cached scores stay)."""
        self._cache.clear()
        self._memo: dict[int, int] = {}  # decision-key code -> row of _entries / _rows
        self._entries: list[tuple[tuple[str, ...], str, str]] = []  # (offered, kind, rule)
        self._rows: list[tuple[int, ...]] = []  # verdicts, VERDICTS order
        self._offers: dict[tuple[str, ...], tuple[str, ...]] = {}  # interned offers (full rosters are big)
        self._verdicts: np.ndarray | None = None
        self._k_cache: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        self._curves: OrderedDict[tuple, tuple[dict[str, float], ...]] = OrderedDict()
        self._fallback_codes: dict[str, int] = {}

    # -- knobs ------------------------------------------------------------------------------------
    def knobs(self, threshold: float, single_hit_floor: float, margin: float, strategy: str = "policy") -> Knobs:
        """The base knobs with the three slider values and the variant's overrides."""
        if strategy not in VARIANTS:
            raise ErisLabError(f"unknown strategy {strategy!r}; expected one of {', '.join(VARIANTS)}", where="strategy")
        return self.base_knobs.replace(threshold=float(threshold), single_hit_floor=float(single_hit_floor),
                                       margin=float(margin), **VARIANTS[strategy])

    # -- the reference path -------------------------------------------------------------------------
    def _result(self, i: int, knobs: Knobs, strategy: str) -> QueryResult:
        """Query ``i`` decided from its cached scores under ``knobs`` (the one decision function)."""
        q, s = self.suite.queries[i], self.scored[i]
        if strategy == "dense":
            # hits are sorted by score, descending: the ones at or above the threshold are a prefix
            chosen = tuple(h.name for h in islice(takewhile(lambda h: h.score >= knobs.threshold, s.hits), DENSE_K))
            offered, kind, rule, reason = chosen, "subset" if chosen else "conversational", "RANKED_SUBSET", "cosine"
            hits = s.hits[:20]
        else:
            routed = self.strategy.decide_scored(s, knobs)
            offered, kind = routed.offer.names, routed.offer.kind
            rule, reason, hits = str(routed.decision.rule), routed.decision.reason, routed.hits
        return QueryResult(id=q.id, query=q.query, gold=q.gold, expect=q.expect, offered=tuple(offered),
                           kind=kind, rule=rule, reason=reason, hits=tuple(hits), tags=q.tags)

    def results(self, threshold: float, single_hit_floor: float, margin: float,
                strategy: str = "policy") -> list[QueryResult]:
        """Per-query results for these knobs, from the cached scores (memoised per knob tuple).

        The reference path: every query through ``decide_scored``, reasons included.
        """
        key = (round(threshold, 6), round(single_hit_floor, 6), round(margin, 6), strategy)
        if key in self._cache:
            return self._cache[key]
        knobs = self.knobs(threshold, single_hit_floor, margin, strategy)
        out = [self._result(i, knobs, strategy) for i in range(len(self.scored))]
        if len(self._cache) > 256:
            self._cache.clear()
        self._cache[key] = out
        return out

    def metrics(self, threshold: float, single_hit_floor: float, margin: float, strategy: str = "policy") -> dict[str, Any]:
        """The ``eval --json`` record for these knobs (reference path; every field of ``evaluate``)."""
        return evaluate(self.results(threshold, single_hit_floor, margin, strategy), suite=self.suite.name,
                        strategy=strategy)

    # -- the fast path ------------------------------------------------------------------------------
    def _fast(self, strategy: str) -> bool:
        """Whether the fast path's key covers this variant (it knows only the fallback overrides)."""
        return self._codable and set(VARIANTS.get(strategy, {})) <= _FAST_OVERRIDES

    def _k_at(self, threshold: float) -> tuple[np.ndarray, np.ndarray]:
        """``(n_queries,) int`` hits kept at ``threshold``: after the domain floors, and raw (dense)."""
        got = self._k_cache.get(threshold)
        if got is None:
            kept = (self._kept >= threshold).sum(axis=1)
            raw = kept if self._raw is self._kept else (self._raw >= threshold).sum(axis=1)
            if len(self._k_cache) >= K_CACHE:
                self._k_cache.clear()
            got = self._k_cache[threshold] = (kept, raw)
        return got

    def _fallback_code(self, value: str) -> int:
        code = self._fallback_codes.setdefault(value, len(self._fallback_codes) + 1)
        if code >= _FALLBACK_RADIX:
            raise ErisLabError(f"more than {_FALLBACK_RADIX - 1} fallback values", where="Workbench")
        return code

    def _decisions(self, columns: Sequence[tuple[float, float]], margin: float, strategy: str) -> np.ndarray:
        """Rows of the decision memo for every query at every ``(threshold, single_hit_floor)`` column.

        Returns
        -------
        ndarray of int, shape ``(n_queries, len(columns))``
            Indices into ``_entries`` / the verdict matrix. Each distinct decision key is decided
            once, by :meth:`_result` at the first (query, column) that has it, and memoised.
        """
        knobs = self.knobs(columns[0][0], columns[0][1], margin, strategy)  # validates the strategy
        if len(self._memo) > MEMO_MAX:
            self.clear_caches()  # bounded memory; indices are only held within this call
        n, width = len(self.scored), len(columns)
        pairs = [self._k_at(float(t)) for t, _ in columns]
        zero = np.zeros((n, width), dtype=np.int64)
        if strategy == "dense":
            # dense offers the first DENSE_K raw hits at or above the threshold: k alone decides
            k = np.minimum(np.stack([raw for _, raw in pairs], axis=1), DENSE_K)
            cols = (k, zero, zero, zero, zero, zero + 1, zero)
        else:
            k = np.stack([kept for kept, _ in pairs], axis=1)
            m = np.take_along_axis(self._embed_cum, k, axis=1)  # embedding hits among the kept
            demoted, tied, confident = decision_keys(m, self._top, self._gaps, np.array([float(f) for _, f in columns]),
                                                     margin, self._widens)
            # policy.decision_keys: unsure_fallback is read exactly when demoted, empty_fallback
            # exactly with no embedding hit
            unsure = np.where(demoted, self._fallback_code(knobs.unsure_fallback), 0)
            empty = np.where(m == 0, self._fallback_code(knobs.empty_fallback), 0)
            cols = (k, demoted.astype(np.int64), tied, unsure, empty, zero, confident.astype(np.int64))
        code = np.broadcast_to(np.arange(n, dtype=np.int64)[:, None], (n, width))
        for radix, col in zip(self._radices[1:], cols):
            code = code * radix + col
        uniq, first, inverse = np.unique(code.ravel(), return_index=True, return_inverse=True)
        rows = np.empty(len(uniq), dtype=np.int64)
        column_knobs: dict[int, Knobs] = {}  # Knobs.replace validates every field: once per column
        for j, (c, at) in enumerate(zip(uniq.tolist(), first.tolist())):
            row = self._memo.get(c)
            if row is None:
                i, col = divmod(at, width)
                if col not in column_knobs:
                    column_knobs[col] = self.knobs(columns[col][0], columns[col][1], margin, strategy)
                row = self._remember(c, self._result(i, column_knobs[col], strategy))
            rows[j] = row
        return rows[inverse].reshape(n, width)

    def _remember(self, code: int, r: QueryResult) -> int:
        offered = self._offers.setdefault(r.offered, r.offered)
        self._entries.append((offered, r.kind, r.rule))
        self._rows.append((len(offered), r.recalled, r.locked_in, r.correct, r.kind == "full_roster", not offered,
                           r.top in r.gold))
        self._verdicts = None
        self._memo[code] = len(self._entries) - 1
        return self._memo[code]

    def _verdict_matrix(self) -> np.ndarray:
        """``(n_decisions, len(VERDICTS)) int64`` of every memoised decision."""
        if self._verdicts is None:
            self._verdicts = np.array(self._rows, dtype=np.int64).reshape(len(self._rows), len(VERDICTS))
        return self._verdicts

    def headline(self, threshold: float, single_hit_floor: float, margin: float, strategy: str = "policy", *,
                 max_misrouted: int = 30) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]]:
        """The view's metrics row and misrouted rows for these knobs (fast path).

        Returns
        -------
        metrics : dict
            :data:`METRIC_KEYS` as ``evaluate`` computes them, plus ``n_misrouted``.
        misrouted : tuple of dict
            The first ``max_misrouted`` misrouted queries in suite order: ``query, gold, offered,
            n_offered, why, rule`` (``evaluate``'s rows, without the reason).
        """
        if not self._fast(strategy):
            return _headline_of(self.metrics(threshold, single_hit_floor, margin, strategy), max_misrouted)
        rows = self._decisions([(float(threshold), float(single_hit_floor))], margin, strategy)[:, 0]
        v = self._verdict_matrix()[rows]
        sizes = v[:, V_OFFERED].astype(float)
        needing, flags = self._needing, v.astype(bool)
        # the same expressions as eval.metrics.evaluate, on the same values
        metrics = {
            "n": len(rows),
            "recall": rate(flags[needing, V_RECALLED]),
            "top1": rate(flags[self._single, V_TOP1]),
            "mean_offer": round(float(sizes.mean()), 4) if len(sizes) else None,
            "p95_offer": round(float(np.percentile(sizes, 95)), 4) if len(sizes) else None,
            "lock_in": rate(flags[:, V_LOCKED]),
            "full_roster_rate": rate(flags[:, V_FULL_ROSTER]),
            "empty_rate": rate(flags[:, V_EMPTY]),
        }
        wrong = np.flatnonzero(~flags[:, V_CORRECT])
        metrics["n_misrouted"] = len(wrong)
        misrouted = []
        for i in wrong[:max_misrouted].tolist():
            q, s = self.suite.queries[i], self.scored[i]
            offered, kind, rule = self._entries[rows[i]]
            hits = s.hits[:20] if strategy == "dense" else s.hits[:MAX_HITS]
            r = QueryResult(id=q.id, query=q.query, gold=q.gold, expect=q.expect, offered=offered, kind=kind,
                            rule=rule, hits=tuple(hits), tags=q.tags)
            row = misrouted_row(r)
            misrouted.append({k: row[k] for k in MISROUTED_KEYS})
        return metrics, tuple(misrouted)

    def curve(self, single_hit_floor: float, margin: float, strategy: str = "policy",
              thresholds: Sequence[float] = CURVE_THRESHOLDS, *, reference: bool = False) -> list[dict[str, float]]:
        """Mean offer size, recall and lock-in along a threshold sweep (the floor kept >= the threshold).

        Returns
        -------
        list of dict
            One ``{"threshold", "mean_offer", "recall", "lock_in"}`` per threshold (fractions;
            mean offer in tools). The fast path memoises the whole curve per ``(floor, margin,
            strategy, thresholds)`` (LRU of :data:`CURVE_CACHE`): a threshold drag only moves
            the marker. ``reference=True`` re-decides every query at every threshold.
        """
        if reference or not self._fast(strategy):
            return self._curve_reference(single_hit_floor, margin, strategy, thresholds)
        key = (float(single_hit_floor), float(margin), strategy, tuple(float(t) for t in thresholds))
        cached = self._curves.get(key)
        if cached is None:
            columns = [(float(t), max(single_hit_floor, t)) for t in thresholds]
            rows_of = self._decisions(columns, margin, strategy) if columns else None
            v = self._verdict_matrix()[rows_of] if columns else None  # after deciding: it may add rows
            rows = []
            for j, t in enumerate(thresholds):
                # integer counts summed exactly, then divided once: equal to np.mean over the lists
                rows.append({"threshold": float(t),
                             "mean_offer": float(np.mean(v[:, j, V_OFFERED])) if len(self.scored) else 0.0,
                             "recall": float(np.mean(v[self._needing, j, V_RECALLED].astype(bool)))
                             if self._needing.any() else 0.0,
                             "lock_in": float(np.mean(v[:, j, V_LOCKED].astype(bool))) if len(self.scored) else 0.0})
            cached = self._curves[key] = tuple(rows)
            if len(self._curves) > CURVE_CACHE:
                self._curves.popitem(last=False)
        self._curves.move_to_end(key)
        return [dict(r) for r in cached]  # copies: a caller's edit must not reach the cache

    def _curve_reference(self, single_hit_floor: float, margin: float, strategy: str,
                         thresholds: Sequence[float]) -> list[dict[str, float]]:
        rows = []
        for t in thresholds:
            results = self.results(t, max(single_hit_floor, t), margin, strategy)
            needing = [r for r in results if r.needs_tool]
            rows.append({"threshold": float(t),
                         "mean_offer": float(np.mean([len(r.offered) for r in results])) if results else 0.0,
                         "recall": float(np.mean([r.recalled for r in needing])) if needing else 0.0,
                         "lock_in": float(np.mean([r.locked_in for r in results])) if results else 0.0})
        return rows


def _headline_of(record: Mapping[str, Any], max_misrouted: int) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]]:
    """The view's metrics row and misrouted rows out of an ``evaluate`` record (reference path)."""
    misrouted = tuple({k: m[k] for k in MISROUTED_KEYS} for m in record["misrouted"][:max_misrouted])
    return {k: record[k] for k in METRIC_KEYS} | {"n_misrouted": len(record["misrouted"])}, misrouted


@dataclass(frozen=True, kw_only=True, slots=True)
class View:
    """What the tuning view shows for one setting: metrics row, curve, misrouted list.

    ``seconds`` is the wall time of :func:`view`; ``timings_ms`` splits it into ``decide``
    (re-decide every query and count the metrics row and misrouted list) and ``curve``
    (milliseconds).
    """

    knobs: Mapping[str, Any]
    metrics: Mapping[str, Any]
    curve: tuple[Mapping[str, float], ...]
    misrouted: tuple[Mapping[str, Any], ...]
    seconds: float
    timings_ms: Mapping[str, float] = field(default_factory=dict)


def view(bench: Workbench, threshold: float, single_hit_floor: float, margin: float,
         strategy: str = "policy", *, max_misrouted: int = 30, reference: bool = False) -> View:
    """The slider callback: re-decide every query from cached scores and summarise.

    Parameters
    ----------
    reference : bool
        Take the reference path (``decide_scored`` for every query at every curve threshold,
        then ``evaluate``): the same View, one to two orders of magnitude slower. The default
        fast path memoises decisions and curves (:class:`Workbench` "Notes"); neither embeds.

    Returns
    -------
    View
        ``metrics`` holds :data:`METRIC_KEYS` and ``n_misrouted``; ``misrouted`` rows have
        :data:`MISROUTED_KEYS`; ``curve`` one point per :data:`CURVE_THRESHOLDS`.
    """
    start = time.perf_counter()
    bench.knobs(threshold, single_hit_floor, margin, strategy)  # an unknown strategy fails here, on both paths
    if reference:
        metrics, misrouted = _headline_of(bench.metrics(threshold, single_hit_floor, margin, strategy), max_misrouted)
    else:
        metrics, misrouted = bench.headline(threshold, single_hit_floor, margin, strategy, max_misrouted=max_misrouted)
    decided = time.perf_counter()
    curve = bench.curve(single_hit_floor, margin, strategy, reference=reference)
    end = time.perf_counter()
    return View(knobs={"threshold": threshold, "single_hit_floor": single_hit_floor, "margin": margin,
                       "strategy": strategy},
                metrics=metrics, curve=tuple(curve), misrouted=misrouted, seconds=end - start,
                timings_ms={"decide": (decided - start) * 1000, "curve": (end - decided) * 1000})


def tune_and_save(bench: Workbench, out: str | Path, *, split: str | None = "train", max_lock_in: float = 0.01,
                  max_mean_offer: float = 5.0, grid: Mapping[str, Sequence[Any]] | None = None) -> Knobs:
    """The button callback: fit :class:`~eris_lab.eval.tuner.ThresholdTuner` and write the knobs TOML.

    Fits on the suite's ``split`` queries (all when None or when the suite has no such split),
    through the workbench's memoised embedder (nothing is embedded again).
    """
    from ..eval.tuner import ThresholdTuner

    queries = [q for q in bench.suite.queries if split is None or q.split == split] or list(bench.suite.queries)
    tuner = ThresholdTuner(catalog=bench.suite.catalog, embedder=bench.memo, base_knobs=bench.base_knobs,
                           max_lock_in=max_lock_in, max_mean_offer=max_mean_offer, grid=grid, domain_floors=False)
    tuner.fit(queries, [q.gold for q in queries])
    tuner.knobs_.save(out)
    return tuner.knobs_


class Debouncer:
    """Call ``fn`` with the latest arguments once changes have stopped for ``wait_s`` seconds.

    Inside a running asyncio loop (a Jupyter kernel) the call is scheduled with ``call_later`` and
    a newer change cancels it; without a running loop the call happens at once (never dropped).
    ``flush()`` runs a pending call now. ``calls`` counts real calls.
    """

    def __init__(self, fn: Callable[..., Any], wait_s: float = DEBOUNCE_S) -> None:
        self.fn = fn
        self.wait_s = wait_s
        self.calls = 0
        self._pending: tuple[tuple, dict] | None = None
        self._handle = None

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self._pending = (args, kwargs)
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop running here: nothing can fire later, so call now
            self.flush()
            return
        self._handle = loop.call_later(self.wait_s, self.flush)

    def flush(self) -> Any:
        """Run the pending call now (if any); returns its result."""
        self._handle = None
        if self._pending is None:
            return None
        args, kwargs = self._pending
        self._pending = None
        self.calls += 1
        return self.fn(*args, **kwargs)


def render(bench: Workbench, v: View):
    """The display objects of one view: metrics table, curve figure, misrouted table."""
    from . import viz

    return (viz.table([v.metrics], title=f"{bench.suite.name}: {v.knobs['strategy']} at threshold "
                      f"{v.knobs['threshold']:.2f}, floor {v.knobs['single_hit_floor']:.2f}, margin {v.knobs['margin']:.2f}"),
            viz.curve_figure(v.curve, v.knobs["threshold"], title=f"offer size vs recall ({v.knobs['strategy']})"),
            viz.table(v.misrouted, list(MISROUTED_KEYS),
                      title=f"misrouted ({v.metrics['n_misrouted']}, first {len(v.misrouted)})"))


def panel(bench: Workbench, *, threshold: float, single_hit_floor: float, margin: float, strategy: str = "policy",
          interactive: bool = True, knobs_out: str | Path = "knobs.toml"):
    """Show the tuning view: live widgets, or (``interactive=False``) the same output once.

    Returns the :class:`View` shown (static) or the ipywidgets container (interactive).
    """
    from IPython.display import display

    from . import viz

    if not interactive:
        v = view(bench, threshold, single_hit_floor, margin, strategy)
        table, fig, misrouted = render(bench, v)
        display(table)
        viz.show(fig)
        display(misrouted)
        return v

    import ipywidgets as w

    style = {"description_width": "120px"}
    sliders = {
        "threshold": w.FloatSlider(value=threshold, min=0.0, max=1.0, step=0.01, description="threshold", style=style),
        "single_hit_floor": w.FloatSlider(value=single_hit_floor, min=0.0, max=1.0, step=0.01,
                                          description="single-hit floor", style=style),
        "margin": w.FloatSlider(value=margin, min=0.0, max=0.3, step=0.005, description="margin", style=style),
    }
    picker = w.Dropdown(options=list(VARIANTS), value=strategy, description="strategy", style=style)
    button = w.Button(description="run tuner, save knobs", icon="save", layout=w.Layout(width="auto"))  # the label uncut
    status = w.HTML()
    out_table, out_fig, out_mis = w.Output(), w.Output(), w.Output()

    def redraw() -> None:
        v = view(bench, sliders["threshold"].value, sliders["single_hit_floor"].value, sliders["margin"].value,
                 picker.value)
        start = time.perf_counter()
        table, fig, misrouted = render(bench, v)
        # Set each Output's outputs through widget state, not ``with out:``: JupyterLab drops output
        # captured in a debounced callback (its slider message is finished), so nothing would redraw.
        for out, obj in ((out_table, table), (out_fig, fig), (out_mis, misrouted)):
            out.outputs = (viz.output_record(obj),)
        drawn_ms = (time.perf_counter() - start) * 1000
        # the whole redraw, split: re-deciding from cached scores, the curve, building the output
        status.value = (f"re-decided {len(bench.scored)} cached queries in {v.seconds * 1000:.0f} ms "
                        f"(curve {v.timings_ms['curve']:.0f} ms), drawn in {drawn_ms:.0f} ms; nothing re-embedded")

    debounced = Debouncer(redraw)

    def on_change(_change=None) -> None:
        debounced()

    for control in (*sliders.values(), picker):
        control.observe(on_change, names="value")

    def on_click(_button=None) -> None:
        status.value = "tuning…"
        knobs = tune_and_save(bench, knobs_out)
        sliders["threshold"].value, sliders["single_hit_floor"].value, sliders["margin"].value = (
            knobs.threshold, knobs.single_hit_floor, knobs.margin)
        status.value = f"saved {knobs_out}: threshold {knobs.threshold}, floor {knobs.single_hit_floor}, margin {knobs.margin}"

    button.on_click(on_click)
    redraw()
    box = w.VBox([w.HBox([w.VBox(list(sliders.values())), w.VBox([picker, button, status])]), out_table, out_fig, out_mis])
    display(box)
    return box
