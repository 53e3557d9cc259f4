"""The slim tool prompt: what the model reads about the offered tools, from the same Offer.

``slim(offer, catalog)`` and ``grammar.compile(offer, catalog)`` both read ``offer.names`` in
order, so the prompt and the grammar can never disagree about what is callable. The prompt
carries no argument schemas: the grammar enforces them at sample time. When arguments still
fail validation (a keyword in ``Grammar.not_enforced``), :func:`schema_recovery` shows the one
tool's full schema and narrows the grammar to it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .catalog import Catalog, Tool, name_words
from .grammar.envelope import CALL_KEYS, ENVELOPE_KEYS, STATUSES
from .lexicon import FALLBACK_PHRASES
from .schema import pointer

if TYPE_CHECKING:
    from .grammar import Grammar
    from .offer import Offer

__all__ = ["slim", "reply_format", "full", "schema_recovery", "count_tokens", "token_report", "phrases", "REPLY_FORMAT"]

#: How many routing phrases the phrase map shows per tool.
MAX_PHRASES = 3
#: Longest short description in the phrase map, in characters.
MAX_DESCRIPTION_CHARS = 120

_THOUGHT, _STATUS, _MESSAGE, _TOOL_CALLS = ENVELOPE_KEYS
_NAME, _ARGUMENTS = CALL_KEYS
_ANY_STATUS = " | ".join(f'"{s}"' for s in STATUSES)
_QUIET_STATUSES = " or ".join(f'"{s}"' for s in STATUSES[1:])
_CALL_LIST = (f'"{_TOOL_CALLS}" (a list of calls, each {{"{_NAME}": one tool name from the list above, '
              f'"{_ARGUMENTS}": an object of its arguments}})')


def reply_format(envelope: str = "reference") -> str:
    """The reply envelope the grammar enforces, described for the model in words.

    No value is shown as a placeholder (``"<short reasoning>"``, ``"<text for the user>"``): a
    270M base model copied them into its replies verbatim (issue 17), so each value is described
    instead. The keys come from ``grammar.envelope``, which owns them.

    Parameters
    ----------
    envelope : {"reference", "calls-first", "minimal"}
        The variant (``knobs.envelope``).

    Raises
    ------
    ValueError
        An unknown variant.
    """
    if envelope == "reference":
        return (f'Reply with one JSON object with the keys "{_THOUGHT}" (one short sentence of reasoning), '
                f'"{_STATUS}" ({_ANY_STATUS}), "{_MESSAGE}" (what the user reads, or null) and {_CALL_LIST}, '
                f'in that order. Use status "{STATUSES[0]}" with at least one tool call; {_QUIET_STATUSES} '
                f'with an empty {_TOOL_CALLS} list.')
    if envelope == "calls-first":
        return (f'Reply with one JSON object with the keys {_CALL_LIST} and then "{_MESSAGE}" (what the user '
                f'reads, or null). To call a tool, put the call in {_TOOL_CALLS}; to answer without a tool, '
                f'leave {_TOOL_CALLS} empty and write the answer in {_MESSAGE}.')
    if envelope == "minimal":
        return (f'Reply with one JSON object: either {_CALL_LIST} alone, to call a tool, or "{_MESSAGE}" '
                f'alone (what the user reads), to answer without a tool.')
    raise ValueError(f"unknown envelope {envelope!r}; expected reference, calls-first or minimal")


#: The reference envelope's description (kept for callers of the reference prompt).
REPLY_FORMAT = reply_format("reference")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _short(tool: Tool) -> str:
    text = tool.short_description or tool.description.split(". ")[0]
    text = " ".join(text.split())
    return text if len(text) <= MAX_DESCRIPTION_CHARS else text[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"


def phrases(tool: Tool) -> tuple[str, ...]:
    """Typical phrasings of ``tool``: its routing hints, else fallback phrases for its name words."""
    if tool.routing_hints:
        return tool.routing_hints[:MAX_PHRASES]
    out: list[str] = []
    for word in dict.fromkeys(name_words(tool.name)):
        out.extend(FALLBACK_PHRASES.get(word, ()))
    return tuple(dict.fromkeys(out))[:MAX_PHRASES]


def _tools(offer: "Offer", catalog: Catalog) -> list[Tool]:
    return [catalog.tool(n) for n in catalog.require(offer.names, where="offer")]


def slim(offer: "Offer", catalog: Catalog, *, envelope: str = "reference") -> str:
    """The slim tool prompt for one offer.

    Parameters
    ----------
    offer : Offer
        ``offer.names`` in offer order; empty means no tool may be called.
    catalog : Catalog
    envelope : {"reference", "calls-first", "minimal"}
        The reply envelope the grammar enforces (``knobs.envelope``), described at the end.

    Returns
    -------
    str
        Markdown: a phrase map (tool, short description, typical phrasing) in offer order, the
        tool definitions without parameters (JSON, same order), and the reply format.

    Raises
    ------
    CatalogError
        An offered name is not in the catalogue.
    """
    tools = _tools(offer, catalog)
    reply = reply_format(envelope)
    if not tools:
        return "No tool may be called this turn: answer in the message.\n\n" + reply + "\n"
    lines = ["## Tools you may call", "", "| tool | what it does | typical phrasing |", "|---|---|---|"]
    for tool in tools:
        said = "; ".join(f'"{p}"' for p in phrases(tool)) or "-"
        lines.append(f"| {_cell(tool.name)} | {_cell(_short(tool))} | {_cell(said)} |")
    definitions = [{"name": t.name, "description": " ".join(t.description.split())} for t in tools]
    lines += ["", "## Tool definitions (arguments are constrained when you call)", "",
              json.dumps(definitions, ensure_ascii=False, indent=1), "", reply, ""]
    return "\n".join(lines)


def full(catalog: Catalog, *, envelope: str = "reference") -> str:
    """The baseline prompt: every tool of the catalogue with its full schema (OpenAI style), and
    the reply format of ``envelope`` (:func:`reply_format`)."""
    tools = [t.to_openai() for t in catalog]
    return "## Tools\n\n" + json.dumps(tools, ensure_ascii=False, indent=1) + "\n\n" + reply_format(envelope) + "\n"


def _error_path(error: Any) -> tuple[str, str]:
    """(JSON Pointer, message) of a jsonschema ValidationError, a (pointer, message) pair, or a string."""
    if isinstance(error, tuple) and len(error) == 2:
        return str(error[0]), str(error[1])
    path = getattr(error, "absolute_path", None)
    if path is not None:
        return pointer(path), getattr(error, "message", str(error))
    return "#", str(error)


def schema_recovery(tool: Tool, error: Any, *, max_calls: int = 1) -> tuple[str, "Grammar"]:
    """A retry after arguments failed validation: a message and a grammar for this tool alone.

    Parameters
    ----------
    tool : Tool
    error : jsonschema.ValidationError, (path, message) or str
        What failed.
    max_calls : int, default 1

    Returns
    -------
    (str, Grammar)
        The message names the failed JSON path and carries the tool's full schema; the grammar
        offers only ``tool``.
    """
    from .grammar import compile as compile_grammar
    from .offer import Offer

    path, what = _error_path(error)
    schema = json.dumps(tool.parameters, ensure_ascii=False, indent=1)
    message = (f"The arguments for {tool.name} failed validation at {path}: {what}\n"
               f"The full argument schema of {tool.name}:\n{schema}\n"
               f"Call {tool.name} again with arguments that match this schema.")
    offer = Offer.given((tool.name,), reason="schema recovery")
    return message, compile_grammar(offer, Catalog([tool], source="recovery"), max_calls=max_calls)


def count_tokens(text: str, tokenizer: Any = None) -> int:
    """Tokens of ``text`` under a model's tokenizer.

    Parameters
    ----------
    text : str
    tokenizer : Oracle, llama_cpp.Llama, callable or None
        Default: the bundled Gemma 3 vocabulary through :func:`eris_lab.grammar.oracle.oracle`.

    Returns
    -------
    int
    """
    if tokenizer is None:
        from .grammar.oracle import oracle

        tokenizer = oracle()
    if hasattr(tokenizer, "model_tokens"):
        return len(tokenizer.model_tokens(text))
    if hasattr(tokenizer, "tokenize"):
        return len(tokenizer.tokenize(text.encode("utf-8"), add_bos=False))
    return len(tokenizer(text))


def token_report(offer: "Offer", catalog: Catalog, tokenizer: Any = None) -> dict[str, float]:
    """Prompt tokens per turn: the full catalogue with schemas vs the slim offer.

    Returns
    -------
    dict
        ``{"catalog_tokens", "offer_tokens", "ratio"}`` (ratio = offer / catalogue).
    """
    full_n = count_tokens(full(catalog), tokenizer)
    slim_n = count_tokens(slim(offer, catalog), tokenizer)
    return {"catalog_tokens": full_n, "offer_tokens": slim_n, "ratio": slim_n / full_n if full_n else 0.0}
