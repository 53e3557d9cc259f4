"""BFCL multi-turn conversations as routing suites: one record per user turn (issue 15).

Suites
------
``multi_turn_base``, ``multi_turn_miss_func``, ``multi_turn_long_context``
    Conversations over BFCL's stateful APIs (file system, messaging, posting, tickets, trading,
    travel, vehicle control, math). Each conversation routes against its **own** catalogue:
    every function of its ``involved_classes`` (from ``multi_turn_func_doc/``) less its
    ``excluded_function``; names are unique across the eight classes, so they are kept as BFCL
    spells them. One :class:`~.datasets.Query` per turn:

    * ``query``: the turn's user message(s), joined;
    * ``gold``: the function names of the turn's ground-truth calls (:func:`gold_functions`
      parses each call string with :mod:`ast`), in call order, each once; empty when the turn
      needs no call (``expect="none"``);
    * ``history``: the conversation so far, oldest first: each earlier turn's user message, then
      one ``{"role": "tool_used", "name"}`` per function its gold calls ran (the tools that ran),
      and in ``miss_func`` a ``tools_added`` turn where a withheld function comes back;
    * ``tags``: the suite name, ``first`` / ``follow-up`` (the gold shares a tool with the
      previous turn's) / ``switch`` (it shares none), ``withheld`` / ``returned`` and
      ``back:<function>`` (miss_func: the function that came back), and
      ``api:<Class>`` for each involved class.

``multi_turn_miss_func``
    A function named in ``missed_function`` (``{"turn index": [names]}``) is withheld from the
    catalogue before that turn: the request that needs it gets gold ``()`` (BFCL's ground truth is
    empty there) and a catalogue without it, so no offer can hold it. The turn where it comes back
    has no user message of its own (BFCL adds the function and the model answers the pending
    request): its query is the last user message, its catalogue holds the function again, its
    history ends with ``{"role": "tools_added", "names": [...]}`` (BFCL lists the function again
    there, as a host's tools-changed notice would; ``policy.with_added``), and its gold calls it;
    it is tagged ``returned``. A few turns of BFCL's ground truth call a
    function before its turn comes (``multi_turn_miss_func_49`` calls ``tail`` at turn 1, withheld
    until turn 3): there the function stays in the catalogue (the suite's notes count them).

``multi_turn_long_context`` asks the same messages as ``base`` against a much larger initial
state (files, messages); routing sees only messages, so it differs only where BFCL's messages do.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..catalog import Catalog, Tool
from ..companions import LearnedCompanions, co_occurrence, pair_features
from ..errors import DataError
from .datasets import (
    BFCL_VERSION,
    MULTI_TURN_SUITES,
    Query,
    Suite,
    _bfcl_data,
    _bfcl_split,
    _ToolMaker,
    read_lines,
)
from .metrics import QueryResult, rate

__all__ = ["MULTI_TURN_SUITES", "CLASS_FILES", "gold_functions", "load_multi_turn", "class_tools", "api_class_of",
           "turn_kind", "conversation_ids", "conversation_metrics", "added_by", "size_bound", "miss_causes", "fold_of", "FOLDS", "fit_learned", "CrossFitted",
           "conversation_view"]


#: BFCL's API class -> its function file under ``multi_turn_func_doc/`` (BFCL's own mapping).
CLASS_FILES: dict[str, str] = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}


def _call_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # "Class.method(...)": the method is the function
        return node.attr
    return ""


def gold_functions(calls: Sequence[str], *, where: str = "ground_truth") -> tuple[str, ...]:
    """Function names of BFCL ground-truth call strings, in call order, each once.

    Parameters
    ----------
    calls : sequence of str
        One turn's ground truth, e.g. ``["cd(folder='document')", "mkdir(dir_name='temp')"]``.
    where : str
        Named in the error.

    Returns
    -------
    tuple of str
        ``("cd", "mkdir")``; ``()`` for an empty turn. A dotted call (``Class.f(...)``) gives ``f``.

    Raises
    ------
    DataError
        An entry is not a string, not Python syntax, or not a single call of a named function.
    """
    names: dict[str, None] = {}
    for i, call in enumerate(calls):
        if not isinstance(call, str):
            raise DataError(f"expected a call string, got {type(call).__name__}", where=f"{where}[{i}]")
        try:
            node = ast.parse(call.strip(), mode="eval").body
        except SyntaxError as exc:
            raise DataError(f"not a call: {exc.msg}", where=f"{where}[{i}]") from None
        name = _call_name(node.func) if isinstance(node, ast.Call) else ""
        if not name:
            raise DataError(f"expected a call of a named function, got {call[:60]!r}", where=f"{where}[{i}]")
        names.setdefault(name, None)
    return tuple(names)


@functools.lru_cache(maxsize=4)
def _class_docs(data: Path) -> dict[str, tuple[Mapping[str, Any], ...]]:
    out = {}
    for cls, stem in CLASS_FILES.items():
        out[cls] = tuple(read_lines(data / "multi_turn_func_doc" / f"{stem}.json"))
    return out


def class_tools(data: Path | None = None) -> dict[str, tuple[str, ...]]:
    """Each API class's function names, in file order (``{"GorillaFileSystem": ("cat", "cd", ...)}``)."""
    docs = _class_docs(data if data is not None else _bfcl_data())
    return {cls: tuple(f["name"] for f in functions) for cls, functions in docs.items()}


def api_class_of(data: Path | None = None) -> dict[str, str]:
    """Function name -> its API class (names are unique across BFCL's eight classes)."""
    return {name: cls for cls, names in class_tools(data).items() for name in names}


def turn_kind(gold: Sequence[str], previous: Sequence[str] | None) -> str:
    """``first`` (no earlier turn with a call), ``follow-up`` (shares a tool with it) or ``switch``."""
    if not previous:
        return "first"
    return "follow-up" if set(gold) & set(previous) else "switch"


def _user_text(turn: Any, where: str) -> str:
    if not isinstance(turn, list):
        raise DataError(f"expected a list of messages, got {type(turn).__name__}", where=where)
    texts = [m["content"] for m in turn if isinstance(m, dict) and m.get("role") == "user"
             and isinstance(m.get("content"), str)]
    return "\n".join(texts)


def load_multi_turn(name: str) -> Suite:
    """The suite ``name`` (one of :data:`MULTI_TURN_SUITES`; see the module docstring).

    Raises
    ------
    DataError
        Unknown name, a malformed conversation or ground truth (``where`` names the file and id),
        an unknown API class, or a gold function outside the turn's catalogue.
    """
    if name not in MULTI_TURN_SUITES:
        raise DataError(f"unknown multi-turn suite {name!r}; expected one of {', '.join(MULTI_TURN_SUITES)}",
                        where="--suite")
    return _load_from(name, _bfcl_data())


@functools.lru_cache(maxsize=4)
def _load_from(name: str, data: Path) -> Suite:
    path = data / f"BFCL_v4_{name}.json"
    answers = {row.get("id"): row.get("ground_truth") for row in read_lines(data / "possible_answer" / path.name)}
    docs = _class_docs(data)
    make = _ToolMaker(path.name)
    catalogs: dict[tuple[tuple[str, ...], frozenset[str]], Catalog] = {}  # shared: one fit per distinct catalogue

    def catalog_of(classes: tuple[str, ...], left_out: frozenset[str], where: str) -> Catalog:
        key = (classes, left_out)
        if key not in catalogs:
            tools: list[Tool] = []
            for cls in classes:
                for j, function in enumerate(docs[cls]):
                    if function.get("name") not in left_out:
                        tools.append(make(function, f"{CLASS_FILES[cls]}.json[{j}]"))
            catalogs[key] = Catalog(tools, source=f"BFCL {'+'.join(classes)}"
                                    + (f" less {', '.join(sorted(left_out))}" if left_out else ""))
        return catalogs[key]

    queries: list[Query] = []
    contradictions = 0
    for row in read_lines(path):
        conv = str(row.get("id", ""))
        where = f"{path.name}: {conv}"
        classes = row.get("involved_classes")
        if not isinstance(classes, list) or not classes:
            raise DataError("expected a non-empty list 'involved_classes'", where=where)
        unknown = [c for c in classes if c not in CLASS_FILES]
        if unknown:
            raise DataError(f"unknown API class {unknown[0]!r}; expected one of {', '.join(CLASS_FILES)}", where=where)
        classes = tuple(sorted(classes))
        excluded = frozenset(row.get("excluded_function") or ())
        missed: dict[int, tuple[str, ...]] = {}
        for turn, names in (row.get("missed_function") or {}).items():
            try:
                missed[int(turn)] = tuple(names)
            except (TypeError, ValueError):
                raise DataError(f"expected a turn index, got {turn!r}", where=f"{where}.missed_function") from None
        turns = row.get("question")
        truth = answers.get(row.get("id"))
        if not isinstance(turns, list) or not isinstance(truth, list) or len(truth) != len(turns):
            raise DataError("question and ground truth differ in turns (or one is missing)", where=where)
        history: list[Mapping[str, Any]] = []
        last_text = ""
        previous_gold: tuple[str, ...] | None = None
        api_tags = tuple(f"api:{c}" for c in classes)
        for t, (turn, calls) in enumerate(zip(turns, truth)):
            at = f"{where} turn {t}"
            if not isinstance(calls, list):
                raise DataError("expected a list of call strings", where=f"{at} ground truth")
            gold = gold_functions(calls, where=f"{at} ground truth")
            withheld = frozenset(n for back, names in missed.items() if back > t for n in names)
            if withheld & set(gold):  # BFCL's own gold calls it before it comes back: not withheld here
                contradictions += 1
                withheld -= set(gold)
            catalog = catalog_of(classes, excluded | withheld, where)
            missing = [g for g in gold if g not in catalog]
            if missing:
                raise DataError(f"gold function {missing[0]!r} is not in the turn's catalogue", where=at)
            text = _user_text(turn, at)
            returned = not text and t in missed
            if not text and not returned:
                raise DataError("a turn without a user message", where=at)
            tags = [name, turn_kind(gold, previous_gold) if gold else "no-call"]
            if returned:
                back = [n for n in missed[t] if n in catalog]
                tags.extend(["returned"] + [f"back:{n}" for n in back])
                # BFCL lists the function again at this turn: the host's "tools added" notice
                history.append({"role": "tools_added", "names": back})
            if withheld and not gold:
                tags.append("withheld")
            queries.append(Query(id=f"{conv}:{t}", query=text or last_text, gold=gold,
                                 expect="all" if gold else "none", history=tuple(history),
                                 split=_bfcl_split(conv), tags=tuple(tags) + api_tags, catalog=catalog))
            if text:
                history.append({"role": "user", "content": text})
                last_text = text
            history.extend({"role": "tool_used", "name": g} for g in gold)
            if gold:
                previous_gold = gold
    n_conv = len({q.id.rsplit(":", 1)[0] for q in queries})
    return Suite(name=name, queries=tuple(queries), catalog=None, source=str(path),
                 notes=(f"BFCL {BFCL_VERSION} {name}: {len(queries)} turns of {n_conv} conversations, "
                        f"{sum(q.expect == 'all' for q in queries)} with a gold call; each conversation's own "
                        f"catalogue ({len(catalogs)} distinct)"
                        + (f"; {contradictions} turns call a function BFCL withholds until later, which is "
                           "kept offered there" if contradictions else "")))


def conversation_ids(suite: Suite) -> list[str]:
    """The conversation ids of a multi-turn suite, in order (a query id is ``<conversation>:<turn>``)."""
    return list(dict.fromkeys(q.id.rsplit(":", 1)[0] for q in suite.queries))


def added_by(result: QueryResult, kind: str) -> set[str]:
    """Names an overlay of ``kind`` (``memory``, ``companion``) put into the offer."""
    out = set()
    for note in result.overlays:
        if kind == "memory" and note.startswith("memory "):
            out.add(note.split(" ", 1)[1])
        elif kind == "companion" and note.startswith("companion "):
            out.add(note.split(" ")[1])
    return out


def conversation_metrics(results: Sequence[QueryResult]) -> dict[str, Any]:
    """The conversation numbers of one run (issue 15 goals), beside ``metrics.evaluate``'s record.

    Returns
    -------
    dict
        ``returned_function_recall`` (turns where a withheld function comes back: it is offered;
        issue 15's goal; None without such turns), ``returned_recall`` (those turns: every gold
        function is offered), ``other_recall`` (every other turn with a gold call),
        ``follow_up_recall`` / ``switch_recall`` (turns whose gold shares a tool with the previous
        turn's / shares none), ``switch_memory_share`` (on switch turns: offered tools that only
        memory put there, over all offered tools), ``companion_rate`` (turns with a companion
        added), ``companion_hit_rate`` (added companions that are gold), ``memory_hit_rate``
        (tools memory added that are gold), and the counts ``n_returned``, ``n_follow_up``, ``n_switch``.
    """
    def recall(rs: Sequence[QueryResult]) -> float | None:
        return rate([r.recalled for r in rs])

    needing = [r for r in results if r.expect == "all"]
    returned = [r for r in needing if "returned" in r.tags]
    back = [all(t[5:] in r.offered for t in r.tags if t.startswith("back:")) for r in returned]
    switch = [r for r in needing if "switch" in r.tags]
    follow = [r for r in needing if "follow-up" in r.tags]
    offered_on_switch = sum(len(r.offered) for r in switch)
    memory_only = sum(len(added_by(r, "memory")) for r in switch)
    companions = [(n, r) for r in results for n in added_by(r, "companion")]
    memory = [(n, r) for r in results for n in added_by(r, "memory")]
    return {
        "returned_function_recall": rate(back),
        "returned_recall": recall(returned),
        "other_recall": recall([r for r in needing if "returned" not in r.tags]),
        "follow_up_recall": recall(follow),
        "switch_recall": recall(switch),
        "switch_memory_share": round(memory_only / offered_on_switch, 6) if offered_on_switch else None,
        "companion_rate": rate([bool(added_by(r, "companion")) for r in results]),
        "companion_hit_rate": rate([n in r.gold for n, r in companions]),
        "memory_hit_rate": rate([n in r.gold for n, r in memory]),
        "n_returned": len(returned), "n_follow_up": len(follow), "n_switch": len(switch),
    }


#: Why a gold function was not offered, in the order :func:`miss_causes` tests them.
MISS_CAUSES = ("nothing offered", "added back, not offered", "ran on the previous turn, not kept",
               "ranked within the offer size, left out", "needed beside an offered gold tool (companion)",
               "ranked below the offer")


def miss_causes(results: Sequence[QueryResult], queries: Sequence[Query], *, top: int = 12) -> dict[str, Any]:
    """Diagnose the turns that miss: for each gold function not offered, the first cause of :data:`MISS_CAUSES` that holds.

    Parameters
    ----------
    results : sequence of QueryResult
        One strategy's run (``hits`` score descending).
    queries : sequence of Query
        The suite's queries, in the same order (their histories).
    top : int
        How many of the most often missed functions to list.

    Returns
    -------
    dict
        ``{"turns_missed", "functions_missed", "causes": {cause: count}, "functions": {name: count}}``.
    """
    from ..router import added_tools, last_turn_tools

    causes = {c: 0 for c in MISS_CAUSES}
    functions: dict[str, int] = {}
    turns = 0
    for r, q in zip(results, queries):
        missing = [g for g in r.gold if g not in r.offered] if r.expect == "all" else []
        turns += bool(missing)
        rank = {h.name: i for i, h in enumerate(r.hits)}
        for g in missing:
            functions[g] = functions.get(g, 0) + 1
            if not r.offered:
                cause = MISS_CAUSES[0]
            elif g in added_tools(q.history):
                cause = MISS_CAUSES[1]
            elif g in last_turn_tools(q.history):
                cause = MISS_CAUSES[2]
            elif rank.get(g, len(rank)) < len(r.offered):
                cause = MISS_CAUSES[3]
            elif any(o in r.gold for o in r.offered):
                cause = MISS_CAUSES[4]
            else:
                cause = MISS_CAUSES[5]
            causes[cause] += 1
    ranked = sorted(functions.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return {"turns_missed": turns, "functions_missed": sum(functions.values()), "causes": causes,
            "functions": dict(ranked)}


#: The grid :func:`size_bound` searches: margins below the top cosine, and caps on the offer.
BOUND_MARGINS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
BOUND_CAPS = (3, 4, 5, 6, 8, 10, 12, 14, 16)


def size_bound(results: Sequence[QueryResult], max_mean_offer: float = 8.0) -> dict[str, Any]:
    """The best recall any per-turn offer size reaches on these turns' own rankings, at a mean offer budget.

    Every turn with a gold call is offered its best-scored tools within ``margin`` of the top
    cosine, at most ``cap`` (none when the guards scored nothing), for each pair of :data:`BOUND_MARGINS` x
    :data:`BOUND_CAPS`; the pair with the highest recall at a mean offer of at most
    ``max_mean_offer`` is returned. Chosen on the very turns it reports, it is an upper bound for
    any offer-size lever over this ranking (companions and memory aside), not a result.

    Parameters
    ----------
    results : sequence of QueryResult
        Each with ``hits`` (score descending; ``EmbeddingPolicy`` keeps the best 20).
    max_mean_offer : float
        The budget, in tools per turn (issue 15's goal: 8).

    Returns
    -------
    dict
        ``{"recall", "mean_offer", "margin", "cap"}``; recall None without turns needing a call.
    """
    needing = [r for r in results if r.expect == "all"]
    best: dict[str, Any] = {"recall": None, "mean_offer": None, "margin": None, "cap": None}
    for margin in BOUND_MARGINS:
        for cap in BOUND_CAPS:
            offers = [[h.name for h in r.hits if r.hits[0].score - h.score <= margin][:cap] for r in needing]
            mean = float(np.mean([len(o) for o in offers])) if offers else 0.0
            recall = rate([all(g in o for g in r.gold) for r, o in zip(needing, offers)])
            if mean <= max_mean_offer and recall is not None and (best["recall"] is None or recall > best["recall"]):
                best = {"recall": recall, "mean_offer": round(mean, 3), "margin": margin, "cap": cap}
    return best


#: The two folds of API classes for learned companions: a class's companions always come from a
#: model fitted on the other fold's call sequences (cross-fitting), never on its own.
FOLDS: tuple[tuple[str, ...], tuple[str, ...]] = (
    ("GorillaFileSystem", "MathAPI", "MessageAPI", "TicketAPI"),
    ("TradingBot", "TravelAPI", "TwitterAPI", "VehicleControlAPI"),
)


def fold_of(query: Query) -> int | None:
    """The index of the fold of :data:`FOLDS` holding every API class of ``query``'s conversation, else None
    (a conversation over classes of both folds)."""
    classes = {t[4:] for t in query.tags if t.startswith("api:")}
    return next((i for i, fold in enumerate(FOLDS) if classes and classes <= set(fold)), None)


def fit_learned(classes: Sequence[str], embedder, *, data: Path | None = None,
                suite: str = "multi_turn_base") -> LearnedCompanions:
    """:class:`~eris_lab.companions.LearnedCompanions` fitted on the call sequences of ``classes`` only.

    Each class's own catalogue gives the pairs (:func:`~eris_lab.companions.pair_features`, cosine
    from ``embedder``'s routing vectors); labels are :func:`~eris_lab.companions.co_occurrence` of
    the ground-truth calls of ``suite``'s turns, restricted to that class.
    """
    from ..router import embed_tools

    data = data if data is not None else _bfcl_data()
    docs = _class_docs(data)
    loaded = _load_from(suite, data)
    make = _ToolMaker("learned-companions")
    xs, ys = [], []
    for cls in classes:
        catalog = Catalog([make(f, cls) for f in docs[cls]], source=cls)
        own = set(catalog.names)
        labels = co_occurrence([tuple(g for g in q.gold if g in own) for q in loaded.queries])
        pairs, features = pair_features(catalog, embed_tools(catalog, embedder.embed))
        xs.append(features)
        ys.append(np.array([p in labels for p in pairs], dtype=int))
    return LearnedCompanions().fit(np.concatenate(xs), np.concatenate(ys))


class CrossFitted:
    """Learned companions applied across folds: a tool of a class in fold ``i`` gets the companions of
    the model fitted on the other fold (:data:`FOLDS`); ``table`` is what ``EmbeddingPolicy(learned=...)`` reads.

    Parameters
    ----------
    models : pair of LearnedCompanions
        ``models[i]`` fitted on ``FOLDS[i]``.
    class_of : mapping
        Function name -> API class (:func:`api_class_of`).
    """

    def __init__(self, models: Sequence[LearnedCompanions], class_of: Mapping[str, str]) -> None:
        self.models = tuple(models)
        self.class_of = dict(class_of)

    @classmethod
    def fit(cls, embedder, *, data: Path | None = None) -> "CrossFitted":
        """Fit one model per fold of :data:`FOLDS`."""
        return cls([fit_learned(fold, embedder, data=data) for fold in FOLDS], api_class_of(data))

    def table(self, catalog: Catalog, vectors=None) -> dict[str, tuple[tuple[str, str], ...]]:
        tables = [m.table(catalog, vectors) for m in self.models]
        out = {}
        for name in catalog.names:
            fold = next((i for i, f in enumerate(FOLDS) if self.class_of.get(name) in f), None)
            if fold is None:
                continue
            pairs = tables[1 - fold].get(name)  # the model that never saw this class
            if pairs:
                out[name] = pairs
        return out


def conversation_view(suite_name: str, conversation: str, *, strategy=None) -> list[dict[str, Any]]:
    """One BFCL conversation turn by turn (notebook 03): what was offered, why, what the gold needed.

    Parameters
    ----------
    suite_name : str
        One of :data:`MULTI_TURN_SUITES`.
    conversation : str
        A conversation id (``multi_turn_base_0``).
    strategy : Strategy, optional
        Default the calibrated policy (``EmbeddingPolicy()``, bundled MiniLM).

    Returns
    -------
    list of dict
        Per turn: ``turn``, ``message`` (first 120 characters), ``gold``, ``offered``, ``missing``
        (gold not offered), ``rule``, ``companions`` and ``memory`` (what those overlays added),
        ``added`` (tools the catalogue gained for this turn: ``policy.with_added`` offers them first).

    Raises
    ------
    DataError
        No such conversation in the suite.
    """
    from ..router import added_tools
    from ..strategies import EmbeddingPolicy
    from ..strategies.base import Context

    suite = load_multi_turn(suite_name)
    turns = [q for q in suite.queries if q.id.rsplit(":", 1)[0] == conversation]
    if not turns:
        raise DataError(f"no conversation {conversation!r} in {suite_name}", where="conversation")
    policy = strategy if strategy is not None else EmbeddingPolicy()
    rows, fitted = [], None
    for q in turns:
        if fitted is not q.catalog:
            policy.fit(q.catalog)
            fitted = q.catalog
        offer = policy.route(q.query, Context(history=q.history)).offer
        overlays = offer.overlays + tuple(f"{s} {n}" for n, s in offer.decision.sources)
        rows.append({"turn": q.id.rsplit(":", 1)[1], "message": q.query[:120], "gold": ", ".join(q.gold) or "(none)",
                     "offered": ", ".join(offer.names), "missing": ", ".join(g for g in q.gold if g not in offer.names),
                     "rule": str(offer.decision.rule),
                     "companions": "; ".join(o[len("companion "):] for o in overlays if o.startswith("companion ")),
                     "memory": ", ".join(o.split(" ", 1)[1] for o in overlays if o.startswith("memory ")),
                     "added": ", ".join(added_tools(q.history))})
    return rows
