"""didax.nn functions: values against NumPy/SciPy formulas in float64, stability at large
|x|, result dtypes and weak types against JAX (tables recorded by running JAX 0.10.2),
JAX's derivative conventions at kinks, and numerical derivative checks of order 2."""
import warnings

import mpmath
import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st

import didax
import didax.numpy as jnp
import didax.scipy.special
from didax import nn
from didax._src.config import enable_x64
from didax.test_util import check_grads

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


# Each activation's definition, evaluated in float64 by NumPy and SciPy.
REFERENCES = {
    "identity": lambda x: x,
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": sps.expit,
    "softplus": lambda x: np.logaddexp(x, 0),
    "log_sigmoid": lambda x: -np.logaddexp(0, -x),
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "silu": lambda x: x * sps.expit(x),
    "swish": lambda x: x * sps.expit(x),
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "celu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "selu": lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0))),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip(x + 1, 0, 2) / 2,
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "mish": lambda x: x * np.tanh(np.logaddexp(x, 0)),
    "tanh": np.tanh,
    "gelu": _gelu_tanh,
}
ELEMENTWISE = sorted(REFERENCES)
# Absolute rounding errors of JAX's formulas in float32 (bigger than the subnormal default):
# 1 + tanh(...) near -1 in gelu, x + sqrt(x^2 + 4) for large negative x in squareplus.
ATOL32 = {"gelu": 1e-6, "squareplus": 2e-4}

# From |x| = 1e4 in float32, exp(x) overflows: the stable forms must stay finite.
GRID = np.array([-1e4, -100, -30, -5, -1, -0.5, -1e-3, 0, 1e-3, 0.5, 1, 5, 30, 100, 1e4])


def _close(got, expected, dtype, atol32=1e-37):
    """atol32 covers float32's subnormal results (sigmoid(-100) = 3.7e-44), and rounding
    in 1 + tanh(...) near -1 for the tanh form of gelu (as JAX computes it too)."""
    got = np.asarray(got)
    assert got.dtype == dtype
    rtol = 3e-6 if dtype == np.float32 else 1e-13
    atol = atol32 if dtype == np.float32 else 1e-300
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


F32_EPS = float(np.finfo(np.float32).eps)


@pytest.mark.parametrize("name", ELEMENTWISE)
@pytest.mark.parametrize("x64", [False, True])
def test_activation_values(name, x64):
    dtype = np.float64 if x64 else np.float32
    x = GRID.astype(dtype)
    with enable_x64(x64):
        got = getattr(nn, name)(x)
    expected = REFERENCES[name](x.astype(np.float64))
    assert np.all(np.isfinite(np.asarray(got)))
    _close(got, expected, dtype, atol32=ATOL32.get(name, 1e-37))


@pytest.mark.parametrize("x64", [False, True])
def test_gelu_exact_is_x_times_normal_cdf(x64):
    dtype = np.float64 if x64 else np.float32
    x = GRID.astype(dtype)
    with enable_x64(x64):
        got = nn.gelu(x, approximate=False)
    _close(got, x.astype(np.float64) * sps.ndtr(x.astype(np.float64)), dtype)


def test_log1mexp():
    x = np.array([1e-20, 1e-6, 0.1, np.log(2) - 1e-3, np.log(2) + 1e-3, 1, 20, 100, 700])
    with enable_x64():
        got = nn.log1mexp(x)
        dgot = didax.vmap(didax.grad(nn.log1mexp))(x)
    with mpmath.workdps(50):
        expected = [float(mpmath.log1p(-mpmath.exp(-mpmath.mpf(v)))) for v in x]
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    np.testing.assert_allclose(dgot, 1 / np.expm1(x), rtol=1e-14)
    assert np.isnan(nn.log1mexp(-1.0)) and nn.log1mexp(0.0) == -np.inf


def test_activation_parameters():
    x = np.linspace(-3, 3, 13)
    with enable_x64():
        np.testing.assert_allclose(nn.elu(x, 0.5), np.where(x > 0, x, 0.5 * np.expm1(x)))
        np.testing.assert_allclose(nn.celu(x, 2.0), np.maximum(x, 0)
                                   + 2.0 * np.expm1(np.minimum(x, 0) / 2.0))
        np.testing.assert_allclose(nn.leaky_relu(x, 0.2), np.where(x >= 0, x, 0.2 * x))
        np.testing.assert_allclose(nn.squareplus(x, 1.0), (x + np.sqrt(x * x + 1)) / 2)


# --------------------------------------------------------------------------------------
# dtypes: inputs 2.0, 2, float32(2), int32[2], float16[2], bool[2]; "*" marks a weak type.

INPUTS = [2.0, 2, np.float32(2), np.array([2, 4], np.int32), np.array([2., 1.], np.float16),
          np.array([True, False])]

JAX_DTYPES = {
    "identity": "float32* int32* float32 int32 float16 bool",
    "relu": "float32* int32* float32 int32 float16 int32*",
    "relu6": "float32* float32* float32 float32* float16 float32*",
    "gelu": "float32 float32 float32 float32 float16 float32",
    "silu": "float32* TypeError float32 TypeError float16 TypeError",
    "sigmoid": "float32* TypeError float32 TypeError float16 TypeError",
    "softplus": "float32* float32* float32 float32 float16 float32*",
    "soft_sign": "float32* float32* float32 float32 float16 float32*",
    "elu": "float32* float32* float32 float32* float16 float32*",
    "celu": "float32* float32* float32 float32* float16 float32*",
    "selu": "float32* float32* float32 float32* float16 float32*",
    "leaky_relu": "float32* float32* float32 float32* float16 float32*",
    "hard_tanh": "float32* int32* float32 int32 float16 int32*",
    "hard_sigmoid": "float32* float32* float32 float32* float16 float32*",
    "hard_silu": "float32* float32* float32 float32* float16 float32*",
    "log_sigmoid": "float32* float32* float32 float32 float16 TypeError",
    "sparse_plus": "float32* float32* float32 float32* float16 float32*",
    "sparse_sigmoid": "float32* float32* float32 float32* float16 float32*",
    "squareplus": "float32* float32* float32 float32 float16 float32",
    "mish": "float32* float32* float32 float32 float16 float32*",
    "log1mexp": "float32* float32* float32 float32 float16 TypeError",
    "tanh": "float32* float32* float32 float32 float16 float32",
}


def _dtype_str(f, x):
    try:
        y = f(x)
    except Exception as e:  # noqa: BLE001 - the exception class is what is compared
        return type(e).__name__
    return str(np.asarray(y).dtype) + ("*" if didax.typeof(y).weak_type else "")


@pytest.mark.parametrize("name", sorted(JAX_DTYPES))
def test_dtypes_match_jax(name):
    got = " ".join(_dtype_str(getattr(nn, name), x) for x in INPUTS)
    assert got == JAX_DTYPES[name]


@pytest.mark.parametrize("name", sorted(JAX_DTYPES))
def test_float64_stays_float64_under_x64(name):
    with enable_x64():
        assert np.asarray(getattr(nn, name)(np.ones(2))).dtype == np.float64


# --------------------------------------------------------------------------------------
# Derivatives

KINK_POINTS = np.array([-6., -3., -1., 0., 1., 3., 6.], np.float32)
# grad of each piecewise function at KINK_POINTS, as JAX gives it: relu and relu6 have a zero
# derivative at their kinks, clip splits ties in two, where takes its branch's derivative.
JAX_KINK_GRADS = {
    "relu": [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
    "relu6": [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0],
    "elu": [0.00247877836, 0.0497870445, 0.367879450, 1.0, 1.0, 1.0, 1.0],
    "celu": [0.00247877836, 0.0497870445, 0.367879450, 1.0, 1.0, 1.0, 1.0],
    "selu": [0.00435793865, 0.0875305682, 0.646768630, 1.75809932, 1.05070102, 1.05070102,
             1.05070102],
    "leaky_relu": [0.01, 0.01, 0.01, 1.0, 1.0, 1.0, 1.0],
    "hard_tanh": [0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0],
    "hard_sigmoid": [0.0, 0.0, 1 / 6, 1 / 6, 1 / 6, 0.0, 0.0],
    "hard_silu": [0.0, 0.0, 1 / 6, 0.5, 5 / 6, 1.0, 1.0],
    "sparse_plus": [0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0],
    "sparse_sigmoid": [0.0, 0.0, 0.25, 0.5, 0.25, 0.0, 0.0],
    "soft_sign": [1 / 49, 0.0625, 0.25, 1.0, 0.25, 0.0625, 1 / 49],
}


@pytest.mark.parametrize("name", sorted(JAX_KINK_GRADS))
def test_derivative_conventions_at_kinks(name):
    f = getattr(nn, name)
    # float32; the elu family's slope for x < 0 is computed as expm1(x) + 1, whose rounding
    # is a few ulps of 1.0 however small the result, and expm1's last bit varies by CPU.
    got = [float(didax.grad(f)(x)) for x in KINK_POINTS]
    np.testing.assert_allclose(got, JAX_KINK_GRADS[name], rtol=1e-6, atol=4 * F32_EPS)
    fwd = didax.jvp(f, (KINK_POINTS,), (np.ones_like(KINK_POINTS),))[1]
    np.testing.assert_allclose(fwd, JAX_KINK_GRADS[name], rtol=1e-6, atol=4 * F32_EPS)


# Away from kinks (0, +-1, +-3, 6) by far more than the finite-difference step.
SMOOTH_POINTS = np.array([-7.3, -2.3, -0.7, 0.4, 1.9, 4.2, 7.1])


@pytest.mark.parametrize("name", ELEMENTWISE + ["log1mexp"])
def test_check_grads(name):
    f = getattr(nn, name)
    x = np.abs(SMOOTH_POINTS) if name == "log1mexp" else SMOOTH_POINTS
    with enable_x64():
        check_grads(f, (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("approximate", [True, False])
def test_check_grads_gelu(approximate):
    with enable_x64():
        check_grads(lambda x: nn.gelu(x, approximate), (SMOOTH_POINTS,), order=2,
                    modes=("fwd", "rev"))


def test_large_inputs_have_finite_derivatives():
    x = np.array([-1e4, -100., 100., 1e4], np.float32)
    for name in ("softplus", "log_sigmoid", "sigmoid", "silu", "mish", "elu", "selu", "celu",
                 "gelu"):
        g = didax.vmap(didax.grad(getattr(nn, name)))(x)
        assert np.all(np.isfinite(g)), name
    np.testing.assert_allclose(didax.vmap(didax.grad(nn.softplus))(x), [0, 0, 1, 1], atol=1e-30)


# --------------------------------------------------------------------------------------
# Normalisations over axes

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4, 5)) * 3
MASK = RNG.random((3, 4, 5)) > 0.3
AXES = [-1, 0, (0, 2), None]


def _np_log_softmax(x, axis, where=None):
    if where is not None:
        x = np.where(where, x, -np.inf)
    out = x - sps.logsumexp(x, axis=axis, keepdims=True)
    return out


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("masked", [False, True])
def test_softmax_and_log_softmax(axis, masked):
    where = MASK if masked else None
    with enable_x64():
        sm = nn.softmax(X, axis=axis, where=where)
        lsm = nn.log_softmax(X, axis=axis, where=where)
    expected = _np_log_softmax(X, axis, where)
    np.testing.assert_allclose(lsm, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sm, np.exp(expected), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.sum(sm, axis=axis), 1.0, rtol=1e-12)


def test_softmax_is_stable():
    x = np.array([[1e4, 0., -1e4], [-1e30, 1e30, 0.], [-np.inf, 0., 1.]], np.float32)
    np.testing.assert_allclose(nn.softmax(x), [[1, 0, 0], [0, 1, 0], [0, 1 / (1 + np.e),
                                                                      np.e / (1 + np.e)]],
                               rtol=1e-6)
    np.testing.assert_allclose(nn.log_softmax(x)[0], [0, -1e4, -2e4], rtol=1e-6)
    assert np.all(np.isnan(np.asarray(nn.softmax(np.array([np.inf, 0.], np.float32)))))
    g = didax.grad(lambda v: nn.log_softmax(v)[0])(np.array([1e4, 0., -1e4], np.float32))
    np.testing.assert_allclose(g, [0, 0, 0], atol=1e-30)


@pytest.mark.parametrize("axis", [-1, (0, 2)])
def test_check_grads_softmax_family(axis):
    w = MASK

    def masked(f):
        return lambda x, axis: jnp.where(w, f(x, axis=axis, where=w), 0.)

    with enable_x64():
        for f in (nn.softmax, nn.log_softmax, masked(nn.softmax), masked(nn.log_softmax),
                  lambda x, axis=axis: nn.logsumexp(x, axis=axis, b=np.abs(X) + 0.5),
                  lambda x, axis=axis: nn.logmeanexp(x, axis=axis, where=w, keepdims=True)):
            check_grads(lambda x, f=f: f(x, axis=axis), (X,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_matches_scipy(axis, keepdims):
    b = RNG.normal(size=(4, 5))
    with enable_x64():
        np.testing.assert_allclose(nn.logsumexp(X, axis=axis, keepdims=keepdims),
                                   sps.logsumexp(X, axis=axis, keepdims=keepdims), rtol=1e-13)
        out, sign = nn.logsumexp(X, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    e_out, e_sign = sps.logsumexp(X, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    np.testing.assert_allclose(out, e_out, rtol=1e-12)
    np.testing.assert_array_equal(sign, e_sign)


def test_logsumexp_special_cases():
    x = np.array([[1e30, 1e30], [-np.inf, -np.inf], [0., np.log(2.)]], np.float32)
    np.testing.assert_allclose(nn.logsumexp(x, axis=1), [1e30, -np.inf, np.log(3.)], rtol=1e-6)
    b = np.array([[1., 1.], [1., 1.], [1., -1.]], np.float32)
    out = np.asarray(nn.logsumexp(x, axis=1, b=b))
    assert np.isnan(out[2]) and out[0] == np.float32(1e30) + np.float32(np.log(2))
    out, sign = nn.logsumexp(x[2], b=b[2], return_sign=True)
    np.testing.assert_allclose([out, sign], [0., -1.], atol=1e-6)
    # b == 0 removes an entry, even an infinite one.
    assert nn.logsumexp(np.array([np.inf, 0.]), b=np.array([0., 1.])) == 0.
    with enable_x64():
        got = float(nn.logsumexp(X, where=MASK))
    assert got == pytest.approx(sps.logsumexp(X[MASK]), rel=1e-14)
    assert nn.logsumexp(np.ones(3), where=np.zeros(3, bool)) == -np.inf
    assert didax.scipy.special.logsumexp is nn.logsumexp


def test_logsumexp_dtypes():
    assert np.asarray(nn.logsumexp(np.array([1, 2], np.int32))).dtype == np.float32
    assert np.asarray(nn.logsumexp(np.array([1., 2.], np.float16))).dtype == np.float16
    assert not didax.typeof(nn.logsumexp(2.0)).weak_type  # (as in JAX)


def test_logmeanexp():
    with enable_x64():
        got = nn.logmeanexp(X, axis=(0, 2), where=MASK)
    expected = [sps.logsumexp(X[:, j][MASK[:, j]]) - np.log(MASK[:, j].sum()) for j in range(4)]
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    assert float(nn.logmeanexp(np.full(7, 3.0))) == pytest.approx(3.0, rel=1e-6)


@pytest.mark.parametrize("algorithm", ["fast", "stable"])
@pytest.mark.parametrize("axis", [-1, (0, 2)])
def test_standardize(algorithm, axis):
    with enable_x64():
        got = nn.standardize(X, axis=axis, algorithm=algorithm)
        masked = nn.standardize(X, axis=axis, where=MASK, algorithm=algorithm)
        check_grads(lambda x: nn.standardize(x, axis=axis, algorithm=algorithm), (X,), order=2,
                    modes=("fwd", "rev"))
    mean, var = X.mean(axis, keepdims=True), X.var(axis, keepdims=True)
    np.testing.assert_allclose(got, (X - mean) / np.sqrt(var + 1e-5), rtol=1e-10, atol=1e-12)
    m_mean = np.mean(X, axis, keepdims=True, where=MASK)
    m_var = np.var(X, axis, keepdims=True, where=MASK)
    np.testing.assert_allclose(masked, (X - m_mean) / np.sqrt(m_var + 1e-5), rtol=1e-10)


def test_standardize_given_statistics():
    got = nn.standardize(X, mean=1.0, variance=4.0, epsilon=0.0)
    np.testing.assert_allclose(got, (X - 1) / 2, rtol=1e-6)
    with pytest.raises(ValueError, match="Unknown algorithm"):
        nn.standardize(X, algorithm="exact")


def test_glu():
    with enable_x64():
        np.testing.assert_allclose(nn.glu(X[:, :4], axis=1),
                                   X[:, :2] * sps.expit(X[:, 2:4]), rtol=1e-14)
        check_grads(lambda x: nn.glu(x, axis=0), (X[:2],), order=2, modes=("fwd", "rev"))
    with pytest.raises(ValueError, match="divisible by 2"):
        nn.glu(X, axis=0)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis):
    idx = np.array([[0, 3, -1], [2, 7, 1]])
    got = nn.one_hot(idx, 4, axis=axis)
    expected = np.moveaxis((idx[..., None] == np.arange(4)).astype(np.float32), -1, axis)
    np.testing.assert_array_equal(got, expected)
    assert np.asarray(got).dtype == np.float32
    assert np.asarray(nn.one_hot(idx, 4, dtype=np.int8)).dtype == np.int8
    with enable_x64():
        assert np.asarray(nn.one_hot(idx, 4)).dtype == np.float64


def test_one_hot_float_input_warns():
    with pytest.warns(DeprecationWarning, match="integer-typed"):
        got = nn.one_hot(np.array([0., 1.5, 2.]), 3)
    np.testing.assert_array_equal(got, [[1, 0, 0], [0, 0, 0], [0, 0, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.one_hot(2, 3)


@settings(max_examples=25, deadline=None)
@given(shift=st.floats(-1e3, 1e3), seed=st.integers(0, 2 ** 16))
def test_softmax_shift_invariant(shift, seed):
    x = np.random.default_rng(seed).normal(size=6) * 5
    with enable_x64():
        np.testing.assert_allclose(nn.softmax(x + shift), nn.softmax(x), rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(nn.logsumexp(x + shift), sps.logsumexp(x) + shift,
                                   rtol=1e-12)


def test_vmap_of_softmax_matches_loop():
    got = didax.vmap(nn.softmax)(X.astype(np.float32))
    expected = np.stack([np.asarray(nn.softmax(x)) for x in X.astype(np.float32)])
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_jit_matches_eager():
    x = X.astype(np.float32)
    for f in (nn.relu, nn.gelu, nn.softplus, lambda v: nn.softmax(v, axis=(0, 2)),
              lambda v: nn.logsumexp(v, axis=1, b=np.abs(x[0]))):
        np.testing.assert_allclose(didax.jit(f)(x), f(x), rtol=1e-6)
        np.testing.assert_allclose(didax.jit(didax.grad(lambda v, f=f: jnp.sum(f(v))))(x),
                                   didax.grad(lambda v, f=f: jnp.sum(f(v)))(x), rtol=1e-6)


# --------------------------------------------------------------------------------------
# Attention


def _np_attention(q, k, v, bias=None, mask=None, scale=None, is_causal=False, q_len=None,
                  kv_len=None, window=None):
    """Head by head, query by query, in float64: the definition to compare with."""
    B, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    scale = 1 / np.sqrt(H) if scale is None else scale
    out = np.zeros(q.shape)
    lse = np.zeros((B, T, N))
    for b in range(B):
        for n in range(N):
            kv = n // (N // K)
            logits = q[b, :, n] @ k[b, :, kv].T * scale
            if bias is not None:
                logits = logits + np.broadcast_to(bias, (B, N, T, S))[b, n]
            keep = np.ones((T, S), bool)
            if mask is not None:
                keep &= np.broadcast_to(mask, (B, N, T, S))[b, n]
            t, s = np.arange(T)[:, None], np.arange(S)[None, :]
            if is_causal:
                keep &= s <= t
            if window is not None:
                keep &= (t <= s + window[0]) & (t >= s - window[1])
            if kv_len is not None:
                keep &= s < kv_len[b]
            if q_len is not None:
                keep &= t < q_len[b]
            logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
            lse[b, :, n] = sps.logsumexp(logits, axis=-1)
            out[b, :, n] = sps.softmax(logits, axis=-1) @ v[b, :, kv]
            if q_len is not None:
                out[b, q_len[b]:, n] = 0
    return out, lse


ATTN_RNG = np.random.default_rng(3)
Q, K_, V = (ATTN_RNG.normal(size=s) for s in [(2, 5, 4, 3), (2, 6, 2, 3), (2, 6, 2, 3)])
ATTN_CASES = {
    "plain": {},
    "bias_per_head": dict(bias=ATTN_RNG.normal(size=(1, 4, 5, 6))),
    "bias_and_mask": dict(bias=ATTN_RNG.normal(size=(2, 1, 5, 6)),
                          mask=ATTN_RNG.random((2, 4, 5, 6)) > 0.3),
    "causal": dict(is_causal=True, mask=ATTN_RNG.random((1, 1, 5, 6)) > 0.2),
    "window": dict(local_window_size=(2, 0), scale=0.4),
    "lengths": dict(query_seq_lengths=np.array([3, 5], np.int32),
                    key_value_seq_lengths=np.array([6, 2], np.int32)),
}


@pytest.mark.parametrize("case", sorted(ATTN_CASES))
def test_dot_product_attention(case):
    kw = ATTN_CASES[case]
    with enable_x64():
        out, lse = nn.dot_product_attention(Q, K_, V, return_residual=True, **kw)
    expected, expected_lse = _np_attention(
        Q, K_, V, kw.get("bias"), kw.get("mask"), kw.get("scale"), kw.get("is_causal", False),
        kw.get("query_seq_lengths"), kw.get("key_value_seq_lengths"),
        kw.get("local_window_size"))
    # As JAX, the softmax is computed in float32 whatever the input dtype.
    assert np.asarray(out).dtype == np.float64
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(lse, expected_lse, rtol=2e-6)
    got32 = nn.dot_product_attention(*(a.astype(np.float32) for a in (Q, K_, V)), **kw)
    assert np.asarray(got32).dtype == np.float32
    np.testing.assert_allclose(got32, expected, rtol=1e-5, atol=1e-6)


def test_dot_product_attention_grads_and_shapes():
    # In float32: the softmax is float32 even for float64 inputs, too coarse for float64's
    # finite-difference tolerances.
    kw = ATTN_CASES["bias_and_mask"]
    check_grads(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True, **kw),
                tuple(a.astype(np.float32) for a in (Q, K_, V)), order=2, modes=("fwd", "rev"))
    # Without a batch dimension; float16 keeps its dtype (logits in float32).
    out = nn.dot_product_attention(Q[0], K_[0], V[0])
    np.testing.assert_allclose(out, _np_attention(Q[:1], K_[:1], V[:1])[0][0], rtol=1e-5)
    half = nn.dot_product_attention(*(a.astype(np.float16) for a in (Q, K_, V)))
    assert np.asarray(half).dtype == np.float16
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        nn.dot_product_attention(Q[:, :, :3], K_, V)
    with pytest.raises(ValueError, match="mask dtype"):
        nn.dot_product_attention(Q, K_, V, mask=np.ones((1, 1, 5, 6)))
    with pytest.raises(NotImplementedError, match="cudnn"):
        nn.dot_product_attention(Q, K_, V, implementation="cudnn")
