"""Hybrid BM25 + dense: reciprocal rank fusion, or a weighted sum of normalised scores.

* ``fusion="rrf"``: score = sum over the two rankings of ``1 / (rrf_k + rank)`` (rank from 1;
  Cormack et al. 2009, ``rrf_k = 60`` as there). Tools BM25 does not score (0) get no BM25 term.
* ``fusion="weighted"``: ``alpha * cosine + (1 - alpha) * bm25 / max(bm25)`` (BM25 scaled to
  [0, 1] per query; all-zero BM25 leaves the cosine alone), as semantic-router's hybrid router
  mixes dense and sparse scores with one ``alpha``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..catalog import Catalog
from ..embed import Embedder
from ..errors import ErisLabError
from ..policy import Hit
from ..router import Routed, top_scores
from .base import Context, Strategy, subset_offer
from .bm25 import BM25Index
from .embedding import DenseTopK

__all__ = ["Hybrid", "FUSIONS", "RRF_K", "reciprocal_rank_fusion"]

FUSIONS = ("rrf", "weighted")
MAX_HITS = 20
#: Reciprocal rank fusion constant (Cormack, Clarke and Buettcher 2009 use 60).
RRF_K = 60


def _ranks(scores: np.ndarray) -> np.ndarray:
    """1-based rank of each entry by score descending (stable)."""
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty_like(order)
    ranks[order] = np.arange(1, len(order) + 1)
    return ranks


def reciprocal_rank_fusion(rankings: Sequence[np.ndarray], *, k: int = RRF_K,
                           positive_only: Sequence[bool] | None = None) -> np.ndarray:
    """Sum over rankings of ``1 / (k + rank)``, rank from 1 by score descending (stable).

    Parameters
    ----------
    rankings : sequence of ndarray, each ``(n_tools,)``
        Scores of one ranker each (cosine, BM25, ...), any scale.
    k : int
        The RRF constant, default :data:`RRF_K` (Cormack, Clarke and Buettcher 2009).
    positive_only : sequence of bool, optional
        Per ranking: only entries scoring above 0 get a term (BM25 ranks nothing it shares no
        term with). Default: every entry of every ranking.

    Returns
    -------
    ndarray of float, ``(n_tools,)``
        The fused score; the hybrid strategy and the meta-tools' ``tool_search`` both use it.
    """
    positive_only = positive_only if positive_only is not None else (False,) * len(rankings)
    fused = np.zeros(len(rankings[0]) if rankings else 0, dtype=np.float64)
    for scores, positive in zip(rankings, positive_only):
        term = 1.0 / (k + _ranks(scores))
        fused += np.where(scores > 0, term, 0.0) if positive else term
    return fused


class Hybrid(Strategy):
    """Fuse BM25 and cosine; offer the top ``k``.

    Parameters
    ----------
    k : int
        Default 5.
    fusion : {"rrf", "weighted"}
        Default ``"rrf"``.
    alpha : float
        Weight of the cosine in ``weighted`` fusion, in [0, 1]. Default 0.7.
    rrf_k : int
        The RRF constant. Default 60.
    embedder : Embedder, optional
    query_prefix : str
    """

    name = "hybrid"
    uses_embedder = True

    def __init__(self, *, k: int = 5, fusion: str = "rrf", alpha: float = 0.7, rrf_k: int = 60,
                 embedder: Embedder | None = None, query_prefix: str = "") -> None:
        self.k = k
        self.fusion = fusion
        self.alpha = alpha
        self.rrf_k = rrf_k
        self.embedder = embedder
        self.query_prefix = query_prefix

    def _check_ranges(self) -> None:
        if self.rrf_k < 0:  # 1 / (rrf_k + rank) with rank from 1: a negative constant divides by zero
            raise ErisLabError(f"expected an integer >= 0, got {self.rrf_k!r}", where="Hybrid.rrf_k")
        if self.k < 1:
            raise ErisLabError(f"expected an integer >= 1, got {self.k!r}", where="Hybrid.k")

    def _fit(self, catalog: Catalog) -> None:
        if self.fusion not in FUSIONS:
            raise ErisLabError(f"expected one of {', '.join(FUSIONS)}, got {self.fusion!r}", where="Hybrid.fusion")
        if not 0.0 <= float(self.alpha) <= 1.0:
            raise ErisLabError(f"expected a weight in [0, 1], got {self.alpha!r}", where="Hybrid.alpha")
        self.dense_ = DenseTopK(k=self.k, embedder=self._embedder(), query_prefix=self.query_prefix).fit(catalog)
        self.index_ = BM25Index.of_catalog(catalog)

    def fused(self, text: str) -> np.ndarray:
        """``(n_tools,) float`` fused score of every tool."""
        cos = self.dense_.cosines(text).astype(np.float64)
        lex = self.index_.scores(text).astype(np.float64)
        if self.fusion == "rrf":
            return reciprocal_rank_fusion([cos, lex], k=self.rrf_k, positive_only=(False, True))
        top = lex.max() if lex.size else 0.0
        return self.alpha * cos + (1 - self.alpha) * (lex / top if top > 0 else 0.0)

    def _route(self, text: str, context: Context) -> Routed:
        scores = self.fused(text)
        idx, values = top_scores(scores, max(self.k, MAX_HITS))
        names = self.catalog_.names
        ranked = [Hit(name=names[i], score=float(v)) for i, v in zip(idx, values)]
        offer = subset_offer(self.catalog_, ranked[: self.k], reason=f"{self.fusion} fusion of BM25 and cosine, top {self.k}")
        return Routed(text=text, hits=tuple(ranked), decision=offer.decision, offer=offer)
