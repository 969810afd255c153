"""hyp1f1 in float64 against mpmath over grids of the parameters and x: the accuracy its
docstring claims; and the recurrences it takes where the series cancels, under jit, vmap and
differentiation."""
import itertools

import mpmath
import numpy as np

import didax
import didax.scipy.special as special
from didax._src.config import enable_x64
from didax.test_util import check_grads
from tests._src.scipy.mpmath_accuracy import assert_accurate

# Parameters are dyadic, so that c - a - b and the like are what they look like.
PARAMS_1F1 = [0.25, 1.0, 2.5, 7.75, 19.875]
X_1F1 = [-200.0, -60.0, -35.0, -10.0, -1.25, -0.01, 0.0, 0.01, 0.875, 5.0, 17.0, 30.0, 60.0,
         120.0, 200.0]


def test_hyp1f1_float64_as_mpmath():
    # alpha = a (x >= 0) or b - a (x < 0) >= 0: no cancellation
    grid = [(a, b, x) for a, b, x in itertools.product(PARAMS_1F1, PARAMS_1F1, X_1F1)
            if x >= 0 or b >= a]
    grid += [(a, b, x) for a, b, x in itertools.product([-0.5, -1.5, -3.25], PARAMS_1F1, X_1F1)]
    grid += [(a, b, x) for a, b, x in itertools.product(PARAMS_1F1, [-0.5, -2.5, -6.75], X_1F1)
             if x >= 0]
    assert_accurate(special.hyp1f1, mpmath.hyp1f1, grid, 1e-13)


def test_hyp1f1_float64_where_the_sum_cancels():
    """alpha a negative non-integer of larger magnitude, and a Laguerre polynomial (a a
    non-positive integer) at large x: the sums in double-double."""
    larger_alpha = [(a, b, x) for a, b, x in itertools.product(PARAMS_1F1, PARAMS_1F1, X_1F1)
                    if x < 0 and b < a]
    larger_alpha += list(itertools.product([-19.875, -7.75], [0.25, 2.5], X_1F1[8:]))
    assert_accurate(special.hyp1f1, mpmath.hyp1f1, larger_alpha, 1e-13)
    laguerre = [(a, b, x) for a, b, x in itertools.product(
        [-2.0, -5.0, -10.0, -20.0], PARAMS_1F1 + [-0.5, -30.5], X_1F1) if b > a]
    assert_accurate(special.hyp1f1, mpmath.hyp1f1, laguerre, 1e-13)


def test_hyp1f1_float64_larger_parameters():
    params = [-31.25, -0.5, 0.25, 3.5, 31.25]
    grid = [(a, b, x) for a, b, x in itertools.product(params, params, [-40.0, -8.0, 8.0, 40.0])
            if 30 < max(abs(a), abs(b)) and not (b < 0 and x > 0 and a < b)]
    assert_accurate(special.hyp1f1, mpmath.hyp1f1, grid, 1e-13)


def _assert_within_conditioning(points, rtol=1e-13):
    """|error| <= rtol |1F1| + eps (|a d/da| + |b d/db| + |x d/dx|) |1F1|: relative, except
    near 1F1's zeros, where the error allowed is what rounding the arguments by an ulp
    changes (the derivatives in the parameters by central differences in mpmath)."""
    points = np.array(points, dtype=np.float64)
    h = mpmath.mpf("1e-15")
    want, scale = [], []
    with mpmath.workdps(40):
        for a, b, x in points:
            a, b, x = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(x)
            value = mpmath.hyp1f1(a, b, x)
            along_a = (mpmath.hyp1f1(a + a * h, b, x) - mpmath.hyp1f1(a - a * h, b, x)) / (2 * h)
            along_b = (mpmath.hyp1f1(a, b + b * h, x) - mpmath.hyp1f1(a, b - b * h, x)) / (2 * h)
            along_x = x * a / b * mpmath.hyp1f1(a + 1, b + 1, x)
            want.append(float(value))
            scale.append(float(abs(along_a) + abs(along_b) + abs(along_x)))
    with enable_x64():
        got = np.asarray(special.hyp1f1(*points.T))
    error = np.abs(got - np.array(want))
    allowed = rtol * np.abs(want) + np.finfo(np.float64).eps * np.array(scale)
    worst = np.argmax(error / allowed)
    assert error[worst] <= allowed[worst], (error[worst] / abs(want[worst]), points[worst])


def test_hyp1f1_float64_alpha_far_below_zero():
    """alpha = a (x > 0) or b - a (x < 0) down to -200 at t up to 200, where the series'
    terms cancel by up to 1e100: the shifted point and the recurrences back."""
    grid = list(itertools.product([-99.75, -60.5, -31.25], [0.25, 3.5, 40.75, 99.5],
                                  [20.0, 60.0, 150.0, 200.0]))
    grid += [(a, b, x) for a, b, x in itertools.product(
        [30.5, 70.25, 99.75], [-60.75, -20.5, 3.5, 40.75], [-20.0, -60.0, -150.0, -200.0])
        if b - a <= -20 and b >= x]
    grid += list(itertools.product([-40.0, -100.0], [0.5, 20.75, -10.25], [40.0, 150.0, 200.0]))
    _assert_within_conditioning(grid)


def test_hyp1f1_float64_negative_b():
    """b < 0, x of either sign (b < 0 < x with a < b included), above b = -|x| and below
    it (where the series' terms peak near k = -b and need up to ~2|x| terms more)."""
    grid = list(itertools.product(
        [-50.5, 0.25, 20.75, 90.5], [-95.5, -70.5, -40.25, -10.75],
        [-200.0, -120.0, -75.0, -45.0, -30.0, -5.0, 5.0, 30.0, 45.0, 75.0, 120.0, 200.0]))
    _assert_within_conditioning(grid)


def test_hyp1f1_float64_large_positive_parameters():
    """Positive terms that the series' 200 do not exhaust, and the asymptotic expansion's
    neighbourhood."""
    grid = list(itertools.product([50.5, 99.75], [20.25, 99.5], [-200.0, -150.0, 150.0, 200.0]))
    _assert_within_conditioning(grid)


def test_hyp1f1_through_the_recurrences_jits_vmaps_and_differentiates():
    points = np.array([(-60.5, 3.5, 100.0), (40.5, -20.25, 30.0), (20.5, 50.25, -150.0),
                       (50.5, 99.5, 150.0)])
    with enable_x64():
        eager = np.asarray(special.hyp1f1(*points.T))  # (its loops trimmed to the longest)
        np.testing.assert_array_equal(didax.jit(special.hyp1f1)(*points.T), eager)
        one_by_one = [float(special.hyp1f1(*p)) for p in points]
        np.testing.assert_allclose(didax.vmap(special.hyp1f1)(*points.T), one_by_one,
                                   rtol=1e-15)
        a, b, x = points[1]  # (b's recurrence and a's upward: the derivatives through both)
        check_grads(lambda a, b: special.hyp1f1(a, b, x), (a, b), order=1,
                    modes=("fwd", "rev"), rtol=1e-6)
