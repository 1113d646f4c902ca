"""The live Kubernetes backend against a local API stub, through the real `kubernetes` client.

Done-when of issue 10: the unchanged Runbook agent repairs a bad image tag on the live backend and
revert restores the original object; requests outside the namespace or to forbidden resources are
refused before they are sent; 409/403/timeouts become structured tool errors and never end an
episode.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("kubernetes")

from live_harness import make_live

from sre_marathon_gym.agents.runbook import RunbookAgent
from sre_marathon_gym.backends.base import Backend
from sre_marathon_gym.backends.kube_api import SMP
from sre_marathon_gym.core.errors import BackendError
from sre_marathon_gym.envs.live import LiveMarathonEnv
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule, ScheduledFault
from sre_marathon_gym.tools.runner import ToolRunner


@pytest.fixture
def ob(catalog):
    live = make_live(catalog.app("online_boutique"))
    yield live
    live.close()


def _schedule(
    fault, start_s: int, end_s: int, injection_s: int = 600, observation_s: int = 300
) -> FaultSchedule:
    sf = ScheduledFault(
        fault.id, fault.app, fault.target, fault.mechanism, fault.category, fault.artifact, start_s, end_s
    )
    return FaultSchedule(fault.app, 0, injection_s, observation_s, (sf,))


def _run(env: LiveMarathonEnv, agent: RunbookAgent) -> int:
    obs, info = env.reset()
    agent.reset(env, None)
    steps, done = 0, False
    while not done:
        agent.invoke(env, obs, info)
        obs, _, done, _, info = env.step(None)
        steps += 1
    return steps


def _tool(live, call: dict):
    return ToolRunner(live.backend, _NoAlerts()).call(call)


class _NoAlerts:
    def history(self, until=None):
        return []


# ---------------------------------------------------------------- done-when 1
def test_runbook_rolls_back_bad_image_on_live_backend_and_revert_restores(ob, catalog):
    from sre_marathon_gym.agents.base import run_episode
    from sre_marathon_gym.core.run_record import RunRecord

    fault = catalog.fault("ob-deployment-002")  # emailservice: unpullable image tag
    original = ob.stub.obj("deployments", "emailservice")
    assert isinstance(ob.backend, Backend)
    env = LiveMarathonEnv(ob.backend, catalog, schedule=_schedule(fault, 30, 780), interval_s=120)
    checks: dict = {"images": []}

    def watch():  # the cluster after every step (not the agent)
        dep = ob.stub.obj("deployments", "emailservice")
        checks["images"].append((ob.backend.now(), dep["spec"]["template"]["spec"]["containers"][0]["image"]))

    # the package's own episode loop and the unchanged Runbook agent, as on the simulator
    record = run_episode(env, RunbookAgent(), seed=3, progress=watch)
    assert isinstance(record, RunRecord) and len(checks["images"]) == 7  # steps end at 240, ..., 900 s
    assert RunRecord.model_validate_json(record.model_dump_json()) == record
    assert record.manifest.seed == 3 and record.manifest.interval_s == 120
    assert [f.fault_id for f in record.faults] == ["ob-deployment-002"] and record.faults[0].start_s == 30
    assert record.faults[0].reverted_s is None  # the agent repaired it before the orchestrator's revert
    assert record.probes == [] and "not measured" in record.manifest.env_config["probes"]
    assert record.alerts and any("emailservice" in a.services for a in record.alerts)
    assert record.incident_events and record.incident_events[0].op == "open"
    rollbacks = [a for a in record.actions if a.tool == "rollback"]
    assert [(a.args["service"], a.ok, a.verdict) for a in rollbacks] == [("emailservice", True, "ok")]
    assert rollbacks[0].in_scope is True
    opened = [a for a in record.actions if a.tool == "open_incident" and a.ok]
    assert opened, "the ImagePullBackOff alert should have fired and been grouped"
    # the record scores like a simulated one, except that repair is never credited (no probes)
    from sre_marathon_gym.scoring.marathon import fault_scores

    (fs,) = fault_scores(record, catalog.scoring)
    assert fs.correlated and not fs.repaired and fs.repair_evidence is None
    # the rollback happened while the fault was live: the good image came back before the revert time
    fixed = [
        t
        for t, img in checks["images"]
        if img == original["spec"]["template"]["spec"]["containers"][0]["image"] and t < 780
    ]
    bad = [t for t, img in checks["images"] if img == fault.params["image"]]
    assert fixed and (not bad or min(fixed) > min(bad))
    # revert ran on schedule and the deployment's spec is exactly the original one
    # the agent had already repaired it: the log says so instead of claiming a revert
    assert [(e.fault_id, e.kind, e.status) for e in env.fault_log] == [
        ("ob-deployment-002", "inject", "ok"),
        ("ob-deployment-002", "revert", "already_repaired"),
    ]
    assert "already repaired" in env.fault_log[-1].message
    final = ob.stub.obj("deployments", "emailservice")
    assert final["spec"] == original["spec"]
    # the history shows the rollout and the undo, through ReplicaSet revisions
    causes = [h["cause"] for h in ob.backend.k8s_state("deployments", "emailservice", 10)[0]["history"]]
    # the injected image change recorded no change-cause of its own (kubectl set without --record)
    assert not any("set image" in c or fault.params["image"] in c for c in causes), causes
    assert "rollout undo to revision 1" in causes
    # no request ever left the namespace or touched secrets
    assert not [r for r in ob.stub.requests if "secrets" in r["path"] or "kube-system" in r["path"]]


FAULTS = [
    "ob-deployment-002",
    "ob-config-019",
    "ob-config-001",
    "ob-deployment-014",
    "ob-resource-004",
    "ob-resource-008",
    "ob-network-015",
]


@pytest.mark.parametrize("fault_id", FAULTS)
def test_inject_then_revert_restores_the_exact_prior_object(ob, catalog, fault_id):
    fault = catalog.fault(fault_id)
    target = (
        fault.artifact.split(":")[0].split("/")[-1] if fault.mechanism.startswith("config_") else fault.target
    )
    before = ob.stub.obj("deployments", target)
    handle = ob.backend.inject(fault)
    if fault.mechanism == "network_partition":
        pol = ob.stub.obj("networkpolicies", f"deny-{fault.target}-to-{fault.params['downstream']}")
        assert pol["spec"]["podSelector"]["matchLabels"] == {"app": fault.target}
        assert ob.backend.policy_source(pol["metadata"]["name"]) == fault.target
    else:
        assert ob.stub.obj("deployments", target)["spec"] != before["spec"]
    ob.backend.revert(handle)
    after = ob.stub.obj("deployments", target)
    assert after["spec"] == before["spec"]
    assert after["metadata"]["annotations"].get("kubernetes.io/change-cause") == before["metadata"][
        "annotations"
    ].get("kubernetes.io/change-cause")
    assert not any(k[0] == "networkpolicies" for k in ob.stub.objects)


def test_flagd_flag_fault_and_revert_restore_configmap_data(catalog):
    live = make_live(catalog.app("astronomy_shop"))
    try:
        before = live.stub.obj("configmaps", "flagd-config")
        fault = catalog.fault("as-code-001")
        handle = live.backend.inject(fault)
        doc = json.loads(live.stub.obj("configmaps", "flagd-config")["data"]["demo.flagd.json"])
        assert doc["flags"]["productCatalogFailure"]["defaultVariant"] == "on"
        assert (
            live.backend.service_config("flagd")["configmaps"]["flagd-config"]["productCatalogFailure"]
            == "on"
        )
        live.backend.revert(handle)
        assert live.stub.obj("configmaps", "flagd-config")["data"] == before["data"]
        # the agent's path: set_config on flagd goes to the same ConfigMap
        r = _tool(
            live,
            {
                "tool": "set_config",
                "incident_id": "x",
                "service": "flagd",
                "key": "productCatalogFailure",
                "value": "on",
            },
        )
        assert r.error is not None and r.error.code == "guard_failed"  # guarded like on the simulator
        live.backend.set_config("flagd", "productCatalogFailure", "on")
        doc = json.loads(live.stub.obj("configmaps", "flagd-config")["data"]["demo.flagd.json"])
        assert doc["flags"]["productCatalogFailure"]["defaultVariant"] == "on"
    finally:
        live.close()


def test_revert_leaves_an_object_the_agent_already_repaired(ob, catalog):
    fault = catalog.fault("ob-deployment-002")
    handle = ob.backend.inject(fault)
    ob.backend.rollback("emailservice", None)
    rv = ob.stub.obj("deployments", "emailservice")["metadata"]["resourceVersion"]
    n = len(ob.stub.requests)
    ob.backend.revert(handle)
    assert ob.stub.obj("deployments", "emailservice")["metadata"]["resourceVersion"] == rv
    assert all(r["method"] == "GET" for r in ob.stub.requests[n:])


def test_interventions_reach_the_cluster(ob):
    be = ob.backend
    be.scale("cartservice", 3)
    assert ob.stub.obj("deployments", "cartservice")["spec"]["replicas"] == 3
    assert len(be.k8s_state("pods", "cartservice", 100)) == 3
    be.restart("cartservice")
    tpl = ob.stub.obj("deployments", "cartservice")["spec"]["template"]
    assert "kubectl.kubernetes.io/restartedAt" in tpl["metadata"]["annotations"]
    be.set_config("checkoutservice", "CARTSERVICE_ADDR", "cartservice:7070")
    env = ob.stub.obj("deployments", "checkoutservice")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "CARTSERVICE_ADDR", "value": "cartservice:7070"} in env
    be.set_resources("emailservice", cpu_limit_m=300)
    c = ob.stub.obj("deployments", "emailservice")["spec"]["template"]["spec"]["containers"][0]
    assert c["resources"]["limits"]["cpu"] == "300m"
    be.cordon("node-a1")
    assert ob.stub.obj("nodes", "node-a1", ns=None)["spec"]["unschedulable"] is True
    be.uncordon("node-a1")
    assert ob.stub.obj("nodes", "node-a1", ns=None)["spec"]["unschedulable"] is False
    drained = be.drain("node-a2")
    assert drained["evicted_pods"] and all(p["node"] != "node-a2" for p in be.k8s_state("pods", None, 1000))
    smp = [r for r in ob.stub.requests if r["method"] == "PATCH" and r["content_type"] == SMP]
    assert smp, "scale/restart/env/limits/cordon are strategic-merge patches"
    assert be.rollback("cartservice", 1)["rolled_back_to"] == 1
    logs = _tool(ob, {"tool": "search_logs", "service": "cartservice", "query": "upstream", "level": "ERROR"})
    assert logs.ok and logs.data["count"] >= 1 and logs.data["logs"][0]["level"] == "ERROR"


# ---------------------------------------------------------------- done-when 2
def test_out_of_scope_requests_are_refused_before_they_are_sent(ob):
    api, n = ob.backend.api, len(ob.stub.requests)
    refused = [
        lambda: api.call("get", "secrets", "postgres-credentials"),
        lambda: api.call("list", "secrets"),
        lambda: api.call("list", "pods", namespace="kube-system"),
        lambda: api.call("get", "configmaps", "coredns", namespace="kube-system"),
        lambda: api.call("patch", "deployments", "coredns", namespace="kube-system", body={}, patch_type=SMP),
        lambda: api.call("delete", "namespaces", ob.stub.namespace),
        lambda: api.call("delete", "nodes", "node-a1"),
        lambda: api.call(
            "patch", "nodes", "node-a1", body={"metadata": {"labels": {"x": "y"}}}, patch_type=SMP
        ),
        lambda: api.call("create", "deployments", body={"metadata": {"name": "miner"}}),
        lambda: api.call("delete", "deployments", "cartservice"),
        lambda: api.call("list", "clusterroles"),
        lambda: api.call("get", "nodes", "node-a1", namespace=ob.stub.namespace),
    ]
    for call in refused:
        with pytest.raises(BackendError) as exc:
            call()
        assert exc.value.code == "forbidden"
    assert len(ob.stub.requests) == n, "a refused request reached the API server"
    # through the tools: the policy layer refuses first, the backend never sees them
    for call in (
        {"tool": "get_k8s_state", "resource": "secrets"},
        {
            "tool": "cluster_op",
            "incident_id": "i1",
            "operation": "delete_namespace",
            "target": "online-boutique",
        },
        {"tool": "restart", "incident_id": "i1", "service": "prometheus"},
    ):
        r = _tool(ob, call)
        assert r.error is not None and r.error.code == "forbidden"
    assert len(ob.stub.requests) == n
    assert all(
        r["path"].startswith(
            (
                "/api/v1/nodes",
                f"/api/v1/namespaces/{ob.stub.namespace}/",
                f"/apis/apps/v1/namespaces/{ob.stub.namespace}/",
                f"/apis/networking.k8s.io/v1/namespaces/{ob.stub.namespace}/",
            )
        )
        for r in ob.stub.requests
    )


# ---------------------------------------------------------------- done-when 3
def test_conflict_forbidden_and_timeout_become_structured_tool_errors(catalog):
    live = make_live(catalog.app("online_boutique"), timeout_s=0.3)
    try:
        be = live.backend
        # a real optimistic-concurrency conflict: a write pinned to a stale resourceVersion
        stale = be.deployment("emailservice")
        be.scale("emailservice", 2)
        with pytest.raises(BackendError) as exc:
            be.set_env(stale, "emailservice", "PORT", "9090", "test")
        assert exc.value.code == "conflict" and "modified" in str(exc.value)
        runner = ToolRunner(be, _NoAlerts())
        runner.incidents.open(0.0, ["a1"], "t")
        inc = next(iter(runner.incidents.incidents))
        be.restart("emailservice")  # a second revision to roll back to
        live.stub.fail_next(
            "PATCH",
            r"/deployments/emailservice$",
            409,
            reason="Conflict",
            message="the object has been modified",
        )
        r = runner.call({"tool": "rollback", "incident_id": inc, "service": "emailservice"})
        assert not r.ok and r.error.code == "conflict" and "409" in r.error.message
        live.stub.fail_next("GET", r"/pods$", 403, reason="Forbidden", message="pods is forbidden")
        r = runner.call({"tool": "get_k8s_state", "resource": "pods"})
        assert not r.ok and r.error.code == "forbidden"
        live.stub.fail_next("GET", r"/deployments/nosuch$", 404)
        r = runner.call({"tool": "scale", "incident_id": inc, "service": "nosuch", "replicas": 1})
        assert not r.ok and r.error.code == "not_found"
        live.stub.hang_next("GET", r"/deployments$", 1.0, times=8)  # the client may retry; every try hangs
        r = runner.call({"tool": "get_k8s_state", "resource": "deployments"})
        assert not r.ok and r.error.code == "unavailable" and "in time" in r.error.message
        r = runner.call({"tool": "query_metrics", "metric": "up"})
        assert r.ok is False  # a MetricStore without that metric: not found, structured
        r = runner.call({"tool": "get_traces"})
        assert not r.ok and r.error.code == "unavailable"
        r = runner.call({"tool": "read_source", "service": "emailservice"})
        assert not r.ok and r.error.code == "unavailable"
        assert [a.verdict for a in runner.actions].count("error") == len(runner.actions)
    finally:
        live.close()


def test_no_metrics_source_is_a_structured_error(catalog):
    live = make_live(catalog.app("online_boutique"), metrics=False)
    try:
        r = _tool(live, {"tool": "query_metrics", "metric": "up"})
        assert (
            not r.ok and r.error.code == "unavailable" and "no metrics source configured" in r.error.message
        )
    finally:
        live.close()


def test_episode_survives_api_failures(catalog):
    live = make_live(catalog.app("online_boutique"), timeout_s=0.3)
    try:
        fault = catalog.fault("ob-deployment-002")
        original = live.stub.obj("deployments", "emailservice")
        env = LiveMarathonEnv(live.backend, catalog, schedule=_schedule(fault, 30, 800), interval_s=120)
        agent = RunbookAgent()
        orig_invoke = agent.invoke

        def invoke(e, obs, info):  # after the fault is in: every write conflicts, some reads fail or hang
            if not live.stub.failures:
                live.stub.fail_next("PATCH", r".*", 409, times=1000, reason="Conflict")
                live.stub.fail_next("GET", r"/replicasets$", 403, times=3, reason="Forbidden")
                live.stub.hang_next("GET", r"/deployments$", 1.0, times=4)  # one call, with its retries
            orig_invoke(e, obs, info)

        agent.invoke = invoke  # type: ignore[method-assign]
        assert _run(env, agent) == 7
        rollbacks = [a for a in env.runner.actions if a.tool == "rollback"]
        assert rollbacks and all(
            a.verdict == "error" and ("409" in a.error or "403" in a.error) for a in rollbacks
        )
        assert any(a.verdict == "error" and "did not answer in time" in a.error for a in env.runner.actions)
        assert all(a.error for a in env.runner.actions if a.verdict == "error")
        # the orchestrator's revert met the same conflicts: logged, not raised, and NOT forgotten:
        # the fault is still in the cluster, so the handle stays pending and is retried
        assert [(x.kind, x.status) for x in env.fault_log] == [("inject", "ok"), ("revert", "error")]
        assert "still in place" in env.fault_log[-1].message
        assert env.pending_reverts == ["ob-deployment-002"]
        image = live.stub.obj("deployments", "emailservice")["spec"]["template"]["spec"]["containers"][0][
            "image"
        ]
        assert image == fault.params["image"]
        # once the API server accepts writes again, close() reverts it
        live.stub.failures.clear()
        env.close()
        assert [(x.kind, x.status) for x in env.fault_log][-1] == ("revert", "ok")
        assert "failed attempt" in env.fault_log[-1].message
        assert env.pending_reverts == []
        assert live.stub.obj("deployments", "emailservice")["spec"] == original["spec"]
    finally:
        live.close()


def test_failed_revert_is_kept_and_retried_on_the_next_tick(ob, catalog):
    fault = catalog.fault("ob-resource-004")  # emailservice CPU limit cut
    original = ob.stub.obj("deployments", "emailservice")
    env = LiveMarathonEnv(
        ob.backend,
        catalog,
        schedule=_schedule(fault, 30, 300, injection_s=300, observation_s=300),
        interval_s=120,
    )
    env.reset()
    env.step(None)  # now t=240; the revert is due at 300
    ob.stub.fail_next("PATCH", r"/deployments/emailservice$", 409, times=3, reason="Conflict")
    env.step(None)  # t=360: the revert failed at 300 (all 3 tries), the retry at 315 went through
    log = [(e.time_s, e.kind, e.status) for e in env.fault_log]
    assert log == [(30.0, "inject", "ok"), (300.0, "revert", "error"), (315.0, "revert", "ok")]
    assert "1 failed attempt" in env.fault_log[-1].message
    assert env.pending_reverts == []
    assert ob.stub.obj("deployments", "emailservice")["spec"] == original["spec"]
    env.close()
    assert len(env.fault_log) == 3  # nothing left to revert


def test_backend_revert_marks_the_handle_only_after_the_write(ob, catalog):
    fault = catalog.fault("ob-resource-004")
    original = ob.stub.obj("deployments", "emailservice")
    handle = ob.backend.inject(fault)
    ob.stub.fail_next("PATCH", r"/deployments/emailservice$", 500, times=1)
    with pytest.raises(BackendError):
        ob.backend.revert(handle)
    assert handle.reverted is False
    assert ob.stub.obj("deployments", "emailservice")["spec"] != original["spec"]
    assert ob.backend.revert(handle) == "reverted" and handle.reverted is True
    assert ob.stub.obj("deployments", "emailservice")["spec"] == original["spec"]
    n = len(ob.stub.requests)
    assert ob.backend.revert(handle) == "reverted" and len(ob.stub.requests) == n  # idempotent, no request


def test_close_reverts_faults_still_injected(ob, catalog):
    fault = catalog.fault("ob-resource-004")  # emailservice CPU limit cut
    original = ob.stub.obj("deployments", "emailservice")
    env = LiveMarathonEnv(ob.backend, catalog, schedule=_schedule(fault, 30, 780), interval_s=120)
    env.reset()
    assert ob.stub.obj("deployments", "emailservice")["spec"] != original["spec"]
    env.close()
    assert ob.stub.obj("deployments", "emailservice")["spec"] == original["spec"]
    assert [(e.kind, e.status) for e in env.fault_log] == [("inject", "ok"), ("revert", "ok")]


def test_live_env_passes_the_gymnasium_checker_and_decodes_action_slots(ob, catalog):
    from gymnasium.utils.env_checker import check_env

    env = LiveMarathonEnv(
        ob.backend, catalog, schedule=_schedule(catalog.fault("ob-deployment-002"), 30, 780)
    )
    check_env(env, skip_render_check=True)
    obs, _ = env.reset()
    obs, reward, done, _, info = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs) and reward == 0.0 and not done
    assert all(set(r) == {"ok", "tool", "data", "error"} for r in info["tool_results"])
    env.close()


def test_both_envs_restore_the_same_baseline_values(ob, catalog):
    import gymnasium as gym

    from sre_marathon_gym.envs.actions import baseline_values

    app = catalog.app("online_boutique")
    env = LiveMarathonEnv(ob.backend, catalog, schedule=None, run_s=300)
    env.reset()
    sim_env = gym.make("SREMarathon/OnlineBoutique-v3").unwrapped
    assert env._view()["baseline_values"] == sim_env.baseline_values == baseline_values(app)
    assert baseline_values(app)["deployment/emailservice:resources.limits.cpu"].endswith("m")
    env.close()
    sim_env.close()


def test_two_faults_and_an_agent_scale_on_one_deployment_compose(ob, catalog):
    cpu, image = catalog.fault("ob-resource-004"), catalog.fault("ob-deployment-002")  # both on emailservice
    original = ob.stub.obj("deployments", "emailservice")
    c0 = original["spec"]["template"]["spec"]["containers"][0]
    h_cpu = ob.backend.inject(cpu)
    ob.backend.scale("emailservice", 3)  # the agent's change
    h_img = ob.backend.inject(image)
    assert ob.backend.revert(h_cpu) == "reverted"
    d = ob.stub.obj("deployments", "emailservice")
    c = d["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == image.params["image"]  # the second fault is still in place
    assert d["spec"]["replicas"] == 3  # the agent's scale survives
    assert c["resources"]["limits"]["cpu"] == c0["resources"]["limits"]["cpu"]  # the first fault is undone
    assert ob.backend.revert(h_img) == "reverted"
    d = ob.stub.obj("deployments", "emailservice")
    assert d["spec"]["template"]["spec"]["containers"][0] == c0  # original image and limits
    assert d["spec"]["replicas"] == 3
    # every revert was a narrow JSON patch guarded by `test` ops, never a whole-spec replace
    reverts = [
        r for r in ob.stub.requests if r["method"] == "PATCH" and "json-patch" in (r["content_type"] or "")
    ]
    assert len(reverts) == 2 and all(r["body"][0]["op"] == "test" for r in reverts)
    assert not any(op["path"] in ("/spec", "/data") for r in reverts for op in r["body"])


def test_revert_leaves_a_value_the_agent_changed_again(ob, catalog):
    fault = catalog.fault("ob-resource-004")
    handle = ob.backend.inject(fault)
    ob.backend.set_resources("emailservice", cpu_limit_m=777)  # the agent picked its own value
    assert ob.backend.revert(handle) == "already repaired"
    c = ob.stub.obj("deployments", "emailservice")["spec"]["template"]["spec"]["containers"][0]
    assert c["resources"]["limits"]["cpu"] == "777m"
    # a `test` failing on the server (changed between read and write) is re-read, not overwritten
    handle = ob.backend.inject(fault)
    real_get = ob.backend.deployment
    calls = []

    def racing_get(name):  # the agent writes right after the orchestrator's read
        d = real_get(name)
        calls.append(name)
        if len(calls) == 1:
            ob.backend.set_resources("emailservice", cpu_limit_m=555)  # reads once more itself
        return d

    ob.backend.deployment = racing_get  # type: ignore[method-assign]
    assert ob.backend.revert(handle) == "already repaired"
    c = ob.stub.obj("deployments", "emailservice")["spec"]["template"]["spec"]["containers"][0]
    assert c["resources"]["limits"]["cpu"] == "555m"
    assert len(calls) == 3  # read, (the agent's read), re-read after the server refused the stale `test`
    assert any(r["method"] == "PATCH" and "json-patch" in (r["content_type"] or "") for r in ob.stub.requests)


def test_flag_revert_keeps_other_flags(catalog):
    live = make_live(catalog.app("astronomy_shop"))
    try:
        flags = catalog.app("astronomy_shop").feature_flags
        handle = live.backend.inject(catalog.fault("as-code-001"))  # productCatalogFailure on
        other = next(f for f in flags if f.name != "productCatalogFailure")
        variant = next(v for v in other.variants if v != other.default)
        live.backend.set_flag(other.name, variant)  # another change to the same ConfigMap
        assert live.backend.revert(handle) == "reverted"
        doc = json.loads(live.stub.obj("configmaps", "flagd-config")["data"]["demo.flagd.json"])
        assert doc["flags"]["productCatalogFailure"]["defaultVariant"] == "off"
        assert doc["flags"][other.name]["defaultVariant"] == variant
    finally:
        live.close()


def test_invocations_stay_on_a_fixed_grid_and_overruns_are_recorded(ob, catalog):
    env = LiveMarathonEnv(ob.backend, catalog, schedule=None, run_s=900, interval_s=120)
    _, info = env.reset()
    times = [info["time_s"]]
    for think_s in (50, 50, 150, 10, 0, 0):  # the agent's own time per invocation
        ob.clock.sleep(think_s)
        _, _, done, _, info = env.step(None)
        times.append(info["time_s"])
        if done:
            break
    # 120 +50 -> 240 (not 290); 240 +50 -> 360; 360 +150 overran 480 by 30 -> at once (510), then 600
    assert times == [120.0, 240.0, 360.0, 510.0, 600.0, 720.0, 840.0]
    assert [(o["due_s"], o["overrun_s"]) for o in env.overruns] == [(480.0, 30.0)]
    env.close()


def test_alert_evaluation_errors_are_recorded_and_the_run_goes_on(ob, catalog):
    from sre_marathon_gym.core.errors import PrometheusError

    class FlakyAlerts:
        def __init__(self):
            self.calls = 0

        def evaluate_until(self, t):
            self.calls += 1
            if self.calls in (2, 3):
                raise PrometheusError("Prometheus at http://prom:9090: query failed: connection refused")
            return []

        def history(self, until=None):
            return []

    fault = catalog.fault("ob-resource-004")
    original = ob.stub.obj("deployments", "emailservice")
    env = LiveMarathonEnv(
        ob.backend, catalog, schedule=_schedule(fault, 30, 500), interval_s=120, alert_engine=FlakyAlerts()
    )
    env.reset()
    for _ in range(3):
        _, _, done, _, info = env.step(None)
        assert not done
    assert [(e.time_s, e.error) for e in env.alert_errors] == [
        (240.0, "PrometheusError"),
        (360.0, "PrometheusError"),
    ]
    assert info["alert_errors"] == 2 and "connection refused" in env.alert_errors[0].message
    env.close()
    assert ob.stub.obj("deployments", "emailservice")["spec"] == original["spec"]


KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: kind-bench
  cluster: {server: "http://127.0.0.1:1"}
users:
- name: kind-bench
  user: {token: abc}
contexts:
- name: kind-bench
  context: {cluster: kind-bench, user: kind-bench}
current-context: kind-bench
"""


def test_from_kubeconfig_names_kubeconfig_problems_and_never_falls_back_silently(
    catalog, tmp_path, monkeypatch
):
    from kubernetes import config

    from sre_marathon_gym.backends.kubernetes import KubernetesBackend
    from sre_marathon_gym.core.errors import ConfigurationError

    app = catalog.app("online_boutique")
    incluster = []
    monkeypatch.setattr(config, "load_incluster_config", lambda *a, **k: incluster.append(1))
    good = tmp_path / "config"
    good.write_text(KUBECONFIG)
    be = KubernetesBackend.from_kubeconfig(app, "kind-bench", config_file=str(good))
    assert be.api._apis["CoreV1Api"].api_client.configuration.host == "http://127.0.0.1:1"
    be.api._apis["CoreV1Api"].api_client.close()
    with pytest.raises(ConfigurationError, match=r"no context 'kind-bnech'.*did you mean 'kind-bench'"):
        KubernetesBackend.from_kubeconfig(app, "kind-bnech", config_file=str(good))
    bad = tmp_path / "broken"
    bad.write_text("apiVersion: v1\ncontexts: [\n")
    with pytest.raises(ConfigurationError, match="broken"):
        KubernetesBackend.from_kubeconfig(app, config_file=str(bad))
    missing = str(tmp_path / "nope")
    monkeypatch.setenv("KUBECONFIG", missing)
    with pytest.raises(ConfigurationError, match="no kubeconfig"):
        KubernetesBackend.from_kubeconfig(app, "kind-bench")
    assert incluster == []  # a mistyped or missing context never falls back to in-cluster credentials
    KubernetesBackend.from_kubeconfig(app)  # no kubeconfig, no context: the pod's service account
    assert incluster == [1]
    with pytest.raises(ConfigurationError, match="either metrics or prometheus_url"):
        KubernetesBackend(object(), app, metrics=object(), prometheus_url="http://127.0.0.1:9090")


def _foreign_nodes(stub):
    """A kind control plane (no zone label) and another tenant's node in a zone the app does not use."""
    with stub.lock:
        stub._store(
            "nodes",
            {
                "metadata": stub._meta(
                    "kind-control-plane", None, labels={"node-role.kubernetes.io/control-plane": ""}
                ),
                "spec": {},
                "status": {},
            },
        )
    stub.add_node("foreign-1", "zone-x")


def test_only_the_apps_zoned_nodes_can_be_cordoned(ob):
    _foreign_nodes(ob.stub)
    for node, why in (
        ("kind-control-plane", "no topology.kubernetes.io/zone label"),
        ("foreign-1", "outside the app's zones"),
    ):
        n = len(ob.stub.requests)
        for op in (ob.backend.cordon, ob.backend.uncordon, ob.backend.drain):
            with pytest.raises(BackendError, match=why) as exc:
                op(node)
            assert exc.value.code == "forbidden"
        sent = ob.stub.requests[n:]
        assert sent and all(r["method"] == "GET" for r in sent), "only the node read went out, never a write"
        assert not ob.stub.obj("nodes", node, ns=None)["spec"].get("unschedulable")
    assert ob.backend.cordon("node-a1")["unschedulable"] is True  # the app's own node still can


def test_failover_cordons_only_the_apps_other_zones(catalog):
    live = make_live(catalog.app("astronomy_shop"))
    try:
        _foreign_nodes(live.stub)
        app_nodes = {z.name: set(z.nodes) for z in catalog.app("astronomy_shop").zones}
        out = live.backend.failover("zone-a")
        assert set(out["cordoned"]) == set().union(*(n for z, n in app_nodes.items() if z != "zone-a"))
        for n in ("kind-control-plane", "foreign-1", *app_nodes["zone-a"]):
            assert not live.stub.obj("nodes", n, ns=None)["spec"].get("unschedulable"), n
        with pytest.raises(BackendError) as exc:
            live.backend.failover("zone-x")  # a zone the cluster has but the app does not use
        assert exc.value.code == "not_found"
    finally:
        live.close()


def test_drain_uses_the_eviction_api_and_honours_disruption_budgets(ob):
    be = ob.backend
    be.scale("cartservice", 2)
    pods = {p["name"]: p["node"] for p in be.k8s_state("pods", None, 1000)}
    cart = sorted(n for n in pods if n.startswith("cartservice-"))
    node = pods[cart[0]]
    ob.stub.add_pdb("cartservice", {"app": "cartservice"}, min_available=2)  # no cart pod may go
    n = len(ob.stub.requests)
    out = be.drain(node)
    on_node = sorted(p for p, nd in pods.items() if nd == node)
    cart_here = [p for p in on_node if p in cart]
    assert out["blocked_by_disruption_budget"] == cart_here and out["drained"] is False
    assert sorted(out["evicted_pods"]) == [p for p in on_node if p not in cart] and out["evicted_pods"]
    sent = ob.stub.requests[n:]
    evictions = [r for r in sent if r["method"] == "POST" and r["path"].endswith("/eviction")]
    assert len(evictions) == len(on_node)
    assert evictions[0]["body"]["kind"] == "Eviction" and evictions[0]["body"]["apiVersion"] == "policy/v1"
    assert not [r for r in sent if r["method"] == "DELETE"], "pods are never deleted directly"
    assert cart[0] in {p["name"] for p in be.k8s_state("pods", "cartservice", 100)}  # the budget held
    with pytest.raises(BackendError) as exc:
        be.api.call("delete", "pods", cart[0])
    assert exc.value.code == "forbidden"


def test_search_logs_has_the_simulators_semantics_on_the_live_backend(ob):
    import dataclasses

    from sre_marathon_gym.sim.log_lines import LogRecord

    ob.stub.log_lines = [
        "DEBUG cache warm",
        "INFO serving requests",
        '{"level": "warning", "message": "slow checkout", "order_id": "o-123"}',
        "ERROR upstream connect error",
    ]

    def search(**kw):
        r = _tool(ob, {"tool": "search_logs", "service": "cartservice", **kw})
        assert r.ok, r.error
        return r.data["logs"]

    # level is a minimum severity, as on the simulator (not an exact match)
    assert [x["level"] for x in search(level="WARN")] == ["WARN", "ERROR"]
    assert [x["level"] for x in search(level="INFO")] == ["INFO", "WARN", "ERROR"]
    assert len(search()) == 4
    # query terms also match attribute values and the pod name; -term excludes; "phrases" group
    (hit,) = search(query="o-123")
    assert hit["message"] == "slow checkout" and hit["attributes"] == {"order_id": "o-123"}
    pod = hit["pod"]
    assert len(search(query=pod)) == 4 and search(query=f"{pod} -upstream -cache -serving") == [hit]
    assert [x["message"] for x in search(query='"connect error"')] == [
        "ERROR upstream connect error"
    ]  # plain lines stay raw
    # the same row shape as the simulator's records
    assert set(hit) == {f.name for f in dataclasses.fields(LogRecord)}


def test_log_query_functions_are_shared_with_the_simulator():
    import sre_marathon_gym.backends.kubernetes as kube
    import sre_marathon_gym.sim.log_search as simlogs
    from sre_marathon_gym.core import logquery

    assert simlogs.logquery is logquery and kube.logquery is logquery
    assert not hasattr(kube, "matches") and not hasattr(simlogs, "_terms")
    assert logquery.parse_query('a "b c" -d') == (["a", "b c"], ["d"])
    assert logquery.min_rank("warning") == logquery.min_rank("WARN") == 1


@pytest.mark.parametrize(
    "kwargs, says",
    [
        (dict(run_s=float("nan")), "run_s must be a whole number"),  # never ended: the episode hung
        (dict(run_s="900"), "run_s must be a whole number"),
        (dict(run_s=120), r"run_s must be in \[121,"),  # over before the first step
        (dict(interval_s=10**9), r"interval_s must be in \[15, 86400\]"),
    ],
)
def test_the_live_env_checks_its_run_length_and_cadence(ob, catalog, kwargs, says):
    from sre_marathon_gym.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=says):
        LiveMarathonEnv(ob.backend, catalog, schedule=None, **{"run_s": 900, **kwargs})
    env = LiveMarathonEnv(ob.backend, catalog, schedule=None, run_s=900)
    with pytest.raises(ConfigurationError, match="seed must be an integer"):
        env.reset(seed="1")
