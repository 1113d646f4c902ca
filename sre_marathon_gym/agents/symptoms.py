"""Per-service telemetry over a recent window, and the before/after step test the change
correlator judges a change by.

Why a step test and not a threshold: in a marathon half a dozen faults overlap, so most services
are degraded at some point; a change is suspect only when its own service's signal was quiet
before it and moved, clearly and for good, right after it. A symptom that was already there, or
that starts long after the change, is someone else's.

Everything is read through `query_metrics` (PromQL range queries over every service at once: a
handful of calls per invocation whatever the number of changes) and indexed here by service.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from statistics import median
from typing import Any

from ..clock import METRIC_STEP_S

Series = list[tuple[float, float]]  # (time, value), time ascending

SERVER = 'span_kind="SPAN_KIND_SERVER"'
ERRORS = 'status_code="STATUS_CODE_ERROR"'
BAD_WAITING = "CrashLoopBackOff|ImagePullBackOff|ErrImagePull|CreateContainerConfigError|CreateContainerError"
# signal -> (PromQL, the label naming the workload); `{w}` is the rate window
QUERIES: dict[str, tuple[str, str]] = {
    "calls": (f"sum by (service_name) (rate(traces_span_metrics_calls_total{{{SERVER}}}[{{w}}]))", "service_name"),
    "errors": (
        f"sum by (service_name) (rate(traces_span_metrics_calls_total{{{SERVER}, {ERRORS}}}[{{w}}]))",
        "service_name",
    ),
    "latency": (
        f"sum by (service_name) (rate(traces_span_metrics_duration_milliseconds_sum{{{SERVER}}}[{{w}}])) / "
        f"sum by (service_name) (rate(traces_span_metrics_duration_milliseconds_count{{{SERVER}}}[{{w}}]))",
        "service_name",
    ),
    "restarts": ("sum by (container) (increase(kube_pod_container_status_restarts_total[2m]))", "container"),
    "waiting": (
        f'sum by (container) (kube_pod_container_status_waiting_reason{{reason=~"{BAD_WAITING}"}})',
        "container",
    ),
    "throttle": (
        "sum by (container) (rate(container_cpu_cfs_throttled_periods_total[{w}])) / "
        "sum by (container) (rate(container_cpu_cfs_periods_total[{w}]))",
        "container",
    ),
    "not_ready": ('sum by (pod) (kube_pod_status_ready{condition="false"})', "pod"),
    "limits": ("min by (container, resource) (kube_pod_container_resource_limits)", "container"),
    "replicas": ("sum by (deployment) (kube_deployment_spec_replicas)", "deployment"),
    "unschedulable": ("max by (node) (kube_node_spec_unschedulable)", "node"),
    "node_ready": ('min by (node) (kube_node_status_condition{condition="Ready", status="true"})', "node"),
    "pod_node": ("max by (pod, node) (kube_pod_info)", "pod"),
}
RATE_WINDOW = "1m"
BEFORE_S = 150.0  # how far back the baseline reaches: the state right before the change, not
# the last fault's (a service often recovers from one fault minutes before the next change)
READ_BEFORE_S = 600.0  # how far back the window is read (baselines, and changes dated in it)
MIN_CALLS = 0.05  # req/s below which a service's error ratio and latency say nothing


@dataclass(frozen=True)
class Rule:
    """When a signal has stepped up: above `floor` and above the baseline by `add` and by `times`."""

    add: float
    times: float
    floor: float
    hold: int  # consecutive samples the step must hold
    onset_s: float  # the step must start within this long of the change


RULES: dict[str, Rule] = {
    "error_ratio": Rule(add=0.05, times=2.0, floor=0.05, hold=3, onset_s=90),
    "latency": Rule(add=40.0, times=1.6, floor=0.0, hold=3, onset_s=90),
    "restarts": Rule(add=0.5, times=1.0, floor=0.5, hold=1, onset_s=300),  # leaks and OOM take a while
    "waiting": Rule(add=0.5, times=1.0, floor=0.5, hold=2, onset_s=180),
    "throttle": Rule(add=0.2, times=2.0, floor=0.25, hold=3, onset_s=90),
    "not_ready": Rule(add=0.5, times=1.0, floor=0.5, hold=8, onset_s=180),  # longer than any start-up
}


@dataclass(frozen=True)
class Step:
    """One signal of one service that stepped up after a change."""

    service: str
    signal: str
    onset_s: float
    before: float
    after: float

    def text(self) -> str:
        return f"{self.service} {self.signal} {self.before:.3g} -> {self.after:.3g} from t={self.onset_s:.0f}s"


class Telemetry:
    """The window's series, by signal and workload (services, nodes, pods' nodes)."""

    def __init__(self, call: Callable[[dict], Any], start_s: float, end_s: float, step_s: int, owner: Callable):
        start_s = start_s - start_s % step_s  # on the metric grid, so the series' samples fall on it
        self.start_s, self.end_s, self.step_s = start_s, end_s, step_s
        self.raw: dict[str, dict[str, Series]] = {}
        self.pod_node: dict[str, list[tuple[float, str]]] = {}  # node -> (time, service) of pods on it
        for name, (query, label) in QUERIES.items():
            res = call(
                {
                    "tool": "query_metrics",
                    "promql": query.replace("{w}", RATE_WINDOW),
                    "start_s": start_s,
                    "end_s": end_s,
                    "step_s": step_s,
                }
            )
            by: dict[str, Series] = {}
            for s in res.data["series"] if res.ok else []:
                labels = s["labels"]
                key = labels.get(label)
                if key is None:
                    continue
                points = [(float(t), float(v)) for t, v in s["values"] if v is not None]
                if name == "limits":
                    key = f"{key}/{labels.get('resource', '')}"
                if name == "pod_node":
                    svc = owner(key)
                    if svc is not None:
                        self.pod_node.setdefault(labels.get("node", ""), []).extend((t, svc) for t, _ in points)
                    continue
                if name == "not_ready":
                    key = owner(key)
                    if key is None:
                        continue
                by[key] = _add(by.get(key, []), points)
            self.raw[name] = by

    # ------------------------------------------------------------ derived per-service signals
    def series(self, signal: str, service: str) -> Series:
        """One signal of one service; error ratio and latency only where it serves traffic."""
        if signal == "error_ratio":
            calls = dict(self.raw["calls"].get(service, []))
            errors = dict(self.raw["errors"].get(service, []))
            return [(t, errors.get(t, 0.0) / c) for t, c in sorted(calls.items()) if c >= MIN_CALLS]
        if signal == "latency":
            calls = dict(self.raw["calls"].get(service, []))
            return [(t, v) for t, v in self.raw["latency"].get(service, []) if calls.get(t, 0.0) >= MIN_CALLS]
        if signal in ("restarts", "waiting", "not_ready"):  # counts: a missing sample is a zero
            have = dict(self.raw[signal].get(service, []))
            return [(t, have.get(t, 0.0)) for t in self.grid()]
        return self.raw.get(signal, {}).get(service, [])

    def grid(self) -> list[float]:
        n = int((self.end_s - self.start_s) // self.step_s)
        return [self.start_s + i * self.step_s for i in range(n + 1)]

    def value_at(self, signal: str, key: str, t: float) -> float | None:
        """The last sample of a raw series at or before `t`."""
        last = None
        for ts, v in self.raw.get(signal, {}).get(key, []):
            if ts > t:
                break
            last = v
        return last

    def services_on(self, node: str, t0: float, t1: float) -> set[str]:
        return {svc for t, svc in self.pod_node.get(node, []) if t0 <= t <= t1}

    def transition(self, signal: str, key: str, bad: Callable[[float], bool]) -> float | None:
        """When the current bad streak of a raw series started (None: it is not bad now, or the
        streak is older than the window)."""
        points = self.raw.get(signal, {}).get(key, [])
        if not points or not bad(points[-1][1]):
            return None
        start = None
        for t, v in reversed(points):
            if not bad(v):
                return start
            start = t
        return start if start is not None and start <= METRIC_STEP_S else None  # bad since the run began

    def calls_dropped(self, service: str, at_s: float, now: float) -> Step | None:
        """The service stopped serving after `at_s`: its request rate fell below a third of before."""
        calls = self.raw["calls"].get(service, [])
        before = [v for t, v in calls if at_s - BEFORE_S <= t < at_s - 10]
        if len(before) < 4 or median(before) < 0.2:
            return None
        have = dict(calls)
        after = [(t, have.get(t, 0.0)) for t in self.grid() if at_s + 30 <= t <= now]
        b = median(before)
        low = [t for t, v in after if v < b / 3]
        if len(after) >= 4 and len(low) >= 0.8 * len(after) and low[0] <= at_s + 120:
            return Step(service, "request_rate_drop", low[0], b, median(v for _, v in after))
        return None

    def step(self, signal: str, service: str, at_s: float, now: float) -> Step | None:
        """Whether `signal` of `service` stepped up after `at_s` (quiet before, held after)."""
        rule = RULES[signal]
        points = self.series(signal, service)
        before = [v for t, v in points if at_s - BEFORE_S <= t < at_s - 10]
        if len(before) < 4:
            return None  # no baseline: nothing to compare with
        base = median(before)
        limit = max(rule.floor, base + rule.add, base * rule.times)
        if sum(v > limit for v in before) > 0.1 * len(before):
            return None  # the symptom was there before the change
        after = [(t, v) for t, v in points if at_s - 10 <= t <= now]
        run = 0
        for i, (t, v) in enumerate(after):
            run = run + 1 if v > limit else 0
            if run == rule.hold:
                onset = after[i - rule.hold + 1][0]
                if onset > at_s + rule.onset_s:
                    return None
                held = median(x for ts, x in after if ts >= onset)
                return Step(service, signal, onset, base, held) if held > limit else None
        return None


    def rose(self, signal: str, service: str, at_s: float, now: float) -> bool:
        """Whether `signal` of `service` rose around `at_s` (by the signal's rule, however high it
        already was): the test of a dependency that may have passed its failure up."""
        rule = RULES[signal]
        points = self.series(signal, service)
        before = [v for t, v in points if at_s - 240 <= t < at_s - 2 * METRIC_STEP_S]
        after = [v for t, v in points if at_s - METRIC_STEP_S <= t <= min(now, at_s + 120)]
        if not before or len(after) < 2:
            return False
        b, a = median(before), median(after)
        return a > b + rule.add and a > b * rule.times


def _add(a: Series, b: Series) -> Series:
    """Sum two series sample by sample (pods of one service)."""
    out = dict(a)
    for t, v in b:
        out[t] = out.get(t, 0.0) + v
    return sorted(out.items())


__all__ = ["QUERIES", "RULES", "Rule", "Step", "Telemetry"]
