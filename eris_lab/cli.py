"""The ``eris-lab`` command line (DESIGN.md "Command-line contract").

``main(argv) -> int`` is the one boundary (modelled on pypa/build's ``__main__.py``): bad user
input becomes ``eris-lab: error: <msg>`` on stderr and exit status 2, never a traceback.
Each subcommand is a pair ``_add_<name>(subparsers)`` / ``_run_<name>(args) -> int`` registered
in ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from .errors import ErisLabError

__all__ = ["main", "main_parser", "Parser", "COMMANDS"]


class Parser(argparse.ArgumentParser):
    """argparse with our one-line error format (usage errors also exit 2).

    The benchmarks and the lab servers parse their own flags with it, so every entry point
    reports a usage error the same way: ``eris-lab: error: <message>``, exit status 2.
    """

    def error(self, message: str) -> None:  # type: ignore[override]
        # One line, as for every other bad input (DESIGN.md); the usage block is --help's job.
        raise SystemExit(_fail(message))


def printable(text: Any) -> str:
    """``text`` with control and format characters escaped (``\\n``, ``\\x1b``, ``\\u202e``).

    Names and messages come from catalogues and files a user did not write: printed raw, a
    newline would break a table or the one-line error, and an escape sequence would drive the
    terminal. Other text (accents, CJK) is kept as it is.
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)


def _fail(message: str) -> int:
    print(f"eris-lab: error: {printable(message)}", file=sys.stderr)
    return 2


def _print_json(data: Any, **options: Any) -> None:
    """``data`` as indented JSON on stdout, valid Unicode throughout: a lone surrogate (which a
    ``\\ud800`` escape in the input decodes to) is written as U+FFFD, the replacement character
    (I-JSON, RFC 7493, 2.1). It had crashed ``print()`` (a helper's bad input, 2026-12-05), and
    written as its escape it crashed the reader that printed the value (round fourteen, 2026-12-07)."""
    print(_LONE_SURROGATE_RE.sub("\ufffd", json.dumps(data, ensure_ascii=False, indent=2, **options)))


#: A UTF-16 surrogate on its own in a Python string: no UTF-8 text can hold it.
_LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _load_catalog(path: str | None):
    from .catalog import load

    return load(path)


REFERENCE = "reference"  # --knobs reference: DESIGN.md's reference knobs instead of calibrated ones


def _load_knobs(path: str | None, catalog=None, *, model_id: str | None = None):
    """Knobs from ``--knobs FILE``, or DESIGN.md's reference values for ``reference`` or no flag;
    a file is checked against the catalogue's domains and the embedding model in use when those
    are given (``Knobs.check_against``)."""
    from .knobs import Knobs

    if not path or path == REFERENCE:
        return Knobs()
    if not Path(path).exists() and difflib.get_close_matches(path, [REFERENCE], n=1, cutoff=0.75):
        raise ErisLabError(f"no such file; did you mean '--knobs {REFERENCE}'?", where=f"--knobs {path}")
    return Knobs.load(path).check_against(domains=None if catalog is None else catalog.domains,
                                          model_id=model_id, where=f"--knobs {path}")


LEVERS_HELP = ("issue 17 generation levers, comma-separated: bounded (digit and length bounds), compact "
               "(no newlines in JSON), calls-first or minimal (envelope), repair (arguments repaired from the "
               "schema and the message), few-shot (two worked examples in the prompt), retry-cut (a cut call "
               "generated again), router-picks (a ranked subset reaches the model as its best tool alone); "
               "'all' = bounded,compact,calls-first,repair,retry-cut,router-picks (all,few-shot adds the examples)")


def _add_levers(p) -> None:
    p.add_argument("--levers", metavar="L,M|all", help=LEVERS_HELP)


def _levers(args, knobs):
    """``knobs`` with ``--levers`` applied (``knobs.with_levers``)."""
    from .knobs import parse_levers, with_levers

    return with_levers(knobs, parse_levers(args.levers))


def _add_encoder(p) -> None:
    """``--encoder``: which runtime embeds with the bundled model (``embed.ENCODERS``)."""
    from .embed import DEFAULT_ENCODER, ENCODERS

    p.add_argument("--encoder", choices=tuple(ENCODERS), default=None,
                   help=f"what embeds with the bundled MiniLM (default {DEFAULT_ENCODER}, or $ERIS_LAB_ENCODER): "
                        + "; ".join(f"{k}: {v}" for k, v in ENCODERS.items()))


def _router(catalog, knobs_arg: str | None, encoder: str | None = None):
    """The router of route / generate: ``--knobs FILE|reference``, else knobs calibrated for the catalogue
    (read from the calibration cache when warm); ``--encoder`` picks the embedding runtime."""
    from .embed import make_encoder
    from .router import Router

    embedder = make_encoder(encoder)
    if knobs_arg:
        return Router(catalog, embedder, knobs=_load_knobs(knobs_arg, catalog, model_id=embedder.model_id))
    from .calibration import is_cached

    if sys.stderr.isatty() and not is_cached(catalog, embedder):  # a person waits: say why
        print("eris-lab: first use of this catalogue: calibrating its knobs without labels (about 10 s for "
              "56 tools; cached after)", file=sys.stderr, flush=True)
    return Router.with_calibrated_knobs(catalog, embedder)


def _table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    rows = [[printable(c) for c in r] for r in rows]  # a tool name may hold a newline or ESC
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(f"{h:<{w}}" for h, w in zip(header, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(f"{str(c):<{w}}" for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


def _print_routing(record: dict[str, Any]) -> None:
    """Readable form of a route/decide record: a small table (tool, score, why)."""
    decision = record["decision"]
    scores = {h["name"]: h["score"] for h in record.get("hits", [])}
    hit_names = set(scores)
    added_by = dict(map(tuple, decision.get("sources", [])))  # memory, added, web question
    rows = []
    for name in record["offered"][:40]:
        if name in hit_names:
            why = "forced" if scores[name] >= 0.99 else "hit"
        elif name in added_by:
            why = added_by[name]
        elif name in decision["names"]:
            why = {"cluster": "cluster", "full_roster": "roster"}.get(decision["kind"], "policy")
        else:
            why = "overlay"
        score = f"{scores[name]:.3f}" if name in scores else ""
        rows.append((name, score, why))
    print(f"rule:   {decision['rule']} ({decision['kind']})")
    print(f"reason: {printable(decision.get('reason', ''))}")
    if record.get("guard"):
        print(f"guard:  {printable(record['guard'])}")
    if rows:
        print(_table(rows, ("tool", "score", "why")))
        if len(record["offered"]) > 40:
            print(f"... and {len(record['offered']) - 40} more ({len(record['offered'])} offered)")
    else:
        print("offered: nothing (no tool may be called)")
        if record.get("hits"):  # what the gate or the slot check refused, for the reader
            print(_table([(h["name"], f"{h['score']:.3f}", "not offered") for h in record["hits"][:5]],
                         ("tool", "score", "why")))
    for overlay in record.get("overlays", []):
        print(f"overlay: {printable(overlay)}")
    if record.get("timings_ms"):
        # "total" is the route itself; a new process's set-up (model load, vectors, calibration) is apart
        print("timings: " + ", ".join(f"{'route total' if k == 'total' else k} {v:.1f} ms"
                                      for k, v in record["timings_ms"].items()))


# ---------------------------------------------------------------------------------------------
# route
# ---------------------------------------------------------------------------------------------


def _add_route(sub) -> None:
    p = sub.add_parser("route", help="route one message: hits, policy decision, offered tools")
    p.add_argument("text", help="the user message")
    p.add_argument("--catalog", help="descriptors folder, TOML file or JSON tools file (default descriptors/)")
    p.add_argument("--recent", action="append", default=[], metavar="NAME",
                   help="a recent successful tool of the session (repeatable, oldest first)")
    p.add_argument("--failed", action="append", default=[], metavar="NAME",
                   help="a recent tool call that failed; the reply may supply what it lacked (repeatable)")
    p.add_argument("--previous", default="", metavar="TEXT", help="the previous user message (for follow-ups)")
    p.add_argument("--knobs", metavar="FILE|reference",
                   help="knobs TOML file (from tune or calibrate), or 'reference' for DESIGN.md's values "
                        "(default: knobs calibrated for this catalogue, cached)")
    _add_encoder(p)
    p.add_argument("--json", action="store_true", help="print JSON")


def _run_route(args) -> int:
    catalog = _load_catalog(args.catalog)
    catalog.require(args.recent, where="--recent")
    catalog.require(args.failed, where="--failed")
    history = [{"role": "user", "content": args.previous}] if args.previous else []
    routed = _router(catalog, args.knobs, args.encoder).route(args.text, recent=args.recent, failed=args.failed, history=history)
    record = routed.to_json()
    _print_json(record) if args.json else _print_routing(record)
    return 0


# ---------------------------------------------------------------------------------------------
# calibrate
# ---------------------------------------------------------------------------------------------


def _add_calibrate(sub) -> None:
    p = sub.add_parser("calibrate", help="label-free knobs for a catalogue and embedder (knobs TOML with provenance)")
    p.add_argument("--catalog", help="descriptors folder, TOML file or JSON tools file (default descriptors/)")
    p.add_argument("--out", metavar="FILE", help="knobs TOML to write (atomically); default: print the fitted knobs")
    p.add_argument("--alpha", type=float, default=None, metavar="A",
                   help="miscoverage: offers aim to hold the right tool for 1 - A of messages (default 0.05)")
    p.add_argument("--suite", metavar="NAME|FILE.jsonl",
                   help="labelled queries with one shared catalogue (demo-train, bfcl-pooled, a JSONL file): the "
                        "offer-size knobs are fitted on them (split conformal), so the coverage promise holds for "
                        "messages like them; the relevance gate stays label-free")
    p.add_argument("--no-cache", action="store_true", help="refit even when a cached calibration exists")
    _add_encoder(p)
    p.add_argument("--json", action="store_true", help="print JSON")


def _labelled_suite(name: str, catalog_arg: str | None):
    """(catalogue, [(message, gold names)], suite name) of ``calibrate --suite``."""
    from .eval.datasets import load_suite

    suite = load_suite(name, catalog=catalog_arg)  # a BFCL suite refuses --catalog (it brings its own)
    if suite.catalog is None:
        raise ErisLabError(f"suite {suite.name!r} gives each case its own functions; calibrate needs one shared "
                           "catalogue (try bfcl-pooled, demo-train or a JSONL file)", where="--suite")
    return suite.catalog, [(q.query, q.gold) for q in suite.queries if q.gold], suite.name


def _run_calibrate(args) -> int:
    import time

    from .calibration import DEFAULT_ALPHA, calibrate, calibrated_knobs, describe
    from .embed import make_encoder

    alpha = DEFAULT_ALPHA if args.alpha is None else args.alpha
    if not 0 < alpha < 1:
        raise ErisLabError(f"expected a number in (0, 1), got {args.alpha!r}", where="--alpha")
    if args.out and Path(args.out).is_dir():
        raise ErisLabError("is a folder; expected a knobs TOML file path", where=f"--out {args.out}")
    if args.out:
        _check_out_file(args.out, "--out")
    start = time.perf_counter()
    encoder = make_encoder(args.encoder)
    if args.suite:  # labelled: fitted each time (the cache holds label-free calibrations only)
        catalog, labelled, source = _labelled_suite(args.suite, args.catalog)
        knobs = calibrate(catalog, encoder, alpha=alpha, labelled=labelled, labelled_source=source)
    else:
        catalog = _load_catalog(args.catalog)
        knobs = calibrated_knobs(catalog, encoder, alpha=alpha, cache=not args.no_cache)
    record = describe(knobs) | {"seconds": round(time.perf_counter() - start, 3)}
    if args.out:
        knobs.save(args.out)
        record["out"] = args.out
    if args.json:
        _print_json(record)
    else:
        prov = record["provenance"]
        labelled = f", {prov['n_labelled_queries']} labelled queries" if prov.get("n_labelled_queries") else ""
        when = "read from the cache" if prov.get("cached") else f"in {record['seconds']:.1f} s"
        print(f"calibrated {prov.get('n_tools')} tools of {prov.get('catalog')} for {prov.get('embedding_model')} "
              f"{when} ({prov.get('n_pseudo_queries')} pseudo-queries{labelled})")
        print(f"method: {prov.get('method')}")
        if prov.get("promised_coverage") is not None:
            target = prov.get("target_coverage", prov["promised_coverage"])
            capped = (f" (target {target:.3f}: widen_k would need {prov.get('widen_k_needed')} seats)"
                      if prov["promised_coverage"] < target else "")
            if prov.get("finite_sample_guarantee") is False:  # too few messages for the target at all
                n = prov.get("n_labelled_queries") or prov.get("n_pseudo_queries")
                capped = f" (target {target:.3f}: {n} messages are too few to promise it)"
            print(f"promised coverage: {prov['promised_coverage']:.3f} for messages like the calibration ones{capped}")
        print(_table([(k, json.dumps(v)) for k, v in record["knobs"].items()], ("knob", "value")))
        if args.out:
            print(f"wrote {args.out}")
    return 0


# ---------------------------------------------------------------------------------------------
# decide
# ---------------------------------------------------------------------------------------------


def _add_decide(sub) -> None:
    p = sub.add_parser("decide", help="run the policy alone on injected hits (no embedder)")
    p.add_argument("--text", required=True, help="the user message")
    p.add_argument("--hits", required=True,
                   help='JSON list of [name, score] pairs or {"name","score"} objects, or @FILE')
    p.add_argument("--recent", action="append", default=[], metavar="NAME")
    p.add_argument("--fallback", choices=("full_roster", "domain_cluster", "ranked"), help="unsure fallback")
    p.add_argument("--catalog", help="descriptors folder, TOML file or JSON tools file (default descriptors/)")
    p.add_argument("--knobs", metavar="FILE|reference",
                   help="knobs TOML file (default: DESIGN.md's reference values, so fixtures keep their meaning)")
    p.add_argument("--json", action="store_true", help="print JSON")


def _parse_hits(raw: str):
    from ._files import load_json_file, loads_json
    from .policy import Hit

    if raw.startswith("@"):
        data = load_json_file(raw[1:], where=f"--hits {raw}")
    else:
        data = loads_json(raw, where="--hits")
    if not isinstance(data, list):
        raise ErisLabError(f"expected a JSON list of hits, got {type(data).__name__}", where="--hits")
    hits = []
    for i, item in enumerate(data):
        if isinstance(item, dict):
            name, score = item.get("name"), item.get("score")
        elif isinstance(item, list) and len(item) == 2:
            name, score = item
        else:
            raise ErisLabError(f"expected [name, score] or {{\"name\", \"score\"}}, got {item!r}", where=f"--hits[{i}]")
        if (not isinstance(name, str) or isinstance(score, bool) or not isinstance(score, (int, float))
                or not math.isfinite(score)):
            raise ErisLabError(f"expected a string name and a numeric score, got {item!r}", where=f"--hits[{i}]")
        if not -1.0 <= score <= 1.0:  # a cosine; a forced (lexical) hit is 1.0
            raise ErisLabError(f"expected a score in [-1, 1] (a cosine), got {score!r}", where=f"--hits[{i}]")
        if any(h.name == name for h in hits):  # two scores for one tool: which would the policy read?
            raise ErisLabError(f"{name!r} is scored twice; give each tool one score", where=f"--hits[{i}]")
        hits.append(Hit(name=name, score=float(score)))
    return hits


def _run_decide(args) -> int:
    from .offer import build
    from .policy import decide

    catalog = _load_catalog(args.catalog)
    knobs = _load_knobs(args.knobs, catalog)  # no embedder here: any model's knobs may be replayed
    if args.fallback:
        knobs = knobs.replace(unsure_fallback=args.fallback)
    hits = _parse_hits(args.hits)
    catalog.require([h.name for h in hits] + args.recent, where="--hits/--recent")
    decision = decide(args.text, hits, catalog, recent=args.recent, knobs=knobs)
    offer = build(decision, catalog, knobs=knobs)
    record = {
        "hits": [{"name": h.name, "score": h.score} for h in sorted(hits, key=lambda h: -h.score)],
        "decision": decision.to_json(),
        "offered": list(offer.names),
        "overlays": list(offer.overlays),
    }
    _print_json(record) if args.json else _print_routing(record)
    return 0


# ---------------------------------------------------------------------------------------------
# parse
# ---------------------------------------------------------------------------------------------


def _add_parse(sub) -> None:
    p = sub.add_parser("parse", help="read tool calls out of a model output on stdin (never fails on the text)")
    p.add_argument("--offered", required=True, metavar="A,B",
                   help="comma-separated offered tool names (an empty string: nothing offered)")
    p.add_argument("--channel", choices=("text", "native"), default="text",
                   help="text: the content text; native: the server's tool_calls field shown as text")
    p.add_argument("--catalog", help="descriptors folder, TOML or JSON tools file: schemas for the offered tools")
    p.add_argument("--json", action="store_true", help="print JSON (the default; accepted for symmetry)")


def _run_parse(args) -> int:
    from .parse import calls

    offered = [n.strip() for n in args.offered.split(",") if n.strip()]
    schemas = None
    if args.catalog:
        catalog = _load_catalog(args.catalog)
        catalog.require(offered, where="--offered")
        # every tool's schema, as the loop passes them: a written name that is exactly another
        # catalogue tool is then refused as not offered, never mapped onto an offered one (parse.resolve_name)
        schemas = {t.name: t.parameters for t in catalog}
    # Bytes, decoded strictly: under a UTF-8 locale Python reads text stdin with surrogateescape,
    # so invalid bytes would pass through into the JSON instead of being refused.
    from ._files import MAX_INPUT_BYTES

    buffer = getattr(sys.stdin, "buffer", None)
    try:
        # at most the cap of any input file, then refused ("< /dev/zero" read forever: a helper's bad input)
        # a closed stdin ("<&-") is no input: Python sets sys.stdin to None (round fourteen's bad input)
        data = (b"" if sys.stdin is None else buffer.read(MAX_INPUT_BYTES + 1) if buffer is not None
                else sys.stdin.read(MAX_INPUT_BYTES + 1))
        if len(data) > MAX_INPUT_BYTES:
            raise ErisLabError(f"more than {MAX_INPUT_BYTES >> 20} MiB; no model writes that much", where="stdin")
        raw = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise ErisLabError(f"not UTF-8 text ({exc.reason})", where="stdin") from None
    record = calls(raw.removeprefix("\ufeff"), offered, channel=args.channel, schemas=schemas).to_json()
    # strict JSON: the parser drops non-finite numbers; allow_nan=False makes a slip fail loudly
    _print_json(record, allow_nan=False)
    return 0


# ---------------------------------------------------------------------------------------------
# resolve-arg
# ---------------------------------------------------------------------------------------------


def _add_resolve_arg(sub) -> None:
    p = sub.add_parser("resolve-arg", help="resolve an argument value against the things that exist")
    p.add_argument("--candidates", required=True, metavar="FILE",
                   help='JSON list of strings or of {"value", "aliases": [...]} objects')
    p.add_argument("--value", required=True, help="the value the model wrote")
    p.add_argument("--no-embed", action="store_true",
                   help="lexical stages only (no embedding model is loaded)")
    p.add_argument("--auto", type=float, default=None, help="auto-resolve at or above this score (default 0.75)")
    p.add_argument("--ask", type=float, default=None, help="ask the user at or above this score (default 0.5)")
    p.add_argument("--json", action="store_true", help="print JSON (the default; accepted for symmetry)")


def _run_resolve_arg(args) -> int:
    from ._files import load_json_file
    from .resolution import candidates_from_json, check_thresholds, resolve

    thresholds = {flag: getattr(args, flag) for flag in ("auto", "ask") if getattr(args, flag) is not None}
    check_thresholds(**thresholds, where="--")  # before any file is read or model loaded
    data = load_json_file(args.candidates, where=f"--candidates {args.candidates}")
    candidates = candidates_from_json(data, where=args.candidates)
    embedder = None
    if not args.no_embed:
        from .embed import default_embedder

        embedder = default_embedder()
    _print_json(resolve(args.value, candidates, embedder=embedder, **thresholds).to_json())
    return 0


# ---------------------------------------------------------------------------------------------
# grammar, grammar-check, prompt
# ---------------------------------------------------------------------------------------------


def _parse_offer(raw: str, catalog):
    """An Offer from ``--offer A,B`` (``""`` = nothing callable); unknown names are an error."""
    from .offer import Offer

    names = catalog.require(dict.fromkeys(n.strip() for n in raw.split(",") if n.strip()), where="--offer")
    return Offer.given(names, reason="--offer")


#: The longest candidate output ``grammar-check`` reads: llguidance checks about 0.25 MiB a second
#: here, so 1 MiB takes 4 s, while the 64 MiB any input file may hold took minutes and 5.6 GB (a
#: helper's bad input, 2026-12-04). No model writes a megabyte in one reply.
MAX_CANDIDATE_BYTES = 1 << 20


def _read_text(path: str, flag: str, max_bytes: int | None = None) -> str:
    from ._files import MAX_INPUT_BYTES, read_user_text

    # capped: /dev/zero is refused, not read until memory ends
    return read_user_text(path, where=f"{flag} {path}", max_bytes=max_bytes or MAX_INPUT_BYTES)


def _add_grammar(sub) -> None:
    p = sub.add_parser("grammar", help="print the GBNF grammar for an offer or a JSON Schema")
    p.add_argument("--catalog", help="descriptors folder, TOML file or JSON tools file (default descriptors/)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--offer", metavar="A,B", help='offered tool names, comma-separated ("" = none callable)')
    source.add_argument("--schema", metavar="FILE", help="a JSON Schema file (compiles the bare schema)")
    p.add_argument("--max-calls", type=int, help="tool calls per reply (default: the max_calls knob)")
    p.add_argument("--lenient", action="store_true", help="unsupported keywords warn instead of failing")
    p.add_argument("--knobs", help="knobs TOML file")
    _add_levers(p)
    p.add_argument("--json", action="store_true",
                   help='print {"grammar", "names", "warnings", "not_enforced"}')


def _run_grammar(args) -> int:
    from .errors import SchemaError
    from .grammar import compile as compile_grammar
    from .grammar import compile_schema
    from ._files import no_duplicate_keys, refuse_json_constant
    from .grammar.compiler import MAX_SCHEMA_DEPTH, recursion_headroom
    from .grammar.envelope import style

    knobs = _levers(args, _load_knobs(args.knobs))
    if args.schema is not None:
        text = _read_text(args.schema, "--schema")
        try:
            with recursion_headroom(where=args.schema):  # deep JSON gets the depth message below
                schema = json.loads(text, object_pairs_hook=no_duplicate_keys,  # a key twice: refused
                                    parse_constant=refuse_json_constant)  # NaN: refused
        except json.JSONDecodeError as exc:
            raise SchemaError(f"not valid JSON (line {exc.lineno}: {exc.msg})", where=args.schema) from None
        except SchemaError:  # [[[... 100,000 deep: json's scanner recursed past any sane limit (before
            # ValueError, which it is: the message said "not valid JSON" for valid JSON, a helper's check)
            raise SchemaError(f"JSON nested too deeply to read; a schema may nest at most {MAX_SCHEMA_DEPTH} "
                              "levels", where=args.schema) from None
        except ValueError as exc:  # an integer of more than 4,300 digits (Python's int limit), NaN
            raise SchemaError(f"not valid JSON ({exc})", where=args.schema) from None
        try:
            grammar = compile_schema(schema, lenient=args.lenient, style=style(knobs))
        except SchemaError as exc:
            raise exc.within(args.schema) from None  # name the file, then the JSON path
    else:
        catalog = _load_catalog(args.catalog)
        offer = _parse_offer(args.offer, catalog)
        try:
            grammar = compile_grammar(offer, catalog, max_calls=args.max_calls, lenient=args.lenient, knobs=knobs)
        except SchemaError as exc:  # name the catalogue too ("a:b: #/if: unsupported keyword 'if'" named
            # no file: a helper's bad input, 2026-12-05)
            raise (exc.within(args.catalog) if args.catalog else exc) from None
    if args.json:
        _print_json({"grammar": grammar.text, "names": list(grammar.names),
                     "warnings": [list(w) for w in grammar.warnings],
                     "not_enforced": [list(n) for n in grammar.not_enforced]})
        return 0
    sys.stdout.write(grammar.text)
    for where, message in grammar.warnings:
        print(f"eris-lab: warning: {where}: {message}", file=sys.stderr)
    for where, keyword in grammar.not_enforced:
        # a note, not an error: the executor's JSON Schema check still enforces it after the call
        print(f"eris-lab: note: not enforced by the grammar (checked after the call): {where}: {keyword}",
              file=sys.stderr)
    return 0


def _add_grammar_check(sub) -> None:
    p = sub.add_parser("grammar-check", help="does llama.cpp's grammar engine accept this text? (exit 0/1)")
    p.add_argument("--grammar", required=True, metavar="FILE", help="a GBNF file")
    text = p.add_mutually_exclusive_group(required=True)
    text.add_argument("--text", metavar="S", help="the candidate output")
    text.add_argument("--text-file", metavar="F", help="a file holding the candidate output")
    p.add_argument("--model", metavar="GGUF", help="vocabulary to tokenize with (default: bundled Gemma 3)")


def _run_grammar_check(args) -> int:
    from .grammar.oracle import Oracle, grammar_error, missing_root, oracle

    gbnf = _read_text(args.grammar, "--grammar")
    # an empty or rootless file (what a failed `eris-lab grammar > g.gbnf` leaves) would accept
    # anything: refuse it, and any grammar llama.cpp refuses, naming the file and the reason
    reason = missing_root(gbnf)
    if reason:
        raise ErisLabError(reason, where=args.grammar)
    message = grammar_error(gbnf)
    if message:
        raise ErisLabError(f"llama.cpp's grammar parser rejected it: {message}", where=args.grammar)
    if args.text is not None:
        text = args.text
        if len(text.encode("utf-8", "surrogatepass")) > MAX_CANDIDATE_BYTES:
            raise ErisLabError(f"longer than {MAX_CANDIDATE_BYTES >> 20} MiB, the most grammar-check reads", where="--text")
    else:
        text = _read_text(args.text_file, "--text-file", max_bytes=MAX_CANDIDATE_BYTES)
    judge = Oracle(args.model) if args.model else oracle()
    n_ok, accepted = judge.prefix_accepted(gbnf, text)
    n_tokens = len(judge.tokenize(text))
    if accepted:
        print(f"accepted ({n_tokens} tokens)")
        return 0
    where = "the end of the text is not a complete match" if n_ok == n_tokens else f"token {n_ok + 1} of {n_tokens}"
    print(f"rejected at {where}")
    return 1


def _add_prompt(sub) -> None:
    p = sub.add_parser("prompt", help="print the slim tool prompt for an offer")
    p.add_argument("--catalog", help="descriptors folder, TOML file or JSON tools file (default descriptors/)")
    p.add_argument("--offer", required=True, metavar="A,B", help='offered tool names ("" = none callable)')
    p.add_argument("--tokens", action="store_true",
                   help="also print token counts (bundled Gemma tokenizer) to stderr: full catalogue vs slim")
    _add_levers(p)


def _run_prompt(args) -> int:
    from . import prompt

    catalog = _load_catalog(args.catalog)
    offer = _parse_offer(args.offer, catalog)
    from .knobs import Knobs

    knobs = _levers(args, Knobs())
    sys.stdout.write(prompt.slim(offer, catalog, knobs=knobs))
    sys.stdout.flush()
    if args.tokens:
        report = prompt.token_report(offer, catalog, knobs=knobs)
        examples = (f", of which {report['n_examples']} worked example(s) {report['example_tokens']}"
                    if report["n_examples"] else "")
        print(f"eris-lab: tokens: catalogue with schemas {report['catalog_tokens']}, slim offer "
              f"{report['offer_tokens']} ({report['ratio']:.1%}){examples}", file=sys.stderr)
    return 0


def _add_mcp_serve(sub) -> None:
    p = sub.add_parser("mcp-serve", help="serve the catalogue over MCP (stdio): meta-tools or a routed subset")
    p.add_argument("--catalog", help="descriptors folder, TOML file or JSON tools file (default descriptors/)")
    p.add_argument("--mode", choices=("meta", "routed"), default="meta",
                   help="meta: tool_search/tool_describe/tool_execute; routed: tool_route + the routed tools")
    p.add_argument("--read-only", action="store_true", help="never execute a tool that changes state")
    p.add_argument("--embedder", choices=("auto", "none"), default="auto",
                   help="auto: the bundled MiniLM (keyword search if it cannot load); none: keyword search only")
    p.add_argument("--k", type=int, default=5, help="hits per search (default 5)")


def _run_mcp_serve(args) -> int:
    from .mcp.server import serve

    catalog = _load_catalog(args.catalog)
    if args.k < 1:
        return _fail(f"--k: expected an integer >= 1, got {args.k!r}")
    embedder = None
    if args.embedder == "auto":
        from .embed import make_encoder

        embedder = make_encoder()  # the default encoder ($ERIS_LAB_ENCODER)
    serve(catalog, mode=args.mode, read_only=args.read_only, embedder=embedder, k=args.k)
    return 0


# ---------------------------------------------------------------------------------------------
# eval
# ---------------------------------------------------------------------------------------------


def _add_eval(sub) -> None:
    p = sub.add_parser("eval", help="evaluate one strategy on a labelled suite (BFCL, demo, or FILE.jsonl)")
    p.add_argument("--suite", required=True, metavar="NAME|FILE.jsonl",
                   help="multiple, live_multiple, irrelevance, live_irrelevance, live_relevance, parallel_multiple, "
                        "live_parallel_multiple, bfcl-pooled, bfcl-pooled-all, parallel_multiple-pooled, multi_turn_base, "
                        "multi_turn_miss_func, multi_turn_long_context, demo, "
                        "demo-train, demo-test, or a JSONL file of {query, gold, history}")
    p.add_argument("--catalog", help="catalogue for demo suites and files (default descriptors/)")
    p.add_argument("--strategy", default="policy", metavar="S",
                   help="keyword, bm25, dense, hybrid-rrf, hybrid-weighted, policy, policy-reference, policy-no-companions, "
                        "policy-no-memory, policy-no-slots, policy-cluster, "
                        "policy-abstain, toolkit, meta; parameters as NAME:k=v,... (default policy: calibrated knobs)")
    p.add_argument("--knobs", metavar="FILE|reference",
                   help="knobs for the embedding + policy strategies: a TOML file or 'reference' "
                        "(default: policy calibrates on the suite's catalogue without labels)")
    p.add_argument("--embedder", default="minilm", choices=("minilm", "use-multilingual"),
                   help="embedding model (default minilm: the bundled all-MiniLM-L6-v2)")
    _add_encoder(p)
    p.add_argument("--split", choices=("train", "test"), help="keep one split")
    p.add_argument("--limit", type=int, metavar="N", help="first N queries only")
    p.add_argument("--json", action="store_true", help="print JSON")


def _print_eval(record: dict[str, Any]) -> None:
    from .eval.metrics import METRICS
    from .eval.metrics import format_value as fmt

    print(f"suite {record['suite']} · strategy {record['strategy']} · n {record['n']}"
          + (f" · {record['notes']}" if record.get("notes") else ""))
    print(_table([(m.name, fmt(record.get(m.name), m.name)) for m in METRICS if m.name != "n"]
                 + [(f"recall@{k}", fmt(v)) for k, v in record.get("recall_at", {}).items()], ("metric", "value")))
    per = record.get("per_domain", {})
    if per:
        rows = sorted(per.items(), key=lambda kv: (-kv[1]["n"], kv[0]))[:15]
        print()
        print(_table([(k, v["n"], fmt(v["recall"]), fmt(v["top1"]), fmt(v["mean_offer"]), fmt(v["lock_in"]))
                      for k, v in rows], ("domain", "n", "recall", "top1", "mean_offer", "lock_in")))
        if len(per) > 15:
            print(f"... and {len(per) - 15} more domains (--json for all)")
    tags = record.get("per_tag", {})
    if len(tags) > 1:
        print()
        print(_table([(k, v["n"], fmt(v["recall"]), fmt(v["mean_offer"]), fmt(v["lock_in"]), fmt(v["empty_rate"]))
                      for k, v in sorted(tags.items(), key=lambda kv: (-kv[1]["n"], kv[0]))],
                     ("tag", "n", "recall", "mean_offer", "lock_in", "empty_rate")))
    missed = record.get("misrouted", [])
    if missed:
        print(f"\nmisrouted: {len(missed)} (first 10; --json for all)")
        for m in missed[:10]:
            top = ", ".join(f"{s['name']} {s['score']:.3f}" for s in m["scores"][:3])
            print(f"- {m['id']}: {m['query'][:70]!r} gold {m['gold']} -> {m['n_offered']} offered "
                  f"{m['offered'][:3]} [{m['rule']}] {m['why']}; top: {top}")


def _run_eval(args) -> int:
    from .embed import DEFAULT_MODEL_ID, make_encoder
    from .eval.datasets import load_suite
    from .eval.embedders import make_embedder
    from .eval.harness import run_eval
    from .strategies import make

    make(args.strategy).check_params()  # a bad name or parameter fails before the suite loads
    knobs = _load_knobs(args.knobs) if args.knobs else None  # None: each strategy's own (policy: calibrated)
    if args.encoder and args.embedder != "minilm":
        raise ErisLabError(f"applies to the bundled MiniLM only, not --embedder {args.embedder}", where="--encoder")
    suite = load_suite(args.suite, catalog=args.catalog, split=args.split, limit=args.limit)
    # None: the harness's default embedder (the default encoder, $ERIS_LAB_ENCODER)
    embedder = make_embedder(args.embedder) if args.embedder != "minilm" else (
        make_encoder(args.encoder) if args.encoder else None)
    if knobs is not None and args.knobs != REFERENCE:
        knobs.check_against(domains=suite.catalog.domains if suite.catalog is not None else None,
                            model_id=embedder.model_id if embedder is not None else DEFAULT_MODEL_ID,
                            where=f"--knobs {args.knobs}")
    record = run_eval(suite, args.strategy, knobs=knobs, embedder=embedder,
                      progress=not args.json or sys.stderr.isatty())
    _print_json(record) if args.json else _print_eval(record)
    return 0


# ---------------------------------------------------------------------------------------------
# tune
# ---------------------------------------------------------------------------------------------


def _add_tune(sub) -> None:
    p = sub.add_parser("tune", help="fit threshold, single-hit floor, margin (and domain floors) on a train split "
                                    "(a coverage promise from labelled queries: eris-lab calibrate --suite)")
    p.add_argument("--suite", required=True, metavar="NAME|FILE.jsonl", help="suite to fit on (e.g. demo-train)")
    p.add_argument("--test-suite", metavar="NAME|FILE.jsonl",
                   help="suite to report on (default: the matching -test suite, or the test split of the same file)")
    p.add_argument("--catalog", help="catalogue for demo suites and files (default descriptors/)")
    p.add_argument("--out", required=True, metavar="FILE", help="knobs TOML to write (atomically)")
    p.add_argument("--max-lock-in", type=float, default=0.01, help="constraint: lock-in rate <= this (default 0.01)")
    p.add_argument("--max-mean-offer", type=float, default=5.0, help="constraint: mean offer size <= this (default 5)")
    p.add_argument("--limit", type=int, metavar="N", help="first N queries of each split only")
    p.add_argument("--json", action="store_true", help="print JSON")


def _check_fraction(value: float, flag: str) -> None:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ErisLabError(f"expected a rate in [0, 1], got {value!r}", where=flag)


def _check_out_file(path: str, flag: str) -> None:
    """Refuse an output file path that cannot be written, before any work starts."""
    target = Path(path)
    if target.is_dir():
        raise ErisLabError("is a folder, expected a file to write", where=f"{flag} {path}")
    if target.exists() and not target.is_file():  # a FIFO or a device: never replaced (bad input row 72)
        raise ErisLabError("not a regular file (a device, a pipe or a socket); written files replace a file "
                           "whole, so name a file", where=f"{flag} {path}")
    parent = next((p for p in target.absolute().parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise ErisLabError(f"{str(parent)!r} is a file, not a folder", where=f"{flag} {path}")


def _run_tune(args) -> int:
    from .eval.tuner import tune_command

    _check_fraction(args.max_lock_in, "--max-lock-in")
    if not math.isfinite(args.max_mean_offer) or args.max_mean_offer <= 0:
        raise ErisLabError(f"expected a finite number of tools > 0, got {args.max_mean_offer!r}",
                           where="--max-mean-offer")
    if args.limit is not None and args.limit < 1:
        raise ErisLabError(f"expected an integer >= 1, got {args.limit!r}", where="--limit")
    _check_out_file(args.out, "--out")
    record = tune_command(args.suite, test_suite=args.test_suite, catalog=args.catalog, out=args.out,
                          max_lock_in=args.max_lock_in, max_mean_offer=args.max_mean_offer, limit=args.limit,
                          progress=not args.json or sys.stderr.isatty())
    if args.json:
        _print_json(record)
    else:
        from .eval.tuner import format_tune

        print(format_tune(record))
    return 0


# ---------------------------------------------------------------------------------------------
# generate
# ---------------------------------------------------------------------------------------------


def _add_generate(sub) -> None:
    p = sub.add_parser("generate", help="one whole turn: route, slim prompt + grammar, model, parse, execute")
    p.add_argument("text", help="the user message")
    p.add_argument("--catalog", help="descriptors folder, TOML file or JSON tools file (default descriptors/)")
    p.add_argument("--model", help="a GGUF file (default: the bundled Gemma 3 270M, a base model)")
    p.add_argument("--max-rounds", type=int, default=2, help="rounds in which tools may be called (default 2)")
    p.add_argument("--max-tokens", type=int, default=256, help="generation budget per round, in tokens")
    p.add_argument("--threads", type=int, default=1, help="CPU threads for llama.cpp (pin it; default 1)")
    p.add_argument("--knobs", metavar="FILE|reference",
                   help="knobs TOML file or 'reference' (default: calibrated for this catalogue)")
    _add_encoder(p)
    p.add_argument("--recent", action="append", default=[], metavar="NAME", help="a recent successful tool")
    _add_levers(p)
    _add_chat_format(p)
    p.add_argument("--json", action="store_true", help="print JSON")


CHAT_FORMATS = ("auto", "plain", "functiongemma")


def _add_chat_format(p) -> None:
    """``--chat-format``: how messages become the model's prompt (``LlamaRunner(chat_template=...)``)."""
    p.add_argument("--chat-format", choices=CHAT_FORMATS, default="auto",
                   help="auto: FunctionGemma's format when the GGUF's chat template is FunctionGemma's, else the "
                        "GGUF's template, else plain (base models); plain; functiongemma: its developer turn, "
                        "function declarations and stop strings (default auto)")


def _run_generate(args) -> int:
    from .execution import Session
    from .llm import LlamaRunner
    from .loop import print_turn, run_turn

    if args.max_rounds < 0:
        raise ErisLabError(f"expected an integer >= 0, got {args.max_rounds}", where="--max-rounds")
    if args.max_tokens < 1 or args.threads < 1:
        raise ErisLabError("expected a positive integer", where="--max-tokens/--threads")
    if args.model and not Path(args.model).is_file():
        raise ErisLabError("no such GGUF file", where=f"--model {args.model}")
    from .knobs import parse_levers

    parse_levers(args.levers)  # bad input fails before the router is built (a calibration can take seconds)
    catalog = _load_catalog(args.catalog)
    catalog.require(args.recent, where="--recent")
    router = _router(catalog, args.knobs, args.encoder)
    knobs = _levers(args, router.knobs)
    runner = LlamaRunner(args.model, n_threads=args.threads, chat_template=args.chat_format)
    with Session() as session:  # its temporary agenda and vault are removed when the turn ends
        for name in args.recent:
            session.remember(name)
        turn = run_turn(args.text, router=router, runner=runner, session=session, max_rounds=args.max_rounds,
                        max_tokens=args.max_tokens, knobs=knobs)
    _print_json(turn.to_json()) if args.json else print_turn(turn)
    return 0


# ---------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------


def _add_report(sub) -> None:
    p = sub.add_parser("report", help="run every notebook with papermill into reports/<UTC stamp>/ (the main job)")
    p.add_argument("--out", metavar="DIR", help="reports root (default reports/); latest -> the last good run")
    p.add_argument("--quick", action="store_true", help="small samples (a few minutes)")
    p.add_argument("--params", metavar="FILE.toml",
                   help="parameters: top-level keys go to every notebook declaring them, [notebooks.NN_topic] to one")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="one shared parameter (a TOML value; repeatable; wins over --params)")
    p.add_argument("--notebook", action="append", default=[], metavar="FILE",
                   help="run only these notebook sources (.py percent or .ipynb; repeatable)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")


def _run_report(args) -> int:
    from .lab import report

    shared, own = report.load_params(args.params)
    shared.update(dict(report.parse_param(p) for p in args.param))
    result = report.run(out=args.out, quick=args.quick, params=shared, notebook_params=own,
                        sources=args.notebook or None, progress=not args.no_progress)
    for failure in result.failures:
        print(f"eris-lab: report: {failure}", file=sys.stderr)
    state = "latest -> this run" if result.latest_moved else "latest left unchanged"
    print(f"report {'ok' if result.ok else 'FAILED'} in {result.seconds:.0f} s: {result.folder / 'index.html'} ({state})")
    return 0 if result.ok else 1


# ---------------------------------------------------------------------------------------------
# bench, lab, tune-app: entry points with flags of their own (parsed by the module that owns them)
# ---------------------------------------------------------------------------------------------


def _add_bench(sub) -> None:
    from .bench import BENCHES

    p = sub.add_parser("bench", help="run a benchmark that prints numbers (NAME --help for its flags)",
                       description="Benchmarks print numbers; they are not tests. "
                                   + "; ".join(f"{name}: {what}" for name, what in BENCHES.items()))
    p.add_argument("name", choices=tuple(BENCHES), metavar="NAME", help=", ".join(BENCHES))
    p.add_argument("args", nargs=argparse.REMAINDER, help="the benchmark's own flags")


def _run_bench(args) -> int:
    import importlib

    return importlib.import_module(f"eris_lab.bench.{args.name}").main(args.args)


def _add_lab(sub) -> None:
    p = sub.add_parser("lab", help="JupyterLab on notebooks/ with the project's kernel (make lab)", add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER, help="--port N, --root DIR (see eris-lab lab --help)")


def _run_lab(args) -> int:
    from .lab.server import main as serve

    return serve(["lab", *args.args])


def _add_tune_app(sub) -> None:
    p = sub.add_parser("tune-app", help="notebook 02 as a Voila tuning app (make tune)", add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER, help="--port N, -p NAME=VALUE (see eris-lab tune-app --help)")


def _run_tune_app(args) -> int:
    from .lab.server import main as serve

    return serve(["tune", *args.args])


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------

#: Commands whose flags the module behind them parses (they receive them as ``args.args``).
_FLAGS_OF_THEIR_OWN = ("lab", "tune-app")

COMMANDS: dict[str, tuple[Callable[[Any], None], Callable[[Any], int]]] = {
    "route": (_add_route, _run_route),
    "calibrate": (_add_calibrate, _run_calibrate),
    "decide": (_add_decide, _run_decide),
    "parse": (_add_parse, _run_parse),
    "resolve-arg": (_add_resolve_arg, _run_resolve_arg),
    "grammar": (_add_grammar, _run_grammar),
    "grammar-check": (_add_grammar_check, _run_grammar_check),
    "prompt": (_add_prompt, _run_prompt),
    "eval": (_add_eval, _run_eval),
    "tune": (_add_tune, _run_tune),
    "generate": (_add_generate, _run_generate),
    "mcp-serve": (_add_mcp_serve, _run_mcp_serve),
    "report": (_add_report, _run_report),
    "bench": (_add_bench, _run_bench),
    "lab": (_add_lab, _run_lab),
    "tune-app": (_add_tune_app, _run_tune_app),
}


def main_parser() -> argparse.ArgumentParser:
    """The argument parser of ``eris-lab`` with every subcommand in ``COMMANDS``."""
    parser = Parser(prog="eris-lab", description="Tool routing lab for small local LLMs.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for add, _ in COMMANDS.values():
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 negative verdict, 2 bad input)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = main_parser()
    for arg in sys.argv[1:] if argv is None else argv:
        if not _utf8(arg):  # bytes the shell passed that are no UTF-8 (decoded with surrogateescape)
            return _fail(f"argument {printable(arg.encode('utf-8', 'surrogateescape').decode('utf-8', 'replace'))!r}: "
                         "not UTF-8 text")
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and args.command in _FLAGS_OF_THEIR_OWN:
            args.args = [*extra, *args.args]  # argparse leaves flags before a REMAINDER unclaimed
        elif extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        for flag in _PATH_FLAGS:  # "--knobs ''" used the default knobs without a word (a helper's bad input)
            if getattr(args, flag, None) == "" or (isinstance(getattr(args, flag, None), str)
                                                    and not getattr(args, flag).strip()):
                return _fail(f"--{flag.replace('_', '-')}: expected a path, got an empty string")
        status = COMMANDS[args.command][1](args)
        sys.stdout.flush()  # a full disk or a closed pipe is met here, not at exit
        return status
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else _fail(exc.code)
    except ErisLabError as exc:
        return _fail(str(exc))
    except RecursionError:  # a backstop: every reader bounds nesting, so this names no input
        return _fail("input nested too deeply to process (a JSON or TOML value, or a schema)")
    except KeyboardInterrupt:
        return _fail("interrupted")
    except BrokenPipeError:
        return 0
    except OSError as exc:  # "> /dev/full": one line, not a traceback (a helper's bad input, 2026-12-05)
        where = exc.filename if exc.filename is not None else "output"
        return _fail(f"{where}: {exc.strerror or exc}")


#: Flags that name a file or folder: an empty value is refused, never read as "not given".
_PATH_FLAGS = ("knobs", "catalog", "out", "model", "grammar", "schema", "candidates", "text_file", "suite_file")


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
