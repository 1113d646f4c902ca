"""The production change stream: what an agent reads about a change does not say whether it broke anything.

A naive Bayes classifier (numpy, Laplace smoothing, equal class priors) learns faulty vs benign
changes from the change's own description, on schedules of some seeds, and is scored on schedules of
other seeds, on a test set balanced by subsampling the majority class (chance is 50 %).

- pipeline (faulty: code_*/config_* rows, their catalog commit; benign: ``plane == "pipeline"``):
  message words after the ``<service>: `` prefix, author (the simulator ships both as ``ci``), the
  diff's file path, added/removed line counts, kind (code/config), time of the run (10-minute
  bins), service.
- manifest (faulty: bad_image_tag, cpu_limit_cut, memory_limit_cut, bad_readiness_probe,
  scale_to_zero; benign: ``plane == "manifest"``): service, the deployment field that changes
  (the spec field the simulator writes, i.e. the key that changes in the service's config),
  time of the run.

Pass mark: ``0.5 + 2 SE + 0.05`` with ``SE = sqrt(0.25 / n)`` the standard error of an accuracy of
0.5 on the ``n`` balanced test changes. Why: 2 SE keeps a chance classifier below the mark with
~98 % probability (one-sided), and the 0.05 is the tell we tolerate, one that earns an agent one
correct call in twenty over a coin. The classifier is shown to work: the same code separates the
curated stream (env ids up to -v2, benign commits from a few templates) at >= 0.8.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

import numpy as np
import pytest

from sre_marathon_gym.schedule.change_stream import change_plane
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule

APPS = ("online_boutique", "astronomy_shop", "train_ticket")
SEEDS = range(40)
TRAIN_SEEDS = frozenset(range(20))  # seeds 20-39 are held out
TIME_BIN_S = 600
TOLERATED_TELL = 0.05

# the deployment part each manifest fault changes (the catalog's artifact field); benign twins carry
# the spec field they write as `kind`. The readiness probe is one part: which of its settings
# changed (a fault's path, a twin's timeout) is the change's value, like a limit's number, and
# values are out of this test's scope (they are issue 32's open tells, README "Change stream")
FAULT_FIELD = {
    "bad_image_tag": "image",
    "cpu_limit_cut": "cpu_limit_m",
    "memory_limit_cut": "mem_limit_mi",
    "bad_readiness_probe": "readinessProbe",
    "scale_to_zero": "replicas",
}
TWIN_FIELD = {"readiness_timeout_s": "readinessProbe"}

Features = dict[str, list[str]]  # feature group -> tokens
Example = tuple[int, int, Features]  # (seed, 1 if faulty else 0, features)


def _diff_features(diff: str) -> Features:
    lines = diff.splitlines()
    path = next((ln[len("--- a/") :] for ln in lines if ln.startswith("--- a/")), "")
    added = sum(ln.startswith("+") and not ln.startswith("+++") for ln in lines)
    removed = sum(ln.startswith("-") and not ln.startswith("---") for ln in lines)
    return {"path": [path], "diff_size": [f"+{added}", f"-{removed}"]}


def pipeline_features(service: str, kind: str, message: str, diff: str, time_s: int) -> Features:
    text = message.split(": ", 1)[1] if message.startswith(f"{service}: ") else message
    return {
        "words": re.findall(r"[a-z0-9_]+", text.lower()),
        "author": ["ci"],
        **_diff_features(diff),
        "kind": [kind],
        "time": [str(time_s // TIME_BIN_S)],
        "service": [service],
    }


def manifest_features(service: str, field: str, time_s: int) -> Features:
    return {"service": [service], "field": [field], "time": [str(time_s // TIME_BIN_S)]}


def changes(catalog, sched: FaultSchedule, plane: str) -> Iterable[tuple[int, Features]]:
    """(1 if faulty else 0, features) of every change of `plane` in `sched`."""
    for sf in sched.faults:
        if change_plane(sf.mechanism) != plane:
            continue
        if plane == "pipeline" and sf.mechanism.startswith(("code_", "config_")):
            row = catalog.fault(sf.fault_id)
            service, kind = row.artifact.split(":", 1)[0], sf.mechanism.split("_", 1)[0]
            yield 1, pipeline_features(service, kind, row.change.message, row.change.diff, sf.start_s)
        elif plane == "manifest":
            yield 1, manifest_features(sf.target, FAULT_FIELD[sf.mechanism], sf.start_s)
    for b in sched.benign:
        if b.plane != plane:
            continue
        if plane == "pipeline":
            yield 0, pipeline_features(b.service, b.kind, b.message, b.diff, b.time_s)
        else:
            yield 0, manifest_features(b.service, TWIN_FIELD.get(b.kind, b.kind), b.time_s)


# --------------------------------------------------------------------------------------------------
# multinomial naive Bayes over tokens "<group>=<token>", in numpy


def _tokens(f: Features, groups: Iterable[str]) -> list[str]:
    return [f"{g}={t}" for g in groups for t in f[g]]


def naive_bayes(train: list[tuple[int, list[str]]], alpha: float = 1.0) -> Callable[[list[str]], float]:
    """Fit on (label, tokens); returns tokens -> log-odds of faulty (equal class priors)."""
    vocab = {t: i for i, t in enumerate(sorted({t for _, ts in train for t in ts}))}
    counts = np.zeros((2, len(vocab)))
    for y, ts in train:
        np.add.at(counts[y], [vocab[t] for t in ts], 1.0)
    logp = np.log(counts + alpha) - np.log(counts.sum(axis=1, keepdims=True) + alpha * len(vocab))
    odds = logp[1] - logp[0]
    return lambda ts: float(sum(odds[vocab[t]] for t in ts if t in vocab))


def balanced(examples: list[Example], rng: np.random.Generator) -> list[Example]:
    """All examples of the minority class and as many, drawn without replacement, of the other."""
    by_class = [[e for e in examples if e[1] == y] for y in (0, 1)]
    n = min(len(c) for c in by_class)
    return [c[i] for c in by_class for i in sorted(rng.choice(len(c), n, replace=False))]


def held_out_accuracy(examples: list[Example], groups: Iterable[str]) -> tuple[float, int]:
    """Accuracy on the balanced held-out seeds of a classifier trained on the training seeds."""
    groups = list(groups)
    train = [(y, _tokens(f, groups)) for seed, y, f in examples if seed in TRAIN_SEEDS]
    test = balanced([e for e in examples if e[0] not in TRAIN_SEEDS], np.random.default_rng(0))
    score = naive_bayes(train)
    hits = [(score(_tokens(f, groups)) > 0) == bool(y) for _, y, f in test]
    return float(np.mean(hits)), len(test)


def report(examples: list[Example]) -> tuple[float, int, dict[str, float]]:
    groups = list(examples[0][2])
    overall, n = held_out_accuracy(examples, groups)
    single = {g: held_out_accuracy(examples, [g])[0] for g in groups}
    return overall, n, single


def pass_mark(n: int) -> float:
    return 0.5 + 2.0 * math.sqrt(0.25 / n) + TOLERATED_TELL


def _describe(plane: str, stream: str, examples: list[Example], overall: float, n: int, single) -> str:
    faulty = sum(y for _, y, _ in examples)
    per = ", ".join(f"{g} {a:.3f}" for g, a in sorted(single.items(), key=lambda kv: -kv[1]))
    return (
        f"{stream} {plane}: {faulty} faulty, {len(examples) - faulty} benign changes; held-out accuracy "
        f"{overall:.3f} on {n} balanced changes (pass mark {pass_mark(n):.3f}); single features: {per}"
    )


# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schedules(catalog) -> dict[str, list[FaultSchedule]]:
    return {
        stream: [FaultSchedule.generate(catalog, app, seed, changes=stream) for app in APPS for seed in SEEDS]
        for stream in ("production", "curated")
    }


def _examples(catalog, scheds: list[FaultSchedule], plane: str) -> list[Example]:
    return [(s.seed, y, f) for s in scheds for y, f in changes(catalog, s, plane)]


@pytest.mark.parametrize("plane", ["pipeline", "manifest"])
def test_production_changes_do_not_tell_benign_from_faulty(catalog, schedules, plane):
    examples = _examples(catalog, schedules["production"], plane)
    assert sum(y for _, y, _ in examples) >= 300 and sum(1 - y for _, y, _ in examples) >= 300
    overall, n, single = report(examples)
    msg = _describe(plane, "production", examples, overall, n, single)
    print(msg)
    assert overall <= pass_mark(n), msg
    assert max(single.values()) <= pass_mark(n), msg


def test_the_classifier_finds_the_curated_streams_tell(catalog, schedules):
    """The curated benign commits come from a few templates: the same classifier must see it."""
    examples = _examples(catalog, schedules["curated"], "pipeline")
    overall, n, single = report(examples)
    msg = _describe("pipeline", "curated", examples, overall, n, single)
    print(msg)
    assert overall >= 0.8, msg
