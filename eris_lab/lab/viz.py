"""Figures and tables for the notebooks: plotly figures, small HTML tables, one ``show``.

Every function returns a figure or an ``IPython.display.HTML`` object; notebooks call one
function per figure or table (STYLE.md "Notebooks stay thin"). ``show(fig)`` publishes a
figure as HTML without plotly.js (the report page inlines plotly.js once, ``report.export_html``)
together with plotly's own JSON mime type, which JupyterLab renders natively.
"""

from __future__ import annotations

import html as _html
from typing import Any, Mapping, Sequence

__all__ = ["show", "figure_bundle", "output_record", "table", "BAD", "GOOD"]

BAD = "#cf222e"  # regressions, misrouted queries (red)
GOOD = "#1a7f37"  # improvements (green)


def figure_bundle(fig) -> dict[str, Any]:
    """The mime bundle :func:`show` publishes for a plotly figure (HTML, plotly JSON, plain text)."""
    return {
        "text/html": fig.to_html(full_html=False, include_plotlyjs=False),
        "application/vnd.plotly.v1+json": fig.to_plotly_json(),
        "text/plain": f"<plotly figure: {fig.layout.title.text or 'untitled'}>",
    }


def show(fig) -> None:
    """Display a plotly figure: HTML (no plotly.js, offline report) + plotly JSON (JupyterLab)."""
    from IPython.display import display

    display(figure_bundle(fig), raw=True)


def output_record(obj) -> dict[str, Any]:
    """An ``ipywidgets.Output`` output record (nbformat ``display_data``) of a plotly figure or display object.

    A widget callback sets ``out.outputs = (output_record(obj),)`` instead of displaying inside
    ``with out:``: JupyterLab routes captured output by the triggering message, and a debounced
    callback runs after that message is finished, so captured output would be dropped.
    """
    if hasattr(obj, "to_plotly_json"):
        data, metadata = figure_bundle(obj), {}
    else:
        from IPython.core.interactiveshell import InteractiveShell

        data, metadata = InteractiveShell.instance().display_formatter.format(obj)
    return {"output_type": "display_data", "data": data, "metadata": metadata}


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, tuple)):
        return _html.escape(", ".join(str(v) for v in value))
    return _html.escape("" if value is None else str(value))


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, *, title: str = "",
          colours: Mapping[tuple[int, str], str] | None = None, max_rows: int = 200):
    """An HTML table of ``rows`` (dicts); ``colours[(row, column)]`` colours one cell's text.

    Returns
    -------
    IPython.display.HTML
    """
    from IPython.display import HTML

    rows = list(rows)
    columns = list(columns) if columns is not None else list(dict.fromkeys(k for r in rows for k in r))
    colours = colours or {}
    head = "".join(f"<th style='text-align:left'>{_html.escape(c)}</th>" for c in columns)
    body = []
    for i, row in enumerate(rows[:max_rows]):
        cells = []
        for c in columns:
            colour = colours.get((i, c))
            style = f"color:{colour};font-weight:bold;" if colour else ""
            cells.append(f"<td style='text-align:left;{style}'>{_cell(row.get(c))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f"<p>… {len(rows) - max_rows} more rows</p>" if len(rows) > max_rows else ""
    caption = f"<caption style='text-align:left;font-weight:bold'>{_html.escape(title)}</caption>" if title else ""
    return HTML(f"<div style='overflow-x:auto;max-width:100%'><table class='eris-table'>{caption}<thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table></div>{more}")


# ---------------------------------------------------------------------------------------------
# 02 tuning: offer size vs recall
# ---------------------------------------------------------------------------------------------


def pareto_front(points: Sequence[Mapping[str, float]]) -> list[Mapping[str, float]]:
    """The points no other point beats on both axes (smaller ``mean_offer``, higher ``recall``),
    sorted by ``mean_offer``; points without a recall are skipped."""
    ranked = sorted((p for p in points if p.get("recall") is not None), key=lambda p: (p["mean_offer"], -p["recall"]))
    front: list[Mapping[str, float]] = []
    for p in ranked:
        if not front or p["recall"] > front[-1]["recall"]:
            front.append(p)
    return front


def curve_figure(curve: Sequence[Mapping[str, float]], current: float | None = None, *, title: str = "",
                 marked: Mapping[str, Mapping[str, float]] | None = None):
    """Recall against mean offer size, one point per threshold (coloured by it), the Pareto front
    drawn through the points no other beats, the current threshold starred.

    Points, not a line in threshold order: that line zig-zags (issue 18), the front does not.
    ``marked``: further named points, e.g. ``{"calibrated": {"mean_offer": 6.6, "recall": 0.88}}``.
    """
    import plotly.graph_objects as go

    points = [p for p in curve if p.get("recall") is not None]
    text = [f"threshold {p['threshold']:.2f}<br>mean offer {p['mean_offer']:.2f}<br>recall {p['recall']:.3f}"
            f"<br>lock-in {p.get('lock_in', 0):.3f}" for p in points]
    fig = go.Figure(go.Scatter(
        x=[p["mean_offer"] for p in points], y=[p["recall"] for p in points], mode="markers", text=text,
        hoverinfo="text", name="one threshold",
        marker={"color": [p["threshold"] for p in points], "colorscale": "Viridis", "size": 8,
                "colorbar": {"title": "threshold"}, "showscale": True}))
    front = pareto_front(points)
    if len(front) > 1:
        fig.add_trace(go.Scatter(x=[p["mean_offer"] for p in front], y=[p["recall"] for p in front],
                                 mode="lines", name="Pareto front", line={"color": "grey", "dash": "dot"}))
    if current is not None and points:
        best = min(points, key=lambda p: abs(p["threshold"] - current))
        fig.add_trace(go.Scatter(x=[best["mean_offer"]], y=[best["recall"]], mode="markers", name="current",
                                 marker={"size": 14, "color": BAD, "symbol": "star"}))
    for name, p in (marked or {}).items():
        fig.add_trace(go.Scatter(x=[p["mean_offer"]], y=[p["recall"]], mode="markers", name=name,
                                 marker={"size": 13, "symbol": "diamond"}))
    fig.update_layout(title=title or "offer size vs recall", xaxis_title="mean offered tools per query",
                      yaxis_title="recall", height=380, margin={"t": 40, "b": 40})
    return fig


def coverage_figure(rows: Sequence[Mapping[str, Any]], *, title: str = ""):
    """Promised against observed coverage (``lab.calibrated.coverage_rows``): a point per alpha for
    each way of calibrating, and the diagonal a kept promise lies on (within sampling noise)."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Scatter(x=[0.5, 1.0], y=[0.5, 1.0], mode="lines", name="promise kept",
                               line={"color": "grey", "dash": "dot"}))
    for key, name in (("label_free", "label-free (pseudo-queries)"), ("labelled", "labelled train split, on test")):
        pts = [r for r in rows if r.get(key) is not None]
        if pts:
            fig.add_trace(go.Scatter(
                x=[r["promised"] for r in pts], y=[r[key] for r in pts], mode="markers+lines", name=name,
                text=[f"alpha {r['alpha']}<br>mean offer {r[key + '_offer']:.1f}" for r in pts], hoverinfo="text+x+y"))
    lo = min([0.5] + [r[k] for r in rows for k in ("label_free", "labelled") if r.get(k) is not None])
    fig.update_layout(title=title or "coverage: promised vs observed", xaxis_title="promised (1 - alpha)",
                      yaxis_title="observed recall", height=380, margin={"t": 40, "b": 40},
                      xaxis_range=[lo - 0.02, 1.01], yaxis_range=[lo - 0.02, 1.01])
    return fig


def relevance_figure(rows: Sequence[Mapping[str, Any]], default_floor: float | None = None, *, title: str = "",
                     without_slots: Sequence[Mapping[str, Any]] | None = None):
    """The relevance gate's trade-off (``lab.calibrated.relevance_rows``): empty-offer rate on
    messages that need no tool against recall on those that do, one point per floor (coloured by
    it), the default floor starred; ``without_slots``: the same floors without the slot check
    (``relevance_rows(..., slot_check="off")``), drawn in grey to show what it adds."""
    import plotly.graph_objects as go

    def clean(points):
        return [r for r in points if r["recall"] == r["recall"] and r["empty_rate"] == r["empty_rate"]]  # no NaN

    pts = clean(rows)
    fig = go.Figure()
    if without_slots:
        base = clean(without_slots)
        fig.add_trace(go.Scatter(
            x=[r["empty_rate"] for r in base], y=[r["recall"] for r in base], mode="markers+lines",
            name="without the slot check", text=[f"floor {r['floor']:.2f}, no slot check" for r in base],
            hoverinfo="text+x+y", line={"color": "lightgrey", "dash": "dot"}, marker={"color": "darkgrey", "size": 6}))
    fig.add_trace(go.Scatter(
        x=[r["empty_rate"] for r in pts], y=[r["recall"] for r in pts], mode="markers+lines",
        name="with the slot check (a point per floor)" if without_slots else "one floor",
        text=[f"floor {r['floor']:.2f}" for r in pts], hoverinfo="text+x+y", line={"color": "lightgrey"},
        marker={"color": [r["floor"] for r in pts], "colorscale": "Viridis", "size": 9,
                "colorbar": {"title": "floor"}, "showscale": True}))
    if default_floor is not None and pts:
        best = min(pts, key=lambda r: abs(r["floor"] - default_floor))
        fig.add_trace(go.Scatter(x=[best["empty_rate"]], y=[best["recall"]], mode="markers",
                                 name=f"default (floor {default_floor:.2f})",
                                 marker={"size": 15, "color": BAD, "symbol": "star"}))
    fig.update_layout(title=title or "relevance gate: no tool fits vs recall", height=420,
                      xaxis_title="empty offer on messages needing no tool", yaxis_title="recall on messages needing one",
                      margin={"t": 40, "b": 40},
                      legend={"orientation": "h", "y": -0.22, "x": 0})  # below: the colour bar is on the right
    return fig


# ---------------------------------------------------------------------------------------------
# 01 embedding space
# ---------------------------------------------------------------------------------------------


def project(vectors, *, seed: int = 0, n_neighbors: int = 15, min_dist: float = 0.1):
    """2-D UMAP projection of L2-normalised rows (cosine metric): ``(n, 2) float32``.

    Fewer than 4 rows are placed by PCA (UMAP needs a neighbourhood). UMAP compiles numba code
    on first use (cached by numba afterwards).
    """
    import numpy as np

    x = np.asarray(vectors, dtype=np.float32)
    if len(x) < 4:
        centred = x - x.mean(axis=0, keepdims=True)
        _, _, vt = np.linalg.svd(centred, full_matrices=False) if len(x) > 1 else (None, None, np.eye(2, x.shape[1]))
        out = centred @ vt[:2].T
        return np.pad(out, ((0, 0), (0, 2 - out.shape[1]))).astype(np.float32)
    import umap

    reducer = umap.UMAP(n_neighbors=min(n_neighbors, len(x) - 1), min_dist=min_dist, metric="cosine",
                        random_state=seed, n_jobs=1, init="spectral" if len(x) > 10 else "random")
    return reducer.fit_transform(x).astype(np.float32)


def space_points(suite, results=None, *, embedder=None, max_queries: int | None = None,
                 max_tools: int | None = None, seed: int = 0) -> list[dict[str, Any]]:
    """Tools and labelled queries of a shared-catalogue suite as points of one UMAP map.

    Parameters
    ----------
    suite : Suite
    results : sequence of QueryResult, optional
        A strategy's results on the suite; misrouted queries (``not correct``) are marked.
    embedder : MemoEmbedder, optional
    max_queries, max_tools : int, optional
        Sample sizes (seeded); the gold tools of sampled queries are always kept.

    Returns
    -------
    list of dict
        ``kind`` (tool/query), ``text`` (hover), ``domain`` (colour), ``misrouted``, ``x``, ``y``.
    """
    import numpy as np

    from ..catalog import enrich_for_routing, toolkit_of
    from ..eval.harness import shared_embedder
    from ..guard import clean_text

    memo = shared_embedder(embedder)
    rng = np.random.default_rng(seed)
    queries = list(suite.queries)
    by_id = {r.id: r for r in (results or ())}
    if max_queries is not None and len(queries) > max_queries:
        queries = [queries[i] for i in sorted(rng.choice(len(queries), max_queries, replace=False))]
    tools = list(suite.catalog)
    if max_tools is not None and len(tools) > max_tools:
        gold = {g for q in queries for g in q.gold}
        keep = [t for t in tools if t.name in gold]
        rest = [t for t in tools if t.name not in gold]
        extra = max(0, max_tools - len(keep))
        keep += [rest[i] for i in sorted(rng.choice(len(rest), min(extra, len(rest)), replace=False))]
        tools = keep
    tool_texts = [enrich_for_routing(t) for t in tools]
    query_texts = [clean_text(q.query, 4000) for q in queries]
    memo.prime(tool_texts + query_texts)  # one batch, through the disk cache
    tool_vecs, query_vecs = memo.embed(tool_texts), memo.embed(query_texts)
    xy = project(np.vstack([tool_vecs, query_vecs]), seed=seed)
    points = []
    for t, (x, y) in zip(tools, xy[: len(tools)]):
        points.append({"kind": "tool", "name": t.name, "text": f"<b>{t.name}</b><br>{_wrap(t.description)}",
                       "domain": toolkit_of(t.name), "misrouted": False, "x": float(x), "y": float(y)})
    for q, (x, y) in zip(queries, xy[len(tools):]):
        r = by_id.get(q.id)
        wrong = bool(r is not None and not r.correct)
        offered = ", ".join(r.offered[:6]) + (" …" if r is not None and len(r.offered) > 6 else "") if r else "?"
        points.append({"kind": "query", "name": q.id, "domain": toolkit_of(q.gold[0]) if q.gold else "(none)",
                       "text": f"{_wrap(q.query)}<br>gold: {', '.join(q.gold) or '(none)'}<br>offered: {offered}"
                               + ("<br><b>MISROUTED</b>" if wrong else ""),
                       "misrouted": wrong, "x": float(x), "y": float(y)})
    return points


def _wrap(text: str, width: int = 60, max_chars: int = 240) -> str:
    import textwrap

    text = " ".join(str(text).split())[:max_chars]
    return "<br>".join(_html.escape(line) for line in textwrap.wrap(text, width))


def space_figure(points: Sequence[Mapping[str, Any]], *, title: str = "", max_legend: int = 25):
    """Plotly scatter of :func:`space_points`: colour by domain, tools as diamonds, misrouted as red X."""
    import plotly.graph_objects as go
    from plotly.colors import qualitative

    palette = qualitative.Dark24 + qualitative.Light24
    domains = sorted({p["domain"] for p in points})
    colour = {d: ("#9e9e9e" if d == "(none)" else palette[i % len(palette)]) for i, d in enumerate(domains)}
    fig = go.Figure()
    for i, d in enumerate(domains):
        for kind, symbol, size in (("tool", "diamond", 11), ("query", "circle", 6)):
            pts = [p for p in points if p["domain"] == d and p["kind"] == kind]
            if not pts:
                continue
            fig.add_trace(go.Scatter(
                x=[p["x"] for p in pts], y=[p["y"] for p in pts], mode="markers", name=f"{d} ({'tools' if kind == 'tool' else 'queries'})",
                legendgroup=d, showlegend=i < max_legend, text=[p["text"] for p in pts], hoverinfo="text",
                marker={"symbol": symbol, "size": size, "color": colour[d], "opacity": 0.9 if kind == "tool" else 0.6,
                        "line": {"width": 1, "color": "#333"} if kind == "tool" else {"width": 0}}))
    wrong = [p for p in points if p["misrouted"]]
    if wrong:
        fig.add_trace(go.Scatter(x=[p["x"] for p in wrong], y=[p["y"] for p in wrong], mode="markers",
                                 name=f"misrouted ({len(wrong)})", text=[p["text"] for p in wrong], hoverinfo="text",
                                 marker={"symbol": "x-thin-open", "size": 12, "color": BAD, "line": {"width": 2, "color": BAD}}))
    n_tools = sum(p["kind"] == "tool" for p in points)
    fig.update_layout(title=title or f"{n_tools} tools and {len(points) - n_tools} queries (UMAP, cosine)",
                      height=640, xaxis={"visible": False}, yaxis={"visible": False}, hoverlabel={"align": "left"},
                      legend={"font": {"size": 10}}, margin={"t": 50, "b": 10})
    return fig


def neighbourhood(results, queries: Sequence[str] | None = None, *, k: int = 5, limit: int = 6):
    """For chosen queries (default: the misrouted ones, else the widest offers): nearest tools and the offer."""
    results = list(results)
    chosen = [r for r in results if (r.query in queries if queries else not r.correct)][:limit]
    if not chosen and not queries:
        chosen = sorted(results, key=lambda r: -len(r.offered))[:limit]
    rows = []
    for r in chosen:
        rows.append({"query": r.query, "gold": r.gold, "nearest tools (cosine)":
                     ", ".join(f"{h.name} {h.score:.2f}" for h in r.hits[:k]),
                     "rule": r.rule, "offered": r.offered[:8], "n_offered": len(r.offered),
                     "verdict": "ok" if r.correct else "misrouted"})
    colours = {(i, "verdict"): BAD for i, row in enumerate(rows) if row["verdict"] != "ok"}
    return table(rows, title="a query's neighbourhood explains its offer", colours=colours)


# ---------------------------------------------------------------------------------------------
# 03 policy walk-through
# ---------------------------------------------------------------------------------------------

#: What each rule id means (DESIGN.md "Rule ids"; the order of policy.decide's steps).
RULE_NOTES: dict[str, str] = {
    "CONVERSATIONAL": "short input, no URL, no tool keyword: conversation, nothing offered",
    "AGENDA_DIALOG_PAIRING": "a follow-up after an agenda tool: that domain's verbs",
    "MAIL_DIALOG_PAIRING": "a follow-up after a mail tool ('delete that email'): the mail verbs",
    "CALENDAR_DIALOG_PAIRING": "a follow-up after a calendar tool: the calendar verbs",
    "DOC_DIALOG_PAIRING": "a follow-up after a document tool: the doc verbs",
    "SINGLE_STRONG_HIT": "one embedding hit at or above the single-hit floor: one tool",
    "RANKED_SUBSET": "several hits, no near-tie across an affinity group: the ranked hits",
    "AFFINITY_MARGIN_UNION": "near-tie (within margin) across domains of one affinity group: their clusters",
    "LEXICAL_FORCED_ONLY": "only forced hits (a URL, a page phrase): the forced tool",
    "MIXED_EMBED_AND_LEXICAL": "forced hits plus embedding hits",
    "UNSURE_FULL_ROSTER": "a lone hit below the floor was demoted: the whole roster",
    "UNSURE_DOMAIN_CLUSTER": "a lone hit below the floor was demoted: its domain's cluster",
    "EMPTY_AFTER_POLICY": "no hit at all: the empty fallback (full roster, or nothing when abstaining)",
}


def _message(m: Any) -> tuple[str, tuple[str, ...]]:
    if isinstance(m, Mapping):
        return str(m.get("text", "")), tuple(m.get("recent", ()))
    return str(m), ()


def walkthrough(router, messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Route each message (a string or ``{"text", "recent": [...]}``) and say why the offer came out so.

    Returns one row per message: text, recent, guard, top hits, rule, kind, n_offered, offered,
    reason, overlays, and the rule's meaning.
    """
    rows = []
    for m in messages:
        text, recent = _message(m)
        routed = router.route(text, recent=recent)
        rows.append({
            "message": text, "recent": recent, "guard": routed.guard or "-",
            "hits >= threshold": ", ".join(f"{h.name} {h.score:.2f}" for h in routed.hits[:4]) or "(none)",
            "rule": str(routed.decision.rule), "kind": routed.decision.kind, "n_offered": len(routed.offer.names),
            "offered": routed.offer.names[:6] + (("…",) if len(routed.offer.names) > 6 else ()),
            "reason": routed.decision.reason, "overlays": routed.offer.overlays,
            "meaning": RULE_NOTES.get(str(routed.decision.rule), ""),
        })
    return rows


def walkthrough_table(rows: Sequence[Mapping[str, Any]]):
    """The walk-through rows as a table, the kind coloured (one tool, cluster, roster, nothing)."""
    kinds = {"subset": GOOD, "cluster": "#0969da", "full_roster": "#9a6700", "conversational": "#6e7781"}
    colours = {(i, "kind"): kinds.get(r["kind"], "") for i, r in enumerate(rows)}
    return table(rows, ["message", "recent", "guard", "hits >= threshold", "rule", "kind", "n_offered", "offered",
                        "reason", "overlays"], title="every message through the policy", colours=colours)


def rule_coverage(rows: Sequence[Mapping[str, Any]]):
    """Every rule id with its meaning and the walked messages it decided."""
    out = [{"rule": rule, "meaning": note, "messages": [r["message"] for r in rows if r["rule"] == rule]}
           for rule, note in RULE_NOTES.items()]
    return table(out, ["rule", "meaning", "messages"], title="the rules, and which message each one decided")


def score_figure(router, messages: Sequence[Any], *, top: int = 8):
    """Each message's best cosines per tool, with the threshold and single-hit floor drawn."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    texts = [_message(m)[0] for m in messages]
    scores = router.scores(texts) if texts else []
    names = router.catalog.names
    fig = make_subplots(rows=len(texts), cols=1, subplot_titles=[t[:70] for t in texts], vertical_spacing=0.4 / max(len(texts), 1))
    for i, row in enumerate(scores):
        order = sorted(range(len(names)), key=lambda j: -row[j])[:top]
        fig.add_trace(go.Bar(x=[names[j] for j in order], y=[float(row[j]) for j in order], showlegend=False,
                             marker={"color": [GOOD if row[j] >= router.knobs.single_hit_floor else
                                               ("#0969da" if row[j] >= router.knobs.threshold else "#afb8c1") for j in order]}),
                      row=i + 1, col=1)
        for level, dash in ((router.knobs.threshold, "dot"), (router.knobs.single_hit_floor, "dash")):
            fig.add_hline(y=level, line_dash=dash, line_color="#555", row=i + 1, col=1)
    fig.update_layout(height=max(260 * len(texts), 300), title="cosine per tool (dotted: threshold, dashed: single-hit floor)",
                      margin={"t": 60})
    return fig


# ---------------------------------------------------------------------------------------------
# 06 nightly summary
# ---------------------------------------------------------------------------------------------

NIGHTLY_COLUMNS = ("suite", "strategy", "n", "recall", "delta_recall", "top1", "delta_top1", "mean_offer",
                   "delta_mean_offer", "lock_in", "delta_lock_in", "full_roster_rate", "empty_rate",
                   "irrelevance_empty_rate", "offer_tokens", "seconds")


def nightly_table(rows: Sequence[Mapping[str, Any]]):
    """Every suite and strategy in one table; a regressed metric and its delta in red, gains in green."""
    colours: dict[tuple[int, str], str] = {}
    for i, r in enumerate(rows):
        for key in r.get("regressions", ()):
            colours[(i, key)] = BAD
            colours[(i, f"delta_{key}")] = BAD
        for col in NIGHTLY_COLUMNS:
            if col.startswith("delta_") and r.get(col) and col[6:] not in r.get("regressions", ()):
                colours.setdefault((i, col), GOOD if abs(r[col]) > 0.005 else "")
    n_bad = sum(bool(r.get("regressions")) for r in rows)
    return table(rows, NIGHTLY_COLUMNS, colours=colours,
                 title=f"{len(rows)} suite x strategy rows; {n_bad} with a regression (red) against the previous report")


def nightly_figure(rows: Sequence[Mapping[str, Any]], metric: str = "recall"):
    """Grouped bars: ``metric`` per suite, one bar per strategy."""
    import plotly.graph_objects as go

    suites = list(dict.fromkeys(r["suite"] for r in rows))
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    fig = go.Figure()
    for s in strategies:
        vals = {r["suite"]: r.get(metric) for r in rows if r["strategy"] == s}
        fig.add_trace(go.Bar(name=s, x=suites, y=[vals.get(x) for x in suites]))
    fig.update_layout(barmode="group", title=f"{metric} per suite and strategy", height=420, yaxis_title=metric)
    return fig


def tradeoff_figure(rows: Sequence[Mapping[str, Any]]):
    """Mean offer size against recall, one point per suite x strategy (hover names both)."""
    import plotly.graph_objects as go

    pts = [r for r in rows if isinstance(r.get("recall"), (int, float)) and isinstance(r.get("mean_offer"), (int, float))]
    fig = go.Figure()
    for s in dict.fromkeys(r["strategy"] for r in pts):
        sel = [r for r in pts if r["strategy"] == s]
        fig.add_trace(go.Scatter(x=[r["mean_offer"] for r in sel], y=[r["recall"] for r in sel], mode="markers",
                                 name=s, text=[f"{r['suite']} / {s}" for r in sel], hoverinfo="text+x+y",
                                 marker={"size": 10, "line": {"width": 2, "color": [BAD if r.get("regressions") else "#fff" for r in sel]}}))
    fig.update_layout(title="fewer tools offered vs recall (red ring: regressed)", xaxis_type="log",
                      xaxis_title="mean offered tools (log)", yaxis_title="recall", height=420)
    return fig


# ---------------------------------------------------------------------------------------------
# 04 grammar
# ---------------------------------------------------------------------------------------------


def code(text: str, *, title: str = "", max_lines: int = 80):
    """A block of monospaced text (a grammar), cut at ``max_lines``."""
    from IPython.display import HTML

    lines = text.splitlines()
    more = f"\n… {len(lines) - max_lines} more lines" if len(lines) > max_lines else ""
    head = f"<p><b>{_html.escape(title)}</b></p>" if title else ""
    return HTML(f"{head}<pre style='font-size:11px;white-space:pre-wrap;background:#f6f8fa;padding:8px'>"
                f"{_html.escape(chr(10).join(lines[:max_lines]) + more)}</pre>")


def cost_figure(costs: Sequence[Mapping[str, Any]]):
    """Prompt tokens (full vs slim) and grammar compile time against offer size."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    x = [c["tools"] for c in costs]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("prompt tokens per turn", "grammar compile time (ms)"))
    fig.add_trace(go.Scatter(x=x, y=[c["full_prompt_tokens"] for c in costs], name="full catalogue", mode="lines+markers"), 1, 1)
    fig.add_trace(go.Scatter(x=x, y=[c["slim_prompt_tokens"] for c in costs], name="slim offer", mode="lines+markers"), 1, 1)
    fig.add_trace(go.Scatter(x=x, y=[c["compile_ms"] for c in costs], name="compile", mode="lines+markers"), 1, 2)
    fig.add_trace(go.Scatter(x=x, y=[c["compile_and_check_ms"] for c in costs], name="compile + llama.cpp parse",
                             mode="lines+markers"), 1, 2)
    fig.update_xaxes(title_text="offered tools")
    fig.update_layout(height=380, title="what an offer costs")
    return fig


# ---------------------------------------------------------------------------------------------
# 05 generation
# ---------------------------------------------------------------------------------------------


def width_figure(summary: Sequence[Mapping[str, Any]]):
    """Tool-name accuracy and tokens/s against offer width, grammar vs free."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("tool-name accuracy", "tokens per second"))
    for mode in dict.fromkeys(r["mode"] for r in summary):
        sel = [r for r in summary if r["mode"] == mode]
        fig.add_trace(go.Scatter(x=[r["width"] for r in sel], y=[r["accuracy"] for r in sel], name=f"{mode} accuracy",
                                 mode="lines+markers"), 1, 1)
        fig.add_trace(go.Scatter(x=[r["width"] for r in sel], y=[r["tokens_per_s"] for r in sel], name=f"{mode} tok/s",
                                 mode="lines+markers"), 1, 2)
    fig.update_xaxes(title_text="offered tools")
    fig.update_layout(height=380, title="grammar vs free by offer width")
    return fig


#: Marker colours of :func:`token_figure`: chosen, allowed but not chosen, masked by the grammar.
TOKEN_COLOURS: Mapping[str, str] = {"chosen": GOOD, "allowed": "#8c959f", "masked": BAD}


def token_figure(steps, *, title: str = ""):
    """A plotly figure: per step (x), the model's top tokens by probability (y, before the mask),
    masked ones red crosses, allowed ones grey, the chosen token green (also when the model ranked
    it outside its top k); hover shows the token and the text before it."""
    import plotly.graph_objects as go

    from .tokens import shown

    points: dict[str, list[tuple[int, float, str, str]]] = {k: [] for k in TOKEN_COLOURS}
    for s in steps:
        for c in s.ranked:
            if c.token == s.chosen.token:
                continue
            points["allowed" if c.allowed else "masked"].append((s.index, c.probability, shown(c.text), s.before[-30:]))
        points["chosen"].append((s.index, s.chosen.probability, shown(s.chosen.text), s.before[-30:]))
    fig = go.Figure()
    symbols = {"chosen": "circle", "allowed": "circle-open", "masked": "x"}
    names = {"chosen": "chosen (best allowed)", "allowed": "allowed, not chosen", "masked": "masked by the grammar"}
    for key, pts in points.items():
        if not pts:
            continue
        fig.add_trace(go.Scatter(
            x=[p[0] for p in pts], y=[p[1] for p in pts], mode="markers+text" if key == "chosen" else "markers",
            text=[p[2] for p in pts], textposition="top center", name=names[key],
            marker={"color": TOKEN_COLOURS[key], "symbol": symbols[key], "size": 10},
            customdata=[[p[3]] for p in pts], hovertemplate="%{text}  p=%{y:.3f}<br>after: %{customdata[0]}<extra></extra>"))
    overridden = [s.index for s in steps if s.kind == "overridden"]
    for x in overridden:
        fig.add_vline(x=x, line={"color": TOKEN_COLOURS["masked"], "width": 1, "dash": "dot"})
    fig.update_layout(title=title or "the model's top tokens per step, before the grammar's mask",
                      xaxis_title="step (generated token)", yaxis_title="model probability (before the mask)",
                      yaxis={"range": [0, 1.08]}, height=420, legend={"orientation": "h", "y": -0.2})
    return fig


def token_table(steps):
    """:func:`eris_lab.lab.tokens.rows` as a table; the step kind coloured: overridden red, forced grey."""
    from .tokens import rows

    shown_rows = rows(steps)
    colours = {(i, "kind"): BAD if r["kind"] == "overridden" else "#8c959f" for i, r in enumerate(shown_rows)
               if r["kind"] != "model"}
    return table(shown_rows, colours=colours, title="token by token: the model's ranking, the grammar's mask, the choice")
