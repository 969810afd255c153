"""Mirrors `jax.extend.core.primitives`: every primitive of didax as `{name}_p` (libraries
key tables of their own by them: numpyro's dependency tracking, distrax's jaxpr walks), and
the call primitives `call_p` and `closed_call_p`."""
from didax._src.compat.call_primitive import call_p  # noqa: F401
from didax._src.core import all_primitives as _all
from didax._src.primitives.jit_call import closed_call_p, jit_p  # noqa: F401

globals().update({f"{name}_p": p for name, p in _all.items() if name.isidentifier()})
__all__ = sorted(f"{name}_p" for name in _all if name.isidentifier())
