"""`jax.extend.linear_util`: functions wrapped with a stack of transformations, the form in
which libraries hand functions to JAX's tracing entry points (flax, numpyro).

A `WrappedFun` is a Python function and the transformations applied to it, outermost last;
`call_wrapped` runs them. A transformation is a function `t(f, *static, *args)` that calls
`f` (the inner function) itself; one "with aux" also gets a `Store` to put a side result in,
read after the call through the thunk it returns. didax's own tracing takes plain callables,
so these are only the calling convention libraries expect, with no caching of their own.
"""
from __future__ import annotations

import functools

__all__ = ["Store", "EqualStore", "WrappedFun", "wrap_init", "transformation2",
           "transformation_with_aux2", "merge_linear_aux"]


class Store:
    """One value, stored once by a transformation and read after the call."""

    __slots__ = ("_val",)
    _EMPTY = object()

    def __init__(self):
        self._val = Store._EMPTY

    def store(self, val):
        if self._val is not Store._EMPTY:
            raise RuntimeError("Store occupied: the wrapped function ran twice without being "
                               "wrapped again")
        self._val = val

    def reset(self):
        self._val = Store._EMPTY

    @property
    def val(self):
        if self._val is Store._EMPTY:
            raise RuntimeError("Store empty: the wrapped function has not run yet")
        return self._val

    def __bool__(self):
        return self._val is not Store._EMPTY


class EqualStore(Store):
    """A store that may be written again with an equal value (a function traced twice)."""

    def store(self, val):
        if self and self._val != val:
            raise RuntimeError(f"EqualStore: {val!r} differs from the stored {self._val!r}")
        self._val = val


class WrappedFun:
    """`f` with transformations (each `(t, static_args)`, innermost first) and the keyword
    arguments it is called with (`params`)."""

    __slots__ = ("f", "transforms", "stores", "params", "debug_info", "in_type")

    def __init__(self, f, transforms, stores, params, debug_info=None, in_type=None):
        self.f = f
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.debug_info = debug_info
        self.in_type = in_type

    @property
    def __name__(self):
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    def wrap(self, t, static_args, store=None) -> WrappedFun:
        return WrappedFun(self.f, self.transforms + ((t, static_args),),
                          self.stores + (store,), self.params, self.debug_info,
                          self.in_type)

    def call_wrapped(self, *args, **kwargs):
        fun = functools.partial(self.f, **dict(self.params)) if self.params else self.f
        for (t, static), store in zip(self.transforms, self.stores):
            if store is not None:
                store.reset()
                fun = functools.partial(t, fun, store, *static)
            else:
                fun = functools.partial(t, fun, *static)
        return fun(*args, **kwargs)

    __call__ = call_wrapped

    def with_unknown_names(self) -> WrappedFun:
        return self

    def __repr__(self):
        names = ", ".join(getattr(t, "__name__", str(t)) for t, _ in self.transforms)
        return f"WrappedFun({self.__name__}{', ' + names if names else ''})"


def wrap_init(f, params=None, *, debug_info=None) -> WrappedFun:
    """`f` with no transformations; `params` are keyword arguments every call passes."""
    return WrappedFun(f, (), (), tuple(sorted((params or {}).items())), debug_info)


def transformation2(t, fun: WrappedFun, *static_args) -> WrappedFun:
    """`fun` transformed by `t(f, *static_args, *args, **kwargs)`."""
    return fun.wrap(t, static_args)


def transformation_with_aux2(t, fun: WrappedFun, *static_args, use_eq_store=False):
    """`fun` transformed by `t(f, store, *static_args, *args)`, and a thunk giving what `t`
    stored during the last call."""
    store = EqualStore() if use_eq_store else Store()
    return fun.wrap(t, static_args, store), lambda: store.val


def merge_linear_aux(aux1, aux2):
    """The one of two stores' thunks that ran (a function traced on one of two paths)."""
    try:
        out1 = aux1()
    except RuntimeError:
        return False, aux2()
    try:
        aux2()
    except RuntimeError:
        return True, out1
    raise RuntimeError("merge_linear_aux: both stores are full")
