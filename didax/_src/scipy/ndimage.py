"""didax.scipy.ndimage: `map_coordinates`, as JAX has it.

Interpolation of order 0 (nearest, rounding halves away from zero) or 1 (multilinear): each
axis contributes its one or two integer nodes and weights, the boundary `mode` ('constant',
'nearest', 'wrap', 'mirror', 'reflect') folds the nodes back into the array ('constant'
masks the nodes outside it with `cval` instead), and the result is the sum over the
product of the axes' nodes. Integer inputs are rounded back to their dtype, as JAX.
"""
from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

import didax.numpy as jnp
from didax._src.lax import elementwise as lax

__all__ = ["map_coordinates"]


def _mirror_index_fixer(index, size):
    s = size - 1  # the half-wavelength of a triangular wave
    return jnp.abs((index + s) % (2 * s) - s)


def _reflect_index_fixer(index, size):
    return jnp.floor_divide(_mirror_index_fixer(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror_index_fixer,
    "reflect": _reflect_index_fixer,
}


def _round_half_away_from_zero(a):
    return a if jnp.issubdtype(a.dtype, np.integer) else lax.round(a)


def _nearest_indices_and_weights(coordinate):
    index = _round_half_away_from_zero(coordinate).astype(np.int32)
    return [(index, coordinate.dtype.type(1))]


def _linear_indices_and_weights(coordinate):
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """Samples `input` at `coordinates` (one array per axis) by interpolation of `order`
    0 or 1, with the boundary `mode`."""
    input_arr = jnp.asarray(input)
    coordinate_arrs = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, input_arr.dtype)
    if len(coordinates) != input_arr.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {input_arr.ndim}")
    index_fixer = _INDEX_FIXERS.get(mode)
    if index_fixer is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. Currently "
            f"supported modes are {set(_INDEX_FIXERS)}.")
    if mode == "constant":
        def is_valid(index, size):
            return (0 <= index) & (index < size)
    else:
        def is_valid(index, size):
            return True
    if order == 0:
        interp_fun = _nearest_indices_and_weights
    elif order == 1:
        interp_fun = _linear_indices_and_weights
    else:
        raise NotImplementedError(
            "jax.scipy.ndimage.map_coordinates currently requires order<=1")
    valid_1d_interpolations = []
    for coordinate, size in zip(coordinate_arrs, input_arr.shape):
        valid_1d_interpolations.append([
            (index_fixer(index, size), is_valid(index, size), weight)
            for index, weight in interp_fun(coordinate)])
    outputs = []
    for items in itertools.product(*valid_1d_interpolations):
        indices, validities, weights = zip(*items)
        if all(valid is True for valid in validities):
            contribution = input_arr[indices]
        else:
            all_valid = functools.reduce(operator.and_, validities)
            contribution = jnp.where(all_valid, input_arr[indices], cval)
        outputs.append(functools.reduce(operator.mul, weights) * contribution)
    result = sum(outputs[1:], outputs[0])
    if jnp.issubdtype(input_arr.dtype, np.integer):
        result = _round_half_away_from_zero(result)
    return result.astype(input_arr.dtype)
