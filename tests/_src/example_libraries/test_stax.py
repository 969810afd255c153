"""didax.example_libraries.stax against jax.example_libraries.stax 0.10.2: every layer's
output shape and parameters (same key, same initializers), its output values, and an MLP and
a small CNN trained with optimizers.adam, step for step equal to JAX's."""
import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest
from jax.example_libraries import optimizers as ref_opt
from jax.example_libraries import stax as ref_stax

import didax
import didax.numpy as jnp
from didax.example_libraries import optimizers, stax

_RNG = np.random.default_rng(0)


def _close(a, b, tol=1e-5):
    la, ta = jax.tree.flatten(jax.tree.map(np.asarray, a))
    lb, tb = jax.tree.flatten(jax.tree.map(np.asarray, b))
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, x.dtype, y.shape, y.dtype)
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def _shapes(shape):
    """A shape, or a nest of shapes, as tuples of Python ints inside lists."""
    if isinstance(shape, (tuple, list)) and all(np.ndim(d) == 0 for d in shape):
        return tuple(int(d) for d in shape)
    return [_shapes(s) for s in shape]


# (name, layer builder taking the stax module, input shape)
LAYERS = [
    ("Dense", lambda s: s.Dense(7), (3, 5)),
    ("Dense_3d", lambda s: s.Dense(2, s.glorot(), s.randn(0.1)), (2, 3, 4)),
    ("Conv", lambda s: s.Conv(4, (3, 3)), (2, 8, 8, 3)),
    ("Conv_same_strided", lambda s: s.Conv(4, (3, 2), strides=(2, 1), padding="SAME"),
     (2, 7, 6, 3)),
    ("GeneralConv_NCHW", lambda s: s.GeneralConv(("NCHW", "OIHW", "NCHW"), 5, (2, 2)),
     (2, 3, 6, 6)),
    ("ConvTranspose", lambda s: s.ConvTranspose(3, (3, 3), strides=(2, 2)), (1, 4, 4, 2)),
    ("ConvTranspose_same", lambda s: s.ConvTranspose(2, (2, 2), padding="SAME"),
     (1, 5, 5, 3)),
    ("Conv1DTranspose", lambda s: s.Conv1DTranspose(4, (3,), strides=(2,)), (2, 5, 3)),
    ("GeneralConvTranspose", lambda s: s.GeneralConvTranspose(
        ("NCH", "IOH", "NCH"), 3, (2,), padding="SAME"), (2, 4, 6)),
    ("BatchNorm", lambda s: s.BatchNorm(), (4, 3, 3, 2)),
    ("BatchNorm_axis0_nocenter", lambda s: s.BatchNorm(0, center=False), (5, 3)),
    ("BatchNorm_noscale", lambda s: s.BatchNorm((0,), scale=False), (5, 3)),
    ("BatchNorm_plain", lambda s: s.BatchNorm((0,), center=False, scale=False), (5, 3)),
    ("MaxPool", lambda s: s.MaxPool((2, 2)), (2, 6, 6, 3)),
    ("MaxPool_same", lambda s: s.MaxPool((3, 3), (2, 2), "SAME"), (2, 7, 7, 1)),
    ("SumPool", lambda s: s.SumPool((2, 2), (2, 2)), (2, 6, 6, 3)),
    ("AvgPool", lambda s: s.AvgPool((2, 2)), (2, 5, 5, 3)),
    ("AvgPool_same", lambda s: s.AvgPool((3, 3), (2, 2), "SAME"), (2, 7, 6, 2)),
    ("AvgPool_spec", lambda s: s.AvgPool((2, 2), padding="SAME", spec="NCHW"), (2, 3, 5, 5)),
    ("Flatten", lambda s: s.Flatten, (2, 3, 4)),
    ("Identity", lambda s: s.Identity, (3, 4)),
    ("serial", lambda s: s.serial(s.Dense(6), s.Relu, s.Dense(2), s.LogSoftmax), (4, 3)),
    ("shape_dependent", lambda s: s.shape_dependent(lambda shape: s.Dense(shape[-1] * 2)),
     (3, 4)),
    ("residual", lambda s: s.serial(s.FanOut(2), s.parallel(s.Dense(4), s.Identity),
                                    s.FanInSum), (3, 4)),
    ("concat", lambda s: s.serial(s.FanOut(3), s.parallel(s.Dense(2), s.Tanh, s.Dense(1)),
                                  s.FanInConcat()), (3, 4)),
    ("concat_axis0", lambda s: s.serial(s.FanOut(2), s.parallel(s.Identity, s.Exp),
                                        s.FanInConcat(0)), (3, 4)),
] + [(name, lambda s, name=name: getattr(s, name), (3, 4)) for name in (
    "Tanh", "Relu", "Exp", "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu",
    "Selu", "Gelu")]


@pytest.mark.parametrize("name,build,shape", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_shapes_params_and_values(name, build, shape):
    init, apply = build(stax)
    ref_init, ref_apply = build(ref_stax)
    out_shape, params = init(didax.random.PRNGKey(1), shape)
    ref_shape, ref_params = ref_init(jax.random.PRNGKey(1), shape)
    assert _shapes(out_shape) == _shapes(ref_shape)
    _close(params, ref_params, 1e-6)
    x = _RNG.standard_normal(shape).astype(np.float32)
    out = apply(params, jnp.asarray(x))
    _close(out, ref_apply(ref_params, jnp_ref.asarray(x)), 2e-5)
    # the output shape init promised
    assert _shapes(jax.tree.map(np.shape, out)) == _shapes(out_shape)


def test_elementwise_with_kwargs():
    init, apply = stax.elementwise(jnp.clip, min=-0.5, max=0.5)
    shape, params = init(None, (2, 3))
    assert shape == (2, 3) and params == ()
    np.testing.assert_array_equal(apply(params, jnp.array([-1., 0.25, 3.])), [-0.5, 0.25, 0.5])


def test_aliases_are_the_nn_functions():
    assert stax.glorot is stax.glorot_normal and stax.randn is stax.normal
    assert stax.logsoftmax is stax.log_softmax is didax.nn.log_softmax
    for name in ("relu", "softmax", "softplus", "sigmoid", "elu", "leaky_relu", "selu", "gelu",
                 "standardize"):
        assert getattr(stax, name) is getattr(didax.nn, name)
    np.testing.assert_array_equal(stax.zeros(didax.random.PRNGKey(0), (2,)), [0., 0.])
    np.testing.assert_array_equal(stax.ones(didax.random.PRNGKey(0), (2,)), [1., 1.])


def test_dropout_train_and_test_modes():
    x = _RNG.standard_normal((4, 50)).astype(np.float32)
    init, apply = stax.Dropout(0.7)
    _, ref_apply = ref_stax.Dropout(0.7)
    assert init(None, (4, 50)) == ((4, 50), ())
    out = apply((), jnp.asarray(x), rng=didax.random.PRNGKey(3))
    _close(out, ref_apply((), jnp_ref.asarray(x), rng=jax.random.PRNGKey(3)), 1e-6)
    with pytest.raises(ValueError, match="PRNG key"):
        apply((), jnp.asarray(x))
    _, apply_test = stax.Dropout(0.7, mode="test")
    np.testing.assert_array_equal(apply_test((), jnp.asarray(x), rng=didax.random.PRNGKey(3)),
                                  x)


def test_serial_passes_split_keys_to_dropout():
    build = lambda s: s.serial(s.Dense(8), s.Dropout(0.5), s.Relu, s.Dense(3))  # noqa: E731
    (init, apply), (ref_init, ref_apply) = build(stax), build(ref_stax)
    x = _RNG.standard_normal((5, 4)).astype(np.float32)
    _, params = init(didax.random.PRNGKey(0), (5, 4))
    _, ref_params = ref_init(jax.random.PRNGKey(0), (5, 4))
    _close(apply(params, jnp.asarray(x), rng=didax.random.PRNGKey(9)),
           ref_apply(ref_params, jnp_ref.asarray(x), rng=jax.random.PRNGKey(9)), 1e-5)
    build = lambda s: s.serial(s.FanOut(2), s.parallel(s.Dropout(0.5), s.Dropout(0.5)),  # noqa
                               s.FanInSum)
    (init, apply), (ref_init, ref_apply) = build(stax), build(ref_stax)
    _close(apply(init(didax.random.PRNGKey(0), (5, 4))[1], jnp.asarray(x), rng=didax.random.PRNGKey(2)),
           ref_apply(ref_init(jax.random.PRNGKey(0), (5, 4))[1], jnp_ref.asarray(x),
                     rng=jax.random.PRNGKey(2)), 1e-5)


def _train(stax_mod, opt_mod, lib, build, x, y, steps=4, jit=True):
    init, apply = build(stax_mod)
    _, params = init(lib.random.PRNGKey(0), x.shape)
    opt_init, opt_update, get_params = opt_mod.adam(1e-2)

    def loss(p, x, y):
        return -lib.numpy.mean(lib.numpy.sum(apply(p, x) * y, axis=-1))

    def step(i, state, x, y):
        value, grads = lib.value_and_grad(loss)(get_params(state), x, y)
        return value, opt_update(i, grads, state)

    step = lib.jit(step) if jit else step
    state, values = opt_init(params), []
    for i in range(steps):
        value, state = step(i, state, lib.numpy.asarray(x), lib.numpy.asarray(y))
        values.append(value)
    return values, get_params(state)


def _mlp(s):
    return s.serial(s.Dense(16), s.Relu, s.Dense(16), s.Tanh, s.Dense(3), s.LogSoftmax)


def _cnn(s):  # (BatchNorm after Relu: right after a conv, the bias gets a zero gradient
    # that adam amplifies from rounding noise, in JAX and didax differently)
    return s.serial(s.Conv(4, (3, 3), padding="SAME"), s.Relu, s.BatchNorm(),
                    s.MaxPool((2, 2), (2, 2)), s.Conv(6, (2, 2)), s.Relu, s.AvgPool((2, 2)),
                    s.Flatten, s.Dense(3), s.LogSoftmax)


@pytest.mark.parametrize("build,shape", [(_mlp, (8, 5)), (_cnn, (4, 8, 8, 2))],
                         ids=["mlp", "cnn"])
@pytest.mark.parametrize("jit", [True, False], ids=["jit", "eager"])
def test_training_with_adam_matches_jax(build, shape, jit):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, shape[0])]
    values, params = _train(stax, optimizers, didax, build, x, y, jit=jit)
    ref_values, ref_params = _train(ref_stax, ref_opt, jax, build, x, y)  # (JAX jitted: fast)
    _close(values, ref_values, 1e-5)
    _close(params, ref_params, 1e-5)
    assert values[-1] < values[0]
