"""The benchmark for any agent harness: an MCP server over the env's own tools (integrations layer).

`episode.McpEpisode` is one episode driven by tool calls and `end_invocation`; `server` serves it
over stdio (one process, one episode) or streamable HTTP on 127.0.0.1 (one MCP session, one
episode). Needs the `mcp` extra; nothing else in the package imports the SDK.
"""

from __future__ import annotations

from .episode import END_INVOCATION, McpEpisode, tool_specs

__all__ = ["END_INVOCATION", "McpEpisode", "serve", "tool_specs"]


def serve(
    app: str,
    mode: str = "eval",
    seed: int | None = None,
    out: str | None = "runs",
    http_port: int | None = None,
    catalog=None,
    schedule: dict | None = None,
) -> None:
    """Serve episodes of `app` until the client (stdio) or Ctrl-C (HTTP) ends it."""
    import anyio

    from .server import _require_mcp, serve_http, serve_stdio

    _require_mcp()

    def make_episode() -> McpEpisode:
        return McpEpisode(app, mode, seed, out, catalog=catalog, schedule=schedule)

    if http_port is None:
        anyio.run(serve_stdio, make_episode)
    else:
        anyio.run(serve_http, make_episode, http_port)
