"""1-D convolve and correlate, written as a sum of shifted copies of the signal.
"""
from __future__ import annotations

import numpy as np

from didax._src.lax import elementwise as lax
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import _aval, _const, _user_dtype
from didax._src.numpy.util import asarray, check_arraylike, promote_dtypes, promote_dtypes_inexact

__all__ = ["convolve", "correlate"]


def _conv(x, y, mode, op, precision, preferred_element_type):
    """1-D convolution/correlation as a sum of shifted copies, built with one reshape.

    For a (padded) signal of length L and a kernel of length m, broadcasting the signal to
    (m, L), flattening, padding by m and viewing it as (m, L + 1) shifts row r by r: row
    r holds x[r:r + L + 1], so out[i] = sum_r y[r] * rows[r, i].
    """
    if np.ndim(x) != 1 or np.ndim(y) != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        x, y = promote_dtypes_inexact(x, y)
    else:
        x, y = promote_dtypes(x, y)
    if _aval(x).shape[0] == 0 or _aval(y).shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {_aval(x).shape} and "
                         f"{_aval(y).shape}.")
    reverse_out = False
    if op == "correlate":
        y = ufuncs.conj(y)
        if _aval(x).shape[0] < _aval(y).shape[0]:
            x, y, reverse_out = y, x, True
    else:
        if _aval(x).shape[0] < _aval(y).shape[0]:
            x, y = y, x
        y = lax_shape.rev(y, (0,))
    m = _aval(y).shape[0]
    if mode == "valid":
        lo, hi = 0, 0
    elif mode == "same":
        lo, hi = m // 2, m - m // 2 - 1
    elif mode == "full":
        lo, hi = m - 1, m - 1
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if preferred_element_type is not None:
        dt = _user_dtype(preferred_element_type, op)
        x, y = lax.convert_element_type(x, dt), lax.convert_element_type(y, dt)
    x = lax_shape.pad(x, _const(x, 0), [(lo, hi, 0)])
    length = _aval(x).shape[0]
    n_out = length - m + 1
    rows = lax_shape.reshape(lax_shape.broadcast_in_dim(x, (m, length), (1,)), (m * length,))
    rows = lax_shape.pad(rows, _const(rows, 0), [(0, m, 0)])
    rows = lax_shape.slice(lax_shape.reshape(rows, (m, length + 1)), (0, 0), (m, n_out))
    out = lax_red.reduce_sum(lax.mul(rows, lax_shape.broadcast_in_dim(y, (m, n_out), (0,))),
                             (0,))
    return lax_shape.rev(out, (0,)) if reverse_out else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    check_arraylike("convolve", a, v)
    return _conv(asarray(a), asarray(v), mode, "convolve", precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    check_arraylike("correlate", a, v)
    return _conv(asarray(a), asarray(v), mode, "correlate", precision, preferred_element_type)
