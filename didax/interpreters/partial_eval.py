"""Mirrors `jax.interpreters.partial_eval`: tracing with some inputs known and others not."""
from didax._src.compat.partial_eval import (  # noqa: F401
    PartialVal,
    trace_to_jaxpr_dynamic,
    trace_to_jaxpr_nounits,
)
