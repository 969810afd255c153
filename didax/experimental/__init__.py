"""Mirrors `jax.experimental`: `io_callback`, and the `checkify` and `ode` modules."""
from didax._src.primitives.callback import io_callback  # noqa: F401
from didax.experimental import checkify, ode, sparse  # noqa: F401
