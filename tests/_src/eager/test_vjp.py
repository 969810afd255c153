"""Eager reverse mode through compiled steps (didax/_src/interpreters/eager_vjp.py) gives
what the interpreters' general path gives: values, dtypes and weak types of gradients, of
every order, under jit and vmap of the pullback, with Python side effects on every call and
the same errors. `didax_eager_vjp_steps` is "first" (the default: every signature built when
first seen), "second" (built when a second vjp sees it, so one backward pass mixes steps and
general equations) or "off" (the general path only)."""
import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from random_programs import programs

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64, flag_context
from didax._src.eager import vjp as eager_vjp


@pytest.fixture(autouse=True, params=["numpy tier", "both tiers"])
def native_tier(request):
    """Steps on the NumPy tier, and steps of several equations also built as native code,
    which jit's "check" mode runs beside the NumPy tier's on every call, comparing bits."""
    with flag_context("didax_native_tier", "off" if request.param == "numpy tier" else "check"):
        yield


@contextlib.contextmanager
def steps(mode):
    with flag_context("didax_eager_vjp_steps", mode):  # (a change empties the cache; the
        eager_vjp._steps.clear()  # same mode does not)
        eager_vjp._sightings.clear()
        yield


def built():
    """The primitives computed by built steps (of primitives, or of library functions)."""
    return {e.primitive.name for s in eager_vjp._steps.values()
            if s is not eager_vjp._UNCACHEABLE for e in s.jaxpr.eqns}


def _heads(name):
    """The signatures whose head (a primitive, or a library function) is called `name`."""
    return [k for k in eager_vjp._steps
            if getattr(k[0], "name", None) == name or getattr(k[0], "__name__", None) == name]


def _rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _spd(n, dtype):
    a = _rand(n, n, seed=7, dtype=dtype)
    return a @ a.T + n * np.eye(n, dtype=dtype)


def _nn_functions(x):
    w = jnp.arange(6.0)
    acts = (jax.nn.relu(x) + jax.nn.relu6(3 * x) + jax.nn.gelu(x) + jax.nn.softplus(x)
            + jax.nn.silu(x) + jax.nn.elu(x) + jax.nn.log_sigmoid(x) + jax.nn.standardize(x)
            + jax.nn.glu(jnp.concatenate([x, x])))
    return (jnp.sum(acts * w) + jnp.sum(jax.nn.softmax(x) * w + jax.nn.log_softmax(x) ** 2)
            + jax.nn.logsumexp(x) + jnp.sum(jax.nn.log1mexp(jnp.abs(x) + 0.1)))


# name: (function of float arrays returning a scalar, argument shapes, primitives expected to
# be built in "first" mode)
CATALOG = {
    "unary": (lambda x: jnp.sum(jnp.tanh(jnp.sin(x)) * jnp.exp(jnp.cos(x))
                                + jnp.log1p(x * x) + jnp.sqrt(x * x + 1.0) + jnp.abs(x)
                                + jax.nn.sigmoid(x) + lax.erf(x) + x ** 3),
              [(3, 4)], {"sin", "tanh", "exp", "log1p", "sqrt", "abs", "logistic", "erf",
                         "integer_pow"}),
    "binary and broadcasting": (lambda x, y: jnp.sum(x * y + 2.0 - y / (x * x + 1.0)
                                                     + jnp.maximum(x, 0.0) * jnp.minimum(y, x)
                                                     + x ** lax.clamp(1.0, y, 2.0)),
                                [(3, 4), (4,)], {"mul", "div", "max", "min", "pow"}),
    "ties in max": (lambda x: jnp.sum(jnp.maximum(jnp.round(x) + 0.0 * x, 0.0))
                    + jnp.max(jnp.round(x) + 0.0 * x), [(4, 5)], {"max", "reduce_max"}),
    "where and comparisons": (lambda x, y: jnp.sum(jnp.where(x > y, x * y, jnp.sin(y))),
                              [(6,), (6,)], {"select_n"}),
    "reductions": (lambda x: jnp.mean(x, axis=0).sum() + jnp.prod(x[:2] + 2.0)
                   + jax.nn.logsumexp(x, axis=1).sum() + jnp.var(x) + jnp.cumsum(x, 1).sum()
                   + jnp.cumprod(x[:, :3] * 0.5 + 1.0, 0).sum() + lax.cummax(x, 0).sum(),
                   [(4, 5)], {"reduce_sum", "reduce_prod", "reduce_max", "cumsum",
                              "cumprod", "cummax"}),
    "sort": (lambda x: jnp.sum(jnp.sort(x, axis=1) * jnp.arange(5.0))
             + jnp.sum(lax.sort((x[0], x[1]), num_keys=1)[1] * jnp.arange(5.0)),
             [(3, 5)], {"sort"}),
    "shapes": (lambda x: jnp.sum(jnp.concatenate([x.T.reshape(-1), jnp.flip(x, 0)[1:, ::2]
                                                  .ravel(), jnp.pad(x, ((1, 0), (0, 2)))
                                                  .ravel()]) * 1.5)
               + jnp.sum(jnp.stack(jnp.split(x, 2, axis=1))[:, None] ** 2)
               + jnp.sum(jnp.broadcast_to(x[:, None, :1], (4, 6, 4))
                         * jnp.expand_dims(x, 1)[..., :4]),
               [(4, 6)], {"transpose", "reshape", "rev", "slice", "pad", "concatenate",
                          "broadcast_in_dim"}),
    "indexing": (lambda x, y: jnp.sum(x[jnp.array([2, 0, 2])] * 3.0)
                 + jnp.sum(x.at[1, 2:].add(y[:3]).at[jnp.array([0, 3]), 0].set(y[0]) ** 2)
                 + jnp.sum(jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1)[:, 0] * y[:4])
                 + jnp.sum(lax.dynamic_slice(x, (1, 2), (2, 3)) * lax.dynamic_update_slice(
                     x, y[:6].reshape(2, 3), (2, 1))[:2, :3]),
                 [(4, 5), (6,)], {"gather", "scatter", "sort"}),
    "products": (lambda x, w, v: jnp.sum(jnp.tanh(x @ w) @ v)
                 + jnp.sum(jnp.einsum("ij,kj->ik", x, w.T) ** 2) + jnp.dot(v, v)
                 + jnp.sum(jnp.outer(v, v) * 0.5)
                 + jnp.sum(jnp.einsum("bij,bjk->bik", x.reshape(2, 2, 3), w.reshape(2, 3, 2))),
                 [(4, 3), (3, 4), (4,)], {"dot_general"}),
    "convolution": (lambda x, k: jnp.sum(lax.conv_general_dilated(
        x, k, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")) ** 2),
        [(2, 3, 5, 5), (4, 3, 3, 3)], {"conv_general_dilated"}),
    "linear algebra": (lambda a, b: jnp.sum(jnp.linalg.solve(a @ a.T + 4.0 * jnp.eye(4), b))
                       + jnp.linalg.slogdet(a @ a.T + jnp.eye(4))[1]
                       + jnp.sum(jnp.linalg.cholesky(a @ a.T + jnp.eye(4)))
                       + jnp.sum(jnp.linalg.eigh(a + a.T)[0] ** 2)
                       + jnp.sum(jnp.abs(jnp.linalg.qr(a)[1])),
                       [(4, 4), (4, 2)], {"cholesky", "eigh"}),
    "integers and casts": (lambda x: jnp.sum(x * jnp.arange(6) + (x > 0).astype(x.dtype) * x
                                             + (x * 3).astype(jnp.int32) * x
                                             + jnp.floor(x) + lax.stop_gradient(x) * x),
                           [(6,)], {"mul", "convert_element_type"}),
    "complex": (lambda x: jnp.sum(jnp.real(jnp.exp(1j * x) * (x + 2j)) + jnp.abs(x + 1j * x)),
                [(5,)], {"exp", "mul", "real"}),
    "nn functions": (lambda x: _nn_functions(x), [(6,)],
                     {"select_n", "logistic", "tanh", "exp", "reduce_max"}),
    "control flow and custom rules": (
        lambda x: jnp.sum(lax.cond(x[0] > 0, jnp.sin, jnp.cos, x))
        + lax.scan(lambda c, xi: (c * jnp.tanh(xi) + xi, c), 1.0, x)[0]
        + lax.fori_loop(0, 3, lambda i, c: c * 0.5 + jnp.sin(c), x).sum()
        + jnp.sum(jax.nn.relu(x) + jax.nn.softplus(x) + jax.checkpoint(jnp.sinh)(x))
        + jax.jit(lambda y: jnp.sum(jnp.cos(y) ** 2))(x) + jnp.sum(jnp.sin(x)),
        [(5,)], {"sin"}),
}


def _args(shapes, dtype):
    return [jnp.asarray(_rand(*s, seed=i, dtype=dtype)) for i, s in enumerate(shapes)]


def _grads(f, args, mode):
    with steps(mode):
        g = jax.grad(f, argnums=tuple(range(len(args))))
        out = [g(*args) for _ in range(3)][-1]  # ("second": built by the second call)
        return out, built()


def _assert_close(got, want, rtol):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape and g.weak_type == w.weak_type
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol,
                                   atol=rtol * max(1.0, float(np.max(np.abs(np.asarray(w))))))


@pytest.mark.parametrize("x64", [False, True], ids=["float32", "float64"])
@pytest.mark.parametrize("name", CATALOG)
def test_steps_give_the_general_paths_gradients(name, x64):
    f, shapes, expected = CATALOG[name]
    with enable_x64(x64):
        args = _args(shapes, np.float64 if x64 else np.float32)
        want, _ = _grads(f, args, "off")
        rtol = 1e-12 if x64 else 2e-6
        for mode in ("first", "second"):
            got, made = _grads(f, args, mode)
            _assert_close(got, want, rtol)
            assert expected <= made, f"steps not built in {mode} mode: {expected - made}"


def test_control_flow_calls_and_effects_keep_the_general_path():
    f, shapes, _ = CATALOG["control flow and custom rules"]
    with steps("first"):
        jax.grad(f)(*_args(shapes, np.float32))
        kept = {getattr(k[0], "name", None) for k, s in eager_vjp._steps.items()
                if s is eager_vjp._UNCACHEABLE}
    assert {"cond", "scan", "jit"} <= kept and not {"cond", "scan", "while", "jit"} & built()


def test_vector_outputs_pytrees_and_has_aux():
    def f(p, x):
        h = jnp.tanh(x @ p["w"] + p["b"])
        return {"h": h, "s": jnp.sum(h ** 2)}, jnp.max(h)

    p = {"w": jnp.asarray(_rand(3, 4)), "b": jnp.asarray(_rand(4, seed=1))}
    x = jnp.asarray(_rand(5, 3, seed=2))
    ct = {"h": jnp.asarray(_rand(5, 4, seed=3)), "s": jnp.asarray(np.float32(2.0))}
    results = {}
    for mode in ("off", "first"):
        with steps(mode):
            out, pull, aux = jax.vjp(f, p, x, has_aux=True)
            results[mode] = (out, pull(ct), aux)
    _assert_close(results["first"], results["off"], 2e-6)


@pytest.mark.parametrize("x64", [False, True], ids=["float32", "float64"])
def test_derivatives_of_every_order(x64):
    def f(x):
        return jnp.sum(jnp.tanh(x) * jnp.sin(x) + x ** 3 * jnp.exp(-x * x))

    with enable_x64(x64):
        x = jnp.asarray(_rand(4, dtype=np.float64 if x64 else np.float32))
        results = {}
        for mode in ("off", "first", "second"):
            with steps(mode):
                results[mode] = [
                    [jax.grad(f)(x), jax.grad(lambda y: jnp.sum(jax.grad(f)(y) ** 2))(x),
                     jax.hessian(f)(x), jax.jacrev(jax.jacrev(jax.grad(f)))(x),
                     jax.jacfwd(jax.grad(f))(x)] for _ in range(2)][-1]
        for mode in ("first", "second"):
            _assert_close(results[mode], results["off"], 1e-12 if x64 else 1e-5)
        scalar = jnp.asarray(0.7, x.dtype)
        fourth = jax.grad(jax.grad(jax.grad(jax.grad(lambda t: jnp.tanh(t) * jnp.sin(t)))))
        with steps("first"):
            got = fourth(scalar)
        with steps("off"):
            np.testing.assert_allclose(float(got), float(fourth(scalar)), rtol=1e-5)


def test_jit_and_vmap_of_a_pullback_bind_the_transposed_equations():
    def f(w, x):
        return jnp.tanh(x @ w) * jnp.sin(x[:, :1])

    w, x = jnp.asarray(_rand(3, 4)), jnp.asarray(_rand(5, 3, seed=1))
    cts = jnp.asarray(_rand(2, 5, 4, seed=2))
    results = {}
    for mode in ("off", "first"):
        with steps(mode):
            _, pull = jax.vjp(f, w, x)
            results[mode] = (jax.vmap(pull)(cts), jax.jit(pull)(cts[0]),
                             jax.jacrev(f, argnums=(0, 1))(w, x))
            text = str(jax.make_jaxpr(pull)(cts[0]))
            assert "linearized" not in text  # the steps' equations, as JAX writes them
    _assert_close(results["first"], results["off"], 2e-6)


def test_every_call_gives_the_same_bits_whatever_ran_before():
    """With the default settings an eager gradient is the same bits on a function's first
    call and on every later one, after other functions built steps of the same signatures,
    and after the steps were dropped (steps group a function's cotangents otherwise than the
    general path does, so building them at a second sighting would not give this)."""
    f, shapes, _ = CATALOG["nn functions"]
    g, g_shapes, _ = CATALOG["reductions"]
    args, other = _args(shapes, np.float32), _args(g_shapes, np.float32)

    def bits():
        return [np.asarray(x).tobytes() for x in jax.grad(f)(*args)]

    eager_vjp._steps.clear()
    eager_vjp._sightings.clear()
    first = bits()
    assert bits() == first
    jax.grad(g)(*other)
    assert bits() == first
    eager_vjp._steps.clear()
    assert bits() == first


def test_a_signature_is_built_when_a_second_vjp_sees_it():
    def f(x):
        return jnp.sum(jnp.sinh(jnp.sinh(x)))  # (twice in one vjp: nothing built yet)

    x = jnp.ones(7)
    with steps("second"):
        jax.grad(f)(x)
        assert "sinh" not in built()
        jax.grad(f)(x)
        assert "sinh" in built()
        jax.grad(f)(jnp.ones(8))  # another signature: not built yet
        assert len(_heads("sinh")) == 1


def test_one_backward_pass_mixes_steps_and_general_equations():
    """Later sightings take steps, first ones the general path, in the same jaxpr."""
    def f(x, n):
        y = jnp.sin(x)
        for k in range(1, n):  # a new shape each time: its first sighting
            y = y + jnp.sum(jnp.cos(jnp.tile(y, k)).reshape(k, -1), 0)
        return jnp.sum(y * y)

    x = jnp.asarray(_rand(3))
    with steps("off"):
        want = [jax.grad(f)(x, n) for n in range(1, 5)]
    with steps("second"):
        got = [jax.grad(f)(x, n) for n in range(1, 5)]
    _assert_close(got, want, 2e-6)


def test_python_side_effects_and_effectful_primitives_run_on_every_call(capsys):
    calls, seen = [], []

    def f(x):
        calls.append(1)
        jax.debug.print("x0={}", x[0])
        jax.experimental.io_callback(lambda v: seen.append(float(v)), None,
                                     lax.stop_gradient(x[1]))
        return jnp.sum(jnp.sin(x) * 2.0)

    with steps("first"):
        g = jax.grad(f)
        for i in range(3):
            np.testing.assert_allclose(g(jnp.ones(3) * i), 2 * np.cos(np.ones(3) * i),
                                       rtol=1e-6)
        assert "sin" in built()
    assert len(calls) == 3 and seen == [0.0, 1.0, 2.0]
    assert capsys.readouterr().out.count("x0=") == 3


def test_errors_are_the_general_paths():
    def f(x):
        y = jnp.sin(x)
        return jnp.sum(y @ jnp.ones((4, 2)))  # (3,) @ (4, 2): a shape error

    for mode in ("off", "first"):
        with steps(mode):
            with pytest.raises(TypeError) as err:
                jax.grad(f)(jnp.ones(3))
            assert "test_vjp.py" in str(err.value) and "dot_general" in str(err.value)


def test_debug_nans_names_the_primitive_with_steps_built():
    def f(x):
        return jnp.sum(jnp.log(x) * 2.0)

    with steps("first"):
        jax.grad(f)(jnp.ones(3))
        assert "log" in built()
        with flag_context("jax_debug_nans", True):
            with pytest.raises(FloatingPointError, match="log"):
                jax.grad(f)(-jnp.ones(3))


def test_a_flag_change_empties_the_cache_and_types_follow_x64():
    with steps("first"):
        jax.grad(lambda x: jnp.sum(jnp.cosh(x)))(jnp.ones(3))
        assert "cosh" in built()
        with enable_x64(True):
            assert "cosh" not in built()
            g = jax.grad(lambda x: jnp.sum(jnp.cosh(x)))(jnp.ones(3, np.float64))
            assert g.dtype == np.float64
        g = jax.grad(lambda x: jnp.sum(jnp.cosh(x)))(jnp.ones(3))
        assert g.dtype == np.float32


def test_inputs_that_are_not_arrays():
    """Python scalars, NumPy arrays and weak types, differentiated and closed over."""
    def f(x, y, z):
        return jnp.sum(jnp.sin(x) * y + z ** 2)

    args = (0.5, np.arange(3, dtype=np.float32), jnp.asarray(2.0))
    results = {}
    for mode in ("off", "first"):
        with steps(mode):
            results[mode] = jax.grad(f, argnums=(0, 1, 2))(*args)
    _assert_close(results["first"], results["off"], 2e-6)
    assert [g.weak_type for g in results["first"]] == [True, False, True]


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(program=programs(max_ops=6), seed=st.integers(0, 2 ** 16))
def test_random_programs_pull_back_as_the_general_path(program, seed):
    if "while" in program.features:
        return  # (reverse mode of while_loop: eager only with a known trip count)
    with enable_x64(True):
        f = program.build(jax, jnp, lax)
        args = [jnp.asarray(a) for a in program.arguments(seed)]
        rng = np.random.default_rng(seed)
        out = f(*args)
        cts = jax.tree_util.tree_map(lambda o: jnp.asarray(rng.standard_normal(o.shape)), out)
        results = {}
        for mode in ("off", "second", "first"):
            with steps(mode):
                results[mode] = [jax.vjp(f, *args)[1](cts) for _ in range(2)][-1]
        for mode in ("second", "first"):
            _assert_close(results[mode], results["off"], 1e-12)


def test_library_functions_are_steps_keyed_by_their_other_arguments():
    x = jnp.asarray(np.array([-0.0, 1.0], np.float32))
    with steps("first"):
        for c in (0.0, -0.0, 0.0, -0.0):  # -0.0 + 0.0 is 0.0, -0.0 + -0.0 -0.0: c an operand
            out, pull = jax.vjp(lambda v, c=c: v + c, x)
            assert bool(np.signbit(np.asarray(out)[0])) == bool(np.signbit(c))
            np.testing.assert_array_equal(np.asarray(pull(jnp.ones(2))[0]), [1.0, 1.0])
        for one in (1, True, 1.0):  # (the float array takes 1 and 1.0 as operands of `mul`)
            jax.grad(lambda v, one=one: jnp.sum(v * one))(x)
        assert [k[-1] for k in _heads("multiply")] == [True]  # promoted: a step, keyed by it
        assert len(_heads("mul")) == 1
        y = jnp.asarray(_rand(3, 4))
        for axis in (0, 1, (0, 1), None):
            g = jax.grad(lambda v, axis=axis: jnp.sum(jnp.sum(v, axis=axis) ** 2))(y)
            want = 2 * np.broadcast_to(np.sum(np.asarray(y), axis=axis, keepdims=axis is not None),
                                       y.shape)
            np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5)
        assert len([k for k in _heads("sum") if k[2] is y.aval]) == 4  # one per axis


def test_library_functions_with_arrays_by_keyword_run_as_they_are():
    x, mask = jnp.asarray(_rand(5)), jnp.asarray(np.array([1, 0, 1, 1, 0], bool))
    with steps("first"):
        g = jax.grad(lambda v: jnp.sum(v ** 2, where=mask))(x)
        assert not any(getattr(k[0], "__name__", "") == "sum" for k in eager_vjp._steps)
    np.testing.assert_allclose(np.asarray(g), 2 * np.asarray(x) * np.asarray(mask), rtol=1e-6)


def test_library_functions_outside_reverse_mode_are_themselves():
    """Evaluated, staged, batched or in forward mode, a stepped function runs its own code."""
    x = jnp.asarray(_rand(4, 3))
    f = lambda v: jax.nn.softmax(jnp.sum(v * 2.0, axis=0) + v[0])  # noqa: E731
    eager = np.asarray(f(x))
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), eager, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(x[None]))[0], eager, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jvp(f, (x,), (x,))[0]), eager, rtol=1e-6)
    assert jax.nn.relu.__name__ == "relu" and jax.nn.softmax.__doc__


def test_a_pullback_differentiated_again_binds_the_transposed_equations():
    """Forward and reverse mode through an eager pullback: its `linearized` equations are
    transposed by binding the steps' transposed jaxprs under the transformation."""
    def f(x):
        return jnp.tanh(x) * jnp.sin(x) + jnp.maximum(x, 0.1) ** 2

    x = jnp.asarray(_rand(5))
    ct, dct = jnp.asarray(_rand(5, seed=1)), jnp.asarray(_rand(5, seed=2))
    results = {}
    for mode in ("off", "first"):
        with steps(mode):
            _, pull = jax.vjp(f, x)
            results[mode] = (jax.jvp(pull, (ct,), (dct,)),
                             jax.grad(lambda c, pull=pull: jnp.sum(pull(c)[0] ** 2))(ct),
                             jax.vmap(pull)(jnp.stack([ct, dct])))
    _assert_close(results["first"], results["off"], 2e-6)
    np.testing.assert_allclose(np.asarray(results["first"][0][1][0]),
                               np.asarray(pull(dct)[0]), rtol=2e-6)  # (the map is linear)


def test_step_outputs_are_what_constructors_make():
    """A step's output objects, built without their constructors (eager/vjp.py's
    `_single_output`), have every field the constructors give, with the same values."""
    from didax._src.core import Array
    from didax._src.interpreters.jvp import JVPTracer
    from didax._src.interpreters.staging import StagingTracer
    from didax._src.ir import JaxprEqn, Var

    seen = []
    original = eager_vjp._single_output

    def spy(interp, step, outs, tans):
        out = original(interp, step, outs, tans)
        seen.append(out)
        return out

    eager_vjp._single_output = spy
    try:
        jax.grad(lambda x: jnp.sum(jnp.tanh(x) * x))(jnp.arange(3.0))
    finally:
        eager_vjp._single_output = original
    assert seen

    def fields(obj):
        slots = [s for c in type(obj).__mro__ for s in getattr(c, "__slots__", ())]
        names = slots + list(getattr(obj, "__dict__", {}))
        return {n: getattr(obj, n) for n in names if n != "__weakref__" and hasattr(obj, n)}

    for out in seen:
        primal, tangent = out.primal, out.tangent
        made = JVPTracer(out._interp, Array.from_numpy(primal._value, primal.aval), tangent)
        assert fields(made).keys() == fields(out).keys()
        assert made.aval == out.aval and made._interp is out._interp
        assert fields(Array.from_numpy(primal._value, primal.aval)).keys() == fields(primal).keys()
        var = Var(tangent.aval)
        assert fields(var).keys() == fields(tangent._var).keys()
        assert tangent._var.id < var.id  # (ids from the one counter)
        staged = StagingTracer(tangent._interp, tangent.aval, var)
        assert fields(staged).keys() == fields(tangent).keys()
        eqn = next(e for e in tangent._interp.eqns if tangent._var in e.outvars)
        made_eqn = JaxprEqn(eqn.primitive, eqn.invars, eqn.outvars, eqn.params,
                            eqn.source_info, eqn.phase)
        assert fields(made_eqn).keys() == fields(eqn).keys()
