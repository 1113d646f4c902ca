"""One SRE-Marathon episode driven by tool calls from outside the process (an MCP session).

Why a class of its own and not an `Agent`: `run_episode` calls the agent; here the agent calls us.
The protocol around the benchmark's tools is the paper's adapter's: the harness makes tool calls
within an invocation, then calls `end_invocation`, which advances the simulated clock by one
interval and returns what a fresh invocation sees (the instructions, the cumulative alert history
and the workspace's incidents: the same text the built-in LLM adapters give their model). The
tools are the env's own (`env.unwrapped.call_tool`: the tool runner, the policy layer, the
workspace and the recorder), so a call here is recorded exactly as in-process. No score is shown
before the end (rules v3); the sealed bundle's path is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..agents.llm.context import alert_history, context_view, incident_lines, instructions, render_result
from ..episode_runner import make_marathon_env, save_incomplete
from ..errors import ConfigurationError
from ..run_record import Usage
from ..tools.models import ALL_TOOLS, TOOL_NAMES, ToolResult

END_INVOCATION = "end_invocation"
CONTEXT = "invocation_context"
AGENT_NAME = "mcp"


def tool_specs() -> list[tuple[str, str, dict]]:
    """(name, description, JSON Schema of the arguments) of every benchmark tool, then
    `end_invocation`: the schemas the tools already validate against, without the ``tool`` tag."""
    out = []
    for name, model in zip(TOOL_NAMES, ALL_TOOLS):
        schema = model.model_json_schema()
        schema["properties"].pop("tool", None)
        if "required" in schema:
            schema["required"] = [r for r in schema["required"] if r != "tool"]
        out.append((name, (model.__doc__ or "").strip(), schema))
    out.append(
        (
            CONTEXT,
            "What this invocation sees (instructions, cumulative alert history, incidents), as "
            f"{END_INVOCATION} returns it for the next one: call it once at the start of the episode.",
            {"type": "object", "properties": {}, "additionalProperties": False},
        )
    )
    out.append(
        (
            END_INVOCATION,
            "End this invocation: the simulated clock advances by one interval and the next "
            "invocation's context (instructions, cumulative alert history, incidents) is returned. "
            "After the last interval the run is sealed and its bundle's path returned.",
            {"type": "object", "properties": {}, "additionalProperties": False},
        )
    )
    return out


class McpEpisode:
    """One episode: `call` runs a tool or ends an invocation; `close` seals what was recorded.

    `budget_s` (eval mode: the leaderboard's per-invocation budget) is measured on the wall clock
    from the start of the invocation, as the LLM adapters measure it; a call after it is refused
    with a tool error until `end_invocation`, and the invocation is booked as timed out."""

    def __init__(
        self,
        app: str,
        mode: str = "eval",
        seed: int | None = None,
        out: str | Path | None = "runs",
        catalog: Any = None,
        schedule: dict | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        if mode == "eval" and seed is not None:
            raise ConfigurationError("--mode eval runs the leaderboard seed; use --mode train for --seed")
        self.env = make_marathon_env(app, mode, catalog, **(schedule or {}))
        self.u = self.env.unwrapped
        self.out = Path(out) if out is not None else None
        self.usage = Usage()
        self.clock = clock
        self.budget_s = float(self.u.catalog.leaderboard.agent_budget_s) if mode == "eval" else None
        self.lock = threading.Lock()
        self.bundle: Path | None = None
        self.rewards: list[float] = []  # the env's reward at each end_invocation (for RL, never shown)
        self.over = False  # the run reached its end
        self.closed = False
        _, info = self.env.reset(seed=seed if mode == "train" else None)
        self.invocation = int(info.get("invocation", 0))
        self.started = self.clock()

    # ------------------------------------------------------------------------------ the protocol
    def specs(self) -> list[tuple[str, str, dict]]:
        return tool_specs()

    def describe(self) -> str:
        return f"{self.u.app.app} seed {self.u.seed_used} ({self.u.mode})"

    def context(self) -> str:
        """What a fresh invocation sees."""
        now, alerts, incidents = context_view(self.u.call_tool)
        return "\n\n".join(
            [
                instructions(self.u.app.app, self.u.interval_s, now),
                f"Invocation {self.invocation}. Alert history (cumulative):\n" + alert_history(alerts, now),
                "Incidents so far:\n" + incident_lines(incidents),
                f"Call {END_INVOCATION} when you are done with this invocation.",
            ]
        )

    def call(self, name: str, arguments: dict | None) -> tuple[str, bool]:
        """Run one call; returns (text, is_error). Never raises for the caller's mistakes."""
        with self.lock:
            if self.closed or self.over:
                where = f"; its bundle: {self.bundle}" if self.bundle else ""
                return f"the episode is over{where}", True
            if not isinstance(arguments, dict):
                return "arguments must be a JSON object", True
            if name == END_INVOCATION:
                return self._end_invocation(), False
            if name == CONTEXT:
                return self.context(), False
            if name not in TOOL_NAMES:
                return (
                    f"unknown tool {name!r:.80}; list the tools to see the {len(TOOL_NAMES) + 2} there are",
                    True,
                )
            if self.budget_s is not None and self.clock() - self.started > self.budget_s:
                if self.invocation not in self.usage.timed_out_invocations:
                    self.usage.timed_out_invocations.append(self.invocation)
                return (
                    f"this invocation's {self.budget_s:g} s budget is spent; call {END_INVOCATION}",
                    True,
                )
            result: ToolResult = self.u.call_tool({**arguments, "tool": name})
            return render_result(result), not result.ok

    def _end_invocation(self) -> str:
        _, reward, terminated, truncated, info = self.env.step(None)
        self.rewards.append(float(reward))
        self.invocation = int(info.get("invocation", self.invocation + 1))
        self.started = self.clock()
        if terminated or truncated:
            self.over = True
            self.bundle = self._seal()
            where = f"sealed in {self.bundle}" if self.bundle else "not saved (no --out)"
            return f"The run is over (t={self.u.run_s:g} s): its record is {where}."
        return self.context()

    def _seal(self) -> Path | None:
        from ..bundle import write_bundle
        from ..episode_runner import bundle_stem_of

        if self.out is None:
            return None
        record = self.u.record()
        record.usage = self.usage.model_copy()
        self.out.mkdir(parents=True, exist_ok=True)
        return write_bundle(
            self.out / f"{bundle_stem_of(record.manifest, AGENT_NAME)}.bundle",
            record,
            store=self.u.metric_store,
            catalog=self.u.catalog,
            extra={"agent_name": AGENT_NAME},
        )

    def close(self, reason: str = "the MCP session closed") -> Path | None:
        """Seal a run that did not reach its end as INCOMPLETE (once); the env is closed."""
        with self.lock:
            if self.closed:
                return None
            self.closed = True
            saved = None
            if not self.over and self.out is not None:
                from ..episode_runner import bundle_stem_of

                stem = bundle_stem_of(self.u.record().manifest, AGENT_NAME)
                holder = _UsageHolder(self.usage)
                saved = save_incomplete(
                    self.env,
                    holder,
                    self.u.catalog,
                    self.out / f"{stem}.incomplete.bundle",
                    ConnectionAbortedError(reason),
                    agent_name=AGENT_NAME,
                )
            self.env.close()
            return saved


class _UsageHolder:
    """What `save_incomplete` reads of an agent: its usage."""

    def __init__(self, usage: Usage):
        self.usage = usage
