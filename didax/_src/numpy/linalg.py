"""didax.numpy.linalg without decompositions: norms, products and matrix views.

Everything here is a reduction or a product over the last axes. Norms that need singular
values (matrix 'nuc', 2 and -2) raise NotImplementedError until an SVD exists.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy import products, reductions, ufuncs
from didax._src.numpy.einsum import einsum
from didax._src.numpy.util import asarray, check_arraylike, promote_dtypes_inexact

__all__ = ["norm", "vector_norm", "matrix_norm", "vecdot", "matmul", "outer", "tensordot",
           "trace", "diagonal", "cross", "matrix_transpose", "multi_dot"]


def _arraylike(name, *args):
    check_arraylike(name, *args)
    return [asarray(a) for a in args]


def _canonical_axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _abs_squared_sum(x, axis, keepdims):
    return reductions.sum(ufuncs.real(ufuncs.multiply(x, ufuncs.conjugate(x))), axis=axis,
                          keepdims=keepdims)


def _svd_norm_error(ord):
    return NotImplementedError(f"norm: matrix norm ord={ord!r} needs singular values (an SVD), "
                               "which didax does not implement yet; 'nuc', 2 and -2 are "
                               "unavailable")


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector norms over one axis, matrix norms over two; the 2-norm of everything by
    default."""
    (x,) = _arraylike("jnp.linalg.norm", x)
    (x,) = promote_dtypes_inexact(x)
    ndim = x.ndim
    if axis is None:
        if ord is None:
            return ufuncs.sqrt(_abs_squared_sum(x, None, keepdims))
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(_canonical_axis(a, ndim) for a in axis)
    else:
        axis = (_canonical_axis(axis, ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(f"Improper number of axes for norm: axis={axis!r}. Pass one axis to "
                         "compute a vector-norm, or two axes to compute a matrix-norm.")
    row_axis, col_axis = axis
    if ord is None or (isinstance(ord, str) and ord in ("f", "fro")):
        return ufuncs.sqrt(_abs_squared_sum(x, axis, keepdims))
    if isinstance(ord, str):
        if ord == "nuc":
            raise _svd_norm_error(ord)
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    if ord in (1, -1):  # max/min absolute column sum
        summed, other = row_axis, col_axis
    elif ord in (np.inf, -np.inf):  # max/min absolute row sum
        summed, other = col_axis, row_axis
    elif ord in (2, -2):
        raise _svd_norm_error(ord)
    else:
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    if not keepdims and other > summed:
        other -= 1
    sums = reductions.sum(ufuncs.abs(x), axis=summed, keepdims=keepdims)
    if ord > 0:
        return reductions.amax(sums, axis=other, keepdims=keepdims, initial=0)
    return reductions.amin(sums, axis=other, keepdims=keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The ord-norm of vectors along `axis` (all axes, flattened, if None)."""
    (x,) = _arraylike("jnp.linalg.vector_norm", x)
    (x,) = promote_dtypes_inexact(x)
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return ufuncs.sqrt(_abs_squared_sum(x, axis, keepdims))
    if isinstance(ord, str):
        hint = {"inf": " Use 'jax.numpy.inf' instead.",
                "-inf": " Use '-jax.numpy.inf' instead."}.get(ord, "")
        raise ValueError(f"Invalid order '{ord}' for vector norm.{hint}")
    if ord == np.inf:
        return reductions.amax(ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return reductions.amin(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        real_dtype = dtypes.finfo(x.dtype).dtype
        return reductions.sum(ufuncs.not_equal(x, 0), dtype=real_dtype, axis=axis,
                              keepdims=keepdims)
    if ord == 1:
        return reductions.sum(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    abs_x = ufuncs.abs(x)
    dtype = abs_x.dtype
    total = reductions.sum(lax.pow(abs_x, np.array(ord, dtype)), axis=axis, keepdims=keepdims)
    return lax.pow(total, np.array(1.0 / ord, dtype))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm over the last two axes."""
    (x,) = _arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    return products.vecdot(x1, x2, axis=axis, precision=precision,
                           preferred_element_type=preferred_element_type)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    return products.matmul(x1, x2, precision=precision,
                           preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    return products.tensordot(x1, x2, axes=axes, precision=precision,
                              preferred_element_type=preferred_element_type)


def outer(x1, x2, /):
    """Outer product of two vectors (unlike jnp.outer, no flattening)."""
    x1, x2 = _arraylike("jnp.linalg.outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} x2.ndim={x2.ndim}")
    return products.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along `axis`."""
    x1, x2 = _arraylike("jnp.linalg.cross", x1, x2)
    s1, s2 = x1.shape, x2.shape
    n1 = s1[_canonical_axis(axis, len(s1))]
    n2 = s2[_canonical_axis(axis, len(s2))]
    if n1 != 3 or n2 != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"have x1.shape[axis]={n1} and x2.shape[axis]={n2}")
    return products.cross(x1, x2, axis=axis)


def matrix_transpose(x, /):
    """Swaps the last two axes."""
    (x,) = _arraylike("jnp.linalg.matrix_transpose", x)
    ndim = x.ndim
    if ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={ndim}")
    return lax_shape.transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def _check_matrices(name, x):
    if x.ndim < 2:
        raise ValueError(f"{name} requires an array of at least two dimensions, got shape "
                         f"{x.shape}")


def diagonal(x, /, *, offset=0):
    """The `offset` diagonal of the matrices in the last two axes.

    Flattening each matrix puts the diagonal at a constant stride (one row plus one), so it is
    one strided slice.
    """
    (x,) = _arraylike("jnp.linalg.diagonal", x)
    _check_matrices("diagonal", x)
    offset = int(offset)
    *batch, n, m = x.shape
    size = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    flat = lax_shape.reshape(x, (*batch, n * m))
    start = (offset if offset >= 0 else -offset * m) if size else 0
    limit = start + (size - 1) * (m + 1) + 1 if size else 0
    return lax_shape.slice(flat, (0,) * len(batch) + (start,), (*batch, limit),
                           (1,) * len(batch) + (m + 1,))


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the `offset` diagonal of the matrices in the last two axes."""
    (x,) = _arraylike("jnp.linalg.trace", x)
    _check_matrices("trace", x)
    shape = x.shape
    ndim = len(shape)
    rows = lax_shape.broadcasted_iota(np.int32, shape[-2:], 0)
    cols = lax_shape.broadcasted_iota(np.int32, shape[-2:], 1)
    on_diagonal = lax.eq(lax.add(rows, np.int32(offset)), cols)
    on_diagonal = lax_shape.broadcast_in_dim(on_diagonal, shape, (ndim - 2, ndim - 1))
    zeros = lax_shape.full(shape, 0, x.dtype)
    return reductions.sum(lax.select_n(on_diagonal, zeros, x), axis=(-2, -1), dtype=dtype)


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (the ends may be vectors), in the cheapest order."""
    arrays = _arraylike("jnp.linalg.multi_dot", *arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrays)}")
    shapes = [a.shape for a in arrays]
    if not (len(shapes[0]) in (1, 2) and len(shapes[-1]) in (1, 2)
            and all(len(s) == 2 for s in shapes[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                         "first and last array which may be 1 or 2 dimensional. Got array "
                         f"shapes {shapes}")
    if any(a[-1] != b[0] for a, b in zip(shapes[:-1], shapes[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension "
                         f"of following array. Got array shapes {shapes}")
    axes = [[i, i + 1] for i in range(len(arrays))]
    if len(shapes[0]) == 1:
        axes[0] = axes[0][1:]
    if len(shapes[-1]) == 1:
        axes[-1] = axes[-1][:1]
    args = [v for pair in zip(arrays, axes) for v in pair]
    return einsum(*args, optimize="auto", precision=precision)
