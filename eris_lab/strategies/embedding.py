"""Dense strategies: plain cosine top-k, and embedding + policy (the routing core, ``Router``).

Both embed tools as the router does (``router.embed_tools``: the mean of each tool's
``catalog.routing_phrases`` vectors) through the given embedder; wrap it in :class:`~.base.MemoEmbedder` to embed each text once.
``query_prefix`` is prepended to the message only (an instruction prefix for models trained
with one, such as ``"query: "``); tool texts are embedded as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..calibration import RelevanceGate
from ..catalog import Catalog
from ..embed import Embedder, normalize_rows, share_identity
from ..errors import ErisLabError
from ..guard import clean_text
from ..knobs import Knobs
from ..offer import build, ordered
from ..policy import Hit, decide_turn
from ..router import (
    RANKED_HITS,
    REFERRING_CUE_RE,
    Routed,
    Router,
    added_tools,
    dialog_tools,
    embed_tools,
    kept_hits,
    last_turn_tools,
    previous_user_text,
    top_scores,
)
from .base import Context, Strategy, subset_offer

__all__ = ["DenseTopK", "EmbeddingPolicy", "Scored", "tool_matrix"]

MAX_HITS = 20  # hits kept in a Routed record (the ranking shown in reports)


def tool_matrix(catalog: Catalog, embedder: Embedder) -> np.ndarray:
    """``(n_tools, dim) float32`` routing vectors of ``catalog`` (rows in catalogue order).

    The router's own vectors (``router.embed_tools``: the mean of each tool's phrase vectors), so
    every dense strategy is compared on the same tool representation as the routing core.
    """
    return embed_tools(catalog, embedder.embed)


def _check_k(k: Any, where: str) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ErisLabError(f"expected an integer >= 1, got {k!r}", where=where)


class DenseTopK(Strategy):
    """Offer the ``k`` tools with the highest cosine (those at or above ``min_score``).

    Parameters
    ----------
    k : int
        Default 5.
    embedder : Embedder, optional
        Default: the bundled all-MiniLM-L6-v2.
    query_prefix : str
        Prepended to the message before embedding. Default ``""``.
    min_score : float
        Cosine floor; ``-1.0`` (default) always offers ``k`` tools.
    """

    name = "dense"
    uses_embedder = True

    def __init__(self, *, k: int = 5, embedder: Embedder | None = None, query_prefix: str = "",
                 min_score: float = -1.0) -> None:
        self.k = k
        self.embedder = embedder
        self.query_prefix = query_prefix
        self.min_score = min_score

    def _fit(self, catalog: Catalog) -> None:
        _check_k(self.k, "DenseTopK.k")
        self.vectors_ = tool_matrix(catalog, self._embedder())

    def cosines(self, text: str) -> np.ndarray:
        """``(n_tools,) float32`` cosine of the (prefixed, cleaned) message with every tool."""
        query = normalize_rows(self._embedder().embed([self.query_prefix + clean_text(text, 4000)]))
        return (query @ self.vectors_.T)[0]

    def _route(self, text: str, context: Context) -> Routed:
        scores = self.cosines(text)
        idx, values = top_scores(scores, max(self.k, MAX_HITS))
        names = self.catalog_.names
        ranked = [Hit(name=names[i], score=float(v)) for i, v in zip(idx, values)]
        chosen = [h for h in ranked[: self.k] if h.score >= self.min_score]
        offer = subset_offer(self.catalog_, chosen, reason=f"cosine top {self.k} >= {self.min_score:g}")
        return Routed(text=text, hits=tuple(ranked), decision=offer.decision, offer=offer)


@dataclass(frozen=True, kw_only=True, slots=True)
class Scored:
    """One message scored against every tool, before any threshold (the tuner re-decides from it).

    Attributes
    ----------
    text : str
        The cleaned message.
    hits : tuple of Hit
        Forced hits (1.0) and every tool's cosine, score descending; empty for conversation.
    guard : str
    recent : tuple of str
        Dialog memory: tools used in the history, then the context's recent tools.
    follow_up : bool
        The message continues the dialog (``Router.is_follow_up``; ``policy.decide``'s ``follow_up``).
    failed : tuple of str
        Tool calls that failed since the last user message, then the context's ``failed``
        (offered again by ``policy.retry_failed``).
    """

    text: str
    hits: tuple[Hit, ...]
    guard: str
    recent: tuple[str, ...]
    follow_up: bool = False
    failed: tuple[str, ...] = ()
    features: np.ndarray | None = None  # relevance-gate features (calibration.GATE_FEATURES), or None
    intents: tuple[Hit, ...] = ()  # each clause's best tool, for a message with several requests
    last_turn: tuple[str, ...] = ()  # tools that ran since the previous user message (policy.with_memory)
    added: tuple[str, ...] = ()  # tools the catalogue gained since the last user message (policy.with_added)
    order: np.ndarray | None = None  # the offer's order key (Router.last_order), or None
    ranked: tuple[Hit, ...] = ()  # the router's ranking for bounded widening (Router.last_ranked)
    previous: str = ""  # the previous user message (values for policy.with_slots on a follow-up)
    figurative: bool = False  # its tool words were a figure of speech (Router.last_figurative)
    gloss: str = ""  # the message wholly glossed from another language (Router.last_gloss), or ""


class EmbeddingPolicy(Strategy):
    """The routing core: ``Router`` (guards, cosine hits) -> ``policy.decide`` -> ``offer.build``.

    Parameters
    ----------
    knobs : Knobs, optional
        Default: knobs calibrated for the fitted catalogue without labels
        (``calibration.calibrated_knobs``, cached); ``Knobs()`` gives DESIGN.md's reference values.
    embedder : Embedder, optional
    query_prefix : str
        Prepended to the message before embedding. Default ``""``.
    companions : str
        Companion sources the offer overlay adds, comma-separated from ``declared``, ``schema``,
        ``dataflow``, ``learned`` (``eris_lab.companions.SOURCES``); ``""`` for none. Default
        ``"declared,schema,dataflow"`` (``companions.default_table``, as ``eris-lab route``); under
        the reference knobs only ``declared`` applies (DESIGN.md's overlays).
    memory : bool
        Keep tools of the previous turn when the message continues its work (``policy.with_memory``;
        calibrated knobs only). Default True.
    learned : LearnedCompanions, optional
        The fitted model read by the ``learned`` source (fitted on other API classes).
    added : bool
        Offer tools the catalogue gained since the last user message first (``policy.with_added``:
        a ``tools_added`` history turn). Default True.
    slot_check : {"off", "gate", "prune"}, optional
        Overrides the knobs' ``slot_check`` (``policy.with_slots``), for ablations; default None
        keeps the knobs' own.
    widen_lexical_weight : float, optional
        Overrides the knobs' ``widen_lexical_weight`` (``router.widening_key``; 0: the bounded
        widening ranks by cosine alone), for ablations; default None keeps the knobs' own.

    Notes
    -----
    ``route`` is ``decide_scored(scored(text, context), knobs)``: the message is embedded once
    with a threshold of -1 (every tool scored) and the knobs are applied afterwards, exactly as
    ``Router.route`` applies them. The tuner calls ``decide_scored`` with other knobs, so grid
    points never re-embed. ``Routed.hits`` holds the best ``MAX_HITS`` scores, including tools
    below the threshold, so top-1 is defined even when the policy falls back to the roster.
    """

    name = "policy"
    uses_embedder = True

    def __init__(self, *, knobs: Knobs | None = None, embedder: Embedder | None = None, query_prefix: str = "",
                 companions: str = "declared,schema,dataflow", memory: bool = True, learned: Any = None,
                 added: bool = True, slot_check: str | None = None,
                 widen_lexical_weight: float | None = None) -> None:
        self.knobs = knobs
        self.embedder = embedder
        self.query_prefix = query_prefix
        self.companions = companions
        self.memory = memory
        self.learned = learned
        self.added = added
        self.slot_check = slot_check
        self.widen_lexical_weight = widen_lexical_weight

    def _check_ranges(self) -> None:
        from .. import companions as comp

        sources = [s.strip() for s in self.companions.split(",") if s.strip()]
        bad = [s for s in sources if s not in comp.SOURCES]
        if bad:
            raise ErisLabError(f"unknown companion source {bad[0]!r}; expected one of {', '.join(comp.SOURCES)}",
                               where=f"{type(self).__name__}.companions")
        if "learned" in sources and self.learned is None:
            raise ErisLabError("the learned source needs a fitted LearnedCompanions (learned=...)",
                               where=f"{type(self).__name__}.learned")

    def companion_table(self, knobs: Knobs | None = None) -> dict:
        """The companions table of the fitted catalogue for ``knobs`` (default the fitted ones)."""
        from .. import companions as comp

        knobs = knobs if knobs is not None else self.knobs_
        sources = [s.strip() for s in self.companions.split(",") if s.strip()]
        if knobs.subset_margin >= 2.0:  # reference knobs: DESIGN.md's declared overlays only
            sources = [s for s in sources if s == "declared"]
        tables = []
        if "declared" in sources:
            tables.append(comp.declared(self.catalog_))
        if "schema" in sources:
            tables.append(comp.from_schemas(self.catalog_))
        if "dataflow" in sources:
            tables.append(comp.from_dataflow(self.catalog_))
        if "learned" in sources:
            tables.append(self.learned.table(self.catalog_, self.router_.tool_vectors))
        return comp.merge(*tables)

    def _fit(self, catalog: Catalog) -> None:
        embedder = self._embedder()
        if self.query_prefix:
            embedder = _Prefixed(embedder, self.query_prefix)
        vectors = tool_matrix(catalog, self._embedder())
        if self.knobs is not None:
            self.knobs_ = self.knobs
        else:
            from ..calibration import calibrated_knobs

            self.knobs_ = calibrated_knobs(catalog, self._embedder(), tool_vectors=vectors)
        if self.slot_check is not None:  # an ablation of policy.with_slots over whichever knobs
            self.knobs_ = self.knobs_.replace(slot_check=self.slot_check)
        if self.widen_lexical_weight is not None:
            self.knobs_ = self.knobs_.replace(widen_lexical_weight=self.widen_lexical_weight)
        # scored() keeps every tool (threshold -1) and computes the gate's features whenever the
        # fitted knobs use the gate, so the tuner can re-decide with any relevance floor
        open_knobs = self.knobs_.replace(threshold=-1.0, domain_floors={})
        self.router_ = Router(catalog, embedder, knobs=open_knobs, cache=False, tool_vectors=vectors)
        self.router_.score_floor = self.knobs_.threshold  # lexical scores on the judging knobs' scale
        self.companions_ = self.companion_table()

    def scored(self, text: str, context: Context | None = None) -> Scored:
        """Score ``text`` against every tool once (guards included, no threshold)."""
        context = context or Context()
        clean = clean_text(text if isinstance(text, str) else "", self.knobs_.max_query_chars)
        previous = previous_user_text(context.history)
        used, lacking = dialog_tools(context.history)
        recent = used + tuple(context.recent)
        failed = tuple(dict.fromkeys(lacking + tuple(context.failed)))
        hits, guard = self.router_.guarded_hits(clean, previous, recent=recent, failed=failed)
        return Scored(text=clean, hits=hits, guard=guard, recent=recent,
                      follow_up=self.router_.is_follow_up(clean, previous, recent=recent, failed=failed),
                      failed=failed, features=self.router_.last_features, intents=self.router_.last_intents,
                      last_turn=last_turn_tools(context.history), added=added_tools(context.history),
                      order=self.router_.last_order, ranked=self.router_.last_ranked, previous=previous,
                      figurative=self.router_.last_figurative, gloss=self.router_.last_gloss)

    def decide_scored(self, scored: Scored, knobs: Knobs | None = None) -> Routed:
        """Apply ``knobs`` (default the fitted ones) to a :class:`Scored` message: hits, decide, build."""
        knobs = knobs if knobs is not None else self.knobs_
        catalog = self.catalog_
        kept = kept_hits(scored.hits, scored.text, knobs)
        decision = decide_turn(scored.text, kept, catalog, knobs=knobs, recent=scored.recent,
                               follow_up=scored.follow_up, ranked=scored.ranked or scored.hits[:RANKED_HITS],
                               relevance=RelevanceGate.relevance(scored.features, knobs), failed=scored.failed,
                               intents=scored.intents, last_turn=scored.last_turn if self.memory else None,
                               points_back=bool(REFERRING_CUE_RE.search(scored.text)),
                               added=scored.added if self.added else None, previous=scored.previous,
                               top_cosine=RelevanceGate.top_cosine(scored.features), gloss=scored.gloss,
                               figurative=scored.figurative)
        # the table reads the knobs only for whether they are the reference ones (companion_table)
        same_table = knobs is self.knobs_ or (knobs.subset_margin >= 2.0) == (self.knobs_.subset_margin >= 2.0)
        table = self.companions_ if same_table else self.companion_table(knobs)
        offer = ordered(build(decision, catalog, knobs=knobs, companions=table), catalog,
                        scored.order if knobs.order_by_cosine else None, text=scored.text,
                        scores={h.name: h.score for h in scored.hits}, failed=scored.failed)
        return Routed(text=scored.text, hits=scored.hits[:MAX_HITS], decision=decision, offer=offer, guard=scored.guard)

    def _route(self, text: str, context: Context) -> Routed:
        return self.decide_scored(self.scored(text, context))


class _Prefixed:
    """An embedder view that prefixes every text (queries only: tool vectors are precomputed)."""

    def __init__(self, embedder: Embedder, prefix: str) -> None:
        self.embedder = embedder
        self.prefix = prefix
        share_identity(self, embedder)  # keys its cached vectors as the embedder's (embed.vector_key)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.embed([self.prefix + t for t in texts])
