"""The geometric distribution on 1, 2, ... (jax.scipy.stats.geom)."""
from __future__ import annotations

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.scipy.special import xlog1py


def logpmf(k, p, loc=0):
    """(y - 1) log(1 - p) + log p for y = k - loc >= 1."""
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    y = k - loc
    return jnp.where(y <= 0, -np.inf, xlog1py(y - 1, -p) + jnp.log(p))


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))
