"""Transfer: knobs fitted on one catalogue (or one labelled suite), judged on the others.

Issue 18 asks whether the policy's knobs carry over to catalogues they were not fitted on. Each
*source* below yields one set of knobs; each is applied, unchanged, to every *target* suite with
the calibrated ``policy`` strategy, and the table prints recall / mean offer (the empty-offer rate
on the irrelevance suites) with the promised coverage beside the observed one.

Sources (``SOURCES``):

- ``reference``: DESIGN.md's reference knobs (``Knobs()``), fitted on nothing;
- ``own, label-free``: each target calibrated on its own catalogue without labels (the default of
  ``route`` and ``eval``: no label of the target is read, so it is not a transfer but the baseline
  the transfers are judged against);
- ``demo, label-free`` and ``bfcl-pooled, label-free``: label-free knobs of the demo catalogue
  (56 tools) and of the pooled BFCL catalogue (1,041 tools), applied elsewhere;
- ``demo-train, labelled`` and ``bfcl-pooled, labelled``: the offer-size knobs and the gate floor
  fitted on labelled queries (``eris-lab calibrate --suite``).

A cell whose target shares the source's catalogue or queries is marked (``same`` in the JSON:
``split`` for demo-train -> demo-test, the held-out half of the same catalogue; ``catalogue``;
``queries``): only unmarked cells are transfers. The labelled bfcl-pooled source and the
live_multiple target share their queries, so that cell is skipped outright.

Run: ``eris-lab bench transfer [--targets ...] [--limit N] [--out FILE]`` (about 3 minutes on 2
cores with the embedding caches warm; ``docs/results/transfer-2026-11-30.json``).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from .._files import repo_root, write_atomic
from ..errors import ErisLabError

__all__ = ["SOURCES", "DEFAULT_TARGETS", "transfer", "format_table", "table_rows", "latest_recorded", "main"]

DEFAULT_TARGETS = ("demo-test", "multiple", "live_multiple", "bfcl-pooled", "parallel_multiple-pooled",
                   "irrelevance", "live_irrelevance")
#: Source -> (catalogue it was fitted on, queries it read): marks cells that are not transfers.
SOURCES: dict[str, tuple[str | None, str | None]] = {
    "reference": (None, None),
    "own, label-free": (None, None),
    "demo, label-free": ("demo", None),
    "bfcl-pooled, label-free": ("bfcl-pooled", None),
    "demo-train, labelled": ("demo", "demo-train"),
    "bfcl-pooled, labelled": ("bfcl-pooled", "live_multiple"),
}
_CATALOG_OF = {"demo-test": "demo", "demo": "demo", "demo-train": "demo", "bfcl-pooled": "bfcl-pooled"}
_QUERIES_OF = {"bfcl-pooled": "live_multiple", "live_multiple": "live_multiple", "demo-test": "demo-test"}
_EMPTY_TARGETS = ("irrelevance", "live_irrelevance")


def _same(source: str, target: str) -> str | None:
    """How ``target`` overlaps what ``source`` was fitted on: ``queries``, ``split``, ``catalogue`` or None."""
    catalog, queries = SOURCES[source]
    if queries and _QUERIES_OF.get(target) == queries:
        return "queries"
    if queries == "demo-train" and target == "demo-test":
        return "split"
    if catalog and _CATALOG_OF.get(target) == catalog:
        return "catalogue"
    return None


def _source_knobs(name: str, embedder) -> Any:
    """The knobs of one source (None: calibrate each target on its own catalogue)."""
    from ..calibration import calibrate, calibrated_knobs
    from ..catalog import load
    from ..eval.datasets import load_suite
    from ..knobs import Knobs

    if name == "reference":
        return Knobs()
    if name == "own, label-free":
        return None
    if name == "demo, label-free":
        return calibrated_knobs(load(None), embedder)
    pooled = load_suite("bfcl-pooled")
    if name == "bfcl-pooled, label-free":
        return calibrated_knobs(pooled.catalog, embedder)
    if name == "demo-train, labelled":
        train = load_suite("demo-train")
        return calibrate(train.catalog, embedder, labelled=[(q.query, q.gold) for q in train.queries if q.gold],
                         labelled_source="demo-train")
    if name == "bfcl-pooled, labelled":
        return calibrate(pooled.catalog, embedder, labelled=[(q.query, q.gold) for q in pooled.queries if q.gold],
                         labelled_source="bfcl-pooled (live_multiple queries)")
    raise ErisLabError(f"unknown source {name!r}; expected one of {', '.join(SOURCES)}", where="--sources")


def transfer(sources: Sequence[str] = tuple(SOURCES), targets: Sequence[str] = DEFAULT_TARGETS, *,
             limit: int | None = None, progress: bool = True,
             on_cell: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Every source's knobs on every target suite (module docstring).

    Returns ``{"cells": [...], "sources": {...}, ...}``; a cell is ``{"source", "target", "same",
    "n", "recall", "name_recall", "mean_offer", "full_roster_rate", "empty_rate",
    "irrelevance_empty_rate", "promised_coverage"}`` (rates in [0, 1], offers in tools).
    """
    from ..eval.datasets import load_suite
    from ..eval.harness import prime, run, shared_embedder
    from ..eval.metrics import evaluate
    from ..strategies import make

    started = time.perf_counter()
    memo = shared_embedder()
    knobs = {}
    for name in sources:
        t0 = time.perf_counter()
        knobs[name] = _source_knobs(name, memo)
        if progress:
            print(f"knobs of {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    cells = []
    for target in targets:
        suite = load_suite(target, limit=limit)
        prime(memo, suite)
        for name in sources:
            same = _same(name, target)
            if same == "queries":
                continue
            strategy = make("policy", embedder=memo, knobs=knobs[name])
            record = evaluate(run(strategy, suite, progress=progress), suite=target, strategy="policy")
            if knobs[name] is not None:
                promised = knobs[name].notes.get("calibration", {}).get("promised_coverage")
            else:  # calibrated per target: a promise only where one calibration covers the suite
                promised = strategy.knobs_.notes.get("calibration", {}).get("promised_coverage") if (
                    suite.catalog is not None) else None
            cell = {"source": name, "target": target, "same": same, "n": record["n"],
                    **{k: record.get(k) for k in ("recall", "name_recall", "mean_offer", "full_roster_rate",
                                                  "empty_rate", "irrelevance_empty_rate")},
                    "promised_coverage": promised if target not in _EMPTY_TARGETS else None}
            cells.append(cell)
            if on_cell:
                on_cell(cell)
    return {
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "embedding_model": memo.model_id, "limit": limit, "targets": list(targets),
        "sources": {name: (None if k is None else {
            "threshold": k.threshold, "single_hit_floor": k.single_hit_floor, "subset_margin": k.subset_margin,
            "widen_k": k.widen_k, "relevance_floor": k.relevance_floor,
            "method": k.notes.get("calibration", {}).get("method", "DESIGN.md reference knobs")})
            for name, k in knobs.items()},
        "seconds": round(time.perf_counter() - started, 1),
        "cells": cells,
    }


def _cell_text(cell: dict[str, Any] | None) -> str:
    if cell is None:
        return "-"
    if cell["target"] in _EMPTY_TARGETS:
        text = f"empty {cell['irrelevance_empty_rate']:.3f}"
    else:
        text = f"{cell['recall']:.3f} / {cell['mean_offer']:.1f}"
    return f"({text})" if cell["same"] else text


def format_table(report: dict[str, Any]) -> str:
    """Sources as rows, targets as columns: recall / mean offer (``name_recall`` is in the JSON); the
    empty rate on irrelevance suites; parentheses mark a target that shares the source's catalogue."""
    targets = report["targets"]
    by = {(c["source"], c["target"]): c for c in report["cells"]}
    width = max(16, *(len(t) + 2 for t in targets))
    lines = [f"{'knobs from':<26}" + "".join(f"{t:>{width}}" for t in targets)]
    lines.append("-" * len(lines[0]))
    for source in report["sources"]:
        lines.append(f"{source:<26}" + "".join(f"{_cell_text(by.get((source, t))):>{width}}" for t in targets))
    lines += ["", "coverage: promised vs observed (transfers only; parentheses above are not transfers)"]
    for c in report["cells"]:
        if c["promised_coverage"] is not None and not c["same"] and c["recall"] is not None and c["source"] != "reference":
            # by name where the target's names have schema variants (calibration.name_variants)
            observed = c["name_recall"] if c.get("name_recall") is not None else c["recall"]
            lines.append(f"  {c['source']:<26} -> {c['target']:<26} promised {c['promised_coverage']:.3f}  "
                         f"observed {observed:.3f} ({observed - c['promised_coverage']:+.3f})"
                         + (" by name" if c.get("name_recall") is not None else ""))
    lines.append(f"model {report['embedding_model']}; {report['seconds']} s")
    return "\n".join(lines)


def table_rows(report: dict[str, Any]) -> list[dict[str, str]]:
    """The table of :func:`format_table` as rows (``{"knobs from", <target>: cell text}``) for ``viz.table``."""
    by = {(c["source"], c["target"]): c for c in report["cells"]}
    return [{"knobs from": source, **{t: _cell_text(by.get((source, t))) for t in report["targets"]}}
            for source in report["sources"]]


def latest_recorded(folder: str | Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The newest recorded run, ``(path, report)``: ``docs/results/transfer-*.json`` by the date in
    the name (``transfer-slots-2026-12-01.json`` is older than ``transfer-sentences-2026-12-02.json``,
    though it sorts after it by name), or None when there is none or it cannot be read."""
    folder = Path(folder) if folder is not None else repo_root() / "docs" / "results"

    def newest_first(path: Path) -> tuple[str, str]:
        dates = re.findall(r"\d{4}-\d{2}-\d{2}", path.name)
        return (dates[-1] if dates else "", path.name)

    for path in sorted(folder.glob("transfer-*.json"), key=newest_first, reverse=True):
        try:
            return path, json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """``eris-lab bench transfer``: print the transfer table, write the JSON atomically."""
    from ..cli import Parser
    from ..eval.datasets import SUITES

    parser = Parser(prog="eris-lab bench transfer", description=__doc__.split("\n")[0])
    parser.add_argument("--sources", nargs="+", default=list(SOURCES), help=f"default: {'; '.join(SOURCES)}")
    parser.add_argument("--targets", nargs="+", default=list(DEFAULT_TARGETS), help=f"default: {' '.join(DEFAULT_TARGETS)}")
    parser.add_argument("--limit", type=int, help="first N queries of each target suite (a quick run)")
    parser.add_argument("--out", help="JSON file (default reports/transfer-<UTC time>.json)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    unknown = [s for s in args.sources if s not in SOURCES]
    if unknown:
        raise ErisLabError(f"unknown source {unknown[0]!r}; expected one of: {'; '.join(SOURCES)}", where="--sources")
    unknown = [t for t in args.targets if t not in SUITES]
    if unknown:
        raise ErisLabError(f"unknown suite {unknown[0]!r}; expected one of {', '.join(SUITES)}", where="--targets")
    if args.limit is not None and args.limit < 1:
        raise ErisLabError(f"expected an integer >= 1, got {args.limit!r}", where="--limit")
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else repo_root() / "reports" / f"transfer-{stamp}.json"
    report = transfer(args.sources, args.targets, limit=args.limit, progress=not args.quiet)
    write_atomic(out, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(format_table(report))
    print(f"wrote {out}")
    return 0
