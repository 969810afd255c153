"""ragged_dot and ragged_dot_general: values, shapes and dtypes against JAX in each of the three
modes (ragged free, contracting and batch dimension), group sizes with leading dimensions,
errors, jit against eager, vmap (over lhs, rhs and group sizes) against a loop, and derivatives
against finite differences."""
import jax
import numpy as np
import pytest
from jax import lax as jlax
from jax_absent import needs_jax

import didax
from didax import lax
from didax._src.config import enable_x64
from didax.test_util import check_grads

RNG = np.random.default_rng(0)


def normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


GS = np.array([2, 1, 2], np.int32)
GSB = np.array([[2, 1, 2], [3, 3, 1]], np.int32)

# (lhs shape, rhs shape, group sizes, (dot dimension numbers, lhs ragged, rhs group))
CASES = [
    ((7, 3), (3, 3, 2), GS, ((([1], [1]), ([], [])), [0], [0])),  # ragged_dot
    ((7, 3), (3, 3, 2), np.array([3, 3, 3], np.int32), ((([1], [1]), ([], [])), [0], [0])),
    ((7, 3), (3, 3, 4), GS, ((([1], [0]), ([], [])), [0], [1])),
    ((2, 7, 3), (3, 2, 3, 4), GSB, ((([2], [2]), ([0], [1])), [1], [0])),
    ((2, 7, 3), (3, 2, 3, 4), GS, ((([2], [2]), ([0], [1])), [1], [0])),
    ((2, 7, 3), (3, 3, 4), GSB, ((([2], [1]), ([], [])), [1], [0])),
    ((7, 2, 3), (2, 3, 3, 4), GSB, ((([2], [2]), ([1], [0])), [0], [1])),
    ((4, 6), (6, 5), np.array([2, 3, 1], np.int32), ((([1], [0]), ([], [])), [1], [])),
    ((2, 4, 6), (2, 6, 5), np.array([[2, 3, 1], [1, 1, 1]], np.int32),
     ((([2], [1]), ([0], [0])), [2], [])),
    ((5, 4, 3), (5, 3, 2), np.array([1, 2], np.int32), ((([2], [1]), ([0], [0])), [0], [])),
]


def check_against_jax(lhs, rhs, gs, dn, tol=1e-5, **kwargs):
    want = jlax.ragged_dot_general(lhs, rhs, gs, jlax.RaggedDotDimensionNumbers(*dn), **kwargs)
    got = lax.ragged_dot_general(lhs, rhs, gs, lax.RaggedDotDimensionNumbers(*dn), **kwargs)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("lhs_shape, rhs_shape, gs, dn", CASES)
def test_modes_against_jax(lhs_shape, rhs_shape, gs, dn):
    check_against_jax(normal(*lhs_shape), normal(*rhs_shape), gs, dn)


def test_ragged_dot_against_jax():
    lhs, rhs = normal(7, 3), normal(3, 3, 2)
    np.testing.assert_allclose(np.asarray(lax.ragged_dot(lhs, rhs, GS)),
                               np.asarray(jlax.ragged_dot(lhs, rhs, GS)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtypes, preferred", [
    (("bfloat16", "bfloat16"), None), (("bfloat16", "float32"), None),
    (("float32", "float32"), "float16"), (("int8", "int8"), None), (("int8", "int8"), "int32"),
])
def test_dtypes_against_jax(dtypes, preferred):
    lhs = np.arange(21).reshape(7, 3).astype(dtypes[0]) % 5
    rhs = np.arange(18).reshape(3, 3, 2).astype(dtypes[1]) % 4
    want = jlax.ragged_dot(lhs, rhs, GS, preferred_element_type=preferred)
    got = lax.ragged_dot(lhs, rhs, GS, preferred_element_type=preferred)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))


def test_dimension_numbers_normalise_and_compare():
    dn = lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(([1], [1]), ([], [])),
                                       lhs_ragged_dimensions=[0], rhs_group_dimensions=[0])
    assert dn == lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    assert hash(dn) == hash(lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,)))
    jdn = jlax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    assert repr(dn) == repr(jdn)


@needs_jax
@pytest.mark.parametrize("args, dn", [
    (((7, 3), (3, 3, 2), GS.astype(np.float32)), ((([1], [1]), ([], [])), [0], [0])),
    (((7, 3), (3, 3, 2), GS[:2]), ((([1], [1]), ([], [])), [0], [0])),
    (((7, 3), (3, 3, 2), GS), ((([1], [1]), ([], [])), [0], [])),
    (((7, 3), (3, 3, 2), GS), ((([1], [1]), ([], [])), [1], [0])),
    (((7, 3), (3, 3, 2), GS), ((([1], [1]), ([], [])), [0, 1], [0])),
])
def test_errors_match_jax(args, dn):
    lhs_shape, rhs_shape, gs = args
    lhs, rhs = normal(*lhs_shape), normal(*rhs_shape)
    with pytest.raises(TypeError):
        jlax.ragged_dot_general(lhs, rhs, gs, jlax.RaggedDotDimensionNumbers(*dn))
    with pytest.raises(TypeError, match="ragged_dot_general"):
        lax.ragged_dot_general(lhs, rhs, gs, lax.RaggedDotDimensionNumbers(*dn))


def test_group_offset_is_not_supported():
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(normal(7, 3), normal(3, 3, 2), GS, group_offset=np.array([1], np.int32))


@pytest.mark.parametrize("case", [0, 3, 8])
def test_jit_matches_eager(case):
    lhs_shape, rhs_shape, gs, dn = CASES[case]
    lhs, rhs = normal(*lhs_shape), normal(*rhs_shape)
    dnums = lax.RaggedDotDimensionNumbers(*dn)

    def f(a, b, g):
        return lax.ragged_dot_general(a, b, g, dnums)

    np.testing.assert_allclose(np.asarray(didax.jit(f)(lhs, rhs, gs)),
                               np.asarray(f(lhs, rhs, gs)), rtol=1e-6, atol=1e-6)


def test_vmap_over_every_argument_matches_a_loop():
    lhs, rhs = normal(4, 7, 3), normal(4, 3, 3, 2)
    gs = np.array([[2, 1, 2], [0, 7, 0], [1, 1, 1], [3, 0, 4]], np.int32)
    got = didax.vmap(lax.ragged_dot)(lhs, rhs, gs)
    want = np.stack([np.asarray(lax.ragged_dot(lhs[i], rhs[i], gs[i])) for i in range(4)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)
    got = didax.vmap(lambda r: lax.ragged_dot(lhs[0], r, GS), in_axes=1)(rhs.swapaxes(0, 1))
    want = np.stack([np.asarray(lax.ragged_dot(lhs[0], r, GS)) for r in rhs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", [0, 7])
def test_derivatives_by_finite_differences(case):
    lhs_shape, rhs_shape, gs, dn = CASES[case]
    lhs, rhs = normal(*lhs_shape).astype(np.float64), normal(*rhs_shape).astype(np.float64)
    dnums = lax.RaggedDotDimensionNumbers(*dn)
    with enable_x64(True):
        check_grads(lambda a, b: lax.ragged_dot_general(a, b, gs, dnums), (lhs, rhs), order=2,
                    modes=("fwd", "rev"))


def test_jaxpr_is_a_masked_dot_general():
    text = str(didax.make_jaxpr(lambda a, b: lax.ragged_dot(a, b, GS))(normal(7, 3),
                                                                       normal(3, 3, 2)))
    assert "dot_general" in text and "cumsum" in text


def test_matches_jax_under_jit():
    lhs, rhs = normal(7, 3), normal(3, 3, 2)
    want = jax.jit(jlax.ragged_dot)(lhs, rhs, GS)
    got = didax.jit(lax.ragged_dot)(lhs, rhs, GS)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
