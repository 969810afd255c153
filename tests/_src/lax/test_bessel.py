"""lax.bessel_i0e / bessel_i1e (primitives), scipy.special.i0, i0e, i1, i1e, jnp.i0 and
jnp.kaiser against SciPy (float64, a broad grid), JAX 0.10.2 (float32 values, dtypes,
derivative conventions at 0) and finite differences to second order."""
import numpy as np
import pytest
import scipy.special as sps

import didax
import didax.lax as lax
import didax.numpy as jnp
import didax.scipy.special as special
from didax._src.config import enable_x64
from didax._src.numerics import bessel as bessel_algorithms
from didax.test_util import check_grads
from tests.jax_testing import both_x64

jax = pytest.importorskip("jax")

GRID = np.concatenate([np.linspace(-60, 60, 24001), np.geomspace(1e-300, 1e6, 3001),
                       -np.geomspace(1e-300, 1e6, 3001), [0.0, -0.0]])


@pytest.mark.parametrize("name", ["i0e", "i1e"])
def test_algorithms_as_scipy(name):
    got = getattr(bessel_algorithms, name)(GRID)
    want = getattr(sps, name)(GRID)
    nonzero = want != 0
    assert np.array_equal(got == 0, ~nonzero)
    assert np.max(np.abs(got[nonzero] - want[nonzero]) / np.abs(want[nonzero])) < 5e-15
    special_values = getattr(bessel_algorithms, name)(np.array([np.inf, -np.inf, np.nan]))
    np.testing.assert_array_equal(special_values, getattr(sps, name)([np.inf, -np.inf, np.nan]))
    x32 = GRID.astype(np.float32)
    x32 = x32[(np.abs(x32) > 1e-37) | (x32 == 0)]  # i1e(x) ~ x/2: no subnormal double rounding
    got32 = getattr(bessel_algorithms, name)(x32)
    assert got32.dtype == np.float32
    np.testing.assert_array_equal(got32, getattr(sps, name)(x32.astype(np.float64))
                                  .astype(np.float32))  # one rounding: correctly rounded


FUNCS = {
    "bessel_i0e": (lax.bessel_i0e, jax.lax.bessel_i0e),
    "bessel_i1e": (lax.bessel_i1e, jax.lax.bessel_i1e),
    "i0e": (special.i0e, jax.scipy.special.i0e),
    "i1e": (special.i1e, jax.scipy.special.i1e),
    "i0": (special.i0, jax.scipy.special.i0),
    "i1": (special.i1, jax.scipy.special.i1),
    "jnp.i0": (jnp.i0, jax.numpy.i0),
}
POINTS = np.array([-30.0, -7.5, -1.5, -0.1, 0.0, 1e-3, 0.7, 3.0, 16.9, 17.1, 80.0],
                  np.float32)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_float32_values_and_dtypes_as_jax(name):
    ours, theirs = FUNCS[name]
    got, want = ours(POINTS), theirs(POINTS)
    assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=3e-6)
    if not name.startswith("bessel"):
        scalar, scalar_ref = ours(0.5), theirs(0.5)
        assert (scalar.dtype, scalar.weak_type) == (scalar_ref.dtype, scalar_ref.weak_type)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_derivatives_as_jax(name):
    """First and second derivatives, at 0 (the conventions) and away from it."""
    ours, theirs = FUNCS[name]
    with both_x64():
        for x in [0.0, -0.0, 1.5, -1.5, 25.0]:
            for f, g in [(didax.grad(ours), jax.grad(theirs)),
                         (didax.grad(didax.grad(ours)), jax.grad(jax.grad(theirs)))]:
                np.testing.assert_allclose(f(x), g(x), rtol=1e-12, atol=1e-300, err_msg=str(x))


@pytest.mark.parametrize("name", sorted(n for n in FUNCS if not n.startswith("bessel")))
def test_check_grads_order_2(name):  # (the primitives': their records, tests/lax_records.py)
    f = FUNCS[name][0]
    with enable_x64():
        for x in [0.7, -2.3, 20.0]:
            check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_primitives_under_jit_of_vmap_of_grad_and_staging():
    x = np.array([[0.5, -3.0], [18.0, 0.0]], np.float32)
    for p in (lax.bessel_i0e, lax.bessel_i1e):
        np.testing.assert_array_equal(didax.jit(didax.vmap(didax.grad(p)))(x[0]),
                                      didax.vmap(didax.grad(p))(x[0]))
    assert str(didax.make_jaxpr(lax.bessel_i1e)(1.0)) == str(jax.make_jaxpr(
        jax.lax.bessel_i1e)(1.0))
    with pytest.raises(TypeError, match="bessel_i0e does not accept dtype int32"):
        lax.bessel_i0e(np.int32(1))


def test_i0_rejects_complex_and_takes_integers():
    with pytest.raises(ValueError, match="complex64"):
        jnp.i0(np.complex64(1))
    assert jnp.i0(np.arange(3)).dtype == jax.numpy.i0(np.arange(3)).dtype
    np.testing.assert_allclose(jnp.i0(np.arange(3)), np.i0(np.arange(3)), rtol=1e-6)


@pytest.mark.parametrize("M,beta", [(0, 2.0), (1, 2.0), (2, 0.0), (5, 2.5), (12, 8.6),
                                    (64, 14.0)])
def test_kaiser(M, beta):
    got = jnp.kaiser(M, beta)
    want = jax.numpy.kaiser(M, beta)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=5e-6, atol=1e-7)
    with enable_x64():
        np.testing.assert_allclose(jnp.kaiser(M, beta), np.kaiser(M, beta), rtol=1e-13,
                                   atol=1e-300)


def test_bessel_jn():
    z = np.array([0.0, 1e-3, 0.5, 3.0, 10.0, 20.0, -2.0])
    with both_x64():
        got = special.bessel_jn(z, v=4)
        assert got.shape == (5, 7)
        np.testing.assert_allclose(got, [sps.jv(k, z) for k in range(5)], rtol=1e-13,
                                   atol=1e-16)
        want = jax.scipy.special.bessel_jn(z[1:], v=4)  # JAX: nan at z = 0
        np.testing.assert_allclose(got[:, 1:], want, rtol=1e-13, atol=1e-16)
        # a start above |z| is what the recurrence needs
        np.testing.assert_allclose(special.bessel_jn(z[:4], v=2, n_iter=24),
                                   [sps.jv(k, z[:4]) for k in range(3)], rtol=1e-13, atol=1e-16)
        f = lambda x: special.bessel_jn(x, v=2)[1]  # noqa: E731
        np.testing.assert_allclose(didax.grad(f)(0.7), sps.jvp(1, 0.7), rtol=1e-12)
        np.testing.assert_allclose(
            didax.grad(f)(0.7), jax.grad(lambda x: jax.scipy.special.bessel_jn(x, v=2)[1])(0.7),
            rtol=1e-12)
        check_grads(f, (2.5,), order=2, modes=("fwd", "rev"))
    small = special.bessel_jn(np.float32(2.0), v=1)
    assert (small.dtype, small.shape) == (np.float32, (2,))
    with pytest.raises(ValueError, match="non-negative"):
        special.bessel_jn(1.0, v=-1)
