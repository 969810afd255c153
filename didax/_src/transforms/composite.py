"""`lax.composite`: a named operation defined by its decomposition.

XLA may swap a composite it recognises by name for a dedicated kernel; didax has none, so a
composite runs its decomposition. It runs it as a jitted call named after the composite, so the
name shows in jaxprs (`jit[name=my.tangent ...]`, where JAX prints a `composite` equation with
its `name`, `version` and `attributes`). Unlike JAX's, didax's composites can be
differentiated and batched, as any jitted call can (JAX raises for both).
"""
from __future__ import annotations

import functools

from didax._src.transforms.jit import jit


def composite(decomposition, name: str, version: int = 0):
    """Wraps `decomposition` as the composite `name`: positional arguments are its operands,
    keyword arguments its attributes (passed on to the decomposition)."""
    if not isinstance(name, str):
        raise TypeError(f"lax.composite: name must be a string, got {name!r}")
    if not isinstance(version, int):
        raise TypeError(f"lax.composite: version must be an int, got {version!r}")

    @functools.wraps(decomposition)
    def call(*operands, **attributes):
        def body(*args):
            return decomposition(*args, **attributes)

        body.__name__ = body.__qualname__ = name
        return jit(body)(*operands)

    return call
