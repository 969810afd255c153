"""The Faddeeva function w(z) = exp(-z^2) erfc(-iz) of complex z, the building block of the
complex error functions and of the Voigt profile.

In the upper half plane, |z| < 8 uses Weideman's rational approximation (SIAM J. Numer.
Anal. 31, 1994) with 40 terms, whose coefficients are computed here at import by the FFT,
and |z| >= 8 the Laplace continued fraction w(z) = (i / sqrt(pi)) / (z - (1/2) / (z - 1 /
(z - (3/2) / ...))) evaluated from depth 16 upwards. The lower half plane follows from
w(z) = 2 exp(-z^2) - w(-z). Float64 agrees with mpmath to ~1e-15 in |w - w_exact| / |w| in
the upper half plane (JAX's 32-term approximation is ~3e-13 off); the real axis returns
Re w(x) = exp(-x^2) exactly (elsewhere a real part far smaller than |w| is accurate relative
to |w| only). In the lower half plane exp(-z^2) grows like exp(y^2 - x^2) and its phase 2xy
carries |z|^2 ulps of rounding; the value overflows to an infinity of the right quadrant,
and near w's zeros (which lie there) the error is absolute, as the subtraction forces.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src.core import get_aval
from didax._src.lax.elementwise import complex as complex_
from didax._src.lax.elementwise import convert_element_type
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.primitives.custom_derivatives import custom_jvp

__all__ = ["wofz"]

_TERMS = 40
_FAR = 8.0  # |z| from which the continued fraction is used
_DEPTH = 16  # its depth: (2k-1)!! / (2|z|^2)^k < 1e-18 at |z| = 8
_INV_SQRT_PI = 1 / math.sqrt(math.pi)


def _weideman_coefficients(n):
    """L and the n polynomial coefficients (highest degree first) of Weideman's expansion
    of w in powers of (L + iz) / (L - iz): the Fourier coefficients of
    exp(-t^2) (L^2 + t^2) on the circle t = L tan(theta / 2)."""
    m = 2 * n
    scale = math.sqrt(n / math.sqrt(2))
    theta = np.arange(-m + 1, m) * np.pi / m
    t = scale * np.tan(theta / 2)
    samples = np.concatenate([[0.0], np.exp(-t * t) * (scale * scale + t * t)])
    spectrum = np.real(np.fft.fft(np.fft.fftshift(samples))) / (2 * m)
    return scale, [float(c) for c in spectrum[1:n + 1][::-1]]


_L, _COEFFS = _weideman_coefficients(_TERMS)


def _w_near(z):
    """Weideman's approximation, for Im z >= 0 and |z| < 8."""
    iz = 1j * z
    denominator = _L - iz
    ratio = (_L + iz) / denominator
    poly = jnp.zeros_like(z)
    for c in _COEFFS:
        poly = poly * ratio + c
    return 2 * poly / (denominator * denominator) + _INV_SQRT_PI / denominator


def _w_far(z):
    """The Laplace continued fraction, for Im z >= 0 and |z| >= 8."""
    t = z
    for k in range(_DEPTH, 0, -1):
        t = z - (k / 2) / t
    return (1j * _INV_SQRT_PI) / t


def _reflect(x, y, upper):
    """w(z) = 2 exp(-z^2) - w(-z) for Im z < 0, with exp(-z^2) = exp(y^2 - x^2) (cos 2xy -
    i sin 2xy): half of it is formed with the modulus capped at the largest finite value, so
    that only the final doubling overflows, each part to the infinity of its sign (not nan)."""
    modulus = jnp.minimum(jnp.exp((y - x) * (y + x)), np.finfo(get_aval(x).dtype).max)
    phase = 2 * x * y
    half = complex_(modulus * jnp.cos(phase) - jnp.real(upper) / 2,
                    -modulus * jnp.sin(phase) - jnp.imag(upper) / 2)
    return 2 * half


def _wofz(z):
    x, y = jnp.real(z), jnp.imag(z)
    lower = y < 0
    zu = jnp.where(lower, -z, z)  # in the upper half plane
    size = jnp.abs(zu)
    far = size >= _FAR
    infinite = jnp.isinf(size)
    near_value = _w_near(jnp.where(far, 0, zu))
    far_value = _w_far(jnp.where(far & ~infinite, zu, _FAR))
    upper = jnp.where(far, far_value, near_value)
    upper = jnp.where(infinite, 0, upper)  # w -> 0 as |z| -> inf with Im z >= 0
    on_axis = complex_(jnp.exp(-x * x), jnp.imag(upper))  # Re w(x) = exp(-x^2) exactly
    upper = jnp.where(y == 0, on_axis, upper)
    reflected = _reflect(x, y, upper)
    return jnp.where(lower, reflected, upper)


@custom_jvp
def _wofz_complex(z):
    return _wofz(z)


_wofz_complex.defjvps(lambda g, ans, z: g * (-2 * z * ans + 2j * _INV_SQRT_PI))


def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz), elementwise; real input is taken as
    complex (float32 and narrower give complex64, float64 complex128). The derivative is
    w'(z) = -2 z w(z) + 2i / sqrt(pi).

    Unlike JAX, w of an infinite z in the closed upper half plane is its limit 0 (JAX: nan),
    and the lower half plane's overflow is an infinity, not nan, where its phase is known.
    """
    z, = promote_args_inexact("wofz", z)
    dtype = get_aval(z).dtype
    complex_dtype = np.complex128 if dtype in (np.float64, np.complex128) else np.complex64
    z = convert_element_type(z, complex_dtype, False)
    return _wofz_complex(z)
