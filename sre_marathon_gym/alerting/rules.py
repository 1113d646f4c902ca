"""Compiled alert rules: each catalog rule (a value, ratio, difference or quantile of PromQL-style
operands over a `MetricStore`) is turned once into vectorised operands and label matchers, so the
engine evaluates every rule of a pack with a few numpy calls per step. The engine (`engine`) owns
the lifecycle (pending, firing, resolved) on top of what these compute."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import AlertRuleError, PatternError, UnknownNameError
from ..core.patterns import compile_label_regex
from ..metrics.grid import at_grid
from ..metrics.sample_columns import ColumnPool, Read
from ..metrics.store import MetricStore
from .templates import compile_template, render_parts

if TYPE_CHECKING:
    from ..catalog.alerts import AlertRule


_KINDS = ("value", "ratio", "difference", "quantile")
_FNS = ("rate", "increase", "last")
_AGGS = ("sum", "max", "min")
COMPARISONS: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    ">": np.greater,
    ">=": np.greater_equal,
    "<": np.less,
    "<=": np.less_equal,
    "==": np.equal,
    "!=": np.not_equal,
}
_MATCH_KEYS = {"match": "=", "match_ne": "!=", "match_re": "=~", "match_nre": "!~"}
_OPERAND_FIELDS = {
    "metric",
    "fn",
    "window_s",
    "offset_s",
    "agg",
    "op",
    "threshold",
    "join_metric",
    "join_on",
    "join_labels",
}
_RULE_FIELDS = {"kind", "group_by", "op", "threshold", "quantile"}


# --------------------------------------------------------------------------------------------------
# compiled rules


class KeyCodes:
    """The values of some labels (a key tuple) of each series of a view, numbered by first
    appearance: code per series position, and the distinct keys by code.

    Why: a matcher or a grouping reads only these values, and they repeat (new pods bring new
    series whose service, namespace or ``le`` recur), so it is decided once per distinct key and
    looked up by code (a list index) instead of by hashing the values again per series and operand."""

    __slots__ = ("index", "distinct", "codes")

    def __init__(self) -> None:
        self.index: dict[tuple[str, ...], int] = {}
        self.distinct: list[tuple[str, ...]] = []
        self.codes: list[int] = []

    def copy(self) -> KeyCodes:
        new = KeyCodes()
        new.index, new.distinct, new.codes = dict(self.index), list(self.distinct), list(self.codes)
        return new


class SeriesView:
    """All series of one metric name (ascending ids) and their labels, grown incrementally.

    Why incremental: the engine learns about new series by walking the ids created since its last
    evaluation (`MetricStore.series_since`), so pod churn costs O(new series) instead of
    re-selecting (and re-indexing) whole metrics.
    """

    __slots__ = (
        "metric",
        "_ids",
        "ids",
        "_keys",
        "_labels",
        "churns",
        "_coded",
        "origin",
        "origin_n",
        "block_matches",
    )

    def __init__(self, metric: str):
        self.metric = metric
        # the published view of a series block this view started as a copy of (`adopt`), and how many
        # of its first series came from it: operands matched against that block once per process
        # keep the result on the origin (`block_matches`), so a reset does not match ~14,000 again
        self.origin: SeriesView | None = None
        self.origin_n = 0
        self.block_matches: dict[tuple, tuple[list[bool], list[int]]] = {}
        self._ids: list[int] = []
        self.ids = np.empty(0, dtype=np.intp)
        self._keys: list[tuple[tuple[str, str], ...]] = []  # normalised label keys, by position
        self._labels: list[dict[str, str]] = []  # their dicts, built when first asked
        self.churns = False  # per-pod series (they start and stop with pods)
        self._coded: dict[tuple[str, ...], KeyCodes] = {}

    @property
    def labels(self) -> list[dict[str, str]]:
        """Labels of each series (by position), as dicts."""
        built = self._labels
        if len(built) < len(self._keys):
            built.extend(dict(k) for k in self._keys[len(built) :])
        return built

    def key_codes(self, names: tuple[str, ...]) -> KeyCodes:
        """Per series (by position), the code of its values of the labels `names` ("" if absent):
        built once per view for all the operands that read the same labels, not once per operand."""
        kc = self._coded.get(names)
        if kc is None:
            kc = self._coded[names] = KeyCodes()
        start = len(kc.codes)
        if start < len(self._keys):
            index, distinct, codes = kc.index, kc.distinct, kc.codes
            for lab in self.labels[start:]:
                key = tuple([lab.get(n, "") for n in names])
                c = index.get(key)
                if c is None:
                    c = index[key] = len(distinct)
                    distinct.append(key)
                codes.append(c)
        return kc

    def has_codes(self, names: Iterable[tuple[str, ...]]) -> bool:
        """Whether `key_codes` of every label-name tuple of `names` is built for every series."""
        return all(n in self._coded and len(self._coded[n].codes) == len(self._keys) for n in names)

    def adopt(self, src: SeriesView) -> None:
        """Become a copy of `src` (an empty view taking the series another view was routed); the
        label dicts are shared (nothing modifies them)."""
        self._ids, self.ids, self._keys = list(src._ids), src.ids, list(src._keys)
        self._labels, self.churns = list(src.labels), src.churns
        self._coded = {names: kc.copy() for names, kc in src._coded.items()}
        if src.origin is not None:
            self.origin, self.origin_n = src.origin, src.origin_n
        else:
            self.origin, self.origin_n = src, len(src._keys)

    def __deepcopy__(self, memo: dict) -> SeriesView:
        """Copies share the label keys and dicts (never modified): an env leaving a shared world
        copies every view, and walking ~14,000 label sets cost more than the rest of the engine."""
        new = memo[id(self)] = SeriesView(self.metric)
        new.adopt(self)
        return new

    def add_many(self, ids: list[int], keys: list[tuple[tuple[str, str], ...]]) -> None:
        """Append series (ascending ids) with their normalised label keys."""
        if not self._ids and keys:
            self.churns = any(k == "pod" for k, _ in keys[0])
        self._ids.extend(ids)
        self._keys.extend(keys)

    def sync(self) -> None:
        if len(self._ids) != self.ids.size:
            self.ids = np.concatenate([self.ids, np.asarray(self._ids[self.ids.size :], dtype=np.intp)])


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


def labels_match(labels: Mapping[str, str], matchers: list[_Matcher]) -> bool:
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


class OperandBatch:
    """The series read with one (function, window, offset): few store calls per evaluation.

    Why: the store's query functions work per series, so querying the union of the series every
    operand of that kind selects gives exactly the per-operand results at a fraction of the
    per-call overhead. Pod series (which come and go, so their windows have gaps) are read apart
    from the stable ones: new pods change the churning union nearly every evaluation, while the
    stable one keeps its sample columns from one evaluation to the next (`ColumnPool`; a rate
    read decides per read whether to add the counter-reset sums, so the two reads stay apart).
    """

    __slots__ = ("fn", "window_s", "offset_s", "operands", "stable", "churn", "version")

    def __init__(self, fn: str, window_s: float, offset_s: float):
        self.fn, self.window_s, self.offset_s = fn, window_s, offset_s
        self.operands: list[Operand] = []
        self.stable = np.empty(0, dtype=np.intp)
        self.churn = np.empty(0, dtype=np.intp)
        self.version: tuple[int, ...] = ()

    def refresh(self) -> None:
        """Recompute the unions and the operands' positions in them after an operand was rebuilt:
        the stable union only when a stable operand was (new pods rebuild only the churning ones)."""
        version = tuple(o.built for o in self.operands)
        if version == self.version:
            return
        old = dict(zip(map(id, self.operands), self.version))
        self.version = version

        def union(ops: list[Operand]) -> np.ndarray:
            if not ops:
                return np.empty(0, dtype=np.intp)
            ids = np.sort(np.concatenate([o.sel for o in ops]))  # np.unique, in a third of the time
            first = np.ones(ids.size, dtype=bool)
            first[1:] = ids[1:] != ids[:-1]
            return ids[first]

        stable_ops = [o for o in self.operands if not o.view.churns]  # type: ignore[union-attr]
        churn_ops = [o for o in self.operands if o.view.churns]  # type: ignore[union-attr]
        stable_before = self.stable.size
        if any(old.get(id(o)) != o.built for o in stable_ops):
            self.stable = union(stable_ops)
            for o in stable_ops:
                o.idx = np.searchsorted(self.stable, o.sel)
        if self.stable.size != stable_before or any(old.get(id(o)) != o.built for o in churn_ops):
            self.churn = union(churn_ops)
            for o in churn_ops:
                o.idx = self.stable.size + np.searchsorted(self.churn, o.sel)


def batch_values(
    batches: Iterable[OperandBatch], store: MetricStore, times: np.ndarray, pool: ColumnPool
) -> dict[OperandBatch, np.ndarray]:
    """Each batch's function values [len(times), series] at every evaluation time (minus its
    offset): ``last`` one read per batch (each series apart), rate and increase through `pool`,
    which reads the batches of the same series together and keeps their sample columns."""
    out: dict[OperandBatch, np.ndarray] = {}
    reads: list[Read] = []
    parts: list[tuple[OperandBatch, int]] = []
    for b in batches:
        te = np.asarray(times, dtype=np.float64) - b.offset_s
        if b.fn == "last":
            out[b] = at_grid(store, np.concatenate([b.stable, b.churn]) if b.churn.size else b.stable, te)
            continue
        ids = [x for x in (b.stable, b.churn) if x.size]
        reads.extend((x, te, b.window_s, b.fn == "rate") for x in ids)
        parts.append((b, len(ids)))
        out[b] = np.empty((te.size, 0))
    got = pool.extrapolated(store, reads)
    k = 0
    for b, n in parts:
        if n:
            out[b] = got[k] if n == 1 else np.concatenate(got[k : k + n], axis=1)
        k += n
    return out


class Operand:
    """One of A / B / guard: selection, function, aggregation and the cached group codes."""

    __slots__ = (
        "prefix",
        "metric",
        "fn",
        "window_s",
        "offset_s",
        "agg",
        "matchers",
        "op",
        "threshold",
        "join",
        "view",
        "batch",
        "built",
        "seen",
        "compiled",
        "names",
        "sel",
        "idx",
        "pos",
        "identity",
        "groups_seen",
        "gidx",
        "gmap",
        "le",
        "lei",
        "les",
        "join_view",
        "_where",
        "_memo",
        "_match_key",
    )

    def __init__(
        self, rule_name: str, prefix: str, fields: dict[str, object], matchers: dict[str, tuple[str, str]]
    ):
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
        if self.op is not None and self.op not in COMPARISONS:
            raise UnknownNameError(f"comparison ({where}op)", self.op, COMPARISONS)
        thr = fields.get("threshold")
        self.threshold = math.nan if thr is None else float(thr)  # type: ignore[arg-type]
        self.join: tuple[str, str, tuple[str, ...]] | None = None
        if "join_metric" in fields:
            if "join_on" not in fields or "join_labels" not in fields:
                raise AlertRuleError(f"{where}join_metric needs join_on and join_labels")
            labels = tuple(x.strip() for x in str(fields["join_labels"]).split(",") if x.strip())
            self.join = (str(fields["join_metric"]), str(fields["join_on"]), labels)
        self.view: SeriesView | None = None
        self.batch: OperandBatch | None = None
        self.join_view: SeriesView | None = None
        self.compiled = _compile_matchers(matchers, where.rstrip("_"))
        self.names = tuple(m[0] for m in self.compiled)
        self._match_key = tuple((label, op, value) for label, op, value, _ in self.compiled)
        self._memo: list[bool] = []  # labels_match per distinct value of the matched labels (by code)
        self.seen = 0  # series of the view already matched
        self.built = 0  # bumped when the selection changes (tells the batch to re-index)
        self.sel = np.empty(0, dtype=np.intp)  # selected series ids (ascending)
        self.idx = np.empty(0, dtype=np.intp)  # their positions in the batch's values
        self.identity = False
        self.groups_seen: set[int] = set()  # distinct group codes of the selection (identity test)
        self.pos = np.empty(0, dtype=np.intp)
        self.gidx = np.empty(0, dtype=np.intp)
        self.gmap: list[int] = []  # view's group-key code -> rule group (-1: not yet)
        self.le = np.empty(0)  # bucket bound of each selected series (quantile operands)
        self.lei = np.empty(0, dtype=np.intp)
        self.les = np.empty(0)

    def matching(self, view: SeriesView, start: int) -> list[int]:
        """Positions from `start` on of the view's series that the selection matches (`labels_match`),
        decided once per distinct value of the matched labels (`SeriesView.key_codes`)."""
        kc = view.key_codes(self.names)
        hits = self._memo
        names, compiled = self.names, self.compiled
        codes = kc.codes
        head: list[int] = []
        origin, n = view.origin, view.origin_n
        if start == 0 and not hits and origin is not None and 0 < n <= len(codes):
            # the view's first n series are its origin's block, coded alike in every copy
            key = (names, self._match_key)
            block = origin.block_matches.get(key)
            if block is None:
                distinct = kc.distinct[: max(codes[:n]) + 1]  # codes number keys as they first occur
                memo = [labels_match(dict(zip(names, k)), compiled) for k in distinct]
                block = origin.block_matches[key] = (memo, [p for p in range(n) if memo[codes[p]]])
            hits.extend(block[0])
            head, start = list(block[1]), n
        hits.extend(labels_match(dict(zip(names, key)), compiled) for key in kc.distinct[len(hits) :])
        return head + [p for p in range(start, len(codes)) if hits[codes[p]]]


class CompiledRule:
    """A rule of the pack, compiled for one app (placeholders rendered); its alerts' state is the engine's."""

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
        if self.op not in COMPARISONS:
            raise UnknownNameError(f"comparison ({where}: op)", self.op, COMPARISONS)
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
        self.a = Operand(rule.name, "a_", fields["a"], matchers["a"])
        self.b = Operand(rule.name, "b_", fields["b"], matchers["b"]) if "b" in fields else None
        self.guard = (
            Operand(rule.name, "guard_", fields["guard"], matchers["guard"]) if "guard" in fields else None
        )
        if self.kind in ("ratio", "difference") and self.b is None:
            raise AlertRuleError(f"{where}: kind {self.kind} needs a b_ operand")
        if self.guard is not None and self.guard.op is None:
            raise AlertRuleError(f"{where}: the guard needs guard_op and guard_threshold")
        if self.kind == "quantile" and (self.a.fn != "rate" or self.a.agg != "sum" or self.a.join):
            raise AlertRuleError(f"{where}: a quantile rule reads sum(rate(<histogram>_bucket))")
        self.operands = [o for o in (self.a, self.b, self.guard) if o is not None]
        self.rule_labels = {k: rend(v) for k, v in rule.labels.items()}
        self.annotation_parts = {
            k: compile_template(rend(v), f"{where}: annotation {k}") for k, v in rule.annotations.items()
        }
        # group space shared by the operands: key tuple -> index; a group's labels are built when
        # first asked (most groups never hold: a new pod brings groups to several rules every step)
        self.groups: dict[tuple[str, ...], int] = {}
        self._group_keys: list[tuple[str, ...]] = []
        self._labels: dict[int, tuple[dict[str, str], dict[str, str], tuple[tuple[str, str], ...]]] = {}

    def group_index(self, key: tuple[str, ...]) -> int:
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = len(self._group_keys)
            self._group_keys.append(key)
        return g

    def _group_labels(self, group: int) -> tuple[dict[str, str], dict[str, str], tuple[tuple[str, str], ...]]:
        built = self._labels.get(group)
        if built is None:
            series = {k: v for k, v in zip(self.group_by, self._group_keys[group]) if v != ""}
            labels = {**series, **{k: v for k, v in self.rule_labels.items()}, "alertname": self.name}
            labels = {k: v for k, v in sorted(labels.items()) if v != ""}
            built = self._labels[group] = (series, labels, tuple(labels.items()))
        return built

    def series_labels(self, group: int) -> dict[str, str]:
        """The group's labels as the expression's result carries them (the `by` labels present)."""
        return self._group_labels(group)[0]

    def alert_labels(self, group: int) -> dict[str, str]:
        """The group's alert labels (series labels, the rule's labels, alertname), sorted."""
        return self._group_labels(group)[1]

    def sort_key(self, group: int) -> tuple[tuple[str, str], ...]:
        return self._group_labels(group)[2]

    def annotations_for(self, group: int, value: float) -> dict[str, str]:
        labels = self.series_labels(group)
        return {k: render_parts(parts, labels, value) for k, parts in self.annotation_parts.items()}
