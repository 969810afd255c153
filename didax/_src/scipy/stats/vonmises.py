"""The von Mises distribution on the circle (jax.scipy.stats.vonmises): density
exp(kappa cos x) / (2 pi I0(kappa)), written with i0e so large kappa does not overflow."""
from __future__ import annotations

import numpy as np

from didax._src.lax.bessel import bessel_i0e
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact

_LOG_2PI = float(np.log(2 * np.pi))  # a Python float keeps weak types weak


def logpdf(x, kappa):
    """kappa (cos x - 1) - log(2 pi i0e(kappa)); nan for kappa <= 0 (as JAX)."""
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    safe_kappa = jnp.where(kappa > 0, kappa, 1)
    value = safe_kappa * (jnp.cos(x) - 1) - _LOG_2PI - jnp.log(bessel_i0e(safe_kappa))
    return jnp.where(kappa > 0, value, np.nan)


def pdf(x, kappa):
    return jnp.exp(logpdf(x, kappa))
