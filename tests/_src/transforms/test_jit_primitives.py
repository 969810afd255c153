"""didax.jit against eager evaluation, primitive by primitive.

For every registered primitive, a case applies it (through didax.lax, didax.numpy or a
transformation that emits it) to drawn inputs, and the compiled function must return what
eager evaluation returns: same shapes, dtypes and weak types, the same integers and
booleans, floats to a few ulp. It must also leave its inputs untouched and return the same
on a second (cached) call. A coverage test makes every primitive either have a case here
or an exemption with a reason, so a new primitive cannot go without one.

The last tests target the code generator itself: buffers reused across statements, numpy
scalars flowing through 0-d intermediates, non-contiguous inputs and outputs that alias
inputs.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import didax as jax
import didax.debug as jdebug
import didax.numpy as jnp
import didax.random as jrandom
from didax import lax
from didax._src import core
from didax._src.config import enable_x64
from didax._src.ir import ClosedJaxpr, Jaxpr
from didax._src.lax import device_put as _device_put
from didax._src.lax import linalg as linalg_internal
from didax._src.lax.select_and_scatter import select_and_scatter
from didax._src.primitives.jit_call import closed_call_p
from didax.ad_checkpoint import checkpoint_name

pytestmark = pytest.mark.usefixtures("jit_tier")  # both tiers (tests/conftest.py)

F32, F64, C64, C128 = (np.dtype(n) for n in ("float32", "float64", "complex64", "complex128"))
I32, U32, BOOL = np.dtype("int32"), np.dtype("uint32"), np.dtype("bool")
FLOAT = (F32, F64)
COMPLEX = (C64, C128)
INEXACT = FLOAT + COMPLEX
INT = (I32, U32)
NUM = INEXACT + (I32,)
REAL = FLOAT + (I32,)
ORDERED = REAL + (U32, BOOL)  # dtypes with an order (comparisons, sorting, cummax)
ANY = NUM + (U32, BOOL)
INT_BOOL = INT + (BOOL,)
X64_DTYPES = {F64, C128, np.dtype("int64"), np.dtype("uint64")}

MAX_ULP = 4
EXAMPLES = settings(max_examples=10, deadline=None)


# --------------------------------------------------------------------------------------
# Comparing jit with eager evaluation


def primitives_in(closed) -> set:
    """Names of the primitives a jaxpr applies, including inside sub-jaxprs."""
    names: set = set()

    def visit(jaxpr):
        for eqn in jaxpr.eqns:
            names.add(eqn.primitive.name)
            for p in eqn.params.values():
                for sub in (p if isinstance(p, (tuple, list)) else (p,)):
                    if isinstance(sub, ClosedJaxpr):
                        visit(sub.jaxpr)
                    elif isinstance(sub, Jaxpr):
                        visit(sub)

    visit(closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed)
    return names


def assert_close_ulp(got: np.ndarray, want: np.ndarray, where: str):
    if want.dtype.kind == "c":
        assert_close_ulp(got.real, want.real, where + " (real part)")
        assert_close_ulp(got.imag, want.imag, where + " (imaginary part)")
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=where + ": nans")
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)],
                                  err_msg=where + ": infinities")
    np.testing.assert_array_equal(np.isfinite(got), finite, err_msg=where + ": finiteness")
    if finite.any():
        np.testing.assert_array_max_ulp(got[finite], want[finite], maxulp=MAX_ULP)
    zeros = (got == 0) & (want == 0)
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]),
                                  err_msg=where + ": signs of zeros")


def assert_same(got, want):
    """`got` (from jit) is `want` (eager): structure, shapes, dtypes, weak types, values."""
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree, f"jit returned {got_tree}, eager {want_tree}"
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        where = f"output {i}"
        assert isinstance(g, core.Array), f"{where}: jit returned a {type(g).__name__}"
        w_aval = core.get_aval(w)  # eager may return Python scalars: their abstract type
        w_weak = w_aval.weak_type
        g_np, w_np = np.asarray(g), np.asarray(w, w_aval.dtype)
        assert (g_np.shape, g_np.dtype, g.weak_type) == (w_np.shape, w_np.dtype, w_weak), (
            f"{where}: jit gave {g_np.dtype}{list(g_np.shape)} weak={g.weak_type}, eager "
            f"{w_np.dtype}{list(w_np.shape)} weak={w_weak}")
        if w_np.dtype.kind in "biu":
            np.testing.assert_array_equal(g_np, w_np, err_msg=where)
        else:
            assert_close_ulp(g_np, w_np, where)


def snapshot(args):
    return [np.array(np.asarray(a), copy=True) for a in jax.tree_util.tree_leaves(args)]


def check_jit_matches_eager(fn, args) -> set:
    """jit(fn)(*args) is fn(*args), twice (the second time from the cache), and leaves
    `args` as they were. Returns the names of the primitives the traced jaxpr applies."""
    before = snapshot(args)
    want = fn(*args)
    jitted = jax.jit(fn)
    first = jitted(*args)
    assert_same(first, want)
    assert_same(jitted(*args), want)
    assert_same(first, want)  # the second call wrote nothing into the first call's outputs
    for b, a in zip(before, snapshot(args)):
        np.testing.assert_array_equal(a, b, err_msg="jit changed an input")
    return primitives_in(jitted.trace(*args).jaxpr)


def needs_x64(args) -> bool:
    return any(np.asarray(a).dtype in X64_DTYPES for a in jax.tree_util.tree_leaves(args))


# --------------------------------------------------------------------------------------
# Drawing inputs


def elements(dtype, lo=-4.0, hi=4.0, specials=False):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(int(np.ceil(lo)), int(info.min)),
                           min(int(np.floor(hi)), int(info.max)))
    width = 8 * dtype.itemsize // (2 if dtype.kind == "c" else 1)
    real = st.floats(lo, hi, width=width)
    if specials:
        real = st.one_of(real, st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0]))
    if dtype.kind == "c":
        return st.builds(complex, real, real)
    return real


def draw_shape(data, min_dims=0, max_dims=3, min_side=0, max_side=3):
    return data.draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                      max_side=max_side), label="shape")


def draw_array(data, dtype, shape, lo=-4.0, hi=4.0, specials=False, label="array"):
    return data.draw(hnp.arrays(np.dtype(dtype), shape,
                                elements=elements(dtype, lo, hi, specials)), label=label)


def draw_dtype(data, dtypes):
    return np.dtype(data.draw(st.sampled_from(dtypes), label="dtype"))


def draw_axes(data, ndim):
    """A sorted subset of range(ndim) (possibly empty, possibly all)."""
    return tuple(sorted(data.draw(st.sets(st.integers(0, ndim - 1)), label="axes"))) \
        if ndim else ()


def draw_axis(data, shape, nonempty=False):
    """An axis of `shape` (optionally one of size >= 1), as a positive or negative index."""
    candidates = [a for a, d in enumerate(shape) if d >= 1 or not nonempty]
    assume(candidates)
    axis = data.draw(st.sampled_from(candidates), label="axis")
    return axis - len(shape) if data.draw(st.booleans(), label="negative axis") else axis


def draw_broadcastable_shapes(data):
    """Two shapes lax broadcasts: equal, one of rank 0, or equal ranks with size-1 dims."""
    s = draw_shape(data)
    kind = data.draw(st.sampled_from(["same", "scalar", "ones"]), label="broadcast")
    if kind == "same":
        return s, s
    t = () if kind == "scalar" else tuple(1 if data.draw(st.booleans()) else d for d in s)
    return (s, t) if data.draw(st.booleans(), label="swap") else (t, s)


# --------------------------------------------------------------------------------------
# Cases: each draws (function, arguments); `covers` names the primitives it applies


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    covers: tuple
    draw: object  # data -> (fn, args)

    def __repr__(self):
        return self.name


CASES: list[Case] = []


def case(name, covers=None):
    def register(draw):
        CASES.append(Case(name, tuple(covers or (name.split(":")[0],)), draw))
        return draw
    return register


def unary(prim, dtypes, fn=None, lo=-4.0, hi=4.0, specials=True):
    fn = fn or getattr(lax, prim)

    @case(prim)
    def draw(data):
        dtype = draw_dtype(data, dtypes)
        return fn, (draw_array(data, dtype, draw_shape(data), lo, hi, specials),)


def binary(prim, dtypes, fn=None, lo=-4.0, hi=4.0, y_lo=None, y_hi=None, specials=True):
    fn = fn or getattr(lax, prim)

    @case(prim)
    def draw(data):
        dtype = draw_dtype(data, dtypes)
        sx, sy = draw_broadcastable_shapes(data)
        x = draw_array(data, dtype, sx, lo, hi, specials, label="x")
        y = draw_array(data, dtype, sy, lo if y_lo is None else y_lo,
                       hi if y_hi is None else y_hi, specials, label="y")
        return fn, (x, y)


for _name, _dtypes in [
    ("neg", NUM), ("sign", NUM), ("floor", FLOAT), ("ceil", FLOAT), ("is_finite", FLOAT),
    ("exp", INEXACT), ("exp2", INEXACT), ("log", INEXACT), ("log1p", INEXACT),
    ("expm1", INEXACT), ("tanh", INEXACT), ("logistic", INEXACT), ("sin", INEXACT),
    ("cos", INEXACT), ("tan", INEXACT), ("asin", INEXACT), ("acos", INEXACT),
    ("atan", INEXACT), ("sinh", INEXACT), ("cosh", INEXACT), ("asinh", INEXACT),
    ("acosh", INEXACT), ("atanh", INEXACT), ("sqrt", INEXACT), ("rsqrt", INEXACT),
    ("cbrt", FLOAT), ("abs", NUM), ("erf", FLOAT), ("erfc", FLOAT), ("lgamma", FLOAT),
    ("digamma", FLOAT), ("square", NUM), ("real", COMPLEX), ("imag", COMPLEX),
    ("conj", INEXACT), ("stop_gradient", INEXACT),
]:
    unary(_name, _dtypes)
unary("erf_inv", FLOAT, lo=-1.0, hi=1.0)
unary("bessel_i0e", FLOAT, lo=-30.0, hi=30.0)
unary("bessel_i1e", FLOAT, lo=-30.0, hi=30.0)
unary("not", INT_BOOL, fn=lax.bitwise_not)
unary("population_count", INT, lo=-(2 ** 31), hi=2 ** 32 - 1)
unary("clz", INT + (np.dtype("int8"), np.dtype("uint16")), lo=-(2 ** 31), hi=2 ** 32 - 1)

for _name, _dtypes in [
    ("add", NUM), ("sub", NUM), ("mul", NUM), ("div", NUM), ("rem", REAL), ("pow", INEXACT),
    ("max", ANY), ("min", ANY), ("atan2", FLOAT), ("nextafter", FLOAT), ("eq", ANY),
    ("ne", ANY), ("lt", ORDERED), ("le", ORDERED), ("gt", ORDERED), ("ge", ORDERED),
    ("complex", FLOAT),
]:
    binary(_name, _dtypes)
binary("and", INT_BOOL, fn=lax.bitwise_and, lo=-100, hi=100)
binary("or", INT_BOOL, fn=lax.bitwise_or, lo=-100, hi=100)
binary("xor", INT_BOOL, fn=lax.bitwise_xor, lo=-100, hi=100)
binary("shift_left", INT, lo=-1000, hi=1000, y_lo=-3, y_hi=40)
binary("shift_right_arithmetic", INT, lo=-1000, hi=1000, y_lo=-3, y_hi=40)
binary("shift_right_logical", INT, lo=-1000, hi=1000, y_lo=-3, y_hi=40)
binary("mulhi", INT + (np.dtype("int8"),), lo=-(2 ** 31), hi=2 ** 32 - 1)


@case("polygamma")
def _(data):
    dtype = draw_dtype(data, FLOAT)
    shape = draw_shape(data)
    m = draw_array(data, dtype, shape, 0, 3).round()
    return lax.polygamma, (m, draw_array(data, dtype, shape, -3.0, 5.0, specials=True))


@case("round")
def _(data):
    method = data.draw(st.sampled_from([0, 1]), label="rounding_method")
    x = draw_array(data, draw_dtype(data, FLOAT), draw_shape(data), -6.0, 6.0, specials=True)
    halves = np.round(x * 2) / 2  # ties, where the two rounding methods differ
    x = np.where(np.arange(x.size).reshape(x.shape) % 2 == 0, halves, x).astype(x.dtype)
    return (lambda x: lax.round(x, method)), (x,)


@case("integer_pow")
def _(data):
    dtype = draw_dtype(data, NUM)
    y = data.draw(st.integers(-3 if dtype.kind in "fc" else 0, 5), label="y")
    return (lambda x: lax.integer_pow(x, y)), (draw_array(data, dtype, draw_shape(data)),)


@case("select_n:bool")
def _(data):
    dtype = draw_dtype(data, ANY)
    shape = draw_shape(data)
    which = draw_array(data, BOOL, data.draw(st.sampled_from([(), shape])), label="which")
    return lax.select_n, (which, draw_array(data, dtype, shape), draw_array(data, dtype, shape))


@case("select_n:int")
def _(data):
    dtype = draw_dtype(data, ANY)
    shape = draw_shape(data)
    which = draw_array(data, I32, data.draw(st.sampled_from([(), shape])), 0, 2, label="which")
    cases = [draw_array(data, dtype, shape) for _ in range(3)]
    return lax.select_n, (which, *cases)


@case("clamp")
def _(data):
    dtype = draw_dtype(data, REAL)
    shape = draw_shape(data)
    lo = draw_array(data, dtype, data.draw(st.sampled_from([(), shape])), -4, 0, label="lo")
    hi = draw_array(data, dtype, data.draw(st.sampled_from([(), shape])), 0, 4, label="hi")
    return lax.clamp, (lo, draw_array(data, dtype, shape, -6, 6, label="x"), hi)


@case("convert_element_type")
def _(data):
    src, dst = draw_dtype(data, ANY), draw_dtype(data, ANY)
    x = draw_array(data, src, draw_shape(data), -100.0, 100.0)
    weak = data.draw(st.booleans(), label="weak_type")
    return (lambda x: lax.convert_element_type(x, dst, weak_type=weak)), (x,)


# Shapes ---------------------------------------------------------------------------------


@case("broadcast_in_dim")
def _(data):
    s = draw_shape(data, max_dims=2)
    rank = len(s) + data.draw(st.integers(0, 2), label="extra dims")
    dims = tuple(sorted(data.draw(st.permutations(range(rank)), label="dims")[:len(s)]))
    shape = [data.draw(st.integers(0, 3)) for _ in range(rank)]
    for d, size in zip(dims, s):
        shape[d] = size if size != 1 else data.draw(st.integers(0, 3), label="stretched")
    x = draw_array(data, draw_dtype(data, ANY), s)
    return (lambda x: lax.broadcast_in_dim(x, tuple(shape), dims)), (x,)


@case("reshape")
def _(data):
    s = draw_shape(data)
    size = int(np.prod(s))
    new = data.draw(st.sampled_from([(size,), tuple(reversed(s)), s + (1,), (1,) + s]))
    dims = data.draw(st.one_of(st.none(), st.permutations(range(len(s))).map(tuple)),
                     label="dimensions")
    x = draw_array(data, draw_dtype(data, ANY), s)
    return (lambda x: lax.reshape(x, new, dims)), (x,)


@case("squeeze")
def _(data):
    s = list(draw_shape(data, max_dims=2))
    ones = data.draw(st.lists(st.integers(0, len(s)), max_size=3), label="insert at")
    for i in sorted(ones, reverse=True):
        s.insert(i, 1)
    dims = tuple(i for i, d in enumerate(s) if d == 1 and data.draw(st.booleans()))
    dims = tuple(d - len(s) if data.draw(st.booleans()) else d for d in dims)
    x = draw_array(data, draw_dtype(data, ANY), tuple(s))
    return (lambda x: lax.squeeze(x, dims)), (x,)


@case("expand_dims")
def _(data):
    s = draw_shape(data)
    dims = tuple(data.draw(st.sets(st.integers(0, len(s)), max_size=2), label="dims"))
    x = draw_array(data, draw_dtype(data, ANY), s)
    return (lambda x: lax.expand_dims(x, dims)), (x,)


@case("transpose")
def _(data):
    s = draw_shape(data)
    perm = tuple(data.draw(st.permutations(range(len(s))), label="permutation"))
    x = draw_array(data, draw_dtype(data, ANY), s)
    return (lambda x: lax.transpose(x, perm)), (x,)


@case("rev")
def _(data):
    s = draw_shape(data)
    dims = draw_axes(data, len(s))
    return (lambda x: lax.rev(x, dims)), (draw_array(data, draw_dtype(data, ANY), s),)


@case("pad")
def _(data):
    s = draw_shape(data)
    config = [tuple(data.draw(st.integers(lo, hi)) for lo, hi in ((-2, 2), (-2, 2), (0, 2)))
              for _ in s]
    for (lo, hi, interior), n in zip(config, s):
        assume(lo + hi + n + max(n - 1, 0) * interior >= 0)
    dtype = draw_dtype(data, ANY)
    x, value = draw_array(data, dtype, s), draw_array(data, dtype, (), label="padding value")
    return (lambda x, v: lax.pad(x, v, config)), (x, value)


@case("concatenate")
def _(data):
    s = draw_shape(data, min_dims=1)
    axis = data.draw(st.integers(0, len(s) - 1), label="axis")
    dtype = draw_dtype(data, ANY)
    parts = []
    for _ in range(data.draw(st.integers(1, 3), label="operands")):
        shape = s[:axis] + (data.draw(st.integers(0, 3)),) + s[axis + 1:]
        parts.append(draw_array(data, dtype, shape))
    return (lambda *xs: lax.concatenate(xs, axis)), tuple(parts)


@case("slice")
def _(data):
    s = draw_shape(data)
    starts, limits = [], []
    for n in s:
        a, b = sorted(data.draw(st.tuples(st.integers(0, n), st.integers(0, n))))
        starts.append(a)
        limits.append(b)
    strides = data.draw(st.one_of(st.none(), st.tuples(*[st.integers(1, 3) for _ in s])))
    x = draw_array(data, draw_dtype(data, ANY), s)
    return (lambda x: lax.slice(x, starts, limits, strides)), (x,)


@case("split")
def _(data):
    s = draw_shape(data, min_dims=1)
    axis = draw_axis(data, s)
    n = s[axis]
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3), label="cuts"))
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    x = draw_array(data, draw_dtype(data, ANY), s)
    return (lambda x: lax.split(x, sizes, axis)), (x,)


@case("iota")
def _(data):
    dtype = draw_dtype(data, REAL + (U32,))
    n = data.draw(st.integers(0, 4), label="size")
    return (lambda: lax.iota(dtype, n)), ()


@case("iota:broadcasted")
def _(data):
    s = draw_shape(data, min_dims=1)
    dim = data.draw(st.integers(0, len(s) - 1), label="dimension")
    x = draw_array(data, I32, s)
    return (lambda x: x * lax.broadcasted_iota(I32, s, dim)), (x,)


# Indexing -------------------------------------------------------------------------------


@case("dynamic_slice")
def _(data):
    s = draw_shape(data)
    sizes = [data.draw(st.integers(0, n)) for n in s]
    starts = tuple(np.int32(data.draw(st.integers(-5, 5))) for _ in s)
    x = draw_array(data, draw_dtype(data, ANY), s)
    return (lambda x, *i: lax.dynamic_slice(x, i, sizes)), (x, *starts)


@case("dynamic_update_slice")
def _(data):
    s = draw_shape(data)
    dtype = draw_dtype(data, ANY)
    u = draw_array(data, dtype, tuple(data.draw(st.integers(0, n)) for n in s), label="update")
    starts = tuple(np.int32(data.draw(st.integers(-5, 5))) for _ in s)
    x = draw_array(data, dtype, s)
    return (lambda x, u, *i: lax.dynamic_update_slice(x, u, i)), (x, u, *starts)


def draw_indexed(data, max_dims=3):
    """An operand with a non-empty leading axis and int32 indices into it (negative too)."""
    s = draw_shape(data, min_dims=1, max_dims=max_dims)
    assume(s[0] >= 1)
    x = draw_array(data, draw_dtype(data, ANY), s)
    idx = draw_array(data, I32, draw_shape(data, max_dims=2), -s[0], s[0] - 1, label="idx")
    return x, idx


@case("gather")
def _(data):
    x, idx = draw_indexed(data)
    return (lambda x, i: x[i]), (x, idx)


@case("gather:take")
def _(data):
    x, idx = draw_indexed(data)
    x = np.moveaxis(x, 0, -1).copy()
    return (lambda x, i: jnp.take(x, i, axis=-1)), (x, idx)


@case("gather:fill")
def _(data):
    x, idx = draw_indexed(data)
    idx = idx * 2  # some indices out of bounds
    return (lambda x, i: x.at[i].get(mode="fill", fill_value=1)), (x, idx)


@case("dynamic_slice:scalar index")
def _(data):
    x, idx = draw_indexed(data)
    return (lambda x, i: x[i]), (x, idx.reshape(-1)[:1].reshape(()) if idx.size else np.int32(0))


def scatter_case(name, method, dtypes=ANY, mode=None):
    @case(name)
    def _(data):
        x, idx = draw_indexed(data, max_dims=2)
        x = x.astype(draw_dtype(data, dtypes))
        u = draw_array(data, x.dtype, idx.shape + x.shape[1:], label="updates")
        if mode == "drop":
            idx = idx * 2

        def f(x, i, u):
            return getattr(x.at[i], method)(u, mode=mode)
        return f, (x, idx, u)


scatter_case("scatter", "set")
scatter_case("scatter:drop", "set", mode="drop")
scatter_case("scatter-add", "add", NUM)
scatter_case("scatter-add:drop", "add", NUM, mode="drop")
scatter_case("scatter-mul", "multiply", NUM)
scatter_case("scatter-min", "min", ORDERED)
scatter_case("scatter-max", "max", ORDERED)


@case("scatter-sub")
def _(data):
    x, idx = draw_indexed(data, max_dims=2)
    x = x.astype(draw_dtype(data, NUM))
    u = draw_array(data, x.dtype, idx.shape + x.shape[1:], label="updates")
    dn = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(idx.ndim, idx.ndim + x.ndim - 1)),
        inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    mode = data.draw(st.sampled_from(["clip", "drop"]), label="mode")
    return (lambda x, i, u: lax.scatter_sub(x, i[..., None], u, dn, mode=mode)), (x, idx, u)


# Windowed reductions ---------------------------------------------------------------------


def draw_window(data, ndim):
    """reduce_window's geometry: window, strides, padding (a string or pairs, some
    negative) and both dilations."""
    sizes = st.tuples(*[st.integers(1, 3)] * ndim)
    pairs = st.tuples(*[st.tuples(st.integers(-1, 2), st.integers(-1, 2))] * ndim)
    return dict(window_dimensions=data.draw(sizes, label="window"),
                window_strides=data.draw(st.tuples(*[st.integers(1, 2)] * ndim), label="strides"),
                padding=data.draw(st.one_of(st.sampled_from(["VALID", "SAME"]), pairs),
                                  label="padding"),
                base_dilation=data.draw(st.tuples(*[st.integers(1, 2)] * ndim), label="base"),
                window_dilation=data.draw(st.tuples(*[st.integers(1, 2)] * ndim),
                                          label="window dilation"))


WINDOW_MONOIDS = {"reduce_window_sum": (lax.add, lambda dtype: 0),
                  "reduce_window_max": (lax.max, lambda dtype: False if dtype.kind == "b" else
                                        np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf),
                  "reduce_window_min": (lax.min, lambda dtype: True if dtype.kind == "b" else
                                        np.iinfo(dtype).max if dtype.kind in "iu" else np.inf)}


def draw_windowed(data, prim, dtypes):
    """A reduce_window binding `prim` (its identity as the initial value), and an operand."""
    s = draw_shape(data, min_dims=1, max_side=4)
    x = draw_array(data, draw_dtype(data, dtypes), s, specials=True)
    computation, identity = WINDOW_MONOIDS[prim]
    init = np.asarray(identity(x.dtype), x.dtype)
    window = draw_window(data, len(s))
    return (lambda x: lax.reduce_window(x, init, computation, **window)), x


@case("reduce_window_sum")
def _(data):
    f, x = draw_windowed(data, "reduce_window_sum", NUM)
    return f, (x,)


for _name in ("reduce_window_max", "reduce_window_min"):
    @case(_name)
    def _(data, _name=_name):
        f, x = draw_windowed(data, _name, ORDERED)
        return f, (x,)


def _general_reduction(data, draw_geometry, reduce):
    """A computation of its own: not associative, or variadic (an argmax); `reduce(operands,
    initial values, computation, geometry)` stages it over the drawn geometry."""
    s = draw_shape(data, min_dims=1, max_side=4)
    x = draw_array(data, draw_dtype(data, REAL), s, specials=True)
    geometry = draw_geometry(data, len(s))
    if data.draw(st.booleans(), label="variadic"):
        idx = np.arange(x.size, dtype=np.int32).reshape(s)
        return (lambda x, i: reduce((x, i), (x.dtype.type(-4), np.int32(-1)), _argmax_pair,
                                    geometry)), (x, idx)
    return (lambda x: reduce(x, x.dtype.type(1), _affine, geometry)), (x,)


@case("reduce_window")
def _(data):
    return _general_reduction(data, draw_window,
                              lambda ops, inits, f, window: lax.reduce_window(ops, inits, f,
                                                                              **window))


@case("reduce")
def _(data):
    return _general_reduction(data, draw_axes, lax.reduce)


def _affine(a, b):
    return a * b + a


def _argmax_pair(a, b):
    pick = a[0] >= b[0]
    return lax.select(pick, a[0], b[0]), lax.select(pick, a[1], b[1])


@case("select_and_gather_add")
def _(data):
    f, x = draw_windowed(data, data.draw(st.sampled_from(["reduce_window_max",
                                                          "reduce_window_min"])), FLOAT)
    t = draw_array(data, x.dtype, x.shape, label="tangent")
    return (lambda x, t: jax.jvp(f, (x,), (t,))), (x, t)


@case("select_and_scatter_add")
def _(data):
    f, x = draw_windowed(data, data.draw(st.sampled_from(["reduce_window_max",
                                                          "reduce_window_min"])), FLOAT)
    return jax.grad(lambda x: jnp.sum(jnp.sin(f(x)))), (x,)


@case("select_and_scatter")
def _(data):
    """A scatter of its own (not commutative) and any selection; ties and NaNs included (jit
    and eager make the same choices), windows of padding alone too."""
    s = draw_shape(data, min_dims=1, max_side=4)
    x = draw_array(data, draw_dtype(data, REAL), s, specials=True)
    window = data.draw(st.tuples(*[st.integers(1, 3)] * len(s)), label="window")
    strides = data.draw(st.tuples(*[st.integers(1, 2)] * len(s)), label="strides")
    padding = data.draw(st.tuples(*[st.tuples(st.integers(0, 2), st.integers(0, 2))] * len(s)),
                        label="padding")
    out = tuple(0 if n + lo + hi < w else (n + lo + hi - w) // t + 1
                for n, w, t, (lo, hi) in zip(s, window, strides, padding))
    source = draw_array(data, x.dtype, out, label="source")
    select = data.draw(st.sampled_from([lax.ge, lax.le, lax.lt]), label="select")
    return (lambda x, src: select_and_scatter(x, select, window, strides, padding, src,
                                              x.dtype.type(1), _affine)), (x, source)


# Reductions, cumulative operations, sorting ------------------------------------------------


def reduction(prim, dtypes, specials=True):
    fn = getattr(lax, prim)

    @case(prim)
    def _(data):
        s = draw_shape(data)
        axes = draw_axes(data, len(s))
        x = draw_array(data, draw_dtype(data, dtypes), s, specials=specials)
        return (lambda x: fn(x, axes)), (x,)


for _name, _dtypes in [("reduce_sum", NUM), ("reduce_prod", NUM), ("reduce_max", ORDERED),
                       ("reduce_min", ORDERED), ("reduce_and", INT_BOOL),
                       ("reduce_or", INT_BOOL), ("reduce_xor", INT_BOOL)]:
    reduction(_name, _dtypes)


def arg_reduction(prim):
    fn = getattr(lax, prim)

    @case(prim)
    def _(data):
        s = draw_shape(data, min_dims=1)
        axis = draw_axis(data, s, nonempty=True) % len(s)
        x = draw_array(data, draw_dtype(data, ORDERED), s, specials=True)
        return (lambda x: fn(x, axis, I32)), (x,)


arg_reduction("argmax")
arg_reduction("argmin")


def cumulative(prim, dtypes):
    fn = getattr(lax, prim)

    @case(prim)
    def _(data):
        s = draw_shape(data, min_dims=1)
        axis = draw_axis(data, s) % len(s)
        reverse = data.draw(st.booleans(), label="reverse")
        x = draw_array(data, draw_dtype(data, dtypes), s, specials=True)
        return (lambda x: fn(x, axis, reverse)), (x,)


for _name, _dtypes in [("cumsum", NUM), ("cumprod", NUM), ("cummax", REAL + (U32,)),
                       ("cummin", REAL + (U32,)), ("cumlogsumexp", FLOAT)]:
    cumulative(_name, _dtypes)


@case("sort")
def _(data):
    s = draw_shape(data, min_dims=1)
    dim = draw_axis(data, s)
    stable = data.draw(st.booleans(), label="is_stable")
    x = draw_array(data, draw_dtype(data, ORDERED + COMPLEX), s, specials=True)
    return (lambda x: lax.sort(x, dim, stable)), (x,)


@case("sort:several operands")
def _(data):
    s = draw_shape(data, min_dims=1)
    dim = draw_axis(data, s)
    num_keys = data.draw(st.integers(1, 2), label="num_keys")
    ops = tuple(draw_array(data, draw_dtype(data, ORDERED), s, -2, 2) for _ in range(3))
    return (lambda *ops: lax.sort(ops, dim, True, num_keys)), ops


@case("top_k")
def _(data):
    s = draw_shape(data, min_dims=1)
    k = data.draw(st.integers(0, s[-1]), label="k")
    x = draw_array(data, draw_dtype(data, REAL + (U32,)), s, specials=True)
    return (lambda x: lax.top_k(x, k)), (x,)


# Contractions ----------------------------------------------------------------------------


DOT_DTYPES = (F32, F64, I32, C64)


@case("dot_general:matrix forms")
def _(data):
    dtype = draw_dtype(data, DOT_DTYPES)
    m, k, n = (data.draw(st.integers(0, 3)) for _ in range(3))
    lc, rc = data.draw(st.sampled_from([(1, 0), (0, 0), (1, 1), (0, 1)]), label="contracting")
    a = draw_array(data, dtype, (m, k) if lc == 1 else (k, m), label="lhs")
    b = draw_array(data, dtype, (k, n) if rc == 0 else (n, k), label="rhs")
    return (lambda a, b: lax.dot_general(a, b, (((lc,), (rc,)), ((), ())))), (a, b)


@case("dot_general:vectors")
def _(data):
    dtype = draw_dtype(data, DOT_DTYPES)
    k = data.draw(st.integers(0, 3))
    lhs_shape = draw_shape(data, min_dims=0, max_dims=2) + (k,)
    rhs_shape = data.draw(st.sampled_from([(k,), (k, 2)]))
    a, b = draw_array(data, dtype, lhs_shape), draw_array(data, dtype, rhs_shape)
    dn = (((len(lhs_shape) - 1,), (0,)), ((), ()))
    return (lambda a, b: lax.dot_general(a, b, dn)), (a, b)


@case("dot_general:batched")
def _(data):
    dtype = draw_dtype(data, DOT_DTYPES)
    bsz, m, k, n = (data.draw(st.integers(0, 3)) for _ in range(4))
    a, b = draw_array(data, dtype, (m, bsz, k)), draw_array(data, dtype, (bsz, n, k))
    dn = (((2,), (2,)), ((1,), (0,)))
    return (lambda a, b: lax.dot_general(a, b, dn)), (a, b)


@case("dot_general:preferred type")
def _(data):
    dtype = draw_dtype(data, (F32, I32))
    out = draw_dtype(data, (F32, F64, I32))
    a, b = draw_array(data, dtype, (2, 3)), draw_array(data, dtype, (3, 2))
    return (lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                         preferred_element_type=out)), (a, b)


@case("dot_general:einsum")
def _(data):
    dtype = draw_dtype(data, (F32, F64))
    i, j, k = (data.draw(st.integers(0, 3)) for _ in range(3))
    a, b = draw_array(data, dtype, (i, j, k)), draw_array(data, dtype, (k, j))
    return (lambda a, b: jnp.einsum("ijk,kj->ji", a, b)), (a, b)


@case("conv_general_dilated")
def _(data):
    dtype = draw_dtype(data, FLOAT)
    spatial = data.draw(st.integers(1, 2), label="spatial dims")
    groups = data.draw(st.integers(1, 2), label="feature groups")
    n, c_per_group, o_per_group = (data.draw(st.integers(1, 2)) for _ in range(3))
    size = tuple(data.draw(st.integers(1, 5)) for _ in range(spatial))
    window = tuple(data.draw(st.integers(1, 3)) for _ in range(spatial))
    lhs = draw_array(data, dtype, (n, c_per_group * groups) + size, label="lhs")
    rhs = draw_array(data, dtype, (o_per_group * groups, c_per_group) + window, label="rhs")
    strides = tuple(data.draw(st.integers(1, 2)) for _ in range(spatial))
    lhs_dil = tuple(data.draw(st.integers(1, 2)) for _ in range(spatial))
    strings = ["SAME", "VALID"] if lhs_dil == (1,) * spatial else []  # as in JAX
    padding = data.draw(st.sampled_from(strings + [[(1, 0)] * spatial, [(0, -1)] * spatial]),
                        label="padding")
    rhs_dil = tuple(data.draw(st.integers(1, 2)) for _ in range(spatial))
    if padding == "VALID":
        assume(all((s - 1) * ld + 1 >= (w - 1) * rd + 1
                   for s, w, ld, rd in zip(size, window, lhs_dil, rhs_dil)))

    def f(lhs, rhs):
        return lax.conv_general_dilated(lhs, rhs, strides, padding, lhs_dil, rhs_dil,
                                        feature_group_count=groups)
    return f, (lhs, rhs)


# Random bits --------------------------------------------------------------------------------


@case("threefry2x32")
def _(data):
    key = jrandom.PRNGKey(data.draw(st.integers(0, 2 ** 31 - 1), label="seed"))
    shape = draw_shape(data, max_dims=2)
    return (lambda k: (jrandom.split(k, 3), jrandom.uniform(k, shape))), (np.asarray(key),)


@case("threefry2x32:bind")
def _(data):
    shape = draw_shape(data, max_dims=2)
    words = [draw_array(data, U32, shape, 0, 2 ** 32 - 1) for _ in range(4)]
    return core.all_primitives["threefry2x32"].bind, tuple(words)


# Control flow -------------------------------------------------------------------------------


@case("scan")
def _(data):
    dtype = draw_dtype(data, FLOAT)
    s = draw_shape(data, max_dims=2)
    length = data.draw(st.integers(0, 3), label="length")
    reverse = data.draw(st.booleans(), label="reverse")
    c0, w = draw_array(data, dtype, s, label="init"), draw_array(data, dtype, s, label="w")
    xs = draw_array(data, dtype, (length,) + s, -1.0, 1.0, label="xs")

    def f(c0, w, xs):
        def body(carry, x):
            c, n = carry
            c = jnp.tanh(c * w + x)
            return (c, n + 1), (c * x, jnp.sum(c))
        return lax.scan(body, (c0, jnp.int32(0)), xs, reverse=reverse)
    return f, (c0, w, xs)


@case("scan:no xs")
def _(data):
    length = data.draw(st.integers(0, 3), label="length")
    x = draw_array(data, draw_dtype(data, REAL), draw_shape(data, max_dims=2))
    return (lambda x: lax.scan(lambda c, _: (c * 2, c), x, None, length=length)), (x,)


@case("cond")
def _(data):
    dtype = draw_dtype(data, FLOAT)
    s = draw_shape(data)
    pred = draw_array(data, BOOL, (), label="pred")
    x, y = draw_array(data, dtype, s), draw_array(data, dtype, s)

    def f(p, x, y):
        return lax.cond(p, lambda x, y: (x * y, jnp.sum(x)), lambda x, y: (x - y, jnp.sum(y)),
                        x, y)
    return f, (pred, x, y)


@case("cond:switch")
def _(data):
    dtype = draw_dtype(data, REAL)
    index = np.int32(data.draw(st.integers(-2, 4), label="index"))
    x = draw_array(data, dtype, draw_shape(data))
    branches = [lambda x: x + x, lambda x: x * x, lambda x: -x, lambda x: x]
    return (lambda i, x: lax.switch(i, branches, x)), (index, x)


@case("while")
def _(data):
    dtype = draw_dtype(data, FLOAT)
    n = np.int32(data.draw(st.integers(-1, 4), label="trip count"))
    x = draw_array(data, dtype, draw_shape(data, max_dims=2))

    def f(n, x):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.sin(c[1]) * 2),
                              (jnp.int32(0), x))
    return f, (n, x)


@case("while_transpose")
def _(data):
    # reverse mode through a loop whose trip count jit cannot know (eager records it)
    dtype = draw_dtype(data, FLOAT)
    n = np.int32(data.draw(st.integers(-1, 4), label="trip count"))
    x = draw_array(data, dtype, draw_shape(data, max_dims=2))

    def f(n, x):
        def loss(x):
            out = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.sin(c[1]) * 2),
                                 (jnp.int32(0), x))
            return jnp.sum(out[1])
        return jax.grad(loss)(x)
    return f, (n, x)


@case("while:fori_loop")
def _(data):
    lo = np.int32(data.draw(st.integers(-2, 2), label="lower"))
    hi = np.int32(data.draw(st.integers(-2, 4), label="upper"))
    x = draw_array(data, draw_dtype(data, REAL), draw_shape(data, max_dims=2))
    return (lambda lo, hi, x: lax.fori_loop(lo, hi, lambda i, c: c * 2 + i.astype(c.dtype),
                                            x)), (lo, hi, x)


# Custom rules, checkpointing, nested jit, accumulation ------------------------------------------


@jax.custom_jvp
def softplus(x):
    return jnp.logaddexp(x, 0.0)


softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * lax.logistic(p[0])))


@jax.custom_vjp
def sin_with_halved_vjp(x):
    return jnp.sin(x)


sin_with_halved_vjp.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (c * g * 0.5,))


def remat_body(x):
    return jnp.sin(jnp.sin(x)) * x


def float_arrays(data, count):
    dtype = draw_dtype(data, FLOAT)
    s = draw_shape(data)
    return tuple(draw_array(data, dtype, s) for _ in range(count))


@case("custom_jvp_call")
def _(data):
    return softplus, float_arrays(data, 1)


@case("custom_vjp_call")
def _(data):
    return sin_with_halved_vjp, float_arrays(data, 1)


@case("custom_lin")
def _(data):
    return (lambda x, t: jax.jvp(sin_with_halved_vjp, (x,), (t,))), float_arrays(data, 2)


@case("checkpoint")
def _(data):
    return jax.checkpoint(remat_body), float_arrays(data, 1)


@case("remat_jvp")
def _(data):
    return (lambda x, t: jax.jvp(jax.checkpoint(remat_body), (x,), (t,))), float_arrays(data, 2)


@case("jit")
def _(data):
    inner = jax.jit(lambda x, y: (x * y + 1, jnp.cos(x)))
    return (lambda x, y: inner(inner(x, y)[0], y)), float_arrays(data, 2)


@case("add_any")
def _(data):
    return jax.grad(lambda x: jnp.sum(jnp.sin(x) * x)), float_arrays(data, 1)


@case("closed_call")
def _(data):
    def f(x, y):
        closed = jax.make_jaxpr(lambda a, b: (a * b + 1, jnp.cos(a)))(x, y)
        return closed_call_p.bind(x, y, call_jaxpr=closed)
    return f, float_arrays(data, 2)


@case("refs", covers=("new_ref", "get", "swap", "addupdate", "freeze"))
def _(data):
    """A reference made, read and written (a dynamic index, strided slices, addupdate):
    jit discharges it into array code."""
    dtype = draw_dtype(data, FLOAT + (I32,))
    shape = draw_shape(data, min_dims=1, min_side=1)
    x = draw_array(data, dtype, shape)
    i = data.draw(st.integers(-shape[0], shape[0] - 1), label="index")

    def f(x, i):
        r = jax.new_ref(x)
        first = r[i]
        r[i] = first * 2
        r[..., ::2] += r[..., ::2] * x[..., ::2]
        r.addupdate(x)
        old = jax.ref.swap(r, (slice(None, None, 2),), x[::2])
        return first, old, jax.freeze(r)
    return f, (x, np.int32(i))




# --------------------------------------------------------------------------------------
# Linear algebra (lax.linalg): drawn matrices, some singular or not positive definite


def draw_matrices(data, dtypes, square=True, specials=False):
    batch = draw_shape(data, max_dims=2, max_side=2)
    m = data.draw(st.integers(0, 4), label="m")
    n = m if square else data.draw(st.integers(0, 4), label="n")
    return draw_array(data, draw_dtype(data, dtypes), batch + (m, n), specials=specials)


@case("cholesky")
def _(data):
    x = draw_matrices(data, INEXACT, specials=True)
    spd = data.draw(st.booleans(), label="positive definite")
    if spd:  # x x^H + n I; otherwise x as drawn (mostly not positive definite: NaNs)
        x = x @ np.conj(np.swapaxes(x, -1, -2)) + x.shape[-1] * np.eye(x.shape[-1], dtype=x.dtype)
    return lax.linalg.cholesky, (x,)


@case("triangular_solve")
def _(data):
    a = draw_matrices(data, INEXACT)
    left_side = data.draw(st.booleans(), label="left_side")
    k = data.draw(st.integers(0, 3), label="k")
    m = a.shape[-1]
    b = draw_array(data, a.dtype, a.shape[:-2] + ((m, k) if left_side else (k, m)), label="b")
    flags = data.draw(st.tuples(*[st.booleans()] * 4), label="flags")
    lower, transpose_a, conjugate_a, unit_diagonal = flags
    return (lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
        conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)), (a, b)


@case("lu", covers=("lu", "lu_pivots_to_permutation"))
def _(data):
    x = draw_matrices(data, INEXACT, square=False)

    def f(x):
        lu, pivots, perm = lax.linalg.lu(x)
        return lu, perm, lax.linalg.lu_pivots_to_permutation(pivots, x.shape[-2])

    return f, (x,)


@case("qr")
def _(data):
    x = draw_matrices(data, INEXACT, square=False)
    full = data.draw(st.booleans(), label="full_matrices")
    return (lambda x: lax.linalg.qr(x, full_matrices=full)), (x,)


@case("geqrf", covers=("geqrf", "householder_product", "ormqr"))
def _(data):
    x = draw_matrices(data, INEXACT, square=False)
    *batch, m, n = x.shape
    left, transpose = data.draw(st.booleans(), label="left"), data.draw(st.booleans(),
                                                                        label="transpose")
    k = data.draw(st.integers(0, 3), label="k")
    c = draw_array(data, x.dtype, (*batch, m, k) if left else (*batch, k, m), label="c")

    def f(x, c):
        a, taus = linalg_internal.geqrf(x)
        out = [a, taus, lax.linalg.ormqr(a, taus, c, left=left, transpose=transpose)]
        if m >= n:
            out.append(lax.linalg.householder_product(a, taus))
        return out

    return f, (x, c)


@case("geqp3")
def _(data):
    x = draw_matrices(data, INEXACT, square=False)
    jpvt = draw_array(data, I32, x.shape[:-2] + x.shape[-1:], lo=0, hi=1, label="jpvt")
    return linalg_internal.geqp3, (x, jpvt)


@case("eigh")
def _(data):
    x = draw_matrices(data, INEXACT)
    lower = data.draw(st.booleans(), label="lower")
    return (lambda x: lax.linalg.eigh(x, lower=lower)), (x,)


@case("hessenberg")
def _(data):
    return lax.linalg.hessenberg, (draw_matrices(data, INEXACT),)


@case("schur")
def _(data):
    return lax.linalg.schur, (draw_matrices(data, FLOAT),)


@case("tridiagonal")
def _(data):
    x = draw_matrices(data, INEXACT)
    lower = data.draw(st.booleans(), label="lower")
    return (lambda x: lax.linalg.tridiagonal(x, lower=lower)), (x,)


@case("tridiagonal_solve")
def _(data):
    dtype = draw_dtype(data, FLOAT)
    n = data.draw(st.integers(1, 4), label="n")
    k = data.draw(st.integers(1, 3), label="columns")
    dl, du = draw_array(data, dtype, (n,)), draw_array(data, dtype, (n,))
    d = draw_array(data, dtype, (n,)) + dtype.type(4)
    return lax.linalg.tridiagonal_solve, (dl, d, du, draw_array(data, dtype, (n, k)))


@case("cholesky_update")
def _(data):
    dtype = draw_dtype(data, FLOAT)
    n = data.draw(st.integers(1, 4), label="n")
    m = draw_array(data, dtype, (n, n))
    r = np.linalg.cholesky(m @ m.T + n * np.eye(n, dtype=dtype)).T.astype(dtype)
    return lax.linalg.cholesky_update, (r, draw_array(data, dtype, (n,)))


@case("symmetric_product")
def _(data):
    dtype = draw_dtype(data, FLOAT)
    m, k = data.draw(st.integers(1, 4), label="m"), data.draw(st.integers(1, 4), label="k")
    a, c = draw_array(data, dtype, (m, k)), draw_array(data, dtype, (m, m))
    return (lambda a, c: lax.linalg.symmetric_product(a, c, alpha=1.5, beta=0.5)), (a, c)


@case("svd")
def _(data):
    x = draw_matrices(data, INEXACT, square=False)
    full, uv = data.draw(st.booleans(), label="full"), data.draw(st.booleans(), label="uv")
    return (lambda x: lax.linalg.svd(x, full_matrices=full, compute_uv=uv)), (x,)


@case("eig")
def _(data):
    x = draw_matrices(data, INEXACT)
    vectors = data.draw(st.booleans(), label="vectors")
    return (lambda x: lax.linalg.eig(x, compute_right_eigenvectors=vectors)), (x,)


@case("bitcast_convert_type")
def _(data):
    src, dst = data.draw(st.sampled_from([(F32, I32), (I32, F32), (F64, U32), (U32, F32),
                                          (F32, np.dtype("uint8"))]), label="dtypes")
    x = draw_array(data, src, draw_shape(data) + ((2,) if (src, dst) == (U32, F32) else ()))
    if (src, dst) == (U32, F32):  # two uint32s make no float32: bitcast one at a time
        return (lambda x: lax.bitcast_convert_type(x, dst)), (x[..., 0],)
    return (lambda x: lax.bitcast_convert_type(x, dst)), (x,)


@case("name")
def _(data):
    x = draw_array(data, draw_dtype(data, FLOAT), draw_shape(data))
    return (lambda x: checkpoint_name(x * 2.0, "doubled") + 1.0), (x,)


@case("custom_linear_solve")
def _(data):
    dtype = draw_dtype(data, FLOAT)
    n = data.draw(st.integers(1, 4), label="n")
    a = (np.eye(n) * 4 + draw_array(data, dtype, (n, n), -1.0, 1.0, label="a")).astype(dtype)
    b = draw_array(data, dtype, (n,), label="b")
    return (lambda a, b: lax.custom_linear_solve(
        lambda v: a @ v, b, lambda mv, r: jnp.linalg.solve(a, r))), (a, b)


@case("random_gamma")
def _(data):
    a = draw_array(data, draw_dtype(data, FLOAT), draw_shape(data), 0.25, 20.0)
    seed = data.draw(st.integers(0, 2 ** 31 - 1), label="seed")
    return (lambda a: jrandom.gamma(jrandom.key(seed), a)), (a,)


# --------------------------------------------------------------------------------------
# FFT (lax.fft): every type over 1 to 3 trailing axes, batch dimensions possibly empty


@case("fft")
def _(data):
    fft_type = data.draw(st.sampled_from(list(lax.FftType)), label="fft_type")
    lengths = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3),
                              label="fft_lengths"))
    batch = draw_shape(data, max_dims=2)
    shape = lengths
    if fft_type == lax.FftType.IRFFT:
        shape = lengths[:-1] + (lengths[-1] // 2 + 1,)
    dtypes = REAL if fft_type == lax.FftType.RFFT else NUM
    x = draw_array(data, draw_dtype(data, dtypes), batch + shape)
    return (lambda x: lax.fft(x, fft_type, lengths)), (x,)


# --------------------------------------------------------------------------------------
# Incomplete gamma and beta functions (lax/incomplete.py): jit calls their NumPy impl


for _name in ("igamma", "igammac", "igamma_grad_a", "random_gamma_grad"):
    binary(_name, FLOAT, lo=-1.0, hi=30.0)


@case("regularized_incomplete_beta")
def _(data):
    dtype = draw_dtype(data, FLOAT)
    shape = draw_shape(data)
    a, b = (draw_array(data, dtype, shape, -0.5, 20.0, specials=True, label=n) for n in "ab")
    return lax.betainc, (a, b, draw_array(data, dtype, shape, -0.25, 1.25, specials=True))


# --------------------------------------------------------------------------------------
# Primitives of JAX's lax names (lax/barrier.py, array_copy.py, precision.py, rng.py,
# stacking.py, approx_top_k.py, dimension_comparisons.py)

unary("optimization_barrier", ANY, lax.optimization_barrier)
unary("copy", ANY, lax.copy_p.bind)
_ONE_DEVICE = jax.sharding.NamedSharding(jax.make_mesh((1,), ("x",)), jax.P("x"))
unary("sharding_constraint", ANY, lambda x: lax.sharding_constraint_p.bind(
    x, sharding=_ONE_DEVICE, layout=None, unconstrained_dims=frozenset()))
unary("device_put", ANY, lambda x: lax.device_put_p.bind(
    x, devices=(jax.devices()[0],), srcs=(None,),
    copy_semantics=(_device_put.ArrayCopySemantics.REUSE_INPUT,))[0])
binary("zeta", FLOAT, lo=1.0, hi=6.0, y_lo=-3.0, y_hi=4.0)
unary("reduce_precision", FLOAT, lambda x: lax.reduce_precision(x, 5, 2))
for _name in ("eq_to", "le_to", "lt_to"):
    binary(_name, REAL, getattr(lax, f"{_name}_p").bind)


@case("rng_bit_generator")
def _(data):
    algorithm = data.draw(st.sampled_from(list(lax.RandomAlgorithm)), label="algorithm")
    dtype = draw_dtype(data, (np.dtype("uint8"), np.dtype("uint16"), U32))
    shape = draw_shape(data)
    key = draw_array(data, U32, (4,), 0, 2**32 - 1)
    return (lambda k: lax.rng_bit_generator(k, shape, dtype, algorithm)), (key,)


@case("tile")
def _(data):
    s = draw_shape(data)
    reps = tuple(data.draw(st.integers(0, 3), label="rep") for _ in s)
    return (lambda x: lax.tile_p.bind(x, reps=reps)), (draw_array(data, draw_dtype(data, ANY),
                                                                  s),)


@case("stack", covers=("stack", "unstack"))
def _(data):
    s = draw_shape(data)
    axis = data.draw(st.integers(0, len(s)), label="axis")
    dtype = draw_dtype(data, ANY)
    a, b = (draw_array(data, dtype, s, label=n) for n in "ab")
    return (lambda a, b: lax.unstack_p.bind(lax.stack_p.bind(a, b, a, axis=axis), axis=axis)
            + [lax.stack_p.bind(b, a, axis=axis)]), (a, b)


@case("approx_top_k")
def _(data):
    s = draw_shape(data, min_dims=1, min_side=1)
    dim = data.draw(st.integers(-len(s), len(s) - 1), label="dim")
    k = data.draw(st.integers(1, s[dim]), label="k")
    is_max = data.draw(st.booleans(), label="is_max")
    x = draw_array(data, draw_dtype(data, FLOAT), s, specials=True)
    return (lambda x: lax.approx_top_k_p.bind(
        x, k=k, reduction_dimension=dim, recall_target=0.95, is_max_k=is_max,
        reduction_input_size_override=-1, aggregate_to_topk=True)), (x,)


# --------------------------------------------------------------------------------------
# Every primitive has a case


EXEMPT: dict[str, str] = {
    # primitive name -> why no jit case can reach it (none so far: every primitive has one)
}

# --- Collectives over named axes (lax/parallel.py) ---
# A collective exists only inside a vmap or pmap naming its axis. A vmap resolves it while
# tracing (into reductions, slices, transposes...); a pmap's shards run it compiled, among
# each other, which needs the pmap around it. jit(vmap(f)), vmap(jit(f)) and their gradients
# are compared with eager values in tests/_src/lax/test_parallel.py, pmap's compiled shards
# with vmap's values in tests/_src/test_pmap.py.
_COLLECTIVE_REASON = ("resolved by the vmap naming its axis before jit compiles, or run by "
                      "a pmap's shards: tested in tests/_src/lax/test_parallel.py and "
                      "tests/_src/parallel/test_pmap.py")
EXEMPT.update({name: _COLLECTIVE_REASON for name in (
    "psum", "pmax", "pmin", "axis_index", "all_gather", "reduce_scatter", "ppermute",
    "all_to_all")})
EXEMPT["ragged_all_to_all"] = (
    "resolved by the vmap naming its axis before jit compiles, or run by a pmap's shards: "
    "jit(vmap(f)) and pmap in tests/_src/lax/test_parallel_extras.py")
# --- end of collectives ---

EXEMPT.update({
    "stage": "never staged (bound on a traced value it returns it, as JAX's): "
             "tests/_src/lax/test_primitive_exports.py (jit through stage_p.bind)",
    "create_token": "makes a token, not an array: tokens through jit in "
                    "tests/_src/lax/test_primitive_exports.py",
    "after_all": "takes and makes tokens, not arrays: tokens through jit in "
                 "tests/_src/lax/test_primitive_exports.py",
})
EXEMPT.update({
    "rng_uniform": "draws from a hidden state, so jit and eager draw different values: "
                   "tests/_src/lax/test_rng.py (types, range, two draws under jit)",
    "dce_sink": "an effect with no value: tests/_src/lax/test_dce_sink.py (kept under jit)",
})

# The equations of an eager vjp's linear jaxpr, each a primitive's linearization built once
# per signature (eager/vjp.py): jit never stages them, since they exist only while an eager
# vjp runs; tested against the general path in tests/_src/eager.
EXEMPT.update({name: "staged only by an eager vjp, never by jit: tested in "
                     "tests/_src/eager/test_vjp.py"
               for name in ("linearized", "linearized_n")})

# The sparse primitives: jit against eager on every layout in their own tests.
EXEMPT.update({name: "sparse (BCOO) primitive: jit against eager on every layout in "
                     "tests/_src/sparse/test_sparse_primitives.py"
               for name in ("bcoo_todense", "bcoo_extract", "bcoo_fromdense", "bcoo_dot_general",
                            "bcoo_dot_general_transpose_data")})
EXEMPT.update({name: "sparse primitive: jit against eager in the tests of tests/_src/sparse/"
               for name in ("bcsr_todense", "bcsr_extract", "bcsr_fromdense", "bcsr_dot_general",
                            "todense", "bcoo_transpose", "bcoo_sort_indices",
                            "bcoo_sum_duplicates", "bcoo_spdot_general",
                            "bcoo_dot_general_sampled", "coo_todense", "coo_fromdense",
                            "coo_matvec", "coo_matmat", "csr_todense", "csr_fromdense",
                            "csr_matvec", "csr_matmat")})

# Primitives whose results are effects, not values: compared by their own tests below.
# Covered by their own jit tests (tests/_src/transforms/test_jit.py,
# tests/_src/primitives/test_callback.py, tests/jax_libraries/test_jax_extension_points.py;
# and for pmap, which maps a compiled jaxpr over devices, tests/_src/parallel/test_pmap.py).
COVERED_BY_TESTS = {"debug_callback", "debug_print", "pure_callback", "io_callback", "check",
                    "pmap"}


def test_every_primitive_has_a_case_or_an_exemption():
    covered = {p for c in CASES for p in c.covers} | COVERED_BY_TESTS
    missing = sorted(set(core.all_primitives) - covered - set(EXEMPT))
    assert not missing, f"primitives without a jit-vs-eager case: {missing}"
    assert not set(EXEMPT) & covered, "a primitive is both exempt and covered"
    assert set(EXEMPT) <= set(core.all_primitives), "exemption of an unknown primitive"
    assert all(EXEMPT.values()), "every exemption needs a reason"
    unknown = sorted(covered - set(core.all_primitives))
    assert not unknown, f"cases name primitives that do not exist: {unknown}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_jit_matches_eager(case):
    applied: set = set()

    @EXAMPLES
    @given(data=st.data())
    def run(data):
        fn, args = case.draw(data)
        with enable_x64(needs_x64(args)):
            args = tuple(jnp.asarray(a) for a in args)
            applied.update(check_jit_matches_eager(fn, args))

    run()
    # Some draws are trivial (an identity permutation, an empty index) and bind nothing;
    # across the examples the case must have applied what it claims to test.
    missing = set(case.covers) - applied
    assert not missing, f"no example of the case applied {sorted(missing)}"


# --------------------------------------------------------------------------------------
# Effects: what callbacks receive and what debug.print prints


def draw_float_array(data):
    return draw_array(data, draw_dtype(data, FLOAT), draw_shape(data), specials=True)


def run_recording(fn, args, seen):
    """`fn(*args)` eagerly and jitted; what `seen` recorded in each."""
    seen.clear()
    want = fn(*args)
    eager = list(seen)
    seen.clear()
    got = jax.jit(fn)(*args)
    assert_same(got, want)
    return eager, list(seen)


@EXAMPLES
@given(data=st.data())
def test_debug_callback_receives_what_eager_evaluation_passes(data):
    seen = []

    def record(a, s, n):
        seen.append([(np.asarray(v).copy(), v.dtype, v.shape) for v in (a, s, n)])

    def f(x):
        y = jnp.sin(x) * 2
        jdebug.callback(record, y, jnp.sum(y), jnp.int32(x.ndim))
        return y + 1

    x = draw_float_array(data)
    with enable_x64(needs_x64([x])):
        eager, jitted = run_recording(f, (jnp.asarray(x),), seen)
    assert len(eager) == len(jitted) == 1
    for (g, g_dtype, g_shape), (w, w_dtype, w_shape) in zip(jitted[0], eager[0]):
        assert (g_dtype, g_shape) == (w_dtype, w_shape)
        assert_close_ulp(g, w, "callback argument")


@EXAMPLES
@given(data=st.data())
def test_debug_print_prints_what_eager_evaluation_prints(data):
    import contextlib
    import io

    def f(x):
        y = jnp.cos(x)
        jdebug.print("y={y} total={t}", y=y, t=jnp.sum(x))
        return y

    x = jnp.asarray(draw_float_array(data).astype(np.float32))
    outputs = []
    for fn in (f, jax.jit(f)):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            fn(x)
        outputs.append(buf.getvalue())
    assert outputs[0] == outputs[1] and outputs[0].startswith("y=")


# --------------------------------------------------------------------------------------
# The code generator: buffers, numpy scalars, strides, aliasing


def test_reused_buffers_do_not_clobber_live_values():
    def f(x):
        y = x * 2
        z = y + 1
        return y, z * y

    x = jnp.arange(6.0).reshape(2, 3)
    check_jit_matches_eager(f, (x,))
    y, zy = jax.jit(f)(x)
    np.testing.assert_array_equal(np.asarray(y), np.arange(6.0).reshape(2, 3) * 2)


def test_a_value_used_after_a_dead_neighbour_keeps_its_buffer():
    def f(x, w):
        a = jnp.sin(x)        # dies at d
        b = a * w             # lives to the end
        c = jnp.exp(b)        # dies at d: its buffer may go to d
        d = a + c
        e = d * 3.0           # may write into d's buffer
        return b, e, b + e

    check_jit_matches_eager(f, (jnp.linspace(-1, 1, 8), jnp.linspace(2, 3, 8)))


OPS = {
    "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "max": jnp.maximum,
    "sin": jnp.sin, "tanh": jnp.tanh, "square": jnp.square, "neg": jnp.negative,
    "sum": lambda x: jnp.sum(x) + x,
    "transpose_back": lambda x: x.T.T, "reshape_back": lambda x: x.reshape(-1).reshape(x.shape),
    "scale": lambda x: x * 0.5,
}


@settings(max_examples=40, deadline=None)
@given(program=st.lists(st.tuples(st.sampled_from(sorted(OPS)), st.integers(0, 99),
                                  st.integers(0, 99)), min_size=1, max_size=12),
       outs=st.lists(st.integers(0, 99), min_size=1, max_size=4),
       shape=st.sampled_from([(), (3,), (2, 3)]))
def test_random_elementwise_programs(program, outs, shape):
    """Random dataflow graphs over a few inputs: whatever the lifetimes, buffer reuse
    must give every value its own contents."""
    def f(x, y):
        vals = [x, y]
        for name, i, j in program:
            op = OPS[name]
            a = vals[i % len(vals)]
            nargs = 2 if name in ("add", "sub", "mul", "max") else 1
            vals.append(op(a, vals[j % len(vals)]) if nargs == 2 else op(a))
        return [vals[k % len(vals)] for k in outs]

    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-1, 1, shape).astype(np.float32))
    y = jnp.asarray(rng.uniform(-1, 1, shape).astype(np.float32))
    check_jit_matches_eager(f, (x, y))


def test_zero_d_intermediates_flow_through_generated_code():
    def f(x, i):
        s = jnp.sum(x)                   # 0-d: a numpy scalar in the generated code
        m = jnp.max(x) * s + 1.0
        e = x[i]                         # 0-d from a dynamic index
        t = jnp.tanh(m) * e - jnp.sqrt(jnp.abs(s))
        return t, x * t + s, (t > 0).astype(jnp.int32), jnp.reshape(t, (1, 1))

    check_jit_matches_eager(f, (jnp.linspace(-1.0, 2.0, 5), jnp.int32(3)))
    check_jit_matches_eager(lambda s: (s * 2, jnp.sin(s) + s, s.reshape(()).T),
                            (jnp.float32(0.25),))


def test_zero_d_arrays_in_control_flow():
    def f(x, n):
        c = lax.fori_loop(0, n, lambda i, c: c * 1.5 + jnp.float32(i), x)
        y = lax.cond(c > 1, lambda c: c - 1, lambda c: c + 1, c)
        carry, ys = lax.scan(lambda c, t: (c + t, c * t), y, jnp.arange(3.0))
        return carry, ys

    check_jit_matches_eager(f, (jnp.float32(0.5), jnp.int32(4)))


@pytest.mark.parametrize("view", ["transposed", "strided", "reversed", "broadcast"])
def test_non_contiguous_inputs(view):
    base = np.arange(24, dtype=np.float32).reshape(4, 6) / 7
    x = {"transposed": base.T, "strided": base[::2, 1::2], "reversed": base[::-1, ::-2],
         "broadcast": np.broadcast_to(base[:1], (4, 6))}[view]
    assert not x.flags.c_contiguous

    def f(x, y):
        return jnp.sin(x) * 2 + y, x @ jnp.ones((x.shape[1], 2)), x.T, x.reshape(-1)

    for arg in (x, core.Array(x)):  # a NumPy view, and an Array holding one
        y = np.ones(x.shape, np.float32)
        check_jit_matches_eager(f, (arg, y))


def test_outputs_may_alias_inputs():
    fns = [
        lambda x, y: x,
        lambda x, y: (x, x),
        lambda x, y: (y, x, y),
        lambda x, y: (x, x * 2 + 1, x),
        lambda x, y: (x.reshape(-1), x.T, x + y),
        lambda x, y: (lax.stop_gradient(x), jnp.asarray(y, jnp.float32)),
    ]
    for f in fns:
        x = jnp.arange(6.0).reshape(2, 3)
        y = jnp.ones((2, 3))
        check_jit_matches_eager(f, (x, y))
        jitted = jax.jit(f)
        first = snapshot(jitted(x, y))
        outs = jitted(x, y)
        jitted(x + 10, y - 10)  # a later call must not write into earlier outputs
        for a, b in zip(first, snapshot(outs)):
            np.testing.assert_array_equal(a, b)


WEAK_CASES = {
    "mul": (lambda x: x * 2, (1.5,)),
    "sin": (lambda x: jnp.sin(x) + 1, (2.0,)),
    "int and float": (lambda x, y: (x + y, x * y, jnp.asarray(x) + y), (3, 4.5)),
    "where": (lambda x: jnp.where(x > 0, x, 0.5), (-1.0,)),
    "cond": (lambda x: lax.cond(x > 0, lambda: x, lambda: -x), (0.75,)),
    "scan": (lambda x: lax.scan(lambda c, _: (c * 2, c), x, None, length=2), (1.25,)),
    "while": (lambda x: lax.while_loop(lambda c: c < 10, lambda c: c * 3, x), (1.0,)),
    "full_like": (lambda x: (jnp.zeros_like(x), jnp.full_like(x, 2)), (0.5,)),
}


def test_constants_and_literals_as_outputs():
    def f(x):
        return 1.0, 2, True, np.arange(3), np.float32(0.5), jnp.ones(2), x, x * 0.1, 3 - x

    check_jit_matches_eager(f, (jnp.float32(0.25),))
    check_jit_matches_eager(f, (jnp.arange(3.0),))


@pytest.mark.parametrize("name", sorted(WEAK_CASES))
def test_weakly_typed_python_scalars(name):
    f, args = WEAK_CASES[name]
    check_jit_matches_eager(f, args)
    check_jit_matches_eager(f, tuple(jnp.asarray(v) for v in args))


SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0]


@pytest.mark.parametrize("reduce,dtype", [
    ("reduce_sum", F32), ("reduce_prod", F32), ("reduce_max", F32), ("reduce_min", F32),
    ("reduce_sum", C64), ("reduce_prod", C64),
], ids=lambda v: str(v))
def test_reductions_of_special_values(reduce, dtype):
    """Reducing over no axes or over one element is the identity, nans and all."""
    values = np.array(SPECIAL, np.float32)
    if dtype == C64:
        values = (values[:, None] + 1j * values[None, :]).astype(C64).reshape(-1)
    fn = getattr(lax, reduce)
    x = jnp.asarray(values)
    check_jit_matches_eager(lambda x: (fn(x, ()), fn(x[:, None], (1,)), fn(x, (0,))), (x,))
    for v in values:  # 0-d operands
        check_jit_matches_eager(lambda x: fn(x, ()), (jnp.asarray(v),))


def test_integer_powers_of_complex_numbers():
    parts = np.array([2.0507212e-05, -1.1, 3.3, 0.0, 17.0], np.float32)
    x = jnp.asarray((parts[:, None] + 1j * parts[None, :]).astype(C64).reshape(-1))
    for y in range(-2, 6):
        check_jit_matches_eager(lambda x, y=y: lax.integer_pow(x, y), (x,))


def test_x64_values_keep_their_precision():
    with enable_x64():
        x = jnp.asarray(np.linspace(0.1, 1.0, 7))
        check_jit_matches_eager(lambda x: (jnp.exp(x) - 1 - x, jnp.sum(x) / 3, x.astype(
            jnp.float32), jnp.arange(3)), (x,))
        assert jax.jit(lambda x: x * 1.0)(x).dtype == np.float64
