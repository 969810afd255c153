"""Mirrors `jax.custom_derivatives`: functions with user-defined derivative rules."""
from didax._src.custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from didax._src.custom_extras import (  # noqa: F401
    SymbolicZero, closure_convert, custom_gradient, linear_call, zero_from_primal,
)
