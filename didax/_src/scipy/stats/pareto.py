"""The Pareto distribution (jax.scipy.stats.pareto): density b / z^(b + 1) on z >= 1, with
z = (x - loc) / scale."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    z = (x - loc) / scale
    safe_z = jnp.where(z < 1, 1, z)
    return jnp.where(z < 1, -np.inf, jnp.log(b) - jnp.log(scale) - (b + 1) * jnp.log(safe_z))


def pdf(x, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, b, loc, scale))


def _tail(x, b, loc, scale, name):
    """(z < 1, b, z) with z replaced by 1 below the support (a nan z stays nan)."""
    x, b, loc, scale = promote_args_inexact(name, x, b, loc, scale)
    z = (x - loc) / scale
    below = z < 1
    return below, b, jnp.where(below, 1, z)


def cdf(x, b, loc=0, scale=1):
    below, b, z = _tail(x, b, loc, scale, "pareto.cdf")
    return jnp.where(below, 0, -jnp.expm1(-b * jnp.log(z)))


def logcdf(x, b, loc=0, scale=1):
    below, b, z = _tail(x, b, loc, scale, "pareto.logcdf")
    return jnp.where(below, -np.inf, jnp.log1p(-jnp.exp(-b * jnp.log(z))))


def sf(x, b, loc=0, scale=1):
    below, b, z = _tail(x, b, loc, scale, "pareto.sf")
    return jnp.where(below, 1, jnp.exp(-b * jnp.log(z)))


def logsf(x, b, loc=0, scale=1):
    below, b, z = _tail(x, b, loc, scale, "pareto.logsf")
    return jnp.where(below, 0, -b * jnp.log(z))


def ppf(q, b, loc=0, scale=1):
    """loc + scale (1 - q)^(-1/b) for q in [0, 1], nan outside."""
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    value = loc + scale * jnp.exp(-jnp.log1p(-q) / b)
    return jnp.where((q < 0) | (q > 1), np.nan, value)
