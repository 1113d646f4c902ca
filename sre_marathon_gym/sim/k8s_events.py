"""What Kubernetes' own components record as events, as `kubectl get events` shows them (v1.29).

Why a module of its own: the cluster model decides *when* something happens; this is the exact
reason and message the real component writes for it (deployment-controller, replicaset-controller,
default-scheduler, kubelet, node-controller, taint-eviction-controller). None of them names the
change behind a rollout, and nothing is recorded for ConfigMaps, NetworkPolicies, feature flags
or ingress weights, because a real cluster records nothing for those either: what changed shows
in the rollout history, the objects' specs, the deploy history and the applications' own logs.
"""

from __future__ import annotations

import hashlib
import uuid

# reason -> the component that records it
REASONS = {
    "ScalingReplicaSet": "deployment-controller",
    "SuccessfulCreate": "replicaset-controller",
    "SuccessfulDelete": "replicaset-controller",
    "Scheduled": "default-scheduler",
    "FailedScheduling": "default-scheduler",
    "Pulling": "kubelet",
    "Pulled": "kubelet",
    "Failed": "kubelet",
    "BackOff": "kubelet",
    "Created": "kubelet",
    "Started": "kubelet",
    "Killing": "kubelet",
    "Unhealthy": "kubelet",
    "NodeReady": "kubelet",
    "NodeNotSchedulable": "kubelet",
    "NodeSchedulable": "kubelet",
    "NodeNotReady": "node-controller",
    "TaintManagerEviction": "taint-eviction-controller",
}

UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
NODE_NOT_READY_POD = "Node is not ready"  # node-controller, on each pod it marks NotReady


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("/".join(map(str, parts)).encode()).digest()


def pod_uid(pod: str, seed: object = "") -> str:
    """The pod's `metadata.uid`: an RFC 4122 version-4 UUID, as the API server assigns, drawn from a
    keyed hash of the run's seed and the pod name (one per pod; metrics and events show the same)."""
    return str(uuid.UUID(bytes=_digest("uid", seed, pod)[:16], version=4))


def pod_ip(pod: str) -> str:
    d = _digest("ip", pod)
    return f"10.244.{d[0] % 8}.{2 + d[1] % 250}"


def go_duration(seconds: float) -> str:
    """A Go `time.Duration` truncated to milliseconds, as the kubelet prints it (1.5s, 850ms)."""
    ms = int(seconds * 1000)
    if ms < 1000:
        return f"{ms}ms"
    return f"{ms / 1000:.3f}".rstrip("0").rstrip(".") + "s"


def pull_seconds(pod: str) -> float:
    """How long pulling the image took for this pod (deterministic, within the container start-up)."""
    d = _digest("pull", pod)
    return 1.0 + int.from_bytes(d[:4], "big") % 5000 / 1000.0


def image_reference(image: str) -> str:
    """The fully qualified reference containerd resolves (`nginx:1` -> `docker.io/library/nginx:1`)."""
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return image
    return f"docker.io/{image}" if rest else f"docker.io/library/{image}"


# ------------------------------------------------------------ deployment and replicaset controllers
def scaled_up_new(rs: str, replicas: int) -> str:
    return f"Scaled up replica set {rs} to {replicas}"


def scaled(rs: str, replicas: int, old: int) -> str:
    return f"Scaled {'up' if replicas > old else 'down'} replica set {rs} to {replicas} from {old}"


def created_pod(pod: str) -> str:
    return f"Created pod: {pod}"


def deleted_pod(pod: str) -> str:
    return f"Deleted pod: {pod}"


# ------------------------------------------------------------ scheduler
def assigned(namespace: str, pod: str, node: str) -> str:
    return f"Successfully assigned {namespace}/{pod} to {node}"


def no_node_available(reasons: list[str], preemption: list[str]) -> str:
    """The scheduler's FitError: one filter reason per node, counted and sorted, then the
    preemption post-filter's (the doubled period is the scheduler's own)."""

    def histogram(items: list[str]) -> str:
        return ", ".join(sorted(f"{items.count(r)} {r}" for r in dict.fromkeys(items)))

    n = len(reasons)
    msg = f"0/{n} nodes are available: {histogram(reasons)}."
    return msg + f" preemption: 0/{n} nodes are available: {histogram(preemption)}.."


def filter_reason(same_zone: bool, ready: bool, unschedulable: bool) -> str:
    """The first failing filter plugin, in the default profile's order."""
    if unschedulable:
        return "node(s) were unschedulable"
    if not ready:
        return f"node(s) had untolerated taint {{{UNREACHABLE_TAINT}: }}"
    if not same_zone:
        return "node(s) didn't match Pod's node affinity/selector"
    return "Insufficient cpu"


def preemption_reason(reason: str) -> str:
    if reason == "Insufficient cpu":  # every pod has the same priority: nothing to preempt
        return "No preemption victims found for incoming pod"
    return "Preemption is not helpful for scheduling"


# ------------------------------------------------------------ kubelet
def pulling(image: str) -> str:
    return f'Pulling image "{image}"'


def pulled(image: str, seconds: float) -> str:
    d = go_duration(seconds)
    return f'Successfully pulled image "{image}" in {d} ({d} including waiting)'


def already_present(image: str) -> str:
    return f'Container image "{image}" already present on machine'


def pull_failed(image: str) -> str:
    ref = image_reference(image)
    return (
        f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack '
        f'image "{ref}": failed to resolve reference "{ref}": {ref}: not found'
    )


ERR_IMAGE_PULL = "Error: ErrImagePull"
ERR_IMAGE_PULL_BACKOFF = "Error: ImagePullBackOff"


def back_off_pulling(image: str) -> str:
    return f'Back-off pulling image "{image}"'


def created_container(container: str) -> str:
    return f"Created container {container}"


def started_container(container: str) -> str:
    return f"Started container {container}"


def stopping_container(container: str) -> str:
    return f"Stopping container {container}"


def back_off_restarting(container: str, pod: str, namespace: str, uid: str) -> str:
    return f"Back-off restarting failed container {container} in pod {pod}_{namespace}({uid})"


def readiness_failed(probe_type: str | None, port: int | None, pod: str, wrong_path: bool) -> str:
    """The prober's output for a failing readiness probe. A changed path is an HTTP GET the
    application does not serve; otherwise the application answers it is not ready."""
    if wrong_path:
        detail = "HTTP probe failed with statuscode: 404"
    elif probe_type == "grpc":
        detail = 'service unhealthy (responded with "NOT_SERVING")'
    elif probe_type == "tcp":
        detail = f"dial tcp {pod_ip(pod)}:{port}: connect: connection refused"
    else:
        detail = "HTTP probe failed with statuscode: 503"
    return f"Readiness probe failed: {detail}"


def node_status(node: str, status: str) -> str:
    """node-controller (NodeNotReady) and kubelet (NodeReady, NodeNotSchedulable, NodeSchedulable)."""
    return f"Node {node} status is now: {status}"


# ------------------------------------------------------------ taint eviction
def marking_for_deletion(namespace: str, pod: str) -> str:
    return f"Marking for deletion Pod {namespace}/{pod}"
