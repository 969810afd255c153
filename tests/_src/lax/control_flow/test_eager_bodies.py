"""Eager loops (`didax/_src/lax/control_flow/eager_bodies.py`): a long scan or while loop
runs its body compiled, a short one interpreted, and either way the values are the bits of
the loop interpreted throughout and of the loop under jit, with the effects in order."""
import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.lax.control_flow import eager_bodies

COMPILE_AFTER = eager_bodies.COMPILE_AFTER


@pytest.fixture
def compiles(monkeypatch):
    """The names of the bodies eager loops compile in the test."""
    names = []
    compiled = eager_bodies.compiled

    def counting(closed, name):
        names.append(name)
        return compiled(closed, name)

    monkeypatch.setattr(eager_bodies, "compiled", counting)
    return names


def _bits(tree):
    return [(np.asarray(x).dtype, np.asarray(x).shape, np.asarray(x).tobytes())
            for x in didax.tree_util.tree_leaves(tree)]


W = np.random.default_rng(0).standard_normal((6, 6)).astype(np.float32) / 3


def _scan(xs, h):
    """An RNN over xs: a product, transcendentals, a reduction, integer and weak carries."""
    def step(carry, x):
        h, count, total = carry
        h = jnp.tanh(h @ W + x) * jnp.exp(-0.1 * x)
        return (h, count + 1, total + jnp.sum(h ** 2)), jnp.sin(h).mean()
    return lax.scan(step, (h, jnp.int32(0), 0.0), xs)


def _newton(x):
    """sqrt(x) by Newton's method: as many iterations as its tolerance needs."""
    def body(c):
        y, k = c
        return 0.5 * (y + x / y), k + 1
    return lax.while_loop(lambda c: (jnp.max(jnp.abs(c[0] * c[0] - x)) > 1e-5 * jnp.max(x))
                          & (c[1] < 1000), body, (x + 1.0, 0))


def _slow_halving(x):
    """Halving until below one: log2(max x) iterations."""
    return lax.while_loop(lambda c: jnp.max(c[0]) >= 1.0, lambda c: (c[0] * 0.5, c[1] + 1),
                          (x, jnp.int32(0)))


@pytest.mark.parametrize("length", [3, COMPILE_AFTER, COMPILE_AFTER + 1, 200])
def test_scans_give_the_interpreted_bits_and_jits(length, compiles, monkeypatch):
    rng = np.random.default_rng(length)
    xs = jnp.asarray(rng.standard_normal((length, 6)).astype(np.float32))
    h = jnp.asarray(rng.standard_normal(6).astype(np.float32))
    got = _scan(xs, h)
    assert compiles == (["scan_body"] if length > COMPILE_AFTER else [])
    assert _bits(got) == _bits(didax.jit(_scan)(xs, h))
    interpret_all = eager_bodies.interpreted
    monkeypatch.setattr(eager_bodies, "compiled", lambda closed, name: interpret_all(closed))
    assert _bits(got) == _bits(_scan(xs, h))
    assert [type(x) for x in didax.tree_util.tree_leaves(got)] == [didax.Array] * 4
    assert got[0][2].weak_type == _scan(xs, h)[0][2].weak_type


@pytest.mark.parametrize("scale, compiled", [(4.0, False), (2.0 ** 40, True)])
def test_while_loops_compile_only_past_their_first_iterations(scale, compiled, compiles):
    x = jnp.asarray(np.linspace(0.5, 1.5, 7) * scale)
    y, k = _slow_halving(x)
    assert (int(k) > COMPILE_AFTER) == compiled
    assert compiles == (["while_cond", "while_body"] if compiled else [])
    assert _bits((y, k)) == _bits(didax.jit(_slow_halving)(x))
    # (exactly the halvings)
    np.testing.assert_array_equal(y, np.asarray(x) * 0.5 ** int(k))


def test_while_loops_give_the_interpreted_bits(compiles, monkeypatch):
    x = jnp.asarray(np.array([2.0, 1e6, 1e30], np.float32))
    got = _newton(x)
    assert int(got[1]) > COMPILE_AFTER and compiles  # (compiled part way)
    assert _bits(got) == _bits(didax.jit(_newton)(x))
    interpret_all = eager_bodies.interpreted
    monkeypatch.setattr(eager_bodies, "compiled", lambda closed, name: interpret_all(closed))
    assert _bits(got) == _bits(_newton(x))


def test_long_loops_keep_their_effects_in_order(capsys):
    def body(i, c):
        didax.debug.print("step {i}: {c}", i=i, c=c)
        return c + 10

    n = COMPILE_AFTER * 3
    assert int(lax.fori_loop(0, n, body, jnp.int32(1))) == 1 + 10 * n
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"step {i}: {1 + 10 * i}" for i in range(n)]


def test_derivatives_through_long_eager_loops(monkeypatch):
    """The interpreted loops' bits; jit's to rounding (its loop passes move the weights'
    cotangent out of the loop: one product over every step, summed in another order)."""
    xs = jnp.asarray(np.random.default_rng(1).standard_normal((50, 6)).astype(np.float32))

    def loss(h):
        (h, _, total), ys = _scan(xs, h)
        return jnp.sum(h) + total + jnp.sum(ys)

    h = jnp.asarray(np.linspace(-1, 1, 6).astype(np.float32))
    tangent = jnp.ones(6, np.float32)
    grad, jvp = didax.grad(loss)(h), didax.jvp(loss, (h,), (tangent,))
    np.testing.assert_allclose(grad, didax.jit(didax.grad(loss))(h), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(jvp, didax.jit(lambda h, t: didax.jvp(loss, (h,), (t,)))(
        h, tangent), rtol=2e-6)
    interpret_all = eager_bodies.interpreted
    monkeypatch.setattr(eager_bodies, "compiled", lambda closed, name: interpret_all(closed))
    assert _bits(grad) == _bits(didax.grad(loss)(h))
    assert _bits(jvp) == _bits(didax.jvp(loss, (h,), (tangent,)))
