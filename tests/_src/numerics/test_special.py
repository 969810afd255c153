"""Tests for didax._src.numerics.special: the NumPy-only kernels are what is checked.

Literal reference values (computed with mpmath at 50 digits) make the file meaningful without
SciPy; random-range comparisons against scipy.special and mpmath run when those are installed.
"""
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from didax._src.numerics import special as sp

pytestmark = pytest.mark.filterwarnings("error")  # no NumPy RuntimeWarning may escape

UNARY = {
    "erf": sp.erf_numpy,
    "erfc": sp.erfc_numpy,
    "erf_inv": sp.erf_inv_numpy,
    "lgamma": sp.lgamma_numpy,
    "digamma": sp.digamma_numpy,
}
FLOATS = [np.float16, np.float32, np.float64]


def _rel_err(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    with np.errstate(all="ignore"):
        err = np.abs(got - want) / np.abs(want)
    err[got == want] = 0.0
    return err


def assert_close(got, want, rtol, atol=0.0, scale=None):
    """|got - want| <= rtol * scale + atol, scale defaulting to |want| (a relative check)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = np.abs(want) if scale is None else np.asarray(scale)
    with np.errstate(invalid="ignore"):  # inf - inf in the comparison itself
        bad = ~((got == want) | (np.isnan(got) & np.isnan(want))
                | (np.abs(got - want) <= rtol * scale + atol))
    if bad.any():
        i = np.flatnonzero(bad.reshape(-1))[:5]
        raise AssertionError(f"{bad.sum()} mismatches; got {got.reshape(-1)[i]} "
                             f"want {want.reshape(-1)[i]}, rel err max {_rel_err(got, want).max()}")


# ---------------------------------------------------------------------------------------------
# Literal references (mpmath, 50 digits).

ERF = [(1e-300, 1.1283791670955126e-300), (1e-10, 1.1283791670955126e-10),
       (0.1, 0.1124629160182849), (0.46875, 0.49261347321793797), (0.5, 0.5204998778130465),
       (1.0, 0.8427007929497149), (2.5, 0.999593047982555), (3.9, 0.9999999652077514),
       (4.2, 0.9999999971445058), (5.9, 0.9999999999999999), (-0.7, -0.6778011938374184)]
ERFC = [(1e-10, 0.999999999887162), (0.3, 0.6713732405408726), (0.46875, 0.507386526782062),
        (1.0, 0.15729920705028513), (3.0, 2.209049699858544e-05), (4.0, 1.541725790028002e-08),
        (5.5, 7.357847917974398e-15), (10.0, 2.088487583762545e-45),
        (20.0, 5.395865611607901e-176), (26.0, 5.663192408856143e-296),
        (26.5, 2.2109076642637343e-307), (-1.5, 1.9661051464753108), (-6.0, 2.0)]
ERF_INV = [(1e-300, 8.86226925452758e-301), (1e-08, 8.86226925452758e-09),
           (0.25, 0.2253120550121781), (0.49, 0.46586860023505733), (0.5, 0.4769362762044699),
           (0.75, 0.8134198475976185), (0.9, 1.1630871536766743), (0.999, 2.3267537655135246),
           (0.9999999999, 4.572824958544925), (0.9999999999999999, 5.8635847487551676),
           (-0.6, -0.5951160814499948)]
LGAMMA = [(1e-300, 690.7755278982137), (1e-08, 18.42068073818021), (0.5, 0.5723649429247001),
          (1.000000001, -5.772157118381039e-10), (0.999999999, 5.77215649399226e-10),
          (1.5, -0.12078223763524522), (1.9999999999, -4.2278437004755317e-11),
          (2.0000001, 4.227843666532498e-08), (2.5, 0.2846828704729192),
          (3.0, 0.6931471805599453), (7.3, 7.147892523022248), (9.99, 12.779315214350193),
          (10.0, 12.801827480081469), (25.5, 56.389167643719944),
          (1000000.0, 12815504.569147611), (1e300, 6.897755278982137e302),
          (-0.5, 1.2655121234846454), (-1e-08, 18.42068074972452), (-1.5, 0.860047015376481),
          (-2.5, -0.056243716497674054), (-3.3, -0.8243558050174264),
          (-10.1, -13.0209732710115), (-100.25, -363.4009232278215)]
DIGAMMA = [(1e-300, -9.999999999999999e299), (1e-06, -1000000.5772140201),
           (0.5, -1.9635100260214235), (1.0, -0.5772156649015329),
           (1.4616321449683622, -9.241265521729427e-17), (1.46163, -2.0756283887224574e-06),
           (1.5, 0.03648997397857652), (2.0, 0.42278433509846713), (9.9, 2.2411803166063815),
           (10.0, 2.251752589066721), (123.4, 4.8113737751162775),
           (1e10, 23.025850929890456), (1e300, 690.7755278982137), (-0.5, 0.03648997397857652),
           (-0.504, 0.0007420716047053968), (-0.5040830082644554, 7.289763902976895e-17),
           (-1.5, 0.7031566406452432), (-3.7, -0.8450768588704194),
           (-10.1, 12.030052248548309)]
POLYGAMMA = [(1, 1e-06, 1000000000001.645), (1, 0.5, 4.934802200544679),
             (1, 1.0, 1.6449340668482264), (1, 20.0, 0.05127082293520312),
             (1, 1e8, 1.000000005e-08), (2, 0.5, -16.82879664423432),
             (2, 3.3, -0.12375118526494272), (3, 1.0, 6.493939402266829),
             (3, 11.9, 0.001344783923695912), (4, 0.2, -75010.21249797264),
             (4, 1000.0, -6.0120099999930004e-12), (7, 2.5, 3.565236352523131),
             (25, 0.75, 2.7482284474491356e28), (170, 185.0, -2.48664587150013e-81),
             (1, -0.5, 8.934802200544679), (2, -1.5, -0.2362040516417274),
             (3, -2.25, 1558.4550231887144), (4, -7.3, 9738.758702660793)]


@pytest.mark.parametrize("name,table", [("erf", ERF), ("erfc", ERFC), ("erf_inv", ERF_INV),
                                        ("lgamma", LGAMMA), ("digamma", DIGAMMA)])
def test_literal_references(name, table):
    x = np.array([t[0] for t in table])
    want = np.array([t[1] for t in table])
    got = UNARY[name](x)
    assert_close(got, want, rtol=4e-15)
    # The same values one at a time as 0-d arrays (a different code path through the masks).
    for xi, wi in zip(x, want):
        assert_close(UNARY[name](np.array(xi)), wi, rtol=4e-15)


def test_literal_polygamma():
    n = np.array([t[0] for t in POLYGAMMA])
    x = np.array([t[1] for t in POLYGAMMA])
    want = np.array([t[2] for t in POLYGAMMA])
    assert_close(sp.polygamma_numpy(n, x), want, rtol=4e-15)
    for ni, xi, wi in POLYGAMMA:
        assert_close(sp.polygamma_numpy(ni, np.array(xi)), wi, rtol=4e-15)


def test_erfc_tail_is_not_one_minus_erf():
    assert_close(sp.erfc_numpy(np.array(10.0)), 2.088487583762545e-45, rtol=4e-15)
    assert sp.erfc_numpy(np.array(30.0)) == 0.0
    assert sp.erfc_numpy(np.array(-30.0)) == 2.0


# ---------------------------------------------------------------------------------------------
# Special values, dtypes and shapes.

INF, NAN = np.inf, np.nan


@pytest.mark.parametrize("name,x,want", [
    ("erf", [0.0, -0.0, INF, -INF], [0.0, -0.0, 1.0, -1.0]),
    ("erfc", [0.0, INF, -INF], [1.0, 0.0, 2.0]),
    ("erf_inv", [0.0, -0.0, 1.0, -1.0, 1.5, -1.0000001, INF], [0.0, -0.0, INF, -INF, NAN, NAN,
                                                               NAN]),
    ("lgamma", [1.0, 2.0, 0.0, -0.0, -1.0, -2.0, -1e20, INF, -INF],
     [0.0, 0.0, INF, INF, INF, INF, INF, INF, INF]),
    ("digamma", [0.0, -0.0, -1.0, -7.0, -1e20, INF, -INF],
     [-INF, INF, NAN, NAN, NAN, INF, NAN]),
])
def test_special_values(name, x, want):
    got = UNARY[name](np.array(x))
    np.testing.assert_array_equal(got, np.array(want))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.array(want)))


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_dtype_shape_nan(name, dtype):
    f = UNARY[name]
    x = np.array([[0.25, -0.75, NAN], [0.5, 0.125, 0.875]], dtype=dtype)
    y = f(x)
    assert isinstance(y, np.ndarray) and y.dtype == dtype and y.shape == x.shape
    assert np.isnan(y[0, 2]) and not np.isnan(y[1]).any()
    # Computed in float64 and rounded once.
    np.testing.assert_array_equal(y, f(x.astype(np.float64)).astype(dtype))
    z = f(np.array(0.5, dtype=dtype))
    assert isinstance(z, np.ndarray) and z.shape == () and z.dtype == dtype
    e = f(np.zeros((0, 3), dtype=dtype))
    assert e.shape == (0, 3) and e.dtype == dtype


@pytest.mark.parametrize("name", sorted(UNARY))
def test_int_input_and_python_scalars_give_float64(name):
    f = UNARY[name]
    assert f(np.array([0, 0], dtype=np.int32)).dtype == np.float64
    assert f(0.25).dtype == np.float64 and f(0.25).shape == ()
    with pytest.raises(TypeError):
        f(np.array([1j]))


def test_float32_extremes_do_not_warn():
    x = np.array([1e-45, 3e38, -3e38, 1.0, -1.0, 0.0], dtype=np.float32)
    for f in UNARY.values():
        assert f(x).dtype == np.float32
    assert sp.polygamma_numpy(3, x).dtype == np.float32


def test_polygamma_special_values_and_broadcasting():
    pg = sp.polygamma_numpy
    np.testing.assert_array_equal(pg(1, np.array([0.0, -0.0, -3.0])), [INF, INF, INF])
    np.testing.assert_array_equal(pg(2, np.array([0.0, -3.0])), [-INF, -INF])
    got = pg(np.array([1, 2]), np.array(INF))
    np.testing.assert_array_equal(got, [0.0, -0.0])
    assert np.signbit(got).tolist() == [False, True]
    assert np.isnan(pg(1, np.array([-INF, NAN]))).all()
    assert np.isnan(pg(np.array([-1.0, 1.5, NAN, INF, 1001]), np.array(2.0))).all()  # bad n
    # n = 0 is digamma, and n broadcasts against x.
    x = np.array([0.3, 2.5, -1.5, 40.0])
    np.testing.assert_array_equal(pg(0, x), sp.digamma_numpy(x))
    n = np.array([[0], [1], [3]])
    out = pg(n, x.astype(np.float32))
    assert out.shape == (3, 4) and out.dtype == np.float32
    for i, ni in enumerate(n[:, 0]):
        np.testing.assert_array_equal(out[i], pg(int(ni), x.astype(np.float32)))
    assert pg(2, np.array(1.5)).shape == ()
    assert pg(np.array([1, 2]), np.zeros((0, 1))).shape == (0, 2)
    # Huge orders: the result is assembled without spurious overflow or underflow.
    assert pg(200, np.array(1.0)) == -INF
    assert pg(1000, np.array(1e9)) == 0.0


def test_polygamma_recurrence_and_reflection_identities():
    # psi^(n)(x + 1) = psi^(n)(x) + (-1)^n n! / x^(n+1) over a wide range.
    x = np.geomspace(1e-3, 1e3, 200)
    for n in (1, 2, 5, 12):
        here = sp.polygamma_numpy(n, x)
        step = (-1.0) ** n * np.prod(np.arange(1.0, n + 1)) / x ** (n + 1)
        assert_close(sp.polygamma_numpy(n, x + 1.0), here + step, rtol=1e-14,
                     scale=np.abs(here) + np.abs(step))


def test_erf_inv_round_trip():
    x = np.concatenate([np.linspace(-0.999, 0.999, 1001), 1.0 - np.geomspace(1e-16, 1e-2, 100)])
    y = sp.erf_inv_numpy(x)
    assert_close(sp.erf_numpy(y), x, rtol=2e-15)
    t = 1.0 - x[-100:]
    assert_close(sp.erfc_numpy(y[-100:]), t, rtol=1e-14)  # d(erfc)/erfc = 2y^2 dy/y


def test_public_functions_and_flag(monkeypatch):
    x = np.array([-3.7, -0.5, 0.0, 0.3, 1.0, 2.5, 30.0, INF, -INF, NAN])
    names = ["erf", "erfc", "lgamma", "digamma"]
    for flag in (True, False):
        monkeypatch.setattr(sp, "USE_SCIPY", flag)
        for name in names:
            got, want = getattr(sp, name)(x), UNARY[name](x)
            assert got.dtype == want.dtype
            assert_close(got, want, rtol=1e-13, atol=1e-300)
        xi = np.array([-1.0, -0.3, 0.0, 0.9, 1.0, 2.0, NAN])
        assert_close(sp.erf_inv(xi), sp.erf_inv_numpy(xi), rtol=1e-13)
        assert sp.polygamma(2, np.float32(0.5)).dtype == np.float32
    monkeypatch.setattr(sp, "USE_SCIPY", False)
    for name in names:
        np.testing.assert_array_equal(getattr(sp, name)(x), UNARY[name](x))


def test_scipy_is_imported_at_its_first_use_not_with_didax():
    """Importing scipy.special took a third of `import didax`'s time: it waits for a special
    function that uses it."""
    pytest.importorskip("scipy")
    code = ("import sys, numpy as np, didax, didax.numpy as jnp; "
            "assert 'scipy' not in sys.modules, 'didax imported scipy'; "
            "from didax._src.numerics import special as sp; "
            "x = sp.erf(np.array([0.5])); "
            "assert 'scipy.special' in sys.modules, 'erf did not use scipy'; "
            "import scipy.special; assert x == scipy.special.erf(0.5)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=pathlib.Path(__file__).resolve().parents[3])
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------------------------------------
# Random ranges against scipy.special.  Its own errors are allowed for where it is the less
# accurate side (checked against mpmath below): lgamma next to its zeros at 1 and 2, erfc beyond
# 25, and the negative axis of digamma/polygamma, where scipy loses up to ~1e-12 relative next
# to poles and half-integers; there the comparison is scaled by the size of the reflection terms.

N = 100_000


@pytest.fixture(scope="module")
def ss():
    import scipy.special  # in the test extra: a missing install fails loudly

    return scipy.special


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def test_erf_erfc_vs_scipy(ss, rng):
    x = rng.uniform(-30, 30, N)
    assert_close(sp.erf_numpy(x), ss.erf(x), rtol=1e-13)
    x = np.concatenate([rng.uniform(-6, 25, N), rng.uniform(-0.5, 0.5, N)])
    assert_close(sp.erfc_numpy(x), ss.erfc(x), rtol=1e-13)


def test_erf_inv_vs_scipy(ss, rng):
    x = np.concatenate([rng.uniform(-1, 1, N), 1 - np.geomspace(1e-16, 1, 1000),
                        -np.geomspace(1e-300, 1e-3, 1000)])
    assert_close(sp.erf_inv_numpy(x), ss.erfinv(x), rtol=1e-13)


def test_lgamma_vs_scipy(ss, rng):
    x = np.concatenate([rng.uniform(0, 20, N), 10 ** rng.uniform(-6, 6, N),
                        rng.uniform(1e-6, 1e6, N)])
    assert_close(sp.lgamma_numpy(x), ss.gammaln(x), rtol=1e-13, atol=1e-15)
    x = rng.uniform(-20, 0, N)
    x = x[x != np.round(x)]
    want = ss.gammaln(x)
    # Reflection: cancellation near the zeros of lgamma on the negative axis is inherent.
    assert_close(sp.lgamma_numpy(x), want, rtol=1e-13, scale=np.abs(want) + ss.gammaln(1 - x))


def test_digamma_vs_scipy(ss, rng):
    x = np.concatenate([rng.uniform(0, 20, N), 10 ** rng.uniform(-6, 6, N)])
    assert_close(sp.digamma_numpy(x), ss.digamma(x), rtol=1e-13)
    x = rng.uniform(-20, 0, N)
    want = ss.digamma(x)
    scale = np.abs(want) + np.abs(np.pi / np.tan(np.pi * x)) + np.abs(ss.digamma(1 - x))
    assert_close(sp.digamma_numpy(x), want, rtol=1e-11, scale=scale)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_polygamma_vs_scipy(ss, rng, n):
    x = np.concatenate([10 ** rng.uniform(-6, 6, N), rng.uniform(0, 20, N)])
    assert_close(sp.polygamma_numpy(n, x), ss.polygamma(n, x), rtol=1e-13)
    x = rng.uniform(-20, 0, N)
    want = ss.polygamma(n, x)
    scale = np.abs(want) + np.abs(ss.polygamma(n, 1 - x))  # reflection: zeros for even n
    assert_close(sp.polygamma_numpy(n, x), want, rtol=1e-11, scale=scale)


def test_polygamma_array_order_vs_scipy(ss, rng):
    n = rng.integers(0, 9, 5000)
    x = 10 ** rng.uniform(-3, 3, 5000)
    assert_close(sp.polygamma_numpy(n, x), ss.polygamma(n, x), rtol=1e-13)


# ---------------------------------------------------------------------------------------------
# mpmath: the arbiter where scipy itself loses digits.

@pytest.fixture(scope="module")
def mp():
    import mpmath  # in the test extra
    mpmath.mp.dps = 40
    return mpmath


def _mp_map(fn, xs):
    return np.array([float(fn(x)) for x in xs])


def test_vs_mpmath_near_zeros_and_tails(mp, rng):
    # lgamma next to its zeros at 1 and 2 (scipy is only absolutely accurate there).
    x = np.concatenate([1 + rng.uniform(-1e-3, 1e-3, 100), 2 + rng.uniform(-1e-3, 1e-3, 100),
                        1 + np.geomspace(1e-15, 0.4, 30), 2 - np.geomspace(1e-15, 0.4, 30)])
    assert_close(sp.lgamma_numpy(x), _mp_map(mp.loggamma, x), rtol=1e-14)
    # digamma next to its zeros at 1.4616... and -0.5040...
    x = np.concatenate([1.4616321449683622 + rng.uniform(-0.3, 0.3, 100),
                        -0.5040830082644554 + rng.uniform(-0.12, 0.12, 100)])
    assert_close(sp.digamma_numpy(x), _mp_map(mp.digamma, x), rtol=1e-14)
    # erfc deep in the tail, erf_inv next to +-1.
    x = rng.uniform(20, 26.5, 100)
    assert_close(sp.erfc_numpy(x), _mp_map(mp.erfc, x), rtol=1e-14)
    x = 1 - np.geomspace(1.2e-16, 0.5, 100)
    assert_close(sp.erf_inv_numpy(x), _mp_map(mp.erfinv, x), rtol=1e-14)


def test_negative_axis_vs_mpmath(mp, rng):
    # Error scaled by the reflection terms: near the zeros on the negative axis their cancellation
    # is inherent, everywhere else this is a plain relative check.
    x = rng.uniform(-20, 0, 300)
    want = _mp_map(mp.digamma, x)
    scale = np.abs(want) + np.abs(np.pi / np.tan(np.pi * x))
    assert_close(sp.digamma_numpy(x), want, rtol=2e-15, scale=scale)
    want = _mp_map(lambda v: mp.loggamma(v).real, x)
    scale = np.abs(want) + np.abs(_mp_map(mp.loggamma, 1 - x))
    assert_close(sp.lgamma_numpy(x), want, rtol=2e-15, scale=scale)
    # Next to the poles and half-integers, where scipy loses digits.
    x = np.concatenate([-np.arange(1, 20) + rng.uniform(-1e-3, 1e-3, 19),
                        -np.arange(1, 20) - 0.5 + rng.uniform(-1e-4, 1e-4, 19)])
    assert_close(sp.digamma_numpy(x), _mp_map(mp.digamma, x), rtol=1e-14,
                 scale=np.abs(_mp_map(mp.digamma, x)) + np.abs(np.pi / np.tan(np.pi * x)))
    for n in (2, 4):
        with mp.workdps(60):
            want = np.array([float(mp.polygamma(n, v)) for v in x])
        scale = np.abs(want) + np.abs(sp.polygamma_numpy(n, 1 - x))
        assert_close(sp.polygamma_numpy(n, x), want, rtol=2e-15, scale=scale)


@pytest.mark.parametrize("name,lo,hi,ref", [
    ("erf", -6.0, 6.0, "erf"), ("erfc", -6.0, 26.0, "erfc"), ("erf_inv", -1.0, 1.0, "erfinv"),
    ("lgamma", 1e-6, 60.0, "loggamma"), ("digamma", 1e-6, 60.0, "digamma"),
])
def test_random_vs_mpmath(mp, rng, name, lo, hi, ref):
    x = rng.uniform(lo, hi, 300)
    assert_close(UNARY[name](x), _mp_map(getattr(mp, ref), x), rtol=1e-14)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 9, 30])
def test_polygamma_vs_mpmath(mp, rng, n):
    x = 10 ** rng.uniform(-4, 4, 150)
    want = np.array([float(mp.polygamma(n, v)) for v in x])
    assert_close(sp.polygamma_numpy(n, x), want, rtol=1e-14)
    x = -rng.uniform(0.05, 15, 50)
    x = x[np.abs(x - np.round(x)) > 0.05]
    with mp.workdps(80):  # mpmath's own sum cancels on the negative axis
        want = np.array([float(mp.polygamma(n, v)) for v in x])
    assert_close(sp.polygamma_numpy(n, x), want, rtol=1e-13,
                 scale=np.abs(want) + np.abs(sp.polygamma_numpy(n, 1 - x)))
