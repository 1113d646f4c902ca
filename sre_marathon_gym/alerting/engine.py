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

Speed: the grid points one call catches up on are evaluated together: each (function, window,
offset) is computed once for all of them and all series the rules select (a times x series matrix:
`rules.batch_values`; rate and increase from the sample columns `metrics.sample_columns` keeps
from one evaluation to the next, ``last`` from `metrics.grid.at_grid`), every rule's condition for
all those times at once (every operand's aggregation in one pass per kind: `aggregates`), and only
the per-time ``for:`` state machine runs point by point, over the rules whose condition holds
somewhere or that have active alerts. The ids and the series -> group codes of every operand are
cached and rebuilt only when the metric gains series; grouping uses ``np.bincount`` (which adds
each group's series in their order, at every time, so the values are the same bits as evaluating
one time after another). What an evaluation allocates as Python objects matters too: the garbage
collector's passes over the whole process are paid wherever they start.

The noise figures of a run (alert ambiguity, flapping) are `evaluation.alert_noise`'s.
"""

from __future__ import annotations

import math
import weakref
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..core.clock import METRIC_STEP_S
from ..core.errors import AlertEvaluationError, AlertRuleError, UnknownNameError
from ..metrics.sample_columns import ColumnPool
from ..metrics.series_block import SeriesBlock
from ..metrics.store import MetricStore, bucket_quantile
from .aggregates import Aggregates, reduce_cells
from .rules import COMPARISONS, CompiledRule, Operand, OperandBatch, SeriesView, at_grid, batch_values
from .templates import render_template

if TYPE_CHECKING:
    from ..catalog.alerts import RulePack
    from ..catalog.apps import App

__all__ = [
    "Alert",
    "AlertEngine",
    "AlertRuleError",
    "AlertEvaluationError",
    "render_template",
]

AlertState = Literal["pending", "firing", "resolved"]

_ID_WIDTH = 4
_LE = ("le",)  # the label a quantile rule's buckets are read by (`SeriesView.key_codes` names)
_NO_JOINS: dict = {}  # `_joins` of a rule without joins (read only)
_MAX_TIMES = 32  # grid points evaluated together at most (bounds the times x series matrices)
# series block -> metric -> a view routed with the block's series of that metric (`_adopt_leading_block`)
_BLOCK_VIEWS: weakref.WeakKeyDictionary[SeriesBlock, dict[str, SeriesView]] = weakref.WeakKeyDictionary()


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

    __slots__ = (
        "rule",
        "group",
        "pending_id",
        "alert_id",
        "pending_at",
        "fired_at",
        "ended_at",
        "value",
        "seen_at",
        "_snap",
        "_snap_key",
    )

    def __init__(self, rule: CompiledRule, group: int, pending_id: str, t: float):
        self.rule = rule
        self.group = group
        self.pending_id = pending_id
        self.alert_id: str | None = None
        self.pending_at = t
        self.fired_at: float | None = None
        self.ended_at: float | None = None  # resolved (fired) or dropped (never fired)
        self.value = math.nan
        self.seen_at = t
        self._snap: Alert | None = None  # the latest snapshot (final once ended)
        self._snap_key: tuple | None = None  # what that snapshot depends on besides the rule

    def snapshot(self, until: float | None = None) -> Alert:
        """The episode as it stood at `until` (default: now)."""
        fired = self.fired_at is not None and (until is None or self.fired_at <= until)
        ended = self.ended_at is not None and (until is None or self.ended_at <= until)
        # a firing alert is read at every step: rebuild it only when what it shows has changed
        value = self.value  # its sign too: 0.0 == -0.0, but they render apart
        key = (fired, ended, value, math.copysign(1.0, value), self.alert_id, self.fired_at, self.ended_at)
        if key == self._snap_key and self._snap is not None:
            return self._snap
        state: AlertState = "resolved" if ended else ("firing" if fired else "pending")
        r = self.rule
        snap = Alert(
            id=self.alert_id if fired and self.alert_id else self.pending_id,
            rule=r.name,
            template=r.template,
            severity=r.severity,
            labels=dict(r.alert_labels(self.group)),
            annotations=r.annotations_for(self.group, self.value),
            state=state,
            pending_at=self.pending_at,
            fired_at=self.fired_at if fired else None,
            resolved_at=self.ended_at if ended else None,
            value=self.value,
        )
        self._snap, self._snap_key = snap, key
        return snap


# --------------------------------------------------------------------------------------------------
# the engine


class AlertEngine:
    """Evaluates the rules of `rules` that apply to `app` on `store` every `interval_s` seconds.

    Call `evaluate_until(t)` after the simulator has written its samples up to `t` (the engine
    never looks past `t`, and every grid point since the last evaluation is evaluated, so calling
    it every tick or every agent invocation gives the same history).
    """

    def __init__(self, rules: RulePack, app: App, store: MetricStore, interval_s: float = METRIC_STEP_S):
        if not interval_s > 0:
            raise AlertEvaluationError(f"interval_s must be > 0, got {interval_s!r}")
        self.app = app
        self.store = store
        self.interval_s = float(interval_s)
        self.rules = [
            CompiledRule(r, app.namespace, app.entry_point) for r in rules.rules if r.applies_to(app.app)
        ]
        self._views: dict[str, SeriesView] = {}
        self._batches: dict[tuple[str, float, float], OperandBatch] = {}
        for r in self.rules:
            for o in r.operands:
                o.view = self._views.setdefault(o.metric, SeriesView(o.metric))
                o.batch = self._batches.setdefault(
                    (o.fn, o.window_s, o.offset_s), OperandBatch(o.fn, o.window_s, o.offset_s)
                )
                o.batch.operands.append(o)
                if o.join is not None:
                    o.join_view = self._views.setdefault(o.join[0], SeriesView(o.join[0]))
        self._quantile_rules = [r for r in self.rules if r.kind == "quantile"]
        self._columns = ColumnPool()  # sample columns the batches read, kept from one evaluation to the next
        self._aggregates = Aggregates(self.rules)  # every operand's aggregation in one pass per kind
        # per metric, the label names whose values the operands read (`SeriesView.key_codes`)
        self._key_names: dict[str, set[tuple[str, ...]]] = defaultdict(set)
        for r in self.rules:
            for o in r.operands:
                self._key_names[o.metric].update([o.names, r.group_by])
            if r.kind == "quantile":
                self._key_names[r.a.metric].add(_LE)
        self._active: list[dict[int, _Episode]] = [{} for _ in self.rules]  # per rule: group -> episode
        self._seen = 0  # store series ids already routed to the views
        self.last_eval: float | None = None
        self.evaluations = 0
        self._fired: list[_Episode] = []
        self._never_fired: list[_Episode] = []
        self._episodes: list[_Episode] = []  # every episode, in order of becoming pending
        self._history: tuple[tuple, list[Alert]] = ((), [])  # (until, evaluations) -> `history`

    # ---------------------------------------------------------------- evaluation
    def evaluate_until(self, t: float) -> list[Alert]:
        """Evaluate every grid point ``k * interval_s`` after the last evaluation up to `t`.

        Returns the alerts that fired or resolved in those evaluations (as of `t`).
        """
        step = self.interval_s
        k = 0 if self.last_eval is None else math.floor(self.last_eval / step + 1e-9) + 1
        times: list[float] = []
        while k * step <= t + 1e-9:
            times.append(k * step)
            k += 1
        changed: list[_Episode] = []
        for i in range(0, len(times), _MAX_TIMES):
            changed.extend(self._evaluate(times[i : i + _MAX_TIMES]))
        return [ep.snapshot(t) for ep in changed]

    def evaluate(self, t: float) -> list[Alert]:
        """Evaluate every rule once at time `t` (must be later than the previous evaluation).

        Returns the alerts that fired or resolved at `t`.
        """
        return [ep.snapshot(t) for ep in self._evaluate([float(t)])]

    def vector(self, rule: str, t: float) -> dict[tuple[tuple[str, str], ...], float]:
        """The rule expression's result at `t` (sorted series labels -> value), as an instant
        query of its PromQL would return it; alert state is not touched."""
        r = next((x for x in self.rules if x.name == rule), None)
        if r is None:
            raise UnknownNameError(f"alert rule (for {self.app.app})", rule, [x.name for x in self.rules])
        batches = {id(o.batch): o.batch for o in r.operands}
        times = [float(t)]
        cache = self._prepare(times, batches.values())  # type: ignore[arg-type]
        with np.errstate(divide="ignore", invalid="ignore"):
            q = self._quantiles(cache, [r], 1) if r.kind == "quantile" else {}
            cond, val = self._condition(r, times, cache, q.get(r.name))
        return {
            tuple(sorted(r.series_labels(g).items())): float(val[0, g])
            for g in np.flatnonzero(cond[0]).tolist()
        }

    def firing_as_prometheus(self, t: float) -> list[tuple[dict[str, str], dict[str, str] | None]]:
        """(labels, annotations) of every alert firing at evaluation `t`, annotations rendered
        with the expression's value *at* `t`, as Prometheus (and ``promtool test rules``) shows
        them; labels include ``alertname``. For checking the engine against real Prometheus.
        Annotations are None when the value sits on a rounding tie of its rendering (a change in
        the last bits, such as Prometheus' order of summation, would print it differently)."""
        out = []
        for r in self.rules:
            eps = [
                ep
                for ep in self._fired
                if ep.rule is r
                and ep.fired_at <= t  # type: ignore[operator]
                and (ep.ended_at is None or ep.ended_at > t)
            ]
            if not eps:
                continue
            values = self.vector(r.name, t)
            for ep in eps:
                value = values[tuple(sorted(r.series_labels(ep.group).items()))]
                ann: dict[str, str] | None = r.annotations_for(ep.group, value)
                if any(r.annotations_for(ep.group, value * f) != ann for f in (1 - 1e-9, 1 + 1e-9)):
                    ann = None
                out.append((dict(r.alert_labels(ep.group)), ann))
        return out

    def _prepare(self, times: list[float], batches: Iterable[OperandBatch]) -> dict[OperandBatch, np.ndarray]:
        """Pick up new series (re-select operands whose metric grew) and query every batch at all
        `times` (one [times, series] matrix per batch)."""
        n = self.store.series_count
        if n != self._seen:
            views = self._views
            if self._seen == 0:
                self._seen = self._adopt_leading_block()
            routed: dict[str, tuple[list[int], list]] = {}
            names, keys = self.store.series_since(self._seen)
            for sid, name, key in zip(range(self._seen, n), names, keys):
                if name in views:
                    part = routed.get(name)
                    if part is None:
                        part = routed[name] = ([], [])
                    part[0].append(sid)
                    part[1].append(key)
            for name, (ids, ks) in routed.items():
                views[name].add_many(ids, ks)
            self._seen = n
            for v in views.values():
                v.sync()
            for r in self.rules:
                for o in r.operands:
                    if o.seen != o.view.ids.size:  # type: ignore[union-attr]
                        self._extend(r, o)
        batches = list(batches)
        for b in batches:
            b.refresh()
        self._columns.start()
        return batch_values(batches, self.store, np.asarray(times, dtype=np.float64), self._columns)

    def _adopt_leading_block(self) -> int:
        """Route the series block the store starts with (an app's span metrics: the same ~14,000
        series at every reset) by copying views routed with it once per block, not series by
        series; returns how many series that routed. The views end as routing them one by one
        leaves them, and operands match them afterwards as usual."""
        block = self.store.leading_block
        if block is None:
            return 0
        routed = _BLOCK_VIEWS.setdefault(block, {})
        for metric, view in self._views.items():
            src = routed.get(metric)
            names = self._key_names.get(metric, ())
            if src is None or not src.has_codes(names):
                # built apart and published complete: a published view is never changed again (an
                # interrupt or another thread must never see half of one)
                fresh = SeriesView(metric)
                if src is None:
                    ids = block.by_name.get(metric, [])
                    fresh.add_many(ids, [block.keys[i] for i in ids])
                    fresh.sync()
                else:
                    fresh.adopt(src)
                for n in names:
                    fresh.key_codes(n)
                _ = fresh.labels  # the label dicts built now, not lazily on the published view
                routed[metric] = src = fresh
            view.adopt(src)
        return len(block)

    def _evaluate(self, times: list[float]) -> list[_Episode]:
        """Evaluate the ascending grid points `times` together; the alert changes in time order."""
        if self.last_eval is not None and times[0] <= self.last_eval:
            raise AlertEvaluationError(
                f"evaluation time {times[0]!r} is not after the previous evaluation at {self.last_eval!r}"
            )
        self.last_eval = times[-1]
        self.evaluations += len(times)
        cache = self._prepare(times, self._batches.values())
        with np.errstate(divide="ignore", invalid="ignore"):
            quantiles = self._quantiles(cache, self._quantile_rules, len(times))
            aggs = self._aggregates.compute(cache, len(times))
            conditions = [self._condition(r, times, cache, quantiles.get(r.name), aggs) for r in self.rules]
        todo: list[tuple[CompiledRule, dict[int, _Episode], list[list[int]], np.ndarray]] = []
        for r, active, (cond, val) in zip(self.rules, self._active, conditions):
            if active or cond.any():  # the others cannot change state at any of these times
                at, groups = np.nonzero(cond)  # row-major: per time, ascending groups
                cut = np.searchsorted(at, np.arange(len(times) + 1)).tolist()
                holds = [groups[cut[i] : cut[i + 1]].tolist() for i in range(len(times))]
                todo.append((r, active, holds, val))
        changed: list[_Episode] = []
        for i, t in enumerate(times):  # time outer, rules inner: ids are numbered in this order
            for r, active, holds, val in todo:
                if holds[i] or active:
                    self._step(r, active, t, holds[i], val[i], changed)
        return changed

    def _step(
        self,
        r: CompiledRule,
        active: dict[int, _Episode],
        t: float,
        hold: list[int],
        val: np.ndarray,
        changed: list,
    ) -> None:
        """The ``for:`` state machine of rule `r` at one evaluation `t` (groups `hold` in the result;
        `active`: the rule's episodes still pending or firing, by group)."""
        for g in hold:
            ep = active.get(g)
            if ep is None:
                ep = _Episode(r, g, f"p{len(self._episodes) + 1:0{_ID_WIDTH}d}", t)
                active[g] = ep
                self._episodes.append(ep)
            ep.value = float(val[g])
            ep.seen_at = t
        # (lists only when needed: what an evaluation allocates, the garbage collector pays for)
        gone: list[int] | None = None
        to_fire: list[_Episode] | None = None
        for g, ep in active.items():
            if ep.seen_at != t:  # no longer in the result: resolve (or drop a pending alert)
                gone = gone or []
                gone.append(g)
                ep.ended_at = t
                if ep.fired_at is None:
                    self._never_fired.append(ep)
                else:
                    changed.append(ep)
            elif ep.fired_at is None and t - ep.pending_at >= r.for_s:
                to_fire = to_fire or []
                to_fire.append(ep)
        for g in gone or ():
            del active[g]
        if not to_fire:
            return
        if len(to_fire) > 1:
            to_fire.sort(key=lambda e: r.sort_key(e.group))
        for ep in to_fire:
            ep.fired_at = t
            self._fired.append(ep)
            ep.alert_id = f"a{len(self._fired):0{_ID_WIDTH}d}"
            changed.append(ep)

    @staticmethod
    def _values(o: Operand, cache: dict[OperandBatch, np.ndarray]) -> np.ndarray:
        """Function values [times, series] at ``t - offset`` of the operand's selected series."""
        return cache[o.batch][:, o.idx]  # type: ignore[index]

    def _extend(self, r: CompiledRule, o: Operand) -> None:
        """Match the series the operand's metric gained and extend its selection and group codes."""
        view = o.view
        assert view is not None
        new = o.matching(view, o.seen)
        o.seen = view.ids.size
        quantile = r.kind == "quantile" and o is r.a
        if quantile:  # series without a parsable `le` are ignored, as Prometheus does
            kc = view.key_codes(_LE)
            bounds = [_parse_le(k[0]) for k in kc.distinct]
            le = [bounds[kc.codes[p]] for p in new]
            new = [p for p, b in zip(new, le) if b == b]
            le = [b for b in le if b == b]
        if not new:
            return
        o.built += 1
        o.pos = np.concatenate([o.pos, np.asarray(new, dtype=np.intp)])
        o.sel = view.ids[o.pos]
        if quantile:
            o.le = np.concatenate([o.le, np.asarray(le, dtype=np.float64)])
            les, lei = np.unique(o.le, return_inverse=True)
            o.les, o.lei = les, np.asarray(lei, dtype=np.intp).ravel()
        if o.join is not None:
            return  # group codes depend on the join partners: computed per evaluation
        codes = self._group_codes(r, o, new)
        o.gidx = np.concatenate([o.gidx, np.asarray(codes, dtype=np.intp)])
        o.groups_seen.update(codes)
        o.identity = not quantile and len(o.groups_seen) == o.gidx.size

    @staticmethod
    def _group_codes(r: CompiledRule, o: Operand, new: list[int]) -> list[int]:
        """The rule's group code of each series at view positions `new`, through the operand's map
        from the view's group-key codes (`group_index` only for keys the operand has not seen, in
        the series' order, so groups are numbered as asking series by series numbers them)."""
        kc = o.view.key_codes(r.group_by)  # type: ignore[union-attr]
        gmap, codes, distinct, group_index = o.gmap, kc.codes, kc.distinct, r.group_index
        gmap.extend([-1] * (len(distinct) - len(gmap)))
        out = []
        for p in new:
            c = codes[p]
            g = gmap[c]
            if g < 0:
                g = gmap[c] = group_index(distinct[c])
            out.append(g)
        return out

    def _join_groups(
        self, r: CompiledRule, o: Operand, vals: np.ndarray, right: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``x * on(L) group_left(labels) join_metric`` at one time (`right`: the join metric's
        values): group codes and values, computed per evaluation since partners come and go."""
        assert o.join is not None and o.join_view is not None and o.view is not None
        metric, on, copy = o.join
        jv = o.join_view
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

    def _joins(
        self, r: CompiledRule, times: list[float], cache: dict[OperandBatch, np.ndarray]
    ) -> dict[int, list[tuple[np.ndarray, np.ndarray]]]:
        """The joined operands of `r` per time (by operand id), time outer and operands in rule
        order, so new groups get their numbers in the order one-time evaluations gave them."""
        ops = [o for o in r.operands if o.join is not None]
        if not ops:
            return _NO_JOINS
        ts = np.asarray(times, dtype=np.float64)
        right = {id(o): at_grid(self.store, o.join_view.ids, ts - o.offset_s) for o in ops}  # type: ignore[union-attr]
        vals = {id(o): self._values(o, cache) for o in ops}
        out: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {id(o): [] for o in ops}
        for i in range(len(times)):
            for o in ops:
                out[id(o)].append(self._join_groups(r, o, vals[id(o)][i], right[id(o)][i]))
        return out

    def _aggregate(
        self, r: CompiledRule, o: Operand, cache: dict, joined: dict[int, list], aggs: dict | None = None
    ) -> np.ndarray:
        """``agg by (group_by) (fn(metric{...}))`` as [times, groups] (NaN = absent); from `aggs`
        (the evaluation's `Aggregates`) when there. A rule's joins may have added groups since:
        `_pad` widens it."""
        if aggs is not None and id(o) in aggs:
            return aggs[id(o)]
        vals = self._values(o, cache)
        T, G = vals.shape[0], len(r.groups)
        if o.join is not None:
            parts = joined[id(o)]
            cell = np.concatenate([g + i * G for i, (g, _) in enumerate(parts)])
            return reduce_cells(o.agg, cell, np.concatenate([v for _, v in parts]), T, G)
        if o.identity:  # one series per group: the aggregation is the identity (NaN stays absent)
            out = np.full((T, G), np.nan)
            out[:, o.gidx] = vals
            return out
        cell = (np.arange(T)[:, None] * G + o.gidx[None, :]).ravel()
        return reduce_cells(o.agg, cell, vals.ravel(), T, G)

    def _quantiles(
        self, cache: dict[OperandBatch, np.ndarray], rules: Iterable[CompiledRule], T: int
    ) -> dict[str, np.ndarray]:
        """histogram_quantile of the quantile `rules` as [times, groups]. Rules that read the same
        buckets the same way (levels of one latency, e.g. p95 and p99 or two thresholds) share
        the bucket sums, and one bucketQuantile call per set of bucket bounds answers every
        distinct (sums, q) at once, each row with its q (it works row by row: the same bits)."""
        out: dict[str, np.ndarray] = {}
        sums: list[tuple[Operand, int, np.ndarray, np.ndarray]] = []  # (operand, groups, rows, sums)
        todo: dict[bytes, dict[tuple[int, float], list[str]]] = defaultdict(dict)  # les -> (sums, q) -> rules
        for r in rules:
            o = r.a
            G, nb = len(r.groups), o.les.size
            out[r.name] = np.full((T, G), np.nan)
            if nb == 0 or G == 0:
                continue
            k = next((i for i, (p, g, _, _) in enumerate(sums) if g == G and _same_buckets(p, o)), None)
            if k is None:
                k = len(sums)
                sums.append((o, G, *self._bucket_sums(o, cache, T, G)))
            if sums[k][2].size:
                todo[o.les.tobytes()].setdefault((k, r.quantile), []).append(r.name)
        for les, parts in todo.items():
            q = np.concatenate([np.full(sums[k][2].size, q) for k, q in parts])
            res = bucket_quantile(q, np.concatenate([sums[k][3] for k, _ in parts]), np.frombuffer(les))
            at = 0
            for (k, _), names in parts.items():
                rows = sums[k][2]
                for name in names:
                    out[name].reshape(-1)[rows] = res[at : at + rows.size]
                at += rows.size
        return out

    def _bucket_sums(
        self, o: Operand, cache: dict[OperandBatch, np.ndarray], T: int, G: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """``sum by (le, group)`` of the bucket operand `o`: the (time, group) rows with a bucket
        present and their [rows, les] sums (NaN: no series of that bucket)."""
        nb = o.les.size
        vals = self._values(o, cache)
        # (time, group, le) cell of each bucket series' value; bincount adds them in series order
        cell = (np.arange(T)[:, None] * (G * nb) + (o.gidx * nb + o.lei)[None, :]).ravel()
        v = vals.ravel()
        ok = v == v
        if not ok.all():
            cell, v = cell[ok], v[ok]
        summed = np.bincount(cell, weights=v, minlength=T * G * nb).astype(np.float64).reshape(T * G, nb)
        present = (np.bincount(cell, minlength=T * G * nb) > 0).reshape(T * G, nb)
        summed[~present] = np.nan
        rows = np.flatnonzero(present.any(axis=1))
        return rows, summed[rows]

    def _condition(
        self,
        r: CompiledRule,
        times: list[float],
        cache: dict[OperandBatch, np.ndarray],
        quantile: np.ndarray | None,
        aggs: dict | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Boolean [times, groups] (condition holds) and the expression's value."""
        joined = self._joins(r, times, cache)
        b = None
        if r.kind == "quantile":
            val = quantile if quantile is not None else np.full((len(times), len(r.groups)), np.nan)
        else:
            val = self._aggregate(r, r.a, cache, joined, aggs)
            if r.b is not None and r.kind != "value":
                b = self._aggregate(r, r.b, cache, joined, aggs)
        gv = self._aggregate(r, r.guard, cache, joined, aggs) if r.guard is not None else None
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
        """Every alert that fired (by `until`), in firing order, with its state as of `until`.
        Kept until the next evaluation: the tools, the observation and the recorder all read it
        every step."""
        key = (until, self.evaluations)
        if self._history[0] != key:
            fired = [ep.snapshot(until) for ep in self._fired if until is None or ep.fired_at <= until]  # type: ignore[operator]
            self._history = (key, fired)
        return list(self._history[1])

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
        return [
            ep.snapshot(t)
            for ep in self._fired
            if ep.fired_at <= t and (ep.ended_at is None or ep.ended_at > t)
        ]  # type: ignore[operator]

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
    out = COMPARISONS[op](v, threshold)
    if op == "!=":
        out &= v == v
    return out


def _pad(v: np.ndarray, n: int) -> np.ndarray:
    """Widen [times, groups] to `n` groups (groups a join added later are absent before)."""
    k = v.shape[1]
    return v if k >= n else np.concatenate([v, np.full((v.shape[0], n - k), np.nan)], axis=1)


def _same_buckets(p: Operand, o: Operand) -> bool:
    """Whether bucket operands `p` and `o` sum the same values into the same cells."""
    return p.batch is o.batch and all(
        np.array_equal(getattr(p, k), getattr(o, k)) for k in ("idx", "gidx", "lei", "les")
    )


def _parse_le(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        return math.nan
