"""flagd's impression counter (`feature_flag_flagd_impression_total{feature_flag_key, ...}`).

Why: every reference rubric cites it as the flag's "meta" signal (flag_signals.md: a new series for
the flag's variant appears within 1-2 minutes of the flip). flagd counts one impression per
evaluation; a flag is evaluated on each request of the service that reads it, whatever its
variant, so the `off` series grows all the time and the flipped variant's series is created when its
first evaluation lands. Recorded every metric step by `backends.sim.run_flag_schedule(flag_impressions=True)`
(ORCA's world).
"""

from __future__ import annotations

import math

from ..catalog.flag_behaviour import flag_reader
from ..core.clock import METRIC_STEP_S
from .scrape import OTEL_JOB, scrape_labels
from .simulator import Simulator

METRIC = "feature_flag_flagd_impression_total"


class Impressions:
    def __init__(self, sim: Simulator):
        self.flags: list[tuple[str, str, int]] = []  # (flag, default variant, index of the reading service)
        for f in sim.app.feature_flags:
            reader = flag_reader(f.name)
            if reader in sim.compiled.index:
                self.flags.append((f.name, f.default, sim.compiled.index[reader]))
        self.count: dict[tuple[str, str], float] = {}
        self.ids: dict[tuple[str, str], int] = {}
        self.last = sim.now

    def record(self, sim: Simulator) -> None:
        store, res = sim.store, sim.last
        if store is None or res is None or sim.now <= self.last:
            return
        dt, self.last = sim.now - self.last, sim.now
        values = sim.cluster.configmaps.get("flagd-config", {})
        for flag, default, s in self.flags:
            key = (flag, values.get(flag, default))
            self.count[key] = self.count.get(key, 0.0) + float(res.svc_rate[s]) * dt
        keys = [k for k in sorted(self.count) if self.count[k] >= 1.0]
        new = [k for k in keys if k not in self.ids]
        if new:
            labels = [
                {
                    **scrape_labels(OTEL_JOB),
                    "service_name": "flagd",
                    "feature_flag_key": flag,
                    "feature_flag_result_variant": variant,
                    "feature_flag_provider_name": "flagd",
                }
                for flag, variant in new
            ]
            for k, sid in zip(new, store.register(METRIC, labels)):
                self.ids[k] = int(sid)
        if keys:
            store.record(sim.now, [self.ids[k] for k in keys], [math.floor(self.count[k]) for k in keys])


def advance(sim: Simulator, until_s: float, impressions: Impressions | None) -> None:
    """`sim.advance_to(until_s)`, recording impressions at every metric step on the way."""
    if impressions is None:
        sim.advance_to(until_s)
        return
    while True:
        nxt = (math.floor(sim.now / METRIC_STEP_S + 1e-9) + 1) * METRIC_STEP_S
        if nxt > until_s:
            break
        sim.advance_to(nxt)
        impressions.record(sim)
    sim.advance_to(until_s)
