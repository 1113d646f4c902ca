"""One ORCA-bench task driven by MCP tool calls: its read tools and `submit_report`, judged exactly as
`OrcaRCA-v0` judges it (the calls go through that env's `step`, budget included)."""

from __future__ import annotations

import json
import threading

import gymnasium as gym

from ..orca.tools import tool_specs as orca_tool_specs
from ..orca.world_spec import world_of
from .episode import CONTEXT, NO_ARGS, specs_of


def orca_specs(source_access: bool = True) -> list[tuple[str, str, dict]]:
    """An ORCA task's tools (read tools and submit_report, as OrcaRCA-v0 lists them), then the task."""
    return [*specs_of(orca_tool_specs(source_access)), (CONTEXT, "The reported issue and when.", NO_ARGS)]


class McpOrcaTask:
    """`call(name, arguments)` -> (text, is_error), like `McpEpisode`; `close` ends the task."""

    def __init__(self, task_id: str, source_access: bool = True):
        world = world_of(task_id)  # a fresh world's task ids carry its seed
        self.env = gym.make("SREMarathon/OrcaRCA-v0", source_access=source_access, world_seed=world.seed)
        self.u = self.env.unwrapped
        obs, self.info = self.env.reset(options={"task_id": task_id})
        self.issue = obs["issue"]
        self.task_id = task_id
        self.lock = threading.Lock()
        self.judged: dict | None = None
        self.bundle = None  # an ORCA task writes no bundle: its verdict is the submit call's answer
        self.closed = False

    def specs(self) -> list[tuple[str, str, dict]]:
        return orca_specs(self.u.source_access)

    def describe(self) -> str:
        return f"ORCA task {self.task_id}"

    def call(self, name: str, arguments: dict | None) -> tuple[str, bool]:
        with self.lock:
            if self.closed or self.judged is not None:
                return f"the task is over: {json.dumps(self.judged)}", True
            if not isinstance(arguments, dict):
                return "arguments must be a JSON object", True
            if name == CONTEXT:
                return self.issue, False
            names = [n for n, _, _ in self.specs()]
            if name not in names:
                return f"unknown tool {name!r:.80}; this task's tools: {', '.join(names)}", True
            _, reward, terminated, truncated, info = self.env.step({**arguments, "tool": name})
            if terminated or truncated:
                self.judged = {k: info.get(k) for k in JUDGED}
                why = "the call budget is spent: judged as an empty report" if truncated else "report judged"
                return json.dumps({"ok": True, "tool": name, "data": {"judged": why, **self.judged}}), False
            result = info["result"]
            return json.dumps(result, default=str, separators=(",", ":")), not result.get("ok", False)

    def close(self, reason: str = "") -> None:
        with self.lock:
            if not self.closed:
                self.closed = True
                self.env.close()


JUDGED = ("score", "rca_accuracy", "hallucinate", "mode", "control_pass")  # what OrcaRCA-v0's info says
