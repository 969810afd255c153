"""User-facing transformations: jvp, make_jaxpr, eval_shape, jacfwd.

Each one flattens pytree arguments, runs an interpreter over the flat function, and
rebuilds the outputs' structure.
"""
from __future__ import annotations

import functools

import numpy as np

from didax._src import core, dtypes
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.tree_util import tree_flatten, tree_unflatten


def asarray_value(x):
    """Outputs of transformations are Arrays (or tracers), never bare Python scalars."""
    if isinstance(x, core.ArrayBase):
        return x
    aval = get_aval(x)
    return core.Array(np.asarray(x, aval.dtype), aval.weak_type)


def _check_valid_leaf(x, what: str):
    if isinstance(x, core.ArrayBase) or isinstance(x, (np.ndarray, np.generic, bool, int, float,
                                                       complex)):
        return
    raise TypeError(f"{what}: argument of type {type(x).__name__} is not a valid didax type "
                    f"(got {x!r}); pass arrays, NumPy arrays, Python scalars, or pytrees of them.")


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
                raise TypeError("a function with has_aux=True must return a pair (out, aux), got "
                                f"{type(out).__name__}")
            out, self.aux = out
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
        raise ValueError(f"jvp: primal and tangent arguments must have the same shape; "
                         f"argument {i} has primal shape {pa.shape} and tangent shape {ta.shape}")
    if ta.dtype != expected.dtype:
        raise TypeError(f"jvp: primal and tangent arguments must have matching dtypes; argument "
                        f"{i} has primal dtype {pa.dtype.name}, so its tangent must have dtype "
                        f"{expected.dtype.name if expected.dtype != dtypes.float0 else 'float0'}"
                        f", got {ta.dtype.name}")


def jvp(fun, primals, tangents, has_aux: bool = False):
    """Forward-mode derivative: `(fun(*primals), J(primals) @ tangents)`."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists of arguments, got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    flat_p, tree_p = tree_flatten(tuple(primals))
    flat_t, tree_t = tree_flatten(tuple(tangents))
    if tree_p != tree_t:
        raise TypeError(f"jvp: primal and tangent arguments must have the same tree structure; "
                        f"got {tree_p} and {tree_t}")
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
    out_t = [jvp_interp.instantiate(t) if type(t) is Zero else asarray_value(t) for t in out_t]
    primals_out = tree_unflatten(flat_fun.out_tree, out_p)
    tangents_out = tree_unflatten(flat_fun.out_tree, out_t)
    if has_aux:
        return primals_out, tangents_out, flat_fun.aux
    return primals_out, tangents_out


# --------------------------------------------------------------------------------------
# Staging: make_jaxpr, eval_shape


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (as in `jax.ShapeDtypeStruct`)."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    @property
    def aval(self):
        return ShapedArray(self.shape, dtypes.canonicalize_dtype(self.dtype), self.weak_type)

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))


def _abstractify(x):
    if isinstance(x, ShapeDtypeStruct):
        return x.aval
    _check_valid_leaf(x, "make_jaxpr")
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

    def f(*a, **k):
        return fun(*a, **k)

    flat_fun = _FlatFun(lambda a, k: f(*a, **k), in_tree)
    closed, _ = trace_to_jaxpr(flat_fun, avals)
    shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in closed.jaxpr.out_avals]
    return tree_unflatten(flat_fun.out_tree, shapes)


# --------------------------------------------------------------------------------------
# jacfwd (a loop of jvps over basis vectors for now; vmap will batch it)


def _argnums_tuple(argnums, nargs, name):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(f"{name}: argnums {argnums} out of range for {nargs} positional "
                             "arguments")
    return nums


def _std_basis_tangents(flat_in):
    """For each input scalar, the tangent that is 1 there and 0 elsewhere."""
    sizes = [int(np.prod(get_aval(x).shape, dtype=np.int64)) for x in flat_in]
    for k, x in enumerate(flat_in):
        aval = get_aval(x)
        for j in range(sizes[k]):
            ts = []
            for m, y in enumerate(flat_in):
                ya = get_aval(y)
                t = np.zeros(ya.shape, ya.dtype)
                if m == k:
                    t.reshape(-1)[j] = 1
                ts.append(core.Array(t))
            yield k, j, aval, ts


def jacfwd(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """Jacobian by forward mode: one JVP per input element, stacked."""
    from didax._src.numpy import lax_numpy as jnp

    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        diff_args = tuple(args[i] for i in nums)
        flat_in, in_tree = tree_flatten(diff_args)
        for x in flat_in:
            dt = get_aval(x).dtype
            if not holomorphic and not np.issubdtype(dt, np.floating):
                raise TypeError(f"jacfwd requires real-valued (floating) inputs, got {dt.name}. "
                                "For integer inputs use jvp; for complex use holomorphic=True.")

        def f_flat(*flat):
            new = list(args)
            for i, v in zip(nums, tree_unflatten(in_tree, flat)):
                new[i] = v
            return fun(*new, **kwargs)

        columns = [[] for _ in flat_in]  # per input: the flat output tangents, per element
        out_primal = aux = None
        for k, j, aval, ts in _std_basis_tangents(flat_in):
            res = jvp(f_flat, tuple(flat_in), tuple(ts), has_aux=has_aux)
            out_primal, tangent = res[0], res[1]
            if has_aux:
                aux = res[2]
            columns[k].append(tree_flatten(tangent)[0])
        if out_primal is None:  # no input elements: still need the output structure
            out_primal = f_flat(*flat_in)
            if has_aux:
                out_primal, aux = out_primal
        flat_out, out_tree = tree_flatten(out_primal)
        # jac[out][in] has shape out.shape + in.shape
        per_out = []
        for o, y in enumerate(flat_out):
            y_shape = get_aval(y).shape
            blocks = []
            for k, x in enumerate(flat_in):
                x_shape = get_aval(x).shape
                if columns[k]:
                    stacked = jnp.stack([c[o] for c in columns[k]], axis=-1)
                    blocks.append(jnp.reshape(stacked, y_shape + x_shape))
                else:
                    blocks.append(jnp.zeros(y_shape + x_shape, get_aval(y).dtype))
            per_out.append(tree_unflatten(in_tree, blocks))
        jac = [p if not isinstance(argnums, int) else p[0] for p in per_out]
        result = tree_unflatten(out_tree, jac)
        return (result, aux) if has_aux else result

    return jacfun

