"""Counting: bincount and histograms (1-D, 2-D, N-D, and their bin edges), each a
searchsorted followed by a scatter-add.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.lax import indexing as lax_idx
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import (
    _asarray,
    _aval,
    _concrete_int,
    _const,
    _default_int,
    _filled,
    _range,
    _scatter1d,
    _to_inexact,
)
from didax._src.numpy.creation import linspace, ones_like
from didax._src.numpy.differences import diff
from didax._src.numpy.index_tricks import ix_, ravel_multi_index
from didax._src.numpy.joining import stack
from didax._src.numpy.searching import searchsorted
from didax._src.numpy.shape_ops import ravel, reshape, transpose
from didax._src.numpy.util import (
    asarray,
    check_arraylike,
    concrete_or_error,
    promote_dtypes_inexact,
)

__all__ = ["bincount", "histogram_bin_edges", "histogram", "histogramdd", "histogram2d"]


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each non-negative integer in `x`; traced `x` needs a
    static `length`."""
    check_arraylike("bincount", x)
    x = asarray(x)
    if _aval(x).dtype == np.bool_:
        x = lax.convert_element_type(x, np.int32)
    if not dtypes.issubdtype(_aval(x).dtype, np.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got "
                        f"{_aval(x).dtype}")
    if _aval(x).ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = _concrete_int(minlength, "the `minlength` argument of jnp.bincount")
    if length is None:
        v = np.asarray(concrete_or_error(x, "the values counted by jnp.bincount, which set the "
                                         "output length (pass a static `length=` to use it "
                                         "under transformations)"))
        length = max(minlength, v.size and int(max(0, v.max())) + 1)
    else:
        length = _concrete_int(length, "the `length` argument of jnp.bincount")
    if weights is None:
        weights = _filled(_aval(x).shape, 1, _default_int())
    else:
        weights = asarray(weights)
        if _aval(weights).shape != _aval(x).shape:
            raise ValueError(f"shape of weights must match shape of x. Got x.shape="
                             f"{_aval(x).shape} and weights.shape={_aval(weights).shape}")
    w = _aval(weights)
    return _scatter1d(lax_idx.scatter_add, _filled((length,), 0, w.dtype),
                      ufuncs.maximum(x, _const(x, 0)), weights)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    check_arraylike("histogram_bin_edges", a, bins)
    arr = asarray(a)
    dtype = _to_inexact(_aval(arr).dtype)
    if np.ndim(bins) == 1:
        return _asarray(bins, dtype)
    n_bins = _concrete_int(bins, "bins argument of histogram_bin_edges")
    if range is None:
        axes = tuple(_range(_aval(arr).ndim))
        range = [lax_red.reduce_min(arr, axes), lax_red.reduce_max(arr, axes)]
    range = _asarray(range, dtype)
    if _aval(range).shape != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    lo, hi = lax_shape.index_in_dim(range, 0, 0, False), lax_shape.index_in_dim(range, 1, 0,
                                                                                 False)
    same = lax.eq(lo, hi)
    lo = ufuncs.where(same, ufuncs.subtract(lo, 0.5), lo)
    hi = ufuncs.where(same, ufuncs.add(hi, 0.5), hi)
    return linspace(lo, hi, n_bins + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """Counts (or summed weights) of `a` in each bin, and the bin edges."""
    if weights is None:
        check_arraylike("histogram", a, bins)
        (a,) = promote_dtypes_inexact(asarray(a))
        weights = ones_like(a)
    else:
        check_arraylike("histogram", a, bins, weights)
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        a, weights = promote_dtypes_inexact(asarray(a), asarray(weights))
    edges = histogram_bin_edges(a, bins, range, weights)
    n = _aval(edges).shape[0]
    idx = searchsorted(edges, a, side="right")
    idx = ufuncs.where(ufuncs.equal(a, lax_shape.index_in_dim(edges, n - 1, 0, False)), n - 1,
                       idx)
    counts = _scatter1d(lax_idx.scatter_add, _filled((n,), 0, _aval(weights).dtype), ravel(idx),
                        ravel(weights))
    counts = lax_shape.slice_in_dim(counts, 1, n)
    if density:
        total = lax_red.reduce_sum(counts, (0,))
        counts = ufuncs.true_divide(ufuncs.true_divide(counts, diff(edges)), total)
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """Counts of the rows of the (N, D) `sample` in a D-dimensional grid of bins."""
    if weights is None:
        check_arraylike("histogramdd", sample)
        (sample,) = promote_dtypes_inexact(asarray(sample))
    else:
        check_arraylike("histogramdd", sample, weights)
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = promote_dtypes_inexact(asarray(sample), asarray(weights))
    n, d = _aval(sample).shape
    if range is not None and (len(range) != d or any(r is not None and np.shape(r)[0] != 2
                                                     for r in range)):
        raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or "
                         f"Nones; got range={range}")
    try:
        bins_per_dim = list(bins)
    except TypeError:
        bins_per_dim = d * [bins]
    else:
        if len(bins_per_dim) != d:
            raise ValueError("should be a bin for each dimension.")
    idx_by_dim, edges_by_dim = [], []
    for i in _range(d):
        col = lax_shape.index_in_dim(sample, i, 1, False)
        edges = histogram_bin_edges(col, bins_per_dim[i], None if range is None else range[i])
        m = _aval(edges).shape[0]
        idx = searchsorted(edges, col, side="right")
        last = lax_shape.index_in_dim(edges, m - 1, 0, False)
        idx = ufuncs.where(ufuncs.equal(col, last), ufuncs.subtract(idx, 1), idx)
        idx_by_dim.append(idx)
        edges_by_dim.append(edges)
    nbins = tuple(_aval(e).shape[0] + 1 for e in edges_by_dim)
    xy = ravel_multi_index(tuple(idx_by_dim), nbins, mode="clip")
    hist = reshape(bincount(xy, weights, length=math.prod(nbins)), nbins)
    for i in _range(d):
        hist = lax_shape.slice_in_dim(hist, 1, nbins[i] - 1, 1, i)
    if density:
        hist = lax.convert_element_type(hist, _aval(sample).dtype)
        hist = ufuncs.true_divide(hist, lax_red.reduce_sum(hist, tuple(_range(d))))
        for norm in ix_(*(diff(e) for e in edges_by_dim)):
            hist = ufuncs.true_divide(hist, norm)
    return hist, edges_by_dim


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    check_arraylike("histogram2d", x, y)
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb not in (1, 2):
        bins = [asarray(bins), asarray(bins)]
    sample = transpose(stack([asarray(x), asarray(y)]))
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]
