"""The generalized normal distribution (jax.scipy.stats.gennorm): density
beta / (2 Gamma(1/beta)) exp(-|x|^beta)."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import gammainc, gammaln

_LOG_2 = float(np.log(2))  # a Python float keeps weak types weak


def logpdf(x, beta):
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return jnp.log(beta) - _LOG_2 - gammaln(1 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """1/2 + sign(x) P(1/beta, |x|^beta) / 2."""
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    return 0.5 + jnp.sign(x) * 0.5 * gammainc(1 / beta, jnp.abs(x) ** beta)
