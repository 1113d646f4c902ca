"""The exporter's incremental pod layout (`KubeSeries._build_layout`) against a layout built from scratch,
its one-pass draws and bucket fractions against the plain ones, and simulators copied mid-run against
uncopied ones: the export keeps only the rows of pods that changed, so these must agree bit for bit."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.sim import pod_signals as ps
from sre_marathon_gym.sim.metric_exporter import BUCKETS_MS
from sre_marathon_gym.sim.simulator import Simulator
from sre_marathon_gym.sim.traffic import lognormal_cdf


def _sim(catalog, app: str, changes: str | None = None) -> Simulator:
    seed = catalog.leaderboard.seed_for(app)
    kw = {} if changes is None else {"changes": changes}
    sched = FaultSchedule.generate(catalog, app, seed, **kw)
    return Simulator(catalog, app, seed, schedule=sched, telemetry=True)


def _pod_part(lay) -> dict:
    """What an export reads of a layout; the static series as id -> value bits (their order is free)."""
    ids, bits = lay.static_ids, lay.static_vals.view(np.int64)
    assert len(set(ids.tolist())) == len(ids)
    out = {"static": dict(zip(ids.tolist(), bits.tolist()))}
    for name in (
        "dynamic_ids",
        "slots",
        "ready_slots",
        "ready_svc",
        "oom_slots",
        "keys",
        "salts",
        "node_vals",
    ):
        out[name] = getattr(lay, name).tolist()
    for name in ("cpu_share", "oom_restarts", "inputs", "dvals"):
        out[name] = getattr(lay, name).view(np.int64).tolist()
    out["running"] = None if lay.running is None else lay.running.tolist()
    out["keep"] = None if lay.dynamic_keep is None else lay.dynamic_keep.tolist()
    out["services"] = lay.svc_rows[1][:, 1:].tolist()
    return out


@pytest.mark.parametrize("app, every", [("astronomy_shop", 120), ("train_ticket", 600)])
def test_the_incremental_layout_is_the_one_built_from_scratch(catalog, app, every):
    """At export times through a faulty run (rollouts, restarts, NotReady nodes), the layout kept and
    patched since the start equals the one a copy builds anew from its pods (a copy recomputes every row)."""
    sim = _sim(catalog, app, changes="production")
    checked = 0
    for t in range(every, 3601, every):  # export times (multiples of 15 s)
        sim.advance_to(float(t))
        lay = sim.exporter._layout
        fresh = copy.deepcopy(sim)
        assert fresh.exporter._rows == {} and fresh.exporter._layout is None
        fresh_lay, _ = fresh.exporter._kube(float(t))
        assert _pod_part(fresh_lay) == _pod_part(lay), t
        checked += len(lay.slots)
    assert checked > 0


def test_one_pass_draws_are_the_per_stream_draws():
    keys = np.array([0, 1, 2**63 + 5, 2**64 - 1, 0x9E3779B97F4A7C15], dtype=np.uint64)
    for sample in (0, 1, 240, 10**9):
        both = ps.sample_units_streams(
            np.concatenate([keys, keys[:3]]), sample, ps.stream_salts([1] * 5 + [2] * 3)
        )
        want = np.concatenate([ps.sample_units(keys, sample, 1), ps.sample_units(keys[:3], sample, 2)])
        assert both.tobytes() == want.tobytes()


def test_bucket_fractions_kept_across_traffic_changes_equal_fresh_ones(catalog):
    """Only the entries whose mean changed get new bucket fractions; the rest must be what a full
    recomputation gives."""
    sim = _sim(catalog, "online_boutique")
    for t in (600.0, 1200.0, 1800.0):
        sim.advance_to(t)
        _, _, mean, frac = sim.exporter._frac
        assert frac[:, :-1].tobytes() == lognormal_cdf(BUCKETS_MS, mean).tobytes()
        assert (frac[:, -1] == 1.0).all()


def test_a_copied_simulator_goes_on_like_an_uncopied_one(catalog):
    """Copies (deepcopy, pickle) taken while a node is NotReady: every row is rebuilt in the copy, the
    original keeps its rows (a copy's pods bump the pod counter the original's layout is keyed on)."""
    app, end = "astronomy_shop", 1200.0
    ref = _sim(catalog, app)
    ref.advance_to(end)
    a = _sim(catalog, app)
    a.advance_to(437.0)
    assert any(not n.ready for n in a.cluster.nodes.values())
    b, c = copy.deepcopy(a), pickle.loads(pickle.dumps(a))
    for t in [*np.arange(450.0, end, 45.0), end]:
        for s in (a, b, c):
            s.advance_to(float(t))
    want = ref.store._gather(np.arange(ref.store.series_count), 0, int(end / 15), "test")
    for s in (a, b, c):
        assert s.store._sid_labels == ref.store._sid_labels
        got = s.store._gather(np.arange(s.store.series_count), 0, int(end / 15), "test")
        assert got.tobytes() == want.tobytes()
