# %% [markdown]
# # 02 · Threshold tuning: how wide should the door open?
#
# Three numbers decide most offers: the **threshold** (a cosine below it is no hit), the
# **single-hit floor** (a lone hit below it is demoted: never lock the grammar onto a coin flip)
# and the **margin** (hits this close to the top are a near-tie). Move them and watch recall,
# offer size and lock-in trade against each other. Every query was embedded once; a slider move
# only re-decides from the cached similarities (milliseconds, never re-embedding).
#
# In JupyterLab or the Voila app (`make tune`) the panel below is live (sliders, a strategy
# picker, and a button that runs the tuner and saves a knobs file). In the report (papermill) the
# same tables and curve render once, for the parameter values.

# %% tags=["parameters"]
quick: bool = False  # small samples for a fast report
report_dir: str = ""  # set by eris-lab report
interactive: bool = True  # live widgets; the report sets False (static output)
catalog: str = ""  # descriptors folder / TOML / OpenAI or MCP JSON; empty: descriptors/
queries: str = "demo"  # suite with one shared catalogue: demo, bfcl-pooled, or FILE.jsonl
threshold: float = 0.50  # cosine; a score below is not a hit
single_hit_floor: float = 0.58  # cosine; a lone hit below is demoted
margin: float = 0.05  # cosine; near-tie width
strategy: str = "policy"  # policy | policy-cluster | policy-abstain | dense
tune: bool = True  # also run the tuner (train split) and save its knobs
tuner_grid: str = "report"  # report (about 250 points), full (about 1300), quick (96)
knobs_out: str = ""  # knobs TOML written by the tuner; empty: <report_dir>/knobs.toml or ./knobs.toml

# %%
from pathlib import Path

from eris_lab.lab import report, viz, workbench
from eris_lab.eval.datasets import load_suite

suite = load_suite(queries, catalog=catalog or None, limit=80 if quick else None)
bench = workbench.Workbench(suite)
knobs_path = Path(knobs_out or (Path(report_dir) / "knobs.toml" if report_dir else "knobs.toml"))

# %% [markdown]
# ## The tuning panel

# %%
shown = workbench.panel(bench, threshold=threshold, single_hit_floor=single_hit_floor, margin=margin,
                     strategy=strategy, interactive=interactive, knobs_out=knobs_path)

# %% [markdown]
# ## Every strategy at these knobs
# The same cached scores, decided four ways.

# %%
rows = [workbench.view(bench, threshold, single_hit_floor, margin, s).metrics | {"strategy": s} for s in workbench.VARIANTS]
viz.table(rows, ["strategy", *workbench.METRIC_KEYS, "n_misrouted"], title="strategies at the chosen knobs")

# %% [markdown]
# ## The tuner
# `ThresholdTuner` walks a grid (parameter `tuner_grid`) on the train split: maximise recall subject to lock-in <= 1% and a
# mean offer <= 5 tools, then writes the knobs file `eris-lab route --knobs` reads.

# %%
tuned = workbench.tune_and_save(bench, knobs_path, grid=workbench.GRIDS["quick" if quick else tuner_grid]) if tune else None
tuned_view = workbench.view(bench, tuned.threshold, tuned.single_hit_floor, tuned.margin, strategy) if tuned else None
viz.table([{"knobs": "chosen (parameters)", **workbench.view(bench, threshold, single_hit_floor, margin, strategy).metrics},
           *([{"knobs": f"tuned: threshold {tuned.threshold}, floor {tuned.single_hit_floor}, margin {tuned.margin}",
               **tuned_view.metrics}] if tuned else [])], title=f"tuned knobs saved to {knobs_path}" if tuned else "tuner not run")

# %%
report.record(report_dir, "02_threshold_tuning", {
    "suite": suite.name, "strategy": strategy, "knobs": {"threshold": threshold, "single_hit_floor": single_hit_floor, "margin": margin},
    "metrics": dict(workbench.view(bench, threshold, single_hit_floor, margin, strategy).metrics),
    "tuned": {"threshold": tuned.threshold, "single_hit_floor": tuned.single_hit_floor, "margin": tuned.margin,
              "file": str(knobs_path), "metrics": dict(tuned_view.metrics)} if tuned else None,
    "figures": 1});
