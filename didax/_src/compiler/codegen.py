"""What `codegen` rules are written with; the rules themselves sit beside their primitives.

A rule `rule(fb, k, eqn, outs)` writes the statement(s) for equation `k` through the
function builder `fb` (see compiler.py), assigning the names in `outs`. A rule marked `fresh`
promises its outputs are new buffers that alias nothing else (so later statements may write
into them once they are dead); all others are treated as possible views of their inputs.
Each rule computes exactly what the primitive's impl computes (the tests compare jit with
eager evaluation for every primitive); anything without a rule calls the impl.

This module knows no primitive (so declaring one may import it).
"""
from __future__ import annotations

import functools

import numpy as np

from didax._src import dtypes


def _always(eqn) -> bool:
    return True


def codegen_rule(prim, *, when=None, fresh=False):
    """Registers the decorated function as `prim`'s codegen rule. Equations `when` rejects
    call the impl instead. `fresh`: the rule's own statements make new buffers (an impl's
    results may alias its operands, so a fallback never is)."""
    def register(fn):
        def rule(fb, k, eqn, outs):
            if when is None or when(eqn):
                return fn(fb, k, eqn, outs)
            return emit_impl_call(fb, k, eqn, outs)

        if fresh:
            rule.fresh = when or _always
        prim.def_rule("codegen", rule)
        return fn
    return register


def emit_impl_call(fb, k: int, eqn, outs):
    """The default statement: the primitive's NumPy impl with its parameters bound."""
    prim = eqn.primitive
    impl = prim.get_rule("impl")
    fn = functools.partial(impl, **eqn.params) if eqn.params else impl
    name = fb.module.global_name(fn, prim.name)
    args = ", ".join(fb.array(a) for a in eqn.invars)
    if prim.multiple_results and not outs:
        fb.line(f"{name}({args})")
    elif prim.multiple_results:
        fixed = fb.module.global_name(_fix_many([v.aval.dtype for v in eqn.outvars]),
                                      "as_dtypes")
        lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
        fb.line(f"{lhs} = {fixed}({name}({args}))")
    else:
        dtype = fb.module.global_name(eqn.outvars[0].aval.dtype, eqn.outvars[0].aval.dtype.name)
        fb.line(f"{outs[0]} = _as_dtype({name}({args}), {dtype})")


def as_dtype(x, dtype):
    """`x` as an array of `dtype` (generated code reads it as the global `_as_dtype`)."""
    if type(x) is np.ndarray and x.dtype == dtype:
        return x
    return np.asarray(x, dtype)


def _fix_many(dtypes_):
    def fix(outs):
        return tuple(as_dtype(o, d) for o, d in zip(outs, dtypes_))
    return fix


def np_name(fb, fn) -> str:
    """How the source names `fn`: `np.<name>` for NumPy's own functions, else a global."""
    name = getattr(fn, "__name__", None)
    if name and getattr(np, name, None) is fn:
        return f"np.{name}"
    return fb.module.global_name(fn, name or "fn")


# --------------------------------------------------------------------------------------
# Elementwise primitives computed by a NumPy ufunc


# On 0-d values (NumPy scalars) Python's operators cost a tenth of a ufunc call and
# compute the same thing in the same dtype.
_OPERATORS = {np.add: "{} + {}", np.subtract: "{} - {}", np.multiply: "{} * {}",
              np.negative: "-{}", np.less: "{} < {}", np.less_equal: "{} <= {}",
              np.greater: "{} > {}", np.greater_equal: "{} >= {}", np.equal: "{} == {}",
              np.not_equal: "{} != {}"}
_FLOAT_OPERATORS = {np.true_divide: "{} / {}"}


def ufunc_rule(ufunc):
    """The codegen rule of a primitive computing `ufunc` (its results are fresh buffers):
    an operator on 0-d values, else a call writing `out=` into a dead buffer if there is one."""
    def rule(fb, k, eqn, outs):
        out_aval = eqn.outvars[0].aval
        if out_aval.shape == () and all(a.aval.shape == () for a in eqn.invars):
            form = _OPERATORS.get(ufunc) or (dtypes.kind(eqn.invars[0].aval.dtype) in "fc"
                                             and _FLOAT_OPERATORS.get(ufunc))
            if form:
                fb.line(f"{outs[0]} = " + form.format(*(fb.name(a) for a in eqn.invars)))
                return
        args = ", ".join(fb.name(a) for a in eqn.invars)
        buf = fb.out_buffer(k, eqn, eqn.outvars[0].aval)
        out = f", out={buf}" if buf else ""
        fb.line(f"{outs[0]} = {np_name(fb, ufunc)}({args}{out})")
    return rule


# --------------------------------------------------------------------------------------
# Source text


def tuple_text(names) -> str:
    """`names` as the items of a tuple (`a,` for one)."""
    return ", ".join(names) + ("," if len(names) == 1 else "")


def index_text(parts) -> str:
    """`parts` (one range per dimension) as an index, trailing full ranges left out."""
    parts = list(parts)
    while parts and parts[-1] == ":":
        parts.pop()
    return ", ".join(parts) or ":"


def range_text(lo, hi, size, step=1) -> str:
    """`lo:hi:step` of a dimension of `size`, as short as it can be written."""
    if step == 1:
        if lo == 0 and hi == size:
            return ":"
        return f"{lo if lo else ''}:{hi if hi != size else ''}"
    return f"{lo}:{hi}:{step}"
