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
calibration_views: bool = True  # the calibrated point, coverage and relevance gate (about a minute)
gate_suites: str = "live_multiple live_relevance irrelevance live_irrelevance"  # relevance trade-off (BFCL)
gate_limit: int = 100  # first N messages of each gate suite (the report's budget; 0: all)

# %%
from pathlib import Path

from IPython.display import display

from eris_lab.lab import calibrated, report, viz, workbench
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
# ## The calibrated policy: one point, and the promise it states
# The sliders move DESIGN.md's reference knobs. The default policy instead fits its knobs to the
# catalogue with no labelled query (`eris-lab calibrate`): pseudo-queries from the tools' own text,
# chit-chat negatives, split conformal prediction for the offer size. Where does it land among
# the reference curve's points?

# %%
calibrated_point = coverage = relevance = default_floor = limit = None
if calibration_views:
    calibrated_point = calibrated.Decided([suite], bench.memo).point()
    reference_view = workbench.view(bench, threshold, single_hit_floor, margin, "policy")
    viz.show(viz.curve_figure(reference_view.curve, threshold, title="reference knobs (points) and the calibrated policy",
                              marked={"calibrated (label-free)": calibrated_point}))

# %% [markdown]
# **Coverage promised vs observed.** Calibration promises that the offer holds every needed tool for
# `1 - alpha` of messages *like its calibration messages*. Pseudo-queries are easier than real
# messages, so the label-free promise is not kept; fitted on the labelled train half
# (`eris-lab calibrate --suite demo-train`), the promise holds on the test half, at a wider offer.

# %%
if calibration_views:
    coverage = calibrated.coverage_rows(suite, bench.memo, alphas=(0.05, 0.2) if quick else calibrated.ALPHAS)
    viz.show(viz.coverage_figure(coverage, title=f"{suite.name}: coverage promised vs observed"))
    display(viz.table(coverage, ["alpha", "promised", "label_free", "label_free_offer", "labelled", "labelled_offer"],
                      title="observed recall and mean offer per alpha"))

# %% [markdown]
# **The relevance gate.** "No tool fits" (offer nothing) against "unsure" (widen): the gate's floor
# trades recall on messages that need a tool against empty offers on messages that need none,
# measured together on BFCL's own cases (each case's candidate functions, the gate of a small
# catalogue: the demo catalogue's, fitted label-free). The grey curve leaves out the slot check: a
# tool whose required values the message does not give (a city, a number) is not offered, so the
# model asks instead of inventing them under the grammar.

# %%
if calibration_views:
    limit = 30 if quick else (gate_limit or None)
    gate = calibrated.Decided([load_suite(name, limit=limit) for name in gate_suites.split()], bench.memo)
    relevance = calibrated.relevance_rows(gate)
    relevance_without_slots = calibrated.relevance_rows(gate, slot_check="off")
    default_floor = float(sorted(c.policy.knobs_.relevance_floor for c in gate.cases)[len(gate.cases) // 2])
    viz.show(viz.relevance_figure(relevance, default_floor, without_slots=relevance_without_slots,
                                  title=f"relevance gate on {gate_suites} (first {limit or 'all'} of each)"))

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
    "calibrated": calibrated_point, "coverage": coverage,
    "relevance": {"suites": gate_suites.split(), "limit": limit, "default_floor": default_floor, "rows": relevance,
                  "rows_without_slots": relevance_without_slots}
    if calibration_views else None,
    "figures": 4 if calibration_views else 1});
