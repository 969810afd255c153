"""The multinomial distribution (jax.scipy.stats.multinomial): counts x over the last axis."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import gammaln, xlogy


def logpmf(x, n, p):
    """log n! - sum log x_i! + sum x_i log p_i, -inf where the counts do not add up to n
    (per row of x: JAX compares the total over all rows)."""
    x_dtype, n_dtype = jnp.asarray(x).dtype, jnp.asarray(n).dtype
    if not (jnp.issubdtype(x_dtype, jnp.integer) and jnp.issubdtype(n_dtype, jnp.integer)):
        raise ValueError(f"multinomial.logpmf: x and n must be integer counts; got "
                         f"x.dtype={x_dtype}, n.dtype={n_dtype}")
    p, = promote_args_inexact("multinomial.logpmf", p)
    x = jnp.asarray(x).astype(p.dtype)
    n = jnp.asarray(n).astype(p.dtype)
    logp = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return jnp.where(jnp.equal(jnp.sum(x, axis=-1), n), logp, -np.inf)


def pmf(x, n, p):
    return jnp.exp(logpmf(x, n, p))
