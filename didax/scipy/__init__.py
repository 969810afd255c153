"""Mirrors `jax.scipy` (the `special` module)."""
from didax.scipy import special  # noqa: F401
