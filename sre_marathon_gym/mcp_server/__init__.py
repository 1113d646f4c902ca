"""The benchmark for any agent harness: an MCP server over the env's own tools (integrations layer).

`episode.McpEpisode` is one episode driven by tool calls and `end_invocation`; `server` serves it
over stdio (one process, one episode) or streamable HTTP on 127.0.0.1 (one MCP session, one
episode). Needs the `mcp` extra; nothing else in the package imports the SDK.

May import: every layer but `llm_rl` and the command line.
"""

from __future__ import annotations

from .episode import END_INVOCATION, McpEpisode, tool_specs

__all__ = ["END_INVOCATION", "McpEpisode", "serve", "tool_specs"]


def serve(
    app: str | None = None,
    mode: str = "eval",
    seed: int | None = None,
    out: str | None = "runs",
    http_port: int | None = None,
    catalog=None,
    schedule: dict | None = None,
    orca_task: str | None = None,
    label: str = "mcp",
) -> None:
    """Serve episodes of `app` (or the ORCA task `orca_task`) until the client (stdio) or Ctrl-C
    (HTTP) ends it."""
    import anyio

    from .orca_task import McpOrcaTask, orca_specs
    from .server import _require_mcp, serve_http, serve_stdio

    _require_mcp()
    if orca_task is not None:
        McpOrcaTask(orca_task).close()  # an unknown task id fails here, before serving

        def make_episode(suffix: str = ""):
            return McpOrcaTask(orca_task)

        specs = orca_specs()
    else:

        def make_episode(suffix: str = ""):
            return McpEpisode(
                app, mode, seed, out, catalog=catalog, schedule=schedule, label=label, suffix=suffix
            )

        specs = tool_specs()
    if http_port is None:
        anyio.run(serve_stdio, make_episode)
    else:
        anyio.run(serve_http, make_episode, specs, http_port)
