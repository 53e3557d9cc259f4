"""The run harness: per-case fits, empty per-case catalogues, primed embeddings."""

from __future__ import annotations

from eris_lab.catalog import Catalog, Tool, routing_phrases
from eris_lab.eval.datasets import Query, Suite
from eris_lab.eval.harness import prime, run, shared_embedder
from eris_lab.strategies import DenseTopK


def _suite():
    weather = Catalog([Tool(name="get_weather", description="current weather in a city"),
                       Tool(name="send_mail", description="send an email")])
    return Suite(name="cases", queries=(
        Query(id="1", query="weather in Paris", gold=("get_weather",), catalog=weather),
        Query(id="2", query="tell me a joke", gold=(), expect="none", catalog=Catalog([])),
    ))


def test_a_case_without_candidates_offers_nothing_without_routing(fake_embedder):
    results = run(DenseTopK(k=1, embedder=fake_embedder), _suite(), progress=False)
    assert results[0].offered == ("get_weather",)
    assert results[1].offered == () and results[1].reason == "the case has no candidate functions"
    assert results[1].correct


def test_prime_embeds_every_text_once_up_front(fake_embedder):
    memo = shared_embedder(fake_embedder)
    prime(memo, _suite())
    before = fake_embedder.texts_embedded
    run(DenseTopK(embedder=memo), _suite(), progress=False)
    suite = _suite()
    phrases = {p for q in suite.queries for t in q.catalog for p in routing_phrases(t)}
    assert fake_embedder.texts_embedded == before == len(phrases) + 2  # every tool phrase, two queries
