"""The slim tool prompt: what the model reads about the offered tools, from the same Offer.

``slim(offer, catalog)`` and ``grammar.compile(offer, catalog)`` both read ``offer.names`` in
order, so the prompt and the grammar can never disagree about what is callable. The prompt
carries no argument schemas: the grammar enforces them at sample time. When arguments still
fail validation (a keyword in ``Grammar.not_enforced``), :func:`schema_recovery` shows the one
tool's full schema and narrows the grammar to it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from .catalog import Catalog, Tool, name_words
from .grammar.envelope import CALL_KEYS, ENVELOPE_KEYS, STATUSES
from .grammar.envelope import reply as envelope_reply
from .knobs import ENVELOPES, Knobs
from .lexicon import FALLBACK_PHRASES
from .llm.runner import PLAIN_ROLES
from .schema import normalize_types, pointer, sample, validate

if TYPE_CHECKING:
    from .grammar import Grammar
    from .offer import Offer

__all__ = ["no_tools_line", "slim", "reply_format", "full", "examples", "Example", "schema_recovery", "count_tokens", "token_report",
           "phrases", "REPLY_FORMAT"]

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


def reply_format(envelope: str = "reference", *, callable_tools: bool = True) -> str:
    """The reply envelope the grammar enforces, described for the model in words.

    No value is shown as a placeholder (``"<short reasoning>"``, ``"<text for the user>"``): a
    270M base model copied them into its replies verbatim (issue 17), so each value is described
    instead. The keys come from ``grammar.envelope``, which owns them.

    Parameters
    ----------
    envelope : {"reference", "calls-first", "minimal"}
        The variant (``knobs.envelope``).
    callable_tools : bool, default True
        False for an empty offer: the grammar then allows no call, and the words must not ask for
        one (a new user's trial, 2026-12-05: "No tool may be called" was followed by "use status
        \"call\" with one tool name from the list above", and there was no list).

    Raises
    ------
    ValueError
        An unknown variant.
    """
    if envelope not in ENVELOPES:
        raise ValueError(f"unknown envelope {envelope!r}; expected reference, calls-first or minimal")
    if not callable_tools:
        if envelope == "minimal":
            return f'Reply with one JSON object: "{_MESSAGE}" alone (what the user reads).'
        keys = (f'"{_THOUGHT}" (one short sentence of reasoning), "{_STATUS}" ({_QUIET_STATUSES}), '
                f'"{_MESSAGE}" (what the user reads) and "{_TOOL_CALLS}" (an empty list)'
                if envelope == "reference" else f'"{_TOOL_CALLS}" (an empty list) and then "{_MESSAGE}" (what the user reads)')
        return f"Reply with one JSON object with the keys {keys}, in that order."
    if envelope == "reference":
        return (f'Reply with one JSON object with the keys "{_THOUGHT}" (one short sentence of reasoning), '
                f'"{_STATUS}" ({_ANY_STATUS}), "{_MESSAGE}" (what the user reads, or null) and {_CALL_LIST}, '
                f'in that order. Use status "{STATUSES[0]}" with at least one tool call; {_QUIET_STATUSES} '
                f'with an empty {_TOOL_CALLS} list.')
    if envelope == "calls-first":
        return (f'Reply with one JSON object with the keys {_CALL_LIST} and then "{_MESSAGE}" (what the user '
                f'reads, or null). To call a tool, put the call in {_TOOL_CALLS}; to answer without a tool, '
                f'leave {_TOOL_CALLS} empty and write the answer in {_MESSAGE}.')
    return (f'Reply with one JSON object: either {_CALL_LIST} alone, to call a tool, or "{_MESSAGE}" '
            f'alone (what the user reads), to answer without a tool.')


#: The reference envelope's description (kept for callers of the reference prompt).
REPLY_FORMAT = reply_format("reference")


def _cell(text: str) -> str:
    """One Markdown table cell: whitespace runs as one space, ``|`` escaped, and control or format
    characters written as their escapes (an ESC from an untrusted catalogue drove the terminal of
    ``eris-lab prompt``, and means nothing to a model: a helper's bad input, 2026-12-05)."""
    text = " ".join(text.split())
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return text.replace("|", "\\|")


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


@dataclass(frozen=True, kw_only=True, slots=True)
class Example:
    """One worked example of the prompt: a request and the exact reply the grammar accepts.

    Attributes
    ----------
    tool : str
        The tool the reply calls.
    request : str
        What the user says.
    reply : str
        The reply in the active envelope variant, one line (``grammar.envelope.reply``).
    source : {"descriptor", "schema"}
        A descriptor's ``examples_good`` entry, or synthesised from the tool's schema.
    """

    tool: str
    request: str
    reply: str
    source: str


def _in_schema_order(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments in the schema's property order (the grammar wants it for objects of > 5 keys)."""
    props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    return {**{k: arguments[k] for k in props if k in arguments}, **{k: v for k, v in arguments.items() if k not in props}}


def _within(value: Any, knobs: Knobs) -> bool:
    """``value`` fits the grammar's value bounds of ``knobs`` (lever 1; the schema's own bounds
    are checked by validation)."""
    if isinstance(value, Mapping):
        return all(_within(v, knobs) for v in value.values())
    if isinstance(value, list):
        return (not knobs.max_array_items or len(value) <= knobs.max_array_items) and all(_within(v, knobs) for v in value)
    if isinstance(value, str):
        return not knobs.max_string_chars or len(value) <= knobs.max_string_chars
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return len(str(abs(value))) <= knobs.max_integer_digits
    if isinstance(value, float):
        whole, _, fraction = repr(abs(value)).partition(".")
        return "e" not in repr(value) and len(whole) <= knobs.max_integer_digits and len(fraction) <= knobs.max_fraction_digits
    return True


def _spoken(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _request(tool: Tool, arguments: Mapping[str, Any]) -> str:
    """A request for a synthesised example: the tool's short description, then each value by name."""
    said = "; ".join(f"{' '.join(name_words(k))} {_spoken(v)}" for k, v in arguments.items())
    head = _short(tool).rstrip(" .…")
    return f"{head}: {said}." if said else f"{head}."


def _example(tool: Tool, knobs: Knobs) -> Example | None:
    """One worked example for ``tool``: its first descriptor example whose arguments validate and fit
    the grammar's bounds, else one synthesised from its schema; None when neither does."""
    schema = normalize_types(tool.parameters)
    candidates = [(ex.text, dict(ex.arguments), "descriptor") for ex in tool.examples_good if ex.arguments]
    synthesised = sample(schema)
    if isinstance(synthesised, dict):
        candidates.append((None, synthesised, "schema"))
    for text, arguments, source in candidates:
        if validate(schema, arguments) is not None or not _within(arguments, knobs):
            continue
        arguments = _in_schema_order(arguments, schema)
        thought = f"Call {tool.name}."
        reply = envelope_reply([(tool.name, arguments)], envelope=knobs.envelope,
                               thought=thought if len(thought) <= knobs.max_thought_chars else "")
        return Example(tool=tool.name, request=text or _request(tool, arguments), reply=reply, source=source)
    return None


def examples(offer: "Offer", catalog: Catalog, *, knobs: Knobs = Knobs()) -> tuple[Example, ...]:
    """Worked examples for a base model (issue 17, lever 4): one for each of the first offered
    tools, up to ``knobs.few_shot``, shown with the best-ranked tool's example last.

    Each is a request and the exact reply in the envelope variant ``knobs.envelope``, taken from
    the tool's descriptor examples (``examples_good`` with arguments) where present, otherwise
    synthesised from its schema (:func:`eris_lab.schema.sample`: required arguments, enum values,
    formats, a value the description gives as an example; never a placeholder). A reply is kept only
    when its arguments validate against the tool's schema and fit the grammar's value bounds, so
    the compiled grammar accepts it (tests/test_prompt.py checks that with llama.cpp's engine, for
    the demo catalogue and BFCL tools).

    Returns
    -------
    tuple of Example
        At most ``knobs.few_shot``; empty for an empty offer or ``few_shot = 0``.

    Raises
    ------
    CatalogError
        An offered name is not in the catalogue.

    Notes
    -----
    Few-shot prompting: Brown et al. 2020, "Language Models are Few-Shot Learners"
    (arXiv:2005.14165). Why the best tool goes last: the bundled 270M model copies the tool of the
    last example it read. In offer order, 28 of its 48 wrong calls on 100 live_multiple cases
    called the second example's tool and 3 the first's; reversed, names rose from 69 to 80% on
    `multiple` and from 31 to 48% on `live_multiple` on the next 100 cases of each, held out
    (recency bias, as in Zhao et al. 2021, "Calibrate Before Use", arXiv:2102.09690; docs/generation.md).
    The examples sit in the plain prompt format's own ``User:`` /
    ``Assistant:`` labels (``llm.runner.PLAIN_ROLES``), which a base model continues.
    """
    out: list[Example] = []
    for tool in _tools(offer, catalog):
        if len(out) >= knobs.few_shot:
            break
        example = _example(tool, knobs)
        if example is not None:
            out.append(example)
    return tuple(reversed(out))


def _examples_text(shown: tuple[Example, ...]) -> list[str]:
    if not shown:
        return []
    lines = ["## Worked example" + ("s" if len(shown) > 1 else "") + " (values come from the request)", ""]
    for ex in shown:
        lines += [PLAIN_ROLES["user"] + ex.request, PLAIN_ROLES["assistant"] + ex.reply, ""]
    return lines


def slim(offer: "Offer", catalog: Catalog, *, envelope: str | None = None, knobs: Knobs | None = None) -> str:
    """The slim tool prompt for one offer.

    Parameters
    ----------
    offer : Offer
        ``offer.names`` in offer order; empty means no tool may be called.
    catalog : Catalog
    envelope : {"reference", "calls-first", "minimal"}, optional
        The reply envelope the grammar enforces, described at the end; default ``knobs.envelope``.
    knobs : Knobs, optional
        Reads ``envelope``, ``few_shot`` (worked examples, :func:`examples`) and the value bounds
        the examples must fit. Default ``Knobs()`` (no examples).

    Returns
    -------
    str
        Markdown: a phrase map (tool, short description, typical phrasing) in offer order, the
        tool definitions without parameters (JSON, same order), the reply format, and the worked
        examples when ``knobs.few_shot`` asks for them.

    Raises
    ------
    CatalogError
        An offered name is not in the catalogue.

    Notes
    -----
    The best tool comes first: the bundled 270M model calls the first tool it reads far more often
    than the last. Listed best last, names fell from 76 to 23 of 100 held-out live_multiple cases
    (2026-12-02, docs/generation.md, "Held out"); the worked examples are the other way round (:func:`examples`).
    """
    knobs = _knobs(knobs, envelope)
    tools = _tools(offer, catalog)
    reply = reply_format(knobs.envelope, callable_tools=bool(tools))
    if not tools:
        return no_tools_line(offer) + "\n\n" + reply + "\n"
    lines = ["## Tools you may call", "", "| tool | what it does | typical phrasing |", "|---|---|---|"]
    for tool in tools:
        said = "; ".join(f'"{p}"' for p in phrases(tool)) or "-"
        lines.append(f"| {_cell(tool.name)} | {_cell(_short(tool))} | {_cell(said)} |")
    definitions = [{"name": t.name, "description": " ".join(t.description.split())} for t in tools]
    lines += ["", "## Tool definitions (arguments are constrained when you call)", "",
              json.dumps(definitions, ensure_ascii=False, indent=1), "", reply, ""]
    lines += _examples_text(examples(offer, catalog, knobs=knobs))
    return "\n".join(lines)


def no_tools_line(offer: "Offer") -> str:
    """The first line of a prompt that offers no tool: answer in the message, and when the policy
    refused for missing values (``MISSING_ARGUMENTS``, ``Decision.missing``), ask for them.

    ``"No tool may be called this turn: the request needs what the user has not said yet (city (a
    place) for salon.find); ask for it in the message."``
    """
    missing = offer.decision.missing
    if not missing:
        return "No tool may be called this turn: answer in the message."
    tool = missing[0][0]
    needs = ", ".join(what for _, what in missing)
    return (f"No tool may be called this turn: the request needs what the user has not said yet ({needs} "
            f"for {tool}); ask for it in the message.")


def _knobs(knobs: Knobs | None, envelope: str | None) -> Knobs:
    """``knobs`` (default ``Knobs()``) with ``envelope`` when given (callers that name only the variant)."""
    knobs = knobs if knobs is not None else Knobs()
    if envelope is not None and envelope != knobs.envelope:
        reply_format(envelope)  # an unknown variant: ValueError, as before
        knobs = knobs.replace(envelope=envelope)
    return knobs


def full(catalog: Catalog, *, envelope: str | None = None, knobs: Knobs | None = None) -> str:
    """The baseline prompt: every tool of the catalogue with its full schema (OpenAI style), the
    reply format of the envelope (:func:`reply_format`) and, when ``knobs.few_shot`` asks, worked
    examples of the catalogue's first tools (:func:`examples`)."""
    from .offer import Offer

    knobs = _knobs(knobs, envelope)
    tools = [t.to_openai() for t in catalog]
    shown = examples(Offer.given(catalog.names, reason="the whole catalogue"), catalog, knobs=knobs) if knobs.few_shot else ()
    text = "## Tools\n\n" + json.dumps(tools, ensure_ascii=False, indent=1) + "\n\n" + reply_format(knobs.envelope) + "\n"
    return text + "\n" + "\n".join(_examples_text(shown)) if shown else text


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


def token_report(offer: "Offer", catalog: Catalog, tokenizer: Any = None, *, knobs: Knobs | None = None) -> dict[str, float]:
    """Prompt tokens per turn: the full catalogue with schemas vs the slim offer.

    Parameters
    ----------
    knobs : Knobs, optional
        The prompt's settings (envelope, few-shot examples); default ``Knobs()``.

    Returns
    -------
    dict
        ``{"catalog_tokens", "offer_tokens", "ratio", "example_tokens", "n_examples"}`` (ratio =
        offer / catalogue; ``example_tokens``: what the worked examples add to the slim offer's
        prompt, 0 without them).
    """
    knobs = knobs if knobs is not None else Knobs()
    full_n = count_tokens(full(catalog, knobs=knobs), tokenizer)
    slim_n = count_tokens(slim(offer, catalog, knobs=knobs), tokenizer)
    shown = examples(offer, catalog, knobs=knobs)
    bare_n = count_tokens(slim(offer, catalog, knobs=knobs.replace(few_shot=0)), tokenizer) if shown else slim_n
    return {"catalog_tokens": full_n, "offer_tokens": slim_n, "ratio": slim_n / full_n if full_n else 0.0,
            "example_tokens": slim_n - bare_n, "n_examples": len(shown)}
