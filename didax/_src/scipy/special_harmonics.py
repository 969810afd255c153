"""Spherical harmonics Y_n^m(theta, phi) (`scipy.special.sph_harm_y`: theta polar, phi
azimuthal, Condon-Shortley phase), from the fully normalized associated Legendre functions
by their stable recurrences (no factorials, so high orders do not overflow):
  P_k^k = -sqrt((2k + 1) / 2k) sin(theta) P_(k-1)^(k-1),   P_0^0 = 1 / sqrt(4 pi),
  P_l^m = a_l^m (cos(theta) P_(l-1)^m - P_(l-2)^m / a_(l-1)^m),
  a_l^m = sqrt((4l^2 - 1) / (l^2 - m^2)),
and Y_n^-m = (-1)^m conj(Y_n^m).
"""
from __future__ import annotations

import math

import numpy as np

from didax._src.core import get_aval
from didax._src.lax import elementwise as lax
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import concrete_or_error, promote_args_inexact

__all__ = ["sph_harm_y"]


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """Y_n^m(theta, phi) for integer arrays n >= 0 and m (0 where |m| > n), broadcast
    together. n_max bounds n when n is traced (under jit); by default it is max(n)."""
    if diff_n is not None:
        raise NotImplementedError("sph_harm_y with diff_n (derivatives of the harmonics)")
    n, m = jnp.asarray(n), jnp.asarray(m)
    for name, v in (("n", n), ("m", m)):
        if not jnp.issubdtype(v.dtype, jnp.integer):
            raise TypeError(f"sph_harm_y: {name} must be an integer array, got {v.dtype}")
    if n_max is None:
        n_max = int(np.max(concrete_or_error(n, "n of sph_harm_y (or pass n_max)")))
    n_max = int(n_max)
    theta, phi = promote_args_inexact("sph_harm_y", theta, phi)
    n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
    dtype = get_aval(theta).dtype
    m_abs = jnp.abs(m).astype(dtype)
    n_f = n.astype(dtype)
    cos_t, sin_t = jnp.cos(theta), jnp.sin(theta)
    # the sectoral P_|m|^|m|
    sectoral = jnp.full_like(theta, 1 / math.sqrt(4 * math.pi))
    for k in range(1, n_max + 1):
        step = -math.sqrt((2 * k + 1) / (2 * k)) * sin_t * sectoral
        sectoral = jnp.where(k <= m_abs, step, sectoral)
    # upwards in l from |m|: before l reaches |m| the recurrence holds (0, P_m^m)
    lower, current = jnp.zeros_like(theta), sectoral
    result = jnp.where(n_f == m_abs, sectoral, 0.0)
    for deg in range(1, n_max + 1):
        active = deg > m_abs
        l2m2 = jnp.where(active, deg * deg - m_abs * m_abs, 1.0)
        a_l = jnp.sqrt((4 * deg * deg - 1) / l2m2)
        prev_l2m2 = jnp.where(active & (deg - 1 > m_abs), (deg - 1) ** 2 - m_abs * m_abs, 1.0)
        a_prev = jnp.where(deg - 1 > m_abs, jnp.sqrt((4 * (deg - 1) ** 2 - 1) / prev_l2m2), 1.0)
        nxt = a_l * (cos_t * current - lower / a_prev)
        lower, current = jnp.where(active, current, lower), jnp.where(active, nxt, current)
        result = jnp.where(active & (n_f == deg), nxt, result)
    result = jnp.where((m_abs > n_f) | (n < 0), 0.0, result)
    angle = m_abs * phi
    y = lax.complex(result * jnp.cos(angle), result * jnp.sin(angle))
    sign = jnp.where(m_abs % 2 == 1, -1.0, 1.0)
    return jnp.where(m < 0, jnp.conj(y) * sign.astype(y.dtype), y)
