"""The search/describe/execute meta-tools as a routing strategy: one ``tool_search`` with the message.

The other way to keep a catalogue out of the prompt (:mod:`eris_lab.mcp.meta`): the model looks
tools up itself. As a strategy, the offer is what ``tool_execute`` could name after one search
with the user's message: the executable hits, best first. Registered as ``meta`` in
``strategies.STRATEGIES`` and held to the same contract (``check_strategy``) as every other.
"""

from __future__ import annotations

from typing import Iterable

from ..catalog import Catalog
from ..embed import Embedder
from ..errors import ErisLabError, NotFittedError
from ..policy import Rule
from ..router import Routed
from .base import Context, Strategy, subset_offer

__all__ = ["MetaStrategy", "SEARCHES"]

#: ``search`` values: BM25 + embeddings fused by reciprocal rank, or the keyword fallback alone.
SEARCHES = ("hybrid", "keyword")
MAX_HITS = 20  # hits kept in a Routed record (the ranking shown in reports)


class MetaStrategy(Strategy):
    """Offer the executable hits of one ``tool_search(text)`` (:class:`~eris_lab.mcp.meta.MetaSession`).

    Parameters
    ----------
    k : int
        Hits per search, 1 to 5 (``tool_search``'s own bound). Default 5.
    embedder : Embedder, optional
        For the hybrid search; default the bundled MiniLM.
    search : {"hybrid", "keyword"}
        ``keyword``: the keyword fallback only, no embedding model. Default ``hybrid`` (which
        falls back to keywords by itself when the embedder fails).
    read_only : bool
        Never offer a tool that changes state (``mcp.meta.access_of``).
    allowed : iterable of str, optional
        The allowed catalogue; default every tool.

    Raises
    ------
    ErisLabError
        From ``fit``: an unknown ``search`` or a ``k`` outside 1 to 5.
    """

    name = "meta"
    uses_embedder = True

    def __init__(self, *, k: int = 5, embedder: Embedder | None = None, search: str = "hybrid",
                 read_only: bool = False, allowed: Iterable[str] | None = None) -> None:
        self.k = k
        self.embedder = embedder
        self.search = search
        self.read_only = read_only
        self.allowed = allowed

    def _fit(self, catalog: Catalog) -> None:
        from ..mcp.meta import (
            ToolSearch,  # mcp.meta builds on strategies.bm25 / hybrid: import late
        )

        if self.search not in SEARCHES:
            raise ErisLabError(f"expected one of {', '.join(SEARCHES)}, got {self.search!r}", where="MetaStrategy.search")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= 5:
            raise ErisLabError(f"expected an integer from 1 to 5, got {self.k!r}", where="MetaStrategy.k")
        self.searcher_ = ToolSearch(catalog, None if self.search == "keyword" else self._embedder())

    def session(self):
        """A fresh :class:`~eris_lab.mcp.meta.MetaSession` sharing this strategy's index (after ``fit``)."""
        from ..mcp.meta import MetaSession

        if not hasattr(self, "searcher_"):
            raise NotFittedError("this MetaStrategy is not fitted yet; call fit(catalog) first", where="MetaStrategy")
        return MetaSession(self.catalog_, allowed=self.allowed, read_only=self.read_only, searcher=self.searcher_)

    def _route(self, text: str, context: Context) -> Routed:
        session = self.session()
        session.search(text, self.k)
        hits = session.last_ranked[:MAX_HITS]
        if not session.executable:
            offer = subset_offer(self.catalog_, (), reason="tool_search found nothing executable")
        else:
            offer = subset_offer(self.catalog_, (), names=session.executable, rule=Rule.RANKED_SUBSET,
                                 reason=f"tool_search ({self.searcher_.last_mode})")
        return Routed(text=text, hits=hits, decision=offer.decision, offer=offer)
