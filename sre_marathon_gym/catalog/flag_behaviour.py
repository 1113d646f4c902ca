"""What each Astronomy Shop feature flag does, as data: the culprit services, the simulator's
mechanism and its parameters per flag, and how a variant's value fills those parameters.

Why here and not in `sim/`: it is a fact about the application (like `catalog/apps/astronomy_shop.yaml`)
that the simulator turns into behaviour and that ORCA-bench's tasks, judge vocabulary and agents
read without running the simulator; both sides import it from the catalog.
"""

from __future__ import annotations

import math

# Astronomy Shop feature flags -> (service, mechanism, params) of the failure variant; the effects
# follow the flag's real behaviour in the OpenTelemetry demo (see catalog/apps/astronomy_shop.yaml).
FLAG_BEHAVIOUR: dict[str, list[tuple[str, str, dict]]] = {
    "productCatalogFailure": [("product-catalog", "code_error", {"error_ratio": 0.1})],
    "recommendationCacheFailure": [
        ("recommendation", "code_memory_leak", {"leak_mi_per_min": 60}),
        ("recommendation", "code_latency", {"added_ms": 400}),
    ],
    "adManualGc": [("ad", "code_latency", {"added_ms": 700})],
    "adHighCpu": [("ad", "cpu_stress", {"cores": 4.0})],
    "adFailure": [("ad", "code_error", {"error_ratio": 0.1})],
    "kafkaQueueProblems": [
        ("checkout", "code_retry_storm", {"downstream": "kafka", "multiplier": 100}),
        ("fraud-detection", "consumer_delay", {"seconds_per_record": 1.0}),
    ],
    "cartFailure": [("cart", "code_error", {"error_ratio": 0.15})],
    "paymentFailure": [("payment", "code_error", {"error_ratio": "variant"})],
    "paymentUnreachable": [
        ("checkout", "config_wrong_address", {"downstream": "payment", "error_ratio": 1.0})
    ],
    "loadGeneratorFloodHomepage": [
        ("frontend-proxy", "load_spike", {"multiplier": 100, "request_type": "index"})
    ],
    "imageSlowLoad": [("frontend-proxy", "code_latency", {"added_ms": "variant_ms"})],
    "emailMemoryLeak": [("email", "code_memory_leak", {"leak_mi_per_min": "variant_leak"})],
    "failedReadinessProbe": [("cart", "bad_readiness_probe", {})],
    # a wrong answer with status OK: the culprit and its mechanism, without a single error
    "llmInaccurateResponse": [("product-reviews", "code_error", {"error_ratio": 0.0})],
    "llmRateLimitError": [("product-reviews", "code_error", {"error_ratio": 0.5})],
    "intlShippingSlowdown": [("shipping", "code_latency", {"added_ms": "variant_s"})],
    "loadGeneratorTraffic": [("frontend-proxy", "load_spike", {"multiplier": 0.05})],
    "loadGeneratorVUs": [("frontend-proxy", "load_spike", {"multiplier": "variant_vus"})],
}


# Flags left out of SRE-Marathon's fault catalog, and why: injected alone, the simulator's version
# would stop the shop rather than leave "observable failures while requests continue to be served"
# (the validation harness's severity cap). ORCA-bench still uses them (its world flips every flag).
OUT_OF_MARATHON_CATALOG: dict[str, str] = {
    "imageSlowLoad": "the simulator delays every request at the proxy, where the demo delays only the "
    "browser's image loads: every page request is slower than 2.5 s",
}


def flag_reader(flag: str) -> str | None:
    """The service that evaluates `flag` (its first culprit): where flagd counts its impressions and
    where its evaluation span events sit. None for a flag the table does not model."""
    rows = FLAG_BEHAVIOUR.get(flag)
    return rows[0][0] if rows else None


def resolve_variant(params: dict, value: object) -> dict:
    """Fill flag parameters that depend on the variant's value (e.g. paymentFailure's probability)."""
    out = {}
    number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 1.0
    for k, v in params.items():
        if v == "variant":
            out[k] = number
        elif v == "variant_ms":
            out[k] = number
        elif v == "variant_s":
            out[k] = number * 1000 * 0.3  # only non-US shipments sleep
        elif v == "variant_leak":
            out[k] = 5.0 * math.log10(max(number, 1.0)) * 10 + 5
        elif v == "variant_vus":
            out[k] = number / 10.0
        else:
            out[k] = v
    return out


__all__ = ["FLAG_BEHAVIOUR", "resolve_variant"]
