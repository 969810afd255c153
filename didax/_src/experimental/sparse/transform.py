"""`sparsify`: runs a program written for dense arrays with BCOO arrays among its inputs.

The program is staged to a jaxpr with each sparse argument standing in as a dense array of
its shape and dtype; the jaxpr is then interpreted with the sparse values themselves. An
equation none of whose operands is sparse is bound as it is; one with a sparse operand is
given to the sparse rule registered for its primitive in `SPARSE_RULES` (keyed by the
primitive object), which computes on the stored elements and returns sparse or dense values
as JAX's does. A primitive without a rule raises NotImplementedError rather than densify:
its result would be dense, and the program should say so with `sparse.todense`.

Control flow keeps its structure: `cond`, `while` and `scan` are rebuilt with didax's own
`lax.switch`, `lax.while_loop` and `lax.scan` around bodies that are interpreted sparsely
(a sparse array is a pytree, so it flows through their operands and carries, whose
structure, nse included, must not change); the bodies of `jit` and `custom_jvp_call` are
interpreted inline (the custom rule, written for dense arrays, is dropped, as in JAX).

didax differs from JAX in two ways: BCSR arguments are not accepted (convert them with
`.to_bcoo()`), and `use_tracer=True` (JAX's tracer-based variant) is not implemented.
"""
from __future__ import annotations

import functools

from didax._src import core, tree_util
from didax._src.core import get_aval
from didax._src.experimental.sparse import (
    products,
    shape_functions,
    shape_ops,
    sparse_sparse,
    spdot,
    structure,
)
from didax._src.experimental.sparse.bcoo import BCOO, JAXSparse
from didax._src.ir import Literal, literal_value
from didax._src.lax.control_flow.cond import switch
from didax._src.lax.control_flow.scan import scan
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.numpy import namespace as jnp
from didax._src.primitives.sparse import generic  # noqa: F401  (registers todense_p)
from didax._src.transforms.api import ShapeDtypeStruct, make_jaxpr

SPARSE_RULES: dict = {}  # primitive -> rule(*operands, **params) -> result(s)

_DENSE_RESULT = ("is not implemented because it would result in dense output. If this is "
                 "your intent, use sparse.todense() to convert your arguments to dense "
                 "matrices.")


def _is_sparse(x) -> bool:
    return isinstance(x, BCOO)


def _register(name: str):
    """Registers the decorated rule for the primitive called `name`."""
    def register(rule):
        SPARSE_RULES[core.all_primitives[name]] = rule
        return rule
    return register


class SparseTracer:
    """JAX's tracer of its tracer-based sparsify (`sparsify(f, use_tracer=True)`). didax
    sparsifies by interpreting a jaxpr instead, so nothing creates one: the class exists for
    programs that name it."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("SparseTracer: didax's sparsify interprets a jaxpr and has "
                                  "no tracer; call sparsify(f) without use_tracer")


# ------------------------------------------------------------------------------------------
# The interpreter


def _closed_parts(j):
    """(jaxpr, consts) of a closed or open jaxpr parameter."""
    if hasattr(j, "consts"):
        return j.jaxpr, j.consts
    return j, []


def eval_sparse(jaxpr, consts, args) -> list:
    """`jaxpr` applied to `args`, some of them sparse (see the module docstring)."""
    env = {}

    def read(v):
        return literal_value(v) if type(v) is Literal else env[v]

    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        prim = eqn.primitive
        if any(_is_sparse(x) for x in ins):
            rule = SPARSE_RULES.get(prim)
            if rule is None:
                raise NotImplementedError(f"sparse rule for {prim.name} {_DENSE_RESULT}")
            outs = rule(*ins, **eqn.params)
        else:
            outs = prim.bind(*ins, **eqn.params)
        if not prim.multiple_results:
            outs = (outs,)
        for v, x in zip(eqn.outvars, outs):
            env[v] = x
    return [read(v) for v in jaxpr.outvars]


def _eval_closed(j, args) -> list:
    jaxpr, consts = _closed_parts(j)
    return eval_sparse(jaxpr, consts, list(args))


def _stand_in(x) -> ShapeDtypeStruct:
    """The dense array a leaf is staged as."""
    if _is_sparse(x):
        aval = get_aval(x.data).update(shape=tuple(x.shape))
    else:
        aval = get_aval(jnp.asarray(x) if not hasattr(x, "shape") else x)
    return ShapeDtypeStruct(aval.shape, aval.dtype, aval.weak_type)


def sparsify(f, use_tracer: bool = False):
    """`f`, made to accept BCOO arrays wherever it takes arrays (see the module docstring)."""
    if use_tracer:
        raise NotImplementedError("sparsify(f, use_tracer=True) is not implemented in didax; "
                                  "call sparsify(f), which interprets f's jaxpr")

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        leaves, in_tree = tree_util.tree_flatten((args, kwargs),
                                                 is_leaf=lambda x: isinstance(x, JAXSparse))
        for x in leaves:
            if isinstance(x, JAXSparse) and not _is_sparse(x):
                raise NotImplementedError(
                    f"sparsify: a {type(x).__name__} argument; didax's sparsify takes BCOO "
                    "arrays only (convert it with .to_bcoo() or BCOO.fromdense)")
        out_tree = []

        def flat(*xs):
            a, k = tree_util.tree_unflatten(in_tree, list(xs))
            out = f(*a, **k)
            out_leaves, tree = tree_util.tree_flatten(out)
            out_tree.append(tree)
            return out_leaves

        closed = make_jaxpr(flat)(*[_stand_in(x) for x in leaves])
        outs = eval_sparse(closed.jaxpr, closed.consts, leaves)
        return tree_util.tree_unflatten(out_tree[0], outs)

    return wrapped


# ------------------------------------------------------------------------------------------
# Elementwise rules


_ZERO_PRESERVING = ("abs", "asin", "asinh", "atan", "atanh", "bessel_i1e", "expm1", "log1p",
                    "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh")
_LINEAR = ("neg", "copy", "conj", "real", "imag")


def _unary(prim, linear):
    def rule(x, **params):
        mat = x if linear else x._summed()
        return mat._with_data(prim.bind(mat.data, **params))
    return rule


for _name in _ZERO_PRESERVING + _LINEAR:
    if _name in core.all_primitives:
        _p = core.all_primitives[_name]
        SPARSE_RULES[_p] = _unary(_p, _name in _LINEAR)


@_register("integer_pow")
def _integer_pow(x, *, y):
    if y <= 0:
        raise NotImplementedError(
            f"sparse rule for integer_pow with non-positive exponent {y} is not implemented "
            "because it would result in dense output. If this is your intent, use "
            "sparse.todense() to convert your argument to a dense array.")
    mat = x._summed()
    return mat._with_data(core.all_primitives["integer_pow"].bind(mat.data, y=y))


@_register("convert_element_type")
def _convert(x, *, new_dtype, weak_type=False, **params):
    mat = x._summed()
    return mat._with_data(core.all_primitives["convert_element_type"].bind(
        mat.data, new_dtype=new_dtype, weak_type=weak_type, **params))


def _same_indices(x, y) -> bool:
    """Whether two sparse operands share their indices (one array object), as values
    derived from one sparse array by elementwise operations do: their data then combine
    elementwise, without new stored elements (as JAX's sparsify tracks)."""
    return (_is_sparse(x) and _is_sparse(y) and x.indices is y.indices
            and tuple(x.shape) == tuple(y.shape))


@_register("mul")
def _mul(x, y):
    if _same_indices(x, y):  # (duplicates summed first: a product is not linear)
        xs, ys = (x, y) if x.unique_indices else (x._summed(), y._summed())
        return xs._with_data(xs.data * ys.data)
    if _is_sparse(x) and _is_sparse(y):
        return BCOO._new(sparse_sparse.multiply_sparse(x, y))
    sp, dense = (x, y) if _is_sparse(x) else (y, x)
    return sp._with_data(products.multiply_dense(sp, dense))


@_register("div")
def _div(x, y):
    if _is_sparse(y):
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments "
            "to a dense array.")
    return x._with_data(products.divide_dense(x, y))


@_register("add")
def _add(x, y):
    if _same_indices(x, y):
        return x._with_data(x.data + y.data)
    return x + y


@_register("sub")
def _sub(x, y):
    if _same_indices(x, y):
        return x._with_data(x.data - y.data)
    return x - y


# ------------------------------------------------------------------------------------------
# Reductions, products and shapes


@_register("reduce_sum")
def _reduce_sum(x, *, axes, **params):
    return x.sum(axis=tuple(axes))


@_register("dot_general")
def _dot_general(lhs, rhs, *, dimension_numbers, preferred_element_type=None, **params):
    if _is_sparse(lhs) and _is_sparse(rhs):
        out = BCOO._new(spdot.spdot_general(lhs, rhs, dimension_numbers))
        if preferred_element_type is not None and out.dtype != preferred_element_type:
            out = out.astype(preferred_element_type)
        return out
    return products.dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                                preferred_element_type=preferred_element_type)


@_register("transpose")
def _transpose(x, *, permutation):
    return BCOO._new(structure.transpose(x, permutation))


@_register("reshape")
def _reshape(x, *, new_sizes, dimensions=None, **params):
    if dimensions is not None:
        raise NotImplementedError("sparse rule for reshape with `dimensions` (a transpose "
                                  "first) is not implemented; transpose explicitly")
    return x.reshape(tuple(new_sizes))


@_register("broadcast_in_dim")
def _broadcast_in_dim(x, *dyn, shape, broadcast_dimensions, **params):
    return BCOO._new(shape_ops.broadcast_in_dim(x, shape, broadcast_dimensions))


@_register("expand_dims")
def _expand_dims(x, *, dimensions):
    return BCOO._new(structure.expand_dims(x, tuple(dimensions)))


@_register("squeeze")
def _squeeze(x, *, dimensions):
    return BCOO._new(shape_ops.squeeze(x, dimensions))


@_register("rev")
def _rev(x, *, dimensions):
    return BCOO._new(shape_ops.rev(x, dimensions))


@_register("slice")
def _slice(x, *, start_indices, limit_indices, strides=None):
    return BCOO._new(shape_ops.slice_(x, start_indices, limit_indices, strides))


@_register("dynamic_slice")
def _dynamic_slice(x, *starts, slice_sizes):
    if any(_is_sparse(s) for s in starts):
        raise NotImplementedError("sparse rule for dynamic_slice with sparse start indices")
    return BCOO._new(shape_ops.dynamic_slice(x, starts, slice_sizes))


@_register("concatenate")
def _concatenate(*operands, dimension):
    if not all(_is_sparse(x) for x in operands):
        raise NotImplementedError(
            "sparse rule for concatenate of sparse and dense arrays is not implemented; "
            "convert the dense ones with BCOO.fromdense or the sparse ones with "
            "sparse.todense()")
    return BCOO._new(shape_ops.concatenate(operands, dimension))


@_register("gather")
def _gather(x, indices, **params):
    if _is_sparse(indices):
        raise NotImplementedError("sparse rule for gather with sparse indices")
    return shape_functions.bcoo_gather(x, indices, **params)


@_register("todense")
def _todense(x):
    return x.todense()


# ------------------------------------------------------------------------------------------
# Calls and control flow


@_register("jit")
def _jit(*args, jaxpr, **params):
    return _eval_closed(jaxpr, args)


@_register("custom_jvp_call")
def _custom_jvp_call(*args, call_jaxpr, **params):
    return _eval_closed(call_jaxpr, args)


@_register("cond")
def _cond(index, *operands, branches, **params):
    if _is_sparse(index):
        raise NotImplementedError("sparse rule for cond with a sparse predicate")
    fns = [functools.partial(lambda b, *ops: _eval_closed(b, ops), b) for b in branches]
    return list(switch(index, fns, *operands))


@_register("while")
def _while(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, **params):
    cconsts, bconsts = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    init = list(args[cond_nconsts + body_nconsts:])

    def cond_fun(carry):
        return _eval_closed(cond_jaxpr, list(cconsts) + list(carry))[0]

    def body_fun(carry):
        return _eval_closed(body_jaxpr, list(bconsts) + list(carry))

    return list(while_loop(cond_fun, body_fun, init))


@_register("scan")
def _scan(*args, jaxpr, num_consts, num_carry, length, reverse=False, unroll=1, **params):
    consts = list(args[:num_consts])
    init = list(args[num_consts:num_consts + num_carry])
    xs = list(args[num_consts + num_carry:])

    def body(carry, x):
        outs = _eval_closed(jaxpr, consts + list(carry) + list(x))
        return outs[:num_carry], outs[num_carry:]

    carry, ys = scan(body, init, xs, length=length, reverse=reverse, unroll=unroll)
    return list(carry) + list(ys)
