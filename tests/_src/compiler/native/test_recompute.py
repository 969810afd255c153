"""Cheap results are computed again in the later loops that read them (recompute.py): what
is copied, what is not, and that the native code still computes the NumPy tier's bits."""
from __future__ import annotations

import numpy as np

import didax
import didax.numpy as jnp
from didax._src.compiler import passes
from didax._src.compiler.native import emit
from didax._src.compiler.native.recompute import _loops, recomputed_in_readers

from .conftest import Tiers, assert_native, assert_same


def _names(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def _read_by_later_loops(closed):
    """How many cheap results loops other than their own read (stored, then read back)."""
    eqns = closed.jaxpr.eqns
    run, _ = _loops(eqns, emit.native_kind)
    made = {e.outvars[0]: k for k, e in enumerate(eqns) if e.primitive.traits.cheap}
    return len({a for k, e in enumerate(eqns) for a in e.invars
                 if a in made and run[made[a]] != run[k]})


def _recomputed(f, *args):
    closed = didax.make_jaxpr(f)(*args)
    return closed, recomputed_in_readers(closed, emit.native_kind)


def _tiers_agree(f, *args):
    t = Tiers(f)
    native, numpy_, eager = t(*args)
    assert_native(t.native, *args)
    assert_same(native, numpy_)
    assert_same(native, eager)


X = np.linspace(-2, 2, 24, dtype=np.float32).reshape(4, 6)
W = np.linspace(-1, 1, 36, dtype=np.float32).reshape(6, 6)


def test_a_cheap_result_a_later_loop_reads_is_computed_there_again():
    def f(x, w):
        y = x * 2.0        # cheap; read by the product, and by the loop after it
        z = jnp.dot(y, w)  # (ends y's loop)
        return z + y * x

    before, after = _recomputed(f, X, W)
    assert _names(before) == ["mul", "dot_general", "mul", "add"]
    assert _names(after) == ["mul", "dot_general", "mul", "mul", "add"]
    y, copy = before.jaxpr.eqns[0].outvars[0], after.jaxpr.eqns[2].outvars[0]
    assert after.jaxpr.eqns[1].invars[0] is y        # the product reads the first
    assert after.jaxpr.eqns[3].invars[0] is copy     # the later loop reads its copy
    assert after.jaxpr.eqns[2].invars[0] is before.jaxpr.invars[0]


def test_the_original_goes_when_only_later_loops_read_it():
    def f(x, w):
        y = x + 1.0
        z = jnp.tanh(jnp.dot(x, w))
        return z * y

    before, after = _recomputed(f, X, W)
    assert _names(after) == ["dot_general", "tanh", "add", "mul"]
    assert after.jaxpr.eqns[2].invars[0] is before.jaxpr.invars[0]


def test_operands_no_longer_read_there_are_not_kept_for_a_copy():
    def f(x, w):
        a = jnp.exp(x)
        y = a * 3.0               # a is not read after this loop: y is stored, not copied
        z = jnp.dot(x, w)
        return z - y

    before, after = _recomputed(f, X, W)
    assert _names(after) == _names(before)


def test_only_cheap_equations_are_copied():
    def f(x, w):
        y = jnp.exp(x)   # not cheap: stored and read back
        z = jnp.dot(x, w)
        return z * y + x

    before, after = _recomputed(f, X, W)
    assert _names(after) == _names(before)


def test_chains_of_copies_and_broadcast_readers():
    def f(x, w, b):
        u = x + b                 # b broadcast
        v = 0.5 * u
        s = u * v                 # s reads u and v: its copy reads their copies
        z = jnp.dot(s, w)
        r = jnp.sum(z * s, axis=1)  # a reduction's loop reads s
        return r[:, None] + v + u[0]  # u[0]: a row, read broadcast: not a copy's reader

    b = np.linspace(0, 1, 6, dtype=np.float32)
    before, after = _recomputed(f, X, W, b)
    assert _names(after).count("mul") == _names(before).count("mul") + 2
    _tiers_agree(f, X, W, b)


def test_a_copy_reads_the_copy_of_an_operand_whose_reader_comes_later():
    """p = t * x is read in the later loop before t is: p's copy, placed first, must read
    t's copy (moved before it), not the stored t (tanh-gelu's backward loop read its
    forward's `0.044715 * x` back from memory so)."""
    def f(x, w):
        t = 0.25 * x
        p = t * x
        z = jnp.dot(x, w)  # (ends the loop)
        q = z * p          # the later loop reads p first...
        return q + t       # ...then t

    before, after = _recomputed(f, X, W)
    assert _read_by_later_loops(before) == 2
    assert _read_by_later_loops(after) == 0
    _tiers_agree(f, X, W)


def test_an_operand_the_later_loop_reads_before_the_copys_reader():
    """k's last reader in the later loop comes before m's: m is still computed there again
    (tanh-gelu's forward loop stored 1 + tanh beside tanh for its backward loop)."""
    def f(x, w):
        k = jnp.tanh(x)    # stored: not cheap
        m = k + 1.0
        z = jnp.dot(x, w)  # (ends the loop)
        return (z * k) * m

    before, after = _recomputed(f, X, W)
    assert _read_by_later_loops(before) == 1
    assert _read_by_later_loops(after) == 0
    _tiers_agree(f, X, W)


def test_a_transformer_layers_gradient_keeps_its_bits():
    """tanh-gelu and layer norm, differentiated: the forward loops' residuals are computed
    again in the backward loops."""
    def loss(w1, w2, x):
        h = x @ w1
        mu = jnp.mean(h, axis=-1, keepdims=True)
        h = (h - mu) / jnp.sqrt(jnp.var(h, axis=-1, keepdims=True) + 1e-5)
        g = 0.5 * h * (1 + jnp.tanh(0.7978846 * (h + 0.044715 * h ** 3)))
        return jnp.sum((g @ w2) ** 2)

    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((6, 16), (16, 6), (5, 6))]
    step = didax.grad(loss, argnums=(0, 1))
    closed = didax.make_jaxpr(step)(*args)
    after = recomputed_in_readers(closed, emit.native_kind)
    assert _read_by_later_loops(after) < _read_by_later_loops(closed)
    t = Tiers(step)
    native, numpy_, eager = t(*args)
    assert_native(t.native, *args)
    for a, b, c in zip(native, numpy_, eager):
        assert_same(a, b)
        assert_same(a, c)


def test_a_constant_broadcast_is_made_again_in_each_loop_that_reads_it():
    """A scalar broadcast to an array too large to fold (a causal mask's fill, a gradient's
    zeros) that later loops read: each makes it again, so no loop stores it, and the bits
    stay the NumPy tier's."""
    rows = passes.FOLD_MAX_SIZE // 64 + 1

    def f(x, w):
        m = x > 0
        a = jnp.where(m, x, -1e30)        # the fill: broadcast, read here...
        z = jnp.dot(a, w)                 # (ends the loop)
        return jnp.where(m, z, -1e30) + a  # ...and by the later loop

    x = np.linspace(-2, 2, rows * 64, dtype=np.float32).reshape(rows, 64)
    w = np.linspace(-1, 1, 64 * 64, dtype=np.float32).reshape(64, 64)
    closed = passes.optimize(didax.make_jaxpr(f)(x, w))
    after = recomputed_in_readers(closed, emit.native_kind)
    fills = [e for e in closed.jaxpr.eqns if e.primitive.name == "broadcast_in_dim"]
    assert len(fills) == 1  # (one, shared by both loops: not folded into a constant)
    run, _ = _loops(after.jaxpr.eqns, emit.native_kind)
    made = {e.outvars[0]: k for k, e in enumerate(after.jaxpr.eqns)
            if e.primitive.name == "broadcast_in_dim"}
    assert len(made) == 2
    assert all(run[made[a]] == run[k] for k, e in enumerate(after.jaxpr.eqns)
               for a in e.invars if a in made)  # every loop reads its own
    t = Tiers(f)
    native, numpy_, eager = t(x, w)
    assert_native(t.native, x, w)
    assert_same(native, numpy_)
    assert_same(native, eager)
