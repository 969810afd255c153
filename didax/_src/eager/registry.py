"""The functions libraries declare steps of eager reverse mode: `@step`.

A library marks a pure function of arrays and static arguments whose traced application
computes what its eager one does (jnp's arithmetic, reductions and products, nn's
activations and softmaxes) with `step`, and never names an interpreter. Under an eager `vjp`
(`vjp.EagerVJPInterpreter.apply_step`) a call of such a function is one step, linearized once
per signature and compiled, its Python run only to build it; anywhere else it runs as it is.
"""
from __future__ import annotations

import functools
import inspect

from didax._src import core
from didax._src.eager.vjp import EagerVJPInterpreter

_ctx = core._ctx
_NO_KEYWORDS: dict = {}


def step(fn):
    """Declares `fn` a step of eager reverse mode; returns the function libraries export.

    A function of one or two positional-only parameters (the ufuncs) gets a wrapper of the
    same parameters: no packing of arguments on the eager path, the hottest there is."""
    arity = _positional_arity(fn)
    if arity == 1:
        def wrapper(x, /):
            interp = _ctx.interp
            if type(interp) is EagerVJPInterpreter:
                return interp.apply_step(fn, (x,), _NO_KEYWORDS)
            return fn(x)
    elif arity == 2:
        def wrapper(x1, x2, /):
            interp = _ctx.interp
            if type(interp) is EagerVJPInterpreter:
                return interp.apply_step(fn, (x1, x2), _NO_KEYWORDS)
            return fn(x1, x2)
    else:
        def wrapper(*args, **kwargs):
            interp = _ctx.interp
            if type(interp) is EagerVJPInterpreter:
                return interp.apply_step(fn, args, kwargs)
            return fn(*args, **kwargs)
    return functools.wraps(fn)(wrapper)


def _positional_arity(fn) -> int | None:
    """The number of parameters of `fn` if all are positional-only without defaults."""
    if not inspect.isfunction(fn):
        return None
    params = inspect.signature(fn).parameters.values()
    if all(p.kind is p.POSITIONAL_ONLY and p.default is p.empty for p in params):
        return len(params)
    return None
