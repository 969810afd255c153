"""Convolution: the `conv_general_dilated` primitive, with XLA's semantics.

The impl works in the canonical layout (batch, feature, spatial...), held channels-last: it
dilates and pads the input in one scatter into (batch, spatial..., feature), takes a strided
view of all windows (strides and kernel dilation are just view strides), copies them into
im2col patch matrices and contracts with a matmul batched over the groups, a block of patches
at a time. A weight gradient's operands (the image's channels minor, the cotangent as the
kernel) are contracted the other way round, the patches' rows over the features, so that
neither is transposed. `dimension_numbers` only permutes into and out of that layout.
"""
from __future__ import annotations

import functools
import math
import operator
from typing import NamedTuple, Union

import numpy as np
from numpy.lib.stride_tricks import as_strided

from didax._src import core, dtypes
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.interpreters.jvp import defbilinear
from didax._src.interpreters.transpose import is_undefined
from didax._src.lax import window_kernels
from didax._src.lax.dot import canonicalize_precision
from didax._src.lax.elementwise import convert_element_type
from didax._src.lax.shape import full, reshape, rev, transpose
from didax._src.typecheck import any_, check_dtype, int_tuple


class ConvDimensionNumbers(NamedTuple):
    """Where the batch, feature and spatial dimensions of lhs, rhs and the output are.

    lhs_spec and out_spec: (batch dimension, feature dimension, spatial dimensions...);
    rhs_spec: (output feature dimension, input feature dimension, spatial dimensions...).
    """

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


# What `dimension_numbers` of conv_general_dilated may be: None, specs, or layout strings.
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """Converts None, a ConvDimensionNumbers or strings like ('NHWC', 'HWIO', 'NHWC')."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(d) for d in spec) for spec in dimension_numbers))
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)} (lhs shape {tuple(lhs_shape)}, "
                        f"rhs shape {tuple(rhs_shape)}).")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError("convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(spec)} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return ConvDimensionNumbers(*_conv_general_permutations(tuple(dimension_numbers)))


def _conv_general_permutations(specs):
    """Dimension indices for string specs; spatial dimensions follow rhs_spec's order."""
    lhs_spec, rhs_spec, out_spec = specs
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        if not specs[i].count(a) == specs[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {specs[i]}.")
        if len(specs[i]) != len(set(specs[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {specs[i]}.")
    spatial = [set(s) - set(pair) for s, pair in zip(specs, charpairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError("convolution dimension_numbers elements must each have the same set of "
                        f"spatial characters, got {specs}.")

    def perm(spec, pair):
        sdims = sorted((i for i, c in enumerate(spec) if c not in pair),
                       key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(sdims)

    return tuple(perm(s, pair) for s, pair in zip(specs, charpairs))


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> list:
    """(lo, hi) pairs for 'SAME' (extra padding at the end), 'SAME_LOWER' or 'VALID'."""
    kind = padding.upper()
    if kind not in ("SAME", "SAME_LOWER", "VALID"):
        raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                           f"'SAME_LOWER', got {padding}.")
    if not len(in_shape) == len(window_shape) == len(window_strides):
        raise ValueError(f"padtype_to_pads: window_shape {tuple(window_shape)} and window_strides "
                         f"{tuple(window_strides)} must have one entry per spatial dimension of "
                         f"in_shape {tuple(in_shape)}")
    if any(s < 1 for s in window_strides):
        raise ValueError(f"padtype_to_pads: window_strides must be positive, got "
                         f"{tuple(window_strides)}")
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        half = total // 2
        pads.append((half, total - half) if kind == "SAME" else (total - half, half))
    return pads


# --------------------------------------------------------------------------------------
# Shape bookkeeping, in the canonical layout (batch, feature, spatial...)


def dilate_dim(size: int, dilation: int) -> int:
    """Size after inserting dilation - 1 zeros between neighbouring elements."""
    return max(1 + dilation * (size - 1), 0)


def conv_general_permutations(dimension_numbers) -> tuple:
    """The (lhs, rhs, out) permutations into the canonical layout for string specs."""
    return _conv_general_permutations(tuple(dimension_numbers))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1) -> tuple:
    """Output shape for canonical lhs (N, C, ...) and rhs (O, I, ...) shapes (already
    dilated), padding pairs (or 'SAME', 'SAME_LOWER', 'VALID'), and strides."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]="
                         f"{tuple(lhs_shape[2:])}")
    spatial = tuple(max((p - k) // s + 1, 0) for p, k, s in zip(padded, rhs_shape[2:], strides))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + spatial


def _check_conv_params(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                       dimension_numbers, feature_group_count, batch_group_count):
    shapes = f"(lhs shape {lhs.shape}, rhs shape {rhs.shape})"
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ValueError("conv_general_dilated lhs and rhs must have the same number of "
                         f"dimensions, at least 2, but got {lhs.shape} and {rhs.shape}.")
    if type(dimension_numbers) is not ConvDimensionNumbers or any(
            sorted(spec) != list(range(lhs.ndim)) for spec in dimension_numbers):
        raise TypeError("conv_general_dilated dimension_numbers must be a ConvDimensionNumbers "
                        f"of permutations of range({lhs.ndim}), got {dimension_numbers!r} "
                        f"{shapes}")
    nspatial = lhs.ndim - 2
    for name, value in (("window_strides", window_strides), ("padding", padding),
                        ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(value) != nspatial:
            raise ValueError(f"conv_general_dilated {name} must have one entry per spatial "
                             f"dimension ({nspatial}), got {value} {shapes}")
    if any(s < 1 for s in window_strides):
        raise ValueError(f"conv_general_dilated window_strides must be positive, got "
                         f"{window_strides}")
    for dilation in (lhs_dilation, rhs_dilation):
        if any(d < 1 for d in dilation):
            raise TypeError(f"All dilations must be positive, got {dilation}.")
    lhs_spec, rhs_spec, _ = dimension_numbers
    window = tuple(rhs.shape[d] for d in rhs_spec[2:])
    if any(k < 1 for k in window):
        raise ValueError(f"conv_general_dilated kernel spatial dimensions must be positive, got "
                         f"window {window} {shapes}")
    in_features, batch = lhs.shape[lhs_spec[1]], lhs.shape[lhs_spec[0]]
    out_features, kernel_in = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    for name, count, size, what in (
            ("feature_group_count", feature_group_count, in_features, "feature"),
            ("batch_group_count", batch_group_count, batch, "batch")):
        if type(count) is not int or count < 1:
            raise ValueError(f"conv_general_dilated {name} must be a positive integer, got "
                             f"{count!r}.")
        if size % count:
            raise ValueError(f"conv_general_dilated {name} must divide lhs {what} dimension "
                             f"size, but {count} does not divide {size} {shapes}.")
        if what == "feature" and size // count != kernel_in:
            raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                             "feature_group_count must equal the rhs input feature dimension "
                             f"size, but {size} // {count} != {kernel_in} {shapes}.")
        if out_features % count:
            raise ValueError("conv_general_dilated rhs output feature dimension size must be "
                             f"a multiple of {name}, but {out_features} is not a multiple of "
                             f"{count} {shapes}.")
    if batch_group_count > 1 and feature_group_count > 1:
        raise ValueError("At most one of batch_group_count and feature_group_count may be > 1, "
                         f"got batch_group_count={batch_group_count} and "
                         f"feature_group_count={feature_group_count}")


def _check_preferred(input_dtype: np.dtype, preferred: np.dtype):
    """JAX's rule: preferred_element_type keeps the kind (int may become float) and widens."""
    if not (dtypes.issubdtype(input_dtype, np.integer)
            and dtypes.issubdtype(preferred, np.floating)):
        for kind in (np.integer, np.floating, np.complexfloating):
            if dtypes.issubdtype(input_dtype, kind) and not dtypes.issubdtype(preferred, kind):
                raise TypeError("Input type is incompatible with `preferred_element_type`. The "
                                "compatible combinations of (input_type, preferred_element_type) "
                                "are (integral, integral), (integral, floating), (floating, "
                                "floating), (complex, complex).")
        if dtypes.issubdtype(input_dtype, np.signedinteger) and not dtypes.issubdtype(
                preferred, np.signedinteger):
            raise TypeError("`preferred_element_type` must have the same signedness as the "
                            "original type.")
    if np.dtype(preferred).itemsize < np.dtype(input_dtype).itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original type, "
                        f"got {preferred} for inputs of type {input_dtype}.")


# --------------------------------------------------------------------------------------
# The primitive

conv_general_dilated_p = core.primitive("conv_general_dilated")


@functools.lru_cache(maxsize=1024)
def _conv_aval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision=None,
               preferred_element_type=None, out_sharding=None):
    check_dtype("conv_general_dilated", lhs, any_, " (lhs)")
    check_dtype("conv_general_dilated", rhs, any_, " (rhs)")
    if lhs.dtype != rhs.dtype:
        raise TypeError("lax.conv_general_dilated requires arguments to have the same dtypes, "
                        f"got {lhs.dtype.name}, {rhs.dtype.name}.")
    _check_conv_params(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                       dimension_numbers, feature_group_count, batch_group_count)
    dtype = lhs.dtype
    if preferred_element_type is not None:
        _check_preferred(dtype, preferred_element_type)
        dtype = np.dtype(preferred_element_type)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_shape = [lhs.shape[d] for d in lhs_spec]
    rhs_shape = [rhs.shape[d] for d in rhs_spec]
    lhs_shape[2:] = map(dilate_dim, lhs_shape[2:], lhs_dilation)
    rhs_shape[2:] = map(dilate_dim, rhs_shape[2:], rhs_dilation)
    out = conv_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, batch_group_count)
    shape = tuple(out[i] for i in np.argsort(out_spec))
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


def _dilate_and_pad(x, dilation, padding):
    """Inserts dilation - 1 zeros between spatial elements, then pads (negative crops).
    `x` is (A, Z, spatial...); the result is (A, spatial..., Z), C-contiguous, as the
    im2col copy wants it (Z minor), so an operand laid out that way is never transposed
    and back."""
    last = np.moveaxis(x, 1, -1)
    if all(d == 1 for d in dilation) and all(p == (0, 0) for p in padding):
        return np.ascontiguousarray(last)
    sizes = [lo + dilate_dim(n, d) + hi for n, d, (lo, hi) in zip(x.shape[2:], dilation, padding)]
    out = np.zeros(x.shape[:1] + tuple(sizes) + x.shape[1:2], x.dtype)
    src, dst = [slice(None)], [slice(None)]
    for n, d, (lo, _), size in zip(x.shape[2:], dilation, padding, sizes):
        # Input element j lands at lo + j * d; keep those that land inside [0, size).
        first = max(0, -(lo // d))
        stop = min(n, (size - lo + d - 1) // d)
        if stop <= first:
            return out
        src.append(slice(first, stop))
        dst.append(slice(lo + first * d, lo + (stop - 1) * d + 1, d))
    out[tuple(dst)] = last[tuple(src)]
    return out


# Patches are copied and multiplied a block at a time, so that a block's patches are still
# in the core's cache when the product reads them: a whole im2col matrix of a few MB is
# written out to memory and read back. Without groups, a block is a run of (image, output
# row) items (summing over features, of (feature, window row) items) whose product is
# within what OpenBLAS runs on the calling thread (window_kernels.SINGLE_THREADED_PRODUCT),
# so that blocks run side by side on the native tier's threads. Grouped convolutions' patch
# matrices up to _WHOLE_BYTES are one block; larger ones are cut into blocks of about
# _BLOCK_BYTES of images. The blocks depend on the shapes alone, so every call, on either
# tier, on any machine and thread count, cuts alike and adds the same numbers in the same
# order.
_WHOLE_BYTES = 1 << 20
_BLOCK_BYTES = 1 << 17


def _block(count: int, item_bytes: int) -> int:
    """How many items of `item_bytes` bytes of patches one block copies."""
    if count * item_bytes <= _WHOLE_BYTES:
        return max(count, 1)
    return max(1, _BLOCK_BYTES // item_bytes)


def _product_block(items: int, per_item: int) -> int:
    """How many items (of `per_item` multiply-adds of product each) one block of the C loop
    takes: as many as keep its product within what OpenBLAS runs on the calling thread, so
    that blocks run side by side on the native tier's threads (see window_kernels)."""
    return max(1, min(items, window_kernels.SINGLE_THREADED_PRODUCT // max(per_item, 1)))


def _item_blocks(items: int, step: int, item_rows: int):
    """The rows of each block of `step` items (`item_rows` rows an item) of a patch matrix,
    as slices, in order: the blocks the C loop cuts (see window_kernels.patch_products)."""
    for i0 in range(0, items, step):
        yield slice(i0 * item_rows, min(items, i0 + step) * item_rows)


def _windows(x, outer, window, out_sp, inner, strides, rhs_dilation, window_first):
    """A strided view of every window of `x` (outer, spatial..., inner): (outer, out
    spatial..., window..., inner), or (outer, window..., out spatial..., inner) if
    `window_first`; strides and kernel dilation are just view strides."""
    st = x.strides
    sp = st[1:-1]
    at = tuple(a * s for a, s in zip(sp, strides))
    within = tuple(a * r for a, r in zip(sp, rhs_dilation))
    shape, steps = ((window + out_sp, within + at) if window_first
                    else (out_sp + window, at + within))
    return as_strided(x, (outer,) + shape + (inner,), st[:1] + steps + st[-1:],
                      writeable=False)


def _by_feature(lhs_view, rhs_view, feature_group_count, batch_group_count) -> bool:
    """Whether to contract with the features as the patches' rows: a weight gradient, whose
    operands are an image laid out with its channels (the convolution's batch) minor and
    a cotangent laid out (feature, spatial..., out feature), as they come, with no
    transposing copy of either (the usual patches would take a transposed copy of both)."""
    if feature_group_count != 1 or batch_group_count != 1:
        return False
    w_st = [abs(s) for s, n in zip(rhs_view.strides[2:], rhs_view.shape[2:]) if n > 1]
    if not w_st or rhs_view.shape[1] == 1:
        return False
    if max(w_st) >= abs(rhs_view.strides[1]):
        return False
    b, c = lhs_view.shape[:2]
    return b == 1 or (c > 1 and abs(lhs_view.strides[0]) < abs(lhs_view.strides[1]))


def _conv_by_batch(x, w, strides, rhs_dilation, feature_group_count, batch_group_count,
                   out_shape):
    """Convolution of x (N, spatial..., C), C-contiguous, with w (O, I, window...), as
    products of im2col patches (rows: batch and output position; columns: window position
    and channel, gathered channels-last so the copy moves contiguous runs) with the kernel,
    batched over the groups. The result is (N, O, spatial...), a view of a channels-last
    array if no groups."""
    nsp = x.ndim - 2
    n, c, window, out_sp = x.shape[0], x.shape[-1], w.shape[2:], out_shape[2:]
    windows = _windows(x, n, window, out_sp, c, strides, rhs_dilation, False)
    if batch_group_count > 1:  # the group index is the major part of the batch dimension
        g = batch_group_count
        windows = windows.reshape((g, n // g) + windows.shape[1:])
    else:  # ... or of the feature dimension
        g = feature_group_count
        windows = np.moveaxis(windows.reshape(windows.shape[:-1] + (g, c // g)), -2, 0)
    rows, cols = windows.shape[1], windows.shape[-1]
    positions, k = math.prod(out_sp), math.prod(window) * cols
    og = w.shape[0] // g
    kernel = np.moveaxis(w.reshape((g, og) + w.shape[1:]), 1, -1)  # (G, I, window..., O/G)
    kernel = np.moveaxis(kernel, 1, -2).reshape(g, -1, og)  # rows ordered like patch columns
    if g == 1:  # items: (batch, first output dimension); in C where it is built
        view, kernel = windows[0], np.ascontiguousarray(kernel[0])
        lead, first = (2, out_sp[0]) if out_sp else (1, 1)
        items, item_rows = rows * first, positions // first
        step = _product_block(items, item_rows * k * og)

        def twin():
            patches = window_kernels.contiguous_copy(view, x).reshape(items * item_rows, k)
            out = np.empty((items * item_rows, og), np.result_type(x.dtype, w.dtype))
            for at in _item_blocks(items, step, item_rows):
                np.matmul(patches[at], kernel, out=out[at])
            return out

        out = window_kernels.patch_products(view, x, lead, step, item_rows, k, kernel, False,
                                            twin)
        out = (twin() if out is None else out)[None]
    else:  # groups: blocks of images, all groups' products at once
        out = np.empty((g, rows * positions, og), np.result_type(x.dtype, w.dtype))
        step = _block(rows, g * positions * k * x.dtype.itemsize)
        for r0, r1, patches in window_kernels.contiguous_blocks(windows, x, 1, step):
            np.matmul(patches.reshape(g, (r1 - r0) * positions, k), kernel,
                      out=out[:, r0 * positions:r1 * positions])
    out = out.reshape((g, rows) + out_sp + (og,))
    if g == 1:
        return np.moveaxis(out[0], -1, 1)
    return out.transpose((1, 0, nsp + 2) + tuple(range(2, nsp + 2))).reshape(out_shape)


def _conv_by_feature(x, w, strides, rhs_dilation, out_shape):
    """The same convolution of x (C, spatial..., N), C-contiguous, as products of patches
    whose rows are (channel, window position) and whose columns are (output position,
    batch), transposed, with the kernel read (C, window..., O): a weight gradient's
    operands as they are laid out. The blocks' products are summed in order."""
    nsp = x.ndim - 2
    c, n, window, out_sp = x.shape[0], x.shape[-1], w.shape[2:], out_shape[2:]
    windows = _windows(x, c, window, out_sp, n, strides, rhs_dilation, True)
    per_c, columns = math.prod(window), math.prod(out_sp) * n
    # (C, window..., O)
    kernel = np.ascontiguousarray(np.moveaxis(w, 0, -1).reshape(c * per_c, w.shape[0]))
    lead, first = (2, window[0]) if window else (1, 1)  # items: (channel, first window dim)
    items, item_rows = c * first, per_c // first
    step = _product_block(items, item_rows * columns * w.shape[0])

    def twin():
        patches = window_kernels.contiguous_copy(windows, x).reshape(items * item_rows,
                                                                     columns)
        out = None
        for at in _item_blocks(items, step, item_rows):
            part = np.matmul(patches[at].T, kernel[at])
            if out is None:
                out = part
            else:
                out += part
        if out is None:  # no channels: nothing to sum
            out = np.zeros((columns, w.shape[0]), np.result_type(x.dtype, w.dtype))
        return out

    out = window_kernels.patch_products(windows, x, lead, step, item_rows, columns, kernel,
                                        True, twin)
    if out is None:
        out = twin()
    out = out.reshape(out_sp + (n, w.shape[0]))
    return out.transpose((nsp, nsp + 1) + tuple(range(nsp)))


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count,
               preferred_element_type=None, **_):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if preferred_element_type is not None:
        dt = np.result_type(lhs.dtype, preferred_element_type)
        lhs, rhs = lhs.astype(dt, copy=False), rhs.astype(dt, copy=False)
    x, w = lhs.transpose(lhs_spec), rhs.transpose(rhs_spec)
    w_sp = tuple(dilate_dim(k, r) for k, r in zip(w.shape[2:], rhs_dilation))
    in_sp = tuple(lo + dilate_dim(k, d) + hi
                  for k, d, (lo, hi) in zip(x.shape[2:], lhs_dilation, padding))
    out_shape = conv_shape_tuple(x.shape[:2] + in_sp, w.shape[:2] + w_sp, window_strides,
                                 [(0, 0)] * len(w_sp), batch_group_count)
    if math.prod(out_shape) == 0:
        out = np.zeros(out_shape, np.result_type(x.dtype, w.dtype))
    elif _by_feature(x, w, feature_group_count, batch_group_count):
        x = _dilate_and_pad(np.swapaxes(x, 0, 1), lhs_dilation, padding)
        out = _conv_by_feature(x, w, window_strides, rhs_dilation, out_shape)
    else:
        x = _dilate_and_pad(x, lhs_dilation, padding)
        out = _conv_by_batch(x, w, window_strides, rhs_dilation, feature_group_count,
                             batch_group_count, out_shape)
    return out.transpose(np.argsort(out_spec))


conv_general_dilated_p.def_impl(_conv_impl)
conv_general_dilated_p.def_abstract_eval(_conv_aval)
defbilinear(conv_general_dilated_p)


# --------------------------------------------------------------------------------------
# Transpose rules (reverse mode): JAX's formulas. The cotangent of either operand is itself
# a convolution, with the roles of strides and dilations exchanged.


def _reshape_axis_into(src: int, dst: int, x):
    """Merges axis `src` into axis `dst` (numbered after removing `src`), as its major part."""
    shape = get_aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [d for i, d in enumerate(shape) if i != src]
    new_shape[dst] *= shape[src]
    return reshape(x, new_shape, perm)


def _reshape_axis_out_of(src: int, size1: int, x):
    """Splits axis `src` into (size1, rest)."""
    shape = list(get_aval(x).shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return reshape(x, shape)


def _spec_transpose(spec) -> tuple:
    return (spec[1], spec[0]) + tuple(spec[2:])


def _dilated(shape, dilation) -> list:
    return [dilate_dim(d, r) for d, r in zip(shape, dilation)]


def _vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation,
                     rhs_dilation) -> tuple:
    lhs_d, rhs_d = _dilated(in_shape, lhs_dilation), _dilated(window, rhs_dilation)
    out_d = _dilated(out_shape, strides)
    before = [k - lo - 1 for k, (lo, _) in zip(rhs_d, padding)]
    return tuple((b, n + k - 1 - o - b) for b, n, k, o in zip(before, lhs_d, rhs_d, out_d))


def _vjp_rhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation,
                     rhs_dilation) -> tuple:
    lhs_d, rhs_d = _dilated(in_shape, lhs_dilation), _dilated(window, rhs_dilation)
    out_d = _dilated(out_shape, strides)
    return tuple((lo, o - n + k - lo - 1) for (lo, _), n, k, o in zip(padding, lhs_d, rhs_d,
                                                                     out_d))


def _conv_transpose_lhs(ct, lhs_aval, rhs, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision, preferred_element_type):
    """A convolution of the cotangent with the spatially reversed kernel, its in/out features
    swapped; window strides become lhs dilation (and lhs dilation window strides)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    rhs_shape = get_aval(rhs).shape
    if feature_group_count > 1:  # the group axis moves into the kernel's input features
        rhs = _reshape_axis_out_of(rhs_spec[0], feature_group_count, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    elif batch_group_count > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], batch_group_count, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
        feature_group_count = batch_group_count
    pads = _vjp_lhs_padding([lhs_aval.shape[d] for d in lhs_spec[2:]],
                            [rhs_shape[d] for d in rhs_spec[2:]], window_strides,
                            [get_aval(ct).shape[d] for d in out_spec[2:]], padding,
                            lhs_dilation, rhs_dilation)
    kernel = rev(rhs, tuple(rhs_spec[2:]))
    if get_aval(kernel).dtype != get_aval(ct).dtype:
        kernel = convert_element_type(kernel, get_aval(ct).dtype)
    out = conv_general_dilated_p.bind(
        ct, kernel, window_strides=lhs_dilation, padding=pads, lhs_dilation=window_strides,
        rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDimensionNumbers(out_spec, _spec_transpose(rhs_spec), lhs_spec),
        feature_group_count=feature_group_count, batch_group_count=1, precision=precision,
        preferred_element_type=preferred_element_type, out_sharding=None)
    if get_aval(out).dtype != lhs_aval.dtype:
        out = convert_element_type(out, lhs_aval.dtype)
    if batch_group_count > 1:  # the groups come back out of the features into the batch
        out = _reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _conv_transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision, preferred_element_type):
    """A convolution of lhs with the cotangent as kernel, batch and features swapped (feature
    groups become batch groups and vice versa); window strides become kernel dilation."""
    ct_aval = get_aval(ct)
    if ct_aval.size == 0:  # avoids a degenerate convolution with an empty kernel
        return Zero(rhs_aval)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if batch_group_count > 1:
        feature_group_count, batch_group_count = batch_group_count, 1
    elif feature_group_count > 1:
        feature_group_count, batch_group_count = 1, feature_group_count
    pads = _vjp_rhs_padding([get_aval(lhs).shape[d] for d in lhs_spec[2:]],
                            [rhs_aval.shape[d] for d in rhs_spec[2:]], window_strides,
                            [ct_aval.shape[d] for d in out_spec[2:]], padding, lhs_dilation,
                            rhs_dilation)
    if get_aval(lhs).dtype != ct_aval.dtype:
        lhs = convert_element_type(lhs, ct_aval.dtype)
    out = conv_general_dilated_p.bind(
        lhs, ct, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides,
        dimension_numbers=ConvDimensionNumbers(_spec_transpose(lhs_spec),
                                               _spec_transpose(out_spec),
                                               _spec_transpose(rhs_spec)),
        feature_group_count=feature_group_count, batch_group_count=batch_group_count,
        precision=precision, preferred_element_type=preferred_element_type, out_sharding=None)
    if get_aval(out).dtype != rhs_aval.dtype:
        out = convert_element_type(out, rhs_aval.dtype)
    return out


def _conv_transpose(ct, lhs, rhs, *, out_sharding=None, **params):
    if is_undefined(lhs) and is_undefined(rhs):
        raise NotImplementedError("transpose of 'conv_general_dilated': the convolution of two "
                                  "linear values is not linear")
    if is_undefined(lhs):
        return [_conv_transpose_lhs(ct, lhs.aval, rhs, **params), None]
    return [None, _conv_transpose_rhs(ct, lhs, rhs.aval, **params)]


conv_general_dilated_p.def_transpose(_conv_transpose)


# --------------------------------------------------------------------------------------
# lax wrappers


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """N-d convolution with strides, padding, input/kernel dilation and feature groups.

    `padding` is 'SAME', 'SAME_LOWER', 'VALID' or a sequence of (low, high) pairs;
    `dimension_numbers` is None (NCHW, OIHW, NCHW), a ConvDimensionNumbers, or strings
    such as ('NHWC', 'HWIO', 'NHWC').
    """
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    nspatial = len(lhs_shape) - 2
    window_strides = int_tuple("conv_general_dilated", "window_strides", window_strides)
    if lhs_dilation is None:
        lhs_dilation = (1,) * nspatial
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError("String padding is not implemented for transposed convolution using "
                         "this op. Please either exactly specify the required padding or use "
                         "conv_transpose.")
    rhs_dilation = (1,) * nspatial if rhs_dilation is None else rhs_dilation
    rhs_dilation = int_tuple("conv_general_dilated", "rhs_dilation", rhs_dilation)
    if isinstance(padding, str):
        in_shape = [lhs_shape[d] for d in dnums.lhs_spec[2:]]
        window = [dilate_dim(rhs_shape[d], r) for d, r in zip(dnums.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads(in_shape, window, window_strides, padding)
    try:
        padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (ValueError, TypeError):
        raise ValueError("padding argument to conv_general_dilated should be a string or a "
                         f"sequence of (low, high) pairs, got {padding}") from None
    preferred = (None if preferred_element_type is None else
                 dtypes.check_and_canonicalize_user_dtype(preferred_element_type,
                                                          "conv_general_dilated"))
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=window_strides, padding=padding,
        lhs_dilation=int_tuple("conv_general_dilated", "lhs_dilation", lhs_dilation),
        rhs_dilation=rhs_dilation,
        dimension_numbers=dnums, feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count),
        precision=canonicalize_precision(precision), preferred_element_type=preferred,
        out_sharding=out_sharding)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """Convolution in the NCHW/OIHW layout, without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_batch(size, vals, dims, **params):
    (lhs, rhs), (lbd, rbd) = vals, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    feature_groups, batch_groups = params["feature_group_count"], params["batch_group_count"]
    if size == 0:  # nothing to fold into: group counts would become 0
        avals = [get_aval(v) for v in vals]
        unbatched = [a if d is None else ShapedArray(a.shape[:d] + a.shape[d + 1:], a.dtype)
                     for a, d in zip(avals, dims)]
        out = _conv_aval(*unbatched, **params)
        return full((0,) + out.shape, 0, out.dtype), 0

    def conv(x, w, **changes):
        return conv_general_dilated_p.bind(x, w, **{**params, **changes})

    if lbd is not None and rbd is not None:
        if batch_groups > 1:
            new_lhs = _reshape_axis_into(lbd, lhs_spec[0], lhs)
            groups = {"batch_group_count": batch_groups * size}
        else:
            new_lhs = _reshape_axis_into(lbd, lhs_spec[1], lhs)
            groups = {"feature_group_count": feature_groups * size}
        out = conv(new_lhs, _reshape_axis_into(rbd, rhs_spec[0], rhs), **groups)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if lbd is not None:
        if batch_groups == 1:
            new_lhs = _reshape_axis_into(lbd, lhs_spec[0], lhs)
        else:  # batch (groups, n) becomes (groups, size * n)
            new_lhs = _reshape_axis_out_of(lhs_spec[0] + (lbd <= lhs_spec[0]), batch_groups, lhs)
            new_lhs = _reshape_axis_into(lbd + (lhs_spec[0] < lbd), lhs_spec[0] + 1, new_lhs)
            new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = conv(new_lhs, rhs)
        return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
    if feature_groups == 1 and batch_groups == 1:
        out = conv(lhs, _reshape_axis_into(rbd, rhs_spec[0], rhs))
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    # Output features (groups, o) become (groups, size * o), and come out as size, groups * o.
    groups = max(feature_groups, batch_groups)
    new_rhs = _reshape_axis_out_of(rhs_spec[0] + (rbd <= rhs_spec[0]), groups, rhs)
    new_rhs = _reshape_axis_into(rbd + (rhs_spec[0] < rbd), rhs_spec[0] + 1, new_rhs)
    new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv(lhs, new_rhs)
    out = _reshape_axis_out_of(out_spec[1], groups, out)
    out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
    return _reshape_axis_into(out_spec[1], out_spec[1] + 1, out), out_spec[1]


conv_general_dilated_p.def_batch(_conv_batch)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """Convolution in the NCHW/OIHW layout, with dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers) -> tuple:
    """The output shape of a convolution with string dimension numbers."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple([lhs_shape[d] for d in lhs_perm], [rhs_shape[d] for d in rhs_perm],
                           window_strides, padding)
    return tuple(out[i] for i in np.argsort(out_perm))


def _conv_transpose_padding(k: int, s: int, padding) -> tuple:
    """(before, after) padding of a transposed convolution's dilated input, for kernel size
    k, stride s and the forward convolution's padding ('SAME', 'VALID' or a pair)."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else -(-pad_len // 2)
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers) -> tuple:
    """The output shape of `conv_transpose` with string dimension numbers."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t, rhs_t = [lhs_shape[d] for d in lhs_perm], [rhs_shape[d] for d in rhs_perm]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs_t[2:], window_strides)]
    space = [(i - 1) * s - k + 2 + sum(p)
             for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, padding)]
    out = (lhs_t[0], rhs_t[0]) + tuple(space)
    return tuple(int(out[i]) for i in np.argsort(out_perm))


_TRANSPOSE_DEFAULT_SPECS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                            4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """A fractionally strided convolution (the strides dilate the input), as in
    keras.layers.Conv2DTranspose; the default layout is channels-last (TensorFlow's).

    'SAME' and 'VALID' (and, with `use_consistent_padding`, explicit pairs) describe the
    forward convolution's padding; otherwise pairs pad the transposed convolution itself.
    `transpose_kernel` flips the kernel spatially and swaps its input and output features,
    which makes this the gradient of the forward convolution with the same kernel.
    """
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    if len(lhs_shape) != len(rhs_shape) or len(lhs_shape) < 2:
        raise ValueError(f"conv_transpose: lhs and rhs must have the same rank, at least 2, "
                         f"got shapes {lhs_shape} and {rhs_shape}")
    ndim = len(lhs_shape)
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_DEFAULT_SPECS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULT_SPECS[ndim]
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    kernel_spatial = [rhs_shape[d] for d in dn.rhs_spec[2:]]
    rhs_dilation = (1,) * (ndim - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        sizes = map(dilate_dim, kernel_spatial, rhs_dilation)
        per_dim = [padding] * len(strides) if isinstance(padding, str) else [
            tuple(p) for p in padding]
        pads = tuple(_conv_transpose_padding(k, s, p) for k, s, p in zip(sizes, strides,
                                                                          per_dim))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ndim))
        o, i = dn.rhs_spec[0], dn.rhs_spec[1]
        perm[o], perm[i] = i, o
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, lhs_dilation=strides,
                                rhs_dilation=rhs_dilation, dimension_numbers=dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


__all__ = [
    "ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated", "conv",
    "conv_with_general_padding", "padtype_to_pads", "conv_transpose", "conv_shape_tuple",
    "conv_general_shape_tuple", "conv_transpose_shape_tuple", "conv_general_permutations",
    "ConvGeneralDilatedDimensionNumbers",
]
