# %% [markdown]
# # 04 · Grammar inspection: what may the model say?
#
# The offer is compiled into a GBNF grammar that constrains llama.cpp's sampler: the reply is one
# JSON envelope whose `tool_calls` can only name offered tools with their argument shapes. Here
# is that grammar for one offer, its rules explained, what it costs to build, replies llama.cpp's
# own grammar engine accepts or rejects, and the prompt tokens the slim offer saves.

# %% tags=["parameters"]
quick: bool = False  # fewer compile-time repetitions
report_dir: str = ""  # set by eris-lab report
catalog: str = ""  # descriptors folder / TOML / OpenAI or MCP JSON; empty: descriptors/
message: str = "What's the weather like in Berlin tomorrow?"  # routed to get the offer
offer_names: list = []  # explicit offer (tool names); empty: route message
sizes: list = [1, 3, 5, 10, 20]  # offer sizes for the cost table (tools)
repeat: int = 5  # compile-time repetitions (best of)

# %%
from eris_lab.lab import report, viz
from eris_lab.catalog import load
from eris_lab.grammar import envelope, explain
from eris_lab.grammar.oracle import oracle
from eris_lab.offer import Offer
from eris_lab.router import Router

cat = load(catalog or None)
offer = (Offer.given(offer_names, reason="the notebook's offer_names")
         if offer_names else Router(cat).route(message).offer)
grammar = envelope.compile(offer, cat)
judge = oracle()
n_repeat = 1 if quick else repeat

# %% [markdown]
# ## The grammar for this offer

# %%
viz.code(grammar.text, title=f"GBNF for {', '.join(offer.names) or 'no tool'} ({len(grammar.text)} characters)")

# %% [markdown]
# ## Its rules, explained

# %%
viz.table(explain.rules(grammar.text, offer.names), ["rule", "explains", "chars", "body"], title="rules (sorted by name)")

# %% [markdown]
# ## Replies judged by llama.cpp's grammar engine

# %%
verdicts = explain.judge(grammar.text, explain.examples(offer.names, cat), judge)
viz.table(verdicts, ["case", "expect", "accepted", "agrees", "text"],
          colours={(i, "agrees"): viz.BAD for i, v in enumerate(verdicts) if not v["agrees"]},
          title="expected vs llama.cpp's verdict")

# %% [markdown]
# ## Cost by offer size: compile time, grammar size, prompt tokens (full catalogue vs slim offer)

# %%
costs = explain.costs(cat, sizes, repeat=n_repeat, tokenizer=judge)
viz.table(costs, title="compile time (ms), grammar size and prompt tokens (Gemma tokenizer) per offer size")

# %%
viz.show(viz.cost_figure(costs))

# %%
report.record(report_dir, "04_grammar_inspection", {
    "offer": list(offer.names), "grammar_chars": len(grammar.text), "rules": len(explain.rules(grammar.text)),
    "verdicts_agree": all(v["agrees"] for v in verdicts), "n_examples": len(verdicts), "costs": costs, "figures": 1});
