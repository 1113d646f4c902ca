"""The 1,079 ORCA-bench tasks, generated deterministically from the schedule and the question ladder.

Pipeline (tasks.md): questions per event (easy / medium / universal) -> task specs per question
(time-to-detection, report-time style, controls) -> ground truth (candidate events of the report
day up to detection, kept when plausible for the complaint) -> pruning to the published counts by a
keyed hash of the task id. Every choice is a hash of stable names; nothing depends on set or dict
order or on Python's hash seed.

Plausibility (the reference asks an LLM "could these symptoms reasonably be confused with the
reported issue?"; this is the deterministic rule that stands in for it, its data in
catalog/orca/frontend.yaml and questions.yaml). A candidate event of flag F is plausible for a
complaint C when F is not on the `no_frontend` list (answers.yaml) and either
  (a) C quotes a string or product tied to F (`quotes: F`), or
  (b) some entry (route, symptom_type) of F's rubric frontend list has route in C's routes and
      symptom_type in the types C's stated symptom kind accepts (frontend.yaml symptom_kinds).
C's routes are the complaint's own (an easy complaint names the page element, e.g. the ad banner ->
GET /api/data), else every route its area's pages call; the universal complaint has every route and
symptom kind `any`. Then imageSlowLoad is dropped when any other answer remains (the reference's
EXCLUDED_FEATURE_FLAGS). Neither the complaint's area alone nor the simulator's request-type effects
decide: a quoted string makes its flag plausible, and others only through route + symptom.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ..core.errors import CatalogError, ConfigurationError
from . import DAY_S
from .data import (
    AnswersFile,
    Complaint,
    FrontendFile,
    QuestionsFile,
    TaskTargets,
    load_answers,
    load_frontend,
    load_leaderboard,
    load_questions,
)
from .flags import flag_mechanisms, flag_services
from .fresh import draw_schedule
from .schedule import FlagEvent, OrcaSchedule, orca_schedule
from .task_model import Difficulty, GroundTruthCause, OrcaTask
from .time_text import clock_text, day_start, day_word, period_of, previous_period
from .world_spec import PUBLISHED, WorldSpec

GENERATOR_KEY = "orca-bench-v1"
GRACE_S = 300  # telemetry still being ingested: the snapshot after detection + 5 min
SNAPSHOT_S = 300
GRANULARITY_TO_DIFFICULTY: dict[str, Difficulty] = {"easy": "easy", "hard": "medium", "universal": "hard"}


@dataclass(frozen=True)
class Question:
    qid: str
    event: FlagEvent
    granularity: Literal["easy", "hard", "universal"]
    complaint: Complaint
    areas: tuple[str, ...]  # empty: every area (the universal question)

    @property
    def text(self) -> str:
        return self.complaint.text


def _pick(key: str, n: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{GENERATOR_KEY}:{key}".encode()).digest()[:8], "big") % n


def slugify(qid: str) -> str:
    return qid.lower().replace("%", "")


def snapshot_after(t: int) -> int:
    return (t // SNAPSHOT_S + 1) * SNAPSHOT_S


# ---------------------------------------------------------------- questions
def complaint_routes(qf: QuestionsFile, c: Complaint, areas: tuple[str, ...]) -> tuple[str, ...] | None:
    """The routes a complaint is about: its own, else its areas' pages (None: every route)."""
    if c.routes is not None:
        return c.routes
    if not areas:
        return None
    return tuple(r for a in areas for r in qf.areas[a].routes)


def matches(fe: FrontendFile, flag: str, c: Complaint, routes: tuple[str, ...] | None) -> bool:
    """Rule (b): some frontend entry of the flag's rubrics has a route of the complaint and a symptom
    type its stated symptom kind accepts."""
    kinds = fe.symptom_kinds[c.symptom]
    return any(
        (routes is None or i.route in routes) and i.symptom_type in kinds for i in fe.flags.get(flag, ())
    )


def questions(schedule: OrcaSchedule, qf: QuestionsFile, fe: FrontendFile | None = None) -> list[Question]:
    """Per event: one easy complaint, one medium complaint per area the flag's symptoms reach, the
    universal one (tasks.md: one question sampled per event and granularity, medium per area). The
    medium complaint is drawn among the area's complaints the event's flag could cause (the
    reference wrote them from the event's rubric); a flag with no frontend symptom draws from all.
    Later events of a flag take the next alternate (the reference's prompt shows the questions
    already generated for the flag and asks to vary the phrasing)."""
    fe = fe or load_frontend()
    universal = Complaint(text=qf.universal, symptom="any")
    seen: dict[str, int] = {}  # how often each (flag, tier, area) was asked before: vary the phrasing

    def draw(key: str, options: list[Complaint]) -> Complaint:
        n = seen.get(key, 0)
        seen[key] = n + 1
        return options[(_pick(key, len(options)) + n) % len(options)]

    out: list[Question] = []
    for e in schedule.events:
        spec = qf.flags[e.flag]
        areas = list(spec.easy)
        area = areas[_pick(f"{e.id}:easy:area", len(areas))]
        out.append(
            Question(f"{e.id}-00-easy", e, "easy", draw(f"{e.flag}:easy:{area}", spec.easy[area]), (area,))
        )
        for i, area in enumerate(areas, start=1):
            med = [
                c for c in qf.areas[area].medium if matches(fe, e.flag, c, complaint_routes(qf, c, (area,)))
            ]
            med = med or qf.areas[area].medium
            out.append(
                Question(f"{e.id}-{i:02d}-hard", e, "hard", draw(f"{e.flag}:hard:{area}", med), (area,))
            )
        out.append(Question(f"{e.id}-univ00-universal", e, "universal", universal, ()))
    return out


# ---------------------------------------------------------------- ground truth
def plausible(
    schedule: OrcaSchedule,
    qf: QuestionsFile,
    q: Question,
    t0: int,
    t1: int,
    answers: AnswersFile | None = None,
    fe: FrontendFile | None = None,
) -> tuple[GroundTruthCause, ...]:
    """Candidate events overlapping [t0, t1) that are plausible for the complaint (the rule in the
    module docstring). Flags on the reference `no_frontend` list never count, whatever the complaint
    quotes: their rubrics have no user-visible symptom (tasks.md, generate_answers step 2)."""
    answers = answers or load_answers()
    fe = fe or load_frontend()
    routes = complaint_routes(qf, q.complaint, q.areas)
    keep = [
        c
        for c in schedule.overlapping(t0, t1)
        if c.flag not in answers.no_frontend
        and (q.complaint.quotes == c.flag or matches(fe, c.flag, q.complaint, routes))
    ]
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


def check_answers(answers: AnswersFile, qf: QuestionsFile, fe: FrontendFile | None = None) -> None:
    """The three ORCA catalog files agree (a typo would silently change ground truth): every flag the
    answer policy or a complaint names is known; the frontend table lists exactly the questions' flags,
    empty for the no-frontend ones only; every route is a known route; every easy complaint of a flag
    with frontend symptoms is plausible for that flag by the rule."""
    fe = fe or load_frontend()
    problems: list[str] = []
    for name in (*answers.no_frontend, *answers.excluded_unless_sole):
        if name not in qf.flags:
            problems.append(
                f"catalog/orca/answers.yaml: unknown flag {name!r} (known: {', '.join(sorted(qf.flags))})"
            )
    if set(fe.flags) != set(qf.flags):
        problems.append(
            f"catalog/orca/frontend.yaml: flags {sorted(fe.flags)} differ from "
            f"questions.yaml's {sorted(qf.flags)}"
        )
    for flag, issues in fe.flags.items():
        if (not issues) != (flag in answers.no_frontend):
            problems.append(f"catalog/orca/frontend.yaml: {flag}: an empty frontend list iff on no_frontend")
        problems += [
            f"frontend.yaml: {flag}: unknown route {i.route!r}" for i in issues if i.route not in fe.routes
        ]
    complaints = [(a, None, c) for a, spec in qf.areas.items() for c in spec.medium]
    complaints += [(a, f, c) for f, spec in qf.flags.items() for a, cs in spec.easy.items() for c in cs]
    for area, flag, c in complaints:
        if area not in qf.areas:
            problems.append(f"questions.yaml: {flag}: unknown area {area!r}")
            continue
        for r in (*(c.routes or ()), *qf.areas[area].routes):
            if r not in fe.routes:
                problems.append(f"questions.yaml: {c.text!r}: unknown route {r!r}")
        if c.quotes is not None and c.quotes not in qf.flags:
            problems.append(f"questions.yaml: {c.text!r}: quotes unknown flag {c.quotes!r}")
        if flag and fe.flags.get(flag) and c.quotes != flag:
            if not matches(fe, flag, c, complaint_routes(qf, c, (area,))):
                problems.append(f"questions.yaml: {flag}: {c.text!r} is not plausible for its own flag")
    if problems:
        raise CatalogError(problems)


def candidate_tasks(
    schedule: OrcaSchedule, qf: QuestionsFile, answers: AnswersFile | None = None
) -> list[OrcaTask]:
    """Every task the rules allow, before pruning (incident tasks with no plausible cause dropped)."""
    answers = answers or load_answers()
    fe = load_frontend()
    check_answers(answers, qf, fe)
    out: list[OrcaTask] = []
    for q in questions(schedule, qf, fe):
        for s in _incident_specs(schedule, q):
            t0 = day_start(s.anchor_s)
            gt = plausible(schedule, qf, q, t0, min(s.current_s, t0 + DAY_S), answers, fe)
            if gt and s.current_s <= schedule.run_s:
                out.append(_task(schedule, q, s, gt))
        for s in _control_specs(schedule, q):
            out.append(_task(schedule, q, s, ()))
    return out


def _cells(tasks: list[OrcaTask], targets: TaskTargets):
    """Each (control, difficulty) cell of `tasks`, with the count the published targets ask of it."""
    for control, wanted in ((False, targets.incident), (True, targets.control)):
        for diff in ("easy", "medium", "hard"):
            cell = [t for t in tasks if t.is_control == control and t.difficulty == diff]
            yield control, diff, cell, wanted[diff]  # type: ignore[index]


def prune(tasks: list[OrcaTask], targets: TaskTargets) -> list[OrcaTask]:
    """Keep the published count per (difficulty, control) cell: the lowest keyed hashes of task ids."""
    out: list[OrcaTask] = []
    for control, diff, cell, n in _cells(tasks, targets):
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


MAX_FRESH_ATTEMPTS = 25  # a fresh draw whose task pool cannot fill the published counts is redrawn


def _fills(pool: list[OrcaTask], targets: TaskTargets) -> bool:
    return all(len(cell) >= n for _, _, cell, n in _cells(pool, targets))


def world_schedule(days: int = 6, world: WorldSpec = PUBLISHED) -> OrcaSchedule:
    """The flag schedule of `world`: the published one, or the first fresh draw of its seed whose
    task pool fills the published counts (cached per process)."""
    return _world_schedule(int(days), world)


@lru_cache(maxsize=8)
def _world_schedule(days: int, world: WorldSpec) -> OrcaSchedule:
    if world.seed is None:
        return orca_schedule(days)
    qf, targets = load_questions(), load_leaderboard().targets
    for attempt in range(MAX_FRESH_ATTEMPTS):
        schedule = draw_schedule(world.seed, attempt, days)
        if days != 6 or _fills(candidate_tasks(schedule, qf), targets):
            return schedule
    raise ConfigurationError(
        f"no fresh ORCA schedule of world seed {world.seed} fills the published task counts in "
        f"{MAX_FRESH_ATTEMPTS} draws; try another seed"
    )


def generate_tasks(days: int = 6, world: WorldSpec = PUBLISHED) -> list[OrcaTask]:
    schedule = world_schedule(days, world)
    pool = candidate_tasks(schedule, load_questions())
    ids = [t.task_id for t in pool]
    if len(ids) != len(set(ids)):
        raise ConfigurationError("ORCA task ids are not unique")
    return prune(pool, load_leaderboard().targets) if days == 6 else sorted(pool, key=lambda t: t.task_id)


def orca_tasks(days: int = 6, world: WorldSpec = PUBLISHED) -> tuple[OrcaTask, ...]:
    """The task list of `world` (the published schedule by default; cached per process)."""
    return _tasks(int(days), world)


@lru_cache(maxsize=4)
def _tasks(days: int, world: WorldSpec) -> tuple[OrcaTask, ...]:
    return tuple(generate_tasks(days, world))


def task_key(task: OrcaTask) -> str:
    """The task's public name: task ids spell the authored flag, so agents see a hash (ORCA's package
    names)."""
    return hashlib.sha256(task.task_id.encode()).hexdigest()[:16]


def tasks_digest(tasks: list[OrcaTask] | tuple[OrcaTask, ...]) -> str:
    """sha256 of the canonical JSON of every task: any change to ids or contents changes it."""
    blob = json.dumps([t.model_dump(mode="json") for t in tasks], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()
