"""Rules v2 evidence: the agent's incidents matched one-to-one to faults, claims and interventions
judged on that match (see `marathon.py` for how the score uses it).

Why a matching: under a literal reading of the paper, an incident holding one attributable alert
correlated its fault however many other faults' alerts it also held, so one incident holding every
alert correlated every fault. Here one incident is evidence for at most one fault, and only for a
fault that explains it.

The matching is greedy in event order, not a maximum-weight assignment over the run: a per-step
reward must be computable from the evidence up to that step, and a global assignment can change a
past step's credit when a later incident arrives. The greedy rule is causal by construction
(`match_incidents` on a record truncated at t gives the matching as known at t).

Replaying the incident events in time order (ties in recorded order), for the incident i of each
event, in its state after the event (alerts that had fired by then, services, artifact):

1. Eligible faults E(i): those to which at least `min_explained_share` of i's fired alerts are
   attributable.
2. The event's claim (services, artifact) *localizes* fault f when f's target is among the
   services, every service named is f's target or in its scope, and the artifact is in f's alias
   table (exact string).
3. If i is matched to f and f is locked (localized through i), nothing changes: a localized match is
   final. If the claim localizes f, the match locks. If f is no longer eligible (the incident grew
   into something f does not explain, e.g. by pooling other faults' alerts), i loses the match.
4. Otherwise, if the claim localizes an eligible fault g that is unmatched or matched to an
   unlocked incident, i is matched to g and locks (its previous fault, if any, is freed; an
   incident displaced from g is re-matched at once if it can be, else it becomes unmatched).
   The correct diagnosis decides between faults an ambiguous incident could be about.
5. Otherwise, if i is unmatched, it takes the eligible unmatched fault that explains the largest
   share of its alerts (ties: earliest start, then fault id). An eligible fault already matched to
   another incident is not available: i is a duplicate.
6. A fault this event left unmatched is offered to the unmatched incidents eligible for it in their
   latest state, oldest first (a duplicate becomes the match when the first incident moves on).

A *claim* is a distinct (incident, services, artifact); it is false until it localizes the fault its
incident is matched to (then it is the localizing claim, forever). An intervention (verdict ok) is
*called for* when, once the events of its time are replayed, the incident it cites is locked to a
fault f and one of its targets is f's target, in f's scope or the owner of f's artifact (flagd for a
feature flag); every other executed intervention is needless. Events at the action's time count
(an invocation's calls are one decision).

Rules v3 (`Rules3`) changes five things, each closing a hole a second adversarial review found (the
cheapest policy against each rule is in `agents/adversarial.py` and `catalog/scoring.yaml`):

* Specific evidence: an alert whose services are all *non-specific* (in the scope of at least
  ``nonspecific_scope_share`` of the app's catalog faults: the entry point) counts for a fault f only
  if it names f's target, if the incident also holds an alert attributable to f that is specific
  (or names f's target), or if the incident's claim localizes f (the diagnosis is the specific
  evidence; a wrong one is a false claim, so guessing it costs more than it earns). Eligibility
  needs *more than* ``min_explained_share`` (strictly), so an incident pooling two faults' alerts
  half and half explains neither.
* No late matches: an incident takes a new fault only if it was opened or last re-pointed (its alert
  set changed) before that fault's deadline plus ``report_grace_s``. A match made in time stays while
  the fault explains the incident.
* Claims judged when made: every incident event carrying a claim whose (services, artifact, alert
  set) the incident has not carried before is a new claim, judged at once, on the evidence of that
  moment: it is right only if the incident is then matched to a fault f that explains it, locked
  before f's deadline plus the grace, and the claim localizes f. A claim is never cleared later.
* Interventions: *called for* only while the cited incident's fault f is active (start <= t <
  deadline), locked in time, and on f's culprit (its target or its artifact's owner), not its scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.run_record import ActionRecord, AlertRecord, FaultTruth, IncidentEvent, RunRecord


def is_attributable(alert: AlertRecord, fault: FaultTruth, interval_s: float) -> bool:
    """Whether `alert` may be evidence of `fault`: it fired while the fault was active (plus one
    interval's grace, for rules that hold for a while) and names one of its services or its target."""
    return fault.start_s <= alert.fired_at <= fault.deadline_s + interval_s and not fault.touched.isdisjoint(
        alert.services
    )


def localizes(fault: FaultTruth, services: tuple[str, ...], artifact: str | None) -> bool:
    """The claim names the fault's culprit, no service the fault leaves untouched (the paper: "the
    exact culprit service or services"; a list of every service would otherwise fit any culprit),
    and an accepted name of its artifact (exact match)."""
    return (
        artifact is not None
        and fault.target in services
        and fault.touched.issuperset(services)
        and artifact in fault.accepted_artifacts
    )


@dataclass(frozen=True)
class Rules3:
    """The settings rules v3 adds to the matching (None in `Replay`: rules v2)."""

    nonspecific: frozenset[str]  # services nearly every fault's scope holds (from the record's manifest)
    grace_s: float  # report_grace_s: how long after its deadline a fault may still be reported


def rules3(record: RunRecord, nonspecific_share: float, grace_s: float) -> Rules3:
    """The v3 settings of one run: which of its app's services are non-specific."""
    share = record.manifest.scope_share
    return Rules3(frozenset(s for s, x in share.items() if x >= nonspecific_share - 1e-9), float(grace_s))


@dataclass
class Claim:
    incident_id: str
    services: tuple[str, ...]
    artifact: str
    made_s: float
    localized_s: float | None = None


@dataclass
class Matching:
    """The matching as known after the replayed evidence."""

    fault_of: dict[str, str] = field(default_factory=dict)  # incident -> fault
    incident_of: dict[str, str] = field(default_factory=dict)  # fault -> incident
    matched_s: dict[str, float] = field(default_factory=dict)  # fault -> since when it is matched
    localized_s: dict[str, float] = field(default_factory=dict)  # fault -> when it locked (localized)
    opened: list[str] = field(default_factory=list)  # incidents in the order they appeared
    claims: dict[tuple, Claim] = field(
        default_factory=dict
    )  # v2: (incident, services, artifact); v3: + alerts
    called_for: dict[int, str] = field(default_factory=dict)  # action index -> fault it was called for
    needless: list[int] = field(default_factory=list)  # action indices of needless interventions

    @property
    def false_incidents(self) -> list[str]:
        return [i for i in self.opened if i not in self.fault_of]

    @property
    def false_claims(self) -> list[Claim]:
        return [c for c in self.claims.values() if c.localized_s is None]


class Replay:
    """The matching, fed evidence in time order: whole records (`match_incidents`) or, for per-step
    rewards, only what each step added (`feed`), so an episode costs one replay, not one per step."""

    def __init__(
        self, faults: list[FaultTruth], interval_s: float, min_share: float, v3: Rules3 | None = None
    ):
        self.v3 = v3
        self.weak: dict[str, frozenset[str]] = {}  # v3: alert -> faults it counts for only with company
        self.pointed_s: dict[str, float] = {}  # v3: incident -> when its alert set last changed
        self.faults = {f.fault_id: f for f in faults}
        self.order = sorted(faults, key=lambda f: (f.start_s, f.fault_id))
        self.rank = {f.fault_id: i for i, f in enumerate(self.order)}
        self.interval_s = interval_s
        self.fired_at: dict[str, float] = {}
        self.faults_of_alert: dict[str, tuple[str, ...]] = {}
        self.min_share = min_share
        self.state: dict[str, IncidentEvent] = {}
        self.m = Matching()
        self.seen = (0, 0, 0)  # alerts, incident events, actions fed so far
        self.freed: list[str] = []  # faults an event left unmatched, to re-offer
        self._shares_key: tuple[float, int] | None = None  # (now, alerts known) of `_shares_memo`
        self._shares_memo: dict[int, tuple[IncidentEvent, dict[str, float]]] = {}

    def add_alerts(self, alerts: list[AlertRecord]) -> None:
        for a in alerts:
            if a.id in self.fired_at:
                continue
            self.fired_at[a.id] = a.fired_at
            self.faults_of_alert[a.id] = tuple(
                f.fault_id for f in self.order if is_attributable(a, f, self.interval_s)
            )
            if self.v3 is not None and a.services and self.v3.nonspecific.issuperset(a.services):
                self.weak[a.id] = frozenset(
                    fid for fid in self.faults_of_alert[a.id] if self.faults[fid].target not in a.services
                )

    def feed(self, record: RunRecord) -> Matching:
        """Replay what `record` holds beyond what was fed before (the record only grows, in time order)."""
        _, n_events, n_actions = self.seen
        self.add_alerts(record.alerts)
        events = sorted(record.incident_events[n_events:], key=lambda e: e.time_s)  # stable on ties
        actions = sorted(
            ((k, a) for k, a in enumerate(record.actions) if k >= n_actions), key=lambda ka: ka[1].time_s
        )
        i = 0
        for k, a in actions:
            while i < len(events) and events[i].time_s <= a.time_s:
                self.event(events[i])
                i += 1
            self.action(k, a)
        for ev in events[i:]:
            self.event(ev)
        self.seen = (len(record.alerts), len(record.incident_events), len(record.actions))
        return self.m

    # ------------------------------------------------------------ pieces
    def _shares(self, ev: IncidentEvent, now: float) -> dict[str, float]:
        """Eligible faults -> share of the incident's fired alerts they explain (in start order).

        v3: an alert that is weak for a fault (non-specific, not naming its target) counts for it
        only beside a strong one or under a claim that localizes the fault, and the share must
        exceed `min_share` strictly.

        Memoised per incident state while `now` and the known alerts stay the same (they only ever
        gain entries): re-offering a freed fault asks every open incident again."""
        key = (now, len(self.fired_at))
        if self._shares_key != key:
            self._shares_key, self._shares_memo = key, {}
        hit = self._shares_memo.get(id(ev))
        if hit is not None and hit[0] is ev:
            return hit[1]
        out = self._compute_shares(ev, now)
        self._shares_memo[id(ev)] = (ev, out)
        return out

    def _compute_shares(self, ev: IncidentEvent, now: float) -> dict[str, float]:
        counts: dict[str, int] = {}
        weak: dict[str, int] = {}
        fired = 0
        for aid in set(ev.alert_ids):
            t = self.fired_at.get(aid)
            if t is None or t > now:
                continue
            fired += 1
            weak_for = self.weak.get(aid, frozenset())
            for fid in self.faults_of_alert[aid]:
                into = weak if fid in weak_for else counts
                into[fid] = into.get(fid, 0) + 1
        services = tuple(ev.services)
        for fid, n in weak.items():
            if fid in counts or localizes(self.faults[fid], services, ev.artifact):
                counts[fid] = counts.get(fid, 0) + n
        if self.v3 is None:
            need = self.min_share * fired - 1e-9
            eligible = [fid for fid, c in counts.items() if c >= need]
        else:
            need = self.min_share * fired + 1e-9
            eligible = [fid for fid, c in counts.items() if c > need]
        return {fid: counts[fid] / fired for fid in sorted(eligible, key=self.rank.__getitem__)}

    def _open_to(self, inc: str, fid: str) -> bool:
        """v3: whether `inc` may take `fid` as a new match (pointed at it before its deadline)."""
        if self.v3 is None:
            return True
        return self.pointed_s[inc] < self.faults[fid].deadline_s + self.v3.grace_s

    def _locked_in_time(self, fid: str) -> bool:
        """v3: localized before the deadline plus the grace (v2: localized at all)."""
        t = self.m.localized_s.get(fid)
        if t is None:
            return False
        return self.v3 is None or t < self.faults[fid].deadline_s + self.v3.grace_s

    def _unmatch(self, inc: str) -> None:
        fid = self.m.fault_of.pop(inc, None)
        if fid is not None:
            del self.m.incident_of[fid]
            self.m.matched_s.pop(fid, None)
            self.freed.append(fid)

    def _reoffer(self, now: float) -> None:
        """Offer faults freed by this event to the unmatched incidents eligible for them (oldest first)."""
        while self.freed:
            fid = self.freed.pop(0)
            if fid in self.m.incident_of:
                continue
            for inc in self.m.opened:
                if (
                    inc not in self.m.fault_of
                    and self._open_to(inc, fid)
                    and fid in self._shares(self.state[inc], now)
                ):
                    self._match(inc, fid, now, lock=False)
                    break

    def _match(self, inc: str, fid: str, now: float, lock: bool) -> None:
        m = self.m
        previous_holder = m.incident_of.get(fid)
        continuous = previous_holder is not None  # the fault stays matched, only to another incident
        since = m.matched_s.get(fid, now)
        self._unmatch(inc)
        if previous_holder is not None and previous_holder != inc:
            self._unmatch(previous_holder)
        m.fault_of[inc], m.incident_of[fid] = fid, inc
        m.matched_s[fid] = since if continuous else now
        if lock:
            m.localized_s.setdefault(fid, now)
        if previous_holder is not None and previous_holder != inc:
            self._settle(previous_holder, now)  # displaced: take another fault if it can

    def _locked(self, fid: str) -> bool:
        return fid in self.m.localized_s

    def _settle(self, inc: str, now: float) -> None:
        """Steps 3-5 for incident `inc` in its current state."""
        ev = self.state[inc]
        services, artifact = tuple(ev.services), ev.artifact
        shares = self._shares(ev, now)
        m = self.m
        current = m.fault_of.get(inc)
        if current is not None and self._locked(current):
            return
        if current is not None and localizes(self.faults[current], services, artifact):
            m.localized_s[current] = now
            return
        if current is not None and current not in shares:
            self._unmatch(inc)  # the fault no longer explains what the incident has become
            current = None
        takeable = [
            fid
            for fid in shares
            if localizes(self.faults[fid], services, artifact)
            and (fid not in m.incident_of or not self._locked(fid))
            and (m.incident_of.get(fid) == inc or self._open_to(inc, fid))
        ]
        if takeable:
            best = max(takeable, key=lambda fid: shares[fid])
            self._match(inc, best, now, lock=True)
            return
        if current is None:
            free = [fid for fid in shares if fid not in m.incident_of and self._open_to(inc, fid)]
            if free:
                best = max(free, key=lambda fid: shares[fid])  # max keeps the first (earliest) on ties
                self._match(inc, best, now, lock=False)

    def _judge_claim(self, ev: IncidentEvent, now: float) -> None:
        if ev.artifact is None:
            return
        if self.v3 is not None:
            self._judge_claim_now(ev, now)
            return
        key = (ev.incident_id, tuple(ev.services), ev.artifact)
        claim = self.m.claims.setdefault(key, Claim(ev.incident_id, tuple(ev.services), ev.artifact, now))
        fid = self.m.fault_of.get(ev.incident_id)
        if (
            claim.localized_s is None
            and fid is not None
            and self._locked(fid)
            and localizes(self.faults[fid], claim.services, claim.artifact)
        ):
            claim.localized_s = now

    def _judge_claim_now(self, ev: IncidentEvent, now: float) -> None:
        """v3: a claim on evidence the incident has not carried it on before is judged once, now."""
        assert ev.artifact is not None
        key = (ev.incident_id, tuple(ev.services), ev.artifact, frozenset(ev.alert_ids))
        if key in self.m.claims:
            return
        claim = self.m.claims[key] = Claim(ev.incident_id, tuple(ev.services), ev.artifact, now)
        fid = self.m.fault_of.get(ev.incident_id)
        if (
            fid is not None
            and self._locked_in_time(fid)
            and localizes(self.faults[fid], claim.services, claim.artifact)
            and fid in self._shares(ev, now)
        ):
            claim.localized_s = now

    # ------------------------------------------------------------ entry points
    def event(self, ev: IncidentEvent) -> None:
        before = self.state.get(ev.incident_id)
        if before is None:
            self.m.opened.append(ev.incident_id)
        if before is None or set(before.alert_ids) != set(ev.alert_ids):
            self.pointed_s[ev.incident_id] = ev.time_s
        self.state[ev.incident_id] = ev
        self._settle(ev.incident_id, ev.time_s)
        self._reoffer(ev.time_s)
        self._judge_claim(ev, ev.time_s)

    def action(self, k: int, a: ActionRecord) -> None:
        if a.kind != "intervention" or a.verdict != "ok":
            return
        fid = self.m.fault_of.get(a.incident_id or "")
        if fid is not None and self._called_for(self.faults[fid], a):
            self.m.called_for[k] = fid
        else:
            self.m.needless.append(k)

    def _called_for(self, f: FaultTruth, a: ActionRecord) -> bool:
        """v2: the cited incident is locked to `f` and `a` acts on its scope, target or artifact owner;
        v3: locked in time, `f` still active, and `a` acts on its culprit."""
        if self.v3 is None:
            return self._locked(f.fault_id) and not f.actionable.isdisjoint(a.targets)
        return (
            self._locked_in_time(f.fault_id)
            and f.start_s <= a.time_s < f.deadline_s
            and not f.culprits.isdisjoint(a.targets)
        )


def match_incidents(record: RunRecord, min_explained_share: float, v3: Rules3 | None = None) -> Matching:
    """Replay the record's incident events and interventions in time order (see the module docstring)."""
    return Replay(record.faults, record.manifest.interval_s, min_explained_share, v3).feed(record)


__all__ = [
    "Claim",
    "Matching",
    "Replay",
    "Rules3",
    "is_attributable",
    "localizes",
    "match_incidents",
    "rules3",
]
