"""Products of a sparse array with dense ones: `bcoo_dot_general` (either side sparse),
`@` in both directions (as `jnp.matmul` broadcasts), and the elementwise product (and
quotient) with a dense array broadcast to the sparse shape, which only reads the dense array
at the stored positions (a sparse result)."""
from __future__ import annotations

import numpy as np

from didax._src.core import get_aval
from didax._src.experimental.sparse.parts import in_bounds, info, is_sparse, split
from didax._src.lax.dot import dot_general as lax_dot_general
from didax._src.numpy import namespace as jnp
from didax._src.primitives.sparse import dot_general as dot_prim
from didax._src.primitives.sparse import todense as todense_prim


def _canonical_dimension_numbers(dimension_numbers) -> tuple:
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
                (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    except (TypeError, ValueError):
        raise TypeError(f"bcoo_dot_general: dimension_numbers must be ((lhs_contracting, "
                        f"rhs_contracting), (lhs_batch, rhs_batch)), got {dimension_numbers!r}"
                        ) from None


def _sparse_dense(sp, x, dimension_numbers, preferred_element_type):
    """The product with `sp` on the left, its operands promoted to one dtype (as jnp does)."""
    x = jnp.asarray(x)
    dtype = jnp.result_type(sp.data, x)
    data = jnp.asarray(sp.data, dtype)
    x = jnp.asarray(x, dtype)
    out_dtype = dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    return dot_prim.bcoo_dot_general(data, sp.indices, x, dimension_numbers=dimension_numbers,
                                     lhs_spinfo=info(sp), preferred_element_type=out_dtype)


def dot_general(lhs, rhs, *, dimension_numbers, preferred_element_type=None):
    """`lax.dot_general` with one operand sparse (a dense result)."""
    dims = _canonical_dimension_numbers(dimension_numbers)
    if is_sparse(lhs) and is_sparse(rhs):
        raise NotImplementedError(
            "bcoo_dot_general of two sparse arrays (bcoo_spdot_general) is not implemented in "
            "didax; convert one of them with .todense()")
    if not is_sparse(lhs) and not is_sparse(rhs):
        return lax_dot_general(lhs, rhs, dims, preferred_element_type=preferred_element_type)
    if is_sparse(lhs):
        return _sparse_dense(lhs, rhs, dims, preferred_element_type)
    # dense @ sparse: the product the other way round, its free dimensions swapped back
    (lc, rc), (lb, rb) = dims
    out = _sparse_dense(rhs, lhs, ((rc, lc), (rb, lb)), preferred_element_type)
    n_sparse_free = rhs.ndim - len(rc) - len(rb)
    n_dense_free = get_aval(lhs).ndim - len(lc) - len(lb)
    b = len(lb)
    perm = (tuple(range(b)) + tuple(range(b + n_sparse_free, b + n_sparse_free + n_dense_free))
            + tuple(range(b, b + n_sparse_free)))
    return jnp.transpose(out, perm)


def _batch_dims_match(sp, x, n):
    """Whether the leading `n` dimensions of `sp` (layout batch ones) and `x` pair up."""
    return (sp.n_batch >= n and tuple(sp.shape[:n]) == tuple(get_aval(x).shape[:n]))


def _unsupported_matmul(sp_shape, x_shape, n_batch):
    return NotImplementedError(
        f"matmul of a sparse array of shape {tuple(sp_shape)} (n_batch={n_batch}) with a dense "
        f"one of shape {tuple(x_shape)}: stacked products must pair the sparse array's "
        "leading batch dimensions with equal leading dimensions of the dense one (broadcasting "
        "them is not implemented)")


def matmul(sp, x):
    """sp @ x, as jnp.matmul broadcasts (stacked products over batch dimensions)."""
    x = jnp.asarray(x)
    a, b = sp.ndim, get_aval(x).ndim
    if a == 0 or b == 0:
        raise ValueError("matmul: both operands must have at least one dimension, got shapes "
                         f"{tuple(sp.shape)} and {get_aval(x).shape}")
    if b <= 2:  # x broadcasts over sp's leading dimensions
        dims = (((a - 1,), (0,)), ((), ()))
        return dot_general(sp, x, dimension_numbers=dims)
    if a == 1:
        return dot_general(sp, x, dimension_numbers=(((0,), (b - 2,)), ((), ())))
    if a == 2:  # (n, k) by (..., k, m): the product is (n, ..., m)
        out = dot_general(sp, x, dimension_numbers=(((1,), (b - 2,)), ((), ())))
        return jnp.moveaxis(out, 0, -2)
    if a != b or not _batch_dims_match(sp, x, a - 2):
        raise _unsupported_matmul(sp.shape, get_aval(x).shape, sp.n_batch)
    batch = tuple(range(a - 2))
    return dot_general(sp, x, dimension_numbers=(((a - 1,), (b - 2,)), (batch, batch)))


def rmatmul(x, sp):
    """x @ sp, as jnp.matmul broadcasts."""
    x = jnp.asarray(x)
    a, b = sp.ndim, get_aval(x).ndim
    if a == 0 or b == 0:
        raise ValueError("matmul: both operands must have at least one dimension, got shapes "
                         f"{get_aval(x).shape} and {tuple(sp.shape)}")
    if a == 1:  # (..., k) by (k,)
        return dot_general(sp, x, dimension_numbers=(((0,), (b - 1,)), ((), ())))
    if b == 1:  # (k,) by (..., k, m): the product is (..., m)
        return dot_general(sp, x, dimension_numbers=(((a - 2,), (0,)), ((), ())))
    if a == 2 or b == 2:  # the product is sp's (..., m) then x's free rows
        out = dot_general(sp, x, dimension_numbers=(((a - 2,), (b - 1,)), ((), ())))
        n_sp = a - 1
        return jnp.moveaxis(out, tuple(range(n_sp, out.ndim)),
                            tuple(range(n_sp - 1, out.ndim - 1)))
    if a != b or not _batch_dims_match(sp, x, a - 2):
        raise _unsupported_matmul(sp.shape, get_aval(x).shape, sp.n_batch)
    batch = tuple(range(a - 2))
    out = dot_general(sp, x, dimension_numbers=(((a - 2,), (b - 1,)), (batch, batch)))
    return jnp.swapaxes(out, -1, -2)


def _dense_at_elements(mat, v):
    """`v` (broadcastable to `mat.shape`) read at each stored element: shape
    batch + (nse,) + dense, where a dimension `v` broadcasts has size 1."""
    shape = tuple(mat.shape)
    vs = get_aval(v).shape
    try:
        fits = np.broadcast_shapes(shape, vs) == shape
    except ValueError:
        fits = False
    if not fits:
        raise NotImplementedError(
            "multiplication between sparse and dense is only implemented for cases where the "
            f"output shape matches the sparse matrix shape. Got shape={shape}, v.shape={vs}")
    v = jnp.reshape(v, (1,) * (len(shape) - len(vs)) + vs)
    vs = get_aval(v).shape
    batch, sparse, dense = split(mat)
    nb = len(batch)
    index = []
    for k in range(nb):
        index.append(jnp.arange(vs[k]).reshape((1,) * k + (vs[k],) + (1,) * (nb - k))
                     if vs[k] != 1 else 0)
    for s in range(len(sparse)):
        index.append(mat.indices[..., s] if vs[nb + s] != 1 else 0)
    out = v[tuple(index)]  # (positions out of bounds clamp, as JAX's gather does)
    if any(not isinstance(i, int) for i in index):
        return out
    return jnp.reshape(out, (1,) * (nb + 1) + vs[nb + len(sparse):])


def multiply_dense(mat, v):
    """The data of `mat * v` (same indices), `v` dense and broadcastable to `mat.shape`."""
    v = jnp.asarray(v)
    if get_aval(v).ndim == 0:
        return mat.data * v
    if get_aval(v).shape == tuple(mat.shape):  # (one primitive; out of bounds reads zero)
        return mat.data * todense_prim.bcoo_extract(mat.indices, v)
    return mat.data * _dense_at_elements(mat, v)


def divide_dense(mat, v):
    """The data of `mat / v`, `v` read only at the stored positions (elements out of bounds,
    which are no entries, divide by one: no 0 / 0 in the data or its derivatives)."""
    v = jnp.asarray(v)
    if get_aval(v).ndim == 0:
        return mat.data / v
    divisor = _dense_at_elements(mat, v)
    valid = in_bounds(mat)
    valid = jnp.reshape(valid, get_aval(valid).shape + (1,) * mat.n_dense)
    return mat.data / jnp.where(valid, divisor, 1)
