"""The MCP server, driven by the official SDK's own client over stdio.

Each test starts ``python -m eris_lab mcp-serve ... --embedder none`` as a subprocess (keyword
search: no model load), talks MCP to it and closes it; the SDK's ``stdio_client`` terminates the
process on exit, and every session runs under a time limit.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import ROOT

mcp = pytest.importorskip("mcp")
anyio = pytest.importorskip("anyio")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

LIMIT_S = 90


def _params(*flags: str, tmp_path) -> StdioServerParameters:
    env = {"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "ERIS_LAB_CACHE": str(tmp_path / "cache"),
           "TOKENIZERS_PARALLELISM": "false"}
    return StdioServerParameters(command=sys.executable, args=["-m", "eris_lab", "mcp-serve", "--embedder", "none",
                                                               *flags], env=env, cwd=str(ROOT))


def _run(params: StdioServerParameters, script, tmp_path):
    """Open a client session to the server, run ``script(session)``, always close."""
    errlog = open(tmp_path / "server.stderr", "w")

    async def main():
        with anyio.fail_after(LIMIT_S):
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await script(session)

    try:
        return anyio.run(main)
    finally:
        errlog.close()


def _text(result) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def test_meta_mode_lists_the_three_meta_tools_and_runs_a_safe_tool(tmp_path):
    async def script(session):
        listed = await session.list_tools()
        found = await session.call_tool("tool_search", {"query": "calculate 17 times 23"})
        described = await session.call_tool("tool_describe", {"name": "calc:evaluate"})
        ran = await session.call_tool("tool_execute", {"name": "calc:evaluate",
                                                      "arguments": {"expression": "17*23"}})
        return listed, found, described, ran

    listed, found, described, ran = _run(_params(tmp_path=tmp_path), script, tmp_path)
    assert [t.name for t in listed.tools] == ["tool_search", "tool_describe", "tool_execute"]
    assert listed.tools[0].input_schema["required"] == ["query"]
    hits = json.loads(_text(found))["hits"]
    assert hits[0]["name"] == "calc:evaluate"
    assert json.loads(_text(described))["parameters"]["required"] == ["expression"]
    assert not ran.is_error and "391" in _text(ran)


def test_meta_mode_read_only_refuses_a_write_tool(tmp_path):
    async def script(session):
        await session.call_tool("tool_search", {"query": "archive that mail"})
        return await session.call_tool("tool_execute", {"name": "mail:move",
                                                       "arguments": {"messages": ["x"], "folder": "archive"}})

    ran = _run(_params("--read-only", tmp_path=tmp_path), script, tmp_path)
    assert ran.is_error
    assert "did not run" in _text(ran)


def test_routed_mode_lists_the_routed_subset_and_gates_calls(tmp_path):
    async def script(session):
        before = await session.list_tools()
        routed = await session.call_tool("tool_route", {"text": "what time is it now"})
        after = await session.list_tools()
        now = await session.call_tool("clock:now", {"timezone": "UTC"})
        outside = await session.call_tool("calc:evaluate", {"expression": "1+1"})
        return before, routed, after, now, outside

    before, routed, after, now, outside = _run(_params("--mode", "routed", tmp_path=tmp_path), script, tmp_path)
    assert [t.name for t in before.tools] == ["tool_route"]
    offered = json.loads(_text(routed))["offered"]
    assert "clock:now" in offered and "calc:evaluate" not in offered
    names = [t.name for t in after.tools]
    assert names[0] == "tool_route" and "clock:now" in names
    clock = next(t for t in after.tools if t.name == "clock:now")
    assert clock.annotations.read_only_hint is True
    assert "properties" in clock.input_schema
    assert not now.is_error and "UTC" in _text(now)
    assert outside.is_error and "not offered" in _text(outside)


def test_mcp_serve_rejects_an_unknown_catalogue(capsys):
    from eris_lab import cli

    assert cli.main(["mcp-serve", "--catalog", "/nonexistent/catalogue.json", "--embedder", "none"]) == 2
    assert capsys.readouterr().err.strip() == "eris-lab: error: /nonexistent/catalogue.json: no such file or folder"


def test_requests_piped_all_at_once_are_all_answered(tmp_path):
    """A client that writes its requests and closes stdin at once (``printf ... | eris-lab mcp-serve``)
    gets an answer to each: the SDK's loop used to end, cancelling what was in flight, at EOF."""
    import subprocess

    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "tool_search", "arguments": {"query": "calculate 17 times 23"}}},
        {"jsonrpc": "2.0", "id": "four", "method": "tools/call",
         "params": {"name": "tool_describe", "arguments": {"name": "calc:evaluate"}}},
    ]
    params = _params(tmp_path=tmp_path)
    done = subprocess.run([params.command, *params.args], input="".join(json.dumps(r) + "\n" for r in requests),
                          capture_output=True, text=True, env=params.env, cwd=params.cwd, timeout=LIMIT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [a["id"] for a in answers] == [1, 2, 3, "four"]
    assert all("result" in a for a in answers)
    assert answers[0]["result"]["capabilities"]["tools"]["listChanged"] is False  # meta mode lists a fixed set
    assert "calc:evaluate" in answers[2]["result"]["content"][0]["text"]


def test_routed_mode_declares_that_its_tool_list_changes(tmp_path):
    """It sends ``notifications/tools/list_changed`` after each ``tool_route``, so it says so."""
    import subprocess

    params = _params("--mode", "routed", tmp_path=tmp_path)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    done = subprocess.run([params.command, *params.args], input=json.dumps(init) + "\n", capture_output=True,
                          text=True, env=params.env, cwd=params.cwd, timeout=LIMIT_S)
    assert json.loads(done.stdout.splitlines()[0])["result"]["capabilities"]["tools"]["listChanged"] is True
