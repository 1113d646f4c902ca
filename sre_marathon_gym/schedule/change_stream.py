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
  "lower" change the value within safe bounds (a client timeout to 8-20x its callee's healthy
  latency, so tight values on fast callees look like the faults' values on slow ones), "move"
  writes the same service by another name or in the faults' address forms (`address_forms`),
  "drop" removes a key whose default is the value.
- manifest (``kubectl set``/``scale``, through the same rollout history as the manifest faults):
  an image in one of the forms the app's bad-image faults use (a patch bump, a four-part hotfix
  tag, a release candidate, the registry a fault pulls from) that exists (`image_forms`); CPU and
  memory limits right-sized down half the time where there is room (CPU to 6-10x the pod's need at
  the mean load, memory to 1.9-2.2x its resident size; the faults cut to about 1x, so a lowered
  limit is no sign of a fault and its size means something only next to the usage), else raised
  1.25-2x (set at 3-6x the CPU need and 4-8x the resident memory where none is set); the readiness
  probe's timeout tuned; one replica added, or the count set back (what an HPA does), on clusters
  that keep room for their pods with a node gone (`App.survives_node_loss`: every catalog app, whose
  nodes are sized for it, `App.node_allocatable_m`), and only while the pods all replica twins add
  fit in each zone's spare room with a node gone (`App.spare_with_node_lost_m`): when Train
  Ticket's nodes were sized tighter, extra pods left the pods a node fault evicts Pending and
  saturated the entry point.
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
revert the fault), nor cordons a node for a window that overlaps an infrastructure fault's, nor
drops a key a missing-env fault of the run drops (its absence breaks the service again). Arrival times
follow the faults' own ramped process over the injection window (`timeline.arrival_times`),
so timing does not separate them either. On a cluster without N-1 capacity (none of the
catalog's apps now) no twin would ship within `SETTLE_S` of an infrastructure fault's start
(`_unfrozen_times`), and that freeze would be a tell.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .benign_edits import benign_config_value, benign_revision_base, config_diff, drop_diff
from .timeline import (
    DURATION_RANGE,
    BenignChange,
    ScheduledFault,
    arrival_times,
    artifact_key,
    holds_rollout,
    touched_artifacts,
)

if TYPE_CHECKING:
    from ..catalog import Fault
    from ..catalog.apps import App, ConfigEntry

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


def timeout_callee(app: App, service: str, key: str) -> str | None:
    """The callee whose client timeout the config key `<CALLEE>_TIMEOUT_MS` of `service` sets."""
    for e in app.edges:
        if e.source == service and re.sub(r"[^A-Za-z0-9]", "_", e.target).upper() + "_TIMEOUT_MS" == key:
            return e.target
    return None


def twin_config_value(
    entry: ConfigEntry,
    row: Fault,
    app: App,
    service: str,
    rng: np.random.Generator,
    current: str | None = None,
    excluded: Collection[str] = (),
    favoured: Collection[str] = (),
) -> str | None:
    """A harmless value for `entry` (now `current`) that fits the row's commit message; "" means:
    drop the key. An address moves to one of `address_forms` (never one in `excluded`; half the
    time one in `favoured`, the catalog's fault addresses, where there is one: `draw_form`). Numbers
    move relative to the catalog's value, so repeated twins stay in bounds,
    except a lowered client timeout: it goes to 8-20x the callee's healthy latency, so a tight
    timeout is harmless on a fast callee and fatal on a slow one (the faults write 1-50 ms), and
    which one it is shows in the callee's latency, i.e. telemetry."""
    old, verb = entry.value, row.change.message.split(": ", 1)[-1].split(" ", 1)[0]  # type: ignore[union-attr]
    if row.mechanism == "config_missing_env":
        return ""  # the service's default equals the value: dropping it changes nothing
    if row.mechanism == "config_wrong_address":
        forms = [f for f in address_forms(app, old, excluded) if f != current]
        return draw_form(forms, favoured, rng) if forms else None
    heap = _HEAP.search(old)
    if heap:  # a tenth less heap, still above the working set the simulator models
        mb = int(heap.group(1)) * (1024 if heap.group(2) in "gG" else 1)
        return old[: heap.start()] + f"-Xmx{int(mb * 0.9) // 8 * 8}m" + old[heap.end() :]
    if _NUMBER.match(old) and float(old) > 0:
        bad = _diff_value(row.change.diff) if row.change else None  # type: ignore[union-attr]
        lowers = verb in ("tighten", "lower", "shorten", "reduce") or (
            bad is not None and _NUMBER.match(bad) is not None and float(bad) < float(old)
        )
        callee = timeout_callee(app, service, entry.key) if entry.kind == "timeout_ms" else None
        if lowers and callee is not None:
            tight = int(round(callee_latency_ms(app, callee) * float(rng.uniform(8.0, 20.0))))
            return str(tight) if tight < float(old) else _within(old, 0.7, 0.9, rng)
        return _within(old, 0.7, 0.9, rng) if lowers else _within(old, 1.25, 2.0, rng)
    made = benign_config_value(entry, rng)
    return None if made is None else made[0]


def address_forms(app: App, address: str, excluded: Collection[str] = ()) -> list[str]:
    """The addresses a harmless move of the catalog's `address` may ship: the same service by its
    other name (short or fully qualified in the app's namespace), and the forms the app's
    wrong-address faults use (the next port; the service's name in another namespace), but never
    an address in `excluded` (what the run's faults ship, `fault_values`). Whether an address
    answers shows only in the calls made to it (errors, traces), never in its spelling, and a
    fault's address is no fixed bad value: in a run without that fault a twin may ship it. The
    faults' one form no twin takes is a host with a letter missing, which a careful reviewer
    reads as a typo."""
    m = _ADDRESS.match(address) or _FQDN.match(address)
    if m is None:
        return []
    host, port = m.group(1), m.group(2)
    forms = [f"{host}:{port}", f"{host}.{app.namespace}.svc.cluster.local:{port}", f"{host}:{int(port) + 1}"]
    forms.append(f"{host}.staging.svc.cluster.local:{port}")
    return sorted({f for f in forms if f not in excluded and f != address})


def draw_form(forms: Sequence[str], favoured: Collection[str], rng: np.random.Generator) -> str:
    """One of `forms`; half the time one of those in `favoured` (the values the catalog's faults
    ship, where `forms` holds any). Drawn uniformly, a value seen failing in a training run was a
    fault's in most of its uses (images 62-72%, addresses up to 43%), so remembering the faults'
    values paid; drawn this way they are a fault's in about a third of their uses."""
    known = [f for f in forms if f in favoured]
    if known and rng.random() < 0.5:
        forms = known
    return forms[int(rng.integers(len(forms)))]


def fault_values(faults: Iterable[Fault]) -> set[str]:
    """The images and addresses `faults` ship: a run's twins never ship one of them, so that an
    address or a tag means the same to every service for the whole run (a fault's behaviour is
    keyed by the value it ships)."""
    out = set()
    for f in faults:
        if f.mechanism == "bad_image_tag":
            out.add(str(f.params.get("image")))
        elif f.mechanism == "config_wrong_address" and f.change is not None:
            value = _diff_value(f.change.diff)
            if value is not None:
                out.add(value)
    return out


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


def _insertion(base: str, other: str) -> tuple[str, str] | None:
    """`other` as `base` with one piece of text inserted: (the text before it, the piece)."""
    i = 0
    while i < min(len(base), len(other)) and base[i] == other[i]:
        i += 1
    piece = other[i : len(other) - (len(base) - i)]
    return (base[:i], piece) if piece and other == base[:i] + piece + base[i:] else None


def image_forms(app: App, faults: Sequence[Fault], service: str, excluded: Collection[str] = ()) -> list[str]:
    """The images a harmless bump of `service` may ship, in the forms the app's bad-image faults
    (`faults`, the catalog's) use (a patch bump, a four-part hotfix tag, a release candidate, the
    same tag from the registry a fault pulls from) but never an image in `excluded` (what the
    run's faults ship, `fault_values`): whether a tag exists shows only when a pod pulls it
    (`ImagePullBackOff`), never in its spelling, and in a run without a bad-image fault its tag
    may be one that exists."""
    image = app.service(service).image
    repo, _, tag = image.rpartition(":")
    bad = set(excluded)
    forms = [f"{repo}:{_bumped_tag(tag)}"]
    forms += [f"{repo}:{tag}.{k}" for k in (1, 2, 3)] + [f"{repo}:{tag}-rc{k}" for k in (0, 1, 2)]
    for f in faults:  # a registry form (e.g. `staging-` before the org), moved onto this service
        if f.mechanism != "bad_image_tag" or f.target == service:
            continue
        own = app.service(f.target).image
        found = _insertion(own.rpartition(":")[0], str(f.params.get("image", "")).rpartition(":")[0])
        if found and repo.startswith(found[0]):
            at = len(found[0])
            forms.append(f"{repo[:at]}{found[1]}{repo[at:]}:{tag}")
    return sorted({f for f in forms if f not in bad and f != image})


def _bumped_tag(tag: str) -> str:
    m = re.search(r"(\d+)\.(\d+)\.(\d+)$", tag)
    return f"{tag[: m.start()]}{m.group(1)}.{m.group(2)}.{int(m.group(3)) + 1}" if m else f"{tag}-r1"


def callee_latency_ms(app: App, service: str, _memo: dict[str, float] | None = None) -> float:
    """A generous estimate of a call's mean latency to `service` on a healthy cluster: its own
    service time plus one call of each of its out-edges (the call graph is acyclic)."""
    memo = {} if _memo is None else _memo
    if service not in memo:
        memo[service] = app.service(service).sim.service_time_ms + sum(
            callee_latency_ms(app, e.target, memo) for e in app.edges if e.source == service
        )
    return memo[service]


class _Planner:
    """State of the twins drawn so far (what each artifact, deployment and node holds)."""

    def __init__(
        self,
        app: App,
        pool: Sequence[Fault],
        held: dict[str, list[int]],
        fault_revs: dict[str, set[int]],
        base_rev: int,
        excluded: Collection[str] = (),
        kept_keys: Collection[tuple[str, str]] = (),
    ) -> None:
        from ..catalog.apps import config_artifact_id

        self.app, self.pool, self.held, self.fault_revs, self.next_rev = app, pool, held, fault_revs, base_rev
        self.excluded = excluded  # the images and addresses the run's faults ship (`fault_values`)
        self.fault_values = fault_values(pool)  # the catalog's: twins favour them (`draw_form`)
        # (service, key) a missing-env fault of the run drops: dropping it again breaks the service
        # again (its behaviour is keyed by the key's absence), so no twin drops it
        self.kept_keys = kept_keys
        self.code_rev: dict[str, int] = {}  # source file -> the last revision shipped
        self.values: dict[str, str | None] = {}  # config key -> its value now (None: dropped)
        self.images: dict[str, str] = {}  # service -> the image its last twin shipped
        self.scaled: dict[str, int] = {}  # service -> current replica delta (0 or +-1)
        self.cordoned_until: dict[str, int] = {}
        self.policies: set[str] = set()
        self.config = {config_artifact_id(s.name, c): (s.name, c) for s in app.services for c in s.config}
        self.callees: dict[str, set[str]] = {}
        for e in app.edges:
            self.callees.setdefault(e.source, set()).add(e.target)

    def added_m(self, zone: str) -> int:
        """CPU requests (m) the replica twins add in `zone` now (each scaled service one pod)."""
        pods = (self.app.service(svc) for svc, delta in self.scaled.items() if delta)
        return sum(p.scheduled_cpu_m for p in pods if zone in p.zones)

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
                new = twin_config_value(
                    entry, row, self.app, svc, rng, current, self.excluded, self.fault_values
                )
                shown = entry.model_copy(update={"value": current})
            if new is None or new == current or (new == "" and (svc, entry.key) in self.kept_keys):
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
                forms = image_forms(self.app, self.pool, svc, self.excluded)
                forms = [f for f in forms if f != self.images.get(svc)]
                if not forms:
                    return None
                value = self.images[svc] = draw_form(forms, self.fault_values, rng)
            elif field == "replicas":
                # up by one, or back to the catalog's count, and only on a cluster with N-1 capacity:
                # on Train Ticket's leaderboard seed, when its nodes had none, extra pods (or a
                # scale-down) left the pods a node fault evicts Pending and saturated the entry point
                if not self.app.survives_node_loss:
                    return None
                delta = 0 if self.scaled.get(svc, 0) else 1
                # the added pods of all twins together stay within each zone's spare room with a
                # node gone (a review found three of them on one Astronomy Shop zone left the pods a
                # node fault evicted Pending)
                if delta and any(
                    self.added_m(z) + s.scheduled_cpu_m > self.app.spare_with_node_lost_m[z] for z in s.zones
                ):
                    return None
                self.scaled[svc] = delta
                value = str(s.replicas + delta)
            elif field == "readiness_timeout_s":
                if s.readiness_probe is None:
                    return None
                value = str(s.readiness_probe.timeout_s + int(rng.integers(1, 5)))
            elif field == "cpu_limit_m":
                # right-sized down to 6-10x the pod's need at the mean load where that is below the
                # limit (half the time; the faults cut to about 1x, so the direction of a change says
                # nothing and its size says something only next to the usage: telemetry), else
                # raised; set at 3-6x where none is set (every such service passes at 3x). Not lower:
                # the catalog's mean-load need underestimates bursts (Train Ticket's seat, station
                # and train services throttle at 4x it)
                limit, need = s.resources.cpu_limit_m, cpu_need_m(self.app, svc)
                if not limit:
                    value = str(_retuned(0, need, 5, (3.0, 6.0), rng))
                elif 10.0 * need < limit and rng.random() < 0.5:
                    value = str(_retuned(limit, need, 5, (6.0, 10.0), rng))
                else:
                    value = _within(str(limit), 1.25, 2.0, rng)
            else:  # like CPU: right-sized down to 1.9-2.2x resident memory where that is below the
                # limit (half the time; the faults cut below it), else raised; set at 4-8x where none
                # is. Not on a JVM: its working set runs well above the catalog's resident size (two of
                # Train Ticket's Java services fired ContainerMemoryNearLimit at 1.9x)
                limit, resident = s.resources.mem_limit_mi, s.sim.base_memory_mi
                if not limit:
                    value = str(_retuned(0, resident, 8, (4.0, 8.0), rng))
                elif 1.9 * resident + 8 < limit and s.language != "Java" and rng.random() < 0.5:
                    top = min(2.2, (limit - 8) / resident)
                    value = str(_retuned(limit, resident, 8, (1.9, top), rng))
                else:
                    value = _within(str(limit), 1.25, 2.0, rng)
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
    would cover three quarters of some runs' injection time, itself a tell. This one is a tell too:
    every change within it is a fault, and an adversarial review scored 19.7 on Astronomy Shop's
    leaderboard seed with that rule alone when its nodes were sized without N-1 capacity. Freezing
    faulty changes the same way removed nearly every infrastructure fault (the change faults are
    one every 90 s, and the windows covered 45% of Astronomy Shop's and Train Ticket's injection
    time on average), so the catalog's nodes are now sized for N-1 capacity and nothing is frozen
    on its apps; the freeze stays for an app that cannot be. Drawn as 3n times with the frozen
    ones removed and n kept at random, so the density elsewhere keeps its shape."""
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
    run_rows = [by_id[sf.fault_id] for sf in scheduled]
    excluded = fault_values(run_rows)
    kept = {(f.target, str(f.params["key"])) for f in run_rows if f.mechanism == "config_missing_env"}
    planner = _Planner(app, pool, held, fault_revs, benign_revision_base(app, pool), excluded, kept)
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
        busy = {sf.target for sf in active if holds_rollout(by_id[sf.fault_id])}
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
        made = _Planner(app, pool, {}, {}, benign_revision_base(app, pool)).twin(row, at_s, set(), (), rng)
        if made is not None:
            out.append(replace(made, until_s=None if made.until_s is None else at_s + 300))
    return out
