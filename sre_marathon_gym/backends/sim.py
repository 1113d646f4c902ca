"""`SimBackend`: the embedded simulator behind the `Backend` protocol (the default backend).

Why thin: the simulator already models the cluster; this adapter only renders its objects as the
rows the tools return and forwards interventions and faults, so tool results stay exactly what
they were before the protocol existed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any

from ..catalog import load_catalog
from ..catalog.faults import Fault
from ..core.clock import Epoch
from ..core.errors import did_you_mean
from ..core.plain import record_dict
from ..sim.simulator import Simulator


class SimBackend:
    """Adapts a `Simulator` (its cluster, pipeline, telemetry and interventions)."""

    def __init__(self, sim: Simulator):
        self.sim = sim
        self.app = sim.app

    # ------------------------------------------------------------ time and telemetry
    def now(self) -> float:
        return self.sim.now

    @property
    def metrics(self) -> Any:
        return self.sim.store

    def view_at(self, now_s: float) -> SimBackend:
        """This run with its clock read as `now_s`: read windows default to end there (a recorded run
        seen at a task's horizon). The simulator is shared, not copied: use the view for reads only."""
        return _ViewAt(self.sim, now_s)

    def request_type_stats(self) -> dict[str, tuple[float, float]]:
        """Per user-facing request type, the traffic model's expected failure share and mean latency
        (ms) in the last tick: deterministic given the cluster state (no sampled noise)."""
        res = self.sim.last
        if res is None:
            raise ValueError("the simulator has not ticked yet")
        return {
            rt.name: (float(res.rt_fail[i]), float(res.rt_latency_ms[i]))
            for i, rt in enumerate(self.sim.app.request_types)
        }

    def flag_timeline(self) -> Any:
        """The flag variants this run deployed over time (`sim.flag_events.FlagTimeline`)."""
        from ..sim.flag_events import FlagTimeline

        return FlagTimeline(self.sim)

    # ------------------------------------------------------------ reads
    def service_names(self) -> list[str]:
        return list(self.sim.cluster.deployments)

    def pod_services(self) -> dict[str, str]:
        return {p.name: p.service for p in self.sim.cluster.pods.values()}

    def services_on_node(self, node: str) -> set[str]:
        return {p.service for p in self.sim.cluster.pods.values() if p.node == node}

    def policy_source(self, name: str) -> str | None:
        pol = self.sim.cluster.network_policies.get(name)
        return pol.source if pol else None

    def k8s_state(self, resource: str, service: str | None, limit: int) -> list[dict]:
        cl, svc = self.sim.cluster, service
        if resource == "pods":
            return [
                {
                    "name": p.name,
                    "status": cl.pod_status(p),
                    "ready": f"{int(p.ready)}/1",
                    "restarts": p.restarts,
                    "node": p.node,
                    "zone": p.zone,
                    "revision": p.revision,
                    "age_s": round(self.sim.now - p.created_s),
                    "last_terminated_reason": p.last_terminated_reason,
                }
                for p in sorted(cl.pods.values(), key=lambda p: p.name)
                if svc is None or p.service == svc
            ]
        if resource == "deployments":
            rows = []
            for name, dep in sorted(cl.deployments.items()):
                if svc is not None and name != svc:
                    continue
                pods = cl.pods_of(name)
                desired = sum(n for _, n in dep.spec.replicas)
                rows.append(
                    {
                        "name": name,
                        "ready": f"{sum(p.ready for p in pods)}/{desired}",
                        "up_to_date": sum(p.revision == dep.current.number for p in pods),
                        "revision": dep.current.number,
                        "image": dep.spec.image,
                        "history": [
                            {"revision": r.number, "time_s": r.time_s, "cause": r.cause}
                            for r in dep.revisions[-10:]
                        ],
                    }
                )
            return rows
        if resource == "events":
            return [record_dict(e) for e in cl.events if svc is None or svc in e.object][-limit:]
        if resource == "nodes":
            return [
                {
                    "name": n.name,
                    "zone": n.zone,
                    "status": "Ready" if n.ready else "NotReady",
                    "schedulable": not n.unschedulable,
                }
                for n in cl.nodes.values()
            ]
        if resource == "networkpolicies":
            return [
                {"name": p.name, "pod_selector": p.source, "denies_egress_to": p.target}
                for p in cl.network_policies.values()
            ]
        return [{"name": k, "data": dict(v)} for k, v in cl.configmaps.items()]

    def deploy_history(self, service: str | None, since_s: float | None) -> list[dict]:
        now, rows = self.sim.now, []
        for r in self.sim.pipeline.visible(now):
            if (service is None or r.service == service) and (since_s is None or r.submitted_s >= since_s):
                stages = {k: v for k, v in r.stages.items() if v <= now}
                rows.append(
                    {
                        "id": r.id,
                        "service": r.service,
                        "kind": r.kind,
                        "message": r.message,
                        "diff": r.diff,
                        "author": r.author,
                        "submitted_s": r.submitted_s,
                        "stages": stages,
                        "revision": r.revision,
                        "status": r.status if stages else "queued",
                    }
                )
        return rows

    def service_config(self, service: str) -> dict:
        dep = self.sim.cluster.deployments[service]
        s = self.sim.app.service(service)
        cms = sorted({c.configmap for c in s.config if c.source == "configmap" and c.configmap})
        return {
            "service": service,
            "revision": dep.current.number,
            "image": dep.spec.image,
            "env": dict(dep.spec.env),
            "configmaps": {cm: dict(self.sim.cluster.configmaps.get(cm, {})) for cm in cms},
            "resources": {
                "limits": {
                    "cpu": f"{dep.spec.cpu_limit_m}m" if dep.spec.cpu_limit_m else None,
                    "memory": f"{dep.spec.mem_limit_mi}Mi" if dep.spec.mem_limit_mi else None,
                }
            },
            "replicas": dict(dep.spec.replicas),
            "readiness_probe_path": dep.spec.readiness_path,
            "readiness_probe_timeout_s": dep.spec.readiness_timeout_s,
        }

    def source(self, service: str, path: str | None) -> dict:
        spec = self.sim.cluster.deployments[service].spec
        files = {f.path: f for f in self.sim.app.service(service).sources}
        deployed = dict(spec.code)
        if path is None:
            return {"service": service, "files": [{"path": p, "revision": deployed.get(p)} for p in files]}
        if path not in files:
            raise KeyError(f"{service} has no source file {path!r}{did_you_mean(path, files)}")
        f = files[path]
        changes = [
            r
            for r in self.sim.pipeline.visible(self.sim.now)
            if r.kind == "code"
            and r.service == service
            and r.artifact.startswith(f"{service}:{path}@")
            and r.status == "deployed"
        ]
        return {
            "service": service,
            "path": path,
            "deployed_revision": deployed.get(path),
            "base_revision": f.revision,
            "text": f.excerpt,
            "changes_since_base": [
                {"message": r.message, "diff": r.diff, "revision": r.artifact.rsplit("@", 1)[1]}
                for r in changes
            ],
        }

    def search_logs(
        self,
        service: str | None,
        start_s: float,
        end_s: float,
        query: str | None,
        level: str | None,
        limit: int,
        with_ids: bool = False,
    ) -> list[dict]:
        """`with_ids`: each line also carries a citable `id` that `log_line` resolves."""
        from ..sim.log_search import search_logs

        if self.sim.logctx is None:
            raise ValueError("logs are disabled in this environment")
        if with_ids:
            pairs = search_logs(
                self.sim.logctx,
                self.sim.app,
                service,
                start_s,
                end_s,
                query,
                level,
                limit,
                with_positions=True,
            )
            return [{"id": _log_id(k, s, i, r), **record_dict(r)} for r, (k, s, i) in pairs]
        recs = search_logs(self.sim.logctx, self.sim.app, service, start_s, end_s, query, level, limit)
        return [record_dict(r) for r in recs]

    def log_line(self, log_id: str) -> dict | None:
        """The log line a citable id names (`search_logs(..., with_ids=True)`), or None when the id is
        malformed, unknown or edited.

        An id is the line's position (sample, service, index among that sample's lines) plus a
        checksum of its text, so it resolves by regenerating one sample's lines."""
        rec = self.sim.logctx
        parts = str(log_id).strip().split("-")
        if rec is None or len(parts) != 5 or parts[0] != "log":
            return None
        try:
            k, s, i = int(parts[1]), int(parts[2]), int(parts[3])
        except ValueError:
            return None
        p = rec.position_of(k)
        if p is None or not 0 <= s < rec.S:
            return None
        lines = rec.lines(p, s, 0)
        if not 0 <= i < len(lines) or _log_id(k, s, i, lines[i]) != log_id.strip():
            return None
        return record_dict(lines[i])

    def traces(
        self,
        trace_id: str | None,
        service: str | None,
        start_s: float,
        end_s: float,
        min_duration_ms: float | None,
        status: str | None,
        limit: int,
    ) -> list[dict]:
        from ..sim.traces import find_traces, get_trace

        if self.sim.logctx is None:
            raise ValueError("traces are disabled in this environment")
        if trace_id:
            return [record_dict(get_trace(self.sim.logctx, trace_id))]
        found = find_traces(
            self.sim.logctx, self.sim.app, start_s, end_s, service, min_duration_ms, status, limit
        )
        return [record_dict(t) for t in found]

    # ------------------------------------------------------------ interventions
    def rollback(self, service: str, revision: int | None) -> dict:
        return self.sim.act.rollback(service, revision)

    def restart(self, service: str) -> dict:
        return self.sim.act.restart(service)

    def scale(self, service: str, replicas: int) -> dict:
        return self.sim.act.scale(service, replicas)

    def set_config(self, service: str, key: str, value: str) -> dict:
        return self.sim.act.set_config(service, key, value)

    def set_resources(
        self, service: str, cpu_limit_m: int | None = None, mem_limit_mi: int | None = None
    ) -> dict:
        return self.sim.act.set_resources(service, cpu_limit_m=cpu_limit_m, mem_limit_mi=mem_limit_mi)

    def patch_source(self, service: str, path: str, revision: str | None) -> dict:
        return self.sim.act.patch_source(service, path, revision)

    def failover(self, zone: str) -> dict:
        return self.sim.act.failover(zone)

    def cordon(self, node: str) -> dict:
        return self.sim.act.cordon(node)

    def uncordon(self, node: str) -> dict:
        return self.sim.act.uncordon(node)

    def drain(self, node: str) -> dict:
        return self.sim.act.drain(node)

    def delete_network_policy(self, name: str) -> dict:
        return self.sim.act.delete_network_policy(name)

    # ------------------------------------------------------------ faults
    def supports(self, fault: Fault) -> bool:
        return fault.app == self.app.app

    def inject(self, fault: Fault) -> str:
        self.sim.inject(fault)
        return fault.id

    def revert(self, handle: str) -> None:
        self.sim.revert(handle)


class _ViewAt(SimBackend):
    """`SimBackend.view_at`: only the clock differs."""

    def __init__(self, sim: Simulator, now_s: float):
        super().__init__(sim)
        self._now = float(now_s)

    def now(self) -> float:
        return self._now


def _log_id(k: int, s: int, i: int, rec: Any) -> str:
    h = hashlib.sha256(f"{k}:{s}:{i}:{rec.timestamp}:{rec.message}".encode()).hexdigest()[:8]
    return f"log-{k}-{s}-{i}-{h}"


def entry_span_name(method: str, endpoint: str) -> str:
    """The span name of a request type at the entry point (`GET /api/cart`, see `sim.op_names`)."""
    from ..sim.op_names import route_name

    return route_name(method, endpoint)


def flag_log_markers(flag: str) -> tuple[str, ...]:
    """Text only this feature flag's simulated log lines contain (the demo's own log and error strings)."""
    from ..sim.log_text import FLAG_ADDRESS, FLAG_CALLER_PREFIX, FLAG_ERROR, FLAG_LINES

    out = [msg.split("{")[0].strip() for _, _, msg in FLAG_LINES.get(flag, [])]
    if flag in FLAG_ERROR:
        out.append(FLAG_ERROR[flag][1].split("{")[0].strip())
    if flag in FLAG_CALLER_PREFIX:
        out.append(FLAG_CALLER_PREFIX[flag].strip().rstrip(":"))
    if flag in FLAG_ADDRESS:
        out.append(FLAG_ADDRESS[flag])
    return tuple(m for m in out if m)


def run_flag_schedule(
    app: str,
    seed: int,
    changes: Iterable[tuple[float, str, str]],
    end_s: float,
    *,
    load_profile: Callable[[float], float] | None = None,
    epoch: Epoch | None = None,
    telemetry: bool = True,
    on_change: Callable[[float], None] | None = None,
    request_mult: dict[str, float] | None = None,
    flag_table: dict[str, list[tuple[str, str, dict]]] | None = None,
    rare_error_traces: bool = False,
    flag_impressions: bool = False,
) -> SimBackend:
    """Simulate `app` from t = 0 to `end_s`, shipping each feature-flag change `(time_s, flag, value)`
    through flagd's CI pipeline when its time comes (`on_change(now)` after each); returns the
    finished run. `load_profile` scales traffic over time, `epoch` dates rendered timestamps.

    A benchmark with its own world (ORCA) may also set: `request_mult`, per request type, a traffic
    multiplier on the catalog's mix; `flag_table`, its own flag intensities (`FLAG_BEHAVIOUR`'s
    shape); `rare_error_traces`, the trace store keeps failures rarer than one per sample;
    `flag_impressions`, flagd's impression counter (`sim.flag_impressions`)."""
    from ..sim.flag_impressions import Impressions, advance

    sim = Simulator(load_catalog(), app, seed, load_profile=load_profile, telemetry=telemetry, epoch=epoch)
    if flag_table is not None:
        sim.effects.flag_table = flag_table
    for name, mult in (request_mult or {}).items():
        sim.load_mult[list(sim.compiled.request_types).index(name)] *= float(mult)
    if rare_error_traces and sim.logctx is not None:
        sim.logctx.rare_error_traces = True
    imp = Impressions(sim) if flag_impressions and telemetry else None
    for time_s, flag, value in changes:
        advance(sim, time_s, imp)
        sim.ship_flag(flag, value, f"flagd: set {flag} to {value}", "", author="ci")
        if on_change is not None:
            on_change(sim.now)
    advance(sim, end_s, imp)
    return SimBackend(sim)


__all__ = ["SimBackend", "flag_log_markers", "run_flag_schedule"]
