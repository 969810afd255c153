"""A weakly typed initial carry (a Python scalar) takes the dtype the loop body gives it when
weak promotion reaches that dtype, as in JAX 0.10.2; otherwise the carry mismatch is an
error. Each program runs under didax and JAX: same values, dtypes and weak types, or the
same exception type."""
import jax
import numpy as np
import pytest

import didax
from didax._src.config import enable_x64
from didax.test_util import check_grads


def _programs(jx, jnp, lax):
    return {
        "scan int->float": lambda: lax.scan(lambda c, x: (c + x, None), 0, jnp.ones(3))[0],
        "fori int->float": lambda: lax.fori_loop(0, 3, lambda i, c: c + 0.5, 0),
        "while int->float": lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0),
        "while int->int8": lambda: lax.while_loop(
            lambda c: c < 3, lambda c: (c + 1).astype(jnp.int8), 0),
        "while float->complex": lambda: lax.while_loop(lambda c: False, lambda c: c + 1j, 0.0),
        "while float->float16": lambda: lax.while_loop(
            lambda c: c < 3, lambda c: (c + 1).astype(jnp.float16), 0.0),
        "while stays weak": lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1, 0),
        "scan tuple": lambda: lax.scan(
            lambda c, x: ((c[0] + x, c[1]), None), (0, jnp.int32(1)), jnp.ones(3))[0],
        "jit fori int->float": lambda: jx.jit(
            lambda n: lax.fori_loop(0, n, lambda i, c: c + 0.5, 0))(3),
        # no promotion reaches the body's dtype: errors in both
        "while float->int32": lambda: lax.while_loop(
            lambda c: c < 3, lambda c: (c + 1).astype(jnp.int32), 0.0),
        "while int->bool": lambda: lax.while_loop(lambda c: False, lambda c: c > 0, 0),
        "while strong int->float": lambda: lax.while_loop(
            lambda c: c < 3, lambda c: c + 1.0, jnp.int32(0)),
        "scan weak but reshaped": lambda: lax.scan(
            lambda c, x: (c + x, None), 0.0, jnp.ones((3, 2)))[0],
    }


OURS = _programs(didax, didax.numpy, didax.lax)
THEIRS = _programs(jax, jax.numpy, jax.lax)


def _run(f):
    try:
        return f(), None
    except Exception as e:  # the outcome to compare
        return None, e


@pytest.mark.parametrize("name", list(OURS))
def test_weak_initial_carry_matches_jax(name):
    ours, our_error = _run(OURS[name])
    theirs, their_error = _run(THEIRS[name])
    if their_error is not None:
        assert type(our_error) is type(their_error), our_error
        return
    assert our_error is None, our_error
    for o, t in zip(didax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert o.dtype == t.dtype and o.weak_type == t.weak_type
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)


def test_promoted_carry_differentiates():
    lax = didax.lax

    def f(x):  # the carry starts as the Python int 0 and becomes float64
        return lax.fori_loop(0, 3, lambda i, c: c + didax.numpy.sin(x * c + i), 0)

    with enable_x64(True):  # finite differences of second order need float64
        check_grads(f, (np.float64(0.3),), order=2, modes=("fwd", "rev"))
