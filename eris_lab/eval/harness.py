"""Run one strategy over one suite and collect :class:`~.metrics.QueryResult` records.

Embedding is batched up front: every distinct tool text of the suite and every query text is
embedded once through a shared :class:`~eris_lab.strategies.MemoEmbedder` (``prime``); the
per-query loop then only looks vectors up. BFCL per-case suites re-fit the strategy on each
case's few candidates, which is cheap for that reason.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

from ..catalog import routing_phrases, toolkit_of
from ..embed import Embedder, default_embedder
from ..guard import clean_text
from ..strategies import Context, MemoEmbedder, Strategy, make
from .datasets import Query, Suite
from .metrics import QueryResult, ToolTokens, approx_tokens, evaluate

__all__ = ["run", "run_eval", "prime", "shared_embedder", "result_of"]

PROGRESS_MIN = 50  # show a progress bar from this many queries on


def shared_embedder(embedder: Embedder | None = None) -> MemoEmbedder:
    """Wrap ``embedder`` (default the bundled MiniLM) once, so every text is embedded once."""
    if isinstance(embedder, MemoEmbedder):
        return embedder
    return MemoEmbedder(embedder if embedder is not None else default_embedder())


def prime(embedder: MemoEmbedder, suite: Suite, query_prefixes: Sequence[str] = ("",)) -> None:
    """Embed every tool text and query text of ``suite`` in batches (before the per-query loop)."""
    catalogs = {id(c): c for c in ([suite.catalog] if suite.catalog is not None else [q.catalog for q in suite.queries])
                if c is not None}
    embedder.prime([p for c in catalogs.values() for t in c for p in routing_phrases(t)])
    embedder.prime([p + clean_text(q.query, 4000) for q in suite.queries for p in query_prefixes])


def run(strategy: Strategy, suite: Suite, *, tokenizer: Callable[[str], int] = approx_tokens,
        progress: bool = True) -> list[QueryResult]:
    """Route every query of ``suite`` with ``strategy``.

    The strategy is fitted on the suite's catalogue once, or on each query's own catalogue; a
    case whose own catalogue is empty is recorded as offering nothing without routing.
    The caller primes a shared embedder (:func:`prime`) for speed; without it results are the same.
    """
    tokens = ToolTokens(tokenizer)
    results = []
    iterator: Any = suite.queries
    if progress and len(suite.queries) >= PROGRESS_MIN:
        from tqdm import tqdm

        iterator = tqdm(suite.queries, desc=f"{strategy.name} on {suite.name}", file=sys.stderr, leave=False)
    fitted = None
    for q in iterator:
        catalog = suite.catalog_of(q)
        if len(catalog) == 0:  # a BFCL case without candidates (4 in live_irrelevance): nothing to offer
            results.append(QueryResult(id=q.id, query=q.query, gold=q.gold, expect=q.expect, offered=(),
                                       kind="conversational", rule="EMPTY_AFTER_POLICY",
                                       reason="the case has no candidate functions", tags=q.tags))
            continue
        if fitted is not catalog:
            strategy.fit(catalog)
            fitted = catalog
        routed = strategy.route(q.query, Context(history=q.history))
        offer = routed.offer
        results.append(result_of(q, routed, offer_tokens=tokens.of(catalog, offer.names),
                                 catalog_tokens=tokens.catalog(catalog),
                                 toolkit=toolkit_of(q.gold[0]) if q.gold and q.expect == "all" else ""))
    return results


def result_of(query: Query, routed: Any, **extra: Any) -> QueryResult:
    """The :class:`QueryResult` of one routed labelled query: what was offered, by which rule, the
    hits, and the overlays and post-rule additions (``Decision.sources``); ``extra`` sets further
    fields (token counts, toolkit)."""
    offer = routed.offer
    return QueryResult(id=query.id, query=query.query, gold=query.gold, expect=query.expect, offered=offer.names,
                       kind=offer.kind, rule=str(offer.decision.rule), reason=offer.decision.reason, hits=routed.hits,
                       tags=query.tags,
                       overlays=offer.overlays + tuple(f"{source} {name}" for name, source in offer.decision.sources),
                       **extra)


def run_eval(suite: Suite, spec: str, *, embedder: Embedder | None = None, knobs=None,
             tokenizer: Callable[[str], int] = approx_tokens, progress: bool = True) -> dict[str, Any]:
    """Build the strategy ``spec``, prime the embedder, run and evaluate: the ``eval --json`` record."""
    memo = shared_embedder(embedder)
    strategy = make(spec, embedder=memo, knobs=knobs)
    if strategy.uses_embedder:
        prime(memo, suite, (getattr(strategy, "query_prefix", ""),))
    results = run(strategy, suite, tokenizer=tokenizer, progress=progress)
    record = evaluate(results, suite=suite.name, strategy=strategy.name)
    record["catalog"] = suite.catalog.source if suite.catalog is not None else "per-case candidates"
    record["embedding_model"] = memo.model_id if strategy.uses_embedder else None
    record["notes"] = suite.notes
    return record
