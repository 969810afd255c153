"""Mirrors `jax.extend`: what libraries use to declare primitives of their own."""
from didax.extend import core, linear_util, source_info_util  # noqa: F401
