"""bfloat16, the float8/float6/float4 types and the narrow ints (ml_dtypes) against JAX:
the whole promotion table, limits, conversions, arithmetic, reductions, grad, random, jit."""
import itertools

import jax
import jax.numpy as jnp_jax
import ml_dtypes
import numpy as np
import pytest
from jax_absent import needs_jax
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax._src import dtypes

FLOATS = dtypes.ML_FLOAT_NAMES
INTS = dtypes.ML_INT_NAMES
# XLA on CPU has no arrays of these (JAX refuses to create them), so they are checked against
# ml_dtypes alone.
NO_JAX_ARRAYS = {"float6_e2m3fn", "float6_e3m2fn", "int1", "uint1"}
STANDARD = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64", "complex64", "complex128"]
WEAK = {"int": int, "float": float, "complex": complex}


def _promote(mod, a, b):
    try:
        return str(np.dtype(mod.promote_types(a, b)))
    except Exception as e:  # noqa: BLE001 - the error type is part of what is compared
        return type(e).__name__


@pytest.mark.parametrize("x64", [False, True])
def test_promotion_table_matches_jax(x64):
    names = STANDARD + list(FLOATS) + list(INTS)
    ops = [(n, np.dtype(n)) for n in names] + list(WEAK.items())
    mismatches = []
    with both_x64(x64):
        for (na, a), (nb, b) in itertools.product(ops, ops):
            ours, theirs = _promote(jnp, a, b), _promote(jnp_jax, a, b)
            if ours != theirs:
                mismatches.append((na, nb, ours, theirs))
    assert not mismatches, mismatches[:20]


def test_promotion_errors_say_what_to_do():
    with pytest.raises(dtypes.TypePromotionError, match=r"int4, int8.*astype"):
        jnp.promote_types("int4", "int8")
    with pytest.raises(didax.dtypes.TypePromotionError):
        jnp.ones(2, jnp.float8_e4m3fn) + jnp.ones(2, jnp.float8_e5m2)


@pytest.mark.parametrize("make", [
    lambda m: m.ones(3, m.bfloat16) + 1.5,
    lambda m: m.ones(3, m.bfloat16) + m.ones(3, m.float16),
    lambda m: m.ones(3, m.bfloat16) * m.ones(3, m.int32),
    lambda m: m.ones(3, m.bfloat16) + 1j,
    lambda m: m.ones(3, m.int4) + 3,
    lambda m: m.ones(3, m.uint4) * True,
    lambda m: m.ones(3, m.float8_e4m3fn) * 2,
    lambda m: m.ones(3, m.float8_e5m2) + m.ones(3, m.uint8),
])
def test_result_dtypes_of_mixed_operations(make):
    ours, theirs = make(jnp), make(jnp_jax)
    assert ours.dtype == theirs.dtype
    assert ours.weak_type == theirs.weak_type
    np.testing.assert_array_equal(np.asarray(ours).astype(np.complex128),
                                  np.asarray(theirs).astype(np.complex128))


@needs_jax
def test_dtype_predicates_match_jax():
    kinds = [jnp_jax.floating, jnp_jax.inexact, jnp_jax.integer, jnp_jax.signedinteger,
             jnp_jax.unsignedinteger, jnp_jax.number, jnp_jax.generic, jnp_jax.complexfloating,
             np.float16, np.int8, ml_dtypes.bfloat16]
    for name in FLOATS + INTS:
        for kind in kinds:
            assert jnp.issubdtype(name, kind) == jnp_jax.issubdtype(name, kind), (name, kind)
            assert jnp.issubdtype(np.dtype(name), kind) == jnp_jax.issubdtype(name, kind)
        for kind in ("real floating", "integral", "signed integer", "unsigned integer",
                     "numeric", "complex floating"):
            assert jnp.isdtype(name, kind) == jnp_jax.isdtype(np.dtype(name), kind), (name, kind)


@needs_jax
def test_names_and_jaxpr_short_names():
    assert didax.dtypes.bfloat16 is jax.dtypes.bfloat16
    for name in FLOATS + INTS:
        ours, theirs = getattr(jnp, name), getattr(jnp_jax, name)
        assert np.dtype(ours) == np.dtype(theirs) and ours.__name__ == name
        aval = jax.ShapeDtypeStruct((2,), theirs)
        expected = str(jax.make_jaxpr(lambda x: x)(aval)).split()[3]  # e.g. "a:f8_e4m3fn[2]."
        got = str(didax.make_jaxpr(lambda x: x)(didax.ShapeDtypeStruct((2,), ours))).split()[3]
        assert got == expected


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_jax(name):
    ours, theirs = jnp.finfo(name), jnp_jax.finfo(name)
    assert isinstance(ours, np.finfo) and ours.dtype == theirs.dtype
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "nmant", "nexp",
                  "resolution", "smallest_subnormal", "epsneg", "maxexp", "minexp"):
        assert np.array_equal(getattr(ours, field), getattr(theirs, field),
                              equal_nan=True), field
    assert jnp.finfo(jnp.ones(2, name)).dtype == np.dtype(name)


@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_jax(name):
    ours, theirs = jnp.iinfo(name), jnp_jax.iinfo(name)
    assert isinstance(ours, np.iinfo)
    assert (ours.min, ours.max, ours.bits, ours.dtype) == \
        (theirs.min, theirs.max, theirs.bits, theirs.dtype)


VALUES = np.array([0.0, -0.3, 1.3, 2.7, -17.25, 100.0, 3e4, np.inf, -np.inf, np.nan])


def _bits(x):
    return np.asarray(x).view(np.uint8)


@pytest.mark.parametrize("name", FLOATS + INTS)
def test_conversions_match_jax(name):
    if name in FLOATS:
        values = VALUES.astype(np.float32)
    else:  # (out of range, the conversion is implementation-defined)
        values = np.arange(dtypes.iinfo(name).min, dtypes.iinfo(name).max + 1, dtype=np.float32)
    ours = [jnp.array(values, dtype=name), jnp.asarray(values).astype(name),
            didax.lax.convert_element_type(values, np.dtype(name))]
    expected = (values.astype(name) if name in NO_JAX_ARRAYS
                else jnp_jax.array(values, dtype=name))
    for x in ours:
        assert x.dtype == np.dtype(name)
        if name in FLOATS:
            np.testing.assert_array_equal(_bits(x), _bits(expected))
        else:
            np.testing.assert_array_equal(np.asarray(x).astype(np.int64),
                                          np.asarray(expected).astype(np.int64))
    back = jnp.array(values, dtype=name).astype(np.float32)
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, np.asarray(expected).astype(np.float32))


def _against_jax(f, *args, rtol=1e-2, atol=1e-2):
    ours = f(jnp, didax, *[jnp.asarray(a) for a in args])
    theirs = jax.jit(lambda *a: f(jnp_jax, jax, *a))(*[jnp_jax.asarray(a) for a in args])
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(np.asarray(ours, np.float64), np.asarray(theirs, np.float64),
                               rtol=rtol, atol=atol)


X = np.linspace(-2, 3, 12, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(3, 4)


@pytest.mark.parametrize("f", [
    lambda m, j, x: m.sin(x), lambda m, j, x: m.exp(x), lambda m, j, x: m.tanh(x) * x,
    lambda m, j, x: m.sum(x), lambda m, j, x: m.sum(x, axis=0), lambda m, j, x: m.mean(x),
    lambda m, j, x: m.var(x, axis=1), lambda m, j, x: m.prod(x[0]), lambda m, j, x: m.max(x),
    lambda m, j, x: m.cumsum(x, axis=1), lambda m, j, x: x @ x.T, lambda m, j, x: m.sqrt(m.abs(x)),
    lambda m, j, x: j.nn.softmax(x), lambda m, j, x: j.nn.relu(x) / 3,
    lambda m, j, x: m.linalg.norm(x), lambda m, j, x: m.where(x > 0, x, 0.5),
], ids=["sin", "exp", "tanh", "sum", "sum0", "mean", "var", "prod", "max", "cumsum", "matmul",
        "sqrt", "softmax", "relu", "norm", "where"])
def test_bfloat16_arithmetic_matches_jax(f):
    _against_jax(f, X)


def test_bfloat16_reductions_accumulate_in_float32_as_jax():
    x = didax.ShapeDtypeStruct((5,), jnp.bfloat16)
    for f in (lambda m: m.sum, lambda m: m.mean, lambda m: m.prod):
        ours = str(didax.make_jaxpr(f(jnp))(x))
        theirs = str(jax.make_jaxpr(f(jnp_jax))(jax.ShapeDtypeStruct((5,), jnp_jax.bfloat16)))
        assert ours.replace(" out_sharding=None", "") == theirs.replace(" out_sharding=None", "")
    # 256 + 1 + 1 + ... is 256 in bfloat16 arithmetic, but not summed in float32.
    ones = jnp.ones(300, jnp.bfloat16)
    assert float(jnp.sum(ones)) == float(jnp_jax.sum(jnp_jax.ones(300, jnp_jax.bfloat16))) == 300


def _loss(m, j, x):
    return m.sum(m.sin(x) * x + m.tanh(x @ x.T)[0, 0])


@pytest.mark.parametrize("order", [1, 2])
def test_bfloat16_grad_matches_jax(order):
    def f(m, j, x):
        g = j.grad(lambda x: _loss(m, j, x))
        if order == 2:
            g = j.grad(lambda x: m.sum(j.grad(lambda x: _loss(m, j, x))(x) ** 2))
        return g(x)
    _against_jax(f, X, rtol=3e-2, atol=6e-2)
    _against_jax(lambda m, j, x: j.jvp(lambda x: _loss(m, j, x), (x,), (m.ones_like(x),))[1],
                 X, rtol=3e-2, atol=6e-2)


def test_bfloat16_grad_agrees_with_float32_grad():
    """The derivative rules are dtype-generic: bf16 results are the float32 ones, rounded."""
    g16 = didax.grad(lambda x: _loss(jnp, didax, x))(jnp.asarray(X))
    g32 = didax.grad(lambda x: _loss(jnp, didax, x))(jnp.asarray(X, np.float32))
    assert g16.dtype == jnp.bfloat16
    np.testing.assert_allclose(np.asarray(g16, np.float32), g32, rtol=3e-2, atol=3e-2)
    didax.test_util.check_grads(lambda x: _loss(jnp, didax, x), (jnp.asarray(X, np.float64),),
                                order=2, modes=("fwd", "rev"))


def test_bfloat16_under_jit_vmap_and_tangent_types():
    def f(x):
        return jnp.sum(jnp.sin(x) * x, axis=-1) + jnp.mean(x)
    x = jnp.asarray(X)
    out = didax.jit(f)(x)
    assert out.dtype == jnp.bfloat16
    np.testing.assert_array_equal(_bits(out), _bits(f(x)))
    np.testing.assert_array_equal(_bits(didax.vmap(f)(x)), _bits(jnp.stack([f(r) for r in x])))
    text = didax.jit(didax.grad(lambda x: jnp.sum(f(x)))).lower(x).compile().as_text()
    assert "def f(" in text
    assert didax.ShapeDtypeStruct((2,), jnp.bfloat16).dtype == jnp.bfloat16
    primal, tangent = didax.jvp(jnp.sin, (x,), (jnp.ones_like(x),))
    assert tangent.dtype == jnp.bfloat16


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn"])
def test_random_floats_match_jax(dtype):
    key = didax.random.key(7)
    u = didax.random.uniform(key, (64,), dtype)
    ju, jn = jax.jit(lambda k: (jax.random.uniform(k, (64,), dtype),
                                jax.random.normal(k, (64,), dtype)))(jax.random.key(7))
    assert u.dtype == ju.dtype
    np.testing.assert_array_equal(_bits(u), _bits(ju))  # the same bits become the mantissa
    n = didax.random.normal(key, (64,), dtype)
    assert n.dtype == jn.dtype
    np.testing.assert_allclose(np.asarray(n, np.float32), np.asarray(jn, np.float32),
                               rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn"])
def test_narrow_float_arithmetic_matches_jax(name):
    x = np.array([0.5, 1.0, 1.5, -2.0, 3.0, 0.25], np.float32).astype(name)
    for f in (lambda m, j, x: x * 2, lambda m, j, x: m.sum(x), lambda m, j, x: m.mean(x),
              lambda m, j, x: x + m.ones(6, m.int8), lambda m, j, x: m.maximum(x, -x)):
        _against_jax(f, x, rtol=0.13, atol=0.13)


@pytest.mark.parametrize("name", ["int4", "uint4", "int2", "uint2"])
def test_narrow_int_arithmetic_wraps_as_jax(name):
    info = dtypes.iinfo(name)
    x = np.arange(info.min, info.max + 1).astype(name)
    for f in (lambda m, j, x: x + 1, lambda m, j, x: x * x, lambda m, j, x: x - 3,
              lambda m, j, x: (x < 1).astype(m.int32), lambda m, j, x: m.maximum(x, 1)):
        _against_jax(f, x, rtol=0, atol=0)


def test_narrow_ints_have_float0_tangents():
    x = jnp.ones(3, jnp.int4)
    g = didax.grad(lambda x, y: jnp.sum(y * x.astype(jnp.float32)), allow_int=True)(x, 2.0)
    assert g.dtype == didax.dtypes.float0 and g.shape == (3,)
