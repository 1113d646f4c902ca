"""Benchmark health: what the task text and the schedule's daily rhythm give away, with no tool call.

The published schedule repeats its scenarios at similar hours (an ad cascade in the morning, a
canary in the afternoon...), and the task text pins the authored flip: the current time minus the
time-to-detection its report-time wording implies (tasks.md: current = incident + TTD; "at" reports
come 10 min after the flip, ranges are centred 10 or 60 min after it, periods mean 8 h, "sometime
today" 24 h). This prior answers each incident task with the ground truth of the task with the same
(difficulty, area) and TTD whose flip is nearest in time of day among the OTHER half of the incidents
(halves by flag event, as the area prior's), shifted to the guessed flip. Controls are recognised
from the text alone (their reported time is the current time) and answered with an empty report.
It reads no telemetry.

The same-day variant matches on the calendar day instead: the other half's task of the same report
day whose detection time is nearest, its causes copied with their own times. The hard tier's answer
is every visible event of the report day up to detection, so a sibling incident of the same day
answers it; this is what the reference's public answers give away about its private split, which is
split by incident as these halves are.

On a fresh world (`--world-seed S`) both priors are fit on the published world's incidents (all of
them: the fresh tasks are in neither half), which is all a policy could have learnt beforehand.

Run: python benchmarks/orca_clock_prior.py [--world-seed S]
"""

from __future__ import annotations

import argparse

from sre_marathon_gym.agents.orca_baselines import (
    OrcaAgent,
    complaint_area,
    issue_question,
    prior_half,
    reported_phrase,
)
from sre_marathon_gym.evaluation.orca import evaluate
from sre_marathon_gym.orca.data import load_leaderboard
from sre_marathon_gym.orca.flags import flag_mechanisms, flag_services
from sre_marathon_gym.orca.report import RcaReport, RootCause
from sre_marathon_gym.orca.tasks import orca_tasks, task_key
from sre_marathon_gym.orca.time_text import reported_time_guess
from sre_marathon_gym.orca.world_spec import WorldSpec
from sre_marathon_gym.scoring.orca import published_metrics

DAY_S = 86_400


def flip_and_ttd(phrase: str, current_s: int) -> tuple[int, int] | None:
    """The authored flip and the TTD (minutes) the report-time wording implies, or None."""
    reported = reported_time_guess(phrase, current_s)
    if reported is None:
        return None
    gap = (current_s - reported) / 60
    if phrase.startswith("at "):  # reported = flip + 10 min
        ttd = min((15, 60, 480), key=lambda x: abs(x - 10 - gap))
    elif phrase.startswith("between "):  # centred 10 or 60 min after the flip
        ttd = min(((60, 10), (480, 10), (480, 60)), key=lambda x: abs(x[0] - x[1] - gap))[0]
    elif phrase.startswith("sometime in the"):
        ttd = 480
    else:
        ttd = 1440
    return current_s - ttd * 60, ttd


class ClockPriorAgent(OrcaAgent):
    name = "clock_prior"

    def __init__(self, same_day: bool = False):
        self.same_day = same_day
        self.name = "same_day_prior" if same_day else "clock_prior"  # evaluate's progress label
        tasks = orca_tasks()
        self.incidents = [t for t in tasks if not t.is_control]
        self.half = {task_key(t): prior_half(t.event_id) for t in tasks}
        self.event_half = {t.task_id: prior_half(t.event_id) for t in self.incidents}
        self.area = {t.task_id: complaint_area(t.question) for t in self.incidents}

    def investigate(self, view, call) -> RcaReport:
        question = issue_question(view.issue)
        phrase = reported_phrase(view.issue, question)
        if reported_time_guess(phrase, view.current_s) == view.current_s - view.current_s % 60:
            return RcaReport()  # a control: its reported time is the current time
        guess = flip_and_ttd(phrase, view.current_s)
        half, area = self.half.get(view.task_key), complaint_area(question)
        pool = [
            t for t in self.incidents if self.event_half[t.task_id] != half and self.area[t.task_id] == area
        ]
        if guess is None or not pool:
            return RcaReport()
        flip, ttd = guess

        def distance(t) -> tuple[bool, int]:
            if self.same_day:
                return t.incident_s // DAY_S != flip // DAY_S, abs(t.current_s - view.current_s)
            d = abs(t.incident_s % DAY_S - flip % DAY_S)
            return t.ttd_min != ttd, min(d, DAY_S - d)

        nearest = min(pool, key=distance)
        shift = 0 if self.same_day else flip - nearest.incident_s
        causes = [
            RootCause(
                flag=c.flag,
                service=flag_services(c.flag)[0],
                mechanism=flag_mechanisms(c.flag)[0],  # type: ignore[arg-type]
                incident_start_s=float(c.start_s + shift),
            )
            for c in nearest.ground_truth
            if c.start_s + shift <= view.current_s
        ]
        return RcaReport(root_causes=causes) if causes else RcaReport()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world-seed", type=int, help="a fresh world of this seed (default: published)")
    world = WorldSpec(parser.parse_args(argv).world_seed)
    rows = load_leaderboard().rows
    best = max(r.rca_accuracy_medium for r in rows), max(r.rca_accuracy_hard for r in rows)
    print(world.label)
    for same_day in (False, True):
        report(ClockPriorAgent(same_day), best, world)


def report(agent: ClockPriorAgent, best: tuple[float, float], world: WorldSpec) -> None:
    scores = evaluate(agent, progress=True, world=world)
    sound = published_metrics(scores, sound=True)
    controls = [s for s in scores if s.is_control]
    label = "same-day prior" if agent.same_day else "clock prior"
    print(
        f"{label} (no tool call): RCA accuracy medium "
        f"{sound['rca_accuracy_incident_medium']} %, hard {sound['rca_accuracy_incident_hard']} %, "
        f"hallucination {sound['hallucinate_any_incident']} %, controls passed "
        f"{100 * sum(bool(s.control_pass) for s in controls) / len(controls):.2f} %; best published "
        f"{best[0]:.2f} / {best[1]:.2f} %"
    )


if __name__ == "__main__":
    main()
