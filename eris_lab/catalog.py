"""The tool catalogue: records for tools, and loaders for the three formats the lab reads.

Formats (DESIGN.md "Command-line contract"):

* a folder of TOML descriptors (one file per domain, ``[[tools]]`` tables), or one TOML file;
* a JSON list of OpenAI-style functions ``{"name", "description", "parameters"}``, optionally
  wrapped as ``{"type": "function", "function": {...}}``;
* an MCP ``tools/list`` result ``{"tools": [{"name", "description", "inputSchema"}]}``
  (or the JSON-RPC response that wraps it in ``"result"``).

Every error names the file and the field at fault (``CatalogError.where``), modelled on
pypa/packaging's ``pylock.py`` getters.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ._files import load_json_file, load_toml_file, nesting_depth, repo_root
from .errors import CatalogError, SchemaError
from .lexicon import FALLBACK_PHRASES
from .schema import check, normalize_types

__all__ = [
    "Tool",
    "lexical_text",
    "schema_texts",
    "Example",
    "Catalog",
    "load",
    "domain_of",
    "family_of",
    "base_name",
    "toolkit_of",
    "name_words",
    "VARIANT_MARK",
    "enrich_for_routing",
    "routing_phrases",
]

_NAME_WORD_RE = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")


def domain_of(name: str) -> str:
    """Return a tool name's domain: the text before the first ``:``, or ``""`` when it has none.

    Notes
    -----
    DESIGN.md: "A tool's domain is the text before the first ``:``; a name without a domain has
    no affinity."
    """
    head, sep, _ = name.partition(":")
    return head if sep else ""


#: A pooled catalogue keeps several schemas under one name as ``name~2``, ``name~3``, ...
#: (``eval.datasets`` "Pooling"); everything that groups tools reads the name before it.
VARIANT_MARK = "~"


def family_of(tool: Tool) -> str:
    """A tool's family: its domain, else the first sentence of its description, lower-cased.

    Notes
    -----
    BFCL's multi-turn API classes have no domains, but every function of a class opens its
    description with the same sentence ("This tool belongs to the vehicle control system, ...");
    dialog memory and companions stay within one family (issue 15).
    """
    return domain_of(tool.name) or tool.description.split(".")[0].strip().lower()


def base_name(name: str) -> str:
    """A tool's name without its pooled variant suffix: ``'f~2'`` -> ``'f'``; other names unchanged."""
    return name.split(VARIANT_MARK, 1)[0]


def toolkit_of(name: str) -> str:
    """A tool's family (toolkit): its domain (before ``:``), else the prefix before the last ``.``, else the name.

    ``'mail:send'`` -> ``'mail'``; ``'ChaDri.change_drink'`` -> ``'ChaDri'``; ``'get_weather'`` -> itself.
    A pooled variant suffix (``name~2``) is ignored. The one tool-family function: toolkit pruning,
    keyword groups, the evaluation's per-domain table and the plots group tools by it.
    """
    base = base_name(name)
    domain = domain_of(base)
    if domain:
        return domain
    head, dot, _ = base.rpartition(".")
    return head if dot else base


def name_words(name: str) -> tuple[str, ...]:
    """Split a tool name into lower-case words: ``'agenda:remind_at'`` -> ``('agenda', 'remind', 'at')``."""
    return tuple(w.lower() for w in _NAME_WORD_RE.findall(name))


@dataclass(frozen=True, kw_only=True, slots=True)
class Example:
    """A worked example from a descriptor: a user text, the arguments a call should carry, why."""

    text: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    rationale: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Tool:
    """One callable tool.

    Attributes
    ----------
    name : str
        Unique name, ``domain:verb`` in the demo catalogue; any string elsewhere.
    description : str
        What the tool does (the bare description other routers embed).
    parameters : Mapping
        JSON Schema of the arguments (BFCL type aliases already normalised).
    short_description, when_to_use, when_not_to_use : str
        Descriptor prose; empty for OpenAI/MCP tools.
    routing_hints : tuple of str
        Domain-anchored phrases (English and German) that the router embeds.
    keywords : tuple of str
        Extra words that mark a short message as a tool request (see ``router.is_conversational``).
    examples_good, examples_bad : tuple of Example
    access : {"", "read", "write"}
        Whether calling the tool changes state: descriptor field ``access``, or an MCP tool's
        ``annotations.readOnlyHint``; ``""`` when the source does not say (``meta.access_of``
        then reads the verb of the name).
    source : str
        File the tool came from (for error messages and the catalogue notebook).
    companions : tuple of str
        Tools this one is useless without in one turn (descriptor field ``companions``; the
        offer overlay adds them, ``eris_lab.companions``).
    returns : Mapping
        JSON Schema of the result when the source gives one (BFCL ``response``, MCP
        ``outputSchema``); ``{}`` otherwise. Read for companions inferred from schemas.
    """

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    short_description: str = ""
    when_to_use: str = ""
    when_not_to_use: str = ""
    routing_hints: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    examples_good: tuple[Example, ...] = ()
    examples_bad: tuple[Example, ...] = ()
    access: str = ""
    source: str = ""
    companions: tuple[str, ...] = ()
    returns: Mapping[str, Any] = field(default_factory=dict)

    @property
    def domain(self) -> str:
        """The domain (text before the first ``:``), ``""`` when the name has none."""
        return domain_of(self.name)

    def to_openai(self) -> dict[str, Any]:
        """The tool as an OpenAI ``{"type": "function", "function": {...}}`` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.short_description or self.description,
                "parameters": json.loads(json.dumps(self.parameters)),
            },
        }


class Catalog(Sequence[Tool]):
    """An ordered, name-unique collection of tools (registry order is the file order).

    Parameters
    ----------
    tools : iterable of Tool
    source : str, optional
        Where it was loaded from, for messages.

    Raises
    ------
    CatalogError
        Two tools share a name.
    """

    def __init__(self, tools: Iterable[Tool], *, source: str = "") -> None:
        self._tools: tuple[Tool, ...] = tuple(tools)
        self.source = source
        self._by_name: dict[str, Tool] = {}
        per_source: dict[str, int] = {}  # index within the tool's own file, as the loader reports it
        for tool in self._tools:
            i = per_source.get(tool.source, 0)
            per_source[tool.source] = i + 1
            if tool.name in self._by_name:
                first = self._by_name[tool.name].source or source
                raise CatalogError(
                    f"duplicate tool name {tool.name!r} (first defined in {first})",
                    where=f"{tool.source or source}: tools[{i}].name",
                )
            self._by_name[tool.name] = tool
        self._names: tuple[str, ...] = tuple(t.name for t in self._tools)
        self._position: dict[str, int] = {name: i for i, name in enumerate(self._names)}
        self._derived: dict[str, Any] = {}
        self._domains: dict[str, tuple[str, ...]] = {}
        for tool in self._tools:
            if tool.domain:
                self._domains.setdefault(tool.domain, ())
                self._domains[tool.domain] += (tool.name,)

    # Sequence protocol -----------------------------------------------------------------------
    def __getitem__(self, index):  # type: ignore[override]
        return self._tools[index]

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __repr__(self) -> str:
        return f"Catalog({len(self)} tools, {len(self._domains)} domains, source={self.source!r})"

    # Lookups ---------------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        """All tool names in registry order."""
        return self._names

    def position(self, name: str) -> int:
        """Registry index of ``name``; ``len(self)`` for a name not in the catalogue (sorts last)."""
        return self._position.get(name, len(self._names))

    def derived(self, key: str, factory: Callable[["Catalog"], Any]) -> Any:
        """Data derived from this catalogue, computed once (a catalogue never changes after loading).

        Guards and routers use it for per-catalogue tables (tool keywords, the fetch tool), so a
        100,000-tool catalogue is not rescanned for every message.
        """
        if key not in self._derived:
            self._derived[key] = factory(self)
        return self._derived[key]

    @property
    def domains(self) -> tuple[str, ...]:
        """Domains in order of first appearance (tools without a domain are not listed)."""
        return tuple(self._domains)

    def tool(self, name: str) -> Tool:
        """The tool called ``name``. Raises ``KeyError`` naming the unknown tool."""
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"unknown tool {name!r}") from None

    def require(self, names: Iterable[str], *, where: str) -> tuple[str, ...]:
        """``names`` as a tuple, once every one of them is a tool of this catalogue.

        The one check behind every flag or file that names tools (``--recent``, ``--offer``,
        ``--hits``, an offer handed to the prompt or the grammar, a query set's gold tools).

        Raises
        ------
        CatalogError
            ``<where>: unknown tool 'x'; not in the catalogue <source>`` for the first unknown name.
        """
        names = tuple(names)
        for name in names:
            if name not in self._by_name:
                raise CatalogError(f"unknown tool {name!r}; not in the catalogue {self.source}", where=where)
        return names

    def cluster(self, domain: str) -> tuple[str, ...]:
        """Every tool name of ``domain`` in registry order (empty for ``""`` or an unknown domain)."""
        return self._domains.get(domain, ())

    def seat_domains(self, names: Iterable[str], budget: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Seat whole domains of ``names`` in rank order until ``budget`` tools are seated.

        Each name brings its whole domain (``cluster``; a domainless name is a domain of its own),
        its ranked members first; a domain that would overflow ``budget`` is skipped unless nothing
        is seated yet. The one owner of "the cap never amputates a domain's verbs" (DESIGN.md
        ``offer_cap``), used by ``offer.build``'s cap and ``policy.decide``'s ranked widening.

        Returns
        -------
        (tuple of str, tuple of str)
            The seated names, and the seated domain keys (a domainless name keyed by itself).
        """
        names = list(dict.fromkeys(names))
        seated: list[str] = []
        result: list[str] = []
        for name in names:
            key = domain_of(name) or f"\0{name}"  # a domainless tool is a domain of its own
            if key in seated:
                continue
            family = self.cluster(key) if domain_of(name) else (name,)
            ordered = [n for n in names if (domain_of(n) or f"\0{n}") == key] + [n for n in family if n not in names]
            if result and len(result) + len(ordered) > budget:
                continue
            seated.append(key)
            result.extend(ordered)
            if len(result) >= budget:
                break
        return tuple(result), tuple(k.lstrip("\0") for k in seated)

    @classmethod
    def from_names(cls, names: Iterable[str], *, source: str = "names") -> "Catalog":
        """A catalogue of bare names (no schema), for policy work with injected hits."""
        return cls((Tool(name=n, description=n.replace(":", " ").replace("_", " ")) for n in names), source=source)


# ---------------------------------------------------------------------------------------------
# Routing text
# ---------------------------------------------------------------------------------------------


def routing_phrases(tool: Tool) -> tuple[str, ...]:
    """The phrases that stand for this tool in routing; the router embeds each and averages them.

    Order of sources (this function alone owns it): the descriptor's ``routing_hints`` win;
    a tool without hints gets phrases from :data:`~eris_lab.lexicon.FALLBACK_PHRASES` for the words of its name;
    a tool matching neither is routed on its bare description. The name's words and the short
    description always come first, so the vector stays anchored to what the tool is.

    Returns
    -------
    tuple of str
        A tool with hints: the head, then each hint (averaged as separate vectors). A tool without
        hints: ONE text, the head with its fallback phrases and description appended.

    Notes
    -----
    Measured with all-MiniLM-L6-v2 (``python -m eris_lab.bench strategies``): averaging separately
    embedded hints put the right demo tool first for 73.5% of data/demo_queries.jsonl against
    64.3% for one joined text; for BFCL's bare descriptions one text did better (live_multiple
    top-1 0.885 against 0.854 when its generic fallback phrases were averaged in).
    """
    words = " ".join(name_words(tool.name))
    head = tool.short_description or tool.description
    parts = [f"{words}: {head}".strip(": ")]
    if tool.routing_hints:
        parts.extend(tool.routing_hints)
        return tuple(dict.fromkeys(p.strip() for p in parts if p.strip()))
    for word in dict.fromkeys(name_words(tool.name)):
        parts.extend(FALLBACK_PHRASES.get(word, ()))
    if tool.short_description and tool.description != tool.short_description:
        parts.append(tool.description)
    return ("; ".join(dict.fromkeys(p.strip() for p in parts if p.strip())),)


def enrich_for_routing(tool: Tool) -> str:
    """The routing text of a tool as one line: :func:`routing_phrases` joined by ``"; "``.

    Lexical strategies (BM25, keyword groups) index this text; the router embeds the phrases
    one by one and averages them (``router.embed_tools``).
    """
    return "; ".join(routing_phrases(tool))


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------


def _with_known_companions(catalog: Catalog) -> Catalog:
    """``catalog``, once every declared companion names one of its tools: a misspelt companion
    was dropped without a word (a helper's bad input, 2026-12-05). Checked where a file loads,
    not in ``Catalog`` itself: a subset (a case's candidates) may leave a companion out."""
    for tool in catalog:
        unknown = next((c for c in tool.companions if c not in catalog), None)
        if unknown is not None:
            close = difflib.get_close_matches(unknown, catalog.names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise CatalogError(f"companion {unknown!r} is not a tool of this catalogue{hint}",
                               where=f"{tool.source or catalog.source}: {tool.name}: companions")
    return catalog


def load(path: str | os.PathLike[str] | None = None) -> Catalog:
    """Load a catalogue from a descriptors folder, a TOML file or a JSON file.

    Parameters
    ----------
    path : path-like, optional
        Default: the ``descriptors/`` folder of the repository.

    Returns
    -------
    Catalog
        Tools in file order (files of a folder sorted by name).

    Raises
    ------
    CatalogError
        Missing path, bad TOML or JSON, a tool without name or description, duplicate names,
        ``parameters`` that are not a JSON Schema, a companion that is no tool of the file (or
        folder), or an empty folder. ``where`` names file and field.
    """
    path = Path(path) if path is not None else default_descriptors()
    if path.is_dir():
        files = sorted(path.glob("*.toml"))
        if not files:
            raise CatalogError("no *.toml descriptor files in this folder", where=str(path))
        tools: list[Tool] = []
        for file in files:
            tools.extend(_load_toml_file(file))
        return _with_known_companions(Catalog(tools, source=str(path)))
    if not path.exists():
        if path.is_symlink():  # exists() is False for a loop too; "no such file" misled (a helper's bad input)
            raise CatalogError("a symbolic link that leads to no file (a loop, or its target is gone)",
                               where=str(path))
        raise CatalogError("no such file or folder", where=str(path))
    if path.suffix == ".toml":
        return _with_known_companions(Catalog(_load_toml_file(path), source=str(path)))
    if path.suffix in (".json", ".jsonl"):
        return _with_known_companions(Catalog(_load_json_file(path), source=str(path)))
    raise CatalogError(
        f"unknown catalogue format {path.suffix!r}; expected a folder, .toml or .json", where=str(path)
    )


def default_descriptors() -> Path:
    """The repository's ``descriptors/`` folder (next to the package)."""
    return repo_root() / "descriptors"


def _load_toml_file(path: Path) -> list[Tool]:
    data = load_toml_file(path, error=CatalogError)
    entries = data.get("tools")
    if not isinstance(entries, list) or not entries:
        raise CatalogError("expected at least one [[tools]] table", where=f"{path}: tools")
    domain = data.get("domain")
    if domain is not None and (not isinstance(domain, str) or not domain.strip()):
        raise CatalogError(f"expected a non-empty string, got {domain!r}", where=f"{path}: domain")
    tools = []
    for i, entry in enumerate(entries):
        where = f"{path}: tools[{i}]"
        if not isinstance(entry, dict):
            raise CatalogError(f"expected a table, got {type(entry).__name__}", where=where)
        tool = _tool_from_mapping(entry, where=where, source=str(path), descriptor=True)
        if domain is not None and tool.domain != domain:
            raise CatalogError(
                f"tool {tool.name!r} is not in this file's domain; expected '{domain}:<verb>'",
                where=f"{where}.name",
            )
        tools.append(tool)
    return tools


def _load_json_file(path: Path) -> list[Tool]:
    data = load_json_file(path, error=CatalogError)
    return tools_from_json(data, source=str(path))


def tools_from_json(data: Any, *, source: str = "<json>") -> list[Tool]:
    """Tools from parsed JSON: an OpenAI function list (plain or wrapped) or an MCP tools/list result.

    Raises
    ------
    CatalogError
        The shape is none of those, or an entry is malformed.
    """
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        data = data["result"]  # a JSON-RPC response around tools/list
    if isinstance(data, dict) and "tools" in data:
        entries, key = data["tools"], "tools"
    elif isinstance(data, list):
        entries, key = data, ""
    else:
        raise CatalogError(
            "expected a list of OpenAI functions or an MCP tools/list result {\"tools\": [...]}",
            where=source,
        )
    if not isinstance(entries, list):
        raise CatalogError(f"expected a list, got {type(entries).__name__}", where=f"{source}: {key}")
    tools = []
    for i, entry in enumerate(entries):
        where = f"{source}: {key}[{i}]" if key else f"{source}: [{i}]"
        if isinstance(entry, dict) and entry.get("type") == "function" and "function" in entry:
            entry, where = entry["function"], f"{where}.function"
        if not isinstance(entry, dict):
            raise CatalogError(f"expected an object, got {type(entry).__name__}", where=where)
        tools.append(_tool_from_mapping(entry, where=where, source=source, descriptor=False))
    return tools


def _get_str(entry: Mapping[str, Any], key: str, where: str, *, required: bool) -> str:
    value = entry.get(key)
    if value is None:
        if required:
            raise CatalogError(f"missing required field {key!r}", where=where)
        return ""
    if not isinstance(value, str):
        raise CatalogError(f"expected a string, got {type(value).__name__}", where=f"{where}.{key}")
    if required and not value.strip():
        raise CatalogError("must not be empty", where=f"{where}.{key}")
    if key == "name" and "," in value:  # commas separate names in --offer / --offered
        raise CatalogError(f"a tool name may not hold a comma, got {value.strip()!r}", where=f"{where}.{key}")
    return value.strip()


def _get_str_list(entry: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CatalogError("expected a list of strings", where=f"{where}.{key}")
    return tuple(v.strip() for v in value if v.strip())


def _get_examples(entry: Mapping[str, Any], key: str, where: str) -> tuple[Example, ...]:
    value = entry.get(key, [])
    if not isinstance(value, list):
        raise CatalogError("expected a list of example tables", where=f"{where}.{key}")
    out = []
    for j, ex in enumerate(value):
        w = f"{where}.{key}[{j}]"
        if not isinstance(ex, dict):
            raise CatalogError(f"expected a table, got {type(ex).__name__}", where=w)
        arguments = ex.get("arguments", {})
        if not isinstance(arguments, dict):
            raise CatalogError("expected a table of arguments", where=f"{w}.arguments")
        out.append(
            Example(
                text=_get_str(ex, "text", w, required=True),
                arguments=arguments,
                rationale=_get_str(ex, "rationale", w, required=False),
            )
        )
    return tuple(out)


def _tool_from_mapping(entry: Mapping[str, Any], *, where: str, source: str, descriptor: bool) -> Tool:
    name = _get_str(entry, "name", where, required=True)
    if descriptor:
        short = _get_str(entry, "short_description", where, required=False)
        description = _get_str(entry, "description", where, required=False) or short
        if not description:
            raise CatalogError("missing required field 'short_description'", where=where)
    else:
        short = ""
        description = _get_str(entry, "description", where, required=True)
    if "parameters" in entry:
        schema_key = "parameters"
    elif "inputSchema" in entry:
        schema_key = "inputSchema"
    elif "input_schema" in entry:
        schema_key = "input_schema"
    else:
        schema_key = ""
    parameters = entry.get(schema_key) if schema_key else {"type": "object", "properties": {}}
    parameters = _check_parameters(parameters, f"{where}.{schema_key or 'parameters'}")
    return Tool(
        name=name,
        description=description,
        parameters=parameters,
        short_description=short,
        when_to_use=_get_str(entry, "when_to_use", where, required=False),
        when_not_to_use=_get_str(entry, "when_not_to_use", where, required=False),
        routing_hints=_get_str_list(entry, "routing_hints", where),
        keywords=_get_str_list(entry, "keywords", where),
        examples_good=_get_examples(entry, "examples_good", where),
        examples_bad=_get_examples(entry, "examples_bad", where),
        access=_get_access(entry, where),
        source=source,
        companions=_get_str_list(entry, "companions", where),
        returns=_get_returns(entry),
    )


def _get_returns(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The result schema: BFCL's ``response`` or MCP's ``outputSchema`` when it is an object, else ``{}``."""
    for key in ("response", "outputSchema", "output_schema"):
        value = entry.get(key)
        if isinstance(value, dict):
            return value
    return {}


#: Values of a descriptor's optional ``access`` field.
ACCESS_VALUES = ("read", "write")


def _get_access(entry: Mapping[str, Any], where: str) -> str:
    """``access`` of a descriptor, else an MCP ``annotations.readOnlyHint``, else ``""``."""
    value = entry.get("access")
    if value is not None:
        if value not in ACCESS_VALUES:
            raise CatalogError(f"expected one of {ACCESS_VALUES}, got {value!r}", where=f"{where}.access")
        return value
    annotations = entry.get("annotations")
    if isinstance(annotations, dict) and isinstance(annotations.get("readOnlyHint"), bool):
        return "read" if annotations["readOnlyHint"] else "write"
    return ""


#: Deepest nesting (JSON objects and arrays) of one tool's ``parameters``: 32 levels of
#: ``properties``. Real tool schemas nest fewer than 15; the bound keeps every recursive walk of a
#: schema (``jsonschema``'s meta-schema check, the grammar compiler) far from Python's recursion limit.
MAX_SCHEMA_NESTING = 64


def _check_parameters(schema: Any, where: str) -> dict[str, Any]:
    """Normalise BFCL aliases and check ``schema`` against the JSON Schema meta-schema (``schema.check``)."""
    if not isinstance(schema, dict):
        raise CatalogError(f"expected a JSON Schema object, got {type(schema).__name__}", where=where)
    if nesting_depth(schema) > MAX_SCHEMA_NESTING:
        # The meta-schema check and the grammar compiler walk a schema recursively, several
        # frames per level: past this bound they would die of a RecursionError.
        raise CatalogError(f"schema nested deeper than {MAX_SCHEMA_NESTING} levels of objects/arrays, "
                           "the limit for a tool's parameters", where=where)
    schema = normalize_types(schema)
    try:
        check(schema, where=f"{where}: ")
    except SchemaError as exc:
        raise CatalogError(exc.message, where=exc.where) from None
    kind = schema.get("type", "object")
    if kind != "object":
        raise CatalogError(f"expected an object schema (type 'object'), got type {kind!r}", where=f"{where}.type")
    return schema


def schema_texts(schema: Any, depth: int = 0) -> list[str]:
    """Parameter descriptions and string enum values of a JSON Schema, nested ones included (depth <= 6)."""
    if depth > 6:
        return []
    if isinstance(schema, Mapping):
        out = [schema["description"]] if isinstance(schema.get("description"), str) else []
        out += [v for v in schema.get("enum", ()) if isinstance(v, str)] if isinstance(schema.get("enum"), list) else []
        for key, value in schema.items():
            if key in ("properties", "$defs", "definitions") and isinstance(value, Mapping):
                for sub in value.values():
                    out += schema_texts(sub, depth + 1)
            elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
                out += schema_texts(value, depth + 1)
        return out
    if isinstance(schema, list):
        return [text for sub in schema for text in schema_texts(sub, depth + 1)]
    return []


def lexical_text(tool: Tool) -> str:
    """The text a tool's lexical terms come from: its name words, description, keywords and its
    parameters' descriptions and enum values (the router's lexical index, the relevance rule ``policy.uncovered``)."""
    return " ".join([tool.name.replace("_", " ").replace(":", " "), tool.description or "",
                     " ".join(tool.keywords), *schema_texts(tool.parameters)])
