"""The compiler without a vocabulary: grammar text, errors with paths, not-enforced lists, checks.

Grammars are still parsed by llama.cpp's own parser when llama-cpp-python is installed (the
compiler's fail-closed check); acceptance tests live in test_grammar_oracle.py.
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from conftest import load_cases
from eris_lab.errors import SchemaError
from eris_lab.grammar import Compiler, Grammar, compile_schema
from eris_lab.grammar import _analysis, _pattern
from eris_lab.grammar.builtins import MAX_REPETITION, char_class, literal, repetition
from eris_lab.grammar.compiler import ANY_ORDER_MAX_KEYS, MAX_OBJECT_PROPERTIES, integer_range

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
CASES = load_cases("grammar_cases.json")["cases"]


def gbnf(schema, **kw) -> str:
    return compile_schema(schema, check=HAVE_LLAMA, **kw).text


def rules(text: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in text.splitlines())


# -- escaping and builtins -------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("plain", '"plain"'),
    ('say "hi"', '"say \\"hi\\""'),
    ("C:\\tmp", '"C:\\\\tmp"'),
    ("a\nb\tc\r", '"a\\nb\\tc\\r"'),
    ("\x00\x1f\x7f", '"\\x00\\x1F\\x7F"'),
    ("café 😀", '"café 😀"'),
])
def test_literal_escapes_every_special_character(text, expected):
    assert literal(text) == expected


def test_char_class_escapes_brackets_dash_caret_and_non_ascii():
    assert char_class([(0x5B, 0x5B), (0x5D, 0x5D), (0x2D, 0x2D), (0x5E, 0x5E)]) == "[\\[\\]\\x2D\\x5E]"
    assert char_class([(0xE9, 0xE9), (0x300, 0x300), (0x2028, 0x2028), (0x1F600, 0x1F600)],
                      negated=True) == "[^\\xE9\u0300\\u2028\U0001F600]"
    assert char_class([(0x61, 0x7A)]) == "[a-z]"


@pytest.mark.parametrize(("lo", "hi"), [(0, 5), (3, 3), (0, 2000), (0, 2001), (0, 4999), (1, 6500), (2500, 2600),
                                        (4000, None), (0, None), (1, None)])
def test_repetition_never_exceeds_llama_cpp_cap(lo, hi):
    text = repetition("char", lo, hi)
    counts = [int(n) for n in re.findall(r"\d+", text)]
    assert all(n <= MAX_REPETITION for n in counts), text


def test_repetition_splits_long_bounds_into_exact_blocks():
    assert repetition("c", 0, 2500) == "(c{0,1999} | c{2000} c{0,500})"
    assert repetition("c", 2500, 2500) == "c{2000} c{500}"
    assert repetition("c", 3, None) == "c{3,}"


# -- grammar text ----------------------------------------------------------------------------


def test_output_is_sorted_and_deterministic():
    schema = CASES[0]["schema"]
    first, second = gbnf(schema), gbnf(schema)
    assert first == second
    names = [line.split(" ::= ")[0] for line in first.splitlines()]
    assert names == sorted(names)


def test_rule_names_come_from_json_paths():
    text = gbnf({"type": "object", "properties": {"a b": {"type": "object", "properties": {
        "c": {"type": "integer", "minimum": 1}}, "required": ["c"]}}, "required": ["a b"]})
    assert {"root", "root-a-b", "root-a-b-c", "root-a-b-c-kv", "root-a-b-kv"} <= set(rules(text))


def test_enum_behind_ref_gets_the_defs_name():
    text = gbnf(CASES[0]["schema"])
    assert rules(text)["Speaker"] == '"\\"" ("ann\\"" | "bob\\"") space'


def test_long_enum_compiles_to_a_trie():
    case = next(c for c in CASES if c["id"] == "long-enum-shared-prefixes")
    assert rules(gbnf(case["schema"]))["root-sku"] == '"\\"item_" [0-2] [0-9] [0-9] "\\"" space'


def test_a_long_enum_is_read_in_linear_work(monkeypatch):
    """Round nineteen's bad inputs (2026-12-07): the compiler rebuilt a set of every kept value for
    each value, so an enum of 10,000 values took four minutes (quadratic ``_json_key`` calls)."""
    from eris_lab.grammar import compiler

    calls = []
    real = compiler._json_key
    monkeypatch.setattr(compiler, "_json_key", lambda v: calls.append(1) or real(v))
    n = 2000
    text = gbnf({"enum": [f"v{i:05d}" for i in range(n)] + ["v00001"]})  # one value listed twice
    assert text.startswith('root ::= "\\"v0" [01] [0-9] [0-9] [0-9] "\\"" space')
    assert len(calls) <= 3 * (n + 1), len(calls)


def test_integer_range_has_no_minus_zero_and_exact_bounds():
    assert integer_range(-5, 120) == '"-" [1-5] | [0-9] | [1-9] [0-9] | "1" ([0-1] [0-9] | "2" "0")'
    assert integer_range(1, 9) == "[1-9]"
    assert integer_range(None, -3).startswith('"-"')


def test_optional_keys_never_allow_a_leading_comma():
    text = gbnf({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})
    r = rules(text)
    assert r["root"] == '"{" space (root-a-kv root-has-1 | root-b-kv root-has-2)? "}" space'
    assert r["root-has-1"] == '("," space root-b-kv)?'
    assert r["root-has-2"] == '("," space root-a-kv)?'


def test_small_objects_take_keys_in_any_order_each_once():
    text = gbnf({"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "required": ["b"]})
    r = rules(text)
    assert r["root"] == '"{" space (root-a-kv root-has-1 | root-b-kv root-has-2 | root-c-kv root-has-4) "}" space'
    assert "root-has-7" not in r  # all keys written: nothing may follow
    assert r["root-has-5"] == '"," space root-b-kv'  # a and c written: b is still required


def test_large_objects_keep_schema_order_in_linear_size():
    n = ANY_ORDER_MAX_KEYS + 3
    text = gbnf({"type": "object", "properties": {f"k{i}": {} for i in range(n)}, "required": ["k1"]})
    r = rules(text)
    assert r["root"] == '"{" space (root-k0-kv root-after-1 | root-k1-kv root-after-2) "}" space'
    assert r["root-after-1"] == '"," space root-k1-kv root-after-2'
    assert r[f"root-after-{n - 1}"] == f'("," space root-k{n - 1}-kv)?'
    assert sum(1 for name in r if name.startswith("root-after-")) == n - 1


@pytest.mark.parametrize("n", [50, 400, 1000])
def test_many_optional_properties_compile_linearly_and_quickly(n):
    import time

    start = time.perf_counter()
    text = gbnf({"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(n)}})
    assert time.perf_counter() - start < 10
    assert len(text) < 200 * n  # linear: about 130 bytes per key (kv rule and chain rule)


def test_too_many_properties_is_one_clear_error():
    with pytest.raises(SchemaError) as exc:
        compile_schema({"type": "object", "properties": {f"p{i}": {} for i in range(MAX_OBJECT_PROPERTIES + 1)}})
    assert str(exc.value) == (f"#/properties: {MAX_OBJECT_PROPERTIES + 1} properties; at most "
                              f"{MAX_OBJECT_PROPERTIES} per object are supported")


def test_empty_object_schema_has_no_double_space():
    assert rules(gbnf({"type": "object", "properties": {}}))["root"] == '"{" space "}" space'


def test_bfcl_type_aliases_are_normalised():
    text = gbnf({"type": "dict", "properties": {"x": {"type": "float"}, "t": {"type": "tuple", "items": {"type": "any"}}},
                 "required": ["x", "t"]})
    assert "number" in rules(text)["root-x-kv"]
    assert "value" in rules(text)["root-t"]


# -- what is not enforced, warnings and errors -----------------------------------------------


def test_multipleof_and_uniqueitems_are_listed_not_enforced_but_number_bounds_are_enforced():
    g = compile_schema({"type": "object", "properties": {
        "n": {"type": "number", "multipleOf": 0.5, "maximum": 9.5},
        "l": {"type": "array", "uniqueItems": True}}}, check=HAVE_LLAMA)
    assert g.not_enforced == (("#/properties/n/multipleOf", "multipleOf"), ("#/properties/l/uniqueItems", "uniqueItems"))


def test_minimum_zero_on_a_number_is_enforced():
    g = compile_schema({"type": "number", "minimum": 0}, check=HAVE_LLAMA)
    assert g.not_enforced == ()
    assert "nonnegative-number" in rules(g.text)["root"]


def test_unsupported_keyword_is_an_error_naming_the_path():
    with pytest.raises(SchemaError) as exc:
        compile_schema({"type": "object", "properties": {"a": {"type": "object", "dependentRequired": {"x": ["y"]}}}})
    assert str(exc.value) == "#/properties/a/dependentRequired: unsupported keyword 'dependentRequired'"


def test_lenient_mode_warns_with_the_path_and_lists_it_not_enforced():
    g = compile_schema({"type": "object", "properties": {"a": {"type": "string", "not": {"const": "x"}}}},
                       lenient=True, check=HAVE_LLAMA)
    assert g.warnings == (("#/properties/a/not",
                           "unsupported form of 'not' (supported: {}, false, a type, or an enum beside an enum); "
                           "not enforced by the grammar (lenient)"),)
    assert g.not_enforced == (("#/properties/a/not", "not"),)


def test_unknown_keyword_is_a_warning_not_a_widening():
    g = compile_schema({"type": "object", "properties": {"a": {"type": "string", "optional": True}}},
                       check=HAVE_LLAMA)
    assert g.warnings == (("#/properties/a/optional", "unknown keyword 'optional' ignored (no JSON Schema meaning)"),)


@pytest.mark.parametrize(("schema", "message"), [
    ({"type": "string", "pattern": "^(?=a)b$"},
     "#/pattern: lookaround is not supported at index 1 of pattern '^(?=a)b$'"),
    ({"type": "string", "pattern": "(a)\\1"}, "#/pattern: backreferences are not supported at index 3 of pattern '(a)\\\\1'"),
    ({"type": "string", "pattern": "a\\bc"}, "#/pattern: word boundary \\b is not supported at index 1 of pattern 'a\\\\bc'"),
    ({"$ref": "other.json#/a"}, "#/$ref: only local $ref ('#...') are supported; got 'other.json#/a'"),
    ({"$ref": "#/$defs/missing"}, "#/$ref: $ref '#/$defs/missing' points at nothing in this schema"),
    ({"type": "string", "enum": [1, 2]}, "#/enum: no enum/const value is valid under the rest of the schema"),
    ({"type": "string", "minLength": 3, "maxLength": 2}, "#: minLength 3 > maxLength 2: no string is valid"),
    ({"type": "integer", "minimum": 5, "maximum": 4}, "#: no integer lies between the bounds (5 > 4)"),
    ({"type": "array", "minItems": 3, "maxItems": 1}, "#: minItems 3 > maxItems 1: no array is valid"),
    ({"type": "string", "pattern": "^[a-z]+[0-9]*$", "maxLength": 5},
     "#/pattern: minLength/maxLength together with pattern '^[a-z]+[0-9]*$' that does not imply them"),
    ({"allOf": [{"type": "string"}, {"type": "integer"}]},
     "#/allOf/1: allOf: types 'string' and 'integer' have no value in common"),
    ({"type": "bogus"}, "#/type: not a JSON Schema: 'bogus' is not valid under any of the given schemas"),
])
def test_compile_errors_name_the_json_path(schema, message):
    with pytest.raises(SchemaError) as exc:
        compile_schema(schema)
    assert str(exc.value) == message


def test_recursion_without_base_case_is_a_clear_error_not_a_hang():
    schema = {"type": "object", "properties": {"child": {"$ref": "#"}}, "required": ["child"],
              "additionalProperties": False}
    with pytest.raises(SchemaError) as exc:
        compile_schema(schema)
    # refused by the schema check the catalogue loader runs too (schema.check, bad_inputs.md row 69),
    # before the compiler's own analysis would say "rule 'root' can never finish"
    assert str(exc.value) == "#/properties/child/$ref: recursive $ref without a base case: no finite value is valid"


def test_pure_ref_cycle_is_a_clear_error():
    schema = {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}
    with pytest.raises(SchemaError, match="recursive \\$ref without a base case"):
        compile_schema(schema)


def test_allof_through_recursive_ref_is_a_clear_error():
    with pytest.raises(SchemaError, match="merged into itself"):
        compile_schema({"allOf": [{"$ref": "#"}, {"type": "object"}]})


def test_optional_recursion_is_fine():
    g = compile_schema({"type": "object", "properties": {"next": {"$ref": "#"}}}, check=HAVE_LLAMA)
    assert "root ::=" in g.text


def test_bfcl_enum_on_array_is_repaired_only_in_lenient_mode():
    schema = {"type": "array", "items": {"type": "string"}, "enum": ["a", "b"]}
    with pytest.raises(SchemaError, match="lenient mode applies it to the array's items"):
        compile_schema(schema)
    g = compile_schema(schema, lenient=True, check=HAVE_LLAMA)
    assert g.warnings and g.warnings[0][0] == "#/enum"


def test_cases_without_must_accept_fail_to_compile():
    for case in (c for c in CASES if not c.get("must_accept")):  # none in the handed file yet
        with pytest.raises(SchemaError):
            compile_schema(case["schema"])


@pytest.mark.skipif(not HAVE_LLAMA, reason="needs llama-cpp-python")
def test_llama_cpp_parser_rejection_is_a_schema_error():
    from eris_lab.grammar.oracle import check_parses

    with pytest.raises(SchemaError) as exc:
        check_parses('root ::= "a" undefined-rule\n')
    assert "Undefined rule identifier 'undefined-rule'" in str(exc.value)


def test_grammar_record_is_frozen():
    g = Grammar(text="root ::= \"a\"\n")
    with pytest.raises(AttributeError):
        g.text = ""  # type: ignore[misc]


# -- machinery ------------------------------------------------------------------------------


def test_analysis_finds_unproductive_and_left_recursive_rules():
    ast = _analysis.parse_rules({"root": '"[" child "]"', "child": '"(" child ")"', "ok": '"x"? ok2', "ok2": "ok"})
    assert _analysis.unproductive(ast, "root") == ["root", "child"]
    assert _analysis.left_recursive(ast) == ["ok", "ok2", "ok"]


def test_pattern_classes_are_the_intersection_of_ecma_and_python():
    space = _pattern.class_escape("s")
    assert any(lo <= 0x20 <= hi for lo, hi in space)
    assert not any(lo <= 0xFEFF <= hi for lo, hi in space)  # ECMA whitespace, not Python's
    not_space = _pattern.class_escape("S")
    assert not any(lo <= 0xFEFF <= hi for lo, hi in not_space)  # and excluded from \S too
    assert _pattern.class_escape("d") == ((0x30, 0x39),)


def test_compiler_reuses_identical_rules_and_renames_different_ones():
    c = Compiler()
    assert c.add_rule("x", '"a"') == "x"
    assert c.add_rule("x", '"a"') == "x"
    assert c.add_rule("x", '"b"') == "x-1"
    assert c.add_rule("string", '"s"') == "string-"  # builtin names are reserved


@pytest.mark.skipif(not HAVE_LLAMA, reason="needs llama-cpp-python")
def test_differential_ours_is_a_superset_of_llama_cpp_python_converter():
    from eris_lab.bench.grammar import _cases_from_grammar_file, differential
    from eris_lab.grammar.oracle import oracle

    from conftest import CASES as CASES_DIR

    stats = differential(_cases_from_grammar_file(CASES_DIR / "grammar_cases.json"), oracle())
    assert stats["superset"] and stats["ours_wrong_accepts"] == 0 and stats["ours_wrong_rejects"] == 0
    assert stats["ours_right"] == stats["instances"] > stats["theirs_right"]


_MANY_KEYS = {f"k{i}": {"type": "integer"} for i in range(300)}


@pytest.mark.parametrize(("schema", "message"), [
    # small objects and maps count their keys now (test_grammar_oracle: the g25 kind); 300 declared
    # keys counted up to 20 or 50 would take 6,300 or 15,300 rules, past MAX_COUNTED_STATES
    ({"type": "object", "properties": _MANY_KEYS, "additionalProperties": True, "minProperties": 20},
     "#/minProperties: minProperties 20 beyond the required keys: counting keys beside 300 declared ones "
     "would take more than 4096 rules"),
    ({"type": "object", "properties": _MANY_KEYS, "additionalProperties": True, "maxProperties": 50},
     "#/maxProperties: maxProperties 50 below the keys that may appear: counting keys beside 300 declared "
     "ones would take more than 4096 rules"),
])
def test_property_counts_beyond_the_grammar_are_errors(schema, message):
    with pytest.raises(SchemaError) as exc:
        compile_schema(schema)
    assert str(exc.value) == message


@pytest.mark.parametrize(("schema", "message"), [
    ({"type": "number", "minimum": 2.5, "exclusiveMaximum": 2.5}, "#: no number lies between the bounds (2.5 and 2.5)"),
    ({"type": "number", "minimum": 3, "maximum": 2}, "#: no number lies between the bounds (3 and 2)"),
    ({"type": "number", "minimum": 1e30}, "#: the bounds lie beyond the 19-digit numbers the grammar writes"),
])
def test_impossible_number_bounds_are_one_clear_error(schema, message):
    with pytest.raises(SchemaError) as exc:
        compile_schema(schema)
    assert str(exc.value) == message

