"""`vectorize` and `apply_along_axis`: loops over array axes written as nested `vmap`s, so the
function runs once on batched values instead of once per element."""
from __future__ import annotations

import functools
import re

import numpy as np

from didax._src.numpy.shape_ops import broadcast_to
from didax._src.numpy.util import asarray, check_arraylike
from didax._src.transforms.api import vmap

__all__ = ["vectorize", "apply_along_axis"]

_NAME = r"\w+"
_CORE = rf"\((?:{_NAME}(?:,{_NAME})*)?\)"
_CORES = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^({_CORES})->({_CORES})$")


def _parse_signature(signature: str):
    """'(m,n),(n)->(m)' -> ([('m', 'n'), ('n',)], [('m',)])."""
    match = _SIGNATURE.match(re.sub(r"\s+", "", signature))
    if match is None:
        raise ValueError(f"not a valid gufunc signature: {signature!r} (expected the form "
                         "'(m,n),(n)->(m)': core dimension names per argument, then per output)")

    def cores(text):
        return [tuple(n for n in group.split(",") if n)
                for group in re.findall(r"\(([^)]*)\)", text)]
    return cores(match.group(1)), cores(match.group(2))


def _bind_core_sizes(sizes, shape, names, what, describe):
    """Records the sizes of `names` from the trailing axes of `shape`, checking repeats."""
    if len(shape) < len(names):
        raise ValueError(f"{what} with shape {tuple(shape)} has fewer dimensions than its core "
                         f"dimensions {names}{describe()}")
    for name, size in zip(names, shape[len(shape) - len(names):]):
        if sizes.setdefault(name, size) != size:
            raise ValueError(f"core dimension {name!r} has size {sizes[name]} in one place and "
                             f"{size} in another{describe()}")


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """Like `numpy.vectorize`, but by `vmap`: `pyfunc` runs once, on batched arguments.

    Without `signature`, `pyfunc` is written for scalars; with a gufunc signature such as
    `'(n),(n)->()'`, each argument's trailing core dimensions go to `pyfunc` whole and the
    leading ones broadcast together. `excluded` names positional indices or keywords passed
    through unchanged. Keyword arguments not excluded are broadcast like positional ones.
    """
    excluded = frozenset(excluded)
    for e in excluded:
        if not isinstance(e, (int, str)) or isinstance(e, bool):
            raise TypeError("vectorize can only exclude argument positions (int) or keyword "
                            f"names (str), got excluded={set(excluded)}")
        if isinstance(e, int) and e < 0:
            raise ValueError(f"excluded={set(excluded)} holds a negative position: give "
                             "positions counted from the first argument")
    in_cores = out_cores = None
    if signature is not None:
        in_cores, out_cores = _parse_signature(signature)

    def describe():
        return f" (vectorized {getattr(pyfunc, '__name__', 'function')} with " \
               f"signature={signature!r}, excluded={set(excluded) or '{}'})"

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        # split the arguments into those looped over and those passed through
        vec_pos = [i for i in range(len(args)) if i not in excluded]
        vec_kw = [k for k in kwargs if k not in excluded]
        values = [args[i] for i in vec_pos] + [kwargs[k] for k in vec_kw]
        values = [asarray(v) for v in values]

        cores = in_cores
        if cores is None:
            cores = [()] * len(values)
        elif len(cores) != len(values):
            raise TypeError(f"vectorize expected {len(cores)} arguments to vectorize, got "
                            f"{len(values)}{describe()}")
        sizes: dict = {}
        for v, names in zip(values, cores):
            _bind_core_sizes(sizes, v.shape, names, "argument", describe)
        loop_shape = np.broadcast_shapes(*[v.shape[:v.ndim - len(c)]
                                           for v, c in zip(values, cores)]) if values else ()
        values = [broadcast_to(v, loop_shape + v.shape[v.ndim - len(c):])
                  for v, c in zip(values, cores)]

        def core_call(*vals):
            full = list(args)
            for i, v in zip(vec_pos, vals):
                full[i] = v
            kw = dict(kwargs)
            kw.update(zip(vec_kw, vals[len(vec_pos):]))
            out = pyfunc(*full, **kw)
            if out_cores is None:
                return out
            outs = out
            if len(out_cores) == 1:
                if isinstance(out, tuple):
                    raise TypeError(f"the function returned {len(out)} outputs where the "
                                    f"signature has one{describe()}")
                outs = (out,)
            elif not isinstance(out, tuple):
                raise TypeError(f"the function must return a tuple of {len(out_cores)} "
                                f"outputs, got {type(out).__name__}{describe()}")
            elif len(out) != len(out_cores):
                raise TypeError(f"the function returned {len(out)} outputs where the "
                                f"signature has {len(out_cores)}{describe()}")
            outs = tuple(asarray(o) for o in outs)
            for o, names in zip(outs, out_cores):
                if o.ndim != len(names):
                    raise ValueError(f"output with shape {o.shape} does not match its core "
                                     f"dimensions {names}{describe()}")
                _bind_core_sizes(sizes, o.shape, names, "output", describe)
            return outs if len(out_cores) > 1 else outs[0]

        f = core_call
        for _ in loop_shape:
            f = vmap(f)
        return f(*values)
    return wrapped


def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    """`func1d` on every 1-d slice of `arr` along `axis` (by `vmap` over the other axes); its
    output's axes take the place of `axis`."""
    check_arraylike("apply_along_axis", arr)
    arr = asarray(arr)
    ndim = arr.ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"apply_along_axis: axis {axis} is out of bounds for an array of "
                         f"shape {arr.shape}")
    axis = axis % ndim

    def f(x):
        return func1d(x, *args, **kwargs)
    for _ in range(ndim - axis - 1):  # axes after `axis`, batched from the back
        f = vmap(f, in_axes=-1, out_axes=-1)
    for _ in range(axis):  # axes before it, from the front
        f = vmap(f, in_axes=0, out_axes=0)
    return f(arr)
