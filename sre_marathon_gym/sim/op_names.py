"""Operation names: the one span vocabulary of each app, used by traces, log lines and span metrics.

Names follow the real instrumentation: the OpenTelemetry demo's and Online Boutique's gRPC methods
(`oteldemo.CartService/GetCart`, `hipstershop.CartService/GetCart`, the rpc semantic-convention
span name `package.Service/Method`), the HTTP routes of the HTTP services (`POST /get-quote`,
Train Ticket's Spring routes `POST /api/v1/...`), the route of the request at the entry point and
at the web frontend (`GET /api/cart`), and the command of a datastore client (`HGET`, `SELECT`,
`orders publish`). Which method a service serves depends on the request type and on the call:
`method` reads the per-request-type call sequences below (from the apps' request-type `calls`).
"""

from __future__ import annotations

import re

GRPC_METHODS = {  # service -> the rpc it serves by default (proto packages of both demos)
    "product-catalog": "oteldemo.ProductCatalogService/GetProduct",
    "cart": "oteldemo.CartService/GetCart",
    "checkout": "oteldemo.CheckoutService/PlaceOrder",
    "currency": "oteldemo.CurrencyService/Convert",
    "payment": "oteldemo.PaymentService/Charge",
    "recommendation": "oteldemo.RecommendationService/ListRecommendations",
    "ad": "oteldemo.AdService/GetAds",
    "product-reviews": "oteldemo.ProductReviewService/GetProductReviews",
    "productcatalogservice": "hipstershop.ProductCatalogService/GetProduct",
    "cartservice": "hipstershop.CartService/GetCart",
    "checkoutservice": "hipstershop.CheckoutService/PlaceOrder",
    "currencyservice": "hipstershop.CurrencyService/Convert",
    "paymentservice": "hipstershop.PaymentService/Charge",
    "recommendationservice": "hipstershop.RecommendationService/ListRecommendations",
    "adservice": "hipstershop.AdService/GetAds",
    "shippingservice": "hipstershop.ShippingService/GetQuote",
    "emailservice": "hipstershop.EmailService/SendOrderConfirmation",
    "flagd": "flagd.evaluation.v1.Service/ResolveBoolean",
}
HTTP_ROUTES = {  # HTTP services of the demo -> their default route
    "shipping": "POST /get-quote",
    "quote": "POST /getquote",
    "email": "POST /send_order_confirmation",
    "image-provider": "GET /images/",
    "llm": "POST /v1/chat/completions",
}
ROUTE_SERVICES = ("frontend", "ts-gateway-service")  # serve the request's own route, like the entry
_OC, _HS = "oteldemo.", "hipstershop."
CALLS = {  # (service, request type) -> the methods of its successive calls in one request
    ("cart", "add_to_cart"): (_OC + "CartService/AddItem", _OC + "CartService/GetCart"),
    ("cart", "checkout"): (_OC + "CartService/GetCart", _OC + "CartService/EmptyCart"),
    ("cart", "checkout_multi"): (_OC + "CartService/GetCart", _OC + "CartService/EmptyCart"),
    ("shipping", "checkout"): ("POST /get-quote", "POST /ship-order"),
    ("shipping", "checkout_multi"): ("POST /get-quote", "POST /ship-order"),
    ("product-reviews", "ask_product_ai_assistant"): (_OC + "ProductReviewService/AskProductAIAssistant",),
    ("cartservice", "addToCart"): (_HS + "CartService/AddItem",),
    ("cartservice", "checkout"): (_HS + "CartService/GetCart", _HS + "CartService/EmptyCart"),
    ("shippingservice", "checkout"): (_HS + "ShippingService/GetQuote", _HS + "ShippingService/ShipOrder"),
    ("currencyservice", "index"): (
        _HS + "CurrencyService/GetSupportedCurrencies",
        _HS + "CurrencyService/Convert",
    ),
    ("currencyservice", "browseProduct"): (
        _HS + "CurrencyService/GetSupportedCurrencies",
        _HS + "CurrencyService/Convert",
    ),
    ("currencyservice", "viewCart"): (
        _HS + "CurrencyService/GetSupportedCurrencies",
        _HS + "CurrencyService/Convert",
    ),
    ("productcatalogservice", "index"): (_HS + "ProductCatalogService/ListProducts",),
}
BY_CALLER = {  # (caller, callee) -> method, whatever the request type
    ("recommendation", "product-catalog"): _OC + "ProductCatalogService/ListProducts",
    ("recommendationservice", "productcatalogservice"): _HS + "ProductCatalogService/ListProducts",
}
WRITES = ("AddItem", "EmptyCart", "PlaceOrder")  # a cache client writes (HMSET) under these methods
DB_SYSTEM = {"Valkey": "redis", "Redis": "redis", "PostgreSQL": "postgresql", "MySQL": "mysql"}
BROKER_SYSTEM = {"Kafka": "kafka", "RabbitMQ": "rabbitmq"}
TOPIC = {"kafka": "orders", "rabbitmq": "email"}


def camel(name: str) -> str:
    return "".join(p.capitalize() for p in re.split(r"[-_]", name) if p and p not in ("service",))


def compact(name: str) -> str:
    """`ts-travel-service` -> `travelservice` (Train Ticket's route prefix)."""
    return name.replace("ts-", "", 1).replace("-", "")


def server_op(name: str, language: str = "", proto: str = "grpc") -> str:
    """The default name of a service's SERVER spans (its gRPC method or HTTP route), spelled the way
    its language's instrumentation spells it when `language` is given (`server_span_name`)."""
    if name in GRPC_METHODS:
        op = GRPC_METHODS[name]
    elif name in HTTP_ROUTES:
        op = HTTP_ROUTES[name]
    elif proto == "grpc":
        op = f"oteldemo.{camel(name)}Service/Handle"
    else:
        op = f"POST {edge_path(name)}"
    return server_span_name(op, language) if language else op


def server_span_name(op: str, language: str) -> str:
    """How a service's SERVER span names the rpc or route `op` (the caller's CLIENT span keeps `op`).

    The OpenTelemetry instrumentations differ (the demo's Tracetest assertions and sources): Go and
    Java name a gRPC server span `pkg.Service/Method`; Python's grpc instrumentation prefixes a `/`;
    Node's grpc-js `grpc.`; ASP.NET Core names it after the HTTP route `POST /pkg.Service/Method`;
    the demo's C++ currency service names its manual spans `Currency/Convert`; Rust's actix spans
    carry the route without the verb (`/get-quote`).
    """
    lang = language.lower()
    if " " not in op and "/" in op and not op.startswith("/"):  # an rpc name
        if lang == "python":
            return "/" + op
        if lang in ("javascript", "typescript"):
            return "grpc." + op
        if lang == "c#":
            return "POST /" + op
        if lang == "c++":
            service, rpc = op.rsplit("/", 1)
            return f"{service.rsplit('.', 1)[-1].removesuffix('Service')}/{rpc}"
        return op
    if lang == "rust" and " " in op:
        return op.split(" ", 1)[1]
    return op


def datastore_op(language: str, caller_method: str, caller: str) -> str:
    """The CLIENT (or PRODUCER) span name of a call to a datastore or broker."""
    if language in BROKER_SYSTEM:
        return f"{TOPIC[BROKER_SYSTEM[language]]} publish"
    if DB_SYSTEM.get(language) == "redis":
        return "HMSET" if caller_method.rsplit("/", 1)[-1] in WRITES else "HGET"
    if language in DB_SYSTEM:
        return "INSERT" if caller == "accounting" else "SELECT"
    return "GET /nacos/v1/ns/instance/list"


def method(
    service: str, proto: str, rt_name: str | None, route: str | None, caller: str | None, k: int
) -> str:
    """The SERVER span name of the k-th call to `service` (served over `proto`) in one request of
    type `rt_name` (`route`: that request type's `VERB /path`, None for background work)."""
    if caller is not None and (caller, service) in BY_CALLER:
        return BY_CALLER[(caller, service)]
    seq = CALLS.get((service, rt_name or ""))
    if seq:
        return seq[min(k, len(seq) - 1)]
    if route is not None and service in ROUTE_SERVICES:
        return route
    if (
        route is not None
        and service.startswith("ts-")
        and route.split(" ", 1)[-1].startswith(f"/api/v1/{compact(service)}/")
    ):
        return route  # the Train Ticket service whose controller serves the request
    return server_op(service, proto=proto)


def client_op(target: str, proto: str) -> str:
    """The default CLIENT span name of a call to `target` (the callee's method)."""
    if proto == "redis":
        return "HGET"
    if proto == "sql":
        return "SELECT"
    if proto in ("kafka", "amqp"):
        return f"{TOPIC['kafka' if proto == 'kafka' else 'rabbitmq']} publish"
    return server_op(target, proto=proto)


def edge_path(target: str) -> str:
    """The HTTP route a call to `target` is made on."""
    route = HTTP_ROUTES.get(target)
    if route is not None:
        return route.split(" ", 1)[1]
    return f"/api/v1/{compact(target)}"


def entry_route(method: str, endpoint: str) -> tuple[str, str]:
    """`GET+POST /api/products/{id} then POST /api/cart` -> ("POST", "/api/cart"): the final call."""
    toks = f"{method} {endpoint}".replace("+", " ").split()
    verb, path = "GET", "/"
    for i, tok in enumerate(toks):
        if tok.startswith("/"):
            path = tok.split("?")[0]
            prev = [t for t in toks[:i] if t.isupper() and t.isalpha()]
            verb = prev[-1] if prev else verb
    return verb, path


def route_name(method: str, endpoint: str) -> str:
    """The span name of a request type at the entry point (`GET /api/cart`), normalised the way the
    demo's collector normalises it (query and trailing `/` dropped, a product id is `{productId}`)."""
    verb, path = entry_route(method, endpoint)
    path = path.rstrip("/") or "/"
    if path.startswith("/api/product"):
        path = path.replace("{id}", "{productId}")
    return f"{verb} {path}"


__all__ = [
    "GRPC_METHODS",
    "camel",
    "client_op",
    "datastore_op",
    "edge_path",
    "entry_route",
    "method",
    "route_name",
    "server_op",
    "server_span_name",
]
