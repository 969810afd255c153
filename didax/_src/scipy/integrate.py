"""didax.scipy.integrate: the trapezoidal rule, as `jax.scipy.integrate.trapezoid`."""
from __future__ import annotations

from didax._src.numpy import namespace as jnp

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integrates `y` along `axis` by the trapezoidal rule, with samples at `x` or spaced `dx`."""
    return jnp.trapezoid(y, x=x, dx=dx, axis=axis)
