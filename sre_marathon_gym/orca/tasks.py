"""The 1,079 ORCA-bench tasks, generated deterministically from the schedule and the question ladder.

Pipeline (tasks.md): questions per event (easy / medium / universal) -> task specs per question
(time-to-detection, report-time style, controls) -> ground truth (candidate events of the report
day up to detection, kept when the simulator shows them reaching a user-visible symptom of the
complaint's area) -> pruning to the published counts by a keyed hash of the task id. Every choice
is a hash of stable names; nothing depends on set or dict order or on Python's hash seed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ..errors import CatalogError, ConfigurationError
from . import DAY_S
from .data import AnswersFile, QuestionsFile, TaskTargets, load_answers, load_leaderboard, load_questions
from .flags import flag_mechanisms, flag_services
from .schedule import FlagEvent, OrcaSchedule, orca_schedule
from .task_model import Difficulty, GroundTruthCause, OrcaTask
from .time_text import clock_text, day_start, day_word, period_of, previous_period
from .visibility import flag_visibility

GENERATOR_KEY = "orca-bench-v1"
GRACE_S = 300  # telemetry still being ingested: the snapshot after detection + 5 min
SNAPSHOT_S = 300
GRANULARITY_TO_DIFFICULTY: dict[str, Difficulty] = {"easy": "easy", "hard": "medium", "universal": "hard"}


@dataclass(frozen=True)
class Question:
    qid: str
    event: FlagEvent
    granularity: Literal["easy", "hard", "universal"]
    text: str
    areas: tuple[str, ...]  # empty: every area (the universal question)


def _pick(key: str, n: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{GENERATOR_KEY}:{key}".encode()).digest()[:8], "big") % n


def slugify(qid: str) -> str:
    return qid.lower().replace("%", "")


def snapshot_after(t: int) -> int:
    return (t // SNAPSHOT_S + 1) * SNAPSHOT_S


# ---------------------------------------------------------------- questions
def questions(schedule: OrcaSchedule, qf: QuestionsFile) -> list[Question]:
    """Per event: one easy complaint, one medium complaint per area the flag's symptoms reach, the
    universal one (tasks.md: one question sampled per event and granularity, medium per area)."""
    out: list[Question] = []
    for e in schedule.events:
        spec = qf.flags[e.flag]
        areas = list(spec.easy)
        area = areas[_pick(f"{e.id}:easy:area", len(areas))]
        easy = spec.easy[area]
        out.append(Question(f"{e.id}-00-easy", e, "easy", easy[_pick(f"{e.id}:easy", len(easy))], (area,)))
        for i, area in enumerate(areas, start=1):
            med = qf.areas[area].medium
            out.append(
                Question(
                    f"{e.id}-{i:02d}-hard", e, "hard", med[_pick(f"{e.id}:hard:{area}", len(med))], (area,)
                )
            )
        out.append(Question(f"{e.id}-univ00-universal", e, "universal", qf.universal, ()))
    return out


# ---------------------------------------------------------------- ground truth
def plausible(
    schedule: OrcaSchedule,
    qf: QuestionsFile,
    q: Question,
    t0: int,
    t1: int,
    answers: AnswersFile | None = None,
) -> tuple[GroundTruthCause, ...]:
    """Candidate events overlapping [t0, t1) whose simulated effect reaches the complaint's area.

    Flags on the reference `no_frontend` list (catalog/orca/answers.yaml) never count, whatever the
    simulator shows: their rubrics have no user-visible symptom (tasks.md, generate_answers step 2).
    """
    answers = answers or load_answers()
    wanted = {rt for a in q.areas for rt in qf.areas[a].request_types}
    keep: list[FlagEvent] = []
    for c in schedule.overlapping(t0, t1):
        if c.flag in answers.no_frontend:
            continue
        vis = flag_visibility(c.flag, c.value)
        if not vis.user_visible:
            continue
        if wanted and not wanted & set(vis.request_types):
            continue
        keep.append(c)
    if any(c.flag not in answers.excluded_unless_sole for c in keep):
        keep = [c for c in keep if c.flag not in answers.excluded_unless_sole]
    keep.sort(key=lambda c: (c.id != q.event.id, c.on_s, c.id))  # the authored event first
    return tuple(
        GroundTruthCause(
            event_id=c.id,
            flag=c.flag,
            value=c.value,
            services=flag_services(c.flag),
            mechanisms=flag_mechanisms(c.flag),
            start_s=c.on_s,
            end_s=c.end_s,
        )
        for c in keep
    )


# ---------------------------------------------------------------- task specs
@dataclass(frozen=True)
class _Spec:
    section: str
    ttd: int
    offset: int | None
    suffix: str
    reported_s: int
    current_s: int
    styled: str
    correct: bool
    anchor_s: int


def _incident_specs(schedule: OrcaSchedule, q: Question) -> list[_Spec]:
    inc = q.event.on_s
    loc = schedule.local
    out: list[_Spec] = []
    for ttd in (15, 60, 480):  # exact: "at H:MM"
        off = 10
        if abs(off) >= ttd:
            continue
        rep, cur = inc + off * 60, inc + ttd * 60
        out.append(
            _Spec(
                "exact",
                ttd,
                off,
                f"_ttd{ttd}m_at_off+{off}m",
                rep,
                cur,
                f"at {clock_text(loc(rep))} {day_word(loc(rep), loc(cur))} ET",
                True,
                rep,
            )
        )
    for ttd, offs in ((60, (10,)), (480, (10, 60))):  # exact range: reported +- 30 min
        for off in offs:
            w = 30
            if off + w > ttd:
                continue
            rep, cur = inc + off * 60, inc + ttd * 60
            text = (
                f"between {clock_text(loc(rep - w * 60))} and {clock_text(loc(rep + w * 60))} "
                f"{day_word(loc(rep), loc(cur))} ET"
            )
            out.append(
                _Spec(
                    "exact_range",
                    ttd,
                    off,
                    f"_ttd{ttd}m_range{w}m_off+{off}m",
                    rep,
                    cur,
                    text,
                    abs(off) <= w,
                    rep,
                )
            )
    cur = inc + 480 * 60
    for kind, (name, start, _end) in (
        ("same-period", period_of(inc)),
        ("previous-period", previous_period(inc)),
    ):
        if start > cur:
            continue
        out.append(
            _Spec(
                "broad_range_time_of_day",
                480,
                None,
                f"_ttd480m_period_{kind}",
                start,
                cur,
                f"sometime in the {name} {day_word(loc(start), loc(cur))}",
                kind == "same-period",
                start,
            )
        )
    if q.granularity != "universal":
        cur = inc + 1440 * 60
        start = day_start(inc)
        out.append(
            _Spec(
                "broad_range_day",
                1440,
                None,
                "_ttd1440m_day_same-day",
                start,
                cur,
                f"sometime {day_word(loc(start), loc(cur))}",
                True,
                start,
            )
        )
    return out


def _control_specs(schedule: OrcaSchedule, q: Question) -> list[_Spec]:
    e = q.event
    out: list[_Spec] = []
    pre = min(e.on_s - 3600, day_start(e.on_s) + 9 * 3600)
    post = max(e.end_s + 3600, day_start(e.on_s) + 22 * 3600) if e.ended_by_off else None
    for kind, cur in (("pre", pre), ("post", post)):
        if cur is None or cur < 0 or cur >= schedule.run_s or schedule.active_at(cur):
            continue
        snap = snapshot_after(cur + GRACE_S)
        if (kind == "pre" and snap >= e.on_s) or (kind == "post" and snap <= e.end_s):
            continue
        out.append(
            _Spec(
                "control",
                0,
                (cur - e.on_s) // 60,
                f"_control_{kind}60m_at",
                cur,
                cur,
                f"at {clock_text(schedule.local(cur))} today ET",
                False,
                cur,
            )
        )
    return out


def _task(schedule: OrcaSchedule, q: Question, s: _Spec, gt: tuple[GroundTruthCause, ...]) -> OrcaTask:
    qs = qe = None
    if s.section == "control":
        qs, qe = schedule.quiet_window(s.current_s)
    return OrcaTask(
        task_id=slugify(q.qid) + s.suffix,
        qid=q.qid,
        event_id=q.event.id,
        scenario=q.event.scenario,
        scenario_type=q.event.scenario_type,
        granularity=q.granularity,
        difficulty=GRANULARITY_TO_DIFFICULTY[q.granularity],
        question=q.text,
        areas=q.areas,
        section=s.section,
        ttd_min=s.ttd,
        offset_min=s.offset,  # type: ignore[arg-type]
        reported_styled=s.styled,
        reported_correctly_specified=s.correct,
        incident_s=q.event.on_s,
        reported_s=s.reported_s,
        current_s=s.current_s,
        horizon_s=min(snapshot_after(s.current_s + GRACE_S), schedule.run_s),
        quiet_window_start_s=qs,
        quiet_window_end_s=qe,
        ground_truth=gt,
    )


def check_answers(answers: AnswersFile, qf: QuestionsFile) -> None:
    """Every flag the answer policy names is a flag the questions know (a typo would silently count)."""
    for name in (*answers.no_frontend, *answers.excluded_unless_sole):
        if name not in qf.flags:
            raise CatalogError(
                f"catalog/orca/answers.yaml: unknown flag {name!r} (known: {', '.join(sorted(qf.flags))})"
            )


def candidate_tasks(
    schedule: OrcaSchedule, qf: QuestionsFile, answers: AnswersFile | None = None
) -> list[OrcaTask]:
    """Every task the rules allow, before pruning (incident tasks with no plausible cause dropped)."""
    answers = answers or load_answers()
    check_answers(answers, qf)
    out: list[OrcaTask] = []
    for q in questions(schedule, qf):
        for s in _incident_specs(schedule, q):
            t0 = day_start(s.anchor_s)
            gt = plausible(schedule, qf, q, t0, min(s.current_s, t0 + DAY_S), answers)
            if gt and s.current_s <= schedule.run_s:
                out.append(_task(schedule, q, s, gt))
        for s in _control_specs(schedule, q):
            out.append(_task(schedule, q, s, ()))
    return out


def prune(tasks: list[OrcaTask], targets: TaskTargets) -> list[OrcaTask]:
    """Keep the published count per (difficulty, control) cell: the lowest keyed hashes of task ids."""
    out: list[OrcaTask] = []
    for control, wanted in ((False, targets.incident), (True, targets.control)):
        for diff in ("easy", "medium", "hard"):
            cell = [t for t in tasks if t.is_control == control and t.difficulty == diff]
            n = wanted[diff]  # type: ignore[index]
            if len(cell) < n:
                raise ConfigurationError(
                    f"ORCA task pool has {len(cell)} {diff} {'control' if control else 'incident'} "
                    f"tasks, fewer than the {n} the targets ask for"
                )
            cell.sort(
                key=lambda t: (
                    hashlib.sha256(f"{GENERATOR_KEY}:keep:{t.task_id}".encode()).hexdigest(),
                    t.task_id,
                )
            )
            out += cell[:n]
    return sorted(out, key=lambda t: t.task_id)


def generate_tasks(days: int = 6) -> list[OrcaTask]:
    schedule = orca_schedule(days)
    pool = candidate_tasks(schedule, load_questions())
    ids = [t.task_id for t in pool]
    if len(ids) != len(set(ids)):
        raise ConfigurationError("ORCA task ids are not unique")
    return prune(pool, load_leaderboard().targets) if days == 6 else sorted(pool, key=lambda t: t.task_id)


def orca_tasks(days: int = 6) -> tuple[OrcaTask, ...]:
    """The task list (cached per process)."""
    return _tasks(int(days))


@lru_cache(maxsize=2)
def _tasks(days: int) -> tuple[OrcaTask, ...]:
    return tuple(generate_tasks(days))


def task_key(task: OrcaTask) -> str:
    """The task's public name: task ids spell the authored flag, so agents see a hash (ORCA's package
    names)."""
    return hashlib.sha256(task.task_id.encode()).hexdigest()[:16]


def tasks_digest(tasks: list[OrcaTask] | tuple[OrcaTask, ...]) -> str:
    """sha256 of the canonical JSON of every task: any change to ids or contents changes it."""
    blob = json.dumps([t.model_dump(mode="json") for t in tasks], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()
