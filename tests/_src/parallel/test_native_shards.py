"""pmap's shards run jit's tiers: native code once built (here at once: the sync tier), with
the NumPy tier's bits and one device's where the computation is the same; while they run,
their native loops share the native threads."""
from __future__ import annotations

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.compiler.native import threads, tier, toolchain
from didax._src.config import flag_context
from didax._src.parallel import pmap_call


@pytest.fixture(autouse=True)
def two_devices():
    with flag_context("didax_num_cpu_devices", 2):
        yield


def _step(w, x, y):
    def loss(w):
        h = jnp.tanh(x @ w)
        return jnp.mean((h - y) ** 2)
    g = lax.pmean(didax.grad(loss)(w), "devices")
    return w - 0.1 * g, lax.psum(loss(w), "devices")


def _data():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((64, 64)) * 0.2).astype(np.float32)
    x = rng.standard_normal((2, 32, 64)).astype(np.float32)
    y = rng.standard_normal((2, 32, 64)).astype(np.float32)
    return w, x, y


def test_shards_run_native_code_with_the_numpy_tiers_bits(monkeypatch):
    made = []
    original = pmap_call.tiered_executable

    def spy(jaxpr, name="f"):
        exe = original(jaxpr, name)
        made.append(exe)
        return exe

    monkeypatch.setattr(pmap_call, "tiered_executable", spy)
    w, x, y = _data()
    step = didax.pmap(_step, axis_name="devices", in_axes=(None, 0, 0))
    with flag_context("didax_native_tier", "sync"):
        native = step(w, x, y)
    with flag_context("didax_native_tier", "off"):
        plain = didax.pmap(_step, axis_name="devices", in_axes=(None, 0, 0))(w, x, y)
    expected = "native" if toolchain.toolchain() is not None else "numpy"
    assert made and tier.tier_of(made[0]) == expected
    for got, want in zip(native, plain):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # the shards' loss is the sum of each device's own (one device, jitted)
    one = [didax.jit(lambda w, x, y: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w, x[k], y[k])
           for k in range(2)]
    np.testing.assert_allclose(np.asarray(native[1])[0], one[0] + one[1], rtol=1e-6)


def test_shards_share_the_native_threads():
    previous = threads.count()
    with threads.shared_by(2):
        assert threads.count() == max(1, previous // 2)
    assert threads.count() == previous
    seen = []

    def f(x):
        didax.debug.callback(lambda: seen.append(threads.count()))
        return lax.psum(x, "i")

    out = didax.pmap(f, axis_name="i")(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), 2.0, np.float32))
    assert seen == [max(1, previous // 2)] * 2  # (each shard, while both ran)
    assert threads.count() == previous
