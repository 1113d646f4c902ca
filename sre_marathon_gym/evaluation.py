"""The leaderboard protocol: run agents on each app's leaderboard seed, score, and tabulate.

Runs are independent, so apps, agents and seeds go to worker processes; every run writes its
sealed bundle, and the table is computed from the bundles' records exactly as `score` would.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .catalog import APPS, Catalog, load_catalog
from .scoring import ScoreCard, score_run
from .table import format_table

COLUMNS = (
    "Marathon-Score",
    "correlated",
    "localized",
    "repaired",
    "incident precision",
    "guess penalty",
    "intervention risk",
    "degradation",
    "MTTD s",
    "MTTL s",
    "MTTR s",
    "calls",
    "tokens",
    "cost $",
)
EXTRA_SEED_BASE = 10_000  # extra seeds for --seeds N: 10000, 10001, ... (disjoint from leaderboard seeds)


@dataclass(frozen=True)
class RunSpec:
    app: str
    agent: str
    seed: int
    mode: str  # eval: the leaderboard seed; train: the same protocol on another seed
    out: str | None
    catalog: str | None = None
    agent_options: dict[str, Any] = field(default_factory=dict)  # LLM agents: model, base_url, price...


def run_one(
    spec: RunSpec, progress: Callable[[], None] | None = None
) -> tuple[RunSpec, ScoreCard, str | None]:
    """One episode: make the env and agent, run, score, write the bundle."""
    import gymnasium as gym

    from .agents import make_agent
    from .agents.base import run_episode
    from .bundle import write_bundle

    catalog = load_catalog(spec.catalog)
    env = gym.make(ENV_BY_APP[spec.app], mode=spec.mode, catalog=catalog)
    agent = None
    try:
        agent = make_agent(spec.agent, **spec.agent_options)
        extra = getattr(agent, "bundle_extra", dict)
        name = f"{spec.app}-{spec.agent}-{spec.seed}"
        try:
            record = run_episode(
                env, agent, seed=spec.seed if spec.mode == "train" else None, progress=progress
            )
        except BaseException as exc:  # keep the recording of what happened so far, then fail loudly
            if spec.out:
                save_incomplete(env, agent, catalog, Path(spec.out) / f"{name}.incomplete.bundle", exc)
            raise
        card = score_run(record, catalog.scoring)
        path = None
        if spec.out:
            Path(spec.out).mkdir(parents=True, exist_ok=True)
            path = str(
                write_bundle(
                    Path(spec.out) / f"{name}.bundle",
                    record,
                    store=env.unwrapped.sim.store,
                    catalog=catalog,
                    extra=extra(),
                )
            )
        return spec, card, path
    finally:  # an LLM agent holds an HTTP client; the env may hold a backend: release both, always
        close_agent(agent)
        env.close()


def save_incomplete(env: Any, agent: Any, catalog: Catalog, path: Path, exc: BaseException) -> Path | None:
    """Write what a failed run recorded so far as a sealed `.incomplete.bundle`; never raises, so the
    original error is the one reported.

    The manifest seals the bundle as incomplete (the simulated time reached and the error), so
    renaming the file cannot pass it off as a full run; the error is also kept in the `incomplete`
    extra, where earlier versions put it."""
    from .bundle import Incomplete, write_bundle

    u = env.unwrapped
    if getattr(u, "sim", None) is None:
        return None
    try:
        incomplete = Incomplete.from_exception(reached_time(env), exc)
        partial = u.record()
        partial.usage = agent.usage.model_copy()
        path.parent.mkdir(parents=True, exist_ok=True)
        extra = getattr(agent, "bundle_extra", dict)()
        return write_bundle(
            path,
            partial,
            store=u.sim.store,
            catalog=catalog,
            extra={**extra, "incomplete": incomplete.reason},
            incomplete=incomplete,
        )
    except Exception:  # noqa: BLE001 - the original error is the one to report
        return None


def reached_time(env: Any) -> float | None:
    """Simulated seconds a run got to (None when the env has no simulator yet)."""
    sim = getattr(env.unwrapped, "sim", None)
    now = getattr(sim, "now", None)
    return float(now) if isinstance(now, (int, float)) else None


def preflight_agent(name: str, options: dict[str, Any]) -> None:
    """Build LLM agent `name` with `options` and check its endpoint with one tiny request."""
    from .agents import make_agent

    agent = make_agent(name, **options)
    try:
        agent.preflight()  # type: ignore[attr-defined]
    finally:
        close_agent(agent)


def close_agent(agent: Any) -> None:
    """Release what an agent holds (an LLM agent's HTTP client); agents without `close` hold nothing."""
    close = getattr(agent, "close", None)
    if callable(close):
        close()


ENV_BY_APP = {
    "online_boutique": "SREMarathon/OnlineBoutique-v1",
    "astronomy_shop": "SREMarathon/AstronomyShop-v1",
    "train_ticket": "SREMarathon/TrainTicket-v1",
}


def _run_quiet(spec: RunSpec) -> tuple[RunSpec, ScoreCard, str | None]:
    return run_one(spec)


def evaluate(
    agents: list[str],
    apps: list[str] | None = None,
    extra_seeds: int = 0,
    out: str | None = None,
    workers: int | None = None,
    catalog: Catalog | None = None,
    progress: bool = True,
    agent_options: dict[str, Any] | None = None,
    preflight: bool = True,
) -> list[tuple[RunSpec, ScoreCard, str | None]]:
    """Every agent on every app's leaderboard seed (and `extra_seeds` more seeds), in parallel.

    `agent_options` go to the LLM agents (react, rag, keep): model, base_url, api_key, price...
    With LLM agents and `preflight`, one tiny request first checks the key, model and URL
    (`LLMAgent.preflight`), so a wrong one fails before any run with a `ConfigurationError`.
    """
    from tqdm import tqdm

    from .agents import is_llm_agent

    catalog = catalog or load_catalog()
    llm = [a for a in agents if is_llm_agent(a)]
    if llm and preflight:  # every LLM agent shares the endpoint options: one check covers them all
        preflight_agent(llm[0], agent_options or {})
    apps = apps or list(APPS)
    specs = []
    for app in apps:
        for agent in agents:
            opts = dict(agent_options or {}) if is_llm_agent(agent) else {}
            specs.append(
                RunSpec(app, agent, catalog.leaderboard.seed_for(app), "eval", out, str(catalog.root), opts)
            )
            specs += [
                RunSpec(app, agent, EXTRA_SEED_BASE + k, "train", out, str(catalog.root), opts)
                for k in range(extra_seeds)
            ]
    workers = workers or min(len(specs), os.cpu_count() or 1)
    results = []
    with tqdm(total=len(specs), desc="leaderboard runs", unit="run", disable=not progress) as bar:
        if workers <= 1:
            for spec in specs:
                results.append(run_one(spec))
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = [pool.submit(_run_quiet, s) for s in specs]
                for fut in as_completed(futures):
                    results.append(fut.result())
                    bar.update()
    order = {(s.app, s.agent, s.seed): i for i, s in enumerate(specs)}
    return sorted(results, key=lambda r: order[(r[0].app, r[0].agent, r[0].seed)])


def _row(card: ScoreCard) -> list[float | None]:
    guesses = card.false_incident_penalty + card.false_claim_penalty + card.needless_action_penalty
    return [
        card.marathon_score,
        card.correlated,
        card.localized,
        card.repaired,
        card.incident_precision,
        guesses if card.rules_version >= 2 else None,
        card.intervention_risk,
        card.degradation,
        card.mttd_s,
        card.mttl_s,
        card.mttr_s,
        card.model_calls,
        card.input_tokens + card.output_tokens,
        card.cost_usd,
    ]


def _fmt(v: float | None, col: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if col in ("Marathon-Score", "guess penalty"):
        return f"{v:.1f}"
    if col in ("MTTD s", "MTTL s", "MTTR s", "calls", "tokens"):
        return f"{v:.0f}"
    if col == "cost $":
        return f"{v:.2f}"
    return f"{v:.3f}"


def leaderboard_table(results: list[tuple[RunSpec, ScoreCard, str | None]], catalog: Catalog) -> str:
    """The paper's Table 2 layout: per agent, the mean over apps on the leaderboard seeds; then per app.

    Rules v2 columns: incident precision (matched / opened) and the guess penalty (Marathon-Score
    points that false incidents, false claims and needless interventions cost)."""
    lb = [(s, c) for s, c, _ in results if s.mode == "eval"]
    agents = list(dict.fromkeys(s.agent for s, _ in lb))
    rows = []
    for agent in agents:
        cards = [c for s, c in lb if s.agent == agent]
        cols = list(zip(*(_row(c) for c in cards)))
        mean = [None if any(v is None for v in col) else sum(col) / len(col) for col in cols]
        rows.append([agent, "mean of apps", *(_fmt(v, k) for v, k in zip(mean, COLUMNS))])
        for s, c in lb:
            if s.agent == agent:
                rows.append(["", s.app, *(_fmt(v, k) for v, k in zip(_row(c), COLUMNS))])
    out = [format_table(["agent", "app", *COLUMNS], rows, title="Leaderboard (our runs, leaderboard seeds)")]
    extra = [(s, c) for s, c, _ in results if s.mode == "train"]
    if extra:
        srows = []
        for agent in agents:
            for app in dict.fromkeys(s.app for s, _ in extra):
                scores = [c.marathon_score for s, c in extra if s.agent == agent and s.app == app]
                if scores:
                    m, half = mean_ci95(scores)
                    srows.append([agent, app, len(scores), f"{m:.1f}", f"± {half:.1f}"])
        out.append(
            format_table(
                ["agent", "app", "seeds", "mean Marathon-Score", "95% interval"],
                srows,
                title="Extra seeds (same protocol, other schedules)",
            )
        )
    pub = [
        [n.method or "-", n.app or "-", n.key, f"{n.value:g} {n.unit}".strip(), n.source]
        for n in catalog.published.numbers
        if n.benchmark == "sre-marathon" and n.key in PUBLISHED_KEYS
    ]
    out.append(
        format_table(
            ["method", "app", "published", "value", "source"],
            pub,
            title="Published reference numbers (SRE-Marathon paper)",
        )
    )
    return "\n\n".join(out)


PUBLISHED_KEYS = {
    "best_marathon_score",
    "react_marathon_score_min",
    "react_marathon_score_max",
    "max_repair_while_active",
    "max_repair_kimi_any_time",
    "missed_share",
    "correlated_only_share",
}


def mean_ci95(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of a t-based 95% interval (0 for a single value)."""
    n = len(values)
    m = sum(values) / n
    if n < 2:
        return m, 0.0
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    t = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 7: 2.447, 8: 2.365, 9: 2.306, 10: 2.262}.get(
        n, 1.96
    )
    return m, t * sd / math.sqrt(n)


def outcome_table(labelled: list[tuple[str, ScoreCard]]) -> str:
    """Figure 9: each injected fault's first-matching outcome, as shares per run."""
    from .scoring import OUTCOMES

    rows = []
    for label, card in labelled:
        n = max(card.faults, 1)
        rows.append([label, card.faults, *(f"{card.outcomes.get(k, 0) / n:.0%}" for k in OUTCOMES)])
    return format_table(["run", "faults", *OUTCOMES], rows, title="Per-fault outcomes (Figure 9)")


def outcome_chart(labelled: list[tuple[str, ScoreCard]], path: str | Path) -> Path:
    """Figure 9 as a stacked horizontal bar chart (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .scoring import OUTCOMES

    colors = ("#1a9850", "#91cf60", "#d9ef8b", "#fee08b", "#fc8d59", "#d73027")
    fig, ax = plt.subplots(figsize=(9, 0.5 + 0.45 * len(labelled)))
    for i, (label, card) in enumerate(labelled):
        left = 0.0
        n = max(card.faults, 1)
        for k, color in zip(OUTCOMES, colors):
            share = card.outcomes.get(k, 0) / n
            ax.barh(i, share, left=left, color=color, label=k if i == 0 else None)
            left += share
    ax.set_yticks(range(len(labelled)), [lbl for lbl, _ in labelled])
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of injected faults")
    ax.invert_yaxis()
    ax.legend(
        ncol=3, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.25 if len(labelled) < 4 else -0.1)
    )
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120, metadata={"Software": None})
    plt.close(fig)
    return out
