"""float32 exp, tanh and logistic by didax's own algorithms: the C kernel and its NumPy twin
give the same bits (random bit patterns, NaN payloads, infinities, both zeros, in place and
apart), and so do eager evaluation, jit on the NumPy tier and jit's native tier, which
inlines the algorithm into its fused loops. Other dtypes keep NumPy's functions."""
import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax._src.compiler.native import toolchain
from didax._src.config import flag_context
from didax._src.lax import transcendental_kernels as tk
from didax._src.numerics import float32_math as fm

F32 = np.float32
TWINS = {"exp": (tk.exp, fm.exp, np.exp), "tanh": (tk.tanh, fm.tanh, np.tanh)}


@pytest.fixture
def native():
    if toolchain.toolchain() is None:
        pytest.skip("no C compiler: the NumPy twins serve every call")
    assert tk.native_module(wait=True) is not None


def _bits(x):
    x = np.asarray(x)
    return x.view(f"u{x.itemsize}")


def _inputs():
    """Every class of float32: random bit patterns (NaNs of all payloads among them), and
    the edges of each function's branches."""
    rng = np.random.default_rng(0)
    patterns = rng.integers(0, 2**32, 300_000, dtype=np.uint64).astype(np.uint32).view(F32)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 88.72283, 88.72284, 89.0, -87.34,
                      -103.97, -104.0, 1e-45, 0.625, np.nextafter(F32(0.625), F32(0)), 9.125,
                      1e-20, 3e-38], F32)
    normal = rng.standard_normal(100_001).astype(F32) * F32(6)
    # (every float32 where exp's result turns from 0 to subnormal)
    underflow = np.arange(*_bits(np.array([-103.96, -103.99], F32)), dtype=np.uint32).view(F32)
    return np.concatenate([patterns, edges, -edges, normal, underflow])


@pytest.mark.parametrize("name", sorted(TWINS))
def test_kernel_and_twin_agree_bitwise(native, name):
    fn, twin, _ = TWINS[name]
    x = _inputs()
    with flag_context("didax_native_tier", "check"):  # (raises if the bits differ)
        got = fn(x)
    assert _bits(got).tolist() == _bits(twin(x)).tolist()
    inplace = x.copy()
    assert fn(inplace, out=inplace) is inplace
    assert _bits(inplace).tolist() == _bits(got).tolist()
    strided = x[::3]
    assert _bits(fn(strided)).tolist() == _bits(twin(strided)).tolist()


@pytest.mark.parametrize("name", sorted(TWINS))
def test_eager_before_and_after_the_kernel_module_is_built(name):
    """The configuration users run: the NumPy twin serves until the module is there."""
    fn, twin, _ = TWINS[name]
    x = _inputs()
    with flag_context("didax_native_tier", "off"):
        before = fn(x)
    after = fn(x)
    assert _bits(before).tolist() == _bits(after).tolist() == _bits(twin(x)).tolist()


@pytest.mark.parametrize("name", sorted(TWINS))
def test_values_and_types_as_numpys(name):
    fn, _, numpy_fn = TWINS[name]
    scalar = fn(F32(0.5))
    assert type(scalar) is F32 and abs(scalar - numpy_fn(F32(0.5))) <= np.spacing(scalar)
    for mode in ("off", "sync"):  # (the twin, and the kernel)
        with flag_context("didax_native_tier", mode):
            assert type(fn(np.array(0.5, F32))) is F32 and fn(F32(0.5)) == scalar
            out = np.empty((), F32)
            assert fn(np.array(0.5, F32), out=out).shape == () and fn(F32(0.5)) == scalar
    assert fn(np.zeros((2, 0), F32)).shape == (2, 0)
    for dtype in (np.float16, np.float64, np.complex64):  # NumPy's own function
        x = np.linspace(-3, 3, 101).astype(dtype)
        assert _bits(fn(x)).tolist() == _bits(numpy_fn(x)).tolist()


def _tiers(f, *args):
    """(native jit, NumPy-tier jit, eager) results of `f`, and the native module's C."""
    with flag_context("didax_native_tier", "sync"):
        jf = didax.jit(f)
        native = np.asarray(jf(*args))
        exe = jf._trace(args, {})[0].executable
        source = exe.native.source if exe.native.status == "ready" else ""
    with flag_context("didax_native_tier", "off"):
        numpy_tier = np.asarray(didax.jit(f)(*args))
    with didax.disable_jit():
        eager = np.asarray(f(*args))
    return (native, numpy_tier, eager), source


@pytest.mark.parametrize("name, f", [
    ("exp", jnp.exp), ("tanh", jnp.tanh), ("logistic", didax.nn.sigmoid),
    ("fused", lambda x: jnp.tanh(x) * jnp.exp(-x * x) + 0.5 * x),
    ("softmax", lambda x: didax.nn.softmax(x.reshape(-1, 7), axis=-1)),
])
def test_tiers_agree_bitwise(name, f):
    x = _inputs()[-100_001:].reshape(-1)[:99_995]  # (finite, a multiple of 7 long)
    x = np.concatenate([x, np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 120.0, -120.0], F32)])
    (native, numpy_tier, eager), source = _tiers(f, x)
    if name == "fused":  # (NaN * -NaN: a compiled product may take either's sign)
        assert np.isnan(native).tolist() == np.isnan(eager).tolist() == np.isnan(x).tolist()
        native, numpy_tier, eager, = (v[~np.isnan(x)] for v in (native, numpy_tier, eager))
    assert _bits(native).tolist() == _bits(numpy_tier).tolist() == _bits(eager).tolist()
    if toolchain.toolchain() is not None:
        calls = {"exp": "didax_exp_f32(", "tanh": "didax_tanh_f32(",
                 "logistic": "didax_exp_f32(", "fused": "didax_tanh_f32(",
                 "softmax": "didax_exp_f32("}
        assert calls[name] in source


def test_float64_keeps_numpys_functions():
    x = np.linspace(-30, 30, 1001)
    with didax.enable_x64(True):
        (native, numpy_tier, eager), _ = _tiers(lambda v: jnp.tanh(v) + jnp.exp(v), x)
    want = np.tanh(x) + np.exp(x)
    assert _bits(native).tolist() == _bits(numpy_tier).tolist() == _bits(eager).tolist()
    np.testing.assert_allclose(eager, want, rtol=1e-15)


def test_derivatives_use_the_same_values():
    x = np.random.default_rng(5).standard_normal(64).astype(F32)
    g = didax.grad(lambda v: jnp.sum(jnp.tanh(v) * jnp.exp(v)))(x)
    t, e = fm.tanh(x), fm.exp(x)
    want = (F32(1) + t) * (F32(1) - t) * e + t * e
    np.testing.assert_allclose(np.asarray(g), want, rtol=2e-6)
