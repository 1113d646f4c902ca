"""Validate-and-calibrate step of fault generation (the paper's Appendix C, automated).

A generated fault is kept only if, injected alone into the warmed-up simulator, some symptom
probe clearly fails within its window while requests continue to be served (the validation
harness, `fault_check.check_fault`, with its severity cap). The probe is chosen in a fixed order of preference
(the template's own probe kind first, then the entry point's request types, then the target's
own signals) and its threshold is set between the healthy and the faulted value. Direct
mechanisms whose strength is a free parameter (a CPU limit, a stress size, a delay, a spike)
may be weakened or strengthened along a fixed ladder; change-driven faults keep their change exactly as
written (their diff shows the values) and are rejected instead, so the generator picks another
target. Everything is noise-free (expected values) and deterministic.
"""

from __future__ import annotations

import copy
import json
import math
import re

from sre_marathon_gym.backends.fault_check import MAX_SEVERITY, AloneRun, check_fault, fault_severity
from sre_marathon_gym.catalog.apps import App
from sre_marathon_gym.catalog.faults import Fault, SymptomProbe
from sre_marathon_gym.sim.simulator import TICK_S, Simulator

WARMUP_S = 120.0
HOLD_S = 60.0  # the probe must stay failing this long (noise robustness, alert holds-for)
ERROR_MIN = 0.04  # an error probe needs at least this expected error ratio
LATENCY_MIN_MS = 400.0  # ... a latency probe at least this much above healthy

# strength ladders for direct mechanisms: mechanism -> (param, factors tried in order, strongest,
# weakest). The value as written comes first; weaker values follow (a fault may not degrade more than
# half of the entry point's requests, `fault_check.MAX_SEVERITY`), then stronger ones (its probe
# must fail). A factor below 1 weakens a param whose larger values are stronger, and vice versa.
LADDER: dict[str, tuple[str, tuple[float, ...], float, float]] = {
    "code_retry_storm": ("multiplier", (1.0, 0.5, 0.25, 2.0, 4.0, 8.0), 50, 2),
    "code_cpu_hog": ("cpu_multiplier", (1.0, 0.6, 0.4, 2.0, 4.0, 8.0), 60, 1.5),
    "code_latency": ("added_ms", (1.0, 0.6, 0.4, 2.0), 5000, 300),
    "code_memory_leak": ("leak_mi_per_min", (1.0, 2.0, 4.0), 400, 5),
    "config_cache_ttl": ("multiplier", (1.0, 0.5, 2.0, 4.0, 8.0), 60, 2),
    "cpu_limit_cut": ("cpu_limit_m", (1.0, 2.0, 3.0, 0.5, 0.25, 0.1), 5, 2000),
    "cpu_stress": ("cores", (1.0, 0.6, 0.4, 2.0, 4.0), 8, 0.2),
    "memory_stress": ("mi", (1.0, 1.5, 2.5), 4096, 16),
    "network_delay": ("delay_ms", (1.0, 0.6, 0.4, 2.0), 4000, 100),
    "network_loss": ("loss_ratio", (1.0, 0.6, 1.4), 0.6, 0.05),
    "dependency_slow": ("added_ms", (1.0, 0.6, 0.4, 2.0), 5000, 300),
    # a spike saturates within a narrow band of multipliers (0 -> 59 % degraded between 1.6x and 1.85x on
    # Online Boutique's catalog path), so its ladder is finer
    "load_spike": ("multiplier", (1.0, 0.8, 0.65, 0.5, 0.4, 0.32, 0.25, 0.2, 0.16, 0.12, 2.0, 4.0), 30, 1.4),
}


def ladder_value(old: float, factor: float, strongest: float, weakest: float) -> float:
    """`old` scaled by `factor`, kept between the ladder's strongest and weakest values."""
    lo, hi = sorted((strongest, weakest))
    return min(max(old * factor, lo), hi)


class Observer:
    """Runs the simulator noise-free for one app; the healthy baseline informs fault templates."""

    def call_latency_ms(self, caller: str, callee: str) -> float:
        """Healthy latency of one call caller -> callee as the caller sees it."""
        r, c = self._base_sim.last, self._base_sim.compiled
        return float(r.svc_latency_ms[c.index[callee]])

    def busy_threads(self, service: str) -> float:
        """Healthy mean number of busy worker threads per replica (Erlangs per replica)."""
        sim = self._base_sim
        i = sim.compiled.index[service]
        replicas = max(sim.cluster.ready[:, i].sum(), 1.0)
        return float(sim.last.svc_rate[i] * sim.last.svc_latency_ms[i] / 1000.0 / replicas)

    def __init__(self, app: App):
        self.app = app
        self._baseline: dict[tuple, float] = {}
        self._base_sim = Simulator(None, app, 0, telemetry=False)
        self._base_sim.advance_to(WARMUP_S)

    def candidates(self, fault: Fault, preferred: SymptomProbe) -> list[SymptomProbe]:
        """Probes in order of preference: the target's own signals first (they stay specific to this
        fault when other faults overlap), then the entry point's request types, restarts last (their
        5-minute window outlasts short faults)."""
        app, t = self.app, fault.target
        rts = [rt for rt in sorted(app.request_types, key=lambda r: -r.weight) if t in rt.services]
        down = fault.params.get("downstream")
        if down:
            rts = [rt for rt in rts if down in rt.services] + [rt for rt in rts if down not in rt.services]
        out = [preferred] if preferred.service == t and preferred.kind != "restarts_per_5m" else []
        out += [
            SymptomProbe(kind=k, service=t, threshold=0)
            for k in ("ready_replicas_ratio", "service_error_ratio", "service_latency_p95_ms")
        ]
        if any(s.kind == "queue" for s in app.services):
            out += [
                SymptomProbe(kind="kafka_consumer_lag", service=s.name, threshold=0)
                for s in app.services
                if s.name in fault.scope and s.kind == "service"
            ]
        out.append(preferred)
        for kind in ("entry_error_ratio", "entry_latency_p95_ms"):
            out += [
                SymptomProbe(kind=kind, service=app.entry_point, request_type=rt.name, threshold=0)
                for rt in rts
            ]
        out.append(SymptomProbe(kind="entry_rate_rps", service=app.entry_point, threshold=0))
        out.append(SymptomProbe(kind="restarts_per_5m", service=t, threshold=0))
        seen, unique = set(), []
        for p in out:
            key = (p.kind, p.service, p.request_type)
            if key not in seen:
                seen.add(key)
                unique.append(p)
        return unique

    @staticmethod
    def trace(run: AloneRun, probes: list[SymptomProbe]) -> tuple[list[list[float]], list[float]]:
        """Expected probe values per tick of the fault's shortest window (its run alone); the values
        just before the injection."""
        base = [run.healthy.value(p, expected=True) for p in probes]
        window = run.windows[: run.in_window]
        return [[w.value(p, expected=True) for w in window] for p in probes], base


def threshold_for(kind: str, base: float, series: list[float]) -> float | None:
    """A threshold the faulted series exceeds for HOLD_S while the healthy value stays clear of it."""
    hold = int(HOLD_S / TICK_S)
    if len(series) < hold:
        return None
    if kind == "ready_replicas_ratio":
        low = min(max(series[i : i + hold]) for i in range(len(series) - hold + 1))
        return 1.0 if base >= 1.0 and low < 1.0 else None
    sustained = max(min(series[i : i + hold]) for i in range(len(series) - hold + 1))
    if kind == "restarts_per_5m":
        return 0.0 if base <= 0 and sustained > 0 else None
    if kind in ("entry_error_ratio", "service_error_ratio"):
        if sustained < max(ERROR_MIN, base + 0.03):
            return None
        return round(min(0.05, max(0.02, (base + sustained) / 2)), 2)
    if kind in ("entry_latency_p95_ms", "service_latency_p95_ms"):
        if sustained < max(base * 1.5, base + LATENCY_MIN_MS):
            return None
        mid = (base + sustained) / 2
        step = 100 if mid < 2000 else 500
        return float(max(step, math.floor(mid / step) * step))
    if kind == "entry_rate_rps":  # a drop (see `rate_direction` for which way)
        deepest = min(max(series[i : i + hold]) for i in range(len(series) - hold + 1))
        if deepest < base / 3:
            return round(base / 2, 1)
        return round(base * 1.25, 1) if sustained > base * 1.4 else None
    if kind == "kafka_consumer_lag":
        return 1000.0 if sustained > 2000 and base < 100 else None
    return None


def place_on_target_node(obs: Observer, doc: dict) -> dict:
    """Node faults name the node the target's pod really runs on in the warmed-up cluster."""
    pods = sorted(obs._base_sim.cluster.pods_of(doc["target"]), key=lambda p: p.name)
    old = doc["params"].get("node")
    if not pods or not pods[0].node or old == pods[0].node:
        return doc
    text = re.sub(rf"\b{re.escape(old)}\b", pods[0].node, json.dumps(doc))
    return json.loads(text)


def calibrate(obs: Observer, fault_doc: dict) -> dict | None:
    """Return the fault with a probe that fails (and maybe a weaker or stronger direct param), or None.

    A direct param is tried along its ladder; if every value there is either too severe or shows
    no symptom, the value is bisected between the two (a spike, say, that saturates the app at 2x
    and shows nothing at 1.6x): the strongest value that still keeps serving gets one more try.
    """
    if fault_doc["mechanism"] in ("node_failure", "node_cordon_drain"):
        fault_doc = place_on_target_node(obs, fault_doc)
    ladder = LADDER.get(fault_doc["mechanism"])
    if (
        ladder
        and fault_doc.get("change")
        and str(fault_doc["params"][ladder[0]]) in fault_doc["change"]["diff"]
    ):
        ladder = None  # the change shows this value: keep it as written
    if ladder is None:
        return _with_probe(obs, fault_doc)
    param, factors, strongest, weakest = ladder
    old = float(fault_doc["params"][param])
    tried: dict[float, float] = {}  # value -> severity
    for factor in factors:
        value = old if factor == 1.0 else ladder_value(old, factor, strongest, weakest)
        found = _at_value(obs, fault_doc, param, value, tried)
        if found is not None:
            return found
    kept = [v for v, sev in tried.items() if sev <= MAX_SEVERITY]
    severe = [v for v, sev in tried.items() if sev > MAX_SEVERITY]
    if not kept or not severe:
        return None
    stronger_is_larger = strongest > weakest
    ok = max(kept) if stronger_is_larger else min(kept)
    bad = min(severe, key=lambda v: abs(v - ok))
    for _ in range(BISECT_STEPS):
        mid = (ok + bad) / 2
        sev = _severity(obs, _with_value(fault_doc, param, mid))
        ok, bad = (mid, bad) if sev <= MAX_SEVERITY * BISECT_MARGIN else (ok, mid)
    return _at_value(obs, fault_doc, param, ok, {})


BISECT_STEPS = 6
BISECT_MARGIN = 0.9  # keep the bisected value a little below the severity cap


def _with_value(fault_doc: dict, param: str, value: float) -> dict:
    doc = copy.deepcopy(fault_doc)
    written = fault_doc["params"][param]
    new = int(round(value)) if isinstance(written, int) else round(value, 2)
    doc["params"][param] = new
    if new != written:
        doc["title"] = doc["title"].replace(str(written), str(new))
    return doc


def _severity(obs: Observer, doc: dict) -> float:
    """What the harness measures; a full outage by design is exempt from its cap (0 here)."""
    return 0.0 if doc.get("full_outage") else fault_severity(obs.app, as_fault(doc))


def _at_value(obs: Observer, fault_doc: dict, param: str, value: float, tried: dict) -> dict | None:
    doc = _with_value(fault_doc, param, value)
    value = float(doc["params"][param])
    if value in tried:
        return None
    run = AloneRun(obs.app, as_fault(doc))  # its severity, then its probes, from one run
    tried[value] = sev = 0.0 if doc.get("full_outage") else run.severity
    if sev > MAX_SEVERITY:
        return None  # too severe whatever its probe (the harness would reject it)
    return _with_probe(obs, doc, run)


def _with_probe(obs: Observer, doc: dict, run: AloneRun | None = None) -> dict | None:
    """`doc` with the first candidate probe that fails and passes the validation harness, or None."""
    fault = as_fault(doc)
    run = run or AloneRun(obs.app, fault)
    probes = obs.candidates(fault, fault.probe)
    values, base = obs.trace(run, probes)
    for p, series, b in zip(probes, values, base):
        thr = threshold_for(p.kind, b, series)
        if thr is None:
            continue
        probe = {"kind": p.kind, "service": p.service}
        if p.request_type is not None:
            probe["request_type"] = p.request_type
        probe["threshold"] = thr
        if p.kind == "entry_rate_rps" and thr > b:
            probe["below"] = False  # a surge, not a drop
        candidate = {**doc, "probe": probe}  # `full_outage` stays as designed (the builder's)
        for remedies in remedy_variants(obs, candidate):
            candidate = {**candidate, "remedies": remedies}
            if check_fault(obs.app, as_fault(candidate), stop_early=True, alone=run).passed:
                return candidate
    return None


def as_fault(doc: dict) -> Fault:
    return Fault.model_validate({"id": "zz-calibrate-0001", **{k: v for k, v in doc.items() if k != "id"}})


def remedy_variants(obs: Observer, doc: dict) -> list[list[dict]]:
    """The remedies as written, then (for scaling remedies) larger scale-outs an operator would try."""
    variants = [doc["remedies"]]
    if any(r["action"] == "scale" for r in doc["remedies"]) and doc["mechanism"] == "load_spike":
        base = obs.app.service(doc["target"]).replicas or 1
        for factor in (5, 10, 20):
            value = str(min(20, base * factor))
            variants.append([{**r, "value": value} if r["action"] == "scale" else r for r in doc["remedies"]])
    return variants
