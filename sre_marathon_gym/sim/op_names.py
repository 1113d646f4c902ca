"""Operation names: what spans are called and what an operation is named in log lines.

Apart from the recorder because they are naming conventions, not recorded state: the gRPC method a
service serves (spelled the way its language's instrumentation spells it), the client operation of
a call, the HTTP route of a call and of a request type. Computed once per app by the recorder.
"""

from __future__ import annotations

import re

GRPC_METHODS = {  # service -> the rpc its spans are named after (proto packages of both demos)
    "product-catalog": "oteldemo.ProductCatalogService/GetProduct",
    "cart": "oteldemo.CartService/GetCart",
    "checkout": "oteldemo.CheckoutService/PlaceOrder",
    "currency": "oteldemo.CurrencyService/Convert",
    "payment": "oteldemo.PaymentService/Charge",
    "recommendation": "oteldemo.RecommendationService/ListRecommendations",
    "ad": "oteldemo.AdService/GetAds",
    "product-reviews": "oteldemo.ProductReviewService/GetProductReviews",
    "shipping": "/get-quote",
    "quote": "POST /getquote",
    "email": "POST /send_order_confirmation",
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


def camel(name: str) -> str:
    return "".join(p.capitalize() for p in re.split(r"[-_]", name) if p and p not in ("service",))


def server_op(name: str, language: str, proto: str) -> str:
    """The name of a service's SERVER spans (its gRPC method, route or datastore command)."""
    cml = camel(name)
    full = GRPC_METHODS.get(name)
    if full is not None and "/" in full and not full.startswith(("/", "POST")):
        if language == "Python":
            return "/" + full
        if language in ("JavaScript", "TypeScript"):
            return "grpc." + full
        if language == "C#":
            return "POST /" + full
        if language == "C++":
            return full.split(".", 1)[1].replace("Service/", "/")
        if language in ("Rust", "PHP", "Ruby"):
            return full.rsplit("/", 1)[1]
        return full
    if full is not None:
        return full
    if proto == "grpc":
        if language == "Python":
            return f"/oteldemo.{cml}Service/Handle"
        if language in ("JavaScript", "TypeScript"):
            return f"grpc.oteldemo.{cml}Service/Handle"
        if language == "C#":
            return f"POST /oteldemo.{cml}Service/Handle"
        return f"oteldemo.{cml}Service/Handle"
    if proto == "redis":
        return "HGET"
    if proto == "sql":
        return "SELECT"
    if proto in ("kafka", "amqp"):
        return "orders receive"
    return f"POST /api/v1/{name.replace('ts-', '').replace('-', '')}"


def client_op(target: str, proto: str) -> str:
    """The name of the CLIENT span of a call to `target` over `proto`."""
    if target in GRPC_METHODS and proto == "grpc":
        return GRPC_METHODS[target]
    if proto == "grpc":
        return f"oteldemo.{camel(target)}Service/Handle"
    if proto == "redis":
        return "HGET"
    if proto == "sql":
        return "SELECT"
    if proto in ("kafka", "amqp"):
        return "orders publish"
    return "POST"


def edge_path(target: str) -> str:
    """The HTTP route a call to `target` is made on."""
    return f"/api/v1/{target.replace('ts-', '').replace('-', '')}"


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


__all__ = ["GRPC_METHODS", "camel", "client_op", "edge_path", "entry_route", "server_op"]
