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
import re
from typing import Any, Iterable, Mapping

from .errors import SchemaError

__all__ = ["BFCL_TYPE_ALIASES", "normalize_types", "pointer", "resolve_local_ref", "check", "validate", "clear_cache", "sample",
           "described_example", "is_placeholder", "FORMAT_TEMPLATES", "FORMAT_VALUES"]

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


def _walk_pointer(document: Any, ref: str) -> tuple[Any, tuple[Any, ...]] | None:
    """``(node, path)`` a local ``$ref`` leads to (RFC 6901 escapes and percent-encoding; list
    indices as ints in ``path``), or None when it points at nothing."""
    from urllib.parse import unquote

    node, parts = document, []
    path = unquote(ref[1:])
    for raw in path.split("/")[1:] if path else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
            parts.append(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
            parts.append(int(part))
        else:
            return None
    return node, tuple(parts)


def resolve_local_ref(document: Any, ref: str) -> tuple[bool, Any]:
    """Follow a local ``$ref`` (``"#/$defs/x"``, RFC 6901 escapes and percent-encoding) through
    ``document``: ``(True, node)``, or ``(False, None)`` when it points at nothing."""
    found = _walk_pointer(document, ref)
    return (True, found[0]) if found is not None else (False, None)


def _check_local_refs(schema: Any, where: str) -> None:
    """Every local ``$ref`` pointer (``#/...``) of ``schema`` points at something: a new user's
    catalogue with ``"$ref": "#/defs/nope"`` loaded and routed, and failed only later, in the
    grammar compiler, on a line that did not name the file. A remote reference (``http://...``,
    ``other.json#/x``) is refused here too: nothing here fetches it, so no grammar could ever be
    compiled (a helper's bad input, 2026-12-05). Anchors (``#name``) are the compiler's to refuse."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(schema, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                raise SchemaError(f"only local $ref ('#...') are supported; got {ref!r}",
                                  where=f"{where}{pointer(path + ('$ref',))}")
            if isinstance(ref, str) and ref.startswith("#") and (ref == "#" or ref.startswith("#/")):
                if not resolve_local_ref(schema, ref)[0]:
                    raise SchemaError(f"$ref {ref!r} points at nothing in this schema",
                                      where=f"{where}{pointer(path + ('$ref',))}")
            stack.extend((value, path + (key,)) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, path + (i,)) for i, value in enumerate(node))


def _check_recursion_ends(schema: dict, where: str) -> None:
    """A recursive ``$ref`` has a base case: some finite value is valid at every ``$ref``.

    A least fixpoint over the schema's objects: an object is *productive* when its ``$ref``
    target, some ``anyOf``/``oneOf`` branch, every required property and (with ``minItems >= 1``)
    its ``items`` are. Boolean schemas count as productive, so only recursion can fail here; an
    ``allOf`` merged into itself is left to the compiler, which names it so. The grammar compiler refuses the same schemas later
    (``_analysis.unproductive``); a catalogue with ``{"$ref": "#/$defs/a"}`` as ``a`` itself was
    routed and offered before that (a helper's bad input, 2026-12-05).
    """
    nodes: dict[tuple[Any, ...], dict] = {}
    stack: list[tuple[Any, tuple[Any, ...]]] = [(schema, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            nodes[path] = node
            stack.extend((value, path + (key,)) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, path + (i,)) for i, value in enumerate(node))
    productive: set[tuple[Any, ...]] = set()

    def holds(value: Any, path: tuple[Any, ...]) -> bool:
        return not isinstance(value, dict) or path in productive

    def ends(node: dict, path: tuple[Any, ...]) -> bool:
        ref = node.get("$ref")
        if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
            target = _walk_pointer(schema, ref)  # resolves: _check_local_refs ran first
            if target is not None and target[1] not in productive:
                return False
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list) and branches and not any(
                    holds(v, path + (key, i)) for i, v in enumerate(branches)):
                return False
        properties = node.get("properties")
        if isinstance(properties, dict) and isinstance(node.get("required"), list):
            if not all(holds(properties[r], path + ("properties", r))
                       for r in node["required"] if isinstance(r, str) and r in properties):
                return False
        min_items = node.get("minItems", 0)
        if isinstance(min_items, int) and min_items >= 1 and not holds(node.get("items"), path + ("items",)):
            return False
        return True

    changed = True
    while changed:
        changed = False
        for path, node in nodes.items():
            if path not in productive and ends(node, path):
                productive.add(path)
                changed = True
    stuck = sorted((p for p, n in nodes.items() if p not in productive and "$ref" in n), key=len)
    if stuck:
        raise SchemaError("recursive $ref without a base case: no finite value is valid",
                          where=f"{where}{pointer(stuck[0] + ('$ref',))}")


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
        ``<where>#/path: not a JSON Schema: <jsonschema's message>``, a schema that is neither
        an object nor a boolean, a local ``$ref`` that points at nothing, or a recursive
        ``$ref`` without a base case.
    """
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaError(f"expected a JSON Schema object, got {type(schema).__name__}", where=where or "#")
    _check_local_refs(schema, where)
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        key = None
    if key is not None and key in _CHECKED:
        return
    if key is None or '"$ref"' in key:  # most tools hold no $ref: no walk for them
        _check_recursion_ends(schema, where)
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


# ---------------------------------------------------------------------------------------------
# A plausible value for a schema (few-shot examples, notebook 04's accepted replies)
# ---------------------------------------------------------------------------------------------

#: Format templates a description may state (``"in the format of 'City, State'"``), each with a
#: value written in it. Matched case-sensitively as written in BFCL 2026.3.23 descriptions
#: (``multiple``, ``live_multiple``), longest first. A template is never copied as a value.
FORMAT_TEMPLATES: dict[str, str] = {
    "YYYY-MM-DDTHH:MM:SS": "2024-06-15T09:30:00",
    "YYYY-MM-DD HH:MM:SS": "2024-06-15 09:30:00",
    "City, State (abbr)": "Boston, MA",
    "City, State": "Boston, MA",
    "city, state": "Boston, MA",
    "City, Country": "Paris, France",
    "YYYY-MM-DD": "2024-06-15",
    "MM/DD/YYYY": "06/15/2024",
    "DD/MM/YYYY": "15/06/2024",
    "MM-DD-YYYY": "06-15-2024",
    "DD-MM-YYYY": "15-06-2024",
    "HH:MM:SS": "09:30:00",
    "HH:MM": "09:30",
    "YYYY": "2024",
}
#: JSON Schema ``format`` values (draft 2020-12, section 7.3) -> a value in that format.
FORMAT_VALUES: dict[str, str] = {
    "date": "2024-06-15", "date-time": "2024-06-15T09:30:00Z", "time": "09:30:00Z", "email": "alex@example.com",
    "uri": "https://example.com/page", "url": "https://example.com/page", "hostname": "example.com",
    "ipv4": "192.168.1.10", "ipv6": "2001:db8::1", "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "duration": "PT30M",
}
#: Parameter-name words -> a plausible string value (first match in the name wins). Written for
#: this project; the words are the commonest string parameter names of BFCL's ``simple_python`` and
#: ``live_simple`` (categories the generation benchmark never reports).
NAME_VALUES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("email",), "alex@example.com"),
    (("url", "link", "website"), "https://example.com/page"),
    (("date", "day"), "2024-06-15"),
    (("time",), "09:30"),
    (("city", "location", "place", "destination", "origin", "address", "region"), "Boston, MA"),
    (("country",), "France"),
    (("language", "lang"), "English"),
    (("currency",), "EUR"),
    (("unit", "units"), "metric"),
    (("id", "identifier", "code"), "A1024"),
    (("path", "file", "filename", "directory", "folder"), "notes/today.txt"),
    (("timezone", "tz"), "Europe/Berlin"),
    (("user", "username", "author", "person", "player", "artist", "owner", "customer", "recipient"), "Alex Morgan"),
    (("company", "organization", "organisation", "brand"), "Acme Corp"),
    (("team",), "Chicago Bulls"),
    (("title", "subject"), "Weekly report"),
    (("message", "text", "content", "body", "note", "comment"), "See you at noon"),
    (("query", "search", "keyword", "keywords", "term", "topic", "q"), "electric cars"),
    (("color", "colour"), "blue"),
    (("category", "genre", "type", "kind"), "general"),
    (("status", "state"), "active"),
)
#: Integer and number parameter-name words -> a plausible value (clamped into the schema's range).
NUMBER_VALUES: tuple[tuple[tuple[str, ...], float], ...] = (
    (("year",), 2024), (("age",), 30), (("page",), 1), (("month",), 6), (("hour", "hours"), 9),
    (("lat", "latitude"), 40.71), (("lon", "lng", "longitude"), -74.01),
    (("price", "amount", "cost", "budget", "salary"), 250), (("percent", "percentage", "rate"), 5),
    (("days", "day", "nights", "weeks"), 3), (("minutes", "seconds", "duration"), 15),
)
#: A value that reads as a placeholder, not a value (``<city>``, ``'string'``, ``...``, ``YYYY-MM``).
_PLACEHOLDER_RE = re.compile(r"[<>{}\[\]]|\.\.\.|^(string|value|text|str|example|xxx+|foo|bar|null|none|n/a|tbd)$"
                             r"|^[YMDHS:/\- T]+$", re.I)
_QUOTED_RE = re.compile(r"'([^']{1,60})'|\"([^\"]{1,60})\"|`([^`]{1,60})`")
#: An example a description offers: "e.g. 'X'", "for example X", "such as X".
_EXAMPLE_RE = re.compile(r"(?:e\.g\.?|eg\.|for example|for instance|such as|like)[,:]?\s*"
                         r"(?:'([^']{1,60})'|\"([^\"]{1,60})\"|`([^`]{1,60})`|([A-Za-z0-9][^,.;()]{0,40}))", re.I)


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z][a-z]*|[0-9]+", name)]


def is_placeholder(value: str) -> bool:
    """Whether ``value`` reads as a placeholder a model would copy (``<city>``, ``string``, ``YYYY-MM-DD``)."""
    text = value.strip()
    return not text or bool(_PLACEHOLDER_RE.search(text)) or text in FORMAT_TEMPLATES


def described_example(description: str) -> str | None:
    """A value a parameter description offers as an example (``e.g. 'San Francisco, CA'``), or the
    value of a format template it states (:data:`FORMAT_TEMPLATES`); None when it offers neither.

    Quoted examples are preferred; a placeholder (:func:`is_placeholder`) is never returned.
    """
    for match in _EXAMPLE_RE.finditer(description or ""):
        quoted = match.group(1) or match.group(2) or match.group(3)
        value = (quoted or match.group(4) or "").strip()
        if value and not is_placeholder(value) and (quoted or len(value.split()) <= 3):
            return value
        if quoted:  # "e.g. '<city>' or 'Denver, CO'": a further quoted value of the same sentence
            rest = description[match.end():].split(". ")[0]
            for more in _QUOTED_RE.finditer(rest):
                value = next(g for g in more.groups() if g is not None).strip()
                if not is_placeholder(value):
                    return value
    for template in sorted(FORMAT_TEMPLATES, key=len, reverse=True):
        if template in (description or ""):
            return FORMAT_TEMPLATES[template]
    return None


def _clamp(value: float, schema: Mapping[str, Any], integer: bool) -> float:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if isinstance(schema.get("exclusiveMinimum"), (int, float)):
        lo = schema["exclusiveMinimum"] + (1 if integer else 0.5)
    if isinstance(schema.get("exclusiveMaximum"), (int, float)):
        hi = schema["exclusiveMaximum"] - (1 if integer else 0.5)
    if isinstance(lo, (int, float)) and value < lo:
        value = lo
    if isinstance(hi, (int, float)) and value > hi:
        value = hi
    return value


def _named(table, name: str):
    words = _words(name)
    for keys, value in table:
        if any(k in words for k in keys):
            return value
    return None


def _generic(name: str) -> str:
    """A value for a string parameter no table knows: its name words title-cased and numbered
    (``project_name`` -> ``"Project 1"``, ``court`` -> ``"Court 1"``), or a person for ``name``."""
    words = [w for w in _words(name) if w != "name"]
    if not words:
        return "Alex Morgan" if _words(name) else "Item 1"
    return " ".join(w.title() for w in words[:3]) + " 1"


def sample(schema: Any, *, name: str = "", optional: bool = False, _depth: int = 0) -> Any:
    """A plausible JSON value that is valid under a simple ``schema``, for worked examples.

    Parameters
    ----------
    schema : mapping
        A JSON Schema (BFCL type aliases normalised first, :func:`normalize_types`).
    name : str
        The parameter's name: picks a plausible value (:data:`NAME_VALUES`, :data:`NUMBER_VALUES`).
    optional : bool, default False
        Objects: fill every property, not only the required ones (the first one when none is
        required, so a worked example shows at least one value).

    Returns
    -------
    JSON value
        In this order of preference: ``const``; the schema's own ``examples`` or ``default``; the
        first ``enum`` value; a ``format``'s value; an example or format template the description
        states (:func:`described_example`); a value for the name; a generic value of the type.
        Numbers are clamped into ``minimum``/``maximum``; strings into ``minLength``/``maxLength``.
        The result may still fail a ``pattern``: callers validate (:func:`validate`).

    Notes
    -----
    Issue 17, lever 4: "synthesised from the schema (required arguments, enum values, formats)";
    never a placeholder (a 270M model copies what the prompt shows, issue 17's raw outputs).
    """
    if not isinstance(schema, Mapping) or _depth > 16:
        return None
    if "const" in schema:
        return schema["const"]
    for key in ("examples", "default"):
        value = schema.get(key)
        if key == "examples" and isinstance(value, list) and value:
            value = value[0]
        if value is not None and key in schema and not (isinstance(value, str) and is_placeholder(value)):
            if validate(schema, value) is None:
                return value
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            options = [s for s in schema[key] if not (isinstance(s, Mapping) and s.get("type") == "null")]
            return sample((options or schema[key])[0], name=name, optional=optional, _depth=_depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    description = str(schema.get("description", ""))
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
        required = [k for k in schema.get("required", ()) or () if isinstance(k, str)]
        keys = list(props) if optional else ([k for k in props if k in required] + [k for k in required if k not in props]
                                             or list(props)[:1])
        return {k: sample(props.get(k, {}), name=k, _depth=_depth + 1) for k in keys}
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), Mapping) else {}
        n = max(1, int(schema.get("minItems", 0) or 0))
        if isinstance(schema.get("maxItems"), int):
            n = min(n, schema["maxItems"])
        singular = name[:-1] if name.endswith("s") else name
        return [sample(items, name=singular, _depth=_depth + 1) for _ in range(n)]
    if kind in ("integer", "number"):
        guess = _named(NUMBER_VALUES, name)
        value = _clamp(guess if guess is not None else (3 if kind == "integer" else 2.5), schema, kind == "integer")
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    if kind == "string" or kind is None:
        value = (FORMAT_VALUES.get(str(schema.get("format", ""))) or described_example(description)
                 or _named(NAME_VALUES, name) or _generic(name))
        lo, hi = int(schema.get("minLength", 0) or 0), schema.get("maxLength")
        if isinstance(hi, int) and len(value) > hi:
            value = value[:hi]
        if len(value) < lo:
            value = value + "x" * (lo - len(value))
        return value
    return None
