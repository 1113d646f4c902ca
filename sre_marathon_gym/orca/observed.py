"""What an ORCA agent has seen: the metric series its queries returned, and over which times.

Why: evidence in a report counts only if the agent's own queries returned it across the cause's
flip. A flag's rubric signals are public (the demo's source and this package say which series each
flag moves), so without this a report could cite them without looking: a no-tool prior that named
the likely flags with their signals reached about a third of the rubric depth. Log and trace ids
need no record: they carry a checksum and come only from tool results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..tools import promql
from .evidence import metric_family
from .report import MetricRef


@dataclass(frozen=True)
class SeenSeries:
    """One series of a query result: the metric families the query read, the labels of the series
    itself and, for a query_metrics selection, the matchers it pinned as the agent wrote them (e.g.
    ``~5..``), and the times its points cover."""

    families: frozenset[str]
    labels: frozenset[tuple[str, str]]
    start_s: float
    end_s: float


def _families(names: list[str]) -> frozenset[str]:
    return frozenset(metric_family(n) for n in names)


@dataclass
class Observations:
    """The series an episode's metric queries returned (`record` after each tool call)."""

    seen: list[SeenSeries] = field(default_factory=list)

    def record(self, model: Any, data: dict) -> None:
        """Note a successful query_metrics result (`model` is the validated call)."""
        if getattr(model, "tool", None) != "query_metrics":
            return
        if model.promql is not None:
            # only a result series' own labels: a selector's matchers need not hold for every series
            # of an expression (`a{x="1"} or b`, `a{x="1"} or vector(1)`)
            names, pins = promql.metric_names(model.promql), {}
        else:
            names, pins = [model.metric], dict(model.matchers)
        families = _families(names)
        # a rate, increase or quantile point looks back over its window; a raw point sees its instant
        reach = 0.0 if model.promql is not None or model.function == "raw" else float(model.window_s)
        for s in data.get("series", []):
            times = [float(t) for t, _ in s.get("values", [])]
            if not times:
                continue
            # a PromQL series holds points only where it has samples: the query's range is what was
            # looked at (a series that appears at the flip was seen absent before it)
            start = float(data.get("start_s", min(times) - reach))
            end = float(data.get("end_s", max(times)))
            # the series' own labels first: a pinned regex (`~a|b`) must not hide the value it matched
            labels = {**pins, **{k: str(v) for k, v in s.get("labels", {}).items()}}
            self.seen.append(SeenSeries(families, frozenset(labels.items()), start, end))

    def covers(self, ref: MetricRef, at_s: float) -> bool:
        """Whether a returned series of `ref`'s family pinned every matcher of `ref` (``le`` aside)
        over a range that holds `at_s`."""
        family = metric_family(ref.metric)
        wanted = {(k, v) for k, v in ref.matchers.items() if k != "le"}
        return any(
            family in s.families and s.start_s <= at_s <= s.end_s and wanted <= s.labels for s in self.seen
        )


__all__ = ["Observations", "SeenSeries"]
