"""Envs on one shared world (`envs.shared_world`): every agent's run is what it would be alone.

The agents here cover the three cases: one that never changes the world (it reads the trunk to the
end), one that intervenes at its first invocation, and one that intervenes only late (its copy is
taken mid-run, with pods starting, terminating and rollouts in the pipeline). Short train-mode
episodes keep it fast; the runs are the real simulator's.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from pathlib import Path

import pytest

from sre_marathon_gym.agents.base import zero_usage
from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.core.errors import ConfigurationError
from sre_marathon_gym.envs.shared_world import SharedWorld, run_together
from sre_marathon_gym.evaluation.episode_runner import make_marathon_env, run_scored_episode
from sre_marathon_gym.evaluation.leaderboard import RunSpec, run_group, run_one

APP, SEED = "online_boutique", 4242
PROTOCOL = {"injection_minutes": 16, "observation_minutes": 6}


class LateRestarter:
    """Reads alerts every invocation; restarts the service of the newest alert once, at `at_s`."""

    name = "late_restarter"
    usage = zero_usage()

    def __init__(self, at_s: float):
        self.at_s, self.done = at_s, False

    def reset(self, env, seed) -> None:
        self.done = False

    def invoke(self, env, obs, info):
        call = env.unwrapped.call_tool
        alerts = [a for a in call({"tool": "get_alerts"}).data["alerts"] if "container" in a["labels"]]
        if not self.done and env.unwrapped.now >= self.at_s and alerts:
            self.done = True
            inc = call({"tool": "open_incident", "alert_ids": [alerts[-1]["id"]], "title": "late"})
            svc = alerts[-1]["labels"]["container"]
            call({"tool": "restart", "incident_id": inc.data["id"], "service": svc})
        return None


class At:
    """Does nothing, then calls `act()` at every invocation from `at_s` on."""

    name, usage = "at", zero_usage()

    def __init__(self, at_s: float, act):
        self.at_s, self.act = at_s, act

    def reset(self, env, seed) -> None:
        pass

    def invoke(self, env, obs, info):
        if env.unwrapped.now >= self.at_s:
            self.act()


def _two_envs() -> tuple[SharedWorld, list]:
    world = SharedWorld()
    envs = [_env(), _env()]
    for env in envs:
        env.unwrapped.share_world(world)
    return world, envs


def _env():
    return make_marathon_env(APP, "train", load_catalog(), **PROTOCOL)


def _digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.mark.parametrize("late_s", [600.0])
def test_agents_on_one_world_score_and_record_exactly_as_alone(tmp_path, late_s):
    agents = ["noop", "runbook", "oracle", "shotgun"]
    alone = {}
    for name in [*agents, "late"]:
        agent = LateRestarter(late_s) if name == "late" else name
        run = run_scored_episode(_env(), agent, seed=SEED, out=tmp_path / "alone", label=name)
        alone[name] = run
    world = SharedWorld()
    envs = [_env() for _ in range(len(agents) + 1)]
    for env in envs:
        env.unwrapped.share_world(world)
    jobs = [
        (lambda e=e, a=a: run_scored_episode(e, a, seed=SEED, out=tmp_path / "shared", label=a))
        for e, a in zip(envs, agents)
    ]
    jobs.append(
        lambda: run_scored_episode(
            envs[-1], LateRestarter(late_s), seed=SEED, out=tmp_path / "shared", label="late"
        )
    )
    shared = dict(zip([*agents, "late"], run_together(jobs, world)))
    late = shared["late"].record
    assert any(a.tool == "restart" and a.verdict == "ok" and a.time_s >= late_s for a in late.actions)
    assert any(a.kind == "intervention" and a.verdict == "ok" for a in shared["oracle"].record.actions)
    for name, run in shared.items():
        assert run.card.model_dump() == alone[name].card.model_dump(), name
        assert run.record.model_dump() == alone[name].record.model_dump(), name
        assert _digest(run.bundle) == _digest(alone[name].bundle), name
    assert not world.members  # every env left the world when its run ended


def test_run_group_gives_the_leaderboard_results_of_run_one(tmp_path):
    cat = load_catalog()
    specs = [RunSpec(APP, a, SEED, "train", str(tmp_path), str(cat.root), {}) for a in ("noop", "random")]
    grouped = run_group(specs)
    for (spec, card, bundle), other in zip(grouped, specs):
        _, solo_card, solo_bundle = run_one(dataclasses.replace(other, out=str(tmp_path / "solo")))
        assert spec == other and card.model_dump() == solo_card.model_dump()
        assert _digest(bundle) == _digest(solo_bundle)


def test_a_failing_agent_leaves_the_world_and_the_others_finish():
    def broken():
        raise RuntimeError("agent bug")

    world, envs = _two_envs()
    finished = []
    jobs = [
        lambda: finished.append(run_scored_episode(envs[0], "noop", seed=SEED)),
        lambda: run_scored_episode(envs[1], At(480, broken), seed=SEED),
    ]
    with pytest.raises(RuntimeError, match="agent bug"):
        run_together(jobs, world)
    assert len(finished) == 1 and finished[0].steps == envs[0].unwrapped.episode_steps


def test_misuse_is_a_clear_error():
    world = SharedWorld()
    a, b = _env(), _env()
    a.unwrapped.reset(seed=SEED)
    with pytest.raises(ConfigurationError, match="before the env's first reset"):
        a.unwrapped.share_world(world)
    other = make_marathon_env(APP, "train", load_catalog(), injection_minutes=20, observation_minutes=6)
    b.unwrapped.share_world(world)
    other.unwrapped.share_world(world)
    jobs = [lambda: b.reset(seed=SEED), lambda: other.reset(seed=SEED)]
    with pytest.raises(ConfigurationError, match="must run the same episode"):
        run_together(jobs, world)
    for env in (a, b, other):
        env.close()


def test_a_copied_simulator_acts_only_on_itself():
    """The cluster's timed callbacks are methods, not closures, so a deep copy's events act on the
    copy: advancing a copy leaves the original's future exactly that of an uncopied run."""
    ref = _env()
    ref.reset(seed=SEED)
    env = _env()
    env.reset(seed=SEED)
    for e in (ref, env):
        for _ in range(3):
            e.step(None)
    u = env.unwrapped
    run, _ = copy.deepcopy((u.run, u.alert_engine), {id(u.catalog): u.catalog, id(u.app): u.app})
    run.advance_to(u.run_s)
    for e in (ref, env):
        while e.unwrapped.now < e.unwrapped.run_s:
            e.step(None)
    assert env.unwrapped.record().degradation == ref.unwrapped.record().degradation
    assert run.now == u.run_s


def test_log_causes_do_not_depend_on_the_order_of_queries():
    """Other agents' log and trace queries fill the shared world's cause cache: an answer must be
    the same whatever was asked before (Train Ticket's call chains are deeper than the search)."""
    env = make_marathon_env("train_ticket", "train", load_catalog(), **PROTOCOL)
    env.reset(seed=SEED)
    while env.unwrapped.now < env.unwrapped.run_s:
        env.step(None)
    rec = env.unwrapped.run.sim.logctx
    pairs = [(p, d) for p in range(rec.n) for d in range(rec.S) if float(rec.svc_fail[p, d]) > 0.01]
    assert len(pairs) > 50
    deep_first = copy.deepcopy(rec)
    for p, d in pairs:  # the callees first, at every depth, as a query near the entry point does
        for depth in (4, 3, 2, 1):
            deep_first.root_cause(p, d, depth)
    fresh = copy.deepcopy(rec)
    assert [deep_first.root_cause(p, d) for p, d in pairs] == [fresh.root_cause(p, d) for p, d in pairs]


def test_evaluate_splits_a_seed_s_agents_when_workers_would_idle():
    from sre_marathon_gym.evaluation.leaderboard import episode_groups

    specs = [RunSpec(APP, a, SEED, "train", None, None, {}) for a in ("noop", "random", "runbook", "oracle")]
    assert [len(g) for g in episode_groups(specs)] == [4]
    assert sorted(len(g) for g in episode_groups(specs, workers=2)) == [2, 2]
    assert sorted(len(g) for g in episode_groups(specs, workers=16)) == [1, 1, 1, 1]
    assert [s for g in episode_groups(specs, workers=3) for s in g] == specs  # nothing lost or repeated


def test_an_aborted_world_stops_every_run_and_keeps_its_recording(tmp_path):
    """`SharedWorld.abort` (what Ctrl-C in `run_together` calls) fails every run at its next step;
    each keeps what it recorded, as a run alone does."""
    world, envs = _two_envs()
    aborter = At(480, lambda: world.abort(RuntimeError("stop")))
    jobs = [
        lambda: run_scored_episode(envs[0], "noop", seed=SEED, out=tmp_path, label="noop"),
        lambda: run_scored_episode(envs[1], aborter, seed=SEED, out=tmp_path, label="aborter"),
    ]
    with pytest.raises(RuntimeError, match="shared world failed"):
        run_together(jobs, world)
    assert sorted(p.name.split("-")[1] for p in tmp_path.glob("*.incomplete.bundle")) == ["aborter", "noop"]
