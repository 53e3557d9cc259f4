"""Helpers of the browser tests: Debian's Chromium, a small PNG decoder, numbered screenshots.

The browser tests (``test_lab_report_browser.py``, ``test_lab_server_browser.py``) run only where Debian's
``chromium`` is installed (``.ci/run`` installs it); nothing downloads a browser.
"""

from __future__ import annotations

import datetime as _dt
import shutil
import struct
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium")
#: Screenshots of one pytest run: ``reports/browser/<UTC stamp>/<test>/NN_step.png`` (git-ignored).
SHOTS_ROOT = ROOT / "reports" / "browser"
_run_folder: Path | None = None


def run_folder() -> Path:
    """This pytest run's screenshot folder (created on first use; conftest prints it at the end)."""
    global _run_folder
    if _run_folder is None:
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        _run_folder = SHOTS_ROOT / stamp
        _run_folder.mkdir(parents=True, exist_ok=True)
    return _run_folder


def shots_written() -> Path | None:
    """The screenshot folder if this run wrote one, else None."""
    return _run_folder


def read_png(path: Path) -> tuple[int, int, list[bytes], int]:
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes): (width, height, rows of RGB(A) bytes, bytes per pixel)."""
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


def colour_stats(path: Path, near: tuple[int, int, int] | None = None) -> dict[str, int]:
    """``pixels``, ``non_white`` (any channel < 235), ``colours`` (distinct colours at 4 bits per
    channel) and, with ``near`` an RGB colour, ``near`` (pixels within 30 of it on every channel)."""
    _, _, rows, bpp = read_png(path)
    total = non_white = close = 0
    colours = set()
    for row in rows:
        for j in range(0, len(row), bpp):
            r, g, b = row[j], row[j + 1], row[j + 2]
            total += 1
            if r < 235 or g < 235 or b < 235:
                non_white += 1
            if near is not None and abs(r - near[0]) < 30 and abs(g - near[1]) < 30 and abs(b - near[2]) < 30:
                close += 1
            colours.add((r >> 4, g >> 4, b >> 4))
    return {"pixels": total, "non_white": non_white, "colours": len(colours), "near": close}


class Steps:
    """Numbered screenshots of one test's steps: ``<run folder>/<test>/NN_step.png``.

    ``with Steps(page, "test_name") as steps:`` writes ``NN_failed.png`` when the block raises, so
    the last picture shows where a test stopped.
    """

    def __init__(self, page, test: str) -> None:
        self.page = page
        self.folder = run_folder() / test
        self.folder.mkdir(parents=True, exist_ok=True)
        self.n = 0

    def shot(self, step: str, locator=None) -> Path:
        """Screenshot the page (or one element) as the next numbered step; returns the file."""
        self.n += 1
        path = self.folder / f"{self.n:02d}_{step}.png"
        (locator or self.page).screenshot(path=str(path))
        return path

    def __enter__(self) -> "Steps":
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is not None:
            try:
                self.shot("failed")
            except Exception:  # a dead page must not hide the real failure
                pass
