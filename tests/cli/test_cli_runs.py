"""The CLI end to end: run writes a bundle whose offline score equals the live one; score refuses
tampering."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sre_marathon_gym.cli.commands import main

SHORT = [
    "--mode",
    "train",
    "--seed",
    "3",
    "--intensity",
    "0.5",
    "--injection-minutes",
    "8",
    "--observation-minutes",
    "4",
]


def live_score(out: str) -> str:
    first = out.strip().splitlines()[0]
    assert re.fullmatch(r"Marathon-Score: \d+\.\d", first), first
    return first


@pytest.mark.parametrize("agent", ["noop", "random", "runbook", "oracle"])
def test_run_then_score_offline_gives_the_same_card(tmp_path, capsys, agent):
    assert main(["run", "--app", "online_boutique", "--agent", agent, *SHORT, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    first = live_score(out)
    context = re.search(
        r"^same seed: noop (\d+\.\d), runbook (\d+\.\d), oracle (\d+\.\d) \(upper bound\)$",
        out,
        re.M,
    )
    assert context, out  # train mode: no leaderboard figure beside it (another protocol)
    noop, runbook, oracle = (float(x) for x in context.groups())
    assert noop == 0.0 and runbook <= oracle
    baselines = {"noop": noop, "runbook": runbook, "oracle": oracle}
    if agent in baselines:  # a baseline's own score is the one the context shows
        assert f"{baselines[agent]:.1f}" == first.split()[-1]
    bundle = next(tmp_path.glob("*.bundle"))
    assert re.search(r"^report: (.+)$", out, re.M).group(1) == str(bundle.with_suffix(".html"))
    assert bundle.with_suffix(".html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert main(["score", str(bundle), "--png", str(tmp_path / "fig.png")]) == 0
    scored = capsys.readouterr().out
    assert f"{bundle}: verified" in scored and first in scored
    assert (tmp_path / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_run_without_report_and_context(tmp_path, capsys):
    argv = ["run", "--app", "online_boutique", "--agent", "noop", *SHORT, "--out", str(tmp_path)]
    assert main([*argv, "--no-report", "--no-context"]) == 0
    out = capsys.readouterr().out
    assert "same seed:" not in out and "report:" not in out
    assert not list(tmp_path.glob("*.html")) and len(list(tmp_path.glob("*.bundle"))) == 1


def test_score_refuses_a_flipped_byte(tmp_path, capsys):
    assert (
        main(["run", "--app", "online_boutique", "--agent", "runbook", *SHORT, "--out", str(tmp_path)]) == 0
    )
    bundle = next(tmp_path.glob("*.bundle"))
    data = bytearray(bundle.read_bytes())
    data[len(data) // 2] ^= 0x01
    bundle.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["score", str(bundle)]) != 0
    assert "error:" in capsys.readouterr().err


def test_bad_input_gives_a_clear_error_not_a_traceback(capsys):
    assert main(["run", "--app", "online_boutique", "--agent", "runbok"]) != 0
    assert "did you mean 'runbook'" in capsys.readouterr().err
    assert main(["run", "--app", "online_boutique", "--mode", "eval", "--seed", "5"]) != 0
    assert "leaderboard seed" in capsys.readouterr().err


@pytest.mark.slow
def test_evaluate_prints_the_leaderboard_table_and_ray_prints_the_same(tmp_path, capsys, monkeypatch):
    """Runs in this process (`--workers 1`) and `--ray` (a local Ray) run the same grid: the same
    table, the same scores in the same bundles."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    grid = ["evaluate", "--agents", "noop,runbook", "--apps", "online_boutique"]
    assert main([*grid, "--workers", "1", "--out", str(tmp_path / "pool")]) == 0
    pool = capsys.readouterr().out
    assert "Leaderboard" in pool and "Marathon-Score" in pool and "runbook" in pool and "41.3" in pool
    assert "Per-fault outcomes" in pool and (tmp_path / "pool" / "outcomes.png").exists()
    assert main([*grid, "--ray", "--out", str(tmp_path / "ray"), "--report"]) == 0
    ray, reports = capsys.readouterr().out.split("\nreport: ", 1)  # --report names each run's page last
    assert ray.replace(str(tmp_path / "ray"), "OUT") == pool.replace(str(tmp_path / "pool"), "OUT").rstrip(
        "\n"
    )
    assert sorted(Path(r).name for r in reports.strip().split("\nreport: ")) == sorted(
        p.with_suffix(".html").name for p in (tmp_path / "ray").glob("*.bundle")
    )
    bundles = sorted(p.name for p in (tmp_path / "pool").glob("*.bundle"))
    assert len(bundles) == 2 and bundles == sorted(p.name for p in (tmp_path / "ray").glob("*.bundle"))
    scored = {}
    for run in ("pool", "ray"):
        assert main(["score", *[str(tmp_path / run / b) for b in bundles]]) == 0
        scored[run] = capsys.readouterr().out.replace(str(tmp_path / run), "OUT")
    assert scored["ray"] == scored["pool"] and scored["pool"].count("Marathon-Score:") == 2


def test_evaluate_ray_refuses_checkpoint_and_workers(capsys):
    assert main(["evaluate", "--ray", "--workers", "2"]) != 0
    assert "--ray" in capsys.readouterr().err


@pytest.mark.slow
def test_every_baseline_on_every_app_rescores_offline_exactly(tmp_path, catalog, oracle_floor):
    """The leaderboard protocol for all baselines and apps: each bundle's offline score card equals the
    live one; no-op scores nothing and degrades nothing relative to its own no-action run;
    oracle >= its floor > runbook > no-op."""
    from sre_marathon_gym.evaluation.leaderboard import evaluate
    from sre_marathon_gym.recording.rescoring import score_bundles

    results = evaluate(
        ["noop", "random", "runbook", "oracle"], out=str(tmp_path), catalog=catalog, progress=False
    )
    assert len(results) == 12
    offline = score_bundles([p for _, _, p in results], catalog)
    for (spec, live, _), card in zip(results, offline):
        assert card == live, (spec.app, spec.agent)
    by = {(s.app, s.agent): c for s, c, _ in results}
    for app in ("online_boutique", "astronomy_shop", "train_ticket"):
        noop, runbook, oracle = by[app, "noop"], by[app, "runbook"], by[app, "oracle"]
        assert noop.correlated == 0 and noop.degradation == 0
        assert oracle.marathon_score >= oracle_floor > runbook.marathon_score > noop.marathon_score


def test_score_prints_the_rules_version_and_rescores_under_v1(capsys):
    """`score` says which rule set scored each bundle: the sealed one by default (v1 for a bundle
    sealed before rule sets were versioned), or the one `--rules` asks for."""
    old = Path(__file__).parents[1] / "data" / "online_boutique-runbook-3-v1.bundle"
    assert main(["score", str(old)]) == 0
    out = capsys.readouterr().out
    assert "scored under rules v1 (sealed in the bundle)" in out
    assert main(["score", str(old), "--rules", "v2"]) == 0
    out = capsys.readouterr().out
    assert "scored under rules v2 (--rules)" in out and "false root-cause claims" in out
    assert main(["score", str(old), "--rules", "v3"]) == 0
    assert "scored under rules v3 (--rules)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["score", str(old), "--rules", "v4"])
