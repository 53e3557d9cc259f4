"""The notebooks as a person uses them: JupyterLab and Voila, driven by headless Chromium.

A widget tested only as a Python function can still be dead in the browser (no kernel comm, a
figure that never redraws, a slider that freezes). These tests start the real servers through
``eris_lab.lab`` (what ``make lab`` and ``make tune`` run) on a free loopback port with a token and
drive Debian's Chromium with Playwright (``executable_path``: no browser download):

* notebook 02 in JupyterLab: open the jupytext source as a notebook, Run All from the Run menu,
  move the threshold slider with the keyboard; the metrics table's numbers, the curve's
  "current" marker and the status line must change, no cell may show an error, the kernel must be
  idle;
* notebook 02 as the Voila app: the page runs the notebook, shows no code, and dragging the
  threshold slider with the mouse redraws the table and the plot;
* notebook 01 in JupyterLab: the UMAP map is drawn (a screenshot with many colours) and a real
  mouse hover over a tool's diamond shows that tool's ``domain:verb`` name.

After each server stops, no process it started may be left. The notebooks run with small
parameters (``quick``, no tuner) written into a copy of their sources (``lab.prepare``); the kernel
keeps its embedding vectors in ``.cache/lab/test-vectors`` so reruns do not re-embed BFCL.
Screenshots of every step: ``reports/browser/<UTC stamp>/<test>/`` (printed at the end of the
run). Skipped where chromium, playwright, jupyterlab or voila is missing (``make install`` and
``.ci/run`` provide them). About 2 to 3 minutes on a busy 2-core machine.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request

import pytest
from _browser import CHROMIUM, ROOT, Steps, colour_stats

pytest.importorskip("papermill")
pytest.importorskip("jupytext")
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
pytest.importorskip("jupyterlab")
pytest.importorskip("voila")
psutil = pytest.importorskip("psutil")

from eris_lab import catalog  # noqa: E402
from eris_lab.lab import server as lab  # noqa: E402

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install -y chromium)")

TUNING = ROOT / "notebooks" / "02_threshold_tuning.py"
SPACE = ROOT / "notebooks" / "01_embedding_space.py"
KERNEL_ENV = {"ERIS_LAB_CACHE": str(ROOT / ".cache" / "lab" / "test-vectors")}
KERNEL_LABEL = "Python (eris_lab)"  # the kernelspec's display name (report.ensure_kernel)
RUN_TIMEOUT_MS = 300_000  # Run All of one notebook (01 embeds BFCL's 1,041 tools on a cold cache)
REDRAW_TIMEOUT_MS = 15_000  # a slider move to a redrawn table (the debounce is 0.25 s)
TOOL_NAME = re.compile(r"[a-z]+:[a-z_]+")  # the demo catalogue's domain:verb

# --- what the page shows, read in the browser -------------------------------------------------

METRICS_JS = """() => {
  const t = document.querySelector('table.eris-table');
  return t ? {caption: t.querySelector('caption').textContent,
              cells: Array.from(t.querySelectorAll('tbody td')).map(td => td.textContent)} : null;
}"""
CURRENT_MARKER_JS = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  const t = gd && (gd.data || []).find(d => d.name === 'current');
  return t ? [t.x[0], t.y[0]] : null;
}"""
STATUS_JS = """() => Array.from(document.querySelectorAll('.widget-html')).map(e => e.textContent).find(
  t => t.startsWith('re-decided')) || ''"""
ERRORS_JS = """() => Array.from(document.querySelectorAll(
    '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"], .jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]'))
  .map(e => e.textContent).filter(t => /Traceback|^\\w*(Error|Exception)\\b/m.test(t)).map(t => t.slice(0, 800))"""
ALL_RUN_JS = """() => {
  const prompts = Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt'))
    .map(p => p.textContent.trim());
  return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p));
}"""
# The most isolated tool diamond of the first map, in page pixels (plotly's axis mapping).
HOVER_TARGET_JS = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, pts = [];
  gd._fullData.forEach(t => t.x.forEach((x, j) => pts.push({
    tool: t.marker.symbol === 'diamond', text: t.text[j],
    px: xa._offset + xa.l2p(x), py: ya._offset + ya.l2p(t.y[j])})));
  let best = null, gap = -1;
  for (const p of pts.filter(p => p.tool)) {
    const d = Math.min(...pts.filter(q => q !== p).map(q => Math.hypot(p.px - q.px, p.py - q.py)));
    if (d > gap) { gap = d; best = p; }
  }
  const r = gd.getBoundingClientRect();
  return {x: r.left + best.px, y: r.top + best.py, text: best.text, gap: gap};
}"""


# --- fixtures and helpers ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium (Debian's) for the module; every test opens its own page."""
    with playwright_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    try:
        yield context.new_page()
    finally:
        context.close()


def left_behind(server: lab.Server) -> list[str]:
    """Processes of a stopped server still alive (zombies count as gone)."""
    alive = []
    for pid in sorted(server.pids):
        try:
            proc = psutil.Process(pid)
            if proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(f"{pid} {' '.join(proc.cmdline())[:120]}")
        except psutil.NoSuchProcess:
            pass
    return alive


def api(server: lab.Server, path: str):
    """GET a JupyterLab REST path (token in the URL); the decoded JSON."""
    with urllib.request.urlopen(server.url(path), timeout=10) as response:
        return json.loads(response.read())


def open_and_run_all(page, server: lab.Server, notebook: str, steps: Steps) -> None:
    """Open a jupytext source as a notebook, wait for its kernel, Run All from the Run menu, wait until every cell ran."""
    page.goto(server.url(f"lab/tree/{notebook}"))
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    page.get_by_text(f"{KERNEL_LABEL} | Idle").wait_for()  # Run All before the kernel connects would run nothing
    steps.shot("opened")
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    page.wait_for_function(ALL_RUN_JS, timeout=RUN_TIMEOUT_MS, polling=500)
    page.get_by_text(f"{KERNEL_LABEL} | Idle").wait_for()


def assert_kernel_idle_without_errors(page, server: lab.Server) -> None:
    assert page.evaluate(ERRORS_JS) == [], "a cell shows an error"
    kernels = api(server, "api/kernels")
    assert kernels and all(k["execution_state"] == "idle" for k in kernels), kernels
    assert "Traceback" not in server.log.read_text(errors="replace"), f"the server or kernel logged a traceback: {server.log}"


def wait_redraw(page, before: dict) -> float:
    """Wait until the metrics table differs from ``before``; seconds it took."""
    start = time.monotonic()
    page.wait_for_function(f"(old) => {{ const m = ({METRICS_JS})(); return m && JSON.stringify(m) !== JSON.stringify(old); }}",
                           arg=before, timeout=REDRAW_TIMEOUT_MS, polling=50)
    return time.monotonic() - start


def numbers(cells: list[str]) -> list[float]:
    return [float(c) for c in cells if re.fullmatch(r"-?\d+(\.\d+)?", c.strip())]


# --- the tests ---------------------------------------------------------------------------------


def test_tuning_notebook_in_jupyterlab(tmp_path, page):
    root = tmp_path / "notebooks"
    lab.prepare(TUNING, {"quick": True, "tune": False}, out_dir=root, fmt="py")
    with Steps(page, "tuning_jupyterlab") as steps:
        with lab.serve("lab", root, state_dir=tmp_path / "state", isolated=True, env=KERNEL_ENV) as server:
            open_and_run_all(page, server, TUNING.name, steps)
            page.locator(".widget-slider", has_text="threshold").first.scroll_into_view_if_needed()
            steps.shot("ran_all")
            before, marker_before = page.evaluate(METRICS_JS), page.evaluate(CURRENT_MARKER_JS)
            status_before = page.evaluate(STATUS_JS)
            assert before and "threshold 0.50" in before["caption"] and marker_before, "the panel did not render"
            plot = page.locator(".js-plotly-plot").first
            plot_before = steps.shot("plot_before", plot).read_bytes()

            slider = page.locator(".widget-slider", has_text="threshold").first
            slider.locator(".noUi-handle").focus()
            for _ in range(10):  # +0.10, one step of 0.01 per key, as a person taps the arrow key
                page.keyboard.press("ArrowRight")
            assert slider.locator(".widget-readout").inner_text().strip() == "0.60"
            seconds = wait_redraw(page, before)
            after = page.evaluate(METRICS_JS)
            steps.shot(f"moved_to_0.60_redrawn_in_{seconds:.2f}s")

            assert "threshold 0.60" in after["caption"]
            assert numbers(after["cells"]) != numbers(before["cells"]), "the metrics did not change"
            page.wait_for_function(f"(old) => JSON.stringify(({CURRENT_MARKER_JS})()) !== JSON.stringify(old)",
                                   arg=marker_before, timeout=REDRAW_TIMEOUT_MS)
            plot = page.locator(".js-plotly-plot").first
            assert steps.shot("plot_after", plot).read_bytes() != plot_before, "the plot looks the same"
            assert page.evaluate(STATUS_JS) not in ("", status_before), "the status line did not update"
            assert seconds < 5, f"a slider move took {seconds:.1f} s to redraw"
            assert_kernel_idle_without_errors(page, server)
            kernels = {k["name"] for k in api(server, "api/kernels")}
            assert kernels == {"eris-lab"}, kernels  # the project's kernelspec (this interpreter)
    assert left_behind(server) == []


def test_tuning_app_in_voila(tmp_path, page):
    notebook = lab.prepare(TUNING, {**lab.TUNE_PARAMS, "quick": True}, out_dir=tmp_path)
    with Steps(page, "tuning_voila") as steps:
        with lab.serve("voila", notebook, state_dir=tmp_path / "state", env=KERNEL_ENV) as server:
            page.goto(server.url())
            slider = page.locator(".widget-slider", has_text="threshold").first
            slider.wait_for(timeout=RUN_TIMEOUT_MS)
            page.locator(".js-plotly-plot").first.wait_for()
            steps.shot("loaded")
            assert "tuning.panel(" not in page.inner_text("body"), "Voila shows the code"
            before, marker_before = page.evaluate(METRICS_JS), page.evaluate(CURRENT_MARKER_JS)
            assert before and "threshold 0.50" in before["caption"] and marker_before

            handle = slider.locator(".noUi-handle")
            box = handle.bounding_box()
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.down()
            page.mouse.move(box["x"] + box["width"] / 2 + 20, box["y"] + box["height"] / 2, steps=8)
            page.mouse.up()
            readout = float(slider.locator(".widget-readout").inner_text())
            assert readout > 0.5, readout
            seconds = wait_redraw(page, before)
            after = page.evaluate(METRICS_JS)
            steps.shot(f"dragged_to_{readout:.2f}_redrawn_in_{seconds:.2f}s")
            assert f"threshold {readout:.2f}" in after["caption"]
            assert numbers(after["cells"]) != numbers(before["cells"])
            page.wait_for_function(f"(old) => JSON.stringify(({CURRENT_MARKER_JS})()) !== JSON.stringify(old)",
                                   arg=marker_before, timeout=REDRAW_TIMEOUT_MS)
            assert page.evaluate(ERRORS_JS) == []
            assert "There was an error when executing cell" not in page.inner_text("body")
            assert "Traceback" not in server.log.read_text(errors="replace")
    assert left_behind(server) == []


def test_embedding_map_in_jupyterlab_hovers_a_tool_name(tmp_path, page):
    root = tmp_path / "notebooks"
    lab.prepare(SPACE, {"quick": True}, out_dir=root, fmt="py")
    names = {t.name for t in catalog.load()}
    with Steps(page, "embedding_jupyterlab") as steps:
        with lab.serve("lab", root, state_dir=tmp_path / "state", isolated=True, env=KERNEL_ENV) as server:
            open_and_run_all(page, server, SPACE.name, steps)
            plot = page.locator(".js-plotly-plot").first
            plot.scroll_into_view_if_needed()
            shot = steps.shot("map", plot)
            stats = colour_stats(shot)
            assert stats["non_white"] > 0.2 * stats["pixels"], stats  # plotly's grey plot area, then points
            assert stats["colours"] >= 20, f"the map looks blank: {stats}"

            target = page.evaluate(HOVER_TARGET_JS)
            expected = re.search(r"<b>(.*?)</b>", target["text"]).group(1)
            assert expected in names and TOOL_NAME.fullmatch(expected), expected
            page.mouse.move(target["x"] - 30, target["y"] - 30)
            page.mouse.move(target["x"], target["y"], steps=5)
            label = page.locator(".hoverlayer .hovertext").first
            label.wait_for(timeout=10_000)
            steps.shot("hover", plot)
            text = label.text_content()
            assert text.startswith(expected), text  # the label's first line is the tool's name
            assert_kernel_idle_without_errors(page, server)
    assert left_behind(server) == []
