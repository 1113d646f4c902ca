"""`sre-marathon stats`: SRE-Marathon's statistics beside the paper's (kept out of `cli.commands`).

Prints, per app, the leaderboard seed's no-action run and N further seeds (mean and range) with
the paper's figure and the deviation, the single-fault severity distribution, ORCA's task
counts, mean ground-truth causes and the heuristic's accuracy by difficulty, and the change mix of
each leaderboard schedule (faulty and benign changes per hour on each plane, and the measured change
failure rate beside `change_stream.CHANGE_FAILURE_RATE`). `--json` prints the same numbers as one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from .arg_types import positive_int, whole_number


def add_stats_parser(sub: Any) -> None:
    st = sub.add_parser("stats", help="the simulator's SRE-Marathon and ORCA statistics beside the papers'")
    st.add_argument("--app", help="one app (default: all three)")
    st.add_argument("--seeds", type=whole_number(0, 100), default=5, help="further seeds per app (default 5)")
    st.add_argument("--no-severity", action="store_true", help="skip injecting every catalog fault alone")
    st.add_argument("--no-orca", action="store_true", help="skip the ORCA task statistics")
    st.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    st.add_argument(
        "--workers", type=positive_int, default=None, help="processes for the runs (default: one per core)"
    )
    st.set_defaults(func=cmd_stats)


def _clean(obj: Any) -> Any:
    """JSON without NaN (null instead)."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def cmd_stats(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ..catalog import APPS, load_catalog
    from ..core.table import format_table
    from ..evaluation.fidelity_stats import (
        all_app_stats,
        format_app_table,
        format_category_table,
        orca_stats,
        single_fault_severity,
    )

    catalog = load_catalog(args.catalog)
    apps = [args.app] if args.app else list(APPS)
    for app in apps:
        catalog.app(app)  # an unknown app fails here, before anything runs
    quiet = args.json
    with tqdm(total=len(apps) * (1 + args.seeds), desc="no-action runs", unit="run", disable=quiet) as bar:
        rows = all_app_stats(
            catalog,
            apps,
            args.seeds,
            workers=args.workers,
            progress=lambda: bar.update(1),
        )
    severity = {}
    if not args.no_severity:
        total = sum(len(catalog.faults[a]) for a in apps)
        with tqdm(total=total, desc="faults injected alone", unit="fault", disable=quiet) as bar:
            for app in apps:
                severity[app] = single_fault_severity(catalog, app, progress=lambda: bar.update(1))
    orca = None if args.no_orca else orca_stats(progress=not quiet)
    mix = change_mix(catalog, apps)
    if args.json:
        out = {
            "apps": {
                st.app: {
                    "leaderboard": st.leaderboard.as_dict(),
                    "other_seeds": [r.as_dict() for r in st.others],
                }
                for st in rows
            },
            "severity": {app: {**vars(s), "per_fault": per} for app, (s, per) in severity.items()},
            "orca": orca,
            "change_mix": mix,
        }
        print(json.dumps(_clean(out), indent=2, sort_keys=True))
        return 0
    print("SRE-Marathon, no-action runs under the leaderboard protocol")
    print(format_app_table(rows, catalog))
    print()
    print("Faults per category (leaderboard seed)")
    print(format_category_table(rows))
    if severity:
        print()
        print("Single-fault severity (each fault alone; degraded share of entry requests over its window)")
        body = [
            [
                app,
                s.faults,
                s.full_outages,
                s.over_half,
                s.over_90,
                f"{s.median:.3f}",
                f"{s.p90:.3f}",
                ", ".join(f"{fid} {v:.2f}" for fid, v in s.worst[:3]),
            ]
            for app, (s, _) in severity.items()
        ]
        print(
            format_table(
                ["app", "faults", "full outages", ">0.5 (not outages)", ">0.9", "median", "p90", "worst"],
                body,
            )
        )
    print()
    print(format_change_mix(mix))
    if orca is not None:
        print()
        print(f"ORCA-bench: {orca['tasks']} tasks")
        body = [
            [d, v["tasks"], v["controls"], _fmt(v["mean_causes"]), _fmt(v["heuristic_accuracy"])]
            for d, v in orca["by_difficulty"].items()
        ]
        print(format_table(["difficulty", "tasks", "controls", "mean causes", "heuristic accuracy %"], body))
    return 0


CHANGE_PLANES = ("pipeline code", "pipeline config", "pipeline flag", "manifest", "netpol", "node")


def _plane_of_fault(mechanism: str) -> str | None:
    from ..schedule.change_stream import change_stratum

    stratum = change_stratum(mechanism)
    return f"pipeline {stratum}" if stratum in ("code", "config", "flag") else stratum


def _plane_of_benign(plane: str, kind: str) -> str:
    return f"pipeline {kind}" if plane == "pipeline" else plane


def change_mix(catalog: Any, apps: list[str]) -> dict[str, Any]:
    """Faulty and benign changes of each app's leaderboard schedule, per plane: counts, per hour of
    the run (``run_s``) and the measured change failure rate (faulty / all changes on the plane;
    None when nothing changed on it). Flag flips are changes with no benign twin (`change_stream`)."""
    from ..schedule.change_stream import CFR_SOURCE, CHANGE_FAILURE_RATE
    from ..schedule.fault_schedule import leaderboard_schedules

    out: dict[str, Any] = {}
    for app, sched in leaderboard_schedules(catalog).items():
        if app not in apps:
            continue
        faulty = {p: 0 for p in CHANGE_PLANES}
        benign = dict(faulty)
        for f in sched.faults:
            plane = _plane_of_fault(f.mechanism)
            if plane is not None:
                faulty[plane] += 1
        for b in sched.benign:
            benign[_plane_of_benign(b.plane, b.kind)] += 1
        hours = sched.run_s / 3600.0
        rows = {}
        for plane in (*CHANGE_PLANES, "all"):
            nf = sum(faulty.values()) if plane == "all" else faulty[plane]
            nb = sum(benign.values()) if plane == "all" else benign[plane]
            rows[plane] = {
                "faulty": nf,
                "benign": nb,
                "faulty_per_hour": nf / hours,
                "benign_per_hour": nb / hours,
                "change_failure_rate": nf / (nf + nb) if nf + nb else None,
            }
        out[app] = {"seed": sched.seed, "run_s": sched.run_s, "changes": sched.changes, "planes": rows}
    return {"default_change_failure_rate": CHANGE_FAILURE_RATE, "source": CFR_SOURCE, "apps": out}


def format_change_mix(mix: dict[str, Any]) -> str:
    from ..core.table import format_table

    body = []
    for app, m in mix["apps"].items():
        shown = [p for p, r in m["planes"].items() if p == "all" or r["faulty"] or r["benign"]]
        for plane in shown:
            r = m["planes"][plane]
            cfr = r["change_failure_rate"]
            body.append(
                [
                    f"{app} (seed {m['seed']})" if plane == shown[0] else "",
                    plane,
                    r["faulty"],
                    r["benign"],
                    f"{r['faulty_per_hour']:.1f}",
                    f"{r['benign_per_hour']:.1f}",
                    "-" if cfr is None else f"{cfr:.3f}",
                ]
            )
    runs = sorted({(m["run_s"], m["changes"]) for m in mix["apps"].values()})
    title = "Change mix (leaderboard schedules; per hour of the {} run)".format(
        ", ".join(f"{s / 3600:g} h {c}" for s, c in runs)
    )
    table = format_table(
        ["app", "plane", "faulty", "benign", "faulty/h", "benign/h", "change failure rate"], body, title=title
    )
    return (
        f"{table}\nDefault change failure rate {mix['default_change_failure_rate']:.3f} "
        f"(change_stream.CHANGE_FAILURE_RATE): {mix['source']}"
    )


def _fmt(v: float) -> str:
    return "-" if isinstance(v, float) and math.isnan(v) else f"{v:.2f}"
