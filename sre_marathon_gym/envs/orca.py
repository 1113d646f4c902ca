"""OrcaRcaEnv: ORCA-bench's read-only root-cause analysis as a Gymnasium environment."""

from __future__ import annotations

import string
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..core.errors import ConfigurationError, UnknownNameError
from ..orca import DAY_S
from ..orca.episode import Episode
from ..orca.report import RcaReport
from ..orca.schedule import MAX_DAYS
from ..orca.tasks import OrcaTask, orca_tasks, task_key
from ..orca.tools import MAX_ACTION_CHARS, parse_orca_call, tool_names, tool_specs
from ..orca.world_spec import WorldSpec
from ..tools.models import ToolResult

# a sorted string, not a set: `spaces.Text` indexes its characters in the order given, and a set's order
# changes with the process's hash seed (seeded samples and flattened observations would too)
CHARSET = "".join(sorted(set(string.printable + "±–—→’“”é")))
_IN_CHARSET = frozenset(CHARSET)  # for membership tests
MAX_ISSUE_CHARS = 4096
MAX_TIME_S = float(MAX_DAYS * DAY_S)
MAX_CALLS = 1000  # the budget Box's fixed upper bound (spaces are fixed per env id, whatever max_calls is)
RESET_OPTIONS = ("task_id", "task_index")


class OrcaRcaEnv(gym.Env):
    """
    ## Description
    ORCA-bench on the embedded simulator: six simulated days of the Astronomy Shop under a daily
    load wave with 13 feature-flag scenarios (five scenario types). Each episode is one of the
    1,079 tasks: a user complaint at some specificity, reported some time after the incident; the
    agent investigates metrics, logs, traces and (optionally) source up to the task's telemetry
    horizon, then submits an RCA report that a deterministic judge scores.

    ## Action Space
    `Text`: one tool call as JSON, e.g. `{"tool": "query_metrics", "metric": ...}`. Tools:
    query_metrics, search_logs, get_traces, get_topology, read_source (unless
    `source_access=False`) and submit_report (`{"tool": "submit_report", "report": {...}}`).
    Malformed calls return a structured error and cost one call of the budget.

    ## Observation Space
    `Dict`: `issue` (the instruction text with the complaint and report time), `time_s` (the
    current simulated time, seconds) and `budget` (tool calls left). Tool results are in
    `info["result"]`.

    ## Rewards
    0 until the report is judged; then the task reward: RCA depth / 3 on incident tasks, 1 or 0
    on control tasks (no incident claimed inside the quiet window).

    ## Episode End
    Terminates on submit_report. Truncates when the budget is spent (judged as an empty report).

    ## Arguments
    `source_access` (False removes read_source: the telemetry-only ablation), `max_calls` (tool
    budget, 1..1000; the `budget` Box is bounded by 1000 whatever it is), `task_ids` (restrict the
    task pool; non-empty), `world_seed` (None: the published schedule's 1,079 tasks; an integer: the
    tasks of a fresh six-day world drawn by that seed from the published schedule's distribution,
    with no published sibling to copy). Bad values raise `ConfigurationError`. `reset(seed=...)` picks a task
    from the pool; `options={"task_id": ...}` or `{"task_index": i}` picks one explicitly. `info`
    names the task by `task_key` (a hash: task ids spell the authored flag).

    ## Version History
    - v0: initial release.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        source_access: bool = True,
        max_calls: int = 40,
        task_ids: list[str] | None = None,
        world_seed: int | None = None,
    ):
        if not isinstance(source_access, (bool, np.bool_)):
            raise ConfigurationError(f"source_access must be True or False, got {source_access!r}")
        if isinstance(max_calls, (bool, np.bool_)) or not isinstance(max_calls, (int, np.integer)):
            raise ConfigurationError(
                f"max_calls must be an integer, got {type(max_calls).__name__} {max_calls!r}"
            )
        if not 1 <= max_calls <= MAX_CALLS:
            raise ConfigurationError(f"max_calls must be in 1..{MAX_CALLS}, got {max_calls}")
        self.source_access = bool(source_access)
        self.max_calls = int(max_calls)
        self.world = WorldSpec(world_seed)  # checks the seed
        tasks = orca_tasks(6, self.world)
        if task_ids is not None:
            if isinstance(task_ids, str) or not all(isinstance(i, str) for i in task_ids):
                raise ConfigurationError("task_ids must be a list of task id strings")
            if not task_ids:
                raise ConfigurationError("task_ids must name at least one task (or be None for all 1,079)")
            by_id = {t.task_id: t for t in tasks}
            missing = [i for i in task_ids if i not in by_id]
            if missing:
                raise UnknownNameError("ORCA task", missing[0], by_id)
            tasks = tuple(by_id[i] for i in task_ids)
        self.tasks: tuple[OrcaTask, ...] = tasks
        self.observation_space = spaces.Dict(
            {
                "issue": spaces.Text(max_length=MAX_ISSUE_CHARS, min_length=0, charset=CHARSET),
                "time_s": spaces.Box(0.0, MAX_TIME_S, shape=(1,), dtype=np.float64),
                "budget": spaces.Box(0.0, float(MAX_CALLS), shape=(1,), dtype=np.float64),
            }
        )
        self.action_space = spaces.Text(max_length=MAX_ACTION_CHARS, min_length=1, charset=CHARSET)
        self.episode: Episode | None = None
        self.left = self.max_calls
        self.done = False

    @property
    def tool_specs(self) -> list[dict]:
        return tool_specs(self.source_access)

    def _obs(self) -> dict:
        assert self.episode is not None
        text = "".join(ch if ch in _IN_CHARSET else "?" for ch in self.episode.issue)[:MAX_ISSUE_CHARS]
        return {
            "issue": text,
            "time_s": np.array([float(self.episode.task.current_s)]),
            "budget": np.array([float(min(max(self.left, 0), MAX_CALLS))]),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        options = options or {}
        if not isinstance(options, dict):
            raise ConfigurationError(f"options must be a dict, got {type(options).__name__}")
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            raise ConfigurationError(f"unknown reset option(s) {unknown}; known: {list(RESET_OPTIONS)}")
        if "task_id" in options and "task_index" in options:
            raise ConfigurationError("pass task_id or task_index, not both")
        if "task_id" in options:
            if not isinstance(options["task_id"], str):
                raise ConfigurationError(f"task_id must be a string, got {type(options['task_id']).__name__}")
            match = [t for t in self.tasks if t.task_id == options["task_id"]]
            if not match:
                raise UnknownNameError("ORCA task", str(options["task_id"]), [t.task_id for t in self.tasks])
            task = match[0]
        elif "task_index" in options:
            i = options["task_index"]
            if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
                raise ConfigurationError(f"task_index must be an integer, got {type(i).__name__} {i!r}")
            if not -len(self.tasks) <= i < len(self.tasks):
                raise ConfigurationError(f"task_index must be in 0..{len(self.tasks) - 1}, got {i}")
            task = self.tasks[int(i)]
        else:
            task = self.tasks[int(self.np_random.integers(len(self.tasks)))]
        self.episode = Episode(task, self.source_access, world=self.world)
        self.left = self.max_calls
        self.done = False
        return self._obs(), {
            "task_key": task_key(task),
            "difficulty": task.difficulty,
            "tools": list(tool_names(self.source_access)),
        }

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        if self.episode is None or self.done:
            raise ConfigurationError("call reset() before step() (the episode is over)")
        self.left -= 1
        model, err = (
            parse_orca_call(action, self.source_access) if not _cheap_invalid(action) else (None, _not_json())
        )
        info: dict[str, Any] = {"task_key": task_key(self.episode.task)}
        if err is not None:
            info["result"] = err.model_dump()
        elif model.tool == "submit_report":
            return self._finish(model.report, info, truncated=False)
        else:
            info["result"] = self.episode.tools.call(model).model_dump()
        if self.left <= 0:
            return self._finish(RcaReport(), info, truncated=True)
        return self._obs(), 0.0, False, False, info

    def _finish(self, report: RcaReport, info: dict, truncated: bool) -> tuple[dict, float, bool, bool, dict]:
        assert self.episode is not None
        score = self.episode.score(report)
        self.done = True
        info.update(
            score=score.reward,
            rca_accuracy=score.rca_accuracy,
            hallucinate=score.hallucinate,
            mode=score.mode,
            control_pass=score.control_pass,
        )
        return self._obs(), float(score.reward), not truncated, truncated, info


def _cheap_invalid(action: Any) -> bool:
    """Random text is rejected without building the tools (and without simulating the days)."""
    if isinstance(action, str):
        s = action.lstrip()
        return not s.startswith("{")
    return False


def _not_json() -> ToolResult:
    return ToolResult.fail(
        "?", "invalid_arguments", 'a tool call is a JSON object, e.g. {"tool": "get_topology"}'
    )
