"""Prometheus' bucketQuantile (promql/quantile.go) over rows of classic-histogram bucket counts or
rates: what `MetricStore.histogram_quantile`, the alert engine's quantile rules and the PromQL tool
answer with, vectorised over rows (each row is computed apart, so the rows answered together never
change a row's bits)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["bucket_quantile"]


def bucket_quantile(q: float | np.ndarray, rates: np.ndarray, les: np.ndarray) -> np.ndarray:
    """Vectorised port of Prometheus' bucketQuantile (promql/quantile.go) over rows of `rates`;
    `q` is one quantile for every row or one per row (each row is the same bits either way)."""
    g, nb = rates.shape
    out = np.full(g, np.nan)
    if g == 0:
        return out
    finite = ~np.isnan(rates)
    any_present = finite.any(axis=1)
    if np.ndim(q) == 0:
        if math.isnan(q):
            return out
        if q < 0 or q > 1:
            out[any_present] = -np.inf if q < 0 else np.inf
            return out
        ok = np.ones(g, dtype=bool)
    else:
        q = np.asarray(q, dtype=np.float64)
        out[any_present & (q < 0)], out[any_present & (q > 1)] = -np.inf, np.inf
        ok = (q >= 0) & (q <= 1)  # (NaN: no result)
    full = finite.all(axis=1)
    if (full & ok).any():
        out[full & ok] = _bucket_quantile_full(q if np.ndim(q) == 0 else q[full & ok], rates[full & ok], les)
    for row in np.flatnonzero(any_present & ~full & ok).tolist():  # ragged groups: drop missing buckets
        keep = finite[row]
        qr = q if np.ndim(q) == 0 else q[row : row + 1]
        out[row] = _bucket_quantile_full(qr, rates[row, keep][None, :], les[keep])[0]
    return out


def _bucket_quantile_full(q: float | np.ndarray, counts: np.ndarray, les: np.ndarray) -> np.ndarray:
    """bucketQuantile for rows without missing buckets; `les` ascending, 0 <= q <= 1 (one, or one
    per row)."""
    g, nb = counts.shape
    if nb < 2 or not np.isposinf(les[-1]):
        return np.full(g, np.nan)
    c = counts.astype(np.float64, copy=True)
    # correctPrecisionErrors(1e-12) then ensureMonotonic, as Prometheus does before searching
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = np.abs(c[:, 1:] - c[:, :-1])  # corrections chain: walk the rows with a candidate
        near = (delta != 0) & (delta / c[:, 1:] <= 1e-12)
        walk = np.flatnonzero(near.any(axis=1))
        i0 = int(near[walk].argmax(axis=1).min()) + 1 if walk.size else nb  # from the first one
        sub = c[walk]
        prev = sub[:, i0 - 1].copy()
        for i in range(i0, nb):
            curr = sub[:, i]
            delta = np.abs(curr - prev)
            fix = (delta != 0) & (delta / curr <= 1e-12)
            sub[:, i] = np.where(fix, prev, curr)
            prev = sub[:, i].copy()
        c[walk] = sub
    np.maximum.accumulate(c, axis=1, out=c)
    observations = c[:, -1]
    rank = q * observations
    ge = c[:, : nb - 1] >= rank[:, None]
    b = np.where(ge.any(axis=1), np.argmax(ge, axis=1), nb - 1)
    rows = np.arange(g)
    below = np.where(b > 0, c[rows, np.maximum(b - 1, 0)], 0.0)
    start = np.where(b > 0, les[np.maximum(b - 1, 0)], 0.0)
    end = les[np.minimum(b, nb - 1)]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = start + (end - start) * ((rank - below) / (c[rows, b] - below))
    out = np.where(b == nb - 1, les[nb - 2], out)
    out = np.where((b == 0) & (les[0] <= 0), les[0], out)
    out[observations == 0] = np.nan
    return out
