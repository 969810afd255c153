"""`BCSR`: a batched-CSR sparse array, as `jax.experimental.sparse.BCSR`, and the functions
on it. Its two sparse dimensions are rows (pointers into the entries, `indptr`) and
columns (`indices`); batch dimensions lead and dense ones trail (see primitives/sparse/
bcsr.py). Conversions, todense, extract and products with dense arrays are primitives;
structural operations go through BCOO, whose (row, column) coordinates it converts to and
from in sorted order.
"""
from __future__ import annotations

import operator

import numpy as np

from didax._src import tree_util
from didax._src.core import Tracer, concrete_value, get_aval
from didax._src.errors import concretization_error
from didax._src.experimental.sparse import duplicates, products, shape_ops
from didax._src.experimental.sparse.bcoo import BCOO, JAXSparse
from didax._src.numpy import namespace as jnp
from didax._src.primitives.sparse import bcsr as prim
from didax._src.primitives.sparse.fromdense import nonzero_counts
from didax._src.primitives.sparse.layout import SparseInfo


class BCSR(JAXSparse):
    """A sparse array in batched-CSR form: `BCSR((data, indices, indptr), shape=shape)`."""

    __array_ufunc__ = None
    __array_priority__ = 2000

    def __init__(self, args, *, shape, indices_sorted: bool = False,
                 unique_indices: bool = False):
        try:
            data, indices, indptr = args
        except (TypeError, ValueError):
            raise TypeError("BCSR: the first argument must be (data, indices, indptr), got "
                            f"{type(args).__name__}") from None
        self.data, self.indices, self.indptr = map(jnp.asarray, (data, indices, indptr))
        self.shape = tuple(operator.index(s) for s in shape)
        self.indices_sorted, self.unique_indices = bool(indices_sorted), bool(unique_indices)
        prim.check_layout("BCSR", get_aval(self.data), get_aval(self.indices),
                          get_aval(self.indptr), self.shape)

    dtype = property(lambda self: get_aval(self.data).dtype)
    nse = property(lambda self: get_aval(self.indices).shape[-1])
    n_batch = property(lambda self: get_aval(self.indices).ndim - 1)
    n_sparse = property(lambda self: 2)
    n_dense = property(lambda self: get_aval(self.data).ndim - 1 - self.n_batch)
    _info = property(lambda self: SparseInfo(self.shape, self.indices_sorted,
                                             self.unique_indices))

    def __repr__(self):
        try:
            extra = f", nse={self.nse}"
            if self.n_batch:
                extra += f", n_batch={self.n_batch}"
            if self.n_dense:
                extra += f", n_dense={self.n_dense}"
            text = f"BCSR({self.dtype.name}{list(self.shape)}{extra})"
        except Exception:
            text = "BCSR(<invalid>)"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"{self!r} is a sparse array: use `.todense()` for its dense form")

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), self._info

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        shape = tuple(aux.shape)
        ds, ids = getattr(obj.data, "shape", None), getattr(obj.indices, "shape", None)
        if isinstance(ds, tuple) and isinstance(ids, tuple) and ids:
            nb = len(ids) - 1
            nd = len(ds) - nb - 1
            if nd >= 0 and nb + 2 + nd != len(shape) and 2 + nd <= len(shape):
                shape = tuple(ids[:nb]) + shape[len(shape) - 2 - nd:]
        obj.shape = shape
        obj.indices_sorted, obj.unique_indices = aux.indices_sorted, aux.unique_indices
        return obj

    def block_until_ready(self):
        for x in (self.data, self.indices, self.indptr):
            x.block_until_ready()
        return self

    @property
    def T(self):
        return self.transpose()

    def transpose(self, *args, **kwargs):
        raise NotImplementedError("Transpose is not implemented.")

    # -- conversions -----------------------------------------------------------------------

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0) -> BCSR:
        """The BCSR form of a dense array (`nse` is needed under jit)."""
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> BCSR:
        """A BCOO with two sparse dimensions as a BCSR (its elements sorted by position)."""
        if not isinstance(arr, BCOO) or arr.n_sparse != 2:
            raise ValueError("BCSR.from_bcoo: expected a BCOO with n_sparse=2, got "
                             f"{arr!r}")
        return _from_coo(arr.sort_indices())

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0) -> BCSR:
        """A SciPy sparse matrix as a BCSR (its CSR form, entries as stored)."""
        if n_dense or n_batch:
            raise NotImplementedError("BCSR.from_scipy_sparse with n_batch or n_dense is not "
                                      "implemented; use BCSR.fromdense(mat.toarray(), ...)")
        csr = mat.tocsr()
        index_dtype = np.dtype(np.int32 if index_dtype is None else index_dtype)
        return cls((jnp.asarray(csr.data), jnp.asarray(csr.indices.astype(index_dtype)),
                    jnp.asarray(csr.indptr.astype(index_dtype))),
                   shape=tuple(int(s) for s in csr.shape))

    def to_bcoo(self) -> BCOO:
        """The same array as a BCOO (its (row, column) coordinates)."""
        rows, cols = self.shape[self.n_batch:self.n_batch + 2]
        coo = prim.coo_indices(self.indices, self.indptr, rows, cols)
        return BCOO((self.data, coo), shape=self.shape, indices_sorted=self.indices_sorted,
                    unique_indices=self.unique_indices)

    def todense(self):
        """The dense array this stands for."""
        return bcsr_todense(self)

    def sum_duplicates(self, nse=None, remove_zeros: bool = True) -> BCSR:
        """One stored element per position (see BCOO.sum_duplicates)."""
        return BCSR.from_bcoo(self.to_bcoo().sum_duplicates(nse, remove_zeros))

    def sum(self, *args, **kwargs):
        """The sum, through BCOO."""
        return self.to_bcoo().sum(*args, **kwargs)

    def __matmul__(self, other):
        if isinstance(other, JAXSparse):
            raise NotImplementedError("the product of two BCSR arrays is not implemented; "
                                      "convert them with .to_bcoo()")
        other = jnp.asarray(other)
        if self.ndim != 2 or get_aval(other).ndim not in (1, 2):
            raise NotImplementedError(
                f"matmul of a BCSR array of shape {self.shape} with an array of shape "
                f"{get_aval(other).shape}: only a matrix times a vector or matrix is "
                "implemented (use bcsr_dot_general)")
        return bcsr_dot_general(self, other, dimension_numbers=(((1,), (0,)), ((), ())))

    def __rmatmul__(self, other):
        return products.rmatmul(other, self.to_bcoo())

    def __neg__(self):
        return BCSR((-self.data, self.indices, self.indptr), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def __mul__(self, other):
        if isinstance(other, JAXSparse) or get_aval(jnp.asarray(other)).ndim:
            raise NotImplementedError("BCSR times an array is not implemented; convert with "
                                      ".to_bcoo()")
        return BCSR((self.data * other, self.indices, self.indptr), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    __rmul__ = __mul__


tree_util.register_pytree_node(BCSR, BCSR.tree_flatten, BCSR.tree_unflatten)


def _from_coo(mat) -> BCSR:
    """BCSR arrays from sorted (row, column) coordinates (elements out of bounds last)."""
    nb = mat.n_batch
    rows, cols = mat.shape[nb:nb + 2]
    data, indices = mat.data, mat.indices
    dtype = get_aval(indices).dtype

    def one(idx):
        valid = jnp.all((idx >= 0) & (idx < jnp.asarray([rows, cols], dtype)), axis=-1)
        r = jnp.where(valid, idx[:, 0], rows)
        ptr = jnp.searchsorted(r, jnp.arange(rows + 1, dtype=dtype), side="left")
        return jnp.where(valid, idx[:, 1], cols).astype(dtype), ptr.astype(dtype)

    ind, ptr = duplicates.per_batch(one, nb)(indices)
    return BCSR((data, ind, ptr), shape=tuple(mat.shape), indices_sorted=True,
                unique_indices=mat.unique_indices)


def _bcsr(name, mat) -> BCSR:
    if not isinstance(mat, BCSR):
        raise TypeError(f"{name} expects a BCSR sparse array, got {type(mat).__name__}")
    return mat


def bcsr_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=np.int32) -> BCSR:
    """The BCSR form of a dense array; `nse` must be given under jit."""
    mat = jnp.asarray(mat)
    aval = get_aval(mat)
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if nse is None:
        value = concrete_value(mat)
        if value is None:
            raise concretization_error(mat, "the nse argument of bcsr_fromdense (pass "
                                       "`nse=...` under jit or vmap)", topic="shape")
        counts = nonzero_counts(np.asarray(value), n_batch, n_dense)
        nse = int(counts.max()) if counts.size else 0
    data, indices, indptr = prim.bcsr_fromdense_p.bind(
        mat, nse=operator.index(nse), n_batch=n_batch, n_dense=n_dense,
        index_dtype=np.dtype(index_dtype))
    return BCSR((data, indices, indptr), shape=aval.shape, indices_sorted=True,
                unique_indices=True)


def bcsr_todense(mat):
    """The dense array a BCSR stands for."""
    mat = _bcsr("bcsr_todense", mat)
    return prim.bcsr_todense_p.bind(mat.data, mat.indices, mat.indptr, spinfo=mat._info)


def bcsr_extract(indices, indptr, mat):
    """The values of the dense `mat` at the BCSR positions (indices, indptr): BCSR data."""
    return prim.bcsr_extract_p.bind(jnp.asarray(indices), jnp.asarray(indptr),
                                    jnp.asarray(mat))


def bcsr_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """`lax.dot_general` with a BCSR operand (a dense result)."""
    del precision, out_sharding
    if isinstance(lhs, BCSR) and not isinstance(rhs, JAXSparse):
        rhs = jnp.asarray(rhs)
        dtype = jnp.result_type(lhs.data, rhs)
        out = np.dtype(dtype if preferred_element_type is None else preferred_element_type)
        dims = products._canonical_dimension_numbers(dimension_numbers)
        return prim.bcsr_dot_general_p.bind(
            jnp.asarray(lhs.data, dtype), lhs.indices, lhs.indptr, jnp.asarray(rhs, dtype),
            dimension_numbers=dims, lhs_spinfo=lhs._info, preferred_element_type=out)
    lhs, rhs = (x.to_bcoo() if isinstance(x, BCSR) else x for x in (lhs, rhs))
    return products.dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                                preferred_element_type=preferred_element_type)


def bcsr_sum_duplicates(mat, nse=None) -> BCSR:
    """One stored element per position; `nse` must be given under jit."""
    return _bcsr("bcsr_sum_duplicates", mat).sum_duplicates(nse, remove_zeros=False)


def bcsr_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None) -> BCSR:
    """`lax.broadcast_in_dim` of a BCSR: new dimensions must be batch ones (leading)."""
    del sharding
    coo = _bcsr("bcsr_broadcast_in_dim", mat).to_bcoo()
    out = shape_ops.broadcast_in_dim(coo, shape, broadcast_dimensions)
    if out.n_sparse != 2:
        raise NotImplementedError("bcsr_broadcast_in_dim: only new batch (leading) or dense "
                                  "dimensions are possible for a BCSR array")
    return _from_coo(BCOO._new(duplicates.sort_indices(out)))


def bcsr_concatenate(operands, *, dimension) -> BCSR:
    """`lax.concatenate` of BCSR arrays of one layout."""
    ops = [_bcsr("bcsr_concatenate", x).to_bcoo() for x in operands]
    out = shape_ops.concatenate(ops, dimension)
    return _from_coo(BCOO._new(duplicates.sort_indices(out)))
