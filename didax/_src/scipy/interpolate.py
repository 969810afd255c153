"""didax.scipy.interpolate.RegularGridInterpolator: values on a rectangular grid read off at
arbitrary points, by multilinear or nearest-neighbour interpolation, as
`jax.scipy.interpolate.RegularGridInterpolator`.

Each grid axis must be strictly increasing (JAX does not check this, since the check cannot
run under jit; other axes give JAX's, i.e. meaningless, results). A pytree, so it passes
through jit and vmap.
"""
from __future__ import annotations

import itertools

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from didax._src.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined; use one of {list(_METHODS)}")


def _query_points(xi, ndim):
    """The query points as one array of shape (..., ndim): a tuple of coordinate arrays is
    broadcast and stacked in the default float dtype; a 1-D array is read as a flat list of
    points."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        check_arraylike("RegularGridInterpolator", *xi)
        coordinates = jnp.broadcast_arrays(*xi)
        if not coordinates:
            raise IndexError("RegularGridInterpolator: the query points are an empty tuple; "
                             "pass one coordinate array per grid dimension")
        float_dtype = jnp.result_type(float)
        return jnp.stack([c.astype(float_dtype) for c in coordinates], axis=-1)
    check_arraylike("RegularGridInterpolator", xi)
    xi = jnp.asarray(xi)
    if xi.ndim == 0:
        raise IndexError("RegularGridInterpolator: the query points xi are a scalar; pass an "
                         "array of shape (..., ndim), or (n,) for a 1-D grid")
    if xi.ndim == 1:
        xi = xi.reshape(-1, ndim)
    return xi


class RegularGridInterpolator:
    """Interpolation on a regular rectangular grid, as
    `jax.scipy.interpolate.RegularGridInterpolator` (and `scipy.interpolate`'s, for the
    methods "linear" and "nearest").

    `points` holds one strictly increasing 1-D array per leading axis of `values`. A query
    point outside the grid gives `fill_value` (NaN by default), or, with `fill_value=None`,
    the extrapolation of the nearest cell. `bounds_error=True` is not supported (the check
    cannot run under jit).
    """

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        _check_method(method)
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("RegularGridInterpolator: bounds_error=True is not "
                                      "supported (the check cannot run under jit); leave it "
                                      "False and test for points outside the grid yourself")
        check_arraylike("RegularGridInterpolator", values)
        if not hasattr(values, "ndim"):
            raise AttributeError(f"RegularGridInterpolator: values must be an array, got "
                                 f"{type(values).__name__}; wrap it with jnp.asarray")
        if len(points) > values.ndim:
            raise ValueError(f"RegularGridInterpolator: there are {len(points)} point arrays, "
                             f"but values has {values.ndim} dimensions (shape "
                             f"{tuple(values.shape)}); give at most one grid per axis")
        values, = promote_dtypes_inexact(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = jnp.asarray(fill_value)
            if not jnp.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError(f"fill_value must be either 'None' or of a type compatible "
                                 f"with values: {fill_value.dtype} does not cast to "
                                 f"{values.dtype}")
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _query_points(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]} "
                             f"(shape {tuple(xi.shape)}), but this RegularGridInterpolator "
                             f"has dimension {ndim}")
        batch_shape = xi.shape[:-1]
        coordinates = xi.reshape(-1, ndim).T
        cells, fractions, outside = self._locate(coordinates)
        if method == "linear":
            result = self._linear(cells, fractions)
        else:
            result = self._nearest(cells, fractions)
        if self.fill_value is not None:
            outside = outside.reshape(outside.shape + (1,) * (result.ndim - 1))
            result = jnp.where(outside, self.fill_value, result)
        return result.reshape(batch_shape + self.values.shape[ndim:])

    def _locate(self, coordinates):
        """For each axis, the cell holding each point (the index of its lower knot, clamped
        so that outside points use the edge cell), the point's fractional position in that
        cell, and whether any coordinate lies outside the grid."""
        cells, fractions = [], []
        outside = jnp.zeros(coordinates.shape[1:], dtype=bool)
        for x, knots in zip(coordinates, self.grid):
            cell = jnp.searchsorted(knots, x) - 1
            cell = jnp.where(cell < 0, 0, cell)
            cell = jnp.where(cell > knots.size - 2, knots.size - 2, cell)
            lower, upper = knots[cell], knots[cell + 1]
            cells.append(cell)
            fractions.append((x - lower) / (upper - lower))
            outside = outside | (x < knots[0]) | (x > knots[-1])
        return cells, fractions, outside

    def _linear(self, cells, fractions):
        """The sum over the 2^ndim corners of each point's cell of the corner's value times
        the product of its per-axis weights (1 - t at the lower knot, t at the upper)."""
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(cells))
        total = jnp.asarray(0.0)
        for corner in itertools.product((0, 1), repeat=len(cells)):
            weight = jnp.asarray(1.0)
            for upper, t in zip(corner, fractions):
                weight = weight * (t if upper else 1 - t)
            index = tuple(cell + 1 if upper else cell for upper, cell in zip(corner, cells))
            total = total + self.values[index] * weight[trailing]
        return total

    def _nearest(self, cells, fractions):
        """The value at the nearer knot on every axis (the lower one at a tie)."""
        index = tuple(jnp.where(t <= 0.5, cell, cell + 1) for cell, t in zip(cells, fractions))
        return self.values[index]


register_pytree_node(
    RegularGridInterpolator,
    lambda interp: ((interp.grid, interp.values, interp.fill_value),
                    (interp.method, interp.bounds_error)),
    lambda static, children: RegularGridInterpolator(
        children[0], children[1], *static, children[2]),
)
