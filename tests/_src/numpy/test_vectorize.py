"""didax.numpy.vectorize and apply_along_axis (vectorize.py): shapes and values against JAX
and NumPy, errors of the same types as JAX's, derivatives through the batched function, and
one trace of the function however many elements there are."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax.test_util import check_grads

R = np.random.RandomState(0)
A23 = R.randn(2, 3).astype(np.float32)
A523 = R.randn(5, 2, 3).astype(np.float32)
B34 = R.randn(3, 4).astype(np.float32)
V3 = R.randn(3).astype(np.float32)
C21 = R.randn(2, 1).astype(np.float32)

# (function, signature, excluded, arguments): each runs under didax, JAX and NumPy
CASES = {
    "elementwise": (lambda a, b: a * b + 1, None, (), (A23, V3)),
    "broadcast_column": (lambda a, b: a - b, None, (), (V3, C21)),
    "excluded_position": (lambda a, p: a ** p, None, {1}, (A23, 2)),
    "dot": (lambda a, b: (a * b).sum(), "(n),(n)->()", (), (A23, V3)),
    "matmul": (lambda a, b: a @ b, "(m,n),(n,p)->(m,p)", (), (A523, B34)),
    "outer": (lambda a: a[:, None] * a[None, :], "(n)->(n,n)", (), (A23,)),
    "two_outputs": (lambda a: (a * 2, a.sum()), "(n)->(n),()", (), (A523,)),
    "new_core_dim": (lambda a: a[:2], "(n)->(m)", (), (A23,)),
    "scalar_core": (lambda a: a * 3, "()->()", (), (A23,)),
    "mixed_cores": (lambda a, s: a * s, "(n),()->(n)", (), (A23, C21[:, 0])),
}


def _run(np_mod, case):
    fun, signature, excluded, args = CASES[case]
    vec = np_mod.vectorize(fun, signature=signature, excluded=excluded)
    return vec(*args)


@pytest.mark.parametrize("case", list(CASES))
def test_vectorize_matches_jax_and_numpy(case):
    ours = _run(jnp, case)
    ref = _run(jjnp, case)
    expected = _run(np, case)
    flat = lambda t: t if isinstance(t, tuple) else (t,)  # noqa: E731
    for o, r, e in zip(flat(ours), flat(ref), flat(expected), strict=True):
        assert o.shape == r.shape == np.shape(e)
        assert o.dtype == r.dtype
        np.testing.assert_allclose(o, r, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-6)


def test_the_function_is_traced_once():
    calls = []

    def f(a, b):
        calls.append(np.shape(a))
        return jnp.dot(a, b)
    out = jnp.vectorize(f, signature="(n),(n)->()")(jnp.ones((4, 5, 3)), jnp.ones(3))
    assert out.shape == (4, 5) and calls == [(3,)]


def test_keyword_arguments_broadcast_as_numpy_does():
    # JAX drops non-excluded keyword arguments; NumPy broadcasts them like the others
    f = lambda a, b: a - b  # noqa: E731
    np.testing.assert_allclose(jnp.vectorize(f)(V3, b=C21), np.vectorize(f)(V3, b=C21))
    g = jnp.vectorize(lambda a, scale, how: a * scale if how == "mul" else a + scale,
                      excluded={"how"})
    np.testing.assert_allclose(g(V3, scale=2.0, how="mul"), V3 * 2)


def test_derivatives_through_vectorize():
    f = jnp.vectorize(lambda a, b: jnp.tanh(a @ b), signature="(n),(n,k)->(k)")
    a = R.randn(4, 3)
    b = R.randn(3, 2)
    with didax.enable_x64():
        check_grads(f, (a, b), order=2, modes=("fwd", "rev"))
    g = didax.grad(lambda a: f(a, b).sum())(a)
    ref = jax.grad(lambda a: jjnp.vectorize(lambda a, b: jjnp.tanh(a @ b),
                                            signature="(n),(n,k)->(k)")(a, b).sum())(a)
    np.testing.assert_allclose(g, ref, rtol=1e-5)
    # under jit too
    np.testing.assert_allclose(didax.jit(f)(a, b), f(a, b), rtol=1e-6)


ERRORS = [
    # (function, signature, excluded, args, exception)
    (lambda a, b: a @ b, "(n),(n)->()", (), (A23, np.ones(2)), ValueError),
    (lambda a, b: a @ b, "(n),(n)->()", (), (np.ones(()), V3), ValueError),
    (lambda a: a, "(n)->(n,m)", (), (V3,), ValueError),
    (lambda a: (a, a), "(n)->(n)", (), (V3,), TypeError),
    (lambda a: a, "(n)->(),()", (), (V3,), TypeError),
    (lambda a: a, "(n->()", (), (V3,), ValueError),
    (lambda a: a.sum(), "(n),()->()", (), (V3,), TypeError),
    (lambda a: a[:2], "(n)->(n)", (), (V3,), ValueError),
    (lambda a, b: a, None, {-1}, (V3, 2), ValueError),
    (lambda a, b: a, None, {1.5}, (V3, 2), TypeError),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_have_jax_types(i):
    fun, signature, excluded, args, exc = ERRORS[i]
    with pytest.raises(exc):
        jjnp.vectorize(fun, signature=signature, excluded=excluded)(*args)
    with pytest.raises(exc) as info:
        jnp.vectorize(fun, signature=signature, excluded=excluded)(*args)
    assert str(info.value)  # says what went wrong


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("func1d", [
    lambda v: v.sum(),                           # slice -> scalar
    lambda v: v[::-1] * 2,                        # slice -> same length
    lambda v: v[:, None] * v[None, :2],           # slice -> 2-d
])
def test_apply_along_axis_matches_jax_and_numpy(func1d, axis):
    ours = jnp.apply_along_axis(func1d, axis, A523)
    ref = jjnp.apply_along_axis(func1d, axis, A523)
    expected = np.apply_along_axis(func1d, axis, A523)
    assert ours.shape == ref.shape == expected.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)


def test_apply_along_axis_extra_arguments_errors_and_grads():
    out = jnp.apply_along_axis(lambda v, k, scale=1.0: v[k] * scale, 1, A523, 1, scale=3.0)
    np.testing.assert_allclose(out, A523[:, 1, :] * 3, rtol=1e-6)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.apply_along_axis(jnp.sum, 3, A523)
    with pytest.raises(TypeError):
        jnp.apply_along_axis(jnp.sum, 0, [1.0, 2.0])
    with didax.enable_x64():
        check_grads(lambda x: jnp.apply_along_axis(lambda v: jnp.sin(v) @ v, 1, x),
                    (R.randn(2, 3, 2),), order=2, modes=("fwd", "rev"))
