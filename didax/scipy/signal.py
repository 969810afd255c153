"""Mirrors `jax.scipy.signal` (convolutions, correlations, detrend)."""
from didax._src.scipy.signal import (  # noqa: F401
    convolve, convolve2d, correlate, correlate2d, detrend, fftconvolve,
)
