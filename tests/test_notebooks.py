"""The notebooks: thin, parameterised, and each one executes under papermill with small parameters.

Fast (default suite): every parameters cell is fully readable by papermill, notebooks hold no
def/class, and 03 (policy walk-through) executes. Slow (``-m slow``): every other notebook
executes with small parameters; checks: no error cell, the recorded summary keys, the figures.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("papermill")
jupytext = pytest.importorskip("jupytext")

from eris_lab.lab import report  # noqa: E402

NOTEBOOKS = report.notebooks()
IDS = [p.stem for p in NOTEBOOKS]
PARAM_LINE = re.compile(r"^(\w+)\s*:\s*\w+\s*=")


def _load(path: Path):
    nb = jupytext.read(str(path))
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    for cell in nb.cells:
        cell.metadata.setdefault("tags", [])
    return nb


def test_six_notebooks_are_paired_by_jupytext_toml():
    assert IDS == ["01_embedding_space", "02_threshold_tuning", "03_policy_walkthrough", "04_grammar_inspection",
                   "05_constrained_generation", "06_nightly_summary"]
    toml = (report.NOTEBOOK_DIR / "jupytext.toml").read_text()
    assert 'formats = "ipynb,py:percent"' in toml
    assert not _committed_ipynb(), "commit no .ipynb: the .py scripts are the sources"


def _committed_ipynb() -> list[str]:
    """``.ipynb`` files git tracks under notebooks/ (saving in ``make lab`` writes ignored ones); outside
    a git checkout, every ``.ipynb`` there."""
    try:
        tracked = subprocess.run(["git", "ls-files", "--", "*.ipynb"], cwd=report.NOTEBOOK_DIR, capture_output=True,
                                 text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        tracked = None
    if tracked is not None and tracked.returncode == 0:
        return tracked.stdout.split()
    return [p.name for p in report.NOTEBOOK_DIR.glob("*.ipynb")]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_parameters_cell_is_read_whole_by_papermill(path):
    from papermill.inspection import _infer_parameters

    nb = _load(path)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, "exactly one cell tagged parameters"
    written = [m.group(1) for line in cells[0].source.splitlines() if (m := PARAM_LINE.match(line))]
    inferred = [p.name for p in _infer_parameters(nb)]
    assert inferred == written, "papermill could not read every parameter line (a quote or '=' in a comment?)"
    assert "quick" in written and "report_dir" in written
    for p in _infer_parameters(nb):
        assert p.help, f"parameter {p.name!r} has no unit/help comment"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_is_thin(path):
    code = "\n".join(c.source for c in _load(path).cells if c.cell_type == "code")
    assert not re.search(r"^\s*(def|class|async def)\s", code, re.M), "logic belongs in the package"
    assert _load(path).cells[0].cell_type == "markdown", "a title cell first"


def _execute(tmp_path, name: str, params: dict) -> tuple[report.RunResult, dict, dict]:
    path = report.NOTEBOOK_DIR / f"{name}.py"
    result = report.run(out=tmp_path / "reports", sources=[path], quick=True, notebook_params={name: params},
                        progress=False)
    assert result.ok, [str(f) for f in result.failures]
    nb = json.loads((result.folder / f"{name}.ipynb").read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    recorded = result.summary["results"][name]
    n_figures = sum("application/vnd.plotly.v1+json" in o.get("data", {}) for o in outputs)
    assert n_figures >= recorded["figures"] >= 1
    page = (result.folder / f"{name}.html").read_text()
    assert "Plotly.newPlot" in page
    return result, recorded, nb


def test_03_policy_walkthrough_executes(tmp_path):
    _, rec, _ = _execute(tmp_path, "03_policy_walkthrough",
                         {"messages": ["What's the weather like in Berlin tomorrow?", "thanks!",
                                       "I need you to handle something important for me today",
                                       {"text": "delete that email", "recent": ["mail:check"]}]})
    assert [d["kind"] for d in rec["decisions"]] == ["subset", "conversational", "full_roster", "cluster"]
    assert rec["decisions"][3]["rule"] == "MAIL_DIALOG_PAIRING"


@pytest.mark.slow
def test_01_embedding_space_executes(tmp_path):
    _, rec, _ = _execute(tmp_path, "01_embedding_space", {"pooled_queries": 40, "pooled_tools": 60})
    assert {"recall", "n_misrouted", "n_queries", "pooled_points"} <= set(rec)


@pytest.mark.slow
def test_02_threshold_tuning_executes_statically(tmp_path):
    result, rec, nb = _execute(tmp_path, "02_threshold_tuning", {"threshold": 0.45})
    assert rec["knobs"]["threshold"] == 0.45
    assert rec["tuned"] and Path(rec["tuned"]["file"]).is_file()
    assert "widget-view" not in json.dumps(nb)  # no widgets under papermill (nor tqdm's widget bars)
    html = json.dumps([o.get("data", {}).get("text/html", "") for c in nb["cells"] for o in c.get("outputs", [])])
    assert "misrouted (" in html and "strategies at the chosen knobs" in html
    # the calibrated policy's point, coverage per alpha (label-free and labelled), the gate's trade-off
    assert 0 <= rec["calibrated"]["recall"] <= 1 and rec["calibrated"]["mean_offer"] > 0
    assert [r["alpha"] for r in rec["coverage"]] == [0.05, 0.2] and all(r["labelled"] is not None for r in rec["coverage"])
    rows = rec["relevance"]["rows"]
    assert rows[0]["floor"] == 0 and rows[-1]["empty_rate"] >= rows[0]["empty_rate"]
    assert rows[-1]["recall"] <= rows[0]["recall"] and rec["relevance"]["default_floor"] > 0
    assert rec["figures"] == 4 and "observed recall and mean offer per alpha" in html


@pytest.mark.slow
def test_04_grammar_inspection_executes(tmp_path):
    _, rec, _ = _execute(tmp_path, "04_grammar_inspection", {"sizes": [1, 3]})
    assert rec["verdicts_agree"] is True and rec["grammar_chars"] > 0


@pytest.mark.slow
def test_05_constrained_generation_executes(tmp_path):
    _, rec, nb = _execute(tmp_path, "05_constrained_generation", {"max_tokens": 24, "token_steps": 8})
    assert {(r["width"], r["mode"]) for r in rec["summary"]} == {(1, "grammar"), (1, "free"), (3, "grammar"), (3, "free")}
    # the token-by-token view of the parameter message: every step is a kind, the text is a reply's start
    view = rec["tokens"]
    assert view["message"] == "What time is it in Tokyo?" and view["steps"] == 8
    assert view["forced"] + view["overridden"] + view["model"] == 8 and view["text"].startswith("{")
    html = json.dumps([o.get("data", {}).get("text/html", "") for c in nb["cells"] for o in c.get("outputs", [])])
    assert "token by token" in html and "masked by the grammar" in html


@pytest.mark.slow
def test_06_nightly_summary_executes_and_flags_against_previous(tmp_path):
    params = {"suites": ["demo"], "strategies": ["keyword", "dense"], "quick_limit": 15}
    first, rec, _ = _execute(tmp_path, "06_nightly_summary", params)
    assert rec["n_rows"] == 2 and all(r["previous"] is False for r in rec["rows"])
    # the recorded transfer table (docs/results) is shown, not re-run
    assert rec["transfer"]["source"].startswith("transfer-") and rec["transfer"]["cells"]
    second, rec2, _ = _execute(tmp_path, "06_nightly_summary", params)
    assert second.summary["previous"] == first.folder.name
    assert all(r["previous"] for r in rec2["rows"]) and rec2["regressions"] == []
