"""Metrics of one strategy on one suite: from per-query results to the ``eval --json`` record.

Definitions (``expect`` is the query's label kind, see :class:`~.datasets.Query`):

recall
    Over queries that need a tool (``expect`` all/any): the fraction where every gold tool is
    offered (``any``: at least one). A full-roster offer holds every tool, so it counts.
    ``None`` when the suite has no such query (irrelevance suites).
top1
    Over ``expect="all"`` queries: the strategy's best-scored tool (first hit; the first offered
    name when it reports no scores) is a gold tool.
recall_at
    ``{k: fraction}`` for k in (1, 5, 10): every gold tool is among the first k hits (the
    strategy's ranking, independent of how many tools it offers).
name_recall_at
    The same, but a pooled variant ``f~2`` counts for gold ``f`` (pooled BFCL suites keep
    same-named functions with different schemas apart; elsewhere it equals ``recall_at``).
mean_offer, p95_offer
    Offer size over all queries; p95 by numpy's default (linear) percentile.
lock_in
    Over all queries: exactly one tool offered and it is not a gold tool (for ``expect="none"``
    every tool is wrong). The failure a hard grammar cannot recover from.
full_roster_rate, empty_rate
    Over all queries: decision kind ``full_roster``; nothing offered.
relevance_recall, irrelevance_empty_rate
    Beside each other on mixed and irrelevance suites: the fraction of tool-needing queries
    offered anything, and of no-tool queries offered nothing. One is meaningless without the
    other.
offer_tokens, catalog_tokens
    Mean prompt tokens of the offered tool definitions, and of the whole catalogue, per query
    (each tool as compact OpenAI JSON; counted with ``tokenizer``).
per_domain, per_tool, per_tag
    Breakdown by the gold tools' toolkit (domain before ``:``, else dotted prefix), by gold
    tool, and by query tag (``german``, ``history``...); ``(none)`` holds the no-tool queries. ``false_offers``: queries where the tool was
    offered without being gold.
misrouted
    Every query that failed recall, or was offered tools when it needed none: id, query, gold,
    the offer (first 10 names and the size), decision rule and reason, the top 5 scores.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..catalog import VARIANT_MARK, Catalog, base_name
from ..policy import Hit

__all__ = ["QueryResult", "evaluate", "approx_tokens", "ToolTokens", "Metric", "METRICS", "HEADLINE", "DESIGN_KEYS",
           "RECALL_AT", "format_value", "rate", "misrouted_row"]


@dataclass(frozen=True, slots=True)
class Metric:
    """One number of the ``eval`` record: how it is named, which way is better, how it is shown.

    Attributes
    ----------
    name : str
        Its key in the ``eris-lab eval --json`` record.
    better : {"higher", "lower", ""}
        Which direction is an improvement; ``""`` when neither is (``empty_rate`` is right on an
        irrelevance suite and wrong elsewhere).
    fmt : str
        Format spec of a value (``".3f"``); ``None`` always shows as ``-``.
    short : str
        Column heading where space is tight (the benchmark's table).
    """

    name: str
    better: str
    fmt: str
    short: str


#: The one table of the ``eval`` record's numbers, in record order: the CLI's table, the tuning
#: view, the benchmark's table and the nightly report's deltas all read it.
METRICS: tuple[Metric, ...] = (
    Metric("n", "", "d", "n"),
    Metric("recall", "higher", ".3f", "recall"),
    Metric("top1", "higher", ".3f", "top1"),
    Metric("mean_offer", "lower", ".3f", "mean"),
    Metric("p95_offer", "lower", ".3f", "p95"),
    Metric("lock_in", "lower", ".3f", "lock_in"),
    Metric("full_roster_rate", "lower", ".3f", "roster"),
    Metric("empty_rate", "", ".3f", "empty"),
    Metric("relevance_recall", "higher", ".3f", "rel_rec"),
    Metric("irrelevance_empty_rate", "higher", ".3f", "irr_emp"),
    Metric("offer_tokens", "lower", ".0f", "tok_off"),
    Metric("catalog_tokens", "", ".0f", "tok_cat"),
)
_BY_NAME = {m.name: m for m in METRICS}
#: The headline numbers (the tuning view's table): size of the suite, recall, offer size, failures.
HEADLINE = ("n", "recall", "top1", "mean_offer", "p95_offer", "lock_in", "full_roster_rate", "empty_rate")
#: Keys of the ``eris-lab eval --json`` record (DESIGN.md "Command-line contract"), in order.
DESIGN_KEYS = ("suite", "strategy", "n", "recall", "top1", "mean_offer", "p95_offer", "lock_in",
               "full_roster_rate", "empty_rate", "offer_tokens", "catalog_tokens", "misrouted")
RECALL_AT = (1, 5, 10)


def format_value(value: Any, name: str | None = None) -> str:
    """``value`` as the tables show it: ``-`` for None, the metric's format, else 3 decimals for a float."""
    if value is None:
        return "-"
    spec = _BY_NAME[name].fmt if name in _BY_NAME else (".3f" if isinstance(value, float) else "")
    try:
        return format(value, spec)
    except (TypeError, ValueError):
        return str(value)
_TOKEN_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def approx_tokens(text: str) -> int:
    """A cheap prompt-token estimate: word runs plus punctuation marks, each counted as one.

    Notes
    -----
    Not any model's tokenizer: BPE vocabularies split rare long words into several pieces and
    merge some punctuation, so treat the count as an approximation of the same order. Pass a
    real tokenizer (``lambda s: len(tok.encode(s))``) to :func:`evaluate`'s callers for exact counts.
    """
    return len(_TOKEN_RE.findall(text))


class ToolTokens:
    """Tokens of each tool's definition (compact OpenAI JSON), memoised per catalogue and tool."""

    def __init__(self, tokenizer: Callable[[str], int] = approx_tokens) -> None:
        self.tokenizer = tokenizer
        self._memo: dict[tuple[int, str], int] = {}
        self._totals: dict[int, int] = {}

    def of(self, catalog: Catalog, names: Iterable[str]) -> int:
        """Sum of the definition tokens of ``names`` in ``catalog``."""
        total = 0
        for name in names:
            key = (id(catalog), name)
            if key not in self._memo:
                text = json.dumps(catalog.tool(name).to_openai(), separators=(",", ":"), ensure_ascii=False)
                self._memo[key] = self.tokenizer(text)
            total += self._memo[key]
        return total

    def catalog(self, catalog: Catalog) -> int:
        """Tokens of the whole catalogue."""
        key = id(catalog)
        if key not in self._totals:
            self._totals[key] = self.of(catalog, catalog.names)
        return self._totals[key]


@dataclass(frozen=True, kw_only=True, slots=True)
class QueryResult:
    """What one strategy did with one labelled query.

    Attributes
    ----------
    id, query : str
    gold : tuple of str
    expect : {"all", "any", "none"}
    offered : tuple of str
        The offer, in order.
    kind, rule, reason : str
        The decision's kind, rule id and sentence.
    hits : tuple of Hit
        The strategy's ranking (best first, possibly truncated).
    offer_tokens, catalog_tokens : int
    toolkit : str
        Toolkit of the first gold tool (``""`` when gold is empty).
    tags : tuple of str
        The query's tags (``german``, ``history``...), for the per-tag breakdown.
    overlays : tuple of str
        What was added after the rules: the offer's overlays (``companion cd <- mv (schema)``)
        and the decision's added names (``memory cd``).
    """

    id: str
    query: str
    gold: tuple[str, ...]
    expect: str
    offered: tuple[str, ...]
    kind: str = "subset"
    rule: str = ""
    reason: str = ""
    hits: tuple[Hit, ...] = ()
    offer_tokens: int = 0
    catalog_tokens: int = 0
    toolkit: str = ""
    tags: tuple[str, ...] = ()
    overlays: tuple[str, ...] = ()

    # -- per-query verdicts ----------------------------------------------------------------------
    @property
    def needs_tool(self) -> bool:
        return self.expect in ("all", "any")

    @property
    def recalled(self) -> bool:
        """Every gold tool offered (``any``: one of them); False for no-tool queries."""
        offered = set(self.offered)
        if self.expect == "all":
            return bool(self.gold) and all(g in offered for g in self.gold)
        if self.expect == "any":
            return any(g in offered for g in self.gold)
        return False

    @property
    def name_recalled(self) -> bool:
        """:attr:`recalled`, with any pooled schema variant of a gold name counting (``f~2`` for ``f``)."""
        offered = {base_name(n) for n in self.offered}
        gold = [base_name(g) for g in self.gold]
        if self.expect == "all":
            return bool(gold) and all(g in offered for g in gold)
        if self.expect == "any":
            return any(g in offered for g in gold)
        return False

    @property
    def top(self) -> str:
        """The best-scored tool (first hit), else the first offered name, else ``""``."""
        if self.hits:
            return self.hits[0].name
        return self.offered[0] if self.offered else ""

    @property
    def locked_in(self) -> bool:
        return len(self.offered) == 1 and self.offered[0] not in self.gold

    @property
    def correct(self) -> bool:
        """Recalled when a tool is needed; nothing offered when none is."""
        return self.recalled if self.needs_tool else not self.offered

    def recalled_at(self, k: int, *, by_name: bool = False) -> bool:
        """Every gold tool among the first ``k`` hits (``by_name``: any pooled variant of its name)."""
        if by_name:
            ranked = {base_name(h.name) for h in self.hits[:k]}
            return bool(self.gold) and all(base_name(g) in ranked for g in self.gold)
        ranked = {h.name for h in self.hits[:k]}
        return bool(self.gold) and all(g in ranked for g in self.gold)


def rate(flags: Sequence[bool]) -> float | None:
    """The fraction of true flags, rounded to 6 decimals (as every rate of the record); None for none."""
    return round(float(np.mean(flags)), 6) if len(flags) else None


def misrouted_row(r: QueryResult) -> dict[str, Any]:
    """One entry of the record's ``misrouted`` list: id, query, gold, offer, why, rule, reason, top scores."""
    if r.needs_tool:
        why = "locked onto a wrong tool" if r.locked_in else ("nothing offered" if not r.offered else "gold not offered")
    else:
        why = "tools offered when none is needed"
    return {
        "id": r.id,
        "query": r.query,
        "gold": list(r.gold),
        "offered": list(r.offered[:10]),
        "n_offered": len(r.offered),
        "why": why,
        "kind": r.kind,
        "rule": r.rule,
        "reason": r.reason,
        "scores": [{"name": h.name, "score": round(float(h.score), 6)} for h in r.hits[:5]],
    }


def _breakdown(results: Sequence[QueryResult], key: Callable[[QueryResult], Iterable[str]]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[QueryResult]] = {}
    for r in results:
        for k in key(r):
            groups.setdefault(k, []).append(r)
    out = {}
    for k in sorted(groups):
        rs = groups[k]
        needing = [r for r in rs if r.needs_tool]
        out[k] = {
            "n": len(rs),
            "recall": rate([r.recalled for r in needing]),
            "top1": rate([r.top in r.gold for r in needing if r.expect == "all"]),
            "mean_offer": round(float(np.mean([len(r.offered) for r in rs])), 3),
            "lock_in": rate([r.locked_in for r in rs]),
            "empty_rate": rate([not r.offered for r in rs]),
        }
    return out


def evaluate(results: Sequence[QueryResult], *, suite: str = "", strategy: str = "",
             recall_at: Sequence[int] = RECALL_AT) -> dict[str, Any]:
    """Aggregate per-query results into the ``eval --json`` record.

    Parameters
    ----------
    results : sequence of QueryResult
    suite, strategy : str
        Recorded as given.
    recall_at : sequence of int
        The k of ``recall_at`` (from the strategies' rankings).

    Returns
    -------
    dict
        :data:`DESIGN_KEYS` first, then ``recall_at``, ``relevance_recall``,
        ``irrelevance_empty_rate``, ``p50_offer``, ``max_offer``, ``n_needs_tool``, ``n_no_tool``,
        ``per_domain``, ``per_tool``. Rates are fractions in [0, 1] (``None`` when undefined).
    """
    results = list(results)
    needing = [r for r in results if r.needs_tool]
    single = [r for r in needing if r.expect == "all"]
    no_tool = [r for r in results if not r.needs_tool]
    sizes = np.array([len(r.offered) for r in results], dtype=float)
    per_tool: dict[str, dict[str, Any]] = {}
    for r in results:
        for name in set(r.offered) - set(r.gold):
            per_tool.setdefault(name, {"n": 0, "recall": None, "top1": None, "false_offers": 0})["false_offers"] += 1
    for name, stats in _breakdown([r for r in results if r.gold], lambda r: r.gold).items():
        entry = per_tool.setdefault(name, {"false_offers": 0})
        entry.update(n=stats["n"], recall=stats["recall"], top1=stats["top1"])
    record: dict[str, Any] = {
        "suite": suite,
        "strategy": strategy,
        "n": len(results),
        "recall": rate([r.recalled for r in needing]),
        "top1": rate([r.top in r.gold for r in single]),
        "mean_offer": round(float(sizes.mean()), 4) if len(sizes) else None,
        "p95_offer": round(float(np.percentile(sizes, 95)), 4) if len(sizes) else None,
        "lock_in": rate([r.locked_in for r in results]),
        "full_roster_rate": rate([r.kind == "full_roster" for r in results]),
        "empty_rate": rate([not r.offered for r in results]),
        "offer_tokens": round(float(np.mean([r.offer_tokens for r in results])), 2) if results else None,
        "catalog_tokens": round(float(np.mean([r.catalog_tokens for r in results])), 2) if results else None,
        "misrouted": [misrouted_row(r) for r in results if not r.correct],
        # BFCL's pooled catalogue holds several schemas under one name (catalog.VARIANT_MARK)
        **({"name_recall": rate([r.name_recalled for r in needing])}
           if any(VARIANT_MARK in n for r in results for n in (*r.gold, *r.offered)) else {}),
        "recall_at": {str(k): rate([r.recalled_at(k) for r in single]) for k in recall_at},
        "name_recall_at": {str(k): rate([r.recalled_at(k, by_name=True) for r in single]) for k in recall_at},
        "relevance_recall": rate([bool(r.offered) for r in needing]),
        "irrelevance_empty_rate": rate([not r.offered for r in no_tool]),
        "p50_offer": round(float(np.percentile(sizes, 50)), 4) if len(sizes) else None,
        "max_offer": int(sizes.max()) if len(sizes) else None,
        "n_needs_tool": len(needing),
        "n_no_tool": len(no_tool),
        "per_domain": _breakdown(results, lambda r: [r.toolkit or "(none)"]),
        "per_tag": _breakdown(results, lambda r: r.tags),
        "per_tool": dict(sorted(per_tool.items())),
    }
    return record
