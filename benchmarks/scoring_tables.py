"""Print the numbers of the README's scoring tables, so they can be re-pinned after a change.

Runs every baseline and the adversarial suite on the three leaderboard seeds (and, with
`--seeds N`, N further seeds per app, as `sre-marathon evaluate --seeds N` does), rescores each
sealed bundle under rules v1 and v2, and prints per policy: v1, v2, v3 (the default) and v3 before
clipping on the leaderboard seeds (Online Boutique / Astronomy Shop / Train Ticket), and the range
of v3 on the other seeds.

    python benchmarks/scoring_tables.py --seeds 5      # about 10 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import tempfile
from collections import defaultdict

from sre_marathon_gym.agents import ADVERSARIAL_AGENT_NAMES
from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.evaluation.leaderboard import APPS, evaluate
from sre_marathon_gym.recording.rescoring import score_bundle

BASELINES = ("noop", "random", "runbook", "oracle")


def _fmt(values: list[float]) -> str:
    return " / ".join(f"{v:.1f}" for v in values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5, help="extra seeds per app (default 5)")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    catalog = load_catalog()
    agents = [*ADVERSARIAL_AGENT_NAMES, *BASELINES]
    with tempfile.TemporaryDirectory() as out:
        results = evaluate(agents, extra_seeds=args.seeds, out=out, workers=args.workers, catalog=catalog)
        board: dict[str, dict[str, tuple[float, ...]]] = defaultdict(dict)
        others: dict[str, list[float]] = defaultdict(list)
        for spec, card, path in results:
            if spec.mode != "eval":
                others[spec.agent].append(card.marathon_score)
                continue
            assert path is not None, spec
            v1 = score_bundle(path, catalog, rules=1)[1].marathon_score
            v2 = score_bundle(path, catalog, rules=2)[1].marathon_score
            board[spec.agent][spec.app] = (v1, v2, card.marathon_score, card.marathon_score_unclipped)
    print("| policy | v1 | v2 | v3 | v3 before clipping | v3, other seeds (min-max) |")
    print("|---|---|---|---|---|---|")
    for agent in agents:
        rows = [board[agent][app] for app in APPS]
        rng = others.get(agent, [])
        span = f"{min(rng):.1f}-{max(rng):.1f}" if rng else "-"
        print(
            f"| {agent} | {_fmt([r[0] for r in rows])} | {_fmt([r[1] for r in rows])} "
            f"| {_fmt([r[2] for r in rows])} | {_fmt([r[3] for r in rows])} | {span} |"
        )


if __name__ == "__main__":
    main()
