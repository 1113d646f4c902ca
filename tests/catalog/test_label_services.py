"""`App.label_services`: the one pod-to-service mapping (alert attribution, scope, agents)."""

from __future__ import annotations

from sre_marathon_gym.alerting.engine import Alert
from sre_marathon_gym.catalog.apps import pod_owner
from sre_marathon_gym.evaluation.alert_noise import alert_services


def _alert(labels: dict[str, str], template: str = "x") -> Alert:
    return Alert(
        id="a0001",
        rule="r",
        template=template,
        severity="warning",
        labels=labels,
        annotations={},
        state="firing",
        pending_at=0.0,
        fired_at=0.0,
        value=1.0,
    )


def test_a_pod_of_a_dashed_service_maps_to_that_service_only(catalog):
    app = catalog.app("astronomy_shop")
    assert {"frontend", "frontend-proxy"} <= set(app.service_names)
    pod = "frontend-proxy-7d9c8b6f5-x2x9k"
    # a pod that is gone (not in the live pod list) is mapped by name: the longest service prefix
    assert app.label_services({"pod": pod}) == {"frontend-proxy"} == {pod_owner(pod, app.service_names)}
    # the live pod list wins when the pod is in it
    assert app.label_services({"pod": pod}, {pod: "frontend-proxy"}) == {"frontend-proxy"}
    assert app.label_services({"pod": "frontend-5f8b9-abcde"}) == {"frontend"}


def test_workload_labels_count_only_when_they_name_a_service(catalog):
    app = catalog.app("online_boutique")
    assert app.label_services({"service_name": "cartservice", "container": "server"}) == {"cartservice"}
    assert app.label_services({"deployment": "checkoutservice", "pod": "cartservice-1-2"}) == {
        "checkoutservice",
        "cartservice",
    }
    assert app.label_services({"node": "node-1"}) == set()
    assert app.label_services({"pod": "unknown-pod-1"}) == set()


def test_the_noise_report_and_the_scorer_agree_on_services(catalog):
    app = catalog.app("astronomy_shop")
    for labels in (
        {"pod": "frontend-proxy-7d9c8b6f5-x2x9k"},
        {"service_name": "checkout"},
        {"deployment": "cart", "pod": "cart-1-2"},
    ):
        assert alert_services(_alert(labels), app) == app.label_services(labels)
