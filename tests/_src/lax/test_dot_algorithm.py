"""DotAlgorithm, DotAlgorithmPreset, AccuracyMode, Tolerance and RoundingMethod against JAX's:
members, values and properties; presets and algorithms accepted as `precision` (printed as JAX
prints them, result dtypes as JAX's, values as the default precision's, float32 accumulation
of 16-bit floats honoured), through jit and reverse mode; lax.round with the enum."""
import jax
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax as jlax

import didax
import didax.numpy as jnp
from didax import lax

PRESETS = [p.name for p in lax.DotAlgorithmPreset]
OPERAND_DTYPES = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64, ml_dtypes.float8_e4m3fn]


def test_preset_members_and_properties_match_jax():
    assert PRESETS == [p.name for p in jlax.DotAlgorithmPreset]
    for name in PRESETS:
        mine, theirs = lax.DotAlgorithmPreset[name], jlax.DotAlgorithmPreset[name]
        assert mine.value == theirs.value and str(mine) == str(theirs)
        assert repr(mine) == repr(theirs)
        assert mine.accumulation_type == theirs.accumulation_type
        assert mine.supported_lhs_types == theirs.supported_lhs_types
        assert mine.supported_rhs_types == theirs.supported_rhs_types
        for a in OPERAND_DTYPES:
            for b in OPERAND_DTYPES:
                assert (_outcome(mine.supported_output_types, a, b)
                        == _outcome(theirs.supported_output_types, a, b)), (name, a, b)


def _outcome(f, *args):
    """f's result, or the name of the exception it raises."""
    try:
        return f(*args)
    except Exception as e:  # noqa: BLE001 - the error's type is the outcome compared
        return type(e).__name__


def test_dot_algorithm_fields_match_jax():
    mine = lax.DotAlgorithm(np.float16, np.float16, np.float32)
    theirs = jlax.DotAlgorithm(np.float16, np.float16, np.float32)
    assert mine._fields == theirs._fields and tuple(mine) == tuple(theirs)
    assert repr(mine) == repr(theirs)
    assert hash(mine) == hash(lax.DotAlgorithm(np.float16, np.float16, np.float32))


@pytest.mark.parametrize("precision", [lambda m: m.DotAlgorithmPreset.F16_F16_F32,
                                       lambda m: "BF16_BF16_F32_X3", lambda m: "F32_F32_F32"])
def test_presets_print_as_in_jax(precision):
    a = np.ones((2, 3), np.float32)
    theirs = str(jax.make_jaxpr(lambda a: jlax.dot(a, a.T, precision=precision(jlax)))(a))
    mine = str(didax.make_jaxpr(lambda a: lax.dot(a, a.T, precision=precision(lax)))(a))
    assert mine == theirs


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("dtype, preferred", [("float16", None), ("bfloat16", None),
                                              ("float32", None), ("float16", "float32")])
def test_every_preset_computes_as_the_default_precision(name, dtype, preferred):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 5)).astype(dtype)
    b = rng.standard_normal((5, 3)).astype(dtype)
    got = lax.dot(a, b, precision=name, preferred_element_type=preferred)
    want = lax.dot(a, b, preferred_element_type=preferred)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    shape = jax.eval_shape(lambda a, b: jlax.dot(a, b, precision=name,
                                                 preferred_element_type=preferred), a, b)
    assert got.dtype == shape.dtype and got.shape == shape.shape


@pytest.mark.parametrize("name", ["DEFAULT", "F32_F32_F32", "BF16_BF16_F32",
                                  "BF16_BF16_F32_X3", "BF16_BF16_F32_X6"])
def test_presets_jax_runs_on_cpu_give_its_values(name):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((8, 16), np.float32), rng.standard_normal((16, 4), np.float32)
    np.testing.assert_allclose(np.asarray(lax.dot(a, b, precision=name)),
                               np.asarray(jlax.dot(a, b, precision=name)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_sixteen_bit_floats_accumulate_in_float32(dtype):
    a = jnp.ones((1, 4096), dtype)
    for precision in ["F16_F16_F32", "BF16_BF16_F32", lax.DotAlgorithm(dtype, dtype, np.float32)]:
        out = lax.dot(a, a.T, precision=precision)
        assert out.dtype == dtype and float(out[0, 0]) == 4096.0  # (2048 + 1 == 2048 in 16 bits)


def test_algorithms_through_jit_and_reverse_mode():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    algorithm = lax.DotAlgorithm(np.float32, np.float32, np.float32)
    for precision in [lax.DotAlgorithmPreset.F32_F32_F32, algorithm]:
        f = lambda a: lax.dot(a, a.T, precision=precision).sum()  # noqa: E731,B023
        np.testing.assert_array_equal(np.asarray(didax.jit(f)(a)), np.asarray(f(a)))
        np.testing.assert_allclose(np.asarray(didax.grad(f)(a)),
                                   np.asarray(jax.grad(lambda a: jjnp.dot(a, a.T).sum())(a)))


def test_unknown_precision_names_are_rejected():
    with pytest.raises(ValueError):
        jlax.dot(np.ones(2), np.ones(2), precision="F32_F32_F31")
    with pytest.raises(ValueError, match="DotAlgorithmPreset"):
        lax.dot(np.ones(2), np.ones(2), precision="F32_F32_F31")


def test_accuracy_mode_and_tolerance_match_jax():
    assert [(m.name, m.value) for m in lax.AccuracyMode] == [
        (m.name, m.value) for m in jlax.AccuracyMode]
    t = lax.Tolerance(atol=1e-3, rtol=1e-2)
    assert (t.atol, t.rtol, t.ulps) == (1e-3, 1e-2, 0)
    assert t == lax.Tolerance(atol=1e-3, rtol=1e-2) and hash(t) == hash(lax.Tolerance(1e-3, 1e-2))
    for kwargs in [dict(), dict(atol=-1.0), dict(ulps=-1)]:
        with pytest.raises(ValueError) as theirs:
            jlax.Tolerance(**kwargs)
        with pytest.raises(ValueError, match=str(theirs.value)):
            lax.Tolerance(**kwargs)


def test_rounding_method_matches_jax():
    assert [(m.name, int(m)) for m in lax.RoundingMethod] == [
        (m.name, int(m)) for m in jlax.RoundingMethod]
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.3], np.float32)
    for method in range(2):
        got = lax.round(x, lax.RoundingMethod(method))
        np.testing.assert_array_equal(np.asarray(got),
                                      np.asarray(jlax.round(x, jlax.RoundingMethod(method))))
    text = str(didax.make_jaxpr(lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN))(x))
    assert "rounding_method=1" in text


@pytest.mark.parametrize("method", [3, "TO_NEAREST_EVEN"])
def test_invalid_rounding_methods_raise_as_in_jax(method):
    with pytest.raises(ValueError) as theirs:
        jlax.round(1.5, method)
    with pytest.raises(ValueError, match=str(theirs.value)):
        lax.round(1.5, method)
