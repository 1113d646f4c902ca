"""The matched no-action run is computed once per process and schedule (`SimulatedRun.no_action_traffic`)."""

from __future__ import annotations

from sre_marathon_gym.backends import sim_run
from sre_marathon_gym.backends.sim_run import SimulatedRun
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule

ENDS = [120.0, 240.0, 360.0, 480.0]


def _run(catalog, seed: int) -> SimulatedRun:
    schedule = FaultSchedule.generate(
        catalog, "online_boutique", seed, injection_minutes=8, observation_minutes=2
    )
    return SimulatedRun(catalog, "online_boutique", seed, schedule, telemetry=False)


def test_a_second_run_of_the_same_schedule_reuses_the_exact_baseline(catalog):
    sim_run._NO_ACTION_CACHE.clear()
    first = _run(catalog, 3).no_action_traffic(ENDS)
    assert len(sim_run._NO_ACTION_CACHE) == 1
    again = _run(catalog, 3).no_action_traffic(ENDS)
    assert again == first and len(sim_run._NO_ACTION_CACHE) == 1
    sim_run._NO_ACTION_CACHE.clear()
    assert _run(catalog, 3).no_action_traffic(ENDS) == first  # recomputed: the same numbers
    other = _run(catalog, 4).no_action_traffic(ENDS)
    assert len(sim_run._NO_ACTION_CACHE) == 2 and other != first
    assert sum(first[0]) > 0  # requests were served


def test_a_custom_load_profile_is_never_cached(catalog):
    sim_run._NO_ACTION_CACHE.clear()
    schedule = FaultSchedule.generate(
        catalog, "online_boutique", 3, injection_minutes=8, observation_minutes=2
    )
    run = SimulatedRun(catalog, "online_boutique", 3, schedule, telemetry=False, load_profile=lambda t: 0.5)
    half = run.no_action_traffic(ENDS)
    assert not sim_run._NO_ACTION_CACHE
    full = _run(catalog, 3).no_action_traffic(ENDS)
    assert sum(half[0]) < sum(full[0])
