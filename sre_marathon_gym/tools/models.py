"""The agent's tools as pydantic models: one class per tool, exportable as JSON Schema and as
OpenAI-style function specs. A call is validated by `parse_call`; anything malformed becomes a
structured `ToolResult` error, never an exception in the agent's face.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from ..core.clock import METRIC_STEP_S
from ..core.patterns import MAX_PATTERN_CHARS

Kind = Literal["read", "incident", "intervention"]
MAX_MATCHERS = 32  # label matchers in one query (each regex is compiled: the count bounds the work)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ------------------------------------------------------------------ free reads
class GetAlerts(_Args):
    """Cumulative alert history (firing, pending-to-firing and resolved alerts) up to now."""

    tool: Literal["get_alerts"] = "get_alerts"
    state: Literal["all", "firing", "resolved"] = "all"
    since_s: float | None = Field(None, ge=0, description="only alerts that fired at or after this time")
    limit: int = Field(200, ge=1, le=2000)


class QueryMetrics(_Args):
    """Read a metric (raw, rate/increase or a quantile, grouped by labels), or run PromQL over a range."""

    tool: Literal["query_metrics"] = "query_metrics"
    metric: str | None = Field(None, description="series name, e.g. traces_span_metrics_calls_total")
    promql: str | None = Field(
        None,
        max_length=2000,
        description=(
            "a PromQL expression evaluated as a range query over start_s/end_s/step_s instead of "
            "metric/function/matchers, e.g. sum by (service_name) "
            '(rate(traces_span_metrics_calls_total{status_code="STATUS_CODE_ERROR"}[5m])). '
            "On the simulator: selectors with = != =~ !~, rate irate increase delta "
            "avg/max/min/sum/count/last_over_time, histogram_quantile, abs ceil floor sqrt round "
            "clamp_min clamp_max vector scalar time, sum avg max min count topk bottomk "
            "by/without, + - * / % ^ and comparisons (bool) with on/ignoring, and or unless, "
            "offset; anything else is an error naming it"
        ),
    )
    matchers: dict[str, str] = Field(
        default_factory=dict,
        max_length=MAX_MATCHERS,
        description=(
            'label -> value; prefix "~" for a regex (RE2 syntax as in PromQL, fully anchored), '
            '"!" for not-equal'
        ),
    )
    function: Literal["raw", "rate", "increase", "p50", "p95", "p99"] = "raw"
    window_s: int = Field(
        120, ge=METRIC_STEP_S, le=3600, description="range window for rate/increase/quantiles"
    )
    group_by: list[str] = Field(
        default_factory=list, description="sum by these labels (empty: keep every series)"
    )
    start_s: float | None = Field(None, ge=0)
    end_s: float | None = Field(None, ge=0)
    step_s: int = Field(60, ge=METRIC_STEP_S, le=3600)

    @model_validator(mode="after")
    def _metric_or_promql(self) -> QueryMetrics:
        if (self.metric is None) == (self.promql is None):
            raise ValueError("give exactly one of `metric` or `promql`")
        return self


class SearchLogs(_Args):
    """Search structured logs of one service (or all) in a time range."""

    tool: Literal["search_logs"] = "search_logs"
    service: str | None = None
    query: str | None = Field(
        None, max_length=MAX_PATTERN_CHARS, description='terms AND-ed; "quoted phrase"; -term excludes'
    )
    level: Literal["DEBUG", "INFO", "WARN", "ERROR"] | None = None
    start_s: float | None = Field(None, ge=0)
    end_s: float | None = Field(None, ge=0)
    limit: int = Field(100, ge=1, le=1000)


class GetTraces(_Args):
    """Find sampled traces, or fetch one trace by id."""

    tool: Literal["get_traces"] = "get_traces"
    trace_id: str | None = None
    service: str | None = None
    status: Literal["ok", "error"] | None = None
    min_duration_ms: float | None = Field(None, ge=0)
    start_s: float | None = Field(None, ge=0)
    end_s: float | None = Field(None, ge=0)
    limit: int = Field(20, ge=1, le=200)


class GetTopology(_Args):
    """Services, the call graph with protocols, zones, and the request types the entry point serves."""

    tool: Literal["get_topology"] = "get_topology"


class GetK8sState(_Args):
    """Kubernetes objects of the benchmark namespace, like kubectl get."""

    tool: Literal["get_k8s_state"] = "get_k8s_state"
    resource: Literal[
        "pods", "deployments", "events", "nodes", "networkpolicies", "configmaps", "secrets"
    ] = "pods"
    service: str | None = None
    limit: int = Field(200, ge=1, le=2000)


class GetDeployHistory(_Args):
    """Changes shipped through the pipeline and rollouts, with messages, diffs and stages."""

    tool: Literal["get_deploy_history"] = "get_deploy_history"
    service: str | None = None
    since_s: float | None = Field(None, ge=0)
    limit: int = Field(50, ge=1, le=500)


class ReadSource(_Args):
    """A source file of a service at its deployed revision (list the files when path is omitted)."""

    tool: Literal["read_source"] = "read_source"
    service: str
    path: str | None = None


class ReadConfig(_Args):
    """A service's deployed configuration: env vars, ConfigMap keys, image, resources, replicas, probes."""

    tool: Literal["read_config"] = "read_config"
    service: str


class Workspace(_Args):
    """The persistent workspace: notes that survive across invocations."""

    tool: Literal["workspace"] = "workspace"
    op: Literal["list", "read", "write", "delete"] = "list"
    key: str | None = Field(None, max_length=128)
    text: str | None = Field(None, max_length=20000)


# ------------------------------------------------------------------ scored incident reporting
class OpenIncident(_Args):
    """Report an incident grouping alerts that share a cause."""

    tool: Literal["open_incident"] = "open_incident"
    alert_ids: list[str] = Field(min_length=1)
    title: str = Field("", max_length=300)


class SetRootCause(_Args):
    """Name an incident's culprit service(s) and the responsible artifact (e.g. cartservice:env/REDIS_ADDR)."""  # noqa: E501 (tool description, kept verbatim)

    tool: Literal["set_root_cause"] = "set_root_cause"
    incident_id: str
    services: list[str] = Field(min_length=1)
    artifact: str = Field(min_length=1)
    summary: str = Field("", max_length=2000)


class UpdateIncident(_Args):
    """Add or remove alerts, or add a note."""

    tool: Literal["update_incident"] = "update_incident"
    incident_id: str
    add_alert_ids: list[str] = Field(default_factory=list)
    remove_alert_ids: list[str] = Field(default_factory=list)
    note: str = Field("", max_length=2000)


class ResolveIncident(_Args):
    """Mark an incident resolved."""

    tool: Literal["resolve_incident"] = "resolve_incident"
    incident_id: str
    note: str = Field("", max_length=2000)


# ------------------------------------------------------------------ interventions (guarded: cite an incident)
class _Intervention(_Args):
    incident_id: str = Field(description="the reported incident this action addresses")


class Rollback(_Intervention):
    """Roll a deployment back to its previous (or a given) revision."""

    tool: Literal["rollback"] = "rollback"
    service: str
    revision: int | None = Field(None, ge=1)


class Restart(_Intervention):
    """Rollout-restart a deployment (new pods; in-flight requests on old pods fail)."""

    tool: Literal["restart"] = "restart"
    service: str


class Scale(_Intervention):
    """Set a deployment's replicas (per zone)."""

    tool: Literal["scale"] = "scale"
    service: str
    replicas: int = Field(ge=0, le=20)


class SetConfig(_Intervention):
    """Set an env var, a flagd feature flag (service flagd), or a resource limit (resources.limits.cpu / .memory)."""  # noqa: E501 (tool description, kept verbatim)

    tool: Literal["set_config"] = "set_config"
    service: str
    key: str
    value: str


class PatchSource(_Intervention):
    """Ship a source fix through the pipeline: revert a file to an earlier revision (default: the one before)."""  # noqa: E501 (tool description, kept verbatim)

    tool: Literal["patch_source"] = "patch_source"
    service: str
    path: str
    revision: str | None = Field(None, pattern=r"^r\d+$")


class ClusterOp(_Intervention):
    """Cluster operations: failover ingress to a zone, cordon/uncordon/drain a node, delete a NetworkPolicy."""  # noqa: E501 (tool description, kept verbatim)

    tool: Literal["cluster_op"] = "cluster_op"
    operation: Literal["failover", "cordon", "uncordon", "drain", "delete_network_policy", "delete_namespace"]
    target: str


READ_TOOLS = (
    GetAlerts,
    QueryMetrics,
    SearchLogs,
    GetTraces,
    GetTopology,
    GetK8sState,
    GetDeployHistory,
    ReadSource,
    ReadConfig,
    Workspace,
)
INCIDENT_TOOLS = (OpenIncident, SetRootCause, UpdateIncident, ResolveIncident)
INTERVENTION_TOOLS = (Rollback, Restart, Scale, SetConfig, PatchSource, ClusterOp)
ALL_TOOLS = READ_TOOLS + INCIDENT_TOOLS + INTERVENTION_TOOLS
TOOL_NAMES = tuple(t.model_fields["tool"].default for t in ALL_TOOLS)
TOOL_KIND: dict[str, Kind] = {
    **{t.model_fields["tool"].default: "read" for t in READ_TOOLS},
    **{t.model_fields["tool"].default: "incident" for t in INCIDENT_TOOLS},
    **{t.model_fields["tool"].default: "intervention" for t in INTERVENTION_TOOLS},
}

ToolCall = Annotated[Union[tuple(ALL_TOOLS)], Field(discriminator="tool")]  # type: ignore[valid-type]
_adapter: TypeAdapter[Any] = TypeAdapter(ToolCall)


class ToolError(BaseModel):
    code: Literal[
        "invalid_arguments",
        "unknown_tool",
        "not_found",
        "forbidden",
        "guard_failed",
        "conflict",
        "budget_exceeded",
        "unavailable",
    ]
    message: str


class ToolResult(BaseModel):
    """What every tool call returns: data on success, a structured error otherwise."""

    ok: bool
    tool: str
    data: Any = None
    error: ToolError | None = None

    @classmethod
    def fail(cls, tool: str, code: str, message: str) -> ToolResult:
        return cls(ok=False, tool=tool, error=ToolError(code=code, message=message))  # type: ignore[arg-type]


def parse_call(call: Any) -> tuple[BaseModel | None, ToolResult | None]:
    """Validate a raw call (dict or JSON string or model); return (model, None) or (None, error result)."""
    from ..core.errors import did_you_mean
    from .safe_json import repr_of

    if isinstance(call, BaseModel) and isinstance(call, ALL_TOOLS):
        return call, None
    try:
        if isinstance(call, (str, bytes)):
            model = _adapter.validate_json(call)
        else:
            if not isinstance(call, dict):
                return None, ToolResult.fail(
                    "?", "invalid_arguments", f"a tool call is a JSON object, got {type(call).__name__}"
                )
            name = call.get("tool")
            if not isinstance(name, str) or name not in TOOL_NAMES:
                shown = name if isinstance(name, str) else repr_of(name)
                return None, ToolResult.fail(
                    shown[:100],
                    "unknown_tool",
                    f"unknown tool {shown[:100]!r}{did_you_mean(shown[:100], TOOL_NAMES)}",
                )
            model = _adapter.validate_python(call)
    except (ValidationError, RecursionError) as exc:
        if isinstance(exc, RecursionError):
            return None, ToolResult.fail("?", "invalid_arguments", "the call is nested too deeply")
        name = call.get("tool", "?") if isinstance(call, dict) else "?"
        name = name if isinstance(name, str) else "?"
        errs = "; ".join(f"{_where(e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        return None, ToolResult.fail(str(name), "invalid_arguments", errs)
    return model, None


def _where(loc: tuple) -> str:
    """`('scale', 'replicas')` -> `replicas` (the first element is the union tag)."""
    return ".".join(map(str, loc[1:])) or (str(loc[0]) if loc else "call")


def json_schemas() -> dict[str, dict]:
    """Tool name -> JSON Schema of its arguments."""
    return {name: t.model_json_schema() for name, t in zip(TOOL_NAMES, ALL_TOOLS)}


def openai_tools() -> list[dict]:
    """OpenAI-style function specs (``{"type": "function", "function": {...}}``) for every tool."""
    out = []
    for name, t in zip(TOOL_NAMES, ALL_TOOLS):
        schema = t.model_json_schema()
        schema["properties"].pop("tool", None)
        if "required" in schema:
            schema["required"] = [r for r in schema["required"] if r != "tool"]
        out.append(
            {
                "type": "function",
                "function": {"name": name, "description": (t.__doc__ or "").strip(), "parameters": schema},
            }
        )
    return out
