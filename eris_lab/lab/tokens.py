"""Token by token under the grammar: what the model ranked highest, what the grammar masked, what was chosen.

Notebook 05's teaching view (issue 17, item 9). For one routed message the model decodes greedily
under the offer's grammar, one token at a time; each step records the model's ``top_k`` tokens
(probabilities before the mask), which of them the grammar masked (llguidance's token mask,
``grammar.guidance``, the engine ``generate`` uses), and the token chosen (the best allowed one).
A step is one of:

``overridden``  the model's top token was masked: the grammar chose against the model;
``forced``      the grammar allows one token only, the model's top one: nothing to choose;
``model``       the model's top token was allowed and so was something else: the model chose,
                and a wrong value here (``"Portland"`` for ``"Portland, OR"``) is the model's.

The walk reads a small protocol, so tests drive it with a fake model: ``logits()`` (shape
``(n_vocab,)``), ``advance(token)``, ``piece(token)``, ``eos`` (:class:`eris_lab.llm.runner.Stepper`),
and a mask with ``allowed() -> bool (n_vocab,)`` and ``consume(token)`` (:class:`GrammarMask`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

__all__ = ["Candidate", "Step", "GrammarMask", "walk", "rows", "summary", "shown", "routed", "KINDS", "TOP_K", "STEPS"]

#: Tokens of the model's ranking shown per step (few: the view is read by a class).
TOP_K = 5
#: Steps walked by default (the report renders them: a few seconds with the bundled Gemma).
STEPS = 24
#: Step kinds (module docstring).
KINDS = ("forced", "overridden", "model")


@dataclass(frozen=True, kw_only=True, slots=True)
class Candidate:
    """One token of the model's ranking at one step.

    Attributes
    ----------
    token : int
    text : str
        The token's text.
    probability : float
        Softmax of the model's logits over the whole vocabulary, before the mask, in [0, 1].
    allowed : bool
        The grammar allows it here.
    """

    token: int
    text: str
    probability: float
    allowed: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class Step:
    """One decoding step.

    Attributes
    ----------
    index : int
        0 for the first generated token.
    ranked : tuple of Candidate
        The model's ``top_k`` tokens, best first.
    chosen : Candidate
        The best token the grammar allows (it may lie outside ``ranked``).
    n_allowed : int
        Tokens of the vocabulary the grammar allows here.
    kind : {"forced", "overridden", "model"}
    before : str
        The text generated before this step.
    """

    index: int
    ranked: tuple[Candidate, ...]
    chosen: Candidate
    n_allowed: int
    kind: str
    before: str


class GrammarMask:
    """llguidance's mask of a GBNF grammar over a model's vocabulary (``grammar.guidance``).

    Parameters
    ----------
    gbnf : str
    guidance : grammar.guidance.Guidance, optional
        Over the model's vocabulary (``LlamaRunner.guidance()``); default the bundled Gemma's.

    Raises
    ------
    OracleError, SchemaError
        llguidance is missing or cannot read the grammar.
    """

    def __init__(self, gbnf: str, *, guidance: Any = None) -> None:
        from ..grammar.guidance import guidance as shared

        self._guidance = guidance if guidance is not None else shared()
        self._matcher = self._guidance.matcher(gbnf)

    def allowed(self) -> np.ndarray:
        """Shape ``(n_vocab,)`` bool: the tokens allowed next."""
        return self._guidance.allowed(self._matcher)

    def consume(self, token: int) -> None:
        self._matcher.consume_token(int(token))

    @property
    def done(self) -> bool:
        """The grammar has ended (nothing but the end of generation is allowed)."""
        return bool(self._matcher.is_stopped())


def _softmax(logits: np.ndarray) -> np.ndarray:
    finite = np.where(np.isfinite(logits), logits, -np.inf)
    shifted = np.exp(finite - finite.max())
    return shifted / shifted.sum()


def walk(model: Any, mask: Any, *, steps: int = STEPS, top_k: int = TOP_K) -> tuple[Step, ...]:
    """Decode greedily under ``mask`` for up to ``steps`` tokens, recording each choice.

    Parameters
    ----------
    model : Stepper-like
        ``logits()``, ``advance(token)``, ``piece(token)``, ``eos`` (module docstring).
    mask : GrammarMask-like
        ``allowed()``, ``consume(token)``.
    steps : int
        Most tokens to decode; the walk stops earlier at an end-of-generation token.
    top_k : int
        Tokens of the model's ranking kept per step.

    Returns
    -------
    tuple of Step
        In order. The chosen tokens are those ``generate`` produces greedily under the same
        grammar (argmax of the masked logits).

    Raises
    ------
    ValueError
        ``steps`` or ``top_k`` below 1, or a step where the grammar allows no token.
    """
    if steps < 1 or top_k < 1:
        raise ValueError(f"expected steps and top_k >= 1, got {steps!r} and {top_k!r}")
    out: list[Step] = []
    text = ""
    eos = set(getattr(model, "eos", ()))
    for index in range(steps):
        logits = np.asarray(model.logits(), dtype=np.float64)
        allowed = np.asarray(mask.allowed(), dtype=bool)[: len(logits)]
        n_allowed = int(allowed.sum())
        if n_allowed == 0:
            raise ValueError(f"the grammar allows no token at step {index}")
        probability = _softmax(logits)
        k = min(top_k, len(logits))
        top = np.argpartition(-logits, k - 1)[:k]
        top = top[np.argsort(-logits[top], kind="stable")]
        masked = np.where(allowed, logits, -np.inf)
        chosen_id = int(np.argmax(masked))

        def candidate(token: int) -> Candidate:
            return Candidate(token=int(token), text=model.piece(int(token)), probability=float(probability[token]),
                             allowed=bool(allowed[token]))

        ranked = tuple(candidate(t) for t in top)
        kind = "overridden" if not allowed[top[0]] else ("forced" if n_allowed == 1 else "model")
        chosen = candidate(chosen_id)
        out.append(Step(index=index, ranked=ranked, chosen=chosen, n_allowed=n_allowed, kind=kind, before=text))
        if chosen_id in eos:
            break
        mask.consume(chosen_id)
        model.advance(chosen_id)
        text += chosen.text
    return tuple(out)


def shown(text: str) -> str:
    """A token's text as a table shows it: escapes visible (``\\n``), ``(empty)`` for none."""
    return repr(text)[1:-1] or "(empty)"


def rows(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """One table row per step: ``step``, ``kind``, ``chosen``, ``p_chosen``, ``model ranked``
    (each top token with its probability, a masked one marked ``✗``), ``allowed`` (tokens the
    grammar allows), ``text so far`` (its last 40 characters)."""
    out = []
    for s in steps:
        ranked = "  ".join(f"{'' if c.allowed else '✗'}{shown(c.text)} {c.probability:.2f}" for c in s.ranked)
        out.append({"step": s.index, "kind": s.kind, "chosen": shown(s.chosen.text),
                    "p_chosen": round(s.chosen.probability, 3), "model ranked (✗ masked)": ranked,
                    "allowed": s.n_allowed, "text so far": shown(s.before[-40:])})
    return out


def summary(steps: Sequence[Step]) -> dict[str, Any]:
    """Counts per kind, the generated text, and the steps where the grammar overrode the model."""
    return {"steps": len(steps), **{k: sum(s.kind == k for s in steps) for k in KINDS},
            "text": "".join(s.chosen.text for s in steps),
            "overridden_at": [s.index for s in steps if s.kind == "overridden"]}


def routed(runner: Any, message: str, *, catalog: Any = None, knobs: Any = None, steps: int = STEPS,
           top_k: int = TOP_K) -> tuple[Any, tuple[Step, ...]]:
    """Route ``message``, prompt the model as ``generate``'s first round does, and :func:`walk` under
    the offer's grammar.

    Parameters
    ----------
    runner : llm.LlamaRunner
    message : str
    catalog : Catalog, optional
        Default the demo catalogue (``descriptors/``).
    knobs : Knobs, optional
        The grammar's and prompt's knobs (``knobs.with_levers``); default the router's. Routing
        uses the catalogue's calibrated knobs, as ``generate``.

    Returns
    -------
    (Offer, tuple of Step)
    """
    from .. import prompt
    from ..catalog import load
    from ..grammar import compile as compile_grammar
    from ..llm.generation import declared_tools
    from ..loop import SYSTEM
    from ..router import Router

    catalog = catalog if catalog is not None else load(None)
    router = Router.with_calibrated_knobs(catalog)
    knobs = knobs if knobs is not None else router.knobs
    offer = router.route(message).offer
    grammar = compile_grammar(offer, catalog, knobs=knobs)
    messages = [{"role": "system", "content": SYSTEM + "\n\n" + prompt.slim(offer, catalog, knobs=knobs)},
                {"role": "user", "content": message}]
    mask = GrammarMask(grammar.text, guidance=runner.guidance())
    with runner.stepper(messages, **declared_tools(runner, [catalog.tool(n) for n in offer.names])) as model:
        return offer, walk(model, mask, steps=steps, top_k=top_k)
