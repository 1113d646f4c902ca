"""The embedded cluster simulator: one app namespace under load, advanced in 5 s ticks.

`Simulator` ties the cluster objects, the effects registry, the traffic model, the pipeline,
telemetry and the fault schedule together. It never reads the wall clock and draws every
random number from Generators derived from its seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..catalog import App, Catalog
from ..catalog.faults import Fault
from ..core.clock import METRIC_STEP_S, TICK_S, Epoch
from ..core.errors import SimulatorError
from ..metrics.store import MetricStore
from .cluster import ClusterState
from .effects import FLAG_BEHAVIOUR, Effects
from .mechanics import AppliedFault, Mechanics
from .pipeline import Pipeline
from .probes import ProbeWindow
from .topology import compile_app
from .traffic import TickResult, TrafficModel

CHUNK_SAMPLES = 120
"""Samples per metric-store chunk (30 simulated minutes): a chunk's rows span all its columns, so
a short episode (an RL curriculum's 20 minutes) touches no more than half an hour of memory per
series, and a 90-minute run exactly three chunks (fresh pages are slow to touch on a microVM)."""


def steady_load(t: float) -> float:
    """The default load profile: the app's nominal rate at every time (a module-level function, so a
    simulator pickles: `warm_start`)."""
    return 1.0


class IntervalWindow:
    """Per-service sums since the last `reset()`: what an observation summarises per invocation."""

    def __init__(self, services: int):
        self.calls = np.zeros(services)
        self.errors = np.zeros(services)
        self.latency_sum = np.zeros(services)
        self.throttled_sum = np.zeros(services)
        self.ticks = 0
        self.requests = 0.0
        self.degraded = 0.0

    def add(self, res: TickResult, requests: float, degraded: float) -> None:
        self.calls += res.svc_count
        self.errors += res.svc_errors
        self.latency_sum += res.svc_latency_ms * res.svc_count
        self.throttled_sum += res.throttled_ratio
        self.ticks += 1
        self.requests += requests
        self.degraded += degraded

    def reset(self) -> None:
        self.__init__(len(self.calls))  # type: ignore[misc]


class Simulator:
    def __init__(
        self,
        catalog: Catalog | None,
        app: str | App,
        seed: int,
        *,
        schedule=None,
        load_profile: Callable[[float], float] | None = None,
        telemetry: bool = True,
        retention_s: float | None = None,
        epoch: Epoch | None = None,
    ):
        self.catalog = catalog
        self.epoch = epoch or Epoch()  # wall-clock time of t = 0 in every rendered timestamp
        if isinstance(app, str):
            if catalog is None:
                raise SimulatorError("an app given by name needs a catalog")
            self.app = catalog.app(app)
        else:
            self.app = app
        slow_s = catalog.scoring.slow_request_threshold_s if catalog is not None else 2.5
        self.compiled = compile_app(self.app)
        self.seed = seed
        root = np.random.SeedSequence([seed, 0x5EED])
        traffic_seq, self.log_seed = root.spawn(2)
        self.rng = np.random.default_rng(traffic_seq)
        self.effects = Effects(self.compiled)
        self.cluster = ClusterState(
            self.app, self.effects, self.compiled.index, self.compiled.zones, uid_seed=seed
        )
        self.pipeline = Pipeline(self.cluster)
        self.traffic = TrafficModel(
            self.compiled, self.app.load.requests_per_second, self.app.cross_zone_latency_ms, slow_s * 1000.0
        )
        self.mechanics = Mechanics(self)
        from .interventions import Interventions

        self.act = Interventions(self)
        self._dropped = np.zeros(len(self.compiled.services))
        self.load_profile = load_profile or steady_load
        self.load_mult = np.ones(len(self.compiled.request_types))
        self.schedule = schedule
        self.applied: dict[str, AppliedFault] = {}
        self.now = 0.0
        self.probes = ProbeWindow(self.compiled, TICK_S)
        S = len(self.compiled.services)
        self.restarts_total = np.zeros(S)  # includes restarts of pods that are gone
        self._restarts_seen: dict[str, int] = {}
        self.kafka_lag = np.zeros(S)
        self.broker_gone = np.zeros(S, dtype=bool)  # consumers that cannot reach their broker
        self._arrays: dict[str, np.ndarray] | None = None
        self._arrays_version: tuple[int, int] = (-1, -1)
        self._arrays_gen = 0  # bumps when the effect arrays' values change
        self._ratio_version = -1
        self._restarts_version = -1
        self._queue_plan = self._queues()
        self._kafka_rates: tuple | None = None
        self._ingress: tuple = ((), None)  # (ingress shares per zone, as an array)
        self._ratio = np.ones(len(self.compiled.services))
        self.last: TickResult | None = None
        self.degraded = np.zeros(2)  # [requests, degraded requests] at the entry point, cumulative
        self.window = IntervalWindow(len(self.compiled.services))
        self.store = (
            MetricStore(step_s=METRIC_STEP_S, chunk_samples=CHUNK_SAMPLES, retention_s=retention_s)
            if telemetry
            else None
        )
        from .metric_exporter import MetricExporter

        self.exporter = MetricExporter(self) if telemetry else None
        from .log_context import LogContextRecorder

        self.logctx = LogContextRecorder(self) if telemetry else None
        self._events = list(schedule.events()) if schedule is not None else []
        self._event_pos = 0
        self._tick()  # t = 0 sample

    # ------------------------------------------------------------ time
    def advance_to(self, t: float) -> None:
        """Advance the simulation to simulated time `t` (seconds), tick by tick."""
        while self.now + TICK_S <= t + 1e-9:
            self.now += TICK_S
            self.cluster.advance(self.now)  # the cluster's clock first, so changes are stamped now
            self._run_orchestrator_events()
            self._tick()

    def _run_orchestrator_events(self) -> None:
        while self._event_pos < len(self._events) and self._events[self._event_pos].time_s <= self.now:
            ev = self._events[self._event_pos]
            self._event_pos += 1
            if ev.kind == "inject":
                assert self.catalog is not None, "a schedule needs the catalog its faults come from"
                self.inject(self.catalog.fault(ev.item.fault_id))
            elif ev.kind == "revert":
                self.revert(ev.item.fault_id)
            elif ev.kind == "benign":
                self.apply_benign(ev.item)
            elif ev.kind == "benign_end":
                self.end_benign(ev.item)

    def _tick(self) -> None:
        cl = self.cluster
        if cl.dirty:
            cl.advance(self.now)
        if self._arrays is None or self._arrays_version != (self.effects.version, cl.version):
            arrays = self.effects.arrays()
            self._arrays_version = (self.effects.version, cl.version)
            if arrays is not self._arrays:  # new values (see `Effects.arrays`)
                self._arrays = arrays
                self._arrays_gen += 1
        zones = tuple(cl.ingress_zones[z] for z in self.compiled.zones)
        if zones != self._ingress[0]:
            self._ingress = (zones, np.array(zones))
        ingress = self._ingress[1]
        res = self.traffic.tick(
            TICK_S,
            self._arrays,
            cl.ready,
            ingress,
            self.load_profile(self.now),
            self.load_mult,
            self.rng,
            version=self._arrays_gen,
        )
        if self._dropped.any():
            extra = np.minimum(self._dropped, res.svc_count)
            res.svc_errors = np.minimum(res.svc_count, res.svc_errors + np.ceil(extra))
            self._dropped[:] = 0
        self.last = res
        if self._restarts_version != cl.version:  # restarts only change with a cluster change
            self._restarts_version = cl.version
            for pod in cl.pods.values():
                seen = self._restarts_seen.get(pod.name, 0)
                if pod.restarts > seen:
                    self.restarts_total[self.compiled.index[pod.service]] += pod.restarts - seen
                    self._restarts_seen[pod.name] = pod.restarts
        self._update_kafka(res)
        self.probes.record(res, self.restarts_total, self._updated_ready_ratio(), self.kafka_lag)
        total = np.add.reduce  # what ndarray.sum() reduces with
        n = total(res.rt_count)
        bad = total(res.rt_errors) + total((res.rt_count - res.rt_errors) * res.rt_slow)
        self.degraded[0] += n
        self.degraded[1] += bad
        self.window.add(res, n, bad)
        if self.exporter is not None:
            self.exporter.accumulate(res)
            if int(round(self.now)) % METRIC_STEP_S == 0:
                self.exporter.export(self.now)
                if self.logctx is not None:
                    self.logctx.record(self, self.now)

    def _updated_ready_ratio(self) -> np.ndarray:
        """Ready pods of the current revision / desired replicas (a stalled rollout counts as degraded)."""
        cl = self.cluster
        if self._ratio_version != cl.version:
            counts = [0] * len(self.compiled.services)
            index, deps = self.compiled.index, cl.deployments
            for pod in cl.pods.values():
                if (
                    pod.ready
                    and not pod.terminating
                    and pod.revision == deps[pod.service].revisions[-1].number
                ):
                    counts[index[pod.service]] += 1
            ready = np.array(counts, dtype=np.float64)
            desired = cl.desired.sum(axis=0)
            self._ratio = np.where(desired > 0, ready / np.maximum(desired, 1), np.where(ready > 0, 1.0, 0.0))
            self._ratio_version = cl.version
        return self._ratio

    def _queues(self) -> list[tuple[list[int], list[int]]]:
        """Per queue: the producer edges into it and the consumer services (polling it, off the request
        path)."""
        c, out = self.compiled, []
        for q in (i for i, s in enumerate(self.app.services) if s.kind == "queue"):
            into = np.nonzero(c.edge_dst == q)[0]
            consumers = [int(c.edge_src[e]) for e in into if c.background_rps[c.edge_src[e]] > 0]
            producers = [int(e) for e in into if c.background_rps[c.edge_src[e]] == 0]
            out.append((producers, consumers))
        return out

    def _update_kafka(self, res: TickResult) -> None:
        """Consumer lag: records published and not yet consumed. Producers publish each order once
        (retries are not new records: `edge_rate` over the retry amplification); while the broker is
        gone their producer clients hold the records and keep retrying, and the consumers fetch
        nothing (`TrafficModel`: a consumer that cannot reach its broker does no work), so the lag
        grows until the broker is back and the consumers drain it."""
        if not self._queue_plan:
            return
        # produce and capacity are functions of expected values, arrays and readiness: kept while
        # those objects (and the cluster version, for readiness) are the same
        key = (res.edge_rate, res.own_latency_ms, self._arrays, res.edge_fail, res.svc_rate)
        hit = self._kafka_rates
        if hit is None or hit[2] != self.cluster.version or any(a is not b for a, b in zip(hit[0], key)):
            rates = []
            c = self.compiled
            for producers, consumers in self._queue_plan:
                retry_amp = 1.0 + c.edge_retries[producers] * res.edge_fail[producers]
                publishes = res.edge_rate[producers] / retry_amp
                produce = float(publishes.sum()) if producers else 0.0
                for s in consumers:
                    per_record_ms = float(res.own_latency_ms[s]) + 1000.0 * float(
                        self._arrays["consumer_delay_s"][s]
                    )
                    fetching = float(res.svc_rate[s]) / float(c.background_rps[s])  # 0: broker unreachable
                    capacity = (
                        self.cluster.ready[:, s].sum()
                        * self._arrays["threads"][s]
                        * 1000.0
                        / max(per_record_ms, 1e-6)
                        * fetching
                    )
                    rates.append((s, produce, capacity))
            hit = self._kafka_rates = (key, rates, self.cluster.version)
        for s, produce, capacity in hit[1]:
            self.kafka_lag[s] = max(0.0, self.kafka_lag[s] + (produce - capacity) * TICK_S)
            self.broker_gone[s] = float(res.svc_rate[s]) == 0.0

    # ------------------------------------------------------------ faults
    def inject(self, fault: Fault) -> None:
        if fault.app != self.app.app:
            raise SimulatorError(f"fault {fault.id} belongs to {fault.app}, not {self.app.app}")
        if fault.id in self.applied and self.applied[fault.id].reverted_s is None:
            raise SimulatorError(f"fault {fault.id} is already active")
        self.applied[fault.id] = self.mechanics.apply(fault)
        self.cluster.dirty = True

    def revert(self, fault_id: str) -> None:
        applied = self.applied.get(fault_id)
        if applied is not None:
            self.mechanics.revert(applied)
            self.cluster.dirty = True

    def apply_benign(self, change) -> None:
        """A harmless change (`change_stream`): through the pipeline, or made directly the way the
        faults of its plane are (a manifest change keeps the previous change-cause)."""
        from ..catalog.artifacts import parse_artifact
        from .cluster import NetworkPolicy

        cl = self.cluster
        if change.plane == "manifest":
            spec = cl.deployments[change.service].spec
            if change.kind == "replicas":
                cl.scale(change.service, {z: int(change.new_value) for z, _ in spec.replicas})
            else:
                value = change.new_value if change.kind == "image" else int(change.new_value)
                cl.new_revision(change.service, replace(spec, **{change.kind: value}))
            return
        if change.plane == "netpol":
            name = change.artifact.removeprefix("networkpolicy/")
            cl.network_policies[name] = NetworkPolicy(name, change.service, change.new_value)
            cl.dirty = True
            return
        if change.plane == "node":  # maintenance: cordon, then, if the other nodes have room, move
            # each workload off by a rolling restart (maxSurge 1, maxUnavailable 0: the old pod stays
            # until its replacement is ready), where the node faults evict pods outright
            room = cl.room_without(change.new_value)
            cl.cordon(change.new_value)
            on_node = {
                p.service for p in cl.pods.values() if p.node == change.new_value and not p.terminating
            }
            moved = sorted(on_node) if room else []
            for svc in moved:
                spec = replace(cl.deployments[svc].spec, restarted_at=cl.now)
                cl.new_revision(svc, spec, "kubectl rollout restart")
            return
        ref = parse_artifact(change.artifact)
        if ref.kind == "source" and ref.service:
            self.ship_code(ref.service, ref.key, change.to_revision, change.message, change.diff, author="ci")
        elif ref.kind in ("env", "configmap") and ref.service:
            self.ship_config(ref.service, ref.key, change.new_value, change.message, change.diff, author="ci")

    def end_benign(self, change) -> None:
        """The end of node maintenance: uncordon, unless a fault or the agent changed the node since."""
        node = self.cluster.nodes.get(change.new_value)
        if change.plane == "node" and node is not None and node.unschedulable:
            self.cluster.cordon(change.new_value, False)

    # ------------------------------------------------------------ changes through the pipeline
    def ship_code(self, service: str, path: str, revision: str, message: str, diff: str, author: str):
        return self.pipeline.submit(
            service,
            "code",
            f"{service}:{path}@{revision}",
            message,
            diff,
            author,
            self._deploy_code,
            service,
            path,
            revision,
            message,
        )

    def _deploy_code(self, service: str, path: str, revision: str, message: str) -> int:
        cl = self.cluster
        spec = cl.deployments[service].spec.with_code(path, revision)
        return cl.new_revision(service, spec, message).number

    def ship_config(self, service: str, key: str, value: str | None, message: str, diff: str, author: str):
        return self.pipeline.submit(
            service,
            "config",
            f"{service}:env/{key}",
            message,
            diff,
            author,
            self._deploy_config,
            service,
            key,
            value,
            message,
        )

    def _deploy_config(self, service: str, key: str, value: str | None, message: str) -> int:
        cl = self.cluster
        spec = cl.deployments[service].spec.with_env(key, value)
        return cl.new_revision(service, spec, message).number

    def ship_flag(self, flag: str, variant: str, message: str, diff: str, author: str):
        return self.pipeline.submit(
            "flagd",
            "flag",
            f"flagd:configmap/flagd-config/{flag}",
            message,
            diff,
            author,
            self._deploy_flag,
            flag,
            variant,
        )

    def _deploy_flag(self, flag: str, variant: str) -> None:
        # no event for a ConfigMap update; flagd logs the reload of its mounted file (`log_context`)
        cl = self.cluster
        cl.configmaps.setdefault("flagd-config", {})[flag] = variant
        self.effects.invalidate()
        # the flag table's order, not a set's: rechecks queue pod callbacks, whose order must not
        # depend on the process's hash seed
        for svc in dict.fromkeys(b[0] for b in FLAG_BEHAVIOUR.get(flag, [])):
            if svc in cl.deployments:
                cl.recheck_pods(svc)
        return None

    def drop_in_flight(self, service: str) -> None:
        """A restart kills requests in flight on the old pods: they fail in the next tick."""
        i = self.compiled.index[service]
        if self.last is not None:
            self._dropped[i] += float(self.last.svc_rate[i] * self.last.own_latency_ms[i] / 1000.0) + 1.0

    # ------------------------------------------------------------ summaries
    def entry_degraded_fraction(self) -> float:
        return float(self.degraded[1] / self.degraded[0]) if self.degraded[0] else 0.0

    def active_faults(self) -> list[str]:
        """Ground truth: ids of injected, not yet reverted faults (never shown to agents)."""
        return [fid for fid, a in self.applied.items() if a.reverted_s is None]
