"""Search, describe, execute: three meta-tools instead of a routed catalogue in the prompt.

Instead of routing before the model, the model is offered three tools and looks tools up itself:

* ``tool_search(query, k)`` -> compact hits: name, shortened description, required and a few
  optional parameter names, read or write;
* ``tool_describe(name)`` -> that tool's full JSON Schema;
* ``tool_execute(name, arguments)`` -> runs it through ``execution.execute`` (gate, validate, label).

Search is hybrid: BM25 (``strategies.bm25.BM25Index`` over field-weighted terms) and embeddings
(``router.embed_tools``), fused by reciprocal rank (``strategies.hybrid.reciprocal_rank_fusion``).
When the embedder is unavailable (``None``, or it raises :class:`EmbedError`), a keyword fallback
scores word-boundary matches over name, domain, curated search terms (descriptor
``keywords`` and ``routing_hints``) and description. Both paths share one tokenizer, with the
German-English alias table :data:`~eris_lab.lexicon.ALIASES` and umlaut folding.

Permissions are not ranking. :class:`MetaSession` decides what is *executable* in one place
(:meth:`MetaSession.permitted`): a tool outside the allowed catalogue never is; in a read-only
session a write tool never is (:func:`access_of`). Search may rank such a tool first; it still
cannot be executed, on either search path, and the grammar cannot even name it.

Grammars (``eris_lab.grammar``): :meth:`MetaSession.grammar` is the reply envelope over the meta-
tools; ``tool_execute.name`` is an enum of the executable names the last search returned (or,
with ``scope="catalogue"``, of every executable tool), and once a tool was described its
``arguments`` follow that tool's schema (a ``oneOf`` over names; undescribed tools take any
object). :meth:`MetaSession.execute_grammar` is the same for the bare ``tool_execute`` arguments.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, Mapping

import numpy as np

from ..catalog import Catalog, Tool, base_name, domain_of, name_words
from ..errors import EmbedError, ErisLabError
from ..lexicon import ALIASES, READ_VERBS, STOPWORDS, WRITE_ALIAS_GROUPS, WRITE_VERBS
from ..offer import Offer
from ..policy import Hit
from ..schema import validate
from ..strategies.bm25 import BM25Index
from ..strategies.hybrid import reciprocal_rank_fusion

__all__ = [
    "META_TOOLS",
    "META_NAMES",
    "SearchHit",
    "ToolSearch",
    "MetaSession",
    "access_of",
    "meta_catalog",
    "entry_prompt",
    "META_INSTRUCTIONS",
    "terms",
]

# ---------------------------------------------------------------------------------------------
# Weights and bounds (the word lists are in lexicon.py)
# ---------------------------------------------------------------------------------------------

#: Field weights of the keyword fallback: a query term counts once, with its best field.
KEYWORD_WEIGHTS: dict[str, float] = {"name": 3.0, "domain": 2.0, "terms": 1.5, "description": 1.0}
#: Read preference: a query without a write verb scores read tools this fraction higher (both
#: paths), so "overdue tasks" lists before it edits. Ranking only; permissions never read it.
READ_BONUS = 0.1
#: Optional parameter names a search hit shows.
MAX_OPTIONAL = 3
#: Longest description a search hit shows, in characters.
MAX_HIT_DESCRIPTION_CHARS = 100
#: Longest query the search accepts, in characters.
MAX_QUERY_CHARS = 200


# ---------------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------------

_FOLD = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})
_WORD_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFC", text.lower()).translate(_FOLD)
    return text.replace("_", " ").replace(":", " ").replace(".", " ")


def _stem(word: str) -> str:
    """A light plural strip (``emails`` -> ``email``); no other stemming."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _alias_index() -> tuple[dict[str, set[str]], dict[tuple[str, ...], set[str]]]:
    words: dict[str, set[str]] = {}
    phrases: dict[tuple[str, ...], set[str]] = {}
    for group, members in ALIASES.items():
        for member in members:
            parts = tuple(_stem(w) for w in _WORD_RE.findall(_fold(member)))
            if len(parts) == 1:
                words.setdefault(parts[0], set()).add(group)
                for piece in parts[0].split("-"):  # "e-mail" -> also "mail"'s group via "mail"
                    if piece in words and piece != parts[0]:
                        words[parts[0]] |= words[piece]
            elif parts:
                phrases.setdefault(parts, set()).add(group)
    return words, phrases


_ALIAS_WORDS, _ALIAS_PHRASES = _alias_index()


def terms(text: str) -> tuple[str, ...]:
    """Search terms of a text: folded, stemmed words (stopwords dropped) plus alias groups ``@group``.

    ``"Archiviere die E-Mails"`` -> ``('archiviere', '@archive', 'e-mail', '@mail', 'e', 'mail')``
    (order of first appearance; hyphenated words also yield their parts).

    Returns
    -------
    tuple of str
        Unique terms; alias groups are prefixed with ``@`` so they never collide with a word.
    """
    words = [_stem(w) for w in _WORD_RE.findall(_fold(text))]
    out: list[str] = []
    for i, word in enumerate(words):
        if word in STOPWORDS:
            continue
        out.append(word)
        out.extend(f"@{g}" for g in sorted(_ALIAS_WORDS.get(word, ())))
        if "-" in word:
            for piece in word.split("-"):
                if piece and piece not in STOPWORDS:
                    out.append(piece)
                    out.extend(f"@{g}" for g in sorted(_ALIAS_WORDS.get(piece, ())))
    for phrase, groups in _ALIAS_PHRASES.items():
        n = len(phrase)
        if any(tuple(words[i:i + n]) == phrase for i in range(len(words) - n + 1)):
            out.extend(f"@{g}" for g in sorted(groups))
    return tuple(dict.fromkeys(out))


def _has_write_intent(query_terms: Iterable[str]) -> bool:
    return any(t in WRITE_VERBS or t in WRITE_ALIAS_GROUPS for t in query_terms)





# ---------------------------------------------------------------------------------------------
# Access
# ---------------------------------------------------------------------------------------------


def access_of(tool: Tool) -> Literal["read", "write"]:
    """Whether calling ``tool`` only reads (``"read"``) or may change state (``"write"``).

    Order: the tool's own ``access`` (descriptor field ``access``, or MCP
    ``annotations.readOnlyHint``); else the words of its verb (the name after the domain):
    any word in :data:`~eris_lab.lexicon.WRITE_VERBS` -> write; else any word in :data:`~eris_lab.lexicon.READ_VERBS` -> read;
    else write (fail closed: an unknown verb is never treated as harmless).
    """
    if tool.access in ("read", "write"):
        return tool.access  # type: ignore[return-value]
    base = base_name(tool.name)
    verb = base.partition(":")[2] if domain_of(base) else base
    words = [_stem(w) for w in name_words(verb)] + list(name_words(verb))
    if any(w in WRITE_VERBS for w in words):
        return "write"
    if any(w in READ_VERBS for w in words):
        return "read"
    return "write"


# ---------------------------------------------------------------------------------------------
# The meta-tools
# ---------------------------------------------------------------------------------------------

_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                  "description": "What the user wants done, in a few words."},
        "k": {"type": "integer", "minimum": 1, "maximum": 5, "description": "How many hits (default 5)."},
    },
    "required": ["query"],
    "additionalProperties": False,
}
_DESCRIBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 200,
                            "description": "A tool name from tool_search."}},
    "required": ["name"],
    "additionalProperties": False,
}
_EXECUTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 200,
                 "description": "A tool name from tool_search."},
        "arguments": {"type": "object", "description": "The tool's arguments (see tool_describe)."},
    },
    "required": ["name", "arguments"],
    "additionalProperties": False,
}

#: The three meta-tools, as catalogue tools with JSON Schemas.
META_TOOLS: tuple[Tool, ...] = (
    Tool(name="tool_search", description="Find tools for a task. Returns the best matching tools: "
         "name, what it does, required and optional parameters, read or write.",
         parameters=_SEARCH_SCHEMA, access="read", source="meta"),
    Tool(name="tool_describe", description="Show the full argument schema of one tool found by tool_search.",
         parameters=_DESCRIBE_SCHEMA, access="read", source="meta"),
    Tool(name="tool_execute", description="Run one tool found by tool_search with its arguments.",
         parameters=_EXECUTE_SCHEMA, access="write", source="meta"),
)
META_NAMES: tuple[str, ...] = tuple(t.name for t in META_TOOLS)


#: Longest piece of a rejected argument quoted back in an error (a 1 MB value is never echoed).
MAX_QUOTED_CHARS = 120


def check_arguments(name: str, schema: Mapping[str, Any], arguments: Any) -> str | None:
    """An error text when ``arguments`` break ``schema`` (the tool's advertised input schema), else None.

    The text names the tool and the JSON Pointer of the argument at fault, with jsonschema's
    reason; quoted values are cut to :data:`MAX_QUOTED_CHARS` characters, so an oversized value
    is not sent back to the client.
    """
    problem = validate(schema, arguments)
    if problem is None:
        return None
    path, message = problem
    message = re.sub(r"'((?:[^'\\]|\\.){%d})(?:[^'\\]|\\.)+'" % MAX_QUOTED_CHARS,
                     lambda m: f"'{m.group(1)}...' ({len(m.group(0))} characters)", message)
    if len(message) > 4 * MAX_QUOTED_CHARS:  # a value quoted some other way: keep the reason at the end
        message = f"{message[: 2 * MAX_QUOTED_CHARS]} ... {message[-MAX_QUOTED_CHARS:]}"
    return f"{name}: invalid arguments at {path}: {message}"


def meta_catalog() -> Catalog:
    """The three meta-tools as a catalogue (the static entry a model or MCP client sees)."""
    return Catalog(META_TOOLS, source="meta")


#: How the meta-tools are used, for the model; the first line of :func:`entry_prompt`.
META_INSTRUCTIONS = (
    "You cannot see the tools directly. Call tool_search with what the user wants, then "
    "tool_execute with a name from its hits (tool_describe shows a tool's arguments)."
)


def entry_prompt() -> str:
    """The meta-tool entry of a first prompt: instructions plus the three tools with schemas."""
    from ..prompt import full

    return META_INSTRUCTIONS + "\n\n" + full(meta_catalog())


# ---------------------------------------------------------------------------------------------
# Search
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class SearchHit:
    """One search result, compact enough for a small model's prompt.

    Attributes
    ----------
    name : str
    score : float
        Fused score (RRF on the hybrid path, weighted term matches on the keyword path);
        comparable only within one search.
    description : str
        Shortened to :data:`MAX_HIT_DESCRIPTION_CHARS`.
    required, optional : tuple of str
        Required parameter names; up to :data:`MAX_OPTIONAL` optional ones.
    access : {"read", "write"}
    executable : bool
        Whether this session may execute it (:meth:`MetaSession.permitted`).
    """

    name: str
    score: float
    description: str
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    access: str = "write"
    executable: bool = False

    def to_json(self) -> dict[str, Any]:
        """The hit as the ``tool_search`` result entry (score rounded)."""
        return {"name": self.name, "description": self.description, "required": list(self.required),
                "optional": list(self.optional), "access": self.access, "executable": self.executable}


def _short_description(tool: Tool) -> str:
    text = " ".join((tool.short_description or tool.description.split(". ")[0]).split())
    if len(text) <= MAX_HIT_DESCRIPTION_CHARS:
        return text
    return text[: MAX_HIT_DESCRIPTION_CHARS - 1].rstrip() + "…"


def _parameter_names(tool: Tool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    props = tool.parameters.get("properties") or {}
    required = tuple(n for n in tool.parameters.get("required") or () if isinstance(n, str))
    optional = tuple(n for n in props if n not in required)[:MAX_OPTIONAL]
    return required, optional


class ToolSearch:
    """A search index over one catalogue: hybrid BM25 + embeddings, or keyword fallback.

    Parameters
    ----------
    catalog : Catalog
    embedder : Embedder or None
        ``None`` (or an embedder that raises :class:`EmbedError`) selects the keyword fallback.
    tool_vectors : ndarray, optional
        ``(n_tools, dim)`` precomputed routing vectors (skips embedding the catalogue).

    Attributes
    ----------
    last_mode : {"hybrid", "keyword", ""}
        The path the last :meth:`search` took.
    """

    def __init__(self, catalog: Catalog, embedder: Any = None, *, tool_vectors: np.ndarray | None = None) -> None:
        self.catalog = catalog
        self.embedder = embedder
        self.last_mode = ""
        self._vectors = tool_vectors
        self._embed_failed = embedder is None
        self._fields = [self._tool_fields(t) for t in catalog]
        self._bm25 = None

    @staticmethod
    def _tool_fields(tool: Tool) -> dict[str, frozenset[str]]:
        base = base_name(tool.name)
        curated = " ".join(tool.keywords + tool.routing_hints)
        return {
            "name": frozenset(terms(" ".join(name_words(base)))),
            "domain": frozenset(terms(domain_of(base))),
            "terms": frozenset(terms(curated)),
            "description": frozenset(terms(" ".join([tool.short_description, tool.description]))),
        }

    # -- lexical ------------------------------------------------------------------------------
    def keyword_scores(self, query: str) -> np.ndarray:
        """Keyword fallback scores ``(n_tools,)``: per query term its best field weight, summed.

        A read tool gains :data:`READ_BONUS` per matched term when the query has no write verb.
        """
        q = terms(query)
        write_intent = _has_write_intent(q)
        scores = np.zeros(len(self.catalog), dtype=np.float64)
        for i, (tool, fields) in enumerate(zip(self.catalog, self._fields)):
            total = 0.0
            for term in q:
                best = max((KEYWORD_WEIGHTS[f] for f, words in fields.items() if term in words), default=0.0)
                total += best
            if total and not write_intent and access_of(tool) == "read":
                total += READ_BONUS * total
            scores[i] = total
        return scores

    def _bm25_index(self) -> BM25Index:
        if self._bm25 is None:
            # field weights as repetition: name words thrice, domain twice, the rest once
            weighted = [list(f["name"]) * 3 + list(f["domain"]) * 2 + list(f["terms"]) + list(f["description"])
                        for f in self._fields]
            self._bm25 = BM25Index(weighted, analyzer=terms)
        return self._bm25

    def bm25_scores(self, query: str) -> np.ndarray:
        """BM25 scores ``(n_tools,)`` of the query's terms (:func:`terms`) over each tool's fields."""
        return self._bm25_index().scores(query).astype(np.float64)

    # -- dense ---------------------------------------------------------------------------------
    def dense_scores(self, query: str) -> np.ndarray | None:
        """Cosines ``(n_tools,)`` of the query with each tool's routing vector; None when unavailable."""
        if self._embed_failed:
            return None
        try:
            from ..embed import normalize_rows
            from ..router import embed_tools

            if self._vectors is None:
                self._vectors = embed_tools(self.catalog, self.embedder.embed)
            from ..router import gloss_german

            gloss = gloss_german(query)  # the bundled MiniLM is English-only (lexicon.GERMAN_GLOSSES)
            q = normalize_rows(self.embedder.embed([f"{query} ({gloss})" if gloss else query]))
            return (q @ normalize_rows(self._vectors).T)[0].astype(np.float64)
        except EmbedError:
            self._embed_failed = True
            return None

    # -- fused ---------------------------------------------------------------------------------
    def scores(self, query: str) -> tuple[np.ndarray, str]:
        """Scores ``(n_tools,)`` and the path taken (``"hybrid"`` or ``"keyword"``); 0 = no match."""
        dense = self.dense_scores(query)
        if dense is None:
            return self.keyword_scores(query), "keyword"
        fused = reciprocal_rank_fusion([self.bm25_scores(query), dense], positive_only=(True, False))
        q = terms(query)
        if not _has_write_intent(q):
            reads = np.array([access_of(t) == "read" for t in self.catalog])
            fused = fused * (1.0 + READ_BONUS * reads)
        return fused, "hybrid"

    def search(self, query: str, k: int = 5) -> tuple[Hit, ...]:
        """The ``k`` best tools for ``query``, score descending (ties in catalogue order).

        Returns
        -------
        tuple of Hit
            Only tools with a positive score; on the hybrid path every tool has one, so the
            dense ranking always fills ``k``.
        """
        scores, self.last_mode = self.scores(query[:MAX_QUERY_CHARS])
        order = np.argsort(-scores, kind="stable")
        names = self.catalog.names
        return tuple(Hit(name=names[i], score=float(scores[i])) for i in order[:max(k, 0)] if scores[i] > 0)


# ---------------------------------------------------------------------------------------------
# Session
# ---------------------------------------------------------------------------------------------


class MetaSession:
    """The meta-tool state of one conversation: last search, described tools, permissions.

    Parameters
    ----------
    catalog : Catalog
        Every tool search can find.
    embedder : Embedder or None
        ``None`` = keyword fallback only.
    allowed : iterable of str, optional
        The allowed catalogue; default every tool. A tool outside it is never executable.
    read_only : bool
        A read-only session never executes a write tool (:func:`access_of`).
    scope : {"search", "catalogue"}
        What ``tool_execute`` may name: the executable names the last search returned
        (default), or every executable tool.
    show_forbidden : bool
        Show non-executable tools in search results (flagged ``executable: false``); default
        they are left out.
    session : loop.Session, optional
        Executors' state (agenda, vault); default a fresh temporary session on first execute.
    executors : mapping, optional
        Tool name -> ``fn(arguments, session)``; default ``tools.EXECUTORS``.
    searcher : ToolSearch, optional
        A prepared index (shared between sessions over one catalogue).
    progress : bool
        Force the dialogue forward in the grammar: right after a search with executable hits the
        offer is ``tool_describe`` + ``tool_execute`` (no second search), right after a describe
        it is ``tool_execute`` alone. Default False (every meta-tool stays on offer). Measured
        reason: the bundled base model repeats ``tool_search`` until its step budget runs out
        (``python -m eris_lab.bench meta``).

    Attributes
    ----------
    last_search : tuple of str
        Names the last ``tool_search`` returned, best first.
    last_ranked : tuple of Hit
        The last search's whole ranking (every tool with a positive score, executable or not).
    described : tuple of str
        Tools ``tool_describe`` showed, in order.
    """

    def __init__(self, catalog: Catalog, embedder: Any = None, *, allowed: Iterable[str] | None = None,
                 read_only: bool = False, scope: Literal["search", "catalogue"] = "search",
                 show_forbidden: bool = False, session: Any = None,
                 executors: Mapping[str, Callable[..., Any]] | None = None,
                 searcher: ToolSearch | None = None, progress: bool = False) -> None:
        if scope not in ("search", "catalogue"):
            raise ErisLabError(f"expected 'search' or 'catalogue', got {scope!r}", where="scope")
        self.catalog = catalog
        self.allowed = frozenset(catalog.names if allowed is None else allowed)
        self.read_only = read_only
        self.scope = scope
        self.show_forbidden = show_forbidden
        self.session = session
        self.executors = executors
        self.searcher = searcher if searcher is not None else ToolSearch(catalog, embedder)
        self.last_search: tuple[str, ...] = ()
        self.last_ranked: tuple[Hit, ...] = ()
        self.described: tuple[str, ...] = ()
        self.history: list[dict[str, Any]] = []
        self.progress = progress

    # -- permissions (the one place) -----------------------------------------------------------
    def permitted(self, name: str) -> tuple[bool, str]:
        """Whether ``name`` may be executed in this session, and why not (``""`` when it may)."""
        if name not in self.catalog:
            return False, f"{name!r} is not in the catalogue"
        if name not in self.allowed:
            return False, f"{name!r} is not in the allowed catalogue"
        if self.read_only and access_of(self.catalog.tool(name)) != "read":
            return False, f"{name!r} changes state and this session is read-only"
        return True, ""

    @property
    def executable(self) -> tuple[str, ...]:
        """Names ``tool_execute`` may name now, in order (see ``scope``)."""
        pool = self.last_search if self.scope == "search" else self.catalog.names
        return tuple(n for n in pool if self.permitted(n)[0])

    # -- the three meta-tools ------------------------------------------------------------------
    def search(self, query: str, k: int = 5) -> dict[str, Any]:
        """``tool_search``: compact hits; updates :attr:`last_search`.

        Returns
        -------
        dict
            ``{"query", "mode", "hits": [SearchHit.to_json()...]}``; ``mode`` is ``hybrid`` or
            ``keyword``.
        """
        query = " ".join(str(query).split())[:MAX_QUERY_CHARS]
        k = max(1, min(int(k), 5))
        ranked = self.last_ranked = self.searcher.search(query, k=len(self.catalog))
        hits: list[SearchHit] = []
        for hit in ranked:
            ok, _ = self.permitted(hit.name)
            if not ok and not self.show_forbidden:
                continue
            tool = self.catalog.tool(hit.name)
            required, optional = _parameter_names(tool)
            hits.append(SearchHit(name=hit.name, score=hit.score, description=_short_description(tool),
                                  required=required, optional=optional, access=access_of(tool), executable=ok))
            if len(hits) >= k:
                break
        self.last_search = tuple(h.name for h in hits)
        result = {"query": query, "mode": self.searcher.last_mode, "hits": [h.to_json() for h in hits]}
        self.history.append({"tool": "tool_search", "query": query, "names": list(self.last_search)})
        return result

    def describe(self, name: str) -> dict[str, Any]:
        """``tool_describe``: the full schema of one tool; records it in :attr:`described`.

        Returns
        -------
        dict
            ``{"name", "description", "parameters", "access", "executable"}``, or
            ``{"error": ...}`` for a name not in the catalogue.
        """
        if name not in self.catalog:
            return {"error": f"unknown tool {name!r}; call tool_search first"}
        tool = self.catalog.tool(name)
        ok, why = self.permitted(name)
        if name not in self.described:
            self.described += (name,)
        out = {"name": name, "description": " ".join(tool.description.split()),
               "parameters": json.loads(json.dumps(tool.parameters)), "access": access_of(tool), "executable": ok}
        if why:
            out["not_executable"] = why
        self.history.append({"tool": "tool_describe", "name": name})
        return out

    def execute(self, name: str, arguments: Any = None, *, timeout_s: float = 10.0):
        """``tool_execute``: run one tool, gated by :meth:`permitted` and the scope, through ``loop.execute``.

        Returns
        -------
        loop.ToolResult
            Status ``refused`` for a name outside the scope or not permitted (it never runs).
        """
        from ..execution import Session, execute, failed

        if self.session is None:
            self.session = Session()
        arguments = {} if arguments is None else arguments
        ok, why = self.permitted(name) if isinstance(name, str) else (False, f"{name!r} is not a tool name")
        if not ok:
            result = failed(str(name), arguments, "refused", f"{why}; it did not run")
        elif name not in self.executable:
            result = failed(name, arguments, "refused",
                            f"{name!r} was not returned by the last tool_search; search for it first")
        else:
            allowed = tuple(n for n in self.catalog.names if self.permitted(n)[0])
            result = execute({"name": name, "arguments": arguments}, self.executable, self.catalog,
                             allowed=allowed, timeout_s=timeout_s, session=self.session, executors=self.executors)
        self.history.append({"tool": "tool_execute", "name": name, "status": result.status})
        return result

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> tuple[str, bool]:
        """Dispatch one meta-tool call by name; returns (result text for the model, is_error).

        The arguments are first checked against the meta-tool's advertised input schema
        (:data:`META_TOOLS`, ``jsonschema``): an extra key, a 1 MB query past ``maxLength`` or a
        wrong type is an error naming the argument (:func:`check_arguments`), never cut or
        ignored without notice.
        """
        arguments = dict(arguments or {})
        tool = next((t for t in META_TOOLS if t.name == name), None)
        if tool is not None:
            problem = check_arguments(name, tool.parameters, arguments)
            if problem is not None:
                return problem, True
        if name == "tool_search":
            query = arguments.get("query")
            if not isinstance(query, str) or not query.strip():
                return "tool_search needs a non-empty 'query' string", True
            k = arguments.get("k", 5)
            k = k if isinstance(k, int) and not isinstance(k, bool) else 5
            return json.dumps(self.search(query, k), ensure_ascii=False), False
        if name == "tool_describe":
            out = self.describe(str(arguments.get("name", "")))
            return json.dumps(out, ensure_ascii=False), "error" in out
        if name == "tool_execute":
            args = arguments.get("arguments", {})
            result = self.execute(str(arguments.get("name", "")), args if isinstance(args, dict) else args)
            return result.text, not result.ok and result.status != "routing_only"
        return f"unknown meta-tool {name!r}; expected one of {', '.join(META_NAMES)}", True

    # -- grammars ------------------------------------------------------------------------------
    def execute_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of ``tool_execute``'s arguments now; None when nothing is executable.

        ``name`` is an enum of :attr:`executable`; a described tool's ``arguments`` follow its
        schema (one ``oneOf`` branch per name, keyed by ``const``), the others take any object.
        """
        names = self.executable
        if not names:
            return None
        described = [n for n in names if n in self.described]
        free = [n for n in names if n not in self.described]
        branches = []
        for n in described:
            branches.append({"type": "object", "properties": {
                "name": {"const": n}, "arguments": json.loads(json.dumps(self.catalog.tool(n).parameters))},
                "required": ["name", "arguments"], "additionalProperties": False})
        if free:
            branches.append({"type": "object", "properties": {
                "name": {"enum": list(free)}, "arguments": {"type": "object"}},
                "required": ["name", "arguments"], "additionalProperties": False})
        return branches[0] if len(branches) == 1 else {"oneOf": branches}

    def describe_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of ``tool_describe``'s arguments: ``name`` among the last search's names."""
        names = self.last_search if self.scope == "search" else tuple(n for n in self.catalog.names if n in self.allowed)
        if not names:
            return None
        return {"type": "object", "properties": {"name": {"enum": list(names)}},
                "required": ["name"], "additionalProperties": False}

    def offer(self) -> Offer:
        """The meta-tools callable now: search always; describe and execute once they can name a tool."""
        names = ["tool_search"]
        if self.describe_schema() is not None:
            names.append("tool_describe")
        if self.execute_schema() is not None:
            names.append("tool_execute")
            last = self.history[-1]["tool"] if self.history else ""
            if self.progress and last == "tool_search":
                names.remove("tool_search")
            elif self.progress and last == "tool_describe":
                names = ["tool_execute"]
        return Offer.given(names, reason="meta-tools")

    def grammar_catalog(self) -> Catalog:
        """The meta-tools with their schemas narrowed to this session's state (for ``grammar.compile``)."""
        schemas = {"tool_search": _SEARCH_SCHEMA, "tool_describe": self.describe_schema() or _DESCRIBE_SCHEMA,
                   "tool_execute": self.execute_schema() or _EXECUTE_SCHEMA}
        return Catalog((Tool(name=t.name, description=t.description, parameters=schemas[t.name], access=t.access,
                             source="meta") for t in META_TOOLS), source="meta (narrowed)")

    def grammar(self, **kwargs: Any):
        """The reply envelope grammar over :meth:`offer` (``grammar.compile``); kwargs pass through."""
        from ..grammar import compile as compile_grammar

        return compile_grammar(self.offer(), self.grammar_catalog(), **kwargs)

    def execute_grammar(self, **kwargs: Any):
        """The grammar of ``tool_execute``'s bare arguments (``grammar.compile_schema``).

        Raises
        ------
        ErisLabError
            Nothing is executable yet.
        """
        from ..grammar import compile_schema

        schema = self.execute_schema()
        if schema is None:
            raise ErisLabError("no tool is executable yet; call tool_search first", where="tool_execute")
        return compile_schema(schema, **kwargs)
