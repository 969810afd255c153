"""The truncated normal distribution (jax.scipy.stats.truncnorm): the standard normal
restricted to a <= z <= b, z = (x - loc) / scale.

A nan x gives nan (JAX 0.10.2 answers cdf = sf = 1 there, SciPy nan).

Masses Phi(hi) - Phi(lo) are taken in logs and on the side where they do not cancel: from
log_ndtr in the lower tail (hi < 0), from the mirrored upper tail (lo > 0), and from erf
(whose terms then have opposite signs) when the interval straddles 0.
"""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import erf, log_ndtr

_SQRT_HALF = np.sqrt(0.5)


def _log_diff_exp(u, v):
    """log(exp(u) - exp(v)) for u >= v."""
    return u + jnp.log(-jnp.expm1(v - u))


def _log_mass(lo, hi):
    """log(Phi(hi) - Phi(lo)) for lo <= hi."""
    lower_tail = hi < 0
    upper_tail = lo > 0
    # each branch gets arguments it is defined at, so unused ones stay finite
    lo_l, hi_l = jnp.where(lower_tail, lo, -1.0), jnp.where(lower_tail, hi, -0.5)
    lo_u, hi_u = jnp.where(upper_tail, lo, 0.5), jnp.where(upper_tail, hi, 1.0)
    mid = ~(lower_tail | upper_tail)
    lo_m, hi_m = jnp.where(mid, lo, -1.0), jnp.where(mid, hi, 1.0)
    from_lower = _log_diff_exp(log_ndtr(hi_l), log_ndtr(lo_l))
    from_upper = _log_diff_exp(log_ndtr(-lo_u), log_ndtr(-hi_u))
    from_erf = jnp.log((erf(hi_m * _SQRT_HALF) - erf(lo_m * _SQRT_HALF)) / 2)
    return jnp.where(lower_tail, from_lower, jnp.where(upper_tail, from_upper, from_erf))


def _log_fraction(z, a, b, lower):
    """log of the share of the mass on [a, z] (lower) or [z, b], for a < z < b: directly
    while that share is below 1/2, else log1p of minus the other share."""
    inside = (z > a) & (z < b)
    safe_z = jnp.where(inside, z, (a + b) / 2)
    log_total = _log_mass(a, b)
    below = _log_mass(a, safe_z) - log_total
    above = _log_mass(safe_z, b) - log_total
    mine, other = (below, above) if lower else (above, below)
    return jnp.where(mine < -np.log(2), mine, jnp.log1p(-jnp.exp(other)))


def _standardize(name, x, a, b, loc, scale):
    x, a, b, loc, scale = promote_args_inexact(name, x, a, b, loc, scale)
    return (x - loc) / scale, a, b, scale


def logpdf(x, a, b, loc=0, scale=1):
    z, a, b, scale = _standardize("truncnorm.logpdf", x, a, b, loc, scale)
    value = -0.5 * z * z - 0.5 * np.log(2 * np.pi) - jnp.log(scale) - _log_mass(a, b)
    return jnp.where((z < a) | (z > b), -np.inf, value)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    z, a, b, _ = _standardize("truncnorm.logcdf", x, a, b, loc, scale)
    value = _log_fraction(z, a, b, lower=True)
    value = jnp.where(z <= a, -np.inf, jnp.where(z >= b, 0.0, value))
    return jnp.where(jnp.isnan(z), np.nan, value)


def cdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    z, a, b, _ = _standardize("truncnorm.logsf", x, a, b, loc, scale)
    value = _log_fraction(z, a, b, lower=False)
    value = jnp.where(z <= a, 0.0, jnp.where(z >= b, -np.inf, value))
    return jnp.where(jnp.isnan(z), np.nan, value)


def sf(x, a, b, loc=0, scale=1):
    return jnp.exp(logsf(x, a, b, loc, scale))
