"""SREMarathon/OrcaRCA-v0: checker, fixed spaces, task selection, structured errors, episode end."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import sre_marathon_gym  # noqa: F401  (registers the ids)
from sre_marathon_gym.core.errors import ConfigurationError, UnknownNameError
from sre_marathon_gym.envs import ORCA_ENV_IDS
from sre_marathon_gym.envs.orca import MAX_CALLS, OrcaRcaEnv, task_key
from sre_marathon_gym.orca.tools import MAX_ACTION_CHARS


@pytest.fixture(scope="module")
def env():
    e = gym.make("SREMarathon/OrcaRCA-v0", max_calls=3)
    yield e.unwrapped
    e.close()


def test_registered_and_checker_passes():
    assert "SREMarathon/OrcaRCA-v0" in ORCA_ENV_IDS and "SREMarathon/OrcaRCA-v0" in gym.registry
    e = gym.make("SREMarathon/OrcaRCA-v0")
    check_env(e.unwrapped, skip_render_check=True)


def test_reset_picks_tasks_by_seed_or_option_and_hides_ground_truth(env):
    obs1, info1 = env.reset(seed=7)
    obs2, info2 = env.reset(seed=7)
    assert info1["task_key"] == info2["task_key"] and obs1["issue"] == obs2["issue"]
    ctl = next(t for t in env.tasks if t.is_control)
    obs, info = env.reset(options={"task_id": ctl.task_id})
    assert info["task_key"] == task_key(ctl) and "task_id" not in info and env.observation_space.contains(obs)
    assert obs["time_s"][0] == ctl.current_s and obs["budget"][0] == 3
    assert "Failure" not in obs["issue"].split("issue was reported")[0]  # no flag names before the complaint
    with pytest.raises(UnknownNameError):
        env.reset(options={"task_id": "nope"})


def test_bad_calls_are_structured_errors_and_the_budget_truncates(env):
    ctl = next(t for t in env.tasks if t.is_control)
    env.reset(options={"task_id": ctl.task_id})
    obs, r, term, trunc, info = env.step("not json")
    assert not (term or trunc) and info["result"]["ok"] is False and obs["budget"][0] == 2
    obs, r, term, trunc, info = env.step(json.dumps({"tool": "rollback", "service": "ad"}))
    assert info["result"]["error"]["code"] == "unknown_tool"
    obs, r, term, trunc, info = env.step(
        json.dumps({"tool": "submit_report", "report": {"root_causes": [{}]}})
    )
    assert (
        trunc and not term and info["mode"] == "control_empty" and r == 1.0
    )  # out of calls: an empty report


def test_submit_empty_report_on_an_incident_scores_zero(env):
    inc = next(t for t in env.tasks if not t.is_control)
    env.reset(options={"task_id": inc.task_id})
    obs, r, term, trunc, info = env.step(json.dumps({"tool": "submit_report", "report": {}}))
    assert term and r == 0.0 and info["mode"] == "empty_report" and info["rca_accuracy"] == 0
    with pytest.raises(Exception):
        env.step(json.dumps({"tool": "get_topology"}))


def test_hostile_actions_are_structured_errors():
    env = OrcaRcaEnv(max_calls=4)
    ctl = next(t for t in env.tasks if t.is_control)
    env.reset(options={"task_id": ctl.task_id})
    deep = '{"tool": "submit_report", "report": ' + "[" * 100_000 + "]" * 100_000 + "}"
    obs, r, term, trunc, info = env.step(deep)  # json.loads raises RecursionError at this depth
    assert not (term or trunc) and info["result"]["error"]["code"] == "invalid_arguments"
    assert (
        "characters" in info["result"]["error"]["message"]
    )  # over MAX_ACTION_CHARS: rejected before parsing
    nested = '{"tool": "submit_report", "report": ' + "[" * 20_000 + "]" * 20_000 + "}"
    assert len(nested) <= MAX_ACTION_CHARS
    obs, r, term, trunc, info = env.step(nested)
    assert not (term or trunc) and "nested too deeply" in info["result"]["error"]["message"]
    obs, r, term, trunc, info = env.step(
        json.loads('{"tool": "get_topology"}') | {"x": nested}
    )  # a dict action
    assert not (term or trunc) and info["result"]["error"]["code"] == "invalid_arguments"
    inf = {
        "tool": "submit_report",
        "report": {
            "summary": "x",
            "root_causes": [{"flag": "adFailure", "mechanism": "errors", "incident_start_s": 1e400}],
        },
    }
    obs, r, term, trunc, info = env.step(json.dumps(inf).replace("Infinity", "1e400"))
    assert (
        trunc and info["result"]["error"]["code"] == "invalid_arguments"
    )  # rejected, not judged; budget spent


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"task_ids": []}, "at least one task"),
        ({"max_calls": "3"}, "integer"),
        ({"max_calls": 0}, "1..1000"),
        ({"max_calls": MAX_CALLS + 1}, "1..1000"),
        ({"max_calls": True}, "integer"),
        ({"task_ids": "d1"}, "list"),
    ],
)
def test_bad_constructor_arguments_raise_configuration_errors(kwargs, match):
    with pytest.raises(ConfigurationError, match=match):
        OrcaRcaEnv(**kwargs)


def test_bad_reset_options_raise_configuration_errors(env):
    for options, match in (
        ({"task_index": "x"}, "integer"),
        ({"task_index": 10**6}, "task_index must be in"),
        ({"task_id": 3}, "string"),
        ({"tsak_id": "a"}, "unknown reset option"),
    ):
        with pytest.raises(ConfigurationError, match=match):
            env.reset(options=options)
    obs, _ = env.reset(options={"task_index": 0})
    assert obs["issue"]


def test_budget_space_does_not_depend_on_max_calls():
    a, b = OrcaRcaEnv(max_calls=3), OrcaRcaEnv(max_calls=200)
    assert a.observation_space == b.observation_space and a.observation_space["budget"].high[0] == MAX_CALLS
    obs, _ = b.reset(options={"task_index": 0})
    assert b.observation_space.contains(obs) and obs["budget"][0] == 200
