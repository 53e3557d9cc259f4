"""JSON Schema, one owner: BFCL's type aliases, the meta-schema check, argument validation, JSON Pointers.

Every module that reads a tool's JSON Schema goes through here: the catalogue loader (is it a JSON
Schema?), the grammar compiler (the same check, cached: a router compiles the same tools turn
after turn), the executor (do these arguments validate?) and schema recovery (which argument
failed?). Every path is a JSON Pointer (RFC 6901) written with a leading ``#``: ``#/properties/x``
inside a schema, ``#/until/delay_minutes`` inside arguments. Validation is ``jsonschema``'s, with
the draft the schema declares (2020-12 when it declares none).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable, Mapping

from .errors import SchemaError

__all__ = ["BFCL_TYPE_ALIASES", "normalize_types", "pointer", "check", "validate", "clear_cache"]

#: BFCL writes Python-ish type names into its schemas; they mean these JSON Schema types.
#: Source: BFCL ``multiple.json`` / ``live_multiple.json`` (``dict``, ``float``, ``tuple``, ``any``).
BFCL_TYPE_ALIASES: dict[str, str | None] = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "list": "array",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
    "any": None,  # no type constraint
}

#: Schemas that passed the meta-schema check (canonical JSON text), bounded.
_CHECKED: set[str] = set()
_MAX_CHECKED = 4096
#: SHA-256 digests of schemas that passed in an earlier process (:func:`_known_good`), read once.
_KNOWN_GOOD: set[str] | None = None
#: Bumped when :func:`check`'s rule changes, so digests written under the old rule are not trusted.
_KNOWN_GOOD_VERSION = 1


def normalize_types(schema: Any) -> Any:
    """Return a copy of ``schema`` with BFCL's type aliases (:data:`BFCL_TYPE_ALIASES`) replaced.

    ``{"type": "dict"}`` becomes ``{"type": "object"}``; ``"any"`` drops the ``type`` key.
    Data keywords (``enum``, ``const``, ``default``, ``examples``) are copied untouched; everything
    else is copied unchanged, recursively.
    """
    if isinstance(schema, list):
        return [normalize_types(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str) and value in BFCL_TYPE_ALIASES:
            alias = BFCL_TYPE_ALIASES[value]
            if alias is not None:
                out[key] = alias
        elif key == "type" and isinstance(value, list):
            types = [BFCL_TYPE_ALIASES.get(v, v) if isinstance(v, str) else v for v in value]
            if None not in types:
                out[key] = types
        elif key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
            out[key] = {k: normalize_types(v) for k, v in value.items()}
        elif key in ("enum", "const", "default", "examples"):
            out[key] = value  # data, not schema: never rewrite
        else:
            out[key] = normalize_types(value)
    return out


def pointer(parts: Iterable[Any]) -> str:
    """A JSON Pointer with a leading ``#``: ``("a", 0, "b/c")`` -> ``"#/a/0/b~1c"`` (RFC 6901 escapes)."""
    return "#" + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _validator_class(schema: Mapping[str, Any]):
    import jsonschema
    from jsonschema.validators import validator_for

    return validator_for(schema, default=jsonschema.Draft202012Validator)


def check(schema: Any, *, where: str = "") -> None:
    """Raise :class:`SchemaError` unless ``schema`` is a JSON Schema (a boolean or an object).

    Parameters
    ----------
    schema : dict or bool
    where : str
        Prefix of the error's location, e.g. ``"clock:now: "``; the JSON Pointer into the
        schema follows it.

    Raises
    ------
    SchemaError
        ``<where>#/path: not a JSON Schema: <jsonschema's message>``, or a schema that is neither
        an object nor a boolean.
    """
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaError(f"expected a JSON Schema object, got {type(schema).__name__}", where=where or "#")
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        key = None
    if key is not None and key in _CHECKED:
        return
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest() if key is not None else None
    if digest is not None and digest in _known_good():
        _CHECKED.add(key)  # passed in an earlier process: jsonschema (1.6 s to import) is not needed
        return
    import jsonschema

    try:
        _validator_class(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise SchemaError(f"not a JSON Schema: {exc.message}", where=f"{where}{pointer(exc.path)}") from None
    if key is not None:
        if len(_CHECKED) >= _MAX_CHECKED:
            _CHECKED.clear()
        _CHECKED.add(key)
        _remember_good(digest)


def _known_good_path():
    from ._files import cache_dir

    return cache_dir() / "schemas" / f"checked-v{_KNOWN_GOOD_VERSION}.txt"


def _known_good() -> set[str]:
    """Digests of schemas that passed :func:`check` before (one per line in the cache), read once.

    The warm start of ``eris-lab route`` loads a catalogue whose schemas were all checked on an
    earlier run; importing jsonschema alone takes 1.6 s on a 2-core box (its format checkers),
    more than the whole route. A line that is not a digest is ignored, never trusted.
    """
    global _KNOWN_GOOD
    if _KNOWN_GOOD is None:
        try:
            lines = _known_good_path().read_text(encoding="ascii").split()
        except (OSError, UnicodeDecodeError):
            lines = []
        _KNOWN_GOOD = {line for line in lines if len(line) == 64 and all(c in "0123456789abcdef" for c in line)}
    return _KNOWN_GOOD


def _remember_good(digest: str | None) -> None:
    if digest is None or digest in _known_good() or len(_KNOWN_GOOD) >= 20 * _MAX_CHECKED:
        return
    _KNOWN_GOOD.add(digest)
    try:
        path = _known_good_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="ascii") as handle:  # one short line per append: no torn digests
            handle.write(digest + "\n")
    except OSError:
        pass  # a read-only cache only costs the next start the import


def clear_cache() -> None:
    """Forget which schemas passed :func:`check` in this process (a benchmark timing cold compiles calls it)."""
    global _KNOWN_GOOD
    _CHECKED.clear()
    _KNOWN_GOOD = None


def validate(schema: Mapping[str, Any], instance: Any) -> tuple[str, str] | None:
    """The most relevant violation of ``schema`` by ``instance``, or None when it validates.

    Returns
    -------
    (str, str) or None
        ``(JSON Pointer into the instance, jsonschema's message)``, e.g.
        ``("#/until/delay_minutes", "0 is less than the minimum of 1")``; ``format`` is checked.

    Raises
    ------
    jsonschema.SchemaError
        ``schema`` itself is broken (the caller decides whose fault that is).
    """
    import jsonschema

    cls = _validator_class(schema)
    error = jsonschema.exceptions.best_match(cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(instance))
    return None if error is None else (pointer(error.absolute_path), error.message)
