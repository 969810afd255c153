"""dot_general: values against np.einsum over hypothesis-drawn dimension numbers, dtype rules
and error cases as JAX 0.10.2 has them (expected values are literals taken from JAX),
derivatives in both modes against finite differences, transposes against the adjoint
identity, and jaxpr printing against JAX's exact text."""
import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from didax._src import core
from didax._src.config import enable_x64, flag_context
from didax._src.lax.dot import Precision, batch_matmul, dot, dot_general, dot_general_p
from didax._src.transforms import api
from didax._src.transforms.jit import jit
from didax._src.transforms.public_test_util import check_grads

MATMUL = (((1,), (0,)), ((), ()))
NONE = (((), ()), ((), ()))


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


# --------------------------------------------------------------------------------------
# Values against np.einsum


@st.composite
def dot_cases(draw):
    """Random shapes and dimension numbers, with the einsum spec that computes the same."""
    nb, nc, nl, nr = (draw(st.integers(0, 2)) for _ in range(4))
    sizes = [draw(st.integers(0, 3)) for _ in range(nb + nc + nl + nr)]
    letters = string.ascii_lowercase[:len(sizes)]
    batch, contract = list(range(nb)), list(range(nb, nb + nc))
    lfree, rfree = list(range(nb + nc, nb + nc + nl)), list(range(nb + nc + nl, len(sizes)))
    lhs_axes = draw(st.permutations(batch + contract + lfree))  # logical index of each axis
    rhs_axes = draw(st.permutations(batch + contract + rfree))
    dn = ((tuple(lhs_axes.index(i) for i in contract), tuple(rhs_axes.index(i) for i in contract)),
          (tuple(lhs_axes.index(i) for i in batch), tuple(rhs_axes.index(i) for i in batch)))
    spec = "{},{}->{}".format("".join(letters[i] for i in lhs_axes),
                              "".join(letters[i] for i in rhs_axes),
                              "".join(letters[i] for i in batch
                                      + [i for i in lhs_axes if i in lfree]
                                      + [i for i in rhs_axes if i in rfree]))
    return [sizes[i] for i in lhs_axes], [sizes[i] for i in rhs_axes], dn, spec


def _rand(rng, shape, dtype):
    x = rng.integers(-3, 4, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.integers(-3, 4, shape)
    return x


@settings(max_examples=60, deadline=None)
@given(dot_cases(), st.sampled_from([np.int32, np.float32, np.float64, np.complex128]),
       st.integers(0, 2 ** 16))
def test_dot_general_matches_einsum(case, dtype, seed):
    lhs_shape, rhs_shape, dn, spec = case
    rng = np.random.default_rng(seed)
    x, y = _rand(rng, lhs_shape, dtype), _rand(rng, rhs_shape, dtype)
    out = dot_general(x, y, dn)
    expected = np.einsum(spec, x, y)
    assert out.dtype == np.dtype(dtype)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)  # small integers: exact
    staged = api.eval_shape(lambda a, b: dot_general(a, b, dn), x, y)  # the abstract eval
    assert (staged.shape, staged.dtype) == (expected.shape, np.dtype(dtype))


@pytest.mark.parametrize("lhs_shape,rhs_shape,spec", [
    ((3, 4), (4, 5), "ij,jk->ik"), ((4,), (4, 5), "j,jk->k"), ((3, 4), (4,), "ij,j->i"),
    ((4,), (4,), "j,j->"), ((2, 3, 4), (4, 5), "bij,jk->bik"), ((2, 3, 4), (4,), "bij,j->bi"),
    ((0, 4), (4, 5), "ij,jk->ik"), ((3, 0), (0, 5), "ij,jk->ik"),
])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_])
def test_matrix_products(lhs_shape, rhs_shape, spec, dtype):
    rng = np.random.default_rng(0)
    x, y = (rng.integers(0, 2, s).astype(dtype) for s in (lhs_shape, rhs_shape))
    dn = (((len(lhs_shape) - 1,), (0,)), ((), ()))
    out = dot_general(x, y, dn)
    assert out.dtype == np.dtype(dtype) and out.shape == np.einsum(spec, x, y).shape
    np.testing.assert_array_equal(np.asarray(out), np.einsum(spec, x, y))


def test_float32_matmul_accuracy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 128)).astype(np.float32)
    y = rng.standard_normal((128, 10)).astype(np.float32)
    out = dot(x, y)
    assert out.dtype == np.float32 and out.shape == (64, 10)
    np.testing.assert_allclose(np.asarray(out), x.astype(np.float64) @ y, rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------------------------
# Dtypes (expected results from JAX 0.10.2)


@pytest.mark.parametrize("ldt,rdt,preferred,expected", [
    ("float32", "float64", None, "float64"),
    ("int32", "float32", None, "float32"),
    ("int32", "bool", None, "int32"),
    ("int8", "uint8", None, "int8"),
    ("int32", "int8", "float32", "float32"),
    ("float32", "float32", "int32", "int32"),
    ("float64", "float64", "float32", "float32"),
    ("float32", "float32", "float64", "float64"),
    ("complex64", "complex64", None, "complex64"),
    ("bool", "bool", None, "bool"),
])
def test_output_dtype(ldt, rdt, preferred, expected):
    x, y = np.ones((3, 4), ldt), np.ones((4, 5), rdt)
    out = dot_general(x, y, MATMUL, preferred_element_type=preferred)
    assert out.dtype == np.dtype(expected)
    np.testing.assert_array_equal(np.asarray(out), np.full((3, 5), 1 if expected == "bool" else 4))


def test_preferred_element_type_accumulates_wide():
    x = np.full((1, 3), 100, np.int8)
    out = dot_general(x, x.T, MATMUL, preferred_element_type=np.int32)
    assert out.dtype == np.int32 and out.tolist() == [[30000]]
    wrapped = dot_general(x, x.T, MATMUL)  # int8 arithmetic wraps, as in XLA
    assert wrapped.dtype == np.int8 and wrapped.tolist() == [[48]]  # 30000 mod 256


def test_mixed_integer_values_and_bool():
    out = dot(np.array([[200]], np.uint8), np.array([[100]], np.int8))
    assert out.dtype == np.int8 and out.tolist() == [[32]]  # JAX's value
    b = np.array([[True, False], [False, False]])
    assert dot(b, b).tolist() == [[True, False], [False, False]]


def test_weak_types():
    assert dot_general(2.0, 3.0, NONE).weak_type
    assert dot_general(2.0, 3.0, NONE, preferred_element_type=np.float32).weak_type
    assert not dot_general(2.0, np.float64(3.0), NONE).weak_type
    assert float(dot_general(2.0, 3.0, NONE)) == 6.0


# --------------------------------------------------------------------------------------
# Wrappers


def test_dot_shapes_and_errors():
    rng = np.random.default_rng(2)
    m, v = rng.standard_normal((3, 4)), rng.standard_normal(4)
    np.testing.assert_allclose(np.asarray(dot(m, v)), m @ v)
    np.testing.assert_allclose(np.asarray(dot(v, m.T)), v @ m.T)
    np.testing.assert_allclose(np.asarray(dot(v, v)), v @ v)
    np.testing.assert_allclose(np.asarray(dot(m, m.T, dimension_numbers=MATMUL)), m @ m.T)
    for a, b in [((2, 3, 4), (4, 5)), ((3, 4), (5,)), ((), (5,)), ((3,), (3, 2, 4))]:
        with pytest.raises(ValueError, match=r"dimension_numbers must be specified.*"
                                             + r"lhs_shape=\(.*\) rhs_shape=\("):
            dot(np.ones(a), np.ones(b))


def test_dimension_number_forms():
    x, y = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    for dn in [((1, 0), ((), ())), (([1], [0]), ([], [])), ((np.int64(1), (0,)), ((), ()))]:
        np.testing.assert_array_equal(np.asarray(dot_general(x, y, dn)), x @ y)
    with pytest.raises(TypeError, match="dimension_numbers must have the form"):
        dot_general(x, y, (1, 0))


def test_batch_matmul():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((7, 2, 3, 4)), rng.standard_normal((7, 2, 4, 5))
    np.testing.assert_allclose(np.asarray(batch_matmul(x, y)), x @ y)
    np.testing.assert_allclose(np.asarray(batch_matmul(x[0, 0], y[0, 0])), x[0, 0] @ y[0, 0])
    with pytest.raises(ValueError, match="must have same ndim, got 3, 4"):
        batch_matmul(np.ones((2, 3, 4)), np.ones((2, 3, 4, 5)))
    with pytest.raises(ValueError, match="must be at least 2D, got 1, 2"):
        batch_matmul(np.ones(3), np.ones((3, 4)))
    with pytest.raises(TypeError, match=r"batch dimensions to have the same shape, got \(2,\) "
                                        r"and \(3,\)"):
        batch_matmul(np.ones((2, 3, 4)), np.ones((3, 4, 5)))


# --------------------------------------------------------------------------------------
# Abstract-eval errors (JAX's messages, plus the operand shapes)


@pytest.mark.parametrize("lhs,rhs,dn,message", [
    ((3, 4), (5, 5), MATMUL, r"contracting dimensions to have the same shape, got \(4,\) and "
                             r"\(5,\) \(lhs shape \(3, 4\), rhs shape \(5, 5\)\)"),
    ((3, 4), (4, 5), (((2,), (0,)), ((), ())), r"lhs dimension numbers to be nonnegative and "
                                               r"less than .* lhs of rank 2"),
    ((3, 4), (4, 5), (((1,), (2,)), ((), ())), r"rhs dimension numbers to be nonnegative"),
    ((2, 3, 4), (2, 4, 5), (((-1,), (1,)), ((0,), (0,))), r"lhs dimension numbers"),
    ((3, 4), (4, 5), (((1, 1), (0, 0)), ((), ())), r"lhs contracting dimensions to be distinct"),
    ((3, 4), (4, 5), (((1,), (0, 1)), ((), ())), r"contracting dimensions to have the same "
                                                 r"shape, got \(4,\) and \(4, 5\)"),
    ((2, 3, 4), (3, 4, 5), (((2,), (1,)), ((0,), (0,))), r"lhs batch dimensions and rhs batch "
                                                        r"dimensions to have the same shape"),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0, 1))), r"equal numbers of lhs_batch and "
                                                          r"rhs_batch"),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (1,))), r"rhs batch dimensions to be disjoint"),
    ((2, 3, 4), (2, 4, 5), (((0,), (0,)), ((0,), (0,))), r"lhs batch dimensions to be disjoint"),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0, 0), (0, 2))), r"lhs batch dimensions to be "
                                                            r"distinct"),
])
def test_shape_errors(lhs, rhs, dn, message):
    with pytest.raises(TypeError, match=message):
        dot_general(np.ones(lhs), np.ones(rhs), dn)
    with pytest.raises(TypeError, match=message):  # the same check when staged
        api.make_jaxpr(lambda a, b: dot_general(a, b, dn))(np.ones(lhs), np.ones(rhs))


def test_dtype_errors():
    with pytest.raises(TypeError, match="must not be narrower than the original type"):
        dot_general(np.ones((2, 2), np.int32), np.ones((2, 2), np.int32), MATMUL,
                    preferred_element_type=np.int16)
    f0 = core.Array(np.zeros((2, 2), [("float0", np.void, 0)]))
    with pytest.raises(TypeError, match="dot_general does not accept dtype"):
        dot_general(f0, np.ones((2, 2)), MATMUL)
    with pytest.raises(TypeError, match="dimension_numbers of the form"):
        dot_general_p.bind(np.ones((2, 2)), np.ones((2, 2)), dimension_numbers=((1, 0), 0),
                           precision=None, preferred_element_type=None, out_sharding=None)


# --------------------------------------------------------------------------------------
# Precision


def test_precision_values():
    assert [p.name for p in Precision] == ["DEFAULT", "HIGH", "HIGHEST"]
    assert Precision("highest") is Precision.HIGHEST and Precision("float32") is Precision.HIGHEST
    assert Precision("bfloat16") is Precision.DEFAULT and Precision(1) is Precision.HIGH
    assert repr(Precision.HIGH) == "Precision.HIGH" and str(Precision.HIGH) == "HIGH"
    x = np.ones((2, 2))
    for precision in [Precision.HIGH, "fastest", ("high", Precision.HIGHEST)]:
        np.testing.assert_array_equal(np.asarray(dot(x, x, precision=precision)), x @ x)
    with pytest.raises(ValueError, match="precision must be"):
        dot(x, x, precision="very-high")
    np.testing.assert_array_equal(np.asarray(dot(x, x, precision="F32_F32_F32")), x @ x)


def _jaxpr_text(f, *args):
    return str(api.make_jaxpr(f)(*args))


def test_default_matmul_precision_flag():
    x = np.ones((2, 2), np.float32)
    with flag_context("jax_default_matmul_precision", "highest"):
        text = _jaxpr_text(lambda a: dot(a, a), x)
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in text
    assert "precision" not in _jaxpr_text(lambda a: dot(a, a), x)


# --------------------------------------------------------------------------------------
# Derivatives: forward and reverse mode


@pytest.mark.parametrize("lhs_shape,rhs_shape,dn", [
    ((3, 4), (4, 2), MATMUL),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((4, 2, 3), (3, 2, 5), (((2, 1), (0, 1)), ((), ()))),
    ((3,), (2,), NONE),
    ((4,), (4,), (((0,), (0,)), ((), ()))),
    ((2, 3), (3, 2), (((1,), (0,)), ((0,), (1,)))),
])
def test_grads(lhs_shape, rhs_shape, dn):
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)
    check_grads(lambda a, b: dot_general(a, b, dn), (x, y), order=2, modes=("fwd", "rev"))


@settings(max_examples=12, deadline=None)
@given(dot_cases(), st.integers(0, 2 ** 16))
def test_grads_random_dimension_numbers(case, seed):
    lhs_shape, rhs_shape, dn, _ = case
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)
    check_grads(lambda a, b: dot_general(a, b, dn), (x, y), order=2, modes=("fwd", "rev"))


def test_grads_of_square_matmul():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 3))
    check_grads(lambda a: dot(a, a), (x,), order=2, modes=("fwd", "rev"))
    out, t_out = api.jvp(lambda a: dot(a, a), (x,), (np.eye(3),))
    np.testing.assert_allclose(np.asarray(t_out), 2 * x)


def test_jvp_with_integer_operand_and_output():
    x, k = np.arange(6.0).reshape(2, 3), np.arange(12, dtype=np.int32).reshape(3, 4)
    out, t_out = api.jvp(lambda a: dot(a, k), (x,), (np.ones_like(x),))
    assert t_out.dtype == np.float64
    np.testing.assert_allclose(np.asarray(t_out), np.ones_like(x) @ k)
    out, t_out = api.jvp(lambda a: dot(a, k, preferred_element_type=np.int32), (x,), (x,))
    assert out.dtype == np.int32 and t_out.dtype == np.dtype([("float0", np.void, 0)])


# --------------------------------------------------------------------------------------
# Transposes: each operand's map is linear; its transpose is the adjoint


def _bilinear_inner(xs, ys):
    """sum(x * y): the pairing under which a complex-linear map's transpose is its adjoint."""
    return np.sum(np.asarray(xs) * np.asarray(ys))


@settings(max_examples=40, deadline=None)
@given(dot_cases(), st.sampled_from([np.float64, np.complex128]), st.integers(0, 2 ** 16))
def test_transposes_are_adjoints(case, dtype, seed):
    lhs_shape, rhs_shape, dn, spec = case
    rng = np.random.default_rng(seed)
    x, y = _rand(rng, lhs_shape, dtype), _rand(rng, rhs_shape, dtype)
    v = _rand(rng, np.einsum(spec, x, y).shape, dtype)
    (x_ct,) = api.linear_transpose(lambda a: dot_general(a, y, dn), x)(v)
    (y_ct,) = api.linear_transpose(lambda b: dot_general(x, b, dn), y)(v)
    assert (x_ct.shape, x_ct.dtype, y_ct.shape, y_ct.dtype) == (x.shape, x.dtype, y.shape,
                                                                y.dtype)
    inner = _bilinear_inner(v, np.einsum(spec, x, y))  # small integers: exact
    assert _bilinear_inner(x_ct, x) == inner and _bilinear_inner(y_ct, y) == inner


@pytest.mark.parametrize("ldt,rdt,preferred", [
    ("float32", "float64", None),
    ("float64", "float32", None),
    ("float32", "float32", "float64"),
    ("float16", "int8", "float32"),
    ("float32", "int32", None),
    ("complex64", "complex64", "complex128"),
    ("float64", "float64", "float32"),
])
def test_cotangents_take_each_operands_dtype(ldt, rdt, preferred):
    rng = np.random.default_rng(6)
    x = _rand(rng, (2, 3, 4), ldt)
    y = _rand(rng, (2, 4, 5), rdt)
    dn = (((2,), (1,)), ((0,), (0,)))

    def f(a, b):
        return dot_general(a, b, dn, preferred_element_type=preferred)

    out, pullback = api.vjp(f, x, y)
    ct = _rand(rng, out.shape, out.dtype)
    x_ct, y_ct = pullback(ct)
    assert x_ct.dtype == x.dtype and x_ct.shape == x.shape
    expected = np.einsum("bik,bjk->bij", ct, y.astype(ct.dtype))  # small integers: exact
    np.testing.assert_array_equal(np.asarray(x_ct), expected.astype(x.dtype))
    if np.issubdtype(y.dtype, np.inexact):
        assert y_ct.dtype == y.dtype and y_ct.shape == y.shape
        expected = np.einsum("bij,bik->bjk", x.astype(ct.dtype), ct)
        np.testing.assert_array_equal(np.asarray(y_ct), expected.astype(y.dtype))
    else:  # an integer operand is not differentiable
        assert y_ct.dtype == np.dtype([("float0", np.void, 0)])


def test_transpose_of_a_product_of_linear_values_is_refused():
    x = np.ones((2, 2))
    with pytest.raises(NotImplementedError, match="product of two linear values"):
        api.linear_transpose(lambda a: dot(a, a), x)(x)


def test_print_transposes():
    """Texts printed by JAX 0.10.2 for jax.linear_transpose of each operand's map."""
    x, y = np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)
    ct = np.ones((2, 3, 5), np.float32)
    dn = (((2,), (1,)), ((0,), (0,)))
    lhs_t = api.linear_transpose(lambda a: dot_general(a, y, dn), x)
    assert str(api.make_jaxpr(lhs_t)(ct)) == """\
{ lambda a:f32[2,4,5]; b:f32[2,3,5]. let
    c:f32[2,3,4] = dot_general[dimension_numbers=(([2], [2]), ([0], [0]))] b a
  in (c,) }"""
    rhs_t = api.linear_transpose(
        lambda b: dot_general(x, b, dn, preferred_element_type=np.float32), y)
    assert str(api.make_jaxpr(rhs_t)(ct)) == """\
{ lambda a:f32[2,3,4]; b:f32[2,3,5]. let
    c:f32[2,5,4] = dot_general[
      dimension_numbers=(([1], [1]), ([0], [0]))
      preferred_element_type=float32
    ] b a
    d:f32[2,4,5] = transpose[permutation=(0, 2, 1)] c
  in (d,) }"""


def test_grad_of_small_mlp_matches_jax():
    """A dense layer, tanh, a second layer and a logsumexp cross-entropy: jax.grad's numbers."""
    from didax._src.lax import elementwise as ew
    from didax._src.lax import reduction, shape

    x = (np.arange(15.0).reshape(5, 3) % 7 - 3) / 4
    w1 = (np.arange(12.0).reshape(3, 4) % 5 - 2) / 3
    b1 = np.array([0.1, -0.2, 0.3, 0.0])
    w2 = (np.arange(8.0).reshape(4, 2) % 3 - 1) / 2

    def loss(w1, b1, w2):
        h = ew.tanh(ew.add(dot(x, w1), shape.broadcast_in_dim(b1, (5, 4), (1,))))
        z = dot(h, w2)
        m = reduction.reduce_max(z, (1,))
        shifted = ew.sub(z, shape.broadcast_in_dim(m, (5, 2), (0,)))
        lse = ew.add(m, ew.log(reduction.reduce_sum(ew.exp(shifted), (1,))))
        label = shape.reshape(shape.slice(z, (0, 0), (5, 1)), (5,))
        return reduction.reduce_sum(ew.sub(lse, label), (0,))

    value, grads = api.value_and_grad(loss, argnums=(0, 1, 2))(w1, b1, w2)
    np.testing.assert_allclose(float(value), 4.71978948501258, rtol=1e-13)  # JAX
    expected = (  # jax.grad(loss, argnums=(0, 1, 2)), JAX 0.10.2
        [[0.03757807096247337, -0.008630162504492861, 0.0637382165210145, 0.10615558781731069],
         [0.1397443130158234, 0.40087804791495535, 0.08469009358182356, -0.0038597121463412876],
         [-0.24938052758741322, 0.14721125659783432, -0.14872839389788178,
          -0.250491912122048]],
        [1.2127453038738492, -2.2846542634614835, 1.1423947873037499, 1.353220437677812],
        [[-0.019789050022717438, 0.019789050022717494], [0.742784331361333, -0.742784331361333],
         [-1.1250774138012305, 1.1250774138012303], [-0.2919881927081622, 0.2919881927081621]],
    )
    for g, e in zip(grads, expected, strict=True):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12, atol=1e-15)
    check_grads(loss, (w1, b1, w2), order=2, modes=("rev",))


# --------------------------------------------------------------------------------------
# Jaxpr printing (texts printed by JAX 0.10.2)


def test_print_matmul_with_preferred_element_type():
    x, y = np.ones((64, 128), np.float32), np.ones((128, 10), np.float32)
    text = _jaxpr_text(lambda a, b: dot_general(a, b, MATMUL, preferred_element_type=np.float32),
                       x, y)
    assert text == """\
{ lambda ; a:f32[64,128] b:f32[128,10]. let
    c:f32[64,10] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }"""


def test_print_short_forms():
    x, y = np.ones((3, 4), np.float32), np.ones((4, 5), np.float32)
    assert _jaxpr_text(lambda a, b: dot(a, b), x, y) == """\
{ lambda ; a:f32[3,4] b:f32[4,5]. let
    c:f32[3,5] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) }"""
    x3, y3 = np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)
    assert _jaxpr_text(batch_matmul, x3, y3) == """\
{ lambda ; a:f32[2,3,4] b:f32[2,4,5]. let
    c:f32[2,3,5] = dot_general[dimension_numbers=(([2], [1]), ([0], [0]))] a b
  in (c,) }"""
    assert _jaxpr_text(lambda a, b: dot(a, b, precision=(Precision.HIGHEST, "default")),
                       x, y) == """\
{ lambda ; a:f32[3,4] b:f32[4,5]. let
    c:f32[3,5] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.DEFAULT)
    ] a b
  in (c,) }"""


def test_print_jvp():
    x = np.ones((3, 3), np.float32)
    text = _jaxpr_text(lambda a: api.jvp(lambda a: dot(a, a), (a,), (a,)), x)
    assert text == """\
{ lambda ; a:f32[3,3]. let
    b:f32[3,3] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a a
    c:f32[3,3] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a a
    d:f32[3,3] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a a
    e:f32[3,3] = add_any c d
  in (b, e) }"""


def test_products_of_strided_operands_give_the_same_bits_on_both_tiers(jit_tier):
    # A batched product whose batch dimensions do not lead goes through NumPy's matmul on
    # views of its operands, whose BLAS routine follows their strides: operands in another
    # memory layout (transposed views) once gave the native tier other last bits.
    def f(a, b, c):
        d = dot_general(c, b, (((2,), (3,)), ((0, 1), (0, 1))))
        return dot_general(a, c, (((1,), (3,)), ((2, 3), (0, 1)))), d

    rng = np.random.default_rng(0)
    with enable_x64(True):
        jitted = jit(f)
        for _ in range(3):
            a = rng.normal(size=(3, 2, 8, 1)).transpose(3, 2, 0, 1)
            c = rng.normal(size=(8, 2, 3, 2)).transpose(2, 1, 3, 0)
            b = rng.normal(size=(3, 2, 1, 2))
            got = jitted(a, b, c)
            want = jitted(np.ascontiguousarray(a), b, np.ascontiguousarray(c))
            for g, w in zip(got, want):
                assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
