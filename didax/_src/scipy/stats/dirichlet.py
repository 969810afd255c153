"""The Dirichlet distribution (jax.scipy.stats.dirichlet); x's first axis runs over the K
categories (or K - 1 of them, the last being 1 - their sum)."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_dtypes_inexact
from didax._src.scipy.special import gammaln, xlogy


def logpdf(x, alpha):
    x, alpha = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(alpha))
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, 1 - x.sum(0, keepdims=True)], axis=0)
    normalize = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    alpha = jnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    logp = jnp.sum(xlogy(alpha - 1, x), axis=0) - normalize
    simplex = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)
    return jnp.where(simplex, logp, -np.inf)


def pdf(x, alpha):
    return jnp.exp(logpdf(x, alpha))
