"""What an ORCA-bench task is: the question, its clock, its control window and its ground truth.

Why apart from the generator (`tasks`): the judge (`scoring.orca`) reads tasks and reports only.
Everything it needs from the simulator (which flag events are plausible causes, their culprit
services and mechanisms) was computed when the tasks were generated and is frozen here, so
scoring imports no simulator, backend or tool.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Difficulty = Literal["easy", "medium", "hard"]


class GroundTruthCause(BaseModel):
    """One plausible root cause: a flag event active in the window (never shown to the agent)."""

    model_config = ConfigDict(frozen=True)
    event_id: str
    flag: str
    value: str
    services: tuple[str, ...]
    mechanisms: tuple[str, ...]
    start_s: int
    end_s: int


class OrcaTask(BaseModel):
    model_config = ConfigDict(frozen=True)
    task_id: str
    qid: str
    event_id: str
    scenario: str
    scenario_type: str
    granularity: Literal["easy", "hard", "universal"]
    difficulty: Difficulty
    question: str
    areas: tuple[str, ...]
    section: Literal["exact", "exact_range", "broad_range_time_of_day", "broad_range_day", "control"]
    ttd_min: int
    offset_min: int | None
    reported_styled: str
    reported_correctly_specified: bool
    incident_s: int
    reported_s: int
    current_s: int
    horizon_s: int  # telemetry is visible up to here (the first snapshot after current + grace)
    quiet_window_start_s: int | None = None
    quiet_window_end_s: int | None = None
    ground_truth: tuple[GroundTruthCause, ...] = ()

    @property
    def is_control(self) -> bool:
        return not self.ground_truth

    @property
    def ttd_label(self) -> str:
        return {0: "control", 15: "15 min", 60: "1 h", 480: "8 h", 1440: "24 h"}[self.ttd_min]


__all__ = ["Difficulty", "GroundTruthCause", "OrcaTask"]
