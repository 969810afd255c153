"""Mirrors `jax.experimental.checkify`: user checks (`check`) reported by `checkify`."""
from didax._src.primitives.checkify import (  # noqa: F401
    DivisionByZeroError,
    Error,
    ErrorCategory,
    FailedCheckError,
    JaxRuntimeError,
    NaNError,
    OOBError,
    UserCheckError,
    all_checks,
    automatic_checks,
    check,
    check_error,
    checkify,
    debug_check,
    div_checks,
    float_checks,
    index_checks,
    nan_checks,
    user_checks,
)

init_error = Error(None)  # "no error": what a checkified function starts from
