"""hyp1f1 and hyp2f1 together (their accuracy against mpmath is in test_hyp1f1 and
test_hyp2f1): JAX's dtypes, weak types and conventions, float32 against JAX and the float64
values, jit, vmap, and derivatives (in x the classical formulas, in the parameters the
algorithm's) against JAX and finite differences."""

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
