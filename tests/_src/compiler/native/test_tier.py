"""Tiering in jit: the swap, per-equation fallback inside native code, transformations
inside jit, the inspection text, and what keeps the NumPy tier (debug_nans)."""
from __future__ import annotations

import time

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.compiler.native import tier
from didax._src.config import flag_context

from .conftest import Tiers, assert_native, assert_same, executable, have_compiler

RNG = np.random.RandomState(0)
X = RNG.randn(8, 16).astype(np.float32)
Y = RNG.randn(16).astype(np.float32)


def _exact_chain(x, y):
    """Operations IEEE rounds exactly."""
    z = (x * 2.0 - y) / (1.0 + jnp.abs(y))
    return jnp.where(z > 0, jnp.sqrt(jnp.maximum(z, 0.0)), -z * z)


def _chain(x, y):
    """Functions NumPy computes with its own SIMD loops, sums and a product."""
    z = jnp.tanh(x @ jnp.outer(y, y)[:, :5]) * jnp.exp(-x[:, :5] ** 2)
    return jnp.sum(jnp.log1p(z * z), axis=1), jnp.mean(jnp.sin(z)) + jnp.sum(jnp.cos(x))


@pytest.mark.parametrize("f", [_exact_chain, _chain])
def test_background_swap_gives_identical_results(f):
    with flag_context("didax_native_tier", "background"):
        jf = didax.jit(f)
        results = [jf(X, Y) for _ in range(tier.CALLS_BEFORE_BUILD)]
        exe = executable(jf, X, Y)
        assert exe.native.status in ("queued", "ready", "none")
        tier.wait_for_builds()
        for _ in range(3):
            results.append(jf(X, Y))
    assert exe.native.status == ("ready" if have_compiler() else "none")
    for r in results[1:]:
        for a, b in zip(didax.tree_util.tree_leaves(r), didax.tree_util.tree_leaves(results[0])):
            assert_same(a, b)
    if f is _exact_chain:
        with didax.disable_jit():
            assert_same(results[0], np.asarray(f(X, Y)))


def test_tiers_say_which_tier_serves_each_signature():
    with flag_context("didax_native_tier", "background"):
        jf = didax.jit(_exact_chain)
        assert jf.tiers() == []
        jf(X, Y)
        assert jf.tiers() == ["numpy"]
        jf(X, Y)
        assert jf.tiers()[0] in ("building", "native", "numpy")
        tier.wait_for_builds()
        assert jf.tiers() == ["native" if have_compiler() else "numpy"]
    with flag_context("didax_native_tier", "off"):
        jf = didax.jit(_exact_chain)
        jf(X, Y), jf(X, Y)
        assert jf.tiers() == ["numpy"]


def test_background_builds_only_functions_called_again():
    with flag_context("didax_native_tier", "background"):
        jf = didax.jit(_exact_chain)
        jf(X, Y)
        assert executable(jf, X, Y).native.status == "waiting"


def test_fallback_per_equation():
    """Cube roots and leading-zero counts have no native rule: they run on the NumPy tier
    between native loops, in the same compiled function."""
    def f(x, y, n):
        a = jnp.tanh(x) * 3.0 + 1.0
        s = jnp.sum(a, axis=0)                        # a reduction: NumPy tier
        b = jnp.exp(-s) + jnp.cbrt(y)                 # native, NumPy, native
        m = lax.clz(n) + 1                            # int32 clz: NumPy tier
        return b * 2.0, m, jnp.sin(a) - s
    n = np.arange(5, dtype=np.int32)
    tiers = Tiers(f)
    native, numpy_, eager = tiers(X, Y, n)
    assert_native(tiers.native, X, Y, n)
    if have_compiler():
        plan = executable(tiers.native, X, Y, n).native.plan
        assert len(plan.python_segments) >= 2
    for a, b, c in zip(native, numpy_, eager):
        assert_same(b, c)
        assert_same(a, b)


def test_functions_without_native_rules_stay_on_the_numpy_tier():
    jf = didax.jit(lambda n: jnp.argmax(n))
    n = np.array([3, 1, 4, 1], dtype=np.int32)
    np.testing.assert_array_equal(jf(n), 2)
    assert_native(jf, n, expect_native=False)


def _loss(w, x):
    h = jnp.tanh(x @ w)
    return jnp.sum(jax_logistic(h) * h ** 2 + jnp.exp(-jnp.abs(h)))


def jax_logistic(x):
    return lax.logistic(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grad_and_vmap_inside_jit(dtype):
    from didax._src.config import enable_x64
    with enable_x64(dtype == np.float64):
        w = RNG.randn(16, 4).astype(dtype)
        xs = RNG.randn(3, 8, 16).astype(dtype)
        f = didax.vmap(didax.grad(_loss), in_axes=(None, 0))
        tiers = Tiers(f)
        native, numpy_, eager = tiers(w, xs)
        assert_native(tiers.native, w, xs)
        rtol = 1e-5 if dtype == np.float32 else 1e-12
        assert_same(native, numpy_)
        np.testing.assert_allclose(numpy_, eager, rtol=rtol, atol=rtol)


def test_compiled_text_shows_both_tiers():
    text = didax.jit(_exact_chain).lower(X, Y).compile().as_text()
    assert "def f(" in text
    if have_compiler():
        assert "/* The native tier: */" in text and "native loop over (8, 16)" in text
    else:
        assert "native" not in text
    with flag_context("didax_native_tier", "off"):
        text = didax.jit(_exact_chain).lower(X, Y).compile().as_text()
    assert "native" not in text


def test_generated_c_names_nothing_of_the_user():
    def some_user_name_xyz(x):
        return jnp.exp(x) + 1.0
    text = didax.jit(some_user_name_xyz).lower(X).compile().as_text()
    assert "some_user_name_xyz" not in text


def test_debug_nans_keeps_the_numpy_tier():
    jf = didax.jit(lambda x: jnp.log(x) * 2.0)
    with flag_context("jax_debug_nans", True):
        with pytest.raises(FloatingPointError):
            jf(-X)
        assert executable(jf, -X).native is None


def test_effects_keep_their_order():
    seen = []

    def f(x):
        y = jnp.sin(x) * 2.0
        didax.debug.callback(lambda v: seen.append(np.asarray(v).copy()), y)
        z = jnp.exp(y) + 1.0
        didax.debug.callback(lambda v: seen.append(np.asarray(v).copy()), z)
        return z
    out = didax.jit(f)(X)
    assert len(seen) == 2
    np.testing.assert_array_equal(seen[1], np.asarray(out))
    np.testing.assert_allclose(seen[0], np.sin(X) * 2.0, rtol=1e-6)


def test_swap_under_concurrent_calls():
    """Calls from another thread while the build runs see one tier or the other, whole."""
    import threading
    jf = didax.jit(_exact_chain)
    with flag_context("didax_native_tier", "off"):
        ref = np.asarray(jf(X, Y))
    with flag_context("didax_native_tier", "background"):
        jg = didax.jit(_exact_chain)
        out, stop = [], threading.Event()

        def caller():
            while not stop.is_set():
                out.append(np.asarray(jg(X, Y)))
        t = threading.Thread(target=caller)
        t.start()
        deadline = time.time() + 60
        while time.time() < deadline and (len(out) < tier.CALLS_BEFORE_BUILD
                                          or executable(jg, X, Y).native.status
                                          in ("waiting", "queued")):
            time.sleep(0.01)
        time.sleep(0.05)
        stop.set()
        t.join()
    assert executable(jg, X, Y).native.status == ("ready" if have_compiler() else "none")
    for r in out:
        assert_same(r, ref)


def test_the_numpy_tiers_executable_is_never_given_native_code():
    """numpy_executable's code (what while loops' reverse steps run) is never swapped for
    native code, whichever of it and jit compiled the jaxpr first: jit's tiered executable
    is another object."""
    from didax._src.compiler import numpy_tier

    jf = didax.jit(_chain)
    jf(X, Y)
    entry, _ = jf._trace((X, Y), {})
    plain = numpy_tier.numpy_executable(entry.jaxpr)
    assert plain is not entry.executable and plain.native is None
    assert plain.run.__name__ == "f"
    assert_native(jf, X, Y)
    assert tier.tiered_executable(entry.jaxpr) is entry.executable


def _long_while(x, n):
    """Many cheap iterations (minutes on the NumPy tier, a second natively)."""
    def body(carry):
        k, c = carry
        return k + 1, c * 0.999 + jnp.sin(c) * 1e-3
    return lax.while_loop(lambda carry: carry[0] < n, body, (0, x))[1]


def _long_scan(x, n):
    return lax.fori_loop(0, 10_000_000, lambda k, c: c * 0.999 + jnp.sin(c) * 1e-3, x)


@pytest.mark.parametrize("loop", [_long_while, _long_scan])
def test_a_long_first_call_finishes_on_the_native_tier(loop, monkeypatch, fresh_cache):
    """A first call of a loop that runs long, its native code not in the cache, builds it
    meanwhile (where another core can: here as if there were two) and the loop hands the
    call over to it: the call starts over natively, with the bits the native code gives
    from the start."""
    from didax._src.compiler.native import detached, threads
    if not have_compiler():
        pytest.skip("no C compiler works here: there is no native tier to switch to")
    monkeypatch.setattr(detached, "LONG_CALL", 0.05)
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    n = np.int32(10_000_000)  # (minutes on the NumPy tier, a second natively)
    with flag_context("didax_native_tier", "background"):
        jf = didax.jit(loop)
        before = tier.handovers
        got = np.asarray(jf(x, n))
        assert tier.handovers == before + 1
        exe = executable(jf, x, n)
        assert tier.tier_of(exe) == "native"
    want = np.asarray(didax.jit(lambda x, n: loop(x, n))(x, n))  # (sync: native)
    assert got.tobytes() == want.tobytes()


def test_a_loop_with_effects_is_never_started_over(monkeypatch):
    """A call whose loop has effects (here a callback noting each iteration, for about a
    second) stays on the tier it started on: its effects happen once each."""
    from didax._src.compiler.native import detached, threads
    monkeypatch.setattr(detached, "LONG_CALL", 0.0)
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    seen = []

    def f(x):
        def body(k, c):
            didax.debug.callback(lambda k: (seen.append(int(k)), time.sleep(0.003)), k)
            return c * 0.5 + 1.0
        return lax.fori_loop(0, 300, body, x)

    with flag_context("didax_native_tier", "background"):
        jf = didax.jit(f)
        before = tier.handovers
        jf(np.float32(1.0))
        assert executable(jf, np.float32(1.0)).switch is None
        assert tier.handovers == before
    assert seen == list(range(300))
