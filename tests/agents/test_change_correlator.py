"""The change correlator on a short hand-made schedule: it blames the change whose service's
telemetry steps up right after it, and not the changes that nothing follows.

The schedule (Online Boutique, 12 + 3 minutes): a code fault shipped to shippingservice at 180 s
(its new revision fails requests), a harmless config commit to another service at 100 s, and a
harmless hand-made change (a *raised* CPU limit, made with the backend as an operator would) at
480 s. The env takes the schedule through `FaultSchedule.generate`, patched for this test only.
"""

from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import pytest

import sre_marathon_gym  # noqa: F401
from sre_marathon_gym.agents import make_agent
from sre_marathon_gym.agents.base import AgentView, public_info
from sre_marathon_gym.agents.change_correlator import ChangeCorrelator, names_peer
from sre_marathon_gym.envs import marathon as marathon_module
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule, ScheduledFault
from sre_marathon_gym.scoring import score_run

APP, ENV_ID = "online_boutique", "SREMarathon/OnlineBoutique-v3"
KW = dict(injection_minutes=12, observation_minutes=3)
FAULT_ID = "ob-code-004"  # shippingservice:ship_order.go: a share of its requests fail
DIRECT_S, DIRECT_SERVICE = 480, "currencyservice"


def _schedule(catalog) -> FaultSchedule:
    fault = catalog.fault(FAULT_ID)
    sf = ScheduledFault(
        fault_id=fault.id,
        app=APP,
        target=fault.target,
        mechanism=fault.mechanism,
        category=fault.category,
        artifact=fault.artifact,
        start_s=180,
        planned_end_s=660,
    )
    # a real benign config commit of the generator, on another service and with a value that works
    generated = FaultSchedule.generate(catalog, APP, 7)
    benign = next(
        b
        for b in generated.benign
        if b.kind == "config" and b.service not in (fault.target, DIRECT_SERVICE, *fault.scope)
    )
    return FaultSchedule(
        APP,
        0,
        60 * KW["injection_minutes"],
        60 * KW["observation_minutes"],
        (sf,),
        (replace(benign, time_s=100),),
    )


@pytest.fixture
def episode(catalog, monkeypatch):
    """Run the correlator through the schedule; the hand-made change is applied between invocations."""
    schedule = _schedule(catalog)

    class Fixed:
        @staticmethod
        def generate(*args, **kwargs):
            return schedule

    monkeypatch.setattr(marathon_module, "FaultSchedule", Fixed)
    env = gym.make(ENV_ID, **KW)
    agent = ChangeCorrelator()
    obs, info = env.reset(seed=0)
    view = AgentView(env)
    agent.reset(view, 0)
    u = env.unwrapped
    done = False
    while not done:
        agent.invoke(view, obs, public_info(info))
        if u.now <= DIRECT_S < u.now + u.interval_s:  # an operator raises a limit: harmless
            u.backend.set_resources(DIRECT_SERVICE, cpu_limit_m=4000)
        obs, _, done, _, info = env.step(None)
    record = u.record()
    return schedule, agent, record, score_run(record, catalog.scoring)


def test_it_blames_the_change_whose_telemetry_moves(episode, catalog):
    schedule, agent, record, card = episode
    fault = catalog.fault(FAULT_ID)
    claims = [e for e in record.incident_events if e.op == "root_cause"]
    assert [(e.services, e.artifact) for e in claims] == [([fault.target], "shippingservice:ship_order.go")]
    assert "shippingservice:ship_order.go" in fault.aliases
    claim = claims[0]
    assert schedule.faults[0].start_s < claim.time_s < schedule.faults[0].planned_end_s
    # the incident holds alerts of the service's own scope that fired after the change
    alerts = {a.id: a for a in record.alerts}
    for aid in claim.alert_ids:
        assert alerts[aid].fired_at >= schedule.faults[0].start_s
        assert {fault.target, *fault.scope} & set(alerts[aid].services)
    # why it blamed it: a step of the service's own telemetry after the change
    (why,) = [w for _, key, w in agent.log]
    assert "shippingservice error_ratio" in why
    # scored: correlated and localized, no false claim, the one undo called for
    (score,) = [s for s in card.per_fault if s.fault_id == FAULT_ID]
    assert score.correlated and score.localized
    assert card.false_claims == 0 and card.false_incidents == 0 and card.needless_actions == 0
    undo = [a for a in record.actions if a.kind == "intervention"]
    assert [(a.tool, a.args["service"], a.verdict) for a in undo] == [("rollback", fault.target, "ok")]
    assert undo[0].incident_id == claim.incident_id


def test_it_does_not_blame_changes_nothing_follows(episode):
    schedule, agent, record, _ = episode
    benign = schedule.benign[0]
    claimed = {e.artifact for e in record.incident_events if e.op == "root_cause"}
    # it saw both harmless changes (a commit and a hand-made revision) and judged them
    seen = {v[0].split(" ")[2].rstrip(":") for v in agent.trace.values()}
    assert benign.artifact.split("@")[0] in seen
    assert f"deployment/{DIRECT_SERVICE}:resources.limits.cpu" in seen
    assert not any(benign.service in a or DIRECT_SERVICE in a for a in claimed)
    acted_on = {a.args.get("service") for a in record.actions if a.kind == "intervention"}
    assert acted_on.isdisjoint({benign.service, DIRECT_SERVICE})


def test_it_is_registered_and_reads_only_its_view():
    agent = make_agent("change_correlator")
    assert isinstance(agent, ChangeCorrelator) and agent.name == "change_correlator"
    assert not getattr(agent, "privileged", False)
    with pytest.raises(ValueError):
        ChangeCorrelator(budget=5)


@pytest.mark.parametrize(
    "artifact, peer, named",
    [
        ("recommendationservice:env/PRODUCTCATALOGSERVICE_ADDR", "productcatalogservice", True),
        ("product-reviews:env/PRODUCT_CATALOG_ADDR", "product-catalog", True),
        ("ts-seat-service:env/TS_ORDER_SERVICE_TIMEOUT_MS", "ts-order-service", True),
        ("ts-seat-service:env/TS_ORDER_SERVICE_TIMEOUT_MS", "ts-order-other-service", False),
        (
            "ts-rebook-service:src/main/java/rebook/service/client/InsidePaymentClient.java",
            "ts-inside-payment-service",
            True,
        ),
        ("cartservice:src/cartstore/RedisCartStore.cs", "redis-cart", True),
        ("cartservice:env/WORKER_THREADS", "redis-cart", False),
        ("adservice:env/MAX_ADS_TO_SERVE", "adservice", False),
    ],
)
def test_a_change_names_the_peers_its_words_name(artifact, peer, named):
    """Failed calls to a peer the change does not name clear it (a dependency failing instead)."""
    assert names_peer(artifact, peer) is named
