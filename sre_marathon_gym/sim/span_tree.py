"""Trace shapes: per root (a request type, or one service's background work), the spans of one request.

Shared by the trace generator (`traces`) and the span metrics (`metric_exporter`), so both count
and time the same spans. A request follows its request type's path along the call graph: each
service on the path is called by the latest earlier service that has an edge to it (checkout's
cart, catalog, currency, shipping, payment and email calls are children of PlaceOrder), n calls
per request under a parent called m times per request are round(n / m) calls per parent call, and
each call is its own node, named by `op_names.method` (the k-th cart call of a checkout is
GetCart, the next EmptyCart).

Every call between two instrumented services is a CLIENT span on the caller with the callee's
SERVER span as its child; datastores and brokers emit no spans of their own and appear only as
the CLIENT (PRODUCER for a publish) spans of their callers. A consumer's background root is its
CONSUMER span (`orders receive`).

Durations (`means`): a SERVER span lasts its service's own time plus its children's CLIENT spans
in sequence, a CLIENT span lasts the callee's SERVER span plus the network hop. The trace
generator scales all means of one trace by one log-normal factor, so each span's duration is
log-normal with exactly the mean computed here, which is what the duration histograms use.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.detmath import rows_dot
from .op_names import (
    BROKER_SYSTEM,
    DB_SYSTEM,
    TOPIC,
    datastore_op,
    method,
    route_name,
    server_op,
    server_span_name,
)

INSTRUMENTED = ("entry", "service")


@dataclass(frozen=True)
class Node:
    svc: int
    parent: int  # node index, -1 at the root
    edge: int  # the edge the parent calls it over, -1 at the root
    name: str  # its SERVER (root: SERVER or CONSUMER) span name; "" for a datastore or broker
    client: str  # the caller's CLIENT / PRODUCER span name ("" at the root)
    client_kind: str  # CLIENT | PRODUCER
    client_attrs: tuple[tuple[str, object], ...]
    children: tuple[int, ...]


@dataclass(frozen=True)
class Shape:
    nodes: tuple[Node, ...]  # depth first (a parent before its children); empty: no spans at all
    root_kind: str  # SERVER | CONSUMER
    queue: int  # the broker a consumer root receives from, else -1
    own: np.ndarray  # [nodes, S]: service s's own time counted in node n's duration
    hops: np.ndarray  # [nodes, S]: hops to service s inside node n's duration
    start_own: np.ndarray  # [nodes, S]: the same for the start of node n's SERVER span (no failures)
    start_hops: np.ndarray

    def means(self, own_ms: np.ndarray, hop_ms: np.ndarray) -> np.ndarray:
        """Mean SERVER duration per node (a datastore node: its own time)."""
        return rows_dot(self.own, own_ms) + rows_dot(self.hops, hop_ms)  # the same bits on every CPU


def call_structure(app, compiled, kinds: list[str]) -> list[list[list[tuple[int, int, int]]]]:
    """Per root (request types, then one background root per service): children[s] = [(child, edge, n)]."""
    S = len(compiled.services)
    out = []
    for rt in app.request_types:
        children: list[list[tuple[int, int, int]]] = [[] for _ in range(S)]
        total = {rt.services[0]: 1.0}
        for pos, svc in enumerate(rt.services[1:], start=1):
            callers = [c for c in reversed(rt.services[:pos]) if (c, svc) in compiled.edge_index]
            if not callers:
                continue
            n = float(rt.calls_per_request.get(svc, 1.0))
            total[svc] = n
            # a service is called by the closest caller; a datastore by every caller with an edge
            for caller in callers if kinds[compiled.index[svc]] not in INSTRUMENTED else callers[:1]:
                mult = max(1, int(round(n / max(total.get(caller, 1.0), 1.0))))
                children[compiled.index[caller]].append(
                    (compiled.index[svc], compiled.edge_index[(caller, svc)], mult)
                )
        out.append(children)
    for s in range(S):  # background roots: a consumer / health-checked service and its datastores
        children = [[] for _ in range(S)]
        for e in np.nonzero(compiled.edge_src == s)[0]:
            d = int(compiled.edge_dst[e])
            if kinds[d] not in INSTRUMENTED:  # background work reaches no other service (as in `traffic`)
                children[s].append((d, int(e), 1))
        out.append(children)
    return out


def build_shapes(app, compiled) -> list[Shape]:
    svc = {s.name: s for s in app.services}
    names = compiled.services
    S = len(names)
    kinds = [svc[n].kind for n in names]
    langs = [svc[n].language for n in names]
    inbound = {e.target: e.protocol for e in app.edges}
    structure = call_structure(app, compiled, kinds)
    shapes = []
    for root, children in enumerate(structure):
        nodes: list[Node | None] = []
        if root < len(app.request_types):
            rt = app.request_types[root]
            rs, rt_name, route = compiled.entry, rt.name, route_name(rt.method, rt.endpoint)
            root_kind, queue, root_op = "SERVER", -1, route
        else:
            rs, rt_name, route = root - len(app.request_types), None, None
            queue = next(
                (
                    int(compiled.edge_dst[e])
                    for e in np.nonzero(compiled.edge_src == rs)[0]
                    if kinds[int(compiled.edge_dst[e])] == "queue"
                ),
                -1,
            )
            if compiled.background_rps[rs] <= 0:
                queue = -1  # a publisher on the request path, not a consumer
            root_kind = "CONSUMER" if queue >= 0 else "SERVER"
            root_op = (
                f"{TOPIC[BROKER_SYSTEM.get(langs[queue], 'kafka')]} receive"
                if queue >= 0
                else server_op(names[rs], langs[rs], proto=inbound.get(names[rs], "http"))
            )
            if kinds[rs] not in INSTRUMENTED:
                empty = np.zeros((0, S))
                shapes.append(Shape((), "SERVER", -1, empty, empty, empty, empty))
                continue

        def visit(s: int, parent: int, e: int, name: str, client: str, ckind: str, cattrs: tuple) -> int:
            idx = len(nodes)
            nodes.append(None)
            kids = []
            if kinds[s] in INSTRUMENTED:
                for d, e2, mult in children[s]:
                    if d == queue and parent < 0:
                        continue  # a consumer's receive is its root span
                    edge = app.edges[e2]
                    addr = f"{names[d]}:{svc[names[d]].port or 8080}"
                    for k in range(mult):
                        if kinds[d] in INSTRUMENTED:
                            dname = method(names[d], edge.protocol, rt_name, route, names[s], k)
                            if edge.protocol == "grpc":
                                attrs = (("rpc.system", "grpc"), ("server.address", addr))
                            else:
                                attrs = (
                                    ("http.request.method", dname.split(" ", 1)[0]),
                                    ("server.address", addr),
                                )
                            sname = server_span_name(dname, langs[d])
                            kids.append(visit(d, idx, e2, sname, dname, "CLIENT", attrs))
                        else:
                            op = datastore_op(langs[d], name, names[s])
                            if langs[d] in BROKER_SYSTEM:
                                system = BROKER_SYSTEM[langs[d]]
                                attrs = (
                                    ("messaging.system", system),
                                    ("messaging.destination.name", TOPIC[system]),
                                    ("messaging.operation", "publish"),
                                    ("server.address", addr),
                                )
                                kids.append(visit(d, idx, e2, "", op, "PRODUCER", attrs))
                            else:
                                system = DB_SYSTEM.get(langs[d], "http")
                                attrs = (
                                    ("db.system", system)
                                    if system != "http"
                                    else ("http.request.method", "GET"),
                                    ("db.operation.name", op.split(" ", 1)[0]),
                                    ("server.address", addr),
                                )
                                kids.append(visit(d, idx, e2, "", op, "CLIENT", attrs))
            nodes[idx] = Node(s, parent, e, name, client, ckind, cattrs, tuple(kids))
            return idx

        visit(rs, -1, -1, root_op, "", "CLIENT", ())
        done: tuple[Node, ...] = tuple(n for n in nodes if n is not None)
        own = np.zeros((len(done), S))
        hops = np.zeros((len(done), S))
        for i in range(len(done) - 1, -1, -1):
            node = done[i]
            own[i, node.svc] += 1.0
            for c in node.children:
                own[i] += own[c]
                hops[i] += hops[c]
                hops[i, done[c].svc] += 1.0
        start_own = np.zeros((len(done), S))
        start_hops = np.zeros((len(done), S))
        for i, node in enumerate(done):  # parents first: the children run in sequence after 30 % of own
            cur_own = start_own[i].copy()
            cur_own[node.svc] += 0.3
            cur_hops = start_hops[i].copy()
            for c in node.children:
                d = done[c].svc
                start_own[c] = cur_own
                start_hops[c] = cur_hops
                start_hops[c, d] += 0.5
                cur_own = cur_own + own[c]
                cur_hops = cur_hops + hops[c]
                cur_hops[d] += 1.0
        shapes.append(Shape(done, root_kind, queue, own, hops, start_own, start_hops))
    return shapes


def shared_shapes(app, compiled) -> list[Shape]:
    """`build_shapes` once per compiled app, read-only: the span metrics and the log recorder of
    every simulator of the app share them (`CompiledApp.derive`)."""

    def build() -> list[Shape]:
        shapes = build_shapes(app, compiled)
        for shape in shapes:
            for a in (shape.own, shape.hops, shape.start_own, shape.start_hops):
                a.flags.writeable = False
        return shapes

    return compiled.derive("span_shapes", build)


__all__ = ["INSTRUMENTED", "Node", "Shape", "build_shapes", "call_structure", "shared_shapes"]
