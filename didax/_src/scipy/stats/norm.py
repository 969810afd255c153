"""The normal distribution (jax.scipy.stats.norm)."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy import special


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    var = jnp.square(scale)
    return (jnp.log(2 * np.pi * var) + jnp.square(x - loc) / var) / -2


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    return jnp.asarray(special.ndtri(q) * scale + loc, float)


def isf(q, loc=0, scale=1):
    q, = promote_args_inexact("norm.isf", q)
    return ppf(1 - q, loc, scale)
