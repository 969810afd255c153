"""`custom_linear_solve`: the primitive behind `lax.custom_linear_solve` (`lax.linear_solve_p`).

It computes x = solve(b) for a linear map A (`matvec`) and is linear in b. Its parameters are
JAX's: `jaxprs`, the closed jaxprs of `matvec`, `vecmat` (A's transpose), `solve` and
`transpose_solve` (`vecmat` and `transpose_solve` None when there is no transpose_solve), and
`const_lengths`, how many constants each takes: the operands are those constants, in that
order, then b. Each jaxpr takes its constants, then the flat x (or b). Its rules never
differentiate the solver:
  JVP:       dx = solve(db - dA x), where dA x is matvec's derivative in its constants at x;
  transpose: b̄ = transpose_solve(x̄): another custom_linear_solve, of the transposed system
             (matvec and vecmat, solve and transpose_solve swapped), so reverse mode stays
             implicit at every order;
  vmap:      the solver itself, vmapped.
"""
from __future__ import annotations

from typing import NamedTuple

from didax._src import core
from didax._src.base_prims import add_tangents, instantiate
from didax._src.core import Zero, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.ir import eval_jaxpr
from didax._src.lax.elementwise import neg

linear_solve_p = core.primitive("custom_linear_solve", multiple_results=True, linear=True)


class _LinearSolveTuple(NamedTuple):
    """One entry per function of the solve (JAX's parameter type, printed as JAX prints it)."""
    matvec: object
    vecmat: object
    solve: object
    transpose_solve: object

    def transpose(self):
        """The entries of the transposed system: the maps and the solvers swapped."""
        return _LinearSolveTuple(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _split(args, const_lengths):
    """(constants of each function, as a _LinearSolveTuple of lists; the b operands)."""
    args, out, lo = list(args), [], 0
    for n in const_lengths:
        out.append(args[lo:lo + n])
        lo += n
    return _LinearSolveTuple(*out), args[lo:]


def _run(closed, consts, xs):
    return eval_jaxpr(closed.jaxpr, closed.consts, *consts, *xs)


def _impl(*vals, const_lengths, jaxprs):
    consts, bs = _split([core.Array(v) for v in vals], const_lengths)
    return [core.asarray_value(x)._value for x in _run(jaxprs.solve, consts.solve, bs)]


def _aval(*avals, const_lengths, jaxprs):
    _, bs = _split(avals, const_lengths)
    return [a.strip_weak_type() for a in bs]


def _jvp(primals, tangents, *, const_lengths, jaxprs):
    consts, bs = _split(primals, const_lengths)
    consts_dot, bs_dot = _split(tangents, const_lengths)
    xs = linear_solve_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs)
    rhs = [instantiate(t) if type(t) is not Zero else None for t in bs_dot]
    if any(type(t) is not Zero for t in consts_dot.matvec):  # dA x: matvec's derivative in
        _, a_dot_x = jvp_interp.jvp_flat(  # its constants, at x
            lambda *c: _run(jaxprs.matvec, c, xs), consts.matvec, consts_dot.matvec)
        rhs = [(neg(instantiate(d)) if r is None else add_tangents(r, neg(instantiate(d))))
               if type(d) is not Zero else r for r, d in zip(rhs, a_dot_x)]
    if all(r is None for r in rhs):
        return xs, [Zero(get_aval(x).to_tangent_aval()) for x in xs]
    rhs = [instantiate(Zero(get_aval(b).strip_weak_type().to_tangent_aval())) if r is None
           else r for r, b in zip(rhs, bs)]
    n = sum(const_lengths)
    return xs, linear_solve_p.bind(*primals[:n], *rhs, const_lengths=const_lengths,
                                   jaxprs=jaxprs)


def _transpose(cts, *args, const_lengths, jaxprs):
    if jaxprs.transpose_solve is None:
        raise TypeError("custom_linear_solve: reverse-mode differentiation needs "
                        "transpose_solve (or symmetric=True)")
    consts, bs = _split(args, const_lengths)
    cts = [instantiate(c) for c in cts]
    flipped = consts.transpose()
    b_bar = linear_solve_p.bind(*flipped.matvec, *flipped.vecmat, *flipped.solve,
                                *flipped.transpose_solve, *cts,
                                const_lengths=_LinearSolveTuple(*const_lengths).transpose(),
                                jaxprs=_LinearSolveTuple(*jaxprs).transpose())
    return [None] * (len(args) - len(bs)) + list(b_bar)


def _batch(size, vals, dims, *, const_lengths, jaxprs):
    """Batched by vmapping the solver itself (under vmap the solve is differentiated directly
    if a derivative is taken inside the batched function)."""
    def run(*args):
        consts, bs = _split(args, const_lengths)
        return _run(jaxprs.solve, consts.solve, bs)
    outs = batching.vmap_flat(run, list(vals), list(dims), size, batching.rule_axis_name())
    return outs, [0] * len(outs)


linear_solve_p.def_impl(_impl)
linear_solve_p.def_abstract_eval(_aval)
linear_solve_p.def_jvp(_jvp)
linear_solve_p.def_transpose(_transpose)
linear_solve_p.def_batch(_batch)


def bind_linear_solve(jaxprs, consts, bs):
    """x = solve(b): `jaxprs` and `consts`, _LinearSolveTuples of each function's closed
    jaxpr (or None) and constants."""
    return linear_solve_p.bind(*[c for cs in consts for c in cs], *bs,
                               const_lengths=_LinearSolveTuple(*map(len, consts)),
                               jaxprs=_LinearSolveTuple(*jaxprs))
