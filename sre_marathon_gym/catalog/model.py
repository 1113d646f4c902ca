"""The loaded catalog as one object: apps, faults, metrics, the alert pack and the settings files,
and the views of it an agent may read (`public`). Reading and validating it is `catalog.py`'s."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.errors import UnknownNameError
from .alerts import MetricsFile, RulePack
from .apps import App
from .faults import Fault
from .pricing import Pricing
from .settings import Leaderboard, Published, Scoring


def public_app(app: App) -> App:
    """`app` without the simulator's parameters of its services (`Service.sim`: service time, CPU per
    request, resident memory, threads). Why: a cluster shows what a pod needs only in its usage,
    i.e. telemetry; with them, an adversarial review told a right-sized limit from a faulty cut
    reading no metric."""
    return app.model_copy(update={"services": [s.model_copy(update={"sim": None}) for s in app.services]})


@dataclass(frozen=True)
class Catalog:
    root: Path
    apps: dict[str, App]
    faults: dict[str, list[Fault]]
    metrics: MetricsFile
    rules: RulePack
    scoring: Scoring
    leaderboard: Leaderboard
    published: Published
    pricing: Pricing
    _by_id: dict[str, Fault] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_id.update({f.id: f for faults in self.faults.values() for f in faults})

    def file(self, kind: str, app: str) -> Path:
        return self.root / kind / f"{app}.yaml"

    def app(self, name: str) -> App:
        if name not in self.apps:
            raise UnknownNameError("app", name, self.apps)
        return self.apps[name]

    def fault(self, fault_id: str) -> Fault:
        if fault_id not in self._by_id:
            raise UnknownNameError("fault id", fault_id, self._by_id)
        return self._by_id[fault_id]

    def all_faults(self) -> list[Fault]:
        return [f for app in self.apps for f in self.faults[app]]

    def public(self) -> Catalog:
        """The catalog as an agent under evaluation may read it: every fault row without the literal
        change it ships (commit message, diff, revisions) or its mechanism's parameters. Why: with
        them, matching the deploy history against the catalog names each faulty commit verbatim
        (an adversarial review scored 28-30 that way, reading no telemetry). Its apps are
        `public_app`s."""
        hidden = {"change": None, "params": {}}
        faults = {app: [f.model_copy(update=hidden) for f in rows] for app, rows in self.faults.items()}
        return replace(self, apps={n: public_app(a) for n, a in self.apps.items()}, faults=faults, _by_id={})

    def scope_share(self, app: str) -> dict[str, float]:
        """Per service (or node/zone), the share of `app`'s catalog rows whose scope or target holds
        it: how little an alert there says about which fault is active (rules v3; public data)."""
        rows = self.faults[app]
        counts: dict[str, int] = {}
        for f in rows:
            for s in {*f.scope, f.target}:
                counts[s] = counts.get(s, 0) + 1
        return {s: round(counts[s] / len(rows), 6) for s in sorted(counts)} if rows else {}


__all__ = ["Catalog", "public_app"]
