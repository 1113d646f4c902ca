"""ORCA-bench's judge made deterministic, and its aggregation (rubric.md sections 2-5).

Per ground-truth root cause (rubric) a 0-3 score: 1 confirms the reported symptoms (a time while a
plausible cause was active, or evidence showing the complaint's request types failing or slow -- a
non-empty report alone confirms nothing), 2 makes correct
progress beyond them (names the right flag or service, or cites evidence that really shows this
root cause's signal), 3 names the flag with the right mechanism, an incident start within 10 min
and supporting evidence that really shows the signal. Each materially wrong claim (a named root
cause that was not active and plausible) lowers every rubric by 1. Controls: an empty report
passes; a report placing impact strictly inside the quiet window (shrunk by 10 min) fails, where a
root cause without an end is ongoing until the current time and a report with no time at all
claims an incident now.

Pure functions: evidence is judged by the `shows(ref, cause)` callable the caller builds from the
recorded telemetry (`orca.evidence.EvidenceChecker`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..orca.report import EvidenceRef, RcaReport, RootCause
from ..orca.task_model import GroundTruthCause, OrcaTask

TIME_TOLERANCE_S = 600
CONTROL_MARGIN_S = 600
Shows = Callable[[EvidenceRef, GroundTruthCause], bool]
Confirms = Callable[[EvidenceRef], bool]  # evidence shows the complaint's request types failing or slow


@dataclass(frozen=True)
class RubricScore:
    event_id: str
    flag: str
    score: int
    flag_match: bool
    mechanism_match: bool
    time_match: bool
    evidence_match: bool
    service_match: bool


@dataclass(frozen=True)
class TaskScore:
    task_id: str
    difficulty: str
    ttd_min: int
    scenario_type: str
    is_control: bool
    mode: str  # empty_report | judge | control_empty | control_judge
    reward: float  # rca_depth / 3 on incidents; 1 / 0 on controls
    rca_depth: float | None  # mean rubric score (0-3); None on controls
    rca_accuracy: int  # sound: every plausible flag named AND no materially wrong claim (0 on controls)
    hallucinate: int | None  # sound: a report naming no plausible flag OR any wrong claim; None on controls
    control_pass: bool | None
    wrong_claims: tuple[str, ...] = ()
    rubrics: tuple[RubricScore, ...] = field(default_factory=tuple)
    rca_accuracy_published: int = 0  # ORCA-bench's definition: every plausible flag named (naming all wins)
    hallucinate_published: int | None = None  # ORCA-bench's: a non-empty report naming no plausible flag


def _norm(x: str | None) -> str:
    return (x or "").strip().lower()


def wrong_claims(task: OrcaTask, report: RcaReport) -> tuple[str, ...]:
    """Named root causes that were not active and plausible (flags), or services no plausible cause
    touches."""
    flags = {_norm(c.flag) for c in task.ground_truth}
    services = {_norm(s) for c in task.ground_truth for s in c.services}
    out: list[str] = []
    seen: set[tuple[str, str]] = set()
    for rc in report.root_causes:  # one claim however often it is repeated (case and spaces ignored)
        key = ("flag", _norm(rc.flag)) if rc.flag else ("service", _norm(rc.service))
        if key in seen:
            continue
        seen.add(key)
        if rc.flag:
            if _norm(rc.flag) not in flags:
                out.append(f"flag {rc.flag}")
        elif _norm(rc.service) not in services:
            out.append(f"service {rc.service}")
    return tuple(out)


def confirms_symptoms(task: OrcaTask, report: RcaReport, confirms: Confirms | None = None) -> bool:
    """Level 1: the report places impact while a plausible cause was active (10 min tolerance, up to
    the current time), or cites evidence that shows the complaint's request types failing or slow."""
    for a, b in report.impact_periods(task.current_s, implicit_now=False):  # times the report really gives
        for c in task.ground_truth:
            lo, hi = c.start_s - TIME_TOLERANCE_S, min(c.end_s, task.current_s) + TIME_TOLERANCE_S
            if a <= hi and b >= lo:
                return True
    return confirms is not None and any(confirms(ev) for ev in report.all_evidence())


def score_rubric(
    cause: GroundTruthCause, report: RcaReport, shows: Shows, penalty: int, confirmed: bool = False
) -> RubricScore:
    named = [rc for rc in report.root_causes if _norm(rc.flag) == _norm(cause.flag)]
    why_ev = [ev for w in report.five_whys for ev in w.evidence]

    def full(rc: RootCause) -> bool:
        return (
            rc.mechanism in cause.mechanisms
            and abs(rc.incident_start_s - cause.start_s) <= TIME_TOLERANCE_S
            and any(shows(ev, cause) for ev in [*rc.evidence, *why_ev])
        )

    flag_match = bool(named)
    mechanism = any(rc.mechanism in cause.mechanisms for rc in named)
    time_match = any(
        abs(rc.incident_start_s - cause.start_s) <= TIME_TOLERANCE_S for rc in (named or report.root_causes)
    )
    evidence = any(shows(ev, cause) for ev in report.all_evidence())
    service = flag_match or any(
        _norm(rc.service) in {_norm(s) for s in cause.services} for rc in report.root_causes
    )
    if any(full(rc) for rc in named):
        score = 3
    elif flag_match or service or evidence:
        score = 2
    elif confirmed:
        score = 1
    else:
        score = 0
    return RubricScore(
        cause.event_id,
        cause.flag,
        max(score - penalty, 0),
        flag_match,
        mechanism,
        time_match,
        evidence,
        service,
    )


def control_false_positive(task: OrcaTask, report: RcaReport) -> bool:
    """Whether the report places incident impact strictly inside the margin-shrunk quiet window: a
    point inside it, or a period overlapping it (an incident still ongoing at the current time)."""
    lo = -math.inf if task.quiet_window_start_s is None else task.quiet_window_start_s + CONTROL_MARGIN_S
    hi = math.inf if task.quiet_window_end_s is None else task.quiet_window_end_s - CONTROL_MARGIN_S
    return any(a < hi and b > lo for a, b in report.impact_periods(task.current_s))


def judge(task: OrcaTask, report: RcaReport, shows: Shows, confirms: Confirms | None = None) -> TaskScore:
    base = dict(
        task_id=task.task_id,
        difficulty=task.difficulty,
        ttd_min=task.ttd_min,
        scenario_type=task.scenario_type,
        is_control=task.is_control,
    )
    if task.is_control:
        if report.is_empty:
            return TaskScore(
                **base,
                mode="control_empty",
                reward=1.0,
                rca_depth=None,
                rca_accuracy=0,
                hallucinate=None,
                control_pass=True,
            )
        fp = control_false_positive(task, report)
        return TaskScore(
            **base,
            mode="control_judge",
            reward=0.0 if fp else 1.0,
            rca_depth=None,
            rca_accuracy=0,
            hallucinate=None,
            control_pass=not fp,
        )
    if report.is_empty:
        rubrics = tuple(
            RubricScore(c.event_id, c.flag, 0, False, False, False, False, False) for c in task.ground_truth
        )
        return TaskScore(
            **base,
            mode="empty_report",
            reward=0.0,
            rca_depth=0.0,
            rca_accuracy=0,
            hallucinate=0,
            control_pass=None,
            rubrics=rubrics,
            hallucinate_published=0,
        )
    wrong = wrong_claims(task, report)
    penalty = len(wrong)  # minus 1 on every rubric for each materially wrong claim
    confirmed = confirms_symptoms(task, report, confirms)
    rubrics = tuple(score_rubric(c, report, shows, penalty, confirmed) for c in task.ground_truth)
    depth = float(np.mean([r.score for r in rubrics]))
    all_named, none_named = all(r.flag_match for r in rubrics), not any(r.flag_match for r in rubrics)
    return TaskScore(
        **base,
        mode="judge",
        reward=depth / 3.0,
        rca_depth=depth,
        rca_accuracy=int(all_named and not wrong),
        hallucinate=int(none_named or bool(wrong)),
        control_pass=None,
        wrong_claims=wrong,
        rubrics=rubrics,
        rca_accuracy_published=int(all_named),
        hallucinate_published=int(none_named),
    )


# ------------------------------------------------------------------ aggregation
@dataclass(frozen=True)
class Stat:
    mean: float  # percent
    stderr: float
    n: int

    def __str__(self) -> str:
        return f"{self.mean:.2f} ± {self.stderr:.2f}" if self.n else "n/a"


def mean_stderr(values: Sequence[float]) -> Stat:
    """Percent mean and standard error with one trial per task (leaderboard `compute_metrics`)."""
    x = np.asarray([float(v) for v in values], dtype=float)
    if len(x) == 0:
        return Stat(float("nan"), float("nan"), 0)
    var = float(np.var(x, ddof=1)) if len(x) > 1 else 0.0
    return Stat(round(100.0 * float(x.mean()), 2), round(100.0 * math.sqrt(var / len(x)), 2), len(x))


def metrics(scores: Iterable[TaskScore]) -> dict[str, Stat]:
    """RCA accuracy, RCA depth (% of 3) and hallucination over incident tasks (sound definitions, and
    ORCA-bench's published ones under `*_published`); control pass rate."""
    scores = list(scores)
    inc = [s for s in scores if not s.is_control]
    ctl = [s for s in scores if s.is_control]
    return {
        "rca_accuracy": mean_stderr([s.rca_accuracy for s in inc]),
        "rca_depth": mean_stderr([(s.rca_depth or 0.0) / 3.0 for s in inc]),
        "hallucination": mean_stderr([s.hallucinate or 0 for s in inc]),
        "rca_accuracy_published": mean_stderr([s.rca_accuracy_published for s in inc]),
        "hallucination_published": mean_stderr([s.hallucinate_published or 0 for s in inc]),
        "control_pass": mean_stderr([1.0 if s.control_pass else 0.0 for s in ctl]),
        "reward": mean_stderr([s.reward for s in scores]),
    }


def published_metrics(scores: Iterable[TaskScore], sound: bool = False) -> dict[str, Stat]:
    """The three leaderboard columns: RCA accuracy on medium and hard incidents, hallucination on all
    incidents, by ORCA-bench's published definitions (a report naming every flag wins them), or with
    `sound` by this project's (every plausible flag named and no materially wrong claim)."""
    inc = [s for s in scores if not s.is_control]

    def acc(s: TaskScore) -> int:
        return s.rca_accuracy if sound else s.rca_accuracy_published

    def hal(s: TaskScore) -> int:
        return (s.hallucinate if sound else s.hallucinate_published) or 0

    return {
        "rca_accuracy_incident_medium": mean_stderr([acc(s) for s in inc if s.difficulty == "medium"]),
        "rca_accuracy_incident_hard": mean_stderr([acc(s) for s in inc if s.difficulty == "hard"]),
        "hallucinate_any_incident": mean_stderr([hal(s) for s in inc]),
    }


def breakdown(scores: Iterable[TaskScore], by: str) -> dict[str, dict[str, Stat]]:
    """`metrics` per value of `by` (difficulty, ttd_min or scenario_type), in a stable order."""
    scores = list(scores)
    keys = sorted(
        {str(getattr(s, by)) for s in scores}, key=lambda k: (len(k), k) if by == "ttd_min" else (0, k)
    )
    return {k: metrics([s for s in scores if str(getattr(s, by)) == k]) for k in keys}
