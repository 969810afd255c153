"""The binomial distribution (jax.scipy.stats.binom)."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import gammaln, xlog1py, xlogy


def logpmf(k, n, p, loc=0):
    """log C(n, y) p^y (1 - p)^(n - y) for y = k - loc in [0, n] (-inf outside, and for a
    nan y or n)."""
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    log_comb = gammaln(n + 1) - gammaln(y + 1) - gammaln(n - y + 1)
    logp = log_comb + xlogy(y, p) + xlog1py(n - y, -p)
    return jnp.where((y >= 0) & (y <= n), logp, -np.inf)


def pmf(k, n, p, loc=0):
    return jnp.exp(logpmf(k, n, p, loc))
