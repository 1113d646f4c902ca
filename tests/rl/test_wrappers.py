"""The RL wrappers: reward equals the Marathon-Score, encodings expose the mask, flat observations."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import sre_marathon_gym  # noqa: F401
from sre_marathon_gym.agents import RandomAgent
from sre_marathon_gym.scoring import score_run
from sre_marathon_gym.wrappers import (
    EncodeActionSlots,
    FlattenActions,
    FlattenMarathonObservation,
    RecordBundle,
    ScheduleCurriculum,
    ShapeMarathonReward,
)

SHORT = {"intensity": 1.0, "injection_minutes": 8, "observation_minutes": 2}


def make(**kw):
    return gym.make("SREMarathon/OnlineBoutique-v3", **{**SHORT, **kw})


def run_random(env, seed: int) -> float:
    """Masked random slots on any wrapped env whose obs carries `action_mask` (or the raw env)."""
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total, done = 0.0, False
    while not done:
        if isinstance(obs, dict) and "action_mask" in obs:
            action = _masked_sample(env.action_space, obs["action_mask"], rng)
        else:
            agent = RandomAgent()
            agent.reset(env.unwrapped, seed)
            action = agent.invoke(env.unwrapped, obs, info)
        obs, r, term, trunc, info = env.step(action)
        total += r
        done = term or trunc
    return total


def _masked_sample(space, mask, rng) -> np.ndarray | int:
    mask = np.asarray(mask) > 0
    if isinstance(space, gym.spaces.Discrete):
        return int(rng.choice(np.flatnonzero(mask)))
    out, off = [], 0
    for n in space.nvec:
        out.append(int(rng.choice(np.flatnonzero(mask[off : off + n]))))
        off += int(n)
    return np.array(out)


def test_default_return_equals_the_unclipped_marathon_score() -> None:
    """By default the return is the score before clipping (under rules v2 guesses can make it
    negative); `clip=True` makes it the published, clipped score."""
    env = ShapeMarathonReward(make())
    total = run_random(env, seed=11)
    card = score_run(env.unwrapped.record(), env.unwrapped.catalog.scoring)
    assert total == pytest.approx(card.marathon_score_unclipped, abs=1e-9)
    clipped = ShapeMarathonReward(make(), clip=True)
    total = run_random(clipped, seed=11)
    assert total == pytest.approx(card.marathon_score, abs=1e-9)


def test_dense_terms_are_subtracted_and_reported() -> None:
    env = ShapeMarathonReward(make(), degradation_weight=10.0, risk_weight=2.0)
    env.reset(seed=3)
    done = False
    while not done:
        _, r, term, trunc, info = env.step(np.zeros(env.action_space.shape, np.int64))
        t = info["reward_terms"]
        assert 0.0 <= t["degradation"] <= 1.0 and t["risky_attempts"] == 0
        assert r == pytest.approx(t["score"] - 10.0 * t["degradation"])
        done = term or trunc
    with pytest.raises(ValueError):
        ShapeMarathonReward(make(), degradation_weight=-1.0)


def test_flatten_actions_mask_layout_matches_env_mask() -> None:
    env = FlattenActions(make(action_slots=3))
    obs, info = env.reset(seed=2)
    nvec = env.action_space.nvec
    assert nvec.shape == (15,)
    assert obs["action_mask"].shape == (int(nvec.sum()),)
    assert np.array_equal(obs["action_mask"], np.tile(info["action_mask"], 3).astype(np.float32))
    assert env.observation_space.contains(obs)


def test_encode_action_slots_rows_respect_mask_and_decode() -> None:
    env = EncodeActionSlots(make(), slots_per_step=2)
    assert isinstance(env.action_space, gym.spaces.MultiDiscrete)
    obs, info = env.reset(seed=4)
    assert env.observation_space.contains(obs)
    n = len(env.rows)
    mask = obs["action_mask"][:n] > 0
    assert mask[0]  # noop always allowed
    # before any incident exists, no row that cites one is allowed
    from sre_marathon_gym.envs.actions import VERBS

    needs_incident = np.isin(env.rows[:, 0], [VERBS.index(v) for v in VERBS[2:]])
    assert not mask[needs_incident].any()
    decoded = env.decode([0, 1])
    assert decoded.shape == (env.unwrapped.action_slots, 5)
    assert decoded[1, 0] == VERBS.index("open_incident") and decoded[2:, 0].sum() == 0
    run_random(env, seed=4)


def test_discrete_encoding_opens_incidents_only_where_alerts_wait() -> None:
    """An open_incident row is allowed exactly for the services with firing, ungrouped alerts,
    and taking every allowed one groups them all (the mask tells a policy where to look)."""
    from sre_marathon_gym.envs.actions import VERBS

    env = EncodeActionSlots(make(action_slots=4), slots_per_step=4)
    obs, info = env.reset(seed=4)
    n = len(env.rows)
    opening = np.flatnonzero(env.rows[:, 0] == VERBS.index("open_incident"))
    for _ in range(8):
        waiting = info["services_with_ungrouped_alerts"]
        mask = obs["action_mask"][:n] > 0
        assert np.array_equal(mask[opening], waiting[env.rows[opening, 1]])
        if waiting.any():
            break
        obs, _, _, _, info = env.step([0, 0, 0, 0])
    assert waiting.any(), "the schedule raised no alert in 16 minutes"
    rows = [int(i) for i in opening if mask[i]][:4]
    before = len(env.unwrapped.runner.incidents.incidents)
    obs, _, _, _, info = env.step(rows + [0] * (4 - len(rows)))
    assert len(env.unwrapped.runner.incidents.incidents) == before + len(rows)
    assert all(a.ok for a in env.unwrapped.runner.actions if a.tool == "open_incident")


def test_discrete_encoding_verb_subset() -> None:
    from sre_marathon_gym.envs.actions import VERBS

    env = EncodeActionSlots(make(), verbs=["open_incident", "resolve_incident"])
    assert {VERBS[v] for v in env.rows[:, 0]} == {"noop", "open_incident", "resolve_incident"}
    assert len(env.rows) == 1 + len(env.unwrapped.layout.services) + 1
    obs, _ = env.reset(seed=2)
    assert obs["action_mask"].shape == (len(env.rows),)
    with pytest.raises(ValueError, match="unknown verb"):
        EncodeActionSlots(make(), verbs=["open_incidents"])


@pytest.mark.parametrize("encoding", [FlattenActions, EncodeActionSlots])
def test_flat_observation_is_a_valid_box(encoding) -> None:
    env = FlattenMarathonObservation(encoding(make()))
    obs, _ = env.reset(seed=5)
    assert env.observation_space.contains(obs)
    assert obs["observations"].dtype == np.float32 and obs["observations"].ndim == 1
    for _ in range(3):
        obs, *_ = env.step(_masked_sample(env.action_space, obs["action_mask"], np.random.default_rng(0)))
        assert env.observation_space.contains(obs)
    merged = FlattenMarathonObservation(encoding(make()), keep_mask=False)
    flat, _ = merged.reset(seed=5)
    assert merged.observation_space.contains(flat) and flat.ndim == 1


def test_wrapped_stack_passes_env_checker() -> None:
    import warnings

    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "differs from the unwrapped env": on purpose
        check_env(
            FlattenMarathonObservation(FlattenActions(ShapeMarathonReward(make()))), skip_render_check=True
        )


def test_curriculum_ramps_schedule_per_episode() -> None:
    env = ScheduleCurriculum(
        make(), ramp_episodes=2, intensity=(0.5, 1.0), injection_minutes=(2, 4), observation_minutes=2
    )
    stages = []
    for seed in range(3):
        _, info = env.reset(seed=seed)
        stages.append((info["curriculum"]["intensity"], env.unwrapped.run_s))
    assert stages == [(0.5, 240), (0.75, 300), (1.0, 360)]
    with pytest.raises(ValueError):
        ScheduleCurriculum(gym.make("SREMarathon/OnlineBoutique-v3", mode="eval"))


def test_record_bundle_writes_a_verifiable_bundle(tmp_path) -> None:
    bundle = pytest.importorskip(
        "sre_marathon_gym.recording.bundle", reason="sre_marathon_gym.recording.bundle not written yet"
    )
    env = RecordBundle(ShapeMarathonReward(make(injection_minutes=2)), tmp_path, prefix="rl")
    total = run_random(env, seed=9)
    assert len(env.paths) == 1 and env.paths[0].is_file()
    info = bundle.verify_bundle(env.paths[0])
    assert info is not None
    loaded = bundle.load_bundle(env.paths[0])
    card = score_run(loaded.record, env.unwrapped.catalog.scoring)
    assert card.marathon_score == pytest.approx(total, abs=1e-9)


def test_make_vec_sync_with_wrappers() -> None:
    venv = gym.make_vec(
        "SREMarathon/OnlineBoutique-v3",
        num_envs=2,
        vectorization_mode="sync",
        wrappers=[ShapeMarathonReward, FlattenActions, FlattenMarathonObservation],
        **SHORT,
    )
    obs, info = venv.reset(seed=[1, 2])
    assert obs["observations"].shape[0] == 2 and obs["action_mask"].shape[0] == 2
    totals = np.zeros(2)
    for _ in range(6):
        obs, r, term, trunc, info = venv.step(np.zeros(venv.action_space.shape, np.int64))
        totals += r
    assert np.all(np.isfinite(totals))
    venv.close()


def test_make_vec_sync_kwargs_only() -> None:
    venv = gym.make_vec("SREMarathon/OnlineBoutique-v3", num_envs=2, vectorization_mode="sync", **SHORT)
    obs, _ = venv.reset(seed=0)
    assert obs["services"].shape[0] == 2
    venv.step(np.zeros(venv.action_space.shape, np.int64))
    venv.close()


def test_record_bundle_seals_a_truncated_episode_as_incomplete(tmp_path) -> None:
    """A step limit that cuts the run short leaves an INCOMPLETE bundle, never one that scores as
    a finished run."""
    from gymnasium.wrappers import TimeLimit

    from sre_marathon_gym.recording.bundle import load_bundle

    env = RecordBundle(TimeLimit(make(), max_episode_steps=2), tmp_path)
    env.reset(seed=4)
    done = False
    while not done:
        _, _, term, trunc, info = env.step(np.zeros(env.action_space.shape, np.int64))
        done = term or trunc
    assert trunc and not term
    info = load_bundle(info["bundle"]).info
    assert not info.complete and info.incomplete.reached_s == 360.0
