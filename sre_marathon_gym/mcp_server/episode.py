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
from ..core.errors import ConfigurationError
from ..core.run_record import Usage
from ..evaluation.episode_runner import make_marathon_env, run_stem, save_incomplete, seal_run
from ..tools.models import TOOL_NAMES, ToolResult, openai_tools

END_INVOCATION = "end_invocation"
CONTEXT = "invocation_context"
AGENT_NAME = "mcp"


def specs_of(functions: list[dict]) -> list[tuple[str, str, dict]]:
    """(name, description, JSON Schema) of OpenAI-style function specs."""
    return [
        (f["function"]["name"], f["function"]["description"], f["function"]["parameters"]) for f in functions
    ]


NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def tool_specs() -> list[tuple[str, str, dict]]:
    """Every benchmark tool with the schema it validates against (`tools.models.openai_tools`), then
    the protocol's two tools."""
    return [
        *specs_of(openai_tools()),
        (
            CONTEXT,
            "What this invocation sees (instructions, cumulative alert history, incidents), as "
            f"{END_INVOCATION} returns it for the next one: call it once at the start of the episode.",
            NO_ARGS,
        ),
        (
            END_INVOCATION,
            "End this invocation: the simulated clock advances by one interval and the next "
            "invocation's context (instructions, cumulative alert history, incidents) is returned. "
            "After the last interval the run is sealed and its bundle's path returned.",
            NO_ARGS,
        ),
    ]


def check_mode_seed(mode: str, seed: int | None) -> None:
    if mode == "eval" and seed is not None:
        raise ConfigurationError("--mode eval runs the leaderboard seed; use --mode train for --seed")


class McpEpisode:
    """One episode: `call` runs a tool or ends an invocation; `close` seals what was recorded.

    `budget_s` (eval mode: the leaderboard's per-invocation budget) is measured on the wall clock
    from the start of the invocation (the first call of the episode for the first one), as the LLM
    adapters measure it; a call after it is refused with a tool error until `end_invocation`, and an
    invocation that overran (a call refused, or `end_invocation` itself late) is booked as timed out.
    `label` names the harness in the bundle (``<app>-<label>-<seed><suffix>.bundle``)."""

    def __init__(
        self,
        app: str,
        mode: str = "eval",
        seed: int | None = None,
        out: str | Path | None = "runs",
        catalog: Any = None,
        schedule: dict | None = None,
        clock: Callable[[], float] = time.monotonic,
        label: str = AGENT_NAME,
        suffix: str = "",
    ):
        check_mode_seed(mode, seed)
        self.label, self.suffix = label, suffix
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
        self.started: float | None = None  # the invocation's wall-clock start (None: no call yet)

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
            if self.started is None:
                self.started = self.clock()
            if name == END_INVOCATION:
                return self._end_invocation(), False
            if name not in TOOL_NAMES and name != CONTEXT:
                return (
                    f"unknown tool {name!r:.80}; list the tools to see the {len(TOOL_NAMES) + 2} there are",
                    True,
                )
            if self._overran():
                return (
                    f"this invocation's {self.budget_s:g} s budget is spent; call {END_INVOCATION}",
                    True,
                )
            if name == CONTEXT:
                return self.context(), False
            result: ToolResult = self.u.call_tool({**arguments, "tool": name})
            return render_result(result), not result.ok

    def _overran(self) -> bool:
        """Past the budget (booked once per invocation)."""
        if self.budget_s is None or self.started is None or self.clock() - self.started <= self.budget_s:
            return False
        if self.invocation not in self.usage.timed_out_invocations:
            self.usage.timed_out_invocations.append(self.invocation)
        return True

    def _end_invocation(self) -> str:
        self._overran()
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

    def _stem(self) -> str:
        return run_stem(self.u.app.app, self.label, self.u.seed_used) + self.suffix

    def _seal(self) -> Path | None:
        if self.out is None:
            return None
        record = self.u.record()
        record.usage = self.usage.model_copy()
        return seal_run(self.u, record, self.out / f"{self._stem()}.bundle", {"agent_name": self.label})

    def close(self, reason: str = "the MCP session closed") -> Path | None:
        """Seal a run that did not reach its end as INCOMPLETE (once); the env is closed."""
        with self.lock:
            if self.closed:
                return None
            self.closed = True
            saved = None
            if not self.over and self.out is not None:
                saved = save_incomplete(
                    self.env,
                    _UsageHolder(self.usage),
                    self.u.catalog,
                    self.out / f"{self._stem()}.incomplete.bundle",
                    ConnectionAbortedError(reason),
                    agent_name=self.label,
                )
            self.env.close()
            return saved


class _UsageHolder:
    """What `save_incomplete` reads of an agent: its usage."""

    def __init__(self, usage: Usage):
        self.usage = usage
