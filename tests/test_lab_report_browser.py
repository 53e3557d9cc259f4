"""The HTML report in a real browser: headless Chromium renders a plotly figure from the page.

Skipped only where Debian's ``chromium`` is not installed (``.ci/run``: ``apt-get install -y chromium``).
The page has no network (plotly.js is inlined), and the screenshot must show the figure's
default trace colour, not a blank page.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from _browser import CHROMIUM, colour_stats

pytest.importorskip("papermill")

from eris_lab.lab import report  # noqa: E402

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install -y chromium)")

NOTEBOOK = '''# %% tags=["parameters"]
quick: bool = False  # small samples

# %%
import plotly.graph_objects as go
from eris_lab.lab import viz
viz.show(go.Figure(go.Scatter(x=[0, 1, 2, 3], y=[0, 3, 1, 2], mode="lines+markers",
                              marker={"size": 40}, line={"width": 12})).update_layout(width=900, height=600))
'''
PLOTLY_BLUE = (99, 110, 250)  # #636efa, plotly's first default trace colour


def screenshot(page: Path, out: Path, profile: Path) -> Path:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={profile}", "--window-size=1100,900", "--virtual-time-budget=15000",
           f"--screenshot={out}", page.resolve().as_uri()]
    subprocess.run(cmd, check=True, capture_output=True, timeout=180)
    return out


def colour_counts(path: Path) -> tuple[int, int, int]:
    """(pixels, non-white pixels, pixels near plotly's first trace colour)."""
    stats = colour_stats(path, near=PLOTLY_BLUE)
    return stats["pixels"], stats["non_white"], stats["near"]


def test_report_page_renders_plotly_figure_offline(tmp_path):
    src = tmp_path / "01_plot.py"
    src.write_text(NOTEBOOK)
    result = report.run(out=tmp_path / "reports", sources=[src], progress=False)
    assert result.ok
    shot = screenshot(result.folder / "01_plot.html", tmp_path / "page.png", tmp_path / "profile")
    total, non_white, blue = colour_counts(shot)
    assert non_white > 0.01 * total, "the page is blank"
    assert blue > 2000, f"no plotly trace drawn ({blue} pixels of the trace colour)"
    # the index page renders too (no script needed), and links the page
    index = screenshot(result.folder / "index.html", tmp_path / "index.png", tmp_path / "profile2")
    assert colour_counts(index)[1] > 0
