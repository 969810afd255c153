"""The Poisson distribution (jax.scipy.stats.poisson)."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import entr, gammaincc, gammaln, xlogy


def logpmf(k, mu, loc=0):
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    logp = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), -np.inf, logp)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = promote_args_inexact("poisson.cdf", k, mu, loc)
    x = k - loc
    return jnp.where(x < 0, 0, gammaincc(jnp.floor(1 + jnp.maximum(x, 0)), mu))


def _entropy_sum(mu, terms, bound):
    """Direct sum of -p log p over k < bound (at most `terms` of them)."""
    k = jnp.arange(terms, dtype=mu.dtype)[:, None]
    p = jnp.where(k < jnp.ceil(bound)[None, :], pmf(k, mu[None, :]), 0)
    return jnp.sum(entr(p), axis=0)


def entropy(mu, loc=0):
    """H(mu): summed for mu < 100 (k up to mu + 20, or mu + 10 sqrt(mu) + 20), Stirling's
    1/2 log(2 pi e mu) - 1/(12 mu) above, as JAX (loc does not change it)."""
    mu, loc = promote_args_inexact("poisson.entropy", mu, loc)
    shape = jnp.broadcast_shapes(jnp.shape(mu), jnp.shape(loc))
    flat = jnp.ravel(mu)
    small = _entropy_sum(flat, 35, flat + 20)
    medium = _entropy_sum(flat, 250, flat + 10 * jnp.sqrt(flat) + 20)
    large = jnp.log(2 * np.pi * np.e * flat) / 2 - 1 / (12 * flat)
    h = jnp.where(flat == 0, 0, jnp.where(flat < 10, small, jnp.where(flat < 100, medium, large)))
    return jnp.broadcast_to(jnp.reshape(h, jnp.shape(mu)), shape)
