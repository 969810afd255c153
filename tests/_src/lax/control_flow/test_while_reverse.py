"""Reverse mode through while loops whose trip count depends on the data, inside jit and
vmap (JAX refuses): against eager differentiation and finite differences, to second order;
the bounded-memory backward pass (`snapshots`) against recording every iteration, bit for
bit, and its peak memory."""
import tracemalloc

import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64
from didax.test_util import check_grads


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


def newton_sqrt(a, snapshots=None):
    """sqrt(a) by Newton's method, to convergence."""
    return lax.while_loop(lambda s: jnp.abs(s * s - a) > 1e-12, lambda s: 0.5 * (s + a / s),
                          a, snapshots=snapshots)


def cube_root(c, snapshots=None):
    """The root of x**3 - c in [0, 10]: bisection to a bracket of 1e-10, then the secant."""
    def body(s):
        lo, hi = s
        mid = 0.5 * (lo + hi)
        above = mid ** 3 - c > 0
        return jnp.where(above, lo, mid), jnp.where(above, mid, hi)

    lo, hi = lax.while_loop(lambda s: s[1] - s[0] > 1e-10, body,
                            (jnp.zeros_like(c), jnp.full_like(c, 10.0)), snapshots=snapshots)
    f_lo, f_hi = lo ** 3 - c, hi ** 3 - c
    return lo - f_lo * (hi - lo) / (f_hi - f_lo)


def integrate(k, y0, snapshots=None):
    """y' = -k y sin(t) + cos(y)/10 from t = 0 to 2 by Heun's method with adaptive steps."""
    def rhs(t, y):
        return -k * y * jnp.sin(t) + 0.1 * jnp.cos(y)

    def body(s):
        t, y, h = s
        h = jnp.minimum(h, 2.0 - t)
        f1 = rhs(t, y)
        euler = y + h * f1
        heun = y + 0.5 * h * (f1 + rhs(t + h, euler))
        err = jnp.abs(heun - euler) + 1e-12
        accept = err < 1e-5
        h_next = h * jnp.clip(0.9 * jnp.sqrt(1e-5 / err), 0.2, 5.0)
        return jnp.where(accept, t + h, t), jnp.where(accept, heun, y), h_next

    return lax.while_loop(lambda s: s[0] < 2.0, body, (0.0, y0, 0.1), snapshots=snapshots)[1]


PROGRAMS = {"newton": (newton_sqrt, (2.0,)), "bisection": (cube_root, (3.0,)),
            "adaptive ode": (integrate, (0.7, 1.3))}


def grad_all(f, args, **kw):
    return jax.grad(lambda *a: f(*a, **kw), argnums=tuple(range(len(args))))


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_jit_of_grad_matches_eager_and_finite_differences(name):
    f, args = PROGRAMS[name]
    eager = grad_all(f, args)(*args)  # (the trip count known: the iterates are recorded)
    for got in (jax.jit(grad_all(f, args))(*args), jax.grad(jax.jit(f), argnums=tuple(
            range(len(args))))(*args)):
        for g, e in zip(got, eager):
            np.testing.assert_allclose(g, e, rtol=1e-10)
    check_grads(jax.jit(f), args, order=1, modes=("rev",), eps=1e-6)


@pytest.mark.parametrize("snapshots", [2, 3, 7])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_snapshots_give_the_same_bits(name, snapshots):
    f, args = PROGRAMS[name]
    every = jax.jit(grad_all(f, args))(*args)
    bounded = jax.jit(grad_all(f, args, snapshots=snapshots))(*args)
    for a, b in zip(every, bounded):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


def test_vmap_of_grad_runs_each_lane_for_its_own_trip_count():
    a = jnp.array([2.0, 9.0, 100.0, 0.5])
    want = 0.5 / np.sqrt(np.asarray(a))
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(newton_sqrt)))(a), want, rtol=1e-10)
    np.testing.assert_allclose(jax.vmap(jax.jit(jax.grad(newton_sqrt)))(a), want, rtol=1e-10)
    np.testing.assert_allclose(  # vmap inside grad: the masked loop of all lanes
        jax.jit(jax.grad(lambda v: jnp.sum(jax.vmap(newton_sqrt)(v))))(a), want, rtol=1e-10)
    c = jnp.array([1.0, 8.0, 27.0])
    bounded = jax.jit(jax.vmap(jax.grad(lambda v: cube_root(v, snapshots=3))))(c)
    np.testing.assert_allclose(bounded, 1 / (3 * np.asarray(c) ** (2 / 3)), rtol=1e-8)
    k, y0 = jnp.array([0.3, 0.7, 1.5]), jnp.array([1.3, 0.2, 2.0])
    lanes = jax.jit(jax.vmap(grad_all(integrate, (k, y0))))(k, y0)
    for i in range(3):
        one = grad_all(integrate, (0.0, 0.0))(float(k[i]), float(y0[i]))
        np.testing.assert_allclose([lanes[0][i], lanes[1][i]], one, rtol=1e-10)


def test_second_order_inside_jit():
    want = -0.25 * 2.0 ** -1.5
    np.testing.assert_allclose(jax.jit(jax.hessian(newton_sqrt))(2.0), want, rtol=1e-10)
    np.testing.assert_allclose(jax.jit(jax.jacfwd(jax.grad(newton_sqrt)))(2.0), want,
                               rtol=1e-10)
    np.testing.assert_allclose(jax.jit(jax.grad(jax.grad(newton_sqrt)))(2.0), want, rtol=1e-10)
    check_grads(jax.jit(newton_sqrt), (2.0,), order=2, modes=("fwd", "rev"), eps=1e-5)


def test_linearize_and_vjp_inside_jit_and_a_while_inside_scan():
    def linearized(a, t):
        return jax.linearize(newton_sqrt, a)[1](t)

    np.testing.assert_allclose(jax.jit(linearized)(2.0, 3.0), 3 * 0.5 / np.sqrt(2.0),
                               rtol=1e-10)
    vjp = jax.jit(lambda a, ct: jax.vjp(newton_sqrt, a)[1](ct)[0])
    np.testing.assert_allclose(vjp(2.0, 3.0), 3 * 0.5 / np.sqrt(2.0), rtol=1e-10)

    def roots(a):
        return lax.scan(lambda c, x: (c + newton_sqrt(x * c), None), a, jnp.arange(1.0, 4.0))[0]

    np.testing.assert_allclose(jax.jit(jax.grad(roots))(2.0), jax.grad(roots)(2.0), rtol=1e-10)


def test_snapshots_bound_the_memory_of_the_backward_pass():
    steps, width = 10_000, 256

    def loss(snapshots):
        def f(x, w):
            def body(s):
                i, v = s
                return i + 1, jnp.tanh(v * w) + 1e-3 * v
            out = lax.while_loop(lambda s: s[0] < steps, body, (0, x), snapshots=snapshots)
            return jnp.sum(out[1])
        return jax.jit(jax.grad(f, argnums=(0, 1)))

    x, w = np.linspace(-1, 1, width).astype(np.float32), np.float32(0.9)
    peaks, results = {}, {}
    for snapshots in (None, 100):
        g = loss(snapshots)
        g(x[:8].repeat(width // 8), w)  # (traced and compiled before measuring)
        tracemalloc.start()
        results[snapshots] = g(x, w)
        peaks[snapshots] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    every_iteration = steps * width * 4
    assert peaks[None] >= every_iteration  # one carry per iteration
    assert peaks[100] <= 0.1 * peaks[None]  # at most 100 carries
    for a, b in zip(results[None], results[100]):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
