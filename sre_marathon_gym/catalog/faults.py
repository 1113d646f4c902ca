"""Models of `catalog/faults/<app>.yaml`: the fault catalog.

Faults are categorised by failure *cause* (a wrong setting shipped as source is still `config`),
and carry the *mechanism* the simulator implements to produce that cause's symptoms.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import CatalogModel

Category = Literal[
    "code", "config", "dependency", "resource", "network", "deployment", "infrastructure", "load"
]
CATEGORIES: tuple[str, ...] = Category.__args__  # type: ignore[attr-defined]

# mechanism -> parameters it requires (the simulator implements each one, with apply and revert)
MECHANISM_PARAMS: dict[str, frozenset[str]] = {
    # change-driven: shipped through the build pipeline as a new revision of an artifact
    "code_error": frozenset({"error_ratio"}),  # a share of requests now fail in the service's own code
    "code_latency": frozenset({"added_ms"}),  # slow code path
    "code_crash": frozenset({"crash_ratio"}),  # new pods crash at start or under some requests -> restarts
    "code_retry_storm": frozenset({"downstream", "multiplier"}),  # retries multiply calls to a dependency
    "code_memory_leak": frozenset({"leak_mi_per_min"}),  # grows until OOMKilled
    "code_cpu_hog": frozenset({"cpu_multiplier"}),  # CPU per request grows, throttling
    "config_timeout": frozenset(
        {"downstream", "timeout_ms"}
    ),  # client timeout cut below the dependency latency
    "config_pool_size": frozenset({"threads"}),  # worker / connection pool too small -> queueing
    "config_wrong_address": frozenset({"downstream", "error_ratio"}),  # calls to a dependency go nowhere
    "config_cache_ttl": frozenset({"downstream", "multiplier"}),  # cache disabled -> more calls and latency
    "config_bad_value": frozenset({"error_ratio"}),  # a business setting makes some requests fail
    "config_missing_env": frozenset(),  # new pods fail to start (CrashLoopBackOff)
    "feature_flag": frozenset({"flag"}),  # Astronomy Shop flagd flag flipped to its failure variant
    # direct: controlled deployment interventions
    "dependency_unavailable": frozenset({"error_ratio"}),  # a datastore / queue / external dependency fails
    "dependency_slow": frozenset({"added_ms"}),
    "cpu_limit_cut": frozenset({"cpu_limit_m"}),
    "memory_limit_cut": frozenset({"mem_limit_mi"}),
    "cpu_stress": frozenset({"cores"}),  # noisy neighbour inside the pod
    "memory_stress": frozenset({"mi"}),
    "network_delay": frozenset({"delay_ms"}),
    "network_loss": frozenset({"loss_ratio"}),
    "network_partition": frozenset({"downstream"}),  # NetworkPolicy denies caller -> downstream
    "bad_image_tag": frozenset({"image"}),  # rollout stalls in ImagePullBackOff
    "bad_readiness_probe": frozenset({"path"}),  # pods never become Ready
    "scale_to_zero": frozenset(),
    "node_failure": frozenset({"node"}),
    "node_cordon_drain": frozenset({"node"}),
    "zone_failure": frozenset({"zone"}),
    "load_spike": frozenset({"multiplier"}),
}
MECHANISMS: tuple[str, ...] = tuple(MECHANISM_PARAMS)

RemedyAction = Literal[
    "rollback",
    "set_config",
    "restart",
    "scale",
    "patch_source",
    "set_resources",
    "failover",
    "uncordon",
    "delete_network_policy",
]
ProbeKind = Literal[
    "entry_error_ratio",  # error ratio of the entry point (optionally one request type)
    "entry_latency_p95_ms",  # p95 latency in ms of the entry point (optionally one request type)
    "service_error_ratio",  # server-side error ratio of one service
    "service_latency_p95_ms",
    "ready_replicas_ratio",  # ready / desired replicas of one deployment (fails when BELOW threshold)
    "restarts_per_5m",  # container restarts over 5 minutes
    "kafka_consumer_lag",
    "entry_rate_rps",  # requests per second reaching the entry point (fails when BELOW threshold)
]
LOWER_IS_FAILING: frozenset[str] = frozenset({"ready_replicas_ratio", "entry_rate_rps"})


class SymptomProbe(CatalogModel):
    """The check that fails while the fault is active: ``value > threshold`` (``<`` for ratios of health)."""

    kind: ProbeKind
    service: str
    request_type: str | None = None
    threshold: float
    below: bool | None = Field(
        None, description="fail when the value is below the threshold (default by kind)"
    )

    def is_failing(self, value: float) -> bool:
        below = self.kind in LOWER_IS_FAILING if self.below is None else self.below
        return value < self.threshold if below else value > self.threshold


class Remedy(CatalogModel):
    """An intervention that repairs the fault; `value` is what to set (config value, replicas,
    revision...)."""

    action: RemedyAction
    target: str = Field(description="service, node or zone the intervention acts on")
    artifact: str | None = None
    value: str | None = None


class Change(CatalogModel):
    """The plausible change that ships a code or config fault through the pipeline."""

    message: str
    diff: str
    from_revision: str
    to_revision: str


class DurationBounds(CatalogModel):
    min_s: int = Field(ge=240, le=720)
    max_s: int = Field(ge=240, le=720)

    @model_validator(mode="after")
    def _ordered(self) -> DurationBounds:
        if self.min_s > self.max_s:
            raise ValueError(f"min_s {self.min_s} > max_s {self.max_s}")
        return self


class Fault(CatalogModel):
    id: str = Field(pattern=r"^[a-z]{2}-[a-z]+-\d{3,4}$")
    app: str
    title: str
    category: Category
    mechanism: str
    target: str
    params: dict[str, str | int | float | bool] = {}
    scope: list[str] = Field(min_length=1, description="services expected to show symptoms")
    probe: SymptomProbe
    artifact: str = Field(description="the responsible artifact, exactly")
    aliases: list[str] = Field(min_length=1, description="names accepted for localization (exact match)")
    remedies: list[Remedy] = Field(min_length=1)
    duration: DurationBounds
    change: Change | None = None
    full_outage: bool = Field(False, description="true when the entry point is expected to stop serving")
    observable: bool = Field(
        True,
        description="false when by design no probe fails (e.g. a feature flag that makes "
        "answers wrong); such a fault counts as repaired when its artifact is corrected",
    )

    @model_validator(mode="after")
    def _mechanism_known(self) -> Fault:
        if self.mechanism not in MECHANISM_PARAMS:
            from ..core.errors import did_you_mean

            raise ValueError(
                f"unknown mechanism {self.mechanism!r}{did_you_mean(self.mechanism, MECHANISMS)}"
            )
        missing = MECHANISM_PARAMS[self.mechanism] - set(self.params)
        if missing:
            raise ValueError(f"mechanism {self.mechanism} needs params {sorted(missing)}")
        if self.category in ("code", "config") and self.change is None:
            raise ValueError(f"a {self.category} fault needs a `change` (message and diff)")
        return self


class FaultFile(CatalogModel):
    schema_version: int
    app: str
    generator: str = Field(description="the script that wrote this file")
    faults: list[Fault]
