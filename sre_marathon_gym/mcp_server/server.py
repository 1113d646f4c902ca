"""The benchmark as an MCP server (the official `mcp` SDK's low-level `Server`, so the tools keep
their own JSON Schemas): over stdio, one process is one episode; over streamable HTTP on
127.0.0.1, each MCP session is one episode, created on its first call.

Errors a harness makes (unknown tool, malformed arguments, a forbidden operation, a call after
the budget) come back as tool results with ``isError``, never as protocol errors, so a session is
never dropped for them. A session that ends before the run does (the client disconnects, or the
server stops) is sealed INCOMPLETE.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import Any

from .. import __version__
from .episode import McpEpisode


def _require_mcp() -> Any:
    try:
        import mcp.types as types
        from mcp.server import Server
    except ImportError:
        from ..errors import ConfigurationError

        raise ConfigurationError(
            "the MCP server needs the mcp extra: pip install 'sre-marathon-gym[mcp]'"
        ) from None
    return types, Server


def build_server(episode_for: Callable[[Any], McpEpisode], specs: list[tuple[str, str, dict]]) -> Any:
    """A `Server` listing `specs` (name, description, JSON Schema) whose calls go to `episode_for(ctx)`."""
    types, Server = _require_mcp()
    tools = [types.Tool(name=n, description=d, input_schema=s) for n, d, s in specs]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        text, is_error = episode_for(ctx).call(params.name, params.arguments or {})
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server("sre-marathon", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(make_episode: Callable[[], McpEpisode]) -> None:
    """One episode for the process; sealed incomplete if the client leaves before its end."""
    from mcp.server.stdio import stdio_server

    episode = make_episode()
    server = build_server(lambda ctx: episode, episode.specs())
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        saved = episode.close("the MCP client closed the stdio session before the run's end")
        if saved is not None:
            print(f"incomplete run sealed in {saved}", file=sys.stderr, flush=True)


class _Sessions:
    """HTTP: one episode per MCP session id, closed (sealed) when its session's connection ends."""

    def __init__(self, make_episode: Callable[[], McpEpisode]):
        self.make_episode = make_episode
        self.episodes: dict[str, McpEpisode] = {}

    def __call__(self, ctx: Any) -> McpEpisode:
        request = getattr(ctx, "request", None)
        key = request.headers.get("mcp-session-id") if request is not None else None
        key = key or "default"
        if key not in self.episodes:
            self.episodes[key] = episode = self.make_episode()
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
    make_episode: Callable[[], McpEpisode], specs: list[tuple[str, str, dict]], port: int = 0
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
