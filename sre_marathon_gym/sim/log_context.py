"""The log context: per-15 s aggregates from which logs and traces are synthesised on query.

Why: materialising log lines every tick would dominate the simulator's cost, and almost none are
ever read. Instead `LogContextRecorder.record` keeps, per 15 s sample, a few float32 numbers per
service / edge / request type (counts, failure shares and their components, latencies) plus
symptom bitmasks and a small shared `log_snapshot.Context` that only changes when the cluster or
the effects change (running pods, the symptom details such as an address that does not resolve).
Lines are rendered from templates (`log_text`) by `log_lines` with a random stream derived from
(seed, service, sample), so the same query always returns the same lines, at a cost paid only
when an agent reads logs; `log_causes` attributes failures to their causes; `log_search` and
`traces` are the queries.

Logs show symptoms only: what a process would print (exceptions naming the call that failed,
flag strings of the OpenTelemetry demo, OOM and probe failures), never fault ids or the
artifact a fault changed.

This module holds the recorder (the arrays, the hook, lookups by time and name); its methods that
attribute causes or render lines delegate to `log_causes` and `log_lines`.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

from ..core.clock import METRIC_STEP_S
from ..core.errors import UnknownNameError
from . import log_causes, log_lines
from .causes import BLOCKED, DNS
from .cluster import POD_MUTATIONS
from .log_snapshot import (
    B_BROKER_GONE,
    B_CONSUMER_LAG,
    B_CRASHLOOP,
    B_MEM_HIGH,
    B_NET_DELAY,
    B_NET_LOSS,
    B_OOM,
    B_RESTARTED,
    B_SATURATED,
    B_SLOW_CODE,
    B_THROTTLED,
    B_UNREACHABLE,
    E_BLOCKED,
    E_DNS,
    E_REFUSED,
    E_RESET,
    E_RETRY,
    E_TIMEOUT,
    E_UPSTREAM,
    MIN_LOGGED_SHARE,
    SYMPTOM_BIT_NAMES,
    Context,
    snapshot,
)
from .log_text import FAMILY, FLAGD_RELOAD
from .op_names import client_op, edge_path, route_name, server_op
from .span_tree import build_shapes

if TYPE_CHECKING:
    from .log_draw import Draw
    from .log_lines import LogRecord
    from .simulator import Simulator

STEP_S = METRIC_STEP_S


class LogContextRecorder:
    """Per-15 s aggregates the log and trace synthesisers read; `record(sim, t)` is the simulator hook."""

    GROW = 256

    def __init__(self, sim: Simulator, step_s: float = STEP_S):
        c = sim.compiled
        self.compiled = c
        self.app = sim.app
        self.app_name = sim.app.app
        self.epoch = sim.epoch  # wall-clock stamps in log bodies (envoy, nginx)
        self.step_s = float(step_s)
        self.services = c.services
        S, E, R = len(c.services), len(c.edge_src), len(c.request_types)
        self.S, self.E, self.R = S, E, R
        state = sim.log_seed.generate_state(4)
        self.entropy = (int(state[0]), int(state[1]))
        seed_bytes = bytes(np.asarray(state, dtype=np.uint32).tobytes())
        self.key = hashlib.blake2b(seed_bytes, digest_size=16).digest()
        svc = {s.name: s for s in sim.app.services}
        self.family = [FAMILY.get(svc[n].language, "go") for n in c.services]
        self.kinds = [svc[n].kind for n in c.services]
        self.ports = [svc[n].port for n in c.services]
        self.background = c.background_rps
        self.retries = c.edge_retries.astype(int)
        self.protocols = [e.protocol for e in sim.app.edges]
        self.addresses = [f"{e.target}:{svc[e.target].port or 8080}" for e in sim.app.edges]
        inbound = {e.target: e.protocol for e in sim.app.edges}
        self.server_op = [server_op(n, svc[n].language, inbound.get(n, "http")) for n in c.services]
        self.client_op = [client_op(e.target, e.protocol) for e in sim.app.edges]
        self.edge_path = [edge_path(e.target) for e in sim.app.edges]
        self.root_ops = [route_name(rt.method, rt.endpoint) for rt in sim.app.request_types]
        self.server_attrs = [
            {"service.name": n, "telemetry.sdk.language": svc[n].language.lower()} for n in c.services
        ]
        self.shapes = build_shapes(sim.app, c)  # the spans of each root (`span_tree`)
        self.shape_visits = np.zeros((R + S, S))  # [root, S] calls to each service per request, as traced
        self.shape_edges = np.zeros((R + S, E))  # [root, E] calls over each edge per request, as traced
        for r, shape in enumerate(self.shapes):
            for node in shape.nodes:
                self.shape_visits[r, node.svc] += 1.0
                if node.edge >= 0:
                    self.shape_edges[r, node.edge] += 1.0
        self.out_edges = [np.nonzero(c.edge_src == s)[0].tolist() for s in range(S)]
        self.readiness_default = {
            n: (svc[n].readiness_probe.path if svc[n].readiness_probe else None) for n in c.services
        }
        self.addr_defaults = {(n, cfg.key): cfg.value for n in c.services for cfg in svc[n].config}
        self.flag_index = {f.name: i for i, f in enumerate(sim.app.feature_flags)}
        self._flagd = c.index.get("flagd")  # flagd logs each reload of its flag file
        self._flagd_state = tuple(sim.cluster.configmaps.get("flagd-config", {}).items())
        # growing arrays
        self.n = 0
        cap = self.GROW
        f32 = np.float32
        self.times = np.zeros(cap)
        self._svc = {
            k: np.zeros((cap, S), dtype=f32)
            for k in (
                "svc_count",
                "svc_fail",
                "own_err",
                "saturated",
                "unreachable",
                "svc_lat",
                "own_lat",
                "hop_ms",
                "inbound_loss",
                "throttled",
                "added_ms",
            )
        }
        self._edge = {
            k: np.zeros((cap, E), dtype=f32)
            for k in ("edge_rate", "edge_fail", "edge_tshare", "edge_route", "edge_timeout")
        }
        self._rt = {k: np.zeros((cap, R), dtype=f32) for k in ("rt_rate", "rt_fail", "rt_lat")}
        self.svc_bits = np.zeros((cap, S), dtype=np.uint32)
        self.edge_bits = np.zeros((cap, E), dtype=np.uint8)
        self.ctx_ref = np.zeros(cap, dtype=np.int32)
        self.contexts: list[Context] = []
        self._ctx_key: object = None
        # position -> (service, pod, restart reason or FLAGD_RELOAD)
        self.events: dict[int, list[tuple[int, str, str]]] = {}
        self._restarts_seen: dict[str, int] = {}
        self._k_index: dict[int, int] = {}
        self._cause_cache: dict[tuple[int, int], tuple[int, int, int, str, str]] = {}  # see `log_causes`
        self._spec_memo_key: object = None  # memos of `log_snapshot.snapshot`
        self._pods_key: tuple | None = None
        self._pod_memo: dict[str, tuple] = {}  # pod -> (key, its part of a context)
        self._crashing: list[int] = []
        self._behaviours_memo: dict[tuple[str, int], tuple[tuple, list]] = {}
        self._readiness_memo: dict[tuple[str, str | None], bool] = {}
        self._expected_memo: tuple | None = None  # see `_expected_part`
        self._bind_arrays()

    # ------------------------------------------------------------ the hook
    def record(self, sim: Simulator, t: float) -> None:
        """Append the sample for time t (call once per 15 s metric sample, after the tick)."""
        res = sim.last
        if res is None:
            return
        k = int(round(t / self.step_s))
        p = self._k_index.get(k)
        if p is None:
            p = self.n
            if p >= len(self.times):
                self._grow()
            self.n += 1
            self._k_index[k] = p
        self.times[p] = k * self.step_s
        if self._cause_cache:
            self._cause_cache = {key: v for key, v in self._cause_cache.items() if key[0] != p}
        arrays = getattr(sim, "_arrays", None) or sim.effects.arrays()
        c = self.compiled
        sv, ed, rt = self._svc, self._edge, self._rt
        dt = self.step_s
        sv["svc_count"][p] = res.svc_rate * dt
        sv["svc_fail"][p] = res.svc_fail
        ctx = snapshot(self, sim)
        sat, hop_ms, static_bits, eb = self._expected_part(res, arrays, ctx)
        sv["saturated"][p] = sat
        sv["unreachable"][p] = res.unreachable
        sv["own_err"][p] = arrays["own_error"]
        sv["svc_lat"][p] = res.svc_latency_ms
        sv["own_lat"][p] = res.own_latency_ms
        sv["inbound_loss"][p] = arrays["inbound_loss"]
        sv["hop_ms"][p] = hop_ms
        sv["throttled"][p] = res.throttled_ratio
        sv["added_ms"][p] = arrays["added_ms"]
        ed["edge_rate"][p] = res.edge_rate
        ed["edge_fail"][p] = res.edge_fail
        ed["edge_tshare"][p] = res.edge_timeout_share
        ed["edge_route"][p] = arrays["edge_fail"]
        ed["edge_timeout"][p] = arrays["edge_timeout_ms"]
        rt["rt_rate"][p] = res.rt_rate
        rt["rt_fail"][p] = res.rt_fail
        rt["rt_lat"][p] = res.rt_latency_ms
        self.ctx_ref[p] = self.contexts.index(ctx) if self.contexts[-1] is not ctx else len(self.contexts) - 1
        # dynamic bits
        bits = static_bits.copy()
        lag = getattr(sim, "kafka_lag", None)
        if lag is not None:
            bits[np.asarray(lag) > 1000] |= B_CONSUMER_LAG
        gone = getattr(sim, "broker_gone", None)
        if gone is not None:
            bits[gone] |= B_BROKER_GONE
        cl = sim.cluster
        for name, si in ctx.mem_pods:
            pod = cl.pods.get(name)
            if pod is None:
                continue
            limit = cl.spec_of(pod).mem_limit_mi
            if limit and sim.effects.memory_mi(pod, sim.now) > 0.85 * limit:
                bits[si] |= B_MEM_HIGH
        evs = []
        pods_key = (POD_MUTATIONS[0], len(cl.pods))  # no pod written or removed: no restart, same crash loops
        if pods_key != self._pods_key:
            self._pods_key = pods_key
            crashing = []
            for pod in cl.pods.values():
                seen = self._restarts_seen.get(pod.name, 0)
                if pod.restarts > seen:
                    si = c.index[pod.service]
                    reason = pod.last_terminated_reason or "Error"
                    evs.append((si, pod.name, reason))
                    bits[si] |= B_RESTARTED | (B_OOM if reason == "OOMKilled" else 0)
                    self._restarts_seen[pod.name] = pod.restarts
                if pod.waiting_reason == "CrashLoopBackOff":
                    crashing.append(c.index[pod.service])
            self._crashing = crashing
        for si in self._crashing:
            bits[si] |= B_CRASHLOOP
        if self._flagd is not None:
            flags = tuple(cl.configmaps.get("flagd-config", {}).items())
            if flags != self._flagd_state:
                self._flagd_state = flags
                evs.extend((self._flagd, pod, FLAGD_RELOAD) for pod in ctx.live_pods[self._flagd])
        if evs:
            self.events[p] = evs
        self.svc_bits[p] = bits
        self.edge_bits[p] = eb

    def _expected_part(self, res, arrays: dict, ctx: Context) -> tuple:
        """(saturation, hop delay, service bits but the pod-driven ones, edge bits) of a sample: a
        function of expected values (shared arrays until the traffic model recomputes them), the
        effect arrays and the context, so computed once per combination of those objects."""
        key = (
            res.utilization,
            res.throttled_ratio,
            res.unreachable,
            res.svc_fail,
            res.edge_timeout_share,
            arrays,
            ctx,
        )
        hit = self._expected_memo
        if hit is not None and all(a is b for a, b in zip(hit[0], key)):
            return hit[1]
        sat = np.where(res.utilization >= 1.0, 1.0 - 1.0 / np.maximum(res.utilization, 1e-9), 0.0)
        hop_ms = arrays["inbound_delay_ms"] + arrays["inbound_loss"] * 200.0
        bits = ctx.bits.copy()
        bits[res.throttled_ratio > 0.25] |= B_THROTTLED
        bits[sat > 0.01] |= B_SATURATED
        bits[res.unreachable > 0.5] |= B_UNREACHABLE
        bits[arrays["inbound_delay_ms"] > 0] |= B_NET_DELAY
        bits[arrays["inbound_loss"] > 0] |= B_NET_LOSS
        bits[arrays["added_ms"] > 0] |= B_SLOW_CODE
        eb = np.zeros(self.E, dtype=np.uint8)
        dst = self.compiled.edge_dst
        eb[res.edge_timeout_share > 0.01] |= E_TIMEOUT
        eb[(arrays["edge_fail"] > 0) & (ctx.route_kind == DNS)] |= E_DNS
        eb[(arrays["edge_fail"] > 0) & (ctx.route_kind == BLOCKED)] |= E_BLOCKED
        eb[res.unreachable[dst] > 0.01] |= E_REFUSED
        eb[(res.svc_fail[dst] - res.unreachable[dst]) > MIN_LOGGED_SHARE] |= E_UPSTREAM
        eb[arrays["inbound_loss"][dst] > 0] |= E_RESET
        eb[arrays["edge_mult"] > 1.0] |= E_RETRY
        out = (sat, hop_ms, bits, eb)
        self._expected_memo = (key, out)
        return out

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_pods_key"] = None  # keyed by a per-process counter: rescan after a copy
        state["_pod_memo"] = {}
        return state

    def _grow(self) -> None:
        def g(a: np.ndarray) -> np.ndarray:
            out = np.zeros((len(a) + self.GROW, *a.shape[1:]), dtype=a.dtype)
            out[: len(a)] = a
            return out

        self.times = g(self.times)
        for d in (self._svc, self._edge, self._rt):
            for k in d:
                d[k] = g(d[k])
        self.svc_bits, self.edge_bits, self.ctx_ref = g(self.svc_bits), g(self.edge_bits), g(self.ctx_ref)
        self._bind_arrays()

    def _bind_arrays(self) -> None:
        """Expose the per-sample arrays as attributes (`rec.svc_count[p, s]`), rebound after growth."""
        for d in (self._svc, self._edge, self._rt):
            self.__dict__.update(d)

    # ------------------------------------------------------------ lookups
    def check_app(self, app: object) -> None:
        name = getattr(app, "app", app)
        if name is not None and name != self.app_name:
            raise UnknownNameError("app of this simulator", str(name), [self.app_name])

    def service_index(self, service: str) -> int:
        i = self.compiled.index.get(service)
        if i is None:
            raise UnknownNameError(f"service of {self.app_name}", service, self.services)
        return i

    def sample_k(self, p: int) -> int:
        return int(round(self.times[p] / self.step_s))

    def position_of(self, k: int) -> int | None:
        return self._k_index.get(int(k))

    def positions(self, start_s: float, end_s: float) -> list[int]:
        """Samples whose 15 s window (t - step, t] overlaps [start_s, end_s], oldest first."""
        times = self.times[: self.n]
        lo = int(np.searchsorted(times, start_s, side="left"))
        hi = int(np.searchsorted(times, end_s + self.step_s, side="left"))
        return [p for p in range(lo, min(hi, self.n)) if times[p] - self.step_s < end_s]

    def context(self, p: int) -> Context:
        return self.contexts[int(self.ctx_ref[p])]

    def symptoms(self, p: int, service: str) -> list[str]:
        """Names of the symptom kinds a service showed in sample p (for summaries and tests)."""
        b = int(self.svc_bits[p, self.service_index(service)])
        return [name for bit, name in SYMPTOM_BIT_NAMES.items() if b & bit]

    # ------------------------------------------------ causes and texts (`log_causes`, shared with traces)
    def pick_own_cause(self, p: int, s: int, u: float) -> int:
        return log_causes.pick_own_cause(self, p, s, u)

    def route_cause(self, p: int, e: int) -> int:
        return log_causes.route_cause(self, p, e)

    def own_error_text(self, p: int, s: int, cause: int | None, draw: Draw | None = None) -> str:
        return log_causes.own_error_text(self, p, s, cause, draw)

    def own_code(self, p: int, s: int, cause: int) -> str:
        return log_causes.own_code(self, p, s, cause)

    def client_error_text(
        self,
        e: int,
        cause: int,
        detail: str = "",
        code: str = "Unknown",
        draw: Draw | None = None,
        p: int | None = None,
    ) -> str:
        return log_causes.client_error_text(self, e, cause, detail, code, draw, p)

    def upstream_text(self, e: int, callee_text: str) -> str:
        return log_causes.upstream_text(self, e, callee_text)

    def root_cause(self, p: int, d: int, depth: int = 0) -> tuple[int, int, int, str, str]:
        return log_causes.root_cause(self, p, d, depth)

    def error_causes(self, p: int, s: int) -> list[tuple[float, int, int]]:
        return log_causes.error_causes(self, p, s)

    def roots_through(
        self, p: int, s: int | None = None, e: int | None = None
    ) -> tuple[list[int], list[float]]:
        return log_causes.roots_through(self, p, s, e)

    def draw_roots(self, p: int, s: int | None, n: int) -> list[int]:
        return log_causes.draw_roots(self, p, s, n)

    def forced_spec(self, p: int, cause: int, s: int, e: int) -> tuple[int, int, int]:
        return log_causes.forced_spec(self, p, cause, s, e)

    def error_trace_specs(self, p: int, s: int, n: int) -> list[tuple[int, int, int, int]]:
        return log_causes.error_trace_specs(self, p, s, n)

    # ------------------------------------------------ log synthesis (`log_lines`)
    def lines(self, p: int, s: int, min_rank: int = 0) -> list[LogRecord]:
        return log_lines.lines(self, p, s, min_rank)


__all__ = ["STEP_S", "LogContextRecorder"]
