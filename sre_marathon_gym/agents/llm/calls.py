"""Turning what a model asked for into tool calls, whatever shape it came in.

Why a module: malformed model output (invalid JSON, unknown tools, hallucinated ids) must become a
tool error the model sees on its next turn, and the call must still reach the recorder, so the
bundle shows exactly what the model attempted. The tools themselves (pydantic models, the policy
layer) do the validation; this module only gets the text to them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...tools.models import ToolResult
from .client import ToolCallRequest
from .context import render_result

CallTool = Callable[[Any], ToolResult]


def run_function_call(call_tool: CallTool, req: ToolCallRequest) -> tuple[ToolResult, str]:
    """Execute one function call; return the result and the tool message text for the model."""
    text = req.arguments.strip() or "{}"
    try:
        args = json.loads(text)
    except ValueError as exc:
        result = call_tool(text)  # recorded as an invalid call carrying the raw text
        msg = ToolResult.fail(
            req.name,
            "invalid_arguments",
            f"the arguments of {req.name!r} are not valid JSON ({exc.msg} at char {exc.pos}); "
            "send a JSON object",
        )
        return result, render_result(msg)
    if not isinstance(args, dict):
        result = call_tool({"tool": req.name, "arguments": args})
        return result, render_result(
            ToolResult.fail(
                req.name,
                "invalid_arguments",
                f"the arguments must be a JSON object, got {type(args).__name__}",
            )
        )
    result = call_tool({**args, "tool": req.name})
    return result, render_result(result)


def extract_json(text: str | None) -> Any:
    """The first JSON object in a reply: bare, or inside a ```json fence, or after some prose."""
    if not text:
        raise ValueError("the reply is empty")
    s = text.strip()
    if s.startswith("```"):
        s = s.split("\n", 1)[1] if "\n" in s else s[3:]
        s = s.rsplit("```", 1)[0]
    try:
        return json.loads(s)
    except ValueError:
        pass
    start = s.find("{")
    if start < 0:
        raise ValueError("no JSON object in the reply")
    obj, _ = json.JSONDecoder().raw_decode(s[start:])  # raises ValueError with a position
    return obj


__all__ = ["CallTool", "extract_json", "run_function_call"]
