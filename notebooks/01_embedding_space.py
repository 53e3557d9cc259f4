# %% [markdown]
# # 01 · Embedding space: where do tools and queries sit?
#
# Every tool is one vector (its routing text embedded by the embedder); every labelled query is
# another. UMAP squeezes them onto a plane (cosine metric) so you can *see* why the router offers
# what it offers: a query surrounded by its gold tool's diamond is easy, a query stranded between
# two domains gets a wide offer, and a query in the wrong neighbourhood is misrouted (red X).
# Hover a point to read its text. The second map does the same for the pooled BFCL catalogue.

# %% tags=["parameters"]
quick: bool = False  # small samples for a fast report
report_dir: str = ""  # set by eris-lab report: where summary parts go
catalog: str = ""  # descriptors folder / TOML / OpenAI or MCP JSON; empty: descriptors/
queries: str = "demo"  # suite name or FILE.jsonl of labelled queries
strategy: str = "policy"  # strategy whose misrouted queries are marked
embedder: str = "minilm"  # minilm (bundled) or a sentence-transformers folder
pooled_queries: int = 400  # BFCL pooled: the first N queries
pooled_tools: int = 600  # BFCL pooled: tools drawn (gold tools of drawn queries always kept)
seed: int = 0  # sampling and UMAP seed

# %%
from eris_lab.lab import report, viz
from eris_lab.embed import SentenceTransformerEmbedder
from eris_lab.eval.datasets import load_suite
from eris_lab.eval.harness import prime, run, shared_embedder
from eris_lab.eval.metrics import evaluate
from eris_lab.strategies import make

memo = shared_embedder(None if embedder == "minilm" else SentenceTransformerEmbedder(embedder))
suite = load_suite(queries, catalog=catalog or None, limit=60 if quick else None)
routed = make(strategy, embedder=memo)
prime(memo, suite)
results = run(routed, suite, progress=False)
record = evaluate(results, suite=suite.name, strategy=strategy)
n_pooled_q, n_pooled_t = (80, 150) if quick else (pooled_queries, pooled_tools)

# %% [markdown]
# ## The demo catalogue and its labelled queries
# Diamonds are tools, dots are queries, one colour per domain (grey: no tool should be called).

# %%
points = viz.space_points(suite, results, embedder=memo, seed=seed)
viz.show(viz.space_figure(points, title=f"{suite.name}: {len(suite.catalog)} tools, {len(suite)} queries; "
                                         f"{strategy} recall {record['recall']:.3f}, {len(record['misrouted'])} misrouted (red X)"))

# %% [markdown]
# ## How a query's neighbourhood explains its offer
# The nearest tools by cosine, the rule that decided, and the offer, for the first misrouted queries.

# %%
viz.neighbourhood(results)

# %% [markdown]
# ## The pooled BFCL catalogue
# Every `live_multiple` query against one pool of all their functions (about a thousand tools):
# far more neighbours, far more near-ties. Sampled (seeded) to keep UMAP quick.

# %%
pooled = load_suite("bfcl-pooled", limit=n_pooled_q)
pooled_strategy = make("dense", embedder=memo)
prime(memo, pooled)
pooled_results = run(pooled_strategy, pooled, progress=False)
pooled_points = viz.space_points(pooled, pooled_results, embedder=memo, max_tools=n_pooled_t, seed=seed)
viz.show(viz.space_figure(pooled_points, title=f"bfcl-pooled: {n_pooled_t} of {len(pooled.catalog)} tools, "
                                               f"{n_pooled_q} of {len(pooled)} queries (dense top-5; red X: gold not offered)"))

# %%
report.record(report_dir, "01_embedding_space", {
    "suite": suite.name, "strategy": strategy, "n_queries": len(suite), "n_tools": len(suite.catalog),
    "recall": record["recall"], "n_misrouted": len(record["misrouted"]),
    "pooled_points": len(pooled_points), "figures": 2});
