"""The type of a mutable array reference (`AbstractRef`) and its eager value (`Ref`).

A reference is a box holding an array that reads and writes update in place: `r[...]` reads
it, `r[idx] = v` writes part of it, `r[idx] += v` does both. Its type wraps the type of the
array it holds and prints as JAX prints it, `Ref{f32[3]}`. Outside transformations a `Ref`
owns a NumPy buffer that the primitives' impls read and write (every read copies, every write
copies into it, so no Array ever shares its memory); under a transformation a reference is a
tracer whose type is an `AbstractRef`, and the same indexing binds the same primitives.

The indexing methods are installed by primitives.py (which binds the primitives).
"""
from __future__ import annotations

import numpy as np

from didax._src import caches
from didax._src.core import ShapedArray, value_repr

_interned = caches.memo("state.ref_avals", interns=True)  # inner aval -> its AbstractRef


class AbstractRef:
    """The type of a mutable array reference holding arrays of type `inner_aval`.

    Interned, as ShapedArray is: one object per inner type, compared by identity."""

    __slots__ = ("inner_aval",)
    sharding = None  # (as ShapedArray's: one array in host memory)
    memory_space = None
    kind = None

    def __new__(cls, inner_aval: ShapedArray, memory_space=None, kind=None):
        if type(inner_aval) is not ShapedArray:
            raise TypeError(f"AbstractRef: a reference holds an array, not {inner_aval!r}")
        a = _interned.get(inner_aval)
        if a is None:
            a = object.__new__(cls)
            a.inner_aval = inner_aval
            a = caches.add(_interned, inner_aval, a)
        return a

    def __reduce__(self):
        return (AbstractRef, (self.inner_aval,))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    weak_type = property(lambda self: self.inner_aval.weak_type)
    ndim = property(lambda self: len(self.inner_aval.shape))
    size = property(lambda self: self.inner_aval.size)

    def update(self, shape=None, dtype=None, weak_type=None) -> AbstractRef:
        return AbstractRef(self.inner_aval.update(shape, dtype, weak_type))

    def strip_weak_type(self) -> AbstractRef:
        return AbstractRef(self.inner_aval.strip_weak_type())

    def to_tangent_aval(self) -> AbstractRef:
        return AbstractRef(self.inner_aval.to_tangent_aval())

    def str_short(self) -> str:
        return f"Ref{{{self.inner_aval.str_short()}}}"

    def __repr__(self):
        inner = self.inner_aval
        return f"Ref{{{inner.dtype.name}[{','.join(map(str, inner.shape))}]}}"

    def value_from_impl(self, buffer) -> Ref:
        """The eager value of this type holding `buffer`, a NumPy array the `new_ref` impl
        made for it alone (core's evaluation calls this to wrap the impl's result)."""
        return Ref._own(buffer, self)

    # `_getitem` and `_setitem` (what a traced reference's `r[idx]` and `r[idx] = v` do) are
    # installed by primitives.py.


def is_ref_aval(aval) -> bool:
    return type(aval) is AbstractRef


class Ref:
    """A mutable array reference outside transformations: a box owning a NumPy buffer.

    `r[...]` reads a copy of its value, `r[idx] = v` writes into it, `r.addupdate(v, idx)`
    adds; passed to a jitted function, it is read before the call and written after it.
    Not an Array (`isinstance(r, jax.Array)` is False, as in JAX), and not a pytree node."""

    __slots__ = ("_buf", "_aval", "__weakref__")

    @staticmethod
    def _own(buffer: np.ndarray, aval: AbstractRef) -> Ref:
        r = object.__new__(Ref)
        r._buf = buffer
        r._aval = aval
        return r

    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)
    weak_type = property(lambda self: self._aval.weak_type)
    sharding = None

    def __len__(self):
        if not self._aval.shape:
            raise TypeError("len() of unsized object (a 0-d reference)")
        return self._aval.shape[0]

    def __iter__(self):
        raise TypeError("a Ref is not iterable: read its value first (ref[...]) and iterate "
                        "over that")

    def __array__(self, dtype=None, copy=None):
        return np.array(self._buf, dtype)  # (a copy: the reference may change later)

    def __repr__(self):
        return value_repr("Ref", self._buf, self._aval.weak_type)

    __str__ = __repr__

    def __reduce__(self):
        return (_rebuild, (np.array(self._buf), self._aval))

    def __deepcopy__(self, memo):
        return Ref._own(np.array(self._buf), self._aval)

    # `__getitem__`, `__setitem__` and `addupdate` are installed by primitives.py.


def _rebuild(buffer, aval):
    return Ref._own(buffer, aval)


def ref_buffer(x) -> np.ndarray:
    """The buffer an impl reads and writes: a Ref's own, or, in code jit generated for a
    reference it did not discharge, the NumPy array standing for the reference."""
    return x._buf if type(x) is Ref else x
