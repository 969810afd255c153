"""The special matrices of didax.scipy.linalg (SciPy's constructors), built from their
defining formulas with didax.numpy, so those made from arrays differentiate and batch.
Those of a size alone (Hilbert, Pascal, ...) are exact NumPy constants in the default
dtype."""
from __future__ import annotations

import math
import operator

import numpy as np

from didax._src import dtypes
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import check_arraylike, promote_dtypes, promote_dtypes_inexact

__all__ = ["block_diag", "circulant", "companion", "convolution_matrix", "dft", "fiedler",
           "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "invhilbert",
           "invpascal", "leslie", "pascal", "toeplitz"]


def _size(name, n):
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"{name}: n must be nonnegative, got {n}")
    return n


def _float(x):
    return jnp.asarray(x, dtypes.default_float_dtype())


def block_diag(*arrs):
    """The arrays (each made at least 2-d) down the diagonal, zeros elsewhere."""
    if not arrs:
        return jnp.zeros((1, 0), dtypes.default_float_dtype())
    check_arraylike("block_diag", *arrs)
    arrs = promote_dtypes(*(jnp.atleast_2d(jnp.asarray(a)) for a in arrs))
    for a in arrs:
        if a.ndim != 2:
            raise ValueError(f"block_diag: arguments must have two or fewer dimensions, got "
                             f"shape {a.shape}")
    width = sum(a.shape[1] for a in arrs)
    rows, col = [], 0
    for a in arrs:
        rows.append(jnp.pad(a, [(0, 0), (col, width - col - a.shape[1])]))
        col += a.shape[1]
    return jnp.concatenate(rows, axis=0)


def circulant(c):
    """C[..., i, j] = c[..., (i - j) mod n]: c is the first column."""
    check_arraylike("circulant", c)
    c = jnp.atleast_1d(jnp.asarray(c))
    n = c.shape[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def companion(a):
    """The companion matrix of the polynomial a[0] x^(n-1) + ... + a[n-1]: first row
    -a[1:] / a[0], ones below the diagonal."""
    check_arraylike("companion", a)
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    if a.ndim < 1 or a.shape[-1] < 2:
        raise ValueError(f"companion: a must have at least two coefficients, got shape "
                         f"{a.shape}")
    n = a.shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    below = jnp.broadcast_to(jnp.eye(n - 1, n, dtype=a.dtype), a.shape[:-1] + (n - 1, n))
    return jnp.concatenate([first[..., None, :], below], axis=-2)


def convolution_matrix(a, n, mode="full"):
    """The matrix A with A @ v == np.convolve(a, v, mode) for every v of length n."""
    check_arraylike("convolution_matrix", a)
    a = jnp.asarray(a)
    n = operator.index(n)
    if a.ndim != 1 or a.shape[0] == 0:
        raise ValueError(f"convolution_matrix: a must be a non-empty 1-d array, got shape "
                         f"{a.shape}")
    if n <= 0:
        raise ValueError(f"convolution_matrix: n must be positive, got {n}")
    m = a.shape[0]
    if mode == "full":
        start, rows = 0, n + m - 1
    elif mode == "same":
        rows = max(n, m)
        start = (n + m - 1 - rows) // 2
    elif mode == "valid":
        start, rows = min(n, m) - 1, max(n, m) - min(n, m) + 1
    else:
        raise ValueError(f"convolution_matrix: mode must be 'full', 'same' or 'valid', got "
                         f"{mode!r}")
    lag = np.arange(start, start + rows)[:, None] - np.arange(n)[None, :]
    padded = jnp.concatenate([a, jnp.zeros((1,), a.dtype)])
    return padded[np.where((lag >= 0) & (lag < m), lag, m)]


def dft(n, scale=None, *, dtype=None):
    """The n-point DFT matrix, exp(-2 pi i j k / n), scaled by 1, 1/sqrt(n) ('sqrtn') or
    1/n ('n')."""
    n = _size("dft", n)
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"dft: scale must be None, 'sqrtn' or 'n', got {scale!r}")
    jk = np.outer(np.arange(n), np.arange(n)) % max(n, 1)
    m = np.exp(-2j * np.pi * jk / max(n, 1))
    if scale == "sqrtn":
        m = m / math.sqrt(n)
    elif scale == "n":
        m = m / n
    return jnp.asarray(m, dtype or dtypes.canonicalize_dtype(np.complex128))


def fiedler(a):
    """F[i, j] = |a[i] - a[j]|."""
    check_arraylike("fiedler", a)
    a = jnp.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"fiedler: a must be 1-d, got shape {a.shape}")
    return jnp.abs(a[:, None] - a[None, :])


def fiedler_companion(a):
    """Fiedler's pentadiagonal companion matrix of the polynomial with coefficients a
    (highest degree first): its eigenvalues are the polynomial's roots."""
    check_arraylike("fiedler_companion", a)
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    if a.ndim != 1 or a.shape[0] < 2:
        raise ValueError(f"fiedler_companion: a must be 1-d with at least two coefficients, "
                         f"got shape {a.shape}")
    c = a / a[0]
    m = a.shape[0] - 1
    rows, cols, ks = [0], [0], [1]  # F[0, 0] = -c1
    for k in range(2, m + 1):  # -c_k alternately right of and below the last one
        rows.append(k - 2 if k % 2 == 0 else k - 1)
        cols.append(k - 1 if k % 2 == 0 else k - 2)
        ks.append(k)
    ones = np.zeros((m, m))
    if m >= 2:
        ones[1, 0] = 1
    for i in range(m - 2):
        if i % 2 == 0:
            ones[i, i + 2] = 1
        else:
            ones[i + 2, i] = 1
    out = jnp.zeros((m, m), a.dtype).at[np.array(rows), np.array(cols)].set(-c[np.array(ks)])
    return out + jnp.asarray(ones, a.dtype)


def hadamard(n, dtype=int):
    """Sylvester's Hadamard matrix of order n, a power of 2."""
    n = _size("hadamard", n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"hadamard: n must be a positive power of 2, got {n}")
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtypes.canonicalize_dtype(dtype))


def hankel(c, r=None):
    """H[i, j] = c[i + j] while that is in c, then r[i + j - len(c) + 1]; c the first
    column, r the last row (its first entry is ignored; zeros by default)."""
    check_arraylike("hankel", c)
    c = jnp.ravel(jnp.asarray(c))
    r = jnp.zeros_like(c) if r is None else jnp.ravel(jnp.asarray(r))
    c, r = promote_dtypes(c, r)
    m, n = c.shape[0], r.shape[0]
    values = jnp.concatenate([c, r[1:]])
    return values[np.arange(m)[:, None] + np.arange(n)[None, :]]


def helmert(n, full=False):
    """The Helmert matrix of order n: orthonormal rows, the first the constant
    1/sqrt(n) (dropped unless `full`), row k (1 <= k < n) k ones then -k, over
    sqrt(k (k + 1))."""
    n = _size("helmert", n)
    h = np.zeros((n, n))
    if n:
        h[0] = 1 / math.sqrt(n)
    for k in range(1, n):
        h[k, :k] = 1
        h[k, k] = -k
        h[k] /= math.sqrt(k * (k + 1))
    return _float(h if full else h[1:])


def hilbert(n):
    """H[i, j] = 1 / (i + j + 1)."""
    n = _size("hilbert", n)
    i = np.arange(n)
    return _float(1.0 / (i[:, None] + i[None, :] + 1))


def invhilbert(n):
    """The inverse of the Hilbert matrix, from its closed form in binomial coefficients."""
    n = _size("invhilbert", n)
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = ((-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
                         * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2)
    return _float(out)


def _pascal_lower(n):
    return np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=object)


def pascal(n, kind=None):
    """The Pascal matrix: binomial coefficients C(i + j, i) ('symmetric', the default),
    C(i, j) ('lower') or its transpose ('upper')."""
    n = _size("pascal", n)
    lower = _pascal_lower(n)
    return _pascal_kind("pascal", kind, n, lower, lambda: lower.dot(lower.T))


def invpascal(n, kind=None):
    """The inverse of `pascal(n, kind)`, exact: the lower factor's inverse is
    (-1)^(i + j) C(i, j)."""
    n = _size("invpascal", n)
    sign = np.array([[(-1) ** (i + j) for j in range(n)] for i in range(n)], dtype=object)
    inv_lower = (_pascal_lower(n) * sign) if n else np.zeros((0, 0), dtype=object)
    return _pascal_kind("invpascal", kind, n, inv_lower, lambda: inv_lower.T.dot(inv_lower))


def _pascal_kind(name, kind, n, lower, symmetric):
    """The `kind` of a Pascal-type matrix from its exact lower factor (object integers);
    `symmetric()` computes the symmetric one."""
    if kind in (None, "symmetric"):
        out = symmetric()
    elif kind == "lower":
        out = lower
    elif kind == "upper":
        out = lower.T
    else:
        raise ValueError(f"{name}: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    return _float(np.asarray(out, dtype=np.float64).reshape(n, n))


def leslie(f, s):
    """The Leslie matrix: fecundities f in the first row, survival rates s below the
    diagonal."""
    check_arraylike("leslie", f, s)
    f, s = promote_dtypes_inexact(jnp.asarray(f), jnp.asarray(s))
    if f.ndim != 1 or s.ndim != 1 or f.shape[0] != s.shape[0] + 1 or f.shape[0] < 1:
        raise ValueError(f"leslie: f and s must be 1-d with len(s) == len(f) - 1 >= 0, got "
                         f"shapes {f.shape} and {s.shape}")
    n = f.shape[0]
    below = jnp.concatenate([jnp.diag(s), jnp.zeros((n - 1, 1), s.dtype)], axis=1)
    return jnp.concatenate([f[None, :], below], axis=0)


def toeplitz(c, r=None):
    """T[..., i, j] = c[..., i - j] on and below the diagonal, r[..., j - i] above it; c
    the first column, r the first row (conj(c) by default; its first entry is ignored)."""
    check_arraylike("toeplitz", c)
    c = jnp.atleast_1d(jnp.asarray(c))
    r = jnp.conj(c) if r is None else jnp.atleast_1d(jnp.asarray(r))
    c, r = promote_dtypes(c, r)
    batch = np.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c = jnp.broadcast_to(c, batch + c.shape[-1:])
    r = jnp.broadcast_to(r, batch + r.shape[-1:])
    m, n = c.shape[-1], r.shape[-1]
    values = jnp.concatenate([jnp.flip(r[..., 1:], -1), c], axis=-1)  # r reversed, then c
    return values[..., (n - 1) + np.arange(m)[:, None] - np.arange(n)[None, :]]
