"""Adversarial review of the production change stream (-v3): read the VALUES and FORM changes write.

No metric, log or trace is read. The policy reads alerts, the deploy history (commit diffs), the
Deployments (rollout history, image), each service's deployed config (`read_config`: env, limits,
replicas, readiness probe), nodes and NetworkPolicies, plus the public catalog (rows, scope,
remedies, topology). A change is claimed as a fault only when a *tell* says its value or form is a
fault's; then, as `change_reader` does, it is claimed once an alert fires in its row's scope and the
row's remedy is applied.

Tells (each can be switched on alone with ``ChangeValueReader(tells={...})``):
- ``config_value``: a pipeline config diff whose new value is extreme relative to the old one
  (numbers, with or without a unit, incl. ``-Xmx``: new <= 0, ratio < 0.45 or > 2.5; twins move
  within 0.7-0.9x or 1.25-2x; a client timeout below 14 ms), an address whose host changed (twins
  write the faults' other address forms since `change_stream.address_forms`: the next port,
  another namespace; before, any port or namespace change was a fault's), or
  any other string value changed (twins only change numbers, addresses, log levels and toggles).
  Dropped keys are not claimed (twins drop the same keys).
- ``flag``: every flagd ``defaultVariant`` flip to a non-"off" variant (flags have no twins).
- ``image_tag``: an image that is not the catalog image with only its patch number raised
  (staging registry, ``-rc0``, four-part tags). Since the twins use the faults' forms
  (`change_stream.image_forms`), this claims twins too.
- ``probe_path``: the readiness probe's path changed (twins only tune its timeout).
- ``replicas``: replicas set to 0; on apps without N-1 capacity (Astronomy Shop, Train Ticket) any
  replica change (twins never scale there).
- ``limits``: a CPU limit cut below 0.15 or a memory limit below 0.6 of the catalog's (twins now
  right-size down too; the first version compared with the catalog's per-pod need, which the
  agent's view no longer carries: `catalog.model.public_app`).
- ``netpol``: a ``deny-X-to-Y`` policy where the topology has an edge X -> Y (twins block only a
  service X never calls).
- ``drain`` (off by default): a node cordon (`NodeNotSchedulable` event) with pods killed in the
  same second and no rollout started then (a drain evicts; maintenance twins move pods by rolling
  restarts, "Scaled up replica set", or on full clusters only cordon); the row is the node's row
  whose target had a pod killed.
- ``revert`` (off by default): a pipeline change the pipeline later reverts (`Revert "<message>"`,
  faults only, at their planned end); measured: every such claim is false (the fault has ended).
- ``addr_rows`` (off by default): an address moved to the next port or another namespace on a host
  at least `ADDR_ROWS` wrong-address rows name (found by a review when twins avoided every catalog
  fault's address: such hosts got no port or namespace twins; since twins avoid only their own
  run's faults' values, 8-25% of such moves are faults').
- ``addr_memo``, ``image_memo`` (off by default): an address or image the faults of training seeds
  (`MEMO_SEEDS`, from their schedules: what training runs' `Revert` commits show) shipped on that
  service; before twins could ship other runs' fault values, 100% of such values were faults',
  now 20-40% (twins draw the catalog's fault values half the time).
- ``freeze``: on apps without N-1 capacity, any change (any plane, incl. code) within 300 s of an
  infrastructure fault's start (a node first seen NotReady): twins are frozen there. No catalog
  app lacks N-1 capacity since nodes are sized for it, so this claims nothing now (it scored 19.0
  on Astronomy Shop's leaderboard seed before).

Run: python benchmarks/change_value_reader.py [--apps a,b] [--seeds None,10001] [--tells t1,t2]
     [--each]   (--each: every tell alone, too)
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter

from sre_marathon_gym.agents.base import zero_usage
from sre_marathon_gym.agents.oracle import remedy_call
from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.catalog.apps import label_place
from sre_marathon_gym.evaluation.episode_runner import make_marathon_env, run_scored_episode

APPS = ("online_boutique", "astronomy_shop", "train_ticket")
TELLS = (
    "config_value",
    "flag",
    "image_tag",
    "probe_path",
    "replicas",
    "limits",
    "netpol",
    "freeze",
    "drain",
    "revert",
    "addr_rows",
    "addr_memo",
    "image_memo",
)
# off by default, measured harmful: revert (claims come after the fault ended), drain (the drain is
# found, but the node's rows name different target services and the guess is mostly wrong), and
# since the stream's fixes image_tag (twins ship the faults' tag forms: 7-19 false claims a run),
# freeze (no catalog app freezes) and the review's addr_rows, addr_memo and image_memo (twins ship
# other runs' fault values: they claim about as many twins as faults)
DEFAULT_TELLS = tuple(
    t
    for t in TELLS
    if t not in ("revert", "drain", "image_tag", "freeze", "addr_rows", "addr_memo", "image_memo")
)
FREEZE_S = 300
# a limit cut below this share of the catalog's is a fault's: twins right-size CPU down to 6-10x
# the pod's need where there is room (as low as 0.09 of the limit) and memory to 1.9-2.2x resident
# (about 0.85 of the catalog's limit); the faults cut to about 1x need
CPU_CUT, MEMORY_CUT = 0.15, 0.6
TIGHT_TIMEOUT_MS = 14

_NUM_UNIT = re.compile(r"^(-?\d+(?:\.\d+)?)([A-Za-z]*)$")
_HEAP = re.compile(r"-Xmx(\d+)([mMgG])")
_ADDR = re.compile(r"^([a-z0-9-]+)((?:\.[a-z0-9-]+)*)?:(\d+)$")
_SEMVER = re.compile(r"^(.*?)(v?)(\d+)\.(\d+)\.(\d+)$")


def _number(v: str) -> float | None:
    h = _HEAP.search(v or "")
    if h:
        return int(h.group(1)) * (1024 if h.group(2) in "gG" else 1)
    m = _NUM_UNIT.match((v or "").strip())
    return float(m.group(1)) if m else None


def config_is_faulty(
    old: str | None, new: str | None, namespace: str, base: str | None = None, key: str = ""
) -> bool | None:
    """True: a fault's value; False: a twin's; None: cannot tell (dropped keys, re-added keys).
    Numbers are compared with the catalog's value `base` (twins move relative to it); a client
    timeout by its size (twins tighten one to 8-20x the callee's latency, at least 14 ms here)."""
    if new is None or old is None or old == "":
        return None
    if key.endswith("_TIMEOUT_MS") and _number(new) is not None:
        return _number(new) < TIGHT_TIMEOUT_MS
    if base is not None and _number(base) is not None:
        old = base
    if old.lower() in ("true", "false") or old.lower() in (
        "debug",
        "info",
        "warn",
        "warning",
        "error",
        "trace",
    ):
        return False
    a, b = _number(old), _number(new)
    if a is not None and b is not None:
        if b <= 0:
            return True
        if a <= 0:
            return None
        r = b / a
        return r < 0.45 or r > 2.5
    ma, mb = _ADDR.match(old), _ADDR.match(new)
    if ma and mb:
        # twins write the faults' address forms (the next port, another namespace) but never a
        # misspelled host: only a changed host is still a fault's
        return True if mb.group(1) != ma.group(1) else None
    return old != new


ADDR_ROWS = 3  # `addr_rows`: a host at least this many wrong-address rows name
MEMO_SEEDS = range(20001, 20101)  # `addr_memo`, `image_memo`: training seeds whose faults are remembered


def _addr_moved(old: str | None, new: str | None) -> bool:
    """Same host, and the next port or another namespace than before (the forms twins share)."""
    b, n = _ADDR.match(old or ""), _ADDR.match(new or "")
    if not (b and n) or b.group(1) != n.group(1):
        return False
    return n.group(3) != b.group(3) or ".staging." in (new or "")


def _rows_per_host(cat, app: str) -> Counter:
    """Public: wrong-address rows per downstream host, read from the rows' titles."""
    c: Counter = Counter()
    for f in cat.faults[app]:
        if f.mechanism == "config_wrong_address" and " a wrong " in f.title:
            c[f.title.split(" a wrong ")[1].split(" address")[0]] += 1
    return c


_MEMO: dict[str, tuple[set, set]] = {}


def _memo(app: str) -> tuple[set, set]:
    """(service, key, address) and (service, image) of the faults of training seeds `MEMO_SEEDS`,
    read off their schedules: what a policy could remember from training runs' deploy histories
    (the pipeline's `Revert "..."` commits mark every faulty commit)."""
    if app not in _MEMO:
        from sre_marathon_gym.schedule.change_stream import fault_values
        from sre_marathon_gym.schedule.fault_schedule import FaultSchedule

        cat = load_catalog()  # the whole catalog: the agent's view has no fault row's literal commit
        rows = {f.id: f for f in cat.faults[app]}
        addresses, images = set(), set()
        for seed in MEMO_SEEDS:
            for sf in FaultSchedule.generate(cat, app, seed).faults:
                f = rows[sf.fault_id]
                for v in fault_values([f]):
                    if f.mechanism == "bad_image_tag":
                        images.add((f.target, v))
                    else:
                        addresses.add((f.target, str(f.params["key"]), v))
        _MEMO[app] = (addresses, images)
    return _MEMO[app]


def _diff_kv(diff: str) -> tuple[str | None, str | None, str | None]:
    """(key, old value, new value) of a config diff; new None when the key is dropped."""
    key = old = new = None
    for line in diff.splitlines():
        if line.startswith(("---", "+++")):
            continue
        m = re.match(r"^[-+ ]\s*- name: (\S+)", line)
        if m:
            key = m.group(1)
            continue
        m = re.match(r'^([-+])\s*(?:value|(\S+)):\s*"?(.*?)"?\s*$', line)
        if m and (m.group(2) is None or m.group(2) not in ("data", "env")):
            if m.group(2):
                key = m.group(2)
            if m.group(1) == "-":
                old = m.group(3)
            else:
                new = m.group(3)
    return key, old, new


def _limit(v: str | None) -> float | None:
    if not v:
        return None
    m = re.match(r"^(\d+(?:\.\d+)?)(m|Mi|Gi)?$", str(v))
    if not m:
        return None
    x = float(m.group(1))
    return x * 1024 if m.group(2) == "Gi" else x


def image_is_faulty(base: str, new: str) -> bool:
    """Twins bump the patch number of the catalog image's tag, nothing else."""
    bi, _, btag = base.rpartition(":")
    ni, _, ntag = new.rpartition(":")
    if bi != ni:
        return True
    mb, mn = _SEMVER.match(btag), _SEMVER.match(ntag)
    if not (mb and mn):
        return True
    return not (
        mb.group(1) == mn.group(1)
        and mb.group(3, 4) == mn.group(3, 4)
        and int(mn.group(5)) > int(mb.group(5))
    )


class ChangeValueReader:
    """Claims a change only when its value or form is a fault's (a tell), once an alert fires in scope."""

    name = "change_value_reader"

    def __init__(self, tells=None, act=True) -> None:
        self.tells = set(DEFAULT_TELLS if tells is None else tells)
        unknown = self.tells - set(TELLS)
        if unknown:
            raise ValueError(f"unknown tells {sorted(unknown)}; known: {TELLS}")
        self.act, self.usage = act, zero_usage()

    def reset(self, env, seed) -> None:
        self.usage = zero_usage()
        self.incident: dict[str, str] = {}
        self.row: dict[str, object] = {}
        self.acted: set[str] = set()
        self.mine: list[tuple[float, str]] = []
        self.first_seen: dict[str, float] = {}
        self.snap: dict[str, dict] = {}
        self.manifest: dict[str, tuple] = {}  # key -> candidate (sticky once seen)
        self.infra_starts: list[float] = []
        self.notready: set[str] = set()
        self.drain_checked: set[str] = set()
        self.drained: dict[str, tuple] = {}
        self.hits: Counter = Counter()  # tell -> candidates it produced
        self.last_now = 0.0

    # ------------------------------------------------------------------ helpers
    def _rows(self, u, pred) -> list:
        return [f for f in u.catalog.faults[u.app.app] if pred(f)]

    def _frozen(self, u, t: float) -> bool:
        if "freeze" not in self.tells or u.app.survives_node_loss:
            return False
        # a node is first seen NotReady 0-120 s after its fault starts (the poll and the kubelet's
        # grace period): only times within 300 s of every start that is possible are frozen
        return any(d - FREEZE_S + 10 < t < d - 120 + FREEZE_S - 10 for d in self.infra_starts)

    def _own(self, svc: str, t: float) -> bool:
        return any(abs(t - m) < 120 and s == svc for m, s in self.mine)

    # ------------------------------------------------------------------ planes
    def _deploy(self, u, call) -> list[tuple]:
        out = []
        h = call({"tool": "get_deploy_history", "limit": 500})
        changes = h.data["changes"] if h.ok else []
        reverted: set[str] = set()  # changes the pipeline reverted (faults at their planned end)
        if "revert" in self.tells:
            last: dict[str, str] = {}
            for c in changes:
                m = re.match(r'^Revert "(.*)"$', c["message"])
                if m and m.group(1) in last:
                    reverted.add(last.pop(m.group(1)))
                elif not m:
                    last[c["message"]] = c["id"]
        for c in changes:
            msg = c["message"]
            if msg.startswith('Revert "') or c.get("author") != "ci":
                continue
            diff, svc, t = c.get("diff") or "", c["service"], c["submitted_s"]
            frozen = self._frozen(u, t) or c["id"] in reverted
            ftell = "revert" if c["id"] in reverted else "freeze"
            tell = None
            if c["kind"] in ("config", "flag"):
                if "defaultVariant" in diff or c["kind"] == "flag":
                    nv = re.findall(r'^\+\s*"defaultVariant":\s*"([^"]+)"', diff, re.M)
                    flag = re.search(r'^\s*"(\w+)":\s*\{', diff, re.M)
                    if "flag" in self.tells and nv and nv[-1] != "off" and flag:
                        rows = self._rows(
                            u,
                            lambda f, k=flag.group(1): (
                                f.mechanism == "feature_flag" and f.artifact.endswith("/" + k)
                            ),
                        )
                        rows = [f for f in rows if str(f.params.get("variant")) == nv[-1]] or rows
                        if rows:
                            out.append((c["id"], t, rows, rows[0].artifact, c, "flag"))
                    continue
                key, old, new = _diff_kv(diff)
                if key is None:
                    continue
                base = next((e.value for e in u.app.service(svc).config if e.key == key), None)
                verdict = config_is_faulty(old, new, u.app.namespace, base, key)
                if verdict and "config_value" in self.tells:
                    tell = "config_value"
                elif (
                    verdict is None
                    and "addr_rows" in self.tells
                    and _addr_moved(base or old, new)
                    and _rows_per_host(u.catalog, u.app.app)[_ADDR.match(new or "").group(1)] >= ADDR_ROWS
                ):
                    tell = "addr_rows"
                elif verdict is None and "addr_memo" in self.tells and (svc, key, new) in _memo(u.app.app)[0]:
                    tell = "addr_memo"
                elif frozen:
                    tell = ftell
                if tell is None:
                    continue
                rows = self._rows(
                    u,
                    lambda f, s=svc, k=key: (
                        f.mechanism.startswith("config_")
                        and f.target == s
                        and any(n.endswith("/" + k) for n in (f.artifact, *f.aliases))
                    ),
                )
                exact = [f for f in rows if f.change and new is not None and f'"{new}"' in f.change.diff]
                rows = (
                    exact or [f for f in rows if f.mechanism != "config_missing_env" or new is None] or rows
                )
                if rows:
                    out.append((c["id"], t, rows, rows[0].artifact, c, tell))
                continue
            if c["kind"] != "code" or not frozen:
                continue
            m = re.search(r"^--- a/(\S+)", diff, re.M)
            if not m:
                continue
            tok = m.group(1)
            rows = self._rows(
                u, lambda f, s=svc, k=tok: any(n.startswith(s) and k in n for n in (f.artifact, *f.aliases))
            )
            rows = [f for f in rows if f.change and f.change.message == msg] or rows
            if not rows:
                continue
            names = Counter(
                n
                for f in rows
                for n in (f.artifact, *f.aliases)
                if n.startswith(svc + ":") and tok in n and "@" not in n
            )
            name = min(names, key=lambda n: (-names[n], len(n))) if names else rows[0].artifact
            out.append((c["id"], t, rows, name, c, ftell))
        return out

    def _manifest(self, u, call, now) -> list[tuple]:
        """Poll every service's deployed config; a changed field with a tell becomes a candidate."""
        d = call({"tool": "get_k8s_state", "resource": "deployments"})
        hist = {dep["name"]: dep.get("history") or [] for dep in (d.data["items"] if d.ok else [])}
        for s in u.app.services:
            r = call({"tool": "read_config", "service": s.name})
            if not r.ok:
                continue
            cur = r.data
            prev = self.snap.get(s.name)
            self.snap[s.name] = cur
            if prev is None:
                continue
            h = hist.get(s.name) or []
            t = h[-1]["time_s"] if h and h[-1]["time_s"] > self.last_now - 1 else now - 15
            if self._own(s.name, now):
                continue
            frozen = self._frozen(u, t)

            def add(mech, field, tell, t=t, svc=s.name, pick=None):
                rows = self._rows(u, lambda f: f.target == svc and f.mechanism == mech)
                if pick:
                    rows = [f for f in rows if pick(f)] or rows
                if rows:
                    key = f"m:{svc}:{field}:{t}"
                    self.manifest[key] = (key, t - 5, rows, rows[0].artifact, {}, tell)

            # image
            if cur.get("image") != prev.get("image") and cur.get("image") != s.image:
                bad = image_is_faulty(s.image, cur["image"])
                tell = "image_tag" if bad and "image_tag" in self.tells else ("freeze" if frozen else None)
                if tell is None and "image_memo" in self.tells:
                    tell = "image_memo" if (s.name, cur["image"]) in _memo(u.app.app)[1] else None
                if tell:
                    add(
                        "bad_image_tag",
                        "image",
                        tell,
                        pick=lambda f, v=cur["image"]: f.params.get("image") == v,
                    )
            # readiness probe path
            if cur.get("readiness_probe_path") != prev.get("readiness_probe_path"):
                base = s.readiness_probe.path if s.readiness_probe else None
                if cur.get("readiness_probe_path") != base:
                    tell = "probe_path" if "probe_path" in self.tells else ("freeze" if frozen else None)
                    if tell:
                        add("bad_readiness_probe", "probe", tell)
            elif cur.get("readiness_probe_timeout_s") != prev.get("readiness_probe_timeout_s") and frozen:
                add("bad_readiness_probe", "probe_t", "freeze")
            # replicas
            rc, rp = sum((cur.get("replicas") or {}).values()), sum((prev.get("replicas") or {}).values())
            if rc != rp:
                base = s.replicas * max(1, len(s.zones))
                tell = None
                if "replicas" in self.tells and (rc == 0 or (not u.app.survives_node_loss and rc != base)):
                    tell = "replicas"
                elif frozen and rc != base:
                    tell = "freeze"
                if tell:
                    add("scale_to_zero", "replicas", tell)
            # limits
            for fld, mech, base_v, deep in (
                ("cpu", "cpu_limit_cut", s.resources.cpu_limit_m, CPU_CUT),
                ("memory", "memory_limit_cut", s.resources.mem_limit_mi, MEMORY_CUT),
            ):
                lc = _limit(((cur.get("resources") or {}).get("limits") or {}).get(fld))
                lp = _limit(((prev.get("resources") or {}).get("limits") or {}).get(fld))
                if lc == lp or lc is None or (base_v and lc == base_v):
                    continue
                # the agent's view has no simulator parameters (what a pod needs shows in its usage
                # only), so a limit set where none was cannot be judged; a cut is judged by its depth
                cut = bool(base_v) and lc < deep * base_v
                tell = "limits" if cut and "limits" in self.tells else ("freeze" if frozen else None)
                if tell:
                    add(mech, fld, tell)
        return list(self.manifest.values())

    def _nodes(self, u, call, now) -> list[tuple]:
        out = []
        r = call({"tool": "get_k8s_state", "resource": "nodes"})
        for n in r.data["items"] if r.ok else []:
            name = n["name"]
            if n["status"] != "Ready":
                if name not in self.notready:
                    self.notready.add(name)
                    self.infra_starts.append(now)
            else:
                self.notready.discard(name)
            cordoned = not n["schedulable"] and n["status"] == "Ready"
            if not cordoned:
                self.first_seen.pop("node/" + name, None)
                self.drain_checked.discard(name)
                self.drained.pop(name, None)
                continue
            since = self.first_seen.setdefault("node/" + name, now - 15)
            if "drain" in self.tells and name not in self.drain_checked:
                e = call({"tool": "get_k8s_state", "resource": "events", "limit": 2000})
                evs = e.data["items"] if e.ok else []
                cords = [
                    x["time_s"]
                    for x in evs
                    if x["reason"] == "NodeNotSchedulable" and x["object"] == f"node/{name}"
                ]
                if cords:
                    self.drain_checked.add(name)
                    tc = cords[-1]
                    same = [x for x in evs if abs(x["time_s"] - tc) < 1]
                    killed = {
                        x["object"].removeprefix("pod/").rsplit("-", 2)[0]
                        for x in same
                        if x["reason"] == "Killing"
                    }
                    rolled = any(
                        x["reason"] == "ScalingReplicaSet" and "Scaled up" in x["message"] for x in same
                    )
                    if killed and not rolled:
                        rows = self._rows(
                            u,
                            lambda f, a=f"node/{name}": (
                                f.artifact == a and f.mechanism == "node_cordon_drain"
                            ),
                        )
                        rows = [f for f in rows if f.target in killed]
                        if rows:
                            self.drained[name] = (f"node:{name}:{tc}", tc, rows, f"node/{name}", {}, "drain")
                if name in self.drained:
                    out.append(self.drained[name])
                    continue
            elif name in self.drained:
                out.append(self.drained[name])
                continue
            if self._frozen(u, since):
                rows = self._rows(u, lambda f, a=f"node/{name}": f.artifact == a)
                if rows:
                    out.append((f"node:{name}:{since}", since, rows, f"node/{name}", {}, "freeze"))
        return out

    def _netpol(self, u, call, now) -> list[tuple]:
        out = []
        callees: dict[str, set[str]] = {}
        for e in u.app.edges:
            callees.setdefault(e.source, set()).add(e.target)
        r = call({"tool": "get_k8s_state", "resource": "networkpolicies"})
        seen = set()
        for p in r.data["items"] if r.ok else []:
            name = p["name"]
            seen.add(name)
            since = self.first_seen.setdefault("np/" + name, now - 15)
            used = p.get("denies_egress_to") in callees.get(p.get("pod_selector"), set())
            tell = (
                "netpol"
                if used and "netpol" in self.tells
                else ("freeze" if self._frozen(u, since) else None)
            )
            if not tell:
                continue
            rows = self._rows(u, lambda f, a=f"networkpolicy/{name}": f.artifact == a)
            if rows:
                out.append((f"np:{name}:{since}", since, rows, f"networkpolicy/{name}", {}, tell))
        for k in [k for k in self.first_seen if k.startswith("np/") and k[3:] not in seen]:
            self.first_seen.pop(k)
        return out

    # ------------------------------------------------------------------ loop
    def invoke(self, env, obs, info) -> None:
        u = env.unwrapped
        call = u.call_tool
        r = call({"tool": "get_alerts", "state": "all", "limit": 2000})
        if not r.ok:
            return
        now, alerts = float(r.data["now"]), r.data["alerts"]
        where = {}
        for a in alerts:
            place = label_place(a["labels"])
            where[a["id"]] = u.app.label_services(a["labels"]) | (
                {place[1], f"{place[0]}/{place[1]}"} if place else set()
            )
        cands = self._nodes(u, call, now)  # first: infra starts feed the freeze tell
        cands += self._deploy(u, call)
        cands += self._manifest(u, call, now)
        cands += self._netpol(u, call, now)
        self.last_now = now
        for key, start, rows, name, change, tell in cands:
            if key not in self.incident:
                best = None
                for f in rows:
                    touched = set(f.scope) | {f.target}
                    ids = [a["id"] for a in alerts if a["fired_at"] >= start and where[a["id"]] & touched]
                    if ids and (best is None or len(ids) > len(best[1])):
                        best = (f, ids)
                if best is None:
                    continue
                f, ids = best
                opened = call({"tool": "open_incident", "alert_ids": ids, "title": name})
                if not opened.ok:
                    continue
                self.hits[tell] += 1
                self.incident[key], self.row[key] = opened.data["id"], f
                call(
                    {
                        "tool": "set_root_cause",
                        "incident_id": opened.data["id"],
                        "services": [f.target],
                        "artifact": name,
                        "summary": f"changed ({tell})",
                    }
                )
            if tell == "revert":  # already reverted by the pipeline: nothing to repair
                continue
            if not self.act or key in self.acted or change.get("status", "deployed") != "deployed":
                continue
            self.acted.add(key)
            self._remedy(call, now, key, start)

    def _remedy(self, call, now, key, start) -> None:
        inc, f = self.incident[key], self.row[key]
        for rem in f.remedies:
            try:
                c = remedy_call(rem, inc)
            except ValueError:
                continue
            if c["tool"] == "rollback":
                d = call({"tool": "get_k8s_state", "resource": "deployments", "service": c["service"]})
                hist = d.data["items"][0]["history"] if d.ok and d.data["items"] else []
                before = [h["revision"] for h in hist if h["time_s"] < start - 1]
                if before and before[-1] != hist[-1]["revision"]:
                    c["revision"] = max(before)
            if call(c).ok:
                self.mine.append((now, c.get("service", "")))
                return


def run_one(app: str, seed, tells, cat, agent_name="change_value_reader"):
    from sre_marathon_gym.agents import make_agent

    agent = ChangeValueReader(tells) if agent_name == "change_value_reader" else make_agent(agent_name)
    mode = "eval" if seed is None else "train"
    run = run_scored_episode(
        lambda: make_marathon_env(app, mode, cat, changes="production"), agent, seed=seed
    )
    return run.card, getattr(agent, "hits", {})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--seeds", default="None,10001,10002")
    ap.add_argument("--tells", default=",".join(DEFAULT_TELLS))
    ap.add_argument("--each", action="store_true", help="also every tell alone")
    ap.add_argument("--runbook", action="store_true", help="also the Runbook on the same runs")
    args = ap.parse_args()
    cat = load_catalog()
    seeds = [None if s == "None" else int(s) for s in args.seeds.split(",")]
    configs = [("all", set(args.tells.split(",")))]
    if args.each:
        configs += [(t, {t}) for t in TELLS]
    print(
        f"{'policy':<14} {'app':<16} {'seed':>6} {'score':>6} {'false':>6}  claims by tell   (s)", flush=True
    )
    for app in args.apps.split(","):
        for seed in seeds:
            if args.runbook:
                t0 = time.time()
                card, _ = run_one(app, seed, None, cat, "runbook")
                row = f"{'runbook':<14} {app:<16} {seed!s:>6} {card.marathon_score:6.1f}"
                print(f"{row} {card.false_claims:6d}  -  ({time.time() - t0:.0f})", flush=True)
            for label, tells in configs:
                t0 = time.time()
                card, hits = run_one(app, seed, tells, cat)
                print(f"{label:<14} {app:<16} {seed!s:>6} {card.marathon_score:6.1f} {card.false_claims:6d}"
                      f"  {dict(hits)}  ({time.time() - t0:.0f})", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
