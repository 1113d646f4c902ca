"""Models of `catalog/alerts/rules.yaml` (the frozen 44-rule pack) and `catalog/metrics.yaml`.

Rules are structured (template + parameters) so that the package's alert engine and the PromQL
emitted for a real Prometheus come from one description. `expr` is PromQL with the placeholders
``{namespace}`` and ``{entry}`` (the app's entry-point service), rendered per app.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import CatalogModel

Severity = Literal["info", "warning", "critical"]
MetricType = Literal["counter", "gauge", "histogram"]


class MetricSpec(CatalogModel):
    name: str = Field(description="series name as exported; a histogram exports _bucket, _sum and _count")
    type: MetricType
    labels: list[str]
    help: str
    unit: str = ""
    apps: list[str] | Literal["all"] = "all"
    buckets: list[float] | None = None


class MetricsFile(CatalogModel):
    schema_version: int
    metrics: list[MetricSpec]


class AlertTemplate(CatalogModel):
    id: str
    family: Literal["request", "workload", "resource", "infrastructure", "messaging", "application"]
    subject: Literal["entry", "service", "pod", "deployment", "node", "zone", "consumer"]
    description: str
    apps: list[str] | Literal["all"] = "all"
    source: str = Field(description="where the template comes from (public rule pack, mixin, ...)")


class AlertRule(CatalogModel):
    name: str
    template: str
    apps: list[str] | Literal["all"] = "all"
    severity: Severity
    for_s: int = Field(ge=0, description="holds-for: how long the condition must hold before firing")
    params: dict[str, float | int | str] = {}
    metrics: list[str] = Field(min_length=1, description="metric names the expression reads")
    expr: str = Field(description="PromQL with {namespace} and {entry} placeholders")
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}

    def applies_to(self, app: str) -> bool:
        return self.apps == "all" or app in self.apps

    def render(self, namespace: str, entry: str) -> str:
        return self.expr.replace("{namespace}", namespace).replace("{entry}", entry)


class RulePack(CatalogModel):
    schema_version: int
    templates: list[AlertTemplate]
    rules: list[AlertRule]
