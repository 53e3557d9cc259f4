"""The dual parser: model output in, tool calls out; it never raises.

``calls(raw, offered)`` reads the envelope JSON the grammar asks for first
(``{"thought", "status", "message", "tool_calls": [{"name", "arguments"}]}``; one cut off at the
token limit still yields its message and every complete call, reported); when the output
is not an envelope it tries the text formats small models are known to emit, in this order
(:data:`TEXT_FORMATS`), and the first format that yields call-shaped text wins:

=================  =====================================================================
``gemma``          ``<|tool_call>call:name{k:<|"|>v<|"|>,n:1}<tool_call|>``
``tool_call_tag``  ``<tool_call>{json}</tool_call>`` (closing tag optional, Hermes/Qwen)
``function_tag``   ``<function=name>{json}</function>`` (Llama 3.1) and Qwen3-Coder's
                   ``<function=name><parameter=k>v</parameter></function>``
``xml_tag``        ``<tool>``/``<toolcall>`` around ``{json}`` or ``<name>{json}</name>``
``mistral``        ``[TOOL_CALLS][{json}]`` and ``name[ARGS]{json}`` (one object per header)
``python_tag``     ``<|python_tag|>`` + JSON or a Python-style call (parsed with ``ast``)
``api_line``       ``API: name {json}`` / ``API: name(k=v)`` / ``API: name k=v`` lines
``react``          ``Action: name`` + ``Action Input: ...`` or ``Action: name ({json})``
``fenced``         code fences holding call-shaped JSON (``tool_code`` fences: Python calls)
``bare_json``      call-shaped JSON objects or lists anywhere, one after another
=================  =====================================================================

The ``native`` channel reads a server's ``tool_calls`` field shown as text
(``tool_calls=[{"function": {"name", "arguments"}}]``, arguments an object or a JSON string)
and falls back to the text formats when it is not that.

Rules (issue #5, tests/cases/parsing_cases.json):

* A JSON object is call-shaped only with a string ``name`` and one of the keys ``arguments``,
  ``parameters``, ``args`` (or an OpenAI ``{"function": {...}}`` wrapper); a ``name`` key alone
  is data (a package.json in a fence, JSON inside code) and stays content.
* A name outside the offer is never returned as a call; it is reported in ``error``.
* Damage is repaired only where the result is unambiguous (a trailing comma, a raw control
  character inside a string) and every repair is reported in ``repairs``.
* A bare-string argument is put into the tool's one string parameter only when ``schemas``
  show there is exactly one; otherwise it is a recoverable error.
* With ``schemas``, a call missing a required argument (or sending ``null`` for it) is
  dropped and reported, so the tool loop can return the error to the model.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .grammar.envelope import CALL_KEYS, ENVELOPE_KEYS

__all__ = ["Call", "Parsed", "calls", "TEXT_FORMATS", "ARGUMENT_KEYS", "loads_repaired"]

#: Keys a call object may carry its arguments under (OpenAI/Hermes, Llama 3.x, short form).
ARGUMENT_KEYS: tuple[str, ...] = ("arguments", "parameters", "args")

#: Text formats tried after the envelope, in this order (see the module docstring).
TEXT_FORMATS: tuple[str, ...] = (
    "gemma", "tool_call_tag", "function_tag", "xml_tag", "mistral", "python_tag", "api_line", "react", "fenced", "bare_json",
)

#: Work bounds that keep hostile input linear-ish: start positions tried per scan, input chars read.
_MAX_STARTS = 512
_MAX_CHARS = 200_000
_MAX_DEPTH = 64

_NAME = r"[A-Za-z_][\w.:\-]*"


@dataclass(frozen=True, kw_only=True, slots=True)
class Call:
    """One tool call: an offered tool's name and its arguments (a JSON object)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


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
        The format that matched: ``"envelope"``, ``"native"``, one of :data:`TEXT_FORMATS`, or
        ``""`` for plain text.
    """

    calls: tuple[Call, ...] = ()
    content: str = ""
    error: str | None = None
    repairs: tuple[str, ...] = ()
    format: str = ""

    def to_json(self) -> dict[str, Any]:
        """The CLI record ``{"calls": [{"name", "arguments"}], "content", "error", "repairs", "format"}``."""
        return {
            "calls": [{"name": c.name, "arguments": _plain(c.arguments)} for c in self.calls],
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


def _match_end(text: str, start: int) -> int:
    """Index just past the bracket that closes ``text[start]`` (``{`` or ``[``); -1 if unbalanced."""
    stack: list[str] = []
    in_string = False
    escaped = False
    pairs = {"{": "}", "[": "]"}
    for i in range(start, min(len(text), start + _MAX_CHARS)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in pairs:
            stack.append(pairs[ch])
            if len(stack) > _MAX_DEPTH:
                return -1
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return -1
            if not stack:
                return i + 1
    return -1


def _decode_at(text: str, start: int) -> tuple[Any, int, tuple[str, ...]] | None:
    """Decode the JSON object or list starting at ``text[start]``: (value, end, repairs) or None."""
    end = _match_end(text, start)
    if end < 0:
        return None
    try:
        value, repairs = loads_repaired(text[start:end])
    except (ValueError, RecursionError):
        return None
    return value, end, repairs


def _scan_json(text: str, *, lists: bool = True) -> list[tuple[Any, int, int, tuple[str, ...]]]:
    """Every JSON object (and list) in ``text``, left to right: (value, start, end, repairs)."""
    found = []
    starts = 0
    i = 0
    opener = re.compile(r"[\{\[]" if lists else r"\{")
    while starts < _MAX_STARTS:
        m = opener.search(text, i)
        if not m:
            break
        starts += 1
        got = _decode_at(text, m.start())
        if got is None:
            i = m.start() + 1
            continue
        value, end, repairs = got
        found.append((value, m.start(), end, repairs))
        i = end
    return found


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
    function = obj.get("function")
    if isinstance(function, dict) and "name" in function:
        return _from_object(function, depth=depth + 1)
    name = obj.get("name")
    if not isinstance(name, str):
        return None
    for key in ARGUMENT_KEYS:
        if key in obj:
            if _is_definition(obj, obj[key]):
                return None
            return [_Cand(name, obj[key])]
    return None


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
        tree = ast.parse("\n".join(line.strip() for line in source.strip().splitlines()), mode="exec")
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
        if t.startswith(_GEMMA_QUOTE, p):
            end = t.find(_GEMMA_QUOTE, p + len(_GEMMA_QUOTE))
            if end < 0:
                raise ValueError("unclosed string")
            self.pos = end + len(_GEMMA_QUOTE)
            return t[p + len(_GEMMA_QUOTE): end]
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
            if t.startswith(_GEMMA_QUOTE, self.pos) or t.startswith('"', self.pos):
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


def _fmt_gemma(text: str) -> _Found | None:
    cands, spans, repairs = [], [], []
    for m in re.finditer(r"<\|tool_call>\s*(?:call:)?\s*(" + _NAME + r")\s*", text):
        reader = _GemmaReader(text, m.end())
        try:
            args = reader.obj() if text.startswith("{", m.end()) else {}
        except (ValueError, RecursionError):
            args = "<unreadable Gemma arguments>"
        end = reader.pos
        close = re.compile(r"\s*<tool_call\|>").match(text, end)
        end = close.end() if close else end
        cands.append(_Cand(m.group(1), args))
        spans.append((m.start(), end))
    return (cands, spans, repairs) if cands else None


def _json_cands_in(segment: str, offset: int) -> tuple[list[_Cand], list[tuple[int, int]], list[str]]:
    cands, spans, repairs = [], [], []
    for value, start, end, fixed in _scan_json(segment):
        got = _from_object(value)
        if got:
            cands.extend(got)
            spans.append((offset + start, offset + end))
            repairs.extend(fixed)
    return cands, spans, repairs


def _fmt_tool_call_tag(text: str) -> _Found | None:
    opens = [m for m in re.finditer(r"<tool_call>", text)]
    if not opens:
        return None
    cands, spans, repairs = [], [], []
    for k, m in enumerate(opens):
        stop = opens[k + 1].start() if k + 1 < len(opens) else len(text)
        close = text.find("</tool_call>", m.end(), stop)
        seg_end = close if close >= 0 else stop
        segment = text[m.end():seg_end]
        c, _, r = _json_cands_in(segment, m.end())
        if not c and "<function=" in segment:
            got = _fmt_function_tag(segment)
            c, r = (got[0], got[2]) if got else ([], [])
        if not c:
            c = _python_calls(segment) or []
        cands.extend(c)
        repairs.extend(r)
        spans.append((m.start(), close + len("</tool_call>") if close >= 0 else seg_end))
    return (cands, spans, repairs) if cands else None


_FUNCTION_RE = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|\Z)", flags=re.S)
_PARAMETER_RE = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?(?:</parameter>|(?=<parameter=)|\Z)", flags=re.S)


def _fmt_function_tag(text: str) -> _Found | None:
    cands, spans, repairs = [], [], []
    for m in _FUNCTION_RE.finditer(text):
        body = m.group(2).strip()
        if body.startswith("{"):
            got = _decode_at(body, 0)
            args: Any = got[0] if got is not None else body
            repairs.extend(got[2] if got is not None else ())
        elif "<parameter=" in body:
            args = {}
            for p in _PARAMETER_RE.finditer(body):
                value = p.group(2)
                try:
                    args[p.group(1)] = json.loads(value) if value.strip()[:1] in '{["0123456789-tfn' else value
                except ValueError:
                    args[p.group(1)] = value
        else:
            args = body or {}
        cands.append(_Cand(m.group(1), args))
        spans.append(m.span())
    return (cands, spans, repairs) if cands else None


def _fmt_xml_tag(text: str) -> _Found | None:
    cands, spans, repairs = [], [], []
    for m in re.finditer(r"<(toolcall|tool)>(.*?)(?:</\1>|\Z)", text, flags=re.S):
        inner = m.group(2)
        inner_tag = re.match(r"\s*<(" + _NAME + r")>\s*(.*?)\s*(?:</\1>|\Z)", inner, flags=re.S)
        if inner_tag and not inner_tag.group(2).startswith("<"):
            body = inner_tag.group(2).strip()
            if body.startswith("{"):
                got = _decode_at(body, 0)
                if got is not None:
                    args, _, fixed = got
                    repairs.extend(fixed)
                else:
                    args = body
            else:
                args = body or {}
            cands.append(_Cand(inner_tag.group(1), args))
            spans.append(m.span())
            continue
        c, _, r = _json_cands_in(inner, m.start(2))
        if c:
            cands.extend(c)
            repairs.extend(r)
            spans.append(m.span())
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
        got = _decode_at(text, m.end()) if text.startswith("{", m.end()) else None
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
        return cands, spans, repairs
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


def _fmt_python_tag(text: str) -> _Found | None:
    cands, spans, repairs = [], [], []
    for m in re.finditer(r"<\|python_tag\|>", text):
        stop = re.compile(r"<\|(?:eom_id|eot_id|python_tag)\|>").search(text, m.end())
        seg_end = stop.start() if stop else len(text)
        segment = text[m.end():seg_end]
        c, _, r = _json_cands_in(segment, m.end())
        if not c:
            c = _python_calls(segment) or []  # several calls: one per line or ';'-separated
        if c:
            cands.extend(c)
            repairs.extend(r)
            end = stop.end() if stop and text.startswith(("<|eom_id|>", "<|eot_id|>"), stop.start()) else seg_end
            spans.append((m.start(), end))
    return (cands, spans, repairs) if cands else None


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


def _paren_end(text: str, start: int) -> int:
    depth = 0
    quote = ""
    escaped = False
    for i in range(start, min(len(text), start + _MAX_CHARS)):
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
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


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


_ACTION_RE = re.compile(r"(?m)^[ \t]*Action[ \t]*:[ \t]*(" + _NAME + r")")
_ACTION_INPUT_RE = re.compile(r"(?m)^[ \t]*Action[ \t]+Input[ \t]*:[ \t]*")
_OBSERVATION_RE = re.compile(r"(?m)^[ \t]*Observation[ \t]*:")


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
        got = _inline_args(text, m.end(), line_end, name)
        if got is not None:
            args, _, fixed = got
            repairs.extend(fixed)
            cands.append(args if isinstance(args, _Cand) else _Cand(name, args, weak=isinstance(args, str)))
            continue
        inp = _ACTION_INPUT_RE.match(text, line_end + 1) if line_end < len(text) else None
        if not inp:
            cands.append(_Cand(name, {}, weak=True))
            continue
        p = inp.end()
        if text.startswith(("{", "["), p):
            dec = _decode_at(text, p)
            if dec is not None:
                cands.append(_Cand(name, dec[0]))
                repairs.extend(dec[2])
                continue
        value_text = text[p:_line_end(text, p)].strip()
        if value_text.startswith('"'):
            try:
                value_text = json.loads(value_text)
            except ValueError:
                value_text = value_text.strip('"')
        cands.append(_Cand(name, value_text))
    # content: the Thought before the first Action; an invented Observation / Final Answer is dropped
    return cands, [(first.start(), len(text))], repairs


_FENCE_RE = re.compile(r"```[ \t]*([\w+\-]*)[ \t]*\n?(.*?)(?:```|\Z)", flags=re.S)


def _fmt_fenced(text: str) -> _Found | None:
    cands, spans, repairs = [], [], []
    for m in _FENCE_RE.finditer(text):
        lang, body = m.group(1).lower(), m.group(2)
        c, _, r = _json_cands_in(body, m.start(2))
        if not c and lang in ("tool_code", "tool_call", "python_tag"):
            c = _python_calls(body) or []
        if c:
            cands.extend(c)
            repairs.extend(r)
            spans.append(m.span())
    return (cands, spans, repairs) if cands else None


def _fmt_bare_json(text: str) -> _Found | None:
    cands, spans, repairs = _json_cands_in(text, 0)
    return (cands, spans, repairs) if cands else None


_FORMATS = {
    "gemma": _fmt_gemma,
    "tool_call_tag": _fmt_tool_call_tag,
    "function_tag": _fmt_function_tag,
    "xml_tag": _fmt_xml_tag,
    "mistral": _fmt_mistral,
    "python_tag": _fmt_python_tag,
    "api_line": _fmt_api_line,
    "react": _fmt_react,
    "fenced": _fmt_fenced,
    "bare_json": _fmt_bare_json,
}


# ---------------------------------------------------------------------------------------------
# Envelope and native channel
# ---------------------------------------------------------------------------------------------

_ENVELOPE_KEYS = frozenset(ENVELOPE_KEYS)
_, _, _MESSAGE, _TOOL_CALLS = ENVELOPE_KEYS  # the keys the parser reads by name
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
    return cands, message if isinstance(message, str) else json.dumps(message), list(fixed)


_ENVELOPE_KEY_RE = re.compile(rf'"{_ENVELOPE_KEY}"\s*:\s*')


def _broken_envelope(text: str) -> tuple[list[_Cand], str, list[str]] | None:
    """An envelope that is not JSON (cut off at the token limit, a stray quote): its message and
    every complete call object after ``"tool_calls"``; None when the text is not envelope-like."""
    body, fixes = _repair(text.strip()[:_MAX_CHARS])
    if not re.match(rf'\{{\s*"{_ENVELOPE_KEY}"', body):
        return None
    keys = {m.group(1): m for m in _ENVELOPE_KEY_RE.finditer(body)}
    if len(keys) < 2:
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
        cands, _, _ = _json_cands_in(body[start:], 0)
    head = (f"the envelope is not valid JSON (cut off?); read its message and {len(cands)} complete "
            f"call{'s' if len(cands) != 1 else ''} from it")
    return cands, message, [head, *fixes, *notes]


def _native(text: str) -> tuple[list[_Cand], list[tuple[int, int]], list[str]] | None:
    m = re.match(r"\s*(?:tool_calls\s*[=:]\s*)?", text)
    start = m.end() if m else 0
    if text[start:start + 1] not in ("[", "{"):
        return None
    got = _decode_at(text, start)
    if got is None:
        return None
    value, end, fixed = got
    cands = _from_object(value)
    if cands is None:
        if value == [] or (isinstance(value, dict) and value.get("tool_calls") == []):
            return [], [(0, end)], list(fixed)
        return None
    return cands, [(0, end)], list(fixed)


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


def _allows_null(spec: Any) -> bool:
    """Whether a property schema accepts ``null`` (no ``type`` at all accepts anything)."""
    if not isinstance(spec, Mapping):
        return True
    kind = spec.get("type")
    if kind is None:
        return not any(k in spec for k in ("enum", "const", "anyOf", "oneOf")) or None in spec.get("enum", [None])
    return kind == "null" or (isinstance(kind, list) and "null" in kind)


class _Checker:
    def __init__(self, offered: Sequence[str], schemas: Mapping[str, Any] | None) -> None:
        self.offered = tuple(offered)
        self.schemas = schemas if isinstance(schemas, Mapping) else {}
        self.errors: list[str] = []
        self.repairs: list[str] = []

    def error(self, message: str) -> None:
        if message not in self.errors:
            self.errors.append(message)

    def check(self, cand: _Cand) -> Call | None:
        name = cand.name
        if not isinstance(name, str) or not name.strip():
            self.error(f"a tool call without a tool name (got {name!r}); call one of: {self._valid()}")
            return None
        name = name.strip()
        if name not in self.offered:
            self.error(f"unknown tool {_short(name, 80)}: not in offered tools; return an error message to the model "
                       f"listing valid names: {self._valid()}")
            return None
        schema = self.schemas.get(name)
        args = cand.arguments
        if args is _MISSING or args is None:
            args = {}
        if isinstance(args, str):
            stripped = args.strip()
            parsed: Any = _MISSING
            if stripped.startswith(("{", "[")) or stripped in ("", "null"):
                try:
                    parsed, fixed = loads_repaired(stripped) if stripped else ({}, ())
                    self.repairs.extend(fixed)
                except (ValueError, RecursionError):
                    parsed = _MISSING
            if parsed is None:
                parsed = {}
            if parsed is _MISSING:
                target = _single_string_param(schema)
                if target is None or not stripped:
                    self.error(f"arguments for {name} are not a JSON object (got {_short(args)}); "
                               "send the arguments as a JSON object")
                    return None
                self.repairs.append(f"put the bare string into {name}'s one string parameter {target!r}")
                parsed = {target: stripped}
            args = parsed
        if cand.positional:
            target = _single_string_param(schema)
            if len(cand.positional) == 1 and target is not None and target not in args:
                args = {**args, target: cand.positional[0]}
                self.repairs.append(f"put the positional argument into {name}'s parameter {target!r}")
            else:
                self.error(f"positional arguments for {name} cannot be named; send keyword arguments")
                return None
        if not isinstance(args, dict):
            self.error(f"arguments for {name} are not a JSON object (got {_short(args)}); "
                       "send the arguments as a JSON object")
            return None
        if isinstance(schema, Mapping):
            props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
            for key in schema.get("required", ()) or ():
                if not isinstance(key, str):
                    continue
                if key not in args or (args[key] is None and not _allows_null(props.get(key))):
                    self.error(f"missing required argument {key!r} for {name}; return as a recoverable tool "
                               "error so the model can retry")
                    return None
        return Call(name=name, arguments=args)

    def _valid(self) -> str:
        return ", ".join(self.offered) if self.offered else "(no tools are offered)"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _cut(text: str, spans: Iterable[tuple[int, int]]) -> str:
    out, pos = [], 0
    for start, end in sorted(spans):
        if start > pos:
            out.append(text[pos:start])
        pos = max(pos, end)
    out.append(text[pos:])
    joined = "".join(out)
    return re.sub(r"\n{3,}", "\n\n", joined).strip()


# ---------------------------------------------------------------------------------------------
# The entry point
# ---------------------------------------------------------------------------------------------


def calls(raw: Any, offered: Any, *, channel: str = "text",
          schemas: Mapping[str, Mapping[str, Any]] | None = None) -> Parsed:
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
        Tool name -> parameter schema. Enables the bare-string argument rule and the check
        for missing required arguments.

    Returns
    -------
    Parsed
        ``calls`` in output order; ``error`` ``None`` when nothing went wrong.

    Notes
    -----
    Order and rules: module docstring; cases: tests/cases/parsing_cases.json (issue #5).
    """
    try:
        return _calls(raw, offered, channel, schemas)
    except Exception as exc:  # never raise: a bug here must not end the tool loop
        text = raw if isinstance(raw, str) else ""
        return Parsed(content=text.strip(), error=f"the parser failed on this output ({type(exc).__name__}); "
                                                  "answer again as one JSON envelope")


def _calls(raw: Any, offered: Any, channel: str, schemas: Any) -> Parsed:
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
        text = text[:_MAX_CHARS]

    def finish(cands: list[_Cand], content: str, fmt: str, repairs: Iterable[str]) -> Parsed:
        checker.repairs.extend(repairs)
        found = tuple(c for c in (checker.check(cand) for cand in cands) if c is not None)
        return Parsed(calls=found, content=content, error="\n".join(checker.errors) or None,
                      repairs=tuple(dict.fromkeys(checker.repairs)), format=fmt)

    if channel == "native":
        got = _native(text)
        if got is not None:
            cands, spans, fixed = got
            return finish(cands, _cut(text, spans), "native", fixed)
    env = _envelope(text) or _broken_envelope(text)
    if env is not None:
        cands, message, fixed = env
        return finish(cands, message.strip(), "envelope", fixed)
    for fmt in TEXT_FORMATS:
        got = _FORMATS[fmt](text)
        if got is not None:
            cands, spans, fixed = got
            if all(c.weak and c.name not in offered_names for c in cands):
                continue  # "API: the docs say..." is prose, not a call to a tool named 'the'
            return finish(cands, _cut(text, spans), fmt, fixed)
    return finish([], text.strip(), "", ())
