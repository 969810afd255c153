"""`empty_ref` and `free_ref`: a reference made without an initial value, and the explicit
end of one."""
from __future__ import annotations

import operator

import numpy as np

from didax._src import core
from didax._src.state.primitives import new_ref
from didax._src.typecheck import as_dtype


def empty_ref(ty, memory_space=None):
    """A mutable reference of type `ty` (anything with `shape` and `dtype`: a
    ShapeDtypeStruct, an aval) whose contents are to be written before they are read. JAX
    leaves them undefined (and has no eager rule); didax fills them with zeros."""
    shape, dtype = getattr(ty, "shape", None), getattr(ty, "dtype", None)
    if shape is None or dtype is None:
        raise TypeError(f"empty_ref: expected a type with shape and dtype (e.g. "
                        f"ShapeDtypeStruct), got {ty!r}")
    return new_ref(np.zeros(tuple(shape), as_dtype(dtype)), memory_space=memory_space)


def free_ref(ref):
    """Not implemented: didax releases a reference's buffer when nothing refers to it, and
    does not track references freed explicitly."""
    raise NotImplementedError("free_ref is not implemented in didax: drop the last "
                              "reference to the Ref (del it) and its buffer is freed")


def ds(start, size=None, stride=None):
    """The slice of `size` elements from `start`, `stride` apart (`ds(None)` is `:`,
    `ds(j)` is `:j`, `ds(i, j)` is `i:i+j`, `ds(i, j, s)` is `i:i+j*s:s`). JAX returns a
    `Slice` whose start may be traced; didax returns a Python slice, so `start` and `size`
    must be concrete (use `lax.dynamic_slice` for a traced start)."""
    if size is None:
        if isinstance(start, core.Tracer):
            raise NotImplementedError("ds: a traced bound is not implemented; use "
                                      "lax.dynamic_slice")
        return slice(start)
    for what, v in (("start", start), ("size", size)):
        if isinstance(v, core.Tracer):
            raise NotImplementedError(f"ds with a traced {what} is not implemented in didax: "
                                      "use lax.dynamic_slice(x, start_indices, sizes)")
    start, size = operator.index(start), operator.index(size)
    stride = 1 if stride is None else operator.index(stride)
    return slice(start, start + size * stride, stride)
