"""llama.cpp in process: the bundled Gemma 3 270M (a base model) or any GGUF, optionally under a grammar.

The runner takes an optional GBNF grammar, compiled by llama.cpp's own parser before any token is
sampled: a grammar llama.cpp rejects raises :class:`LLMError`, it never falls back to
unconstrained sampling. llama-cpp-python is imported lazily (as ``embed.py`` does for its
backends): importing eris_lab never loads llama.cpp.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..errors import LLMError
from . import functiongemma
from .generation import Generation, Messages, as_messages, message_content
from .model import default_model_path
from .sampler import greedy_grammar_sampler

__all__ = ["LlamaRunner", "Stepper", "plain_prompt", "PLAIN_ROLES", "PLAIN_CUE", "PLAIN_STOP"]

#: Role labels of the plain prompt format, used when a GGUF carries no chat template (the
#: bundled Gemma 3 270M is a *base* model and has none). A message renders as
#: ``<label><content>`` followed by a blank line; the prompt ends with ``"Assistant:"`` and
#: generation stops at the next ``"\nUser:"``. A system message renders unlabelled, first.
PLAIN_ROLES: dict[str, str] = {
    "system": "",
    "user": "User: ",
    "assistant": "Assistant: ",
    "tool": "Tool result: ",
}
PLAIN_CUE = "Assistant:"
PLAIN_STOP = ("\nUser:",)


def plain_prompt(messages: Messages) -> str:
    """Render chat messages in the plain format (``PLAIN_ROLES``), ending with the answer cue.

    Parameters
    ----------
    messages : sequence of mapping
        ``{"role", "content"}`` in dialog order; roles from ``PLAIN_ROLES``.

    Returns
    -------
    str
        ``"<system>\\n\\nUser: ...\\n\\nAssistant:"``.

    Raises
    ------
    LLMError
        A message has an unknown role or a content that is not a string.
    """
    parts = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in PLAIN_ROLES:
            raise LLMError(f"unknown role {role!r}; expected one of {', '.join(PLAIN_ROLES)}",
                           where=f"messages[{i}].role")
        parts.append(PLAIN_ROLES[role] + message_content(message, i).strip())
    parts.append(PLAIN_CUE)
    return "\n\n".join(parts)


#: One process loads a model once: (path, n_ctx, n_threads, n_gpu_layers, seed) -> loaded model.
_LOADED: dict[tuple, "_Loaded"] = {}
_LOADED_LOCK = threading.Lock()


@dataclass(kw_only=True, slots=True)
class _Loaded:
    llm: Any
    lock: threading.Lock
    template: str | None
    formatter: Any
    functiongemma: bool = False  # FunctionGemma's own format (llm.functiongemma), not the Jinja template
    guidance: Any = None  # grammar.guidance.Guidance over this model's vocabulary, made on first use


def _llama_cpp():
    try:
        import llama_cpp
    except ImportError:
        raise LLMError("llama-cpp-python is not installed; `pip install llama-cpp-python`") from None
    return llama_cpp


class LlamaRunner:
    """A GGUF model run in process by llama-cpp-python.

    The default model, Gemma 3 270M Q4_K_M, is a **base** model (pretrained, not
    instruction-tuned): it continues text and has no chat template, so chat messages go through
    the plain format of :func:`plain_prompt`. Expect it to follow a grammar, not instructions.
    A GGUF that carries ``tokenizer.chat_template`` (instruction-tuned models do) is prompted with
    that template, rendered by llama-cpp-python's ``Jinja2ChatFormatter``.

    Parameters
    ----------
    model_path : path, optional
        A GGUF file; default the bundled Gemma 3 270M (:func:`default_model_path`).
    n_threads : int
        CPU threads for generation and prompt evaluation, pinned (default 1: on a shared 2-core
        box more threads were slower, DESIGN.md "Bundled models").
    n_gpu_layers : int
        ``-1`` offloads every layer when llama.cpp was built with a GPU backend; ignored otherwise.
    n_ctx : int
        Context window in tokens (prompt + generation).
    seed : int
        Sampling seed (used when ``temperature > 0``).
    chat_template : {"auto", "plain", "functiongemma"} or str
        ``"auto"``: FunctionGemma's format when the GGUF's template declares functions with its
        tokens (:func:`functiongemma.is_template`), else the GGUF's template when present, else
        plain; ``"plain"``: always plain; ``"functiongemma"``: FunctionGemma's developer turn,
        declarations and stop strings (:mod:`.functiongemma`); any other string: a Jinja chat
        template to use.
    greedy_grammar_check : bool
        At temperature 0 under a grammar, check the greedy token against the grammar first and
        run the grammar over the whole vocabulary only when it is rejected (llama.cpp's
        ``common_sampler_sample`` order; same tokens, less time). False: llama-cpp-python's
        own sampler chain (the grammar scans the whole vocabulary every step).
    engine : {"auto", "llguidance", "llama.cpp"}
        Which engine enforces a grammar. ``llguidance`` masks logits with an ``LLMatcher`` built
        from the same GBNF (``grammar.guidance``; its verdicts equal llama.cpp's on every test
        string, tests/test_grammar_guidance.py), about 0.5 ms of mask work per token on the
        262k-token Gemma vocabulary; ``llama.cpp`` uses its grammar sampler; ``auto`` (default)
        uses llguidance where it is installed and reads the grammar, else llama.cpp. Every
        grammar is parsed by llama.cpp first either way (fail closed). Source: issue #3.

    Notes
    -----
    Loaded models are cached per process (``_LOADED``), keyed by path and load settings, so
    several runners over one model share one copy; calls on one model are serialised by a lock
    (a llama.cpp context is not thread-safe).
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, n_threads: int = 1,
                 n_gpu_layers: int = -1, n_ctx: int = 2048, seed: int = 0,
                 chat_template: str = "auto", greedy_grammar_check: bool = True,
                 engine: str = "auto") -> None:
        self.model_path = model_path
        self.n_threads = n_threads
        self.n_gpu_layers = n_gpu_layers
        self.n_ctx = n_ctx
        self.seed = seed
        self.chat_template = chat_template
        self.greedy_grammar_check = greedy_grammar_check
        self.engine = engine

    # -- loading -----------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        """The GGUF file (the bundled model is assembled on first access)."""
        return Path(self.model_path) if self.model_path is not None else default_model_path()

    @property
    def model_id(self) -> str:
        """``gguf:<file name>``."""
        return f"gguf:{self.path.name}"

    def _load(self) -> _Loaded:
        for name in ("n_threads", "n_ctx"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LLMError(f"expected an integer >= 1, got {value!r}", where=name)
        path = self.path.resolve()
        key = (str(path), self.n_ctx, self.n_threads, self.n_gpu_layers, self.seed, self.chat_template)
        loaded = _LOADED.get(key)
        if loaded is not None:
            return loaded
        with _LOADED_LOCK:
            loaded = _LOADED.get(key)
            if loaded is not None:
                return loaded
            llama_cpp = _llama_cpp()
            if not path.is_file():
                raise LLMError("no such GGUF file", where=str(path))
            try:
                llm = llama_cpp.Llama(
                    model_path=str(path), n_threads=self.n_threads, n_threads_batch=self.n_threads,
                    n_gpu_layers=self.n_gpu_layers, n_ctx=self.n_ctx, seed=self.seed, verbose=False,
                )
            except Exception as exc:  # llama-cpp-python raises ValueError/RuntimeError for bad files
                raise LLMError(f"cannot load GGUF model: {exc}", where=str(path)) from None
            template = self._template(llm)
            formatter = None
            fg = self.chat_template == "functiongemma" or (self.chat_template == "auto" and functiongemma.is_template(template))
            if fg:
                template = None
            elif template is not None:
                from llama_cpp.llama_chat_format import Jinja2ChatFormatter

                formatter = Jinja2ChatFormatter(template=template, eos_token=_token_text(llm, llm.token_eos()),
                                                bos_token=_token_text(llm, llm.token_bos()))
            loaded = _Loaded(llm=llm, lock=threading.Lock(), template=template, formatter=formatter, functiongemma=fg)
            _LOADED[key] = loaded
            return loaded

    def _template(self, llm) -> str | None:
        if self.chat_template in ("plain", "functiongemma"):
            return None
        if self.chat_template == "auto":
            return llm.metadata.get("tokenizer.chat_template") or None
        return self.chat_template

    @property
    def prompt_format(self) -> str:
        """``"functiongemma"``, ``"gguf-template"``, ``"custom-template"`` or ``"plain"`` (loads the model)."""
        loaded = self._load()
        if loaded.functiongemma:
            return "functiongemma"
        if loaded.template is None:
            return "plain"
        return "custom-template" if self.chat_template not in ("auto", "plain") else "gguf-template"

    def info(self) -> dict[str, Any]:
        """Model, prompt format and hardware settings, for reports (loads the model)."""
        llama_cpp = _llama_cpp()
        loaded = self._load()
        return {
            "model": str(self.path), "prompt_format": self.prompt_format, "n_threads": self.n_threads,
            "n_ctx": self.n_ctx, "n_gpu_layers": self.n_gpu_layers,
            "gpu_offload": bool(llama_cpp.llama_supports_gpu_offload()),
            "name": loaded.llm.metadata.get("general.name", ""),
        }

    # -- text <-> tokens ---------------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        """Number of tokens ``text`` takes with this model's tokenizer (no BOS added)."""
        loaded = self._load()
        if not text:
            return 0
        return len(loaded.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def format(self, prompt_or_messages: str | Messages, *, tools: Sequence[Any] = ()) -> tuple[str, tuple[str, ...]]:
        """The prompt text the model sees and the stop strings its format implies.

        A string is used verbatim (no stop strings); messages go through FunctionGemma's format
        (``tools`` declared in its developer turn; no model load when ``chat_template`` says
        ``"functiongemma"``), the chat template (``tools`` passed to it, as OpenAI entries), or
        :func:`plain_prompt` when there is none (``tools`` are then the prompt's business:
        ``prompt.slim`` describes the offer).
        """
        messages = as_messages(prompt_or_messages)
        if messages is None:
            return prompt_or_messages, ()  # type: ignore[return-value]
        if self.chat_template == "functiongemma":
            return functiongemma.render(messages, tools), functiongemma.STOP
        loaded = self._load()
        if loaded.functiongemma:
            return functiongemma.render(messages, tools), functiongemma.STOP
        if loaded.formatter is None:
            return plain_prompt(messages), PLAIN_STOP
        try:
            openai_tools = [t.to_openai() if hasattr(t, "to_openai") else t for t in tools] or None
            rendered = loaded.formatter(messages=messages, tools=openai_tools)
        except Exception as exc:  # jinja2 errors, raise_exception() in templates
            raise LLMError(f"the chat template cannot render these messages: {exc}", where="chat_template") from None
        stop = rendered.stop if isinstance(rendered.stop, list) else [rendered.stop] if rendered.stop else []
        return rendered.prompt, tuple(s for s in stop if s)

    def _tokens(self, llm, prompt: str) -> list[int]:
        tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        bos = llm.token_bos()
        add_bos = _llama_cpp().llama_vocab_get_add_bos(_llama_cpp().llama_model_get_vocab(llm.model))
        if bos >= 0 and add_bos and (not tokens or tokens[0] != bos):
            tokens = [bos, *tokens]
        return tokens

    # -- one step at a time (teaching views) ------------------------------------------------------
    @contextlib.contextmanager
    def stepper(self, prompt_or_messages: str | Messages, *, tools: Sequence[Any] = ()) -> Iterator["Stepper"]:
        """Decode one token at a time, reading the model's logits before each choice.

        The prompt is formatted as for :meth:`generate` and evaluated once; the caller reads
        :meth:`Stepper.logits`, picks a token and :meth:`Stepper.advance` s (no sampler, no
        grammar: the caller applies its own mask). The model's lock is held for the block.

        Raises
        ------
        LLMError
            The model cannot load, or the prompt does not fit ``n_ctx``.
        """
        loaded = self._load()
        text, _ = self.format(prompt_or_messages, tools=tools)
        with loaded.lock:
            llm = loaded.llm
            tokens = self._tokens(llm, text)
            if len(tokens) + 1 > self.n_ctx:
                raise LLMError(f"the prompt takes {len(tokens)} tokens; the context holds {self.n_ctx}", where="n_ctx")
            llm.reset()
            llm.eval(tokens)
            try:
                yield Stepper(llm, n_prompt=len(tokens), n_ctx=self.n_ctx)
            finally:  # an error inside the block must not leave the shared model mid-sequence
                llm.reset()

    def guidance(self) -> Any:
        """llguidance over this model's vocabulary (``grammar.guidance.Guidance``), made once per loaded model.

        Raises
        ------
        OracleError
            llguidance is not installed.
        """
        from ..grammar.guidance import Guidance

        loaded = self._load()
        if loaded.guidance is None:  # building the tokenizer of a 262k vocabulary takes seconds
            loaded.guidance = Guidance(vocab=_llama_cpp().llama_model_get_vocab(loaded.llm.model))
        return loaded.guidance

    # -- grammar -----------------------------------------------------------------------------
    def check_grammar(self, grammar: str) -> None:
        """Compile ``grammar`` with llama.cpp's own GBNF parser; raise when it is rejected.

        Raises
        ------
        LLMError
            ``grammar: rejected by llama.cpp: <parser message>``.
        """
        loaded = self._load()
        _check_grammar(loaded.llm, grammar)

    # -- generation --------------------------------------------------------------------------
    def _llguidance(self, loaded: "_Loaded", grammar: str):
        """``(LogitsProcessorList, timer)`` enforcing ``grammar`` with llguidance, or None for llama.cpp's sampler.

        ``timer[0]`` accumulates the seconds spent computing masks.
        """
        if self.engine not in ("auto", "llguidance", "llama.cpp"):
            raise LLMError(f"expected 'auto', 'llguidance' or 'llama.cpp', got {self.engine!r}", where="engine")
        if self.engine == "llama.cpp":
            return None
        from llama_cpp import LogitsProcessorList

        from ..errors import OracleError, SchemaError

        try:
            process = self.guidance().logits_processor(grammar)
        except (OracleError, SchemaError) as exc:
            if self.engine == "llguidance":
                raise LLMError(f"llguidance cannot enforce this grammar: {exc}", where="grammar") from None
            return None
        timer = [0.0]  # wall seconds spent masking (Generation.grammar_s)

        def timed(input_ids, scores):
            started = time.perf_counter()
            try:
                return process(input_ids, scores)
            finally:
                timer[0] += time.perf_counter() - started

        return LogitsProcessorList([timed]), timer

    def generate(self, prompt_or_messages: str | Messages, *, grammar: str | None = None,
                 max_tokens: int = 128, temperature: float = 0.0, stop: Sequence[str] = (),
                 tools: Sequence[Any] = ()) -> Generation:
        """Generate a continuation, optionally constrained by a GBNF grammar.

        Parameters
        ----------
        prompt_or_messages : str or sequence of mapping
            A raw prompt, or chat messages (formatted as :meth:`format` says).
        grammar : str, optional
            GBNF text with a ``root`` rule. Checked by llama.cpp's parser first; enforced by the
            runner's ``engine`` (llguidance logits masks, or ``LlamaGrammar.from_string``).
        max_tokens : int
            Most tokens to generate.
        temperature : float
            0.0 = greedy (deterministic).
        stop : sequence of str
            Extra stop strings (added to those of the prompt format); not part of the text.
        tools : sequence of catalog.Tool or OpenAI function entries
            Declared by the chat format when it has a place for them (FunctionGemma's developer
            turn, a chat template's ``tools``); see :meth:`format`.

        Returns
        -------
        Generation

        Raises
        ------
        LLMError
            The model cannot load, the grammar is rejected, the prompt does not fit ``n_ctx``,
            or llama.cpp fails while generating.
        """
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise LLMError(f"expected an integer >= 1, got {max_tokens!r}", where="max_tokens")
        if grammar is not None and not isinstance(grammar, str):
            raise LLMError(f"expected GBNF text, got {type(grammar).__name__}", where="grammar")
        loaded = self._load()
        llama_cpp = _llama_cpp()
        text, format_stop = self.format(prompt_or_messages, tools=tools)
        stops = list(dict.fromkeys([*format_stop, *stop]))
        with loaded.lock:
            llm = loaded.llm
            compiled = None
            processors = timer = None
            engine = ""
            if grammar is not None:
                _check_grammar(llm, grammar)
                guided = self._llguidance(loaded, grammar)
                if guided is not None:
                    processors, timer = guided
                    engine = "llguidance"
                else:
                    from llama_cpp.llama_grammar import LlamaGrammar

                    compiled = LlamaGrammar.from_string(grammar, verbose=False)
                    engine = "llama.cpp"
            tokens = self._tokens(llm, text)
            if len(tokens) + 1 > self.n_ctx:
                raise LLMError(f"the prompt takes {len(tokens)} tokens; the context holds {self.n_ctx}",
                               where="n_ctx")
            greedy = compiled is not None and temperature == 0.0 and self.greedy_grammar_check
            llama_cpp.llama_perf_context_reset(llm.ctx)
            started = time.perf_counter()
            with greedy_grammar_sampler(llm, grammar) if greedy else contextlib.nullcontext() as fast:
                try:
                    out = llm.create_completion(prompt=tokens, max_tokens=max_tokens, temperature=temperature,
                                                stop=stops or None, grammar=compiled, seed=self.seed,
                                                logits_processor=processors)
                except LLMError:
                    raise
                except Exception as exc:
                    raise LLMError(f"llama.cpp failed while generating: {exc}", where=str(self.path)) from None
            seconds = time.perf_counter() - started
            perf = llama_cpp.llama_perf_context(llm.ctx)
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        n_tokens = int(usage.get("completion_tokens", 0))
        prompt_s = max(0.0, float(perf.t_p_eval_ms) / 1000.0)
        gen_s = seconds - prompt_s if 0.0 < prompt_s < seconds else seconds
        return Generation(
            text=choice.get("text", ""), n_prompt_tokens=int(usage.get("prompt_tokens", len(tokens))),
            n_tokens=n_tokens, seconds=seconds, tokens_per_s=(n_tokens / gen_s) if n_tokens and gen_s > 0 else 0.0,
            grammar_used=grammar is not None, finish_reason=choice.get("finish_reason") or "",
            note=(f"grammar engine {engine}" if engine else "") + (
                f"; greedy grammar check: {fast.n_checked} greedy tokens accepted, {fast.n_top} chosen among the "
                f"top {fast.top_k}, {fast.n_full} full-vocabulary passes" if fast is not None else ""),
            grammar_s=fast.grammar_s if fast is not None else (timer[0] if timer else 0.0),
        )


class Stepper:
    """A model mid-generation, one token at a time (:meth:`LlamaRunner.stepper`).

    Attributes
    ----------
    n_prompt : int
        Prompt tokens evaluated.
    n_vocab : int
    eos : tuple of int
        End-of-generation tokens (end of text, end of turn).
    """

    def __init__(self, llm, *, n_prompt: int, n_ctx: int) -> None:
        import llama_cpp

        self._llm = llm
        self._llama_cpp = llama_cpp
        self.n_prompt = n_prompt
        self._n_ctx = n_ctx
        self.n_vocab = llm.n_vocab()
        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self.eos = tuple(sorted({t for t in (llm.token_eos(), llama_cpp.llama_vocab_eot(vocab)) if 0 <= t < self.n_vocab}))

    def logits(self) -> Any:
        """The next token's logits, shape ``(n_vocab,)`` float32 (a copy)."""
        import numpy as np

        pointer = self._llama_cpp.llama_get_logits_ith(self._llm.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).copy()

    def advance(self, token: int) -> None:
        """Append ``token`` and evaluate it.

        Raises
        ------
        LLMError
            The context is full.
        """
        if self._llm.n_tokens + 1 > self._n_ctx:
            raise LLMError(f"the context of {self._n_ctx} tokens is full", where="n_ctx")
        self._llm.eval([int(token)])

    def piece(self, token: int) -> str:
        """The text of one token (control tokens by name)."""
        return self._llm.detokenize([int(token)], special=True).decode("utf-8", "replace")


def _token_text(llm, token: int) -> str:
    if token < 0:
        return ""
    import llama_cpp

    text = llama_cpp.llama_vocab_get_text(llama_cpp.llama_model_get_vocab(llm.model), token)
    return text.decode("utf-8", "replace") if text else ""


def _check_grammar(llm, grammar: str) -> None:
    """Parse ``grammar`` with llama.cpp over this model's vocabulary (``oracle.grammar_error``).

    Raises
    ------
    LLMError
        ``grammar: rejected by llama.cpp: <parser message>``, or an empty grammar.
    """
    if not grammar.strip():
        raise LLMError("empty grammar; expected GBNF text with a root rule (pass None for no grammar)",
                       where="grammar")
    import llama_cpp

    from ..grammar.oracle import grammar_error

    message = grammar_error(grammar, vocab=llama_cpp.llama_model_get_vocab(llm.model))
    if message:
        raise LLMError(f"rejected by llama.cpp: {message}", where="grammar")
