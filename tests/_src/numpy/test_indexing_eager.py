"""Eager indexing by NumPy (`didax/_src/numpy/eager_indexing.py`): `x[idx]`, `x.at[idx].<op>(y)`
and `jnp.take` on concrete arrays outside transformations give what the primitives give bit
for bit (values, dtype, shape, weak type), what jit gives, and what JAX 0.10.2 gives; they
raise JAX's exception types; they never mutate nor alias their inputs; they bind no
primitive where NumPy answers; and transformations still bind gather, scatter and slices."""
import contextlib

import jax
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest
from jax._src.lax import lax as jax_lax_internal

import didax
import didax.numpy as jnp
from didax._src import caches, core
from didax._src.config import enable_x64
from didax._src.numpy import eager_indexing

BF16 = np.dtype(ml_dtypes.bfloat16)
# (dtype, weak): the operand types drawn
DTYPES = [(np.float32, False), (np.float32, True), (np.int32, False), (np.int32, True),
          (np.bool_, False), (np.uint8, False), (np.float16, False), (BF16, False),
          (np.complex64, False)]
SHAPES = [(5,), (4, 6), (3, 4, 5), (2, 3, 4, 2), (1, 3)]
OPS = ["set", "add", "subtract", "multiply", "min", "max", "get"]


# --------------------------------------------------------------------------------------
# Paths and comparisons


@contextlib.contextmanager
def general_path():
    """The primitives' path: every eager fast path declines (it sees another interpreter)."""
    saved = eager_indexing._eval
    eager_indexing._eval = object()
    try:
        yield
    finally:
        eager_indexing._eval = saved


@contextlib.contextmanager
def count_binds():
    """The names of the primitives bound inside the block."""
    bound = []
    original = core.Primitive.bind

    def bind(self, *args, **params):
        bound.append(self.name)
        return original(self, *args, **params)

    core.Primitive.bind = bind
    try:
        yield bound
    finally:
        core.Primitive.bind = original


def outcome(fn):
    """(result, None) or (None, the exception)."""
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001
        return None, e


def assert_same_bits(got, want, what=""):
    assert type(got) is core.Array, (what, type(got))
    assert (got.dtype, got.shape, got.weak_type) == (want.dtype, want.shape, want.weak_type), (
        what, got.aval, core.get_aval(want))
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (what, got, want)


def assert_like_jax(got, want, what=""):
    """Same dtype, shape and weak type as JAX's result, and the same values (NaN as NaN)."""
    assert np.dtype(got.dtype) == np.dtype(want.dtype), (what, got.dtype, want.dtype)
    assert got.shape == want.shape and got.weak_type == want.weak_type, (
        what, got.aval, want.shape, want.weak_type)
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype == BF16:
        g, w = g.astype(np.float32), w.astype(np.float32)
    np.testing.assert_array_equal(g, w, err_msg=str(what))


def operand(rng, shape, dtype, weak, exact=False):
    """(NumPy value, didax array, JAX array) of one type; `exact`: small multiples of 1/4, so
    sums and products are exact in any order (JAX's scatters may accumulate otherwise)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        value = rng.random(shape) < 0.5
    elif dtype.kind in "iu":
        value = rng.integers(0 if dtype.kind == "u" else -5, 6, shape)
    elif exact:
        value = rng.integers(-8, 9, shape) / 4
    else:
        value = rng.standard_normal(shape) * 3
        if dtype.kind == "c":
            value = value + 1j * rng.standard_normal(shape)
    value = np.asarray(value).astype(dtype)
    ours = core.Array(value.copy(), weak)
    theirs = jjnp.asarray(value)
    if weak:
        theirs = jax_lax_internal._convert_element_type(theirs, weak_type=True)
    assert theirs.weak_type == weak
    return value, ours, theirs


def _each_part(idx, one):
    """`idx` with `one` applied to each of its parts (or to it, if it is not a tuple)."""
    return tuple(one(e) for e in idx) if isinstance(idx, tuple) else one(idx)


def to_jax(idx):
    """The index for JAX: didax arrays become JAX arrays of the same dtype."""
    return _each_part(idx, lambda e: jjnp.asarray(np.asarray(e))
                      if isinstance(e, core.Array) else e)


def to_static(idx):
    """The index for JAX inside `jax_jitted`: didax arrays become NumPy arrays of the same
    dtype, which JAX's indexing reads as concrete values, as it reads arrays eagerly."""
    return _each_part(idx, lambda e: np.asarray(e) if isinstance(e, core.Array) else e)


def jax_jitted(fn, x):
    """JAX's `fn(x)`, its other operands constants: jitted, so that JAX compiles the indexing
    once rather than each primitive it applies (one compilation in place of about five; the
    values, dtypes and weak types are those of the eager call)."""
    return jax.jit(fn)(x)


def to_numpy(idx):
    return _each_part(idx, lambda e: np.asarray(e) if isinstance(e, (core.Array, list)) else e)


def random_index(rng, shape, out_of_bounds=False):
    """An index mixing ints (Python and NumPy, negative too), slices with steps, None,
    Ellipsis, lists and integer arrays (NumPy or didax, several dtypes and shapes, 0-d too);
    `out_of_bounds`: ints and array entries up to twice past either end."""
    entries, axis, used_ellipsis = [], 0, False
    for _ in range(int(rng.integers(1, 5))):
        left = len(shape) - axis
        kinds = ["none"] + ([] if used_ellipsis else ["ellipsis"])
        if left:
            kinds += ["int", "slice", "slice", "array", "array", "list"]
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind == "none":
            entries.append(None)
            continue
        if kind == "ellipsis":
            used_ellipsis = True
            entries.append(Ellipsis)
            axis += int(rng.integers(0, left + 1))
            continue
        n = shape[axis]
        axis += 1
        lo, hi = (-2 * n - 2, 2 * n + 3) if out_of_bounds else (-n, n)
        if kind == "slice":
            start, stop = (None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))
                           for _ in range(2))
            step = [None, 1, 2, 3, -1, -2, -3][int(rng.integers(7))]
            entries.append(slice(start, stop, step))
        elif kind == "int":
            v = int(rng.integers(lo, hi))
            entries.append([v, np.int32(v), np.int64(v)][int(rng.integers(3))])
        elif kind == "list":
            entries.append(rng.integers(lo, hi, int(rng.integers(1, 4))).tolist())
        else:
            ishape = [(), (2,), (3,), (1, 2), (2, 1), (0,), (2, 3)][int(rng.integers(7))]
            dtype = [np.int32, np.int64, np.int8, np.int16, np.uint8][int(rng.integers(5))]
            values = rng.integers(lo, hi, ishape)
            if dtype == np.uint8:
                values = np.abs(values)
            values = values.astype(dtype)
            entries.append(values if rng.random() < 0.5 else core.Array(values))
    if len(entries) == 1 and not isinstance(entries[0], list) and rng.random() < 0.5:
        return entries[0]
    return tuple(entries)


def numpy_shape(value, idx):
    """The shape of NumPy's value[idx] (that of JAX's), or None if NumPy refuses it."""
    try:
        return np.empty_like(value)[to_numpy(idx)].shape
    except (IndexError, ValueError, TypeError):
        return None


# --------------------------------------------------------------------------------------
# x[idx]


def check_getitem(x, jx, idx, *, expect_fast=True):
    with count_binds() as bound:
        got, err = outcome(lambda: x[idx])
    with general_path():
        want, want_err = outcome(lambda: x[idx])
    jax_out, jax_err = outcome(lambda: jax_jitted(lambda a: a[to_static(idx)], jx))
    if want_err is not None:
        assert type(err) is type(want_err), (idx, err, want_err)
        assert jax_err is not None and isinstance(err, type(jax_err)), (idx, err, jax_err)
        return
    assert err is None, (idx, err)
    if expect_fast:
        assert not bound, (idx, bound)  # NumPy answered: no primitive
    assert_same_bits(got, want, idx)
    assert_same_bits(got, didax.jit(lambda a: a[idx])(x), ("jit", idx))
    assert jax_err is None, (idx, jax_err)
    assert_like_jax(got, jax_out, idx)


@pytest.mark.parametrize("seed", range(18))
def test_getitem_random_indices(seed):
    rng = np.random.default_rng(seed)
    shape = SHAPES[seed % len(SHAPES)]
    dtype, weak = DTYPES[seed % len(DTYPES)]
    _, x, jx = operand(rng, shape, dtype, weak)
    for _ in range(6):
        check_getitem(x, jx, random_index(rng, shape, out_of_bounds=rng.random() < 0.3))


EXAMPLES = [
    7, -1, -10, 0, np.int32(3), np.int64(-2), np.uint8(4),
    slice(None), slice(2, 7), slice(None, None, -1), slice(8, 1, -3), slice(-3, None, 2),
    slice(100, -100, -1), slice(-100, 100, 7), slice(5, 2), None, Ellipsis, (),
    (None, Ellipsis, None), (3, 4), (-1, -1), (slice(None), 3), (Ellipsis, -2), (2, None, 1),
    (slice(1, 9, 2), slice(None, None, -2)), (None, slice(3, 5), None, 0),
    # integer arrays, lists, and them mixed with basic entries
    np.array([0, 9, -10, 3]), np.array([[1, -1], [2, -2]]), np.array(4), np.array([], np.int32),
    (np.array([1, 2]), np.array([3, 4])), (np.array([[0], [1]]), np.array([2, 3, 4])),
    (slice(None), [0, 2, -1]), ([1, 2], Ellipsis, None), (0, slice(None), [1, 1]),
    (np.array([1, 2]), None, np.array([0, -1])), (None, np.array([1]), slice(2, 4)),
    # out of bounds: static ints and array entries clamp
    10, -11, 2**31 - 1, -(2**31), (0, 100), (slice(None), -50),
    np.array([10, -11, -20, 25]), (np.array([1, 12]), np.array([-30, 1])),
    (np.array([5, 6]), 7), np.array([2**32 + 1, 2**33 + 4], np.int64),
    np.array([250, 3], np.uint8), np.array([-128, 127], np.int8), np.int64(2**40 + 2),
]


def test_int64_indices_past_int32_wrap_first():
    """Without x64 an int64 NumPy index converts to int32 (wrapping) before negative indices
    wrap, as the primitives' path does (JAX wraps negative int64 values first: the two
    differ only for negative values past int32, e.g. -2**33 + 4)."""
    x = jnp.arange(80.0).reshape(10, 8)
    idx = np.array([2**32 + 1, -(2**33) + 4, -(2**33) - 3, 2**40 + 12])
    with general_path():
        want = x[idx], x.at[idx].add(1.0), jnp.take(x, idx, axis=0)
    got = x[idx], x.at[idx].add(1.0), jnp.take(x, idx, axis=0)
    for g, w in zip(got, want):
        assert_same_bits(g, w)
    np.testing.assert_array_equal(got[0][:, 0], [8.0, 32.0, 56.0, 72.0])


@pytest.mark.parametrize("idx", EXAMPLES, ids=repr)
@pytest.mark.parametrize("as_array", [False, True], ids=["numpy_index", "array_index"])
def test_getitem_examples(idx, as_array):
    rng = np.random.default_rng(0)
    _, x, jx = operand(rng, (10, 8), np.float32, False)
    if as_array:  # NumPy index arrays as didax arrays
        def convert(e):
            return core.Array(e) if type(e) is np.ndarray else e
        idx = tuple(map(convert, idx)) if isinstance(idx, tuple) else convert(idx)
    check_getitem(x, jx, idx)


@pytest.mark.parametrize("dtype, weak", DTYPES, ids=str)
def test_getitem_dtypes_and_weak_types(dtype, weak):
    rng = np.random.default_rng(1)
    _, x, jx = operand(rng, (4, 6), dtype, weak)
    for idx in [1, (slice(None), 2), (np.array([3, -1, 9]),), (Ellipsis, None, -1), ()]:
        check_getitem(x, jx, idx)
    _, s, js = operand(rng, (), dtype, weak)
    for idx in [(), None, Ellipsis, (None, Ellipsis)]:
        check_getitem(s, js, idx)


def test_zero_size_operands():
    rng = np.random.default_rng(2)
    _, x, jx = operand(rng, (0, 3), np.float32, False)
    for idx in [slice(None), (slice(None), 1), (Ellipsis, None), np.array([], np.int32), 0,
                (slice(None), np.array([0, 2]))]:
        check_getitem(x, jx, idx)


def test_boolean_and_float_indices_take_the_general_path():
    rng = np.random.default_rng(3)
    _, x, jx = operand(rng, (4, 5), np.float32, False)
    mask = np.array([True, False, True, True])
    for idx in [mask, core.Array(mask), (slice(None), np.array([1, 0, 1, 0, 1], bool)), True,
                (0, False)]:
        check_getitem(x, jx, idx, expect_fast=False)


# --------------------------------------------------------------------------------------
# x.at[idx].<op>(y)


def check_update(x, jx, idx, op, y, jy, *, expect_fast=None):
    """`expect_fast`: assert no primitive was bound (True) or some were (False)."""
    def run(a, v, index=idx):
        ref = a.at[index]
        return ref.get() if op == "get" else getattr(ref, op)(v)

    before = np.asarray(x).copy()
    y_before = np.array(y, copy=True) if isinstance(y, np.ndarray) else None
    with count_binds() as bound:
        got, err = outcome(lambda: run(x, y))
    with general_path():
        want, want_err = outcome(lambda: run(x, y))
    assert np.asarray(x).tobytes() == before.tobytes()  # the operand is never written
    if y_before is not None:
        assert y.tobytes() == y_before.tobytes()
    what = (idx, op, type(y).__name__)
    if want_err is not None:
        assert type(err) is type(want_err), (what, err, want_err)
        return
    assert err is None, (what, err)
    if expect_fast is not None:
        assert (not bound) == expect_fast, (what, bound)
    assert_same_bits(got, want, what)
    if isinstance(y, np.ndarray):
        assert not np.shares_memory(got._value, y)
    if op != "get" and got is not x:  # (the primitives' path returns x for an empty target)
        assert not np.shares_memory(got._value, x._value)
    assert_same_bits(got, didax.jit(lambda a: run(a, y))(x), ("jit",) + what)
    if jy is not None:
        jax_out, jax_err = outcome(lambda: jax_jitted(lambda a: run(a, jy, to_static(idx)), jx))
        assert jax_err is None, (what, jax_err)
        assert_like_jax(got, jax_out, what)


def _values(rng, shape, dtype, weak, kind):
    """(ours, JAX's) values of an update of `shape`: an array (didax or NumPy), a 0-d array,
    a Python scalar, or values broadcast along the leading axis."""
    if kind == "python":
        v = operand(rng, (), dtype, False, exact=True)[0].item()
        if np.dtype(dtype) == BF16 or np.dtype(dtype) == np.float16:
            v = float(v)
        return v, v
    if kind == "trailing" and shape:
        shape = shape[1:]
    if kind == "scalar_array":
        shape = ()
    value, ours, theirs = operand(rng, shape, dtype, False, exact=True)
    if kind == "numpy":
        return value, value
    return ours, theirs


@pytest.mark.parametrize("seed", range(18))
def test_updates_random_indices(seed):
    """Each drawn index with four of the seven methods, values of each form in turn."""
    rng = np.random.default_rng(100 + seed)
    shape = SHAPES[seed % len(SHAPES)]
    dtype, weak = DTYPES[seed % len(DTYPES)]
    value, x, jx = operand(rng, shape, dtype, weak, exact=True)
    checked = 0
    while checked < 4:
        idx = random_index(rng, shape, out_of_bounds=rng.random() < 0.4)
        target = numpy_shape(value, idx)
        if target is None:
            continue
        checked += 1
        for op in rng.permutation(OPS)[:4]:
            op = str(op)
            kind = ["array", "numpy", "python", "trailing", "scalar_array"][
                int(rng.integers(5))]
            if op == "subtract" and kind == "python":
                kind = "array"  # (a Python bool or int negated first: the general path
                # differs from JAX there, see test_subtract_python_scalars_general_path)
            y, jy = _values(rng, target, dtype, weak, kind)
            if op in ("add", "subtract", "multiply") and np.dtype(dtype) == np.bool_:
                jy = None  # (JAX refuses these; the general path too: checked, raising)
            check_update(x, jx, idx, op, y, jy)


def test_update_duplicates_apply_in_order():
    """Repeated indices: `set` keeps the last, `add` accumulates in the index order (floats
    whose sum depends on the order), as the scatter primitives do."""
    rng = np.random.default_rng(4)
    x = core.Array(rng.standard_normal((6, 5)).astype(np.float32))
    idx = np.array([1, 4, 1, -5, 1, 4, 1])
    y = core.Array((rng.standard_normal((7, 5)) * 1e7).astype(np.float32))
    for op in ["set", "add", "subtract", "multiply", "min", "max"]:
        check_update(x, None, idx, op, y, None, expect_fast=True)
        check_update(x, None, (idx, slice(1, 4)), op, y[:, 1:4], None, expect_fast=True)
        check_update(x, None, (slice(None), idx[:, None] % 5), op,
                     core.Array(np.ones((6, 7, 1), np.float32)), None, expect_fast=True)
    jx = jjnp.asarray(np.asarray(x))
    got = x.at[idx].set(y)
    want = jx.at[jjnp.asarray(idx)].set(jjnp.asarray(np.asarray(y)))  # JAX: the last wins
    assert_like_jax(got, want)


def test_update_values_broadcast_against_multidimensional_indices():
    """NumPy 2.4's `ufunc.at` reads wrong values when it broadcasts the values against a
    multidimensional index itself: the eager path broadcasts them first."""
    x = core.Array(np.zeros(5, np.int32))
    idx = (Ellipsis, np.array([[3, 1, 2], [4, 3, 4]], np.uint8))
    y = core.Array(np.array([1, 10, 100], np.int32))
    for op in ["set", "add", "subtract", "multiply", "min", "max"]:
        check_update(x, None, idx, op, y, None, expect_fast=True)
    np.testing.assert_array_equal(x.at[idx].add(y), [0, 10, 100, 11, 101])


def test_update_min_max_nan_and_signed_zeros():
    x = core.Array(np.array([[0.0, -0.0, np.nan, 1.0]] * 3, np.float32))
    y = core.Array(np.array([[-0.0, 0.0, 2.0, np.nan], [0.0, -0.0, np.nan, -1.0]], np.float32))
    for op in ["min", "max"]:
        for idx in [np.array([1, 1]), np.array([0, 2]), (np.array([2, 2]), slice(None))]:
            check_update(x, None, idx, op, y, None, expect_fast=True)
        check_update(x, None, 1, op, y[0], None, expect_fast=True)
        check_update(x, None, (slice(None), 0), op, -0.0, None, expect_fast=True)


@pytest.mark.parametrize("mode", ["normal", "out_of_bounds"])
def test_update_benchmark_shapes(mode):
    """The benchmark's X.at[idx].set(v) and friends: NumPy answers, out-of-bounds updates are
    dropped."""
    rng = np.random.default_rng(5)
    value, x, jx = operand(rng, (1438, 64), np.float32, False, exact=True)
    idx = rng.integers(0, 1438, 32).astype(np.int32)
    if mode == "out_of_bounds":
        idx[::3] = [1438, -1439, 5000, -1, 2000, 1437, -3000, 1438, 7, 10**6, -1438][:11]
    vi = core.Array(idx)
    _, y, jy = operand(rng, (32, 64), np.float32, False, exact=True)
    for op in OPS:
        check_update(x, jx, vi, op, y, jy, expect_fast=True)
    for op in ["set", "add"]:
        check_update(x, jx, (vi, 3), op, y[:, 0], jy[:, 0], expect_fast=True)
        check_update(x, jx, (slice(None), vi % 64), op, 1.5, 1.5, expect_fast=True)


def test_update_values_that_promote_take_the_general_path():
    """Values the general path promotes with the operand (a wider or other-kind dtype, a
    Python float into integers...) keep that path, and its numbers."""
    rng = np.random.default_rng(6)
    idx = np.array([0, 2, 2])
    for dtype, y in [(np.int32, 2.7), (np.int32, core.Array(np.float32([1.5, 2.5, 3.5]))),
                     (np.float16, core.Array(np.float32([1e-4, 2.0, 3.0]))),
                     (np.float32, 1 + 2j), (np.bool_, 1), (np.uint8, -1), (np.int8, 300),
                     (np.float32, [1.0, 2.0, 3.0]), (np.float32, np.int32(3))]:
        value, x, jx = operand(rng, (4,), dtype, False)
        for op in ["set", "add", "max"]:
            if op == "add" and dtype == np.bool_:
                continue
            check_update(x, None, idx, op, y, None, expect_fast=False)


def test_update_weak_operands_keep_their_type():
    x = core.Array(np.arange(6, dtype=np.float32), weak_type=True)
    jx = jax_lax_internal._convert_element_type(jjnp.arange(6, dtype=np.float32),
                                                weak_type=True)
    for op in ["set", "add", "min"]:
        check_update(x, jx, np.array([1, 1, 7]), op, 2.0, 2.0, expect_fast=True)
        y = core.Array(np.float32([1, 2, 3]))
        check_update(x, jx, np.array([1, 1, 7]), op, y, jjnp.asarray(np.asarray(y)),
                     expect_fast=True)
    xi = core.Array(np.arange(6, dtype=np.int32), weak_type=True)
    jxi = jax_lax_internal._convert_element_type(jjnp.arange(6, dtype=np.int32), weak_type=True)
    check_update(xi, jxi, slice(1, 4), "add", 3, 3, expect_fast=True)


def test_update_from_a_view_of_the_operand():
    x = jnp.arange(10.0)
    for op in ["set", "add"]:
        check_update(x, None, slice(1, None), op, x[:-1], None, expect_fast=True)
        check_update(x, None, np.array([0, 0, 1]), op, x[3:6], None, expect_fast=True)


def test_other_modes_take_the_general_path():
    x = jnp.arange(6.0)
    i = jnp.array([1, 9])
    with count_binds() as bound:
        x.at[i].set(1.0, mode="clip")
        x.at[i].get(mode="fill", fill_value=-1.0)
        x.at[i].add(1.0, wrap_negative_indices=False)
    assert bound
    np.testing.assert_array_equal(x.at[i].set(1.0, mode="clip"), [0, 1, 2, 3, 4, 1])
    np.testing.assert_array_equal(x.at[i].get(mode="fill", fill_value=-1.0), [1, -1])
    with count_binds() as bound:  # (hints only: the same numbers)
        x.at[i].add(1.0, indices_are_sorted=True, unique_indices=True, mode="drop")
        x.at[i].get(mode="clip")
    assert not bound


def test_apply_divide_power():
    x = jnp.arange(1.0, 7.0)
    i = jnp.array([0, 2, 2, 9])
    u = jnp.array([0, 2, 9])  # (unique: JAX applies `func` once per occurrence)
    assert_like_jax(x.at[u].apply(jnp.sqrt),
                    jjnp.arange(1.0, 7.0).at[jjnp.asarray(u)].apply(jjnp.sqrt))
    assert_like_jax(x.at[i].divide(2.0), jjnp.arange(1.0, 7.0).at[jjnp.asarray(i)].divide(2.0))
    assert_like_jax(x.at[i].power(2.0), jjnp.arange(1.0, 7.0).at[jjnp.asarray(i)].power(2.0))


def test_subtract_python_scalars_general_path():
    x = jnp.arange(4.0, dtype=np.float16)
    with general_path():
        want = x.at[1].subtract(0.1)
    assert_same_bits(x.at[1].subtract(0.1), want)


# --------------------------------------------------------------------------------------
# take


def check_take(a, ja, indices, axis, *, expect_fast=True):
    with count_binds() as bound:
        got, err = outcome(lambda: jnp.take(a, indices, axis=axis))
    with general_path():
        want, want_err = outcome(lambda: jnp.take(a, indices, axis=axis))
    jax_out, jax_err = outcome(lambda: jjnp.take(ja, to_jax(indices), axis=axis))
    what = (indices, axis)
    if want_err is not None:
        assert type(err) is type(want_err), (what, err, want_err)
        assert jax_err is not None and isinstance(err, type(jax_err)), (what, err, jax_err)
        return
    assert err is None, (what, err)
    if expect_fast:
        assert not bound, (what, bound)
    assert_same_bits(got, want, what)
    assert_same_bits(got, didax.jit(lambda v: jnp.take(v, indices, axis=axis))(a), what)
    assert jax_err is None, (what, jax_err)
    assert_like_jax(got, jax_out, what)


@pytest.mark.parametrize("dtype, weak", DTYPES, ids=str)
def test_take(dtype, weak):
    rng = np.random.default_rng(7)
    _, a, ja = operand(rng, (5, 4, 3), dtype, weak)
    for axis in [None, 0, 1, -1]:
        n = 60 if axis is None else (5, 4, 3)[axis]
        for k, values in enumerate([rng.integers(-n, n, (6,)),
                                    rng.integers(-2 * n, 2 * n, (2, 3)), np.array(n + 1),
                                    np.array([], np.int64), np.array([-n - 1, n, 0])]):
            v = values.astype([np.int32, np.int64, np.uint8, np.int16][(k + axis_id(axis)) % 4])
            check_take(a, ja, v if k % 2 else core.Array(v), axis)


def axis_id(axis):
    return 7 if axis is None else axis


def test_take_unusual_arguments_take_the_general_path():
    a = jnp.arange(12.0).reshape(3, 4)
    ja = jjnp.arange(12.0).reshape(3, 4)
    i = np.array([0, 5, -1])
    with count_binds() as bound:
        for mode in ["clip", "wrap"]:
            assert_like_jax(jnp.take(a, i, axis=1, mode=mode), jjnp.take(ja, i, axis=1, mode=mode))
        assert_like_jax(jnp.take(a, i, axis=1, fill_value=-7.0),
                        jjnp.take(ja, i, axis=1, fill_value=-7.0))
        assert_like_jax(jnp.take(a, i, axis=np.int64(1)), jjnp.take(ja, i, axis=1))
    assert bound
    check_take(a, ja, np.array([1.0]), 0, expect_fast=False)  # (float indices: an error)
    check_take(jnp.zeros((0, 2)), jjnp.zeros((0, 2)), np.array([0]), 0, expect_fast=False)


# --------------------------------------------------------------------------------------
# Inputs, errors, transformations, caches


def test_inputs_are_neither_mutated_nor_aliased():
    rng = np.random.default_rng(8)
    value, x, _ = operand(rng, (6, 4), np.float32, False)
    idx = np.array([1, 1, 5, 9])
    idx_copy = idx.copy()
    out = x[idx]
    assert not np.shares_memory(out._value, idx)
    out = x[idx, 1:3]
    np.testing.assert_array_equal(idx, idx_copy)
    y = np.ones((4, 4), np.float32)
    for op in ["set", "add"]:
        out = getattr(x.at[idx], op)(y)
        assert not np.shares_memory(out._value, y) and not np.shares_memory(out._value, value)
    out = x.at[2].set(y[0])
    assert not np.shares_memory(out._value, x._value)
    np.testing.assert_array_equal(np.asarray(x), value)
    np.testing.assert_array_equal(idx, idx_copy)
    view = x[1:3]  # a view of x's own (never written) buffer
    assert not np.asarray(view).flags.writeable


def error_cases():
    x = jnp.arange(24.0).reshape(4, 6)
    jx = jjnp.arange(24.0).reshape(4, 6)
    both = [(x, jnp), (jx, jjnp)]
    return both, [
        lambda a, m: a[1.0],
        lambda a, m: a[m.array(1.0)],
        lambda a, m: a[np.array([1.5, 2.0])],
        lambda a, m: a[1, 2, 3],
        lambda a, m: a[..., 1, ...],
        lambda a, m: a[::0],
        lambda a, m: a["a"],
        lambda a, m: a[[1, 2]],
        lambda a, m: a[1:2.5],
        lambda a, m: a[np.array([0, 1]), np.array([0, 1, 2])],
        lambda a, m: m.zeros(0)[0],
        lambda a, m: m.zeros((0, 2))[np.array([0])],
        lambda a, m: a.at[1.0].set(0.0),
        lambda a, m: a.at[np.array([1, 2])].set(m.ones(3)),
        lambda a, m: a.at[0].set(m.ones((1, 6))),
        lambda a, m: a.at[0, 0, 0].add(1.0),
        lambda a, m: m.zeros(3, bool).at[0].add(True),
        lambda a, m: m.take(a, np.array([1.5])),
        lambda a, m: m.take(a, np.array([1]), axis=2),
    ]


@pytest.mark.parametrize("case", range(len(error_cases()[1])))
def test_errors_have_jax_types(case):
    (ours, theirs), cases = error_cases()
    fn = cases[case]
    _, err = outcome(lambda: fn(*ours))
    _, jax_err = outcome(lambda: fn(*theirs))
    assert jax_err is not None and err is not None, (err, jax_err)
    assert isinstance(err, type(jax_err)), (err, jax_err)
    assert str(err)
    with general_path():
        _, general_err = outcome(lambda: fn(*ours))
    assert type(general_err) is type(err)


def test_float_slice_bound_message():
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        jnp.arange(5)[1:2.5]


def test_gradients_through_indexing_as_jax():
    rng = np.random.default_rng(9)
    value = rng.standard_normal((5, 4)).astype(np.float32)
    idx = np.array([0, 3, 3, -1, 9])
    w = rng.standard_normal((5, 4)).astype(np.float32)
    programs = [
        lambda m, x: (x[idx] * w).sum(),
        lambda m, x: (x[1:4, ::-2] ** 2).sum() + x[2, 3] * 3.0 + x[-1].sum(),
        lambda m, x: (x.at[idx].set(w) * x).sum(),
        lambda m, x: (x.at[idx].add(w * x[0]) ** 2).sum(),
        lambda m, x: (x.at[idx, 1].max(2.0) * w[0, 0]).sum(),
        lambda m, x: (m.take(x, idx, axis=0) * w).sum(),
    ]
    for program in programs:
        ours = didax.grad(lambda x, program=program: program(jnp, x))
        got = ours(jnp.asarray(value))
        want = jax.grad(lambda x, program=program: program(jjnp, x))(jjnp.asarray(value))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)
        got_jit = didax.jit(ours)(jnp.asarray(value))
        np.testing.assert_allclose(np.asarray(got_jit), np.asarray(want), rtol=1e-6, atol=1e-6)


def test_transformations_still_bind_primitives():
    x = jnp.arange(12.0).reshape(3, 4)
    i = jnp.array([2, 0])
    jaxpr = str(didax.make_jaxpr(lambda a: a[i] + a.at[i].set(1.0)[0:2] + a[1:3, ::-1])(x))
    assert "gather" in jaxpr and "scatter" in jaxpr and "slice" in jaxpr and "rev" in jaxpr
    assert "gather" in str(didax.make_jaxpr(lambda a: jnp.take(a, i, axis=1))(x))
    k = jnp.array([2, 0, 3])
    batched = didax.vmap(lambda row, j: row[j] + row.at[j].add(1.0).sum())(x, k)
    np.testing.assert_array_equal(
        batched, np.asarray(x)[[0, 1, 2], [2, 0, 3]] + np.asarray(x).sum(1) + 1)
    out, tangent = didax.jvp(lambda a: a[i].sum(), (x,), (jnp.ones_like(x),))
    assert float(tangent) == 8.0 and float(out) == float(np.asarray(x)[[2, 0]].sum())


def test_x64_indices():
    """With 64-bit types, index values past int32 take the general path (which converts
    them to int32 as JAX does); int64 arrays and ints within range are NumPy's."""
    with enable_x64(True), jax.enable_x64(True):
        rng = np.random.default_rng(10)
        _, x, jx = operand(rng, (6, 3), np.float64, False)
        for idx in [np.array([1, -2, 9], np.int64), np.int64(4), (np.int64(-1), 2),
                    np.array([2**33 + 1, 1]), 2**31 - 1]:
            # (values past int32 out of bounds: the primitives' path, which JAX's agrees with)
            check_getitem(x, jx, idx, expect_fast=not (
                isinstance(idx, np.ndarray) and idx.max() > 2**31))
            with general_path():
                want = x.at[idx].add(1.0)
            assert_same_bits(x.at[idx].add(1.0), want)
        check_take(x, jx, np.array([0, 7, -7, -1]), 0)


def test_result_types_are_interned_in_a_bounded_table():
    table = caches.tables()["numpy.eager_indexing.result_avals"]
    assert table.limit is not None and not table.interns
    x = jnp.ones((3, 4))
    assert x[1].aval is x[2].aval is core.ShapedArray((4,), np.float32)


def test_iteration_and_len_use_indexing():
    x = jnp.arange(6.0).reshape(3, 2)
    rows = list(x)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    np.testing.assert_array_equal(rows[2], [4.0, 5.0])
