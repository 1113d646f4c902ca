"""Log search on the simulator: the `search_logs` query over lines synthesised per sample.

Apart from the synthesis because it is the query side, with the semantics `sre_marathon_gym.core.logquery`
defines for every backend (terms, phrases, exclusions, minimum level), newest matches first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import logquery

if TYPE_CHECKING:
    from .log_context import LogContextRecorder


def search_logs(
    recorder: LogContextRecorder,
    app: object,
    service: str | None,
    start_s: float,
    end_s: float,
    query: str | None = None,
    level: str | None = None,
    limit: int = 200,
    with_positions: bool = False,
) -> list:
    """Log lines of `service` (None: every service) with start_s <= timestamp <= end_s.

    `query`: whitespace-separated terms (double quotes group a phrase), all must occur in the
    message, an attribute value or the pod name, case-insensitively; `-term` excludes. `level`:
    the minimum severity (DEBUG, INFO, WARN, ERROR). Both as `sre_marathon_gym.core.logquery` defines
    them for every backend. Returns the most recent `limit` matching lines in
    time order, like `kubectl logs --tail`.

    `with_positions=True` returns `(record, (k, s, i))` pairs instead: the sample key, the service
    index and the line's index among `recorder.lines(p, s, 0)` (every level generated, so the index
    is stable and the line can be found again, e.g. for citable log ids).
    """
    rec = recorder
    rec.check_app(app)
    need = logquery.min_rank(level)
    svcs = [rec.service_index(service)] if service is not None else list(range(rec.S))
    inc, exc = logquery.parse_query(query)
    out: list = []
    limit = max(0, int(limit))
    for p in reversed(rec.positions(start_s, end_s)):
        k = rec.sample_k(p) if with_positions else 0
        batch = []
        for s in svcs:
            for i, r in enumerate(rec.lines(p, s, 0 if with_positions else max(need, 0))):
                if not (start_s <= r.timestamp <= end_s) or logquery.rank(r.level) < need:
                    continue
                if not logquery.matches(inc, exc, r.message, r.attributes, r.pod):
                    continue
                batch.append((r, (k, s, i)) if with_positions else r)
        out.extend(batch)
        if len(out) >= limit:
            break
    if with_positions:
        out.sort(key=lambda x: (x[0].timestamp, x[0].service, x[0].pod))
    else:
        out.sort(key=lambda r: (r.timestamp, r.service, r.pod))
    return out[max(0, len(out) - limit) :] if limit else []


__all__ = ["search_logs"]
