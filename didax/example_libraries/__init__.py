"""Mirrors `jax.example_libraries`: `stax` (neural-network layers) and `optimizers`."""
from didax.example_libraries import optimizers, stax  # noqa: F401
