"""Log lines synthesised from the log context: one service's lines in one 15 s sample.

Apart from the recorder and the attribution because it is the rendering: how many request and
error lines a sample gets (sampled down from the recorded counts), which template renders each
(`log_text`), and the trace id each line carries (a trace forced to fail the way the line says,
`log_causes.forced_spec`). Deterministic in (seed, service, sample): the INFO request lines come
from their own stream, so skipping them leaves the other lines unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .causes import CODE_NUM, DNS, F_OK, F_OWN, FLAG, GRPC_CODE, TIMEOUT, UPSTREAM
from .log_causes import (
    client_error_text,
    error_causes,
    forced_spec,
    own_detail,
    own_error_text,
    root_cause,
    roots_through,
)
from .log_draw import Draw, Fill, fill_path
from .log_symptoms import (
    B_BROKER_GONE,
    B_CACHE_OFF,
    B_CONSUMER_LAG,
    B_CPU_HOG,
    B_MEM_HIGH,
    B_MISSING_ENV,
    B_NOT_READY,
    B_RETRY_STORM,
    B_SATURATED,
    B_SLOW_CODE,
    B_THROTTLED,
    E_RETRY,
)
from .log_text import (
    BROKER_GONE_TEXT,
    CACHE_MISS_TEXT,
    CLIENT_PREFIX,
    CRASH_TEXT,
    ENVOY_FLAGS,
    ENVOY_STATUS,
    ERROR_TYPE,
    FLAG_CALLER_PREFIX,
    FLAG_ERROR,
    FLAG_LINES,
    FLAGD_RELOAD,
    FLAGD_RELOAD_ATTRS,
    FLAGD_RELOAD_TEXT,
    LAG_TEXT,
    MEM_HIGH_TEXT,
    MISSING_ENV_TEXT,
    NATIVE_LEVEL,
    NGINX_ERR,
    OOM_TEXT,
    READINESS_TEXT,
    REQUEST_OK,
    RETRY_TEXT,
    SERVICE_INFO,
    SLOW_TEXT,
    STARTUP_TEXT,
    pick,
)
from .traces import decode_trace_id, encode_trace_id, generate, ok_span_time

if TYPE_CHECKING:
    from ..core.clock import Epoch
    from .log_state import LogState

OK_LINES_PER_REQUEST = 0.03  # sampled-down volume of request log lines
MAX_OK_LINES = 6  # per service per 15 s
ERROR_LINES_PER_ERROR = 0.5
MAX_ERROR_LINES = 12


@dataclass(frozen=True)
class LogRecord:
    timestamp: float  # simulated seconds
    service: str
    pod: str
    level: str  # INFO | WARN | ERROR
    message: str
    trace_id: str | None = None
    attributes: dict = field(default_factory=dict)


def lines(rec: LogState, p: int, s: int, min_rank: int = 0) -> list[LogRecord]:
    """Log lines of service s in sample p (deterministic in (seed, service, sample)).

    INFO request lines come from their own stream, so skipping them (min_rank > 0) leaves the
    other lines unchanged."""
    ctx = rec.context(p)
    evs = [ev for ev in rec.events.get(p, ()) if ev[0] == s]
    if not ctx.live_pods[s] and not evs:
        return []
    k = rec.sample_k(p)
    rng = np.random.default_rng([*rec.entropy, 1, s, k])
    draw = Draw(rng)
    fam = rec.family[s]
    name = rec.services[s]
    t1 = float(rec.times[p])
    t0 = t1 - rec.step_s
    bits = int(rec.svc_bits[p, s])
    out: list[LogRecord] = []
    ready = ctx.ready_pods[s] or ctx.live_pods[s]
    native = NATIVE_LEVEL.get(fam, {})

    def emit(
        level: str,
        msg: str,
        pod: str | None = None,
        trace: str | None = None,
        at: float | None = None,
        **attrs,
    ) -> None:
        a = {"severity.text": native.get(level, level)}
        a.update(attrs)
        u = draw()
        cands = ready
        if at is not None:  # a pod that ran at the span's time, else the line is outside any request
            fit = [q for q in ready if ctx.started_s.get(q, t0) <= at]
            if pod is not None and ctx.started_s.get(pod, t0) > at or ready and not fit:
                at = trace = None
            else:
                cands = fit or ready
        pod = pod or (draw.choice(cands) if cands else "-")
        since = min(max(t0, ctx.started_s.get(pod, t0)), t1)  # a container logs only once it runs
        timestamp = round(t0 + u * rec.step_s if since == t0 else since + u * (t1 - since), 3)
        if at is not None:
            timestamp = round(at, 3)  # inside the span of its trace
        out.append(
            LogRecord(
                timestamp=timestamp,
                service=name,
                pod=pod,
                level=level,
                message=stamp_body(msg, rec.epoch, timestamp),
                trace_id=trace,
                attributes=a,
            )
        )

    count = float(rec.svc_count[p, s])
    fail = float(rec.svc_fail[p, s])
    # --- successful requests
    if ctx.ready_pods[s] and min_rank == 0:
        ok_rng = np.random.default_rng([*rec.entropy, 5, s, k])
        main_draw, draw = draw, Draw(ok_rng, 64)
        n_ok = min(MAX_OK_LINES, int(ok_rng.poisson(max(count * (1 - fail), 0.0) * OK_LINES_PER_REQUEST)))
        roots, w = roots_through(rec, p, s)
        for j in range(n_ok):
            root = roots[draw.weighted(w)]
            tid = encode_trace_id(rec.key, k, root, 900 + j, F_OK)
            at, ms = span_time(rec, tid, s, False, draw())
            msg, attrs = _ok_line(rec, p, s, root, draw, ms)
            emit("INFO", msg, trace=tid if at is not None else None, at=at, **attrs)
        draw = main_draw
    # --- failed requests, by cause
    causes = error_causes(rec, p, s) if ctx.live_pods[s] else []
    total = sum(w for w, _, _ in causes)
    n_err = min(MAX_ERROR_LINES, int(rng.poisson(total * ERROR_LINES_PER_ERROR))) if total > 0 else 0
    for j in range(n_err):
        w, cause, e = causes[draw.weighted([x[0] for x in causes])]
        fk, fi, fc = forced_spec(rec, p, cause, s, e)
        roots, rw = roots_through(rec, p, s=s if e < 0 else None, e=e if e >= 0 else None)
        tid = encode_trace_id(rec.key, k, roots[draw.weighted(rw)], 600 + j, fk, fi, fc)
        at, _ = span_time(rec, tid, s, True, draw())
        level, msg, attrs = _error_line(rec, p, s, cause, e, draw)
        if level:
            emit(level, msg, trace=tid if at is not None else None, at=at, **attrs)
    # --- process-level symptoms
    for si, pod, reason in evs:
        if reason == FLAGD_RELOAD:
            emit("INFO", FLAGD_RELOAD_TEXT, pod=pod, **FLAGD_RELOAD_ATTRS)
            continue
        if reason == "OOMKilled":
            emit(
                "ERROR",
                pick(OOM_TEXT, fam),
                pod=pod,
                **{
                    "k8s.container.restart_count": 1,
                    "exit.code": 137,
                    "k8s.container.last_terminated_reason": "OOMKilled",
                },
            )
        elif bits & B_MISSING_ENV and s in ctx.missing_env:
            emit(
                "ERROR",
                pick(MISSING_ENV_TEXT, fam).format(key=ctx.missing_env[s]),
                pod=pod,
                **{"exit.code": 1},
            )
        else:
            emit("ERROR", pick(CRASH_TEXT, fam), pod=pod, **{"exit.code": 2 if fam == "go" else 1})
        if ctx.live_pods[s]:
            emit("INFO", STARTUP_TEXT.get(fam, "started").format_map(Fill(draw, port=rec.ports[s])), pod=pod)
    if bits & B_NOT_READY and s in ctx.readiness_path:
        for pod in ctx.notready_pods[s]:
            fill = Fill(draw, path=ctx.readiness_path[s], port=rec.ports[s], clf=BODY_CLF)
            msg = pick(READINESS_TEXT, fam).format_map(fill)
            emit(
                "WARN" if fam not in ("nginx",) else "INFO",
                msg,
                pod=pod,
                **{"http.response.status_code": 404, "user_agent.original": "kube-probe/1.29"},
            )
    if bits & B_MEM_HIGH and draw() < 0.6:
        emit("WARN", pick(MEM_HIGH_TEXT, fam).format_map(Fill(draw)))
    if bits & (B_SLOW_CODE | B_SATURATED | B_THROTTLED | B_CPU_HOG) and ctx.ready_pods[s]:
        lat = float(rec.own_lat[p, s])
        base = float(rec.compiled.service_time_ms[s])
        if lat > 3 * base and lat > 200:
            for _ in range(min(3, int(rng.poisson(1.5)))):
                ms = int(lat * (0.6 + draw()))
                emit(
                    "WARN",
                    pick(SLOW_TEXT, fam).format_map(
                        Fill(draw, op=rec.server_op[s], ms=str(ms), sec=f"{ms / 1000:.6f}")
                    ),
                    **{"duration_ms": ms},
                )
    if bits & B_RETRY_STORM:
        for e in rec.out_edges[s]:
            if rec.edge_bits[p, e] & E_RETRY and draw() < 0.7:
                emit(
                    "WARN",
                    RETRY_TEXT.format_map(
                        Fill(
                            draw,
                            dst=rec.services[int(rec.compiled.edge_dst[e])],
                            detail="transient error, backing off",
                        )
                    ),
                )
    if bits & B_CACHE_OFF:
        for e in rec.out_edges[s]:
            if draw() < 0.8:
                dst = rec.services[int(rec.compiled.edge_dst[e])]
                emit("INFO", CACHE_MISS_TEXT.format_map(Fill(draw, dst=dst)))
                break
    if bits & B_CONSUMER_LAG and not bits & B_BROKER_GONE:  # without a broker it cannot know its lag
        emit("WARN", pick(LAG_TEXT, fam).format_map(Fill(draw, svc=name)))
    if bits & B_BROKER_GONE and ctx.live_pods[s]:
        for e in rec.out_edges[s]:
            proto = rec.protocols[e]
            text = BROKER_GONE_TEXT.get((proto, fam), BROKER_GONE_TEXT.get((proto, "_")))
            if text is None:
                continue
            addr = rec.addresses[e]
            host, _, port = addr.rpartition(":")
            for _ in range(1 + int(rng.poisson(1.5))):
                fill = Fill(draw, svc=name, addr=addr, port=port)
                fill["addr_slash"] = f"{host}/{fill['ip']}:{port}"
                emit("WARN" if fam == "java" else "ERROR", text.format_map(fill))
    for flag in sorted(ctx.flags_on):
        for svc_name, level, msg in FLAG_LINES.get(flag, ()):
            if svc_name == name and draw() < 0.8:
                emit(level, msg.format_map(Fill(draw)))
    if (
        name == "product-reviews"
        and rec.flag_index
        and "llmRateLimitError" not in ctx.flags_on
        and ctx.ready_pods[s]
        and draw() < 0.5
    ):
        emit("INFO", "llmRateLimitError feature flag: False")
    out.sort(key=lambda r: r.timestamp)
    return out


def span_time(rec: LogState, tid: str, s: int, error: bool, u: float) -> tuple[float | None, int | None]:
    """(a time inside service s's span of trace `tid`, that span's duration in ms), or (None, None)
    when the trace has no such span (an error line wants an ERROR span of s; then it carries no id)."""
    fields = decode_trace_id(rec.key, tid)
    if fields is not None and fields[3] == F_OK:  # no failure: the span's time follows from the shape
        hit = ok_span_time(rec, fields, s, u)
        return (hit[0], max(1, int(hit[1]))) if hit is not None else (None, None)
    tr = generate(rec, tid, fields, lite=True) if fields is not None else None
    if tr is None:
        return None, None
    name = rec.services[s]
    best = None
    for sp in tr.spans:
        if sp.service != name or (error and sp.status != "ERROR"):
            continue
        if best is None or sp.kind in ("SERVER", "CONSUMER") and best.kind not in ("SERVER", "CONSUMER"):
            best = sp
    if best is None:
        return None, None
    return tr.start_s + (best.start_ms + u * best.duration_ms) / 1000.0, max(1, int(best.duration_ms))


def _ok_line(
    rec: LogState, p: int, s: int, root: int, draw: Draw, span_ms: int | None = None
) -> tuple[str, dict]:
    fam = rec.family[s]
    name = rec.services[s]
    ms = max(1, int(float(rec.svc_lat[p, s]) * (0.5 + draw())))
    if span_ms is not None:
        ms = span_ms  # the duration of the span the line's trace id names
    if s == rec.compiled.entry and root < rec.R:
        verb, path = rec.root_ops[root].split(" ", 1)
        path = fill_path(path, draw)
        attrs = {
            "http.request.method": verb,
            "url.path": path,
            "http.response.status_code": 200,
            "duration_ms": ms,
        }
        return _access_line(rec, fam, verb, path, 200, ms, draw, p), attrs
    specific = SERVICE_INFO.get((name, fam))
    if specific:
        tmpl = specific[int(draw() * len(specific)) % len(specific)]
        return tmpl.format_map(Fill(draw)), {"duration_ms": ms}
    tmpl = pick(REQUEST_OK, fam) or REQUEST_OK["_"]
    if not tmpl:
        return f"{rec.server_op[s]} ok", {"duration_ms": ms}
    return draw.choice(tmpl).format_map(Fill(draw, op=rec.server_op[s], ms=str(ms))), {"duration_ms": ms}


BODY_ISO, BODY_CLF, BODY_NGINX = "\x00iso\x00", "\x00clf\x00", "\x00nginx\x00"
"""Where a line's body prints its own time (envoy, nginx): filled in from the record's timestamp."""


def stamp_body(message: str, epoch: Epoch, t: float) -> str:
    """`message` with its body time set to `t`, so a proxy line's text and its record agree."""
    if "\x00" not in message:
        return message
    return (
        message.replace(BODY_ISO, epoch.iso(t))
        .replace(BODY_CLF, epoch.clf(t))
        .replace(BODY_NGINX, epoch.iso(t)[:19].replace("T", " ").replace("-", "/"))
    )


def _access_line(
    rec: LogState,
    fam: str,
    verb: str,
    path: str,
    status: int,
    ms: int,
    draw: Draw,
    p: int,
    flags: str = "-",
    upstream: str = "",
) -> str:
    """A proxy's access log line (envoy, nginx), else a plain one; its time is the record's."""
    if fam == "envoy":
        entry = rec.compiled.entry
        return (
            f'[{BODY_ISO}] "{verb} {path} HTTP/1.1" {status} {flags} via_upstream - "-" 0 '
            f'{int(200 + draw() * 4000)} {ms} {max(ms - 1, 0)} "-" "python-requests/2.31.0" '
            f'"{draw.hexs(8)}-{draw.hexs(4)}-{draw.hexs(4)}-{draw.hexs(4)}-{draw.hexs(12)}" '
            f'"{rec.services[entry]}:{rec.ports[entry]}" "{upstream or "10.244.1.7:8080"}"'
        )
    if fam == "nginx":
        return (
            f"10.244.{int(draw() * 4)}.{2 + int(draw() * 250)} - - [{BODY_CLF}] "
            f'"{verb} {path} HTTP/1.1" {status} {int(200 + draw() * 4000)} "-" '
            f'"Mozilla/5.0 (X11; Linux x86_64)" rt={ms / 1000:.3f}'
        )
    return f"{verb} {path} {status} {ms}ms"


def _error_line(
    rec: LogState, p: int, s: int, cause: int, e: int, draw: Draw
) -> tuple[str | None, str, dict]:
    """(level or None when the service does not log it, message, attributes) of one failed request."""
    fam = rec.family[s]
    c = rec.compiled
    if e < 0:  # the service's own failure
        text = own_error_text(rec, p, s, cause)
        attrs = {"error.type": ERROR_TYPE.get(cause, "exception")}
        if cause == FLAG:
            flag = own_detail(rec, p, s, FLAG)
            level = FLAG_ERROR.get(flag, ("", "", "ERROR"))[2]
            if level is None:
                return None, "", {}
            text = FLAG_ERROR[flag][1].format_map(Fill(draw))
            if fam == "node":
                attrs["err.message"] = text
            return level, text, attrs
        if s == c.entry and fam in ("envoy", "nginx"):
            roots, w = roots_through(rec, p, s)
            root = roots[draw.weighted(w)]
            verb, path = rec.root_ops[root].split(" ", 1) if root < rec.R else ("GET", "/")
            path = fill_path(path, draw)
            return (
                "WARN",
                _access_line(rec, fam, verb, path, 503, int(rec.own_lat[p, s]), draw, p, "UO"),
                {"http.response.status_code": 503},
            )
        return "ERROR", text, attrs
    d = int(c.edge_dst[e])
    dst = rec.services[d]
    if cause == UPSTREAM:
        fk, fi, fc, detail, code = root_cause(rec, p, d)
        if fk == F_OWN and fc == FLAG:
            flag = own_detail(rec, p, fi, FLAG)
            detail = FLAG_CALLER_PREFIX.get(flag, "") + detail if fam != "go" else detail
            if fam == "go" and flag in FLAG_CALLER_PREFIX:
                text = FLAG_CALLER_PREFIX[flag] + client_error_text(
                    rec, e, UPSTREAM, detail=detail, code=code, draw=draw, p=p
                )
                return "ERROR", text, {"peer.service": dst, "rpc.grpc.status_code": CODE_NUM.get(code, 2)}
    else:
        detail, code = "", GRPC_CODE.get(cause, "Unknown")
    if fam in ("envoy", "nginx"):
        msg = _proxy_error(rec, p, s, e, cause, draw)
        return "ERROR", msg, {"peer.service": dst, "upstream.cluster": dst}
    msg = client_error_text(rec, e, cause, detail=detail, code=code, draw=draw, p=p)
    prefix = CLIENT_PREFIX.get(fam, "")
    if prefix and rec.protocols[e] not in ("redis",):
        msg = prefix.format(op=_verb(rec, e)) + msg
    attrs = {
        "peer.service": dst,
        "server.address": rec.addresses[e]
        if cause != DNS
        else rec.context(p).route_host.get(e, rec.addresses[e]),
    }
    if rec.protocols[e] == "grpc":
        status = code if cause == UPSTREAM else GRPC_CODE.get(cause, "Unknown")
        attrs["rpc.grpc.status_code"] = CODE_NUM.get(status, 2)
    return "ERROR", msg, attrs


def _verb(rec: LogState, e: int) -> str:
    """What the caller was doing (the `{op}` of its error prefix)."""
    d = rec.services[int(rec.compiled.edge_dst[e])]
    proto = rec.protocols[e]
    if proto == "redis":
        return "access cart storage"
    if proto == "sql":
        return "query database"
    if proto in ("kafka", "amqp"):
        return "publish message"
    return f"call {d}"


def _proxy_error(rec: LogState, p: int, s: int, e: int, cause: int, draw: Draw) -> str:
    """A proxy's line for a failed upstream call: envoy's access line, nginx's error log."""
    fam = rec.family[s]
    roots, w = roots_through(rec, p, e=e)
    root = roots[draw.weighted(w)]
    verb, path = rec.root_ops[root].split(" ", 1) if root < rec.R else ("GET", "/")
    path = fill_path(path, draw)
    addr = rec.addresses[e] if cause != DNS else rec.context(p).route_host.get(e, rec.addresses[e])
    dst = rec.services[int(rec.compiled.edge_dst[e])]
    if fam == "envoy":
        flags = ENVOY_FLAGS.get(cause, "-")
        status = ENVOY_STATUS.get(cause, 503)
        ms = int(float(rec.edge_timeout[p, e])) if cause == TIMEOUT else int(1 + draw() * 5)
        return _access_line(rec, fam, verb, path, status, ms, draw, p, flags, upstream=addr) + f" {dst}"
    why = NGINX_ERR.get(cause, "upstream error").format(hostname=addr.rpartition(":")[0])
    return (
        f"{BODY_NGINX} [error] 29#29: *{int(draw() * 90000)} "
        f'{why}, client: 10.244.0.1, server: localhost, request: "{verb} {path} HTTP/1.1", '
        f'upstream: "http://{addr}{path}", host: "{rec.services[s]}:{rec.ports[s]}"'
    )


__all__ = [
    "ERROR_LINES_PER_ERROR",
    "MAX_ERROR_LINES",
    "MAX_OK_LINES",
    "OK_LINES_PER_REQUEST",
    "LogRecord",
    "lines",
]
