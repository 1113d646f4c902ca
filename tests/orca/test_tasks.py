"""The 1,079 ORCA-bench tasks: counts, deterministic ids and contents, ground-truth rules."""

from __future__ import annotations

from collections import Counter

from sre_marathon_gym.orca.tasks import generate_tasks, orca_tasks, tasks_digest
from sre_marathon_gym.orca.visibility import flag_visibility

# Any change to a task id or content changes this digest: update it on purpose, never by accident.
DIGEST = "884d9449c4b323a7cb93e11cff97fa6a522925eeba606e563ffcae5706a505e7"


def test_count_split_and_digest():
    tasks = orca_tasks()
    assert len(tasks) == 1079
    assert Counter(t.difficulty for t in tasks) == {"easy": 353, "medium": 381, "hard": 345}
    assert sum(t.is_control for t in tasks) == 195
    assert len({t.task_id for t in tasks}) == 1079
    assert tasks_digest(tasks) == DIGEST


def test_two_generations_are_identical():
    a, b = generate_tasks(), generate_tasks()
    assert [t.task_id for t in a] == [t.task_id for t in b]
    assert tasks_digest(a) == tasks_digest(b) == DIGEST


def test_ground_truth_rules():
    tasks = orca_tasks()
    for t in tasks:
        if t.is_control:
            assert t.ttd_min == 0 and t.section == "control"
            assert t.quiet_window_start_s is not None or t.quiet_window_end_s is not None
            continue
        assert t.horizon_s > t.current_s >= t.incident_s
        for c in t.ground_truth:
            assert flag_visibility(c.flag, c.value).user_visible  # e.g. kafkaQueueProblems never counts
            assert c.start_s < t.current_s
        flags = [c.flag for c in t.ground_truth]
        assert "imageSlowLoad" not in flags or flags == ["imageSlowLoad"]  # kept only as the sole answer
        if t.difficulty == "hard":
            assert t.question == "users are reporting site issues" and t.ttd_min != 1440
    # the hard tier has more plausible causes than the easy one (paper: 4.41 vs 2.00)
    mean = {d: sum(len(t.ground_truth) for t in tasks if t.difficulty == d and not t.is_control)
            / sum(1 for t in tasks if t.difficulty == d and not t.is_control) for d in ("easy", "hard")}
    assert mean["hard"] > mean["easy"]


def test_invisible_flags_are_not_user_visible_in_the_simulator():
    assert not flag_visibility("kafkaQueueProblems", "on").user_visible
    assert not flag_visibility("loadGeneratorFloodHomepage", "on").user_visible
    assert flag_visibility("paymentFailure", "10%").failing == ("checkout", "checkout_multi")
