"""Mirrors `jax.api_util`: flattening wrapped functions, their debugging information, and
length-checked `map` and `zip`."""
from didax._src.compat.api_util import (  # noqa: F401
    DebugInfo,
    debug_info,
    flatten_fun,
    flatten_fun_nokwargs,
    fun_signature,
    safe_map,
    safe_zip,
    shaped_abstractify,
)
