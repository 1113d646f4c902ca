"""The ORCA world's disk cache: a second process loads the recording instead of simulating it, a
damaged file is rebuilt, concurrent writers leave one whole file, and the key follows the inputs."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sre_marathon_gym.orca import world_cache
from sre_marathon_gym.orca.world_cache import KEEP, PREFIX, load_or_build, world_key


def test_second_load_reads_the_file_without_building(tmp_path):
    built = []

    def build():
        built.append(1)
        return {"series": list(range(10))}

    first = load_or_build("k1", build, tmp_path)
    second = load_or_build("k1", build, tmp_path)
    assert first == second == {"series": list(range(10))}
    assert built == [1]
    assert [p.name for p in tmp_path.iterdir()] == [f"{PREFIX}k1.pkl"]


def test_a_damaged_file_is_rebuilt(tmp_path):
    load_or_build("k1", lambda: "whole", tmp_path)
    path = tmp_path / f"{PREFIX}k1.pkl"
    path.write_bytes(path.read_bytes()[:5])  # a crash mid-write of an older version
    assert load_or_build("k1", lambda: "rebuilt", tmp_path) == "rebuilt"
    assert pickle.loads(path.read_bytes()) == "rebuilt"


def test_the_most_recently_used_worlds_are_kept(tmp_path):
    import os

    for age, key in enumerate(["k3", "k2", "k1"]):  # k1 oldest
        load_or_build(key, lambda: key, tmp_path)
        os.utime(tmp_path / f"{PREFIX}{key}.pkl", (1000 - 100 * age, 1000 - 100 * age))
    assert load_or_build("k1", lambda: "rebuilt", tmp_path) == "k1"  # a load makes it the most recent
    load_or_build("new", lambda: "new", tmp_path)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert len(kept) == KEEP == 3
    assert kept == sorted(f"{PREFIX}{k}.pkl" for k in ("new", "k1", "k3"))  # k2, the least recent, went


def test_an_unwritable_cache_costs_only_the_rebuild(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert load_or_build("k", lambda: 7, blocker / "sub") == 7


def test_cache_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("SRE_MARATHON_CACHE", "off")
    assert world_cache.cache_dir() is None
    monkeypatch.setenv("SRE_MARATHON_CACHE", "/some/dir")
    assert world_cache.cache_dir() == Path("/some/dir")


def test_the_key_follows_days_seed_catalog_and_source(tmp_path):
    base = world_key(6, 1, "c1")
    assert base == world_key(6, 1, "c1")
    assert len({base, world_key(5, 1, "c1"), world_key(6, 2, "c1"), world_key(6, 1, "c2")}) == 4
    assert world_key(6, 1, "c1", schedule="fresh-abc") != base
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("x = 1\n")
    before = world_cache.source_digest(pkg)
    (pkg / "a.py").write_text("x = 2\n")
    assert world_cache.source_digest(pkg) != before


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from sre_marathon_gym.orca.world_cache import load_or_build
    big = bytes(range(256)) * 40_000  # 10 MB: writes overlap
    out = load_or_build("shared", lambda: (sys.argv[1], big), Path(sys.argv[2]))
    assert out[1] == big
    """
)


def test_concurrent_writers_leave_one_whole_file(tmp_path):
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(i), str(tmp_path)], env=dict(os.environ))
        for i in range(4)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    files = list(tmp_path.iterdir())
    assert [p.name for p in files] == [f"{PREFIX}shared.pkl"]  # no temporary file left behind
    who, big = pickle.loads(files[0].read_bytes())
    assert who in {"0", "1", "2", "3"} and len(big) == 10_240_000


@pytest.mark.slow
def test_a_second_process_loads_the_orca_world_from_disk(tmp_path):
    """The real world: the first process simulates and writes it; the second must not simulate
    (its `simulate` is replaced by one that fails) and reads the same recording."""
    probe = textwrap.dedent(
        """
        import sys
        from sre_marathon_gym.orca import world
        if sys.argv[1] == "second":
            def refuse(*a, **k):
                raise AssertionError("simulated again")
            world.simulate = refuse
        w = world.orca_world()
        print(w.sim.now, sorted(w.sim.store.names()))
        """
    )
    env = {**os.environ, "SRE_MARATHON_CACHE": str(tmp_path)}
    outs = [
        subprocess.run(
            [sys.executable, "-c", probe, which], env=env, capture_output=True, text=True, timeout=600
        )
        for which in ("first", "second")
    ]
    for o in outs:
        assert o.returncode == 0, o.stderr[-2000:]
    assert outs[0].stdout == outs[1].stdout
    assert len(list(tmp_path.glob(f"{PREFIX}*.pkl"))) == 1
