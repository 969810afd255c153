"""Mirrors `jax.interpreters.xla`'s table of how values of each Python type are brought to
their canonical dtype (`canonicalize_dtype_handlers`): libraries register their array
subclasses, copying the entry of `np.ndarray`; `didax.numpy.asarray` consults it for types it
does not know."""
from didax._src.compat.dtype_handlers import canonicalize_dtype_handlers  # noqa: F401
