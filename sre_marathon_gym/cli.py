"""`sre-marathon` command line: catalog inspection now; run, evaluate and score as they land."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence

from .catalog import APPS, CATEGORIES, Catalog, load_catalog
from .errors import SREMarathonError, UnknownNameError
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
