"""The dual parser: model output in, tool calls out; it never raises.

``calls(raw, offered)`` reads the envelope JSON the grammar asks for first
(``{"thought", "status", "message", "tool_calls": [{"name", "arguments"}]}``; one cut off at the
token limit still yields its message and every complete call, reported); when the output
is not an envelope it takes reasoning blocks out (``<think>...</think>``, Cohere's ``<|START_THINKING|>``
and kin: a call drafted while thinking is never a call, and output that ends inside an open block
yields none) and tries
the text formats small models are known to emit, in this order (:data:`TEXT_FORMATS`); the
first format that yields call-shaped text wins:

=================  =====================================================================
``gemma``          ``<|tool_call>call:name{k:<|"|>v<|"|>,n:1}<tool_call|>``, FunctionGemma's
                   ``<start_function_call>call:name{k:<escape>v<escape>}<end_function_call>``
                   and the bare ``call:name{k:'v, w'}`` (back-to-back repeats read once,
                   a copy cut by the token limit ignored)
``deepseek``       DeepSeek's ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>name`` + a fenced
                   ``{json}`` (V3, R1) or ``<｜tool▁call▁begin｜>name<｜tool▁sep｜>{json}`` (V3.1),
                   each to ``<｜tool▁call▁end｜>``; Kimi K2's ``<|tool_calls_section_begin|>
                   <|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{json}
                   <|tool_call_end|><|tool_calls_section_end|>`` (the same shape)
``harmony``        gpt-oss's ``<|channel|>commentary to=functions.name <|constrain|>json
                   <|message|>{json}<|call|>`` (``to=`` before or after the channel)
``functionary_v2`` ``<|from|>assistant<|recipient|>name<|content|>{json}`` (``<|recipient|>all``:
                   the answer)
``tool_call_tag``  ``<tool_call>{json}</tool_call>`` (closing tag optional, Hermes/Qwen),
                   ``<|tool_call|>[{json}]<|/tool_call|>`` (Phi-4-mini, Granite), GLM-4.5's
                   ``<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``,
                   ``<tool_call><tool_name>name</tool_name><parameters>{json}</parameters>``,
                   LFM2's ``<|tool_call_start|>[f(k="v")]<|tool_call_end|>``, InternLM2's
                   ``<|action_start|><|plugin|>{json}<|action_end|>`` and Cohere Command R7B's
                   ``<|START_ACTION|>[{json}]<|END_ACTION|>``
``function_tag``   ``<function=name>{json}</function>`` (Llama 3.1), Qwen3-Coder's
                   ``<function=name><parameter=k>v</parameter></function>``, and
                   ``<function>name</function>`` followed by bare JSON arguments (or by
                   ``<parameters>{json}</parameters>``)
``xml_tag``        ``<tool>``/``<toolcall>``/``<function_call>`` around ``{json}``,
                   ``<name>{json}</name>`` (one or more) or ``<name>n</name><arguments>{json}
                   </arguments>``; ``<function_call name="n">{json}</function_call>``; Cline's and
                   Roo Code's ``<name><k>v</k></name>`` (only where ``name`` is an offered tool)
``mistral``        ``[TOOL_CALLS][{json}]`` and ``name[ARGS]{json}`` (one object per header)
``python_tag``     ``<|python_tag|>`` + JSON or a Python-style call (parsed with ``ast``);
                   Gorilla OpenFunctions' ``<<function>>f(k=v)``, NexusRaven's ``Call: f(k=v)``
``api_line``       ``API: name {json}`` / ``API: name(k=v)`` / ``API: name k=v`` lines
``react``          ``Action: name`` + ``Action Input: ...`` or ``Action: name ({json})``;
                   Qwen-Agent's ``✿FUNCTION✿: name`` + ``✿ARGS✿: {json}`` (an invented
                   ``Observation:`` / ``✿RESULT✿`` and what follows are dropped)
``name_line``      a line that is an offered tool's name, then ``{json}`` on the next line (GLM-4)
                   or a fence holding ``tool_call(k=v)`` (ChatGLM3); ``>>>name`` + ``{json}``
                   (Functionary v3.2, whose ``>>>all`` + text is the answer)
``fenced``         code fences holding call-shaped JSON (``tool_code`` fences: Python calls); a
                   block of program code (```` ```python ````, ```` ```bash ````...) only when it
                   holds nothing but calls: an object assigned, passed or quoted in a command is data
``bare_json``      call-shaped JSON objects or lists anywhere, one after another (separated
                   by whitespace, ``;`` or ``,``)
``python_call``    lines that are a whole Python-style call of an offered tool, and a reply that
                   is a list of calls ``[f(a=1), g()]`` (back-to-back copies read once, a copy
                   cut by the token limit ignored)
=================  =====================================================================

In every format, back-to-back copies of one call are read once and a copy that the token limit cut
at the end of the output is dropped without an error (parse-39: a model that did not stop at its end
marker repeats the call); another call cut there is an error, and no cut markup is left in
``content``, nor a code fence emptied by taking its call out.

Markers around an answer (Cohere's ``<|START_RESPONSE|>``, Functionary's ``>>>all``), empty call
wrappers (``<seed:tool_call></seed:tool_call>``, ``<tool_calls>[]</tool_calls>``, ``[TOOL_CALLS][]``:
no call and no error) and end-of-turn markers (GLM's ``<|observation|>``, NexusRaven's ``<bot_end>``)
are never content; a call's invented result (``<tool_response>``, Gemma 3's
```` ```tool_output ```` fence) is cut with what follows it.

Plain-text tags (``[SEARCH: query]``) are read only through the ``text_tags`` mapping a caller
takes from its catalogue; without an entry a tag is never guessed to be a call.

A whole LLM-API message written as the output (format ``api_message``) gives its calls, its text
blocks as content and its thinking as reasoning: the Anthropic Messages API's ``{"role", "content":
[{"type": "text"}, {"type": "tool_use", "name", "input"}]}`` (or the content list alone), the OpenAI
Chat Completions message ``{"role", "content", "tool_calls"}`` and its ``{"choices": [{"message"}]}``
response, the OpenAI Responses API's ``{"output": [...]}``, Gemini's ``{"parts": [{"functionCall"}]}``
and ``{"candidates": [...]}``, Ollama's and Cohere's ``{"message": {...}}``, Bedrock Converse's
``{"toolUse"}`` blocks. Such a message inside running text is read as call-shaped JSON.

The ``native`` channel reads a server's ``tool_calls`` field shown as text
(``tool_calls=[{"function": {"name", "arguments"}}]``, arguments an object or a JSON string)
and falls back to the text formats when it is not that.

Every call carries its ``source`` (:data:`SOURCES`): ``envelope``, ``native``, ``tagged`` (a
call tag or marker, or a reply that is nothing but call objects), ``fenced``, or ``prose``
(call-shaped text inside running text: "a call would look like {...}"). ``execution.execute``
never runs a state-changing tool from a ``prose`` call without confirmation (issue #16).

Rules (issues #5 and #16, tests/cases/parsing_cases.json):

* A JSON object is call-shaped only with a string ``name`` and one of the keys ``arguments``,
  ``parameters``, ``args`` (:data:`ARGUMENT_KEYS`; Anthropic's ``input`` holding an object), or an
  OpenAI ``{"function": {...}}`` wrapper (the legacy ``{"function_call": {...}}``, Gemini's
  ``{"functionCall": {...}}`` and Bedrock's ``{"toolUse": {...}}`` too), or a whole API message holding
  such calls (above); LangChain's
  ``{"action": "Final Answer", "action_input": text}`` is the answer, not a call; an object whose one
  key is ``name`` is a call without arguments only when it names an offered tool, and data
  otherwise (a package.json in a fence, JSON inside code) that stays content. So are the loose
  shapes small models write, read (and reported in ``repairs``) only for an offered tool's name: an
  arguments key misspelt or renamed (``arguements``, ``params``, ``kwargs``), the arguments beside
  the name (``{"name": "f", "city": "Oslo"}``), the name as the one key (``{"f": {...}}``), and
  arguments as a list of ``{"name", "value"}`` pairs. A call whose ``name`` is null is an error.
* A name outside the offer is never returned as a call; it is reported in ``error``. A name
  that differs only in its separators (``clock.alarm``, ``clock_alarm``) or carries a namespace
  (``default_api.get_weather``) is read as the offered tool only when exactly one matches, and
  never when it is exactly the name of another tool that ``schemas`` knows (not offered: an error).
* Damage is repaired only where the result is unambiguous (a trailing comma, a raw control
  character inside a string, a ``//`` or ``/* */`` comment) and every repair is reported in
  ``repairs``. Python-literal objects (single quotes, ``None``) are read with
  :func:`ast.literal_eval`, never ``eval``; objects with bare keys (``{name: "f", arguments: {k: 1}}``,
  Gemma's and JavaScript's spelling) are read with their keys quoted, in any call wrapper.
* A bare-string argument is put into the tool's one string parameter only when ``schemas``
  show there is exactly one; otherwise it is a recoverable error. An arguments string holding
  JSON objects run together is read once when they are identical, one call each otherwise.
* Arguments encoded twice (a JSON string literal inside the arguments string) are decoded, and
  arguments in a code fence (```` ```json\n{...}\n``` ````, or on one line) are read as the object in
  it: markup never goes into a string parameter.
  A call that sends ``null`` where another call of the same tool, agreeing on the rest, gives
  a value is a draft and is dropped (parse-25; no schema needed).
* With ``schemas``, a call missing a required argument (or sending ``null`` for it) is
  dropped and reported, so the tool loop can return the error to the model; raw JSON where
  the schema wants a string is serialised into the string, where it wants a number or
  boolean the call is dropped with an error, as it is for a value no reading makes that
  number or boolean (``"seven"``; ``"7"`` is left to ``repair``). NaN and Infinity are
  never passed on.
* Output that looks like a call attempt but yields no call (cut off, an unknown tag, arguments
  that are neither JSON nor a Python literal) gets an ``error`` that says so.
"""

from __future__ import annotations

import ast
import bisect
import json
import math
import re
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Collection, Iterable, Iterator, Mapping, Sequence

from .grammar.envelope import CALL_KEYS, ENVELOPE_KEYS

__all__ = ["Call", "Parsed", "calls", "TEXT_FORMATS", "ARGUMENT_KEYS", "NAME_KEYS", "SOURCES", "loads_repaired", "parse_python"]


_QUIET_PARSE = threading.Lock()


def parse_python(text: str, mode: str = "eval") -> ast.AST:
    """``ast.parse`` of untrusted text (a model's reply, a user's expression) without the
    ``SyntaxWarning`` Python prints to stderr for text such as ``"C:\\dir"`` or ``1if``: the caller
    decides what a bad expression means, and a warning on the terminal is noise.

    Raises
    ------
    SyntaxError, ValueError, RecursionError, MemoryError
        As :func:`ast.parse`.
    """
    # catch_warnings swaps the process-wide filters (unless Python 3.14+ runs free-threaded or with
    # -X context_aware_warnings): two threads inside it at once can restore each other's filters,
    # so the MCP server's worker threads take turns here (only this module's own calls)
    with _QUIET_PARSE, warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        return ast.parse(text, mode=mode)


#: Keys a call object may carry its arguments under (OpenAI/Hermes, Llama 3.x, short form,
#: LangChain's agent JSON: ``{"action": ..., "action_input": ...}``, ``{"tool": ..., "tool_input": ...}``,
#: and Anthropic's ``{"type": "tool_use", "name": ..., "input": {...}}``; ``input`` only holding an object).
ARGUMENT_KEYS: tuple[str, ...] = ("arguments", "parameters", "args", "tool_input", "action_input", "input")
#: Keys a call object may name its tool under, in this order; the others only when they hold a
#: string beside an argument key (``{"function": "get_weather", "parameters": {...}}``, seen from
#: small models that mix the OpenAI wrapper's key into the flat form).
NAME_KEYS: tuple[str, ...] = ("name", "function", "tool", "tool_name", "action")

#: Text formats tried after the envelope, in this order (see the module docstring).
TEXT_FORMATS: tuple[str, ...] = (
    "gemma", "deepseek", "harmony", "functionary_v2", "tool_call_tag", "function_tag", "xml_tag", "mistral", "python_tag",
    "api_line", "react", "name_line", "fenced", "bare_json", "python_call",
)

#: Work bounds that keep hostile input linear-ish: start positions tried per scan, input chars read.
_MAX_STARTS = 512
_MAX_CHARS = 200_000
_MAX_DEPTH = 64

_NAME = r"[A-Za-z_][\w.:\-]*"


#: Where a call was read (DESIGN.md, ``eris-lab parse``): the grammar's envelope, the server's
#: ``tool_calls`` field, an explicit call tag or marker (or a reply that is nothing but calls),
#: a code fence, or running text. A ``prose`` call that changes state never runs unconfirmed.
SOURCES: tuple[str, ...] = ("envelope", "native", "tagged", "fenced", "prose")


@dataclass(frozen=True, kw_only=True, slots=True)
class Call:
    """One tool call: an offered tool's name and its arguments (a JSON object).

    ``source`` is one of :data:`SOURCES` (``""`` for a call built by hand); it is not part of
    equality, so a call compares by what it asks for, not by where it was read.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    source: str = field(default="", compare=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class Parsed:
    """What the model said: calls to run, text for the user, and what went wrong.

    Attributes
    ----------
    calls : tuple of Call
        Calls to offered tools, in output order; empty when the model answered in text.
    content : str
        Text left after the calls were taken out (the envelope's ``message``), stripped.
    error : str or None
        Every problem, one per line (an unknown tool, arguments that are not an object, a
        missing required argument); ``None`` when there was none. Meant for the model to read.
    repairs : tuple of str
        Damage that was repaired, e.g. ``"removed trailing comma at char 45"``.
    format : str
        The format that matched: ``"envelope"``, ``"native"``, ``"api_message"`` (a whole LLM-API
        message written as the output), one of :data:`TEXT_FORMATS`, or ``""`` for plain text.
    reasoning : str
        Text of reasoning blocks (``<think>...</think>`` and the like), taken out before any
        call was looked for: nothing in it is a call, and it is not content.
    """

    calls: tuple[Call, ...] = ()
    content: str = ""
    error: str | None = None
    repairs: tuple[str, ...] = ()
    format: str = ""
    reasoning: str = field(default="", compare=False)

    def to_json(self) -> dict[str, Any]:
        """The CLI record ``{"calls": [{"name", "arguments", "source"}], "content", "error", "repairs",
        "format"}``; strict JSON (a non-finite number never gets this far: the checker drops it)."""
        return {
            "calls": [{"name": c.name, "arguments": _plain(c.arguments), "source": c.source} for c in self.calls],
            "content": self.content,
            "error": self.error,
            "repairs": list(self.repairs),
            "format": self.format,
        }


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# JSON with unambiguous repairs
# ---------------------------------------------------------------------------------------------

_CONTROL_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _repair(text: str) -> tuple[str, list[str]]:
    """Remove trailing commas and escape raw control characters inside strings (string-aware)."""
    out: list[str] = []
    repairs: list[str] = []
    in_string = False
    escaped = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            elif ch < " ":
                out.append(_CONTROL_ESCAPES.get(ch, f"\\u{ord(ch):04x}"))
                repairs.append(f"escaped raw {'newline' if ch == chr(10) else repr(ch)} in a string at char {i}")
                i += 1
                continue
            out.append(ch)
        else:
            if ch == '"':
                in_string = True
            elif ch == "/" and text.startswith(("//", "/*"), i):
                # a comment is never JSON; outside a string, dropping it changes no value
                close = text.find("\n", i) if text.startswith("//", i) else text.find("*/", i + 2)
                stop = n if close < 0 else (close if text.startswith("//", i) else close + 2)
                repairs.append(f"removed a comment at char {i}")
                i = stop
                continue
            elif ch == ",":
                j = i + 1
                while j < n and text[j] in " \t\r\n":
                    j += 1
                if j < n and text[j] in "}]":
                    repairs.append(f"removed trailing comma at char {i}")
                    i += 1
                    continue
            out.append(ch)
        i += 1
    return "".join(out), repairs


def loads_repaired(text: str) -> tuple[Any, tuple[str, ...]]:
    """Parse JSON text, repairing only unambiguous damage.

    Parameters
    ----------
    text : str
        One JSON value.

    Returns
    -------
    value, repairs
        The parsed value and the repairs made (empty when the text was valid JSON).

    Raises
    ------
    ValueError
        The text is not JSON even after the repairs (``json.JSONDecodeError`` is one).
    """
    try:
        return json.loads(text), ()
    except json.JSONDecodeError:
        fixed, repairs = _repair(text)
        if not repairs:
            raise
        return json.loads(fixed), tuple(repairs)


def _match_end(text: str, start: int, quotes: str = '"', max_depth: int = _MAX_DEPTH) -> int:
    """Index just past the bracket that closes ``text[start]`` (``{`` or ``[``); -1 if unbalanced
    or nested deeper than ``max_depth``.

    ``quotes``: the characters that open a string (``"'`` for Python literals)."""
    if _over_scan_budget():
        return -1
    stack: list[str] = []
    in_string = ""
    escaped = False
    pairs = {"{": "}", "[": "]"}
    i, stop = start - 1, min(len(text), start + _MAX_CHARS)
    try:
        while i + 1 < stop:
            i += 1
            ch = text[i]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == in_string:
                    in_string = ""
                continue
            if ch in quotes:
                in_string = ch
            elif ch == "/" and text.startswith(("//", "/*"), i):
                # a comment: its brackets do not count ('{"a": 1} /* closes { */}', a helper's variant)
                close = text.find("\n", i) if text.startswith("//", i) else text.find("*/", i + 2)
                if close < 0:
                    return -1
                i = close if text.startswith("//", i) else close + 1
            elif ch in pairs:
                stack.append(pairs[ch])
                if len(stack) > max_depth:
                    return -1
            elif ch in "}]":
                if not stack or stack.pop() != ch:
                    return -1
                if not stack:
                    return i + 1
        return -1
    finally:
        _BUDGET.matched_chars += i - start + 1  # what a scan read: failed starts are bounded by it


def _decode_at(text: str, start: int) -> tuple[Any, int, tuple[str, ...]] | None:
    """Decode the JSON object or list starting at ``text[start]``: (value, end, repairs) or None.

    JSON first; when that fails, a Python literal (single quotes, ``True``/``None``, escaped
    quotes; :func:`python_literal`), within a per-parse budget that keeps hostile input cheap."""
    end = _match_end(text, start)
    if end >= 0:
        try:
            value, repairs = loads_repaired(text[start:end])
            return value, end, repairs
        except (ValueError, RecursionError):
            pass
    if _BUDGET.python_tries <= 0:
        return None
    end = _match_end(text, start, quotes="\"'")
    if end < 0 or end - start > _MAX_PYTHON_CHARS:
        return None
    _BUDGET.python_tries -= 1
    literal = text[start:end]
    comments = _without_comments(literal) if "/" in literal else literal
    try:
        value = python_literal(comments)
    except ValueError:
        value = _bare_keys_value(comments)
        if value is _MISSING:
            return None
        return value, end, (f"read an object with bare keys (JavaScript style, not JSON) at char {start}",)
    notes = (f"read a Python literal (not JSON) at char {start}",)
    return value, end, notes + (("removed a comment",) if comments != literal else ())


#: A bare key: a name after ``{`` or ``,`` and before ``:`` (``{name: "f", arguments: {city: "Oslo"}}``).
_BARE_KEY_RE = re.compile(r"([{,]\s*)([A-Za-z_$][\w$\-]*)(\s*:)")


def _bare_keys_value(text: str) -> Any:
    """The value of ``text`` read with its bare keys quoted (``{name: "f", arguments: {k: 1}}``, as
    Gemma and JavaScript write objects; a helper's variant x38: inside ``<tool_call>`` it gave no
    call), as JSON or else a Python literal; ``_MISSING`` when there are none or it still fails.
    Quotes are only added outside strings, so a value's ``a: b`` stays as written."""
    out, pos, changed = [], 0, False
    for i, ch in _outside_strings(text):
        if ch in "{," and i >= pos:
            m = _BARE_KEY_RE.match(text, i)
            if m and m.group(2) not in _LITERAL_NAMES:
                out.append(text[pos:m.start(2)] + json.dumps(m.group(2)))
                pos, changed = m.end(2), True
    if not changed:
        return _MISSING
    quoted = "".join(out) + text[pos:]
    try:
        return loads_repaired(quoted)[0]
    except (ValueError, RecursionError):
        pass
    try:
        return python_literal(quoted)
    except ValueError:
        return _MISSING


def _without_comments(text: str) -> str:
    """``text`` without ``//`` and ``/* */`` comments outside strings in single or double quotes
    (a helper's variant: single quotes and a comment together read as neither JSON nor Python)."""
    out, quote, escaped, i = [], "", False, 0
    while i < len(text):
        ch = text[i]
        if quote:
            was_escaped, escaped = escaped, ch == "\\" and not escaped
            if ch == quote and not was_escaped:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif text.startswith(("//", "/*"), i):
            close = text.find("\n", i) if text.startswith("//", i) else text.find("*/", i + 2)
            i = len(text) if close < 0 else (close if text.startswith("//", i) else close + 2)
            continue
        out.append(ch)
        i += 1
    return "".join(out)


#: Python-literal fallbacks tried per parse, and the longest literal read (ast work stays small).
_PYTHON_TRIES = 64
_MAX_PYTHON_CHARS = 20_000


class _Budget(threading.local):
    python_tries = _PYTHON_TRIES
    matched_chars = 0  # characters :func:`_match_end` and :func:`_paren_end` have read in this parse
    unread_call = False  # a scan stopped before a call-shaped object
    scan_spent = False  # the parse's scan budget ran out (:data:`_PARSE_SCAN_CHARS`)


#: Characters the bracket and parenthesis scans may read in one parse, all readers together: each
#: reader that starts a scan at every header or line ("Action Input: {" 5,000 times, a Python call
#: cut inside a string on every line) made a 60,000-character output take 10 s and a 190,000-character
#: one 113 s (round seventeen's hostile variants, 2026-12-07). Twenty times the reading bound: a
#: real output, however many calls it holds, reads each character a few times at most.
_PARSE_SCAN_CHARS = 20 * _MAX_CHARS


def _over_scan_budget() -> bool:
    """Whether this parse's scans have read :data:`_PARSE_SCAN_CHARS` (recorded for the error)."""
    if _BUDGET.matched_chars < _PARSE_SCAN_CHARS:
        return False
    _BUDGET.scan_spent = True
    return True


_BUDGET = _Budget()

#: Names a model writes for JSON's constants inside a Python-style literal.
_LITERAL_NAMES = {"true": True, "false": False, "null": None, "none": None, "True": True, "False": False,
                  "None": None}


class _ConstantNames(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in _LITERAL_NAMES:
            return ast.copy_location(ast.Constant(_LITERAL_NAMES[node.id]), node)
        return node


def python_literal(text: str) -> Any:
    """Read one Python-style literal (``{'a': 'it\\'s, fine', 'n': None}``) as a JSON value.

    Parsed with :func:`ast.parse` and evaluated with :func:`ast.literal_eval`, never ``eval``;
    JSON's ``true``/``false``/``null`` are read too, and a raw newline inside a string is
    escaped (models write multi-line strings that way). Tuples and sets become lists.

    Raises
    ------
    ValueError
        Not a literal (a call, a name, an operator), too deep, or an integer too long to
        convert (Python's 4300-digit limit).
    """
    for attempt in (text.strip(), _escape_raw_newlines(text.strip())):
        try:
            tree = parse_python(attempt)
            return _jsonable(ast.literal_eval(_ConstantNames().visit(tree).body))
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as exc:
            problem = exc
    raise ValueError(f"not a Python literal ({type(problem).__name__})")


def _escape_raw_newlines(text: str) -> str:
    out, quote, escaped = [], "", False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            elif ch in "\r\n\t":
                ch = _CONTROL_ESCAPES[ch]
        elif ch in "\"'":
            quote = ch
        out.append(ch)
    return "".join(out)


#: Characters that start positions yielding no JSON value may read per scan (a bracket in prose
#: that never closes reads on to its depth or the reading bound), and the openers of call-shaped
#: objects still tried after that: 5,000 brackets of prose before a bare call hid the call
#: (round sixteen's variants, 2026-12-07); a count of start positions bounded the wrong thing.
_FAILED_SCAN_CHARS = 1_000_000
_KEYED_OPEN_RE = re.compile(r"""\{\s*["']?(?:%s|function_call|functionCall|toolUse)["']?\s*:"""
                            % "|".join(NAME_KEYS))


def _scan_json(text: str, *, lists: bool = True) -> list[tuple[Any, int, int, tuple[str, ...]]]:
    """Every JSON object (and list) in ``text``, left to right: (value, start, end, repairs).

    Start positions that yield no value may read :data:`_FAILED_SCAN_CHARS` characters in all;
    then only openers of call-shaped objects (:data:`_KEYED_OPEN_RE`) are tried, at most
    :data:`_MAX_STARTS` of them, and one still left after those is recorded in
    ``_BUDGET.unread_call`` (the parse then says a call was not read)."""
    found = []
    failed_chars = keyed_tries = 0
    i = 0
    opener = re.compile(r"[\{\[]" if lists else r"\{")
    while True:
        if failed_chars < _FAILED_SCAN_CHARS:
            m = opener.search(text, i)
        elif keyed_tries < _MAX_STARTS:
            keyed_tries += 1
            m = _KEYED_OPEN_RE.search(text, i)
        else:
            _BUDGET.unread_call = _BUDGET.unread_call or _KEYED_OPEN_RE.search(text, i) is not None
            break
        if not m:
            break
        read_before = _BUDGET.matched_chars
        got = _decode_at(text, m.start())
        if got is None:
            failed_chars += _BUDGET.matched_chars - read_before
            i = m.start() + 1
            continue
        value, end, repairs = got
        found.append((value, m.start(), end, repairs))
        i = end
    return found


# ---------------------------------------------------------------------------------------------
# Reasoning blocks: a call drafted while thinking is never a call
# ---------------------------------------------------------------------------------------------

#: Opening and closing markers of reasoning blocks that models emit in their output (Qwen3 /
#: DeepSeek-R1 ``<think>``, Claude-style ``<thinking>``, Magistral ``[THINK]``, gpt-oss's
#: analysis channel, Gemma's ``<start_of_thought>``, Kimi's ``◁think▷``, Cohere Command R7B's
#: ``<|START_THINKING|>``...). Parsers that scan the whole completion
#: before splitting off reasoning return the draft call (PrimeIntellect-ai/renderers#80).
_REASONING_OPEN = re.compile(
    r"<(think|thinking|thought|reasoning|reflection|scratchpad|seed:think)(?:\s[^<>]*)?>|<\|begin_of_thought\|>|◁think▷"
    r"|<start_of_thought>|\[THINK\]|<\|START_THINKING\|>"
    r"|(?:<\|start\|>\s*assistant\s*)?<\|channel\|>\s*analysis\s*<\|message\|>", flags=re.I)
_REASONING_CLOSE = {"think": r"</think\s*>", "thinking": r"</thinking\s*>", "thought": r"</thought\s*>",
                    "reasoning": r"</reasoning\s*>", "reflection": r"</reflection\s*>",
                    "scratchpad": r"</scratchpad\s*>", "seed:think": r"</seed:think\s*>"}
_OTHER_CLOSE = ((r"<|begin_of_thought|>", r"<\|end_of_thought\|>"), ("<start_of_thought>", r"<end_of_thought>"),
                ("[THINK]", r"\[/THINK\]"), ("◁think▷", r"◁/think▷"),
                ("<|START_THINKING|>", r"<\|END_THINKING\|>"),
                ("<|channel|>", r"<\|end\|>|(?=<\|start\|>)|(?=<\|channel\|>)"),
                ("<|start|>", r"<\|end\|>|(?=<\|start\|>)|(?=<\|channel\|>)"))
#: A closing marker with no opener before it: the chat template put the opener in the prompt.
_LEADING_CLOSE = re.compile(r"</(?:think|thinking|reasoning|seed:think)\s*>|<\|end_of_thought\|>|\[/THINK\]"
                            r"|◁/think▷|<\|END_THINKING\|>",
                            flags=re.I)


#: How far back (characters) and how many opening braces :func:`_inside_object` looks at, and how
#: many markers :func:`_reasoning_marker` tests: hostile output full of markers stays linear.
_OBJECT_LOOKBACK, _OBJECT_STARTS, _MARKER_TRIES = 4000, 16, 64


def _inside_object(text: str, pos: int) -> bool:
    """Whether ``pos`` lies inside a JSON object that closes after it (a ``<think>`` named in a call's
    argument, "Qwen3 puts its reasoning in <think> tags": a helper's variant, read as reasoning)."""
    lo, at, starts = max(0, pos - _OBJECT_LOOKBACK), pos, []
    while len(starts) < _OBJECT_STARTS:
        at = text.rfind("{", lo, at)
        if at < 0:
            break
        starts.append(at)
    return any(_match_end(text[:pos + _OBJECT_LOOKBACK], b) > pos for b in starts)


def _reasoning_marker(pattern: re.Pattern[str], text: str, pos: int = 0) -> re.Match[str] | None:
    """The first ``pattern`` match from ``pos`` that is not inside a JSON object (after
    :data:`_MARKER_TRIES` markers inside objects, the next one counts whatever it is in)."""
    for tries, m in enumerate(pattern.finditer(text, pos)):
        if tries >= _MARKER_TRIES or not _inside_object(text, m.start()):
            return m
    return None


def _split_reasoning(text: str) -> tuple[str, str, str]:
    """``(visible, reasoning, unclosed)``: the text with every reasoning block taken out, the
    blocks' text, and the opening marker of a block still open at the end (``""`` if none).
    Everything after an unclosed opener is reasoning: a call there was never finished thinking."""
    visible: list[str] = []
    reasoning: list[str] = []
    pos = 0
    opener = _reasoning_marker(_REASONING_OPEN, text)
    lead = _reasoning_marker(_LEADING_CLOSE, text)
    if lead and (opener is None or lead.start() < opener.start()):
        reasoning.append(text[: lead.start()])
        pos = lead.end()
    while True:
        m = _reasoning_marker(_REASONING_OPEN, text, pos)
        if not m:
            visible.append(text[pos:])
            return _glued(visible), "\n".join(r.strip() for r in reasoning if r.strip()), ""
        visible.append(text[pos: m.start()])
        tag = (m.group(1) or "").lower()
        close_re = _REASONING_CLOSE.get(tag) or next(c for o, c in _OTHER_CLOSE if m.group(0).lower()
                                                     .startswith(o.lower()))
        close = re.compile(close_re, flags=re.I).search(text, m.end())
        if close is None:
            reasoning.append(text[m.end():])
            return _glued(visible), "\n".join(r.strip() for r in reasoning if r.strip()), m.group(0)
        reasoning.append(text[m.end(): close.start()])
        pos = close.end()


def _glued(pieces: list[str]) -> str:
    """The text around removed blocks joined, with a space where two words would touch ("Let me
    think again.<think>...</think>No change" read "again.No change"; round nineteen's parse variants)."""
    out = ""
    for piece in pieces:
        if out and piece and not out[-1].isspace() and not piece[0].isspace():
            out += " "
        out += piece
    return out


# ---------------------------------------------------------------------------------------------
# Candidates: what looks like a call, before offer and schema checks
# ---------------------------------------------------------------------------------------------

_MISSING = object()


@dataclass(slots=True)
class _Cand:
    name: Any
    arguments: Any  # dict, str (JSON or bare), None, or anything the model wrote
    positional: tuple[Any, ...] = ()
    weak: bool = False  # a bare "API: word" / "Action: word" line without arguments: maybe prose
    offered_only: bool = False  # {"name": X} alone, a line "x(...)": a call only if X is offered, else data
    cut: bool = False  # a call the output ended inside (token limit)
    source: str = ""  # one of SOURCES, set once the format is known
    answer: bool = False  # LangChain's {"action": "Final Answer", "action_input": text}: content, not a call
    note: str = ""  # how the call was read, when it was read out of a loose shape (a repair)


#: The action names LangChain's agents give their final answer (not a tool).
_FINAL_ANSWER_NAMES = frozenset({"final answer", "final_answer", "finalanswer"})


#: Keys that wrap one call object: OpenAI's ``function`` and legacy ``function_call``, Gemini API's
#: ``functionCall``, Amazon Bedrock Converse API's ``toolUse``.
_CALL_WRAPPERS = ("function", "function_call", "functionCall", "toolUse")


def _from_object(obj: Any, *, depth: int = 0) -> list[_Cand] | None:
    """Calls in one JSON value, or None when the value is not call-shaped (then it is data)."""
    if depth > 3:
        return None
    if isinstance(obj, list):
        out: list[_Cand] = []
        for item in obj:
            got = _from_object(item, depth=depth + 1)
            if got:
                out.extend(got)
        return out or None
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("tool_calls"), list) and "name" not in obj:
        return _from_object(obj["tool_calls"], depth=depth + 1) or None
    # the OpenAI wrapper {"function": {...}}, its legacy form {"function_call": {"name", "arguments"}},
    # Gemini's {"functionCall": {"name", "args"}} and Bedrock Converse's {"toolUse": {"name", "input"}}
    # (parts of a Gemini or Bedrock API message)
    function = next((obj[k] for k in _CALL_WRAPPERS if isinstance(obj.get(k), dict)), None)
    if isinstance(function, dict) and "name" in function:
        if "toolUse" in obj and obj["toolUse"] is function:
            function = {**function, "type": "tool_use"}  # its "input" is the arguments, as in a tool_use block
        return _from_object(function, depth=depth + 1)
    if "name" not in obj:
        inner = _api_inner(obj)
        if inner is not None:  # a whole API message or response: the calls in it (a helper's variants)
            return [c for item in inner for c in _from_object(item, depth=depth + 1) or ()] or None
    name = obj.get("name")
    if not isinstance(name, str):
        name = next((obj[k] for k in NAME_KEYS[1:] if isinstance(obj.get(k), str) and obj[k]), None)
        if name is None and "name" not in obj:
            return _loose_call(obj, None)  # {"weather:current": {...}}: the name as the one key
        if name is None and obj["name"] is None and isinstance(obj.get(ARGUMENT_KEYS[0]), (dict, str)):
            # {"name": null, "arguments": ...}: a call that lost its name, an error the model can act on
            # (round nineteen's parse variants: a native call with a null name was shown as the answer)
            return [_Cand(None, obj[ARGUMENT_KEYS[0]])]
        if name is None or not any(k in obj for k in ARGUMENT_KEYS):
            return None
    if set(obj) == {"name"}:  # a call without arguments, or data ({"name": "my-package"})
        return [_Cand(name, _MISSING, offered_only=True)]
    for key in ARGUMENT_KEYS:
        if key in obj:
            if _is_definition(obj, obj[key]):
                return None
            pairs = _name_value_pairs(obj[key])
            if pairs is not None:  # [{"name": "location", "value": "Oslo"}] (round nineteen's parse variants)
                return [_Cand(name, pairs, offered_only=True, note="read the arguments from a list of name/value pairs")]
            if not isinstance(obj[key], (dict, str)) and obj[key] is not None:
                return None  # {"name": "Alice", "arguments": 3}: a record, not a call
            if key == "input" and not (isinstance(obj[key], dict) or str(obj[key]).lstrip().startswith("{")):
                return None  # {"name": "form", "input": "text"}: a record; tool_use's input is an object
            if key == "input" and obj.get("type") != "tool_use":
                # {"name": "signup", "input": {...}} may be a record: a call only when the name is offered
                return [_Cand(name, obj[key], offered_only=True)]
            if key == "action_input" and str(name).strip().lower() in _FINAL_ANSWER_NAMES:
                # LangChain's JSON agent ends with {"action": "Final Answer", "action_input": "..."}: the answer
                return [_Cand(name, obj[key], answer=True)]
            return [_Cand(name, obj[key])]
    return _loose_call(obj, name)


def _name_value_pairs(value: Any) -> dict[str, Any] | None:
    """``[{"name": k, "value": v}, ...]`` as ``{k: v, ...}`` (arguments written as a list of
    parameters), or None when ``value`` is not such a list (distinct string names)."""
    if not isinstance(value, list) or not value or not all(
            isinstance(p, dict) and set(p) == {"name", "value"} and isinstance(p["name"], str) for p in value):
        return None
    names = [p["name"] for p in value]
    return {p["name"]: p["value"] for p in value} if len(set(names)) == len(names) else None


#: Misspellings and synonyms of an arguments key small models write (round nineteen's parse
#: variants, 2026-12-07: "arguements", "kwargs", "params" lost the call without an error).
_LOOSE_ARGUMENT_KEY_RE = re.compile(r"(?i)^(?:arg\w{0,8}|param\w{0,8}|kwargs|inputs|fields|values)$")
#: Keys of a tool definition or a call record that never hold an argument of a flat call.
_NOT_FLAT_ARGUMENT_KEYS = frozenset({"description", "type", "title", "properties", "required", "id", "index",
                                     "call_id", "tool_call_id", "role", "content", "status", "result", "output"})


def _loose_call(obj: dict, name: Any) -> list[_Cand] | None:
    """A call written in a loose shape, read only when its name is an offered tool (else data):
    ``{"name": "web:search", "arguements": {...}}`` (an arguments key misspelt or renamed,
    :data:`_LOOSE_ARGUMENT_KEY_RE`), ``{"name": "weather:current", "location": "Oslo"}`` (the
    arguments beside the name) and ``{"weather:current": {"location": "Oslo"}}`` (the name as the
    one key). Each is reported in ``repairs``. Round nineteen's parse variants (2026-12-07): all
    three were lost without an error, the JSON shown as the answer."""
    if isinstance(obj.get("name"), str):
        rest = {k: v for k, v in obj.items() if k != "name"}
        loose = [k for k in rest if _LOOSE_ARGUMENT_KEY_RE.match(k)]
        if len(rest) == 1 and loose and isinstance(rest[loose[0]], (dict, str)):
            return [_Cand(name, rest[loose[0]], offered_only=True,
                          note=f"read the key {loose[0]!r} as the call's arguments")]
        if rest and not loose and not set(rest) & _NOT_FLAT_ARGUMENT_KEYS:
            return [_Cand(name, rest, offered_only=True, note="read the keys beside the tool's name as its arguments")]
        return None
    if "name" not in obj and len(obj) == 1:
        ((key, value),) = obj.items()
        if isinstance(value, dict) and re.fullmatch(r"[\w.:-]{1,128}", key):
            return [_Cand(key, value, offered_only=True, note="read the object's one key as the tool's name")]
    return None


#: Block types of an API message's text and reasoning: Anthropic Messages API ``text`` and ``thinking``
#: blocks, OpenAI Chat Completions ``text`` parts, OpenAI Responses API ``output_text`` and ``reasoning``.
_TEXT_BLOCKS = frozenset({"text", "output_text"})
_THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking", "reasoning"})
#: Block types that mark a list as an API message's content (Anthropic ``tool_use``, Responses ``function_call``).
_API_BLOCKS = _TEXT_BLOCKS | _THINKING_BLOCKS | {"tool_use", "function_call", "message"}


def _api_blocks(blocks: list[Any], items: list[Any], texts: list[str], thoughts: list[str], depth: int) -> None:
    """Sort an API message's content blocks (or Gemini parts) into call items, text and reasoning."""
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in _TEXT_BLOCKS or (kind is None and isinstance(block.get("text"), str)):
            # Gemini marks a reasoning part with "thought": true (Gemini API, thinking)
            (thoughts if block.get("thought") is True else texts).append(str(block.get("text") or ""))
        elif kind in _THINKING_BLOCKS:
            summary = block.get("summary")  # Responses API: [{"type": "summary_text", "text"}]
            pieces = [block.get("thinking")] + [p.get("text") for p in summary if isinstance(p, dict)] \
                if isinstance(summary, list) else [block.get("thinking")]
            thoughts.extend(p for p in pieces if isinstance(p, str))
        elif kind == "message" and isinstance(block.get("content"), list) and depth < 4:
            _api_blocks(block["content"], items, texts, thoughts, depth + 1)  # a Responses API output message
        else:
            items.append(block)  # tool_use, function_call, {"functionCall": ...}; anything else reads as no call


def _api_parts(value: Any, depth: int = 0) -> tuple[list[Any], list[str], list[str]] | None:
    """A whole LLM-API message or response split into (items that may be calls, text pieces,
    reasoning pieces); None when ``value`` is not one. A small model trained on API transcripts
    may write the whole message as its output (a helper's variants: the calls were lost in silence).

    Read: the Anthropic Messages API message (``{"role", "content": [{"type": "text" | "thinking" |
    "tool_use", ...}]}``, or its content list alone); the OpenAI Chat Completions message
    (``{"role", "content", "tool_calls"}``, the legacy ``function_call``), its response
    (``{"choices": [{"message"}]}``: the first choice only, the others are alternatives, not more
    calls), Ollama's and Cohere v2's ``{"message": {...}}``; the OpenAI Responses API's ``{"output":
    [{"type": "function_call" | "message" | "reasoning"}]}``; Gemini's ``{"parts": [{"text"} |
    {"functionCall"}]}``, ``{"content": {"parts"}}`` and ``{"candidates": [{"content"}]}``; Amazon
    Bedrock Converse's ``{"output": {"message": {"content": [{"text"} | {"toolUse"}]}}}``."""
    if depth > 4:
        return None
    items: list[Any] = []
    texts: list[str] = []
    thoughts: list[str] = []
    if isinstance(value, list):
        typed = [b.get("type") for b in value if isinstance(b, dict)]
        gemini = [b for b in value if isinstance(b, dict) and {"functionCall", "toolUse", "text"} & b.keys()]
        if not value or len(typed) < len(value) or not (set(typed) & _API_BLOCKS or len(gemini) == len(value)):
            return None
        _api_blocks(value, items, texts, thoughts, depth)
        return items, texts, thoughts
    if not isinstance(value, dict) or "name" in value:
        return None
    for key, inner in (("choices", "message"), ("choices", "delta"), ("candidates", "content")):
        listed = value.get(key)
        if isinstance(listed, list) and listed and isinstance(listed[0], dict) and isinstance(listed[0].get(inner),
                                                                                              dict):
            return _api_parts(listed[0][inner], depth + 1)  # OpenAI's and Gemini's response wrappers
    message = value.get("message")
    if isinstance(value.get("output"), dict) and isinstance(value["output"].get("message"), dict):
        message = value["output"]["message"]  # Bedrock Converse: {"output": {"message": {...}}}
    if isinstance(message, dict) and ({"role", "tool_calls", "content"} & message.keys()):
        return _api_parts(message, depth + 1)  # Ollama's /api/chat and Cohere's v2 chat responses
    content = value.get("content")
    if isinstance(content, dict) and isinstance(content.get("parts"), list):
        return _api_parts(content, depth + 1)  # a Gemini candidate's content
    known = False
    for key in ("content", "parts", "output"):  # Anthropic / OpenAI content, Gemini parts, Responses output
        got = _api_parts(value[key], depth + 1) if isinstance(value.get(key), list) else None
        if got is not None:
            known = True
            items.extend(got[0])
            texts.extend(got[1])
            thoughts.extend(got[2])
    calls_field = value.get("tool_calls")
    legacy = value.get("function_call")
    if isinstance(calls_field, list) or isinstance(legacy, dict) or isinstance(value.get("role"), str):
        known = True  # an OpenAI Chat Completions message
        items.extend(calls_field if isinstance(calls_field, list) else ())
        if isinstance(legacy, dict):
            items.append({"function_call": legacy})
        if isinstance(content, str):
            texts.append(content)
        for key in ("reasoning_content", "reasoning", "tool_plan"):  # vLLM's, DeepSeek's; Cohere's plan
            if isinstance(value.get(key), str):
                thoughts.append(value[key])
    for key in ("functionCall", "toolUse"):
        if isinstance(value.get(key), dict):
            known = True
            items.append({key: value[key]})
    return (items, texts, thoughts) if known else None


def _api_inner(obj: dict) -> list[Any] | None:
    """The items of an API message or response that may be calls (:func:`_api_parts`), or None."""
    got = _api_parts(obj)
    return got[0] if got is not None else None


def _api_message(text: str) -> tuple[list[_Cand], str, str, list[str], bool] | None:
    """The whole output as one API message or response with calls in it (:func:`_api_parts`):
    (calls, its text as content, its reasoning, repairs, whether a code fence held it); None
    when the output is anything else, or such a message without a call (then it is data)."""
    body = text.strip()
    fence = re.fullmatch(r"```[\w\-]*\s*\n?(.*?)\n?```", body, flags=re.S)
    if fence:
        body = fence.group(1).strip()
    if not body.startswith(("{", "[")):
        return None
    got = _decode_at(body, 0)
    if got is None or body[got[1]:].strip():
        return None
    parts = _api_parts(got[0])
    if parts is None:
        return None
    items, texts, thoughts = parts
    cands = [c for item in items for c in _from_object(item) or ()]
    if not cands:
        return None
    content = "\n\n".join(t.strip() for t in texts if t.strip())
    reasoning = "\n\n".join(t.strip() for t in thoughts if t.strip())
    return cands, content, reasoning, list(got[2]), bool(fence)


def _is_definition(obj: Mapping[str, Any], arguments: Any) -> bool:
    """A tool *definition* echoed back (``{"name", "description", "parameters": {JSON Schema}}``) is
    data, not a call."""
    return (isinstance(arguments, dict) and arguments.get("type") == "object"
            and isinstance(arguments.get("properties"), dict)
            and ("description" in obj or set(arguments) <= {"type", "properties", "required", "additionalProperties",
                                                            "$schema", "title", "description"}))


# ---------------------------------------------------------------------------------------------
# Python-style calls (ast, never eval)
# ---------------------------------------------------------------------------------------------


def _literal(node: ast.AST) -> Any:
    value = ast.literal_eval(node)
    return _jsonable(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, set):
        return [_jsonable(v) for v in sorted(value, key=repr)]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    raise ValueError(f"not a JSON value: {type(value).__name__}")


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _python_calls(source: str, names: Mapping[str, str] | None = None) -> list[_Cand] | None:
    """Calls in Python-style source (``f(a=1)``, ``[f(a=1), g()]``, one per line); None if not that.

    ``names`` maps placeholder identifiers back to tool names that are not identifiers.
    """
    try:
        tree = parse_python("\n".join(line.strip() for line in source.strip().splitlines()), mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    nodes: list[ast.AST] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.Expr):
            return None
        value = stmt.value
        nodes.extend(value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value])
    if not nodes:
        return None
    out = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            return None
        if _dotted(node.func) == "print" and len(node.args) == 1 and not node.keywords and isinstance(
                node.args[0], ast.Call):
            node = node.args[0]  # Gemma's tool_code habit: print(default_api.f(...)) (a helper's variant)
        name = _dotted(node.func)
        if name is None:
            return None
        name = (names or {}).get(name, name)
        if name.endswith(".call"):  # Llama 3.1 built-ins: brave_search.call(query=...)
            name = name[: -len(".call")]
        try:
            kwargs = {kw.arg: _literal(kw.value) for kw in node.keywords if kw.arg is not None}
            positional = tuple(_literal(a) for a in node.args)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            out.append(_Cand(name, "<arguments that are not literals>"))
            continue
        if any(kw.arg is None for kw in node.keywords):
            out.append(_Cand(name, "<**kwargs>"))
            continue
        out.append(_Cand(name, kwargs, positional))
    return out


def _call_with_name(name: str, arg_text: str) -> list[_Cand] | None:
    """``name`` + ``(k=v, ...)``: parse as a Python call even when the name is not an identifier."""
    return _python_calls(f"_eris_tool{arg_text}", {"_eris_tool": name})


# ---------------------------------------------------------------------------------------------
# Gemma's call syntax: bare keys, <|"|> string delimiters
# ---------------------------------------------------------------------------------------------

_GEMMA_QUOTE = '<|"|>'
_GEMMA_QUOTES = (_GEMMA_QUOTE, "<escape>")  # Gemma, FunctionGemma


class _GemmaReader:
    """Recursive-descent reader for ``{key:<|"|>text<|"|>,n:10,flag:true,list:[...]}``."""

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def _ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def value(self, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise ValueError("too deep")
        self._ws()
        t, p = self.text, self.pos
        for quote in _GEMMA_QUOTES:
            if t.startswith(quote, p):
                end = t.find(quote, p + len(quote))
                if end < 0:
                    raise ValueError("unclosed string")
                self.pos = end + len(quote)
                return t[p + len(quote): end]
        if p < len(t) and t[p] == "'":  # single-quoted: commas inside stay in the value
            m = re.compile(r"'((?:[^'\\]|\\.)*)'", flags=re.S).match(t, p)
            if not m:
                raise ValueError("unclosed string")
            self.pos = m.end()
            return re.sub(r"\\(.)", r"\1", m.group(1), flags=re.S)
        if p < len(t) and t[p] == '"':
            value, end = json.JSONDecoder().raw_decode(t, p)
            self.pos = end
            return value
        if p < len(t) and t[p] == "{":
            return self.obj(depth + 1)
        if p < len(t) and t[p] == "[":
            self.pos += 1
            items = []
            self._ws()
            if t.startswith("]", self.pos):
                self.pos += 1
                return items
            while True:
                items.append(self.value(depth + 1))
                self._ws()
                if t.startswith(",", self.pos):
                    self.pos += 1
                elif t.startswith("]", self.pos):
                    self.pos += 1
                    return items
                else:
                    raise ValueError("expected , or ]")
        m = re.compile(r"[^,\}\]]*").match(t, p)
        word = m.group(0).strip() if m else ""
        self.pos = m.end() if m else p
        if not word:
            raise ValueError("empty value")
        try:
            return json.loads(word)
        except ValueError:
            return word

    def obj(self, depth: int = 0) -> dict[str, Any]:
        t = self.text
        if not t.startswith("{", self.pos):
            raise ValueError("expected {")
        self.pos += 1
        out: dict[str, Any] = {}
        self._ws()
        if t.startswith("}", self.pos):
            self.pos += 1
            return out
        while True:
            self._ws()
            if t.startswith((*_GEMMA_QUOTES, '"', "'"), self.pos):
                key = self.value(depth)
            else:
                m = re.compile(r"[\w.\-]+").match(t, self.pos)
                if not m:
                    raise ValueError("expected a key")
                key = m.group(0)
                self.pos = m.end()
            self._ws()
            if not t.startswith(":", self.pos):
                raise ValueError("expected :")
            self.pos += 1
            out[str(key)] = self.value(depth)
            self._ws()
            if t.startswith(",", self.pos):
                self.pos += 1
            elif t.startswith("}", self.pos):
                self.pos += 1
                return out
            else:
                raise ValueError("expected , or }")


# ---------------------------------------------------------------------------------------------
# Text formats: each returns (candidates, spans removed from content, repairs) or None
# ---------------------------------------------------------------------------------------------

_Found = tuple[list[_Cand], list[tuple[int, int]], list[str]]


#: Openers of Gemma's call syntax: Gemma's ``<|tool_call>``, FunctionGemma's
#: ``<start_function_call>`` (vLLM PR #31218), or a bare ``call:NAME{`` (the same shape with the
#: special tokens stripped by the server).
_GEMMA_OPEN_RE = re.compile(r"(?:<\|tool_call>|<start_function_call>)\s*(?:call:)?\s*(" + _NAME + r")\s*"
                            r"|(?<![\w.:\-])call:\s*(" + _NAME + r")\s*(?=\{)")
_GEMMA_CLOSE_RE = re.compile(r"\s*(?:<tool_call\|>|<end_function_call>)")


def _fmt_gemma(text: str) -> _Found | None:
    cands, spans, repairs = [], [], []
    for m in _GEMMA_OPEN_RE.finditer(text):
        if spans and m.start() < spans[-1][1]:
            continue  # inside the previous call's arguments
        reader = _GemmaReader(text, m.end())
        cut = False
        try:
            args = reader.obj() if text.startswith("{", m.end()) else {}
        except (ValueError, RecursionError):
            args = "<unreadable Gemma arguments>"
            cut = reader.pos >= len(text) or _GEMMA_CLOSE_RE.search(text, m.end()) is None
        end = reader.pos
        close = _GEMMA_CLOSE_RE.match(text, end)
        if not close and not text.startswith("{", m.end()) and not text[m.end():].strip():
            cut = True  # the output ended right after the name
        end = close.end() if close else (len(text) if cut else end)
        cands.append(_Cand(m.group(1) or m.group(2), args, cut=cut))
        spans.append((m.start(), end))
    if not cands:
        return None
    tail = _GEMMA_TAIL_RE.match(text, spans[-1][1])
    cut_name = re.sub(r"^.*?call:", "", tail.group(0).strip()) if tail and "call:" in tail.group(0) else ""
    if tail and tail.group(0).strip() and not (cut_name and not str(cands[-1].name).startswith(cut_name)):
        spans[-1] = (spans[-1][0], len(text))  # "call:get_batt": the start of a copy the token limit cut
        repairs.append("ignored a call cut off at the end of the output")
    elif tail and tail.group(0).strip():
        pass  # the start of another tool's call: left in the content, where calls() reports it as cut
    elif cands[-1].cut and len(cands) > 1 and str(cands[-2].name).startswith(str(cands[-1].name)):
        # a copy of the call before it (the name itself may be cut: "call:get_we"); another tool's
        # call stays, and the checker reports it cut (a helper's variant: dropped, error null)
        cands.pop()  # the token limit cut the last copy: the complete calls before it stand
        spans[-2] = (spans[-2][0], len(text))
        spans.pop()
        repairs.append("ignored a call cut off at the end of the output")
    return _once_back_to_back(cands, spans, repairs)


def _once_back_to_back(cands: list[_Cand], spans: list[tuple[int, int]], repairs: list[str]) -> _Found:
    """Back-to-back copies of the same call read once: a model that did not stop at its end
    marker repeats the call up to the token limit (parse-39, FunctionGemma; the same in
    ``<tool_call>`` tags)."""
    kept, kept_spans = [cands[0]], [spans[0]]
    for cand, span in zip(cands[1:], spans[1:]):
        if cand.name == kept[-1].name and cand.arguments == kept[-1].arguments:
            kept_spans[-1] = (kept_spans[-1][0], span[1])
            if "read back-to-back copies of the same call once" not in repairs:
                repairs.append("read back-to-back copies of the same call once")
            continue
        kept.append(cand)
        kept_spans.append(span)
    return kept, kept_spans, repairs


#: What is left when the token limit cuts a call's opener or name: ``call:get_batt``, ``<start_fun``.
_GEMMA_TAIL_RE = re.compile(r"\s*(?:(?:<start_function_call>|<\|tool_call>)\s*)?"
                            r"(?:c(?:a(?:l(?:l(?::[\w.:\-]*)?)?)?)?)?\s*\Z|\s*<[^<>\s]*\Z")


#: An object written as a value in code: after an assignment or inside a method call on its line
#: (``payload = json.dumps({...})``, ``let user = {...};``), it is data (parse-17's kind). A plain
#: name before the bracket is not code: "I'll call get_weather({...})" stays a call.
_CODE_VALUE_RE = re.compile(r"(?:[\w\]\)]\s*=|\w\.\w[\w.]*\()\s*$")


def _json_cands_in(segment: str, offset: int, *, skip_code_values: bool = False
                   ) -> tuple[list[_Cand], list[tuple[int, int]], list[str]]:
    """Calls in the JSON values of ``segment`` (spans shifted by ``offset``); ``skip_code_values``:
    leave out a value written in code (:data:`_CODE_VALUE_RE`)."""
    cands, spans, repairs = [], [], []
    for value, start, end, fixed in _scan_json(segment):
        # the look-back stops at 256 characters: 5,000 "{}" on one line made it quadratic (9 s)
        line_start = max(segment.rfind("\n", 0, start) + 1, start - 256)
        if skip_code_values and _CODE_VALUE_RE.search(segment[line_start:start]):
            continue
        got = _from_object(value)
        if got:
            cands.extend(got)
            spans.append((offset + start, offset + end))
            repairs.extend(fixed)
    return cands, spans, repairs


#: Hermes/Qwen's ``<tool_call>`` and Phi-4-mini's (and Granite's) ``<|tool_call|>``, each with its
#: closing tag (``</tool_call>``, ``<|/tool_call|>``), LFM2's ``<|tool_call_start|>...<|tool_call_end|>``,
#: InternLM2's ``<|action_start|><|plugin|>...<|action_end|>`` and Cohere Command R7B's
#: ``<|START_ACTION|>...<|END_ACTION|>``; Gemma's ``<|tool_call>`` is the ``gemma`` format.
_TOOL_CALL_OPEN_RE = re.compile(r"<tool_call>|<\|tool_call\|>|<\|tool_call_start\|>|<\|action_start\|>\s*<\|plugin\|>"
                                r"|<\|START_ACTION\|>")
_TOOL_CALL_CLOSE_RE = re.compile(r"</tool_call>|<\|/tool_call\|>|<\|tool_call_end\|>|<\|action_end\|>|<\|END_ACTION\|>")
#: GLM-4.5's ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>...</tool_call>``.
_GLM_HEAD_RE = re.compile(r"\s*(" + _NAME + r")\s*(?:<arg_key>|\Z)")
_ARG_KEY_RE = re.compile(r"<arg_key>([^<>]*)</arg_key>\s*<arg_value>(.*?)(?:</arg_value>|\Z)", flags=re.S)


def _arg_key_call(segment: str, closed: bool) -> list[_Cand]:
    """GLM-4.5's call in a ``<tool_call>`` tag: the name, then ``<arg_key>``/``<arg_value>`` pairs (a
    value is JSON when it reads as JSON, else text); a closed tag with only a name is a call without
    arguments (unclosed, the name itself may be cut)."""
    head = _GLM_HEAD_RE.match(segment)
    if head is None or (head.group(0).rstrip().endswith(head.group(1)) and not closed):
        return []
    body = segment[head.start(1) + len(head.group(1)):]
    if re.sub(r"\s", "", _ARG_KEY_RE.sub("", body)):
        return []  # other text beside the pairs: not this form
    cut = not closed and _last_open(body, "<arg_value>", "</arg_value>")
    args = {key.strip(): value for key, value in _tagged_parameters(_ARG_KEY_RE, body).items()}
    return [_Cand(head.group(1), args, cut=cut)]


def _fmt_tool_call_tag(text: str) -> _Found | None:
    opens, inside, boundary = [], False, 0
    tags = sorted([(m.start(), m.end(), True) for m in _TOOL_CALL_OPEN_RE.finditer(text)]
                  + [(m.start(), m.end(), False) for m in _TOOL_CALL_CLOSE_RE.finditer(text)])
    for start, end, is_open in tags:
        if is_open:
            opens.append((start, end))
        elif not inside:
            # a closing tag with no opening one: the opening tag was the prompt's last token (or the
            # model dropped it), so the call runs from the last boundary to here (a helper's variants
            # of parse-05: calls read as prose with the tags left in, or lost beside tagged ones)
            opens.append((boundary, boundary))
        inside = is_open
        boundary = end if not is_open else boundary
    if not opens:
        return None
    cands, cand_spans, spans, repairs = [], [], [], []
    previous = ""
    for k, (start, end) in enumerate(opens):
        stop = opens[k + 1][0] if k + 1 < len(opens) else len(text)
        closing = _TOOL_CALL_CLOSE_RE.search(text, end, stop)
        close = closing.start() if closing else -1
        seg_end = close if close >= 0 else stop
        segment = text[end:seg_end]
        c, c_spans, r = _json_cands_in(segment, end)
        if not c and "<function" in segment:
            got = _fmt_function_tag(segment)
            c, r = (got[0], got[2]) if got else ([], [])
        if not c:
            c, r = _name_tag_call(segment)
        if not c and not re.match(r"\s*<(?:name|tool_name|function_name|arguments|parameters|args)>", segment):
            c, r = _inner_tag_call(segment)
        if not c:
            c = _python_calls(segment) or []
        if not c and closing is None and segment.lstrip().startswith("["):
            got = _cut_call_list(segment.strip())  # LFM2's '[f(a=1), f(a=1), f(a=': the list the token limit cut
            if got:
                c, r = got[0], got[2]
                at = end + len(segment) - len(segment.lstrip())
                c_spans = [(at, at + got[1])]
                if re.fullmatch(r",\s*(?:" + _NAME + r")?\s*", segment.strip()[got[1]:]):
                    c = [*c, _Cand(None, None, cut=True)]  # '[f(a=1), ge': its next call, cut before its '('
        if not c:
            c = _arg_key_call(segment, closing is not None)
        span = (start, closing.end() if closing else seg_end)
        if c and close < 0:
            span = _without_cut_tail(text, span, c_spans)
        if not c and close < 0 and k == len(opens) - 1 and not segment.strip():
            # an opener and nothing after it: a call the token limit cut before its first character
            # (which call cannot be told), reported as cut, never left in the content
            cands.append(_Cand(None, None, cut=True))
            cand_spans.append(span)
            continue
        if not c and close < 0 and cands and k == len(opens) - 1 and _starts_like(segment, previous):
            cand_spans[-1] = (cand_spans[-1][0], len(text))  # the token limit cut a last copy before its name
            repairs.append("ignored a call cut off at the end of the output")
            continue
        # another call cut off is left in the content, where calls() reports it (a helper's variant of
        # parse-05: '<tool_call>{"name": "add_step", "argu' after a whole create_plan was dropped)
        previous = segment
        cands.extend(c)
        repairs.extend(r)
        cand_spans.extend([span] * len(c))  # one span per call, for the copies read once
        if not c and close < 0 and _cut_off_tail(segment) is not None:
            spans.append((start, end))  # the tag goes, the cut call stays for calls() to report
        elif not c and close < 0 and k == len(opens) - 1 and re.fullmatch(r"\s*\S+\s*", segment):
            # '<tool_call>get_sto', '<|tool_call_start|>[get_sto': another call the token limit cut in
            # its name, after the calls read (dropped without an error; a helper's variants of x47)
            cands.append(_Cand(None, None, cut=True))
            cand_spans.append(span)
        elif not c:
            spans.append(span)  # a tag with no call is cut from the content all the same
    if not cands:
        return None
    kept, kept_spans, repairs = _once_back_to_back(cands, cand_spans, repairs)
    return kept, sorted(kept_spans + spans), repairs


def _without_cut_tail(text: str, span: tuple[int, int], cand_spans: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """``span`` (a call wrapper that never closed) ended after its last whole call when what follows
    that call is another one the token limit cut (``<|tool_call|>[{...}, {"name": "b", "argu``): the
    cut call stays in the content, where :func:`calls` reports it instead of dropping it (a helper's
    variant of parse-05)."""
    if not cand_spans:
        return span
    last = max(end for _, end in cand_spans)
    return (span[0], last) if _cut_off_tail(text[last:span[1]]) is not None else span


def _starts_like(cut: str, whole: str) -> bool:
    """Whether ``cut`` (a segment the token limit cut) is the start of ``whole`` (the call before
    it), spaces aside: a copy the model began again, not another call."""
    cut, whole = re.sub(r"\s+", "", cut), re.sub(r"\s+", "", whole)
    return whole.startswith(cut)


_FUNCTION_RE = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|\Z)", flags=re.S)
#: ``<function>NAME</function>`` and then the arguments as a bare JSON object (Gemma 3, Qwen MoE;
#: madroidmaq/mlx-omni-server#126).
_FUNCTION_NAME_RE = re.compile(r"<function>\s*(" + _NAME + r")\s*</function>\s*")
_ARGUMENTS_TAG_RE = re.compile(r"<(parameters|arguments|args)>\s*")
_NAME_TAG_RE = re.compile(r"<(name|tool_name|function_name)>\s*(" + _NAME + r")\s*</\1>\s*"
                          r"(?:<(arguments|parameters|args)>\s*(.*?)\s*(?:</\3>|\Z))?", flags=re.S)


def _name_tag_call(segment: str) -> tuple[list[_Cand], list[str]]:
    """``<name>NAME</name><arguments>{json}</arguments>`` inside a call tag (arguments optional; the name
    tag may be ``<tool_name>`` or ``<function_name>``)."""
    m = _NAME_TAG_RE.search(segment)
    if not m:
        return [], []
    body = (m.group(4) or "").strip()
    if not body:
        return [_Cand(m.group(2), {})], []
    got = _decode_at(body, 0) if body.startswith(("{", "[")) else None
    return [_Cand(m.group(2), got[0] if got else body)], list(got[2]) if got else []
_PARAMETER_RE = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?(?:</parameter>|(?=<parameter=)|\Z)", flags=re.S)
#: ``<invoke name="NAME"><parameter name="KEY">VALUE</parameter>...</invoke>`` (the XML call form
#: of Anthropic-style prompts; a helper's variant of case parse-37).
_INVOKE_RE = re.compile(r"""<invoke\s+name=["']([^"'>]+)["']\s*>(.*?)(?:</invoke>|\Z)""", flags=re.S)
_NAMED_PARAMETER_RE = re.compile(r"""<parameter\s+name=["']([^"'>]+)["']\s*>\n?(.*?)\n?(?:</parameter>|\Z)""",
                                 flags=re.S)


#: A code fence's opening: ```` ```json ```` and a line break, or on one line with the object or list
#: (```` ```json {"city": "Oslo"} ``` ````, a helper's variant of a native arguments string).
_FENCE_OPENER_RE = re.compile(r"\s*```[ \t]*[\w+\-]*[ \t]*(?:\n|(?=[{\[]))")
_FENCE_CLOSER_RE = re.compile(r"\s*```")


def _after_fence_opener(text: str, pos: int) -> int:
    """``pos`` moved past a code fence's opening line (```` ```json ````) that starts there, if any:
    the arguments after ``<function>NAME</function>`` or ``Action Input:`` may come fenced
    (variants of cases parse-42 and parse-19 found by a helper)."""
    m = _FENCE_OPENER_RE.match(text, pos)
    return m.end() if m else pos


def _after_fence_closer(text: str, pos: int) -> int:
    """``pos`` moved past a closing ```` ``` ```` that follows it, if any (the fence belongs to the call)."""
    m = _FENCE_CLOSER_RE.match(text, pos)
    return m.end() if m else pos


def _tagged_parameters(pattern: re.Pattern[str], body: str) -> dict[str, Any]:
    """Arguments written one tag per parameter: a value that reads as JSON is decoded, any other is text."""
    args: dict[str, Any] = {}
    for p in pattern.finditer(body):
        value = p.group(2)
        try:
            args[p.group(1)] = json.loads(value) if value.strip()[:1] in '{["0123456789-tfn' else value
        except ValueError:
            args[p.group(1)] = value
    return args


def _fmt_function_tag(text: str) -> _Found | None:
    cands, spans, repairs = [], [], []
    for m in _FUNCTION_RE.finditer(text):
        body = m.group(2).strip()
        if body.startswith("{"):
            got = _decode_at(body, 0)
            args: Any = got[0] if got is not None else body
            repairs.extend(got[2] if got is not None else ())
        elif "<parameter=" in body:
            args = _tagged_parameters(_PARAMETER_RE, body)
        else:
            args = body or {}
        # no </function> and a parameter still open: the token limit cut the call (a helper's
        # variants of parse-05, 2026-12-05: read as a call with the cut value, error null)
        cut = not m.group(0).endswith("</function>") and _last_open(body, "<parameter=", "</parameter>")
        cands.append(_Cand(m.group(1), args, cut=cut))
        spans.append(m.span())
    for m in _INVOKE_RE.finditer(text):
        if _NAMED_PARAMETER_RE.search(m.group(2)) or not m.group(2).strip():  # other inner tags: not this form
            cut = not m.group(0).endswith("</invoke>")  # the output ended inside the invoke
            cands.append(_Cand(m.group(1), _tagged_parameters(_NAMED_PARAMETER_RE, m.group(2)), cut=cut))
            spans.append(m.span())
    for m in _FUNCTION_NAME_RE.finditer(text):
        # the object may come in a code fence, or in a tag (<function>f</function><parameters>{...}</parameters>)
        wrapper = _ARGUMENTS_TAG_RE.match(text, m.end())
        at = wrapper.end() if wrapper else _after_fence_opener(text, m.end())
        got = _decode_at(text, at) if text.startswith(("{", "["), at) else None
        if got is None and text[at:].lstrip().startswith("{"):
            # "{..." that never closes: cut off, or not JSON
            cands.append(_Cand(m.group(1), text[at:].strip(), cut=_match_end(text, at) < 0))
            spans.append((m.start(), len(text)))
            continue
        cands.append(_Cand(m.group(1), got[0] if got else {}))
        repairs.extend(got[2] if got else ())
        end = _after_fence_closer(text, got[1]) if got else m.end()
        closer = re.compile(rf"\s*</{wrapper.group(1)}>").match(text, end) if wrapper and got else None
        spans.append((m.start(), closer.end() if closer else (wrapper.end() if wrapper and not got else end)))
    return (cands, spans, repairs) if cands else None


def _last_open(body: str, opener: str, closer: str) -> bool:
    """Whether the last ``opener`` in ``body`` has no ``closer`` after it."""
    at = body.rfind(opener)
    return at >= 0 and closer not in body[at:]


_INNER_TAG_RE = re.compile(r"\s*<(" + _NAME + r")>\s*")
_PARAM_TAG_RE = re.compile(r"\s*<([A-Za-z_][\w\-]*)>")


def _param_tags(body: str) -> dict[str, Any] | None:
    """``<city>Oslo</city><days>3</days>``: one tag per parameter (a value that reads as JSON is
    decoded, any other is text); None when ``body`` is anything else."""
    args: dict[str, Any] = {}
    pos = 0
    while body[pos:].strip() and len(args) < 64:
        m = _PARAM_TAG_RE.match(body, pos)
        close = body.find(f"</{m.group(1)}>", m.end()) if m else -1
        if close < 0:
            return None
        value = body[m.end():close].strip()
        try:
            args[m.group(1)] = json.loads(value) if value[:1] in '{["0123456789-tfn' else value
        except ValueError:
            args[m.group(1)] = value
        pos = close + len(m.group(1)) + 3
    return args if not body[pos:].strip() else None


def _inner_tag_call(segment: str) -> tuple[list[_Cand], list[str]]:
    """``<NAME>{json}</NAME>`` inside a call tag, one after another: the tool's name is the inner tag
    (PR #2104; inside ``<toolcall>`` and ``<tool_call>`` alike); the arguments may be one tag per
    parameter (``<NAME><city>Oslo</city></NAME>``, Cline's form)."""
    cands: list[_Cand] = []
    repairs: list[str] = []
    pos = 0
    while len(cands) < 32:
        head = _INNER_TAG_RE.match(segment, pos)
        if head is None:
            break
        close = segment.find(f"</{head.group(1)}>", head.end())
        body = segment[head.end():close if close >= 0 else len(segment)].strip()
        pos = close + len(head.group(1)) + 3 if close >= 0 else len(segment)
        if body.startswith("<"):
            args = _param_tags(body)
            if args is None:
                break
            cands.append(_Cand(head.group(1), args))
        elif body.startswith("{"):
            got = _decode_at(body, 0)
            cands.append(_Cand(head.group(1), got[0] if got is not None else body))
            repairs.extend(got[2] if got is not None else ())
        else:
            cands.append(_Cand(head.group(1), body or {}))
    return cands, repairs


#: ``<NAME>`` opening a line of parameter tags: Cline's and Roo Code's call form when NAME is offered.
_TOOL_TAG_RE = re.compile(r"<(" + _NAME + r")>\s*(?=</?[A-Za-z_])")


def _tool_tags(text: str, taken: Sequence[tuple[int, int]]) -> tuple[list[_Cand], list[tuple[int, int]]]:
    """Cline/Roo Code calls, ``<get_weather><city>Oslo</city></get_weather>``: a call only when the outer
    tag is an offered tool (any other tag is markup in the content), outside the spans already ``taken``."""
    cands, spans = [], []
    for tries, m in enumerate(_TOOL_TAG_RE.finditer(text)):
        if tries >= _MAX_STARTS:
            break
        if any(a <= m.start() < b for a, b in [*taken, *spans]):
            continue
        close = text.find(f"</{m.group(1)}>", m.end())
        args = _param_tags(text[m.end():close]) if close >= 0 else None
        if args is not None:
            cands.append(_Cand(m.group(1), args, offered_only=True))
            spans.append((m.start(), close + len(m.group(1)) + 3))
    return cands, spans


def _fmt_xml_tag(text: str) -> _Found | None:
    cands, spans, repairs = [], [], []
    # <function_call name="f">{json}</function_call>: the name in an attribute, the arguments inside
    for m in re.finditer(r"<(toolcall|tool|tool_use|function_call|functioncall)"
                         r"(?:\s+name\s*=\s*[\"']([^\"'<>]+)[\"'])?\s*>(.*?)(?:</\1>|\Z)", text, flags=re.S | re.I):
        inner = m.group(3)
        if m.group(2):
            body = inner.strip()
            got = _decode_at(body, 0) if body.startswith(("{", "[")) else None
            closed = m.group(0).lower().endswith(f"</{m.group(1).lower()}>")
            cands.append(_Cand(m.group(2), got[0] if got else (body or {}), cut=not closed))
            repairs.extend(got[2] if got else ())
            spans.append(m.span())
            continue
        named, fixed = _name_tag_call(inner)
        if named:
            cands.extend(named)
            repairs.extend(fixed)
            spans.extend([m.span()] * len(named))  # one span per call: the offer check keeps them paired
            continue
        tagged, fixed = _inner_tag_call(inner)
        if tagged:
            cands.extend(tagged)
            repairs.extend(fixed)
            spans.extend([m.span()] * len(tagged))
            continue
        c, _, r = _json_cands_in(inner, m.start(3))
        if c:
            cands.extend(c)
            repairs.extend(r)
            spans.extend([m.span()] * len(c))
    tagged, tag_spans = _tool_tags(text, spans)
    cands.extend(tagged)
    spans.extend(tag_spans)
    return (cands, spans, repairs) if cands else None


_MISTRAL_HEAD_RE = re.compile(r"(?:\[TOOL_CALLS\]\s*)?(" + _NAME + r")\s*(?:\[CALL_ID\]\s*\w+\s*)?\[ARGS\]\s*")


def _mistral_headers(text: str) -> Iterable[re.Match[str]]:
    """``[TOOL_CALLS]name[ARGS]`` headers, found from each ``[ARGS]`` backwards (a forward name
    regex would be quadratic on a long run of word characters)."""
    pos = 0
    for args in re.finditer(r"\[ARGS\]", text):
        if args.start() < pos:
            continue
        head = args.start()
        call_id = re.search(r"\[CALL_ID\]\s*\w+\s*$", text[max(pos, head - 200):head])
        if call_id:
            head -= len(call_id.group(0))
        start = head
        while start > pos and text[start - 1] in " \t\n":
            start -= 1
        while start > pos and (text[start - 1].isalnum() or text[start - 1] in "_.:-"):
            start -= 1
        name_start = start
        tag = text.rfind("[TOOL_CALLS]", pos, name_start)
        if tag >= 0 and not text[tag + len("[TOOL_CALLS]"):name_start].strip():
            name_start = tag
        m = _MISTRAL_HEAD_RE.match(text, name_start)
        if m and m.end() > args.start():
            pos = m.end()
            yield m


def _fmt_mistral(text: str) -> _Found | None:
    cands, spans, repairs = [], [], []
    for m in _mistral_headers(text):
        if spans and m.start() < spans[-1][1]:
            continue  # "[ARGS]" inside the last call's arguments string is text, no second call (round nineteen)
        got = _decode_at(text, m.end()) if text.startswith("{", m.end()) else None
        if got is None and text.startswith("{", m.end()) and _match_end(text, m.end()) < 0:
            if cands and cands[-1].name == m.group(1) and _starts_like(text[m.end():], json.dumps(cands[-1].arguments)):
                spans[-1] = (spans[-1][0], len(text))  # a copy the token limit cut (parse-39's kind)
                repairs.append("ignored a call cut off at the end of the output")
            continue  # cut off by the token limit: left in the content, where calls() reports it
        if got is None:
            rest = re.compile(r"[^\[]*").match(text, m.end())
            cands.append(_Cand(m.group(1), rest.group(0).strip() if rest else ""))
            spans.append((m.start(), rest.end() if rest else m.end()))
            continue
        args, end, fixed = got
        cands.append(_Cand(m.group(1), args))
        repairs.extend(fixed)
        spans.append((m.start(), end))
    if cands:
        return _once_back_to_back(cands, spans, repairs)
    for m in re.finditer(r"\[TOOL_CALLS\]\s*", text):
        got = _decode_at(text, m.end()) if text[m.end(): m.end() + 1] in ("[", "{") else None
        if got is None:
            continue
        value, end, fixed = got
        c = _from_object(value)
        if c:
            cands.extend(c)
            repairs.extend(fixed)
            spans.append((m.start(), end))
    return (cands, spans, repairs) if cands else None


#: Markers before Python-style calls: Gorilla OpenFunctions' ``<<function>>f(k=v)`` and NexusRaven's
#: ``Call: f(k=v)`` line (calls joined by ``;``).
_CALL_PREFIX_RE = re.compile(r"<<function>>[ \t]*|(?m:^)[ \t]*Call:[ \t]*")
_CALL_HEAD_RE = re.compile(r"[ \t]*;?[ \t]*(" + _NAME + r")[ \t]*(?=\()")


def _prefixed_calls(text: str) -> _Found:
    """The calls after :data:`_CALL_PREFIX_RE` markers, each read up to its closing parenthesis (a
    call the token limit cut stays in the content, where :func:`calls` reports it)."""
    cands, spans = [], []
    for tries, m in enumerate(_CALL_PREFIX_RE.finditer(text)):
        if tries >= 32:  # each try may scan to the end for its parenthesis: hostile output stays linear
            break
        pos, start = m.end(), m.start()
        while len(cands) < 32:
            head = _CALL_HEAD_RE.match(text, pos)
            close = _paren_end(text, head.end()) if head else -1
            got = _call_with_name(head.group(1), text[head.end():close]) if close > 0 else None
            if not got:
                break
            got[0].offered_only = not m.group(0).startswith("<<")  # "Call: mom(tonight)" may be English
            cands.append(got[0])
            spans.append((start, close))
            pos = start = close
    return cands, spans, []


def _fmt_python_tag(text: str) -> _Found | None:
    cands, spans, repairs = _prefixed_calls(text)
    for m in re.finditer(r"<\|python_tag\|>|<\|python_start\|>", text):  # Llama 3.1; Llama 4
        stop = re.compile(r"<\|(?:eom_id|eot_id|python_tag|python_end|python_start)\|>").search(text, m.end())
        seg_end = stop.start() if stop else len(text)
        segment = text[m.end():seg_end]
        end = stop.end() if stop and text.startswith(("<|eom_id|>", "<|eot_id|>", "<|python_end|>"),
                                                      stop.start()) else seg_end
        c, c_spans, r = _json_cands_in(segment, m.end())
        if c:
            if _cut_off_tail(text[c_spans[-1][1]:seg_end]) is not None:
                end = c_spans[-1][1]  # a call the token limit cut stays after the span: calls() judges it
            if len(c) == len(c_spans):
                # one span per call, as every other format gives: back-to-back copies are read once
                # and a cut copy is told from another call (a helper's variant f10-x38 of parse-39)
                starts = [m.start(), *(e for _, e in c_spans[:-1])]
                spans.extend(zip(starts, [*(e for _, e in c_spans[:-1]), end]))
            else:
                spans.append((m.start(), end))  # a list of calls in one value
        else:
            c = _python_calls(segment) or []  # several calls: one per line or ';'-separated
            if not c:
                whole = _calls_before_cut(segment)  # 'f(a=1); f(a=1); f(a': the copy the token limit cut
                if whole:
                    c, end = whole[0], m.end() + whole[1]
            if c:
                c = _once_back_to_back(c, [(m.start(), end)] * len(c), r)[0]
                spans.append((m.start(), end))
        if c:
            cands.extend(c)
            repairs.extend(r)
    return (cands, spans, repairs) if cands else None


def _calls_before_cut(source: str) -> tuple[list[_Cand], int] | None:
    """The Python-style calls before the last one, separated by ``;`` or new lines, when the token
    limit cut that last one (``f(a=1); f(a=1); f(a`` or, in its name, ``f(a=1); f_n`` where ``f_na``
    is the call before it): the calls and where they end in ``source``; None otherwise. A piece cut
    in its name that begins no call before it is left alone, so calls() reports it (a helper's
    variant f10-x38 of parse-39: ';'-separated copies were read as no call, or with an error)."""
    separators = [i for i, ch in enumerate(source) if ch in ";\n"][::-1][:16]
    for k in separators:
        rest = source[k + 1:].strip()
        if not rest:
            continue
        joined = _python_calls(source[:k])
        if not joined:
            continue
        name_cut = re.fullmatch(r"[\w.:\-]+", rest) and str(joined[-1].name).startswith(rest)
        if name_cut or _cut_off_tail(rest) is not None:
            return joined, len(source[:k].rstrip())
    return None


_KV_RE = re.compile(r"""\s*([A-Za-z_]\w*)\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*'|[^\s,]+)\s*,?""")


def _inline_args(text: str, pos: int, line_end: int, name: str) -> tuple[Any, int, list[str]] | None:
    """Arguments written after a tool name on one line: ``({json})``, ``{json}``, ``(k=v)``, ``k=v``."""
    rest = text[pos:line_end].strip()
    lead = pos + (len(text[pos:line_end]) - len(text[pos:line_end].lstrip()))
    if not rest:
        return None
    if rest.startswith("("):
        inner_start = lead + 1
        while inner_start < len(text) and text[inner_start] in " \t":
            inner_start += 1
        if text.startswith("{", inner_start):
            got = _decode_at(text, inner_start)
            if got is not None:
                value, end, fixed = got
                close = re.compile(r"\s*\)").match(text, end)
                return value, close.end() if close else end, list(fixed)
        close = _paren_end(text, lead)
        if close > 0:
            c = _call_with_name(name, text[lead:close])
            if c:
                return (c[0].arguments if not c[0].positional else c[0]), close, []
        return None
    if rest.startswith("{"):
        got = _decode_at(text, lead)
        if got is not None:
            value, end, fixed = got
            return value, end, list(fixed)
        return None
    if rest.startswith("["):  # "Action: search_docs[{...}]": one object in brackets
        got = _decode_at(text, lead)
        if got is not None and isinstance(got[0], list) and len(got[0]) == 1 and isinstance(got[0][0], dict):
            return got[0][0], got[1], [*got[2], "one object in brackets read as the arguments"]
        if got is not None and isinstance(got[0], list) and len(got[0]) == 1 and isinstance(got[0][0], str):
            # 'Action: web_search["weather in Paris"]': the input, quoted inside the brackets (a
            # helper's variant; the list itself was taken for the arguments)
            return got[0][0], got[1], [*got[2], "one quoted string in brackets read as the input"]
        if rest.endswith("]") and "[" not in rest[1:-1] and not rest[1:-1].lstrip().startswith(("{", '"')):
            # "Action: search_docs[vacation policy]" (LangChain's MRKL style): the input is inside
            return rest[1:-1].strip(), line_end, []
    pairs = []
    p = lead
    while p < line_end:
        m = _KV_RE.match(text, p, line_end)
        if not m or m.end() == p:
            break
        pairs.append((m.group(1), m.group(2)))
        p = m.end()
    if pairs and not text[p:line_end].strip():
        args = {}
        for key, raw in pairs:
            try:
                args[key] = _jsonable(ast.literal_eval(raw))
            except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
                args[key] = raw
        return args, line_end, []
    return rest, line_end, []


def _outside_strings(text: str, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, str]]:
    """``(index, character)`` of each character of ``text[start:stop]`` outside strings in double or
    single quotes (backslash escapes read; the quotes themselves are not yielded): the scan that
    :func:`_paren_end` and :func:`_bare_keys_value` share."""
    quote, escaped = "", False
    for i in range(start, len(text) if stop is None else min(len(text), stop)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        else:
            yield i, ch


def _paren_end(text: str, start: int) -> int:
    """Index just past the ``)`` that closes the ``(`` at ``text[start]``; -1 if unbalanced or the
    parse's scan budget is spent (:data:`_PARSE_SCAN_CHARS`)."""
    if _over_scan_budget():
        return -1
    depth, i = 0, start
    try:
        for i, ch in _outside_strings(text, start, start + _MAX_CHARS):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
        return -1
    finally:
        _BUDGET.matched_chars += i - start + 1


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _fmt_api_line(text: str) -> _Found | None:
    cands, spans, repairs = [], [], []
    for m in re.finditer(r"(?m)^[ \t]*API(?:-Request)?[ \t]*:[ \t]*\[?(" + _NAME + r")", text):
        name = m.group(1)
        got = _inline_args(text, m.end(), _line_end(text, m.end()), name)
        if got is None:
            cands.append(_Cand(name, {}, weak=True))
            spans.append((m.start(), m.end()))
            continue
        else:
            args, end, fixed = got
            repairs.extend(fixed)
        if isinstance(args, _Cand):
            cands.append(args)
        else:
            cands.append(_Cand(name, args, weak=isinstance(args, str)))
        close = re.compile(r"[ \t]*\]").match(text, end)
        spans.append((m.start(), close.end() if close else end))
    return (cands, spans, repairs) if cands else None


# the labels may be set in bold or italics ("**Action:** search", "__Action Input__:")
_MARK = r"(?:\*\*|__|\*|_)?"
# the name may stand in backticks or quotes ("Action: `search_docs`": a helper's variant of parse-19)
# "Action 1:" numbers the steps as the ReAct paper does; "[web:search]" copies the prompt's list of names
# Qwen-Agent's ``✿FUNCTION✿: name`` / ``✿ARGS✿: {json}`` / ``✿RESULT✿:`` are the same three lines
_ACTION_RE = re.compile(r"(?m)^[ \t]*" + _MARK + r"(?:Action(?:[ \t]*\d+)?|✿FUNCTION✿)" + _MARK + r"[ \t]*:" + _MARK
                        + r"[ \t]*(?:\[(?=[^\]\n]*\][ \t]*$))?[`'\"]?(" + _NAME + r")[`'\"]?(?:\](?=[ \t]*$))?")
_ACTION_INPUT_RE = re.compile(r"(?m)^[ \t]*" + _MARK + r"(?:Action[ \t]+Input(?:[ \t]*\d+)?|✿ARGS✿)" + _MARK
                              + r"[ \t]*:" + _MARK
                              + r"[ \t]*")
_OBSERVATION_RE = re.compile(r"(?m)^[ \t]*" + _MARK + r"(?:Observation(?:[ \t]*\d+)?|✿RESULT✿)" + _MARK
                             + r"[ \t]*:")


def _fmt_react(text: str) -> _Found | None:
    first = _ACTION_RE.search(text)
    if not first:
        return None
    obs = _OBSERVATION_RE.search(text, first.end())
    limit = obs.start() if obs else len(text)
    cands, repairs = [], []
    for m in _ACTION_RE.finditer(text, 0, limit):
        name = m.group(1)
        line_end = _line_end(text, m.end())
        final = _FINAL_ANSWER_RE.match(text, m.start(1), line_end)  # "Action: Final Answer": the answer
        if final:
            name = "Final Answer"
        got = None if final else _inline_args(text, m.end(), line_end, name)
        if got is not None:
            args, _, fixed = got
            repairs.extend(fixed)
            cands.append(args if isinstance(args, _Cand) else _Cand(name, args, weak=isinstance(args, str)))
            continue
        inp = _ACTION_INPUT_RE.match(text, line_end + 1) if line_end < len(text) else None
        if not inp:
            cands.append(_Cand(name, {}, weak=True))
            continue
        p = _after_fence_opener(text, inp.end())
        if text.startswith(("{", "["), p):
            dec = _decode_at(text, p)
            if dec is not None:
                cands.append(_Cand(name, dec[0], answer=bool(final)))
                repairs.extend(dec[2])
                continue
        value_text = text[p:_line_end(text, p)].strip()
        if value_text.startswith('"'):
            try:
                value_text = json.loads(value_text)
            except ValueError:
                value_text = value_text.strip('"')
        elif len(value_text) >= 2 and value_text[0] == value_text[-1] == "'":
            value_text = value_text[1:-1]  # 'who won the 2018 world cup': quoted as a Python string
        cands.append(_Cand(name, value_text, answer=bool(final)))
    # content: the Thought before the first Action; an invented Observation / Final Answer is dropped.
    # One span per Action (each up to the next, the last to the end): a copy the token limit cut is
    # told from the call before it (parse-39's kind)
    starts = [m.start() for m in _ACTION_RE.finditer(text, 0, limit)][:len(cands)]
    return cands, [(a, b) for a, b in zip(starts, [*starts[1:], len(text)])], repairs


_FENCE_RE = re.compile(r"```[ \t]*([\w+\-]*)[ \t]*\n?(.*?)(?:```|\Z)", flags=re.S)
_FINAL_ANSWER_RE = re.compile(r"(?i)final[ _]?answer[`'\"]?[ \t]*$", flags=re.M)

#: A line that is a tool's name (alone: GLM-4, ChatGLM3; after ``>>>``: Functionary v3.2) with the
#: arguments on the next line, as a JSON object or in a code fence.
_NAME_LINE_RE = re.compile(r"(?m)(?:^[ \t]*|(?=>>>))(>>>)?(" + _NAME + r")[ \t]*\n[ \t]*(?=[{`])")


def _fmt_name_line(text: str) -> _Found | None:
    """``NAME`` on its own line, then ``{json}`` (GLM-4) or a fence: ``{json}`` in it, or ChatGLM3's
    ``tool_call(k=v)`` (read as a Python call, never evaluated). A bare name line is a call only when
    the name is offered (else it is a heading over data); Functionary's ``>>>`` marks a call."""
    cands, spans, repairs = [], [], []
    for tries, m in enumerate(_NAME_LINE_RE.finditer(text)):
        if tries >= 64:  # each try may read to the end for its object's closing brace
            break
        if spans and m.start() < spans[-1][1]:
            continue
        name, at, args, end = m.group(2), m.end(), None, -1
        if text.startswith("{", at):
            got = _decode_at(text, at)
            if got is not None and isinstance(got[0], dict) and _from_object(got[0]) is None:
                args, end, fixed = got
                repairs.extend(fixed)
        else:
            fence = _FENCE_RE.match(text, at)
            body = fence.group(2).strip() if fence else ""
            if body.startswith("{"):
                got = _decode_at(body, 0)
                if got is not None and isinstance(got[0], dict) and not body[got[1]:].strip() \
                        and _from_object(got[0]) is None:
                    args, end = got[0], fence.end()
                    repairs.extend(got[2])
            elif fence and fence.group(1).lower() in ("python", "py", ""):
                inner = _python_calls(body) or []
                if len(inner) == 1 and inner[0].name in ("tool_call", name) and not inner[0].positional:
                    args, end = inner[0].arguments, fence.end()  # ChatGLM3: the name line, then tool_call(...)
        if args is None:
            continue
        # ChatGLM3's tool_call(...) marks a call as Functionary's >>> does: an unknown name is an error
        marked = m.group(1) or not text.startswith("{", at)
        cands.append(_Cand(name, args, offered_only=not marked))
        spans.append((m.start(), end))
    return (cands, spans, repairs) if cands else None


def _code_beside_calls(body: str, spans: Sequence[tuple[int, int]], closed: bool) -> bool:
    """Whether a code block's ``body`` holds program code beside the call objects at ``spans``
    (offsets into ``body``): ``payload = {...}`` then ``requests.post(url, json=payload)``, or
    ``curl -d '{...}' URL`` (a helper's variants f10-x16 and f10-x17 of parse-17). Blank space,
    separators (``;``, ``,``), list brackets and whole-line comments are no code, nor the start of
    a call the token limit cut at the end of a block that never ``closed``."""
    rest = list(body)
    for start, end in spans:
        rest[start:end] = " " * (end - start)
    beside = re.sub(r"(?m)^[ \t]*(?:#|//).*$", "", "".join(rest))  # "# the call:" above the object
    if not closed:
        tail = _cut_off_tail(beside)
        beside = beside if tail is None else beside[:tail]
    return bool(re.sub(r"[\s;,\[\]]", "", beside))


def _program_code_block(fence: re.Match[str]) -> bool:
    """Whether the code fence ``fence`` (a :data:`_FENCE_RE` match) is program code that holds a
    call-shaped object as data: a block in a programming or shell language
    (:data:`_PROGRAM_LANGUAGES`) whose call objects are assigned, passed or quoted in a command, not
    the whole block. The object is what the code sends, shown and not made (a helper's variants
    f10-x16, f10-x17 of parse-17: a fenced ``run_command`` call ran); a block that holds nothing but
    call objects (```` ```python\n{"name": ...}\n``` ````) stays a call."""
    if fence.group(1).lower() not in _PROGRAM_LANGUAGES:
        return False
    _, c_spans, _ = _json_cands_in(fence.group(2), 0)
    closed = fence.group(0).endswith("```") and fence.end() > fence.end(2)
    return bool(c_spans) and _code_beside_calls(fence.group(2), c_spans, closed)


def _without_program_code(text: str) -> str:
    """``text`` with the bodies of its program-code blocks (:func:`_program_code_block`) blanked
    out, offsets and line breaks kept: no call is read from code (the first 32 fences are looked at)."""
    if "```" not in text:
        return text
    out = text
    for tries, fence in enumerate(_FENCE_RE.finditer(text)):
        if tries >= 32:
            break
        if _program_code_block(fence):
            start, end = fence.span(2)
            out = out[:start] + re.sub(r"[^\n]", " ", out[start:end]) + out[end:]
    return out


def _fmt_fenced(text: str) -> _Found | None:
    cands, spans, repairs = [], [], []
    for m in _FENCE_RE.finditer(text):
        lang, body = m.group(1).lower(), m.group(2)
        if _program_code_block(m):
            continue  # the call object is data in the code (f10-x16, f10-x17 of parse-17), not a call
        # a block that names no language reads as text outside fences does: an assigned object is data
        c, c_spans, r = _json_cands_in(body, m.start(2), skip_code_values=not lang)
        if not c and lang in ("tool_code", "tool_call", "python_tag"):
            c = _python_calls(body) or []
        elif not c and lang in ("python", "py", ""):  # a code block of nothing but calls of offered tools
            c = _python_calls(body) or []
            for cand in c:
                cand.offered_only = True
        if c:
            cands.extend(c)
            repairs.extend(r)
            closed = m.group(0).endswith("```") and m.end() > m.end(2)
            spans.append(m.span() if closed else _without_cut_tail(text, m.span(), c_spans))
    return (cands, spans, repairs) if cands else None


def _fmt_bare_json(text: str) -> _Found | None:
    # an object in a block of program code is data, fenced or not (f10-x16, f10-x17 of parse-17)
    cands, spans, repairs = _json_cands_in(_without_program_code(text), 0, skip_code_values=True)
    return (cands, spans, repairs) if cands else None


#: A line that is a Python-style call, alone or in inline code (`` `get_weather(city="Oslo")` ``).
_PY_CALL_LINE_RE = re.compile(r"(?m)^[ \t]*`?(" + _NAME + r")[ \t]*(?=\()")
_PY_LIST_LINE_RE = re.compile(r"(?m)^[ \t]*\[[ \t]*" + _NAME + r"[ \t]*\(")


def _list_left_open(listed: str) -> bool:
    """Whether ``listed``, which opens a list of Python-style calls, ends without closing it: inside
    a call (``[f(a=1), g(b="Os``), after a whole call (``[f(a=1), g(b=2)``), after a comma, or
    inside the next name (``[f(a=1), ge``); a helper's variants of parse-39."""
    if _cut_off_tail(listed[1:]) is not None:
        return True
    return bool(_PY_LIST_LINE_RE.match(listed)) and not listed.rstrip().endswith("]")


def _cut_call_list(listed: str) -> tuple[list[_Cand], int, list[str]] | None:
    """A list of Python-style calls the token limit cut (``[f(a=1), f(a=1), f(a=1``): the whole calls
    before the cut one, and where they end. A cut copy of the call before it (a model repeating its
    call up to the limit, parse-39's kind) goes with them, reported; another call stays after ``end``,
    where :func:`calls` reports it cut (so does a cut item that has no parenthesis yet, ``[f(a=1),
    g`` or ``[f(a=1),``: :func:`_cut_tail_start`). A list whose calls are all whole and whose
    ``]`` never came (``[f(a=1), g(b=2)``) is read whole, reported."""
    if not listed.rstrip().endswith(("]", ",")):
        whole = _python_calls(listed.rstrip() + "]")
        if whole:
            return whole, len(listed), ["read a list of calls whose closing ']' the output never wrote"]
    commas = [i for i, ch in enumerate(listed) if ch == ","][::-1][:16]
    for n, k in enumerate(commas):
        whole = _python_calls(listed[:k] + "]")
        if not whole:
            continue
        rest = listed[k + 1:].strip()
        for j in [*commas[n + 1:], 0]:  # the text of the last whole call, to compare the cut one with
            if len(_python_calls("[" + listed[j + 1:k] + "]") or ()) == 1:
                if rest and _starts_like(rest, listed[j + 1:k]):
                    return whole, len(listed), ["ignored a call cut off at the end of the output"]
                break
        return whole, k, []
    return None


def _fmt_python_call(text: str) -> _Found | None:
    """Lines that are a whole Python-style call, ``clock_alarm(action="set", time="07:00")``
    (arguments read as literals, never evaluated); a call only when the name is offered. A whole
    reply that is a list of such calls, ``[f(a=1), g(b=2)]`` (the BFCL/Llama "pythonic" form), is
    one call each."""
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]") and len(stripped) <= 20_000:
        listed = _python_calls(stripped)
        if listed:  # the reply is nothing but calls: a name not offered is an error, not prose
            start = text.index("[")
            return _once_back_to_back(listed, [(start, start + len(stripped))] * len(listed), [])
    if stripped.startswith("[") and len(stripped) <= 20_000 and _list_left_open(stripped):
        got = _cut_call_list(stripped)
        if got:  # '[f(a=1), f(a=1), f(a=1': the token limit cut the list
            listed, end, repairs = got
            start = text.index("[")
            return _once_back_to_back(listed, [(start, start + end)] * len(listed), repairs)
    if ";" in stripped and len(stripped) <= 20_000:  # 'get_weather(city="Oslo"); get_weather(city="Bergen")'
        joined = _python_calls(stripped)  # (a helper's variant of parse-43: no call, and a wrong error)
        if not joined:
            # 'clock_now(); get_weather(city="Par': the whole calls before the one the token limit cut;
            # 'f(a=1); f(a=1); f_' too, a copy cut in its name (a helper's variant f10-x38 of parse-39)
            whole = _calls_before_cut(stripped)
            if whole:
                joined, stripped = whole[0], stripped[:whole[1]]
        if joined:
            for cand in joined:
                cand.offered_only = True
            start = text.index(stripped[0])
            return _once_back_to_back(joined, [(start, start + len(stripped))] * len(joined), [])
    cands, spans, repairs = [], [], []
    for m in _PY_LIST_LINE_RE.finditer(text):  # a line that is a whole list of calls, after prose
        line_end = _line_end(text, m.start())
        line = text[m.start():line_end].strip()
        listed = _python_calls(line) if line.endswith("]") and len(line) <= 20_000 else None
        end = line_end
        if not listed and not text[line_end:].strip() and len(line) <= 20_000 and _list_left_open(line):
            got = _cut_call_list(line)  # the last line, a list the token limit cut
            if got:
                listed, repairs = got[0], [*repairs, *got[2]]
                end = text.index("[", m.start()) + got[1]
        if listed:
            for cand in listed:
                cand.offered_only = True
            listed, _, repairs = _once_back_to_back(listed, [(m.start(), end)] * len(listed), repairs)
            cands.extend(listed)
            spans.extend([(m.start(), end)] * len(listed))
    for m in _PY_CALL_LINE_RE.finditer(text):
        if len(cands) >= 32 or (spans and m.start() < spans[-1][1]):
            continue
        close = _paren_end(text, m.end())
        after = text[close:_line_end(text, close)].strip() if close > 0 else ""
        if text.startswith("`", m.start(1) - 1):  # the whole line in inline code: the closing backtick next
            after = after[1:] if after.startswith("`") and not after.startswith("``") else "`"
        if close < 0 or not re.fullmatch(r";?\s*(?:#.*)?", after):  # a trailing "# comment" is no sentence
            continue
        if "```" in text and _fence_language_at(text, m.start(1)) in _CODE_LANGUAGES:
            continue  # 'get_weather({city: "Oslo"});' in a ```js fence: JavaScript, not a call
        got = _call_with_name(m.group(1), text[m.end():close])
        if got and got[0].name == "print":
            got = _python_calls(text[m.start(1):close])  # print(f(...)): the call inside it
        if got:
            got[0].offered_only = True
            cands.append(got[0])
            spans.append((m.start(), _line_end(text, close)))
    return (cands, spans, repairs) if cands else None


# DeepSeek's special tokens: full-width bars and the SentencePiece space; plain "|" and "_" are
# read too (a server that normalised them)
_DS_BAR, _DS_SP = "[｜|]", "[▁_ ]"
_DS_CALL_BEGIN_RE = re.compile(rf"<{_DS_BAR}tool{_DS_SP}call{_DS_SP}begin{_DS_BAR}>")
# Kimi K2 writes the same shape with its own tokens: <|tool_call_argument_begin|> for the separator,
# <|tool_calls_section_begin|>/<|tool_calls_section_end|> around the block, "functions.NAME:0" as the head
_DS_SEP_RE = re.compile(rf"<{_DS_BAR}tool{_DS_SP}sep{_DS_BAR}>|<\|tool_call_argument_begin\|>")
_DS_CALL_END_RE = re.compile(rf"<{_DS_BAR}tool{_DS_SP}call{_DS_SP}end{_DS_BAR}>")
_DS_CALLS_RE = re.compile(rf"<{_DS_BAR}tool{_DS_SP}calls{_DS_SP}(?:section{_DS_SP})?(?:begin|end){_DS_BAR}>")
#: Kimi K2's call id after the name: ``functions.get_weather:0`` (the index of the call in the turn).
_KIMI_INDEX_RE = re.compile(r":\d+\Z")


def _arguments_at(text: str, pos: int, end: int) -> tuple[Any, list[str]]:
    """The arguments written in ``text[pos:end]``: a JSON object (a code fence around it allowed,
    repaired as any call's), ``{}`` when nothing is there, else the raw text (reported unreadable)."""
    p = _after_fence_opener(text, pos)
    while p < end and text[p] in " \t\r\n":
        p += 1
    if p < end and text[p] in "{[":
        dec = _decode_at(text[:end], p)
        if dec is not None:
            return dec[0], list(dec[2])
    body = _FENCE_CLOSER_RE.sub("", text[p:end]).strip()
    return ({} if not body else body), []


def _fmt_deepseek(text: str) -> _Found | None:
    """DeepSeek's tool-call tokens (V3 and R1 chat templates, and V3.1's shorter form)."""
    begins = list(_DS_CALL_BEGIN_RE.finditer(text))
    if not begins:
        return None
    cands, spans, repairs = [], [], []
    for k, m in enumerate(begins):
        stop = begins[k + 1].start() if k + 1 < len(begins) else len(text)
        close = _DS_CALL_END_RE.search(text, m.end(), stop)
        end = close.start() if close else stop
        sep = _DS_SEP_RE.search(text, m.end(), end)
        if sep is None:
            continue
        head = text[m.end():sep.start()].strip()
        if head in ("function", ""):  # V3 / R1: the type, then the name on the line after the separator
            line_end = _line_end(text, sep.end())
            name, args_at = text[sep.end():line_end].strip(), line_end
        else:  # V3.1 and Kimi K2: the name (Kimi's with an index: functions.NAME:0), then the arguments
            name, args_at = _KIMI_INDEX_RE.sub("", head), sep.end()
        if not re.fullmatch(_NAME, name):
            continue
        arguments, fixed = _arguments_at(text, args_at, end)
        cands.append(_Cand(name, arguments, cut=close is None and k == len(begins) - 1 and end == len(text)))
        repairs.extend(fixed)
        spans.append((m.start(), close.end() if close else end))
    if not cands:
        return None
    for token in _DS_CALLS_RE.finditer(text):  # the block's own begin and end tokens
        # joined to the call beside them, so each call keeps one span (copies read once, parse-39)
        first = min(range(len(spans)), key=lambda i: spans[i][0])
        final = max(range(len(spans)), key=lambda i: spans[i][1])
        if token.end() <= spans[first][0] and not text[token.end():spans[first][0]].strip():
            spans[first] = (token.start(), spans[first][1])
        elif token.start() >= spans[final][1] and not text[spans[final][1]:token.start()].strip():
            spans[final] = (spans[final][0], token.end())
        else:
            spans.append(token.span())
    return cands, spans, repairs


#: gpt-oss's harmony format: a message's header names its recipient (``to=functions.name``)
#: before or after its channel, and a call ends with ``<|call|>``.
_HARMONY_MESSAGE_RE = re.compile(r"<\|message\|>")
_HARMONY_TO_RE = re.compile(r"\bto=(?:functions\.)?(" + _NAME + r")")
#: A message ends at its end token or where the next one starts (``<|start|>``, or a ``<|channel|>``
#: header when the template put ``<|start|>assistant`` in the prompt): read to the text's end, each
#: of 2,200 unclosed messages took the rest of the output (round seventeen's hostile variants).
_HARMONY_END_RE = re.compile(r"<\|(?:call|end|return)\|>|(?=<\|start\|>)|(?=<\|channel\|>)")
_HARMONY_BOUNDARY_RE = re.compile(r"<\|(?:start|end|call|return)\|>")
#: A final-channel message: its body is the answer, its tokens are not.
_HARMONY_FINAL_RE = re.compile(r"(?:<\|start\|>\s*assistant\s*)?<\|channel\|>\s*final\s*<\|message\|>(.*?)"
                               r"(?:<\|return\|>|<\|end\|>|(?=<\|start\|>)|\Z)", flags=re.S)


def _fmt_harmony(text: str) -> _Found | None:
    """gpt-oss's calls: each message whose header names a function as its recipient. A message
    from a function back to the assistant (``to=assistant``) is a result the model wrote itself:
    it is cut from the content with what follows, as any invented result is."""
    cands, spans, repairs = [], [], []
    # every boundary once, in order: looked up again from the start for each message, 2,200 unclosed
    # call headers took 9 s (round seventeen's hostile variants, 2026-12-07)
    boundaries = list(_HARMONY_BOUNDARY_RE.finditer(text))
    ends = [b.end() for b in boundaries]
    previous_end = 0  # a header starts after the message before it (its "to=" is not this one's)
    for m in _HARMONY_MESSAGE_RE.finditer(text):
        last = boundaries[bisect.bisect_right(ends, m.start()) - 1] if ends and ends[0] <= m.start() else None
        head_start = max(last.end() if last else 0, previous_end)
        header = text[head_start:m.start()]
        to = _HARMONY_TO_RE.search(header)
        if to is None or "<|channel|>final" in header:
            continue
        start = last.start() if last and last.end() == head_start and last.group(0) == "<|start|>" else head_start
        if to.group(1) == "assistant":  # a function's reply: the tool has not run
            if cands:
                spans.append((start, len(text)))
                repairs.append(_INVENTED_REPAIR)
                break
            continue
        close = _HARMONY_END_RE.search(text, m.end())
        end = close.start() if close else len(text)
        previous_end = close.end() if close else end
        arguments, fixed = _arguments_at(text, m.end(), end)
        cands.append(_Cand(to.group(1), arguments, cut=close is None))
        repairs.extend(fixed)
        spans.append((start, close.end() if close else end))
    return (cands, spans, repairs) if cands else None


#: Functionary v2's messages: ``<|from|>assistant``, ``<|recipient|>NAME``, ``<|content|>`` and the
#: arguments, up to the next message or ``<|stop|>`` (round fourteen's variants, 2026-12-07: read
#: as neither a call nor an error).
_FUNCTIONARY_V2_RE = re.compile(r"(?:<\|from\|>\s*assistant\s*)?<\|recipient\|>\s*(" + _NAME + r")\s*<\|content\|>")
_FUNCTIONARY_V2_END_RE = re.compile(r"<\|stop\|>|(?=<\|from\|>)|(?=<\|recipient\|>)")


def _fmt_functionary_v2(text: str) -> _Found | None:
    """Functionary v2's calls: each message whose recipient is a function; the recipient ``all``
    is the answer (its markers are dropped from the content, :data:`_ANSWER_MARKER_RE`)."""
    cands, spans, repairs = [], [], []
    for m in _FUNCTIONARY_V2_RE.finditer(text):
        if m.group(1) == "all":
            continue
        close = _FUNCTIONARY_V2_END_RE.search(text, m.end())
        end = close.start() if close else len(text)
        arguments, fixed = _arguments_at(text, m.end(), end)
        cands.append(_Cand(m.group(1), arguments))
        repairs.extend(fixed)
        spans.append((m.start(), close.end() if close else end))
    return (cands, spans, repairs) if cands else None


#: Markers around (or before) an answer's text, never content: Cohere Command R7B's
#: ``<|START_RESPONSE|>...<|END_RESPONSE|>``, Functionary v3.2's ``>>>all`` (the text recipient),
#: Functionary v2's answer message header and ``<|stop|>``.
_ANSWER_MARKER_RE = re.compile(r"<\|(?:START|END)_RESPONSE\|>|<\|(?:START|END)_TEXT\|>|>>>all[ \t]*(?:\n|\Z)"
                               r"|(?:<\|from\|>\s*assistant\s*)?<\|recipient\|>\s*all\s*<\|content\|>|<\|stop\|>")


def _answer_markers(text: str) -> tuple[str, bool]:
    """``text`` without the markers around its answer (:data:`_ANSWER_MARKER_RE`), and whether any were."""
    read, count = _ANSWER_MARKER_RE.subn("", text)
    return read, bool(count)


def _harmony_answer(text: str) -> tuple[str, bool]:
    """``text`` with each harmony final-channel message replaced by its body (``<|start|>assistant
    <|channel|>final<|message|>Which file?<|return|>`` is "Which file?"), and whether any was."""
    read, count = _HARMONY_FINAL_RE.subn(lambda m: m.group(1), text)
    return read, bool(count)


#: A tool's result the model wrote itself after its call (Hermes/Qwen ``<tool_response>``, and
#: kin, Gemma 3's ```` ```tool_output ```` fence): the tool has not run, so the result and the answer built
#: on it are invented.
_INVENTED_RESULT_RE = re.compile(r"<(?:tool_response|tool_result|tool_output|function_results?|function_output)\b[^>]*>"
                                 r"|<\|(?:tool_response|tool_result|python_output|ipython)\|>|<\|tool_response>"
                                 r"|\[TOOL_RESULTS\]|<start_function_response>|```[ \t]*tool_output\b"
                                 rf"|<{_DS_BAR}tool{_DS_SP}outputs?{_DS_SP}begin{_DS_BAR}>", flags=re.I)
_INVENTED_REPAIR = "dropped a tool result the model wrote itself, and what followed it (the tool has not run)"
#: End-of-turn tokens a raw completion may end with (DeepSeek, Llama 3, ChatML, harmony, Gemma, GPT-2):
#: never content.
_TRAILING_END_RE = re.compile(rf"(?:\s*(?:<{_DS_BAR}end{_DS_SP}of{_DS_SP}sentence{_DS_BAR}>"
                              r"|<\|(?:eot_id|eom_id|im_end|endoftext|end_of_text|eot|end|return|END_OF_TURN_TOKEN)\|>"
                              r"|<end_of_turn>|</s>|<\|observation\|>|<bot_end>))+\s*\Z")


def _without_trailing_end(text: str) -> str:
    """``text`` without the end-of-turn tokens it ends with (:data:`_TRAILING_END_RE`), read in the last
    400 characters: the pattern's leading ``\s*`` is quadratic over a long run of spaces."""
    body = text.rstrip()
    start = max(0, len(body) - 400)
    tail = _TRAILING_END_RE.sub("", body[start:])
    return text if tail == body[start:] else (body[:start] + tail).rstrip()


#: An end-of-turn token with more after it: the model wrote past the end of its turn (an invented
#: user turn, an invented ``ipython`` result: a helper's variants of parse-39, 2026-12-05); what
#: follows is not the reply. Harmony's ``<|end|>`` and ``<|return|>`` separate its messages, so
#: they are not among these.
#: GLM-4's ``<|observation|>`` opens the tool's turn and NexusRaven's ``<bot_end>`` ends its own.
_END_OF_TURN_RE = re.compile(r"<\|(?:eot_id|eom_id|im_end|endoftext|end_of_text|eot|END_OF_TURN_TOKEN|observation)\|>"
                             r"|<end_of_turn>|<bot_end>")


#: An ``Observation:`` line after an explicit call: the result ReAct's loop would write, invented.
_OBSERVATION_AFTER_CALL_RE = re.compile(r"(?m)^[ \t]*" + _MARK + r"(?:Observation(?:[ \t]*\d+)?|✿RESULT✿)" + _MARK
                                        + r"[ \t]*:")


def _before_invented_result(text: str) -> tuple[str, bool]:
    """``text`` up to a tool result the model wrote itself after a call it made (a tagged call,
    then ``<tool_response>`` or ``Observation:``; a helper's variants of parse-39, 2026-12-05: a call
    after the invented result was made too, and the answer built on it shown as the reply)."""
    m = _INVENTED_RESULT_RE.search(text)
    obs = _OBSERVATION_AFTER_CALL_RE.search(text)
    # after a call that is marked, or one the text just before it ends with ("clock_now()", a bare
    # JSON call, a fenced one: round fourteen's variants of parse-39, 2026-12-07, kept the invented
    # result and the answer built on it as content)
    if obs and not _ACTION_RE.search(text, 0, obs.start()) and (
            _MARKER_RE.search(text, 0, obs.start()) or text[:obs.start()].rstrip().endswith(("}", ")", "```"))):
        m = obs if m is None or obs.start() < m.start() else m
    elif m is not None and not _MARKER_RE.search(text, 0, m.start()) and not text[:m.start()].strip().endswith("}"):
        m = None  # no call before it: the content's own rule (_without_invented_result) applies
    if m is None or not text[:m.start()].strip():
        return text, False
    return text[:m.start()].rstrip(), True


def _without_invented_result(content: str) -> tuple[str, bool]:
    """``content`` up to an invented tool result, and whether one was cut (as an invented ReAct
    ``Observation:`` is, :func:`_fmt_react`)."""
    m = _INVENTED_RESULT_RE.search(content)
    return (content[:m.start()].rstrip(), True) if m else (content, False)


_FORMATS = {
    "gemma": _fmt_gemma,
    "deepseek": _fmt_deepseek,
    "harmony": _fmt_harmony,
    "functionary_v2": _fmt_functionary_v2,
    "tool_call_tag": _fmt_tool_call_tag,
    "function_tag": _fmt_function_tag,
    "xml_tag": _fmt_xml_tag,
    "mistral": _fmt_mistral,
    "python_tag": _fmt_python_tag,
    "api_line": _fmt_api_line,
    "react": _fmt_react,
    "name_line": _fmt_name_line,
    "fenced": _fmt_fenced,
    "bare_json": _fmt_bare_json,
    "python_call": _fmt_python_call,
}


# ---------------------------------------------------------------------------------------------
# Envelope and native channel
# ---------------------------------------------------------------------------------------------

_ENVELOPE_KEYS = frozenset(ENVELOPE_KEYS)
_, _STATUS, _MESSAGE, _TOOL_CALLS = ENVELOPE_KEYS  # the keys the parser reads by name
#: A broken envelope whose status says "call" but that ended before any call (a helper's variant).
_CUT_BEFORE_CALLS = 'its status is "call" but it ended before any call'
#: A whole envelope whose status says "call" with no call in it (round nineteen's parse variants,
#: 2026-12-07: no call and no error, so the loop could not tell the model).
_CALL_WITHOUT_CALLS = 'its status is "call" but its tool_calls list is empty'
_ENVELOPE_KEY = "(" + "|".join(map(re.escape, ENVELOPE_KEYS)) + ")"


def _envelope(text: str) -> tuple[list[_Cand], str, list[str]] | None:
    body = text.strip()
    fence = re.fullmatch(r"```[\w\-]*\s*\n?(.*?)\n?```", body, flags=re.S)
    if fence:
        body = fence.group(1).strip()
    if not body.startswith("{"):
        return None
    got = _decode_at(body, 0)
    if got is None:
        return None
    value, end, fixed = got
    if body[end:].strip() or not isinstance(value, dict) or "name" in value:
        return None
    if not (_ENVELOPE_KEYS & value.keys()) or not set(value) <= _ENVELOPE_KEYS | {"content", "final"}:
        return None
    if isinstance(value.get(_MESSAGE), dict) and _api_inner(value[_MESSAGE]):
        return None  # Ollama's {"message": {"role", "tool_calls"}}: an API message (:func:`_api_message`)
    cands: list[_Cand] = []
    items = value.get(_TOOL_CALLS) or []
    if not isinstance(items, list):
        items = [items]
    for i, item in enumerate(items):
        got_c = _from_object(item)
        if got_c:
            cands.extend(got_c)
        elif isinstance(item, dict):
            cands.append(_Cand(item.get(CALL_KEYS[0]), item.get(CALL_KEYS[1], _MISSING)))
        else:
            cands.append(_Cand(None, item))
    message = value.get(_MESSAGE, value.get("content", ""))
    if message is None:
        message = ""  # the grammar allows null: no message, not the text "null"
    elif not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False)
    notes = [_CALL_WITHOUT_CALLS] if not items and value.get(_STATUS) == "call" else []
    return cands, message, [*fixed, *notes]


_ENVELOPE_KEY_RE = re.compile(rf'"{_ENVELOPE_KEY}"\s*:\s*')


#: The tool name of a call the token limit cut: a JSON string, escapes and all.
_CUT_NAME_RE = re.compile(r'"(?:name|function|tool)"\s*:\s*("(?:[^"\\]|\\.)+")')


def _cut_call_name(text: str) -> str | None:
    """The name a cut call object gives, decoded as JSON (``"caf\\u00e9"`` is ``café``, ``"q\\"uote"``
    is ``q"uote``: read raw, the error named an unknown tool instead of the cut call; round fifteen's
    variants, 2026-12-07); None when it names none."""
    found = _CUT_NAME_RE.search(text)
    if not found:
        return None
    try:
        name = json.loads(found.group(1))
    except ValueError:
        return found.group(1)[1:-1]
    return name if isinstance(name, str) else None


def _broken_envelope(text: str) -> tuple[list[_Cand], str, list[str]] | None:
    """An envelope that is not JSON (cut off at the token limit, a stray quote): its message and
    every complete call object after ``"tool_calls"``; None when the text is not envelope-like."""
    body, fixes = _repair(text.strip()[:_MAX_CHARS])
    if not re.match(rf'\{{\s*"{_ENVELOPE_KEY}"', body):
        return None
    keys = {m.group(1): m for m in _ENVELOPE_KEY_RE.finditer(body)}
    # two envelope keys, or one that opens the object: the calls-first and minimal variants
    # (grammar.envelope) cut inside their first call hold "tool_calls" alone
    if len(keys) < 2 and not re.match(rf'\{{\s*"{_TOOL_CALLS}"', body):
        return None
    notes = []
    message = ""
    if _MESSAGE in keys and body.startswith('"', keys[_MESSAGE].end()):
        at = keys[_MESSAGE].end()
        try:
            value, _ = json.JSONDecoder().raw_decode(body, at)
            message = value if isinstance(value, str) else ""
        except ValueError:
            rest = body[at + 1:]
            rest = rest[: len(rest) - (len(rest) - len(rest.rstrip("\\"))) % 2]  # no dangling escape
            try:
                message = json.loads(f'"{rest}"')
            except ValueError:
                message = rest
            notes.append("the message was cut off; kept what there is")
    cands: list[_Cand] = []
    if _TOOL_CALLS in keys:
        start = keys[_TOOL_CALLS].end()
        if body.startswith("[", start):
            start += 1
        cands, spans, _ = _json_cands_in(body[start:], 0)
    head = (f"the envelope is not valid JSON (cut off?); read its message and {len(cands)} complete "
            f"call{'s' if len(cands) != 1 else ''} from it")
    if _TOOL_CALLS in keys:
        rest = body[start + max((e for _, e in spans), default=0):]
        cut_at = _cut_off_tail(rest)
        if cut_at is not None:  # a call the token limit cut: an error, never dropped in silence
            cands.append(_Cand(_cut_call_name(rest[cut_at:]), None, cut=True))
    status = re.match(r'"([^"]*)"', body[keys[_STATUS].end():]) if _STATUS in keys else None
    if not cands and status and status.group(1) == "call":
        notes.append(_CUT_BEFORE_CALLS)
    return cands, message, [head, *fixes, *notes]


def _native(text: str) -> tuple[list[_Cand], list[tuple[int, int]], list[str]] | None:
    m = re.match(r"\s*(?:tool_calls\s*[=:]\s*)?", text)
    start = m.end() if m else 0
    if text[start:start + 1] not in ("[", "{"):
        return None
    got = _decode_at(text, start)
    if got is None:
        return _sdk_repr(text)
    value, end, fixed = got
    cands = _from_object(value)
    if cands is None:
        if value == [] or (isinstance(value, dict) and value.get("tool_calls") == []):
            return [], [(0, end)], list(fixed)
        return None
    return cands, [(0, end)], list(fixed)


_SDK_FUNCTION_RE = re.compile(r"Function\(\s*(\w+\s*=\s*(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
                              r"\s*,\s*\w+\s*=\s*(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"))\s*\)")


def _sdk_repr(text: str) -> tuple[list[_Cand], list[tuple[int, int]], list[str]] | None:
    """The OpenAI SDK's printed ``tool_calls`` (``ChatCompletionMessageToolCall(id=..., function=
    Function(arguments='{...}', name='f'), type='function')``, a helper's variant: no call and no
    error): each ``Function(...)``'s two keyword strings, read as literals, never evaluated."""
    cands, spans = [], []
    for m in _SDK_FUNCTION_RE.finditer(text):
        got = _python_calls(f"f({m.group(1)})")
        if not got or not isinstance(got[0].arguments, dict):
            continue
        fields = got[0].arguments
        cands.append(_Cand(fields.get("name"), fields.get("arguments", _MISSING)))
        spans.append(m.span())
    return (cands, [(0, len(text))], ["read the SDK's printed tool calls"]) if cands else None


#: The Anthropic Python SDK's printed content blocks (``TextBlock(text='...', type='text')``,
#: ``ToolUseBlock(id=..., input={...}, name='f', type='tool_use')``, ``ThinkingBlock(thinking=...)``).
_SDK_BLOCK_RE = re.compile(r"(?<![\w.])(TextBlock|ToolUseBlock|ThinkingBlock)\(")


def _literal_keywords(arg_text: str) -> dict[str, Any] | None:
    """The keyword arguments of ``(k=v, ...)`` whose values are literals (others are left out: an
    SDK's printed object may hold nested objects); None when it is no call's argument list."""
    try:
        node = parse_python(f"_f{arg_text}", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call):
        return None
    out = {}
    for kw in node.keywords:
        if kw.arg is None:
            continue
        try:
            out[kw.arg] = _literal(kw.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            continue
    return out


def _sdk_message(text: str) -> tuple[list[_Cand], str, str, list[str]] | None:
    """The whole output as a message an SDK printed (its ``repr``; a server or wrapper that passed
    ``str(response)`` on): the Anthropic SDK's ``Message(content=[TextBlock(...), ToolUseBlock(...)])``
    (calls, text as content, thinking as reasoning) or the OpenAI SDK's ``ChatCompletionMessage(...,
    tool_calls=[...Function(arguments='{...}', name='f')...])`` (:func:`_sdk_repr`); None when the
    output is not one, or holds no call. Read as literals, never evaluated."""
    body = text.strip()
    head = re.match(r"\[?\s*[A-Z]\w*\(", body)
    if not head:  # a printed object opens the output with its class name
        return None
    # what follows the printed object (or list of them) is the model's text, kept as content
    end = _match_end(body, 0, quotes="\"'") if body.startswith("[") else _paren_end(body, head.end() - 1)
    after = body[end:].strip() if end > 0 else ""
    body = body[:end] if end > 0 else body
    cands: list[_Cand] = []
    texts: list[str] = []
    thoughts: list[str] = []
    for m in list(_SDK_BLOCK_RE.finditer(body))[:64]:
        close = _paren_end(body, m.end() - 1)
        fields = _literal_keywords(body[m.end() - 1:close]) if close > 0 else None
        if fields is None:
            continue
        if m.group(1) == "ToolUseBlock":
            cands.append(_Cand(fields.get("name"), fields.get("input", _MISSING)))
        elif m.group(1) == "TextBlock" and isinstance(fields.get("text"), str):
            texts.append(fields["text"])
        elif m.group(1) == "ThinkingBlock" and isinstance(fields.get("thinking"), str):
            thoughts.append(fields["thinking"])
    if not cands:
        got = _sdk_repr(body)
        if got is None:
            return None
        cands = got[0]
    return (cands, "\n\n".join(t.strip() for t in (*texts, after) if t.strip()),
            "\n\n".join(t.strip() for t in thoughts if t.strip()), ["read the SDK's printed message"])


# ---------------------------------------------------------------------------------------------
# Checking candidates against the offer and the schemas
# ---------------------------------------------------------------------------------------------


def _single_string_param(schema: Mapping[str, Any] | None) -> str | None:
    """The one string parameter a bare string can go into, or None when there is not exactly one."""
    if not isinstance(schema, Mapping):
        return None
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return None

    def is_string(spec: Any) -> bool:
        kind = spec.get("type") if isinstance(spec, Mapping) else None
        return kind == "string" or (isinstance(kind, list) and "string" in kind)

    required = [r for r in schema.get("required", ()) if isinstance(r, str)]
    if required:
        return required[0] if len(required) == 1 and is_string(props.get(required[0])) else None
    strings = [k for k, spec in props.items() if is_string(spec)]
    return strings[0] if len(props) == 1 and len(strings) == 1 else None


def _unfenced(text: str) -> str | None:
    """The body of a code fence that is the whole of ``text`` (```` ```json\n{...}\n``` ````, or on one
    line: ```` ```json {...} ``` ````) when it holds a JSON object or list; else None (a server passed
    the model's fenced arguments on)."""
    if not (text.startswith("```") and text.endswith("```") and len(text) >= 6):
        return None
    opener = _FENCE_OPENER_RE.match(text)
    body = text[opener.end() if opener else 3:-3].strip()
    return body if body.startswith(("{", "[")) else None


def _json_string_literal(text: str) -> str | None:
    """The string a JSON string literal ``text`` spells (``"\\"cheap flights\\""``), else None."""
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


_INTEGER_RE = re.compile(r"[+-]?\d+")
_NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _spelled_scalar(text: str, types: set[str]) -> Any:
    """The integer, number or boolean ``text`` spells exactly (surrounding space aside), the first of
    ``types`` that reads it; ``_MISSING`` when none does."""
    value = text.strip()
    if "integer" in types and _INTEGER_RE.fullmatch(value):
        return int(value)
    if "number" in types and _NUMBER_RE.fullmatch(value):
        number = float(value)
        return number if math.isfinite(number) else _MISSING
    if "boolean" in types and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return _MISSING


def _allows_null(spec: Any) -> bool:
    """Whether a property schema accepts ``null`` (no ``type`` at all accepts anything)."""
    if not isinstance(spec, Mapping):
        return True
    kind = spec.get("type")
    if kind is None:
        return not any(k in spec for k in ("enum", "const", "anyOf", "oneOf")) or None in spec.get("enum", [None])
    return kind == "null" or (isinstance(kind, list) and "null" in kind)


def _types(spec: Any) -> set[str]:
    """The JSON types a property schema names with ``type`` (empty when it names none)."""
    kind = spec.get("type") if isinstance(spec, Mapping) else None
    if isinstance(kind, str):
        return {kind}
    return {k for k in kind if isinstance(k, str)} if isinstance(kind, list) else set()


def _finite(value: Any, depth: int = 0) -> bool:
    """No NaN or Infinity anywhere in ``value`` (JSON has neither; strict JSON output needs that)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if depth > _MAX_DEPTH:
        return True
    if isinstance(value, Mapping):
        return all(_finite(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_finite(v, depth + 1) for v in value)
    return True


def _name_key(name: str) -> str:
    return re.sub(r"[.:_]", "_", name)


def resolve_name(name: str, offered: Sequence[str], known: Collection[str] = ()) -> str | None:
    """The offered tool ``name`` means, or None: the name itself; else the one offered tool
    that matches once ``.``, ``_`` and ``:`` count as the same separator (``clock.alarm``,
    ``clock_alarm`` -> ``clock:alarm``); else the one offered tool that is the name's tail after
    a namespace dot or slash (``default_api.get_weather``, ``functions.clock_alarm``). Two or
    more matches are never guessed between.

    ``known``: the catalogue's tool names (offered or not). A name (or namespace tail) that is
    exactly one of them names that tool, so it is never mapped onto another offered tool by its
    separators: ``clock_now`` is not ``clock:now`` when the catalogue has both (a helper's variant
    x55: the call went to ``clock:now`` with ``clock_now``'s arguments)."""
    if name in offered:
        return name
    if name in known:
        return None
    key = _name_key(name)
    same = {o for o in offered if _name_key(o) == key}
    if len(same) == 1:
        return next(iter(same))
    if same:
        return None
    tails = [name[m.end():] for m in re.finditer(r"[./]", name)]
    if not any(tail in offered for tail in tails) and any(tail in known for tail in tails):
        return None  # functions.clock_now: the un-offered clock_now, as above
    suffix = {o for o in offered for tail in tails if tail and _name_key(tail) == _name_key(o)}
    return next(iter(suffix)) if len(suffix) == 1 else None


class _Checker:
    def __init__(self, offered: Sequence[str], schemas: Mapping[str, Any] | None) -> None:
        self.offered = tuple(offered)
        self.schemas = schemas if isinstance(schemas, Mapping) else {}
        self.errors: list[str] = []
        self.repairs: list[str] = []

    def error(self, message: str) -> None:
        if message not in self.errors:
            self.errors.append(message)

    def resolve(self, name: Any) -> str | None:
        """The offered tool a candidate's name means (see :func:`resolve_name`), or None."""
        if not isinstance(name, str) or not name.strip():
            return None
        return resolve_name(name.strip(), self.offered, self.schemas)

    def names_a_tool(self, name: Any) -> bool:
        """Whether ``name`` means an offered tool or is exactly another tool the schemas know (a
        call of a real tool that was not offered: reported, never read as data or prose)."""
        return self.resolve(name) is not None or (isinstance(name, str) and name.strip() in self.schemas)

    def check(self, cand: _Cand) -> list[Call]:
        name = cand.name
        if cand.cut and (not isinstance(name, str) or not name.strip()):
            self.error("a call was cut off before its end (the output hit the token limit?); send the whole call again")
            return []
        if not isinstance(name, str) or not name.strip():
            self.error(f"a tool call without a tool name (got {name!r}); call one of: {self._valid()}")
            return []
        name = name.strip()
        resolved = resolve_name(name, self.offered, self.schemas)
        if resolved is None:
            other = " (a catalogue tool, but not offered this turn)" if name in self.schemas else ""
            self.error(f"unknown tool {_short(name, 80)}: not in offered tools{other}; return an error message to the "
                       f"model listing valid names: {self._valid()}")
            return []
        if resolved != name:
            self.repairs.append(f"read the tool name {_short(name, 80)} as {resolved!r}, the one offered tool it names")
            name = resolved
        if cand.note:
            self.repairs.append(f"{cand.note} ({name})")
        if cand.cut:
            self.error(f"the call to {name} was cut off before its end (the output hit the token limit?); "
                       "send the whole call again")
            return []
        schema = self.schemas.get(name)
        args = cand.arguments
        if args is _MISSING or args is None:
            args = {}
        if isinstance(args, str):
            stripped = args.strip()
            for _ in range(3):  # arguments encoded twice: the string holds a JSON string literal
                inner = _json_string_literal(stripped)
                if inner is None:
                    break
                self.repairs.append(f"decoded {name}'s arguments, a JSON string inside the arguments string")
                stripped = inner.strip()
            unfenced = _unfenced(stripped)
            if unfenced is not None:  # '```json\n{"city": "Oslo"}\n```': the object, never markup in a string
                self.repairs.append(f"read {name}'s arguments out of the code fence around them")
                stripped = unfenced
            parsed: Any = _param_tags(stripped) if stripped.startswith("<") else None
            if parsed:  # "<city>Oslo</city>": one tag per parameter, as in Cline's calls
                self.repairs.append(f"read {name}'s arguments from one tag per parameter")
            else:
                parsed = _MISSING
            if parsed is _MISSING and (stripped.startswith(("{", "[")) or stripped in ("", "null")):
                try:
                    parsed, fixed = loads_repaired(stripped) if stripped else ({}, ())
                    self.repairs.extend(fixed)
                except (ValueError, RecursionError):
                    parsed = self._run_together(name, stripped)
                    if isinstance(parsed, list):
                        return [c for item in parsed for c in self.check(_Cand(name, item, source=cand.source))]
                    if parsed is _MISSING:  # "{'path': 'tmp/cache.bin'}": a Python dict, not JSON
                        try:
                            literal = python_literal(stripped)
                        except ValueError:
                            literal = None
                        if isinstance(literal, dict):
                            parsed = literal
                            self.repairs.append(f"read {name}'s arguments string as a Python literal (single quotes)")
                    if parsed is _MISSING:  # '{ticker: "NVDA"}' after a name marker: bare keys (x38's kind)
                        bare = _bare_keys_value(stripped)
                        if isinstance(bare, dict):
                            parsed = bare
                            self.repairs.append(f"read {name}'s arguments with bare keys (JavaScript style, not JSON)")
            if parsed is None:
                parsed = {}
            if parsed is _MISSING:
                # a string that opens like an object or a list is broken JSON, not a value: put into
                # the one string parameter, '{"path": "a.md", "content": "b"' became the path (a
                # helper's variant of parse-27, 2026-12-05)
                # markup ("```", "<tag>") is no bare value either: it never goes into a string parameter
                target = None if stripped.startswith(("{", "[", "```", "<")) else _single_string_param(schema)
                if target is None or not stripped:
                    self.error(f"arguments for {name} are not a JSON object (got {_short(args)}); "
                               "send the arguments as a JSON object")
                    return []
                self.repairs.append(f"put the bare string into {name}'s one string parameter {target!r}")
                parsed = {target: stripped}
            args = parsed
        if cand.positional:
            target = _single_string_param(schema)
            if len(cand.positional) == 1 and isinstance(cand.positional[0], dict) and not args:
                # name({"city": "Oslo"}): the one positional argument is the arguments object
                # (a new user's trial: 'clock:now({"timezone": "Asia/Tokyo"})' was refused)
                args = cand.positional[0]
                self.repairs.append(f"read {name}'s one positional object as its arguments")
            elif len(cand.positional) == 1 and target is not None and target not in args:
                args = {**args, target: cand.positional[0]}
                self.repairs.append(f"put the positional argument into {name}'s parameter {target!r}")
            else:
                self.error(f"positional arguments for {name} cannot be named; send keyword arguments")
                return []
        if not isinstance(args, dict):
            self.error(f"arguments for {name} are not a JSON object (got {_short(args)}); "
                       "send the arguments as a JSON object")
            return []
        if not _finite(args):
            self.error(f"arguments for {name} hold NaN or Infinity, which JSON does not have; "
                       "send a finite number or a string")
            return []
        if isinstance(schema, Mapping):
            props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
            args = self._raw_json_in_strings(name, args, props)
            if args is None:
                return []
            for key in schema.get("required", ()) or ():
                if not isinstance(key, str):
                    continue
                if key not in args:
                    self.error(f"missing required argument {key!r} for {name}; return as a recoverable tool "
                               "error so the model can retry")
                    return []
                if args[key] is None and not _allows_null(props.get(key)):
                    self.error(f"required argument {key!r} for {name} is null; send a value (return as a "
                               "recoverable tool error so the model can retry)")
                    return []
            if schema.get("additionalProperties") is False and props:
                unknown = [k for k in args if k not in props]
                if unknown:  # the schema forbids them: an error the model can act on, not a call the
                    # tool refuses later (a helper's variant of parse-35, 2026-12-05)
                    self.error(f"unknown argument{'s' if len(unknown) > 1 else ''} "
                               f"{', '.join(repr(k) for k in unknown[:5])} for {name}; its parameters are "
                               f"{', '.join(list(props)[:20])} (return as a recoverable tool error so the model can retry)")
                    return []
            if not self._scalars_fit(name, args, props):
                return []
        return [Call(name=name, arguments=args, source=cand.source)]

    def _scalars_fit(self, name: str, args: dict[str, Any], props: Mapping[str, Any]) -> bool:
        """False, with an error naming the argument, the value and the type, for a value no
        reading makes the number or boolean its schema wants (``{"n": "seven"}``, ``7.5`` for an
        integer, ``true`` for a number): the call is dropped. A string that spells one exactly (``"7"``, ``"true"``)
        or a whole float for an integer passes unchanged: ``repair`` coerces it (the lever
        ``repair_arguments``), and without the lever the tool reports it."""
        for key, value in args.items():
            types = _types(props.get(key)) & {"integer", "number", "boolean", "string", "null"}
            wanted = types & {"integer", "number", "boolean"}
            if value is None or not wanted or "string" in types:
                continue
            if isinstance(value, bool):
                fits = "boolean" in wanted
            elif isinstance(value, (int, float)):
                fits = "number" in wanted or ("integer" in wanted and float(value).is_integer())
            elif isinstance(value, str):
                fits = _spelled_scalar(value, wanted) is not _MISSING
            else:
                continue  # objects and lists: _raw_json_in_strings
            if not fits:
                self.error(f"argument {key!r} for {name} is {_short(value, 40)}, but its schema expects "
                           f"{' or '.join(sorted(wanted))}; send a value of that type")
                return False
        return True

    def _run_together(self, name: str, text: str) -> Any:
        """An arguments string holding JSON objects run together (``{...}{...}``, a streaming
        server's duplicate): identical ones are one call, different ones one call each; anything
        else is not JSON (``_MISSING``)."""
        found = _scan_json(text, lists=False)
        rest = _cut(text, [(start, end) for _, start, end, _ in found])
        if len(found) < 2 or re.sub(r"[\s;,]", "", rest) or not all(isinstance(v, dict) for v, *_ in found):
            return _MISSING
        values = [v for v, *_ in found]
        if all(v == values[0] for v in values):
            self.repairs.append(f"the arguments for {name} held the same JSON object {len(values)} times; "
                                "read it once")
            return values[0]
        self.repairs.append(f"the arguments for {name} held {len(values)} different JSON objects run together; "
                            "read one call each")
        return values

    def _raw_json_in_strings(self, name: str, args: dict[str, Any],
                             props: Mapping[str, Any]) -> dict[str, Any] | None:
        """A JSON object or list written raw where the schema wants a string is serialised into
        the string (a file's content, a query body); where the schema wants neither a string nor a
        container, the call is dropped with an error the model can act on."""
        out = dict(args)
        for key, value in args.items():
            if not isinstance(value, (dict, list)):
                continue
            types = _types(props.get(key))
            if not types or types & {"object", "array"}:
                continue
            if "string" in types:
                out[key] = json.dumps(value, ensure_ascii=False)
                self.repairs.append(f"serialised the raw JSON in {name}'s string argument {key!r} into a string")
                continue
            kind = "a JSON object" if isinstance(value, dict) else "a JSON list"
            self.error(f"argument {key!r} for {name} is {kind}, but its schema expects "
                       f"{' or '.join(sorted(types))}; send a value of that type")
            return None
        return out

    def _valid(self) -> str:
        return ", ".join(self.offered) if self.offered else "(no tools are offered)"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _cut(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` without the calls at ``spans``, and without the marks that held only a call: the
    backticks of inline code around it, a quote line left with only its ``>`` ("You sent me
    `{...}` - run it?" read "You sent me `` - run it?"; round nineteen's parse variants)."""
    out, pos = [], 0
    for start, end in sorted(spans):
        while start > pos and end < len(text) and text[start - 1] == text[end] == "`":
            start, end = start - 1, end + 1
        if start > pos:
            out.append(text[pos:start])
        pos = max(pos, end)
    out.append(text[pos:])
    joined = "".join(out)
    if joined != text:
        joined = re.sub(r"(?m)^[ \t]*>[ \t]*(?:\n|\Z)", "", joined)
    return re.sub(r"\n{3,}", "\n\n", joined).strip()


# ---------------------------------------------------------------------------------------------
# The entry point
# ---------------------------------------------------------------------------------------------


def calls(raw: Any, offered: Any, *, channel: str = "text",
          schemas: Mapping[str, Mapping[str, Any]] | None = None,
          text_tags: Mapping[str, str] | None = None) -> Parsed:
    """Read tool calls out of one model output. Never raises.

    Parameters
    ----------
    raw : str
        The model output (``bytes`` are decoded as UTF-8 with replacement, a list of stream
        chunks is joined; anything else is read as no output).
    offered : Offer or iterable of str
        The tools offered this turn; a name outside it is reported, never returned.
    channel : {"text", "text-stream", "native"}
        ``native``: the server's ``tool_calls`` field shown as text; the others: content text.
    schemas : mapping of str to JSON Schema, optional
        Tool name -> parameter schema. Enables the bare-string argument rule, the check
        for missing required arguments, and raw JSON in a string argument. Its names that are
        not offered are the catalogue's other tools: a call naming one exactly is reported as
        not offered, never mapped onto an offered tool by its separators (pass the whole
        catalogue's schemas, as the tool loop does).
    text_tags : mapping of str to str, optional
        Plain-text tags a catalogue maps to tools (``{"SEARCH": "web:search"}`` reads
        ``[SEARCH: query]`` as a call of ``web:search`` with its one string parameter). Without
        an explicit entry a tag is never guessed to be a call.

    Returns
    -------
    Parsed
        ``calls`` in output order, each with its ``source`` (:data:`SOURCES`); ``error``
        ``None`` when nothing went wrong. Output that looks like a call attempt but yields no
        call (cut off, an unknown tag, unreadable arguments) gets an ``error`` that says so.

    Notes
    -----
    Order and rules: module docstring; cases: tests/cases/parsing_cases.json (issues #5, #16).
    Reasoning blocks (``<think>...</think>``) are taken out first: a call drafted there is never a
    call, and output that ends inside one yields no call.
    """
    _BUDGET.python_tries, _BUDGET.unread_call, _BUDGET.scan_spent, _BUDGET.matched_chars = _PYTHON_TRIES, False, False, 0
    try:
        return _calls(raw, offered, channel, schemas, text_tags)
    except Exception as exc:  # never raise: a bug here must not end the tool loop
        text = raw if isinstance(raw, str) else ""
        return Parsed(content=text.strip(), error=f"the parser failed on this output ({type(exc).__name__}); "
                                                  "answer again as one JSON envelope")


#: Formats whose calls are explicit call syntax; ``fenced`` and the free-standing ones are decided below.
_TAGGED = frozenset({"gemma", "deepseek", "harmony", "functionary_v2", "tool_call_tag", "function_tag", "xml_tag", "mistral", "python_tag", "api_line",
                     "react", "name_line", "text_tag"})


def _source(fmt: str, content: str) -> str:
    """Where a format's calls were read. Call objects or Python calls standing alone (nothing
    but separators around them: the reply *is* the call) are ``tagged``; inside running text,
    where a model may only be showing what a call would look like, they are ``prose``."""
    if fmt in _TAGGED:
        return "tagged"
    if fmt == "fenced":
        return "fenced"
    # list markers ("1.", "-") between the calls are separators too: a numbered list of calls is the reply
    content = re.sub(r"(?m)^[ \t]*(?:\d{1,2}[.)]|[-*•])(?=\s|$)", "", content)
    return "tagged" if not re.sub(r"[\s;,\[\]]", "", content) else "prose"


def _calls(raw: Any, offered: Any, channel: str, schemas: Any, text_tags: Any) -> Parsed:
    if isinstance(raw, (bytes, bytearray)):
        raw = bytes(raw).decode("utf-8", errors="replace")
    elif isinstance(raw, (list, tuple)) and all(isinstance(chunk, str) for chunk in raw):
        raw = "".join(raw)  # stream chunks: the parser reads the whole output once it has ended
    text = raw if isinstance(raw, str) else ""
    names = getattr(offered, "names", offered)
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    try:
        offered_names = tuple(str(n) for n in (names or ()))
    except TypeError:
        offered_names = ()
    checker = _Checker(offered_names, schemas)
    if channel not in ("text", "text-stream", "native"):
        return Parsed(content=text.strip(),
                      error=f"unknown channel {channel!r}; expected one of text, text-stream, native")
    if len(text) > _MAX_CHARS:
        checker.repairs.append(f"read only the first {_MAX_CHARS} of {len(text)} characters")
        if _has_cands(text[max(_MAX_CHARS, len(text) - _MAX_CHARS):]):
            # a call past the reading bound is lost: said, never dropped in silence (290 kB of prose
            # then a call gave no call and no error; round fifteen's variants, 2026-12-07)
            checker.error(f"the output is {len(text):,} characters and only the first {_MAX_CHARS:,} are "
                          "read; a call after them was not: send the call alone")
        text = text[:_MAX_CHARS]
    text = _without_trailing_end(text)  # "...<｜end▁of▁sentence｜>" ended the content (a helper's variant)
    past_end = _END_OF_TURN_RE.search(text)
    if past_end and text[past_end.end():].strip():
        text = text[:past_end.start()]
        checker.repairs.append("dropped what the model wrote after its end-of-turn token (its turn had ended)")
    reasoning = ""

    def finish(cands: list[_Cand], content: str, fmt: str, repairs: Iterable[str], source: str) -> Parsed:
        checker.repairs.extend(repairs)
        for cand in cands:
            cand.source = cand.source or source
        found = tuple(c for cand in _without_null_drafts(cands, checker.repairs) for c in checker.check(cand))
        if _BUDGET.unread_call:
            checker.error("the output has too many brackets that open no JSON value: a call-shaped object "
                          "after them was not read; send the call alone")
        elif _BUDGET.scan_spent and not found:
            checker.error("the output repeats brackets, quotes or call headers that never close, past what one "
                          "parse reads: part of it was not read; send the call alone")
        return Parsed(calls=found, content=content, error="\n".join(checker.errors) or None,
                      repairs=tuple(dict.fromkeys(checker.repairs)), format=fmt, reasoning=reasoning)

    if channel == "native":
        api = _api_message(text)  # a whole API message shown as the field: its text is the content
        if api is not None:
            cands, message, reasoning, fixed, _ = api
            return finish(cands, message, "native", fixed, "native")
        sdk = _sdk_message(text)
        if sdk is not None:
            cands, message, reasoning, fixed = sdk
            return finish(cands, message, "native", fixed, "native")
        got = _native(text)
        if got is not None:
            cands, spans, fixed = got
            return finish(cands, _cut(text, spans), "native", fixed, "native")
    env = _envelope(text)  # before reasoning blocks: the envelope's strings may hold anything
    if env is not None:
        cands, message, fixed = env
        if _CALL_WITHOUT_CALLS in fixed:
            checker.error('the reply\'s status is "call" but its tool_calls list is empty; send the call in '
                          'tool_calls, or status "answer" with the message')
        return finish(cands, message.strip(), "envelope", fixed, "envelope")
    api = _api_message(text)  # likewise: a whole API message's text blocks may hold anything
    if api is not None:
        cands, message, reasoning, fixed, fenced = api
        return finish(cands, message, "api_message", fixed, "fenced" if fenced else "tagged")
    sdk = _sdk_message(text)  # the same message as an SDK printed it
    if sdk is not None:
        cands, message, reasoning, fixed = sdk
        return finish(cands, message, "api_message", fixed, "tagged")
    text, reasoning, unclosed = _split_reasoning(text)
    if reasoning:
        checker.repairs.append("took out a reasoning block: nothing in it is a call")
    text, final = _harmony_answer(text)
    if final:
        checker.repairs.append("read the answer out of its harmony final-channel tokens")
    text, marked = _answer_markers(text)
    if marked:
        checker.repairs.append("took the markers around the answer out of the content")
    text, empty = _without_empty_wrappers(text)
    if empty:  # "<seed:tool_call></seed:tool_call>": no call, and no markup left for the user
        checker.repairs.append("removed an empty call wrapper")
    text, invented = _before_invented_result(text)
    if invented:
        checker.repairs.append(_INVENTED_REPAIR)
    api = _api_message(text) if reasoning else None  # "<think>...</think>" then a whole API message
    if api is not None:
        cands, message, thoughts, fixed, fenced = api
        reasoning = "\n\n".join(t for t in (reasoning, thoughts) if t)
        return finish(cands, message, "api_message", fixed, "fenced" if fenced else "tagged")
    env = (_envelope(text) if reasoning else None) or _broken_envelope(text)
    if env is not None:
        cands, message, fixed = env
        if _CUT_BEFORE_CALLS in fixed:
            checker.error("the envelope was cut off before its call (the output hit the token limit?); send the "
                          "whole envelope again")
        return finish(cands, message.strip(), "envelope", fixed, "envelope")
    for fmt in (*TEXT_FORMATS, "text_tag"):
        got = _text_tags(text, text_tags) if fmt == "text_tag" else _FORMATS[fmt](text)
        if got is None:
            continue
        cands, spans, fixed = _offered_only_kept(got, checker)
        if not cands or all(c.weak and not checker.names_a_tool(c.name) for c in cands):
            continue  # "API: the docs say..." is prose, not a call to a tool named 'the'
        cut_call = None
        if fmt != "text_tag":
            at, copy = _cut_tail_start(text, cands, spans)
            again = _offered_only_kept(_FORMATS[fmt](text[:at]), checker) if at is not None and copy else None
            if again is not None and again[0]:
                # the model repeated its call until the token limit cut the last copy (parse-39; a
                # helper's variants x47, x53: Mistral's and DeepSeek's kept the cut copy as markup in
                # the content, or as a second call): the calls before it stand, no error
                cands, spans, fixed = again[0], _to_the_end(again[1], len(text)), [*again[2], _CUT_COPY_REPAIR]
            elif at is not None and not copy:
                cut_call = at  # another call cut after those read: an error, and no markup left
                spans = _to_the_end(spans, len(text))
        cands, spans, fixed = _once_each(cands, spans, list(fixed))
        content = _cut(text, spans)
        tail = _cut_off_tail(content)
        if tail is not None:  # a call the token limit cut after those read: say so (a helper's
            # variants of parse-05 and parse-43: the second call was dropped, error null)
            content = _without_trailing_markers(content[:tail])
        if tail is not None or cut_call is not None:
            checker.error(f"a call after the {len(cands)} read was cut off before its end (the output hit the "
                          "token limit?); send it again")
        content = _without_empty_fences(content)  # "```xml\n\n```" once the call is out (x39): no content
        content = _without_empty_wrappers(content)[0]  # "<tools></tools>" once the calls are out: no prose
        content = _PHI_MARKER_RE.sub("", content)
        source = _source(fmt, content)
        if source != "prose" and _EXAMPLE_INTRO_RE.search(text[:min(s for s, _ in spans)] if spans else ""):
            # "I did not call anything, I'm only showing the format. A call would look like: ```json...```",
            # "The ReAct format is: Thought: ... Action: ...": shown, not made (a helper's variants of parse-07)
            source = "prose"
        elif source != "prose" and re.search(r"\w", content) and (_in_inline_code(text, spans)
                                                                 or _inside_a_sentence(text, spans)):
            # "Small models answer with `<tool_call>{...}</tool_call>` - that's the Hermes format":
            # a call quoted in inline code inside a sentence is shown, not made (a helper's variant)
            source = "prose"
        if fmt in ("bare_json", "python_call") and source == "tagged":
            content = ""  # only separators ("; ") were left between the calls
        if fmt in _MARKED:  # a second wrapper after the first ("<tool_call>...</tool_call>" then
            # "[TOOL_CALLS]send_message[ARGS]{...}": the second call was lost, error null)
            for other in _MARKED:
                more = _FORMATS[other](content) if other != fmt else None
                if more and len(more[0]) == len(more[1]):  # one span per call: a call only if offered is paired
                    keep = [i for i, c in enumerate(more[0]) if not c.offered_only or checker.names_a_tool(c.name)]
                    more = ([more[0][i] for i in keep], [more[1][i] for i in keep], more[2]) if keep else None
                if more:
                    cands = cands + more[0]
                    fixed = [*fixed, *more[2]]
                    content = _cut(content, more[1])
            bare = _fmt_bare_json(content) if content.lstrip().startswith("{") else None
            if bare and not re.sub(r"[\s;,]", "", _cut(content, bare[1])):
                # a tagged call, then a call object standing alone (a helper's variant: left as content)
                cands = cands + bare[0]
                fixed = [*fixed, *bare[2]]
                content = ""
        content = _without_empty_wrappers(content)[0]  # "<function_calls></function_calls>" once the calls are out
        if not re.sub(r"[`\s]", "", content):
            content = ""  # a call wrapped in backticks leaves them alone
        content, invented = _without_invented_result(content)
        if invented:
            fixed = [*fixed, _INVENTED_REPAIR]
        answers = [c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments, ensure_ascii=False)
                   for c in cands if c.answer]
        if answers:  # LangChain's final answer is the reply's text, not a call of a tool named "Final Answer"
            cands = [c for c in cands if not c.answer]
            content = re.sub(r"(?m)^[ \t]*Action[ \t]*:[ \t]*$", "", content)  # its label, before the fence
            content = "\n\n".join(t.strip() for t in (content, *answers) if t.strip())
            fixed = [*fixed, "read the agent's final answer as the reply's text"]
        return finish(cands, content, fmt, fixed, source)
    problem, cut_at = _attempt_at(text, offered_names, checker.schemas)
    content = text.strip()
    if unclosed and (problem or _attempt(reasoning, offered_names, checker.schemas) or _has_cands(reasoning)):
        checker.error(f"the output ended inside a reasoning block ({unclosed} was never closed), so nothing in it "
                      "is a call; close the block and write the call after it")
    elif problem:
        checker.error(f"no tool call could be read, but the output looks like one: {problem}; send the call again "
                      'as one JSON object {"name": ..., "arguments": {...}}')
        if cut_at is not None:  # the prose before the cut call is the content, never its markup (x54)
            content = _without_empty_fences(_without_trailing_markers(text[:cut_at]))
    return finish([], content, "", (), "")


#: Words that introduce an example of a call, not a call: "a call would look like", "the ReAct
#: format is", "for example" (a helper's variants of parse-07, 2026-12-05: the example's state-changing
#: "cancel" came back as a call that would run without confirmation).
_EXAMPLE_INTRO_RE = re.compile(
    r"(?i)\b(?:would look like|could look like|might look like|looks like this|for example|for instance|e\.g\.|"
    r"an example|example (?:call|output|format)|the (?:\w+ )?format is|showing the format|here is how|"
    r"i did not call|i didn't call|i have not called|i haven't called|without calling)\b")
#: Phi-4-mini writes its calls as ``functools[{...}]``: the word is a marker, not content.
_PHI_MARKER_RE = re.compile(r"^\s*functools\s*$")

#: A wrapper around calls left empty once they are read (``<function_calls><invoke name=...>``, a
#: helper's variant of parse-37: the markup reached the user as the reply's text).
#: Empty, a call wrapper holds no call (nor an error): ``<seed:tool_call></seed:tool_call>`` (Seed-OSS),
#: ``<minimax:tool_call>`` (MiniMax-M2), ``<TOOLCALL>`` (Nemotron), Cohere's ``<|START_ACTION|><|END_ACTION|>``,
#: InternLM2's ``<|action_start|><|plugin|><|action_end|>``, LFM2's and Kimi K2's token pairs, Gemma's
#: ``<start_function_call><end_function_call>``, an empty ```` ```tool_code ```` fence (Gemma 3). An empty
#: JSON list inside is no call either (``<tool_calls>[]</tool_calls>``, LFM2's ``<|tool_call_start|>[]
#: <|tool_call_end|>``), nor after the markers whose closer is optional or absent: Mistral's
#: ``[TOOL_CALLS][]``, Hermes' ``<tool_call>[]``, Phi-4-mini's ``<|tool_call|>[]`` and ``functools[]``,
#: Llama's ``<|python_tag|>[]`` (a helper's variants: the markup stayed in the content, with an error).
_NO_CALLS = r"\s*(?:\[\s*\]\s*)?"  # nothing, or an empty list of calls
_EMPTY_WRAPPER_RE = re.compile(
    rf"<((?:seed:|minimax:)?tool_calls?|function_calls?|toolcalls?|calls|tools?)>{_NO_CALLS}</\1>\s*"
    rf"|<\|START_ACTION\|>{_NO_CALLS}<\|END_ACTION\|>\s*"
    rf"|<\|action_start\|>\s*(?:<\|plugin\|>)?{_NO_CALLS}<\|action_end\|>\s*"
    rf"|<\|tool_call_start\|>{_NO_CALLS}<\|tool_call_end\|>\s*|<\|tool_call\|>{_NO_CALLS}<\|/tool_call\|>\s*"
    rf"|<\|tool_calls_section_begin\|>{_NO_CALLS}<\|tool_calls_section_end\|>\s*"
    rf"|<{_DS_BAR}tool{_DS_SP}calls{_DS_SP}begin{_DS_BAR}>{_NO_CALLS}"
    rf"<{_DS_BAR}tool{_DS_SP}calls{_DS_SP}end{_DS_BAR}>\s*"
    rf"|<start_function_call>{_NO_CALLS}<end_function_call>\s*|<\|tool_call>{_NO_CALLS}<tool_call\|>\s*"
    rf"|```[ \t]*(?:tool_code|tool_calls?)[ \t]*\n?{_NO_CALLS}```[ \t]*\n?"
    r"|(?:\[TOOL_CALLS\]|<\|python_tag\|>|<\|tool_call\|>|<tool_call>|<\|tool_call_start\|>|(?<![\w.])functools)"
    r"\s*\[\s*\]\s*",
    flags=re.I)


def _without_empty_wrappers(text: str) -> tuple[str, int]:
    """``text`` without empty call wrappers (:data:`_EMPTY_WRAPPER_RE`), and how many went; one
    quoted in inline code (``"Mistral writes `[TOOL_CALLS][]` then"``) is prose about it and stays."""
    count = 0

    def drop(m: re.Match[str]) -> str:
        nonlocal count
        if m.start() > 0 and text[m.start() - 1] == "`" and not m.group(0).startswith("`"):
            return m.group(0)
        count += 1
        return ""
    return _EMPTY_WRAPPER_RE.sub(drop, text), count


#: Formats with explicit call markers, read again on what the first one left (two wrappers in one output).
_MARKED = tuple(f for f in TEXT_FORMATS if f in _TAGGED and f not in ("api_line", "react"))  # not line-shaped ones
_INLINE_CODE_RE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def _inside_a_sentence(text: str, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether every call span has words before and after it on its own line: "Example output
    format: <tool_call>{...}</tool_call> - that is how I call tools." shows a call, it makes none
    (a helper's variant of parse-07; a reply that opens or closes with the call still makes it)."""
    def words_around(start: int, end: int) -> bool:
        before = text[text.rfind("\n", 0, start) + 1:start]
        after_end = text.find("\n", end)
        after = text[end:after_end if after_end >= 0 else len(text)]
        return all(re.search(r"\w", re.sub(r"<[^<>]*>", "", side)) for side in (before, after))  # markup is no word
    return bool(spans) and all(words_around(s, e) for s, e in spans)


def _in_inline_code(text: str, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether every call span lies inside an inline code span (`` `...` ``) of running text."""
    code = [m.span(1) for m in _INLINE_CODE_RE.finditer(text)]
    return bool(code and spans) and all(any(a <= s and e <= b for a, b in code) for s, e in spans)


def _as_object(arguments: Any) -> dict | None:
    """A candidate's arguments as a dict: a dict, or a string holding one JSON object; else None."""
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str) and arguments.strip().startswith("{"):
        try:
            value = json.loads(arguments)
        except (ValueError, RecursionError):
            return None
        return value if isinstance(value, dict) else None
    return None


def _without_null_drafts(cands: list[_Cand], repairs: list[str]) -> list[_Cand]:
    """``cands`` without the drafts: a call that sends null for an argument which another call of
    the same tool, agreeing on every other argument, gives a value (parse-25: ``{"n": null}``
    then ``{"n": 7}``). Needs no schema; each drop is reported in ``repairs``."""
    objects = [_as_object(c.arguments) for c in cands]
    keep = []
    for i, (cand, args) in enumerate(zip(cands, objects)):
        nulls = [k for k, v in (args or {}).items() if v is None]
        fuller = nulls and any(
            j != i and other is not None and cands[j].name == cand.name
            and all(other.get(k) is not None for k in nulls)
            and all(other.get(k) == v for k, v in args.items() if v is not None)
            for j, other in enumerate(objects))
        if fuller:
            repairs.append(f"dropped a call to {cand.name} with {', '.join(map(repr, nulls))} null: "
                           "another call of it gives the value")
        else:
            keep.append(cand)
    return keep


def _has_cands(text: str) -> bool:
    """Whether any text format finds call-shaped text in ``text`` (names not checked)."""
    return any(_FORMATS[fmt](text) for fmt in TEXT_FORMATS)


#: The value holds no "[": from every "[" of "[SEARCH: x[SEARCH: x..." the pattern read on to the
#: line's end (80,000 characters took 10 s; round seventeen's hostile variants, 2026-12-07).
_TEXT_TAG_RE = re.compile(r"\[([A-Za-z][\w \-]{0,40}):[ \t]*([^\[\]\n]*)\]")


def _text_tags(text: str, mapping: Any) -> _Found | None:
    """``[TAG: value]`` where the catalogue maps ``TAG`` to a tool; None without a mapping."""
    if not isinstance(mapping, Mapping) or not mapping:
        return None
    table = {str(k).strip().upper(): v for k, v in mapping.items() if isinstance(v, str)}
    cands, spans = [], []
    for m in _TEXT_TAG_RE.finditer(text):
        tool = table.get(m.group(1).strip().upper())
        if tool is not None:
            cands.append(_Cand(tool, m.group(2).strip()))
            spans.append(m.span())
    return (cands, spans, []) if cands else None


_MARKER_RE = re.compile(r"<\|?/?([^<>\s|=/]*(?:tool|call|function|invoke)[^<>\s|=/]*)[^<>]{0,200}>"
                        r"|\[TOOL_CALLS\]|\[ARGS\]|<\|python_tag\|>|(?<![\w.:\-])call:[A-Za-z_][\w.:\-]*\s*\{",
                        flags=re.I)
#: A marker followed by a verb or a function word is the subject of a sentence about it.
_MARKER_AS_SUBJECT = (r"(?i)\s*(?:tags?|tokens?|markers?)?\s*(?:is|are|was|were|marks|means|wraps|opens|closes|starts|"
                      r"ends|tells|signals|denotes|and|or|should|must|can|will|has|tag|token)\s+[a-z]")
_NAME_KEY_RE = re.compile(r"""["']?(?:name|function|tool)["']?\s*[:=]""")


#: A Python-style call opening a line or following ``;``, ``[`` or ``,``: where a cut one may start.
_PY_CALL_START_RE = re.compile(r"(?m)(?:^[ \t]*|(?<=[;\[,])[ \t]*)(" + _NAME + r")\(")


def _cut_off_tail(content: str) -> int | None:
    """Where a call that never closes starts, when it runs to the end of ``content`` (what is left
    after the calls read); None when there is none. Three shapes (a helper's variants of parse-05
    and parse-43): an object with a name key (``{"name": "b", "argu``), an object right after a
    call marker on its line (``[TOOL_CALLS]b[ARGS]{"query": "wea``: from the marker), and a
    Python-style call (``get_weather(city="Ber``)."""
    for m in list(re.finditer(r"\{", content))[:64]:
        if _match_end(content, m.start()) >= 0 or _match_end(content, m.start(), quotes="\"'") >= 0:
            continue
        if _NAME_KEY_RE.search(content[m.start():m.start() + 400]):
            return m.start()
        line_start = content.rfind("\n", 0, m.start()) + 1
        marker = _MARKER_RE.search(content, line_start, m.start())
        if marker is not None:
            return marker.start()
    for m in list(_PY_CALL_START_RE.finditer(content))[:64]:
        if _paren_end(content, m.end() - 1) < 0 and not re.search(r"\)\s*$", content):
            return m.start(1)
    closers = [m.end() for m in _CLOSE_CALL_MARKER_RE.finditer(content)]
    opened = _OPEN_CALL_MARKER_RE.search(content, closers[-1] if closers else 0)
    return opened.start() if opened else None


#: The repair reported when a trailing copy of the last call, cut by the token limit, is ignored.
_CUT_COPY_REPAIR = "ignored a copy of the call before it that the token limit cut off at the end of the output"


def _offered_only_kept(got: _Found | None, checker: _Checker) -> _Found | None:
    """``got`` without the candidates that are calls only when their name is a tool (``{"name": X}``
    alone, a line ``x(...)``) and whose name is none: data or prose, not calls."""
    if got is None:
        return None
    cands, spans, fixed = got
    keep = [i for i, c in enumerate(cands) if not c.offered_only or checker.names_a_tool(c.name)]
    if len(keep) < len(cands):
        spans = [spans[i] for i in keep] if len(spans) == len(cands) else spans
        cands = [cands[i] for i in keep]
    return cands, spans, fixed


def _to_the_end(spans: Sequence[tuple[int, int]], end: int) -> list[tuple[int, int]]:
    """``spans`` with the one that ends last stretched to ``end`` (over a cut call after it), so
    each call keeps one span."""
    out = list(spans)
    last = max(range(len(out)), key=lambda i: out[i][1])
    out[last] = (out[last][0], max(out[last][1], end))
    return out


def _squashed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _cut_tail_start(text: str, cands: Sequence[_Cand], spans: Sequence[tuple[int, int]]) -> tuple[int | None, bool]:
    """Where a call the token limit cut at the end of ``text`` starts, and whether it is a copy of
    the call before it; ``(None, False)`` when the output does not end in one.

    The tail is what is left after every span, or the last span when it follows the one before
    it directly (a format that read the cut copy as a call of its own). Spaces aside, a copy is
    the start of the text of the call before it, and it is told from another call when the model
    was repeating itself (that call's text is there twice) or when it reaches into the name: a
    bare opener after one call cannot say which call it began (variant-mark-10). A tail left
    after the spans that opens with the markup before that call's name (``[TOOL_CALLS]get_sto``)
    and is no copy is another call, cut. The same for every format (parse-39; a helper's variants
    x47 and x53: Mistral's and DeepSeek V3.1's cut copies stayed as markup in the content)."""
    if not spans or not text.rstrip():
        return None, False
    ordered = sorted(spans)
    names = [_squashed(c.name) for c in cands if isinstance(c.name, str) and c.name.strip()]
    tries = []
    end = max(e for _, e in ordered)
    if text[end:].strip():
        tries.append((end + len(text[end:]) - len(text[end:].lstrip()), max(ordered, key=lambda sp: sp[1]), True))
    last = ordered[-1]
    before = [sp for sp in ordered[:-1] if sp[1] <= last[0]]
    if before:
        prev = max(before, key=lambda sp: sp[1])
        if _only_separators(text[prev[1]:last[0]]):
            tries.append((last[0], prev, False))
    for at, (a, b), left in tries:
        listed_frag, whole = _squashed(text[at:]), _squashed(text[a:b])
        # the copies may be separated by ';' or ',' as well as by new lines (a helper's variant f10-x38
        # of parse-39: '{...}; {...}; {"name": "get_fo' was an error, or two calls after <|python_tag|>)
        frag = listed_frag.lstrip(";,") or listed_frag  # a lone ',' after a list's call: its next call, cut
        if not frag or not whole:
            continue
        name_at = min((i for i in (whole.find(n) for n in names) if i >= 0), default=-1)
        earlier = [_squashed(text[x:y]) for x, y in ordered if y <= a and a - y < 200 and _only_separators(text[y:a])]
        # the call's own text may start after a block opener its span took in (DeepSeek's
        # <｜tool▁calls▁begin｜>, Kimi's section token): try each start up to the name
        for k in range(min(max(name_at, 0), 200) + 1):
            if len(frag) < len(whole) - k and whole.startswith(frag, k):
                one = whole[k:]
                twice = _periodic(one) or any(e.endswith(one) for e in earlier)
                if twice or 0 <= name_at - k < len(frag):
                    return at, True
        if left and whole.startswith("[") and re.fullmatch(r",(?:" + _NAME + r")?", listed_frag):
            return at, False  # '[f(a=1), ge' or '[f(a=1),': the list's next call, cut before its '('
        if not left or name_at <= 0 or len(text) - at > 2000 or _has_cands(text[at:]):
            continue  # a whole call after the others is read by calls() (variant-mu-08), not cut
        for k in range(max(0, name_at - 200), name_at):
            opener = whole[k:name_at]
            marker = len(opener) > 1 or re.fullmatch(r"<[\w.:\-]*", frag)  # Cline's '<get_sto': a tag never closed
            if marker and opener[0] in "<[{>｜`" and (frag.startswith(opener) or opener.startswith(frag)):
                return at, False
    return None, False


def _only_separators(text: str) -> bool:
    """Whether ``text`` between two calls is nothing but blank space and ``;`` or ``,`` separators."""
    return not text.strip(" \t\r\n;,")


def _periodic(text: str) -> bool:
    """Whether ``text`` is one piece written two or more times over (a call repeated back to back)."""
    return len(text) > 1 and (text + text).find(text, 1) < len(text)


def _once_each(cands: list[_Cand], spans: list[tuple[int, int]], repairs: list[str]) -> _Found:
    """Back-to-back copies of the same call read once, in every format (parse-39: a model that did not
    stop repeats its call up to the token limit; a helper's variant x53 kept DeepSeek's copies)."""
    if len(cands) < 2:
        return cands, spans, repairs
    if len(spans) != len(cands):
        return cands, spans, repairs  # one span holds several calls: a list the model wrote as such
    same = [i for i in range(1, len(cands)) if not cands[i].cut and not cands[i - 1].cut
            and cands[i].name == cands[i - 1].name and cands[i].arguments == cands[i - 1].arguments
            and cands[i].positional == cands[i - 1].positional and spans[i] != spans[i - 1]]
    return _once_back_to_back(cands, spans, repairs) if same else (cands, spans, repairs)


#: Call markup a cut call leaves at the end of the text before it: a wrapper or marker token, a
#: fence opener (``<tool_call>``, ``[TOOL_CALLS]``, ``<｜tool▁call▁begin｜>``, ```` ```json ````).
_TRAILING_MARKER_RE = re.compile(r"(?:```[ \t]*[\w+\-]*|\[TOOL_CALLS\]|\[ARGS\]|<<function>>|\[|"
                                 r"<[|｜]?[^<>\s]{0,60}[|｜]?>)\s*\Z")


def _without_trailing_markers(text: str) -> str:
    """``text`` without the call markers and fence openers at its end: the prose before a call the
    token limit cut (a helper's variant x54: the cut ``<tool_call>`` stayed in the content)."""
    text = text.rstrip(" \t\n;,")
    for _ in range(8):
        m = _TRAILING_MARKER_RE.search(text)
        if m is None or not (m.group(0).startswith(("```", "[")) or _MARKER_RE.fullmatch(m.group(0).strip())
                             or re.match(r"<[|｜]", m.group(0))):
            break
        text = text[:m.start()].rstrip(" \t\n;,")
    return text


def _without_empty_fences(text: str) -> str:
    """``text`` without code fences left empty once the calls in them were read (```` ```xml\n\n``` ````,
    a helper's variant x39) or opened and never filled: an emptied fence is no content."""
    if "```" not in text:
        return text
    out = _FENCE_RE.sub(lambda m: m.group(0) if m.group(2).strip() else "", text)
    return re.sub(r"\n{3,}", "\n\n", out).strip() if out != text else text


#: A call opener that nothing closes after it (``<start_function_call>call:weather:cur``, ``<function=f>``):
#: the first opener after the last closer (one pass each, whatever the output holds).
_OPEN_CALL_MARKER_RE = re.compile(r"<start_function_call>|<\|tool_call>|<function=[^>\s]+>|<invoke\b")
_CLOSE_CALL_MARKER_RE = re.compile(r"<end_function_call>|<tool_call\|>|</function>|</invoke>")


#: Words before a call that name it without making it: the past ("Earlier I called f(...)"), the
#: user told to run it ("You can run `f(...)` yourself"), code around it (``const r = f({...})``).
_MENTION_BEFORE_RE = re.compile(
    r"(?i)(?:\b(?:called|ran|invoked|used|executed|tried|you\s+(?:can|could|may|might|should|need\s+to|have\s+to"
    r"|want\s+to)?\s*(?:also\s+)?(?:run|call|use|try|invoke|execute|type)"
    # a call declined: "I won't run clock_alarm(action="cancel") because ..." (round nineteen's parse variants)
    r"|(?:won't|wont|will\s+not|wouldn't|would\s+not|not\s+going\s+to|don't|do\s+not|didn't|did\s+not|never|"
    r"refuse\s+to|declined?\s+to|shouldn't|should\s+not)\s+(?:run|call|use|try|invoke|execute))"
    r"\s+(?:the\s+)?(?:tool\s+|function\s+)?"
    r"[`'\"]?|\b(?:const|let|var|await|return|def|function)\s+(?:\w+\s*=\s*)?|[\w\]\)]\s*=\s*"
    r"|\w+(?:Error|Exception):\s*)\Z")
#: Words after a call's parentheses that make it a signature or a quoted Python error, not a call.
_MENTION_AFTER_RE = re.compile(r"\s*->|\s*(?:missing \d+ required|takes \d+|takes no |got an unexpected|got multiple)"
                               r"|[`'\"]?\s+(?:yourself|in your (?:terminal|shell|console|notebook|code))\b")
#: Code fences in languages no tool call is written in: a call there is code, not an attempt.
_CODE_LANGUAGES = frozenset({"js", "javascript", "jsx", "ts", "typescript", "tsx", "java", "c", "cpp", "c++", "cs",
                             "csharp", "go", "rust", "rs", "ruby", "rb", "php", "kotlin", "swift", "bash", "sh",
                             "shell", "console", "scala", "lua", "r", "sql"})
#: Code fences in languages a program or a shell command is written in, Python's among them: a call
#: object that is part of the code there is data (f10-x16, f10-x17 of parse-17); a Python fence may
#: still hold nothing but calls, which are read (:func:`_program_code_block`).
_PROGRAM_LANGUAGES = _CODE_LANGUAGES | frozenset({"python", "py", "python3", "ipython", "pycon", "zsh", "fish",
                                                  "powershell", "ps1", "pwsh", "bat", "cmd", "node", "perl",
                                                  "dart", "elixir", "haskell", "objc", "matlab"})


_PARAMETER_NAME_RE = re.compile(r"[a-z_][a-z0-9_]*")


def _lists_parameters(arg_text: str, params: Any = None) -> bool:
    """Whether ``arg_text`` (``(...)`` with its brackets) names parameters, not values: ``(city)``,
    ``(query, limit=10)``, ``(city=city)``, ``(*args, **kwargs)``: a signature, as prose writes one
    ("the app calls `get_weather(city)` under the hood"). Each bare name must be a lower-case
    identifier or one of the tool's ``params`` (its schema's properties, ``maxResults``): a capitalised
    word is an unquoted value (``get_weather(Oslo)``), a call with a slip, not a signature."""
    try:
        node = parse_python(f"_f{arg_text}", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if not isinstance(node, ast.Call) or not (node.args or node.keywords):
        return False
    bare: list[str] = []
    for arg in node.args:
        if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name):
            continue  # *args
        if not isinstance(arg, ast.Name):
            return False  # a literal or an expression: a value
        bare.append(arg.id)
    for kw in node.keywords:
        if isinstance(kw.value, ast.Name):
            if kw.arg is not None:  # city=city; **kwargs passes
                bare.append(kw.value.id)
            continue
        try:
            _literal(kw.value)  # limit=10: a default beside the parameters
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return False
    if not bare and not any(isinstance(a, ast.Starred) for a in node.args) \
            and not any(kw.arg is None for kw in node.keywords):
        return False  # (limit=10) alone: keyword values, a call
    known = params if isinstance(params, Mapping) else {}
    return all(_PARAMETER_NAME_RE.fullmatch(name) or name in known for name in bare)


def _words_beside(text: str, start: int, end: int) -> bool:
    """Whether the line holding ``text[start:end]`` has words before or after it (markup and
    backticks are no words): the span is part of a sentence, not a line of its own."""
    before = text[text.rfind("\n", 0, start) + 1:start]
    line_end = text.find("\n", end)
    after = text[end:line_end if line_end >= 0 else len(text)]
    return any(re.search(r"\w", re.sub(r"<[^<>]*>", "", side)) for side in (before, after))


def _named_not_made(text: str, start: int, paren: int, params: Any = None) -> bool:
    """Whether the call of an offered tool at ``text[start:]`` (its bracket at ``paren``) is named in
    prose or code, not made: a signature (``f(city: str) -> dict``; ``f(city)`` inside a sentence,
    :func:`_lists_parameters` with the tool's schema ``params``), a quoted Python error (``f()
    missing 1 required positional argument``), the past or the user's own run (:data:`_MENTION_BEFORE_RE`),
    or code in another language's fence. Look-back and fences are bounded."""
    before = text[max(text.rfind("\n", 0, start) + 1, start - 200):start]
    if _MENTION_BEFORE_RE.search(before):
        return True
    close = _paren_end(text, paren) if text.startswith("(", paren) else -1
    if close > 0:
        if _MENTION_AFTER_RE.match(text, close):
            return True
        if _words_beside(text, start, close) and _lists_parameters(text[paren:close], params):
            return True  # "the app calls `get_weather(city)` under the hood": a signature in a sentence
        try:  # "f(city: str, days: int = 3)": parameters with annotations are a signature
            parse_python(f"def _f{text[paren:close]}: pass", mode="exec")
            if _call_with_name("f", text[paren:close]) is None:
                return True
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    return _fence_language_at(text, start) in _CODE_LANGUAGES


def _fence_language_at(text: str, pos: int) -> str | None:
    """The language named on the code fence whose body holds ``pos`` (``""`` if it names none), None
    outside fences (the first 32 fences are looked at)."""
    for tries, fence in enumerate(_FENCE_RE.finditer(text)):
        if tries >= 32 or fence.start() > pos:
            break
        if fence.start(2) <= pos < fence.end(2):
            return fence.group(1).lower()
    return None


def _attempt(text: str, offered: Sequence[str], schemas: Any = None) -> str | None:
    """Why ``text`` looks like a tool call attempt that yielded no call, or None when it reads as
    an answer. Called only when no call and no error came out, so a hit here means the model
    tried and failed (cut off, an unknown tag, arguments neither JSON nor a Python literal)."""
    return _attempt_at(text, offered, schemas)[0]


def _attempt_at(text: str, offered: Sequence[str], schemas: Any = None) -> tuple[str | None, int | None]:
    """:func:`_attempt`, and where the call the token limit cut starts when that is why (else None)."""
    if not text.strip():
        return None, None
    cut_at = _cut_off_tail(text)
    if cut_at is not None and text.startswith("{", cut_at) and _match_end(text, cut_at, max_depth=len(text)) >= 0:
        # its brackets close, past the depth the readers follow: no cut (a helper's variant, round eighteen:
        # arguments nested 300 deep were called cut off)
        return (f"a call nested deeper than {_MAX_DEPTH} brackets was not read; send its arguments less deeply "
                "nested"), None
    if cut_at is not None:  # '[TOOL_CALLS]f[ARGS]{"q": "wea': cut, not an unreadable marker
        return "a call cut off before its end (the output hit the token limit?)", cut_at
    return _attempt_rest(text, offered, schemas)


def _attempt_rest(text: str, offered: Sequence[str], schemas: Any) -> tuple[str | None, int | None]:
    """The checks of :func:`_attempt_at` after the cut-off tail: markers, tags, objects, names."""
    for marker in _MARKER_RE.finditer(text):
        line_end = text.find("\n", marker.end())
        after = text[marker.end():line_end if line_end >= 0 else len(text)]
        if re.search(r"\w", text[text.rfind("\n", 0, marker.start()) + 1:marker.start()]) and \
                re.match(r"\s+[A-Za-z]", after) and not re.search(r"[{(]", after):
            continue  # "The <tool_call> tag is how Hermes models mark a call.": named in a sentence
        if re.match(_MARKER_AS_SUBJECT, after) and not re.search(r"[{(]", after):
            continue  # "<tool_call> is a special token ...": the marker is the sentence's subject (a helper's variant)
        if re.match(r"\s*\[\s*\]", after):
            continue  # "`[TOOL_CALLS][]`" quoted in a sentence: an empty wrapper is no call attempt
        return f"a tool-call marker {_short(marker.group(0), 40)} with no call this parser can read after it", None
    words = {w.lower() for n in offered for w in re.split(r"[^A-Za-z0-9]+", n) if len(w) > 2}
    for m in _TEXT_TAG_RE.finditer(text):
        if set(re.split(r"[^a-z0-9]+", m.group(1).lower())) & words:
            return (f"a plain-text tag {_short(m.group(0), 40)}, which the catalogue does not map to a tool "
                    "(tags are never guessed)"), None
    starts = 0
    scanned = _without_program_code(text)  # JavaScript around a call object in a ```js block is no attempt
    for m in re.finditer(r"\{", scanned):
        starts += 1
        if starts > 64:
            break
        end = _match_end(text, m.start())
        body = text[m.start(): end if end > 0 else m.start() + 2000]
        # an arguments object opening the call counts too: Granite writes it before the name (a helper's variant)
        if not _NAME_KEY_RE.search(body) and not any(n and n in body for n in offered) and not (
                end < 0 and re.match(r"""\{\s*["']?(?:arguments|parameters)["']?\s*:\s*\{""", body)):
            continue
        if end < 0 and _match_end(text, m.start(), quotes="\"'") < 0:
            return "a call cut off before its end (its braces are never closed)", m.start()
        if _decode_at(text, m.start()) is None:
            return "a call-shaped object that is neither JSON nor a Python literal", None
    spellings = {w: n for n in offered for w in (n, n.replace(":", "."), n.replace(":", "_")) if w}
    for w in sorted(spellings, key=len, reverse=True)[:256]:
        schema = schemas.get(spellings[w]) if isinstance(schemas, Mapping) else None
        params = schema.get("properties") if isinstance(schema, Mapping) else None
        hits = re.finditer(rf"(?<![\w.:]){re.escape(w)}\s*[({{]", text)
        hit = next((h for h, _ in zip(hits, range(16)) if not _named_not_made(text, h.start(), h.end() - 1, params)),
                   None)
        if hit:
            end = _paren_end(text, hit.end() - 1) if text[hit.end() - 1] == "(" else -1
            if end > 0 and _call_with_name(w, text[hit.end() - 1:end]):
                # "Sure! I will run delete_file(path="notes.txt") for you now.": readable, but a
                # sentence is no call (a helper's variant said the arguments could not be read)
                return f"a call to {_short(w, 80)} written inside a sentence, not on a line of its own", None
            return f"a call to {_short(w, 80)} whose arguments could not be read", None
        # "Sure! I will call clock:now with {...}": the call announced in prose, never made (a new
        # user's trial; error was null, so the loop could not tell the model)
        if re.search(rf"(?i)\b(?:call|calling|invoke|invoking|use|using|run|running)\s+(?:the\s+)?(?:tool\s+)?"
                     rf"[`'\"]?{re.escape(w)}[`'\"]?(?:\s+tool)?\s+(?:with|using)\s+(?:the\s+)?"
                     rf"(?:arguments?|parameters?)?\s*[:=]?\s*\{{", text):
            return f"a call to {_short(w, 80)} announced in prose, not made", None
    return None, None


