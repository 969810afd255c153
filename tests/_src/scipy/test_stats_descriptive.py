"""rankdata, mode, sem and gaussian_kde against JAX 0.10.2 and SciPy."""
import numpy as np
import pytest
import scipy.stats as sps

import didax
import didax.scipy.stats as stats
from tests.jax_testing import both_x64

jax = pytest.importorskip("jax")
import jax.scipy.stats as jstats  # noqa: E402

ARRAYS = [np.array([[3.0, 1, 2, 1], [np.nan, 2, 2, 5], [4, 4, 4, -1]]),
          np.array([[3.0, 1, 2, 1], [4, 4, 4, -1]]),
          np.array([[3, 1, 2, 1, 1], [2, 2, 2, 5, 5]])]


def _same(got, want, rtol=1e-7):
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol)


# JAX compiles each of these per shape, axis and option (seconds each): a few calls against
# JAX, the broad sweep against SciPy.


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata(method):
    _same(stats.rankdata(ARRAYS[0], method, axis=1), jstats.rankdata(ARRAYS[0], method, axis=1))
    for a in ARRAYS:
        for axis in [None, 0, 1]:
            got = stats.rankdata(a, method, axis=axis)
            assert got.dtype == np.float32
            want = sps.rankdata(a, method, axis=axis)
            if np.isnan(a).any():  # a slice holding a nan is all nan (SciPy leaves it out)
                nan_rows = np.isnan(a).any(axis=axis, keepdims=axis is not None)
                want = np.where(nan_rows, np.nan, want)
            np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="unknown method"):
        stats.rankdata(ARRAYS[0], "mean")
    with pytest.raises(NotImplementedError, match="nan_policy='omit'"):
        stats.rankdata(ARRAYS[0], nan_policy="omit")


def test_mode_and_sem():
    for axis, keepdims in [(None, True), (1, False)]:
        got = stats.mode(ARRAYS[0], axis, keepdims=keepdims)
        want = jstats.mode(ARRAYS[0], axis, keepdims=keepdims)
        _same(got.mode, want.mode)
        _same(got.count, want.count)
        _same(stats.sem(ARRAYS[0], axis, nan_policy="omit", keepdims=keepdims),
              jstats.sem(ARRAYS[0], axis, nan_policy="omit", keepdims=keepdims), rtol=1e-6)
    _same(stats.mode(ARRAYS[2], 0).mode, jstats.mode(ARRAYS[2], 0).mode)
    for a in ARRAYS[1:]:
        for axis in [None, 0, 1]:
            for keepdims in [False, True]:
                got, want = stats.mode(a, axis, keepdims=keepdims), sps.mode(a, axis,
                                                                           keepdims=keepdims)
                np.testing.assert_array_equal(got.mode, want.mode)
                np.testing.assert_array_equal(got.count, want.count)
    with both_x64():
        for a in ARRAYS:
            for axis in [None, 0, 1]:
                for policy in ["propagate", "omit"]:
                    np.testing.assert_allclose(stats.sem(a, axis, nan_policy=policy),
                                               sps.sem(a, axis, nan_policy=policy), rtol=1e-14)
        np.testing.assert_allclose(stats.sem(ARRAYS[1], axis=1, ddof=0),
                                   sps.sem(ARRAYS[1], axis=1, ddof=0), rtol=1e-14)
        np.testing.assert_allclose(didax.grad(lambda a: stats.sem(a, axis=None))(ARRAYS[1]),
                                   jax.grad(lambda a: jstats.sem(a, axis=None))(ARRAYS[1]),
                                   rtol=1e-12)


def test_under_jit_and_vmap():
    a = ARRAYS[1].astype(np.float32)
    np.testing.assert_array_equal(didax.jit(stats.rankdata)(a), stats.rankdata(a))
    np.testing.assert_array_equal(didax.vmap(lambda r: stats.mode(r).mode)(a),
                                  stats.mode(a, axis=1).mode)


def test_gaussian_kde():
    rng = np.random.default_rng(0)
    data, w = rng.normal(size=(2, 20)), rng.uniform(size=20)
    points = rng.normal(size=(2, 5))
    with both_x64():
        ours, theirs = stats.gaussian_kde(data, weights=w), jstats.gaussian_kde(data, weights=w)
        ref = sps.gaussian_kde(data, weights=w)
        for name in ["evaluate", "pdf", "logpdf", "__call__"]:
            np.testing.assert_allclose(getattr(ours, name)(points), getattr(theirs, name)(points),
                                       rtol=1e-13)
        np.testing.assert_allclose(ours.logpdf(points), ref.logpdf(points), rtol=1e-13)
        for name in ["covariance", "inv_cov", "neff", "weights", "dataset"]:
            np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-13)
        args = (np.zeros(2), np.eye(2))
        np.testing.assert_allclose(ours.integrate_gaussian(*args),
                                   ref.integrate_gaussian(*args), rtol=1e-13)
        one = stats.gaussian_kde(data[0], bw_method="silverman")
        one_ref = sps.gaussian_kde(data[0], bw_method="silverman")
        np.testing.assert_allclose(one.integrate_box_1d(-0.5, 1.0),
                                   one_ref.integrate_box_1d(-0.5, 1.0), rtol=1e-13)
        np.testing.assert_allclose(one.integrate_kde(stats.gaussian_kde(data[1])),
                                   one_ref.integrate_kde(sps.gaussian_kde(data[1])), rtol=1e-13)
        for bw in [0.3, lambda kde: 0.3]:
            np.testing.assert_allclose(stats.gaussian_kde(data[0], bw_method=bw)(points[0]),
                                       sps.gaussian_kde(data[0], bw_method=0.3)(points[0]),
                                       rtol=1e-13)
        # resampling draws what JAX draws for the same key
        np.testing.assert_allclose(ours.resample(didax.random.key(0), (3,)),
                                   theirs.resample(jax.random.key(0), (3,)), rtol=1e-14)
        np.testing.assert_allclose(one.resample(didax.random.key(1), (4,)),
                                   jstats.gaussian_kde(data[0], bw_method="silverman")
                                   .resample(jax.random.key(1), (4,)), rtol=1e-14)
        jitted = didax.jit(lambda kde, p: kde.logpdf(p))(ours, points)
        np.testing.assert_allclose(jitted, ours.logpdf(points), rtol=1e-13)
        np.testing.assert_allclose(didax.grad(lambda p: ours.logpdf(p).sum())(points),
                                   jax.grad(lambda p: theirs.logpdf(p).sum())(points), rtol=1e-12)
    with pytest.raises(ValueError, match="points have dimension 3"):
        ours.evaluate(np.ones((3, 2)))
    with pytest.raises(ValueError, match="more than one element"):
        stats.gaussian_kde(np.array([[1.0]]))
    with pytest.raises(NotImplementedError, match="integrate_box_1d"):
        ours.integrate_box(np.zeros(2), np.ones(2))
    with pytest.raises(ValueError, match="only handles 1D"):
        ours.integrate_box_1d(0.0, 1.0)
