"""Catalogue loaders (TOML, OpenAI, MCP), their errors, and the routing text."""

from __future__ import annotations

import json

import pytest

from eris_lab.catalog import (Catalog, Tool, enrich_for_routing, load, routing_phrases,
                              tools_from_json)
from eris_lab.errors import CatalogError

GOOD_TOML = '''
domain = "clock"

[[tools]]
name = "clock:now"
short_description = "Current time in a time zone."
routing_hints = ["what time is it", "wie spät ist es"]

[tools.parameters]
type = "object"
required = ["tz"]

[tools.parameters.properties.tz]
type = "string"
'''


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_load_toml_folder(tmp_path):
    write(tmp_path / "clock.toml", GOOD_TOML)
    catalog = load(tmp_path)
    assert catalog.names == ("clock:now",)
    tool = catalog.tool("clock:now")
    assert tool.domain == "clock" and tool.parameters["required"] == ["tz"]
    assert tool.description == "Current time in a time zone."


def test_load_openai_functions_plain_and_wrapped(tmp_path):
    plain = {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {}}}
    wrapped = {"type": "function", "function": {"name": "set_timer", "description": "Timer.",
                                                "parameters": {"type": "dict", "properties": {"s": {"type": "float"}}}}}
    catalog = load(write(tmp_path / "tools.json", json.dumps([plain, wrapped])))
    assert catalog.names == ("get_weather", "set_timer")
    assert catalog.tool("set_timer").parameters == {"type": "object", "properties": {"s": {"type": "number"}}}


def test_load_mcp_tools_list_and_jsonrpc_wrapper(tmp_path):
    result = {"tools": [{"name": "read_file", "description": "Read a file.",
                         "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}]}
    assert load(write(tmp_path / "a.json", json.dumps(result))).names == ("read_file",)
    rpc = {"jsonrpc": "2.0", "id": 1, "result": result}
    assert load(write(tmp_path / "b.json", json.dumps(rpc))).names == ("read_file",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("domain = 'clock'\n[[tools]\n", "not valid TOML"),
        ("[[tools]]\nshort_description = 'x'\n", "tools[0]: missing required field 'name'"),
        ("[[tools]]\nname = 'clock:now'\n", "tools[0]: missing required field 'short_description'"),
        ("[[tools]]\nname = 'clock:now'\nshort_description = 'x'\nparameters = { type = 5 }\n",
         "tools[0].parameters: #/type: not a JSON Schema: 5 is not valid under any of the given schemas"),
        ("domain = 'clock'\n[[tools]]\nname = 'mail:read'\nshort_description = 'x'\n",
         "tools[0].name: tool 'mail:read' is not in this file's domain; expected 'clock:<verb>'"),
        ("title = 'nothing'\n", "tools: expected at least one [[tools]] table"),
    ],
)
def test_load_toml_errors_name_file_and_field(tmp_path, text, message):
    path = write(tmp_path / "clock.toml", text)
    with pytest.raises(CatalogError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}:")
    assert message in str(info.value)


def test_load_duplicate_names_across_files(tmp_path):
    write(tmp_path / "a.toml", GOOD_TOML)
    write(tmp_path / "b.toml", GOOD_TOML)
    with pytest.raises(CatalogError) as info:
        load(tmp_path)
    assert str(info.value) == (f"{tmp_path / 'b.toml'}: tools[0].name: duplicate tool name 'clock:now' "
                               f"(first defined in {tmp_path / 'a.toml'})")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"foo": 1}, "expected a list of OpenAI functions or an MCP tools/list result"),
        ([{"description": "x"}], "[0]: missing required field 'name'"),
        ([{"name": "a"}], "[0]: missing required field 'description'"),
        ([{"name": "a", "description": "x", "parameters": []}], "[0].parameters: expected a JSON Schema object, got list"),
        ([{"name": "a", "description": "x", "parameters": {"type": "string"}}],
         "[0].parameters.type: expected an object schema (type 'object'), got type 'string'"),
        ({"tools": "nope"}, "tools: expected a list, got str"),
    ],
)
def test_json_catalogue_errors(data, message):
    with pytest.raises(CatalogError) as info:
        tools_from_json(data, source="t.json")
    assert message in str(info.value)


def test_load_missing_path_and_unknown_format(tmp_path):
    with pytest.raises(CatalogError, match="no such file or folder"):
        load(tmp_path / "missing.json")
    with pytest.raises(CatalogError, match="unknown catalogue format '.yaml'"):
        load(write(tmp_path / "x.yaml", "a: 1"))
    with pytest.raises(CatalogError, match="no \\*.toml descriptor files"):
        load(tmp_path)


def test_load_bad_json(tmp_path):
    with pytest.raises(CatalogError, match=r"not valid JSON \(line 1"):
        load(write(tmp_path / "x.json", "[{"))


def test_enrich_for_routing_order_hints_then_fallback_then_description():
    hinted = Tool(name="weather:current", description="d", short_description="Now.", routing_hints=("is it raining",))
    assert enrich_for_routing(hinted) == "weather current: Now.; is it raining"
    fallback = Tool(name="set_timer", description="Start a countdown.")
    assert enrich_for_routing(fallback).startswith("set timer: Start a countdown.; start a countdown timer")
    assert routing_phrases(fallback) == (enrich_for_routing(fallback),)  # no hints: one text
    assert routing_phrases(hinted) == ("weather current: Now.", "is it raining")
    bare = Tool(name="zork", description="Plays a text adventure.")
    assert enrich_for_routing(bare) == "zork: Plays a text adventure."


def test_catalog_clusters_and_domains():
    catalog = Catalog.from_names(["a:x", "b:y", "a:z", "plain"])
    assert catalog.domains == ("a", "b")
    assert catalog.cluster("a") == ("a:x", "a:z") and catalog.cluster("") == ()
    with pytest.raises(KeyError, match="unknown tool 'nope'"):
        catalog.tool("nope")


def test_require_returns_the_names_or_names_the_first_unknown_tool():
    catalog = Catalog.from_names(["a:x", "b:y"], source="two.json")
    assert catalog.require(["b:y", "a:x"], where="--offer") == ("b:y", "a:x")
    with pytest.raises(CatalogError) as exc:
        catalog.require(["a:x", "nope", "zz"], where="--recent")
    assert str(exc.value) == "--recent: unknown tool 'nope'; not in the catalogue two.json"
