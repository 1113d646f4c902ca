"""Kubernetes events are what a real cluster's controllers emit, and never name the injected change.

Read only through the tools' backend (`SimBackend`): `get_k8s_state events` must not give the root
cause away (no command lines, no ConfigMap, NetworkPolicy or flag events), while what changed stays
where a real cluster shows it: the rollout history, the object's spec, the deploy history and
flagd's own logs.
"""

from __future__ import annotations

import re

import pytest

from sre_marathon_gym.backends.sim import SimBackend
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.sim import k8s_events
from sre_marathon_gym.sim.simulator import Simulator

# reason -> the component that emits it (Kubernetes 1.29)
REASONS = {
    "ScalingReplicaSet": "deployment-controller",
    "SuccessfulCreate": "replicaset-controller",
    "SuccessfulDelete": "replicaset-controller",
    "Scheduled": "default-scheduler",
    "FailedScheduling": "default-scheduler",
    "Pulling": "kubelet",
    "Pulled": "kubelet",
    "Failed": "kubelet",
    "BackOff": "kubelet",
    "Created": "kubelet",
    "Started": "kubelet",
    "Killing": "kubelet",
    "Unhealthy": "kubelet",
    "NodeReady": "kubelet",
    "NodeNotSchedulable": "kubelet",
    "NodeSchedulable": "kubelet",
    "NodeNotReady": "node-controller",
    "TaintManagerEviction": "taint-eviction-controller",
}
KINDS = ("deployment/", "replicaset/", "pod/", "node/")
ALL = 100_000


def leaks(app, message: str) -> list[str]:
    """What in an event message would name an injected change."""
    found = [s for s in ("kubectl", "--", "->") if s in message]
    found += re.findall(r"\w+=\S+", message)  # key=value (a flag, an env var, a ConfigMap key)
    found += [f.name for f in app.feature_flags if f.name in message]
    # variants that are not plain words or numbers (100%, 10sec, 1000x)
    variants = {v for f in app.feature_flags for v in f.variants if not v.isalpha() and not v.isdigit()}
    found += [v for v in variants if re.search(rf"(?<![\w.]){re.escape(v)}(?![\w.])", message)]
    return found


def check_events(app, events: list[dict]) -> None:
    for e in events:
        assert set(e) == {"time_s", "kind", "reason", "object", "message"}, e
        assert e["reason"] in REASONS, e
        assert e["kind"] in ("Normal", "Warning"), e
        assert e["object"].startswith(KINDS), e
        assert not leaks(app, e["message"]), (leaks(app, e["message"]), e)


@pytest.mark.parametrize("app", ["online_boutique", "astronomy_shop", "train_ticket"])
def test_leaderboard_runs_emit_only_real_events(catalog, app):
    lb = catalog.leaderboard
    seed = lb.seed_for(app)
    sim = Simulator(catalog, app, seed, schedule=FaultSchedule.generate(catalog, app, seed), telemetry=False)
    sim.advance_to((lb.injection_minutes + lb.observation_minutes) * 60)
    events = SimBackend(sim).k8s_state("events", None, ALL)
    assert events
    check_events(sim.app, events)
    reasons = {e["reason"] for e in events}
    assert {"ScalingReplicaSet", "SuccessfulCreate", "Scheduled", "Started", "Killing"} <= reasons


WARM_S, AFTER_S = 120.0, 360.0


def inject(catalog, mechanism: str, app: str = "astronomy_shop"):
    fault = next(f for f in catalog.faults[app] if f.mechanism == mechanism)
    sim = Simulator(catalog, app, 5)
    sim.advance_to(WARM_S)
    sim.inject(fault)
    sim.advance_to(AFTER_S)
    backend = SimBackend(sim)
    new = [e for e in backend.k8s_state("events", None, ALL) if e["time_s"] >= WARM_S]
    check_events(sim.app, new)
    return fault, backend, new


def messages(events: list[dict]) -> str:
    return "\n".join(f"{e['reason']} {e['object']} {e['message']}" for e in events)


def test_memory_limit_cut_shows_a_rollout_and_the_spec_keeps_the_limit(catalog):
    fault, backend, new = inject(catalog, "memory_limit_cut")
    svc, limit = fault.target, f"{fault.params['mem_limit_mi']}Mi"
    text = messages(new)
    assert limit not in text and "resources" not in text and "limit" not in text
    assert re.search(rf"ScalingReplicaSet deployment/{svc} Scaled up replica set {svc}-\w+ to \d+", text)
    [dep] = backend.k8s_state("deployments", svc, ALL)
    # `kubectl set resources` without --record: the new revision repeats the previous change-cause
    assert (
        dep["history"][-1]["cause"] == dep["history"][-2]["cause"]
        and limit not in dep["history"][-1]["cause"]
    )
    assert backend.service_config(svc)["resources"]["limits"]["memory"] == limit  # the spec shows it


def test_scale_to_zero_shows_the_replica_set_scaled_down_and_the_spec_keeps_zero(catalog):
    fault, backend, new = inject(catalog, "scale_to_zero")
    svc = fault.target
    text = messages(new)
    assert not re.search(r"\breplicas\b", text)
    assert re.search(
        rf"ScalingReplicaSet deployment/{svc} Scaled down replica set {svc}-\w+ to 0 from \d+", text
    )
    assert any(e["reason"] == "Killing" and e["object"].startswith(f"pod/{svc}-") for e in new)
    assert set(backend.service_config(svc)["replicas"].values()) == {0}


def test_config_change_shows_a_rollout_and_the_deploy_history_keeps_the_change(catalog):
    fault, backend, new = inject(catalog, "config_timeout")
    svc, key = fault.target, fault.params["key"]
    text = messages(new)
    assert key not in text and fault.change.message not in text
    assert re.search(rf"ScalingReplicaSet deployment/{svc} Scaled up replica set {svc}-\w+ to \d+", text)
    rows = [r for r in backend.deploy_history(svc, WARM_S) if r["kind"] == "config"]
    assert rows and key in rows[-1]["message"] + rows[-1]["diff"]
    assert backend.service_config(svc)["env"][key] == str(fault.params["timeout_ms"])


def test_network_policy_emits_no_event_and_the_policy_is_listed(catalog):
    fault, backend, new = inject(catalog, "network_partition")
    name = fault.artifact.split("/", 1)[1]
    assert name not in messages(new)
    assert not [e for e in new if not e["object"].startswith(("pod/", "replicaset/", "deployment/"))]
    assert name in [p["name"] for p in backend.k8s_state("networkpolicies", None, ALL)]


def test_feature_flag_emits_no_event_and_flagd_logs_the_reload(catalog):
    fault, backend, new = inject(catalog, "feature_flag")
    flag = fault.params["flag"]
    assert flag not in messages(new)
    assert not [
        e for e in new if e["object"].startswith(("deployment/flagd", "pod/flagd", "replicaset/flagd"))
    ]
    logs = backend.search_logs("flagd", WARM_S, AFTER_S, "filepath event", None, 100)
    assert logs and all(r["level"] == "INFO" for r in logs)
    assert logs[0]["message"] == "filepath event: /etc/flagd/demo.flagd.json REMOVE"
    assert not backend.search_logs("flagd", 0, WARM_S, "filepath event", None, 100)  # only on a change
    [cm] = [c for c in backend.k8s_state("configmaps", None, ALL) if c["name"] == "flagd-config"]
    assert cm["data"][flag] == fault.params["variant"]
    assert [r for r in backend.deploy_history("flagd", WARM_S) if r["kind"] == "flag"]


def test_the_cluster_refuses_to_record_a_reason_no_component_emits(catalog):
    from sre_marathon_gym.core.errors import SimulatorError

    sim = Simulator(catalog, "online_boutique", 1, telemetry=False)
    with pytest.raises(SimulatorError, match="ConfigMapUpdated"):
        sim.cluster.event("ConfigMapUpdated", "configmap/flagd-config", "paymentFailure -> 100%")
    assert set(REASONS) == set(k8s_events.REASONS)  # this file's list is the independent oracle
