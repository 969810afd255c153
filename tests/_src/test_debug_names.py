"""debug.log, inspect/visualize sharding, breakpoint's limits, and the small top-level names
(fwd_and_bwd, ds, empty_ref, reshard, live_arrays), against JAX where it runs them."""
import logging

import jax
import numpy as np
import pytest

import didax
import didax.numpy as jnp


def test_log_formats_values_at_run_time(caplog):
    with caplog.at_level(logging.INFO, logger="didax.debug"):
        didax.jit(lambda x: didax.debug.log("y {x}", x=x * 2))(np.float32(1.5))
    assert [r.getMessage() for r in caplog.records] == ["y 3.0"]


def test_sharding_views(capsys):
    got = []
    didax.debug.inspect_array_sharding(jnp.ones(2), callback=got.append)
    assert got == [didax.sharding.SingleDeviceSharding(didax.devices()[0])]
    didax.debug.visualize_array_sharding(jnp.ones((2, 2)))
    assert "CPU 0" in capsys.readouterr().out
    with pytest.raises(NotImplementedError, match="disable_jit"):
        didax.jit(lambda x: didax.debug.breakpoint())(1.0)


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_fwd_and_bwd_as_jax(argnums):
    def f(x, y):
        return x * y + x

    for_us, for_jax = didax.fwd_and_bwd(f, argnums), jax.fwd_and_bwd(f, argnums)
    y, res = for_us[0](2.0, 3.0)
    jy, jres = for_jax[0](2.0, 3.0)
    assert float(y) == float(jy)
    np.testing.assert_allclose(for_us[1](res, 1.0), for_jax[1](jres, 1.0))


def test_ds_empty_ref_reshard_live_arrays():
    x = np.arange(10)
    for args in [(None,), (3,), (2, 3), (1, 4, 2)]:
        ours, theirs = didax.ds(*args), jax.ds(*args)
        want = x[theirs] if isinstance(theirs, slice) else x[theirs.start:theirs.start
                                                               + theirs.size * theirs.stride:
                                                               theirs.stride]
        np.testing.assert_array_equal(x[ours], want)
    ref = didax.empty_ref(didax.ShapeDtypeStruct((2,), np.float32))
    ref[...] = jnp.ones(2)
    np.testing.assert_array_equal(ref[...], np.ones(2))
    with pytest.raises(NotImplementedError, match="free_ref"):
        didax.free_ref(ref)
    m = didax.make_mesh((1,), ("x",))
    a = didax.reshard(jnp.ones(2), didax.NamedSharding(m, didax.P()))
    assert a.devices() == set(didax.devices())
    kept = jnp.arange(3.0)
    assert any(o is kept for o in didax.live_arrays())
