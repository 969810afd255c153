"""Mirrors `jax.interpreters.mlir` for registering lowerings: didax compiles jaxprs to NumPy
and C, not MLIR, so a lowering is recorded (and a `lower_fun` one gives an impl-less
primitive its impl); jit runs the primitive's impl."""
from didax._src.compat.foreign_rules import lower_fun, lowerings, register_lowering  # noqa: F401
