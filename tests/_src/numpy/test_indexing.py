"""NumPy indexing (`x[idx]`, `x.at[idx]`, take/put/compress...): values against NumPy on
hypothesis-drawn indices, traced indices, derivatives, and JAX's out-of-bounds semantics,
errors and lowerings (the literals below were produced by running JAX 0.10.2)."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import didax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.errors import ConcretizationTypeError, NonConcreteBooleanIndexError
from didax._src.numpy import indexing
from didax._src.transforms.api import jvp, make_jaxpr
from didax._src.transforms.public_test_util import check_grads

SETTINGS = settings(max_examples=60, deadline=None)

# --------------------------------------------------------------------------------------
# Drawing arrays and NumPy indices


@st.composite
def shape_and_index(draw, allow_bool=True):
    """A shape and a NumPy index for it mixing ints, slices, None, Ellipsis, integer arrays
    (several, broadcasting), lists, boolean masks and scalar booleans."""
    shape = tuple(draw(st.lists(st.sampled_from([1, 2, 3, 4, 3, 2, 0]), max_size=4)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))  # uniform index values
    entries, axis, used_ellipsis = [], 0, False
    for _ in range(draw(st.integers(1 if shape else 0, 5))):
        n = shape[axis] if axis < len(shape) else None
        if n is None and shape and draw(st.booleans()):
            break
        kinds = ["none"] + (["bool"] if allow_bool else [])
        if n is not None:  # (repeated kinds are drawn more often)
            kinds += ["slice", "slice", "array", "array", "array"]
            kinds += ["int", "int", "list"] if n else []
            kinds += ["mask"] if allow_bool else []
        if not used_ellipsis:
            kinds.append("ellipsis")
        kind = draw(st.sampled_from(kinds))
        if kind == "none":
            entries.append(None)
        elif kind == "bool":
            entries.append(draw(st.booleans()))
        elif kind == "ellipsis":
            used_ellipsis = True
            entries.append(Ellipsis)
            axis += draw(st.integers(0, len(shape) - axis))
        elif kind == "int":
            i = draw(st.integers(-n, n - 1))
            entries.append(draw(st.sampled_from([i, np.int32(i)])))
            axis += 1
        elif kind == "slice":
            bound = st.none() | st.integers(-n - 2, n + 2)
            step = draw(st.sampled_from([None, 1, 2, 3, -1, -2, -3]))
            entries.append(slice(draw(bound), draw(bound), step))
            axis += 1
        elif kind == "list":
            entries.append(rng.integers(-n, n, draw(st.integers(1, 3))).tolist())
            axis += 1
        elif kind == "array":
            ishape = (0,) if n == 0 else draw(st.sampled_from([(), (2,), (3,), (1, 2), (2, 1),
                                                               (0,)]))
            dtype = draw(st.sampled_from([np.int32, np.int64, np.int8, np.uint8]))
            low = 0 if dtype == np.uint8 else -n
            entries.append(rng.integers(low, max(n, 1), ishape).astype(dtype))
            axis += 1
        else:  # a boolean mask over one or two axes
            k = draw(st.integers(1, min(2, len(shape) - axis)))
            entries.append(rng.random(shape[axis:axis + k]) < 0.5)
            axis += k
    if len(entries) == 1 and not isinstance(entries[0], list) and draw(st.booleans()):
        return shape, entries[0]
    return shape, tuple(entries)


def numpy_getitem(x, idx):
    """NumPy's x[idx]; examples NumPy rejects (e.g. non-broadcasting arrays) are skipped."""
    try:
        return x[idx]
    except IndexError:
        assume(False)


def arange(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def split_dynamic(idx):
    """The index entries to pass as traced arguments (ints and integer arrays), and a
    function rebuilding the index from them."""
    entries = idx if isinstance(idx, tuple) else (idx,)
    pos = [k for k, e in enumerate(entries) if isinstance(e, (int, np.integer, np.ndarray, list))
           and not isinstance(e, bool)]
    args = [np.asarray(entries[k], np.int32) for k in pos]

    def rebuild(dyn):
        t = list(entries)
        for k, d in zip(pos, dyn):
            t[k] = d
        return tuple(t)

    return args, rebuild


# --------------------------------------------------------------------------------------
# x[idx] against NumPy


# ufunc.at applies repeated indices, like scatters
UPDATES = {"add": np.add.at, "multiply": np.multiply.at, "min": np.minimum.at,
           "max": np.maximum.at}


EXAMPLES = [
    np.array([0, -1, 2]),
    (np.array([[1, -2]]), slice(None), np.array([[0], [-1]])),
    (slice(None), np.array([-1, 1]), 2),
    (1, slice(None), np.array([[0], [-4]])),
    (np.array([2, 0]), Ellipsis, np.array([3, -1])),
    (Ellipsis, -1, np.array([-1, 0]), None),
    (None, 1, np.array([[True, False, True, False, True]] * 4)),
    (np.array([True, False, True]), None, slice(None, None, -2), np.array(-3)),
    (True, np.array([-3, 1]), True, 0),
    (False, Ellipsis, np.array([1])),
    (slice(-1, None, -2), [0, -1], slice(1, -1)),
    ([[0, -3], [2, 1]], np.uint8(1), slice(4, 0, -3)),
]


@pytest.mark.parametrize("idx", EXAMPLES)
def test_getitem_examples(idx):
    x = arange((3, 4, 5))
    expected = x[idx]
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[idx]), expected)
    for op, ufunc_at in UPDATES.items():
        updated = x.copy()
        ufunc_at(updated, idx, np.float32(2))
        np.testing.assert_array_equal(np.asarray(getattr(jnp.asarray(x).at[idx], op)(2.0)),
                                      updated)


@SETTINGS
@given(shape_and_index())
def test_getitem_matches_numpy(case):
    shape, idx = case
    x = arange(shape)
    expected = numpy_getitem(x, idx)
    out = jnp.asarray(x)[idx]
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)
    closed = make_jaxpr(lambda a: a[idx])(x)
    assert closed.jaxpr.out_avals[0].shape == expected.shape


@SETTINGS
@given(shape_and_index(allow_bool=False))
def test_getitem_with_traced_indices(case):
    shape, idx = case
    x = arange(shape)
    expected = numpy_getitem(x, idx)
    args, rebuild = split_dynamic(idx)
    closed = make_jaxpr(lambda a, *dyn: a[rebuild(dyn)])(x, *args)
    assert closed.jaxpr.out_avals[0].shape == expected.shape
    np.testing.assert_array_equal(np.asarray(closed(x, *args)[0]), expected)


@settings(max_examples=20, deadline=None)
@given(shape_and_index())
def test_getitem_float64(case):
    shape, idx = case
    with enable_x64():
        x = arange(shape, np.float64)
        expected = numpy_getitem(x, idx)
        out = jnp.asarray(x)[idx]
        assert out.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(out), expected)


def test_traced_scalar_index_lowers_to_dynamic_slice():
    x = arange((3, 4))
    for f, args, expected in [
        (lambda a, i: a[i], (2,), x[2]),
        (lambda a, i: a[i], (-1,), x[-1]),
        (lambda a, i: a[i, 1:3], (1,), x[1, 1:3]),
        (lambda a, i: a[i, ::-1], (-2,), x[-2, ::-1]),
        (lambda a, i, j: a[None, i, ..., j], (2, -3), x[None, 2, ..., -3]),
    ]:
        closed = make_jaxpr(f)(x, *args)
        assert "dynamic_slice" in [e.primitive.name for e in closed.jaxpr.eqns]
        np.testing.assert_array_equal(np.asarray(closed(x, *args)[0]), expected)
    # a 0-d index array takes the dynamic_slice path eagerly too
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[np.array(1), 2:]), x[1, 2:])


# --------------------------------------------------------------------------------------
# x.at[idx] against NumPy

@SETTINGS
@given(shape_and_index(), st.sampled_from(["set", "add", "multiply", "mul", "min", "max"]),
       st.booleans(), st.sampled_from([np.float32, np.int32]))
def test_at_updates_match_numpy(case, op, scalar_values, dtype):
    shape, idx = case
    x = arange(shape, dtype)
    target = numpy_getitem(x, idx)
    expected = x.copy()
    if op == "set":  # repeated targets get equal values: the result is well defined
        values = target * 2 + 1
        expected[idx] = values
    else:
        values = dtype(3) if scalar_values else (np.arange(target.size, dtype=dtype)
                                                 .reshape(target.shape) % 5 + 1)
        UPDATES["multiply" if op == "mul" else op](expected, idx, values)
    out = getattr(jnp.asarray(x).at[idx], op)(values)
    assert out.dtype == dtype and out.shape == x.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


@SETTINGS
@given(shape_and_index(allow_bool=False), st.sampled_from(["set", "add", "max"]))
def test_at_updates_with_traced_indices(case, op):
    shape, idx = case
    x = arange(shape)
    target = numpy_getitem(x, idx)
    expected = x.copy()
    if op == "set":
        expected[idx] = -1.0
    else:
        UPDATES[op](expected, idx, np.float32(-1))
    args, rebuild = split_dynamic(idx)
    closed = make_jaxpr(lambda a, *dyn: getattr(a.at[rebuild(dyn)], op)(-1.0))(x, *args)
    assert closed.jaxpr.out_avals[0].shape == x.shape
    np.testing.assert_array_equal(np.asarray(closed(x, *args)[0]), expected)
    assert target.shape == jnp.asarray(x).at[idx].get().shape


def test_at_divide_power_subtract_apply():
    x = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    i = (np.array([1, 1, 0]), np.array([2, 2, 0]))
    expected = x.copy()
    np.divide.at(expected, i, np.float32(2))
    np.testing.assert_allclose(np.asarray(jnp.asarray(x).at[i].divide(2.0)), expected)
    expected = x.copy()
    np.power.at(expected, (1, slice(None)), np.float32(2))
    np.testing.assert_allclose(np.asarray(jnp.asarray(x).at[1, :].power(2.0)), expected)
    expected = x.copy()
    np.subtract.at(expected, i, np.float32(3))
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x).at[i].subtract(3.0)), expected)
    expected = x.copy()
    expected[:, ::2] = np.sin(expected[:, ::2])
    np.testing.assert_allclose(np.asarray(jnp.asarray(x).at[:, ::2].apply(jnp.sin)), expected,
                               rtol=1e-6)


def test_at_results_match_jax():
    x = jnp.arange(5.0)
    cases = [
        (jnp.arange(5.0).at[::-2].set(jnp.array([10.0, 20.0, 30.0])), [30, 1, 20, 3, 10]),
        (x.at[jnp.array([1, 3])].apply(lambda v: v * 10), [0, 10, 2, 30, 4]),
        (jnp.arange(4.0).at[jnp.array([2, 2])].power(2.0), [0, 1, 16, 3]),
        (jnp.arange(4.0).at[jnp.array([2, 2, 3])].min(jnp.array([1.0, 0.5, 9.0])),
         [0, 1, 0.5, 3]),
        (jnp.arange(4.0).at[jnp.array([2, 2, 3])].max(jnp.array([1.0, 5.0, 9.0])), [0, 1, 5, 9]),
        (jnp.arange(6.0).reshape(2, 3).at[None, 1, None].set(jnp.array([[[7.0, 8.0, 9.0]]])),
         [[0, 1, 2], [7, 8, 9]]),
        (jnp.arange(6.0).reshape(2, 3).at[True, 1].add(1.0), [[0, 1, 2], [4, 5, 6]]),
        (jnp.arange(6.0).reshape(2, 3).at[False].add(1.0), [[0, 1, 2], [3, 4, 5]]),
    ]
    for out, expected in cases:
        np.testing.assert_array_equal(np.asarray(out), np.asarray(expected, np.float32))


def test_at_dtypes_and_weak_types_match_jax():
    out = jnp.arange(4).at[1].mul(2.7)  # computed in float32, cast back
    assert out.dtype == np.int32 and out.tolist() == [0, 2, 2, 3]
    out = jnp.arange(4).at[jnp.array([1, 1])].divide(2)
    assert out.dtype == np.float32 and out.tolist() == [0, 0.25, 2, 3]
    out = jnp.arange(4).at[jnp.array([2, 2])].subtract(1)
    assert out.dtype == np.int32 and out.tolist() == [0, 1, 0, 3]
    out = jnp.arange(3, dtype=jnp.uint8).at[0].add(-1)
    assert out.dtype == np.uint8 and out.tolist() == [255, 1, 2]
    out = jnp.arange(5, dtype=jnp.int8).at[0].set(300)
    assert out.dtype == np.int8 and out.tolist() == [44, 1, 2, 3, 4]
    out = jnp.zeros(3, bool).at[0].set(1)
    assert out.dtype == np.bool_ and out.tolist() == [True, False, False]
    weak = jnp.asarray(3.0)
    assert weak.at[()].add(1).weak_type and float(weak.at[()].add(1)) == 4.0
    assert weak[None].weak_type and weak[None].shape == (1,)
    assert not jnp.arange(3.0)[jnp.array([1])].weak_type


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, order 2, float64)

GRAD_INDICES = [
    (np.array([0, -1, 2]),),
    (slice(None), np.array([[1, -2]]), None),
    (np.array([1, 0]), Ellipsis, np.array([[-1], [2]])),
    (1, slice(None, None, -2), np.array([3, 0])),
    (np.array(2), slice(1, 3)),
    (np.array([[True, False, True, True]] * 3),),
    (True, 0, None, slice(4, 0, -3)),
]


@pytest.mark.parametrize("idx", GRAD_INDICES)
def test_getitem_derivatives(idx):
    with enable_x64():
        x = np.random.default_rng(0).standard_normal((3, 4, 5))
        check_grads(lambda a: jnp.asarray(a)[idx], (x,), order=2, modes=("fwd", "rev"))


UPDATE_INDICES = [
    (np.array([0, 2]), slice(1, 3)),
    (1, Ellipsis),
    (np.array([[0], [2]]), np.array([1, 3])),
    (slice(None, None, -1), None, 2),
]


@pytest.mark.parametrize("idx", UPDATE_INDICES)
@pytest.mark.parametrize("op", ["set", "add", "multiply", "min", "max"])
def test_at_update_derivatives(idx, op):
    with enable_x64():
        rng = np.random.default_rng(1)
        x = rng.standard_normal((3, 4))
        v = rng.standard_normal(x[idx].shape)
        # scatter-mul differentiates in the updates only for unique indices (as in JAX)
        kw = {"unique_indices": True} if op == "multiply" else {}
        check_grads(lambda a, b: getattr(jnp.asarray(a).at[idx], op)(b, **kw), (x, v), order=2,
                    modes=("fwd", "rev"))


def test_boolean_mask_under_jvp_of_concrete_values():
    x = np.array([-1.0, 2.0, -3.0, 4.0], np.float32)
    out, t = jvp(lambda a: a[a > 0] * 2, (x,), (np.ones(4, np.float32),))
    np.testing.assert_array_equal(np.asarray(out), [4.0, 8.0])
    np.testing.assert_array_equal(np.asarray(t), [2.0, 2.0])


# --------------------------------------------------------------------------------------
# Out-of-bounds semantics (gathers clamp, scatters drop) and modes, as JAX


def test_out_of_bounds_match_jax():
    x = jnp.arange(5.0)
    x2 = jnp.arange(10.0).reshape(2, 5)
    scalars = [
        (x[10], 4.0), (x[-6], 0.0), (x.at[10].get(), 4.0), (x.at[10].get(mode="clip"), 4.0),
        (x.at[10].get(mode="fill", fill_value=-1), -1.0),
        (x.at[-1].get(wrap_negative_indices=False), 0.0),
        (x2.at[-1, 0].get(wrap_negative_indices=False), 0.0),
        (x2.at[1, -1].get(wrap_negative_indices=False), 5.0),
        (jnp.arange(3).at[5].get(mode="fill"), -2147483648),
        (jnp.arange(3, dtype=jnp.uint8).at[5].get(mode="fill"), 255),
        (jnp.zeros(3, bool).at[5].get(mode="fill"), True),
    ]
    for out, expected in scalars:
        assert out.item() == expected
    assert np.isnan(x.at[10].get(mode="fill").item())
    assert np.isnan(x.at[-1].get(wrap_negative_indices=False, mode="fill").item())
    arrays = [
        (x[np.array([10, -7])], [4.0, 0.0]),
        (x.at[10].set(1.0), [0, 1, 2, 3, 4]),
        (x.at[-10].set(1.0), [0, 1, 2, 3, 4]),
        (x.at[-1].set(9.0, wrap_negative_indices=False), [0, 1, 2, 3, 4]),
        (x.at[10].add(10.0, mode="clip"), [0, 1, 2, 3, 14]),
        (x.at[jnp.array([7]), ].get(mode="clip"), [4.0]),
        (x2.at[3, 1:4].get(), [6, 7, 8]),
        (x2.at[1, 2:4].get(mode="fill", fill_value=7), [7, 8]),
        (x2.at[::-1, ::-2].get(mode="fill"), [[9, 7, 5], [4, 2, 0]]),
        (jnp.zeros((2, 3)).at[5, -9].set(1.0, mode="clip"), [[0, 0, 0], [1, 0, 0]]),
        (jnp.zeros((2, 3)).at[jnp.array([0, 2]), jnp.array([1, 1])].set(1.0),
         [[0, 1, 0], [0, 0, 0]]),
    ]
    for out, expected in arrays:
        np.testing.assert_array_equal(np.asarray(out), np.asarray(expected, np.float32))
    assert np.isnan(np.asarray(x2.at[3, 1:4].get(mode="fill"))).all()


def test_traced_out_of_bounds_indices_clamp():
    x = np.arange(5.0, dtype=np.float32)
    x2 = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    closed = make_jaxpr(lambda a, i: a[i])(x, 0)
    assert closed(x, 10)[0].item() == 4.0 and closed(x, -10)[0].item() == 0.0
    closed = make_jaxpr(lambda a, i: a[i, 2:])(x2, 0)
    np.testing.assert_array_equal(np.asarray(closed(x2, 10)[0]), [10.0, 11.0])
    closed = make_jaxpr(lambda a, i: a.at[i].set(-1.0))(x, 0)
    np.testing.assert_array_equal(np.asarray(closed(x, 7)[0]), x)  # dropped


# --------------------------------------------------------------------------------------
# Lowerings: the printed jaxprs of JAX

JAX_X0 = """{ lambda ; a:f32[5]. let
    b:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
    c:f32[] = squeeze[dimensions=(0,)] b
  in (c,) }"""
JAX_X1_3 = """{ lambda ; a:f32[5]. let
    b:f32[2] = slice[limit_indices=(3,) start_indices=(1,) strides=None] a
  in (b,) }"""
JAX_REV = """{ lambda ; a:f32[5]. let
    b:f32[3] = slice[limit_indices=(5,) start_indices=(0,) strides=(2,)] a
    c:f32[3] = rev[dimensions=(0,)] b
  in (c,) }"""
JAX_NEWAXIS = """{ lambda ; a:f32[3,4]. let
    b:f32[1,4] = slice[limit_indices=(2, 4) start_indices=(1, 0) strides=None] a
    c:f32[4] = squeeze[dimensions=(0,)] b
    d:f32[1,4,1] = broadcast_in_dim[broadcast_dimensions=(1,)] c
  in (d,) }"""


def test_printed_jaxprs_match_jax():
    x = np.ones(5, np.float32)
    assert str(make_jaxpr(lambda a: a[0])(x)) == JAX_X0
    assert str(make_jaxpr(lambda a: a[1:3])(x)) == JAX_X1_3
    assert str(make_jaxpr(lambda a: a[::-2])(x)) == JAX_REV
    assert str(make_jaxpr(lambda a: a[None, 1, ..., None])(np.ones((3, 4), np.float32))) == (
        JAX_NEWAXIS)
    assert str(make_jaxpr(lambda a: a[...])(x)) == "{ lambda ; a:f32[5]. let  in (a,) }"


def test_lowering_primitives():
    def prims(f, *args):
        return [e.primitive.name for e in make_jaxpr(f)(*args).jaxpr.eqns]

    x = np.ones(5, np.float32)
    assert prims(lambda a, i: a[i], x, np.array([0, -1])) == [
        "lt", "add", "select_n", "broadcast_in_dim", "gather"]
    assert prims(lambda a, i: a[i], x, 2) == ["lt", "add", "select_n", "dynamic_slice",
                                              "squeeze"]
    assert prims(lambda a: a.at[0].set(2.0), x) == ["broadcast_in_dim", "scatter"]
    assert prims(lambda a: a.at[1:3].add(2.0), x) == ["broadcast_in_dim", "broadcast_in_dim",
                                                      "scatter-add"]
    gather = make_jaxpr(lambda a, i: a[i])(x, np.array([0])).jaxpr.eqns[-1]
    assert gather.params["mode"] is indexing.GatherScatterMode.PROMISE_IN_BOUNDS
    scatter = make_jaxpr(lambda a: a.at[0].set(2.0))(x).jaxpr.eqns[-1]
    assert scatter.params["mode"] is indexing.GatherScatterMode.FILL_OR_DROP
    assert scatter.params["unique_indices"] and scatter.params["indices_are_sorted"]


# --------------------------------------------------------------------------------------
# Errors

ERRORS = [
    ([0, 1], TypeError, "non-tuple sequence"),
    ([0, slice(None)], TypeError, r"arr\[tuple\(seq\)\]"),
    (range(2), TypeError, "non-tuple sequence"),
    (1.0, TypeError, "integer or boolean type"),
    (np.float32(1), TypeError, "integer or boolean type"),
    (np.array([1.0]), TypeError, "integer or boolean type"),
    ("a", TypeError, "string indexing"),
    (object(), IndexError, "valid indices"),
    ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
    ((0, 0, 0), IndexError, "Too many indices"),
    (np.array([True, False]), IndexError, "boolean index did not match"),
    (slice(1, 3, 0), ValueError, "step cannot be zero"),
]


@pytest.mark.parametrize("idx,exc,match", ERRORS)
def test_getitem_errors(idx, exc, match):
    x = jnp.ones((3, 4))
    with pytest.raises(exc, match=match):
        x[idx]
    with pytest.raises(exc, match=match):
        x.at[idx].set(0.0)


def test_more_errors():
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        jnp.zeros(0)[0]
    with pytest.raises(IndexError, match="Slice entries must be static integers"):
        make_jaxpr(lambda a, i: a[i:])(np.ones(3), 1)
    with pytest.raises(ValueError, match=r"x.at\[0:2\].set\(values\): values of shape \(3,\) "
                                         r"do not broadcast to .* \(2,\)"):
        jnp.ones(5).at[0:2].set(jnp.ones(3))
    with pytest.raises(ValueError, match="must be a scalar"):
        jnp.ones(5).at[9].get(mode="fill", fill_value=np.ones(2))
    with pytest.raises(ValueError, match="Unknown gather mode"):
        jnp.ones(5).at[1].get(mode="bad")


def test_traced_boolean_mask_error():
    for f in (lambda a: a[a > 0], lambda a: a.at[a > 0].set(0.0), lambda a: a[a[0] > 0]):
        with pytest.raises(NonConcreteBooleanIndexError, match="must be concrete") as info:
            make_jaxpr(f)(np.ones(4, np.float32))
        assert isinstance(info.value, IndexError)
        assert "jnp.where" in str(info.value) and "size" in str(info.value)


# --------------------------------------------------------------------------------------
# take, take_along_axis, put, put_along_axis, compress


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_take_matches_numpy(shape, data):
    x = arange(shape)
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    n = x.size if axis is None else shape[axis]
    ishape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(ishape)),
                                      max_size=int(np.prod(ishape)))), np.int32).reshape(ishape)
    np.testing.assert_array_equal(np.asarray(jnp.take(x, idx, axis=axis)),
                                  np.take(x, idx, axis=axis))
    mode = data.draw(st.sampled_from(["clip", "wrap"]))
    wild = idx * 3  # out of bounds too
    np.testing.assert_array_equal(np.asarray(jnp.take(x, wild, axis=axis, mode=mode)),
                                  np.take(x, wild, axis=axis, mode=mode))


def test_take_match_jax():
    x = jnp.arange(5.0)
    i = jnp.array([1, 7, -1])
    np.testing.assert_array_equal(np.asarray(jnp.take(x, i)), [1.0, np.nan, 4.0])
    np.testing.assert_array_equal(np.asarray(jnp.take(x, i, mode="clip")), [1.0, 4.0, 0.0])
    np.testing.assert_array_equal(np.asarray(jnp.take(x, i, mode="wrap")), [1.0, 2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(jnp.take(x, jnp.array([0, 9]), fill_value=-2.0)),
                                  [0.0, -2.0])
    assert jnp.take(jnp.arange(5), jnp.array([9])).tolist() == [-2147483648]
    out = jnp.take(jnp.arange(5), 2)
    assert out.shape == () and out.item() == 2 and out.dtype == np.int32
    assert jnp.take(jnp.ones((2, 3)), jnp.array([], np.int32), axis=1).shape == (2, 0)
    with pytest.raises(IndexError, match="empty axis"):
        jnp.take(jnp.zeros((0, 3)), jnp.array([0]), axis=0)
    with pytest.raises(ValueError, match="Invalid mode"):
        jnp.take(x, jnp.array([0]), mode="bad")
    with pytest.raises(NotImplementedError):
        jnp.take(x, jnp.array([0]), mode="raise")
    with pytest.raises(TypeError, match="requires ndarray"):
        jnp.take(x, [0, 1])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_take_along_axis_matches_numpy(shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 100)))
    x = rng.standard_normal(shape).astype(np.float32)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    idx = np.argsort(x, axis=axis)
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(x, idx, axis=axis)),
                                  np.take_along_axis(x, idx, axis=axis))
    idx = idx - shape[axis]  # negative indices wrap
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(x, idx, axis=axis)),
                                  np.take_along_axis(x, idx, axis=axis))


def test_take_along_axis_match_jax():
    x = jnp.arange(6.0).reshape(2, 3)
    nan = np.nan
    cases = [
        (jnp.take_along_axis(x, jnp.array([[0, -1, 5]]), axis=1), [[0, 2, nan], [3, 5, nan]]),
        (jnp.take_along_axis(x, jnp.array([[2], [0]]), axis=1), [[2], [3]]),
        (jnp.take_along_axis(x, jnp.array([5, 0, -1]), axis=None), [5, 0, 5]),
        (jnp.take_along_axis(x, jnp.array([[7, -7]]), axis=1, mode="clip"), [[2, 0], [5, 3]]),
        (jnp.take_along_axis(jnp.arange(24.0).reshape(2, 3, 4), jnp.array([[[0], [3], [1]]]),
                             axis=2), [[[0], [7], [9]], [[12], [19], [21]]]),
        (jnp.take_along_axis(jnp.ones((2, 0)), jnp.ones((2, 3), np.int32), axis=1),
         np.zeros((2, 3))),
    ]
    for out, expected in cases:
        np.testing.assert_array_equal(np.asarray(out), np.asarray(expected, np.float32))
    with pytest.raises(ValueError, match="same number of dimensions"):
        jnp.take_along_axis(x, jnp.array([5, 0]), axis=1)
    with pytest.raises(TypeError, match="integer type"):
        jnp.take_along_axis(x, jnp.array([[1.0]]), axis=1)


def test_take_functions_trace_and_differentiate():
    with enable_x64():
        x = np.random.default_rng(2).standard_normal((3, 4))
        i = np.array([[2, 0, -1, 1]])
        check_grads(lambda a: jnp.take(a, np.array([3, -1, 0]), axis=1), (x,), order=2,
                    modes=("fwd", "rev"))
        check_grads(lambda a: jnp.take_along_axis(a, i, axis=0), (x,), order=2,
                    modes=("fwd", "rev"))
        closed = make_jaxpr(lambda a, j: jnp.take_along_axis(a, j, axis=0))(x, i)
        np.testing.assert_array_equal(np.asarray(closed(x, i)[0]),
                                      np.take_along_axis(x, i, axis=0))


def test_put_matches_numpy_and_jax():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    ind, v = np.array([0, 5, 2, 4]), np.array([10.0, 20.0], np.float32)
    expected = x.copy()
    np.put(expected, ind, v)
    np.testing.assert_array_equal(np.asarray(jnp.put(x, ind, v, inplace=False)), expected)
    five = jnp.arange(5.0)
    cases = [
        (jnp.put(five, jnp.array([-1, 7]), 9.0, inplace=False), [0, 1, 2, 3, 9]),
        (jnp.put(five, jnp.array([-1, 7]), 9.0, mode="clip", inplace=False), [9, 1, 2, 3, 9]),
        (jnp.put(five, jnp.array([-1, 7]), 9.0, mode="wrap", inplace=False), [0, 1, 9, 3, 9]),
        (jnp.put(five, jnp.array([-7, -6, 5, 6]), 9.0, inplace=False), [9, 1, 2, 3, 9]),
        (jnp.put(jnp.zeros((2, 3)), jnp.array([-7, -1, 6, 9]), 9.0, inplace=False),
         [[9, 0, 0], [0, 0, 9]]),
    ]
    for out, expected in cases:
        np.testing.assert_array_equal(np.asarray(out), np.asarray(expected, np.float32))
    out = jnp.put(jnp.arange(5), jnp.array([1]), 9.5, inplace=False)
    assert out.dtype == np.int32 and out.tolist() == [0, 9, 2, 3, 4]
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put(five, jnp.array([1]), 9.0)


def test_put_along_axis():
    x = np.zeros((2, 3), np.float32)
    i = np.array([[1], [2]])
    expected = x.copy()
    np.put_along_axis(expected, i, 5.0, axis=1)
    out = jnp.put_along_axis(x, i, 5.0, axis=1, inplace=False)
    np.testing.assert_array_equal(np.asarray(out), expected)
    out = jnp.put_along_axis(x, jnp.array([1, 5]), jnp.array([5.0, 6.0]), axis=None,
                             inplace=False)
    np.testing.assert_array_equal(np.asarray(out), [[0, 5, 0], [0, 0, 6]])
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put_along_axis(x, i, 5.0, axis=1)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_compress_matches_numpy(shape, data):
    x = arange(shape)
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    n = x.size if axis is None else shape[axis]
    cond = np.array(data.draw(st.lists(st.booleans(), min_size=1, max_size=n)))
    np.testing.assert_array_equal(np.asarray(jnp.compress(cond, x, axis=axis)),
                                  np.compress(cond, x, axis=axis))


def test_compress_match_jax():
    x = jnp.arange(12).reshape(3, 4)
    out = jnp.compress(jnp.array([False, True, True]), x, axis=1, size=3, fill_value=-1)
    np.testing.assert_array_equal(np.asarray(out), [[1, 2, -1], [5, 6, -1], [9, 10, -1]])
    assert jnp.compress(jnp.array([0, 2]), jnp.arange(4)).tolist() == [1]
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.compress(jnp.array([True, False, True, False, True]), jnp.arange(4))
    with pytest.raises(ValueError, match="1D"):
        jnp.compress(jnp.ones((2, 2), bool), jnp.arange(4))
    # with a static size, the condition may be traced
    cond = np.array([True, False, True])
    closed = make_jaxpr(lambda c, a: jnp.compress(c, a, axis=0, size=2))(cond, x)
    np.testing.assert_array_equal(np.asarray(closed(cond, x)[0]), np.asarray(x)[[0, 2]])
    with pytest.raises(ConcretizationTypeError):
        make_jaxpr(lambda c, a: jnp.compress(c, a, axis=0))(cond, x)


# --------------------------------------------------------------------------------------
# Index helpers


def test_ix_():
    x = arange((3, 4))
    rows, cols = np.array([2, 0]), np.array([1, 3, 0])
    out = jnp.ix_(rows, cols)
    for a, b in zip(out, np.ix_(rows, cols)):
        np.testing.assert_array_equal(np.asarray(a), b)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[out]), x[np.ix_(rows, cols)])
    empty = jnp.ix_(jnp.array([], np.int32), jnp.array([2]))
    assert empty[0].shape == (0, 1) and empty[0].dtype == np.int32
    with pytest.raises(NotImplementedError):
        jnp.ix_(jnp.array([True]))
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.ix_(jnp.ones((2, 2), np.int32))
    with pytest.raises(TypeError, match="requires ndarray"):
        jnp.ix_([0, 1])


@pytest.mark.parametrize("x64", [False, True])
def test_triangle_and_diagonal_indices(x64):
    int_dtype = np.int64 if x64 else np.int32
    with enable_x64(x64):
        for shape, k in [((3, 4), 1), ((3, 2), -1), ((4, 4), 0)]:
            for ours, theirs in [(jnp.tril_indices_from, np.tril_indices_from),
                                 (jnp.triu_indices_from, np.triu_indices_from)]:
                for a, b in zip(ours(np.ones(shape), k=k), theirs(np.ones(shape), k=k)):
                    assert a.dtype == int_dtype
                    np.testing.assert_array_equal(np.asarray(a), b)
        out = jnp.diag_indices_from(jnp.ones((3, 3, 3)))
        assert len(out) == 3 and all(a.dtype == int_dtype for a in out)
        for a, b in zip(out, np.diag_indices_from(np.ones((3, 3, 3)))):
            np.testing.assert_array_equal(np.asarray(a), b)
        i, j = jnp.mask_indices(3, jnp.triu, 1)
        assert i.dtype == int_dtype and i.tolist() == [0, 0, 1] and j.tolist() == [1, 2, 2]
    i, j = jnp.mask_indices(3, jnp.triu, 1, size=5)
    assert i.tolist() == [0, 0, 1, 0, 0] and j.tolist() == [1, 2, 2, 0, 0]
    with pytest.raises(ValueError, match="2-D"):
        jnp.tril_indices_from(jnp.ones((3, 2, 2)))
    with pytest.raises(ValueError, match="equal length"):
        jnp.diag_indices_from(jnp.ones((3, 2)))
    with pytest.raises(ValueError, match="at least 2-d"):
        jnp.diag_indices_from(jnp.ones(3))


def test_index_expressions_and_exports():
    assert jnp.s_[1:2, ::-1] == np.s_[1:2, ::-1]
    assert jnp.index_exp[3] == np.index_exp[3]
    assert set(indexing.__all__) == {"take", "take_along_axis", "put", "put_along_axis",
                                     "place"}
    x = jnp.arange(3.0)
    assert isinstance(x.at, indexing.IndexUpdateHelper)
    assert repr(x.at[1]).startswith("_IndexUpdateRef(")


# --------------------------------------------------------------------------------------
# place


@pytest.mark.parametrize("vals", [[10, 20], [7], [1, 2, 3, 4, 5, 6, 7]])
def test_place_matches_numpy(vals):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    mask = (a % 3 == 0)
    want = a.copy()
    np.place(want, mask, vals)
    got = jnp.place(a, mask, np.array(vals), inplace=False)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert got.dtype == a.dtype
    traced = didax.jit(lambda a, m: jnp.place(a, m, np.array(vals), inplace=False))(a, mask)
    np.testing.assert_array_equal(np.asarray(traced), want)
    assert jnp.place(np.ones(3, np.int8), np.array([1, 0, 1], bool), np.array([2.7]),
                     inplace=False).dtype == np.int8  # JAX: vals take arr's dtype


def test_place_derivatives_and_errors():
    with enable_x64():
        a, v = np.arange(6.0).reshape(2, 3), np.array([0.5, -1.5])
        mask = np.array([[True, False, True], [False, True, False]])
        check_grads(lambda a, v: jnp.place(a, mask, v, inplace=False), (a, v), order=2,
                    modes=("fwd", "rev"))
    with pytest.raises(ValueError, match="in-place"):
        jnp.place(np.ones(3), np.ones(3, bool), np.ones(1))
    with pytest.raises(ValueError, match="same size"):
        jnp.place(np.ones(3), np.ones(2, bool), np.ones(1), inplace=False)
    with pytest.raises(ValueError, match="empty array"):
        jnp.place(np.ones(3), np.ones(3, bool), np.ones(0), inplace=False)
    assert jnp.place(np.ones(0), np.ones(0, bool), np.ones(1), inplace=False).shape == (0,)


# --------------------------------------------------------------------------------------
# Derivatives at out-of-bounds indices, against JAX

OOB_X = np.arange(5.0, dtype=np.float32) + 1
OOB_IDX = np.array([1, 9, -7, 4, 4, -1])
OOB_UPDATES = np.array([10.0, -20.0, 30.0, 40.0, 50.0, 60.0], np.float32)
UPDATE_OPS = ["set", "add", "subtract", "min", "max"]  # (multiply: unique indices only)


def test_reported_gather_gradient_as_jax():
    """The forward gather clamps index 9 to 4; the transposed scatter-add drops it."""
    from jax_testing import assert_as_jax

    def program(jax, jnp, lax, x):
        return jax.grad(lambda x: jnp.sum(x[jnp.array([1, 9, 9])] ** 2))(x)

    assert_as_jax(program, np.arange(5.0, dtype=np.float32))


@pytest.mark.parametrize("mode", [None, "clip", "fill", "drop", "promise_in_bounds"])
def test_reverse_mode_out_of_bounds_as_jax(mode):
    """Gradients of gathers (x[idx], x.at[idx].get, take) and of every .at[] update with
    out-of-bounds indices in each mode: JAX transposes a gather to a scatter-add in the
    same mode and a scatter to a gather in the same mode (in PROMISE_IN_BOUNDS, the
    default, gathers clamp and scatters drop, so their transposes do the other)."""
    from jax_testing import assert_as_jax

    def program(jax, jnp, lax, x, i, u):
        def loss(x, u):
            terms = [x.at[i].get(mode=mode)]
            if mode in (None, "clip", "fill"):
                terms.append(jnp.take(x, i, mode=mode))
            terms += [getattr(x.at[i], op)(u, mode=mode) for op in UPDATE_OPS
                      if not (mode == "clip" and op in ("min", "max"))]
            return sum(jnp.sum(t ** 2) for t in terms)

        return jax.grad(loss, (0, 1))(x, u)

    assert_as_jax(program, OOB_X, OOB_IDX, OOB_UPDATES, rtol=1e-6)


def test_scatter_extremal_gradients_under_clip_are_finite():
    """A deliberate difference: JAX counts the updates of scatter-min/max with the default
    (dropping) mode, so under CLIP its gradients divide by zero counts (inf, NaN); didax
    counts in the scatter's own mode, and gives the derivative of what runs."""
    x = jnp.asarray(OOB_X)
    for op in ("min", "max"):
        gx, gu = didax.grad(lambda x, u, op=op: jnp.sum(
            getattr(x.at[OOB_IDX], op)(u, mode="clip") ** 2), (0, 1))(x, jnp.asarray(OOB_UPDATES))
        assert np.isfinite(np.asarray(gx)).all() and np.isfinite(np.asarray(gu)).all()
    # min: index 9 clips to 4, where update -20 wins; index -7 wraps to -2 and clips to 0
    np.testing.assert_array_equal(np.asarray(gx), [0, 0, 6, 8, 0])  # max: 1 and 2 win there
    np.testing.assert_array_equal(np.asarray(gu), [20, 0, 60, 0, 0, 120])


def test_dynamic_slice_gradients_at_clamped_starts_as_jax():
    """Starts past either end are clamped, and so are their transposes: the cotangent lands
    where the clamped window read (as in JAX), under jit and vmap too."""
    from jax_testing import assert_as_jax

    def program(jax, jnp, lax, x, u, s):
        def loss(x, u, s):
            return (jnp.sum(lax.dynamic_slice(x, (s,), (3,)) ** 2)
                    + jnp.sum(lax.dynamic_update_slice(x, u, (s,)) ** 3)
                    + lax.dynamic_index_in_dim(x, s, keepdims=False) ** 2)

        return [jax.grad(loss, (0, 1))(x, u, k) for k in s] + [
            jax.vmap(jax.grad(loss, (0, 1)), (None, None, 0))(x, u, s)]

    assert_as_jax(program, OOB_X, OOB_UPDATES[:3], np.array([-7, -3, 0, 3, 4, 9], np.int32))
