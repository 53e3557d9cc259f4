"""``eris-lab grammar`` / ``grammar-check`` with bad input: one line naming the input, exit 2
(bad_inputs rows 4, 5, 14, 15, 38), and grammars that never fail open (rows 2, 3)."""

from __future__ import annotations

import importlib.util
import json
import sys
import time

import pytest

from eris_lab import cli

needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs llama-cpp-python")


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("eris-lab: error: ") and "Traceback" not in err, err
    return err.strip()


def _nested(kind: str, n: int):
    s = {"type": "integer"}
    for _ in range(n):
        s = {"items": {"type": "array", "items": s}, "properties": {"type": "object", "properties": {"k": s}},
             "anyOf": {"anyOf": [s, {"type": "null"}]}, "allOf": {"allOf": [s, {"minimum": 1}]}}[kind]
    return s


# -- grammar --schema: deep or bracket-bomb JSON (rows 14, 15) ----------------------------------


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000])
def test_json_nested_100000_deep_is_one_line(tmp_path, capsys, text):
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8")
    assert cli.main(["grammar", "--schema", str(path)]) == 2
    line = _one_error_line(capsys)
    assert str(path) in line and ("nested" in line or "not a JSON Schema" in line), line
    assert "not valid JSON" not in line, line  # it is valid JSON, only too deep (a helper's check of row 14)


@pytest.mark.parametrize("kind", ["items", "properties", "anyOf", "allOf"])
@pytest.mark.parametrize("n", [150, 1000])
def test_schema_nested_deeper_than_the_limit_is_one_line_naming_the_depth(tmp_path, capsys, kind, n):
    path = tmp_path / "s.json"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # only for writing the test file
    try:
        path.write_text(json.dumps(_nested(kind, n)), encoding="utf-8")
    finally:
        sys.setrecursionlimit(limit)
    assert cli.main(["grammar", "--schema", str(path)]) == 2
    line = _one_error_line(capsys)
    assert f"{path}: #: schema nested" in line and "at most 128 are supported" in line, line


@pytest.mark.parametrize("kind", ["items", "properties", "anyOf", "allOf"])
def test_schema_just_inside_the_limit_compiles(tmp_path, capsys, kind):
    n = {"items": 127, "properties": 63, "anyOf": 63, "allOf": 63}[kind]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_nested(kind, n)), encoding="utf-8")
    assert cli.main(["grammar", "--schema", str(path)]) == 0
    assert "root ::=" in capsys.readouterr().out


def test_recursive_ref_through_anyof_index_compiles_to_recursive_rules(tmp_path, capsys):
    schema = {"type": "object", "properties": {"node": {"anyOf": [
        {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/properties/node/anyOf/0"}}}},
        {"type": "string"}]}}}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    assert cli.main(["grammar", "--schema", str(path)]) == 0
    assert "root ::=" in capsys.readouterr().out


def test_left_recursive_ref_is_one_line(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"anyOf": [{"$ref": "#"}, {"type": "string"}]}), encoding="utf-8")
    assert cli.main(["grammar", "--schema", str(path)]) == 2
    assert "a $ref cycle that consumes no input" in _one_error_line(capsys)


# -- many optional properties (row 5) ----------------------------------------------------------


@needs_llama
def test_many_optional_properties_compile_quickly_or_are_refused_quickly(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(400)}}),
                    encoding="utf-8")
    start = time.perf_counter()
    assert cli.main(["grammar", "--schema", str(path)]) == 0
    assert time.perf_counter() - start < 10
    path.write_text(json.dumps({"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(3000)}}),
                    encoding="utf-8")
    start = time.perf_counter()
    assert cli.main(["grammar", "--schema", str(path)]) == 2
    assert time.perf_counter() - start < 10
    assert _one_error_line(capsys).endswith("#/properties: 3000 properties; at most 1000 per object are supported")


# -- grammar-check: empty, rootless, refused grammars (rows 4, 38) ------------------------------


@needs_llama
@pytest.mark.parametrize(("text", "reason"), [
    ("", "the grammar is empty (no rules)"),
    ("\n\n   \n", "the grammar is empty (no rules)"),
    ("# a comment only\n", "the grammar is empty (no rules)"),
    ('foo ::= "a"\n', "the grammar has no 'root' rule (its start symbol)"),
    ('rooty ::= "a"\n', "the grammar has no 'root' rule (its start symbol)"),
    ('root ::= root "a"\n', "llama.cpp's grammar parser rejected it: unsupported grammar, left recursion detected"),
    ("root ::= missing\n", "llama.cpp's grammar parser rejected it: parse: error parsing grammar: Undefined rule"),
    ('root ::= "a\n', "llama.cpp's grammar parser rejected it: parse: error parsing grammar:"),
])
def test_grammar_check_refuses_empty_rootless_and_broken_grammars_with_a_reason(tmp_path, capsys, text, reason):
    path = tmp_path / "g.gbnf"
    path.write_text(text, encoding="utf-8")
    assert cli.main(["grammar-check", "--grammar", str(path), "--text", "anything at all"]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"eris-lab: error: {path}: {reason}"), line
    assert "no message" not in line


@needs_llama
def test_grammar_check_reason_survives_a_loaded_vocabulary(tmp_path, capsys):
    """The reason was lost once a model load had filled llama.cpp's log ("no message")."""
    from eris_lab.grammar.oracle import oracle

    judge = oracle()  # loads the vocabulary: many log lines
    from eris_lab.errors import SchemaError

    with pytest.raises(SchemaError) as exc:
        judge.sampler('root ::= root "a"')
    assert "left recursion" in str(exc.value)


@needs_llama
def test_failed_grammar_redirect_leaves_nothing_that_accepts(tmp_path, capsys):
    schema = tmp_path / "bad.json"
    schema.write_text("{", encoding="utf-8")
    out = tmp_path / "g.gbnf"
    assert cli.main(["grammar", "--schema", str(schema)]) == 2
    out.write_text(capsys.readouterr().out, encoding="utf-8")  # what `> g.gbnf` leaves: nothing
    assert cli.main(["grammar-check", "--grammar", str(out), "--text", "{}"]) == 2


# -- tool names through the command line (rows 2, 3) --------------------------------------------


@needs_llama
@pytest.mark.parametrize("name", ['q"uote', "back\\slash", "root", "root!", "space", "string"])
def test_grammar_check_judges_tool_names_exactly(tmp_path, capsys, name):
    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps([{"name": name, "description": "d", "parameters": {
        "type": "object", "properties": {"r": {"type": "integer"}}, "required": ["r"]}}]), encoding="utf-8")
    assert cli.main(["grammar", "--catalog", str(catalog), "--offer", name]) == 0
    gbnf = tmp_path / "g.gbnf"
    gbnf.write_text(capsys.readouterr().out, encoding="utf-8")

    def verdict(text: str) -> int:
        return cli.main(["grammar-check", "--grammar", str(gbnf), "--text", text])

    call = {"thought": "", "status": "call", "message": None, "tool_calls": [{"name": name, "arguments": {"r": 5}}]}
    assert verdict(json.dumps(call)) == 0
    assert verdict('{"r": 5}') == 1
    if json.dumps(name) != f'"{name}"':
        assert verdict(json.dumps(call).replace(json.dumps(name), f'"{name}"')) == 1
