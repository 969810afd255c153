"""The multivariate normal distribution (jax.scipy.stats.multivariate_normal): a scalar or
vector mean, a scalar (isotropic) or matrix covariance, through its Cholesky factor."""
from __future__ import annotations

import numpy as np

from didax._src.lax import linalg as lax_linalg
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_dtypes_inexact
from didax._src.transforms.api import vmap


def _solve_lower(L, d):
    """L^-1 d for one (n, n) factor and rows d of shape (..., n)."""
    n = L.shape[-1]
    z = lax_linalg.triangular_solve(L, jnp.reshape(d, (-1, n)).T, left_side=True, lower=True)
    return jnp.reshape(z.T, d.shape)


def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(mean), jnp.asarray(cov))
    if not mean.shape:
        return -jnp.square(x - mean) / cov / 2 - (np.log(2 * np.pi) + jnp.log(cov)) / 2
    n = mean.shape[-1]
    d = x - mean
    if not cov.shape:
        return -jnp.sum(d * d, axis=-1) / cov / 2 - n / 2 * (np.log(2 * np.pi) + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    L = lax_linalg.cholesky(cov)
    if cov.ndim == 2:
        y = _solve_lower(L, d)
    else:  # a batch of covariances: broadcast and solve one by one
        batch = jnp.broadcast_shapes(d.shape[:-1], cov.shape[:-2])
        Lb = jnp.reshape(jnp.broadcast_to(L, batch + (n, n)), (-1, n, n))
        db = jnp.reshape(jnp.broadcast_to(d, batch + (n,)), (-1, n))
        y = jnp.reshape(vmap(_solve_lower)(Lb, db), batch + (n,))
    log_det = jnp.sum(jnp.log(jnp.diagonal(L, axis1=-2, axis2=-1)), axis=-1)
    return -jnp.sum(y * y, axis=-1) / 2 - n / 2 * np.log(2 * np.pi) - log_det


def pdf(x, mean, cov):
    return jnp.exp(logpdf(x, mean, cov))
