"""Fingerprint of the alert history of a full marathon per app, to prove a change to the engine
leaves it byte-for-byte identical.

Driven like `bench_alerts.py` (leaderboard seed, the engine catches up every `--every` seconds,
120 by default as in an episode); prints one sha256 per app of a canonical JSON dump of
``engine.history()`` followed by ``engine.pending_history()``. Values are dumped with ``repr``
(shortest round-trip), so any change in the last bit shows.

Run: python benchmarks/alert_history_digest.py [--every S] [--changes production|curated]
     [--dump DIR] [app ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from sre_marathon_gym.alerting.engine import AlertEngine
from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.sim.simulator import Simulator

APPS = ["online_boutique", "astronomy_shop", "train_ticket"]


def _canonical(value: object) -> object:
    """Floats as their repr (exact), containers recursively, so the JSON is bit-exact."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def history_json(app: str, every: int, changes: str = "production") -> str:
    """Canonical JSON of the whole run's fired and never-fired alert episodes."""
    cat = load_catalog()
    seed = cat.leaderboard.seed_for(app)
    schedule = FaultSchedule.generate(cat, app, seed, changes=changes)
    sim = Simulator(cat, app, seed, schedule=schedule)
    engine = AlertEngine(cat.rules, sim.app, sim.store)
    for t in range(every, schedule.run_s + 1, every):
        sim.advance_to(t)
        engine.evaluate_until(t)
    doc = {
        "history": [_canonical(a.model_dump()) for a in engine.history()],
        "pending_history": [_canonical(a.model_dump()) for a in engine.pending_history()],
        "evaluations": engine.evaluations,
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=120, help="seconds between evaluate_until calls")
    ap.add_argument("--dump", type=Path, help="also write each app's JSON into this directory")
    ap.add_argument("--changes", default="production", choices=("production", "curated"))
    ap.add_argument("apps", nargs="*", default=APPS)
    args = ap.parse_args()
    for app in args.apps:
        text = history_json(app, args.every, args.changes)
        if args.dump is not None:
            args.dump.mkdir(parents=True, exist_ok=True)
            (args.dump / f"{app}.json").write_text(text)
        fired = len(json.loads(text)["history"])
        print(f"{app:<16} {hashlib.sha256(text.encode()).hexdigest()}  ({fired} fired)")


if __name__ == "__main__":
    main()
