"""hyp1f1 in float64 against mpmath over grids of the parameters and x: the accuracy its
docstring claims."""
import itertools

import mpmath

import didax.scipy.special as special
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
