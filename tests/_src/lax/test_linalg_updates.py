"""lax.linalg.cholesky_update and symmetric_product against JAX 0.10.2: values and dtypes,
batching (symmetric_product only, as in JAX), jit, JAX's errors, and no derivatives."""
import jax
import numpy as np
import pytest
from jax_absent import needs_jax
from jax_testing import both_x64
from linalg_testing import close as _close

import didax
from didax.lax import linalg


def _factor(rng, n, dtype, sign=1):
    return (sign * (np.triu(rng.standard_normal((n, n))) + 3 * np.eye(n))).astype(dtype)


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("n", [1, 5])
def test_cholesky_update_as_jax(n, dtype, tol, sign):
    """The factor with a positive diagonal, whatever the signs of R's."""
    rng = np.random.default_rng(n)
    r, w = _factor(rng, n, dtype, sign), rng.standard_normal(n).astype(dtype)
    with both_x64():
        got = linalg.cholesky_update(r, w)
        _close(got, jax.lax.linalg.cholesky_update(r, w), tol)
        _close(didax.jit(linalg.cholesky_update)(r, w), got, 0)
    got = np.asarray(got, np.float64)
    r64, w64 = np.asarray(r, np.float64), np.asarray(w, np.float64)
    np.testing.assert_allclose(got.T @ got, r64.T @ r64 + np.outer(w64, w64), atol=tol * 100)


@pytest.mark.parametrize("symmetrize", [False, True])
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("batch", [(), (2,)], ids=str)
def test_symmetric_product_as_jax(batch, dtype, tol, symmetrize):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(batch + (3, 4)).astype(dtype)
    c = rng.standard_normal(batch + (3, 3)).astype(dtype)
    kwargs = dict(alpha=2.0, beta=0.5, symmetrize_output=symmetrize)
    with both_x64():
        got = linalg.symmetric_product(a, c, **kwargs)
        _close(got, jax.lax.linalg.symmetric_product(a, c, **kwargs), tol)
        f = lambda x, y: linalg.symmetric_product(x, y, **kwargs)  # noqa: E731
        _close(didax.jit(f)(a, c), got, 0)
        if batch:
            _close(didax.vmap(f)(a, c), got, 0)
            _close(didax.vmap(f, in_axes=(0, None))(a, c[0]),
                   np.stack([np.asarray(f(a[i], c[0])) for i in range(2)]), 0)


def test_symmetric_product_jaxpr_as_jax():
    a, c = np.ones((3, 2), np.float32), np.eye(3, dtype=np.float32)
    f = lambda x, y: linalg.symmetric_product(x, y, alpha=2.0)  # noqa: E731
    jf = lambda x, y: jax.lax.linalg.symmetric_product(x, y, alpha=2.0)  # noqa: E731
    assert str(didax.make_jaxpr(f)(a, c)) == str(jax.make_jaxpr(jf)(a, c))


@needs_jax
@pytest.mark.parametrize("args", [
    (np.ones((2, 3, 3)), np.ones((2, 3))),
    (np.eye(3), np.ones(2)),
    (np.eye(3), np.ones(3, np.float32)),
    (np.eye(3, dtype=int), np.ones(3, int)),
    (np.eye(3, dtype=complex), np.ones(3, complex)),
], ids=["batched", "sizes", "dtypes", "ints", "complex"])
def test_cholesky_update_errors_as_jax(args):
    with both_x64():
        with pytest.raises(Exception) as want:
            jax.lax.linalg.cholesky_update(*args)
        with pytest.raises(want.type):
            linalg.cholesky_update(*args)


@needs_jax
@pytest.mark.parametrize("args", [
    (np.ones((3, 2)), np.ones((2, 3))),
    (np.ones((3, 2)), np.ones((3, 3), np.float32)),
    (np.ones((3, 2), int), np.ones((3, 3), int)),
    (np.ones((3, 2), complex), np.ones((3, 3), complex)),
    (np.ones(2), np.ones((3, 3))),
], ids=["shapes", "dtypes", "ints", "complex", "rank"])
def test_symmetric_product_errors_as_jax(args):
    with both_x64():
        with pytest.raises(Exception) as want:
            jax.lax.linalg.symmetric_product(*args)
        with pytest.raises(want.type):
            linalg.symmetric_product(*args)


@needs_jax
def test_no_derivatives_nor_batching_where_jax_has_none():
    r, w = np.eye(3, dtype=np.float32), np.ones(3, np.float32)
    for fn in ("cholesky_update", "symmetric_product"):
        args = (r, w) if fn == "cholesky_update" else (r, r)
        with pytest.raises(NotImplementedError):
            jax.jvp(getattr(jax.lax.linalg, fn), args, args)
        with pytest.raises(NotImplementedError, match=fn):
            didax.jvp(getattr(linalg, fn), args, args)
    with pytest.raises(NotImplementedError):
        jax.vmap(jax.lax.linalg.cholesky_update)(r[None], w[None])
    with pytest.raises(NotImplementedError, match="cholesky_update"):
        didax.vmap(linalg.cholesky_update)(r[None], w[None])
