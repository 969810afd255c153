"""Tensor contraction: the `dot_general` primitive behind dot, matmul, einsum and tensordot.

`dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))`; the output
dimensions are the batch dimensions, then lhs's free dimensions, then rhs's. The impl maps
every contraction onto one (batched) `np.matmul`; the plain matrix product goes straight
to `@` because it sits on the hot path of every dense layer. The dimension bookkeeping
lives in small helpers so that the transpose rule can reuse it.
"""
from __future__ import annotations

import enum
import functools
import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from didax._src import core, dtypes
from didax._src.compiler.codegen import codegen_rule
from didax._src.compiler.native.loops import contiguous
from didax._src.compiler.native.rules import FLOATS, Matmul, native_rule
from didax._src.config import config
from didax._src.core import ShapedArray, get_aval
from didax._src.interpreters import sharding
from didax._src.interpreters.jvp import defbilinear
from didax._src.interpreters.transpose import is_undefined
from didax._src.ir import DropVar, JaxprEqn, Literal, Var
from didax._src.lax.dot_algorithm import as_dot_algorithm
from didax._src.lax.elementwise import add_p, convert_element_type, mul_p
from didax._src.lax.shape import broadcast_in_dim_p, squeeze_p, transpose, transpose_p
from didax._src.typecheck import any_, check_dtype

# --------------------------------------------------------------------------------------
# Precision: accepted for API compatibility, printed in jaxprs, ignored by NumPy.


class Precision(enum.Enum):
    """Matmul precision on accelerators. NumPy on CPU always computes at full precision."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        return _PRECISION_STRINGS.get(value)

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


_PRECISION_STRINGS = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT,
}


def canonicalize_precision(precision):
    """None, or a pair of `Precision`s (lhs, rhs), as stored in the `precision` param."""
    if precision is None:
        default = config.read("jax_default_matmul_precision")
        return None if default is None else canonicalize_precision(default)
    if isinstance(precision, Precision):
        return precision, precision
    if as_dot_algorithm(precision) is not None:  # a DotAlgorithm, a preset or a preset's name
        return as_dot_algorithm(precision)
    if isinstance(precision, str):
        if precision in _PRECISION_STRINGS:
            return _PRECISION_STRINGS[precision], _PRECISION_STRINGS[precision]
    elif isinstance(precision, (list, tuple)) and len(precision) == 2 and all(
            isinstance(p, (Precision, str)) for p in precision):
        return tuple(canonicalize_precision(p)[0] for p in precision)
    raise ValueError(f"precision must be None, a string in {list(_PRECISION_STRINGS)}, a "
                     "lax.Precision value, a pair of those, a lax.DotAlgorithm, a "
                     f"lax.DotAlgorithmPreset or a preset's name, got {precision!r}")


# --------------------------------------------------------------------------------------
# Dimension bookkeeping


def free_dims(ndim: int, contract, batch) -> tuple:
    """An operand's dimensions that are neither contracted nor batched, in order."""
    taken = set(contract) | set(batch)
    return tuple(d for d in range(ndim) if d not in taken)


def dot_general_shape(lhs_shape, rhs_shape, dimension_numbers) -> tuple:
    """Output shape: batch dimensions, then lhs free dimensions, then rhs free dimensions."""
    (lc, rc), (lb, rb) = dimension_numbers
    return (tuple(lhs_shape[d] for d in lb)
            + tuple(lhs_shape[d] for d in free_dims(len(lhs_shape), lc, lb))
            + tuple(rhs_shape[d] for d in free_dims(len(rhs_shape), rc, rb)))


def _check_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    shapes = f"(lhs shape {lhs_shape}, rhs shape {rhs_shape})"
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        if not all(type(d) is int for dims in (lc, rc, lb, rb) for d in dims):
            raise TypeError
    except (TypeError, ValueError):
        raise TypeError("dot_general requires dimension_numbers of the form ((lhs_contracting, "
                        "rhs_contracting), (lhs_batch, rhs_batch)) with tuples of ints, got "
                        f"{dimension_numbers!r}") from None
    for side, shape, contract, batch in (("lhs", lhs_shape, lc, lb), ("rhs", rhs_shape, rc, rb)):
        if not all(0 <= d < len(shape) for d in contract + batch):
            raise TypeError(f"dot_general requires {side} dimension numbers to be nonnegative "
                            f"and less than the number of axes of the {side} value, got "
                            f"{side}_batch of {batch} and {side}_contracting of {contract} "
                            f"for {side} of rank {len(shape)} {shapes}")
    if len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs_batch and rhs_batch "
                        f"dimensions, got lhs_batch {lb} and rhs_batch {rb} {shapes}.")
    for side, contract, batch in (("lhs", lc, lb), ("rhs", rc, rb)):
        if len(set(batch)) != len(batch):
            raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, got "
                            f"{side}_batch {batch}.")
        if len(set(contract)) != len(contract):
            raise TypeError(f"dot_general requires {side} contracting dimensions to be "
                            f"distinct, got {side}_contracting {contract}.")
        if set(batch) & set(contract):
            raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from "
                            f"contracting dimensions, got {side}_batch {batch} and "
                            f"{side}_contracting {contract}.")
    for what, ldims, rdims in (("batch", lb, rb), ("contracting", lc, rc)):
        lsizes = tuple(lhs_shape[d] for d in ldims)
        rsizes = tuple(rhs_shape[d] for d in rdims)
        if lsizes != rsizes:
            which = ("lhs batch dimensions and rhs batch dimensions" if what == "batch"
                     else "contracting dimensions")
            raise TypeError(f"dot_general requires {which} to have the same shape, got "
                            f"{lsizes} and {rsizes} {shapes}.")


# --------------------------------------------------------------------------------------
# Dtypes: XLA's rule. Mixed inputs give the "higher-precision" one; preferred_element_type
# may widen the result (and may change the kind, e.g. int8 inputs to a float32 result).


def _type_rank(dt: np.dtype) -> tuple:
    """Orders dtypes as XLA's HigherPrecisionType does: complex, range, mantissa, bits, sign."""
    real = dtypes.finfo(dt).dtype if dtypes.issubdtype(dt, np.complexfloating) else dt
    is_float = dtypes.issubdtype(real, np.floating)
    return (dtypes.issubdtype(dt, np.complexfloating),
            dtypes.finfo(real).maxexp if is_float else -1,
            dtypes.finfo(real).nmant if is_float else -1,
            _bit_width(real),
            not dtypes.issubdtype(real, np.unsignedinteger))


def _bit_width(dt: np.dtype) -> int:
    if dtypes.issubdtype(dt, np.inexact):
        return dtypes.finfo(dt).bits  # of the real part, for complex dtypes
    return 1 if dt == np.bool_ else np.dtype(dt).itemsize * 8


@functools.lru_cache(maxsize=None)
def dot_general_dtype(lhs_dtype: np.dtype, rhs_dtype: np.dtype, preferred) -> np.dtype:
    """The output dtype of a contraction of `lhs_dtype` and `rhs_dtype` values."""
    lrank, rrank = _type_rank(lhs_dtype), _type_rank(rhs_dtype)
    if lrank == rrank and lhs_dtype != rhs_dtype:
        raise TypeError(f"lax.dot_general argument type error: {lhs_dtype}, {rhs_dtype}")
    result = lhs_dtype if lrank >= rrank else rhs_dtype
    if preferred is None or preferred == result:
        return result
    if not dtypes.issubdtype(result, np.floating) and _bit_width(preferred) < _bit_width(result):
        raise TypeError("`preferred_element_type` must not be narrower than the original type, "
                        f"got preferred_element_type of {preferred} for result type of "
                        f"{result}.")
    return np.dtype(preferred)


def _compute_dtype(lhs_dtype, rhs_dtype, preferred) -> np.dtype:
    """The dtype NumPy computes in: wide enough for both inputs and the output."""
    return np.result_type(lhs_dtype, rhs_dtype, *(() if preferred is None else (preferred,)))


# --------------------------------------------------------------------------------------
# The primitive

dot_general_p = core.primitive("dot_general")
dot_general_p.pp_hidden = {"precision": None, "preferred_element_type": None,
                           "out_sharding": core.PP_ALWAYS_HIDE}
dot_general_p.pp_format = {
    "dimension_numbers": lambda dn: tuple(tuple(list(d) for d in pair) for pair in dn),
}


def _dot_general_impl(lhs, rhs, *, dimension_numbers, preferred_element_type=None, **_):
    (lc, rc), (lb, rb) = dimension_numbers
    same_dtype = lhs.dtype == rhs.dtype and (preferred_element_type is None
                                             or preferred_element_type == lhs.dtype)
    if same_dtype and lc:
        g = _gemm_of(lhs.shape, rhs.shape, lhs.dtype, dimension_numbers)
        if g is not None:  # (as jit computes it: see gemm_product)
            return gemm_product(lhs, rhs, g, dot_general_shape(lhs.shape, rhs.shape,
                                                               dimension_numbers))
    if same_dtype and not lb and lhs.ndim == 2 and rhs.ndim == 2:
        # Matrix products with either operand transposed (as transposition produces them):
        # NumPy's matmul takes the transposed views without copying.
        if lc == (1,) and rc == (0,):
            return lhs @ rhs
        if lc == (0,) and rc == (0,):
            return lhs.T @ rhs
        if lc == (1,) and rc == (1,):
            return lhs @ rhs.T
        if lc == (0,) and rc == (1,):
            return lhs.T @ rhs.T
    if same_dtype and not lb and rc == (0,) and lc == (lhs.ndim - 1,) and rhs.ndim <= 2:
        return lhs @ rhs  # matrix/vector products, including a stacked lhs
    if same_dtype and not lc:  # a broadcast product (as jit computes it)
        lf, rf = free_dims(lhs.ndim, lc, lb), free_dims(rhs.ndim, rc, rb)
        x = lhs.transpose(tuple(lb) + lf).reshape(
            [lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lf] + [1] * len(rf))
        y = rhs.transpose(tuple(rb) + rf).reshape(
            [rhs.shape[d] for d in rb] + [1] * len(lf) + [rhs.shape[d] for d in rf])
        return np.multiply(x, y, order="C")
    if not same_dtype:
        dt = _compute_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
        lhs, rhs = lhs.astype(dt, copy=False), rhs.astype(dt, copy=False)
    # Row-major first: NumPy's matmul picks its BLAS routine (or its own loop) by the
    # strides of the views below, so the bits would follow the operands' memory layout,
    # which differs between jit's tiers (and between eager calls on equal values).
    lhs, rhs = _in_row_major(lhs), _in_row_major(rhs)
    lf, rf = free_dims(lhs.ndim, lc, lb), free_dims(rhs.ndim, rc, rb)
    batch = [lhs.shape[d] for d in lb]
    lfree, rfree = [lhs.shape[d] for d in lf], [rhs.shape[d] for d in rf]
    k = math.prod(lhs.shape[d] for d in lc)
    x = lhs.transpose(lb + lf + lc).reshape(math.prod(batch), math.prod(lfree), k)
    y = rhs.transpose(rb + rc + rf).reshape(math.prod(batch), k, math.prod(rfree))
    return np.matmul(x, y).reshape(batch + lfree + rfree)


@functools.lru_cache(maxsize=4096)
def _dot_general_aval(lhs, rhs, *, dimension_numbers, precision=None,
                      preferred_element_type=None, out_sharding=None):
    check_dtype("dot_general", lhs, any_, " (lhs)")
    check_dtype("dot_general", rhs, any_, " (rhs)")
    _check_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    dtype = dot_general_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    shape = dot_general_shape(lhs.shape, rhs.shape, dimension_numbers)
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


dot_general_p.def_impl(_dot_general_impl)
dot_general_p.def_abstract_eval(_dot_general_aval)
defbilinear(dot_general_p)


# --------------------------------------------------------------------------------------
# Transpose rules (reverse mode): dot_general is linear in whichever operand is undefined.


def _argsort(seq) -> tuple:
    """A stable argsort of a few dimension numbers (NumPy's costs microseconds on tuples)."""
    return tuple(sorted(range(len(seq)), key=seq.__getitem__))


def _swapped_dimension_numbers(dimension_numbers, lhs_ndim: int, rhs_ndim: int, perm):
    """Dimension numbers of the product with its operands swapped if that product is this
    one's result permuted by `perm` (batch, then rhs free, then lhs free), else None."""
    (lc, rc), (lb, rb) = dimension_numbers
    nb = len(lb)
    nl, nr = lhs_ndim - len(lc) - nb, rhs_ndim - len(rc) - nb
    if tuple(perm) != (tuple(range(nb)) + tuple(range(nb + nl, nb + nl + nr))
                       + tuple(range(nb, nb + nl))):
        return None
    return (rc, lc), (rb, lb)


def _swapped_precision(precision):
    if precision is None or as_dot_algorithm(precision) is not None:
        return precision
    return precision[1], precision[0]


# For products contracting at least this many elements per result, a transposed copy of the
# result costs a tenth to two thirds of the product (measured on float32 (b, i, k) batches):
# a fair price for a row-major cotangent, which every later elementwise use reads faster.
_COPY_MIN_CONTRACTION = 64


def _dot_general_transpose_lhs(ct, x, y, *, dimension_numbers, precision=None,
                               preferred_element_type=None, out_sharding=None,
                               swap_ans=False):
    """JAX's rule: contract the cotangent with y over y's free and batch dimensions, then
    permute the result (batch, x free, x contracting in y's order) into x's layout.

    Staged, this is JAX's jaxpr, and jit swaps the product's operands instead of permuting
    (`_dot_general_permuted_result`). Evaluated now, the swapped product is computed (or the
    permuted result copied, when that is cheap): a transposed view would make every
    elementwise use of the cotangent, such as an optimizer's update, run strided."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = free_dims(x.aval.ndim, x_contract, x_batch)
    y_kept = free_dims(get_aval(y).ndim, y_contract, y_batch)
    nb = len(x_batch)
    y_start = nb if swap_ans else nb + len(x_kept)
    dims = ((tuple(range(y_start, y_start + len(y_kept))), y_kept),
            (tuple(range(nb)), y_batch))
    x_contract_by_y = tuple(x_contract[i] for i in _argsort(y_contract))
    out_axes = _argsort(x_batch + x_kept + x_contract_by_y)
    params = {"preferred_element_type": preferred_element_type, "out_sharding": None}
    now = (out_axes != tuple(range(len(out_axes)))
           and core.current_interpreter() is core.eval_interpreter)
    swapped = now and _swapped_dimension_numbers(dims, get_aval(ct).ndim, get_aval(y).ndim,
                                                 out_axes)
    if swapped:
        x_bar = dot_general_p.bind(y, ct, dimension_numbers=swapped,
                                   precision=_swapped_precision(precision), **params)
    else:
        out = dot_general_p.bind(ct, y, dimension_numbers=dims, precision=precision, **params)
        x_bar = transpose(out, out_axes)
        y_shape = get_aval(y).shape
        if now and math.prod(y_shape[d] for d in y_kept) >= _COPY_MIN_CONTRACTION:
            x_bar = core.Array.from_numpy(np.ascontiguousarray(x_bar.to_concrete_value()),
                                          x_bar.aval)
    if get_aval(x_bar).dtype != x.aval.dtype:
        x_bar = convert_element_type(x_bar, x.aval.dtype, x.aval.weak_type)
    return x_bar


def _dot_general_transpose(ct, x, y, *, dimension_numbers, **params):
    if is_undefined(x) and is_undefined(y):
        raise NotImplementedError("transpose of 'dot_general': the product of two linear "
                                  "values is not linear")
    if is_undefined(x):
        return [_dot_general_transpose_lhs(ct, x, y, dimension_numbers=dimension_numbers,
                                           **params), None]
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return [None, _dot_general_transpose_lhs(ct, y, x, dimension_numbers=swapped,
                                             swap_ans=True, **params)]


dot_general_p.def_transpose(_dot_general_transpose)


def _dot_general_permuted_result(eqn, perm):
    """The product with its operands swapped, when that is its result permuted by `perm`."""
    lhs, rhs = eqn.invars
    dn = _swapped_dimension_numbers(eqn.params["dimension_numbers"], lhs.aval.ndim,
                                    rhs.aval.ndim, perm)
    if dn is None:
        return None
    params = dict(eqn.params, dimension_numbers=dn)
    if "precision" in params:
        params["precision"] = _swapped_precision(params["precision"])
    return [rhs, lhs], params


def _dot_general_permuted_operand(eqn, i, perm):
    """Dimension numbers naming operand `i`'s dimensions as they are before the permutation
    `perm`, if that keeps its free dimensions in order (and so the result's)."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    contract, batch = (lc, lb) if i == 0 else (rc, rb)
    free = [perm[d] for d in free_dims(len(perm), contract, batch)]
    if free != sorted(free):
        return None
    contract, batch = tuple(perm[d] for d in contract), tuple(perm[d] for d in batch)
    dn = ((contract, rc), (batch, rb)) if i == 0 else ((lc, contract), (lb, batch))
    return dict(eqn.params, dimension_numbers=dn)


def _sums_nothing(eqn) -> bool:
    """Whether `eqn` is a product with nothing to sum of two float arrays of its dtype
    (its contracting dimensions, if any, of size 1), read by some equation."""
    (lc, _), _ = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    pet = eqn.params.get("preferred_element_type")
    return not (type(lhs) is Literal or type(rhs) is Literal
                or type(out) is DropVar or math.prod(lhs.aval.shape[d] for d in lc) != 1
                or not lhs.aval.dtype == rhs.aval.dtype == out.aval.dtype
                or out.aval.dtype not in FLOATS
                or (pet is not None and np.dtype(pet) != out.aval.dtype))


def _dot_general_elementwise_form(eqn):
    """A product with nothing to sum as equations computing what jit computes for it,
    elementwise: its operands read broadcast (views: each one's contracting dimensions
    squeezed, its batch then free dimensions in the result's order, broadcast over the
    other's) and multiplied; with a contracting dimension (of size 1), plus zero, as
    np.matmul gives (so a product -0 is +0), else a multiplication as the NumPy tier's.
    The native tier fuses them with their neighbours: `w - lr * outer(x, d)`, a layer's
    SGD update at batch 1, is one pass over `w` with no product written out."""
    if not _sums_nothing(eqn):
        return None
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    out = eqn.outvars[0]
    eqns = []

    def view(prim, x, shape, params):
        v = Var(ShapedArray(shape, x.aval.dtype, x.aval.weak_type))
        eqns.append(JaxprEqn(prim, [x], [v], params, eqn.source_info, eqn.phase))
        return v

    n_lhs_free = eqn.invars[0].aval.ndim - len(lc) - len(lb)
    factors = []
    for side, (x, c, b) in enumerate(zip(eqn.invars, (lc, rc), (lb, rb))):
        kept = [d for d in range(x.aval.ndim) if d not in c]  # (in order)
        free = [d for d in kept if d not in b]
        shape = x.aval.shape
        if c:
            x = view(squeeze_p, x, tuple(shape[d] for d in kept), {"dimensions": tuple(c)})
        perm = tuple(kept.index(d) for d in (*b, *free))
        if perm != tuple(range(len(perm))):
            x = view(transpose_p, x, tuple(shape[d] for d in (*b, *free)), {"permutation": perm})
        at = len(b) + (n_lhs_free if side else 0)
        dims = (*range(len(b)), *range(at, at + len(free)))
        if dims != tuple(range(out.aval.ndim)):
            x = view(broadcast_in_dim_p, x, out.aval.shape,
                     {"shape": out.aval.shape, "broadcast_dimensions": dims, "sharding": None})
        factors.append(x)
    if not lc:
        return eqns + [JaxprEqn(mul_p, factors, [out], {}, eqn.source_info, eqn.phase)]
    product = Var(out.aval)
    zero = Literal(np.zeros((), out.aval.dtype)[()], ShapedArray((), out.aval.dtype))
    return eqns + [JaxprEqn(mul_p, factors, [product], {}, eqn.source_info, eqn.phase),
                   JaxprEqn(add_p, [product, zero], [out], {}, eqn.source_info, eqn.phase)]


dot_general_p.def_traits(contraction_param="dimension_numbers",
                         elementwise_form=_dot_general_elementwise_form,
                         permuted_result=_dot_general_permuted_result,
                         permuted_operand=_dot_general_permuted_operand)


# --------------------------------------------------------------------------------------
# lax wrappers


def _index_tuple(dims) -> tuple:
    if isinstance(dims, (int, np.integer)):
        return (int(dims),)
    return tuple(int(d) for d in dims)


@functools.lru_cache(maxsize=1024)
def _canonical_dimension_numbers(dimension_numbers) -> tuple:
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return (_index_tuple(lc), _index_tuple(rc)), (_index_tuple(lb), _index_tuple(rb))
    except (TypeError, ValueError):
        raise TypeError("dot_general: dimension_numbers must have the form ((lhs_contracting, "
                        "rhs_contracting), (lhs_batch, rhs_batch)) with sequences of ints, got "
                        f"{dimension_numbers!r}") from None


def _dimension_numbers_param(dimension_numbers) -> tuple:
    """Hashable dimension numbers are normalised once (dot_general is called very often)."""
    try:
        return _canonical_dimension_numbers(dimension_numbers)
    except TypeError:  # unhashable (lists), or malformed: then this raises the error
        return _canonical_dimension_numbers.__wrapped__(dimension_numbers)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *,
                out_sharding=None):
    """General contraction: contracts and batches the given dimensions of lhs and rhs."""
    preferred = (None if preferred_element_type is None
                 else dtypes.check_and_canonicalize_user_dtype(preferred_element_type, "dot"))
    return dot_general_p.bind(lhs, rhs,
                              dimension_numbers=_dimension_numbers_param(dimension_numbers),
                              precision=canonicalize_precision(precision),
                              preferred_element_type=preferred, out_sharding=out_sharding)


def _bump(dims, bdim) -> tuple:
    """Logical dimension numbers renumbered for an operand with its batch dimension at bdim."""
    return tuple(d + (d >= bdim) for d in dims)


def _batch_dimension_numbers(ndims, bdims, dimension_numbers):
    """Dimension numbers for batched operands (ndims counts their batch dimensions), and
    where the vmapped dimension lands in the output.

    Both operands batched: it becomes a new leading dot batch dimension. One batched: it is
    one more free dimension of that operand, placed among its free dimensions.
    """
    (lc, rc), (lb, rb) = dimension_numbers
    lbd, rbd = bdims
    if lbd is not None and rbd is not None:
        dn = ((_bump(lc, lbd), _bump(rc, rbd)), ((lbd,) + _bump(lb, lbd), (rbd,) + _bump(rb, rbd)))
        return dn, 0
    if lbd is not None:
        lfree = free_dims(ndims[0] - 1, lc, lb)
        out_dim = len(lb) + sum(d < lbd for d in lfree)
        return ((_bump(lc, lbd), rc), (_bump(lb, lbd), rb)), out_dim
    rfree = free_dims(ndims[1] - 1, rc, rb)
    out_dim = ndims[0] - len(lc) + sum(d < rbd for d in rfree)
    return ((lc, _bump(rc, rbd)), (lb, _bump(rb, rbd))), out_dim


def _dot_general_batch(size, vals, dims, *, dimension_numbers, **params):
    (lhs, rhs), ndims = vals, tuple(get_aval(v).ndim for v in vals)
    dn, out_dim = _batch_dimension_numbers(ndims, dims, dimension_numbers)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), out_dim


dot_general_p.def_batch(_dot_general_batch)


def _dot_general_sharding(eqn, specs, sizes):
    """Batch dimensions split as the operands agree, then each operand's free dimensions
    with their splits (the contracted ones are summed away)."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = (len(x.aval.shape) for x in eqn.invars)
    ls, rs = sharding.padded(specs[0], lhs), sharding.padded(specs[1], rhs)
    batch = [a if a == b or not b else b if not a else () for a, b in
             ((ls[i], rs[j]) for i, j in zip(lb, rb))]
    free_l = [ls[d] for d in range(lhs) if d not in lc and d not in lb]
    free_r = [rs[d] for d in range(rhs) if d not in rc and d not in rb]
    out = batch + free_l + free_r
    seen: set = set()
    for k, names in enumerate(out):  # (an axis splits one dimension at most)
        if seen & set(names):
            out[k] = ()
        seen |= set(names)
    return tuple(out)


dot_general_p.def_rule("sharding", _dot_general_sharding)


# --------------------------------------------------------------------------------------
# Code generation rule (jit)


def _dot_as_product(eqn) -> bool:
    """dot_generals written as `a @ b` (2-D or matrix-vector, either side transposed) or, without
    contraction, as a broadcast product; in their operands' dtype, with a non-0-d result."""
    if eqn.outvars[0].aval.shape == ():
        return False
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    pet = eqn.params.get("preferred_element_type")
    if lhs.aval.dtype != rhs.aval.dtype or (pet is not None and pet != lhs.aval.dtype):
        return False
    if not lc and not rc:
        return True  # a broadcast product
    if lb or rb:
        return False
    lc, rc = tuple(lc), tuple(rc)
    if lhs.aval.ndim == 2 and rhs.aval.ndim == 2:
        return len(lc) == 1 and len(rc) == 1
    return rc == (0,) and lc == (lhs.aval.ndim - 1,) and rhs.aval.ndim <= 2


def _matmul_operands(fb, eqn):
    """`a`, `b` of `a @ b` for a dot_general `_dot_as_product` accepts, with contraction."""
    (lc, rc), _ = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    a, b = fb.name(lhs), fb.name(rhs)
    if lhs.aval.ndim == 2 and rhs.aval.ndim == 2:
        return (a if tuple(lc) == (1,) else f"{a}.T", b if tuple(rc) == (0,) else f"{b}.T")
    return a, b


def _broadcast_operands(fb, eqn):
    """The operands of a dot_general without contraction arranged for a broadcast product:
    batch dimensions, then lhs free, then rhs free; and whether one had to be permuted."""
    _, (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    lf = [d for d in range(lhs.aval.ndim) if d not in lb]
    rf = [d for d in range(rhs.aval.ndim) if d not in rb]

    def arrange(x, batch, free, before, after):
        name = fb.typed(x)
        perm = tuple(batch) + tuple(free)
        if perm != tuple(range(x.aval.ndim)):
            name = f"{name}.transpose({perm})"
        shape = ([x.aval.shape[d] for d in batch] + [1] * before
                 + [x.aval.shape[d] for d in free] + [1] * after)
        if tuple(shape) != tuple(x.aval.shape[d] for d in perm):
            name = f"{name}.reshape({tuple(shape)})"
        return name

    permuted = (tuple(lb) + tuple(lf) != tuple(range(lhs.aval.ndim))
                or tuple(rb) + tuple(rf) != tuple(range(rhs.aval.ndim)))
    return arrange(lhs, lb, lf, 0, len(rf)), arrange(rhs, rb, rf, len(lf), 0), permuted


def _codegen_applies(eqn) -> bool:
    return _dot_as_product(eqn) or (_gemm(eqn) is not None
                                    and bool(eqn.params["dimension_numbers"][0][0]))


@codegen_rule(dot_general_p, when=_codegen_applies, fresh=True)
def _dot_general_codegen(fb, k, eqn, outs):
    (lc, rc), _ = eqn.params["dimension_numbers"]
    if not lc and not rc:
        buf = fb.out_buffer(k, eqn, eqn.outvars[0].aval, allow_inputs=False)
        a, b, permuted = _broadcast_operands(fb, eqn)
        # NumPy would lay the product out like a permuted operand; the impl's is row-major.
        order = ", order='C'" if permuted else ""
        fb.line(f"{outs[0]} = np.multiply({a}, {b}{f', out={buf}' if buf else order})")
        return
    g = _gemm(eqn)
    if g is None:  # (integers, half precision...: no native code to agree with)
        a, b = _matmul_operands(fb, eqn)
        buf = fb.out_buffer(k, eqn, eqn.outvars[0].aval, allow_inputs=False)
        fb.line(f"{outs[0]} = np.matmul({a}, {b}, out={buf})" if buf else
                f"{outs[0]} = {a} @ {b}")
        return
    lhs, rhs = eqn.invars
    x = _c_layout_text(fb, lhs)
    y = x if rhs is lhs else _c_layout_text(fb, rhs)
    (sa, ta), (sb, tb) = gemm_plan(g, lhs.aval.shape, rhs.aval.shape)
    a, b = _view_text(x, lhs.aval.shape, sa, ta), _view_text(y, rhs.aval.shape, sb, tb)
    out_shape = eqn.outvars[0].aval.shape
    if swapped(g):
        product = f"np.matmul({_view_text(y, rhs.aval.shape, sb, not tb)}, " \
                  f"{_view_text(x, lhs.aval.shape, sa, not ta)}).T.copy()"
    else:
        product = f"np.matmul({a}, {b})"
    if tuple(out_shape) != _gemm_out_shape(g):
        product += f".reshape({out_shape})"
    fb.line(f"{outs[0]} = {product}")


def _c_layout_text(fb, a) -> str:
    """`a` with the strides of a new row-major array (a copy if it has others: NumPy's
    matmul picks its BLAS routine by the strides, size-1 dimensions' too)."""
    name, c = fb.name(a), fb.temp()
    strides = tuple(s * a.aval.dtype.itemsize for s in contiguous(a.aval.shape))
    fb.line(f"{c} = {name} if {name}.strides == {strides} else np.array({name}, order='C')")
    return c


def _view_text(name, shape, target, transposed) -> str:
    text = name if tuple(shape) == tuple(target) else f"{name}.reshape({tuple(target)})"
    return text + (".swapaxes(-1, -2)" if transposed else "")


def dot(lhs, rhs, precision=None, preferred_element_type=None, *, dimension_numbers=None,
        out_sharding=None):
    """Vector/matrix products (contracts lhs's last dimension with rhs's first)."""
    if dimension_numbers is None:
        lshape, rshape = np.shape(lhs), np.shape(rhs)
        if not (1 <= len(lshape) <= 2 and 1 <= len(rshape) <= 2 and lshape[-1] == rshape[0]):
            raise ValueError("jax.lax.dot: dimension_numbers must be specified when not "
                             "performing simple un-batched matrix-matrix, matrix-vector, or "
                             f"vector-vector products; got lhs_shape={lshape} "
                             f"rhs_shape={rshape}")
        dimension_numbers = (((len(lshape) - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type,
                       out_sharding=out_sharding)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products batched over all leading dimensions (which must match)."""
    lnd, rnd = np.ndim(lhs), np.ndim(rhs)
    if min(lnd, rnd) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lnd}, {rnd}")
    if lnd != rnd:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lnd}, {rnd}")
    batch = tuple(range(lnd - 2))
    return dot_general(lhs, rhs, (((lnd - 1,), (rnd - 2,)), (batch, batch)), precision)


# `dimension_numbers` of dot_general: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)).
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]

__all__ = ["Precision", "DotDimensionNumbers", "dot_general", "dot", "batch_matmul"]


# --------------------------------------------------------------------------------------
# Products of floats in jit: both tiers call np.matmul's loop on the same views of the
# row-major operands (so NumPy calls the same BLAS routine), the native tier on C pointers.


class Gemm(NamedTuple):
    batch: int
    batched: bool  # whether the product has batch dimensions
    M: int
    N: int
    K: int
    trans_a: bool  # the lhs is stored K x M
    trans_b: bool  # the rhs is stored N x K


def _gemm(eqn):
    """The gemm computing `eqn` row-major, or None (see _gemm_of)."""
    lhs, rhs = (a.aval for a in eqn.invars)
    pet = eqn.params.get("preferred_element_type")
    if lhs.dtype != rhs.dtype or (pet is not None and np.dtype(pet) != lhs.dtype):
        return None
    return _gemm_of(lhs.shape, rhs.shape, lhs.dtype, eqn.params["dimension_numbers"])


@functools.lru_cache(maxsize=4096)
def _gemm_of(lhs_shape, rhs_shape, dtype, dimension_numbers):
    """The gemm computing a product of operands of `dtype` row-major, or None: leading batch
    dimensions on both sides; after them each side's contracting dimensions are one
    consecutive block (paired in order), before or after its free dimensions (a block too:
    their product is M or N; no contracting dimension is K = 1); a float dtype."""
    (lc, rc), (lb, rb) = dimension_numbers
    if dtype not in FLOATS:
        return None
    lhs, rhs = ShapedArray(lhs_shape, dtype), ShapedArray(rhs_shape, dtype)
    nb = len(lb)
    if tuple(lb) != tuple(range(nb)) or tuple(rb) != tuple(range(nb)):
        return None
    sides = []
    for aval, c in ((lhs, lc), (rhs, rc)):
        c, rest = tuple(c), aval.ndim - nb
        if c and c != tuple(range(c[0], c[0] + len(c))):
            return None
        if c and c[0] not in (nb, aval.ndim - len(c)):
            return None
        contract_first = bool(c) and c[0] == nb and len(c) < rest
        free = [d for d in range(nb, aval.ndim) if d not in c]
        sides.append((contract_first, math.prod(aval.shape[d] for d in free)))
    K = math.prod(lhs.shape[d] for d in lc)
    (trans_a, M), (rhs_contract_first, N) = sides
    trans_b = not rhs_contract_first and len(rc) > 0 and N > 1
    if not rc or N == 1:
        trans_b = False  # a K x 1 or 1 x N operand reads the same either way
    trans_a = trans_a and M > 1
    return Gemm(math.prod(lhs.shape[:nb]), nb > 0, M, N, K, trans_a, trans_b)


def _gemm_out_shape(g) -> tuple:
    return ((g.batch,) if g.batched else ()) + (g.M, g.N)


def gemm_plan(g, lhs_shape, rhs_shape) -> tuple:
    """How jit computes the product `g` (both tiers: the native tier calls NumPy's matmul
    loop with the strides these views have): its row-major operands are read as matrices
    of these shapes, `.swapaxes(-1, -2)` where marked, and multiplied by np.matmul; a
    leading dimension holds the batch if the product has one."""
    lead = (g.batch,) if g.batched else ()
    return ((lead + ((g.K, g.M) if g.trans_a else (g.M, g.K)), g.trans_a),
            (lead + ((g.N, g.K) if g.trans_b else (g.K, g.N)), g.trans_b))


# A product `a @ b.T` with at most this many rows (and fewer than its columns) is computed
# as `b @ a.T`, then transposed: OpenBLAS packs the large `b` much faster that way (16 x 512
# times 512 x 512 transposed: 130 us against 260 us; equal from about 256 rows).
SWAP_MAX_ROWS = 64


def gemm_product(lhs, rhs, g, out_shape):
    """The product `g` of arrays `lhs` and `rhs` as jit computes it (gemm_plan; the text
    _dot_general_codegen writes computes the same), so evaluating a product gives jit's
    bits."""
    x = _in_row_major(lhs)
    y = x if rhs is lhs else _in_row_major(rhs)
    (sa, ta), (sb, tb) = gemm_plan(g, lhs.shape, rhs.shape)
    if swapped(g):
        out = np.matmul(_as_view(y, sb, not tb), _as_view(x, sa, not ta)).T.copy()
    else:
        out = np.matmul(_as_view(x, sa, ta), _as_view(y, sb, tb))
    return out if out.shape == out_shape else out.reshape(out_shape)


def _in_row_major(a):
    """`a` with the strides of a new row-major array (see _c_layout_text)."""
    if a.strides == _row_major_strides(a.shape, a.itemsize):
        return a
    return np.array(a, order="C")


@functools.lru_cache(maxsize=1024)
def _row_major_strides(shape, itemsize) -> tuple:
    return tuple(s * itemsize for s in contiguous(shape))


def _as_view(a, target, transposed):
    v = a if a.shape == target else a.reshape(target)
    return v.swapaxes(-1, -2) if transposed else v


def swapped(g) -> bool:
    return (g.trans_b and not g.trans_a and not g.batched and 1 < g.M <= SWAP_MAX_ROWS
            and g.M < g.N)


def _view(shape, dtype, target, transposed):
    """The strides of the view gemm_plan makes of a row-major operand (made of a stand-in
    with its strides, never read)."""
    x = np.lib.stride_tricks.as_strided(np.zeros(1, dtype), shape,
                                        tuple(s * dtype.itemsize for s in contiguous(shape)))
    v = x.reshape(target) if tuple(shape) != tuple(target) else x
    v = v.swapaxes(-1, -2) if transposed else v
    return (0,) * (3 - v.ndim) + v.strides


@native_rule(dot_general_p, kind="gemm", when=lambda eqn: _gemm(eqn) is not None)
def _dot_general_native(eqn):
    g = _gemm(eqn)
    lhs, rhs = (a.aval for a in eqn.invars)
    (sa, ta), (sb, tb) = gemm_plan(g, lhs.shape, rhs.shape)
    if swapped(g):
        return Matmul(g.batch, g.N, g.K, g.M, _view(rhs.shape, rhs.dtype, sb, not tb),
                      _view(lhs.shape, lhs.dtype, sa, not ta), True)
    nb = len(eqn.params["dimension_numbers"][1][0])
    return Matmul(g.batch, g.M, g.K, g.N, _view(lhs.shape, lhs.dtype, sa, ta),
                  _view(rhs.shape, rhs.dtype, sb, tb), False, nb, (sa[-2:], sb[-2:]), (ta, tb))
