"""Mirrors `jax.scipy` (the `special` and `linalg` modules)."""
from didax.scipy import special  # noqa: F401
from didax.scipy import linalg  # noqa: F401
