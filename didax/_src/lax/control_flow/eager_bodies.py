"""How an eager loop (scan, while_loop on concrete values) runs its body.

Interpreted, each iteration binds every equation of the body again (a few microseconds
each). Compiled by the NumPy tier, it costs some 50 microseconds per equation once, then
well under one per equation and iteration. The body of an eager loop is traced, hence new,
on every call, so compiling pays only for long loops: a scan longer than COMPILE_AFTER runs
its body compiled from the start (its length is known), and a while loop interprets its
first COMPILE_AFTER iterations and compiles its predicate and body only if it goes on. An
equation evaluated now gives what it gives staged and compiled (core.EvalInterpreter), so
which iterations ran compiled does not change the values.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.compiler.numpy_tier import numpy_executable
from didax._src.ir import ClosedJaxpr, eval_jaxpr

COMPILE_AFTER = 16  # iterations interpreted before the body is compiled


def interpreted(closed: ClosedJaxpr):
    """`closed` as a function of NumPy values returning NumPy values, bound equation by
    equation (so too an eager cond's branch, which runs once)."""
    def run(*values):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *[core.Array(v) for v in values])
        return [np.asarray(v) for v in outs]
    return run


def compiled(closed: ClosedJaxpr, name: str):
    """`closed` compiled by the NumPy tier (once per jaxpr), on NumPy values."""
    return numpy_executable(closed, name).run
