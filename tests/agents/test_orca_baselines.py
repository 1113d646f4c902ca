"""ORCA baselines: oracle 100% accuracy and 0% hallucination, empty report 0 on incidents and passing
every control, the loudest-symptom heuristic in between. Fast: day-1 tasks on the one-day world;
slow: all 1,079 tasks on the six-day world."""

from __future__ import annotations

import dataclasses

import pytest

from sre_marathon_gym.agents import make_orca_agent
from sre_marathon_gym.agents.orca_baselines import ORCA_AGENTS, OrcaAgent, run_task
from sre_marathon_gym.evaluation.orca import evaluate
from sre_marathon_gym.orca.data import load_leaderboard
from sre_marathon_gym.orca.episode import Episode
from sre_marathon_gym.orca.report import RcaReport
from sre_marathon_gym.orca.tasks import orca_tasks
from sre_marathon_gym.scoring.orca import breakdown, metrics, published_metrics


def _scores(agent: str, tasks, days: int):
    a = make_orca_agent(agent)
    out = []
    for t in tasks:
        ep = Episode(t, days=days)
        out.append(ep.score(run_task(a, ep)))
    return out


class _Recorder(OrcaAgent):
    name = "recorder"

    def __init__(self):
        self.views = []

    def investigate(self, view, call):
        self.views.append(view)
        return RcaReport()


def test_no_non_oracle_agent_input_names_a_ground_truth_flag():
    assert [n for n, cls in ORCA_AGENTS.items() if cls.privileged] == ["oracle"]
    rec = _Recorder()
    tasks = [t for t in orca_tasks() if not t.is_control]
    for t in tasks:
        run_task(rec, Episode(t))  # no tool call: the world is never simulated
    assert len(rec.views) == len(tasks)
    for t, view in zip(tasks, rec.views):
        text = " ".join(str(v) for v in dataclasses.astuple(view)).lower()
        assert t.task_id not in text
        for c in t.ground_truth:
            assert c.flag.lower() not in text and c.event_id.lower() not in text, (view.task_key, c.flag)


def _check(scores_by_agent):
    oracle, empty, heur = (metrics(scores_by_agent[a]) for a in ("oracle", "empty", "heuristic"))
    assert oracle["rca_accuracy"].mean == 100.0 and oracle["hallucination"].mean == 0.0
    assert oracle["control_pass"].mean == 100.0 and oracle["rca_depth"].mean > 90.0
    assert (
        empty["rca_accuracy"].mean == 0.0
        and empty["rca_depth"].mean == 0.0
        and empty["hallucination"].mean == 0.0
    )
    assert empty["control_pass"].mean == 100.0
    assert 0.0 < heur["rca_accuracy"].mean < 100.0 and 0.0 < heur["rca_depth"].mean < oracle["rca_depth"].mean
    return oracle, empty, heur


def test_baselines_on_day_one_tasks():
    tasks = [t for t in orca_tasks() if t.horizon_s <= 86_400 and t.incident_s < 86_400][
        ::2
    ]  # every other one
    assert len(tasks) > 40 and any(t.is_control for t in tasks)
    _check({a: _scores(a, tasks, days=1) for a in ("oracle", "empty", "heuristic")})


@pytest.mark.slow
def test_baselines_on_all_tasks():
    scores = {a: evaluate(a) for a in ("oracle", "empty", "heuristic")}
    assert all(len(s) == 1079 for s in scores.values())
    _check(scores)
    pub = published_metrics(scores["heuristic"])
    assert 0.0 < pub["rca_accuracy_incident_medium"].mean < 100.0
    # issue 20: the loudest-symptom heuristic is below the best published model on medium and hard
    # (sound accuracy, the one this judge reports)
    sound = published_metrics(scores["heuristic"], sound=True)
    rows = load_leaderboard().rows
    assert sound["rca_accuracy_incident_medium"].mean < max(r.rca_accuracy_medium for r in rows)
    assert sound["rca_accuracy_incident_hard"].mean < max(r.rca_accuracy_hard for r in rows)


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="issue 20: the heuristic ignores the complaint, so on easy tasks (2.00 causes) its loudest "
    "symptom is more often a flag the complaint rules out (a wrong claim costs every rubric) than on "
    "hard ones (every visible event of the day): depth 11.1 easy, 11.4 medium, 11.6 hard",
)
def test_heuristic_depth_falls_from_easy_to_hard():
    depth = {d: m["rca_depth"].mean for d, m in breakdown(evaluate("heuristic"), "difficulty").items()}
    assert depth["easy"] > depth["hard"]
