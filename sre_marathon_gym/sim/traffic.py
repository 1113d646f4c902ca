"""Per-tick traffic model, vectorised over services, edges and request types.

Requests of each type arrive at the entry point and fan out along the call graph. Each service is
an M/M/c queue (c = ready replicas x worker threads) whose service time grows with CPU
throttling; waiting time uses Sakasegawa's approximation. A call fails when the callee fails
(its own errors, saturation, no ready endpoint), when the caller's timeout fires (exponential
latency tail), or when the network drops it; retries re-send failed calls and add load. Latency
adds along the path, capped by each caller's timeout. Counts are sampled (Poisson / binomial)
from a passed Generator, so telemetry is noisy but seeded. exp, log, power and the sums over the
call graph go through `detmath`, so the same seed gives the same bits on every CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import detmath
from ..core.detmath import OrderedSums
from .topology import CompiledApp

LATENCY_SIGMA = 0.5  # log-normal shape of per-request latency around its mean
UNLIMITED_CPU_CORES = 2.0  # what a pod without a CPU limit can use on its node
CFS_PERIOD_MS = 100.0  # the kernel's default CFS bandwidth period (cpu.cfs_period_us = 100000)
EPS = 1e-9
# 0-d operands for `expected`: the same float64 values, faster ufunc calls than Python floats
_ZERO, _ONE, _THOUSAND, _EPS, _RHO_CAP = (np.array(v) for v in (0.0, 1.0, 1000.0, EPS, 0.98))


def norm_cdf(x: np.ndarray) -> np.ndarray:
    """Standard normal CDF via an erf approximation (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7)."""
    z = np.abs(x) / np.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = 1.0 - poly * detmath.exp(-z * z)
    return 0.5 * (1.0 + np.sign(x) * erf)


def lognormal_cdf(x_ms: np.ndarray, mean_ms: np.ndarray) -> np.ndarray:
    """P(latency <= x) for a log-normal with the given mean; broadcasts x over the last axis."""
    mu = detmath.log(np.maximum(mean_ms, EPS)) - LATENCY_SIGMA**2 / 2
    return norm_cdf((_log_bounds(x_ms) - mu[..., None]) / LATENCY_SIGMA)


_LOG_BOUNDS: dict[bytes, np.ndarray] = {}


def _log_bounds(x_ms: np.ndarray) -> np.ndarray:
    """log(max(x, EPS)), kept per value of `x`: callers pass a few constant bounds (the histogram
    buckets, the slow threshold) at every traffic change, and the log of a bucket row costs more than
    the rest of the CDF."""
    x = np.asarray(x_ms, dtype=np.float64)
    key = x.tobytes() + str(x.shape).encode()
    out = _LOG_BOUNDS.get(key)
    if out is None:
        out = detmath.log(np.maximum(x, EPS))
        out.flags.writeable = False
        if len(_LOG_BOUNDS) < 64:  # a handful in practice; never unbounded
            _LOG_BOUNDS[key] = out
    return out


def lognormal_quantile_factor(q: float) -> float:
    """quantile / mean of the latency distribution (0.95 -> about 2.0)."""
    z = {0.5: 0.0, 0.9: 1.2816, 0.95: 1.6449, 0.99: 2.3263}[q]
    return float(detmath.exp(-(LATENCY_SIGMA**2) / 2 + z * LATENCY_SIGMA))


def call_graph_height(services: int, src: np.ndarray, dst: np.ndarray) -> int | None:
    """Longest caller -> callee chain in edges (0 without edges), or None if the graph has a cycle."""
    pending = [0] * services  # callees not yet placed
    callers: list[list[int]] = [[] for _ in range(services)]
    for a, b in zip(src.tolist(), dst.tolist()):
        callers[b].append(a)
        pending[a] += 1
    height = [0] * services
    ready = [s for s in range(services) if pending[s] == 0]
    done = 0
    while ready:
        s = ready.pop()
        done += 1
        for a in callers[s]:
            height[a] = max(height[a], height[s] + 1)
            pending[a] -= 1
            if pending[a] == 0:
                ready.append(a)
    return max(height, default=0) if done == services else None


@dataclass
class _Inputs:
    """Per-input parts of `TrafficModel.expected` (independent of the feedback state)."""

    rt_rate: np.ndarray
    rt_sum: np.floating
    background: np.ndarray  # [S] background calls/s (a consumer fetches only while it reaches its broker)
    flow_mult: np.ndarray  # (rt_rate @ edge_flow) * edge_mult, the sum in a fixed order
    unreachable: np.ndarray
    cpu_cap: np.ndarray
    cap_positive: np.ndarray
    cap_floor: np.ndarray
    limited: np.ndarray  # has a CPU limit
    cfs_ms: np.ndarray  # CFS delay of a request once its work carries over periods (0 without a limit)
    servers: np.ndarray
    has_servers: np.ndarray
    servers_floor: np.ndarray  # max(servers, EPS)
    servers_one: np.ndarray  # max(servers, 1)
    queue_exponent: np.ndarray  # sqrt(2 (servers + 1)) - 1
    ok_reachable: np.ndarray  # (1 - own_error) (1 - unreachable)
    hop_ms: np.ndarray
    hop_dst: np.ndarray
    neg_timeout: np.ndarray
    keep_loss: np.ndarray | None  # 1 - loss_fail[dst]; None when all ones (x * 1.0 == x: no product)
    route_ok: np.ndarray  # 1 - edge_fail


class _Work:
    """Preallocated per-pass buffers of `TrafficModel.expected`'s fixed-point loop, as named row views."""

    def __init__(self, services: int, edges: int):
        self.sizes = S, E = services, edges
        buf = np.empty((3, E))  # [lat_dst, fail_dst, t_share]; the first two rows are one gather
        self.seen = buf[:2].reshape(-1)
        self.lat_dst, self.t_share, self.fail_dst_t_share = buf[0], buf[2], buf[1:]
        buf = np.empty((2, E))  # 1 - [fail_dst, t_share]
        self.ok_dst_t_ok, self.ok_dst, self.t_ok = buf, buf[0], buf[1]
        buf = np.empty((2, E))
        self.transient_and_pow, self.transient, self.transient_pow = buf, buf[0], buf[1]
        buf = np.empty((3, E))  # [1 - transient, all_transient, route_ok]
        self.not_transient_all_transient, self.all_transient, self.route_ok = buf[:2], buf[1], buf[2]
        self.not_transient_route_ok, self.route_ok_all_transient = buf[::2], buf[2:0:-1]
        buf = np.empty((3, E))  # [once, edge_fail, -retries once]
        self.once_edge_fail, self.once, self.edge_fail, self.neg_retry = buf[:2], buf[0], buf[1], buf[2]
        self.edge_fail_neg_retry = buf[1:]
        buf = np.empty((2, E))  # 1 - [edge_fail, -retries once]
        self.edge_ok_retry_factor, self.edge_ok, self.retry_factor = buf, buf[0], buf[1]
        buf = np.empty((2, E))  # log(1 - edge_fail) and seen_ms, both scaled by calls_per
        self.log_ok_seen_ms, self.log_ok, self.seen_ms = buf, buf[0], buf[1]
        self.lat_term, self.callee_ms, self.tmp = np.empty(E), np.empty(E), np.empty(E)
        self.tmp_s, self.ok_s = np.empty(S), np.empty(S)

    def __reduce__(self) -> tuple:
        # scratch space whose row views alias one another: rebuilt, not copied (a pickle or deepcopy
        # of the views would give independent arrays)
        return _Work, self.sizes


@dataclass
class TickResult:
    """Expected values and sampled counts of one tick."""

    rt_rate: np.ndarray  # [R] requests/s
    rt_count: np.ndarray  # [R] sampled requests this tick
    rt_errors: np.ndarray  # [R] sampled failed requests
    rt_fail: np.ndarray  # [R] failure probability
    rt_latency_ms: np.ndarray  # [R] mean latency
    rt_slow: np.ndarray  # [R] share of successful requests slower than the slow threshold
    svc_rate: np.ndarray  # [S] server calls/s
    svc_count: np.ndarray  # [S]
    svc_errors: np.ndarray  # [S]
    svc_fail: np.ndarray  # [S]
    svc_latency_ms: np.ndarray  # [S] mean server span duration (including downstream)
    own_latency_ms: np.ndarray  # [S]
    cpu_cores: np.ndarray  # [S] CPU used (capped by limits)
    cpu_demand: np.ndarray  # [S] CPU wanted
    throttled_ratio: np.ndarray  # [S] share of CFS periods throttled
    utilization: np.ndarray  # [S] queue utilisation rho
    edge_rate: np.ndarray  # [E] calls/s
    edge_fail: np.ndarray  # [E] per-call failure after retries
    edge_timeout_share: np.ndarray  # [E] share of calls that hit the caller's timeout
    unreachable: np.ndarray  # [S] share of calls that found no ready endpoint


class TrafficModel:
    def __init__(
        self,
        compiled: CompiledApp,
        requests_per_second: float,
        cross_zone_ms: float,
        slow_threshold_ms: float = 2500.0,
    ):
        self.c = compiled
        self.rps = requests_per_second
        self.cross_zone_ms = cross_zone_ms
        self.slow_ms = slow_threshold_ms
        self.prev_edge_fail = np.zeros(len(compiled.edge_src))
        self._key: object = None
        self._hold_ms: np.ndarray | None = None
        self._span: tuple[np.ndarray, np.ndarray] | None = None  # last fixed point: span latency, failure
        self._fixed: tuple | None = None  # (arrays, input key, _Inputs)
        self._expected: TickResult | None = None
        self._draw: tuple | None = None  # (dt, Poisson means, failure probabilities) of `_expected`
        out_edges = np.zeros((len(compiled.services), len(compiled.edge_src)))
        out_edges[compiled.edge_src, np.arange(len(compiled.edge_src))] = 1.0
        # [S, E] incidence (edge e leaves service s) and [R, E] calls per request: products with them
        # are sums in a fixed order, not BLAS (whose summation order depends on the CPU)
        self.out_edges = OrderedSums(out_edges)
        self.edge_flow = OrderedSums(compiled.edge_flow)
        self._pow_tries = detmath.IntPower(compiled.edge_retries + 1.0)  # x ** (retries + 1) as products
        S, E = len(compiled.services), len(compiled.edge_src)
        self._kern_e = detmath.Kernels(E)  # log over edges, with its scratch preallocated
        # one exp per pass over [services | edges]: this pass's span success and the next pass's
        # timeout shares (one call instead of two: at these sizes a call costs its overhead)
        self._kern_se = detmath.Kernels(S + E)
        self._exp_in, self._exp_out = np.empty(S + E), np.empty(S + E)
        self._work = _Work(len(compiled.services), len(compiled.edge_src))
        self._neg_retries = -compiled.edge_retries
        # [lat, fail][:, dst] as indices into the flattened [2, S] spans buffer
        self._dst2 = np.concatenate([compiled.edge_dst, compiled.edge_dst + len(compiled.services)])
        # consumers (background work polling a queue service) and the edge each polls its broker over
        queues = {i for i, sv in enumerate(compiled.app.services) if sv.kind == "queue"}
        self._fetch_edges = [
            (int(compiled.edge_src[e]), e)
            for e in range(len(compiled.edge_src))
            if int(compiled.edge_dst[e]) in queues and compiled.background_rps[compiled.edge_src[e]] > 0
        ]
        height = call_graph_height(len(compiled.services), compiled.edge_src, compiled.edge_dst)
        # warm starts are exact when the cold iteration always ends at the fixed point (see `expected`)
        self.warm_start = height is not None and compiled.depth >= height + 1

    def tick(
        self,
        dt: float,
        arrays: dict[str, np.ndarray],
        ready: np.ndarray,
        ingress: np.ndarray,
        load_factor: float,
        load_mult: np.ndarray,
        rng: np.random.Generator,
        version: object = None,
    ) -> TickResult:
        """Expected values are recomputed only when an input's value changed (`version` names the
        values of `arrays`; readiness, ingress and load are compared directly), so they are a function
        of the inputs' history, not of unrelated cluster bookkeeping; every tick draws fresh counts
        around them."""
        key = (version, load_factor, load_mult.tobytes(), ready.tobytes(), ingress.tobytes())
        if version is None or key != self._key or self._expected is None:
            # twice: queueing holds threads for the span latency, retries depend on failures; two
            # passes move both feedbacks toward their fixed point (a damped response: settling
            # fully can take dozens of passes on Train Ticket); the first pass only for its state
            self.expected(arrays, ready, ingress, load_factor, load_mult, result=False)
            self._expected = self.expected(arrays, ready, ingress, load_factor, load_mult)
            self._key = key
            self._draw = None
        e = self._expected
        draw = self._draw
        if draw is None or draw[0] != dt:
            # request types and services in one draw: [R + S] means and failure probabilities
            draw = self._draw = (
                dt,
                np.concatenate([e.rt_rate, e.svc_rate]) * dt,
                np.clip(np.concatenate([e.rt_fail, e.svc_fail]), 0.0, 1.0),
            )
        n = rng.poisson(draw[1])  # int64 counts: what binomial is given either way
        count = n.astype(np.float64)
        errors = rng.binomial(n, draw[2]).astype(np.float64)
        r = len(e.rt_rate)
        out = object.__new__(TickResult)  # a field-for-field copy, as dataclasses.replace makes
        out.__dict__.update(e.__dict__)
        out.rt_count, out.rt_errors, out.svc_count, out.svc_errors = (
            count[:r],
            errors[:r],
            count[r:],
            errors[r:],
        )
        return out

    def _inputs(
        self,
        arrays: dict[str, np.ndarray],
        ready: np.ndarray,
        ingress: np.ndarray,
        load_factor: float,
        load_mult: np.ndarray,
    ) -> _Inputs:
        c = self.c
        dst = c.edge_dst
        rt_rate = self.rps * load_factor * c.weights * arrays["load_mult"] * load_mult
        # --- endpoints per zone: calls stay in their zone unless it has no ready pod
        ready_total = ready.sum(axis=0)
        none_local = ready == 0  # [Z, S]
        unreachable = np.where(ready_total > 0, 0.0, 1.0)
        cross = np.where(ready_total > 0, (ingress[:, None] * none_local).sum(axis=0), 0.0)
        entry_unreachable = float((ingress * (ready[:, c.entry] == 0)).sum())
        unreachable[c.entry] = max(unreachable[c.entry], entry_unreachable)
        cpu_cap = np.where(arrays["cpu_limit"] > 0, arrays["cpu_limit"], UNLIMITED_CPU_CORES) * ready_total
        servers = ready_total * arrays["threads"]
        # --- per-call view from the caller: network delay, zone crossing, loss
        hop_ms = (
            arrays["inbound_delay_ms"] + cross * 2.0 * self.cross_zone_ms + arrays["inbound_loss"] * 200.0
        )
        loss_fail = arrays["inbound_loss"] * 0.3
        keep_loss = 1.0 - loss_fail[dst]
        background = c.background_rps
        if self._fetch_edges:
            # a consumer that cannot reach its broker (no ready broker pod, or a policy denying the
            # route) fetches no records: it processes nothing while it retries its connection
            background = background.copy()
            for s_, e in self._fetch_edges:
                if unreachable[dst[e]] >= 1.0 or arrays["edge_fail"][e] >= 1.0:
                    background[s_] = 0.0
        # CFS bandwidth control: each pod may use `limit` x CFS_PERIOD_MS of CPU per period; once work
        # carries over from period to period, the quota is spent at the start of each period and the
        # container is stalled for the rest of it, so a request waits one stall for every quota its own
        # work needs (the fluid slowdown of an overloaded CPU is `service_time x u_cpu` below; this is
        # what the quota's granularity adds on top: large when a request needs more than one quota)
        limit = arrays["cpu_limit"]
        stall_ms = CFS_PERIOD_MS * (1.0 - np.minimum(limit, 1.0))
        work_ms = c.cpu_ms * arrays["cpu_mult"]
        quota_ms = np.maximum(limit * CFS_PERIOD_MS, EPS)
        cfs_ms = np.where(limit > 0, stall_ms * work_ms / quota_ms, 0.0)
        return _Inputs(
            rt_rate=rt_rate,
            rt_sum=rt_rate.sum(),
            background=background,
            flow_mult=self.edge_flow.vecmat(rt_rate) * arrays["edge_mult"],
            unreachable=unreachable,
            cpu_cap=cpu_cap,
            cap_positive=cpu_cap > 0,
            cap_floor=np.maximum(cpu_cap, EPS),
            limited=arrays["cpu_limit"] > 0,
            cfs_ms=cfs_ms,
            servers=servers,
            has_servers=servers > 0,
            servers_floor=np.maximum(servers, EPS),
            servers_one=np.maximum(servers, 1.0),
            queue_exponent=np.sqrt(2.0 * (servers + 1.0)) - 1.0,
            ok_reachable=(1.0 - arrays["own_error"]) * (1.0 - unreachable),
            hop_ms=hop_ms,
            hop_dst=hop_ms[dst],
            neg_timeout=-arrays["edge_timeout_ms"],
            keep_loss=None if (keep_loss == 1.0).all() else keep_loss,
            route_ok=1.0 - arrays["edge_fail"],
        )

    def expected(
        self,
        arrays: dict[str, np.ndarray],
        ready: np.ndarray,
        ingress: np.ndarray,
        load_factor: float,
        load_mult: np.ndarray,
        result: bool = True,
    ) -> TickResult | None:
        """Expected values of one tick; updates the feedback state (retry failures, thread hold
        times). With `result=False` only the state is updated and None is returned."""
        c = self.c
        src, dst = c.edge_src, c.edge_dst
        # everything that depends only on the inputs (not on the feedback state) is computed once per
        # input (the same operations on the same operands as inline; `arrays` is never mutated)
        key = (load_factor, load_mult.tobytes(), ready.tobytes(), ingress.tobytes())
        fixed = self._fixed
        if fixed is None or fixed[0] is not arrays or fixed[1] != key:
            fixed = self._fixed = (arrays, key, self._inputs(arrays, ready, ingress, load_factor, load_mult))
        f = fixed[2]
        rt_rate = f.rt_rate
        # --- demand (constants as 0-d arrays: the same float64 operations, faster ufunc calls)
        retry_amp = _ONE + c.edge_retries * self.prev_edge_fail
        edge_rate = f.flow_mult * retry_amp
        svc_rate = f.background.copy()
        svc_rate[c.entry] += f.rt_sum
        np.add.at(svc_rate, dst, edge_rate)
        # --- CPU and queueing
        cpu_cap = f.cpu_cap
        cpu_demand = svc_rate * c.cpu_ms * arrays["cpu_mult"] / _THOUSAND + arrays["extra_cores"]
        u_cpu = np.where(f.cap_positive, cpu_demand / f.cap_floor, _ZERO)
        # share of CFS periods in which a pod spends its quota; a throttled request waits (`cfs_ms`)
        # once work carries over from period to period (demand near or above the limit: the quota is
        # spent at the start of each period and the rest of it is stalled)
        throttled = np.clip((u_cpu - 0.5) / 0.7, 0.0, 1.0) * f.limited
        backlog = np.clip((u_cpu - 0.9) / 0.2, 0.0, 1.0)
        st = c.service_time_ms * np.maximum(_ONE, u_cpu) + arrays["added_ms"] + backlog * f.cfs_ms
        saturated_cpu = np.where(u_cpu > _ONE, _ONE - _ONE / np.maximum(u_cpu, _EPS), _ZERO)
        own_fail_base = _ONE - f.ok_reachable * (_ONE - saturated_cpu)
        hold_ms = self._hold_ms if self._hold_ms is not None else st
        unreachable = f.unreachable
        timeout = arrays["edge_timeout_ms"]
        src_rate = svc_rate[src]
        calls_per = np.where(src_rate > _ZERO, edge_rate / np.maximum(src_rate, _EPS), _ZERO)
        # --- fixed point over the call graph: span latency and failure include downstream calls
        # queueing: a worker thread is held for the whole span (own work plus downstream waits)
        rho = np.where(f.has_servers, svc_rate * hold_ms / _THOUSAND / f.servers_floor, _ZERO)
        rho_c = np.minimum(rho, _RHO_CAP)
        wq = st * detmath.power(rho_c, f.queue_exponent) / (f.servers_one * (_ONE - rho_c))
        saturated = np.where(rho >= _ONE, _ONE - _ONE / np.maximum(rho, _EPS), _ZERO)
        own_latency = st + wq
        own_fail = _ONE - (_ONE - own_fail_base) * (_ONE - saturated)
        # on an acyclic call graph the iteration below reaches its unique fixed point (bit for bit:
        # each value is the same expression of its callees' final values) from any start, after at
        # most height + 1 passes; starting from the previous solution, only services whose inputs
        # changed (and their callers) move, so it settles in fewer passes
        if self._span is not None and self.warm_start:
            span_latency, span_fail = self._span
        else:
            span_latency = own_latency.copy()
            span_fail = own_fail.copy()
        # loop invariants, hoisted (each is the same operation on the same operands as before)
        hop_dst, neg_timeout, keep_loss, route_ok = f.hop_dst, f.neg_timeout, f.keep_loss, f.route_ok
        own_ok = _ONE - own_fail
        out_edges = self.out_edges
        # span latency and failure live in the rows of one buffer, so that what the callers see of
        # them (the [2, E] gather) is taken and compared in one operation per pass
        spans = np.empty((2, len(own_latency)))
        spans_lat, spans_fail = spans
        spans_lat[:] = span_latency
        spans_fail[:] = span_fail
        # per-pass values go to preallocated buffers (no temporaries; `out` passed positionally where
        # allowed, the faster call); where two values are the same operation, their operands are
        # rows of one buffer and one ufunc call computes both
        w = self._work
        lat_dst, t_share, fail_dst_t_share = w.lat_dst, w.t_share, w.fail_dst_t_share
        ok_dst_t_ok, ok_dst, t_ok = w.ok_dst_t_ok, w.ok_dst, w.t_ok
        transient_and_pow, transient, transient_pow = w.transient_and_pow, w.transient, w.transient_pow
        not_transient_all_transient, not_transient_route_ok, route_ok_all_transient = (
            w.not_transient_all_transient,
            w.not_transient_route_ok,
            w.route_ok_all_transient,
        )
        once_edge_fail, once, edge_fail, neg_retry = w.once_edge_fail, w.once, w.edge_fail, w.neg_retry
        edge_fail_neg_retry, edge_ok_retry_factor, edge_ok, retry_factor = (
            w.edge_fail_neg_retry,
            w.edge_ok_retry_factor,
            w.edge_ok,
            w.retry_factor,
        )
        neg_retries = self._neg_retries
        log_ok_seen_ms, log_ok, seen_ms = w.log_ok_seen_ms, w.log_ok, w.seen_ms
        lat_term, callee_ms, tmp, ok_s = w.lat_term, w.callee_ms, w.tmp, w.ok_s
        add, subtract, multiply, maximum = np.add, np.subtract, np.multiply, np.maximum
        pow_tries, matvec = self._pow_tries, out_edges.matvec
        log_e, exp_se = self._kern_e.log, self._kern_se.exp
        n_s, exp_in, exp_out = len(own_latency), self._exp_in, self._exp_out
        span_part, next_part = exp_in[:n_s], exp_in[n_s:]  # [log span success | -timeout / callee]
        span_ok, next_t_share = exp_out[:n_s], exp_out[n_s:]
        dst2 = self._dst2
        spans_flat = spans.reshape(-1)
        seen = spans_flat.take(dst2, out=w.seen, mode="clip")  # == spans[:, dst].ravel() (indices are valid)
        seen_bytes = seen.tobytes()
        w.route_ok[:] = route_ok
        add(lat_dst, hop_dst, callee_ms)
        self._kern_e.exp(np.divide(neg_timeout, maximum(callee_ms, _EPS, out=tmp), tmp), t_share)
        for _ in range(c.depth):
            np.minimum(callee_ms, timeout, out=seen_ms)
            # retries help against transient failures (timeouts, lost packets), not against a
            # callee that fails this request deterministically (a bug, a wrong address, overload)
            subtract(_ONE, fail_dst_t_share, ok_dst_t_ok)  # [1 - fail_dst, 1 - t_share]
            subtract(_ONE, t_ok if keep_loss is None else multiply(t_ok, keep_loss, transient), transient)
            pow_tries(transient, transient_pow)
            subtract(_ONE, transient_and_pow, not_transient_all_transient)
            # [once, edge_fail] = 1 - [ok_dst (1 - transient) route_ok, ok_dst route_ok all_transient]
            multiply(ok_dst, not_transient_route_ok, once_edge_fail)
            multiply(once_edge_fail, route_ok_all_transient, once_edge_fail)
            subtract(_ONE, once_edge_fail, once_edge_fail)
            # [1 - edge_fail, 1 + retries once] as 1 - [edge_fail, -retries once]: the same values
            # (negation is exact, and a - (-b) is a + b in IEEE arithmetic)
            multiply(neg_retries, once, neg_retry)
            subtract(_ONE, edge_fail_neg_retry, edge_ok_retry_factor)
            log_e(maximum(edge_ok, _EPS, out=tmp), log_ok)
            multiply(calls_per, log_ok_seen_ms, log_ok_seen_ms)  # both times calls_per
            multiply(seen_ms, retry_factor, lat_term)
            add(own_latency, matvec(lat_term), spans_lat)
            # the next pass's callee latency (what `seen` will hold) and timeout share, with this
            # pass's span success in the same exp call: the same values as computed one by one
            add(spans_lat.take(dst), hop_dst, callee_ms)
            np.divide(neg_timeout, maximum(callee_ms, _EPS, out=tmp), next_part)
            span_part[:] = matvec(log_ok)
            exp_se(exp_in, exp_out)
            subtract(_ONE, multiply(own_ok, span_ok, ok_s), spans_fail)
            spans_flat.take(dst2, out=seen, mode="clip")
            now_bytes = seen.tobytes()
            # bytes equal == values equal here: spans are never NaN, and 1 - x rounds to +0, not -0
            if now_bytes == seen_bytes:
                # a fixed point: no callee changed (bit for bit), so a further iteration would
                # recompute every value (and this iteration's edge values) from the same inputs
                break
            seen_bytes = now_bytes
            t_share[:] = next_t_share
        edge_fail, t_share, all_transient = edge_fail.copy(), t_share.copy(), w.all_transient
        span_latency, span_fail = spans[0], spans[1]  # a fresh buffer per call: never written again
        self.prev_edge_fail = edge_fail
        self._hold_ms = span_latency
        self._span = (span_latency, span_fail)
        if not result:
            return None
        cpu_used = np.minimum(cpu_demand, cpu_cap)
        # --- request types: the entry's own part plus every call on the path
        local_edge_fail = 1.0 - (1.0 - own_fail[dst]) * route_ok * all_transient
        rt_log_ok = detmath.log(max(1.0 - own_fail[c.entry], EPS)) + self.edge_flow.matvec(
            detmath.log(np.maximum(1.0 - local_edge_fail, EPS))
        )
        rt_fail = 1.0 - detmath.exp(rt_log_ok)
        local_ms = np.minimum(own_latency[dst] + hop_dst, timeout)
        rt_latency = own_latency[c.entry] + self.edge_flow.matvec(local_ms)
        rt_slow = 1.0 - lognormal_cdf(np.array([self.slow_ms]), rt_latency)[:, 0]
        rt_count = rt_errors = svc_count = svc_errors = np.zeros(0)
        return TickResult(
            rt_rate=rt_rate,
            rt_count=rt_count,
            rt_errors=rt_errors,
            rt_fail=rt_fail,
            rt_latency_ms=rt_latency,
            rt_slow=rt_slow,
            svc_rate=svc_rate,
            svc_count=svc_count,
            svc_errors=svc_errors,
            svc_fail=span_fail,
            svc_latency_ms=span_latency,
            own_latency_ms=own_latency,
            cpu_cores=cpu_used,
            cpu_demand=cpu_demand,
            throttled_ratio=throttled,
            utilization=rho,
            edge_rate=edge_rate,
            edge_fail=edge_fail,
            edge_timeout_share=t_share,
            unreachable=unreachable,
        )
