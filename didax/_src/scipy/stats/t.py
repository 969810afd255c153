"""Student's t distribution (jax.scipy.stats.t)."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import gammaln


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half = df / 2
    norm = gammaln(half) + jnp.log(np.pi * jnp.square(scale) * df) / 2 - gammaln(half + 0.5)
    return -(norm + (half + 0.5) * jnp.log1p(jnp.square(y) / df))


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))
