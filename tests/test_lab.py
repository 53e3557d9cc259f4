"""``eris_lab.lab`` without a browser: parameter injection, one-line errors, the kernel, clean stops.

The browser tests (``test_lab_browser.py``) drive the same servers in Chromium; these checks
need only the packages (the server test is skipped without jupyterlab).
"""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
import time
import urllib.request

import pytest
from conftest import ROOT

jupytext = pytest.importorskip("jupytext")
pytest.importorskip("papermill")
psutil = pytest.importorskip("psutil")

from eris_lab import lab  # noqa: E402


def test_prepare_injects_parameters_after_the_parameters_cell(tmp_path):
    path = lab.prepare(lab.TUNING_NOTEBOOK, {**lab.TUNE_PARAMS, "quick": True}, out_dir=tmp_path)
    assert path == tmp_path / "02_threshold_tuning.ipynb"
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] in ("eris-lab", "python3")
    tags = [c["metadata"].get("tags", []) for c in nb["cells"]]
    i = next(i for i, t in enumerate(tags) if "parameters" in t)
    assert "injected-parameters" in tags[i + 1]
    injected = "".join(nb["cells"][i + 1]["source"])
    assert "tune = False" in injected and "interactive = True" in injected and "quick = True" in injected


def test_prepare_writes_a_percent_script_jupyterlab_opens_as_a_notebook(tmp_path):
    path = lab.prepare(lab.TUNING_NOTEBOOK, {"quick": True}, out_dir=tmp_path, fmt="py")
    nb = jupytext.read(str(path))
    assert any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells)
    assert nb.metadata["kernelspec"]["language"] == "python"


def test_prepare_rejects_an_unknown_parameter(tmp_path):
    with pytest.raises(lab.LabError, match="declares no parameter 'nope'"):
        lab.prepare(lab.TUNING_NOTEBOOK, {"nope": 1}, out_dir=tmp_path)


def test_tune_with_an_unknown_parameter_is_one_line_and_exit_2(capsys):
    assert lab.main(["tune", "-p", "nope=1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope" in err


def test_a_port_in_use_is_one_line_and_exit_2(capsys):
    with socket.socket() as busy:
        busy.bind((lab.HOST, 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert lab.main(["lab", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"port {port} is in use" in err


def test_missing_jupyterlab_is_one_line_and_exit_2(capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "jupyterlab" else real(name, *a))
    assert lab.main(["lab"]) == 2
    assert capsys.readouterr().err == "eris-lab lab: jupyterlab: jupyterlab is not installed: run make install (the [lab] extra)\n"


def test_makefile_serves_through_this_module():
    makefile = (ROOT / "Makefile").read_text()
    assert "-m eris_lab.lab lab" in makefile and "-m eris_lab.lab tune" in makefile


@pytest.mark.skipif(importlib.util.find_spec("jupyterlab") is None, reason="jupyterlab is not installed")
def test_lab_kernel_is_this_interpreter_and_a_failed_step_leaves_no_process(tmp_path):
    """A kernel started through JupyterLab runs this very python (the .venv's); an exception inside
    ``serve`` still stops the server and the kernel."""
    with pytest.raises(RuntimeError, match="a step failed"):
        with lab.serve("lab", tmp_path, state_dir=tmp_path / "state", isolated=True) as server:
            request = urllib.request.Request(server.url("api/kernels"), data=b"{}", method="POST",
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=60) as response:
                assert json.loads(response.read())["name"] == "eris-lab"
            deadline = time.monotonic() + 60
            kernels = []
            while not kernels and time.monotonic() < deadline:
                kernels = [p for p in server.processes() if "ipykernel_launcher" in " ".join(p.cmdline())]
                time.sleep(0.2)
            assert kernels and kernels[0].cmdline()[0] == sys.executable
            raise RuntimeError("a step failed")
    alive = [pid for pid in server.pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert len(server.pids) >= 2 and alive == []
