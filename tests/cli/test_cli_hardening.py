"""The CLI's refusals: incomplete bundles, another catalog, unreadable files, bad --out, options that
eval mode would ignore, out-of-range seeds. Each is one line on stderr with exit code 2, before
anything is simulated."""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from sre_marathon_gym.cli.commands import main, seed_int

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
OLD_BUNDLE = Path(__file__).parents[1] / "data" / "online_boutique-runbook-3-v1.bundle"


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    """stderr holds exactly one line, and no traceback."""
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.fixture
def no_simulation(monkeypatch):
    """Fail the test if anything starts an episode or a leaderboard evaluation."""
    from sre_marathon_gym.agents import base
    from sre_marathon_gym.evaluation import leaderboard as evaluation

    def boom(*a: Any, **k: Any) -> None:
        raise AssertionError("simulated before validating the arguments")

    monkeypatch.setattr(base, "run_episode", boom)
    monkeypatch.setattr(evaluation, "evaluate", boom)


@pytest.fixture(scope="module")
def runbook_bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run")
    assert main(["run", "--app", "online_boutique", "--agent", "runbook", *SHORT, "--out", str(out)]) == 0
    return next(out.glob("*.bundle"))


# ------------------------------------------------------------------------------------ incomplete bundles
def _interrupting_agent(monkeypatch, at: int = 3) -> None:
    """The next agent made presses Ctrl-C (KeyboardInterrupt) at invocation `at`."""
    import sre_marathon_gym.agents as agents_mod
    from sre_marathon_gym.agents import NoopAgent

    class Interrupted(NoopAgent):
        def invoke(self, env: Any, obs: Any, info: dict) -> None:
            if info["invocation"] == at:
                raise KeyboardInterrupt

    monkeypatch.setattr(agents_mod, "make_agent", lambda name, **kw: Interrupted())


def test_an_interrupted_run_is_sealed_incomplete_and_score_refuses_it_even_renamed(
    tmp_path, capsys, monkeypatch
):
    _interrupting_agent(monkeypatch)
    assert main(["run", "--app", "online_boutique", "--agent", "noop", *SHORT, "--out", str(tmp_path)]) == 130
    last = capsys.readouterr().err.strip().splitlines()[-1]  # after the progress bar
    partial = tmp_path / "online_boutique-noop-3.incomplete.bundle"
    assert re.fullmatch(
        rf"interrupted: run interrupted at t=\d+ s of 720 s; its partial recording is sealed "
        rf"as INCOMPLETE in {re.escape(str(partial))}",
        last,
    ), last
    assert not (tmp_path / "online_boutique-noop-3.bundle").exists()

    renamed = partial.rename(tmp_path / "online_boutique-noop-3.bundle")  # the flag is sealed, not named
    assert main(["score", str(renamed)]) == 2
    err = one_line_error(capsys)
    assert re.search(r"INCOMPLETE \(interrupted at t=\d+ s of 720 s: KeyboardInterrupt\)", err), err
    assert "--allow-incomplete" in err
    assert main(["score", str(renamed), str(OLD_BUNDLE)]) == 2  # nothing printed for the others either
    captured = capsys.readouterr()
    assert "Marathon-Score" not in captured.out and captured.out == ""

    assert main(["score", "--allow-incomplete", str(renamed)]) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"verified; INCOMPLETE \(interrupted at t=\d+ s of 720 s: KeyboardInterrupt\); scored", out
    )
    assert "Marathon-Score" in out and "(INCOMPLETE)" in out


def test_old_bundle_still_verifies_and_scores_as_complete(capsys):
    assert main(["score", str(OLD_BUNDLE)]) == 0
    out = capsys.readouterr().out
    assert f"{OLD_BUNDLE}: verified; scored under rules v1 (sealed in the bundle)" in out
    assert "INCOMPLETE" not in out


# ------------------------------------------------------------------------------------ catalog digest
def test_score_refuses_a_catalog_other_than_the_runs(runbook_bundle, catalog, catalog_copy, capsys):
    (scoring := catalog_copy / "scoring.yaml").write_text(scoring.read_text() + "\n# edited\n")
    assert main(["--catalog", str(catalog_copy), "score", str(runbook_bundle)]) == 2
    err = one_line_error(capsys)
    assert "the run used catalog sha256:" in err and "--rescore-with-catalog" in err

    assert main(["--catalog", str(catalog_copy), "score", "--rescore-with-catalog", str(runbook_bundle)]) == 0
    assert "(--catalog; --rescore-with-catalog: the run used catalog sha256:" in capsys.readouterr().out
    assert main(["--catalog", str(catalog.root), "score", str(runbook_bundle)]) == 0  # the run's own catalog
    assert "scored under rules v3 (--catalog)" in capsys.readouterr().out
    assert main(["score", str(runbook_bundle)]) == 0  # the sealed scoring, as before
    assert "scored under rules v3 (sealed in the bundle)" in capsys.readouterr().out


# ------------------------------------------------------------------------------------ unreadable input
def test_score_refuses_non_regular_files_at_once(tmp_path, capsys):
    fifo = tmp_path / "fifo.bundle"
    os.mkfifo(fifo)
    for target in ("/dev/zero", str(fifo), str(tmp_path)):
        assert main(["score", target]) == 2
        assert "not a regular file" in one_line_error(capsys)


@pytest.mark.parametrize("damage", ["encrypted", "version", "truncated", "seal"])
def test_score_turns_a_malformed_archive_into_one_line(runbook_bundle, tmp_path, capsys, damage):
    data = bytearray(runbook_bundle.read_bytes())
    cd = data.index(b"PK\x01\x02")
    if damage == "encrypted":
        data[cd + 8] |= 0x01  # general-purpose flag bit 0 of the first central-directory entry
    elif damage == "version":
        data[cd + 6] = 64  # "needs ZIP 6.4"
    elif damage == "truncated":
        data = data[: len(data) * 2 // 3]
    else:  # re-packed with a valid container checksum and a non-ASCII seal (hmac.compare_digest TypeError)
        import zipfile

        from sre_marathon_gym.recording.bundle import _zip_bytes

        zf = zipfile.ZipFile(runbook_bundle)
        members = [(n, zf.read(n)) for n in zf.namelist()]
        data = bytearray(_zip_bytes([*members[:-1], ("seal", "sha256:é\n".encode())]))
    bad = tmp_path / "bad.bundle"
    bad.write_bytes(bytes(data))
    assert main(["score", str(bad)]) == 2
    assert one_line_error(capsys).startswith(f"error: {bad}")


# ------------------------------------------------------------------------------------ --out
def _unwritable_dir(tmp_path: Path) -> Path:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    if os.access(ro, os.W_OK):  # root ignores permission bits: use a directory no one can write into
        if not Path("/proc/self").is_dir():
            pytest.skip("running as root without /proc: no unwritable directory to test with")
        return Path("/proc/self")
    return ro


@pytest.mark.parametrize("command", ["run", "evaluate"])
@pytest.mark.parametrize("case", ["existing file", "under a file", "unwritable"])
def test_out_is_checked_before_anything_is_simulated(tmp_path, capsys, no_simulation, command, case):
    (afile := tmp_path / "afile").write_text("x")
    out = {
        "existing file": afile,
        "under a file": afile / "runs",
        "unwritable": _unwritable_dir(tmp_path) / "runs",
    }[case]
    argv = (
        ["run", "--app", "online_boutique", "--agent", "noop", *SHORT]
        if command == "run"
        else ["evaluate", "--agents", "noop", "--apps", "online_boutique", "--workers", "1"]
    )
    assert main([*argv, "--out", str(out)]) == 2
    err = one_line_error(capsys)
    assert err.startswith(f"error: --out {out}")
    assert {
        "existing file": "exists and is not a directory",
        "under a file": "afile is not a directory",
        "unwritable": "cannot write into",
    }[case] in err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "ro") == ["afile"]  # nothing left behind


# ------------------------------------------------------------------------------------ options eval ignores
@pytest.mark.parametrize(
    "option",
    [
        ["--intensity", "3"],
        ["--injection-minutes", "5"],
        ["--observation-minutes", "5"],
        ["--intensity", "1.0"],
    ],
)
def test_train_only_options_are_refused_in_eval_mode(tmp_path, capsys, no_simulation, option):
    assert main(["run", "--app", "online_boutique", "--agent", "noop", *option, "--out", str(tmp_path)]) == 2
    err = one_line_error(capsys)
    assert f"error: {option[0]}: only with --mode train" in err and "leaderboard protocol" in err


# ------------------------------------------------------------------------------------ seeds and counts
@pytest.mark.parametrize("seed", ["-1", "9" * 301, str(2**63), "1e3", "0x10", ""])
@pytest.mark.parametrize("command", ["run", "export-prometheus"])
def test_out_of_range_or_malformed_seeds_are_refused(tmp_path, capsys, no_simulation, seed, command):
    argv = (
        ["run", "--app", "online_boutique", "--mode", "train"]
        if command == "run"
        else ["export-prometheus", "--app", "online_boutique", "--out", str(tmp_path / "prom")]
    )
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--seed", seed])
    assert exc.value.code == 2
    err = one_line_error(capsys)
    assert f"sre-marathon {command}: error: argument --seed: " in err
    assert len(err) < 250  # a 301-digit seed is not echoed in full


def test_the_largest_seeds_are_accepted():
    assert seed_int("0") == 0 and seed_int(str(2**63 - 1)) == 2**63 - 1


@pytest.mark.parametrize("argv", [["--workers", "0"], ["--workers", "-2"], ["--seeds", "-1"]])
def test_evaluate_counts_are_checked(capsys, no_simulation, argv):
    with pytest.raises(SystemExit) as exc:
        main(["evaluate", "--agents", "noop", *argv])
    assert exc.value.code == 2 and "must be at least" in one_line_error(capsys)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--seed-base", "fresh"], "use it with --seeds N"),
        (["--seed-base", "x", "--seeds", "2"], "argument --seed-base: expected a whole number"),
        (["--seed-base", str(2**63 - 1), "--seeds", "2"], "passes the largest seed"),
    ],
)
def test_seed_base_is_checked(tmp_path, capsys, no_simulation, argv, says):
    try:
        code = main(["evaluate", "--agents", "noop", "--out", str(tmp_path), *argv])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    assert code == 2 and says in one_line_error(capsys)


def test_a_fresh_seed_base_is_drawn_printed_and_used(tmp_path, capsys, monkeypatch):
    from sre_marathon_gym.evaluation import leaderboard as evaluation

    seen = {}

    def fake_evaluate(agents, apps, **kw):
        seen.update(kw)
        return []

    monkeypatch.setattr(evaluation, "fresh_seed_base", lambda: 424242)
    monkeypatch.setattr(evaluation, "evaluate", fake_evaluate)
    argv = ["--apps", "online_boutique", "--seeds", "3", "--seed-base", "fresh", "--out", str(tmp_path)]
    assert main(["evaluate", "--agents", "noop", *argv]) == 0
    assert seen["seed_base"] == 424242 and seen["extra_seeds"] == 3
    assert "extra seeds: 424242..424244 (repeat with --seed-base 424242)" in capsys.readouterr().out


# ------------------------------------------------------------------------------------ every error: one line
def test_a_multi_line_error_is_printed_on_one_line(catalog_copy, capsys):
    """A catalog with two problems: the message lists both, on one stderr line."""
    import yaml

    path = catalog_copy / "faults" / "online_boutique.yaml"
    if not path.exists():
        path = next((catalog_copy / "faults").glob("online_boutique*"))
    doc = yaml.safe_load(path.read_text())
    faults = doc["faults"] if isinstance(doc, dict) else doc
    faults[0]["target"], faults[1]["target"] = "nosuchservice", "nosuchservice2"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert main(["--catalog", str(catalog_copy), "catalog", "validate"]) == 2
    err = one_line_error(capsys)
    assert "nosuchservice'" in err and "nosuchservice2" in err


def test_bundle_writes_fail_with_one_line(tmp_path, capsys, monkeypatch):
    """A file-system error while writing the bundle (here: a directory where the bundle goes)."""
    (tmp_path / "online_boutique-noop-3.bundle").mkdir()
    assert main(["run", "--app", "online_boutique", "--agent", "noop", *SHORT, "--out", str(tmp_path)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("error: cannot write bundle") and "Is a directory" in last


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX only (/dev/zero)")
def test_python_dash_m_entry_point_exit_code(tmp_path):
    """The console entry maps main's return value to the process exit code (2 for errors)."""
    import subprocess

    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-m", "sre_marathon_gym.cli", "score", "/dev/zero"],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(repo)},
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "not a regular file" in proc.stderr


def test_a_file_system_error_is_one_line(tmp_path, capsys):
    (afile := tmp_path / "afile").write_text("x")
    assert main(["score", str(OLD_BUNDLE), "--png", str(afile / "fig.png")]) == 2
    assert one_line_error(capsys).startswith("error: ")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["stats", "--seeds", "101"], "must be at most 100"),
        (["stats", "--seeds", "-1"], "must be at least 0"),
        (["stats", "--workers", "0"], "must be at least 1"),
        (["stats", "--seeds", "x" * 100], "expected a whole number, got 'xxxxxxxxxxxxxxxxxxxxxxxx'..."),
        (["orca", "evaluate", "--limit", "0"], "must be at least 1"),
    ],
)
def test_every_subcommand_checks_its_counts_the_same_way(capsys, no_simulation, argv, message):
    """One argparse type (`arg_types.whole_number`) for every subcommand: same words, same clipping."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and message in one_line_error(capsys)


# ------------------------------------------------------------------------------------ stop 29's fuzzing
def _code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's own errors
        return int(exc.code)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["evaluate", "--agents", ""], "argument --agents/--agent: expected at least one name"),
        (["evaluate", "--agents", "noop,"], "an empty name in 'noop,'"),
        (["evaluate", "--agents", "noop,noop"], "named twice: noop"),
        (["evaluate", "--agents", "noop", "--apps", ""], "argument --apps: expected at least one name"),
        (["--catalog", "/nonexistent", "orca", "tasks"], "--catalog applies to the SRE-Marathon commands"),
        (["catalog", "validate", "--app", "nope"], "unknown app 'nope'"),
        (["run", "--app", "online_boutique", "--agent", "react", "--price", "inf", "1"], "finite number"),
        (
            ["run", "--app", "online_boutique", "--agent", "react", "--pricing", "/dev/null"],
            "not a regular file",
        ),
    ],
)
def test_empty_duplicate_or_ignored_values_are_refused(tmp_path, capsys, no_simulation, argv, says):
    """Values that used to be accepted silently: an empty agent list printed an empty table, a
    duplicate ran twice into one bundle name, --catalog was ignored by the orca commands."""
    assert _code(argv) == 2 and says in one_line_error(capsys)


def test_a_run_no_longer_than_one_invocation_is_refused_before_simulating(tmp_path, capsys, no_simulation):
    argv = ["run", "--app", "online_boutique", "--mode", "train", "--seed", "1"]
    argv += ["--injection-minutes", "1", "--observation-minutes", "1", "--out", str(tmp_path / "o")]
    assert _code(argv) == 2
    assert "must be longer than one invocation interval (120 s)" in one_line_error(capsys)
    assert not (tmp_path / "o").exists()  # no incomplete bundle left behind


@pytest.mark.parametrize(
    "extra, says",
    [
        (["--origin", "99999999999999999999"], "argument --origin: must be at most"),
        (["--seed", "5"], "use them with --app only"),
        (["--agent", "oracle"], "use them with --app only"),
        (["--out", ""], "--out is empty"),
        (["--port", "70000"], "argument --port: must be at most 65535"),
        (["--port", "9090"], "use it with --serve"),
    ],
)
def test_export_prometheus_refuses_an_origin_past_year_9999_and_ignored_options(capsys, extra, says):
    """An origin beyond Prometheus' last time overflowed int64 timestamps and hung promtool."""
    argv = ["export-prometheus", str(OLD_BUNDLE), "--out", "unused", *extra]
    assert _code(argv) == 2 and says in one_line_error(capsys)


@pytest.mark.parametrize("png", ["fig.txt", "fig", "adir/", "adir/.png"])
def test_score_png_must_name_a_png_file(tmp_path, capsys, png):
    """matplotlib chose the format from the suffix: .txt raised from inside it, and a name without
    one was written as NAME.png while the CLI printed NAME."""
    assert _code(["score", str(OLD_BUNDLE), "--png", str(tmp_path / png)]) == 2
    assert "expected a file name ending in .png" in one_line_error(capsys)
    assert list(tmp_path.iterdir()) == []
