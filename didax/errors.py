"""Mirrors `jax.errors`: the exception types didax raises."""
from didax._src.errors import (  # noqa: F401
    ConcretizationTypeError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
