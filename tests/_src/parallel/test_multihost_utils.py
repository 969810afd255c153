"""multihost_utils and array construction in a single process, against JAX."""
import jax
import numpy as np
import pytest
from jax.experimental import multihost_utils as jmh

import didax
from didax.experimental import multihost_utils as mh

TREE = {"a": np.ones(3, np.float32), "b": 2.0, "c": 3}


@pytest.mark.parametrize("tiled", [False, True])
def test_process_allgather_as_jax(tiled):
    ours, theirs = mh.process_allgather(TREE, tiled=tiled), jmh.process_allgather(TREE, tiled)
    for k in TREE:
        assert type(ours[k]) is np.ndarray and ours[k].dtype == theirs[k].dtype
        np.testing.assert_array_equal(ours[k], theirs[k])


def test_broadcast_sync_assert_as_jax():
    ours, theirs = mh.broadcast_one_to_all(TREE), jmh.broadcast_one_to_all(TREE)
    for k in TREE:
        np.testing.assert_array_equal(ours[k], theirs[k])
        assert ours[k].dtype == theirs[k].dtype
    assert mh.sync_global_devices("x") is None and mh.assert_equal(TREE) is None
    assert mh.reached_preemption_sync_point(3) == jmh.reached_preemption_sync_point(3)
    with pytest.raises(RuntimeError, match="not initialized"):
        with mh.live_devices(didax.devices()):
            pass


def test_make_array_from_callback_indices_as_jax():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    seen, jseen = [], []
    m, jm = didax.make_mesh((1,), ("x",)), jax.make_mesh((1,), ("x",))
    a = didax.make_array_from_callback(
        x.shape, didax.NamedSharding(m, didax.P("x")), lambda i: (seen.append(i), x[i])[1])
    b = jax.make_array_from_callback(
        x.shape, jax.NamedSharding(jm, jax.P("x")), lambda i: (jseen.append(i), x[i])[1])
    assert seen == jseen
    np.testing.assert_array_equal(a, b)
    c = didax.make_array_from_single_device_arrays(x.shape, a.sharding, [x])
    np.testing.assert_array_equal(c, x)


def test_host_names_warn_and_match_jax():
    for name in ("host_count", "host_id", "host_ids"):
        with pytest.warns(UserWarning, match="renamed"):
            assert getattr(didax, name)() == getattr(jax, name)()
    assert didax.process_indices() == jax.process_indices()
