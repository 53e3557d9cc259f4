"""Toolkit pruning: offer whole toolkits, chosen by keywords first, then by embedding score.

A toolkit is a tool's domain (``mail`` of ``mail:send``) or its dotted prefix (``ChaDri`` of
``ChaDri.change_drink``), see :func:`eris_lab.catalog.toolkit_of`. Toolkits whose keyword pattern
(:func:`~.keyword.derive_groups`) matches the latest four messages come first; the rest are
ranked by their best tool cosine, and toolkits are added in that order until ``n_toolkits``
are seated. Inside the offer, tools are ordered by cosine.
"""

from __future__ import annotations

import re

from ..catalog import Catalog, toolkit_of
from ..embed import Embedder
from ..errors import ErisLabError
from ..policy import Hit, Rule
from ..router import Routed
from .base import Context, Strategy, latest_messages, subset_offer
from .embedding import DenseTopK
from .keyword import derive_groups

__all__ = ["ToolkitPruning"]

MAX_HITS = 20


class ToolkitPruning(Strategy):
    """Keyword-matched toolkits first, then the best-scoring toolkits, up to ``n_toolkits``.

    Parameters
    ----------
    n_toolkits : int
        Toolkits seated at least (keyword matches beyond it are all kept). Default 2.
    window : int
        Latest messages the keyword patterns look at. Default 4.
    embedder : Embedder, optional
    query_prefix : str
    """

    name = "toolkit"
    uses_embedder = True

    def __init__(self, *, n_toolkits: int = 2, window: int = 4, embedder: Embedder | None = None,
                 query_prefix: str = "") -> None:
        self.n_toolkits = n_toolkits
        self.window = window
        self.embedder = embedder
        self.query_prefix = query_prefix

    def _fit(self, catalog: Catalog) -> None:
        if isinstance(self.n_toolkits, bool) or not isinstance(self.n_toolkits, int) or self.n_toolkits < 1:
            raise ErisLabError(f"expected an integer >= 1, got {self.n_toolkits!r}", where="ToolkitPruning.n_toolkits")
        self.dense_ = DenseTopK(embedder=self._embedder(), query_prefix=self.query_prefix).fit(catalog)
        self.patterns_ = {kit: re.compile(p) for kit, (p, _) in derive_groups(catalog).items()}
        self.kits_: dict[str, list[int]] = {}
        for i, name in enumerate(catalog.names):
            self.kits_.setdefault(toolkit_of(name), []).append(i)

    def _route(self, text: str, context: Context) -> Routed:
        cos = self.dense_.cosines(text)
        names = self.catalog_.names
        best = {kit: float(cos[idx].max()) for kit, idx in self.kits_.items()}
        messages = latest_messages(text, context, self.window)
        matched = [k for k, p in self.patterns_.items() if any(p.search(m) for m in messages)]
        matched.sort(key=lambda k: -best[k])
        rest = sorted((k for k in self.kits_ if k not in matched), key=lambda k: -best[k])
        seated = matched + rest[: max(0, self.n_toolkits - len(matched))]
        chosen = sorted((i for k in seated for i in self.kits_[k]), key=lambda i: -cos[i])
        hits = [Hit(name=names[i], score=float(cos[i])) for i in chosen]
        ranked = sorted((Hit(name=n, score=float(c)) for n, c in zip(names, cos)), key=lambda h: -h.score)
        reason = (f"toolkits {', '.join(seated)}" + (f" (keyword: {', '.join(matched)})" if matched else " (by cosine)"))
        offer = subset_offer(self.catalog_, hits, rule=Rule.RANKED_SUBSET, reason=reason)
        return Routed(text=text, hits=tuple(ranked[:MAX_HITS]), decision=offer.decision, offer=offer)
