# %% [markdown]
# # 03 · Policy walk-through: why one tool, a cluster, the whole roster, or nothing?
#
# Each message goes through the turn of DESIGN.md: guards (short input is conversation, a URL
# forces the fetch tool), cosine hits at or above the threshold, then `policy.decide`'s rules in
# their fixed order, then `offer.build`'s overlays (companions, cap). The table says which
# rule decided and why; the bars show the scores it decided on.

# %% tags=["parameters"]
quick: bool = False  # no effect here: a handful of messages either way
report_dir: str = ""  # set by eris-lab report
catalog: str = ""  # descriptors folder / TOML / OpenAI or MCP JSON; empty: descriptors/
knobs_file: str = ""  # a knobs TOML (e.g. from notebook 02); empty: DESIGN.md defaults
messages: list = [
    "What's the weather like in Berlin tomorrow?",
    "remind me to call mum at 6pm",
    "check my calendar and my reminders for friday",
    "I need you to handle something important for me today",
    "thanks!",
    "https://example.org/article summarise this page",
    {"text": "delete that email", "recent": ["mail:check"]},
]  # strings, or {"text", "recent": [tool names]} for dialog memory
conversation: str = "multi_turn_base_0"  # a BFCL multi-turn conversation id; empty: skip that view
conversation_suite: str = "multi_turn_base"  # or multi_turn_miss_func, multi_turn_long_context

# %%
from eris_lab.lab import report, viz
from eris_lab.catalog import load
from eris_lab.knobs import Knobs
from eris_lab.router import Router

router = Router(load(catalog or None), knobs=Knobs.load(knobs_file) if knobs_file else Knobs())
rows = viz.walkthrough(router, messages)

# %% [markdown]
# ## Every message through the policy
# Kind colours: green one tool / ranked subset, blue a cluster, amber the whole roster, grey nothing.

# %%
viz.walkthrough_table(rows)

# %% [markdown]
# ## The scores each decision saw
# Bars above the dashed line are strong enough to stand alone; between the dotted and dashed lines
# a hit counts but a lone one is demoted.

# %%
viz.show(viz.score_figure(router, messages))

# %% [markdown]
# ## The rules
# Every rule id a decision can report, and which of the messages above it decided.

# %%
viz.rule_coverage(rows)

# %% [markdown]
# ## A conversation, turn by turn
# One BFCL conversation routed with the calibrated policy: each turn's message, what was offered
# and by which rule, what the companions overlay added (`cd <- mv (schema)`: `mv` reads a file
# of the current directory, which `cd` sets; `get_stock_info <- place_order (dataflow)`: it returns
# the price an order needs), what dialog memory kept from the previous turn and which tools the
# catalogue just gained (`added`, in `multi_turn_miss_func`: offered first), against the functions
# BFCL's ground truth called (`missing`: gold not offered).

# %%
from eris_lab.eval.conversation import conversation_view

turns = conversation_view(conversation_suite, conversation) if conversation else []
viz.table(turns, ["turn", "message", "gold", "offered", "missing", "rule", "companions", "memory", "added"],
          title=f"{conversation}: every turn through the calibrated policy",
          colours={(i, "missing"): "#cf222e" for i, t in enumerate(turns) if t["missing"]})

# %%
report.record(report_dir, "03_policy_walkthrough", {
    "decisions": [{"message": r["message"], "rule": r["rule"], "kind": r["kind"], "n_offered": r["n_offered"]} for r in rows],
    "kinds": sorted({r["kind"] for r in rows}), "figures": 1,
    "conversation": {"id": conversation, "turns": len(turns),
                     "recalled": sum(not t["missing"] for t in turns)}});
