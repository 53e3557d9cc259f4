"""parse.calls: every handed parsing case, the text formats, repairs, and a never-raises fuzz."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eris_lab import cli
from eris_lab.parse import Call, Parsed, calls, loads_repaired

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
    elif case["id"] != "parse-25-duplicate-call-with-null":  # that case drops the null call and says so
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


def test_calls_null_duplicate_reports_missing_argument():
    case = next(c for c in CASES if c["id"] == "parse-25-duplicate-call-with-null")
    parsed = calls(case["raw_model_output"], ["fibonacci"], channel="native", schemas=CASE_SCHEMAS)
    assert parsed.error == ("missing required argument 'n' for fibonacci; return as a recoverable tool "
                            "error so the model can retry")


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
    json.dumps(parsed.to_json())


#: Pieces of every format, glued at random: reaches the format branches plain text never does.
_PIECES = ['<tool_call>', '</tool_call>', '<function=get_weather>', '</function>', '<parameter=city>', '</parameter>', '<|tool_call>call:get_weather', '<tool_call|>', '<|"|>', '<tool>', '</tool>',
           '<toolcall>', '<web_search>', '</web_search>', '[TOOL_CALLS]', '[ARGS]', '[CALL_ID]', '<|python_tag|>',
           '<|eom_id|>', 'API: get_weather', 'Action: web_search', '\nAction Input: ', 'Observation:', '```json\n',
           '```tool_code\n', '```', '{', '}', '[', ']', '"', ':', ',', '"name"', '"arguments"', '"get_weather"',
           '"parameters"', '"tool_calls"', '"message"', '{"thought": ', 'tool_calls=', '(', ')', 'f(x=1)', '\\', '\n',
           ' ', 'null', '1', 'x=', "'", '"function"']
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


def test_calls_never_raises_on_hostile_inputs():
    for raw in ["{" * 100_000, "[" * 5000 + "]" * 5000, "<|python_tag|>" + "f(" * 5000, b"\xff\xfe{",
                None, 12, "<tool_call>" * 3000, "Action: x(" + "(" * 3000, "```" * 1000]:
        _check_never_raises(raw, "text")


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
