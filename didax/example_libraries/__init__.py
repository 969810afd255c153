"""Mirrors `jax.example_libraries`: `stax` (layers as init/apply pairs) and `optimizers`
(init/update/get_params triples)."""
from didax.example_libraries import optimizers, stax  # noqa: F401
