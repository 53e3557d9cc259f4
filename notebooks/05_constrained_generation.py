# %% [markdown]
# # 05 · Constrained generation: the small model under a grammar, and free
#
# The bundled Gemma 3 270M is a *base* model: it continues text and follows no instructions, so
# free generation rarely produces a clean tool call. Under the offer's grammar it cannot produce
# anything else. This notebook measures both on a small BFCL sample, for offers of growing width
# (the gold tool plus its nearest distractors): tool-name accuracy, valid-call rate, tokens/s.
# Threads are pinned (`n_threads`); when llama.cpp was built with a GPU, every layer goes there.
# The last part follows one routed message token by token: what the model ranked highest, what
# the grammar masked, and what was chosen.

# %% tags=["parameters"]
quick: bool = False  # very few cases
report_dir: str = ""  # set by eris-lab report
model_path: str = ""  # a GGUF file; empty: the bundled Gemma 3 270M Q4_K_M
n_threads: int = 1  # CPU threads, pinned (more was slower on a shared 2-core box)
n_gpu_layers: int = -1  # -1: every layer on the GPU when llama.cpp has one
queries: str = "bfcl-pooled"  # suite with a shared catalogue (single-gold queries are drawn)
n_cases: int = 4  # cases drawn (seeded)
widths: list = [1, 3, 8]  # offer widths (tools): gold + nearest distractors
max_tokens: int = 128  # generation budget per reply (tokens)
seed: int = 0  # case sampling seed
message: str = "What time is it in Tokyo?"  # routed on the demo catalogue for the token-by-token view
token_steps: int = 28  # tokens decoded in the token-by-token view (enough to reach the first value)
token_levers: str = "all"  # generation levers of that view (knobs.LEVERS; all: knobs.ALL_LEVERS)
token_top_k: int = 5  # tokens of the model's ranking shown per step

# %%
from eris_lab.bench import llm as llm_bench
from eris_lab.lab import report, tokens, viz
from eris_lab.eval.datasets import load_suite
from eris_lab.knobs import Knobs, parse_levers, with_levers
from eris_lab.llm import LlamaRunner

suite = load_suite(queries)
runner = LlamaRunner(model_path or None, n_threads=n_threads, n_gpu_layers=n_gpu_layers, n_ctx=4096)
cases = llm_bench.width_cases(suite, [1, 3] if quick else widths, n_cases=2 if quick else n_cases, seed=seed)
token_knobs = with_levers(Knobs(), parse_levers(token_levers))
rows = llm_bench.width_run(runner, suite.catalog, cases, max_tokens=max_tokens, progress=False)
summary = llm_bench.width_summary(rows)

# %% [markdown]
# ## The model

# %%
viz.table([runner.info()], title="model and backend")

# %% [markdown]
# ## Grammar vs free, per offer width

# %%
viz.table(summary, title="tool-name accuracy, valid-call rate and generation speed")

# %%
viz.show(viz.width_figure(summary))

# %% [markdown]
# ## Every generation
# What the model wrote (first 300 characters) and which tool the parser read out of it.

# %%
viz.table(rows, ["id", "width", "mode", "gold", "called", "correct", "valid", "n_tokens", "tokens_per_s", "text"],
          colours={(i, "correct"): viz.BAD for i, r in enumerate(rows) if not r["correct"]}, title="generations")

# %% [markdown]
# ## Token by token: where the grammar overrides the model
# The message is routed, prompted and constrained as `eris-lab generate` does in its first round.
# At each step: the model's top tokens with their probabilities *before* the grammar's mask
# (llguidance), the ones the grammar masked (red crosses, ✗), and the token chosen (the best
# allowed one). `overridden`: the model's favourite was masked, the grammar decided. `model`: the
# model's favourite was allowed, so a wrong value there (a city where a time zone is asked) is
# the model's own choice, inside what the grammar allowed.

# %%
offer, steps = tokens.routed(runner, message, knobs=token_knobs, steps=token_steps, top_k=token_top_k)
viz.show(viz.token_figure(steps, title=f"{message!r} -> {', '.join(offer.names) or 'no tool'}"))

# %%
viz.token_table(steps)

# %%
report.record(report_dir, "05_constrained_generation", {
    "model": runner.info(), "n_threads": n_threads, "summary": summary, "n_generations": len(rows),
    "tokens": {"message": message, "offer": list(offer.names), **tokens.summary(steps)}, "figures": 2});
