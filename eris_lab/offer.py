"""The offer: the ONE list of what is callable this turn.

``build`` takes the policy's decision and applies the overlays in one place, so the slim
prompt (``prompt.slim``) and the GBNF grammar (``grammar.compile``) read the same list and can
never disagree about what is callable.

Overlays, in order:

1. companions: a tool brings the tool it is useless without (``web:fetch`` / ``web:search``
   bring ``web:find``; ``doc:read`` brings ``vault:write``), placed right after it. The table
   is the declared one (``companions.declared``: descriptors' ``companions`` and
   :data:`COMPANIONS`) unless the caller passes another (``companions.from_schemas``, learned
   ones: ``eris_lab.companions``); declared companions follow every offered tool, the other
   sources only the first :data:`COMPANION_DEPTH` (the tools the policy is surest of), so an
   inferred link never fans out over a widened offer. The overlay names the source:
   ``companion cd <- mv (schema)``;
2. cap (``offer_cap``): seats whole domains in rank order and completes each seated domain's
   verbs; it never amputates a domain. A full roster is never capped.

``ordered`` then sorts the built offer by a per-tool key (the router's raw cosines under
background calibration): it changes the order the model reads, never what is callable.
``for_model`` (generation lever ``router-picks``) hands a one-request ranked subset to the model
as its best tool alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Sequence

import numpy as np

from .catalog import Catalog
from .knobs import Knobs
from .policy import Decision, Hit, Kind, Rule, action_order, requested_action

__all__ = ["Offer", "build", "ordered", "for_model", "COMPANIONS", "COMPANION_DEPTH"]

#: Inferred and learned companions follow only this many of the decision's first tools.
COMPANION_DEPTH = 3

#: Tools that bring a companion into the offer (issue #2 overlays).
COMPANIONS: dict[str, tuple[str, ...]] = {
    "web:fetch": ("web:find",),
    "web:search": ("web:find",),
    "doc:read": ("vault:write",),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Offer:
    """The offered tools of one turn.

    Attributes
    ----------
    names : tuple of str
        Offered tool names, in offer order (prompt order and grammar order).
    decision : Decision
        The policy decision the offer was built from.
    overlays : tuple of str
        What the overlays changed, e.g. ``"companion web:find <- web:fetch"``.
    """

    names: tuple[str, ...]
    decision: Decision
    overlays: tuple[str, ...] = ()

    @classmethod
    def given(cls, names: Iterable[str], *, reason: str, rule: Rule = Rule.GIVEN,
              kind: Kind | None = None) -> "Offer":
        """An offer no policy decided: exactly ``names``, in order, duplicates dropped.

        For a flag (``--offer``), a benchmark's fixed roster, a schema-recovery round, the
        meta-tools, or a baseline strategy's top k. No overlay is applied, and the names are not
        checked: call ``Catalog.require`` first.

        Parameters
        ----------
        names : iterable of str
            Empty means nothing is callable.
        reason : str
            Why these tools (shown where a decision's reason is).
        rule : Rule
            ``Rule.GIVEN`` by default; a strategy passes the rule it followed
            (``RANKED_SUBSET`` for a top k).
        kind : {"subset", "cluster", "full_roster", "conversational"}, optional
            Default ``"conversational"`` when ``names`` is empty, else ``"subset"``;
            ``"full_roster"`` for a whole catalogue.
        """
        names = tuple(dict.fromkeys(names))
        kind = kind if kind is not None else ("subset" if names else "conversational")
        return cls(names=names, decision=Decision(rule=rule, kind=kind, names=names, reason=reason))

    @property
    def kind(self) -> str:
        """The decision's kind (``subset``, ``cluster``, ``full_roster``, ``conversational``)."""
        return self.decision.kind

    def __len__(self) -> int:
        return len(self.names)


def build(decision: Decision, catalog: Catalog, *, knobs: Knobs = Knobs(),
          companions: Mapping[str, Sequence[tuple[str, str]]] | None = None) -> Offer:
    """Build the offer from a decision: companions, then cap.

    Parameters
    ----------
    decision : Decision
    catalog : Catalog
    knobs : Knobs
        Reads ``offer_cap`` (0 = uncapped).
    companions : mapping, optional
        ``{tool: ((companion, source), ...)}`` (``eris_lab.companions``); default the declared
        table of ``catalog``. ``{}`` turns the overlay off.

    Returns
    -------
    Offer
        Names unique, every name in ``catalog``.
    """
    if decision.kind == "conversational":
        return Offer(names=(), decision=decision)
    if decision.names is catalog.names:
        # the full roster (policy's fallbacks): unique and known by construction; checking each
        # name again cost half a millisecond per fallback on a 1,000-tool catalogue
        names = list(decision.names)
    else:
        names = [n for n in dict.fromkeys(decision.names) if n in catalog]
    overlays: list[str] = []
    if decision.kind != "full_roster":
        # 1. companions
        if companions is None:
            from .companions import declared

            companions = catalog.derived("companions.declared", declared)
        out: list[str] = []
        chosen, placed = set(names), set()  # membership in sets: a ranked subset may hold hundreds of tools
        for rank, name in enumerate(names):
            if name not in placed:
                out.append(name)
                placed.add(name)
            for companion, source in companions.get(name, ()):
                if source != "declared" and rank >= COMPANION_DEPTH:
                    continue
                if companion in catalog and companion not in chosen and companion not in placed:
                    out.append(companion)
                    placed.add(companion)
                    overlays.append(f"companion {companion} <- {name}"
                                    + (f" ({source})" if source != "declared" else ""))
        names = out
        # 2. cap
        if knobs.offer_cap:
            result, seated = catalog.seat_domains(names, knobs.offer_cap)
            dropped = [n for n in names if n not in result]
            overlays.append(f"cap {knobs.offer_cap}: seated {', '.join(seated)}"
                            + (f"; left out {', '.join(dropped)}" if dropped else ""))
            names = list(result)
    return Offer(names=tuple(names), decision=decision, overlays=tuple(overlays))


def ordered(offer: Offer, catalog: Catalog, key: np.ndarray | None, *, text: str = "",
            scores: Mapping[str, float] | None = None, failed: Sequence[str] = ()) -> Offer:
    """``offer`` with its names sorted by ``key``, highest first; the same names, the same decision.

    With ``text`` (the message), a tool whose name does the CRUD action the message opens with goes
    before the siblings it nearly ties (``policy.action_order``; the decision's reason says so).
    Under ``FAILED_TOOL_RETRY`` the ``failed`` tools go first, whatever the key (DESIGN: the reply
    supplies what the failed call lacked).

    Parameters
    ----------
    offer : Offer
    catalog : Catalog
        The catalogue ``key`` is indexed by (``Catalog.position``).
    key : ndarray or None
        ``(n_tools,) float`` per-tool sort key (``Router.last_order``); None keeps the built order.
    text : str
        The cleaned message; empty leaves the action order out.
    scores : mapping of str to float, optional
        Each tool's cosine, for the action order where ``key`` is None (the offer keeps its order
        otherwise).
    failed : sequence of str
        Recent tool calls that failed, oldest first (``Router.route``'s ``failed``).

    Returns
    -------
    Offer
        Ties keep the built order (the sort is stable).

    Notes
    -----
    Why: under background calibration the per-tool standardised score sizes offers well but ranks
    worse than the raw cosine (live_multiple, bundled MiniLM: the right tool first in 0.838 of the
    generation benchmark's 200 offers by standardised score, 0.904 by raw cosine), and the 270M
    model mostly calls the first-ranked tool (``prompt`` shows its example last).
    """
    if len(offer.names) < 2 or (key is None and not scores):
        return offer
    if key is not None:
        names = sorted(offer.names, key=lambda n: -float(key[catalog.position(n)]))
        scores = {n: float(key[catalog.position(n)]) for n in names}
    else:
        names = list(offer.names)
    names, moved = action_order(names, text, scores)
    decision = offer.decision
    if moved:
        decision = replace(decision, reason=f"{decision.reason}; {', '.join(moved)} first: the message asks to "
                                            f"{requested_action(text)}")
    if decision.rule == Rule.FAILED_TOOL_RETRY:
        names = list(dict.fromkeys([*(n for n in failed if n in names), *names]))
    return Offer(names=tuple(names), decision=decision, overlays=offer.overlays)


def for_model(offer: Offer, *, intents: Sequence[Hit] = (), intent_floor: float = 0.0,
              knobs: Knobs = Knobs()) -> Offer:
    """The offer the model gets: with ``knobs.router_picks``, a ranked subset of one request
    becomes its best tool alone (prompt and grammar alike, as ever).

    Parameters
    ----------
    offer : Offer
        The router's offer (``Routed.offer``).
    intents : sequence of Hit
        The best tool of each request the message joins (``Router.last_intents``; empty for one
        request). Requests whose best tools differ keep the whole offer.
    intent_floor : float
        Intents scored below this cosine are no request (the router's ``threshold``, as
        ``policy.with_intents``).
    knobs : Knobs
        Reads ``router_picks`` (off: ``offer`` unchanged).

    Returns
    -------
    Offer
        ``offer`` itself unless it is a ``RANKED_SUBSET`` of two or more tools that no overlay,
        memory, intent or later rule widened; then its first tool, the decision's reason saying so.

    Notes
    -----
    Why: the bundled 270M model picks worse among the offered tools than the router's ranking. On
    BFCL, condition c, all other levers, the offer's first tool was the right one for 194, 179 and
    176 of 200 cases (multiple, live_multiple, held-out live_multiple) where the model called the
    right one for 188, 164 and 151 (docs/results/generation-final-cosine-order-2026-12-01.json,
    generation-holdout-2026-12-02.json; ``RANKED_SUBSET`` alone: 102 vs 97, 131 vs 116, 141 vs
    118). Unsure widenings keep their width (DESIGN.md: never lock a grammar onto a lone weak
    guess); a larger model that picks better leaves the lever off.
    """
    decision = offer.decision
    if (not knobs.router_picks or decision.rule != Rule.RANKED_SUBSET or len(offer.names) < 2
            or offer.overlays or decision.sources):
        return offer
    best = offer.names[0]
    if any(h.name != best for h in intents if h.score >= intent_floor):
        return offer  # several requests, several tools: each keeps its own
    reason = f"{decision.reason}; the router picks {best} of {len(offer.names)} (knob router_picks)"
    return Offer(names=(best,), decision=Decision(rule=decision.rule, kind=decision.kind, names=(best,),
                                                 reason=reason, sources=decision.sources))
