"""Benchmark health: how far reading the change planes goes, with no metric, log or trace read.

An adversarial review (stop 27) found the strongest non-diagnosing SRE-Marathon policy so far: treat
every change as a fault, and claim it once an alert fires in its catalog scope. It reads the
deploy history (commit messages and diffs of the build pipeline), the Deployments' rollout history
(a new revision that is neither a pipeline change nor the agent's own repeats the previous
change-cause: a direct `kubectl set`), cordoned nodes and NetworkPolicies, plus the public catalog
(which fault rows name an artifact, their scope and remedies). Benign pipeline changes are skipped
by their message (the catalog's fixed harmless templates).

Why it works: only faults change manifests, nodes and NetworkPolicies, benign commits are few
(8-15 an hour against about 24 faulty changes) and recognisable by message or diff, and "a change,
then an alert in its scope" rarely happens by chance. Measured on the leaderboard seeds
(Online Boutique / Astronomy Shop / Train Ticket): 42.4 / 36.2 / 49.3 while rollout causes named the
injected change (`kubectl set resources --limits=cpu=5m`), 38.1 / 33.3 / 44.8 once they no longer do;
runbook 0.2 / 7.0 / 12.6, paper's best 41.3; 36.0 / 31.8 / 42.8 under rules v3 on the curated
stream (env ids up to -v2). On the production change stream (-v3, `sre_marathon_gym.schedule.change_stream`:
harmless twins of every faulty change on every plane, at a 15% change failure rate) the same logic
scores 0.0 on all three apps (about 200 false claims a run; leaderboard seed + 5 seeds per app),
below the Runbook (4.6 / 2.5 / 6.2). Kept as a benchmark-health row: `--changes curated` reruns
the old stream.

Run: python benchmarks/change_reader.py [--kinds deploy,kubectl,node,netpol] [--no-act]
     [--changes production|curated]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

from sre_marathon_gym.agents.base import zero_usage
from sre_marathon_gym.agents.oracle import remedy_call
from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.catalog.apps import label_place
from sre_marathon_gym.evaluation.episode_runner import make_marathon_env, run_scored_episode

APPS = ("online_boutique", "astronomy_shop", "train_ticket")
MANIFEST = ("bad_image_tag", "cpu_limit_cut", "memory_limit_cut", "bad_readiness_probe")
# the harmless templates of `benign_edits` (what a reader of a few runs' histories learns)
BENIGN = re.compile(
    r"^(explain why .* is kept small|clarify the error handling in |note the units used in |"
    r"document the invariant relied on in |link the runbook from |add a section comment in |"
    r"record the review of |bump |set log level to |set \S+ to (true|false|True|False)$|relax \S+ to |"
    r"raise \S+ to )"
)


class ChangeReader:
    """Every non-benign change is a fault: claim it when an alert in its scope fires, apply its remedy."""

    name = "change_reader"

    def __init__(self, kinds=("deploy", "kubectl", "node", "netpol"), act=True) -> None:
        self.kinds, self.act, self.usage = set(kinds), act, zero_usage()

    def reset(self, env, seed) -> None:
        self.usage = zero_usage()
        self.incident: dict[str, str] = {}  # change key -> incident id
        self.row: dict[str, object] = {}  # change key -> the catalog row claimed
        self.acted: set[str] = set()
        self.mine: list[tuple[float, str]] = []  # (time, service) of own interventions
        self.first_seen: dict[str, float] = {}
        self.base_image: dict[str, str] = {}

    def _rows(self, u, pred) -> list:
        return [f for f in u.catalog.faults[u.app.app] if pred(f)]

    def _deploy(self, u, call) -> list[tuple]:
        out = []
        h = call({"tool": "get_deploy_history", "limit": 500})
        for c in h.data["changes"] if h.ok else []:
            msg = c["message"]
            if msg.startswith('Revert "') or c.get("author") != "ci":
                continue
            if BENIGN.match(msg.split(": ", 1)[1] if ": " in msg else msg):
                continue
            diff, svc = c.get("diff") or "", c["service"]
            m = re.search(r"^--- a/(\S+)", diff, re.M)
            m2 = re.search(r"name: (\w+)", diff) or re.search(r"^[-+]\s+(\w+):", diff, re.M)
            tok = (
                m.group(1)
                if c["kind"] == "code" and m
                else m2.group(1)
                if c["kind"] == "config" and m2
                else None
            )
            if tok is None:
                continue
            rows = self._rows(
                u, lambda f, s=svc, k=tok: any(n.startswith(s) and k in n for n in (f.artifact, *f.aliases))
            )
            if not rows:
                continue
            names = Counter(
                n
                for f in rows
                for n in (f.artifact, *f.aliases)
                if n.startswith(svc + ":") and tok in n and "@" not in n
            )
            name = min(names, key=lambda n: (-names[n], len(n))) if names else rows[0].artifact
            out.append((c["id"], c["submitted_s"], rows, name, c))
        return out

    def _kubectl(self, u, call) -> list[tuple]:
        out = []
        d = call({"tool": "get_k8s_state", "resource": "deployments"})
        for dep in d.data["items"] if d.ok else []:
            s, hist = dep["name"], dep["history"]
            base = self.base_image.setdefault(s, dep["image"])
            for prev, cur in zip(hist, hist[1:]):
                if cur["cause"] != prev["cause"] or any(
                    abs(cur["time_s"] - t) < 60 and s == sv for t, sv in self.mine
                ):
                    continue
                rows = self._rows(u, lambda f, s=s: f.target == s and f.mechanism in MANIFEST)
                image = [f for f in rows if f.mechanism == "bad_image_tag"]
                rows = (
                    (image or rows) if dep["image"] != base else ([f for f in rows if f not in image] or rows)
                )
                if rows:
                    art = Counter(f.artifact for f in rows).most_common(1)[0][0]
                    out.append(
                        (
                            f"k:{s}:{cur['time_s']}",
                            cur["time_s"] - 5,
                            [f for f in rows if f.artifact == art],
                            art,
                            {},
                        )
                    )
        return out

    def _objects(self, u, call, now, resource, present, prefix) -> list[tuple]:
        out = []
        r = call({"tool": "get_k8s_state", "resource": resource})
        for item in r.data["items"] if r.ok else []:
            if not present(item):
                self.first_seen.pop(item["name"], None)
                continue
            since = self.first_seen.setdefault(item["name"], now - 120)
            name = f"{prefix}/{item['name']}"
            rows = self._rows(u, lambda f, n=name: f.artifact == n)
            if rows:
                out.append((f"{prefix}:{item['name']}:{since}", since, rows, name, {}))
        return out

    def candidates(self, u, call, now) -> list[tuple]:
        out = []
        if "deploy" in self.kinds:
            out += self._deploy(u, call)
        if "kubectl" in self.kinds:
            out += self._kubectl(u, call)
        if "node" in self.kinds:
            out += self._objects(
                u, call, now, "nodes", lambda n: not (n["schedulable"] and n["status"] == "Ready"), "node"
            )
        if "netpol" in self.kinds:
            out += self._objects(u, call, now, "networkpolicies", lambda p: True, "networkpolicy")
        return out

    def invoke(self, env, obs, info) -> None:
        u = env.unwrapped
        call = u.call_tool
        r = call({"tool": "get_alerts", "state": "all", "limit": 2000})
        if not r.ok:
            return
        now, alerts = float(r.data["now"]), r.data["alerts"]
        where = {}
        for a in alerts:
            place = label_place(a["labels"])
            where[a["id"]] = u.app.label_services(a["labels"]) | (
                {place[1], f"{place[0]}/{place[1]}"} if place else set()
            )
        for key, start, rows, name, change in self.candidates(u, call, now):
            if key not in self.incident:
                best = None
                for f in rows:  # the row whose scope has the most alerts since the change
                    touched = set(f.scope) | {f.target}
                    ids = [a["id"] for a in alerts if a["fired_at"] >= start and where[a["id"]] & touched]
                    if ids and (best is None or len(ids) > len(best[1])):
                        best = (f, ids)
                if best is None:
                    continue
                f, ids = best
                opened = call({"tool": "open_incident", "alert_ids": ids, "title": name})
                if not opened.ok:
                    continue
                self.incident[key], self.row[key] = opened.data["id"], f
                call(
                    {
                        "tool": "set_root_cause",
                        "incident_id": opened.data["id"],
                        "services": [f.target],
                        "artifact": name,
                        "summary": "changed",
                    }
                )
            if not self.act or key in self.acted or change.get("status", "deployed") != "deployed":
                continue
            self.acted.add(key)
            self._remedy(call, now, key, start)

    def _remedy(self, call, now, key, start) -> None:
        inc, f = self.incident[key], self.row[key]
        for rem in f.remedies:
            try:
                c = remedy_call(rem, inc)
            except ValueError:
                continue
            if c["tool"] == "rollback":  # to the revision before the change
                d = call({"tool": "get_k8s_state", "resource": "deployments", "service": c["service"]})
                hist = d.data["items"][0]["history"] if d.ok and d.data["items"] else []
                before = [h["revision"] for h in hist if h["time_s"] < start - 1]
                if before and before[-1] != hist[-1]["revision"]:
                    c["revision"] = max(before)
            if call(c).ok:
                self.mine.append((now, c.get("service", "")))
                return


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default="deploy,kubectl,node,netpol")
    ap.add_argument("--no-act", action="store_true", help="claims only, no remedy")
    ap.add_argument("--changes", default="production", choices=("production", "curated"))
    args = ap.parse_args()
    cat = load_catalog()
    print(f"{'app':<16} Marathon-Score  correlated  localized  repaired  false claims")
    for app in APPS:
        agent = ChangeReader(args.kinds.split(","), act=not args.no_act)
        card = run_scored_episode(
            lambda app=app: make_marathon_env(app, "eval", cat, changes=args.changes), agent
        ).card
        print(
            f"{app:<16} {card.marathon_score:14.1f}  {card.correlated:10.2f}  {card.localized:9.2f}  "
            f"{card.repaired:8.2f}  {card.false_claims:12d}"
        )


if __name__ == "__main__":
    main()
