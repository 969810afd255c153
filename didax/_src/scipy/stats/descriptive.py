"""Descriptive statistics (jax.scipy.stats.mode, rankdata, sem), written along the last axis
after moving the requested one there. Ties are found in the sorted values: a run of equal
values starts where a value differs from its predecessor, and every position learns its
run's first and last index by a running max (forward) and min (backward)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from didax._src import dtypes
from didax._src.lax.reduction import cummax, cummin
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import check_arraylike

__all__ = ["ModeResult", "mode", "rankdata", "sem"]


class ModeResult(NamedTuple):
    mode: object
    count: object


def _nan_policy(name, nan_policy, allowed):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"{name}: nan_policy must be 'propagate', 'omit' or 'raise', got "
                         f"{nan_policy!r}")
    if nan_policy not in allowed:
        raise NotImplementedError(f"{name} with nan_policy={nan_policy!r}")


def _runs(s):
    """First and last index (along the last axis) of the run of equal values that each
    position of the sorted array `s` belongs to."""
    n = s.shape[-1]
    index = jnp.broadcast_to(jnp.arange(n), s.shape)
    differs = s[..., 1:] != s[..., :-1]
    starts = jnp.concatenate([jnp.ones(s.shape[:-1] + (1,), bool), differs], axis=-1)
    ends = jnp.concatenate([differs, jnp.ones(s.shape[:-1] + (1,), bool)], axis=-1)
    first = cummax(jnp.where(starts, index, 0), axis=s.ndim - 1)
    last = cummin(jnp.where(ends, index, n - 1), axis=s.ndim - 1, reverse=True)
    return starts, first, last


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks from 1, ties resolved by `method` (average, min, max, dense, ordinal); a slice
    holding a nan ranks as all nan."""
    check_arraylike("rankdata", a)
    _nan_policy("rankdata", nan_policy, ("propagate",))
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"rankdata: unknown method {method!r}; use 'average', 'min', 'max', "
                         "'dense' or 'ordinal'")
    a = jnp.asarray(a)
    if axis is None:
        return rankdata(a.ravel(), method, axis=0)
    axis = int(axis) % max(a.ndim, 1)
    x = jnp.moveaxis(a, axis, -1)
    if x.shape[-1] == 0:
        return jnp.moveaxis(x.astype(dtypes.default_float_dtype()), -1, axis)
    order = jnp.argsort(x, axis=-1, stable=True)
    inverse = jnp.argsort(order, axis=-1, stable=True)
    s = jnp.take_along_axis(x, order, axis=-1)
    starts, first, last = _runs(s)
    if method == "ordinal":
        ranks = inverse + 1
    elif method == "dense":
        ranks = jnp.take_along_axis(jnp.cumsum(starts, axis=-1), inverse, axis=-1)
    else:
        low, high = first + 1, last + 1
        per_sorted = {"min": low, "max": high, "average": (low + high) / 2}[method]
        ranks = jnp.take_along_axis(per_sorted, inverse, axis=-1)
    ranks = ranks.astype(dtypes.default_float_dtype())
    if jnp.issubdtype(x.dtype, jnp.inexact):
        ranks = jnp.where(jnp.any(jnp.isnan(x), axis=-1, keepdims=True), np.nan, ranks)
    return jnp.moveaxis(ranks, -1, axis)


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most frequent value along `axis` (the smallest of equally frequent ones) and its
    count."""
    check_arraylike("mode", a)
    _nan_policy("mode", nan_policy, ("propagate",))
    a = jnp.asarray(a)
    if axis is None:
        result = mode(a.ravel(), 0, nan_policy, keepdims=False)
        if keepdims:
            shape = (1,) * a.ndim
            return ModeResult(result.mode.reshape(shape), result.count.reshape(shape))
        return result
    if a.size == 0:
        raise ValueError("mode of an empty array")
    axis = int(axis) % max(a.ndim, 1)
    s = jnp.sort(jnp.moveaxis(jnp.atleast_1d(a), axis, -1), axis=-1)
    _, first, last = _runs(s)
    counts = last - first + 1
    best = jnp.argmax(counts, axis=-1, keepdims=True)
    value = jnp.take_along_axis(s, best, axis=-1)
    count = jnp.take_along_axis(counts, best, axis=-1).astype(dtypes.default_int_dtype())
    if keepdims:
        return ModeResult(jnp.moveaxis(value, -1, axis), jnp.moveaxis(count, -1, axis))
    return ModeResult(value[..., 0], count[..., 0])


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(n); 'omit' leaves nans out of both."""
    check_arraylike("sem", a)
    _nan_policy("sem", nan_policy, ("propagate", "omit"))
    a = jnp.asarray(a)
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        a = a.astype(dtypes.default_float_dtype())
    if nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(a), axis=axis, keepdims=keepdims)
        return jnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count)
    n = a.size if axis is None else a.shape[axis]
    return jnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / np.sqrt(n)
