"""lax.fori_loop and lax.map(batch_size=) against JAX 0.10.2: gradients through fori_loop with
float, integer and mixed carries (also under jit, to second order), map's batches and their
errors."""
import jax
import jax.numpy as jnp_jax
import numpy as np
import pytest
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax import lax
from didax.test_util import check_grads


def _fori_programs(j, m, lx):
    def float_carry(x):
        return lx.fori_loop(0, 3, lambda i, c: c * m.sin(c) + i, x)

    def mixed_pytree(x):
        def body(i, c):
            n, y, (z, w) = c
            return n + 1, y * x + n, (z + y * i, w * 2)
        n, y, (z, w) = lx.fori_loop(0, 4, body, (0, x, (x * 2, m.int32(1))))
        return y + z + w + n

    def array_bounds(x):
        return lx.fori_loop(m.int32(1), m.int32(4),
                            lambda i, c: c * c * 0.5 + i.astype(c.dtype), x)

    def int_carry_only_counts(x):
        return lx.fori_loop(0, 3, lambda i, c: (c[0] * x, c[1] + i), (x, 1))[0]

    return [float_carry, mixed_pytree, array_bounds, int_carry_only_counts]



@pytest.mark.parametrize("k", range(4))
def test_grad_through_fori_loop_matches_jax(k):
    ours = _fori_programs(didax, jnp, lax)[k]
    theirs = _fori_programs(jax, jnp_jax, jax.lax)[k]
    for x in (0.7,):
        np.testing.assert_allclose(didax.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-5)
        np.testing.assert_allclose(didax.jit(didax.grad(ours))(x), jax.grad(theirs)(x),
                                   rtol=1e-5)
        np.testing.assert_allclose(didax.grad(didax.grad(ours))(x),
                                   jax.grad(jax.grad(theirs))(x), rtol=1e-4)
    with both_x64():
        check_grads(ours, (np.float64(0.6),), order=2, modes=("fwd", "rev"))



@pytest.mark.parametrize("batch_size", [3, 10])
def test_map_with_batch_size_matches_jax(batch_size):
    def f(m):
        return lambda x: {"a": x[0] * m.sin(x[1]), "b": m.cumsum(x)}
    xs = np.arange(14.0, dtype=np.float32).reshape(7, 2) / 7
    ours = lax.map(f(jnp), jnp.asarray(xs), batch_size=batch_size)
    theirs = jax.lax.map(f(jnp_jax), xs, batch_size=batch_size)
    for key in ("a", "b"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6)
    g = didax.grad(lambda xs: jnp.sum(lax.map(f(jnp), xs, batch_size=batch_size)["a"]))(xs)
    jg = jax.grad(lambda xs: jnp_jax.sum(jax.lax.map(f(jnp_jax), xs,
                                                     batch_size=batch_size)["a"]))(xs)
    np.testing.assert_allclose(g, jg, rtol=1e-6)
    with both_x64():
        check_grads(lambda xs: lax.map(f(jnp), xs, batch_size=batch_size)["a"],
                    (xs.astype(np.float64),), order=2, modes=("fwd", "rev"))



def test_map_batch_size_errors():
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        lax.map(jnp.sin, jnp.ones(3), batch_size=0)
    with pytest.raises(ValueError, match="same leading axis"):
        lax.map(lambda t: t[0], (jnp.ones(3), jnp.ones(4)), batch_size=2)
