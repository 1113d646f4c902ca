"""What each Astronomy Shop flag does in the simulator, in the words an RCA report uses.

Why derived from `FLAG_BEHAVIOUR`: the report's mechanism vocabulary and the flag's culprit services
must follow the simulator's actual mechanics, so a report is judged against what the telemetry can
show, not against the real demo's code paths.
"""

from __future__ import annotations

from typing import Literal

from ..catalog.flag_behaviour import FLAG_BEHAVIOUR

Mechanism = Literal["errors", "latency", "cpu", "memory", "unreachable", "queue", "load", "readiness"]
MECHANISMS: tuple[str, ...] = (
    "errors",
    "latency",
    "cpu",
    "memory",
    "unreachable",
    "queue",
    "load",
    "readiness",
)

# The one table from the simulator's mechanisms to (the report's mechanism word, the telemetry signal
# kinds evidence of it shows, strongest first). The report vocabulary, the evidence checker and the
# heuristic baseline all read it.
MECHANISM_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "code_error": ("errors", ("errors",)),
    "config_bad_value": ("errors", ("errors",)),
    "dependency_unavailable": ("errors", ()),
    "code_latency": ("latency", ("latency",)),
    "dependency_slow": ("latency", ()),
    "cpu_stress": ("cpu", ("cpu", "errors", "latency")),
    "code_cpu_hog": ("cpu", ()),
    "code_memory_leak": ("memory", ("memory", "errors")),
    "memory_stress": ("memory", ()),
    "config_wrong_address": ("unreachable", ("errors",)),
    "code_retry_storm": ("queue", ("latency",)),
    "consumer_delay": ("queue", ("lag",)),
    "load_spike": ("load", ("load",)),
    "bad_readiness_probe": ("readiness", ()),
}


def report_mechanism(sim_mechanism: str) -> str | None:
    hit = MECHANISM_KINDS.get(sim_mechanism)
    return hit[0] if hit else None


def signal_kinds(sim_mechanism: str) -> tuple[str, ...]:
    hit = MECHANISM_KINDS.get(sim_mechanism)
    return hit[1] if hit else ()


def mechanisms_with_primary_signal(kind: str) -> tuple[str, ...]:
    """Simulator mechanisms whose strongest signal is `kind` (e.g. "errors": code errors, wrong addresses)."""
    return tuple(m for m, (_, kinds) in MECHANISM_KINDS.items() if kinds[:1] == (kind,))


def flag_services(flag: str) -> tuple[str, ...]:
    """Services whose behaviour the flag changes, first the one the flag is read in."""
    out: list[str] = []
    for svc, _, _ in FLAG_BEHAVIOUR.get(flag, []):
        if svc not in out:
            out.append(svc)
    return tuple(out)


def flag_mechanisms(flag: str) -> tuple[str, ...]:
    out: list[str] = []
    for _, mech, _ in FLAG_BEHAVIOUR.get(flag, []):
        m = report_mechanism(mech)
        if m is not None and m not in out:
            out.append(m)
    return tuple(out)
