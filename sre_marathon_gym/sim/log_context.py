"""The log context: per-15 s aggregates from which logs and traces are synthesised on query.

Why: materialising log lines every tick would dominate the simulator's cost, and almost none are
ever read. Instead `LogContextRecorder.record` keeps, per 15 s sample, a few float32 numbers per
service / edge / request type (counts, failure shares and their components, latencies) plus
symptom bitmasks and a small shared `log_symptoms.Context` that only changes when the cluster or
the effects change (running pods, the symptom details such as an address that does not resolve).
Lines are rendered from templates (`log_text`) by `log_lines` with a random stream derived from
(seed, service, sample), so the same query always returns the same lines, at a cost paid only
when an agent reads logs; `log_causes` attributes failures to their causes; `log_search` and
`traces` are the queries.

Logs show symptoms only: what a process would print (exceptions naming the call that failed,
flag strings of the OpenTelemetry demo, OOM and probe failures), never fault ids or the
artifact a fault changed.

This module holds the recorder: the simulator's hook that appends a sample, over its state
(`log_state`: the arrays, lookups by time and name), and methods that attribute causes or render
lines by delegating to `log_causes` and `log_lines`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import log_causes, log_lines
from .causes import BLOCKED, DNS
from .cluster import POD_MUTATIONS
from .log_snapshot import snapshot
from .log_state import STEP_S, LogState
from .log_symptoms import (
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
    Context,
)
from .log_text import FLAGD_RELOAD

if TYPE_CHECKING:
    from .log_draw import Draw
    from .log_lines import LogRecord
    from .sim_state import SimState


LINES_CACHE = 20_000  # (sample, service, rank) entries of rendered lines kept per recorder


class LogContextRecorder(LogState):
    """Per-15 s aggregates the log and trace synthesisers read; `record(sim, t)` is the simulator hook."""

    # ------------------------------------------------------------ the hook
    def record(self, sim: SimState, t: float) -> None:
        """Append the sample for time t (call once per 15 s metric sample, after the tick)."""
        res = sim.last
        if res is None:
            return
        k = int(round(t / self.step_s))
        p = self._k_index.get(k)
        again = p is not None  # the sample is recorded again: what was read of it is stale
        if p is None:
            p = self.n
            if p >= len(self.times):
                self._grow()
            self.n += 1
            self._k_index[k] = p
        self.times[p] = k * self.step_s
        if again:
            self._cause_cache = {key: v for key, v in self._cause_cache.items() if key[0] != p}
            self._lines_cache = {key: v for key, v in self._lines_cache.items() if key[0] != p}
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
        """`log_lines.lines`, kept for the last `LINES_CACHE` (sample, service, rank) asked (a
        recorded sample's lines never change, and a log search walks back over the same samples at
        every invocation). The list and its records are shared: callers must not modify them."""
        key = (p, s, min_rank)
        hit = self._lines_cache.get(key)
        if hit is None:
            if len(self._lines_cache) >= LINES_CACHE:
                del self._lines_cache[next(iter(self._lines_cache))]
            hit = self._lines_cache[key] = log_lines.lines(self, p, s, min_rank)
        return hit


__all__ = ["STEP_S", "LogContextRecorder"]
