"""stax layers against jax.example_libraries.stax: the same output shapes, the same
parameters from the same key (didax's PRNG gives JAX's bits), and with JAX's parameters the
same outputs."""
import jax
import numpy as np
import pytest
from jax.example_libraries import stax as jstax

import didax
from didax.example_libraries import stax
from didax.test_util import check_grads

TOL = dict(rtol=2e-6, atol=2e-6)  # float32, a few ulps apart between implementations


def _inputs(shape, seed=0):
    if isinstance(shape, list):
        return [_inputs(s, seed * 10 + i) for i, s in enumerate(shape)]
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def _shapes(s):
    """Output shapes as plain int tuples (JAX returns NumPy ints in some)."""
    if all(np.ndim(d) == 0 for d in s):
        return tuple(int(d) for d in s)
    return [_shapes(x) for x in s]


def compare(build, input_shape, init_values=True, **apply_kwargs):
    """Output shapes, parameters (their values too with `init_values`: JAX's compilation of
    many random draws is slow) and outputs on the same inputs and parameters."""
    ji, ja = build(jstax)
    di, da = build(stax)
    seen = []  # (JAX's parallel returns a zip: made a tuple here)

    def jax_init(k):
        seen.append(tuple(ji(k, input_shape)))
        return seen[-1][1]
    key = jax.random.PRNGKey(3)
    # JAX runs jitted: one compilation per test rather than one per operation
    jparams = jax.jit(jax_init)(key) if init_values else jax.eval_shape(jax_init, key)
    jshape = seen[0][0]
    dshape, dparams = di(didax.random.PRNGKey(3), input_shape)
    assert _shapes(dshape) == _shapes(jshape)
    jleaves, jtree = jax.tree_util.tree_flatten(jparams)
    dleaves, dtree = didax.tree_util.tree_flatten(dparams)
    assert str(dtree) == str(jtree)
    for d, j in zip(dleaves, jleaves):
        assert np.shape(d) == j.shape and np.asarray(d).dtype == j.dtype
        if init_values:
            np.testing.assert_allclose(np.asarray(d), np.asarray(j), **TOL)
    if not init_values:
        jparams = jax.tree_util.tree_map(np.asarray, dparams)
    x = _inputs(input_shape)
    jkw = {k: jax.random.PRNGKey(v) if k == "rng" else v for k, v in apply_kwargs.items()}
    dkw = {k: didax.random.PRNGKey(v) if k == "rng" else v for k, v in apply_kwargs.items()}
    jout = jax.jit(lambda p, x, kw: ja(p, x, **kw))(jparams, x, jkw)
    dout = da(jax.tree_util.tree_map(np.asarray, jparams), x, **dkw)
    jouts, douts = jax.tree_util.tree_leaves(jout), didax.tree_util.tree_leaves(dout)
    assert len(jouts) == len(douts)
    for d, j in zip(douts, jouts):
        assert np.shape(d) == np.shape(j)
        np.testing.assert_allclose(np.asarray(d), np.asarray(j), **TOL)
    return dparams, dout


LAYERS = {
    "dense": (lambda s: s.Dense(3), (2, 4)),
    "mlp": (lambda s: s.serial(s.Dense(5), s.Relu, s.Dense(3), s.LogSoftmax), (2, 4)),
    "cnn": (lambda s: s.serial(s.Conv(3, (2, 2), (1, 2), "SAME"), s.Tanh, s.MaxPool((2, 2)),
                               s.Flatten, s.Dense(2)), (2, 6, 6, 2)),
    "conv_nchw": (lambda s: s.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (3, 2),
                                          padding="SAME"), (2, 2, 5, 6)),
    "conv_transpose": (lambda s: s.ConvTranspose(3, (3, 3), (2, 2), "SAME"), (2, 4, 4, 2)),
    "conv1d_transpose": (lambda s: s.Conv1DTranspose(3, (3,), (2,), "VALID"), (2, 5, 2)),
    "general_conv_transpose": (lambda s: s.GeneralConvTranspose(
        ("NCH", "OIH", "NCH"), 3, (3,), (2,), "SAME"), (2, 2, 5)),
    "batchnorm": (lambda s: s.BatchNorm(), (2, 3, 3, 4)),
    "batchnorm_no_center": (lambda s: s.BatchNorm(axis=0, center=False), (5, 3)),
    "batchnorm_no_scale": (lambda s: s.BatchNorm(axis=(0, 2), scale=False), (5, 3, 2)),
    "fan_in_sum": (lambda s: s.serial(s.FanOut(2), s.parallel(s.Dense(3), s.serial(
        s.Dense(3), s.Tanh)), s.FanInSum), (2, 4)),
    "fan_in_concat": (lambda s: s.serial(s.FanOut(3), s.parallel(s.Dense(3), s.Dense(2),
                                                                 s.Identity),
                                         s.FanInConcat()), (2, 4)),
    "concat_axis0": (lambda s: s.FanInConcat(axis=0), [(2, 3), (4, 3)]),
    "shape_dependent": (lambda s: s.shape_dependent(lambda sh: s.Dense(sh[-1] * 2)), (4, 3)),
}


POOLS = [((2, 3), (1, 2), "SAME", None, (2, 5, 6, 3)),
         ((2, 2), None, "VALID", "NCHW", (2, 3, 5, 6)),
         ((3, 2), (2, 1), "SAME", "HNWC", (5, 2, 6, 3))]
for _i, (_w, _s, _p, _spec, _shape) in enumerate(POOLS):
    for _pool in ("MaxPool", "SumPool", "AvgPool"):
        LAYERS[f"{_pool}{_i}"] = (
            lambda s, pool=_pool, w=_w, st=_s, p=_p, spec=_spec: getattr(s, pool)(
                w, st, p, spec=spec), _shape)
for _name in ["Tanh", "Relu", "Exp", "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu",
              "LeakyRelu", "Selu", "Gelu", "Identity", "Flatten"]:
    LAYERS[_name] = (lambda s, n=_name: getattr(s, n), (3, 4))


def test_every_layer_matches_jax():
    # all layers side by side in one network: JAX compiles its apply once
    names = list(LAYERS)
    compare(lambda s: s.parallel(*[LAYERS[n][0](s) for n in names]),
            [LAYERS[n][1] for n in names], init_values=False)


@pytest.mark.parametrize("name", ["dense", "conv_nchw", "conv1d_transpose", "batchnorm",
                                  "fan_in_concat"])
def test_initialisation_draws_jax_numbers(name):
    build, shape = LAYERS[name]
    compare(build, shape)


def test_dropout_draws_jax_mask():
    compare(lambda s: s.parallel(*[s.serial(s.Dense(8), s.Dropout(0.7, mode=mode), s.Dense(2))
                                   for mode in ("train", "test")]), [(4, 3), (4, 3)],
            init_values=False, rng=5)
    init, apply = stax.Dropout(0.5)
    with pytest.raises(ValueError, match="PRNG key"):
        apply((), np.ones(3))


def test_reexported_functions_are_didax_nn():
    assert stax.relu is didax.nn.relu and stax.logsoftmax is didax.nn.log_softmax
    assert stax.glorot is didax.nn.initializers.glorot_normal
    assert stax.randn is didax.nn.initializers.normal
    assert stax.standardize is didax.nn.standardize


def test_network_trains_under_jit_and_grad():
    init, apply = stax.serial(stax.Conv(2, (2, 2)), stax.Relu, stax.Flatten, stax.Dense(2),
                              stax.LogSoftmax)
    _, params = init(didax.random.PRNGKey(0), (3, 4, 4, 1))
    x = _inputs((3, 4, 4, 1))
    labels = np.eye(2, dtype=np.float32)[[0, 1, 1]]

    def loss(p):
        return -didax.numpy.mean(didax.numpy.sum(apply(p, x) * labels, -1))
    grads = didax.jit(didax.grad(loss))(params)
    eager = didax.grad(loss)(params)
    for g, e in zip(didax.tree_util.tree_leaves(grads), didax.tree_util.tree_leaves(eager)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-6)
    x64 = x.astype(np.float64)

    def loss64(p):
        return -didax.numpy.mean(didax.numpy.sum(apply(p, x64) * labels, -1))
    params64 = didax.tree_util.tree_map(lambda a: np.asarray(a, np.float64), params)
    with didax.enable_x64():
        check_grads(loss64, (params64,), order=2, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)
