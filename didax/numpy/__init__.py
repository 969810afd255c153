"""Mirrors `jax.numpy`: NumPy's API, written only in terms of didax.lax."""
from didax._src.numpy.namespace import *  # noqa: F401,F403

del fft, linalg  # noqa: F821  (_src's modules: the public ones replace them)
from didax.numpy import fft, linalg  # noqa: F401,E402
