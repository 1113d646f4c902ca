"""Executes tool calls against a backend: validation, policy, the call itself, and the record.

`ToolRunner.call` never raises for anything the agent sends: malformed calls, unknown names,
forbidden operations, failed guards and backend failures (a live cluster's 403, 409 or timeout)
all come back as `ToolResult` errors and are recorded. Everything cluster-specific goes through a
`Backend` (`backends/`): the embedded simulator's `SimBackend` or a live cluster's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backends.base import Backend
from ..core.clock import METRIC_STEP_S
from ..core.errors import (
    BackendError,
    BudgetExceededError,
    PatternError,
    PrometheusError,
    SREMarathonError,
    did_you_mean,
)
from ..core.patterns import compile_label_regex
from ..core.quantities import parse_quantity
from ..core.run_record import ActionRecord
from ..metrics.store import bucket_quantile
from . import promql
from .models import TOOL_KIND, ToolResult, parse_call
from .policy import check, incident_scope
from .safe_json import json_safe
from .workspace import IncidentStore, Workspace

MAX_POINTS_PER_SERIES = 11_000  # Prometheus' range-query resolution limit (points per series)
MAX_POINTS_PER_QUERY = 500_000  # series x points one query_metrics call may return
MAX_PROMQL_SERIES = 100  # result series one promql query shows (as the `function` path keeps)
FAILED_CALL_STR = 200  # characters of each string a refused call keeps in the record
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")  # Prometheus' label names (they go into PromQL selectors)


def parse_matchers(raw: dict[str, str], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The tools' label matchers (`"~re"` regex, `"!v"` not-equal, else equality) as store matchers.

    Regexes are compiled here once (RE2, bounded length and repetition) so that a bad one is the
    agent's `PatternError` on every backend, before any store or Prometheus server sees it."""
    out: dict[str, Any] = {}
    for k, v in raw.items():
        if k in skip:
            continue
        if not _LABEL_NAME.fullmatch(k):
            raise PatternError(f"invalid label name {k[:80]!r} in matchers: use [a-zA-Z_][a-zA-Z0-9_]*")
        if v.startswith("~"):
            compile_label_regex(v[1:], f"label {k!r}")
        out[k] = ("=~", v[1:]) if v.startswith("~") else ("!=", v[1:]) if v.startswith("!") else v
    return out


def _point(v: float) -> float | str | None:
    """A result value as JSON: rounded, NaN as null, infinities as Prometheus writes them."""
    v = float(v)
    if math.isnan(v):
        return None
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return round(v, 6)


def _points(times: Any, vals: Any) -> list[list]:
    """``[[t, _point(v)], ...]``, through `tolist` (Python floats, not a NumPy scalar per value: a
    dashboard reads tens of thousands of points per episode)."""
    ts = np.asarray(times, dtype=np.float64).tolist()
    return [[t, _point(v)] for t, v in zip(ts, np.asarray(vals, dtype=np.float64).tolist())]


def query_times(
    start: float, end: float, step_s: float, max_points: int = MAX_POINTS_PER_SERIES
) -> np.ndarray:
    """Evaluation times of a range query on the metric grid; too many points is the agent's to fix."""
    g = METRIC_STEP_S
    first = start - start % g + (g if start % g else 0)
    n = int(np.floor((end + 1e-9 - first) / step_s)) + 1 if end + 1e-9 >= first else 0
    if n > max_points:
        raise ValueError(
            f"this query would return {n} points per series (at most {max_points}): narrow "
            f"start_s/end_s or raise step_s (e.g. step_s >= {int(np.ceil((end - first) / (max_points - 1)))})"
        )
    return np.arange(first, end + 1e-9, step_s)


class ToolRunner:
    """Runs tool calls for one episode. `metrics` is where metric reads go: the backend's source
    (the simulator's store) by default, or any object with its read interface (e.g.
    `PrometheusMetrics`, which also answers raw PromQL)."""

    def __init__(self, backend: Backend, alert_engine: Any, metrics: Any = None):
        if not isinstance(backend, Backend):
            raise TypeError(
                f"ToolRunner needs a Backend (e.g. backends.SimBackend(simulator)), got "
                f"{type(backend).__name__}"
            )
        self.backend = backend
        self.alerts = alert_engine
        self._by_id: tuple[int | None, dict[str, Any]] = (None, {})  # `_alerts_by_id`
        self._metrics = metrics
        self.incidents = IncidentStore()
        self.workspace = Workspace()
        self.actions: list[ActionRecord] = []
        self.invocation = 0
        self.max_points = MAX_POINTS_PER_SERIES  # points per series of one query_metrics call
        self.max_query_points = MAX_POINTS_PER_QUERY
        # called before an intervention runs (an env on a shared world takes its own copy then)
        self.before_change: Callable[[], None] | None = None

    def rebind(self, backend: Backend, alert_engine: Any) -> None:
        """Read and act on another copy of the same world from now on (see `envs.shared_world`)."""
        self.backend, self.alerts = backend, alert_engine
        self._by_id = (None, {})

    # ------------------------------------------------------------ entry point
    def call(self, raw: Any) -> ToolResult:
        model, error = parse_call(raw)
        if model is None:
            assert error is not None
            args = json_safe(raw) if isinstance(raw, dict) else {"raw": json_safe(raw)}  # a copy, now
            self._record(error.tool, TOOL_KIND.get(error.tool, "read"), args, error, "invalid")
            return error
        name = model.tool  # type: ignore[attr-defined]
        kind = TOOL_KIND[name]
        args = model.model_dump(exclude={"tool"})
        verdict = check(model, kind, self.incidents.incidents)
        if not verdict.allowed:
            result = ToolResult.fail(name, verdict.code or "forbidden", verdict.reason)
            self._record(name, kind, args, result, verdict.code or "forbidden", model)
            return result
        if kind == "intervention" and self.before_change is not None:
            self.before_change()
        # what an intervention acts on, read BEFORE it runs (deleting a NetworkPolicy removes what names
        # its source)
        targets = sorted(self._targets(model)) if kind == "intervention" else None
        try:
            data = getattr(self, f"_{name}")(model)
            result = ToolResult(ok=True, tool=name, data=data)
        except BackendError as exc:  # a live cluster refused or failed: its code is the tool error code
            result = ToolResult.fail(name, exc.code, str(exc))
        except PatternError as exc:  # a regex or search pattern the engine refuses: the agent's to fix
            result = ToolResult.fail(name, "invalid_arguments", str(exc))
        except PrometheusError as exc:  # a malformed query is the agent's mistake; anything else an outage
            result = ToolResult.fail(
                name, "invalid_arguments" if isinstance(exc, ValueError) else "unavailable", str(exc)
            )
        except BudgetExceededError as exc:
            result = ToolResult.fail(name, "budget_exceeded", str(exc))
        except SREMarathonError as exc:
            code = "not_found" if "unknown" in str(exc) or "no " in str(exc) else "conflict"
            result = ToolResult.fail(name, code, str(exc))
        except (ValueError, KeyError) as exc:
            result = ToolResult.fail(name, "invalid_arguments", str(exc).strip("'\""))
        self._record(name, kind, args, result, "ok" if result.ok else "error", model, targets)
        return result

    def read(self, raw: Any) -> ToolResult:
        """Run a read-only call WITHOUT recording it: what an observation wrapper reads on the
        agent's behalf is the same tool output an agent would get, but the agent did not spend a
        call on it. Anything but a read (or a read the policy refuses) fails, unrecorded."""
        model, error = parse_call(raw)
        if model is None:
            assert error is not None
            return error
        name = model.tool  # type: ignore[attr-defined]
        if TOOL_KIND[name] != "read" or name == "workspace":  # the workspace is the agent's own notes
            return ToolResult.fail(name, "forbidden", "read() runs read-only tools only")
        verdict = check(model, "read", self.incidents.incidents)
        if not verdict.allowed:
            return ToolResult.fail(name, verdict.code or "forbidden", verdict.reason)
        try:
            return ToolResult(ok=True, tool=name, data=getattr(self, f"_{name}")(model))
        except (SREMarathonError, ValueError, KeyError) as exc:
            return ToolResult.fail(name, "invalid_arguments", str(exc))

    def _record(
        self,
        tool: str,
        kind: str,
        args: dict,
        result: ToolResult,
        verdict: str,
        model: Any = None,
        targets: list[str] | None = None,
    ) -> None:
        if not result.ok:  # a refused call keeps a short rendering of what it sent: the record stays small
            args = json_safe(args, max_str=FAILED_CALL_STR)
        extra: dict[str, Any] = {}
        if kind == "intervention" and model is not None:
            incident_id = getattr(model, "incident_id", None)
            extra["incident_id"] = incident_id
            extra["targets"] = targets if targets is not None else sorted(self._targets(model))
            inc = self.incidents.incidents.get(incident_id or "")
            if inc is not None:
                scope = incident_scope(inc, self._alerts_by_id(), self.backend.app, self._pod_service())
                extra["in_scope"] = bool(extra["targets"]) and set(extra["targets"]) <= scope
            else:
                extra["in_scope"] = False
        rec = ActionRecord(
            time_s=self.backend.now(),
            invocation=self.invocation,
            tool=tool,
            kind=kind,
            args=args,
            ok=result.ok,
            verdict=verdict,
            error=result.error.message if result.error else "",
            **extra,
        )
        self.actions.append(rec)

    def _targets(self, model: Any) -> set[str]:
        if model.tool == "cluster_op":
            be = self.backend
            try:
                if model.operation in ("cordon", "uncordon", "drain"):  # the node itself, and what runs on it
                    return {model.target} | be.services_on_node(model.target)
                if model.operation == "failover":
                    return {model.target, be.app.entry_point}
                if model.operation == "delete_network_policy":
                    src = be.policy_source(model.target)
                    return {src} if src else set()
            except BackendError:  # a live cluster that cannot be read now: the target alone
                return {model.target}
            return set()
        return {model.service}

    # ------------------------------------------------------------ helpers
    def _service(self, name: str | None) -> str | None:
        if name is not None:
            known = self.backend.service_names()
            if name not in known:
                raise KeyError(f"unknown service {name!r}{did_you_mean(name, known)}")
        return name

    def _window(
        self, start: float | None, end: float | None, default_s: float = 900.0
    ) -> tuple[float, float]:
        now = self.backend.now()
        end = now if end is None else min(end, now)
        start = max(0.0, end - default_s) if start is None else start
        if start > end:
            raise ValueError(f"start_s {start} is after end_s {end}")
        return start, end

    def _pod_service(self) -> dict[str, str]:
        try:
            return self.backend.pod_services()
        except BackendError:  # a live cluster that cannot list pods: scope from alert labels alone
            return {}

    def _alerts_by_id(self) -> dict[str, Any]:
        """Every fired alert by id; kept while the engine has not evaluated again (a source
        without an evaluation count is read anew each time). Do not modify it."""
        version = getattr(self.alerts, "evaluations", None)
        if version is None or self._by_id[0] != version:
            self._by_id = (version, {a.id: a for a in self.alerts.history()})
        return self._by_id[1]

    @staticmethod
    def _alert_view(a: Any) -> dict:
        return {
            "id": a.id,
            "rule": a.rule,
            "severity": a.severity,
            "labels": dict(a.labels),
            "annotations": dict(a.annotations),
            "fired_at": a.fired_at,
            "resolved_at": a.resolved_at,
        }

    # ------------------------------------------------------------ reads
    def _get_alerts(self, m: Any) -> dict:
        out = []
        for a in self.alerts.history():
            if m.since_s is not None and a.fired_at < m.since_s:
                continue
            if m.state == "firing" and a.resolved_at is not None:
                continue
            if m.state == "resolved" and a.resolved_at is None:
                continue
            out.append(a)
        return {
            "now": self.backend.now(),
            "count": len(out),
            "alerts": [self._alert_view(a) for a in out[-m.limit :]],
        }

    @property
    def metrics(self) -> Any:
        """The metric source reads go to (the backend's unless one was given)."""
        return self.backend.metrics if self._metrics is None else self._metrics

    def _query_metrics(self, m: Any) -> dict:
        store = self.metrics
        if store is None:
            raise BackendError("unavailable", "no metrics source configured for this backend")
        start, end = self._window(m.start_s, m.end_s, 900.0)
        if m.promql is not None:
            return self._promql(store, m, start, end)
        names = store.names()
        base = m.metric
        if m.function in ("p50", "p95", "p99"):
            base = m.metric.removesuffix("_bucket")
            if base + "_bucket" not in names:
                histograms = [n.removesuffix("_bucket") for n in names if n.endswith("_bucket")]
                raise KeyError(f"no histogram {base!r}{did_you_mean(base, histograms)}")
        elif m.metric not in names:
            raise KeyError(f"unknown metric {m.metric!r}{did_you_mean(m.metric, names)}")
        matchers = parse_matchers(m.matchers)
        times = query_times(start, end, m.step_s, self.max_points)
        if m.function in ("p50", "p95", "p99"):
            return self._quantile(base, matchers, m, times)
        ids = store.select(m.metric, matchers)
        if len(ids) == 0:
            return {"metric": m.metric, "series": []}
        groups: dict[tuple, list[int]] = {}
        for pos, sid in enumerate(ids.tolist()):
            lab = store.labels(int(sid))
            key = tuple((g, lab.get(g, "")) for g in m.group_by) if m.group_by else tuple(sorted(lab.items()))
            groups.setdefault(key, []).append(pos)
        kept = list(groups.items())[:100]
        if len(kept) * len(times) > self.max_query_points:
            raise ValueError(
                f"this query would return {len(kept)} series x {len(times)} points (at most "
                f"{self.max_query_points} points): narrow start_s/end_s, raise step_s, or "
                "select fewer series with matchers/group_by"
            )
        # one read per time over every selected series (one query per time for a Prometheus source)
        read = {
            "raw": lambda t: store.at(ids, t),
            "rate": lambda t: store.rate(ids, t, m.window_s),
            "increase": lambda t: store.increase(ids, t, m.window_s),
        }[m.function]
        columns = [np.asarray(read(float(t)), dtype=np.float64) for t in times]
        series = []
        for key, members in kept:
            vals = []
            for col in columns:
                v = col[members]
                v = v[~np.isnan(v)]
                vals.append(round(float(v.sum()), 6) if len(v) else None)
            series.append({"labels": dict(key), "values": [[float(t), v] for t, v in zip(times, vals)]})
        return {"metric": m.metric, "function": m.function, "series": series}

    def _promql(self, store: Any, m: Any, start: float, end: float) -> dict:
        """A PromQL range query: sent to Prometheus when the source is a server, else evaluated on
        the simulator's store (`tools.promql`) at the same steps as the `function` path."""
        unknown: list[str] = []
        if hasattr(store, "query_range"):
            rows = store.query_range(m.promql, start, end, m.step_s)
        else:
            times = query_times(start, end, m.step_s, self.max_points)
            if not times.size:
                raise ValueError(
                    f"[{start:g}, {end:g}] holds no evaluation time (metrics are on a {METRIC_STEP_S:g} s "
                    "grid): widen start_s/end_s"
                )
            rows = promql.query_range(store, m.promql, times)
            names = store.names()
            unknown = [
                f"unknown metric {n!r}{did_you_mean(n, names)}"
                for n in promql.metric_names(m.promql)
                if n not in names
            ]
        total = sum(len(t) for _, t, _ in rows[:MAX_PROMQL_SERIES])
        if total > self.max_query_points:
            raise ValueError(
                f"this query would return {min(len(rows), MAX_PROMQL_SERIES)} series with {total} points "
                f"(at most {self.max_query_points} points): narrow start_s/end_s, raise step_s, or "
                "aggregate (sum by (...))"
            )
        shown = rows[:MAX_PROMQL_SERIES]
        series = [{"labels": labels, "values": _points(times, vals)} for labels, times, vals in shown]
        # the range evaluated: a series holds points only where it has samples
        out: dict[str, Any] = {"promql": m.promql, "start_s": start, "end_s": end, "series": series}
        if unknown:  # PromQL answers an unknown name with nothing: say so
            out["warnings"] = unknown
        if len(rows) > MAX_PROMQL_SERIES:
            out["truncated"] = f"showing {MAX_PROMQL_SERIES} of {len(rows)} series: aggregate or filter"
        return out

    def _quantile(self, base: str, matchers: dict, m: Any, times: np.ndarray) -> dict:
        """histogram_quantile over `sum by (group_by, le)` of the bucket rates: one rate read over every
        selected bucket series per time (not one per bucket and group), then summed per (group, le)."""
        store = self.metrics
        q = {"p50": 0.5, "p95": 0.95, "p99": 0.99}[m.function]
        ids = store.select(base + "_bucket", matchers)
        groups: dict[tuple, dict[str, list[int]]] = {}
        for pos, sid in enumerate(ids):
            lab = store.labels(int(sid))
            key = tuple((g, lab.get(g, "")) for g in m.group_by)
            groups.setdefault(key, {}).setdefault(lab["le"], []).append(pos)
        kept = list(groups.items())[:100]
        if len(kept) * len(times) > self.max_query_points:
            raise ValueError(
                f"this query would return {len(kept)} series x {len(times)} points (at most "
                f"{self.max_query_points} points): "
                "narrow start_s/end_s, raise step_s, or group by fewer labels"
            )
        if not kept:
            return {"metric": base, "function": m.function, "unit": "same as buckets", "series": []}
        # one column per (group, le) summing its member series (NaN counts as 0, like nansum)
        cols: list[tuple[int, list[str]]] = []
        member_rows: list[list[int]] = []
        for gi, (_, by_le) in enumerate(kept):
            les = sorted(by_le, key=lambda x: float("inf") if x == "+Inf" else float(x))
            cols.append((gi, les))
            member_rows += [by_le[le] for le in les]
        rates = (
            np.stack(
                [
                    np.nan_to_num(np.asarray(store.rate(ids, float(t), m.window_s), dtype=np.float64))
                    for t in times
                ]
            )
            if len(times)
            else np.zeros((0, len(ids)))
        )
        # [times, (group, le)]: the same per-row sums (and summation order) as nansum over each member list
        summed = np.stack([rates[:, members].sum(axis=1) for members in member_rows], axis=1)
        series, j = [], 0
        for (key, _), (_, les) in zip(kept, cols):
            block = summed[:, j : j + len(les)]
            j += len(les)
            qs = bucket_quantile(q, block, np.array([float(le) for le in les])) if len(times) else np.zeros(0)
            vals = [None if np.isnan(v) else round(float(v), 3) for v in qs]
            series.append({"labels": dict(key), "values": [[float(t), v] for t, v in zip(times, vals)]})
        return {"metric": base, "function": m.function, "unit": "same as buckets", "series": series}

    def _search_logs(self, m: Any) -> dict:
        start, end = self._window(m.start_s, m.end_s, 600.0)
        recs = self.backend.search_logs(self._service(m.service), start, end, m.query, m.level, m.limit)
        return {"count": len(recs), "logs": recs}

    def _get_traces(self, m: Any) -> dict:
        if m.trace_id:
            return {"traces": self.backend.traces(m.trace_id, None, 0.0, 0.0, None, None, 1)}
        start, end = self._window(m.start_s, m.end_s, 600.0)
        return {
            "traces": self.backend.traces(
                None, self._service(m.service), start, end, m.min_duration_ms, m.status, m.limit
            )
        }

    def _get_topology(self, m: Any) -> dict:
        app = self.backend.app
        return {
            "app": app.display_name,
            "namespace": app.namespace,
            "entry_point": app.entry_point,
            "zones": {z.name: z.nodes for z in app.zones},
            "cross_zone_latency_ms": app.cross_zone_latency_ms,
            "services": [
                {"name": s.name, "language": s.language, "kind": s.kind, "port": s.port} for s in app.services
            ],
            "edges": [{"from": e.source, "to": e.target, "protocol": e.protocol} for e in app.edges],
            "request_types": [
                {"name": r.name, "method": r.method, "endpoint": r.endpoint, "services": r.services}
                for r in app.request_types
            ],
        }

    def _get_k8s_state(self, m: Any) -> dict:
        rows = self.backend.k8s_state(m.resource, self._service(m.service), m.limit)
        return {"resource": m.resource, "items": rows[: m.limit]}

    def _get_deploy_history(self, m: Any) -> dict:
        rows = self.backend.deploy_history(self._service(m.service), m.since_s)
        return {"count": len(rows), "changes": rows[-m.limit :]}

    def _read_source(self, m: Any) -> dict:
        return self.backend.source(self._service(m.service), m.path)

    def _read_config(self, m: Any) -> dict:
        return self.backend.service_config(self._service(m.service))

    def _workspace(self, m: Any) -> dict:
        ws = self.workspace
        if m.op == "list":
            return {
                "keys": sorted(ws.notes),
                "incidents": [i.view() for i in self.incidents.incidents.values()],
            }
        if not m.key:
            raise ValueError(f"workspace {m.op} needs a key")
        if m.op == "read":
            if m.key not in ws.notes:
                raise KeyError(f"no note {m.key!r}{did_you_mean(m.key, ws.notes)}")
            return {"key": m.key, "text": ws.notes[m.key]}
        if m.op == "write":
            ws.write(m.key, m.text or "")
            return {"key": m.key, "chars": len(ws.notes[m.key])}
        ws.notes.pop(m.key, None)
        return {"deleted": m.key}

    # ------------------------------------------------------------ incidents
    def _check_alerts(self, ids: list[str]) -> None:
        known = self._alerts_by_id()
        bad = [a for a in ids if a not in known]
        if bad:
            raise KeyError(f"unknown alert id(s) {bad}{did_you_mean(bad[0], known)}")

    def _incident(self, inc_id: str):
        inc = self.incidents.incidents.get(inc_id)
        if inc is None:
            raise KeyError(f"unknown incident {inc_id!r}{did_you_mean(inc_id, self.incidents.incidents)}")
        return inc

    def _open_incident(self, m: Any) -> dict:
        self._check_alerts(m.alert_ids)
        return self.incidents.open(self.backend.now(), m.alert_ids, m.title).view()

    def _set_root_cause(self, m: Any) -> dict:
        inc = self._incident(m.incident_id)
        for s in m.services:
            self._service(s)
        self.incidents.set_root_cause(self.backend.now(), inc, m.services, m.artifact, m.summary)
        return inc.view()

    def _update_incident(self, m: Any) -> dict:
        inc = self._incident(m.incident_id)
        self._check_alerts(m.add_alert_ids)
        self.incidents.update(self.backend.now(), inc, m.add_alert_ids, m.remove_alert_ids, m.note)
        return inc.view()

    def _resolve_incident(self, m: Any) -> dict:
        inc = self._incident(m.incident_id)
        self.incidents.resolve(self.backend.now(), inc, m.note)
        return inc.view()

    # ------------------------------------------------------------ interventions
    def _rollback(self, m: Any) -> dict:
        return self.backend.rollback(m.service, m.revision)

    def _restart(self, m: Any) -> dict:
        return self.backend.restart(m.service)

    def _scale(self, m: Any) -> dict:
        return self.backend.scale(m.service, m.replicas)

    def _set_config(self, m: Any) -> dict:
        if m.key in ("resources.limits.cpu", "resources.limits.memory"):
            resource = m.key.rsplit(".", 1)[1]
            qty = parse_quantity(m.value, resource)
            if resource == "cpu":
                return self.backend.set_resources(m.service, cpu_limit_m=qty)
            return self.backend.set_resources(m.service, mem_limit_mi=qty)
        return self.backend.set_config(m.service, m.key, m.value)

    def _patch_source(self, m: Any) -> dict:
        return self.backend.patch_source(m.service, m.path, m.revision)

    def _cluster_op(self, m: Any) -> dict:
        be = self.backend
        if m.operation == "failover":
            return be.failover(m.target)
        if m.operation == "cordon":
            return be.cordon(m.target)
        if m.operation == "uncordon":
            return be.uncordon(m.target)
        if m.operation == "drain":
            return be.drain(m.target)
        if m.operation == "delete_network_policy":
            return be.delete_network_policy(m.target.removeprefix("networkpolicy/"))
        raise ValueError(f"unsupported operation {m.operation}")


__all__ = ["ToolRunner"]
