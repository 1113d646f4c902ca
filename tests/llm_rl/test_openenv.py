"""The OpenEnv adapter: a scripted policy plays short episodes of train-split rows in-process and
over OpenEnv's WebSocket protocol; its rewards sum to the recorded run's Marathon-Score before
clipping at 0 (the env's reward, `MarathonReward`); an ORCA task's reward is the judge's score."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

pytest.importorskip("openenv", reason="the openenv extra (in the test extra)")

from sre_marathon_gym.llm_rl import orca_rows, train_rows  # noqa: E402
from sre_marathon_gym.llm_rl.openenv_env import (  # noqa: E402
    MarathonToolEnv,
    OrcaToolEnv,
    ToolCall,
    marathon_app,
)
from sre_marathon_gym.llm_rl.scripted import alert_grouping_episode  # noqa: E402
from sre_marathon_gym.recording.rescoring import score_bundle  # noqa: E402
from sre_marathon_gym.rllib.env_creation import which_split  # noqa: E402

SHORT = {"intensity": 1.0, "injection_minutes": 10, "observation_minutes": 4}


def scripted_episode(step) -> list[float]:
    """The package's scripted policy over `step(ToolCall)`."""
    return alert_grouping_episode(lambda tool, args: step(ToolCall(tool=tool, arguments=args)))


def test_rewards_sum_to_the_recorded_score_over_two_episodes(tmp_path):
    rows = train_rows("online_boutique", 2)
    assert all(which_split(r["seed"]) == "train" for r in rows) and rows[0]["seed"] != rows[1]["seed"]
    env = MarathonToolEnv("online_boutique", out=str(tmp_path), **SHORT)
    totals = []
    for row in rows:
        first = env.reset(seed=row["seed"])
        assert "Alert history (cumulative)" in first.text and first.reward == 0 and not first.done
        rewards = scripted_episode(env.step)
        (bundle,) = tmp_path.glob(f"*-mcp-{row['seed']}.bundle")
        assert env.episode.bundle == bundle
        card = score_bundle(bundle)[1]
        assert sum(rewards) == pytest.approx(card.marathon_score_unclipped, abs=1e-9)
        assert env.state.step_count == len(rewards)
        totals.append(card.marathon_score_unclipped)
    assert all(t != 0 for t in totals), totals  # credit and penalties both move: not 0 == 0
    bad = env.step(ToolCall(tool="get_alerts", arguments={}))
    assert bad.is_error and "episode is over" in bad.text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_same_over_openenvs_websocket_protocol(tmp_path):
    import uvicorn
    from openenv.core.generic_client import GenericEnvClient

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            marathon_app("online_boutique", out=str(tmp_path), **SHORT), port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    seed = train_rows("online_boutique", 1)[0]["seed"]
    try:
        with GenericEnvClient(base_url=f"http://127.0.0.1:{port}").sync() as client:
            client.reset(seed=seed)

            def step(action: ToolCall):
                result = client.step(action.model_dump(exclude={"metadata"}))
                obs = result.observation
                return _Obs(obs, result)

            rewards = scripted_episode(step)
    finally:
        server.should_exit = True
        thread.join(30)
    (bundle,) = tmp_path.glob(f"*-mcp-{seed}.bundle")
    assert sum(rewards) == pytest.approx(score_bundle(bundle)[1].marathon_score_unclipped, abs=1e-9)


class _Obs:
    """A client step result seen as the in-process observation."""

    def __init__(self, obs, result):
        get = obs.get if isinstance(obs, dict) else lambda k, d=None: getattr(obs, k, d)
        self.text, self.is_error = get("text", ""), get("is_error", False)
        self.reward, self.done = result.reward or 0.0, result.done


def test_an_orca_task_pays_the_judges_score():
    from sre_marathon_gym.agents.orca_baselines import OrcaOracleAgent
    from sre_marathon_gym.orca.episode import Episode
    from sre_marathon_gym.orca.tasks import orca_tasks

    rows = orca_rows("easy")
    task = next(t for t in orca_tasks() if t.task_id in {r["task_id"] for r in rows} and not t.is_control)
    env = OrcaToolEnv()
    issue = env.reset(task_id=task.task_id)
    assert "reported" in issue.text and issue.reward == 0
    assert env.step(ToolCall(tool="get_topology")).reward == 0
    report = OrcaOracleAgent().investigate_with_truth(Episode(task, True)).model_dump(mode="json")
    judged = env.step(ToolCall(tool="submit_report", arguments={"report": report}))
    assert judged.done and judged.reward == json.loads(judged.text)["data"]["score"] > 0
