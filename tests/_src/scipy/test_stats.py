"""didax.scipy.stats against JAX 0.10.2 (values, dtypes, weak types, derivatives) and SciPy,
check_grads of order 2 in float64, vmap against a loop and jit against eager."""
import numpy as np
import pytest
import scipy.stats as sps
from jax_testing import assert_stats_function_as_jax

import didax
import didax.scipy.stats as stats
from didax._src.config import enable_x64
from didax.test_util import check_grads

jax = pytest.importorskip("jax")
import jax.scipy.stats as jstats  # noqa: E402

X = np.array([-1.5, -0.2, 0.0, 0.3, 0.7, 1.0, 2.5, 7.0])
U = np.array([0.0, 1e-6, 0.1, 0.5, 0.9, 1.0])  # probabilities
K = np.array([-1.0, 0.0, 1.0, 2.0, 3.5, 5.0, 12.0])  # counts (3.5 is not one)

# (distribution, function, arguments, SciPy reference or None)
CASES = [(d, f, args, ref) for d, fs, args, ref in [
    ("norm", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], (X, 0.5, 2.0), sps.norm),
    ("norm", ["ppf", "isf"], (U, 0.5, 2.0), sps.norm),
    ("beta", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], (U * 1.2, 2.5, 0.7), sps.beta),
    ("gamma", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], (X, 2.5, -0.5, 1.5),
     sps.gamma),
    ("chi2", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], (X, 3.0, 0.0, 1.5), sps.chi2),
    ("t", ["logpdf", "pdf"], (X, 3.5, 0.2, 1.3), sps.t),
    ("poisson", ["logpmf", "pmf", "cdf"], (K, 3.2), sps.poisson),
    ("expon", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], (X, -0.5, 2.0), sps.expon),
    ("expon", ["ppf"], (U, -0.5, 2.0), sps.expon),
    ("laplace", ["logpdf", "pdf", "cdf"], (X, 0.5, 2.0), sps.laplace),
    ("logistic", ["logpdf", "pdf", "cdf", "sf"], (X, 0.5, 2.0), sps.logistic),
    ("logistic", ["ppf", "isf"], (U, 0.5, 2.0), sps.logistic),
    ("cauchy", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], (X, 0.5, 2.0), sps.cauchy),
    ("cauchy", ["ppf", "isf"], (U[1:-1], 0.5, 2.0), sps.cauchy),
    ("uniform", ["logpdf", "pdf", "cdf"], (X, -0.5, 2.0), sps.uniform),
    ("uniform", ["ppf"], (U, -0.5, 2.0), sps.uniform),
] for f in fs]


def _ids(cases):
    return [f"{d}.{f}" for d, f, *_ in cases]


@pytest.mark.parametrize("dist,fn,args,ref", CASES, ids=_ids(CASES))
@pytest.mark.parametrize("x64", [False, True])
def test_values_and_dtypes_as_jax(dist, fn, args, ref, x64):
    assert_stats_function_as_jax(dist, fn, args, x64, rtol32=3e-5,
                                 atol=1e-300 if x64 else 1e-37)


@pytest.mark.parametrize("dist,fn,args,ref", [c for c in CASES if c[3] is not None],
                         ids=_ids([c for c in CASES if c[3] is not None]))
def test_values_as_scipy(dist, fn, args, ref):
    with enable_x64():
        got = np.asarray(getattr(getattr(stats, dist), fn)(*args))
    want = getattr(ref, fn)(*args)
    # JAX's formulas (1 - q in isf, log(1 - I) in logsf, tan in cauchy.ppf) cost digits there
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)


def test_poisson_entropy():
    mu = np.array([0.0, 0.5, 3.0, 9.9, 10.0, 50.0, 99.0, 100.0, 1e4])
    with enable_x64(), jax.enable_x64(True):
        got = stats.poisson.entropy(mu)
        np.testing.assert_allclose(got, jstats.poisson.entropy(mu), rtol=1e-12)
        # JAX truncates the sum at k < mu + 20 (and 35 terms): ~1e-6 off near mu = 10
        np.testing.assert_allclose(got[:7], sps.poisson.entropy(mu[:7]), rtol=3e-6)
        assert stats.poisson.entropy(mu[:3, None], np.zeros(2)).shape == (3, 2)
    assert stats.poisson.entropy(2.0).dtype == np.float32


def test_dirichlet_as_jax_and_scipy():
    alpha = np.array([1.5, 2.0, 3.5])
    x = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3], [0.5, 0.6, -0.1]]).T  # last: off simplex
    with enable_x64(), jax.enable_x64(True):
        got = stats.dirichlet.logpdf(x, alpha)
        np.testing.assert_allclose(got, jstats.dirichlet.logpdf(x, alpha), rtol=1e-12)
        np.testing.assert_allclose(got[:2], [sps.dirichlet.logpdf(c, alpha) for c in x.T[:2]],
                                   rtol=1e-12)
        np.testing.assert_allclose(stats.dirichlet.pdf(x[:2], alpha),
                                   jstats.dirichlet.pdf(x[:2], alpha), rtol=1e-12)
    with pytest.raises(ValueError, match="one-dimensional"):
        stats.dirichlet.logpdf(x, alpha[None])


def test_multivariate_normal_as_jax_and_scipy():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + 3 * np.eye(3)
    mean = rng.normal(size=3)
    x = rng.normal(size=(4, 3))
    covs = np.stack([cov, 2 * cov])[:, None]  # (2, 1, 3, 3) against x (4, 3): batch (2, 4)
    with enable_x64(), jax.enable_x64(True):
        for args in [(x, mean, cov), (x, mean, 2.0), (x[:, 0], 0.5, 2.0), (x, mean, covs)]:
            got = stats.multivariate_normal.logpdf(*args)
            want = jstats.multivariate_normal.logpdf(*args)
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(stats.multivariate_normal.pdf(x, mean, cov),
                                   sps.multivariate_normal.pdf(x, mean, cov), rtol=1e-12)
    with pytest.raises(ValueError, match="incompatible shapes"):
        stats.multivariate_normal.logpdf(x, mean, np.eye(2))


# ---------------------------------------------------------------------------------------------
# Derivatives


GRAD_CASES = [
    ("norm", "logpdf", (0.3, 0.5, 2.0)), ("norm", "logcdf", (-3.0, 0.5, 2.0)),
    ("norm", "ppf", (0.3, 0.5, 2.0)), ("t", "logpdf", (0.3, 3.5, 0.2, 1.3)),
    ("gamma", "logpdf", (1.3, 2.5, 0.1, 1.5)), ("gamma", "cdf", (1.3,)),
    ("chi2", "sf", (2.3,)), ("beta", "logpdf", (0.3, 2.5, 0.7)), ("beta", "cdf", (0.3,)),
    ("poisson", "logpmf", (2.5,)), ("expon", "logcdf", (1.5, -0.5, 2.0)),
    ("cauchy", "logsf", (1.5, 0.5, 2.0)), ("logistic", "logpdf", (1.5, 0.5, 2.0)),
    ("laplace", "cdf", (1.5, 0.5, 2.0)),
]
FIXED = {("gamma", "cdf"): (2.5, 0.1, 1.5), ("chi2", "sf"): (3.0, 0.1, 1.5),
         ("beta", "cdf"): (2.5, 0.7)}
LEADING = {("poisson", "logpmf"): (3.0,)}  # k is a count: not differentiated


@pytest.mark.parametrize("dist,fn,args", GRAD_CASES, ids=_ids(GRAD_CASES))
def test_check_grads_order_2(dist, fn, args):
    f = getattr(getattr(stats, dist), fn)
    fixed, lead = FIXED.get((dist, fn), ()), LEADING.get((dist, fn), ())
    with enable_x64():
        check_grads(lambda *a: f(*lead, *a, *fixed), args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("dist,fn,args", GRAD_CASES, ids=_ids(GRAD_CASES))
def test_gradients_as_jax(dist, fn, args):
    fixed, lead = FIXED.get((dist, fn), ()), LEADING.get((dist, fn), ())
    argnums = tuple(range(len(args)))
    with enable_x64(), jax.enable_x64(True):
        got = didax.grad(lambda *a: getattr(getattr(stats, dist), fn)(*lead, *a, *fixed),
                         argnums)(*args)
        want = jax.grad(lambda *a: getattr(getattr(jstats, dist), fn)(*lead, *a, *fixed),
                        argnums)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_gamma_cdf_first_derivative_in_the_shape():
    # through igamma_grad_a, as JAX; a second derivative in a is not defined (as in JAX)
    with enable_x64(), jax.enable_x64(True):
        got = didax.grad(stats.gamma.cdf, (0, 1))(1.3, 2.5)
        want = jax.grad(jstats.gamma.cdf, (0, 1))(1.3, 2.5)
        np.testing.assert_allclose(got, want, rtol=1e-10)
        check_grads(lambda a: stats.gamma.cdf(1.3, a), (2.5,), order=1, modes=("fwd", "rev"))


def test_multivariate_normal_and_dirichlet_gradients():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + 3 * np.eye(3)
    x, mean = rng.normal(size=3), rng.normal(size=3)
    alpha, p = np.array([1.5, 2.0, 3.5]), np.array([0.2, 0.3])
    with enable_x64(), jax.enable_x64(True):
        check_grads(stats.multivariate_normal.logpdf, (x, mean, cov), order=2,
                    modes=("fwd", "rev"))
        got = didax.grad(stats.multivariate_normal.logpdf, (0, 1, 2))(x, mean, cov)
        want = jax.grad(jstats.multivariate_normal.logpdf, (0, 1, 2))(x, mean, cov)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-9)
        check_grads(stats.dirichlet.logpdf, (p, alpha), order=2, modes=("fwd", "rev"))


# ---------------------------------------------------------------------------------------------
# vmap and jit


@pytest.mark.parametrize("dist,fn", [("norm", "logcdf"), ("gamma", "sf"), ("beta", "cdf"),
                                     ("t", "logpdf"), ("poisson", "cdf"), ("chi2", "logpdf")])
def test_vmap_and_jit(dist, fn):
    g = getattr(getattr(stats, dist), fn)

    def f(x, p):
        return g(x / 4, p, 1.5) if dist == "beta" else g(x, p)

    x = np.array([[0.2, 1.0, 3.0], [0.5, 0.7, 2.0]], np.float32)
    p = np.array([2.5, 1.5], np.float32)
    loop = np.stack([f(x[i], p[i]) for i in range(2)])
    np.testing.assert_allclose(didax.vmap(f)(x, p), loop, rtol=1e-6)
    np.testing.assert_allclose(didax.jit(f)(x, p[:, None]), f(x, p[:, None]), rtol=1e-6)


def test_multivariate_normal_under_vmap_and_jit():
    x = np.random.default_rng(2).normal(size=(5, 3)).astype(np.float32)
    cov = np.eye(3, dtype=np.float32) * 2 + 0.5
    f = stats.multivariate_normal.logpdf
    loop = np.stack([f(r, np.zeros(3, np.float32), cov) for r in x])
    np.testing.assert_allclose(didax.vmap(f, (0, None, None))(x, np.zeros(3, np.float32), cov),
                               loop, rtol=1e-5)
    np.testing.assert_allclose(didax.jit(f)(x, np.zeros(3, np.float32), cov), loop, rtol=1e-5)
    np.testing.assert_allclose(didax.jit(stats.poisson.entropy)(np.float32([1, 20, 200])),
                               stats.poisson.entropy(np.float32([1, 20, 200])), rtol=1e-5)
