"""The schedule's records and the rules that place them on the timeline: a fault placed
(`ScheduledFault`), a harmless change (`BenignChange`), the events between them, the conflict keys
that keep overlapping faults off one artifact or slot, and the arrival and duration draws.

Its own module because both planners read it: the fault schedule (`fault_schedule`) and the
change stream that ships harmless twins beside the faults (`change_stream`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from ..core.detmath import power

if TYPE_CHECKING:
    from ..catalog import Fault

FAULTS_PER_HOUR = 60.0  # SRE-Marathon §4: "around sixty faults" in 60 minutes at intensity 1
COUNT_JITTER = 0.05  # +-5 % seeded jitter of the fault count
RAMP = 1.25  # arrival rate at the end of the injection window is (1 + RAMP) x the rate at its start
DURATION_RANGE = (240, 720)  # SRE-Marathon §2: faults remain active for four to twelve minutes
DURATION_SHAPE = (1.2, 2.2)  # Kumaraswamy (a, b) of the duration draw over DURATION_RANGE

EventKind = Literal["inject", "revert", "benign", "benign_end"]

# mechanism -> slots of the target deployment it takes over (see the module docstring)
_ROLLOUT = "rollout"
_SLOTS: dict[str, frozenset[str]] = {
    "code_error": frozenset({_ROLLOUT}),
    "code_latency": frozenset({_ROLLOUT}),
    "code_crash": frozenset({_ROLLOUT}),
    "code_retry_storm": frozenset({_ROLLOUT}),
    "code_memory_leak": frozenset({_ROLLOUT, "memory"}),
    "code_cpu_hog": frozenset({_ROLLOUT, "cpu"}),
    "config_timeout": frozenset({_ROLLOUT}),
    "config_pool_size": frozenset({_ROLLOUT}),
    "config_wrong_address": frozenset({_ROLLOUT}),
    "config_cache_ttl": frozenset({_ROLLOUT}),
    "config_bad_value": frozenset({_ROLLOUT}),
    "config_missing_env": frozenset({_ROLLOUT}),
    "feature_flag": frozenset(),  # flags are separate artifacts; the artifact key covers one flag
    "dependency_unavailable": frozenset({"dependency"}),
    "dependency_slow": frozenset({"dependency"}),
    "cpu_limit_cut": frozenset({_ROLLOUT, "cpu"}),
    "memory_limit_cut": frozenset({_ROLLOUT, "memory"}),
    "cpu_stress": frozenset({"cpu"}),
    "memory_stress": frozenset({"memory"}),
    "network_delay": frozenset({"network"}),
    "network_loss": frozenset({"network"}),
    "network_partition": frozenset({"network"}),
    "bad_image_tag": frozenset({_ROLLOUT}),
    "bad_readiness_probe": frozenset({_ROLLOUT}),
    "scale_to_zero": frozenset({_ROLLOUT, "cpu", "memory", "network", "dependency", "load", "replicas"}),
    "node_failure": frozenset(),
    "node_cordon_drain": frozenset(),
    "zone_failure": frozenset(),
    "load_spike": frozenset({"load"}),
}
_ALL_SLOTS = frozenset().union(*_SLOTS.values())
_INFRA_MECHANISMS = frozenset({"node_failure", "node_cordon_drain", "zone_failure"})


# --------------------------------------------------------------------------------------------------
# records


@dataclass(frozen=True)
class ScheduledFault:
    """One catalog fault placed on the timeline (ground truth; never shown to the agent)."""

    fault_id: str
    app: str
    target: str
    mechanism: str
    category: str
    artifact: str
    start_s: int
    planned_end_s: int
    clipped: bool = False  # planned_end_s was cut to the end of the run

    @property
    def duration_s(self) -> int:
        return self.planned_end_s - self.start_s

    def active_at(self, t: float) -> bool:
        return self.start_s <= t < self.planned_end_s


@dataclass(frozen=True)
class BenignChange:
    """A harmless change on a plane the agent reads, shipped like a faulty one (`change_stream`)."""

    time_s: int
    service: str
    artifact: (
        str  # the app's artifact id as listed in the catalog (config key or source file @ from_revision)
    )
    kind: str  # code | config (pipeline); image | cpu_limit_m | mem_limit_mi | replicas; netpol; cordon
    message: str  # pipeline changes only (direct changes leave no commit)
    diff: str
    from_revision: str
    to_revision: str
    new_value: str | None = None  # config value, image, limit, replicas, denied service or node
    plane: str = "pipeline"  # pipeline | manifest | netpol | node (`change_stream.PLANES`)
    until_s: int | None = None  # node maintenance: when the node is uncordoned

    @property
    def new_artifact(self) -> str:
        """The artifact id after the change (source files carry their revision in the id)."""
        if self.kind == "code" and "@" in self.artifact:
            return self.artifact.rsplit("@", 1)[0] + "@" + self.to_revision
        return self.artifact


@dataclass(frozen=True)
class ScheduleEvent:
    """One point on the timeline: a fault injected or reverted, a benign change made or ended."""

    time_s: int
    kind: EventKind
    item: ScheduledFault | BenignChange


# --------------------------------------------------------------------------------------------------
# conflict keys


def artifact_key(artifact: str) -> str:
    """An artifact id without its ``@revision`` suffix: two revisions of one file are one artifact."""
    return re.sub(r"@r\d+$", "", artifact)


def _looks_like_artifact(name: str) -> bool:
    return ":" in name or "/" in name


def touched_artifacts(fault: Fault) -> set[str]:
    """Artifact keys a fault touches: its artifact, artifact-like aliases and remedy artifacts."""
    keys = {artifact_key(fault.artifact)}
    keys |= {artifact_key(a) for a in fault.aliases if _looks_like_artifact(a)}
    keys |= {artifact_key(r.artifact) for r in fault.remedies if r.artifact}
    return keys


def occupied_keys(fault: Fault) -> frozenset[str]:
    """The keys a fault holds while active; overlapping faults never share one (module docstring)."""
    keys = {f"artifact:{artifact_key(fault.artifact)}"}
    keys |= {f"artifact:{artifact_key(r.artifact)}" for r in fault.remedies if r.artifact}
    slots = _ALL_SLOTS if fault.mechanism == "scale_to_zero" else _SLOTS.get(fault.mechanism, frozenset())
    keys |= {f"{fault.target}#{s}" for s in slots}
    if fault.mechanism in _INFRA_MECHANISMS:
        keys.add("infrastructure#cluster")
    if fault.full_outage:
        keys.add("entry#outage")
    return frozenset(keys)


def holds_rollout(fault: Fault) -> bool:
    return fault.mechanism == "scale_to_zero" or _ROLLOUT in _SLOTS.get(fault.mechanism, frozenset())


# --------------------------------------------------------------------------------------------------
# arrivals and durations


def fault_count(intensity: float, injection_minutes: float, rng: np.random.Generator) -> int:
    """``FAULTS_PER_HOUR x intensity`` per hour of injections, with +-5 % seeded jitter."""
    target = FAULTS_PER_HOUR * intensity * injection_minutes / 60.0
    jitter = int(round(COUNT_JITTER * target))
    n = int(round(target)) + (int(rng.integers(-jitter, jitter + 1)) if jitter else 0)
    return max(1, n)


def arrival_times(n: int, injection_s: int, rng: np.random.Generator, ramp: float = RAMP) -> np.ndarray:
    """Sorted integer start times in ``[0, injection_s)`` with rate rising linearly by ``1 + ramp``.

    Stratified inverse-CDF sampling: stratum i gets ``u = (i + U) / n``, mapped through the inverse
    of ``F(x) = (x + ramp x^2 / 2) / (1 + ramp / 2)``, ``x = t / T``.
    """
    u = (np.arange(n) + rng.random(n)) / n
    if ramp > 0:
        x = (np.sqrt(1.0 + 2.0 * ramp * (1.0 + ramp / 2.0) * u) - 1.0) / ramp
    else:
        x = u
    t = np.floor(x * injection_s).astype(np.int64)
    return np.clip(t, 0, injection_s - 1)


def duration_quantiles(n: int, rng: np.random.Generator) -> np.ndarray:
    """Stratified uniforms in random order: one per 1/n stratum, so the draws cover the range evenly."""
    return (rng.permutation(n) + rng.random(n)) / n


def durations(
    quantiles: np.ndarray,
    shape: tuple[float, float] = DURATION_SHAPE,
    bounds: tuple[int, int] = DURATION_RANGE,
) -> np.ndarray:
    """Whole-second durations at the given quantiles (Kumaraswamy inverse CDF over `bounds`)."""
    a, b = shape
    x = power(1.0 - power(1.0 - quantiles, 1.0 / b), 1.0 / a)  # not numpy's SIMD pow: same bits on any CPU
    lo, hi = bounds
    return np.clip(np.round(lo + (hi - lo) * x), lo, hi).astype(np.int64)


__all__ = [
    "BenignChange",
    "COUNT_JITTER",
    "DURATION_RANGE",
    "DURATION_SHAPE",
    "EventKind",
    "FAULTS_PER_HOUR",
    "RAMP",
    "ScheduleEvent",
    "ScheduledFault",
    "arrival_times",
    "artifact_key",
    "duration_quantiles",
    "durations",
    "fault_count",
    "holds_rollout",
    "occupied_keys",
    "touched_artifacts",
]
