"""The benchmark as an MCP server (the official `mcp` SDK's low-level `Server`, so the tools keep
their own JSON Schemas): over stdio, one process is one episode; over streamable HTTP on
127.0.0.1, each MCP session is one episode, created on its first call.

Errors a harness makes (unknown tool, malformed arguments, a forbidden operation, a call after
the budget) come back as tool results with ``isError``, never as protocol errors, so a session is
never dropped for them. A session that ends before the run does (the client disconnects, or the
server stops) is sealed INCOMPLETE.
"""

from __future__ import annotations

import itertools
import os
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

from ..core.version import __version__
from .episode import McpEpisode


def _require_mcp() -> Any:
    try:
        import mcp.types as types
        from mcp.server import Server
    except ImportError:
        from ..core.errors import ConfigurationError

        raise ConfigurationError(
            "the MCP server needs the mcp extra: pip install 'sre-marathon-gym[mcp]'"
        ) from None
    return types, Server


def build_server(episode_for: Callable[[Any], Any], specs: list[tuple[str, str, dict]]) -> Any:
    """A `Server` listing `specs` (name, description, JSON Schema) whose calls go to `episode_for(ctx)`
    (None: the request cannot have an episode, said as a tool error). A call runs in a worker thread,
    so one session's simulation does not hold up the others (their wall-clock budgets run)."""
    import anyio

    types, Server = _require_mcp()
    tools = [types.Tool(name=n, description=d, input_schema=s) for n, d, s in specs]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        episode = episode_for(ctx)
        if episode is None:
            text, is_error = NO_SESSION, True
        else:
            text, is_error = await anyio.to_thread.run_sync(episode.call, params.name, params.arguments or {})
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server("sre-marathon", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)


NO_SESSION = (
    "this server keeps one episode per MCP session: open a stateful session (the initialize "
    "handshake, protocol 2025-11-25 or earlier); a stateless request has no episode"
)


async def serve_stdio(make_episode: Callable[[], McpEpisode]) -> None:
    """One episode for the process; sealed incomplete if the client leaves before its end, or the
    process is stopped (SIGTERM, SIGINT: the stdin reader cannot be cancelled, so the run is sealed
    and the process exits at once)."""
    import anyio
    from mcp.server.stdio import stdio_server

    episode = make_episode()
    server = build_server(lambda ctx: episode, episode.specs())

    def sealed(reason: str) -> None:
        saved = episode.close(reason)
        if saved is not None:
            print(f"incomplete run sealed in {saved}", file=sys.stderr, flush=True)

    async def stop_on_signal() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                await anyio.to_thread.run_sync(sealed, "the MCP server was stopped before the run's end")
                os._exit(128 + signum)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(stop_on_signal)
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            group.cancel_scope.cancel()
    finally:
        sealed("the MCP client closed the stdio session before the run's end")


class _Sessions:
    """HTTP: one episode per MCP session id, closed (sealed) when its session's connection ends; the
    n-th session's bundle is ``...-s<n>.bundle`` (sessions of one seed never share a file)."""

    def __init__(self, make_episode: Callable[[str], McpEpisode]):
        self.make_episode = make_episode
        self.episodes: dict[str, McpEpisode] = {}
        self.numbers = itertools.count(1)

    def __call__(self, ctx: Any) -> McpEpisode | None:
        request = getattr(ctx, "request", None)
        key = request.headers.get("mcp-session-id") if request is not None else None
        if not key:
            return None
        if key not in self.episodes:
            self.episodes[key] = episode = self.make_episode(f"-s{next(self.numbers)}")
            stack = getattr(getattr(ctx.session, "_connection", None), "exit_stack", None)
            if stack is not None:  # the SDK's per-session teardown (else: sealed when the server stops)

                async def closed() -> None:
                    self._close(key, "the MCP session ended before the run's end")

                stack.push_async_callback(closed)
            print(f"session {key}: {episode.describe()} started", file=sys.stderr, flush=True)
        return self.episodes[key]

    def _close(self, key: str, reason: str) -> None:
        episode = self.episodes.pop(key, None)
        if episode is None:
            return
        saved = episode.close(reason)
        if episode.bundle is not None:
            print(f"session {key}: run sealed in {episode.bundle}", file=sys.stderr, flush=True)
        elif saved is not None:
            print(f"session {key}: incomplete run sealed in {saved}", file=sys.stderr, flush=True)

    def close_all(self) -> None:
        for key in list(self.episodes):
            self._close(key, "the MCP server stopped before the run's end")


async def serve_http(
    make_episode: Callable[[str], McpEpisode], specs: list[tuple[str, str, dict]], port: int = 0
) -> None:
    """Streamable HTTP at ``http://127.0.0.1:PORT/mcp`` (port 0: a free one, printed first)."""
    import uvicorn

    sessions = _Sessions(make_episode)
    server = build_server(sessions, specs)
    _add_stateful_discovery(server)
    app = server.streamable_http_app(host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    print(f"MCP server on http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    try:
        await uvicorn.Server(uvicorn.Config(app, log_level="warning")).serve(sockets=[sock])
    finally:
        sessions.close_all()


def _add_stateful_discovery(server: Any) -> None:
    """Answer the stateless discovery request with the handshake versions only, so clients open
    a stateful session (an episode is state) instead of one connection per request."""
    import mcp_types as types
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    async def discover(ctx: Any, params: Any) -> Any:
        return types.DiscoverResult(
            supported_versions=list(HANDSHAKE_PROTOCOL_VERSIONS), capabilities=server.get_capabilities()
        )

    server.add_request_handler("server/discover", types.RequestParams, discover)
