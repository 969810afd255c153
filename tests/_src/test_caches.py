"""The memo tables every thread shares (didax/_src/caches.py): the first value stored for a
key is everyone's; pmap's shards, eager gradients and jit on many threads at once, while
the native tier's builder compiles, give the bits they give alone; ensure_compile_time_eval
holds in its own thread only."""
from __future__ import annotations

import threading

import numpy as np

import didax
import didax.numpy as jnp
from didax import lax
from didax._src import caches
from didax._src.compiler.native import tier, toolchain
from didax._src.config import flag_context


def test_the_first_value_stored_is_every_callers():
    table = caches.memo("test.first")
    a, b = object(), object()
    assert caches.add(table, "k", a) is a
    assert caches.add(table, "k", b) is a
    assert caches.add(table, "j", b) is b
    assert type(table) is dict  # (read at a dict's speed)


def test_a_full_table_starts_again():
    table = caches.memo("test.limit", limit=3)
    for k in range(3):
        caches.add(table, k, k)
    caches.add(table, 3, 3)
    assert table == {3: 3}


def test_interning_tables_are_never_emptied():
    table = caches.memo("test.interning", interns=True)
    caches.add(table, "k", 1)
    caches.clear_all()
    assert table["k"] == 1
    assert caches.tables()["core.avals"].interns


def test_clear_empties_the_tables_of_a_prefix_only():
    a, b, other = (caches.memo(n) for n in ("test.prefix.a", "test.prefix.b", "test.other"))
    for t in (a, b, other):
        caches.add(t, "k", 1)
    caches.clear("test.prefix.")
    assert not a and not b and other == {"k": 1}


def test_every_table_is_registered():
    names = set(caches.tables())
    assert {"core.avals", "core.result_avals", "ir.derived", "eager.steps",
            "native.loaded_modules", "dtypes.result_types"} <= names


def test_racing_threads_get_one_object():
    table = caches.memo("test.race")
    start = threading.Barrier(8)
    got = []

    def run():
        start.wait()
        got.append(caches.add(table, "k", object()))

    threads = [threading.Thread(target=run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(g is got[0] for g in got)


def _bits(tree):
    return [np.asarray(x).tobytes() for x in didax.tree_util.tree_leaves(tree)]


def test_pmap_eager_grads_and_jit_on_many_threads_while_the_builder_compiles(tmp_path,
                                                                              monkeypatch):
    monkeypatch.setenv("DIDAX_CACHE_DIR", str(tmp_path))  # the builder compiles, not loads
    rng = np.random.RandomState(0)
    n_dev = didax.local_device_count()
    params = {"w": rng.randn(6, 5).astype(np.float32), "b": rng.randn(5).astype(np.float32),
              "v": rng.randn(5, 3).astype(np.float32)}
    x = rng.randn(8, 6).astype(np.float32)
    labels = np.eye(3, dtype=np.float32)[rng.randint(0, 3, 8)]
    shards = rng.randn(n_dev, 4).astype(np.float32)

    def loss(p, x):
        h = jnp.tanh(x @ p["w"] + p["b"])
        logits = h @ p["v"]
        return -jnp.mean(jnp.sum(labels * jax_log_softmax(logits), axis=-1))

    def jax_log_softmax(z):
        return z - jnp.log(jnp.sum(jnp.exp(z - jnp.max(z, -1, keepdims=True)), -1,
                                   keepdims=True)) - jnp.max(z, -1, keepdims=True)

    mapped = didax.pmap(lambda s: lax.psum(jnp.sin(s) * 2.0 + s, "i"), axis_name="i")
    jitted = [didax.jit(lambda x, k=k: jnp.tanh(x * (k + 1.0)) @ params["w"] + k)
              for k in range(4)]

    def work():
        return (didax.grad(loss)(params, x), mapped(shards), [f(x) for f in jitted])

    with flag_context("didax_native_tier", "off"):
        expected = _bits(work())
    didax.clear_caches()  # every step, executable and type built again, by the threads
    errors, start = [], threading.Barrier(4)

    def run():
        try:
            start.wait()
            for _ in range(6):  # jit's functions called again: the builder compiles them
                got = _bits(work())
                assert got == expected, "a thread's results differ from one thread's"
        except BaseException as e:  # noqa: BLE001 - handed to the test's thread
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    tier.wait_for_builds()
    assert _bits(work()) == expected  # on the native tier where it was built
    if toolchain.toolchain() is not None:
        statuses = [f._trace((x,), {})[0].executable.native.status for f in jitted]
        assert statuses == ["ready"] * len(jitted)


def test_compile_time_eval_holds_in_its_own_thread_only():
    inside, done = threading.Event(), threading.Event()

    def hold():
        with didax.ensure_compile_time_eval():
            inside.set()
            done.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert inside.wait(30)
        jaxpr = didax.make_jaxpr(lambda x: x + jnp.sin(jnp.float32(2.0)))(1.0)
        assert "sin" in str(jaxpr)  # staged here, though another thread evaluates now
        with didax.ensure_compile_time_eval():
            jaxpr = didax.make_jaxpr(lambda x: x + jnp.sin(jnp.float32(2.0)))(1.0)
        assert "sin" not in str(jaxpr)
    finally:
        done.set()
        t.join()
