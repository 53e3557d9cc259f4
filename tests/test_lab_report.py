"""report.run semantics on tiny synthetic notebooks, the CLI entry, deltas and the HTML export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("papermill")
pytest.importorskip("jupytext")

from eris_lab import cli  # noqa: E402
from eris_lab.lab import report  # noqa: E402

GOOD = '''# %% [markdown]
# # A tiny notebook

# %% tags=["parameters"]
quick: bool = False  # small samples
report_dir: str = ""  # set by the report
n: int = 3  # how many

# %%
from eris_lab.lab import report
report.record(report_dir, "{name}", {{"n": n, "quick": quick}})

# %%
import plotly.graph_objects as go
from eris_lab.lab import viz
viz.show(go.Figure(go.Scatter(x=list(range(n)), y=list(range(n)))))
'''

BAD = '''# %% tags=["parameters"]
quick: bool = False  # small samples

# %%
x = 1

# %%
raise ValueError("broken on purpose")
'''


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(text.format(name=name))
    return path


@pytest.fixture()
def sources(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    return src


def test_run_success_moves_latest_and_writes_summary(tmp_path, sources):
    paths = [_write(sources, "01_one", GOOD), _write(sources, "02_two", GOOD)]
    out = tmp_path / "reports"
    result = report.run(out=out, sources=paths, quick=True, params={"n": 4}, progress=False)
    assert result.ok and result.latest_moved
    latest = out / "latest"
    assert latest.is_symlink() and latest.resolve() == result.folder.resolve()
    summary = json.loads((result.folder / "summary.json").read_text())
    assert summary["status"] == "ok" and summary["quick"] is True
    assert [n["name"] for n in summary["notebooks"]] == ["01_one", "02_two"]
    assert summary["results"]["01_one"] == {"n": 4, "quick": True}
    for name in ("01_one", "02_two"):
        page = (result.folder / f"{name}.html").read_text()
        assert "Plotly.newPlot" in page and 'src="https://cdn.plot.ly' not in page
        assert len(page) > 1_000_000  # plotly.js inlined: the page works offline
        assert (result.folder / f"{name}.ipynb").is_file()
    index = (result.folder / "index.html").read_text()
    assert "01_one.html" in index and "02_two.ipynb" in index


def test_run_failure_keeps_partial_run_and_latest(tmp_path, sources):
    out = tmp_path / "reports"
    first = report.run(out=out, sources=[_write(sources, "01_one", GOOD)], progress=False)
    assert first.ok
    paths = [_write(sources, "01_one", GOOD), _write(sources, "02_bad", BAD), _write(sources, "03_after", GOOD)]
    result = report.run(out=out, sources=paths, progress=False)
    assert not result.ok and not result.latest_moved
    assert (out / "latest").resolve() == first.folder.resolve()
    assert result.folder != first.folder and result.folder.is_dir()
    (failure,) = result.failures
    assert failure.notebook == "02_bad" and failure.ename == "ValueError"
    assert "raise ValueError" in failure.source_line
    assert str(failure).startswith("02_bad: cell ")
    # the run carried on past the failure, and the failed notebook was kept with its banner
    statuses = {n.name: n.status for n in result.notebooks}
    assert statuses == {"01_one": "ok", "02_bad": "failed", "03_after": "ok"}
    assert "ValueError" in (result.folder / "02_bad.ipynb").read_text()
    summary = json.loads((result.folder / "summary.json").read_text())
    assert summary["status"] == "failed" and "02_bad" in summary["failures"][0]


def test_cli_report_exits_nonzero_naming_notebook_and_cell(tmp_path, sources, capsys):
    src = _write(sources, "01_bad", BAD)
    code = cli.main(["report", "--out", str(tmp_path / "r"), "--notebook", str(src), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1
    assert "01_bad: cell " in err and "ValueError: broken on purpose" in err
    assert not (tmp_path / "r" / "latest").exists()


def test_cli_report_unknown_parameter_is_a_usage_error(tmp_path, sources, capsys):
    src = _write(sources, "01_one", GOOD)
    code = cli.main(["report", "--out", str(tmp_path / "r"), "--notebook", str(src), "-p", "nope=1"])
    assert code == 2
    assert capsys.readouterr().err.strip() == "eris-lab: error: parameters: no notebook declares parameter 'nope'"


def test_cli_report_parameter_of_the_wrong_type_is_a_usage_error(tmp_path, sources, capsys):
    src = _write(sources, "01_one", GOOD)
    code = cli.main(["report", "--out", str(tmp_path / "r"), "--notebook", str(src), "-p", "n=abc"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "eris-lab: error: parameters: 01_one parameter n: expected int (default 3), got a string 'abc'")
    assert not (tmp_path / "r").exists()  # refused before a run folder was made


def test_params_file_reaches_only_its_notebook(tmp_path, sources):
    toml = tmp_path / "p.toml"
    toml.write_text('n = 2\n[notebooks.02_two]\nn = 5\n')
    shared, own = report.load_params(toml)
    result = report.run(out=tmp_path / "r", sources=[_write(sources, "01_one", GOOD), _write(sources, "02_two", GOOD)],
                        params=shared, notebook_params=own, progress=False)
    assert result.summary["results"]["01_one"]["n"] == 2
    assert result.summary["results"]["02_two"]["n"] == 5


def test_parse_param_reads_toml_values():
    assert report.parse_param("n=5") == ("n", 5)
    assert report.parse_param("quick=true") == ("quick", True)
    assert report.parse_param('name="x"') == ("name", "x")
    assert report.parse_param("path=some/file.gguf") == ("path", "some/file.gguf")


def test_compare_flags_regressions_in_both_directions():
    prev = [{"suite": "demo", "strategy": "policy", "recall": 0.90, "mean_offer": 3.0}]
    rows = [{"suite": "demo", "strategy": "policy", "recall": 0.85, "mean_offer": 2.0},
            {"suite": "demo", "strategy": "dense", "recall": 0.5}]
    out = report.compare(rows, prev)
    assert out[0]["regressions"] == ["recall"] and out[0]["delta_mean_offer"] == -1.0
    assert out[1]["previous"] is False and out[1]["regressions"] == []


def test_record_without_report_dir_writes_nothing(tmp_path):
    assert report.record("", "x", {"a": (1, 2)}) == {"a": [1, 2]}
    assert report.record(str(tmp_path), "x", {"a": 1}) == {"a": 1}
    assert report.record(str(tmp_path), "x", {"b": 2}) == {"a": 1, "b": 2}
    assert report.recorded(tmp_path) == {"x": {"a": 1, "b": 2}}


def test_ensure_kernel_runs_this_interpreter():
    import sys

    from jupyter_client.kernelspec import KernelSpecManager

    name = report.ensure_kernel()
    spec = KernelSpecManager().get_kernel_spec(name)
    assert spec.argv[0] == sys.executable or name == "python3"
    if name == report.KERNEL_NAME:
        assert spec.env["TQDM_DISABLE"] == "1" and spec.env["HF_HUB_OFFLINE"] == "1"
