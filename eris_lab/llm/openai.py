"""A model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint (llama.cpp server, Ollama, vLLM).

Tools go out through the server's native ``tools`` field, and native tool calls come back as the
``tool_calls=[...]`` text that ``parse.calls`` reads on its ``native`` channel.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any, Mapping, Sequence

from ..errors import LLMError
from .generation import Generation, Messages, as_messages

__all__ = ["OpenAIBackend", "native_tool_calls", "tool_parse_failure", "TOOL_PARSE_FAILURES"]

#: What servers answer (HTTP 500) when the model wrote a tool call the server's own parser could
#: not read. Matched case-insensitively as substrings of the error message. Sources:
#: Ollama "error parsing tool call: raw='...', err=..." (ollama/ollama#12064, #12884);
#: llama.cpp server "Failed to parse tool call arguments as JSON" (common/chat.cpp, reported in
#: ggml-org/llama.cpp#25510 and noonghunna/club-3090#1195); llama.cpp's autoparser
#: "Failed to parse input at pos N: <tool_call>..." (ggml-org/llama.cpp#23838, #24644).
TOOL_PARSE_FAILURES: tuple[str, ...] = (
    "error parsing tool call",
    "failed to parse tool call",
    "failed to parse input at pos",
)


def tool_parse_failure(status: int, message: str) -> bool:
    """True when an HTTP error says the server could not parse the model's tool call.

    Only HTTP 500 answers whose message contains one of ``TOOL_PARSE_FAILURES`` count.
    """
    lowered = message.lower()
    return status == 500 and any(m in lowered for m in TOOL_PARSE_FAILURES)


def native_tool_calls(tool_calls: Any) -> str:
    """Render a server's ``message.tool_calls`` as the native-channel text of ``parse.calls``.

    Returns ``tool_calls=[{"function": {"name": ..., "arguments": ...}}, ...]`` with each
    ``arguments`` passed through exactly as the server sent it (usually a JSON string; repair is
    the parser's job). ``""`` when there are no calls.
    """
    if not tool_calls or not isinstance(tool_calls, list):
        return ""
    out = []
    for call in tool_calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            function = {}
        out.append({"function": {"name": function.get("name"), "arguments": function.get("arguments")}})
    return "tool_calls=" + json.dumps(out, ensure_ascii=False)


def _server_message(body: bytes) -> str:
    """The error message of an OpenAI-style error body, else the body text (trimmed)."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, Mapping):
        error = data.get("error", data.get("detail", data.get("message")))
        if isinstance(error, Mapping):
            error = error.get("message", error)
        if error is not None:
            text = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
    text = " ".join(text.split())
    return text[:500] + ("..." if len(text) > 500 else "")


def _endpoint(base_url: str) -> str:
    url = base_url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if url.endswith("/v1"):
        return url + "/chat/completions"
    return url + "/v1/chat/completions"


class OpenAIBackend:
    """A model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    llama.cpp's server (C++ ``llama-server`` and ``python -m llama_cpp.server``), Ollama and vLLM
    all speak it. Tools are offered through the native ``tools`` field. When the server answers
    HTTP 500 because *it* could not parse the model's tool call (``TOOL_PARSE_FAILURES``), the
    request is sent once more without ``tools`` and the text comes back for ``parse.calls``'s
    text fallbacks (``Generation.note`` says so). Any other HTTP error raises :class:`LLMError`
    naming the status and the server's message.

    Parameters
    ----------
    base_url : str
        ``http://host:port``, ``.../v1`` or the full ``.../v1/chat/completions`` URL.
    model : str
        The ``model`` field of each request.
    api_key : str, optional
        Sent as ``Authorization: Bearer <key>``.
    timeout_s : float
        Seconds to wait for one HTTP answer.
    grammar_field : str, optional
        Request field that carries a GBNF grammar: ``"grammar"`` for llama.cpp's servers. None
        (default): the server takes no grammar, and passing one raises rather than run
        unconstrained.
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout_s: float = 60.0,
                 grammar_field: str | None = None) -> None:
        self.base_url = base_url
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.grammar_field = grammar_field

    @property
    def url(self) -> str:
        """The chat-completions endpoint."""
        return _endpoint(self.base_url)

    @property
    def model_id(self) -> str:
        """``openai:<model>@<base_url>``."""
        return f"openai:{self.model}@{self.base_url}"

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        """POST ``payload``; the decoded JSON answer. HTTP errors propagate as ``_HTTPFailure``."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(payload).encode("utf-8"), headers=headers,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            raise _HTTPFailure(exc.code, _server_message(exc.read() or b"")) from None
        except (TimeoutError, OSError) as exc:  # URLError is an OSError; socket.timeout too
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                raise LLMError(f"no answer within {self.timeout_s} s", where=self.url) from None
            raise LLMError(f"cannot reach the server ({reason})", where=self.url) from None
        try:
            data = json.loads(body)
        except ValueError:
            raise LLMError(f"the server answered with something that is not JSON: {body[:200]!r}",
                           where=self.url) from None
        if not isinstance(data, Mapping) or not isinstance(data.get("choices"), list) or not data["choices"]:
            raise LLMError(f"expected a chat completion with choices, got {str(data)[:200]!r}", where=self.url)
        return dict(data)

    def generate(self, prompt_or_messages: str | Messages, *, tools: Sequence[Any] | None = None,
                 tool_choice: Any = None, grammar: str | None = None, max_tokens: int = 256,
                 temperature: float = 0.0, stop: Sequence[str] = (),
                 fallback_system: str | None = None) -> Generation:
        """One chat completion, with native tools when given.

        Parameters
        ----------
        prompt_or_messages : str or sequence of mapping
            A string is sent as one user message.
        tools : sequence, optional
            OpenAI tool entries (``{"type": "function", "function": {...}}``) or ``catalog.Tool``
            objects (``to_openai()``).
        tool_choice : str or mapping, optional
            Passed through (``"auto"``, ``"none"``, or a named function).
        grammar : str, optional
            GBNF text, sent in ``grammar_field``; LLMError when the backend has none.
        max_tokens, temperature, stop
            As for :meth:`LlamaRunner.generate`.
        fallback_system : str, optional
            For the retry without tools: a system message describing the tools in text (e.g.
            ``prompt.slim(offer)``), put before the other messages.

        Returns
        -------
        Generation
            ``text`` is the message content; ``tool_calls`` the native calls as text.

        Raises
        ------
        LLMError
            ``<url>: HTTP <status>: <server message>`` for an error that is not a tool-call parse
            failure (or for a failure of the retry), an unreachable server, a timeout, or a
            grammar given to a backend without ``grammar_field``.
        """
        messages = as_messages(prompt_or_messages)
        if messages is None:
            messages = [{"role": "user", "content": prompt_or_messages}]
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                   "temperature": temperature, "stream": False}
        if stop:
            payload["stop"] = list(stop)
        if grammar is not None:
            if not self.grammar_field:
                raise LLMError("this backend has no grammar_field; a grammar would be ignored, not enforced",
                               where="grammar")
            payload[self.grammar_field] = grammar
        if tools:
            payload["tools"] = [t.to_openai() if hasattr(t, "to_openai") else dict(t) for t in tools]
            if tool_choice is not None:
                payload["tool_choice"] = tool_choice
        note = ""
        started = time.perf_counter()
        try:
            data = self._post(payload)
        except _HTTPFailure as failure:
            if not (tools and tool_parse_failure(failure.status, failure.message)):
                raise LLMError(f"HTTP {failure.status}: {failure.message}", where=self.url) from None
            note = f"retried without tools: {failure.message}"
            payload.pop("tools", None)
            payload.pop("tool_choice", None)
            if fallback_system:
                payload["messages"] = [{"role": "system", "content": fallback_system}, *messages]
            try:
                data = self._post(payload)
            except _HTTPFailure as again:
                raise LLMError(f"HTTP {again.status}: {again.message} (retry without tools, after: "
                               f"{failure.message})", where=self.url) from None
        seconds = time.perf_counter() - started
        choice = data["choices"][0] if isinstance(data["choices"][0], Mapping) else {}
        message = choice.get("message") if isinstance(choice.get("message"), Mapping) else {}
        content = message.get("content")
        usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else {}
        n_tokens = int(usage.get("completion_tokens") or 0)
        return Generation(
            text=content if isinstance(content, str) else "",
            n_prompt_tokens=int(usage.get("prompt_tokens") or 0), n_tokens=n_tokens, seconds=seconds,
            tokens_per_s=n_tokens / seconds if n_tokens and seconds > 0 else 0.0,
            grammar_used=grammar is not None, finish_reason=str(choice.get("finish_reason") or ""),
            tool_calls=native_tool_calls(message.get("tool_calls")), note=note,
        )


class _HTTPFailure(Exception):
    """An HTTP error answer (internal: ``generate`` decides between retry and LLMError)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
