"""What each Astronomy Shop flag does in the simulator, in the words an RCA report uses.

Why derived from `FLAG_BEHAVIOUR`: the report's mechanism vocabulary and the flag's culprit services
must follow the simulator's actual mechanics, so a report is judged against what the telemetry can
show, not against the real demo's code paths.
"""

from __future__ import annotations

from typing import Literal

from ..sim.effects import FLAG_BEHAVIOUR

Mechanism = Literal["errors", "latency", "cpu", "memory", "unreachable", "queue", "load", "readiness"]
MECHANISMS: tuple[str, ...] = ("errors", "latency", "cpu", "memory", "unreachable", "queue", "load", "readiness")

_SIM_TO_REPORT = {
    "code_error": "errors", "config_bad_value": "errors", "dependency_unavailable": "errors",
    "code_latency": "latency", "dependency_slow": "latency", "cpu_stress": "cpu", "code_cpu_hog": "cpu",
    "code_memory_leak": "memory", "memory_stress": "memory", "config_wrong_address": "unreachable",
    "code_retry_storm": "queue", "consumer_delay": "queue", "load_spike": "load", "bad_readiness_probe": "readiness",
}


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
        m = _SIM_TO_REPORT.get(mech)
        if m is not None and m not in out:
            out.append(m)
    return tuple(out)
