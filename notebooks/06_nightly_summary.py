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

# %%
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

# %%
report.record(report_dir, "06_nightly_summary", {
    "rows": rows, "n_rows": len(rows), "regressions": [f"{r['suite']}/{r['strategy']}: {', '.join(r['regressions'])}" for r in rows if r["regressions"]],
    "quick": quick, "figures": 2});
