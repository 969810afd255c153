"""The Laplace distribution (jax.scipy.stats.laplace)."""
from __future__ import annotations

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    return -(jnp.abs(x - loc) / scale + jnp.log(2 * scale))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    d = (x - loc) / scale
    return jnp.where(d <= 0, jnp.exp(d) / 2, 1 - jnp.exp(-d) / 2)
