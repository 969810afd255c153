"""Covariance and correlation matrices: cov and corrcoef.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy import products, reductions, ufuncs
from didax._src.numpy._helpers import _aval, _filled, _user_dtype
from didax._src.numpy.creation import full
from didax._src.numpy.diagonals import diagonal
from didax._src.numpy.joining import concatenate
from didax._src.numpy.shape_ops import atleast_2d, matrix_transpose, squeeze
from didax._src.numpy.util import asarray, check_arraylike, promote_dtypes_inexact

__all__ = ["cov", "corrcoef"]


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """Covariance matrix of the variables in the rows (or columns) of `m` (and `y`)."""
    if y is not None:
        check_arraylike("cov", m, y)
        m, y = promote_dtypes_inexact(asarray(m), asarray(y))
        if _aval(y).ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        check_arraylike("cov", m)
        (m,) = promote_dtypes_inexact(asarray(m))
    if _aval(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype}")
    X = atleast_2d(m)
    if not rowvar and _aval(m).ndim != 1:
        X = matrix_transpose(X)
    if _aval(X).shape[0] == 0:
        return _filled((0, 0), 0, dtypes.default_float_dtype())
    if y is not None:
        Y = atleast_2d(y)
        if not rowvar and _aval(Y).shape[0] != 1:
            Y = matrix_transpose(Y)
        X = concatenate((X, Y), axis=0)
    nvar, nobs = _aval(X).shape
    if nobs == 0:
        return full(() if nvar == 1 else (nvar, nvar), np.nan, dtype=_aval(X).dtype)
    if ddof is None:
        ddof = 1 if not bias else 0
    w = None
    if fweights is not None:
        fweights = asarray(fweights)
        if _aval(fweights).ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if _aval(fweights).shape[0] != nobs:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if dtypes.kind(_aval(fweights).dtype) not in "iu":
            raise TypeError("fweights must be integer.")
        w = ufuncs.abs(fweights)
    if aweights is not None:
        aweights = asarray(aweights)
        if _aval(aweights).ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if _aval(aweights).shape[0] != nobs:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aweights = ufuncs.abs(aweights)
        w = aweights if w is None else ufuncs.multiply(w, aweights)
    if dtype is not None:
        X = lax.convert_element_type(X, _user_dtype(dtype, "cov"))
        w = None if w is None else lax.convert_element_type(w, _user_dtype(dtype, "cov"))
    avg, w_sum = reductions.average(X, axis=1, weights=w, returned=True)
    w_sum = lax_shape.index_in_dim(w_sum, 0, 0, False)
    if w is None:
        f = nobs - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = ufuncs.subtract(w_sum, ddof)
    else:
        f = ufuncs.subtract(w_sum, ufuncs.true_divide(
            ufuncs.multiply(ddof, reductions.sum(ufuncs.multiply(w, aweights))), w_sum))
    X = ufuncs.subtract(X, lax_shape.expand_dims(avg, (1,)))
    Xw = X if w is None else ufuncs.multiply(X, lax_shape.broadcast_to_rank(w, 2))
    c = products.dot(X, ufuncs.conj(matrix_transpose(Xw)))
    return squeeze(ufuncs.true_divide(c, f))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients, clipped to [-1, 1]."""
    check_arraylike("corrcoef", x)
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got "
                         f"dtype={dtype}")
    c = cov(x, y, rowvar, dtype=dtype)
    if _aval(c).ndim == 0:
        return ufuncs.true_divide(c, c)
    d = diagonal(c)
    stddev = lax.convert_element_type(ufuncs.sqrt(ufuncs.real(d)), _aval(c).dtype)
    c = ufuncs.true_divide(ufuncs.true_divide(c, lax_shape.expand_dims(stddev, (1,))),
                           lax_shape.expand_dims(stddev, (0,)))
    real = ufuncs.clip(ufuncs.real(c), -1, 1)
    if dtypes.kind(_aval(c).dtype) == "c":
        return lax.complex(real, ufuncs.clip(ufuncs.imag(c), -1, 1))
    return real
