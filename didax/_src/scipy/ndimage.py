"""didax.scipy.ndimage.map_coordinates: the input sampled at fractional coordinates, by
nearest neighbour (order 0) or multilinear interpolation (order 1), with SciPy's modes as
SciPy documents them ('constant' is SciPy's 'grid-constant', 'wrap' its 'grid-wrap', as in
JAX).

Each output value is a weighted sum over the 2^N (order 1) or one (order 0) grid points
around its coordinate; a point outside the grid is mapped back in by the mode, or (mode
'constant') replaced by cval.
"""
from __future__ import annotations

import itertools
import operator

from didax._src.lax import elementwise as lax
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import check_arraylike

__all__ = ["map_coordinates"]


def _inside(i, n):
    return (i >= 0) & (i < n)


def _fold(i, n, mode):
    """Integer grid index i mapped into [0, n) by the mode."""
    if mode == "nearest" or mode == "constant":  # constant: out-of-grid points are masked
        return jnp.clip(i, 0, n - 1)
    if mode == "wrap":
        return jnp.mod(i, n)
    if mode == "mirror":  # ... 2 1 | 0 1 2 ... n-1 | n-2 ...: period 2n - 2
        if n == 1:
            return jnp.zeros_like(i)
        j = jnp.mod(i, 2 * n - 2)
        return jnp.where(j >= n, 2 * n - 2 - j, j)
    # reflect: ... 1 0 | 0 1 ... n-1 | n-1 n-2 ...: period 2n
    j = jnp.mod(i, 2 * n)
    return jnp.where(j >= n, 2 * n - 1 - j, j)


_MODES = ("constant", "nearest", "mirror", "wrap", "reflect")


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):  # noqa: A002
    """input interpolated at `coordinates` (one array per input dimension, all of one
    shape, the output's)."""
    check_arraylike("map_coordinates", input)
    x = jnp.asarray(input)
    coordinates = [jnp.asarray(c) for c in coordinates]
    if len(coordinates) != x.ndim:
        raise ValueError(f"map_coordinates: coordinates must be a sequence of length "
                         f"input.ndim, but {len(coordinates)} != {x.ndim}")
    order = operator.index(order)
    if order not in (0, 1):
        raise NotImplementedError(f"map_coordinates: order={order} is not supported; orders "
                                  f"0 (nearest) and 1 (linear) are")
    if mode not in _MODES:
        raise NotImplementedError(f"map_coordinates: mode {mode!r} is not supported; use one "
                                  f"of {list(_MODES)}")
    coordinates = jnp.broadcast_arrays(*coordinates)
    shape = coordinates[0].shape if coordinates else ()
    if any(n == 0 for n in x.shape):
        raise ValueError(f"map_coordinates: input must not be empty, got shape {x.shape}")
    per_axis = []  # for each axis, a list of (index, weight or None)
    for c, _n in zip(coordinates, x.shape):
        if not jnp.issubdtype(c.dtype, jnp.inexact):
            per_axis.append([(c.astype(jnp.int32), None)])
        elif order == 0:
            per_axis.append([(lax.round(c).astype(jnp.int32), None)])
        else:
            lower = jnp.floor(c)
            frac = c - lower
            lower = lower.astype(jnp.int32)
            per_axis.append([(lower, 1 - frac), (lower + 1, frac)])
    values = x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(
        jnp.result_type(*(c.dtype for c in coordinates), float))
    total = None
    for corner in itertools.product(*per_axis):
        index = tuple(_fold(i, n, mode) for (i, _), n in zip(corner, x.shape))
        term = values[index] if index else values
        if mode == "constant":
            inside = jnp.ones(shape, bool)
            for (i, _), n in zip(corner, x.shape):
                inside = inside & _inside(i, n)
            term = jnp.where(inside, term, jnp.asarray(cval, values.dtype))
        for _, w in corner:
            if w is not None:
                term = term * w.astype(values.dtype) if jnp.iscomplexobj(values) else (
                    term * w).astype(values.dtype)
        total = term if total is None else total + term
    if jnp.issubdtype(x.dtype, jnp.integer):
        return lax.round(total).astype(x.dtype)
    if x.dtype == jnp.bool_:
        return total.astype(bool)
    return total.astype(x.dtype)
