"""Measurements for the grammar: compile time vs offer size, llama.cpp sampling cost, and a
differential against llama-cpp-python's own converter.

Run ``python -m eris_lab.bench grammar --help``. Every number printed names what produced it.
Sampling uses one thread (``n_threads=1``): DESIGN.md measured two threads slower on a shared box.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..catalog import Catalog, tools_from_json
from ..errors import ErisLabError
from ..grammar.compiler import compile_schema
from ..grammar.envelope import compile as compile_offer
from ..offer import Offer
from ..schema import clear_cache as clear_schema_cache
from ..schema import normalize_types

__all__ = ["compile_times", "sampling_speed", "differential", "bfcl_catalog", "prompt_tokens", "main"]

BFCL_POOLED_CATEGORIES = ("multiple", "live_multiple", "irrelevance", "live_irrelevance", "live_relevance")


def _offer(names: tuple[str, ...]) -> Offer:
    return Offer.given(names, reason="bench")


def bfcl_catalog(data_dir: str | Path, categories: Iterable[str] = BFCL_POOLED_CATEGORIES) -> Catalog:
    """The pooled BFCL catalogue: every function of ``categories``, first definition of each name."""
    seen: dict[str, dict] = {}
    for category in categories:
        for line in (Path(data_dir) / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines():
            for function in json.loads(line).get("function", []) if line.strip() else ():
                seen.setdefault(function["name"], function)
    return Catalog(tools_from_json(list(seen.values()), source=str(data_dir)), source=str(data_dir))


def compile_times(catalog: Catalog, sizes: Iterable[int] = (1, 5, 20, 63), *, repeat: int = 3,
                  lenient: bool = True) -> list[dict[str, Any]]:
    """Best-of-``repeat`` compile time of the envelope for offers of the first n compilable tools.

    Returns
    -------
    list of dict
        ``{"n_tools", "cold_ms", "ms", "rules", "chars"}`` per size: ``cold_ms`` the first compile
        (meta-schema check of each tool included), ``ms`` best of ``repeat`` warm compiles; both
        include llama.cpp's parse check.
    """
    usable = []
    for tool in catalog:
        try:
            compile_offer(_offer((tool.name,)), catalog, lenient=lenient, check=False)
            usable.append(tool.name)
        except ErisLabError:
            continue
    rows = []
    for n in sizes:
        names = tuple(usable[:n])
        clear_schema_cache()  # cold: the meta-schema check of every tool included
        start = time.perf_counter()
        grammar = compile_offer(_offer(names), catalog, lenient=lenient)
        cold = time.perf_counter() - start
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            grammar = compile_offer(_offer(names), catalog, lenient=lenient)
            best = min(best, time.perf_counter() - start)
        rows.append({"n_tools": len(names), "cold_ms": cold * 1000, "ms": best * 1000,
                     "rules": grammar.text.count("\n"), "chars": len(grammar.text)})
    return rows


def prompt_tokens(catalog: Catalog, sizes: Iterable[int] = (1, 5, 20), tokenizer: Any = None) -> list[dict[str, Any]]:
    """Prompt tokens per turn (bundled Gemma tokenizer): full catalogue with schemas vs slim offers.

    Returns
    -------
    list of dict
        ``{"n_tools", "catalog_tokens", "offer_tokens", "ratio"}`` for offers of the first n tools.
    """
    from .. import prompt

    full_n = prompt.count_tokens(prompt.full(catalog), tokenizer)
    rows = []
    for n in sizes:
        offer = _offer(tuple(catalog.names[:n]))
        slim_n = prompt.count_tokens(prompt.slim(offer, catalog), tokenizer)
        rows.append({"n_tools": len(offer.names), "catalog_tokens": full_n, "offer_tokens": slim_n,
                     "ratio": slim_n / full_n})
    return rows


def sampling_speed(grammars: Mapping[str, str | None], *, prompt: str, n_tokens: int = 48,
                   model_path: str | None = None, n_threads: int = 1, rounds: int = 2,
                   guided: Mapping[str, str] | None = None) -> dict[str, dict[str, float]]:
    """Tokens per second of llama.cpp generation under each grammar, in one run.

    Parameters
    ----------
    grammars : mapping name -> GBNF text or None (free generation)
        Enforced by llama.cpp's grammar sampler.
    guided : mapping name -> GBNF text, optional
        Enforced by llguidance's token mask as a logits processor (``guidance.py``).
    prompt : str
    n_tokens : int
        Generated tokens per call (a grammar may end earlier; rates are per generated token).
    rounds : int
        Variants are interleaved ``rounds`` times so drift affects all alike; the median counts.

    Returns
    -------
    dict
        ``{name: {"tokens_per_s", "ms_per_token", "ratio_to_free"}}``; the ratio uses the
        variant named ``"free"`` when present.
    """
    from llama_cpp import Llama, LlamaGrammar, LogitsProcessorList

    from ..llm.model import default_model_path

    guided = dict(guided or {})
    if guided:
        from ..grammar.guidance import guidance

        engine = guidance()
    llm = Llama(model_path=str(model_path or default_model_path()), n_ctx=1024, n_threads=n_threads,
                n_threads_batch=n_threads, verbose=False, seed=0)
    rates: dict[str, list[float]] = {name: [] for name in [*grammars, *guided]}
    variants = [(name, text, False) for name, text in grammars.items()] + [(n, t, True) for n, t in guided.items()]
    for _ in range(rounds):
        for name, text, is_guided in variants:
            grammar = LlamaGrammar.from_string(text, verbose=False) if text and not is_guided else None
            processors = LogitsProcessorList([engine.logits_processor(text)]) if is_guided else None
            llm.reset()
            start = time.perf_counter()
            out = llm.create_completion(prompt, grammar=grammar, logits_processor=processors,
                                        max_tokens=n_tokens, temperature=0.0)
            elapsed = time.perf_counter() - start
            rates[name].append(out["usage"]["completion_tokens"] / elapsed)
    result = {}
    free = statistics.median(rates["free"]) if "free" in rates else None
    for name, values in rates.items():
        tps = statistics.median(values)
        result[name] = {"tokens_per_s": tps, "ms_per_token": 1000 / tps,
                        "ratio_to_free": (tps / free) if free else float("nan")}
    return result


def differential(cases: Iterable[tuple[str, Any, list[tuple[str, bool]]]], judge) -> dict[str, Any]:
    """Ours vs llama-cpp-python's converter on the same schemas and instances.

    Parameters
    ----------
    cases : iterable of (id, schema, [(json_text, valid), ...])
        ``valid`` is the ``jsonschema`` verdict (the truth).
    judge : Oracle

    Returns
    -------
    dict
        Counts of schemas each converter compiled (and llama.cpp parsed), verdicts each got right,
        wrong accepts (grammar wider than the schema) and wrong rejects, and ``superset``: every
        verdict the other converter got right, ours got right too.
    """
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from ..grammar.oracle import check_parses

    stats = {"schemas": 0, "ours_compiled": 0, "theirs_compiled": 0, "instances": 0,
             "ours_right": 0, "theirs_right": 0, "ours_wrong_accepts": 0, "theirs_wrong_accepts": 0,
             "ours_wrong_rejects": 0, "theirs_wrong_rejects": 0, "theirs_right_ours_wrong": []}
    for case_id, schema, instances in cases:
        stats["schemas"] += 1
        try:
            ours = compile_schema(schema, lenient=True).text
            stats["ours_compiled"] += 1
        except ErisLabError:
            ours = None
        try:
            theirs = json_schema_to_gbnf(json.dumps(normalize_types(schema)))
            check_parses(theirs)
            stats["theirs_compiled"] += 1
        except Exception:
            theirs = None
        for text, valid in instances:
            stats["instances"] += 1
            verdicts = {}
            for who, gbnf in (("ours", ours), ("theirs", theirs)):
                accepted = judge.accepts(gbnf, text) if gbnf else False
                right = accepted == valid
                verdicts[who] = right
                stats[f"{who}_right"] += right
                if accepted and not valid:
                    stats[f"{who}_wrong_accepts"] += 1
                if valid and not accepted:
                    stats[f"{who}_wrong_rejects"] += 1
            if verdicts["theirs"] and not verdicts["ours"]:
                stats["theirs_right_ours_wrong"].append((case_id, text))
    stats["superset"] = not stats["theirs_right_ours_wrong"]
    return stats


def _cases_from_grammar_file(path: Path) -> list[tuple[str, Any, list[tuple[str, bool]]]]:
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return [(c["id"], c["schema"], [(s, True) for s in c.get("must_accept", [])] +
             [(s, False) for s in c.get("must_reject", [])]) for c in cases]


def bfcl_ground_truth(data_dir: Path, categories=("simple_python", "multiple", "live_simple", "live_multiple")):
    """BFCL ground-truth calls as JSON Schema instances: ``(category, name, schema, instance, valid)``.

    ``instance`` takes the first accepted value of each parameter (BFCL lists alternatives; ``""``
    means "may be absent"); ``valid`` is jsonschema's verdict on it. A grammar must agree.
    """
    import jsonschema

    for category in categories:
        questions = {}
        for line in (data_dir / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                questions[record["id"]] = record
        for line in (data_dir / "possible_answer" / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines():
            answer = json.loads(line)
            functions = {f["name"]: f for f in questions[answer["id"]]["function"]}
            for call in answer["ground_truth"]:
                for name, params in call.items():
                    schema = normalize_types(functions[name]["parameters"])
                    instance = {k: next(v for v in params[k] if v != "") for k in schema.get("properties", {})
                                if k in params and any(v != "" for v in params[k])}
                    yield category, name, schema, instance, jsonschema.Draft202012Validator(schema).is_valid(instance)


def _cases_from_bfcl(data_dir: Path):
    return [(f"{category}:{name}", schema, [(json.dumps(instance, ensure_ascii=False), valid)])
            for category, name, schema, instance, valid in bfcl_ground_truth(data_dir)]


def main(argv: list[str] | None = None) -> int:
    """``eris-lab bench grammar``: print compile times, sampling speeds and the differential (see ``--help``)."""
    from ..cli import Parser

    parser = Parser(prog="eris-lab bench grammar", description=__doc__.splitlines()[0])
    parser.add_argument("--bfcl", metavar="DIR", help="bfcl_eval/data folder (pooled catalogue, answers)")
    parser.add_argument("--catalog", metavar="C", help="a catalogue for prompt-token and compile-time rows")
    parser.add_argument("--cases", metavar="FILE", default="tests/cases/grammar_cases.json")
    parser.add_argument("--sampling", action="store_true", help="also time llama.cpp generation (slow)")
    parser.add_argument("--n-tokens", type=int, default=48)
    args = parser.parse_args(argv)
    from ..grammar.oracle import oracle

    judge = oracle()
    catalogs = []
    if args.catalog:
        from ..catalog import load

        catalogs.append(("catalogue " + args.catalog, load(args.catalog)))
    if args.bfcl:
        catalogs.append(("pooled BFCL catalogue", bfcl_catalog(args.bfcl)))
    for label, cat in catalogs:
        print(f"compile time vs offer size ({label}, {len(cat)} tools; cold = first compile with meta-schema "
              "checks, warm = best of 3; both incl. llama.cpp parse check):")
        for row in compile_times(cat):
            print(f"  {row['n_tools']:>3} tools: cold {row['cold_ms']:7.1f} ms  warm {row['ms']:6.1f} ms  "
                  f"{row['rules']:4d} rules  {row['chars']:6d} chars")
    for label, cat in catalogs:
        print(f"prompt tokens per turn, {label} ({len(cat)} tools), Gemma 3 tokenizer:")
        for row in prompt_tokens(cat):
            print(f"  slim offer of {row['n_tools']:>2} tools: {row['offer_tokens']:6d} tokens vs full catalogue with "
                  f"schemas {row['catalog_tokens']:7d} ({row['ratio']:.2%})")
    cases = _cases_from_grammar_file(Path(args.cases))
    if args.bfcl:
        cases += _cases_from_bfcl(Path(args.bfcl))
    diff = differential(cases, judge)
    shown = {k: v for k, v in diff.items() if k != "theirs_right_ours_wrong"}
    print("differential vs llama-cpp-python's json_schema_to_gbnf (verdicts judged by llama.cpp):")
    print("  " + json.dumps(shown))
    for case_id, text in diff["theirs_right_ours_wrong"][:10]:
        print(f"  theirs right, ours wrong: {case_id}: {text[:120]}")
    if args.sampling:
        from llama_cpp.llama_grammar import json_schema_to_gbnf

        schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 40},
                                                   "unit": {"enum": ["celsius", "fahrenheit"]},
                                                   "days": {"type": "integer", "minimum": 1, "maximum": 14}},
                  "required": ["city", "unit", "days"], "additionalProperties": False}
        grammars = {"free": None, "ours": compile_schema(schema).text,
                    "llama-cpp-python": json_schema_to_gbnf(json.dumps(schema))}
        speeds = sampling_speed(grammars, prompt="Weather request as JSON:", n_tokens=args.n_tokens,
                                guided={"ours via llguidance": grammars["ours"]})
        print("llama.cpp sampling, Gemma 3 270M, 1 thread (median of interleaved rounds):")
        for name, row in speeds.items():
            print(f"  {name:>17}: {row['tokens_per_s']:6.1f} tokens/s  {row['ms_per_token']:6.1f} ms/token  "
                  f"ratio to free {row['ratio_to_free']:.2f}")
    return 0

