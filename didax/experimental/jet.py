"""Mirrors `jax.experimental.jet`: Taylor-mode higher-order differentiation (`jet`)."""
from didax._src.transforms.jet import jet  # noqa: F401
