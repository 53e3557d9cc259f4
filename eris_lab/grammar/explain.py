"""Reading a compiled grammar: its rules explained, its cost, and examples judged by llama.cpp.

Used by notebook 04. ``rules`` says what each GBNF rule of an envelope grammar is for (from its
name: rule names come from JSON paths, STYLE.md section 1); ``examples`` builds replies that
the grammar must accept or reject; ``judge`` asks llama.cpp's own grammar engine
(:mod:`.oracle`) for its verdict on each.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Mapping, Sequence

from ..catalog import Catalog
from ..knobs import Knobs
from ..schema import normalize_types, sample
from .builtins import PRIMITIVE_RULES, STRING_FORMAT_RULES
from .compiler import rule_name
from .envelope import ENVELOPE_KEYS, STATUSES

__all__ = ["rules", "example_value", "examples", "judge", "compile_cost", "costs"]

_RULE_RE = re.compile(r"^([A-Za-z0-9-]+) ::= (.*)$")
_ENVELOPE_NOTES = {
    "root": "the whole reply: one JSON object with thought, status, message, tool_calls in this order",
    "envelope-thought": "a bounded thought string (max_thought_chars)",
    "envelope-message": "the message to the user: a bounded string or null",
    "envelope-call": "one call: exactly one alternative per offered tool (nothing else is callable)",
    "envelope-more-calls": "a further call after a comma (up to max_calls in all)",
    "envelope-status-call": "status \"call\": at least one call in tool_calls",
    "envelope-status-other": "status \"answer\" or \"clarify\": tool_calls must be []",
    "space": "bounded whitespace between tokens (a runaway of blanks cannot loop forever)",
}


def rules(gbnf: str, tools: Sequence[str] = ()) -> list[dict[str, Any]]:
    """One row per rule: ``rule``, ``body`` (cut at 160 characters), ``chars``, ``explains``."""
    keys = {rule_name(t): t for t in tools}
    rows = []
    for line in gbnf.splitlines():
        m = _RULE_RE.match(line.strip())
        if not m:
            continue
        name, body = m.groups()
        rows.append({"rule": name, "body": body if len(body) <= 160 else body[:157] + "...", "chars": len(line),
                     "explains": _explain(name, keys)})
    return rows


def _explain(name: str, keys: Mapping[str, str]) -> str:
    if name in _ENVELOPE_NOTES:
        return _ENVELOPE_NOTES[name]
    if name.startswith("call-") and name[5:] in keys:
        return f"a call of {keys[name[5:]]}: the name literal locks its argument shape"
    if name in PRIMITIVE_RULES or name in STRING_FORMAT_RULES or name.startswith(("char", "hex-")):
        return "builtin JSON primitive (grammar/builtins.py)"
    if name.startswith("tool-"):
        name = name[len("tool-"):]
    for key in sorted(keys, key=len, reverse=True):
        if name == key:
            return f"the arguments object of {keys[key]}"
        if name.startswith(key + "-"):
            path = name[len(key) + 1:]
            prop, _, suffix = path.rpartition("-") if path.endswith(("-kv", "-string", "-item")) else (path, "", "")
            what = {"kv": "key and value", "string": "string value", "item": "array item"}.get(suffix, "value")
            return f"{keys[key]}: argument '{prop}' ({what})"
    return "helper rule"


def example_value(schema: Any) -> Any:
    """A small JSON value valid under a simple schema (its required properties, or its first one when none
    is required): :func:`eris_lab.schema.sample`."""
    return sample(schema)


def _envelope(calls: list[dict[str, Any]], status: str = STATUSES[0], message: Any = None) -> str:
    # a reply the grammar must reject may pair a status with the wrong calls: spelled by hand
    return json.dumps(dict(zip(ENVELOPE_KEYS, ("", status, message, calls))), ensure_ascii=False)


def examples(offered: Sequence[str], catalog: Catalog, *, knobs: Knobs = Knobs()) -> list[dict[str, Any]]:
    """Replies the envelope grammar of ``offered`` should accept (``expect=True``) or reject.

    Rows: ``case``, ``text``, ``expect``.
    """
    out = []
    if offered:
        tool = catalog.tool(offered[0])
        schema = normalize_types(tool.parameters)
        args = example_value(schema) or {}
        out.append({"case": f"a call of offered {tool.name}", "text": _envelope([{"name": tool.name, "arguments": args}]),
                    "expect": True})
        props = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
        wrong = next(((k, s) for k, s in props.items() if isinstance(s, Mapping) and s.get("type") in ("string", "integer", "number")), None)
        if wrong:
            key, s = wrong
            bad = dict(args)
            bad[key] = [1, 2] if s.get("type") == "string" else "not a number"
            out.append({"case": f"{tool.name} with '{key}' of the wrong type", "text": _envelope([{"name": tool.name, "arguments": bad}]),
                        "expect": False})
        out.append({"case": "status call with no call", "text": _envelope([]), "expect": False})
        out.append({"case": f"{knobs.max_calls + 1} calls (max_calls {knobs.max_calls})",
                    "text": _envelope([{"name": tool.name, "arguments": args}] * (knobs.max_calls + 1)), "expect": False})
    outside = next((n for n in catalog.names if n not in offered), None)
    if outside:
        args = example_value(normalize_types(catalog.tool(outside).parameters)) or {}
        out.append({"case": f"a call of {outside}, which is not offered", "text": _envelope([{"name": outside, "arguments": args}]),
                    "expect": False})
    out.append({"case": "a plain answer", "text": _envelope([], status="answer", message="It is sunny."), "expect": True})
    out.append({"case": "prose instead of JSON", "text": "Sure! I will call the weather tool.", "expect": False})
    out.append({"case": "answer with a call attached", "text": _envelope([{"name": offered[0], "arguments": {}}], status="answer")
                if offered else _envelope([{"name": "x", "arguments": {}}], status="answer"), "expect": False})
    return out


def judge(gbnf: str, rows: Sequence[Mapping[str, Any]], oracle=None) -> list[dict[str, Any]]:
    """Add llama.cpp's verdict (``accepted``) and ``agrees`` to each example row."""
    if oracle is None:
        from .oracle import oracle as _oracle

        oracle = _oracle()
    out = []
    for row in rows:
        accepted = bool(oracle.accepts(gbnf, row["text"]))
        out.append({**row, "accepted": accepted, "agrees": accepted == row["expect"]})
    return out


def compile_cost(offer, catalog: Catalog, *, repeat: int = 5, knobs: Knobs = Knobs()) -> dict[str, Any]:
    """Compile time (best of ``repeat``, ms, without llama.cpp's parse check), size and rule count."""
    from .envelope import compile as compile_envelope

    best = float("inf")
    grammar = None
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        grammar = compile_envelope(offer, catalog, knobs=knobs, check=False)
        best = min(best, time.perf_counter() - start)
    start = time.perf_counter()
    compile_envelope(offer, catalog, knobs=knobs, check=True)
    checked = time.perf_counter() - start
    text = grammar.text
    return {"tools": len(offer.names), "compile_ms": round(best * 1000, 3), "compile_and_check_ms": round(checked * 1000, 3),
            "chars": len(text), "rules": sum(1 for line in text.splitlines() if " ::= " in line),
            "not_enforced": len(grammar.not_enforced), "warnings": len(grammar.warnings)}


def costs(catalog: Catalog, sizes: Sequence[int], *, repeat: int = 5, tokenizer: Any = None) -> list[dict[str, Any]]:
    """Per offer size (the first ``size`` tools of the catalogue): :func:`compile_cost` and prompt tokens.

    Prompt tokens: the full catalogue with schemas (``prompt.full``) vs the slim offer
    (``prompt.slim``), counted with ``tokenizer`` (default the bundled Gemma vocabulary).
    """
    from ..offer import Offer
    from ..prompt import token_report

    rows = []
    for size in sizes:
        names = catalog.names[: int(size)]
        offer = Offer.given(names, reason=f"the first {len(names)} tools")
        tokens = token_report(offer, catalog, tokenizer)
        rows.append({**compile_cost(offer, catalog, repeat=repeat), "slim_prompt_tokens": tokens["offer_tokens"],
                     "full_prompt_tokens": tokens["catalog_tokens"], "prompt_ratio": round(tokens["ratio"], 3)})
    return rows
