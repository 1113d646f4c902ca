"""Pod and node series read as an SRE reads them (issue 18, "values look synthetic"): through
`query_metrics`, `get_alerts` and `get_k8s_state` on the three apps' leaderboard seeds.

Before: two replicas of a service had identical CPU counters, a working set was one byte count at
every sample, every container sat at 42-60% of its limit, throttled periods were fractional, the
`uid` label was 12 hex characters unrelated to the pod's events, and no series carried `job` or
`instance` (no `up` series at all)."""

from __future__ import annotations

import re
from statistics import mean

import pytest

from sre_marathon_gym.alerting.engine import AlertEngine
from sre_marathon_gym.backends.sim import SimBackend
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.sim.simulator import Simulator
from sre_marathon_gym.tools.runner import ToolRunner

APPS = ["online_boutique", "astronomy_shop", "train_ticket"]
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
BACKOFF = re.compile(r"^Back-off restarting failed container \S+ in pod (\S+)_\S+\(([^)]*)\)$")
HEALTHY_END = 1800.0
RUN_END = 3600.0
_runs: dict[tuple[str, bool], dict] = {}


def _query(runner: ToolRunner, metric: str, **kw) -> list[dict]:
    res = runner.call({"tool": "query_metrics", "metric": metric, **kw})
    assert res.ok, (metric, kw, res.error)
    return res.data["series"]


def _run(catalog, app: str, faults: bool) -> dict:
    """One simulated run of the app's leaderboard seed (with its fault schedule, or healthy), read
    every 60 s: node status and the alerts as the tools show them."""
    key = (app, faults)
    if key not in _runs:
        seed = catalog.leaderboard.seed_for(app)
        sched = FaultSchedule.generate(catalog, app, seed) if faults else None
        sim = Simulator(catalog, app, seed, schedule=sched)
        engine = AlertEngine(catalog.rules, sim.app, sim.store)
        runner = ToolRunner(SimBackend(sim), engine)
        end = RUN_END if faults else HEALTHY_END
        nodes: list[tuple[float, dict[str, str]]] = []
        t = 0.0
        while t < end:
            t += 60.0
            sim.advance_to(t)
            engine.evaluate_until(t)
            nodes.append((t, {n["name"]: n["status"] for n in _k8s(runner, "nodes")}))
        _runs[key] = {"sim": sim, "runner": runner, "nodes": nodes}
    return _runs[key]


def _k8s(runner: ToolRunner, resource: str) -> list[dict]:
    res = runner.call({"tool": "get_k8s_state", "resource": resource, "limit": 2000})
    assert res.ok, res.error
    return res.data["items"]


def _replica_sets(runner: ToolRunner, min_age_s: float) -> dict[str, list[str]]:
    """Services with two or more Ready pods, all running for at least `min_age_s`."""
    out: dict[str, list[str]] = {}
    for p in _k8s(runner, "pods"):
        if p["ready"] == "1/1" and p["age_s"] >= min_age_s:
            out.setdefault(p["name"].rsplit("-", 2)[0], []).append(p["name"])
    return {s: pods for s, pods in out.items() if len(pods) >= 2}


@pytest.mark.parametrize("app", ["astronomy_shop", "train_ticket"])  # the apps with replicated services
def test_replicas_of_a_service_have_their_own_cpu_usage(catalog, app):
    """Each replica gets its own share of the load: their CPU rates differ, around the fair share."""
    runner = _run(catalog, app, faults=False)["runner"]
    replicated = _replica_sets(runner, 600)
    assert replicated
    for svc, pods in replicated.items():
        rows = _query(
            runner,
            "container_cpu_usage_seconds_total",
            function="rate",
            window_s=300,
            matchers={"container": svc},
            group_by=["pod"],
            start_s=HEALTHY_END,
            end_s=HEALTHY_END,
        )
        rates = {r["labels"]["pod"]: r["values"][-1][1] for r in rows if r["labels"]["pod"] in pods}
        assert len(rates) == len(pods), (svc, rates)
        assert len(set(rates.values())) == len(rates), (svc, rates)  # no two replicas alike
        fair = mean(rates.values())
        if fair > 0:
            assert all(0.6 * fair <= r <= 1.4 * fair for r in rates.values()), (svc, rates)


@pytest.mark.parametrize("app", APPS)
def test_working_set_moves_from_sample_to_sample_and_pod_to_pod(catalog, app):
    runner = _run(catalog, app, faults=False)["runner"]
    rows = _query(
        runner,
        "container_memory_working_set_bytes",
        group_by=["pod", "container"],
        start_s=HEALTHY_END - 1800 + 15,
        end_s=HEALTHY_END,
        step_s=15,
    )
    assert rows
    means: dict[str, list[float]] = {}
    for r in rows:
        vals = [v for _, v in r["values"] if v]
        assert len(vals) >= 100, r["labels"]
        assert len(set(vals)) >= 0.8 * len(vals), (r["labels"], vals[:5])  # not one byte count
        assert max(vals) - min(vals) < 0.25 * mean(vals), r["labels"]  # noise and GC, not a trend
        means.setdefault(r["labels"]["container"], []).append(mean(vals))
    for svc, per_pod in means.items():
        assert len(set(per_pod)) == len(per_pod), svc  # replicas differ


RUNTIME_OF = {"Java": "jvm", "Kotlin": "jvm", "Go": "go"}


@pytest.mark.parametrize("app", APPS)
def test_memory_baselines_follow_the_runtime_and_stay_below_the_limit(catalog, app):
    """Containers idle at varied shares of their limit (JVMs high, Go low), none near the limit, and
    a healthy cluster raises no memory or CPU saturation alert."""
    runner = _run(catalog, app, faults=False)["runner"]
    window = {"start_s": HEALTHY_END - 900, "end_s": HEALTHY_END, "step_s": 15}
    ws = _query(runner, "container_memory_working_set_bytes", group_by=["pod", "container"], **window)
    limits = _query(runner, "container_spec_memory_limit_bytes", group_by=["pod"], **window)
    limit = {r["labels"]["pod"]: r["values"][-1][1] for r in limits}
    share: dict[str, list[float]] = {}
    for r in ws:
        lim = limit.get(r["labels"]["pod"])
        if not lim:
            continue
        vals = [v for _, v in r["values"] if v]
        assert max(vals) < 0.85 * lim, (r["labels"], max(vals) / lim)
        share.setdefault(r["labels"]["container"], []).append(mean(vals) / lim)
    per_svc = {s: mean(v) for s, v in share.items()}
    assert max(per_svc.values()) - min(per_svc.values()) >= 0.3, per_svc
    assert min(per_svc.values()) < 0.3, per_svc
    app_model = catalog.app(app)
    by_runtime: dict[str, list[float]] = {}
    for s, v in per_svc.items():
        rt = RUNTIME_OF.get(app_model.service(s).language)
        if rt:
            by_runtime.setdefault(rt, []).append(v)
    assert mean(by_runtime["jvm"]) > mean(by_runtime["go"]) + 0.2, by_runtime
    res = runner.call({"tool": "get_alerts"})
    assert res.ok
    saturation = {a["rule"] for a in res.data["alerts"]} & {
        "ContainerMemoryNearLimit",
        "ContainerMemoryAtLimit",
        "ContainerCPUNearLimit",
        "ContainerOOMEvents",
    }
    assert not saturation, saturation


COUNTS = (
    "container_cpu_cfs_periods_total",
    "container_cpu_cfs_throttled_periods_total",
    "container_oom_events_total",
    "kube_pod_container_status_restarts_total",
)


@pytest.mark.parametrize("app", APPS)
def test_counters_of_counts_are_integers(catalog, app):
    runner = _run(catalog, app, faults=True)["runner"]
    window = {"start_s": 15, "end_s": RUN_END, "step_s": 15}
    for metric in COUNTS:
        for r in _query(runner, metric, group_by=["pod"], **window):
            fractional = [(t, v) for t, v in r["values"] if v is not None and v != round(v)]
            assert not fractional, (metric, r["labels"], fractional[:3])
    cpu = _query(runner, "container_cpu_usage_seconds_total", group_by=["pod"], **window)
    assert any(v is not None and v != round(v) for r in cpu for _, v in r["values"])  # seconds: a float


@pytest.mark.parametrize("app", APPS)
def test_pod_uid_is_one_uuid_shown_by_metrics_and_events(catalog, app):
    runner = _run(catalog, app, faults=True)["runner"]
    rows = _query(runner, "kube_pod_info", group_by=["pod", "uid"], start_s=RUN_END - 600, end_s=RUN_END)
    uid = {r["labels"]["pod"]: r["labels"]["uid"] for r in rows}
    assert uid and all(UUID4.match(u) for u in uid.values()), list(uid.values())[:3]
    assert len(set(uid.values())) == len(uid)
    backoffs = 0
    for e in _k8s(runner, "events"):  # each crash-looping pod's uid, as its own series says
        m = BACKOFF.match(e["message"])
        if m:
            own = _query(runner, "kube_pod_info", group_by=["pod", "uid"], start_s=0, end_s=RUN_END,
                         matchers={"pod": m.group(1)})  # fmt: skip
            assert [r["labels"]["uid"] for r in own] == [m.group(2)], e
            backoffs += 1
            if backoffs >= 5:
                break
    assert backoffs > 0  # crash loops happened, and their events name the metrics' uid
    for metric in ("kube_pod_status_ready", "kube_pod_container_status_restarts_total"):
        for r in _query(runner, metric, group_by=["pod", "uid"], start_s=RUN_END - 600, end_s=RUN_END):
            if r["labels"]["pod"] in uid:
                assert r["labels"]["uid"] == uid[r["labels"]["pod"]], (metric, r["labels"])


def _node_names(run: dict) -> set[str]:
    return set(run["nodes"][-1][1])


@pytest.mark.parametrize("app", APPS)
def test_series_carry_their_scrape_target(catalog, app):
    run = _run(catalog, app, faults=True)
    runner, nodes = run["runner"], _node_names(run)
    window = {"start_s": RUN_END - 300, "end_s": RUN_END}
    ksm = set()
    families = {
        "kube_pod_info": "kube-state-metrics",
        "kube_pod_status_phase": "kube-state-metrics",
        "kube_pod_container_resource_limits": "kube-state-metrics",
        "kube_deployment_spec_replicas": "kube-state-metrics",
        "kube_node_status_condition": "kube-state-metrics",
        "kube_node_labels": "kube-state-metrics",
        "container_cpu_usage_seconds_total": "kubernetes-nodes-cadvisor",
        "container_memory_working_set_bytes": "kubernetes-nodes-cadvisor",
        "container_spec_memory_limit_bytes": "kubernetes-nodes-cadvisor",
        "probe_success": "blackbox",
        "traces_span_metrics_calls_total": "otel-collector",
    }
    if app == "astronomy_shop":
        families["app_frontend_requests_total"] = "otel-collector"
    for metric, job in families.items():
        rows = _query(runner, metric, group_by=["job", "instance", "node"], **window)
        assert rows, metric
        for r in rows:
            lab = r["labels"]
            assert lab["job"] == job, (metric, lab)
            if job == "kube-state-metrics":
                assert re.fullmatch(r"\d+\.\d+\.\d+\.\d+:8080", lab["instance"]), lab
                ksm.add(lab["instance"])
            elif job == "kubernetes-nodes-cadvisor":
                assert lab["instance"] == lab["node"] and lab["instance"] in nodes, lab
            else:
                assert lab["instance"], (metric, lab)
    assert len(ksm) == 1  # one kube-state-metrics target


@pytest.mark.parametrize("app", APPS)
def test_up_per_scrape_target_follows_the_node(catalog, app):
    """`up` per target: 1 for kube-state-metrics, the collector and the blackbox exporter; per node,
    the kubelet's cAdvisor target is down exactly while `get_k8s_state nodes` says NotReady, and its
    container series have no samples then."""
    run = _run(catalog, app, faults=True)
    runner, nodes = run["runner"], _node_names(run)
    rows = _query(runner, "up", group_by=["job", "instance"], start_s=60, end_s=RUN_END, step_s=60)
    by_job: dict[str, dict[str, list]] = {}
    for r in rows:
        by_job.setdefault(r["labels"]["job"], {})[r["labels"]["instance"]] = r["values"]
    assert set(by_job) == {"kube-state-metrics", "otel-collector", "blackbox", "kubernetes-nodes-cadvisor"}
    assert len(by_job["blackbox"]) == len(catalog.app(app).services)
    for job in ("kube-state-metrics", "otel-collector", "blackbox"):
        assert all(v == 1 for vals in by_job[job].values() for _, v in vals), job
    cadvisor = by_job["kubernetes-nodes-cadvisor"]
    assert set(cadvisor) == nodes
    status = dict(run["nodes"])
    down = 0
    for node, vals in cadvisor.items():
        for t, v in vals:
            expected = 1 if status[t][node] == "Ready" else 0
            assert v == expected, (node, t, v, status[t][node])
            down += expected == 0
    sched = FaultSchedule.generate(catalog, app, catalog.leaderboard.seed_for(app))
    fails_a_node = any(
        f.mechanism in ("node_failure", "zone_failure") and f.start_s < RUN_END - 120 for f in sched.faults
    )
    assert (down > 0) == fails_a_node  # the check above is not vacuous where a node fails
    # a failed scrape leaves no cAdvisor sample (staleness, not the last value) while the node is down
    for node, vals in cadvisor.items():
        down_at = {t for t, v in vals if v == 0}
        if not down_at:
            continue
        rows = _query(
            runner,
            "container_memory_working_set_bytes",
            matchers={"node": node},
            group_by=["pod"],
            start_s=60,
            end_s=RUN_END,
            step_s=60,
        )
        assert rows
        assert all(v is None for r in rows for t, v in r["values"] if t in down_at), node
