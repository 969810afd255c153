"""The beta-binomial distribution (jax.scipy.stats.betabinom)."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import betaln, gammaln


def logpmf(k, n, a, b, loc=0):
    """log C(n, y) B(y + a, n - y + b) / B(a, b) for y = floor(k - loc) in [0, n] (as JAX,
    k is rounded down); nan for n < 0 or a, b <= 0."""
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = jnp.floor(k - loc)
    log_comb = gammaln(n + 1) - gammaln(y + 1) - gammaln(n - y + 1)
    logp = log_comb + betaln(y + a, n - y + b) - betaln(a, b)
    logp = jnp.where((y < 0) | (y > n), -np.inf, logp)
    return jnp.where((n < 0) | (a <= 0) | (b <= 0), np.nan, logp)


def pmf(k, n, a, b, loc=0):
    return jnp.exp(logpmf(k, n, a, b, loc))
