"""didax.numpy.vectorize and apply_along_axis (vectorize.py): values against NumPy's, shapes and
dtypes as JAX 0.10.2 gives them, JAX's errors, derivatives and jit; and the aliases and
NumPy-printing functions added with them (bool, float_, object_, array_repr, array_str,
fromiter)."""
import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.public_test_util import check_grads

A = np.arange(24.).reshape(2, 3, 4).astype(np.float32)


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


CASES = [
    (lambda m: m.vectorize(lambda x, y: x * y + 1)(A, np.arange(4.))),
    (lambda m: m.vectorize(lambda x: x.sum(), signature="(n)->()")(A)),
    (lambda m: m.vectorize(lambda x, y: x @ y, signature="(n,m),(m)->(n)")(A, np.ones(4))),
    (lambda m: m.vectorize(lambda x: x.sum(), signature="(n)->()")(np.ones((1, 3, 5)))),
    (lambda m: m.vectorize(lambda x: (x, 2 * x), signature="(n)->(n),(n)")(A[:1, :1])),
    (lambda m: m.vectorize(lambda x, p: x ** p, excluded={1})(A, 2)),
    (lambda m: m.vectorize(lambda x, p=3: x ** p, excluded={"p"})(A, p=2)),
    (lambda m: m.apply_along_axis(lambda x: (x ** 2).sum(), 1, A)),
    (lambda m: m.apply_along_axis(lambda x: np.outer(x, x) if m is np else m.outer(x, x), -1,
                                  A)),
    (lambda m: m.apply_along_axis(lambda x, k: x[:k], 0, A, 1)),
    (lambda m: m.apply_along_axis(lambda x: x[::2], 2, A)),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_matches_numpy(i):
    got, want = CASES[i](jnp), CASES[i](np)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            _same(g, w)
    else:
        _same(got, want)


def test_keyword_arguments_that_are_not_excluded_are_dropped_as_in_jax():
    f = jnp.vectorize(lambda x, y=1: x + y)
    _same(f(np.arange(3.), y=np.array([10., 20., 30.])), np.arange(3.) + 1)


def test_none_arguments_are_passed_through():
    f = jnp.vectorize(lambda x, y: x if y is None else x + y)
    _same(f(A, None), A)


def test_dtypes_jit_and_derivatives():
    out = jnp.vectorize(lambda x: x * 2)(np.arange(3, dtype=np.int8))
    assert out.dtype == np.int8 and not out.weak_type
    f = jnp.vectorize(jnp.sort, signature="(n)->(n)")
    _same(didax.jit(f)(A[:, ::-1]), np.sort(A[:, ::-1], axis=-1))
    with enable_x64():
        x = np.random.default_rng(0).standard_normal((3, 4))
        g = jnp.vectorize(lambda v, w: jnp.sin(v) @ w, signature="(n),(n)->()")
        check_grads(g, (x, x[0] + 1), order=2, modes=("fwd", "rev"))
        h = lambda x: jnp.apply_along_axis(lambda v: jnp.cumsum(jnp.exp(v)), 0, x)
        check_grads(h, (x,), order=2, modes=("fwd", "rev"))
        _same(didax.jit(h)(x), np.cumsum(np.exp(x), axis=0))


ERRORS = [
    (lambda: jnp.vectorize(lambda x: x, signature="(n)->(n")(A), ValueError,
     "not a valid gufunc signature"),
    (lambda: jnp.vectorize(lambda x: x.sum(), signature="(n)->(n)")(A), ValueError,
     "does not match core dimensions"),
    (lambda: jnp.vectorize(lambda x, y: x, signature="(n),(n)->(n)")(A, np.ones(3)),
     ValueError, "inconsistent size for core dimension"),
    (lambda: jnp.vectorize(lambda x: x, excluded={-1}), ValueError, "negative"),
    (lambda: jnp.vectorize(lambda x: x, excluded={1.5}), TypeError, "can only exclude"),
    (lambda: jnp.vectorize(lambda x, y: x, signature="(n),(n)->(n)")(A), TypeError,
     "wrong number of positional arguments"),
    (lambda: jnp.vectorize(lambda x: x, signature="(n,m)->(n,m)")(np.ones(3)), ValueError,
     "does not have enough dimensions"),
    (lambda: jnp.vectorize(lambda x: x, signature="(n)->(n),(n)")(A), TypeError,
     "output must be a tuple"),
    (lambda: jnp.vectorize(lambda x, y: x, signature="(n),(n)->(n)")(A, None), ValueError,
     "Cannot pass None"),
    (lambda: jnp.apply_along_axis(lambda x: x, 3, A), ValueError, "out of bounds"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, match = ERRORS[i]
    with pytest.raises(exc, match=match):
        fn()


def test_aliases_and_printing():
    assert jnp.bool is jnp.bool_ and jnp.float_ is jnp.float64 and jnp.object_ is np.object_
    assert jnp.zeros(2, jnp.bool).dtype == np.bool_
    assert jnp.float_(2).dtype == np.float32  # canonicalized, as in JAX
    with enable_x64():
        assert jnp.float_(2).dtype == np.float64
    assert jnp.array_repr is np.array_repr and jnp.array_str is np.array_str
    assert jnp.array_repr(jnp.arange(3)) == "Array([0, 1, 2], dtype=int32)"
    assert jnp.array_str(jnp.ones(2)) == "[1. 1.]"
    with pytest.raises(NotImplementedError, match="fromiter"):
        jnp.fromiter(iter([1, 2]), float)
