"""Window functions of signal processing (bartlett, blackman, hamming, hanning): M points in
the default float dtype, symmetric, all ones for M <= 1.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import _filled, _iota
from didax._src.numpy.bessel import i0
from didax._src.numpy.util import concrete_or_error

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _points(M, name):
    """M (concrete), the default float dtype, and n = 0..M-1 (None when M <= 1)."""
    M = int(concrete_or_error(M, f"M argument of jnp.{name}"))
    dtype = dtypes.default_float_dtype()
    if M < 0:
        raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, got "
                        f"({M},).")
    if M <= 1:
        return M, _filled((M,), 1, dtype), None
    return M, None, _iota(dtype, (M,))


def bartlett(M):
    """The triangular window 1 - |2n + 1 - M| / (M - 1)."""
    M, ones, n = _points(M, "bartlett")
    if n is None:
        return ones
    return 1 - ufuncs.abs(2 * n + 1 - M) / (M - 1)


def blackman(M):
    """0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))."""
    M, ones, n = _points(M, "blackman")
    if n is None:
        return ones
    return (0.42 - 0.5 * ufuncs.cos(2 * np.pi * n / (M - 1))
            + 0.08 * ufuncs.cos(4 * np.pi * n / (M - 1)))


def hamming(M):
    """0.54 - 0.46 cos(2 pi n / (M - 1))."""
    M, ones, n = _points(M, "hamming")
    if n is None:
        return ones
    return 0.54 - 0.46 * ufuncs.cos(2 * np.pi * n / (M - 1))


def hanning(M):
    """0.5 (1 - cos(2 pi n / (M - 1)))."""
    M, ones, n = _points(M, "hanning")
    if n is None:
        return ones
    return 0.5 * (1 - ufuncs.cos(2 * np.pi * n / (M - 1)))


def kaiser(M, beta):
    """I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    M, ones, n = _points(M, "kaiser")
    if n is None:
        return ones
    alpha = (M - 1) / 2.0
    r = (n - alpha) / alpha
    return i0(beta * ufuncs.sqrt(1 - r * r)) / i0(beta)
