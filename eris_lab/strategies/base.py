"""The one interface every routing strategy implements: text + context in, ``Offer`` out.

A strategy is built in scikit-learn style: ``__init__`` stores its parameters unchanged,
``fit(catalog)`` indexes one catalogue and returns ``self``, then ``offer(text, context)``
returns the :class:`~eris_lab.offer.Offer` and ``route(text, context)`` the whole
:class:`~eris_lab.router.Routed` record (scores and the rule that decided), which the
evaluation harness reads. Re-fitting on another catalogue replaces the first; BFCL per-case
catalogues are cheap because tool vectors are memoised by text (:class:`MemoEmbedder`).

``check_strategy`` is the contract test, modelled on scikit-learn's ``check_estimator``.
"""

from __future__ import annotations

import inspect
import math
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..catalog import Catalog, base_name, enrich_for_routing, name_words
from ..embed import Embedder, VectorCache, default_embedder, normalize_rows, share_identity
from ..errors import ErisLabError, NotFittedError
from ..offer import Offer
from ..policy import Hit, Rule
from ..router import Routed

__all__ = [
    "Context",
    "Strategy",
    "MemoEmbedder",
    "check_strategy",
    "tool_document",
    "subset_offer",
    "latest_messages",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class Context:
    """What a strategy may know besides the message.

    Attributes
    ----------
    history : tuple of mapping
        Earlier turns, oldest first: ``{"role", "content"}`` or ``{"role": "tool_used", "name"[, "status"]}``.
    recent : tuple of str
        Recent successful tools of the session, oldest first (dialog memory).
    failed : tuple of str
        Recent tool calls that failed (the reply may supply what they lacked); a ``tool_used``
        turn of ``history`` with a failure ``status`` counts too (``router.dialog_tools``).
    """

    history: tuple[Mapping[str, Any], ...] = ()
    recent: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()


def latest_messages(text: str, context: Context, n: int = 4) -> list[str]:
    """The last ``n`` messages with text (history ``content`` then ``text``), oldest first."""
    earlier = [h["content"] for h in context.history if isinstance(h.get("content"), str) and h.get("content")]
    return (earlier + [text])[-n:]


def tool_document(catalog: Catalog, name: str) -> str:
    """The text lexical strategies index for one tool: name words, routing text, keywords."""
    tool = catalog.tool(name)
    return " ".join([" ".join(name_words(base_name(name))), enrich_for_routing(tool), " ".join(tool.keywords)])


def subset_offer(catalog: Catalog, hits: Sequence[Hit], *, rule: Rule = Rule.RANKED_SUBSET, reason: str = "",
                 names: Sequence[str] | None = None) -> Offer:
    """An ``Offer`` of ``names`` (default: the hits' names, in order); empty -> nothing offered."""
    chosen = tuple(dict.fromkeys(names if names is not None else (h.name for h in hits)))
    chosen = tuple(n for n in chosen if n in catalog)
    if not chosen:
        return Offer.given((), rule=Rule.EMPTY_AFTER_POLICY, reason=reason or "nothing matched: offering nothing")
    if len(chosen) == len(catalog) and rule == Rule.UNSURE_FULL_ROSTER:
        return Offer.given(catalog.names, rule=rule, kind="full_roster", reason=reason)
    return Offer.given(chosen, rule=rule, reason=reason)


class MemoEmbedder:
    """An embedder that remembers every vector it made, by text, in memory (and optionally on disk).

    Wrap the real embedder once and share it between strategies and per-case fits: each distinct
    text is embedded once per process. ``prime(texts)`` embeds a batch up front (one model call,
    one disk round trip through :class:`~eris_lab.embed.VectorCache` when ``disk`` is true).

    Parameters
    ----------
    embedder : Embedder
    disk : bool
        Also persist through ``VectorCache`` (default True).
    """

    def __init__(self, embedder: Embedder, *, disk: bool = True) -> None:
        self.embedder = embedder
        share_identity(self, embedder)  # keys its cached vectors as the embedder's (embed.vector_key)
        self.disk = disk
        self._memo: dict[str, np.ndarray] = {}
        self._store = VectorCache(embedder) if disk else None

    def prime(self, texts: Sequence[str]) -> None:
        """Embed every text not yet known, in one batch."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if not missing:
            return
        vectors = self._store.embed(missing) if self._store is not None else self.embedder.embed(missing)
        vectors = normalize_rows(vectors)
        for text, vector in zip(missing, vectors):
            self._memo[text] = vector

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim) float32``, rows L2-normalised; only unknown texts reach the model."""
        texts = list(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            vectors = normalize_rows(self.embedder.embed(missing))
            for text, vector in zip(missing, vectors):
                self._memo[text] = vector
        if not texts:
            dim = next(iter(self._memo.values())).shape[0] if self._memo else 0
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts]).astype(np.float32, copy=False)


def _check_type(value: Any, kind: str, where: str) -> None:
    """Refuse ``value`` unless it is of the simple ``kind`` (``int``/``float``/``str``/``bool``; other kinds pass)."""
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ErisLabError(f"expected a number, got {value!r}", where=where)
    elif kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ErisLabError(f"expected an integer, got {value!r}", where=where)
    elif kind == "str":
        if not isinstance(value, str):
            raise ErisLabError(f"expected a string, got {value!r}", where=where)
    elif kind == "bool":
        if not isinstance(value, bool):
            raise ErisLabError(f"expected true or false, got {value!r}", where=where)


class Strategy:
    """Base of every strategy: parameters in ``__init__``, ``fit(catalog)``, then ``route``/``offer``.

    Subclasses set ``name`` and implement ``_fit(catalog)`` and ``_route(text, context) -> Routed``.
    Parameters are read from the ``__init__`` signature (``get_params``), as scikit-learn does.
    """

    name = "strategy"
    uses_embedder = False

    # -- parameters (scikit-learn's BaseEstimator, minus nesting) ---------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind in kinds]

    def get_params(self) -> dict[str, Any]:
        """The constructor parameters, as stored."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> "Strategy":
        """Change parameters; unknown names are an error. Returns self (re-``fit`` to apply).

        Raises
        ------
        ErisLabError
            An unknown name, or a value :meth:`check_params` refuses (``BM25.min_score: expected
            a number, got 'abc'``); the strategy is left unchanged then.
        """
        names = self._param_names()
        for key in params:
            if key not in names:
                raise ErisLabError(f"unknown parameter {key!r}; expected one of {', '.join(names)}",
                                   where=type(self).__name__)
        old = self.get_params()
        for key, value in params.items():
            setattr(self, key, value)
        try:
            self.check_params()
        except ErisLabError:
            for key, value in old.items():
                setattr(self, key, value)
            raise
        return self

    def check_params(self) -> "Strategy":
        """Refuse parameters of the wrong type or impossible value, naming ``Class.param``; returns self.

        Types come from the ``__init__`` annotations (``int``, ``float``, ``str``, ``bool``, each
        optionally ``| None``): a ``float`` must be a finite number (``nan`` and ``inf`` are
        refused, a bool is not a number), an ``int`` an integer. Ranges are each strategy's
        :meth:`_check_ranges`. Called by :meth:`set_params` and :meth:`fit`, so a bad value fails
        before any work (scikit-learn validates in ``fit``; we also do at ``set_params`` so that a
        command line fails before it loads a suite).

        Raises
        ------
        ErisLabError
            ``where`` is ``Class.param``.
        """
        sig = inspect.signature(type(self).__init__)
        owner = type(self).__name__
        for name in self._param_names():
            annotation = sig.parameters[name].annotation
            if not isinstance(annotation, str):
                annotation = getattr(annotation, "__name__", "")
            parts = [a.strip() for a in annotation.split("|")]
            kind = parts[0] if len(parts) == 1 or (len(parts) == 2 and parts[1] == "None") else ""
            value = getattr(self, name)
            if value is None and "None" in parts[1:]:
                continue
            _check_type(value, kind, f"{owner}.{name}")
        self._check_ranges()
        return self

    def _check_ranges(self) -> None:
        """Hook: refuse values of the right type that cannot work (``Hybrid.rrf_k < 0``)."""

    def clone(self) -> "Strategy":
        """An unfitted copy with the same parameters (the embedder object is shared)."""
        return type(self)(**self.get_params())

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if k != "embedder")
        return f"{type(self).__name__}({shown})"

    # -- the interface ------------------------------------------------------------------------
    def fit(self, catalog: Catalog) -> "Strategy":
        """Index ``catalog`` (replacing any earlier fit) and return self."""
        if not isinstance(catalog, Catalog) or len(catalog) == 0:
            raise ErisLabError("expected a non-empty Catalog", where=f"{type(self).__name__}.fit")
        self.check_params()
        self.catalog_ = catalog
        self._fit(catalog)
        return self

    def route(self, text: str, context: Context | None = None) -> Routed:
        """Route one message: scores, decision and offer (see :class:`~eris_lab.router.Routed`)."""
        if not hasattr(self, "catalog_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(catalog) first",
                                 where=type(self).__name__)
        start = time.perf_counter()
        routed = self._route(text if isinstance(text, str) else "", context or Context())
        if "total" not in routed.timings_ms:
            timings = dict(routed.timings_ms)
            timings["total"] = (time.perf_counter() - start) * 1000
            object.__setattr__(routed, "timings_ms", timings)
        return routed

    def offer(self, text: str, context: Context | None = None) -> Offer:
        """The offered tools for one message."""
        return self.route(text, context).offer

    # -- hooks ----------------------------------------------------------------------------------
    def _fit(self, catalog: Catalog) -> None:
        raise NotImplementedError

    def _route(self, text: str, context: Context) -> Routed:
        raise NotImplementedError

    def _embedder(self) -> Embedder:
        embedder = getattr(self, "embedder", None)
        if embedder is None:
            embedder = self.__dict__.setdefault("_default_embedder", default_embedder())
        return embedder


# ---------------------------------------------------------------------------------------------
# check_strategy
# ---------------------------------------------------------------------------------------------


def check_strategy(strategy: Strategy, catalog: Catalog, texts: Sequence[str] = (), *, other: Catalog | None = None) -> None:
    """Check that ``strategy`` honours the interface; raise ``AssertionError`` naming the broken rule.

    Checks: parameters round-trip (``get_params`` / ``clone``); routing before ``fit`` raises
    :class:`NotFittedError`; ``fit`` returns self; every offer is an ``Offer`` of unique names
    from the catalogue, equal to ``route(...).offer``; a full roster holds every tool; hits are
    score-descending and name catalogue tools; routing is deterministic; empty, long, odd and
    historied inputs never raise; a re-fit on ``other`` offers only ``other``'s tools.
    """
    label = type(strategy).__name__
    params = strategy.get_params()
    fresh = strategy.clone()
    if fresh.get_params().keys() != params.keys():
        raise AssertionError(f"{label}: clone() changed the parameter names")
    for key, value in params.items():
        if fresh.get_params()[key] is not value and fresh.get_params()[key] != value:
            raise AssertionError(f"{label}: parameter {key!r} is not stored unchanged")
    try:
        fresh.offer("hello")
    except NotFittedError:
        pass
    else:
        raise AssertionError(f"{label}: routing before fit() must raise NotFittedError")
    if fresh.fit(catalog) is not fresh:
        raise AssertionError(f"{label}: fit() must return self")
    probes = list(texts) + [
        "", "   ", "hi", "thanks!", "x" * 5000, "Wie wird das Wetter morgen in Berlin?",
        "please do the thing with the stuff", "https://example.org/page", "ünïcödé ✓ \u200b tab\tline\nbreak",
    ]
    context = Context(history=({"role": "user", "content": probes[0] if texts else "check my mail"},
                               {"role": "tool_used", "name": catalog.names[0]}), recent=(catalog.names[0],))
    for text in probes:
        for ctx in (None, context):
            routed = fresh.route(text, ctx)
            if not isinstance(routed, Routed) or not isinstance(routed.offer, Offer):
                raise AssertionError(f"{label}: route() must return a Routed holding an Offer")
            offer = fresh.offer(text, ctx)
            if offer.names != routed.offer.names:
                raise AssertionError(f"{label}: offer() and route().offer differ (not deterministic?) for {text[:40]!r}")
            names = offer.names
            if len(set(names)) != len(names):
                raise AssertionError(f"{label}: duplicate names in the offer for {text[:40]!r}")
            unknown = [n for n in names if n not in catalog]
            if unknown:
                raise AssertionError(f"{label}: offered {unknown[0]!r}, which is not in the catalogue")
            if offer.kind == "full_roster" and set(names) != set(catalog.names):
                raise AssertionError(f"{label}: a full_roster offer must hold every tool")
            if offer.kind == "conversational" and names:
                raise AssertionError(f"{label}: a conversational decision must offer nothing")
            if not isinstance(offer.decision.rule, Rule):
                raise AssertionError(f"{label}: decision.rule must be a Rule")
            scores = [h.score for h in routed.hits]
            if any(a < b for a, b in zip(scores, scores[1:])):
                raise AssertionError(f"{label}: hits must be sorted by score, descending")
            if any(h.name not in catalog for h in routed.hits):
                raise AssertionError(f"{label}: a hit names a tool outside the catalogue")
    if other is not None:
        fresh.fit(other)
        for text in probes:
            bad = [n for n in fresh.offer(text).names if n not in other]
            if bad:
                raise AssertionError(f"{label}: after a re-fit it still offers {bad[0]!r} from the old catalogue")
