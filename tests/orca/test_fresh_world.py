"""Fresh seeded ORCA worlds: a six-day flag schedule drawn by a seed from the published schedule's
distribution, its 1,079 tasks by the published rules, and no published sibling to copy."""

from __future__ import annotations

from collections import Counter

import gymnasium as gym
import pytest

import sre_marathon_gym  # noqa: F401  (registers the env ids)
from sre_marathon_gym.agents.orca_baselines import AreaPriorAgent, complaint_area
from sre_marathon_gym.cli.commands import main
from sre_marathon_gym.core.errors import ConfigurationError
from sre_marathon_gym.orca.data import load_questions, load_schedule_file
from sre_marathon_gym.orca.fresh import draw_schedule
from sre_marathon_gym.orca.schedule import MAX_DAYS, orca_schedule
from sre_marathon_gym.orca.tasks import generate_tasks, orca_tasks, task_key, tasks_digest, world_schedule
from sre_marathon_gym.orca.world_spec import WorldSpec, world_of

PUBLISHED_DIGEST = "20b24cd6a56fe667b659edfea1778df550a48a05716051bdb4b270e24ab6f9bb"  # test_tasks.DIGEST


def test_a_seed_builds_the_same_world_twice_and_another_seed_another():
    a, b = generate_tasks(6, WorldSpec(11)), generate_tasks(6, WorldSpec(11))
    assert tasks_digest(a) == tasks_digest(b)
    other = tasks_digest(generate_tasks(6, WorldSpec(12)))
    assert len({tasks_digest(a), other, PUBLISHED_DIGEST}) == 3
    assert tasks_digest(orca_tasks()) == PUBLISHED_DIGEST  # the published world is the default, unchanged


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_fresh_world_has_the_published_task_counts_and_no_published_task(seed):
    tasks, published = orca_tasks(6, WorldSpec(seed)), orca_tasks()
    assert len(tasks) == 1079
    assert Counter(t.difficulty for t in tasks) == Counter(t.difficulty for t in published)
    assert Counter(t.is_control for t in tasks) == Counter(t.is_control for t in published)
    assert not {t.task_id for t in tasks} & {t.task_id for t in published}
    assert not {task_key(t) for t in tasks} & {task_key(t) for t in published}  # no lookup by public key
    assert all(t.event_id.endswith(f"-w{seed}") for t in tasks)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_fresh_schedule_is_drawn_from_the_published_shapes(seed):
    fresh, published = world_schedule(6, WorldSpec(seed)), orca_schedule(6)
    data = load_schedule_file()
    flags = set(load_questions().flags)
    assert {e.flag for e in fresh.events} <= flags  # every event has complaint templates
    per_day = Counter(e.day for e in fresh.events)
    published_per_day = Counter(e.day for e in data.events if e.value != "off")
    assert set(per_day) == set(range(1, 7))
    assert max(per_day.values()) <= max(published_per_day.values())
    # a flag is never held by two events at once: an event ends at the next change of its flag
    for flag in flags:
        spans = sorted((e.on_s, e.end_s) for e in fresh.events if e.flag == flag)
        assert all(s1[1] <= s2[0] for s1, s2 in zip(spans, spans[1:]))
    # flips keep the published scenario shapes: durations that are published durations
    published_durations = {e.end_s - e.on_s for e in published.events if e.ended_by_off}
    drift = {r.drift_s for r in data.events if r.drift_s is not None}
    assert drift  # the fresh rows carry published drifts; durations differ from them only by drift
    ended = [e for e in fresh.events if e.ended_by_off]
    assert ended
    for e in ended:
        assert any(abs((e.end_s - e.on_s) - d) <= max(drift) for d in published_durations), e
    # the daily rhythm: every flip within the shift (1 h) and the drifts' spread of a published flip's
    # time of day (over the ten published days the draw copies from)
    tod = [e.on_s % 86_400 for e in orca_schedule(MAX_DAYS).events]
    slack = 3600 + max(drift) - min(drift)
    for e in fresh.events:
        assert any(abs(e.on_s % 86_400 - t) <= slack for t in tod), e


def test_draws_are_seeded_and_attempts_differ():
    assert draw_schedule(5, 0).changes == draw_schedule(5, 0).changes
    assert draw_schedule(5, 0).changes != draw_schedule(5, 1).changes
    assert draw_schedule(5, 0).changes != draw_schedule(6, 0).changes


def test_the_area_prior_answers_a_fresh_task_from_the_whole_published_fit():
    agent = AreaPriorAgent()
    fresh = next(t for t in orca_tasks(6, WorldSpec(1)) if not t.is_control and t.difficulty == "medium")
    assert agent.answer(task_key(fresh), fresh.question) == agent.whole.get(
        complaint_area(fresh.question), ()
    )
    published = next(t for t in orca_tasks() if not t.is_control and t.difficulty == "medium")
    assert task_key(published) in agent.halves  # published tasks keep the two-fold fit


def test_the_env_serves_a_fresh_world_and_refuses_a_bad_seed():
    env = gym.make("SREMarathon/OrcaRCA-v0", world_seed=3)
    _, info = env.reset(seed=0)
    keys = {task_key(t) for t in orca_tasks(6, WorldSpec(3))}
    assert info["task_key"] in keys
    assert env.unwrapped.episode.world == WorldSpec(3)
    for bad in (-1, 2**63, "3", 1.5, True):
        with pytest.raises(ConfigurationError):
            gym.make("SREMarathon/OrcaRCA-v0", world_seed=bad)


def test_the_cli_prints_a_fresh_world_and_refuses_a_bad_seed(capsys):
    assert main(["orca", "tasks", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert "fresh world, seed 7" in out and "1079" in out
    with pytest.raises(SystemExit):
        main(["orca", "tasks", "--seed", "-3"])
    assert "must be at least 0" in capsys.readouterr().err


def test_a_task_id_names_its_world():
    assert {world_of(t.task_id) for t in orca_tasks()} == {WorldSpec()}
    assert {world_of(t.task_id) for t in orca_tasks(6, WorldSpec(9))} == {WorldSpec(9)}


def test_mcp_and_llm_rl_reach_a_fresh_world_task_by_its_id():
    from sre_marathon_gym.llm_rl.rows import orca_rows
    from sre_marathon_gym.mcp_server.orca_task import McpOrcaTask

    rows = orca_rows("hard", world_seed=9)
    assert rows and all(world_of(r["task_id"]) == WorldSpec(9) for r in rows)
    task = McpOrcaTask(rows[0]["task_id"])
    try:
        assert task.u.episode.world == WorldSpec(9)
        assert task.u.episode.task.task_id == rows[0]["task_id"]
    finally:
        task.close()


def test_a_fresh_world_seed_is_drawn_when_asked():
    from sre_marathon_gym.cli.orca import _world
    from sre_marathon_gym.orca.world_spec import WORLD_SEED_LIMIT

    drawn = {_world("fresh").seed for _ in range(3)}
    assert len(drawn) == 3 and all(0 <= s < WORLD_SEED_LIMIT for s in drawn)
    assert _world(None) == WorldSpec() and _world("42") == WorldSpec(42)


def test_the_area_prior_fit_on_the_published_answers_stays_below_the_best_published_hard_row():
    """The cheapest no-telemetry policy a fresh world must defeat: the published answers' prior."""
    from sre_marathon_gym.evaluation.orca import area_prior_scores
    from sre_marathon_gym.orca.data import load_leaderboard
    from sre_marathon_gym.scoring.orca import published_metrics

    best_hard = max(r.rca_accuracy_hard for r in load_leaderboard().rows)
    sound = published_metrics(area_prior_scores(WorldSpec(1)), sound=True)
    assert sound["rca_accuracy_incident_hard"].mean < best_hard, (sound, best_hard)
