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


RULES_VERSIONS: tuple[int, ...] = (1, 2, 3)
"""Marathon-Score rule sets: 1 is the literal reading of the paper's prose, 2 the first sound one, 3
(the default) closes the holes a second adversarial review found in 2."""


class Matching(CatalogModel):
    """Rules v2 and v3: when an incident may be matched to a fault."""

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
    nonspecific_scope_share: float | None = Field(
        None,
        gt=0,
        le=1,
        description=(
            "rules v3: alerts whose services are all in the scope of at least this share of the app's "
            "catalog faults (the entry point) count for a fault only if they name its culprit or come "
            "with a more specific alert of it; None: every alert counts (rules v2)"
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
            raise ValueError(f"rules_version {self.rules_version} needs `matching` and `penalties`")
        if self.rules_version >= 3 and (
            self.matching.nonspecific_scope_share is None or self.matching.report_grace_s is None
        ):
            raise ValueError(
                "rules_version 3 needs `matching.nonspecific_scope_share` and `matching.report_grace_s`"
            )
        return self

    def with_rules(self, version: int, defaults: Scoring | None = None) -> Scoring:
        """The same weights under another rule set; what that set needs and this scoring lacks
        (v2's matching and penalties, v3's matching settings) comes from `defaults` (a bundle sealed
        under v1 or v2 rescored with ``--rules v3``)."""
        if version not in RULES_VERSIONS:
            known = ", ".join(f"v{v}" for v in RULES_VERSIONS)
            numbers = ", ".join(str(v) for v in RULES_VERSIONS)
            raise ValueError(f"unknown rules version {version!r}; known: {known} (pass one of {numbers})")
        update: dict = {"rules_version": version}
        if version >= 2:
            d_match = defaults.matching if defaults is not None else None
            d_pen = defaults.penalties if defaults is not None else None
            matching = self.matching or d_match
            if matching is None or (self.penalties or d_pen) is None:
                raise ValueError(
                    f"rules v{version} needs matching and penalties; pass defaults that have them"
                )
            if version >= 3 and d_match is not None:
                fill = {
                    k: getattr(d_match, k)
                    for k in ("nonspecific_scope_share", "report_grace_s")
                    if getattr(matching, k) is None
                }
                matching = matching.model_copy(update=fill)
            update.update(matching=matching.model_dump(), penalties=(self.penalties or d_pen).model_dump())
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
        from ..core.errors import UnknownNameError

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
