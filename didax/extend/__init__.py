"""Mirrors `jax.extend`: what libraries use to declare primitives of their own."""
from didax.extend import core  # noqa: F401
