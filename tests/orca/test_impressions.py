"""flagd's impression counter in the ORCA world: the flipped variant's series appears within about
two minutes of the flip (flag_signals.md), only then, and only for the flag flipped."""

from __future__ import annotations

import numpy as np

from sre_marathon_gym.orca.load import run_orca_flags
from sre_marathon_gym.sim.flag_impressions import METRIC

FLIP = 600.0


def _series(run, flag: str) -> dict[str, np.ndarray]:
    st = run.metrics
    out = {}
    for sid in st.select(METRIC, {"feature_flag_key": flag}):
        _, v = st.range([int(sid)], 0, 2400)
        out[st.labels(int(sid))["feature_flag_result_variant"]] = v[0]
    return out


def test_the_flipped_variant_appears_after_the_flip():
    run = run_orca_flags(0, [(FLIP, "paymentFailure", "50%"), (1800.0, "paymentFailure", "off")], 2400)
    pay = _series(run, "paymentFailure")
    assert set(pay) == {"off", "50%"}
    first = int(np.argmax(~np.isnan(pay["50%"]))) * 15.0
    assert FLIP < first <= FLIP + 120
    seen = pay["50%"][~np.isnan(pay["50%"])]
    assert (np.diff(seen) >= 0).all() and seen[-1] > 0  # a counter
    # after the flag is off again the 50% series stops growing and the off series grows again
    i_off = int(1800 / 15) + 4
    assert pay["50%"][-1] == pay["50%"][i_off + 8]
    assert pay["off"][-1] > pay["off"][i_off]
    # flags that were not flipped only have their default variant
    assert set(_series(run, "adFailure")) == {"off"}


def test_no_impressions_without_telemetry():
    run = run_orca_flags(0, [(FLIP, "adFailure", "on")], 1200, telemetry=False)
    assert run.metrics is None
