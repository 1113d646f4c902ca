"""Changes as production ships them: harmless changes on every plane a faulty change uses.

Why: in production most changes are harmless. If only faults touched manifests, nodes and
NetworkPolicies, and benign commits came from a few templates, listing what changed would answer
the benchmark (`benchmarks/change_reader.py` scored above the paper's best method reading no
telemetry). Here every benign change is the *twin* of a catalog fault row, drawn the way faults
are drawn, so that what an agent can read about a change (plane, service, artifact, message,
diff shape, author, timing) does not say whether it broke anything; telemetry does.

The knob is the change failure rate: the share of all changes on the agent-visible planes that
are faults (`CHANGE_FAILURE_RATE`, from the DORA 2019 State of DevOps report, `CFR_SOURCE`). With
`n` faulty changes scheduled in a run, ``round(n (1 - rate) / rate)`` benign twins ship.

Twin of a row, by the row's plane:
- pipeline code: the row's own commit (message and diff) shipped on a new revision by ``ci``; the
  simulator registers no effect, so the same edit is harmless this time (a guard that never trips
  on this traffic, a loop bound the data never reaches). Each source file changes at most once.
- pipeline config: the row's own message, with a value the simulator tolerates: "tighten" and
  "lower" change the value within safe bounds, "move" writes the same service's fully qualified
  name, "drop" removes a key whose default is the value.
- manifest (``kubectl set``/``scale``, through the same rollout history as the manifest faults):
  an image bumped to a new good tag; CPU limits raised 1.25-2x (set at 3-6x the CPU per request at
  the mean load where none is set) and memory limits raised 1.25-2x (set at 4-8x the resident
  memory where none is set); the readiness probe's timeout tuned; one replica added, or the count
  set back (what an HPA does), on clusters that keep room for their pods with a node gone
  (`App.survives_node_loss`: Online Boutique). Nothing is cut and no pod is added to a full
  cluster: each is harmless alone but, on Train Ticket's leaderboard seed, left the pods a node
  fault evicts Pending and saturated the entry point.
- NetworkPolicy: a ``deny-<target>-to-<service>`` policy in the faults' naming for a service the
  target never calls (blocks nothing used).
- node: maintenance: a cordon of a node the catalog's node rows name (another one if a fault of
  the run holds it), with its pods moved off by rolling restarts when the other nodes have room,
  uncordoned after a duration drawn like a fault's.
Flag rows get no twin: Astronomy Shop's flags are the demo's failure switches, each documented
with its effect per variant, so a flip is read against its documentation.

A twin touches an artifact a scheduled fault of the run touches only after that fault's planned
end (and `SETTLE_S`), so every diff a fault ships is against the text it expects and a file or key
that changes again is no sign of a harmless change; code twins never ship a revision a fault of
the run ships. Manifest twins may change a deployment field a fault changes at any other time.
No twin changes a deployment while an active fault holds its rollout slot (a rollback must
revert the fault), nor cordons a node for a window that overlaps an infrastructure fault's. Arrival times
follow the faults' own ramped process over the injection window (`fault_schedule.arrival_times`),
so timing does not separate them either.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .benign_edits import benign_config_value, benign_revision_base, config_diff, drop_diff

if TYPE_CHECKING:
    from .catalog import Fault
    from .catalog.apps import App, ConfigEntry
    from .fault_schedule import BenignChange, ScheduledFault

CHANGE_FAILURE_RATE = 0.15
CFR_SOURCE = (
    "DORA 2019 State of DevOps report: change failure rate 0-15% for elite, high and medium "
    "performers (upper end of the band)"
)
CHANGE_STREAMS = ("production", "curated")  # curated: the few template commits of env ids up to -v2

PLANES = ("pipeline", "manifest", "netpol", "node")
_MANIFEST = {
    "bad_image_tag": "image",
    "cpu_limit_cut": "cpu_limit_m",
    "memory_limit_cut": "mem_limit_mi",
    "bad_readiness_probe": "readiness_timeout_s",  # probe tuning: the timeout, which breaks nothing
    "scale_to_zero": "replicas",
}

_FIELD_NAMES = {  # the simulator's spec field -> the catalog's artifact field (`DEPLOYMENT_FIELDS`)
    "image": "image",
    "cpu_limit_m": "resources.limits.cpu",
    "mem_limit_mi": "resources.limits.memory",
    "replicas": "replicas",
    "readiness_timeout_s": "readinessProbe",
}


def change_plane(mechanism: str) -> str | None:
    """The plane a fault of `mechanism` changes, or None if it is not a change (chaos, load...)."""
    if mechanism.startswith(("code_", "config_")) or mechanism == "feature_flag":
        return "pipeline"
    if mechanism in _MANIFEST:
        return "manifest"
    if mechanism == "network_partition":
        return "netpol"
    if mechanism == "node_cordon_drain":
        return "node"
    return None


def change_stratum(mechanism: str) -> str | None:
    """What a twin is balanced over: the plane, with the pipeline split into code, config, flag."""
    plane = change_plane(mechanism)
    if plane != "pipeline":
        return plane
    return "flag" if mechanism == "feature_flag" else mechanism.split("_", 1)[0]


def benign_count(faulty_changes: int, rate: float) -> int:
    """Benign changes that make `faulty_changes` the share `rate` of all changes."""
    return int(round(faulty_changes * (1.0 - rate) / rate))


_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_ADDRESS = re.compile(r"^([a-z0-9-]+):(\d+)$")
_FQDN = re.compile(r"^([a-z0-9-]+)\.[a-z0-9-]+\.svc\.cluster\.local:(\d+)$")
SETTLE_S = 300  # a twin touches a fault's artifact only this long after the fault's planned end
_HEAP = re.compile(r"-Xmx(\d+)([mMgG])")


def _diff_value(diff: str) -> str | None:
    for line in reversed(diff.splitlines()):
        m = re.match(r'^\+\s*(?:value:|\S+:)\s*"?([^"]*)"?\s*$', line)
        if m and not line.startswith("+++"):
            return m.group(1)
    return None


def _within(value: str, low: float, high: float, rng: np.random.Generator) -> str:
    number = float(value)
    new = number * float(rng.uniform(low, high))
    return str(max(1, int(round(new)))) if "." not in value else f"{new:.3g}"


def twin_config_value(
    entry: ConfigEntry, row: Fault, namespace: str, rng: np.random.Generator, current: str | None = None
) -> str | None:
    """A harmless value for `entry` (now `current`) that fits the row's commit message; "" means:
    drop the key. Numbers move relative to the catalog's value, so repeated twins stay in bounds."""
    old, verb = entry.value, row.change.message.split(": ", 1)[-1].split(" ", 1)[0]  # type: ignore[union-attr]
    if row.mechanism == "config_missing_env":
        return ""  # the service's default equals the value: dropping it changes nothing
    if row.mechanism == "config_wrong_address":  # the same service, by its short or its full name
        full = _FQDN.match(current or "")
        if full:
            return f"{full.group(1)}:{full.group(2)}"
        m = _ADDRESS.match(old)
        return f"{m.group(1)}.{namespace}.svc.cluster.local:{m.group(2)}" if m else None
    heap = _HEAP.search(old)
    if heap:  # a tenth less heap, still above the working set the simulator models
        mb = int(heap.group(1)) * (1024 if heap.group(2) in "gG" else 1)
        return old[: heap.start()] + f"-Xmx{int(mb * 0.9) // 8 * 8}m" + old[heap.end() :]
    if _NUMBER.match(old) and float(old) > 0:
        bad = _diff_value(row.change.diff) if row.change else None  # type: ignore[union-attr]
        lowers = verb in ("tighten", "lower", "shorten", "reduce") or (
            bad is not None and _NUMBER.match(bad) is not None and float(bad) < float(old)
        )
        return _within(old, 0.7, 0.9, rng) if lowers else _within(old, 1.25, 2.0, rng)
    made = benign_config_value(entry, rng)
    return None if made is None else made[0]


def cpu_need_m(app: App, service: str) -> float:
    """Millicores one replica of `service` uses at the load generator's mean rate: its share of the
    entry rate (request types' weights and calls per request) x CPU time per request / replicas."""
    total = sum(rt.weight for rt in app.request_types)
    s = app.service(service)
    rps = sum(
        app.load.requests_per_second * rt.weight / total * rt.calls_per_request.get(service, 1.0)
        for rt in app.request_types
        if service in rt.services
    )
    return rps * s.sim.cpu_ms_per_request / max(1, s.replicas * len(s.zones))


def _retuned(
    limit: int, need: float, step: int, factor: tuple[float, float], rng: np.random.Generator
) -> int:
    """A limit retuned to `factor` x what the pod needs (down or up: the way a right-sizing tool
    moves it), in multiples of `step`; where no limit is set, one is set the same way. The faults
    cut limits below need, so telling them apart takes the usage, i.e. telemetry."""
    target = max(need, step) * float(rng.uniform(*factor))
    value = max(step, int(round(target / step)) * step)
    return value if value != limit else value + step


def _bumped_image(image: str, step: int) -> str:
    m = re.search(r"(\d+)\.(\d+)\.(\d+)([^:/]*)$", image)
    if m:
        return image[: m.start()] + f"{m.group(1)}.{m.group(2)}.{int(m.group(3)) + step}"
    return f"{image}-r{step}"


class _Planner:
    """State of the twins drawn so far (what each artifact, deployment and node holds)."""

    def __init__(
        self, app: App, held: dict[str, list[int]], fault_revs: dict[str, set[int]], base_rev: int
    ) -> None:
        from .catalog.apps import config_artifact_id

        self.app, self.held, self.fault_revs, self.next_rev = app, held, fault_revs, base_rev
        self.code_rev: dict[str, int] = {}  # source file -> the last revision shipped
        self.values: dict[str, str | None] = {}  # config key -> its value now (None: dropped)
        self.image_step: dict[str, int] = {}
        self.scaled: dict[str, int] = {}  # service -> current replica delta (0 or +-1)
        self.cordoned_until: dict[str, int] = {}
        self.policies: set[str] = set()
        self.config = {config_artifact_id(s.name, c): (s.name, c) for s in app.services for c in s.config}
        self.callees: dict[str, set[str]] = {}
        for e in app.edges:
            self.callees.setdefault(e.source, set()).add(e.target)

    def revision(self) -> str:
        self.next_rev += 1
        return f"r{self.next_rev - 1}"

    def blocked(self, key: str, t: int) -> bool:
        """Whether a scheduled fault still has `key` to come or in hand at `t`: twins touch a fault's
        artifact only after it was reverted (so every diff a fault ships is against the text it
        expects), and a little later (`SETTLE_S`)."""
        return any(t < end + SETTLE_S for end in self.held.get(key, ()))

    def twin(
        self, row: Fault, t: int, busy: set[str], infra: Sequence[tuple[int, int]], rng: np.random.Generator
    ):
        from .fault_schedule import BenignChange, artifact_key

        plane = change_plane(row.mechanism)
        if plane == "pipeline":
            if row.change is None or row.mechanism == "feature_flag" or row.target in busy:
                return None
            if row.mechanism.startswith("code_"):
                svc, _, rest = row.artifact.partition(":")
                path = rest.rsplit("@", 1)[0]
                artifact = f"{svc}:{path}@{row.change.from_revision}"
                key = artifact_key(artifact)
                if self.blocked(key, t):
                    return None
                # the row's own revision numbering; a file changed again counts on from its last,
                # never onto a revision a fault of the run ships (the simulator keys code effects by it)
                last = self.code_rev.get(key)
                number = int(row.change.to_revision[1:]) if last is None else last + 1
                while number in self.fault_revs.get(key, ()):
                    number += 1
                to_rev = f"r{number}"
                self.code_rev[key] = number
                from_rev = row.change.from_revision if last is None else f"r{last}"
                return BenignChange(
                    t, svc, f"{svc}:{path}@{from_rev}", "code", row.change.message, row.change.diff,
                    from_rev, to_rev, plane="pipeline",
                )  # fmt: skip
            hit = self.config.get(row.artifact)
            if hit is None or self.blocked(row.artifact, t):
                return None
            svc, entry = hit
            current = self.values.get(row.artifact, entry.value)
            if current is None:  # dropped earlier: put it back (the default, written out again)
                new, shown = entry.value, entry.model_copy(update={"value": ""})
            else:
                new = twin_config_value(entry, row, self.app.namespace, rng, current)
                shown = entry.model_copy(update={"value": current})
            if new is None or new == current:
                return None
            self.values[row.artifact] = None if new == "" else new
            diff = drop_diff(svc, shown) if new == "" else config_diff(svc, shown, new)
            return BenignChange(
                t, svc, row.artifact, "config", row.change.message, diff, entry.revision,
                self.revision(), new_value=None if new == "" else new, plane="pipeline",
            )  # fmt: skip
        if plane == "manifest":
            svc, field = row.target, _MANIFEST[row.mechanism]
            if svc in busy:
                return None
            s = self.app.service(svc)
            if field == "image":
                step = self.image_step[svc] = self.image_step.get(svc, 0) + 1
                value = _bumped_image(s.image, step)
            elif field == "replicas":
                # up by one, or back to the catalog's count, and only on a cluster with N-1 capacity:
                # on Train Ticket's leaderboard seed, extra pods (or a scale-down) left the pods a node
                # fault evicts Pending and saturated the entry point
                if not self.app.survives_node_loss:
                    return None
                delta = 0 if self.scaled.get(svc, 0) else 1
                self.scaled[svc] = delta
                value = str(s.replicas + delta)
            elif field == "readiness_timeout_s":
                if s.readiness_probe is None:
                    return None
                value = str(s.readiness_probe.timeout_s + int(rng.integers(1, 5)))
            elif field == "cpu_limit_m":
                limit = s.resources.cpu_limit_m  # raised where set: the catalog's mean-load need
                # underestimates bursts (Train Ticket's seat, station and train services throttle at
                # 4x it); set at 3-6x of it where none is set (every such service passes at 3x)
                value = (
                    _within(str(limit), 1.25, 2.0, rng)
                    if limit
                    else str(_retuned(0, cpu_need_m(self.app, svc), 5, (3.0, 6.0), rng))
                )
            else:  # raised where set, like CPU: right-sizing down OOM-kills sooner under a leak fault
                limit = s.resources.mem_limit_mi
                value = (
                    _within(str(limit), 1.25, 2.0, rng)
                    if limit
                    else str(_retuned(0, s.sim.base_memory_mi, 8, (4.0, 8.0), rng))
                )
            return BenignChange(
                t, svc, f"deployment/{svc}:{_FIELD_NAMES[field]}", field, "", "", "", "",
                new_value=value, plane="manifest",
            )  # fmt: skip
        if plane == "netpol":
            calls = self.callees.get(row.target, set())
            others = sorted(
                s.name
                for s in self.app.services
                if s.name != row.target
                and s.name not in calls
                and f"deny-{row.target}-to-{s.name}" not in self.policies
            )
            if not others:
                return None
            dst = others[int(rng.integers(len(others)))]
            name = f"deny-{row.target}-to-{dst}"
            self.policies.add(name)
            return BenignChange(
                t, row.target, f"networkpolicy/{name}", "netpol", "", "", "", "", new_value=dst,
                plane="netpol",
            )  # fmt: skip
        if plane == "node":
            free = [
                n
                for n in self.app.nodes
                if not self.blocked(f"node/{n}", t) and self.cordoned_until.get(n, -1) <= t
            ]
            node = str(row.params.get("node", ""))
            if not free:
                return None
            if node not in free:  # the row's node is the run's fault's: maintain another one
                node = free[int(rng.integers(len(free)))]
            from .fault_schedule import DURATION_RANGE

            lo, hi = DURATION_RANGE
            until = t + int(rng.integers(lo, hi + 1))
            # no maintenance overlaps an infrastructure fault (either may start first): a cordoned
            # node beside a failed one leaves the evicted pods Pending (Train Ticket's seed 83)
            if any(start < until + SETTLE_S and t < end + SETTLE_S for start, end in infra):
                return None
            self.cordoned_until[node] = until
            return BenignChange(
                t, row.target, f"node/{node}", "cordon", "", "", "", "", new_value=node, plane="node",
                until_s=until,
            )  # fmt: skip
        return None


def _unfrozen_times(
    n: int, injection_s: int, scheduled: Sequence[ScheduledFault], spare: bool, rng: np.random.Generator
) -> list[int]:
    """`n` arrival times on the faults' ramped process, outside the change freeze: on a cluster
    without N-1 capacity (`App.survives_node_loss`), nothing ships within `SETTLE_S` of an
    infrastructure fault's start (the time a commit takes to build and roll out, and the
    eviction's): on Train Ticket's leaderboard seed, rollouts' surge pods took the room a drained
    node's pods needed and saturated the entry point. A freeze over the faults' whole windows
    would cover three quarters of some runs' injection time, itself a tell. Drawn as 3n times with
    the frozen ones removed and n kept at random, so the density elsewhere keeps its shape."""
    from .fault_schedule import arrival_times

    frozen = [] if spare else [sf for sf in scheduled if sf.category == "infrastructure"]
    times = [
        int(t)
        for t in arrival_times(3 * n, injection_s, rng)
        if not any(abs(t - sf.start_s) < SETTLE_S for sf in frozen)
    ]
    keep = np.sort(rng.choice(len(times), size=min(n, len(times)), replace=False))
    return [times[int(i)] for i in keep]


def plan_production_changes(
    app: App,
    pool: Sequence[Fault],
    chosen: Sequence[Fault],
    scheduled: Sequence[ScheduledFault],
    injection_s: int,
    rate: float,
    rng: np.random.Generator,
) -> list[BenignChange]:
    """The benign twins of one run (module docstring): as many as `rate` asks, on the faults' times."""
    from .fault_schedule import _holds_rollout, artifact_key, touched_artifacts

    by_id = {f.id: f for f in chosen}
    faulty = sum(change_plane(by_id[sf.fault_id].mechanism) is not None for sf in scheduled)
    rows = [f for f in pool if change_plane(f.mechanism) is not None]
    n = benign_count(faulty, rate)
    if not n or not rows:
        return []
    held: dict[str, list[int]] = {}  # artifact key -> planned ends of the faults that touch it
    fault_revs: dict[str, set[int]] = {}  # source file -> revisions its faults ship
    for sf in scheduled:
        fault = by_id[sf.fault_id]
        for key in touched_artifacts(fault):
            held.setdefault(key, []).append(sf.planned_end_s)
        if fault.change is not None and re.fullmatch(r"r\d+", fault.change.to_revision):
            fault_revs.setdefault(artifact_key(fault.artifact), set()).add(int(fault.change.to_revision[1:]))
    planner = _Planner(app, held, fault_revs, benign_revision_base(app, pool))
    infra = [(sf.start_s, sf.planned_end_s) for sf in scheduled if sf.category == "infrastructure"]
    out: list[BenignChange] = []
    # the plane of each twin, in the proportions of the run's faulty changes, in random order
    per_stratum = Counter(change_stratum(by_id[sf.fault_id].mechanism) for sf in scheduled)
    per_stratum.pop(None, None)
    strata = sorted(per_stratum)
    pool_of = [k for k in strata for _ in range(per_stratum[k])]
    wanted = [pool_of[int(i)] for i in rng.integers(len(pool_of), size=n)]
    by_plane = {k: [f for f in rows if change_stratum(f.mechanism) == k] for k in strata}
    for t, plane in zip(_unfrozen_times(n, injection_s, scheduled, app.survives_node_loss, rng), wanted):
        active = [sf for sf in scheduled if sf.active_at(t)]
        busy = {sf.target for sf in active if _holds_rollout(by_id[sf.fault_id])}
        # a row of the wanted stratum; when it has nothing left to change, any other row
        order = [by_plane[plane][int(k)] for k in rng.permutation(len(by_plane[plane]))]
        order += [rows[int(k)] for k in rng.permutation(len(rows))]
        for row in order:
            made = planner.twin(row, t, busy, infra, rng)
            if made is not None:
                out.append(made)
                break
    return out


def benign_twins(app: App, pool: Sequence[Fault], rng: np.random.Generator, at_s: int) -> list[BenignChange]:
    """One twin of every change row of `pool` at `at_s`, each drawn as if alone in its run (the
    validation harness, `backends.change_check`, applies each one alone)."""
    from dataclasses import replace

    out = []
    for row in pool:
        if change_plane(row.mechanism) is None:
            continue
        made = _Planner(app, {}, {}, benign_revision_base(app, pool)).twin(row, at_s, set(), (), rng)
        if made is not None:
            out.append(replace(made, until_s=None if made.until_s is None else at_s + 300))
    return out
