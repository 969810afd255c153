"""The wrapped Cauchy distribution (jax.scipy.stats.wrapcauchy): density
(1 - c^2) / (2 pi (1 + c^2 - 2 c cos x)) on 0 <= x <= 2 pi, for 0 < c < 1."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact

_LOG_2PI = float(np.log(2 * np.pi))  # Python floats keep weak types weak
_PI = float(np.pi)


def logpdf(x, c):
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    value = (jnp.log1p(-c * c) - _LOG_2PI
             - jnp.log1p(c * c - 2 * c * jnp.cos(x)))
    value = jnp.where((x >= 0) & (x <= 2 * _PI), value, -np.inf)
    return jnp.where((c > 0) & (c < 1), value, np.nan)


def pdf(x, c):
    return jnp.exp(logpdf(x, c))
