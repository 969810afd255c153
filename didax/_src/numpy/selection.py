"""Elementwise choice among several arrays or functions: select, choose, piecewise.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import _asarray, _aval, _iota, _take
from didax._src.numpy.joining import _as_array_list, stack
from didax._src.numpy.shape_ops import ravel
from didax._src.numpy.util import (
    asarray,
    broadcast_arrays,
    broadcast_to,
    check_arraylike,
    concrete_or_error,
    promote_dtypes,
)

__all__ = ["select", "choose", "piecewise"]


def select(condlist, choicelist, default=0):
    """choicelist[i] where condlist[i] is the first true condition, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist must have length equal to choicelist "
                         f"({len(condlist)} vs {len(choicelist)})")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    default, *choices = promote_dtypes(asarray(default), *(asarray(c) for c in choicelist))
    conds = [ufuncs._to_bool(c) for c in condlist]
    out = broadcast_arrays(default, *conds, *choices)[0]
    for cond, choice in zip(conds[::-1], choices[::-1]):
        out = ufuncs.where(cond, choice, out)
    return out


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] elementwise (after broadcasting `a` with every choice)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    choices = _as_array_list("choose", choices)
    check_arraylike("choose", a)
    a = asarray(a)
    if not dtypes.issubdtype(_aval(a).dtype, np.integer):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        v = np.asarray(concrete_or_error(a, "the indices checked by jnp.choose(mode='raise') "
                                         "(use mode='wrap' or mode='clip' under "
                                         "transformations)"))
        if np.any((v < 0) | (v >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = ufuncs.remainder(a, n)
    elif mode == "clip":
        a = ufuncs.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    choices = [lax.convert_element_type(c, _aval(c).dtype) for c in promote_dtypes(*choices)]
    a, *choices = broadcast_arrays(a, *choices)
    s = _aval(a).shape
    m = math.prod(s)
    stacked = ravel(stack(choices))
    flat_idx = ufuncs.add(ufuncs.multiply(ravel(a), m), _iota(_aval(a).dtype, (m,)))
    return lax_shape.reshape(_take(stacked, flat_idx), s)


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i](x) (or the constant funclist[i]) where condlist[i] holds; later conditions
    win, and an extra last function is the default. Each function is applied to all of x."""
    check_arraylike("piecewise", x)
    x = asarray(x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = list(funclist[-1:]) + list(funclist[:-1])
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    dtype = _aval(x).dtype

    def value(f):
        if callable(f):
            return lax.convert_element_type(asarray(f(x, *args, **kw)), dtype)
        return _asarray(f, dtype)

    conds = asarray(condlist, bool)
    out = broadcast_to(value(funclist[0]), _aval(x).shape)
    for i, f in enumerate(funclist[1:]):
        cond = lax_shape.index_in_dim(conds, i, 0, False)
        out = ufuncs.where(cond, value(f), out)
    return out
