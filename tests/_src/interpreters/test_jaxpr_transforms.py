"""Transformations of closed jaxprs (what control-flow primitives apply to their bodies):
each agrees with the same transformation applied to the function, and type-checks."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax._src import ir
from didax._src.config import enable_x64
from didax._src.interpreters.batching import batch_jaxpr
from didax._src.interpreters.jvp import jvp_jaxpr
from didax._src.interpreters.partial_eval import partial_eval_jaxpr
from didax._src.interpreters.transpose import transpose_jaxpr


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


C = np.array([0.5, -1.0, 2.0])


def body(c, x, n):
    """A loop body: carry c, input x, an integer n; uses a closed-over constant."""
    y = jnp.sin(c) * x + C
    return y * n, jnp.cos(x) + c


ARGS = (np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0]), np.int32(3))


def closed_body():
    return jax.make_jaxpr(body)(*ARGS)


def run(closed, *args):
    return ir.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def test_jvp_jaxpr_matches_jvp():
    closed = closed_body()
    jvp_closed, out_nz = jvp_jaxpr(closed, [True, False, False])
    ir.check_jaxpr(jvp_closed.jaxpr)
    assert out_nz == [True, True]
    t = np.array([1.0, -1.0, 0.5])
    outs = run(jvp_closed, *ARGS, t)
    p, tan = jax.jvp(lambda c: body(c, *ARGS[1:]), (ARGS[0],), (t,))
    for a, b in zip(outs, list(p) + list(tan)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-14)


def test_partial_eval_jaxpr_splits_and_recomposes():
    closed = closed_body()
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, [False, True, False])
    ir.check_jaxpr(known.jaxpr)
    ir.check_jaxpr(unknown.jaxpr)
    assert out_unknowns == [True, True]  # both outputs depend on x
    assert num_res >= 1
    known_out = run(known, ARGS[0], ARGS[2])
    residuals = known_out[len(known_out) - num_res:]
    outs = run(unknown, *residuals, ARGS[1])
    for a, b in zip(outs, body(*ARGS)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-14)
    # The known half did the work that needs only c: sin(c) is not recomputed.
    assert "sin" not in str(unknown) and "sin" in str(known)


def test_partial_eval_with_every_output_known():
    closed = jax.make_jaxpr(lambda a, b: (a * 2.0, b + 1.0))(1.0, 2.0)
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, [False, True])
    assert out_unknowns == [False, True]
    known2, unknown2, out_unknowns2, _ = partial_eval_jaxpr(closed, [False, True],
                                                            instantiate=True)
    assert out_unknowns2 == [True, True]
    res = run(known2, 1.0)
    np.testing.assert_allclose([float(v) for v in run(unknown2, *res, 2.0)], [2.0, 3.0])


def test_transpose_jaxpr_is_the_adjoint():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3))
    f = lambda w, t: (a @ t) * w + jnp.cumsum(t) * jnp.sin(w)  # noqa: E731 - linear in t
    w, t, ct = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    closed = jax.make_jaxpr(f)(w, t)
    tr = transpose_jaxpr(closed, [False, True])
    ir.check_jaxpr(tr.jaxpr)
    (ft_ct,) = run(tr, w, ct)
    assert np.isclose(np.vdot(ct, np.asarray(f(w, t))), np.vdot(np.asarray(ft_ct), t),
                      rtol=1e-13)


def test_batch_jaxpr_matches_vmap():
    closed = closed_body()
    batched = batch_jaxpr(closed, 4, [0, None, None])
    ir.check_jaxpr(batched.jaxpr)
    cs = np.random.default_rng(1).normal(size=(4, 3))
    outs = run(batched, cs, *ARGS[1:])
    expected = jax.vmap(body, in_axes=(0, None, None))(cs, *ARGS[1:])
    for a, b in zip(outs, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-14)
