"""Relative errors of a float64 function against mpmath over a grid of points."""
import mpmath
import numpy as np

from didax._src.config import enable_x64

mpmath.mp.dps = 30


def relative_errors(fn, mp_fn, points):
    points = np.array(points, dtype=np.float64)
    want = np.array([float(mp_fn(*p)) for p in points])
    with enable_x64():
        got = np.asarray(fn(*points.T))
    assert got.dtype == np.float64
    return np.abs(got - want) / np.abs(want), points


def assert_accurate(fn, mp_fn, points, rtol):
    err, points = relative_errors(fn, mp_fn, points)
    worst = np.argmax(err)
    assert err[worst] <= rtol, (err[worst], points[worst])
