"""lab.tokens: the token-by-token view of notebook 05, driven by a fake model over the real grammar mask.

The fake model "wants" to write a reply with a wrong value ("Tokyo" where the tool asks for an
IANA zone) and, at the first step, ranks a prose token above the JSON the grammar requires: the
view must show the grammar overriding the model there, and the model's own choice inside what
the grammar allowed afterwards.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llguidance") is None or importlib.util.find_spec("llama_cpp") is None,
                                reason="needs llguidance and llama-cpp-python")

from eris_lab.catalog import load  # noqa: E402
from eris_lab.grammar import compile as compile_grammar  # noqa: E402
from eris_lab.knobs import Knobs  # noqa: E402
from eris_lab.lab import tokens, viz  # noqa: E402
from eris_lab.offer import Offer  # noqa: E402

REPLY = '{"tool_calls": [{"name": "clock:now", "arguments": {"timezone": "Tokyo"}}], "message": null}'


class FakeModel:
    """Ranks the next token of ``target`` first, except at step 0, where ``distractor`` comes first."""

    def __init__(self, target: str, distractor: str) -> None:
        from eris_lab.grammar.oracle import oracle

        self.judge = oracle()
        self.target = self.judge.tokenize(target)
        self.distractor = self.judge.model_tokens(distractor)[0]
        self.n_vocab = self.judge.n_vocab
        self.eos = ()
        self.at = 0

    def logits(self):
        out = np.zeros(self.n_vocab, dtype=np.float32)
        if self.at < len(self.target):
            out[self.target[self.at]] = 8.0
        if self.at == 0:
            out[self.distractor] = 10.0
        return out

    def advance(self, token):
        assert token == self.target[self.at]
        self.at += 1

    def piece(self, token):
        return self.judge.piece(token).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def grammar():
    catalog = load(None)
    return compile_grammar(Offer.given(("clock:now",), reason="test"), catalog, knobs=Knobs(envelope="calls-first")).text


def test_walk_shows_the_grammar_overriding_the_model_then_the_model_choosing_inside_it(grammar):
    model = FakeModel(REPLY, "Hello")
    steps = tokens.walk(model, tokens.GrammarMask(grammar), steps=len(model.target), top_k=3)
    assert steps[0].kind == "overridden"
    assert steps[0].ranked[0].text.strip() == "Hello" and not steps[0].ranked[0].allowed
    assert steps[0].chosen.text == model.piece(model.target[0]) and steps[0].chosen.allowed
    summary = tokens.summary(steps)
    assert summary["text"] == REPLY and summary["overridden_at"] == [0]
    # the wrong value is the model's choice: every token of "Tokyo" was allowed and ranked first
    value = [s for s in steps if "Tokyo" in s.before + s.chosen.text and "Tokyo" not in s.before]
    assert value and all(s.kind == "model" and s.ranked[0].token == s.chosen.token for s in value)
    assert all(0 < s.chosen.probability <= 1 and s.n_allowed >= 1 for s in steps)


def test_walk_stops_at_the_step_budget_and_refuses_a_bad_one(grammar):
    model = FakeModel(REPLY, "Hello")
    assert len(tokens.walk(model, tokens.GrammarMask(grammar), steps=4)) == 4
    with pytest.raises(ValueError, match="steps and top_k"):
        tokens.walk(model, tokens.GrammarMask(grammar), steps=0)


def test_the_table_and_figure_render_the_steps(grammar):
    model = FakeModel(REPLY, "Hello")
    steps = tokens.walk(model, tokens.GrammarMask(grammar), steps=8, top_k=3)
    html = viz.token_table(steps).data
    assert "overridden" in html and f"color:{viz.BAD}" in html and "✗Hello" in html.replace(" Hello", "Hello")
    fig = viz.token_figure(steps)
    names = {t.name for t in fig.data}
    assert {"chosen (best allowed)", "masked by the grammar"} <= names
    chosen = next(t for t in fig.data if t.name == "chosen (best allowed)")
    assert list(chosen.x) == list(range(8))


def test_routed_routes_with_the_calibrated_knobs_as_generate(monkeypatch):
    # it routed with Router(catalog), DESIGN's reference knobs, while generate calibrates
    from eris_lab.router import Router

    seen = []
    calibrated = Router.with_calibrated_knobs.__func__

    def spy(cls, catalog, *args, **kwargs):
        router = calibrated(cls, catalog, *args, **kwargs)
        seen.append(router.knobs)
        return router

    class Stop(Exception):
        pass

    class NoModel:
        def guidance(self):
            raise Stop

    monkeypatch.setattr(Router, "with_calibrated_knobs", classmethod(spy))
    with pytest.raises(Stop):
        tokens.routed(NoModel(), "what time is it in Tokyo?")
    assert len(seen) == 1 and seen[0].relevance_weights and seen[0] != Knobs()
