"""wofz: float64 against mpmath over the complex plane, JAX's dtypes and weak types, float32
within a few ulps, the limits and overflows, jit, vmap and the derivative."""
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


def _exact(z):
    z = mpmath.mpc(z)
    return complex(mpmath.exp(-z * z) * mpmath.erfc(-1j * z))


def _plane():
    """Radii up to 1e5 (both sides of |z| = 8, where the method changes), all directions,
    and the axes."""
    rng = np.random.default_rng(0)
    r = np.concatenate([rng.uniform(0, 12, 300), np.geomspace(1e-5, 1e5, 60)])
    theta = rng.uniform(-np.pi, np.pi, r.size)
    z = np.concatenate([r * np.exp(1j * theta), r + 0j, -r + 0j, 1j * r, -1j * r[r < 20],
                        r * np.exp(1e-9j), [7.99 + 0.1j, 8.01 + 0.1j, 0j]])
    w = np.array([_exact(v) for v in z])
    finite = np.isfinite(w)
    return z[finite], w[finite]


Z, W = _plane()


def test_float64_as_mpmath():
    with enable_x64():
        got = np.asarray(special.wofz(Z))
    assert got.dtype == np.complex128
    err = np.abs(got - W) / np.abs(W)
    upper = Z.imag >= 0
    assert err[upper].max() < 2e-15, Z[upper][np.argmax(err[upper])]
    # below the real axis exp(-z^2) carries the rounding of its phase 2xy: |z|^2 ulps
    assert (err[~upper] / np.maximum(np.abs(Z[~upper]) ** 2, 1)).max() < 1e-15
    real_axis = Z.imag == 0
    np.testing.assert_array_equal(got.real[real_axis], np.exp(-Z.real[real_axis] ** 2))


def test_more_accurate_than_jax():
    """JAX's 32-term approximation is ~3e-13 off; this is within a few ulps."""
    z = np.array([0.5, 1 + 2j, 3 - 1j, 5.5 + 0.25j])
    want = np.array([_exact(v) for v in z])
    with both_x64():
        ours = np.asarray(special.wofz(z))
        theirs = np.asarray(jspecial.wofz(z))
    np.testing.assert_allclose(ours, want, rtol=2e-15)
    np.testing.assert_allclose(theirs, want, rtol=1e-12)


def test_limits_and_overflow():
    z = np.array([np.inf, -np.inf, complex(np.inf, 0), complex(0, np.inf), complex(np.nan, 0),
                  complex(0, -30), complex(3, -30), complex(0, -np.inf)])
    with enable_x64():
        got = np.asarray(special.wofz(z))
    np.testing.assert_array_equal(got[:4], 0)  # JAX: nan
    assert np.isnan(got[4]) and np.isnan(got[7])
    assert got[5] == complex(np.inf, 0)  # erfcx(-30) overflows; JAX: inf + nan i
    # 2 exp(-z^2) = 2 exp(891) (cos 180 + i sin 180): both parts overflow, signs kept
    # (as SciPy; JAX: nan)
    assert got[6] == complex(np.sign(np.cos(180)) * np.inf, np.sign(np.sin(180)) * np.inf)


@pytest.mark.parametrize("x64", [False, True])
def test_dtypes_and_weak_types_as_jax(x64):
    inputs = [0.5, 1, 1 + 1j, True, np.int32(2), np.int64(2), np.float16(1.5),
              np.float32(0.5), np.float64(0.5), np.complex64(1 + 2j)]
    with both_x64(x64):
        for z in inputs:
            got = special.wofz(z)
            want = jax.eval_shape(jspecial.wofz, z)
            assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), z


def test_float32_within_ulps():
    z = Z[(np.abs(Z) < 1e4) & (Z.imag > -3)].astype(np.complex64)
    got = special.wofz(z)
    assert got.dtype == np.complex64
    with enable_x64():
        exact = np.asarray(special.wofz(z.astype(np.complex128)))
    np.testing.assert_allclose(np.asarray(got), exact, rtol=1e-6, atol=0)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jspecial.wofz(z)), rtol=3e-6)


def test_jit_vmap_and_shapes():
    z = (np.linspace(-9, 9, 12) + 1j * np.linspace(-2, 10, 12)).reshape(3, 4)
    with enable_x64():
        eager = np.asarray(special.wofz(z))
        np.testing.assert_array_equal(didax.jit(special.wofz)(z), eager)
        np.testing.assert_array_equal(didax.vmap(special.wofz, in_axes=1, out_axes=1)(z), eager)
    assert special.wofz(np.zeros((2, 0, 3))).shape == (2, 0, 3)
    with pytest.raises(TypeError):
        special.wofz("z")


def test_derivative():
    """w'(z) = -2 z w(z) + 2i / sqrt(pi), as JAX; for real x, d Re w / dx = -2x exp(-x^2)."""
    with both_x64():
        for z in [1.0 + 2j, -0.5 + 0.1j, 3.0 - 1.0j, 9.0 + 1.0j]:
            check_grads(special.wofz, (z,), order=2, modes=("fwd", "rev"))
            w, dw = didax.jvp(special.wofz, (z,), (1.0 + 0j,))
            np.testing.assert_allclose(dw, -2 * z * w + 2j / np.sqrt(np.pi), rtol=1e-15)
            # (JAX's w is ~3e-13 off, which the derivative's cancellation magnifies)
            np.testing.assert_allclose(dw, jax.jvp(jspecial.wofz, (z,), (1.0 + 0j,))[1],
                                       rtol=1e-11)
        for x in [0.3, 2.0]:
            np.testing.assert_allclose(didax.grad(lambda x: special.wofz(x).real)(x),
                                       -2 * x * np.exp(-x * x), rtol=1e-14)
