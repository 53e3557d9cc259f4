"""Differential fuzzer: random schemas from the supported keywords, judged twice.

Hypothesis draws a schema (objects in both key modes, arrays, anyOf, enums and consts, bounded
integers and numbers, strings with lengths, ``additionalProperties`` in every spelling, property
names with ``"`` ``]`` ``\\`` ``^`` ``-`` and newlines); ``hypothesis-jsonschema`` draws a valid
instance, and near-miss mutations add invalid ones. Each JSON text is judged by llama.cpp's own
grammar engine (the oracle) over the compiled grammar and by ``jsonschema``; the two must agree.

Out of scope, by the grammar's documented narrowings (never widenings): key order of objects
with more than ``ANY_ORDER_MAX_KEYS`` keys (texts are written in schema order, extra keys last),
integers of 20+ digits and numbers written with an exponent or as ``-0.0``, integral floats
(``1.0`` for an integer), and extra keys spelt with escapes. ``make test`` runs a few hundred
schemas; the slow suite many thousands. A disagreement is shrunk by Hypothesis to a minimal
schema: add it to tests/cases/grammar_cases.json.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("hypothesis_jsonschema")

import jsonschema  # noqa: E402
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_grammar_oracle import _mutations  # noqa: E402  (also installs the hypothesis-jsonschema shim)

from eris_lab.grammar import compile_schema  # noqa: E402

#: Suffixes that make property names hard to escape (the grammar must spell them exactly).
NAME_SUFFIXES = ("", "", "", '"', "]", "\\", "^", "-", "\n", "é", " x")
STRINGS = ("a", "b", 'q"', "c\\", "", "é", "x y", "]^-", "\n")
NUMBER_BOUNDS = (-12.5, -2.5, -1, -0.1, 0, 0.1, 0.5, 1, 2.25, 10, 99.99)

STATS = {"schemas": 0, "texts": 0, "accepted": 0, "rejected": 0}


def _integer():
    return st.tuples(st.none() | st.integers(-60, 60), st.none() | st.integers(0, 80)).map(
        lambda b: {"type": "integer", **({"minimum": b[0]} if b[0] is not None else {}),
                   **({"maximum": b[0] + b[1] if b[0] is not None else b[1]} if b[1] is not None else {})})


def _number():
    def build(t):
        lo, hi, lo_key, hi_key = t
        out = {"type": "number"}
        if lo is not None:
            out[lo_key] = lo
        if hi is not None and (lo is None or hi > lo):
            out[hi_key] = hi
        return out

    bound = st.none() | st.sampled_from(NUMBER_BOUNDS)
    return st.tuples(bound, bound, st.sampled_from(["minimum", "exclusiveMinimum"]),
                     st.sampled_from(["maximum", "exclusiveMaximum"])).map(build)


def _string():
    lengths = st.tuples(st.integers(0, 3), st.none() | st.integers(0, 4)).map(
        lambda b: {"type": "string", **({"minLength": b[0]} if b[0] else {}),
                   **({"maxLength": b[0] + b[1]} if b[1] is not None else {})})
    enum = st.lists(st.sampled_from(STRINGS), min_size=1, max_size=4, unique=True).map(
        lambda v: {"type": "string", "enum": v})
    return lengths | enum


SCALARS = st.sampled_from([None, True, False, 0, 1, -3, 2.5, "a", 'q"', "null", ""])

LEAVES = st.one_of(
    _integer(), _number(), _string(),
    st.just({"type": "boolean"}), st.just({"type": "null"}), st.just({}), st.just(True),
    st.just({"description": "any JSON value"}),
    SCALARS.map(lambda v: {"const": v}),
    st.lists(SCALARS, min_size=1, max_size=4).map(lambda v: {"enum": v}),
    st.just({"type": ["string", "null"], "maxLength": 3}),
)

ADDITIONAL = st.sampled_from([False, True, {}, {"not": {}}, {"type": "integer"}, {"type": "string", "maxLength": 2}])


def _containers(children):
    prop = st.tuples(children, st.booleans(), st.integers(0, len(NAME_SUFFIXES) - 1))
    objects = st.tuples(st.lists(prop, max_size=8), ADDITIONAL | children).map(
        lambda t: {"type": "object", "properties": t[0], "additionalProperties": t[1]})
    arrays = st.tuples(children, st.integers(0, 2), st.none() | st.integers(0, 3)).map(
        lambda t: {"type": "array", "items": t[0], **({"minItems": t[1]} if t[1] else {}),
                   **({"maxItems": t[1] + t[2]} if t[2] is not None else {})})
    unions = st.lists(children, min_size=2, max_size=3).map(lambda alts: {"anyOf": alts})
    return objects | arrays | unions


def _name_properties(schema, counter):
    """Give every drawn property a schema-wide unique name (so schema order is well defined)."""
    if isinstance(schema, list):
        return [_name_properties(s, counter) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "properties":
            props, required = {}, []
            for sub, is_required, suffix in value:
                name = f"k{next(counter)}{NAME_SUFFIXES[suffix]}"
                props[name] = _name_properties(sub, counter)
                if is_required:
                    required.append(name)
            out["properties"] = props
            if required:
                out["required"] = required
        elif key in ("items", "additionalProperties"):
            out[key] = _name_properties(value, counter)
        elif key == "anyOf":
            out[key] = [_name_properties(s, counter) for s in value]
        else:
            out[key] = value
    return out


def _schemas():
    import itertools

    return st.recursive(LEAVES, _containers, max_leaves=10).map(
        lambda s: _name_properties(s, itertools.count()))


def _rank(schema) -> dict[str, int]:
    """Property names in schema order; the key ``None`` is present when some object takes extra
    keys (then a key spelt with escapes may be an extra key, out of scope)."""
    rank: dict[str, int] = {}

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "object" and node.get("additionalProperties") not in (False, {"not": {}}):
                rank.setdefault(None, -1)
            for name, sub in node.get("properties", {}).items():
                rank.setdefault(name, len(rank))
                walk(sub)
            for key in ("items", "additionalProperties"):
                walk(node.get(key))
            for sub in node.get("anyOf", ()):
                walk(sub)

    walk(schema)
    return rank


def _ordered(value, rank):
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (rank.get(k, len(rank) + 1), list(value).index(k)))
        return {k: _ordered(value[k], rank) for k in keys}
    if isinstance(value, list):
        return [_ordered(v, rank) for v in value]
    return value


def _in_scope(value, rank) -> bool:
    """Outside the grammar's documented narrowings (see the module docstring)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if isinstance(value, int):
        return abs(value) < 10 ** 19
    if isinstance(value, float):
        return "e" not in repr(value) and not value.is_integer() and abs(value) < 10 ** 19
    if isinstance(value, list):
        return all(_in_scope(v, rank) for v in value)
    for key, item in value.items():
        if (key not in rank or None in rank) and any(c in '"\\' or ord(c) < 0x20 for c in key):
            return False  # extra keys are written with raw characters only
        if not _in_scope(item, rank):
            return False
    return True


@pytest.fixture(scope="module")
def judge():
    from eris_lab.grammar.oracle import oracle

    return oracle()


def _check(judge, schema, data) -> None:
    from hypothesis_jsonschema import from_schema

    g = compile_schema(schema)
    assert g.not_enforced == () and all("lenient" not in m for _, m in g.warnings), g.not_enforced
    validator = jsonschema.Draft202012Validator(schema)
    instance = data.draw(from_schema(schema), label="instance")
    rank = _rank(schema)
    assume(_in_scope(instance, rank))
    STATS["schemas"] += 1
    texts = []
    for value in [instance, *_mutations(instance)]:
        if _in_scope(value, rank):
            value = _ordered(value, rank)
            texts.append((json.dumps(value, ensure_ascii=False), validator.is_valid(value)))
    texts.append((json.dumps(_ordered(instance, rank), ensure_ascii=False, separators=(",", ":")), True))
    disagreements = []
    for text, valid in texts:
        verdict = judge.accepts(g.text, text)
        STATS["texts"] += 1
        STATS["accepted" if verdict else "rejected"] += 1
        if verdict != valid:
            disagreements.append((text, "grammar accepts" if verdict else "grammar rejects", "valid" if valid else "invalid"))
    assert disagreements == [], (json.dumps(schema, ensure_ascii=False), disagreements, g.text)


_SETTINGS = dict(deadline=None, database=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                        HealthCheck.function_scoped_fixture, HealthCheck.data_too_large])


@settings(max_examples=250, **_SETTINGS)
@given(schema=_schemas(), data=st.data())
def test_grammar_and_jsonschema_agree_on_random_schemas(judge, schema, data):
    _check(judge, schema, data)


@pytest.mark.slow
@settings(max_examples=5000, **{**_SETTINGS, "derandomize": False})
@given(schema=_schemas(), data=st.data())
def test_grammar_and_jsonschema_agree_on_many_random_schemas(judge, schema, data):
    _check(judge, schema, data)


def test_fuzzer_tried_something():
    """Runs after the fast fuzzer (file order): it drew schemas and judged texts both ways."""
    if STATS["schemas"] == 0:
        pytest.skip("the fuzzer did not run in this session")
    assert STATS["texts"] > STATS["schemas"] and STATS["accepted"] and STATS["rejected"], STATS
    print(f"\ndifferential fuzzer: {STATS['schemas']} schemas, {STATS['texts']} texts "
          f"({STATS['accepted']} accepted, {STATS['rejected']} rejected), 0 disagreements")
