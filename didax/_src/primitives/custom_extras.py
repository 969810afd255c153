"""The rest of `jax.custom_derivatives`, built on didax's custom_vjp and staging:
`custom_gradient`, `closure_convert`, `linear_call`, `SymbolicZero`, `zero_from_primal`.

Kept apart from custom_derivatives.py (the interpreters' rules for custom functions): these
are user-level conveniences written on top of it.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes, tree_util
from didax._src.base_prims import zeros_like_aval
from didax._src.core import Tracer, asarray_value, get_aval
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import eval_jaxpr
from didax._src.primitives.custom_derivatives import SymbolicZero, custom_vjp


@tree_util.register_pytree_node_class
class _Residuals:
    """A traced backward rule: its jaxpr is static, its constants (forward values the rule
    closes over) are the residual arrays."""

    def __init__(self, jaxpr, consts, in_tree, out_tree):
        self.jaxpr, self.consts, self.in_tree, self.out_tree = jaxpr, consts, in_tree, out_tree

    def tree_flatten(self):
        return self.consts, (self.jaxpr, self.in_tree, self.out_tree)

    @classmethod
    def tree_unflatten(cls, aux, consts):
        return cls(aux[0], list(consts), aux[1], aux[2])


def custom_gradient(fun):
    """`fun(*args) -> (value, vjp_fn)`, where `vjp_fn(cotangent)` returns the cotangents of
    the arguments, becomes a function returning `value` whose gradient is `vjp_fn`'s."""
    @custom_vjp
    def wrapped(*args, **kwargs):
        return fun(*args, **kwargs)[0]

    def fwd(*args, **kwargs):
        ans, rule = fun(*args, **kwargs)
        ans_flat, out_tree = tree_util.tree_flatten((ans,))
        trees = {}

        def flat_rule(*cts_flat):
            out = rule(*tree_util.tree_unflatten(out_tree, cts_flat))
            flat, trees["in"] = tree_util.tree_flatten(out)
            return flat

        avals = [get_aval(x).to_tangent_aval() for x in ans_flat]
        closed, _ = trace_to_jaxpr(flat_rule, avals)
        return ans, _Residuals(closed.jaxpr, closed.consts, trees["in"], out_tree)

    def bwd(res, cts):
        cts_flat, out_tree = tree_util.tree_flatten((cts,))
        if out_tree != res.out_tree:
            raise TypeError(f"{res.out_tree}\n!=\n{out_tree}")
        out = tree_util.tree_unflatten(res.in_tree, eval_jaxpr(res.jaxpr, res.consts, *cts_flat))
        return (out,) if tree_util.treedef_is_leaf(res.in_tree) else out

    wrapped.defvjp(fwd, bwd)
    return wrapped


def _maybe_perturbed(x) -> bool:
    """Whether a constant a function closes over may carry a derivative of an enclosing
    transformation (a traced value of inexact dtype): those become explicit arguments."""
    return isinstance(x, Tracer) and dtypes.issubdtype(get_aval(x).dtype, np.inexact)


def closure_convert(fun, *example_args):
    """(converted, consts): `converted(*args, *consts) == fun(*args)`, with the traced values
    `fun` closes over (for the example arguments' shapes) hoisted into `consts`, so that a
    custom_vjp rule can differentiate with respect to them."""
    flat, in_tree = tree_util.tree_flatten(example_args)
    trees = {}

    def flat_fun(*xs):
        out_flat, trees["out"] = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree, xs)))
        return out_flat

    closed, _ = trace_to_jaxpr(flat_fun, [get_aval(x) for x in flat])
    hoisted_mask = [_maybe_perturbed(c) for c in closed.consts]
    hoisted = [c for c, h in zip(closed.consts, hoisted_mask) if h]
    kept = [c for c, h in zip(closed.consts, hoisted_mask) if not h]
    out_tree = trees["out"]

    def converted(*args_and_consts):
        n = len(args_and_consts) - len(hoisted)
        args, given = args_and_consts[:n], iter(args_and_consts[n:])
        rest = iter(kept)
        consts = [next(given) if h else next(rest) for h in hoisted_mask]
        flat_args, tree2 = tree_util.tree_flatten(tuple(args))
        if tree2 != in_tree:
            raise TypeError("closure_convert: the converted function was called with argument "
                            f"structure {tree2}, but was converted for {in_tree}")
        return tree_util.tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, consts, *flat_args))

    return converted, hoisted


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """`fun(residual_args, linear_args)`, a function linear in `linear_args`, whose transpose
    is `fun_transpose(residual_args, cotangents)` instead of the one AD would derive; the
    residual arguments are not differentiated (zero cotangent).

    Built on custom_vjp, so forward mode transposes `fun_transpose` where JAX applies `fun`
    to the tangents: the same result whenever `fun_transpose` is `fun`'s transpose."""
    @custom_vjp
    def call(res, lin):  # (arrays out, as JAX's primitive gives, even for Python scalars)
        return tree_util.tree_map(asarray_value, fun(res, lin))

    def bwd(res, ct):
        zeros = tree_util.tree_map(lambda r: zeros_like_aval(get_aval(r).to_tangent_aval()), res)
        return zeros, fun_transpose(res, ct)

    call.defvjp(lambda res, lin: (fun(res, lin), res), bwd)
    return call(residual_args, linear_args)


def zero_from_primal(val, symbolic_zeros=False):
    """Zero tangents for a pytree of primal values (float0 for integer and boolean ones);
    `SymbolicZero`s if `symbolic_zeros`."""
    def zero(x):
        aval = get_aval(x).to_tangent_aval()
        return SymbolicZero(aval) if symbolic_zeros else zeros_like_aval(aval)
    return tree_util.tree_map(zero, val)

