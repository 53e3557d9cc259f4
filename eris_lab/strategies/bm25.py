"""BM25 top-k over tool documents (``bm25s``): the lexical retrieval baseline."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..catalog import Catalog
from ..errors import ErisLabError
from ..guard import lexical_terms
from ..policy import Hit
from ..router import Routed, rank_catch_all_last, top_scores
from .base import Context, Strategy, subset_offer, tool_document

__all__ = ["BM25", "BM25Index", "analyze"]

MAX_HITS = 20  # hits kept in a Routed record (the ranking shown in reports)


def _bm25s():
    try:
        import bm25s
    except ImportError:
        raise ErisLabError("bm25s is not installed; `pip install 'eris_lab[eval]'` or `pip install bm25s`",
                           where="strategy bm25") from None
    return bm25s


def analyze(text: str) -> list[str]:
    """Index terms of ``text``: bm25s's English analysis (``\\w\\w+``, lower case, its English stop
    words dropped) for spaced scripts, character bigrams for Chinese, Japanese, Thai and Korean
    (:func:`~eris_lab.guard.lexical_terms`).

    bm25s's own tokenizer reads a whole CJK sentence as one token, so a request written
    without spaces never shared a term with a tool's description (issue 16).
    """
    return lexical_terms(text, _stopwords())


def _stopwords() -> frozenset[str]:
    global _STOPWORDS
    if _STOPWORDS is None:
        from bm25s.stopwords import STOPWORDS_EN

        _STOPWORDS = frozenset(STOPWORDS_EN)
    return _STOPWORDS


_STOPWORDS: frozenset[str] | None = None


class BM25Index:
    """A bm25s index, one document per tool: the lexical retrieval of the BM25 and hybrid strategies
    and of the meta-tools' ``tool_search``.

    Parameters
    ----------
    documents : sequence of str, or of sequences of str
        One per tool, in catalogue order: text, read by :func:`analyze`; or terms already
        analysed (then ``analyzer`` reads queries the same way).
    analyzer : callable, optional
        ``text -> sequence of terms`` for queries, when ``documents`` are terms. Default
        :func:`analyze`.

    Notes
    -----
    :meth:`of_catalog` indexes :func:`~.base.tool_document` of every tool (name words, routing
    text, keywords).
    """

    def __init__(self, documents: Sequence[str] | Sequence[Sequence[str]], *,
                 analyzer: Callable[[str], Sequence[str]] | None = None) -> None:
        bm25s = _bm25s()
        self.n = len(documents)
        self.retriever = bm25s.BM25()
        if analyzer is None:
            analyzer = analyze
            documents = [analyze(d) for d in documents]  # type: ignore[arg-type]
        self.retriever.index([list(terms) or ["_"] for terms in documents], show_progress=False)
        self.analyzer = analyzer
        self.vocab = {t for terms in documents for t in terms}

    @classmethod
    def of_catalog(cls, catalog: Catalog) -> "BM25Index":
        """The index of every tool's :func:`~.base.tool_document`, in catalogue order."""
        return cls([tool_document(catalog, n) for n in catalog.names])

    def scores(self, text: str) -> np.ndarray:
        """``(n_tools,) float32`` BM25 scores of ``text`` (0 for tools sharing no term)."""
        query = [t for t in self.analyzer(text) if t in self.vocab]
        if not query:
            return np.zeros(self.n, dtype=np.float32)
        return np.asarray(self.retriever.get_scores(query), dtype=np.float32)


class BM25(Strategy):
    """Offer the ``k`` tools with the highest BM25 score (those scoring above ``min_score``).

    Parameters
    ----------
    k : int
        Tools offered at most. Default 5.
    min_score : float
        A tool scoring at or below this is not offered (0 = must share a term). Default 0.
    """

    name = "bm25"

    def __init__(self, *, k: int = 5, min_score: float = 0.0) -> None:
        self.k = k
        self.min_score = min_score

    def _fit(self, catalog: Catalog) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ErisLabError(f"expected an integer >= 1, got {self.k!r}", where="BM25.k")
        self.index_ = BM25Index.of_catalog(catalog)

    def _route(self, text: str, context: Context) -> Routed:
        scores = self.index_.scores(text)
        idx, values = top_scores(scores, max(self.k, MAX_HITS))
        names = self.catalog_.names
        ranked = [Hit(name=names[i], score=float(v)) for i, v in zip(idx, values)]
        # a run-anything tool shares words with every request: it rides along behind dedicated tools
        ranked = rank_catch_all_last(ranked, self.catalog_, threshold=max(self.min_score, 1e-9), forced_floor=np.inf)
        chosen = [h for h in ranked[: self.k] if h.score > self.min_score]
        offer = subset_offer(self.catalog_, chosen, reason=f"BM25 top {self.k} above {self.min_score:g}")
        return Routed(text=text, hits=tuple(h for h in ranked if h.score > 0), decision=offer.decision, offer=offer)
