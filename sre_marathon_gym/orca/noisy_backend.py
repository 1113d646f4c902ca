"""The recorded ORCA run with the demo's background noise (`noise`) merged into its logs and traces.

Why a wrapper and not the simulator: the noise is a fixed function of time (flagd's stream
deadline), not of the traffic model's state, so it is added where the tools read, identically for
every task, and the cached run stays the simulator's.
"""

from __future__ import annotations

from typing import Any

from ..backends.sim import SimBackend
from ..core import logquery
from . import noise

LOG_PREFIX = "log-n"


class NoisyBackend(SimBackend):
    def __init__(self, sim: Any, seed: int, now_s: float | None = None):
        super().__init__(sim)
        self.noise_seed = int(seed)
        self._now = None if now_s is None else float(now_s)
        self._timeline: Any = None

    def _flags(self) -> Any:
        if self._timeline is None:  # read-only run: the history is final
            self._timeline = self.flag_timeline()
        return self._timeline

    def now(self) -> float:
        return self.sim.now if self._now is None else self._now

    def view_at(self, now_s: float) -> NoisyBackend:
        return NoisyBackend(self.sim, self.noise_seed, now_s)

    def _subscribers(self) -> list[str]:
        return [s for s in self.service_names() if s in noise.SUBSCRIBERS]

    def _pod(self, service: str) -> str:
        pods = sorted(p for p, s in self.pod_services().items() if s == service)
        return pods[0] if pods else service

    def _noise_logs(self, service, start_s, end_s, query, level) -> list[tuple[str, dict]]:
        need = logquery.min_rank(level)
        inc, exc = logquery.parse_query(query)
        out = []
        end = min(float(end_s), self.now())
        for r in noise.reconnects(self.noise_seed, float(start_s), end, self._subscribers()):
            if service is not None and r.service != service:
                continue
            rec = noise.log_record(r, self._pod(r.service))
            if logquery.rank(rec["level"]) < need or not logquery.matches(
                inc, exc, rec["message"], rec["attributes"], rec["pod"]
            ):
                continue
            out.append((f"{LOG_PREFIX}{r.n}-{r.service}-{r.trace_id[:8]}", rec))
        return out

    def search_logs(self, service, start_s, end_s, query, level, limit, with_ids=False) -> list[dict]:
        base = super().search_logs(service, start_s, end_s, query, level, limit, with_ids=with_ids)
        extra = [
            ({"id": i, **d} if with_ids else d)
            for i, d in self._noise_logs(service, start_s, end_s, query, level)
        ]
        if not extra:
            return base
        merged = sorted(base + extra, key=lambda d: (d["timestamp"], d["service"], d["pod"]))
        limit = max(0, int(limit))
        return merged[len(merged) - limit :] if limit else []

    def log_line(self, log_id: str) -> dict | None:
        lid = str(log_id).strip()
        if not lid.startswith(LOG_PREFIX):
            return super().log_line(lid)
        try:
            n_text, rest = lid[len(LOG_PREFIX) :].split("-", 1)
            service, tid8 = rest.rsplit("-", 1)
            n = int(n_text)
        except ValueError:
            return None
        if service not in self._subscribers():
            return None
        end = noise._end(self.noise_seed, service, n)
        hits = [
            r
            for r in noise.reconnects(self.noise_seed, end, end, [service])
            if r.n == n and r.trace_id[:8] == tid8
        ]
        if not hits or hits[0].end_s > self.now():
            return None
        return noise.log_record(hits[0], self._pod(service))

    def traces(self, trace_id, service, start_s, end_s, min_duration_ms, status, limit) -> list[dict]:
        if trace_id:
            r = noise.find_reconnect(self.noise_seed, trace_id, self._subscribers(), self.now())
            if r is not None:
                return [noise.trace(r)]
            found = super().traces(trace_id, service, start_s, end_s, min_duration_ms, status, limit)
            return [self._flags().annotate(t) for t in found]
        base = super().traces(None, service, start_s, end_s, min_duration_ms, status, limit)
        base = [self._flags().annotate(t) for t in base]
        want = None if status is None else str(status).lower().replace("status_code_", "")
        if want in ("ok", "unset"):
            return base
        # a stream's trace starts 10 minutes before its cut and is stored once the cut ends it
        lo, hi = float(start_s) + noise.STREAM_S, min(float(end_s) + noise.STREAM_S, self.now())
        extra = []
        for r in noise.reconnects(self.noise_seed, lo, hi, self._subscribers()):
            tr = noise.trace(r)
            if service is not None and service not in {sp["service"] for sp in tr["spans"]}:
                continue
            if min_duration_ms is not None and tr["duration_ms"] < float(min_duration_ms):
                continue
            extra.append(tr)
        if not extra:
            return base
        merged = sorted(base + extra, key=lambda d: -d["start_s"])
        return merged[: max(0, int(limit))]


__all__ = ["NoisyBackend"]
