"""didax.experimental.jet.jet against jax 0.10.2's: every primitive with a rule to order 5 in
float64, compositions, repeated jvp, jit and vmap around and inside it, custom rules,
pytrees, factorial scaling and errors."""
import math

import jax
import numpy as np
import pytest
from jax.experimental.jet import jet as jax_jet
from jax_absent import needs_jax
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64
from didax._src.interpreters import jet as jet_interpreter
from didax._src.primitives.jit_call import closed_call_p
from didax._src.transforms.jet_rules import jet_rules
from didax.experimental.jet import jet

ORDER = 5
RTOL = 1e-10


def _leaves(tree):
    return [np.asarray(x) for x in didax.tree_util.tree_leaves(tree)]


def assert_jets_equal(got, want, rtol=RTOL):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.shape, g.dtype) == (w.shape, w.dtype), (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)


def _series(rng, primals, order=ORDER):
    return tuple(tuple(rng.normal(size=np.shape(p)) for _ in range(order)) for p in primals)


def _conv(lib_lax, x, w):
    return lib_lax.conv_general_dilated(x, w, (1,), "SAME")


def _scatter_add(lib_jnp, x, y):
    return x.at[np.array([0, 2, 0])].add(y)


# (name, program(lax, jnp, *xs), primals): each program applies the primitives it is named
# after; the primals lie in the functions' domains (ties where a rule splits them).
A = np.array([0.3, -0.7, 1.2, 0.5])
B = np.array([0.9, 0.4, -0.2, 1.1])
P = np.array([0.6, 1.3, 2.1, 0.8])  # positive
U = np.array([0.3, -0.5, 0.7, 0.1])  # in (-1, 1)
TIES = np.array([1.0, 1.0, 0.5, 1.0])
CASES = [
    ("neg_add_sub", lambda lax, jnp, x, y: lax.sub(lax.add(x, y), lax.neg(y * 2.0)), (A, B)),
    ("complex_real_imag_conj", lambda lax, jnp, x, y: lax.real(lax.complex(x, y) * lax.conj(
        lax.complex(y, x))) + lax.imag(lax.complex(x, y) ** 2), (A, B)),
    ("shape_ops", lambda lax, jnp, x: jnp.concatenate([
        jnp.reshape(jnp.broadcast_to(x, (2, 4)).T, (8,))[::-1][1:5], jnp.squeeze(
            jnp.expand_dims(x, 0), 0), jnp.pad(x, (1, 2), constant_values=0.5)]), (A,)),
    ("split", lambda lax, jnp, x: lax.split(x, (1, 3))[1] * jnp.split(x, 2)[0][0], (A,)),
    ("sums", lambda lax, jnp, x: jnp.sum(x * x) + jnp.cumsum(x) + lax.reduce_window(
        jnp.concatenate([x, x]), 0.0, lax.add, (5,), (1,), "VALID"), (A,)),
    ("fft", lambda lax, jnp, x: jnp.fft.fft(x).real * jnp.fft.fft(x).imag, (A,)),
    ("select_n", lambda lax, jnp, x, y: jnp.where(x > y, jnp.sin(x), y * y), (A, B)),
    ("dynamic_slices", lambda lax, jnp, x, y: lax.dynamic_update_slice(
        x, lax.dynamic_slice(y, (1,), (2,)) ** 2, (2,)), (A, B)),
    ("gather_scatter_add", lambda lax, jnp, x, y: _scatter_add(jnp, x, y[np.array(
        [3, 1, 1])] ** 2), (A, B)),
    ("convert_element_type", lambda lax, jnp, x: jnp.sin(x.astype(np.float32)).astype(
        np.float64), (A,)),
    ("zero_series", lambda lax, jnp, x, y: jnp.sign(x) * jnp.floor(y * 3) + jnp.ceil(x) * x
     + jnp.round(y) + jnp.where(jnp.isfinite(x) & (x != y) & (x <= y) & (x >= -y) & (
         x < 1) & (x == x), x, 0.0) + lax.stop_gradient(x) * x, (A, B)),
    ("bitcast", lambda lax, jnp, x: lax.bitcast_convert_type(x, np.int64), (A,)),
    ("mul_div", lambda lax, jnp, x, y: x * y / (y + 2.0) + 1.0 / x, (A, B)),
    ("dot_general", lambda lax, jnp, x, y: jnp.dot(jnp.outer(x, y), y) @ jnp.outer(y, x),
     (A, B)),
    ("conv_general_dilated", lambda lax, jnp, x, y: _conv(
        lax, x.reshape(1, 1, 4), y[:3].reshape(1, 1, 3)), (A, B)),
    ("exp_expm1", lambda lax, jnp, x: jnp.exp(x) * jnp.expm1(x), (A,)),
    ("log_log1p", lambda lax, jnp, x: jnp.log(x) + jnp.log1p(x * 0.5), (P,)),
    ("pow", lambda lax, jnp, x, y: lax.pow(x, y), (P, B)),
    ("pow_constant_base", lambda lax, jnp, y: lax.pow(2.5, y), (B,)),
    ("pow_constant_exponent", lambda lax, jnp, x: lax.pow(x, 1.7), (P,)),
    ("integer_pow", lambda lax, jnp, x: x ** 3 + lax.integer_pow(x, 6), (A,)),
    ("integer_pow_at_zero", lambda lax, jnp, x: x ** 3, (np.zeros(3),)),
    ("integer_pow_negative", lambda lax, jnp, x: lax.integer_pow(x, -3), (A,)),
    ("square_sqrt_rsqrt", lambda lax, jnp, x: lax.square(x) * jnp.sqrt(x) + lax.rsqrt(x),
     (P,)),
    ("sin_cos", lambda lax, jnp, x: jnp.sin(x) * jnp.cos(2 * x), (A,)),
    ("sinh_cosh", lambda lax, jnp, x: jnp.sinh(x) / jnp.cosh(x * 0.5), (A,)),
    ("tanh_logistic", lambda lax, jnp, x: jnp.tanh(x) + lax.logistic(x * 2), (A,)),
    ("asinh_acosh_atanh", lambda lax, jnp, x, y: jnp.arcsinh(x) + jnp.arccosh(x + 1.5)
     + jnp.arctanh(y), (A, U)),
    ("atan2", lambda lax, jnp, x, y: jnp.arctan2(x, y), (A, B)),
    ("erf_erfc_erf_inv", lambda lax, jnp, x, y: lax.erf(x) * lax.erfc(x) + lax.erf_inv(y),
     (A, U)),
    ("abs", lambda lax, jnp, x: jnp.abs(x), (np.array([0.3, -0.7, 0.0]),)),
    ("rem", lambda lax, jnp, x, y: lax.rem(x * 5, y), (P, P[::-1])),  # (see test_rem)
    ("max_min_ties", lambda lax, jnp, x, y: lax.max(x, y) * lax.min(x, y * 2), (TIES, TIES)),
    ("clamp", lambda lax, jnp, lo, x, hi: lax.clamp(lo, x, hi), (np.array([0.5, 0.5, 0.5, 1.0]),
     np.array([0.5, 0.7, 1.0, 1.0]), np.array([1.0, 1.0, 1.0, 1.0]))),
    ("reduce_max_min", lambda lax, jnp, x: jnp.max(x) * jnp.min(x.reshape(2, 2), axis=0),
     (TIES,)),
    ("cumulative", lambda lax, jnp, x: lax.cumprod(x) + lax.cummax(x) + lax.cummin(
        x, reverse=True), (TIES,)),
    ("cumprod_zero", lambda lax, jnp, x: lax.cumprod(x, reverse=True), (np.array(
        [0.5, 0.0, 2.0, 1.5]),)),
    ("jit", lambda lax, jnp, x: lax.cos(jax_or_didax(lax).jit(jnp.sin)(x)), (A,)),
]

LOOSE = {"convert_element_type": 1e-6}  # (float32 in the middle: rounded differently)


def jax_or_didax(lax_module):
    return didax if lax_module is lax else jax


@needs_jax
@pytest.mark.parametrize("name,program,primals", CASES, ids=[c[0] for c in CASES])
def test_rule_against_jax(name, program, primals):
    series = _series(np.random.default_rng(len(name)), primals)
    with both_x64():
        got = jet(lambda *xs: program(lax, jnp, *xs), primals, series)
        want = jax_jet(lambda *xs: program(jax.lax, jax.numpy, *xs), primals, series)
    assert_jets_equal(got, want, LOOSE.get(name, RTOL))


def test_cases_cover_the_rule_table():
    """Every rule in the table runs in a case above (or one of the tests below)."""
    ran = set()
    elsewhere = {"add_any", "closed_call",  # (a gradient's backward pass; test_closed_call)
                 "tan", "asin", "acos", "atan", "lgamma", "digamma"}  # (test_against_nested_jvp)
    original = jet_interpreter.JetInterpreter.process_primitive

    def recording(self, prim, args, params):
        if any(isinstance(x, jet_interpreter.JetTracer) and x._interp is self for x in args):
            ran.add(prim.name)
        return original(self, prim, args, params)

    jet_interpreter.JetInterpreter.process_primitive = recording
    try:
        with enable_x64(True):
            for _, program, primals in CASES:
                jet(lambda *xs, p=program: p(lax, jnp, *xs), primals,
                    _series(np.random.default_rng(0), primals, 2))
    finally:
        jet_interpreter.JetInterpreter.process_primitive = original
    missing = {p.name for p in jet_rules} - ran - elsewhere
    assert not missing, missing


@needs_jax
def test_tanh_sin_exp_cube_composition():
    def f(np_):
        return lambda x: np_.tanh(np_.sin(np_.exp(x))) ** 3

    with both_x64():
        got = jet(f(jnp), (0.7,), ((1., .5, -.25, .125),))
        want = jax_jet(f(jax.numpy), (0.7,), ((1., .5, -.25, .125),))
    assert_jets_equal(got, want)
    with both_x64(False):  # float32 too, and a non-scaled series
        got = jet(f(jnp), (np.float32(0.7),), ((1., .5, -.25),), factorial_scaled=False)
        want = jax_jet(f(jax.numpy), (np.float32(0.7),), ((1., .5, -.25),),
                       factorial_scaled=False)
    assert_jets_equal(got, want, rtol=1e-5)


def _taylor_by_jvp(f, x, v, order):
    """The derivatives d^k/dt^k f(x + t v) at t = 0, k = 0..order, by nested jvp."""
    g = lambda t: f(x + t * v)  # noqa: E731
    derivs = []
    for _ in range(order + 1):
        derivs.append(g)
        g = (lambda h: lambda t: didax.jvp(h, (t,), (1.0,))[1])(g)
    return [d(0.0) for d in derivs]


@pytest.mark.parametrize("f", [
    lambda x: jnp.exp(jnp.sin(x)) / (1 + x * x),
    lambda x: jnp.sqrt(jnp.cosh(x)) * jnp.arctan2(x, 2.0) + lax.erf(x) ** 2,
    lambda x: jnp.log1p(jnp.tanh(x) ** 2) - lax.logistic(x) * lax.pow(1.5 + x, x),
    lambda x: lax.rem(jnp.exp(x) * -3.0, 0.4 + x * x) * x,  # (a negative quotient)
    # rules beyond JAX's jet
    lambda x: jnp.tan(x) * jnp.arcsin(x) + jnp.arccos(x * x) / jnp.arctan(x + 1),
    lambda x: lax.lgamma(jnp.exp(x)) * lax.digamma(x + 2),
], ids=["exp_sin_div", "sqrt_cosh_atan2_erf", "log1p_tanh_logistic_pow", "rem",
        "tan_asin_acos_atan", "lgamma_digamma"])
def test_against_nested_jvp(f):
    with enable_x64(True):
        want = _taylor_by_jvp(f, 0.4, 1.0, 4)
        p, s = jet(f, (0.4,), ((1.0, 0.0, 0.0, 0.0),))
        assert_jets_equal([p] + s, want, rtol=1e-9)


def f_mixed(x, y):
    return jnp.sum(jnp.tanh(x * y) * jnp.exp(-x)) + jnp.max(jnp.sin(x))


def test_jit_around_and_inside():
    x, y = A, B
    series = _series(np.random.default_rng(0), (x, y), 3)
    with enable_x64(True):
        want = jet(f_mixed, (x, y), series)
        outer = didax.jit(lambda x, y, s: jet(f_mixed, (x, y), s))(x, y, series)
        inner = jet(didax.jit(f_mixed), (x, y), series)
        nested = jet(lambda x, y: didax.jit(f_mixed)(x, y) * 2, (x, y), series)
    assert_jets_equal(outer, want)
    assert_jets_equal(inner, want)
    assert_jets_equal(nested, (want[0] * 2, [t * 2 for t in want[1]]))


def test_vmap_of_jet_and_jet_of_vmap():
    xs = np.stack([A, B, P])
    ts = np.random.default_rng(1).normal(size=(3, 2, 4))
    with enable_x64(True):
        batched = didax.vmap(lambda x, t: jet(f_mixed, (x, B), ((t[0], t[1]), (t[1], t[0]))))(
            xs, ts)
        loop = [jet(f_mixed, (x, B), ((t[0], t[1]), (t[1], t[0]))) for x, t in zip(xs, ts)]
        assert_jets_equal(batched, didax.tree_util.tree_map(lambda *a: np.stack(a), *loop))
        inside = jet(didax.vmap(jnp.sin), (xs,), ((ts[:, 0], ts[:, 1]),))
        direct = jet(jnp.sin, (xs,), ((ts[:, 0], ts[:, 1]),))
    assert_jets_equal(inside, direct)


def test_custom_rules_and_checkpoints_expand_to_their_bodies():
    """custom_jvp and custom_vjp functions are differentiated through their bodies (their
    rules give first derivatives only), as are checkpointed functions."""
    @didax.custom_jvp
    def f(x):
        return jnp.sin(x) * x

    f.defjvp(lambda p, t: (f(p[0]), 100.0 * t[0]))  # (deliberately wrong: jet ignores it)

    @didax.custom_vjp
    def g(x):
        return jnp.exp(x) * x

    g.defvjp(lambda x: (g(x), x), lambda r, ct: (100.0 * ct,))
    series = ((1.0, 0.5, -0.25),)
    with enable_x64(True):
        for custom, plain in ((f, lambda x: jnp.sin(x) * x), (g, lambda x: jnp.exp(x) * x)):
            assert_jets_equal(jet(custom, (0.7,), series), jet(plain, (0.7,), series))
            assert_jets_equal(jet(didax.jit(custom), (0.7,), series),
                              jet(plain, (0.7,), series))
        assert_jets_equal(jet(didax.checkpoint(lambda x: jnp.sin(x) * x), (0.7,), series),
                          jet(lambda x: jnp.sin(x) * x, (0.7,), series))
        relu = jet(didax.nn.relu, (0.7,), series)
    assert_jets_equal(relu, (0.7, [1.0, 0.5, -0.25]))


def test_closed_call():
    closed = didax.make_jaxpr(lambda x: jnp.sin(x) * x)(0.5)
    call = lambda x: closed_call_p.bind(x, call_jaxpr=closed)[0]  # noqa: E731
    series = ((1.0, 0.5, -0.25),)
    assert_jets_equal(jet(call, (0.5,), series), jet(lambda x: jnp.sin(x) * x, (0.5,), series))


def test_differentiating_a_jet():
    """grad of a jet's term, and the jet of a gradient (its backward pass adds with add_any)."""
    f = lambda x: jnp.sin(x) * jnp.exp(x)  # noqa: E731
    series = ((1.0, 0.0, 0.0),)
    with both_x64():
        got = didax.grad(lambda x: jet(f, (x,), series)[1][1])(0.7)
        want = jax.grad(lambda x: jax_jet(lambda x: jax.numpy.sin(x) * jax.numpy.exp(x),
                                          (x,), series)[1][1])(0.7)
        np.testing.assert_allclose(got, want, rtol=RTOL)
        got = jet(didax.grad(f), (0.7,), series)
        want = jax_jet(jax.grad(lambda x: jax.numpy.sin(x) * jax.numpy.exp(x)), (0.7,),
                       series)
    assert_jets_equal(got, want)


@needs_jax
def test_pytree_outputs_and_inputs():
    def f(np_):
        return lambda x, y: {"b": x, "a": [np_.sin(x) * y, np.float32(2.0), y > 0]}

    primals, series = [0.3, 2.0], [[1.0, 0.5], [0.25, -1.0]]
    with both_x64():
        got = jet(f(jnp), primals, series)
        want = jax_jet(f(jax.numpy), primals, series)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    assert_jets_equal(got, want)
    with both_x64():  # no terms: the value, and empty series
        got = jet(f(jnp), primals, [[], []])
        want = jax_jet(f(jax.numpy), primals, [[], []])
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    assert_jets_equal(got, want)


def test_python_control_flow_reads_the_primal():
    """As under jvp (JAX's jet refuses to branch on a value with a series)."""
    f = lambda x: jnp.sin(x) if x > 0 else jnp.cos(x)  # noqa: E731
    series = ((1.0, 0.5),)
    assert_jets_equal(jet(f, (0.5,), series), jet(jnp.sin, (0.5,), series))
    assert_jets_equal(jet(f, (-0.5,), series), jet(jnp.cos, (-0.5,), series))


def test_factorial_scaling():
    """Scaled terms are derivatives: the k-th is k! times the plain Taylor coefficient."""
    with enable_x64(True):
        _, scaled = jet(jnp.exp, (0.5,), ((1.0, 0.0, 0.0),))
        _, plain = jet(jnp.exp, (0.5,), ((1.0, 0.0, 0.0),), factorial_scaled=False)
    for k, (s, p) in enumerate(zip(scaled, plain), 1):
        np.testing.assert_allclose(s, math.exp(0.5), rtol=RTOL)
        np.testing.assert_allclose(p, math.exp(0.5) / math.factorial(k), rtol=RTOL)


@pytest.mark.parametrize("program", [
    lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x),
    lambda x: lax.fori_loop(0, 3, lambda i, c: jnp.sin(c), x),
    lambda x: lax.cbrt(x),
], ids=["cond", "scan", "cbrt"])
def test_no_rule_raises(program):
    with pytest.raises(NotImplementedError, match=r"jet has no rule for the primitive '(cond|"
                       r"scan|cbrt)'"):
        jet(program, (0.5,), ((1.0, 0.0),))


@pytest.mark.parametrize("primals,series,error,match", [
    (0.5, ((1.0,),), TypeError, "must be a tuple or list"),
    ((0.5,), ((1.0,), (1.0,)), ValueError, "1 primals but 2 series"),
    ((0.5, 0.2), ((1.0,), (1.0, 2.0)), ValueError, "inconsistent lengths"),
    (({"a": 0.5},), (({"a": 1.0},),), ValueError, "not an array"),
    ((3,), ((1,),), TypeError, "floating-point"),
    ((0.5,), ((np.ones(2),),), ValueError, "shape"),
    ((np.float32(0.5),), ((np.float64(1.0),),), TypeError, "dtype float64"),
    ((0.5,), (1.0,), TypeError, "sequence of terms"),
])
def test_bad_inputs(primals, series, error, match):
    with enable_x64(True), pytest.raises(error, match=match):
        jet(jnp.sin, primals, series)
