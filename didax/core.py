"""Mirrors `jax.core`: the names JAX programs use, mapped onto didax's own core (see
`didax._src.compat.jax_core` for how they correspond)."""
from didax._src.compat.jax_core import *  # noqa: F401,F403
from didax._src.compat.jax_core import __all__  # noqa: F401
