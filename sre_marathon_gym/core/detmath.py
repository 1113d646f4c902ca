"""exp, log, power and matrix-vector sums that give the same bits on every CPU.

Why: numpy picks SIMD kernels for `exp`, `log`, `power` (and the other transcendental ufuncs) at
run time from the CPU's features (AVX2, AVX-512, SVML...), and their last bits differ between
kernels; BLAS picks its matrix-vector kernel (and its summation order) the same way. Either makes a
seeded run's telemetry, probes and scores depend on the machine. The functions here use only
IEEE-754 basic operations (+, -, *, /, comparisons, `rint`, `frexp`, `ldexp`), which are correctly
rounded, one ufunc call at a time (so no contraction into FMA), and sums in a fixed order
(`np.bincount` adds its weights in index order). Accuracy: fdlibm's algorithms, about 1 ulp.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["IntPower", "Kernels", "OrderedSums", "dot", "exp", "ipow", "log", "power", "rows_dot"]

# fdlibm e_exp.c / e_log.c constants (public domain, Sun Microsystems), as 0-d arrays: the same
# float64 values, cheaper ufunc calls than Python floats (these run in the simulator's inner loop)
_C = np.array
_LN2_HI = _C(6.93147180369123816490e-01)  # trailing 32 bits zero: k * _LN2_HI is exact for |k| < 2**20
_LN2_LO = _C(1.90821492927058770002e-10)
_INV_LN2 = _C(1.44269504088896338700e00)
_P1, _P2 = _C(1.66666666666666019037e-01), _C(-2.77777777770155933842e-03)
_P3 = _C(6.61375632143793436117e-05)
_P4, _P5 = _C(-1.65339022054652515390e-06), _C(4.13813679705723846039e-08)
_LG1, _LG2, _LG3 = _C(6.666666666666735130e-01), _C(3.999999999940941908e-01), _C(2.857142874366239149e-01)
_LG4, _LG5, _LG6 = _C(2.222219843214978396e-01), _C(1.818357216161805012e-01), _C(1.531383769920937332e-01)
_LG7 = _C(1.479819860511658591e-01)
_SQRT_HALF, _HALF, _ONE, _TWO, _ZERO = _C(0.70710678118654752440), _C(0.5), _C(1.0), _C(2.0), _C(0.0)
_EXP_LO, _EXP_HI = _C(-746.0), _C(709.79)  # e**x rounds to 0 below, overflows to inf above
_mul, _add, _sub, _div = np.multiply, np.add, np.subtract, np.divide


def _exp_into(x: np.ndarray, out: np.ndarray, b: np.ndarray, k32: np.ndarray) -> np.ndarray:
    """e**x for 1-D float64 `x` into `out` (fdlibm: x = k ln2 + r with |r| <= ln2/2, a rational
    approximation of e**r, then an exact scaling by 2**k); `b` is [6, n] scratch, `k32` int32 scratch.
    Each step is one ufunc with a positional `out` (the cheap call: n is a few hundred at most)."""
    xc, k, lo, r, t, p = b
    np.minimum(np.maximum(x, _EXP_LO, out=xc), _EXP_HI, out=xc)
    np.rint(_mul(xc, _INV_LN2, k), k)
    np.copyto(k32, k, casting="unsafe")  # whole numbers in [-1076, 1024]
    _sub(xc, _mul(k, _LN2_HI, r), xc)  # hi = x - k ln2_hi (exact)
    _mul(k, _LN2_LO, lo)
    _sub(xc, lo, r)
    _mul(r, r, t)
    _add(_mul(t, _P5, p), _P4, p)
    for coef in (_P3, _P2, _P1):
        _add(_mul(t, p, p), coef, p)
    c = _sub(r, _mul(t, p, p), p)  # r - t (P1 + t (P2 + ...))
    q = _div(_mul(r, c, t), _sub(_TWO, c, c), t)  # r c / (2 - c)
    _sub(_ONE, _sub(_sub(lo, q, q), xc, q), q)  # 1 - ((lo - r c / (2 - c)) - hi)
    return np.ldexp(q, k32, out)


def _log_into(x: np.ndarray, out: np.ndarray, b: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Natural log of positive finite 1-D float64 `x` into `out` (fdlibm: x = 2**k (1 + f) with
    sqrt(2)/2 <= 1 + f < sqrt(2), then a polynomial in s = f / (2 + f)); `b` is [6, n] scratch,
    `e` int32 scratch. Callers clamp x > 0."""
    f, s, z, w, t1, t2 = b
    np.frexp(x, f, e)  # exact: x = m 2**e, 0.5 <= m < 1
    small = np.less(f, _SQRT_HALF)
    _sub(_mul(f, _add(small, _ONE, s), f), _ONE, f)  # m or 2m, minus 1: exact (Sterbenz)
    k = _sub(e, small, out, dtype=np.float64)  # `out` holds k until the last step
    _div(f, _add(_TWO, f, s), s)
    _mul(s, s, z)
    _mul(z, z, w)
    _mul(w, _add(_LG4, _mul(w, _LG6, t1), t1), t1)
    _mul(w, _add(_LG2, t1, t1), t1)  # t1 = w (Lg2 + w (Lg4 + w Lg6))
    _mul(w, _add(_LG5, _mul(w, _LG7, t2), t2), t2)
    _mul(w, _add(_LG3, t2, t2), t2)
    _mul(z, _add(_LG1, t2, t2), t2)  # t2 = z (Lg1 + w (Lg3 + w (Lg5 + w Lg7)))
    r = _add(t2, t1, t1)
    hfsq = _mul(_mul(_HALF, f, w), f, w)
    inner = _add(_mul(s, _add(hfsq, r, r), r), _mul(k, _LN2_LO, z), r)  # s (hfsq + R) + k ln2_lo
    return _sub(_mul(k, _LN2_HI, out), _sub(_sub(hfsq, inner, w), f, w), out)


class Kernels:
    """`exp` and `log` over 1-D float64 arrays of one size, with their scratch allocated once (for the
    simulator's inner loop, which calls them a few times per pass on the same sizes)."""

    __slots__ = ("_b", "_i")

    def __init__(self, n: int):
        self._b = np.empty((6, n))
        self._i = np.empty(n, dtype=np.int32)

    def exp(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """e**x into `out` (`x` may be `out`)."""
        return _exp_into(x, out, self._b, self._i)

    def log(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """log(x) into `out` (`x` may be `out`)."""
        return _log_into(x, out, self._b, self._i)


def exp(x: np.ndarray | float) -> np.ndarray:
    """e**x, elementwise, for float64 `x` of any shape (see `_exp_into`)."""
    x = np.asarray(x, dtype=np.float64)
    flat = np.ascontiguousarray(x).reshape(-1)
    return Kernels(flat.size).exp(flat, np.empty(flat.size)).reshape(x.shape)


def log(x: np.ndarray | float) -> np.ndarray:
    """Natural log, elementwise, of positive finite float64 `x` of any shape (see `_log_into`)."""
    x = np.asarray(x, dtype=np.float64)
    flat = np.ascontiguousarray(x).reshape(-1)
    return Kernels(flat.size).log(flat, np.empty(flat.size)).reshape(x.shape)


def power(x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
    """x**y for x >= 0 and y > 0, as exp(y log x) (0 where x is 0)."""
    x = np.asarray(x, dtype=np.float64)
    pos = x > 0.0
    return np.where(pos, exp(_mul(y, log(np.where(pos, x, 1.0)))), 0.0)


class IntPower:
    """x**n for fixed small whole-number exponents n >= 0 (per element): x * x * ... left to right,
    products only. The masks are built once, since the exponents (retries + 1) never change."""

    __slots__ = ("masks", "all_positive", "_tmp")

    def __init__(self, n: np.ndarray):
        n = np.asarray(n).astype(np.int64)
        self.all_positive = bool((n >= 1).all())
        self.masks = [n >= k for k in range(1, int(n.max(initial=0)) + 1)]
        self._tmp = np.empty(n.shape)

    def __call__(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        out = np.empty(self._tmp.shape) if out is None else out
        if self.all_positive:
            out[...] = x
        else:
            out[...] = np.where(self.masks[0], x, _ONE) if self.masks else _ONE
        for mask in self.masks[1:]:
            np.copyto(out, _mul(out, x, self._tmp), where=mask)
        return out


def ipow(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """x**n for small whole-number exponents n >= 0 (per element), like `IntPower(n)(x)`."""
    return IntPower(np.broadcast_to(n, np.shape(x)))(np.asarray(x, dtype=np.float64))


class OrderedSums:
    """A fixed matrix M (e.g. 0/1 incidence or whole-number call counts) whose products with vectors
    are sums over its nonzero entries in a fixed order: each output element adds its products in
    ascending index order, on every machine (BLAS may reorder, and reorders differently per CPU).
    `M @ v` is `matvec(v)`; `u @ M` is `vecmat(u)`; `np.bincount` adds its weights in index order."""

    __slots__ = ("shape", "_mv", "_vm")

    def __init__(self, dense: np.ndarray):
        dense = np.asarray(dense, dtype=np.float64)
        self.shape = dense.shape
        cols, rows = np.nonzero(dense.T)  # column-major: per row, columns ascending
        self._mv = self._terms(rows, cols, dense[rows, cols], dense.shape[1])
        rows, cols = np.nonzero(dense)  # row-major: per column, rows ascending
        self._vm = self._terms(cols, rows, dense[rows, cols], dense.shape[0])

    @staticmethod
    def _terms(out_idx: np.ndarray, in_idx: np.ndarray, vals: np.ndarray, n_in: int) -> tuple:
        """(output index per term, input gather or None if the identity, factors or None if all 1)."""
        gather = None if np.array_equal(in_idx, np.arange(n_in)) else in_idx
        return out_idx, gather, None if (vals == 1.0).all() else vals

    def _apply(self, terms: tuple, v: np.ndarray, n_out: int) -> np.ndarray:
        out_idx, gather, vals = terms
        w = v if gather is None else v[gather]
        if vals is not None:
            w = vals * w
        return np.bincount(out_idx, weights=w, minlength=n_out).astype(np.float64, copy=False)

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """M @ v: for each row, its entries' products added in column order."""
        return self._apply(self._mv, v, self.shape[0])

    def vecmat(self, u: np.ndarray) -> np.ndarray:
        """u @ M: for each column, its entries' products added in row order."""
        return self._apply(self._vm, u, self.shape[1])


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """a . b for 1-d arrays, the same bits on every CPU: the products are correctly rounded and
    `math.fsum` adds them exactly (BLAS's dot picks a kernel, and a summation order, per CPU)."""
    return math.fsum(np.multiply(a, b).tolist())


def rows_dot(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """m @ v for a small dense matrix, row by row with `dot` (see `OrderedSums` for large sparse ones)."""
    return np.array([math.fsum(row) for row in np.multiply(m, v).tolist()], dtype=np.float64)
