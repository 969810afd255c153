"""`jax.api_util`: flattening wrapped functions to flat arguments and results, and the
debugging information JAX's tracing entry points take (flax, numpyro)."""
from __future__ import annotations

import inspect

from didax._src.compat.linear_util import WrappedFun, transformation_with_aux2
from didax._src.core import get_aval
from didax._src.errors import function_site
from didax._src.tree_util import tree_flatten, tree_unflatten

__all__ = ["DebugInfo", "debug_info", "flatten_fun", "flatten_fun_nokwargs", "fun_signature",
           "safe_map", "safe_zip", "shaped_abstractify"]


class DebugInfo:
    """What tracing a function tells an error message: who traced it, where the function is
    defined, its arguments' names and (once traced) its results' paths."""

    __slots__ = ("traced_for", "func_src_info", "arg_names", "result_paths")

    def __init__(self, traced_for, func_src_info, arg_names, result_paths=None):
        self.traced_for = traced_for
        self.func_src_info = func_src_info
        self.arg_names = tuple(arg_names) if arg_names is not None else None
        self.result_paths = result_paths

    @property
    def func_name(self) -> str:
        return (self.func_src_info or "<unknown>").split(" ")[0]

    def with_unknown_names(self) -> DebugInfo:
        return DebugInfo(self.traced_for, self.func_src_info, None, None)

    def resolve_result_paths(self) -> DebugInfo:
        paths = self.result_paths() if callable(self.result_paths) else self.result_paths
        return DebugInfo(self.traced_for, self.func_src_info, self.arg_names, paths)

    def __repr__(self):
        return (f"DebugInfo(traced_for={self.traced_for!r}, func_src_info="
                f"{self.func_src_info!r}, arg_names={self.arg_names!r})")


def fun_signature(fun) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (ValueError, TypeError):
        return None


def debug_info(traced_for: str, fun, args, kwargs, *, static_argnums=(), static_argnames=(),
               result_paths_thunk=None, sourceinfo=None, signature=None) -> DebugInfo:
    """The debugging information of tracing `fun(*args, **kwargs)` for `traced_for`."""
    if sourceinfo is None:
        sourceinfo = function_site(fun)
    signature = signature if signature is not None else fun_signature(fun)
    names = None
    if signature is not None:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            bound = None
        if bound is not None:
            static = set(static_argnums) | set(static_argnames)
            names = []
            for i, (name, value) in enumerate(bound.arguments.items()):
                if i in static or name in static:
                    continue
                leaves, _ = tree_flatten(value)
                names.extend([name] * len(leaves))
    return DebugInfo(traced_for, sourceinfo, names, result_paths_thunk)


def _flatten_fun(f, store, in_tree, *args_flat):
    py_args, py_kwargs = tree_unflatten(in_tree, args_flat)
    out, out_tree = tree_flatten(f(*py_args, **py_kwargs))
    store.store(out_tree)
    return out


def flatten_fun(f: WrappedFun, in_tree):
    """`f` taking the leaves of `(args, kwargs)` (structure `in_tree`) and returning its
    result's leaves; and a thunk giving the result's structure after a call."""
    return transformation_with_aux2(_flatten_fun, f, in_tree)


def _flatten_fun_nokwargs(f, store, in_tree, *args_flat):
    out, out_tree = tree_flatten(f(*tree_unflatten(in_tree, args_flat)))
    store.store(out_tree)
    return out


def flatten_fun_nokwargs(f: WrappedFun, in_tree):
    """As `flatten_fun`, with `in_tree` the structure of the positional arguments alone."""
    return transformation_with_aux2(_flatten_fun_nokwargs, f, in_tree)


def safe_map(f, *args):
    """`map` that refuses sequences of different lengths."""
    args = list(map(list, args))
    n = len(args[0])
    for a in args[1:]:
        if len(a) != n:
            raise ValueError(f"safe_map: length mismatch: {[len(x) for x in args]}")
    return list(map(f, *args))


def safe_zip(*args):
    """`zip` that refuses sequences of different lengths."""
    args = list(map(list, args))
    n = len(args[0])
    for a in args[1:]:
        if len(a) != n:
            raise ValueError(f"safe_zip: length mismatch: {[len(x) for x in args]}")
    return list(zip(*args))


def shaped_abstractify(x):
    """The type (ShapedArray) of an array or scalar."""
    return get_aval(x)
