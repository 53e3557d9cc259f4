"""Routed offer vs meta-tools, on the same tasks.

Two measurements (issue #7 "Measure"):

1. tokens in the first prompt, with the model's tokenizer (``prompt.count_tokens``, the bundled
   Gemma 3 vocabulary): the whole catalogue with schemas (``prompt.full``), the routed slim offer
   (``prompt.slim`` of the router's offer; mean and max over the tasks' queries) and the meta-tool
   entry (``meta.entry_prompt``); on the demo catalogue and, when the BFCL cache exists, on the
   pooled BFCL catalogue (``live_multiple``; skipped with a note otherwise);
2. for the bundled model (``llm.LlamaRunner``, one thread, greedy), per task: model calls and
   whether the right tool was reached, by each route. *routed*: router -> offer -> slim prompt +
   envelope grammar -> one generation -> ``parse.calls``. *meta*: the meta-tool entry + the
   narrowed meta grammar (``MetaSession.grammar``), up to ``max_steps`` generations, each call
   answered with its result, until the model calls ``tool_execute`` or stops calling tools.
   "Reached" = the right tool was called and passed the gate (status not ``refused``).

Measured 2026-11-29 on the shared 2-core box (Gemma 3 270M Q4_K_M, one thread, greedy;
all-MiniLM-L6-v2): first-prompt tokens demo 56 tools 12,634 whole / 1,117 routed mean (4,577
max, a full roster) / 673 meta entry; pooled BFCL live_multiple 1,041 tools 310,269 / 5,420
(10 queries) / 674. On the ten demo tasks: routed reached 6/10 with 1.0 model call per task;
meta-progress 2/10 with 2.0 calls (the gold tool was among the search hits 6/10); meta without
progress 0/10 with 3.0 calls: it repeated the same tool_search until the step budget (3) ran out
on every task, though the gold tool was among the hits 6/10.

Run: ``eris-lab bench meta [--help]``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from .._files import write_atomic
from ..catalog import Catalog, load, tools_from_json
from ..errors import ErisLabError
from ..knobs import Knobs
from ..schema import normalize_types

__all__ = ["DEMO_TASKS", "Task", "prompt_tokens", "run_routed", "run_meta", "pooled_bfcl", "main"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Task:
    """One user request and the tool that should serve it."""

    text: str
    gold: str


#: Ten demo tasks, one per domain where possible; written for this project.
DEMO_TASKS: tuple[Task, ...] = (
    Task(text="What time is it in Tokyo right now?", gold="clock:now"),
    Task(text="Calculate 17 times 23", gold="calc:evaluate"),
    Task(text="Convert 5 miles to kilometers", gold="calc:convert"),
    Task(text="Show my overdue tasks", gold="agenda:list"),
    Task(text="Remind me to call mom tomorrow at 9am", gold="agenda:remind_at"),
    Task(text="Archive that mail from Tom", gold="mail:move"),
    Task(text="Will it rain in Berlin tomorrow?", gold="weather:forecast"),
    Task(text="What are today's top news headlines?", gold="news:today"),
    Task(text="Read my note ideas.md from the vault", gold="vault:read"),
    Task(text="Turn the volume down a bit", gold="system:volume"),
)

#: Reply bounds for the bench (a base model fills every free string to its bound).
BENCH_KNOBS = Knobs(max_thought_chars=60, max_message_chars=80, max_calls=1)
#: Longest tool result shown back to the model in the meta route, in characters.
MAX_RESULT_CHARS = 1200


# ---------------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------------


def prompt_tokens(catalog: Catalog, texts: Sequence[str], *, router: Any = None, tokenizer: Any = None) -> dict[str, Any]:
    """Tokens of the first prompt by route.

    Parameters
    ----------
    catalog : Catalog
    texts : sequence of str
        Queries whose routed offers are measured (empty or ``router`` None: no routed figure).
    router : Router, optional
    tokenizer : optional
        Default the bundled Gemma vocabulary (``prompt.count_tokens``).

    Returns
    -------
    dict
        ``{"n_tools", "catalogue", "routed_mean", "routed_max", "routed_mean_offer", "meta"}``;
        token counts are ints (means floats), ``routed_*`` None without a router.
    """
    from ..mcp.meta import entry_prompt
    from ..prompt import count_tokens, full, slim

    out: dict[str, Any] = {"n_tools": len(catalog), "catalogue": count_tokens(full(catalog), tokenizer),
                           "routed_mean": None, "routed_max": None, "routed_mean_offer": None,
                           "meta": count_tokens(entry_prompt(), tokenizer)}
    if router is not None and texts:
        counts, sizes = [], []
        for text in texts:
            offer = router.route(text).offer
            counts.append(count_tokens(slim(offer, catalog), tokenizer))
            sizes.append(len(offer))
        out.update(routed_mean=sum(counts) / len(counts), routed_max=max(counts),
                   routed_mean_offer=sum(sizes) / len(sizes))
    return out


# ---------------------------------------------------------------------------------------------
# BFCL pooled catalogue
# ---------------------------------------------------------------------------------------------


def _bfcl_data() -> Path | None:
    """``bfcl_eval/data`` of the BFCL cache (``eval.datasets.bfcl_dir``), or None when not fetched."""
    from ..eval.datasets import bfcl_dir

    data = bfcl_dir() / "bfcl_eval" / "data"
    return data if (data / "BFCL_v4_live_multiple.json").is_file() else None


def pooled_bfcl(data: Path | None = None) -> tuple[Catalog, tuple[str, ...]] | None:
    """The pooled BFCL catalogue of ``live_multiple`` and its queries; None when not cached.

    Pooled as ``eval.datasets`` pools it: one tool per distinct (name, schema), a second schema
    under one name becomes ``name~2``. Queries are the last user turn of each case.
    """
    data = data or _bfcl_data()
    if data is None:
        return None
    rows = [json.loads(line) for line in (data / "BFCL_v4_live_multiple.json").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    seen: dict[tuple[str, str], str] = {}
    variants: dict[str, int] = {}
    tools = []
    queries = []
    for row in rows:
        for function in row.get("function", []):
            key = (function.get("name", ""), json.dumps(normalize_types(function.get("parameters", {})),
                                                        sort_keys=True))
            if key in seen:
                continue
            tool = tools_from_json([function], source="bfcl-pooled")[0]
            n = variants[tool.name] = variants.get(tool.name, 0) + 1
            seen[key] = tool.name if n == 1 else f"{tool.name}~{n}"
            tools.append(tool if n == 1 else replace(tool, name=seen[key]))
        turns = row.get("question") or []
        last = turns[-1] if turns else []
        users = [m.get("content", "") for m in last if isinstance(m, dict) and m.get("role") == "user"]
        if users:
            queries.append(users[-1])
    return Catalog(tools, source="bfcl-pooled (live_multiple)"), tuple(queries)


# ---------------------------------------------------------------------------------------------
# Model runs
# ---------------------------------------------------------------------------------------------


def run_routed(task: Task, runner: Any, router: Any, catalog: Catalog, *, max_tokens: int = 96,
               knobs: Knobs = BENCH_KNOBS) -> dict[str, Any]:
    """One task by the routed route: one generation under the offer's grammar.

    Returns
    -------
    dict
        ``{"route": "routed", "model_calls", "reached", "called", "offered", "status", "seconds"}``.
    """
    from ..execution import Session, execute
    from ..grammar import compile as compile_grammar
    from ..parse import calls
    from ..prompt import slim

    start = time.perf_counter()
    offer = router.route(task.text).offer
    record = {"route": "routed", "text": task.text, "gold": task.gold, "offered": list(offer.names),
              "model_calls": 0, "reached": False, "called": None, "status": None}
    if not offer.names:
        record["seconds"] = time.perf_counter() - start
        return record
    # lenient: a demo schema the strict compiler refuses (skills:run, pattern with length bounds)
    # must not end the run; what it cannot express is listed in the grammar's warnings
    grammar = compile_grammar(offer, catalog, knobs=knobs, max_calls=1, lenient=True)
    messages = [{"role": "system", "content": slim(offer, catalog)}, {"role": "user", "content": task.text}]
    out = runner.generate(messages, grammar=grammar.text, max_tokens=max_tokens)
    record["model_calls"] = 1
    parsed = calls(out.text, offer)
    if parsed.calls:
        call = parsed.calls[0]
        result = execute(call, offer, catalog, session=Session())
        record.update(called=call.name, status=result.status,
                      reached=call.name == task.gold and result.status != "refused")
    record["seconds"] = time.perf_counter() - start
    return record


def run_meta(task: Task, runner: Any, catalog: Catalog, *, embedder: Any = None, searcher: Any = None,
             max_steps: int = 4, max_tokens: int = 128, knobs: Knobs = BENCH_KNOBS,
             progress: bool = False) -> dict[str, Any]:
    """One task by the meta route: search / describe / execute, one generation per step.

    Returns
    -------
    dict
        ``{"route": "meta", "model_calls", "reached", "called", "status", "steps": [...], "found"}``;
        ``found`` = the gold tool appeared in a search result.
    """
    from ..mcp.meta import MetaSession, entry_prompt
    from ..parse import calls

    start = time.perf_counter()
    session = MetaSession(catalog, embedder, searcher=searcher, progress=progress)
    messages: list[dict[str, str]] = [{"role": "system", "content": entry_prompt()},
                                      {"role": "user", "content": task.text}]
    record = {"route": "meta-progress" if progress else "meta", "text": task.text, "gold": task.gold, "model_calls": 0, "reached": False,
              "called": None, "status": None, "found": False, "steps": []}
    for _ in range(max_steps):
        offer = session.offer()
        grammar = session.grammar(knobs=knobs, max_calls=1, lenient=True)
        out = runner.generate(messages, grammar=grammar.text, max_tokens=max_tokens)
        record["model_calls"] += 1
        parsed = calls(out.text, offer)
        if not parsed.calls:
            record["steps"].append({"answer": parsed.content[:80], "error": parsed.error})
            break
        call = parsed.calls[0]
        args = dict(call.arguments)
        text, _ = session.call(call.name, args)
        step = {"tool": call.name, "arguments": args}
        if call.name == "tool_search":
            step["hits"] = list(session.last_search)
            record["found"] = record["found"] or task.gold in session.last_search
        record["steps"].append(step)
        messages += [{"role": "assistant", "content": out.text},
                     {"role": "tool", "content": text[:MAX_RESULT_CHARS]}]
        if call.name == "tool_execute":
            status = session.history[-1]["status"]
            record.update(called=args.get("name"), status=status,
                          reached=args.get("name") == task.gold and status != "refused")
            break
    record["seconds"] = time.perf_counter() - start
    return record


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------


def _summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(records) or 1
    return {"n": len(records), "reached": sum(r["reached"] for r in records) / n,
            "model_calls_mean": sum(r["model_calls"] for r in records) / n,
            "seconds_mean": sum(r["seconds"] for r in records) / n}


def main(argv: Sequence[str] | None = None) -> int:
    """``eris-lab bench meta``: print the token table and (unless ``--no-model``) the per-route model results."""
    from ..cli import Parser

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = Parser(prog="eris-lab bench meta", description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=len(DEMO_TASKS), help="demo tasks to run (default all 10)")
    parser.add_argument("--bfcl-queries", type=int, default=10, help="BFCL queries for the routed token figure")
    parser.add_argument("--no-model", action="store_true", help="tokens only; no generation")
    parser.add_argument("--no-bfcl", action="store_true", help="skip the pooled BFCL catalogue")
    parser.add_argument("--max-steps", type=int, default=3, help="model calls per task on a meta route (default 3)")
    parser.add_argument("--routes", default="routed,meta-progress",
                        help="comma-separated: routed, meta (every meta-tool always offered), meta-progress "
                             "(MetaSession(progress=True)); default routed,meta-progress")
    parser.add_argument("--json", metavar="FILE", help="also write every record as JSON")
    args = parser.parse_args(argv)

    from ..embed import SentenceTransformerEmbedder
    from ..mcp.meta import ToolSearch
    from ..router import Router

    embedder = SentenceTransformerEmbedder()
    demo = load()
    tasks = DEMO_TASKS[: args.tasks]
    router = Router(demo, embedder)
    report: dict[str, Any] = {"tokens": {}, "runs": []}
    report["tokens"]["demo"] = prompt_tokens(demo, [t.text for t in tasks], router=router)
    if args.no_bfcl:
        report["tokens"]["bfcl"] = "skipped (--no-bfcl)"
    else:
        pooled = pooled_bfcl()
        if pooled is None:
            report["tokens"]["bfcl"] = "skipped: no BFCL cache (set ERIS_LAB_BFCL_DIR or run the eval set-up)"
        else:
            catalog, queries = pooled
            start = time.perf_counter()
            report["tokens"]["bfcl"] = prompt_tokens(catalog, queries[: args.bfcl_queries],
                                                     router=Router(catalog, embedder))
            report["tokens"]["bfcl"]["seconds"] = round(time.perf_counter() - start, 1)
    print("first-prompt tokens (Gemma 3 tokenizer)")
    print(f"{'catalogue':<10} {'tools':>6} {'whole+schemas':>14} {'routed mean':>12} {'routed max':>11} "
          f"{'mean offer':>11} {'meta entry':>11}")
    for name, row in report["tokens"].items():
        if isinstance(row, str):
            print(f"{name:<10} {row}")
            continue
        mean = f"{row['routed_mean']:.0f}" if row["routed_mean"] is not None else "-"
        offer = f"{row['routed_mean_offer']:.1f}" if row["routed_mean_offer"] is not None else "-"
        print(f"{name:<10} {row['n_tools']:>6} {row['catalogue']:>14} {mean:>12} {row['routed_max'] or '-':>11} "
              f"{offer:>11} {row['meta']:>11}")
    if not args.no_model:
        from ..llm import LlamaRunner

        runner = LlamaRunner(n_threads=1, n_ctx=8192)  # a full-roster slim prompt of the demo takes ~4.6k
        searcher = ToolSearch(demo, embedder)
        routes = [r.strip() for r in args.routes.split(",") if r.strip()]
        unknown = [r for r in routes if r not in ("routed", "meta", "meta-progress")]
        if unknown:
            parser.error(f"--routes: unknown route {unknown[0]!r}; expected routed, meta, meta-progress")
        for task in tasks:
            for route in routes:
                start = time.perf_counter()
                try:
                    if route == "routed":
                        record = run_routed(task, runner, router, demo)
                    else:
                        record = run_meta(task, runner, demo, searcher=searcher, max_steps=args.max_steps,
                                          progress=route == "meta-progress")
                except ErisLabError as exc:  # counted as not reached, with the reason
                    record = {"route": route, "text": task.text, "gold": task.gold, "model_calls": 0,
                              "reached": False, "called": None, "status": f"failed: {exc}", "found": False,
                              "seconds": time.perf_counter() - start}
                report["runs"].append(record)
                print(f"{record['route']:<7} {task.gold:<18} calls={record['model_calls']} "
                      f"reached={str(record['reached']):<5} called={record['called']} status={record['status']} "
                      f"{record['seconds']:.1f}s", flush=True)
        for route in routes:
            rows = [r for r in report["runs"] if r["route"] == route]
            report[route] = _summary(rows)
            extra = ""
            if route != "routed":
                extra = f", gold found by a search {sum(r['found'] for r in rows)}/{len(rows)}"
            print(f"{route}: reached the right tool {report[route]['reached']:.0%} of {len(rows)} tasks, "
                  f"{report[route]['model_calls_mean']:.2f} model calls per task, "
                  f"{report[route]['seconds_mean']:.1f} s per task{extra}")
    if args.json:
        write_atomic(args.json, json.dumps(report, ensure_ascii=False, indent=1, default=str))
    return 0

