"""Log search with citable ids: ORCA reports cite log lines, and the judge must find them again.

The search itself is `sim.log_search.search_logs(..., with_positions=True)`; this module turns a line's
position (sample, service, index among that sample's lines) plus a checksum of its text into an id,
so an id resolves by regenerating one sample's lines, and an invented or edited id resolves to nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib

from ..sim.log_context import LogContextRecorder
from ..sim.log_lines import LogRecord
from ..sim.log_search import search_logs


def log_id(k: int, s: int, i: int, rec: LogRecord) -> str:
    h = hashlib.sha256(f"{k}:{s}:{i}:{rec.timestamp}:{rec.message}".encode()).hexdigest()[:8]
    return f"log-{k}-{s}-{i}-{h}"


def resolve_log(recorder: LogContextRecorder, ident: str) -> LogRecord | None:
    """The line an id names, or None when the id is malformed, unknown or tampered with."""
    parts = str(ident).strip().split("-")
    if len(parts) != 5 or parts[0] != "log":
        return None
    try:
        k, s, i = int(parts[1]), int(parts[2]), int(parts[3])
    except ValueError:
        return None
    p = recorder.position_of(k)
    if p is None or not 0 <= s < recorder.S:
        return None
    lines = recorder.lines(p, s, 0)
    if not 0 <= i < len(lines) or log_id(k, s, i, lines[i]) != ident.strip():
        return None
    return lines[i]


def search_logs_with_ids(
    recorder: LogContextRecorder,
    app: object,
    service: str | None,
    start_s: float,
    end_s: float,
    query: str | None,
    level: str | None,
    limit: int,
) -> list[dict]:
    """`sim.log_search.search_logs` (newest `limit` matches in time order), each with its citable `id`."""
    pairs = search_logs(recorder, app, service, start_s, end_s, query, level, limit, with_positions=True)
    return [{"id": log_id(k, s, i, r), **dataclasses.asdict(r)} for r, (k, s, i) in pairs]
