"""eris_lab: a research and teaching lab for tool routing for small local LLMs.

One turn, as data (DESIGN.md): text -> guards -> ``Router.hits`` -> ``policy.decide`` ->
``offer.build`` -> ``prompt.slim(offer)`` and ``grammar.compile(offer)`` -> llama.cpp ->
``parse.calls`` -> ``loop.execute`` (``execution.execute``, in the bounded loop ``loop.run_turn``).
"""

from .catalog import Catalog, Tool, load
from .errors import CatalogError, EmbedError, ErisLabError, KnobsError, SchemaError
from .knobs import Knobs
from .offer import Offer, build
from .policy import Decision, Hit, Rule, decide
from .router import Routed, Router
from .strategies import Strategy

__all__ = [
    "Catalog", "Tool", "load", "Knobs", "Hit", "Decision", "Rule", "decide", "Offer", "build",
    "Router", "Routed", "Strategy", "ErisLabError", "CatalogError", "EmbedError", "KnobsError", "SchemaError",
]
__version__ = "0.1.0"
