"""The slim prompt, schema recovery, token accounting, and the CLI's grammar/prompt commands.

The central claim: for offers built by every policy rule, the prompt's phrase map and the
grammar's call alternatives name the same tools in the same order (both read the one Offer).
"""

from __future__ import annotations

import importlib.util
import json
import re

import pytest

from demo_tools import demo_catalog
from eris_lab import cli, prompt
from eris_lab.errors import CatalogError
from eris_lab.knobs import Knobs
from eris_lab.offer import Offer, build
from eris_lab.policy import Hit, Rule, decide

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
needs_llama = pytest.mark.skipif(not HAVE_LLAMA, reason="needs llama-cpp-python")

LONG = "please take care of this for me right now"
#: (rule, text, hits, recent, knobs): one scenario per policy rule id.
SCENARIOS = [
    (Rule.CONVERSATIONAL, "hi there", [], [], Knobs()),
    (Rule.AGENDA_DIALOG_PAIRING, "please delete that reminder now", [], ["agenda:list"], Knobs()),
    (Rule.MAIL_DIALOG_PAIRING, "ok now delete that email please", [], ["mail:check"], Knobs()),
    (Rule.CALENDAR_DIALOG_PAIRING, "cancel that meeting with the team", [], ["calendar:get"], Knobs()),
    (Rule.DOC_DIALOG_PAIRING, "read that document to me again", [], ["doc:query"], Knobs()),
    (Rule.SINGLE_STRONG_HIT, LONG, [("weather:current", 0.71)], [], Knobs()),
    (Rule.RANKED_SUBSET, LONG, [("weather:current", 0.71), ("clock:timer", 0.60)], [], Knobs()),
    (Rule.AFFINITY_MARGIN_UNION, LONG, [("agenda:list", 0.70), ("calendar:get", 0.68), ("web:fetch", 0.55)], [],
     Knobs()),
    (Rule.LEXICAL_FORCED_ONLY, LONG, [("web:fetch", 1.0)], [], Knobs()),
    (Rule.MIXED_EMBED_AND_LEXICAL, LONG, [("web:fetch", 1.0), ("weather:current", 0.7)], [], Knobs()),
    (Rule.UNSURE_FULL_ROSTER, LONG, [("mail:read", 0.52)], [], Knobs()),
    (Rule.UNSURE_DOMAIN_CLUSTER, LONG, [("mail:read", 0.52)], [], Knobs(unsure_fallback="domain_cluster")),
    (Rule.EMPTY_AFTER_POLICY, LONG, [], [], Knobs()),
]


def offer_for(rule, text, hits, recent, knobs) -> Offer:
    catalog = demo_catalog()
    decision = decide(text, [Hit(name=n, score=s) for n, s in hits], catalog, recent=recent, knobs=knobs)
    return build(decision, catalog, knobs=knobs)


def prompt_names(text: str) -> list[str]:
    """Tool names of the phrase map, in table order."""
    return [m.group(1).replace("\\|", "|") for m in re.finditer(r"^\| (?!tool \|)(?!---)(.+?) \| ", text, re.M)]


def grammar_call_order(text: str) -> list[str]:
    """Tool names in the order of the envelope's call alternatives."""
    rules = dict(line.split(" ::= ", 1) for line in text.splitlines())
    if "envelope-call" not in rules:
        return []
    order = []
    for ref in rules["envelope-call"].split(" | "):
        m = re.search(r'"\\"name\\"" space ":" space "\\"(.+?)\\"" space', rules[ref])
        order.append(m.group(1))
    return order


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[str(s[0]) for s in SCENARIOS])
def test_prompt_and_grammar_name_the_same_tools_in_the_same_order(scenario):
    from eris_lab.grammar import compile as compile_grammar

    offer = offer_for(*scenario)
    assert offer.decision.rule == scenario[0]
    catalog = demo_catalog()
    text = prompt.slim(offer, catalog)
    grammar = compile_grammar(offer, catalog, check=HAVE_LLAMA)
    assert prompt_names(text) == list(offer.names) == list(grammar.names) == grammar_call_order(grammar.text)
    definitions = json.loads(text.split("## Tool definitions (arguments are constrained when you call)\n\n", 1)[1]
                             .split("\n\nReply with", 1)[0]) if offer.names else []
    assert [d["name"] for d in definitions] == list(offer.names)


def test_slim_prompt_strips_parameters_and_keeps_phrases():
    catalog = demo_catalog()
    offer = offer_for(Rule.SINGLE_STRONG_HIT, LONG, [("agenda:remove", 0.8)], [], Knobs())
    text = prompt.slim(offer, catalog)
    assert '| agenda:remove | Remove a reminder from the agenda. | "delete the reminder"; "remove that task" |' in text
    assert "minimum" not in text and "properties" not in text


def test_empty_offer_prompt_says_no_tool_may_be_called():
    text = prompt.slim(offer_for(*SCENARIOS[0]), demo_catalog())
    assert text.startswith("No tool may be called this turn")


def test_unknown_tool_in_offer_is_an_error():
    offer = Offer.given(("nope",), reason="test")
    with pytest.raises(CatalogError, match="unknown tool 'nope'"):
        prompt.slim(offer, demo_catalog())


def test_schema_recovery_names_the_path_and_narrows_the_grammar():
    import jsonschema

    tool = demo_catalog().tool("calendar:create")
    error = next(jsonschema.Draft202012Validator(tool.parameters).iter_errors({"title": "x", "date": 5}))
    message, grammar = prompt.schema_recovery(tool, error)
    assert message.startswith("The arguments for calendar:create failed validation at #/date: 5 is not of type 'string'")
    assert '"maxLength": 80' in message
    assert grammar.names == ("calendar:create",)
    assert grammar_call_order(grammar.text) == ["calendar:create"]


@needs_llama
def test_token_accounting_slim_offer_is_smaller_than_full_catalogue():
    catalog = demo_catalog()
    offer = offer_for(Rule.SINGLE_STRONG_HIT, LONG, [("weather:current", 0.8)], [], Knobs())
    report = prompt.token_report(offer, catalog)
    assert 0 < report["offer_tokens"] < report["catalog_tokens"]
    assert prompt.count_tokens("hello world") == 2


# -- CLI --------------------------------------------------------------------------------------


@pytest.fixture
def catalog_file(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([t.to_openai() for t in demo_catalog()]), encoding="utf-8")
    return str(path)


def test_cli_prompt_prints_the_slim_prompt(catalog_file, capsys):
    assert cli.main(["prompt", "--catalog", catalog_file, "--offer", "web:fetch,web:find"]) == 0
    assert prompt_names(capsys.readouterr().out) == ["web:fetch", "web:find"]


def test_cli_unknown_tool_is_one_line_exit_2(catalog_file, capsys):
    assert cli.main(["prompt", "--catalog", catalog_file, "--offer", "web:fetch,nope"]) == 2
    err = capsys.readouterr().err
    assert err == f"eris-lab: error: --offer: unknown tool 'nope'; not in the catalogue {catalog_file}\n"


@needs_llama
def test_cli_grammar_offer_and_check_roundtrip(catalog_file, tmp_path, capsys):
    assert cli.main(["grammar", "--catalog", catalog_file, "--offer", "weather:current"]) == 0
    gbnf = tmp_path / "g.gbnf"
    gbnf.write_text(capsys.readouterr().out, encoding="utf-8")
    good = json.dumps({"thought": "", "status": "call", "message": None,
                       "tool_calls": [{"name": "weather:current", "arguments": {"city": "Oslo"}}]})
    assert cli.main(["grammar-check", "--grammar", str(gbnf), "--text", good]) == 0
    assert cli.main(["grammar-check", "--grammar", str(gbnf), "--text", good.replace("weather", "whether")]) == 1
    text_file = tmp_path / "t.json"
    text_file.write_text(good, encoding="utf-8")
    assert cli.main(["grammar-check", "--grammar", str(gbnf), "--text-file", str(text_file)]) == 0


@needs_llama
def test_cli_grammar_empty_offer_allows_no_call(catalog_file, capsys):
    assert cli.main(["grammar", "--catalog", catalog_file, "--offer", ""]) == 0
    text = capsys.readouterr().out
    assert "envelope-call" not in text and "call-" not in text


@needs_llama
def test_cli_grammar_schema_and_json_output(tmp_path, capsys):
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"n": {"type": "number", "multipleOf": 2}}}))
    assert cli.main(["grammar", "--schema", str(schema), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["not_enforced"] == [["#/properties/n/multipleOf", "multipleOf"]] and out["names"] == []


@pytest.mark.parametrize(("argv", "message"), [
    (["grammar", "--schema", "/nonexistent/s.json"],
     "eris-lab: error: --schema /nonexistent/s.json: no such file\n"),
    (["grammar-check", "--grammar", "/nonexistent/g.gbnf", "--text", "x"],
     "eris-lab: error: --grammar /nonexistent/g.gbnf: no such file\n"),
])
def test_cli_unreadable_files_exit_2(argv, message, capsys):
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == message


def test_cli_bad_json_schema_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    assert cli.main(["grammar", "--schema", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"eris-lab: error: {bad}: not valid JSON (line 1: Expecting property name enclosed in double quotes)\n")


@needs_llama
def test_cli_grammar_check_bad_grammar_exit_2(tmp_path, capsys):
    gbnf = tmp_path / "g.gbnf"
    gbnf.write_text("root ::= missing\n", encoding="utf-8")
    assert cli.main(["grammar-check", "--grammar", str(gbnf), "--text", "x"]) == 2
    assert capsys.readouterr().err == (f"eris-lab: error: {gbnf}: llama.cpp's grammar parser rejected it: "
                                       "parse: error parsing grammar: Undefined rule identifier 'missing'\n")


@pytest.mark.parametrize("envelope", ["reference", "calls-first", "minimal"])
def test_reply_format_shows_no_placeholder_the_model_could_copy(envelope):
    """Issue 17: the 270M model copied "<short reasoning>" / "<text for the user>" into replies."""
    catalog = demo_catalog()
    offer = offer_for(Rule.SINGLE_STRONG_HIT, LONG, [("agenda:remove", 0.8)], [], Knobs())
    for text in (prompt.slim(offer, catalog, envelope=envelope), prompt.slim(Offer.given((), reason="t"), catalog,
                                                                               envelope=envelope)):
        assert not re.search(r"<[^>|]*>|\.\.\.", text), text
        # an empty offer under the minimal envelope: the grammar allows the message alone
        assert ('"tool_calls"' in text or (envelope == "minimal" and "No tool may be called" in text)) and '"message"' in text
        assert ('"thought"' in text) == (envelope == "reference")


def test_unknown_envelope_is_an_error():
    with pytest.raises(ValueError, match="unknown envelope 'loose'"):
        prompt.reply_format("loose")


# -- few-shot examples (issue 17, lever 4) ------------------------------------------------------

#: Knob sets whose grammars the worked examples must pass: the reference grammar and each lever.
FEW_SHOT_KNOBS = {
    "reference": Knobs(few_shot=3),
    "all": Knobs(few_shot=3, max_integer_digits=10, max_fraction_digits=8, max_string_chars=64, max_array_items=10,
                 compact_json=True, envelope="calls-first"),
    "minimal": Knobs(few_shot=3, envelope="minimal", max_thought_chars=60),
}


def _judged(catalog, offers, judge) -> tuple[int, int, list]:
    """(offered tools shown, examples, examples the offer's grammar rejects); the i-th offer is
    judged under the i-th knob set of :data:`FEW_SHOT_KNOBS` in turn (each set sees a third)."""
    from eris_lab.grammar import compile as compile_grammar

    n_tools = n_examples = 0
    rejected = []
    sets = list(FEW_SHOT_KNOBS.items())
    for i, (cat, offer) in enumerate((catalog, o) if catalog is not None else o for o in offers):
        label, knobs = sets[i % len(sets)]
        grammar = compile_grammar(offer, cat, knobs=knobs, lenient=True)
        shown = prompt.examples(offer, cat, knobs=knobs)
        n_tools += min(len(offer.names), knobs.few_shot)
        n_examples += len(shown)
        assert len({e.tool for e in shown}) == len(shown) <= knobs.few_shot  # one per tool
        rejected += [(label, e.tool, e.reply) for e in shown if not judge.accepts(grammar.text, e.reply)]
    return n_tools, n_examples, rejected


@needs_llama
def test_few_shot_replies_are_accepted_by_the_offer_grammar_demo_catalogue():
    from eris_lab.catalog import load
    from eris_lab.grammar.oracle import oracle

    catalog = load(None)
    names = list(catalog.names)
    offers = [Offer.given(tuple(names[i:i + 3]), reason="test") for i in range(0, len(names), 3)]
    n_tools, n_examples, rejected = _judged(catalog, offers, oracle())
    assert rejected == []
    assert n_examples == n_tools  # every demo tool gets an example (a descriptor's or a synthesised one)


@needs_llama
def test_few_shot_replies_are_accepted_by_the_offer_grammar_bfcl_tools():
    from eris_lab.bench.generation import cases
    from eris_lab.grammar.oracle import oracle

    offers = [(q.catalog, Offer.given(q.catalog.names, reason="the case's roster"))
              for suite in ("multiple", "live_multiple") for q in cases(suite, limit=9)]
    n_tools, n_examples, rejected = _judged(None, offers, oracle())
    assert rejected == []
    assert n_examples >= 0.9 * n_tools, (n_examples, n_tools)


def test_few_shot_examples_follow_the_knobs_and_the_envelope():
    from eris_lab.catalog import load

    catalog = load(None)
    offer = Offer.given(("clock:now", "weather:current", "agenda:remind_at"), reason="test")
    assert prompt.examples(offer, catalog) == () and "Worked example" not in prompt.slim(offer, catalog)
    two = prompt.examples(offer, catalog, knobs=Knobs(few_shot=2))
    # one per tool, the best-ranked last: the base model copies the last example's tool
    assert [e.tool for e in two] == ["weather:current", "clock:now"]
    assert all(e.source == "descriptor" for e in two)
    text = prompt.slim(offer, catalog, knobs=Knobs(few_shot=2, envelope="minimal"))
    for e in two:
        reply = json.loads(prompt.examples(offer, catalog, knobs=Knobs(few_shot=2, envelope="minimal"))[two.index(e)].reply)
        assert list(reply) == ["tool_calls"] and reply["tool_calls"][0]["name"] == e.tool
        assert f"User: {e.request}\n" in text
    # the example section sits after the reply format, in the plain format's own labels
    assert text.index("Reply with") < text.index("## Worked examples") < text.index("Assistant: {")


def test_few_shot_synthesised_from_the_schema_copies_no_placeholder():
    from eris_lab.catalog import Catalog, Tool
    from eris_lab.schema import is_placeholder, validate

    tool = Tool(name="find_hotel", description="Find hotels in a city.", parameters={
        "type": "object", "required": ["location", "check_in", "rooms", "sort"],
        "properties": {"location": {"type": "string", "description": "The city, e.g. '<city>' or 'Denver, CO'."},
                       "check_in": {"type": "string", "description": "Arrival date in the format YYYY-MM-DD."},
                       "rooms": {"type": "integer", "minimum": 1, "maximum": 4},
                       "sort": {"type": "string", "enum": ["price", "rating"]},
                       "pets": {"type": "boolean"}}})
    catalog = Catalog([tool], source="test")
    (example,) = prompt.examples(Offer.given(("find_hotel",), reason="t"), catalog, knobs=Knobs(few_shot=1))
    arguments = json.loads(example.reply)["tool_calls"][0]["arguments"]
    assert example.source == "schema" and validate(tool.parameters, arguments) is None
    assert list(arguments) == ["location", "check_in", "rooms", "sort"]  # required only, schema order
    assert arguments["location"] == "Denver, CO" and arguments["sort"] == "price"  # described example, first enum
    assert not is_placeholder(arguments["check_in"]) and re.fullmatch(r"\d{4}-\d\d-\d\d", arguments["check_in"])
    assert all(str(v) in example.request for v in arguments.values())  # the values come from the request


@needs_llama
def test_few_shot_token_cost_is_counted():
    from eris_lab.catalog import load

    catalog = load(None)
    offer = Offer.given(("clock:now", "weather:current"), reason="test")
    bare = prompt.token_report(offer, catalog)
    shot = prompt.token_report(offer, catalog, knobs=Knobs(few_shot=2))
    assert bare["example_tokens"] == 0 and shot["n_examples"] == 2
    assert shot["offer_tokens"] == bare["offer_tokens"] + shot["example_tokens"] and shot["example_tokens"] > 20


@needs_llama
def test_cli_prompt_with_few_shot_prints_the_examples_and_their_token_cost(capsys):
    assert cli.main(["prompt", "--offer", "clock:now,weather:current", "--levers", "all,few-shot", "--tokens"]) == 0
    out, err = capsys.readouterr()
    assert out.count("Assistant: {\"tool_calls\": [{\"name\": ") == 2
    assert re.search(r"of which 2 worked example\(s\) \d+\n$", err)


@pytest.mark.parametrize("envelope", ["reference", "calls-first", "minimal"])
def test_an_empty_offer_asks_for_no_call(envelope):
    """A new user's trial (2026-12-05): "No tool may be called" was followed by "Use status "call"
    with ... one tool name from the list above", where the grammar allows no call and there is no list."""
    text = prompt.reply_format(envelope, callable_tools=False)
    assert '"call"' not in text and "list above" not in text and "to call a tool" not in text
    assert '"message"' in text
