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


class Scoring(CatalogModel):
    schema_version: int
    stage_weights: StageWeights
    forbidden_operation_penalty: float = Field(ge=0, description="Marathon-Score points per forbidden attempt")
    slow_request_threshold_s: float = Field(gt=0)
    repair_stable_s: int = Field(ge=0, description="how long the probe must stay healthy to count as repaired")
    notes: str = ""


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
