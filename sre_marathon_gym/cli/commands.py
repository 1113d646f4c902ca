"""`sre-marathon` command line: catalog, run, evaluate (leaderboard), score (offline, from bundles) and
export-prometheus."""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ..catalog import APPS, CATEGORIES, Catalog, load_catalog
from ..catalog.settings import RULES_VERSIONS
from ..core.clock import DEFAULT_ORIGIN_S, MAX_ORIGIN_S
from ..core.errors import ConfigurationError, RunInterrupted, SREMarathonError, UnknownNameError
from ..core.table import format_table
from ..envs.inputs import MAX_SEED
from ..evaluation.reports import llm_accounting_table
from .arg_types import clip, file_with_suffix, name_list, non_negative_int, positive_int, whole_number

if TYPE_CHECKING:
    from ..evaluation.episode_runner import ScoredEpisode
    from ..recording.bundle import Bundle

# agents/adversarial.py and adversarial_v3.py (spelled out so building the parser imports no agent;
# a test keeps them equal)
ADVERSARIAL_NAMES = (
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
)

SEED_LIMIT = MAX_SEED + 1  # the env's bound (envs/inputs.py): one definition
"""Seeds are whole numbers in [0, SEED_LIMIT): see `seed_int`."""
INTERRUPTED_EXIT = 130  # the shell's code for a run stopped by SIGINT (Ctrl-C)
_llm_accounting = llm_accounting_table  # its name before it moved to evaluation.reports


def seed_int(text: str) -> int:
    """A schedule seed: a whole number in [0, 2**63).

    Why the bound: numpy's SeedSequence and the env would take any non-negative int, but a seed is
    also a bundle field, an RLlib config value and a file name; 2**63 keeps it an int64 everywhere
    (the env draws its own seeds below 2**31). Negative seeds fail inside gymnasium's seeding."""
    body = text.strip()
    if re.fullmatch(r"[+-]?[0-9]+", body) is None:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {clip(text)}")
    if len(body) > 25 or not 0 <= int(body) < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"must be a whole number in [0, 2**63), got {clip(text)}")
    return int(body)


def seed_base_arg(text: str) -> int | str:
    """``--seed-base``: a seed (`seed_int`) or ``fresh`` (drawn when the evaluation starts)."""
    if text.strip().lower() == "fresh":
        return "fresh"
    return seed_int(text)


def check_out_dir(out: str | os.PathLike[str], option: str = "--out") -> Path:
    """Refuse an output directory that cannot be created or written, before anything is simulated.

    Why a probe file and not `os.access`: access() says yes to root on a read-only mount and ignores
    ACLs; creating (and removing) a hidden file in the nearest existing directory asks the real
    question. Nothing is created when `out` is refused, and nothing stays behind when it is not."""
    if not str(out).strip():
        raise ConfigurationError(f"{option} is empty: name a directory (use . for the current one)")
    path = Path(out)
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    if not os.path.isdir(probe):
        where = (
            "exists and is not a directory"
            if probe == path
            else f"cannot be created: {probe} is not a directory"
        )
        raise ConfigurationError(f"{option} {out} {where}")
    try:
        fd, name = tempfile.mkstemp(dir=probe, prefix=".sre-marathon-probe-")
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        why = exc.strerror or exc
        raise ConfigurationError(f"{option} {out}: cannot write into {probe} ({why})") from None
    return path


def _one_line(text: str) -> str:
    """Errors go to stderr on one line (a multi-line message, e.g. a catalog's problem list, is joined)."""
    return " ".join(line.strip() for line in str(text).splitlines() if line.strip())


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``sre-marathon run: error: ... (see --help)``), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


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
    return "\n".join(
        [
            f"catalog {cat.root}: valid",
            f"apps: {apps}",
            f"{len(faults)} faults ({code_config:.1%} code or config)",
            format_table(["app", *CATEGORIES, "total"], rows),
            f"{len(pack.rules)} rules from {len(pack.templates)} templates ({only_text}); "
            f"{len(cat.metrics.metrics)} metrics",
        ]
    )


def cmd_catalog_validate(args: argparse.Namespace) -> int:
    cat = load_catalog(args.catalog)
    if args.app:
        cat.app(args.app)  # an unknown app is refused with or without --simulate
    print(catalog_summary(cat))
    if not args.simulate:
        return 0
    from ..backends.fault_check import validate_catalog

    checks = validate_catalog(cat, [args.app] if args.app else None)
    by: dict[tuple[str, str], list] = {}
    for c in checks:
        by.setdefault((c.app, c.mechanism), []).append(c)
    rows = [
        [
            app,
            mech,
            len(cs),
            sum(c.fails for c in cs),
            sum(c.entry_serves for c in cs),
            sum(c.recovers for c in cs),
            sum(c.repaired_by is not None for c in cs),
            sum(c.passed for c in cs),
        ]
        for (app, mech), cs in sorted(by.items())
    ]
    passed = sum(c.passed for c in checks)
    rows.append(
        [
            "total",
            "",
            len(checks),
            sum(r[3] for r in rows),
            sum(r[4] for r in rows),
            sum(r[5] for r in rows),
            sum(r[6] for r in rows),
            passed,
        ]
    )
    print(
        format_table(
            [
                "app",
                "mechanism",
                "faults",
                "probe fails",
                "entry serves",
                "recovers",
                "remedy repairs",
                "pass",
            ],
            rows,
        )
    )
    for c in checks:
        if not c.passed and args.verbose:
            print(
                f"  {c.fault_id}: fails={c.fails} serves={c.entry_serves} recovers={c.recovers} "
                f"repaired_by={c.repaired_by} {c.note}"
            )
    return 0 if passed == len(checks) else 1


def cmd_catalog_list(args: argparse.Namespace) -> int:
    cat = load_catalog(args.catalog)
    if args.app:
        cat.app(args.app)
    if args.category and args.category not in CATEGORIES:
        raise UnknownNameError("category", args.category, CATEGORIES)
    faults = [
        f
        for f in cat.all_faults()
        if (not args.app or f.app == args.app) and (not args.category or f.category == args.category)
    ]
    rows = [[f.id, f.category, f.mechanism, f.target, f.probe.kind, f.title] for f in faults]
    print(format_table(["id", "category", "mechanism", "target", "probe", "title"], rows))
    print(f"{len(faults)} faults")
    return 0


def cmd_catalog_show(args: argparse.Namespace) -> int:
    import yaml

    cat = load_catalog(args.catalog)
    fault = cat.fault(args.id)
    print(
        yaml.safe_dump(fault.model_dump(mode="json", exclude_none=True), sort_keys=False, width=110).rstrip()
    )
    return 0


def _run(
    cat: Catalog,
    app: str,
    agent_name: str,
    mode: str,
    seed: int | None,
    agent_options: dict | None = None,
    out: str | None = None,
    **train: object,
) -> ScoredEpisode:
    """One episode with a progress bar (`episode_runner.run_scored_episode`): an LLM agent's
    endpoint is checked first and its client closed at the end; the bundle goes to `out`, and a run
    that fails leaves ``<out>/<app>-<agent>-<seed>.incomplete.bundle`` (Ctrl-C says so:
    `RunInterrupted`)."""
    from ..evaluation.episode_runner import make_marathon_env, run_scored_episode

    cat.app(app)
    lb_seed = cat.leaderboard.seed_for(app)
    if mode == "eval" and seed is not None and seed != lb_seed:
        raise ConfigurationError(
            f"--mode eval runs the leaderboard seed {lb_seed}; use --mode train for seed {seed}"
        )
    schedule = train if mode == "train" else {}
    return run_scored_episode(
        lambda: make_marathon_env(app, mode, cat, **schedule),
        agent_name,
        agent_options=agent_options,
        seed=seed if mode == "train" else None,
        out=out,
        bar=f"{app} / {agent_name}",
        preflight=True,
        interrupt_as_error=True,
    )


def _schedule_options(args: argparse.Namespace, cat: Catalog) -> dict[str, object]:
    """--intensity, --injection-minutes and --observation-minutes, refused outside --mode train.

    Why refuse: eval mode runs the leaderboard protocol as published; silently ignoring the options
    would label a run that the user believes is shorter or harder as a leaderboard run."""
    given = {
        k: v
        for k, v in (
            ("intensity", args.intensity),
            ("injection_minutes", args.injection_minutes),
            ("observation_minutes", args.observation_minutes),
        )
        if v is not None
    }
    if given and args.mode != "train":
        lb = cat.leaderboard
        flags = ", ".join("--" + k.replace("_", "-") for k in given)
        protocol = f"{lb.injection_minutes} + {lb.observation_minutes} min, intensity 1"
        raise ConfigurationError(
            f"{flags}: only with --mode train; --mode eval (the default) runs the "
            f"leaderboard protocol ({protocol})"
        )
    return given


def cmd_run(args: argparse.Namespace) -> int:
    """One episode with a progress bar; prints the score card and writes the sealed bundle."""
    from ..agents import is_llm_agent

    cat = load_catalog(args.catalog)
    if is_llm_agent(args.agent):
        options = _llm_options(args, cat)
    elif any((args.model, args.base_url, args.pricing, args.price)):
        raise ConfigurationError(
            f"--model, --base-url, --pricing and --price are for the LLM agents "
            f"(react, rag, keep), not {args.agent!r}"
        )
    else:
        options = {}
    schedule = _schedule_options(args, cat)
    if args.out:
        check_out_dir(args.out)
    run = _run(
        cat, args.app, args.agent, args.mode, args.seed, agent_options=options, out=args.out, **schedule
    )
    print(run.card.first_line())
    if args.context:
        from ..evaluation.reports import baseline_context

        own = (args.agent, run.card.marathon_score)
        print(baseline_context(cat, args.app, args.mode, run.seed, schedule, own))
    print(run.card.as_table().split("\n", 2)[2])
    if run.bundle is not None:
        print(f"bundle: {run.bundle}")
        if args.report:
            from ..run_report import write_report

            print(f"report: {write_report([run.bundle])}")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve episodes to an MCP-speaking harness (stdio, or streamable HTTP on 127.0.0.1)."""
    from ..mcp_server import serve
    from ..mcp_server.episode import check_mode_seed

    cat = load_catalog(args.catalog)
    if (args.app is None) == (args.orca is None):
        raise ConfigurationError("mcp serves --app A (SRE-Marathon) or --orca TASK_ID (ORCA-bench): name one")
    schedule = _schedule_options(args, cat)
    if args.orca is not None and (schedule or args.seed is not None or args.mode != "eval"):
        raise ConfigurationError(
            "--orca serves one ORCA task as published: drop --mode, --seed and the schedule"
        )
    if args.app is not None:
        cat.app(args.app)
    check_mode_seed(args.mode, args.seed)
    if args.out:
        check_out_dir(args.out)
    serve(args.app, args.mode, args.seed, args.out, args.http, cat, schedule, args.orca, args.label)
    return 0


def cmd_export_prometheus(args: argparse.Namespace) -> int:
    """A run's metrics into a Prometheus TSDB (and optionally served, and checked with promtool)."""
    from ..prometheus import PrometheusServer
    from ..prometheus.export import export_run
    from ..prometheus.rule_tests import run_promtool_tests, write_rule_tests

    cat = load_catalog(args.catalog)
    if (args.bundle is None) == (args.app is None):
        raise ConfigurationError("give either a BUNDLE or --app (with optional --seed and --agent)")
    if args.bundle is not None and (args.seed is not None or args.agent is not None):
        raise ConfigurationError("--seed and --agent choose the run to simulate: use them with --app only")
    if args.port is not None and not args.serve:
        raise ConfigurationError("--port is the port --serve listens on: use it with --serve")
    check_out_dir(args.out)
    if args.bundle is not None:
        from ..recording.bundle import load_bundle

        bundle = load_bundle(args.bundle)
        if bundle.telemetry is None:
            raise ConfigurationError(f"{args.bundle}: the bundle holds no telemetry")
        source, app = bundle.telemetry.metric_store(), bundle.record.manifest.app
    else:
        lb_seed = cat.leaderboard.seed_for(args.app)
        mode = "eval" if args.seed in (None, lb_seed) else "train"
        agent = "noop" if args.agent is None else args.agent
        source, app = _run(cat, args.app, agent, mode, args.seed).store, args.app
    summary = export_run(source, args.out, origin_s=args.origin, overwrite=args.overwrite)
    print(f"{summary['series']} series, {summary['samples']} samples -> {summary['openmetrics']}")
    print(
        f"backfilled {len(summary['blocks'])} block(s) into {summary['data_dir']} "
        f"(Prometheus time {summary['start']}..{summary['end']}: simulated t=0 is {summary['origin_s']})"
    )
    if args.rule_tests:
        path, stats = write_rule_tests(Path(args.out) / "rule-tests", cat, cat.app(app), source)
        ok, output = run_promtool_tests(path)
        print(
            f"promtool test rules {path}: {'PASS' if ok else 'FAIL'} ({stats['alert_checks']} alert checks "
            f"at "
            f"{stats['checked_times']} evaluations; {stats['alerts_fired']} alerts fired, "
            f"{stats['alerts_resolved']} resolved, {stats['pending_expected']} pending samples)"
        )
        if not ok:
            print(output[-5000:])
            return 1
    if args.serve:
        import time

        with PrometheusServer(summary["data_dir"], port=args.port) as prom:
            print(f"Prometheus (pid {prom.pid}) serving the run at {prom.url}  (Ctrl-C stops it)")
            print(
                f"  e.g. {prom.url}/graph?g0.expr=sum%20by%20(service_name)%20"
                "(rate(traces_span_metrics_calls_total[2m]))"
                f"&g0.range_input=2h&g0.end_input={summary['end']}"
            )
            try:
                while prom.process.poll() is None:
                    time.sleep(1)
            except KeyboardInterrupt:
                pass
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    """The leaderboard protocol for the chosen agents on all apps, with the published numbers beside."""
    from ..evaluation.leaderboard import EXTRA_SEED_BASE, evaluate
    from ..evaluation.reports import leaderboard_table, outcome_chart, outcome_table

    cat = load_catalog(args.catalog)
    agents = args.agents
    from ..agents import is_llm_agent, make_agent

    llm_options = _llm_options(args, cat) if any(is_llm_agent(a) for a in agents) else {}
    for a in agents:
        if a.startswith("ppo:"):  # its description only: torch here would deadlock forked workers
            from ..rllib.training import read_checkpoint_env_config

            read_checkpoint_env_config(a.removeprefix("ppo:"))
        else:  # unknown names, missing model/extra fail here
            make_agent(a, **(llm_options if is_llm_agent(a) else {}))
    apps = args.apps
    for a in apps or []:
        cat.app(a)
    if args.out:
        check_out_dir(args.out)
    seed_base = args.seed_base
    if seed_base is not None and (args.seeds == 0 or args.checkpoint):
        raise ConfigurationError("--seed-base sets the extra seeds: use it with --seeds N (and --agents)")
    if args.ray is not None and (args.checkpoint or args.workers):
        raise ConfigurationError("--ray runs the agents' grid as Ray tasks: drop --checkpoint and --workers")
    if seed_base == "fresh":
        from ..evaluation.leaderboard import fresh_seed_base

        seed_base = fresh_seed_base()
    if seed_base is not None and seed_base + args.seeds > SEED_LIMIT:
        raise ConfigurationError(f"--seed-base {seed_base} + --seeds {args.seeds} passes the largest seed")
    if seed_base is not None:
        print(f"extra seeds: {seed_base}..{seed_base + args.seeds - 1} (repeat with --seed-base {seed_base})")
    if args.checkpoint:  # a trained RLlib policy on the leaderboard protocol
        from ..rllib import evaluate_checkpoint_on_leaderboard

        results = evaluate_checkpoint_on_leaderboard(args.checkpoint, out=args.out, catalog=cat)
    else:
        results = evaluate(
            agents,
            apps,
            extra_seeds=args.seeds,
            out=args.out,
            workers=args.workers,
            catalog=cat,
            agent_options=llm_options,
            seed_base=EXTRA_SEED_BASE if seed_base is None else seed_base,
            ray_address=args.ray,
        )
    print(leaderboard_table(results, cat))
    if llm_options:
        print()
        print(llm_accounting_table(results, cat))
    labelled = [(f"{s.agent} / {s.app}", c) for s, c, _ in results if s.mode == "eval"]
    print()
    print(outcome_table(labelled))
    if args.out:
        print(
            f"\nbundles and figure in {args.out}: {outcome_chart(labelled, Path(args.out) / 'outcomes.png')}"
        )
    if args.report:
        from ..run_report import write_report

        for _, _, path in results:
            if path:
                print(f"report: {write_report([path])}")
    return 0


def _llm_options(args: argparse.Namespace, cat: Catalog) -> dict:
    """Options for the LLM agents from --model, --base-url, --pricing, --price (the key stays in the env)."""
    opts: dict = {"model": args.model, "base_url": args.base_url}
    if args.pricing:
        from ..catalog.loader import parse_model
        from ..catalog.pricing import Pricing

        opts["pricing"] = parse_model(Path(args.pricing), Pricing)
    if args.price:
        from pydantic import ValidationError

        from ..agents.llm.config import describe_errors
        from ..catalog.pricing import ModelPrice

        try:  # checked here, before any run: a bad price must not surface inside a worker
            ModelPrice(name="--price", input_per_mtok=args.price[0], output_per_mtok=args.price[1])
        except ValidationError as exc:
            raise ConfigurationError(f"--price IN OUT: {describe_errors(exc)}") from None
        opts["price"] = (args.price[0], args.price[1])
    return opts


def cmd_score(args: argparse.Namespace) -> int:
    """Verify each bundle's seal and recompute every metric from the bundle alone.

    The rules and weights are the ones sealed in the bundle (rules v1 for a bundle sealed before
    rule sets were versioned) unless `--catalog` or `--rules` says otherwise. Every bundle is checked
    before anything is printed: an incomplete bundle (sealed so, whatever its file name) is refused
    unless --allow-incomplete, and so is a --catalog (or, for a bundle that seals no weights, the
    shipped catalog) other than the one the run used, unless --rescore-with-catalog."""
    from ..evaluation.reports import outcome_chart, outcome_table
    from ..recording.rescoring import score_bundle

    rules = None if args.rules is None else int(args.rules.lstrip("v"))
    cat = load_catalog(args.catalog) if args.catalog else None
    scored = [
        score_bundle(
            Path(p),
            cat,
            rules=rules,
            allow_incomplete=args.allow_incomplete,
            rescore_with_catalog=args.rescore_with_catalog,
        )
        for p in args.bundles
    ]
    for path, (bundle, card) in zip(args.bundles, scored):
        status = (
            "verified"
            if bundle.info.complete
            else f"verified; INCOMPLETE ({bundle.info.describe_incomplete()})"
        )
        source = _scoring_source(bundle, cat, rules)
        print(f"{path}: {status}; scored under rules v{card.rules_version} ({source})")
        print(card.as_table())
        print()
    labelled = [
        (Path(p).stem + ("" if b.info.complete else " (INCOMPLETE)"), c)
        for p, (b, c) in zip(args.bundles, scored)
    ]
    print(outcome_table(labelled))
    if args.png:
        print(f"figure: {outcome_chart(labelled, args.png)}")
    return 0


def _scoring_source(bundle: Bundle, cat: Catalog | None, rules: int | None) -> str:
    """Where the weights came from, as `score` prints it; a deliberate rescore says so."""
    from ..recording.bundle import catalog_digest

    if rules is not None:
        source = "--rules"
    elif cat is not None:
        source = "--catalog"
    elif bundle.scoring is not None:
        source = "sealed in the bundle"
    else:
        source = "the shipped catalog: the bundle seals no weights"
    if bundle.scoring is None and cat is None:
        cat = load_catalog()
    sealed = bundle.info.catalog_digest
    if cat is not None and sealed is not None and sealed != catalog_digest(cat):
        source += f"; --rescore-with-catalog: the run used catalog {sealed[:19]}..."
    return source


def _add_schedule_arguments(p: argparse.ArgumentParser) -> None:
    """--seed, --mode and the train-mode schedule (`run` and `mcp` alike; checked by `_schedule_options`)."""
    p.add_argument(
        "--seed", type=seed_int, help="train mode: the schedule's seed, in [0, 2**63) (default: drawn)"
    )
    p.add_argument(
        "--mode",
        choices=("eval", "train"),
        default="eval",
        help="eval: the leaderboard protocol (default); train: any seed and schedule settings",
    )
    p.add_argument("--intensity", type=float, help="train mode only: fault-rate multiplier (default 1)")
    p.add_argument("--injection-minutes", type=int, help="train mode only (default: the leaderboard's, 60)")
    p.add_argument("--observation-minutes", type=int, help="train mode only (default: the leaderboard's, 30)")


def _add_llm_arguments(p: argparse.ArgumentParser) -> None:
    """The LLM agents' endpoint and price options (`run` and `evaluate` alike; parsed by `_llm_options`)."""
    p.add_argument("--model", help="LLM agents: model name (default: $SRE_MARATHON_MODEL)")
    p.add_argument(
        "--base-url",
        help="LLM agents: OpenAI-compatible endpoint (default: $OPENAI_BASE_URL; "
        "the key is read from $OPENAI_API_KEY)",
    )
    p.add_argument(
        "--pricing", metavar="FILE", help="LLM agents: a price table (catalog/pricing.yaml's schema)"
    )
    p.add_argument(
        "--price",
        nargs=2,
        type=float,
        metavar=("IN", "OUT"),
        help="LLM agents: USD per million input and output tokens (overrides the table)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sre-marathon", description=__doc__)
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
    run.add_argument(
        "--agent",
        default="runbook",
        help="noop, random, runbook, change_correlator or oracle; LLM methods: react, rag, keep; or an "
        "adversarial policy: " + ", ".join(ADVERSARIAL_NAMES),
    )
    _add_schedule_arguments(run)
    run.add_argument(
        "--out",
        metavar="DIR",
        default="runs",
        help="where the bundle goes (default: runs/); checked before the run starts",
    )
    run.add_argument(
        "--report",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="write the run report beside the bundle (X.html; default: yes)",
    )
    run.add_argument(
        "--context",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="place the score: run noop, runbook and oracle on the same seed too (default: yes; a few "
        "seconds)",
    )
    _add_llm_arguments(run)
    run.set_defaults(func=cmd_run)

    ev = sub.add_parser("evaluate", help="leaderboard mode: agents x apps on the leaderboard seeds")
    ev.add_argument(
        "--agents",
        "--agent",
        type=name_list,
        default=["noop", "random", "runbook", "oracle"],
        help="comma-separated agent names; LLM methods: react, rag, keep; ppo:PATH, a checkpoint "
        "examples/train_ppo.py wrote (rllib extra); the adversarial suite "
        "(benchmark-health checks): " + ", ".join(ADVERSARIAL_NAMES),
    )
    ev.add_argument("--apps", type=name_list, help="comma-separated apps (default: all three)")
    ev.add_argument(
        "--seeds", type=non_negative_int, default=0, help="extra seeds per app for a mean and 95%% interval"
    )
    ev.add_argument(
        "--seed-base",
        type=seed_base_arg,
        metavar="B|fresh",
        help="the extra seeds are B, B+1, ... (default 10000); 'fresh' draws B at random when the "
        "evaluation starts and prints it: the public seeds can be memorised, fresh ones cannot",
    )
    ev.add_argument("--workers", type=positive_int, help="parallel processes (default: one per core)")
    ev.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="run the grid as Ray tasks instead of processes: a local Ray, or the cluster at ADDRESS "
        "(what ray.init takes, e.g. auto); its workers must see the catalog and --out",
    )
    ev.add_argument(
        "--checkpoint", metavar="PATH", help="evaluate a trained RLlib checkpoint instead of --agents"
    )
    ev.add_argument("--out", metavar="DIR", default="runs/leaderboard", help="bundles and the outcome figure")
    ev.add_argument("--report", action="store_true", help="also write each run's report beside its bundle")
    _add_llm_arguments(ev)
    ev.set_defaults(func=cmd_evaluate)

    mc = sub.add_parser("mcp", help="serve episodes to an MCP-speaking agent harness (stdio or HTTP)")
    mc.add_argument("--app", choices=APPS, help="serve SRE-Marathon episodes of this app")
    mc.add_argument(
        "--orca", metavar="TASK_ID", help="serve this ORCA-bench task instead (orca tasks lists them)"
    )
    _add_schedule_arguments(mc)
    mc.add_argument("--out", metavar="DIR", default="runs", help="where each episode's bundle goes")
    mc.add_argument("--label", default="mcp", help="the harness's name in bundles (<app>-<label>-<seed>)")
    mc.add_argument(
        "--http",
        nargs="?",
        const=0,
        type=whole_number(0, 65535),
        metavar="PORT",
        help="streamable HTTP on 127.0.0.1:PORT/mcp, one episode per session (default port: a free "
        "one, printed); without it: stdio, one episode",
    )
    mc.set_defaults(func=cmd_mcp)

    ex = sub.add_parser(
        "export-prometheus", help="backfill a run's metrics into a Prometheus TSDB (and serve it)"
    )
    ex.add_argument("bundle", nargs="?", help="a sealed run bundle (or use --app)")
    ex.add_argument("--app", choices=APPS, help="simulate this app instead of reading a bundle")
    ex.add_argument(
        "--seed", type=seed_int, help="with --app: the schedule seed (default: the leaderboard seed)"
    )
    ex.add_argument("--agent", help="with --app: who operates the run (default: noop)")
    ex.add_argument(
        "--out", metavar="DIR", required=True, help="gets metrics.om, data/ (the TSDB) and prometheus.yml"
    )
    ex.add_argument(
        "--origin",
        type=whole_number(0, MAX_ORIGIN_S),
        default=DEFAULT_ORIGIN_S,
        help=f"Unix seconds of simulated t=0 (default {DEFAULT_ORIGIN_S} = 2026-01-01T00:00:00Z)",
    )
    ex.add_argument("--overwrite", action="store_true", help="replace an existing DIR/data")
    ex.add_argument(
        "--rule-tests",
        action="store_true",
        help="also generate promtool rule unit tests from the run and run them",
    )
    ex.add_argument(
        "--serve", action="store_true", help="start prometheus on 127.0.0.1 over the TSDB until Ctrl-C"
    )
    ex.add_argument("--port", type=whole_number(1, 65535), help="with --serve (default: a free port)")
    ex.set_defaults(func=cmd_export_prometheus)

    sc = sub.add_parser("score", help="verify sealed bundles and recompute every metric offline")
    sc.add_argument("bundles", nargs="+")
    sc.add_argument(
        "--png", type=file_with_suffix(".png"), help="also write the per-fault outcome chart (Figure 9) here"
    )
    sc.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="also score bundles sealed as INCOMPLETE (a run that stopped early: its unreached "
        "faults count as missed, so the number is not the run's Marathon-Score)",
    )
    sc.add_argument(
        "--rescore-with-catalog",
        action="store_true",
        help="score with --catalog DIR (or, for a bundle that seals no weights, the shipped "
        "catalog) even though the run used another catalog (different digest)",
    )
    sc.add_argument(
        "--rules",
        choices=[f"v{v}" for v in RULES_VERSIONS],
        help="rescore under this Marathon-Score rule set (default: the one sealed in the bundle; "
        "v1 is the literal reading of the paper, v2 the first sound one, v3 the default)",
    )
    sc.set_defaults(func=cmd_score)

    from .orca import add_orca_parser
    from .report import add_report_parser
    from .stats import add_stats_parser

    add_report_parser(sub)
    add_orca_parser(sub)
    add_stats_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Errors (the package's own and the file system's) are one line on stderr with
    exit code 2, argparse's too; a run stopped with Ctrl-C says where its partial recording went and
    exits with 130. Anything else is a bug and keeps its traceback."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except RunInterrupted as exc:
        print(f"interrupted: {_one_line(str(exc))}", file=sys.stderr)
        return INTERRUPTED_EXIT
    except SREMarathonError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED_EXIT
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the file system refused something (a --png path, a full disk): not a bug
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
