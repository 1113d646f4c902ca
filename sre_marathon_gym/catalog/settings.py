"""Models of `catalog/scoring.yaml`, `catalog/leaderboard.yaml` and `catalog/published.yaml`."""

from __future__ import annotations

from pydantic import Field, model_validator

from .base import CatalogModel


class StageWeights(CatalogModel):
    correlation: float = Field(ge=0)
    localization: float = Field(ge=0)
    repair: float = Field(ge=0)

    @model_validator(mode="after")
    def _sum_to_one(self) -> StageWeights:
        total = self.correlation + self.localization + self.repair
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"stage weights must sum to 1, got {total}")
        return self


RULES_VERSIONS: tuple[int, ...] = (1, 2)
"""Marathon-Score rule sets: 1 is the literal reading of the paper's prose, 2 the sound one (default)."""


class Matching(CatalogModel):
    """Rules v2: when an incident may be matched to a fault."""

    min_explained_share: float = Field(
        gt=0,
        le=1,
        description=(
            "an incident is eligible for a fault when at least this share of its fired alerts is "
            "attributable to the fault"
        ),
    )
    report_grace_s: float | None = Field(
        None,
        ge=0,
        description=(
            "correlation and localization earn credit only when they happen before the fault's "
            "deadline (its revert) plus this grace; None: no deadline (scoring files sealed before "
            "the rule existed)"
        ),
    )


class Penalties(CatalogModel):
    """Rules v2: what each wrong answer costs, in units of one fault's full credit.

    Multiplied by 100 / (number of faults), like the stage weights, so a penalty and a credit
    are comparable in any run.
    """

    false_incident: float = Field(ge=0, description="an incident matched to no fault")
    false_claim: float = Field(
        ge=0, description=("a distinct root-cause claim that never localizes its incident's fault")
    )
    needless_action: float = Field(
        ge=0, description=("an executed intervention that no matched, localized incident calls for")
    )


class Scoring(CatalogModel):
    schema_version: int
    rules_version: int = Field(
        1,
        description=(
            "Marathon-Score rule set; absent means 1 (files and bundles written before rule sets were "
            "versioned)"
        ),
    )
    stage_weights: StageWeights
    forbidden_operation_penalty: float = Field(
        ge=0, description="Marathon-Score points per forbidden attempt"
    )
    slow_request_threshold_s: float = Field(gt=0)
    repair_stable_s: int = Field(
        ge=0, description="how long the probe must stay healthy to count as repaired"
    )
    matching: Matching | None = None
    penalties: Penalties | None = None
    notes: str = ""

    @model_validator(mode="after")
    def _rules_complete(self) -> Scoring:
        if self.rules_version not in RULES_VERSIONS:
            raise ValueError(f"rules_version must be one of {list(RULES_VERSIONS)}, got {self.rules_version}")
        if self.rules_version >= 2 and (self.matching is None or self.penalties is None):
            raise ValueError("rules_version 2 needs `matching` and `penalties`")
        return self

    def with_rules(self, version: int, defaults: Scoring | None = None) -> Scoring:
        """The same weights under another rule set; v2's matching and penalties come from `defaults`
        when this one has none (a bundle sealed under v1 rescored with ``--rules v2``)."""
        if version not in RULES_VERSIONS:
            known = ", ".join(f"v{v}" for v in RULES_VERSIONS)
            raise ValueError(f"unknown rules version {version!r}; known: {known} (pass 1 or 2)")
        update: dict = {"rules_version": version}
        if version >= 2 and (self.matching is None or self.penalties is None):
            if defaults is None or defaults.matching is None or defaults.penalties is None:
                raise ValueError("rules v2 needs matching and penalties; pass defaults that have them")
            update.update(
                matching=self.matching or defaults.matching, penalties=self.penalties or defaults.penalties
            )
        return Scoring.model_validate({**self.model_dump(), **update})


class LeaderboardRun(CatalogModel):
    app: str
    seed: int


class Leaderboard(CatalogModel):
    schema_version: int
    injection_minutes: int = Field(gt=0)
    observation_minutes: int = Field(ge=0)
    interval_s: int = Field(gt=0)
    agent_budget_s: int = Field(gt=0)
    runs: list[LeaderboardRun] = Field(min_length=1)

    def seed_for(self, app: str) -> int:
        from ..errors import UnknownNameError

        for r in self.runs:
            if r.app == app:
                return r.seed
        raise UnknownNameError("leaderboard app", app, [r.app for r in self.runs])


class PublishedNumber(CatalogModel):
    key: str
    value: float
    unit: str = ""
    method: str = ""
    app: str = ""
    backbone: str = ""
    benchmark: str
    source: str = Field(description="section, table or figure of the paper")
    note: str = ""


class Published(CatalogModel):
    schema_version: int
    numbers: list[PublishedNumber]
