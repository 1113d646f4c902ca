"""The adversarial suite (agents/adversarial.py, adversarial_v3.py): policies that diagnose nothing must
score near zero under rules v3 (the default), on the real simulator, while rules v1 rewarded several
of them and rules v2 left the holes the v3 policies use.

The fast tests run short episodes; the slow ones run the issue's acceptance protocol (the three
leaderboard seeds and 5 other seeds per app, full 60 + 30 minute runs) and all 1,079 ORCA tasks.
"""

from __future__ import annotations

from collections import defaultdict

import gymnasium as gym
import pytest

from sre_marathon_gym.agents import ADVERSARIAL_AGENT_NAMES, make_agent, run_episode
from sre_marathon_gym.agents.adversarial import ORCA_ADVERSARIAL_AGENTS, catalog_guesses
from sre_marathon_gym.evaluation.leaderboard import ENV_BY_APP, evaluate
from sre_marathon_gym.scoring import score_run

SHORT = dict(injection_minutes=20, observation_minutes=5)


@pytest.fixture(scope="module")
def short_runs(catalog):
    """Every adversarial policy, plus the runbook, on one 25-minute Online Boutique run."""
    out = {}
    for name in (*ADVERSARIAL_AGENT_NAMES, "runbook"):
        env = gym.make(ENV_BY_APP["online_boutique"], **SHORT)
        out[name] = run_episode(env, make_agent(name), seed=4)
    return out


def test_the_suite_holds_every_degenerate_policy_of_the_issue():
    assert set(ADVERSARIAL_AGENT_NAMES) == {
        "one_incident",
        "incident_per_alert",
        "shotgun",
        "cycle_guesses",
        "guess_per_incident",
        "act_on_everything",
        "single_guess",
        "revert_watcher",
        "score_prober",
        "class_claimer",
        "entry_point_incidents",
        "half_and_half",
        "late_sweeper",
        "licensed_actor",
    }
    assert set(ORCA_ADVERSARIAL_AGENTS) == {"every_flag", "every_flag_with_signals", "every_service"}


def test_catalog_guesses_are_names_the_scorer_accepts(catalog):
    """The guesser is as strong as a catalog reader: every guess is an accepted name of some row."""
    env = gym.make(ENV_BY_APP["astronomy_shop"]).unwrapped
    for svc in ("payment", "ad", "cart"):
        rows = [f for f in catalog.faults["astronomy_shop"] if f.target == svc]
        accepted = {n for f in rows for n in (f.artifact, *f.aliases)}
        guesses = catalog_guesses(env, svc)
        assert guesses and set(guesses) <= accepted, svc


@pytest.mark.parametrize("name", ADVERSARIAL_AGENT_NAMES)
def test_no_degenerate_policy_earns_anything_under_v3(short_runs, catalog, name):
    """Under rules v3 each policy's unclipped score is at most 0.5 (one incident that holds its first
    alerts can be matched for a while) and below the cautious runbook's."""
    v3 = score_run(short_runs[name], catalog.scoring)
    runbook = score_run(short_runs["runbook"], catalog.scoring)
    assert v3.rules_version == 3
    assert v3.marathon_score_unclipped <= 0.5, (name, v3.marathon_score_unclipped)
    assert v3.marathon_score < runbook.marathon_score, (name, v3.marathon_score, runbook.marathon_score)


def test_v1_rewarded_the_guessers(short_runs, catalog):
    """The reason for v2: under rules v1 the guessing policies beat the runbook by a wide margin."""
    v1 = catalog.scoring.with_rules(1)
    runbook = score_run(short_runs["runbook"], v1).marathon_score
    for name in ("shotgun", "cycle_guesses", "act_on_everything"):
        assert score_run(short_runs[name], v1).marathon_score > runbook + 10, name


def test_the_report_deadline_is_what_stops_the_revert_watcher(short_runs, catalog):
    """The orchestrator's reverts name the faulty changes after the fact: without the report deadline
    (`report_grace_s` None, as in scoring files sealed before it) reading them beat the runbook."""
    m = catalog.scoring.matching
    v2 = catalog.scoring.with_rules(2)  # v3 needs the deadline: drop it from v2's matching
    no_deadline = v2.model_copy(update={"matching": m.model_copy(update={"report_grace_s": None})})
    watcher, runbook = short_runs["revert_watcher"], short_runs["runbook"]
    late = score_run(watcher, no_deadline)
    assert late.localized > 0 and late.marathon_score > score_run(runbook, no_deadline).marathon_score
    now = score_run(watcher, catalog.scoring)
    # no fault it names is still open to a report; an incident may still hold a live fault's alerts
    # by chance (harmless rollouts put alerts everywhere), which scores nothing without the claim
    assert m.report_grace_s == 0 and now.localized == 0 and now.correlated < 0.1 and now.marathon_score == 0


def test_each_policy_does_what_its_name_says(short_runs):
    one = short_runs["one_incident"]
    assert len({e.incident_id for e in one.incident_events}) == 1
    per_alert = short_runs["incident_per_alert"]
    last_invocation = max(a.time_s for a in per_alert.actions)
    seen = [a for a in per_alert.alerts if a.fired_at <= last_invocation]
    assert len({e.incident_id for e in per_alert.incident_events}) == len(seen)
    assert all(len(e.alert_ids) == 1 for e in per_alert.incident_events)
    cycle = short_runs["cycle_guesses"]
    assert len({e.artifact for e in cycle.incident_events if e.op == "root_cause"}) > 3
    watcher = short_runs["revert_watcher"]
    reverts = [f for f in watcher.faults if f.reverted_s is not None and f.category in ("code", "config")]
    assert reverts and {e.op for e in watcher.incident_events} >= {"open", "root_cause"}
    assert min(e.time_s for e in watcher.incident_events) >= min(f.reverted_s for f in reverts)
    act = short_runs["act_on_everything"]
    tools = {a.tool for a in act.actions if a.kind == "intervention" and a.verdict == "ok"}
    assert {"rollback", "restart"} <= tools
    alerts = {a.id: a for a in one.alerts}
    entry = short_runs["entry_point_incidents"]
    opened = [e for e in entry.incident_events if e.op == "open"]
    assert opened and all(
        alerts[e.alert_ids[0]].services[0] in ("frontend", "checkoutservice") for e in opened
    )
    pairs = [e for e in short_runs["half_and_half"].incident_events if e.op == "open"]
    assert pairs and all(len(e.alert_ids) == 2 for e in pairs)
    claimer = short_runs["class_claimer"]
    assert {e.op for e in claimer.incident_events} >= {"open", "root_cause", "update"}
    sweeper = short_runs["late_sweeper"]
    last = max(a.time_s for a in sweeper.actions)
    assert any(e.op == "update" and e.time_s >= last - 240 for e in sweeper.incident_events)
    licensed = short_runs["licensed_actor"]
    assert sum(a.tool == "restart" for a in licensed.actions) > 3
    prober = short_runs["score_prober"]
    assert len({e.incident_id for e in prober.incident_events}) == 1  # it never sees a score rise


# ------------------------------------------------------------------ the acceptance protocol (slow)
@pytest.mark.slow
def test_acceptance_on_leaderboard_and_five_other_seeds(catalog, oracle_floor):
    """On each app's leaderboard seed and the 5 extra seeds `evaluate --seeds 5` uses, under rules v3:
    every adversarial policy scores at most 5 and below the runbook where the runbook scores above 0,
    noop scores 0, runbook >= random on every run and > on each app's sum, the oracle scores at
    least `oracle_floor` on every run and at least 85 on average per app (it waits for an alert
    specific to each fault, as rules v3 ask)."""
    agents = ["noop", "random", "runbook", "oracle", *ADVERSARIAL_AGENT_NAMES]
    results = evaluate(agents, extra_seeds=5, workers=2, progress=False, catalog=catalog)
    score: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for spec, card, _ in results:
        assert card.rules_version == 3
        score[(spec.app, spec.seed)][spec.agent] = card.marathon_score
    assert len(score) == 3 * 6
    for (app, seed), s in score.items():
        assert s["noop"] == 0.0, (app, seed)
        assert s["runbook"] >= s["random"], (app, seed, s)
        for name in ADVERSARIAL_AGENT_NAMES:
            assert s[name] <= 5.0, (app, seed, name, s)
            assert s["runbook"] == 0 or s[name] < s["runbook"], (app, seed, name, s)
        assert s["oracle"] >= oracle_floor, (app, seed, s["oracle"])
    for app in ENV_BY_APP:
        runs = [s["oracle"] for (a, _), s in score.items() if a == app]
        assert len(runs) == 6 and sum(runs) / 6 >= 85.0, (app, runs)
        # the weak runbook can score 0 on a seed under the production change stream (as random does);
        # over the app's six runs it beats random
        runbook = sum(s["runbook"] for (a, _), s in score.items() if a == app)
        assert runbook > sum(s["random"] for (a, _), s in score.items() if a == app), app


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ORCA_ADVERSARIAL_AGENTS))
def test_degenerate_rca_reports_score_zero_on_every_orca_task(name):
    """On all 1,079 tasks: sound accuracy 0 and depth 0 (the published accuracy they win is kept for
    comparison only)."""
    from sre_marathon_gym.evaluation.orca import evaluate as orca_evaluate
    from sre_marathon_gym.scoring.orca import metrics

    scores = orca_evaluate(name)
    assert len(scores) == 1079
    incidents = [s for s in scores if not s.is_control]
    assert all(s.rca_accuracy == 0 and s.rca_depth == 0.0 for s in incidents)
    m = metrics(scores)
    assert m["rca_accuracy"].mean == 0.0 and m["rca_depth"].mean == 0.0
    if name.startswith("every_flag"):
        assert m["rca_accuracy_published"].mean == 100.0  # the hole in the published definition


def test_degenerate_rca_reports_on_a_spread_of_tasks():
    """Fast version of the above on 40 tasks spread over the set."""
    from sre_marathon_gym.evaluation.orca import evaluate as orca_evaluate

    for name in ORCA_ADVERSARIAL_AGENTS:
        scores = orca_evaluate(name, limit=40)
        inc = [s for s in scores if not s.is_control]
        assert inc and all(s.rca_accuracy == 0 and s.rca_depth == 0.0 and s.hallucinate == 1 for s in inc), (
            name
        )


def test_cli_names_the_suite():
    from sre_marathon_gym.cli.commands import ADVERSARIAL_NAMES
    from sre_marathon_gym.cli.orca import ADVERSARIAL_NAMES as ORCA_NAMES

    assert ADVERSARIAL_NAMES == ADVERSARIAL_AGENT_NAMES
    assert set(ORCA_NAMES) == set(ORCA_ADVERSARIAL_AGENTS)
