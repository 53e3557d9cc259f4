"""JSON Schema to GBNF: one :class:`Compiler`, one ``visit`` dispatcher, exact or it says so.

Modelled on llama.cpp ``examples/json_schema_to_grammar.py`` (``SchemaConverter``), see
STYLE.md section 1. What differs, on purpose:

* nothing is skipped silently: a keyword the grammar cannot express is a :class:`SchemaError`
  naming its JSON path, or, with ``lenient=True``, a warning with that path; what the grammar
  accepts but cannot fully check (``multipleOf`` with more than ``MAX_MULTIPLES`` multiples or an
  open side, ``uniqueItems``, overlapping ``oneOf`` branches, unknown formats) is listed in ``Grammar.not_enforced`` so the caller validates with
  ``jsonschema`` after generation;
* the grammar is never wider than the schema. It may be *narrower* where tool calling wants it:
  objects with up to ``ANY_ORDER_MAX_KEYS`` declared keys take them in any order, larger ones in
  schema order (one rule per key, linear size; at most ``MAX_OBJECT_PROPERTIES`` keys), extra
  keys come last and are spelt without escapes; an object that declares ``properties`` but not
  ``additionalProperties`` takes no extra keys (one without ``properties`` is a free-form dict);
  a schema without ``type`` takes the types its keywords imply; numbers have bounded digits,
  bounded numbers no exponent and no ``-0``, and integers no fraction (``3.0``, which JSON Schema
  counts as an integer, is spelt ``3``); strings under ``pattern`` use canonical escapes; a number
  ``const`` / ``enum`` value is spelt as JSON writes it, a whole float also as an integer (``2.0``
  and ``2``), never with an exponent (``1e2`` for ``100.0``) or an integer with a fraction; an object
  or array ``const`` / ``enum`` value is spelt as the object and array rules spell one;
* ``minProperties`` and ``maxProperties`` count every key, extra keys too (a bounded repetition
  of them: a map under ``maxProperties``); past ``MAX_COUNTED_STATES`` counting rules, beside many
  declared keys, they are refused;
* the grammar is a safety barrier: every literal (tool names, keys, enum values) goes through
  one JSON-then-GBNF escaper (``builtins.json_literal``); recursion (``$ref`` anywhere, through
  ``anyOf`` / ``oneOf`` at any depth) becomes recursive rules; schemas nested deeper than
  ``MAX_SCHEMA_DEPTH`` are one clear error, never a RecursionError;
* every grammar is checked before it is returned: rules that can never finish (a recursive
  ``$ref`` with no base case) and left recursion are errors naming the path, and llama.cpp's own
  parser must accept the text (``oracle.check_parses``; fail closed).

``visit`` order (each branch returns a rule name): boolean schema, keyword check, ``$ref`` alone,
composition (``$ref`` with siblings, ``allOf``, ``anyOf``, ``oneOf``: merged, then a union),
several types, ``const`` / ``enum``, object, array, string (``pattern``, ``format``, length),
integer (bounds), number, boolean, null, any value.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Iterable, Mapping

from ..errors import PatternError, SchemaError, Unsatisfiable
from ..schema import check as check_schema
from ..schema import normalize_types, pointer, resolve_local_ref
from . import _analysis, _pattern
from .builtins import (
    COMPACT_SPACE_RULE,
    MAX_COUNT,
    MAX_REPETITION,
    PRIMITIVE_RULES,
    RESERVED_NAMES,
    SPACE_RULE,
    STRING_FORMAT_RULES,
    VARIABLE_LENGTH_FORMATS,
    char_class,
    json_literal,
    json_text,
    literal,
    repetition,
)

__all__ = [
    "Grammar",
    "Compiler",
    "Style",
    "compile_schema",
    "ANNOTATION_KEYWORDS",
    "SUPPORTED_KEYWORDS",
    "NOT_ENFORCED_KEYWORDS",
    "UNSUPPORTED_KEYWORDS",
]

#: Keywords without validation meaning (JSON Schema 2020-12 meta-data, content and core
#: vocabularies, plus OpenAPI's ``example``): ignored.
ANNOTATION_KEYWORDS = frozenset({
    "title", "description", "default", "examples", "example", "$comment", "deprecated", "readOnly",
    "writeOnly", "$schema", "$id", "$anchor", "$vocabulary", "$defs", "definitions",
    "contentMediaType", "contentEncoding", "contentSchema",
})
#: Keywords the grammar enforces.
SUPPORTED_KEYWORDS = frozenset({
    "type", "enum", "const", "$ref", "allOf", "anyOf", "oneOf", "nullable", "properties", "required",
    "additionalProperties", "items", "prefixItems", "additionalItems", "minItems", "maxItems",
    "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "minProperties", "maxProperties", "not", "patternProperties", "propertyNames",
})
#: Keywords GBNF cannot express: accepted, listed in ``Grammar.not_enforced``.
NOT_ENFORCED_KEYWORDS = frozenset({"multipleOf", "uniqueItems"})
#: Validation keywords the compiler does not support: an error (or a lenient warning).
UNSUPPORTED_KEYWORDS = frozenset({
    "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies",
    "contains", "minContains",
    "maxContains", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$dynamicAnchor",
    "$recursiveRef", "$recursiveAnchor", "disallow", "extends", "divisibleBy",
})

TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")
#: Which type a type-specific keyword implies when a schema has no ``type`` (as llama.cpp infers
#: object from ``properties``). The grammar then accepts only those types: narrower, never wider.
TYPE_OF_KEYWORD = {
    "properties": "object", "required": "object", "additionalProperties": "object",
    "minProperties": "object", "maxProperties": "object", "patternProperties": "object",
    "propertyNames": "object",
    "items": "array", "prefixItems": "array", "additionalItems": "array", "minItems": "array",
    "maxItems": "array", "uniqueItems": "array",
    "minLength": "string", "maxLength": "string", "pattern": "string", "format": "string",
    "minimum": "number", "maximum": "number", "exclusiveMinimum": "number",
    "exclusiveMaximum": "number", "multipleOf": "number",
}
#: Formats with a grammar rule; shortest and longest string of each (for length checks).
FORMAT_LENGTHS = {"date": (10, 10), "time": (9, 24), "date-time": (20, 35), "uuid": (36, 36),
                  "ipv4": (7, 15), "ipv6": (2, 45), "hostname": (1, 253), "email": (3, 64 + 1 + 253),
                  "uri": (2, None)}
#: Alternatives a composition may expand to (allOf over several anyOf/oneOf is a product).
MAX_UNION_ALTERNATIVES = 256
#: ``multipleOf`` is enforced by listing the multiples when both bounds leave at most this many
#: (minutes in steps of 5, a percentage in steps of 10); otherwise it is listed as not enforced.
MAX_MULTIPLES = 256
#: ``uniqueItems`` is enforced when the items are one of at most this many listed values (an
#: ``enum``, a ``const``, booleans): one rule per set of values written, 2 ** 8 = 256 at most.
MAX_UNIQUE_VALUES = 8
#: Objects with at most this many declared keys take them in any order (each at most once), with
#: one rule per set of keys written (2 ** 5 = 32 rules at most); larger objects fix schema order.
ANY_ORDER_MAX_KEYS = 5
#: Rules (position x key count) the ordered form may spend on counting keys for minProperties and
#: maxProperties beside more declared keys than that; past it those bounds are refused.
MAX_COUNTED_STATES = 4096
#: Declared keys per object: the ordered form grows linearly (one rule per key), and llama.cpp's
#: per-token work grows with the keys that may come next, so past this the schema is refused.
MAX_OBJECT_PROPERTIES = 1000
#: Nesting of a schema's JSON (objects and arrays inside each other): 128 is 64 levels of
#: ``properties`` or 128 of ``items``, far beyond any tool's arguments. Deeper schemas are refused
#: up front with one clear line (never a RecursionError from the compiler, jsonschema or json).
MAX_SCHEMA_DEPTH = 128

_INVALID_RULE_CHARS_RE = re.compile(r"[^a-zA-Z0-9-]+")


@dataclass(frozen=True, kw_only=True, slots=True)
class Grammar:
    """A compiled GBNF grammar and what it does not enforce.

    Attributes
    ----------
    text : str
        GBNF, rules sorted by name, start symbol ``root``.
    names : tuple of str
        For an offer: the offered tool names in offer order; empty for a bare schema.
    warnings : tuple of (json_path, message)
        Unknown keywords ignored; in lenient mode, unsupported keywords dropped.
    not_enforced : tuple of (json_path, keyword)
        What the grammar accepts without checking; validate with ``jsonschema`` after generation.
    """

    text: str
    names: tuple[str, ...] = ()
    warnings: tuple[tuple[str, str], ...] = ()
    not_enforced: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return self.text


def _finite_number(v: int | float) -> bool:
    """A float that is finite, or any int: ``math.isfinite(10**400)`` raises OverflowError (a
    helper's bad schema, 2026-12-05), and an integer bound that large is simply an open side."""
    return isinstance(v, int) or math.isfinite(v)


def _rule_piece(run: str) -> str:
    # letters and digits outside ASCII keep their identity as code points: "名前" -> "u540d-u524d",
    # so a key made only of them never sanitises to nothing (the property rule "root-名前" took the
    # name "root" and the start symbol went unreachable; a variant of bad input row 3)
    kept = [f"u{ord(c):x}" for c in run if c.isalnum()]
    return f"-{'-'.join(kept)}-" if kept else "-"


def rule_name(text: str) -> str:
    """A GBNF rule name from any text (a tool name, a JSON path): runs of other characters -> ``-``,
    non-ASCII letters and digits -> their code points (``città`` -> ``citt-ue0``)."""
    return re.sub(r"-{2,}", "-", _INVALID_RULE_CHARS_RE.sub(lambda m: _rule_piece(m.group(0)), text)).strip("-") or "r"


def _literal_schema(value: dict | list) -> dict:
    """A schema whose only instance is ``value``, an object or an array: each key or item a
    ``const``, every key required, nothing else allowed (``{"mode": "fast"}`` gives an object of one
    required key ``mode`` with ``const`` "fast"). Compiled by the object and array rules, so the
    value is accepted with any spacing and, up to ``ANY_ORDER_MAX_KEYS`` keys, in any key order."""
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: {"const": v} for k, v in value.items()},
                "required": list(value), "additionalProperties": False}
    return {"type": "array", "prefixItems": [{"const": v} for v in value], "items": False,
            "minItems": len(value), "maxItems": len(value)}


def _scalar_spellings(value: Any) -> list[str]:
    """How a ``const`` / ``enum`` scalar may be written: its JSON text, and for a whole float also
    the integer spelling JSON writers use (``2.0`` is also ``2``: ``{"enum": [1.0, 1.5, 2.0]}``
    refused ``{"speed": 2}``; round nineteen's grammar variants, 2026-12-07). Exponent spellings
    (``1e2``) are a documented narrowing."""
    text = json_text(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        whole = str(int(value))
        return [whole, text] if whole != text else [text]
    return [text]


def _json_key(value: Any) -> str:
    """Equality key with JSON Schema semantics (1 == 1.0, true != 1)."""

    def norm(v: Any) -> Any:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, (int, float)):
            return v
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return json.dumps(norm(value), sort_keys=True)


def _type_set(types: Iterable[str]) -> set[str]:
    """Types with ``integer`` made explicit under ``number``."""
    out = set(types)
    if "number" in out:
        out.add("integer")
    return out


# ---------------------------------------------------------------------------------------------
# Integer ranges (cf. llama.cpp _generate_min_max_int)
# ---------------------------------------------------------------------------------------------

#: Unbounded integers have at most this many digits (int64 has 19); narrower, never wider.
MAX_INT_DIGITS = 19


def _same_length_range(lo: str, hi: str) -> str:
    """GBNF for the digit strings from ``lo`` to ``hi`` (same length, lo <= hi)."""
    if lo == hi:
        return literal(lo)
    if len(lo) == 1:
        return f"[{lo}-{hi}]"
    if lo[0] == hi[0]:
        return f"{literal(lo[0])} {_group(_same_length_range(lo[1:], hi[1:]))}"
    n = len(lo) - 1
    alts = []
    first, last = int(lo[0]), int(hi[0])
    if lo[1:] != "0" * n:
        alts.append(f"{literal(lo[0])} {_group(_same_length_range(lo[1:], '9' * n))}")
        first += 1
    tail = ""
    if hi[1:] != "9" * n:
        tail = f"{literal(hi[0])} {_group(_same_length_range('0' * n, hi[1:]))}"
        last -= 1
    if first <= last:
        digit = literal(str(first)) if first == last else f"[{first}-{last}]"
        alts.append(f"{digit} {repetition('[0-9]', n, n)}")
    if tail:
        alts.append(tail)
    return " | ".join(alts)


def _seq(*parts: str) -> str:
    """GBNF sequence of the non-empty parts."""
    return " ".join(p for p in parts if p)


def _group(expr: str) -> str:
    return f"({expr})" if "|" in expr else expr


def _natural_range(lo: int, hi: int | None, digits: int = MAX_INT_DIGITS) -> str:
    """GBNF for the decimal spellings (no leading zeros) of lo..hi, 0 <= lo; hi None = open
    (up to ``digits`` digits, or as many as ``lo`` has when it needs more)."""
    alts = []
    top = len(str(hi)) if hi is not None else max(digits, len(str(lo)))
    for digits in range(len(str(lo)), top + 1):
        start = max(lo, 0 if digits == 1 else 10 ** (digits - 1))
        end = (10 ** digits) - 1 if hi is None else min(hi, 10 ** digits - 1)
        if start > end:
            continue
        if hi is None and digits > len(str(lo)):
            alts.append(f"[1-9] {repetition('[0-9]', digits - 1, top - 1)}")
            break
        alts.append(_same_length_range(str(start), str(end)))
    return " | ".join(alts)


def _digits_after_point(d: Decimal) -> str:
    """The fraction digits of ``d >= 0`` without trailing zeros (``Decimal("2.50")`` -> ``"5"``)."""
    frac = d - int(d)
    if frac == 0:
        return ""
    text = format(frac, "f")
    return text.split(".", 1)[1].rstrip("0")


def _fraction(lo: tuple[str, bool] | None, hi: tuple[str, bool] | None, room: int) -> str | None:
    """GBNF for 1 to ``room`` fraction digits whose value lies within the bounds, or None.

    ``lo``/``hi``: the bound's remaining fraction digits (``""`` = zeros from here on) and
    whether it is exclusive; None = no bound on that side. Digit by digit: a first digit strictly
    between the bounds' digits frees the rest; one equal to a bound's digit keeps that bound.
    """
    if lo is None and hi is None:
        return repetition("[0-9]", 1, room)
    dl = int(lo[0][0]) if lo is not None and lo[0] else 0
    dh = (int(hi[0][0]) if hi[0] else 0) if hi is not None else 9
    alts = []
    free = [x for x in range(10) if (lo is None or x > dl) and (hi is None or x < dh)]
    if free:
        head = f"[{free[0]}]" if len(free) == 1 else f"[{free[0]}-{free[-1]}]"
        alts.append(_seq(head, repetition("[0-9]", 0, room - 1)))
    for x in sorted({dl, dh} if lo is not None and hi is not None else {dl} if lo is not None else {dh}):
        if (lo is not None and x < dl) or (hi is not None and x > dh):
            continue
        nlo = (lo[0][1:], lo[1]) if lo is not None and x == dl else None
        nhi = (hi[0][1:], hi[1]) if hi is not None and x == dh else None
        # may the digits end here? the rest of the number is then zeros
        end = (nlo is None or (nlo[0] == "" and not nlo[1])) and (nhi is None or nhi[0] != "" or not nhi[1])
        more = _fraction(nlo, nhi, room - 1) if room > 1 else None
        if more is not None and end:
            alts.append(f'"{x}" ({more})?')
        elif more is not None:
            alts.append(f'"{x}" {_group(more)}')
        elif end:
            alts.append(f'"{x}"')
    return " | ".join(alts) if alts else None


def _fraction_part(lo: tuple[str, bool] | None, hi: tuple[str, bool] | None, room: int = 24) -> str | None:
    """The optional ``"." digits`` (1 to ``room``) after an integer part, within fraction bounds;
    None if impossible."""
    digits = _fraction(lo, hi, room)
    zero_ok = (lo is None or (lo[0] == "" and not lo[1])) and (hi is None or hi[0] != "" or not hi[1])
    if digits is None:
        return "" if zero_ok else None
    return f'("." {_group(digits)})?' if zero_ok else f'"." {_group(digits)}'


def _magnitudes(lo: tuple[Decimal, bool], hi: tuple[Decimal, bool] | None, digits: int = MAX_INT_DIGITS,
                fraction: int = 24) -> list[str]:
    """GBNF alternatives for the unsigned decimal spellings (no exponent) of magnitudes within
    ``lo`` (>= 0) and ``hi`` (None: up to ``digits`` integral digits), with at most ``fraction``
    fraction digits (more where a bound needs them); each bound is (value, exclusive)."""
    out = []
    ia, fa = int(lo[0]), (_digits_after_point(lo[0]), lo[1])
    room = max(fraction, len(fa[0]))
    if hi is not None:
        ib, fb = int(hi[0]), (_digits_after_point(hi[0]), hi[1])
        room = max(room, len(fb[0]))
        if ia == ib:
            part = _fraction_part(fa, fb, room)
            return [] if part is None else [_seq(literal(str(ia)), part)]
    part = _fraction_part(fa, None, room)
    if part is not None:
        out.append(_seq(literal(str(ia)), part))
    top = None if hi is None else ib - 1
    if top is None or top >= ia + 1:
        out.append(f'({_natural_range(ia + 1, top, digits)}) ("." {repetition("[0-9]", 1, fraction)})?')
    if hi is not None:
        part = _fraction_part(None, fb, room)
        if part is not None:
            out.append(_seq(literal(str(ib)), part))
    return out


def integer_range(lo: int | None, hi: int | None, digits: int = MAX_INT_DIGITS) -> str:
    """GBNF for the integers in [lo, hi] (``None`` = unbounded: at most ``digits`` digits on that
    side, or as many as the other bound needs), without ``space``; no ``-0``."""
    alts = []
    if lo is None or lo < 0:  # negatives v = -m, m in [m_lo, m_hi]
        m_lo = 1 if hi is None else max(1, -hi)
        m_hi = None if lo is None else -lo
        if m_hi is None or m_lo <= m_hi:
            alts.append(f'"-" {_group(_natural_range(m_lo, m_hi, digits))}')
    start = max(lo or 0, 0)
    if hi is None or hi >= start:
        alts.append(_natural_range(start, hi, digits))
    return " | ".join(alts)


# ---------------------------------------------------------------------------------------------
# String content for character sets (pattern)
# ---------------------------------------------------------------------------------------------

_CONTROL = ((0x00, 0x1F),)
_SURROGATES = ((0xD800, 0xDFFF),)
_SHORT_JSON_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}


def _json_char_alternatives(ranges: _pattern.Ranges) -> list[str]:
    """GBNF alternatives matching the JSON spelling of one character of ``ranges``.

    Raw where JSON allows it; the canonical escape for ``"``, backslash and control characters;
    ``\\uXXXX`` too for non-ASCII characters of the BMP (:func:`_unicode_escapes`).
    """
    forbidden_raw = _pattern.normalize(_CONTROL + _SURROGATES + ((0x22, 0x22), (0x5C, 0x5C)))
    raw = _pattern.intersect(ranges, _pattern.complement(forbidden_raw))
    alts = []
    if raw:
        negated = _pattern.normalize(_pattern.complement(raw + _SURROGATES))
        if len(negated) < len(raw):
            alts.append(char_class(negated, negated=True))
        else:
            alts.append(char_class(raw))

    def has(cp: int) -> bool:
        return any(lo <= cp <= hi for lo, hi in ranges)

    if has(0x22):
        alts.append(literal('\\"'))
    if has(0x5C):
        alts.append(literal("\\\\"))
    controls = [cp for cp in range(0x20) if has(cp)]
    if len(controls) == 0x20:
        alts.append('"\\\\" [bfnrt]')
        alts.append('"\\\\u00" [01] [0-9a-fA-F]')
    else:
        for cp in controls:
            alts.append(literal(_SHORT_JSON_ESCAPES.get(cp, f"\\u{cp:04x}")))
    escaped = _unicode_escapes(ranges)
    if escaped:
        alts.append(escaped)
    return alts


#: Non-ASCII characters of the Basic Multilingual Plane: the ones a JSON encoder writes as
#: ``\uXXXX`` (Python's ``json.dumps`` by default, ``ensure_ascii``).
_ESCAPED_BY_ENCODERS = ((0x80, 0xD7FF), (0xE000, 0xFFFF))
#: More ranges than this in one class and its ``\uXXXX`` spellings are left out (narrower, never wider).
_MAX_ESCAPE_RANGES = 32


def _unicode_escapes(ranges: _pattern.Ranges) -> str:
    r"""GBNF for ``\uXXXX`` (hex digits in either case) of the non-ASCII BMP characters of
    ``ranges``, or ``""``: "\u00e9" for a pattern's é was refused, though a JSON encoder writes it
    so (the bounded-string-keeps-escapes kind; a helper's variants, 2026-12-05)."""
    wanted = _pattern.intersect(ranges, _pattern.normalize(_ESCAPED_BY_ENCODERS))
    if not wanted or len(wanted) > _MAX_ESCAPE_RANGES:
        return ""
    body = " | ".join(_hex_span(lo, hi, 4) for lo, hi in wanted)
    return f'"\\\\u" ({body})'


def _hex_digit(value: int) -> str:
    """One hex digit of either case: ``"7"``, ``[aA]``."""
    text = f"{value:x}"
    return f'"{text}"' if text.isdigit() else f"[{text}{text.upper()}]"


def _hex_digits(lo: int, hi: int) -> str:
    """A class of the hex digits ``lo`` to ``hi`` in either case."""
    if lo == hi:
        return _hex_digit(lo)
    digits = [f"{v:x}" for v in range(lo, hi + 1)]
    return "[" + "".join(d for d in digits if d.isdigit()) + "".join(d + d.upper() for d in digits if not d.isdigit()) + "]"


def _hex_span(lo: int, hi: int, width: int) -> str:
    """GBNF for the ``width``-digit hex numbers from ``lo`` to ``hi`` (both in range)."""
    if width == 0:
        return ""
    unit = 16 ** (width - 1)
    rest = f" [0-9a-fA-F]{{{width - 1}}}" if width > 1 else ""
    head_lo, head_hi = lo // unit, hi // unit
    if head_lo == head_hi:
        tail = _hex_span(lo % unit, hi % unit, width - 1)
        return f"{_hex_digit(head_lo)} {tail}".strip() if width == 1 or tail.startswith("(") or " " not in tail \
            else f"{_hex_digit(head_lo)} ({tail})"
    parts = []
    if lo % unit:
        parts.append(f"{_hex_digit(head_lo)} ({_hex_span(lo % unit, unit - 1, width - 1)})")
        head_lo += 1
    last_full = head_hi if hi % unit == unit - 1 else head_hi - 1
    if head_lo <= last_full:
        parts.append(f"{_hex_digits(head_lo, last_full)}{rest}")
    if hi % unit != unit - 1:
        parts.append(f"{_hex_digit(head_hi)} ({_hex_span(0, hi % unit, width - 1)})")
    return parts[0] if len(parts) == 1 else "(" + " | ".join(parts) + ")"


# ---------------------------------------------------------------------------------------------
# The compiler
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Style:
    """How the grammar spells values and whitespace (issue 17, levers 1 and 2); the defaults are
    the reference grammar (llama.cpp's bounds, widened to Python's float ``repr``).

    Attributes
    ----------
    int_digits : int, default 19
        Digits of an integer part where the schema gives no bound on that side (int64 has 19); a
        bound the schema gives is kept exactly, however many digits it needs.
    fraction_digits : int, default 24
        Digits after the point where the schema's bounds do not need more.
    string_chars : int or None, default None
        Longest string, in characters, where the schema has no ``maxLength`` (nor a pattern or
        format, which bound themselves); None = unbounded. A ``minLength`` above it wins.
    array_items : int or None, default None
        Most items of an array whose schema has no ``maxItems``; None = unbounded. A
        ``minItems`` above it wins.
    compact : bool, default False
        Whitespace: nothing or one space between tokens (no newline, no indentation), instead of
        :data:`~eris_lab.grammar.builtins.SPACE_RULE`.
    """

    int_digits: int = MAX_INT_DIGITS
    fraction_digits: int = 24
    string_chars: int | None = None
    array_items: int | None = None
    compact: bool = False

    def __post_init__(self) -> None:
        for name, lo, hi in (("int_digits", 1, MAX_INT_DIGITS), ("fraction_digits", 1, 24)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise SchemaError(f"expected an integer in [{lo}, {hi}], got {v!r}", where=name)
        for name in ("string_chars", "array_items"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_REPETITION):
                raise SchemaError(f"expected an integer in [1, {MAX_REPETITION}] or None, got {v!r}", where=name)

    def bodies(self) -> dict[str, str]:
        """Builtin rule bodies this style replaces (name -> GBNF body)."""
        out = {}
        if self.compact:
            out["space"] = COMPACT_SPACE_RULE
        if self.int_digits != MAX_INT_DIGITS:
            out["integral-part"] = "[0] | [1-9]" + (f" [0-9]{{0,{self.int_digits - 1}}}" if self.int_digits > 1 else "")
        if self.fraction_digits != 24:
            out["decimal-part"] = repetition("[0-9]", 1, self.fraction_digits)
        if self.string_chars is not None:
            out["string"] = f'"\\"" {repetition("char", 0, self.string_chars)} "\\"" space'
        return out


class Compiler:
    """Turns JSON Schemas into GBNF rules; one instance builds one grammar.

    Parameters
    ----------
    lenient : bool, default False
        Unsupported keywords become warnings (and ``not_enforced`` entries) instead of errors.
    style : Style, default Style()
        Digit and length bounds, and whitespace (the reference grammar by default).

    Notes
    -----
    Use :meth:`document` for each schema (its ``$ref`` resolve against it), then
    :meth:`add_rule` for hand-written rules (the envelope), then :meth:`format`.
    """

    def __init__(self, *, lenient: bool = False, style: Style = Style()) -> None:
        self.lenient = lenient
        self.style = style
        self._bodies = style.bodies()
        self._rules: dict[str, str | None] = {"space": self._bodies.get("space", SPACE_RULE)}
        self._paths: dict[str, str] = {}
        self._warnings: list[tuple[str, str]] = []
        self._not_enforced: list[tuple[str, str]] = []
        self._refs: dict[tuple[int, str], str] = {}
        self._composed: dict[tuple[int, str], str] = {}
        self._doc: Any = None
        self._doc_key = 0  # one number per document: $ref caches are per document (never id())
        self._doc_name = "root"
        self._where = ""
        self._validator: Any = None
        self._quiet = 0  # > 0 while analysing (oneOf exclusivity): keyword checks report nothing

    # -- bookkeeping -------------------------------------------------------------------------
    @property
    def warnings(self) -> tuple[tuple[str, str], ...]:
        return tuple(dict.fromkeys(self._warnings))

    @property
    def not_enforced(self) -> tuple[tuple[str, str], ...]:
        return tuple(dict.fromkeys(self._not_enforced))

    def _at(self, path: str) -> str:
        return f"{self._where}{path}" if self._where else path

    def _error(self, path: str, message: str) -> SchemaError:
        return SchemaError(message, where=self._at(path))

    def _unsat(self, path: str, message: str) -> SchemaError:
        return Unsatisfiable(message, where=self._at(path))

    def _warn(self, path: str, message: str) -> None:
        self._warnings.append((self._at(path), message))

    def _unenforced(self, path: str, keyword: str) -> None:
        self._not_enforced.append((self._at(path), keyword))

    def _unsupported(self, path: str, message: str, keyword: str) -> None:
        if not self.lenient:
            raise self._error(path, message)
        self._warn(path, f"{message}; not enforced by the grammar (lenient)")
        self._unenforced(path, keyword)

    def _rule(self, name: str, body: str, path: str = "") -> str:
        """Add a rule; the only place rules are named. Same name and body: reuse it."""
        name = rule_name(name)
        if name in RESERVED_NAMES and name != "root":
            name += "-"
        key = name
        i = 0
        while key in self._rules and self._rules[key] is not None and self._rules[key] != body:
            i += 1
            key = f"{name}-{i}"
        if self._rules.get(key) is None:
            self._rules[key] = body
            self._paths.setdefault(key, self._at(path) or key)
        return key

    def _reserve(self, name: str, path: str) -> str:
        """Reserve a rule name (a ``$ref`` target being built) so recursion can refer to it."""
        name = rule_name(name)
        if name in RESERVED_NAMES and name != "root":
            name += "-"
        key, i = name, 0
        while key in self._rules:
            i += 1
            key = f"{name}-{i}"
        self._rules[key] = None
        self._paths[key] = self._at(path)
        return key

    def primitive(self, name: str) -> str:
        """Pull in a builtin rule and its dependencies; returns its name."""
        table = PRIMITIVE_RULES if name in PRIMITIVE_RULES else STRING_FORMAT_RULES
        rule = table[name]
        if name not in self._rules:
            self._rules[name] = self._bodies.get(name, rule.body)
            for dep in rule.deps:
                if dep != "space":
                    self.primitive(dep)
        return name

    def add_rule(self, name: str, body: str) -> str:
        """Add a hand-written rule (used by the envelope); returns the name used."""
        return self._rule(name, body)

    def reserve(self, name: str) -> str:
        """Reserve a rule name before its body is known (the envelope's ``root``, taken first so
        no schema rule can ever hold it); give the body with :meth:`define`. Returns the name."""
        return self._reserve(name, name)

    def define(self, name: str, body: str) -> None:
        """The body of a name :meth:`reserve` returned."""
        if self._rules.get(name, "") is not None:
            raise ValueError(f"rule {name!r} was not reserved or already has a body")
        self._rules[name] = body

    # -- documents and refs ------------------------------------------------------------------
    def document(self, schema: Any, name: str, *, where: str = "") -> str:
        """Compile one whole schema; its ``$ref`` resolve against it. Returns its rule name.

        Parameters
        ----------
        schema : JSON Schema (dict or bool)
        name : str
            Rule name of the document root (``root`` for a bare schema).
        where : str
            Prefix for error paths (a tool name).
        """
        self._doc, self._doc_name, self._where = schema, name, where
        self._doc_key += 1
        self._validator = None
        return self._ref("#", "#")

    def _resolve_pointer(self, ref: str, path: str) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise self._error(path, f"only local $ref ('#...') are supported; got {ref!r}")
        from urllib.parse import unquote

        fragment = unquote(ref[1:])
        if fragment and not fragment.startswith("/"):
            raise self._error(path, f"$ref to an anchor is not supported; got {ref!r}")
        found, node = resolve_local_ref(self._doc, ref)
        if not found:
            raise self._error(path, f"$ref {ref!r} points at nothing in this schema")
        return node

    def _ref(self, ref: str, path: str) -> str:
        key = (self._doc_key, ref)
        if key in self._refs:
            return self._refs[key]
        target = self._resolve_pointer(ref, path)
        if ref in ("#", ""):
            name = self._doc_name
        else:
            name = ref.rstrip("/").split("/")[-1]
            name = f"{self._doc_name}-{name}" if self._doc_name != "root" else name
        return self._compile_once(self._refs, key, name, ref, lambda rule: self.visit(target, rule, ref))

    def _compile_once(self, memo: dict, key: Any, name: str, path: str, visit: Callable[[str], str]) -> str:
        """Reserve a rule for ``key`` in ``memo`` before compiling into it, so recursion meets the
        reserved name; a failed compile takes the reservation back. ``visit(rule)`` returns the rule
        it compiled to; when that is another rule, the reserved one becomes its alias."""
        placeholder = self._reserve(name, path)
        memo[key] = placeholder
        try:
            got = visit(placeholder)
        except SchemaError:
            del memo[key]
            if self._rules.get(placeholder) is None:
                self._rules.pop(placeholder, None)
            raise
        if self._rules.get(placeholder) is None:
            self._rules[placeholder] = got  # an alias: the target compiled to another rule
        return placeholder

    # -- keywords ----------------------------------------------------------------------------
    def _check_keywords(self, schema: Mapping[str, Any], path: str) -> None:
        if self._quiet:
            return
        for key, value in schema.items():
            if key in SUPPORTED_KEYWORDS or key in ANNOTATION_KEYWORDS or key.startswith("x-"):
                continue
            if key in NOT_ENFORCED_KEYWORDS:
                # listed by the builders where they cannot enforce them (a long list of multiples,
                # unique items that are not a few listed values)
                if key not in ("multipleOf", "uniqueItems"):
                    self._unenforced(f"{path}/{key}", key)
            elif key in UNSUPPORTED_KEYWORDS:
                self._unsupported(f"{path}/{key}", f"unsupported keyword {key!r}", key)
            else:
                self._warn(f"{path}/{key}", f"unknown keyword {key!r} ignored (no JSON Schema meaning)")

    def _types(self, schema: Mapping[str, Any], path: str) -> list[str] | None:
        raw = schema.get("type")
        if raw is None:
            types = None
        elif isinstance(raw, str):
            types = [raw]
        elif isinstance(raw, list) and raw and all(isinstance(t, str) for t in raw):
            types = list(dict.fromkeys(raw))
        else:
            raise self._error(f"{path}/type", f"expected a type name or a list of them, got {raw!r}")
        for t in types or ():
            if t not in TYPES:
                raise self._error(f"{path}/type", f"unknown type {t!r}; expected one of {', '.join(TYPES)}")
        if types is not None and schema.get("nullable") is True and "null" not in types:
            types.append("null")
        return types

    # -- the dispatcher ----------------------------------------------------------------------
    def visit(self, schema: Any, name: str, path: str) -> str:
        """Compile ``schema`` to a rule; returns the rule's name.

        Parameters
        ----------
        schema : dict or bool
        name : str
            Wanted rule name, from the JSON path (``<parent>-<property>``, ``-item``, ...).
        path : str
            JSON pointer of ``schema`` (``#/properties/a``), for errors.
        """
        if schema is True:
            return self.primitive("value")
        if schema is False:
            raise self._unsat(path, "schema false: no value is valid here")
        if not isinstance(schema, dict):
            raise self._error(path, f"expected a schema object, got {type(schema).__name__}")
        self._check_keywords(schema, path)
        schema = self._normalize(schema, path)
        if "not" in schema:
            schema = self._resolve_not(schema, path)
            if schema is False:
                raise self._unsat(f"{path}/not", "'not' excludes every value here")
        validating = {k for k in schema if k not in ANNOTATION_KEYWORDS and not k.startswith("x-")}
        # 1. $ref alone
        if "$ref" in schema and validating <= {"$ref"}:
            return self._ref(schema["$ref"], f"{path}/$ref")
        # 2. composition: $ref with siblings, allOf, anyOf, oneOf
        if validating & {"$ref", "allOf", "anyOf", "oneOf"}:
            return self._composition_rule(schema, name, path)
        # 3. several types
        types = self._types(schema, path)
        if types is None and "enum" not in schema and "const" not in schema:
            implied = {TYPE_OF_KEYWORD[k] for k in validating if k in TYPE_OF_KEYWORD}
            types = [t for t in TYPES if t in implied] if implied else None
        if types is not None and {"integer", "number"} <= set(types):
            types.remove("integer")
        if types is not None and len(types) > 1 and "enum" not in schema and "const" not in schema:
            alts = [self.visit({**schema, "type": t, "nullable": False}, f"{name}-{t}", path) for t in types]
            return self._rule(name, " | ".join(alts), path)
        if types == []:
            raise self._unsat(f"{path}/type", "no type is allowed")
        kind = types[0] if types else None
        # 4. const / enum
        if "const" in schema or "enum" in schema:
            return self._visit_enum(schema, name, path)
        # 5. by type
        if kind in ("integer", "number") and "multipleOf" in schema:
            listed = self._visit_multiples(schema, kind, name, path)
            if listed is not None:
                return listed
            self._unenforced(f"{path}/multipleOf", "multipleOf")
        if kind == "object":
            return self._build_object_rule(schema, name, path)
        if kind == "array":
            return self._build_array_rule(schema, name, path)
        if kind == "string":
            return self._build_string_rule(schema, name, path)
        if kind == "integer":
            return self._build_integer_rule(schema, name, path)
        if kind == "number":
            return self._build_number_rule(schema, name, path)
        if kind in ("boolean", "null"):
            return self.primitive(kind)
        return self.primitive("value")  # no type, no constraint: any JSON value

    def _normalize(self, schema: dict, path: str) -> dict:
        """Draft-4 boolean exclusive bounds to numbers; ``items`` as a list to ``prefixItems``."""
        out = dict(schema)
        for excl, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(out.get(excl), bool):
                if out.pop(excl) and bound in out:
                    out[excl] = out.pop(bound)
        if isinstance(out.get("items"), list):
            out["prefixItems"] = out.pop("items")
            if "additionalItems" in out:
                out["items"] = out.pop("additionalItems")
        elif "additionalItems" in out:
            out.pop("additionalItems")  # ignored when items is not a list (draft 2019 and older)
        return out

    def _resolve_not(self, schema: dict, path: str) -> dict | bool:
        """``schema`` with its ``not`` folded into the other keywords, or False (no value).

        The forms SDKs emit: ``{"not": {}}`` (zod's never: nothing), ``{"not": false}`` (anything),
        ``{"not": {"type": ...}}`` (the other types), and ``{"not": {"enum"/"const": ...}}`` beside
        an ``enum``. Anything else is unsupported (lenient: dropped, listed as not enforced).
        """
        target = schema["not"]
        rest = {k: v for k, v in schema.items() if k != "not"}
        trivial = _trivial(target)
        if trivial is True:
            return False
        if trivial is False:
            return rest
        npath = f"{path}/not"
        keys = {k for k in target if k not in ANNOTATION_KEYWORDS and not k.startswith("x-")} \
            if isinstance(target, dict) else set()
        if keys == {"type"}:
            excluded = _type_set(self._types(target, npath) or ())
            allowed = [t for t in TYPES if t not in excluded]
            if "integer" in excluded and "number" in allowed:
                allowed.remove("number")  # "a number but not an integer" has no grammar: narrower
                self._warn(npath, "not integer: non-integral numbers are left out of the grammar")
            if rest.get("type") is not None:
                own = _type_set(self._types(rest, path) or ())
                allowed = [t for t in allowed if t in own]
            if not allowed:
                return False
            return {**rest, "type": allowed}
        if keys and keys <= {"enum", "const"} and ("enum" in rest or "const" in rest):
            banned = {_json_key(v) for v in target.get("enum", [])} | (
                {_json_key(target["const"])} if "const" in target else set())
            values = rest["enum"] if "enum" in rest else [rest["const"]]
            kept = [v for v in values if _json_key(v) not in banned]
            if not kept:
                return False
            rest.pop("const", None)
            return {**rest, "enum": kept}
        self._unsupported(npath, "unsupported form of 'not' (supported: {}, false, a type, or an enum "
                                 "beside an enum)", "not")
        return rest

    # -- composition -------------------------------------------------------------------------
    def _flatten(self, schema: Any, path: str, stack: tuple) -> list[tuple[dict, str]]:
        """The conjunction ``schema`` stands for: $ref and allOf expanded, as (member, path)."""
        if schema is True:
            return []
        if schema is False:
            raise self._unsat(path, "schema false inside allOf: no value is valid")
        if not isinstance(schema, dict):
            raise self._error(path, f"expected a schema object, got {type(schema).__name__}")
        self._check_keywords(schema, path)
        schema = self._normalize(schema, path)
        if "not" in schema:
            schema = self._resolve_not(schema, path)
            if schema is False:
                raise self._unsat(f"{path}/not", "'not' excludes every value here")
        out: list[tuple[dict, str]] = []
        if "$ref" in schema:
            ref = schema["$ref"]
            key = (self._doc_key, ref)
            if key in stack:
                raise self._error(f"{path}/$ref", f"$ref {ref!r} is merged into itself (allOf through a "
                                                  "recursive $ref); no finite schema")
            out += self._flatten(self._resolve_pointer(ref, f"{path}/$ref"), ref, stack + (key,))
        rest = {k: v for k, v in schema.items() if k not in ("$ref", "allOf")}
        if rest:
            out.append((rest, path))
        for i, member in enumerate(schema.get("allOf", ())):
            out += self._flatten(member, f"{path}/allOf/{i}", stack)
        return out

    def _merge(self, members: list[tuple[dict, str]], path: str) -> tuple[dict, list[tuple[str, list, str]]]:
        """allOf of flattened members: one schema, plus the anyOf/oneOf groups still to expand."""
        out: dict[str, Any] = {}
        groups: list[tuple[str, list, str]] = []
        closed: list[set[str]] = []
        open_schemas: list[tuple[Any, set[str], str]] = []
        open_true = False
        for member, mpath in members:
            if "nullable" in member and member.get("type") is not None:
                types = self._types(member, mpath)
                member = {**member, "type": types}
            member = {k: v for k, v in member.items() if k != "nullable"}
            if "const" in member:
                consts = [member["const"]]
                member = {k: v for k, v in member.items() if k != "const"}
                member["enum"] = consts if "enum" not in member else [
                    v for v in member["enum"] if _json_key(v) == _json_key(consts[0])]
            for key, value in member.items():
                if key in ANNOTATION_KEYWORDS:
                    continue
                if key in ("anyOf", "oneOf"):
                    if not isinstance(value, list) or not value:
                        raise self._error(f"{mpath}/{key}", f"expected a non-empty list of schemas, got {value!r}")
                    groups.append((key, value, f"{mpath}/{key}"))
                    continue
                if key == "additionalProperties":
                    props = set(member.get("properties", {}))
                    value = value if _trivial(value) is None else _trivial(value)
                    if value is False:
                        closed.append(props)
                    elif value is True:
                        open_true = True
                    else:
                        open_schemas.append((value, props, mpath))
                    continue
                if key not in out:
                    out[key] = value
                    continue
                out[key] = self._combine(key, out[key], value, mpath)
        if closed:
            allowed = set.intersection(*closed)
            props = out.get("properties", {})
            out["properties"] = {k: v for k, v in props.items() if k in allowed}
            for k in out.get("required", ()):
                if k not in allowed:
                    raise self._unsat(path, f"allOf requires {k!r}, which additionalProperties: false forbids")
            out["additionalProperties"] = False
        elif open_schemas:
            value, props, mpath = open_schemas[0]
            if len(open_schemas) > 1 or not set(out.get("properties", {})) <= props:
                raise self._error(mpath, "allOf with additionalProperties as a schema cannot be merged "
                                         "with properties declared elsewhere")
            out["additionalProperties"] = value
        elif open_true:
            out["additionalProperties"] = True
        return out, groups

    def _combine(self, key: str, a: Any, b: Any, path: str) -> Any:
        """One keyword of two allOf members, combined so the result means both."""
        if key == "type":
            ta = _type_set([a] if isinstance(a, str) else a)
            tb = _type_set([b] if isinstance(b, str) else b)
            both = ta & tb
            if "number" in both:
                both.discard("integer")
            if not both:
                raise self._unsat(path, f"allOf: types {a!r} and {b!r} have no value in common")
            return [t for t in TYPES if t in both]
        if key == "enum":
            keys = {_json_key(v) for v in b}
            return [v for v in a if _json_key(v) in keys]
        if key == "properties":
            merged = dict(a)
            for k, v in b.items():
                merged[k] = {"allOf": [merged[k], v]} if k in merged else v
            return merged
        if key == "required":
            return list(dict.fromkeys([*a, *b]))
        if key == "items":
            return {"allOf": [a, b]}
        if key in ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"):
            return max(a, b)
        if key in ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"):
            return min(a, b)
        if key == "uniqueItems":
            return bool(a or b)
        if key == "multipleOf":
            if a == b:
                return a
            if all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (a, b)):
                return a * b // math.gcd(a, b)  # a multiple of both is a multiple of their lcm
            raise self._error(path, f"allOf: multipleOf {a!r} and {b!r} cannot be combined in one grammar "
                                    "(only integers combine, by their least common multiple)")
        if a == b:
            return a
        # pattern, format, prefixItems, patternProperties, propertyNames, ...: never keep one of
        # two different values silently (that would widen the grammar)
        raise self._error(path, f"allOf: two different {key!r} values cannot be combined in one grammar")

    def _composition_rule(self, schema: dict, name: str, path: str) -> str:
        """A composition compiled once per document: met again (recursion through ``anyOf``,
        ``oneOf`` or a ``$ref`` with siblings, at any depth), it is a reference to its own rule,
        so every recursive schema becomes recursive rules, never a recursion of this compiler.
        Rules that can never finish or recurse without input are then caught by :meth:`format`."""
        try:
            key = (self._doc_key, json.dumps(schema, sort_keys=True))
        except (TypeError, ValueError):  # pragma: no cover - schemas are JSON
            return self._visit_composition(schema, name, path)
        if key in self._composed:
            return self._composed[key]
        return self._compile_once(self._composed, key, name, path,
                                  lambda rule: self._visit_composition(schema, rule, path))

    def _visit_composition(self, schema: dict, name: str, path: str) -> str:
        base, groups = self._merge(self._flatten(schema, path, ()), path)
        if not groups:
            return self.visit(base, name, path)
        if len(groups) == 1 and not base:  # a plain union: each branch on its own (a $ref stays a rule)
            kind, members, gpath = groups[0]
            if kind == "oneOf" and len(members) > 1 and not self._pairwise_disjoint(
                    [(m, f"{gpath}/{i}") for i, m in enumerate(members)]):
                self._unenforced(gpath, "oneOf")
            names = self._live_branches([(m, f"{name}-{i}", f"{gpath}/{i}") for i, m in enumerate(members)])
            return self._rule(name, " | ".join(dict.fromkeys(names)), path)
        combos = list(itertools.product(*(range(len(alts)) for _, alts, _ in groups)))
        if len(combos) > MAX_UNION_ALTERNATIVES:
            raise self._error(path, f"anyOf/oneOf expand to {len(combos)} alternatives; at most "
                                    f"{MAX_UNION_ALTERNATIVES} are supported")
        exclusive = any(kind == "oneOf" for kind, _, _ in groups)
        alternatives = []
        for combo in combos:
            members = [base] + [groups[g][1][i] for g, i in enumerate(combo)]
            first = groups[0]
            alt_path = f"{first[2]}/{combo[0]}"
            alternatives.append(({"allOf": members}, alt_path))
        if exclusive and len(alternatives) > 1 and not self._pairwise_disjoint(alternatives):
            self._unenforced(groups[0][2] if groups[0][0] == "oneOf" else path, "oneOf")
        names = self._live_branches([(alt, f"{name}-{i}", alt_path) for i, (alt, alt_path) in enumerate(alternatives)])
        return self._rule(name, " | ".join(dict.fromkeys(names)), path)

    def _live_branches(self, branches: list[tuple[Any, str, str]]) -> list[str]:
        """The rules of a union's branches ``(schema, rule name, path)``; a branch no value can
        satisfy is left out with a warning, as an invalid enum value is (``{"type": "string",
        "anyOf": [{"const": "x"}, {"const": 3}]}`` is the strings "x"; a helper's variant of the
        grammar cases). Raises the first branch's :class:`Unsatisfiable` when none is left."""
        names, dead = [], []
        for schema, rule, bpath in branches:
            try:
                names.append(self.visit(schema, rule, bpath))
            except Unsatisfiable as exc:
                dead.append((bpath, exc))
        if not names:
            raise dead[0][1]
        for bpath, exc in dead:
            self._warn(bpath, f"branch can never be valid ({exc.message}); left out")
        return names

    # -- oneOf exclusivity -------------------------------------------------------------------
    def _merged(self, schema: Any, path: str) -> dict | None:
        """``schema`` as one merged dict, or None when it is a union (not analysed)."""
        if schema is True:
            return {}
        self._quiet += 1
        try:
            base, groups = self._merge(self._flatten(schema, path, ()), path)
        except SchemaError:
            return None
        finally:
            self._quiet -= 1
        return None if groups else base

    def _valid(self, value: Any, schema: Any) -> bool:
        if self._validator is None:
            import jsonschema

            self._validator = jsonschema.Draft202012Validator(
                self._doc, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        try:
            return self._validator.evolve(schema=schema).is_valid(value)
        except Exception:  # an unresolvable or odd schema: cannot prove anything
            return True

    def _pairwise_disjoint(self, alternatives: list[tuple[Any, str]]) -> bool:
        merged = [self._merged(alt, p) for alt, p in alternatives]
        if any(m is None for m in merged):
            return False
        return all(self._disjoint(a, b, 0) for a, b in itertools.combinations(merged, 2))

    def _disjoint(self, a: dict, b: dict, depth: int) -> bool:
        """True when no value is valid under both (a sufficient check, never a guess)."""
        if depth > 8:
            return False
        ta = _type_set([a["type"]] if isinstance(a.get("type"), str) else a["type"]) if a.get("type") else None
        tb = _type_set([b["type"]] if isinstance(b.get("type"), str) else b["type"]) if b.get("type") else None
        if ta is not None and tb is not None and not ta & tb:
            return True
        ea, eb = a.get("enum"), b.get("enum")
        if ea is not None and eb is not None:
            return not {_json_key(v) for v in ea} & {_json_key(v) for v in eb}
        if ea is not None:
            return not any(self._valid(v, b) for v in ea)
        if eb is not None:
            return not any(self._valid(v, a) for v in eb)
        objects_only = (ta is not None and ta <= {"object"}) or (tb is not None and tb <= {"object"})
        if objects_only:
            for k in set(a.get("required", ())) & set(b.get("required", ())):
                pa = a.get("properties", {}).get(k, True)
                pb = b.get("properties", {}).get(k, True)
                ma, mb = self._merged(pa, ""), self._merged(pb, "")
                if ma is not None and mb is not None and self._disjoint(ma, mb, depth + 1):
                    return True
            for x, y in ((a, b), (b, a)):
                if y.get("additionalProperties") is False:
                    if set(x.get("required", ())) - set(y.get("properties", {})):
                        return True
        return False

    # -- const / enum ------------------------------------------------------------------------
    def _visit_enum(self, schema: dict, name: str, path: str) -> str:
        if "const" in schema:
            values = [schema["const"]]
            if "enum" in schema:
                values = [v for v in schema["enum"] if _json_key(v) == _json_key(values[0])]
        else:
            values = schema["enum"]
            if not isinstance(values, list) or not values:
                raise self._error(f"{path}/enum", f"expected a non-empty list, got {values!r}")
        rest = {k: v for k, v in schema.items() if k not in ("enum", "const", "nullable")}
        if schema.get("nullable") is True and rest.get("type"):
            rest["type"] = self._types(schema, path)
        checked = {k: v for k, v in rest.items() if k not in ANNOTATION_KEYWORDS}
        kept_by_key = {}
        for v in values:
            key = _json_key(v)
            if key not in kept_by_key and (not checked or self._valid(v, checked)):
                kept_by_key[key] = v
        kept = list(kept_by_key.values())
        # one key per value, once: a set rebuilt for every value made an enum of 10,000 values take
        # four minutes (round nineteen's bad inputs, 2026-12-07)
        dropped = [v for v in values if _json_key(v) not in kept_by_key]
        if dropped:  # a value listed twice is kept once, and no warning ("values [] are invalid ...")
            self._warn(f"{path}/enum", f"values {dropped!r} are invalid under the rest of the schema; left out")
        if not kept:
            bfcl_style = (rest.get("type") == "array" and "enum" in schema
                          and not any(isinstance(v, list) for v in values))
            if bfcl_style and self.lenient:
                self._warn(f"{path}/enum", "enum of non-arrays on an array schema (no value is valid); "
                                           "applied to the items instead (lenient)")
                items = rest.get("items", True)
                repaired = {**rest, "items": {"enum": values} if items is True else {"allOf": [items, {"enum": values}]}}
                return self.visit(repaired, name, path)
            hint = " (lenient mode applies it to the array's items)" if bfcl_style else ""
            raise self._unsat(f"{path}/enum", f"no enum/const value is valid under the rest of the schema{hint}")
        scalars = [v for v in kept if not isinstance(v, (dict, list))]
        structured = [v for v in kept if isinstance(v, (dict, list))]
        spellings = [spelt for v in scalars for spelt in _scalar_spellings(v)]
        if not structured:
            return self._rule(name, f"{_trie(spellings)} space", path)
        # an object or array value is spelt as the object and array rules spell one (any key order,
        # a space between tokens), not only its compact form: {"mode": "fast"} was refused for a
        # const {"mode":"fast"} (round eighteen's grammar variants, 2026-12-07)
        where = f"{path}/{'const' if 'const' in schema else 'enum'}"
        alternatives = [self.visit(_literal_schema(v), f"{name}-{i}", where) for i, v in enumerate(structured)]
        if scalars:
            scalar_rule = self._rule(f"{name}-scalar", f"{_trie(spellings)} space", path)
            alternatives.insert(0, scalar_rule)
        return self._rule(name, " | ".join(alternatives), path)

    # -- objects -----------------------------------------------------------------------------
    def _build_object_rule(self, schema: dict, name: str, path: str) -> str:
        props = schema.get("properties", {})
        if not isinstance(props, dict):
            raise self._error(f"{path}/properties", f"expected an object of schemas, got {props!r}")
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise self._error(f"{path}/required", f"expected a list of property names, got {required!r}")
        additional = schema.get("additionalProperties")
        trivial = _trivial(additional) if additional is not None else None
        if trivial is not None:
            additional = trivial  # {} means true, {"not": {}} means false (what MCP SDKs emit)
        patterns = schema.get("patternProperties")
        names_schema = schema.get("propertyNames")
        if additional is None and "properties" not in schema and patterns is None:
            additional = True  # a free-form dict ({"type": "dict"} in BFCL): any keys, any values
        declared = list(props)
        for key in required:
            if key not in props:
                if additional is False and not self._pattern_matches(patterns, key):
                    raise self._unsat(f"{path}/required", f"required property {key!r} is forbidden by "
                                                          "additionalProperties: false")
                declared.append(key)
        if len(declared) > MAX_OBJECT_PROPERTIES:
            raise self._error(f"{path}/properties", f"{len(declared)} properties; at most "
                                                    f"{MAX_OBJECT_PROPERTIES} per object are supported")
        items: list[tuple[str, bool]] = []  # (kv rule, required)
        for key in declared:
            sub = props.get(key, self._undeclared_schema(key, patterns, additional))
            for pattern, psub in (patterns or {}).items():
                if key in props and _search(pattern, key):
                    sub = {"allOf": [sub, psub]}  # a declared key that a pattern matches obeys both
            if names_schema is not None and not self._valid(key, names_schema):
                sub = False  # propertyNames forbids this key
            ppath = path + pointer(("properties", key))[1:]
            if _trivial(sub) is False:
                if key in required:
                    raise self._unsat(ppath, "required property has schema false: no value is valid")
                continue
            try:
                value = self.visit(sub, f"{name}-{key}", ppath)
            except Unsatisfiable as exc:
                if key in required:
                    raise
                self._warn(ppath, f"optional property can never be valid ({exc.message}); left out")
                continue
            kv = self._rule(f"{name}-{key}-kv", f'{json_literal(key)} space ":" space {value}', ppath)
            items.append((kv, key in required))
        extra = self._extra_properties(schema, name, path, declared, additional, patterns, names_schema)
        n_required = sum(1 for _, req in items if req)
        min_p, max_p = int(schema.get("minProperties", 0)), schema.get("maxProperties")
        max_p = None if max_p is None else int(max_p)  # 3.0 is a JSON Schema integer; GBNF counts want 3
        self._check_count(f"{path}/minProperties", min_p)
        self._check_count(f"{path}/maxProperties", max_p)
        if max_p is not None and max_p < max(n_required, min_p):
            raise self._unsat(path, f"maxProperties {max_p} is below the keys the object must have")
        if not extra and min_p > len(items):
            raise self._unsat(path, f"minProperties {min_p} exceeds the {len(items)} keys that may appear")
        if len(items) <= ANY_ORDER_MAX_KEYS:  # the key-set rules count keys exactly, extra keys too
            body = self._keys_any_order(items, extra, name, path, min_p, max_p)
            return self._rule(name, _seq('"{" space', body, '"}" space'), path)
        # schema order: the key count matters only where a bound can bite (a map of
        # additionalProperties under maxProperties, a minProperties above the required keys)
        bounded = (max_p is not None and (extra or len(items) > max_p)) or min_p > max(n_required, 1)
        body = self._keys_in_order_counted(items, extra, name, path, min_p, max_p) if bounded else None
        if body is None and bounded:  # more count states than MAX_COUNTED_STATES: refused as before
            why = (f"counting keys beside {len(items)} declared ones would take more than "
                   f"{MAX_COUNTED_STATES} rules")
            if min_p > max(n_required, 1):
                self._unsupported(f"{path}/minProperties", f"minProperties {min_p} beyond the required keys: {why}",
                                  "minProperties")
            if max_p is not None and (extra or len(items) > max_p):
                self._unsupported(f"{path}/maxProperties", f"maxProperties {max_p} below the keys that may appear: "
                                                           f"{why}", "maxProperties")
        if body is None:
            body = self._keys_in_order(items, extra, name, path, nonempty=min_p >= 1)
        return self._rule(name, _seq('"{" space', body, '"}" space'), path)

    def _pattern_matches(self, patterns: Any, key: str) -> bool:
        return any(_search(p, key) for p in (patterns or {}))

    def _undeclared_schema(self, key: str, patterns: Any, additional: Any) -> Any:
        """The schema a required-but-undeclared key's value must meet (its pattern's, or additional)."""
        for pattern, psub in (patterns or {}).items():
            if _search(pattern, key):
                return psub
        return additional if isinstance(additional, dict) else True

    def _extra_properties(self, schema: dict, name: str, path: str, declared: list[str], additional: Any,
                          patterns: Any, names_schema: Any) -> str:
        """The rule for one key-value pair beyond the declared keys, or ``""`` when none may appear.

        Extra keys never spell a declared key (so no declared key can repeat under another
        schema). ``patternProperties``: one pattern, whose key language must not contain a
        declared key; keys outside the pattern are then left out (narrower, with a warning)
        unless ``additionalProperties`` is false. ``propertyNames``: a string schema for the
        extra keys; the declared keys must lie outside its language (checked with jsonschema on
        the declared names only when it is an enum, else refused beside declared keys).
        """
        if patterns is not None:
            ppath = f"{path}/patternProperties"
            if not isinstance(patterns, dict):
                raise self._error(ppath, f"expected an object of schemas, got {patterns!r}")
            if not patterns:
                patterns = None
        if patterns is not None:
            if len(patterns) > 1:
                self._unsupported(ppath, "patternProperties with more than one pattern", "patternProperties")
                return ""
            (pattern, psub), = patterns.items()
            if names_schema is not None:
                self._unsupported(f"{path}/propertyNames", "propertyNames together with patternProperties",
                                  "propertyNames")
                return ""
            clash = [k for k in declared if _search(pattern, k)]
            if clash:
                self._unsupported(ppath, f"pattern {pattern!r} also matches the declared key {clash[0]!r}; "
                                         "extra keys cannot be told apart from it", "patternProperties")
                return ""
            if additional is not None and additional is not False:
                self._warn(f"{path}/additionalProperties", "keys outside patternProperties are left out "
                                                           "(a grammar cannot take the complement of a pattern)")
            if _trivial(psub) is False:
                return ""
            key_rule = self._visit_pattern(pattern, f"{name}-pattern-key", f"{ppath}/{pointer((pattern,))[2:]}",
                                           0, None)
            value = self.visit(psub, f"{name}-pattern-value", f"{ppath}/{pointer((pattern,))[2:]}")
            return self._rule(f"{name}-pattern-kv", f'{key_rule} ":" space {value}', ppath)
        if additional is None or additional is False:
            return ""
        apath = f"{path}/additionalProperties"
        value = self.visit(additional, f"{name}-additional", apath)
        if names_schema is not None and _trivial(names_schema) is not True:
            npath = f"{path}/propertyNames"
            if _trivial(names_schema) is False:
                return ""
            key_schema = names_schema
            if isinstance(names_schema, dict):
                words = names_schema.get("enum", [names_schema["const"]] if "const" in names_schema else None)
                if isinstance(words, list):
                    key_schema = {**names_schema, "enum": [w for w in words if w not in declared]}
                    key_schema.pop("const", None)
                    if not key_schema["enum"]:
                        return ""
                elif declared:
                    self._unsupported(npath, "propertyNames (other than an enum) beside declared properties",
                                      "propertyNames")
                    return ""
            key_schema = {"type": "string", **key_schema} if isinstance(key_schema, dict) else key_schema
            key_rule = self.visit(key_schema, f"{name}-key", npath)
        else:
            key_rule = self._rule(f"{name}-additional-key", _not_strings([json_text(k) for k in declared]), apath)
        return self._rule(f"{name}-additional-kv", f'{key_rule} ":" space {value}', apath)

    def _keys_in_order(self, items: list[tuple[str, bool]], extra: str, name: str, path: str, *,
                       nonempty: bool) -> str:
        """Keys in schema order, each optional one present or not, in size linear in the keys.

        One rule per position, ``<name>-after-<i>``: what may follow once something was written
        and keys before ``i`` were decided; so ``{"b":1}`` is valid when ``a`` and ``b`` are
        optional, ``{,"b":1}`` never. The idea of llama.cpp's ``json-schema-to-grammar``
        (a chain of optional-key rules per position) instead of spelling every suffix out,
        which grew quadratically.
        """
        n = len(items)
        rest = f'("," space {extra})*' if extra else ""
        after: dict[int, str] = {}

        def tail(i: int) -> str:
            """What may follow once something was written and keys before i are decided."""
            if i == n:
                return rest
            if i not in after:
                kv, req = items[i]
                step = f'"," space {kv}'
                head = step if req else f"({step})?"
                after[i] = self._rule(f"{name}-after-{i}", _seq(head, tail(i + 1)) or '""', path)
            return after[i]

        for i in range(n - 1, 0, -1):  # build from the end: no deep recursion for long chains
            tail(i)
        alts = []
        for i, (kv, req) in enumerate(items):
            alts.append(_seq(kv, tail(i + 1)))
            if req:
                break
        else:
            if extra:
                alts.append(f"{extra} {rest}")
            if not nonempty:
                alts.append("")
        return _alternatives(alts)

    def _keys_any_order(self, items: list[tuple[str, bool]], extra: str, name: str, path: str,
                        min_keys: int, max_keys: int | None) -> str:
        """Declared keys in any order, each at most once, then extra keys; exact key counts.

        One rule per set of keys already written (``<name>-has-<bits>``): at most
        ``2 ** ANY_ORDER_MAX_KEYS`` rules, so only small objects get it. The object may close when
        every required key is in the set and ``min_keys <= keys <= max_keys``, where the keys
        are the set and the extra keys after it: those are a bounded repetition of ``extra``
        (``{"m": {"a": "x", "b": "y"}}`` under ``maxProperties: 2``, a helper's variant g25).
        """
        n = len(items)
        needed = sum(1 << i for i, (_, req) in enumerate(items) if req)
        states: dict[int, str] = {}

        def rest(count: int) -> str:
            """The extra keys that may follow ``count`` keys before the object closes."""
            return self._extra_keys(extra, name, path, max(0, min_keys - count),
                                    None if max_keys is None else max_keys - count)

        def viable(written: int) -> bool:
            """Can the object still close: the missing required keys fit under max_keys."""
            count = bin(written).count("1")
            return max_keys is None or count + bin(needed & ~written).count("1") <= max_keys

        def state(written: int) -> str:
            """GBNF for what may follow once the keys in ``written`` (a bit set, non-empty) were."""
            alts = [_seq(f'"," space {kv}', ref(written | 1 << i)) for i, (kv, _) in enumerate(items)
                    if not written >> i & 1 and viable(written | 1 << i)]
            count = bin(written).count("1")
            if written & needed == needed and (extra or count >= min_keys):
                alts.append(rest(count))
            return _alternatives(alts)

        def ref(written: int) -> str:
            if written not in states:
                body = state(written)
                states[written] = self._rule(f"{name}-has-{written:x}", body, path) if body else ""
            return states[written]

        alts = [_seq(kv, ref(1 << i)) for i, (kv, _) in enumerate(items) if viable(1 << i)]
        if not needed:
            if extra and (max_keys is None or max_keys >= 1):
                alts.append(_seq(extra, rest(1)))
            if min_keys <= 0:
                alts.append("")
        if n == 0 and not extra:
            return ""
        return _alternatives(alts)

    def _extra_keys(self, extra: str, name: str, path: str, lo: int, hi: int | None) -> str:
        """``lo`` to ``hi`` more extra keys, each after a comma (``""`` when there is no ``extra``);
        unbounded and optional stays the inline ``("," space extra)*`` group."""
        if not extra:
            return ""
        if lo == 0 and hi is None:
            return f'("," space {extra})*'
        if hi == 0:
            return ""
        return repetition(self._rule(f"{name}-more", f'"," space {extra}', path), lo, hi)

    def _keys_in_order_counted(self, items: list[tuple[str, bool]], extra: str, name: str, path: str,
                               min_keys: int, max_keys: int | None) -> str | None:
        """Keys in schema order like :meth:`_keys_in_order`, counting them: the object closes
        with ``min_keys <= keys <= max_keys``, extra keys (a bounded repetition after the declared
        ones) included. One rule per position and count (``<name>-after-<i>-<count>``); None when
        that would take more than :data:`MAX_COUNTED_STATES` rules (the caller refuses then)."""
        n = len(items)
        top = max_keys if max_keys is not None else min_keys  # counts past min_keys are all alike
        if n * (top + 1) > MAX_COUNTED_STATES:
            return None
        dead = None

        def capped(count: int) -> int:
            return count if max_keys is not None else min(count, min_keys)

        def rest(count: int) -> str | None:
            """What may close the object after the declared keys, ``count`` keys written."""
            if extra:
                return self._extra_keys(extra, name, path, max(0, min_keys - count),
                                        None if max_keys is None else max_keys - count)
            return "" if count >= min_keys else dead

        after: dict[tuple[int, int], str | None] = {}
        for i in range(n, 0, -1):  # from the end: no deep recursion for long chains
            for count in range(1, top + 1):
                if i == n:
                    after[(i, count)] = rest(count)
                    continue
                kv, req = items[i]
                alts = []
                if max_keys is None or count < max_keys:
                    take = after.get((i + 1, capped(count + 1)))
                    if take is not None:
                        alts.append(_seq(f'"," space {kv}', take))
                if not req:
                    skip = after.get((i + 1, count))
                    if skip is not None:
                        alts.append(skip)
                if not alts:
                    after[(i, count)] = dead
                    continue
                body = _alternatives(alts)
                after[(i, count)] = self._rule(f"{name}-after-{i}-{count}", body, path) if body else ""
        alts = []
        for i, (kv, req) in enumerate(items):
            follow = after.get((i + 1, capped(1))) if top >= 1 else None
            if follow is not None:
                alts.append(_seq(kv, follow))
            if req:
                break
        else:
            if extra and (max_keys is None or max_keys >= 1):
                alts.append(_seq(extra, rest(1) or ""))
            if min_keys <= 0:
                alts.append("")
        if not alts:
            raise self._unsat(path, "no number of keys meets minProperties and maxProperties")
        return _alternatives(alts)

    # -- arrays ------------------------------------------------------------------------------
    def _build_array_rule(self, schema: dict, name: str, path: str) -> str:
        prefix = schema.get("prefixItems", [])
        items = schema.get("items", True)
        if _trivial(items) is not None:
            items = _trivial(items)  # {"not": {}}: no more items, {}: any
        lo = int(schema.get("minItems", 0))
        hi = schema.get("maxItems")
        hi = None if hi is None else int(hi)
        self._check_count(f"{path}/minItems", lo)
        self._check_count(f"{path}/maxItems", hi)
        if schema.get("uniqueItems") is True and (hi is None or hi > 1):
            values = None if prefix or items is False else self._listed_values(items, f"{path}/items")
            if values is not None and len(values) <= MAX_UNIQUE_VALUES:
                return self._unique_items(values, lo, hi, name, path)
            self._unenforced(f"{path}/uniqueItems", "uniqueItems")
        if hi is None and items is not False and self.style.array_items is not None:
            hi = max(lo, len(prefix), self.style.array_items)
        if items is False:
            hi = len(prefix) if hi is None else min(hi, len(prefix))
        if hi is not None and lo > hi:
            raise self._unsat(path, f"minItems {lo} > maxItems {hi}: no array is valid")
        elements = [self.visit(s, f"{name}-tuple-{i}", f"{path}/prefixItems/{i}") for i, s in enumerate(prefix)]
        if hi is not None:
            elements = elements[:hi]
        if len(elements) < len(prefix) and lo > len(elements):
            raise self._unsat(path, "minItems exceeds the items allowed")
        item = None
        if items is not False and (hi is None or hi > len(elements)):
            item = self.visit(items, f"{name}-item", f"{path}/items")

        def after(i: int) -> str:
            """What may follow once i elements were written (i >= 1)."""
            if hi is not None and i >= hi:
                return ""
            if i < len(elements):
                step = f'"," space {elements[i]} {after(i + 1)}'.strip()
                if i >= lo:
                    return f"({step})?" if " " in step else f"{step}?"
                return step
            if item is None:
                return ""
            more_lo = max(0, lo - i)
            more_hi = None if hi is None else hi - i
            sep = self._rule(f"{name}-more", f'"," space {item}', path)
            return repetition(sep, more_lo, more_hi)

        first = elements[0] if elements else item
        if first is None or hi == 0:
            content = ""
        else:
            seq = f"{first} {after(1)}".strip()
            content = (f"({seq})?" if " " in seq else f"{seq}?") if lo == 0 else seq
        return self._rule(name, _seq('"[" space', content, '"]" space'), path)

    def _listed_values(self, items: Any, path: str) -> list | None:
        """The values ``items`` allows when they are a short list (``enum``, ``const``, a boolean
        or null type), each checked by ``jsonschema`` against the whole items schema; else None."""
        merged = self._merged(items, path)
        if merged is None:
            return None
        if "const" in merged:
            candidates = [merged["const"]]
        elif isinstance(merged.get("enum"), list):
            candidates = merged["enum"]
        elif merged.get("type") in ("boolean", ["boolean"]):
            candidates = [True, False]
        elif merged.get("type") in ("null", ["null"]):
            candidates = [None]
        else:
            return None
        if len(candidates) > 4 * MAX_UNIQUE_VALUES:
            return None
        return list({_json_key(v): v for v in candidates if self._valid(v, items)}.values())

    def _unique_items(self, values: list, lo: int, hi: int | None, name: str, path: str) -> str:
        """An array of distinct ``values`` (``uniqueItems``), ``lo`` to ``hi`` of them: one rule per
        set of values already written, offering only the others (exact; as the any-order keys of
        :meth:`_keys_any_order`). Raises ``Unsatisfiable`` when fewer values exist than ``minItems``."""
        n = len(values)
        top = n if hi is None else min(hi, n)
        if lo > top:
            raise self._unsat(path, f"minItems {lo} but only {n} distinct values are allowed (uniqueItems)")
        literals = [f"{json_literal(v)} space" for v in values]

        def after(written: int) -> str:
            count = bin(written).count("1")
            alts = ['"]" space'] if count >= lo else []
            if count < top:
                alts += [f'"," space {literals[i]} {after_rule(written | 1 << i)}'
                         for i in range(n) if not written >> i & 1]
            return " | ".join(alts)

        def after_rule(written: int) -> str:
            return self._rule(f"{name}-unique-{written:x}", after(written), path)

        first = [f"{literals[i]} {after_rule(1 << i)}" for i in range(n)] if top else []
        body = " | ".join((['"]" space'] if lo == 0 else []) + first)
        return self._rule(name, f'"[" space ({body})', path)

    # -- strings -----------------------------------------------------------------------------
    def _length_bounds(self, schema: dict, path: str) -> tuple[int, int | None]:
        lo = schema.get("minLength", 0)
        hi = schema.get("maxLength")
        for key, v in (("minLength", lo), ("maxLength", hi)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise self._error(f"{path}/{key}", f"expected an integer >= 0, got {v!r}")
            self._check_count(f"{path}/{key}", v)
        if hi is not None and lo > hi:
            raise self._unsat(path, f"minLength {lo} > maxLength {hi}: no string is valid")
        return lo, hi

    def _check_count(self, where: str, count: int | None) -> None:
        """Refuse a count above :data:`~eris_lab.grammar.builtins.MAX_COUNT` (``SchemaError``)."""
        if count is not None and count > MAX_COUNT:
            raise self._error(where, f"{count} is above {MAX_COUNT:,}, the largest count the compiler spells out "
                                     "(no small model writes that much in one call): lower it or leave it out")

    def _implied(self, path: str, have: tuple[int, int | None], lo: int, hi: int | None, what: str) -> None:
        """Length bounds beside a pattern/format: fine when every match already satisfies them."""
        if _implies(have, lo, hi):
            return
        self._unsupported(path, f"minLength/maxLength together with {what} that does not imply them",
                          "maxLength" if hi is not None else "minLength")

    def _build_string_rule(self, schema: dict, name: str, path: str) -> str:
        lo, hi = self._length_bounds(schema, path)
        fmt = schema.get("format")
        pattern = schema.get("pattern")
        if pattern is not None:
            if fmt is not None:
                self._unsupported(f"{path}/format", "format together with pattern", "format")
            return self._visit_pattern(pattern, name, f"{path}/pattern", lo, hi)
        if fmt in STRING_FORMAT_RULES and fmt in FORMAT_LENGTHS and not (
                fmt in VARIABLE_LENGTH_FORMATS and not _implies(FORMAT_LENGTHS[fmt], lo, hi)):
            if lo or hi is not None:
                self._implied(path, FORMAT_LENGTHS[fmt], lo, hi, f"format {fmt!r}")
            inner = self.primitive(fmt)
            return self._rule(f"{fmt}-string", f'"\\"" {inner} "\\"" space', path)
        if fmt is not None:
            self._unenforced(f"{path}/format", f"format:{fmt}")
        if hi is None and self.style.string_chars is not None:
            hi = max(lo, self.style.string_chars)
        if lo == 0 and hi is None:
            return self.primitive("string")
        char = self.primitive("char")
        # named by its bounds, not its path: every string of the same bounds shares one rule, so
        # llama.cpp expands char{0,200} once per grammar, not once per property
        return self._rule(f"string-{lo}-{'inf' if hi is None else hi}",
                          f'"\\"" {repetition(char, lo, hi)} "\\"" space', path)

    def _visit_pattern(self, pattern: Any, name: str, path: str, lo: int, hi: int | None) -> str:
        if not isinstance(pattern, str):
            raise self._error(path, f"expected a regex string, got {pattern!r}")
        try:
            tree = _pattern.parse(pattern)
        except PatternError as exc:
            raise self._error(path, f"{exc.message} at index {exc.index} of pattern {pattern!r}") from None
        counter = itertools.count(1)

        def make(expr: str) -> str:
            return self._rule(f"{name}-{next(counter)}", expr, path)

        def gen(node: _pattern.Node) -> tuple[str, bool]:
            """(GBNF, is_atom) for the JSON spelling of what ``node`` matches."""
            if node.kind == "set":
                if not node.ranges:
                    raise self._error(path, f"an empty class never matches in pattern {pattern!r}")
                alts = _json_char_alternatives(node.ranges)
                return (alts[0], True) if len(alts) == 1 else (f"({' | '.join(alts)})", False)
            if node.kind in ("bol", "eol"):
                raise self._error(path, f"anchors are supported only at the ends of the pattern; got {pattern!r}")
            if node.kind == "seq":
                parts: list[tuple[str, bool]] = []
                run = ""
                for child in node.children:
                    fixed = _fixed_char(child)
                    if fixed is not None:
                        run += fixed
                        continue
                    if run:
                        parts.append((literal(run), True))
                        run = ""
                    parts.append(gen(child))
                if run:
                    parts.append((literal(run), True))
                parts = [p for p in parts if p[0]]
                text = " ".join(p for p, _ in parts)
                return text, len(parts) == 1 and parts[0][1]
            if node.kind == "alt":
                alts = [gen(c)[0] for c in node.children]
                if len(alts) == 1:
                    return gen(node.children[0])
                return f"({' | '.join(a or chr(34) * 2 for a in alts)})", False
            inner, atom = gen(node.children[0])
            if (node.lo, node.hi) == (1, 1):
                return inner, atom
            if not inner:
                return "", False
            if not atom:
                inner = make(inner)
            return repetition(inner, node.lo, node.hi), False

        branches = []
        for seq in tree.children:
            items = list(seq.children)
            anchored_start = bool(items) and items[0].kind == "bol"
            anchored_end = bool(items) and items[-1].kind == "eol" and (len(items) > 1 or not anchored_start)
            if anchored_start:
                items = items[1:]
            if anchored_end:
                items = items[:-1]
            core = _pattern.Node("seq", children=tuple(items))
            length = _pattern.min_max_length(core)
            if not (anchored_start and anchored_end):
                length = (length[0], None)
            if (lo or hi is not None) and not (length[0] >= lo and (hi is None or (length[1] is not None
                                                                                  and length[1] <= hi))):
                clamped = _clamp_length(core, lo, hi) if anchored_start and anchored_end else None
                if clamped is None:
                    self._implied(path, length, lo, hi, f"pattern {pattern!r}")
                else:
                    core = clamped
            text = gen(core)[0]
            any_char = self.primitive("char")
            parts = ([f"{any_char}*"] if not anchored_start else []) + ([text] if text else [])
            if not anchored_end and (anchored_start or text):
                parts.append(f"{any_char}*")
            branches.append(" ".join(parts) if parts else '""')
        body = branches[0] if len(branches) == 1 else f"({' | '.join(branches)})"
        return self._rule(name, f'"\\"" {body} "\\"" space', path)

    # -- numbers -----------------------------------------------------------------------------
    def _build_integer_rule(self, schema: dict, name: str, path: str) -> str:
        lo: int | None = None
        hi: int | None = None
        for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            v = schema.get(key)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite_number(v):
                raise self._error(f"{path}/{key}", f"expected a number, got {v!r}")
            if key == "minimum":
                b = math.ceil(v)
                lo = b if lo is None else max(lo, b)
            elif key == "exclusiveMinimum":
                b = math.floor(v) + 1
                lo = b if lo is None else max(lo, b)
            elif key == "maximum":
                b = math.floor(v)
                hi = b if hi is None else min(hi, b)
            else:
                b = math.ceil(v) - 1
                hi = b if hi is None else min(hi, b)
        if lo is not None and hi is not None and lo > hi:
            raise self._unsat(path, f"no integer lies between the bounds ({lo} > {hi})")
        # a bound of more than 19 digits (beyond int64) leaves that side open, as for numbers
        # ("maximum": 10**400 spelt 400 digit counts out; a helper's bad schema, 2026-12-05)
        cap = 10 ** MAX_INT_DIGITS
        hi = None if hi is not None and hi >= cap else hi
        lo = None if lo is not None and lo <= -cap else lo
        if lo is None and hi is None:
            return self.primitive("integer")
        return self._rule(name, f"({integer_range(lo, hi, self.style.int_digits)}) space", path)

    def _build_number_rule(self, schema: dict, name: str, path: str) -> str:
        """A number within ``minimum`` / ``maximum`` / ``exclusive*``, enforced exactly.

        Bounded numbers are written without an exponent (``0.00001``, never ``1e-05``) and with
        at most ``style.int_digits`` integral digits on an open side (19 by default) and
        ``style.fraction_digits`` fractional ones (24), more only where a bound needs them:
        narrower, never wider. Bounds beyond 19 digits are open on that side (nothing the
        grammar writes reaches them).
        """
        lo: tuple[Decimal, bool] | None = None  # (bound, exclusive)
        hi: tuple[Decimal, bool] | None = None
        for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            v = schema.get(key)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite_number(v):
                raise self._error(f"{path}/{key}", f"expected a number, got {v!r}")
            d = _decimal(v)
            strict = key.startswith("exclusive")
            if "inimum" in key and (lo is None or d > lo[0] or (d == lo[0] and strict)):
                lo = (d, strict)
            if "aximum" in key and (hi is None or d < hi[0] or (d == hi[0] and strict)):
                hi = (d, strict)
        cap = Decimal(10) ** MAX_INT_DIGITS
        if lo is not None and lo[0] <= -cap:
            lo = None
        if hi is not None and hi[0] >= cap:
            hi = None
        if lo is None and hi is None:
            return self.primitive("number")
        if lo == (Decimal(0), False) and hi is None:
            return self.primitive("nonnegative-number")  # exact, and it keeps exponents
        if lo is not None and lo[0] >= cap or hi is not None and hi[0] <= -cap:
            raise self._unsat(path, "the bounds lie beyond the 19-digit numbers the grammar writes")
        if lo is not None and hi is not None and (lo[0] > hi[0] or (lo[0] == hi[0] and (lo[1] or hi[1]))):
            raise self._unsat(path, f"no number lies between the bounds ({lo[0]} and {hi[0]})")
        alts = []
        # values >= 0, spelt without a sign: magnitudes in [max(lo, 0), hi]
        if hi is None or hi[0] > 0 or (hi[0] == 0 and not hi[1]):
            low = lo if lo is not None and lo[0] >= 0 else (Decimal(0), False)
            alts += _magnitudes(low, hi, self.style.int_digits, self.style.fraction_digits)
        # values < 0, spelt "-" m: m in (max(0, -hi), -lo]
        if lo is None or lo[0] < 0:
            low = (-hi[0], hi[1]) if hi is not None and hi[0] < 0 else (Decimal(0), True)
            top = None if lo is None else (-lo[0], lo[1])
            alts += [f'"-" {_group(m)}' for m in _magnitudes(low, top, self.style.int_digits, self.style.fraction_digits)]
        if not alts:  # pragma: no cover - the checks above leave at least one value
            raise self._unsat(path, "no number lies between the bounds")
        return self._rule(name, f"({' | '.join(alts)}) space", path)

    def _visit_multiples(self, schema: dict, kind: str, name: str, path: str) -> str | None:
        """``multipleOf`` between two bounds, enforced by listing the multiples; None when a side
        is open or more than :data:`MAX_MULTIPLES` lie between (the caller lists it as not
        enforced). Each listed value is checked by ``jsonschema`` itself, so the grammar is never
        wider than the validator that judges the call: with a float step it refuses some values
        that are multiples on paper (``0.3`` for ``multipleOf: 0.1``, as jsonschema does).

        Raises
        ------
        SchemaError
            ``multipleOf`` is not a number above 0; ``Unsatisfiable`` when no multiple is valid.
        """
        step = schema["multipleOf"]
        if isinstance(step, bool) or not isinstance(step, (int, float)) or not _finite_number(step) or step <= 0:
            raise self._error(f"{path}/multipleOf", f"expected a number > 0, got {step!r}")
        bounds: dict[str, Decimal] = {}
        for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            v = schema.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and _finite_number(v):
                d = _decimal(v)
                side = "lo" if "inimum" in key else "hi"
                bounds[side] = d if side not in bounds else (max if side == "lo" else min)(bounds[side], d)
        if set(bounds) != {"lo", "hi"}:
            return None
        d_step = _decimal(step)
        first = math.ceil(bounds["lo"] / d_step)
        last = math.floor(bounds["hi"] / d_step)
        if last - first + 1 > MAX_MULTIPLES:
            return None
        checked = {k: v for k, v in schema.items() if k not in ANNOTATION_KEYWORDS and not k.startswith("x-")}
        checked["type"] = kind
        texts = []
        for k in range(first, last + 1):
            d = k * d_step
            if d == d.to_integral_value():
                text = str(int(d))
            elif kind == "integer":
                continue
            else:
                text = format(d.normalize(), "f")
            if self._valid(int(text) if kind == "integer" or "." not in text else float(text), checked):
                texts.append(text)
        if not texts:
            raise self._unsat(f"{path}/multipleOf", f"no multiple of {step!r} lies within the bounds")
        return self._rule(name, f"({' | '.join(literal(t) for t in texts)}) space", path)

    # -- output ------------------------------------------------------------------------------
    def format(self) -> str:
        """The grammar: every rule, sorted by name, after checking it can be sampled.

        Raises
        ------
        SchemaError
            A rule reachable from ``root`` derives no finite string (recursion without a base
            case), or rules reach each other without consuming input (left recursion).
        """
        missing = [k for k, v in self._rules.items() if v is None]
        if missing:  # pragma: no cover - a compiler bug
            raise SchemaError(f"internal: rules without a body: {missing}")
        rules = {k: v for k, v in self._rules.items() if v is not None}
        ast = _analysis.parse_rules(rules)
        if "root" in ast:
            bad = _analysis.unproductive(ast, "root")
            if bad:
                where = self._paths.get(bad[0], bad[0])
                raise SchemaError(
                    "recursive $ref without a base case: no finite value is valid "
                    f"(rule {bad[0]!r} can never finish)", where=where)
        cycle = _analysis.left_recursive(ast)
        if cycle:
            where = self._paths.get(cycle[0], cycle[0])
            raise SchemaError(f"a $ref cycle that consumes no input ({' -> '.join(cycle)})", where=where)
        return "".join(f"{name} ::= {rules[name]}\n" for name in sorted(rules))


def _decimal(value: int | float) -> Decimal:
    """A schema's number as written: a float by its shortest repr (``0.1`` is ``Decimal("0.1")``,
    not the binary fraction), an int exactly."""
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _implies(have: tuple[int, int | None], lo: int, hi: int | None) -> bool:
    """Whether every string of a length in ``have`` (min, max or None) is within ``lo``..``hi``."""
    a, b = have
    return a >= lo and (hi is None or (b is not None and b <= hi))


def _clamp_length(seq: _pattern.Node, lo: int, hi: int | None) -> _pattern.Node | None:
    """``seq`` with its one variable-count item narrowed so every match has lo..hi characters.

    Works when every item is one character repeated (a set, or a set under a quantifier) and at
    most one item's count varies (``[a-z][a-z0-9_]*`` with maxLength 64 becomes
    ``[a-z][a-z0-9_]{0,63}``). Returns None otherwise, or when no length fits.
    """
    counts = []
    for item in seq.children:
        if item.kind == "set":
            counts.append((1, 1))
        elif item.kind == "rep" and item.children[0].kind == "set":
            counts.append((item.lo, item.hi))
        else:
            return None
    variable = [i for i, (a, b) in enumerate(counts) if a != b]
    fixed = sum(a for i, (a, b) in enumerate(counts) if i not in variable)
    if len(variable) > 1:
        return None
    if not variable:
        return seq if lo <= fixed and (hi is None or fixed <= hi) else None
    i = variable[0]
    a, b = counts[i]
    new_lo = max(a, lo - fixed)
    new_hi = b if hi is None else (hi - fixed if b is None else min(b, hi - fixed))
    if new_hi is not None and new_lo > new_hi:
        return None
    item = seq.children[i]
    node = item.children[0] if item.kind == "rep" else item
    children = list(seq.children)
    children[i] = _pattern.Node("rep", children=(node,), lo=new_lo, hi=new_hi)
    return _pattern.Node("seq", children=tuple(children))


def _fixed_char(node: _pattern.Node) -> str | None:
    """The JSON spelling of a one-character, once-only node, if it has exactly one spelling."""
    if node.kind != "set" or len(node.ranges) != 1 or node.ranges[0][0] != node.ranges[0][1]:
        return None
    cp = node.ranges[0][0]
    if 0xD800 <= cp <= 0xDFFF or cp >= 0x80 and cp <= 0xFFFF:  # é is also \u00e9 (_unicode_escapes)
        return None
    return json_text(chr(cp))[1:-1]


def _trie(words: list[str]) -> str:
    """GBNF matching exactly ``words``, with shared prefixes factored (long enums stay small)."""

    def build(ws: list[str]) -> str:
        ws = sorted(set(ws))
        if len(ws) == 1:
            return literal(ws[0]) if ws[0] else ""
        prefix = _common_prefix(ws)
        if prefix:
            rest = build([w[len(prefix):] for w in ws])
            return f"{literal(prefix)} {rest}".strip()
        optional = "" in ws
        by_first: dict[str, list[str]] = {}
        for w in ws:
            if w:
                by_first.setdefault(w[0], []).append(w[1:])
        by_expr: dict[str, list[int]] = {}
        alts = []
        for ch, tails in by_first.items():
            if len(tails) == 1 and sum(1 for t in by_first.values() if t == tails) == 1:
                alts.append(literal(ch + tails[0]))  # a lone branch stays one literal
                continue
            by_expr.setdefault(build(tails), []).append(ord(ch))
        for expr, chars in by_expr.items():
            head = literal(chr(chars[0])) if len(chars) == 1 else char_class(_pattern.normalize((c, c) for c in chars))
            alts.append(f"{head} {_group(expr)}".strip() if expr else head)
        body = " | ".join(alts)
        if optional:
            return f"({body})?" if (len(alts) > 1 or " " in body) else f"{body}?"
        return f"({body})" if len(alts) > 1 else body

    return build(words)


def _common_prefix(words: list[str]) -> str:
    first, last = min(words), max(words)
    i = 0
    while i < len(first) and i < len(last) and first[i] == last[i]:
        i += 1
    return first[:i]


def _not_strings(words: list[str]) -> str:
    """GBNF for a JSON string key (raw characters, no escapes) that is none of ``words``.

    ``words`` are JSON spellings with quotes. Extra keys use raw characters only, so an escape
    spelling (``"\\u0061"``) can never duplicate a declared key.
    """
    raw = '[^"\\\\\\x00-\\x1F]'
    contents = [w[1:-1] for w in words]
    trie: dict = {}
    for w in contents:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        chars = sorted(c for c in node if c)
        alts = []
        if chars:
            excluded = _pattern.normalize([(0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C)] + [(ord(c), ord(c)) for c in chars])
            alts.append(f"{char_class(excluded, negated=True)} {raw}*")
            for c in chars:
                if c == "\\":
                    continue  # a declared key with an escape: extra keys never contain backslashes
                alts.append(f"{literal(c)} ({build(node[c])})")
        else:
            alts.append(f"{raw}+")
        if "" not in node:
            alts.append('""')
        return " | ".join(alts)

    if not contents:
        return f'"\\"" {raw}* "\\"" space'
    return f'"\\"" ({build(trie)}) "\\"" space'


def _alternatives(alts: list[str]) -> str:
    """GBNF choice of ``alts``; an empty string among them makes the whole choice optional."""
    nonempty = list(dict.fromkeys(a for a in alts if a))
    if not nonempty:
        return ""
    body = " | ".join(nonempty)
    if len(nonempty) < len(alts) and "" in alts:
        return f"({body})?" if len(nonempty) > 1 or " " in body else f"{body}?"
    return f"({body})" if len(nonempty) > 1 else body


def _trivial(schema: Any) -> bool | None:
    """True when ``schema`` accepts every value (``true``, ``{}``, only annotations), False when
    none (``false``, ``{"not": {}}``, as MCP SDKs and zod emit), None otherwise."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict):
        return None
    validating = {k for k in schema if k not in ANNOTATION_KEYWORDS and not k.startswith("x-")}
    if not validating:
        return True
    if validating == {"not"}:
        inner = _trivial(schema["not"])
        return None if inner is None else not inner
    return None


def _search(pattern: Any, key: str) -> bool:
    """Whether ``pattern`` (JSON Schema: unanchored search) matches ``key``; an unreadable pattern
    counts as matching (the caller then refuses rather than guesses)."""
    try:
        return re.search(pattern, key) is not None
    except (re.error, TypeError):
        return True


def json_depth(value: Any) -> int:
    """How deeply objects and arrays nest in ``value`` (a scalar is 0, ``[]`` and ``{}`` are 1).

    Iterative, so it can measure what would overflow Python's stack.
    """
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def check_depth(schema: Any, *, where: str = "") -> None:
    """Raise :class:`SchemaError` when ``schema`` nests deeper than :data:`MAX_SCHEMA_DEPTH`.

    Raises
    ------
    SchemaError
        ``<where>#: schema nested N levels deep; at most 128 are supported``.
    """
    depth = json_depth(schema)
    if depth > MAX_SCHEMA_DEPTH:
        raise SchemaError(f"schema nested {depth} levels deep; at most {MAX_SCHEMA_DEPTH} are supported",
                          where=f"{where}#")


class recursion_headroom:
    """Context: Python's recursion limit at least ``limit`` inside, restored after; a
    RecursionError that still happens becomes a :class:`SchemaError` (one line, never a traceback).

    The compiler recurses once per schema level, a few frames each; :data:`MAX_SCHEMA_DEPTH`
    levels fit with room for a deep caller (a notebook, a test runner).
    """

    def __init__(self, limit: int = 6000, *, where: str = "#") -> None:
        self.limit, self.where = limit, where

    def __enter__(self) -> "recursion_headroom":
        import sys

        self._saved = sys.getrecursionlimit()
        sys.setrecursionlimit(max(self._saved, self.limit))
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        import sys

        sys.setrecursionlimit(self._saved)
        if kind is not None and issubclass(kind, RecursionError):
            raise SchemaError("schema too deeply nested or recursive for the compiler", where=self.where) from None
        return False


def compile_schema(schema: Any, *, lenient: bool = False, check: bool = True, style: Style = Style()) -> Grammar:
    """Compile one bare JSON Schema to a grammar whose root accepts exactly its instances.

    Parameters
    ----------
    schema : dict or bool
        A JSON Schema (draft 4 to 2020-12); BFCL type aliases are normalised first.
    lenient : bool, default False
        Unsupported keywords become warnings and ``not_enforced`` entries instead of errors.
    check : bool, default True
        Parse the result with llama.cpp's own grammar parser (fail closed). Needs
        ``llama-cpp-python``.
    style : Style, default Style()
        Digit and length bounds and whitespace (the reference grammar by default).

    Returns
    -------
    Grammar
        ``names`` empty.

    Raises
    ------
    SchemaError
        Not a JSON Schema, an unsupported keyword or pattern, an unsatisfiable or infinitely
        recursive schema, one nested deeper than :data:`MAX_SCHEMA_DEPTH`, or a grammar
        llama.cpp rejects; ``where`` is the JSON path.
    """
    check_depth(schema)
    with recursion_headroom():
        schema = normalize_types(schema)
        check_schema(schema)
        compiler = Compiler(lenient=lenient, style=style)
        got = compiler.document(schema, "root")
        if got != "root":  # pragma: no cover - document() always returns the reserved root
            compiler.add_rule("root", got)
        text = compiler.format()
    if check:
        from .oracle import check_parses

        check_parses(text)
    return Grammar(text=text, warnings=compiler.warnings, not_enforced=compiler.not_enforced)
