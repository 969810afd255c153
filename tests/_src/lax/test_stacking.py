"""tile_p, stack_p and unstack_p against JAX 0.10.2: values, dtypes and weak types, staged
derivatives (each transposes to a sum of tiles or to the other), finite differences, vmap
against a loop, jit, and errors."""
import jax
import numpy as np
import pytest

import didax
from didax import lax
from didax._src.config import enable_x64
from didax.test_util import check_grads

X = np.linspace(-1, 2, 6, dtype=np.float32).reshape(2, 3)

CASES = {  # name -> (function of the lax module, operands)
    "tile": (lambda L: lambda a: L.tile_p.bind(a, reps=(2, 3)), (X,)),
    "tile_scalar": (lambda L: lambda a: L.tile_p.bind(a, reps=()), (np.float32(2),)),
    "tile_empty": (lambda L: lambda a: L.tile_p.bind(a, reps=(0, 2)), (X,)),
    "stack": (lambda L: lambda a, b: L.stack_p.bind(a, b * 2, a, axis=1), (X, X + 1)),
    "stack_last": (lambda L: lambda a, b: L.stack_p.bind(a, b, axis=2), (X, X - 1)),
    "unstack": (lambda L: lambda a: L.unstack_p.bind(a * 3, axis=1), (X,)),
    "unstack_first": (lambda L: lambda a: L.unstack_p.bind(a, axis=0), (X,)),
}


def _equations(closed):
    return [(e.primitive.name, e.params) for e in closed.jaxpr.eqns]


def _same(got, want):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.shape, g.dtype, g.weak_type) == (w.shape, w.dtype, w.weak_type)
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_stacking_primitives_match_jax(name):
    make, args = CASES[name]
    ours, theirs = make(lax), make(jax.lax)
    _same(ours(*args), theirs(*args))
    _same(didax.jit(ours)(*args), theirs(*args))
    assert str(didax.make_jaxpr(ours)(*args)) == str(jax.make_jaxpr(theirs)(*args))

    def loss(L, f):
        return lambda *a: sum((o * o).sum() for o in jax.tree_util.tree_leaves(f(*a)))

    got = didax.grad(loss(lax, ours), tuple(range(len(args))))(*args)
    want = jax.grad(loss(jax.lax, theirs), tuple(range(len(args))))(*args)
    _same(got, want)
    grad_eqns = _equations(didax.make_jaxpr(didax.grad(loss(lax, ours)))(*args))
    assert {n for n, _ in grad_eqns} >= {"tile"} if name.startswith("tile") else {
        "stack", "unstack"} <= {n for n, _ in grad_eqns}
    with enable_x64():  # (finite differences of float32 sums of squares are too coarse)
        check_grads(loss(lax, ours), [np.asarray(a, np.float64) for a in args],
                    order=1 if "_" in name else 2, modes=("fwd", "rev"))
    if args[0].ndim:
        stacked = [np.stack([a, a * 2 - 1, -a]) for a in args]
        batched = didax.vmap(ours, in_axes=(0,) + (None,) * (len(args) - 1))(
            stacked[0], *args[1:])
        for i in range(3):
            _same(jax.tree_util.tree_map(lambda o, i=i: o[i], batched),
                  ours(stacked[0][i], *args[1:]))
        moved = didax.vmap(ours, in_axes=1)(*[np.moveaxis(s, 0, 1) for s in stacked])
        _same(moved, jax.vmap(theirs, in_axes=1)(*[np.moveaxis(s, 0, 1) for s in stacked]))


def test_stacking_errors():
    with pytest.raises(TypeError, match="reps length must be equal to the ndim of x"):
        lax.tile_p.bind(X, reps=(2,))
    with pytest.raises(ValueError, match="different shapes"):
        lax.stack_p.bind(X, X[0], axis=0)
    with pytest.raises(TypeError, match="same dtypes, got float32, int32"):
        lax.stack_p.bind(X, X.astype(np.int32), axis=0)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.unstack_p.bind(X, axis=2)
