"""Declaring elementwise primitives: `unop`/`naryop` make one in one line, with its NumPy
impl, abstract eval, batching rule (elementwise: the batch dimension stays put, or operands
are broadcast against each other) and, when the impl is a NumPy ufunc, its codegen rule;
the family module then adds the JVP rule beside it.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.compiler.codegen import codegen_rule, ufunc_rule
from didax._src.core import ShapedArray
from didax._src.interpreters import batching, sharding
from didax._src.typecheck import check_dtype, dtype_in, naryop_aval


def _def_ufunc_codegen(p, impl):
    """jit compiles a primitive computed by a ufunc to a call of it (or an operator)."""
    if isinstance(impl, np.ufunc):
        codegen_rule(p, fresh=True)(ufunc_rule(impl))


def unop(name: str, accepted, impl, out_dtype=None) -> core.Primitive:
    """An elementwise one-argument primitive; `out_dtype(dtype)` if the dtype changes."""
    p = core.primitive(name)
    p.def_impl(impl)
    accepts = {}  # dtype -> bool, this primitive's share of `dtype_in`'s cache

    def abstract_eval(x, **params):
        ok = accepts.get(x.dtype)
        if ok is None:
            ok = accepts[x.dtype] = dtype_in(x.dtype, accepted)
        if not ok:
            check_dtype(name, x, accepted)
        if out_dtype is None:
            return x  # avals are immutable
        return ShapedArray(x.shape, np.dtype(out_dtype(x.dtype)), x.weak_type)

    p.def_abstract_eval(abstract_eval)
    batching.defvectorized(p)
    p.def_rule("sharding", sharding.elementwise)
    _def_ufunc_codegen(p, impl)
    return p


def naryop(name: str, accepted, impl, out_dtype=None) -> core.Primitive:
    """An elementwise primitive of several same-dtype arguments, broadcasting as lax does."""
    p = core.primitive(name)
    p.def_impl(impl)
    accepts = {}  # dtype -> bool, this primitive's share of `dtype_in`'s cache

    def abstract_eval(*avals):
        if len(avals) == 2 and out_dtype is None:
            # Two operands of one type: `naryop_aval` would return the first unchanged.
            x, y = avals
            if x.shape == y.shape and x.dtype == y.dtype and (y.weak_type or not x.weak_type):
                ok = accepts.get(x.dtype)
                if ok is None:
                    ok = accepts[x.dtype] = dtype_in(x.dtype, accepted)
                if ok:
                    return x
        return naryop_aval(name, avals, accepted, out_dtype)

    p.def_abstract_eval(abstract_eval)
    batching.defbroadcasting(p)
    p.def_rule("sharding", sharding.elementwise)
    _def_ufunc_codegen(p, impl)
    return p


def binop(name: str, accepted, impl, out_dtype=None) -> core.Primitive:
    return naryop(name, accepted, impl, out_dtype)
