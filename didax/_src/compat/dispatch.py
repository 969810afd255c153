"""What libraries reach for in `jax._src.dispatch` (they import the module; equinox does):
how a primitive applied to concrete values runs, by its impl, through the evaluator."""
from __future__ import annotations

from didax._src.core import eval_interpreter


def apply_primitive(prim, *args, **params):
    """`prim` applied to concrete arguments, now."""
    return eval_interpreter.process_primitive(prim, args, params)
