"""Mirrors `jax.interpreters.batching`: `vmap` rules by primitive, called as JAX calls them:
`rule(values, batch_dims, **params)`; those of `axis_primitive_batchers` get the axis size, its
name and a trace type (None) first, those of `fancy_primitive_batchers` an `AxisData`. And
`not_mapped`, the batch dimension of an unbatched value."""
from didax._src.compat.foreign_rules import (  # noqa: F401
    AxisData,
    axis_primitive_batchers,
    fancy_primitive_batchers,
    primitive_batchers,
)
from didax._src.interpreters.batching import (  # noqa: F401
    BatchTracer,
    bdim_at_front,
    defbroadcasting,
    defvectorized,
    moveaxis,
)

not_mapped = None
