"""Mirrors `jax.custom_derivatives`: functions with user-defined derivative rules."""
from didax._src.primitives.custom_derivatives import (  # noqa: F401
    CustomVJPPrimal,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
)
from didax._src.primitives.custom_extras import (  # noqa: F401
    SymbolicZero,
    closure_convert,
    custom_gradient,
    linear_call,
    zero_from_primal,
)
from didax._src.primitives.custom_vjp_extras import (  # noqa: F401
    custom_vjp_primal_tree_values,
    remat_opt_p,
)
