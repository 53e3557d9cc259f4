"""Machinery for ``pattern``: a parser for the regex subset GBNF can express, and character sets.

JSON Schema's ``pattern`` is an ECMA-262 regex with *search* semantics, matched against the
decoded string; validators written in Python (``jsonschema``) use Python's ``re``. Where the two
dialects differ, this module takes the intersection, so a grammar never accepts a string either
of them rejects: ``\\d`` is ``[0-9]``, ``\\w`` is ``[A-Za-z0-9_]``, ``\\s`` is the whitespace both
agree on, ``.`` excludes every line terminator, and the negated classes exclude the union.

Supported: literals, escapes (``\\t \\n \\r \\f \\v \\0 \\xHH \\uHHHH \\u{H...}``, escaped
punctuation), ``.``, classes with ranges and negation, ``\\d \\D \\w \\W \\s \\S``, groups
``(...)``, ``(?:...)``, named groups, alternation, quantifiers ``* + ? {n} {n,} {n,m}`` (lazy
forms too: same language), and ``^`` / ``$`` at the ends of top-level alternatives.
Unsupported (a clear error with the index): lookaround, backreferences, word boundaries,
anchors elsewhere, inline flags.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..errors import PatternError
from .builtins import MAX_COUNT

__all__ = ["parse", "Node", "MAX_CODEPOINT", "complement", "normalize", "min_max_length"]

MAX_CODEPOINT = 0x10FFFF
Ranges = tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Node:
    """A regex AST node.

    kind: ``set`` (ranges), ``seq`` (children), ``alt`` (children), ``rep`` (children[0], lo,
    hi; hi None = unbounded), ``bol`` / ``eol`` (anchors).
    """

    kind: str
    ranges: Ranges = ()
    children: tuple["Node", ...] = ()
    lo: int = 1
    hi: int | None = 1


def normalize(ranges) -> Ranges:
    """Sort and merge inclusive ranges."""
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((a, b) for a, b in out)


def complement(ranges) -> Ranges:
    """Every code point in [0, 0x10FFFF] not in ``ranges``."""
    out = []
    nxt = 0
    for lo, hi in normalize(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODEPOINT:
        out.append((nxt, MAX_CODEPOINT))
    return tuple(out)


def intersect(a, b) -> Ranges:
    """Code points in both ``a`` and ``b``."""
    return complement(complement(a) + complement(b))


def _single(cp: int) -> Ranges:
    return ((cp, cp),)


# ECMA-262 WhiteSpace + LineTerminator (the \s class)
_ECMA_SPACE = normalize(
    [(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
     (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)]
)
_DIGIT = ((0x30, 0x39),)
_WORD = normalize([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
#: ``.`` matches neither ECMA's line terminators nor Python's ``\n``.
_DOT = complement([(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)])


@functools.cache
def _python_class(cls: str) -> Ranges:
    """Code points Python's ``re`` puts in ``\\d`` / ``\\w`` / ``\\s`` for str patterns."""
    text = "".join(map(chr, range(MAX_CODEPOINT + 1)))
    return normalize((m.start(), m.end() - 1) for m in re.finditer(f"\\{cls}+", text))


@functools.cache
def class_escape(letter: str) -> Ranges:
    """The set of ``\\d \\D \\w \\W \\s \\S`` (intersection of the ECMA and Python sets)."""
    ecma = {"d": _DIGIT, "w": _WORD, "s": _ECMA_SPACE}[letter.lower()]
    python = _python_class(letter.lower())
    if letter.islower():
        return intersect(ecma, python)
    return complement(normalize(ecma + python))


_SIMPLE_ESCAPES = {"t": 0x09, "n": 0x0A, "r": 0x0D, "f": 0x0C, "v": 0x0B, "0": 0x00}
_QUANT_RE = re.compile(r"\{(\d+)(?:(,)(\d*))?\}")


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def error(self, message: str, index: int | None = None) -> PatternError:
        return PatternError(message, self.i if index is None else index)

    def peek(self) -> str:
        return self.p[self.i] if self.i < len(self.p) else ""

    def parse(self) -> Node:
        node = self.alt()
        if self.i < len(self.p):
            raise self.error("unbalanced ')'")
        return node

    def alt(self) -> Node:
        seqs = [self.seq()]
        while self.peek() == "|":
            self.i += 1
            seqs.append(self.seq())
        return Node("alt", children=tuple(seqs))

    def seq(self) -> Node:
        items = []
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            start = self.i
            atom = self.atom()
            items.append(self.quantified(atom, start))
        return Node("seq", children=tuple(items))

    def quantified(self, atom: Node, start: int) -> Node:
        c = self.peek()
        bounds: tuple[int, int | None] | None = None
        if c in ("*", "+", "?"):
            bounds = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            self.i += 1
        elif c == "{":
            m = _QUANT_RE.match(self.p, self.i)
            if m:
                lo = int(m.group(1))
                hi = lo if not m.group(2) else (int(m.group(3)) if m.group(3) else None)
                if hi is not None and hi < lo:
                    raise self.error(f"quantifier {m.group(0)} has max < min")
                if max(lo, hi or 0) > MAX_COUNT:
                    raise self.error(f"quantifier {m.group(0)} counts above {MAX_COUNT:,}, the largest count the "
                                     "compiler spells out")
                bounds = (lo, hi)
                self.i = m.end()
        if bounds is None:
            return atom
        if atom.kind in ("bol", "eol"):
            raise self.error("an anchor cannot be repeated", start)
        if self.peek() == "?":  # lazy: same language
            self.i += 1
        if self.peek() in ("*", "+", "?") or (self.peek() == "{" and _QUANT_RE.match(self.p, self.i)):
            raise self.error("nothing to repeat (a quantifier after a quantifier)")
        return Node("rep", children=(atom,), lo=bounds[0], hi=bounds[1])

    def atom(self) -> Node:
        c = self.p[self.i]
        if c == "(":
            return self.group()
        if c == "[":
            return Node("set", ranges=self.char_class())
        if c == ".":
            self.i += 1
            return Node("set", ranges=_DOT)
        if c == "^":
            self.i += 1
            return Node("bol")
        if c == "$":
            self.i += 1
            return Node("eol")
        if c in "*+?":
            raise self.error(f"nothing to repeat before {c!r}")
        if c == "{" and _QUANT_RE.match(self.p, self.i):
            raise self.error("nothing to repeat before '{'")
        if c == "\\":
            return Node("set", ranges=self.escape(in_class=False))
        self.i += 1
        return Node("set", ranges=_single(ord(c)))

    def group(self) -> Node:
        start = self.i
        self.i += 1
        if self.p.startswith("?", self.i):
            rest = self.p[self.i:]
            if rest.startswith("?:"):
                self.i += 2
            elif rest.startswith(("?=", "?!", "?<=", "?<!")):
                raise self.error("lookaround is not supported", start)
            elif m := re.match(r"\?P?<[A-Za-z_][A-Za-z0-9_]*>", rest):
                self.i += m.end()
            else:
                raise self.error("inline flags and other (?...) groups are not supported", start)
        node = self.alt()
        if self.peek() != ")":
            raise self.error("missing ')'", start)
        self.i += 1
        return node

    def escape(self, *, in_class: bool) -> Ranges:
        start = self.i
        self.i += 1
        if self.i >= len(self.p):
            raise self.error("pattern ends with a lone backslash", start)
        c = self.p[self.i]
        self.i += 1
        if c in "dDwWsS":
            return class_escape(c)
        if c in _SIMPLE_ESCAPES:
            if c == "0" and self.peek().isdigit():
                raise self.error("octal escapes are not supported", start)
            return _single(_SIMPLE_ESCAPES[c])
        if c == "b" and in_class:
            return _single(0x08)
        if c in "bB":
            raise self.error(f"word boundary \\{c} is not supported", start)
        if c.isdigit() or c == "k":
            raise self.error("backreferences are not supported", start)
        if c == "x":
            m = re.match(r"[0-9a-fA-F]{2}", self.p[self.i:])
            if not m:
                raise self.error("\\x needs two hex digits", start)
            self.i += 2
            return _single(int(m.group(0), 16))
        if c == "u":
            m = re.match(r"\{([0-9a-fA-F]{1,6})\}|([0-9a-fA-F]{4})", self.p[self.i:])
            if not m:
                raise self.error("\\u needs four hex digits or {hex}", start)
            self.i += m.end()
            cp = int(m.group(1) or m.group(2), 16)
            if cp > MAX_CODEPOINT:
                raise self.error("code point out of range", start)
            return _single(cp)
        if c == "c":
            if self.peek().isalpha() and self.peek().isascii():
                letter = self.p[self.i]
                self.i += 1
                return _single(ord(letter) % 32)
            raise self.error("\\c needs a letter", start)
        if c.isascii() and c.isalnum():
            raise self.error(f"unknown escape \\{c}", start)
        return _single(ord(c))  # escaped punctuation (\. \! \- \/ ...) or any non-ASCII char

    def class_char(self) -> Ranges:
        if self.peek() == "\\":
            return self.escape(in_class=True)
        c = self.p[self.i]
        self.i += 1
        return _single(ord(c))

    def char_class(self) -> Ranges:
        start = self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        if self.peek() == "]":
            raise self.error("a class starting with ']' means different things in ECMA and Python", self.i)
        items: list[tuple[int, int]] = []
        while True:
            if self.i >= len(self.p):
                raise self.error("missing ']'", start)
            if self.p[self.i] == "]":
                self.i += 1
                break
            if self.p.startswith("[:", self.i) or self.p.startswith("[=", self.i) or self.p.startswith("[.", self.i):
                raise self.error("POSIX classes are not supported", self.i)
            first_at = self.i
            first = self.class_char()
            if self.peek() == "-" and self.i + 1 < len(self.p) and self.p[self.i + 1] != "]":
                self.i += 1
                last = self.class_char()
                if len(first) != 1 or len(last) != 1 or first[0][0] != first[0][1] or last[0][0] != last[0][1]:
                    raise self.error("a range bound must be a single character", first_at)
                if last[0][0] < first[0][0]:
                    raise self.error("range out of order", first_at)
                items.append((first[0][0], last[0][0]))
            else:
                items.extend(first)
        ranges = normalize(items)
        return complement(ranges) if negated else ranges


def parse(pattern: str) -> Node:
    """Parse ``pattern`` into a :class:`Node` tree (top node ``alt``).

    Raises
    ------
    PatternError
        The pattern uses a construct outside the subset; ``index`` points at it.
    """
    return _Parser(pattern).parse()


def min_max_length(node: Node) -> tuple[int, int | None]:
    """Shortest and longest match of ``node`` in characters (``None`` = unbounded)."""
    if node.kind == "set":
        return 1, 1
    if node.kind in ("bol", "eol"):
        return 0, 0
    if node.kind == "seq":
        lo, hi = 0, 0
        for child in node.children:
            a, b = min_max_length(child)
            lo += a
            hi = None if hi is None or b is None else hi + b
        return lo, hi
    if node.kind == "alt":
        pairs = [min_max_length(c) for c in node.children]
        his = [b for _, b in pairs]
        return min(a for a, _ in pairs), (None if None in his else max(his))
    a, b = min_max_length(node.children[0])
    hi = None if node.hi is None or b is None else b * node.hi
    if node.hi == 0:
        hi = 0
    return a * node.lo, hi
