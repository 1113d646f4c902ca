"""Tables and figures from score cards: the leaderboard (the paper's Table 2 layout, with the
published numbers beside), the LLM runs' accounting (read back from their bundles) and the
per-fault outcomes (Figure 9), as `evaluate` and `score` print them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import ConfigurationError
from ..core.table import format_table

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..scoring import ScoreCard
    from .run_spec import RunSpec

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


def llm_accounting_table(results: list, cat: Catalog) -> str:
    """Per LLM run: calls, failed calls, timed-out invocations, tokens and cost, and the model and
    price the run used, all read back from its bundle (what the cost column was computed with)."""
    from ..agents import is_llm_agent
    from ..recording.bundle import load_bundle

    rows, used = [], {}
    for spec, card, path in results:
        if not is_llm_agent(spec.agent):
            continue
        bundle = load_bundle(path) if path else None
        usage = bundle.record.usage if bundle else None
        agent = bundle.extra.get("agent", {}) if bundle else {}
        used[(agent.get("model"), price_note(agent) if bundle else "no bundle, price unknown")] = None
        rows.append(
            [
                spec.agent,
                spec.app,
                spec.seed,
                card.model_calls,
                usage.failed_model_calls if usage else "-",
                len(usage.timed_out_invocations) if usage else "-",
                card.input_tokens,
                card.output_tokens,
                f"{card.cost_usd:.2f}",
            ]
        )
    runs = "; ".join(f"model {model}; {note}" for model, note in used) or "no runs"
    title = f"LLM runs: {runs}; budget {cat.leaderboard.agent_budget_s} s per invocation"
    return format_table(
        [
            "agent",
            "app",
            "seed",
            "calls",
            "failed calls",
            "timeouts",
            "input tokens",
            "output tokens",
            "cost $",
        ],
        rows,
        title=title,
    )


def price_note(agent: dict) -> str:
    """How a bundle's run was priced, from its `agent` record."""
    price = agent.get("price_per_mtok")
    if not price:
        return (
            f"no price for model {agent.get('model')!r} in the pricing table: cost shows 0 "
            "(pass --price IN OUT)"
        )
    source = agent.get("price_source")
    return f"priced at ${price['input']:g} / ${price['output']:g} per million input / output tokens" + (
        f" ({source})" if source else ""
    )


def outcome_table(labelled: list[tuple[str, ScoreCard]]) -> str:
    """Figure 9: each injected fault's first-matching outcome, as shares per run."""
    from ..scoring import OUTCOMES

    rows = []
    for label, card in labelled:
        n = max(card.faults, 1)
        rows.append([label, card.faults, *(f"{card.outcomes.get(k, 0) / n:.0%}" for k in OUTCOMES)])
    return format_table(["run", "faults", *OUTCOMES], rows, title="Per-fault outcomes (Figure 9)")


OUTCOME_COLORS = {
    "handled": "#1a9850",
    "repaired_not_handled": "#91cf60",
    "acted_without_repair": "#d9ef8b",
    "located_without_action": "#fee08b",
    "correlated_only": "#fc8d59",
    "missed": "#d73027",
}
"""Figure 9's colours, one per outcome (`scoring.OUTCOMES`), in the chart and the run report."""


def outcome_figure(labelled: list[tuple[str, ScoreCard]]):
    """Figure 9 as a matplotlib figure: a stacked horizontal bar per run; the legend sits above the
    bars, clear of the x-axis label (below them it covered the label)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..scoring import OUTCOMES

    fig, ax = plt.subplots(figsize=(9, 1.4 + 0.45 * len(labelled)))
    for i, (label, card) in enumerate(labelled):
        left = 0.0
        n = max(card.faults, 1)
        for k in OUTCOMES:
            share = card.outcomes.get(k, 0) / n
            ax.barh(i, share, left=left, color=OUTCOME_COLORS[k], label=k if i == 0 else None)
            left += share
    ax.set_yticks(range(len(labelled)), [lbl for lbl, _ in labelled])
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of injected faults")
    ax.invert_yaxis()
    ax.legend(ncol=3, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.02), frameon=False)
    fig.tight_layout()
    return fig


def outcome_chart(labelled: list[tuple[str, ScoreCard]], path: str | Path) -> Path:
    """Figure 9 as a stacked horizontal bar chart (PNG)."""
    import matplotlib.pyplot as plt

    out = Path(path)
    if out.suffix.lower() != ".png":
        raise ConfigurationError(f"the outcome chart is a PNG: name a .png file, got {str(path)!r:.80}")
    fig = outcome_figure(labelled)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120, metadata={"Software": None}, bbox_inches="tight")
    plt.close(fig)
    return out


CONTEXT_AGENTS = ("noop", "runbook", "oracle")


def baseline_context(
    cat: Catalog, app: str, mode: str, seed: int, schedule: dict, own: tuple[str, float], bars: bool = True
) -> str:
    """One line that places a run's score: the baselines on the same seed and schedule (noop, the
    runbook, the oracle as the upper bound; a baseline that is the run's own agent is not run again)
    and the paper's best method. Costs a run of each baseline (a few seconds per app)."""
    from .episode_runner import make_marathon_env, run_scored_episode

    scores = {own[0]: own[1]}
    for agent in CONTEXT_AGENTS:
        if agent not in scores:
            ep = run_scored_episode(
                lambda: make_marathon_env(app, mode, cat, **(schedule if mode == "train" else {})),
                agent,
                seed=seed if mode == "train" else None,
                bar=f"context: {agent}" if bars else None,
            )
            scores[agent] = ep.card.marathon_score
    best = [n for n in cat.published.numbers if n.key == "best_marathon_score"]
    paper = (  # a leaderboard figure: a train-mode schedule is another protocol
        f"; the paper's best: {best[0].value:g} ({best[0].method}, {best[0].source})"
        if best and mode == "eval"
        else ""
    )
    return (
        f"same seed: noop {scores['noop']:.1f}, runbook {scores['runbook']:.1f}, "
        f"oracle {scores['oracle']:.1f} (upper bound){paper}"
    )
