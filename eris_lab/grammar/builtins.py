"""The grammar's vocabulary: primitive GBNF rules, string formats, whitespace, and escaping.

Modelled on llama.cpp ``examples/json_schema_to_grammar.py`` (``PRIMITIVE_RULES``,
``STRING_FORMAT_RULES``, ``SPACE_RULE``, ``_format_literal``), with three differences:

* escaping lives in one place, :func:`literal` / :func:`char_class` (both go through
  :func:`_escape`), so class text is never written raw;
* ``char`` counts a surrogate-pair escape (``\\ud83d\\ude00``) as ONE character, as JSON Schema
  counts code points, and rejects lone surrogate escapes;
* formats are exact calendars: day-of-month per month and leap years (``2023-02-29`` is rejected),
  matching what ``jsonschema``'s format checker accepts (``datetime.date.fromisoformat``,
  ``rfc3339_validator``), never more.

Every rule here is data: a :class:`BuiltinRule` of GBNF body plus the builtins it references.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

__all__ = [
    "BuiltinRule",
    "PRIMITIVE_RULES",
    "STRING_FORMAT_RULES",
    "VARIABLE_LENGTH_FORMATS",
    "SPACE_RULE",
    "COMPACT_SPACE_RULE",
    "RESERVED_NAMES",
    "MAX_REPETITION",
    "literal",
    "json_text",
    "json_literal",
    "char_class",
    "repetition",
]

#: llama.cpp's grammar parser (``src/llama-grammar.cpp``, ``MAX_REPETITION_THRESHOLD``) rejects a
#: minimum above 2000 and SILENTLY turns a maximum above 2000 into "unbounded"; it also rejects a
#: repeated group whose expansion exceeds 2000 rules. :func:`repetition` never emits a count above
#: this and only repeats atoms (a rule name, a literal or a class).
MAX_REPETITION = 2000
#: The largest count a schema may ask the compiler to spell out (``minLength``, ``maxLength``,
#: ``minItems``, ``maxItems``, a pattern's ``{n,m}``). A count is written in blocks of
#: :data:`MAX_REPETITION`, so 2,000,000,000 made a grammar of a million blocks and the compiler hung
#: (a helper's bad input, 2026-12-04); at 1,000,000 characters llama.cpp's check of the grammar
#: took 3.6 s and 360 MB. 100,000 characters is about 25,000 tokens: more than a small model
#: writes in one call, and more than the bundled Gemma's context.
MAX_COUNT = 100_000


@dataclass(frozen=True, slots=True)
class BuiltinRule:
    """A primitive rule: its GBNF body and the builtin rules that body references."""

    body: str
    deps: tuple[str, ...] = ()


#: Whitespace between tokens is bounded: an unbounded ``[ \t\n]*`` lets a small model emit
#: whitespace forever (llama.cpp bounds it the same way, ``SPACE_RULE``). One space, or one
#: newline followed by at most 20 spaces or tabs of indentation, or nothing.
SPACE_RULE = '| " " | "\\n" [ \\t]{0,20}'
#: Compact JSON (issue 17, lever 2): nothing or one space, never a newline. The model at 270M
#: used the newline branch between tokens (``"\\n    , "``), spending tokens and drifting.
COMPACT_SPACE_RULE = '| " "'

_HEX = "[0-9a-fA-F]"

#: Primitive JSON values. Every value rule ends in ``space``. Sources: RFC 8259 grammar;
#: digit bounds as llama.cpp (``integral-part``), widened so Python's ``repr`` of any float
#: (17 significant digits, exponent up to 3 digits with a leading zero, e.g. ``1e-05``) fits.
PRIMITIVE_RULES: dict[str, BuiltinRule] = {
    "boolean": BuiltinRule('("true" | "false") space', ("space",)),
    "null": BuiltinRule('"null" space', ("space",)),
    "integral-part": BuiltinRule("[0] | [1-9] [0-9]{0,18}"),
    "decimal-part": BuiltinRule("[0-9]{1,24}"),
    "exponent-part": BuiltinRule("[eE] [-+]? [0-9]{1,3}"),
    "integer": BuiltinRule('("-"? integral-part) space', ("integral-part", "space")),
    "number": BuiltinRule(
        '("-"? integral-part) ("." decimal-part)? exponent-part? space',
        ("integral-part", "decimal-part", "exponent-part", "space"),
    ),
    "nonnegative-number": BuiltinRule(
        'integral-part ("." decimal-part)? exponent-part? space',
        ("integral-part", "decimal-part", "exponent-part", "space"),
    ),
    # one JSON string character: raw (no quote, backslash or control), a short escape, a \u
    # escape of a non-surrogate, or a surrogate pair (one code point, as JSON Schema counts).
    # Two top-level alternatives only: llama.cpp's per-token cost grows with live stacks, so the
    # escape forms unfold only after a backslash.
    "char": BuiltinRule('[^"\\\\\\x00-\\x1F] | "\\\\" char-escape', ("char-escape",)),
    "char-escape": BuiltinRule(
        '["\\\\/bfnrt] | "u" (hex-bmp | hex-high "\\\\u" hex-low)', ("hex-bmp", "hex-high", "hex-low")),
    "hex-bmp": BuiltinRule(f"[0-9a-cA-Ce-fE-F] {_HEX}{{3}} | [dD] [0-7] {_HEX}{{2}}"),
    "hex-high": BuiltinRule(f"[dD] [89abAB] {_HEX}{{2}}"),
    "hex-low": BuiltinRule(f"[dD] [c-fC-F] {_HEX}{{2}}"),
    "string": BuiltinRule('"\\"" char* "\\"" space', ("char", "space")),
    "value": BuiltinRule(
        "object | array | string | number | boolean | null",
        ("object", "array", "string", "number", "boolean", "null"),
    ),
    "object": BuiltinRule(
        '"{" space ( string ":" space value ("," space string ":" space value)* )? "}" space',
        ("string", "value", "space"),
    ),
    "array": BuiltinRule('"[" space ( value ("," space value)* )? "]" space', ("value", "space")),
}

def _dotted(prefix: str, unit_class: Callable[[int], BuiltinRule], max_total: int, max_parts: int, max_part: int) -> dict[str, BuiltinRule]:
    """Rules for ``part ("." part)*`` of at most ``max_total`` characters, exactly counted.

    A grammar cannot count a total across parts without one rule per length, so the total is
    kept by a union over the number of parts k (1 to ``max_parts``), each part at most
    ``min(max_part, (max_total + 1) // k - 1)`` characters: every string it accepts is within
    ``max_total`` (narrower than the RFC only for many long parts together).
    """
    rules: dict[str, BuiltinRule] = {}
    alts = []
    for k in range(1, max_parts + 1):
        length = min(max_part, (max_total + 1) // k - 1)
        part = f"{prefix}-part-{length}"
        if part not in rules:
            rules[part] = unit_class(length)
            rules[f"{prefix}-dot-part-{length}"] = BuiltinRule(f'"." {part}', (part,))
        alts.append(part if k == 1 else f"{part} {prefix}-dot-part-{length}" + (f"{{{k - 1}}}" if k > 2 else ""))
    rules[prefix] = BuiltinRule(" | ".join(alts), tuple(r for r in rules))
    return rules


def _host_label(length: int) -> BuiltinRule:
    # RFC 1123 label: letters, digits, inner hyphens (fqdn.FQDN's preferred name syntax)
    if length == 1:
        return BuiltinRule("[a-zA-Z0-9]")
    return BuiltinRule(f"[a-zA-Z0-9] ([a-zA-Z0-9\\x2D]{{0,{length - 2}}} [a-zA-Z0-9])?")


#: RFC 5322 atext: the characters of a dot-atom's atoms (no quote, backslash or space)
_ATEXT = "[a-zA-Z0-9!#$%&'*+/=?\\x5E_`{|}~\\x2D]"

#: hostname: 1 to 8 labels of 1 to 63 characters, at most 253 in all, no trailing dot
#: (RFC 1123 section 2.1; ``fqdn.FQDN(min_labels=1)``, jsonschema's checker)
_HOSTNAME_RULES = _dotted("hostname", _host_label, 253, 8, 63)
#: email: a dot-atom local part of at most 64 characters, "@", a hostname (RFC 5321 sections
#: 4.1.2 and 4.5.3.1.1; quoted local parts and address literals are left out: narrower).
#: jsonschema's checker asks only for an "@".
_EMAIL_RULES = {
    **_dotted("email-local", lambda n: BuiltinRule(f"{_ATEXT}{{1,{n}}}"), 64, 4, 64),
    "email": BuiltinRule('email-local "@" hostname', ("email-local", "hostname")),
}
#: ipv6: RFC 3986 section 3.2.2's IPv6address (its nine forms; hex groups of 1 to 4 digits, an
#: IPv4 tail), which ``ipaddress.IPv6Address`` accepts; no zone index (jsonschema refuses one).
_IPV6_RULES = {
    "ipv6-h16": BuiltinRule(f"{_HEX}{{1,4}}"),
    "ipv6-h16c": BuiltinRule('ipv6-h16 ":"', ("ipv6-h16",)),
    "ipv6-ls32": BuiltinRule('ipv6-h16 ":" ipv6-h16 | ipv4', ("ipv6-h16", "ipv4")),
    "ipv6": BuiltinRule(
        'ipv6-h16c{6} ipv6-ls32'
        ' | "::" ipv6-h16c{5} ipv6-ls32'
        ' | ipv6-h16? "::" ipv6-h16c{4} ipv6-ls32'
        ' | (ipv6-h16c{0,1} ipv6-h16)? "::" ipv6-h16c{3} ipv6-ls32'
        ' | (ipv6-h16c{0,2} ipv6-h16)? "::" ipv6-h16c{2} ipv6-ls32'
        ' | (ipv6-h16c{0,3} ipv6-h16)? "::" ipv6-h16c ipv6-ls32'
        ' | (ipv6-h16c{0,4} ipv6-h16)? "::" ipv6-ls32'
        ' | (ipv6-h16c{0,5} ipv6-h16)? "::" ipv6-h16'
        ' | (ipv6-h16c{0,6} ipv6-h16)? "::"',
        ("ipv6-h16", "ipv6-h16c", "ipv6-ls32"),
    ),
}
#: uri: RFC 3986 section 3's URI (scheme ":" hier-part ["?" query] ["#" fragment]), rule by
#: rule; ``rfc3986_validator.validate_rfc3986(rule="URI")`` is jsonschema's checker. reg-name
#: covers IPv4address (its characters are unreserved); percent-encodings are case-free.
_UNRESERVED_SUB_DELIMS = "a-zA-Z0-9._~!$&'()*+,;=\\x2D"
_URI_RULES = {
    "uri-pct": BuiltinRule(f'"%" {_HEX} {_HEX}'),
    "uri-pchar": BuiltinRule(f"[{_UNRESERVED_SUB_DELIMS}:@] | uri-pct", ("uri-pct",)),
    "uri-qchar": BuiltinRule(f"[{_UNRESERVED_SUB_DELIMS}:@/?] | uri-pct", ("uri-pct",)),
    "uri-uchar": BuiltinRule(f"[{_UNRESERVED_SUB_DELIMS}:] | uri-pct", ("uri-pct",)),
    "uri-regchar": BuiltinRule(f"[{_UNRESERVED_SUB_DELIMS}] | uri-pct", ("uri-pct",)),
    "uri-segment": BuiltinRule('"/" uri-pchar*', ("uri-pchar",)),
    "uri-host": BuiltinRule(
        f'"[" (ipv6 | "v" {_HEX}+ "." [{_UNRESERVED_SUB_DELIMS}:]+) "]" | uri-regchar*',
        ("ipv6", "uri-regchar")),
    "uri-authority": BuiltinRule('(uri-uchar* "@")? uri-host (":" [0-9]*)?', ("uri-uchar", "uri-host")),
    "uri-hier": BuiltinRule(
        '"//" uri-authority uri-segment* | "/" (uri-pchar+ uri-segment*)? | uri-pchar+ uri-segment*',
        ("uri-authority", "uri-segment", "uri-pchar")),
    "uri": BuiltinRule(
        '[a-zA-Z] [a-zA-Z0-9+.\\x2D]* ":" uri-hier? ("?" uri-qchar*)? ("#" uri-qchar*)?',
        ("uri-hier", "uri-qchar")),
}

#: ``format`` values enforced in the grammar (the string content, without quotes). Each is exact
#: or narrower than jsonschema's FormatChecker: ``date`` = ``datetime.date.fromisoformat`` after
#: ``\d{4}-\d{2}-\d{2}`` (year 0000 is invalid there); ``time`` / ``date-time`` = RFC 3339 as
#: ``rfc3339_validator`` (offset required, seconds 00-59, fraction bounded to 9 digits, ``T`` and
#: ``Z`` upper case); ``uuid`` = 8-4-4-4-12 hex digits; ``ipv4``, ``ipv6``, ``hostname``,
#: ``email`` and ``uri`` as their rules above say.
STRING_FORMAT_RULES: dict[str, BuiltinRule] = {
    "date-year": BuiltinRule('[0-9]{3} [1-9] | [0-9]{2} [1-9] "0" | [0-9] [1-9] "00" | [1-9] "000"'),
    # a leap year: YY%4==0 with YY != 00, or a century CC00 with CC%4==0 and CC != 00
    "date-leap-year": BuiltinRule(
        '[0-9]{2} ("0" [48] | [2468] [048] | [13579] [26]) | ("0" [48] | [2468] [048] | [13579] [26]) "00"'
    ),
    "date-day-31": BuiltinRule('"0" [1-9] | [12] [0-9] | "3" [01]'),
    "date-day-30": BuiltinRule('"0" [1-9] | [12] [0-9] | "30"'),
    "date-day-28": BuiltinRule('"0" [1-9] | "1" [0-9] | "2" [0-8]'),
    "date": BuiltinRule(
        'date-year "-" ("0" [13578] | "1" [02]) "-" date-day-31'
        ' | date-year "-" ("0" [469] | "11") "-" date-day-30'
        ' | date-year "-02-" date-day-28'
        ' | date-leap-year "-02-29"',
        ("date-year", "date-leap-year", "date-day-31", "date-day-30", "date-day-28"),
    ),
    "time-hour": BuiltinRule('[01] [0-9] | "2" [0-3]'),
    "time": BuiltinRule(
        'time-hour ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,9})? ("Z" | [+-] time-hour ":" [0-5] [0-9])',
        ("time-hour",),
    ),
    "date-time": BuiltinRule('date "T" time', ("date", "time")),
    "uuid": BuiltinRule(f'{_HEX}{{8}} "-" {_HEX}{{4}} "-" {_HEX}{{4}} "-" {_HEX}{{4}} "-" {_HEX}{{12}}'),
    # ipv4: four decimal octets 0-255 without leading zeros, as ipaddress.IPv4Address (strict since
    # Python 3.9.5) and RFC 3986's dec-octet
    "ipv4-octet": BuiltinRule('"25" [0-5] | "2" [0-4] [0-9] | "1" [0-9] [0-9] | [1-9] [0-9] | [0-9]'),
    "ipv4": BuiltinRule('ipv4-octet "." ipv4-octet "." ipv4-octet "." ipv4-octet', ("ipv4-octet",)),
    **_IPV6_RULES,
    **_HOSTNAME_RULES,
    **_EMAIL_RULES,
    **_URI_RULES,
}

#: Formats whose length varies widely: beside ``minLength`` / ``maxLength`` they do not imply,
#: the length is enforced and the format is listed as not enforced (as before they had rules),
#: rather than refused.
VARIABLE_LENGTH_FORMATS = frozenset({"ipv6", "hostname", "email", "uri"})

#: Names a schema-derived rule may not take (it gets a ``-`` suffix instead).
RESERVED_NAMES: frozenset[str] = frozenset(
    {"root", "space", *PRIMITIVE_RULES, *STRING_FORMAT_RULES}
)

# ---------------------------------------------------------------------------------------------
# Escaping: the one place GBNF text is written for characters
# ---------------------------------------------------------------------------------------------

#: Escapes llama.cpp's parser knows (``parse_char``): \t \r \n \\ \" \[ \] \- and \x \u \U.
_SHORT_ESCAPES = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r", 0x5C: "\\\\"}
_LITERAL_SPECIAL = {0x22: '\\"'}
#: In classes ``-`` and ``^`` are written as hex: llguidance's GBNF reader knows no ``\\-``.
_CLASS_SPECIAL = {0x5D: "\\]", 0x5B: "\\[", 0x2D: "\\x2D", 0x5E: "\\x5E"}


def _escape(cp: int, *, in_class: bool) -> str:
    """GBNF text for one code point inside a literal (``"..."``) or a class (``[...]``).

    Written so that both engines read it the same: llama.cpp, and llguidance's ``gbnf_to_lark``,
    which strips leading zeros from ``\\u``/``\\U`` escapes (``\\u0085`` would become ``\\u85``).
    So: ``\\xNN`` up to U+00FF, ``\\uXXXX`` from U+1000 to U+FFFF, and the raw character elsewhere
    (UTF-8; none of those is a line break).
    """
    if cp in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[cp]
    special = _CLASS_SPECIAL if in_class else _LITERAL_SPECIAL
    if cp in special:
        return special[cp]
    if cp < 0x20 or cp == 0x7F or (in_class and 0x80 <= cp <= 0xFF) or cp in (0x85, 0x2028, 0x2029):
        return f"\\x{cp:02X}" if cp <= 0xFF else f"\\u{cp:04X}"
    if 0xD800 <= cp <= 0xDFFF:
        return f"\\u{cp:04X}"  # cannot appear in UTF-8 text; never raw
    if cp < 0x80 or not in_class:
        return chr(cp)  # ASCII, or readable UTF-8 in literals (llama.cpp decodes UTF-8)
    return f"\\u{cp:04X}" if 0x1000 <= cp <= 0xFFFF else chr(cp)


def literal(text: str) -> str:
    """A GBNF string literal matching ``text`` exactly."""
    return '"' + "".join(_escape(ord(c), in_class=False) for c in text) + '"'


def json_text(value: Any) -> str:
    """The canonical JSON spelling of a constant: compact, UTF-8, lone surrogates escaped.

    ``'q"uote'`` -> ``'"q\\"uote"'`` (with its quotes). The first half of the one escaper every
    literal value of the grammar goes through (tool names, property keys, enum and const
    values): first JSON, then GBNF (:func:`literal`).
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return re.sub(r"[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", text)


def json_literal(value: Any) -> str:
    """A GBNF literal matching the canonical JSON spelling of ``value``, quotes included for a
    string: for the tool name ``q"uote`` it matches the 9 characters ``"q\\"uote"``. Tool names,
    envelope keys and property keys go through here."""
    return literal(json_text(value))


def char_class(ranges: Iterable[tuple[int, int]], *, negated: bool = False) -> str:
    """A GBNF character class of inclusive code-point ranges (``[a-z0-9]``, ``[^"]``)."""
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_escape(lo, in_class=True))
        elif hi == lo + 1:
            parts.append(_escape(lo, in_class=True) + _escape(hi, in_class=True))
        else:
            parts.append(f"{_escape(lo, in_class=True)}-{_escape(hi, in_class=True)}")
    return "[" + ("^" if negated else "") + "".join(parts) + "]"


def repetition(atom: str, lo: int, hi: int | None) -> str:
    """``atom`` repeated ``lo`` to ``hi`` times (``hi=None``: unbounded), within llama.cpp's cap.

    Parameters
    ----------
    atom : str
        A rule name, a literal or a class: one GBNF symbol (never a group; see
        :data:`MAX_REPETITION`).
    lo, hi : int, int or None
        Bounds, ``0 <= lo <= hi``.

    Returns
    -------
    str
        GBNF sequence. Counts above :data:`MAX_REPETITION` are split into chained blocks
        (``x{2000} x{0,500}``) that accept exactly the same lengths.
    """
    cap = MAX_REPETITION
    parts: list[str] = []
    while lo > cap:
        parts.append(f"{atom}{{{cap}}}")
        lo -= cap
        hi = None if hi is None else hi - cap
    if hi is None:
        parts.append(f"{atom}*" if lo == 0 else f"{atom}+" if lo == 1 else f"{atom}{{{lo},}}")
    elif hi <= cap:
        if (lo, hi) == (0, 1):
            parts.append(f"{atom}?")
        elif lo == hi:
            if lo:
                parts.append(atom if lo == 1 else f"{atom}{{{lo}}}")
        else:
            parts.append(f"{atom}{{{lo},{hi}}}")
    else:
        # lo <= cap < hi: take lo now, then up to hi - lo more in blocks of at most cap, each
        # block only reachable when the previous one is full: x{lo} (x{0,cap-1} | x{cap} (...))
        if lo:
            parts.append(atom if lo == 1 else f"{atom}{{{lo}}}")
        parts.append(_optional_chain(atom, hi - lo))
    return " ".join(p for p in parts if p)


def _optional_chain(atom: str, n: int) -> str:
    """0..n repetitions of ``atom`` for n > cap, nested so every count stays <= cap."""
    cap = MAX_REPETITION
    if n <= cap:
        return f"{atom}{{0,{n}}}"
    return f"({atom}{{0,{cap - 1}}} | {atom}{{{cap}}} {_optional_chain(atom, n - cap)})"
