"""FunctionGemma's chat format (llm.functiongemma): Google's documented prompt reproduced, calls
written in its syntax read back by the parser, and the runner's format switch (no weights needed).
"""

from __future__ import annotations

import pytest

from eris_lab import llm
from eris_lab.catalog import Tool
from eris_lab.errors import LLMError
from eris_lab.llm import functiongemma
from eris_lab.parse import calls

#: Google's "Weather Tool Flow" example, turn 1 (FunctionGemma formatting and best practices,
#: https://ai.google.dev/gemma/docs/functiongemma/formatting-and-best-practices), verbatim.
GOOGLE_DEVELOPER_TURN = (
    "<start_of_turn>developer\nYou are a model that can do function calling with the following functions"
    "<start_function_declaration>declaration:get_current_weather{description:<escape>Gets the current weather in a "
    "given location.<escape>,parameters:{properties:{location:{description:<escape>The city and state, e.g. "
    "\"San Francisco, CA\" or \"Tokyo, JP\"<escape>,type:<escape>STRING<escape>},unit:{description:<escape>The unit "
    "to return the temperature in.<escape>,enum:[<escape>celsius<escape>,<escape>fahrenheit<escape>],type:<escape>"
    "STRING<escape>}},required:[<escape>location<escape>],type:<escape>OBJECT<escape>}}<end_function_declaration>"
    "<end_of_turn>\n")
WEATHER = Tool(name="get_current_weather", description="Gets the current weather in a given location.", parameters={
    "type": "object", "required": ["location"], "properties": {
        "location": {"type": "string", "description": 'The city and state, e.g. "San Francisco, CA" or "Tokyo, JP"'},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The unit to return the temperature in."}}})
MESSAGES = [{"role": "user", "content": "Hey, what's the weather in Tokyo right now?"}]


def test_render_reproduces_googles_developer_turn_and_user_turn():
    text = functiongemma.render(MESSAGES, [WEATHER])
    assert text == (GOOGLE_DEVELOPER_TURN + "<start_of_turn>user\nHey, what's the weather in Tokyo right now?"
                    "<end_of_turn>\n<start_of_turn>model\n")


def test_render_declares_each_tool_in_its_own_block_and_keeps_the_system_text_first():
    other = {"type": "function", "function": {"name": "get_time", "description": "Time now.",
                                              "parameters": {"type": "object", "properties": {}}}}
    text = functiongemma.render([{"role": "system", "content": "Be brief."}, *MESSAGES], [WEATHER, other])
    assert text.startswith("<start_of_turn>developer\nBe brief.\n\n" + functiongemma.DEVELOPER_PROMPT
                           + "<start_function_declaration>declaration:get_current_weather{")
    assert "<end_function_declaration><start_function_declaration>declaration:get_time{description:<escape>Time now." \
           "<escape>,parameters:{properties:{},type:<escape>OBJECT<escape>}}<end_function_declaration><end_of_turn>" in text
    # no tools: no trigger sentence; no system text either: no developer turn at all
    assert functiongemma.render(MESSAGES).startswith("<start_of_turn>user\n")


def test_render_puts_the_tool_result_in_the_model_turn_of_its_call():
    """Google's full sequence: call, response and the answer share one model turn."""
    call = functiongemma.call_text("get_current_weather", {"location": "Tokyo, Japan"})
    text = functiongemma.render([*MESSAGES, {"role": "assistant", "content": call},
                                 {"role": "tool", "name": "get_current_weather",
                                  "content": '{"temperature": 15, "weather": "sunny"}'}], [WEATHER])
    assert text.endswith("<start_of_turn>model\n<start_function_call>call:get_current_weather{location:<escape>"
                         "Tokyo, Japan<escape>}<end_function_call><start_function_response>response:get_current_weather"
                         "{temperature:15,weather:<escape>sunny<escape>}<end_function_response>")



def test_render_keeps_the_answer_after_a_response_in_the_same_model_turn():
    # it closed the turn and opened a new one for the answer; the next user turn closes it
    call = functiongemma.call_text("get_current_weather", {"location": "Tokyo, Japan"})
    text = functiongemma.render([*MESSAGES, {"role": "assistant", "content": call},
                                 {"role": "tool", "name": "get_current_weather", "content": '{"temperature": 15}'},
                                 {"role": "assistant", "content": "It is 15 degrees in Tokyo."},
                                 {"role": "user", "content": "Thanks!"}], [WEATHER])
    assert "<end_function_response>It is 15 degrees in Tokyo.<end_of_turn>\n<start_of_turn>user\nThanks!" in text
    assert text.count("<start_of_turn>model") == 2 and text.endswith("<start_of_turn>model\n")

@pytest.mark.parametrize("arguments", [
    {"location": "Tokyo, Japan"},
    {"query": "a {b}, \"c\"", "limit": 5, "exact": False, "ratio": 0.25},
    {"ids": [1, 2, 3], "filters": {"city": "Portland, OR", "open": True}},
])
def test_a_call_written_in_functiongemmas_syntax_is_read_back_by_the_parser(arguments):
    parsed = calls(functiongemma.call_text("find_place", arguments), ["find_place"])
    assert parsed.error is None and parsed.format == "gemma"
    assert [(c.name, dict(c.arguments)) for c in parsed.calls] == [("find_place", arguments)]


def test_a_string_holding_the_escape_token_is_refused():
    with pytest.raises(LLMError, match="may not hold <escape>"):
        functiongemma.call_text("f", {"x": "a<escape>b"})


def test_runner_with_the_functiongemma_format_renders_without_loading_and_stops_at_a_response():
    runner = llm.LlamaRunner("/nonexistent.gguf", chat_template="functiongemma")
    text, stop = runner.format(MESSAGES, tools=[WEATHER])
    assert text.startswith(GOOGLE_DEVELOPER_TURN) and text.endswith("<start_of_turn>model\n")
    assert stop == ("<end_of_turn>", "<start_function_response>")


def test_a_gguf_template_that_declares_functions_is_recognised():
    assert functiongemma.is_template("{%- for tool in tools %}<start_function_declaration>declaration:{{ tool }}")
    assert not functiongemma.is_template("{{ bos_token }}<start_of_turn>user") and not functiongemma.is_template(None)
