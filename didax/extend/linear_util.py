"""Mirrors `jax.extend.linear_util`: functions wrapped with transformations, as libraries hand
them to the tracing entry points of `didax.api_util` and `didax.interpreters.partial_eval`."""
from didax._src.compat.linear_util import (  # noqa: F401
    EqualStore,
    Store,
    WrappedFun,
    merge_linear_aux,
    transformation2,
    transformation_with_aux2,
    wrap_init,
)
