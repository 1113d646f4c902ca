"""Train sb3-contrib's MaskablePPO on SRE-Marathon (the library a practitioner tries first).

The env's own action space is a (slots, 5) MultiDiscrete that SB3 cannot build a policy for;
`sre_marathon_gym.wrappers.for_sb3` gives it the macro actions (a 1-D MultiDiscrete with a joint
mask, ``action_masks()``) over the change observation, flattened to one float32 vector.

Run (2 cores: about 10 minutes with the defaults)::

    pip install -e '.[sb3]'
    python examples/train_sb3.py --steps 20000 --out runs/sb3

It prints the mean Marathon-Score of the trained policy and of masked random on held-out test
seeds (`sre_marathon_gym.wrappers.split_seeds("test", n)`), and saves the model.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym
import numpy as np


def make_env(app_id: str, minutes: tuple[int, int], seed_split: str = "train") -> gym.Env:
    import sre_marathon_gym  # noqa: F401  (registers the ids)
    from sre_marathon_gym.wrappers import EpisodeSeeds, for_sb3

    env = gym.make(app_id, injection_minutes=minutes[0], observation_minutes=minutes[1])
    return EpisodeSeeds(for_sb3(env), split=seed_split)


def evaluate(model, app_id: str, minutes: tuple[int, int], seeds: list[int]) -> tuple[float, float]:
    """(trained, masked random) mean Marathon-Score over `seeds`."""
    from sre_marathon_gym.scoring import score_run
    from sre_marathon_gym.wrappers import for_sb3

    out = {"trained": [], "random": []}
    for who in out:
        for seed in seeds:
            env = for_sb3(gym.make(app_id, injection_minutes=minutes[0], observation_minutes=minutes[1]))
            rng = np.random.default_rng(seed)
            obs, _ = env.reset(seed=seed)
            done = False
            while not done:
                masks = env.get_wrapper_attr("action_masks")()
                if who == "trained":
                    action, _ = model.predict(obs, action_masks=masks, deterministic=True)
                else:
                    rows = masks.reshape(len(env.action_space.nvec), -1)
                    action = np.array([rng.choice(np.flatnonzero(m)) for m in rows])
                obs, _, terminated, truncated, _ = env.step(action)
                done = terminated or truncated
            base = env.unwrapped
            out[who].append(score_run(base.record(), base.scoring).marathon_score)
    return float(np.mean(out["trained"])), float(np.mean(out["random"]))


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env-id", default="SREMarathon/OnlineBoutique-v3")
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--injection-minutes", type=int, default=60)
    p.add_argument("--observation-minutes", type=int, default=30)
    p.add_argument("--n-steps", type=int, default=512, help="env steps per PPO update")
    p.add_argument("--eval-seeds", type=int, default=4)
    p.add_argument("--out", default="runs/sb3")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="PyTorch CPU threads: the policy is a small MLP, which more threads only slow down when "
        "anything else runs (SB3's maintainers suggest one; DLR-RM/stable-baselines3#90)",
    )
    args = p.parse_args(argv)
    import torch
    from sb3_contrib import MaskablePPO

    from sre_marathon_gym.wrappers import split_seeds

    minutes = (args.injection_minutes, args.observation_minutes)
    threads = torch.get_num_threads()
    torch.set_num_threads(args.torch_threads)
    try:
        env = make_env(args.env_id, minutes)
        model = MaskablePPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=64, seed=args.seed, verbose=0)
        model.learn(total_timesteps=args.steps)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        model.save(out / "maskable_ppo")
        trained, rnd = evaluate(model, args.env_id, minutes, split_seeds("test", args.eval_seeds))
    finally:
        torch.set_num_threads(threads)  # the caller's setting back (the example also runs in-process)
    print(f"held-out test seeds ({args.eval_seeds}): MaskablePPO {trained:.1f}   masked random {rnd:.1f}")
    return {"trained": trained, "masked_random": rnd, "steps": model.num_timesteps}


if __name__ == "__main__":
    main()
