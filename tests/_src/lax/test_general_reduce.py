"""lax.reduce against JAX: monoids become reduce_sum/max/..., other computations fold (and
differentiate), pytrees of operands, weak init values, errors."""
import jax
import jax.numpy as jnp_jax
import numpy as np
import pytest
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax import lax
from didax.test_util import check_grads

X = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 3 + 0.5


def _cases(j, m, lx):
    pair = lambda a, b: (a[0] + b[0], a[1] * b[1])  # noqa: E731
    return {
        "sum": lambda x: lx.reduce(x, 0.0, lx.add, (0,)),
        "sum_from_one": lambda x: lx.reduce(x, 1.0, lx.add, (0,)),
        "pytree": lambda x: lx.reduce((x, x * 2), (0.0, 1.0), pair, (1,)),
        "max_all": lambda x: lx.reduce(x, -m.inf, lx.max, (0, 1)),
        "weak_int_init": lambda x: lx.reduce(x, 0, lx.add, (0,)),
        "int_prod": lambda x: lx.reduce(m.arange(6).reshape(2, 3), 1, lx.mul, (1,)),
        "bool_and": lambda x: lx.reduce(x > 1, True, lx.bitwise_and, (0,)),
        "fold": lambda x: lx.reduce(x, 0.0, lambda a, b: a * 0.5 + b, (1,)),
        "logaddexp": lambda x: lx.reduce(x, -m.inf, m.logaddexp, (0,)),
        "grad_pytree": j.grad(lambda x: lx.reduce((x, x * 2), (0.0, 1.0), pair, (1,))[1].sum()),
        "grad_max": j.grad(lambda x: lx.reduce(x, -m.inf, lx.max, (0, 1))),
        "grad_logaddexp": j.grad(lambda x: lx.reduce(x, -m.inf, m.logaddexp, (0,)).sum()),
        "vmap_fold": j.vmap(lambda r: lx.reduce(r, 0.0, lambda a, b: a * 0.5 + b, (0,))),
    }


@pytest.mark.parametrize("name", list(_cases(didax, jnp, lax)))
def test_reduce_matches_jax(name):
    ours = _cases(didax, jnp, lax)[name](X)
    theirs = _cases(jax, jnp_jax, jax.lax)[name](X)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_monoids_print_as_their_reductions():
    for init, comp, prim in ((0.0, "add", "reduce_sum"), (-np.inf, "max", "reduce_max"),
                             (np.inf, "min", "reduce_min"), (1.0, "mul", "reduce_prod")):
        text = str(didax.make_jaxpr(
            lambda x, init=init, comp=comp: lax.reduce(x, init, getattr(lax, comp), (0,)))(X))
        jtext = str(jax.make_jaxpr(
            lambda x, init=init, comp=comp: jax.lax.reduce(x, init, getattr(jax.lax, comp),
                                                           (0,)))(X))
        assert f"= {prim}[axes=(0,)" in text and f"= {prim}[axes=(0,)" in jtext
    for fn in (lambda x, L: L.reduce(x, 1.0, L.add, (0,)),  # not the identity
               lambda x, L: L.reduce(x, 0.0, lambda a, b: L.add(a, b), (0,))):  # not lax.add
        folded = str(didax.make_jaxpr(lambda x, fn=fn: fn(x, lax))(X))
        jfolded = str(jax.make_jaxpr(lambda x, fn=fn: fn(x, jax.lax))(X))
        assert "= reduce[" in folded and "computation=<function " in folded
        # (the same text but the computation's repr: didax's lax.add is another function)
        assert _without_computation(folded) == _without_computation(jfolded)


def _without_computation(text):
    return "\n".join(line for line in text.splitlines() if "computation=" not in line)


def test_general_reduce_derivatives_to_second_order():
    def f(x):
        return lax.reduce((x, x * x), (0.0, 1.0),
                          lambda a, b: (jnp.logaddexp(a[0], b[0]), a[1] * b[1]), (0,))
    with both_x64():
        check_grads(f, (X.astype(np.float64),), order=2, modes=("fwd", "rev"))


def test_reduce_errors():
    with pytest.raises(ValueError, match="same structure"):
        lax.reduce((X, X), 0.0, lax.add, (0,))
    with pytest.raises(ValueError, match="one shape"):
        lax.reduce((X, X[0]), (0.0, 0.0), lambda a, b: a, (0,))
    with pytest.raises(ValueError, match="not distinct axes"):
        lax.reduce(X, 0.0, lax.add, (0, 0))
    with pytest.raises(TypeError, match="must match"):
        lax.reduce(X, np.int32(0), lax.add, (0,))
