"""Traces synthesised on query from the per-sample log context (nothing is stored per trace).

A trace id encodes (sample, root request type or background service, slot, forced outcome) and a
seed-keyed checksum, so `get_trace` regenerates exactly the trace `find_traces` or a log line
pointed at; its start time is a function of the id (`trace_start`). The spans are those of the
root's `span_tree.Shape` (CLIENT and SERVER spans of every call, datastores and brokers only as
their callers' CLIENT / PRODUCER spans); durations are the shape's means from the recorded own
latencies and hops, scaled by one log-normal factor per trace (the span metrics' histogram model);
failures follow the recorded failure shares per call, and a *forced* trace (the kind error log
lines point at) fails exactly at the call the log line names. Failure causes and forced kinds (the
fields an id packs) are `causes`, shared with the log lines.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

from ..core.detmath import dot
from ..core.errors import UnknownNameError
from . import log_causes
from .causes import DNS, F_EDGE, F_NONE, F_OWN, REFUSED, RESET, SATURATED, TIMEOUT, UPSTREAM

if TYPE_CHECKING:
    from .log_state import LogState

SIGMA = 0.5  # log-normal shape of own processing time (same as the traffic model)
MAX_SPANS = 250
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Span:
    span_id: str
    parent_id: str | None
    service: str
    name: str
    kind: str  # SERVER | CLIENT | PRODUCER | CONSUMER
    start_ms: float  # offset from the trace start
    duration_ms: float
    status: str  # OK | ERROR
    attributes: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Trace:
    trace_id: str
    start_s: float  # simulated time of the root span's start
    root_service: str
    root_name: str
    duration_ms: float
    status: str
    spans: tuple[Span, ...]

    def services(self) -> set[str]:
        return {s.service for s in self.spans}


# ---------------------------------------------------------------- trace id codec
def _h64(key: bytes, data: bytes, person: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8, key=key, person=person).digest(), "big")


def encode_trace_id(
    key: bytes, k: int, root: int, slot: int, fkind: int = F_NONE, fidx: int = 0, fcause: int = 0
) -> str:
    """Pack the fields (58 bits) and hide them behind a keyed checksum so ids look random but decode."""
    packed = (
        (k & 0xFFFFF)
        | (root & 0x3FF) << 20
        | (slot & 0x3FF) << 30
        | (fkind & 0x3) << 40
        | (fidx & 0xFFF) << 42
        | (fcause & 0xF) << 54
    )
    b = _h64(key, packed.to_bytes(8, "big"), b"trace-chk")
    a = packed ^ _h64(key, b.to_bytes(8, "big"), b"trace-mask")
    return f"{b:016x}{a:016x}"


def decode_trace_id(key: bytes, trace_id: str) -> tuple[int, int, int, int, int, int] | None:
    try:
        if len(trace_id) != 32:
            return None
        b, a = int(trace_id[:16], 16), int(trace_id[16:], 16)
    except ValueError:
        return None
    packed = a ^ _h64(key, b.to_bytes(8, "big"), b"trace-mask")
    if packed >> 58 or _h64(key, packed.to_bytes(8, "big"), b"trace-chk") != b:
        return None
    return (
        packed & 0xFFFFF,
        packed >> 20 & 0x3FF,
        packed >> 30 & 0x3FF,
        packed >> 40 & 0x3,
        packed >> 42 & 0xFFF,
        packed >> 54 & 0xF,
    )


# ---------------------------------------------------------------- generation
def root_name(rec: LogState, root: int) -> tuple[int, str]:
    """(root service index, root span name)."""
    shape = rec.shapes[root]
    if shape.nodes:
        return shape.nodes[0].svc, shape.nodes[0].name
    return root - rec.R, ""


class _Gen:
    """One trace's recursive generator; `force` conditions the outcome (see module docstring).

    Durations: every span's mean comes from `Shape.means` (own time plus the children in
    sequence) and is scaled by one log-normal factor per trace, so a span's duration is
    log-normal around its mean (the model of the duration histograms) and children fit inside
    their parents."""

    def __init__(
        self,
        rec: LogState,
        p: int,
        rng: np.random.Generator,
        fkind: int,
        fidx: int,
        fcause: int,
        trace_key: int,
        shape,
    ):
        self.rec, self.p, self.rng = rec, p, rng
        self.fkind, self.fidx, self.fcause = fkind, fidx, fcause
        self.forced_done = False
        self.free = fkind == F_NONE  # random failures only in unconditioned traces
        self.spans: list[Span] = []
        self.key = trace_key
        self.u = rng.random(256).tolist()
        self.ui = 0
        self.shape = shape
        self.nodes = shape.nodes
        self.hop = rec.hop_ms[p].astype(np.float64)
        self.own_ms = rec.own_lat[p].astype(np.float64)
        self.scale = 1.0  # set by `generate`
        self.mean: list[float] = []
        self.lite = False

    def set_scale(self, z: float) -> None:
        self.scale = math.exp(SIGMA * z - SIGMA * SIGMA / 2)
        self.mean = (self.shape.means(self.own_ms, self.hop) * self.scale).tolist()

    def rand(self) -> float:
        self.ui += 1
        if self.ui >= len(self.u):
            self.u = self.rng.random(256).tolist()
            self.ui = 0
        return self.u[self.ui]

    # error texts (`lite`: placeholders, for callers that only need the spans' times and statuses)
    def own_text(self, s: int, cause: int) -> str:
        return "error" if self.lite else log_causes.own_error_text(self.rec, self.p, s, cause)

    def client_text(self, e: int, cause: int) -> str:
        return "error" if self.lite else log_causes.client_error_text(self.rec, e, cause)

    def upstream(self, e: int, text: str) -> str:
        return "error" if self.lite else log_causes.upstream_text(self.rec, e, text)

    def span_id(self) -> str:
        h = (self.key * 0x9E3779B97F4A7C15 + len(self.spans) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        return f"{h:016x}"

    def add(self, **kw) -> int:
        self.spans.append(Span(**kw))
        return len(self.spans) - 1

    def own_failure(self, s: int) -> int | None:
        if self.fkind == F_OWN and not self.forced_done and self.fidx == s:
            self.forced_done = True
            return self.fcause
        if not self.free:
            return None
        r = self.rec
        p = self.p
        u = self.rand()
        sat = float(r.saturated[p, s])
        if u < sat:
            return SATURATED
        if self.rand() < float(r.own_err[p, s]):
            return log_causes.pick_own_cause(self.rec, p, s, self.rand())
        return None

    def call_failure(self, e: int, d: int) -> int | None:
        """Caller-side failure of one attempt (before the callee's own outcome is known)."""
        if self.fkind == F_EDGE and not self.forced_done and self.fidx == e:
            return self.fcause
        if not self.free:
            return None
        r, p = self.rec, self.p
        if self.rand() < float(r.edge_route[p, e]):
            return r.route_cause(p, e)
        if self.rand() < float(r.unreachable[p, d]):
            return REFUSED
        if self.rand() < float(r.inbound_loss[p, d]) * 0.3:
            return RESET
        if self.rand() < float(r.edge_tshare[p, e]):
            return TIMEOUT
        return None

    def server(
        self, n: int, parent: str | None, start: float, deadline: float, caller: int | None
    ) -> tuple[float, int | None, str]:
        """The SERVER (root: or CONSUMER) span of node n; returns (end, failure or None, error text)."""
        r = self.rec
        node = self.nodes[n]
        s = node.svc
        idx = self.add(
            span_id=self.span_id(),
            parent_id=parent,
            service=r.services[s],
            name=node.name,
            kind="SERVER",
            start_ms=start,
            duration_ms=0.0,
            status="OK",
        )
        my_id = self.spans[idx].span_id
        own = float(self.own_ms[s]) * self.scale
        t = start + own * 0.3
        fail: int | None = self.own_failure(s)
        text = self.own_text(s, fail) if fail is not None else ""
        if fail is None:
            for c in node.children:
                if len(self.spans) >= MAX_SPANS or t >= deadline:
                    break
                t, cfail, ctext = self.call(s, c, my_id, t, deadline)
                if cfail is not None:
                    fail, text = UPSTREAM, ctext
                    break
            t += own * 0.7
        end = min(t, deadline)
        if end < t and fail is None:
            fail, text = TIMEOUT, "context canceled"
        attrs = dict(r.server_attrs[s])
        if caller is not None:
            attrs["peer.service"] = r.services[caller]
        if parent is None and self.shape.root_kind == "CONSUMER":
            attrs["messaging.operation"] = "receive"
        if fail is not None:
            attrs["error.message"] = text
        self.spans[idx] = Span(
            span_id=my_id,
            parent_id=parent,
            service=r.services[s],
            name=node.name,
            kind=self.shape.root_kind if parent is None else "SERVER",
            start_ms=round(start, 3),
            duration_ms=round(max(end - start, 0.001), 3),
            status="ERROR" if fail is not None else "OK",
            attributes=attrs,
        )
        return end, fail, text

    def call(self, s: int, n: int, parent: str, t: float, deadline: float) -> tuple[float, int | None, str]:
        """Node n's call from s, with retries: one CLIENT (PRODUCER) span per attempt, the callee's
        SERVER span inside it; returns (time after the call, failure, error text for the caller)."""
        r, p = self.rec, self.p
        node = self.nodes[n]
        d, e = node.svc, node.edge
        timeout = float(r.edge_timeout[p, e])
        attempts = int(r.retries[e]) + 1
        forced_here = (
            self.fkind in (F_EDGE, F_OWN)
            and not self.forced_done
            and ((self.fkind == F_EDGE and self.fidx == e) or (self.fkind == F_OWN and self.fidx == d))
        )
        fail: int | None = None
        text = ""
        for attempt in range(attempts):
            if t >= deadline or len(self.spans) >= MAX_SPANS:
                break
            hop = float(self.hop[d]) * self.scale  # scaled like the means (`span_tree`)
            cause = self.call_failure(e, d)
            cid = self.client_span(s, n, parent, t, attempt)
            if cause is not None and cause != TIMEOUT:
                dur = min(hop + (1.0 if cause in (REFUSED, DNS, RESET) else timeout), deadline - t)
                text = self.client_text(e, cause)
                self.close_client(cid, t, dur, text)
                t += dur
                fail = cause
                continue
            call_deadline = min(deadline, t + timeout) if self.free or cause == TIMEOUT else deadline
            if t + hop / 2 >= call_deadline:  # the deadline fires before the request arrives
                fail, text = TIMEOUT, self.client_text(e, TIMEOUT)
                self.close_client(cid, t, call_deadline - t, text)
                t = call_deadline
                continue
            if node.name:
                end, dfail, dtext = self.server(n, self.spans[cid].span_id, t + hop / 2, call_deadline, s)
            else:  # a datastore or broker: no span of its own
                dfail = self.own_failure(d)
                dtext = self.own_text(d, dfail) if dfail is not None else ""
                end = min(t + hop / 2 + self.mean[n], call_deadline)
            if cause == TIMEOUT:
                t2 = min(t + timeout, deadline)
                fail, text = TIMEOUT, self.client_text(e, TIMEOUT)
                self.close_client(cid, t, t2 - t, text)
                t = t2
                continue
            if dfail == TIMEOUT and call_deadline < deadline and end >= call_deadline - 1e-6:
                fail, text = TIMEOUT, self.client_text(e, TIMEOUT)  # the caller's deadline fired
                self.close_client(cid, t, call_deadline - t, text)
                t = call_deadline
                continue
            t2 = min(end + hop / 2, deadline)
            if dfail is None:
                self.close_client(cid, t, t2 - t, "")
                return t2, None, ""
            fail = UPSTREAM
            text = self.upstream(e, dtext)
            self.close_client(cid, t, t2 - t, text)
            t = t2
            if forced_here or not self.free:
                break  # a forced outcome is not retried away
        if forced_here:
            self.forced_done = True
        return t, fail, text

    def client_span(self, s: int, n: int, parent: str, start: float, attempt: int) -> int:
        r = self.rec
        node = self.nodes[n]
        attrs = {"peer.service": r.services[node.svc], **dict(node.client_attrs)}
        if attempt:
            attrs["retry.attempt"] = attempt
        return self.add(
            span_id=self.span_id(),
            parent_id=parent,
            service=r.services[s],
            name=node.client,
            kind=node.client_kind,
            start_ms=round(start, 3),
            duration_ms=0.0,
            status="OK",
            attributes=attrs,
        )

    def close_client(self, i: int, start: float, dur: float, error: str) -> None:
        sp = self.spans[i]
        attrs = sp.attributes
        if error:
            attrs["error.message"] = error
        self.spans[i] = Span(
            span_id=sp.span_id,
            parent_id=sp.parent_id,
            service=sp.service,
            name=sp.name,
            kind=sp.kind,
            start_ms=round(start, 3),
            duration_ms=round(max(dur, 0.001), 3),
            status="ERROR" if error else "OK",
            attributes=attrs,
        )


def duration_z(rec: LogState, fields: tuple[int, int, int, int, int, int]) -> float:
    """The standard normal of a trace's duration scale. The natural slots of one sample are stratified
    (slot j draws from the j-th of NATURAL_SLOTS equal-probability strata, at an offset shared by the
    sample), so the traces a search returns follow the log-normal closely; every trace's marginal is
    still the standard normal."""
    k, root, slot = fields[0], fields[1], fields[2]
    if fields[3] == F_NONE and slot < NATURAL_SLOTS:
        v = _h64(rec.key, repr((k, root)).encode(), b"trace-z") / 2.0**64
        u = (slot + v) / NATURAL_SLOTS
    else:
        u = _h64(rec.key, repr(fields).encode(), b"trace-z") / 2.0**64
    return _NORMAL.inv_cdf(min(max(u, 1e-12), 1.0 - 1e-12))


def trace_start(rec: LogState, fields: tuple[int, int, int, int, int, int]) -> float:
    """Where in its 15 s sample a trace starts: a function of its id fields alone."""
    h = _h64(rec.key, repr(fields).encode(), b"trace-start")
    k = fields[0]
    return k * rec.step_s - rec.step_s + (h >> 11) / float(1 << 53) * rec.step_s


def ok_span_time(
    rec: LogState, fields: tuple[int, int, int, int, int, int], s: int, u: float
) -> tuple[float, float] | None:
    """(a time u of the way into service s's span, its duration in ms) in the trace of an
    unfailing (F_OK) id, from the shape alone: without failures a span starts and lasts what the
    shape's linear model says, scaled by the trace's factor (what `generate` would produce)."""
    p = rec.position_of(fields[0])
    if p is None or fields[1] >= len(rec.shapes):
        return None
    shape = rec.shapes[fields[1]]
    if not shape.nodes or shape.queue >= 0 and float(rec.unreachable[p, shape.queue]) > 0.5:
        return None
    n = next((i for i, nd in enumerate(shape.nodes) if nd.svc == s and nd.name), None)
    if n is None:
        return None
    own, hop = rec.own_lat[p].astype(np.float64), rec.hop_ms[p].astype(np.float64)
    scale = math.exp(SIGMA * duration_z(rec, fields) - SIGMA * SIGMA / 2)
    start = scale * (dot(shape.start_own[n], own) + dot(shape.start_hops[n], hop))
    dur = scale * (dot(shape.own[n], own) + dot(shape.hops[n], hop))
    return round(trace_start(rec, fields), 3) + (start + u * dur) / 1000.0, dur


def generate(
    rec: LogState, trace_id: str, fields: tuple[int, int, int, int, int, int], lite: bool = False
) -> Trace | None:
    """The trace an id names (`lite`: error texts left out, for times and statuses only)."""
    k, root, slot, fkind, fidx, fcause = fields
    p = rec.position_of(k)
    if p is None or root >= len(rec.shapes):
        return None
    shape = rec.shapes[root]
    if not shape.nodes:
        return None
    if shape.queue >= 0 and float(rec.unreachable[p, shape.queue]) > 0.5:
        return None  # a consumer receives nothing from a broker that is gone
    rng = np.random.default_rng([*rec.entropy, 2, k, root, slot, fkind, fidx, fcause])
    g = _Gen(rec, p, rng, fkind, fidx, fcause, int(trace_id[:16], 16), shape)
    g.set_scale(duration_z(rec, fields))
    g.lite = lite
    start_s = trace_start(rec, fields)
    end, fail, _ = g.server(0, None, 0.0, math.inf, None)
    return Trace(
        trace_id=trace_id,
        start_s=round(start_s, 3),
        root_service=rec.services[shape.nodes[0].svc],
        root_name=shape.nodes[0].name,
        duration_ms=round(end, 3),
        status="ERROR" if fail is not None else "OK",
        spans=tuple(g.spans),
    )


# ---------------------------------------------------------------- queries
def get_trace(recorder: LogState, trace_id: str) -> Trace:
    """Regenerate the trace an id names (ids come from `find_traces` or from log lines)."""
    fields = decode_trace_id(recorder.key, trace_id.strip().lower())
    tr = generate(recorder, trace_id.strip().lower(), fields) if fields is not None else None
    if tr is None:
        raise UnknownNameError("trace id", trace_id, [])
    return tr


NATURAL_SLOTS = 6
SLOW_SLOTS = 24
ERROR_SLOTS = 5


def find_traces(
    recorder: LogState,
    app: object,
    start_s: float,
    end_s: float,
    service: str | None = None,
    min_duration_ms: float | None = None,
    status: str | None = None,
    limit: int = 20,
) -> list[Trace]:
    """Traces in [start_s, end_s], newest first, like a Jaeger search.

    Per 15 s sample a few unconditioned traces are drawn (more when `min_duration_ms` asks for slow
    ones); when errors were recorded, error traces are drawn from the service's error causes in
    proportion to their share, so rare failures are still found (a trace store keeps them too).
    `status`: None, "ok" or "error".
    """
    rec = recorder
    rec.check_app(app)
    s = rec.service_index(service) if service is not None else None
    want = None if status is None else str(status).lower().replace("status_code_", "")
    if want not in (None, "ok", "error", "unset"):
        raise UnknownNameError("trace status", str(status), ["ok", "error"])
    if want == "unset":
        want = "ok"
    out: list[Trace] = []
    c = rec.compiled
    for p in rec.positions(start_s, end_s)[::-1]:
        k = rec.sample_k(p)
        ids: list[str] = []
        if want != "error":
            n = SLOW_SLOTS if min_duration_ms else NATURAL_SLOTS
            roots = log_causes.draw_roots(rec, p, s, n)
            ids += [encode_trace_id(rec.key, k, int(rt), j, F_NONE) for j, rt in enumerate(roots)]
        if want != "ok":
            target = c.entry if s is None else s
            for j, (fk, fi, fc, rt) in enumerate(log_causes.error_trace_specs(rec, p, target, ERROR_SLOTS)):
                ids.append(encode_trace_id(rec.key, k, rt, 512 + j, fk, fi, fc))
        for tid in ids:
            tr = generate(rec, tid, decode_trace_id(rec.key, tid))  # type: ignore[arg-type]
            if tr is None or not (start_s <= tr.start_s <= end_s):
                continue
            if s is not None and rec.services[s] not in tr.services():
                continue
            if min_duration_ms is not None and tr.duration_ms < min_duration_ms:
                continue
            if want == "error" and tr.status != "ERROR" or want == "ok" and tr.status != "OK":
                continue
            out.append(tr)
        if len(out) >= limit:
            break
    out.sort(key=lambda tr: -tr.start_s)
    return out[: max(0, int(limit))]


__all__ = [
    "Span",
    "Trace",
    "find_traces",
    "generate",
    "get_trace",
    "encode_trace_id",
    "decode_trace_id",
    "trace_start",
]
