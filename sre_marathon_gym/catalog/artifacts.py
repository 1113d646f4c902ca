"""Parse artifact ids (see `sre_marathon_gym.catalog.apps`) into what they point at."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArtifactRef:
    kind: str  # source | env | configmap | deployment | workload | node | zone | networkpolicy
    service: str | None
    key: str  # path, env key, configmap key, deployment field, node/zone/policy name
    revision: str | None = None
    configmap: str | None = None


def parse_artifact(artifact: str) -> ArtifactRef:
    head, _, rest = artifact.partition(":")
    if head.startswith("deployment/"):
        service = head.removeprefix("deployment/")
        return ArtifactRef("deployment", service, rest) if rest else ArtifactRef("workload", service, "")
    for prefix in ("node/", "zone/", "networkpolicy/"):
        if head.startswith(prefix) and not rest:
            return ArtifactRef(prefix[:-1], None, head.removeprefix(prefix))
    if not rest:
        raise ValueError(f"not an artifact id: {artifact!r}")
    if rest.startswith("env/"):
        return ArtifactRef("env", head, rest.removeprefix("env/"))
    if rest.startswith("configmap/"):
        cm, _, key = rest.removeprefix("configmap/").partition("/")
        return ArtifactRef("configmap", head, key, configmap=cm)
    path, _, rev = rest.partition("@")
    return ArtifactRef("source", head, path, revision=rev or None)
