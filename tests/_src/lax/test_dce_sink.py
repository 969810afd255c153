"""dce_sink_p against JAX 0.10.2: no results, its equation staged (and kept by jit although
nothing uses it), the primals only under JVP, and dropped under vmap, as in JAX."""
import jax
import numpy as np

import didax
from didax import lax

X = np.linspace(-1, 1, 3, dtype=np.float32)


def _equations(closed):
    return [(e.primitive.name, e.params if e.primitive.name == "dce_sink" else None,
             len(e.outvars)) for e in closed.jaxpr.eqns]


def _sinking(L):
    return lambda a: (L.dce_sink_p.bind(a * 3, prevent_mlir_dce=True), a * 2)[1]


def test_dce_sink_stages_as_jax():
    assert lax.dce_sink_p.bind(X, prevent_mlir_dce=False) == []
    for make in (lambda L, T: _sinking(L), lambda L, T: T.grad(lambda a: _sinking(L)(a).sum()),
                 lambda L, T: T.vmap(_sinking(L))):
        ours, theirs = make(lax, didax), make(jax.lax, jax)
        assert _equations(didax.make_jaxpr(ours)(X)) == _equations(jax.make_jaxpr(theirs)(X))
        np.testing.assert_array_equal(ours(X), theirs(X))


def test_jit_keeps_the_sink():
    f = didax.jit(_sinking(lax))
    assert "dce_sink" in f.lower(X).compile().as_text()
    np.testing.assert_array_equal(f(X), X * 2)
