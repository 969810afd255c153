"""Control flow on the native tier: scan, while_loop, fori_loop, cond and switch compiled
whole to C. Native tier == NumPy tier == eager (bitwise where only IEEE arithmetic runs,
within a few ulps through libm), JAX's values where JAX has the function, and no Python
per iteration when the body is native."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.compiler import passes
from didax._src.compiler.native.products import elementwise_products
from didax._src.config import enable_x64
from didax._src.ir import check_jaxpr

from .conftest import Tiers, assert_native, assert_same, executable, have_compiler

CONTROL = {"scan", "while", "cond"}
# added with the loops: a cell's gates are slices of one product, their gradients pads
LAYOUT = {"slice", "pad"}
LIBM_ULP = 64  # jit against eager evaluation: jit may round differently, compounded over loops


def _same(tiers_out, maxulp=0):
    """The native tier as the NumPy tier, bit for bit; the NumPy tier as eager evaluation,
    within `maxulp`."""
    native, numpy_, eager = tiers_out
    for n, m, e in zip(_leaves(native), _leaves(numpy_), _leaves(eager)):
        assert_same(m, e, maxulp)
        assert_same(n, m)


def _leaves(tree):
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in _leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in _leaves(t)]
    return [np.asarray(tree)]


def _source(jf, *args):
    exe = executable(jf, *args)
    return exe.native.source if exe.native.status == "ready" else ""


def _affine_scan(reverse, lax_like=lax):
    def f(c0, xs):
        def body(c, x):
            c = c * 3 + x  # integers wrap around
            return c, c - x
        return lax_like.scan(body, c0, xs, reverse=reverse)
    return f


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_scan_carries_and_stacked_outputs(dtype, reverse):
    rng = np.random.default_rng(0)
    with enable_x64(dtype == np.float64):
        if dtype == np.int32:
            c0 = rng.integers(2**30, 2**31 - 1, (3, 4), dtype=np.int32)
            xs = rng.integers(-2**31, 2**31 - 1, (7, 3, 4), dtype=np.int32)
        else:
            c0 = rng.standard_normal((3, 4)).astype(dtype)
            xs = rng.standard_normal((7, 3, 4)).astype(dtype)
            c0[0, 0], xs[2, 1, 1], xs[4, 2, 3] = np.nan, np.inf, -np.inf
        tiers = Tiers(_affine_scan(reverse))
        _same(tiers(c0, xs))
        assert_native(tiers.native, c0, xs)
        if dtype == np.int32:  # wrapped, as NumPy and JAX wrap
            with jax.enable_x64(False):
                want = jax.jit(_affine_scan(reverse, jax.lax))(c0, xs)
            for got, w in zip(tiers.native(c0, xs), want):
                np.testing.assert_array_equal(np.asarray(got), np.asarray(w))


def test_scan_runs_no_python_per_iteration():
    f = _affine_scan(False)
    jf = didax.jit(f)
    c0, xs = np.ones(4, np.float32), np.ones((50, 4), np.float32)
    jf(c0, xs)
    if not have_compiler():
        pytest.skip("no C compiler: the NumPy tier serves it (checked in test_tier.py)")
    plan = executable(jf, c0, xs).native.plan
    assert plan.python_equations == 0 and plan.python_segments == ()
    src = plan.source
    assert "for (npy_intp step" in src and "equations on the NumPy tier" not in src
    assert "static int body1(" in src


def test_scan_calls_back_for_equations_without_native_rules():
    """A body with an equation the tier has no rule for runs that equation as a NumPy-tier
    segment the C loop calls back: once per iteration, in order."""
    seen = []

    def f(c0, xs):
        def body(c, x):
            c = jnp.tanh(c * 0.5 + x) * 2.0 - 1.0
            didax.debug.callback(lambda v: seen.append(np.asarray(v).copy()), c)
            return c, c * c
        return lax.scan(body, c0, xs)

    c0, xs = np.zeros(3, np.float32), np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)
    jf = didax.jit(f)
    got = jf(c0, xs)
    if have_compiler():
        assert executable(jf, c0, xs).native.plan.python_equations == 1
    assert len(seen) == 5
    np.testing.assert_allclose(np.stack(seen), np.asarray(got[1]) ** 0.5 *
                               np.sign(np.stack(seen)), rtol=1e-6)
    seen.clear()
    with didax.disable_jit():
        want = f(c0, xs)
    for a, b in zip(got, want):
        assert_same(np.asarray(a), np.asarray(b), LIBM_ULP)


def test_mostly_python_body_stays_whole_on_numpy_tier():
    def f(x):
        def body(c, _):
            return jnp.cbrt(lax.cumlogsumexp(c, 0))[::-1] + 1.0, None
        return lax.scan(body, x, None, length=4)[0]

    tiers = Tiers(f)
    x = np.array([3.0, 1.0, 2.0], np.float32)
    _same(tiers(x))
    assert executable(tiers.native, x).native.status == "none"


def test_branches_that_only_pass_operands_on_run_natively():
    """A cond or switch choosing among its operands (a sampler's step keeping or taking a
    proposal: no equation in its branches) is native code, not a call back per iteration;
    operands swapped, repeated and replaced by constants."""
    def f(a, b, c):
        def body(k, s):
            a, b, c, n = s
            a, b, c = lax.cond(k % 2 == 0, lambda a, b, c: (b, a, c),
                               lambda a, b, c: (a, c, jnp.ones_like(b)), a, b, c)
            a, b = lax.switch(k % 3, [lambda a, b: (a, b), lambda a, b: (b, a),
                                      lambda a, b: (a, a)], a, b)
            return a * 1.5, b, c, n + 1
        return lax.fori_loop(0, 7, body, (a, b, c, 0))

    a = np.arange(3, dtype=np.float32)
    tiers = Tiers(f)
    _same(tiers(a, -a, np.full(3, 2.0, np.float32)))
    assert_native(tiers.native, a, -a, np.full(3, 2.0, np.float32))
    if have_compiler():
        assert executable(tiers.native, a, -a, np.full(3, 2.0, np.float32)
                          ).native.plan.python_equations == 0


def test_errors_inside_a_native_loop_propagate():
    def boom(v):
        if float(v) > 2:
            raise ValueError("too big")

    def f(c0):
        def body(c, _):
            c = c + 1.0
            didax.debug.callback(boom, c)
            return c, c * 2.0
        return lax.scan(body, c0, None, length=5)

    jf = didax.jit(f)
    with pytest.raises(Exception, match="too big"):
        jax_out = jf(np.float32(0.0))
        didax.effects_barrier() if hasattr(didax, "effects_barrier") else None
        del jax_out


def test_scan_xs_none_length_and_pytrees():
    def f(params, x):
        def body(carry, _):
            a, (b, n) = carry["a"], carry["bn"]
            a = a * params["w"] + b
            b = b - a * 0.25
            n = n + 1
            return {"a": a, "bn": (b, n)}, {"a2": a * a, "n": n}
        return lax.scan(body, {"a": x, "bn": (x * 2.0, np.int32(0))}, None, length=6)

    params = {"w": np.float32(0.9)}
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    tiers = Tiers(f)
    _same(tiers(params, x))
    assert_native(tiers.native, params, x)
    zero = Tiers(lambda x: lax.scan(lambda c, _: (c + 1.0, c), x, None, length=0))
    _same(zero(x))


def test_nested_scans_and_scan_inside_cond():
    def inner(c, x):
        return lax.scan(lambda d, y: (d * 0.5 + y * c, d - y), c, x)

    def f(c0, xs):
        def body(c, x):  # x: (4, 3)
            d, ys = inner(c, x)
            return d + 1.0, ys.sum(0)
        c, ys = lax.scan(body, c0, xs)
        return lax.cond(c.sum() > 0, lambda: lax.scan(lambda a, y: (a + y, a), c, ys)[1],
                        lambda: ys * 2.0)

    c0 = np.array([0.5, -1.0, 2.0], np.float32)
    xs = np.arange(60, dtype=np.float32).reshape(5, 4, 3) / 17
    tiers = Tiers(f)
    _same(tiers(c0, xs))
    _same(tiers(-c0 * 100, xs))
    assert_native(tiers.native, c0, xs)
    if have_compiler():
        assert "equations on the NumPy tier" not in _source(tiers.native, c0, xs)


def test_cond_inside_scan():
    def f(c0, xs):
        def body(c, x):
            c = lax.cond(x > 0, lambda c: c * x, lambda c: c - x, c)
            return c, c
        return lax.scan(body, c0, xs)

    tiers = Tiers(f)
    xs = np.array([1.5, -2.0, 0.5, -0.25, 3.0], np.float64)
    with enable_x64():
        c0 = np.array([1.0, -2.0], np.float64)
        _same(tiers(c0, xs))
        assert_native(tiers.native, c0, xs)


def _lstm_loss(np_like, lax_like):
    H = 8

    def loss(params, xs, ys):
        wx, wh, b = params

        def cell(carry, x):
            h, c = carry
            gates = x @ wx + h @ wh + b
            i, f = lax_like.logistic(gates[:, :H]), lax_like.logistic(gates[:, H:2 * H])
            g, o = np_like.tanh(gates[:, 2 * H:3 * H]), lax_like.logistic(gates[:, 3 * H:])
            c = f * c + i * g
            h = o * np_like.tanh(c)
            return (h, c), h

        zeros = np_like.zeros((2, H), np_like.float32)
        _, hs = lax_like.scan(cell, (zeros, zeros), xs)
        return np_like.mean((hs.sum(-1) - ys) ** 2)

    return loss


def test_grad_of_an_lstm_scan():
    """jit(grad) of a scan: the forward scan stacks residuals, the reverse scan reads them;
    both native; against the NumPy tier, eager and JAX."""
    rng = np.random.default_rng(1)
    params = tuple(rng.standard_normal(s).astype(np.float32) * 0.4
                   for s in [(3, 32), (8, 32), (32,)])
    xs = rng.standard_normal((6, 2, 3)).astype(np.float32)
    ys = rng.standard_normal((6, 2)).astype(np.float32)
    tiers = Tiers(didax.grad(_lstm_loss(jnp, lax)))
    native, numpy_, eager = tiers(params, xs, ys)
    want = jax.jit(jax.grad(_lstm_loss(jjnp, jax.lax)))(params, xs, ys)
    for n, m, e, w in zip(native, numpy_, eager, want):
        np.testing.assert_allclose(m, e, rtol=1e-5, atol=1e-6)
        assert_same(n, m)
        np.testing.assert_allclose(n, np.asarray(w), rtol=2e-5, atol=2e-6)
    assert_native(tiers.native, params, xs, ys)
    if have_compiler():
        src = _source(tiers.native, params, xs, ys)
        assert src.count("for (npy_intp step") == 2  # the forward and the reverse scan
        assert f"({5} - step" in src  # the reverse scan walks back


def test_scan_derivatives_numerically():
    """First and second derivatives of a scan, reverse and forward mode, each jitted on
    the native tier, against central differences of the native tier's own values."""
    def f(w, x0):
        def body(c, x):
            c = jnp.tanh(c * w + x)
            return c, c * w
        c, ys = lax.scan(body, x0, jnp.linspace(-1.0, 1.0, 4))
        return c + ys.sum()

    def central(fn, x, h):
        return (fn(x + h) - fn(x - h)) / (2 * h)

    with enable_x64():
        w, x0 = 0.7, 0.3
        jf = didax.jit(f)
        rev = didax.jit(didax.grad(f))
        fwd = didax.jit(lambda w: didax.jvp(lambda w: f(w, x0), (w,), (1.0,))[1])
        rev2 = didax.jit(didax.grad(didax.grad(f)))
        fwd2 = didax.jit(didax.jacfwd(didax.jacrev(f)))
        d1 = central(lambda w: float(jf(w, x0)), w, 1e-6)
        d2 = central(lambda w: float(rev(w, x0)), w, 1e-6)
        np.testing.assert_allclose(float(rev(w, x0)), d1, rtol=1e-7)
        np.testing.assert_allclose(float(fwd(w)), d1, rtol=1e-7)
        np.testing.assert_allclose(float(rev2(w, x0)), d2, rtol=1e-6)
        np.testing.assert_allclose(float(fwd2(w, x0)), d2, rtol=1e-6)
        for fn, args in [(rev, (w, x0)), (fwd, (w,)), (rev2, (w, x0)), (fwd2, (w, x0))]:
            assert_native(fn, *args)


def _while(lax_like):
    def f(x, limit):
        def cond(s):
            return (s[1] < limit) & (s[0] < 1000)

        def body(s):
            i, total, v = s
            v = v * 1.5 + 0.25
            return i + 1, total + v.sum(), v
        return lax_like.while_loop(cond, body, (np.int32(0), np.float32(0.0), x))
    return f


def test_while_loop_with_data_dependent_trip_count():
    tiers = Tiers(_while(lax))
    x = np.array([0.5, -0.25, 1.0], np.float32)
    for limit in [np.float32(0.0), np.float32(1.0), np.float32(50.0), np.float32(1e4)]:
        out = tiers(x, limit)
        _same(out)
        want = jax.jit(_while(jax.lax))(x, limit)
        for got, w in zip(out[0], want):
            np.testing.assert_array_equal(got, np.asarray(w))
    assert int(tiers(x, np.float32(0.0))[0][0]) == 0  # zero iterations: the initial value
    assert_native(tiers.native, x, np.float32(0.0))


def _fori(lax_like):
    def f(n, x):
        static = lax_like.fori_loop(0, 40, lambda i, v: v * 7 + i, x)
        traced = lax_like.fori_loop(0, n, lambda i, v: v * 7 + i, x)
        return static, traced
    return f


def test_fori_loop_static_and_traced_bounds_integer_wraparound():
    tiers = Tiers(_fori(lax))
    x = np.array([1, -3, 2**30], np.int32)
    for n in [np.int32(0), np.int32(40)]:
        out = tiers(n, x)
        _same(out)
        with jax.enable_x64(False):
            want = jax.jit(_fori(jax.lax))(n, x)
        np.testing.assert_array_equal(out[0][0], np.asarray(want[0]))
        np.testing.assert_array_equal(out[0][1], np.asarray(want[1]))
    assert_native(tiers.native, np.int32(3), x)


def _switch(np_like, lax_like):
    def f(i, x):
        return lax_like.switch(i, [lambda x: x * 2.0 + 1.0, lambda x: -x * x,
                                   lambda x: np_like.maximum(x, 0.5) - 3.0,
                                   lambda x: x / 4.0], x)
    return f


@pytest.mark.parametrize("index", [-7, 0, 1, 2, 3, 100])
def test_switch_clamps_its_index(index):
    x = np.array([-1.0, 0.25, 2.0, np.nan, -np.inf], np.float32)
    i = np.int32(index)
    tiers = _switch_tiers.setdefault("t", Tiers(_switch(jnp, lax)))
    _same(tiers(i, x))
    want = jax.jit(_switch(jjnp, jax.lax))(i, x)
    np.testing.assert_array_equal(tiers(i, x)[0], np.asarray(want))
    assert_native(tiers.native, i, x)


_switch_tiers: dict = {}


def _cond(lax_like):
    def f(p, x, k):
        return lax_like.cond(p, lambda x, k: (x * 2.0, k * 3), lambda x, k: (x - 1.0, k + 1),
                             x, k)
    return f


def test_cond_with_float64_and_int_operands():
    with both_x64():
        x = np.array([1.0, 2.5], np.float64)
        k = np.array([2**62, -5], np.int64)
        tiers = Tiers(_cond(lax))
        for p in [True, False]:
            out = tiers(np.bool_(p), x, k)
            _same(out)
            want = jax.jit(_cond(jax.lax))(np.bool_(p), x, k)
            for got, w in zip(out[0], want):
                np.testing.assert_array_equal(got, np.asarray(w))
        assert_native(tiers.native, np.bool_(True), x, k)


def test_results_are_fresh_arrays_each_call():
    """Buffers reused inside the loop never leak into results: a second call does not
    change the first call's values."""
    jf = didax.jit(_affine_scan(False))
    c0, xs = np.ones(3, np.float32), np.arange(12, dtype=np.float32).reshape(4, 3)
    first = [np.asarray(a) for a in jf(c0, xs)]
    copies = [a.copy() for a in first]
    jf(c0 * 5, xs * 2)
    for a, b in zip(first, copies):
        np.testing.assert_array_equal(a, b)


def test_intermediates_reused_across_calls():
    """Stacked intermediates (not results) are kept from call to call; each call still
    computes its own values, and a value a callback holds on to is never overwritten."""
    held = []

    def f(c0, xs):
        c, ys = lax.scan(lambda c, x: (c * 0.5 + x, c * x), c0, xs)
        didax.debug.callback(held.append, ys)
        return c, (ys * ys).sum(0)

    tiers = Tiers(f)
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    outs = [tiers(np.full(3, k, np.float32), xs * k) for k in (1.0, 2.0, 3.0)]
    for out in outs:
        _same(out)
    # three calls on each tier: native, NumPy tier, eager (held: the native tier's first)
    first = np.asarray(held[0])
    np.testing.assert_array_equal(first, np.asarray(held[1]))


def test_slices_are_strided_reads():
    """Slices (strided, offset, of views of slices) read their operand in place inside
    native loops, and become arrays where a product or a result needs one."""
    def f(x, w):
        a = lax.slice(x, (1, 2), (5, 10), (1, 3))          # (4, 3), strided and offset
        b = lax.slice(x.T, (3, 0), (9, 4))                  # a slice of a transpose
        c = lax.slice(b[:, ::-1].reshape(24), (5,), (20,), (2,))  # of a (copied) reverse
        gates = x @ w
        i, g = lax.logistic(gates[:, :4]), jnp.tanh(gates[:, 4:])
        return a * 2.0 + 1.0, b - 1.0, c, i * g, lax.slice(x, (2, 0), (4, 10)), gates[1:3] @ w.T

    x = np.arange(60, dtype=np.float32).reshape(6, 10) / 7 - 3
    w = np.linspace(-1, 1, 80, dtype=np.float32).reshape(10, 8)
    tiers = Tiers(f)
    native, numpy_, eager = tiers(x, w)
    for n, m, e in zip(native[:3], numpy_[:3], eager[:3]):
        assert_same(m, e)
        assert_same(n, m)
    for n, m in zip(native[3:], numpy_[3:]):
        assert_same(n, m)
    assert_native(tiers.native, x, w)


def test_view_of_a_value_its_numpy_tier_segment_computes():
    """A view between two equations without native rules stays with them (regression: it
    was made an array before the segment computing its operand ran)."""
    def f(x):
        y = lax.sort(x, dimension=1)
        return lax.sort(y.reshape(12)[::-1], dimension=0) * 2.0

    tiers = Tiers(f)
    x = np.array([[3.0, 1.0, 2.0, 0.5], [9.0, -1.0, 4.0, 4.5], [0.0, 7.0, -3.0, 1.5]],
                 np.float32)
    _same(tiers(x))
    assert_native(tiers.native, x)


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("contract", [False, True])
def test_outer_products(contract, batched):
    """Products with nothing to sum (a loss's read-out gradient; per-example gradients, with
    a batch dimension) are multiplications read broadcast, fused: without a contracting
    dimension a multiplication (so -0 stays -0), with one of size 1 what np.matmul gives,
    zero plus the product (+0)."""
    b0 = ((0,), (0,)) if batched else ((), ())
    c0 = ((2,), (int(batched),)) if contract else ((), ())
    f = lambda a, b: lax.dot_general(a, b, (c0, b0)) * 3.0  # noqa: E731
    a = np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3)
    b = np.linspace(1, 3, 20, dtype=np.float32).reshape(4, 5)
    a[0, 0], b[0, 1] = -0.0, 0.0
    if not batched:
        b = b[0]
    if contract:
        a, b = a[..., None], b[..., None, :]
    tiers = Tiers(f)
    native, numpy_, _ = tiers(a, b)
    assert_same(native, numpy_)
    want = (a.reshape(4, 3, 1) * b.reshape(4, 1, 5) if batched
            else np.multiply.outer(a.reshape(4, 3), b.reshape(5))).reshape(native.shape) * 3.0
    np.testing.assert_array_equal(native, want)
    assert np.signbit(native.reshape(-1)[1]) == (not contract)  # (-0 * 0: -0, or 0 + -0)
    if have_compiler():  # (one fused loop, no product)
        assert not executable(tiers.native, a, b).native.plan.loops


def test_outer_products_move_to_their_reader_in_their_elementwise_form():
    """The native tier's pass (compiler/native/products.py): a product with nothing to sum
    becomes its elementwise form, views and a multiplication (plus zero with a contracting
    dimension), just before the first equation reading it, so it joins that one's loop."""
    def f(w, x, d, a, b):
        g = lax.dot_general(x, d, (((), ()), ((), ())))
        h = jnp.tanh(w)
        return w - 0.5 * g, h, lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))

    f32 = np.float32
    closed = passes.optimize(didax.make_jaxpr(f)(
        np.ones((3, 4), f32), np.ones(3, f32), np.ones(4, f32), np.ones((4, 3, 1), f32),
        np.ones((4, 1, 5), f32)))
    out = elementwise_products(closed)
    check_jaxpr(out.jaxpr)
    # (the update reading `g` runs right after it: passes.consume_early)
    assert [e.primitive.name for e in out.jaxpr.eqns] == [
        "broadcast_in_dim", "broadcast_in_dim", "mul", "mul", "sub", "tanh",
        "squeeze", "broadcast_in_dim", "squeeze", "broadcast_in_dim", "mul", "add"]
    x, d = closed.jaxpr.invars[1:3]
    assert [(e.invars[0], e.params["broadcast_dimensions"]) for e in out.jaxpr.eqns[0:2]] == [
        (x, (0,)), (d, (1,))]


def test_pads():
    def f(x, v):
        return (lax.pad(x, np.float32(0), [(1, 2, 0), (3, 0, 0)]),
                lax.pad(x, v, [(0, 0, 0), (0, 4, 0)]),
                lax.pad(x[:, 1:3], np.float32(-np.inf), [(2, 0, 0), (0, 1, 0)]) * 2.0,
                lax.pad(x[:0], np.float32(1), [(1, 1, 0), (0, 0, 0)]),
                lax.pad(x, np.float32(5), [(0, 0, 1), (0, 0, 0)]),
                # interior padding in the last dimension; negative padding cropping into it;
                # everything cropped
                lax.pad(x, np.float32(7), [(1, -1, 2), (-3, 2, 1)]),
                lax.pad(x, np.float32(7), [(-2, -1, 0), (-1, -3, 0)]),
                lax.pad(x, np.float32(7), [(-5, 0, 1), (0, 0, 0)]))

    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    tiers = Tiers(f)
    _same(tiers(x, np.float32(np.nan)))
    assert_native(tiers.native, x, np.float32(np.nan))


@pytest.mark.parametrize("n_calls", [2, 24])
def test_blocks_of_loops_calling_numpy_fit_their_buffer_budget(n_calls):
    """A loop calling NumPy's functions works in blocks of CALL_BLOCK elements while its block
    buffers (on the stack of the thread running it) fit BUFFER_BUDGET, else of BLOCK: a
    function with thousands of calls (hyp1f1) overflowed the stack with large blocks."""
    from didax._src.compiler.native import loops

    def f(x):
        ys = [jnp.exp(x * (0.01 * k)) for k in range(n_calls)]
        return sum(y * y for y in ys) + x

    x = np.linspace(-1, 1, 5000)
    with enable_x64():
        tiers = Tiers(f)
        _same(tiers(x))
        if have_compiler():
            source = executable(tiers.native, x).native.plan.source
            size = loops.CALL_BLOCK if n_calls == 2 else loops.BLOCK
            assert "double bt" in source and f"[{size}];" in source
            assert n_calls == 2 or f"[{loops.CALL_BLOCK}];" not in source
