"""Scoring: Marathon-Score, stage credits, risk, degradation and timing over a recorded run.

Pure functions over `RunRecord` (no simulator, no gymnasium), so a sealed bundle is rescored
offline exactly as the live run was scored.

May import: `core`, `catalog`, and ORCA's data models (`orca.report`, `orca.task_model`);
never the simulator, backends, tools, envs, agents, wrappers, bundles or the command line, even
indirectly (tested).
"""

from __future__ import annotations

from ..core.run_record import (
    RUN_SCHEMA_VERSION,
    ActionRecord,
    AlertRecord,
    Degradation,
    FaultTruth,
    IncidentEvent,
    ProbeSeries,
    ProbeSpec,
    RunManifest,
    RunRecord,
    Usage,
)
from .marathon import (
    OUTCOMES,
    REPAIR_ATTRIBUTION_S,
    FaultScore,
    MarathonReward,
    ScoreCard,
    attributable,
    degraded_fraction,
    evidence_matching,
    fault_scores,
    forbidden_attempts,
    intervention_risk,
    median_time,
    round_up,
    score_run,
    score_until,
    stage_progress,
)

__all__ = [
    "OUTCOMES",
    "REPAIR_ATTRIBUTION_S",
    "RUN_SCHEMA_VERSION",
    "ActionRecord",
    "AlertRecord",
    "Degradation",
    "FaultScore",
    "FaultTruth",
    "IncidentEvent",
    "MarathonReward",
    "ProbeSeries",
    "ProbeSpec",
    "RunManifest",
    "RunRecord",
    "ScoreCard",
    "Usage",
    "attributable",
    "degraded_fraction",
    "evidence_matching",
    "fault_scores",
    "forbidden_attempts",
    "intervention_risk",
    "median_time",
    "round_up",
    "score_run",
    "score_until",
    "stage_progress",
]
