"""Paths and file writes shared by every module: the one home of where things live on disk.

* :func:`repo_root`: the checkout that holds the package (``descriptors/``, ``data/``,
  ``notebooks/``, ``reports/``, the git-ignored ``.cache/``); modules never count ``__file__``
  parents themselves, so moving a module cannot silently change a path.
* :func:`cache_dir`: eris_lab's user cache (``$ERIS_LAB_CACHE`` or ``~/.cache/eris_lab``).
* :func:`write_atomic` / :func:`atomic_path`: reports, vectors, knobs and records are written
  through a temp file and a rename, so a crash never leaves half a file and a failed run never
  replaces the last good one.
* :func:`sha256_file`: the hash checks of external artefacts (the BFCL wheel, the GGUF).
* :func:`read_user_text`, :func:`load_json_file` / :func:`loads_json`, :func:`load_toml_file` /
  :func:`loads_toml`: the one way every subcommand reads a file a user names (catalogues, hits,
  suites, knobs, params, candidates). Each refusal is one ``ErisLabError`` (of the caller's
  subclass) naming the file: a folder, a missing file, a loop of symbolic links, a pipe with
  nothing to read (a named FIFO nobody writes to never blocks), more than :data:`MAX_INPUT_BYTES`
  (``/dev/zero`` never fills memory), bytes that are not UTF-8, JSON/TOML that does not parse,
  or data nested deeper than :data:`MAX_NESTING` (never a ``RecursionError``).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import tempfile
import tomllib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from .errors import ErisLabError

__all__ = [
    "repo_root", "shown_path", "cache_dir", "atomic_path", "write_atomic", "sha256_file",
    "MAX_INPUT_BYTES", "MAX_NESTING", "read_user_text", "no_duplicate_keys", "refuse_json_constant", "loads_json", "load_json_file", "loads_toml",
    "load_toml_file", "nesting_depth",
]

#: Largest file a user may hand any subcommand, in bytes (64 MiB: the pooled BFCL catalogue is
#: about 2 MB). Reading stops one byte past it, so an endless input (``/dev/zero``) is refused
#: instead of filling memory.
MAX_INPUT_BYTES = 64 << 20

#: Deepest nesting of JSON arrays/objects (or TOML arrays/tables) a user file may hold. Python's
#: own parsers stop near 1,000 with a ``RecursionError``, and the code that walks the data
#: (schema checks, the grammar compiler) uses several frames per level, so the bound sits well
#: below that; real tool catalogues nest fewer than 20 levels.
MAX_NESTING = 200

#: The package folder; its parent is the checkout (an editable install, as ``make`` sets up).
_PACKAGE = Path(__file__).resolve().parent


def repo_root() -> Path:
    """The checkout that holds the ``eris_lab`` package (``descriptors/``, ``data/``, ``notebooks/``)."""
    return _PACKAGE.parent


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` as recorded in results: relative to the checkout when inside it (records are
    committed, and another machine's absolute path means nothing there); unchanged otherwise."""
    try:
        return str(Path(path).resolve().relative_to(repo_root().resolve()))
    except (ValueError, OSError):
        return str(path)


def cache_dir() -> Path:
    """Root of eris_lab's user caches: ``$ERIS_LAB_CACHE`` or ``~/.cache/eris_lab`` (not created)."""
    return Path(os.environ.get("ERIS_LAB_CACHE") or Path.home() / ".cache" / "eris_lab")


def _mode_for(path: Path) -> int:
    """The mode the written file gets: the replaced file's, else a new file's under the umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temp path beside ``path``, renamed over it when the block succeeds and removed when it fails.

    For writers that need a path of their own (``np.savez``, the GGUF assembler); text and bytes
    go through :func:`write_atomic`. Parent folders are created. The file keeps the mode of the
    file it replaces; a new one gets the usual mode under the umask (``mkstemp``'s temp file
    alone would be readable by its owner only).

    Raises
    ------
    ErisLabError
        ``path`` exists and is no regular file (a folder, a device, a FIFO): it is never replaced.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        # renamed over a device or a FIFO, the temp file replaced the node itself: as root,
        # "calibrate --out /dev/full" replaced the machine's /dev/full (round fifteen's variants,
        # 2026-12-07). A folder fails the rename anyway; say it here, in the same words.
        kind = "a folder" if path.is_dir() else "a device, a pipe or a socket"
        raise ErisLabError(f"{path}: not a regular file ({kind}); written files replace a file whole, "
                           "so name a file")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, _mode_for(path))  # mkstemp makes files owner-only; a report is for sharing
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` through :func:`atomic_path`.

    Returns the path written. Readers never see a half-written file, and a failure leaves the
    last good file in place.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path) as tmp, tmp.open("wb") as handle:
        handle.write(raw)
        handle.flush()
        os.fsync(handle.fileno())
    return Path(path)


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks (a 253 MB GGUF never sits in memory)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# Reading files a user names: one place, one set of refusals
# ---------------------------------------------------------------------------------------------


def read_user_text(path: str | os.PathLike[str], *, error: type[ErisLabError] = ErisLabError,
                   where: str | None = None, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of a file a user named on the command line (or in a parameter).

    Parameters
    ----------
    path : path-like
        The file; ``-`` is not special (stdin is read by the subcommands that take it).
    error : ErisLabError subclass
        What to raise (``CatalogError`` for a catalogue, ``KnobsError`` for knobs, ...).
    where : str, optional
        What to name in the message (default: the path itself), e.g. ``"--hits h.json"``.
    max_bytes : int
        Refuse a file longer than this many bytes (default :data:`MAX_INPUT_BYTES`).

    Raises
    ------
    ErisLabError (of class ``error``)
        No such file, a folder, a loop of symbolic links, a pipe with nothing to read (never
        blocks on a named FIFO nobody writes to), unreadable (the OS reason), longer than
        ``max_bytes``, or not UTF-8 (the byte offset of the first bad byte). A leading UTF-8
        BOM is dropped.
    """
    where = str(path) if where is None else where
    target = Path(path)
    try:
        mode = target.stat().st_mode
        if stat.S_ISDIR(mode):
            raise error("is a folder, expected a file", where=where)
        if stat.S_ISFIFO(mode):
            raw = _read_pipe(target, max_bytes + 1)
        else:
            with target.open("rb") as handle:
                raw = handle.read(max_bytes + 1)  # never more: /dev/zero cannot fill memory
    except FileNotFoundError:
        raise error("no such file", where=where) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # Path.stat says so; "no such file" misled (a helper's bad input)
            raise error("a loop of symbolic links, no file at its end", where=where) from None
        raise error(f"cannot read ({exc.strerror or exc})", where=where) from None
    if stat.S_ISFIFO(mode) and not raw:
        raise error("a pipe with nothing to read (no writer, or an empty one)", where=where)
    if len(raw) > max_bytes:
        raise error(f"larger than {max_bytes >> 20} MiB (the limit for an input file: {max_bytes:,} bytes)",
                    where=where)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})", where=where) from None


def _read_pipe(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of a pipe (``/dev/stdin`` under ``|``, a named FIFO, ``<(...)``).

    Opened non-blocking: a named FIFO that no process writes to would block ``open`` forever
    (a helper's ``--knobs FIFO`` hung, 2026-12-05); it then reads as empty at once. Once a
    writer is known to be there the reads block as usual until it closes its end.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        try:
            first = os.read(fd, limit)
        except BlockingIOError:  # a writer, nothing written yet: wait for it
            first = None
        if first == b"":
            return b""  # no writer at all
        os.set_blocking(fd, True)
        chunks, size = ([first] if first else []), len(first or b"")
        while size < limit:
            chunk = os.read(fd, min(1 << 20, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def nesting_depth(value: Any) -> int:
    """Nesting depth of parsed JSON/TOML: a scalar is 0, ``[]`` is 1, ``[[1]]`` is 2.

    Iterative (an explicit stack), so any depth Python could build is measured without recursion.
    """
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def _too_deep(where: str, error: type[ErisLabError], max_nesting: int) -> ErisLabError:
    return error(f"nested deeper than {max_nesting} levels of arrays/objects, the limit for input data",
                 where=where)


def refuse_json_constant(name: str) -> Any:
    """``parse_constant`` for :func:`json.loads`: ``NaN``, ``Infinity`` and ``-Infinity`` are not
    JSON (RFC 8259) and no schema or catalogue may carry them (a ``const: NaN`` reached the
    grammar compiler as a traceback, a helper's bad input).

    Raises
    ------
    ValueError
        Always, naming the constant.
    """
    raise ValueError(f"{name} is not JSON")


def loads_json(text: str, *, where: str, error: type[ErisLabError] = ErisLabError,
               max_nesting: int = MAX_NESTING) -> Any:
    """Parse strict JSON text from a user (``NaN``/``Infinity`` refused, nesting bounded).

    Raises
    ------
    ErisLabError (of class ``error``)
        ``not valid JSON (line L column C: reason)`` (a key given twice in one object too), or nested
        deeper than ``max_nesting``.
    """
    try:
        data = json.loads(text, parse_constant=refuse_json_constant, object_pairs_hook=no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise error(f"not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})", where=where) from None
    except ValueError as exc:  # parse_constant's refusal
        raise error(f"not valid JSON ({exc})", where=where) from None
    except RecursionError:
        raise _too_deep(where, error, max_nesting) from None
    if nesting_depth(data) > max_nesting:
        raise _too_deep(where, error, max_nesting)
    return data


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict; a key given twice is refused, as TOML refuses it
    (``{"name": "a:b", "name": "c:d"}`` kept the last without a word: a helper's bad input)."""
    out = dict(pairs)
    if len(out) < len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"key {twice!r} given twice in one object")
    return out


def load_json_file(path: str | os.PathLike[str], *, error: type[ErisLabError] = ErisLabError,
                   where: str | None = None) -> Any:
    """:func:`read_user_text` then :func:`loads_json`; every refusal names ``where`` (default the path)."""
    where = str(path) if where is None else where
    return loads_json(read_user_text(path, error=error, where=where), where=where, error=error)


def loads_toml(text: str, *, where: str, error: type[ErisLabError] = ErisLabError,
               max_nesting: int = MAX_NESTING) -> dict[str, Any]:
    """Parse TOML text from a user with the nesting bound of :func:`loads_json`.

    Raises
    ------
    ErisLabError (of class ``error``)
        ``not valid TOML (reason)``, or nested deeper than ``max_nesting``.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"not valid TOML ({exc})", where=where) from None
    except ValueError as exc:  # an integer of more than 4,300 digits (Python's int limit)
        raise error(f"not valid TOML ({exc})", where=where) from None
    except RecursionError:
        raise _too_deep(where, error, max_nesting) from None
    if nesting_depth(data) > max_nesting:
        raise _too_deep(where, error, max_nesting)
    return data


def load_toml_file(path: str | os.PathLike[str], *, error: type[ErisLabError] = ErisLabError,
                   where: str | None = None) -> dict[str, Any]:
    """:func:`read_user_text` then :func:`loads_toml`; every refusal names ``where`` (default the path)."""
    where = str(path) if where is None else where
    return loads_toml(read_user_text(path, error=error, where=where), where=where, error=error)
