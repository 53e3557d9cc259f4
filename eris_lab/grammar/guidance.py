"""A second engine for the same GBNF: llguidance (``gbnf_to_lark`` then ``LLMatcher``).

llama.cpp's grammar sampler is the reference (``oracle.py``) and it is slow on a 262k-token
vocabulary; llguidance computes the same token mask much faster. This module feeds it the SAME
GBNF text, over the same vocabulary (llama.cpp's, through ``lltokenizer_from_vocab``), and offers:

* :meth:`Guidance.accepts`: a verdict on a whole text, to be compared with the oracle's
  (tests assert they agree on every test string);
* :meth:`Guidance.logits_processor`: a llama-cpp-python logits processor that masks disallowed
  tokens, for constrained generation at close to free speed.
"""

from __future__ import annotations

import functools
from typing import Any

from ..errors import OracleError, SchemaError
from .oracle import Oracle, oracle

__all__ = ["Guidance", "guidance", "constraint"]


class Guidance:
    """llguidance over llama.cpp's vocabulary.

    Parameters
    ----------
    judge : Oracle, optional
        Supplies the vocabulary and the tokenisation of candidate texts (default: the shared one).
    vocab : llama_vocab pointer, optional
        Use this vocabulary instead (``llama_model_get_vocab`` of a loaded model), for generation
        with that model; :meth:`accepts` then needs ``judge`` too.

    Raises
    ------
    OracleError
        llguidance is not installed.
    """

    def __init__(self, judge: Oracle | None = None, *, vocab: Any = None) -> None:
        try:
            import llguidance
            import llguidance.llamacpp
            import llguidance.numpy  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise OracleError(f"llguidance is needed for the second engine ({exc}); "
                              "install it with: pip install 'eris_lab[llm]'", where="grammar engine") from None
        self._llg = llguidance
        if vocab is not None:  # a runner's own model: its vocabulary, not the bundled one
            self.oracle = judge
            self.tokenizer = llguidance.llamacpp.lltokenizer_from_vocab(vocab)
            return
        self.oracle = judge or oracle()
        self.tokenizer = llguidance.llamacpp.lltokenizer_from_vocab(self.oracle.vocab)

    def matcher(self, gbnf: str):
        """An ``LLMatcher`` for ``gbnf``.

        Raises
        ------
        SchemaError
            llguidance cannot convert or compile the grammar (its message).
        """
        from llguidance.gbnf_to_lark import gbnf_to_lark

        try:
            lark = gbnf_to_lark(gbnf)
        except Exception as exc:
            raise SchemaError(f"llguidance cannot read the grammar: {exc}", where="grammar") from None
        grammar = self._llg.LLMatcher.grammar_from_lark(lark)
        matcher = self._llg.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise SchemaError(f"llguidance rejected the grammar: {matcher.get_error()}", where="grammar")
        return matcher

    def accepts(self, gbnf: str, text: str) -> bool:
        """Whether llguidance lets a model generate exactly ``text`` and stop (same contract as
        :meth:`Oracle.accepts`; same tokenisation)."""
        matcher = self.matcher(gbnf)
        for token in self.oracle.tokenize(text):
            if not matcher.consume_token(token) or matcher.is_error():
                return False
        return matcher.is_accepting()

    def logits_processor(self, gbnf: str, *, n_prompt: int | None = None) -> Any:
        """A llama-cpp-python logits processor constraining generation to ``gbnf``.

        Parameters
        ----------
        gbnf : str
        n_prompt : int, optional
            Prompt length in tokens; default: the length of ``input_ids`` at the first call.

        Returns
        -------
        callable
            ``(input_ids, scores) -> scores`` with disallowed tokens at ``-inf``; use it in a
            ``llama_cpp.LogitsProcessorList``. One processor serves one generation.
        """
        import numpy as np

        matcher = self.matcher(gbnf)
        state = {"start": n_prompt, "seen": 0}

        def process(input_ids, scores):
            if state["start"] is None:
                state["start"] = len(input_ids)
            new = list(input_ids[state["start"] + state["seen"]:])
            if new:
                matcher.consume_tokens([int(t) for t in new])
                state["seen"] += len(new)
            scores[~self.allowed(matcher, len(scores))] = -np.inf
            return scores

        return process

    def allowed(self, matcher, n: int | None = None):
        """The tokens ``matcher`` allows next: a bool array of shape ``(n,)`` (default the vocabulary size)."""
        import numpy as np
        from llguidance.numpy import allocate_token_bitmask, fill_next_token_bitmask

        n_vocab = self.tokenizer.vocab_size
        bitmask = allocate_token_bitmask(1, n_vocab)
        fill_next_token_bitmask(matcher, bitmask, 0)
        return np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")[: n or n_vocab].astype(bool)


@functools.cache
def guidance() -> Guidance:
    """One shared :class:`Guidance` over the shared oracle's vocabulary."""
    return Guidance()


def constraint(gbnf: str, *, engine: str = "auto") -> dict[str, Any]:
    """Keyword arguments for ``llama_cpp.Llama.create_completion`` that enforce ``gbnf``.

    Parameters
    ----------
    gbnf : str
    engine : {"auto", "llguidance", "llama.cpp"}, default "auto"
        ``auto`` uses llguidance (the fast engine; same verdicts as llama.cpp on the test
        strings, ``tests/test_grammar_guidance.py``) and falls back to llama.cpp's grammar
        sampler when llguidance is missing or cannot read the grammar.

    Returns
    -------
    dict
        ``{"logits_processor": LogitsProcessorList}`` or ``{"grammar": LlamaGrammar}``.
    """
    from llama_cpp import LlamaGrammar, LogitsProcessorList

    if engine not in ("auto", "llguidance", "llama.cpp"):
        raise SchemaError(f"expected 'auto', 'llguidance' or 'llama.cpp', got {engine!r}", where="engine")
    if engine != "llama.cpp":
        try:
            return {"logits_processor": LogitsProcessorList([guidance().logits_processor(gbnf)])}
        except (OracleError, SchemaError):
            if engine == "llguidance":
                raise
    return {"grammar": LlamaGrammar.from_string(gbnf, verbose=False)}
