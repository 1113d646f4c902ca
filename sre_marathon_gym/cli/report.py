"""`sre-marathon report`: the command line of the run report (its own module, like `stats`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def cmd_report(args: argparse.Namespace) -> int:
    """Verify the bundles, then write and name the report."""
    from ..run_report import write_report

    print(f"report: {write_report([Path(b) for b in args.bundles], args.output)}")
    return 0


def add_report_parser(sub: argparse._SubParsersAction) -> None:
    rp = sub.add_parser(
        "report",
        help="an interactive HTML report of a sealed bundle, or of runs of one seed side by side",
    )
    rp.add_argument(
        "bundles", nargs="+", metavar="BUNDLE", help="one bundle, or up to three runs of one seed"
    )
    rp.add_argument(
        "-o",
        "--output",
        metavar="FILE.html",
        help="where the page goes (default: beside the first bundle, X.bundle -> X.html)",
    )
    rp.set_defaults(func=cmd_report)
