"""Polynomials as coefficient vectors (highest power first): evaluation (Horner's rule), the
Vandermonde matrix, arithmetic (products are convolutions, division is long division),
derivatives and integrals, construction from roots and least-squares fits (`linalg.lstsq`);
`roots` are the eigenvalues of the companion matrix, and `poly` of a square matrix starts from
its eigenvalues.
"""
from __future__ import annotations

import operator

import numpy as np

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy import creation, linalg, reductions, ufuncs
from didax._src.numpy._helpers import _aval, _concrete_int, _const, _filled, _iota, _range
from didax._src.numpy.convolution import convolve
from didax._src.numpy.editing import trim_zeros
from didax._src.numpy.joining import concatenate
from didax._src.numpy.shape_ops import atleast_1d
from didax._src.numpy.util import (
    asarray,
    broadcast_arrays,
    check_arraylike,
    concrete_or_error,
    promote_dtypes,
    promote_dtypes_inexact,
)

__all__ = ["polyval", "vander", "poly", "roots", "polyadd", "polysub", "polymul", "polydiv",
           "polyder", "polyint", "polyfit"]


def polyval(p, x, *, unroll=16):
    """p[0] * x**(n-1) + ... + p[n-1] by Horner's rule."""
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(asarray(p), asarray(x))
    shape = np.broadcast_shapes(_aval(p).shape[1:], _aval(x).shape)
    y = _filled(shape, 0, _aval(x).dtype, _aval(x).weak_type)
    for i in _range(_aval(p).shape[0]):
        y = ufuncs.add(ufuncs.multiply(y, x), lax_shape.index_in_dim(p, i, 0, False))
    return y


def vander(x, N=None, increasing=False):
    """Columns are powers of the 1-D `x` (decreasing powers unless `increasing`)."""
    check_arraylike("vander", x)
    x = asarray(x)
    if _aval(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = _aval(x).shape[0] if N is None else _concrete_int(N, "'N' argument of jnp.vander()")
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = _iota(_aval(x).dtype, (n,))
    if not increasing:
        powers = lax.sub(_const(powers, n - 1), powers)
    base, exponent = broadcast_arrays(lax_shape.expand_dims(x, (1,)),
                                      lax_shape.expand_dims(powers, (0,)))
    return ufuncs.power(base, exponent)


def poly(seq_of_zeros):
    """The monic polynomial with the given roots (a product of linear factors)."""
    check_arraylike("poly", seq_of_zeros)
    (zeros_,) = promote_dtypes_inexact(asarray(seq_of_zeros))
    zeros_ = atleast_1d(zeros_)
    sh = zeros_.shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:  # the characteristic polynomial
        zeros_ = linalg.eigvals(zeros_)
        sh = zeros_.shape
    if zeros_.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = zeros_.dtype
    if sh[0] == 0:
        return creation.ones((), dtype=dt)
    a = creation.ones((1,), dtype=dt)
    one = creation.ones((1,), dtype=dt)
    for k in _range(sh[0]):
        a = convolve(a, concatenate([one, ufuncs.negative(zeros_[k:k + 1])]), mode="full")
    return a


def roots(p, *, strip_zeros: bool = True):
    """The (complex) roots of the polynomial with coefficients `p`: the eigenvalues of its
    companion matrix. `strip_zeros` drops leading zero coefficients, which needs concrete
    values (not under jit); without it a leading zero gives NaN roots."""
    check_arraylike("roots", p)
    (p,) = promote_dtypes_inexact(atleast_1d(asarray(p)))
    if p.ndim != 1:
        raise ValueError(f"Input argument p to roots must be rank 1, got shape {p.shape}.")
    if strip_zeros:
        values = concrete_or_error(p, "jnp.roots with strip_zeros=True (it drops leading zero "
                                      "coefficients, which fixes the output shape); pass "
                                      "strip_zeros=False under jit")
        nonzero = np.flatnonzero(values)
        p = p[int(nonzero[0]):] if nonzero.size else p[:0]
    n = p.shape[0]
    cdtype = dtypes.result_type(p.dtype, np.complex64)
    if n < 2:
        return creation.zeros((0,), cdtype)
    first = ufuncs.negative(ufuncs.divide(p[1:], p[0]))
    companion = concatenate([first[None, :], creation.eye(n - 2, n - 1, dtype=p.dtype)])
    return linalg.eigvals(companion)


def polyadd(a1, a2):
    """The sum of two coefficient vectors, aligned at their constant terms."""
    check_arraylike("polyadd", a1, a2)
    a1, a2 = promote_dtypes(asarray(a1), asarray(a2))
    if a2.shape[0] <= a1.shape[0]:
        return a1.at[-a2.shape[0]:].add(a2)
    return a2.at[-a1.shape[0]:].add(a1)


def polysub(a1, a2):
    """a1 - a2, aligned at their constant terms."""
    check_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(asarray(a1), asarray(a2))
    return polyadd(a1, ufuncs.negative(a2))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product (a full convolution); leading zeros are trimmed (concretely) on request."""
    check_arraylike("polymul", a1, a2)
    a1, a2 = promote_dtypes_inexact(asarray(a1), asarray(a2))
    if trim_leading_zeros and (len(a1) > 1 or len(a2) > 1):
        a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
    if len(a1) == 0:
        a1 = creation.zeros(1, dtype=a2.dtype)
    if len(a2) == 0:
        a2 = creation.zeros(1, dtype=a1.dtype)
    return convolve(a1, a2, mode="full")


def _trim_zeros_tol(filt, tol, trim="fb"):
    value = np.asarray(concrete_or_error(filt, "the `filt` argument of trim_zeros_tol()"))
    nz = np.abs(value) < tol
    if nz.all():
        return creation.empty(0, filt.dtype)
    start = int(np.argmin(nz)) if "f" in trim.lower() else 0
    end = int(np.argmin(nz[::-1])) if "b" in trim.lower() else 0
    return filt[start:len(filt) - end]


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of long division. The remainder keeps u's length (its leading
    entries are zeros, up to rounding) unless `trim_leading_zeros`, which needs concrete
    values."""
    check_arraylike("polydiv", u, v)
    u, v = promote_dtypes_inexact(asarray(u), asarray(v))
    m, n = len(u) - 1, len(v) - 1
    scale = ufuncs.divide(1., v[0])
    q = creation.zeros(max(m - n + 1, 1), dtype=u.dtype)
    for k in _range(m - n + 1):
        d = ufuncs.multiply(scale, u[k])
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(ufuncs.negative(ufuncs.multiply(d, v)))
    if trim_leading_zeros:
        u = _trim_zeros_tol(u, tol=np.sqrt(dtypes.finfo(u.dtype).eps), trim="f")
    return q, u


def polyder(p, m=1):
    """The m-th derivative's coefficients."""
    check_arraylike("polyder", p)
    m = concrete_or_error(m, "'m' argument of jnp.polyder")
    m = operator.index(m)
    (p,) = promote_dtypes_inexact(asarray(p))
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = len(p)
    coeff = np.prod(np.arange(m, n)[None] - np.arange(m)[:, None], axis=0)[::-1]
    return ufuncs.multiply(p[:-m], np.asarray(coeff, p.dtype))


def polyint(p, m=1, k=None):
    """The m-th antiderivative's coefficients, with integration constants `k` (a scalar or
    one per integration, the first integration's last)."""
    m = operator.index(concrete_or_error(m, "'m' argument of jnp.polyint"))
    k = 0 if k is None else k
    check_arraylike("polyint", p, k)
    p, k = promote_dtypes_inexact(asarray(p), asarray(k))
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = atleast_1d(k)
    if len(k) == 1:
        k = lax_shape.broadcast_in_dim(k, (m,), (0,)) if m != 1 else k
    if k.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    grid = np.arange(len(p) + m)[None] - np.arange(m)[:, None]
    coeff = np.prod(np.maximum(1, grid), axis=0)[::-1]
    return ufuncs.true_divide(concatenate((p, k)), np.asarray(coeff, p.dtype))


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree `deg` through (x, y) (y may hold columns), with
    optional weights; `full` adds lstsq's diagnostics, `cov` the coefficients' covariance."""
    if w is None:
        check_arraylike("polyfit", x, y)
        x, y = asarray(x), asarray(y)
    else:
        check_arraylike("polyfit", x, y, w)
        x, y, w = asarray(x), asarray(y), asarray(w)
    deg = int(concrete_or_error(deg, "deg must be int"))
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x) * float(dtypes.finfo(x.dtype).eps)
    rcond = float(concrete_or_error(rcond, "rcond must be float"))
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        (w,) = promote_dtypes_inexact(w)
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = ufuncs.multiply(lhs, w[:, None])
        rhs = ufuncs.multiply(rhs, w[:, None] if rhs.ndim == 2 else w)
    scale = ufuncs.sqrt(reductions.sum(ufuncs.multiply(lhs, lhs), axis=0))
    lhs = ufuncs.divide(lhs, scale[None, :])
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = ufuncs.divide(c, scale[:, None] if c.ndim > 1 else scale)
    if full:
        return c, resids, rank, s, asarray(rcond)
    if cov:
        vbase = linalg.inv(linalg.matmul(lhs.T, lhs))
        vbase = ufuncs.divide(vbase, linalg.outer(scale, scale))
        if cov == "unscaled":
            fac = asarray(1.0)
        else:
            if len(x) <= order:
                raise ValueError("the number of data points must exceed order to scale the "
                                 "covariance matrix")
            fac = ufuncs.divide(resids, len(x) - order)
        if y.ndim == 1:
            return c, ufuncs.multiply(vbase, atleast_1d(fac)[None])
        return c, ufuncs.multiply(vbase[:, :, None], atleast_1d(fac)[None, None, :])
    return c
