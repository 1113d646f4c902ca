"""OpenEnv environments: SRE-Marathon episodes and ORCA-bench tasks as multi-turn tool use.

An action is one tool call (``tool`` and ``arguments``; ``end_invocation`` ends the invocation and
advances the clock); the observation is the call's result as the model reads it, with ``done`` and
``reward``. SRE-Marathon's reward is the env's own: the Marathon-Score increment of each interval
(paid at ``end_invocation``, 0 for every other call), so an episode's rewards sum to the
Marathon-Score of its recorded run before it is clipped at 0 (guesses cost points). ORCA's is
the judge's task reward when the report is submitted (or the budget runs out).
`reset(seed=...)` takes a row of `rows.train_rows` (`orca_rows` for ORCA: ``reset(task_id=...)``).
"""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

from ..core.errors import ConfigurationError
from ..mcp_server.episode import McpEpisode
from ..mcp_server.orca_task import McpOrcaTask


class ToolCall(Action):
    """One tool call: a benchmark tool, ``invocation_context`` or ``end_invocation``."""

    tool: str
    arguments: dict[str, Any] = {}


class ToolResultText(Observation):
    """What the model reads back, and whether the call failed."""

    text: str = ""
    is_error: bool = False


class _ToolEnv(Environment[ToolCall, ToolResultText, State]):
    SUPPORTS_CONCURRENT_SESSIONS = True  # every instance owns its own simulator

    def __init__(self) -> None:
        super().__init__()
        self.episode: Any = None
        self._state = State()

    @property
    def state(self) -> State:
        return self._state

    def _begin(self, episode: Any, episode_id: str | None, text: str) -> ToolResultText:
        if self.episode is not None:
            self.episode.close("reset before the end")
        self.episode = episode
        self._state = State(episode_id=episode_id or uuid4().hex, step_count=0)
        return ToolResultText(text=text, reward=0.0, done=False)

    def step(self, action: ToolCall, timeout_s: float | None = None, **kwargs: Any) -> ToolResultText:
        if self.episode is None:
            raise ConfigurationError("call reset() before step()")
        self._state.step_count += 1
        paid = self._paid()
        text, is_error = self.episode.call(action.tool, action.arguments)
        return ToolResultText(text=text, is_error=is_error, reward=self._paid() - paid, done=self._done())

    def close(self) -> None:
        if self.episode is not None:
            self.episode.close("the environment closed")


def _known_app(app: Any) -> str:
    from ..catalog import APPS

    if app not in APPS:
        raise ConfigurationError(f"unknown app {app!r:.80}; one of {', '.join(APPS)}")
    return app


class MarathonToolEnv(_ToolEnv):
    """SRE-Marathon: one train-mode episode of `app` per reset (a reward every interval is for
    training; evaluate on the leaderboard protocol with `sre-marathon mcp` or `evaluate`)."""

    def __init__(self, app: str = "online_boutique", out: str | None = None, **schedule: Any):
        super().__init__()
        self.app, self.out, self.schedule = _known_app(app), out, schedule

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> ToolResultText:
        app = _known_app(kwargs.pop("app", self.app))
        if kwargs:
            raise ConfigurationError(
                f"unknown reset option(s) {sorted(kwargs)}; known: seed, episode_id, app"
            )
        episode = McpEpisode(app, "train", seed, self.out, schedule=self.schedule)
        return self._begin(episode, episode_id, episode.context())

    def _paid(self) -> float:
        return sum(self.episode.rewards)

    def _done(self) -> bool:
        return self.episode.over


class OrcaToolEnv(_ToolEnv):
    """ORCA-bench: one task per reset (``reset(task_id=...)``), judged when the report is submitted."""

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> ToolResultText:
        task_id = kwargs.pop("task_id", None)
        if not isinstance(task_id, str) or kwargs:
            raise ConfigurationError("reset(task_id=...) names the ORCA task (llm_rl.orca_rows lists them)")
        episode = McpOrcaTask(task_id)
        return self._begin(episode, episode_id, episode.issue)

    def _paid(self) -> float:
        return float(self.episode.judged["score"]) if self.episode.judged else 0.0

    def _done(self) -> bool:
        return self.episode.judged is not None


def marathon_app(app: str = "online_boutique", **settings: Any):
    """OpenEnv's FastAPI app over `MarathonToolEnv`, for its WebSocket sessions (``/ws``: one env per
    connection). Its plain-HTTP ``/reset`` and ``/step`` make a fresh env per request, which cannot
    hold a multi-turn episode: use the WebSocket client (``GenericEnvClient(...).sync()``)."""
    from openenv.core.env_server.http_server import create_fastapi_app

    return create_fastapi_app(lambda: MarathonToolEnv(app, **settings), ToolCall, ToolResultText)
