"""JupyterLab and Voila for the notebooks: ``make lab``, ``make tune`` and the browser tests' servers.

Interactive threshold tuning is what this lab is used for first, so the notebooks must work where a
person uses them: in a real JupyterLab, with the project's own interpreter as the kernel. This module
starts and stops those servers; the Makefile and the browser tests (``tests/test_lab_server_browser.py``)
both go through it, so what is tested is what ``make lab`` runs.

``python -m eris_lab.lab lab``
    JupyterLab on ``127.0.0.1`` rooted at ``notebooks/``. The jupytext server extension (shipped
    with ``jupytext``) opens the ``NN_topic.py`` percent scripts as notebooks; a settings override
    (``.cache/lab/config/labconfig``, put on ``JUPYTER_CONFIG_PATH`` for this server only) makes that
    the default viewer for ``.py`` files, so a double click opens a notebook, not a text editor.
    The kernel is :data:`eris_lab.lab.report.KERNEL_NAME`, a kernelspec that runs this very
    interpreter (the ``.venv`` python) with the report's offline environment.
``python -m eris_lab.lab tune``
    Voila serving notebook 02 as an app: sliders, tables and the curve, no code. Voila runs an
    ``.ipynb``, so the percent script is converted into a folder of this server's own,
    ``.cache/lab/tune-<port>/`` (git-ignored; removed when the server stops, so concurrent servers
    never read each other's parameters), with a papermill-style ``injected-parameters`` cell
    (``tune=False``: the tuner grid takes minutes and the app has a button for it;
    ``interactive=True``). ``-p NAME=VALUE`` sets more parameters; each value's type is checked
    against the parameters cell's default before the server starts (whether a suite name exists is
    left to the notebook). The app's button saves ``.cache/lab/knobs.toml`` unless
    ``-p knobs_out=FILE`` says otherwise; relative paths in ``knobs_out``, ``catalog`` and
    ``queries`` are taken from the current folder.

Both print one URL with its token and serve until Ctrl-C, SIGINT or SIGTERM (also when started in
the background, where the shell makes SIGINT ignored). A port is taken from ``--port`` (1 to
65535; the Makefile passes ``LAB_PORT`` / ``TUNE_PORT``), else a free one is picked. Errors (a
bad or busy port, a missing package, an unknown parameter or a value of the wrong type) are one
line on stderr and exit status 2; each server logs to ``.cache/lab/<kind>-<port>.log``.

Servers run in their own process group; :func:`stop` ends the group and every process it started
(kernels run in sessions of their own), so a test that fails half-way leaves nothing behind.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal, Mapping, Sequence

from .._files import repo_root
from ..errors import LabError, ReportError

__all__ = ["Server", "serve", "start", "stop", "prepare", "free_port", "lab_command", "voila_command",
           "LAB_DIR", "TUNING_NOTEBOOK", "TUNE_PARAMS", "LAB_SETTINGS", "main"]

LAB_DIR = repo_root() / ".cache" / "lab"  # generated notebooks, logs and the settings override (git-ignored)
TUNING_NOTEBOOK = repo_root() / "notebooks" / "02_threshold_tuning.py"
#: Parameters of the Voila app: live widgets, and no tuner grid on load (minutes; the app's button runs
#: it), nor the calibration views (about a minute of BFCL routing; ``-p calibration_views=True``).
TUNE_PARAMS: dict[str, Any] = {"interactive": True, "tune": False, "calibration_views": False}
#: JupyterLab settings for these servers: ``.py`` files open as notebooks (jupytext), and no
#: news or update checks (the lab runs offline).
LAB_SETTINGS: dict[str, Any] = {
    "@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"python": "Jupytext Notebook"}},
    "@jupyterlab/apputils-extension:notification": {"checkForUpdates": False, "fetchNews": "false"},
}
HOST = "127.0.0.1"
READY_TIMEOUT_S = 120.0  # server start on a busy 2-core machine takes 5 to 20 s


@dataclass
class Server:
    """A running JupyterLab or Voila server (see :func:`start`).

    Attributes
    ----------
    kind : "lab" or "voila"
    port : int
        The loopback port it listens on.
    token : str
        Its access token (every URL below carries it).
    process : subprocess.Popen
        The server process; it leads its own process group.
    log : Path
        Its stdout and stderr.
    pids : set of int
        The server and every process seen under it (kernels), collected by :meth:`processes`
        and :func:`stop`; what "left behind" is checked against.
    """

    kind: Literal["lab", "voila"]
    port: int
    token: str
    process: subprocess.Popen
    log: Path
    pids: set[int] = field(default_factory=set)

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>/``"""
        return f"http://{HOST}:{self.port}/"

    def url(self, path: str = "") -> str:
        """The URL of ``path`` (relative to the server root) with the token as query parameter."""
        sep = "&" if "?" in path else "?"
        return f"{self.base}{path.lstrip('/')}{sep}token={self.token}"

    def processes(self) -> list[Any]:
        """The server and its live descendants as ``psutil.Process`` (empty once it has exited); records their pids."""
        import psutil

        try:
            root = psutil.Process(self.process.pid)
            found = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []
        self.pids |= {p.pid for p in found}
        return [p for p in found if _running(p)]


def _running(process: Any) -> bool:
    """Whether a ``psutil.Process`` still runs (an exited child its parent has not reaped yet is a
    zombie: it has no command line to read and nothing left to stop)."""
    import psutil

    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def free_port(host: str = HOST) -> int:
    """A TCP port nobody listens on right now (the kernel picks it; it could be taken before use)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _check_port(port: int, host: str = HOST) -> None:
    """Raise :class:`LabError` unless ``port`` is 1 to 65535 and free on ``host``."""
    if not 1 <= port <= 65535:
        raise LabError(f"port {port} is out of range; expected 1 to 65535 (--port, LAB_PORT=, TUNE_PORT=)",
                       where=f"{host}:{port}")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            raise LabError(f"port {port} is in use; pick another (--port, LAB_PORT=, TUNE_PORT=)",
                           where=f"{host}:{port}") from None


def _port_arg(text: str) -> int:
    """argparse type of ``--port``: an integer from 1 to 65535 (else argparse's one-line error, exit 2)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number from 1 to 65535, got {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 1 to 65535, got {port} "
                                         "(LAB_PORT= / TUNE_PORT= set it for make)")
    return port


def _require(module: str, package: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise LabError(f"{package} is not installed: run make install (the [lab] extra)", where=package)


def prepare(source: str | os.PathLike[str], params: Mapping[str, Any] | None = None, *,
            out_dir: str | os.PathLike[str] = LAB_DIR, fmt: Literal["ipynb", "py"] = "ipynb") -> Path:
    """Write a copy of a notebook source with its parameters set; return its path.

    The ``parameters`` cell stays as written; an ``injected-parameters`` cell after it sets
    ``params`` (papermill's own injection, so the notebook reads exactly as under the report).

    Parameters
    ----------
    source : path
        A jupytext percent script (``notebooks/NN_topic.py``) or an ``.ipynb``.
    params : mapping, optional
        Parameter values; every name must be declared in the ``parameters`` cell, and every value
        must fit the type of its default there (:func:`eris_lab.lab.report.check_param`).
    out_dir : path
        Where the copy goes (default :data:`LAB_DIR`, git-ignored); created if missing.
    fmt : "ipynb" or "py"
        ``ipynb`` for Voila (kernelspec set to the project's kernel); ``py`` (a percent script) for
        JupyterLab, which opens it as a notebook through jupytext.

    Raises
    ------
    LabError
        A parameter the notebook does not declare, or a value of the wrong type (``threshold="abc"``).
    """
    import jupytext
    from papermill.parameterize import parameterize_notebook

    from . import report

    source = Path(source)
    nb = jupytext.read(str(source))
    nb.metadata.pop("jupytext", None)
    kernel = report.ensure_kernel()
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": "Python (eris_lab)", "language": "python"}
    nb.metadata.setdefault("language_info", {"name": "python"})
    for cell in nb.cells:
        cell.metadata.setdefault("tags", [])
    params = dict(params or {})
    if params:
        declared = report.declared_parameters(nb)
        unknown = sorted(set(params) - set(declared))
        if unknown:
            raise LabError(f"{source.stem} declares no parameter {unknown[0]!r}; expected one of {', '.join(declared)}",
                           where="parameters")
        for name, value in params.items():
            try:
                report.check_param(name, value, declared[name])
            except ReportError as exc:
                raise LabError(exc.message, where=f"{source.stem} parameter {name}") from None
        nb.metadata["papermill"] = {}  # papermill's execute_notebook sets this up before injecting
        nb = parameterize_notebook(nb, params, kernel_name=kernel, language="python")
        for cell in nb.cells:  # papermill adds ids and a papermill metadata block; keep the copy plain
            cell.metadata.pop("papermill", None)
        nb.metadata.pop("papermill", None)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{source.stem}.{fmt}"
    if fmt == "ipynb":
        jupytext.write(nb, str(target), fmt="ipynb")
    else:
        jupytext.write(nb, str(target), fmt="py:percent")
    return target


def _config_dir(state_dir: Path) -> Path:
    """A Jupyter config folder holding :data:`LAB_SETTINGS` as ``labconfig/default_setting_overrides.json``."""
    folder = state_dir / "config"
    target = folder / "labconfig" / "default_setting_overrides.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(LAB_SETTINGS, indent=1) + "\n")
    return folder


def lab_command(root_dir: str | os.PathLike[str], port: int, token: str, *, state_dir: Path | None = None) -> list[str]:
    """The ``jupyter lab`` command line: loopback only, this token, the project's kernel, no browser.

    ``state_dir`` (optional) holds JupyterLab's user settings and workspaces, so a run starts from
    a clean layout (the tests); by default the user's own are kept.
    """
    from . import report

    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--ServerApp.ip={HOST}", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={Path(root_dir).resolve()}",
           f"--MappingKernelManager.default_kernel_name={report.ensure_kernel()}", "--LabApp.news_url=",
           "--ServerApp.open_browser=False"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers and CI run as root; JupyterLab refuses without this
        cmd.append("--allow-root")
    if state_dir is not None:
        cmd += [f"--LabApp.user_settings_dir={state_dir / 'settings'}", f"--LabApp.workspaces_dir={state_dir / 'workspaces'}"]
    return cmd


def voila_command(notebook: str | os.PathLike[str], port: int, token: str) -> list[str]:
    """The ``voila`` command line for one notebook: loopback only, this token, sources stripped, no browser."""
    return [sys.executable, "-m", "voila", str(Path(notebook).resolve()), "--no-browser", f"--Voila.ip={HOST}",
            f"--port={port}", "--Voila.port_retries=0", f"--token={token}", "--strip_sources=True",
            "--show_tracebacks=True", "--theme=light"]


_NO_KERNEL = "api/kernels/00000000-0000-0000-0000-000000000000"  # Voila: 404 with a good token, 403 without


def _ready(server: Server) -> bool:
    """True once the server answers with the token accepted: JupyterLab's status API (200), or
    for Voila, which serves only its notebook (a probe must not run it), an unknown kernel (404)."""
    path = "api/status" if server.kind == "lab" else _NO_KERNEL
    try:
        with urllib.request.urlopen(server.url(path), timeout=3) as response:
            return response.status == 200
    except urllib.error.HTTPError as exc:
        return server.kind == "voila" and exc.code == 404
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def start(kind: Literal["lab", "voila"], target: str | os.PathLike[str], *, port: int | None = None,
          token: str | None = None, state_dir: str | os.PathLike[str] | None = None, isolated: bool = False,
          env: Mapping[str, str] | None = None, ready_timeout_s: float = READY_TIMEOUT_S) -> Server:
    """Start a server and wait until it answers; prefer :func:`serve`, which always stops it.

    Parameters
    ----------
    kind : "lab" or "voila"
    target : path
        ``lab``: the root folder; ``voila``: the ``.ipynb`` to serve.
    port : int, optional
        Loopback port (default: a free one).
    token : str, optional
        Access token (default: 48 random hex digits).
    state_dir : path, optional
        Settings override, log file and (with ``isolated``) JupyterLab's user settings and
        workspaces; default :data:`LAB_DIR`.
    isolated : bool
        Keep JupyterLab's user settings and workspaces in ``state_dir`` (a clean layout).
    env : mapping, optional
        Extra environment variables for the server and its kernels.
    ready_timeout_s : float
        Seconds to wait for the first HTTP answer.

    Raises
    ------
    LabError
        jupyterlab / voila / jupytext missing, the port out of range or in use, or the server exited
        or did not answer within ``ready_timeout_s`` (its log's last line is quoted; the server is
        stopped, as it is when an interrupt arrives while waiting).
    """
    _require("jupytext", "jupytext")
    _require("jupyterlab" if kind == "lab" else "voila", "jupyterlab" if kind == "lab" else "voila")
    if port is None:
        port = free_port()
    else:
        _check_port(port)
    token = token or secrets.token_hex(24)
    state = Path(state_dir) if state_dir is not None else LAB_DIR
    state.mkdir(parents=True, exist_ok=True)
    run_env = dict(os.environ)
    run_env.update({"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1"})
    # kernels start in the notebook's folder: they import this checkout's eris_lab even when it is not installed
    run_env["PYTHONPATH"] = os.pathsep.join(p for p in (str(repo_root()), run_env.get("PYTHONPATH", "")) if p)
    config = str(_config_dir(state))
    run_env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(p for p in (config, run_env.get("JUPYTER_CONFIG_PATH", "")) if p)
    run_env.update(env or {})
    if kind == "lab":
        cmd = lab_command(target, port, token, state_dir=state if isolated else None)
    elif kind == "voila":
        cmd = voila_command(target, port, token)
    else:
        raise LabError(f"unknown server kind {kind!r}; expected lab or voila", where="kind")
    log = state / f"{kind}-{port}.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   cwd=str(repo_root()), env=run_env, start_new_session=True)
    server = Server(kind=kind, port=port, token=token, process=process, log=log)
    deadline = time.monotonic() + ready_timeout_s
    try:
        while not _ready(server):
            if process.poll() is not None or time.monotonic() > deadline:
                why = f"exited with status {process.returncode}" if process.poll() is not None else \
                    f"did not answer within {ready_timeout_s:.0f} s"
                stop(server)
                last = next((line for line in reversed(log.read_text(errors="replace").splitlines()) if line.strip()), "")
                raise LabError(f"{kind} server {why}; log {log}: {last[:200]}", where=f"{HOST}:{port}")
            time.sleep(0.25)
    except (KeyboardInterrupt, SystemExit):  # Ctrl-C / SIGTERM while waiting: no server left behind
        stop(server)
        raise
    server.processes()
    return server


def stop(server: Server, timeout_s: float = 10.0) -> None:
    """Stop a server and everything it started; never raises.

    SIGTERM to the server's process group (JupyterLab and Voila then shut their kernels down);
    after ``timeout_s`` seconds, SIGKILL to whatever is left of the group and of every descendant
    seen (kernels run in sessions of their own, so the group alone would miss them).
    """
    import psutil

    seen = server.processes()  # the server and its kernels, listed while the server still has them
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(server.process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        server.process.wait(timeout=timeout_s)
    _gone, alive = psutil.wait_procs(seen, timeout=2)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(server.process.pid, signal.SIGKILL)  # anything else still in the server's group
    with contextlib.suppress(subprocess.TimeoutExpired):
        server.process.wait(timeout=timeout_s)
    psutil.wait_procs(alive, timeout=timeout_s)


@contextlib.contextmanager
def serve(kind: Literal["lab", "voila"], target: str | os.PathLike[str], **kwargs: Any) -> Iterator[Server]:
    """``with serve("lab", folder) as server:`` a started server (:func:`start`), stopped on exit whatever happens."""
    server = start(kind, target, **kwargs)
    try:
        yield server
    finally:
        stop(server)


def _banner(server: Server, what: str, path: str = "") -> str:
    return (f"{what}\n\n    {server.url(path)}\n\n"
            f"Open the URL above in a browser (it carries the token). Log: {server.log}. "
            f"Ctrl-C (or SIGINT / SIGTERM to pid {os.getpid()}) stops the server.")


def _tune_params(given: Sequence[str]) -> dict[str, Any]:
    """:data:`TUNE_PARAMS` updated by ``-p NAME=VALUE`` texts, with file parameters made absolute.

    The Voila kernel runs in the prepared notebook's folder, which goes when the server stops: a
    relative ``knobs_out`` (default ``.cache/lab/knobs.toml``), or a ``catalog`` / ``queries`` that
    names an existing path, is resolved against the current folder instead. Values of another type
    are left for :func:`prepare` to reject.
    """
    from . import report

    params = dict(TUNE_PARAMS)
    params.update(dict(report.parse_param(p) for p in given))
    knobs = params.get("knobs_out") or str(LAB_DIR / "knobs.toml")
    if isinstance(knobs, str):
        params["knobs_out"] = str(Path(knobs).resolve())
    for name in ("catalog", "queries"):
        value = params.get(name)
        if isinstance(value, str) and value and Path(value).exists():
            params[name] = str(Path(value).resolve())
    return params


def main(argv: Sequence[str]) -> int:
    """Serve ``lab`` or ``tune`` until Ctrl-C, SIGINT, SIGTERM or SIGHUP (``eris-lab lab`` / ``eris-lab tune-app``).

    ``tune`` picks its port first and prepares notebook 02 into ``.cache/lab/tune-<port>/``, a
    folder of this server's own, removed again when the server stops.

    Returns
    -------
    int
        0 after Ctrl-C or SIGINT, 1 when the server exited by itself.

    Raises
    ------
    LabError
        The server cannot start (a busy port, a missing package, a bad parameter); ``cli.main``
        prints it as one line and exits 2, as for every other command.
    SystemExit
        A usage error, printed by ``cli.Parser`` (exit status 2).
    """
    from ..cli import Parser

    parser = Parser(prog="eris-lab", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="which", required=True, parser_class=Parser)
    p_lab = sub.add_parser("lab", prog="eris-lab lab",
                           help="JupyterLab on the notebooks (jupytext sources), the .venv kernel")
    p_lab.add_argument("--port", type=_port_arg, help="loopback port, 1 to 65535 (default: a free one)")
    p_lab.add_argument("--root", default=str(repo_root() / "notebooks"), help="folder served (default notebooks/)")
    p_tune = sub.add_parser("tune", prog="eris-lab tune-app", help="Voila app of notebook 02 (sliders and plots, no code)")
    p_tune.add_argument("--port", type=_port_arg, help="loopback port, 1 to 65535 (default: a free one)")
    p_tune.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                        help="notebook 02 parameter (TOML value), e.g. -p queries=bfcl-pooled -p tune=true")
    args = parser.parse_args(argv)

    def _exit(signum, _frame):  # kill / a closed terminal: leave through ``finally`` so the server stops too
        raise SystemExit(128 + signum)

    # SIGINT raises KeyboardInterrupt (exit 0) even where it came in ignored: a job started with
    # ``&`` from a script inherits SIG_IGN, and ``kill -INT`` would otherwise do nothing. The
    # handlers are set before the server starts (no window where a signal is lost) and put back
    # on return (main also runs inside the tests).
    wanted = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: _exit}
    if hasattr(signal, "SIGHUP"):
        wanted[signal.SIGHUP] = _exit
    previous = {signum: signal.signal(signum, handler) for signum, handler in wanted.items()}
    server: Server | None = None
    prepared: Path | None = None  # tune: this server's own folder, removed when it stops
    try:
        if args.which == "lab":
            server = start("lab", args.root, port=args.port)
            print(_banner(server, f"JupyterLab on {args.root} (kernel: {sys.executable}).", "lab"), flush=True)
        else:
            params = _tune_params(args.param)
            port = args.port if args.port is not None else free_port()
            _check_port(port)  # before the folder is named after it
            prepared = LAB_DIR / f"tune-{port}"
            notebook = prepare(TUNING_NOTEBOOK, params, out_dir=prepared)
            server = start("voila", notebook, port=port)
            print(_banner(server, f"Voila app of {TUNING_NOTEBOOK.name} ({notebook}); the first page load runs it."),
                  flush=True)
        while server.process.poll() is None:
            time.sleep(0.5)
        print(f"the server exited (status {server.process.returncode}); log {server.log}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        if server is not None:
            stop(server)
        if prepared is not None:
            shutil.rmtree(prepared, ignore_errors=True)
        for signum, handler in previous.items():
            if handler is not None:  # None: a handler not set from Python, which cannot be put back
                signal.signal(signum, handler)


