"""Cost of synthesising logs and traces on query (ms per query) and of the per-sample hook.

Run: python benchmarks/bench_logs.py
"""

from __future__ import annotations

import time

import numpy as np

from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.sim.log_context import LogContextRecorder
from sre_marathon_gym.sim.log_search import search_logs
from sre_marathon_gym.sim.simulator import Simulator
from sre_marathon_gym.sim.traces import find_traces, get_trace

STEP = 15


def _median_ms(fn, repeats: int = 5) -> float:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return 1000.0 * float(np.median(samples))


def main() -> None:
    catalog = load_catalog()
    for app in ("online_boutique", "astronomy_shop", "train_ticket"):
        sim = Simulator(catalog, app, 11, schedule=FaultSchedule.generate(catalog, app, 11))
        rec = LogContextRecorder(sim)
        rec.record(sim, sim.now)
        hook = 0.0
        t = 0
        while t < 3600:
            t += STEP
            sim.advance_to(t)
            t0 = time.perf_counter()
            rec.record(sim, sim.now)
            hook += time.perf_counter() - t0
        entry = sim.app.entry_point
        svc = sim.app.services[2].name
        print(f"{app}: {rec.n} samples, record() hook {1000 * hook / rec.n:.3f} ms/sample")
        rows = [
            ("logs 1 service, 5 min, limit 200", lambda: search_logs(rec, app, svc, 3300, 3600)),
            (
                "logs entry, 60 min, ERROR, limit 200",
                lambda: search_logs(rec, app, entry, 0, 3600, level="ERROR"),
            ),
            ("logs 1 service, 60 min, all lines", lambda: search_logs(rec, app, svc, 0, 3600, limit=10**6)),
            ("logs all services, 5 min, limit 200", lambda: search_logs(rec, app, None, 3300, 3600)),
            (
                "logs all services, 15 min, query 'refused'",
                lambda: search_logs(rec, app, None, 2700, 3600, query="refused"),
            ),
            ("traces 15 min, limit 20", lambda: find_traces(rec, app, 2700, 3600)),
            ("traces 60 min, status=error, limit 20", lambda: find_traces(rec, app, 0, 3600, status="error")),
        ]
        for label, fn in rows:
            n = len(fn())
            print(f"  {label:<46} {_median_ms(fn):8.2f} ms  ({n} results)")
        trs = find_traces(rec, app, 0, 3600, limit=20)
        if trs:
            ms = _median_ms(lambda: [get_trace(rec, tr.trace_id) for tr in trs]) / len(trs)
            print(
                f"  {'get_trace (regenerate one)':<46} {ms:8.3f} ms  "
                f"({np.mean([len(t.spans) for t in trs]):.1f} spans)"
            )


if __name__ == "__main__":
    main()
