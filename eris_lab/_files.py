"""File machinery shared by the modules that cache external artefacts (BFCL data, the GGUF)."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["sha256_file"]


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks (a 253 MB GGUF never sits in memory)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
