import numpy as np

import didax as jax
from didax import random


def _data(n):
    images, labels = jax.datasets.digits()
    return images[:n], labels[:n]


def _flat_norms(grads):
    leaves = jax.tree_util.tree_leaves(grads)
    return np.sqrt(sum((np.asarray(g).reshape(len(g), -1) ** 2).sum(axis=1) for g in leaves))


def test_vmap_of_grad_equals_a_loop_of_grads(load_example):
    dp = load_example("per_example_grads")
    params = dp.init_params(random.key(0))
    images, labels = _data(8)
    batched = dp.per_example_grads(params, images, labels)
    for i in range(len(labels)):
        single = jax.grad(dp.example_loss)(params, images[i], labels[i])
        for b, s in zip(jax.tree_util.tree_leaves(batched), jax.tree_util.tree_leaves(single)):
            np.testing.assert_allclose(b[i], s, rtol=1e-5, atol=1e-6)


def test_clipping_bounds_each_norm_and_keeps_directions(load_example):
    dp = load_example("per_example_grads")
    params = dp.init_params(random.key(1))
    images, labels = _data(32)
    grads = dp.per_example_grads(params, images, labels)
    norms = _flat_norms(grads)
    max_norm = float(np.median(norms))  # half the examples get clipped
    clipped = dp.clip_per_example(grads, max_norm)
    clipped_norms = _flat_norms(clipped)
    assert np.all(clipped_norms <= max_norm * (1 + 1e-5))
    np.testing.assert_allclose(clipped_norms, np.minimum(norms, max_norm), rtol=1e-5)
    for g, c in zip(jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(clipped)):
        scale = np.minimum(1.0, max_norm / norms).reshape((-1,) + (1,) * (g.ndim - 1))
        np.testing.assert_allclose(c, np.asarray(g) * scale, rtol=1e-5, atol=1e-7)


def test_private_gradient_is_clipped_mean_plus_scaled_noise(load_example):
    dp = load_example("per_example_grads")
    params = dp.init_params(random.key(2))
    images, labels = _data(16)
    max_norm = 0.5
    mean = jax.tree_util.tree_map(
        lambda g: np.asarray(g).mean(axis=0),
        dp.clip_per_example(dp.per_example_grads(params, images, labels), max_norm))
    noiseless = dp.private_gradient(params, images, labels, random.key(3), max_norm, 0.0)
    for a, e in zip(jax.tree_util.tree_leaves(noiseless), jax.tree_util.tree_leaves(mean)):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-7)
    noisy = dp.private_gradient(params, images, labels, random.key(3), max_norm, 2.0)
    noise = np.concatenate([(np.asarray(a) - e).ravel() for a, e in
                            zip(jax.tree_util.tree_leaves(noisy), jax.tree_util.tree_leaves(mean))])
    assert noise.size > 2000
    expected_std = 2.0 * max_norm / len(labels)
    assert abs(noise.std() / expected_std - 1) < 0.1
    assert abs(noise.mean()) < 0.1 * expected_std
