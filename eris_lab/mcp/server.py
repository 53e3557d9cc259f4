"""The lab's router as an MCP server (official ``mcp`` Python SDK, stdio transport).

Two modes (``eris-lab mcp-serve --mode``):

* ``meta``: the server lists the three meta-tools (``tool_search``, ``tool_describe``,
  ``tool_execute``; :mod:`eris_lab.mcp.meta`); one :class:`~eris_lab.mcp.meta.MetaSession` per server
  process holds the last search and the described tools, and ``tool_execute`` runs through it;
* ``routed``: the server lists ``tool_route`` plus the tools the last routing offered, with
  their full schemas. ``tool_route(text)`` routes the message (``Router``: guards, hits, policy,
  offer; the keyword search when no embedder is available), replaces the listed subset and sends
  ``notifications/tools/list_changed``. A call to a tool outside the current offer is refused.

Every call's arguments are checked against the input schema the server advertised for it
(``tool_route``'s ``maxLength`` 2000, the meta-tools' ``additionalProperties: false``), and
the error never echoes an oversized value back. Tools run in a worker thread
(``anyio.to_thread``), so one slow tool never stops the server answering other requests; the
executors themselves are bounded (``tools.calc``). The temporary session (agenda, vault) is
removed when the server ends. Requests piped in before the client closes stdin are all answered
before the server ends (:data:`DRAIN_S`).

Both modes enforce the same permissions (``MetaSession.permitted``): a tool outside the allowed
catalogue, or a write tool in a ``--read-only`` server, is never listed as callable and never
runs. Tools run through ``loop.execute`` (validation, timeout, labelled result); the demo's
safe executors are ``tools.EXECUTORS``, every other tool is routing-only.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Iterable, Literal

from ..catalog import Catalog
from ..errors import EmbedError, ErisLabError
from .meta import META_TOOLS, MetaSession, access_of, check_arguments

__all__ = ["build_server", "serve", "ROUTE_TOOL", "MODES", "KEYWORD_ROUTE_FLOOR", "KEYWORD_RULE",
           "KEYWORD_NO_MATCH"]

MODES = ("meta", "routed")
#: Keyword routing (no embedder) keeps hits scoring at least this share of the best hit: the
#: keyword scores have no absolute scale, so the cut is relative. Written for this project.
KEYWORD_ROUTE_FLOOR = 0.6
#: The ``rule`` a keyword routing reports (no embedder, so no policy rule applies): some tools
#: cleared :data:`KEYWORD_ROUTE_FLOOR`, or no term of the text matched any tool.
KEYWORD_RULE = "KEYWORD_RELATIVE_FLOOR"
KEYWORD_NO_MATCH = "KEYWORD_NO_MATCH"
#: The routing entry of ``routed`` mode.
ROUTE_TOOL = {
    "name": "tool_route",
    "description": "Route a user request: the server then lists only the tools that fit it "
                   "(re-list tools after calling this).",
    "input_schema": {"type": "object", "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 2000}},
                     "required": ["text"], "additionalProperties": False},
}


def _mcp():
    try:
        import mcp.types as types
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ErisLabError(f"the MCP SDK is not installed ({exc}); pip install mcp", where="mcp-serve") from None
    return types, Server, stdio_server


class _Routed:
    """State of ``routed`` mode: the current offer and how to route."""

    def __init__(self, meta: MetaSession, embedder: Any, k: int) -> None:
        self.meta = meta
        self.embedder = embedder
        self.k = k
        self.offered: tuple[str, ...] = ()
        self._router = None

    def route(self, text: str) -> dict[str, Any]:
        how = "keyword"
        names: tuple[str, ...] = ()
        rule = ""
        if self.embedder is not None:
            try:
                if self._router is None:
                    from ..router import Router

                    # knobs calibrated for this catalogue without labels (cached), as eris-lab route
                    self._router = Router.with_calibrated_knobs(self.meta.catalog, self.embedder)
                routed = self._router.route(text)
                names, rule, how = routed.offer.names, str(routed.decision.rule), "router"
            except EmbedError:
                self.embedder = None
        if self.embedder is None:
            hits = self.meta.searcher.search(text, k=self.k)
            top = hits[0].score if hits else 0.0
            names = tuple(h.name for h in hits if h.score >= KEYWORD_ROUTE_FLOOR * top)
            rule = KEYWORD_RULE if names else KEYWORD_NO_MATCH
        self.offered = tuple(n for n in names if self.meta.permitted(n)[0])
        return {"text": text, "how": how, "rule": rule, "offered": list(self.offered)}


def build_server(catalog: Catalog, *, mode: Literal["meta", "routed"] = "meta", read_only: bool = False,
                 embedder: Any = None, k: int = 5, allowed: Iterable[str] | None = None, session: Any = None):
    """An MCP server (low-level ``mcp.server.lowlevel.Server``) over one catalogue.

    Parameters
    ----------
    catalog : Catalog
    mode : {"meta", "routed"}
    read_only : bool
        Never execute a write tool (``meta.access_of``).
    embedder : Embedder or None
        None = keyword search only (no model load).
    k : int
        Hits per search (meta) and tools per keyword routing (routed).
    allowed : iterable of str, optional
        The allowed catalogue; default every tool.
    session : loop.Session, optional
        Executors' state; default a temporary session.

    Returns
    -------
    mcp.server.lowlevel.Server

    Raises
    ------
    ErisLabError
        An unknown mode, or the SDK is missing.
    """
    if mode not in MODES:
        raise ErisLabError(f"expected one of {MODES}, got {mode!r}", where="--mode")
    types, Server, _ = _mcp()
    # routed mode lists and runs catalogue tools directly, so its execute scope is the catalogue
    meta = MetaSession(catalog, embedder if mode == "meta" else None, allowed=allowed, read_only=read_only,
                       session=session, scope="search")
    routed = _Routed(meta, embedder, k) if mode == "routed" else None

    def mcp_tool(name: str, description: str, schema: dict[str, Any], read: bool):
        return types.Tool(name=name, description=description, input_schema=schema,
                          annotations=types.ToolAnnotations(read_only_hint=read))

    async def on_list_tools(ctx, params):
        if routed is None:
            tools = [mcp_tool(t.name, t.description, dict(t.parameters), t.name != "tool_execute")
                     for t in META_TOOLS]
        else:
            tools = [mcp_tool(ROUTE_TOOL["name"], ROUTE_TOOL["description"], ROUTE_TOOL["input_schema"], True)]
            for name in routed.offered:
                tool = catalog.tool(name)
                tools.append(mcp_tool(name, " ".join((tool.short_description or tool.description).split()),
                                      json.loads(json.dumps(tool.parameters)), access_of(tool) == "read"))
        return types.ListToolsResult(tools=tools)

    def result(text: str, is_error: bool, data: Any = None):
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=data if isinstance(data, dict) else None, is_error=is_error)

    async def on_call_tool(ctx, params):
        import anyio

        name, arguments = params.name, dict(params.arguments or {})
        if routed is None:
            # tool_execute runs a tool: off the event loop, so other requests are still answered
            call = functools.partial(meta.call, name, arguments)
            text, is_error = await anyio.to_thread.run_sync(call) if name == "tool_execute" else call()
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            return result(text, is_error, data)
        if name == ROUTE_TOOL["name"]:
            problem = check_arguments(name, ROUTE_TOOL["input_schema"], arguments)
            if problem is not None:
                return result(problem, True)
            text = arguments.get("text")
            if not isinstance(text, str) or not text.strip():
                return result("tool_route needs a non-empty 'text' string", True)
            record = routed.route(text)
            try:
                await ctx.session.send_tool_list_changed()
            except Exception:  # a client that does not listen still re-lists on its own
                pass
            return result(json.dumps(record, ensure_ascii=False), False, record)
        from ..execution import Session, execute, failed

        if meta.session is None:
            meta.session = Session()
        ok, why = meta.permitted(name)
        if not ok:
            res = failed(name, arguments, "refused", f"{why}; it did not run")
        else:
            permitted = tuple(n for n in catalog.names if meta.permitted(n)[0])
            res = await anyio.to_thread.run_sync(functools.partial(
                execute, {"name": name, "arguments": arguments}, routed.offered, catalog, allowed=permitted,
                session=meta.session))
        return result(res.text, not res.ok and res.status != "routing_only",
                      {"status": res.status, "data": res.data} if res.ok else {"status": res.status})

    server = Server("eris-lab", version="0.1.0",
                    instructions=("Search tools with tool_search, read a schema with tool_describe, run one "
                                  "with tool_execute." if routed is None else
                                  "Call tool_route with the user's request, then list tools again."),
                    on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    server.eris_meta = meta  # for in-process tests
    server.eris_routed = routed is not None  # routed mode re-lists its tools: it says so (listChanged)
    return server


#: After the client closes stdin, the server still answers the requests it has read, for at most
#: this long (s): ``printf '<3 requests>' | eris-lab mcp-serve`` got one answer before (the SDK
#: ends its loop, and cancels requests in flight, when its read stream ends). A tool run is bounded
#: by its own timeout (10 s by default, ``loop.execute``).
DRAIN_S = 30.0


def serve(catalog: Catalog, **kwargs: Any) -> None:
    """Serve :func:`build_server` over stdio until the client closes the connection.

    Every request read before the client closed stdin is answered first (within :data:`DRAIN_S`).
    """
    import anyio

    _, _, stdio_server = _mcp()
    from mcp.server.lowlevel.server import NotificationOptions

    server = build_server(catalog, **kwargs)

    async def main() -> None:
        async with stdio_server() as (read, write):
            server_read, server_write, pumps = _answer_before_closing(read, write)
            async with anyio.create_task_group() as tasks:
                for pump in pumps:
                    tasks.start_soon(pump)
                # the server closes its write side when its loop ends; both pumps then end on their own
                await server.run(server_read, server_write, server.create_initialization_options(
                    NotificationOptions(tools_changed=server.eris_routed)))

    try:
        anyio.run(main)
    finally:
        session = server.eris_meta.session
        if session is not None and kwargs.get("session") is None:
            session.close()  # the temporary agenda and vault of this server go with it


def _answer_before_closing(read: Any, write: Any) -> tuple[Any, Any, tuple[Any, Any]]:
    """``(read, write)`` streams for ``Server.run`` whose read side stays open after stdin ends until
    each request read is answered, and the two coroutines that copy messages across.

    Requests are JSON-RPC messages with a ``method`` and an ``id``; an answer is a response or an
    error with that id. Nothing else is changed on the way through.
    """
    import anyio

    types, _, _ = _mcp()

    pending: set[Any] = set()
    answered = anyio.Event()
    to_server, server_reads = anyio.create_memory_object_stream(16)
    server_writes, from_server = anyio.create_memory_object_stream(16)

    async def pump_in() -> None:
        nonlocal answered
        async with to_server:
            async for item in read:
                message = getattr(item, "message", None)
                if isinstance(message, types.JSONRPCRequest):
                    pending.add(message.id)
                await to_server.send(item)
            with anyio.move_on_after(DRAIN_S):
                while pending:
                    await answered.wait()
                    answered = anyio.Event()

    async def pump_out() -> None:
        async with from_server, write:  # closing stdout ends the transport (as the SDK's loop does)
            async for item in from_server:
                await write.send(item)  # written before it counts: the read side closes once none is pending
                message = getattr(item, "message", None)
                if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
                    pending.discard(message.id)
                    answered.set()

    return server_reads, server_writes, (pump_in, pump_out)
