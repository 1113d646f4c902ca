"""`sre-marathon` command line: catalog, run, evaluate (leaderboard) and score (offline, from bundles)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from collections.abc import Sequence

from .catalog import APPS, CATEGORIES, Catalog, load_catalog
from .errors import ConfigurationError, SREMarathonError, UnknownNameError
from .table import format_table


def catalog_summary(cat: Catalog) -> str:
    faults = cat.all_faults()
    counts = Counter((f.app, f.category) for f in faults)
    rows = [[app, *(counts[app, c] for c in CATEGORIES), len(cat.faults[app])] for app in APPS]
    rows.append(["total", *(sum(counts[a, c] for a in APPS) for c in CATEGORIES), len(faults)])
    shares = Counter(f.category for f in faults)
    code_config = (shares["code"] + shares["config"]) / len(faults)
    pack = cat.rules
    only = Counter(tuple(r.apps) for r in pack.rules if r.apps != "all")
    only_text = ", ".join(f"{n} {' '.join(a)} only" for a, n in only.items()) or "none app-specific"
    apps = ", ".join(f"{a} ({len(cat.apps[a].services)} services)" for a in APPS)
    return "\n".join([
        f"catalog {cat.root}: valid",
        f"apps: {apps}",
        f"{len(faults)} faults ({code_config:.1%} code or config)",
        format_table(["app", *CATEGORIES, "total"], rows),
        f"{len(pack.rules)} rules from {len(pack.templates)} templates ({only_text}); {len(cat.metrics.metrics)} metrics",
    ])


def cmd_catalog_validate(args: argparse.Namespace) -> int:
    cat = load_catalog(args.catalog)
    print(catalog_summary(cat))
    if not args.simulate:
        return 0
    from .sim.validation import validate_catalog

    if args.app:
        cat.app(args.app)
    checks = validate_catalog(cat, [args.app] if args.app else None)
    by: dict[tuple[str, str], list] = {}
    for c in checks:
        by.setdefault((c.app, c.mechanism), []).append(c)
    rows = [[app, mech, len(cs), sum(c.fails for c in cs), sum(c.entry_serves for c in cs), sum(c.recovers for c in cs),
             sum(c.repaired_by is not None for c in cs), sum(c.passed for c in cs)] for (app, mech), cs in sorted(by.items())]
    passed = sum(c.passed for c in checks)
    rows.append(["total", "", len(checks), sum(r[3] for r in rows), sum(r[4] for r in rows), sum(r[5] for r in rows),
                 sum(r[6] for r in rows), passed])
    print(format_table(["app", "mechanism", "faults", "probe fails", "entry serves", "recovers", "remedy repairs", "pass"], rows))
    for c in checks:
        if not c.passed and args.verbose:
            print(f"  {c.fault_id}: fails={c.fails} serves={c.entry_serves} recovers={c.recovers} repaired_by={c.repaired_by} {c.note}")
    return 0 if passed == len(checks) else 1


def cmd_catalog_list(args: argparse.Namespace) -> int:
    cat = load_catalog(args.catalog)
    if args.app:
        cat.app(args.app)
    if args.category and args.category not in CATEGORIES:
        raise UnknownNameError("category", args.category, CATEGORIES)
    faults = [f for f in cat.all_faults() if (not args.app or f.app == args.app)
              and (not args.category or f.category == args.category)]
    rows = [[f.id, f.category, f.mechanism, f.target, f.probe.kind, f.title] for f in faults]
    print(format_table(["id", "category", "mechanism", "target", "probe", "title"], rows))
    print(f"{len(faults)} faults")
    return 0


def cmd_catalog_show(args: argparse.Namespace) -> int:
    import yaml

    cat = load_catalog(args.catalog)
    fault = cat.fault(args.id)
    print(yaml.safe_dump(fault.model_dump(mode="json", exclude_none=True), sort_keys=False, width=110).rstrip())
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """One episode with a progress bar; prints the score card and writes the sealed bundle."""
    import gymnasium as gym
    from tqdm import tqdm

    from .agents import make_agent
    from .agents.base import run_episode
    from .bundle import write_bundle
    from .evaluation import ENV_BY_APP
    from .scoring import score_run

    cat = load_catalog(args.catalog)
    cat.app(args.app)
    agent = make_agent(args.agent)
    kwargs = {"mode": args.mode, "catalog": cat}
    if args.mode == "train":
        kwargs.update(intensity=args.intensity, injection_minutes=args.injection_minutes,
                      observation_minutes=args.observation_minutes)
    env = gym.make(ENV_BY_APP[args.app], **kwargs)
    seed = args.seed if args.mode == "train" else None
    if args.mode == "eval" and args.seed is not None and args.seed != cat.leaderboard.seed_for(args.app):
        raise ConfigurationError(f"--mode eval runs the leaderboard seed {cat.leaderboard.seed_for(args.app)}; "
                                 f"use --mode train for seed {args.seed}")
    steps = env.unwrapped.run_s // env.unwrapped.interval_s - 1
    with tqdm(total=steps, desc=f"{args.app} / {args.agent}", unit="invocation") as bar:
        record = run_episode(env, agent, seed=seed, progress=bar.update)
    card = score_run(record, cat.scoring)
    print(card.first_line())
    print(card.as_table().split("\n", 2)[2])
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        path = write_bundle(Path(args.out) / f"{args.app}-{args.agent}-{record.manifest.seed}.bundle", record,
                            store=env.unwrapped.sim.store, catalog=cat)
        print(f"bundle: {path}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    """The leaderboard protocol for the chosen agents on all apps, with the published numbers beside."""
    from .evaluation import evaluate, leaderboard_table, outcome_chart, outcome_table

    cat = load_catalog(args.catalog)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    from .agents import make_agent

    for a in agents:
        make_agent(a)  # unknown names fail here, before any run starts
    apps = [a.strip() for a in args.apps.split(",")] if args.apps else None
    for a in apps or []:
        cat.app(a)
    if args.checkpoint:  # a trained RLlib policy on the leaderboard protocol
        from .rllib import evaluate_checkpoint_on_leaderboard

        results = evaluate_checkpoint_on_leaderboard(args.checkpoint, out=args.out, catalog=cat)
    else:
        results = evaluate(agents, apps, extra_seeds=args.seeds, out=args.out, workers=args.workers, catalog=cat)
    print(leaderboard_table(results, cat))
    labelled = [(f"{s.agent} / {s.app}", c) for s, c, _ in results if s.mode == "eval"]
    print()
    print(outcome_table(labelled))
    if args.out:
        print(f"\nbundles and figure in {args.out}: {outcome_chart(labelled, Path(args.out) / 'outcomes.png')}")
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    """Verify each bundle's seal and recompute every metric from the bundle alone."""
    from .bundle import score_bundles
    from .evaluation import outcome_chart, outcome_table

    cat = load_catalog(args.catalog)
    cards = score_bundles([Path(p) for p in args.bundles], cat)
    for path, card in zip(args.bundles, cards):
        print(f"{path}: verified")
        print(card.as_table())
        print()
    labelled = [(Path(p).stem, c) for p, c in zip(args.bundles, cards)]
    print(outcome_table(labelled))
    if args.png:
        print(f"figure: {outcome_chart(labelled, args.png)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sre-marathon", description=__doc__)
    parser.add_argument("--catalog", metavar="DIR", help="catalog directory (default: the shipped one)")
    sub = parser.add_subparsers(dest="command", required=True)

    catalog = sub.add_parser("catalog", help="inspect and validate the catalog")
    csub = catalog.add_subparsers(dest="catalog_command", required=True)
    v = csub.add_parser("validate", help="validate every catalog file and print counts")
    v.add_argument("--simulate", action="store_true", help="also inject every fault alone into the simulator")
    v.add_argument("--app", help="with --simulate: only this app")
    v.add_argument("--verbose", action="store_true", help="with --simulate: list each failing fault")
    v.set_defaults(func=cmd_catalog_validate)
    ls = csub.add_parser("list", help="list faults")
    ls.add_argument("--app", choices=None, help=f"one of {', '.join(APPS)}")
    ls.add_argument("--category", help=f"one of {', '.join(CATEGORIES)}")
    ls.set_defaults(func=cmd_catalog_list)
    show = csub.add_parser("show", help="show one fault")
    show.add_argument("id")
    show.set_defaults(func=cmd_catalog_show)

    run = sub.add_parser("run", help="run one episode with an agent and write its sealed bundle")
    run.add_argument("--app", required=True, choices=APPS)
    run.add_argument("--agent", default="runbook", help="noop, random, runbook or oracle")
    run.add_argument("--seed", type=int, help="train mode: the schedule's seed (default: drawn)")
    run.add_argument("--mode", choices=("eval", "train"), default="eval",
                     help="eval: the leaderboard protocol (default); train: any seed and schedule settings")
    run.add_argument("--intensity", type=float, default=1.0, help="train mode: fault-rate multiplier")
    run.add_argument("--injection-minutes", type=int, default=60)
    run.add_argument("--observation-minutes", type=int, default=30)
    run.add_argument("--out", metavar="DIR", default="runs", help="where the bundle goes (default: runs/)")
    run.set_defaults(func=cmd_run)

    ev = sub.add_parser("evaluate", help="leaderboard mode: agents x apps on the leaderboard seeds")
    ev.add_argument("--agents", default="noop,random,runbook,oracle", help="comma-separated agent names")
    ev.add_argument("--apps", help="comma-separated apps (default: all three)")
    ev.add_argument("--seeds", type=int, default=0, help="extra seeds per app for a mean and 95%% interval")
    ev.add_argument("--workers", type=int, help="parallel processes (default: one per core)")
    ev.add_argument("--checkpoint", metavar="PATH", help="evaluate a trained RLlib checkpoint instead of --agents")
    ev.add_argument("--out", metavar="DIR", default="runs/leaderboard", help="bundles and the outcome figure")
    ev.set_defaults(func=cmd_evaluate)

    sc = sub.add_parser("score", help="verify sealed bundles and recompute every metric offline")
    sc.add_argument("bundles", nargs="+")
    sc.add_argument("--png", help="also write the per-fault outcome chart (Figure 9) here")
    sc.set_defaults(func=cmd_score)

    from .orca.cli import add_orca_parser

    add_orca_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except SREMarathonError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
