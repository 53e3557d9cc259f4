"""Routing strategies behind one interface (text + context in, ``Offer`` out; DESIGN.md).

``make(spec, embedder=..., knobs=...)`` builds one from a command-line spec: a name from
:data:`STRATEGIES`, optionally followed by ``:param=value,...`` (values parsed as JSON when
they can be, else kept as strings), e.g. ``dense:k=10`` or ``hybrid:fusion=weighted,alpha=0.5``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..embed import Embedder
from ..errors import ErisLabError
from ..knobs import Knobs
from .base import Context, MemoEmbedder, Strategy, check_strategy
from .bm25 import BM25
from .embedding import DenseTopK, EmbeddingPolicy
from .hybrid import Hybrid
from .keyword import KeywordGroups
from .meta import MetaStrategy
from .toolkit import ToolkitPruning

__all__ = [
    "Strategy", "Context", "MemoEmbedder", "check_strategy",
    "KeywordGroups", "BM25", "DenseTopK", "EmbeddingPolicy", "Hybrid", "ToolkitPruning", "MetaStrategy",
    "STRATEGIES", "DEFAULT_STRATEGY", "knob_overrides", "make", "parse_spec",
]

#: The one strategy registry: names for ``--strategy``, the benchmark, the report and the tuning
#: view's picker -> class and fixed parameters. A policy variant fixes the knobs it changes.
STRATEGIES: dict[str, tuple[type[Strategy], dict[str, Any]]] = {
    "keyword": (KeywordGroups, {}),
    "bm25": (BM25, {}),
    "dense": (DenseTopK, {}),
    "hybrid-rrf": (Hybrid, {"fusion": "rrf"}),
    "hybrid-weighted": (Hybrid, {"fusion": "weighted"}),
    "policy": (EmbeddingPolicy, {}),  # knobs calibrated per catalogue, without labels (issue 18)
    "policy-reference": (EmbeddingPolicy, {"knobs": Knobs()}),  # DESIGN.md's reference knobs
    # the calibrated policy without each conversation aid (issue 15)
    "policy-no-companions": (EmbeddingPolicy, {"companions": ""}),
    "policy-no-memory": (EmbeddingPolicy, {"memory": False}),
    # the calibrated policy without its slot check (issue 18: tools whose required values are missing)
    "policy-no-slots": (EmbeddingPolicy, {"slot_check": "off"}),
    "policy-cluster": (EmbeddingPolicy, {"knobs": Knobs(unsure_fallback="domain_cluster")}),
    "policy-abstain": (EmbeddingPolicy, {"knobs": Knobs(empty_fallback="none")}),
    "toolkit": (ToolkitPruning, {}),
    "meta": (MetaStrategy, {}),
}
DEFAULT_STRATEGY = "policy"


def knob_overrides(name: str) -> dict[str, Any]:
    """The knobs a registered policy variant fixes (its ``Knobs`` minus the defaults); ``{}`` otherwise.

    ``"policy-abstain"`` -> ``{"empty_fallback": "none"}``. ``make`` lays them over given knobs, and
    the tuning view re-decides each variant with them.

    Raises
    ------
    ErisLabError
        ``name`` is not in :data:`STRATEGIES`.
    """
    if name not in STRATEGIES:
        raise ErisLabError(f"unknown strategy {name!r}; expected one of {', '.join(STRATEGIES)}", where="--strategy")
    fixed = STRATEGIES[name][1].get("knobs")
    if fixed is None:
        return {}
    defaults = Knobs()
    return {f.name: getattr(fixed, f.name) for f in dataclasses.fields(Knobs)
            if getattr(fixed, f.name) != getattr(defaults, f.name)}


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"dense:k=10,query_prefix=query: "`` -> ``("dense", {"k": 10, "query_prefix": "query: "})``."""
    name, _, rest = spec.partition(":")
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))) if rest else ():
        key, eq, raw = part.partition("=")
        if not eq or not key.strip():
            raise ErisLabError(f"expected param=value, got {part!r}", where="--strategy")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        params[key.strip()] = value
    return name.strip(), params


def make(spec: str, *, embedder: Embedder | None = None, knobs: Knobs | None = None) -> Strategy:
    """Build an unfitted strategy from a spec (see module docstring).

    ``embedder`` goes to every strategy that embeds; ``knobs`` to the embedding + policy ones
    (with the variant's :func:`knob_overrides` laid over them, e.g. ``empty_fallback="none"`` for
    ``policy-abstain``).

    Raises
    ------
    ErisLabError
        Unknown name or parameter.
    """
    name, params = parse_spec(spec)
    overrides = knob_overrides(name)  # an unknown name fails here
    cls, fixed = STRATEGIES[name]
    kwargs = dict(fixed)
    if knobs is not None and cls is EmbeddingPolicy:
        kwargs["knobs"] = knobs.replace(**overrides)
    if cls.uses_embedder:
        kwargs["embedder"] = embedder
    strategy = cls(**kwargs)
    strategy.set_params(**params)
    strategy.name = name if not params else spec
    return strategy
