"""Mirrors `jax.scipy.fft` (the type-2 discrete cosine transforms)."""
from didax._src.scipy.fft import dct, dctn, idct, idctn  # noqa: F401
