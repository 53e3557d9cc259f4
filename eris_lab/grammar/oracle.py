"""Acceptance judged by llama.cpp's OWN grammar engine, through llama-cpp-python's C bindings.

Nothing here matches grammars itself. Two checks:

* :func:`check_parses` hands the GBNF to ``llama_sampler_init_grammar`` (llama.cpp's parser,
  its undefined-rule and left-recursion checks) with no vocabulary; a grammar it refuses is a
  :class:`SchemaError` carrying llama.cpp's message. The compiler calls this on every grammar
  it emits (fail closed: llama-server would otherwise sample UNCONSTRAINED on a bad grammar).
* :class:`Oracle` loads a real vocabulary (the bundled Gemma 3 GGUF, ``vocab_only=True``: no
  weights), builds the grammar sampler, and steps it over the candidate text's token pieces the
  way generation does: for each token, ``llama_sampler_apply`` on that one candidate (a rejected
  token gets logit -inf), then ``llama_sampler_accept``; at the end, the end-of-generation token
  must survive ``apply`` (the grammar may stop there). ``apply`` never throws, so a rejected
  string can never abort the process (``llama_grammar_accept_impl`` throws on a bad token).

Tokenisation: the model's own tokenizer; when its pieces do not concatenate back to the exact
bytes (rare), the byte-fallback tokens ``<0xNN>`` are used, which spell any UTF-8 text.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import sys
import tempfile
import threading
from pathlib import Path

from ..errors import LLMError, OracleError, SchemaError

__all__ = ["Oracle", "check_parses", "grammar_error", "missing_root", "oracle"]

_LOCK = threading.Lock()


def _llama():
    try:
        import llama_cpp
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise OracleError(
            f"llama-cpp-python is needed to check grammars with llama.cpp ({exc}); "
            "install it with: pip install 'eris_lab[llm]'", where="grammar oracle") from None
    _quiet_logs(llama_cpp)
    return llama_cpp


#: Where llama.cpp's log lines go while a grammar is being parsed (under ``_LOCK``); None: dropped.
#: A fresh list per parse: a shared, trimmed list lost the message after a model load had filled
#: it ("rejected the grammar: no message").
_LOG_CAPTURE: list[list[str] | None] = [None]


@functools.cache
def _quiet_logs(llama_cpp) -> None:
    """Route llama.cpp's log lines into the current capture (read for error messages), never stderr."""

    @llama_cpp.llama_log_callback
    def _callback(level, text, user_data):  # pragma: no cover - called from C
        try:
            capture = _LOG_CAPTURE[0]
            if capture is not None:
                capture.append(text.decode("utf-8", "replace"))
        except Exception:
            pass

    _quiet_logs.callback = _callback  # keep a reference: C holds only the pointer
    llama_cpp.llama_log_set(_callback, ctypes.c_void_p(0))


class _CapturedStderr:
    """Capture what C code writes to file descriptor 2 (the grammar parser uses fprintf)."""

    def __enter__(self):
        sys.stderr.flush()  # what Python wrote before stays on the real stderr
        self._file = tempfile.TemporaryFile()
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        self.text = self._file.read().decode("utf-8", "replace")
        self._file.close()
        return False


def _first_error_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:  # the specific reason first, then llama.cpp's generic "failed to parse"
        if line != "failed to parse grammar" and (
                "error" in line.lower() or "left recursion" in line or "Undefined" in line or "symbol" in line):
            return line
    return lines[0] if lines else "no reason given by llama.cpp"


def missing_root(gbnf: str, root: str = "root") -> str:
    """Why ``gbnf`` cannot be parsed safely (``""`` when it can): empty, comments only, a leading
    byte-order mark, no ``root``, or a repetition that would wreck the parser (:func:`bad_repetition`).

    llama.cpp's parser accepts an empty grammar, and a sampler built from it constrains nothing:
    a failed ``eris-lab grammar > g.gbnf`` leaves exactly such a file. Fail closed instead.
    """
    body = "\n".join(line for line in gbnf.splitlines() if not line.lstrip().startswith("#"))
    if not body.strip():
        return "the grammar is empty (no rules)"
    if gbnf.startswith("\ufeff"):
        return "the grammar starts with a byte-order mark (U+FEFF); save it as UTF-8 without one"
    if not re.search(rf"(?m)^[ \t]*{re.escape(root)}[ \t]*::=", gbnf):
        return f"the grammar has no {root!r} rule (its start symbol)"
    return bad_repetition(body)


# string literals and character classes, whose braces are text, not repetitions
_GBNF_TEXT_RE = re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]')
_REPETITION_RE = re.compile(r"\{\s*(\d+)\s*(,\s*(\d*)\s*)?\}")


def bad_repetition(gbnf: str) -> str:
    """Why a repetition of ``gbnf`` would wreck llama.cpp's parser (``""`` when none would):
    ``{3,1}`` (fewer allowed than required: llama.cpp's parser then took 7.5 GB in 34 s and was
    killed; found by a helper varying bad input rows 4 and 38) or a count above
    ``builtins.MAX_REPETITION`` (2000: llama.cpp refuses a larger minimum and silently reads a
    larger maximum as unbounded, a grammar wider than it says)."""
    from .builtins import MAX_REPETITION

    outside = _GBNF_TEXT_RE.sub(" ", gbnf)
    for match in _REPETITION_RE.finditer(outside):
        low = int(match.group(1))
        high = match.group(3)
        if high and int(high) < low:
            return f"the repetition {match.group(0)} allows fewer than it requires ({high} < {low})"
        if max(low, int(high or 0)) > MAX_REPETITION:
            return (f"the repetition {match.group(0)} counts more than {MAX_REPETITION:,} (llama.cpp would read a "
                    "larger maximum as unbounded)")
    return ""


def _init_grammar(llama_cpp, vocab, gbnf: str, root: str = "root"):
    """Build a grammar sampler; returns (sampler or None, llama.cpp's reason for refusing it)."""
    with _LOCK:
        _LOG_CAPTURE[0] = logs = []
        try:
            with _CapturedStderr() as err:
                sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), root.encode("utf-8"))
        finally:
            _LOG_CAPTURE[0] = None
    if not sampler:
        return None, _first_error_line(err.text + "\n" + "".join(logs))
    return sampler, ""


def grammar_error(gbnf: str, *, root: str = "root", vocab=None) -> str:
    """llama.cpp's own verdict on ``gbnf``: ``""`` when its grammar parser accepts it, else its message.

    An empty, comment-only or rootless grammar is refused first (:func:`missing_root`): llama.cpp
    would accept the empty one and constrain nothing.

    The one grammar-parse check of the lab: the compiler and the envelope call it through
    :func:`check_parses` (fail closed), the runner before it samples a token. llama.cpp's
    parser writes to stderr and to its log; both are captured, never shown.

    Parameters
    ----------
    gbnf : str
    root : str
        The start rule.
    vocab : llama_vocab pointer, optional
        A model's vocabulary (needed only by grammars that name tokens); default none.

    Raises
    ------
    OracleError
        llama-cpp-python is not installed.
    """
    key = (hashlib.sha256(gbnf.encode("utf-8")).hexdigest(), root, vocab is None)
    if key in _PARSED:
        return ""
    reason = missing_root(gbnf, root)
    if reason:
        return reason
    llama_cpp = _llama()
    sampler, message = _init_grammar(llama_cpp, vocab, gbnf, root)
    if sampler is None:
        return message or "parse error"
    llama_cpp.llama_sampler_free(sampler)
    if len(_PARSED) >= 1024:
        _PARSED.clear()
    _PARSED.add(key)
    return ""


def check_parses(gbnf: str, *, root: str = "root") -> None:
    """Raise :class:`SchemaError` unless llama.cpp's grammar parser accepts ``gbnf`` (:func:`grammar_error`).

    Raises
    ------
    SchemaError
        llama.cpp refused the grammar; the message is llama.cpp's first error line.
    OracleError
        llama-cpp-python is not installed.
    """
    message = grammar_error(gbnf, root=root)
    if message:
        raise SchemaError(f"llama.cpp's grammar parser rejected the grammar: {message}", where="grammar")


#: Grammars llama.cpp already parsed in this process (the same offer compiles turn after turn).
_PARSED: set[tuple[str, str, bool]] = set()


def _bundled_model() -> Path:
    from ..llm.model import default_model_path

    try:
        return default_model_path()
    except LLMError as exc:
        raise OracleError(f"no vocabulary to judge with: {exc}", where="grammar oracle") from None


class Oracle:
    """llama.cpp's grammar engine over a real vocabulary.

    Parameters
    ----------
    model_path : path-like, optional
        A GGUF file; only its vocabulary is loaded. Default: the bundled Gemma 3
        (``llm.default_model_path``).

    Raises
    ------
    OracleError
        llama-cpp-python is missing or the model cannot be loaded.
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None) -> None:
        llama_cpp = _llama()
        self._llama = llama_cpp
        self.model_path = Path(model_path) if model_path is not None else _bundled_model()
        if not self.model_path.exists():  # say what is wrong before llama.cpp's generic refusal
            raise OracleError("no such file", where=str(self.model_path))
        if self.model_path.is_dir():
            raise OracleError("a folder, not a GGUF file", where=str(self.model_path))
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        with _LOCK:
            self._model = llama_cpp.llama_model_load_from_file(str(self.model_path).encode(), params)
        if not self._model:
            raise OracleError("llama.cpp could not load this model", where=str(self.model_path))
        self.vocab = llama_cpp.llama_model_get_vocab(self._model)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.eos = llama_cpp.llama_vocab_eos(self.vocab)
        self._byte_tokens = self._find_byte_tokens()

    def __del__(self) -> None:  # pragma: no cover - interpreter shutdown order varies
        try:
            if getattr(self, "_model", None):
                self._llama.llama_model_free(self._model)
                self._model = None
        except Exception:
            pass

    # -- tokens ------------------------------------------------------------------------------
    def piece(self, token: int) -> bytes:
        """The bytes llama.cpp's grammar sees for ``token`` (``token_to_piece``, no specials)."""
        buf = ctypes.create_string_buffer(64)
        n = self._llama.llama_token_to_piece(self.vocab, token, buf, 64, 0, False)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = self._llama.llama_token_to_piece(self.vocab, token, buf, -n, 0, False)
        return buf.raw[:n]

    def _find_byte_tokens(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for token in range(min(self.n_vocab, 2048)):
            text = self._llama.llama_vocab_get_text(self.vocab, token) or b""
            if len(text) == 6 and text.startswith(b"<0x") and text.endswith(b">"):
                try:
                    out[int(text[3:5], 16)] = token
                except ValueError:
                    pass
        return out

    def model_tokens(self, text: str) -> list[int]:
        """The model tokenizer's ids for ``text`` (no special tokens added)."""
        data = text.encode("utf-8")
        if not data:
            return []
        n_max = len(data) + 8
        arr = (self._llama.llama_token * n_max)()
        n = self._llama.llama_tokenize(self.vocab, data, len(data), arr, n_max, False, False)
        return list(arr[:n]) if n > 0 else []

    def tokenize(self, text: str) -> list[int]:
        """Token ids whose pieces concatenate to exactly ``text`` (model tokenizer, else bytes)."""
        data = text.encode("utf-8")
        if not data:
            return []
        tokens = self.model_tokens(text)
        if tokens and b"".join(self.piece(t) for t in tokens) == data:
            return tokens
        if len(self._byte_tokens) == 256:
            return [self._byte_tokens[b] for b in data]
        raise OracleError(f"cannot spell {text[:40]!r} in this vocabulary", where=str(self.model_path))

    # -- grammars ----------------------------------------------------------------------------
    def sampler(self, gbnf: str, *, root: str = "root"):
        """A llama.cpp grammar sampler for ``gbnf`` (free it with ``llama_sampler_free``).

        Raises
        ------
        SchemaError
            The grammar is empty or has no start rule, or llama.cpp's parser refused it.
        """
        reason = missing_root(gbnf, root)
        if reason:
            raise SchemaError(reason, where="grammar")
        sampler, message = _init_grammar(self._llama, self.vocab, gbnf, root)
        if sampler is None:
            raise SchemaError(f"llama.cpp's grammar parser rejected the grammar: {message}", where="grammar")
        return sampler

    def _allowed(self, sampler, token: int) -> bool:
        data = (self._llama.llama_token_data * 1)()
        data[0].id = token
        data[0].logit = 0.0
        data[0].p = 0.0
        arr = self._llama.llama_token_data_array(data=data, size=1, selected=-1, sorted=False)
        self._llama.llama_sampler_apply(sampler, ctypes.byref(arr))
        return data[0].logit != float("-inf")

    def accepts(self, gbnf: str, text: str, *, root: str = "root") -> bool:
        """Whether llama.cpp's grammar engine lets a model generate exactly ``text`` and stop.

        Parameters
        ----------
        gbnf : str
            The grammar.
        text : str
            The whole candidate output.

        Returns
        -------
        bool
            True when every token of ``text`` survives the grammar mask and the end-of-generation
            token is allowed after the last one.
        """
        return self.prefix_accepted(gbnf, text, root=root)[1]

    def prefix_accepted(self, gbnf: str, text: str, *, root: str = "root") -> tuple[int, bool]:
        """(number of tokens accepted, whole text accepted and complete) for ``text``."""
        tokens = self.tokenize(text)
        sampler = self.sampler(gbnf, root=root)
        try:
            for i, token in enumerate(tokens):
                if not self._allowed(sampler, token):
                    return i, False
                self._llama.llama_sampler_accept(sampler, token)
            return len(tokens), self._allowed(sampler, self.eos)
        finally:
            self._llama.llama_sampler_free(sampler)


@functools.cache
def oracle() -> Oracle:
    """One shared :class:`Oracle` over the bundled vocabulary (loaded on first use)."""
    return Oracle()
