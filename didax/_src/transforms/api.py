"""User-facing transformations: jvp, make_jaxpr, eval_shape, jacfwd.

Each one flattens pytree arguments, runs an interpreter over the flat function, and
rebuilds the outputs' structure.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from didax._src import caches, core, dtypes
from didax._src.base_prims import convert_element_type, instantiate, reshape, zeros_like_aval
from didax._src.config import config
from didax._src.config_states import float_checks
from didax._src.core import ShapedArray, Zero, asarray_value, get_aval
from didax._src.eager.vjp import EagerVJPInterpreter, eager_backward_pass
from didax._src.errors import function_site, user_error
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.partial_eval import linearize_flat
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.interpreters.transpose import backward_pass, linear_transpose_flat
from didax._src.ir import eval_jaxpr
from didax._src.lax.shape import slice_in_dim
from didax._src.state.types import Ref
from didax._src.tree_util import (
    broadcast_prefix,
    first_difference,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_structure,
    tree_unflatten,
)


def _check_valid_leaf(x, what: str, refs: bool = False):
    """Raises unless `x` is an array or a number (or, with `refs`, a mutable array reference
    or a token: make_jaxpr and vmap take those)."""
    if isinstance(x, core.ArrayBase) or isinstance(x, (np.ndarray, np.generic, bool, int, float,
                                                       complex)):
        return
    if refs and (type(x) is Ref or type(x) is core.Token):
        return
    raise user_error(TypeError, (
        f"{what}: argument of type {type(x).__name__} is not a valid didax type "
        f"(got {x!r}); pass arrays, NumPy arrays, Python scalars, or pytrees of them."))


def _strip_current_jvp(x):
    """Auxiliary outputs are not differentiated: a dual number yields its primal."""
    interp = core.current_interpreter()
    if type(x) is jvp_interp.JVPTracer and x._interp is interp:
        return x.primal
    return x


class _FlatFun:
    """Wraps `fun` to take and return flat lists; records the output tree structure."""
    def __init__(self, fun, in_tree, has_aux=False):
        self.fun = fun
        self.in_tree = in_tree
        self.has_aux = has_aux
        self.out_tree = None
        self.aux = None

    def __call__(self, *flat_args):
        args = tree_unflatten(self.in_tree, flat_args)
        out = self.fun(*args)
        if self.has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                got = (f"a {type(out).__name__} of {len(out)} entries"
                       if isinstance(out, (tuple, list))
                       else f"a value of type {_leaf_type(out)}")
                raise user_error(TypeError, (
                    f"a function with has_aux=True must return a pair (out, aux), but "
                    f"{function_site(self.fun)} returned {got}.\nWhat to do: return "
                    "`(loss, aux)` (aux may be any pytree), or drop has_aux=True."))
            out, aux = out
            self.aux = tree_map(_strip_current_jvp, aux)
        flat_out, self.out_tree = tree_flatten(out)
        for x in flat_out:
            _check_valid_leaf(x, "output of the transformed function")
        return flat_out


# --------------------------------------------------------------------------------------
# jvp


def _check_tangent(p, t, i):
    pa = get_aval(p)
    ta = get_aval(t) if getattr(t, "dtype", None) != dtypes.float0 else core.ShapedArray(
        np.shape(t), dtypes.float0)
    expected = pa.to_tangent_aval()
    if pa.shape != ta.shape:
        raise user_error(ValueError, f"jvp: primal and tangent arguments must have the same shape; "
                         f"argument {i} has primal shape {pa.shape} and tangent shape {ta.shape}")
    if ta.dtype != expected.dtype:
        raise user_error(TypeError, (
            f"jvp: primal and tangent arguments must have matching dtypes; argument "
            f"{i} has primal dtype {pa.dtype.name}, so its tangent must have dtype "
            f"{expected.dtype.name if expected.dtype != dtypes.float0 else 'float0'}"
            f", got {ta.dtype.name}"))


def jvp(fun, primals, tangents, has_aux: bool = False):
    """Forward-mode derivative: `(fun(*primals), J(primals) @ tangents)`."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise user_error(TypeError, (
            "jvp: primals and tangents must be tuples or lists of arguments, got "
            f"{type(primals).__name__} and {type(tangents).__name__}"))
    if len(primals) != len(tangents):
        raise user_error(TypeError, f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    flat_p, tree_p = tree_flatten(tuple(primals))
    flat_t, tree_t = tree_flatten(tuple(tangents))
    if tree_p != tree_t:
        raise user_error(TypeError, (
            f"jvp: primal and tangent arguments must have the same tree structure; "
            f"got {tree_p} and {tree_t}"))
    in_tangents = []
    for i, (p, t) in enumerate(zip(flat_p, flat_t)):
        _check_valid_leaf(p, "jvp")
        _check_tangent(p, t, i)
        if dtypes.tangent_dtype(get_aval(p).dtype) == dtypes.float0:
            t = Zero(get_aval(p).to_tangent_aval())
        in_tangents.append(t)
    flat_fun = _FlatFun(fun, tree_p, has_aux)
    out_p, out_t = jvp_interp.jvp_flat(lambda *a: flat_fun(*a), flat_p, in_tangents)
    out_p = [asarray_value(p) for p in out_p]
    out_t = [instantiate(t) if type(t) is Zero else asarray_value(t) for t in out_t]
    primals_out = tree_unflatten(flat_fun.out_tree, out_p)
    tangents_out = tree_unflatten(flat_fun.out_tree, out_t)
    if has_aux:
        return primals_out, tangents_out, flat_fun.aux
    return primals_out, tangents_out


# --------------------------------------------------------------------------------------
# Staging: make_jaxpr, eval_shape


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (as in `jax.ShapeDtypeStruct`). `sharding`
    is kept as given (libraries copy an array's onto its stand-in); `eval_shape`'s carry
    None, as JAX's do on one device."""
    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, weak_type: bool = False, *, sharding=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    @property
    def aval(self):
        return ShapedArray(self.shape, dtypes.canonicalize_dtype(self.dtype), self.weak_type)

    def update(self, **changes):
        """A copy with the given fields replaced (`shape`, `dtype`, `weak_type`, `sharding`)."""
        fields = {k: getattr(self, k) for k in self.__slots__}
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"ShapeDtypeStruct.update: unknown fields {sorted(unknown)}")
        fields.update(changes)
        return ShapeDtypeStruct(fields["shape"], fields["dtype"], fields["weak_type"],
                                sharding=fields["sharding"])

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        sharding = f", sharding={self.sharding}" if self.sharding is not None else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sharding}{weak})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.sharding == other.sharding)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type, self.sharding))


def _abstractify(x):
    if isinstance(x, ShapeDtypeStruct):
        return x.aval
    _check_valid_leaf(x, "make_jaxpr", refs=True)
    return get_aval(x)


def _split_static(fun, args, static_argnums):
    """Closes `fun` over static positional arguments; returns (fun, dynamic args)."""
    if not static_argnums:
        return fun, args
    n = len(args)
    static = {i % n if n else i for i in static_argnums}
    dynamic = [a for i, a in enumerate(args) if i not in static]

    def partial_fun(*dyn):
        it = iter(dyn)
        full = [args[i] if i in static else next(it) for i in range(n)]
        return fun(*full)

    return partial_fun, dynamic


def make_jaxpr(fun, static_argnums=(), return_shape: bool = False, abstracted_axes=None):
    """Returns a function that stages `fun` and returns its closed jaxpr."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if abstracted_axes is not None:
        raise NotImplementedError("make_jaxpr: abstracted_axes (dynamic shapes) is not supported")

    @functools.wraps(fun)
    def make(*args, **kwargs):
        f = functools.partial(fun, **kwargs) if kwargs else fun
        f, dyn = _split_static(f, args, static_argnums)
        flat, in_tree = tree_flatten(tuple(dyn))
        avals = [_abstractify(x) for x in flat]
        flat_fun = _FlatFun(f, in_tree)
        closed, outs = trace_to_jaxpr(flat_fun, avals)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                      for a in closed.jaxpr.out_avals]
            return closed, tree_unflatten(flat_fun.out_tree, shapes)
        return closed

    return make


def eval_shape(fun, *args, **kwargs):
    """The output shapes and dtypes of `fun(*args)`, computed without any arithmetic."""
    flat, in_tree = tree_flatten((args, kwargs))
    avals = [_abstractify(x) for x in flat]

    given = {}  # output leaves that are already ShapeDtypeStructs give their shape and dtype,
    # as in JAX (not their sharding: what eval_shape gives carries none)

    def f(a, k):
        flat_out, tree = tree_flatten(fun(*a, **k))
        given.clear()
        given.update((i, x) for i, x in enumerate(flat_out) if isinstance(x, ShapeDtypeStruct))
        return tree_unflatten(tree, [0 if i in given else x for i, x in enumerate(flat_out)])

    flat_fun = _FlatFun(f, in_tree)
    closed, _ = trace_to_jaxpr(flat_fun, avals)
    shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
              for a in (given.get(i, a) for i, a in enumerate(closed.jaxpr.out_avals))]
    return tree_unflatten(flat_fun.out_tree, shapes)




def _argnums_tuple(argnums, nargs, name, fun=None):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums) if isinstance(
        argnums, (tuple, list)) else None
    if nums is None or not all(isinstance(a, (int, np.integer)) for a in nums):
        raise user_error(TypeError, f"{name}: argnums must be an int or a tuple of ints (the "
                         f"positions of the arguments to differentiate), got {argnums!r}")
    for a in nums:
        if not -nargs <= a < nargs:
            fn = f" {function_site(fun)}" if fun is not None else ""
            raise user_error(TypeError, (
                f"{name}: argnums={argnums!r} asks for the derivative with respect to "
                f"positional argument {a}, but the function{fn} was called with {nargs} "
                f"positional argument{'s' if nargs != 1 else ''} (positions "
                f"{-nargs}..{nargs - 1}). Pass that argument positionally, or fix argnums; "
                "arguments passed by keyword are never differentiated."))
    return nums


# --------------------------------------------------------------------------------------
# Reverse mode: linearize (JVP + partial evaluation), then transpose


def _is_differentiable(x) -> bool:
    return dtypes.kind(get_aval(x).dtype) in "fc"


def _check_cotangent(ct, aval, i):
    ct_aval = get_aval(ct)
    if ct_aval.shape != aval.shape:
        raise user_error(ValueError, (
            f"vjp: the cotangent of output {i} has shape {ct_aval.shape}, but the "
            f"output has shape {aval.shape}; pass a cotangent of the output's shape"))
    if ct_aval.dtype != aval.dtype and not ct_aval.weak_type:
        raise user_error(TypeError, (
            f"vjp: the cotangent of output {i} has dtype {ct_aval.dtype.name}, but "
            f"the output's tangent dtype is {aval.dtype.name}"))


def _linearize_for_vjp(flat_fun, flat_p, differentiable):
    """linearize_flat for reverse mode: (the result, the inputs, whether eager). With nothing
    staged around, each primitive signature's (or library function's) linearization is
    compiled once (eager/vjp.py); the differentiable inputs become Arrays."""
    if (core._ctx.interp is core.eval_interpreter and not any(float_checks())
            and config.didax_eager_vjp_steps != "off"):
        flat_p = [x if type(x) is core.Array or not d else asarray_value(x)
                  for x, d in zip(flat_p, differentiable)]
        return linearize_flat(flat_fun, flat_p, differentiable, EagerVJPInterpreter), flat_p, True
    return linearize_flat(flat_fun, flat_p, differentiable), flat_p, False


def _pull_back(lin, eager, cts_out, differentiable, in_avals) -> list:
    """The flat cotangents of the inputs (float0 zeros for the non-differentiable ones)."""
    if eager and core._ctx.interp is core.eval_interpreter:
        cts_in = iter(eager_backward_pass(lin.jaxpr.jaxpr, lin.jaxpr.consts, cts_out))
    else:
        cts_in = iter(backward_pass(lin.jaxpr.jaxpr, lin.jaxpr.consts, cts_out))
    result = []
    for d, aval in zip(differentiable, in_avals):
        if d:
            ct_in = next(cts_in)
            if type(ct_in) is Zero:
                ct_in = instantiate(ct_in)
            elif type(ct_in) is not core.Array:
                ct_in = asarray_value(ct_in)
            if type(ct_in) is core.Array and not ct_in._value.flags.c_contiguous:
                # a transposed or broadcast view: copied, so the optimizer's update of a
                # weight by its gradient reads it row by row
                ct_in = core.Array.from_numpy(np.ascontiguousarray(ct_in._value), ct_in.aval)
            result.append(ct_in)
        else:
            result.append(core.Array(np.zeros(aval.shape, dtypes.float0)))
    return result


def vjp(fun, *primals, has_aux: bool = False):
    """Reverse mode: `(fun(*primals), vjp_fun)` where `vjp_fun(ct)` pulls a cotangent of the
    output back to a tuple of cotangents, one per primal."""
    flat_p, in_tree = tree_flatten(primals)
    for x in flat_p:
        _check_valid_leaf(x, "vjp")
    differentiable = [_is_differentiable(x) for x in flat_p]
    flat_fun = _FlatFun(fun, in_tree, has_aux)
    lin, flat_p, eager = _linearize_for_vjp(flat_fun, flat_p, differentiable)
    out_tree = flat_fun.out_tree
    primals_out = tree_unflatten(out_tree, [asarray_value(p) for p in lin.primals_out])
    in_avals = [get_aval(x) for x in flat_p]

    def vjp_fun(ct):
        flat_ct, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise user_error(TypeError, (
                f"vjp: the cotangent must have the structure of the output, "
                f"{out_tree}; got {ct_tree}"))
        cts_out = []
        for i, (c, zero, aval) in enumerate(zip(flat_ct, lin.zero_outputs, lin.out_avals)):
            if zero:
                continue
            if isinstance(c, (int, float, complex)):
                c = core.Array(np.asarray(c, aval.dtype))
            _check_cotangent(c, aval, i)
            cts_out.append(c)
        return tree_unflatten(in_tree, _pull_back(lin, eager, cts_out, differentiable,
                                                  in_avals))

    if has_aux:
        return primals_out, vjp_fun, flat_fun.aux
    return primals_out, vjp_fun


def linearize(fun, *primals, has_aux: bool = False):
    """`(fun(*primals), f_jvp)`: `f_jvp(*tangents)` evaluates the JVP at `primals` without
    re-running the primal computation (it replays the staged linear jaxpr). With `has_aux`,
    `fun` returns `(out, aux)` and linearize `(out, f_jvp, aux)`."""
    flat_p, in_tree = tree_flatten(primals)
    differentiable = [_is_differentiable(x) for x in flat_p]
    flat_fun = _FlatFun(fun, in_tree, has_aux)
    lin = linearize_flat(lambda *a: flat_fun(*a), flat_p, differentiable)
    out_tree = flat_fun.out_tree
    primals_out = tree_unflatten(out_tree, [asarray_value(p) for p in lin.primals_out])

    def f_jvp(*tangents):
        flat_t, t_tree = tree_flatten(tangents)
        if t_tree != in_tree:
            raise user_error(TypeError, (
                f"linearize: tangents must have the structure of the primals, "
                f"{in_tree}; got {t_tree}"))
        for i, (p, t) in enumerate(zip(flat_p, flat_t)):
            _check_tangent(p, t, i)
        ins = [t for t, d in zip(flat_t, differentiable) if d]
        outs = iter(eval_jaxpr(lin.jaxpr.jaxpr, lin.jaxpr.consts, *ins))
        flat_out = [zeros_like_aval(a) if z else asarray_value(next(outs))
                    for z, a in zip(lin.zero_outputs, lin.out_avals)]
        return tree_unflatten(out_tree, flat_out)

    if has_aux:
        return primals_out, f_jvp, flat_fun.aux
    return primals_out, f_jvp


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of a linear function, traced at the shapes and dtypes of `primals`."""
    flat_p, in_tree = tree_flatten(primals)
    flat_fun = _FlatFun(fun, in_tree)
    out_avals, transpose_flat = linear_transpose_flat(flat_fun, [_abstractify(x) for x in flat_p])
    out_tree = flat_fun.out_tree

    def transposed(*cts):
        flat_ct, ct_tree = tree_flatten(cts[0] if len(cts) == 1 else cts)
        if ct_tree != out_tree:
            raise user_error(TypeError, (
                f"linear_transpose: cotangents must have the structure of the "
                f"output, {out_tree}; got {ct_tree}"))
        for i, (c, a) in enumerate(zip(flat_ct, out_avals)):
            _check_cotangent(c, a, i)
        return tree_unflatten(in_tree, transpose_flat(flat_ct))

    return transposed


def _one(aval):
    """The cotangent 1 of a scalar output."""
    one = _ones.get(aval)
    if one is None:
        one = caches.add(_ones, aval, core.Array(np.array(1, aval.dtype), aval.weak_type))
    return one


_ones = caches.memo("api.ones")  # aval -> its cotangent 1 (Arrays are immutable)


def _check_grad_inputs(name, args, holomorphic, allow_int, nums=None):
    """Raises for inputs grad cannot differentiate; returns their leaves, their tree, and
    whether they are all floating Arrays (the common case, checked without the paths only
    an error message needs)."""
    flat, tree = tree_flatten(args)
    if not holomorphic and not allow_int:
        for x in flat:
            if type(x) is not core.Array or x.aval.dtype.kind != "f":
                break
        else:
            return flat, tree, True
    for path, x in tree_flatten_with_path(args)[0]:
        where = ""
        if nums is not None and path:
            where = f" argument {nums[path[0].idx]}{keystr(tuple(path[1:]))}"
        try:
            dt = get_aval(x).dtype
        except TypeError:
            shown = repr(x) if len(repr(x)) <= 60 else repr(x)[:57] + "..."
            raise user_error(TypeError, (
                f"{name}:{where or ' an argument'} ({shown}) of type {type(x).__name__} is "
                "not a valid didax type: only arrays and Python numbers (and pytrees of them) "
                "can be differentiated.\nWhat to do: pass it through a closure "
                "(`grad(lambda x: f(x, other))`) or leave it out of argnums.")) from None
        if type(x) is Ref:
            raise user_error(TypeError, (
                f"{name}:{where or ' an argument'} is a mutable array reference "
                f"({x.aval!r}), and differentiating with respect to one is not supported.\n"
                "What to do: differentiate with respect to its value (pass ref[...]), or leave "
                "the reference out of argnums."))
        if holomorphic and dtypes.kind(dt) != "c":
            raise user_error(TypeError, f"{name} with holomorphic=True requires inputs with "
                             f"complex dtype, but got {dt.name}.")
        if dtypes.kind(dt) not in "fc" and not allow_int:
            raise user_error(TypeError, (
                f"{name} requires real- or complex-valued inputs (input dtype that is a "
                f"sub-dtype of np.inexact), but got {dt.name}{' for' + where if where else ''} "
                f"({get_aval(x).str_short()}).\nWhat to do: pass a float (`3.0`, "
                "`x.astype(jnp.float32)`); if you want to use Boolean- or integer-valued "
                "inputs, use vjp or set allow_int to True."))
    return flat, tree, False


def _leaf_type(x) -> str:
    try:
        return get_aval(x).str_short()
    except TypeError:
        return type(x).__name__


def _check_scalar_output(name, out, holomorphic, fun=None):
    leaves, tree = ([out], None) if type(out) is core.Array else tree_flatten(out)
    if tree is not None and (tree.num_leaves != 1 or leaves[0] is not out):
        kinds = ", ".join(_leaf_type(x) for x in leaves[:4]) + (", ..." if len(leaves) > 4
                                                              else "")
        fn = f" {function_site(fun)}" if fun is not None else ""
        raise user_error(TypeError, (
            f"{name}: gradient only defined for scalar-output functions, but the function"
            f"{fn} returned a {type(out).__name__} of {len(leaves)} value"
            f"{'s' if len(leaves) != 1 else ''} ({kinds}), not one scalar.\n"
            "What to do: return the scalar loss alone; to also return other values, return "
            "`(loss, aux)` and pass `has_aux=True`; for the derivatives of several outputs use "
            "`jacrev` or `vjp`."))
    aval = get_aval(out)
    if aval.shape != ():
        raise user_error(TypeError, (
            f"{name}: gradient only defined for scalar-output functions. Output had shape: "
            f"{aval.shape} ({aval.str_short()}). For a vector output use jacrev or vjp; to "
            "differentiate its sum or mean, return `jnp.sum(...)` or `jnp.mean(...)`."))
    if holomorphic and dtypes.kind(aval.dtype) != "c":
        raise user_error(TypeError, (
            f"{name} with holomorphic=True requires outputs with complex dtype, "
            f"but got {aval.dtype.name}."))
    if not holomorphic and dtypes.kind(aval.dtype) != "f":
        raise user_error(TypeError, (
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype "
            f"of np.floating), but got {aval.dtype.name}. For holomorphic "
            "differentiation, pass holomorphic=True. For differentiating non-"
            "holomorphic functions involving complex outputs, use jax.vjp directly."))


def value_and_grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False, reduce_axes=()):
    """`(fun(*args), gradient of fun with respect to args[argnums])`."""
    @functools.wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "grad", fun)
        dyn = tuple(args[i] for i in nums)
        flat_p, in_tree, floats = _check_grad_inputs("grad", dyn, holomorphic, allow_int, nums)

        def f_partial(*dyn_args):
            full = list(args)
            for i, v in zip(nums, dyn_args):
                full[i] = v
            return fun(*full, **kwargs)

        f_partial.__wrapped__ = fun  # errors name the user's function (`function_site`)
        # vjp's work, with the cotangent's structure known and the inputs checked above
        differentiable = ([True] * len(flat_p) if floats
                          else [_is_differentiable(x) for x in flat_p])
        flat_fun = _FlatFun(f_partial, in_tree, has_aux)
        lin, flat_p, eager = _linearize_for_vjp(flat_fun, flat_p, differentiable)
        out = tree_unflatten(flat_fun.out_tree, [asarray_value(p) for p in lin.primals_out])
        _check_scalar_output("grad", out, holomorphic, fun)
        aval = get_aval(out)  # (a scalar: checked above)
        cts_out = [] if lin.zero_outputs[0] else [_one(aval)]
        in_avals = [x.aval for x in flat_p] if floats else [get_aval(x) for x in flat_p]
        g = tree_unflatten(in_tree, _pull_back(lin, eager, cts_out, differentiable, in_avals))
        g = g[0] if isinstance(argnums, int) else g
        if has_aux:
            return (out, flat_fun.aux), g
        return out, g

    return value_and_grad_fun


def grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False, reduce_axes=()):
    """The gradient of a scalar function with respect to `args[argnums]`, by reverse mode."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_fun(*args, **kwargs):
        (out_aux, g) = vg(*args, **kwargs)
        return (g, out_aux[1]) if has_aux else g

    return grad_fun


# --------------------------------------------------------------------------------------
# vmap


def _axes_for_leaves(name, axes, tree, what, label=None):
    """`axes` (an int, None, or a pytree prefix of `tree`) broadcast to `tree`'s leaves."""
    try:
        return broadcast_prefix(axes, tree, is_leaf=lambda x: x is None)
    except ValueError:
        diff = first_difference(axes, tree, prefix=True, is_leaf=lambda x: x is None)
        detail = "" if diff is None else (
            f" At {label or name}{diff[0]} the specification is {diff[1]}, but the value is "
            f"{diff[2]}.")
        raise user_error(ValueError, (
            f"vmap {name} specification must be a tree prefix of the corresponding value: "
            f"{what}.{detail}\nWhat to do: give an int or None for a whole value, or a "
            "container with the value's own structure (same keys, same length) whose leaves "
            "are ints or None.")) from None


def _canonical_axis(axis, ndim, where):
    """`axis` of a value whose rank is `ndim + 1` (with the mapped axis), made non-negative."""
    if not isinstance(axis, int):
        raise user_error(TypeError, f"vmap axes must be integers or None, got {axis!r} for {where}")
    if not -ndim - 1 <= axis <= ndim:
        raise user_error(ValueError, (
            f"vmap was requested to map {where} along axis {axis}, which implies "
            f"that its rank should be at least {max(axis + 1, -axis)}, but it "
            f"is only {ndim + 1}"))
    return axis % (ndim + 1) if axis < 0 else axis


def _argument_name(path, keystr, params=()) -> str:
    """`argument 1 (`y`)['w']` or `keyword argument scale`, from a leaf's path in
    (args, kwargs) and the function's positional parameter names."""
    kind, first, rest = path[0], path[1], path[2:]
    key = getattr(first, "idx", getattr(first, "key", first))
    if getattr(kind, "idx", 0) == 0:
        named = f" (`{params[key]}`)" if isinstance(key, int) and key < len(params) else ""
        return f"argument {key}{named}{keystr(rest)}"
    return f"keyword argument {key}{keystr(rest)}"


def _positional_names(fun) -> tuple:
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in sig.parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorizes `fun` over a leading (or `in_axes`) dimension of its arguments."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or isinstance(in_axes, (int, tuple, dict)) or
            hasattr(in_axes, "__dataclass_fields__")):
        raise user_error(TypeError, "vmap in_axes must be an int, None, or a tuple of entries "
                        f"corresponding to the positional arguments, got {in_axes!r}")

    params = _positional_names(fun)

    @functools.wraps(fun)
    def vmapped(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise user_error(ValueError, (
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                f"the positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}: in_axes={in_axes!r} for "
                f"{function_site(fun)} called with {len(args)} positional argument"
                f"{'s' if len(args) != 1 else ''}.\nWhat to do: give one entry per positional "
                "argument (None for an argument that is not mapped), or a single int for all."))
        axes_args = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        paths, in_tree = tree_flatten_with_path((args, kwargs))
        flat = [x for _, x in paths]
        axes = []
        for i, (ax, arg) in enumerate(zip(axes_args, args)):
            what = f"in_axes[{i}] = {ax!r} does not match argument {i} " \
                   f"(of structure {tree_structure(arg)})"
            axes.extend(_axes_for_leaves("in_axes", ax, arg, what, f"in_axes[{i}]"))
        axes.extend([0] * (len(flat) - len(axes)))  # keyword arguments: axis 0
        names = [_argument_name(p, keystr, params) for p, _ in paths]
        sizes = {}
        canon = []
        for x, ax, nm in zip(flat, axes, names):
            _check_valid_leaf(x, "vmap", refs=True)
            if ax is None:
                canon.append(None)
                continue
            aval = get_aval(x)
            a = _canonical_axis(ax, aval.ndim - 1, f"{nm} of shape {aval.shape}")
            if a >= aval.ndim:
                raise user_error(ValueError, (
                    f"vmap was requested to map {nm} along axis {ax}, but it has "
                    f"rank {aval.ndim} (shape {aval.shape})"))
            canon.append(a)
            sizes.setdefault(aval.shape[a], []).append(
                f"axis {ax} of {nm} of type {aval.str_short()}")
        if axis_size is not None:
            sizes.setdefault(int(axis_size), []).append(f"axis_size={axis_size}")
        if not sizes:
            raise user_error(ValueError, (
                "vmap must have at least one non-None value in in_axes (or an "
                "axis_size)"))
        if len(sizes) > 1:
            lines = "\n".join(f"  * one axis had size {s}: {', '.join(w)}"
                              for s, w in sizes.items())
            raise user_error(ValueError, (
                f"vmap got inconsistent sizes for array axes to be mapped:\n{lines}"))
        (size,) = sizes
        flat_fun = _FlatFun(lambda a, k: fun(*a, **k), in_tree)
        interp = core.new_level(batching.BatchInterpreter(size, axis_name))
        with core.transformation(interp):
            ins = [interp.pack(x, a) for x, a in zip(flat, canon)]
            outs = [interp.unpack(o) for o in flat_fun(*ins)]
        out_tree = flat_fun.out_tree
        if out_axes is None or isinstance(out_axes, int):  # a whole-output spec: the output's
            o_axes = [out_axes] * len(outs)  # own pytrees are never rebuilt from placeholders
        else:
            o_axes = _axes_for_leaves(
                "out_axes", out_axes, tree_unflatten(out_tree, [0] * len(outs)),
                f"out_axes = {out_axes!r} does not match the output (of structure {out_tree})")
        results = []
        for (val, bdim), oa in zip(outs, o_axes):
            val = asarray_value(val)
            if oa is None:
                if bdim is not None:
                    raise user_error(ValueError, "vmap has mapped output but out_axes is None")
                results.append(val)
                continue
            aval = get_aval(val)
            ndim = aval.ndim + (bdim is None)
            oa = _canonical_axis(oa, ndim - 1, "an output")
            val = batching.matchaxis(val, bdim, oa, size)
            if get_aval(val).weak_type:  # vmap outputs are strongly typed, as in JAX
                val = convert_element_type(val, get_aval(val).dtype, False)
            results.append(val)
        return tree_unflatten(out_tree, results)

    return vmapped


# --------------------------------------------------------------------------------------
# Jacobians: one batched (vmap) pass of JVPs or VJPs over a basis


def _basis(avals):
    """The standard basis of the flattened leaves: for leaf k, an array (n, *shape_k)."""
    sizes = [int(np.prod(a.shape, dtype=np.int64)) for a in avals]
    n = sum(sizes)
    out, offset = [], 0
    for a, size in zip(avals, sizes):
        b = np.zeros((n, size), a.dtype)
        b[offset:offset + size] = np.eye(size, dtype=a.dtype)
        out.append(core.Array(b.reshape((n,) + a.shape)))
        offset += size
    return out, sizes


def _split_last(leaf, sizes, shapes, lead_shape):
    """Columns of `leaf` (..., n) split per input leaf and reshaped to lead + input shape."""
    out, offset = [], 0
    for size, shape in zip(sizes, shapes):
        block = slice_in_dim(leaf, offset, offset + size, axis=-1)
        out.append(reshape(block, tuple(lead_shape) + tuple(shape)))
        offset += size
    return out


def _jac_args(name, fun, argnums, args, kwargs, holomorphic, allow_int):
    nums = _argnums_tuple(argnums, len(args), name, fun)
    dyn = tuple(args[i] for i in nums)
    _check_grad_inputs(name, dyn, holomorphic, allow_int)

    @functools.wraps(fun, updated=())  # errors name the user's function
    def f_partial(*dyn_args):
        full = list(args)
        for i, v in zip(nums, dyn_args):
            full[i] = v
        return fun(*full, **kwargs)

    return dyn, f_partial


def jacfwd(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """Jacobian by forward mode: one batched JVP over the input basis."""
    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        dyn, f_partial = _jac_args("jacfwd", fun, argnums, args, kwargs, holomorphic, False)
        flat_in, in_tree = tree_flatten(dyn)
        in_avals = [get_aval(x) for x in flat_in]
        basis, sizes = _basis(in_avals)

        def push(*tangents):
            res = jvp(lambda *xs: f_partial(*tree_unflatten(in_tree, xs)), tuple(flat_in),
                      tuple(tangents), has_aux=has_aux)
            return res if has_aux else (res[0], res[1])

        res = vmap(push, out_axes=(None, -1, None) if has_aux else (None, -1))(*basis)
        out, jac_t = res[0], res[1]
        flat_out, out_tree = tree_flatten(out)
        flat_jac = tree_flatten(jac_t)[0]
        per_out = []
        for y, leaf in zip(flat_out, flat_jac):
            blocks = _split_last(leaf, sizes, [a.shape for a in in_avals], get_aval(y).shape)
            tree = tree_unflatten(in_tree, blocks)
            per_out.append(tree[0] if isinstance(argnums, int) else tree)
        jac = tree_unflatten(out_tree, per_out)
        return (jac, res[2]) if has_aux else jac

    return jacfun


def jacrev(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False):
    """Jacobian by reverse mode: one batched VJP over the output basis."""
    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        dyn, f_partial = _jac_args("jacrev", fun, argnums, args, kwargs, holomorphic, allow_int)
        res = vjp(f_partial, *dyn, has_aux=has_aux)
        out, pullback = res[0], res[1]
        flat_out, out_tree = tree_flatten(out)
        out_avals = [get_aval(y) for y in flat_out]
        basis, sizes = _basis(out_avals)
        rows = vmap(lambda *cts: pullback(tree_unflatten(out_tree, cts)))(*basis)
        flat_rows, in_tree = tree_flatten(rows)
        per_out, offset = [], 0
        for aval, size in zip(out_avals, sizes):
            blocks = []
            for leaf in flat_rows:
                block = slice_in_dim(leaf, offset, offset + size, axis=0)
                blocks.append(reshape(block, aval.shape + get_aval(leaf).shape[1:]))
            tree = tree_unflatten(in_tree, blocks)
            per_out.append(tree[0] if isinstance(argnums, int) else tree)
            offset += size
        jac = tree_unflatten(out_tree, per_out)
        return (jac, res[2]) if has_aux else jac

    return jacfun


jacobian = jacrev


def hessian(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """Second derivatives: forward mode over reverse mode."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
