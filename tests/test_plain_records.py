"""`core.plain.record_dict` is `dataclasses.asdict`: same dicts, same key order, fresh containers."""

from __future__ import annotations

import dataclasses
import json

from sre_marathon_gym.core.plain import record_dict
from sre_marathon_gym.sim.log_search import search_logs
from sre_marathon_gym.sim.simulator import Simulator
from sre_marathon_gym.sim.traces import find_traces


@dataclasses.dataclass(frozen=True)
class _Leaf:
    a: int
    b: dict


@dataclasses.dataclass(frozen=True)
class _Odd:
    name: str
    leaves: tuple
    nested: dict  # a list inside: written by `asdict` itself


def test_traces_logs_and_events_are_written_as_asdict_writes_them(catalog):
    sim = Simulator(catalog, "astronomy_shop", 3)
    sim.advance_to(300)
    sim.act.restart("cart")  # a rollout: events and log lines of its own
    sim.advance_to(900)
    traces = find_traces(sim.logctx, sim.app, 0, 900, None, None, None, 200)
    logs = search_logs(sim.logctx, sim.app, None, 0, 900, limit=2000)
    records = [*traces, *logs, *sim.cluster.events]
    assert traces and logs and sim.cluster.events
    for r in records:
        mine, theirs = record_dict(r), dataclasses.asdict(r)
        assert json.dumps(mine) == json.dumps(theirs)  # same keys in the same order, same values
    t = traces[0]
    d = record_dict(t)
    d["spans"][0]["attributes"]["x"] = 1  # a fresh dict: the trace's own is untouched
    assert "x" not in t.spans[0].attributes


def test_values_it_does_not_write_itself_go_to_asdict():
    odd = _Odd("n", (_Leaf(1, {"k": "v"}),), {"list": [1, _Leaf(2, {})]})
    assert record_dict(odd) == dataclasses.asdict(odd)
    assert record_dict(_Leaf(3, {"k": 1.5})) == {"a": 3, "b": {"k": 1.5}}
