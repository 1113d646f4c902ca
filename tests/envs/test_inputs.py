"""Careless or hostile input to the Marathon env: each probe of the hardening issue, reproduced.

Every case must give a clear error (or a recorded invalid result) and leave a run that records,
serializes, pickles and replays.
"""

from __future__ import annotations

import json
import pickle
import shutil

import gymnasium as gym
import numpy as np
import pytest

import sre_marathon_gym  # noqa: F401  (registers the env ids)
from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.core.errors import CatalogError, ConfigurationError
from sre_marathon_gym.tools.workspace import MAX_WRITTEN_CHARS

LONG = dict(injection_minutes=20, observation_minutes=2)


@pytest.fixture
def env():
    e = gym.make("SREMarathon/OnlineBoutique-v3", **LONG)
    e.reset(seed=3)
    return e


def serializes(env) -> bool:
    json.dumps(env.unwrapped.record().model_dump(mode="json"))
    return True


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(seed=True), "seed must be an integer"),
        (dict(seed=1.0), "seed must be an integer"),
        (dict(seed=-1), r"seed must be in \[0, 2\*\*63 - 1\], got -1"),
        (dict(seed=10**300), "301-digit number"),
        (dict(options="x"), "options must be a dict"),
    ],
)
def test_reset_refuses_bad_seeds_and_options(kwargs, match):
    env = gym.make("SREMarathon/OnlineBoutique-v3", **LONG)
    with pytest.raises(ConfigurationError, match=match):
        env.reset(**kwargs)
    env.reset(seed=2**63 - 1)  # the largest accepted seed works


@pytest.mark.parametrize(
    "action",
    [
        "abc",
        1.5,
        True,
        np.zeros(20),
        np.zeros(20, dtype=bool),
        [1, 2],
        object(),
        np.full(20, 99),
        {"tool": "get_alerts"},
    ],
)
def test_bad_actions_are_refused_as_results_not_silently_cast(env, action):
    """A float, bool, string, object, wrong size or out-of-space action is an invalid result; the
    invocation passes without acting (a float used to be truncated to an int and acted on)."""
    n_actions = len(env.unwrapped.runner.actions)
    _, reward, _, _, info = env.step(action)
    (res,) = info["tool_results"]
    assert not res["ok"] and res["error"]["code"] == "invalid_arguments"
    assert "action must be an integer array of shape (4, 5)" in res["error"]["message"]
    assert len(env.unwrapped.runner.actions) == n_actions  # nothing acted
    again = pickle.loads(pickle.dumps(env.unwrapped))  # a refused action replays
    assert again.sim.now == env.unwrapped.sim.now


def test_tool_calls_and_steps_after_the_end_are_refused_and_not_recorded():
    env = gym.make("SREMarathon/OnlineBoutique-v3", injection_minutes=4, observation_minutes=2)
    env.reset(seed=1)
    done = False
    while not done:
        _, _, term, trunc, _ = env.step(None)
        done = term or trunc
    u = env.unwrapped
    before = u.record().model_dump_json()
    res = u.call_tool({"tool": "open_incident", "alert_ids": ["a0001"]})
    assert not res.ok and res.error.code == "unavailable" and "episode is over" in res.error.message
    assert u.record().model_dump_json() == before
    with pytest.raises(gym.error.ResetNeeded):
        env.step(None)


def test_hostile_tool_calls_are_recorded_as_bounded_json(env):
    """A value nested 300 deep, non-string keys, bytes, arbitrary objects and huge ints: each is an
    invalid call, recorded as bounded JSON; the record still serializes."""
    u = env.unwrapped
    deep = {"tool": "get_alerts"}
    node = deep
    for _ in range(300):
        node["n"] = {}
        node = node["n"]
    for call in (
        deep,
        {1: "x", "tool": b"get_alerts"},
        {"tool": object()},
        object(),
        b"\xff\xfe",
        {"tool": "get_alerts", "limit": 10**400},
        ["get_alerts"],
    ):
        res = u.call_tool(call)
        assert not res.ok, call
    assert serializes(env)
    rendered = json.dumps([a.args for a in u.runner.actions])
    assert len(rendered) < 20_000 and "<object>" in rendered and "nested deeper" in rendered


def test_the_record_is_a_copy_made_at_call_time(env):
    """Mutating a call dict after `call_tool` changes neither the record nor a pickled env's replay."""
    u = env.unwrapped
    call = {"tool": "get_alerts", "bogus": ["a"]}
    u.call_tool(call)
    call["bogus"].append("changed")
    call["tool"] = "zzz"
    assert u.runner.actions[-1].args == {"tool": "get_alerts", "bogus": ["a"]}
    again = pickle.loads(pickle.dumps(u))
    assert again.record().model_dump_json() == u.record().model_dump_json()


def test_workspace_writes_have_a_run_budget(env):
    """10,000 writes of 20,000 characters: the first 2 M characters are kept, the rest are refused
    with `budget_exceeded`, and the record stays a few MB (it was 202 MB)."""
    u = env.unwrapped
    codes: dict[str, int] = {}
    for i in range(10_000):
        r = u.call_tool({"tool": "workspace", "op": "write", "key": f"k{i % 100}", "text": "x" * 20_000})
        key = "ok" if r.ok else r.error.code
        codes[key] = codes.get(key, 0) + 1
    assert codes == {
        "ok": MAX_WRITTEN_CHARS // 20_000,
        "budget_exceeded": 10_000 - MAX_WRITTEN_CHARS // 20_000,
    }
    assert len(u.record().model_dump_json()) < 12_000_000


@pytest.mark.parametrize(
    "content, match",
    [
        (b"schema_version: 1\nnotes: \xff\xfe\n", "not UTF-8 text"),
        (b"[" * 50_000 + b"]" * 50_000, "nested too deeply"),
    ],
)
def test_catalog_files_that_are_not_utf8_or_too_deep_name_the_file(tmp_path, catalog, content, match):
    root = tmp_path / "catalog"
    shutil.copytree(catalog.root, root)
    (root / "scoring.yaml").write_bytes(content)
    with pytest.raises(CatalogError, match=match) as exc:
        load_catalog(root)
    assert "scoring.yaml" in str(exc.value)


def test_a_step_that_raised_leaves_a_picklable_env():
    """A step refused with an exception (after the end) is not journaled: the env still pickles and
    replays to the same record (it used to raise ValueError on unpickling)."""
    env = gym.make("SREMarathon/OnlineBoutique-v3", injection_minutes=4, observation_minutes=2)
    env.reset(seed=9)
    u = env.unwrapped
    u.call_tool({"tool": "get_alerts"})
    done = False
    while not done:
        _, _, term, trunc, _ = env.step("not an action" if u.sim.now < 200 else None)
        done = term or trunc
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros((4, 5), np.int64))
    again = pickle.loads(pickle.dumps(u))
    assert again.record().model_dump_json() == u.record().model_dump_json()
