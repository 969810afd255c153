"""Products of arrays: dot, matmul, tensordot and friends, each one `dot_general`.

Operands keep their own dtypes: `dot_general` takes mixed inputs and a
`preferred_element_type` (the promoted dtype), as in JAX, so no conversion is staged.
Batch dimensions broadcast as in NumPy without materialising the broadcast: a size-1
batch dimension on one side becomes a free dimension of the other side's operand.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.core import get_aval
from didax._src.eager.registry import step
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.lax.dot import dot_general
from didax._src.numpy import ufuncs
from didax._src.numpy.util import asarray, check_arraylike, promote_dtypes

__all__ = ["dot", "vdot", "inner", "outer", "matmul", "tensordot", "kron", "cross", "vecdot",
           "matvec", "vecmat"]


def _arrays(name, *args):
    check_arraylike(name, *args)
    return [asarray(a) for a in args]


def _out_dtype(name, a, b, preferred_element_type):
    """(dtype, weak_type) of the result: promoted, or the user's preferred_element_type."""
    if preferred_element_type is None:
        if a.dtype == b.dtype and not (a.weak_type or b.weak_type):  # the common case, fast
            return a.dtype, False
        return dtypes.result_type(a, b, return_weak_type_flag=True)
    return dtypes.check_and_canonicalize_user_dtype(preferred_element_type, name), False


def _canonical_axis(axis, ndim, name):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _moveaxis(x, source, destination):
    ndim = x.ndim
    perm = [i for i in range(ndim) if i != source]
    perm.insert(destination, source)
    return lax_shape.transpose(x, perm)


def _ravel(x):
    return lax_shape.reshape(x, (x.size,))


def _conj(x):
    return lax.conj(x) if dtypes.kind(x.dtype) == "c" else x


def _convert(x, dtype, weak):
    if x.dtype == dtype and x.weak_type == weak:
        return x
    return lax.convert_element_type(x, dtype, weak)


def _contract(name, a, b, a_core, b_core, a_con, b_con, precision, preferred_element_type):
    """Contracts core dimension `a_con` of `a` with `b_con` of `b` (indices into the last
    `a_core`/`b_core` dimensions); the leading dimensions broadcast as in NumPy.

    Output: broadcast batch dimensions, then a's free core dimensions, then b's.
    """
    dtype, weak = _out_dtype(name, a, b, preferred_element_type)
    sa, sb = a.shape, b.shape
    if len(sa) == a_core and len(sb) == b_core:  # no batch dimensions: the hot path
        dims = (((a_con % a_core,), (b_con % b_core,)), ((), ()))
        return _convert(dot_general(a, b, dims, precision, preferred_element_type=dtype), dtype,
                        weak)
    na, nb = len(sa) - a_core, len(sb) - b_core
    nbatch = max(na, nb)
    a_squeeze, b_squeeze, both_squeeze = [], [], []
    a_roles, b_roles = [], []  # per kept leading dim: "batch" or "free", with output position
    for i in range(nbatch):
        da = sa[i - (nbatch - na)] if i >= nbatch - na else None
        db = sb[i - (nbatch - nb)] if i >= nbatch - nb else None
        if da is None:
            b_roles.append(("free", i))
        elif db is None:
            a_roles.append(("free", i))
        elif da == 1 and db == 1:
            a_squeeze.append(len(a_roles) + len(a_squeeze))
            b_squeeze.append(len(b_roles) + len(b_squeeze))
            both_squeeze.append(i)
        elif da == 1:
            a_squeeze.append(len(a_roles) + len(a_squeeze))
            b_roles.append(("free", i))
        elif db == 1:
            b_squeeze.append(len(b_roles) + len(b_squeeze))
            a_roles.append(("free", i))
        elif da == db:
            a_roles.append(("batch", i))
            b_roles.append(("batch", i))
        else:
            raise ValueError(f"Incompatible shapes for {name} arguments: {get_aval(a).str_short()}"
                             f" and {get_aval(b).str_short()}")
    if a_squeeze:
        a = lax_shape.squeeze(a, a_squeeze)
    if b_squeeze:
        b = lax_shape.squeeze(b, b_squeeze)
    ka, kb = len(a_roles), len(b_roles)
    a_batch = tuple(j for j, (role, _) in enumerate(a_roles) if role == "batch")
    b_batch = tuple(j for j, (role, _) in enumerate(b_roles) if role == "batch")
    a_con, b_con = ka + a_con % a_core, kb + b_con % b_core
    dims = (((a_con,), (b_con,)), (a_batch, b_batch))
    out = dot_general(a, b, dims, precision, preferred_element_type=dtype)
    if nbatch:  # put every leading dimension at its broadcast position
        n_a_free = a_core - 1
        positions = ([i for role, i in a_roles if role == "batch"]
                     + [i for role, i in a_roles if role == "free"]
                     + [nbatch + k for k in range(n_a_free)]
                     + [i for role, i in b_roles if role == "free"]
                     + [nbatch + n_a_free + k for k in range(b_core - 1)])
        out = lax_shape.transpose(out, np.argsort(positions))
        if both_squeeze:
            out = lax_shape.expand_dims(out, both_squeeze)
    return _convert(out, dtype, weak)


@step
def matmul(a, b, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's rules: 1-D operands are vectors, batch dims broadcast."""
    a, b = _arrays("matmul", a, b)
    for i, x in enumerate((a, b)):
        if x.ndim < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                             f"ndim {x.ndim}")
    a_core = 2 if a.ndim > 1 else 1
    b_core = 2 if b.ndim > 1 else 1
    return _contract("matmul", a, b, a_core, b_core, -1, -2 if b_core == 2 else -1, precision,
                     preferred_element_type)


def matvec(x1, x2, /):
    """Matrix-vector products, broadcasting: (..., n, m) x (..., m) -> (..., n)."""
    x1, x2 = _arrays("matvec", x1, x2)
    _check_core_ndim("matvec", x1, 2, x2, 1)
    return _contract("matvec", x1, x2, 2, 1, -1, -1, None, None)


def vecmat(x1, x2, /):
    """Conjugated vector-matrix products, broadcasting: (..., n) x (..., n, m) -> (..., m)."""
    x1, x2 = _arrays("vecmat", x1, x2)
    _check_core_ndim("vecmat", x1, 1, x2, 2)
    return _contract("vecmat", _conj(x1), x2, 1, 2, 0, 0, None, None)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Conjugated dot products along `axis`, broadcasting the other dimensions."""
    x1, x2 = _arrays("vecdot", x1, x2)
    s1, s2 = x1.shape, x2.shape
    _check_core_ndim("vecdot", x1, 1, x2, 1)
    ax1, ax2 = _canonical_axis(axis, len(s1), "vecdot"), _canonical_axis(axis, len(s2), "vecdot")
    if s1[ax1] != s2[ax2]:
        raise ValueError(f"axes must match; got shapes {s1} and {s2} with axis={axis}")
    x1 = _moveaxis(_conj(x1), ax1, len(s1) - 1)
    x2 = _moveaxis(x2, ax2, len(s2) - 1)
    return _contract("vecdot", x1, x2, 1, 1, 0, 0, precision, preferred_element_type)


def _check_core_ndim(name, x1, n1, x2, n2):
    for i, (x, n) in enumerate(((x1, n1), (x2, n2))):
        if x.ndim < n:
            raise ValueError(f"{name}: operand {i} must have at least {n} dimensions, got shape "
                             f"{x.shape}")


@step
def dot(a, b, *, precision=None, preferred_element_type=None):
    """NumPy's dot: a's last dimension with b's second-to-last (or only) dimension."""
    a, b = _arrays("dot", a, b)
    dtype, weak = _out_dtype("dot", a, b, preferred_element_type)
    a_ndim, b_ndim = a.ndim, b.ndim
    if a_ndim == 0 or b_ndim == 0:
        contract = ((), ())
    elif b_ndim == 1:
        contract = ((a_ndim - 1,), (0,))
    else:
        contract = ((a_ndim - 1,), (b_ndim - 2,))
    out = dot_general(a, b, (contract, ((), ())), precision, preferred_element_type=dtype)
    return _convert(out, dtype, weak)


@step
def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, conjugating the first."""
    a, b = _arrays("vdot", a, b)
    return dot(_ravel(_conj(a)), _ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


@step
def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Contracts the last `axes` dims of a with the first of b, or the given axis pairs."""
    a, b = _arrays("tensordot", a, b)
    a_ndim, b_ndim = a.ndim, b.ndim
    dtype, weak = _out_dtype("tensordot", a, b, preferred_element_type)
    if type(axes) is int:
        if axes > min(a_ndim, b_ndim):
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks "
                            f"({a.shape} and {b.shape})")
        contract = (tuple(range(a_ndim - axes, a_ndim)), tuple(range(axes)))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax1, ax2 = axes
        if isinstance(ax1, int) and isinstance(ax2, int):
            contract = ((_canonical_axis(ax1, a_ndim, "tensordot"),),
                        (_canonical_axis(ax2, b_ndim, "tensordot"),))
        elif isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
            if len(ax1) != len(ax2):
                raise TypeError(f"tensordot requires axes lists to have equal length, got {ax1} "
                                f"and {ax2}.")
            contract = (tuple(_canonical_axis(i, a_ndim, "tensordot") for i in ax1),
                        tuple(_canonical_axis(i, b_ndim, "tensordot") for i in ax2))
        else:
            raise TypeError("tensordot requires both axes lists to be either ints, tuples or "
                            f"lists, got {ax1} and {ax2}")
    else:
        raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of "
                        "lists/tuples of ints.")
    out = dot_general(a, b, (contract, ((), ())), precision, preferred_element_type=dtype)
    return _convert(out, dtype, weak)


@step
def inner(a, b, *, precision=None, preferred_element_type=None):
    """Contracts the last dimensions of a and b (a product if either is a scalar)."""
    a, b = _arrays("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        if preferred_element_type is not None:
            a = asarray(a, preferred_element_type)
            b = asarray(b, preferred_element_type)
        return ufuncs.multiply(a, b)
    return tensordot(a, b, (-1, -1), precision=precision,
                     preferred_element_type=preferred_element_type)


@step
def outer(a, b, out=None):
    """Outer product of the flattened arrays."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b = promote_dtypes(*_arrays("outer", a, b))
    a, b = _ravel(a), _ravel(b)
    return ufuncs.multiply(lax_shape.expand_dims(a, (1,)), lax_shape.expand_dims(b, (0,)))


def kron(a, b):
    """Kronecker product: blocks a[i, j] * b, via one broadcast product and a reshape."""
    a, b = promote_dtypes(*_arrays("kron", a, b))
    a_ndim, b_ndim = a.ndim, b.ndim
    if a_ndim < b_ndim:
        a = lax_shape.expand_dims(a, range(b_ndim - a_ndim))
    elif b_ndim < a_ndim:
        b = lax_shape.expand_dims(b, range(a_ndim - b_ndim))
    ndim = max(a_ndim, b_ndim)
    out_shape = tuple(int(m * n) for m, n in zip(a.shape, b.shape))
    a = lax_shape.expand_dims(a, range(1, 2 * ndim, 2))
    b = lax_shape.expand_dims(b, range(0, 2 * ndim, 2))
    return lax_shape.reshape(lax.mul(a, b), out_shape)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors, as NumPy) along the given axes."""
    a, b = _arrays("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = _moveaxis(a, _canonical_axis(axisa, a.ndim, "cross"), a.ndim - 1)
    b = _moveaxis(b, _canonical_axis(axisb, b.ndim, "cross"), b.ndim - 1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")

    def component(x, i):  # the missing third component of a 2-vector is zero
        shape = x.shape
        if i == shape[-1]:
            return lax_shape.full(shape[:-1], 0, x.dtype)
        return lax_shape.index_in_dim(x, i, len(shape) - 1, keepdims=False)

    mul, sub = ufuncs.multiply, ufuncs.subtract
    a0, a1, b0, b1 = component(a, 0), component(a, 1), component(b, 0), component(b, 1)
    if na == 2 and nb == 2:
        return sub(mul(a0, b1), mul(a1, b0))
    a2, b2 = component(a, 2), component(b, 2)
    parts = [sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)),
             sub(mul(a0, b1), mul(a1, b0))]
    c = lax_shape.concatenate([lax_shape.expand_dims(p, (0,)) for p in parts], 0)
    return _moveaxis(c, 0, _canonical_axis(axisc, c.ndim, "cross"))
