"""Eager plans: shape operations on a concrete Array cost one NumPy call.

Outside transformations, on a concrete Array, a shape operation (reshape, transpose,
squeeze, expand_dims, broadcast_to, concatenate, stack) is one NumPy call on the Array's
buffer: the call its primitive's impl makes. What the general path works out from the static
arguments (the result's type, a permutation, a canonical axis) is remembered per
(operation, operand types, static arguments) as a plan, the first time the general path
succeeds for that key; errors are never remembered, so they are always the general path's,
and under any transformation (or on NumPy inputs, tracers, dtype conversions) the general
path runs every time, binding the same primitives as before.
"""
from __future__ import annotations

from didax._src import caches, core
from didax._src.base_prims import broadcast_value
from didax._src.config import config

__all__ = ["ctx", "EVAL", "Array", "from_numpy", "plans", "int_key", "remember",
           "remember_type", "broadcast_plan", "broadcast"]

ctx = core._ctx  # (`ctx.interp is EVAL`: this call evaluates now)
EVAL = core.eval_interpreter
Array = core.Array
from_numpy = core.Array.from_numpy
plans = caches.memo("numpy.shape_plans", limit=4096)  # key -> plan
config.on_change(lambda name, value: plans.clear())  # (x64 mode changes promotion)


def int_key(x):
    """`x` (an int, or a tuple or list of ints) as part of a plan key, or None: exact Python
    ints only, since 2.0 == 2 (and hashes alike) where the general path refuses floats."""
    t = type(x)
    if t is int:
        return x
    if t is tuple or t is list:
        for d in x:
            if type(d) is not int:
                return None
        return tuple(x) if t is list else x
    return None


def remember(key, plan) -> None:
    caches.add(plans, key, plan)


def remember_type(key, out):
    """Remembers the type of `out` (a reshape-like operation's result) as the plan for `key`
    if it was evaluated; returns `out`."""
    if type(out) is Array:
        caches.add(plans, key, out.aval)
    return out


def broadcast_plan(operand, out):
    """The plan of broadcasting an operand of type `operand` to type `out` (NumPy's
    broadcasting: leading dimensions added, size-1 ones stretched): the result type, and the
    operand's shape at the result's rank (broadcast_in_dim's `expanded`)."""
    return out, (1,) * (len(out.shape) - len(operand.shape)) + operand.shape


def broadcast(a, plan):
    """A broadcast plan applied to the Array `a`: broadcast_in_dim's NumPy value."""
    out, expanded = plan
    if out is None:
        return a
    return from_numpy(broadcast_value(a._value, expanded, out.shape), out)
