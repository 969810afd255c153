"""Special functions in pure NumPy: erf, erfc, erf_inv, lgamma, digamma, polygamma.

Why this module exists: didax must run with NumPy alone, so the lax special-function primitives
need real vectorized algorithms.  SciPy, when importable, is only a faster path: the public
functions dispatch to it while `USE_SCIPY` is true, and every function has a `*_numpy` twin that
never touches SciPy (that is the code the tests verify).  Both paths agree on special values.

Conventions shared by every function:
  * input is anything `np.asarray` accepts; float16/float32/float64 (and longdouble) keep their
    dtype, other real dtypes (bool, ints) are computed and returned as float64;
  * arithmetic is done in float64 and the result is rounded once to the input dtype;
  * 0-d and empty arrays work, NaN in gives NaN out, and no NumPy floating-point warning escapes.

Algorithms (measured against mpmath: <= ~4e-15 relative in float64, except where the function
has a zero on the negative axis and the reflection formula cancels; there the error is ~1e-16
of the size of the reflection terms):
  * erf/erfc: W. J. Cody's rational Chebyshev approximations (CALERF), with the exp(-x*x) factor
    split so it stays accurate in the erfc tail (erfc(26) ~ 5.7e-296 to full precision).
  * erf_inv: Giles' single-precision approximation (~5e-7), then one Halley step (cubic, so
    ~1e-17) on erf for |x| <= 0.49 and on erfc(y) = 1 - |x| (1 - |x| is exact) above, so the tails
    near +-1 are accurate; past Giles' range (1 - |x| < 6e-8) an asymptotic start + 3 steps.
  * lgamma: Taylor series of lgamma(2 + e) for |e| <= 1/2 (reached by at most 8 exact shifts),
    Stirling's series for x >= 10, reflection log(pi / |sin(pi x)|) - lgamma(1 - x) for x <= -1/2.
  * digamma: upward recurrence to x >= 10 then the asymptotic series; Taylor series around the
    positive zero 1.4616... and the zero at -0.5040... for relative accuracy there; reflection
    psi(x) = psi(1 - x) - pi cot(pi x) for x < 0.
  * polygamma(n >= 1): recurrence to x >= n + 8, then the asymptotic series; the result is
    assembled as mantissa * 2**exponent so that e.g. polygamma(170, 185) does not underflow on the
    way; negative non-integer x by differentiating the reflection formula (exact integer
    polynomials in cot(pi x)).
"""
from __future__ import annotations

import functools
import importlib.util
import math
from fractions import Fraction

import numpy as np

from didax._src import dtypes

__all__ = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma",
           "erf_numpy", "erfc_numpy", "erf_inv_numpy", "lgamma_numpy", "digamma_numpy",
           "polygamma_numpy", "USE_SCIPY"]

#: Dispatch the public functions to scipy.special when it is importable.  Set to False to force
#: the NumPy implementations everywhere (tests call the `*_numpy` functions directly instead).
USE_SCIPY = importlib.util.find_spec("scipy") is not None


@functools.cache
def scipy_special():
    """scipy.special (an optional fast path, never required for correctness), or None;
    imported at its first use: importing it takes a third of a second."""
    try:
        import scipy.special
    except Exception:  # pragma: no cover - depends on the machine
        return None
    return scipy.special

_PI = math.pi
_LOG_PI = math.log(math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_INV_SQRT_PI = 0.56418958354775628695  # 1 / sqrt(pi)
_TWO_OVER_SQRT_PI = 1.1283791670955125739  # 2 / sqrt(pi)


# ---------------------------------------------------------------------------------------------
# Shared plumbing.

def _as_float(x):
    """Return (flat float64 copy, original shape, output dtype); rejects complex input."""
    a = np.asarray(x)
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        raise TypeError(f"special functions do not accept complex input, got {a.dtype}")
    out_dtype = a.dtype if dtypes.issubdtype(a.dtype, np.floating) else np.dtype(np.float64)
    return np.array(a, dtype=np.float64).reshape(-1), a.shape, out_dtype


def _finish(y, shape, dtype):
    """Reshape the float64 result and cast it once to the caller's dtype (a 0-d stays 0-d);
    overflow in the cast (lgamma(3e38) in float32) rounds to inf silently."""
    with np.errstate(over="ignore"):
        return np.asarray(y, dtype=np.float64).reshape(shape).astype(dtype, copy=False)


def _unary(core):
    """Wrap a flat float64 -> float64 kernel into a dtype/shape preserving array function."""
    def run(x):
        flat, shape, dtype = _as_float(x)
        with np.errstate(all="ignore"):
            y = core(flat) if flat.size else flat
        return _finish(y, shape, dtype)
    return run


def _horner(coeffs, t):
    """Evaluate sum(coeffs[i] * t**i); coefficients are Python floats, lowest order first."""
    acc = np.full_like(t, coeffs[-1])
    for c in coeffs[-2::-1]:
        acc = acc * t + c
    return acc


def _frac_part(x):
    """r = x - round(x) in [-1/2, 1/2] (exact in binary floating point) and the rounded value."""
    n = np.round(x)
    return x - n, n


def _cotpi(r):
    """cot(pi r) for r in [-1/2, 1/2]; past |r| = 1/4 it is tan(pi (1/2 - |r|)) with 1/2 - |r|
    exact, because tan(pi r) itself is ill-conditioned next to the half-integers."""
    a = np.abs(r)
    c = np.where(a > 0.25, np.tan(_PI * (0.5 - a)), 1.0 / np.tan(_PI * a))
    return np.copysign(c, r)


# Bernoulli numbers B_2, B_4, ..., B_30 (exact rationals; converted where needed).
_BERN = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
         Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798),
         Fraction(-174611, 330), Fraction(854513, 138), Fraction(-236364091, 2730),
         Fraction(8553103, 6), Fraction(-23749461029, 870), Fraction(8615841276005, 14322)]


# ---------------------------------------------------------------------------------------------
# erf / erfc: W. J. Cody, "Rational Chebyshev approximations for the error function",
# Math. Comp. 23 (1969), coefficients as in the SPECFUN routine CALERF.

_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
          2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
          2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
          1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3)
_ERF_THRESH = 0.46875


def _erf_small(x):
    """erf(x) for |x| <= 0.46875 (Cody's first approximation; relative error ~1e-18)."""
    ysq = x * x
    num = _ERF_A[4] * ysq
    den = ysq
    for i in range(3):
        num = (num + _ERF_A[i]) * ysq
        den = (den + _ERF_B[i]) * ysq
    return x * (num + _ERF_A[3]) / (den + _ERF_B[3])


def _erfc_pos(y):
    """erfc(y) for y >= 0.46875, accurate in the far tail (exp(-y*y) is split in two factors)."""
    y = np.minimum(y, 40.0)  # erfc(y) underflows to 0 well before 40; keeps inf from making nan
    out = np.empty_like(y)
    mid = y <= 4.0
    if mid.any():
        t = y[mid]
        num = _ERF_C[8] * t
        den = t
        for i in range(7):
            num = (num + _ERF_C[i]) * t
            den = (den + _ERF_D[i]) * t
        out[mid] = (num + _ERF_C[7]) / (den + _ERF_D[7])
    far = ~mid
    if far.any():
        t = y[far]
        w = 1.0 / (t * t)
        num = _ERF_P[5] * w
        den = w
        for i in range(4):
            num = (num + _ERF_P[i]) * w
            den = (den + _ERF_Q[i]) * w
        r = w * (num + _ERF_P[4]) / (den + _ERF_Q[4])
        out[far] = (_INV_SQRT_PI - r) / t
    # exp(-y*y) = exp(-h*h) * exp(-(y - h)(y + h)) with h = y rounded down to 1/16: h*h is exact.
    h = np.trunc(y * 16.0) / 16.0
    return np.exp(-h * h) * np.exp(-(y - h) * (y + h)) * out


def _erf_core(x):
    a = np.abs(x)
    small = a <= _ERF_THRESH
    out = np.empty_like(x)
    out[small] = _erf_small(x[small])
    big = ~small  # includes NaN, which propagates through the arithmetic
    if big.any():
        xb = x[big]
        out[big] = np.copysign((0.5 - _erfc_pos(np.abs(xb))) + 0.5, xb)
    return out


def _erfc_core(x):
    a = np.abs(x)
    small = a <= _ERF_THRESH
    out = np.empty_like(x)
    out[small] = 1.0 - _erf_small(x[small])
    big = ~small
    if big.any():
        xb = x[big]
        e = _erfc_pos(np.abs(xb))
        out[big] = np.where(xb < 0, 2.0 - e, e)
    return out


erf_numpy = _unary(_erf_core)
erf_numpy.__name__ = "erf_numpy"
erf_numpy.__doc__ = "Error function, NumPy-only path (Cody's rational approximations)."
erfc_numpy = _unary(_erfc_core)
erfc_numpy.__name__ = "erfc_numpy"
erfc_numpy.__doc__ = "1 - erf(x) without cancellation in the tail, NumPy-only path."


# ---------------------------------------------------------------------------------------------
# erf_inv

def _erf_inv_guess(a):
    """Giles (2010) single-precision erfinv for 0 <= a < 1: ~4e-7 relative, a good Halley start.

    Past its design range (1 - a < 6e-8) the polynomial is replaced by the asymptotic inversion
    of erfc(y) ~ exp(-y*y) / (y sqrt(pi)), which is good to ~1e-3 there.
    """
    w = -np.log((1.0 - a) * (1.0 + a))
    out = np.empty_like(a)
    lo = w < 5.0
    t = w[lo] - 2.5
    out[lo] = a[lo] * _horner((1.50140941, 0.246640727, -0.00417768164, -0.00125372503,
                               0.00021858087, -4.39150654e-06, -3.5233877e-06, 3.43273939e-07,
                               2.81022636e-08), t)
    mid = ~lo & (a <= 1.0 - 6e-8)
    t = np.sqrt(w[mid]) - 3.0
    out[mid] = a[mid] * _horner((2.83297682, 1.00167406, 0.00943887047, -0.0076224613,
                                 0.00573950773, -0.00367342844, 0.00134934322, 0.000100950558,
                                 -0.000200214257), t)
    hi = ~lo & ~mid
    L = -np.log1p(-a[hi])  # -log(erfc(y))
    y = np.sqrt(L)
    for _ in range(3):
        y = np.sqrt(L - np.log(y * math.sqrt(math.pi)))
    out[hi] = y
    return out


def _erf_inv_halley(y, a):
    """One Halley step for erf(y) = a, 0 <= a < 1; cubic convergence, so one step takes Giles'
    ~5e-7 start to ~1e-17.  For a > 0.49 the residual is (1 - a) - erfc(y) with 1 - a exact, so
    it keeps full relative accuracy as a -> 1 (the center stays inside Cody's erf interval)."""
    center = a <= 0.49
    f = np.empty_like(y)
    f[center] = _erf_small(y[center]) - a[center]
    tail = ~center
    f[tail] = (1.0 - a[tail]) - _erfc_pos(y[tail])
    d = f / (_TWO_OVER_SQRT_PI * np.exp(-y * y))
    return y - d / (1.0 + y * d)


def _erf_inv_core(x):
    a = np.abs(x)
    out = np.full_like(x, np.nan)
    out[a == 1.0] = np.copysign(np.inf, x[a == 1.0])
    ok = a < 1.0  # NaN and |x| > 1 stay NaN
    a = a[ok]
    y = _erf_inv_halley(_erf_inv_guess(a), a)
    far = np.nonzero(a > 1.0 - 6e-8)[0]  # the asymptotic start (~1e-3) needs two more steps
    if far.size:
        yf, af = y[far], a[far]
        for _ in range(2):
            yf = _erf_inv_halley(yf, af)
        y[far] = yf
    out[ok] = np.copysign(y, x[ok])
    return out


erf_inv_numpy = _unary(_erf_inv_core)
erf_inv_numpy.__name__ = "erf_inv_numpy"
erf_inv_numpy.__doc__ = "Inverse of erf on [-1, 1] (+-1 -> +-inf, |x| > 1 -> nan), NumPy-only."


# ---------------------------------------------------------------------------------------------
# lgamma

# Taylor coefficients of lgamma(2 + e): (1 - euler_gamma), then (-1)^k (zeta(k) - 1) / k for
# k = 2..29 (computed with mpmath at 40 digits).  |e| <= 1/2 needs ~26 terms for 1e-17.
_LG2 = (0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546,
        -0.007385551028673986, 0.0028905103307415234, -0.001192753911703261,
        0.0005096695247430425, -0.00022315475845357939, 9.945751278180853e-05,
        -4.492623673813314e-05, 2.050721277567069e-05, -9.439488275268397e-06,
        4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07,
        -4.492469198764566e-07, 2.1207184805554665e-07, -1.0043224823968099e-07,
        4.7698101693639804e-08, -2.2711094608943164e-08, 1.0838659214896955e-08,
        -5.183475041970047e-09, 2.4836745438024785e-09, -1.1921401405860912e-09,
        5.731367241678862e-10, -2.7595228851242334e-10, 1.330476437424449e-10,
        -6.4229645638381e-11)
# Stirling: sum_k B_2k / (2k (2k - 1) x^(2k - 1)), as a polynomial in 1/x^2 (times 1/x).
_STIRLING = tuple(float(b / (2 * k * (2 * k - 1))) for k, b in enumerate(_BERN[:9], start=1))


def _lgamma_2(e):
    """lgamma(2 + e) for |e| <= 1/2; relative accuracy holds near the zero at e = 0."""
    return e * _horner(_LG2, e)


def _lgamma_pos(x):
    """lgamma for finite x > 0 (flat float64)."""
    out = np.empty_like(x)
    small = x < 0.5  # Gamma(x) = Gamma(2 + x) / (x (1 + x))
    xs = x[small]
    out[small] = _lgamma_2(xs) - np.log(xs) - np.log1p(xs)
    near1 = (x >= 0.5) & (x < 1.5)  # Gamma(x) = Gamma(x + 1) / x, with e = x - 1 exact
    xs = x[near1]
    out[near1] = _lgamma_2(xs - 1.0) - np.log(xs)
    mid = (x >= 1.5) & (x < 10.0)  # shift down to [1.5, 2.5): exact subtractions, product <1e8
    if mid.any():
        xs = x[mid]
        m = np.floor(xs - 1.5)
        e = (xs - m) - 2.0
        prod = np.ones_like(xs)
        idx = np.nonzero(m > 0)[0]
        k = 1
        while idx.size:
            prod[idx] *= xs[idx] - k
            k += 1
            idx = idx[m[idx] >= k]
        out[mid] = _lgamma_2(e) + np.log(prod)
    big = x >= 10.0
    if big.any():
        xs = x[big]
        w = 1.0 / (xs * xs)
        out[big] = ((xs - 0.5) * (np.log(xs) - 1.0) + (_HALF_LOG_2PI - 0.5)
                    + _horner(_STIRLING, w) / xs)
    return out


def _lgamma_core(x):
    out = np.empty_like(x)
    out[np.isnan(x)] = np.nan
    out[np.isinf(x)] = np.inf  # lgamma(-inf) = +inf as in C99 (scipy's gammaln gives -inf)
    fin = np.isfinite(x)
    pos = fin & (x >= 0.5)
    out[pos] = _lgamma_pos(x[pos])
    small = fin & (np.abs(x) < 0.5)  # also covers (-1/2, 0): Gamma(x) = Gamma(2+x)/(x(1+x))
    xs = x[small]
    out[small] = _lgamma_2(xs) - np.log(np.abs(xs)) - np.log1p(xs)  # x = 0 -> +inf
    neg = fin & (x <= -0.5)
    if neg.any():
        xs = x[neg]
        r, _ = _frac_part(xs)
        s = np.abs(np.sin(_PI * r))  # |sin(pi x)|, with the argument reduced exactly
        val = _LOG_PI - np.log(s) - _lgamma_pos(1.0 - xs)
        out[neg] = np.where(r == 0.0, np.inf, val)
    return out


lgamma_numpy = _unary(_lgamma_core)
lgamma_numpy.__name__ = "lgamma_numpy"
lgamma_numpy.__doc__ = "log|Gamma(x)| for all real x (poles -> inf, +-inf -> inf), NumPy-only."


# ---------------------------------------------------------------------------------------------
# digamma

# Zeros of psi split in two doubles (hi + lo), and Taylor coefficients psi^(k)(x0) / k!.
_PSI_X0 = (1.4616321449683622, 9.549995429965697e-17)
_PSI_X0_TAYLOR = (0.9676722454476212, -0.4427631689835921, 0.258499760955651,
                  -0.16394270544240652, 0.10782405069126237, -0.07219956125645471,
                  0.04880428816414311, -0.03316112647484736, 0.022597648232218104,
                  -0.01542476590494896, 0.010538791616612175, -0.007204534386356869,
                  0.004926781395729853, -0.003369801655439328, 0.002305126326734928,
                  -0.0015769367714301972, 0.0010788252019162967, -0.0007380709389960052,
                  0.000504953265834602, -0.0003454680251063077, 0.00023635601564027053,
                  -0.00016170622091974803, 0.0001106337276874741)
_PSI_XN = (-0.5040830082644554, -8.15428206243813e-18)
_PSI_XN_TAYLOR = (8.939798558792134, -0.8093454625306507, 32.258572064915505,
                  -2.761011648790828, 128.27342343090902, -14.70672173553036, 513.2704629562862,
                  -75.37700066344631, 2055.5357119463315, -368.5783503832191, 8234.667099203069,
                  -1743.364608867363, 32997.785655255044, -8051.818155363498,
                  132262.95480834588, -36529.94596948565, 530280.3912420176,
                  -163451.79342700253, 2126602.3725968753, -723318.8861804305,
                  8530604.878543982, -3172131.3155744765, 34228316.69580112,
                  -13807481.997263888, 137373435.87411496)
# Asymptotic series psi(z) ~ log z - 1/(2z) - sum_k B_2k / (2k z^2k), as a polynomial in 1/z^2.
_PSI_ASYM = tuple(float(b / (2 * k)) for k, b in enumerate(_BERN[:8], start=1))


def _psi_pos(x):
    """digamma for finite x > 0 (flat float64)."""
    out = np.empty_like(x)
    root = np.abs(x - _PSI_X0[0]) < 0.25
    if root.any():
        d = (x[root] - _PSI_X0[0]) - _PSI_X0[1]
        out[root] = d * _horner(_PSI_X0_TAYLOR, d)
    rest = ~root
    xs = x[rest]
    m = np.maximum(np.ceil(10.0 - xs), 0.0)  # psi(x) = psi(x + m) - sum_{k<m} 1 / (x + k)
    z = xs + m
    acc = np.zeros_like(xs)
    idx = np.nonzero(m > 0)[0]
    k = 0
    while idx.size:
        acc[idx] += 1.0 / (xs[idx] + k)
        k += 1
        idx = idx[m[idx] > k]
    w = 1.0 / (z * z)
    out[rest] = (np.log(z) - 0.5 / z - w * _horner(_PSI_ASYM, w)) - acc
    return out


def _digamma_core(x):
    out = np.empty_like(x)
    out[np.isnan(x)] = np.nan
    out[x == np.inf] = np.inf
    out[x == -np.inf] = np.nan
    out[x == 0] = np.where(np.signbit(x[x == 0]), np.inf, -np.inf)  # like scipy: -1/x limit
    pos = np.isfinite(x) & (x > 0)
    out[pos] = _psi_pos(x[pos])
    neg = np.isfinite(x) & (x < 0)
    if neg.any():
        xs = x[neg]
        r, _ = _frac_part(xs)
        val = _psi_pos(1.0 - xs) - _PI * _cotpi(r)  # reflection, exact reduction of pi*x
        nr = np.abs(xs - _PSI_XN[0]) < 0.1
        d = (xs[nr] - _PSI_XN[0]) - _PSI_XN[1]
        val[nr] = d * _horner(_PSI_XN_TAYLOR, d)
        out[neg] = np.where(r == 0.0, np.nan, val)  # poles at negative integers: nan (scipy)
    return out


digamma_numpy = _unary(_digamma_core)
digamma_numpy.__name__ = "digamma_numpy"
digamma_numpy.__doc__ = """psi(x) = d/dx lgamma(x), NumPy-only path.

Special values follow scipy.special.digamma: psi(+0) = -inf, psi(-0) = +inf (the sign of the
-1/x pole), nan at negative integers and at -inf, psi(+inf) = +inf.
"""


# ---------------------------------------------------------------------------------------------
# polygamma

_PG_SHIFT = 8  # asymptotic series used for z >= n + 8: 14 terms give < 1e-18 relative
_PG_TERMS = 14


def _fact_mant_exp(n):
    """n! as (mantissa in [0.5, 1), binary exponent) for any n >= 0, without overflow."""
    f = math.factorial(n)
    e = f.bit_length()
    shift = max(e - 64, 0)
    return (f >> shift) / 2.0 ** (e - shift), e


def _pow(b, p):
    """b**p for a Python int p >= 1: plain products for p <= 8 (np.power is ~10x slower per
    element), np.power beyond, where the products' rounding errors would add up."""
    if p > 8:
        return np.power(b, float(p))
    r = b
    for _ in range(p - 1):
        r = r * b
    return r


@functools.lru_cache(maxsize=256)
def _pg_asym_coeffs(n):
    """d_k = B_2k / (2k)! * (n+1)(n+2)...(n+2k-1), k = 1.._PG_TERMS, as Python floats."""
    out = []
    for k in range(1, _PG_TERMS + 1):
        prod = math.prod(range(n + 1, n + 2 * k))
        out.append(float(_BERN[k - 1] * prod / math.factorial(2 * k)))
    return tuple(out)


def _polygamma_pos(n, x):
    """psi^(n)(x) for a Python int n >= 1 and finite x > 0 (flat float64).

    psi^(n)(x) = (-1)^(n+1) n! x^-(n+1) S with S = sum_{k<M} (x/(x+k))^(n+1) + (x/z)^(n+1) T(z),
    z = x + M >= n + 8, and T(z) = z/n + 1/2 + (1/z) sum_k d_k / z^(2k-2) the asymptotic series.
    Keeping S relative to x and assembling n! x^-(n+1) as mantissa * 2**exponent avoids spurious
    overflow/underflow for large n (e.g. polygamma(170, 185.) ~ -2.5e-81 comes out right).
    """
    p = n + 1
    z0 = float(n + _PG_SHIFT)
    coeffs = _pg_asym_coeffs(n)

    def series_t(z):
        w = 1.0 / (z * z)
        return z / n + 0.5 + _horner(coeffs, w) / z

    s = np.empty_like(x)
    near = x < z0
    far = ~near
    s[far] = series_t(x[far])
    if near.any():
        xs = x[near]
        steps = int(z0)  # the same shift for every element keeps the loop free of gathers
        acc = np.ones_like(xs)  # k = 0 term
        for k in range(1, steps):
            acc += _pow(xs / (xs + k), p)
        z = xs + steps
        s[near] = acc + _pow(xs / z, p) * series_t(z)
    xm, xe = np.frexp(x)
    low = xm < math.sqrt(0.5)  # mantissa in [1/sqrt2, sqrt2): xm^-p stays finite for p < 2000
    xm = np.where(low, 2.0 * xm, xm)
    xe = np.where(low, xe - 1, xe).astype(np.int64)
    fm, fe = _fact_mant_exp(n)
    mant = (fm * s) * np.power(xm, -float(p))
    expo = np.clip(fe - p * xe, -(2 ** 30), 2 ** 30).astype(np.int32)
    return np.ldexp(mant if n % 2 else -mant, expo)


_PG_MAX_ORDER = 1000  # larger n gives nan: the mantissa/exponent assembly is sized for this
_PG_NEG_MAX = 150  # from n = 151 on, n! 2^(n+1) overflows: every negative result does


def _pow_sign(r, p):
    """Sign of r**p for an integer p (no magnitude computed)."""
    return np.where((r < 0) & (p % 2 == 1), -1.0, 1.0)


@functools.lru_cache(maxsize=64)
def _cot_deriv_poly(n):
    """Integer coefficients of P_n with d^n/dt^n cot(t) = P_n(cot t); P_(k+1) = -(1+c^2) P_k'."""
    p = [0, 1]
    for _ in range(n):
        dp = [i * p[i] for i in range(1, len(p))] or [0]
        q = [0] * (len(dp) + 2)
        for i, c in enumerate(dp):
            q[i] -= c
            q[i + 2] -= c
        p = q
    return tuple(p)


def _polygamma_core(n, x):
    """Flat float64 n (already validated: integer >= 0 or nan) and x."""
    out = np.full_like(x, np.nan)
    valid = (n >= 0) & (n <= _PG_MAX_ORDER) & (n == np.floor(n)) & ~np.isnan(x)
    zero = valid & (n == 0)
    if zero.any():
        out[zero] = _digamma_core(x[zero])
    v = valid & (n >= 1)
    sign = np.where(n % 2 == 1, 1.0, -1.0)  # (-1)^(n+1)
    inf = v & (x == np.inf)
    out[inf] = sign[inf] * 0.0
    pos = v & np.isfinite(x) & (x > 0)
    for nv in np.unique(n[pos]):
        sel = pos & (n == nv)
        out[sel] = _polygamma_pos(int(nv), x[sel])
    negz = v & np.isfinite(x) & (x <= 0)  # x = -inf stays nan: no limit exists
    if negz.any():
        xs, ns = x[negz], n[negz]
        r, _ = _frac_part(xs)
        pole = r == 0.0
        val = sign[negz] * np.inf  # scipy: (-1)^(n+1) * inf at 0 and the negative integers
        ok = ~pole
        if ok.any():
            xo, no, ro = xs[ok], ns[ok], r[ok]
            # psi^(n)(x) = (-1)^n psi^(n)(1-x) - pi^(n+1) P_n(cot(pi x)); P_n is odd for even n,
            # so at half-integers (cot = 0 exactly) only the first term remains.
            c = _cotpi(ro)  # exactly 0 at the half-integers
            val_ok = np.empty_like(xo)
            for nv in np.unique(no):
                sel = no == nv
                nv = int(nv)
                refl = _polygamma_pos(nv, 1.0 - xo[sel])
                refl = -refl if nv % 2 else refl
                cs = c[sel]
                if nv > _PG_NEG_MAX:
                    # n! / |x - round(x)|^(n+1) >= n! 2^(n+1) ~ overflows: the nearest pole wins.
                    near = (1.0 if nv % 2 else -1.0) * _pow_sign(ro[sel], nv + 1) * np.inf
                    val_ok[sel] = np.where((cs == 0.0) & (nv % 2 == 0), refl, near)
                    continue
                coeffs = _cot_deriv_poly(nv)
                par = (nv + 1) % 2
                # pi^(n+1) P_n(c) = sum_j a_j pi^(n+1-j) u^j with u = pi c: no early overflow.
                # Coefficients are scaled by 2^-sh (sh > 0 only for n close to 150) and the
                # scale is undone with ldexp, so only a result that really overflows is inf.
                sh = max(0, max(abs(a) for a in coeffs).bit_length() + 2 * nv - 1000)
                even = [coeffs[i] / (1 << sh) * _PI ** (nv + 1 - i)
                        for i in range(par, len(coeffs), 2)]
                u = _PI * cs
                poly = _horner(even, u * u)
                if par:
                    poly = poly * u
                if sh:
                    poly = np.ldexp(poly, sh)
                val_ok[sel] = refl - poly
            val[ok] = val_ok
        out[negz] = val
    return out


def polygamma_numpy(n, x):
    """n-th derivative of digamma, NumPy-only path; n broadcasts against x, output dtype is x's.

    n must hold integers 0 <= n <= 1000 (non-integer or negative n -> nan, as in scipy; n > 1000
    -> nan too).  At the poles x = 0, -1, -2, ... the result is (-1)^(n+1) * inf like scipy;
    x = -inf gives nan (scipy returns inf there, but no limit exists).
    """
    xa = np.asarray(x)
    na = np.asarray(n)
    if dtypes.issubdtype(na.dtype, np.complexfloating):
        raise TypeError("polygamma does not accept a complex order n")
    flat, _, dtype = _as_float(xa)
    shape = np.broadcast_shapes(na.shape, xa.shape)
    xb = np.broadcast_to(flat.reshape(xa.shape), shape).reshape(-1)
    nb = np.broadcast_to(np.asarray(na, dtype=np.float64), shape).reshape(-1)
    with np.errstate(all="ignore"):
        y = _polygamma_core(nb.copy(), xb.copy()) if xb.size else xb.copy()
    return _finish(y, shape, dtype)


# ---------------------------------------------------------------------------------------------
# Public entry points: scipy when allowed, otherwise the NumPy kernels.  The scipy results are
# patched where scipy's convention differs, so both paths agree on special values.

def _use_scipy():
    return USE_SCIPY and scipy_special() is not None


def _scipy_unary(fn, fix=None):
    def run(x):
        flat, shape, dtype = _as_float(x)
        with np.errstate(all="ignore"):
            y = fn(flat)
            if fix is not None:
                y = fix(flat, y)
        return _finish(y, shape, dtype)
    return run


def _fix_lgamma(x, y):
    return np.where(x == -np.inf, np.inf, y)


def erf(x):
    """Error function 2/sqrt(pi) * int_0^x exp(-t^2) dt, elementwise, dtype preserving."""
    if _use_scipy():
        return _scipy_unary(scipy_special().erf)(x)
    return erf_numpy(x)


def erfc(x):
    """Complementary error function 1 - erf(x), accurate in the tail (erfc(10) ~ 2.09e-45)."""
    if _use_scipy():
        return _scipy_unary(scipy_special().erfc)(x)
    return erfc_numpy(x)


def erf_inv(x):
    """Inverse error function on (-1, 1); erf_inv(+-1) = +-inf and |x| > 1 gives nan."""
    if _use_scipy():
        return _scipy_unary(scipy_special().erfinv)(x)
    return erf_inv_numpy(x)


def lgamma(x):
    """log|Gamma(x)|; poles (0, -1, -2, ...) and +-inf give +inf."""
    if _use_scipy():
        return _scipy_unary(scipy_special().gammaln, _fix_lgamma)(x)
    return lgamma_numpy(x)


def digamma(x):
    """psi(x); special values as in scipy: psi(+-0) = -+inf, nan at negative integers and -inf."""
    if _use_scipy():
        return _scipy_unary(scipy_special().psi)(x)
    return digamma_numpy(x)


def polygamma(n, x):
    """psi^(n)(x) for integer n >= 0 broadcast against x; the result has x's dtype.

    Always uses the NumPy kernel: it is faster than scipy's gamma(n+1) * zeta(n+1, x), which
    also underflows or gives nan for large n (e.g. polygamma(170, 185.) = -2.5e-81, not -0).
    """
    return polygamma_numpy(n, x)
