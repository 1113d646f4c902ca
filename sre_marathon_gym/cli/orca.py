"""`sre-marathon orca ...`: the task distribution and agent evaluation (kept out of `cli.commands`)."""

from __future__ import annotations

import argparse

from ..core.errors import ConfigurationError
from ..orca.world_spec import WorldSpec, fresh_world_seed
from .arg_types import positive_int, whole_number

# The baseline names (agents/orca_baselines.ORCA_AGENTS; a test keeps them equal). Spelled out so building
# the parser imports nothing heavy, and a bad name fails in argparse before the days are simulated.
AGENT_NAMES = ("empty", "heuristic", "oracle", "area_prior")
ADVERSARIAL_NAMES = ("every_flag", "every_flag_with_signals", "every_service")  # agents/adversarial.py


def _shipped_catalog_only(args: argparse.Namespace) -> None:
    """ORCA's world, tasks and judge are built from the shipped catalog (and cached on disk by its
    digest), so a --catalog would be silently ignored: refuse it instead."""
    if getattr(args, "catalog", None) is not None:
        raise ConfigurationError(
            "--catalog applies to the SRE-Marathon commands only; the orca commands read the "
            "ORCA files of the default catalog (the shipped one, or $SRE_MARATHON_CATALOG)"
        )


def _world(seed: str | None) -> WorldSpec:
    """None: the published schedule; "fresh": a seed drawn now; else the integer seed."""
    if seed is None:
        return WorldSpec()
    if seed == "fresh":
        return WorldSpec(fresh_world_seed())
    return WorldSpec(int(seed))


_SEED = whole_number(0, 2**63 - 1)


def world_seed(text: str) -> str:
    """argparse type of --seed/--world-seed: "fresh" or a whole number in [0, 2**63)."""
    if text == "fresh":
        return text
    return str(_SEED(text))


def cmd_orca_tasks(args: argparse.Namespace) -> int:
    _shipped_catalog_only(args)
    from ..evaluation.orca import distribution_table
    from ..orca.tasks import orca_tasks, tasks_digest

    world = _world(args.seed)
    tasks = orca_tasks(6, world)
    print(f"ORCA-bench tasks ({world.label}): {len(tasks)} (digest {tasks_digest(tasks)[:16]})")
    print(distribution_table(tasks))
    return 0


def cmd_orca_evaluate(args: argparse.Namespace) -> int:
    _shipped_catalog_only(args)
    from ..evaluation.orca import area_prior_scores, detail_table, evaluate, leaderboard_table
    from ..orca.world import orca_world

    world = _world(args.world_seed)
    if not world.published:
        print(f"world seed: {world.seed} (repeat with --world-seed {world.seed})")
    orca_world(world=world)  # simulate the days once, before the progress bar starts
    scores = evaluate(
        args.agent, limit=args.limit, source_access=not args.no_source, progress=True, world=world
    )
    print(
        f"tasks evaluated: {len(scores)} ({sum(not s.is_control for s in scores)} incident, "
        f"{sum(s.is_control for s in scores)} control) on the {world.label}"
    )
    print(leaderboard_table(args.agent, scores, health=area_prior_scores(world), world=world))
    if args.detail:
        print()
        print(detail_table(scores))
    return 0


def add_orca_parser(sub: argparse._SubParsersAction) -> None:
    orca = sub.add_parser("orca", help="ORCA-bench: root-cause analysis tasks over six simulated days")
    osub = orca.add_subparsers(dest="orca_command", required=True)
    t = osub.add_parser("tasks", help="print the task distribution (difficulty x time-to-detection)")
    t.add_argument(
        "--seed",
        type=world_seed,
        help="the tasks of a fresh six-day world drawn by this seed from the published schedule's "
        "distribution (or 'fresh': a seed drawn now); default: the published schedule",
    )
    t.set_defaults(func=cmd_orca_tasks)
    e = osub.add_parser("evaluate", help="run a baseline over the tasks; print the leaderboard columns")
    e.add_argument(
        "--agent",
        default="heuristic",
        choices=AGENT_NAMES + ADVERSARIAL_NAMES,
        help="the baseline to run (or a degenerate report of the adversarial suite); area_prior "
        "calls no tool and answers each task with what it fit on the other half of the tasks",
    )
    e.add_argument("--limit", type=positive_int, help="evaluate this many tasks (>= 1), spread over the list")
    e.add_argument("--no-source", action="store_true", help="the telemetry-only ablation (no read_source)")
    e.add_argument(
        "--detail", action="store_true", help="also print metrics by difficulty, TTD and scenario type"
    )
    e.add_argument(
        "--world-seed",
        type=world_seed,
        help="evaluate on a fresh six-day world drawn by this seed ('fresh': drawn now and printed); "
        "default: the published schedule",
    )
    e.set_defaults(func=cmd_orca_evaluate)
