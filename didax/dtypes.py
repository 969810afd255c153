"""Mirrors `jax.dtypes`: didax's own dtype functions (JAX's promotion lattice, x64
canonicalization), `float0`, `bfloat16` (ml_dtypes' scalar type, as JAX exports it), and the
abstract `extended`/`prng_key` types of typed keys."""
from ml_dtypes import bfloat16  # noqa: F401

from didax._src.dtypes import (  # noqa: F401
    TypePromotionError,
    canonicalize_dtype,
    extended,
    finfo,
    float0,
    iinfo,
    issubdtype,
    itemsize_bits,
    prng_key,
    result_type,
    scalar_type_of,
)
