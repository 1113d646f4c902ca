"""ORCA-bench evaluation (what `sre-marathon orca evaluate` runs): an ORCA agent over the tasks, and the
leaderboard columns.

Why beside the published numbers: the three columns (RCA Accuracy on medium and hard incidents,
hallucination over all incidents) are computed with ORCA-bench's own aggregation, so a simulator
agent's row reads against the frontier models' rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.table import format_table
from ..orca.data import load_leaderboard
from ..orca.episode import Episode
from ..orca.tasks import OrcaTask, orca_tasks
from ..orca.world_spec import PUBLISHED, WorldSpec
from ..scoring.orca import TaskScore, breakdown, metrics, published_metrics

if TYPE_CHECKING:
    from ..agents.orca_baselines import OrcaAgent


def run_orca_task(
    agent: OrcaAgent,
    task: OrcaTask,
    source_access: bool = True,
    days: int = 6,
    world: WorldSpec = PUBLISHED,
) -> TaskScore:
    """One ORCA episode: `agent` investigates `task` (`agents.orca_baselines.run_task`) and the judge
    scores its report (`Episode.score`, what `OrcaRcaEnv` calls on submit_report).

    Why not `episode_runner.run_scored_episode`: an ORCA episode has no Marathon record, score card
    or bundle, and its agents call tools directly (`investigate(view, call)`) instead of stepping
    an env; what the two share is the shape, one call per episode, and `Episode`, which the env
    uses too."""
    from ..agents.orca_baselines import run_task

    episode = Episode(task, source_access, days, world)
    return episode.score(run_task(agent, episode))


def evaluate(
    agent_name: str | OrcaAgent,
    tasks: Sequence[OrcaTask] | None = None,
    limit: int | None = None,
    source_access: bool = True,
    progress: bool = False,
    world: WorldSpec = PUBLISHED,
) -> list[TaskScore]:
    """`agent_name` (a baseline name for `make_orca_agent`, or an `OrcaAgent`) on every task of
    `tasks` (default: all 1,079 of `world`; `limit`: that many, spread over the list), one
    `run_orca_task` each. Priors (`area_prior`) are fit on the published world's tasks whatever
    `world` is: what a policy could have learnt before a fresh world was drawn."""
    from tqdm import tqdm

    from ..agents import make_orca_agent

    agent = make_orca_agent(agent_name) if isinstance(agent_name, str) else agent_name
    label = agent_name if isinstance(agent_name, str) else agent.name
    tasks = list(orca_tasks(6, world) if tasks is None else tasks)
    if limit is not None:
        tasks = _spread(tasks, limit)
    return [
        run_orca_task(agent, task, source_access, world=world)
        for task in tqdm(tasks, desc=f"ORCA {label}", unit="task", disable=not progress)
    ]


def _spread(tasks: list[OrcaTask], n: int) -> list[OrcaTask]:
    """`n` tasks spread evenly over the sorted list (every difficulty and scenario represented)."""
    if n >= len(tasks):
        return tasks
    step = len(tasks) / max(n, 1)
    return [tasks[int(i * step)] for i in range(n)]


def area_prior_scores(world: WorldSpec = PUBLISHED) -> list[TaskScore]:
    """The no-tool area prior (`agents.orca_baselines.AreaPriorAgent`) on all tasks of `world`: on the
    published world each answered by the fit on the half it is not in, on a fresh world by the fit on
    every published task; a benchmark-health row (no tool call, so seconds, not a simulation)."""
    return evaluate("area_prior", world=world)


def leaderboard_table(
    agent_name: str,
    scores: list[TaskScore],
    health: list[TaskScore] | None = None,
    world: WorldSpec = PUBLISHED,
) -> str:
    """The published columns beside the published rows, and this run's sound columns (and, given
    `health`, the no-tool area prior's sound row: a benchmark it beats measures no investigation).

    ORCA-bench's definitions (accuracy: every plausible flag named; hallucination: no plausible flag
    named) are won by a report that names every flag, so they are printed for comparison with the
    published rows only; the sound row adds "and no materially wrong claim" to both."""
    lb = load_leaderboard()
    pub, sound = published_metrics(scores), published_metrics(scores, sound=True)

    def row(label: str, m: dict) -> list[str]:
        return [
            label,
            str(m["rca_accuracy_incident_medium"]),
            str(m["rca_accuracy_incident_hard"]),
            str(m["hallucinate_any_incident"]),
        ]

    rows = [
        row(f"{agent_name} (this run; sound: no wrong claim)", sound),
        row(f"{agent_name} (this run; published definitions)", pub),
    ]
    if health is not None:  # benchmark health: what the complaint alone gives away (should stay below)
        rows.append(
            row(
                "area prior, no tools ("
                + ("held-out incidents" if world.published else "fit on the published tasks")
                + "; sound)",
                published_metrics(health, sound=True),
            )
        )
    for r in lb.rows:
        rows.append(
            [
                f"{r.model} ({r.effort}, published)",
                f"{r.rca_accuracy_medium:.2f} ± {r.rca_accuracy_medium_stderr:.2f}",
                f"{r.rca_accuracy_hard:.2f} ± {r.rca_accuracy_hard_stderr:.2f}",
                f"{r.hallucination_rate:.2f} ± {r.hallucination_rate_stderr:.2f}",
            ]
        )
    return format_table(["agent", "RCA Accuracy (Medium)", "RCA Accuracy (Hard)", "Hallucination Rate"], rows)


def detail_table(scores: list[TaskScore]) -> str:
    rows = []
    for by in ("difficulty", "ttd_min", "scenario_type"):
        for key, m in breakdown(scores, by).items():
            rows.append(_detail_row(by, key, m))
    rows.append(_detail_row("all", "", metrics(scores)))
    return format_table(
        [
            "by",
            "group",
            "incidents",
            "RCA accuracy %",
            "RCA depth %",
            "hallucination %",
            "accuracy % (published def.)",
            "hallucination % (published def.)",
            "controls",
            "control pass %",
        ],
        rows,
    )


def _detail_row(by: str, key: str, m: dict) -> list:
    return [
        by,
        key,
        m["rca_accuracy"].n,
        str(m["rca_accuracy"]),
        str(m["rca_depth"]),
        str(m["hallucination"]),
        str(m["rca_accuracy_published"]),
        str(m["hallucination_published"]),
        m["control_pass"].n,
        str(m["control_pass"]),
    ]


def distribution_table(tasks: Sequence[OrcaTask]) -> str:
    """Task counts by difficulty x time-to-detection (controls apart), plus scenario types."""
    labels = ["15 min", "1 h", "8 h", "24 h", "control"]
    cnt = Counter((t.difficulty, t.ttd_label) for t in tasks)
    rows = []
    for d in ("easy", "medium", "hard"):
        rows.append([d, *(cnt[(d, lab)] for lab in labels), sum(cnt[(d, lab)] for lab in labels)])
    rows.append(
        ["total", *(sum(cnt[(d, lab)] for d in ("easy", "medium", "hard")) for lab in labels), len(tasks)]
    )
    by_type = Counter(t.scenario_type for t in tasks)
    gt = [len(t.ground_truth) for t in tasks if not t.is_control]
    extra = format_table(["scenario type", "tasks"], [[k, by_type[k]] for k in sorted(by_type)])
    mean_gt = {
        d: sum(len(t.ground_truth) for t in tasks if t.difficulty == d and not t.is_control)
        / max(1, sum(1 for t in tasks if t.difficulty == d and not t.is_control))
        for d in ("easy", "medium", "hard")
    }
    tail = (
        f"incident tasks {len(gt)}, control tasks {len(tasks) - len(gt)}; "
        "mean ground-truth causes per incident task: " + ", ".join(f"{d} {v:.2f}" for d, v in mean_gt.items())
    )
    return format_table(["difficulty", *labels, "total"], rows) + "\n\n" + extra + "\n" + tail
