"""tile, repeat and resize: arrays repeated along axes. `repeat` with traced repeats needs a
static `total_repeat_length`, because the repeats set the output size.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src.lax import elementwise as lax
from didax._src.lax import indexing as lax_idx
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy._helpers import (
    _aval,
    _canonical_shape,
    _concrete_int,
    _filled,
    _range,
    _scatter1d,
    _take,
    _zeros_like,
)
from didax._src.numpy.creation import full
from didax._src.numpy.shape_ops import ravel
from didax._src.numpy.util import (
    asarray,
    broadcast_to,
    canonical_axis,
    check_arraylike,
    concrete_or_error,
)

__all__ = ["tile", "repeat", "resize"]


def tile(A, reps):
    """`A` repeated `reps` times along each axis (a broadcast and a reshape)."""
    check_arraylike("tile", A)
    A = asarray(A)
    try:
        reps = tuple(reps)
    except TypeError:
        reps = (reps,)
    reps = tuple(_concrete_int(r, "reps argument of jnp.tile") for r in reps)
    nd = max(len(reps), _aval(A).ndim)
    reps = (1,) * (nd - len(reps)) + reps
    A = lax_shape.broadcast_to_rank(A, nd)
    s = _aval(A).shape
    inter = [d for pair in zip(reps, s) for d in pair]
    out = lax_shape.broadcast_in_dim(A, inter, tuple(_range(1, 2 * nd, 2)))
    return lax_shape.reshape(out, [r * d for r, d in zip(reps, s)])


def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Each element repeated; traced `repeats` need a static `total_repeat_length`."""
    if isinstance(repeats, (int, np.integer)):
        check_arraylike("repeat", a)
    else:
        check_arraylike("repeat", a, repeats)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _concrete_int(axis, "'axis' argument of jnp.repeat()")
    nd = _aval(a).ndim
    if nd:
        axis = canonical_axis(axis, nd, "repeat")
    if total_repeat_length is None:
        reps = np.asarray(concrete_or_error(
            repeats, "the `repeats` argument of jnp.repeat (pass a static "
                     "`total_repeat_length` to use traced repeats)"))
        if np.any(reps < 0):
            raise ValueError("repeat: repeats may not contain negative values")
        if reps.ndim == 0 and nd:
            s = _aval(a).shape
            aux = s[:axis + 1] + (int(reps),) + s[axis + 1:]
            out = lax_shape.broadcast_in_dim(a, aux, [i for i in _range(nd + 1) if i != axis + 1])
            return lax_shape.reshape(out, s[:axis] + (s[axis] * int(reps),) + s[axis + 1:])
        reps = np.ravel(reps)
        if nd == 0:
            if reps.shape != (1,):
                raise ValueError("`repeat` with a scalar parameter `a` is only implemented for "
                                 "scalar values of the parameter `repeats`.")
            return full((int(reps[0]),), a)
        reps = np.broadcast_to(reps, (_aval(a).shape[axis],))
        return _take(a, np.repeat(np.arange(reps.size), reps).astype(np.int32), axis)
    total = _concrete_int(total_repeat_length, "total_repeat_length argument of jnp.repeat")
    reps = ravel(asarray(repeats))
    if nd == 0:
        if _aval(reps).shape != (1,):
            raise ValueError("`repeat` with a scalar parameter `a` is only implemented for "
                             "scalar values of the parameter `repeats`.")
        return full((total,), a)
    n = _aval(a).shape[axis]
    if total == 0 or n == 0:
        s = list(_aval(a).shape)
        s[axis] = 0 if total == 0 else s[axis]
        return _zeros_like(a, s) if total == 0 else a
    reps = broadcast_to(reps, (n,))
    # Each block start gets a 1; a running sum of those marks says which element a slot shows.
    starts = lax_red.cumsum(reps, 0)
    starts = lax_shape.concatenate([_filled((1,), 0, _aval(starts).dtype),
                                    lax_shape.slice_in_dim(starts, 0, n - 1)], 0)
    marks = _scatter1d(lax_idx.scatter_add, _filled((total,), 0, np.int32), starts,
                       _filled((n,), 1, np.int32))
    return _take(a, lax.sub(lax_red.cumsum(marks, 0), np.int32(1)), axis)


def resize(a, new_shape):
    """`a`'s elements repeated cyclically to fill `new_shape`."""
    check_arraylike("resize", a)
    new_shape = _canonical_shape(new_shape, "resize")
    arr = ravel(a)
    new_size = math.prod(new_shape)
    if _aval(arr).size == 0 or new_size == 0:
        return _zeros_like(arr, new_shape)
    repeats = -(-new_size // _aval(arr).size)
    arr = lax_shape.slice_in_dim(tile(arr, repeats), 0, new_size)
    return lax_shape.reshape(arr, new_shape)
