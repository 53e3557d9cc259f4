"""The reply envelope: one JSON object per reply, whose ``tool_calls`` name only offered tools.

Shape (keys in this fixed order, whitespace bounded by ``space``)::

    {"thought": "<= max_thought_chars", "status": "call" | "answer" | "clarify",
     "message": "<= max_message_chars" | null,
     "tool_calls": [{"name": "<offered tool>", "arguments": {<that tool's schema>}}, ...]}

* ``status`` "call" carries 1 to ``max_calls`` calls; "answer" and "clarify" carry ``[]``. An
  empty offer (conversation) leaves only "answer" / "clarify": ``tool_calls`` can only be ``[]``.
* Each call is one alternative per offered tool: the name is a literal with its closing quote,
  so choosing it locks the argument shape and no name matches as a prefix of another.
* Strings are bounded and, like every string in the grammar, carry no raw control characters.

Variants (``knobs.envelope``, issue 17 lever 3), the same keys in fewer places:

* ``reference``: the shape above.
* ``calls-first``: ``{"tool_calls": [...], "message": ... }``: the call comes before any prose,
  so the model's first choice after ``[`` is a call or ``]``; no thought, no status (a list with
  calls is the "call" status, an empty one an answer).
* ``minimal``: ``{"tool_calls": [...]}`` with 1 to ``max_calls`` calls, or ``{"message": "..."}``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..errors import CatalogError
from ..knobs import Knobs
from ..schema import check as check_schema
from ..schema import normalize_types
from .builtins import json_literal, repetition
from .compiler import (
    Compiler,
    Grammar,
    Style,
    check_depth,
    recursion_headroom,
    rule_name,
)

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..offer import Offer

__all__ = ["compile", "style", "reply", "STATUSES", "ENVELOPE_KEYS", "CALL_KEYS", "MAX_CALLS", "tool_rule", "call_rule"]

#: The one definition of the reply envelope's vocabulary: this grammar, the parser
#: (``parse.calls`` reads the same keys) and the prompt's description of it (``prompt.REPLY_FORMAT``).
#: ``status`` values: "call" goes with at least one call, the others with none.
STATUSES = ("call", "answer", "clarify")
#: Envelope keys, in the order the grammar fixes.
ENVELOPE_KEYS = ("thought", "status", "message", "tool_calls")
#: Keys of one call object inside ``tool_calls``, in order.
CALL_KEYS = ("name", "arguments")


#: The most calls one reply envelope may carry: each is a whole tool object in the grammar, and a
#: count of ten million was spelt out in nested blocks until Python gave up ("input nested too
#: deeply", a helper's ``grammar --max-calls 10000000``, 2026-12-05); llama.cpp itself refuses
#: repetitions of about 1,000 and more.
MAX_CALLS = 100


def _key(name: str) -> str:
    return f'{json_literal(name)} space ":" space'


def tool_rule(name: str) -> str:
    """The rule name of a tool's arguments object: ``tool-<name>``, its own namespace.

    Tool rules never share a name with the envelope's (``root``, ``envelope-*``), the calls
    (``call-*``) or the builtins (``space``, ``string``, ...): a tool named ``root`` or
    ``string`` gets ``tool-root`` / ``tool-string``.
    """
    return f"tool-{rule_name(name)}"


def call_rule(name: str) -> str:
    """The rule name of one call of a tool (name literal, then its arguments): ``call-<name>``."""
    return f"call-{rule_name(name)}"


def style(knobs: Knobs) -> Style:
    """The grammar :class:`Style` the knobs ask for (``max_integer_digits``, ``max_fraction_digits``,
    ``max_string_chars`` and ``max_array_items`` with 0 = unbounded, ``compact_json``)."""
    return Style(int_digits=knobs.max_integer_digits, fraction_digits=knobs.max_fraction_digits,
                 string_chars=knobs.max_string_chars or None, array_items=knobs.max_array_items or None,
                 compact=knobs.compact_json)


def reply(calls: Sequence[tuple[str, Mapping[str, Any]]], *, envelope: str = "reference", message: str | None = None,
          thought: str = "") -> str:
    """One reply in an envelope variant, as the grammar of that variant spells it (one line).

    Parameters
    ----------
    calls : sequence of (name, arguments)
        Empty: an answer (``message``) and no call.
    envelope : {"reference", "calls-first", "minimal"}
        The variant (``knobs.envelope``).
    message : str, optional
        What the user reads (null in the reference and calls-first variants when absent).
    thought : str
        The reference variant's thought.

    Returns
    -------
    str
        JSON with ``", "`` and ``": "`` separators and no newline: accepted by the compact style
        and the reference style alike. Arguments keep their key order; objects of more than 5
        keys must come in schema order (DESIGN.md, errors), which the caller ensures.

    Raises
    ------
    ValueError
        An unknown variant, or a minimal reply with neither calls nor a message.
    """
    listed = [{CALL_KEYS[0]: name, CALL_KEYS[1]: dict(arguments)} for name, arguments in calls]
    thought_key, status_key, message_key, calls_key = ENVELOPE_KEYS
    if envelope == "reference":
        body = {thought_key: thought, status_key: STATUSES[0] if listed else STATUSES[1], message_key: message,
                calls_key: listed}
    elif envelope == "calls-first":
        body = {calls_key: listed, message_key: message}
    elif envelope == "minimal":
        if not listed and message is None:
            raise ValueError("a minimal reply holds calls or a message")
        body = {calls_key: listed} if listed else {message_key: message}
    else:
        raise ValueError(f"unknown envelope {envelope!r}; expected reference, calls-first or minimal")
    return json.dumps(body, ensure_ascii=False)


def compile(offer: "Offer", catalog: "Catalog", *, max_calls: int | None = None, lenient: bool = False,
            knobs: Knobs = Knobs(), check: bool = True) -> Grammar:
    """Compile the reply grammar for one offer.

    Parameters
    ----------
    offer : Offer
        What is callable this turn; ``offer.names`` in offer order (empty: no tool may be called).
    catalog : Catalog
        Where the offered tools' argument schemas come from.
    max_calls : int, optional
        Calls per reply, 0 to :data:`MAX_CALLS`; default ``knobs.max_calls``. 0 means no call is possible.
    lenient : bool, default False
        Unsupported schema keywords become warnings (never a silent widening).
    knobs : Knobs
        Reads ``max_calls``, ``max_thought_chars``, ``max_message_chars``, ``envelope`` (the
        variant) and the value style (:func:`style`).
    check : bool, default True
        Parse the grammar with llama.cpp's own parser (fail closed).

    Returns
    -------
    Grammar
        ``names`` = ``offer.names``; warnings and not_enforced paths are prefixed by tool name.

    Raises
    ------
    CatalogError
        An offered name is not in the catalogue, or ``max_calls`` is not an integer in 0 to
        :data:`MAX_CALLS`.
    SchemaError
        A tool's schema cannot be compiled (``where`` = tool name and JSON path).
    """
    max_calls = knobs.max_calls if max_calls is None else max_calls
    if isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 0:
        raise CatalogError(f"expected an integer >= 0, got {max_calls!r}", where="max_calls")
    if max_calls > MAX_CALLS:
        raise CatalogError(f"{max_calls:,} is above {MAX_CALLS}, the most calls one reply may carry", where="max_calls")
    names = tuple(offer.names)
    catalog.require(names, where="offer")
    compiler = Compiler(lenient=lenient, style=style(knobs))
    root = compiler.reserve("root")  # first: no schema rule can take the start symbol
    calls = []
    for name in names if max_calls else ():
        check_depth(catalog.tool(name).parameters, where=f"{name}: ")
        with recursion_headroom(where=f"{name}: #"):
            schema = normalize_types(catalog.tool(name).parameters)
            check_schema(schema, where=f"{name}: ")
            args = compiler.document(schema, tool_rule(name), where=f"{name}: ")
        calls.append(compiler.add_rule(
            call_rule(name),
            f'"{{" space {_key(CALL_KEYS[0])} {json_literal(name)} space "," space '
            f'{_key(CALL_KEYS[1])} {args} "}}" space'))
    char = compiler.primitive("char")
    message = compiler.add_rule(
        "envelope-message",
        f'"\\"" {repetition(char, 0, knobs.max_message_chars)} "\\"" space | {compiler.primitive("null")}')
    calls_list = None
    if calls:
        call = compiler.add_rule("envelope-call", " | ".join(calls))
        more = compiler.add_rule("envelope-more-calls", f'"," space {call}')
        calls_list = f'"[" space {call} {repetition(more, 0, max_calls - 1)} "]" space'.replace("  ", " ")
    message_key, calls_key = ENVELOPE_KEYS[2:]
    if knobs.envelope == "reference":
        body = _reference(compiler, knobs, message, calls_list)
    elif knobs.envelope == "calls-first":
        any_calls = '"[" space "]" space' if calls_list is None else f'({calls_list} | "[" space "]" space)'
        body = f'"{{" space {_key(calls_key)} {any_calls} "," space {_key(message_key)} {message} "}}" space'
    else:  # minimal: calls alone, or a message alone
        said = compiler.add_rule(
            "envelope-said", f'"\\"" {repetition(char, 0, knobs.max_message_chars)} "\\"" space')
        answer = f'"{{" space {_key(message_key)} {said} "}}" space'
        body = answer if calls_list is None else f'"{{" space {_key(calls_key)} {calls_list} "}}" space | {answer}'
    compiler.define(root, body)
    with recursion_headroom(where="grammar"):
        text = compiler.format()
    if check:
        from .oracle import check_parses

        check_parses(text)
    warnings = compiler.warnings
    if names and not max_calls:  # a grammar that can call nothing beside an offer: say so, once
        warnings += (("max_calls", f"0 calls per reply: {len(names)} offered tool{'s' * (len(names) > 1)} "
                                   "cannot be called, the grammar allows an answer only"),)
    return Grammar(text=text, names=names, warnings=warnings, not_enforced=compiler.not_enforced)


def _reference(compiler: Compiler, knobs: Knobs, message: str, calls_list: str | None) -> str:
    """The reference envelope's root body: thought, status, message, tool_calls."""
    char = compiler.primitive("char")
    thought = compiler.add_rule(
        "envelope-thought", f'"\\"" {repetition(char, 0, knobs.max_thought_chars)} "\\"" space')
    thought_key, status_key, message_key, calls_key = ENVELOPE_KEYS
    tail = f'"," space {_key(message_key)} {message} "," space {_key(calls_key)}'
    branches = []
    if calls_list is not None:
        branches.append(compiler.add_rule("envelope-status-call", f'{json_literal(STATUSES[0])} space {tail} {calls_list}'))
    quiet = " | ".join(json_literal(s) for s in STATUSES[1:])
    branches.append(compiler.add_rule("envelope-status-other", f'({quiet}) space {tail} "[" space "]" space'))
    return f'"{{" space {_key(thought_key)} {thought} "," space {_key(status_key)} ({" | ".join(branches)}) "}}" space'
