"""lax.optimization_barrier and copy_p against JAX 0.10.2: values, dtypes and weak types,
staged equations, derivatives (their tangents and cotangents pass a barrier or a copy of their
own), vmap, and jit keeping the barrier between the code before it and after it."""
import jax
import numpy as np
import pytest

import didax
from didax import lax
from didax.test_util import check_grads

X = np.linspace(-1, 2, 6, dtype=np.float32).reshape(2, 3)


def _equations(closed):
    return [(e.primitive.name, len(e.invars), len(e.outvars)) for e in closed.jaxpr.eqns]


def _same_leaves(got, want):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.shape, g.dtype, g.weak_type) == (w.shape, w.dtype, w.weak_type)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("operand", [
    X, (X, np.int8(3)), {"a": 2.0, "b": [1, np.arange(3)]}, [],
])
def test_optimization_barrier_is_the_identity_as_in_jax(operand):
    _same_leaves(lax.optimization_barrier(operand), jax.lax.optimization_barrier(operand))
    _same_leaves(didax.jit(lax.optimization_barrier)(operand),
                 jax.jit(jax.lax.optimization_barrier)(operand))


def test_optimization_barrier_stages_derivatives_and_batches_as_jax():
    def f(L):
        return lambda a, b: L.optimization_barrier((a * 2, b))

    for make in (lambda L, T: lambda a, b: T.jvp(lambda u: f(L)(u, b), (a,), (a,)),
                 lambda L, T: T.grad(lambda a, b: f(L)(a, b)[0].sum()),
                 lambda L, T: T.vmap(f(L), (0, None))):
        ours, theirs = make(lax, didax), make(jax.lax, jax)
        assert _equations(didax.make_jaxpr(ours)(X, X)) == _equations(jax.make_jaxpr(theirs)(X, X))
        _same_leaves(ours(X, X), theirs(X, X))
    check_grads(lambda a: lax.optimization_barrier(a * a)[0] ** 2, (X,), order=2,
                modes=("fwd", "rev"))


def test_jit_keeps_the_barrier_between_the_code_around_it():
    f = didax.jit(lambda a: lax.optimization_barrier(a * 2 + 1) * 3 - 1)
    text = f.lower(X).compile().as_text()
    assert "optimization_barrier" in text
    np.testing.assert_allclose(f(X), (X * 2 + 1) * 3 - 1)
    forwarded = didax.jit(lambda a: lax.optimization_barrier(a))
    assert "optimization_barrier" in forwarded.lower(X).compile().as_text()


def test_copy_p_copies_as_jax_and_is_linear():
    out = lax.copy_p.bind(X)
    _same_leaves(out, jax.lax.copy_p.bind(X))
    _same_leaves(lax.copy_p.bind(2.0), jax.lax.copy_p.bind(2.0))
    for make in (lambda L, T: lambda a: T.jvp(L.copy_p.bind, (a,), (a,)),
                 lambda L, T: T.grad(lambda a: L.copy_p.bind(a).sum()),
                 lambda L, T: T.vmap(L.copy_p.bind, 1)):
        ours, theirs = make(lax, didax), make(jax.lax, jax)
        assert _equations(didax.make_jaxpr(ours)(X)) == _equations(jax.make_jaxpr(theirs)(X))
        _same_leaves(ours(X), theirs(X))
    np.testing.assert_array_equal(didax.jit(lax.copy_p.bind)(X), X)
