"""The recent changes of a cluster, read from its change planes through the tools, each named in
the catalog's artifact-id form with the call that would undo it.

Why a separate reader: which changes happened is a question of record-keeping (the pipeline's
history, the rollout history, node and NetworkPolicy state); whether one of them broke something
is a question of telemetry (`symptoms.py`). The planes:

* pipeline (`get_deploy_history`): code, config and flag commits; the agent's own (author
  "agent") are not changes to suspect. A commit is live from its `rollout-started` stage.
* rollout history (`get_k8s_state` deployments): a revision that no pipeline commit and no own
  action explains was made by hand (`kubectl set`): image, resource limits or readiness probe.
  What changed is read as an operator would: the image against the Deployment listed at the last
  look, limits and probe from `read_config` against the copy read before (every config is read
  once at the start and again after each rollout); with no copy yet, limits from
  kube-state-metrics (`kube_pod_container_resource_limits` before and after). A revision whose
  field none of these shows (a restart) names nothing to blame.
* replicas: `kube_deployment_spec_replicas` moving without an own `scale`.
* nodes: a node that became unschedulable or NotReady (the metric dates the transition).
* NetworkPolicies: a policy that was not there at the previous invocation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.clock import METRIC_STEP_S
from .symptoms import Telemetry, query_range

OWN_ACTION_S = 20.0  # an own action explains a revision of its service made this soon after it (a
# config set through the pipeline has its own commit, matched like any other)
PIPELINE_MATCH_S = 6.0  # a commit's rollout and the revision it makes are this close


@dataclass
class Change:
    """One change to suspect."""

    key: str  # stable across invocations
    plane: str  # code | config | flag | image | limits | probe | manifest | replicas | node | netpol
    service: str | None  # whose telemetry answers for it (None: a node, see `suspects`)
    at_s: float  # when it took effect
    artifact: str  # "" for a change that names nothing new (a revert): it only ends the previous one
    remedy: dict[str, Any]  # the undoing call, without incident_id
    suspects: tuple[str, ...] = ()  # a node's services
    note: str = ""
    reverts: bool = False  # a revert: whatever the service's previous change did is undone


@dataclass
class PlaneReader:
    """Reads the planes each invocation; remembers only what an operator's notes would (images,
    configs and policies seen before, own actions)."""

    images: dict[str, str] = field(default_factory=dict)
    configs: dict[str, tuple[float, dict]] = field(default_factory=dict)  # service -> (read at, config)
    fields: dict[str, tuple[str, str]] = field(default_factory=dict)  # revision key -> (plane, field)
    on_node: dict[tuple[str, float], tuple[str, ...]] = field(default_factory=dict)  # (node, t) -> services
    policies: dict[str, float] = field(default_factory=dict)  # name -> when first seen
    own: list[tuple[float, str, str]] = field(default_factory=list)  # (time, tool, target)
    revisions: dict[str, int] = field(default_factory=dict)  # deployment -> revision last seen
    stale: set[str] = field(default_factory=set)  # configs changed since they were read
    last_s: float = 0.0
    now: float = 0.0

    def note_action(self, now: float, tool: str, target: str) -> None:
        self.own.append((now, tool, target))

    def _own_near(self, service: str, t: float, tools: tuple[str, ...] | None = None) -> bool:
        return any(
            s == service and -5.0 <= t - at <= OWN_ACTION_S and (tools is None or tool in tools)
            for at, tool, s in self.own
        )

    # ------------------------------------------------------------ one read
    def read(
        self, call: Callable[[dict], Any], app: Any, tel: Telemetry, now: float, since: float, owner: Callable
    ) -> list[Change]:
        """The changes that took effect since `since` (and reverts, which only end one)."""
        self.now = now
        hist = call({"tool": "get_deploy_history", "since_s": max(0.0, since - 600), "limit": 500})
        commits = hist.data["changes"] if hist.ok else []
        out = [c for c in (_commit(r, app) for r in commits) if c is not None and c.at_s >= since]
        out += self._rollouts(call, commits, since)
        out += self._replicas(tel, since, now)
        out += self._nodes(call, tel, since, owner)
        out += self._policies(call, now)
        self.last_s = now
        return out

    def _rollouts(self, call: Callable, commits: list[dict], since: float) -> list[Change]:
        res = call({"tool": "get_k8s_state", "resource": "deployments"})
        out: list[Change] = []
        rollouts: dict[str, list[float]] = {}
        for c in commits:
            if "rollout-started" in c.get("stages", {}):
                rollouts.setdefault(c["service"], []).append(float(c["stages"]["rollout-started"]))
        for dep in res.data["items"] if res.ok else []:
            name, hist = dep["name"], dep["history"]
            old_image = self.images.get(name, dep["image"])
            self.images[name] = dep["image"]
            if self.revisions.setdefault(name, dep["revision"]) != dep["revision"]:
                self.revisions[name] = dep["revision"]
                self.stale.add(name)
            committed = _matched(hist[1:], rollouts.get(name, []))
            for rev in hist[1:]:
                t = float(rev["time_s"])
                if t < since or rev["revision"] in committed or self._own_near(name, t):
                    continue
                key = f"rev:{name}:{rev['revision']}"
                plane, field_ = self._what_changed(call, key, name, t, dep["image"], old_image)
                out.append(
                    Change(
                        key,
                        plane,
                        name,
                        t,
                        f"deployment/{name}:{field_}" if field_ else "",  # a restart names nothing
                        {"tool": "rollback", "service": name, "before_s": t},
                        note=f"revision {rev['revision']} without a commit",
                    )
                )
        return out

    def _what_changed(
        self, call: Callable, key: str, svc: str, t: float, image: str, old_image: str
    ) -> tuple[str, str]:
        """Which manifest field a hand-made revision changed (decided once, at its first sighting,
        when the copies read before it are still the "before")."""
        if key in self.fields:
            return self.fields[key]
        before = self.configs.get(svc)
        cfg = call({"tool": "read_config", "service": svc})
        if cfg.ok:
            self.configs[svc] = (self.now, cfg.data)
            self.stale.discard(svc)
        found = ("manifest", "")
        if image != old_image:
            found = ("image", "image")
        elif cfg.ok and before is not None and before[0] < t:
            old, new = before[1], cfg.data
            limits = [
                k
                for k in ("cpu", "memory")
                if (old.get("resources") or {}).get("limits", {}).get(k)
                != (new.get("resources") or {}).get("limits", {}).get(k)
            ]
            if limits:
                found = ("limits", f"resources.limits.{limits[0]}")
            elif any(old.get(k) != new.get(k) for k in ("readiness_probe_path", "readiness_probe_timeout_s")):
                found = ("probe", "readinessProbe")
        else:  # no copy from before it: kube-state-metrics still shows the limits before and after
            q = f'min by (resource) (kube_pod_container_resource_limits{{container="{svc}"}})'
            for series in query_range(call, q, t - 4 * METRIC_STEP_S, self.now):
                values = [v for _, v in series["values"] if v is not None]
                if values and abs(values[0] - values[-1]) > 1e-9 * max(abs(values[0]), 1.0):
                    found = ("limits", f"resources.limits.{series['labels'].get('resource', 'cpu')}")
                    break
            else:
                found = ("probe", "readinessProbe")  # the one hand-set field neither shows
        self.fields[key] = found
        return found

    def snapshot(self, call: Callable, services: list[str], calls: int) -> None:
        """Re-read the configs that changed and read those not read yet (at most `calls`): the
        "before" of later diffs."""
        todo = sorted(self.stale & set(services)) + [s for s in services if s not in self.configs]
        for svc in todo[:calls]:
            cfg = call({"tool": "read_config", "service": svc})
            if cfg.ok:
                self.configs[svc] = (self.now, cfg.data)
                self.stale.discard(svc)

    def _replicas(self, tel: Telemetry, since: float, now: float) -> list[Change]:
        out = []
        for dep in tel.keys("replicas"):
            points = tel.raw("replicas", dep)
            for (_, a), (t, b) in zip(points, points[1:]):
                if a == b or t < since or self._own_near(dep, t, ("scale",)):
                    continue
                zones = max(1, len((self.configs.get(dep, (0.0, {}))[1].get("replicas")) or {"": 1}))
                per_zone = max(1, round(a / zones)) if a > 0 else 1
                out.append(
                    Change(
                        f"rep:{dep}:{t:.0f}",
                        "replicas",
                        dep,
                        t,
                        f"deployment/{dep}:replicas",
                        {"tool": "scale", "service": dep, "replicas": per_zone},
                        note=f"replicas {a:g} -> {b:g}",
                    )
                )
        return out

    def _services_on(self, call: Callable, node: str, t: float, owner: Callable) -> tuple[str, ...]:
        """The services that had a pod on `node` in the two minutes before `t` (read once per node)."""
        key = (node, t)
        if key not in self.on_node:
            q = f'max by (pod) (kube_pod_info{{node="{node}"}})'
            pods = [s["labels"].get("pod", "") for s in query_range(call, q, t - 120, t - 1)]
            self.on_node[key] = tuple(sorted({svc for p in pods if (svc := owner(p))}))
        return self.on_node[key]

    def _nodes(self, call: Callable, tel: Telemetry, since: float, owner: Callable) -> list[Change]:
        res = call({"tool": "get_k8s_state", "resource": "nodes"})
        out = []
        for node in res.data["items"] if res.ok else []:
            name = node["name"]
            if not node["schedulable"]:
                t = tel.transition("unschedulable", name, lambda v: v >= 1)
                remedy = {"tool": "cluster_op", "operation": "uncordon", "target": name}
            elif node["status"] != "Ready":
                t = tel.transition("node_ready", name, lambda v: v < 1)
                remedy = {"tool": "restart"}  # move the claimed service's pods off the node
            else:
                continue
            if t is None or t < since:
                continue
            suspects = self._services_on(call, name, t, owner)
            out.append(Change(f"node:{name}:{t:.0f}", "node", None, t, f"node/{name}", remedy, suspects))
        return out

    def _policies(self, call: Callable, now: float) -> list[Change]:
        res = call({"tool": "get_k8s_state", "resource": "networkpolicies"})
        out = []
        present = set()
        for pol in res.data["items"] if res.ok else []:
            name = pol["name"]
            present.add(name)
            first = self.policies.setdefault(name, self.last_s)  # it appeared after the last look
            out.append(
                Change(
                    f"netpol:{name}:{first:.0f}",
                    "netpol",
                    pol.get("pod_selector"),
                    first,
                    f"networkpolicy/{name}",
                    {"tool": "cluster_op", "operation": "delete_network_policy", "target": name},
                    note=f"denies {pol.get('pod_selector')} -> {pol.get('denies_egress_to')}",
                )
            )
        for gone in set(self.policies) - present:
            del self.policies[gone]
        return out


def undo_call(call: Callable[[dict], Any], ch: Change, service: str) -> dict | None:
    """The change's undo as a tool call (without incident_id): a rollback goes to the newest
    revision before the change (None when the deployment is no longer on a revision made since, or
    the change names nothing to undo); a node's undo restarts `service`, the one it blames."""
    undo = dict(ch.remedy)
    if not undo:
        return None
    if undo["tool"] == "restart":
        return {"tool": "restart", "service": service}
    if undo["tool"] != "rollback":
        return undo
    before = undo.pop("before_s")
    dep = call({"tool": "get_k8s_state", "resource": "deployments", "service": undo["service"]})
    hist = dep.data["items"][0]["history"] if dep.ok and dep.data["items"] else []
    older = [h["revision"] for h in hist if h["time_s"] < before - 1]
    if not older or not hist or hist[-1]["time_s"] < before - 1:
        return None
    return {**undo, "revision": max(older)}


def _matched(revisions: list[dict], rollouts: list[float]) -> set[int]:
    """The revisions the pipeline's rollouts made: each rollout explains the one revision closest to
    it, so a hand-made change seconds from a commit is not taken for the commit's."""
    out: set[int] = set()
    for r in sorted(rollouts):
        near = [
            (abs(float(h["time_s"]) - r), h["revision"])
            for h in revisions
            if abs(float(h["time_s"]) - r) <= PIPELINE_MATCH_S and h["revision"] not in out
        ]
        if near:
            out.add(min(near)[1])
    return out


# ------------------------------------------------------------------ pipeline commits
_PATH = re.compile(r"^--- a/(\S+)", re.M)
_ENV = re.compile(r"- name: (\S+)")
_OLD_VALUE = re.compile(r"^-\s+value: (.*)$", re.M)
_CM = re.compile(r"^-\s+(\w[\w.-]*): (.*)$", re.M)
_FLAG = re.compile(r'"(\w+)": \{')
_VARIANT = re.compile(r'^-\s+"defaultVariant": "([^"]*)"', re.M)
_MSG_FLAG = re.compile(r"set (\w+) to (\w+)")


def _commit(c: dict, app: Any) -> Change | None:
    """A pipeline commit as a change (None: the agent's own, not live yet, or nothing to name). A
    revert names nothing new, but ends the change it reverts from the moment it is submitted."""
    if c.get("author") == "agent":
        return None
    svc, diff, kind, key = c["service"], c.get("diff") or "", c["kind"], f"commit:{c['id']}"
    if kind != "flag" and (c["message"].startswith('Revert "') or not _PATH.search(diff)):
        return Change(key, kind, svc, float(c["submitted_s"]), "", {}, note=c["message"], reverts=True)
    stages = c.get("stages") or {}
    if c.get("status") != "deployed" or "rollout-started" not in stages:
        return None
    at = float(stages["rollout-started"])
    if kind == "code":
        m = _PATH.search(diff)
        assert m is not None
        undo = {"tool": "rollback", "service": svc, "before_s": at}
        return Change(key, "code", svc, at, f"{svc}:{m.group(1)}", undo, note=c["message"])
    if kind == "config":
        return _config_commit(key, svc, at, diff, c["message"])
    if kind == "flag":
        m = _FLAG.search(diff) or _MSG_FLAG.search(c["message"])
        if m is None:
            return None
        flag = m.group(1)
        owner = next((f for f in getattr(app, "feature_flags", []) if f.name == flag), None)
        if owner is None:
            return None
        v = _VARIANT.search(diff)
        old = v.group(1) if v else owner.default
        undo = {"tool": "set_config", "service": "flagd", "key": flag, "value": old}
        return Change(
            key, "flag", owner.service, at, f"flagd:configmap/flagd-config/{flag}", undo, note=c["message"]
        )
    return None


def _config_commit(key: str, svc: str, at: float, diff: str, message: str) -> Change | None:
    rollback = {"tool": "rollback", "service": svc, "before_s": at}
    path = _PATH.search(diff)
    if path and "data:" in diff:  # a ConfigMap key
        m = _CM.search(diff)
        if m is None:
            return None
        cm = path.group(1).rsplit("/", 1)[-1].removesuffix(".yaml")
        undo = {"tool": "set_config", "service": svc, "key": m.group(1), "value": _unquote(m.group(2))}
        return Change(key, "config", svc, at, f"{svc}:configmap/{cm}/{m.group(1)}", undo, note=message)
    m = _ENV.search(diff)
    if m is None:
        return None
    env_key = m.group(1)
    old = _OLD_VALUE.search(diff)
    undo = (
        {"tool": "set_config", "service": svc, "key": env_key, "value": _unquote(old.group(1))}
        if old
        else rollback
    )
    return Change(key, "config", svc, at, f"{svc}:env/{env_key}", undo, note=message)


def _unquote(v: str) -> str:
    v = v.strip()
    return v[1:-1] if len(v) >= 2 and v[0] == v[-1] == '"' else v


__all__ = ["Change", "PlaneReader", "undo_call"]
