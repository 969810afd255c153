"""`BCOO`: a batched-COO sparse array, as `jax.experimental.sparse.BCOO`.

It holds `data` (batch + (nse,) + dense) and integer `indices` (batch + (nse, n_sparse)) for
an array of `shape` = batch + sparse + dense (see primitives/sparse/layout.py), and is a
pytree node whose children are those two arrays, so it passes through jit, vmap and grad
(whose derivatives flow to `data`; the indices are integers). Its methods and operators
are the functions of this package; each returns a new BCOO (or a dense array where the
result is one: products with dense arrays, full sums).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from didax._src import tree_util
from didax._src.core import Tracer, get_aval
from didax._src.experimental.sparse import (
    conversions,
    duplicates,
    products,
    reorder,
    sparse_sparse,
    spdot,
    structure,
)
from didax._src.experimental.sparse.parts import Parts, canonical_axes, info, is_sparse
from didax._src.numpy import namespace as jnp
from didax._src.primitives.sparse.layout import layout_of


class JAXSparse:
    """The base class of didax's sparse arrays (JAX's name for it): what `isinstance` checks
    for "any sparse array" test."""

    data: object
    shape: tuple

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d sparse array)")
        return self.shape[0]


class BCOO(JAXSparse):
    """A sparse array in batched-COO form: `BCOO((data, indices), shape=shape)`."""

    _is_bcoo = True
    __array_ufunc__ = None  # NumPy arrays defer to our reflected operators (x @ sp, x * sp)
    __array_priority__ = 2000

    def __init__(self, args, *, shape, indices_sorted: bool = False,
                 unique_indices: bool = False):
        try:
            data, indices = args
        except (TypeError, ValueError):
            raise TypeError("BCOO: the first argument must be the pair (data, indices), got "
                            f"{type(args).__name__}") from None
        self.data = jnp.asarray(data)
        self.indices = jnp.asarray(indices)
        self.shape = tuple(operator.index(s) for s in shape)
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)
        layout_of("BCOO", get_aval(self.data), get_aval(self.indices), self.shape)

    @classmethod
    def _new(cls, parts: Parts) -> BCOO:
        return cls((parts.data, parts.indices), shape=parts.shape,
                   indices_sorted=parts.indices_sorted, unique_indices=parts.unique_indices)

    # -- layout ------------------------------------------------------------------------

    dtype = property(lambda self: get_aval(self.data).dtype)
    nse = property(lambda self: get_aval(self.indices).shape[-2])
    n_batch = property(lambda self: get_aval(self.indices).ndim - 2)
    n_sparse = property(lambda self: get_aval(self.indices).shape[-1])
    n_dense = property(lambda self: get_aval(self.data).ndim - 1 - self.n_batch)
    _info = property(info)

    @property
    def T(self) -> BCOO:
        return self.transpose()

    def __repr__(self):
        try:
            extra = f", nse={self.nse}"
            if self.n_batch:
                extra += f", n_batch={self.n_batch}"
            if self.n_dense:
                extra += f", n_dense={self.n_dense}"
            text = f"BCOO({self.dtype.name}{list(self.shape)}{extra})"
        except Exception:  # (leaves that are not arrays: tree_util placeholders)
            text = "BCOO(<invalid>)"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"{self!r} is a sparse array: it does not convert to a dense one implicitly. Use "
            "`.todense()` for its dense form; a dense array times a sparse one is `sp.__rmatmul__"
            "(x)` or didax.experimental.sparse.bcoo_dot_general(x, sp, ...)")

    # -- pytree ------------------------------------------------------------------------

    def tree_flatten(self):
        return (self.data, self.indices), info(self)

    @classmethod
    def tree_unflatten(cls, aux, children):
        """A BCOO from its leaves. vmap hands them over with the mapped dimension removed
        (inside) or added (outside), so the batch part of the shape follows the leaves."""
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        shape = tuple(aux.shape)
        ds, ids = getattr(obj.data, "shape", None), getattr(obj.indices, "shape", None)
        if isinstance(ds, tuple) and isinstance(ids, tuple) and len(ids) >= 2:
            nb, ns = len(ids) - 2, ids[-1]
            nd = len(ds) - nb - 1
            if nd >= 0 and nb + ns + nd != len(shape) and ns + nd <= len(shape):
                batch = tuple(max(a, b) for a, b in zip(ds[:nb], ids[:nb]))
                shape = batch + shape[len(shape) - ns - nd:]
        obj.shape = shape
        obj.indices_sorted, obj.unique_indices = aux.indices_sorted, aux.unique_indices
        return obj

    def block_until_ready(self):
        self.data.block_until_ready()
        self.indices.block_until_ready()
        return self

    # -- conversions ---------------------------------------------------------------------

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0) -> BCOO:
        """The sparse form of a dense array (`nse` is needed under jit)."""
        return cls._new(conversions.fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                              index_dtype=index_dtype))

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0) -> BCOO:
        """A SciPy sparse matrix (any format) as a BCOO."""
        return cls._new(conversions.from_scipy_sparse(mat, index_dtype=index_dtype,
                                                      n_dense=n_dense, n_batch=n_batch))

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0,
               nse=0) -> BCOO:
        return cls._new(conversions.empty(shape, dtype, index_dtype, n_batch=n_batch,
                                          n_dense=n_dense, nse=nse))

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32", n_batch=0, n_dense=0) -> BCOO:
        return cls._new(conversions.eye(N, M, k, dtype, index_dtype, n_batch=n_batch,
                                        n_dense=n_dense))

    def todense(self):
        """The dense array this stands for (duplicates summed)."""
        return conversions.todense(self)

    def astype(self, dtype) -> BCOO:
        """The array converted to `dtype` (duplicates summed first: a conversion of a sum is
        not the sum of the conversions)."""
        mat = self._summed()
        return mat._with_data(jnp.asarray(mat.data, dtype))

    def _summed(self) -> BCOO:
        """The same array with unique indices (and as many stored elements), which an
        elementwise function that is not linear needs."""
        if self.unique_indices:
            return self
        return BCOO._new(reorder.sum_duplicates(self, self.nse))

    # -- structure -----------------------------------------------------------------------

    def transpose(self, axes=None) -> BCOO:
        """The transpose (dimensions reversed unless `axes` is given)."""
        axes = tuple(range(self.ndim))[::-1] if axes is None else axes
        return BCOO._new(reorder.transpose(self, axes))

    def reshape(self, *args, **kwargs) -> BCOO:
        """A reshape of the sparse dimensions only (see structure.reshape)."""
        if kwargs.pop("dimensions", None) is not None:
            raise NotImplementedError("BCOO.reshape: the `dimensions` argument (a transpose "
                                      "first) is not implemented")
        new = kwargs.pop("new_sizes", None) or kwargs.pop("shape", None)
        if kwargs:
            raise TypeError(f"BCOO.reshape: unexpected arguments {sorted(kwargs)}")
        if new is None:
            new = args[0] if len(args) == 1 and not isinstance(args[0], (int, np.integer)) \
                else args
        return BCOO._new(structure.reshape(self, new))

    def sum(self, axis=None, dtype=None, keepdims=False):
        """The sum over `axis` (all by default): a BCOO, or a dense array if every axis is
        summed (as JAX returns)."""
        mat = self if dtype is None else self.astype(dtype)
        axes = canonical_axes("BCOO.sum", axis, self.ndim)
        out = BCOO._new(structure.reduce_sum(mat, axes))
        if out.ndim == 0:
            dense = out.todense()
            return jnp.reshape(dense, (1,) * self.ndim) if keepdims else dense
        if keepdims:
            out = BCOO._new(structure.expand_dims(out, axes))
        return out

    def sort_indices(self) -> BCOO:
        """The same array, its stored elements in row-major order of position."""
        return BCOO._new(reorder.sort_indices(self))

    def sum_duplicates(self, nse=None, remove_zeros: bool = True) -> BCOO:
        """One stored element per position (sorted); zeros removed first unless told not
        to; `nse` (the number kept) is needed under jit."""
        mat = duplicates.eliminate_zeros(self) if remove_zeros else self
        return BCOO._new(reorder.sum_duplicates(mat, nse))

    # -- arithmetic ----------------------------------------------------------------------

    def _with_data(self, data) -> BCOO:
        return BCOO((data, self.indices), shape=self.shape, indices_sorted=self.indices_sorted,
                    unique_indices=self.unique_indices)

    def __neg__(self):
        return self._with_data(-self.data)

    def __pos__(self):
        return self

    def __abs__(self):
        mat = self._summed()
        return mat._with_data(jnp.abs(mat.data))

    def __pow__(self, exponent):
        if not isinstance(exponent, (int, float)) or exponent <= 0:
            raise NotImplementedError(
                f"a sparse array to the power {exponent!r}: only positive Python numbers "
                "keep the zeros zero")
        mat = self._summed()
        return mat._with_data(mat.data ** exponent)

    def __mul__(self, other):
        if is_sparse(other):
            return BCOO._new(sparse_sparse.multiply_sparse(self, other))
        return self._with_data(products.multiply_dense(self, other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        if is_sparse(other):
            raise NotImplementedError("division by a sparse array is not implemented")
        return self._with_data(products.divide_dense(self, other))

    def __matmul__(self, other):
        if is_sparse(other):
            return BCOO._new(spdot.matmul(self, other))
        return products.matmul(self, other)

    def __rmatmul__(self, other):
        return products.rmatmul(other, self)

    def __add__(self, other):
        if is_sparse(other):
            return BCOO._new(structure.add(self, other))
        other = jnp.asarray(other)
        try:
            shape = np.broadcast_shapes(tuple(self.shape), get_aval(other).shape)
        except ValueError:
            raise ValueError(f"addition of a sparse array of shape {tuple(self.shape)} and a "
                             f"dense one of shape {get_aval(other).shape}: they do not "
                             "broadcast") from None
        if shape != get_aval(other).shape:
            raise NotImplementedError(
                "Addition between a sparse array X and a dense array Y is not implemented "
                f"when the output shape {shape} is larger than Y.shape={get_aval(other).shape} "
                "(it would densify a sparse array silently); if that is your intent, convert "
                "the sparse array with .todense()")
        return self.todense() + other

    __radd__ = __add__

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other


tree_util.register_pytree_node(BCOO, BCOO.tree_flatten, BCOO.tree_unflatten)
