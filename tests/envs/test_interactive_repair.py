"""End to end through the interactive tools: correlate, localize and repair a bad image tag."""

from __future__ import annotations

import gymnasium as gym

import sre_marathon_gym  # noqa: F401
from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.scoring import fault_scores, score_until

KW = dict(injection_minutes=20, observation_minutes=10, intensity=0.5)


def seed_with_early_bad_image(cat, app):
    for seed in range(200):
        sched = FaultSchedule.generate(
            cat, app, seed, injection_minutes=20, observation_minutes=10, intensity=0.5
        )
        for f in sched.faults:
            if f.mechanism == "bad_image_tag" and f.start_s <= 600:
                return seed, f
    raise AssertionError("no schedule with an early bad image tag")


def test_bad_image_tag_correlated_localized_and_repaired_by_hand():
    cat = load_catalog()
    seed, scheduled = seed_with_early_bad_image(cat, "online_boutique")
    fault = cat.fault(scheduled.fault_id)
    env = gym.make("SREMarathon/OnlineBoutique-v3", **KW).unwrapped
    env.reset(seed=seed)
    svc = fault.target
    # wait until an alert points at the stuck rollout, reading only what an agent can read
    alert = None
    while alert is None:
        env.step(None)
        alerts = env.call_tool({"tool": "get_alerts", "state": "firing"}).data["alerts"]
        alert = next(
            (
                a
                for a in alerts
                if a["rule"] == "PodImagePullBackOff" and a["labels"].get("pod", "").startswith(svc)
            ),
            None,
        )
        assert env.sim.now < scheduled.planned_end_s, "no ImagePullBackOff alert during the fault"
    pods = env.call_tool({"tool": "get_k8s_state", "resource": "pods", "service": svc}).data["items"]
    assert any(p["status"] == "ImagePullBackOff" for p in pods)
    deployment = env.call_tool({"tool": "get_k8s_state", "resource": "deployments", "service": svc}).data[
        "items"
    ][0]
    # the spec shows the new image; the rollout history only that the spec changed (no change-cause of
    # its own, as `kubectl set image` without --record)
    history = deployment["history"]
    assert deployment["image"] == fault.params["image"]
    assert history[-1]["cause"] == history[-2]["cause"] and "image" not in history[-1]["cause"]
    inc = env.call_tool(
        {"tool": "open_incident", "alert_ids": [alert["id"]], "title": f"{svc} rollout stuck"}
    ).data
    res = env.call_tool(
        {
            "tool": "set_root_cause",
            "incident_id": inc["id"],
            "services": [svc],
            "artifact": f"deployment/{svc}:image",
        }
    )
    assert res.ok
    assert env.call_tool({"tool": "rollback", "incident_id": inc["id"], "service": svc}).ok
    earned = 0.0
    while env.sim.now < scheduled.planned_end_s + 240:
        earned += env.step(None)[1]
    pods = env.call_tool({"tool": "get_k8s_state", "resource": "pods", "service": svc}).data["items"]
    assert all(p["status"] == "Running" for p in pods)
    scores = {s.fault_id: s for s in fault_scores(env.record(), cat.scoring)}
    got = scores[fault.id]
    assert (got.correlated, got.localized, got.repaired) == (True, True, True)
    # the rewards pay the score's increments: one fully handled fault of N is worth 100/N points
    n = len(env.record().faults)
    assert earned >= 100.0 / n - 1e-9
    assert env.reward_fn.value == score_until(env.record(), cat.scoring, env.sim.now)
