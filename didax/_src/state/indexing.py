"""What part of a reference an index names (`Indexer`), and reading and writing that part of
an array value functionally (with lax operations, so it is staged, differentiated and batched
as any array code is): the discharge of references and the tangents of references use these.

An index is what NumPy's basic indexing takes, one entry per dimension after `...` is
expanded: an integer (static, bounds-checked; negative counts from the end), a slice with
static bounds and a positive step, or a traced scalar integer (a dynamic index: negative
counts from the end once, then it is clamped into range, as `lax.dynamic_slice` does).
`r[...]` and `r[()]` name the whole value (an indexer of None, printed `[...]` as JAX prints
it). Integer arrays, `None` and booleans are refused with an error saying what to do.
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.core import Array, ShapedArray, Tracer, get_aval
from didax._src.lax.elementwise import select_n
from didax._src.lax.indexing import dynamic_slice, dynamic_update_slice
from didax._src.lax.shape import pad, reshape
from didax._src.lax.shape import slice as lax_slice
from didax._src.state.types import AbstractRef

INT, DYN, SLICE = "int", "dyn", "slice"


class Indexer:
    """Per dimension of a reference of shape `shape`: (INT, i) a static integer as written
    (-dim <= i < dim), (DYN, k) the k-th dynamic index operand, or (SLICE, start, size,
    step) the elements start, start + step, ... (`size` of them). Hashable, compared by
    value (it is an equation parameter)."""

    __slots__ = ("entries", "shape")

    def __init__(self, entries: tuple, shape: tuple):
        self.entries = entries
        self.shape = shape

    def __eq__(self, other):
        return (type(other) is Indexer and self.entries == other.entries
                and self.shape == other.shape)

    def __hash__(self):
        return hash((self.entries, self.shape))

    def __repr__(self):
        return f"Indexer{self.text(lambda k: f'<{k}>')}"

    @property
    def num_dynamic(self) -> int:
        return sum(1 for e in self.entries if e[0] == DYN)

    @property
    def result_shape(self) -> tuple:
        return tuple(e[2] for e in self.entries if e[0] == SLICE)

    def text(self, dynamic_name) -> str:
        """JAX's text for the index (`[1,:]`, `[c,2:]`), naming the k-th dynamic index
        `dynamic_name(k)`."""
        parts = []
        for e, dim in zip(self.entries, self.shape):
            if e[0] == INT:
                parts.append(str(e[1]))
            elif e[0] == DYN:
                parts.append(dynamic_name(e[1]))
            else:
                _, start, size, step = e
                stop = start + (size - 1) * step + 1 if size else start
                if step == 1:
                    stop = start + size
                text = (f"{start if start else ''}:{stop if stop != dim else ''}")
                parts.append(text if step == 1 else f"{text}:{step}")
        return f"[{','.join(parts)}]"


def batched(indexer: Indexer | None, bdim: int, size: int, ref_shape: tuple):
    """The indexer reading the same part of every example of a reference batched along
    `bdim` (of `size` examples, the batched reference's shape `ref_shape`); None stays
    None (the whole value)."""
    if indexer is None:
        return None
    entries = list(indexer.entries)
    entries.insert(bdim, (SLICE, 0, size, 1))
    return Indexer(tuple(entries), tuple(ref_shape))


def result_batch_dim(indexer: Indexer | None, bdim: int) -> int:
    if indexer is None:
        return bdim
    return sum(1 for e in indexer.entries[:bdim] if e[0] == SLICE)


# --------------------------------------------------------------------------------------
# From what the user wrote


def parse_index(idx, aval) -> tuple[Indexer | None, list]:
    """(indexer, dynamic index operands) for `ref[idx]` on a reference of type `aval`."""
    shape = aval.shape
    if idx is Ellipsis or (type(idx) is tuple and not idx):
        return None, []
    if type(idx) is not tuple:
        idx = (idx,)
    if sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexError(f"an index of {aval.str_short()} can only have a single ellipsis "
                         f"('...'), got {idx!r}")
    real = [i for i in idx if i is not Ellipsis]
    if len(real) > len(shape):
        raise ValueError(f"too many indices for {aval.str_short()}: {len(real)} indices for "
                         f"{len(shape)} dimensions (index {idx!r})")
    if any(i is Ellipsis for i in idx):
        k = next(n for n, i in enumerate(idx) if i is Ellipsis)
        full = [slice(None)] * (len(shape) - len(real))
        idx = idx[:k] + tuple(full) + idx[k + 1:]
    idx = tuple(idx) + (slice(None),) * (len(shape) - len(idx))
    entries = []
    dynamic = []
    for axis, (i, dim) in enumerate(zip(idx, shape)):
        entries.append(_entry(i, axis, dim, aval, dynamic))
    return Indexer(tuple(entries), shape), dynamic


def _entry(i, axis, dim, aval, dynamic):
    where = f"dimension {axis} of {aval.str_short()}, of size {dim}"
    if i is None:
        raise TypeError(f"None (np.newaxis) is not supported in the index of a Ref "
                        f"({aval.str_short()}); read the value (ref[...]) and index that")
    if isinstance(i, (bool, np.bool_)):
        raise TypeError(f"a boolean index ({i!r}) is not supported for a Ref "
                        f"({aval.str_short()}); use integers or slices")
    if isinstance(i, slice):
        for part in (i.start, i.stop, i.step):
            if part is not None and not _is_static_int(part):
                raise TypeError(f"the bounds of a slice in the index of a Ref must be static "
                                f"integers, got {i!r} (for {where})")
        start, stop, step = (None if p is None else int(p) for p in (i.start, i.stop, i.step))
        if step is not None and step < 1:
            raise ValueError(f"slice must have a step >= 1 (found: {step}), for {where}")
        start, stop, step = slice(start, stop, step).indices(dim)
        return (SLICE, start, len(range(start, stop, step)), step)
    if _is_static_int(i):
        k = int(i)
        if not -dim <= k < dim:
            raise ValueError(f"Out of bound indexer: idx={k}, dim={dim} (index {k} is out of "
                             f"bounds for {where})")
        return (INT, k)
    if isinstance(i, (core.ArrayBase, np.ndarray, np.generic)):
        a = get_aval(i)
        if not dtypes.issubdtype(a.dtype, np.integer):
            raise TypeError(f"the index of a Ref must hold integers, got a {a.str_short()} "
                            f"value (for {where})")
        if a.shape:
            raise NotImplementedError(
                f"indexing a Ref with an integer array (of type {a.str_short()}, for {where}) "
                "is not supported: read the value (ref[...]) and index that, or write with "
                "ref[...] = value.at[idx].set(...)")
        if not isinstance(i, Tracer):  # concrete: a static index, checked now
            return _entry(int(np.asarray(i)), axis, dim, aval, dynamic)
        dynamic.append(i)
        return (DYN, len(dynamic) - 1)
    raise TypeError(f"Argument {i!r} of type {type(i).__name__} is not a valid index for a "
                    f"Ref ({where}): use integers, slices, '...' or scalar integer arrays")


def _is_static_int(x) -> bool:
    return (type(x) is int or isinstance(x, np.integer)) and not isinstance(x, (bool, np.bool_))


# --------------------------------------------------------------------------------------
# Checks (abstract evaluation)


def check(name: str, ref, dynamic_avals, indexer):
    """The type of the part of `ref` (an AbstractRef) that `indexer` names, checked."""
    if type(ref) is not AbstractRef:
        raise TypeError(f"{name}: expected a mutable array reference (Ref), got a "
                        f"{ref.str_short()} value")
    if indexer is None:
        if dynamic_avals:
            raise TypeError(f"{name}: {len(dynamic_avals)} dynamic indices for a whole-value "
                            "access")
        return ref.inner_aval
    if indexer.shape != ref.shape:
        raise TypeError(f"{name}: an index of a reference of shape {indexer.shape} applied to "
                        f"{ref.str_short()}")
    if len(dynamic_avals) != indexer.num_dynamic:
        raise TypeError(f"{name}: the index takes {indexer.num_dynamic} dynamic indices, got "
                        f"{len(dynamic_avals)}")
    for a in dynamic_avals:
        if (type(a) is not ShapedArray or a.shape
                or not dtypes.issubdtype(a.dtype, np.integer)):
            raise TypeError(f"{name}: dynamic indices must be integer scalars, got "
                            f"{a.str_short()}")
    inner = ref.inner_aval
    return ShapedArray(indexer.result_shape, inner.dtype, inner.weak_type)


def check_value(name: str, ref, part: ShapedArray, value, indexer):
    """A value written to the part `part` of `ref` must have its shape and dtype."""
    if type(value) is not ShapedArray:
        raise TypeError(f"{name}: cannot write a {value.str_short()} value into a reference")
    where = f"{ref.str_short()}{indexer.text(lambda k: '<i>') if indexer else '[...]'}"
    if value.shape != part.shape:
        raise ValueError(f"Invalid shape for `{name}`: a value of shape {value.shape} "
                         f"({value.str_short()}) written into {where}, which holds shape "
                         f"{part.shape}.\nWhat to do: reshape or broadcast the value to "
                         f"{part.shape} first (e.g. jnp.broadcast_to(value, {part.shape})).")
    if value.dtype != part.dtype:
        raise ValueError(f"Invalid dtype for `{name}`: a {value.dtype.name} value "
                         f"({value.str_short()}) written into {where}, which holds "
                         f"{part.dtype.name}.\nWhat to do: convert it first "
                         f"(value.astype(jnp.{part.dtype.name})).")


# --------------------------------------------------------------------------------------
# NumPy (the impls)


def numpy_index(indexer: Indexer | None, dynamic) -> tuple:
    """The NumPy basic index of the part named (dynamic indices wrapped once, then
    clamped)."""
    if indexer is None:
        return ()
    out = []
    for e, dim in zip(indexer.entries, indexer.shape):
        if e[0] == INT:
            out.append(e[1])
        elif e[0] == DYN:
            k = int(dynamic[e[1]])
            k = k + dim if k < 0 else k
            out.append(min(max(k, 0), dim - 1))
        else:
            _, start, size, step = e
            out.append(slice(start, start + size * step, step) if size else slice(start, start))
    return tuple(out)


# --------------------------------------------------------------------------------------
# Functional reads and writes of array values (lax operations)


def _block(x, indexer, dynamic):
    """The block of `x` at the dynamic indices (size 1 there, whole elsewhere), and the
    starts it was taken at; `x` itself and None without dynamic indices."""
    if not indexer.num_dynamic:
        return x, None
    starts = [dynamic[e[1]] if e[0] == DYN else 0 for e in indexer.entries]
    sizes = [1 if e[0] == DYN else d for e, d in zip(indexer.entries, indexer.shape)]
    return dynamic_slice(x, starts, sizes), starts


def _static_window(indexer):
    """(starts, limits, strides) of the static part, the block's shape kept."""
    starts, limits, strides = [], [], []
    for e, dim in zip(indexer.entries, indexer.shape):
        if e[0] == INT:
            k = e[1] % dim
            starts.append(k), limits.append(k + 1), strides.append(1)
        elif e[0] == DYN:
            starts.append(0), limits.append(1), strides.append(1)
        else:
            _, start, size, step = e
            starts.append(start)
            limits.append(start + (size - 1) * step + 1 if size else start)
            strides.append(step)
    return starts, limits, strides


def _region_shape(indexer):
    return tuple(e[2] if e[0] == SLICE else 1 for e in indexer.entries)


def read(x, indexer: Indexer | None, dynamic):
    """`x[idx]` for the part `indexer` names."""
    if indexer is None:
        return x
    block, _ = _block(x, indexer, dynamic)
    starts, limits, strides = _static_window(indexer)
    block_shape = get_aval(block).shape
    if any(s != 0 for s in starts) or tuple(limits) != block_shape or any(t != 1
                                                                         for t in strides):
        block = lax_slice(block, starts, limits,
                          None if all(t == 1 for t in strides) else strides)
    if get_aval(block).shape != indexer.result_shape:
        block = reshape(block, indexer.result_shape)
    return block


def write(x, indexer: Indexer | None, dynamic, value):
    """`x` with the part `indexer` names replaced by `value` (of that part's shape)."""
    if indexer is None:
        return value
    block, block_starts = _block(x, indexer, dynamic)
    block_aval = get_aval(block)
    region = _region_shape(indexer)
    if 0 in region:
        return x
    if get_aval(value).shape != region:
        value = reshape(value, region)
    starts, _, strides = _static_window(indexer)
    if region == block_aval.shape:
        new_block = value
    elif all(t == 1 for t in strides):
        new_block = dynamic_update_slice(block, value, starts)
    else:  # strided: the value spread over the block by padding, chosen by a static mask
        config = [(s, d - (s + (n - 1) * t + 1), t - 1)
                  for s, n, t, d in zip(starts, region, strides, block_aval.shape)]
        spread = pad(value, np.zeros((), block_aval.dtype), config)
        mask = np.zeros(block_aval.shape, bool)
        mask[tuple(slice(s, s + n * t, t) for s, n, t in zip(starts, region, strides))] = True
        new_block = select_n(Array(mask), block, spread)
    if block_starts is None:
        return new_block
    return dynamic_update_slice(x, new_block, block_starts)
