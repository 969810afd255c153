"""`pure_callback`: call back into Python (NumPy) from traced code, with declared result types.

The callback is a primitive whose impl runs the Python function on NumPy arrays and checks
what it returns against `result_shape_dtypes`, so it works under jit (generated code calls
it), under vmap (once per example, or on the whole batch with `vmap_method=
"expand_dims"`/"broadcast_all"), and is not differentiable (as in JAX: wrap it in
`custom_jvp` to give it a derivative).
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.core import ShapedArray
from didax._src.interpreters import batching
from didax._src.lax.shape import concatenate, expand_dims
from didax._src.tree_util import tree_flatten, tree_unflatten

pure_callback_p = core.primitive("pure_callback", multiple_results=True)
pure_callback_p.pp_hidden = {"callback": core.PP_ALWAYS_HIDE, "in_tree": core.PP_ALWAYS_HIDE,
                             "out_tree": core.PP_ALWAYS_HIDE}


def _impl(*vals, callback, in_tree, out_tree, result_avals, vmap_method, what="pure_callback"):
    args, kwargs = tree_unflatten(in_tree, [np.asarray(v) for v in vals])
    out = callback(*args, **kwargs)
    leaves, tree = tree_flatten(out)
    if tree != out_tree:
        raise TypeError(f"{what}: the callback returned the structure {tree}, but "
                        f"result_shape_dtypes declares {out_tree}")
    results = []
    for i, (x, aval) in enumerate(zip(leaves, result_avals)):
        x = np.asarray(x)
        if x.shape != aval.shape or x.dtype != aval.dtype:
            raise TypeError(
                f"{what}: result {i} of the callback has type "
                f"{x.dtype.name}{list(x.shape)}, but result_shape_dtypes declares "
                f"{aval.str_short()}")
        results.append(x)
    return results


def _batch(size, vals, dims, *, callback, in_tree, out_tree, result_avals, vmap_method):
    if vmap_method in ("expand_dims", "broadcast_all"):
        if vmap_method == "broadcast_all":
            vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
        else:
            vals = [expand_dims(v, (0,)) if d is None else batching.moveaxis(v, d, 0)
                    for v, d in zip(vals, dims)]
        avals = tuple(ShapedArray((size, *a.shape), a.dtype) for a in result_avals)
        outs = pure_callback_p.bind(*vals, callback=callback, in_tree=in_tree,
                                    out_tree=out_tree, result_avals=avals,
                                    vmap_method=vmap_method)
        return outs, [0] * len(outs)
    if vmap_method not in (None, "sequential"):
        raise NotImplementedError(f"pure_callback: vmap_method={vmap_method!r} is not supported; "
                                  "use 'sequential', 'expand_dims' or 'broadcast_all'")
    return _call_per_example(pure_callback_p, size, vals, dims, dict(
        callback=callback, in_tree=in_tree, out_tree=out_tree, result_avals=result_avals,
        vmap_method=vmap_method))


def _call_per_example(prim, size, vals, dims, params):
    """A callback's batching by one call per example, in order, results stacked."""
    per_example = []
    for i in range(size):
        args = [v if d is None else batching.moveaxis(v, d, 0)[i] for v, d in zip(vals, dims)]
        per_example.append(prim.bind(*args, **params))
    outs = [concatenate([expand_dims(ex[k], (0,)) for ex in per_example], 0)
            for k in range(len(params["result_avals"]))]
    return outs, [0] * len(outs)


def _not_differentiable(what):
    def jvp(primals, tangents, **params):
        raise ValueError(f"{what} functions are not differentiable; give the function a "
                         "derivative with didax.custom_jvp (or custom_vjp) around the callback")
    return jvp


pure_callback_p.def_impl(_impl)
pure_callback_p.def_abstract_eval(lambda *avals, result_avals, **params: list(result_avals))
pure_callback_p.def_batch(_batch)
pure_callback_p.def_jvp(_not_differentiable("pure_callback"))


def _flat_call(name, callback, result_shape_dtypes, args, kwargs):
    """A callback call's result types and tree, and its flat arguments and their tree."""
    if not callable(callback):
        raise TypeError(f"{name}: expected a function, got {callback!r}")
    shapes, out_tree = tree_flatten(result_shape_dtypes)
    result_avals = tuple(ShapedArray(s.shape, dtypes.canonicalize_dtype(np.dtype(s.dtype)))
                         for s in shapes)
    flat, in_tree = tree_flatten((args, kwargs))
    return result_avals, out_tree, flat, in_tree


def pure_callback(callback, result_shape_dtypes, *args, vmap_method=None, **kwargs):
    """Calls `callback(*args, **kwargs)` on NumPy arrays at run time; it must return arrays of
    the shapes and dtypes of `result_shape_dtypes` (a pytree of objects with .shape/.dtype)."""
    result_avals, out_tree, flat, in_tree = _flat_call("pure_callback", callback,
                                                       result_shape_dtypes, args, kwargs)
    outs = pure_callback_p.bind(*flat, callback=callback, in_tree=in_tree, out_tree=out_tree,
                                result_avals=result_avals, vmap_method=vmap_method)
    return tree_unflatten(out_tree, outs)


# -- io_callback: a callback with side effects -------------------------------------------------

io_callback_p = core.primitive("io_callback", multiple_results=True)
io_callback_p.pp_hidden = dict(pure_callback_p.pp_hidden)
io_callback_p.def_traits(effectful=True)  # jit keeps it even when its results are unused


def _io_impl(*vals, callback, in_tree, out_tree, result_avals, ordered):
    return _impl(*vals, callback=callback, in_tree=in_tree, out_tree=out_tree,
                 result_avals=result_avals, vmap_method=None, what="io_callback")


def _io_batch(size, vals, dims, *, callback, in_tree, out_tree, result_avals, ordered):
    if ordered:
        raise ValueError("io_callback with ordered=True cannot be vmapped: the order of the "
                         "calls for the examples is not defined; use ordered=False")
    return _call_per_example(io_callback_p, size, vals, dims, dict(
        callback=callback, in_tree=in_tree, out_tree=out_tree, result_avals=result_avals,
        ordered=ordered))


io_callback_p.def_impl(_io_impl)
io_callback_p.def_abstract_eval(lambda *avals, result_avals, **params: list(result_avals))
io_callback_p.def_batch(_io_batch)
io_callback_p.def_jvp(_not_differentiable("io_callback"))


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False,
                **kwargs):
    """Like `pure_callback`, for a callback with side effects: jit never drops, merges or
    pre-computes it; under vmap it runs once per example."""
    result_avals, out_tree, flat, in_tree = _flat_call("io_callback", callback,
                                                       result_shape_dtypes, args, kwargs)
    outs = io_callback_p.bind(*flat, callback=callback, in_tree=in_tree, out_tree=out_tree,
                              result_avals=result_avals, ordered=bool(ordered))
    return tree_unflatten(out_tree, outs)
