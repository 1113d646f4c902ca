"""Checks cited evidence against the recorded telemetry: does it really show a root cause's signal?

Why: a report earns rubric credit for supporting evidence only when the cited metric series, log
line or trace shows this root cause's signature in the data the agent could see. A series of the
wrong service, a log line from before the flag flipped or an invented id earns nothing. A cause's
signals are its rubric's own (`RUBRIC_SIGNALS`: the families flag_signals.md lists for the flag,
under the simulator's metric names and pinned to the rubric's defining labels, e.g. the failing
span); flags with no reference rubric fall back to their simulator mechanics (`flag_signals`).
The recorded run is read through its backend (`backends.sim.SimBackend`): metrics, log ids, traces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..backends.sim import SimBackend, entry_span_name, flag_log_markers
from ..catalog.flag_behaviour import FLAG_BEHAVIOUR
from ..core.errors import PatternError, SREMarathonError
from ..tools.runner import parse_matchers
from .flags import signal_kinds
from .intensity import orca_flag_table
from .report import EvidenceRef, LogRef, MetricRef, TraceRef

if TYPE_CHECKING:
    from .task_model import GroundTruthCause

CALLS = "traces_span_metrics_calls_total"
IMPRESSIONS = "feature_flag_flagd_impression_total"  # sim/flag_impressions.py (the rubrics' meta signal)
DURATION = "traces_span_metrics_duration_milliseconds"
BEFORE_S = 1200  # baseline window before the flip
ONSET_S = 120  # the change shows after scrape and rate windows settle
AFTER_S = 1200
MIN_AFTER_S = 120
# An error signal must add about one error per 17 min: at the demo's light load paymentFailure 10%
# fails 1-3 checkouts per 30 min (reference rubric counts; catalog/orca/flag_volumes.yaml).
MIN_ERROR_RATE = 0.001


@dataclass(frozen=True)
class Signal:
    """A metric family whose selected series must change after the flip (labels must all hold)."""

    kind: str  # errors | latency | cpu | memory | lag | load
    family: str
    labels: tuple[tuple[str, str], ...]
    min_delta: float  # absolute change the after-window must add to the baseline
    service: str


def _signal(kind: str, svc: str, span: str | None = None) -> Signal:
    pin = (("span_name", span),) if span else ()
    if kind == "errors":
        labels = (("service_name", svc), *pin, ("status_code", "STATUS_CODE_ERROR"))
        return Signal(kind, CALLS, labels, MIN_ERROR_RATE, svc)
    if kind == "latency":
        return Signal(kind, DURATION, (("service_name", svc), *pin), 50.0, svc)
    if kind == "cpu":
        return Signal(kind, "container_cpu_usage_seconds_total", (("container", svc),), 0.2, svc)
    if kind == "memory":
        return Signal(kind, "container_memory_working_set_bytes", (("container", svc),), 20 * 2**20, svc)
    if kind == "lag":
        return Signal(kind, "kafka_consumer_records_lag_max", (("service_name", svc),), 100.0, svc)
    return Signal(kind, CALLS, (("service_name", svc), *pin), 1.0, svc)  # load


def flag_signals(flag: str) -> tuple[Signal, ...]:
    out: list[Signal] = []
    for svc, mech, _ in FLAG_BEHAVIOUR.get(flag, []):
        for kind in signal_kinds(mech):
            s = _signal(kind, svc)
            if s not in out:
                out.append(s)
    return tuple(out)


# The reference rubric's own signals per flag (flag_signals.md: root-cause and propagation families
# and their defining labels), as the simulator names them: (kind, service, pinned span name). Families
# the simulator does not emit (jvm_*, network bytes) are left out; the meta layer (flagd impressions)
# shows that the flag flipped, not what it did, so it counts only for a rubric with nothing else.
RUBRIC_SIGNAL_SPECS: dict[str, tuple[tuple[str, str, str | None], ...]] = {
    "adFailure": (("errors", "ad", "oteldemo.AdService/GetAds"),),
    "adManualGc": (("latency", "ad", "oteldemo.AdService/GetAds"),),
    "adHighCpu": (("cpu", "ad", None),),
    "productCatalogFailure": (
        ("errors", "product-catalog", "oteldemo.ProductCatalogService/GetProduct"),
        ("errors", "checkout", "oteldemo.ProductCatalogService/GetProduct"),
    ),
    "paymentFailure": (
        ("errors", "payment", "grpc.oteldemo.PaymentService/Charge"),
        ("errors", "checkout", "oteldemo.PaymentService/Charge"),
    ),
    "paymentUnreachable": (("errors", "checkout", "oteldemo.PaymentService/Charge"),),
    "cartFailure": (
        ("errors", "cart", None),
        ("errors", "checkout", "oteldemo.CartService/EmptyCart"),
        ("cpu", "cart", None),
    ),
    "kafkaQueueProblems": (("lag", "fraud-detection", None),),
    "loadGeneratorFloodHomepage": (("load", "frontend-proxy", "GET /"), ("cpu", "frontend-proxy", None)),
    # the reference rubric has no metric, log or trace cluster: the load generator fetches no image,
    # so only flagd's impression counter (every flag's meta signal) shows it
    "imageSlowLoad": (),
}


def impression_signal(flag: str) -> Signal:
    """flagd's impression counter of the flag's flipped variant: a series that was flat or absent
    before the flip and counts after it (every rubric's "meta" family, flag_signals.md). Selecting
    the default variant too, or another flag's series, shows nothing."""
    return Signal("impression", IMPRESSIONS, (("feature_flag_key", flag),), 0.0, "flagd")


def rubric_signals(flag: str) -> tuple[Signal, ...]:
    """The signals evidence must show for a cause of `flag` (its rubric's own, else its mechanics')."""
    spec = RUBRIC_SIGNAL_SPECS.get(flag)
    if spec is None:
        return flag_signals(flag)
    # flagd's impressions show that a flag flipped, not what it did: they stand in only for a rubric
    # with no other cluster (imageSlowLoad), as its only signal
    return tuple(_signal(kind, svc, span) for kind, svc, span in spec) or (impression_signal(flag),)


def metric_family(metric: str) -> str:
    """The family a series name belongs to (a histogram's _bucket, _sum and _count are one)."""
    for suffix in ("_bucket", "_sum", "_count"):
        if metric.endswith(suffix) and metric.startswith(DURATION):
            return metric[: -len(suffix)]
    return metric if metric != "traces_span_metrics_calls" else CALLS


class EvidenceChecker:
    """Judges evidence refs against one recorded run; `horizon_s` is what the agent could see."""

    def __init__(self, backend: SimBackend):
        self.backend = backend
        self.store = backend.metrics

    # ------------------------------------------------------------ metrics
    def _select(self, name: str, matchers: dict) -> np.ndarray:
        try:
            return self.store.select(name, matchers)
        except (SREMarathonError, KeyError, ValueError):  # a bad regex or unknown metric selects nothing
            return np.zeros(0, dtype=np.int64)

    def _measure(self, sig: Signal, matchers: dict, t: float, window: float) -> float | None:
        st = self.store
        if sig.kind == "latency":
            s_ids = self._select(DURATION + "_sum", matchers)
            c_ids = self._select(DURATION + "_count", matchers)
            if not len(s_ids) or not len(c_ids):
                return None
            num, den = np.nansum(st.rate(s_ids, t, window)), np.nansum(st.rate(c_ids, t, window))
            return float(num / den) if den > 0 else 0.0
        ids = self._select(sig.family, matchers)
        if not len(ids):
            return None
        if sig.kind in ("memory", "lag"):
            return (
                float(np.nanmean(st.avg_over_time(ids, t, window)))
                if sig.kind == "memory"
                else float(np.nansum(st.avg_over_time(ids, t, window)))
            )
        return float(np.nansum(st.rate(ids, t, window)))

    def metric_shows(
        self, ref: MetricRef, sig: Signal, start_s: float, end_s: float, horizon_s: float
    ) -> bool:
        if metric_family(ref.metric) != sig.family:
            return False
        try:
            matchers = parse_matchers(ref.matchers, skip=("le",))
        except PatternError:  # a regex RE2 refuses (or a bad label name) selects nothing, like in `_select`
            return False
        probe = self._select(DURATION + "_count" if sig.kind == "latency" else sig.family, matchers)
        if not len(probe):
            return False
        for sid in probe:  # every selected series must be one of the signal's series
            lab = self.store.labels(int(sid))
            if any(lab.get(k) != v for k, v in sig.labels):
                return False
        a0 = start_s + ONSET_S
        a1 = min(start_s + ONSET_S + AFTER_S, end_s, horizon_s)
        if a1 - a0 < MIN_AFTER_S:
            return False
        before = self._measure(sig, matchers, start_s, BEFORE_S)
        after = self._measure(sig, matchers, a1, a1 - a0)
        if sig.kind == "impression":  # the flipped variant's series is created (or restarts) at the flip
            return not before and bool(after)
        if before is None or after is None:
            return False
        return after >= 1.5 * before and after - before >= sig.min_delta

    # ------------------------------------------------------------ logs and traces
    def log_shows(
        self,
        ref: LogRef,
        flag: str,
        services: tuple[str, ...],
        start_s: float,
        end_s: float,
        horizon_s: float,
    ) -> bool:
        rec = self.backend.log_line(ref.log_id)
        if rec is None or not (start_s <= rec["timestamp"] <= min(end_s, horizon_s)):
            return False
        text = rec["message"] + " " + " ".join(str(v) for v in rec["attributes"].values())
        return any(m in text for m in flag_log_markers(flag))

    def trace_shows(self, ref: TraceRef, flag: str, start_s: float, end_s: float, horizon_s: float) -> bool:
        try:  # one trace by id (no traces recorded: a ValueError too)
            tr = self.backend.traces(ref.trace_id, None, 0.0, 0.0, None, None, 1)[0]
        except (SREMarathonError, KeyError, ValueError):
            return False
        if not (start_s <= tr["start_s"] <= min(end_s, horizon_s)):
            return False
        markers = flag_log_markers(flag)
        for sig in rubric_signals(flag):
            pinned = dict(sig.labels).get("span_name")
            for span in tr["spans"]:
                if span["service"] != sig.service or (pinned and span["name"] != pinned):
                    continue
                text = str(span.get("attributes", {}).get("error.message", ""))
                own = not markers or any(m in text for m in markers)  # the smoking gun: the flag's text
                if sig.kind == "errors" and span["status"] == "ERROR" and own:
                    return True
                if sig.kind == "latency" and span["duration_ms"] >= _added_ms(flag) * 0.5 > 0:
                    return True
        return False

    # ------------------------------------------------------------ the complaint's symptoms (rubric level 1)
    def request_type_signals(self, request_types: tuple[str, ...] | None) -> tuple[Signal, ...]:
        """Error and latency signals of the entry-point spans of these request types (None: all)."""
        entry = self.backend.app.entry_point
        out: list[Signal] = []
        for rt in self.backend.app.request_types:
            if request_types is not None and rt.name not in request_types:
                continue
            span = ("span_name", entry_span_name(rt.method, rt.endpoint))
            out.append(
                Signal("errors", CALLS, (span, ("status_code", "STATUS_CODE_ERROR")), MIN_ERROR_RATE, entry)
            )
            out.append(Signal("latency", DURATION, (span,), 50.0, entry))
        return tuple(out)

    def symptom_shows(
        self,
        ref: EvidenceRef,
        signals: tuple[Signal, ...],
        periods: list[tuple[float, float]],
        horizon_s: float,
    ) -> bool:
        """Whether a metric ref shows one of the complaint's request types failing or slowing down
        after one of the plausible causes started (`periods`: their (start, end))."""
        if not isinstance(ref, MetricRef):
            return False
        return any(self.metric_shows(ref, sig, a, b, horizon_s) for sig in signals for a, b in periods)

    # ------------------------------------------------------------ one ref against one cause
    def shows(self, ref: EvidenceRef, cause: GroundTruthCause, horizon_s: float) -> bool:
        """Whether `ref` shows `cause`'s signal in the telemetry visible before `horizon_s`."""
        if isinstance(ref, MetricRef):
            return any(
                self.metric_shows(ref, sig, cause.start_s, cause.end_s, horizon_s)
                for sig in rubric_signals(cause.flag)
            )
        if isinstance(ref, LogRef):
            return self.log_shows(ref, cause.flag, cause.services, cause.start_s, cause.end_s, horizon_s)
        return self.trace_shows(ref, cause.flag, cause.start_s, cause.end_s, horizon_s)


def _added_ms(flag: str) -> float:
    total = 0.0
    for _, mech, params in orca_flag_table().get(flag, []):  # the intensities ORCA's world runs
        if mech == "code_latency" and isinstance(params.get("added_ms"), (int, float)):
            total += float(params["added_ms"])
    return total
