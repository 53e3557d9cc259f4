"""eris_lab.schema: BFCL type aliases, the meta-schema check, argument validation, JSON Pointers."""

from __future__ import annotations

import pytest

from eris_lab import schema
from eris_lab.errors import SchemaError
from eris_lab.schema import normalize_types


def test_normalize_types_keeps_data_untouched():
    schema = {"type": "dict", "properties": {"mode": {"type": "string", "enum": ["dict", "any"]},
                                             "x": {"type": "any"}, "t": {"type": "tuple", "items": {"type": "int"}}}}
    out = normalize_types(schema)
    assert out == {"type": "object", "properties": {"mode": {"type": "string", "enum": ["dict", "any"]},
                                                    "x": {}, "t": {"type": "array", "items": {"type": "integer"}}}}


def test_pointer_escapes_tilde_and_slash():
    assert schema.pointer(()) == "#"
    assert schema.pointer(("properties", "a/b", 0, "c~d")) == "#/properties/a~1b/0/c~0d"


def test_check_names_the_pointer_into_the_schema():
    with pytest.raises(SchemaError) as exc:
        schema.check({"type": "object", "properties": {"a/b": {"type": 5}}}, where="clock:now: ")
    assert str(exc.value) == ("clock:now: #/properties/a~1b/type: not a JSON Schema: "
                              "5 is not valid under any of the given schemas")
    with pytest.raises(SchemaError, match="expected a JSON Schema object, got list"):
        schema.check([])
    schema.check(True)  # a boolean schema is a schema


def test_validate_returns_the_pointer_into_the_arguments():
    s = {"type": "object", "properties": {"until": {"type": "object", "properties": {
        "delay_minutes": {"type": "integer", "minimum": 1}}}}, "required": ["until"]}
    assert schema.validate(s, {"until": {"delay_minutes": 5}}) is None
    assert schema.validate(s, {"until": {"delay_minutes": 0}}) == ("#/until/delay_minutes",
                                                                   "0 is less than the minimum of 1")
    assert schema.validate(s, {}) == ("#", "'until' is a required property")
    assert schema.validate({"type": "string", "format": "date"}, "2026-13-45") == ("#", "'2026-13-45' is not a 'date'")
