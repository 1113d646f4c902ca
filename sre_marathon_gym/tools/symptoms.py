"""Per-service telemetry over a recent window, and the before/after step test the change
correlator judges a change by.

Why a step test and not a threshold: in a marathon half a dozen faults overlap, so most services
are degraded at some point; a change is suspect only when its own service's signal was quiet
right before the change and moved, clearly and for good, right after it. A symptom that was
already there, or that starts long after the change, is someone else's.

Everything is read through `query_metrics` (PromQL range queries over every service at once, the
series and labels the alert pack uses: span metrics for requests, kube-state-metrics and cAdvisor
for pods) and kept like a dashboard: each invocation reads only the samples since the last one.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from statistics import median
from typing import Any

from ..core.clock import METRIC_STEP_S

Series = list[tuple[float, float]]  # (time, value), time ascending

SERVER = 'span_kind="SPAN_KIND_SERVER"'
ERROR = "STATUS_CODE_ERROR"
BAD_WAITING = "CrashLoopBackOff|ImagePullBackOff|ErrImagePull|CreateContainerConfigError|CreateContainerError"
RATE_WINDOW = "1m"
# series -> (PromQL, the label naming the workload)
SPANS = "traces_span_metrics"
QUERIES: dict[str, tuple[str, str]] = {
    "calls": (  # by status: the total and the errors of the server spans in one read
        f"sum by (service_name, status_code) (rate({SPANS}_calls_total{{{SERVER}}}[{RATE_WINDOW}]))",
        "service_name",
    ),
    "duration": (  # ms per second: over the call rate, the mean latency
        f"sum by (service_name) (rate({SPANS}_duration_milliseconds_sum{{{SERVER}}}[{RATE_WINDOW}]))",
        "service_name",
    ),
    "restarts": ("sum by (container) (increase(kube_pod_container_status_restarts_total[2m]))", "container"),
    "waiting": (
        f'sum by (container) (kube_pod_container_status_waiting_reason{{reason=~"{BAD_WAITING}"}})',
        "container",
    ),
    "throttle": (
        f"sum by (container) (rate(container_cpu_cfs_throttled_periods_total[{RATE_WINDOW}])) / "
        f"sum by (container) (rate(container_cpu_cfs_periods_total[{RATE_WINDOW}]))",
        "container",
    ),
    "not_ready": (  # running but not ready: a pod waiting for room on a node says nothing of its spec
        'sum by (pod) (kube_pod_status_ready{condition="false"} '
        'unless on (pod) kube_pod_status_phase{phase="Pending"} == 1)',
        "pod",
    ),
    "replicas": ("sum by (deployment) (kube_deployment_spec_replicas)", "deployment"),
    "unschedulable": ("max by (node) (kube_node_spec_unschedulable)", "node"),
    "node_ready": ('min by (node) (kube_node_status_condition{condition="Ready", status="true"})', "node"),
}
BEFORE_S = 90.0  # the baseline: the state right before the change, not the last fault's (a service
# often recovers from one fault a minute or two before the next change)
QUIET_N = 2  # samples right before the change that must be below the step's limit (no symptom yet)
READ_BEFORE_S = 600.0  # how far before the oldest change of interest the window reaches
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
    "error_ratio": Rule(add=0.05, times=2.0, floor=0.08, hold=3, onset_s=90),
    "latency": Rule(add=40.0, times=1.6, floor=0.0, hold=3, onset_s=90),
    "restarts": Rule(add=0.5, times=1.0, floor=0.5, hold=1, onset_s=300),  # leaks and OOM take a while
    "waiting": Rule(add=0.5, times=1.0, floor=0.5, hold=2, onset_s=180),
    "throttle": Rule(add=0.2, times=2.0, floor=0.25, hold=3, onset_s=90),
    "not_ready": Rule(add=0.5, times=1.0, floor=0.5, hold=8, onset_s=90),  # held longer than any start-up
}


@dataclass(frozen=True)
class Step:
    """One signal of one service that stepped up after a change."""

    service: str
    signal: str
    onset_s: float
    before: float
    after: float
    ongoing: bool = True  # still there at the last sample

    def text(self) -> str:
        return (
            f"{self.service} {self.signal} {self.before:.3g} -> {self.after:.3g} from t={self.onset_s:.0f}s"
        )


class Telemetry:
    """The recent series by signal and workload, kept like a dashboard: each `update` reads only
    the samples since the last one (past samples do not change) and forgets those older than
    `keep_s`."""

    def __init__(self, keep_s: float, step_s: int = int(METRIC_STEP_S)):
        self.keep_s, self.step_s = keep_s, step_s
        self.start_s = self.end_s = 0.0
        self._data: dict[str, dict[str, dict[float, float]]] = {n: {} for n in (*QUERIES, "errors")}
        self._read = False
        self._series: dict[tuple[str, str], Series] = {}  # `series` until the next update
        self._times: dict[tuple[str, str], list[float] | None] = {}  # their times (None: not sorted)
        self._kept: dict[tuple[str, str], tuple[Series, float]] = {}  # a built series, the end_s it reaches

    def update(self, call: Callable[[dict], Any], now: float, owner: Callable[[str], str | None]) -> None:
        """Read the samples from the last update (or `keep_s` back) to `now`; `owner` maps a pod to
        its service."""
        self._series, self._times = {}, {}  # first: a read that fails half-way must not leave stale series
        kept, self._kept = self._kept, {}  # (nor series to extend)
        start = max(0.0, now - self.keep_s)
        if self._read:
            start = max(start, self.end_s + self.step_s)
        start -= start % self.step_s  # on the metric grid, where the samples are
        if start <= now:
            for name in QUERIES:
                self._merge(name, call, start, now, owner)
            for name in ("calls", "errors", "not_ready"):  # sums of several series: put back in time order
                by = self._data[name]
                for key, series in by.items():
                    by[key] = dict(sorted(series.items()))
        self._read, self.end_s = True, now
        self.start_s = max(0.0, now - self.keep_s)
        self.start_s -= self.start_s % self.step_s
        self._kept = kept
        for by in self._data.values():
            for key in list(by):
                series = by[key]
                while series and next(iter(series)) < self.start_s:  # samples are kept in time order
                    del series[next(iter(series))]
                if not series:
                    del by[key]

    def _merge(self, name: str, call: Callable, start: float, end: float, owner: Callable) -> None:
        query, label = QUERIES[name]
        res = call(
            {"tool": "query_metrics", "promql": query, "start_s": start, "end_s": end, "step_s": self.step_s}
        )
        for s in res.data["series"] if res.ok else []:
            labels = s["labels"]
            key = labels.get(label)
            if key is not None and name == "not_ready":
                key = owner(key)  # pods are counted per service
            if key is None:
                continue
            into = [self._data[name].setdefault(key, {})]
            if name == "calls" and labels.get("status_code") == ERROR:
                into.append(self._data["errors"].setdefault(key, {}))
            summed = name in ("calls", "not_ready")
            for t, v in s["values"]:
                if v is None:
                    continue
                for series in into:
                    series[float(t)] = series.get(float(t), 0.0) + float(v) if summed else float(v)

    # ------------------------------------------------------------ per-service signals
    def raw(self, name: str, key: str) -> Series:
        return list(self._data[name].get(key, {}).items())

    def series(self, signal: str, service: str) -> Series:
        """One signal of one service; error ratio and latency only where it serves traffic. Kept
        until the next update: every change of the service reads it again (do not modify it)."""
        hit = self._series.get((signal, service))
        if hit is None:
            hit = self._series[(signal, service)] = self._build_series(signal, service)
        return hit

    def window(self, signal: str, service: str, lo: float, hi: float, closed: bool = False) -> Series:
        """The points of `series` with lo <= t < hi (t <= hi if `closed`), by bisection: the step
        tests cut a few windows from every series for every change at every step."""
        points = self.series(signal, service)
        key = (signal, service)
        if key not in self._times:
            ts = [t for t, _ in points]
            self._times[key] = ts if ts == sorted(ts) else None
        ts = self._times[key]
        if ts is None:  # not in time order (no series is, but then the plain filter is right)
            return [(t, v) for t, v in points if lo <= t and (t <= hi if closed else t < hi)]
        return points[bisect_left(ts, lo) : bisect_right(ts, hi) if closed else bisect_left(ts, hi)]

    def _build_series(self, signal: str, service: str) -> Series:
        """The series, built once and then extended at each update by the samples read since (a
        time's point never changes once read: its samples all come in one update) and cut where
        the window now starts: rebuilding every series of every service at each update cost more
        than the step tests that read them."""
        per_time = signal in ("error_ratio", "latency")
        if not per_time and signal not in ("restarts", "waiting", "not_ready"):
            return self.raw(signal, service)
        key = (signal, service)
        kept = self._kept.get(key)
        # on an integral grid, a time is the same float whichever start_s it is counted from
        same_grid = per_time or (float(self.start_s).is_integer() and float(self.step_s).is_integer())
        if kept is None or kept[1] > self.end_s or not same_grid:
            out = self._points(signal, service, None)
        else:
            old, upto = kept
            cut = 0
            while cut < len(old) and old[cut][0] < self.start_s:
                cut += 1
            out = old[cut:] + self._points(signal, service, upto)
        self._kept[key] = (out, self.end_s)
        return out

    def _points(self, signal: str, service: str, after: float | None) -> Series:
        """The points of a series at the times after `after` (None: all the window's)."""
        if signal in ("error_ratio", "latency"):
            top = self._data["errors" if signal == "error_ratio" else "duration"].get(service, {})
            calls = self._data["calls"].get(service, {})
            if after is None:
                return [(t, top.get(t, 0.0) / c) for t, c in calls.items() if c >= MIN_CALLS]
            tail = []
            for t, c in reversed(calls.items()):  # in time order (`update` sorts the sums)
                if t <= after:
                    break
                if c >= MIN_CALLS:
                    tail.append((t, top.get(t, 0.0) / c))
            tail.reverse()
            return tail
        have = self._data[signal].get(service, {})  # counts: a missing sample is a zero
        grid = self.grid()
        return [(t, have.get(t, 0.0)) for t in (grid if after is None else grid[bisect_right(grid, after) :])]

    def grid(self) -> list[float]:
        n = int((self.end_s - self.start_s) // self.step_s)
        return [self.start_s + i * self.step_s for i in range(n + 1)]

    def keys(self, name: str) -> list[str]:
        return list(self._data[name])

    def transition(self, name: str, key: str, bad: Callable[[float], bool]) -> float | None:
        """When the current bad streak of a series started (None: it is not bad now, or the streak
        began before the window)."""
        points = self.raw(name, key)
        if not points or not bad(points[-1][1]):
            return None
        start = None
        for t, v in reversed(points):
            if not bad(v):
                return start
            start = t
        return start if start is not None and start <= METRIC_STEP_S else None  # bad since the run began

    def calls_dropped(self, service: str, at_s: float, now: float) -> Step | None:
        """The service stopped serving after `at_s`: its request rate fell below a third of before
        (no rollout's lag here: replicas removed stop serving at once)."""
        calls = self._data["calls"].get(service, {})
        before = [v for t, v in calls.items() if at_s - BEFORE_S <= t < at_s - 10]
        if len(before) < 4 or median(before) < 0.2:
            return None
        after = [(t, calls.get(t, 0.0)) for t in self.grid() if at_s + 30 <= t <= now]
        b = median(before)
        low = [t for t, v in after if v < b / 3]
        if len(after) >= 4 and len(low) >= 0.8 * len(after) and low[0] <= at_s + 120:
            ongoing = median(v for _, v in after[-4:]) < b / 3
            return Step(service, "request_rate_drop", low[0], b, median(v for _, v in after), ongoing)
        return None

    def step(self, signal: str, service: str, at_s: float, now: float, lag_s: float = -10.0) -> Step | None:
        """Whether `signal` of `service` stepped up after `at_s` (quiet before, held after). The step
        may start `lag_s` after `at_s` at the earliest (a rollout's new pods take a few seconds to
        serve; a sample at the change's own time shows what was there before it)."""
        rule = RULES[signal]
        before = [v for _, v in self.window(signal, service, at_s - BEFORE_S, at_s - 10)]
        if len(before) < 4:
            return None  # no baseline: nothing to compare with
        base = median(before)
        limit = max(rule.floor, base + rule.add, base * rule.times)
        if any(v > limit for v in before[-QUIET_N:]):
            return None  # the symptom was there before the change
        after = self.window(signal, service, at_s + lag_s, now, closed=True)
        run = 0
        for i, (_, v) in enumerate(after):
            run = run + 1 if v > limit else 0
            if run < rule.hold:
                continue
            onset = after[i - rule.hold + 1][0]
            if onset > at_s + rule.onset_s:
                return None
            held = median(x for ts, x in after if ts >= onset)
            if held <= limit:
                return None  # a blip, not a step
            recent = [x for ts, x in after if ts >= now - (300 if signal == "restarts" else 60)]
            level = (max(recent) if signal == "restarts" else median(recent)) if recent else 0.0
            return Step(service, signal, onset, base, held, level > limit)
        return None

    def rose(self, signal: str, service: str, at_s: float, now: float) -> bool:
        """Whether `signal` of `service` rose around `at_s` (by the signal's rule, however high it
        already was): the test of a dependency that may have passed its failure up."""
        rule = RULES[signal]
        before = [v for _, v in self.window(signal, service, at_s - 240, at_s - 2 * METRIC_STEP_S)]
        after = [v for _, v in self.window(signal, service, at_s - METRIC_STEP_S, min(now, at_s + 120), True)]
        if not before or len(after) < 2:
            return False
        b, a = median(before), median(after)
        return a > b + rule.add and a > b * rule.times


def query_range(call: Callable[[dict], Any], promql: str, start_s: float, end_s: float) -> list[dict]:
    """One PromQL range query's series (none on an error), for the reads done on demand."""
    res = call(
        {
            "tool": "query_metrics",
            "promql": promql,
            "start_s": max(0.0, start_s),
            "end_s": max(0.0, end_s),
            "step_s": int(METRIC_STEP_S),
        }
    )
    return res.data["series"] if res.ok else []


__all__ = ["QUERIES", "RULES", "Rule", "Step", "Telemetry", "query_range"]
