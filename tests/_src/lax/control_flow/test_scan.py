"""lax.scan: values and derivatives against the same loop unrolled in Python, vmap against a
loop, and staged jaxprs that keep the loop (no unrolled body, also after grad)."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src import ir
from didax._src.config import enable_x64
from didax.test_util import check_grads


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


W = np.array([[0.5, -0.3], [0.2, 0.8]])


def step(carry, x):
    h, s = carry
    h = jnp.tanh(W @ h + x)
    return (h, s + jnp.sum(h * x)), jnp.sin(h) * s


def unrolled(f, init, xs, reverse=False):
    carry, ys = init, []
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for i in order:
        carry, y = f(carry, xs[i])
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, jnp.stack(ys)


INIT = (np.array([0.1, -0.2]), np.float64(0.3))
XS = np.linspace(-1.0, 1.0, 10).reshape(5, 2)


def _close(a, b):
    for u, v in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("reverse", [False, True])
def test_values_match_unrolled_loop(reverse):
    _close(lax.scan(step, INIT, XS, reverse=reverse), unrolled(step, INIT, XS, reverse))


def test_gradients_match_unrolled_loop():
    def loss(fn):
        return lambda init, xs: jnp.sum(fn(step, init, xs)[1]) + fn(step, init, xs)[0][1]

    g_scan = jax.grad(loss(lax.scan), argnums=(0, 1))(INIT, XS)
    g_loop = jax.grad(loss(unrolled), argnums=(0, 1))(INIT, XS)
    _close(g_scan, g_loop)


def test_check_grads_to_second_order():
    f = lambda h, xs: lax.scan(lambda c, x: (jnp.sin(c) * x, c * x), h, xs)  # noqa: E731
    check_grads(f, (np.array([0.3, 0.5]), XS), order=2, modes=("fwd", "rev"))


def test_grad_jaxpr_keeps_the_loop():
    loss = lambda h, xs: jnp.sum(lax.scan(step, (h, 0.0), xs)[1])  # noqa: E731
    closed = jax.make_jaxpr(jax.grad(loss))(INIT[0], XS)
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    assert "scan" in names
    assert names.count("tanh") == 0  # the body is inside scan equations, never unrolled
    ir.check_jaxpr(closed.jaxpr)


def test_vmap_of_scan_against_a_loop():
    inits = np.array([[0.1, 0.2], [0.3, -0.1], [0.0, 0.5]])
    f = lambda h: lax.scan(step, (h, 0.0), XS)  # noqa: E731
    batched = jax.vmap(f)(inits)
    for i, h in enumerate(inits):
        single = f(h)
        _close(jax.tree_util.tree_map(lambda b, i=i: b[i], batched), single)
    xs_batch = np.stack([XS, 2 * XS])
    out = jax.vmap(lambda xs: lax.scan(step, INIT, xs)[1])(xs_batch)
    _close(out, jnp.stack([lax.scan(step, INIT, XS)[1], lax.scan(step, INIT, 2 * XS)[1]]))


def test_grad_of_vmap_of_scan_and_nested_scans():
    def inner(c, x):
        c2, _ = lax.scan(lambda a, b: (a * jnp.cos(b) + b, a), c, x * np.ones(3))
        return c2, c2 * x

    def loss(c):
        return jnp.sum(lax.scan(inner, c, XS[:, 0])[1])

    def loss_u(c):
        def inner_u(c, x):
            c2, _ = unrolled(lambda a, b: (a * jnp.cos(b) + b, a), c, x * np.ones(3))
            return c2, c2 * x
        return jnp.sum(unrolled(inner_u, c, XS[:, 0])[1])

    _close(jax.grad(loss)(0.7), jax.grad(loss_u)(0.7))
    g = jax.grad(lambda cs: jnp.sum(jax.vmap(loss)(cs)))(np.array([0.7, 0.1]))
    _close(g, [jax.grad(loss)(0.7), jax.grad(loss)(0.1)])


def test_carry_type_change_is_an_error():
    with pytest.raises(TypeError, match=r"carry 0 goes in as f64\[\] and comes out as f64\[2\]"):
        lax.scan(lambda c, x: (c * np.ones(2), x), np.float64(1.0), XS)
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.scan(lambda c, x: ((c, c), x), np.float64(1.0), XS)
    with pytest.raises(ValueError, match="inconsistent lengths"):
        lax.scan(lambda c, x: (c, x), 0.0, (np.ones(3), np.ones(4)))


def test_length_without_xs():
    c, ys = lax.scan(lambda c, _: (c + 1.0, c * 2.0), 0.0, None, length=4)
    assert float(c) == 4.0
    np.testing.assert_array_equal(np.asarray(ys), [0.0, 2.0, 4.0, 6.0])


def test_jaxpr_prints_like_jax():
    with enable_x64(False):
        closed = jax.make_jaxpr(lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs))(
            0.0, jnp.arange(3.0))
    assert str(closed) == (  # verbatim from JAX 0.10.2
        "{ lambda ; a:f32[] b:f32[3]. let\n"
        "    c:f32[] d:f32[3] = scan[\n"
        "      jaxpr={ lambda ; e:f32[] f:f32[]. let\n"
        "          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e\n"
        "          h:f32[] = add g f\n"
        "          i:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e\n"
        "          j:f32[] = mul i f\n"
        "        in (h, j) }\n"
        "      length=3\n"
        "      num_carry=1\n"
        "      num_consts=0\n"
        "      reverse=False\n"
        "      unroll=1\n"
        "    ] a b\n"
        "  in (c, d) }")


def test_map_and_fori_loop_are_scans():
    np.testing.assert_array_equal(np.asarray(lax.map(lambda x: x * 2.0, np.arange(4.0))),
                                  [0.0, 2.0, 4.0, 6.0])
    assert float(lax.fori_loop(0, 5, lambda i, v: v + i * v, 1.0)) == 120.0

    def looped(x):
        return lax.fori_loop(0, 3, lambda i, v: jnp.sin(v) * x, x)

    def by_hand(x):
        v = x
        for _ in range(3):
            v = jnp.sin(v) * x
        return v

    np.testing.assert_allclose(float(jax.grad(looped)(0.5)), float(jax.grad(by_hand)(0.5)),
                               rtol=1e-13)
    names = [e.primitive.name for e in jax.make_jaxpr(looped)(0.5).jaxpr.eqns]
    assert names == ["scan"]


def lstm_cell(params, carry, x):
    wx, wh, b = params
    h, c = carry
    z = x @ wx + h @ wh + b
    i, f, o, g = jnp.split(z, 4, axis=-1)
    c = lax.logistic(f) * c + lax.logistic(i) * jnp.tanh(g)
    h = lax.logistic(o) * jnp.tanh(c)
    return (h, c), h


def test_lstm_with_scan_matches_a_hand_unrolled_lstm():
    rng = np.random.default_rng(0)
    hidden, inputs, batch, steps = 3, 2, 4, 6
    params = (rng.normal(size=(inputs, 4 * hidden)) * 0.5,
              rng.normal(size=(hidden, 4 * hidden)) * 0.5, np.zeros(4 * hidden))
    xs = rng.normal(size=(steps, batch, inputs))
    init = (np.zeros((batch, hidden)), np.zeros((batch, hidden)))

    def loss_scan(p):
        _, hs = lax.scan(lambda c, x: lstm_cell(p, c, x), init, xs)
        return jnp.sum(hs ** 2)

    def loss_unrolled(p):
        carry, total = init, 0.0
        for t in range(steps):
            carry, h = lstm_cell(p, carry, xs[t])
            total = total + jnp.sum(h ** 2)
        return total

    np.testing.assert_allclose(float(loss_scan(params)), float(loss_unrolled(params)),
                               rtol=1e-12)
    _close(jax.grad(loss_scan)(params), jax.grad(loss_unrolled)(params))


def test_checkpointed_scan_body_saves_less_and_agrees():
    from didax.ad_checkpoint import saved_residuals

    def body(c, x):
        for _ in range(4):
            c = jnp.sin(c) * x + jnp.cos(c)
        return c, c

    def loss(remat):
        f = jax.checkpoint(body) if remat else body
        return lambda c: jnp.sum(lax.scan(f, c, XS[:, 0])[1])

    c0 = np.float64(0.3)
    assert len(saved_residuals(loss(True), c0)) < len(saved_residuals(loss(False), c0))
    _close(jax.grad(loss(True))(c0), jax.grad(loss(False))(c0))


def test_grad_of_vmap_of_scan():
    hs = np.array([[0.1, 0.2], [0.3, -0.1]])
    g = jax.grad(lambda h: jnp.sum(jax.vmap(lambda v: lax.scan(step, (v, 0.0), XS)[1])(h)))(hs)
    expected = np.stack([np.asarray(jax.grad(
        lambda v: jnp.sum(lax.scan(step, (v, 0.0), XS)[1]))(h)) for h in hs])
    _close(g, expected)


def test_associative_scan_and_fori_loop_with_traced_bounds():
    x = np.arange(1.0, 8.0)
    _close(lax.associative_scan(jnp.add, x), np.cumsum(x))
    _close(lax.associative_scan(jnp.multiply, x, reverse=True), np.cumprod(x[::-1])[::-1])
    pair = lax.associative_scan(lambda a, b: (a[0] + b[0], a[1] * b[1]), (x, x))
    _close(pair, (np.cumsum(x), np.cumprod(x)))
    closed = jax.make_jaxpr(lambda n: lax.fori_loop(0, n, lambda i, v: v + 1.0, 0.0))(3)
    assert [e.primitive.name for e in closed.jaxpr.eqns][-1] == "while"
    assert float(ir.eval_jaxpr(closed.jaxpr, closed.consts, 5)[0]) == 5.0


def test_check_grads_through_fori_loop():
    f = lambda x: lax.fori_loop(0, 4, lambda i, v: jnp.sin(v) * x + i, x)  # noqa: E731
    check_grads(f, (np.array([0.3, 0.6]),), order=2)


def test_reverse_mode_does_not_stack_invariant_or_forwarded_residuals():
    def loss(w, xs):
        def body(c, x):
            return c + jnp.sum(jnp.sin(x * w)), None  # residuals: cos(x*w) (per step), x, w
        return lax.scan(body, 0.0, xs)[0]

    w, xs = jnp.float32(0.5), jnp.linspace(0.0, 1.0, 12).reshape(4, 3)
    closed = jax.make_jaxpr(jax.grad(loss))(w, xs)
    scans = [e for e in closed.eqns if e.primitive.name == "scan"]
    forward, backward = scans
    # the forward scan stacks only cos(x * w): w is passed once, x read from xs itself
    stacked = [v for v in forward.outvars if v.aval.shape[:1] == (4,)]
    assert len(stacked) == 1
    assert any(a is closed.jaxpr.invars[1] for a in backward.invars)
    np.testing.assert_allclose(jax.grad(loss)(w, xs),
                               np.sum(np.cos(np.asarray(xs) * 0.5) * np.asarray(xs)), rtol=1e-5)
