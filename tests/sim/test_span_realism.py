"""Traces and span metrics read as an SRE reads them (issue 18): one span vocabulary per app from the
real instrumentation, CLIENT and SERVER spans (datastores and brokers only as their callers' client
spans), trace trees that follow the request's path with children inside their parents, span
metrics derived from the same spans (integer counts, quantiles that agree with the traces), and
log lines whose trace id names a trace that holds the logging service's span at the line's time.

Everything is read through tool-level outputs: `SimBackend` (get_traces, search_logs) and the
metric store that query_metrics reads, on the leaderboard seed of each app."""

from __future__ import annotations

import re

import numpy as np
import pytest

from sre_marathon_gym.backends.sim import SimBackend
from sre_marathon_gym.metrics.store import bucket_quantile
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.sim.op_names import server_span_name
from sre_marathon_gym.sim.simulator import Simulator

APPS = ["astronomy_shop", "online_boutique", "train_ticket"]
CALLS = "traces_span_metrics_calls_total"
BUCKET = "traces_span_metrics_duration_milliseconds_bucket"
VOCABULARY = {  # span names of the real instrumentation (rpc methods as each language's
    # instrumentation spells them on the server, HTTP routes, client commands)
    "astronomy_shop": r"((grpc\.|POST /|/)?oteldemo\.\w+Service/\w+|Currency/\w+"
    r"|flagd\.evaluation\.v1\.Service/\w+|(GET|POST) /\S*|/[\w-]+"
    r"|HGET|HMSET|SELECT|INSERT|orders (publish|receive))",
    "online_boutique": r"((grpc\.|POST /|/)?hipstershop\.\w+Service/\w+|(GET|POST) /\S*|HGET|HMSET)",
    "train_ticket": r"((GET|POST|PUT|DELETE) /api/v1/\S+|SELECT|GET /nacos/\S+|email (publish|receive))",
}
NO_SPANS_OF_THEIR_OWN = {"valkey-cart", "postgresql", "kafka", "redis-cart", "tsdb-mysql", "rabbitmq"}


def _run(catalog, app: str, end: float, faults: bool = True) -> tuple[Simulator, SimBackend]:
    seed = catalog.leaderboard.seed_for(app)
    schedule = FaultSchedule.generate(catalog, app, seed) if faults else None
    sim = Simulator(catalog, app, seed, schedule=schedule)
    sim.advance_to(end)
    return sim, SimBackend(sim)


def _rows(sim: Simulator, **match) -> set[tuple[str, str, str]]:
    """(service_name, span_name, span_kind) of the span-metric series with calls."""
    st = sim.store
    ids = st.select(CALLS, match)
    t = st.last_time
    vals = st.at(ids, t)
    return {
        (st.labels(int(i))["service_name"], st.labels(int(i))["span_name"], st.labels(int(i))["span_kind"])
        for i, v in zip(ids, vals)
        if v > 0
    }


def _traces(backend: SimBackend, start: float, end: float, service: str | None = None, limit: int = 400):
    return backend.traces(None, service, start, end, None, None, limit)


@pytest.mark.parametrize("app", APPS)
def test_one_span_vocabulary_in_traces_and_metrics(catalog, app):
    sim, backend = _run(catalog, app, 900)
    rows = _rows(sim)
    named = re.compile(VOCABULARY[app] + r"$")
    traced = set()
    for service in sim.compiled.services:
        for tr in _traces(backend, 0, 900, service, 30):
            for sp in tr["spans"]:
                traced.add((sp["service"], sp["name"], f"SPAN_KIND_{sp['kind']}"))
    assert traced and traced <= rows, sorted(traced - rows)[:10]  # a name in a trace is a metric's name
    assert {n for _, n, _ in rows if not named.match(n)} == set()
    servers = {s for s, _, k in rows if k in ("SPAN_KIND_SERVER", "SPAN_KIND_CONSUMER")}
    instrumented = {s.name for s in sim.app.services if s.kind in ("entry", "service")}
    assert servers == instrumented  # a query by a real span name finds every service
    if app == "astronomy_shop":
        for name in ("oteldemo.CheckoutService/PlaceOrder", "GET /api/cart"):  # Go and the proxy
            assert {k for _, _, k in _rows(sim, span_name=name)} >= {"SPAN_KIND_SERVER", "SPAN_KIND_CLIENT"}
        # the names the demo's Tracetest assertions select: .NET, Python, Node and C++ servers
        assert ("cart", "POST /oteldemo.CartService/GetCart", "SPAN_KIND_SERVER") in rows
        assert ("checkout", "oteldemo.CartService/GetCart", "SPAN_KIND_CLIENT") in rows
        assert (
            "recommendation",
            "/oteldemo.RecommendationService/ListRecommendations",
            "SPAN_KIND_SERVER",
        ) in rows
        assert ("payment", "grpc.oteldemo.PaymentService/Charge", "SPAN_KIND_SERVER") in rows
        assert ("currency", "Currency/Convert", "SPAN_KIND_SERVER") in rows
        assert ("shipping", "/get-quote", "SPAN_KIND_SERVER") in rows
        fe = {n for s, n, k in rows if s == "frontend" and k == "SPAN_KIND_SERVER"}
        assert {"GET /api/cart", "POST /api/checkout", "GET /api/products/{productId}"} <= fe
        catalog_methods = {n for s, n, k in rows if s == "product-catalog" and k == "SPAN_KIND_SERVER"}
        assert catalog_methods >= {
            "oteldemo.ProductCatalogService/GetProduct",
            "oteldemo.ProductCatalogService/ListProducts",
        }
    if app == "online_boutique":
        assert ("cartservice", "POST /hipstershop.CartService/GetCart", "SPAN_KIND_SERVER") in rows
        assert ("checkoutservice", "hipstershop.CartService/GetCart", "SPAN_KIND_CLIENT") in rows
    if app == "train_ticket":
        assert ("ts-travel-service", "POST /api/v1/travelservice/trips/left", "SPAN_KIND_SERVER") in rows


@pytest.mark.parametrize("app", APPS)
def test_client_and_server_spans(catalog, app):
    sim, backend = _run(catalog, app, 900)
    kinds = set()
    for tr in _traces(backend, 0, 900, None, 200):
        spans = {sp["span_id"]: sp for sp in tr["spans"]}
        for sp in tr["spans"]:
            kinds.add(sp["kind"])
            assert sp["service"] not in NO_SPANS_OF_THEIR_OWN, sp
            if sp["kind"] == "SERVER" and sp["parent_id"] is not None:
                client = spans[sp["parent_id"]]  # an RPC: the caller's CLIENT span, same method
                language = sim.app.service(sp["service"]).language
                assert client["kind"] == "CLIENT", (client, sp)
                assert server_span_name(client["name"], language) == sp["name"], (client, sp)
                assert client["attributes"]["server.address"].startswith(sp["service"] + ":")
                assert "rpc.system" in client["attributes"] or "http.request.method" in client["attributes"]
    assert {"SERVER", "CLIENT"} <= kinds
    rows = _rows(sim)
    assert not {r for r in rows if r[0] in NO_SPANS_OF_THEIR_OWN}
    if app == "astronomy_shop":
        db = [
            sp
            for tr in _traces(backend, 0, 900, "cart", 50)
            for sp in tr["spans"]
            if sp["service"] == "cart" and sp["kind"] == "CLIENT"
        ]
        assert {sp["name"] for sp in db} >= {"HGET", "HMSET"}
        assert all(sp["attributes"]["db.system"] == "redis" for sp in db)
        assert ("checkout", "orders publish", "SPAN_KIND_PRODUCER") in rows
        assert ("accounting", "orders receive", "SPAN_KIND_CONSUMER") in rows
        assert ("product-catalog", "SELECT", "SPAN_KIND_CLIENT") in rows


def test_a_broker_scaled_to_zero_reports_no_spans_its_callers_fail(catalog):
    sim, backend = _run(catalog, "astronomy_shop", 600, faults=False)
    backend.scale("kafka", 0)
    sim.advance_to(1200)
    st = sim.store
    assert st.select(CALLS, {"service_name": "kafka"}).size == 0
    err = st.select(
        CALLS,
        {"service_name": "checkout", "span_kind": "SPAN_KIND_PRODUCER", "status_code": "STATUS_CODE_ERROR"},
    )
    assert st.increase(err, 1200, 300).sum() > 10  # the publishes fail
    late = _traces(backend, 900, 1200, "checkout", 50)
    pubs = [sp for tr in late for sp in tr["spans"] if sp["name"] == "orders publish"]
    assert pubs and all(sp["status"] == "ERROR" for sp in pubs)
    assert not _traces(backend, 900, 1200, "accounting", 20)  # nothing is consumed


@pytest.mark.parametrize("app", APPS)
def test_trace_trees_follow_the_request_path(catalog, app):
    sim, backend = _run(catalog, app, 1800)
    n = 0
    for status in (None, "error"):
        for tr in backend.traces(None, None, 0, 1800, None, status, 300):
            spans = {sp["span_id"]: sp for sp in tr["spans"]}
            for sp in tr["spans"]:
                if sp["parent_id"] is None:
                    continue
                pa = spans[sp["parent_id"]]
                n += 1
                assert sp["start_ms"] >= pa["start_ms"] - 1e-3, (pa, sp)
                assert sp["start_ms"] + sp["duration_ms"] <= pa["start_ms"] + pa["duration_ms"] + 2e-3, (
                    pa,
                    sp,
                )
    assert n > 500
    if app == "train_ticket":  # the gateway calls the travel service, which calls basic, which calls station
        _, healthy = _run(catalog, app, 600, faults=False)
        left = [
            tr
            for tr in _traces(healthy, 0, 600, "ts-station-service", 40)
            if tr["root_name"] == "POST /api/v1/travelservice/trips/left"
        ]
        assert left
        for tr in left:
            spans = {sp["span_id"]: sp for sp in tr["spans"]}
            chain = []
            sp = next(
                s for s in tr["spans"] if s["service"] == "ts-station-service" and s["kind"] == "SERVER"
            )
            while sp["parent_id"] is not None:
                sp = spans[sp["parent_id"]]
                if sp["kind"] == "SERVER" and (not chain or chain[-1] != sp["service"]):
                    chain.append(sp["service"])
            assert chain[:3] == ["ts-basic-service", "ts-travel-service", "ts-gateway-service"], chain
    if app == "astronomy_shop":
        _, healthy = _run(catalog, app, 600, faults=False)
        orders = [
            tr for tr in _traces(healthy, 0, 600, "checkout", 20) if tr["root_name"] == "POST /api/checkout"
        ]
        assert orders
        for tr in orders:
            place = next(sp for sp in tr["spans"] if sp["kind"] == "SERVER" and sp["service"] == "checkout")
            children = [sp["name"] for sp in tr["spans"] if sp["parent_id"] == place["span_id"]]
            for name in (
                "oteldemo.CartService/GetCart",
                "oteldemo.ProductCatalogService/GetProduct",
                "oteldemo.CurrencyService/Convert",
                "POST /get-quote",
                "oteldemo.PaymentService/Charge",
                "POST /send_order_confirmation",
                "oteldemo.CartService/EmptyCart",
                "orders publish",
            ):
                assert name in children, (name, children)
            front = next(sp for sp in tr["spans"] if sp["service"] == "frontend" and sp["kind"] == "SERVER")
            assert front["name"] == "POST /api/checkout"


@pytest.mark.parametrize("app", APPS)
def test_span_metrics_are_integers_and_agree_with_the_traces(catalog, app):
    t0, t1 = 300.0, 3600.0
    sim, backend = _run(catalog, app, t1, faults=False)  # a healthy window
    st = sim.store
    ids = st.select(BUCKET)
    _, vals = st.range(ids, 0, t1)
    assert np.array_equal(vals[~np.isnan(vals)], np.floor(vals[~np.isnan(vals)]))  # integer counts
    calls = st.range(st.select(CALLS), 0, t1)[1]
    assert np.all(np.diff(np.nan_to_num(calls), axis=1) >= 0)  # monotone counters
    off = []
    for service in sim.compiled.services:
        sel = st.select(BUCKET, {"service_name": service, "span_kind": "SPAN_KIND_SERVER"})
        if sel.size == 0:
            continue
        by_le: dict[str, list[int]] = {}
        for i in sel:
            by_le.setdefault(st.labels(int(i))["le"], []).append(int(i))
        les = sorted(by_le, key=lambda le: float("inf") if le == "+Inf" else float(le))
        inc = np.array([(st.at(by_le[le], t1) - st.at(by_le[le], t0)).sum() for le in les])
        bounds = np.array([float("inf") if le == "+Inf" else float(le) for le in les])
        durations = [
            sp["duration_ms"]
            for tr in _traces(backend, t0, t1, service, 10**5)
            for sp in tr["spans"]
            if sp["service"] == service and sp["kind"] == "SERVER"
        ]
        assert len(durations) > 200, service
        for q in (0.5, 0.95):
            hist = bucket_quantile(q, inc[None, :], bounds)[0]
            traced = float(np.quantile(durations, q))
            if abs(hist / traced - 1) > 0.10:
                off.append((service, q, round(hist, 1), round(traced, 1)))
    assert not off, off


@pytest.mark.parametrize("app", APPS)
def test_log_trace_ids_resolve_to_a_trace_holding_the_line(catalog, app):
    sim, backend = _run(catalog, app, 1800)
    rows = [r for r in backend.search_logs(None, 0, 1800, None, None, 10**6) if r["trace_id"]]
    assert len(rows) > 500
    errors = 0
    for r in rows[:: max(1, len(rows) // 1500)]:
        tr = backend.traces(r["trace_id"], None, 0, 0, None, None, 1)[0]
        holding = [
            sp
            for sp in tr["spans"]
            if sp["service"] == r["service"]
            and tr["start_s"] + sp["start_ms"] / 1000 - 1e-3
            <= r["timestamp"]
            <= tr["start_s"] + (sp["start_ms"] + sp["duration_ms"]) / 1000 + 1e-3
            and (r["level"] != "ERROR" or sp["status"] == "ERROR")
        ]
        assert holding, (
            r,
            tr["start_s"],
            [(s["service"], s["start_ms"], s["status"]) for s in tr["spans"]][:8],
        )
        errors += r["level"] == "ERROR"
    assert errors > 20
