"""Baseline agents: no-op, random, runbook and the oracle, on short train-mode runs (and one slow
leaderboard run per app for the oracle)."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest

import sre_marathon_gym  # noqa: F401
from sre_marathon_gym.agents import ADVERSARIAL_AGENT_NAMES, AGENTS, RUNBOOK_TABLE, make_agent, run_episode
from sre_marathon_gym.agents.runbook import STATE_KEY, RunbookAgent, strongest, workload_of
from sre_marathon_gym.core.errors import UnknownNameError
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.scoring import fault_scores, score_run

KW = dict(injection_minutes=10, observation_minutes=5, intensity=0.6)
ENV_IDS = {
    "online_boutique": "SREMarathon/OnlineBoutique-v3",
    "astronomy_shop": "SREMarathon/AstronomyShop-v3",
    "train_ticket": "SREMarathon/TrainTicket-v3",
}
SEEDS = (3, 11)


def run(agent_name: str, app: str = "online_boutique", seed: int = 3, agent=None, **kw):
    env = gym.make(ENV_IDS[app], **(kw or KW))
    agent = agent or make_agent(agent_name)
    record = run_episode(env, agent, seed=seed)
    return env.unwrapped, agent, record, score_run(record, env.unwrapped.catalog.scoring)


# ------------------------------------------------------------------ registry and protocol
def test_registry_names_and_unknown_name_suggestion():
    baselines = {"noop", "random", "runbook", "change_correlator", "oracle"}
    assert set(AGENTS) == {*baselines, *ADVERSARIAL_AGENT_NAMES}
    for name in AGENTS:
        agent = make_agent(name)
        assert agent.name == name
        assert agent.usage.model_calls == 0 and agent.usage.cost_usd == 0.0
    with pytest.raises(UnknownNameError, match="did you mean 'runbook'"):
        make_agent("runbok")


def test_run_episode_reports_progress_once_per_step_and_usage():
    ticks = []
    env = gym.make(ENV_IDS["online_boutique"], **KW)
    record = run_episode(env, make_agent("noop"), seed=1, progress=lambda: ticks.append(1))
    steps = math.ceil((env.unwrapped.run_s - env.unwrapped.interval_s) / env.unwrapped.interval_s)
    assert len(ticks) == steps
    assert record.usage.model_calls == 0 and record.usage.input_tokens == 0 and record.usage.cost_usd == 0.0
    assert env.unwrapped.sim.now >= env.unwrapped.run_s


# ------------------------------------------------------------------ noop
def test_noop_scores_zero_and_makes_no_calls():
    _, _, record, card = run("noop")
    assert record.actions == []
    assert record.incident_events == []
    assert card.correlated == 0.0 and card.marathon_score == 0.0


# ------------------------------------------------------------------ random
def test_random_calls_tools_never_crashes_and_is_seeded():
    _, _, record, card = run("random", seed=5)
    assert len(record.actions) > 0
    assert 0.0 <= card.marathon_score <= 100.0
    _, _, again, _ = run("random", seed=5)
    assert [(a.tool, a.args) for a in again.actions] == [(a.tool, a.args) for a in record.actions]
    _, _, other, _ = run("random", seed=6)
    assert [(a.tool, a.args) for a in other.actions] != [(a.tool, a.args) for a in record.actions]


def test_random_unmasked_survives_raw_action_space():
    env = gym.make(ENV_IDS["astronomy_shop"], **KW)
    record = run_episode(env, make_agent("random", masked=False), seed=2)
    assert len(record.actions) > 0  # mostly structured errors, never an exception


# ------------------------------------------------------------------ runbook
def test_runbook_table_is_data_and_prefers_the_broken_object():
    assert RUNBOOK_TABLE["PodImagePullBackOff"].artifact == "deployment/{svc}:image"
    assert RUNBOOK_TABLE["PodImagePullBackOff"].action == "rollback"
    assert RUNBOOK_TABLE["ContainerOOMKilled"].artifact == "deployment/{svc}:resources.limits.memory"
    assert RUNBOOK_TABLE["CPUThrottlingHigh"].action == "scale_up"
    assert RUNBOOK_TABLE["NodeNotReady"].action == "uncordon"
    assert RUNBOOK_TABLE["ZoneNodesNotReady"].action == "failover"
    assert all(r.action == "none" for n, r in RUNBOOK_TABLE.items() if n.startswith("Entry"))
    assert strongest(["ServiceErrorRatioCritical", "PodNotReady", "CPUThrottlingSevere"]) == "PodNotReady"
    assert (
        strongest(["ServiceLatencyP95Critical", "PodImagePullBackOff", "PodNotReady"])
        == "PodImagePullBackOff"
    )
    assert strongest(["EntryErrorRatioCritical", "ServiceErrorRatioWarning"]) == "ServiceErrorRatioWarning"
    services = ["frontend", "frontend-proxy", "cart"]
    assert workload_of({"pod": "frontend-proxy-7d9-x2"}, services, "frontend-proxy") == "frontend-proxy"
    assert workload_of({"node": "node-a1"}, services, "frontend-proxy") == "node/node-a1"
    assert (
        workload_of({"label_topology_kubernetes_io_zone": "zone-b"}, services, "frontend-proxy")
        == "zone/zone-b"
    )
    assert workload_of({"deployment": "cart"}, services, "frontend-proxy") == "cart"
    assert workload_of({"namespace": "otel-demo"}, services, "frontend-proxy") == "frontend-proxy"


@pytest.mark.parametrize("app", list(ENV_IDS))
def test_runbook_opens_incidents_and_acts_with_cited_incidents(app):
    """The paper's literal runbook (every workload, every row): grouping, guards and state."""
    env, _, record, card = run("runbook", app=app, agent=RunbookAgent(cautious=False))
    assert record.incident_events, "no incident opened"
    interventions = [a for a in record.actions if a.kind == "intervention"]
    assert interventions, "the runbook never acted"
    assert all(a.verdict != "guard_failed" and a.incident_id for a in interventions)
    assert not any(a.verdict == "forbidden" for a in record.actions)
    # each alert joins at most one incident
    seen: dict[str, str] = {}
    for inc in env.runner.incidents.incidents.values():
        for aid in inc.alert_ids:
            assert seen.setdefault(aid, inc.id) == inc.id, f"alert {aid} in {seen[aid]} and {inc.id}"
    # the state lives in the workspace, not in the agent
    assert STATE_KEY in env.runner.workspace.notes
    assert card.correlated > 0


@pytest.mark.parametrize("app", list(ENV_IDS))
def test_cautious_runbook_reports_only_what_its_table_trusts(app):
    """Rules v2 price every wrong answer, so the default runbook opens an incident only for a row
    marked `opens`, names a root cause only from a row marked `claims` (once per incident) and acts
    only on an incident it has named a root cause for."""
    env, _, record, _ = run("runbook", app=app, seed=5, injection_minutes=30, observation_minutes=5)
    alerts = {a.id: a for a in record.alerts}
    opened = [e for e in record.incident_events if e.op == "open"]
    assert opened, "the cautious runbook opened nothing in 30 minutes"
    for e in opened:
        assert RUNBOOK_TABLE[strongest([alerts[a].rule for a in e.alert_ids])].opens, e
    claims = [e for e in record.incident_events if e.op == "root_cause"]
    assert len({e.incident_id for e in claims}) == len(claims), "a cautious incident named two root causes"
    claimed = {e.incident_id for e in claims}
    for a in record.actions:
        if a.kind == "intervention":
            assert a.incident_id in claimed, a


def _seed_with_early_fault(catalog, app: str, mechanism: str) -> tuple[int, object]:
    for seed in range(300):
        sched = FaultSchedule.generate(
            catalog,
            app,
            seed,
            injection_minutes=KW["injection_minutes"],
            observation_minutes=KW["observation_minutes"],
            intensity=KW["intensity"],
        )
        for f in sched.faults:
            if f.mechanism == mechanism and f.start_s <= 300 and f.planned_end_s - f.start_s >= 360:
                return seed, f
    raise AssertionError(f"no short schedule with an early {mechanism}")


def test_runbook_rolls_back_a_bad_image_tag(catalog):
    seed, scheduled = _seed_with_early_fault(catalog, "online_boutique", "bad_image_tag")
    target = catalog.fault(scheduled.fault_id).target
    env, _, record, _ = run("runbook", seed=seed)
    rollbacks = [
        a
        for a in record.actions
        if a.tool == "rollback"
        and a.args["service"] == target
        and a.ok
        and scheduled.start_s <= a.time_s < scheduled.planned_end_s
    ]
    assert rollbacks, f"no rollback of {target} during {scheduled.fault_id}"
    cited = env.runner.incidents.incidents[rollbacks[0].incident_id]
    assert cited.artifact == f"deployment/{target}:image" and target in cited.services
    score = {s.fault_id: s for s in fault_scores(record, catalog.scoring)}[scheduled.fault_id]
    assert score.correlated and score.localized


# ------------------------------------------------------------------ ordering of the baselines
@pytest.mark.parametrize("app", list(ENV_IDS))
def test_oracle_beats_runbook_beats_or_ties_noop(app):
    for seed in SEEDS:
        scores = {
            name: run(name, app=app, seed=seed)[3].marathon_score for name in ("noop", "runbook", "oracle")
        }
        assert scores["oracle"] > scores["runbook"] >= scores["noop"], (app, seed, scores)


def test_oracle_correlates_and_localizes_every_fault_it_handles():
    env, agent, record, card = run("oracle", seed=SEEDS[0])
    assert agent.log.incident, "the oracle handled nothing"
    scores = {s.fault_id: s for s in card.per_fault}
    for fid in agent.log.incident:
        assert scores[fid].correlated and scores[fid].localized, fid
    interventions = [a for a in record.actions if a.kind == "intervention"]
    assert interventions and all(a.verdict == "ok" for a in interventions)


# ------------------------------------------------------------------ leaderboard (slow)
@pytest.mark.slow
@pytest.mark.parametrize("app", list(ENV_IDS))
def test_oracle_leaderboard_marathon_score_above_its_floor(app, oracle_floor):
    env = gym.make(ENV_IDS[app], mode="eval")
    agent = make_agent("oracle")
    record = run_episode(env, agent)
    card = score_run(record, env.unwrapped.catalog.scoring)
    missed = [(s.fault_id, s.outcome) for s in card.per_fault if not s.repaired]
    assert card.marathon_score >= oracle_floor, (
        f"{app}: Marathon-Score {card.marathon_score:.1f}; not repaired: {missed}"
    )
