"""`custom_linear_solve`: the primitive behind `lax.custom_linear_solve`.

It computes x = solve(b) for a linear map A (`matvec`, closed over constants c) and is linear
in b. Its rules never differentiate the solver:
  JVP:       dx = solve(db - dA x), where dA x is matvec's derivative in c at x;
  transpose: b̄ = transpose_solve(x̄): another custom_linear_solve, of the transposed system
             (with the solvers' roles swapped), so reverse mode stays implicit at every order.
The functions are flat: `matvec(xs, consts)`, `solve(bs, consts)`, `transpose_solve(...)` take
and return lists of arrays.
"""
from __future__ import annotations

from didax._src import core
from didax._src.base_prims import add_tangents, instantiate
from didax._src.core import Zero, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.transpose import linear_transpose_flat
from didax._src.lax.elementwise import neg

linear_solve_p = core.primitive("custom_linear_solve", multiple_results=True, linear=True)
linear_solve_p.pp_hidden = {"problem": core.PP_ALWAYS_HIDE}


class LinearProblem:
    """The static part of one solve: the flat functions and how many constants each has."""

    def __init__(self, matvec, solve, transpose_solve, n_mv, n_solve, n_tsolve, b_avals):
        self.matvec, self.solve, self.transpose_solve = matvec, solve, transpose_solve
        self.n_mv, self.n_solve, self.n_tsolve = n_mv, n_solve, n_tsolve
        self.b_avals = tuple(b_avals)

    def split(self, args):
        i, j, k = self.n_mv, self.n_mv + self.n_solve, self.n_mv + self.n_solve + self.n_tsolve
        return list(args[:i]), list(args[i:j]), list(args[j:k]), list(args[k:])

    def transposed(self):
        """The problem A^T y = x̄, whose solvers are this one's, swapped."""
        if self.transpose_solve is None:
            raise TypeError("custom_linear_solve: reverse-mode differentiation needs "
                            "transpose_solve (or symmetric=True)")
        matvec, b_avals = self.matvec, self.b_avals

        def t_matvec(ys, consts):
            _, transposed = linear_transpose_flat(lambda *xs: matvec(list(xs), consts),
                                                  [a.strip_weak_type() for a in b_avals])
            return transposed(list(ys))

        return LinearProblem(t_matvec, self.transpose_solve, self.solve, self.n_mv,
                             self.n_tsolve, self.n_solve, b_avals)

    def __repr__(self):
        return "LinearProblem"


def _impl(*vals, problem):
    mv_c, s_c, _, bs = problem.split([core.Array(v) for v in vals])
    return [core.asarray_value(x)._value for x in problem.solve(bs, s_c)]


def _aval(*avals, problem):
    return [a.strip_weak_type() for a in problem.b_avals]


def _jvp(primals, tangents, *, problem):
    mv_c, s_c, t_c, bs = problem.split(primals)
    mv_dot, _, _, bs_dot = problem.split(tangents)
    xs = linear_solve_p.bind(*primals, problem=problem)
    rhs = [instantiate(t) if type(t) is not Zero else None for t in bs_dot]
    if any(type(t) is not Zero for t in mv_dot):  # dA x, from matvec's derivative in c
        _, a_dot_x = jvp_interp.jvp_flat(lambda *c: problem.matvec(list(xs), list(c)),
                                         mv_c, mv_dot)
        rhs = [(neg(instantiate(d)) if r is None else add_tangents(r, neg(instantiate(d))))
               if type(d) is not Zero else r for r, d in zip(rhs, a_dot_x)]
    if all(r is None for r in rhs):
        return xs, [Zero(get_aval(x).to_tangent_aval()) for x in xs]
    rhs = [instantiate(Zero(a.to_tangent_aval())) if r is None else r
           for r, a in zip(rhs, problem.b_avals)]
    return xs, linear_solve_p.bind(*mv_c, *s_c, *t_c, *rhs, problem=problem)


def _transpose(cts, *args, problem):
    mv_c, s_c, t_c, _ = problem.split(args)
    cts = [instantiate(c) for c in cts]
    flipped = problem.transposed()
    b_bar = linear_solve_p.bind(*mv_c, *t_c, *s_c, *cts, problem=flipped)
    return [None] * (len(args) - len(cts)) + list(b_bar)


def _batch(size, vals, dims, *, problem):
    """Batched by vmapping the solver itself (under vmap the solve is differentiated directly
    if a derivative is taken inside the batched function)."""
    def run(*args):
        _, s_c, _, bs = problem.split(args)
        return problem.solve(bs, s_c)
    outs = batching.vmap_flat(run, list(vals), list(dims), size, batching.rule_axis_name())
    return outs, [0] * len(outs)


linear_solve_p.def_impl(_impl)
linear_solve_p.def_abstract_eval(_aval)
linear_solve_p.def_jvp(_jvp)
linear_solve_p.def_transpose(_transpose)
linear_solve_p.def_batch(_batch)


def bind_linear_solve(problem, mv_consts, solve_consts, tsolve_consts, bs):
    return linear_solve_p.bind(*mv_consts, *solve_consts, *tsolve_consts, *bs, problem=problem)
