"""``eris_lab.lab.server`` without a browser: parameter injection, one-line errors, the kernel, clean stops.

The browser tests (``test_lab_server_browser.py``) drive the same servers in Chromium; these checks
need only the packages (the server test is skipped without jupyterlab).
"""

from __future__ import annotations

import importlib.util
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT

jupytext = pytest.importorskip("jupytext")
pytest.importorskip("papermill")
psutil = pytest.importorskip("psutil")

from eris_lab import cli  # noqa: E402
from eris_lab.errors import LabError  # noqa: E402
from eris_lab.lab import server as lab  # noqa: E402


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
    with pytest.raises(LabError, match="declares no parameter 'nope'"):
        lab.prepare(lab.TUNING_NOTEBOOK, {"nope": 1}, out_dir=tmp_path)


def test_tune_with_an_unknown_parameter_is_one_line_and_exit_2(capsys):
    assert cli.main(["tune-app", "-p", "nope=1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("eris-lab: error: ") and "nope" in err


def test_prepare_rejects_a_value_of_the_wrong_type(tmp_path):
    with pytest.raises(LabError, match=r"threshold: expected float \(default 0\.50\), got a string 'abc'"):
        lab.prepare(lab.TUNING_NOTEBOOK, {"threshold": "abc"}, out_dir=tmp_path)
    with pytest.raises(LabError, match=r"tune: expected bool"):
        lab.prepare(lab.TUNING_NOTEBOOK, {"tune": 1}, out_dir=tmp_path)
    with pytest.raises(LabError, match=r"queries: expected str"):
        lab.prepare(lab.TUNING_NOTEBOOK, {"queries": 3}, out_dir=tmp_path)
    assert not list(tmp_path.iterdir())  # checked before anything is written
    lab.prepare(lab.TUNING_NOTEBOOK, {"threshold": 1, "margin": 0.1, "queries": "nosuchsuite"}, out_dir=tmp_path)


@pytest.mark.parametrize("param", ["threshold=abc", "interactive=yes", "queries=7"])
def test_tune_with_a_value_of_the_wrong_type_is_one_line_and_exit_2(capsys, param):
    before = set(lab.LAB_DIR.glob("tune-*")) if lab.LAB_DIR.is_dir() else set()
    assert cli.main(["tune-app", "-p", param]) == 2
    err = capsys.readouterr().err
    name = param.partition("=")[0]
    assert err.count("\n") == 1 and err.startswith("eris-lab: error: ") and f"parameter {name}: expected " in err
    assert (set(lab.LAB_DIR.glob("tune-*")) if lab.LAB_DIR.is_dir() else set()) == before  # no folder left


def test_two_servers_prepare_into_folders_of_their_own(tmp_path):
    """Concurrent ``make tune`` runs: each port's notebook keeps its own parameters."""
    paths = {}
    for port, threshold in ((40001, 0.42), (40002, 0.61)):
        paths[port] = lab.prepare(lab.TUNING_NOTEBOOK, {**lab.TUNE_PARAMS, "threshold": threshold},
                                  out_dir=tmp_path / f"tune-{port}")
    assert paths[40001] != paths[40002] and all(p.is_file() for p in paths.values())
    for port, threshold in ((40001, 0.42), (40002, 0.61)):
        nb = json.loads(paths[port].read_text())
        injected = next("".join(c["source"]) for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", []))
        assert f"threshold = {threshold}" in injected


def test_tune_prepares_into_a_folder_named_after_its_port_and_removes_it(monkeypatch, capsys):
    seen = {}

    def fake_start(kind, target, *, port=None, **_kw):
        seen.update(kind=kind, target=Path(target), port=port, existed=Path(target).is_file())
        raise LabError("stopped here", where="test")

    monkeypatch.setattr(lab, "start", fake_start)
    with socket.socket() as probe:
        probe.bind((lab.HOST, 0))
        port = probe.getsockname()[1]
    assert cli.main(["tune-app", "--port", str(port), "-p", "threshold=0.4"]) == 2
    assert seen["kind"] == "voila" and seen["port"] == port and seen["existed"]
    assert seen["target"] == lab.LAB_DIR / f"tune-{port}" / "02_threshold_tuning.ipynb"
    assert not seen["target"].parent.exists()  # removed when the server (here: its start) ends
    assert "stopped here" in capsys.readouterr().err


def test_tune_makes_file_parameters_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.jsonl").write_text("")
    params = lab._tune_params(["queries=mine.jsonl", "knobs_out=out/k.toml"])
    assert params["queries"] == str(tmp_path / "mine.jsonl") and params["knobs_out"] == str(tmp_path / "out" / "k.toml")
    assert lab._tune_params(["queries=demo"])["queries"] == "demo"
    assert lab._tune_params([])["knobs_out"] == str(lab.LAB_DIR / "knobs.toml")
    assert lab._tune_params(["knobs_out=1"])["knobs_out"] == 1  # the wrong type is prepare's to reject


@pytest.mark.parametrize("port", ["70000", "0", "-1", "65536", "http"])
@pytest.mark.parametrize("which", ["lab", "tune-app"])
def test_a_port_out_of_range_is_one_line_and_exit_2(capsys, which, port):
    assert cli.main([which, "--port", port]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1  # one line, no usage block (issue 13, bad_inputs.md row 40)
    assert err[-1].startswith("eris-lab: error: argument --port: expected a port number from 1 to 65535")
    assert "Traceback" not in "\n".join(err)


def test_start_rejects_a_port_out_of_range_before_starting_anything():
    with pytest.raises(LabError, match="port 0 is out of range"):
        lab._check_port(0)
    with pytest.raises(LabError, match="port 70000 is out of range"):
        lab._check_port(70000)


def test_main_puts_its_signal_handlers_back(capsys):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    assert cli.main(["tune-app", "-p", "nope=1"]) == 2
    assert {s: signal.getsignal(s) for s in before} == before


def test_sigint_stops_a_server_started_in_the_background(tmp_path):
    """``make lab &`` from a script: SIGINT arrives ignored (SIG_IGN), yet ``kill -INT`` stops it."""
    code = ("import signal, sys\n"
            "from eris_lab.lab import server as lab\n"
            "class P:\n"
            "    pid = 0\n"
            "    returncode = None\n"
            "    def poll(self): return None\n"
            "def fake_start(kind, target, **kw):\n"
            "    return lab.Server(kind=kind, port=1, token='t', process=P(), log=lab.LAB_DIR / 'x.log')\n"
            "lab.start = fake_start\n"
            "lab.stop = lambda server, *a, **k: print('stopped', flush=True)\n"
            "sys.exit(lab.main(['lab']))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=str(ROOT), stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        line = "-"
        while line and "stops the server" not in line:  # the banner's last line: the handlers are set
            line = proc.stdout.readline()
        assert line, "no banner"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "stopped" in out


def test_a_port_in_use_is_one_line_and_exit_2(capsys):
    with socket.socket() as busy:
        busy.bind((lab.HOST, 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert cli.main(["lab", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"port {port} is in use" in err


def test_missing_jupyterlab_is_one_line_and_exit_2(capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "jupyterlab" else real(name, *a))
    assert cli.main(["lab"]) == 2
    assert capsys.readouterr().err == ("eris-lab: error: jupyterlab: jupyterlab is not installed: run make install "
                                       "(the [lab] extra)\n")


def test_makefile_serves_through_the_command_line():
    makefile = (ROOT / "Makefile").read_text()
    assert "eris-lab lab" in makefile and "eris-lab tune-app" in makefile
    assert "eris-lab bench route" in makefile


def test_python_dash_m_lab_is_the_command_line():
    """``python -m eris_lab.lab lab|tune`` (older scripts) runs ``eris-lab lab|tune-app``: one error format."""
    proc = subprocess.run([sys.executable, "-m", "eris_lab.lab", "tune", "-p", "nope=1"], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.startswith("eris-lab: error: ") and "nope" in proc.stderr


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
