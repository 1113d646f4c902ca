"""ORCA-bench's read-only tools over the recorded run, capped at the task's telemetry horizon.

Why a cap and not a live simulator: every task reads the same six recorded days (ORCA's snapshots);
the agent may only see data up to the first snapshot after detection + grace. Queries past the
horizon are clamped, trace and log ids from later samples resolve to "not found", and nothing
reports cluster state, deploy history or flag values (the ground truth).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ..backends.sim import SimBackend
from ..core.errors import did_you_mean
from ..tools.models import GetTopology, GetTraces, QueryMetrics, ReadSource, SearchLogs, ToolResult
from ..tools.runner import ToolRunner
from .observed import Observations
from .report import SubmitReport

READ_MODELS = {
    "query_metrics": QueryMetrics,
    "search_logs": SearchLogs,
    "get_traces": GetTraces,
    "get_topology": GetTopology,
    "read_source": ReadSource,
}
FLAGD_FILE = "src/flagd/demo.flagd.json"
MAX_ACTION_CHARS = 65_536  # one tool call as JSON text (a report with every list full fits easily)
MAX_LOG_WINDOW_S = 6 * 3600  # logs are synthesised per sample: a bound keeps one search to seconds
MAX_TRACE_WINDOW_S = 2 * 3600  # traces too: a filter that matches nothing scans the whole window


def tool_names(source_access: bool = True) -> tuple[str, ...]:
    names = [n for n in READ_MODELS if source_access or n != "read_source"]
    return (*names, "submit_report")


def tool_specs(source_access: bool = True) -> list[dict]:
    """OpenAI-style function specs of the ORCA tools."""
    models = {**READ_MODELS, "submit_report": SubmitReport}
    out = []
    for name in tool_names(source_access):
        schema = models[name].model_json_schema()
        schema.get("properties", {}).pop("tool", None)
        if "required" in schema:
            schema["required"] = [r for r in schema["required"] if r != "tool"]
        doc = (models[name].__doc__ or "").strip()
        out.append({"type": "function", "function": {"name": name, "description": doc, "parameters": schema}})
    return out


def parse_orca_call(raw: Any, source_access: bool = True) -> tuple[Any, ToolResult | None]:
    """(model, None) or (None, structured error) for a raw call (dict, JSON text or model); never raises
    for what an agent sends (over-long text and deeply nested JSON are structured errors too)."""
    if isinstance(raw, (str, bytes)) and len(raw) > MAX_ACTION_CHARS:
        return None, ToolResult.fail(
            "?", "invalid_arguments", f"a tool call is at most {MAX_ACTION_CHARS} characters, got {len(raw)}"
        )
    try:
        return _parse(raw, source_access)
    except RecursionError:
        return None, ToolResult.fail("?", "invalid_arguments", "the tool call is nested too deeply")


def _parse(raw: Any, source_access: bool) -> tuple[Any, ToolResult | None]:
    if isinstance(raw, (str, bytes)):
        try:
            raw = json.loads(raw)
        except (ValueError, TypeError) as exc:
            return None, ToolResult.fail("?", "invalid_arguments", f"a tool call is a JSON object: {exc}")
    if hasattr(raw, "model_dump") and hasattr(raw, "tool"):
        raw = {"tool": raw.tool, **raw.model_dump(exclude={"tool"})}
    if not isinstance(raw, dict):
        return None, ToolResult.fail(
            "?", "invalid_arguments", f"a tool call is a JSON object, got {type(raw).__name__}"
        )
    name = raw.get("tool")
    allowed = tool_names(source_access)
    if name not in allowed:
        hint = (
            " (source access is disabled in this task)"
            if name == "read_source"
            else did_you_mean(str(name), allowed)
        )
        return None, ToolResult.fail(str(name), "unknown_tool", f"unknown tool {name!r}{hint}")
    model = SubmitReport if name == "submit_report" else READ_MODELS[name]
    try:
        return model.model_validate(raw), None
    except ValidationError as exc:
        errs = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'call'}: {e['msg']}" for e in exc.errors()[:5])
        return None, ToolResult.fail(str(name), "invalid_arguments", errs)


class OrcaTools:
    def __init__(self, world: SimBackend, horizon_s: float, source_access: bool = True):
        self.world = world
        self.horizon_s = float(horizon_s)
        self.source_access = source_access
        self.runner = ToolRunner(world.view_at(horizon_s), None)  # the recorded run seen at the horizon
        self.calls = 0
        self.errors = 0
        self.observed = Observations()  # the metric series the agent's queries returned

    def parse(self, raw: Any) -> tuple[Any, ToolResult | None]:
        return parse_orca_call(raw, self.source_access)

    def call(self, model: Any) -> ToolResult:
        """Run one validated read tool; never raises for what the agent sends."""
        self.calls += 1
        name = model.tool
        try:
            if name == "search_logs":
                result = ToolResult(ok=True, tool=name, data=self._search_logs(model))
            elif name == "get_traces" and model.trace_id:
                result = self._trace_by_id(model)
            elif name == "get_traces":
                self._check_trace_window(model)
                result = self.runner.call(model)
            elif name == "read_source" and model.service == "flagd":
                result = self._flagd_source(model)
            else:
                result = self.runner.call(model)
        except (KeyError, ValueError) as exc:
            result = ToolResult.fail(name, "invalid_arguments", str(exc).strip("'\""))
        if not result.ok:
            self.errors += 1
        else:
            self.observed.record(model, result.data)
        return result

    # ------------------------------------------------------------ overrides
    def _search_logs(self, m: SearchLogs) -> dict:
        end = self.horizon_s if m.end_s is None else min(m.end_s, self.horizon_s)
        start = max(0.0, end - 600.0) if m.start_s is None else m.start_s
        if start > end:
            raise ValueError(f"start_s {start} is after end_s {end} (data ends at {self.horizon_s})")
        if end - start > MAX_LOG_WINDOW_S:
            cap = f"{MAX_LOG_WINDOW_S} s ({MAX_LOG_WINDOW_S // 3600} h)"
            raise ValueError(
                f"a log search spans at most {cap}, this one {end - start:.0f} s: narrow start_s/end_s"
            )
        lines = self.world.search_logs(m.service, start, end, m.query, m.level, m.limit, with_ids=True)
        return {"count": len(lines), "logs": lines}

    def _check_trace_window(self, m: GetTraces) -> None:
        end = self.horizon_s if m.end_s is None else min(m.end_s, self.horizon_s)
        start = max(0.0, end - 600.0) if m.start_s is None else m.start_s
        if end - start > MAX_TRACE_WINDOW_S:
            cap = f"{MAX_TRACE_WINDOW_S} s ({MAX_TRACE_WINDOW_S // 3600} h)"
            raise ValueError(
                f"a trace search spans at most {cap}, this one {end - start:.0f} s: narrow start_s/end_s"
            )

    def _trace_by_id(self, m: GetTraces) -> ToolResult:
        result = self.runner.call(m)
        if result.ok and any(t["start_s"] > self.horizon_s for t in result.data["traces"]):
            return ToolResult.fail("get_traces", "not_found", f"unknown trace id {m.trace_id!r}")
        return result

    def _flagd_source(self, m: ReadSource) -> ToolResult:
        """flagd's flag definitions as the repository ships them (defaults, not live values)."""
        if m.path is None:
            return ToolResult(
                ok=True, tool="read_source", data={"service": "flagd", "files": [{"path": FLAGD_FILE}]}
            )
        if m.path != FLAGD_FILE:
            return ToolResult.fail(
                "read_source", "not_found", f"flagd has no source file {m.path!r}; known: {FLAGD_FILE}"
            )
        flags = {
            f.name: {
                "description": f.effect,
                "state": "ENABLED",
                "variants": {k: v for k, v in f.variants.items()},
                "defaultVariant": f.default,
            }
            for f in self.world.app.feature_flags
        }
        return ToolResult(
            ok=True,
            tool="read_source",
            data={"service": "flagd", "path": FLAGD_FILE, "text": json.dumps({"flags": flags}, indent=2)},
        )
