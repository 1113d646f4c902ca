"""ORCA-bench's judge made deterministic, and its aggregation (rubric.md sections 2-5).

Each rubric (one plausible root cause) is scored 0-3 on its own, from what the report ties to it:
- a root cause is a claim about this cause when it names its flag, or, naming no flag, one of its
  culprit services that no other plausible cause of the task shares; timeline entries naming such a
  service add dates only to a report that makes such a claim; evidence counts for this cause only
  when cited under such a claim (in that root cause, or in the Why steps of a report that makes one);
- 1 confirms this cause's own symptom: a claim about it dated inside its active window (10 min
  tolerance, up to the current time), or evidence showing the complaint's request types changing
  at this cause's own flip. A time that falls only in another cause's window, or a claim about
  another cause, earns nothing here;
- 2 makes progress specific to this cause: cited evidence showing one of its rubric's own signals
  (`orca.evidence.rubric_signals`: its metric families with their defining labels, its own log
  strings, its trace's failing span with its own error text);
- 3 names the flag with one of its mechanisms and a start within 10 min, and cites evidence showing
  its own signal;
- then the reference's fabrication penalty: if the report makes any materially wrong claim (a flag
  no plausible cause has, a service no plausible cause touches, or a plausible flag or service dated
  to a time its causes were not active), every rubric loses ONE point, max(N - 1, 0), however many
  wrong claims there are.
Controls: an empty report passes; a report placing impact strictly inside the quiet window (shrunk
by 10 min) fails, where a root cause without an end is ongoing until the current time and a report
with no time at all claims an incident now.

Departures from the reference, and why:
- The LLM's free-text questions are decided from structured fields: the mechanism is one word of
  a fixed vocabulary (`orca.flags.Mechanism`), evidence is metric queries / log ids / trace ids that
  are re-checked against the recorded telemetry instead of quoted text, and the "aligned Why-step"
  condition is approximated by the claim the evidence is cited under (see the next items).
- Level 2 needs this cause's own signal in cited evidence, as the rubric defines 2 ("identifies
  some of this rubric's GT metrics, logs or traces"); naming the flag, even at its start, is not
  enough: the flip time is readable from the task text (the current time minus the TTD its
  report-time wording implies), so flag plus start is a free guess from a prior, where the LLM
  judge reads the reasoning around it.
- Evidence and symptoms count only under a claim about the cause, and level 1 needs such a claim
  (the reference credits a report that only confirms the complaint): cited with no claim, a list
  of every request type's or every flag's series would confirm every rubric at once.
- Culprit services shared by several plausible causes (the three ad flags) identify none of them;
  only a named flag, or a time, can then tie a claim to one cause.
- imageSlowLoad's rubric has no metric, log or trace cluster (the reference credits flag, time and
  mechanism alone); level 3 here also needs evidence, flagd's impression counter of its flipped
  variant (the one signal the demo has, since the load generator fetches no image), because the
  mechanism word is guessable. Other flags' impressions (their rubrics' "meta" family) show only
  that the flag flipped, so they do not count as its signal.
- Signals the simulator does not emit (jvm_*, network bytes) are not required; each flag's
  remaining families stand for its rubric (see `RUBRIC_SIGNAL_SPECS`).
- A dated claim about a plausible flag or service at a time none of its causes was active counts as
  materially wrong: it places that failure when it was not happening (the LLM judge sees only the
  plausible events, so it would at most miss the time; here a free start time would otherwise let
  a report date one flag anywhere at no cost).
- Metric evidence counts only if the agent's own queries returned it across the cause's flip
  (`orca.observed`; the caller's `shows` checks it): each flag's rubric signals are public, so a
  report could otherwise cite them without looking (a no-tool prior plus its flags' signals reached
  34 % depth). The LLM judge cannot check this; it reads whether the report's reasoning used them.
- Metric evidence must select only the rubric's defining series (e.g. the failing span, not every
  span of the service), as `defining_labels` in the rubric; the LLM judge may accept a wider query.
- A shotgun report (at least `SHOTGUN_MIN_WRONG` wrong claims, more than the plausible flags it
  names; each wrong date of a flag is its own claim) scores 0 on every rubric: with the single -1
  alone, naming every flag (or every flag with its signals) keeps a third of the depth, where the
  LLM judge reads such a list as guessing, not identifying.
- Sound accuracy and hallucination also count the wrong claims (the published definitions, kept
  as `*_published`, are won by naming every flag).

Pure functions: evidence is judged by the `shows(ref, cause)` callable the caller builds from the
recorded telemetry (`orca.evidence.EvidenceChecker`), and this cause's symptom by
`confirms(ref, cause)`.
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
SHOTGUN_MIN_WRONG = 3
Shows = Callable[[EvidenceRef, GroundTruthCause], bool]
# evidence shows the complaint's request types failing or slow at this cause's own flip
Confirms = Callable[[EvidenceRef, GroundTruthCause], bool]


@dataclass(frozen=True)
class RubricScore:
    event_id: str
    flag: str
    score: int
    flag_match: bool
    mechanism_match: bool
    time_match: bool  # an incident start tied to this cause within 10 min of its flip
    evidence_match: bool  # cited evidence shows this cause's own signal
    service_match: bool  # a claim names this cause's own (unshared) culprit service
    symptom_match: bool = False  # level 1: this cause's own symptom confirmed


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


def _window(cause: GroundTruthCause, current_s: float) -> tuple[float, float]:
    """When the cause was active, with the 10 min tolerance, up to the current time."""
    return cause.start_s - TIME_TOLERANCE_S, min(cause.end_s, current_s) + TIME_TOLERANCE_S


def _own_services(task: OrcaTask, cause: GroundTruthCause) -> set[str]:
    """The cause's culprit services no other plausible cause (of another flag) shares."""
    others = {_norm(s) for c in task.ground_truth if c.flag != cause.flag for s in c.services}
    return {_norm(s) for s in cause.services} - others


def wrong_claims(task: OrcaTask, report: RcaReport) -> tuple[str, ...]:
    """Materially wrong root causes: a flag no plausible cause has, a service no plausible cause
    touches, or a plausible flag (service) dated to a time none of its causes was active."""
    out: list[str] = []
    seen: set[tuple[str, str]] = set()
    for rc in report.root_causes:
        kind, name = ("flag", _norm(rc.flag)) if rc.flag else ("service", _norm(rc.service))
        causes = [
            c
            for c in task.ground_truth
            if (_norm(c.flag) == name if kind == "flag" else name in {_norm(s) for s in c.services})
        ]
        if not causes:
            label = f"{kind} {rc.flag if rc.flag else rc.service}"
        elif not any(
            lo <= rc.incident_start_s <= hi for lo, hi in (_window(c, task.current_s) for c in causes)
        ):
            label = f"{kind} {rc.flag if rc.flag else rc.service} at t={rc.incident_start_s:.0f}s"
        else:
            continue
        # one claim however often it is repeated (case and spaces ignored); each wrong date is its own
        key = (kind, name) if " at t=" not in label else (kind, f"{name}@{rc.incident_start_s:.0f}")
        if key not in seen:
            seen.add(key)
            out.append(label)
    return tuple(out)


def _right_claims(task: OrcaTask, report: RcaReport) -> int:
    """Distinct plausible flags the report names (services identify no cause: padding a shotgun with
    plausible services must not make it look like a diagnosis)."""
    plausible = {_norm(c.flag) for c in task.ground_truth}
    return len({_norm(rc.flag) for rc in report.root_causes if rc.flag} & plausible)


def _about(task: OrcaTask, cause: GroundTruthCause, rc: RootCause) -> bool:
    """Whether a root cause is a claim about this cause: its flag, or, for a claim naming no flag, its
    own culprit service (a claim naming another flag is about that flag, whatever service it adds)."""
    if rc.flag:
        return _norm(rc.flag) == _norm(cause.flag)
    return _norm(rc.service) in _own_services(task, cause)


def _cited_for(task: OrcaTask, cause: GroundTruthCause, report: RcaReport) -> list[EvidenceRef]:
    """Evidence cited under a claim about this cause: in such a root cause, or in the Why steps of a
    report that makes one (a report citing every series under no claim identifies nothing)."""
    about = [rc for rc in report.root_causes if _about(task, cause, rc)]
    if not about:
        return []
    return [ev for rc in about for ev in rc.evidence] + [ev for w in report.five_whys for ev in w.evidence]


def _dated_claims(task: OrcaTask, cause: GroundTruthCause, report: RcaReport) -> list[float]:
    """Times the report gives for claims about this cause: root-cause starts, and timeline entries that
    name one of its own services when a root cause claims it (a timeline alone claims nothing: entries
    every 20 min naming every service would otherwise date every cause at no cost)."""
    times = [rc.incident_start_s for rc in report.root_causes if _about(task, cause, rc)]
    if times:
        own = _own_services(task, cause)
        times += [e.time_s for e in report.timeline if own & {_norm(s) for s in e.services}]
    return times


def score_rubric(
    task: OrcaTask,
    cause: GroundTruthCause,
    report: RcaReport,
    shows: Shows,
    confirms: Confirms | None,
    penalty: int,
) -> RubricScore:
    named = [rc for rc in report.root_causes if _norm(rc.flag) == _norm(cause.flag)]
    why_ev = [ev for w in report.five_whys for ev in w.evidence]
    cited = _cited_for(task, cause, report)
    ev_shows = {id(ev): shows(ev, cause) for ev in cited}

    def on_time(rc: RootCause) -> bool:
        return abs(rc.incident_start_s - cause.start_s) <= TIME_TOLERANCE_S

    def full(rc: RootCause) -> bool:
        return (
            rc.mechanism in cause.mechanisms
            and on_time(rc)
            and any(ev_shows.get(id(ev), False) for ev in [*rc.evidence, *why_ev])
        )

    flag_match = bool(named)
    mechanism = any(rc.mechanism in cause.mechanisms for rc in named)
    time_match = any(on_time(rc) for rc in report.root_causes if _about(task, cause, rc))
    evidence = any(ev_shows.values())
    own = _own_services(task, cause)
    service = any(_norm(rc.service) in own for rc in report.root_causes)
    lo, hi = _window(cause, task.current_s)
    symptom = any(lo <= t <= hi for t in _dated_claims(task, cause, report)) or (
        confirms is not None and any(confirms(ev, cause) for ev in cited)
    )
    if any(full(rc) for rc in named):
        score = 3
    elif evidence:
        score = 2
    elif symptom:
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
        symptom,
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
    shotgun = len(wrong) >= SHOTGUN_MIN_WRONG and len(wrong) > _right_claims(task, report)
    penalty = 3 if shotgun else int(bool(wrong))  # the reference's single -1 (a shotgun loses all)
    rubrics = tuple(score_rubric(task, c, report, shows, confirms, penalty) for c in task.ground_truth)
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
