"""Exporting jitted functions (as `jax.export`): `export(jit(f))(*args)` gives an
`Exported`, whose `serialize()` bytes another process can `deserialize` and call without
the function's source. didax's format is its own encoding of the staged program (JAX's is
StableHLO); shapes may hold symbolic dimensions (`symbolic_shape("b, 3")`)."""
from didax._src.export.exported import (
    DisabledSafetyCheck,
    Exported,
    default_export_platform,
    deserialize,
    export,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)
from didax._src.export.symbolic import (
    SymbolicScope,
    is_symbolic_dim,
    symbolic_args_specs,
    symbolic_shape,
)

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "SymbolicScope",
    "default_export_platform",
    "deserialize",
    "export",
    "is_symbolic_dim",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
    "symbolic_args_specs",
    "symbolic_shape",
]
