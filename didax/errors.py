"""Mirrors `jax.errors`: the exception types didax raises (and, for `except` clauses in JAX
programs, those it has no occasion to raise: see each class)."""
from didax._src.errors import (  # noqa: F401
    ConcretizationTypeError,
    InconclusiveDimensionOperation,
    JAXIndexError,
    JaxRuntimeError,
    JAXTypeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from didax._src.ir import JaxprTypeError  # noqa: F401  (raised by the jaxpr type checker)
