"""hyp1f1 in float64 against mpmath over grids of the parameters and x and at random points:
the accuracy its docstring claims; and the recurrences it takes where the series cancels,
under jit, vmap and differentiation."""
import itertools

import mpmath
import numpy as np
from jaxpr_testing import equation_count

import didax
import didax.scipy.special as special
from didax._src.config import enable_x64
from didax.test_util import check_grads
from tests._src.scipy.mpmath_accuracy import assert_accurate

# Parameters are dyadic, so that c - a - b and the like are what they look like.
PARAMS_1F1 = [0.25, 1.0, 2.5, 7.75, 19.875]
X_1F1 = [-200.0, -60.0, -35.0, -10.0, -1.25, -0.01, 0.0, 0.01, 0.875, 5.0, 17.0, 30.0, 60.0,
         120.0, 200.0]


def test_hyp1f1_float64_as_mpmath():
    # alpha = a (x >= 0) or b - a (x < 0) >= 0: no cancellation
    grid = [(a, b, x) for a, b, x in itertools.product(PARAMS_1F1, PARAMS_1F1, X_1F1)
            if x >= 0 or b >= a]
    grid += [(a, b, x) for a, b, x in itertools.product([-0.5, -1.5, -3.25], PARAMS_1F1, X_1F1)]
    grid += [(a, b, x) for a, b, x in itertools.product(PARAMS_1F1, [-0.5, -2.5, -6.75], X_1F1)
             if x >= 0]
    assert_accurate(special.hyp1f1, mpmath.hyp1f1, grid, 1e-13)


def test_hyp1f1_float64_where_the_sum_cancels():
    """alpha a negative non-integer of larger magnitude, and a Laguerre polynomial (a a
    non-positive integer) at large x: the sums in double-double."""
    larger_alpha = [(a, b, x) for a, b, x in itertools.product(PARAMS_1F1, PARAMS_1F1, X_1F1)
                    if x < 0 and b < a]
    larger_alpha += list(itertools.product([-19.875, -7.75], [0.25, 2.5], X_1F1[8:]))
    assert_accurate(special.hyp1f1, mpmath.hyp1f1, larger_alpha, 1e-13)
    laguerre = [(a, b, x) for a, b, x in itertools.product(
        [-2.0, -5.0, -10.0, -20.0], PARAMS_1F1 + [-0.5, -30.5], X_1F1) if b > a]
    assert_accurate(special.hyp1f1, mpmath.hyp1f1, laguerre, 1e-13)


def test_hyp1f1_float64_larger_parameters():
    params = [-31.25, -0.5, 0.25, 3.5, 31.25]
    grid = [(a, b, x) for a, b, x in itertools.product(params, params, [-40.0, -8.0, 8.0, 40.0])
            if 30 < max(abs(a), abs(b)) and not (b < 0 and x > 0 and a < b)]
    assert_accurate(special.hyp1f1, mpmath.hyp1f1, grid, 1e-13)


def _assert_within_conditioning(points, rtol=1e-13):
    """|error| <= rtol |1F1| + eps (|a d/da| + |b d/db| + |x d/dx|) |1F1|: relative, except
    near 1F1's zeros, where the error allowed is what rounding the arguments by an ulp
    changes (the derivatives in the parameters by central differences in mpmath)."""
    points = np.array(points, dtype=np.float64)
    h = mpmath.mpf("1e-15")
    want, scale = [], []
    with mpmath.workdps(40):
        for a, b, x in points:
            a, b, x = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(x)
            value = mpmath.hyp1f1(a, b, x)
            along_a = (mpmath.hyp1f1(a + a * h, b, x) - mpmath.hyp1f1(a - a * h, b, x)) / (2 * h)
            along_b = (mpmath.hyp1f1(a, b + b * h, x) - mpmath.hyp1f1(a, b - b * h, x)) / (2 * h)
            along_x = x * a / b * mpmath.hyp1f1(a + 1, b + 1, x)
            want.append(float(value))
            scale.append(float(abs(along_a) + abs(along_b) + abs(along_x)))
    with enable_x64():
        got = np.asarray(special.hyp1f1(*points.T))
    error = np.abs(got - np.array(want))
    allowed = rtol * np.abs(want) + np.finfo(np.float64).eps * np.array(scale)
    worst = np.argmax(error / allowed)
    assert error[worst] <= allowed[worst], (error[worst] / abs(want[worst]), points[worst])


def test_hyp1f1_float64_alpha_far_below_zero():
    """alpha = a (x > 0) or b - a (x < 0) down to -200 at t up to 200, where the series'
    terms cancel by up to 1e100: the shifted point and the recurrences back."""
    grid = list(itertools.product([-99.75, -60.5, -31.25], [0.25, 3.5, 40.75, 99.5],
                                  [20.0, 60.0, 150.0, 200.0]))
    grid += [(a, b, x) for a, b, x in itertools.product(
        [30.5, 70.25, 99.75], [-60.75, -20.5, 3.5, 40.75], [-20.0, -60.0, -150.0, -200.0])
        if b - a <= -20 and b >= x]
    grid += list(itertools.product([-40.0, -100.0], [0.5, 20.75, -10.25], [40.0, 150.0, 200.0]))
    _assert_within_conditioning(grid)


def test_hyp1f1_float64_negative_b():
    """b < 0, x of either sign (b < 0 < x with a < b included), above b = -|x| and below
    it (where the series' terms peak near k = -b and need up to ~2|x| terms more)."""
    grid = list(itertools.product(
        [-50.5, 0.25, 20.75, 90.5], [-95.5, -70.5, -40.25, -10.75],
        [-200.0, -120.0, -75.0, -45.0, -30.0, -5.0, 5.0, 30.0, 45.0, 75.0, 120.0, 200.0]))
    _assert_within_conditioning(grid)


def test_hyp1f1_float64_large_positive_parameters():
    """Positive terms that the series' 200 do not exhaust, and the asymptotic expansion's
    neighbourhood."""
    grid = list(itertools.product([50.5, 99.75], [20.25, 99.5], [-200.0, -150.0, 150.0, 200.0]))
    _assert_within_conditioning(grid)


def _series_at_high_precision(a, b, x):
    """sum_k (a)_k / (b)_k x^k / k! summed until past k = -b and below the working
    precision, at doubling precision until two sums agree."""
    previous = None
    for dps in (60, 120, 240, 480, 960):
        with mpmath.workdps(dps):
            a_, b_, x_ = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(x)
            term = total = mpmath.mpf(1)
            k = 0
            while term != 0 and not (k > -b and abs((a_ + k) * x_) < abs((b_ + k) * (k + 1))
                                     and abs(term) < mpmath.mp.eps * abs(total)):
                term *= (a_ + k) * x_ / ((b_ + k) * (k + 1))
                total += term
                k += 1
            if previous is not None and abs(total - previous) <= 1e-20 * abs(total):
                return total
            previous = total
    raise AssertionError(f"no agreement on the series at {(a, b, x)}")


def _reference(a, b, x):
    """mpmath's 1F1, except below b = -|x|, where mpmath's sum can stop before the terms
    rise again past k = -b (at (-43.2.., -185.6.., 90.5..) it is off by a factor 100, at
    (-62.3.., -379.1.., 184.9..) by 1e30 and in sign): there the series itself."""
    if b < -abs(x):
        return _series_at_high_precision(a, b, x)
    return mpmath.hyp1f1(a, b, x)


def _assert_relative_where_representable(points, rtol=1e-13):
    """Relative errors at most rtol, leaving out the points where the exact value is 0 or,
    as the reference says, beyond float64's range (overflowing, or below its smallest
    normal number): there relative accuracy is not float64's to give."""
    want = [_reference(*p) for p in points]
    kept = [i for i, v in enumerate(want)
            if v != 0 and np.finfo(np.float64).tiny <= abs(v) <= np.finfo(np.float64).max]
    points = np.array(points, dtype=np.float64)[kept]
    want = np.array([float(want[i]) for i in kept])
    with enable_x64():
        got = np.asarray(special.hyp1f1(*points.T))
    error = np.abs(got - want) / np.abs(want)
    worst = np.nanargmax(np.where(np.isnan(error), np.inf, error))
    assert error[worst] <= rtol, (error[worst], tuple(points[worst]))


def _random_points(seed, n, a, b, x):
    rng = np.random.default_rng(seed)
    return np.stack([rng.uniform(-a, a, n), rng.uniform(-b, b, n), rng.uniform(-x, x, n)], 1)


def test_hyp1f1_float64_random_points():
    """1e-13 relative everywhere over |a|, |b| <= 100, |x| <= 200, near 1F1's zeros (in
    alpha, which the recurrence in alpha passes; the recurrence in b amplifies, for
    alpha < 0, what float64 leaves of them) and its poles in b too, where the recurrences
    in float64 lost up to 4e-11 (some 5% of these points above 1e-13)."""
    _assert_relative_where_representable(_random_points(1, 300, 100, 100, 200))


def test_hyp1f1_float64_near_zeros_and_poles():
    """Points the recurrences in float64 got wrong: b1 = b + m rounded, which costs most
    near a pole in b (the first five); 1F1 near a zero of the recurrence in alpha, or the
    recurrence in b amplifying its rounding (alpha near -12 in the eleventh: by 2e4)."""
    _assert_relative_where_representable([
        (-18.05760291559085, -2.9996002519813345, -193.57774882942385),
        (-13.307058555629368, -1.991038105235063, -172.22333090190352),
        (-8.079130594929623, -11.969998748704526, 128.36001583020249),
        (25.529630487086223, -35.01051623412626, -105.3904947630774),
        (62.280846334539376, -36.73765810367438, -49.60864171310328),
        (-50.13178479057725, -13.6711602812682, 173.56433803890963),
        (-0.9738555503699473, 17.704132494715807, 145.76929951094354),
        (74.51321642014906, 7.881523944280275, -5.957592757076441),
        (16.02276161932012, 10.050844866100235, -148.720687473963),
        (-96.42171582060494, 62.63423081401194, 43.14851619202486),
        (1.4660079430661455, -10.534026411644291, -199.7491008327773),
        (-72.93815119912215, 97.74548268207775, 30.077851928929846)])


def test_hyp1f1_float64_polynomials_below_b_zero():
    """a a non-positive integer above b < 0, x < 0: the polynomial's terms alternate (b's
    Pochhammer symbol does), cancelling by up to 1e20; Kummer's transformation avoids it."""
    _assert_relative_where_representable([
        (-81.0, -94.24979300798245, -39.68630557585578), (-50.0, -99.5, -50.0),
        (-66.0, -96.93691258225353, -68.8559586028573)])


def test_hyp1f1_float64_wider_range():
    """|a|, |b| <= 200, |x| <= 500 at random, and beyond: t up to 1000 (1F1(alpha; b; t)
    itself far beyond float64's range after Kummer's transformation), alpha going up far
    above b1 = b, b < -|x| with |b| to ~400 (the series summed on; or shifted, where it
    cancels)."""
    _assert_relative_where_representable(_random_points(2, 100, 200, 200, 500))
    _assert_relative_where_representable([
        (1.0850155359617588, 460.75510162704074, -146.41943486077616),
        (171.83433033144917, -194.69354971079804, -190.2959633752448),
        (-62.34564054235523, -379.17260939333465, 184.92365881550427),
        (-43.20354588250197, -185.68469163760687, 90.5860384301302),
        (-149.61170128471917, 141.63026701928544, 844.6594832729972),
        (111.7587566072774, -66.19046694934542, -825.6882573142086),
        (-134.53114019435628, -144.93792455102982, -834.484694400136)])


def test_hyp1f1_float32_where_e_to_the_x_underflows():
    """float32 after Kummer's transformation where e^x underflows but e^x 1F1(b - a; b; -x)
    does not (formerly 0)."""
    points = np.array([(46.54682159423828, 80.95793914794922, -105.20115661621094),
                       (22.113800048828125, 13.453621864318848, -153.7700958251953),
                       (37.02440643310547, 45.066650390625, -104.95219421386719)],
                      dtype=np.float32)
    got = np.asarray(special.hyp1f1(*points.T))
    assert got.dtype == np.float32
    want = [float(mpmath.hyp1f1(*map(float, p))) for p in points]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_hyp1f1_through_the_recurrences_jits_vmaps_and_differentiates():
    # (the last three: the series summed on, at a shifted point going up and below b = -|x|;
    # the recurrences' exponents with Kummer's factor)
    points = np.array([(-60.5, 3.5, 100.0), (40.5, -20.25, 30.0), (20.5, 50.25, -150.0),
                       (50.5, 99.5, 150.0), (1.0850155359617588, 460.75510162704074, -146.4),
                       (-43.20354588250197, -185.68469163760687, 90.5860384301302),
                       (-134.53114019435628, -144.93792455102982, -834.484694400136)])
    with enable_x64():
        eager = np.asarray(special.hyp1f1(*points.T))  # (its loops trimmed to the longest)
        np.testing.assert_array_equal(didax.jit(special.hyp1f1)(*points.T), eager)
        one_by_one = [float(special.hyp1f1(*p)) for p in points]
        np.testing.assert_allclose(didax.vmap(special.hyp1f1)(*points.T), one_by_one,
                                   rtol=1e-15)
        a, b, x = points[1]  # (b's recurrence and a's upward: the derivatives through both)
        check_grads(lambda a, b: special.hyp1f1(a, b, x), (a, b), order=1,
                    modes=("fwd", "rev"), rtol=1e-6)


def test_hyp1f1_traced_sums_its_series_in_a_loop():
    """Traced (jit, vmap, grad), the series' 200 terms are one loop body, not 200 copies: the
    jaxpr, sub-jaxprs included, has a fifth of the equations it had unrolled (32,499), and
    jit gives eager evaluation's bits (eagerly, the terms are unrolled)."""
    args = (np.float32(1.5), np.float32(2.0), np.float32(0.5))
    assert equation_count(didax.make_jaxpr(special.hyp1f1)(*args)) < 8000
    rng = np.random.default_rng(1)
    for dtype, x64 in ((np.float32, False), (np.float64, True)):
        with enable_x64(x64):
            a, b, x = (rng.uniform(lo, hi, 64).astype(dtype)
                       for lo, hi in ((-20, 20), (-10, 30), (-60, 60)))
            eager = np.asarray(special.hyp1f1(a, b, x))
            assert np.isfinite(eager).all()
            assert np.asarray(didax.jit(special.hyp1f1)(a, b, x)).tobytes() == eager.tobytes()
            assert np.asarray(didax.vmap(special.hyp1f1)(a, b, x)).tobytes() == eager.tobytes()
