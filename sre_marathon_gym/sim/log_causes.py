"""Cause attribution over the log context: why calls failed in a sample, and the text that shows it.

Apart from the recorder (which only records) and from the line synthesis because traces need the
same answers: the failures of a service in a sample split by cause (its own, or per outgoing call:
route, reset, timeout, refused, upstream), the origin of an upstream failure followed down the call
graph (`root_cause`), the trace a log line must point at to show its failure (`forced_spec`), and
the error texts a service or a caller prints for a cause (`own_error_text`, `client_error_text`).
Functions of the recorded state (`log_state.LogState`); `LogContextRecorder` exposes them as methods too.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from .causes import (
    BAD_VALUE,
    BLOCKED,
    CODE_NUM,
    DEP_UNAVAIL,
    DNS,
    F_EDGE,
    F_OWN,
    FLAG,
    GRPC_CODE,
    HTTP_STATUS,
    OWN_APP,
    REFUSED,
    RESET,
    SATURATED,
    TIMEOUT,
    UPSTREAM,
)
from .log_draw import Draw, Fill
from .log_symptoms import MIN_LOGGED_SHARE
from .log_text import (
    BAD_VALUE_TEXT,
    CLIENT_ERR,
    FLAG_ERROR,
    GO_HTTP_ERR,
    OWN_APP_TEXT,
    PRODUCT_IDS,
    PROTO_ERR,
    SATURATED_TEXT,
    UNAVAIL_TEXT,
    pick,
)

if TYPE_CHECKING:
    from .log_state import LogState


# ---------------------------------------------------------------- a service's own failures
def pick_own_cause(rec: LogState, p: int, s: int, u: float) -> int:
    """The own failure cause of service s in sample p for the uniform u (weighted by its sources)."""
    srcs = rec.context(p).own_sources[s]
    if not srcs:
        return OWN_APP
    total = sum(w for _, w, _ in srcs)
    x = u * total
    for cause, w, _ in srcs:
        x -= w
        if x < 0:
            return cause
    return srcs[-1][0]


def own_detail(rec: LogState, p: int, s: int, cause: int) -> str:
    """The detail of an own failure source (the flag's name, the bad value), "" when there is none."""
    for c_, _, detail in rec.context(p).own_sources[s]:
        if c_ == cause:
            return detail
    return ""


def own_error_text(rec: LogState, p: int, s: int, cause: int | None, draw: Draw | None = None) -> str:
    """What service s prints when it fails with its own `cause` in sample p."""
    fam = rec.family[s]
    if cause == FLAG:
        flag = own_detail(rec, p, s, FLAG)
        text = FLAG_ERROR.get(flag, ("Unknown", "", None))[1] or pick(OWN_APP_TEXT, fam) or "internal error"
        return text.replace("{pid}", PRODUCT_IDS[0]).replace("{{", "{").replace("}}", "}")
    if cause == BAD_VALUE:
        return pick(BAD_VALUE_TEXT, fam).format(value=own_detail(rec, p, s, BAD_VALUE) or "-")
    if cause == DEP_UNAVAIL:
        return pick(UNAVAIL_TEXT, fam)
    if cause == SATURATED:
        return pick(SATURATED_TEXT, fam).replace("{n}", str(int(rec.svc_count[p, s] / rec.step_s) + 1))
    return pick(OWN_APP_TEXT, fam) or "internal error"


def own_code(rec: LogState, p: int, s: int, cause: int) -> str:
    """The gRPC code callers see when service s fails with its own `cause`."""
    if cause == FLAG:
        return FLAG_ERROR.get(own_detail(rec, p, s, FLAG), ("Unknown",))[0]
    return GRPC_CODE.get(cause, "Unknown")


# ---------------------------------------------------------------- failed calls
def route_cause(rec: LogState, p: int, e: int) -> int:
    """Why the route of edge e fails in sample p (an address that does not resolve, else blocked)."""
    k = int(rec.context(p).route_kind[e])
    return k if k else BLOCKED


def client_error_text(
    rec: LogState,
    e: int,
    cause: int,
    detail: str = "",
    code: str = "Unknown",
    draw: Draw | None = None,
    p: int | None = None,
) -> str:
    """What the caller of edge e prints when a call fails with `cause` (names the callee)."""
    c = rec.compiled
    s, d = int(c.edge_src[e]), int(c.edge_dst[e])
    fam, proto = rec.family[s], rec.protocols[e]
    table = PROTO_ERR.get(proto) if proto in PROTO_ERR else None
    if table is None and proto == "http" and fam == "go":
        table = GO_HTTP_ERR
    if table is None:
        table = CLIENT_ERR.get(fam, CLIENT_ERR["go"])
    fmt = table.get(cause, CLIENT_ERR["go"][cause if cause in CLIENT_ERR["go"] else UPSTREAM])
    host = rec.addresses[e]
    if cause == DNS and p is not None:
        host = rec.context(p).route_host.get(e, host)
    elif cause == DNS:
        host = last_route_host(rec, e) or host
    tms = float(rec.edge_timeout[max(rec.n - 1, 0), e]) if p is None else float(rec.edge_timeout[p, e])
    vals = dict(
        dst=rec.services[d],
        addr=rec.addresses[e],
        host=host,
        hostname=host.rpartition(":")[0] or host,
        port=rec.addresses[e].rpartition(":")[2],
        tms=f"{tms:.0f}",
        ts=f"{tms / 1000:.3f}",
        detail=detail,
        code=code,
        CODE=re.sub(r"(?<!^)(?=[A-Z])", "_", code).upper(),
        codenum=CODE_NUM.get(code, 2),
        status=HTTP_STATUS.get(cause, 500) if cause != UPSTREAM else 500,
        path=rec.edge_path[e],
        verb="POST",
        op=rec.client_op[e],
        pod="-",
    )
    text = fmt.format_map(Fill(draw or Draw(np.random.default_rng([*rec.entropy, 9, e, cause])), **vals))
    return text


def last_route_host(rec: LogState, e: int) -> str | None:
    """The address edge e dialled last time it did not resolve (for texts not tied to a sample)."""
    for ctx in reversed(rec.contexts):
        if e in ctx.route_host:
            return ctx.route_host[e]
    return None


def upstream_text(rec: LogState, e: int, callee_text: str) -> str:
    return client_error_text(rec, e, UPSTREAM, detail=callee_text, code="Unknown")


def edge_components(rec: LogState, p: int, e: int) -> list[tuple[int, float]]:
    """Failed calls per 15 s over edge e split by cause (the traffic model's factors)."""
    d = int(rec.compiled.edge_dst[e])
    fail = float(rec.edge_fail[p, e])
    if fail < MIN_LOGGED_SHARE:
        return []
    n = float(rec.edge_rate[p, e]) * rec.step_s * fail
    unreach = float(rec.unreachable[p, d])
    parts = [
        (route_cause(rec, p, e), float(rec.edge_route[p, e])),
        (RESET, float(rec.inbound_loss[p, d]) * 0.3),
        (TIMEOUT, float(rec.edge_tshare[p, e])),
        (REFUSED, unreach),
        (UPSTREAM, max(0.0, float(rec.svc_fail[p, d]) - unreach)),
    ]
    total = sum(w for _, w in parts)
    if total <= 0:
        return []
    return [(c_, n * w / total) for c_, w in parts if w > 0]


# ---------------------------------------------------------------- attribution
def root_cause(rec: LogState, p: int, d: int, depth: int = 0) -> tuple[int, int, int, str, str]:
    """Why calls to service d fail in sample p, followed to the origin (at most 4 calls deep from
    `depth`): (forced kind, index, cause, text, code). Cached per (sample, service, depth) on the
    recorder, so an answer never depends on which queries came before it: on a shared world
    (`envs.shared_world`) other agents' queries fill the same cache (`record` drops a sample's
    entries when it rewrites the sample)."""
    key = (p, d, depth)
    hit = rec._cause_cache.get(key)
    if hit is None:
        if len(rec._cause_cache) > 100_000:
            rec._cause_cache.clear()
        hit = rec._cause_cache[key] = _root_cause(rec, p, d, depth)
    return hit


def _root_cause(rec: LogState, p: int, d: int, depth: int) -> tuple[int, int, int, str, str]:
    srcs = rec.context(p).own_sources[d]
    own = float(rec.own_err[p, d]) + float(rec.saturated[p, d])
    best_e, best_w, best_c = -1, 0.0, UPSTREAM
    if depth < 4:
        for e in rec.out_edges[d]:
            for cause, w in edge_components(rec, p, e):
                if w > best_w:
                    best_e, best_w, best_c = e, w, cause
    if own >= best_w * 0.5 or best_e < 0:
        if float(rec.saturated[p, d]) > float(rec.own_err[p, d]):
            cause = SATURATED
        else:
            cause = max(srcs, key=lambda x: x[1])[0] if srcs else OWN_APP
        return F_OWN, d, cause, own_error_text(rec, p, d, cause), own_code(rec, p, d, cause)
    if best_c == UPSTREAM:
        dd = int(rec.compiled.edge_dst[best_e])
        fk, fi, fc, text, code = root_cause(rec, p, dd, depth + 1)
        return fk, fi, fc, client_error_text(rec, best_e, UPSTREAM, detail=text, code=code, p=p), "Unknown"
    if best_c == REFUSED:
        return F_EDGE, best_e, REFUSED, client_error_text(rec, best_e, REFUSED, p=p), "Unavailable"
    text = client_error_text(rec, best_e, best_c, p=p)
    return F_EDGE, best_e, best_c, text, GRPC_CODE.get(best_c, "Unknown")


def error_causes(rec: LogState, p: int, s: int) -> list[tuple[float, int, int]]:
    """(failed requests per 15 s, cause, edge or -1) for service s in sample p."""
    out: list[tuple[float, int, int]] = []
    count = float(rec.svc_count[p, s])
    if rec.context(p).live_pods[s] or rec.context(p).ready_pods[s]:
        own = float(rec.own_err[p, s])
        if own > MIN_LOGGED_SHARE:
            srcs = rec.context(p).own_sources[s] or ((OWN_APP, 1.0, ""),)
            total = sum(w for _, w, _ in srcs)
            out += [(count * own * w / total, cause, -1) for cause, w, _ in srcs]
        sat = float(rec.saturated[p, s])
        if sat > MIN_LOGGED_SHARE:
            out.append((count * sat, SATURATED, -1))
    for e in rec.out_edges[s]:
        out += [(w, cause, e) for cause, w in edge_components(rec, p, e)]
    return out


def forced_spec(rec: LogState, p: int, cause: int, s: int, e: int) -> tuple[int, int, int]:
    """The (kind, index, cause) a trace must be conditioned on to show this failure."""
    if e < 0:
        return F_OWN, s, cause
    if cause == UPSTREAM:
        fk, fi, fc, _, _ = root_cause(rec, p, int(rec.compiled.edge_dst[e]))
        return fk, fi, fc
    return F_EDGE, e, cause


# ---------------------------------------------------------------- which requests (trace roots)
def roots_through(
    rec: LogState, p: int, s: int | None = None, e: int | None = None
) -> tuple[list[int], list[float]]:
    """Roots (request types, else the service's background root) whose requests reach s / edge e."""
    c = rec.compiled
    rate = np.concatenate([rec.rt_rate[p].astype(np.float64), c.background_rps])  # per root
    if e is not None:
        w = rate * rec.shape_edges[:, e]
    elif s is not None:
        w = rate * (rec.shape_visits[:, s] > 0)
    else:
        w = rate.copy()
        w[rec.R :] = 0.0  # a trace of any request: the request types'
    idx = [int(i) for i in np.nonzero(w > 0)[0]]
    if idx:
        return idx, [float(w[i]) for i in idx]
    # no traffic right now (or none over this edge): the roots that would reach it, else the caller
    possible = np.concatenate([np.ones(rec.R), (c.background_rps > 0).astype(np.float64)])
    root_s = s if s is not None else int(c.edge_src[e]) if e is not None else c.entry
    along = possible * (rec.shape_edges[:, e] if e is not None else rec.shape_visits[:, root_s])
    if not along.any():
        along = possible * rec.shape_visits[:, root_s]
    idx = [int(i) for i in np.nonzero(along > 0)[0]]
    if idx:
        return idx, [1.0] * len(idx)
    return [rec.R + root_s], [1.0]


def draw_roots(rec: LogState, p: int, s: int | None, n: int) -> list[int]:
    """n roots of unconditioned traces through s (None: any) in sample p, drawn by request rate."""
    roots, w = roots_through(rec, p, s)
    draw = Draw(np.random.default_rng([*rec.entropy, 3, rec.sample_k(p), rec.S if s is None else s]), n + 4)
    return [roots[draw.weighted(w)] for _ in range(n)]


def error_trace_specs(rec: LogState, p: int, s: int, n: int) -> list[tuple[int, int, int, int]]:
    """Up to n (forced kind, index, cause, root) of error traces through s, drawn by cause share."""
    causes = error_causes(rec, p, s)
    total = sum(w for w, _, _ in causes)
    if total <= 0.0 or (total < 0.5 and not getattr(rec, "rare_error_traces", False)):
        return []
    draw = Draw(np.random.default_rng([*rec.entropy, 4, rec.sample_k(p), s]), 4 * n + 4)
    if total < 0.5 and draw() >= total:  # light load (ORCA): a rare failure lands in this sample or not
        return []
    out = []
    for _ in range(min(n, int(np.ceil(total)))):
        w, cause, e = causes[draw.weighted([x[0] for x in causes])]
        fk, fi, fc = forced_spec(rec, p, cause, s, e)
        roots, rw = roots_through(rec, p, s=s if e < 0 else None, e=e if e >= 0 else None)
        out.append((fk, fi, fc, roots[draw.weighted(rw)]))
    return out


__all__ = [
    "client_error_text",
    "draw_roots",
    "edge_components",
    "error_causes",
    "error_trace_specs",
    "forced_spec",
    "last_route_host",
    "own_code",
    "own_detail",
    "own_error_text",
    "pick_own_cause",
    "root_cause",
    "roots_through",
    "route_cause",
    "upstream_text",
]
