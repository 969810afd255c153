"""Bessel functions: the modified ones of order 0 and 1 (`scipy.special.i0, i0e, i1, i1e`)
from the scaled lax primitives, I_n(x) = exp(|x|) i_ne(x), so they overflow only where I_n
does; and `bessel_jn`, J_0..J_v by Miller's backward recurrence."""
from __future__ import annotations

import operator

import numpy as np

from didax._src.core import get_aval
from didax._src.lax import elementwise as lax
from didax._src.lax.bessel import bessel_i0e, bessel_i1e
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import concrete_or_error, promote_args_inexact

__all__ = ["bessel_jn", "i0", "i0e", "i1", "i1e"]


def i0e(x):
    x, = promote_args_inexact("i0e", x)
    return bessel_i0e(x)


def i0(x):
    x, = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), bessel_i0e(x))


def i1e(x):
    x, = promote_args_inexact("i1e", x)
    return bessel_i1e(x)


def i1(x):
    x, = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), bessel_i1e(x))


def bessel_jn(z, *, v, n_iter=50):
    """J_0(z), ..., J_v(z) stacked on a new leading axis, by Miller's algorithm: the
    recurrence J_(k-1) = (2k / z) J_k - J_(k+1) run downwards from J_(n_iter + 1) = 0,
    J_(n_iter) = 1 (stable in that direction), normalized by J_0 + 2 sum_k J_2k = 1. Its
    accuracy needs n_iter well above |z| (and v); derivatives follow the recurrence.
    J_n(0) is 1 for n = 0 and 0 otherwise (JAX 0.10.2 answers nan there)."""
    v = operator.index(concrete_or_error(v, "The order v of bessel_jn"))
    n_iter = operator.index(concrete_or_error(n_iter, "n_iter of bessel_jn"))
    if v < 0:
        raise ValueError(f"bessel_jn: the order v must be a non-negative integer, got {v}")
    if n_iter < v + 1:
        raise ValueError(f"bessel_jn: n_iter={n_iter} must exceed the order v={v}")
    z, = promote_args_inexact("bessel_jn", z)
    z = jnp.asarray(z)
    at_zero = z == 0
    safe_z = jnp.where(at_zero, 1.0, z)
    big = float(np.sqrt(np.finfo(get_aval(z).dtype).max))
    upper, current = jnp.zeros_like(z), jnp.ones_like(z)
    even_sum = jnp.zeros_like(z)  # 2 sum_(k >= 1) J_2k, unnormalized
    kept = {}
    if n_iter <= v:
        kept[n_iter] = current
    if n_iter % 2 == 0:
        even_sum = even_sum + 2 * current
    for k in range(n_iter, 0, -1):
        upper, current = current, (2 * k / safe_z) * current - upper
        if k - 1 <= v:
            kept[k - 1] = current
        if (k - 1) % 2 == 0 and k - 1 > 0:
            even_sum = even_sum + 2 * current
        # rescale before the growing solution overflows
        shrink = jnp.where(jnp.abs(current) > big, 1 / big, 1.0)
        upper, current, even_sum = upper * shrink, current * shrink, even_sum * shrink
        kept = {m: value * shrink for m, value in kept.items()}
    norm = kept[0] + even_sum
    rows = [jnp.where(at_zero, 1.0 if m == 0 else 0.0, kept[m] / norm) for m in range(v + 1)]
    return jnp.stack(rows)
