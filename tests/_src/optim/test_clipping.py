"""Elementwise, per-leaf and global-norm clipping."""
import numpy as np

import didax
import didax.numpy as jnp
import didax.optim as optim

UPDATES = {"a": jnp.asarray([3.0, -4.0]), "b": jnp.asarray([[12.0]])}  # global norm 13


def test_global_norm_is_the_norm_of_all_leaves_together():
    np.testing.assert_allclose(optim.global_norm(UPDATES), 13.0, rtol=1e-6)
    assert optim.global_norm(UPDATES).dtype == np.float32


def test_clip_by_global_norm_rescales_all_leaves_by_one_factor():
    clipper = optim.clip_by_global_norm(6.5)
    clipped, state = clipper.update(UPDATES, clipper.init(UPDATES))
    assert state == optim.EmptyState()
    np.testing.assert_allclose(clipped["a"], [1.5, -2.0], rtol=1e-6)
    np.testing.assert_allclose(clipped["b"], [[6.0]], rtol=1e-6)
    np.testing.assert_allclose(optim.global_norm(clipped), 6.5, rtol=1e-6)


def test_clip_by_global_norm_leaves_small_updates_unchanged():
    clipper = optim.clip_by_global_norm(13.5)
    clipped, _ = clipper.update(UPDATES, clipper.init(UPDATES))
    for k in UPDATES:
        np.testing.assert_array_equal(clipped[k], UPDATES[k])


def test_clip_by_global_norm_differentiates_and_batches():
    clipper = optim.clip_by_global_norm(1.0)

    def first_clipped(x):
        return clipper.update({"x": x}, optim.EmptyState())[0]["x"][0]
    x = jnp.asarray([3.0, 4.0])
    # d/dx0 of x0 / |x| = 1/|x| - x0^2/|x|^3
    np.testing.assert_allclose(didax.grad(first_clipped)(x)[0], 1 / 5 - 9 / 125, rtol=1e-5)
    batch = jnp.asarray([[3.0, 4.0], [0.3, 0.4]])
    np.testing.assert_allclose(didax.vmap(first_clipped)(batch), [0.6, 0.3], rtol=1e-6)


def test_clip_is_elementwise():
    clipped, _ = optim.clip(3.5).update(UPDATES, optim.EmptyState())
    np.testing.assert_array_equal(clipped["a"], [3.0, -3.5])
    np.testing.assert_array_equal(clipped["b"], [[3.5]])


def test_clip_by_block_rms_bounds_each_leaf_separately():
    clipped, _ = optim.clip_by_block_rms(1.0).update(UPDATES, optim.EmptyState())
    rms_a = np.sqrt((9 + 16) / 2)
    np.testing.assert_allclose(clipped["a"], np.array([3.0, -4.0]) / rms_a, rtol=1e-6)
    np.testing.assert_allclose(clipped["b"], [[1.0]], rtol=1e-6)
