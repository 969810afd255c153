"""The interpreters' fast paths give exactly what the general paths give: values, dtypes,
weak types and errors (eval of one or two Arrays, binary abstract eval, shape checks, the
JVP rules `defjvp` makes, small broadcasts, rank and dtype promotion, the backward pass)."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src import core
from didax._src.config import enable_x64
from didax._src.interpreters import jvp as jvp_interp
from didax._src.lax import elementwise as lax_ew
from didax._src.lax import shape as lax_shape
from didax._src.numpy.util import promote_dtypes, promote_shapes
from didax._src.typecheck import check_shape, naryop_aval, num


def _weak(x, weak):
    return core.Array(np.asarray(x, np.float32), weak)


@pytest.mark.parametrize("wx, wy", [(False, False), (False, True), (True, False), (True, True)])
def test_binary_weak_types_match_general_path(wx, wy):
    x, y = _weak(1.5, wx), _weak(2.0, wy)
    fast = lax.mul(x, y)  # two Arrays: the eval fast path and the binary abstract eval
    assert (fast.dtype, fast.weak_type, float(fast)) == (np.float32, wx and wy, 3.0)
    general = naryop_aval("mul", (x.aval, y.aval), num)  # the general type rule
    assert lax_ew.mul_p.abstract_eval(x.aval, y.aval) == general
    mixed = lax_ew.mul_p.bind(np.asarray(1.5, np.float32), y)  # the general eval loop
    assert (mixed.dtype, mixed.weak_type, float(mixed)) == (np.float32, False, 3.0)


def test_binary_fast_path_errors_unchanged():
    with pytest.raises(TypeError, match="lax.add requires arguments to have the same dtypes"):
        lax.add(jnp.ones(3, np.float32), jnp.ones(3, np.int32))
    with pytest.raises(TypeError, match="add does not accept dtype bool"):
        lax.add(jnp.ones(3, bool), jnp.ones(3, bool))
    with pytest.raises(TypeError, match="incompatible shapes"):
        lax.add(jnp.ones(3), jnp.ones(4))


def test_multiple_results_through_eval_fast_paths():
    x = jnp.array([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(lax.sort(x)), [1.0, 2.0, 3.0])  # one operand
    keys, vals = lax.sort((x, jnp.array([0, 1, 2])), num_keys=1)  # two operands
    np.testing.assert_array_equal(np.asarray(keys), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(vals), [1, 2, 0])


def test_check_shape_fast_path_and_errors():
    assert check_shape("f", (2, 3)) == (2, 3)
    assert check_shape("f", (True, 2)) == (1, 2) and type(check_shape("f", (True,))[0]) is int
    assert check_shape("f", [np.int64(2)]) == (2,)
    with pytest.raises(TypeError, match="negative dimension"):
        check_shape("f", (2, -1))
    with pytest.raises(TypeError, match="sequences of integers"):
        check_shape("f", (2, None))


@pytest.mark.parametrize("shape", [(3, 4), (300, 400)])  # copied, and a broadcast view
def test_broadcast_in_dim_small_and_large(shape):
    x = jnp.arange(shape[1], dtype=np.float32)
    out = lax.broadcast_in_dim(x, shape, (1,))
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(np.asarray(x), shape))
    assert out.dtype == np.float32 and out.weak_type is False
    s = lax.broadcast_in_dim(jnp.asarray(2.0), shape, ())
    assert s.weak_type is True and float(s[0, 0]) == 2.0


def test_broadcast_in_dim_dimension_errors():
    x = jnp.ones((2, 2))
    for dims in [(1, 0), (0, 0), (-1, 0), (0, 3)]:
        with pytest.raises(TypeError, match="strictly increasing"):
            lax_shape.broadcast_in_dim_p.bind(x, shape=(2, 2, 2), broadcast_dimensions=dims,
                                              sharding=None)


def test_expand_dims_and_reshape_impls():
    x = jnp.arange(6.0).reshape(2, 3)
    out = lax_shape.expand_dims_p.bind(x, dimensions=(-1, 0))
    np.testing.assert_array_equal(np.asarray(out), np.expand_dims(np.asarray(x), (-1, 0)))
    out = lax.reshape(x, (3, 2), (1, 0))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x).T.reshape(3, 2))
    with pytest.raises(TypeError, match="cannot reshape"):
        lax.reshape(x, (4, 2))


def test_promote_dtypes_fast_path_respects_x64():
    a, b = jnp.ones(2, np.float32), jnp.ones(2, np.float32)
    assert all(p is q for p, q in zip(promote_dtypes(a, b), (a, b)))
    with enable_x64(True):
        c, d = jnp.ones(2, np.float64), jnp.ones(2, np.float64)
    out = promote_dtypes(c, d)  # float64 arrays canonicalize to float32 without x64
    assert [o.dtype for o in out] == [np.float32, np.float32]
    w = jnp.asarray(1.0)  # weak: the general path decides
    assert [o.weak_type for o in promote_dtypes(w, w)] == [True, True]


def test_promote_shapes_errors_unchanged():
    # as JAX: equal ranks are lax's TypeError, ranks to promote NumPy's ValueError
    with pytest.raises(TypeError, match="incompatible shapes for broadcasting"):
        promote_shapes("add", jnp.ones((2, 3)), jnp.ones((2, 4)))
    with pytest.raises(ValueError, match="incompatible shapes for broadcasting"):
        promote_shapes("add", jnp.ones(3), jnp.ones((2, 4)))
    a, b = promote_shapes("add", jnp.ones((2, 3)), jnp.ones((1, 3)))
    assert (a.shape, b.shape) == ((2, 3), (1, 3))


def test_defjvp_rules_with_zero_tangents():
    x, y = jnp.asarray(2.0), jnp.asarray(3.0)
    zero = core.Zero(core.get_aval(x))
    out, t = lax_ew.sin_p.get_rule("jvp")([x], [zero])
    assert type(t) is core.Zero and float(out) == float(np.sin(np.float32(2.0)))
    out, t = lax_ew.exp_p.get_rule("jvp")([x], [zero])
    assert type(t) is core.Zero
    out, t = lax_ew.mul_p.get_rule("jvp")([x, y], [zero, zero])
    assert type(t) is core.Zero and float(out) == 6.0
    out, t = lax_ew.mul_p.get_rule("jvp")([x, y], [zero, jnp.asarray(1.0)])
    assert float(t) == 2.0
    # broadcasting operands: contributions are broadcast to the output's shape
    _, t = jax.jvp(lambda a, b: a * b, (jnp.ones((2, 3)), jnp.ones((1, 3))),
                   (jnp.ones((2, 3)), jnp.full((1, 3), 2.0)))
    np.testing.assert_array_equal(np.asarray(t), np.full((2, 3), 3.0))


def test_backward_pass_repeated_inputs():
    g = jax.grad(lambda x: x * x * x + jnp.sum(jnp.broadcast_to(x, (3,))))(2.0)
    assert float(g) == 15.0
    g2 = jax.grad(jax.grad(lambda x: jnp.tanh(x) * jnp.sin(x)))(0.7)
    x = 0.7
    t, s, c = np.tanh(x), np.sin(x), np.cos(x)
    d1t = 1 - t * t
    d2t = -2 * t * d1t
    np.testing.assert_allclose(float(g2), d2t * s + 2 * d1t * c - t * s, rtol=1e-5)


@pytest.mark.parametrize("define", [jvp_interp.defjvp, jvp_interp.defjvp2])
def test_defjvp_rules_with_fewer_functions_than_operands(define):
    # One function for a two-operand primitive (or two for three): the operands without a
    # function are not differentiated.
    p = core.Primitive("test_double_first")  # unregistered: other tests enumerate primitives
    p.def_impl(lambda x, *rest: x * 2)
    p.def_abstract_eval(lambda x, *rest: x)
    fn = ((lambda g, x, *rest: lax.mul(g, 2.0)) if define is jvp_interp.defjvp
          else (lambda g, ans, x, *rest: lax.mul(g, 2.0)))
    define(p, fn)
    ones = (jnp.asarray(1.0), jnp.asarray(1.0))
    out, t = jax.jvp(lambda x, y: p.bind(x, y), (jnp.asarray(1.0), jnp.asarray(3.0)), ones)
    assert (float(out), float(t)) == (2.0, 2.0)
    q = core.Primitive("test_double_first_of_three")
    q.def_impl(lambda x, *rest: x * 2)
    q.def_abstract_eval(lambda x, *rest: x)
    define(q, fn, None)
    out, t = jax.jvp(lambda x, y, z: q.bind(x, y, z), (jnp.asarray(1.0),) * 3, ones + ones[:1])
    assert (float(out), float(t)) == (2.0, 2.0)


# --------------------------------------------------------------------------------------
# Caches of eager autodiff: result types, Python scalars, zero tangents


def test_result_type_cache_repeats_errors_and_follows_x64():
    x = jnp.ones(3, np.float32)
    for _ in range(2):  # only successes are cached: the second bad call raises too, located
        with pytest.raises(TypeError, match="test_fast_paths.py"):
            lax.add(x, jnp.ones(4, np.float32))
    assert lax_ew.convert_element_type(x, np.float64).dtype == np.float32
    with enable_x64():
        assert lax_ew.convert_element_type(x, np.float64).dtype == np.float64
        assert jnp.sin(jnp.ones(3, np.float64)).dtype == np.float64
    assert lax_ew.convert_element_type(x, np.float64).dtype == np.float32
    lax.add(x, x)  # two operands of one type: the primitive's own table
    assert lax_ew.add_p.types_of_pair[x.aval] is x.aval
    lax.add(x, jnp.ones((), np.float32))  # of two types: the shared one
    assert core._aval_cache
    with enable_x64():  # a flag's change empties both
        assert not lax_ew.add_p.types_of_pair and not core._aval_cache


def test_unregistered_primitives_result_types_follow_x64():
    """A primitive outside the registry (a library's, declared with jax.extend) keeps its
    result types in its own tables too: a flag's change empties them as well."""
    from didax._src import dtypes

    p = core.Primitive("test_default_float_type")  # unregistered, as a library's is
    p.def_impl(lambda x: x.astype(dtypes.canonicalize_dtype(np.float64)))
    p.def_abstract_eval(lambda x: core.ShapedArray(
        x.shape, dtypes.canonicalize_dtype(np.float64)))
    x = jnp.ones(3, np.float32)
    assert p.bind(x).dtype == np.float32
    with enable_x64():
        assert p.bind(x).dtype == np.float64
    assert p.bind(x).dtype == np.float32


def test_a_primitive_named_as_another_leaves_its_tables_registered():
    """Tables are registered per primitive object: a second primitive of the same name (a
    library's "sin") does not take the first one's place, which clear_caches still empties."""
    from didax._src import caches

    x = jnp.ones(3, np.float32)
    jnp.sin(x)
    assert lax_ew.sin_p.types_of_one
    namesake = core.Primitive("sin")
    namesake.def_abstract_eval(lambda x: x)
    jax.clear_caches()
    assert not lax_ew.sin_p.types_of_one
    registered = {id(t.table) for t in caches.tables().values()}
    assert {id(lax_ew.sin_p.types_of_one), id(namesake.types_of_one)} <= registered


def test_unhashable_parameters_are_not_cached():
    def weird_aval(x, *, p):
        return x

    prim = core.Primitive("test_unhashable_param")
    prim.def_impl(lambda x, *, p: x)
    prim.def_abstract_eval(weird_aval)
    out = prim.bind(jnp.ones(2), p=[1, 2])  # a list: the cache is skipped, not an error
    np.testing.assert_array_equal(out, np.ones(2))


@pytest.mark.parametrize("fn", [lax.mul, jnp.multiply, lambda x, s: x * s])
def test_shared_python_scalars_keep_signs_and_nans(fn):
    x = jnp.ones(2, np.float32)
    for s, want in [(-0.0, -0.0), (0.0, 0.0), (-0.0, -0.0), (2.5, 2.5), (float("nan"), np.nan),
                    (float("nan"), np.nan), (-2.5, -2.5)]:
        out = np.asarray(fn(x, s))
        np.testing.assert_array_equal(out, np.full(2, want, np.float32))
        assert np.signbit(out[0]) == np.signbit(want)
    c = jnp.asarray(np.full(2, complex(1, -0.0), np.complex64))  # -0 + s.imag: s.imag's sign
    for s in [complex(1, -0.0), complex(1, 0.0), complex(1, -0.0)]:
        assert np.signbit(np.asarray(lax.add(c, s)).imag[0]) == np.signbit(s.imag)


def test_shared_python_scalars_take_each_dtype_and_weak_type():
    for dtype in [np.float16, np.float32, np.complex64]:
        y = lax.add(jnp.ones(2, dtype), 1.5)
        assert (y.dtype, y.weak_type) == (dtype, False)
    w = lax.add(core.Array(np.ones(2, np.float32), True), 1.5)
    assert (w.dtype, w.weak_type) == (np.float32, True)
    s = jnp.ones(2, np.float32) + 3  # an int with a float array: promotion, then the cache
    assert (s.dtype, s.weak_type, float(s[0])) == (np.float32, False, 4.0)


def test_zero_tangents_are_shared_and_typed():
    z = core.zero_tangent(core.ShapedArray((2,), np.int32))
    assert core.zero_tangent(core.ShapedArray((2,), np.int32)) is z
    assert z.aval.dtype == jax.dtypes.float0
    assert core.zero_tangent(core.ShapedArray((2,), np.float32)).aval.dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.bool_])
@pytest.mark.parametrize("weak", [False, True])
def test_unary_and_reduction_fast_paths_match_general_path(dtype, weak):
    x = core.Array(np.asarray([[0.5, 1.5, -2.0], [3.0, 0.25, 1.0]]).astype(dtype), weak)
    if np.dtype(dtype).kind == "f":
        general = jax.jit(jnp.sin)(x)  # staged: the general path
        eager = jnp.sin(x)
        assert (eager.dtype, eager.weak_type) == (general.dtype, general.weak_type)
        np.testing.assert_allclose(np.asarray(eager, np.float64), np.asarray(general, np.float64),
                                   rtol=1e-3 if dtype == np.float16 else 1e-6)
    for red in [jnp.sum, jnp.max, jnp.mean]:
        for axis in [None, 0, 1, -1]:
            for keepdims in [False, True]:
                eager = red(x, axis=axis, keepdims=keepdims)
                staged = _jitted_reduction(red, axis, keepdims)(x)
                assert (eager.shape, eager.dtype, eager.weak_type) == (
                    staged.shape, staged.dtype, staged.weak_type), (red, axis, keepdims)
                np.testing.assert_allclose(np.asarray(eager, np.float64),
                                           np.asarray(staged, np.float64), rtol=1e-3)
    with pytest.raises(Exception, match="axis 2 is out of bounds"):
        jnp.sum(x, axis=2)
    if dtype == np.float32:
        with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
            jnp.max(jnp.ones((0, 3), np.float32), axis=0)
        np.testing.assert_array_equal(jnp.all(jnp.asarray([0.5, 0.0]), axis=0), False)


def test_side_effects_run_on_every_eager_grad_call():
    calls = []

    def f(x):
        calls.append(1)
        return jnp.sum(jnp.sin(x) * 2.0)

    g = jax.grad(f)
    for i in range(3):
        np.testing.assert_allclose(g(jnp.ones(3)), 2 * np.cos(np.ones(3)), rtol=1e-6)
        assert len(calls) == i + 1


@pytest.mark.parametrize("c", [0.1, -0.0, 0.0, 2, -3, float("nan"), float("inf"), 1e40])
def test_python_scalars_in_eager_arithmetic_read_as_numpy_reads_them(c):
    """A Python scalar is bound as a shared 0-d array of the array's dtype (zeros and NaN
    never shared): the same bits as NumPy casting the scalar itself."""
    x = np.array([1.5, -0.0, 0.0, 3.0, -2.0], np.float32)
    for _ in range(2):  # (the second time from the cache)
        for f in (lambda a, b: a + b, lambda a, b: b - a, lambda a, b: a * b,
                  lambda a, b: a / b, lambda a, b: b / a):
            with np.errstate(all="ignore"):
                want = f(x, c).astype(np.float32)
                got = np.asarray(f(jnp.asarray(x), c))
            assert got.dtype == np.float32
            np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    # an int out of the array's range wraps as in JAX (NumPy raises), through the default int
    x8 = jnp.asarray(np.array([1, 2], np.int8))
    np.testing.assert_array_equal(np.asarray(x8 + 300), [45, 46])
    assert (x8 + 300).dtype == np.int8
    with pytest.raises(OverflowError):
        x8 + 2 ** 31  # (as JAX: past int32, without 64-bit types)


def test_eager_binary_results_carry_their_types():
    """Every eager result's type (weak types included) matches its value."""
    x = jnp.asarray(np.array([1.0, 2.0], np.float32))
    y = jnp.asarray(np.array([1.0, 3.0], np.float32))
    w = jnp.asarray(2.0)  # weakly typed
    m = jnp.asarray(np.ones((3, 2), np.float32))
    for r in (x == y, x < y, 2 < x, x * y, x + 1, 1.0 - x, x * m, w * 3.0, w * x, x * w,
              x - w, (x * y) * (x + y), jnp.asarray(np.array([1, 2], np.int32)) * 3):
        a = r.aval
        assert (a.dtype, a.shape) == (r._value.dtype, r._value.shape)
    assert (w * 3.0).weak_type and not (x * w).weak_type


def test_debug_nans_checks_every_eager_result_the_fast_paths_compute():
    """While jax_debug_nans is on, evaluation checks each result jnp computes: a NaN is
    reported on every call, not only the first."""
    x = jnp.asarray(np.array([-1.0, 1.0], np.float32))
    y = jnp.asarray(np.array([0.0, 1.0], np.float32))
    with jax.debug_nans(True):
        for _ in range(3):
            with pytest.raises(FloatingPointError, match="log"):
                jnp.log(x)
            with pytest.raises(FloatingPointError, match="div"):
                y / y
    np.testing.assert_array_equal(np.isnan(np.asarray(jnp.log(x))), [True, False])


def _jitted_reduction(red, axis, keepdims):
    return jax.jit(lambda v: red(v, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("shapes", [((4, 3), (3,)), ((3,), (2, 4, 3)), ((4, 1), (1, 3)),
                                    ((2, 1, 3), (5, 1)), ((), (4, 3)), ((4, 3), (4, 3))])
@pytest.mark.parametrize("fn", [jnp.add, jnp.multiply, jnp.maximum, jnp.less, jnp.divide,
                                lambda a, b: a - b])
def test_broadcasting_arrays_of_one_type_bind_as_promotion_does(shapes, fn):
    """Two strong arrays of one dtype and shapes that broadcast take a shortcut past
    promotion: the same bits, types and jaxpr as promotion and lax give them."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    got = fn(jnp.asarray(a), jnp.asarray(b))

    def general(x, y):  # rank promotion and the primitive, spelled out
        x, y = promote_shapes("fn", x, y)
        return fn(x, y)

    want = general(jnp.asarray(a), jnp.asarray(b))
    assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert str(jax.make_jaxpr(fn)(a, b)) == str(jax.make_jaxpr(general)(a, b))


def test_broadcasting_shortcut_leaves_errors_and_mixed_types_to_promotion():
    with pytest.raises(ValueError, match="add: incompatible shapes for broadcasting"):
        jnp.add(jnp.ones((4, 3)), jnp.ones((2,)))
    mixed = jnp.add(jnp.ones((4, 3), np.float32), jnp.ones(3, np.int32))
    assert (mixed.dtype, mixed.shape) == (np.float32, (4, 3))
    weak = jnp.add(jnp.ones((4, 3), np.float32), jnp.asarray(jnp.ones(3)) * 1.0)
    assert weak.dtype == np.float32
