"""Derivatives of linear solves by implicit differentiation, not through the iterations.

For x = A^-1 b with A a linear function closing over parameters, dx = A^-1 (db - dA x): one
more solve of the same system. Reverse mode needs the transpose of that map, which is a solve
with A's transpose: when the JVP is being linearized (its tangents are unknowns of a partial
evaluator), the tangent solve is staged as a `custom_lin` whose transpose runs that solve;
otherwise (forward mode) it is simply computed. The solver's loop is never differentiated,
so the derivatives are as accurate as the solves, cost one solve each, and work under jit.
"""
from __future__ import annotations

from didax._src import core, tree_util
from didax._src.primitives.custom_derivatives import custom_jvp, custom_lin_p
from didax._src.primitives.custom_extras import closure_convert
from didax._src.transforms.api import jvp, linear_transpose
from didax._src.transforms.implicit import being_linearized


def solve_implicitly(matvec, b, solve, transpose_solve):
    """solve(matvec, b), differentiable in b and in whatever `matvec` closes over;
    `transpose_solve(vecmat, c)` solves with the transposed operator."""
    closed, consts = closure_convert(matvec, b)
    return _solve(closed, solve, transpose_solve, tuple(consts), b)


def _transposed(closed):
    """The transpose of the linear map v -> closed(v, *consts), in the same form."""
    def vecmat(v, *consts):
        (out,) = linear_transpose(lambda u: closed(u, *consts), v)(v)
        return out
    return vecmat


def _solve(closed, solve, transpose_solve, consts, b):
    @custom_jvp
    def run(consts, b):
        return solve(lambda v: closed(v, *consts), b)

    def run_jvp(primals, tangents):
        consts, b = primals
        d_consts, d_b = tangents
        x = run(consts, b)
        _, d_ax = jvp(lambda *c: closed(x, *c), consts, d_consts)
        rhs = tree_util.tree_map(lambda u, v: u - v, d_b, d_ax)
        if not being_linearized(rhs):
            return x, run(consts, rhs)
        return x, _staged_linear(closed, solve, transpose_solve, consts, rhs)

    run.defjvp(run_jvp)
    return run(consts, b)


def _staged_linear(closed, solve, transpose_solve, consts, rhs):
    """rhs -> A^-1 rhs as a linear primitive whose transpose is the transposed solve."""
    flat, tree = tree_util.tree_flatten(rhs)
    avals = tuple(core.get_aval(x).to_tangent_aval() for x in flat)

    def backward(res, cts):
        out = _solve(_transposed(closed), transpose_solve, solve, tuple(res),
                     tree_util.tree_unflatten(tree, cts))
        return tree_util.tree_leaves(out)

    outs = custom_lin_p.bind(*consts, *flat, num_res=len(consts), bwd=backward,
                             in_avals=avals, out_avals=avals)
    return tree_util.tree_unflatten(tree, outs)
