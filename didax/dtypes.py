"""Mirrors `jax.dtypes`: didax's own dtype functions (JAX's promotion lattice, x64
canonicalization), `float0`, and the abstract `extended`/`prng_key` types of typed keys.

`bfloat16` is absent: didax's promotion lattice does not include the ml_dtypes types yet."""
from didax._src.dtypes import (  # noqa: F401
    TypePromotionError, canonicalize_dtype, extended, finfo, float0, iinfo, issubdtype,
    itemsize_bits, prng_key, result_type, scalar_type_of,
)
