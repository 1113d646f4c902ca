"""The alert engine: evaluates the frozen rule pack against the metric store like Prometheus does.

Why this module exists: agents see faults only through alerts (SRE-Marathon §2-3, App. D), and a
later step checks this engine against real Prometheus with ``promtool test rules``. So every rule
is evaluated from its structured ``params`` (see the comment block of ``catalog/alerts/rules.yaml``;
the PromQL in ``expr`` is rendered from the same params) with Prometheus' semantics:

- operands: ``rate`` / ``increase`` / ``last`` (instant vector, 5 min lookback, staleness) through
  `MetricStore`, optionally ``offset``; ``sum`` / ``max`` / ``min by (group_by)``; series with no
  result (NaN in the store) take no part, and a group with no contributing series is absent;
- ``ratio``: ``A / (B > 0)``, one-to-one on the group labels (missing or non-positive B: no
  result); ``difference``: ``A - B``; ``quantile``: ``histogram_quantile(q, sum by (le, ...)
  (rate(A_bucket)))`` (NaN: no result); a comparison drops the series that fail it; a guard is
  PromQL ``and`` on the group labels; a join is ``* on(L) group_left(...)`` (no partner: dropped);
- ``for``: an alert is created *pending* (``ActiveAt = t``) the first time its label set is in the
  result, becomes *firing* at the first evaluation with ``t - ActiveAt >= for`` (``for: 0`` fires at
  once), and is resolved at the first evaluation where it is no longer in the result (a pending
  alert is then dropped). A label set that comes back later starts a new episode (new id), as
  Alertmanager shows a new alert.

Alert labels are the result series' labels (the ``group_by`` labels present) overridden by the
rule's labels and ``alertname``; annotations are rendered from the series labels and the value
(``{{ $labels.x }}``, ``{{ $value }}``, ``| humanize``, ``| humanizePercentage``), lazily, since
they depend only on (labels, value).

Speed: per evaluation each (metric, function, window, offset) is computed once for all series of
the metric and shared by the rules; the ids and the series -> group codes of every operand are
cached and rebuilt only when the metric gains series; grouping uses ``np.bincount``.

The noise figures of a run (alert ambiguity, flapping) are `alert_noise.py`'s.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from .alert_templates import compile_template, render_parts, render_template
from .errors import AlertEvaluationError, AlertRuleError, PatternError, UnknownNameError
from .metric_store import MetricStore, bucket_quantile
from .patterns import compile_label_regex

if TYPE_CHECKING:
    from .catalog.alerts import AlertRule, RulePack
    from .catalog.apps import App

__all__ = [
    "Alert",
    "AlertEngine",
    "AlertRuleError",
    "AlertEvaluationError",
    "render_template",
]

AlertState = Literal["pending", "firing", "resolved"]

_KINDS = ("value", "ratio", "difference", "quantile")
_FNS = ("rate", "increase", "last")
_AGGS = ("sum", "max", "min")
_OPS: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    ">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal,
    "==": np.equal, "!=": np.not_equal,
}
_MATCH_KEYS = {"match": "=", "match_ne": "!=", "match_re": "=~", "match_nre": "!~"}
_OPERAND_FIELDS = {"metric", "fn", "window_s", "offset_s", "agg", "op", "threshold",
                   "join_metric", "join_on", "join_labels"}
_RULE_FIELDS = {"kind", "group_by", "op", "threshold", "quantile"}
_ID_WIDTH = 4


# --------------------------------------------------------------------------------------------------
# records


class Alert(BaseModel):
    """One alert episode as seen at some time (an immutable snapshot).

    ``id`` is ``aNNNN`` in order of firing (``pNNNN``, in order of becoming pending, for an episode
    that has not fired, or never fired, by the snapshot time). ``value`` is the latest value of the
    expression while the condition held; annotations are rendered from it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    rule: str
    template: str
    severity: str
    labels: dict[str, str]
    annotations: dict[str, str]
    state: AlertState
    pending_at: float
    fired_at: float | None = None
    resolved_at: float | None = None
    value: float


class _Episode:
    """Mutable lifecycle of one (rule, label set) episode inside the engine."""

    __slots__ = ("rule", "group", "pending_id", "alert_id", "pending_at", "fired_at", "ended_at",
                 "value", "seen_at", "_snap")

    def __init__(self, rule: _Rule, group: int, pending_id: str, t: float):
        self.rule = rule
        self.group = group
        self.pending_id = pending_id
        self.alert_id: str | None = None
        self.pending_at = t
        self.fired_at: float | None = None
        self.ended_at: float | None = None  # resolved (fired) or dropped (never fired)
        self.value = math.nan
        self.seen_at = t
        self._snap: Alert | None = None  # final snapshot once ended

    def snapshot(self, until: float | None = None) -> Alert:
        """The episode as it stood at `until` (default: now)."""
        final = self.ended_at is not None and (until is None or until >= self.ended_at)
        if final and self._snap is not None:
            return self._snap
        fired = self.fired_at is not None and (until is None or self.fired_at <= until)
        ended = self.ended_at is not None and (until is None or self.ended_at <= until)
        state: AlertState = "resolved" if ended else ("firing" if fired else "pending")
        r = self.rule
        snap = Alert(
            id=self.alert_id if fired and self.alert_id else self.pending_id,
            rule=r.name, template=r.template, severity=r.severity,
            labels=dict(r.alert_labels[self.group]),
            annotations=r.annotations_for(self.group, self.value),
            state=state, pending_at=self.pending_at,
            fired_at=self.fired_at if fired else None,
            resolved_at=self.ended_at if ended else None,
            value=self.value,
        )
        if final:
            self._snap = snap
        return snap


# --------------------------------------------------------------------------------------------------
# compiled rules


class _View:
    """All series of one metric name (ascending ids) and their labels, grown incrementally.

    Why incremental: the engine learns about new series by walking the ids created since its last
    evaluation (`MetricStore.series_count`, `name`, `labels`), so pod churn costs O(new series)
    instead of re-selecting (and re-indexing) whole metrics.
    """

    __slots__ = ("metric", "_ids", "ids", "labels", "churns")

    def __init__(self, metric: str):
        self.metric = metric
        self._ids: list[int] = []
        self.ids = np.empty(0, dtype=np.intp)
        self.labels: list[dict[str, str]] = []
        self.churns = False  # per-pod series (they start and stop with pods)

    def add(self, sid: int, labels: dict[str, str]) -> None:
        if not self._ids:
            self.churns = "pod" in labels
        self._ids.append(sid)
        self.labels.append(labels)

    def sync(self) -> None:
        if len(self._ids) != self.ids.size:
            self.ids = np.asarray(self._ids, dtype=np.intp)


_Matcher = tuple[str, str, str, "Any"]  # (label, op, value, compiled RE2 regex or None)


def _compile_matchers(matchers: Mapping[str, tuple[str, str]], where: str) -> list[_Matcher]:
    out = []
    for label, (op, value) in sorted(matchers.items()):
        rx = None
        if op in ("=~", "!~"):  # the same engine as agents' matchers: RE2, PromQL's own syntax
            try:
                rx = compile_label_regex(value, f"label {label!r}")
            except PatternError as exc:
                raise AlertRuleError(f"{where}: {exc}") from None
        out.append((label, op, value, rx))
    return out


def _matches(labels: Mapping[str, str], matchers: list[_Matcher]) -> bool:
    """PromQL label matchers (regexes fully anchored; an absent label compares as "")."""
    for label, op, value, rx in matchers:
        v = labels.get(label, "")
        if op == "=":
            ok = v == value
        elif op == "!=":
            ok = v != value
        elif op == "=~":
            ok = rx.fullmatch(v) is not None  # type: ignore[union-attr]
        else:
            ok = rx.fullmatch(v) is None  # type: ignore[union-attr]
        if not ok:
            return False
    return True


class _Batch:
    """The series read with one (function, window, offset): few store calls per evaluation.

    Why: the store's query functions work per series, so querying the union of the series every
    operand of that kind selects gives exactly the per-operand results at a fraction of the
    per-call overhead. Pod series (which come and go, so their windows have gaps) are queried apart
    from the stable ones: the store has a much faster path for windows without gaps.
    """

    __slots__ = ("fn", "window_s", "offset_s", "operands", "stable", "churn", "version")

    def __init__(self, fn: str, window_s: float, offset_s: float):
        self.fn, self.window_s, self.offset_s = fn, window_s, offset_s
        self.operands: list[_Operand] = []
        self.stable = np.empty(0, dtype=np.intp)
        self.churn = np.empty(0, dtype=np.intp)
        self.version: tuple[int, ...] = ()

    def refresh(self) -> None:
        """Recompute the union and every operand's positions in it after an operand was rebuilt."""
        version = tuple(o.built for o in self.operands)
        if version == self.version:
            return
        self.version = version

        def union(ops: list[_Operand]) -> np.ndarray:
            return np.unique(np.concatenate([o.sel for o in ops])) if ops else np.empty(0, dtype=np.intp)

        stable_ops = [o for o in self.operands if not o.view.churns]  # type: ignore[union-attr]
        churn_ops = [o for o in self.operands if o.view.churns]  # type: ignore[union-attr]
        self.stable, self.churn = union(stable_ops), union(churn_ops)
        for o in stable_ops:
            o.idx = np.searchsorted(self.stable, o.sel)
        for o in churn_ops:
            o.idx = self.stable.size + np.searchsorted(self.churn, o.sel)

    def values(self, store: MetricStore, t: float) -> np.ndarray:
        te = t - self.offset_s
        parts = [self._query(store, ids, te) for ids in (self.stable, self.churn) if ids.size]
        return np.concatenate(parts) if parts else np.empty(0)

    def _query(self, store: MetricStore, ids: np.ndarray, te: float) -> np.ndarray:
        if self.fn == "rate":
            return store.rate(ids, te, self.window_s)
        if self.fn == "increase":
            return store.increase(ids, te, self.window_s)
        return store.at(ids, te)


class _Operand:
    """One of A / B / guard: selection, function, aggregation and the cached group codes."""

    __slots__ = ("prefix", "metric", "fn", "window_s", "offset_s", "agg", "matchers", "op", "threshold",
                 "join", "view", "batch", "built", "seen", "compiled", "sel", "idx", "pos", "identity",
                 "gidx", "lei", "les", "join_view", "_where")

    def __init__(self, rule_name: str, prefix: str, fields: dict[str, object],
                 matchers: dict[str, tuple[str, str]]):
        where = f"rule {rule_name}: {prefix}"
        self._where = where
        self.prefix = prefix
        unknown = set(fields) - _OPERAND_FIELDS
        if unknown:
            raise AlertRuleError(f"{where}*: unknown param(s) {sorted(prefix + k for k in unknown)}")
        if "metric" not in fields:
            raise AlertRuleError(f"{where}metric is missing")
        self.metric = str(fields["metric"])
        self.fn = str(fields.get("fn", "last"))
        if self.fn not in _FNS:
            raise UnknownNameError(f"function ({where}fn)", self.fn, _FNS)
        self.window_s = float(fields.get("window_s", 0) or 0)  # type: ignore[arg-type]
        if self.fn != "last" and self.window_s <= 0:
            raise AlertRuleError(f"{where}window_s must be > 0 for {self.fn}()")
        self.offset_s = float(fields.get("offset_s", 0) or 0)  # type: ignore[arg-type]
        self.agg = str(fields.get("agg", "sum"))
        if self.agg not in _AGGS:
            raise UnknownNameError(f"aggregation ({where}agg)", self.agg, _AGGS)
        self.matchers = matchers
        self.op = str(fields["op"]) if "op" in fields else None
        if self.op is not None and self.op not in _OPS:
            raise UnknownNameError(f"comparison ({where}op)", self.op, _OPS)
        thr = fields.get("threshold")
        self.threshold = math.nan if thr is None else float(thr)  # type: ignore[arg-type]
        self.join: tuple[str, str, tuple[str, ...]] | None = None
        if "join_metric" in fields:
            if "join_on" not in fields or "join_labels" not in fields:
                raise AlertRuleError(f"{where}join_metric needs join_on and join_labels")
            labels = tuple(x.strip() for x in str(fields["join_labels"]).split(",") if x.strip())
            self.join = (str(fields["join_metric"]), str(fields["join_on"]), labels)
        self.view: _View | None = None
        self.batch: _Batch | None = None
        self.join_view: _View | None = None
        self.compiled = _compile_matchers(matchers, where.rstrip("_"))
        self.seen = 0  # series of the view already matched
        self.built = 0  # bumped when the selection changes (tells the batch to re-index)
        self.sel = np.empty(0, dtype=np.intp)  # selected series ids (ascending)
        self.idx = np.empty(0, dtype=np.intp)  # their positions in the batch's values
        self.identity = False
        self.pos = np.empty(0, dtype=np.intp)
        self.gidx = np.empty(0, dtype=np.intp)
        self.lei = np.empty(0, dtype=np.intp)
        self.les = np.empty(0)


class _Rule:
    """A rule of the pack, compiled for one app (placeholders rendered), with its alert state."""

    def __init__(self, rule: AlertRule, namespace: str, entry: str):
        def rend(s: str) -> str:
            return s.replace("{namespace}", namespace).replace("{entry}", entry)

        self.name = rule.name
        self.template = rule.template
        self.severity = rule.severity
        self.for_s = float(rule.for_s)
        p = {k: (rend(v) if isinstance(v, str) else v) for k, v in rule.params.items()}
        where = f"rule {rule.name}"
        self.kind = str(p.get("kind", ""))
        if self.kind not in _KINDS:
            raise UnknownNameError(f"rule kind ({where}: kind)", self.kind, _KINDS)
        if "group_by" not in p or "op" not in p or "threshold" not in p:
            raise AlertRuleError(f"{where}: params need group_by, op and threshold")
        self.group_by = tuple(x.strip() for x in str(p["group_by"]).split(",") if x.strip())
        self.op = str(p["op"])
        if self.op not in _OPS:
            raise UnknownNameError(f"comparison ({where}: op)", self.op, _OPS)
        self.threshold = float(p["threshold"])  # type: ignore[arg-type]
        self.quantile = float(p["quantile"]) if "quantile" in p else math.nan  # type: ignore[arg-type]
        if self.kind == "quantile" and math.isnan(self.quantile):
            raise AlertRuleError(f"{where}: a quantile rule needs `quantile`")
        fields: dict[str, dict[str, object]] = defaultdict(dict)
        matchers: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
        for k, v in p.items():
            if k in _RULE_FIELDS:
                continue
            prefix, _, rest = k.partition("_")
            if prefix not in ("a", "b", "guard"):
                raise AlertRuleError(f"{where}: unknown param {k!r} (operands are a_, b_, guard_)")
            if "." in rest:
                mkind, _, label = rest.partition(".")
                if mkind not in _MATCH_KEYS:
                    raise UnknownNameError(f"matcher ({where}: {k})", mkind, _MATCH_KEYS)
                matchers[prefix][label] = (_MATCH_KEYS[mkind], str(v))
            else:
                fields[prefix][rest] = v
        if "a" not in fields:
            raise AlertRuleError(f"{where}: operand a_ is missing")
        self.a = _Operand(rule.name, "a_", fields["a"], matchers["a"])
        self.b = _Operand(rule.name, "b_", fields["b"], matchers["b"]) if "b" in fields else None
        self.guard = (_Operand(rule.name, "guard_", fields["guard"], matchers["guard"])
                      if "guard" in fields else None)
        if self.kind in ("ratio", "difference") and self.b is None:
            raise AlertRuleError(f"{where}: kind {self.kind} needs a b_ operand")
        if self.guard is not None and self.guard.op is None:
            raise AlertRuleError(f"{where}: the guard needs guard_op and guard_threshold")
        if self.kind == "quantile" and (self.a.fn != "rate" or self.a.agg != "sum" or self.a.join):
            raise AlertRuleError(f"{where}: a quantile rule reads sum(rate(<histogram>_bucket))")
        self.operands = [o for o in (self.a, self.b, self.guard) if o is not None]
        self.rule_labels = {k: rend(v) for k, v in rule.labels.items()}
        self.annotation_parts = {k: compile_template(rend(v), f"{where}: annotation {k}")
                                 for k, v in rule.annotations.items()}
        # group space shared by the operands: key tuple -> index
        self.groups: dict[tuple[str, ...], int] = {}
        self.series_labels: list[dict[str, str]] = []
        self.alert_labels: list[dict[str, str]] = []
        self.sort_keys: list[tuple[tuple[str, str], ...]] = []
        self.active: dict[int, _Episode] = {}

    def group_index(self, key: tuple[str, ...]) -> int:
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = len(self.groups)
            series = {k: v for k, v in zip(self.group_by, key) if v != ""}
            labels = {**series, **{k: v for k, v in self.rule_labels.items()}, "alertname": self.name}
            labels = {k: v for k, v in sorted(labels.items()) if v != ""}
            self.series_labels.append(series)
            self.alert_labels.append(labels)
            self.sort_keys.append(tuple(labels.items()))
        return g

    def annotations_for(self, group: int, value: float) -> dict[str, str]:
        labels = self.series_labels[group]
        return {k: render_parts(parts, labels, value) for k, parts in self.annotation_parts.items()}


# --------------------------------------------------------------------------------------------------
# the engine


class AlertEngine:
    """Evaluates the rules of `rules` that apply to `app` on `store` every `interval_s` seconds.

    Call `evaluate_until(t)` after the simulator has written its samples up to `t` (the engine
    never looks past `t`, and every grid point since the last evaluation is evaluated, so calling
    it every tick or every agent invocation gives the same history).
    """

    def __init__(self, rules: RulePack, app: App, store: MetricStore, interval_s: float = 15):
        if not interval_s > 0:
            raise AlertEvaluationError(f"interval_s must be > 0, got {interval_s!r}")
        self.app = app
        self.store = store
        self.interval_s = float(interval_s)
        self.rules = [_Rule(r, app.namespace, app.entry_point) for r in rules.rules if r.applies_to(app.app)]
        self._views: dict[str, _View] = {}
        self._batches: dict[tuple[str, float, float], _Batch] = {}
        for r in self.rules:
            for o in r.operands:
                o.view = self._views.setdefault(o.metric, _View(o.metric))
                o.batch = self._batches.setdefault((o.fn, o.window_s, o.offset_s),
                                                   _Batch(o.fn, o.window_s, o.offset_s))
                o.batch.operands.append(o)
                if o.join is not None:
                    o.join_view = self._views.setdefault(o.join[0], _View(o.join[0]))
        self._quantile_rules = [r for r in self.rules if r.kind == "quantile"]
        self._seen = 0  # store series ids already routed to the views
        self.last_eval: float | None = None
        self.evaluations = 0
        self._fired: list[_Episode] = []
        self._never_fired: list[_Episode] = []
        self._episodes: list[_Episode] = []  # every episode, in order of becoming pending

    # ---------------------------------------------------------------- evaluation
    def evaluate_until(self, t: float) -> list[Alert]:
        """Evaluate every grid point ``k * interval_s`` after the last evaluation up to `t`.

        Returns the alerts that fired or resolved in those evaluations (as of `t`).
        """
        step = self.interval_s
        k = 0 if self.last_eval is None else math.floor(self.last_eval / step + 1e-9) + 1
        changed: list[_Episode] = []
        while k * step <= t + 1e-9:
            changed.extend(self._evaluate(k * step))
            k += 1
        return [ep.snapshot(t) for ep in changed]

    def evaluate(self, t: float) -> list[Alert]:
        """Evaluate every rule once at time `t` (must be later than the previous evaluation).

        Returns the alerts that fired or resolved at `t`.
        """
        return [ep.snapshot(t) for ep in self._evaluate(float(t))]

    def vector(self, rule: str, t: float) -> dict[tuple[tuple[str, str], ...], float]:
        """The rule expression's result at `t` (sorted series labels -> value), as an instant
        query of its PromQL would return it; alert state is not touched."""
        r = next((x for x in self.rules if x.name == rule), None)
        if r is None:
            raise UnknownNameError(f"alert rule (for {self.app.app})", rule, [x.name for x in self.rules])
        batches = {id(o.batch): o.batch for o in r.operands}
        cache = self._prepare(float(t), batches.values())  # type: ignore[arg-type]
        with np.errstate(divide="ignore", invalid="ignore"):
            q = self._quantiles(cache, [r]) if r.kind == "quantile" else {}
            cond, val = self._condition(r, float(t), cache, q.get(r.name))
        return {tuple(sorted(r.series_labels[g].items())): float(val[g])
                for g in np.flatnonzero(cond).tolist()}

    def firing_as_prometheus(self, t: float) -> list[tuple[dict[str, str], dict[str, str]]]:
        """(labels, annotations) of every alert firing at evaluation `t`, annotations rendered
        with the expression's value *at* `t`, as Prometheus (and ``promtool test rules``) shows
        them; labels include ``alertname``. For checking the engine against real Prometheus."""
        out = []
        for r in self.rules:
            eps = [ep for ep in self._fired if ep.rule is r and ep.fired_at <= t  # type: ignore[operator]
                   and (ep.ended_at is None or ep.ended_at > t)]
            if not eps:
                continue
            values = self.vector(r.name, t)
            for ep in eps:
                value = values[tuple(sorted(r.series_labels[ep.group].items()))]
                out.append((dict(r.alert_labels[ep.group]), r.annotations_for(ep.group, value)))
        return out

    def _prepare(self, t: float, batches: Iterable[_Batch]) -> dict[_Batch, np.ndarray]:
        """Pick up new series (re-select operands whose metric grew) and query every batch at `t`."""
        n = self.store.series_count
        if n != self._seen:
            views = self._views
            for sid in range(self._seen, n):
                v = views.get(self.store.name(sid))
                if v is not None:
                    v.add(sid, self.store.labels(sid))
            self._seen = n
            for v in views.values():
                v.sync()
            for r in self.rules:
                for o in r.operands:
                    if o.seen != o.view.ids.size:  # type: ignore[union-attr]
                        self._extend(r, o)
        cache: dict[_Batch, np.ndarray] = {}
        for b in batches:
            b.refresh()
            cache[b] = b.values(self.store, t)
        return cache

    def _evaluate(self, t: float) -> list[_Episode]:
        if self.last_eval is not None and t <= self.last_eval:
            raise AlertEvaluationError(
                f"evaluation time {t!r} is not after the previous evaluation at {self.last_eval!r}"
            )
        self.last_eval = t
        self.evaluations += 1
        cache = self._prepare(t, self._batches.values())
        with np.errstate(divide="ignore", invalid="ignore"):
            quantiles = self._quantiles(cache, self._quantile_rules)
            conditions = [self._condition(r, t, cache, quantiles.get(r.name)) for r in self.rules]
        changed: list[_Episode] = []
        for r, (cond, val) in zip(self.rules, conditions):
            hold = np.flatnonzero(cond)
            active = r.active
            if hold.size == 0 and not active:
                continue
            for g in hold.tolist():
                ep = active.get(g)
                if ep is None:
                    ep = _Episode(r, g, f"p{len(self._episodes) + 1:0{_ID_WIDTH}d}", t)
                    active[g] = ep
                    self._episodes.append(ep)
                ep.value = float(val[g])
                ep.seen_at = t
            to_fire: list[_Episode] = []
            for g, ep in list(active.items()):
                if ep.seen_at != t:  # no longer in the result: resolve (or drop a pending alert)
                    del active[g]
                    ep.ended_at = t
                    if ep.fired_at is None:
                        self._never_fired.append(ep)
                    else:
                        changed.append(ep)
                elif ep.fired_at is None and t - ep.pending_at >= r.for_s:
                    to_fire.append(ep)
            to_fire.sort(key=lambda e: r.sort_keys[e.group])
            for ep in to_fire:
                ep.fired_at = t
                self._fired.append(ep)
                ep.alert_id = f"a{len(self._fired):0{_ID_WIDTH}d}"
                changed.append(ep)
        return changed

    @staticmethod
    def _values(o: _Operand, cache: dict[_Batch, np.ndarray]) -> np.ndarray:
        """Function values at ``t - offset`` of the operand's selected series (selection order)."""
        return cache[o.batch][o.idx]  # type: ignore[index]

    def _extend(self, r: _Rule, o: _Operand) -> None:
        """Match the series the operand's metric gained and extend its selection and group codes."""
        view = o.view
        assert view is not None
        labels = view.labels
        new = [p for p in range(o.seen, view.ids.size) if _matches(labels[p], o.compiled)]
        o.seen = view.ids.size
        quantile = r.kind == "quantile" and o is r.a
        if quantile:  # series without a parsable `le` are ignored, as Prometheus does
            new = [p for p in new if not math.isnan(_parse_le(labels[p].get("le", "")))]
        if not new:
            return
        o.built += 1
        pos = np.asarray(new, dtype=np.intp)
        o.pos = np.concatenate([o.pos, pos])
        o.sel = view.ids[o.pos]
        if quantile:
            le = np.array([_parse_le(labels[p].get("le", "")) for p in o.pos.tolist()], dtype=np.float64)
            les, lei = np.unique(le, return_inverse=True)
            o.les, o.lei = les, np.asarray(lei, dtype=np.intp).ravel()
        if o.join is not None:
            return  # group codes depend on the join partners: computed per evaluation
        gb = r.group_by
        codes = [r.group_index(tuple(labels[p].get(g, "") for g in gb)) for p in new]
        o.gidx = np.concatenate([o.gidx, np.asarray(codes, dtype=np.intp)])
        o.identity = not quantile and np.unique(o.gidx).size == o.gidx.size

    def _join_groups(self, r: _Rule, o: _Operand, vals: np.ndarray,
                     t: float) -> tuple[np.ndarray, np.ndarray]:
        """``x * on(L) group_left(labels) join_metric``: per-evaluation group codes and values."""
        assert o.join is not None and o.join_view is not None and o.view is not None
        metric, on, copy = o.join
        jv = o.join_view
        right = self.store.at(jv.ids, t - o.offset_s)
        partners: dict[str, tuple[dict[str, str], float]] = {}
        for i in np.flatnonzero(~np.isnan(right)).tolist():
            lab = jv.labels[i]
            k = lab.get(on, "")
            if k in partners:
                raise AlertEvaluationError(
                    f"rule {r.name}: several {metric} series for {on}={k!r} "
                    "(PromQL: many-to-many matching not allowed)"
                )
            partners[k] = ({c: lab.get(c, "") for c in copy}, float(right[i]))
        gidx: list[int] = []
        out: list[float] = []
        for p, v in zip(o.pos.tolist(), vals.tolist()):
            if v != v:  # NaN: no sample
                continue
            lab = o.view.labels[p]
            hit = partners.get(lab.get(on, ""))
            if hit is None:
                continue
            merged = {**lab, **hit[0]}
            gidx.append(r.group_index(tuple(merged.get(g, "") for g in r.group_by)))
            out.append(v * hit[1])
        return np.asarray(gidx, dtype=np.intp), np.asarray(out, dtype=np.float64)

    def _aggregate(self, r: _Rule, o: _Operand, t: float, cache: dict) -> np.ndarray:
        """``agg by (group_by) (fn(metric{...}))`` as a dense vector over the rule's groups (NaN = absent)."""
        vals = self._values(o, cache)
        G = len(r.groups)
        if o.join is not None:
            gidx, v = self._join_groups(r, o, vals, t)
            G = len(r.groups)
        else:
            gidx, v = o.gidx, vals
            if o.identity:  # one series per group: the aggregation is the identity (NaN stays absent)
                out = np.full(G, np.nan)
                out[gidx] = v
                return out
        ok = v == v
        if not ok.all():
            gidx, v = gidx[ok], v[ok]
        present = np.bincount(gidx, minlength=G) > 0
        if o.agg == "sum":
            out = np.bincount(gidx, weights=v, minlength=G).astype(np.float64)
        elif o.agg == "max":
            out = np.full(G, -np.inf)
            np.maximum.at(out, gidx, v)
        else:
            out = np.full(G, np.inf)
            np.minimum.at(out, gidx, v)
        out[~present] = np.nan
        return out

    def _quantiles(self, cache: dict[_Batch, np.ndarray], rules: Iterable[_Rule]) -> dict[str, np.ndarray]:
        """histogram_quantile of the quantile `rules`; one bucketQuantile call per (q, les)."""
        todo: dict[tuple[float, bytes], list[tuple[str, np.ndarray, np.ndarray]]] = defaultdict(list)
        out: dict[str, np.ndarray] = {}
        for r in rules:
            o = r.a
            vals = self._values(o, cache)
            G, nb = len(r.groups), o.les.size
            out[r.name] = np.full(G, np.nan)
            if nb == 0 or G == 0:
                continue
            flat = o.gidx * nb + o.lei  # (group, le) cell of each bucket series
            ok = vals == vals
            if not ok.all():
                flat, vals = flat[ok], vals[ok]
            summed = np.bincount(flat, weights=vals, minlength=G * nb).astype(np.float64).reshape(G, nb)
            present = (np.bincount(flat, minlength=G * nb) > 0).reshape(G, nb)
            summed[~present] = np.nan
            rows = np.flatnonzero(present.any(axis=1))
            if rows.size:
                todo[(r.quantile, o.les.tobytes())].append((r.name, rows, summed[rows]))
        for (q, les), parts in todo.items():
            res = bucket_quantile(q, np.concatenate([m for _, _, m in parts]), np.frombuffer(les))
            k = 0
            for name, rows, m in parts:
                out[name][rows] = res[k:k + len(rows)]
                k += len(rows)
        return out

    def _condition(self, r: _Rule, t: float, cache: dict[_Batch, np.ndarray],
                   quantile: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Boolean vector over the rule's groups (condition holds) and the expression's value."""
        b = None
        if r.kind == "quantile":
            val = quantile if quantile is not None else np.full(len(r.groups), np.nan)
        else:
            val = self._aggregate(r, r.a, t, cache)
            if r.b is not None and r.kind != "value":
                b = self._aggregate(r, r.b, t, cache)
        gv = self._aggregate(r, r.guard, t, cache) if r.guard is not None else None
        n = len(r.groups)  # a join may add groups after an earlier operand was computed
        val = _pad(val, n)
        if b is not None:
            b = _pad(b, n)
            if r.kind == "ratio":
                val = val / b  # NaN where a side is absent
                val[~(b > 0)] = np.nan  # `/ (B > 0)`: no result for a non-positive denominator
            else:
                val = val - b
        cond = _compare(r.op, val, r.threshold)
        if gv is not None:
            cond &= _compare(r.guard.op, _pad(gv, n), r.guard.threshold)  # type: ignore[union-attr,arg-type]
        return cond, val

    # ---------------------------------------------------------------- history
    def history(self, until: float | None = None) -> list[Alert]:
        """Every alert that fired (by `until`), in firing order, with its state as of `until`."""
        return [ep.snapshot(until) for ep in self._fired
                if until is None or ep.fired_at <= until]  # type: ignore[operator]

    def pending_history(self, until: float | None = None) -> list[Alert]:
        """Episodes that were pending and never fired (by `until`): dropped or still pending."""
        out = []
        for ep in self._episodes:
            if until is not None and ep.pending_at > until:
                break
            if ep.fired_at is None or (until is not None and ep.fired_at > until):
                out.append(ep.snapshot(until))
        return out

    def firing(self, t: float | None = None) -> list[Alert]:
        """Alerts firing at `t` (default: the last evaluation), in firing order."""
        t = self.last_eval if t is None else t
        if t is None:
            return []
        return [ep.snapshot(t) for ep in self._fired
                if ep.fired_at <= t and (ep.ended_at is None or ep.ended_at > t)]  # type: ignore[operator]

    def pending(self, t: float | None = None) -> list[Alert]:
        """Alerts pending at `t` (default: the last evaluation), in order of becoming pending."""
        t = self.last_eval if t is None else t
        if t is None:
            return []
        out = []
        for ep in self._episodes:
            if ep.pending_at > t:
                break
            if (ep.fired_at is None or ep.fired_at > t) and (ep.ended_at is None or ep.ended_at > t):
                out.append(ep.snapshot(t))
        return out


def _compare(op: str, v: np.ndarray, threshold: float) -> np.ndarray:
    """PromQL comparison filter: True where the sample is kept (NaN samples are absent)."""
    out = _OPS[op](v, threshold)
    if op == "!=":
        out &= v == v
    return out


def _pad(v: np.ndarray, n: int) -> np.ndarray:
    return v if v.size >= n else np.concatenate([v, np.full(n - v.size, np.nan)])


def _parse_le(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        return math.nan
