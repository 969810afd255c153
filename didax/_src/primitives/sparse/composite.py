"""Rules of sparse primitives whose computation is a function of other primitives (a
"decomposition", which the library declaring the primitive passes in): the impl evaluates
it on concrete operands, the type is its staged type, and the transpose for a linear
operand is the decomposition's transpose. The primitive keeps its name in jaxprs (as JAX's
do), while the arithmetic, its derivatives and its batching come from the primitives the
decomposition uses.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.core import Zero
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.interpreters.transpose import is_undefined, linear_transpose_flat


def evaluate(fn, args, params, multiple_results: bool):
    """The impl: `fn(*args, **params)` on NumPy operands, as NumPy results (evaluated
    eagerly whatever interpreter is current)."""
    with core.interpreter_context(core.eval_interpreter):
        out = fn(*(core.asarray_value(a) for a in args), **params)
    if multiple_results:
        return [np.asarray(x) for x in out]
    return np.asarray(out)


def out_types(fn, avals, params, multiple_results: bool):
    """The abstract eval: the types of `fn`'s results for operands of types `avals`."""
    def flat(*args):
        out = fn(*args, **params)
        return list(out) if multiple_results else [out]

    with core.interpreter_context(core.eval_interpreter):
        closed, _ = trace_to_jaxpr(flat, list(avals))
    outs = list(closed.jaxpr.out_avals)
    return outs if multiple_results else outs[0]


def transpose_rule(name: str, fn, linear: tuple, multiple_results: bool, what: str):
    """The transpose rule of the primitive `name` computing `fn`, linear in each operand
    whose position is in `linear`, one at a time (`what` says so in the error for any other
    choice of undefined operands). It transposes `fn`'s first result only: the others
    (indices) are integers."""
    def rule(ct, *args, **params):
        undefined = [k for k, x in enumerate(args) if is_undefined(x)]
        if len(undefined) != 1 or undefined[0] not in linear:
            raise NotImplementedError(f"transpose of {name}: {what}")
        (k,) = undefined
        out = [None] * len(args)
        out[k] = _transpose(fn, ct[0] if multiple_results else ct, args, params, k,
                            multiple_results)
        return out

    return rule


def _transpose(fn, ct, args, params, k: int, multiple_results: bool):
    """The cotangent of operand `k` (undefined in `args`; `fn` is linear in it) given the
    cotangent `ct` of `fn`'s (first) result."""
    aval = args[k].aval
    if type(ct) is Zero:
        return Zero(aval)

    def f(x):
        full = list(args)
        full[k] = x
        out = fn(*full, **params)
        return [out[0] if multiple_results else out]

    _, transposed = linear_transpose_flat(f, [aval])
    (out,) = transposed([ct])
    return out
