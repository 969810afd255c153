"""`lax.optimization_barrier`: the identity on a pytree of arrays that jit must not see
through. Nothing computed from the results may move before the barrier, nor anything the
operands need after it; jit neither forwards the operands past it nor folds it into
neighbouring code (it is an opaque call of its impl). Its derivative and its batching pass
the barrier on: tangents and cotangents go through a barrier of their own, as in JAX.
"""
from __future__ import annotations

from didax._src import core
from didax._src.base_prims import instantiate
from didax._src.tree_util import tree_flatten, tree_unflatten

optimization_barrier_p = core.primitive("optimization_barrier", multiple_results=True)
optimization_barrier_p.def_impl(lambda *args: list(args))
optimization_barrier_p.def_abstract_eval(lambda *avals: list(avals))


@optimization_barrier_p.def_jvp
def _barrier_jvp(primals, tangents):
    tangents = [instantiate(t) for t in tangents]
    return optimization_barrier_p.bind(*primals), optimization_barrier_p.bind(*tangents)


@optimization_barrier_p.def_transpose
def _barrier_transpose(cts, *args):
    cts = [instantiate(ct) for ct in cts]
    return optimization_barrier_p.bind(*cts)


optimization_barrier_p.linear = True


@optimization_barrier_p.def_batch
def _barrier_batch(size, vals, dims):
    return optimization_barrier_p.bind(*vals), list(dims)


def optimization_barrier(operand):
    """`operand` (a pytree of arrays) unchanged, with a barrier to jit's optimizations."""
    leaves, tree = tree_flatten(operand)
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


__all__ = ["optimization_barrier"]
