"""Shape primitives: broadcasting, reshaping, transposition, slicing, padding, iota.

All of them are linear in their array operands, so each JVP is the primitive applied
to the tangents (`deflinear`). Each primitive's rules follow its declaration; broadcast_in_dim,
reshape and transpose are declared in `base_prims` (the interpreters bind them) and get their
rules here.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import (  # declared below the interpreters; rules added here
    SMALL_BROADCAST,
    broadcast,
    broadcast_in_dim,
    broadcast_in_dim_p,
    broadcast_to_rank,
    full,
    reduce_sum,
    reshape,
    reshape_p,
    transpose,
    transpose_p,
)
from didax._src.compiler.codegen import codegen_rule, index_text, range_text
from didax._src.compiler.native.loops import contiguous
from didax._src.compiler.native.rules import (
    C_TYPES,
    IN_ORDER,
    ViewAt,
    c_constant,
    native_rule,
    numeric,
)
from didax._src.core import ShapedArray, get_aval
from didax._src.interpreters import batching, sharding
from didax._src.interpreters.jvp import deflinear
from didax._src.interpreters.transpose import is_undefined
from didax._src.ir import DropVar, Literal
from didax._src.lax.elementwise import select_n, sub
from didax._src.typecheck import as_dtype, canonical_axes, check_shape, static_shape

ALWAYS = core.PP_ALWAYS_HIDE
_py_slice = slice  # `slice` is redefined below as lax.slice

# --------------------------------------------------------------------------------------
# broadcast_in_dim

deflinear(broadcast_in_dim_p)


def _broadcast_in_dim_sharding(eqn, specs, sizes):
    """The operand's dimensions keep their splits where they keep their size."""
    x = eqn.invars[0].aval.shape
    shape = eqn.params["shape"]
    out = [()] * len(shape)
    for d, (o, names) in enumerate(zip(eqn.params["broadcast_dimensions"],
                                       sharding.padded(specs[0], len(x)))):
        if x[d] == shape[o]:
            out[o] = names
    return tuple(out)


broadcast_in_dim_p.def_rule("sharding", _broadcast_in_dim_sharding)
broadcast_in_dim_p.def_traits(returns_operand=lambda eqn: (
    0 if tuple(eqn.params["broadcast_dimensions"]) == tuple(range(len(eqn.params["shape"])))
    else None))


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions, sharding=None):
    in_shape = x.aval.shape
    # New dimensions of size 1 need no sum: the reshape drops them.
    summed = tuple(i for i in range(len(shape)) if i not in broadcast_dimensions and shape[i] != 1)
    stretched = tuple(d for i, d in enumerate(broadcast_dimensions)
                      if in_shape[i] == 1 and shape[d] != 1)
    out = reduce_sum(ct, tuple(sorted(summed + stretched))) if summed or stretched else ct
    return [reshape(out, in_shape)]


broadcast_in_dim_p.def_transpose(_broadcast_in_dim_transpose)


def _broadcast_in_dim_batch(size, vals, dims, *, shape, broadcast_dimensions, sharding=None):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    return broadcast_in_dim(x, (size,) + tuple(shape),
                            (0,) + tuple(b + 1 for b in broadcast_dimensions)), 0


broadcast_in_dim_p.def_batch(_broadcast_in_dim_batch)


@codegen_rule(broadcast_in_dim_p)
def _broadcast_in_dim_codegen(fb, k, eqn, outs):
    x = eqn.invars[0]
    shape = tuple(eqn.params["shape"])
    expanded = [1] * len(shape)
    for d, size in zip(eqn.params["broadcast_dimensions"], x.aval.shape):
        expanded[d] = size
    src = fb.typed(x)
    if tuple(expanded) != x.aval.shape and x.aval.shape != ():
        src = f"{src}.reshape({tuple(expanded)})"
        if tuple(expanded) == shape:  # only unit dimensions were added
            fb.line(f"{outs[0]} = {src}")
            return
    if math.prod(shape) <= SMALL_BROADCAST:  # filled, as the impl fills them
        dtype = fb.module.global_name(eqn.outvars[0].aval.dtype, "dtype")
        fb.line(f"{outs[0]} = np.empty({shape}, {dtype})")
        fb.line(f"{outs[0]}[...] = {src}")
        return
    fb.line(f"{outs[0]} = np.broadcast_to({src}, {shape})")


deflinear(reshape_p)
reshape_p.def_traits(
    returns_operand=lambda eqn: 0 if eqn.params.get("dimensions") is None else None)
reshape_p.def_transpose(lambda ct, x, *, new_sizes, dimensions=None, sharding=None: [
    reshape(ct, x.aval.shape) if dimensions is None else transpose(
        reshape(ct, [x.aval.shape[d] for d in dimensions]), np.argsort(dimensions))])


def _reshape_batch(size, vals, dims, *, new_sizes, dimensions=None, sharding=None):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    perm = None if dimensions is None else (0,) + tuple(i + 1 for i in dimensions)
    return reshape(x, (size,) + tuple(new_sizes), perm), 0


reshape_p.def_batch(_reshape_batch)
reshape_p.def_rule("sharding", lambda eqn, specs, sizes: () if eqn.params.get(
    "dimensions") is not None else sharding.reshape(eqn, specs, sizes))


@codegen_rule(reshape_p, when=lambda eqn: eqn.params.get("dimensions") is None)
def _reshape_codegen(fb, k, eqn, outs):
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.reshape({tuple(eqn.params['new_sizes'])})")


squeeze_p = core.primitive("squeeze")
squeeze_p.def_impl(lambda x, *, dimensions: x.squeeze(dimensions))  # (np.squeeze's call,
# without its dispatch)


def _squeeze_aval(x, *, dimensions):
    dims = canonical_axes("squeeze", dimensions, x.ndim)
    for d in dims:
        if x.shape[d] != 1:
            raise TypeError(f"squeeze: cannot squeeze dimension {d} of size {x.shape[d]} "
                            f"(operand shape {x.shape}); only size-1 dimensions can be removed")
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dims)
    return ShapedArray(shape, x.dtype, x.weak_type)


squeeze_p.def_abstract_eval(_squeeze_aval)
deflinear(squeeze_p)
squeeze_p.def_traits(returns_operand=lambda eqn: 0)
squeeze_p.def_rule("sharding", sharding.reshape)


def squeeze(array, dimensions):
    ndim = get_aval(array).ndim
    dims = tuple(sorted(canonical_axes("squeeze", dimensions, ndim)))
    if not dims:
        return array
    return squeeze_p.bind(array, dimensions=dims)


squeeze_p.def_transpose(lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)])


def _squeeze_batch(size, vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    return (squeeze_p.bind(x, dimensions=tuple(a + (a >= d) for a in dimensions)),
            d - sum(a < d for a in dimensions))


squeeze_p.def_batch(_squeeze_batch)


def _to_out_shape_codegen(fb, k, eqn, outs):
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.reshape({eqn.outvars[0].aval.shape})")


codegen_rule(squeeze_p)(_to_out_shape_codegen)

expand_dims_p = core.primitive("expand_dims")


def _expand_dims_impl(x, *, dimensions):
    ndim = x.ndim + len(dimensions)
    shape = list(x.shape)
    for d in sorted([d % ndim for d in dimensions]):  # (np.expand_dims costs microseconds)
        shape.insert(d, 1)
    return x.reshape(shape)


expand_dims_p.def_impl(_expand_dims_impl)


def _expand_dims_aval(x, *, dimensions):
    ndim = x.ndim + len(dimensions)
    dims = canonical_axes("expand_dims", dimensions, ndim)
    if len(set(dims)) != len(dims):
        raise ValueError(f"expand_dims: repeated dimension in {dimensions}")
    shape = list(x.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return ShapedArray(shape, x.dtype, x.weak_type)


expand_dims_p.def_abstract_eval(_expand_dims_aval)
deflinear(expand_dims_p)


def expand_dims(array, dimensions):
    ndim = get_aval(array).ndim + len(tuple(dimensions))
    dims = tuple(sorted(canonical_axes("expand_dims", dimensions, ndim)))
    if not dims:
        return array
    return expand_dims_p.bind(array, dimensions=dims)


expand_dims_p.def_transpose(lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)])


def _expand_dims_batch(size, vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    return expand_dims_p.bind(x, dimensions=tuple(a + 1 for a in dimensions)), 0


expand_dims_p.def_batch(_expand_dims_batch)
codegen_rule(expand_dims_p)(_to_out_shape_codegen)
expand_dims_p.def_rule("sharding", sharding.reshape)
deflinear(transpose_p)
transpose_p.def_traits(
    returns_operand=lambda eqn: (
        0 if tuple(eqn.params["permutation"]) == tuple(range(len(eqn.params["permutation"])))
        else None),
    permutation_param="permutation")
transpose_p.def_transpose(lambda ct, x, *, permutation: [
    transpose(ct, tuple(int(i) for i in np.argsort(permutation)))])
transpose_p.def_rule("sharding", lambda eqn, specs, sizes: tuple(
    sharding.padded(specs[0], len(eqn.params["permutation"]))[d]
    for d in eqn.params["permutation"]))


def _transpose_batch(size, vals, dims, *, permutation):
    (x,), (d,) = vals, dims
    perm = (d,) + tuple(p + (p >= d) for p in permutation)
    return transpose(x, perm), 0


transpose_p.def_batch(_transpose_batch)


@codegen_rule(transpose_p)
def _transpose_codegen(fb, k, eqn, outs):
    perm = tuple(int(p) for p in eqn.params["permutation"])
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.transpose({perm})")


rev_p = core.primitive("rev")
_REVERSED = _py_slice(None, None, -1)
_WHOLE = _py_slice(None)


def _rev_impl(x, *, dimensions):
    """np.flip's view (its index, built without its normalisation, which costs a microsecond)."""
    if not dimensions:
        return x
    nd = x.ndim
    flipped = {d % nd for d in dimensions}
    return x[tuple(_REVERSED if i in flipped else _WHOLE for i in range(nd))]


rev_p.def_impl(_rev_impl)


def _rev_aval(x, *, dimensions):
    canonical_axes("rev", dimensions, x.ndim)
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev: repeated dimensions in {dimensions}")
    return x


rev_p.def_abstract_eval(_rev_aval)
deflinear(rev_p)


def rev(operand, dimensions):
    return rev_p.bind(operand, dimensions=tuple(int(d) for d in dimensions))


rev_p.def_transpose(lambda ct, x, *, dimensions: [rev(ct, dimensions)])


def _rev_batch(size, vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    return rev(x, tuple(a + (a >= d) for a in dimensions)), d


rev_p.def_batch(_rev_batch)
rev_p.def_rule("sharding", sharding.same_as_operand)

pad_p = core.primitive("pad")


def _pad_placement(shape, padding_config):
    """Where a padded operand's elements land: per dimension, the range [first, stop) of
    the operand's indices kept (negative padding crops), the result index of `first`, the
    step between results (1 + interior), and the result's size."""
    out = []
    for n, (lo, hi, interior) in zip(shape, padding_config):
        step = interior + 1
        size = lo + hi + (n + (n - 1) * interior if n else 0)
        first = max(0, -(lo // step) if lo < 0 else 0)
        stop = min(n, (size - 1 - lo) // step + 1) if size > lo else 0
        out.append((first, max(stop, first), lo + first * step, step, max(size, 0)))
    return out


def _pad_impl(x, padding_value, *, padding_config):
    """The result filled with the padding value, and the operand's kept elements copied to
    their places in one strided assignment."""
    placement = _pad_placement(x.shape, padding_config)
    y = np.full(tuple(p[4] for p in placement), padding_value, x.dtype)
    if all(stop > first for first, stop, *_ in placement):
        y[tuple(_py_slice(at, at + (stop - first - 1) * step + 1, step)
                for first, stop, at, step, _ in placement)] = \
            x[tuple(_py_slice(first, stop) for first, stop, *_ in placement)]
    return y


def _pad_aval(x, pv, *, padding_config):
    if pv.shape != ():
        raise TypeError(f"pad: padding_value must be a scalar, got shape {pv.shape}")
    if pv.dtype != x.dtype:
        raise TypeError(f"pad: padding_value dtype {pv.dtype.name} must equal the operand "
                        f"dtype {x.dtype.name}")
    if len(padding_config) != x.ndim:
        raise TypeError(f"pad: padding_config has {len(padding_config)} entries for an "
                        f"operand of shape {x.shape}")
    shape = []
    for n, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            raise TypeError(f"pad: interior padding must be non-negative, got {interior}")
        size = lo + hi + n + max(n - 1, 0) * interior
        if size < 0:
            raise TypeError(f"pad: padding {padding_config} gives a negative dimension for "
                            f"operand shape {x.shape}")
        shape.append(size)
    return ShapedArray(shape, x.dtype, x.weak_type)


pad_p.def_impl(_pad_impl)
pad_p.def_abstract_eval(_pad_aval)
deflinear(pad_p)


def pad(operand, padding_value, padding_config):
    config = tuple((int(lo), int(hi), int(i)) for lo, hi, i in padding_config)
    if isinstance(padding_value, (int, float, complex)):
        padding_value = np.asarray(padding_value, get_aval(operand).dtype)
    return pad_p.bind(operand, padding_value, padding_config=config)


def _pad_transpose(ct, x, pv, *, padding_config):
    unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    t = pad(ct, np.zeros((), get_aval(ct).dtype), unpad)
    strides = tuple(i + 1 for _, _, i in padding_config)
    t_operand = slice(t, (0,) * len(strides), get_aval(t).shape, strides)
    t_pv = None
    if is_undefined(pv):  # every output element not taken from the operand is padding
        every = tuple(range(get_aval(ct).ndim))
        t_pv = sub(reduce_sum(ct, every), reduce_sum(t_operand, every))
    return [t_operand if is_undefined(x) else None, t_pv]


pad_p.def_transpose(_pad_transpose)


def _pad_batch(size, vals, dims, *, padding_config):
    (x, pv), (dx, dpv) = vals, dims
    x = batching.bdim_at_front(x, dx, size)
    config = ((0, 0, 0),) + tuple(padding_config)
    if dpv is None:
        return pad(x, pv, config), 0
    # A padding value per example: pad with zeros, then select it where the padding is.
    mask = pad(full(get_aval(x).shape, True, np.bool_), np.zeros((), np.bool_), config)
    padded = pad(x, np.zeros((), get_aval(x).dtype), config)
    out_shape = get_aval(padded).shape
    values = broadcast_in_dim(batching.moveaxis(pv, dpv, 0), out_shape, (0,))
    return select_n(mask, values, padded), 0


pad_p.def_batch(_pad_batch)


def _pad_simple(eqn) -> bool:
    return (eqn.invars[0].aval.shape != ()
            and all(i == 0 and lo >= 0 and hi >= 0 for lo, hi, i in eqn.params["padding_config"]))


def _pad_index(eqn) -> str:
    """Where the operand of a `_pad_simple` pad lands in its result."""
    config, shape = eqn.params["padding_config"], eqn.invars[0].aval.shape
    return index_text(range_text(lo, lo + n, n + lo + hi) for (lo, hi, _), n in
                      zip(config, shape))


def _zero_padding(eqn) -> bool:
    value = eqn.invars[1]
    return type(value) is Literal and value.val == 0


def _zero_pad_region(eqn):
    """For a zero pad without interior or negative padding: the index of where its operand
    lands; otherwise None."""
    if not _pad_simple(eqn) or not _zero_padding(eqn):
        return None
    return _pad_index(eqn)


pad_p.def_traits(zero_pad_region=_zero_pad_region)


def _pad_native_when(eqn):
    return eqn.invars[0].aval.shape != () and eqn.outvars[0].aval.dtype in C_TYPES


@native_rule(pad_p, kind="block", when=_pad_native_when, counts=lambda eqn: (1, 0))
def _pad_native(em, eqn):
    """The result filled with the padding value, then the operand's kept elements copied to
    their places: rows at once where there is no interior padding in the last dimension
    (the transpose of a slice: a gate's gradient placed in the gradient of all gates)."""
    x, value = eqn.invars
    out = eqn.outvars[0]
    em.operand(x)
    em.as_array(x)
    if type(value) is Literal:
        fill = c_constant(value.val, value.aval.dtype)
    else:
        em.operand(value)
        em.as_array(value)
        fill = f"p{em.slots[value]}[0]"
    s = em.slot(out)
    em.new_array(s, out.aval, var=out)
    size = math.prod(out.aval.shape)
    em.line(f"for (npy_intp k = 0; k < {size}; k++) q{s}[k] = {fill};")
    shape, oshape = x.aval.shape, out.aval.shape
    placement = _pad_placement(shape, eqn.params["padding_config"])
    if not math.prod(shape) or any(stop <= first for first, stop, *_ in placement):
        return
    rank = len(shape)
    ostrides = [math.prod(oshape[d + 1:]) for d in range(rank)]
    strides = [math.prod(shape[d + 1:]) for d in range(rank)]
    start = sum(at * m for (_, _, at, _, _), m in zip(placement, ostrides))
    src0 = sum(first * m for (first, *_), m in zip(placement, strides))
    *outer, (first, stop, _, step, _) = placement
    index = " + ".join([str(start)] + [f"i{d} * {p[3] * ostrides[d]}"
                                       for d, p in enumerate(outer)])
    src = " + ".join([str(src0)] + [f"i{d} * {strides[d]}" for d in range(rank - 1)])
    for d, (f, e, *_) in enumerate(outer):
        em.line(f"{'    ' * d}for (npy_intp i{d} = 0; i{d} < {e - f}; i{d}++)")
    ind = "    " * (rank - 1)
    n = stop - first
    if step == 1:
        em.line(f"{ind}memcpy(q{s} + {index}, p{em.slots[x]} + {src}, "
                f"{n * out.aval.dtype.itemsize});")
    else:
        em.line(f"{ind}for (npy_intp j = 0; j < {n}; j++) "
                f"q{s}[{index} + j * {step}] = p{em.slots[x]}[{src} + j];")


@codegen_rule(pad_p, when=_pad_simple, fresh=True)
def _pad_codegen(fb, k, eqn, outs):
    x, value = eqn.invars
    aval = eqn.outvars[0].aval
    dtype = fb.module.global_name(aval.dtype, aval.dtype.name)
    if _zero_padding(eqn):
        fb.line(f"{outs[0]} = np.zeros({aval.shape}, {dtype})")
    else:
        fb.line(f"{outs[0]} = np.full({aval.shape}, {fb.typed(value)}, {dtype})")
    fb.line(f"{outs[0]}[{_pad_index(eqn)}] = {fb.name(x)}")


concatenate_p = core.primitive("concatenate")
concatenate_p.def_impl(lambda *xs, dimension: np.concatenate(xs, axis=dimension))


def _concatenate_aval(*xs, dimension):
    if not xs:
        raise TypeError("concatenate needs at least one operand")
    x0 = xs[0]
    if not 0 <= dimension < max(x0.ndim, 1) or x0.ndim == 0:
        raise TypeError(f"concatenate: dimension {dimension} is out of bounds for operands of "
                        f"shape {x0.shape}")
    for x in xs:
        if x.dtype != x0.dtype:
            raise TypeError("concatenate: operands must have the same dtype, got "
                            f"{', '.join(a.dtype.name for a in xs)}")
        if x.ndim != x0.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, x0.shape))
                                    if i != dimension):
            raise TypeError("concatenate: operand shapes must match except along dimension "
                            f"{dimension}, got {', '.join(str(a.shape) for a in xs)}")
    shape = list(x0.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, x0.dtype, all(x.weak_type for x in xs))


concatenate_p.def_abstract_eval(_concatenate_aval)
deflinear(concatenate_p)


def concatenate(operands, dimension):
    operands = list(operands)
    if len(operands) == 1 and isinstance(operands[0], core.ArrayBase):
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


def _concatenate_transpose(ct, *xs, dimension):
    out = []
    offset = 0
    ct_shape = get_aval(ct).shape
    for x in xs:
        size = (x.aval if is_undefined(x) else get_aval(x)).shape[dimension]
        if is_undefined(x):
            start = [0] * len(ct_shape)
            limit = list(ct_shape)
            start[dimension], limit[dimension] = offset, offset + size
            out.append(slice(ct, start, limit))
        else:
            out.append(None)
        offset += size
    return out


concatenate_p.def_transpose(_concatenate_transpose)


def _front(vals, dims, size):
    return [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]


def _concatenate_batch(size, vals, dims, *, dimension):
    return concatenate(_front(vals, dims, size), dimension + 1), 0


concatenate_p.def_batch(_concatenate_batch)


@codegen_rule(concatenate_p, fresh=True)
def _concatenate_codegen(fb, k, eqn, outs):
    args = ", ".join(fb.typed(a) for a in eqn.invars)
    fb.line(f"{outs[0]} = np.concatenate(({args},), axis={int(eqn.params['dimension'])})")


def _copies_natively(eqn) -> bool:
    """Operands that are arrays (no literals) and a dtype the native tier handles."""
    return (all(type(a) is not Literal for a in eqn.invars)
            and all(v.aval.dtype in C_TYPES for v in (*eqn.invars, *eqn.outvars)))


def _copy_rows(em, dst, src, rows, n, dst_row, dst_at, src_row, src_at, itemsize):
    """C copying `rows` runs of `n` elements from the array named `src` (runs `src_row`
    apart, from `src_at`) to `dst` (`dst_row` apart, from `dst_at`)."""
    if not rows or not n:
        return
    if rows == 1:
        em.line(f"memcpy({dst} + {dst_at}, {src} + {src_at}, {n * itemsize});")
    else:
        em.line(f"for (npy_intp i = 0; i < {rows}; i++) memcpy({dst} + {dst_at} + i * "
                f"{dst_row}, {src} + {src_at} + i * {src_row}, {n * itemsize});")


@native_rule(concatenate_p, kind="block", when=_copies_natively, counts=lambda eqn: (1, 0))
def _concatenate_native(em, eqn):
    """Each operand's rows copied into their place in the result (a flattened pytree in a
    sampler's step: ravel_pytree's concatenation)."""
    out, d = eqn.outvars[0], eqn.params["dimension"]
    s = em.slot(out)
    em.new_array(s, out.aval, var=out)
    rows, row = math.prod(out.aval.shape[:d]), math.prod(out.aval.shape[d:])
    at = 0
    for x in eqn.invars:
        em.operand(x)
        em.as_array(x)
        n = math.prod(x.aval.shape[d:])
        _copy_rows(em, f"q{s}", f"p{em.slots[x]}", rows, n, row, at, n, 0,
                   out.aval.dtype.itemsize)
        at += n


slice_p = core.primitive("slice")


def _slice_impl(x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[tuple(_py_slice(lo, hi, st) for lo, hi, st in zip(start_indices, limit_indices,
                                                               strides))]


def _slice_aval(x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    if not (len(start_indices) == len(limit_indices) == len(strides) == x.ndim):
        raise TypeError(f"slice: start_indices {start_indices}, limit_indices {limit_indices} "
                        f"and strides must each have one entry per dimension of shape {x.shape}")
    shape = []
    for n, lo, hi, st in zip(x.shape, start_indices, limit_indices, strides):
        if not 0 <= lo <= hi <= n or st < 1:
            raise TypeError(f"slice: invalid slice [{lo}:{hi}:{st}] for a dimension of size {n} "
                            f"(operand shape {x.shape})")
        shape.append((hi - lo + st - 1) // st)
    return ShapedArray(shape, x.dtype, x.weak_type)


slice_p.def_impl(_slice_impl)
slice_p.def_abstract_eval(_slice_aval)
deflinear(slice_p)


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 - lax.slice
    start = tuple(int(i) for i in start_indices)
    limit = tuple(int(i) for i in limit_indices)
    st = None if strides is None or all(s == 1 for s in strides) else tuple(int(s)
                                                                           for s in strides)
    return slice_p.bind(operand, start_indices=start, limit_indices=limit, strides=st)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides=None):
    in_shape = x.aval.shape
    strides = strides or (1,) * len(in_shape)
    ct_shape = get_aval(ct).shape
    config = []
    for n, s, st, m in zip(in_shape, start_indices, strides, ct_shape):
        real_limit = s + (m - 1) * st + 1 if m else s
        config.append((s, n - real_limit, st - 1 if m else 0))
    return [pad(ct, np.zeros((), get_aval(ct).dtype), config)]


slice_p.def_transpose(_slice_transpose)


def _slice_batch(size, vals, dims, *, start_indices, limit_indices, strides=None):
    (x,), (d,) = vals, dims
    strides = strides or (1,) * len(start_indices)
    start = list(start_indices)
    limit = list(limit_indices)
    st = list(strides)
    start.insert(d, 0)
    limit.insert(d, size)
    st.insert(d, 1)
    return slice(x, start, limit, st), d


slice_p.def_batch(_slice_batch)


def _slice_sharding(eqn, specs, sizes):
    """A dimension keeps its split while its new size divides over its axes."""
    shape = eqn.outvars[0].aval.shape
    return tuple(names if sharding.divides(names, n, sizes) else ()
                 for names, n in zip(sharding.padded(specs[0], len(shape)), shape))


slice_p.def_rule("sharding", _slice_sharding)


@codegen_rule(slice_p)
def _slice_codegen(fb, k, eqn, outs):
    p = eqn.params
    x = eqn.invars[0]
    if x.aval.ndim == 0:
        fb.line(f"{outs[0]} = {fb.typed(x)}")
        return
    strides = p.get("strides") or (1,) * x.aval.ndim
    parts = [range_text(lo, hi, n, st) for lo, hi, n, st in
             zip(p["start_indices"], p["limit_indices"], x.aval.shape, strides)]
    fb.line(f"{outs[0]} = {fb.typed(x)}[{index_text(parts)}]")


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    shape = get_aval(operand).shape
    axis = canonical_axes("slice_in_dim", (axis,), len(shape))[0]
    n = shape[axis]
    start = 0 if start_index is None else (start_index + n if start_index < 0 else start_index)
    limit = n if limit_index is None else (limit_index + n if limit_index < 0 else limit_index)
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    n = get_aval(operand).shape[axis]
    index = index + n if index < 0 else index
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


# --------------------------------------------------------------------------------------
# split

split_p = core.primitive("split", multiple_results=True)


def _split_impl(x, *, sizes, axis):
    return np.split(x, np.cumsum(sizes)[:-1].tolist(), axis=axis)


def _split_aval(x, *, sizes, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"split: axis {axis} is out of bounds for an operand of shape "
                         f"{x.shape}")
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if sum(sizes) != x.shape[axis]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the "
                         f"operand shape {list(x.shape)}")
    return [ShapedArray(x.shape[:axis] + (s,) + x.shape[axis + 1:], x.dtype, x.weak_type)
            for s in sizes]


split_p.def_impl(_split_impl)
split_p.def_abstract_eval(_split_aval)
deflinear(split_p)


def split(operand, sizes, axis=0):
    """Pieces of `operand` of the given sizes along `axis` (they must add up to its size)."""
    ndim = get_aval(operand).ndim
    axis = canonical_axes("split", (axis,), ndim)[0]
    return split_p.bind(operand, sizes=tuple(int(s) for s in sizes), axis=axis)


def _split_transpose(cts, x, *, sizes, axis):
    pieces = [full(ct.aval.shape, 0, ct.aval.dtype) if core.is_zero(ct) else ct for ct in cts]
    return [concatenate(pieces, axis)]


split_p.def_transpose(_split_transpose)


def _split_batch(size, vals, dims, *, sizes, axis):
    (x,), (d,) = vals, dims
    return split_p.bind(x, sizes=sizes, axis=axis + (d <= axis)), [d] * len(sizes)


split_p.def_batch(_split_batch)


@native_rule(split_p, kind="block", when=_copies_natively, counts=lambda eqn: (1, 0))
def _split_native(em, eqn):
    """Each piece's rows copied out of the operand (pieces nothing reads are not made)."""
    x, axis = eqn.invars[0], eqn.params["axis"]
    em.operand(x)
    em.as_array(x)
    rows, row = math.prod(x.aval.shape[:axis]), math.prod(x.aval.shape[axis:])
    at = 0
    for v in eqn.outvars:
        n = math.prod(v.aval.shape[axis:])
        if type(v) is not DropVar:
            s = em.slot(v)
            em.new_array(s, v.aval, var=v)
            _copy_rows(em, f"q{s}", f"p{em.slots[x]}", rows, n, n, 0, row, at,
                       x.aval.dtype.itemsize)
        at += n


def collapse(operand, start_dimension, stop_dimension=None):
    """Merges dimensions [start_dimension, stop_dimension) into one (major to minor)."""
    shape = get_aval(operand).shape
    lo, hi, _ = _py_slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(f"Invalid dimension range passed to collapse: {shape}"
                         f"[{start_dimension}:{stop_dimension}]")
    return reshape(operand, shape[:lo] + (math.prod(shape[lo:hi]),) + shape[hi:])


def stack(operands, axis=0):
    """Joins arrays of one shape along a new `axis`."""
    operands = list(operands)
    if not operands:
        raise ValueError("stack requires at least one operand")
    shapes = [get_aval(x).shape for x in operands]
    if any(s != shapes[0] for s in shapes):
        raise ValueError(f"All input arrays must have the same shape. Got "
                         f"{', '.join(map(str, shapes))}.")
    axis = canonical_axes("stack", (axis,), len(shapes[0]) + 1)[0]
    return concatenate([expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis=0):
    """The slices of `x` along `axis`, as a tuple of arrays without that axis."""
    shape = get_aval(x).shape
    axis = canonical_axes("unstack", (axis,), len(shape))[0]
    return tuple(squeeze(piece, (axis,)) for piece in split(x, (1,) * shape[axis], axis))


def tile(operand, reps):
    """`operand` repeated reps[i] times along each dimension i."""
    shape = get_aval(operand).shape
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape):
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)="
                        f"{len(reps)} and x.ndim={len(shape)}.")
    wide = tuple(d for r, n in zip(reps, shape) for d in (r, n))
    tiled = broadcast_in_dim(operand, wide, tuple(range(1, 2 * len(shape), 2)))
    return reshape(tiled, tuple(r * n for r, n in zip(reps, shape)))


def broadcast_shapes(*shapes):
    """The shape NumPy broadcasting gives arrays of `shapes`."""
    shapes = [tuple(int(d) for d in s) for s in shapes]
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def broadcast_like(arr, like_arr):
    """`arr` broadcast (NumPy-style, adding leading dimensions) to the shape of `like_arr`."""
    shape = get_aval(like_arr).shape
    ndim = get_aval(arr).ndim
    if ndim > len(shape):
        raise ValueError(f"broadcast_like: cannot broadcast an array of shape "
                         f"{get_aval(arr).shape} to the lower-rank shape {shape}")
    return broadcast_in_dim(arr, shape, tuple(range(len(shape) - ndim, len(shape))))


def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and `dtype` whose values do not matter (zeros here, as on XLA's
    CPU backend)."""
    shape = (shape,) if isinstance(shape, int) else shape
    return full(shape, 0, dtype)


# --------------------------------------------------------------------------------------
# iota

iota_p = core.primitive("iota")
iota_p.def_impl(lambda *, dtype, shape, dimension, sharding=None: np.broadcast_to(
    np.arange(shape[dimension], dtype=dtype).reshape(
        [-1 if i == dimension else 1 for i in range(len(shape))]), shape))


def _iota_aval(*, dtype, shape, dimension, sharding=None):
    shape = check_shape("iota", shape)
    if not 0 <= dimension < len(shape):
        raise TypeError(f"iota: dimension {dimension} out of bounds for shape {shape}")
    if not dtypes.issubdtype(dtype, np.number):
        raise TypeError(f"iota: dtype must be numeric, got {np.dtype(dtype).name}")
    return ShapedArray(shape, dtype, False)


iota_p.def_abstract_eval(_iota_aval)
iota_p.def_jvp(lambda primals, tangents, **params: (
    iota_p.bind(**params), core.Zero(ShapedArray(params["shape"], dtypes.tangent_dtype(
        np.dtype(params["dtype"]))))))


def broadcasted_iota(dtype, shape, dimension, sharding=None):
    shape = static_shape("lax.iota", shape)
    return iota_p.bind(dtype=as_dtype(dtype), shape=shape, dimension=int(dimension),
                       sharding=sharding)


iota_p.mark_absent("batch", "iota has no operands, so it is never batched")


@native_rule(iota_p, kind="block", when=numeric, counts=lambda eqn: (1, 0))
def _iota_native(em, eqn):
    """One loop writing each element's index along `dimension` (exact in every numeric
    dtype the tier handles, as the counts fit)."""
    v = eqn.outvars[0]
    shape, dimension = v.aval.shape, eqn.params["dimension"]
    s = em.slot(v)
    em.new_array(s, v.aval, var=v)
    inner = math.prod(shape[dimension + 1:])
    em.body.append(f"        for (npy_intp k = 0; k < {math.prod(shape)}; k++) "
                   f"q{s}[k] = ({C_TYPES[v.aval.dtype]})((k / {inner}) % {shape[dimension]});")


def iota(dtype, size):
    return broadcasted_iota(dtype, (size,), 0)


__all__ = [
    "broadcast_in_dim", "broadcast", "broadcast_to_rank", "full", "reshape", "squeeze",
    "expand_dims", "transpose", "rev", "pad", "concatenate", "slice", "slice_in_dim",
    "index_in_dim", "iota", "broadcasted_iota", "split", "collapse", "stack", "unstack", "tile",
    "broadcast_shapes", "broadcast_like", "empty",
]


# --------------------------------------------------------------------------------------
# Native rules (the native tier of jit): views, read in place by the loops that use them.
# Each maps the operand's element strides to the result's, or None (not a strided view).


def _any_dtype(eqn) -> bool:
    return True


@native_rule(broadcast_in_dim_p, kind="view", when=_any_dtype)
def _broadcast_in_dim_native(eqn, strides):
    shape = eqn.invars[0].aval.shape
    out = [0] * eqn.outvars[0].aval.ndim
    for i, d in enumerate(eqn.params["broadcast_dimensions"]):
        out[d] = strides[i] if shape[i] != 1 else 0
    return out


@native_rule(slice_p, kind="view", when=_any_dtype)
def _slice_native(eqn, strides):
    """A strided read starting at the slice's first element (the gates of a recurrent
    cell are slices of one product)."""
    p = eqn.params
    steps = p["strides"] or (1,) * len(strides)
    return ViewAt([s * k for s, k in zip(strides, steps)],
                  sum(lo * s for lo, s in zip(p["start_indices"], strides)))


@native_rule(transpose_p, kind="view", when=_any_dtype)
def _transpose_native(eqn, strides):
    return [strides[p] for p in eqn.params["permutation"]]


@native_rule(squeeze_p, kind="view", when=_any_dtype)
def _squeeze_native(eqn, strides):
    return [s for d, s in enumerate(strides) if d not in eqn.params["dimensions"]]


@native_rule(expand_dims_p, kind="view", when=_any_dtype)
def _expand_dims_native(eqn, strides):
    out = list(strides)
    for d in sorted(eqn.params["dimensions"]):
        out.insert(d, 0)
    return out


@native_rule(reshape_p, kind="view", when=lambda eqn: eqn.params.get("dimensions") is None)
def _reshape_native(eqn, strides):
    """A reshape reading its operand in order, or only adding or removing size-1 dims; else
    one reading a copy of it in order (heads merged after attention: (batch, heads, tokens,
    dim) transposed, then reshaped to (batch, tokens, heads * dim))."""
    old, new = eqn.invars[0].aval.shape, eqn.outvars[0].aval.shape
    keep = [(d, s) for d, s in zip(old, strides) if d != 1]
    acc, in_order = 1, True
    for d, s in reversed(keep):
        in_order &= s == acc
        acc *= d
    if in_order:
        return contiguous(new)
    if [d for d, _ in keep] != [d for d in new if d != 1]:
        return IN_ORDER
    it = iter(s for _, s in keep)
    return [next(it) if d != 1 else 0 for d in new]
