"""Cross-reference checks over the whole catalog (what a single file's schema cannot see)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..core.errors import did_you_mean
from .faults import Fault
from .flag_behaviour import OUT_OF_MARATHON_CATALOG

if TYPE_CHECKING:
    from .model import Catalog

EXPECTED_FAULTS = 700
EXPECTED_RULES = 44
EXPECTED_TEMPLATES = 18
EXPECTED_APP_ONLY_RULES = {"astronomy_shop": 5}


def check_name(problems: list[str], where: str, kind: str, name: str, known: set[str] | list[str]) -> None:
    if name not in known:
        problems.append(f"{where}: unknown {kind} {name!r}{did_you_mean(name, known)}")


def validate_apps(cat: Catalog, problems: list[str]) -> None:
    for name, app in cat.apps.items():
        f = cat.file("apps", name)
        if app.app != name:
            problems.append(f"{f}: app: {app.app!r} does not match the file name {name!r}")
        names = app.service_names
        for dup, n in Counter(names).items():
            if n > 1:
                problems.append(f"{f}: services: duplicate service {dup!r}")
        check_name(problems, f"{f}: entry_point", "service", app.entry_point, names)
        zones = {z.name for z in app.zones}
        for s in app.services:
            for z in s.zones:
                check_name(problems, f"{f}: services ({s.name}).zones", "zone", z, zones)
        for i, e in enumerate(app.edges):
            for end in ("source", "target"):
                check_name(problems, f"{f}: edges[{i}].{end}", "service", getattr(e, end), names)
        for r in app.request_types:
            for s in r.services:
                check_name(problems, f"{f}: request_types ({r.name}).services", "service", s, names)
            if r.services and r.services[0] != app.entry_point:
                problems.append(
                    f"{f}: request_types ({r.name}).services: "
                    f"must start at the entry point {app.entry_point!r}"
                )
        for fl in app.feature_flags:
            check_name(problems, f"{f}: feature_flags ({fl.name}).service", "service", fl.service, names)


def code_fault_artifact_ok(fault: Fault, known: set[str]) -> bool:
    """A change-driven fault names the file at its faulty revision, which the app does not list yet."""
    if fault.change is None or "@" not in fault.artifact:
        return False
    base, rev = fault.artifact.rsplit("@", 1)
    return rev == fault.change.to_revision and f"{base}@{fault.change.from_revision}" in known


def validate_fault(cat: Catalog, fault: Fault, where: str, problems: list[str]) -> None:
    app = cat.apps.get(fault.app)
    if app is None:
        check_name(problems, f"{where}.app", "app", fault.app, list(cat.apps))
        return
    names = app.service_names
    check_name(problems, f"{where}.target", "service", fault.target, names)
    for s in fault.scope:
        check_name(problems, f"{where}.scope", "service", s, names)
    check_name(problems, f"{where}.probe.service", "service", fault.probe.service, names)
    if fault.probe.request_type is not None:
        check_name(
            problems,
            f"{where}.probe.request_type",
            "request type",
            fault.probe.request_type,
            [r.name for r in app.request_types],
        )
    known = app.artifact_ids()
    if fault.artifact not in known and not code_fault_artifact_ok(fault, known):
        check_name(problems, f"{where}.artifact", "artifact", fault.artifact, known)
    if fault.artifact not in fault.aliases:
        problems.append(f"{where}.aliases: must include the artifact itself {fault.artifact!r}")
    targets = set(names) | set(app.nodes) | {z.name for z in app.zones}
    for i, r in enumerate(fault.remedies):
        check_name(problems, f"{where}.remedies[{i}].target", "remedy target", r.target, targets)
        if r.artifact is not None and r.artifact not in known and r.artifact != fault.artifact:
            check_name(problems, f"{where}.remedies[{i}].artifact", "artifact", r.artifact, known)
    p = fault.params
    if "downstream" in p:
        callees = [e.target for e in app.edges if e.source == fault.target]
        check_name(
            problems,
            f"{where}.params.downstream",
            f"dependency of {fault.target}",
            str(p["downstream"]),
            callees,
        )
    if "flag" in p:
        check_name(
            problems,
            f"{where}.params.flag",
            "feature flag",
            str(p["flag"]),
            [fl.name for fl in app.feature_flags],
        )
    if "node" in p:
        check_name(problems, f"{where}.params.node", "node", str(p["node"]), app.nodes)
    if "zone" in p:
        check_name(problems, f"{where}.params.zone", "zone", str(p["zone"]), [z.name for z in app.zones])


def validate_faults(cat: Catalog, problems: list[str]) -> None:
    seen: dict[str, str] = {}
    for app_name, faults in cat.faults.items():
        f = cat.file("faults", app_name)
        for i, fault in enumerate(faults):
            where = f"{f}: faults[{i}] ({fault.id})"
            if fault.id in seen:
                problems.append(f"{where}.id: duplicate id (also in {seen[fault.id]})")
            seen[fault.id] = str(f)
            if fault.app != app_name:
                problems.append(f"{where}.app: {fault.app!r} in the file of {app_name!r}")
            validate_fault(cat, fault, where, problems)
        app = cat.apps.get(app_name)
        if app is not None:
            used = {str(x.params.get("flag")) for x in faults if x.mechanism == "feature_flag"}
            for fl in app.feature_flags:
                if fl.name not in used and fl.name not in OUT_OF_MARATHON_CATALOG:
                    problems.append(f"{f}: feature flag {fl.name!r} has no feature_flag fault")
    total = sum(len(v) for v in cat.faults.values())
    if total != EXPECTED_FAULTS:
        problems.append(f"{cat.root / 'faults'}: expected {EXPECTED_FAULTS} faults in total, found {total}")


def validate_rules(cat: Catalog, problems: list[str]) -> None:
    f = cat.root / "alerts" / "rules.yaml"
    pack = cat.rules
    templates = [t.id for t in pack.templates]
    for dup, n in Counter(templates).items():
        if n > 1:
            problems.append(f"{f}: templates: duplicate id {dup!r}")
    for dup, n in Counter(r.name for r in pack.rules).items():
        if n > 1:
            problems.append(f"{f}: rules: duplicate name {dup!r}")
    series = set()
    for m in cat.metrics.metrics:
        series |= {m.name + s for s in ("_bucket", "_sum", "_count")} if m.type == "histogram" else {m.name}
    apps = list(cat.apps)
    for i, r in enumerate(pack.rules):
        where = f"{f}: rules[{i}] ({r.name})"
        check_name(problems, f"{where}.template", "template", r.template, templates)
        for a in [] if r.apps == "all" else r.apps:
            check_name(problems, f"{where}.apps", "app", a, apps)
        for m in r.metrics:
            check_name(problems, f"{where}.metrics", "metric", m, series)
    if len(pack.rules) != EXPECTED_RULES or len(templates) != EXPECTED_TEMPLATES:
        problems.append(
            f"{f}: expected {EXPECTED_RULES} rules from {EXPECTED_TEMPLATES} templates, "
            f"found {len(pack.rules)} from {len(templates)}"
        )
    for app, n in EXPECTED_APP_ONLY_RULES.items():
        only = [r for r in pack.rules if r.apps == [app]]
        if len(only) != n:
            problems.append(f"{f}: expected {n} rules only for {app}, found {len(only)}")


def validate_settings(cat: Catalog, problems: list[str]) -> None:
    f = cat.root / "leaderboard.yaml"
    for i, run in enumerate(cat.leaderboard.runs):
        check_name(problems, f"{f}: runs[{i}].app", "app", run.app, list(cat.apps))
    missing = set(cat.apps) - {r.app for r in cat.leaderboard.runs}
    if missing:
        problems.append(f"{f}: runs: no leaderboard seed for {sorted(missing)}")


def cross_check(cat: Catalog) -> list[str]:
    problems: list[str] = []
    for check in (validate_apps, validate_faults, validate_rules, validate_settings):
        check(cat, problems)
    return problems
