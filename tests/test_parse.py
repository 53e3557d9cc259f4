"""parse.calls: every handed parsing case, the text formats, repairs, and a never-raises fuzz."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eris_lab import cli
from eris_lab.parse import SOURCES, Call, Parsed, calls, loads_repaired

from conftest import ROOT as ROOT_DIR
from conftest import load_cases

CASES = load_cases("parsing_cases.json")["cases"]

#: Schemas the cases' notes describe; the case file carries names only (issue #5).
#: search: "Plain-string input maps to the tool's single string parameter (here 'query')";
#: fibonacci: "n is a required integer"; run_terminal_command: "exactly one required string
#: parameter"; search_kb: the error names the required 'query'.
CASE_SCHEMAS = {
    "search": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    "fibonacci": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    "run_terminal_command": {"type": "object", "properties": {"command": {"type": "string"}},
                             "required": ["command"]},
    "search_kb": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}


def _as_list(parsed: Parsed) -> list[dict]:
    return [{"name": c.name, "arguments": dict(c.arguments)} for c in parsed.calls]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_parsing_case(case):
    parsed = calls(case["raw_model_output"], case["offered_tools"], channel=case.get("channel", "text"),
                   schemas=CASE_SCHEMAS)
    assert _as_list(parsed) == case.get("expected_calls", [])
    if "expected_error" in case:
        assert parsed.error is not None and parsed.error.startswith(case["expected_error"])
    else:
        assert parsed.error is None
    if "expected_content" in case:
        assert parsed.content == case["expected_content"]


def test_calls_unknown_tool_error_lists_valid_names_in_full():
    parsed = calls('{"name": "functions", "arguments": {"input": "x"}}', ["vector_search_tool", "summary_tool"])
    assert parsed.calls == ()
    assert parsed.error == ("unknown tool 'functions': not in offered tools; return an error message to the "
                            "model listing valid names: vector_search_tool, summary_tool")


def test_calls_xml_inner_tag_with_nothing_offered_returns_no_call():
    parsed = calls('<toolcall><shell>{"command":"pwd && ls -la"}</shell></toolcall>', [])
    assert parsed.calls == ()
    assert parsed.error == ("unknown tool 'shell': not in offered tools; return an error message to the "
                            "model listing valid names: (no tools are offered)")


@pytest.mark.parametrize("schemas", [CASE_SCHEMAS, None])
def test_calls_a_null_draft_beside_the_full_call_is_dropped_with_or_without_a_schema(schemas):
    case = next(c for c in CASES if c["id"] == "parse-25-duplicate-call-with-null")
    parsed = calls(case["raw_model_output"], ["fibonacci"], channel="native", schemas=schemas)
    assert _as_list(parsed) == [{"name": "fibonacci", "arguments": {"n": 7}}] and parsed.error is None
    assert parsed.repairs == ("dropped a call to fibonacci with 'n' null: another call of it gives the value",)


@pytest.mark.parametrize("raw, kept", [
    # the same kind, other shapes: the draft second, two nulls, a string-encoded draft
    ('[{"name": "f", "arguments": {"a": 1, "b": 2}}, {"name": "f", "arguments": {"a": 1, "b": null}}]',
     [{"a": 1, "b": 2}]),
    ('[{"name": "f", "arguments": {"a": null, "b": null}}, {"name": "f", "arguments": {"a": "x", "b": "y"}}]',
     [{"a": "x", "b": "y"}]),
    ('tool_calls=[{"function": {"name": "f", "arguments": "{\\"a\\": null}"}}, '
     '{"function": {"name": "f", "arguments": "{\\"a\\": 3}"}}]', [{"a": 3}]),
    # not drafts: the other call disagrees elsewhere, gives no value, or is another tool
    ('[{"name": "f", "arguments": {"a": 1, "b": null}}, {"name": "f", "arguments": {"a": 2, "b": 5}}]',
     [{"a": 1, "b": None}, {"a": 2, "b": 5}]),
    ('[{"name": "f", "arguments": {"a": null}}, {"name": "f", "arguments": {"a": null}}]',
     [{"a": None}, {"a": None}]),
    ('[{"name": "f", "arguments": {"a": null}}, {"name": "g", "arguments": {"a": 1}}]',
     [{"a": None}, {"a": 1}]),
])
def test_calls_null_drafts_of_every_shape(raw, kept):
    parsed = calls(raw, ["f", "g"], channel="native" if raw.startswith("tool_calls") else "text")
    assert [dict(c.arguments) for c in parsed.calls] == kept


def test_calls_a_lone_null_for_a_required_argument_is_an_error_naming_it():
    parsed = calls('{"name": "fibonacci", "arguments": {"n": null}}', ["fibonacci"], schemas=CASE_SCHEMAS)
    assert parsed.calls == ()
    assert parsed.error == ("required argument 'n' for fibonacci is null; send a value (return as a recoverable "
                            "tool error so the model can retry)")


_TYPED = {"f": {"type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": "number"},
                                                  "on": {"type": "boolean"}, "s": {"type": "string"},
                                                  "m": {"type": ["integer", "null"]}}}}


@pytest.mark.parametrize("arguments", [
    {"n": "7"}, {"n": " -3 "}, {"n": 7.0}, {"x": "2.5"}, {"x": 4}, {"on": "true"}, {"on": "False"}, {"s": "7"},
    {"m": None}, {"m": "12"},
])
def test_calls_a_value_that_spells_its_type_passes_unchanged_for_the_repair_lever(arguments):
    parsed = calls(json.dumps({"name": "f", "arguments": arguments}), ["f"], schemas=_TYPED)
    assert _as_list(parsed) == [{"name": "f", "arguments": arguments}] and parsed.error is None


@pytest.mark.parametrize("arguments, shown, expects", [
    ({"n": "seven"}, "'seven'", "integer"), ({"n": 7.5}, "7.5", "integer"), ({"n": True}, "True", "integer"),
    ({"x": "about 3"}, "'about 3'", "number"), ({"x": "nan"}, "'nan'", "number"), ({"on": "yes"}, "'yes'", "boolean"),
    ({"on": 1}, "1", "boolean"),
])
def test_calls_a_value_of_the_wrong_type_is_an_error_naming_argument_value_and_type(arguments, shown, expects):
    parsed = calls(json.dumps({"name": "f", "arguments": arguments}), ["f"], schemas=_TYPED)
    key = next(iter(arguments))
    assert parsed.calls == ()
    assert parsed.error == (f"argument {key!r} for f is {shown}, but its schema expects {expects}; "
                            "send a value of that type")


@pytest.mark.parametrize("arguments, read", [
    ('"\\"cheap flights\\""', {"command": "cheap flights"}),  # a JSON string inside the string
    ('"\\"\\\\\\"ls\\\\\\"\\""', {"command": "ls"}),  # three times
    ('"\\"{\\\\\\"command\\\\\\": \\\\\\"pwd\\\\\\"}\\""', {"command": "pwd"}),  # an object, twice
])
def test_calls_arguments_encoded_twice_are_decoded(arguments, read):
    raw = '{"name": "run_terminal_command", "arguments": ' + arguments + '}'
    parsed = calls(raw, ["run_terminal_command"], channel="native", schemas=CASE_SCHEMAS)
    assert _as_list(parsed) == [{"name": "run_terminal_command", "arguments": read}], parsed.error
    assert any("JSON string inside the arguments string" in r for r in parsed.repairs)


def test_calls_without_schema_keeps_bare_string_as_error_not_guess():
    parsed = calls('tool_calls=[{"function": {"name": "run_terminal_command", "arguments": "ls -R\\n"}}]',
                   ["run_terminal_command"], channel="native")
    assert parsed.calls == ()
    assert parsed.error == ("arguments for run_terminal_command are not a JSON object (got 'ls -R\\n'); "
                            "send the arguments as a JSON object")


def test_calls_trailing_comma_repair_is_reported():
    case = next(c for c in CASES if c["id"] == "parse-27-trailing-comma")
    parsed = calls(case["raw_model_output"], ["write_file"], channel="native")
    assert parsed.repairs == ("removed trailing comma at char 47",)


# ---------------------------------------------------------------------------------------------
# Envelope and formats beyond the cases
# ---------------------------------------------------------------------------------------------

OFFERED = ["get_weather", "web_search", "agenda:list"]


def test_calls_envelope_message_is_content():
    raw = json.dumps({"thought": "t", "status": "tool", "message": "checking",
                      "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]})
    parsed = calls(raw, OFFERED)
    assert parsed.format == "envelope"
    assert parsed.calls == (Call(name="get_weather", arguments={"city": "Oslo"}),)
    assert parsed.content == "checking"


def test_calls_envelope_without_calls_is_an_answer():
    parsed = calls('{"thought": "", "status": "final", "message": "Hello!", "tool_calls": []}', OFFERED)
    assert (parsed.calls, parsed.content, parsed.error) == ((), "Hello!", None)


def test_calls_envelope_raw_newline_and_trailing_comma_repaired():
    parsed = calls('{"status": "final", "message": "two\nlines", "tool_calls": [],}', OFFERED)
    assert parsed.content == "two\nlines"
    assert parsed.repairs == ("escaped raw newline in a string at char 35", "removed trailing comma at char 60")


def test_calls_envelope_arguments_as_json_string():
    raw = '{"message": "", "tool_calls": [{"name": "web_search", "arguments": "{\\"query\\": \\"x\\"}"}]}'
    assert calls(raw, OFFERED).calls == (Call(name="web_search", arguments={"query": "x"}),)


@pytest.mark.parametrize(
    ("raw", "fmt", "expected", "content"),
    [
        ('<|python_tag|>get_weather(city="A"); web_search(query="b")<|eom_id|>', "python_tag",
         [("get_weather", {"city": "A"}), ("web_search", {"query": "b"})], ""),
        ('API: agenda:list {"status": "open"}', "api_line", [("agenda:list", {"status": "open"})], ""),
        ('API: get_weather(city="Rome")', "api_line", [("get_weather", {"city": "Rome"})], ""),
        ('API: get_weather city="Rome" days=3', "api_line", [("get_weather", {"city": "Rome", "days": 3})], ""),
        ("API-Request: [get_weather(city='Rome')]", "api_line", [("get_weather", {"city": "Rome"})], ""),
        ('<tool>{"name":"web_search","args":{"query":"x"}}</tool>', "xml_tag", [("web_search", {"query": "x"})], ""),
        ('Sure.\n```tool_code\nget_weather(city="Paris")\n```', "fenced", [("get_weather", {"city": "Paris"})],
         "Sure."),
        ('<|tool_call>call:get_weather{city:<|"|>Paris, FR<|"|>,opts:{days:3,units:[<|"|>c<|"|>]},on:true}'
         '<tool_call|> ok', "gemma",
         [("get_weather", {"city": "Paris, FR", "opts": {"days": 3, "units": ["c"]}, "on": True})], "ok"),
        ('[{"name":"get_weather","arguments":{"city":"x"}},{"name":"web_search","arguments":"{\\"query\\": \\"y\\"}"}]',
         "bare_json", [("get_weather", {"city": "x"}), ("web_search", {"query": "y"})], ""),
        ('[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]', "mistral",
         [("get_weather", {"city": "Paris"})], ""),
        ('Thought: look\nAction: web_search\nAction Input: {"query": "x"}\nObservation: made up', "react",
         [("web_search", {"query": "x"})], "Thought: look"),
        ('Action: web_search(query="x")', "react", [("web_search", {"query": "x"})], ""),
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>\nDone.', "tool_call_tag",
         [("get_weather", {"city": "Rome"})], "Done."),
        # Phi-4-mini and Granite: a list inside <|tool_call|> ... <|/tool_call|> (closing tag optional)
        ('<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Rome"}}]<|/tool_call|>', "tool_call_tag",
         [("get_weather", {"city": "Rome"})], ""),
        ('Sure.<|tool_call|>[{"name": "get_weather", "arguments": {"city": "x"}}, {"name": "web_search", '
         '"arguments": {"query": "y"}}]', "tool_call_tag", [("get_weather", {"city": "x"}), ("web_search", {"query": "y"})],
         "Sure."),
        ("<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Francisco\n</parameter>\n<parameter=days>\n3\n"
         "</parameter>\n</function>\n</tool_call>", "tool_call_tag", [("get_weather", {"city": "San Francisco", "days": 3})],
         ""),
        ('<function=get_weather>{"city": "Oslo"}</function>', "function_tag", [("get_weather", {"city": "Oslo"})], ""),
        ('I will check. {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Bonn"}}}',
         "bare_json", [("get_weather", {"city": "Bonn"})], "I will check."),
    ],
)
def test_calls_text_formats(raw, fmt, expected, content):
    parsed = calls(raw, OFFERED)
    assert parsed.format == fmt
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == expected
    assert parsed.content == content
    assert parsed.error is None


@pytest.mark.parametrize(
    "raw",
    [
        "The answer is 42 {\"a\": 1} and [1, 2]",
        'config = {"name": "web_search", "version": 2}',
        "```python\nprint('hello')\n```",
        "Plain answer with no call at all.",
        "Action: none needed here.\nFinal Answer: 4",
        'My tools: {"name": "get_weather", "description": "Weather", "parameters": {"type": "object", '
        '"properties": {"city": {"type": "string"}}}}',
        'API: the REST docs say {"a": 1}',
        "",
    ],
)
def test_calls_data_and_prose_stay_content(raw):
    parsed = calls(raw, OFFERED)
    assert parsed == Parsed(calls=(), content=raw.strip(), error=None)


def test_calls_python_call_is_never_evaluated(tmp_path):
    marker = tmp_path / "pwned"
    raw = f'<|python_tag|>get_weather(city=__import__("os").mkdir("{marker}"))'
    parsed = calls(raw, OFFERED)
    assert not marker.exists()
    assert parsed.calls == ()
    assert parsed.error is not None


def test_calls_accepts_an_offer_object():
    from eris_lab.offer import Offer

    offer = Offer.given(("get_weather",), reason="test")
    assert calls('{"name": "get_weather", "arguments": {}}', offer).calls == (Call(name="get_weather", arguments={}),)


def test_calls_unknown_channel_is_an_error_not_an_exception():
    parsed = calls("hi", OFFERED, channel="smoke")
    assert parsed.error == "unknown channel 'smoke'; expected one of text, text-stream, native"


def test_loads_repaired_leaves_ambiguous_damage_alone():
    with pytest.raises(ValueError):
        loads_repaired("{'single': 'quotes'}")
    assert loads_repaired('{"a": [1, 2,],}') == ({"a": [1, 2]}, ("removed trailing comma at char 11",
                                                                 "removed trailing comma at char 13"))


# ---------------------------------------------------------------------------------------------
# Fuzz: never raises
# ---------------------------------------------------------------------------------------------

_VALID = [
    json.dumps({"thought": "x", "status": "tool", "message": "m",
                "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo", "days": [1, 2]}}]}),
    '<tool_call>{"name": "web_search", "arguments": {"query": "q"}}</tool_call>',
    '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    'Action: web_search\nAction Input: {"query": "x"}',
    '<|python_tag|>get_weather(city="A")',
    'get_weather[ARGS]{"city": "Paris"}',
    'tool_calls=[{"function": {"name": "get_weather", "arguments": "{\\"city\\": 1}"}}]',
    '<start_function_call>call:get_weather{city:<escape>Oslo<escape>}<end_function_call>',
    "{'name': 'web_search', 'arguments': {'query': 'it\\'s'}}",
    '<think>{"name": "web_search", "arguments": {"query": "draft"}}</think><function>get_weather</function>{"days": NaN}',
]


@st.composite
def _mangled(draw):
    text = draw(st.sampled_from(_VALID))
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["cut", "insert", "delete", "dup"]))
        i = draw(st.integers(0, len(text)))
        if op == "cut":
            text = text[:i]
        elif op == "insert":
            text = text[:i] + draw(st.text(alphabet='{}[]",:\\\n <>|/`' + "abc", max_size=4)) + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + 1:]
        else:
            text = text + text[i:]
    return text


def _check_never_raises(raw, channel):
    parsed = calls(raw, OFFERED, channel=channel)
    assert isinstance(parsed, Parsed)
    assert all(c.name in OFFERED and isinstance(c.arguments, dict) for c in parsed.calls)
    assert parsed.error is None or isinstance(parsed.error, str)
    assert "the parser failed" not in (parsed.error or "")  # the catch-all is a safety net, not a path
    assert all(c.source in SOURCES for c in parsed.calls)
    json.loads(json.dumps(parsed.to_json(), allow_nan=False))  # strict JSON, as `eris-lab parse` prints it


#: Pieces of every format, glued at random: reaches the format branches plain text never does.
_PIECES = ['<tool_call>', '</tool_call>', '<function=get_weather>', '</function>', '<parameter=city>', '</parameter>', '<|tool_call>call:get_weather', '<tool_call|>', '<|"|>', '<tool>', '</tool>',
           '<toolcall>', '<web_search>', '</web_search>', '[TOOL_CALLS]', '[ARGS]', '[CALL_ID]', '<|python_tag|>',
           '<|eom_id|>', 'API: get_weather', 'Action: web_search', '\nAction Input: ', 'Observation:', '```json\n',
           '```tool_code\n', '```', '{', '}', '[', ']', '"', ':', ',', '"name"', '"arguments"', '"get_weather"',
           '"parameters"', '"tool_calls"', '"message"', '{"thought": ', 'tool_calls=', '(', ')', 'f(x=1)', '\\', '\n',
           ' ', 'null', '1', 'x=', "'", '"function"', 'NaN', '-Infinity', '<think>',
           '</think>', '<start_function_call>', 'call:get_weather{', '<escape>', '<end_function_call>',
           '<function>get_weather</function>', '//', '/*', '*/', 'get_weather(', '; ', '[SEARCH: ',
           # the formats and markers read since the third stop (Kimi, GLM, Functionary, LFM2, Cohere, ...)
           '<|tool_call_start|>', '<|tool_call_end|>', '<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>',
           '>>>', '>>>all\n', '<<function>>', 'Call: ', '<bot_end>', '<|observation|>', '✿FUNCTION✿: ', '✿ARGS✿: ',
           '✿RESULT✿: ', '<|tool_calls_section_begin|>', '<|tool_call_begin|>functions.get_weather:0',
           '<|tool_call_argument_begin|>', '<|START_RESPONSE|>', '<|END_RESPONSE|>', '<|START_ACTION|>',
           '<|END_ACTION|>', '<|action_start|><|plugin|>', '<|action_end|>', '"input"', '"function_call"',
           '<function_call name="get_weather">', '</function_call>', '<tool_name>', '</tool_name>', '<parameters>',
           '</parameters>', '<city>', '</city>', '<get_weather>', '</get_weather>', '```tool_output\n', '```js\n',
           'get_weather\n', '"Final Answer"', '"action_input"', '<seed:tool_call>', '</seed:tool_call>']
_GLUED = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)
_TEXT = st.one_of(st.text(max_size=300), _mangled(), _GLUED)
_CHANNEL = st.sampled_from(["text", "native"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=_TEXT, channel=_CHANNEL)
def test_calls_never_raises(raw, channel):
    _check_never_raises(raw, channel)


@pytest.mark.slow
@settings(max_examples=50_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=_TEXT, channel=_CHANNEL)
def test_calls_never_raises_many(raw, channel):
    _check_never_raises(raw, channel)


_OPENERS = ["<think>", "<thinking>", "<reasoning>", "[THINK]", "<|channel|>analysis<|message|>", "<|START_THINKING|>",
            "◁think▷"]
_CLOSERS = {"<think>": "</think>", "<thinking>": "</thinking>", "<reasoning>": "</reasoning>",
            "[THINK]": "[/THINK]", "<|channel|>analysis<|message|>": "<|end|>", "<|START_THINKING|>": "<|END_THINKING|>",
            "◁think▷": "◁/think▷"}
#: Text after a reasoning block that holds no call syntax at all (no braces, tags, parentheses, colons).
_PLAIN = st.text(alphabet=st.characters(blacklist_characters="{}[]()<>:`|'\"=", blacklist_categories=("Cs",)),
                 max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(opener=st.sampled_from(_OPENERS), inner=_TEXT, after=_PLAIN, closed=st.booleans(), before=_PLAIN)
def test_calls_never_a_call_from_a_reasoning_block(opener, inner, after, closed, before):
    inner = inner.replace(_CLOSERS[opener], "")
    for closer in _CLOSERS.values():  # a closer inside would end the block early
        inner = inner.replace(closer, "")
    raw = before + opener + inner + (_CLOSERS[opener] + after if closed else "")
    parsed = calls(raw, OFFERED)
    _check_never_raises(raw, "text")
    assert parsed.calls == (), raw


def test_calls_never_raises_on_hostile_inputs():
    for raw in ["{" * 100_000, "[" * 5000 + "]" * 5000, "<|python_tag|>" + "f(" * 5000, b"\xff\xfe{",
                None, 12, "<tool_call>" * 3000, "Action: x(" + "(" * 3000, "```" * 1000]:
        _check_never_raises(raw, "text")


@pytest.mark.parametrize("raw", [
    "<<function>>get_weather(" * 4000, "Call: get_weather(\n" * 5000, "get_weather\n{" * 7000,
    ">>>get_weather\n{" * 6000, "<tool_call>get_weather<arg_key>" + " " * 100_000, "<get_weather><city>" * 5000,
    "<toolcall>" + "<get_weather><c>" * 6000, "called get_weather(" * 5000, "[" + "get_weather(city='a, b'), " * 3000,
    '<function_call name="get_weather">' * 3000, "<tool_call>" + " " * 100_000,
])
def test_calls_never_raises_on_hostile_inputs_in_the_newer_formats(raw):
    _check_never_raises(raw, "text")  # each reader bounds its tries: seconds at most, never quadratic in the input


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------


def test_cli_parse_prints_calls_content_error(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO('Sure. {"name": "get_weather", "arguments": {"city": "Oslo"}}'))
    assert cli.main(["parse", "--offered", "get_weather,web_search"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calls"] == [{"name": "get_weather", "arguments": {"city": "Oslo"}, "source": "prose"}]
    assert out["content"] == "Sure."
    assert out["error"] is None


def test_cli_parse_never_maps_another_catalogue_tools_exact_name(capsys, monkeypatch, tmp_path):
    """``[clock_now(zone="UTC")]`` with ``clock:now`` offered and ``clock_now`` in the catalogue: the
    model named a real tool that was not offered; the command line passed only the offered tools'
    schemas, so the name was mapped onto ``clock:now`` with the other tool's argument (a helper's
    variant, 2026-12-06)."""
    import io

    tools = [{"name": "clock:now", "description": "time now", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}},
             {"name": "clock_now", "description": "another", "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}}}]
    (tmp_path / "cat.json").write_text(json.dumps(tools), encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.StringIO('[clock_now(zone="UTC")]'))
    assert cli.main(["parse", "--offered", "clock:now", "--catalog", str(tmp_path / "cat.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calls"] == [] and "clock_now" in out["error"] and "not offered" in out["error"]


def test_cli_parse_native_channel(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO('tool_calls=[{"function": {"name": "a", "arguments": "{}"}}]'))
    assert cli.main(["parse", "--offered", "a", "--channel", "native"]) == 0
    assert json.loads(capsys.readouterr().out)["calls"] == [{"name": "a", "arguments": {}, "source": "native"}]


def test_cli_parse_schemas_from_catalog(capsys, monkeypatch, tmp_path):
    import io

    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps([{"name": "search_kb", "description": "search",
                                    "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                                                   "required": ["query"]}}]))
    monkeypatch.setattr("sys.stdin", io.StringIO('tool_calls=[{"function": {"name": "search_kb", "arguments": "{}"}}]'))
    assert cli.main(["parse", "--offered", "search_kb", "--channel", "native", "--catalog", str(catalog)]) == 0
    assert json.loads(capsys.readouterr().out)["error"] == (
        "missing required argument 'query' for search_kb; return as a recoverable tool error so the model can retry")


def test_cli_parse_bad_channel_exits_2(capsys):
    assert cli.main(["parse", "--offered", "a", "--channel", "smoke"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "eris-lab: error: argument --channel: invalid choice: 'smoke' (choose from 'text', 'native')"


def test_cli_parse_unknown_offered_in_catalog_exits_2(capsys, monkeypatch, tmp_path):
    import io

    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps([{"name": "a", "description": "a"}]))
    monkeypatch.setattr("sys.stdin", io.StringIO("hi"))
    assert cli.main(["parse", "--offered", "a,zz", "--catalog", str(catalog)]) == 2
    assert capsys.readouterr().err == f"eris-lab: error: --offered: unknown tool 'zz'; not in the catalogue {catalog}\n"


def test_calls_null_is_kept_where_the_schema_allows_it():
    schemas = {"agenda:complete": {"type": "object", "required": ["item", "note"],
                                   "properties": {"item": {"type": "string"}, "note": {"type": ["string", "null"]}}}}
    parsed = calls('{"name": "agenda:complete", "arguments": {"item": "x", "note": null}}', ["agenda:complete"],
                   schemas=schemas)
    assert parsed.calls == (Call(name="agenda:complete", arguments={"item": "x", "note": None}),)


def test_calls_cut_off_envelope_keeps_complete_calls_and_says_so():
    raw = ('{"thought": "x", "status": "call", "message": "On it.", "tool_calls": [{"name": "get_weather", '
           '"arguments": {"city": "Oslo"}}, {"name": "web_search", "argu')
    parsed = calls(raw, OFFERED)
    assert parsed.format == "envelope"
    assert parsed.calls == (Call(name="get_weather", arguments={"city": "Oslo"}),)
    assert parsed.content == "On it."
    assert parsed.repairs == ("the envelope is not valid JSON (cut off?); read its message and 1 complete call "
                              "from it",)


def test_calls_cut_off_envelope_message_is_kept():
    parsed = calls('{"thought": "", "status": "answer", "message": "Hello wor', OFFERED)
    assert (parsed.calls, parsed.content) == ((), "Hello wor")
    assert parsed.repairs[-1] == "the message was cut off; kept what there is"


def test_calls_joins_stream_chunks():
    chunks = ['<tool_call>{"name": "get_', 'weather", "argu', 'ments": {"city": "Oslo"}}', "</tool_call>"]
    assert calls(chunks, OFFERED, channel="text-stream").calls == (Call(name="get_weather", arguments={"city": "Oslo"}),)


def test_cli_parse_nothing_offered_reports_the_name(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO('{"name": "shell", "arguments": {"command": "ls"}}'))
    assert cli.main(["parse", "--offered", ""]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calls"] == []
    assert out["error"].startswith("unknown tool 'shell': not in offered tools;")


def test_cli_parse_stdin_not_utf8_exits_2(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\xff\xfe"), encoding="utf-8"))
    assert cli.main(["parse", "--offered", "a"]) == 2
    assert capsys.readouterr().err == "eris-lab: error: stdin: not UTF-8 text (invalid start byte)\n"


# ---------------------------------------------------------------------------------------------
# Issue #16: where a call came from, reasoning blocks, more formats, failed attempts
# ---------------------------------------------------------------------------------------------

FIELD = ["clock:alarm", "clock:now", "get_weather", "web_search", "send_message"]
FIELD_SCHEMAS = {
    "send_message": {"type": "object", "properties": {"to": {"type": "string"}, "text": {"type": "string"}}},
    "web_search": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    "get_weather": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
}
CANCEL = '{"name": "clock:alarm", "arguments": {"action": "cancel"}}'


def _pairs(parsed):
    return [(c.name, dict(c.arguments)) for c in parsed.calls]


@pytest.mark.parametrize(("raw", "source"), [
    (json.dumps({"message": "", "tool_calls": [{"name": "get_weather", "arguments": {}}]}), "envelope"),
    ('<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>', "tagged"),
    ('<|tool_call>call:get_weather{}<tool_call|>', "tagged"),
    ('Action: get_weather\nAction Input: {}', "tagged"),
    ('```json\n{"name": "get_weather", "arguments": {}}\n```', "fenced"),
    ('{"name": "get_weather", "arguments": {}}', "tagged"),  # the whole reply is the call
    ('{"name": "get_weather", "arguments": {}}; {"name": "clock:now"}', "tagged"),
    ('get_weather(city="Oslo")', "tagged"),
    ('Sure, here you go: {"name": "get_weather", "arguments": {}} and more words.', "prose"),
    ('Checking now.\nget_weather(city="Oslo")', "prose"),
])
def test_calls_every_call_says_where_it_was_read(raw, source):
    parsed = calls(raw, FIELD)
    assert parsed.calls and {c.source for c in parsed.calls} == {source}
    assert source in SOURCES
    assert all(call["source"] == source for call in parsed.to_json()["calls"])


def test_calls_native_channel_source():
    parsed = calls('tool_calls=[{"function": {"name": "get_weather", "arguments": "{}"}}]', FIELD, channel="native")
    assert [c.source for c in parsed.calls] == ["native"]


@pytest.mark.parametrize("raw", [
    f"I did not call anything; a call would look like {CANCEL}",
    f"For example, {CANCEL} would cancel it. Shall I?",
    f"You could write\n{CANCEL}\nyourself.",
])
def test_calls_a_call_mentioned_in_prose_is_flagged_prose(raw):
    parsed = calls(raw, FIELD)
    assert [c.source for c in parsed.calls] == ["prose"]


@pytest.mark.parametrize("wrap", [
    "<think>{}</think>", "<think>\nI could send {} ... No.\n</think>\n", "<thinking>{}</thinking>Fine.",
    "<reasoning>{}</reasoning>", "[THINK]{}[/THINK]", "<|channel|>analysis<|message|>{}<|end|>",
    "draft: {}</think>No call needed.",  # the template opened the block in the prompt
    "<think>{}",  # unclosed at the end: never finished thinking
    "Answer first. <think>then {}",
])
@pytest.mark.parametrize("draft", [CANCEL, '<tool_call>' + CANCEL + '</tool_call>',
                                   '<start_function_call>call:clock:alarm{action:<escape>cancel<escape>}'
                                   '<end_function_call>', 'clock_alarm(action="cancel")'])
def test_calls_a_call_inside_a_reasoning_block_is_never_a_call(wrap, draft):
    parsed = calls(wrap.format(draft) if "{}" in wrap else wrap, FIELD)
    assert parsed.calls == ()
    assert "cancel" not in parsed.content


def test_calls_only_the_call_after_the_reasoning_block_counts():
    raw = (f"<think>first idea: <tool_call>{CANCEL}</tool_call>, no, set one instead</think>\n"
           '<tool_call>{"name": "clock:alarm", "arguments": {"action": "set"}}</tool_call>')
    parsed = calls(raw, FIELD)
    assert _pairs(parsed) == [("clock:alarm", {"action": "set"})]
    assert parsed.reasoning.startswith("first idea") and parsed.error is None


def test_calls_unclosed_reasoning_with_a_draft_call_says_so():
    parsed = calls(f"<think>I will send {CANCEL}", FIELD)
    assert parsed.calls == () and parsed.content == ""
    assert parsed.error.startswith("the output ended inside a reasoning block (<think> was never closed)")


def test_calls_envelope_strings_may_mention_think():
    raw = json.dumps({"thought": "<think> is a tag", "message": "ok", "tool_calls": [{"name": "clock:now",
                                                                                   "arguments": {}}]})
    assert _pairs(calls(raw, FIELD)) == [("clock:now", {})]


_FG = "<start_function_call>call:{}<end_function_call>"


@pytest.mark.parametrize(("raw", "expected"), [
    (_FG.format("get_weather{city:<escape>Oslo<escape>}"), [("get_weather", {"city": "Oslo"})]),
    (_FG.format("get_weather{city:<escape>Oslo<escape>,days:3}") * 4 + "<start_function_call>call:get_we",
     [("get_weather", {"city": "Oslo", "days": 3})]),
    ("call:get_weather{city:<escape>Oslo<escape>}<end_function_call>" * 3 + "call:get_wea",
     [("get_weather", {"city": "Oslo"})]),
    (_FG.format("get_weather{city:<escape>Oslo<escape>}") + _FG.format("web_search{query:<escape>a, b<escape>}"),
     [("get_weather", {"city": "Oslo"}), ("web_search", {"query": "a, b"})]),
    ("call:get_weather{city:<escape>Bergen<escape>}", [("get_weather", {"city": "Bergen"})]),
    ("call:send_message{to:'Ann',text:'Hi, see you at 5, ok?'}",
     [("send_message", {"to": "Ann", "text": "Hi, see you at 5, ok?"})]),
    ("call:send_message{to:'Ann',text:'it\\'s, fine'}", [("send_message", {"to": "Ann", "text": "it's, fine"})]),
    ("call:default_api.get_weather{city:<escape>Rome<escape>}", [("get_weather", {"city": "Rome"})]),
    (_FG.format("functions.clock_alarm{action:<escape>set<escape>}"), [("clock:alarm", {"action": "set"})]),
])
def test_calls_functiongemma(raw, expected):
    parsed = calls(raw, FIELD)
    assert _pairs(parsed) == expected
    assert parsed.error is None and parsed.format == "gemma"
    assert "call:" not in parsed.content and "<" not in parsed.content  # no markup reaches the user


def test_calls_functiongemma_cut_off_alone_is_an_error():
    parsed = calls("<start_function_call>call:get_weather{city:<escape>Os", FIELD)
    assert parsed.calls == ()
    assert parsed.error.startswith("the call to get_weather was cut off before its end")


def test_calls_namespaced_name_with_two_possible_tools_is_not_guessed():
    parsed = calls("call:a.get_weather{}", ["x:get_weather", "y:get_weather", "get_weather_v2"])
    assert parsed.calls == () and parsed.error.startswith("unknown tool 'a.get_weather'")


@pytest.mark.parametrize(("raw", "offered", "expected"), [
    ('<|python_tag|>clock.alarm(action="set")', FIELD, "clock:alarm"),
    ("```tool_code\nclock_now()\n```", FIELD, "clock:now"),
    ('{"name": "clock_alarm", "arguments": {"action": "set"}}', FIELD, "clock:alarm"),
    ('{"name": "clock.alarm", "arguments": {"action": "set"}}', FIELD, "clock:alarm"),
])
def test_calls_separators_map_back_to_the_one_offered_name(raw, offered, expected):
    parsed = calls(raw, offered)
    assert [c.name for c in parsed.calls] == [expected]
    assert any("the one offered tool it names" in r for r in parsed.repairs)


@pytest.mark.parametrize("raw", [
    'send_message({"to": "Ann", "text": "x"})',  # a new user's trial: clock:now({"timezone": ...}) was refused
    '[send_message({"to": "Ann", "text": "x"})]',
    "<|python_tag|>send_message({'to': 'Ann', 'text': 'x'})",
    '```tool_code\nsend_message({"to": "Ann", "text": "x"})\n```',
])
def test_calls_one_positional_object_is_the_arguments(raw):
    parsed = calls(raw, FIELD)
    assert _pairs(parsed) == [("send_message", {"to": "Ann", "text": "x"})] and parsed.error is None
    assert any("one positional object" in r for r in parsed.repairs)


@pytest.mark.parametrize("raw", ['send_message({"to": "Ann"}, {"text": "x"})', 'send_message({"to": "Ann"}, text="x")'])
def test_calls_positional_objects_beside_other_arguments_stay_refused(raw):
    parsed = calls(raw, FIELD)
    assert parsed.calls == () and "positional arguments" in parsed.error


@pytest.mark.parametrize("raw", [
    'Sure! I will call send_message with {"to": "Ann", "text": "x"}',  # a new user's trial (error was null)
    "I am using `send_message` with the arguments {'to': 'Ann'}.",
    'Calling the send_message tool using parameters: {"to": "Ann"}',
])
def test_calls_a_call_announced_in_prose_sets_the_error(raw):
    parsed = calls(raw, FIELD)
    assert parsed.calls == () and "announced in prose, not made" in parsed.error


def test_calls_a_tool_named_in_an_answer_is_no_attempt():
    parsed = calls('The send_message tool needs a recipient, for example {"to": "Ann"}.', FIELD)
    assert parsed.calls == () and parsed.error is None


def test_calls_separator_mapping_with_two_matches_is_refused():
    parsed = calls('{"name": "a_b_c", "arguments": {}}', ["a:b_c", "a_b:c"])
    assert parsed.calls == () and parsed.error.startswith("unknown tool 'a_b_c'")


@pytest.mark.parametrize(("raw", "content"), [
    ('Let me see what is on that port.\n<function>web_search</function>\n{"query": "port 8080"}',
     "Let me see what is on that port."),
    ('<tool_call>\n<function>web_search</function>\n{"query": "port 8080"}\n</tool_call>', ""),
    ('<function> web_search </function>{"query": "port 8080"} Done.', "Done."),
    ("<tool_call><name>web_search</name><arguments>{\"query\": \"port 8080\"}</arguments></tool_call>", ""),
])
def test_calls_function_name_tag_with_bare_json_arguments(raw, content):
    parsed = calls(raw, FIELD)
    assert _pairs(parsed) == [("web_search", {"query": "port 8080"})]
    assert parsed.content == content and parsed.error is None


@pytest.mark.parametrize("sep", [" ", "\n", "\n\n", "; ", ";", " ;\n", ", "])
def test_calls_bare_call_objects_one_after_another_are_all_kept(sep):
    objs = ['{"name": "get_weather", "parameters": {"city": "Oslo"}}', '{"name": "clock:now"}',
            '{"name": "get_weather", "arguments": {"city": "Bergen"}}']
    parsed = calls(sep.join(objs), FIELD)
    assert _pairs(parsed) == [("get_weather", {"city": "Oslo"}), ("clock:now", {}), ("get_weather", {"city": "Bergen"})]
    assert parsed.content == "" and parsed.error is None


def test_calls_a_name_only_object_naming_no_offered_tool_is_data():
    parsed = calls('{"name": "my-package"}', FIELD)
    assert parsed == Parsed(content='{"name": "my-package"}')


@pytest.mark.parametrize(("raw", "expected"), [
    ("{'name': 'send_message', 'arguments': {'to': 'Ann', 'text': 'it\\'s late, sorry'}}",
     {"to": "Ann", "text": "it's late, sorry"}),
    ("{'name': 'send_message', 'arguments': {'to': 'Ann', 'text': 'line one\nline two, \"quoted\"'}}",
     {"to": "Ann", "text": 'line one\nline two, "quoted"'}),
    ("[{'name': 'send_message', 'arguments': {'to': None, 'text': 'a}b'}}]", {"to": None, "text": "a}b"}),
    ("{'name': 'send_message', 'arguments': {'to': 'Ann', 'text': 'x', 'urgent': true}}",
     {"to": "Ann", "text": "x", "urgent": True}),
    ("send_message(to='Ann', text='Hi, it\\'s me,\\nsee you')", {"to": "Ann", "text": "Hi, it's me,\nsee you"}),
    ('<tool_call>{"name": "send_message", "arguments": {"to": "Ann", /* who */ "text": "x"} // done\n}</tool_call>',
     {"to": "Ann", "text": "x"}),
])
def test_calls_python_literals_and_commented_json_are_read(raw, expected):
    parsed = calls(raw, FIELD)
    assert _pairs(parsed) == [("send_message", expected)]
    assert parsed.error is None
    assert parsed.repairs or parsed.format == "python_call"  # reading a non-JSON object is reported


def test_python_literal_never_evaluates(tmp_path):
    from eris_lab.parse import python_literal

    marker = tmp_path / "pwned"
    with pytest.raises(ValueError):
        python_literal(f"{{'a': __import__('os').mkdir('{marker}')}}")
    assert not marker.exists()
    parsed = calls(f"{{'name': 'send_message', 'arguments': {{'to': __import__('os').mkdir('{marker}')}}}}", FIELD)
    assert parsed.calls == () and not marker.exists()


@pytest.mark.parametrize(("args", "expected", "repair"), [
    ('{"query": "a"}{"query": "a"}', [{"query": "a"}], "held the same JSON object 2 times"),
    ('{"query": "a"} {"query": "a"} {"query": "a"}', [{"query": "a"}], "held the same JSON object 3 times"),
    ('{"query": "a"}{"query": "b"}', [{"query": "a"}, {"query": "b"}], "held 2 different JSON objects"),
])
def test_calls_argument_string_with_run_together_objects(args, expected, repair):
    raw = json.dumps({"name": "web_search", "arguments": args})
    parsed = calls(raw, FIELD, schemas=FIELD_SCHEMAS)
    assert _pairs(parsed) == [("web_search", e) for e in expected]
    assert any(repair in r for r in parsed.repairs)


@pytest.mark.parametrize("value", [{"sql": "x", "limit": 3}, [1, 2, "three"], {}])
def test_calls_raw_json_in_a_string_argument_is_serialised(value):
    raw = json.dumps({"name": "send_message", "arguments": {"to": "Ann", "text": value}})
    parsed = calls(raw, FIELD, schemas=FIELD_SCHEMAS)
    assert _pairs(parsed) == [("send_message", {"to": "Ann", "text": json.dumps(value)})]
    assert json.loads(parsed.calls[0].arguments["text"]) == value


def test_calls_raw_json_where_the_schema_wants_a_number_is_an_error():
    parsed = calls('{"name": "get_weather", "arguments": {"days": {"n": 3}}}', FIELD, schemas=FIELD_SCHEMAS)
    assert parsed.calls == ()
    assert parsed.error == ("argument 'days' for get_weather is a JSON object, but its schema expects integer; "
                            "send a value of that type")


@pytest.mark.parametrize("raw", ["[SEARCH: cheap flights to Oslo]", "[search:cheap flights to Oslo]"])
def test_calls_text_tag_only_through_an_explicit_mapping(raw):
    parsed = calls(raw, FIELD, schemas=FIELD_SCHEMAS, text_tags={"SEARCH": "web_search"})
    assert _pairs(parsed) == [("web_search", {"query": "cheap flights to Oslo"})]
    assert parsed.calls[0].source == "tagged"
    unmapped = calls(raw, FIELD, schemas=FIELD_SCHEMAS)
    assert unmapped.calls == () and "which the catalogue does not map to a tool" in unmapped.error
    assert calls(raw, FIELD, text_tags={"SEARCH": "not_offered"}).calls == ()


@pytest.mark.parametrize("raw", [
    "[Note: prices change daily] Flights start at 90 EUR.",
    "Please call:Bob tomorrow.",
    "I can call get_weather for you if you like.",
    "The function returns a list (see the docs).",
    'A JSON example: {"name": "Ann", "age": 3}.',
    "Use <b>bold</b> for emphasis.",
])
def test_calls_plain_answers_are_content_without_an_error(raw):
    assert calls(raw, FIELD) == Parsed(content=raw)


@pytest.mark.parametrize(("raw", "why"), [
    ('{"name": "clock:alarm", "arguments": {"action": "set", "time": "07:0', "cut off before its end"),
    ('Setting it: {"name": "clock:alarm", "arguments": {"action": "se', "cut off before its end"),
    ('<tool_call>{"name": "clock:alarm", "argu', "cut off before its end"),  # the cut, not the marker, is the fault
    ('<invoke name="clock:alarm"><action>set</action></invoke>', "a tool-call marker"),
    ('<|tool▁calls▁begin|><|tool▁call▁begin|>', "a tool-call marker"),
    ("{'name': 'clock:alarm', 'arguments': {'action': 'set' + 'x'}}", "neither JSON nor a Python literal"),
    ('{"name": "clock:alarm", "arguments": {action: set}}', "neither JSON nor a Python literal"),
    ("clock_alarm(x=" + "9" * 5000 + ")", "a call to 'clock_alarm' whose arguments could not be read"),
    ("clock:alarm(action=set now)", "a call to 'clock:alarm' whose arguments could not be read"),
    # readable, inside a sentence (a helper's variant: the error said the arguments could not be read)
    ('Sure! I will run clock:alarm(action="set", time="07:00") for you now.',
     "a call to 'clock:alarm' written inside a sentence, not on a line of its own"),
    # whole, but nested past the readers' depth: no cut (round eighteen's variants, 2026-12-07: "cut off")
    ('{"name": "clock:alarm", "arguments": {"action": ' + '{"a": ' * 300 + '1' + '}' * 300 + '}}',
     "a call nested deeper than 64 brackets was not read"),
    # a cut call whose arguments hold a whole object is cut, not nested too deeply (the first version
    # measured the object inside the call)
    ('clock:alarm(options={"snooze": 5}, time="07:', "cut off before its end"),
])
def test_calls_a_failed_call_attempt_is_an_error_not_an_answer(raw, why):
    parsed = calls(raw, FIELD)
    assert parsed.calls == ()
    assert parsed.error.startswith("no tool call could be read, but the output looks like one: ")
    assert why in parsed.error


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_calls_non_finite_numbers_never_reach_json(raw):
    parsed = calls(f'{{"name": "get_weather", "arguments": {{"days": {raw}}}}}', FIELD)
    assert parsed.calls == () and "NaN or Infinity" in parsed.error
    json.dumps(parsed.to_json(), allow_nan=False)


@pytest.mark.parametrize(("message", "content"), [(None, ""), ("", ""), (42, "42"), ({"a": 1}, '{"a": 1}')])
def test_calls_envelope_null_message_is_empty_content(message, content):
    parsed = calls(json.dumps({"thought": "", "status": "final", "message": message, "tool_calls": []}), FIELD)
    assert parsed.content == content


def test_cli_parse_null_message_and_strict_json(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO('{"status": "final", "message": null, "tool_calls": []}'))
    assert cli.main(["parse", "--offered", "a"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON {c}"))["content"] == ""


@pytest.mark.parametrize("data", [b"\xff\xfe", b'{"name": "a", "arguments": {"x": "\xc3"}}', b"ok \xed\xa0\x80"])
@pytest.mark.parametrize("locale", ["C.UTF-8", "C", "POSIX"])
def test_cli_parse_invalid_utf8_stdin_is_an_error_whatever_the_locale(data, locale):
    import os
    import subprocess
    import sys

    env = {**os.environ, "LC_ALL": locale, "LANG": locale, "PYTHONPATH": str(ROOT_DIR)}
    env.pop("PYTHONIOENCODING", None)
    env.pop("PYTHONUTF8", None)
    proc = subprocess.run([sys.executable, "-m", "eris_lab", "parse", "--offered", "a"], input=data,
                          capture_output=True, env=env, timeout=60)
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.decode().startswith("eris-lab: error: stdin: not UTF-8 text (")
    assert proc.stdout == b""


def test_cli_parse_utf8_stdin_under_a_c_locale(monkeypatch):
    import os
    import subprocess
    import sys

    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONPATH": str(ROOT_DIR)}
    raw = '{"name": "a", "arguments": {"city": "Zürich"}}'.encode()
    proc = subprocess.run([sys.executable, "-m", "eris_lab", "parse", "--offered", "a"], input=raw,
                          capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.decode("utf-8"))["calls"][0]["arguments"] == {"city": "Zürich"}


@pytest.mark.parametrize("raw", [
    '```json\n{"function": "get_weather", "parameters": {"city": "Köln"}}\n```',  # the wrapper's key, flat
    '{"tool": "get_weather", "args": {"city": "Köln"}}',
    '{"tool_name": "get_weather", "arguments": {"city": "Köln"}}',
])
def test_calls_read_other_spellings_of_the_name_key(raw):
    parsed = calls(raw, offered=["get_weather", "web_search"])
    assert [(c.name, c.arguments) for c in parsed.calls] == [("get_weather", {"city": "Köln"})]


def test_a_function_key_without_arguments_is_data_not_a_call():
    parsed = calls('{"function": "summarise the text", "note": 1}', offered=["get_weather"])
    assert list(parsed.calls) == []


#: Issue 17: each envelope variant, whole (compact and spaced) and cut off at the token limit.
_CALL = {"name": "get_weather", "arguments": {"city": "Oslo"}}
_SECOND = ', {"name": "web_search", "argu'


@pytest.mark.parametrize(("variant", "call", "answer"), [
    ("reference", {"thought": "t", "status": "call", "message": None, "tool_calls": [_CALL]},
     {"thought": "t", "status": "answer", "message": "Hi!", "tool_calls": []}),
    ("calls-first", {"tool_calls": [_CALL], "message": None}, {"tool_calls": [], "message": "Hi!"}),
    ("minimal", {"tool_calls": [_CALL]}, {"message": "Hi!"}),
])
def test_calls_reads_every_envelope_variant(variant, call, answer):
    for separators in ((",", ":"), (", ", ": ")):
        got = calls(json.dumps(call, separators=separators), OFFERED)
        assert (got.format, got.calls, got.content, got.error) == \
            ("envelope", (Call(name="get_weather", arguments={"city": "Oslo"}),), "", None), variant
        said = calls(json.dumps(answer, separators=separators), OFFERED)
        assert (said.calls, said.content, said.error) == ((), "Hi!", None), variant
    whole = json.dumps(call)
    cut = whole[: whole.index("]")] + _SECOND  # a second call cut at the token limit
    got = calls(cut, OFFERED)
    assert got.format == "envelope" and got.calls == (Call(name="get_weather", arguments={"city": "Oslo"}),), variant
    assert got.repairs[0].startswith("the envelope is not valid JSON (cut off?)"), variant


def test_untrusted_text_is_parsed_without_syntax_warnings_on_the_terminal():
    # Python warns on stderr for "C:\dir" (an invalid escape) or "1if" in text it parses: noise for
    # the user of `eris-lab parse` or a calc:evaluate call
    import warnings

    from eris_lab.parse import calls, parse_python
    from eris_lab.tools.calc import calc_evaluate

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parsed = calls("{'name': 'fs:read', 'arguments': {'path': 'C:\\dir\\notes.md'}}", ("fs:read",))
        with pytest.raises(Exception):
            calc_evaluate({"expression": "1if 2"}, None)
        with pytest.raises(SyntaxError):
            parse_python("1if 2")
    assert not [w for w in caught if issubclass(w.category, SyntaxWarning)]
    assert [c.name for c in parsed.calls] == ["fs:read"]


def test_parse_python_from_many_threads_leaves_the_warning_filters_as_they_were():
    # the MCP server runs calc:evaluate in worker threads; catch_warnings swaps global state
    import sys
    import threading
    import warnings

    from eris_lab.parse import parse_python

    before = list(warnings.filters)

    def work():
        for _ in range(300):
            parse_python("'C:\\dir'")

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so unguarded swaps would interleave
    try:
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert warnings.filters == before


@pytest.mark.parametrize("raw, expected", [
    # parse-37's kind in a <tool_call> wrapper: the tool's name is the inner tag
    ('<tool_call><get_weather>{"city": "Bonn"}</get_weather></tool_call>', [("get_weather", {"city": "Bonn"})]),
    ('<tool_call>\n  <get_weather>{"city": "Graz"}</get_weather>\n</tool_call>', [("get_weather", {"city": "Graz"})]),
    # a whole reply that is a pythonic list of calls
    ('[get_weather(city="Oslo"), get_weather(city="Bergen")]',
     [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Bergen"})]),
    (' [get_weather(city="Oslo")] ', [("get_weather", {"city": "Oslo"})]),
    ('[1, 2, 3]', []),
    # parse-39's kind in <tool_call> tags: copies up to the token limit are one call
    ('<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>' * 3 + '<tool_call>{"name": "get_wea',
     [("get_weather", {})]),
    ('<tool_call>{"name": "get_weather", "arguments": {"city": "A"}}</tool_call>\n'
     '<tool_call>{"name": "get_weather", "arguments": {"city": "B"}}</tool_call>',
     [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})]),  # different calls stay
])
def test_calls_more_shapes_of_the_handed_kinds(raw, expected):
    parsed = calls(raw, ["get_weather"])
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == expected and parsed.error is None


@pytest.mark.parametrize("raw", [
    # parse-15 / parse-17's kinds: call-shaped JSON that is data or code
    'payload = json.dumps({"name": "get_weather", "arguments": {"city": "x"}})\nrequests.post(url, data=payload)',
    'let user = {"name": "Bob", "arguments": [1, 2]};\nconsole.log(user);',
    'config["tool"] = {"name": "get_weather", "arguments": {}}',
    'Example record:\n```json\n{"name": "Alice", "arguments": 3, "age": 30}\n```',
    '{"name": "get_weather", "arguments": [1, 2]}',
])
def test_calls_call_shaped_json_in_code_or_data_is_no_call_and_stays_in_the_text(raw):
    parsed = calls(raw, ["get_weather"])
    assert parsed.calls == () and parsed.error is None and parsed.content == raw.strip()


# A helper's variants of the handed cases parse-01, -19, -21, -37 and -42: the same call in other
# wrappers. Each gave no call (and often no error) before.
_VARIANT_SCHEMAS = {
    "search": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    "search_docs": {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]},
    "run_shell": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    "shell": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
}


@pytest.mark.parametrize("raw, offered, expected", [
    ('Checking.\n<function>run_shell</function>\n```json\n{"command": "lsof -i :8080"}\n```', ["run_shell"],
     {"name": "run_shell", "arguments": {"command": "lsof -i :8080"}}),
    ('Action: search\nAction Input:\n```json\n{"query": "x"}\n```', ["search"],
     {"name": "search", "arguments": {"query": "x"}}),
    ('Thought: look it up.\nAction: search_docs[{"input": "vacation policy"}]', ["search_docs"],
     {"name": "search_docs", "arguments": {"input": "vacation policy"}}),
    ('```json\n{"action": "search", "action_input": {"query": "tide tables"}}\n```', ["search"],
     {"name": "search", "arguments": {"query": "tide tables"}}),
    ('{"tool": "search", "tool_input": {"query": "tide tables"}}', ["search"],
     {"name": "search", "arguments": {"query": "tide tables"}}),
    ('**Thought:** need data\n**Action:** search\n**Action Input:** "tide tables Oslo"', ["search"],
     {"name": "search", "arguments": {"query": "tide tables Oslo"}}),
    ('<invoke name="shell">\n<parameter name="command">pwd</parameter>\n</invoke>', ["shell", "search"],
     {"name": "shell", "arguments": {"command": "pwd"}}),
])
def test_calls_read_the_same_call_in_other_wrappers(raw, offered, expected):
    parsed = calls(raw, offered, channel="text", schemas=_VARIANT_SCHEMAS)
    assert _as_list(parsed) == [expected] and parsed.error is None


def test_calls_a_fenced_object_after_a_function_tag_leaves_no_fence_in_the_content():
    parsed = calls('Checking.\n<function>run_shell</function>\n```json\n{"command": "ls"}\n```\nDone.', ["run_shell"],
                   channel="text", schemas=_VARIANT_SCHEMAS)
    assert "```" not in parsed.content and "Checking." in parsed.content


# -- native formats of other model families, and results a model invents (a helper's variants, 2026-12-04)

@pytest.mark.parametrize("raw, expected", [
    # DeepSeek V3 / R1: the type, the separator, the name, a fenced JSON object; the output said
    # "a tool-call marker ... with no call this parser can read" before
    ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Oslo"}\n```'
     '<｜tool▁call▁end｜><｜tool▁calls▁end｜>', [("get_weather", {"city": "Oslo"})]),
    # DeepSeek V3.1: the name before the separator, two calls in one block
    ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Oslo"}<｜tool▁call▁end｜>'
     '<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
     [("get_weather", {"city": "Oslo"}), ("get_time", {})]),
    # gpt-oss harmony: the recipient after the channel, or before it; the analysis channel is reasoning
    ('<|channel|>analysis<|message|>User wants the weather.<|end|><|start|>assistant<|channel|>commentary '
     'to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}<|call|>', [("get_weather", {"city": "Oslo"})]),
    ('<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}<|call|>', [("get_time", {})]),
])
def test_calls_read_deepseek_and_harmony_tokens(raw, expected):
    parsed = calls(raw, ["get_weather", "get_time", "delete_file"])
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == expected
    assert parsed.error is None and parsed.content == "" and {c.source for c in parsed.calls} == {"tagged"}
    assert parsed.format in ("deepseek", "harmony")


def test_a_deepseek_call_cut_off_is_named_in_the_error():
    parsed = calls("<|tool▁call▁begin|>clock:alarm<|tool▁sep|>set", ["clock:alarm"])
    assert parsed.calls == () and "the call to clock:alarm was cut off before its end" in parsed.error


def test_a_harmony_final_message_is_the_answer_without_its_tokens():
    raw = ('<|channel|>analysis<|message|>Maybe {"name": "delete_file", "arguments": {"path": "a.txt"}}<|end|>'
           '<|start|>assistant<|channel|>final<|message|>Which file should I delete?<|return|>')
    parsed = calls(raw, ["delete_file"])
    assert parsed.calls == () and parsed.error is None
    assert parsed.content == "Which file should I delete?"


def test_a_harmony_result_the_model_wrote_itself_is_not_a_call_nor_content():
    # a message from the function back to the assistant (to=assistant) is the tool's reply, invented
    raw = ('<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}'
           '<|call|><|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"temp": 20}<|end|>'
           "<|start|>assistant<|channel|>final<|message|>It is 20 degrees.<|return|>")
    parsed = calls(raw, ["get_weather"])
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == [("get_weather", {"city": "Oslo"})]
    assert parsed.error is None and parsed.content == ""


@pytest.mark.parametrize("result", ['<tool_response>{"temp": 20}</tool_response>', "<tool_result>20 degrees</tool_result>",
                                    '<|python_output|>{"temp": 20}'])
def test_a_tool_result_the_model_wrote_itself_is_not_shown(result):
    # the call is read; the invented result and the answer built on it are not content (as an invented
    # ReAct Observation and Final Answer are not)
    raw = f'<tool_call>{{"name": "get_weather", "arguments": {{"city": "Oslo"}}}}</tool_call>\n{result}\nIt is 20 degrees in Oslo.'
    parsed = calls(raw, ["get_weather"])
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == [("get_weather", {"city": "Oslo"})]
    assert parsed.content == "" and "20 degrees" not in parsed.content
    assert any("the tool has not run" in r for r in parsed.repairs)


@pytest.mark.parametrize("call", ['get_weather(city="Oslo")', '{"name": "get_weather", "arguments": {"city": "Oslo"}}',
                                  '```tool_code\nget_weather(city="Oslo")\n```'])
def test_an_observation_the_model_wrote_after_an_unmarked_call_is_not_shown(call):
    # round fourteen (2026-12-07): after a bare, a JSON or a fenced call, the invented result and the
    # answer built on it were content
    parsed = calls(f"{call}\nObservation: 20 degrees\nIt is 20 degrees in Oslo.", ["get_weather"])
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == [("get_weather", {"city": "Oslo"})]
    assert parsed.content == "" and parsed.error is None


def test_functionary_v2_messages_are_read():
    # round fourteen: neither a call nor an error; the recipient "all" is the answer
    raw = ('<|from|>assistant\n<|recipient|>all\n<|content|>Let me check.\n'
           '<|from|>assistant\n<|recipient|>get_weather\n<|content|>{"city": "Oslo"}<|stop|>')
    parsed = calls(raw, ["get_weather"])
    assert [(c.name, dict(c.arguments), c.source) for c in parsed.calls] == [("get_weather", {"city": "Oslo"}, "tagged")]
    assert parsed.content == "Let me check." and parsed.error is None
    answer = calls("<|from|>assistant\n<|recipient|>all\n<|content|>Hello!<|stop|>", ["get_weather"])
    assert answer.calls == () and answer.content == "Hello!" and answer.error is None
    assert calls("<|from|>assistant\n<|recipient|>nosuch\n<|content|>{}", ["get_weather"]).error


@pytest.mark.parametrize("raw, content", [
    # DeepSeek: the end-of-sentence token, and the tool outputs the model wrote itself
    ('Sure, let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Lyon"}'
     "<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>", "Sure, let me check."),
    ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Lyon"}<｜tool▁call▁end｜>'
     '<｜tool▁calls▁end｜><｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>{"temp_c": 12}<｜tool▁output▁end｜>'
     "<｜tool▁outputs▁end｜>Lyon is at 12 C.<｜end▁of▁sentence｜>", ""),
    # harmony: an analysis message opened with its <|start|>assistant header
    ('<|start|>assistant<|channel|>analysis<|message|>User wants weather. I will call get_weather.<|end|>'
     '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Lyon"}<|call|>', ""),
    # other families' end-of-turn tokens after a call
    ('<tool_call>{"name": "get_weather", "arguments": {"city": "Lyon"}}</tool_call><|im_end|>', ""),
])
def test_special_tokens_around_a_call_are_not_content(raw, content):
    parsed = calls(raw, ["get_weather"])
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == [("get_weather", {"city": "Lyon"})]
    assert parsed.error is None and parsed.content == content


@pytest.mark.parametrize("raw", ['[unknown_tool(x=1)]', '[getWeather(city="Oslo")]'])
def test_a_reply_that_is_only_a_list_of_calls_names_an_unknown_tool_in_the_error(raw):
    # as a bare JSON call to an unknown tool does: the loop can tell the model the valid names
    # (a helper's variant: '[getWeather(city="Oslo")]' was no call and no error)
    parsed = calls(raw, ["get_weather"])
    assert parsed.calls == () and parsed.error.startswith("unknown tool ")


def test_a_pythonic_list_on_its_own_line_after_prose_is_read():
    raw = 'Sure, checking both cities.\n[get_weather(city="Oslo"), get_weather(city="Bergen", days=2)]'
    parsed = calls(raw, ["get_weather"])
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == [("get_weather", {"city": "Oslo"}),
                                                                  ("get_weather", {"city": "Bergen", "days": 2})]
    assert parsed.content == "Sure, checking both cities." and parsed.error is None


def test_two_wrappers_in_one_output_give_both_calls():
    raw = ('<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>\n'
           '[TOOL_CALLS]send_message[ARGS]{"to": "Ana", "body": "umbrella?"}')
    parsed = calls(raw, ["get_weather", "send_message"])
    assert [c.name for c in parsed.calls] == ["get_weather", "send_message"] and parsed.content == ""


def test_a_call_quoted_in_inline_code_inside_a_sentence_is_prose():
    # shown, not made: a state-changing tool never runs from it unconfirmed (execution.execute)
    raw = ('Small models usually answer with `<tool_call>{"name": "delete_file", "arguments": {"path": "a.txt"}}'
           "</tool_call>` - that's the Hermes format.")
    parsed = calls(raw, ["delete_file"])
    assert [c.source for c in parsed.calls] == ["prose"]
    whole = calls('`<tool_call>{"name": "delete_file", "arguments": {"path": "a.txt"}}</tool_call>`', ["delete_file"])
    assert [c.source for c in whole.calls] == ["tagged"] and whole.content == ""  # the reply is the call


def test_a_native_arguments_string_holding_a_python_dict_is_read():
    raw = """tool_calls=[{"function": {"name": "delete_file", "arguments": "{'path': 'tmp/cache.bin'}"}}]"""
    schemas = {"delete_file": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
    parsed = calls(raw, ["delete_file"], channel="native", schemas=schemas)
    assert [dict(c.arguments) for c in parsed.calls] == [{"path": "tmp/cache.bin"}]  # the whole string went into path


# -- a helper's variants of the handed parsing kinds (2026-12-05); each failed before its fix ----------

_STR = {"type": "string"}


@pytest.mark.parametrize("raw, offered, schemas, expected, error, content", [
    # parse-05: the opening tag was in the prompt; each closing tag ends a call (read as prose before)
    ('{"name": "create_plan", "arguments": {"id": "p"}}\n</tool_call>\n{"name": "add_step", "arguments": {"id": "1"}}\n'
     "</tool_call>", ["create_plan", "add_step"], None, [("create_plan", {"id": "p"}), ("add_step", {"id": "1"})], None, ""),
    # parse-05: a second, different call cut off after a whole one is reported, not dropped
    ('<tool_call>\n{"name": "create_plan", "arguments": {"id": "p"}}\n</tool_call>\n<tool_call>\n{"name": "add_step", "argu',
     ["create_plan", "add_step"], None, [("create_plan", {"id": "p"})], "cut off", ""),
    # parse-43: likewise after a semicolon
    ('{"name": "get_weather", "parameters": {"city": "Oslo"}}; {"name": "get_weather", "parameters": {"city": "Ber',
     ["get_weather"], None, [("get_weather", {"city": "Oslo"})], "cut off", ""),
    # parse-43: a numbered list of call objects is the reply, not prose around them
    ('1. {"name": "get_weather", "parameters": {"city": "Oslo"}}\n2. {"name": "get_weather", "parameters": {"city": "Bergen"}}',
     ["get_weather"], None, [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Bergen"})], None, ""),
    # parse-43: Python-style calls joined by a semicolon
    ('get_weather(city="Oslo"); get_weather(city="Bergen")', ["get_weather", "web_search"], None,
     [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Bergen"})], None, ""),
    # parse-19: the input in brackets, the name in backticks
    ("Thought: check.\nAction: search_docs[vacation policy]", ["search_docs"],
     {"search_docs": {"type": "object", "properties": {"input": _STR}, "required": ["input"]}},
     [("search_docs", {"input": "vacation policy"})], None, "Thought: check."),
    ('Thought: check.\nAction: `search_docs`\nAction Input: {"input": "vacation policy"}', ["search_docs"], None,
     [("search_docs", {"input": "vacation policy"})], None, "Thought: check."),
    # parse-21: a single-quoted Action Input
    ("Thought: t\nAction: search\nAction Input: 'who won the 2018 world cup'\nObservation: France", ["search"],
     {"search": {"type": "object", "properties": {"query": _STR}, "required": ["query"]}},
     [("search", {"query": "who won the 2018 world cup"})], None, "Thought: t"),
    # parse-37: the emptied wrapper is no reply text
    ('<function_calls><invoke name="shell"><parameter name="command">ls -la</parameter></invoke></function_calls>',
     ["shell"], None, [("shell", {"command": "ls -la"})], None, ""),
    # parse-35: an argument the schema forbids is an error the model can act on
    ('[TOOL_CALLS]book[ARGS]{"room": "A", "time": "9", "extra": 1}', ["book"],
     {"book": {"type": "object", "properties": {"room": _STR, "time": _STR}, "required": ["room", "time"],
               "additionalProperties": False}}, [], "unknown argument 'extra' for book", None),
    # parse-27: a broken object is no value for the one string parameter
    ('tool_calls=[{"function": {"name": "write_file", "arguments": "{\\"path\\": \\"a.md\\", \\"content\\": \\"b\\""}}]',
     ["write_file"], {"write_file": {"type": "object", "properties": {"path": _STR, "content": _STR}, "required": ["path"]}},
     [], "not a JSON object", None),
    # parse-07: a tag named in a sentence is no failed call
    ("The <tool_call> tag is how Hermes models mark a call.", ["get_weather"], None, [], None,
     "The <tool_call> tag is how Hermes models mark a call."),
])
def test_variants_of_the_handed_parsing_kinds(raw, offered, schemas, expected, error, content):
    channel = "native" if raw.startswith("tool_calls=") else "text"
    parsed = calls(raw, offered, channel=channel, schemas=schemas)
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == expected
    assert (parsed.error is None) if error is None else (error in parsed.error)
    if content is not None:
        assert parsed.content == content
    assert all(c.source != "prose" for c in parsed.calls)


def test_a_call_shown_inside_a_sentence_is_prose():
    parsed = calls('Example output format: <tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</tool_call>'
                   " - that is how I call tools.", ["get_weather"])
    assert [c.source for c in parsed.calls] == ["prose"]


# -- the next round of parser variants (2026-12-05, third stop); each failed before its fix ---------

_NOW_SEARCH = ["clock_now", "web_search"]


@pytest.mark.parametrize("raw, schemas, expected, error, content", [
    # parse-05: a call ended by a bare closing tag beside a fully tagged one (the first was lost, error null)
    ('{"name": "clock_now", "arguments": {}}</tool_call>\n<tool_call>{"name": "web_search", "arguments": '
     '{"query": "x"}}</tool_call>', None, [("clock_now", {}), ("web_search", {"query": "x"})], None, ""),
    ('<tool_call>{"name": "clock_now", "arguments": {}}</tool_call>\n{"name": "web_search", "arguments": '
     '{"query": "x"}}</tool_call>', None, [("clock_now", {}), ("web_search", {"query": "x"})], None, ""),
    # parse-05: the token limit cut a call inside a JSON list in a Phi-4 tag or an unclosed fence (no error)
    ('<|tool_call|>[{"name": "clock_now", "arguments": {}}, {"name": "web_search", "arguments": {"query": "wea',
     None, [("clock_now", {})], "cut off", ""),
    ('```json\n[{"name": "clock_now", "arguments": {}}, {"name": "web_search", "arguments": {"query": "wea',
     None, [("clock_now", {})], "cut off", ""),
    # parse-43: Python-style calls joined by ';', the last one cut (no call, and "arguments could not be read")
    ('clock_now(); web_search(query="weather in Par', None, [("clock_now", {})], "cut off", ""),
    # a Mistral call cut after a whole one ("not a JSON object" before)
    ('[TOOL_CALLS]clock_now[ARGS]{}[TOOL_CALLS]web_search[ARGS]{"query": "wea', None, [("clock_now", {})],
     "cut off", ""),
    # parse-19: one quoted string in ReAct's brackets is the input, not a list of arguments
    ('Thought: search.\nAction: web_search["weather in Paris"]', {"web_search": {
        "type": "object", "properties": {"query": _STR}, "required": ["query"]}},
     [("web_search", {"query": "weather in Paris"})], None, "Thought: search."),
    # parse-07: a reply whose first word is the marker, as the subject of a sentence about it
    ("<tool_call> is a special token that Hermes models use to mark a call. I did not call anything.", None, [],
     None, "<tool_call> is a special token that Hermes models use to mark a call. I did not call anything."),
])
def test_more_variants_of_the_handed_parsing_kinds(raw, schemas, expected, error, content):
    parsed = calls(raw, _NOW_SEARCH, schemas=schemas)
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == expected
    assert (parsed.error is None) if error is None else (error in parsed.error)
    assert parsed.content == content


@pytest.mark.parametrize("raw", ['[TOOL_CALLS]web_search[ARGS]{"query": "wea', 'web_search(query="weather in Par'])
def test_a_lone_call_the_token_limit_cut_says_so(raw):
    parsed = calls(raw, _NOW_SEARCH)
    assert parsed.calls == () and parsed.error and ("cut off" in parsed.error or "could not be read" in parsed.error)


def test_a_marker_at_the_start_with_a_name_after_it_is_still_a_failed_attempt():
    assert calls("<tool_call> clock_now", _NOW_SEARCH).error


# -- parsing_variants.json: a helper's variants of the handed kinds, read as `parse --catalog descriptors` --

PARSING_VARIANTS = load_cases("parsing_variants.json")["cases"]


@pytest.fixture(scope="module")
def descriptor_schemas():
    from eris_lab.catalog import load

    catalog = load(ROOT_DIR / "descriptors")
    return {tool.name: tool.parameters for tool in catalog}


def _as_pairs(items):
    return [(c["name"], c["arguments"]) for c in items]


@pytest.mark.parametrize("case", PARSING_VARIANTS, ids=[c["id"] for c in PARSING_VARIANTS])
def test_parsing_variant_of_a_handed_kind(case, descriptor_schemas):
    """Cut-off calls in every format are errors, never partial calls (cu-, ge-); end-of-turn tokens,
    invented turns and invented results are not content and end the reply (eo-, ir-, ll-08, mi-06);
    a call shown as an example is prose (fe-07, pr-07); reasoning in other markers (th-) and more
    model families' call forms (ll-, ge-08, ph-02, re-, py-) are read; a whole API message gives its
    calls, text and thinking (anthropic-, apimsg-); an empty wrapper is no call and no markup (empty-);
    a signature in a sentence is prose (sig-); a one-line fenced arguments string is its object (fence1-).
    A call repeated until the token limit cut the last copy is one call, the cut copy dropped, in every
    format (rep-); an emptied fence is no content (fence2-); bare keys are read in any wrapper (bare-);
    a call cut after prose leaves the prose (cutprose-); a case's own ``catalog`` gives the schemas of
    every tool, offered or not, as the loop passes them, and a catalogue tool's exact name is never
    mapped onto another offered tool (exact-); a call object that is part of program code in a code
    block is data, not a call (code-); copies separated by ';' or ',' are read once, with or without
    ``<|python_tag|>``, and a cut copy is no error (semi-)."""
    if "catalog" in case:  # the whole catalogue's schemas, as loop.py passes them
        schemas = {tool["name"]: tool["parameters"] for tool in case["catalog"]}
    else:
        schemas = {n: descriptor_schemas[n] for n in case["offered"]}
    parsed = calls(case["raw"], case["offered"], channel=case["channel"], schemas=schemas)
    got = [(c.name, dict(c.arguments)) for c in parsed.calls]
    expect = case["expect"]
    if "calls" in expect:
        assert got == _as_pairs(expect["calls"]), parsed
    if "calls_allowed" in expect:
        assert all(pair in _as_pairs(expect["calls_allowed"]) for pair in got), parsed
    if "calls_or_error" in expect:
        assert got == _as_pairs(expect["calls_or_error"]) or (got == [] and parsed.error), parsed
    if expect.get("no_calls"):
        assert got == [], parsed
    if expect.get("no_real_calls"):
        assert all(c.source == "prose" for c in parsed.calls), parsed
    if expect.get("error") == "nonnull":
        assert parsed.error, parsed
    if expect.get("error") == "null":  # read cleanly: neither silence nor a false alarm
        assert parsed.error is None, parsed
    if "sources_in" in expect:
        assert all(c.source in expect["sources_in"] for c in parsed.calls), parsed
    if "content_equals" in expect:
        assert parsed.content == expect["content_equals"], parsed
    for text in expect.get("content_excludes", ()):
        assert text not in parsed.content, parsed
    if "reasoning_equals" in expect:  # an API message's thinking blocks are reasoning, not content
        assert parsed.reasoning == expect["reasoning_equals"], parsed


@pytest.mark.parametrize("name", ["café", 'q"uote'])
def test_a_cut_envelope_call_is_named_by_its_decoded_name(name):
    """Round fifteen's variants (2026-12-07): a cut call whose name holds a JSON escape was read
    raw ("caf\\u00e9") and reported as an unknown tool, not as the cut call it is."""
    raw = ('{"thought": "", "status": "call", "message": "x", "tool_calls": [{"name": '
           + json.dumps(name) + ', "arguments": {"a": ')
    got = calls(raw, [name])
    assert got.calls == () and got.error.startswith(f"the call to {name} was cut off"), got.error


def test_a_call_past_the_reading_bound_is_an_error_not_silence():
    """Round fifteen's variants: 290 kB of prose then a call gave no call and no error."""
    call = '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    got = calls("The weather is a complex system of moving air. " * 6000 + call, ["get_weather"])
    assert got.calls == () and "only the first 200,000 are read" in (got.error or ""), got
    prose = calls("Lorem ipsum dolor sit amet. " * 20000, ["get_weather"])
    assert prose.error is None and prose.repairs == ("read only the first 200000 of 560000 characters",)


_CALL = '{"name": "get_weather", "arguments": {"city": "Oslo"}}'


@pytest.mark.parametrize("prose", [
    "{ x } " * 600,                       # braces around words: no JSON value, 600 of them
    "see { this }\n" * 700,
    "[" * 5000 + " ",                      # brackets that never close
    "{" * 5000 + " ",
    "the set {a, b} and " * 800 + "so: ",
    "{}" * 5000 + "\n",                    # empty objects, one line
    "{}" * 5000,
    "x[1 " * 3000,
    '{"' * 20000,
    "{'" * 20000,
    ("{ " + "a" * 1000 + " ") * 190,       # each opener reads a thousand characters in vain
    ("{ " + "b" * 3000 + " ") * 60 + "x" * 10000,
])
@pytest.mark.parametrize("call", [_CALL, '{"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}'])
def test_calls_reads_a_bare_call_after_many_brackets_of_prose(prose, call):
    """Round sixteen's variants (2026-12-07): more than 512 brackets of prose before a bare call
    used up the scan's start positions, and the call was lost without an error."""
    got = calls(prose + call, ["get_weather"])
    assert [(c.name, c.arguments) for c in got.calls] == [("get_weather", {"city": "Oslo"})], got.error


@pytest.mark.parametrize("prose", [
    ("{ " + "a" * 1000 + " ") * 190 + '{"name": x ' * 600,
    ("{ " + "a" * 2000 + " ") * 80 + '{"tool": [ ' * 700,
    ("[ " + "c" * 1500 + " ") * 100 + '{"action" : ( ' * 800,
])
def test_calls_says_so_when_a_call_after_too_many_brackets_is_not_read(prose):
    """When the scan's bounds stop it before a call-shaped object, the parse says so instead of
    returning no call and no error (the reading bound's rule, for brackets)."""
    got = calls(prose + _CALL, ["get_weather"])
    assert got.calls == () and "a call-shaped object after them was not read" in (got.error or ""), got
    assert calls("{ x } " * 600 + "nothing more", ["get_weather"]).error is None


_HOSTILE_REPEATS = {
    # round seventeen's hostile variants (2026-12-07): a cut line repeated to the token limit took 9 to
    # 113 s, each reader starting a fresh scan at every line or header
    "python-call-cut-in-a-string": ('clock_now(timezone="a\n' * 9000)[:190000],
    "text-tag-never-closed": "[SEARCH: x" * 8000,
    "harmony-headers-never-closed": ("<|channel|>commentary to=functions.clock:now <|message|>{" * 2200)[:120000],
    "react-input-cut": ('Action: clock:now\nAction Input: {"a": \n' * 5000)[:190000],
    "mistral-args-cut": ("[TOOL_CALLS]clock:now[ARGS]{" * 7000)[:190000],
}


@pytest.mark.parametrize("name", sorted(_HOSTILE_REPEATS))
def test_a_repeated_cut_call_is_read_within_the_parse_scan_budget(name):
    """The scans of all readers together stay within one parse's budget (their time is
    benchmarked by hand in docs/journal.md, never timed here), and the outcome is still told: no
    call, and an error where the output looks like a call attempt."""
    from eris_lab import parse

    got = calls(_HOSTILE_REPEATS[name], ["clock:now"])
    assert got.calls == ()
    assert parse._BUDGET.matched_chars <= parse._PARSE_SCAN_CHARS + parse._MAX_CHARS
    if name != "text-tag-never-closed":  # a tag no catalogue maps is plain text
        assert got.error, got


def test_a_harmony_message_without_its_end_token_ends_where_the_next_one_starts():
    raw = ("<|channel|>commentary to=functions.a <|message|>{\"x\": 1}"
           "<|channel|>commentary to=functions.b <|message|>{\"y\": 2}<|call|>")
    got = calls(raw, ["a", "b"])
    assert [(c.name, c.arguments) for c in got.calls] == [("a", {"x": 1}), ("b", {"y": 2})], got.error


def test_a_spent_scan_budget_is_said_when_no_call_was_read(monkeypatch):
    from eris_lab import parse

    monkeypatch.setattr(parse, "_PARSE_SCAN_CHARS", 1_000)
    got = calls('Action: clock:now\nAction Input: {"a": \n' * 200, ["clock:now"])
    assert got.calls == () and "past what one parse reads" in (got.error or ""), got
    # a call read before the budget ran out is returned, with no such error
    ok = calls('{"name": "clock:now", "arguments": {}}', ["clock:now"])
    assert [c.name for c in ok.calls] == ["clock:now"] and ok.error is None
