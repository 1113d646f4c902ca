"""One mechanism table, one matcher parser, one log search (ids included) shared across ORCA modules."""

from __future__ import annotations

import dataclasses
import typing

from sre_marathon_gym.backends.sim import SimBackend
from sre_marathon_gym.catalog.flag_behaviour import FLAG_BEHAVIOUR
from sre_marathon_gym.orca import APP, DAY_S, load, schedule, tasks, time_text, world
from sre_marathon_gym.orca.evidence import flag_signals
from sre_marathon_gym.orca.flags import (
    MECHANISM_KINDS,
    MECHANISMS,
    Mechanism,
    flag_mechanisms,
    mechanisms_with_primary_signal,
)
from sre_marathon_gym.orca.world import orca_world
from sre_marathon_gym.sim.log_search import search_logs
from sre_marathon_gym.tools.runner import parse_matchers


def test_one_mechanism_table_feeds_report_words_evidence_and_the_heuristic():
    assert set(typing.get_args(Mechanism)) == set(MECHANISMS) == {w for w, _ in MECHANISM_KINDS.values()}
    used = {m for bs in FLAG_BEHAVIOUR.values() for _, m, _ in bs}
    assert used <= set(MECHANISM_KINDS)
    assert flag_mechanisms("paymentUnreachable") == ("unreachable",)
    assert [s.kind for s in flag_signals("paymentUnreachable")] == ["errors"]
    assert set(mechanisms_with_primary_signal("errors")) >= {"code_error", "config_wrong_address"}
    assert "code_latency" in mechanisms_with_primary_signal("latency")


def test_constants_live_in_one_place():
    assert APP == "astronomy_shop" and DAY_S == 86_400
    for mod in (time_text, schedule, tasks, world):
        assert getattr(mod, "DAY_S", DAY_S) is DAY_S
    for mod in (world, load):
        assert mod.APP is APP
    assert parse_matchers({"a": "~x.*", "b": "!y", "c": "z", "le": "5"}, skip=("le",)) == {
        "a": ("=~", "x.*"),
        "b": ("!=", "y"),
        "c": "z",
    }


def test_log_search_with_ids_is_the_simulators_search():
    world = SimBackend(orca_world(days=1).sim)  # the recorded run, without the noise (`test_noise`)
    rec = world.sim.logctx
    for service, query, level in ((None, None, None), ("ad", None, "WARN"), (None, "GetAds", None)):
        plain = search_logs(rec, world.app, service, 13 * 3600, 13.5 * 3600, query, level, 50)
        with_ids = world.search_logs(service, 13 * 3600, 13.5 * 3600, query, level, 50, with_ids=True)
        without = [{k: v for k, v in d.items() if k != "id"} for d in with_ids]
        assert plain and [dataclasses.asdict(r) for r in plain] == without
        assert world.search_logs(service, 13 * 3600, 13.5 * 3600, query, level, 50) == without
        for d in with_ids[:5]:
            assert world.log_line(d["id"]) == {k: v for k, v in d.items() if k != "id"}
            assert world.log_line(d["id"][:-1] + ("0" if d["id"][-1] != "0" else "1")) is None  # edited
    for bad in ("log-1-2", "log-a-b-c-d", "trace-1-2-3-4", "log-999999999-0-0-00000000"):
        assert world.log_line(bad) is None
