"""The log recorder's state: static tables of the app, the per-15 s arrays, the memos, lookups.

Why apart from `LogContextRecorder` (`log_context`): the modules that read samples (`log_snapshot`,
`log_causes`, `log_lines`, `traces`) need the recorded state and its lookups, not the recorder's
hook or its methods that delegate to them; they depend on this class, and the recorder above them
extends it. One sample's numbers are reached as `rec.svc_count[p, s]` (`_bind_arrays`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

from ..core.clock import METRIC_STEP_S
from ..core.errors import UnknownNameError
from .log_symptoms import SYMPTOM_BIT_NAMES, Context
from .log_text import FAMILY
from .op_names import client_op, edge_path, route_name, server_op
from .span_tree import shared_shapes

if TYPE_CHECKING:
    from .sim_state import SimState

STEP_S = METRIC_STEP_S


class LogState:
    """What the log and trace synthesisers read: per-sample arrays (grown in place) and the app's tables.

    `__init__` also sets up the memos of the recorder's hook and of `log_snapshot.snapshot`."""

    GROW = 256

    # per-sample arrays [sample, S | E | R], bound from `_svc`, `_edge`, `_rt` by `_bind_arrays`
    svc_count: np.ndarray
    svc_fail: np.ndarray
    own_err: np.ndarray
    saturated: np.ndarray
    unreachable: np.ndarray
    svc_lat: np.ndarray
    own_lat: np.ndarray
    hop_ms: np.ndarray
    inbound_loss: np.ndarray
    throttled: np.ndarray
    added_ms: np.ndarray
    edge_rate: np.ndarray
    edge_fail: np.ndarray
    edge_tshare: np.ndarray
    edge_route: np.ndarray
    edge_timeout: np.ndarray
    rt_rate: np.ndarray
    rt_fail: np.ndarray
    rt_lat: np.ndarray

    def __init__(self, sim: SimState, step_s: float = STEP_S):
        c = sim.compiled
        self.compiled = c
        self.app = sim.app
        self.app_name = sim.app.app
        self.epoch = sim.epoch  # wall-clock stamps in log bodies (envoy, nginx)
        self.step_s = float(step_s)
        self.services = c.services
        S, E, R = len(c.services), len(c.edge_src), len(c.request_types)
        self.S, self.E, self.R = S, E, R
        state = sim.log_seed.generate_state(4)
        self.entropy = (int(state[0]), int(state[1]))
        seed_bytes = bytes(np.asarray(state, dtype=np.uint32).tobytes())
        self.key = hashlib.blake2b(seed_bytes, digest_size=16).digest()
        svc = {s.name: s for s in sim.app.services}
        self.family = [FAMILY.get(svc[n].language, "go") for n in c.services]
        self.kinds = [svc[n].kind for n in c.services]
        self.ports = [svc[n].port for n in c.services]
        self.background = c.background_rps
        self.retries = c.edge_retries.astype(int)
        self.protocols = [e.protocol for e in sim.app.edges]
        self.addresses = [f"{e.target}:{svc[e.target].port or 8080}" for e in sim.app.edges]
        inbound = {e.target: e.protocol for e in sim.app.edges}
        self.server_op = [server_op(n, svc[n].language, inbound.get(n, "http")) for n in c.services]
        self.client_op = [client_op(e.target, e.protocol) for e in sim.app.edges]
        self.edge_path = [edge_path(e.target) for e in sim.app.edges]
        self.root_ops = [route_name(rt.method, rt.endpoint) for rt in sim.app.request_types]
        self.server_attrs = [
            {"service.name": n, "telemetry.sdk.language": svc[n].language.lower()} for n in c.services
        ]
        self.shapes = shared_shapes(sim.app, c)  # the spans of each root (`span_tree`)
        self.shape_visits = np.zeros((R + S, S))  # [root, S] calls to each service per request, as traced
        self.shape_edges = np.zeros((R + S, E))  # [root, E] calls over each edge per request, as traced
        for r, shape in enumerate(self.shapes):
            for node in shape.nodes:
                self.shape_visits[r, node.svc] += 1.0
                if node.edge >= 0:
                    self.shape_edges[r, node.edge] += 1.0
        self.out_edges = [np.nonzero(c.edge_src == s)[0].tolist() for s in range(S)]
        self.readiness_default = {
            n: (svc[n].readiness_probe.path if svc[n].readiness_probe else None) for n in c.services
        }
        self.addr_defaults = {(n, cfg.key): cfg.value for n in c.services for cfg in svc[n].config}
        self.flag_index = {f.name: i for i, f in enumerate(sim.app.feature_flags)}
        self._flagd = c.index.get("flagd")  # flagd logs each reload of its flag file
        self._flagd_state = tuple(sim.cluster.configmaps.get("flagd-config", {}).items())
        # growing arrays
        self.n = 0
        cap = self.GROW
        f32 = np.float32
        self.times = np.zeros(cap)
        self._svc = {
            k: np.zeros((cap, S), dtype=f32)
            for k in (
                "svc_count",
                "svc_fail",
                "own_err",
                "saturated",
                "unreachable",
                "svc_lat",
                "own_lat",
                "hop_ms",
                "inbound_loss",
                "throttled",
                "added_ms",
            )
        }
        self._edge = {
            k: np.zeros((cap, E), dtype=f32)
            for k in ("edge_rate", "edge_fail", "edge_tshare", "edge_route", "edge_timeout")
        }
        self._rt = {k: np.zeros((cap, R), dtype=f32) for k in ("rt_rate", "rt_fail", "rt_lat")}
        self.svc_bits = np.zeros((cap, S), dtype=np.uint32)
        self.edge_bits = np.zeros((cap, E), dtype=np.uint8)
        self.ctx_ref = np.zeros(cap, dtype=np.int32)
        self.contexts: list[Context] = []
        self._ctx_key: object = None
        # position -> (service, pod, restart reason or FLAGD_RELOAD)
        self.events: dict[int, list[tuple[int, str, str]]] = {}
        self._restarts_seen: dict[str, int] = {}
        self._k_index: dict[int, int] = {}
        self._cause_cache: dict[tuple[int, int, int], tuple[int, int, int, str, str]] = {}  # see `log_causes`
        self._lines_cache: dict[tuple[int, int, int], list] = {}  # see `LogContextRecorder.lines`
        self._spec_memo_key: object = None  # memos of `log_snapshot.snapshot`
        self._pods_key: tuple | None = None
        self._pod_memo: dict[str, tuple] = {}  # pod -> (key, its part of a context)
        self._crashing: list[int] = []
        self._behaviours_memo: dict[tuple[str, int], tuple[tuple, list]] = {}
        self._readiness_memo: dict[tuple[str, str | None], bool] = {}
        self._expected_memo: tuple | None = None  # see `_expected_part`
        self._bind_arrays()

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_pods_key"] = None  # keyed by a per-process counter: rescan after a copy
        state["_pod_memo"] = {}
        state["_lines_cache"] = {}  # rendered again on demand: a copy (a shared world's) stays small
        return state

    def _grow(self) -> None:
        def g(a: np.ndarray) -> np.ndarray:
            out = np.zeros((len(a) + self.GROW, *a.shape[1:]), dtype=a.dtype)
            out[: len(a)] = a
            return out

        self.times = g(self.times)
        for d in (self._svc, self._edge, self._rt):
            for k in d:
                d[k] = g(d[k])
        self.svc_bits, self.edge_bits, self.ctx_ref = g(self.svc_bits), g(self.edge_bits), g(self.ctx_ref)
        self._bind_arrays()

    def _bind_arrays(self) -> None:
        """Expose the per-sample arrays as attributes (`rec.svc_count[p, s]`), rebound after growth."""
        for d in (self._svc, self._edge, self._rt):
            self.__dict__.update(d)

    # ------------------------------------------------------------ lookups
    def check_app(self, app: object) -> None:
        name = getattr(app, "app", app)
        if name is not None and name != self.app_name:
            raise UnknownNameError("app of this simulator", str(name), [self.app_name])

    def service_index(self, service: str) -> int:
        i = self.compiled.index.get(service)
        if i is None:
            raise UnknownNameError(f"service of {self.app_name}", service, self.services)
        return i

    def sample_k(self, p: int) -> int:
        return int(round(self.times[p] / self.step_s))

    def position_of(self, k: int) -> int | None:
        return self._k_index.get(int(k))

    def positions(self, start_s: float, end_s: float) -> list[int]:
        """Samples whose 15 s window (t - step, t] overlaps [start_s, end_s], oldest first."""
        times = self.times[: self.n]
        lo = int(np.searchsorted(times, start_s, side="left"))
        hi = int(np.searchsorted(times, end_s + self.step_s, side="left"))
        return [p for p in range(lo, min(hi, self.n)) if times[p] - self.step_s < end_s]

    def context(self, p: int) -> Context:
        return self.contexts[int(self.ctx_ref[p])]

    def symptoms(self, p: int, service: str) -> list[str]:
        """Names of the symptom kinds a service showed in sample p (for summaries and tests)."""
        b = int(self.svc_bits[p, self.service_index(service)])
        return [name for bit, name in SYMPTOM_BIT_NAMES.items() if b & bit]


__all__ = ["STEP_S", "LogState"]
