"""`checkify`: value checks (`check(pred, msg)`) inside transformed code, reported as an
error value.

`check` binds `check`, an effectful primitive without results: jit keeps it, vmap checks
every example at once, and derivatives pass it by (it constrains values, not derivatives).
It runs when its predicate is concrete (at once in eager code, inside the compiled function
under jit) and raises `JaxRuntimeError` with the formatted message where it is false.
`checkify(f)` returns `(error, out)`, turning such a failure of `f`'s run into `error` (and
running `f` again with checks off for `out`).

Difference from JAX: JAX threads the error through the program as a value, so
`jit(checkify(f))` returns it; here the failure is an exception caught at the call, so
checkify must be outside jit (checks inside a function jitted under checkify still work).
Only user checks exist: the automatic NaN, division and index checks are not implemented.
"""
from __future__ import annotations

import threading
import typing

import numpy as np

from didax._src import core
from didax._src.errors import JaxRuntimeError
from didax._src.interpreters import batching
from didax._src.tree_util import tree_flatten, tree_unflatten

__all__ = ["check", "checkify", "Error", "JaxRuntimeError", "user_checks", "all_checks",
           "automatic_checks", "nan_checks", "div_checks", "index_checks", "float_checks",
           "ErrorCategory", "UserCheckError", "NaNError", "DivisionByZeroError", "OOBError",
           "FailedCheckError", "check_error", "debug_check"]


class ErrorCategory:
    """A kind of check `checkify(errors=...)` can enable."""


class UserCheckError(ErrorCategory):
    pass


class NaNError(ErrorCategory):
    pass


class DivisionByZeroError(ErrorCategory):
    pass


class OOBError(ErrorCategory):
    pass


FailedCheckError = UserCheckError
JaxException = ErrorCategory  # (JAX's name for the base of the error categories)
Out = typing.TypeVar("Out")  # (what a checkified function returns, in annotations)
user_checks = frozenset({UserCheckError})
nan_checks = frozenset({NaNError})
div_checks = frozenset({DivisionByZeroError})
index_checks = frozenset({OOBError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


class CheckFailedError(JaxRuntimeError):
    """A failed `check` (a JaxRuntimeError, as JAX raises)."""


check_p = core.primitive("check", multiple_results=True)
check_p.def_traits(effectful=True)
check_p.pp_hidden = {"fmt_tree": core.PP_ALWAYS_HIDE}


class _Switch(threading.local):
    off = 0  # > 0 while checkify re-runs a failed function for its outputs


_switch = _Switch()


def _check_impl(pred, *fmt_vals, msg, fmt_tree):
    pred = np.asarray(pred)
    if not pred.all() and not _switch.off:
        args, kwargs = tree_unflatten(fmt_tree, [np.asarray(v) for v in fmt_vals])
        if pred.ndim:  # batched by vmap: report the first failing example
            first = int(np.argmin(pred.ravel()))
            args, kwargs = _example(args, kwargs, pred.shape, first)
        text = msg.format(*args, **kwargs) if (args or kwargs) else msg
        raise CheckFailedError(f"{text} (`check` failed)")
    return []


def _example(args, kwargs, shape, flat_index):
    index = np.unravel_index(flat_index, shape)

    def pick(v):
        v = np.asarray(v)
        return v[index] if v.shape[:len(shape)] == tuple(shape) else v
    return [pick(a) for a in args], {k: pick(v) for k, v in kwargs.items()}


def _check_batch(size, vals, dims, *, msg, fmt_tree):
    vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    check_p.bind(*vals, msg=msg, fmt_tree=fmt_tree)
    return [], []


def _check_jvp(primals, tangents, **params):
    check_p.bind(*primals, **params)
    return [], []


check_p.def_impl(_check_impl)
check_p.def_abstract_eval(lambda *avals, **params: [])
check_p.def_batch(_check_batch)
check_p.def_jvp(_check_jvp)
check_p.mark_absent("transpose", "check has no outputs: nothing to transpose")


def check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
    """Fails (a `JaxRuntimeError` with `msg.format(*fmt_args, **fmt_kwargs)`, or the error
    `checkify` returns) where the boolean `pred` is False."""
    if not isinstance(msg, str):
        raise TypeError(f"check: msg must be a string, got {type(msg).__name__}")
    flat, fmt_tree = tree_flatten((fmt_args, fmt_kwargs))
    check_p.bind(pred, *flat, msg=msg, fmt_tree=fmt_tree)


debug_check = check


class Error:
    """What `checkify` found: `get()` is the failure message or None, `throw()` raises it."""

    def __init__(self, message: str | None = None):
        self._message = message

    def get(self) -> str | None:
        return self._message

    def throw(self) -> None:
        if self._message is not None:
            raise JaxRuntimeError(self._message)

    def __repr__(self):
        return f"Error({self._message!r})" if self._message else "Error(no error)"


def check_error(error: Error) -> None:
    """Raises `error` if it holds a failure (a check of an error value)."""
    error.throw()


def checkify(f, errors=user_checks):
    """`f` returning `(error, out)`: a failed `check` in its run becomes `error` instead of
    an exception."""
    unsupported = set(errors) - set(user_checks)
    if unsupported:
        names = ", ".join(sorted(e.__name__ for e in unsupported))
        raise NotImplementedError(f"checkify: automatic checks ({names}) are not implemented; "
                                  "only user checks (checkify.user_checks) are")

    def checked(*args, **kwargs):
        try:
            return Error(None), f(*args, **kwargs)
        except CheckFailedError as e:
            error = Error(str(e))
        _switch.off += 1  # the outputs, computed as if the checks had passed
        try:
            return error, f(*args, **kwargs)
        finally:
            _switch.off -= 1
    return checked
