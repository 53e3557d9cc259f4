"""Paths and file writes shared by every module: the one home of where things live on disk.

* :func:`repo_root`: the checkout that holds the package (``descriptors/``, ``data/``,
  ``notebooks/``, ``reports/``, the git-ignored ``.cache/``); modules never count ``__file__``
  parents themselves, so moving a module cannot silently change a path.
* :func:`cache_dir`: eris_lab's user cache (``$ERIS_LAB_CACHE`` or ``~/.cache/eris_lab``).
* :func:`write_atomic` / :func:`atomic_path`: reports, vectors, knobs and records are written
  through a temp file and a rename, so a crash never leaves half a file and a failed run never
  replaces the last good one.
* :func:`sha256_file`: the hash checks of external artefacts (the BFCL wheel, the GGUF).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["repo_root", "cache_dir", "atomic_path", "write_atomic", "sha256_file"]

#: The package folder; its parent is the checkout (an editable install, as ``make`` sets up).
_PACKAGE = Path(__file__).resolve().parent


def repo_root() -> Path:
    """The checkout that holds the ``eris_lab`` package (``descriptors/``, ``data/``, ``notebooks/``)."""
    return _PACKAGE.parent


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
    """
    path = Path(path)
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
