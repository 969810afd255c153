"""Mirrors `jax.experimental.hijax`: declaring high-level types and primitives (see
`didax._src.compat.hijax`: declarations work, using them raises NotImplementedError)."""
from didax._src.compat.hijax import (  # noqa: F401
    AbstractValue,
    AvalMutableQDD,
    AvalQDD,
    HiPrimitive,
    HiType,
    MutableHiType,
    ShapedArray,
    Zero,
    aval_method,
    aval_property,
    control_flow_allowed_effects,
    instantiate_zeros,
    is_undefined_primal,
    register_hitype,
)
