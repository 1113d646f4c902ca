"""Measure how long each test file takes and write tests/durations.json, the order the test suite
starts its files in (longest first: `tests/conftest.py`).

Why: the suite runs one worker per core and keeps a file's tests on one worker (`--dist loadfile`);
a long file that starts last keeps one core busy while the other has nothing left. The durations
only order the files: a stale or missing entry costs minutes of wall time, never a test.

    python scripts/test_durations.py                 # runs the whole suite (about 15 minutes)
    python scripts/test_durations.py --from-log LOG  # a log of `pytest --durations=0` already run
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "durations.json"
# pytest's `--durations` report: "12.34s call     tests/x/test_y.py::test_z[param]"
LINE = re.compile(r"^\s*([0-9.]+)s (?:setup|call|teardown)\s+(\S+?\.py)::")


def per_file(report: str) -> dict[str, float]:
    """Seconds per test file (setup, call and teardown of its tests) from a `--durations=0` report."""
    total: dict[str, float] = defaultdict(float)
    for line in report.splitlines():
        m = LINE.match(line)
        if m:
            total[m.group(2)] += float(m.group(1))
    return dict(total)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--from-log", type=Path, help="a log of `pytest --durations=0` (default: run the suite)")
    args = p.parse_args()
    if args.from_log is not None:
        report = args.from_log.read_text()
    else:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=0"]
        report = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False).stdout
    files = per_file(report)
    if not files:
        sys.exit("no durations found: was the report made with --durations=0?")
    ordered = dict(sorted(((f, round(s, 1)) for f, s in files.items()), key=lambda kv: (-kv[1], kv[0])))
    OUT.write_text(json.dumps(ordered, indent=1) + "\n")
    print(f"{len(ordered)} files, {sum(ordered.values()):.0f} s in all -> {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
