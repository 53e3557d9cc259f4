"""FunctionGemma's chat format: tools declared in a developer turn, calls in its own syntax.

FunctionGemma (Gemma 3 270M fine-tuned by Google for function calling) reads tools declared in
the first turn, from the ``developer`` role, after the trigger sentence :data:`DEVELOPER_PROMPT`,
each tool between ``<start_function_declaration>`` and ``<end_function_declaration>``; it calls
with ``<start_function_call>call:NAME{key:<escape>text<escape>,n:15}<end_function_call>`` and
reads a tool's result as ``<start_function_response>response:NAME{...}<end_function_response>``.
Every string inside these blocks sits between two ``<escape>`` tokens; numbers and booleans are
bare; keys are unquoted; a declaration's schema keys are sorted and its types upper-case
(``STRING``, ``OBJECT``). Source: Google, "FunctionGemma formatting and best practices"
(https://ai.google.dev/gemma/docs/functiongemma/formatting-and-best-practices, the "Weather Tool
Flow" example), and "Full function calling sequence with FunctionGemma" (the tool response and
the final answer share the model turn of the call). Several tools: one declaration block each,
back to back (as the model's chat template renders them).

The bundled Gemma 3 270M is the *base* model, not FunctionGemma, and nothing is downloaded:
this format is used when a user brings FunctionGemma's GGUF (``LlamaRunner(chat_template=
"functiongemma")``, or ``"auto"`` when the GGUF's chat template declares functions this way).
``parse.calls`` reads the call syntax (its ``gemma`` text format).
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, Mapping, Sequence

from ..errors import LLMError
from ..schema import normalize_types
from .generation import message_content

__all__ = ["DEVELOPER_PROMPT", "STOP", "ESCAPE", "render", "declaration", "call_text", "value_text", "is_template"]

#: The trigger sentence of the developer turn ("It is important to include the system prompt ...
#: to enable the model to call tools", the formatting page), verbatim: no final period.
DEVELOPER_PROMPT = "You are a model that can do function calling with the following functions"
#: The string delimiter token.
ESCAPE = "<escape>"
#: Stop strings: the end of a turn, and ``<start_function_response>`` ("an additional stop
#: sequence for the inference engine", the formatting page): after a call the model would
#: otherwise write the tool's result itself.
STOP = ("<end_of_turn>", "<start_function_response>")
_ROLES = {"user": "user", "assistant": "model", "model": "model"}


def value_text(value: Any, *, declaration: bool = False) -> str:
    """One value in FunctionGemma's syntax: ``<escape>text<escape>``, bare numbers and booleans,
    ``[a,b]``, ``{key:value}``.

    Parameters
    ----------
    declaration : bool
        Sort object keys (declarations list schema keys sorted) and upper-case ``type`` values.

    Raises
    ------
    LLMError
        A string holding the ``<escape>`` token itself, or a number that is not finite.
    """
    if isinstance(value, str):
        if ESCAPE in value:
            raise LLMError(f"a string may not hold {ESCAPE}; got {value[:60]!r}", where="functiongemma")
        return ESCAPE + value + ESCAPE
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise LLMError(f"expected a finite number, got {value!r}", where="functiongemma")
        return json.dumps(value)
    if isinstance(value, Mapping):
        items = sorted(value.items()) if declaration else value.items()
        parts = []
        for key, item in items:
            if declaration and key == "type" and isinstance(item, str):
                item = item.upper()
            parts.append(f"{key}:{value_text(item, declaration=declaration)}")
        return "{" + ",".join(parts) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(value_text(v, declaration=declaration) for v in value) + "]"
    raise LLMError(f"cannot write a {type(value).__name__} in FunctionGemma's syntax", where="functiongemma")


def declaration(tool: Any) -> str:
    """One tool's declaration block.

    Parameters
    ----------
    tool : catalog.Tool, or an OpenAI function (``{"name", "description", "parameters"}``,
        optionally wrapped as ``{"type": "function", "function": {...}}``)

    Returns
    -------
    str
        ``<start_function_declaration>declaration:NAME{description:<escape>...<escape>,
        parameters:{properties:{...},required:[...],type:<escape>OBJECT<escape>}}<end_function_declaration>``;
        only the ``description``, ``enum``, ``items``, ``properties``, ``required`` and ``type``
        keywords are kept (those Google's example declares; BFCL types normalised first).
    """
    if hasattr(tool, "to_openai"):
        tool = tool.to_openai()
    if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping):
        tool = tool["function"]
    if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
        raise LLMError(f"expected a tool with a name, got {tool!r:.80}", where="tools")
    parameters = _kept(normalize_types(dict(tool.get("parameters") or {"type": "object"})))
    body = {"description": " ".join(str(tool.get("description", "")).split()), "parameters": parameters}
    return f"<start_function_declaration>declaration:{tool['name']}{value_text(body, declaration=True)}<end_function_declaration>"


_KEPT = ("description", "enum", "items", "properties", "required", "type")


def _kept(schema: Any) -> Any:
    """A schema with only the keywords of Google's declarations, recursively."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key in _KEPT:
        if key not in schema:
            continue
        value = schema[key]
        if key == "properties" and isinstance(value, Mapping):
            value = {k: _kept(v) for k, v in value.items()}
        elif key == "items":
            value = _kept(value)
        elif key == "type" and isinstance(value, list):
            value = next((t for t in value if t != "null"), "string")  # one type, as Google's examples
        elif key == "description":
            value = " ".join(str(value).split())
        out[key] = value
    if "type" not in out and "properties" in out:
        out["type"] = "object"
    return out


def call_text(name: str, arguments: Mapping[str, Any]) -> str:
    """One call as FunctionGemma writes it: ``<start_function_call>call:NAME{...}<end_function_call>``."""
    return f"<start_function_call>call:{name}{value_text(dict(arguments))}<end_function_call>"


def _response(message: Mapping[str, Any], index: int) -> str:
    """A tool message as a function response block (content: a JSON object, or text under ``result``)."""
    content = message.get("content")
    name = message.get("name") or "tool"
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            pass
    if isinstance(content, Mapping) and isinstance(content.get("name"), str) and "response" in content:
        name, content = content["name"], content["response"]
    if not isinstance(content, Mapping):
        content = {"result": content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)}
    return f"<start_function_response>response:{name}{value_text(content)}<end_function_response>"


def render(messages: Sequence[Mapping[str, Any]], tools: Iterable[Any] = ()) -> str:
    """The prompt text for FunctionGemma, ending with the model's generation cue.

    Parameters
    ----------
    messages : sequence of mapping
        ``{"role", "content"}``; roles ``system``/``developer`` (first), ``user``, ``assistant``,
        ``tool`` (``name`` and a JSON object or text as content).
    tools : iterable
        Tools to declare (:func:`declaration`); none: a plain developer turn, or none at all.

    Returns
    -------
    str
        ``<start_of_turn>developer\\n{system}\\n\\n{DEVELOPER_PROMPT}{declarations}<end_of_turn>\\n``
        (the system text only when given, the trigger and declarations only with tools), then
        ``<start_of_turn>user\\n...<end_of_turn>\\n`` per user message, and
        ``<start_of_turn>model\\n`` to generate. Tool results continue the model turn of the
        call they answer (Google's full sequence), so a prompt ending with a tool result ends
        inside that turn. No ``<bos>``: the runner adds it.

    Raises
    ------
    LLMError
        An unknown role, a content that is not a string, a system message after the first turn.
    """
    declared = "".join(declaration(t) for t in tools)
    developer = []
    parts: list[str] = []
    open_model = after_response = False
    for i, message in enumerate(messages):
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            if parts:
                raise LLMError("a system message comes first", where=f"messages[{i}].role")
            if not isinstance(content, str):
                raise LLMError(f"expected a string, got {type(content).__name__}", where=f"messages[{i}].content")
            developer.append(content.strip())
            continue
        if role == "tool":
            if not open_model:
                parts.append("<start_of_turn>model\n")
                open_model = True
            parts.append(_response(message, i))
            after_response = True
            continue
        if role not in _ROLES:
            raise LLMError(f"unknown role {role!r}; expected system, developer, user, assistant or tool",
                           where=f"messages[{i}].role")
        content = message_content(message, i)
        if open_model and _ROLES[role] == "model" and after_response:
            parts.append(content.strip())  # the answer shares the model turn of the call and its response
            after_response = False
            continue
        if open_model:
            parts.append("<end_of_turn>\n")
            open_model = False
        if _ROLES[role] == "model":
            parts.append("<start_of_turn>model\n" + content.strip())
            open_model = True
        else:
            parts.append(f"<start_of_turn>user\n{content.strip()}<end_of_turn>\n")
    if not open_model:
        parts.append("<start_of_turn>model\n")
    head = "\n\n".join(t for t in developer if t)
    if declared:
        head = (head + "\n\n" if head else "") + DEVELOPER_PROMPT + declared
    return (f"<start_of_turn>developer\n{head}<end_of_turn>\n" if head else "") + "".join(parts)


def is_template(template: str | None) -> bool:
    """Whether a GGUF's chat template is FunctionGemma's (it declares functions with its tokens)."""
    return bool(template) and "start_function_declaration" in template
