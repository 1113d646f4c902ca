"""Benchmark health: how far flagd's impression counter alone gets on ORCA-bench's hard tier.

The counter (`feature_flag_flagd_impression_total{feature_flag_key, feature_flag_result_variant}`)
is in the reference's telemetry and every reference rubric cites it as the flag's "meta" signal; a
flipped variant's series is created within a minute of the flip. So one query lists the day's flips,
and on the hard tier ("users are reporting site issues": every user-visible event of the report day
is an answer) naming them all is nearly the ground truth. This script runs that policy, which reads
no ground truth, only one metric query per task, and prints its scores beside the published rows.

Run: python benchmarks/orca_flag_timeline.py [--world-seed S]   (a fresh world of that seed)
"""

from __future__ import annotations

import argparse

from sre_marathon_gym.agents.orca_baselines import OrcaAgent, issue_question, reported_phrase
from sre_marathon_gym.evaluation.orca import evaluate
from sre_marathon_gym.orca.data import load_answers, load_leaderboard, load_questions
from sre_marathon_gym.orca.flags import flag_mechanisms, flag_services
from sre_marathon_gym.orca.report import MetricRef, RcaReport, RootCause
from sre_marathon_gym.orca.time_text import day_start, reported_time_guess
from sre_marathon_gym.orca.world_spec import WorldSpec
from sre_marathon_gym.scoring.orca import breakdown

METRIC = "feature_flag_flagd_impression_total"
STEP_S = 300


class FlagTimelineAgent(OrcaAgent):
    """On the universal complaint, names every flag whose non-default variant was first counted on
    the report day before detection (the public never-answer flags left out), dated at that time."""

    name = "flag_timeline"

    def __init__(self):
        self.answers, self.universal = load_answers(), load_questions().universal

    def investigate(self, view, call) -> RcaReport:
        question = issue_question(view.issue)
        if question != self.universal:
            return RcaReport()
        guess = reported_time_guess(reported_phrase(view.issue, question), view.current_s)
        day0 = float(day_start(guess or view.current_s))
        res = call(
            {
                "tool": "query_metrics",
                "metric": METRIC,
                "group_by": ["feature_flag_key", "feature_flag_result_variant"],
                "function": "increase",
                "window_s": STEP_S,
                "step_s": STEP_S,
                "start_s": day0,
                "end_s": float(view.horizon_s),
            }
        )
        causes = []
        for s in res.data["series"] if res.ok else []:
            labels = s["labels"]
            flag, variant = labels.get("feature_flag_key"), labels.get("feature_flag_result_variant")
            if variant in (None, "off") or flag in self.answers.no_frontend:
                continue
            pts = [(t, v) for t, v in s["values"] if v is not None]
            # a flip: counted now and not in the step before; a first point is one only after the day's
            # first step (the series was created then; one counted from the start flipped earlier)
            flips = [
                t
                for i, (t, v) in enumerate(pts)
                if v > 0 and (pts[i - 1][1] == 0 if i else t > day0 + STEP_S)
            ]
            for t in [t for t in flips if day0 < t <= min(view.current_s, day0 + 86_400) + STEP_S][:3]:
                causes.append(
                    RootCause(
                        flag=flag,
                        service=flag_services(flag)[0],
                        mechanism=flag_mechanisms(flag)[0],  # type: ignore[arg-type]
                        incident_start_s=max(day0, t - STEP_S),
                        evidence=[
                            MetricRef(
                                metric=METRIC,
                                matchers={"feature_flag_key": flag, "feature_flag_result_variant": variant},
                            )
                        ],
                    )
                )
        if any(c.flag not in self.answers.excluded_unless_sole for c in causes):
            causes = [c for c in causes if c.flag not in self.answers.excluded_unless_sole]
        return RcaReport(root_causes=causes) if causes else RcaReport()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world-seed", type=int, help="a fresh world of this seed (default: published)")
    world = WorldSpec(parser.parse_args(argv).world_seed)
    hard = breakdown(evaluate(FlagTimelineAgent(), progress=True, world=world), "difficulty")["hard"]
    best = max(r.rca_accuracy_hard for r in load_leaderboard().rows)
    print(
        f"{world.label}: flag timeline (one impression query, hard tier only): RCA accuracy hard "
        f"{hard['rca_accuracy'].mean:.2f} ± {hard['rca_accuracy'].stderr:.2f} %, depth "
        f"{hard['rca_depth'].mean:.2f} %, hallucination {hard['hallucination'].mean:.2f} %; "
        f"best published hard {best:.2f} %"
    )


if __name__ == "__main__":
    main()
