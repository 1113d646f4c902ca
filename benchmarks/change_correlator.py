"""Benchmark: the change correlator (an honest reader of changes and telemetry) against the Runbook
and `change_reader.py` (which claims every change once an alert fires in its scope).

Why both: change_reader measures how much the change planes give away without diagnosis, the
correlator how much of that survives when a change must be followed by its own service's symptom.
As harmless changes on every plane become common, the first should fall to the Runbook's level and
the second should not. Until that stream lands, `--stress` approximates it for measurement only:
the pipeline's benign commits at 60-80 an hour (the generator's rate, patched in this process, and
their messages in the faulty commits' words, so that no message tells them apart) and one
harmless hand-made change per invocation through the backend (a limit raised, a replica
added for a while, a node cordoned for a while, a NetworkPolicy between services that never call
each other), never on a service an active or imminent fault targets.

Measured on the leaderboard seeds (Online Boutique / Astronomy Shop / Train Ticket; false claims):
today's stream: correlator 37.1 (1) / 41.6 (0) / 33.1 (0), change_reader 36.0 (7) / 31.8 (8) /
42.8 (6), Runbook 6.0 / 7.5 / 11.6; with `--stress both`: correlator 25.5 (2) / 42.6 (2) / 22.6 (3),
change_reader 0.0 (29) / 0.0 (38) / 10.5 (27), Runbook 5.2 / 3.6 / 4.8. A correlator episode takes
about 1.5x the Runbook's.

Run: python benchmarks/change_correlator.py [--agents change_correlator,runbook,change_reader]
     [--apps ...] [--stress] [--workers 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import gymnasium as gym
import numpy as np

APPS = ("online_boutique", "astronomy_shop", "train_ticket")
AGENTS = ("change_correlator", "runbook", "change_reader")
STRESS_BENIGN_PER_HOUR = (60, 80)
UNDO_AFTER_S = 480  # a temporary harmless change (replica, cordon, policy) is undone this much later
FAULT_LIKE = (  # how the catalog's faulty commits read
    "log the tenant serving each request",
    "validate incoming requests before processing",
    "persist audit entries before replying",
    "enrich items with their details",
    "memoize responses per request key",
)


def fault_like_message(service: str, description: str) -> str:
    """A benign commit's message in a faulty commit's words: `tune KEY` for a config knob."""
    key = re.search(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", description)
    what = f"tune {key.group(0)}" if key else FAULT_LIKE[zlib.crc32(description.encode()) % len(FAULT_LIKE)]
    return f"{service}: {what}"


def _change_reader():
    spec = importlib.util.spec_from_file_location(
        "change_reader", Path(__file__).with_name("change_reader.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ChangeReader()


class HarmlessChanges(gym.Wrapper):
    """Before each invocation's step, one harmless hand-made change (see the module docstring)."""

    def __init__(self, env: gym.Env, seed: int):
        super().__init__(env)
        self.rng = np.random.default_rng(seed)
        self.pending: list[tuple[float, object]] = []  # (when, undo)

    def step(self, action):
        u = self.env.unwrapped
        now = u.now
        for due, undo in [p for p in self.pending if p[0] <= now]:
            undo()
            self.pending.remove((due, undo))
        self._one(u, now)
        return self.env.step(action)

    def _one(self, u, now: float) -> None:
        from sre_marathon_gym.sim.cluster import NetworkPolicy

        busy = {f.target for f in u.schedule.faults if f.start_s - 600 <= now < f.planned_end_s + 60}
        cl, backend = u.sim.cluster, u.backend
        free = [s for s in sorted(cl.deployments) if s not in busy]
        if not free:
            return
        svc = free[int(self.rng.integers(len(free)))]
        kind = int(self.rng.integers(4))
        if kind == 0:  # more room: a raised limit never hurts
            spec = cl.deployments[svc].spec
            backend.set_resources(
                svc,
                cpu_limit_m=2 * spec.cpu_limit_m if spec.cpu_limit_m else None,
                mem_limit_mi=2 * spec.mem_limit_mi if spec.mem_limit_mi else None,
            )
        elif kind == 1:  # one more replica for a while
            per_zone = max(n for _, n in cl.deployments[svc].spec.replicas)
            if per_zone == 0:
                return
            backend.scale(svc, per_zone + 1)
            self.pending.append((now + UNDO_AFTER_S, lambda s=svc, n=per_zone: backend.scale(s, n)))
        elif kind == 2:  # a node cordoned for maintenance, without a drain
            nodes = [n for n, node in sorted(cl.nodes.items()) if node.ready and not node.unschedulable]
            if any(f.artifact.startswith(("node/", "zone/")) for f in u.schedule.active_at(now)) or not nodes:
                return
            node = nodes[int(self.rng.integers(len(nodes)))]
            backend.cordon(node)
            self.pending.append((now + UNDO_AFTER_S, lambda n=node: backend.uncordon(n)))
        else:  # a policy between two services that never call each other
            calls = {(e.source, e.target) for e in u.app.edges}
            other = free[int(self.rng.integers(len(free)))]
            name = f"deny-{svc}-to-{other}"
            if other == svc or (svc, other) in calls or name in cl.network_policies:
                return
            cl.network_policies[name] = NetworkPolicy(name, svc, other)
            cl.dirty = True
            self.pending.append((now + UNDO_AFTER_S, lambda n=name: backend.delete_network_policy(n)))


def run(job: tuple[str, str, str]) -> dict:
    app, name, stress = job
    from sre_marathon_gym import fault_schedule
    from sre_marathon_gym.catalog import load_catalog
    from sre_marathon_gym.episode_runner import make_marathon_env, run_scored_episode

    if stress in ("pipeline", "both"):
        fault_schedule.BENIGN_PER_HOUR = STRESS_BENIGN_PER_HOUR
        fault_schedule.commit_message = fault_like_message
    cat = load_catalog()

    def env():
        made = make_marathon_env(app, "eval", cat)
        return (
            HarmlessChanges(made, seed=cat.leaderboard.seed_for(app))
            if stress in ("direct", "both")
            else made
        )

    agent = _change_reader() if name == "change_reader" else name
    t0 = time.perf_counter()
    ep = run_scored_episode(env, agent)
    c = ep.card
    return dict(
        app=app,
        agent=name,
        score=c.marathon_score,
        correlated=c.correlated,
        localized=c.localized,
        repaired=c.repaired,
        false_claims=c.false_claims,
        false_incidents=c.false_incidents,
        needless=c.needless_actions,
        seconds=time.perf_counter() - t0,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument(
        "--stress",
        choices=("none", "pipeline", "direct", "both"),
        default="none",
        help="approximate the coming harmless changes: more benign commits, hand-made ones, or both",
    )
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    jobs = [(app, name, args.stress) for name in args.agents.split(",") for app in args.apps.split(",")]
    with ProcessPoolExecutor(args.workers) as ex:
        rows = list(ex.map(run, jobs))
    print(
        f"{'agent':<18} {'app':<16} {'Marathon-Score':>14} {'corr':>5} {'loc':>5} {'rep':>5} "
        f"{'false claims':>12} {'false inc':>9} {'needless':>8} {'time':>7}"
    )
    for r in rows:
        print(
            f"{r['agent']:<18} {r['app']:<16} {r['score']:14.1f} "
            f"{r['correlated']:5.2f} {r['localized']:5.2f} "
            f"{r['repaired']:5.2f} {r['false_claims']:12d} {r['false_incidents']:9d} {r['needless']:8d} "
            f"{r['seconds']:6.1f}s"
        )
    for name in args.agents.split(","):
        scores = [r["score"] for r in rows if r["agent"] == name]
        print(f"{name:<18} mean over apps {sum(scores) / len(scores):.1f}")


if __name__ == "__main__":
    main()
