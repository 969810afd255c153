"""Mirrors `jax.experimental`: `io_callback`, and the `checkify`, `hijax`, `layout`,
`mesh_utils`, `ode` and `sparse` modules."""
from didax._src.primitives.callback import io_callback  # noqa: F401
from didax.experimental import checkify, hijax, layout, mesh_utils, ode, sparse  # noqa: F401
