"""The search/describe/execute meta-tools as a routing strategy: one ``tool_search`` with the message.

The other way to keep a catalogue out of the prompt (:mod:`eris_lab.mcp.meta`): the model looks
tools up itself. As a strategy, the offer is what ``tool_execute`` could name after one search.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..catalog import Catalog
from ..errors import ErisLabError
from ..mcp.meta import MetaSession, ToolSearch
from ..offer import Offer
from ..policy import Rule

__all__ = ["MetaStrategy"]


class MetaStrategy:
    """The meta-tool route as a strategy: text + context in, Offer out.

    The offer is what ``tool_execute`` could name after one ``tool_search`` with the user's
    message: the executable hits, best first. Parameters are stored unchanged (scikit-learn
    style); :meth:`fit` indexes one catalogue.

    Parameters
    ----------
    embedder : Embedder or None
        None = keyword fallback.
    k : int
        Hits per search (default 5).
    read_only : bool
    allowed : iterable of str, optional
    """

    name = "meta"

    def __init__(self, embedder: Any = None, k: int = 5, read_only: bool = False,
                 allowed: Iterable[str] | None = None) -> None:
        self.embedder = embedder
        self.k = k
        self.read_only = read_only
        self.allowed = allowed

    def fit(self, catalog: Catalog) -> "MetaStrategy":
        """Index ``catalog``; returns self."""
        self.catalog_ = catalog
        self.searcher_ = ToolSearch(catalog, self.embedder)
        return self

    def session(self) -> MetaSession:
        """A fresh :class:`MetaSession` sharing this strategy's index."""
        if not hasattr(self, "searcher_"):
            raise ErisLabError("call fit(catalog) first", where="MetaStrategy")
        return MetaSession(self.catalog_, allowed=self.allowed, read_only=self.read_only, searcher=self.searcher_)

    def offer(self, text: str, context: Any = None) -> Offer:
        """The executable hits of one ``tool_search(text)``; nothing found -> an empty offer."""
        session = self.session()
        session.search(text, self.k)
        names = session.executable
        if not names:
            return Offer.given((), rule=Rule.EMPTY_AFTER_POLICY, reason="tool_search found nothing executable")
        return Offer.given(names, rule=Rule.RANKED_SUBSET, reason=f"tool_search ({self.searcher_.last_mode})")
