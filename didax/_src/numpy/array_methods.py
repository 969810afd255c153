"""Operators and methods of arrays and tracers, defined once in terms of didax.numpy.

They are installed on `core.ArrayBase`, so a concrete Array and every kind of tracer
behave identically; what an operation *means* is decided by the current interpreter.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.core import ArrayBase, get_aval
from didax._src.numpy.eager_indexing import getitem as eager_getitem
from didax._src.numpy.indexing import IndexUpdateHelper, rewriting_take
from didax._src.numpy.util import operand_or_none


def _operator(fn):
    """`fn` as an array's operator: NotImplemented for operand types arrays do not know, so
    the other operand's reflected operator runs (lineax's `x ** ω`)."""
    op = getattr(fn, "operator", None)
    if op is not None:
        return op

    def op(x1, x2):
        if isinstance(x1, ArrayBase) and isinstance(x2, ArrayBase):  # (the common case)
            return fn(x1, x2)
        y1, y2 = operand_or_none(x1), operand_or_none(x2)
        if y1 is None or y2 is None:
            return NotImplemented
        return fn(y1, y2)

    return op


def _reflected(fn):
    op = _operator(fn)
    return lambda self, other: op(other, self)


def _comparison(fn):
    """`==` and `!=` refuse containers (which Python would otherwise compare by identity,
    answering a silent False) and defer to other unknown types."""
    op = _operator(fn)

    def compare(self, other):
        if type(other) in (dict, list, set, tuple):
            raise TypeError(f"unsupported operand type(s) for {fn.__name__}: "
                            f"{type(self).__name__!r} and {type(other).__name__!r}; use "
                            "jnp.asarray(other) to compare with a container's values")
        return op(self, other)

    return compare


def _reshape(self, *args, order="C"):
    shape = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
    return _jnp.reshape(self, shape, order=order)


def _transpose(self, *args):
    axes = args[0] if len(args) == 1 and not isinstance(args[0], int) else (args or None)
    return _jnp.transpose(self, axes)


def _T(self):
    return _jnp.transpose(self)  # (the module itself: `T` is read as often as arithmetic)


def _astype(self, dtype, copy=False, device=None):
    return _jnp.asarray(self, dtype=dtype)


def _at(self):
    return IndexUpdateHelper(self)


def _getitem(self, idx):
    """NumPy's own indexing of a concrete array outside transformations, else the primitives
    (`eager_indexing.getitem` declines with None where it cannot tell they agree); a traced
    mutable array reference reads through its type (state/types.py)."""
    out = eager_getitem(self, idx)  # (declines for any tracer: a reference's is one)
    if out is not None:
        return out
    aval = self.aval
    if type(aval) is not core.ShapedArray:
        return aval._getitem(self, idx)
    return rewriting_take(self, idx)


def _itemsize(self):
    return get_aval(self).dtype.itemsize


def _nbytes(self):
    aval = get_aval(self)
    return aval.dtype.itemsize * int(np.prod(aval.shape, dtype=np.int64))


_jnp = None


def _missing(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"didax.numpy.{name} is not implemented yet")

    return fn


def install(jnp) -> None:
    """Attach operators and methods to ArrayBase; `jnp` is the didax.numpy namespace."""
    global _jnp
    _jnp = jnp

    module = jnp

    class _Namespace:
        def __getattr__(self, name):
            fn = getattr(module, name, None)
            return fn if fn is not None else _missing(name)

    jnp = _Namespace()
    ops = {
        "__add__": _operator(jnp.add), "__radd__": _reflected(jnp.add),
        "__sub__": _operator(jnp.subtract), "__rsub__": _reflected(jnp.subtract),
        "__mul__": _operator(jnp.multiply), "__rmul__": _reflected(jnp.multiply),
        "__truediv__": _operator(jnp.true_divide), "__rtruediv__": _reflected(jnp.true_divide),
        "__floordiv__": _operator(jnp.floor_divide), "__rfloordiv__": _reflected(jnp.floor_divide),
        "__mod__": _operator(jnp.remainder), "__rmod__": _reflected(jnp.remainder),
        "__divmod__": _operator(jnp.divmod), "__rdivmod__": _reflected(jnp.divmod),
        "__pow__": _operator(jnp.power), "__rpow__": _reflected(jnp.power),
        "__matmul__": _operator(jnp.matmul), "__rmatmul__": _reflected(jnp.matmul),
        "__and__": _operator(jnp.bitwise_and), "__rand__": _reflected(jnp.bitwise_and),
        "__or__": _operator(jnp.bitwise_or), "__ror__": _reflected(jnp.bitwise_or),
        "__xor__": _operator(jnp.bitwise_xor), "__rxor__": _reflected(jnp.bitwise_xor),
        "__lshift__": _operator(jnp.left_shift), "__rlshift__": _reflected(jnp.left_shift),
        "__rshift__": _operator(jnp.right_shift), "__rrshift__": _reflected(jnp.right_shift),
        "__eq__": _comparison(jnp.equal), "__ne__": _comparison(jnp.not_equal),
        "__lt__": _operator(jnp.less), "__le__": _operator(jnp.less_equal),
        "__gt__": _operator(jnp.greater), "__ge__": _operator(jnp.greater_equal),
        "__neg__": jnp.negative, "__pos__": jnp.positive, "__abs__": jnp.absolute,
        "__invert__": jnp.invert,
        "__round__": lambda self, ndigits=None: jnp.round(self, ndigits or 0),
        "__getitem__": _getitem,
    }
    swapaxes, ravel = jnp.swapaxes, jnp.ravel  # (looked up once: methods are hot)
    methods = {
        "astype": _astype, "reshape": _reshape, "transpose": _transpose,
        "T": property(_T),
        "mT": property(lambda self: swapaxes(self, -1, -2)),
        "at": property(_at),
        "real": property(jnp.real), "imag": property(jnp.imag),
        "itemsize": property(_itemsize), "nbytes": property(_nbytes),
        "flatten": lambda self, order="C": ravel(self, order),
        "ravel": lambda self, order="C": ravel(self, order),
        "conj": jnp.conjugate, "conjugate": jnp.conjugate,
        "compress": lambda self, condition, axis=None: jnp.compress(condition, self, axis),
    }
    for name in ("sum", "prod", "mean", "max", "min", "std", "var", "argmax", "argmin", "any",
                 "all", "cumsum", "cumprod", "ptp", "squeeze", "swapaxes", "clip", "round",
                 "dot", "nonzero", "sort", "argsort", "take", "repeat", "diagonal", "trace",
                 "searchsorted", "argpartition", "choose"):
        fn = getattr(jnp, name, None)
        if fn is not None:
            methods[name] = fn
    for name, fn in {**ops, **methods}.items():
        setattr(ArrayBase, name, fn)
    # Array defines its own fast shape properties; keep those.
    core.Array.__hash__ = None
