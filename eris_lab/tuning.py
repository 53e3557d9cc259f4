"""Threshold tuning on cached similarities: the engine behind notebook 02's sliders.

A :class:`Workbench` scores every query of a suite against every tool **once**
(``EmbeddingPolicy.scored``: guards included, no threshold) and afterwards only re-decides
(``EmbeddingPolicy.decide_scored``) for new knobs: a slider move never re-embeds. The widget
callbacks are plain functions of this module (:func:`view`, :func:`tune_and_save`) so they are
tested as functions; :func:`panel` wires them to ipywidgets with a :class:`Debouncer`, or, with
``interactive=False`` (papermill), renders the same tables and figure once, statically.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .errors import ErisLabError
from .eval.datasets import Suite
from .eval.metrics import QueryResult, evaluate
from .knobs import Knobs
from .strategies import Context, EmbeddingPolicy, MemoEmbedder

__all__ = ["Workbench", "View", "view", "tune_and_save", "panel", "Debouncer", "VARIANTS", "CURVE_THRESHOLDS",
           "METRIC_KEYS", "QUICK_GRID", "REPORT_GRID", "GRIDS"]

#: Strategies the picker offers, all re-decided from the same cached scores: the knob overrides
#: of each policy variant, and ``dense`` (every tool at or above the threshold, best ``DENSE_K``).
VARIANTS: dict[str, dict[str, Any]] = {
    "policy": {},
    "policy-cluster": {"unsure_fallback": "domain_cluster"},
    "policy-abstain": {"empty_fallback": "none"},
    "dense": {},
}
DENSE_K = 5  # tools the ``dense`` variant offers at most
CURVE_THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.20, 0.86, 0.02))  # threshold sweep of the curve
METRIC_KEYS = ("n", "recall", "top1", "mean_offer", "p95_offer", "lock_in", "full_roster_rate", "empty_rate")
DEBOUNCE_S = 0.25  # slider changes closer than this redraw once
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
    n_embedded : int
        Texts the embedder was asked for while building (0 later: re-decisions never embed).
    """

    def __init__(self, suite: Suite, embedder=None, *, base_knobs: Knobs | None = None) -> None:
        if suite.catalog is None:
            raise ErisLabError(f"suite {suite.name!r} has per-case catalogues; pick one with a shared catalogue",
                               where="Workbench")
        from .eval.harness import prime, shared_embedder

        self.suite = suite
        self.memo: MemoEmbedder = shared_embedder(embedder)
        self.base_knobs = base_knobs if base_knobs is not None else Knobs()
        prime(self.memo, suite)
        self.strategy = EmbeddingPolicy(knobs=self.base_knobs, embedder=self.memo).fit(suite.catalog)
        self.scored = [self.strategy.scored(q.query, Context(history=q.history)) for q in suite.queries]
        self._cache: dict[tuple, list[QueryResult]] = {}

    def knobs(self, threshold: float, single_hit_floor: float, margin: float, strategy: str = "policy") -> Knobs:
        """The base knobs with the three slider values and the variant's overrides."""
        if strategy not in VARIANTS:
            raise ErisLabError(f"unknown strategy {strategy!r}; expected one of {', '.join(VARIANTS)}", where="strategy")
        return self.base_knobs.replace(threshold=float(threshold), single_hit_floor=float(single_hit_floor),
                                       margin=float(margin), **VARIANTS[strategy])

    def results(self, threshold: float, single_hit_floor: float, margin: float,
                strategy: str = "policy") -> list[QueryResult]:
        """Per-query results for these knobs, from the cached scores (memoised per knob tuple)."""
        key = (round(threshold, 6), round(single_hit_floor, 6), round(margin, 6), strategy)
        if key in self._cache:
            return self._cache[key]
        knobs = self.knobs(threshold, single_hit_floor, margin, strategy)
        out = []
        for q, s in zip(self.suite.queries, self.scored):
            if strategy == "dense":
                chosen = tuple(h.name for h in s.hits if h.score >= knobs.threshold)[:DENSE_K]
                offered, kind, rule, reason = chosen, "subset" if chosen else "conversational", "RANKED_SUBSET", "cosine"
                hits = s.hits[:20]
            else:
                routed = self.strategy.decide_scored(s, knobs)
                offered, kind = routed.offer.names, routed.offer.kind
                rule, reason, hits = str(routed.decision.rule), routed.decision.reason, routed.hits
            out.append(QueryResult(id=q.id, query=q.query, gold=q.gold, expect=q.expect, offered=tuple(offered),
                                   kind=kind, rule=rule, reason=reason, hits=tuple(hits), tags=q.tags))
        if len(self._cache) > 256:
            self._cache.clear()
        self._cache[key] = out
        return out

    def metrics(self, threshold: float, single_hit_floor: float, margin: float, strategy: str = "policy") -> dict[str, Any]:
        """The ``eval --json`` record for these knobs."""
        return evaluate(self.results(threshold, single_hit_floor, margin, strategy), suite=self.suite.name,
                        strategy=strategy)

    def curve(self, single_hit_floor: float, margin: float, strategy: str = "policy",
              thresholds: Sequence[float] = CURVE_THRESHOLDS) -> list[dict[str, float]]:
        """Mean offer size and recall along a threshold sweep (the floor is kept >= the threshold)."""
        rows = []
        for t in thresholds:
            results = self.results(t, max(single_hit_floor, t), margin, strategy)
            needing = [r for r in results if r.needs_tool]
            rows.append({"threshold": float(t),
                         "mean_offer": float(np.mean([len(r.offered) for r in results])) if results else 0.0,
                         "recall": float(np.mean([r.recalled for r in needing])) if needing else 0.0,
                         "lock_in": float(np.mean([r.locked_in for r in results])) if results else 0.0})
        return rows


@dataclass(frozen=True, kw_only=True, slots=True)
class View:
    """What the tuning view shows for one setting: metrics row, curve, misrouted list."""

    knobs: Mapping[str, Any]
    metrics: Mapping[str, Any]
    curve: tuple[Mapping[str, float], ...]
    misrouted: tuple[Mapping[str, Any], ...]
    seconds: float


def view(bench: Workbench, threshold: float, single_hit_floor: float, margin: float,
         strategy: str = "policy", *, max_misrouted: int = 30) -> View:
    """The slider callback: re-decide every query from cached scores and summarise.

    Returns
    -------
    View
        ``metrics`` holds :data:`METRIC_KEYS`; ``misrouted`` rows have ``query, gold, offered,
        n_offered, why, rule``; ``seconds`` is the wall time of this call.
    """
    start = time.perf_counter()
    record = bench.metrics(threshold, single_hit_floor, margin, strategy)
    curve = bench.curve(single_hit_floor, margin, strategy)
    misrouted = tuple({"query": m["query"], "gold": m["gold"], "offered": m["offered"], "n_offered": m["n_offered"],
                       "why": m["why"], "rule": m["rule"]} for m in record["misrouted"][:max_misrouted])
    return View(knobs={"threshold": threshold, "single_hit_floor": single_hit_floor, "margin": margin,
                       "strategy": strategy},
                metrics={k: record[k] for k in METRIC_KEYS} | {"n_misrouted": len(record["misrouted"])},
                curve=tuple(curve), misrouted=misrouted, seconds=time.perf_counter() - start)


def tune_and_save(bench: Workbench, out: str | Path, *, split: str | None = "train", max_lock_in: float = 0.01,
                  max_mean_offer: float = 5.0, grid: Mapping[str, Sequence[Any]] | None = None) -> Knobs:
    """The button callback: fit :class:`~eris_lab.eval.tuner.ThresholdTuner` and write the knobs TOML.

    Fits on the suite's ``split`` queries (all when None or when the suite has no such split),
    through the workbench's memoised embedder (nothing is embedded again).
    """
    from .eval.tuner import ThresholdTuner

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


def _render(bench: Workbench, v: View):
    """The display objects of one view: metrics table, curve figure, misrouted table."""
    from . import viz

    return (viz.table([v.metrics], title=f"{bench.suite.name}: {v.knobs['strategy']} at threshold "
                      f"{v.knobs['threshold']:.2f}, floor {v.knobs['single_hit_floor']:.2f}, margin {v.knobs['margin']:.2f}"),
            viz.curve_figure(v.curve, v.knobs["threshold"], title=f"offer size vs recall ({v.knobs['strategy']})"),
            viz.table(v.misrouted, ["query", "gold", "offered", "n_offered", "why", "rule"],
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
        table, fig, misrouted = _render(bench, v)
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
    button = w.Button(description="run tuner, save knobs", icon="save")
    status = w.HTML()
    out_table, out_fig, out_mis = w.Output(), w.Output(), w.Output()

    def redraw() -> None:
        v = view(bench, sliders["threshold"].value, sliders["single_hit_floor"].value, sliders["margin"].value,
                 picker.value)
        table, fig, misrouted = _render(bench, v)
        # Set each Output's outputs through widget state, not ``with out:``: JupyterLab drops output
        # captured in a debounced callback (its slider message is finished), so nothing would redraw.
        for out, obj in ((out_table, table), (out_fig, fig), (out_mis, misrouted)):
            out.outputs = (viz.output_record(obj),)
        status.value = f"re-scored {len(bench.scored)} cached queries in {v.seconds * 1000:.0f} ms"

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
