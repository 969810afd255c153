"""conv_general_dilated: values against a direct-loop reference over hypothesis-drawn layouts,
strides, dilations, paddings and groups; cases, helpers and jaxpr text as printed by JAX 0.10.2
(kept as literals); abstract-eval errors; derivatives in both modes against finite
differences; transposes against the adjoint identity over the same hypothesis cases."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from didax._src.config import enable_x64
from didax._src.lax.conv import (
    ConvDimensionNumbers,
    conv,
    conv_dimension_numbers,
    conv_general_dilated,
    conv_with_general_padding,
    padtype_to_pads,
)
from didax._src.transforms import api
from didax._src.transforms.public_test_util import check_grads


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


def conv_reference(x, w, strides, padding, lhs_dilation, rhs_dilation, feature_group_count=1,
                   batch_group_count=1):
    """XLA's convolution, one output element at a time, in the canonical layout
    x: (N, C, spatial...), w: (O, I, window...)."""
    n, o, i = x.shape[0], w.shape[0], w.shape[1]
    spatial, window = x.shape[2:], w.shape[2:]
    sizes = [lo + (s - 1) * d + 1 + hi if s else lo + hi
             for s, d, (lo, hi) in zip(spatial, lhs_dilation, padding)]
    extent = [(k - 1) * r + 1 for k, r in zip(window, rhs_dilation)]
    out_spatial = [max((p - e) // s + 1, 0) for p, e, s in zip(sizes, extent, strides)]
    n_out = n // batch_group_count
    out = np.zeros((n_out, o) + tuple(out_spatial), np.result_type(x, w))
    for b, f, *pos in itertools.product(range(n_out), range(o), *map(range, out_spatial)):
        feature_group = f // (o // feature_group_count)
        batch = f // (o // batch_group_count) * n_out + b
        total = 0
        for c, *k in itertools.product(range(i), *map(range, window)):
            idx = []
            for p, kk, s, r, (lo, _), d, size in zip(pos, k, strides, rhs_dilation, padding,
                                                     lhs_dilation, spatial):
                q = p * s + kk * r - lo  # position in the dilated (unpadded) input
                if q < 0 or q % d or q // d >= size:
                    break
                idx.append(q // d)
            else:
                total += x[(batch, feature_group * i + c) + tuple(idx)] * w[(f, c) + tuple(k)]
        out[(b, f) + tuple(pos)] = total
    return out


SPECS = {
    1: [("NCH", "OIH", "NCH"), ("NHC", "HIO", "NHC"), ("HCN", "IHO", "CNH")],
    2: [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("NHWC", "OIWH", "CWNH")],
    3: [("NCDHW", "OIDHW", "NCDHW"), ("NDHWC", "DHWIO", "NDHWC")],
}


def _to_layout(canonical, spec):
    """The array in `spec`'s layout whose transpose by `spec` is `canonical`."""
    return np.transpose(canonical, np.argsort(spec))


@st.composite
def conv_cases(draw):
    nsp = draw(st.integers(1, 3))
    small = st.integers(1, 3 if nsp == 3 else 5)
    groups = draw(st.sampled_from(["none", "feature", "batch"]))
    g = draw(st.integers(2, 3)) if groups != "none" else 1
    fgc, bgc = (g, 1) if groups == "feature" else (1, g)
    n = bgc * draw(st.integers(1, 2))
    c = fgc * draw(st.integers(1, 2))
    o = g * draw(st.integers(1, 2))
    spatial = [draw(small) for _ in range(nsp)]
    window = [draw(st.integers(1, 2 if nsp == 3 else 3)) for _ in range(nsp)]
    strides = [draw(st.integers(1, 3)) for _ in range(nsp)]
    lhs_dil = [draw(st.integers(1, 2)) for _ in range(nsp)]
    rhs_dil = [draw(st.integers(1, 2)) for _ in range(nsp)]
    if all(d == 1 for d in lhs_dil) and draw(st.booleans()):
        padding = draw(st.sampled_from(["SAME", "VALID", "SAME_LOWER"]))
    else:
        padding = []
        for s, d in zip(spatial, lhs_dil):
            lo, hi = draw(st.integers(-1, 2)), draw(st.integers(-1, 2))
            padding.append((lo, max(hi, -((s - 1) * d + 1 + lo))))
    specs = draw(st.sampled_from(SPECS[nsp]))
    return dict(x=(n, c, *spatial), w=(o, c // fgc, *window), strides=strides, padding=padding,
                lhs_dilation=lhs_dil, rhs_dilation=rhs_dil, fgc=fgc, bgc=bgc, specs=specs)


@settings(max_examples=50, deadline=None)
@given(conv_cases(), st.sampled_from([np.float64, np.int32]), st.integers(0, 2 ** 16))
def test_matches_direct_reference(case, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, case["x"]).astype(dtype)
    w = rng.integers(-3, 4, case["w"]).astype(dtype)
    padding = case["padding"]
    explicit = padding
    if isinstance(padding, str):
        window = [(k - 1) * r + 1 for k, r in zip(w.shape[2:], case["rhs_dilation"])]
        explicit = padtype_to_pads(x.shape[2:], window, case["strides"], padding)
    expected = conv_reference(x, w, case["strides"], explicit, case["lhs_dilation"],
                              case["rhs_dilation"], case["fgc"], case["bgc"])
    dn = conv_dimension_numbers(x.shape, w.shape, case["specs"])

    def f(a, b):
        return conv_general_dilated(a, b, case["strides"], padding, case["lhs_dilation"],
                                    case["rhs_dilation"], case["specs"], case["fgc"], case["bgc"])

    args = _to_layout(x, dn.lhs_spec), _to_layout(w, dn.rhs_spec)
    out = f(*args)
    assert out.dtype == np.dtype(dtype)
    assert api.eval_shape(f, *args).shape == out.shape  # the abstract eval agrees
    out = np.transpose(np.asarray(out), dn.out_spec)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


# --------------------------------------------------------------------------------------
# Cases computed by JAX 0.10.2 (integer-valued, so exact)


def test_jax_case_strides_padding_rhs_dilation():
    x = np.arange(1 * 2 * 4 * 4, dtype=np.float64).reshape(1, 2, 4, 4)
    w = np.arange(3 * 2 * 2 * 2, dtype=np.float64).reshape(3, 2, 2, 2) - 10
    out = conv_general_dilated(x, w, (2, 1), [(1, 0), (0, 1)], rhs_dilation=(1, 2))
    assert out.tolist() == [[[[-132, -154, -88], [-632, -684, -376]],
                             [[156, 166, 72], [328, 340, 136]],
                             [[444, 486, 232], [1288, 1364, 648]]]]


def test_jax_case_nhwc_feature_groups_lhs_dilation():
    x = np.arange(1 * 3 * 3 * 4, dtype=np.float64).reshape(1, 3, 3, 4) % 7 - 3
    w = np.arange(2 * 2 * 2 * 4, dtype=np.float64).reshape(2, 2, 2, 4) % 5 - 2
    out = conv_general_dilated(x, w, (1, 2), [(0, 1), (1, 1)], lhs_dilation=(2, 1),
                               dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2)
    assert out.tolist() == [[[[-3, -8, 2, 1], [0, -10, 5, 1]], [[7, 2, 7, 2], [4, -12, 5, 5]],
                             [[2, 7, 2, 7], [5, 4, 0, 5]], [[1, 2, -8, -3], [11, 4, 2, 1]],
                             [[0, 1, 2, -8], [3, 11, -12, 2]]]]


def test_jax_case_batch_groups():
    x = np.arange(4 * 1 * 5, dtype=np.float64).reshape(4, 1, 5) % 6 - 2
    w = np.array([[[1.0, -1.0]], [[2.0, 0.0]]])
    out = conv_general_dilated(x, w, (1,), "SAME", batch_group_count=2)
    assert out.tolist() == [[[-1, -1, -1, -1, 2], [4, 6, -4, -2, 0]],
                            [[5, -1, -1, -1, 1], [2, 4, 6, -4, -2]]]


def test_jax_case_3d_same_lower():
    x = np.arange(27, dtype=np.float64).reshape(1, 1, 3, 3, 3) % 4
    w = np.ones((2, 1, 2, 2, 2))
    w[1] *= -1
    w[1, 0, 0, 0, 0] = 3
    out = conv_general_dilated(x, w, (1, 1, 2), "SAME_LOWER",
                               dimension_numbers=("NCDHW", "OIDHW", "NDHWC"))
    assert out.tolist() == [[[[[0, 0], [3, -3]], [[3, -3], [4, -4]], [[5, -5], [4, -4]]],
                             [[[1, -1], [8, -8]], [[4, -4], [12, -8]], [[8, -8], [8, -8]]],
                             [[[3, -3], [8, -8]], [[4, -4], [16, -8]], [[4, -4], [12, -8]]]]]


def test_padtype_to_pads():
    args = ((5, 6, 7), (3, 2, 4), (2, 1, 3))
    assert padtype_to_pads(*args, "SAME") == [(1, 1), (0, 1), (1, 2)]
    assert padtype_to_pads(*args, "SAME_LOWER") == [(1, 1), (1, 0), (2, 1)]
    assert padtype_to_pads(*args, "VALID") == [(0, 0)] * 3
    assert padtype_to_pads((1, 2, 8), (5, 2, 1), (1, 3, 2), "same") == [(2, 2), (0, 0), (0, 0)]
    with pytest.raises(RuntimeError, match="Unrecognized padding type.*got FOO"):
        padtype_to_pads((5,), (3,), (1,), "FOO")


@pytest.mark.parametrize("specs,expected", [
    (("NCHW", "OIHW", "NCHW"), ((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))),
    (("NHWC", "HWIO", "NHWC"), ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))),
    (("NHWC", "OIWH", "CWNH"), ((0, 3, 2, 1), (0, 1, 2, 3), (2, 0, 1, 3))),
    (("NDHWC", "DHWIO", "NCDHW"), ((0, 4, 1, 2, 3), (4, 3, 0, 1, 2), (0, 1, 2, 3, 4))),
    (("WCN", "WIO", "NWC"), ((2, 1, 0), (2, 1, 0), (0, 2, 1))),
])
def test_conv_dimension_numbers(specs, expected):
    shape = (1,) * len(specs[0])
    dn = conv_dimension_numbers(shape, shape, specs)
    assert type(dn) is ConvDimensionNumbers and tuple(dn) == expected
    assert conv_dimension_numbers(shape, shape, dn) == dn
    iota = tuple(range(len(shape)))
    assert conv_dimension_numbers(shape, shape, None) == (iota, iota, iota)


# --------------------------------------------------------------------------------------
# Wrappers and dtypes


def test_conv_and_conv_with_general_padding():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 3, 2))
    expected = conv_reference(x, w, (2, 1), [(0, 1), (0, 1)], (1, 1), (1, 1))
    np.testing.assert_allclose(np.asarray(conv(x, w, (2, 1), "SAME")), expected, rtol=1e-12)
    expected = conv_reference(x, w, (1, 2), [(2, -1), (1, 0)], (2, 1), (1, 2))
    out = conv_with_general_padding(x, w, (1, 2), [(2, -1), (1, 0)], (2, 1), (1, 2))
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-12)


def test_preferred_element_type_and_bool():
    x = np.full((1, 2, 3), 100, np.int8)
    w = np.full((1, 2, 2), 100, np.int8)
    out = conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=np.int32)
    assert out.dtype == np.int32 and out.tolist() == [[[40000, 40000]]]
    b = conv_general_dilated(np.array([[[True, False, False]]]), np.array([[[True, True]]]), (1,),
                             "VALID")
    assert b.dtype == np.bool_ and b.tolist() == [[[True, False]]]
    x32, w32 = np.ones((1, 1, 3), np.float32), np.ones((1, 1, 2), np.float32)
    out = conv_general_dilated(x32, w32, (1,), "VALID", preferred_element_type=np.float64)
    assert out.dtype == np.float64 and out.tolist() == [[[2.0, 2.0]]]


def test_empty_operands():
    assert np.asarray(conv_general_dilated(np.ones((0, 3, 5)), np.ones((4, 3, 2)), (1,),
                                           "SAME")).shape == (0, 4, 5)
    out = conv_general_dilated(np.ones((2, 0, 5)), np.ones((4, 0, 2)), (1,), "SAME")
    assert out.tolist() == np.zeros((2, 4, 5)).tolist()
    out = conv_general_dilated(np.ones((2, 3, 5)), np.ones((4, 3, 7)), (1,), "VALID")
    assert out.shape == (2, 4, 0)


# --------------------------------------------------------------------------------------
# Errors (JAX's messages)

X4, W4 = np.ones((2, 3, 8, 8)), np.ones((4, 3, 3, 3))


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(window_strides=(1,)), ValueError, "window_strides.* must have one entry per spatial"),
    (dict(window_strides=(1,), padding=[(0, 0)] * 2), ValueError,
     "window_strides must have one entry per spatial"),
    (dict(padding=[(1, 1)]), ValueError, "padding must have one entry per spatial"),
    (dict(padding="FOO"), RuntimeError, "Unrecognized padding type"),
    (dict(padding="SAME", lhs_dilation=(2, 2)), ValueError, "String padding is not implemented"),
    (dict(padding=[(1, 2, 3), (0, 0)]), ValueError, "sequence of \\(low, high\\) pairs"),
    (dict(window_strides=(0, 1)), ValueError, "window_strides must be positive"),
    (dict(window_strides=(0, 1), padding="VALID"), ValueError, "window_strides must be positive"),
    (dict(rhs_dilation=(0, 1)), TypeError, "All dilations must be positive, got \\(0, 1\\)"),
    (dict(lhs_dilation=(1,)), ValueError, "lhs_dilation must have one entry per spatial"),
    (dict(padding=[(-5, -5), (0, 0)]), ValueError, "Negative padding is larger than the size"),
    (dict(rhs=np.ones((4, 2, 3, 3))), ValueError, "must equal the rhs input feature dimension "
                                                  "size, but 3 // 1 != 2"),
    (dict(rhs=np.ones((4, 3, 3))), TypeError, "requires lhs and rhs ndim to be equal"),
    (dict(rhs=np.ones((6, 1, 3, 3)), feature_group_count=3), None, (2, 6, 8, 8)),
    (dict(rhs=np.ones((6, 3, 3, 3)), lhs=np.ones((6, 3, 8, 8)), batch_group_count=3), None,
     (2, 6, 8, 8)),
    (dict(rhs=np.ones((4, 1, 3, 3)), feature_group_count=2), ValueError,
     "feature_group_count must divide lhs feature dimension size, but 2 does not divide 3"),
    (dict(rhs=np.ones((5, 1, 3, 3)), feature_group_count=3), ValueError,
     "must be a multiple of feature_group_count, but 5 is not a multiple of 3"),
    (dict(feature_group_count=0), ValueError, "feature_group_count must be a positive integer"),
    (dict(batch_group_count=3), ValueError, "batch_group_count must divide lhs batch dimension"),
    (dict(rhs=np.ones((3, 3, 3, 3)), batch_group_count=2), ValueError,
     "multiple of batch_group_count, but 3 is not a multiple of 2"),
    (dict(rhs=np.ones((6, 1, 3, 3)), feature_group_count=3, batch_group_count=2), ValueError,
     "At most one of batch_group_count and feature_group_count"),
    (dict(rhs=np.ones((4, 3, 0, 3))), ValueError, "kernel spatial dimensions must be positive"),
    (dict(rhs=np.ones((4, 3, 3, 3), np.float32)), TypeError,
     "requires arguments to have the same dtypes, got float64, float32"),
    (dict(dimension_numbers=("NCHW", "OIHW")), TypeError, "must be length 3, got 2"),
    (dict(dimension_numbers=("NCHW", "OIHW", "NCH")), TypeError,
     r"dimension_numbers\[2\] must have len equal to the ndim"),
    (dict(dimension_numbers=("NCHW", "OIHW", "NCHX")), TypeError, "same set of spatial"),
    (dict(dimension_numbers=("NCHH", "OIHW", "NCHW")), TypeError, "cannot have duplicate"),
    (dict(dimension_numbers=("NDHW", "OIHW", "NCHW")), TypeError,
     "must contain the characters 'N' and 'C' exactly once"),
    (dict(dimension_numbers=5), TypeError, "must be tuple/list or None"),
    (dict(preferred_element_type=np.int32), TypeError, "incompatible with"),
    (dict(preferred_element_type=np.float16), TypeError, "must not be narrower"),
])
def test_errors(kwargs, error, message):
    args = dict(lhs=X4, rhs=W4, window_strides=(1, 1), padding="SAME")
    args.update(kwargs)
    if error is None:  # a valid neighbour of the failing cases around it: `message` is the shape
        assert conv_general_dilated(**args).shape == message
        return
    with pytest.raises(error, match=message):
        conv_general_dilated(**args)


def test_error_names_shapes():
    with pytest.raises(ValueError, match=r"lhs shape \(2, 3, 8, 8\), rhs shape \(4, 2, 3, 3\)"):
        conv_general_dilated(X4, np.ones((4, 2, 3, 3)), (1, 1), "SAME")


# --------------------------------------------------------------------------------------
# Derivatives: forward and reverse mode


@pytest.mark.parametrize("x_shape,w_shape,kwargs", [
    ((2, 3, 5, 4), (4, 3, 3, 2), dict(window_strides=(1, 1), padding="SAME")),
    ((1, 4, 3, 4), (3, 2, 2, 4), dict(window_strides=(2, 1), padding=[(1, -1), (0, 2)],
                                      lhs_dilation=(2, 1), rhs_dilation=(1, 2),
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                      feature_group_count=2)),
    ((4, 2, 5), (4, 2, 2), dict(window_strides=(1,), padding="VALID", batch_group_count=2)),
    ((1, 2, 3, 3, 2), (2, 2, 2, 2, 1), dict(window_strides=(1, 1, 1), padding="SAME_LOWER")),
    ((2, 4, 9), (6, 2, 3), dict(window_strides=(3,), padding=[(-1, 2)], lhs_dilation=(2,),
                                rhs_dilation=(2,), feature_group_count=2)),
    ((6, 7, 2), (2, 2, 3), dict(window_strides=(2,), padding=[(2, -1)], rhs_dilation=(3,),
                                dimension_numbers=("NWC", "WIO", "NCW"), batch_group_count=3)),
    ((3, 2, 4, 5), (4, 2, 2, 3), dict(window_strides=(2, 3), padding=[(0, 1), (1, 0)],
                                      lhs_dilation=(1, 2), rhs_dilation=(2, 1),
                                      dimension_numbers=("NCHW", "OIHW", "NHWC"))),
])
def test_grads(x_shape, w_shape, kwargs):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    check_grads(lambda a, b: conv_general_dilated(a, b, **kwargs), (x, w), order=2,
                modes=("fwd", "rev"))


@settings(max_examples=40, deadline=None)
@given(conv_cases(), st.integers(0, 2 ** 16))
def test_transposes_are_adjoints(case, seed):
    """For each operand, <v, conv(u)> == <conv^T(v), u> (small integers: exact)."""
    rng = np.random.default_rng(seed)
    dn = conv_dimension_numbers(case["x"], case["w"], case["specs"])
    x = _to_layout(rng.integers(-3, 4, case["x"]).astype(np.float64), dn.lhs_spec)
    w = _to_layout(rng.integers(-3, 4, case["w"]).astype(np.float64), dn.rhs_spec)

    def f(a, b):
        return conv_general_dilated(a, b, case["strides"], case["padding"], case["lhs_dilation"],
                                    case["rhs_dilation"], case["specs"], case["fgc"], case["bgc"])

    out = np.asarray(f(x, w))
    v = rng.integers(-3, 4, out.shape).astype(np.float64)
    (x_ct,) = api.linear_transpose(lambda a: f(a, w), x)(v)
    (w_ct,) = api.linear_transpose(lambda b: f(x, b), w)(v)
    assert (x_ct.shape, x_ct.dtype, w_ct.shape, w_ct.dtype) == (x.shape, x.dtype, w.shape,
                                                                w.dtype)
    inner = np.vdot(v, out)
    assert np.vdot(np.asarray(x_ct), x) == inner and np.vdot(np.asarray(w_ct), w) == inner


def test_cotangent_dtypes_and_empty_outputs():
    x32, w32 = np.arange(6.0, dtype=np.float32).reshape(1, 2, 3), np.ones((1, 2, 2), np.float32)
    out, pullback = api.vjp(lambda a, b: conv_general_dilated(
        a, b, (1,), "VALID", preferred_element_type=np.float64), x32, w32)
    assert out.dtype == np.float64
    x_ct, w_ct = pullback(np.array([[[1.0, 10.0]]]))
    assert x_ct.dtype == w_ct.dtype == np.float32
    assert x_ct.tolist() == [[[1.0, 11.0, 10.0], [1.0, 11.0, 10.0]]]
    assert w_ct.tolist() == [[[10.0, 21.0], [43.0, 54.0]]]
    out, pullback = api.vjp(lambda a, b: conv_general_dilated(a, b, (1,), "VALID"),
                            np.ones((2, 3, 5)), np.ones((4, 3, 7)))
    x_ct, w_ct = pullback(np.ones(out.shape))  # the output is empty: zero cotangents
    assert out.shape == (2, 4, 0) and not np.asarray(x_ct).any() and not np.asarray(w_ct).any()
    assert (x_ct.shape, w_ct.shape) == ((2, 3, 5), (4, 3, 7))
    with pytest.raises(NotImplementedError, match="convolution of two linear values"):
        api.linear_transpose(lambda a: conv(a, a, (1,), "VALID"), w32)(
            np.ones((1, 1, 1), np.float32))


def test_print_transposes():
    """Texts printed by JAX 0.10.2 for jax.linear_transpose of each operand's map."""
    x, w = np.ones((1, 5, 4), np.float32), np.ones((2, 2, 4), np.float32)
    kw = dict(window_strides=(2,), padding=((1, -1),), rhs_dilation=(2,),
              dimension_numbers=("NWC", "WIO", "NWC"), feature_group_count=2)
    lhs_t = api.linear_transpose(lambda a: conv_general_dilated(a, w, **kw), x)
    assert str(api.make_jaxpr(lhs_t)(np.ones((1, 2, 4), np.float32))) == """\
{ lambda a:f32[2,2,4]; b:f32[1,2,4]. let
    c:f32[2,2,2,2] = reshape[
      dimensions=None
      new_sizes=(2, 2, 2, 2)
      sharding=None
    ] a
    d:f32[2,4,2] = reshape[
      dimensions=(0, 2, 1, 3)
      new_sizes=(2, 4, 2)
      sharding=None
    ] c
    e:f32[2,4,2] = rev[dimensions=(0,)] d
    f:f32[1,5,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 2, 1), rhs_spec=(1, 2, 0), \
out_spec=(0, 2, 1))
      feature_group_count=2
      lhs_dilation=(2,)
      out_sharding=None
      padding=((1, 3),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(2,)
      window_strides=(1,)
    ] b e
  in (f,) }"""
    x2, w2 = np.ones((4, 1, 5), np.float32), np.ones((2, 1, 2), np.float32)
    kw2 = dict(window_strides=(1,), padding=((0, 1),), lhs_dilation=(2,), batch_group_count=2)
    rhs_t = api.linear_transpose(lambda b: conv_general_dilated(x2, b, **kw2), w2)
    assert str(api.make_jaxpr(rhs_t)(np.ones((2, 2, 9), np.float32))) == """\
{ lambda a:f32[4,1,5]; b:f32[2,2,9]. let
    c:f32[2,1,2] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(1, 0, 2), rhs_spec=(1, 0, 2), \
out_spec=(1, 0, 2))
      feature_group_count=2
      lhs_dilation=(2,)
      out_sharding=None
      padding=((0, 1),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(1,)
      window_strides=(1,)
    ] a b
  in (c,) }"""


def test_jvp_is_bilinear():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((1, 2, 5)), rng.standard_normal((3, 2, 2))
    tx, tw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    f = lambda a, b: conv_general_dilated(a, b, (1,), "SAME")  # noqa: E731
    _, t_out = api.jvp(f, (x, w), (tx, tw))
    expected = np.asarray(f(tx, w)) + np.asarray(f(x, tw))
    np.testing.assert_allclose(np.asarray(t_out), expected, rtol=1e-12)


# --------------------------------------------------------------------------------------
# Jaxpr printing (texts printed by JAX 0.10.2)


def test_print_same_conv():
    x, w = np.ones((2, 3, 8, 8), np.float32), np.ones((4, 3, 3, 3), np.float32)
    text = str(api.make_jaxpr(lambda a, b: conv_general_dilated(a, b, (1, 1), "SAME"))(x, w))
    assert text == """\
{ lambda ; a:f32[2,3,8,8] b:f32[4,3,3,3]. let
    c:f32[2,4,8,8] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), \
out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }"""


def test_print_general_conv():
    x, w = np.ones((2, 8, 8, 4), np.float32), np.ones((3, 3, 2, 6), np.float32)

    def f(a, b):
        return conv_general_dilated(a, b, (2, 1), [(1, -1), (0, 2)], rhs_dilation=(1, 2),
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    feature_group_count=2, precision="highest",
                                    preferred_element_type=np.float32)

    assert str(api.make_jaxpr(f)(x, w)) == """\
{ lambda ; a:f32[2,8,8,4] b:f32[3,3,2,6]. let
    c:f32[2,3,6,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), \
out_spec=(0, 3, 1, 2))
      feature_group_count=2
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, -1), (0, 2))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
      rhs_dilation=(1, 2)
      window_strides=(2, 1)
    ] a b
  in (c,) }"""


# --------------------------------------------------------------------------------------
# Products a block at a time: large patch matrices are cut into blocks (of images and
# output rows, or of features and window rows; grouped convolutions by images). Integer
# values make every order of summation exact, so the cut products must equal the uncut
# ones, the C loop NumPy's on any thread count, and either formulation the other.

_LARGE = [  # (x canonical, w canonical, strides, padding, lhs dil, rhs dil, fgc, bgc, specs)
    ((6, 16, 18, 18), (32, 16, 3, 3), (1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1), 1, 1,
     ("NHWC", "HWIO", "NHWC")),
    ((12, 16, 18, 18), (32, 8, 3, 3), (2, 1), [(2, 0), (1, 1)], (1, 1), (2, 1), 2, 1,
     ("NHWC", "HWIO", "NHWC")),
    ((8, 12, 17, 17), (12, 12, 3, 3), (1, 1), [(1, 1), (0, 1)], (2, 1), (1, 1), 1, 2,
     ("NCHW", "OIHW", "NCHW")),
    ((16, 8, 200), (16, 8, 5), (2,), [(2, 2)], (1,), (2,), 1, 1, ("NHC", "HIO", "NHC")),
    # a weight gradient's layout: batch (the image's channels) minor, the cotangent as the
    # kernel, (feature, spatial..., out feature) in memory
    ((16, 40, 15, 15), (24, 40, 13, 13), (1, 1), [(0, 0), (0, 0)], (1, 1), (1, 1), 1, 1,
     ("CHWN", "IHWO", "HWNC")),
    ((1, 40, 30, 30), (24, 40, 28, 28), (1, 1), [(0, 0), (0, 0)], (1, 1), (1, 1), 1, 1,
     ("CHWN", "IHWO", "HWNC")),
]


@pytest.mark.parametrize("case", _LARGE)
def test_products_cut_into_blocks_equal_uncut(case, monkeypatch):
    from didax._src.compiler.native import blas_threads, threads, toolchain
    from didax._src.config import flag_context
    from didax._src.lax import conv as conv_module
    from didax._src.lax import window_kernels

    xs, ws, strides, padding, lhs_dil, rhs_dil, fgc, bgc, specs = case
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, xs).astype(np.float64)
    w = rng.integers(-3, 4, ws).astype(np.float64)
    dn = conv_dimension_numbers(x.shape, w.shape, specs)
    args = (np.ascontiguousarray(_to_layout(x, dn.lhs_spec)),  # (laid out as the specs say)
            np.ascontiguousarray(_to_layout(w, dn.rhs_spec)))

    def run(tier=None):
        """The convolution by NumPy alone (no tier), or with the tier "check" (the C loop,
        compared with NumPy's bit for bit)."""
        with monkeypatch.context() as m, flag_context("didax_native_tier", tier or "off"):
            if tier is None:
                m.setattr(window_kernels, "native_module", lambda wait=False: None)
            out = conv_general_dilated(*args, strides, padding, lhs_dil, rhs_dil, specs, fgc,
                                       bgc)
        return np.transpose(np.asarray(out), dn.out_spec)

    cuts = []  # (items, items a block) of each cut
    product_block, block = conv_module._product_block, conv_module._block

    def counted(rule):
        def count(items, size):
            cuts.append((items, rule(items, size)))
            return cuts[-1][1]
        return count

    monkeypatch.setattr(conv_module, "_product_block", counted(product_block))
    monkeypatch.setattr(conv_module, "_block", counted(block))
    got = run()  # (NumPy's blocks)
    assert len(cuts) == 1 and cuts[0][1] < cuts[0][0], "the patches were not cut into blocks"
    if toolchain.toolchain() is not None:  # the C loop on one thread and on several: the
        assert window_kernels.native_module(wait=True) is not None  # bits of NumPy's blocks
        monkeypatch.setattr(threads, "_fixed", True)  # (the count stays as set)
        blas = blas_threads.count()
        for count, blas_count in ((1, None), (3, None), (3, 1)):
            previous = threads.set_count(count)
            if blas_count is not None:
                blas_threads.set_count(blas_count)
            try:
                np.testing.assert_array_equal(run("check"), got)
            finally:
                threads.set_count(previous)
                if blas is not None:
                    blas_threads.set_count(blas)
    monkeypatch.setattr(window_kernels, "SINGLE_THREADED_PRODUCT", 1 << 60)
    monkeypatch.setattr(conv_module, "_WHOLE_BYTES", 1 << 40)
    cuts.clear()
    whole = run()
    assert len(cuts) == 1 and cuts[0][1] == cuts[0][0]
    np.testing.assert_array_equal(got, whole)
    # The other formulation (patches' rows over the batch, or over the features) agrees.
    by_feature = conv_module._by_feature
    taken = []

    def other(*a):
        taken.append(by_feature(*a))
        return not taken[-1] if fgc == bgc == 1 else taken[-1]

    monkeypatch.setattr(conv_module, "_by_feature", other)
    np.testing.assert_array_equal(run(), got)
    assert taken == [specs[0] == "CHWN"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weight_gradient_parts_sum_alike_on_any_thread_count(dtype, monkeypatch):
    """A weight gradient's blocks are summed in order, the elements shared among the
    threads: with float values (whose sums depend on their order) the C loop gives its NumPy
    twin's bits on one, two and three threads."""
    from didax._src.compiler.native import threads, toolchain
    from didax._src.config import flag_context
    from didax._src.lax import window_kernels

    if toolchain.toolchain() is None:
        pytest.skip("no C compiler: the NumPy twin is the only loop")
    assert window_kernels.native_module(wait=True) is not None
    rng = np.random.default_rng(1)
    specs = ("CHWN", "IHWO", "HWNC")
    x = rng.standard_normal((16, 40, 15, 15)).astype(dtype)
    w = rng.standard_normal((24, 40, 13, 13)).astype(dtype)
    dn = conv_dimension_numbers(x.shape, w.shape, specs)
    args = (np.ascontiguousarray(_to_layout(x, dn.lhs_spec)),
            np.ascontiguousarray(_to_layout(w, dn.rhs_spec)))
    monkeypatch.setattr(threads, "_fixed", True)  # (the count stays as set)
    results = []
    for count in (1, 2, 3):
        previous = threads.set_count(count)
        try:
            with flag_context("didax_native_tier", "check"):  # (C loop against NumPy's)
                results.append(np.asarray(conv_general_dilated(
                    *args, (1, 1), [(0, 0), (0, 0)], (1, 1), (1, 1), specs)))
        finally:
            threads.set_count(previous)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
