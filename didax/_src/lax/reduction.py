"""Reductions: reduce_*, argmin/argmax, cumulative reductions, sort and top_k.

Impls are NumPy; JVP rules follow JAX's so that derivatives agree with it, ties included:
reduce_prod differentiates a balanced product tree (right even with zeros), reduce_max/min
split the tangent evenly among tied extrema, and cumprod/cummax/cummin/cumlogsumexp
differentiate a parallel prefix scan written with lax slicing ops (so the rules can be
differentiated again). Sort permutes tangents by sorting them as extra operands.
Each primitive's rules follow its declaration (reduce_sum's: it is declared in `base_prims`,
where the interpreters bind it).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import reduce_sum, reduce_sum_p, reducer, row_major, where_text
from didax._src.compiler.codegen import codegen_rule
from didax._src.compiler.native.rules import (
    C_TYPES,
    FLOATS,
    INTS,
    native_rule,
    wrapped,
    wrapping,
)
from didax._src.core import ShapedArray, Zero, get_aval, is_zero
from didax._src.interpreters import sharding
from didax._src.interpreters.batching import defreducer, moveaxis
from didax._src.interpreters.jvp import defjvp2, defjvp_zero, deflinear, jvp_flat
from didax._src.interpreters.transpose import is_undefined
from didax._src.ir import DropVar, Literal
from didax._src.lax.elementwise import (
    add,
    convert_element_type,
    div,
    eq,
    exp,
    log1p,
    mul,
    ne,
    neg,
    select_n,
    sub,
    zeros_like,
)
from didax._src.lax.elementwise import max as lax_max
from didax._src.lax.elementwise import min as lax_min
from didax._src.lax.shape import (
    broadcast_in_dim,
    broadcasted_iota,
    concatenate,
    full,
    pad,
    reshape,
    rev,
    slice_in_dim,
    squeeze,
)
from didax._src.typecheck import (
    any_,
    bool_,
    canonical_axes,
    check_dtype,
    float_,
    int_,
    int_or_bool,
    num,
)

# --------------------------------------------------------------------------------------
# reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or, reduce_xor


def max_identity(dtype):
    """The identity of max over `dtype` (its lowest value; -inf for floats)."""
    if dtype == np.bool_:
        return False
    if dtypes.issubdtype(dtype, np.integer):
        return dtypes.iinfo(dtype).min
    return -np.inf


def min_identity(dtype):
    """The identity of min over `dtype` (its highest value; inf for floats)."""
    if dtype == np.bool_:
        return True
    if dtypes.issubdtype(dtype, np.integer):
        return dtypes.iinfo(dtype).max
    return np.inf


def _bitwise_reduce(ufunc):
    return lambda x, *, axes: ufunc.reduce(x, axis=axes, dtype=x.dtype)


deflinear(reduce_sum_p)


def _reduce_sum_transpose(ct, x, *, axes, out_sharding=None):
    shape = x.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [broadcast_in_dim(ct, shape, kept)]


reduce_sum_p.def_transpose(_reduce_sum_transpose)


def _reduce_sum_applies(eqn):
    return (dtypes.kind(eqn.invars[0].aval.dtype) in "fc"
            and eqn.outvars[0].aval.shape != () and bool(eqn.params["axes"]))


@codegen_rule(reduce_sum_p, when=_reduce_sum_applies, fresh=True)
def _reduce_sum_codegen(fb, k, eqn, outs):
    """`np.add.reduce` of a row-major operand (see base_prims.row_major)."""
    x = f"{fb.module.global_name(row_major, 'row_major')}({fb.name(eqn.invars[0])})"
    fb.line(f"{outs[0]} = np.add.reduce({x}, axis={_axes_text(eqn.params['axes'])})")

reduce_prod_p = reducer("reduce_prod", num, lambda x, *, axes: np.multiply.reduce(
    x, axis=axes, dtype=x.dtype))


def _reduce_prod_jvp(primals, tangents, *, axes):
    """JAX's rule: the JVP of a balanced tree of pairwise products of the reduced elements.

    Unlike `prod / x`, it needs no division, so zeros in the operand are handled exactly.
    """
    (x,), (t,) = primals, tangents
    aval = get_aval(x)
    non_axes = tuple(i for i in range(aval.ndim) if i not in axes)
    rest = tuple(aval.shape[i] for i in non_axes)
    n = math.prod(aval.shape[a] for a in axes)
    if n == 0:
        return full(rest, 1, aval.dtype), Zero(ShapedArray(rest, aval.dtype).to_tangent_aval())
    # Move the reduced axes to the front, flattened into one.
    x = reshape(x, (n,) + rest, tuple(axes) + non_axes)
    t = reshape(t, (n,) + rest, tuple(axes) + non_axes)
    while n > 1:
        n1 = (n + 1) // 2
        x1, x2 = slice_in_dim(x, 0, n1), slice_in_dim(x, n1, None)
        t1, t2 = slice_in_dim(t, 0, n1), slice_in_dim(t, n1, None)
        if 2 * n1 != n:  # odd: pad the second half with the identity (and a zero tangent)
            config = [(0, 1, 0)] + [(0, 0, 0)] * len(rest)
            x2, t2 = pad(x2, 1, config), pad(t2, 0, config)
        x, t = mul(x1, x2), add(mul(t1, x2), mul(x1, t2))
        n = n1
    return squeeze(x, (0,)), squeeze(t, (0,))


reduce_prod_p.def_jvp(_reduce_prod_jvp)


def reduce_prod(operand, axes):
    return reduce_prod_p.bind(operand, axes=tuple(int(a) for a in axes))


def _zero_signs(x, res, axes, negative):
    """`res` with JAX's sign on zero results: -0 < +0, so a maximum (`negative` False) of
    zeros is +0 if any of them is, a minimum -0. NumPy's sign depends on the order it
    compares equal zeros in, which depends on the operand's layout."""
    if res.dtype.kind != "f" and dtypes.kind(res.dtype) != "f":
        return res
    if np.count_nonzero(res) == res.size:  # (NaN is not zero)
        return res
    signed = np.any((x == 0) & (np.signbit(x) if negative else ~np.signbit(x)), axis=axes)
    return np.where((res == 0) & signed, np.array(-0.0 if negative else 0.0, res.dtype), res)


reduce_max_p = reducer("reduce_max", any_, lambda x, *, axes: _zero_signs(
    x, np.max(x, axis=axes, initial=max_identity(x.dtype)), axes, False))


def _reduce_chooser_jvp(g, ans, x, *, axes):
    """The mean of the tangents at the locations attaining the extremum (JAX's tie rule)."""
    shape = tuple(1 if i in axes else d for i, d in enumerate(get_aval(x).shape))
    location = convert_element_type(eq(x, reshape(ans, shape)), get_aval(g).dtype)
    counts = reduce_sum(location, axes)
    return div(reduce_sum(mul(g, location), axes), counts)


defjvp2(reduce_max_p, _reduce_chooser_jvp)


def reduce_max(operand, axes):
    """Maximum over `axes`; NaN propagates, and an empty reduction gives -inf (or the minimum
    integer, or False)."""
    return reduce_max_p.bind(operand, axes=tuple(int(a) for a in axes))



reduce_min_p = reducer("reduce_min", any_, lambda x, *, axes: _zero_signs(
    x, np.min(x, axis=axes, initial=min_identity(x.dtype)), axes, True))
defjvp2(reduce_min_p, _reduce_chooser_jvp)


def reduce_min(operand, axes):
    return reduce_min_p.bind(operand, axes=tuple(int(a) for a in axes))



reduce_and_p = reducer("reduce_and", int_or_bool, _bitwise_reduce(np.bitwise_and), False)


def reduce_and(operand, axes):
    """Bitwise (or logical, for bools) AND over `axes`."""
    return reduce_and_p.bind(operand, axes=tuple(int(a) for a in axes))


reduce_or_p = reducer("reduce_or", int_or_bool, _bitwise_reduce(np.bitwise_or), False)


def reduce_or(operand, axes):
    return reduce_or_p.bind(operand, axes=tuple(int(a) for a in axes))


reduce_xor_p = reducer("reduce_xor", int_or_bool, _bitwise_reduce(np.bitwise_xor), False)


def reduce_xor(operand, axes):
    return reduce_xor_p.bind(operand, axes=tuple(int(a) for a in axes))


for _p in (reduce_and_p, reduce_or_p, reduce_xor_p):
    defjvp_zero(_p)
for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p):  # over no axes: x
    _p.def_traits(returns_operand=lambda eqn: 0 if not eqn.params["axes"] else None)
for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p,
           reduce_xor_p):
    _p.def_rule("sharding", sharding.reduction())


def _argminmax(name: str, np_fn) -> core.Primitive:
    p = core.primitive(name)

    def impl(x, *, axes, index_dtype):
        return np_fn(x, axis=axes[0]).astype(index_dtype)  # the first NaN wins, as in JAX

    def abstract_eval(x, *, axes, index_dtype):
        check_dtype(name, x, bool_ + int_ + float_, where_text(x))
        if len(axes) != 1:
            raise ValueError(f"{name}: axes must hold exactly one axis, got {axes}")
        axis, = axes
        if not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: invalid axis {axis} for operand shape {x.shape}")
        if x.shape[axis] < 1:
            raise ValueError(f"{name} requires a non-empty reduced dimension; operand shape "
                             f"{x.shape}, axis {axis}")
        if not dtypes.issubdtype(index_dtype, np.integer):
            raise TypeError(f"{name}: index_dtype must be an integer type, but got "
                            f"{np.dtype(index_dtype).name}")
        shape = x.shape[:axis] + x.shape[axis + 1:]
        return ShapedArray(shape, index_dtype, False)

    p.def_impl(impl)
    p.def_abstract_eval(abstract_eval)
    defjvp_zero(p)
    p.def_rule("sharding", sharding.reduction())
    return p


argmax_p = _argminmax("argmax", np.argmax)


def argmax(operand, axis, index_dtype):
    """Index of the first maximum along `axis` (the first NaN, if there is one)."""
    index_dtype = dtypes.check_and_canonicalize_user_dtype(index_dtype, "argmax")
    return argmax_p.bind(operand, axes=(int(axis),), index_dtype=index_dtype)


argmin_p = _argminmax("argmin", np.argmin)


def argmin(operand, axis, index_dtype):
    index_dtype = dtypes.check_and_canonicalize_user_dtype(index_dtype, "argmin")
    return argmin_p.bind(operand, axes=(int(axis),), index_dtype=index_dtype)


# --------------------------------------------------------------------------------------
# Cumulative reductions: cumsum, cumprod, cummax, cummin, cumlogsumexp


def _cumulative(name: str, accepted, accumulate) -> core.Primitive:
    """A primitive `name[axis reverse]` computing `accumulate(x, axis)`, reversed if asked."""
    p = core.primitive(name)

    def impl(x, *, axis, reverse):
        if reverse:
            return np.flip(accumulate(np.flip(x, axis), axis), axis)
        return accumulate(x, axis)

    def abstract_eval(x, *, axis, reverse):
        check_dtype(name, x, accepted, where_text(x))
        if axis < 0:
            raise ValueError(f"{name}: axis {axis} is negative; lax axes must be non-negative")
        if axis >= x.ndim:
            raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of shape "
                             f"{x.shape}")
        return x

    p.def_impl(impl)
    p.def_abstract_eval(abstract_eval)
    p.def_rule("sharding", sharding.same_as_operand)
    return p


def _quiet_logaddexp_accumulate(x, axis):
    with np.errstate(all="ignore"):
        return np.logaddexp.accumulate(x, axis)


cumsum_p = _cumulative("cumsum", num, lambda x, axis: np.cumsum(x, axis, dtype=x.dtype))
deflinear(cumsum_p)


def cumsum(operand, axis=0, reverse=False):
    """Inclusive cumulative sum along `axis` (non-negative); `reverse` sums from the end."""
    return cumsum_p.bind(operand, axis=int(axis), reverse=bool(reverse))


cumsum_p.def_transpose(lambda ct, x, *, axis, reverse: [
    cumsum(ct, axis=axis, reverse=not reverse)])

cumprod_p = _cumulative("cumprod", num, lambda x, axis: np.cumprod(x, axis, dtype=x.dtype))


def _scan_jvp(combine):
    """JVP of a cumulative reduction: the JVP of the prefix scan of the binary `combine`."""

    def rule(primals, tangents, *, axis, reverse):
        def scan(x):
            return associative_scan_flat(lambda a, b: [combine(a[0], b[0])], [x], axis, reverse)

        (out,), (t_out,) = jvp_flat(scan, primals, tangents)
        return out, t_out

    return rule


cumprod_p.def_jvp(_scan_jvp(mul))


def cumprod(operand, axis=0, reverse=False):
    return cumprod_p.bind(operand, axis=int(axis), reverse=bool(reverse))


cummax_p = _cumulative("cummax", num, np.maximum.accumulate)
cummax_p.def_jvp(_scan_jvp(lax_max))


def cummax(operand, axis=0, reverse=False):
    return cummax_p.bind(operand, axis=int(axis), reverse=bool(reverse))


cummin_p = _cumulative("cummin", num, np.minimum.accumulate)
cummin_p.def_jvp(_scan_jvp(lax_min))


def cummin(operand, axis=0, reverse=False):
    return cummin_p.bind(operand, axis=int(axis), reverse=bool(reverse))


cumlogsumexp_p = _cumulative("cumlogsumexp", float_, _quiet_logaddexp_accumulate)


def _logaddexp(x, y):
    """log(exp(x) + exp(y)) without overflow (JAX's formula, NaN/equal-infinity aware)."""
    delta = sub(x, y)
    # -|delta| as min(delta, -delta): at a tie its derivative splits to 0, as max's does to
    # 1/2 each, so the sum differentiates to the true 1/2 (abs's slope at 0 is 1, as JAX's).
    stable = add(lax_max(x, y), log1p(exp(lax_min(delta, neg(delta)))))
    return select_n(ne(delta, delta), stable, add(x, y))


def _replace_inf(x):
    return select_n(eq(x, np.asarray(np.inf, get_aval(x).dtype)), x, zeros_like(x))


def _logaddexp_with_tangent(a, b):
    """Combines (value, tangent) pairs with JAX's custom logaddexp derivative: each tangent is
    weighted by its softmax share, a formula that stays smooth where x == y."""
    (x, tx), (y, ty) = a, b
    out = _logaddexp(x, y)
    r_out = _replace_inf(out)
    t = add(mul(tx, exp(sub(_replace_inf(x), r_out))), mul(ty, exp(sub(_replace_inf(y), r_out))))
    return [out, t]


def _cumlogsumexp_jvp(primals, tangents, *, axis, reverse):
    out, t_out = associative_scan_flat(_logaddexp_with_tangent, [primals[0], tangents[0]], axis,
                                   reverse)
    return out, t_out


cumlogsumexp_p.def_jvp(_cumlogsumexp_jvp)


def cumlogsumexp(operand, axis=0, reverse=False):
    return cumlogsumexp_p.bind(operand, axis=int(axis), reverse=bool(reverse))


def associative_scan_flat(fn, elems, axis: int, reverse: bool):
    """Inclusive prefix combination of `elems` (a list of arrays) along `axis` by `fn`.

    JAX's parallel scan: combine adjacent pairs, scan the half-size result recursively (the
    odd outputs), derive the even outputs from them, and interleave. Written with lax
    slicing ops, it can be differentiated to any order; JAX's cumulative-reduction JVPs are
    JVPs of this scan, so using the same tree gives the same tangents (ties included).
    """
    if reverse:
        elems = [rev(e, (axis,)) for e in elems]

    def scan(elems):
        n = get_aval(elems[0]).shape[axis]
        if n < 2:
            return elems
        odd = scan(fn([slice_in_dim(e, 0, -1, 2, axis) for e in elems],
                      [slice_in_dim(e, 1, None, 2, axis) for e in elems]))
        heads = odd if n % 2 else [slice_in_dim(e, 0, -1, 1, axis) for e in odd]
        even = fn(heads, [slice_in_dim(e, 2, None, 2, axis) for e in elems])
        even = [concatenate([slice_in_dim(e, 0, 1, 1, axis), r], axis)
                for e, r in zip(elems, even)]
        return [_interleave(a, b, axis) for a, b in zip(even, odd)]

    out = scan(list(elems))
    if reverse:
        out = [rev(e, (axis,)) for e in out]
    return out


def _interleave(a, b, axis: int):
    """[a0, b0, a1, b1, ...] along `axis`; `a` has as many elements as `b`, or one more."""
    na, nb = get_aval(a).shape[axis], get_aval(b).shape[axis]
    ndim = get_aval(a).ndim
    a_pad = [(0, 0, 0)] * ndim
    b_pad = [(0, 0, 0)] * ndim
    a_pad[axis] = (0, 1 if na == nb else 0, 1)
    b_pad[axis] = (1, 0 if na == nb else 1, 1)
    return add(pad(a, 0, a_pad), pad(b, 0, b_pad))


sort_p = core.primitive("sort", multiple_results=True)


def _sort_impl(*operands, dimension, is_stable, num_keys):
    """Lexicographic on the keys; NumPy's order already puts NaNs last and ties -0 with 0.

    The sort is always stable (a valid choice for is_stable=False too).
    """
    keys = []
    for k in operands[:num_keys]:
        keys.extend([k.real, k.imag] if np.iscomplexobj(k) else [k])
    perm = np.lexsort(keys[::-1], axis=dimension)  # lexsort's primary key is the last one
    return [np.take_along_axis(op, perm, axis=dimension) for op in operands]


def _sort_aval(*avals, dimension, is_stable, num_keys):
    if not avals:
        raise TypeError("sort requires at least one operand")
    shapes = [a.shape for a in avals]
    if any(s != shapes[0] for s in shapes):
        raise TypeError(f"sort: arguments must have equal shapes, got: "
                        f"{' '.join(a.str_short() for a in avals)}")
    if not 1 <= num_keys <= len(avals):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands ({len(avals)})")
    if not 0 <= dimension < len(shapes[0]):
        raise ValueError(f"sort: dimension {dimension} is out of bounds for operands of shape "
                         f"{shapes[0]}")
    for a in avals:
        check_dtype("sort", a, any_, where_text(a))
    return list(avals)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    """The outputs' tangents are the inputs' tangents, permuted like the operands: sorting
    them as extra (non-key) operands by the same keys applies exactly that permutation,
    linearly (the sort is deterministic). The primal sort is a separate equation so that
    under linearize its outputs stay known while the tangent sort is staged."""
    nonzero = [i for i, t in enumerate(tangents) if not is_zero(t)]
    outs = sort_p.bind(*primals, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    sorted_tangents = sort_p.bind(*primals[:num_keys], *[tangents[i] for i in nonzero],
                                  dimension=dimension, is_stable=is_stable,
                                  num_keys=num_keys)[num_keys:]
    t_out = [Zero(get_aval(o).to_tangent_aval()) for o in outs]
    for i, t in zip(nonzero, sorted_tangents):
        t_out[i] = t
    return outs, t_out


sort_p.def_impl(_sort_impl)
sort_p.def_abstract_eval(_sort_aval)
sort_p.def_jvp(_sort_jvp)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sorts along `dimension`; several operands are sorted together, lexicographically by
    the first `num_keys` of them, and returned as a tuple."""
    if isinstance(operand, (tuple, list)):
        if not operand:
            raise TypeError("sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"sort: num_keys={num_keys} must be between 1 and "
                             f"len(operand)={len(operand)}")
        dim = canonical_axes("sort", (dimension,), get_aval(operand[0]).ndim)[0]
        return tuple(sort_p.bind(*operand, dimension=dim, is_stable=bool(is_stable),
                                 num_keys=int(num_keys)))
    if num_keys != 1:
        raise ValueError(f"sort: num_keys={num_keys} must equal 1 for a single operand")
    dim = canonical_axes("sort", (dimension,), get_aval(operand).ndim)[0]
    return sort_p.bind(operand, dimension=dim, is_stable=bool(is_stable), num_keys=1)[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts `keys` along `dimension` and applies the same permutation to `values`."""
    dim = canonical_axes("sort_key_val", (dimension,), get_aval(keys).ndim)[0]
    k, v = sort_p.bind(keys, values, dimension=dim, is_stable=bool(is_stable), num_keys=1)
    return k, v


def _sort_transpose(cts, *operands, dimension, is_stable, num_keys):
    """Sort is linear in its non-key operands: it permutes them. The transpose sends each
    cotangent back to where its element came from, ct_in[perm[i]] = ct_out[i], which is
    sorting the cotangents by `perm` (the keys' sorting permutation): no gather needed."""
    keys = operands[:num_keys]
    if any(is_undefined(k) for k in keys):
        raise NotImplementedError("transpose of 'sort': the operation is not linear in its "
                                  f"keys (the first num_keys={num_keys} operands)")
    linear = [i for i in range(num_keys, len(operands))
              if is_undefined(operands[i]) and not is_zero(cts[i])]
    result = [Zero(x.aval) if is_undefined(x) else None for x in operands]
    if not linear:
        return result
    iota = broadcasted_iota(np.int32, get_aval(keys[0]).shape, dimension)
    perm = sort_p.bind(*keys, iota, dimension=dimension, is_stable=is_stable,
                       num_keys=num_keys)[-1]
    back = sort_p.bind(perm, *[cts[i] for i in linear], dimension=dimension,
                       is_stable=is_stable, num_keys=1)[1:]
    for i, ct in zip(linear, back):
        result[i] = ct
    return result


sort_p.def_transpose(_sort_transpose)


def _sort_sharding(eqn, specs, sizes):
    """Every result split as the first operand is, but along the sorted dimension."""
    ndim = len(eqn.invars[0].aval.shape)
    spec = sharding.padded(specs[0], ndim)
    out = tuple(() if d == eqn.params["dimension"] else e for d, e in enumerate(spec))
    return [out] * len(eqn.outvars)


sort_p.def_rule("sharding", _sort_sharding)


def _sort_batch(size, vals, dims, *, dimension, is_stable, num_keys):
    """All operands get the batch dimension of the first batched one (unbatched ones are
    broadcast to it: sort needs equal shapes), and `dimension` shifts past it."""
    bdim = next(d for d in dims if d is not None)
    shape = next(get_aval(v).shape for v, d in zip(vals, dims) if d is not None)
    kept = tuple(i for i in range(len(shape)) if i != bdim)
    args = [broadcast_in_dim(v, shape, kept) if d is None else moveaxis(v, d, bdim)
            for v, d in zip(vals, dims)]
    outs = sort_p.bind(*args, dimension=dimension + (bdim <= dimension), is_stable=is_stable,
                       num_keys=num_keys)
    return outs, [bdim] * len(outs)


sort_p.def_batch(_sort_batch)


# The native rule: a stable LSD radix sort (a byte per pass) of each line's keys, mapped to
# unsigned integers in the impl's order, with their positions; every operand is then
# gathered by the positions. Lines of at most _INSERTION_MAX elements: insertion sort.
_INSERTION_MAX = 16


def _sort_native_when(eqn) -> bool:
    key = eqn.invars[0].aval.dtype
    return (eqn.params["num_keys"] == 1 and not any(type(a) is Literal for a in eqn.invars)
            and (key in INTS or key in FLOATS or key == np.bool_)
            and all(v.aval.dtype in C_TYPES for v in (*eqn.invars, *eqn.outvars)))


def _radix_key(dtype, x: str, bits: int) -> str:
    """The C expression of an unsigned integer of `bits` whose order is the impl's (NumPy's)
    order of the element `x`: signed integers with the sign bit flipped; floats by their
    bits, negative ones inverted, -0 as +0 (they tie) and every NaN last (they tie too)."""
    u = f"npy_uint{bits}"
    top = f"(({u})1 << {bits - 1})"
    if dtypes.kind(dtype) in "bu":
        return f"(({u}){x})"
    if dtypes.kind(dtype) == "i":
        return f"(({u}){x} ^ {top})"
    ftype = "float" if bits == 32 else "double"
    b = f"((union {{ {ftype} f; {u} u; }}){{.f = {x}}}).u"
    return (f"({x} != {x} ? ({u})~({u})0 : {x} == 0 ? {top} : "
            f"{b} & {top} ? ({u})~{b} : {b} | {top})")


@native_rule(sort_p, kind="block", when=_sort_native_when, counts=lambda eqn: (1, 0))
def _sort_native(em, eqn):
    """Each line along `dimension` sorted stably (as the impl's lexsort) by its key."""
    shape = eqn.invars[0].aval.shape
    dim = eqn.params["dimension"]
    n, outer, inner = shape[dim], math.prod(shape[:dim]), math.prod(shape[dim + 1:])
    for a in dict.fromkeys(eqn.invars):
        em.operand(a)
        em.as_array(a)
    outs = []  # (operand, slot of its sorted result), results nobody reads left out
    for a, v in zip(eqn.invars, eqn.outvars):
        if type(v) is not DropVar:
            s = em.slot(v)
            em.new_array(s, v.aval, var=v)
            outs.append((a, s))
    if not n * outer * inner:
        return
    key_dtype = eqn.invars[0].aval.dtype
    bits = max(8, 8 * key_dtype.itemsize)
    key = _radix_key(key_dtype, f"p{em.slots[eqn.invars[0]]}[base + i * {inner}]", bits)
    # Elements (key, position): one 64-bit word, the key in the high half, for keys of up to
    # 32 bits (their order is the words' order: a stable sort of the keys); for 64-bit keys,
    # two arrays.
    packed = bits <= 32 and n <= 0xFFFFFFFF
    count = "npy_uint32" if n <= 0xFFFFFFFF else "npy_intp"
    if packed:
        elem, shift, position = "npy_uint64", 32, "(npy_intp)(npy_uint32)e[i]"
        em.line(f"npy_uint64 *const buf = malloc(2 * {n} * sizeof(npy_uint64));")
        em.line("if (buf == NULL) { PyErr_NoMemory(); goto done; }")
    else:
        elem, shift, position = "npy_uint64", 0, "ix[i]"
        em.line(f"npy_uint64 *const buf = malloc(2 * {n} * sizeof(npy_uint64));")
        em.line(f"npy_intp *const ibuf = malloc(2 * {n} * sizeof(npy_intp));")
        em.line("if (buf == NULL || ibuf == NULL) {")
        em.line("    free(buf); free(ibuf); PyErr_NoMemory(); goto done;")
        em.line("}")
    em.line(f"for (npy_intp line = 0; line < {outer * inner}; line++) {{")
    em.line(f"    const npy_intp base = (line / {inner}) * {n * inner} + line % {inner};")
    em.line(f"    {elem} *e = buf, *f = buf + {n};")
    if not packed:
        em.line(f"    npy_intp *ix = ibuf, *iy = ibuf + {n};")
    passes = bits // 8
    radix = n > _INSERTION_MAX
    if radix:
        em.line(f"    {count} counts[{passes}][256];")
        em.line("    memset(counts, 0, sizeof(counts));")
    em.line(f"    for (npy_intp i = 0; i < {n}; i++) {{")
    em.line(f"        const npy_uint{bits} k = {key};")
    if packed:
        em.line("        e[i] = ((npy_uint64)k << 32) | (npy_uint64)i;")
    else:
        em.line("        e[i] = k; ix[i] = i;")
    if radix:
        for b in range(passes):
            em.line(f"        counts[{b}][(k >> {8 * b}) & 255]++;")
    em.line("    }")
    if not radix:  # (packed: the words' order; else the keys', ties kept in place)
        em.line(f"    for (npy_intp i = 1; i < {n}; i++) {{")
        em.line("        const npy_uint64 k = e[i]; npy_intp j = i;")
        if packed:
            em.line("        for (; j > 0 && e[j - 1] > k; j--) e[j] = e[j - 1];")
            em.line("        e[j] = k;")
        else:
            em.line("        const npy_intp x = ix[i];")
            em.line("        for (; j > 0 && e[j - 1] > k; j--) { e[j] = e[j - 1]; "
                    "ix[j] = ix[j - 1]; }")
            em.line("        e[j] = k; ix[j] = x;")
        em.line("    }")
    else:
        em.line(f"    for (int b = 0; b < {passes}; b++) {{")
        em.line(f"        {count} *c = counts[b];")
        em.line(f"        const int s = {shift} + 8 * b;")
        em.line(f"        if (c[(e[0] >> s) & 255] == {n}) continue;  /* one digit */")
        em.line(f"        {count} total = 0;")
        em.line(f"        for (int d = 0; d < 256; d++) {{ {count} t = c[d]; c[d] = total; "
                "total += t; }")
        em.line(f"        for (npy_intp i = 0; i < {n}; i++) {{")
        if packed:
            em.line("            const npy_uint64 w = e[i]; f[c[(w >> s) & 255]++] = w;")
        else:
            em.line(f"            const {count} at = c[(e[i] >> s) & 255]++;")
            em.line("            f[at] = e[i]; iy[at] = ix[i];")
        em.line("        }")
        em.line(f"        {{ {elem} *t = e; e = f; f = t; }}")
        if not packed:
            em.line("        { npy_intp *t = ix; ix = iy; iy = t; }")
        em.line("    }")
    em.line(f"    for (npy_intp i = 0; i < {n}; i++) {{")
    em.line(f"        const npy_intp at = base + {position} * {inner};")
    for a, q in outs:
        em.line(f"        q{q}[base + i * {inner}] = p{em.slots[a]}[at];")
    em.line("    }")
    em.line("}")
    em.line("free(buf);" if packed else "free(buf); free(ibuf);")

top_k_p = core.primitive("top_k", multiple_results=True)


def _descending_key(x):
    """Integers whose ascending order is x's descending order, in XLA's total order
    (-NaN < -inf < ... < -0 < 0 < ... < inf < NaN), so NaN and 0 rank before -0."""
    if x.dtype == np.bool_:
        x = x.astype(np.uint8)
    elif dtypes.issubdtype(x.dtype, np.floating):
        bits = x.view(np.dtype(f"i{x.dtype.itemsize}"))
        x = np.where(bits < 0, bits ^ dtypes.iinfo(bits.dtype).max, bits)
    return ~x


def _top_k_impl(x, *, k, axis):
    order = np.argsort(_descending_key(x), axis=axis, kind="stable")  # ties: lower index first
    idx = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(x, idx, axis=axis), idx.astype(np.int32)]


def _top_k_aval(x, *, k, axis):
    check_dtype("top_k", x, bool_ + int_ + float_, where_text(x))
    if not 0 <= axis < x.ndim:
        raise ValueError(f"top_k: axis {axis} is out of bounds for an operand of shape {x.shape}")
    if k < 0:
        raise ValueError(f"top_k: k must be non-negative, got {k}")
    if k > x.shape[axis]:
        raise ValueError(f"top_k: k={k} is larger than the size {x.shape[axis]} of axis {axis} "
                         f"of the operand of shape {x.shape}")
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    # As in JAX, both outputs inherit the operand's weak type.
    return [ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, np.int32, x.weak_type)]


def _top_k_jvp(primals, tangents, *, k, axis):
    """The tangent at each chosen index, picked by a one-hot mask over the operand axis.

    Selecting (rather than multiplying by the mask) keeps infinite tangents elsewhere out.
    """
    (x,), (t,) = primals, tangents
    values, idx = top_k_p.bind(x, k=k, axis=axis)
    shape = get_aval(x).shape
    wide = shape[:axis] + (k,) + shape[axis:]  # the operand axis moves to axis + 1
    ndim = len(shape)
    t_wide = broadcast_in_dim(t, wide, tuple(d if d < axis else d + 1 for d in range(ndim)))
    idx_wide = broadcast_in_dim(idx, wide, tuple(d if d <= axis else d + 1
                                                 for d in range(ndim)))
    chosen = eq(idx_wide, broadcasted_iota(np.int32, wide, axis + 1))
    picked = select_n(chosen, full(wide, 0, get_aval(t).dtype), t_wide)
    return [values, idx], [reduce_sum(picked, (axis + 1,)),
                           Zero(get_aval(idx).to_tangent_aval())]


top_k_p.def_impl(_top_k_impl)
top_k_p.def_abstract_eval(_top_k_aval)
top_k_p.def_jvp(_top_k_jvp)


def top_k(operand, k, *, axis=-1):
    """The `k` largest entries along `axis` in descending order, and their int32 indices.

    NaNs count as largest; among equal values the lower index comes first.
    """
    k = operator.index(k)
    axis = canonical_axes("top_k", (axis,), get_aval(operand).ndim)[0]
    values, indices = top_k_p.bind(operand, k=k, axis=axis)
    return values, indices


def _top_k_batch(size, vals, dims, *, k, axis):
    (x,), (d,) = vals, dims
    return top_k_p.bind(x, k=k, axis=axis + (d <= axis)), [d, d]


top_k_p.def_batch(_top_k_batch)
for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p,
           reduce_xor_p, argmax_p, argmin_p):
    defreducer(_p)


def _cumulative_batch(prim):
    def rule(size, vals, dims, *, axis, reverse):
        (x,), (d,) = vals, dims
        return prim.bind(x, axis=axis + (d <= axis), reverse=reverse), d

    return rule


for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
    _p.def_batch(_cumulative_batch(_p))


def _axes_text(axes) -> str:
    axes = tuple(int(a) for a in axes)
    return f"({axes[0]},)" if len(axes) == 1 else str(axes)


__all__ = [
    "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
    "reduce_xor", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
    "sort", "sort_key_val", "top_k",
]


# --------------------------------------------------------------------------------------
# Native rules (the native tier of jit): accumulated in the loop over the operand, so a
# reduction of an elementwise expression never materialises it.


def _native_reduction(eqn) -> bool:
    dt = eqn.invars[0].aval.dtype
    return bool(eqn.params["axes"]) and (dt in FLOATS or dt in INTS)


@native_rule(reduce_sum_p, kind="reduce", when=_native_reduction)
def _reduce_sum_native(c, eqn):
    if dtypes.kind(c.dtype) in "iu":
        return c.const(0), wrapping("+")(c, eqn, "{0}", "{1}"), True
    return c.const(0), "({0} + {1})", True


@native_rule(reduce_max_p, kind="reduce", when=_native_reduction, any_order=True)
def _reduce_max_native(c, eqn):
    """NaN propagates; -0 < +0 (see _zero_signs): one value in any order (NaNs' payloads
    aside), so accumulated in vector lanes."""
    if c.dtype in FLOATS:
        return (c.const(max_identity(c.dtype)), "((({1}) > ({0})) | (({1}) != ({1})) | "
                "((({1}) == ({0})) & !signbit({1})) ? ({1}) : ({0}))", False)
    return c.const(max_identity(c.dtype)), "(({1}) > ({0}) ? ({1}) : ({0}))", False


@native_rule(reduce_min_p, kind="reduce", when=_native_reduction, any_order=True)
def _reduce_min_native(c, eqn):
    if c.dtype in FLOATS:
        return (c.const(min_identity(c.dtype)), "((({1}) < ({0})) | (({1}) != ({1})) | "
                "((({1}) == ({0})) & (signbit({1}) != 0)) ? ({1}) : ({0}))", False)
    return c.const(min_identity(c.dtype)), "(({1}) < ({0}) ? ({1}) : ({0}))", False


# Cumulative reductions natively: each line combined in order from its first element (its
# last if reversed), as NumPy's accumulate does; a line's elements are side by side in the
# loop over the dimensions after the axis.
def _zero_and_nan_order(ufunc, formula) -> bool:
    """Whether NumPy's accumulate of `ufunc` picks between equal zeros and NaNs as the C
    `formula` of (a, v) does (it does on x86; its sign of equal zeros is the CPU's)."""
    nan = np.float32(np.nan)
    for a, v in ((0.0, -0.0), (-0.0, 0.0), (nan, 1.0), (1.0, nan), (nan, -nan), (-nan, nan)):
        pair = np.array([a, v], np.float32)
        want = formula(pair[0], pair[1])
        if ufunc.accumulate(pair)[1].tobytes() != np.float32(want).tobytes():
            return False
    return True


_ORDERED_AS_C = {
    "cummax": _zero_and_nan_order(np.maximum, lambda a, v: a if a > v or a != a else v),
    "cummin": _zero_and_nan_order(np.minimum, lambda a, v: a if a < v or a != a else v)}


def _cumulative_native_when(eqn) -> bool:
    dt = eqn.invars[0].aval.dtype
    return (type(eqn.invars[0]) is not Literal and (dt in FLOATS or dt in INTS)
            and (dt in INTS or _ORDERED_AS_C.get(eqn.primitive.name, True)))


def _cumulative_native(combine):
    """The native rule of a cumulative reduction whose step is `combine(c, a, v)`: the C
    expression of the running value after `a` takes in the element `v`."""
    def rule(em, eqn):
        x, out = eqn.invars[0], eqn.outvars[0]
        shape, axis = x.aval.shape, eqn.params["axis"]
        n, outer, inner = shape[axis], math.prod(shape[:axis]), math.prod(shape[axis + 1:])
        em.operand(x)
        em.as_array(x)
        s = em.slot(out)
        em.new_array(s, out.aval, var=out)
        if not n * outer * inner:
            return
        p, q, ctype = f"p{em.slots[x]}", f"q{s}", C_TYPES[x.aval.dtype]
        first, step = ((n - 1) * inner, -inner) if eqn.params["reverse"] else (0, inner)
        em.line(f"for (npy_intp o = 0; o < {outer * n * inner}; o += {n * inner}) {{")
        em.line(f"    for (npy_intp t = 0; t < {inner}; t++) "
                f"{q}[o + {first} + t] = {p}[o + {first} + t];")
        em.line(f"    for (npy_intp i = 1; i < {n}; i++) {{")
        em.line(f"        const npy_intp at = o + {first} + i * ({step});")
        em.line("        #pragma omp simd")
        em.line(f"        for (npy_intp t = 0; t < {inner}; t++) {{")
        em.line(f"            const {ctype} a = {q}[at - ({step}) + t], v = {p}[at + t];")
        em.line(f"            {q}[at + t] = {combine(x.aval.dtype)};")
        em.line("        }")
        em.line("    }")
        em.line("}")
    return rule


for _p, _combine in ((cumsum_p, lambda dt: wrapped(dt, "+", "a", "v")),
                     (cumprod_p, lambda dt: wrapped(dt, "*", "a", "v")),
                     (cummax_p, lambda dt: "((a > v) | (a != a)) ? a : v"),
                     (cummin_p, lambda dt: "((a < v) | (a != a)) ? a : v")):
    native_rule(_p, kind="block", when=_cumulative_native_when,
                counts=lambda eqn: (1, 0))(_cumulative_native(_combine))
