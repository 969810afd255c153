"""hyp1f1 and hyp2f1: float64 against mpmath over grids of the parameters and x (the
accuracy each docstring claims), JAX's dtypes, weak types and conventions, float32 against
JAX and the float64 values, jit, vmap, and derivatives (in x the classical formulas, in the
parameters the algorithm's) against JAX and finite differences."""
import itertools

import jax
import jax.scipy.special as jspecial
import mpmath
import numpy as np
import pytest

import didax
import didax.scipy.special as special
from didax._src.config import enable_x64
from didax.test_util import check_grads
from tests.jax_testing import both_x64

mpmath.mp.dps = 30


def _relative_errors(fn, mp_fn, points):
    points = np.array(points, dtype=np.float64)
    want = np.array([float(mp_fn(*p)) for p in points])
    with enable_x64():
        got = np.asarray(fn(*points.T))
    assert got.dtype == np.float64
    return np.abs(got - want) / np.abs(want), points


def _assert_accurate(fn, mp_fn, points, rtol):
    err, points = _relative_errors(fn, mp_fn, points)
    worst = np.argmax(err)
    assert err[worst] <= rtol, (err[worst], points[worst])


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
    _assert_accurate(special.hyp1f1, mpmath.hyp1f1, grid, 1e-13)


def test_hyp1f1_float64_where_the_sum_cancels():
    """alpha a negative non-integer of larger magnitude, and a Laguerre polynomial (a a
    non-positive integer) at large x: the sums in double-double."""
    larger_alpha = [(a, b, x) for a, b, x in itertools.product(PARAMS_1F1, PARAMS_1F1, X_1F1)
                    if x < 0 and b < a]
    larger_alpha += list(itertools.product([-19.875, -7.75], [0.25, 2.5], X_1F1[8:]))
    _assert_accurate(special.hyp1f1, mpmath.hyp1f1, larger_alpha, 1e-13)
    laguerre = [(a, b, x) for a, b, x in itertools.product(
        [-2.0, -5.0, -10.0, -20.0], PARAMS_1F1 + [-0.5, -30.5], X_1F1) if b > a]
    _assert_accurate(special.hyp1f1, mpmath.hyp1f1, laguerre, 1e-13)


def test_hyp1f1_float64_larger_parameters():
    params = [-31.25, -0.5, 0.25, 3.5, 31.25]
    grid = [(a, b, x) for a, b, x in itertools.product(params, params, [-40.0, -8.0, 8.0, 40.0])
            if 30 < max(abs(a), abs(b)) and not (b < 0 and x > 0 and a < b)]
    _assert_accurate(special.hyp1f1, mpmath.hyp1f1, grid, 1e-13)


def test_hyp2f1_float64_as_mpmath():
    params = [-7.75, -3.25, -0.5, 0.25, 1.0, 2.5, 4.75]
    x = [-1e5, -50.0, -3.0, -1.0, -0.625, -0.25, 0.0, 0.25, 0.5, 0.625, 0.875, 0.9990234375]
    grid = [(a, b, c, v) for a, b, c, v in itertools.product(params, params, params[3:], x)
            if a <= b and b > -7]  # (symmetric in a and b)
    _assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)
    # both a and b well below 0 for x in [-3, -1/2]: every series form alternates (summed in
    # double-double)
    both_negative = list(itertools.product([-7.75, -9.75], [-7.75, -8.5], params[3:], x))
    _assert_accurate(special.hyp2f1, mpmath.hyp2f1, both_negative, 1e-13)


def test_hyp2f1_float64_parameters_to_ten():
    """Parameters up to ~10 with c well below a and b, around x = -1 (the series forms up to
    an argument of 3/4 in double-double)."""
    params = [-9.75, -3.25, 0.5, 6.25, 10.5]
    x = [-1.5, -1.0, -0.75, -0.3, 0.3, 0.7, 0.95]
    grid = [(a, b, c, v) for a, b, c, v in itertools.product(params, params, params[2:], x)
            if a <= b]
    _assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)


def test_hyp2f1_float64_integer_c_minus_a_minus_b():
    """The connection formula's limits: c - a - b (and, below -1, b - a) an integer."""
    grid = []
    for a, b in [(0.25, 1.0), (1.5, 2.5), (3.25, 0.5), (0.5, 0.5), (2.0, 3.0), (-2.5, 1.5)]:
        for m in [0, 1, 2, 5, -1, -4]:
            for x in [0.55, 0.9, 0.999, -1.5, -20.0, -1e6]:
                grid += [(a, b, a + b + m, x), (a, a + m, 2.5, x)]
    grid = [p for p in grid if p[2] > 0]  # (not at the poles in c)
    _assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)


def test_hyp2f1_float64_near_an_integer_c_minus_a_minus_b():
    """Within 1/8 of an integer c - a - b (below -1, b - a), not on it: the limit's uniform
    form, whose accuracy does not depend on the distance d."""
    grid = []
    for a, b in [(1.5, 2.25), (0.25, 1.0), (-2.5, 1.5), (3.25, -0.75)]:
        for m, d in itertools.product([0, 2, -1, -3], [1e-12, 1e-6, -1e-3, 0.05, -0.12]):
            for x in [0.7, 0.95, 0.999, -1.5, -4.0, -1e6]:
                grid += [(a, b, a + b + m + d, x), (a, a + m + d, 2.5, x)]
    grid = [p for p in grid if p[2] > 0.5]  # (away from the poles in c)
    _assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)


def test_hyp2f1_float64_below_minus_three_parameters_to_ten():
    """x below -3 (and above 3/4) with parameters near 10, where the connection formula's
    two terms cancel: the series of positive terms up to an argument of 9/10."""
    params = [6.25, 8.125, 10.5]
    grid = [(a, b, c, x) for a, b, c, x in itertools.product(
        params, params, params, [-3.5, -5.0, -8.5, -12.0, -20.0, 0.8, 0.9]) if a <= b]
    _assert_accurate(special.hyp2f1, mpmath.hyp2f1, grid, 1e-13)


def test_hyp2f1_gauss_sum_at_one():
    with enable_x64():
        got = special.hyp2f1(np.array([1.0, 0.5, 2.25]), 2.0, np.array([4.0, 3.0, 5.0]), 1.0)
    want = [float(mpmath.hyp2f1(a, 2, c, 1)) for a, c in [(1, 4), (0.5, 3), (2.25, 5)]]
    np.testing.assert_allclose(got, want, rtol=1e-14)


SPECIAL_1F1 = [(0.0, 0.0, 3.0), (1.0, 0.0, 3.0), (1.0, -2.0, 3.0), (-2.0, -2.0, 3.0),
               (-2.0, -3.0, 3.0), (0.0, 1.0, 3.0), (1.0, 2.0, 0.5), (1.5, 2.5, -0.75),
               (2.0, 1.0, 800.0), (2.0, 1.0, -800.0)]
SPECIAL_2F1 = [(1.0, 2.0, 3.0, 1.0), (1.0, 2.0, 4.0, 1.0), (1.0, 2.0, 3.0, 1.5),
               (-2.0, 2.0, 3.0, 0.7), (1.0, 2.0, -3.0, 0.7), (-1.0, 2.0, -3.0, 0.7),
               (0.0, 2.0, 0.0, 0.7), (1.0, 2.0, 3.0, 0.0), (0.0, 2.0, 3.0, 0.9),
               (1.0, 1.0, 0.5, 1.0), (1.0, 2.0, 3.0, np.inf), (1.5, 2.0, 3.5, 0.3)]


@pytest.mark.parametrize("name, cases", [("hyp1f1", SPECIAL_1F1), ("hyp2f1", SPECIAL_2F1)])
def test_conventions_as_jax(name, cases):
    """JAX's values at the poles, at a = 0 or a = b, at x = 1 and beyond."""
    cases = np.array(cases)
    with both_x64():
        got = getattr(special, name)(*cases.T)
        want = getattr(jspecial, name)(*cases.T)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-13)


def test_where_jax_is_off():
    """Documented differences: the accurate value, the limits at infinite x, nan."""
    with enable_x64():
        # (e^x - 1) / x at x = -30.5; JAX: 0.0327855
        np.testing.assert_allclose(special.hyp1f1(1.0, 2.0, -30.5), np.expm1(-30.5) / -30.5,
                                   rtol=1e-14)
        # JAX: 1.47e171 and -inf
        np.testing.assert_allclose(special.hyp2f1(1.0, 2.0, 3.0, -5.0),
                                   float(mpmath.hyp2f1(1, 2, 3, -5)), rtol=1e-14)
        np.testing.assert_allclose(special.hyp2f1(1.0, 2.0, 3.5, -100.0),
                                   float(mpmath.hyp2f1(1, 2, 3.5, -100)), rtol=1e-14)
        got = special.hyp1f1(np.array([1.0, 1.0, -2.0, -3.0, -2.5, np.nan]),
                             np.array([2.0, 2.0, 2.0, 2.0, 2.0, 1.0]),
                             np.array([np.inf, -np.inf, np.inf, np.inf, -np.inf, 3.0]))
        np.testing.assert_array_equal(got, [np.inf, 0.0, np.inf, -np.inf, np.inf, np.nan])
        assert np.isnan(special.hyp2f1(np.nan, 1.0, 2.0, 0.5))


@pytest.mark.parametrize("x64", [False, True])
def test_dtypes_and_weak_types_as_jax(x64):
    inputs = [1.0, 2, np.int32(3), np.int64(2), np.float16(1.5), np.float32(0.5), True]
    with both_x64(x64):
        for value in inputs:
            for name, args in [("hyp1f1", (value, 2.5, 0.25)), ("hyp1f1", (value,) * 3),
                               ("hyp2f1", (value, 1.5, 2.5, 0.25)),
                               ("hyp2f1", (value,) * 3 + (0.0,))]:
                got = getattr(special, name)(*args)
                want = jax.eval_shape(getattr(jspecial, name), *args)  # (JAX compiles slowly)
                assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), (name, args)


def test_float32_within_ulps_of_float64_and_as_jax():
    """A few ulps where the sums do not cancel (float32 computes in float32, so where they
    cancel its error is that factor times larger, as in float64; and e^t costs t ulps)."""
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.1, 5, 200).astype(np.float32), rng.uniform(0.1, 5, 200).astype(np.float32)
    c = rng.uniform(0.5, 6, 200).astype(np.float32)
    x1 = rng.uniform(-20, 20, 200).astype(np.float32)
    x1 = np.where(a > b, np.abs(x1), x1)  # (alpha >= 0)
    x2 = rng.uniform(-0.5, 0.5, 200).astype(np.float32)
    for name, args, rtol in [("hyp1f1", (a, b, x1), 2e-6), ("hyp2f1", (a, b, c, x2), 6e-7)]:
        got = getattr(special, name)(*args)
        assert got.dtype == np.float32
        with enable_x64():
            exact = np.asarray(getattr(special, name)(*[v.astype(np.float64) for v in args]))
        np.testing.assert_allclose(np.asarray(got), exact, rtol=rtol)
        if name == "hyp1f1":  # JAX's float32 series is accurate for x >= 0 too (looser)
            mine = args[-1] >= 0
            theirs = jspecial.hyp1f1(*[v[mine] for v in args])
            np.testing.assert_allclose(np.asarray(theirs), exact[mine], rtol=1e-4)


def test_broadcasting_and_bad_input():
    assert special.hyp1f1(np.ones(3), np.ones((2, 1)), 0.5).shape == (2, 3)
    assert special.hyp2f1(np.ones(3), 1.0, np.full((4, 1), 2.0), 0.5).shape == (4, 3)
    with pytest.raises(ValueError, match="complex"):
        special.hyp1f1(1.0 + 1j, 2.0, 0.5)
    with pytest.raises(ValueError, match="complex"):
        special.hyp2f1(1.0, 2.0, 3.0, 0.5j)
    with pytest.raises(ValueError):
        special.hyp1f1(np.ones(3), np.ones(2), 0.5)
    with pytest.raises(TypeError):
        special.hyp1f1(1.0, 2.0, "x")


def test_jit_and_vmap():
    x = np.linspace(-3, 0.9, 12).reshape(3, 4)
    with enable_x64():
        f1 = lambda x: special.hyp1f1(1.5, 2.5, 10 * x)  # noqa: E731
        f2 = lambda x: special.hyp2f1(1.5, 0.25, 3.0, x)  # noqa: E731
        for f in (f1, f2):
            eager = np.asarray(f(x))
            if f is f1:  # (jit of hyp2f1's long program compiles for seconds)
                np.testing.assert_allclose(didax.jit(f)(x), eager, rtol=1e-15)
            np.testing.assert_allclose(didax.vmap(f)(x), eager, rtol=1e-15)
            np.testing.assert_allclose(didax.vmap(f, in_axes=1, out_axes=1)(x), eager,
                                       rtol=1e-15)  # (elementwise: the loop's values)


def test_derivatives_in_x():
    with both_x64():
        for order, (a, b, x) in [(2, (1.5, 2.5, 0.7)), (1, (2.25, 0.75, -3.0))]:
            f = lambda x, a=a, b=b: special.hyp1f1(a, b, x)  # noqa: E731
            check_grads(f, (x,), order=order, modes=("fwd", "rev"))
            np.testing.assert_allclose(didax.grad(f)(x), a / b * special.hyp1f1(a + 1, b + 1, x),
                                       rtol=1e-14)
        # hyp2f1: d/dx = ab/c hyp2f1(a+1, b+1, c+1, x), in both modes, through the series and
        # Pfaff's transformation (one array: each call is long)
        f = lambda x: special.hyp2f1(1.5, 0.5, 3.25, x)  # noqa: E731
        x = np.array([0.3, -2.0])
        want = 1.5 * 0.5 / 3.25 * np.asarray(special.hyp2f1(2.5, 1.5, 4.25, x))
        np.testing.assert_allclose(didax.vmap(didax.grad(f))(x), want, rtol=1e-12)
        np.testing.assert_allclose(didax.jvp(f, (x,), (np.ones(2),))[1], want, rtol=1e-12)


def test_derivatives_as_jax():
    """In x the formulas; in the parameters the algorithm's derivatives, JAX's where its
    series is accurate."""
    points = np.array([(1.0, 2.0, 0.5), (0.5, 3.0, 40.0), (2.5, 1.5, -3.0)])
    with both_x64():
        want = jax.vmap(jax.grad(jspecial.hyp1f1, (0, 1, 2)))(*points.T)
        got = didax.vmap(didax.grad(special.hyp1f1, (0, 1, 2)))(*points.T)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-10)
        point = (1.5, 0.5, 3.25, 0.3)
        np.testing.assert_allclose(didax.grad(special.hyp2f1, (0, 1, 2, 3))(*point),
                                   jax.grad(jspecial.hyp2f1, (0, 1, 2, 3))(*point), rtol=1e-10)


def test_parameter_derivatives_by_finite_differences():
    """Through the connection formula, and Pfaff's transformation followed by it."""
    with enable_x64():
        x = np.array([0.8, -3.0])
        check_grads(lambda a, c: special.hyp2f1(a, 0.5, c, x), (np.full(2, 1.5), np.full(2, 3.25)),
                    order=1, modes=("fwd", "rev"))
        # c - a - b near an integer (the limit's uniform form), and x = -5 (the long series)
        a, b, c, x = np.array([1.5, 6.5]), np.array([0.5, 8.0]), np.array([3.01, 10.5]), \
            np.array([0.8, -5.0])
        f = lambda a, c: special.hyp2f1(a, b, c, x)  # noqa: E731
        along = [np.array([1.0, -0.5]), np.array([0.5, 1.0])]  # (a and c both moving)
        _, tangent = didax.jvp(f, (a, c), tuple(along))
        h = 1e-6
        central = (f(a + h * along[0], c + h * along[1])
                   - f(a - h * along[0], c - h * along[1])) / (2 * h)
        np.testing.assert_allclose(tangent, central, rtol=1e-7)
