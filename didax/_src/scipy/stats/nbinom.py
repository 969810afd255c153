"""The negative binomial distribution (jax.scipy.stats.nbinom): failures before the n-th
success."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import gammaln, xlog1py, xlogy


def logpmf(k, n, p, loc=0):
    """log Gamma(n + y) / (y! Gamma(n)) + n log p + y log(1 - p) for y = k - loc >= 0."""
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    log_comb = gammaln(n + y) - gammaln(y + 1) - gammaln(n)
    logp = log_comb + xlogy(n, p) + xlog1py(y, -p)
    return jnp.where(y < 0, -np.inf, logp)


def pmf(k, n, p, loc=0):
    return jnp.exp(logpmf(k, n, p, loc))
