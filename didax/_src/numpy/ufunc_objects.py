"""`jnp.ufunc` and `jnp.frompyfunc`: a scalar function made elementwise over broadcast arrays
(through vmap), with NumPy's ufunc methods built from it: `reduce` and `accumulate` fold
along an axis with a scan, `outer` broadcasts, `at` applies it at indices one update at a
time (repeated indices accumulate, as in NumPy), and `reduceat` reduces concrete slices."""
from __future__ import annotations

import numpy as np

from didax._src.lax.control_flow.scan import scan
from didax._src.numpy import creation, joining, searching, shape_ops
from didax._src.numpy.util import (
    asarray,
    broadcast_arrays,
    broadcast_to,
    check_arraylike,
    concrete_or_error,
)
from didax._src.transforms import api

__all__ = ["ufunc", "frompyfunc"]


class ufunc:
    """A universal function: `func` takes `nin` scalars and returns `nout` outputs."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None,
                 call=None, reduce=None, accumulate=None, at=None, reduceat=None):
        if not callable(func):
            raise TypeError(f"ufunc: func must be callable, got {func!r}")
        self._func = func
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = int(nargs) if nargs is not None else self.nin
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._call, self._reduce, self._accumulate = call, reduce, accumulate
        self._at, self._reduceat = at, reduceat

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __hash__(self):
        return hash((self._func, self.nin, self.nout, self.__name__))

    def __eq__(self, other):
        return isinstance(other, ufunc) and (self._func, self.nin, self.nout, self.__name__) \
            == (other._func, other.nin, other.nout, other.__name__)

    # -- elementwise -----------------------------------------------------------------------

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"{self}: the out argument is not supported (arrays are "
                                      "immutable; use the result)")
        if where is not None:
            raise NotImplementedError(f"{self}: the where argument is not supported")
        if len(args) != self.nin:
            raise TypeError(f"{self}: expected {self.nin} positional arguments, got "
                            f"{len(args)}")
        if self._call is not None:
            return self._call(*args)
        check_arraylike(self.__name__, *args)
        arrays = broadcast_arrays(*[asarray(a) for a in args])
        shape = arrays[0].shape
        flat = [a.reshape(-1) for a in arrays]
        result = api.vmap(self._func)(*flat)
        if self.nout == 1:
            return asarray(result).reshape(shape)
        return tuple(asarray(r).reshape(shape) for r in result)

    def _binary(self, method):
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} is only supported for binary ufuncs with one output; "
                             f"{self} has nin={self.nin}, nout={self.nout}")

    # -- folds -----------------------------------------------------------------------------

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        """Fold along `axis` (an int, a tuple, or None for all axes), starting from
        `initial` (or the identity, or the first element)."""
        self._binary("reduce")
        if out is not None:
            raise NotImplementedError(f"{self}.reduce: the out argument is not supported")
        if self._reduce is not None and where is None and initial is None:
            return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims)
        check_arraylike(f"{self.__name__}.reduce", a)
        a = asarray(a) if dtype is None else asarray(a).astype(dtype)
        axes = tuple(range(a.ndim)) if axis is None else \
            tuple(sorted(ax % a.ndim for ax in (axis if isinstance(axis, tuple) else (axis,))))
        if where is not None:
            fill = self.identity if initial is None else initial
            if fill is None:
                raise ValueError(f"{self}.reduce: where needs an identity or an initial value")
            a = searching.where(where, a, asarray(fill).astype(a.dtype))
        # One fold over the requested axes' elements in row-major order (as over a.ravel()).
        moved = shape_ops.moveaxis(a, axes, tuple(range(len(axes))))
        merged = moved.reshape((-1,) + moved.shape[len(axes):]) if axes else moved[None]
        result = self._fold(merged, 0, initial)
        if keepdims:
            result = shape_ops.expand_dims(result, axes)
        return result

    def _fold(self, a, axis, initial):
        moved = shape_ops.moveaxis(a, axis, 0)
        if initial is None and self.identity is None or initial is None and moved.shape[0]:
            if moved.shape[0] == 0:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            start, rest = moved[0], moved[1:]
        else:
            value = self.identity if initial is None else initial
            start = creation.full(moved.shape[1:], value, dtype=moved.dtype)
            rest = moved
        carry, _ = scan(lambda c, x: (self._func(c, x), None), start, rest)
        return asarray(carry)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running fold along `axis`: result[i] = f(result[i-1], a[i])."""
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"{self}.accumulate: the out argument is not supported")
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype)
        check_arraylike(f"{self.__name__}.accumulate", a)
        a = asarray(a) if dtype is None else asarray(a).astype(dtype)
        if axis is None:
            a, axis = a.reshape(-1), 0
        moved = shape_ops.moveaxis(a, axis, 0)
        if moved.shape[0] == 0:
            return a

        def step(c, x):
            y = asarray(self._func(c, x)).astype(moved.dtype)
            return y, y
        _, rest = scan(step, moved[0], moved[1:])
        return shape_ops.moveaxis(joining.concatenate([moved[:1], rest]), 0, axis)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions of the slices a[indices[i]:indices[i+1]] along `axis` (just
        a[indices[i]] where the next index is not larger); `indices` must be concrete."""
        self._binary("reduceat")
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis=axis, dtype=dtype)
        a = asarray(a) if dtype is None else asarray(a).astype(dtype)
        idx = np.asarray(concrete_or_error(asarray(indices), f"{self.__name__}.reduceat "
                                           "indices (they fix the output shape)")).reshape(-1)
        moved = shape_ops.moveaxis(a, axis, 0)
        n = moved.shape[0]
        pieces = []
        for i, start in enumerate(idx):
            stop = idx[i + 1] if i + 1 < len(idx) else n
            pieces.append(self.reduce(moved[start:stop], axis=0) if start < stop
                          else moved[start])
        return shape_ops.moveaxis(joining.stack(pieces), 0, axis)

    # -- products and updates --------------------------------------------------------------

    def outer(self, A, B, /):
        """f(A[i, j, ...], B[k, l, ...]) for every pair: the result has A's axes then B's."""
        self._binary("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        A, B = asarray(A), asarray(B)
        return self(A.reshape(A.shape + (1,) * B.ndim), B)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """`a` with f applied at `indices` (against `b` for binary ufuncs); NumPy's in-place
        form is refused (arrays are immutable): pass inplace=False."""
        if inplace:
            raise NotImplementedError(f"{self}.at: in-place updates are not possible (arrays "
                                      "are immutable); pass inplace=False for the result")
        if self._at is not None:
            return self._at(a, indices, b)
        if self.nout != 1 or self.nin not in (1, 2) or (self.nin == 2) == (b is None):
            raise ValueError(f"{self}.at needs a ufunc with one output and b exactly when it "
                             f"is binary; got nin={self.nin}, nout={self.nout}")
        a = asarray(a)
        index = indices if isinstance(indices, tuple) else (indices,)
        index = broadcast_arrays(*[asarray(i) for i in index])
        flat_index = [i.reshape(-1) for i in index]
        count = flat_index[0].shape[0] if flat_index else 1
        target = a[tuple(flat_index)] if flat_index else a
        values = (creation.zeros(target.shape, a.dtype) if b is None
                  else broadcast_to(asarray(b), target.shape))

        def step(arr, x):  # one update at a time: repeated indices see the earlier ones
            idx, v = x
            at = tuple(idx)
            new = self._func(arr[at]) if b is None else self._func(arr[at], v)
            return arr.at[at].set(asarray(new).astype(arr.dtype)), None
        result, _ = scan(step, a, (flat_index, values.reshape((count,) + values.shape[1:])))
        return result


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A `ufunc` from a scalar function of `nin` arguments returning `nout` values."""
    return ufunc(func, nin, nout, identity=identity)
