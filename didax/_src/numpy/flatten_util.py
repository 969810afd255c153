"""`ravel_pytree`: a pytree of arrays as one flat vector, and the function that undoes it.

What optimizers written for vectors (scipy-style minimizers, Newton's method, Hessians of a
whole model) need. Leaves are promoted to one dtype, as JAX does; unravel converts each piece
back to its leaf's dtype, and both directions are built from lax operations, so they
differentiate, batch and jit.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes, tree_util
from didax._src.lax import lax


class _Unravel:
    """Rebuilds the pytree from a flat vector. Equal (and of equal hash) for equal structures,
    shapes and dtypes, as JAX's is, so it can be a static argument of jit."""

    def __init__(self, treedef, sizes, shapes, from_dtypes, to_dtype):
        self._key = (treedef, sizes, shapes, from_dtypes, to_dtype)

    def __eq__(self, other):
        return type(other) is _Unravel and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __call__(self, flat):
        treedef, sizes, shapes, from_dtypes, to_dtype = self._key
        if from_dtypes is not None and dtypes.dtype(flat) != to_dtype:
            raise TypeError(f"unravel function given array of dtype {dtypes.dtype(flat)}, but "
                            f"expected dtype {to_dtype}")
        chunks = lax.split(flat, sizes) if sizes else []
        leaves = [c.reshape(s) for c, s in zip(chunks, shapes)]
        if from_dtypes is not None:  # (complex to real keeps the real part, silently)
            leaves = [lax.convert_element_type(x, d) for x, d in zip(leaves, from_dtypes)]
        return tree_util.tree_unflatten(treedef, leaves)


def ravel_pytree(pytree):
    """(1-D array of all leaves, in tree order, promoted to one dtype; unravel function).

    With one dtype throughout, unravel accepts a vector of any dtype and keeps it; with
    several, it requires the promoted dtype and converts each leaf back. No leaves: an empty
    float32 vector."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    if not leaves:
        return lax.full([0], 0, "float32"), _Unravel(treedef, (), (), None, None)
    from_dtypes = tuple(dtypes.dtype(x, canonicalize=True) for x in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    sizes = tuple(int(np.size(x)) for x in leaves)
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    if all(d == to_dtype for d in from_dtypes):
        flat = lax.concatenate([lax.reshape(x, (n,)) for x, n in zip(leaves, sizes)], 0)
        return flat, _Unravel(treedef, sizes, shapes, None, None)
    flat = lax.concatenate([lax.reshape(lax.convert_element_type(x, to_dtype), (n,))
                            for x, n in zip(leaves, sizes)], 0)
    return flat, _Unravel(treedef, sizes, shapes, from_dtypes, to_dtype)
