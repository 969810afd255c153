"""The `lax.*_p` primitive objects whose equations carry JAX's parameters (the same names,
values meaning the same), so code that binds them or reads their equations (jaxpr walkers,
interpreters keyed by primitive) works unchanged. JAX's scatter variants are named with a
hyphen (`scatter-add`), as here. `LEFT_OUT` says why JAX's others are not exported.
"""
from __future__ import annotations

from didax._src.core import all_primitives

# (imported for the primitives they register)
from didax._src.lax import (  # noqa: F401
    bessel,
    bitcast,
    conv,
    device_put,
    dot,
    fft,
    incomplete,
    indexing,
    parallel,
    parallel_extras,
    reduce_general,
    reduction,
    select_and_scatter,
    shape,
    sharding_constraint,
    staging_ops,
    tokens,
    windowed,
    zeta,
)
from didax._src.lax.control_flow import cond, scan, while_loop  # noqa: F401
from didax._src.primitives import linear_solve  # noqa: F401

# (the name each is exported under, without `_p`) -> didax's primitive name
JAX_PARAMETERS = {name: name for name in (
    "after_all", "all_gather", "all_to_all", "argmax", "argmin", "axis_index", "bessel_i0e",
    "bessel_i1e", "ragged_all_to_all",
    "bitcast_convert_type", "concatenate", "cond", "conv_general_dilated", "create_token",
    "cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "device_put", "dot_general",
    "dynamic_slice",
    "dynamic_update_slice", "fft", "gather", "igamma", "igamma_grad_a", "igammac", "iota", "pad",
    "pmax", "pmin", "ppermute", "psum", "reduce", "reduce_and", "reduce_max", "reduce_min",
    "reduce_or", "reduce_prod", "reduce_sum", "reduce_xor", "reduce_window",
    "reduce_window_max", "reduce_window_min",
    "reduce_window_sum", "regularized_incomplete_beta", "reshape", "rev", "scan", "scatter",
    "select_and_gather_add", "select_and_scatter_add", "sharding_constraint", "slice", "sort",
    "split", "squeeze", "stage", "top_k", "transpose", "while", "zeta",
)}
JAX_PARAMETERS.update((f"scatter_{op}", f"scatter-{op}") for op in ("add", "mul", "min", "max",
                                                                  "sub"))
JAX_PARAMETERS["linear_solve"] = "custom_linear_solve"  # (JAX's name for it)
# (select_and_scatter: staged by no lax function, as in JAX; its choice among tied elements of
# padded windows is the row-major one, where XLA:CPU's may differ: see its module)
JAX_PARAMETERS["select_and_scatter"] = "select_and_scatter"

globals().update({f"{name}_p": all_primitives[prim] for name, prim in JAX_PARAMETERS.items()})
__all__ = sorted(f"{name}_p" for name in JAX_PARAMETERS)

# JAX's `lax.*_p` that didax.lax does not export, and why (none today)
LEFT_OUT: dict[str, str] = {}
