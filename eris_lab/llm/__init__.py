"""Language models: llama.cpp in process (the bundled Gemma, any GGUF) and OpenAI-compatible servers.

Both return one record, :class:`Generation`: :mod:`.runner` (``LlamaRunner``, the plain prompt
format of base models), :mod:`.openai` (``OpenAIBackend``), :mod:`.model` (the bundled GGUF),
:mod:`.sampler` (the greedy grammar check, the one reach into llama-cpp-python's internals).
"""

from .generation import Generation, Messages, Runner, as_messages, declared_tools
from .model import default_model_path
from .openai import (
    TOOL_PARSE_FAILURES,
    OpenAIBackend,
    native_tool_calls,
    tool_parse_failure,
)
from .runner import PLAIN_ROLES, LlamaRunner, plain_prompt

__all__ = [
    "Generation", "Runner", "Messages", "as_messages", "declared_tools", "LlamaRunner", "OpenAIBackend", "default_model_path",
    "plain_prompt", "native_tool_calls", "tool_parse_failure", "PLAIN_ROLES", "TOOL_PARSE_FAILURES",
]
