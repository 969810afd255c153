"""The beta distribution (jax.scipy.stats.beta); as in JAX, cdf and sf differentiate in x,
loc and scale but not in a and b (betainc has no derivative there)."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import betainc, betaln, xlog1py, xlogy


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    logp = xlogy(a - 1, y) + xlog1py(b - 1, -y) - betaln(a, b) - jnp.log(scale)
    logp = jnp.where((x > loc + scale) | (x < loc), -np.inf, logp)
    return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, logp)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _unit(name, x, a, b, loc, scale):
    x, a, b, loc, scale = promote_args_inexact(name, x, a, b, loc, scale)
    return jnp.clip((x - loc) / scale, 0, 1), a, b


def cdf(x, a, b, loc=0, scale=1):
    y, a, b = _unit("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, y)


def sf(x, a, b, loc=0, scale=1):
    y, a, b = _unit("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1 - y)


def logcdf(x, a, b, loc=0, scale=1):
    return jnp.log(cdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    return jnp.log(sf(x, a, b, loc, scale))
