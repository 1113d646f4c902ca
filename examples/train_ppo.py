"""Train PPO (Ray RLlib) on SRE-Marathon, evaluate it on held-out seeds against the random baseline.

What it does
    1. trains PPO with several env runners on the short, easier schedule (Online Boutique,
       15 min of injections at intensity 0.5, then 5 min of observation; 9 agent steps per
       episode); every training episode draws its schedule from the *train* seed split, each env
       runner from its own disjoint stream (`sre_marathon_gym.rllib`). The policy may open and
       resolve incidents (``--verbs``): under Marathon-Score rules v2 a root cause it cannot yet
       diagnose is a guess that costs more than it earns, so the default teaches careful
       correlation first; ``--verbs all`` opens the whole action space;
    2. saves a checkpoint every ``--checkpoint-every`` iterations and at the end
       (``OUT/checkpoint_NNNN``, loadable with `Algorithm.from_checkpoint` or, for inference only,
       `sre_marathon_gym.rllib.CheckpointPolicy`);
    3. evaluates the final policy (greedy) and the random baseline on the same ``--eval-seeds``
       seeds of the *test* split, in parallel Ray tasks, and prints their mean Marathon-Scores,
       clipped and before clipping (the return the policy was trained on);
    4. writes ``OUT/learning_curve.png`` (training return per episode vs. env steps, with the
       held-out scores as horizontal lines) and ``OUT/results.json``. The held-out evaluation
       also runs the same network before any update (``checkpoint_0000``), so what training
       added is visible apart from what the action encoding gives for free.

Run on a laptop (2 cores: about 6-10 minutes with the defaults)::

    RAY_AUTH_MODE=disabled python examples/train_ppo.py --out runs/ppo-ob

Scaling to a Ray cluster, without code changes
    The script calls ``ray.init(address=args.address)``; with ``--address auto`` (on a cluster
    node, or with ``RAY_ADDRESS`` set) it joins the running cluster instead of starting a local
    one. Env runners are Ray actors and evaluation episodes are Ray tasks, so they spread over the
    cluster's nodes; raise ``--env-runners`` (and ``--envs-per-runner``) to use them, and
    ``--batch-episodes`` to keep each update's batch proportional. Seed streams are indexed by
    (env runner, vector index), so 1,000 runners still draw disjoint schedules. The package must be
    installed on every node (``pip install 'sre-marathon-gym[rllib]'`` or a ``runtime_env``).
    Nothing here depends on the machine: the simulator is deterministic in the seed.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # Ray 2.60 enables token auth by default; local use


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--app", default="online_boutique")
    p.add_argument("--out", default="runs/ppo")
    p.add_argument("--address", default=None, help="Ray cluster address ('auto' to join a running cluster)")
    p.add_argument("--iterations", type=int, default=90)
    p.add_argument("--env-runners", type=int, default=2)
    p.add_argument("--envs-per-runner", type=int, default=1)
    p.add_argument("--batch-episodes", type=int, default=4, help="episodes per PPO update")
    p.add_argument("--intensity", type=float, default=1.0)
    p.add_argument("--injection-minutes", type=int, default=60)
    p.add_argument("--observation-minutes", type=int, default=30)
    p.add_argument("--action-slots", type=int, default=4)
    p.add_argument("--moves", type=int, default=2, help="with --action-encoding macro: moves per step")
    p.add_argument(
        "--action-encoding",
        choices=("macro", "discrete", "flat"),
        default="macro",
        help="macro: moves on the changes ChangeObservation shows (MacroActions: group, claim, "
        "fix, undo, resolve); discrete: one row per meaningful (verb, service, artifact) per slot, "
        "masked (EncodeActionSlots); flat: the factorised MultiDiscrete (FlattenActions)",
    )
    p.add_argument(
        "--verbs",
        default="open_incident,resolve_incident",
        help="with --action-encoding discrete: the verbs the policy may use (comma-separated; "
        "'all' for every verb)",
    )
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--entropy-coeff", type=float, default=0.003)
    p.add_argument("--eval-seeds", type=int, default=16, help="held-out seeds (test split)")
    p.add_argument("--eval-workers", type=int, default=2)
    p.add_argument("--checkpoint-every", type=int, default=5)
    p.add_argument(
        "--curve-every", type=int, default=30, help="evaluate every N-th iteration's checkpoint for the curve"
    )
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def change_reader_scores(app: str, seeds: list[int], env_config: dict) -> list[float]:
    """`benchmarks/change_reader.py`'s policy (every change it cannot rule out by form is a fault) on
    the same seeds and protocol: the change-blaming shortcut a policy must not learn."""
    import importlib.util

    from sre_marathon_gym.evaluation.episode_runner import run_scored_episode
    from sre_marathon_gym.rllib import make_base_env

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "change_reader.py"
    spec = importlib.util.spec_from_file_location("change_reader_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cfg = {**env_config, "app": app}
    out = []
    for seed in seeds:
        run = run_scored_episode(lambda: make_base_env(cfg), module.ChangeReader(), seed=seed)
        out.append(float(run.card.marathon_score))
    return out


def held_out_curve(
    out: Path, history: list[dict], every: int, app: str, seeds: list[int], kw: dict, known: dict
) -> list[dict]:
    """PPO's held-out score at every `every`-th iteration's checkpoint (and before training), on the
    same test seeds and protocol as the final rows; `known` maps iterations already evaluated to
    their scores."""
    from sre_marathon_gym.evaluation.reports import mean_ci95
    from sre_marathon_gym.rllib import evaluate_policy

    steps = {h["iteration"]: h["env_steps"] for h in history}
    steps[0] = 0
    last = max(steps)
    points = []
    for it in sorted({0, last, *range(every, last, every)}):
        scores = known.get(it)
        if scores is None:
            ckpt = out / f"checkpoint_{it:04d}"
            if not ckpt.is_dir():
                continue
            scores = [r.marathon_score for r in evaluate_policy(ckpt, app, seeds, **kw)]
        mean, half = mean_ci95(scores)
        points.append({"iteration": it, "env_steps": steps[it], "mean": mean, "ci95": half, "scores": scores})
    return points


def plot_curve(history: list[dict], curve: list[dict], rows: dict[str, list[float]], path: Path) -> None:
    """Held-out score against env steps: PPO's checkpoints on the test seeds (with 95% intervals),
    the baselines' levels on the same seeds, and the training return (train seeds) for reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sre_marathon_gym.evaluation.reports import mean_ci95

    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    ax.errorbar(
        [p["env_steps"] for p in curve],
        [p["mean"] for p in curve],
        yerr=[p["ci95"] for p in curve],
        marker="o",
        capsize=3,
        color="C0",
        label="PPO, held-out test seeds (mean, 95% interval)",
    )
    xs = [h["env_steps"] for h in history]
    ax.plot(
        xs, [h["episode_return_mean"] for h in history], color="0.75", lw=0.8, label="PPO training return"
    )
    styles = ["-.", ":", (0, (5, 1)), (0, (1, 1))]
    baselines = [(k, v) for k, v in rows.items() if k != "PPO"]
    for (name, scores), style, color in zip(baselines, styles, ["C7", "C3", "C2", "C1"]):
        mean, half = mean_ci95(scores)
        ax.axhline(mean, color=color, linestyle=style, label=f"{name}: {mean:.1f} ± {half:.1f}")
    ax.set_xlabel("env steps (invocations)")
    ax.set_ylabel("Marathon-Score, held-out (return, training)")
    ax.set_title("PPO on SRE-Marathon: macro actions, full protocol, 16 test seeds")
    ax.legend(loc="lower right", fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    args = parse_args()
    import ray
    from ray.rllib.utils.metrics import (
        ENV_RUNNER_RESULTS,
        EPISODE_RETURN_MEAN,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
    )

    from sre_marathon_gym.evaluation.reports import mean_ci95
    from sre_marathon_gym.rllib import evaluate_policy, ppo_config, save_checkpoint, split_seeds, summarize

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    ray.init(address=args.address, include_dashboard=False, log_to_driver=False)

    env_config = {
        "intensity": args.intensity,
        "injection_minutes": args.injection_minutes,
        "observation_minutes": args.observation_minutes,
        "action_slots": args.action_slots,
        "action_encoding": args.action_encoding,
        "slots_per_step": args.action_slots,
    }
    if args.action_encoding == "macro":
        env_config["moves_per_step"] = args.moves
    if args.action_encoding == "discrete" and args.verbs != "all":
        env_config["verbs"] = [v.strip() for v in args.verbs.split(",") if v.strip()]
    steps_per_episode = (
        args.injection_minutes + args.observation_minutes
    ) * 60 // 120 - 1  # reset runs the first
    batch = args.batch_episodes * steps_per_episode
    config = ppo_config(
        args.app,
        env_config,
        num_env_runners=args.env_runners,
        num_envs_per_env_runner=args.envs_per_runner,
        seed=args.seed,
        train_batch_size_per_learner=batch,
        minibatch_size=max(batch // 4, 16),
        lr=args.lr,
        entropy_coeff=args.entropy_coeff,
    )
    algo = config.build_algo()
    untrained = save_checkpoint(algo, out / "checkpoint_0000")  # the same network before any update
    history: list[dict] = []
    t0 = time.time()
    ckpt = None
    try:
        for it in range(1, args.iterations + 1):
            r = algo.train()
            steps = r.get(
                NUM_ENV_STEPS_SAMPLED_LIFETIME, r[ENV_RUNNER_RESULTS].get(NUM_ENV_STEPS_SAMPLED_LIFETIME)
            )
            ret = r[ENV_RUNNER_RESULTS].get(EPISODE_RETURN_MEAN, float("nan"))
            stats = r.get("learners", {}).get("default_policy", {})
            entropy = float(stats.get("entropy", float("nan")))
            history.append(
                {
                    "iteration": it,
                    "env_steps": int(steps),
                    "episode_return_mean": float(ret),
                    "entropy": entropy,
                    "wall_s": round(time.time() - t0, 1),
                }
            )
            print(
                f"iter {it:3d}  env steps {int(steps):6d}  return {ret:6.2f}  entropy {entropy:5.2f}  "
                f"({time.time() - t0:.0f} s)",
                flush=True,
            )
            if it % args.checkpoint_every == 0 or it == args.iterations:
                ckpt = save_checkpoint(algo, out / f"checkpoint_{it:04d}")
    finally:
        algo.stop()

    seeds = split_seeds("test", args.eval_seeds)
    # the full leaderboard protocol (intensity 1, 60 + 30 min, 120 s) on held-out test seeds
    eval_config = {**env_config, "intensity": 1.0, "injection_minutes": 60, "observation_minutes": 30}
    kw = dict(num_workers=args.eval_workers, env_config=eval_config)
    ppo = evaluate_policy(ckpt, args.app, seeds, **kw)
    before = evaluate_policy(untrained, args.app, seeds, **kw)
    rnd = evaluate_policy("masked_random", args.app, seeds, **kw)
    runbook = evaluate_policy("runbook", args.app, seeds, **kw)
    reader = change_reader_scores(args.app, seeds, eval_config)
    rows = {
        "PPO": [r.marathon_score for r in ppo],
        "same network untrained": [r.marathon_score for r in before],
        "masked random (same encoding)": [r.marathon_score for r in rnd],
        "Runbook": [r.marathon_score for r in runbook],
        "change_reader (blames changes)": reader,
    }
    s_ppo = summarize(ppo)
    known = {0: rows["same network untrained"], history[-1]["iteration"]: rows["PPO"]}
    curve = held_out_curve(out, history, args.curve_every, args.app, seeds, kw, known)
    plot_curve(history, curve, rows, out / "learning_curve.png")
    results = {
        "env_config": env_config,
        "eval_config": eval_config,
        "env_steps": history[-1]["env_steps"],
        "history": history,
        "checkpoint": str(ckpt),
        "test_seeds": seeds,
        "ppo": s_ppo,
        "ppo_scores": rows["PPO"],
        "untrained_scores": rows["same network untrained"],
        "masked_random_scores": rows["masked random (same encoding)"],
        "runbook_scores": rows["Runbook"],
        "change_reader_scores": reader,
        "held_out_curve": curve,
        "ppo_localized": s_ppo["localized"],
        "ppo_repaired": s_ppo["repaired"],
        "ppo_correlated": s_ppo["correlated"],
    }
    (out / "results.json").write_text(json.dumps(results, indent=2))
    print(f"\ntrained on {history[-1]['env_steps']} env steps in {time.time() - t0:.0f} s; checkpoint {ckpt}")
    print(f"held-out test seeds ({len(seeds)}), full protocol, Marathon-Score (mean ± 95% half-width):")
    for name, scores in rows.items():
        mean, half = mean_ci95(scores)
        print(f"  {name:<32} {mean:6.1f} ± {half:4.1f}")
    print(
        f"  PPO stages: correlated {s_ppo['correlated']:.2f}, localized {s_ppo['localized']:.2f}, "
        f"repaired {s_ppo['repaired']:.2f}"
    )
    print(f"learning curve: {out / 'learning_curve.png'}")
    ray.shutdown()


if __name__ == "__main__":
    main()
