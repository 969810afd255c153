"""The Bernoulli distribution (jax.scipy.stats.bernoulli)."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import xlog1py, xlogy


def logpmf(k, p, loc=0):
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    logp = xlogy(x, p) + xlog1py(1 - x, -p)
    return jnp.where((x < 0) | (x > 1), -np.inf, logp)  # as JAX: k is not rounded


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """0 below 0, 1 - p on [0, 1), 1 from 1 on; nan for p outside [0, 1]."""
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    value = jnp.where(k < 0, 0, jnp.where(k < 1, 1 - p, 1))
    return jnp.where((p < 0) | (p > 1) | jnp.isnan(k), np.nan, value)


def ppf(q, p):
    """The least k in {0, 1} with cdf(k) >= q; nan for q or p outside [0, 1]."""
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    value = jnp.where(q <= 1 - p, jnp.zeros_like(q), jnp.ones_like(q))
    return jnp.where((q < 0) | (q > 1) | (p < 0) | (p > 1) | jnp.isnan(q), np.nan, value)
