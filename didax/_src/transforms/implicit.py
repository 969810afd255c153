"""Implicitly differentiated solvers: `lax.custom_linear_solve` and `lax.custom_root`.

The solvers themselves (iterations, factorisations...) are never differentiated. For
x = A^-1 b, with A = matvec (which may close over differentiated values θ):
  d x  = A^-1 (db - dA x)                       (forward),
  b̄ = A^-T x̄,   θ̄ = -(∂(A x)/∂θ)^T b̄            (reverse),
where A^-T is `transpose_solve` applied to the transposed matvec (or `solve` itself when the
system is symmetric). The reverse rule solves the transposed system with custom_linear_solve
again, so derivatives of every order stay implicit. For a root x of f(x, θ) = 0, the implicit
function theorem gives dx = -(∂f/∂x)^-1 (∂f/∂θ) dθ, a linear solve by `tangent_solve`.
"""
from __future__ import annotations

from didax._src import core, tree_util
from didax._src.core import get_aval
from didax._src.interpreters.partial_eval import PartialEvalInterpreter
from didax._src.interpreters.staging import StagingTracer, trace_to_jaxpr
from didax._src.ir import hoist_consts
from didax._src.lax.elementwise import neg, stop_gradient
from didax._src.primitives.custom_derivatives import custom_jvp
from didax._src.primitives.custom_extras import closure_convert
from didax._src.primitives.linear_solve import bind_linear_solve
from didax._src.transforms import api


def being_linearized(tree) -> bool:
    """Whether a leaf of `tree` is an unknown of a partial evaluator: a tangent of a JVP
    being linearized (for reverse mode), whose map a solver must stage, not compute."""
    return any(isinstance(x, StagingTracer) and isinstance(x._interp, PartialEvalInterpreter)
               for x in tree_util.tree_leaves(tree))


def _check_same_structure(what, a, b):
    ta, tb = tree_util.tree_structure(a), tree_util.tree_structure(b)
    if ta != tb:
        raise TypeError(f"{what}: expected the structure {ta}, got {tb}")


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """x = solve(matvec, b), differentiated as the solution of matvec(x) = b: only `matvec`
    is differentiated, never `solve` (see the module docstring)."""
    if has_aux:
        raise NotImplementedError("custom_linear_solve: has_aux=True is not implemented")
    b_flat, b_tree = tree_util.tree_flatten(b)
    b_flat = [core.asarray_value(v) for v in b_flat]
    b = tree_util.tree_unflatten(b_tree, b_flat)
    b_avals = [get_aval(v) for v in b_flat]
    # Every function becomes a closed jaxpr whose constants (the values it closes over) are
    # the primitive's leading operands (matvec's are differentiated, the solvers' are not).
    mv = _staged(matvec, b_tree, b_avals)
    fwd = _staged(lambda r: solve(matvec, r), b_tree, b_avals, "solve")
    if symmetric:
        vm, bwd = mv, fwd
    elif transpose_solve is not None:
        def vecmat(r):
            (out,) = api.linear_transpose(matvec, b)(r)
            return out
        vm = _staged(vecmat, b_tree, b_avals)
        bwd = _staged(lambda r: transpose_solve(vecmat, r), b_tree, b_avals, "transpose_solve")
    else:
        vm = bwd = (None, [])
    parts = (mv, vm, fwd, bwd)
    xs = bind_linear_solve([j for j, _ in parts], [c for _, c in parts], b_flat)
    return tree_util.tree_unflatten(b_tree, xs)


def _staged(fun, tree, avals, what=None):
    """(closed jaxpr of `fun` over the flat leaves of `tree`, taking its constants first;
    those constants)."""
    def flat(*xs):
        arg = tree_util.tree_unflatten(tree, list(xs))
        out = fun(arg)
        if what is not None:
            _check_same_structure(f"custom_linear_solve: {what}'s result", arg, out)
        return tree_util.tree_leaves(out)
    return hoist_consts(trace_to_jaxpr(flat, avals)[0])


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """x = solve(f, initial_guess), a root of f, differentiated by the implicit function
    theorem: `tangent_solve(g, y)` solves the linear system g(x) = y; the initial guess
    gets no derivative."""
    if has_aux:
        raise NotImplementedError("custom_root: has_aux=True is not implemented")
    fc, consts = closure_convert(f, initial_guess)
    solve_c, solve_consts = closure_convert(lambda x0: solve(f, x0), initial_guess)
    return _root(fc, solve_c, tangent_solve)(tuple(consts), tuple(solve_consts), initial_guess)


def _root(fc, solve_c, tangent_solve):

    @custom_jvp
    def run(consts, solve_consts, guess):
        x = solve_c(stop_gradient_tree(guess), *solve_consts)
        _check_same_structure("custom_root: solve's result", guess, x)
        return x

    def run_jvp(primals, tangents):
        consts, solve_consts, guess = primals
        consts_dot = tangents[0]
        x = run(consts, solve_consts, guess)
        _, f_dot = api.jvp(lambda *c: fc(x, *c), consts, consts_dot)

        def jac(v):  # ∂f/∂x at the root, applied to v
            return api.jvp(lambda u: fc(u, *consts), (x,), (v,))[1]

        x_dot = custom_linear_solve(jac, f_dot, tangent_solve, transpose_solve=tangent_solve)
        return x, tree_util.tree_map(neg, x_dot)

    run.defjvp(run_jvp)
    return run


def stop_gradient_tree(tree):
    return tree_util.tree_map(stop_gradient, tree)


__all__ = ["custom_linear_solve", "custom_root"]
