"""The same seed gives the same bits on any CPU: `detmath`, and the leaderboard fingerprint run
with numpy's SIMD dispatch and BLAS kernels restricted (as on an older or different CPU)."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sre_marathon_gym.core import detmath

REPO = Path(__file__).resolve().parents[2]
FINGERPRINT = REPO / "benchmarks" / "sim_fingerprint.py"


def _ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return np.abs(got - ref) / np.spacing(np.abs(ref))


def test_exp_and_log_are_within_one_ulp_and_handle_the_ends():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-700, 700, 20_000), rng.uniform(-1, 1, 20_000), [0.0, 1.0, -1e-300]])
    assert _ulps(detmath.exp(x), np.array([math.exp(v) for v in x.tolist()])).max() <= 1.0
    with np.errstate(over="ignore"):  # like np.exp, an overflow to inf warns
        assert detmath.exp(np.array([-np.inf, -800.0, 800.0, np.inf])).tolist() == [0.0, 0.0, np.inf, np.inf]
    y = np.concatenate(
        [np.exp(rng.uniform(-700, 700, 20_000)), rng.uniform(1e-9, 2, 20_000), [1.0, 2.0, 5e-324]]
    )
    ref = np.array([math.log(v) for v in y.tolist()])
    assert (_ulps(detmath.log(y), ref)[ref != 0] <= 1.0).all() and detmath.log(1.0) == 0.0
    assert detmath.exp(np.ones((2, 3))).shape == (2, 3) and float(detmath.exp(0.0)) == 1.0


def test_power_and_whole_number_powers():
    rng = np.random.default_rng(1)
    b, e = rng.uniform(0, 1, 5000), rng.uniform(0.1, 5, 5000)
    np.testing.assert_allclose(detmath.power(b, e), b**e, rtol=1e-13)
    assert detmath.power(np.array([0.0, 1.0]), 0.5).tolist() == [0.0, 1.0]
    n = rng.integers(0, 5, 5000)
    expected = np.array([math.prod([v] * k) if k else 1.0 for v, k in zip(b.tolist(), n.tolist())])
    assert np.array_equal(detmath.IntPower(n)(b), expected)  # x * x * ... left to right, exactly


def test_ordered_sums_add_in_index_order():
    rng = np.random.default_rng(2)
    m = (rng.random((13, 60)) < 0.2) * rng.integers(1, 4, (13, 60)).astype(float)
    s = detmath.OrderedSums(m)
    v, u = rng.random(60) * 1e3, rng.random(13) * 1e3

    def left_to_right(terms: list[float]) -> float:
        acc = 0.0
        for t in terms:
            acc += t
        return acc

    rows = [left_to_right([m[i, j] * v[j] for j in range(60) if m[i, j]]) for i in range(13)]
    cols = [left_to_right([u[i] * m[i, j] for i in range(13) if m[i, j]]) for j in range(60)]
    assert s.matvec(v).tolist() == rows and s.vecmat(u).tolist() == cols
    np.testing.assert_allclose(s.matvec(v), m @ v, rtol=1e-12)
    assert detmath.OrderedSums(np.zeros((2, 3))).matvec(np.ones(3)).dtype == np.float64


def restricted_env() -> dict[str, str]:
    """The environment of a run on a 'different CPU': every SIMD feature numpy dispatches to at run
    time (beyond its build baseline) disabled, one BLAS thread, and (x86-64) OpenBLAS' oldest kernels."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath as umath  # type: ignore[no-redef]
    on = [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]
    env = dict(
        os.environ,
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        NPY_DISABLE_CPU_FEATURES=" ".join(on),
        PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    )
    if platform.machine().lower() in ("x86_64", "amd64"):
        env["OPENBLAS_CORETYPE"] = "Prescott"  # SSE3 kernels: another gemv blocking than AVX2/AVX-512
    return env


def _fingerprints(args: list[str]) -> tuple[str, str]:
    """`sim_fingerprint.py args` output as run normally and on a restricted CPU (both at once)."""
    plain = dict(os.environ, PYTHONPATH=restricted_env()["PYTHONPATH"])
    runs = [
        subprocess.Popen(
            [sys.executable, str(FINGERPRINT), *args],
            env=env,
            cwd=REPO,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for env in (plain, restricted_env())
    ]
    outs = [p.communicate(timeout=3600) for p in runs]
    for p, (_, err) in zip(runs, outs):
        assert p.returncode == 0, err[-2000:]
    return outs[0][0], outs[1][0]


def test_restricted_features_are_really_off():
    env = restricted_env()
    if not env["NPY_DISABLE_CPU_FEATURES"]:
        pytest.skip("this CPU has no SIMD features beyond numpy's baseline: nothing to disable")
    code = (
        "import json\ntry:\n    from numpy._core import _multiarray_umath as m\nexcept ImportError:\n"
        "    from numpy.core import _multiarray_umath as m\nprint(json.dumps(m.__cpu_features__))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    features = json.loads(out.stdout)
    assert not any(features[f] for f in env["NPY_DISABLE_CPU_FEATURES"].split())


def test_one_app_fingerprint_is_the_same_on_a_restricted_cpu():
    plain, restricted = _fingerprints(["--app", "online_boutique"])
    assert plain.count("\n") == 12 and plain == restricted


@pytest.mark.slow
def test_leaderboard_fingerprint_is_the_same_on_a_restricted_cpu():
    plain, restricted = _fingerprints([])
    assert plain.count("\n") == 36 and plain == restricted
