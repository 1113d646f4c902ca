"""The symptom vocabulary of the log context, and the `Context` a sample's symptoms are read with.

Apart from the snapshot that builds contexts (`log_snapshot`) because everything that reads a
sample needs it (the recorder's state, the cause attribution, the line synthesis) while only the
recorder's hook builds one: the symptom bits (`B_*` per service, `E_*` per edge) a sample's lines
are rendered from, and the per-service facts that change only when the cluster or the effects
change, shared by many 15 s samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_LOGGED_SHARE = 0.002  # failure shares below this are noise, not symptoms

# per-service symptom bits (`svc_bits`) and per-edge bits (`edge_bits`): what was going on, cheap to scan
(
    B_APP_ERROR,
    B_BAD_VALUE,
    B_DEP_UNAVAIL,
    B_FLAG_ERROR,
    B_SLOW_CODE,
    B_CRASH,
    B_MISSING_ENV,
    B_MEM_LEAK,
    B_MEM_HIGH,
    B_CPU_HOG,
    B_THROTTLED,
    B_SATURATED,
    B_NOT_READY,
    B_CRASHLOOP,
    B_OOM,
    B_RESTARTED,
    B_NET_DELAY,
    B_NET_LOSS,
    B_CONSUMER_SLOW,
    B_UNREACHABLE,
    B_RETRY_STORM,
    B_CACHE_OFF,
    B_CONSUMER_LAG,
    B_BROKER_GONE,
) = (1 << i for i in range(24))
E_TIMEOUT, E_DNS, E_BLOCKED, E_REFUSED, E_UPSTREAM, E_RESET, E_RETRY, E_CACHE_MISS = (
    1 << i for i in range(8)
)
SYMPTOM_BIT_NAMES = {
    B_APP_ERROR: "application_error",
    B_BAD_VALUE: "invalid_value",
    B_DEP_UNAVAIL: "unavailable",
    B_FLAG_ERROR: "flag_error",
    B_SLOW_CODE: "slow",
    B_CRASH: "crash",
    B_MISSING_ENV: "missing_env",
    B_MEM_LEAK: "memory_growth",
    B_MEM_HIGH: "memory_high",
    B_CPU_HOG: "cpu_high",
    B_THROTTLED: "cpu_throttled",
    B_SATURATED: "saturated",
    B_NOT_READY: "readiness_failing",
    B_CRASHLOOP: "crashloop",
    B_OOM: "oomkilled",
    B_RESTARTED: "restarted",
    B_NET_DELAY: "network_delay",
    B_NET_LOSS: "packet_loss",
    B_CONSUMER_SLOW: "consumer_slow",
    B_UNREACHABLE: "no_endpoints",
    B_RETRY_STORM: "retrying",
    B_CACHE_OFF: "cache_miss",
    B_CONSUMER_LAG: "consumer_lag",
    B_BROKER_GONE: "broker_unreachable",
}


@dataclass
class Context:
    """Per-service facts that change only with the cluster or the effects (shared by many samples)."""

    ready_pods: tuple[tuple[str, ...], ...]
    live_pods: tuple[tuple[str, ...], ...]  # containers running (ready or not)
    notready_pods: tuple[tuple[str, ...], ...]
    own_sources: tuple[tuple[tuple[int, float, str], ...], ...]  # (cause, weight, flag name or detail)
    bits: np.ndarray  # [S] static symptom bits
    route_kind: np.ndarray  # [E] DNS | BLOCKED | 0
    route_host: dict[int, str]
    missing_env: dict[int, str]
    readiness_path: dict[int, str]
    flags_on: frozenset[str]
    mem_pods: tuple[tuple[str, int], ...]  # pods whose memory can grow or is inflated
    started_s: dict[str, float]  # pod -> when it was created or its container started (no line before)


__all__ = [
    "B_APP_ERROR",
    "B_BAD_VALUE",
    "B_CACHE_OFF",
    "B_BROKER_GONE",
    "B_CONSUMER_LAG",
    "B_CONSUMER_SLOW",
    "B_CPU_HOG",
    "B_CRASH",
    "B_CRASHLOOP",
    "B_DEP_UNAVAIL",
    "B_FLAG_ERROR",
    "B_MEM_HIGH",
    "B_MEM_LEAK",
    "B_MISSING_ENV",
    "B_NET_DELAY",
    "B_NET_LOSS",
    "B_NOT_READY",
    "B_OOM",
    "B_RESTARTED",
    "B_RETRY_STORM",
    "B_SATURATED",
    "B_SLOW_CODE",
    "B_THROTTLED",
    "B_UNREACHABLE",
    "E_BLOCKED",
    "E_CACHE_MISS",
    "E_DNS",
    "E_REFUSED",
    "E_RESET",
    "E_RETRY",
    "E_TIMEOUT",
    "E_UPSTREAM",
    "MIN_LOGGED_SHARE",
    "SYMPTOM_BIT_NAMES",
    "Context",
]
