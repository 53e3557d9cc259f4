"""``vault:*``: text files in a sandboxed folder (``..``, absolute paths, symlinks and hard links refused).

A hard link planted inside the vault (the tools cannot make one) is a second name for a file that
may lie outside it; nothing in its path says so, so every file is checked after it is opened
(``fstat``'s ``st_nlink > 1``), on the open descriptor, where a swap between check and use cannot
slip in.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..errors import ToolError

if TYPE_CHECKING:
    from ..execution import Session

__all__ = ["vault_read", "vault_write", "vault_list", "MAX_VAULT_READ_BYTES", "MAX_VAULT_LIST_ENTRIES"]

MAX_VAULT_READ_BYTES = 1_000_000  # longest file vault:read opens; the label truncates further


def _vault_path(session: Session, value: Any, *, what: str = "path") -> Path:
    """A path inside the vault, or a ToolError: absolute paths, ``..`` and symlinks are refused."""
    if not isinstance(value, str):
        raise ToolError(f"{what}: expected a relative path inside the vault, got {value!r}")
    rel = value.strip() or "."
    if "\0" in rel:
        raise ToolError(f"{what}: refused {value!r}: a NUL character")
    posix = rel.replace("\\", "/")
    if posix.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", posix) or os.path.isabs(rel):
        raise ToolError(f"{what}: refused {value!r}: absolute paths are not allowed; use a path inside the vault")
    parts = [p for p in PurePosixPath(posix).parts if p not in ("", ".")]
    if ".." in parts:
        raise ToolError(f"{what}: refused {value!r}: '..' would leave the vault")
    root = session.vault
    root.mkdir(parents=True, exist_ok=True)
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            raise ToolError(f"{what}: refused {value!r}: {current.relative_to(root)} is a symlink")
    resolved_root = root.resolve()
    if not current.resolve().is_relative_to(resolved_root):
        raise ToolError(f"{what}: refused {value!r}: it resolves outside the vault")
    return current


def _refuse_hard_link(fd: int, value: Any, what: str = "path") -> None:
    """Close ``fd`` and raise when the open file has more than one name (a hard link)."""
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        os.close(fd)
        raise ToolError(f"{what}: refused {value!r}: it is a hard link (a file with {info.st_nlink} names, "
                        "which may lie outside the vault)")


def _path_arg(args: Mapping[str, Any]) -> Any:
    for key in ("path", "file", "name"):
        if key in args:
            return args[key]
    return "."


def vault_read(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``vault:read``: the text of a file in the vault."""
    path = _vault_path(session, _path_arg(args))
    if not path.is_file():
        raise ToolError(f"no file {_path_arg(args)!r} in the vault")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    _refuse_hard_link(fd, _path_arg(args))
    with os.fdopen(fd, "rb") as handle:
        raw = handle.read(MAX_VAULT_READ_BYTES + 1)
    text = raw[:MAX_VAULT_READ_BYTES].decode("utf-8", errors="replace")
    return {"path": str(path.relative_to(session.vault)), "content": text,
            "truncated": len(raw) > MAX_VAULT_READ_BYTES}


def vault_write(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``vault:write``: write a text file in the vault; ``mode`` append (default), create, overwrite."""
    path = _vault_path(session, _path_arg(args))
    content = args.get("content", args.get("text"))
    if not isinstance(content, str):
        raise ToolError(f"content: expected text, got {content!r}")
    mode = args.get("mode") or ("append" if args.get("append", True) else "overwrite")
    if mode not in ("append", "create", "overwrite"):
        raise ToolError(f"mode: expected append, create or overwrite, got {mode!r}")
    if path == session.vault or path.is_dir():
        raise ToolError(f"{_path_arg(args)!r} is a folder; give a file path")
    if mode == "create" and path.exists():
        raise ToolError(f"{_path_arg(args)!r} exists already; use mode 'append' or 'overwrite'")
    path.parent.mkdir(parents=True, exist_ok=True)
    _vault_path(session, str(path.relative_to(session.vault)))  # re-check after creating folders
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    flags |= os.O_APPEND if mode == "append" else 0  # truncate only after the hard-link check
    fd = os.open(path, flags, 0o644)
    _refuse_hard_link(fd, _path_arg(args))
    if mode != "append":
        os.ftruncate(fd, 0)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(content)
    return {"path": str(path.relative_to(session.vault)), "mode": mode, "bytes": len(content.encode("utf-8")),
            "size": path.stat().st_size}


MAX_VAULT_LIST_ENTRIES = 500  # longest listing vault:list returns


def vault_list(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``vault:list``: the entries of a vault ``folder`` (name, type, size); ``recursive`` walks
    sub-folders without following symlinks."""
    folder = args.get("folder", args.get("path"))
    path = _vault_path(session, "." if folder is None else folder, what="folder")
    if not path.is_dir():
        raise ToolError(f"no folder {folder!r} in the vault")
    entries: list[dict[str, Any]] = []
    walk = os.walk(path, followlinks=False) if args.get("recursive") else [(str(path), None, None)]
    for base, _, _ in walk:
        for entry in sorted(Path(base).iterdir(), key=lambda p: p.name):
            kind = "link" if entry.is_symlink() else "folder" if entry.is_dir() else "file"
            item: dict[str, Any] = {"name": str(entry.relative_to(path)), "type": kind}
            if kind == "file":
                item["size"] = entry.stat().st_size
            entries.append(item)
            if len(entries) >= MAX_VAULT_LIST_ENTRIES:
                break
        if len(entries) >= MAX_VAULT_LIST_ENTRIES:
            break
    return {"folder": str(path.relative_to(session.vault)) if path != session.vault else ".",
            "entries": entries, "complete": len(entries) < MAX_VAULT_LIST_ENTRIES}
