import numpy as np

import didax as jax
import didax.numpy as jnp
from didax import random
from didax._src.config import enable_x64
from didax.test_util import check_grads


def test_max_pool_takes_the_max_of_each_2x2_block(load_example):
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 3)).astype(np.float32)
    expected = np.stack([np.stack([x[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2].max(axis=(1, 2))
                                   for j in range(3)], axis=1) for i in range(2)], axis=1)
    np.testing.assert_array_equal(load_example("cnn_digits").max_pool_2x2(jnp.asarray(x)),
                                  expected)


def test_loss_gradient_matches_finite_differences(load_example):
    cnn = load_example("cnn_digits")
    images, labels = jax.datasets.digits()
    with enable_x64():
        params = cnn.init_params(random.key(1), channels=(4, 6), hidden=8)
        assert params["conv1"]["w"].dtype == np.float64
        # Nonzero biases: with zero biases the blank background puts relu exactly at its kink,
        # where finite differences see half the slope.
        rng = np.random.default_rng(0)
        for layer in params.values():
            layer["b"] = jnp.asarray(0.1 * rng.standard_normal(layer["b"].shape))
        x, y = images[:6].astype(np.float64), labels[:6]
        check_grads(lambda p: cnn.loss_fn(p, x, y), (params,), order=1, modes=("rev",))


def test_jitted_logits_match_eager(load_example):
    cnn = load_example("cnn_digits")
    params = cnn.init_params(random.key(2))
    images = jax.datasets.digits().images[:16]
    np.testing.assert_allclose(jax.jit(cnn.logits_fn)(params, images),
                               cnn.logits_fn(params, images), rtol=1e-5, atol=1e-6)
