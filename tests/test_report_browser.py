"""The HTML report in a real browser: headless Chromium renders a plotly figure from the page.

Skipped only where Debian's ``chromium`` is not installed (``.ci/run``: ``apt-get install -y chromium``).
The page has no network (plotly.js is inlined), and the screenshot must show the figure's
default trace colour, not a blank page.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

pytest.importorskip("papermill")

from eris_lab import report  # noqa: E402

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install -y chromium)")

NOTEBOOK = '''# %% tags=["parameters"]
quick: bool = False  # small samples

# %%
import plotly.graph_objects as go
from eris_lab import viz
viz.show(go.Figure(go.Scatter(x=[0, 1, 2, 3], y=[0, 3, 1, 2], mode="lines+markers",
                              marker={"size": 40}, line={"width": 12})).update_layout(width=900, height=600))
'''
PLOTLY_BLUE = (99, 110, 250)  # #636efa, plotly's first default trace colour


def read_png(path: Path) -> tuple[int, int, list[bytes], int]:
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes): (width, height, rows of RGB(A) bytes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and colour in (2, 6)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def screenshot(page: Path, out: Path, profile: Path) -> Path:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={profile}", "--window-size=1100,900", "--virtual-time-budget=15000",
           f"--screenshot={out}", page.resolve().as_uri()]
    subprocess.run(cmd, check=True, capture_output=True, timeout=180)
    return out


def colour_counts(path: Path) -> tuple[int, int, int]:
    """(pixels, non-white pixels, pixels near plotly's first trace colour)."""
    width, height, rows, bpp = read_png(path)
    total = non_white = blue = 0
    for row in rows:
        for j in range(0, len(row), bpp):
            r, g, b = row[j], row[j + 1], row[j + 2]
            total += 1
            if r < 235 or g < 235 or b < 235:
                non_white += 1
            if abs(r - PLOTLY_BLUE[0]) < 30 and abs(g - PLOTLY_BLUE[1]) < 30 and abs(b - PLOTLY_BLUE[2]) < 30:
                blue += 1
    return total, non_white, blue


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
