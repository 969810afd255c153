"""Mirrors `jax.scipy.signal` (convolutions, correlations, detrend, spectral analysis)."""
from didax._src.scipy.signal import (  # noqa: F401
    convolve, convolve2d, correlate, correlate2d, csd, detrend, fftconvolve, istft, stft, welch,
)
