"""didax.numpy creation, shape manipulation, sorting, searching and set functions
(lax_numpy.py): values against NumPy, result dtypes and weak types against JAX (the
table below was produced by running JAX 0.10.2), derivatives, tracing and errors."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import didax as jax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.errors import ConcretizationTypeError
from didax._src.public_test_util import check_grads

X64 = pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])


def _leaves(r):
    """Arrays of a (nested) result; a list of plain numbers is one leaf."""
    if isinstance(r, (tuple, list)) and not all(isinstance(x, (int, float, complex)) for x in r):
        return [leaf for x in r for leaf in _leaves(x)]
    return [r]


def _assert_matches(got, want, exact=False, rtol=1e-5, atol=1e-6):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        if exact or w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

F = np.arange(6, dtype=np.float32).reshape(2, 3)
I = np.array([[3, 0, 1], [0, 2, 2]], np.int32)
U = np.array([3, 1, 2], np.uint8)
S = np.array([1., 2., 4.], np.float32)

DTYPE_CASES = {
    "zeros": lambda m: m.zeros(3),
    "ones_int": lambda m: m.ones(3, int),
    "full_py_int": lambda m: m.full((2,), 3),
    "full_py_float": lambda m: m.full((2,), 3.0),
    "full_f32": lambda m: m.full((2,), np.float32(3)),
    "zeros_like_py_float": lambda m: m.zeros_like(2.0),
    "zeros_like_i32": lambda m: m.zeros_like(I),
    "full_like_f32": lambda m: m.full_like(F, 1),
    "ones_like_dtype": lambda m: m.ones_like(F, dtype=bool),
    "arange_int": lambda m: m.arange(5),
    "arange_float": lambda m: m.arange(0.0, 1.0, 0.25),
    "arange_f32_start": lambda m: m.arange(np.float32(1), 4),
    "linspace": lambda m: m.linspace(0, 1, 5),
    "linspace_int": lambda m: m.linspace(0, 10, 5, dtype=int),
    "linspace_i32_arr": lambda m: m.linspace(m.asarray(I), 10, 3),
    "logspace": lambda m: m.logspace(0, 2, 3),
    "geomspace": lambda m: m.geomspace(1, 100, 3),
    "eye": lambda m: m.eye(3),
    "identity_int": lambda m: m.identity(3, int),
    "tri": lambda m: m.tri(3),
    "tril_weak": lambda m: m.tril(m.ones((2, 2)) * 2.0),
    "indices": lambda m: m.indices((2, 3)),
    "meshgrid": lambda m: m.meshgrid(m.arange(2), S),
    "reshape_weak": lambda m: m.reshape(2.0, (1, 1)),
    "concatenate_mixed": lambda m: m.concatenate([I, F]),
    "concatenate_weak": lambda m: m.concatenate([m.asarray([1.0]) * 2.0,
                                                 m.asarray([1.0]) * 3.0]),
    "stack_py": lambda m: m.stack([1, 2.0]),
    "tile_weak": lambda m: m.tile(2.0, 3),
    "repeat_i32": lambda m: m.repeat(I, 2),
    "pad_weak": lambda m: m.pad(m.asarray([1.0]) * 2.0, 1),
    "pad_mean_int": lambda m: m.pad(I, 1, mode="mean"),
    "diag": lambda m: m.diag(S),
    "trace_int": lambda m: m.trace(I),
    "trace_u8": lambda m: m.trace(m.ones((2, 2), np.uint8)),
    "tril_indices": lambda m: m.tril_indices(3),
    "diag_indices": lambda m: m.diag_indices(3),
    "sort": lambda m: m.sort(I),
    "argsort": lambda m: m.argsort(F),
    "lexsort": lambda m: m.lexsort([S, S]),
    "argpartition": lambda m: m.argpartition(F, 1),
    "partition_u8": lambda m: m.partition(U, 1),
    "sort_complex": lambda m: m.sort_complex(I),
    "searchsorted": lambda m: m.searchsorted(S, F),
    "digitize": lambda m: m.digitize(F, S),
    "nonzero": lambda m: m.nonzero(I),
    "argwhere": lambda m: m.argwhere(I),
    "flatnonzero_size": lambda m: m.flatnonzero(I, size=5),
    "unique_all": lambda m: m.unique(I, True, True, True),
    "unique_size": lambda m: m.unique(F, size=3),
    "isin": lambda m: m.isin(I, U),
    "union1d": lambda m: m.union1d(I, U),
    "intersect1d": lambda m: m.intersect1d(I, U, return_indices=True),
    "setdiff1d": lambda m: m.setdiff1d(I, U),
    "setxor1d": lambda m: m.setxor1d(I, U),
    "select": lambda m: m.select([I > 0], [F], 0),
    "choose": lambda m: m.choose(m.asarray([0, 1, 0]), [S, S * 2]),
    "bincount": lambda m: m.bincount(U),
    "bincount_weights": lambda m: m.bincount(U, weights=S),
    "histogram": lambda m: m.histogram(S, 2),
    "histogram_int": lambda m: m.histogram(U, 2),
    "isclose": lambda m: m.isclose(F, 1.0),
    "allclose": lambda m: m.allclose(F, F),
    "array_equal": lambda m: m.array_equal(F, F),
    "nan_to_num_int": lambda m: m.nan_to_num(I),
    "interp": lambda m: m.interp(S, S, S),
    "interp_int": lambda m: m.interp(U, U, U),
    "convolve": lambda m: m.convolve(S, S),
    "convolve_int": lambda m: m.convolve(U, U),
    "polyval_int": lambda m: m.polyval(U, U),
    "polyval_weak": lambda m: m.polyval(S, 2.0),
    "vander": lambda m: m.vander(S),
    "diff_bool": lambda m: m.diff(I > 0),
    "unravel_index": lambda m: m.unravel_index(5, (2, 3)),
    "ravel_multi_index": lambda m: m.ravel_multi_index((U, U), (4, 4)),
    "mgrid": lambda m: m.mgrid[0:2, 0:3],
    "r_": lambda m: m.r_[U, 1.5],
    "gradient_int": lambda m: m.gradient(I),
    "trapezoid_int": lambda m: m.trapezoid(I),
    "unwrap_int": lambda m: m.unwrap(I),
    "packbits": lambda m: m.packbits(I),
    "unpackbits": lambda m: m.unpackbits(U),
    "gcd": lambda m: m.gcd(I, 4),
    "lcm_u8": lambda m: m.lcm(U, U),
    "cov_int": lambda m: m.cov(I),
    "corrcoef": lambda m: m.corrcoef(F),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'zeros': ('float32', 'float64'),
    'ones_int': ('int32', 'int64'),
    'full_py_int': ('int32*', 'int64*'),
    'full_py_float': ('float32*', 'float64*'),
    'full_f32': ('float32', 'float32'),
    'zeros_like_py_float': ('float32*', 'float64*'),
    'zeros_like_i32': ('int32', 'int32'),
    'full_like_f32': ('float32', 'float32'),
    'ones_like_dtype': ('bool', 'bool'),
    'arange_int': ('int32', 'int64'),
    'arange_float': ('float32', 'float64'),
    'arange_f32_start': ('float32', 'float32'),
    'linspace': ('float32', 'float64'),
    'linspace_int': ('int32', 'int64'),
    'linspace_i32_arr': ('float32', 'float32'),
    'logspace': ('float32', 'float64'),
    'geomspace': ('float32', 'float64'),
    'eye': ('float32', 'float64'),
    'identity_int': ('int32', 'int64'),
    'tri': ('float32', 'float32'),
    'tril_weak': ('float32', 'float64'),
    'indices': ('int32', 'int64'),
    'meshgrid': ('int32 float32', 'int64 float32'),
    'reshape_weak': ('float32*', 'float64*'),
    'concatenate_mixed': ('float32', 'float32'),
    'concatenate_weak': ('float32', 'float64'),
    'stack_py': ('float32*', 'float64*'),
    'tile_weak': ('float32*', 'float64*'),
    'repeat_i32': ('int32', 'int32'),
    'pad_weak': ('float32', 'float64'),
    'pad_mean_int': ('int32', 'int32'),
    'diag': ('float32', 'float32'),
    'trace_int': ('int32', 'int64'),
    'trace_u8': ('uint32', 'uint64'),
    'tril_indices': ('int32 int32', 'int64 int64'),
    'diag_indices': ('int32 int32', 'int64 int64'),
    'sort': ('int32', 'int32'),
    'argsort': ('int32', 'int64'),
    'lexsort': ('int32', 'int64'),
    'argpartition': ('int32', 'int32'),
    'partition_u8': ('uint8', 'uint8'),
    'sort_complex': ('complex64', 'complex64'),
    'searchsorted': ('int32', 'int32'),
    'digitize': ('int32', 'int32'),
    'nonzero': ('int32 int32', 'int64 int64'),
    'argwhere': ('int32', 'int64'),
    'flatnonzero_size': ('int32', 'int64'),
    'unique_all': ('int32 int32 int32 int32', 'int32 int64 int64 int64'),
    'unique_size': ('float32', 'float32'),
    'isin': ('bool', 'bool'),
    'union1d': ('int32', 'int32'),
    'intersect1d': ('int32 int32 int32', 'int32 int64 int64'),
    'setdiff1d': ('int32', 'int32'),
    'setxor1d': ('int32', 'int32'),
    'select': ('float32', 'float32'),
    'choose': ('float32', 'float32'),
    'bincount': ('int32', 'int64'),
    'bincount_weights': ('float32', 'float32'),
    'histogram': ('float32 float32', 'float32 float32'),
    'histogram_int': ('float32 float32', 'float32 float32'),
    'isclose': ('bool', 'bool'),
    'allclose': ('bool', 'bool'),
    'array_equal': ('bool', 'bool'),
    'nan_to_num_int': ('int32', 'int32'),
    'interp': ('float32', 'float32'),
    'interp_int': ('float32', 'float32'),
    'convolve': ('float32', 'float32'),
    'convolve_int': ('float32', 'float32'),
    'polyval_int': ('uint8', 'uint8'),
    'polyval_weak': ('float32', 'float32'),
    'vander': ('float32', 'float32'),
    'diff_bool': ('bool', 'bool'),
    'unravel_index': ('int32* int32*', 'int64* int64*'),
    'ravel_multi_index': ('uint8', 'uint8'),
    'mgrid': ('int32', 'int64'),
    'r_': ('float32*', 'float64*'),
    'gradient_int': ('float32 float32', 'float32 float32'),
    'trapezoid_int': ('float32', 'float32'),
    'unwrap_int': ('float32', 'float64'),
    'packbits': ('uint8', 'uint8'),
    'unpackbits': ('uint8', 'uint8'),
    'gcd': ('int32', 'int32'),
    'lcm_u8': ('uint8', 'uint8'),
    'cov_int': ('float32', 'float32'),
    'corrcoef': ('float32', 'float32'),
}


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
@X64
def test_result_dtypes_match_jax(name, x64):
    with enable_x64(x64):
        out = _leaves(DTYPE_CASES[name](jnp))
    got = " ".join(str(x.dtype) + ("*" if x.weak_type else "") for x in out)
    assert got == JAX_DTYPES[name][x64]


# --------------------------------------------------------------------------------------
# Shape manipulation against NumPy, on random shapes (including empty arrays and scalars)


def _axis(draw, x, extra=0):
    return draw(st.integers(-x.ndim - extra, x.ndim - 1 + extra))


def _case_transpose(draw, x):
    perm = draw(st.permutations(range(x.ndim)))
    return lambda m: m.transpose(x, perm)


def _case_moveaxis(draw, x):
    src, dst = _axis(draw, x), _axis(draw, x)
    return lambda m: m.moveaxis(x, src, dst)


def _case_swapaxes(draw, x):
    a, b = _axis(draw, x), _axis(draw, x)
    return lambda m: m.swapaxes(x, a, b)


def _case_expand_dims(draw, x):
    axis = _axis(draw, x, extra=1)
    return lambda m: m.expand_dims(x, axis)


def _case_squeeze(draw, x):
    y = x.reshape((1,) + x.shape + (1,))
    axis = draw(st.sampled_from([None, 0, -1, (0, -1)]))
    return lambda m: m.squeeze(y, axis)


def _axis_or_none(draw, x):
    return draw(st.none() | st.integers(-x.ndim, x.ndim - 1)) if x.ndim else None


def _case_flip(draw, x):
    axis = _axis_or_none(draw, x)
    return lambda m: m.flip(x, axis)


def _case_roll(draw, x):
    shift = draw(st.integers(-7, 7))
    axis = _axis_or_none(draw, x)
    return lambda m: m.roll(x, shift, axis)


def _case_rot90(draw, x):
    k = draw(st.integers(-2, 5))
    return lambda m: m.rot90(x, k, (0, x.ndim - 1))


def _case_tile(draw, x):
    reps = tuple(draw(st.lists(st.integers(0, 3), min_size=0, max_size=4)))
    return lambda m: m.tile(x, reps)


def _case_repeat(draw, x):
    axis = _axis_or_none(draw, x)
    n = x.size if axis is None else x.shape[axis]
    reps = draw(st.integers(0, 3) | st.lists(st.integers(0, 3), min_size=n, max_size=n))
    reps = np.asarray(reps, np.int32)
    return lambda m: m.repeat(x, reps, axis)


def _case_concatenate(draw, x):
    axis = _axis(draw, x)
    return lambda m: m.concatenate([x, 2 * x, x], axis)


def _case_stack(draw, x):
    axis = _axis(draw, x, extra=1)
    return lambda m: m.stack([x, 2 * x], axis)


def _case_joins(draw, x):
    fn = draw(st.sampled_from(["hstack", "vstack", "dstack", "column_stack", "append"]))
    if fn == "append":
        axis = draw(st.none() | st.integers(0, x.ndim - 1))
        return lambda m: m.append(x, 2 * x, axis)
    return lambda m: getattr(m, fn)([x, 2 * x])


def _case_split(draw, x):
    axis = _axis(draw, x)
    n = x.shape[axis]
    spec = draw(st.integers(1, 4) | st.lists(st.integers(0, n), max_size=3).map(sorted))
    return lambda m: m.array_split(x, spec, axis)


def _case_atleast(draw, x):
    fn = draw(st.sampled_from(["atleast_1d", "atleast_2d", "atleast_3d"]))
    return lambda m: getattr(m, fn)(x)


def _case_tri(draw, x):
    fn, k = draw(st.sampled_from(["tril", "triu"])), draw(st.integers(-4, 4))
    return lambda m: getattr(m, fn)(x, k)


def _case_diagonal(draw, x):
    a, b = draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=2, max_size=2,
                         unique_by=lambda i: i % x.ndim))
    offset = draw(st.integers(-5, 5))
    return lambda m: m.diagonal(x, offset, a, b)


def _case_trace(draw, x):
    offset = draw(st.integers(-3, 3))
    return lambda m: m.trace(x, offset, 0, x.ndim - 1)


def _case_resize(draw, x):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    return lambda m: m.resize(x, shape)


PAD_MODES = ["constant", "edge", "wrap", "reflect", "symmetric", "linear_ramp", "maximum",
             "minimum", "mean", "median"]


def _case_pad(draw, x):
    widths = [tuple(draw(st.lists(st.integers(0, 5), min_size=2, max_size=2)))
              for _ in range(x.ndim)]
    mode = draw(st.sampled_from(PAD_MODES))
    kwargs = {}
    if mode in ("reflect", "symmetric"):
        kwargs["reflect_type"] = draw(st.sampled_from(["even", "odd"]))
    if mode in ("maximum", "minimum", "mean", "median"):
        kwargs["stat_length"] = draw(st.none() | st.integers(1, 3))
    if mode == "constant":
        kwargs["constant_values"] = draw(st.sampled_from([0, 1.5, ((1, 2),)]))
    return lambda m: m.pad(x, widths, mode, **kwargs)


SHAPE_CASES = {  # name: (case builder, minimum rank, minimum axis size)
    "reshape": (lambda d, x: lambda m: m.reshape(x, (-1, 1)), 0, 0),
    "reshape_F": (lambda d, x: lambda m: m.reshape(x, x.shape[::-1], order="F"), 0, 0),
    "ravel_F": (lambda d, x: lambda m: m.ravel(x, order="F"), 0, 0),
    "transpose": (_case_transpose, 0, 0),
    "moveaxis": (_case_moveaxis, 1, 0),
    "swapaxes": (_case_swapaxes, 1, 0),
    "expand_dims": (_case_expand_dims, 0, 0),
    "squeeze": (_case_squeeze, 0, 0),
    "flip": (_case_flip, 0, 0),
    "roll": (_case_roll, 1, 0),
    "rot90": (_case_rot90, 2, 0),
    "tile": (_case_tile, 0, 0),
    "repeat": (_case_repeat, 1, 0),
    "concatenate": (_case_concatenate, 1, 0),
    "stack": (_case_stack, 0, 0),
    "joins": (_case_joins, 1, 0),
    "array_split": (_case_split, 1, 0),
    "atleast": (_case_atleast, 0, 0),
    "tril_triu": (_case_tri, 2, 0),
    "diagonal": (_case_diagonal, 2, 0),
    "trace": (_case_trace, 2, 0),
    "resize": (_case_resize, 0, 0),
    "pad": (_case_pad, 1, 1),
}


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_shape_functions_match_numpy(name, data):
    build, min_dims, min_side = SHAPE_CASES[name]
    x = data.draw(hnp.arrays(np.float32, hnp.array_shapes(
        min_dims=min_dims, max_dims=3, min_side=min_side, max_side=4),
        elements=st.integers(-9, 9).map(float)))
    fn = build(data.draw, x)
    _assert_matches(fn(jnp), fn(np), rtol=1e-5, atol=1e-5)


def _ints(max_dims=2, min_side=0):
    return hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=max_dims,
                                                 min_side=min_side, max_side=5),
                      elements=st.integers(-3, 3))


@settings(max_examples=20, deadline=None)
@given(x=_ints(3), data=st.data())
def test_sorting_matches_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    _assert_matches(jnp.sort(x, axis), np.sort(x, axis))
    _assert_matches(jnp.sort(x, None), np.sort(x, None))
    _assert_matches(jnp.argsort(x, axis), np.argsort(x, axis, kind="stable"))
    _assert_matches(jnp.argsort(x, axis, descending=True), np.argsort(-x, axis, kind="stable"))
    _assert_matches(jnp.sort(x, axis, descending=True), np.flip(np.sort(x, axis), axis))
    _assert_matches(jnp.lexsort([x, x % 2], axis), np.lexsort([x, x % 2], axis))


@settings(max_examples=20, deadline=None)
@given(x=_ints(2, min_side=1), data=st.data())
def test_partition_orders_like_jax(x, data):
    """kth+1 smallest ascending, then the rest largest first (JAX's top_k-based order)."""
    kth = data.draw(st.integers(-x.shape[-1], x.shape[-1] - 1))
    k = kth % x.shape[-1]
    s = np.sort(x, -1)
    expected = np.concatenate([s[..., :k + 1], s[..., k + 1:][..., ::-1]], -1)
    _assert_matches(jnp.partition(x, kth), expected)
    idx = np.asarray(jnp.argpartition(x, kth))
    _assert_matches(np.take_along_axis(x, idx, -1)[..., k], s[..., k])
    _assert_matches(np.sort(idx, -1), np.broadcast_to(np.arange(x.shape[-1]), x.shape))
    assert np.all(np.take_along_axis(x, idx, -1)[..., :k + 1] <= s[..., k:k + 1])


@settings(max_examples=20, deadline=None)
@given(a=_ints(1), v=_ints(2), side=st.sampled_from(["left", "right"]),
       method=st.sampled_from(["scan", "scan_unrolled", "compare_all", "sort"]))
def test_searchsorted_matches_numpy(a, v, side, method):
    a = np.sort(a)
    _assert_matches(jnp.searchsorted(a, v, side, method=method), np.searchsorted(a, v, side))
    if a.size:
        _assert_matches(jnp.digitize(v, a), np.digitize(v, a))
        _assert_matches(jnp.digitize(v, a[::-1], right=True), np.digitize(v, a[::-1], True))


def test_searchsorted_puts_nan_last():
    a = np.array([-np.inf, -1., 0., 2., np.inf, np.nan], np.float32)
    v = np.array([np.nan, np.inf, -0., 1.], np.float32)
    for method in ["scan", "compare_all", "sort"]:
        for side in ["left", "right"]:
            _assert_matches(jnp.searchsorted(a, v, side, method=method),
                            np.searchsorted(a, v, side))
    perm = np.array([1, 2, 0])
    _assert_matches(jnp.searchsorted(np.array([3., 1., 2.]), 2.5, sorter=perm), 2)


@settings(max_examples=20, deadline=None)
@given(x=_ints(3))
def test_nonzero_family_matches_numpy(x):
    _assert_matches(jnp.nonzero(x), np.nonzero(x))
    _assert_matches(jnp.flatnonzero(x), np.flatnonzero(x))
    _assert_matches(jnp.argwhere(x), np.argwhere(x))
    n = np.count_nonzero(x)
    padded = jnp.nonzero(x, size=n + 2, fill_value=-1)
    for got, want in zip(padded, np.nonzero(x)):  # JAX ignores fill_value for empty inputs
        _assert_matches(got, np.concatenate([want, [-1, -1] if x.size else [0, 0]]))
    _assert_matches(jnp.extract(x > 0, x), np.extract(x > 0, x))
    _assert_matches(jnp.compress(x.ravel() > 0, x), np.compress(x.ravel() > 0, x))


@settings(max_examples=20, deadline=None)
@given(case=st.tuples(_ints(2), st.none()) | st.tuples(_ints(2, min_side=1), st.just(0)))
def test_unique_matches_numpy(case):
    x, axis = case
    got = jnp.unique(x, True, True, True, axis=axis)
    want = np.unique(x, True, True, True, axis=axis)
    _assert_matches(got[:2] + got[3:], want[:2] + want[3:])
    _assert_matches(np.reshape(got[2], np.shape(want[2])), want[2])
    if x.size:
        n = want[0].shape[0]
        values = jnp.unique(x, size=n + 2, fill_value=7, axis=axis)
        fill = np.full((2,) + want[0].shape[1:], 7, x.dtype)
        _assert_matches(values, np.concatenate([want[0], fill]))


def test_unique_of_empty_slices_follows_jax():
    """JAX (unlike NumPy) returns one empty slice when the slices have no elements."""
    for shape, counts in [((3, 0), [3]), ((0, 0), []), ((0, 3), None)]:
        values, index, inverse, count = jnp.unique(np.zeros(shape), True, True, True, axis=0)
        assert values.shape == ((0, 3) if counts is None else (1, 0))
        _assert_matches(count, np.array(counts or []))
        _assert_matches(inverse, np.zeros(shape[0], int))


def test_unique_nan_handling():
    x = np.array([np.nan, 1., np.nan, 1., 0.])
    _assert_matches(jnp.unique(x), np.unique(x))
    _assert_matches(jnp.unique(x, equal_nan=False), np.unique(x, equal_nan=False))
    values, counts = jnp.unique_counts(np.array([2, 1, 2, 2]))
    _assert_matches((values, counts), ([1, 2], [1, 3]))
    assert jnp.unique_all(np.array([2, 1])).inverse_indices.tolist() == [1, 0]
    _assert_matches(jnp.unique_inverse(np.array([[2, 1]])).inverse_indices, np.array([[1, 0]]))
    _assert_matches(jnp.unique_values(x), np.unique(x, equal_nan=False))


@settings(max_examples=20, deadline=None)
@given(a=_ints(2), b=_ints(1), method=st.sampled_from(["auto", "binary_search", "sort"]))
def test_set_functions_match_numpy(a, b, method):
    _assert_matches(jnp.isin(a, b, method=method), np.isin(a, b))
    _assert_matches(jnp.isin(a, b, invert=True, method=method), np.isin(a, b, invert=True))
    _assert_matches(jnp.union1d(a, b), np.union1d(a, b))
    _assert_matches(jnp.setdiff1d(a, b), np.setdiff1d(a, b))
    _assert_matches(jnp.setxor1d(a, b), np.setxor1d(a, b))
    _assert_matches(jnp.intersect1d(a, b, return_indices=True),
                    np.intersect1d(a, b, return_indices=True))
    for name in ("intersect1d", "setdiff1d", "setxor1d", "union1d"):
        want = getattr(np, name)(a, b)
        got = getattr(jnp, name)(a, b, size=want.size + 2, fill_value=-9)
        _assert_matches(got, np.concatenate([want, [-9, -9]]))


def test_set_functions_with_assume_unique():
    a, b = np.array([5, 1, 3, 7]), np.array([3, 9, 2, 5])
    _assert_matches(jnp.intersect1d(a, b, True, True), np.intersect1d(a, b, True, True))
    _assert_matches(jnp.intersect1d(a, b, True, True, size=3),
                    ([3, 5, 3], [2, 0, 4], [0, 3, 4]))
    _assert_matches(jnp.setdiff1d(a, b, True), np.setdiff1d(a, b, True))
    _assert_matches(jnp.setxor1d(a, b, True), np.setxor1d(a, b, True))
    _assert_matches(jnp.setxor1d(a, b, True, size=5), [1, 2, 7, 9, 1])


# --------------------------------------------------------------------------------------
# Other functions against NumPy, in float32 and in float64 mode

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
V = RNG.standard_normal(7)
K = RNG.standard_normal(3)
N = np.array([3., np.nan, -np.inf, np.inf, -2.], np.float32)
GRID = np.linspace(-1, 5, 13)
XP, FP = np.array([0., 1, 2, 4]), np.array([1., 3, 2, 0])


PICK = np.array([[0, 2, 1, 0], [1, 1, 0, 2], [2, 0, 0, 1]])
BYTES = np.array([[3, 255], [17, 0]], np.uint8)
INTS = np.array([[0, -12, 18], [7, 35, -1], [48, 0, 9]])


NUMPY_CASES = {
    "zeros": lambda m: m.zeros((2, 3), int),
    "full": lambda m: m.full((2, 2), np.array([1., 2.])),
    "full_like": lambda m: m.full_like(A, 2.5),
    "arange": lambda m: [m.arange(5), m.arange(1, 6, 2), m.arange(0, 1, 0.25), m.arange(5, 1)],
    "arange_neg_step": lambda m: m.arange(5, 1, -1.5),
    "linspace": lambda m: [m.linspace(0, 1, 7), m.linspace(0, 1, 5, endpoint=False),
                           m.linspace(2, 3, 1), m.linspace(0, 1, 0)],
    "linspace_retstep": lambda m: m.linspace(-1, 2, 4, retstep=True),
    "linspace_arrays": lambda m: m.linspace(K, 2 * K + 1, 4, axis=-1),
    "linspace_int": lambda m: m.linspace(0, 10, 7, dtype=int),
    "logspace": lambda m: m.logspace(0, 2, 5, base=2),
    "geomspace": lambda m: [m.geomspace(1, 1000, 4), m.geomspace(-1, -100, 3, endpoint=False)],
    "eye": lambda m: [m.eye(3), m.eye(3, 4, 1), m.eye(4, 3, -2), m.identity(2)],
    "tri": lambda m: [m.tri(3), m.tri(3, 5, -1)],
    "meshgrid": lambda m: m.meshgrid(K, V, indexing="xy") + m.meshgrid(K, V, indexing="ij",
                                                                      sparse=True),
    "indices": lambda m: [m.indices((2, 3)), *m.indices((2, 3), sparse=True)],
    "ix_": lambda m: m.ix_(np.array([0, 2]), np.array([1, 0, 3])),
    "mgrid": lambda m: [m.mgrid[0:3, 1:4:2], m.mgrid[0:1:5j]],
    "ogrid": lambda m: m.ogrid[0:3, 0:2],
    "r_c_": lambda m: [m.r_[K, 0, 3:5], m.r_["0,2", K, K], m.c_[K, K]],
    "block": lambda m: m.block([[A, A], [A[:1], A[:1]]]),
    "split": lambda m: m.split(V[:6], [2, 5]),
    "hsplit_vsplit": lambda m: m.hsplit(A, 2) + m.vsplit(A, [1]),
    "unstack": lambda m: jnp.unstack(A, axis=1) if m is jnp else list(A.T),
    "diag": lambda m: [m.diag(K, k) for k in (-2, 0, 1)] + [m.diag(A, 1)],
    "diagflat": lambda m: m.diagflat(A[:2, :2], -1),
    "fill_diagonal": lambda m: jnp.fill_diagonal(np.zeros((5, 3)), K[:2], inplace=False)
    if m is jnp else _np_fill_diagonal(np.zeros((5, 3)), K[:2]),
    "tri_indices": lambda m: [*m.tril_indices(4, 1, 3), *m.triu_indices(3, -1),
                              *m.tril_indices_from(A), *m.triu_indices_from(A, 2),
                              *m.diag_indices(3, 3), *m.diag_indices_from(np.ones((2, 2)))],
    "delete": lambda m: [m.delete(A, 1), m.delete(A, np.array([0, 2]), axis=1),
                         m.delete(A, slice(0, 3, 2), axis=0), m.delete(V, V > 0)],
    "insert": lambda m: [m.insert(V, 2, 9.), m.insert(V, np.array([1, 1, 7, 0]), K.sum()),
                         m.insert(A, 1, A[0] * 2, axis=0), m.insert(A, np.array([0, 2]), 5, 1),
                         m.insert(V, slice(1, 4), K)],
    "trim_zeros": lambda m: [m.trim_zeros(np.array([0, 0, 1, 2, 0, 3, 0]), t)
                             for t in ("fb", "f", "b")] + [m.trim_zeros(np.zeros(3))],
    "ravel_multi_index": lambda m: m.ravel_multi_index((np.array([0, 1, 2]),
                                                        np.array([3, 0, 1])), (3, 4)),
    "unravel_index": lambda m: m.unravel_index(np.array([0, 5, 11]), (3, 4)),
    "select": lambda m: m.select([A > 0.5, A < -0.5], [A, 2 * A], default=-1.),
    "choose": lambda m: m.choose(PICK, [A, 2 * A, -A]),
    "choose_modes": lambda m: [m.choose(PICK * 2 - 1, [A, -A], mode=md)
                               for md in ("wrap", "clip")],
    "piecewise": lambda m: m.piecewise(V, [V < 0, V > 0.5], [lambda x: -x, lambda x: 2 * x, 7.]),
    "bincount": lambda m: [m.bincount(np.array([0, 1, 1, 3, 2, 1, 7])),
                           m.bincount(np.array([0, 1, 1, 3]), np.array([.5, 1., 2., 3.]), 6)],
    "histogram": lambda m: m.histogram(V, 4),
    "histogram_weighted": lambda m: m.histogram(V, np.array([-2., 0., 0.5, 2.]), weights=V ** 2,
                                                density=True),
    "histogram2d": lambda m: m.histogram2d(A[0], A[1], 3)[0],
    "histogramdd": lambda m: m.histogramdd(A[:, :2], (2, 3), density=True)[0],
    "isclose": lambda m: [m.isclose(N, np.array([3.00001, np.nan, -np.inf, 1., -2.1])),
                          m.isclose(N, N, equal_nan=True), m.isclose(A, A + .01, 0, .02)],
    "allclose": lambda m: m.stack([m.allclose(A, A + 1e-9), m.allclose(A, A + 1)]),
    "array_equal": lambda m: m.stack([m.array_equal(A, A), m.array_equal(A, A[0]),
                                      m.array_equal(N, N), m.array_equal(N, N, equal_nan=True),
                                      m.array_equiv(A[0], A[:1]), m.array_equiv(A, A[:1] + 1)]),
    "nan_to_num": lambda m: [m.nan_to_num(N), m.nan_to_num(N, nan=-1, posinf=9, neginf=-9),
                             m.nan_to_num((N * 1j).astype(np.complex64))],
    "interp": lambda m: m.interp(GRID, XP, FP),
    "interp_left_right": lambda m: m.interp(GRID, XP, FP, left=-7, right=9),
    "interp_period": lambda m: m.interp(GRID, XP - 1, FP, period=3),
    "convolve": lambda m: [m.convolve(a, b, md) for md in ("full", "same", "valid")
                           for a, b in ((V, K), (K, V), (V, K[:2]))],
    "correlate": lambda m: [m.correlate(a, b, md) for md in ("full", "same", "valid")
                            for a, b in ((V, K), (K, V), (V * 1j + 1, K))],
    "polyval": lambda m: m.polyval(K, V),
    "vander": lambda m: [m.vander(K), m.vander(K, 5, True)],
    "diff": lambda m: [m.diff(A), m.diff(A, 2, 0), m.diff(A, prepend=0, append=A[:, :1]),
                       m.diff(A > 0)],
    "ediff1d": lambda m: m.ediff1d(A, to_end=np.array([1., 2.]), to_begin=-1),
    "sort_complex": lambda m: m.sort_complex(np.array([1 + 2j, 1 - 1j, -3])),
    "gradient": lambda m: [*m.gradient(A), m.gradient(V, 0.5), *m.gradient(A, K, 2.),
                           m.gradient(A, np.cumsum(np.abs(K)), axis=0)],
    "trapezoid": lambda m: [m.trapezoid(A), m.trapezoid(A, np.cumsum(np.abs(V[:4]))),
                            m.trapezoid(A, A, axis=0), m.trapezoid(A, dx=0.5, axis=0)],
    "unwrap": lambda m: [m.unwrap(np.cumsum(V) * 3), m.unwrap(A * 4, discont=4, axis=0),
                         m.unwrap(np.array([0, 7, 15, 4]), period=10)],
    "apply_over_axes": lambda m: m.apply_over_axes(m.sum, A[None], (0, 2)),
    "packbits": lambda m: [m.packbits(A > 0), m.packbits(PICK, axis=1, bitorder="little")],
    "unpackbits": lambda m: [m.unpackbits(BYTES), m.unpackbits(BYTES, 1, 11, "little"),
                             m.unpackbits(BYTES, 0, 1)],
    "gcd_lcm": lambda m: [m.gcd(INTS, 12), m.gcd(INTS, INTS.T), m.lcm(INTS, 6),
                          m.gcd(np.int32(1836311903), np.int32(1134903170))],
    "cov": lambda m: [m.cov(A), m.cov(A, rowvar=False), m.cov(A[0], A[1]), m.cov(A, bias=True),
                      m.cov(A, ddof=2), m.cov(A, fweights=np.array([1, 2, 1, 3]),
                                              aweights=np.array([1., 2, 1, 3]))],
    "corrcoef": lambda m: [m.corrcoef(A), m.corrcoef(A[0], A[1]), m.corrcoef(A[:2] + 1j * A[1:])],
}


def _np_fill_diagonal(a, val):
    np.fill_diagonal(a, val)
    return a


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    with enable_x64(x64):
        got = NUMPY_CASES[name](jnp)
    want = NUMPY_CASES[name](np)
    tol = 1e-12 if x64 else 2e-5
    _assert_matches(got, want, rtol=tol, atol=tol)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "reshape_F": (lambda a: jnp.reshape(a, (4, 3), order="F"), (A,)),
    "moveaxis": (lambda a: jnp.moveaxis(a[None], 0, -1), (A,)),
    "concatenate": (lambda a, b: jnp.concatenate([a, b], 1), (A, A[::-1])),
    "stack": (lambda a, b: jnp.stack([a, b], -1), (A, A[::-1])),
    "block": (lambda a, b: jnp.block([[a, b], [b, a]]), (A, A[::-1])),
    "split": (lambda a: jnp.split(a, [1, 3], axis=1)[1], (A,)),
    "tile": (lambda a: jnp.tile(a, (2, 1, 2)), (A,)),
    "repeat": (lambda a: jnp.repeat(a, np.array([1, 0, 2]), axis=0), (A,)),
    "repeat_total": (lambda a: jnp.repeat(a, jnp.asarray([1, 0, 2]), axis=0,
                                          total_repeat_length=4), (A,)),
    "roll": (lambda a: jnp.roll(a, (1, -2), (0, 1)), (A,)),
    "roll_traced_shift": (lambda a: jnp.roll(a, jnp.asarray(2), 1), (A,)),
    "rot90": (lambda a: jnp.rot90(a, 3), (A,)),
    "diagonal": (lambda a: jnp.diagonal(a[None], 1, 2, 1), (A,)),
    "trace": (lambda a: jnp.trace(a, -1), (A,)),
    "diag": (lambda x: jnp.diag(x, -2), (K,)),
    "tril": (lambda a: jnp.tril(a, 1), (A,)),
    "fill_diagonal": (lambda a, v: jnp.fill_diagonal(a, v, inplace=False), (A, K)),
    "pad": (lambda a: jnp.pad(a, ((1, 5), (3, 1)), mode="reflect", reflect_type="odd"), (A,)),
    "pad_stats": (lambda a: jnp.pad(a, 2, mode="median", stat_length=2)
                  + jnp.pad(a, 2, mode="mean") + jnp.pad(a, 2, mode="linear_ramp"), (A,)),
    "insert": (lambda a, v: jnp.insert(a, np.array([0, 2, 2]), v, axis=1), (A, K)),
    "delete": (lambda a: jnp.delete(a, np.array([0, 2]), axis=1), (A,)),
    "sort": (lambda a: jnp.sort(a, 0, descending=True), (A,)),
    "partition": (lambda a: jnp.partition(a, 1), (A,)),
    "unique": (lambda x: jnp.unique(jnp.concatenate([x, x[:3]])), (V,)),
    "unique_size": (lambda x: jnp.unique(x, size=9, fill_value=0.), (V,)),
    "compress": (lambda a: jnp.compress(np.array([True, False, True]), a, axis=0, size=2), (A,)),
    "select": (lambda a, b: jnp.select([a > 0, b > 0], [a * b, jnp.sin(a)], b), (A, A[::-1])),
    "choose": (lambda a, b: jnp.choose(PICK % 2, [a, b]), (A, A[::-1])),
    "piecewise": (lambda x: jnp.piecewise(x, [x < 0, x > .5], [jnp.sin, lambda t: t ** 2, 1.]),
                  (V,)),
    "linspace": (lambda a, b: jnp.linspace(a, b, 5, axis=1), (K, K[::-1])),
    "logspace": (lambda a, b: jnp.logspace(a, b, 5), (K, K[::-1])),
    "geomspace": (lambda a: jnp.geomspace(a, 10., 4), (np.abs(K) + 1,)),
    "interp": (lambda x, fp: jnp.interp(x, np.array([-1., 0, 1, 2]), fp), (V, np.arange(4.))),
    "interp_xp": (lambda xp: jnp.interp(np.array([0.3, 1.2]), xp, np.array([1., 3, 2, 0])),
                  (np.array([-1., 0, 1, 2]),)),
    "convolve": (lambda x, k: jnp.convolve(x, k, "same"), (V, K)),
    "correlate": (lambda x, k: jnp.correlate(x, k, "full"), (V, K)),
    "polyval": (lambda p, x: jnp.polyval(p, x), (K, V)),
    "vander": (lambda x: jnp.vander(x, 4), (K,)),
    "diff": (lambda a: jnp.diff(a, 2, prepend=0.), (A,)),
    "histogram_weights": (lambda w: jnp.histogram(V, 3, weights=w)[0], (np.abs(V),)),
    "resize": (lambda x: jnp.resize(x, (3, 5)), (V,)),
    "full": (lambda v: jnp.full((2, 3), v), (np.float64(1.5),)),
    "setdiff1d_size": (lambda x: jnp.setdiff1d(x, x[:2], size=5), (V,)),
    "r_": (lambda x: jnp.r_[x, 0., x], (V,)),
    "gradient": (lambda a, h: jnp.gradient(a, h, 0.5), (A, np.cumsum(np.abs(K)))),
    "trapezoid": (lambda y, x: jnp.trapezoid(y, x), (A, np.cumsum(np.abs(V[:4])))),
    "unwrap": (lambda p: jnp.unwrap(p * 3), (V,)),
    "cov_corrcoef": (lambda a, w: jnp.cov(a, aweights=w) + jnp.corrcoef(a), (A, np.abs(V[:4]))),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    fn, args = GRAD_CASES[name]
    with enable_x64():
        check_grads(fn, tuple(jnp.asarray(a) for a in args), order=2, modes=("fwd",))


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "linspace": lambda x: jnp.linspace(x[0], x[1], 4),
    "eye_traced_k": lambda x: jnp.eye(3, k=jnp.astype(x[0], int)),
    "pad": lambda x: jnp.pad(x, 2, mode="symmetric"),
    "sort_argsort": lambda x: jnp.argsort(x) + jnp.sort(x),
    "searchsorted": lambda x: jnp.searchsorted(jnp.sort(x), x),
    "nonzero_size": lambda x: jnp.nonzero(x > 0, size=3, fill_value=-1),
    "argwhere_size": lambda x: jnp.argwhere(x, size=2),
    "unique_size": lambda x: jnp.unique(x, True, True, True, size=3),
    "union1d_size": lambda x: jnp.union1d(x, x, size=4),
    "intersect1d_size": lambda x: jnp.intersect1d(x, -x, return_indices=True, size=2),
    "setxor1d_size": lambda x: jnp.setxor1d(x, -x, size=2),
    "setdiff1d_size": lambda x: jnp.setdiff1d(x, -x, size=2),
    "bincount_length": lambda x: jnp.bincount(jnp.astype(x, int), length=4),
    "repeat_total": lambda x: jnp.repeat(x, jnp.astype(x > 0, int), total_repeat_length=6),
    "extract_size": lambda x: jnp.extract(x > 0, x, size=2),
    "roll_traced": lambda x: jnp.roll(x, jnp.astype(x[0], int)),
    "histogram": lambda x: jnp.histogram(x, 3)[0],
    "choose_clip": lambda x: jnp.choose(jnp.astype(x, int), [x, -x], mode="clip"),
}

CONCRETE_ONLY = {
    "nonzero": lambda x: jnp.nonzero(x),
    "flatnonzero": lambda x: jnp.flatnonzero(x),
    "argwhere": lambda x: jnp.argwhere(x),
    "unique": lambda x: jnp.unique(x),
    "union1d": lambda x: jnp.union1d(x, x),
    "setdiff1d": lambda x: jnp.setdiff1d(x, x),
    "intersect1d": lambda x: jnp.intersect1d(x, x),
    "bincount": lambda x: jnp.bincount(jnp.astype(x, int)),
    "repeat": lambda x: jnp.repeat(x, jnp.astype(x, int)),
    "arange": lambda x: jnp.arange(x[0]),
    "compress": lambda x: jnp.compress(x > 0, x),
    "trim_zeros": lambda x: jnp.trim_zeros(x),
    "delete": lambda x: jnp.delete(x, jnp.astype(x[:1], int)),
    "insert": lambda x: jnp.insert(x, jnp.astype(x[:1], int), 1.),
    "choose_raise": lambda x: jnp.choose(jnp.astype(x > 1, int), [x, x]),
    "linspace_num": lambda x: jnp.linspace(0, 1, jnp.astype(x[0], int)),
}

SAMPLE = np.array([1., -2., 0., 3., 1.], np.float32)


@pytest.mark.parametrize("name", sorted(TRACEABLE))
def test_traces_to_jaxpr(name):
    fn = TRACEABLE[name]
    want = jax.tree_util.tree_map(lambda o: (o.shape, o.dtype), fn(jnp.asarray(SAMPLE)))
    shapes = jax.eval_shape(fn, SAMPLE)
    assert jax.tree_util.tree_map(lambda o: (o.shape, o.dtype), shapes) == want
    assert "lambda" in str(jax.make_jaxpr(fn)(SAMPLE))


@pytest.mark.parametrize("name", sorted(CONCRETE_ONLY))
def test_value_dependent_shapes_need_concrete_inputs(name):
    fn = CONCRETE_ONLY[name]
    x = np.abs(SAMPLE)
    fn(jnp.asarray(x))  # concrete: fine
    jax.jvp(lambda y: jnp.sum(jnp.ravel(jnp.asarray(fn(y), float))), (x,), (np.ones_like(x),))
    with pytest.raises(ConcretizationTypeError):
        jax.make_jaxpr(fn)(x)


def test_unique_under_jvp_carries_tangents():
    x = jnp.asarray([3., 1., 3., 2.])
    out, tangent = jax.jvp(jnp.unique, (x,), (jnp.asarray([10., 20., 30., 40.]),))
    _assert_matches(out, [1., 2., 3.])
    _assert_matches(tangent, [20., 40., 10.])


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.zeros(3, 4), TypeError),
    (lambda: jnp.zeros((2, -1)), ValueError),
    (lambda: jnp.full((2,), [1, 2]), TypeError),
    (lambda: jnp.arange(np.ones(2)), ValueError),
    (lambda: jnp.arange(1j), ValueError),
    (lambda: jnp.linspace(0, 1, -1), ValueError),
    (lambda: jnp.eye(2, k=1.5), ValueError),
    (lambda: jnp.tril(np.ones(3)), ValueError),
    (lambda: jnp.reshape(np.ones(6), (4, -1)), ValueError),
    (lambda: jnp.reshape(np.ones(6), (-1, -1)), ValueError),
    (lambda: jnp.reshape(np.ones(6), 6, order="A"), NotImplementedError),
    (lambda: jnp.squeeze(np.ones((1, 2)), 1), ValueError),
    (lambda: jnp.transpose(np.ones((1, 2)), (0, 0)), ValueError),
    (lambda: jnp.moveaxis(np.ones((1, 2)), (0, 1), 0), ValueError),
    (lambda: jnp.concatenate([np.ones(2), np.ones((2, 2))]), TypeError),
    (lambda: jnp.concatenate([1., 2.]), ValueError),
    (lambda: jnp.concatenate([]), ValueError),
    (lambda: jnp.stack([np.ones(2), np.ones(3)]), ValueError),
    (lambda: jnp.split(np.ones(5), 2), ValueError),
    (lambda: jnp.vsplit(np.ones(5), 5), ValueError),
    (lambda: jnp.block([(1., 2.)]), ValueError),
    (lambda: jnp.block([[1.], 2.]), ValueError),
    (lambda: jnp.repeat(np.ones(3), -1), ValueError),
    (lambda: jnp.repeat(np.ones(3), [1, 2, 3]), TypeError),
    (lambda: jnp.rot90(np.ones(3)), ValueError),
    (lambda: jnp.diagonal(np.ones(3)), ValueError),
    (lambda: jnp.trace(np.ones((2, 2)), axis1=1, axis2=1), ValueError),
    (lambda: jnp.diag(np.ones((2, 2, 2))), ValueError),
    (lambda: jnp.fill_diagonal(np.ones((2, 2)), 1.), NotImplementedError),
    (lambda: jnp.fill_diagonal(np.ones((2, 3, 2)), 1., inplace=False), ValueError),
    (lambda: jnp.pad(np.ones(3), -1), ValueError),
    (lambda: jnp.pad(np.ones(3), 1, mode="foo"), NotImplementedError),
    (lambda: jnp.pad(np.ones(3), 1, mode="edge", constant_values=1), ValueError),
    (lambda: jnp.pad(np.ones(3), ((1, 2, 3),)), ValueError),
    (lambda: jnp.pad(np.ones(0), 1, mode="wrap"), ValueError),
    (lambda: jnp.delete(np.ones(3), [0]), TypeError),
    (lambda: jnp.delete(np.ones(3), np.array([1.5])), ValueError),
    (lambda: jnp.insert(np.ones(3), np.array([[1]]), 1.), ValueError),
    (lambda: jnp.sort(np.ones(3), kind="stable"), TypeError),
    (lambda: jnp.partition(np.ones(3, np.complex64), 1), NotImplementedError),
    (lambda: jnp.searchsorted(np.ones((2, 2)), 1.), ValueError),
    (lambda: jnp.searchsorted(np.ones(2), 1., method="bisect"), ValueError),
    (lambda: jnp.nonzero(1.), ValueError),
    (lambda: jnp.nonzero(np.ones(2), size=2, fill_value=(1, 2)), ValueError),
    (lambda: jnp.compress(np.array([True, False, True]), np.ones(2)), ValueError),
    (lambda: jnp.unique(np.ones(0), size=2), ValueError),
    (lambda: jnp.isin(np.ones(2), np.ones(2), method="hash"), ValueError),
    (lambda: jnp.select([], []), ValueError),
    (lambda: jnp.select([True], [1, 2]), ValueError),
    (lambda: jnp.choose(np.array([0, 2]), [np.ones(2), np.ones(2)]), ValueError),
    (lambda: jnp.choose(np.array([0.]), [np.ones(1)], mode="clip"), ValueError),
    (lambda: jnp.piecewise(np.ones(2), [True], [1, 2, 3]), ValueError),
    (lambda: jnp.bincount(np.ones(2)), TypeError),
    (lambda: jnp.bincount(np.ones((2, 2), int)), ValueError),
    (lambda: jnp.histogram_bin_edges(np.ones(3), "auto"), NotImplementedError),
    (lambda: jnp.interp(1., np.ones(2), np.ones(3)), ValueError),
    (lambda: jnp.interp(1., np.ones(2), np.ones(2), left="x"), ValueError),
    (lambda: jnp.convolve(np.ones((2, 2)), np.ones(2)), ValueError),
    (lambda: jnp.convolve(np.ones(2), np.ones(0)), ValueError),
    (lambda: jnp.convolve(np.ones(2), np.ones(2), mode="circular"), ValueError),
    (lambda: jnp.vander(np.ones((2, 2))), ValueError),
    (lambda: jnp.diff(1.), ValueError),
    (lambda: jnp.diff(np.ones(2), -1), ValueError),
    (lambda: jnp.ravel_multi_index((np.array([3]),), (3,)), ValueError),
    (lambda: jnp.ravel_multi_index((np.array([1.]),), (3,), mode="clip"), ValueError),
    (lambda: jnp.ravel_multi_index((np.array([1.]),), (3,), dtype=int), TypeError),
    (lambda: jnp.broadcast_shapes((2,), (3,)), ValueError),
    (lambda: jnp.r_["x", 1], ValueError),
    (lambda: jnp.gradient(np.ones(1)), ValueError),
    (lambda: jnp.gradient(np.ones(3), np.ones(2)), ValueError),
    (lambda: jnp.gradient(np.ones(3), edge_order=2), NotImplementedError),
    (lambda: jnp.unwrap(np.ones(3) * 1j), ValueError),
    (lambda: jnp.packbits(np.ones(3)), TypeError),
    (lambda: jnp.unpackbits(np.ones(3, np.int32)), TypeError),
    (lambda: jnp.gcd(np.ones(3), 2), ValueError),
    (lambda: jnp.cov(np.ones((2, 2, 2))), ValueError),
    (lambda: jnp.cov(np.ones((2, 3)), fweights=np.ones(3)), TypeError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()


def test_small_helpers():
    assert jnp.ndim(A) == 2 and jnp.shape(A) == (3, 4) and jnp.size(A) == 12
    assert jnp.size(A, 1) == 4 and jnp.size(A, (0, 1)) == 12 and jnp.size(2.) == 1
    assert jnp.isscalar(1.) and jnp.isscalar(jnp.asarray(2)) and not jnp.isscalar(A)
    assert jnp.iterable(A) and not jnp.iterable(1.)
    assert jnp.can_cast(np.int32, np.float64) and not jnp.can_cast(np.float64, np.int32)
    assert jnp.broadcast_shapes((2, 1), (3,), 1) == (2, 3)
    assert jnp.s_[1:2] == np.s_[1:2] and jnp.index_exp[1] == (1,)
    x = jnp.frombuffer(np.arange(3, dtype=np.float32).tobytes(), np.float32)
    _assert_matches(x, [0., 1., 2.])
    _assert_matches(jnp.fromstring("1 2", sep=" "), [1., 2.])
    _assert_matches(jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int),
                    np.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int))
    _assert_matches(jnp.astype(np.array([1.7, -1.7]), int), [1, -1])
    _assert_matches(jnp.astype(np.array([1j, 0]), bool), [True, False])
    _assert_matches(jnp.copy(A), A)
    _assert_matches(jnp.mask_indices(3, jnp.triu, 1), np.mask_indices(3, np.triu, 1))
