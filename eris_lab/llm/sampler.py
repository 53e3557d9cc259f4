"""Greedy sampling under a grammar that checks the greedy token first (llama.cpp's own order).

This module is the one place that reaches into llama-cpp-python's internals
(:data:`LLAMA_CPP_INTERNALS`): :func:`greedy_grammar_sampler` installs a sampler per call as
``Llama._init_sampler`` and resets ``Llama._sampler`` after it, and the sampler fills
``llama_cpp._internals.LlamaTokenDataArray`` buffers. ``pyproject.toml`` pins llama-cpp-python
to the releases this was written against, and ``tests/test_llm.py`` fails loudly when one of
these names disappears.
"""

from __future__ import annotations

import contextlib
import ctypes
import time
from typing import Iterator

from ..errors import LLMError

__all__ = ["GreedyGrammarSampler", "greedy_grammar_sampler", "missing_internals", "GRAMMAR_TOP_K",
           "LLAMA_CPP_INTERNALS"]

#: The private names of llama-cpp-python this module uses: (where, attribute). Written against
#: llama-cpp-python 0.3.8 to 0.3.36 (``Llama._init_sampler`` builds the sampler chain of a call;
#: ``Llama._sampler`` caches it).
LLAMA_CPP_INTERNALS: tuple[tuple[str, str], ...] = (
    ("llama_cpp.Llama", "_init_sampler"),
    ("llama_cpp.Llama", "_sampler"),
    ("llama_cpp._internals.LlamaTokenDataArray", "candidates"),
    ("llama_cpp._internals.LlamaTokenDataArray", "candidates_data"),
    ("llama_cpp._internals.LlamaTokenDataArray", "copy_logits"),
)

#: Tokens tried, best logits first, before a grammar scans the whole vocabulary (temperature 0;
#: end-of-generation tokens are always tried too). The tokens chosen do not depend on it; it only
#: trades one small grammar pass against a full one. Not tuned.
GRAMMAR_TOP_K = 512


class GreedyGrammarSampler:
    """Greedy sampling under a grammar that tries the greedy token first.

    llama-cpp-python puts the grammar sampler in front of its chain, so every step runs the
    grammar over the whole vocabulary (262,144 tokens for Gemma 3). llama.cpp's own
    ``common/sampling.cpp`` (``common_sampler_sample``) instead samples first, checks that one
    token against the grammar, and runs the grammar over the whole vocabulary only when the
    token is rejected. In between, this sampler tries the ``GRAMMAR_TOP_K`` best tokens by logit:
    the best of them the grammar accepts is the best accepted token overall. At temperature 0
    with no penalties (what :meth:`LlamaRunner.generate` asks for) the chain is a plain argmax,
    so the result is the same token; only the cost differs.
    Installed per call in place of llama-cpp-python's sampler chain (``Llama._init_sampler``).
    """

    def __init__(self, llm, grammar: str) -> None:
        import llama_cpp  # loaded already: only LlamaRunner.generate builds this sampler
        import numpy as np
        from llama_cpp._internals import LlamaTokenDataArray

        self._np = np
        self._llama_cpp = llama_cpp
        self.n_vocab = llm.n_vocab()
        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self.grammar = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
        if not self.grammar:  # checked before; a second parse cannot fail, but never run unconstrained
            raise LLMError("rejected by llama.cpp", where="grammar")
        self.one = (llama_cpp.llama_token_data * 1)()
        self.one_array = llama_cpp.llama_token_data_array(data=self.one, size=1, selected=-1, sorted=False)
        self.top_k = min(GRAMMAR_TOP_K, self.n_vocab)
        # end-of-generation tokens: a finished grammar accepts only these, rarely among the top K
        self.eog = np.array(sorted({t for t in (llm.token_eos(), llama_cpp.llama_vocab_eot(vocab)) if 0 <= t < self.n_vocab}),
                            dtype=np.intc)
        self.top = LlamaTokenDataArray(n_vocab=self.top_k + len(self.eog))
        self.full = LlamaTokenDataArray(n_vocab=self.n_vocab)
        self.n_checked = 0  # steps where the greedy token was accepted as is
        self.n_top = 0  # steps decided among the top GRAMMAR_TOP_K tokens
        self.n_full = 0  # steps that needed the grammar over the whole vocabulary
        self.grammar_s = 0.0  # wall seconds inside the grammar calls below (Generation.grammar_s)

    def sample(self, ctx, idx: int = -1) -> int:
        np, llama_cpp = self._np, self._llama_cpp
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,))
        token = int(np.argmax(logits))
        self.one[0].id, self.one[0].logit, self.one[0].p = token, float(logits[token]), 0.0
        self.one_array.size, self.one_array.selected, self.one_array.sorted = 1, -1, False
        started = time.perf_counter()
        llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(self.one_array))
        if self.one[0].logit != float("-inf"):
            self.n_checked += 1
        else:
            # The best accepted token among the top K by logit is the best accepted token
            # overall, if there is one; only when none of the top K is accepted does the
            # grammar scan the whole vocabulary.
            k = self.top_k
            top = np.argpartition(logits, -k)[-k:]
            data = self.top.candidates_data
            data.id[:k] = top
            data.id[k:] = self.eog
            data.logit[:] = logits[data.id]
            data.p[:] = 0.0
            self.top.candidates.size, self.top.candidates.selected = len(data), -1
            self.top.candidates.sorted = False
            llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(self.top.candidates))
            best = int(np.argmax(data.logit))
            if data.logit[best] != float("-inf"):
                self.n_top += 1
                token = int(data.id[best])
            else:
                self.n_full += 1
                self.full.copy_logits(logits)
                llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(self.full.candidates))
                size = self.full.candidates.size
                best = int(np.argmax(self.full.candidates_data.logit[:size]))
                if self.full.candidates_data.logit[best] == float("-inf"):
                    raise LLMError("the grammar allows no token at this point (a dead end)", where="grammar")
                token = int(self.full.candidates_data.id[best])
        llama_cpp.llama_sampler_accept(self.grammar, token)
        self.grammar_s += time.perf_counter() - started
        return token

    def accept(self, token: int) -> None:  # llama-cpp-python's sampler interface
        pass

    def reset(self) -> None:
        pass

    def close(self) -> None:
        if self.grammar:
            self._llama_cpp.llama_sampler_free(self.grammar)
            self.grammar = None


@contextlib.contextmanager
def greedy_grammar_sampler(llm, grammar: str) -> Iterator[GreedyGrammarSampler]:
    """Make :class:`GreedyGrammarSampler` the sampler of ``llm``'s next ``create_completion``.

    Sets ``llm._init_sampler`` on the instance for the duration of the block (llama-cpp-python
    calls it to build a call's sampler chain), then removes it, drops the cached ``_sampler`` and
    frees the grammar, also when generation fails.
    """
    fast = GreedyGrammarSampler(llm, grammar)
    llm._init_sampler = lambda **_: fast  # instance attribute: this call only
    try:
        yield fast
    finally:
        del llm._init_sampler
        llm._sampler = None
        fast.close()


def missing_internals() -> list[str]:
    """The names of :data:`LLAMA_CPP_INTERNALS` this llama-cpp-python lacks (``[]``: all present).

    ``Llama._sampler`` is an instance attribute, so it is looked for in ``Llama``'s source.
    """
    import importlib
    import inspect

    missing = []
    for where, name in LLAMA_CPP_INTERNALS:
        module, _, cls_name = where.rpartition(".")
        cls = getattr(importlib.import_module(module), cls_name, None)
        if cls is None:
            missing.append(where)
            continue
        if not (hasattr(cls, name) or f"self.{name}" in inspect.getsource(cls)):
            missing.append(f"{where}.{name}")
    return missing
