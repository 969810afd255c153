"""Mutable array references, as `jax.ref`: `new_ref(x)` makes one, `r[idx]` reads it, `r[idx]
= v` writes it, `freeze(r)` gives its final value; jitted functions update the references
passed to them in place, and grad and vmap differentiate and batch code using them."""
from didax._src.state.primitives import freeze, new_ref
from didax._src.state.primitives import ref_addupdate as addupdate
from didax._src.state.primitives import ref_get as get
from didax._src.state.primitives import ref_set as set  # noqa: A004
from didax._src.state.primitives import ref_swap as swap
from didax._src.state.types import AbstractRef, Ref

__all__ = ["AbstractRef", "Ref", "addupdate", "freeze", "get", "new_ref", "set", "swap"]
