"""Per-pod variation of the cAdvisor series: what makes two replicas, two samples and two services
look like a real cluster's rather than copies of one expected value.

- CPU: each replica gets a fixed share weight (load-balancer imbalance, 0.8..1.2 around the fair
  share, normalised per service so the service's total is kept) and a per-sample jitter of +-5%.
- Memory: the working set a service idles at depends on its runtime (JVMs size their heap to the
  limit, Go and native binaries stay small), spread within the runtime's range by the service name;
  each pod adds its own offset (+-4%), a garbage-collection sawtooth (period 45..240 s, amplitude by
  runtime) and +-0.2% sample noise.

The simulator's memory model (`Effects.memory_mi`: catalog base + extra + leak) decides OOM kills;
the reported working set maps it affinely so that the idle value becomes the runtime baseline and
the limit stays the limit: a container is OOM-killed exactly when its reported working set reaches
its limit, and a leak keeps its shape (scaled by the headroom ratio).

Every draw is a keyed hash (the run's seed, the pod name, the sample index): deterministic,
independent of the pod order and of how often the layout is rebuilt, and built from IEEE basic
operations only (see `detmath`).
"""

from __future__ import annotations

import hashlib

import numpy as np

# runtime -> (baseline range as a fraction of the memory limit, floor MiB, GC sawtooth amplitude
# as a fraction of the baseline)
RUNTIMES = {
    "jvm": ((0.55, 0.75), 0.0, 0.07),
    "dotnet": ((0.35, 0.55), 0.0, 0.05),
    "node": ((0.30, 0.50), 0.0, 0.05),
    "script": ((0.25, 0.50), 0.0, 0.02),
    "go": ((0.15, 0.30), 6.0, 0.06),
    "native": ((0.12, 0.30), 3.0, 0.01),
    "database": ((0.45, 0.70), 0.0, 0.01),
    "cache": ((0.10, 0.30), 3.0, 0.005),
    "other": ((0.30, 0.60), 0.0, 0.03),
}
LANGUAGE_RUNTIME = {
    "java": "jvm",
    "kotlin": "jvm",
    "kafka": "jvm",
    "nacos": "jvm",
    "c#": "dotnet",
    "javascript": "node",
    "typescript": "node",
    "python": "script",
    "ruby": "script",
    "php": "script",
    "go": "go",
    "c++": "native",
    "rust": "native",
    "envoy": "native",
    "nginx": "native",
    "postgresql": "database",
    "mysql": "database",
    "redis": "cache",
    "valkey": "cache",
}
CPU_IMBALANCE = 0.2  # replica weights in 1 +- this
CPU_JITTER = 0.05  # per-sample factor 1 +- this
MEM_POD_SPREAD = 0.04
MEM_NOISE = 0.002
HEADROOM_KEEP = 0.9  # a limit set just above the idle memory: the baseline stays below this share of the gap


def _unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from a keyed hash."""
    return _unit_of("/".join(map(str, parts)))


def _unit_of(key: str) -> float:
    d = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(d[:7], "big") / 2.0**56


def pod_key(seed: object, pod: str) -> int:
    """The 64-bit key of a pod's per-sample draws."""
    return int.from_bytes(hashlib.sha256(f"pod-noise/{seed}/{pod}".encode()).digest()[:8], "big")


def baseline_mi(namespace: str, service: str, language: str, limit_mi: float, model_base_mi: float) -> float:
    """The working set a service idles at: its runtime's share of the catalog memory limit (the
    model's idle memory when the service has no limit)."""
    if not limit_mi:
        return model_base_mi
    (lo, hi), floor, _ = RUNTIMES[LANGUAGE_RUNTIME.get(language.lower(), "other")]
    share = lo + (hi - lo) * _unit("mem-baseline", namespace, service)
    return max(share * limit_mi, min(floor, 0.6 * limit_mi))


def sawtooth_share(language: str) -> float:
    return RUNTIMES[LANGUAGE_RUNTIME.get(language.lower(), "other")][2]


def pod_static(seed: object, pod: str) -> tuple[float, float, float, float]:
    """(CPU share weight, memory factor, sawtooth period s, sawtooth phase) of one pod."""
    tail = f"/{seed!s}/{pod!s}"  # `_unit(name, seed, pod)`'s key after the name
    return (
        1.0 + CPU_IMBALANCE * (2.0 * _unit_of("cpu-weight" + tail) - 1.0),
        1.0 + MEM_POD_SPREAD * (2.0 * _unit_of("mem-factor" + tail) - 1.0),
        45.0 + 195.0 * _unit_of("gc-period" + tail),
        _unit_of("gc-phase" + tail),
    )


def reported_memory(model_base_mi: float, baseline: float, limit_mi: float) -> tuple[float, float]:
    """(idle working set, slope) of the affine map from the model's memory m to the reported one:
    `idle + (m - model_base) * slope`, with the model's base mapped to `baseline` and the limit to
    the limit. No limit, or a limit the model's base does not fit in (the container is OOM-killed
    at start): the model's memory itself."""
    if not limit_mi or limit_mi <= model_base_mi:
        return model_base_mi, 1.0
    idle = min(baseline, model_base_mi + HEADROOM_KEEP * (limit_mi - model_base_mi))
    return idle, (limit_mi - idle) / (limit_mi - model_base_mi)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


_MASK = 0xFFFFFFFFFFFFFFFF
_SAMPLE_MUL, _STREAM_MUL = 0x100000001B3, 0x2545F4914F6CDD1D


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 of salted keys, as numbers in [0, 1)."""
    x = x + _GOLDEN
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    x ^= x >> _S31
    return (x >> _S11).astype(np.float64) * (1.0 / 2.0**53)


def sample_units(keys: np.ndarray, sample: int, stream: int) -> np.ndarray:
    """Per-pod numbers in [0, 1) for one sample (splitmix64 of the pod key, sample index and stream)."""
    return _mix(keys ^ np.uint64((sample * _SAMPLE_MUL + stream * _STREAM_MUL) & _MASK))


def stream_salts(streams) -> np.ndarray:
    """The streams' parts of `sample_units`' salt, for `sample_units_streams`."""
    return np.array([(s * _STREAM_MUL) & _MASK for s in streams], dtype=np.uint64)


def sample_units_streams(keys: np.ndarray, sample: int, salts: np.ndarray) -> np.ndarray:
    """`sample_units` of each key with its own stream (`salts`: `stream_salts` per key), in one pass:
    the salt's two parts add modulo 2**64, as their sum masked to 64 bits does."""
    return _mix(keys ^ (np.uint64((sample * _SAMPLE_MUL) & _MASK) + salts))
