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
    dot,
    fft,
    incomplete,
    indexing,
    parallel,
    reduction,
    shape,
    sharding_constraint,
    windowed,
)
from didax._src.lax.control_flow import cond, scan, while_loop  # noqa: F401

# (the name each is exported under, without `_p`) -> didax's primitive name
JAX_PARAMETERS = {name: name for name in (
    "all_gather", "argmax", "argmin", "axis_index", "bessel_i0e", "bessel_i1e",
    "bitcast_convert_type", "concatenate", "cond", "conv_general_dilated", "cumlogsumexp",
    "cummax", "cummin", "cumprod", "cumsum", "dot_general", "dynamic_slice",
    "dynamic_update_slice", "fft", "gather", "igamma", "igamma_grad_a", "igammac", "iota", "pad",
    "pmax", "pmin", "ppermute", "psum", "reduce_and", "reduce_max", "reduce_min", "reduce_or",
    "reduce_prod", "reduce_sum", "reduce_xor", "reduce_window_max", "reduce_window_min",
    "reduce_window_sum", "regularized_incomplete_beta", "reshape", "rev", "scan", "scatter",
    "select_and_gather_add", "select_and_scatter_add", "sharding_constraint", "slice", "sort",
    "split", "squeeze",
    "top_k", "transpose", "while",
)}
JAX_PARAMETERS.update((f"scatter_{op}", f"scatter-{op}") for op in ("add", "mul", "min", "max",
                                                                  "sub"))

globals().update({f"{name}_p": all_primitives[prim] for name, prim in JAX_PARAMETERS.items()})
__all__ = sorted(f"{name}_p" for name in JAX_PARAMETERS)

# JAX's `lax.*_p` that didax.lax does not export, and why
LEFT_OUT = {
    "all_to_all_p": "its equations also carry the axis size, which JAX reads from its context",
    "linear_solve_p": "didax's custom_linear_solve keeps flat Python functions as its param, "
                      "not JAX's jaxprs and constant counts",
    "reduce_p": "lax.reduce with a computation of its own stages a scan (or the monoid's "
                "reduce_* primitive), not one equation holding the computation's jaxpr",
    "reduce_window_p": "lax.reduce_window with a computation of its own stages the windows' "
                       "slices and the computation, not one equation holding its jaxpr",
    "select_and_scatter_p": "nothing in lax stages it (JAX's public functions stage "
                            "select_and_scatter_add, which is exported)",
    "zeta_p": "lax.zeta is composed from primitives (so it differentiates in both arguments, "
              "which JAX's cannot): no zeta equation is ever staged",
    "create_token_p": "didax has no token type: its ordered effects run in program order",
    "after_all_p": "didax has no token type: its ordered effects run in program order",
    "device_put_p": "didax has one device, and device_put stages no equation; the params "
                    "are JAX's device and sharding objects",
    "stage_p": "JAX stages no equation for it either: lax.stage forwards a traced value",
    "ragged_all_to_all_p": "lax.ragged_all_to_all is composed from collectives and indexing",
}
