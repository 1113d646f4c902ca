"""Pydantic models and loaders of ORCA-bench's catalog files (`catalog/orca/*.yaml`).

Why here and not in `catalog/`: the files are only read by ORCA-bench, and keeping their models next
to it leaves the shared catalog loader untouched.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..catalog.loader import load_yaml
from ..catalog.locate import catalog_dir
from ..core.errors import CatalogError

ScenarioType = Literal["isolated", "independent", "conflicting", "cascading", "sequential"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScheduleEntry(_Strict):
    id: str
    category: str
    day: int = Field(ge=1)
    time: str = Field(pattern=r"^\d\d:\d\d$")
    flag: str
    value: str
    description: str = ""
    drift_s: int | None = None


class ScheduleFile(_Strict):
    schema_version: Literal[1]
    timezone: str
    epoch_local: str
    utc_offset_hours: int
    scenario_types: dict[str, ScenarioType]
    themes: dict[str, str]
    events: list[ScheduleEntry]


SymptomKind = Literal["error", "fails", "hang", "slow", "missing", "any"]
SymptomType = Literal[
    "http_5xx",
    "http_4xx",
    "http_timeout",
    "slow_response",
    "visual_degradation",
    "partial_content",
    "stale_content",
]


class Complaint(_Strict):
    """One user complaint: its text, the frontend routes it is about (None: every route of its area)
    and the symptom kind it states; `quotes` names the flag whose own string or product it quotes."""

    text: str = Field(min_length=1)
    routes: tuple[str, ...] | None = None
    symptom: SymptomKind
    quotes: str | None = None


class AreaSpec(_Strict):
    """A user-facing feature area: the request types behind it, the frontend routes its pages call,
    and how users describe it (the medium complaints)."""

    request_types: list[str] = Field(min_length=1)
    routes: tuple[str, ...] = Field(min_length=1)
    medium: list[Complaint] = Field(min_length=1)


class FlagQuestions(_Strict):
    """Easy (specific) complaints per area a flag's symptoms reach; `hint` is the area a flag without
    user-visible symptoms gets complaints about (what a confused user would report)."""

    easy: dict[str, list[Complaint]] = Field(min_length=1)
    hint: str | None = None


class QuestionsFile(_Strict):
    schema_version: Literal[2]
    universal: str
    areas: dict[str, AreaSpec]
    flags: dict[str, FlagQuestions]


class FrontendIssue(_Strict):
    """One entry of a rubric's `symptoms.frontend` list (rubric.md): the route and symptom type."""

    route: str
    symptom_type: SymptomType
    deterministic: bool = True


class FrontendFile(_Strict):
    """Each flag's user-visible symptoms as its rubrics list them, and which symptom types a
    complaint's stated symptom kind could be confused with (the plausibility rule's data)."""

    schema_version: Literal[1]
    source: str
    routes: tuple[str, ...] = Field(min_length=1)
    symptom_kinds: dict[SymptomKind, tuple[SymptomType, ...]]
    flags: dict[str, tuple[FrontendIssue, ...]]


class TaskTargets(_Strict):
    """Published task counts the generator prunes to (PUBLISH.md): per difficulty, incident + control."""

    incident: dict[Literal["easy", "medium", "hard"], int]
    control: dict[Literal["easy", "medium", "hard"], int]


class PublishedRow(_Strict):
    model: str
    effort: str | None = None
    date: str | None = None
    rca_accuracy_medium: float
    rca_accuracy_medium_stderr: float
    rca_accuracy_hard: float
    rca_accuracy_hard_stderr: float
    hallucination_rate: float
    hallucination_rate_stderr: float
    total_tokens: int | None = None


class LeaderboardFile(_Strict):
    schema_version: Literal[1]
    source: str
    split: str
    tasks: int
    rows: list[PublishedRow]
    targets: TaskTargets


class AnswersFile(_Strict):
    """The answer policy: flags that are never root causes of a user complaint (no frontend symptom in
    their rubrics) and flags kept only when they are the sole answer."""

    schema_version: Literal[1]
    source: str
    no_frontend: tuple[str, ...]
    excluded_unless_sole: tuple[str, ...] = ()


def _load(name: str, model: type[BaseModel], root: str | Path | None = None) -> BaseModel:
    path = catalog_dir(root) / "orca" / name
    try:
        raw = load_yaml(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"{path}: {exc}") from exc
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise CatalogError(
            [f"{path}: {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
        ) from exc


@lru_cache(maxsize=4)
def load_schedule_file(root: str | None = None) -> ScheduleFile:
    return _load("schedule.yaml", ScheduleFile, root)  # type: ignore[return-value]


@lru_cache(maxsize=4)
def load_questions(root: str | None = None) -> QuestionsFile:
    return _load("questions.yaml", QuestionsFile, root)  # type: ignore[return-value]


@lru_cache(maxsize=4)
def load_leaderboard(root: str | None = None) -> LeaderboardFile:
    return _load("leaderboard.yaml", LeaderboardFile, root)  # type: ignore[return-value]


@lru_cache(maxsize=4)
def load_answers(root: str | None = None) -> AnswersFile:
    return _load("answers.yaml", AnswersFile, root)  # type: ignore[return-value]


@lru_cache(maxsize=4)
def load_frontend(root: str | None = None) -> FrontendFile:
    return _load("frontend.yaml", FrontendFile, root)  # type: ignore[return-value]
