"""Whether a change's own telemetry blames it: the step test of `symptoms.Telemetry` with the
change correlator's filters (a dependency's rise passed up, error logs that blame another service's
calls, the entry point, the service's next change), as one reusable judge.

Why here, below agents and wrappers: the change correlator (`agents.change_correlator`) blames
changes with it, and `wrappers.changes.ChangeObservation` shows its verdict per change to an RL
policy; both must judge the same way, from tool outputs only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..core.clock import METRIC_STEP_S
from .change_planes import Change
from .symptoms import Step, Telemetry

OWN_SIGNALS = ("error_ratio", "latency", "restarts", "waiting", "throttle", "not_ready")
PROPAGATING = ("error_ratio", "latency")  # signals a failing dependency passes up to its callers
# Throttling alone is a capacity note, not a failure: it counts beside a failing signal only.
SUPPORTING = ("throttle",)
# Pods that never get ready, and nothing else, is a rollout that did not finish: a changed probe or
# image (or replicas, or a node) says why; code and config changes that break pods crash them
# (restarts, waiting reasons) or fail requests.
READINESS_PLANES = ("image", "probe", "replicas", "node")
SERVICE_IMPACT = ("error_ratio", "request_rate_drop")  # what a node's change must show (see _judge)
# A service that stops receiving requests is down only if it was taken down (its replicas); with its
# pods up, fewer requests mean its callers fail first.
DROP_PLANES = ("replicas",)
ROLLOUT_PLANES = ("code", "config", "image", "limits", "probe")  # they act once new pods serve
# A rollout's pods show at once (waiting, not ready, restarting); its requests only once they serve.
SERVED = ("error_ratio", "latency", "throttle")
SERVING_S = METRIC_STEP_S
LOG_SHARE = 0.6  # share of error logs that must blame other services' calls to clear a change
AMBIGUOUS_S = 30.0  # the last change before a step is the suspect; two within this long are one


@dataclass(frozen=True)
class Verdict:
    """Why a change is blamed: its service and the steps of that service after it."""

    service: str
    steps: tuple[Step, ...]

    def text(self) -> str:
        return "; ".join(s.text() for s in self.steps)


class ChangeJudge:
    """Judges changes against one app's topology (`edges` as `get_topology` lists them, `entry` its
    entry point). `claim_nodes`: judge node changes too (see `agents.change_correlator`)."""

    def __init__(self, edges: list[dict], entry: str, claim_nodes: bool = False) -> None:
        self.below = _downstream(edges)
        self.callers: dict[str, set[str]] = {}
        for e in edges:
            self.callers.setdefault(e["to"], set()).add(e["from"])
        self.entry, self.claim_nodes = entry, claim_nodes

    def judge(
        self, call: Callable, tel: Telemetry, ch: Change, now: float, services: set[str], until: float
    ) -> Verdict | None:
        """The service whose steps after the change blame it (None: no clear step). A step that
        starts after the service's next change belongs to that one; failed requests whose error logs
        blame calls to a service the change does not name are that service's."""
        if ch.service is None and not self.claim_nodes:
            return None
        candidates = ch.suspects if ch.service is None else (ch.service,)
        drops = ch.plane in DROP_PLANES or ch.service is None
        lag = 1.0 if ch.plane in ROLLOUT_PLANES else -METRIC_STEP_S
        verdicts = [
            v
            for s in candidates
            if s in services and (v := self._steps(tel, s, ch.at_s, now, until, drops, lag))
        ]
        if len(verdicts) != 1:
            return None  # nothing moved, or several services did and the change cannot say which
        v = verdicts[0]
        errors = [s for s in v.steps if s.signal == "error_ratio"]
        if errors and self._calls_elsewhere(call, ch, v.service, errors[0].onset_s, now):
            v = Verdict(v.service, tuple(s for s in v.steps if s.signal != "error_ratio"))
        signals = {s.signal for s in v.steps}
        if not signals:
            return None
        if signals <= set(SUPPORTING) | {"not_ready"} and not (
            "not_ready" in signals and ch.plane in READINESS_PLANES
        ):
            return None
        if ch.service is None and not signals & set(SERVICE_IMPACT):
            return None  # every service on a node restarts its pods: only one that fails requests says which
        if not any(s.ongoing for s in v.steps if s.signal not in SUPPORTING):
            return None  # over already (reverted, or fixed): too late to report it
        return v

    def _steps(
        self, tel: Telemetry, svc: str, at_s: float, now: float, until: float, drops: bool, lag: float
    ) -> Verdict | None:
        steps = [
            s
            for sig in OWN_SIGNALS
            if (s := tel.step(sig, svc, at_s, now, lag + (SERVING_S if sig in SERVED else 0.0))) is not None
        ]
        drop = tel.calls_dropped(svc, at_s, now) if drops else None
        if drop is not None:
            steps.append(drop)
        kept = []
        for s in steps:
            if s.onset_s >= until:
                continue  # it began after the service's next change: it may be that one's
            if s.signal in PROPAGATING and (svc == self.entry or self._downstream_explains(tel, svc, s, now)):
                continue  # the entry point's errors and latency are every service's
            kept.append(s)
        return Verdict(svc, tuple(kept)) if kept else None

    def _calls_elsewhere(self, call: Callable, ch: Change, svc: str, since: float, now: float) -> bool:
        """Most of the service's error logs since `since` are failed calls to services the change
        does not name (`peer.service`), or a backend answering unavailable (`error.type`): a
        dependency failing, whatever changed here. A config key, source file, flag or policy names a
        peer by its words (PRODUCT_CATALOG_ADDR, InsidePaymentClient.java, deny-x-to-cart)."""
        res = call(
            {
                "tool": "search_logs",
                "service": svc,
                "level": "ERROR",
                "start_s": since,
                "end_s": now,
                "limit": 100,
            }
        )
        logs = res.data["logs"] if res.ok else []
        foreign = 0
        for log in logs:
            attrs = log.get("attributes") or {}
            peer = attrs.get("peer.service")
            foreign += (
                bool(peer and not names_peer(ch.artifact, peer)) or attrs.get("error.type") == "unavailable"
            )
        return bool(logs) and foreign >= LOG_SHARE * len(logs)

    def _downstream_explains(self, tel: Telemetry, svc: str, step: Step, now: float) -> bool:
        """A service `svc` calls (directly or not) rose the same way when it did: the failure may be
        theirs, passed up the call chain."""
        return any(tel.rose(step.signal, callee, step.onset_s, now) for callee in self.below.get(svc, ()))


def _words(text: str) -> list[str]:
    """Lower-case words of an identifier: PRODUCT_CATALOG_ADDR, InsidePaymentClient.java, redis-cart."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", text)]


def names_peer(subject: str, peer: str) -> bool:
    """Whether a change's subject (its artifact id) names service `peer`: the peer's words, less
    Train Ticket's `ts`/`service`, in a row (`productcatalogservice` as one word or as its parts)."""
    words = _words(subject.rpartition(":")[2] or subject)
    core = [w for w in _words(peer) if w not in ("ts", "service")] or _words(peer)
    joined = "".join(_words(peer))
    n = len(core)
    return joined in words or any(words[i : i + n] == core for i in range(len(words) - n + 1))


def _downstream(edges: list[dict]) -> dict[str, set[str]]:
    """Service -> every service its calls reach (transitively), from the topology's edges."""
    calls: dict[str, set[str]] = {}
    for e in edges:
        calls.setdefault(e["from"], set()).add(e["to"])
    out = {}
    for svc in calls:
        seen, stack = set(), [svc]
        while stack:
            for nxt in calls.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        out[svc] = seen - {svc}
    return out


__all__ = ["ChangeJudge", "Verdict", "names_peer"]
