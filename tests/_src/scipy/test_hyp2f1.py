"""hyp2f1 in float64 against mpmath over grids of the parameters and x: the accuracy its
docstring claims."""
import itertools

import mpmath
import numpy as np
from jaxpr_testing import equation_count

import didax
import didax.scipy.special as special
from didax._src.config import enable_x64
from tests._src.scipy.mpmath_accuracy import assert_accurate


def test_hyp2f1_float64_as_mpmath():
    params = [-7.75, -3.25, -0.5, 0.25, 1.0, 2.5, 4.75]
    x = [-1e5, -50.0, -3.0, -1.0, -0.625, -0.25, 0.0, 0.25, 0.5, 0.625, 0.875, 0.9990234375]
    grid = [(a, b, c, v) for a, b, c, v in itertools.product(params, params, params[3:], x)
            if a <= b and b > -7]  # (symmetric in a and b)
    assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)
    # both a and b well below 0 for x in [-3, -1/2]: every series form alternates (summed in
    # double-double)
    both_negative = list(itertools.product([-7.75, -9.75], [-7.75, -8.5], params[3:], x))
    assert_accurate(special.hyp2f1, mpmath.hyp2f1, both_negative, 1e-13)


def test_hyp2f1_float64_parameters_to_ten():
    """Parameters up to ~10 with c well below a and b, around x = -1 (the series forms up to
    an argument of 3/4 in double-double)."""
    params = [-9.75, -3.25, 0.5, 6.25, 10.5]
    x = [-1.5, -1.0, -0.75, -0.3, 0.3, 0.7, 0.95]
    grid = [(a, b, c, v) for a, b, c, v in itertools.product(params, params, params[2:], x)
            if a <= b]
    assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)


def test_hyp2f1_float64_integer_c_minus_a_minus_b():
    """The connection formula's limits: c - a - b (and, below -1, b - a) an integer."""
    grid = []
    for a, b in [(0.25, 1.0), (1.5, 2.5), (3.25, 0.5), (0.5, 0.5), (2.0, 3.0), (-2.5, 1.5)]:
        for m in [0, 1, 2, 5, -1, -4]:
            for x in [0.55, 0.9, 0.999, -1.5, -20.0, -1e6]:
                grid += [(a, b, a + b + m, x), (a, a + m, 2.5, x)]
    grid = [p for p in grid if p[2] > 0]  # (not at the poles in c)
    assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)


def test_hyp2f1_float64_near_an_integer_c_minus_a_minus_b():
    """Within 1/8 of an integer c - a - b (below -1, b - a), not on it: the limit's uniform
    form, whose accuracy does not depend on the distance d."""
    grid = []
    for a, b in [(1.5, 2.25), (0.25, 1.0), (-2.5, 1.5), (3.25, -0.75)]:
        for m, d in itertools.product([0, 2, -1, -3], [1e-12, 1e-6, -1e-3, 0.05, -0.12]):
            for x in [0.7, 0.95, 0.999, -1.5, -4.0, -1e6]:
                grid += [(a, b, a + b + m + d, x), (a, a + m + d, 2.5, x)]
    grid = [p for p in grid if p[2] > 0.5]  # (away from the poles in c)
    assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)


def test_hyp2f1_float64_below_minus_three_parameters_to_ten():
    """x below -3 (and above 3/4) with parameters near 10, where the connection formula's
    two terms cancel: the series of positive terms up to an argument of 9/10."""
    params = [6.25, 8.125, 10.5]
    grid = [(a, b, c, x) for a, b, c, x in itertools.product(
        params, params, params, [-3.5, -5.0, -8.5, -12.0, -20.0, 0.8, 0.9]) if a <= b]
    assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)


def test_hyp2f1_gauss_sum_at_one():
    with enable_x64():
        got = special.hyp2f1(np.array([1.0, 0.5, 2.25]), 2.0, np.array([4.0, 3.0, 5.0]), 1.0)
    want = [float(mpmath.hyp2f1(a, 2, c, 1)) for a, c in [(1, 4), (0.5, 3), (2.25, 5)]]
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_hyp2f1_float64_parameters_to_twenty():
    """Parameters to 20, where the connection formula's terms cancel: below -1 Gauss's
    recurrence in c from a form of positive terms, and for x in (1/2, 19/20] or Pfaff's
    argument up to 19/20 the series forms that alternate, summed in double-double."""
    params = [-19.75, -10.25, 0.25, 7.5, 19.5]
    x = [-40.0, -20.0, -9.5, -5.0, -3.0, -1.5, 0.8, 0.9, 0.95]
    grid = [(a, b, c, v) for a, b, c, v in itertools.product(params, params, params, x)
            if a <= b]
    assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)


def test_hyp2f1_float64_polynomials_to_twenty():
    """A non-positive integer a (the series terminates) with the other parameters to 20."""
    grid = list(itertools.product([-19.0, -12.0, -3.0], [-15.5, -12.0, 7.5, 19.5],
                                  [-18.5, 3.0, 19.0], [-30.0, -6.0, -2.0, 0.7, 0.97]))
    assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)


def random_points(seed, n, low, high, log=False):
    """a, b, c uniform in [-20, 20] and x in [low, high] (log-uniform in -x with `log`)."""
    rng = np.random.default_rng(seed)
    a, b, c = rng.uniform(-20, 20, (3, n))
    if log:
        x = -np.exp(rng.uniform(np.log(-high), np.log(-low), n))
    else:
        x = rng.uniform(low, high, n)
    return np.stack([a, b, c, x], axis=1)


def test_hyp2f1_float64_below_minus_nineteen():
    """x below -19 (to -1e6), where the connection formula's Gamma functions in double lost
    up to 7e-13 (their rounding magnified by its terms' cancellation), and in [-49, -19],
    where Gauss's recurrence in c lost up to 3e-12: the connection formula in
    double-double. (Random points, none excluded: near zeros of 2F1 too.)"""
    points = np.concatenate([random_points(0, 1000, -1e6, -19.0, log=True),
                             random_points(1, 1000, -49.0, -19.0)])
    assert_accurate(special.hyp2f1, mpmath.hyp2f1, points, 1e-13)


def test_hyp2f1_float64_near_one():
    """x in [0.99, 1) (the connection formula in 1 - x) and in [0.95, 0.99) (where the
    recurrence after Pfaff's transformation, or the connection formula in double, lost up to
    2e-11): the connection formula in double-double."""
    points = np.concatenate([random_points(2, 1500, 0.99, 1.0),
                             random_points(3, 500, 0.95, 0.99)])
    assert_accurate(special.hyp2f1, mpmath.hyp2f1, points, 1e-13)


# one point on each of the methods for large parameters: the series in double-double beyond
# an argument of 3/4 (x and Pfaff's), the recurrence in c (as it is and after Euler's
# transformation), and a polynomial whose terms cancel
METHOD_POINTS = np.array([(-19.75, 19.5, 0.25, 0.8), (-10.25, 12.25, 3.75, -5.0),
                          (19.5, 19.5, -19.75, -3.0), (-19.75, -19.75, 12.25, -3.0),
                          (-12.0, 7.5, 3.0, 0.9), (7.5, 12.25, -5.5, -3.0)])


def test_hyp2f1_parameter_derivatives_as_mpmath():
    """The double-double sums and the recurrence carry their derivatives in double-double
    too (forward mode through them would magnify the rounding by the terms' cancellation):
    the derivative along (1, 1, 1) in (a, b, c) at each point, and in reverse mode each
    derivative at one point."""
    def derivatives(p):
        return [float(mpmath.diff(lambda t, i=i: mpmath.hyp2f1(*p[:i], t, *p[i + 1:]), p[i]))
                for i in range(3)]

    want = np.array([derivatives(p) for p in METHOD_POINTS.tolist()])
    ones = np.ones(len(METHOD_POINTS))
    with enable_x64():
        _, along = didax.jvp(lambda a, b, c: special.hyp2f1(a, b, c, METHOD_POINTS[:, 3]),
                             tuple(METHOD_POINTS[:, :3].T), (ones, ones, ones))
        grad = didax.grad(special.hyp2f1, (0, 1, 2))(*METHOD_POINTS[3])
    np.testing.assert_allclose(along, want.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(grad, want[3], rtol=1e-12)


def test_hyp2f1_jit_and_vmap_on_each_method():
    """Traced, every method runs on every element (as a while loop, the others' elements
    replaced by a safe point); eagerly, only on the elements that need it."""
    with enable_x64():
        eager = np.asarray(special.hyp2f1(*METHOD_POINTS.T))
        mapped = didax.vmap(special.hyp2f1)(*METHOD_POINTS.T)
        jitted = didax.jit(special.hyp2f1)(*METHOD_POINTS.T)
    want = [float(mpmath.hyp2f1(*p)) for p in METHOD_POINTS.tolist()]
    np.testing.assert_allclose(eager, want, rtol=1e-13)
    np.testing.assert_allclose(mapped, eager, rtol=1e-14)
    np.testing.assert_allclose(jitted, eager, rtol=1e-14)


def test_hyp2f1_traced_sums_its_series_in_loops():
    """Traced, the series of up to 150 and 500 terms are loop bodies, not unrolled: the jaxpr,
    sub-jaxprs included, has 40 % of the equations it had unrolled (36,292); jit gives eager
    evaluation's bits in float64, among them in the degenerate case's uniform form (c - a - b
    near an integer, x near 1) and the long series of positive terms."""
    args = [np.float32(v) for v in (1.5, 0.5, 3.25, 0.3)]
    assert equation_count(didax.make_jaxpr(special.hyp2f1)(*args)) < 20000
    rng = np.random.default_rng(2)
    a, b, c, x = (rng.uniform(-5, 8, 32), rng.uniform(-5, 8, 32), rng.uniform(-3, 12, 32),
                  rng.uniform(-9, 0.99, 32))
    c[:12] = a[:12] + b[:12] + rng.integers(0, 4, 12) + rng.choice([0, 1e-3, 0.05], 12)
    x[:12] = rng.uniform(0.6, 0.99, 12)
    a[12:20], b[12:20] = rng.uniform(0.1, 5, 8), rng.uniform(0.1, 5, 8)
    c[12:20], x[12:20] = rng.uniform(0.5, 9, 8), rng.uniform(0.75, 0.9, 8)
    with enable_x64():
        eager = np.asarray(special.hyp2f1(a, b, c, x))
        assert np.isfinite(eager).all()
        assert np.asarray(didax.jit(special.hyp2f1)(a, b, c, x)).tobytes() == eager.tobytes()
