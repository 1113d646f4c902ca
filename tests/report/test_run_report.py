"""The run report's data: the score's own verdicts on the right lanes, the changes the record keeps,
refusals of bad input, and byte-identical pages (no browser here: see test_report_in_browser)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sre_marathon_gym.core.errors import ConfigurationError
from sre_marathon_gym.recording.bundle import load_bundle
from sre_marathon_gym.recording.rescoring import score_bundle
from sre_marathon_gym.run_report import report_views, write_report
from sre_marathon_gym.run_report.page import script_json
from sre_marathon_gym.run_report.timeline import (
    CHANGES,
    FALSE_CLAIMS,
    FALSE_INCIDENTS,
    NEEDLESS,
    REFUSED,
    UNJUDGED,
    UNMATCHED,
)
from sre_marathon_gym.schedule.change_stream import CHANGE_FAILURE_RATE, change_plane

DATA = Path(__file__).resolve().parent.parent / "data"


def _lane(view, name):
    return next((lane.items for lane in view.noise if lane.name == name), [])


@pytest.mark.parametrize("agent", ["runbook", "random"])
def test_lanes_carry_the_scores_verdicts(leaderboard_bundles, agent):
    bundle = leaderboard_bundles[agent]
    _, card = score_bundle(bundle)
    per_fault = {fs.fault_id: fs for fs in card.per_fault}
    view = report_views([bundle])[0]
    assert {f.fault_id: f.outcome for f in view.faults} == {k: fs.outcome for k, fs in per_fault.items()}
    assert view.score == f"{card.marathon_score:.1f}" and dict(view.card)["faults"] == str(card.faults)
    assert len(_lane(view, FALSE_INCIDENTS)) == card.false_incidents
    assert len(_lane(view, FALSE_CLAIMS)) == card.false_claims
    assert len(_lane(view, NEEDLESS)) == card.needless_actions
    refused = _lane(view, REFUSED)
    assert sum(it.kind == "action_forbidden" for it in refused) == card.forbidden_attempts
    if agent == "random":  # it guesses: each kind of guess is on the board
        assert card.false_claims and card.needless_actions and card.forbidden_attempts is not None and refused
    for f in view.faults:
        fs = per_fault[f.fault_id]
        credits = sorted(it.label for it in f.items if it.kind == "credit")
        stages = [("credited: correlated", fs.correlated), ("credited: localized", fs.localized)]
        assert credits == sorted([name for name, ok in stages if ok] + ["credited: repaired"] * fs.repaired)
        assert (f.incident_id is not None) == fs.correlated  # credited in time, or not shown as matched
        right = [it for it in f.items if it.kind == "claim_right"]
        assert len(right) == fs.localized
        if fs.repaired and fs.repair_action is not None:
            assert any(
                it.details[1].endswith(f"action #{fs.repair_action}")
                for it in f.items
                if it.kind == "action_ok"
            )
        assert f.start_s < f.end_s and f.end_kind in ("repaired", "reverted", "planned")
        assert all(a < b for a, b in f.probe_failing)
    for it in _lane(view, FALSE_INCIDENTS):  # the incident's alerts say which services it is about
        assert it.services


def test_the_record_keeps_every_change_shipped(leaderboard_bundles):
    record = load_bundle(leaderboard_bundles["noop"]).record
    changes = record.changes
    assert [c.time_s for c in changes] == sorted(c.time_s for c in changes)
    faulty = {c.fault_id: c for c in changes if c.fault_id}
    expected = {f.fault_id: f for f in record.faults if change_plane(f.mechanism)}
    assert faulty.keys() == expected.keys()
    for fid, c in faulty.items():
        assert (c.time_s, c.artifact, c.plane) == (
            expected[fid].start_s,
            expected[fid].artifact,
            change_plane(expected[fid].mechanism),
        )
    rate = len(faulty) / len(changes)
    assert abs(rate - CHANGE_FAILURE_RATE) < 0.02, rate
    assert {c.plane for c in changes if not c.fault_id} >= {"pipeline", "manifest", "netpol", "node"}
    half = record.truncated(1800.0).changes
    assert half == [c for c in changes if c.time_s <= 1800.0] and 0 < len(half) < len(changes)


def test_the_same_bundle_gives_the_same_page(leaderboard_bundles, tmp_path):
    bundle = leaderboard_bundles["runbook"]
    a = write_report([bundle], tmp_path / "a.html").read_bytes()
    b = write_report([bundle], tmp_path / "b.html").read_bytes()
    assert a == b and len(a) < 5_000_000


@pytest.mark.parametrize(
    "name", ["online_boutique-runbook-3-v1.bundle", "online_boutique-runbook-3-v2.bundle"]
)
def test_bundles_sealed_by_earlier_versions_still_report(name, tmp_path):
    view = report_views([DATA / name])[0]
    assert len(view.faults) == score_bundle(DATA / name)[1].faults and not _lane(view, CHANGES)
    if name.endswith("v1.bundle"):  # rules v1 match no incident to a fault and judge no intervention
        assert _lane(view, UNMATCHED) and _lane(view, UNJUDGED) and not _lane(view, FALSE_INCIDENTS)
        card = score_bundle(DATA / name)[1]
        repaired = [fs for fs in card.per_fault if fs.repaired and fs.repair_action is not None]
        lanes = {f.fault_id: f for f in view.faults}
        assert repaired  # the credited repair's action is on its fault's lane, not among the unjudged
        for fs in repaired:
            assert any(
                it.details[1].endswith(f"action #{fs.repair_action}") for it in lanes[fs.fault_id].items
            )
    assert write_report([DATA / name], tmp_path / "old.html").stat().st_size > 1_000_000


def test_bad_requests_are_refused_clearly(leaderboard_bundles, tmp_path):
    bundle = leaderboard_bundles["runbook"]
    with pytest.raises(ConfigurationError, match="one app, seed and schedule"):
        report_views([bundle, DATA / "online_boutique-runbook-3-v2.bundle"])
    with pytest.raises(ConfigurationError, match="at most 3"):
        report_views([bundle] * 4)
    with pytest.raises(ConfigurationError, match=r"\.html"):
        write_report([bundle], tmp_path / "report.pdf")
    (tmp_path / "taken.html").mkdir()
    with pytest.raises(ConfigurationError, match="cannot write .*taken.html: it is a directory"):
        write_report([bundle], tmp_path / "taken.html")
    (tmp_path / "afile").write_text("")
    with pytest.raises(ConfigurationError, match="cannot write .*afile/x.html"):
        write_report([bundle], tmp_path / "afile" / "x.html")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "taken.html"]  # no temp file left


def test_two_runs_on_other_schedules_are_not_compared(leaderboard_bundles, tmp_path, catalog):
    from sre_marathon_gym.evaluation.episode_runner import make_marathon_env, run_scored_episode

    def short(minutes: int) -> str:
        env = lambda: make_marathon_env(  # noqa: E731
            "online_boutique", "train", catalog, injection_minutes=minutes, observation_minutes=2
        )
        return run_scored_episode(env, "noop", seed=5, out=tmp_path / str(minutes)).bundle

    assert len(report_views([short(6), short(6)])) == 2
    with pytest.raises(ConfigurationError, match="one app, seed and schedule"):
        report_views([short(6), short(8)])


def test_the_context_line_places_a_leaderboard_score(leaderboard_bundles, catalog):
    from sre_marathon_gym.evaluation.reports import baseline_context

    score = score_bundle(leaderboard_bundles["runbook"])[1].marathon_score
    line = baseline_context(catalog, "online_boutique", "eval", 30, {}, ("runbook", score), bars=False)
    noop = score_bundle(leaderboard_bundles["noop"])[1].marathon_score
    assert line.startswith(f"same seed: noop {noop:.1f}, runbook {score:.1f}, oracle ")
    assert "(upper bound); the paper's best: 41.3 (Keep-agent" in line


def test_script_json_cannot_close_its_script_element():
    text = script_json({"a": "</script><!-- \u2028 & <b>"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    import json

    assert json.loads(text) == {"a": "</script><!-- \u2028 & <b>"}


def test_the_outcome_chart_keeps_its_x_label_clear_of_the_legend(leaderboard_bundles):
    from sre_marathon_gym.evaluation.reports import outcome_figure

    cards = [(agent, score_bundle(path)[1]) for agent, path in leaderboard_bundles.items()]
    for labelled in (cards[:1], cards, cards * 3):
        fig = outcome_figure(labelled)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        label = ax.xaxis.label.get_window_extent(renderer)
        legend = ax.get_legend().get_window_extent(renderer)
        ticks = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
        assert not label.overlaps(legend)
        assert not any(t.overlaps(legend) for t in ticks)
        assert legend.y0 > ax.get_window_extent(renderer).y1  # above the bars, not on them
