"""RLlib sampling throughput and where an env step's time goes.

Prints
    1. per app, the cost of one env step (one invocation, 120 simulated seconds) split into the simulator's
       own advance (traffic, faults, telemetry) and the rest of the Gymnasium layer (alert engine,
       recorder, scoring reward, observation and mask building), for the raw env and for the full
       RL wrapper stack, as milliseconds and ratios;
    2. env steps per second of RLlib sampling (PPO's env runners, the policy's forward pass
       included, no learning) with 1 and 2 env runners, and the scaling ratio; with
       ``--envs-per-runner``, two runners stepping several envs each; with ``--recipe``, two
       runners on the PPO recipe's env (the full protocol, macro actions).

Run::

    RAY_AUTH_MODE=disabled python benchmarks/bench_rllib.py [--steps 200] [--sample-steps 200]
        [--envs-per-runner 1,2,4] [--recipe]
"""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

os.environ.setdefault("RAY_AUTH_MODE", "disabled")

ENV_CONFIG = {"intensity": 0.5, "injection_minutes": 15, "observation_minutes": 5}


def _timed(bucket: dict[str, float], key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = getattr(fn, "__wrapped__", fn)  # the env outlives its episodes: never time a timer

    def wrapper(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            bucket[key] += time.perf_counter() - t

    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapper


def _instrument(base: Any, bucket: dict[str, float]) -> None:
    """Time the env's parts by wrapping the bound methods of this episode's objects."""
    base.sim.advance_to = _timed(bucket, "simulator advance", base.sim.advance_to)
    base.alert_engine.evaluate_until = _timed(bucket, "alert engine", base.alert_engine.evaluate_until)
    for m in ("sample", "interval", "after_invocation"):
        setattr(base.recorder, m, _timed(bucket, "recorder", getattr(base.recorder, m)))
    base.reward_fn.step = _timed(bucket, "reward (scoring)", base.reward_fn.step)
    base._observe = _timed(bucket, "observation", base._observe)
    base._info = _timed(bucket, "info + action mask", base._info)


def env_cost(env_id: str, steps: int, wrapped: bool) -> tuple[float, dict[str, float], float]:
    """Seconds per step (outermost step call), per-part seconds per step, seconds per reset (which
    RLlib's sampling pays once per episode and the step figures leave out)."""
    import gymnasium as gym

    import sre_marathon_gym  # noqa: F401  (registers the envs)
    from sre_marathon_gym.agents import RandomAgent
    from sre_marathon_gym.rllib import make_env

    if wrapped:
        env = make_env(dict(ENV_CONFIG), env_id=env_id)
    else:
        env = gym.make(env_id, disable_env_checker=True, **ENV_CONFIG)
    base = env.unwrapped
    agent = RandomAgent()
    bucket: dict[str, float] = defaultdict(float)
    total, n, episode = 0.0, 0, 0
    while n < steps:
        t = time.perf_counter()
        obs, info = env.reset(seed=episode)
        bucket["reset (per episode)"] += time.perf_counter() - t
        agent.reset(base, episode)
        _instrument(base, bucket)  # after reset: reset builds this episode's simulator, engine, ...
        done = False
        while not done and n < steps:
            raw = agent.invoke(base, None, info)
            action = raw.reshape(-1) if wrapped else raw
            t = time.perf_counter()
            obs, _r, term, trunc, info = env.step(action)
            total += time.perf_counter() - t
            n += 1
            done = term or trunc
        episode += 1
    resets = bucket.pop("reset (per episode)") / episode
    return total / n, {k: v / n for k, v in bucket.items()}, resets


# the PPO recipe's env (`examples/train_ppo.py`'s defaults): the full protocol, macro actions on the
# change observation
RECIPE_CONFIG = {
    "intensity": 1.0,
    "injection_minutes": 60,
    "observation_minutes": 30,
    "action_slots": 4,
    "action_encoding": "macro",
    "slots_per_step": 4,
    "moves_per_step": 2,
}


def sampling_rate(
    num_runners: int, sample_steps: int, env_config: dict | None = None, envs_per_runner: int = 1
) -> float:
    """Env steps per second of PPO's env runners sampling in parallel (after one warm-up sample)."""
    from sre_marathon_gym.rllib import ppo_config

    algo = ppo_config(
        "online_boutique",
        env_config or ENV_CONFIG,
        num_env_runners=num_runners,
        num_envs_per_env_runner=envs_per_runner,
    ).build_algo()
    try:
        group = algo.env_runner_group

        def sample(r: Any, n: int = sample_steps) -> int:
            return sum(len(e) for e in r.sample(num_timesteps=n))

        group.foreach_env_runner(lambda r: sample(r, 20), local_env_runner=False)
        t = time.perf_counter()
        counts = group.foreach_env_runner(sample, local_env_runner=False)
        dt = time.perf_counter() - t
        return sum(counts) / dt
    finally:
        algo.stop()


def _print_env_cost(env_id: str, steps: int) -> float:
    """One app's step breakdown; returns its env-only ceiling in steps/s (resets included)."""
    raw_step, parts, reset = env_cost(env_id, steps, wrapped=False)
    wrapped_step, _, _ = env_cost(env_id, steps, wrapped=True)
    sim = parts.get("simulator advance", 0.0)
    print(f"\n{env_id}\n{'part of one env step':34s} {'ms/step':>9s} {'share':>7s}")
    for k, v in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"{k:34s} {1e3 * v:9.2f} {v / raw_step:7.1%}")
    print(
        f"{'other (decode, tool calls, ...)':34s} {1e3 * (raw_step - sum(parts.values())):9.2f} "
        f"{(raw_step - sum(parts.values())) / raw_step:7.1%}"
    )
    print(f"{'simulator only':34s} {1e3 * sim:9.2f} ms/step")
    print(
        f"{'raw env step (MarathonEnv)':34s} {1e3 * raw_step:9.2f} ms/step   "
        f"= {raw_step / sim:.2f} x simulator"
    )
    print(
        f"{'RL stack step (all wrappers)':34s} {1e3 * wrapped_step:9.2f} ms/step   "
        f"= {wrapped_step / sim:.2f} x simulator, "
        f"wrappers add {1e3 * (wrapped_step - raw_step):+.2f} ms ({wrapped_step / raw_step - 1:+.1%})"
    )
    # invocations of one episode: every 120 s (2 minutes) from the first interval's end, before its end
    per_episode = (ENV_CONFIG["injection_minutes"] + ENV_CONFIG["observation_minutes"]) // 2 - 1
    print(
        f"{'reset (a new episode)':34s} {1e3 * reset:9.2f} ms        "
        f"= {reset / per_episode / sim:.2f} x simulator per step over its {per_episode} steps"
    )
    ceiling = 1 / (raw_step + reset / per_episode)
    print(f"{'env-only ceiling, resets included':34s} {ceiling:9.1f} steps/s per core")
    return ceiling


def main() -> None:
    p = argparse.ArgumentParser(description="RLlib sampling throughput and env overhead")
    p.add_argument("--steps", type=int, default=200, help="env steps for the cost breakdown")
    p.add_argument("--sample-steps", type=int, default=200, help="env steps per runner when sampling")
    p.add_argument("--skip-ray", action="store_true")
    p.add_argument(
        "--envs-per-runner", default="1", help="comma-separated envs per runner for the two-runner rate"
    )
    p.add_argument("--recipe", action="store_true", help="also sample the PPO recipe's env (two runners)")
    args = p.parse_args()

    print(f"schedule: {ENV_CONFIG}; one step = one 120 s invocation; random masked actions")
    from sre_marathon_gym.envs import ENV_IDS

    ceilings = {}
    for env_id in ENV_IDS:
        ceilings[env_id] = _print_env_cost(env_id, args.steps)
    ceiling = ceilings["SREMarathon/OnlineBoutique-v3"]  # the sampling runs on Online Boutique
    if args.skip_ray:
        return
    import ray

    ray.init(num_cpus=max(2, os.cpu_count() or 2) + 1, include_dashboard=False, log_to_driver=False)
    try:
        rates = {n: sampling_rate(n, args.sample_steps) for n in (1, 2)}
        per_runner = [int(k) for k in args.envs_per_runner.split(",") if int(k) != 1]
        vectorised = {k: sampling_rate(2, args.sample_steps, envs_per_runner=k) for k in per_runner}
        recipe = sampling_rate(2, args.sample_steps // 2, RECIPE_CONFIG) if args.recipe else None
    finally:
        ray.shutdown()
    print(f"\n{'RLlib sampling (PPO env runners)':34s} {'steps/s':>9s}")
    for n, r in rates.items():
        print(f"{f'{n} env runner(s)':34s} {r:9.1f}")
    print(f"{'scaling 2 vs 1':34s} {rates[2] / rates[1]:9.2f} x   (cores: {os.cpu_count()})")
    print(f"{'1 runner vs env-only ceiling':34s} {rates[1] / ceiling:9.2f}")
    for k, r in vectorised.items():
        print(f"{f'2 runners x {k} envs each':34s} {r:9.1f}")
    if recipe is not None:
        print(f"{'PPO recipe env, 2 runners':34s} {recipe:9.1f}   ({RECIPE_CONFIG})")


if __name__ == "__main__":
    main()
