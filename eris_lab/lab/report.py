"""The nightly report: every notebook run with papermill into one dated folder.

``run()`` turns each ``notebooks/NN_topic.py`` (jupytext percent script, the reviewed source)
into a notebook, executes it with papermill in ``report_mode`` (inputs hidden), exports a
standalone HTML page (plotly.js inlined once, so figures work offline), merges what each
notebook recorded (:func:`record`) into ``summary.json`` and writes an ``index.html``.

Folder layout (``reports/`` by default, git-ignored)::

    reports/<UTC stamp>/NN_topic.ipynb   executed notebook (a failed one keeps papermill's banner)
                        NN_topic.html    standalone page
                        parts/NN_topic.json   what the notebook recorded
                        summary.json  index.html
    reports/latest -> <UTC stamp>        moved (atomic symlink swap) only when every notebook passed

A failed notebook does not stop the run (papermill still writes it, as STYLE.md section 5 says);
``run`` returns a :class:`RunResult` whose ``failures`` name the notebook and the cell, and the
command exits 1. ``latest`` is then left where it was.

Parameters (``--params FILE.toml`` and ``-p NAME=VALUE``) go to every notebook that declares them
in its ``parameters`` cell; a ``[notebooks.NN_topic]`` table goes to that notebook only. A
parameter no notebook declares is an error (a typo must not be ignored). ``quick``,
``report_dir``, ``previous_summary`` and ``interactive`` are set by the run itself.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .._files import load_toml_file, read_user_text, repo_root, write_atomic
from ..errors import ReportError
from ..eval.metrics import METRICS

__all__ = [
    "run", "record", "recorded", "RunResult", "Failure", "NotebookRun", "notebooks", "load_params",
    "parse_param", "check_param", "ensure_kernel", "export_html", "compare", "previous_summary", "previous_results", "NOTEBOOK_DIR",
    "KERNEL_NAME", "REGRESSION_TOLERANCE",
]

NOTEBOOK_DIR = repo_root() / "notebooks"
KERNEL_NAME = "eris-lab"  # a kernelspec written into this interpreter's prefix (ensure_kernel)
#: The kernel's environment: offline models, quiet tokenizers, and no tqdm bars (inside a kernel
#: tqdm.auto draws ipywidgets, which a static report page cannot show).
KERNEL_ENV = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "TQDM_DISABLE": "1",
              "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
#: Metrics where higher is better / lower is better, for the nightly deltas (:func:`compare`):
#: the directions of ``eval.metrics.METRICS``.
HIGHER_IS_BETTER = tuple(m.name for m in METRICS if m.better == "higher")
LOWER_IS_BETTER = tuple(m.name for m in METRICS if m.better == "lower")
REGRESSION_TOLERANCE = 0.005  # a change smaller than this (absolute) is noise, not a regression
_RUN_SET = ("quick", "report_dir", "previous_summary", "interactive")


@dataclass(frozen=True, kw_only=True, slots=True)
class Failure:
    """Where a notebook failed: ``cell`` is the 0-based index in the executed notebook."""

    notebook: str
    cell: int
    exec_count: int | None
    ename: str
    evalue: str
    source_line: str

    def __str__(self) -> str:
        count = f" (In [{self.exec_count}])" if self.exec_count is not None else ""
        return (f"{self.notebook}: cell {self.cell}{count} `{self.source_line}` raised "
                f"{self.ename}: {self.evalue}")


@dataclass(frozen=True, kw_only=True, slots=True)
class NotebookRun:
    """One executed notebook: name, status (``ok``/``failed``), seconds, output files (relative)."""

    name: str
    status: str
    seconds: float
    ipynb: str
    html: str
    error: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class RunResult:
    """A whole report run."""

    folder: Path
    notebooks: tuple[NotebookRun, ...]
    failures: tuple[Failure, ...]
    seconds: float
    latest_moved: bool
    summary: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures


# ---------------------------------------------------------------------------------------------
# parameters
# ---------------------------------------------------------------------------------------------


def parse_param(text: str) -> tuple[str, Any]:
    """``"n=5"`` -> ``("n", 5)``: the value is read as a TOML value, else kept as a string."""
    key, eq, raw = text.partition("=")
    if not eq or not key.strip():
        raise ReportError(f"expected NAME=VALUE, got {text!r}", where="-p")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    except RecursionError:
        raise ReportError("value nested too deeply", where=f"-p {key.strip()}") from None
    return key.strip(), value


def load_params(path: str | os.PathLike[str] | None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Read a parameters TOML file: ``(shared, {notebook: own})``; ``({}, {})`` for None."""
    if path is None:
        return {}, {}
    p = Path(path)
    data = load_toml_file(p, error=ReportError, where=f"--params {p}")  # folder, bad UTF-8, too big: one line
    own = data.pop("notebooks", {})
    if not isinstance(own, dict) or not all(isinstance(v, dict) for v in own.values()):
        raise ReportError("expected [notebooks.NAME] tables", where=f"{p}: notebooks")
    return data, own


def notebooks(folder: str | os.PathLike[str] | None = None) -> list[Path]:
    """The notebook sources of a run: ``NN_*.py`` (jupytext percent) in ``folder``, sorted."""
    folder = Path(folder) if folder is not None else NOTEBOOK_DIR
    found = sorted(p for p in folder.glob("[0-9][0-9]_*.py"))
    if not found:
        raise ReportError("no notebooks (NN_topic.py) found", where=str(folder))
    return found


def read_source(path: str | os.PathLike[str]):
    """A notebook source as an ``nbformat`` notebook: a ``.py`` percent script or an ``.ipynb``.

    Raises
    ------
    ReportError
        Another suffix, a missing file, a folder, not UTF-8 (``_files.read_user_text``), or text
        that jupytext / nbformat cannot read as a notebook; ``where`` is ``--notebook PATH``.
    """
    import jupytext
    import nbformat

    path = Path(path)
    where = f"--notebook {path}"
    if path.suffix not in (".py", ".ipynb"):
        raise ReportError(f"expected a .py percent script or an .ipynb notebook, got suffix {path.suffix!r}",
                          where=where)
    text = read_user_text(path, error=ReportError, where=where)
    try:
        return jupytext.reads(text, fmt="py") if path.suffix == ".py" else nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat's NotJSONError, ValidationError, jupytext's own: all "not a notebook"
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ReportError(f"not a readable notebook ({first[:200]})", where=where) from None


def declared_parameters(nb) -> dict[str, Any]:
    """Parameter names declared in the ``parameters`` cell -> their default source text."""
    from papermill.inspection import _infer_parameters

    return {p.name: p.default for p in _infer_parameters(nb)}


def check_param(name: str, value: Any, default: str) -> None:
    """Raise :class:`ReportError` when ``value`` does not fit the type of ``default`` (its source text).

    ``default`` is what :func:`_declared` returns for ``name``. A ``bool`` default takes a bool, an
    ``int`` an int, a ``float`` an int or a float, a ``str`` a string; any other default (``None``,
    a list, an expression) takes anything. Only the type is checked: whether a string names an
    existing suite or file is for the notebook to say.
    """
    import ast

    try:
        expected = type(ast.literal_eval(default))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return
    if expected is bool:
        ok = isinstance(value, bool)
    elif expected is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif expected is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif expected is str:
        ok = isinstance(value, str)
    else:
        return
    if not ok:
        got = "a string" if isinstance(value, str) else f"{type(value).__name__}"
        raise ReportError(f"expected {expected.__name__} (default {default}), got {got} {value!r}", where=name)


# ---------------------------------------------------------------------------------------------
# kernel
# ---------------------------------------------------------------------------------------------


def ensure_kernel() -> str:
    """A kernelspec that runs this very interpreter; returns its name.

    Written to ``<sys.prefix>/share/jupyter/kernels/eris-lab`` (a path Jupyter searches), so a
    fresh virtual environment needs no ``ipykernel install`` step; its ``env`` is :data:`KERNEL_ENV`. Where the prefix is not
    writable, ``python3`` (jupyter_client's native kernel of this interpreter) is used.
    """
    spec_dir = Path(sys.prefix) / "share" / "jupyter" / "kernels" / KERNEL_NAME
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python (eris_lab)", "language": "python", "metadata": {"debugger": False},
            "env": KERNEL_ENV}
    target = spec_dir / "kernel.json"
    try:
        if not target.is_file() or json.loads(target.read_text()) != spec:
            spec_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(target, json.dumps(spec, indent=1) + "\n")
    except OSError:
        return "python3"
    return KERNEL_NAME


# ---------------------------------------------------------------------------------------------
# what notebooks record
# ---------------------------------------------------------------------------------------------


def record(report_dir: str, notebook: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Record ``values`` (JSON-ready) for ``notebook`` in a run's ``parts/``; merged into summary.json.

    With an empty ``report_dir`` (a notebook opened by hand) nothing is written. Returns what
    the notebook has recorded so far.
    """
    values = json.loads(json.dumps(dict(values), default=_jsonable))
    if not report_dir:
        return values
    path = Path(report_dir) / "parts" / f"{notebook}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    merged = json.loads(path.read_text()) if path.is_file() else {}
    merged.update(values)
    write_atomic(path, json.dumps(merged, indent=1, ensure_ascii=False) + "\n")
    return merged


def recorded(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """Everything notebooks recorded in a run folder: ``{notebook: values}``."""
    parts = Path(folder) / "parts"
    return {p.stem: json.loads(p.read_text()) for p in sorted(parts.glob("*.json"))} if parts.is_dir() else {}


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------


def _plotly_script() -> str:
    """plotly.js inlined once per page; AMD ``define`` hidden so it always sets ``window.Plotly``."""
    from plotly.offline import get_plotlyjs

    return ("<script>window.__erisDefine = window.define; window.define = undefined;</script>\n"
            f"<script type=\"text/javascript\">{get_plotlyjs()}</script>\n"
            "<script>window.define = window.__erisDefine;</script>\n")


def export_html(ipynb: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write a standalone HTML page of an executed notebook (inputs hidden, plotly.js inlined)."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(ipynb), as_version=4)
    exporter = HTMLExporter(template_name="lab", exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb)
    head = body.find("<head>")
    at = head + len("<head>") if head >= 0 else 0
    body = body[:at] + "\n<meta charset=\"utf-8\">\n" + _plotly_script() + body[at:]
    out = Path(out)
    write_atomic(out, body)
    return out


def _index_html(summary: Mapping[str, Any]) -> str:
    rows = []
    for nb in summary["notebooks"]:
        colour = "#1a7f37" if nb["status"] == "ok" else "#cf222e"
        rows.append(
            f"<tr><td>{html.escape(nb['name'])}</td><td style='color:{colour};font-weight:bold'>{nb['status']}</td>"
            f"<td>{nb['seconds']:.1f}</td><td><a href='{html.escape(nb['html'])}'>page</a></td>"
            f"<td><a href='{html.escape(nb['ipynb'])}'>notebook</a></td>"
            f"<td>{html.escape(nb.get('error', ''))}</td></tr>")
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>eris_lab report {html.escape(summary['run'])}</title>
<style>body{{font-family:sans-serif;margin:2em}} td,th{{padding:4px 10px;border-bottom:1px solid #ddd;text-align:left}}</style>
</head><body>
<h1>eris_lab report {html.escape(summary['run'])}</h1>
<p>Status: <b>{summary['status']}</b> &middot; {summary['seconds']:.0f} s &middot; quick: {summary['quick']}
&middot; started {html.escape(summary['started_utc'])} &middot; <a href="summary.json">summary.json</a></p>
<table><tr><th>notebook</th><th>status</th><th>seconds</th><th>HTML</th><th>ipynb</th><th>error</th></tr>
{''.join(rows)}
</table></body></html>
"""


# ---------------------------------------------------------------------------------------------
# nightly deltas
# ---------------------------------------------------------------------------------------------


def previous_summary(reports: str | os.PathLike[str]) -> Path | None:
    """``reports/latest/summary.json`` when a previous successful run exists."""
    path = Path(reports) / "latest" / "summary.json"
    return path if path.is_file() else None


def previous_results(path: str | os.PathLike[str] | None, notebook: str) -> dict[str, Any]:
    """What ``notebook`` recorded in a previous summary.json (``{}`` when there is none)."""
    if not path or not Path(path).is_file():
        return {}
    try:
        return dict(json.loads(Path(path).read_text(encoding="utf-8")).get("results", {}).get(notebook, {}))
    except (OSError, ValueError):
        return {}


def compare(rows: Sequence[Mapping[str, Any]], previous: Sequence[Mapping[str, Any]],
            keys: Sequence[str] = HIGHER_IS_BETTER + LOWER_IS_BETTER,
            tolerance: float = REGRESSION_TOLERANCE) -> list[dict[str, Any]]:
    """Deltas of each (suite, strategy) row against the previous run's row.

    Returns one dict per row: the row's values, ``delta_<key>`` (``None`` when either side is
    missing) and ``regressions`` (the keys that got worse by more than ``tolerance``).
    """
    before = {(r.get("suite"), r.get("strategy")): r for r in previous}
    out = []
    for row in rows:
        old = before.get((row.get("suite"), row.get("strategy")))
        entry = dict(row)
        regressions = []
        for key in keys:
            new_v, old_v = row.get(key), (old or {}).get(key)
            if not isinstance(new_v, (int, float)) or not isinstance(old_v, (int, float)):
                entry[f"delta_{key}"] = None
                continue
            delta = round(float(new_v) - float(old_v), 6)
            entry[f"delta_{key}"] = delta
            worse = -delta if key in HIGHER_IS_BETTER else delta
            if worse > tolerance:
                regressions.append(key)
        entry["regressions"] = regressions
        entry["previous"] = old is not None
        out.append(entry)
    return out


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------


def _stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _new_folder(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    base = _stamp()
    folder, n = root / base, 1
    while True:
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            n += 1
            folder = root / f"{base}-{n}"


def _swap_latest(root: Path, folder: Path) -> None:
    """Point ``root/latest`` at ``folder`` atomically (a new symlink renamed over the old one)."""
    tmp = root / f".latest-{os.getpid()}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(folder.name, tmp)
    os.replace(tmp, root / "latest")


def _failure(name: str, exc: Exception) -> Failure:
    source = (getattr(exc, "source", "") or "").strip().splitlines()
    line = next((s for s in source if s.strip() and not s.lstrip().startswith("#")), source[0] if source else "")
    return Failure(notebook=name, cell=int(getattr(exc, "cell_index", -1)), exec_count=getattr(exc, "exec_count", None),
                   ename=str(getattr(exc, "ename", type(exc).__name__)), evalue=str(getattr(exc, "evalue", exc))[:300],
                   source_line=line[:120])


def run(*, out: str | os.PathLike[str] | None = None, quick: bool = False, params: Mapping[str, Any] | None = None,
        notebook_params: Mapping[str, Mapping[str, Any]] | None = None, sources: Sequence[str | os.PathLike[str]] | None = None,
        kernel_name: str | None = None, progress: bool = True, timeout_s: int = 1800) -> RunResult:
    """Run every notebook once and write the report folder.

    Parameters
    ----------
    out : path, optional
        Reports root (default ``reports/`` in the checkout); the run goes to ``out/<UTC stamp>``.
    quick : bool
        Passed to every notebook as ``quick`` (small samples).
    params : mapping, optional
        Shared parameters: each goes to every notebook that declares it.
    notebook_params : mapping of notebook name to mapping, optional
        Parameters for one notebook (by stem, ``"01_embedding_space"``).
    sources : sequence of path, optional
        Notebook sources (``.py`` percent scripts or ``.ipynb``); default :func:`notebooks`.
    kernel_name : str, optional
        Default :func:`ensure_kernel`.
    progress : bool
        A progress bar per notebook on stderr.
    timeout_s : int
        Per-cell execution timeout in seconds.

    Returns
    -------
    RunResult

    Raises
    ------
    ReportError
        Unknown parameter name (declared by no notebook) or no notebooks.
    """
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    start = time.perf_counter()
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    root = Path(out) if out is not None else repo_root() / "reports"
    if root.exists() and not root.is_dir():
        raise ReportError("is a file, expected a reports folder", where=f"--out {root}")
    paths = [Path(p) for p in sources] if sources is not None else notebooks()
    params = dict(params or {})
    notebook_params = {k: dict(v) for k, v in (notebook_params or {}).items()}
    sources_read = [(path, read_source(path)) for path in paths]  # a bad --notebook fails before any set-up
    kernel = kernel_name or ensure_kernel()
    loaded = []
    for path, nb in sources_read:
        nb.metadata.pop("jupytext", None)
        nb.metadata["kernelspec"] = {"name": kernel, "display_name": "Python (eris_lab)", "language": "python"}
        nb.metadata.setdefault("language_info", {"name": "python"})
        for cell in nb.cells:
            cell.metadata.setdefault("tags", [])
        loaded.append((path.stem, nb, declared_parameters(nb)))
    names = {name for name, _, _ in loaded}
    declared_any = set().union(*(d for _, _, d in loaded))
    for key in params:
        if key not in declared_any:
            raise ReportError(f"no notebook declares parameter {key!r}", where="parameters")
    for name, own in notebook_params.items():
        if name not in names:
            raise ReportError(f"unknown notebook {name!r}; expected one of {', '.join(sorted(names))}",
                              where=f"notebooks.{name}")
        declared = next(d for n, _, d in loaded if n == name)
        for key in own:
            if key not in declared:
                raise ReportError(f"{name} declares no parameter {key!r}", where=f"notebooks.{name}.{key}")
    for name, _, declared in loaded:  # a value of the wrong type fails here, before any notebook runs
        for key, value in {**params, **notebook_params.get(name, {})}.items():
            if key in declared:
                try:
                    check_param(key, value, declared[key])
                except ReportError as exc:
                    raise ReportError(f"{name} parameter {exc}", where="parameters") from None
    previous = previous_summary(root)
    folder = _new_folder(root)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    runs: list[NotebookRun] = []
    failures: list[Failure] = []
    for name, nb, declared in loaded:
        given = {"quick": quick, "report_dir": str(folder.resolve()), "interactive": False,
                 "previous_summary": str(previous) if previous else "", **params, **notebook_params.get(name, {})}
        injected = {k: v for k, v in given.items() if k in declared}
        ipynb = folder / f"{name}.ipynb"
        t0 = time.perf_counter()
        error = ""
        try:
            pm.execute_notebook(nb, str(ipynb), parameters=injected, kernel_name=kernel, report_mode=True,
                                cwd=str(repo_root()), progress_bar={"desc": name, "file": sys.stderr, "leave": True} if progress else False,
                                execution_timeout=timeout_s, log_output=False)
        except PapermillExecutionError as exc:
            failure = _failure(name, exc)
            failures.append(failure)
            error = str(failure)
        except Exception as exc:  # kernel died, timeout, bad notebook: still a failed notebook
            failure = Failure(notebook=name, cell=-1, exec_count=None, ename=type(exc).__name__,
                              evalue=str(exc)[:300], source_line="")
            failures.append(failure)
            error = str(failure)
        seconds = time.perf_counter() - t0
        page = folder / f"{name}.html"
        if ipynb.is_file():
            try:
                export_html(ipynb, page)
            except Exception as exc:  # pragma: no cover - an export bug must not hide the run
                error = error or f"HTML export failed: {exc}"
        runs.append(NotebookRun(name=name, status="failed" if error else "ok", seconds=round(seconds, 2),
                                ipynb=ipynb.name, html=page.name, error=error))
        if error and not any(f.notebook == name for f in failures):
            failures.append(Failure(notebook=name, cell=-1, exec_count=None, ename="ExportError", evalue=error,
                                    source_line=""))
    ok = not failures
    summary = {
        "run": folder.name,
        "status": "ok" if ok else "failed",
        "quick": quick,
        "started_utc": started,
        "finished_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - start, 1),
        "params": params,
        "notebook_params": notebook_params,
        "previous": str(previous.parent.resolve().name) if previous else None,
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "notebooks": [{"name": r.name, "status": r.status, "seconds": r.seconds, "ipynb": r.ipynb,
                       "html": r.html, "error": r.error} for r in runs],
        "failures": [str(f) for f in failures],
        "results": recorded(folder),
    }
    write_atomic(folder / "summary.json", json.dumps(summary, indent=1, ensure_ascii=False, default=_jsonable) + "\n")
    write_atomic(folder / "index.html", _index_html(summary))
    if ok:
        _swap_latest(root, folder)
    return RunResult(folder=folder, notebooks=tuple(runs), failures=tuple(failures),
                     seconds=summary["seconds"], latest_moved=ok, summary=summary)
