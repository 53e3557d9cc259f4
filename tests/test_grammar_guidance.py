"""The second engine: llguidance reads the same GBNF and must give llama.cpp's verdict on every
test string. Building llguidance's tokenizer from the 262k-token vocabulary takes seconds, so
the whole module is ``slow``."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("llguidance")

from conftest import load_cases  # noqa: E402
from demo_tools import demo_catalog  # noqa: E402
from eris_lab.grammar import compile, compile_schema  # noqa: E402
from test_grammar_oracle import CONSTRUCTS, STYLES, offer_of, reply  # noqa: E402

pytestmark = pytest.mark.slow
CASES = load_cases("grammar_cases.json")["cases"]
ROWS = ([(c["id"], c["schema"], c["must_accept"] + c.get("must_reject", [])) for c in CASES if c.get("must_accept")]
        + [(row[0], row[1], row[2] + row[3]) for row in CONSTRUCTS])


@pytest.fixture(scope="module")
def engines():
    from eris_lab.grammar.guidance import guidance
    from eris_lab.grammar.oracle import oracle

    return oracle(), guidance()


@pytest.mark.parametrize("grammar_style", STYLES)
@pytest.mark.parametrize(("schema", "texts"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_llguidance_gives_llama_cpp_verdicts(engines, schema, texts, grammar_style):
    judge, fast = engines
    gbnf = compile_schema(schema, style=grammar_style).text
    assert [(t, judge.accepts(gbnf, t)) for t in texts] == [(t, fast.accepts(gbnf, t)) for t in texts]


def test_llguidance_agrees_on_the_envelope(engines):
    judge, fast = engines
    gbnf = compile(offer_of("web:fetch", "weather:current", "calendar:create"), demo_catalog()).text
    texts = [
        reply("call", [{"name": "web:fetch", "arguments": {"url": "https://x.org"}}]),
        reply("call", [{"name": "web:fetch", "arguments": {"city": "x"}}]),
        reply("answer", [], message="hi"),
        reply("call", [{"name": "calendar:create", "arguments": {"title": "a", "date": "2024-02-30"}}]),
        reply("call", [{"name": "calendar:create", "arguments": {"title": "a", "date": "2024-02-29", "start": "9:30"}}]),
    ]
    assert [judge.accepts(gbnf, t) for t in texts] == [fast.accepts(gbnf, t) for t in texts]


def test_llguidance_logits_processor_constrains_generation(engines):
    from llama_cpp import Llama, LogitsProcessorList

    from eris_lab.llm import default_model_path

    judge, fast = engines
    schema = demo_catalog().tool("mail:check").parameters
    gbnf = compile_schema(schema).text
    llm = Llama(model_path=str(default_model_path()), n_ctx=512, n_threads=1, verbose=False, seed=3)
    out = llm.create_completion("Mail folder request as JSON: ", max_tokens=40, temperature=0.7, seed=3,
                                logits_processor=LogitsProcessorList([fast.logits_processor(gbnf)]))
    text = out["choices"][0]["text"]
    if out["choices"][0]["finish_reason"] == "stop":
        assert judge.accepts(gbnf, text)
        json.loads(text)
    else:  # cut by max_tokens: still a prefix llama.cpp's engine allows
        n_ok, _ = judge.prefix_accepted(gbnf, text)
        assert n_ok == len(judge.tokenize(text))


def test_constraint_defaults_to_llguidance_and_falls_back_to_llama_cpp():
    from eris_lab.grammar.guidance import constraint

    gbnf = compile_schema({"type": "boolean"}).text
    assert set(constraint(gbnf)) == {"logits_processor"}
    assert set(constraint(gbnf, engine="llama.cpp")) == {"grammar"}
