"""Values into traces and out of the dead-code eliminator's reach: `stage` (and its
primitive `stage_p`), `dce_sink`, `shape_as_value`."""
from __future__ import annotations

import operator

import numpy as np

from didax._src import core
from didax._src.core import Tracer, asarray_value, get_aval
from didax._src.interpreters.batching import defvectorized
from didax._src.interpreters.jvp import deflinear
from didax._src.interpreters.transpose import deflinear_transpose
from didax._src.tree_util import tree_leaves


class _StagePrimitive(core.Primitive):
    """`stage_p`, as JAX 0.10.2's: the identity on one operand, without params. Bound on a
    traced value it returns that value (no trace stages an equation for it: a value already
    in a trace is in it); bound on a Python scalar or NumPy array, it evaluates to a didax
    Array of that value (a Python scalar's weak type kept), which a trace then holds as a
    constant. Its rules are those of the identity (jvp and transpose: itself; batching: the
    batch dimension unchanged), run only where an equation of it is evaluated under a
    transformation (a jaxpr built by hand)."""

    def bind(self, *args, **params):
        if len(args) == 1 and not params and isinstance(args[0], Tracer):
            return args[0]
        if not any(isinstance(a, Tracer) for a in args):  # (a value, whatever is current)
            with core.interpreter_context(core.eval_interpreter):
                return super().bind(*args, **params)
        return super().bind(*args, **params)


stage_p = _StagePrimitive("stage")
assert "stage" not in core.all_primitives
core.all_primitives["stage"] = stage_p
stage_p.def_impl(lambda x: x)
stage_p.def_abstract_eval(lambda x: x)
stage_p.def_traits(returns_operand=lambda eqn: 0)
deflinear(stage_p)
deflinear_transpose(stage_p, lambda ct, aval: stage_p.bind(ct))
defvectorized(stage_p)


def stage(x, /):
    """`x` as a didax value (`stage_p`): a tracer stays as it is; a Python scalar or NumPy
    array becomes a didax Array (with its weak type), which any trace it meets treats as a
    constant."""
    if isinstance(x, Tracer):
        return x
    try:
        get_aval(x)
    except TypeError:
        raise TypeError("Error interpreting argument to stage as a JAX value. The problematic "
                        f"value is of type {type(x)} and was passed to stage at position 0."
                        ) from None
    return stage_p.bind(x)


def dce_sink(val, *, prevent_mlir_dce: bool = False):
    """Marks `val` as used, so that dead-code elimination keeps what computes it; returns
    None. JAX records a `dce_sink` equation for it; didax's jaxprs are pure dataflow and keep
    no equation, so this only checks that `val` holds didax values."""
    for leaf in tree_leaves(val):
        get_aval(leaf)


def shape_as_value(shape):
    """A shape as an int32 vector: a NumPy array as in JAX (an empty shape gives an empty
    didax Array, as JAX's does). didax's shapes are always static integers."""
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"shape_as_value: expected a shape (a sequence of ints), got {shape!r}"
                        ) from None
    if not dims:
        return asarray_value(np.zeros((0,), np.int32))
    return np.array(dims, np.int32)
