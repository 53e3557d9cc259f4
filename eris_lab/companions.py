"""Companions: tools a request needs together, though the user names only one (issue 15).

A companion is added to the offer by the offer overlay (``offer.build``), right after the tool
that brings it, with its source in ``Offer.overlays``. Three sources, each measured on BFCL's
multi-turn conversations (docs/conversations.md):

``declared``
    A descriptor's ``companions = [...]`` (``Tool.companions``) and the reference design's table
    (``offer.COMPANIONS``: ``web:fetch`` brings ``web:find``).
``schema``
    Inferred from the schemas (:func:`from_schemas`): a tool whose required identifier parameter
    (``*_id``, ``*token``, ``*key``) another tool's result schema (``Tool.returns``) supplies,
    e.g. ``cancel_booking(access_token, booking_id)`` brings ``authenticate_travel`` and
    ``book_flight``; and a tool whose parameters are read "from the current directory" brings
    the tool that sets the ``current_working_directory`` (``cd``).
``dataflow``
    Inferred from the schemas too (:func:`from_dataflow`), for values that are not identifiers:
    a required parameter that a lookup of the same family (one that needs no identifier) returns as
    its first result, under the parameter's name or a name the parameter's description uses, e.g. ``place_order(price)`` brings ``get_stock_info``
    (returns ``price``), ``estimate_distance(cityA: "The zipcode of the first city")`` brings
    ``get_zipcode_based_on_city`` (returns ``zipcode``). Generic result fields (``status``,
    ``content``, ...) never link.
``learned``
    Fitted on call sequences of other conversations (:class:`LearnedCompanions`): a logistic
    model over pair features that do not name tools (schema link, description similarity, the
    one tool named in the other's description, an authentication tool, a setter of state), so a
    model fitted on some API classes can be applied to others, never the same ones.

A table maps a tool name to ``((companion, source), ...)``.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .catalog import Catalog, Tool, family_of, name_words

__all__ = ["Table", "default_table", "declared", "from_schemas", "from_dataflow", "SOURCES", "merge", "pair_features", "PAIR_FEATURES", "LearnedCompanions",
           "co_occurrence"]

Table = Mapping[str, tuple[tuple[str, str], ...]]

#: A parameter that carries an identifier another call hands out.
_ID_PARAM = re.compile(r"(?:^|_)(?:id|token|key)$|[a-z]Id$|Token$")
_CURRENT = re.compile(r"\bcurrent\s+(\w+)", re.IGNORECASE)
_AUTH = re.compile(r"\b(?:log\s*in|login|authenticat\w*|sign\s*in)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z]+")
#: Companion sources, in the order a merged table keeps them (``EmbeddingPolicy(companions=...)``).
SOURCES = ("declared", "schema", "dataflow", "learned")
#: Result fields too generic to say where a value comes from (a tool's status, its text).
_GENERIC_FIELDS = frozenset({"status", "result", "results", "message", "messages", "content", "output", "id", "name",
                             "type", "value", "data", "response", "error", "success", "count", "list", "text"})
_STOP = frozenset({"get", "set", "the", "and", "for", "from", "with", "this", "that", "tool", "list", "all", "by",
                   "to", "of", "a", "an", "in", "on", "is", "be", "it", "or", "if", "as", "at", "its"})


def _props(schema: Mapping[str, Any]) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return dict(props) if isinstance(props, Mapping) else {}


def _required(tool: Tool) -> list[str]:
    req = tool.parameters.get("required") if isinstance(tool.parameters, Mapping) else None
    return [r for r in req if isinstance(r, str)] if isinstance(req, list) else []


def declared(catalog: Catalog) -> dict[str, tuple[tuple[str, str], ...]]:
    """Companions declared in descriptors (``Tool.companions``) and ``offer.COMPANIONS``, present tools only."""
    from .offer import COMPANIONS

    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for tool in catalog:
        names = tuple(dict.fromkeys(tool.companions + COMPANIONS.get(tool.name, ())))
        kept = tuple((n, "declared") for n in names if n in catalog and n != tool.name)
        if kept:
            out[tool.name] = kept
    return out


def _schema_links(catalog: Catalog) -> dict[tuple[str, str], str]:
    """``{(tool, companion): why}`` from the schemas (module docstring, ``schema``).

    Indexed by result field, so a catalogue of n tools costs O(n) lookups, not O(n^2) pairs."""
    tools = list(catalog)
    required = {t.name: _required(t) for t in tools}
    # result field -> tools that return it without requiring it, in catalogue order
    returned_by: dict[str, list[str]] = {}
    # noun -> tools that take a parameter and return a "current <noun>" field, in catalogue order
    sets_current: dict[str, list[str]] = {}
    for t in tools:
        results = _props(t.returns)
        for r in results:
            if r not in required[t.name]:
                returned_by.setdefault(r, []).append(t.name)
        if required[t.name]:
            for noun in dict.fromkeys(w for r in results if "current" in (ws := set(name_words(r))) for w in ws):
                sets_current.setdefault(noun, []).append(t.name)
    links: dict[tuple[str, str], str] = {}
    for tool in tools:
        props = _props(tool.parameters)
        for p in required[tool.name]:
            if not _ID_PARAM.search(p):
                continue
            for other in returned_by.get(p, ()):
                if other != tool.name:
                    links.setdefault((tool.name, other), f"{other} returns {p}")
        # "from the current directory": the tool that sets the current <noun> (it takes a parameter)
        nouns = {m.group(1).lower() for spec in props.values() if isinstance(spec, Mapping)
                 for m in _CURRENT.finditer(str(spec.get("description", "")))}
        for noun in nouns:
            for other in sets_current.get(noun, ()):
                if other != tool.name:
                    links.setdefault((tool.name, other), f"{other} sets the current {noun}")
    return links


def _table(links: Iterable[tuple[str, str]], source: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """``{tool: ((companion, source), ...)}`` from ``(tool, companion)`` links, in link order."""
    out: dict[str, list[tuple[str, str]]] = {}
    for tool, other in links:
        out.setdefault(tool, []).append((other, source))
    return {k: tuple(v) for k, v in out.items()}


def from_schemas(catalog: Catalog) -> dict[str, tuple[tuple[str, str], ...]]:
    """Companions inferred from parameter and result schemas (module docstring, ``schema``); cached per catalogue."""
    return catalog.derived("companions.schema", lambda cat: _table(_schema_links(cat), "schema"))


def _dataflow_links(catalog: Catalog) -> dict[tuple[str, str], str]:
    """``{(tool, companion): why}`` for non-identifier values (module docstring, ``dataflow``).

    Producers are indexed by family and result key, so a catalogue of n tools costs O(n) lookups
    (a pair loop took 0.9 s at 800 tools, on every new router with calibrated knobs)."""
    tools = list(catalog)
    position = {t.name: i for i, t in enumerate(tools)}
    required = {t.name: set(_required(t)) for t in tools}
    family = {t.name: family_of(t) for t in tools}
    # a producer is a lookup: it needs no identifier, and the value is its main (first) result
    producers: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (family, result key) -> [(tool, field)]
    for t in tools:
        first = next(iter(_props(t.returns)), "")
        key = "".join(name_words(first))
        if first and key not in _GENERIC_FIELDS and not any(_ID_PARAM.search(r) for r in required[t.name]):
            producers.setdefault((family[t.name], key), []).append((t.name, first))
    links: dict[tuple[str, str], str] = {}
    for tool in tools:
        props = _props(tool.parameters)
        for p in _required(tool):
            if _ID_PARAM.search(p):  # identifiers: the schema source's
                continue
            spec = props.get(p)
            description_words = name_words(str(spec.get("description", ""))) if isinstance(spec, Mapping) else ()
            # the parameter's own name, or a word of its description (a result key of 4+ letters)
            keys = dict.fromkeys(("".join(name_words(p)), *(w for w in description_words if len(w) > 3)))
            found = {other: field for k in keys for other, field in producers.get((family[tool.name], k), ())}
            for other in sorted(found, key=position.__getitem__):
                if other != tool.name and p not in required[other]:
                    links.setdefault((tool.name, other), f"{other} returns {found[other]} for {p}")
    return links


def from_dataflow(catalog: Catalog) -> dict[str, tuple[tuple[str, str], ...]]:
    """Companions that supply a required non-identifier value (module docstring, ``dataflow``); cached per catalogue."""
    return catalog.derived("companions.dataflow", lambda cat: _table(_dataflow_links(cat), "dataflow"))


def merge(*tables: Table) -> dict[str, tuple[tuple[str, str], ...]]:
    """One table from several, first source first; a companion keeps the first source that named it."""
    out: dict[str, dict[str, str]] = {}
    for table in tables:
        for name, pairs in table.items():
            seen = out.setdefault(name, {})
            for companion, source in pairs:
                seen.setdefault(companion, source)
    return {k: tuple(v.items()) for k, v in out.items() if v}


def default_table(catalog: Catalog) -> dict[str, tuple[tuple[str, str], ...]]:
    """The calibrated default: declared companions, then those inferred from schemas and from dataflow (cached per
    catalogue)."""
    return catalog.derived("companions.default",
                           lambda cat: merge(declared(cat), from_schemas(cat), from_dataflow(cat)))


# ---------------------------------------------------------------------------------------------
# Learned from call sequences
# ---------------------------------------------------------------------------------------------

#: Features of a (tool, candidate companion) pair, none of which names a tool.
PAIR_FEATURES = ("schema_link", "cosine", "named_in_description", "companion_authenticates",
                 "companion_sets_state", "same_family")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOP}


def pair_features(catalog: Catalog, vectors: np.ndarray | None = None) -> tuple[list[tuple[str, str]], np.ndarray]:
    """Features (:data:`PAIR_FEATURES`) of every ordered pair of distinct tools of ``catalog``.

    Parameters
    ----------
    catalog : Catalog
    vectors : ndarray, optional
        ``(n_tools, dim)`` L2-normalised routing vectors (cosine feature); zeros without them.

    Returns
    -------
    pairs : list of (tool, companion)
    features : ndarray, ``(len(pairs), len(PAIR_FEATURES)) float``
    """
    links = _schema_links(catalog)
    tools = list(catalog)
    words = [_words(t.description) for t in tools]
    pairs, rows = [], []
    sims = vectors @ vectors.T if vectors is not None and len(vectors) else None
    for i, a in enumerate(tools):
        for j, b in enumerate(tools):
            if i == j:
                continue
            b_words = {w for w in name_words(b.name) if len(w) > 2 and w not in _STOP}
            named = len(b_words & words[i]) / len(b_words) if b_words else 0.0
            rows.append((
                1.0 if (a.name, b.name) in links else 0.0,
                float(sims[i, j]) if sims is not None else 0.0,
                named,
                1.0 if _AUTH.search(" ".join(name_words(b.name))) or _AUTH.search(b.description[:200]) else 0.0,
                1.0 if any("current" in name_words(r) or _ID_PARAM.search(r) for r in _props(b.returns)) else 0.0,
                1.0 if family_of(a) == family_of(b) else 0.0,
            ))
            pairs.append((a.name, b.name))
    return pairs, np.asarray(rows, dtype=float).reshape(len(rows), len(PAIR_FEATURES))


def co_occurrence(turns: Iterable[Sequence[str]], *, min_count: int = 3, min_rate: float = 0.4) -> set[tuple[str, str]]:
    """Pairs ``(a, b)`` where ``b`` is called in at least ``min_rate`` of the turns calling ``a``.

    ``turns``: each turn's called functions (BFCL ground truth); ``a`` must be called in at least
    ``min_count`` turns. The learned model's labels.
    """
    count: dict[str, int] = {}
    both: dict[tuple[str, str], int] = {}
    for turn in turns:
        names = set(turn)
        for a in names:
            count[a] = count.get(a, 0) + 1
            for b in names - {a}:
                both[(a, b)] = both.get((a, b), 0) + 1
    return {(a, b) for (a, b), n in both.items() if count[a] >= min_count and n / count[a] >= min_rate}


class LearnedCompanions:
    """Companions learned from call sequences: logistic regression over :data:`PAIR_FEATURES`.

    Fit on the pairs of some catalogues with labels from their conversations
    (:func:`co_occurrence`); applied to catalogues of other API classes. A pair is a companion
    when the model's probability reaches ``cut``; a tool keeps at most ``per_tool`` companions.

    Parameters
    ----------
    cut : float
        Probability from which a pair is a companion (default 0.5).
    per_tool : int
        Most companions per tool (default 2), best first.
    """

    def __init__(self, *, cut: float = 0.5, per_tool: int = 2) -> None:
        self.cut = cut
        self.per_tool = per_tool
        self.weights_: tuple[float, ...] | None = None

    def fit(self, features: np.ndarray, labels: np.ndarray) -> "LearnedCompanions":
        """Fit on ``features`` ``(n_pairs, n_features)`` and 0/1 ``labels`` ``(n_pairs,)``; returns self.

        Raises
        ------
        ValueError
            Only one class among the labels.
        """
        from sklearn.linear_model import LogisticRegression

        labels = np.asarray(labels, dtype=int)
        if len(set(labels.tolist())) < 2:
            raise ValueError("learned companions need both companion and non-companion pairs to fit")
        model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=1000).fit(features, labels)
        self.weights_ = (float(model.intercept_[0]), *map(float, model.coef_[0]))
        return self

    def probability(self, features: np.ndarray) -> np.ndarray:
        """P(companion) of each pair, ``(n_pairs,)``."""
        if self.weights_ is None:
            raise ValueError("LearnedCompanions is not fitted; call fit first")
        w = np.asarray(self.weights_, dtype=float)
        return 1.0 / (1.0 + np.exp(-(w[0] + features @ w[1:])))

    def table(self, catalog: Catalog, vectors: np.ndarray | None = None) -> dict[str, tuple[tuple[str, str], ...]]:
        """The companions of ``catalog``'s tools: ``{tool: ((companion, "learned"), ...)}``."""
        pairs, features = pair_features(catalog, vectors)
        if not pairs:
            return {}
        p = self.probability(features)
        out: dict[str, list[tuple[float, str]]] = {}
        family = PAIR_FEATURES.index("same_family")
        for (a, b), prob, row in zip(pairs, p, features):
            if prob >= self.cut and row[family] > 0:  # a companion works on the same API as its tool
                out.setdefault(a, []).append((float(prob), b))
        return {a: tuple((b, "learned") for _, b in sorted(v, reverse=True)[: self.per_tool]) for a, v in out.items()}
