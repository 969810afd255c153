"""didax.numpy's polynomials (polynomial.py): polyval, vander, poly, polyadd, polysub, polymul,
polydiv, polyder, polyint and polyfit: values against NumPy, result dtypes and weak types
against JAX (the table below was produced by running JAX 0.10.2), derivatives, jit and vmap,
and errors."""
import numpy as np
import pytest
from numpy_testing import A, K, S, V, table_tests  # noqa: E402
from numpy_testing import assert_matches as _assert_matches

import didax
import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

U = np.array([3, 1, 2], np.uint8)
INTS = np.array([1, 2, 3], np.int32)
XF = np.linspace(0, 1, 6).astype(np.float32)

DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "polyval_int": (lambda m: m.polyval(U, U), "uint8", "uint8"),
    "polyval_weak": (lambda m: m.polyval(S, 2.0), "float32", "float32"),
    "vander": (lambda m: m.vander(S), "float32", "float32"),
    "poly_int": (lambda m: m.poly(INTS), "float32", "float32"),
    "poly_f32": (lambda m: m.poly(S), "float32", "float32"),
    "poly_empty": (lambda m: m.poly(np.zeros(0, np.float32)), "float32", "float32"),
    "polyadd_int": (lambda m: m.polyadd(U, INTS[:2]), "int32", "int32"),
    "polyadd_f32": (lambda m: m.polyadd(S, INTS), "float32", "float32"),
    "polysub_u8": (lambda m: m.polysub(U, U[:1]), "uint8", "uint8"),
    "polymul_int": (lambda m: m.polymul(U, INTS), "float32", "float32"),
    "polydiv_int": (lambda m: m.polydiv(INTS, U[:2]), "float32 float32", "float32 float32"),
    "polyder_int": (lambda m: m.polyder(INTS, 2), "float32", "float32"),
    "polyder_0": (lambda m: m.polyder(U, 0), "float32", "float32"),
    "polyint_int": (lambda m: m.polyint(INTS, 2), "float32", "float32"),
    "polyint_k": (lambda m: m.polyint(S, 1, k=3), "float32", "float32"),
    "polyfit": (lambda m: m.polyfit(XF, XF ** 2, 2), "float32", "float32"),
    "polyfit_full": (lambda m: m.polyfit(XF, XF ** 2, 2, full=True),
                     "float32 float32 int32 float32 float32*",
                     "float32 float32 int64 float32 float64*"),
    "polyfit_cov": (lambda m: m.polyfit(XF, XF ** 2, 2, cov=True),
                    "float32 float32", "float32 float32"),
}


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode


X = np.linspace(-1, 1, 9)
Y = np.stack([np.sin(3 * X), np.cos(X)], 1)
NUMPY_CASES = {
    "polyval": lambda m: m.polyval(K, V),
    "vander": lambda m: [m.vander(K), m.vander(K, 5, True)],
    "poly": lambda m: [m.poly(K), m.poly(V[:2] + 1j * K[:2]), m.poly(np.array([2.0]))],
    "polyadd": lambda m: [m.polyadd(K, V), m.polyadd(V, K), m.polyadd(K, K)],
    "polysub": lambda m: [m.polysub(K, V), m.polysub(V, K)],
    "polymul": lambda m: [m.polymul(K, V), m.polymul(V[:1], K)],
    "polyder": lambda m: [m.polyder(V), m.polyder(V, 3), m.polyder(V, 0), m.polyder(K, 3)],
    "polyint": lambda m: [m.polyint(V), m.polyint(V, 3), m.polyint(K, 2, k=np.array([1.5, -2.0])),
                          m.polyint(K, 3, k=0.5), m.polyint(V, 0)],
    "polyfit": lambda m: [m.polyfit(X, Y[:, 0], 3), m.polyfit(X, Y, 2),
                          m.polyfit(X, Y[:, 0], 2, w=X + 2),
                          m.polyfit(X, Y[:, 0], 2, cov=True)[1],
                          m.polyfit(X, Y, 2, cov=True)[1],
                          m.polyfit(X, Y[:, 0], 2, cov="unscaled")[1],
                          m.polyfit(X, Y[:, 0], 4, full=True)[:4]],
}


@pytest.mark.parametrize("u,v", [(V, K), (K, V[:1]), (K, K), (K, V)])
def test_polydiv_matches_numpy(x64_on, u, v):
    """JAX keeps the remainder at u's length (leading zeros) unless `trim_leading_zeros`."""
    q, r = jnp.polydiv(u, v)
    wq, wr = np.polydiv(u, v)
    _assert_matches(q, wq, rtol=1e-12, atol=1e-12)
    assert r.shape == u.shape
    _assert_matches(r[len(u) - len(wr):], wr, rtol=1e-12, atol=1e-12)
    _assert_matches(r[:len(u) - len(wr)], np.zeros(len(u) - len(wr)), atol=1e-12)
    q, r = jnp.polydiv(u, v, trim_leading_zeros=True)
    # JAX: an all-zero remainder -> []
    _assert_matches(r, wr if np.abs(wr).max() > 1e-8 else wr[:0], rtol=1e-12, atol=1e-12)


@pytest.fixture
def x64_on():
    from didax._src.config import enable_x64
    with enable_x64(True):
        yield


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "polyval": (lambda p, x: jnp.polyval(p, x), (K, V)),
    "vander": (lambda x: jnp.vander(x, 4), (K,)),
    "poly": (jnp.poly, (K,)),
    "polyadd": (jnp.polyadd, (K, V)),
    "polysub": (jnp.polysub, (V, K)),
    "polymul": (jnp.polymul, (K, V)),
    "polydiv": (jnp.polydiv, (V, K + np.array([2.0, 0, 0]))),
    "polyder": (lambda p: jnp.polyder(p, 2), (V,)),
    "polyint": (lambda p, k: jnp.polyint(p, 2, k), (V, K[:2])),
    # x avoids 0, where vander's x ** 0 has a NaN derivative (in JAX too)
    "polyfit": (lambda x, y: jnp.polyfit(x, y, 2), (X + 0.05, Y[:, 0])),
    "polyfit_cov": (lambda x, y: jnp.polyfit(x, y, 2, cov=True), (X + 0.05, Y[:, 0])),
}


# --------------------------------------------------------------------------------------
# jit and vmap

TRACE_CASES = {
    "poly": (jnp.poly, (K,)),
    "polyadd": (jnp.polyadd, (K, V)),
    "polymul": (jnp.polymul, (K, V)),
    "polydiv": (jnp.polydiv, (V, K)),
    "polyder": (lambda p: jnp.polyder(p, 2), (V,)),
    "polyint": (lambda p: jnp.polyint(p, 2, k=1.0), (V,)),
    "polyfit": (lambda x, y: jnp.polyfit(x, y, 2), (X, Y[:, 0])),
}


@pytest.mark.parametrize("name", sorted(TRACE_CASES))
def test_jit_and_vmap(name):
    fn, args = TRACE_CASES[name]
    _assert_matches(didax.jit(fn)(*args), fn(*args), rtol=1e-5, atol=1e-5)
    batched = [np.stack([a, 2 * a]) for a in args]
    got = didax.vmap(fn)(*batched)
    want = [fn(*(b[i] for b in batched)) for i in range(2)]
    want = didax.tree_util.tree_map(lambda *xs: np.stack(xs), *want)
    _assert_matches(got, want, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.vander(np.ones((2, 2))), ValueError),
    (lambda: jnp.poly(np.ones((2, 3))), ValueError),
    (lambda: jnp.polyder(K, -1), ValueError),
    (lambda: jnp.polyint(K, -1), ValueError),
    (lambda: jnp.polyint(K, 2, k=np.ones(3)), ValueError),
    (lambda: jnp.polyfit(X, X, -1), ValueError),
    (lambda: jnp.polyfit(A, A, 1), TypeError),
    (lambda: jnp.polyfit(X, X[:3], 1), TypeError),
    (lambda: jnp.polyfit(X, X, 1, w=A), TypeError),
    (lambda: jnp.polyfit(X[:3], X[:3], 2, cov=True), ValueError),
    (lambda: didax.jit(lambda p: jnp.polymul(p, p, trim_leading_zeros=True))(K),
     didax.errors.ConcretizationTypeError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
