"""The snapshot of what the cluster and effects show: the `Context` many log samples share.

Apart from the recorder (`log_context`) because it changes at another pace: a `Context` holds the
per-service facts that change only when the cluster or the effects change (running and ready pods,
own failure sources, static symptom bits, addresses that do not resolve, blocked routes, missing
env keys, failing readiness paths, flags on), so many 15 s samples share one. `snapshot` builds it,
memoised per pod and per spec on the recorder. The symptom vocabulary (`B_*`, `E_*`, `Context`)
is `log_symptoms`'s, re-exported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .causes import BAD_VALUE, BLOCKED, DEP_UNAVAIL, DNS, FLAG, OWN_APP
from .effects import FLAG_BEHAVIOUR, resolve_variant
from .log_symptoms import (
    B_APP_ERROR,
    B_BAD_VALUE,
    B_CACHE_OFF,
    B_CONSUMER_SLOW,
    B_CPU_HOG,
    B_CRASH,
    B_DEP_UNAVAIL,
    B_FLAG_ERROR,
    B_MEM_LEAK,
    B_MISSING_ENV,
    B_NOT_READY,
    B_RETRY_STORM,
    Context,
)
from .log_text import FLAG_ADDRESS

if TYPE_CHECKING:
    from .log_state import LogState
    from .sim_state import SimState


def snapshot(rec: LogState, sim: SimState) -> Context:
    """The current context: the last one while the cluster and effects are unchanged, else a new one
    appended to `rec.contexts`."""
    cl, eff = sim.cluster, sim.effects
    key = (eff.version, cl.version, len(cl.network_policies))
    if key == rec._ctx_key and rec.contexts:
        return rec.contexts[-1]
    rec._ctx_key = key
    c = rec.compiled
    S = rec.S
    ready: list[list[str]] = [[] for _ in range(S)]
    live: list[list[str]] = [[] for _ in range(S)]
    notready: list[list[str]] = [[] for _ in range(S)]
    mechs: list[dict[str, tuple[float, str]]] = [{} for _ in range(S)]
    mem_pods: list[tuple[str, int]] = []
    started_s: dict[str, float] = {}
    route_kind = np.zeros(rec.E, dtype=np.int64)
    route_host: dict[int, str] = {}
    missing_env: dict[int, str] = {}
    readiness: dict[int, str] = {}
    bits = [0] * S  # Python ints while or-ing bits in one by one
    flags_on = set()
    values = cl.configmaps.get("flagd-config", {})
    for f in rec.app.feature_flags:
        v = values.get(f.name, f.default)
        if v != f.default and v in f.variants:
            flags_on.add(f.name)
    # across rebuilds: a spec's behaviours are a function of the service's registered behaviours
    # and the spec fields they read; its readiness, of the readiness path and the flag values
    flag_state = tuple(values.items())
    if rec._spec_memo_key != flag_state:
        rec._spec_memo_key = flag_state
        rec._readiness_memo.clear()
        rec._pod_memo.clear()  # a pod's part depends on the flag values too
    behaviours_memo, readiness_memo = rec._behaviours_memo, rec._readiness_memo
    pod_memo = rec._pod_memo
    pods, nodes, generation = cl.pods, cl.nodes, eff.generation
    for name in sorted(pods):
        pod = pods[name]
        node = nodes.get(pod.node or "")
        # a pod's part below depends on its fields (its last write; injections are edited in
        # place), its node's readiness, the behaviours of its service and the flag values (see above)
        pkey = (
            pod.__dict__.get("_stamp"),
            tuple(pod.injections),
            None if node is None else node.ready,
            generation(pod.service),
        )
        entry = pod_memo.get(name)
        if entry is None or entry[0] != pkey:
            part = _pod_part(rec, cl, pod, node, eff, readiness_memo, behaviours_memo)
            entry = pod_memo[name] = (pkey, *part)
        _, si, running, terminating, bad_path, found, has_mem = entry
        started_s[name] = float(max(pod.created_s, pod.container_started_s))
        if running:
            live[si].append(name)
            (ready if pod.ready else notready)[si].append(name)
        if terminating:
            continue
        if bad_path is not None:
            readiness[si] = bad_path
            if running and not pod.ready:
                bits[si] |= B_NOT_READY
        for mech, params, detail in found:
            _note(rec, mech, params, detail, si, mechs, bits, route_kind, route_host, missing_env, pod)
        if has_mem:
            mem_pods.append((name, si))
    if len(pod_memo) > 2 * len(cl.pods) + 64:  # forget pods that are gone
        for name in [n for n in pod_memo if n not in cl.pods]:
            del pod_memo[name]
    for flag in sorted(flags_on):
        for svc_name, mech, params in FLAG_BEHAVIOUR.get(flag, []):
            si = c.index.get(svc_name)
            if si is None:
                continue
            f = next(x for x in rec.app.feature_flags if x.name == flag)
            params = resolve_variant(params, f.variants[values.get(flag, f.default)])
            if mech == "code_error":
                mechs[si][f"flag:{flag}"] = (float(params["error_ratio"]), flag)
                bits[si] |= B_FLAG_ERROR
            elif mech == "config_wrong_address":
                e = c.edge_index.get((svc_name, str(params["downstream"])))
                if e is not None:
                    route_kind[e] = DNS
                    port = rec.addresses[e].rpartition(":")[2]
                    route_host[e] = f"{FLAG_ADDRESS.get(flag, 'badAddress')}:{port}"
            elif mech == "code_memory_leak":
                bits[si] |= B_MEM_LEAK
                for name in live[si]:
                    mem_pods.append((name, si))
            elif mech == "cpu_stress":
                bits[si] |= B_CPU_HOG
            elif mech == "consumer_delay":
                bits[si] |= B_CONSUMER_SLOW
            elif mech == "code_retry_storm":
                bits[si] |= B_RETRY_STORM
    for pol in cl.network_policies.values():
        e = c.edge_index.get((pol.source, pol.target))
        if e is not None:
            route_kind[e] = BLOCKED
    own_sources = [()] * S
    for si in range(S):
        if not mechs[si]:
            continue
        srcs = []
        for mech, (w, detail) in sorted(mechs[si].items()):
            if mech.startswith("flag:"):
                srcs.append((FLAG, w, detail))
            elif mech == "code_error":
                srcs.append((OWN_APP, w, ""))
            elif mech == "config_bad_value":
                srcs.append((BAD_VALUE, w, detail))
            elif mech == "dependency_unavailable":
                srcs.append((DEP_UNAVAIL, w, ""))
        own_sources[si] = tuple(srcs)
    ctx = Context(
        ready_pods=tuple(map(tuple, ready)),
        live_pods=tuple(map(tuple, live)),
        notready_pods=tuple(map(tuple, notready)),
        own_sources=tuple(own_sources),
        bits=np.array(bits, dtype=np.uint32),
        route_kind=route_kind,
        route_host=route_host,
        missing_env=missing_env,
        readiness_path=readiness,
        flags_on=frozenset(flags_on),
        mem_pods=tuple(mem_pods),
        started_s=started_s,
    )
    rec.contexts.append(ctx)
    return ctx


def _pod_part(rec: LogState, cl, pod, node, eff, readiness_memo: dict, behaviours_memo: dict) -> tuple:
    """(service index, running, terminating, readiness path if its probe fails, behaviours found,
    memory grows)."""
    si = rec.compiled.index[pod.service]
    running = (
        pod.started and pod.waiting_reason is None and not pod.terminating and node is not None and node.ready
    )
    if pod.terminating:
        return si, running, True, None, (), False
    spec = cl.spec_of(pod)
    rkey = (pod.service, spec.readiness_path)
    ok = readiness_memo.get(rkey)
    if ok is None:
        ok = readiness_memo[rkey] = _readiness_ok(rec, pod.service, spec, eff)
    bad_path = None if ok else (spec.readiness_path or "/healthz")
    skey = (pod.service, pod.revision)
    fields = (spec.code, spec.env, spec.image, eff.generation(pod.service))
    hit = behaviours_memo.get(skey)
    if hit is None or hit[0] != fields:
        hit = behaviours_memo[skey] = (fields, _behaviours(pod.service, spec, eff))
    found = tuple(hit[1]) + tuple((i["mechanism"], i["params"], "") for i in pod.injections.values())
    has_mem = any(m in ("code_memory_leak", "memory_stress") for m, _, _ in found)
    return si, running, False, bad_path, found, has_mem


def _readiness_ok(rec: LogState, service: str, spec, eff) -> bool:
    try:
        return bool(eff.readiness_ok(service, spec))
    except Exception:  # the effects layer is being edited concurrently; readiness is a nice-to-have
        return spec.readiness_path == rec.readiness_default.get(service)


def _behaviours(service: str, spec, eff) -> list[tuple[str, dict, str]]:
    """(mechanism, params, detail) attached to the artifacts a pod's spec runs; detail = the env value."""
    out = []
    code = dict(spec.code)
    env = dict(spec.env)
    for (svc, kind, key, state), bs in eff.behaviours.items():
        if svc != service:
            continue
        if kind == "code" and code.get(key) == state or kind == "image" and spec.image == state:
            out += [(b.mechanism, b.params, "") for b in bs]
        elif kind == "env" and env.get(key) == state:
            out += [(b.mechanism, b.params, state or "") for b in bs]
        elif kind == "env" and state is None and key not in env:
            out += [(b.mechanism, {**b.params, "_key": key}, "") for b in bs]
    return out


def _note(
    rec: LogState,
    mech: str,
    params: dict,
    detail: str,
    si: int,
    mechs,
    bits,
    route_kind,
    route_host,
    missing_env,
    pod,
) -> None:
    """Fold one behaviour a pod runs into the context being built (bits, own failure sources, routes)."""
    c = rec.compiled
    if mech in ("code_error", "config_bad_value", "dependency_unavailable"):
        w = float(params.get("error_ratio", 0.1))
        prev = mechs[si].get(mech)
        mechs[si][mech] = (max(w, prev[0]) if prev else w, detail if mech == "config_bad_value" else "")
        bits[si] |= {
            "code_error": B_APP_ERROR,
            "config_bad_value": B_BAD_VALUE,
            "dependency_unavailable": B_DEP_UNAVAIL,
        }[mech]
    elif mech in ("code_crash",):
        bits[si] |= B_CRASH
    elif mech == "config_missing_env":
        bits[si] |= B_MISSING_ENV
        missing_env[si] = str(params.get("_key") or params.get("key") or "SERVICE_ADDR")
    elif mech == "code_memory_leak":
        bits[si] |= B_MEM_LEAK
    elif mech in ("code_cpu_hog", "cpu_stress"):
        bits[si] |= B_CPU_HOG
    elif mech == "code_retry_storm":
        bits[si] |= B_RETRY_STORM
    elif mech == "config_cache_ttl":
        bits[si] |= B_CACHE_OFF
    elif mech == "consumer_delay":
        bits[si] |= B_CONSUMER_SLOW
    elif mech == "config_wrong_address":
        e = c.edge_index.get((pod.service, str(params.get("downstream"))))
        if e is not None:
            route_kind[e] = DNS
            port = rec.addresses[e].rpartition(":")[2]
            route_host[e] = detail or f"{params.get('downstream')}-unknown:{port}"


__all__ = ["snapshot"]
