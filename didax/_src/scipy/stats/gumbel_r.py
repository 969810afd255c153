"""The right-skewed Gumbel distribution (jax.scipy.stats.gumbel_r): cdf exp(-exp(-z)),
z = (x - loc) / scale."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact


def _z(name, x, loc, scale):
    x, loc, scale = promote_args_inexact(name, x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    z, scale = _z("gumbel_r.logpdf", x, loc, scale)
    return -z - jnp.exp(-z) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    z, _ = _z("gumbel_r.logcdf", x, loc, scale)
    return -jnp.exp(-z)


def cdf(x, loc=0, scale=1):
    return jnp.exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    z, _ = _z("gumbel_r.sf", x, loc, scale)
    return -jnp.expm1(-jnp.exp(-z))


def logsf(x, loc=0, scale=1):
    """log(sf) from sf while it is below 1/2, else log1p(-cdf): no digits lost at
    either end."""
    mine, other = sf(x, loc, scale), cdf(x, loc, scale)
    return jnp.where(mine < 0.5, jnp.log(mine), jnp.log1p(-other))


def ppf(p, loc=0, scale=1):
    """loc - scale log(-log p) on the open interval 0 < p < 1 (nan elsewhere, as JAX)."""
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    value = loc - scale * jnp.log(-jnp.log(p))
    return jnp.where((p > 0) & (p < 1), value, np.nan)
