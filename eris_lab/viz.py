"""Figures and tables for the notebooks: plotly figures, small HTML tables, one ``show``.

Every function returns a figure or an ``IPython.display.HTML`` object; notebooks call one
function per figure or table (STYLE.md "Notebooks stay thin"). ``show(fig)`` publishes a
figure as HTML without plotly.js (the report page inlines plotly.js once, ``report.export_html``)
together with plotly's own JSON mime type, which JupyterLab renders natively.
"""

from __future__ import annotations

import html as _html
from typing import Any, Mapping, Sequence

__all__ = ["show", "table", "BAD", "GOOD"]

BAD = "#cf222e"  # regressions, misrouted queries (red)
GOOD = "#1a7f37"  # improvements (green)


def show(fig) -> None:
    """Display a plotly figure: HTML (no plotly.js, offline report) + plotly JSON (JupyterLab)."""
    from IPython.display import display

    bundle = {
        "text/html": fig.to_html(full_html=False, include_plotlyjs=False),
        "application/vnd.plotly.v1+json": fig.to_plotly_json(),
        "text/plain": f"<plotly figure: {fig.layout.title.text or 'untitled'}>",
    }
    display(bundle, raw=True)


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
    head = "".join(f"<th>{_html.escape(c)}</th>" for c in columns)
    body = []
    for i, row in enumerate(rows[:max_rows]):
        cells = []
        for c in columns:
            colour = colours.get((i, c))
            style = f" style='color:{colour};font-weight:bold'" if colour else ""
            cells.append(f"<td{style}>{_cell(row.get(c))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f"<p>… {len(rows) - max_rows} more rows</p>" if len(rows) > max_rows else ""
    caption = f"<caption style='text-align:left;font-weight:bold'>{_html.escape(title)}</caption>" if title else ""
    return HTML(f"<table class='eris-table'>{caption}<thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table>{more}")
