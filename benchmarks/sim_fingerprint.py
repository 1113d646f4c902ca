"""Determinism guard for simulator optimisations: prints sha256 fingerprints of everything a
leaderboard run produces, so a speed-up can be checked to leave outputs bit-identical.

Per app: (1) the raw simulator on the leaderboard schedule (all metric chunks, the log-context
arrays, probe window, degraded counters, kafka lag, restarts, cluster events); (2) a full
leaderboard episode with the runbook agent (alerts, incidents, actions, probes, degradation and
the Marathon-Score, i.e. the whole scored record).

    python benchmarks/sim_fingerprint.py > before.txt   # ... change ...
    python benchmarks/sim_fingerprint.py | diff before.txt -
"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np

from sre_marathon_gym.catalog import APPS, load_catalog
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.sim.simulator import Simulator


def _h(*parts: object) -> str:
    m = hashlib.sha256()
    for p in parts:
        if isinstance(p, np.ndarray):
            m.update(str(p.dtype).encode() + str(p.shape).encode())
            m.update(np.ascontiguousarray(p).tobytes())
        else:
            m.update(repr(p).encode())
    return m.hexdigest()[:16]


def _chunks(st) -> str:
    """Every stored sample as one [series_count, samples] matrix of the store's native values (the
    bits, staleness markers included), however the store splits and sizes its chunks."""
    if st.last_time is None:
        return _h(np.zeros((0, 0), dtype=st.dtype))
    i0 = int(round(st.retained_from / st.step_s))
    i1 = int(round(st.last_time / st.step_s))
    return _h(st._gather(np.arange(st.series_count), i0, i1, "fingerprint"))


def sim_fingerprint(cat, app: str) -> dict[str, str]:
    run_s = (cat.leaderboard.injection_minutes + cat.leaderboard.observation_minutes) * 60
    seed = cat.leaderboard.seed_for(app)
    sched = FaultSchedule.generate(cat, app, seed)
    sim = Simulator(cat, app, seed, schedule=sched, telemetry=True)
    sim.advance_to(run_s)
    st = sim.store
    out = {
        "series": _h(st._sid_name, st._sid_labels),
        "chunks": _chunks(st),
    }
    lc = sim.logctx
    n = lc.n
    out["logctx"] = _h(
        lc.times[:n],
        *[d[k][:n] for d in (lc._svc, lc._edge, lc._rt) for k in sorted(d)],
        lc.svc_bits[:n],
        lc.edge_bits[:n],
        lc.ctx_ref[:n],
        sorted(lc.events.items()),
        [
            repr(sorted((k, sorted(v) if isinstance(v, frozenset) else v) for k, v in vars(c).items()))
            for c in lc.contexts
        ],
    )
    ticks = list(sim.probes.ticks)
    out["probes"] = _h(
        *[getattr(t, f) for t in ticks for f in t.__dataclass_fields__],
        *list(sim.probes.restarts),
        sim.probes.ready_ratio,
        sim.probes.kafka_lag,
    )
    out["state"] = _h(
        sim.degraded,
        sim.kafka_lag,
        sim.restarts_total,
        sim.window.calls,
        sim.window.errors,
        sim.window.latency_sum,
        sim.window.throttled_sum,
        sim.window.requests,
        sim.window.degraded,
        sim.rng.bit_generator.state,
    )
    out["cluster"] = _h(
        [(e.__dict__ if hasattr(e, "__dict__") else e) for e in getattr(sim.cluster, "events", [])],
        sorted((p.name, p.phase, p.ready, p.restarts, p.revision) for p in sim.cluster.pods.values()),
    )
    return out


def episode_fingerprint(cat, app: str) -> dict[str, str]:
    """A leaderboard episode of the runbook agent, as `evaluate` runs it (`run_scored_episode`)."""
    from sre_marathon_gym.evaluation.episode_runner import make_marathon_env, run_scored_episode

    run = run_scored_episode(lambda: make_marathon_env(app, "eval", cat), "runbook")
    record, card, st = run.record, run.card, run.store
    return {
        "alerts": _h(record.model_dump_json(include={"alerts", "incident_events"})),
        "actions": _h(record.model_dump_json(include={"actions"})),
        "probes": _h(record.model_dump_json(include={"probes", "degradation", "faults"})),
        "chunks": _chunks(st),
        "score": f"{card.marathon_score!r}",
        "card": _h(card.model_dump_json() if hasattr(card, "model_dump_json") else repr(card)),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--app", action="append")
    ap.add_argument("--no-episode", action="store_true")
    args = ap.parse_args()
    cat = load_catalog()
    for app in args.app or list(APPS):
        for k, v in sim_fingerprint(cat, app).items():
            print(f"{app} sim {k} {v}")
        if not args.no_episode:
            for k, v in episode_fingerprint(cat, app).items():
                print(f"{app} episode {k} {v}")


if __name__ == "__main__":
    main()
