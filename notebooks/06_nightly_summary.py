# %% [markdown]
# # 06 · Nightly summary: every suite, every strategy, against last night
#
# One table of every suite (the demo set and the BFCL categories, per-case and pooled) and every
# strategy the lab compares, with the change since the previous report's `summary.json`
# (`reports/latest`). A metric that got worse by more than the tolerance is flagged in red.

# %% tags=["parameters"]
quick: bool = False  # the first quick_limit queries of each suite only
report_dir: str = ""  # set by eris-lab report
previous_summary: str = ""  # summary.json of the previous report; set by eris-lab report
catalog: str = ""  # catalogue for demo suites and JSONL files; empty: descriptors/
suites: list = ["demo", "multiple", "live_multiple", "irrelevance", "live_irrelevance", "live_relevance", "bfcl-pooled"]  # suite names
strategies: list = ["keyword", "bm25", "dense", "hybrid-rrf", "hybrid-weighted", "policy", "policy-reference", "policy-abstain", "toolkit"]  # strategy specs
limit: int = 0  # first N queries of each suite; 0: all
quick_limit: int = 40  # the limit in quick mode
tolerance: float = 0.005  # a change smaller than this is noise, not a regression
rerun_transfer: bool = False  # re-run the transfer table (minutes); else show the recorded one

# %%
from IPython.display import display

from eris_lab.lab import report, viz
from eris_lab.bench.strategies import bench

result = bench(suites, strategies, limit=quick_limit if quick else (limit or None), catalog=catalog or None, progress=False)
previous = report.previous_results(previous_summary, "06_nightly_summary")
rows = report.compare([{k: v for k, v in r.items() if k not in ("misrouted", "per_domain", "per_tag", "per_tool")} for r in result["rows"]],
                      previous.get("rows", []), tolerance=tolerance)

# %% [markdown]
# ## The table
# Deltas are against the previous report; red: worse by more than the tolerance, green: better.

# %%
viz.nightly_table(rows)

# %%
viz.table([{"previous report": previous_summary or "(none: first run, no deltas)",
            "regressed rows": sum(bool(r["regressions"]) for r in rows), "skipped suites": result.get("skipped", []),
            "errors": result.get("errors", [])}], title="against what")

# %% [markdown]
# ## Plots

# %%
viz.show(viz.nightly_figure(rows, "recall"))

# %%
viz.show(viz.tradeoff_figure(rows))

# %% [markdown]
# ## Transfer: knobs fitted on one catalogue, judged on the others
# Rows: where the knobs came from (DESIGN.md's reference values, each catalogue's own label-free
# calibration, another catalogue's, or a labelled suite's); columns: the suites judged, recall /
# mean offer (empty-offer rate on the irrelevance suites). Parentheses: the target shares the
# source's catalogue, so not a transfer. `eris-lab bench transfer` measures it.

# %%
from eris_lab.bench import transfer as _transfer

if rerun_transfer:
    transfer_source, transfer_report = "this run", _transfer.transfer(limit=quick_limit if quick else None, progress=False)
else:
    recorded = _transfer.latest_recorded()
    transfer_source, transfer_report = (str(recorded[0].name), recorded[1]) if recorded else ("none recorded", None)
if transfer_report:
    display(viz.table(_transfer.table_rows(transfer_report),
                      title=f"transfer ({transfer_source}, {transfer_report['created']}, limit {transfer_report['limit']})"))
else:
    print("no transfer run recorded: eris-lab bench transfer --out docs/results/transfer-DATE.json")

# %%
report.record(report_dir, "06_nightly_summary", {
    "rows": rows, "n_rows": len(rows), "regressions": [f"{r['suite']}/{r['strategy']}: {', '.join(r['regressions'])}" for r in rows if r["regressions"]],
    "quick": quick, "transfer": {"source": transfer_source, "cells": transfer_report["cells"] if transfer_report else None},
    "figures": 2});
