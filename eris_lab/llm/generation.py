"""What every language model returns (:class:`Generation`) and what the tool loop needs of one (:class:`Runner`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from ..errors import LLMError

__all__ = ["Generation", "Runner", "Messages", "as_messages", "declared_tools", "message_content"]

Messages = Sequence[Mapping[str, Any]]


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
    this one method. ``tools`` (the offered tools, for a chat format that declares them, such as
    FunctionGemma's) is optional: callers that pass it need a runner that takes it.
    """

    def generate(self, prompt_or_messages: str | Messages, *, grammar: str | None = None,
                 max_tokens: int = 128, temperature: float = 0.0, stop: Sequence[str] = ()) -> Generation: ...


def declared_tools(runner: Any, tools: Sequence[Any]) -> dict[str, list[Any]]:
    """``{"tools": [...]}`` for a runner whose chat format declares the offered tools itself
    (``prompt_format == "functiongemma"``: its developer turn), else ``{}``: other formats get the
    tools from the slim prompt only, so a GGUF chat template never lists them a second time. The
    keyword arguments of ``runner.generate`` / ``runner.stepper``; one rule for ``generate``,
    ``bench generation`` and notebook 05's token view.
    """
    return {"tools": list(tools)} if getattr(runner, "prompt_format", None) == "functiongemma" else {}


def message_content(message: Mapping[str, Any], index: int) -> str:
    """A chat message's ``content`` as text (``None``: ``""``), for a prompt format to render.

    Raises
    ------
    LLMError
        The content is not a string (``where`` = ``messages[index].content``).
    """
    content = message.get("content")
    if content is None:
        return ""
    if not isinstance(content, str):
        raise LLMError(f"expected a string, got {type(content).__name__}", where=f"messages[{index}].content")
    return content


def as_messages(prompt_or_messages: str | Messages) -> list[dict[str, Any]] | None:
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
