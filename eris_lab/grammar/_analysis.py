"""Machinery: read back the GBNF the compiler wrote and find rules that can never finish.

Two properties llama.cpp does not explain well are checked here, so the error can name the JSON
path the rule came from:

* **productive**: a rule derives at least one finite string. A recursive ``$ref`` without a base
  case (an object that requires a child of its own type) is not; llama.cpp would accept the
  grammar and then sample forever or reject everything.
* **left recursion**: a rule reaching itself without consuming input (``A ::= B``, ``B ::= A``);
  llama.cpp rejects such a grammar with only a rule index.

The reader understands exactly the GBNF subset the compiler emits: literals, classes, rule
names, groups, ``|``, and the postfix operators ``? * + {m} {m,} {m,n}``.
"""

from __future__ import annotations

import re

__all__ = ["parse_rules", "unproductive", "left_recursive", "references"]

_TOKEN_RE = re.compile(
    r"""\s*(?:
        (?P<lit>"(?:\\.|[^"\\])*")
      | (?P<cls>\[(?:\\.|[^\]\\])*\])
      | (?P<name>[a-zA-Z0-9-]+)
      | (?P<rep>\{\s*\d+\s*(?:,\s*\d*\s*)?\})
      | (?P<op>[()|?*+.])
    )""",
    re.VERBOSE,
)

# AST: alternatives = list of sequences; sequence = list of (atom, min_count);
# atom = ("t", nonempty) terminal | ("r", name) | ("g", alternatives)


def _tokens(body: str):
    pos = 0
    out = []
    while pos < len(body):
        if body[pos:].strip() == "":
            break
        m = _TOKEN_RE.match(body, pos)
        if not m:
            raise ValueError(f"cannot read GBNF at {body[pos:pos + 30]!r}")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _parse_alts(tokens, i):
    alts = []
    seq: list = []
    while i < len(tokens):
        kind, text = tokens[i]
        if kind == "op" and text == ")":
            break
        if kind == "op" and text == "|":
            alts.append(seq)
            seq = []
            i += 1
            continue
        if kind == "lit":
            atom = ("t", text != '""')
            i += 1
        elif kind == "cls" or (kind == "op" and text == "."):
            atom = ("t", True)
            i += 1
        elif kind == "name":
            atom = ("r", text)
            i += 1
        elif kind == "op" and text == "(":
            sub, i = _parse_alts(tokens, i + 1)
            atom = ("g", sub)
            i += 1  # ')'
        else:
            raise ValueError(f"unexpected {text!r} in GBNF")
        low = 1
        while i < len(tokens) and (tokens[i][0] == "rep" or tokens[i][1] in ("?", "*", "+")):
            kind, text = tokens[i]
            if text in ("?", "*"):
                low = 0
            elif text == "+":
                pass
            else:
                low = low * int(re.match(r"\{\s*(\d+)", text).group(1))
            i += 1
        seq.append((atom, low))
    alts.append(seq)
    return alts, i


def parse_rules(rules: dict[str, str]) -> dict[str, list]:
    """Each rule body as alternatives of ``(atom, min_count)`` sequences."""
    return {name: _parse_alts(_tokens(body), 0)[0] for name, body in rules.items()}


def _fixpoint(ast: dict[str, list], atom_ok) -> set[str]:
    good: set[str] = set()
    changed = True

    def alts_ok(alts) -> bool:
        return any(all(low == 0 or atom_ok(atom, good, alts_ok) for atom, low in seq) for seq in alts)

    while changed:
        changed = False
        for name, alts in ast.items():
            if name not in good and alts_ok(alts):
                good.add(name)
                changed = True
    return good


def _productive_atom(atom, good, alts_ok) -> bool:
    if atom[0] == "t":
        return True
    if atom[0] == "r":
        return atom[1] in good
    return alts_ok(atom[1])


def _nullable_atom(atom, good, alts_ok) -> bool:
    if atom[0] == "t":
        return not atom[1]
    if atom[0] == "r":
        return atom[1] in good
    return alts_ok(atom[1])


def references(alts) -> set[str]:
    """Every rule name an alternatives tree refers to."""
    out: set[str] = set()
    for seq in alts:
        for atom, _ in seq:
            if atom[0] == "r":
                out.add(atom[1])
            elif atom[0] == "g":
                out |= references(atom[1])
    return out


def unproductive(ast: dict[str, list], root: str) -> list[str]:
    """Rules reachable from ``root`` that derive no finite string, in reach order."""
    good = _fixpoint(ast, _productive_atom)
    seen, order, stack = set(), [], [root]
    while stack:
        name = stack.pop()
        if name in seen or name not in ast:
            continue
        seen.add(name)
        order.append(name)
        stack.extend(sorted(references(ast[name]), reverse=True))
    return [n for n in order if n not in good]


def left_recursive(ast: dict[str, list]) -> list[str]:
    """A cycle of rules that reach themselves without consuming input (empty if none)."""
    nullable = _fixpoint(ast, _nullable_atom)

    def first_refs(alts) -> set[str]:
        out: set[str] = set()
        for seq in alts:
            for atom, low in seq:
                if atom[0] == "r":
                    out.add(atom[1])
                elif atom[0] == "g":
                    out |= first_refs(atom[1])
                if low > 0 and not (
                    (atom[0] == "t" and not atom[1])
                    or (atom[0] == "r" and atom[1] in nullable)
                    or (atom[0] == "g" and _group_nullable(atom[1], nullable))
                ):
                    break
        return out

    graph = {name: first_refs(alts) for name, alts in ast.items()}
    # depth-first search with an explicit stack: a chain of thousands of rules (an object with
    # many optional keys) must not hit Python's recursion limit
    state: dict[str, int] = {}
    for start in sorted(graph):
        if start in state:
            continue
        state[start] = 1
        path = [start]
        stack = [iter(sorted(graph[start]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                state[path.pop()] = 2
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt in graph and nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return []


def _group_nullable(alts, nullable: set[str]) -> bool:
    def atom_null(atom) -> bool:
        if atom[0] == "t":
            return not atom[1]
        if atom[0] == "r":
            return atom[1] in nullable
        return _group_nullable(atom[1], nullable)

    return any(all(low == 0 or atom_null(atom) for atom, low in seq) for seq in alts)
