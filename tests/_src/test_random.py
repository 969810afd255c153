"""didax.random's samplers: the numbers jax.random gives for the same keys (recorded from
JAX 0.10.2: bits, uniforms and integers exactly, floats through log/erf_inv/tan to float32
rounding), distribution statistics, and keys under vmap, jit and grad."""
import math

import jax
import numpy as np
import pytest

import didax
import didax.numpy as jnp
import didax.random as R
from didax._src.config import enable_x64
from didax._src.primitives import prng
from didax.test_util import check_grads

K0 = R.PRNGKey(0)
K1 = R.PRNGKey(1234)
P5 = np.array([0.1, 0.2, 0.3, 0.2, 0.2])
LOGITS = np.array([[0.1, 2.0, -1.0], [1.0, 1.0, 1.0]])
A34 = np.arange(12).reshape(3, 4)
P3 = np.array([0.2, 0.3, 0.5])
V3 = np.array([0.0, 1.0, 2.0])
LOGITS5 = np.array([0.1, 2.0, -1.0, 0.5, 0.2])
LO3, HI3 = np.array([-3.0, 0.0, 1.0]), np.array([3.0, 0.5, 5.0])
MEAN2, COV2 = np.array([1.0, -1.0]), np.array([[2.0, 0.5], [0.5, 1.0]])

EXACT_CASES = [
    ("uniform", lambda: R.uniform(K0, (6,)),
     np.array([0.9476670026779175, 0.9785798788070679, 0.33229148387908936,
               0.46866846084594727, 0.569888710975647, 0.16550302505493164], np.float32)),
    ("uniform_2d", lambda: R.uniform(K1, (2, 3)),
     np.array([[0.8650084733963013, 0.8059483766555786, 0.36742448806762695],
               [0.847847580909729, 0.14150536060333252, 0.6290631294250488]], np.float32)),
    ("uniform_scalar", lambda: R.uniform(K1),
     np.array(0.8650084733963013, np.float32)),
    ("uniform_minval_vector", lambda: R.uniform(K1, (2, 3), minval=V3, maxval=5.0),
     np.array([[4.325042247772217, 4.2237935066223145, 3.102273464202881],
               [4.2392377853393555, 1.56602144241333, 3.8871893882751465]], np.float32)),
    ("uniform_float16", lambda: R.uniform(K1, (6,), dtype=np.float16),
     np.array([0.2001953125, 0.6396484375, 0.533203125, 0.544921875, 0.6953125,
               0.2861328125], np.float16)),
    ("uniform_typed_key", lambda: R.uniform(R.key(7), (4,)),
     np.array([0.6740899085998535, 0.9746168851852417, 0.3028435707092285,
               0.4439585208892822], np.float32)),
    ("randint", lambda: R.randint(K0, (10,), 0, 10),
     np.array([9, 0, 2, 3, 1, 7, 2, 3, 3, 3], np.int32)),
    ("randint_wide", lambda: R.randint(K1, (6,), -7, 1000003),
     np.array([87272, 221902, 103040, 584921, 582125, 252829], np.int32)),
    ("randint_uint8_full", lambda: R.randint(K1, (8,), 0, 256, np.uint8),
     np.array([53, 33, 93, 32, 28, 230, 166, 222], np.uint8)),
    ("randint_int8", lambda: R.randint(K1, (8,), -128, 128, np.int8),
     np.array([-75, -95, -35, -96, -100, 102, 38, 94], np.int8)),
    ("randint_int16", lambda: R.randint(K1, (6,), -1000, 1000, np.int16),
     np.array([717, 777, 901, -88, -444, 702], np.int16)),
    ("randint_vector_bounds", lambda: R.randint(K1, (2, 4), np.array([0, 5, 10, 20]), 30),
     np.array([[17, 7, 11, 22], [6, 7, 28, 22]], np.int32)),
    ("randint_empty_range", lambda: R.randint(K1, (4,), 5, 5),
     np.array([5, 5, 5, 5], np.int32)),
    ("randint_int32_range", lambda: R.randint(K1, (6,), -2**31, 2**31 - 1),
     np.array([1859643701, -1845258719, -2068379811, -1858895840, -350883556,
               873799398], np.int32)),
    ("randint_float_bounds", lambda: R.randint(K1, (6,), 0, 10.5),
     np.array([7, 7, 1, 2, 6, 2], np.int32)),
    ("permutation_int", lambda: R.permutation(K0, 12),
     np.array([0, 1, 8, 5, 6, 4, 3, 10, 2, 7, 11, 9], np.int32)),
    ("permutation_axis1", lambda: R.permutation(K1, A34, axis=1),
     np.array([[2, 3, 1, 0], [6, 7, 5, 4], [10, 11, 9, 8]], np.int32)),
    ("permutation_independent", lambda: R.permutation(K1, A34, axis=1, independent=True),
     np.array([[2, 3, 1, 0], [7, 6, 4, 5], [10, 11, 9, 8]], np.int32)),
    ("permutation_two_rounds_head", lambda: R.permutation(K1, 3000)[:8],
     np.array([1290, 512, 933, 1314, 273, 2719, 172, 2784], np.int32)),
    ("choice", lambda: R.choice(K0, 10, (5,)),
     np.array([9, 0, 2, 3, 1], np.int32)),
    ("choice_without_replacement", lambda: R.choice(K0, 10, (5,), replace=False),
     np.array([0, 1, 8, 5, 6], np.int32)),
    ("choice_p", lambda: R.choice(K1, np.arange(5) * 10, (7,), p=P5),
     np.array([10, 10, 30, 10, 40, 20, 10], np.int32)),
    ("choice_p_without_replacement", lambda: R.choice(K1, 5, (3,), replace=False, p=P5),
     np.array([3, 1, 0], np.int32)),
    ("choice_axis1", lambda: R.choice(K1, A34, (2,), axis=1),
     np.array([[1, 1], [5, 5], [9, 9]], np.int32)),
    ("bernoulli", lambda: R.bernoulli(K0, 0.3, (10,)),
     np.array([False, False, False, False, False, True, False, False, False, True], np.bool)),
    ("bernoulli_high", lambda: R.bernoulli(K1, np.array([0.1, 0.5, 0.9]), (2, 3), mode="high"),
     np.array([[False, False, True], [False, True, True]], np.bool)),
    ("categorical", lambda: R.categorical(K0, LOGITS),
     np.array([1, 1], np.int32)),
    ("categorical_shape", lambda: R.categorical(K1, np.array([0.1, 2.0, -1.0, 0.5]), shape=(6,)),
     np.array([1, 1, 1, 1, 1, 0], np.int32)),
    ("categorical_axis0", lambda: R.categorical(K1, LOGITS, axis=0, shape=(2, 3)),
     np.array([[1, 0, 1], [1, 1, 1]], np.int32)),
    ("categorical_without_replacement",
     lambda: R.categorical(K1, LOGITS5, shape=(3,), replace=False),
     np.array([1, 3, 0], np.int32)),
    ("rademacher", lambda: R.rademacher(K0, (8,)),
     np.array([-1, -1, 1, 1, -1, 1, 1, -1], np.int32)),
    ("geometric", lambda: R.geometric(K0, 0.3, (8,)),
     np.array([1, 1, 4, 3, 2, 6, 4, 2], np.int32)),
    ("triangular", lambda: R.triangular(K0, 0.0, 0.3, 1.0, (5,)),
     np.array([0.8086022734642029, 0.8775496482849121, 0.31633639335632324,
               0.3901376724243164, 0.4512943625450134], np.float32)),
    ("poisson", lambda: R.poisson(K0, 3.5, (8,)),
     np.array([0, 0, 5, 4, 2, 2, 3, 6], np.int32)),
    ("poisson_large_rate", lambda: R.poisson(K1, 50.0, (6,)),
     np.array([47, 47, 45, 44, 50, 56], np.int32)),
    ("poisson_mixed_rates", lambda: R.poisson(K1, np.array([0.0, 1.0, 9.9, 10.0, 1000.0])),
     np.array([0, 0, 9, 4, 994], np.int32)),
    ("binomial", lambda: R.binomial(K0, 10, 0.3, (8,)),
     np.array([2.0, 2.0, 1.0, 2.0, 1.0, 4.0, 6.0, 3.0], np.float32)),
    ("binomial_btrs", lambda: R.binomial(K1, 200, 0.4, (6,)),
     np.array([78.0, 77.0, 75.0, 67.0, 80.0, 86.0], np.float32)),
    ("binomial_high_p", lambda: R.binomial(K1, 100, 0.9, (6,)),
     np.array([91.0, 91.0, 92.0, 95.0, 90.0, 88.0], np.float32)),
    ("binomial_special", lambda: R.binomial(K1, np.array([5.0, -1.0, np.inf, 30.5]), 0.6),
     np.array([4.0, np.nan, np.inf, 23.0], np.float32)),
    ("multinomial", lambda: R.multinomial(K1, 100.0, np.array([0.2, 0.3, 0.5])),
     np.array([19.0, 34.0, 47.0], np.float32)),
    ("multinomial_shape", lambda: R.multinomial(K1, np.array([10.0, 50.0]), P3, shape=(2, 2, 3)),
     np.array([[[3.0, 1.0, 6.0], [12.0, 10.0, 28.0]],
               [[4.0, 3.0, 3.0], [7.0, 16.0, 27.0]]], np.float32)),
]

CLOSE_CASES = [
    ("cauchy", lambda: R.cauchy(K0, (5,)),
     np.array([6.027494430541992, 14.837895393371582, -0.5817222595214844,
               -0.09874986857175827, 0.22315962612628937], np.float32)),
    ("weibull_min", lambda: R.weibull_min(K0, 2.0, 1.5, (5,)),
     np.array([4.113933563232422, 4.9072957038879395, 1.0928194522857666,
               1.4734783172607422, 1.7857714891433716], np.float32)),
    ("normal", lambda: R.normal(K0, (8,)),
     np.array([1.622642159461975, 2.0252647399902344, -0.4335944354534149,
               -0.07861734926700592, 0.17609089612960815, -0.9720892310142517,
               -0.49529874324798584, 0.49437859654426575], np.float32)),
    ("normal_2d", lambda: R.normal(K1, (2, 3)),
     np.array([[1.1031016111373901, 0.8630622625350952, -0.3386823832988739],
               [1.0272457599639893, -1.0735803842544556, 0.32937315106391907]], np.float32)),
    ("normal_complex", lambda: R.normal(K1, (4,), dtype=np.complex64),
     np.array([(-0.6734472513198853+1.0595108270645142j),
               (0.24481314420700073-1.041611671447754j),
               (0.25997868180274963-1.4761439561843872j),
               (-1.3292039632797241-1.058563470840454j)], np.complex64).reshape((4,))),
    ("truncated_normal", lambda: R.truncated_normal(K0, -1.0, 2.0, (6,)),
     np.array([1.5094677209854126, 1.747393012046814, -0.1746756136417389,
               0.10624171793460846, 0.31906944513320923, -0.541344404220581], np.float32)),
    ("truncated_normal_bounds", lambda: R.truncated_normal(K1, LO3, HI3),
     np.array([1.098573923110962, 0.3969799280166626, 1.2794944047927856], np.float32)),
    ("exponential", lambda: R.exponential(K0, (6,)),
     np.array([2.9501280784606934, 3.8434245586395264, 0.4039035439491272,
               0.6323691010475159, 0.843711256980896, 0.1809261590242386], np.float32)),
    ("laplace", lambda: R.laplace(K0, (6,)),
     np.array([-2.256981611251831, -3.1502788066864014, 0.4085954427719116,
               0.06471242010593414, -0.15056417882442474, 1.1056184768676758], np.float32)),
    ("logistic", lambda: R.logistic(K0, (6,)),
     np.array([2.896375894546509, 3.8217716217041016, -0.6978392004966736,
               -0.12549054622650146, 0.28139710426330566, -1.6178395748138428], np.float32)),
    ("pareto", lambda: R.pareto(K0, 3.0, (6,)),
     np.array([2.673466682434082, 3.600747585296631, 1.1441185474395752,
               1.2346527576446533, 1.3247675895690918, 1.0621644258499146], np.float32)),
    ("maxwell", lambda: R.maxwell(K0, (6,)),
     np.array([2.631096601486206, 0.9910328388214111, 0.9649305939674377,
               3.078275203704834, 1.3358209133148193, 1.8929359912872314], np.float32)),
    ("double_sided_maxwell", lambda: R.double_sided_maxwell(K0, 1.0, 2.0, (6,)),
     np.array([4.091442108154297, 4.148255348205566, -3.1650609970092773,
               5.584834575653076, 5.210042476654053, 2.825056552886963], np.float32)),
    ("rayleigh", lambda: R.rayleigh(K0, 2.0, (6,)),
     np.array([0.6557566523551941, 0.41620054841041565, 2.9688284397125244,
               2.4622910022735596, 2.120969772338867, 3.7934319972991943], np.float32)),
    ("wald", lambda: R.wald(K0, 1.5, (6,)),
     np.array([0.4688202738761902, 0.5198179483413696, 0.6178595423698425,
               0.39529651403427124, 0.5398229956626892, 0.7401279211044312], np.float32)),
    ("lognormal", lambda: R.lognormal(K0, 0.5, (6,)),
     np.array([2.2508795261383057, 2.752837896347046, 0.8050932288169861,
               0.961453914642334, 1.0920377969741821, 0.6150543689727783], np.float32)),
    ("gumbel", lambda: R.gumbel(K0, (6,)),
     np.array([2.923372507095337, 3.83261775970459, -0.09689324349164963,
               0.2772570848464966, 0.5756945610046387, -0.5871007442474365], np.float32)),
    ("gumbel_high", lambda: R.gumbel(K0, (6,), mode="high"),
     np.array([-1.0818486213684082, -1.3463637828826904, 0.9065788388252258,
               0.4582820236682892, 0.16994495689868927, 1.7096662521362305], np.float32)),
    ("gamma", lambda: R.gamma(K0, 3.0, (6,)),
     np.array([2.5691018104553223, 2.7842020988464355, 1.9683666229248047,
               5.406138896942139, 4.229872703552246, 3.0567424297332764], np.float32)),
    ("gamma_small_shape", lambda: R.gamma(K1, 0.3, (6,)),
     np.array([0.3261892795562744, 0.01943516917526722, 0.19210094213485718,
               0.07383118569850922, 0.2897845506668091, 0.4110707640647888], np.float32)),
    ("gamma_shapes", lambda: R.gamma(K1, np.array([0.5, 1.0, 2.5, 10.0])),
     np.array([0.7475204467773438, 2.2035915851593018, 1.2173305749893188,
               6.689596176147461], np.float32)),
    ("loggamma", lambda: R.loggamma(K1, 0.05, (6,)),
     np.array([-10.002411842346191, -28.7546329498291, -5.652724742889404,
               -9.241701126098633, -3.3061561584472656, -3.561718463897705], np.float32)),
    ("beta", lambda: R.beta(K0, 2.0, 5.0, (6,)),
     np.array([0.16956758499145508, 0.2740837335586548, 0.49690526723861694,
               0.37941694259643555, 0.40314245223999023, 0.2270766943693161], np.float32)),
    ("dirichlet", lambda: R.dirichlet(K0, np.array([1.0, 2.0, 0.5]), (2,)),
     np.array([[0.25499311089515686, 0.7255988717079163, 0.019408028572797775],
               [0.4475518763065338, 0.5524455904960632, 2.5084759727178607e-06]], np.float32)),
    ("chisquare", lambda: R.chisquare(K0, 4.0, (6,)),
     np.array([3.1795756816864014, 3.5198826789855957, 2.25801420211792,
               7.948668003082275, 5.909200191497803, 3.9576170444488525], np.float32)),
    ("t", lambda: R.t(K0, 5.0, (6,)),
     np.array([0.758949875831604, -2.055917739868164, -1.281833529472351,
               -1.5719773769378662, -0.555972695350647, 0.6316303610801697], np.float32)),
    ("f", lambda: R.f(K0, 3.0, 7.0, (6,)),
     np.array([2.447495937347412, 0.15927961468696594, 0.16253185272216797,
               0.3855980634689331, 1.1390742063522339, 0.9916428327560425], np.float32)),
    ("generalized_normal", lambda: R.generalized_normal(K0, 1.5, (6,)),
     np.array([1.0603917837142944, 0.08920828253030777, -1.375133752822876,
               0.5591428875923157, 0.6801239252090454, 0.9903016090393066], np.float32)),
    ("ball", lambda: R.ball(K0, 3, 2, (2,)),
     np.array([[0.9171597361564636, 0.3927421569824219, 0.01165350154042244],
               [-0.8613650798797607, 0.3168482482433319, -0.06285543739795685]], np.float32)),
    ("uniform_minval_maxval", lambda: R.uniform(K1, (6,), minval=-3.3, maxval=7.1),
     np.array([5.696087837219238, 5.081862926483154, 0.5212146043777466,
               5.517614364624023, -1.8283442258834839, 3.2422564029693604], np.float32)),
]


def _ids(cases):
    return [c[0] for c in cases]


@pytest.mark.parametrize("name, draw, expected", EXACT_CASES, ids=_ids(EXACT_CASES))
def test_equals_jax_exactly(name, draw, expected):
    out = draw()
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


# Floats that go through log, erf_inv, tan or a fused multiply-add in XLA: XLA's CPU log1p and
# its fused multiply-adds differ from NumPy's operations in the last bit or two.
@pytest.mark.parametrize("name, draw, expected", CLOSE_CASES, ids=_ids(CLOSE_CASES))
def test_equals_jax_to_rounding(name, draw, expected):
    out = draw()
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)


def test_uniform_with_bounds_is_within_one_ulp_of_jax():
    # XLA fuses f * (maxval - minval) + minval into one rounding; didax rounds the product
    # (below maxval - minval) first, so results can differ by one ulp of the span.
    out = R.uniform(K1, (6,), minval=-3.3, maxval=7.1)
    expected = dict((c[0], c[2]) for c in CLOSE_CASES)["uniform_minval_maxval"]
    assert np.max(np.abs(out - expected)) <= np.spacing(np.float32(7.1 + 3.3))
    np.testing.assert_array_equal(R.uniform(K1, (6,)) * np.float32(10.4) + np.float32(-3.3),
                                  out)


# --------------------------------------------------------------------------------------
# x64


def test_x64_draws_are_float64_and_equal_jax():
    with enable_x64(True):
        key = R.PRNGKey(2 ** 40 + 7)
        u = R.uniform(key, (4,))
        assert u.dtype == np.float64
        np.testing.assert_array_equal(u, [0.6462599858701685, 0.24188701458146222,
                                          0.22833321442133414, 0.43563227124696513])
        z = R.normal(key, (4,))
        assert z.dtype == np.float64
        np.testing.assert_allclose(z, [0.3752426302724837, -0.7002454547989816,
                                       -0.7443472400565624, -0.1620524602378798], rtol=1e-13)
        i = R.randint(key, (4,), -5, 2 ** 40)
        assert i.dtype == np.int64
        np.testing.assert_array_equal(i, [151669814213, 738616119227, 829963629725,
                                          95346742655])
        u32 = R.uniform(key, (4,), dtype=np.float32)
        assert u32.dtype == np.float32
        np.testing.assert_array_equal(u32, np.array([0.640317440032959, 0.788016676902771,
                                                     0.7414283752441406, 0.47272002696990967],
                                                    np.float32))


# --------------------------------------------------------------------------------------
# Distributions (fixed keys: each check is deterministic)


def _ks_statistic(samples, cdf):
    x = np.sort(np.asarray(samples, np.float64))
    n = len(x)
    f = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


_erf = np.vectorize(math.erf)
N = 20_000
KS_BOUND = 1.63 / math.sqrt(N)  # the 1% critical value

CONTINUOUS = [
    ("uniform", lambda k: R.uniform(k, (N,)), lambda x: x),
    ("normal", lambda k: R.normal(k, (N,)), lambda x: 0.5 * (1 + _erf(x / math.sqrt(2)))),
    ("exponential", lambda k: R.exponential(k, (N,)), lambda x: 1 - np.exp(-x)),
    ("laplace", lambda k: R.laplace(k, (N,)),
     lambda x: np.where(x < 0, 0.5 * np.exp(x), 1 - 0.5 * np.exp(-x))),
    ("logistic", lambda k: R.logistic(k, (N,)), lambda x: 1 / (1 + np.exp(-x))),
    ("gumbel", lambda k: R.gumbel(k, (N,)), lambda x: np.exp(-np.exp(-x))),
    ("gumbel_high", lambda k: R.gumbel(k, (N,), mode="high"), lambda x: np.exp(-np.exp(-x))),
    ("cauchy", lambda k: R.cauchy(k, (N,)), lambda x: 0.5 + np.arctan(x) / np.pi),
    ("pareto", lambda k: R.pareto(k, 3.0, (N,)), lambda x: 1 - x ** -3.0),
    ("rayleigh", lambda k: R.rayleigh(k, 2.0, (N,)), lambda x: 1 - np.exp(-x ** 2 / 8)),
    ("weibull_min", lambda k: R.weibull_min(k, 2.0, 1.5, (N,)),
     lambda x: 1 - np.exp(-(x / 2.0) ** 1.5)),
    ("triangular", lambda k: R.triangular(k, 0.0, 0.3, 1.0, (N,)),
     lambda x: np.where(x < 0.3, x ** 2 / 0.3, 1 - (1 - x) ** 2 / 0.7)),
    ("lognormal", lambda k: R.lognormal(k, 0.5, (N,)),
     lambda x: 0.5 * (1 + _erf(np.log(x) / (0.5 * math.sqrt(2))))),
    ("truncated_normal", lambda k: R.truncated_normal(k, -1.0, 2.0, (N,)),
     lambda x: (_erf(x / math.sqrt(2)) - math.erf(-1 / math.sqrt(2)))
     / (math.erf(2 / math.sqrt(2)) - math.erf(-1 / math.sqrt(2)))),
    ("maxwell", lambda k: R.maxwell(k, (N,)),
     lambda x: _erf(x / math.sqrt(2)) - np.sqrt(2 / np.pi) * x * np.exp(-x ** 2 / 2)),
]


@pytest.mark.parametrize("name, draw, cdf", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_kolmogorov_smirnov(name, draw, cdf):
    assert _ks_statistic(draw(R.PRNGKey(17)), cdf) < KS_BOUND


def test_uniform_bounds_and_moments():
    u = np.asarray(R.uniform(R.PRNGKey(5), (N,), minval=-2.0, maxval=6.0))
    assert u.min() >= -2.0 and u.max() < 6.0
    assert abs(u.mean() - 2.0) < 0.1 and abs(u.var() - 64 / 12) < 0.15


def test_normal_moments_and_complex_normal():
    z = np.asarray(R.normal(R.PRNGKey(6), (N,)))
    assert abs(z.mean()) < 0.03 and abs(z.var() - 1) < 0.04
    c = np.asarray(R.normal(R.PRNGKey(6), (N,), dtype=np.complex64))
    assert c.dtype == np.complex64
    assert abs(c.real.var() - 0.5) < 0.03 and abs(c.imag.var() - 0.5) < 0.03
    assert abs(np.mean(np.abs(c) ** 2) - 1) < 0.04
    assert abs(np.corrcoef(c.real, c.imag)[0, 1]) < 0.03


def test_truncated_normal_stays_inside_the_open_interval():
    x = np.asarray(R.truncated_normal(R.PRNGKey(3), 0.5, 0.50001, (1000,)))
    assert np.all((x > 0.5) & (x < 0.50001))


def test_randint_is_uniform_over_its_range():
    x = np.asarray(R.randint(R.PRNGKey(8), (N,), -3, 7))
    assert x.min() == -3 and x.max() == 6
    counts = np.bincount(x + 3, minlength=10)
    chi2 = np.sum((counts - N / 10) ** 2 / (N / 10))
    assert chi2 < 21.7  # 99th percentile of chi-square with 9 degrees of freedom


def test_randint_clips_to_the_dtype_range():
    x = np.asarray(R.randint(R.PRNGKey(8), (N,), -1000, 1000, np.int8))
    assert x.dtype == np.int8 and x.min() == -128 and x.max() == 127


def test_bernoulli_and_rademacher_means():
    assert abs(np.mean(R.bernoulli(R.PRNGKey(9), 0.3, (N,))) - 0.3) < 0.015
    assert abs(np.mean(R.bernoulli(R.PRNGKey(9), 1e-3, (N,), mode="high")) - 1e-3) < 7e-4
    r = np.asarray(R.rademacher(R.PRNGKey(9), (N,)))
    assert set(np.unique(r)) == {-1, 1} and abs(r.mean()) < 0.03


def test_geometric_mean():
    g = np.asarray(R.geometric(R.PRNGKey(10), 0.25, (N,)))
    assert g.min() == 1 and abs(g.mean() - 4) < 0.1


def test_categorical_frequencies_follow_softmax():
    logits = np.array([0.0, 1.0, 2.0, -1.0])
    x = np.asarray(R.categorical(R.PRNGKey(11), logits, shape=(N,)))
    p = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(np.bincount(x, minlength=4) / N, p, atol=0.015)


def test_choice_with_weights_follows_them():
    x = np.asarray(R.choice(R.PRNGKey(12), 5, (N,), p=P5))
    np.testing.assert_allclose(np.bincount(x, minlength=5) / N, P5, atol=0.015)


def test_permutations_and_choices_without_replacement_have_distinct_elements():
    perm = np.asarray(R.permutation(R.PRNGKey(13), 5000))
    assert sorted(perm.tolist()) == list(range(5000))
    chosen = np.asarray(R.choice(R.PRNGKey(13), 50, (20,), replace=False))
    assert len(set(chosen.tolist())) == 20
    rows = np.asarray(R.permutation(R.PRNGKey(13), A34, axis=1, independent=True))
    assert [sorted(r) for r in rows.tolist()] == A34.tolist()
    # every position is equally likely to receive every element
    firsts = np.asarray(didax.vmap(lambda k: R.permutation(k, 4)[0])(R.split(K0, 400)))
    assert np.bincount(firsts, minlength=4).min() > 70


def test_wald_and_double_sided_maxwell_moments():
    w = np.asarray(R.wald(R.PRNGKey(14), 1.5, (N,)))
    assert abs(w.mean() - 1.5) < 0.05 and abs(w.var() - 1.5 ** 3) < 0.4
    d = np.asarray(R.double_sided_maxwell(R.PRNGKey(14), 1.0, 2.0, (N,)))
    assert abs(d.mean() - 1.0) < 0.1 and abs(np.var(d) - 12.0) < 0.5


def _within(sample_stat, expected, standard_error):
    return abs(sample_stat - expected) < 4 * standard_error


def test_gamma_family_moments():
    n = 4000
    for a in (0.3, 4.5):
        g = np.asarray(R.gamma(R.PRNGKey(15), a, (n,)))
        assert _within(g.mean(), a, math.sqrt(a / n))
        assert _within(g.var(), a, a * math.sqrt((2 + 6 / a) / n))
    lg = np.asarray(R.loggamma(R.PRNGKey(15), 0.01, (200,)))
    assert np.all(np.isfinite(lg)) and lg.min() < -300  # exp would underflow float32
    b = np.asarray(R.beta(R.PRNGKey(16), 2.0, 5.0, (n,)))
    assert _within(b.mean(), 2 / 7, math.sqrt(10 / 392 / n))
    d = np.asarray(R.dirichlet(R.PRNGKey(17), np.array([1.0, 2.0, 0.5]), (n // 2,)))
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), [1 / 3.5, 2 / 3.5, 0.5 / 3.5], atol=0.02)
    assert _within(np.mean(R.chisquare(R.PRNGKey(18), 4.0, (n,))), 4.0, math.sqrt(8 / n))
    assert _within(np.mean(R.t(R.PRNGKey(19), 5.0, (n,))), 0.0, math.sqrt(5 / 3 / n))
    assert _within(np.mean(R.f(R.PRNGKey(20), 3.0, 7.0, (n,))), 1.4, math.sqrt(3.48 / n))
    ball = np.asarray(R.ball(R.PRNGKey(21), 3, 2, (n // 2,)))
    radius = np.linalg.norm(ball, axis=-1)  # uniform in volume: radius**3 is uniform
    assert radius.max() <= 1 and _within(np.mean(radius ** 3), 0.5, math.sqrt(1 / 12 / n * 2))


def test_poisson_binomial_multinomial_moments():
    n = 5000
    for lam in (3.5, 40.0):
        x = np.asarray(R.poisson(R.PRNGKey(22), lam, (n,)))
        assert _within(x.mean(), lam, math.sqrt(lam / n))
        assert _within(x.var(), lam, lam * math.sqrt((2 + 1 / lam) / n))
    for trials, p in ((10, 0.3), (200, 0.4), (100, 0.9)):
        x = np.asarray(R.binomial(R.PRNGKey(23), trials, p, (n,)))
        assert x.min() >= 0 and x.max() <= trials
        assert _within(x.mean(), trials * p, math.sqrt(trials * p * (1 - p) / n))
    m = np.asarray(R.multinomial(R.PRNGKey(24), 100.0, P3, shape=(1000, 3)))
    np.testing.assert_array_equal(m.sum(-1), 100.0)
    np.testing.assert_allclose(m.mean(0), 100 * P3, atol=0.6)


def test_gamma_gradients_match_jax():
    """random_gamma differentiates in its shape parameter by implicit reparameterization
    (lax.random_gamma_grad), as in JAX; so do beta, dirichlet... built on it."""
    a = np.array([0.5, 1.0, 3.0], np.float32)
    key, jkey = didax.random.key(0), jax.random.key(0)
    for ours, theirs in (
            (lambda a: jnp.sum(R.gamma(key, a)), lambda a: jax.random.gamma(jkey, a).sum()),
            (lambda a: jnp.sum(R.loggamma(key, a)), lambda a: jax.random.loggamma(jkey, a).sum()),
            (lambda a: jnp.sum(R.beta(key, a[1], 2.0, (3,))),
             lambda a: jax.random.beta(jkey, a[1], 2.0, (3,)).sum())):
        np.testing.assert_allclose(didax.grad(ours)(a), jax.jit(jax.grad(theirs))(a), rtol=2e-4)
    np.testing.assert_allclose(
        didax.vmap(R.gamma)(didax.random.split(key, 3), a),
        jax.vmap(jax.random.gamma)(jax.random.split(jkey, 3), a), rtol=1e-5)
    assert "random_gamma[log_space=False]" in str(didax.make_jaxpr(lambda a: R.gamma(key, a))(a))
    assert R.random_gamma_p.name == jax.random.random_gamma_p.name
    # Other arguments stay differentiable as before.
    g = didax.grad(lambda s: jnp.sum(s * R.gamma(K1, 2.0, (3,))))(1.5)
    np.testing.assert_allclose(g, np.sum(R.gamma(K1, 2.0, (3,))), rtol=1e-6)


# --------------------------------------------------------------------------------------
# Multivariate normal


def _eager_cholesky(cov):
    return jnp.asarray(np.linalg.cholesky(np.asarray(cov)))


def _with_cholesky(monkeypatch):
    """didax.numpy.linalg.cholesky, or (until didax has one) NumPy's on concrete values."""
    from didax.numpy import linalg

    if not hasattr(linalg, "cholesky"):
        monkeypatch.setattr(linalg, "cholesky", _eager_cholesky, raising=False)


def test_multivariate_normal_equals_jax(monkeypatch):
    _with_cholesky(monkeypatch)
    out = R.multivariate_normal(K1, MEAN2, COV2, (3,))
    np.testing.assert_allclose(out, [[2.56002140045166, 0.1973261833190918],
                                     [0.5210307836532593, -0.15884184837341309],
                                     [-0.5182719230651855, -1.071467638015747]],
                               rtol=1e-6, atol=1e-6)
    samples = np.asarray(R.multivariate_normal(R.PRNGKey(2), MEAN2, COV2, (N,)))
    np.testing.assert_allclose(samples.mean(0), MEAN2, atol=0.04)
    np.testing.assert_allclose(np.cov(samples.T), COV2, atol=0.06)


def test_multivariate_normal_names_the_missing_factorization():
    from didax.numpy import linalg

    for method in ("cholesky", "svd", "eigh"):
        if not hasattr(linalg, method):
            with pytest.raises(NotImplementedError, match=f"linalg.{method}"):
                R.multivariate_normal(K1, MEAN2, COV2, method=method)
    with pytest.raises(ValueError, match="method must be one of"):
        R.multivariate_normal(K1, MEAN2, COV2, method="qr")
    with pytest.raises(ValueError, match="cov.shape"):
        R.multivariate_normal(K1, MEAN2, np.eye(3))


# --------------------------------------------------------------------------------------
# Transformations


SAMPLERS = [
    ("uniform", lambda k: R.uniform(k, (3,))),
    ("normal", lambda k: R.normal(k, (3,))),
    ("randint", lambda k: R.randint(k, (3,), 0, 100)),
    ("permutation", lambda k: R.permutation(k, 6)),
    ("choice", lambda k: R.choice(k, 10, (3,), replace=False)),
    ("categorical", lambda k: R.categorical(k, LOGITS)),
    ("bernoulli", lambda k: R.bernoulli(k, 0.4, (3,))),
    ("truncated_normal", lambda k: R.truncated_normal(k, -1.0, 1.0, (3,))),
    ("gumbel", lambda k: R.gumbel(k, (3,))),
    ("gamma", lambda k: R.gamma(k, np.array([0.5, 2.0, 7.0]))),
    ("poisson", lambda k: R.poisson(k, np.array([2.0, 30.0]))),
    ("binomial", lambda k: R.binomial(k, np.array([5.0, 300.0]), 0.3)),
    ("multinomial", lambda k: R.multinomial(k, 20.0, P3)),
    ("split", lambda k: R.split(k, 3)),
    ("fold_in", lambda k: R.fold_in(k, 3)),
]


@pytest.mark.parametrize("name, sample", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_vmap_over_keys_equals_a_loop(name, sample):
    keys = R.split(K1, 4)
    batched = didax.vmap(sample)(keys)
    looped = np.stack([np.asarray(sample(k)) for k in keys])
    np.testing.assert_array_equal(batched, looped)


@pytest.mark.parametrize("name, sample", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_jit_equals_eager_exactly(name, sample):
    np.testing.assert_array_equal(didax.jit(sample)(K1), sample(K1))


@pytest.mark.parametrize("name, sample", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_staged_equals_eager_exactly(name, sample):
    # The eager path computes with NumPy directly; the staged one binds the primitives.
    closed = didax.make_jaxpr(sample)(K1)
    np.testing.assert_array_equal(closed(K1)[0], sample(K1))


def test_typed_keys_under_vmap_and_jit():
    keys = R.split(R.key(4), 3)
    out = didax.vmap(lambda k: R.uniform(k, (2,)))(keys)
    np.testing.assert_array_equal(out, np.stack([R.uniform(k, (2,)) for k in keys]))
    split = didax.jit(lambda k: R.split(k))(R.key(4))
    assert type(split) is prng.PRNGKeyArray and split.shape == (2,)
    assert bool(jnp.all(split == R.split(R.key(4))))
    nested = didax.vmap(lambda k: R.split(k, 2))(keys)
    assert type(nested) is prng.PRNGKeyArray and nested.shape == (3, 2)


def test_vmap_over_parameters_matches_jax():
    out = didax.vmap(lambda lo: R.uniform(K1, (3,), minval=lo, maxval=4.0))(jnp.array([0.0, 1.0]))
    np.testing.assert_array_equal(out, np.array([[3.460033893585205, 3.2237935066223145,
                                                  1.4696979522705078],
                                                 [3.5950255393981934, 3.4178452491760254,
                                                  2.102273464202881]], np.float32))


def test_reparameterized_normal_gradients():
    z = np.asarray(R.normal(K1, (4,)))

    def loss(loc, scale):
        return jnp.sum(loc + scale * R.normal(K1, (4,)))

    g_loc, g_scale = didax.grad(loss, argnums=(0, 1))(1.0, 2.0)
    assert float(g_loc) == 4.0
    np.testing.assert_allclose(g_scale, z.sum(), rtol=1e-6)
    with enable_x64(True):  # (float64 draws: finite differences need the precision)
        check_grads(lambda m, s: jnp.sum(jnp.sin(m + s * R.normal(K1, (4,)))), (0.3, 1.7),
                    order=2, modes=("fwd", "rev"))


GRAD_CASES = [  # gradients of summed samples with respect to parameters, from jax.grad
    ("uniform_bounds", lambda lo, hi: R.uniform(K1, (4,), minval=lo, maxval=hi), (-1.0, 2.0),
     (1.113771, 2.886229)),
    ("truncated_normal", lambda lo, hi: R.truncated_normal(K1, lo, hi, (4,)), (-1.0, 2.0),
     (0.8752526, 0.63065994)),
    ("pareto", lambda b: R.pareto(K1, b, (4,)), (3.0,), (-1.1995792,)),
    ("lognormal", lambda s: R.lognormal(K1, s, (4,)), (0.5,), (4.6746526,)),
    ("wald", lambda m: R.wald(K1, m, (4,)), (1.5,), (5.6112614,)),
    ("rayleigh", lambda s: R.rayleigh(K1, s, (4,)), (1.5,), (3.1850498,)),
    ("weibull_min", lambda s, c: R.weibull_min(K1, s, c, (4,)), (2.0, 1.5),
     (5.098159, -2.0370603)),
    ("triangular", lambda a, m, b: R.triangular(K1, a, m, b, (4,)), (0.0, 0.3, 1.0),
     (0.83387315, 1.1912475, 1.9748794)),
    ("double_sided_maxwell", lambda loc, s: R.double_sided_maxwell(K1, loc, s, (4,)),
     (1.0, 2.0), (4.0, 4.1269035)),
]


@pytest.mark.parametrize("name, sample, args, expected", GRAD_CASES,
                         ids=[c[0] for c in GRAD_CASES])
def test_gradients_with_respect_to_parameters_match_jax(name, sample, args, expected):
    argnums = tuple(range(len(args)))
    grads = didax.grad(lambda *a: jnp.sum(sample(*a)), argnums=argnums)(*args)
    np.testing.assert_allclose(grads, expected, rtol=2e-6)


def test_truncated_normal_second_derivative_matches_jax():
    f = didax.grad(didax.grad(lambda lo: jnp.sum(R.truncated_normal(K1, lo, 2.0, (4,)))))
    np.testing.assert_allclose(f(-1.0), 0.9412704, rtol=1e-5)


def test_grad_through_jit_of_a_sampling_loss():
    def loss(w, key):
        x = R.normal(key, (8, 3))
        noise = R.uniform(R.fold_in(key, 1), (8,))
        return jnp.mean((x @ w - noise) ** 2)

    w = jnp.array([0.1, -0.2, 0.3])
    eager = didax.grad(loss)(w, K1)
    np.testing.assert_allclose(didax.jit(didax.grad(loss))(w, K1), eager, rtol=1e-6)
    np.testing.assert_allclose(didax.grad(didax.jit(loss))(w, R.key(1234)), eager, rtol=1e-6)


# --------------------------------------------------------------------------------------
# Arguments and errors


def test_shapes_may_be_ints_or_lists():
    assert R.normal(K0, 5).shape == (5,)
    assert R.uniform(K0, [2, 3]).shape == (2, 3)
    assert R.uniform(K0, np.array([2])).shape == (2,)
    assert R.bernoulli(K0, np.full((2, 3), 0.5)).shape == (2, 3)
    assert R.truncated_normal(K0, LO3, 4.0).shape == (3,)
    assert R.pareto(K0, np.array([1.0, 2.0])).shape == (2,)


def test_keys_are_checked():
    with pytest.raises(ValueError, match="accepts a single key.*Use didax.vmap"):
        R.normal(R.split(K0), (2,))
    with pytest.raises(ValueError, match="accepts a single key"):
        R.uniform(R.split(R.key(0)))
    with pytest.raises(TypeError, match="uint32"):
        R.normal(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match=r"ending in \(2,\)"):
        R.normal(np.zeros(3, np.uint32))
    with pytest.raises(TypeError, match="unexpected PRNG key type"):
        R.normal([0, 0])
    with pytest.raises(NotImplementedError, match="rbg"):
        R.PRNGKey(0, impl="rbg")


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="must be a float dtype"):
        R.uniform(K0, (2,), np.int32)
    with pytest.raises(ValueError, match="float or complex dtype"):
        R.normal(K0, (2,), np.int32)
    with pytest.raises(TypeError, match="integer dtypes"):
        R.randint(K0, (2,), 0, 3, np.float32)
    with pytest.raises(ValueError, match="broadcast-compatible with shape"):
        R.uniform(K0, (2,), minval=np.zeros(3))
    with pytest.raises(ValueError, match="Cannot take a larger sample"):
        R.choice(K0, 3, (4,), replace=False)
    with pytest.raises(TypeError, match="must be a sequence"):
        R.choice(K0, 3, 4)
    with pytest.raises(ValueError, match="p must be None or a 1D vector"):
        R.choice(K0, 3, (2,), p=P5)
    with pytest.raises(TypeError, match="floating dtype"):
        R.bernoulli(K0, 1)
    with pytest.raises(ValueError, match="cannot exceed number of categories"):
        R.categorical(K0, LOGITS5, shape=(6,), replace=False)
    with pytest.raises(NotImplementedError, match="mode='highest'"):
        R.gumbel(K0, (2,), mode="highest")
    with pytest.raises(TypeError, match="scalar"):
        R.fold_in(K0, np.arange(2))


def test_typed_keys_and_raw_keys_give_the_same_numbers():
    np.testing.assert_array_equal(R.normal(R.key(1234), (5,)), R.normal(K1, (5,)))
    np.testing.assert_array_equal(R.key_data(R.split(R.key(1234), 3)), R.split(K1, 3))
    np.testing.assert_array_equal(R.key_data(R.fold_in(R.key(1234), 9)), R.fold_in(K1, 9))
    assert R.clone(K1) is K1 and str(R.key_dtype()) == "key<fry>"


def test_orthogonal_matches_jax_and_is_orthogonal():
    q = R.orthogonal(R.key(0), 3)
    np.testing.assert_allclose(q, [[0.9554101228713989, 0.2941357493400574, 0.02599557861685753],
                                   [-0.04628981649875641, 0.2361408770084381, -0.9706156253814697],
                                   [-0.2916313707828522, 0.9261326193809509, 0.23922686278820038]],
                               rtol=1e-5, atol=1e-6)
    wide = R.orthogonal(R.key(1), 2, (2,), m=3)
    np.testing.assert_allclose(wide[1], [[0.9416991472244263, -0.12766814231872559,
                                          -0.3112938404083252],
                                         [0.1714106649160385, 0.9781842231750488,
                                          0.11736272275447845]], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(wide @ np.swapaxes(np.asarray(wide), -1, -2),
                               np.broadcast_to(np.eye(2), (2, 2, 2)), atol=1e-6)


def test_typed_keys_are_keys_as_in_jax():
    key, jkey = didax.random.key(3), jax.random.key(3)
    assert str(key.dtype) == str(jkey.dtype) and key.shape == jkey.shape == ()
    assert jnp.issubdtype(key.dtype, didax.dtypes.prng_key)
    assert jnp.issubdtype(key.dtype, didax.dtypes.extended)
    assert not jnp.issubdtype(key.dtype, jnp.floating)
    assert not jnp.issubdtype(jnp.float32, didax.dtypes.prng_key)
    keys = didax.random.split(key, 4)
    assert keys.shape == (4,) and jnp.issubdtype(keys.dtype, didax.dtypes.prng_key)
    np.testing.assert_array_equal(didax.random.key_data(keys),
                                  jax.random.key_data(jax.random.split(jkey, 4)))
    np.testing.assert_array_equal(didax.vmap(lambda k: didax.random.uniform(k))(keys),
                                  jax.vmap(lambda k: jax.random.uniform(k))(
                                      jax.random.split(jkey, 4)))
