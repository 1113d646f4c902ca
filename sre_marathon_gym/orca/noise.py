"""Background noise the demo always has: flagd EventStream long-poll reconnects.

Why: in the reference every window holds `flagd.evaluation.v1.Service/EventStream` spans ending in
DEADLINE_EXCEEDED (each flagd provider's stream is cut and re-opened about every 10 minutes; the
ORCA README tells curators to ignore them, flag_signals.md "Universal noise"), and the providers log
the reconnect. Without them a quiet window holds no ERROR span at all, so "is there any error?"
answers "is there an incident?". Each subscriber's reconnects are a function of (seed, service,
n) only (blake2b, no RNG state), so every query sees the same events on every machine.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

STREAM_S = 600.0  # the long poll's deadline: one reconnect per subscriber per 10 minutes
JITTER_S = 40.0  # reconnects drift by up to this much
EVENT_STREAM = "flagd.evaluation.v1.Service/EventStream"
# services that run a flagd provider in the demo (v2.2.0), and how their SDK logs the broken stream
SUBSCRIBERS: dict[str, tuple[str, str]] = {
    "ad": (
        "WARN",
        "flagd: EventStream error io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED: deadline exceeded, "
        "reconnecting",
    ),
    "cart": (
        "Warning",
        'Error in flagd EventStream: Status(StatusCode="DeadlineExceeded", Detail="Deadline Exceeded"), '
        "reconnecting",
    ),
    "checkout": (
        "ERROR",
        "flagd: error in event stream: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
    ),
    "frontend": ("WARN", "Error: 4 DEADLINE_EXCEEDED: Deadline exceeded on flagd EventStream, reconnecting"),
    "payment": ("warn", "flagd EventStream error: 4 DEADLINE_EXCEEDED: Deadline exceeded, reconnecting"),
    "product-catalog": (
        "ERROR",
        "flagd: error in event stream: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
    ),
    "recommendation": (
        "WARNING",
        "flagd EventStream error: <_MultiThreadedRendezvous of RPC that terminated with: "
        "status = StatusCode.DEADLINE_EXCEEDED>, reconnecting",
    ),
    "fraud-detection": (
        "WARN",
        "flagd: EventStream error io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED, reconnecting",
    ),
}
_LEVELS = {"warning": "WARN", "warn": "WARN", "error": "ERROR"}


@dataclass(frozen=True)
class Reconnect:
    service: str
    n: int  # the subscriber's n-th stream
    end_s: float  # when the deadline cut it (the log line's time)
    trace_id: str

    @property
    def start_s(self) -> float:
        return self.end_s - STREAM_S


def _h(seed: int, *parts: object) -> bytes:
    data = ":".join(str(p) for p in (seed, *parts)).encode()
    return hashlib.blake2b(data, digest_size=16, person=b"orca-noise").digest()


def _unit(seed: int, *parts: object) -> float:
    return int.from_bytes(_h(seed, *parts)[:6], "big") / float(1 << 48)


def _trace_id(seed: int, service: str, n: int) -> str:
    return _h(seed, "trace", service, n).hex()


def _end(seed: int, service: str, n: int) -> float:
    phase = _unit(seed, "phase", service) * STREAM_S
    return round(phase + n * STREAM_S + _unit(seed, "jitter", service, n) * JITTER_S, 3)


def reconnects(seed: int, start_s: float, end_s: float, services: list[str]) -> list[Reconnect]:
    """Stream cuts with end time in [start_s, end_s], by time."""
    out: list[Reconnect] = []
    for svc in SUBSCRIBERS:
        if svc not in services:
            continue
        n0 = max(0, int((start_s - STREAM_S - JITTER_S) // STREAM_S))
        n = n0
        while True:
            t = _end(seed, svc, n)
            if t > end_s:
                break
            if t >= start_s and t - STREAM_S >= 0:
                out.append(Reconnect(svc, n, t, _trace_id(seed, svc, n)))
            n += 1
    out.sort(key=lambda r: (r.end_s, r.service))
    return out


def find_reconnect(seed: int, trace_id: str, services: list[str], horizon_s: float) -> Reconnect | None:
    """The reconnect a trace id names (ids are hashes: search the streams up to the run's end)."""
    tid = trace_id.strip().lower()
    for r in reconnects(seed, 0.0, horizon_s, services):
        if r.trace_id == tid:
            return r
    return None


def log_record(r: Reconnect, pod: str) -> dict:
    """The subscriber's log line about the cut (the fields `search_logs` returns)."""
    sev, text = SUBSCRIBERS[r.service]
    return {
        "timestamp": r.end_s,
        "service": r.service,
        "pod": pod,
        "level": _LEVELS.get(sev.lower(), sev.upper()),
        "message": text,
        "trace_id": r.trace_id,
        "attributes": {
            "severity_text": sev,
            "rpc.service": "flagd.evaluation.v1.Service",
            "rpc.method": "EventStream",
        },
    }


def trace(r: Reconnect) -> dict:
    """flagd's side of the cut stream (the fields `traces` returns): one SERVER span ending in
    DEADLINE_EXCEEDED. Only flagd's span (no flag's culprit) so that citing a stream cut can never
    pass for a flag's own failing span."""
    dur = STREAM_S * 1000.0
    span = {
        "span_id": _h(0, "span", r.trace_id)[:8].hex(),
        "parent_id": None,
        "service": "flagd",
        "name": EVENT_STREAM,
        "kind": "SERVER",
        "start_ms": 0.0,
        "duration_ms": dur,
        "status": "ERROR",
        "attributes": {
            "rpc.system": "grpc",
            "rpc.service": "flagd.evaluation.v1.Service",
            "rpc.method": "EventStream",
            "rpc.grpc.status_code": 4,
            "net.peer.name": r.service,
        },
    }
    return {
        "trace_id": r.trace_id,
        "start_s": r.start_s,
        "root_service": "flagd",
        "root_name": EVENT_STREAM,
        "duration_ms": dur,
        "status": "ERROR",
        "spans": (span,),
    }
