"""Regularized incomplete gamma and beta functions in pure NumPy (the impls of `lax.igamma`,
`igammac`, `igamma_grad_a`, `random_gamma_grad` and `betainc`).

Why here: didax must run with NumPy alone, so these primitives need real vectorized algorithms.
SciPy, when importable, is only a faster path for igamma/igammac/betainc (`USE_SCIPY`); every
function has a `*_numpy` twin that never touches it, and that is what the tests verify against
SciPy and mpmath.  Conventions as in `special_algorithms`: float64 arithmetic, rounded once to
the input dtype; special values (nan, inf, domain edges) are JAX 0.10.2's.

Algorithms (Numerical Recipes / Cephes):
  * P(a, x) by its power series for x < a + 1, Q(a, x) by Legendre's continued fraction
    (Cephes' igamc recurrence, rescaled) above; the other one is 1 minus it;
  * the prefactor x^a e^-x / Gamma(a) as exp(a log1pmx((x - a) / a) + ...) with Stirling's
    correction for a >= 10, so it keeps its accuracy for large a;
  * dP/da by differentiating the series term by term and the recurrence alongside itself;
    random_gamma_grad = -(dP/da) / (dP/dx) is formed without the prefactor, so it never
    underflows;
  * I_x(a, b) by the continued fraction (modified Lentz), on the side of the symmetry
    I_x(a, b) = 1 - I_{1-x}(b, a) where it converges fast, with the same Stirling treatment
    of the prefactor x^a (1-x)^b / B(a, b).
Every loop runs over the elements still active only, until each has converged.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import dtypes
from didax._src.numerics import special as _sa

__all__ = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "betainc",
           "igamma_numpy", "igammac_numpy", "betainc_numpy", "USE_SCIPY"]

USE_SCIPY = _sa.USE_SCIPY

_EPS = dtypes.finfo(np.float64).eps
_BIG = 2.0 ** 52
_TINY = 1e-300
_MAX_ITER = 100000
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
# Stirling's series: lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2) = sum c_k / a^(2k-1)
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)


def _prepare(*args):
    """Broadcast float64 flat copies, the broadcast shape and the output dtype (the first
    argument's if floating, float64 otherwise)."""
    arrs = [np.asarray(v) for v in args]
    dtype = (arrs[0].dtype if dtypes.issubdtype(arrs[0].dtype, np.floating)
             else np.dtype(np.float64))
    shape = np.broadcast_shapes(*(v.shape for v in arrs))
    flat = [np.array(np.broadcast_to(v, shape), dtype=np.float64).reshape(-1) for v in arrs]
    return flat, shape, dtype


def _finish(y, shape, dtype):
    with np.errstate(over="ignore"):
        return np.asarray(y, np.float64).reshape(shape).astype(dtype, copy=False)


def _elementwise(core):
    """Wrap a flat float64 kernel of n arguments into a broadcasting, dtype-keeping function."""
    def run(*args):
        flat, shape, dtype = _prepare(*args)
        with np.errstate(all="ignore"):
            y = core(*flat) if flat[0].size else flat[0].copy()
        return _finish(y, shape, dtype)
    return run


def _log1pmx(t):
    """log(1 + t) - t without cancellation for small |t| (atanh series in u = t / (2 + t))."""
    t = np.asarray(t, np.float64)
    small = np.abs(t) < 0.5
    ts = np.where(small, t, 0.0)
    u = ts / (2.0 + ts)
    u2 = u * u
    acc = np.zeros_like(u)
    for k in range(20, 0, -1):  # u^2 <= 1/9: 20 terms reach ~1e-19
        acc = acc * u2 + 1.0 / (2 * k + 1)
    series = -ts * ts / (2.0 + ts) + 2.0 * u * u2 * acc
    return np.where(small, series, np.log1p(t) - t)


def _stirling_corr(a):
    """lgamma(a) - Stirling's leading terms, for a >= 10."""
    inv2 = 1.0 / (a * a)
    acc = np.zeros_like(a)
    for c in _STIRLING[::-1]:
        acc = acc * inv2 + c
    return acc / a


def _log_gamma_factor(a, x):
    """log(x^a e^-x / Gamma(a)) for a > 0, x > 0 (finite)."""
    big = a >= 10
    ab = np.where(big, a, 10.0)
    xb = np.where(big, x, 10.0)
    stirling = (ab * _log1pmx((xb - ab) / ab) + 0.5 * np.log(ab) - _HALF_LOG_2PI
                - _stirling_corr(ab))
    small = a * np.log(x) - x - _sa.lgamma_numpy(np.where(big, 1.0, a))
    return np.where(big, stirling, small)


def _iterate(n, state, step):
    """Run `step(idx, *state) -> (done, *state)` over the active elements until each is done;
    returns the final state arrays (full size)."""
    out = [s.copy() for s in state]
    idx = np.arange(n)
    cur = [s.copy() for s in state]
    for _ in range(_MAX_ITER):
        if idx.size == 0:
            break
        done, *cur = step(idx, *cur)
        if done.any():
            for o, c in zip(out, cur):
                o[idx[done]] = c[done]
            keep = ~done
            idx = idx[keep]
            cur = [c[keep] for c in cur]
    for o, c in zip(out, cur):  # not converged: the last iterate
        o[idx] = c
    return out


def _gamma_series(a, x):
    """S = sum_n x^n / ((a+1)...(a+n)) and dS/da, so P = x^a e^-x / Gamma(a+1) * S."""
    n = a.size
    one = np.ones(n)

    def step(idx, ap, term, s, harm, ds):
        aa, xx = a[idx], x[idx]
        ap = ap + 1.0
        term = term * xx / ap
        harm = harm + 1.0 / ap
        dterm = -term * harm
        s = s + term
        ds = ds + dterm
        done = (np.abs(term) <= _EPS * 0.25 * np.abs(s)) & (
            np.abs(dterm) <= _EPS * 0.25 * np.abs(ds)) | (ap > aa + 1e6)
        return done, ap, term, s, harm, ds

    _, _, s, _, ds = _iterate(n, [a.copy(), one, one.copy(), np.zeros(n), np.zeros(n)], step)
    return s, ds


def _gamma_cf(a, x):
    """Q = x^a e^-x / Gamma(a) * F, with F Legendre's continued fraction, and dF/da."""
    n = a.size
    y0 = 1.0 - a
    z0 = x + y0 + 1.0
    state = [np.zeros(n), y0, z0,
             np.ones(n), x.copy(), x + 1.0, z0 * x,  # p_{k-2}, q_{k-2}, p_{k-1}, q_{k-1}
             np.zeros(n), np.zeros(n), np.zeros(n), -x,  # their derivatives in a
             (x + 1.0) / (z0 * x), (x + 1.0) / (z0 * z0 * x)]  # F and dF/da

    def step(idx, c, y, z, pm2, qm2, pm1, qm1, dpm2, dqm2, dpm1, dqm1, f, df):
        c = c + 1.0
        y = y + 1.0
        z = z + 2.0
        yc = y * c
        pk = pm1 * z - pm2 * yc
        qk = qm1 * z - qm2 * yc
        dpk = dpm1 * z - pm1 - dpm2 * yc + pm2 * c
        dqk = dqm1 * z - qm1 - dqm2 * yc + qm2 * c
        ok = qk != 0
        qs = np.where(ok, qk, 1.0)
        r = pk / qs
        dr = (dpk - r * dqk) / qs
        t = np.where(ok, np.abs((f - r) / r), 1.0)
        dt = np.where(ok, np.abs(df - dr), 1.0)
        f = np.where(ok, r, f)
        df = np.where(ok, dr, df)
        pm2, qm2, pm1, qm1 = pm1, qm1, pk, qk
        dpm2, dqm2, dpm1, dqm1 = dpm1, dqm1, dpk, dqk
        scale = np.where(np.abs(pk) > _BIG, 1.0 / _BIG, 1.0)
        pm2, qm2, pm1, qm1 = pm2 * scale, qm2 * scale, pm1 * scale, qm1 * scale
        dpm2, dqm2, dpm1, dqm1 = dpm2 * scale, dqm2 * scale, dpm1 * scale, dqm1 * scale
        done = ((t <= _EPS) & (dt <= _EPS * np.abs(df))) | (c > 1e6)
        return done, c, y, z, pm2, qm2, pm1, qm1, dpm2, dqm2, dpm1, dqm1, f, df

    out = _iterate(n, state, step)
    return out[11], out[12]


def _gamma_parts(a, x):
    """Shared core over finite a > 0, x > 0: (use_cf, log prefactor, value, d value / da)
    where value is S / a (series, P = e^lf * value) or F (continued fraction, Q = e^lf * F),
    and the derivative includes the prefactor's: d(e^lf value)/da = e^lf * dvalue."""
    use_cf = x >= a + 1.0
    lf = _log_gamma_factor(a, x)
    val = np.empty_like(a)
    dval = np.empty_like(a)
    i = ~use_cf
    if i.any():
        ai, xi = a[i], x[i]
        s, ds = _gamma_series(ai, xi)
        lx_psi = np.log(xi) - _sa.digamma_numpy(ai + 1.0)
        val[i] = s / ai
        dval[i] = (lx_psi * s + ds) / ai
    if use_cf.any():
        ac, xc = a[use_cf], x[use_cf]
        f, df = _gamma_cf(ac, xc)
        val[use_cf] = f
        dval[use_cf] = (np.log(xc) - _sa.digamma_numpy(ac)) * f + df
    return use_cf, lf, val, dval


def _gamma_special(a, x):
    """(regular mask, nan mask) shared by the incomplete gamma kernels."""
    nan = (np.isnan(a) | np.isnan(x) | (a < 0) | (x < 0) | ((a == 0) & (x == 0))
           | ((a == np.inf) & (x == np.inf)))
    regular = ~nan & (a > 0) & (a < np.inf) & (x > 0) & (x < np.inf)
    return regular, nan


def _small_a_q(a, x):
    """Q(a, x) for a <= 1/2 and x < a + 1, where 1 - P cancels (Cephes' igamc_series):
    Q = -expm1(a log x - lgamma(1 + a)) - x^a / Gamma(a) * sum_n>=1 (-x)^n / (n! (a + n))."""
    n = a.size

    def step(idx, k, fac, s):
        k = k + 1.0
        fac = fac * -x[idx] / k
        term = fac / (a[idx] + k)
        s = s + term
        return (np.abs(term) <= _EPS * np.abs(s)) | (k > 1000), k, fac, s

    s = _iterate(n, [np.zeros(n), np.ones(n), np.zeros(n)], step)[2]
    lx = np.log(x)
    lgamma1p = _sa._lgamma_2(a) - np.log1p(a)  # |a| <= 1/2: keeps lgamma(1 + a) ~ -0.58 a
    return -np.expm1(a * lx - lgamma1p) - np.exp(a * lx - lgamma1p) * a * s


def _igamma_core(a, x, upper):
    regular, nan = _gamma_special(a, x)
    # edges: a == 0 (x > 0): P = 1; x == 0 or a == inf: P = 0; x == inf: P = 1
    p_edge = np.where((x == 0) | (a == np.inf), 0.0, 1.0)
    out = np.where(nan, np.nan, 1.0 - p_edge if upper else p_edge)
    if regular.any():
        ar, xr = a[regular], x[regular]
        use_cf, lf, val, _ = _gamma_parts(ar, xr)
        part = np.exp(lf) * val
        want_cf = upper
        res = np.where(use_cf == want_cf, part, 1.0 - part)
        small = ~use_cf & (ar <= 0.5)
        if upper and small.any():
            res[small] = _small_a_q(ar[small], xr[small])
        out[regular] = res
    return np.clip(out, 0.0, 1.0) if out.size else out


def _igamma_grad_a_core(a, x):
    regular, nan = _gamma_special(a, x)
    nan = nan | (a == 0) | (x == np.inf) | (a == np.inf)
    out = np.where(nan, np.nan, 0.0)
    if regular.any():
        use_cf, lf, _, dval = _gamma_parts(a[regular], x[regular])
        out[regular] = np.where(use_cf, -1.0, 1.0) * np.exp(lf) * dval
    return out


def _random_gamma_grad_core(a, x):
    regular, nan = _gamma_special(a, x)
    nan = nan | (a == 0) | (x == np.inf) | (a == np.inf)
    out = np.where(nan, np.nan, 0.0)
    if regular.any():
        ar, xr = a[regular], x[regular]
        use_cf, _, _, dval = _gamma_parts(ar, xr)
        # dP/dx = e^lf / x, so -(dP/da) / (dP/dx) = -+x * dval, with no prefactor at all
        out[regular] = np.where(use_cf, 1.0, -1.0) * xr * dval
    return out


igamma_numpy = _elementwise(lambda a, x: _igamma_core(a, x, False))
igammac_numpy = _elementwise(lambda a, x: _igamma_core(a, x, True))
igamma_grad_a_numpy = _elementwise(_igamma_grad_a_core)
random_gamma_grad_numpy = _elementwise(_random_gamma_grad_core)


# ---------------------------------------------------------------------------------------------
# The incomplete beta function.

def _log_beta_factor(a, b, x):
    """log(x^a (1-x)^b / B(a, b)) for a, b > 0 and 0 < x < 1."""
    both = (a >= 10) & (b >= 10)
    ab, bb = np.where(both, a, 10.0), np.where(both, b, 10.0)
    xb = np.where(both, x, 0.5)
    s = ab + bb
    t1 = (s * xb - ab) / ab
    t2 = ((1.0 - xb) * s - bb) / bb
    stirling = (ab * _log1pmx(t1) + bb * _log1pmx(t2) + 0.5 * np.log(ab * bb / s) - _HALF_LOG_2PI
                + _stirling_corr(s) - _stirling_corr(ab) - _stirling_corr(bb))
    # one large parameter: lgamma(big + small) - lgamma(big) without the cancellation
    big_a = ~both & (a >= 10)
    big_b = ~both & (b >= 10)
    lo, hi = np.where(big_a, b, a), np.where(big_a, a, b)
    onebig = big_a | big_b
    hi_ = np.where(onebig, hi, 10.0)
    lo_ = np.where(onebig, lo, 1.0)
    diff = ((hi_ - 0.5) * np.log1p(lo_ / hi_) + lo_ * np.log(hi_ + lo_) - lo_
            + _stirling_corr(hi_ + lo_) - _stirling_corr(hi_))
    neg_lbeta = np.where(onebig, diff - _sa.lgamma_numpy(lo_),
                         _sa.lgamma_numpy(a + b) - _sa.lgamma_numpy(a) - _sa.lgamma_numpy(b))
    direct = a * np.log(x) + b * np.log1p(-x) + neg_lbeta
    return np.where(both, stirling, direct)


def _beta_cf(a, b, x):
    """Numerical Recipes' betacf: I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * h."""
    n = a.size
    qab, qap = a + b, a + 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)

    def fix(v):
        return np.where(np.abs(v) < _TINY, _TINY, v)

    def step(idx, m, c, d, h):
        aa_, bb_, xx = a[idx], b[idx], x[idx]
        m = m + 1.0
        m2 = 2.0 * m
        num = m * (bb_ - m) * xx / ((aa_ - 1.0 + m2) * (aa_ + m2))
        d = 1.0 / fix(1.0 + num * d)
        c = fix(1.0 + num / c)
        h = h * d * c
        num = -(aa_ + m) * (aa_ + bb_ + m) * xx / ((aa_ + m2) * (aa_ + 1.0 + m2))
        d = 1.0 / fix(1.0 + num * d)
        c = fix(1.0 + num / c)
        delta = d * c
        h = h * delta
        done = (np.abs(delta - 1.0) <= _EPS) | (m > 1e6)
        return done, m, c, d, h

    return _iterate(n, [np.zeros(n), np.ones(n), d, d.copy()], step)[3]


def _betainc_core(a, b, x):
    nan = (np.isnan(a) | np.isnan(b) | np.isnan(x) | (a < 0) | (b < 0) | (x < 0) | (x > 1)
           | ((a == 0) & (b == 0)) | ((a == np.inf) & (b == np.inf)))
    regular = ~nan & (a > 0) & (b > 0) & (x > 0) & (x < 1) & (a < np.inf) & (b < np.inf)
    # edges: x == 0 -> 0, x == 1 -> 1, a == 0 or b == inf -> 1, b == 0 or a == inf -> 0
    edge = np.where((x == 1) | (((a == 0) | (b == np.inf)) & (x > 0)), 1.0, 0.0)
    out = np.where(nan, np.nan, edge)
    if regular.any():
        ar, br, xr = a[regular], b[regular], x[regular]
        swap = xr > (ar + 1.0) / (ar + br + 2.0)
        a1, b1 = np.where(swap, br, ar), np.where(swap, ar, br)
        x1 = np.where(swap, 1.0 - xr, xr)
        h = _beta_cf(a1, b1, x1)
        part = np.exp(_log_beta_factor(a1, b1, x1)) * h / a1
        out[regular] = np.clip(np.where(swap, 1.0 - part, part), 0.0, 1.0)
    return out


betainc_numpy = _elementwise(_betainc_core)


# ---------------------------------------------------------------------------------------------
# Public entry points: SciPy when allowed (patched to JAX's special values), else NumPy.

def _use_scipy():
    return USE_SCIPY and _sa.scipy_special() is not None


def _scipy_gamma(fn, upper):
    def core(a, x):
        y = fn(a, x)  # (SciPy 1.15 gives 0 or 1 for some NaN arguments: JAX's NaN here)
        return np.where(((a == 0) & (x == 0)) | np.isnan(a) | np.isnan(x), np.nan, y)
    return _elementwise(core)


def igamma(a, x):
    """P(a, x) = gamma(a, x) / Gamma(a), elementwise; the dtype is a's."""
    if _use_scipy():
        return _scipy_gamma(_sa.scipy_special().gammainc, False)(a, x)
    return igamma_numpy(a, x)


def igammac(a, x):
    """Q(a, x) = 1 - P(a, x), accurate where it is small."""
    if _use_scipy():
        return _scipy_gamma(_sa.scipy_special().gammaincc, True)(a, x)
    return igammac_numpy(a, x)


def igamma_grad_a(a, x):
    """dP(a, x)/da (SciPy has no counterpart: always NumPy)."""
    return igamma_grad_a_numpy(a, x)


def random_gamma_grad(a, x):
    """-(dP/da) / (dP/dx): the derivative of a Gamma(a, 1) sample x with respect to a."""
    return random_gamma_grad_numpy(a, x)


def betainc(a, b, x):
    """I_x(a, b) = B(x; a, b) / B(a, b), elementwise; the dtype is a's."""
    if _use_scipy():
        return _elementwise(_sa.scipy_special().betainc)(a, b, x)
    return betainc_numpy(a, b, x)
