"""`debug.print` and `debug.callback`: Python at run time, inside jit, vmap and grad.

Both bind an effectful primitive with no outputs. Passes never remove, merge or fold it;
evaluation (eager or in generated code) calls back into Python with the values of that run.
Under JVP only primal values are passed on; under vmap the callback runs once per example
(as JAX does), in order.
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.config import config
from didax._src.config_states import float_checks
from didax._src.errors import user_location
from didax._src.interpreters import batching
from didax._src.tree_util import tree_flatten, tree_unflatten


def _make(name):
    p = core.primitive(name, multiple_results=True)
    p.def_traits(effectful=True)
    p.def_abstract_eval(lambda *avals, **params: [])
    p.def_jvp(lambda primals, tangents, **params: (p.bind(*primals, **params), []))

    def batch(size, vals, dims, **params):
        for i in range(size):
            p.bind(*[v if d is None else batching.moveaxis(v, d, 0)[i]
                     for v, d in zip(vals, dims)], **params)
        return [], []

    p.def_batch(batch)
    p.def_transpose(lambda cts, *args, **params: [None] * len(args))
    return p


debug_print_p = _make("debug_print")
debug_print_p.pp_hidden = {"in_tree": core.PP_ALWAYS_HIDE}
debug_callback_p = _make("debug_callback")
debug_callback_p.pp_hidden = {"callback": core.PP_ALWAYS_HIDE, "in_tree": core.PP_ALWAYS_HIDE}


def _arrays(vals):
    return [core.Array(np.asarray(v)) for v in vals]


def _print_impl(*vals, fmt, in_tree):
    args, kwargs = tree_unflatten(in_tree, _arrays(vals))
    print(fmt.format(*args, **kwargs))
    return []


def _callback_impl(*vals, callback, in_tree):
    args, kwargs = tree_unflatten(in_tree, _arrays(vals))
    callback(*args, **kwargs)
    return []


debug_print_p.def_impl(_print_impl)
debug_callback_p.def_impl(_callback_impl)


def debug_print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:
    """Prints `fmt.format(*args, **kwargs)` with the values the arrays have when the program
    runs (inside jit too, unlike Python's print, which sees tracers at trace time)."""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a string, got {type(fmt).__name__}")
    flat, in_tree = tree_flatten((args, kwargs))
    debug_print_p.bind(*flat, fmt=fmt, in_tree=in_tree)


def debug_callback(callback, *args, ordered: bool = False, **kwargs) -> None:
    """Calls `callback(*args, **kwargs)` with concrete arrays at run time; returns nothing."""
    if not callable(callback):
        raise TypeError(f"debug.callback: expected a function, got {callback!r}")
    flat, in_tree = tree_flatten((args, kwargs))
    debug_callback_p.bind(*flat, callback=callback, in_tree=in_tree)


# --------------------------------------------------------------------------------------
# jax_debug_nans, jax_debug_infs: eager evaluation checks every floating-point result while
# either is on
# (generated code checks after each equation: see compiler/numpy_tier.py).

_plain_process = core.EvalInterpreter.process_primitive


def _checking_process(self, prim, args, params):
    out = _plain_process(self, prim, args, params)
    nans, infs = float_checks()
    for o in (out if prim.multiple_results else (out,)):
        v = o._value
        if dtypes.kind(v.dtype) not in "fc":
            continue
        for what, test, on in (("nan", np.isnan, nans), ("inf", np.isinf, infs)):
            if not on or not test(v).any():
                continue
            if any(type(a) is core.Array and dtypes.kind(a._value.dtype) in "fc"
                   and test(a._value).any() for a in args):
                continue  # NaN in, NaN out: the first NaN was reported where it appeared
            raise FloatingPointError(
                f"invalid value ({what}) encountered in {prim.name} at {user_location(3)} "
                f"(jax_debug_{what}s is on)")
    return out


def _on_config_change(name, value):
    if name in ("jax_debug_nans", "jax_debug_infs"):
        checking = any(float_checks())
        cls = core.EvalInterpreter
        cls.process_primitive = _checking_process if checking else _plain_process
        # (jnp's arithmetic calls these directly: while checking, through process_primitive)
        cls.process_pair = core.Interpreter.process_pair if checking else cls._fast_pair
        cls.process_one = core.Interpreter.process_one if checking else cls._fast_one



config.on_change(_on_config_change)
_on_config_change("jax_debug_nans", config.jax_debug_nans)  # (and jax_debug_infs)
