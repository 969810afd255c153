"""The chi-squared distribution (jax.scipy.stats.chi2): a gamma(df / 2, scale 2)."""
from __future__ import annotations

import math

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import gammainc, gammaincc, gammaln


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half = df / 2
    logp = (half - 1) * jnp.log(y) - y / 2 - gammaln(half) - half * math.log(2.0) - jnp.log(scale)
    return jnp.where(x < loc, -np.inf, logp)


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))


def _half(name, x, df, loc, scale):
    x, df, loc, scale = promote_args_inexact(name, x, df, loc, scale)
    return df / 2, jnp.clip((x - loc) / (scale * 2), 0, np.inf)


def cdf(x, df, loc=0, scale=1):
    return gammainc(*_half("chi2.cdf", x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    return gammaincc(*_half("chi2.sf", x, df, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    return jnp.log(cdf(x, df, loc, scale))


def logsf(x, df, loc=0, scale=1):
    return jnp.log(sf(x, df, loc, scale))
