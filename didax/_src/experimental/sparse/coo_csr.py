"""`COO`, `CSR` and `CSC`: JAX's simple 2-D sparse matrices, and their functions
(`coo_fromdense`, `coo_todense`, `coo_matvec`, `coo_matmat` and the `csr_*` ones).

Each is a pytree of its three buffers (`_bufs`; CSC has none, as in JAX) with its shape
(and COO its sortedness) as static data. They convert to and from dense arrays and multiply
dense vectors and matrices (`@`, promoting the dtypes; the functions require one dtype, as
JAX's do); `.T` swaps COO's rows and columns, and turns a CSR into a CSC of the same
buffers and back. Other operators raise NotImplementedError, as JAX's do: convert to BCOO
or BCSR for the rest of the sparse API.

Where didax differs: malformed buffers or a wrong operand raise TypeError or ValueError
naming the shapes (JAX asserts).
"""
from __future__ import annotations

import operator

import numpy as np

from didax._src import dtypes, tree_util
from didax._src.core import Tracer, concrete_value, get_aval
from didax._src.errors import concretization_error
from didax._src.experimental.sparse.bcoo import JAXSparse
from didax._src.numpy import namespace as jnp
from didax._src.primitives.sparse import coo as coo_prim
from didax._src.primitives.sparse import csr as csr_prim


def _nse(mat, name):
    value = concrete_value(mat)
    if value is None:
        raise concretization_error(mat, f"the nse argument of {name} (the number of stored "
                                   "elements; pass `nse=...` under jit)", topic="shape")
    return int(np.count_nonzero(np.asarray(value)))


def _matrix(mat, name):
    mat = jnp.asarray(mat)
    if get_aval(mat).ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array, got shape {get_aval(mat).shape}; use "
                         "BCOO or BCSR for other ranks")
    return mat


def _promoted(data, other):
    other = jnp.asarray(other)
    dtype = jnp.result_type(data, other)
    return jnp.asarray(data, dtype), jnp.asarray(other, dtype)


def _eye_coords(N, M, k, index_dtype):
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    row = np.arange(max(0, -k), max(0, min(N, M - k)))
    return N, M, row.astype(index_dtype), (row + k).astype(index_dtype)


def _float_dtype(dtype):
    return dtypes.canonicalize_dtype(np.dtype(dtype) if dtype is not None
                                     else dtypes.default_float_dtype())


class _Matrix(JAXSparse):
    """What COO, CSR and CSC share: a matrix of three buffers, a product with dense vectors
    and matrices, and JAX's NotImplementedError for the operators they lack."""

    __array_ufunc__ = None  # NumPy arrays defer to our reflected operators
    __array_priority__ = 2000

    dtype = property(lambda self: get_aval(self.data).dtype)
    nse = property(lambda self: get_aval(self.data).shape[0])

    @property
    def T(self):
        return self.transpose()

    def __repr__(self):
        try:
            text = f"{type(self).__name__}({self.dtype.name}{list(self.shape)}, nse={self.nse})"
        except Exception:
            text = f"{type(self).__name__}(<invalid>)"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"{self!r} is a sparse matrix: use `.todense()` for its dense form")

    def block_until_ready(self):
        for x in self.tree_flatten()[0]:
            x.block_until_ready()
        return self

    def __matmul__(self, other):
        if isinstance(other, JAXSparse):
            raise NotImplementedError(f"matmul between two sparse objects "
                                      f"({type(self).__name__} and {type(other).__name__})")
        other = jnp.asarray(other)
        ndim = get_aval(other).ndim
        if ndim not in (1, 2):
            raise NotImplementedError(f"matmul with object of shape {get_aval(other).shape}")
        return self._product(other)

    def _unsupported(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not implement this operation "
                                  "(as in JAX); convert it with BCOO.fromdense(x.todense()) "
                                  "or use its dense form")

    __rmatmul__ = __mul__ = __rmul__ = __add__ = __radd__ = __sub__ = __rsub__ = _unsupported
    __neg__ = __pos__ = __getitem__ = sum = _unsupported


class COO(_Matrix):
    """A COO matrix: `COO((data, row, col), shape=shape)`; entry k adds data[k] at
    (row[k], col[k])."""

    def __init__(self, args, *, shape, rows_sorted: bool = False, cols_sorted: bool = False):
        try:
            data, row, col = args
        except (TypeError, ValueError):
            raise TypeError("COO: the first argument must be (data, row, col), got "
                            f"{type(args).__name__}") from None
        self.data, self.row, self.col = map(jnp.asarray, (data, row, col))
        self.shape = tuple(operator.index(s) for s in shape)
        self._rows_sorted, self._cols_sorted = bool(rows_sorted), bool(cols_sorted)
        coo_prim.check_layout("COO", get_aval(self.data), get_aval(self.row),
                              get_aval(self.col), self.shape)

    _bufs = property(lambda self: (self.data, self.row, self.col))
    _info = property(lambda self: coo_prim.COOInfo(self.shape, self._rows_sorted,
                                                   self._cols_sorted))

    def tree_flatten(self):
        return (self.data, self.row, self.col), {"shape": self.shape,
                                                 "rows_sorted": self._rows_sorted,
                                                 "cols_sorted": self._cols_sorted}

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.data, obj.row, obj.col = children
        obj.shape = tuple(aux["shape"])
        obj._rows_sorted, obj._cols_sorted = aux["rows_sorted"], aux["cols_sorted"]
        return obj

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32) -> COO:
        """The COO form of a dense matrix, row-major (`nse` is needed under jit)."""
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32") -> COO:
        shape = tuple(operator.index(s) for s in shape)
        if len(shape) != 2:
            raise ValueError(f"COO must be 2-dimensional, got shape {shape}")
        index = jnp.zeros(0, np.dtype(index_dtype))
        return cls((jnp.zeros(0, _float_dtype(dtype)), index, index), shape=shape,
                   rows_sorted=True, cols_sorted=True)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32") -> COO:
        N, M, row, col = _eye_coords(N, M, k, np.dtype(index_dtype))
        return cls((jnp.ones(len(row), _float_dtype(dtype)), jnp.asarray(row),
                    jnp.asarray(col)), shape=(N, M), rows_sorted=True, cols_sorted=True)

    def _sort_indices(self) -> COO:
        """The entries in row-major order of their positions."""
        if self._rows_sorted:
            return self
        order = jnp.lexsort((self.col, self.row))
        return COO((self.data[order], self.row[order], self.col[order]), shape=self.shape,
                   rows_sorted=True)

    def todense(self):
        return coo_todense(self)

    def transpose(self, axes=None) -> COO:
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return COO((self.data, self.col, self.row), shape=self.shape[::-1],
                   rows_sorted=self._cols_sorted, cols_sorted=self._rows_sorted)

    def _product(self, other):
        data, other = _promoted(self.data, other)
        p = coo_prim.coo_matvec_p if get_aval(other).ndim == 1 else coo_prim.coo_matmat_p
        return p.bind(data, self.row, self.col, other, spinfo=self._info, transpose=False)


class CSR(_Matrix):
    """A CSR matrix: `CSR((data, indices, indptr), shape=shape)`; row r holds data[k] at
    column indices[k] for k from indptr[r] to indptr[r + 1]."""

    def __init__(self, args, *, shape):
        data, indices, indptr = args
        self.data, self.indices, self.indptr = map(jnp.asarray, (data, indices, indptr))
        self.shape = tuple(operator.index(s) for s in shape)
        csr_prim.check_layout(type(self).__name__, get_aval(self.data),
                              get_aval(self.indices), get_aval(self.indptr),
                              self._stored_shape)

    _stored_shape = property(lambda self: self.shape)  # (the CSR matrix the buffers hold)

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), {"shape": self.shape}

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        obj.shape = tuple(aux["shape"])
        return obj

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32) -> CSR:
        """The CSR form of a dense matrix (`nse` is needed under jit)."""
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32") -> CSR:
        shape = tuple(operator.index(s) for s in shape)
        if len(shape) != 2:
            raise ValueError(f"CSR must be 2-dimensional, got shape {shape}")
        index_dtype = np.dtype(index_dtype)
        return cls((jnp.zeros(0, _float_dtype(dtype)), jnp.zeros(0, index_dtype),
                    jnp.zeros(shape[0] + 1, index_dtype)), shape=shape)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32") -> CSR:
        index_dtype = np.dtype(index_dtype)
        N, M, row, col = _eye_coords(N, M, k, index_dtype)
        indptr = np.searchsorted(row, np.arange(N + 1)).astype(index_dtype)
        return cls((jnp.ones(len(row), _float_dtype(dtype)), jnp.asarray(col),
                    jnp.asarray(indptr)), shape=(N, M))

    @property
    def _bufs(self):
        return (self.data, self.indices, self.indptr)

    def todense(self):
        return csr_todense(self)

    def transpose(self, axes=None) -> CSC:
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def _product(self, other):
        data, other = _promoted(self.data, other)
        p = csr_prim.csr_matvec_p if get_aval(other).ndim == 1 else csr_prim.csr_matmat_p
        return p.bind(data, self.indices, self.indptr, other, shape=self.shape,
                      transpose=False)


class CSC(CSR):
    """A CSC matrix: `CSC((data, indices, indptr), shape=shape)`; column c holds data[k] at
    row indices[k] for k from indptr[c] to indptr[c + 1] (its transpose is the CSR matrix of
    the same buffers)."""

    _stored_shape = property(lambda self: self.shape[::-1])
    _bufs = property(lambda self: _no_bufs())

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32) -> CSC:
        """The CSC form of a dense matrix (`nse` is needed under jit)."""
        return CSR.fromdense(_matrix(mat, "CSC.fromdense").T, nse=nse,
                             index_dtype=index_dtype).T

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32") -> CSC:
        shape = tuple(operator.index(s) for s in shape)
        return CSR._empty(shape[::-1], dtype=dtype, index_dtype=index_dtype).T

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32") -> CSC:
        M = N if M is None else M
        return CSR._eye(M, N, -k, dtype=dtype, index_dtype=index_dtype).T

    def todense(self):
        return csr_prim.csr_todense_p.bind(self.data, self.indices, self.indptr,
                                           shape=self._stored_shape).T

    def transpose(self, axes=None) -> CSR:
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def _product(self, other):
        data, other = _promoted(self.data, other)
        p = csr_prim.csr_matvec_p if get_aval(other).ndim == 1 else csr_prim.csr_matmat_p
        return p.bind(data, self.indices, self.indptr, other, shape=self._stored_shape,
                      transpose=True)


def _no_bufs():
    raise AttributeError("'CSC' object has no attribute '_bufs' (as in JAX): use .data, "
                         ".indices and .indptr")


for _cls in (COO, CSR, CSC):
    tree_util.register_pytree_node(_cls, _cls.tree_flatten, _cls.tree_unflatten)


# ------------------------------------------------------------------------------------------
# The functions


def _expect(name, mat, cls):
    if type(mat) is not cls:
        raise TypeError(f"{name} expects a {cls.__name__} matrix, got {type(mat).__name__}")
    return mat


def coo_fromdense(mat, *, nse=None, index_dtype=np.int32) -> COO:
    """The COO form of a dense matrix, its nonzeros in row-major order, padded with zeros
    at (0, 0) up to `nse` (needed under jit)."""
    mat = _matrix(mat, "coo_fromdense")
    nse = _nse(mat, "coo_fromdense") if nse is None else operator.index(nse)
    data, row, col = coo_prim.coo_fromdense_p.bind(mat, nse=nse,
                                                  index_dtype=np.dtype(index_dtype))
    return COO((data, row, col), shape=get_aval(mat).shape, rows_sorted=True)


def coo_todense(mat: COO):
    """The dense form of a COO matrix (repeated positions summed)."""
    mat = _expect("coo_todense", mat, COO)
    return coo_prim.coo_todense_p.bind(mat.data, mat.row, mat.col, spinfo=mat._info)


def coo_matvec(mat: COO, v, transpose: bool = False):
    """mat @ v (mat.T @ v with `transpose`); the operands must have one dtype."""
    mat = _expect("coo_matvec", mat, COO)
    return coo_prim.coo_matvec_p.bind(mat.data, mat.row, mat.col, jnp.asarray(v),
                                      spinfo=mat._info, transpose=bool(transpose))


def coo_matmat(mat: COO, B, *, transpose: bool = False):
    """mat @ B (mat.T @ B with `transpose`); the operands must have one dtype."""
    mat = _expect("coo_matmat", mat, COO)
    return coo_prim.coo_matmat_p.bind(mat.data, mat.row, mat.col, jnp.asarray(B),
                                      spinfo=mat._info, transpose=bool(transpose))


def csr_fromdense(mat, *, nse=None, index_dtype=np.int32) -> CSR:
    """The CSR form of a dense matrix, padded up to `nse` (needed under jit) with entries
    past indptr[-1]."""
    mat = _matrix(mat, "csr_fromdense")
    nse = _nse(mat, "csr_fromdense") if nse is None else operator.index(nse)
    bufs = csr_prim.csr_fromdense_p.bind(mat, nse=nse, index_dtype=np.dtype(index_dtype))
    return CSR(tuple(bufs), shape=get_aval(mat).shape)


def csr_todense(mat: CSR):
    """The dense form of a CSR matrix."""
    mat = _expect("csr_todense", mat, CSR)
    return csr_prim.csr_todense_p.bind(mat.data, mat.indices, mat.indptr, shape=mat.shape)


def csr_matvec(mat: CSR, v, transpose: bool = False):
    """mat @ v (mat.T @ v with `transpose`); the operands must have one dtype."""
    mat = _expect("csr_matvec", mat, CSR)
    return csr_prim.csr_matvec_p.bind(mat.data, mat.indices, mat.indptr, jnp.asarray(v),
                                      shape=mat.shape, transpose=bool(transpose))


def csr_matmat(mat: CSR, B, *, transpose: bool = False):
    """mat @ B (mat.T @ B with `transpose`); the operands must have one dtype."""
    mat = _expect("csr_matmat", mat, CSR)
    return csr_prim.csr_matmat_p.bind(mat.data, mat.indices, mat.indptr, jnp.asarray(B),
                                      shape=mat.shape, transpose=bool(transpose))
