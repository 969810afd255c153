"""didax.numpy reductions: values against NumPy on hypothesis-drawn shapes and axes (empty
dimensions, negative and tuple axes, keepdims) in float32 and float64 modes, result dtypes
against JAX (the tables were produced by running JAX 0.10.2), errors, derivatives and tracing.
"""
import math
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import didax as jax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

SETTINGS = settings(max_examples=15, deadline=None)

# --------------------------------------------------------------------------------------
# Result dtypes, as JAX 0.10.2 gives them: one entry per input of INPUTS (in order); an
# exception name where JAX raises. No result is weakly typed.

INPUTS = {"f32": np.ones(3, np.float32), "f16": np.ones(3, np.float16),
          "i8": np.ones(3, np.int8), "i32": np.ones(3, np.int32), "u8": np.ones(3, np.uint8),
          "b": np.ones(3, bool), "c64": np.ones(3, np.complex64), "py_float": 2.0, "py_int": 2}
INPUTS_X64 = {"f32": np.ones(3, np.float32), "i8": np.ones(3, np.int8),
              "i64": np.ones(3, np.int64), "u8": np.ones(3, np.uint8), "b": np.ones(3, bool)}
DTYPE_ARG_INPUTS = ("f32", "i8", "b")  # for the rows "fn:dtype", which pass dtype=

JAX_DTYPES = {
    'sum': 'float32 float16 int32 int32 uint32 int32 complex64 float32 int32',
    'prod': 'float32 float16 int32 int32 uint32 int32 complex64 float32 int32',
    'max': 'float32 float16 int8 int32 uint8 bool complex64 float32 int32',
    'min': 'float32 float16 int8 int32 uint8 bool complex64 float32 int32',
    'all': 'bool bool bool bool bool bool bool bool bool',
    'any': 'bool bool bool bool bool bool bool bool bool',
    'mean': 'float32 float16 float32 float32 float32 float32 complex64 float32 float32',
    'var': 'float32 float16 float32 float32 float32 float32 float32 float32 float32',
    'std': 'float32 float16 float32 float32 float32 float32 float32 float32 float32',
    'ptp': 'float32 float16 int8 int32 uint8 TypeError complex64 float32 int32',
    'count_nonzero': 'int32 int32 int32 int32 int32 int32 int32 int32 int32',
    'argmax': 'int32 int32 int32 int32 int32 int32 TypeError int32 int32',
    'argmin': 'int32 int32 int32 int32 int32 int32 TypeError int32 int32',
    'cumsum': 'float32 float16 int8 int32 uint8 int32 complex64 float32 int32',
    'cumprod': 'float32 float16 int8 int32 uint8 int32 complex64 float32 int32',
    'cumulative_sum': 'float32 float16 int32 int32 uint32 int32 complex64 ValueError ValueError',
    'cumulative_prod': 'float32 float16 int8 int32 uint8 int32 complex64 ValueError ValueError',
    'nancumsum': 'float32 float16 int8 int32 uint8 int32 complex64 float32 int32',
    'nancumprod': 'float32 float16 int8 int32 uint8 int32 complex64 float32 int32',
    'nansum': 'float32 float16 int32 int32 uint32 int32 complex64 float32 int32',
    'nanprod': 'float32 float16 int32 int32 uint32 int32 complex64 float32 int32',
    'nanmax': 'float32 float16 int8 int32 uint8 bool complex64 float32 int32',
    'nanmin': 'float32 float16 int8 int32 uint8 bool complex64 float32 int32',
    'nanmean': 'float32 float16 float32 float32 float32 float32 complex64 float32 float32',
    'nanvar': 'float32 float16 float32 float32 float32 float32 float32 float32 float32',
    'nanstd': 'float32 float16 float32 float32 float32 float32 float32 float32 float32',
    'nanargmax': 'int32 int32 int32 int32 int32 int32 TypeError int32 int32',
    'nanargmin': 'int32 int32 int32 int32 int32 int32 TypeError int32 int32',
    'median': 'float32 float16 float32 float32 float32 float32 ValueError float32 float32',
    'nanmedian': 'float32 float16 float32 float32 float32 float32 ValueError float32 float32',
    'average': 'float32 float16 float32 float32 float32 float32 complex64 float32 float32',
    'quantile': 'float32 float16 float32 float32 float32 float32 ValueError float32 float32',
    'percentile': 'float32 float16 float32 float32 float32 float32 ValueError float32 float32',
    'nanquantile': 'float32 float16 float32 float32 float32 float32 ValueError float32 float32',
    'nanpercentile': 'float32 float16 float32 float32 float32 float32 ValueError float32 float32',
    'sum:int8': 'int8 int8 int8',
    'sum:bool': 'bool bool bool',
    'prod:bool': 'bool bool bool',
    'sum:float16': 'float16 float16 float16',
    'mean:int32': 'int32 int32 int32',
    'cumsum:bool': 'bool bool bool',
    'cumsum:int8': 'int8 int8 int8',
    'var:float16': 'float16 float16 float16',
    'nansum:int8': 'int8 int8 int8',
}

JAX_DTYPES_X64 = {
    'sum': 'float32 int64 int64 uint64 int64',
    'prod': 'float32 int64 int64 uint64 int64',
    'max': 'float32 int8 int64 uint8 bool',
    'min': 'float32 int8 int64 uint8 bool',
    'all': 'bool bool bool bool bool',
    'any': 'bool bool bool bool bool',
    'mean': 'float32 float32 float64 float32 float32',
    'var': 'float32 float32 float64 float32 float32',
    'std': 'float32 float32 float64 float32 float32',
    'ptp': 'float32 int8 int64 uint8 TypeError',
    'count_nonzero': 'int64 int64 int64 int64 int64',
    'argmax': 'int64 int64 int64 int64 int64',
    'argmin': 'int64 int64 int64 int64 int64',
    'cumsum': 'float32 int8 int64 uint8 int64',
    'cumprod': 'float32 int8 int64 uint8 int64',
    'cumulative_sum': 'float32 int64 int64 uint64 int64',
    'cumulative_prod': 'float32 int8 int64 uint8 int64',
    'nancumsum': 'float32 int8 int64 uint8 int64',
    'nancumprod': 'float32 int8 int64 uint8 int64',
    'nansum': 'float32 int64 int64 uint64 int64',
    'nanprod': 'float32 int64 int64 uint64 int64',
    'nanmax': 'float32 int8 int64 uint8 bool',
    'nanmin': 'float32 int8 int64 uint8 bool',
    'nanmean': 'float32 float32 float64 float32 float32',
    'nanvar': 'float32 float32 float64 float32 float32',
    'nanstd': 'float32 float32 float64 float32 float32',
    'nanargmax': 'int64 int64 int64 int64 int64',
    'nanargmin': 'int64 int64 int64 int64 int64',
}


def _result_dtype(row, x):
    name, _, dtype = row.partition(":")
    args = (x, 0.5) if "quantile" in name or "percentile" in name else (x,)
    kwargs = {"dtype": dtype} if dtype else {}
    try:
        out = getattr(jnp, name)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the table records JAX's exception type
        return type(e).__name__
    assert not out.weak_type
    return str(out.dtype)


@pytest.mark.parametrize("row", list(JAX_DTYPES))
def test_dtypes_match_jax(row):
    inputs = DTYPE_ARG_INPUTS if ":" in row else tuple(INPUTS)
    got = " ".join(_result_dtype(row, INPUTS[k]) for k in inputs)
    assert got == JAX_DTYPES[row]


@pytest.mark.parametrize("row", list(JAX_DTYPES_X64))
def test_dtypes_match_jax_x64(row):
    with enable_x64():
        got = " ".join(_result_dtype(row, x) for x in INPUTS_X64.values())
    assert got == JAX_DTYPES_X64[row]


# --------------------------------------------------------------------------------------
# Values against NumPy


@st.composite
def cases(draw, nonempty=False, tuple_axes=True, max_dims=3):
    """(shape, axis, keepdims, seed): axis is None, an int (maybe negative) or a tuple."""
    shape = tuple(draw(st.lists(st.integers(1 if nonempty else 0, 4), max_size=max_dims)))
    ndim = len(shape)
    kinds = ["none"] + (["int"] if ndim else []) + (["tuple"] if tuple_axes else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "int":
        axis = draw(st.integers(-ndim, ndim - 1))
    elif kind == "tuple":
        perm = draw(st.permutations(range(ndim)))[:draw(st.integers(0, ndim))]
        axis = tuple(a - ndim if draw(st.booleans()) else a for a in perm)
    else:
        axis = None
    return shape, axis, draw(st.booleans()), draw(st.integers(0, 2 ** 31))


def _data(seed, shape, x64, nan_fraction=0.0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float64 if x64 else np.float32)
    if nan_fraction:
        x[rng.random(shape) < nan_fraction] = np.nan
    return x


def _reduced_size(shape, axis):
    axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    return math.prod(shape[a] for a in axes)


def _close(got, expected, x64, rtol=None):
    got = np.asarray(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape
    tol = rtol or (1e-10 if x64 else 2e-5)
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * 10)


def _numpy(fn, *args, **kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


SIMPLE = ["sum", "prod", "mean", "all", "any", "count_nonzero"]


@pytest.mark.parametrize("name", SIMPLE)
@SETTINGS
@given(case=cases(), x64=st.booleans())
def test_simple_reductions_match_numpy(name, case, x64):
    shape, axis, keepdims, seed = case
    x = _data(seed, shape, x64)
    if name in ("all", "any"):
        x = x > 0.5
    with enable_x64(x64):
        got = getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
    expected = _numpy(getattr(np, name), x.astype(np.float64) if x.dtype.kind == "f" else x,
                      axis=axis, keepdims=keepdims)
    _close(got, expected, x64)


@pytest.mark.parametrize("name", ["var", "std"])
@SETTINGS
@given(case=cases(), ddof=st.integers(0, 2), x64=st.booleans())
def test_var_std_match_numpy(name, case, ddof, x64):
    shape, axis, keepdims, seed = case
    x = _data(seed, shape, x64)
    with enable_x64(x64):
        got = getattr(jnp, name)(x, axis=axis, ddof=ddof, keepdims=keepdims)
    expected = _numpy(getattr(np, name), x.astype(np.float64), axis=axis, ddof=ddof,
                      keepdims=keepdims)
    if _reduced_size(shape, axis) - ddof <= 0:  # JAX (and didax) give NaN there
        expected = np.full_like(expected, np.nan)
    _close(got, expected, x64)


@pytest.mark.parametrize("name", ["max", "min", "ptp"])
@SETTINGS
@given(case=cases(), x64=st.booleans())
def test_max_min_ptp_match_numpy(name, case, x64):
    shape, axis, keepdims, seed = case
    x = _data(seed, shape, x64)
    with enable_x64(x64):
        if _reduced_size(shape, axis) == 0:
            with pytest.raises(ValueError, match="zero-size array"):
                getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
            return
        got = getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
    _close(got, getattr(np, name)(x, axis=axis, keepdims=keepdims), x64)


NAN_FNS = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin"]


@pytest.mark.parametrize("name", NAN_FNS)
@SETTINGS
@given(case=cases(nonempty=True), x64=st.booleans())
def test_nan_reductions_match_numpy(name, case, x64):
    shape, axis, keepdims, seed = case
    x = _data(seed, shape, x64, nan_fraction=0.4)
    with enable_x64(x64):
        got = getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
    _close(got, _numpy(getattr(np, name), x.astype(np.float64), axis=axis, keepdims=keepdims),
           x64)


@pytest.mark.parametrize("name", ["argmax", "argmin", "nanargmax", "nanargmin"])
@SETTINGS
@given(case=cases(nonempty=True, tuple_axes=False), x64=st.booleans())
def test_argminmax_match_numpy(name, case, x64):
    shape, axis, keepdims, seed = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float64 if x64 else np.float32)  # with ties
    if name.startswith("nan"):
        x[rng.random(shape) < 0.4] = np.nan
    with enable_x64(x64):
        got = getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
        assert got.dtype == (np.int64 if x64 else np.int32)
    if name.startswith("nan"):  # NumPy raises on all-NaN slices; JAX gives -1 there
        base = getattr(np, name[3:])
        filled = np.where(np.isnan(x), -np.inf if name == "nanargmax" else np.inf, x)
        expected = base(filled, axis=axis, keepdims=keepdims)
        all_nan = np.all(np.isnan(x), axis=axis, keepdims=keepdims)
        expected = np.where(all_nan, -1, expected)
    else:
        expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
@SETTINGS
@given(case=cases(tuple_axes=False), x64=st.booleans())
def test_cumulative_match_numpy(name, case, x64):
    shape, axis, _, seed = case
    x = _data(seed, shape, x64, nan_fraction=0.3 if name.startswith("nan") else 0.0)
    with enable_x64(x64):
        got = getattr(jnp, name)(x, axis=axis)
    _close(got, getattr(np, name)(x.astype(np.float64), axis=axis), x64)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@SETTINGS
@given(case=cases(tuple_axes=False), include_initial=st.booleans())
def test_array_api_cumulative_match_numpy(name, case, include_initial):
    shape, axis, _, seed = case
    if not shape:
        return
    axis = 0 if len(shape) == 1 and axis is None else (axis if axis is not None else -1)
    x = np.random.default_rng(seed).integers(-3, 4, shape).astype(np.int32)
    got = getattr(jnp, name)(x, axis=axis, include_initial=include_initial)
    np.testing.assert_array_equal(got, _cumulative(name, x, axis, include_initial))


def _cumulative(name, x, axis, include_initial):
    """NumPy's cumulative_sum and cumulative_prod (2.1) in terms NumPy 2.0 has."""
    scan, start = (np.cumsum, 0) if name == "cumulative_sum" else (np.cumprod, 1)
    out = scan(x, axis=axis)
    if include_initial:
        shape = list(out.shape)
        shape[axis] = 1
        out = np.concatenate([np.full(shape, start, out.dtype), out], axis=axis)
    return out


METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


def _np_quantile(x, q, axis, method, keepdims, nan):
    """NumPy's quantile; 'nearest' follows JAX: the lower neighbour when the fraction of the
    position q * (n - 1) is at most 1/2 (NumPy rounds half to even). The fraction comes from
    the position, exact for dyadic q, not from interpolated values, which round."""
    fn = np.nanquantile if nan else np.quantile
    if method != "nearest":
        return _numpy(fn, x, q, axis=axis, method=method, keepdims=keepdims)
    lo = _numpy(fn, x, q, axis=axis, method="lower", keepdims=keepdims)
    hi = _numpy(fn, x, q, axis=axis, method="higher", keepdims=keepdims)
    if nan:
        n = np.sum(~np.isnan(x), axis=axis, keepdims=keepdims)
    else:
        n = np.full(np.shape(lo)[np.ndim(q):], _reduced_size(x.shape, axis))
    pos = np.multiply.outer(q, n - 1)
    return np.where(pos - np.floor(pos) <= 0.5, lo, hi)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("nan", [False, True], ids=["quantile", "nanquantile"])
@SETTINGS
@given(case=cases(nonempty=True),
       # Dyadic q: (n - 1) * q is exact in float32 as in float64, so the discrete methods pick
       # the same neighbours as the float64 reference (float32(1/3) * 3 rounds to exactly 1).
       q=st.lists(st.integers(0, 256).map(lambda k: k / 256), min_size=1, max_size=3),
       scalar_q=st.booleans(), x64=st.booleans())
# A tie for 'nearest' (position 0.5), which the reference once broke upwards: its fraction,
# taken from interpolated values, rounded to 0.5 + 1e-16. didax and JAX take the lower value.
@example(case=((2,), None, False, 0), q=[0.5], scalar_q=False, x64=True)
def test_quantile_matches_numpy(method, nan, case, q, scalar_q, x64):
    shape, axis, keepdims, seed = case
    x = _data(seed, shape, x64, nan_fraction=0.3 if nan else 0.0)
    q = np.asarray(q[0] if scalar_q else q, x.dtype)
    with enable_x64(x64):
        fn = jnp.nanquantile if nan else jnp.quantile
        got = fn(x, q, axis=axis, method=method, keepdims=keepdims)
    expected = _np_quantile(x.astype(np.float64), q.astype(np.float64), axis, method, keepdims,
                            nan)
    _close(got, expected, x64, rtol=1e-10 if x64 else 1e-5)


@SETTINGS
@given(case=cases(nonempty=True), q=st.floats(0, 100))
def test_median_percentile_match_numpy(case, q):
    shape, axis, keepdims, seed = case
    x = _data(seed, shape, False)
    y = _data(seed, shape, False, nan_fraction=0.3)
    _close(jnp.median(x, axis=axis, keepdims=keepdims),
           np.median(x, axis=axis, keepdims=keepdims), False)
    _close(jnp.nanmedian(y, axis=axis, keepdims=keepdims),
           _numpy(np.nanmedian, y, axis=axis, keepdims=keepdims), False)
    _close(jnp.percentile(x, np.float32(q), axis=axis, keepdims=keepdims),
           np.percentile(x, np.float32(q), axis=axis, keepdims=keepdims), False)
    _close(jnp.nanpercentile(y, np.float32(q), axis=axis, keepdims=keepdims),
           _numpy(np.nanpercentile, y, np.float32(q), axis=axis, keepdims=keepdims), False)


def test_quantile_of_nothing_is_nan_and_nan_propagates():
    assert np.isnan(jnp.median(np.ones(0, np.float32)))
    assert np.all(np.isnan(jnp.quantile(np.ones((2, 0), np.float32), 0.5, axis=1)))
    np.testing.assert_array_equal(jnp.median(np.array([[1, np.nan, 2], [3, 4, 5]]), axis=1),
                                  [np.nan, 4.0])
    assert np.isnan(jnp.nanmedian(np.array([np.nan, np.nan])))


@SETTINGS
@given(case=cases(nonempty=True, tuple_axes=False), returned=st.booleans(), x64=st.booleans())
def test_average_matches_numpy(case, returned, x64):
    shape, axis, keepdims, seed = case
    x = _data(seed, shape, x64)
    w = np.abs(_data(seed + 1, shape if axis is None else (shape[axis],), x64)) + 0.1
    with enable_x64(x64):
        got = jnp.average(x, axis=axis, weights=w, returned=returned, keepdims=keepdims)
        got_unweighted = jnp.average(x, axis=axis, keepdims=keepdims)
    expected = np.average(x, axis=axis, weights=w, returned=returned, keepdims=keepdims)
    for g, e in zip(*((got, expected) if returned else ((got,), (expected,)))):
        _close(g, e, x64)
    _close(got_unweighted, np.average(x, axis=axis, keepdims=keepdims), x64)


def test_average_tuple_axis_and_returned():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    w = np.arange(1.0, 9.0, dtype=np.float32).reshape(2, 4)
    avg, total = jnp.average(x, axis=(0, 2), weights=w, returned=True)
    np.testing.assert_allclose(avg, np.average(x, axis=(0, 2), weights=np.broadcast_to(
        w[:, None, :], x.shape)), rtol=1e-6)
    np.testing.assert_allclose(total, [36.0, 36.0, 36.0])
    avg, total = jnp.average(x, axis=1, returned=True)
    assert total.shape == avg.shape == (2, 4) and np.all(np.asarray(total) == 3)


# --------------------------------------------------------------------------------------
# where=, initial=, dtype= and the bool/complex conventions


@SETTINGS
@given(case=cases(), initial=st.floats(-1, 1))
def test_where_and_initial_match_numpy(case, initial):
    shape, axis, keepdims, seed = case
    x = _data(seed, shape, True)
    mask = np.random.default_rng(seed + 1).random(shape) < 0.6
    with enable_x64():
        for fn in ("sum", "prod", "max", "min"):
            got = getattr(jnp, fn)(x, axis=axis, keepdims=keepdims, where=mask, initial=initial)
            expected = getattr(np, fn)(x, axis=axis, keepdims=keepdims, where=mask,
                                       initial=initial)
            _close(got, expected, True)
        _close(jnp.mean(x, axis=axis, keepdims=keepdims, where=mask),
               _numpy(np.mean, x, axis=axis, keepdims=keepdims, where=mask), True)
        _close(jnp.var(x, axis=axis, keepdims=keepdims, where=mask),
               np.where(np.sum(mask, axis=axis, keepdims=keepdims) > 0,
                        _numpy(np.var, x, axis=axis, keepdims=keepdims, where=mask), np.nan),
               True)


def test_dtype_argument_and_integer_semantics():
    x = np.array([100, 100, 100], np.int8)
    assert int(jnp.sum(x)) == 300  # accumulated in int32
    assert int(jnp.sum(x, dtype=np.int8)) == 44  # wraps, as in JAX
    assert int(jnp.sum(x, promote_integers=False)) == 44
    assert jnp.sum(np.array([True, True, False])).dtype == np.int32
    assert bool(jnp.sum(np.array([0.0, 2.0]), dtype=bool))
    assert not bool(jnp.prod(np.array([0.0, 2.0]), dtype=bool))
    np.testing.assert_array_equal(jnp.cumsum(np.array([0.0, 0.0, 2.0]), dtype=bool),
                                  [False, False, True])
    assert float(jnp.mean(np.array([1, 2], np.int32))) == 1.5
    assert jnp.mean(np.array([1, 2], np.int32), dtype=np.int32).dtype == np.int32
    assert jnp.sum(np.ones(3, np.float16)).dtype == np.float16
    assert not bool(jnp.any(np.array([1j])))  # as JAX: only the real part counts


def test_complex_moments():
    x = np.array([1 + 2j, 3 - 1j, -2 + 0.5j], np.complex64)
    np.testing.assert_allclose(jnp.mean(x), np.mean(x), rtol=1e-6)
    v = jnp.var(x)
    assert v.dtype == np.float32
    np.testing.assert_allclose(v, np.var(x), rtol=1e-6)
    np.testing.assert_allclose(jnp.std(x, ddof=1), np.std(x, ddof=1), rtol=1e-6)


# --------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("call, error, match", [
    (lambda: jnp.max(np.ones((0, 3))), ValueError, "zero-size array to reduction operation max"),
    (lambda: jnp.min(np.ones((0, 3)), axis=0), ValueError, "which has no identity"),
    (lambda: jnp.argmax(np.ones((0, 3))), ValueError, "argmax of an empty sequence"),
    (lambda: jnp.sum(np.ones((2, 3)), axis=2), ValueError, "out of bounds"),
    (lambda: jnp.sum(np.ones((2, 3)), axis=(0, -2)), ValueError, "duplicate value in 'axis'"),
    (lambda: jnp.sum(np.ones(3), where=np.ones(3)), ValueError, "where must be None or a "
                                                                 "boolean array"),
    (lambda: jnp.max(np.ones(3), where=np.ones(3, bool)), ValueError, "specify 'initial'"),
    (lambda: jnp.sum(np.ones(3), initial=np.ones(2)), ValueError, "must be a scalar"),
    (lambda: jnp.var(np.ones(3), ddof=1, correction=1), ValueError, "simultaneously"),
    (lambda: jnp.std(np.ones(3), dtype=np.int32), ValueError, "must be inexact"),
    (lambda: jnp.cumulative_sum(np.float32(1)), ValueError, "non-scalar"),
    (lambda: jnp.cumulative_sum(np.ones((2, 2))), ValueError, "axis was not set"),
    (lambda: jnp.quantile(np.ones(3), 0.5, method="foo"), ValueError, "method can only be"),
    (lambda: jnp.quantile(np.ones(3), np.ones((2, 2)) / 2), ValueError, "rank <= 1"),
    (lambda: jnp.quantile(np.ones(3), 1), TypeError, "floating-point"),
    (lambda: jnp.median(np.ones(3, np.complex64)), ValueError, "complex"),
    (lambda: jnp.sum(np.ones(3), out=np.ones(())), NotImplementedError, "'out' argument"),
    (lambda: jnp.sum([1, 2]), TypeError, "requires ndarray or scalar"),
    (lambda: jnp.average(np.ones((2, 3)), weights=np.ones(3)), ValueError, "Axis must be"),
    (lambda: jnp.average(np.ones((2, 3)), axis=0, weights=np.ones(3)), ValueError,
     "consistent with shape"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_max_of_empty_with_initial():
    np.testing.assert_array_equal(jnp.max(np.ones((0, 3), np.float32), axis=0, initial=2.0),
                                  [2.0, 2.0, 2.0])
    assert jnp.max(np.ones((0, 3)), axis=1).shape == (0,)


# --------------------------------------------------------------------------------------
# Derivatives (float64), tracing and array methods


def _distinct(shape, seed=0):
    """Well-separated values, so max/min/median/sort have no ties."""
    rng = np.random.default_rng(seed)
    return rng.permutation(math.prod(shape)).reshape(shape) * 0.37 + rng.random(shape) * 0.1


GRAD_FNS = {
    "sum": lambda x: jnp.sum(x, axis=(0, -1)),
    "prod": lambda x: jnp.prod(x, axis=1, keepdims=True),
    "mean": lambda x: jnp.mean(x, axis=0),
    "var": lambda x: jnp.var(x, axis=1, ddof=1),
    "std": lambda x: jnp.std(x),
    "max": lambda x: jnp.max(x, axis=0),
    "min": lambda x: jnp.min(x, axis=(0, 1)),
    "ptp": lambda x: jnp.ptp(x, axis=-1),
    "median": lambda x: jnp.median(x, axis=1),
    "quantile": lambda x: jnp.quantile(x, np.array([0.3, 0.8]), axis=0),
    "nanmean": lambda x: jnp.nanmean(x, axis=1),
    "nanvar": lambda x: jnp.nanvar(x),
    "nansum": lambda x: jnp.nansum(x, axis=0),
    "nanmax": lambda x: jnp.nanmax(x, axis=1),
    "cumsum": lambda x: jnp.cumsum(x, axis=1),
    "cumprod": lambda x: jnp.cumprod(x, axis=0),
    "average": lambda x: jnp.average(x, axis=1, weights=x[0] ** 2 + 1.0),
    "where": lambda x: jnp.sum(x, where=x > 0.5, axis=0),
}


@pytest.mark.parametrize("name", list(GRAD_FNS))
def test_grads(name):
    with enable_x64():
        check_grads(GRAD_FNS[name], (_distinct((3, 4)),), order=2, modes=("fwd", "rev"))


def test_grad_with_ties_matches_jax():
    """Reverse mode through max (tied in row 0), a logsumexp, cumprod, median and sort."""
    x = np.array([[0.5, 2.0, -1.0, 2.0], [1.5, -0.5, 2.0, 0.25], [1.0, 3.0, -2.0, 0.75]])

    def f(x):
        m = jnp.max(x, axis=1, keepdims=True)
        lse = jnp.log(jnp.sum(jnp.exp(x - m), axis=1)) + m[:, 0]
        sorted_even = jnp.sort(x, axis=1)[:, ::2] * np.arange(6.0).reshape(3, 2)
        return (jnp.sum(lse) + jnp.sum(jnp.cumprod(x, axis=0)[-1]) + jnp.median(x[0])
                + jnp.max(x[:, 1:3]) + jnp.sum(sorted_even) + jnp.var(x, axis=0).sum())

    with enable_x64():
        value, g = jax.value_and_grad(f)(x)
    np.testing.assert_allclose(float(value), 23.30293288, rtol=1e-9)  # JAX
    np.testing.assert_allclose(np.asarray(g), [  # jax.grad(f)(x), JAX 0.10.2
        [1.7648357321077712, 0.7732965609660334, -4.422539965150949, 1.2941298942993666],
        [4.159006682846594, 6.710741761665661, 4.092500134198226, 1.0933069768450745],
        [5.858487592424295, 1.8016209064610393, 0.8942901680699822, 0.41782355526690573]],
        rtol=1e-12)


TRACE_FNS = {
    **{n: getattr(jnp, n) for n in SIMPLE + NAN_FNS + [
        "var", "std", "max", "min", "ptp", "argmax", "argmin", "nanargmax", "nanargmin",
        "cumsum", "cumprod", "nancumsum", "nancumprod", "median", "nanmedian", "average"]},
    "quantile": lambda x: jnp.quantile(x, np.array([0.1, 0.9], np.float32), axis=0),
    "percentile": lambda x: jnp.nanpercentile(x, 30.0, axis=(0, 1), keepdims=True),
    "cumulative_sum": lambda x: jnp.cumulative_sum(x, axis=1, include_initial=True),
    "where": lambda x: jnp.max(x, axis=1, where=x > 0, initial=0.0),
}


@pytest.mark.parametrize("name", list(TRACE_FNS))
def test_make_jaxpr_matches_eager(name):
    x = _distinct((3, 4)).astype(np.float32)
    closed, shape = jax.make_jaxpr(TRACE_FNS[name], return_shape=True)(x)
    eager = TRACE_FNS[name](x)
    assert (shape.shape, shape.dtype) == (eager.shape, eager.dtype)


def test_jaxpr_of_integer_sum():
    jaxpr = jax.make_jaxpr(lambda x: jnp.sum(x, axis=(0, -1), keepdims=True))(
        np.ones((2, 3, 4), np.int8))
    text = str(jaxpr)
    assert "convert_element_type[new_dtype=int32 weak_type=False]" in text
    assert "reduce_sum[axes=(0, 2)" in text
    assert "i32[1,3,1]" in text


def test_argmax_jaxpr_flattens():
    text = str(jax.make_jaxpr(jnp.argmax)(np.ones((2, 3), np.float32)))
    assert "reshape" in text and "argmax[axes=(0,) index_dtype=int32]" in text


def test_array_methods():
    x = jnp.asarray(_distinct((2, 3)).astype(np.float32))
    xn = np.asarray(x)
    np.testing.assert_allclose(x.sum(axis=0), xn.sum(axis=0))
    np.testing.assert_allclose(x.mean(), xn.mean(), rtol=1e-6)
    np.testing.assert_allclose(x.std(ddof=1), xn.std(ddof=1), rtol=1e-5)
    np.testing.assert_allclose(x.cumsum(axis=1), xn.cumsum(axis=1), rtol=1e-6)
    assert int(x.argmax()) == int(xn.argmax())
    assert bool(x.any()) and x.max(keepdims=True).shape == (1, 1)
    np.testing.assert_allclose(x.ptp(axis=1), np.ptp(xn, axis=1))
