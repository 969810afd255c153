"""Mutable array references (didax/_src/state) against JAX 0.10.2: eager reads and writes,
jitted functions updating the references passed to them, jaxpr text, derivatives and vmap of
functions using references inside, the state discharge jit runs, and the errors."""
import re
import subprocess
import sys

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.compiler.passes import optimize
from didax._src.errors import UnexpectedTracerError
from didax._src.ir import check_jaxpr
from didax._src.state import discharge as state_discharge
from didax._src.state.types import AbstractRef


def _same(got, want, tol=1e-6):
    got, want = np.asarray(got), np.asarray(want)
    assert (got.shape, got.dtype) == (want.shape, want.dtype), (got, want)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _primitives(closed):
    names = set()
    for eqn in closed.jaxpr.eqns:
        names.add(eqn.primitive.name)
        for v in eqn.params.values():
            if hasattr(v, "jaxpr") and hasattr(v, "consts"):
                names |= _primitives(v)
    return names


# -- eager ---------------------------------------------------------------------------------


def test_a_ref_reads_and_writes_in_place_as_jax():
    def program(api, np_):
        r = api.new_ref(np_.zeros(3))
        seen = [str(api.typeof(r)), repr(r), isinstance(r, api.Array), np.asarray(r[...])]
        r[...] = np_.ones(3)
        r[1] += 5
        seen += [r.shape, r.dtype, r.ndim, len(r), np.asarray(r[1]), np.asarray(r[1:])]
        r[::2] = np_.array([7.0, 8.0])
        r.addupdate(np_.ones(2), (slice(1, None),))
        seen += [repr(r), np.asarray(api.freeze(r))]
        return seen

    got, want = program(didax, jnp), program(jax, jjnp)
    assert got[:3] == want[:3] == ["Ref{float32[3]}", "Ref([0., 0., 0.], dtype=float32)", False]
    for g, w in zip(got[3:], want[3:]):
        if isinstance(w, np.ndarray):
            _same(g, w)
        else:
            assert g == w


def test_refs_hold_types_as_jax():
    for value in (1.0, 1, True, np.float32(2), jnp.zeros((2, 2), jnp.int32)):
        r, ref = didax.new_ref(value), jax.new_ref(jjnp.asarray(value) if hasattr(
            value, "shape") and not isinstance(value, np.generic) else value)
        assert str(didax.typeof(r)) == str(jax.typeof(ref))
        assert didax.typeof(r).weak_type == jax.typeof(ref).weak_type
        assert repr(r) == repr(ref)
    assert isinstance(didax.typeof(r), AbstractRef) and isinstance(r, didax.Ref)
    assert didax.typeof(r).str_short() == "Ref{i32[2,2]}"
    assert didax.ref.get(r, (0, 1)) == 0 and didax.ref.swap(r, 0, jnp.ones(2, jnp.int32))[1] == 0
    assert r[0, 1] == 1


# -- jit -------------------------------------------------------------------------------------


def _add_twice(api):
    @api.jit
    def f(ref, x):
        ref[...] += x
        return ref[...] * 2
    return f


def test_jit_updates_the_refs_passed_in_place_as_jax():
    results = []
    for api, np_ in ((didax, jnp), (jax, jjnp)):
        r = api.new_ref(np_.zeros(3))
        r[...] = np_.ones(3)
        r[1] += 5
        f = _add_twice(api)
        out = f(r, np_.ones(3))
        results.append((np.asarray(out), np.asarray(r[...]), np.asarray(f(r, np_.ones(3))),
                        np.asarray(r[...])))
    for g, w in zip(*results):
        _same(g, w)
    _same(results[0][1], np.array([2.0, 7.0, 2.0], np.float32))


def test_jaxpr_text_as_jax():
    rd, rj = didax.new_ref(jnp.zeros(3)), jax.new_ref(jjnp.zeros(3))
    assert (str(didax.make_jaxpr(_add_twice(didax))(rd, jnp.ones(3)))
            == str(jax.make_jaxpr(_add_twice(jax))(rj, jjnp.ones(3))))
    assert "d:f32[3] <- a[...]" in str(didax.make_jaxpr(_add_twice(didax))(rd, jnp.ones(3)))

    def g(api):
        def g(x):
            ref = api.new_ref(x)
            ref[...] = ref[...] * x
            ref[1] += 2.0
            return api.freeze(ref)
        return g

    assert (str(didax.make_jaxpr(didax.jit(g(didax)))(jnp.arange(3.0)))
            == str(jax.make_jaxpr(jax.jit(g(jax)))(jjnp.arange(3.0))))
    # Outside jit, JAX's make_jaxpr drops the unused result of the swap (`b[...] <- d`);
    # didax's make_jaxpr keeps unused results, and prints the swap whole.
    text = str(didax.make_jaxpr(g(didax))(jnp.arange(3.0)))
    for line in ("b:Ref{f32[3]} = new_ref[kind=None memory_space=None] a", "c:f32[3] <- b[...]",
                 "e:f32[3], b[...] <- b[...], d", "f:f32[] <- b[1]",
                 "h:f32[], b[1] <- b[1], g", "i:f32[3] = freeze b"):
        assert line in text, text


def test_index_text_as_jax():
    def f(api):
        def f(ref, i, x):
            a = ref[1], ref[1:], ref[i], ref[:, 2], ref[-1], ref[1:2], ref[...]
            ref[0] = x
            ref[i] += x
            ref[1:, 0:2] = api.numpy.ones((2, 2))
            ref[0, 0] = 5.0
            return a
        return f

    rd, rj = didax.new_ref(jnp.zeros((3, 4))), jax.new_ref(jjnp.zeros((3, 4)))
    # (JAX prints this jit's jaxpr apart, as `let f = ...`, and names its variables around
    # that name: the indices and the types of what is read and written are compared)
    ours = str(didax.make_jaxpr(didax.jit(f(didax)))(rd, 1, jnp.ones(4)))
    theirs = str(jax.make_jaxpr(jax.jit(f(jax)))(rj, 1, jjnp.ones(4)))
    pattern = r"<- a\[[^\]]*\]|a\[[^\]]*\] <-|:f32\[[0-9,]*\]"
    assert (re.findall(pattern, ours.split("jaxpr=")[1])
            == re.findall(pattern, theirs.split(" } in")[0]))
    assert "a[b,:] <- a[b,:]" in ours and "a[1:,:2] <- a[1:,:2]" in ours
    for ref, api in ((rd, didax), (rj, jax)):  # the values and the writes too
        api.jit(f(api))(ref, 1, api.numpy.ones(4))
    _same(rd[...], rj[...])


@pytest.mark.parametrize("jitted", [False, True])
def test_indexing_jit_against_eager_against_numpy(jitted):
    def f(ref, i, x):
        parts = ref[i], ref[1:, ::2], ref[..., -1], ref[0, 1]
        ref[i] = parts[0] * 2
        ref[::2, 1::2] = ref[::2, 1::2] + x[::2, 1::2]
        ref[1:] += 1.0
        ref.addupdate(x)
        old = didax.ref.swap(ref, (slice(None), 0), x[:, 1])
        return parts + (old,)

    x = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 7
    for i in (-3, -1, 0, 2):
        r = didax.new_ref(x * 3)
        got = (didax.jit(f) if jitted else f)(r, np.int32(i), x)
        v = x * 3
        want = (v[i].copy(), v[1:, ::2].copy(), v[..., -1].copy(), v[0, 1].copy())
        v[i] = want[0] * 2
        v[::2, 1::2] += x[::2, 1::2]
        v[1:] += 1.0
        v += x
        want += (v[:, 0].copy(),)
        v[:, 0] = x[:, 1]
        for g, w in zip(got, want):
            _same(g, w)
        _same(r[...], v)


def test_jit_of_refs_in_pytrees_closed_over_and_nested():
    d = {"a": didax.new_ref(jnp.zeros(3)), "b": didax.new_ref(jnp.zeros(2))}

    @didax.jit
    def f(d, y):
        d["a"][...] += y
        d["b"][0] = y[0]
        return d["a"][...]

    _same(f(d, jnp.ones(3)), np.ones(3, np.float32))
    _same(f(d, jnp.ones(3)), np.full(3, 2.0, np.float32))
    _same(d["b"][...], np.array([1.0, 0.0], np.float32))
    assert f.cache_info().hits == 1

    counter = didax.new_ref(0.0)

    @didax.jit
    def tick(x):  # a closed-over reference is read and written too, as in JAX
        counter[...] += 1.0
        return x * counter[...]

    _same(tick(jnp.ones(2)), np.ones(2, np.float32))
    _same(tick(jnp.ones(2)), np.full(2, 2.0, np.float32))
    assert float(counter[...]) == 2.0

    @didax.jit
    def inner(ref, y):
        ref[...] = ref[...] * y
        return ref[0]

    def outer(x):  # sum(x**2) + x[0]**2
        ref = didax.new_ref(x)
        first = inner(ref, x)
        return didax.freeze(ref).sum() + first

    x = jnp.arange(3.0) + 0.5
    for fn in (outer, didax.jit(outer)):
        assert float(fn(x)) == 9.0
    for fn in (didax.grad(outer), didax.grad(didax.jit(outer)), didax.jit(didax.grad(outer))):
        _same(fn(x), np.array([2.0, 3.0, 5.0], np.float32))
    _same(didax.vmap(didax.jit(outer))(jnp.stack([x, 2 * x])), np.array([9.0, 36.0], np.float32))
    assert "jit" in str(didax.make_jaxpr(didax.jit(outer))(x)).split("c:Ref{f32[3]}")[1]
    r = didax.new_ref(x)
    inner(r, x)
    _same(r[...], np.asarray(x) ** 2)


def test_a_ref_and_an_array_are_different_signatures():
    h = didax.jit(lambda a, y: y * 2)
    h(didax.new_ref(jnp.ones(3)), 1.0)
    h(jnp.ones(3), 1.0)
    info = h.cache_info()
    assert info.misses == 2 and "Ref{f32[3]} -> f32[3]" in info.last_miss


def test_jit_discharges_its_references():
    def g(x):
        ref = didax.new_ref(x)
        ref[...] = ref[...] * x
        return didax.freeze(ref)

    closed = didax.make_jaxpr(g)(jnp.arange(3.0))
    d = state_discharge.discharge(closed)
    assert d.same_signature and not _primitives(d.jaxpr) & {"new_ref", "get", "swap", "freeze"}
    check_jaxpr(d.jaxpr.jaxpr)
    assert "new_ref" not in didax.jit(g).lower(jnp.arange(3.0)).as_text()

    r = didax.new_ref(jnp.ones(3))
    closed = didax.make_jaxpr(_add_twice(didax))(r, jnp.ones(3))
    d = state_discharge.discharge(closed)  # takes the reference's value, returns its new one
    assert d.ref_inputs == (0,) and [str(a) for a in d.jaxpr.in_avals] == [
        "ShapedArray(f32[3])"] * 2 and len(d.jaxpr.out_avals) == 2
    lowered = _add_twice(didax).lower(r, jnp.ones(3))
    _same(lowered.compile()(r, jnp.ones(3)), np.full(3, 4.0, np.float32))
    _same(r[...], np.full(3, 2.0, np.float32))
    # a jaxpr with a reference evaluated as it is (its jit call reads and writes r)
    _same(didax.core.eval_jaxpr(closed.jaxpr, closed.consts, r, jnp.ones(3))[0],
          np.full(3, 6.0, np.float32))
    _same(r[...], np.full(3, 3.0, np.float32))


def test_jits_passes_keep_reference_effects():
    """Undischarged, reads and writes are effects: never dropped, merged or folded."""
    def f(x):
        r = didax.new_ref(x)
        a = r[...]
        r[...] = x * 2
        b = r[...]
        r[...]  # (read, unused)
        return a + b

    closed = optimize(didax.make_jaxpr(f)(jnp.ones(3)))
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    assert names.count("get") == 3 and names.count("swap") == 1, names
    _same(didax.jit(f)(jnp.ones(3)), np.full(3, 3.0, np.float32))


def test_loop_bodies_with_their_own_references():
    def loopy(x):
        def body(c, xi):
            r = didax.new_ref(c)
            r[...] += xi
            r[...] = r[...] * 2
            return didax.freeze(r), xi
        return lax.scan(body, x[0], x)[0]

    x = jnp.arange(3.0) + 0.5
    assert float(loopy(x)) == float(didax.jit(loopy)(x)) == 19.0
    _same(didax.grad(loopy)(x), np.array([16.0, 4.0, 2.0], np.float32))
    _same(didax.jit(didax.grad(loopy))(x), np.array([16.0, 4.0, 2.0], np.float32))

    def tripled(x):
        r = didax.new_ref(x)
        r[0] = r[0] * 3
        return didax.freeze(r)

    def branch(p, x):
        return lax.cond(p, tripled, lambda x: x * 2, x)

    def loop(x):
        def body(c):
            r = didax.new_ref(c[1])
            r[...] += 1.0
            return c[0] + 1, didax.freeze(r)
        return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]

    x = jnp.arange(3.0) + 1
    for p, want in ((True, [3.0, 2.0, 3.0]), (False, [2.0, 4.0, 6.0])):
        _same(didax.jit(branch)(p, x), np.array(want, np.float32))
    _same(didax.jit(didax.grad(lambda x: branch(True, x).sum()))(x),
          np.array([3.0, 1.0, 1.0], np.float32))
    _same(didax.jit(loop)(x), np.asarray(x) + 3)

    custom = didax.custom_jvp(tripled)  # a call holding references keeps its custom rule
    custom.defjvp(lambda p, t: (custom(p[0]), 100 * t[0]))
    _same(didax.jit(didax.grad(lambda x: custom(x).sum()))(x), np.full(3, 100.0, np.float32))


# -- derivatives and vmap ----------------------------------------------------------------------


def _g(api):
    def g(x):
        ref = api.new_ref(x)
        ref[...] = ref[...] * x
        ref[1] += api.numpy.sin(x[0])
        return api.freeze(ref)
    return g


def test_grad_of_a_function_with_references_as_jax():
    x = np.arange(3.0, dtype=np.float32) + 0.5
    for transform in (lambda api, f: api.grad(lambda x: f(x).sum()),
                      lambda api, f: api.jit(api.grad(lambda x: f(x).sum())),
                      lambda api, f: api.grad(lambda x: api.jit(f)(x).sum()),
                      lambda api, f: api.jacrev(f),
                      lambda api, f: (lambda x: api.jvp(f, (x,), (x * 0 + 1,))),
                      lambda api, f: (lambda x: api.linearize(f, x)[1](x)),
                      lambda api, f: api.grad(lambda x: api.checkpoint(f)(x).sum())):
        got = transform(didax, _g(didax))(jnp.asarray(x))
        want = transform(jax, _g(jax))(jjnp.asarray(x))
        for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            _same(a, b)
    # the example of the task: [0, 2, 4]
    def g(x):
        ref = didax.new_ref(x)
        ref[...] = ref[...] * x
        return didax.freeze(ref)
    _same(didax.grad(lambda x: g(x).sum())(jnp.arange(3.0)), np.array([0, 2, 4], np.float32))
    text = str(didax.make_jaxpr(didax.grad(lambda x: g(x).sum()))(jnp.arange(3.0)))
    assert "new_ref" in text and "freeze" in text and "<-" in text


def test_a_reference_made_from_a_constant_takes_derivatives():
    def h(api):
        def h(x):
            r = api.new_ref(api.numpy.zeros(3))
            r[...] = x * 2
            r[1:] += x[1:] ** 2
            return api.freeze(r)
        return h

    x = np.array([1.0, 2.0, 3.0], np.float32)
    _same(didax.grad(lambda x: h(didax)(x).sum())(jnp.asarray(x)),
          jax.grad(lambda x: h(jax)(x).sum())(jjnp.asarray(x)))
    _same(didax.jvp(h(didax), (x,), (x,))[1], jax.jvp(h(jax), (x,), (x,))[1])


def _g_pure(x):  # _g without references, in JAX (whose jacrev of grad through references
    # fails: "object has no attribute 'accum'")
    return (x * x).at[1].add(jjnp.sin(x[0]))


def test_second_derivatives():
    x = np.array([0.5, 1.5, 2.5], np.float32)
    _same(didax.jacrev(didax.grad(lambda x: _g(didax)(x).sum() ** 2))(x),
          jax.jacrev(jax.grad(lambda x: _g_pure(x).sum() ** 2))(x), 1e-4)
    _same(didax.grad(didax.grad(lambda s: _g(didax)(s * x)[1]))(1.5),
          jax.grad(jax.grad(lambda s: _g_pure(s * x)[1]))(1.5), 1e-5)


def test_vmap_of_functions_with_references_as_jax():
    xs = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    def acc(api):
        def acc(v, w):
            r = api.new_ref(v)  # (unbatched under in_axes None: batched by the first write)
            r[...] += w
            r[0] = r[0] * 2
            return api.freeze(r)
        return acc

    for in_axes in ((0, 0), (None, 0), (0, None)):
        v = xs[0] if in_axes[0] is None else xs
        w = xs[1] if in_axes[1] is None else xs
        _same(didax.vmap(acc(didax), in_axes)(v, w), jax.vmap(acc(jax), in_axes)(v, w))
        _same(didax.vmap(didax.jit(acc(didax)), in_axes)(v, w),
              jax.vmap(acc(jax), in_axes)(v, w))
    _same(didax.vmap(_g(didax))(xs), jax.vmap(_g(jax))(xs))
    assert (str(didax.make_jaxpr(didax.vmap(_g(didax)))(xs)).count("Ref{f32[2,3]}")
            == str(jax.make_jaxpr(jax.vmap(_g(jax)))(xs)).count("Ref{f32[2,3]}"))

    def pick(api):
        def pick(v, i):
            r = api.new_ref(v)
            r[i] += 10.0
            return r[i], api.freeze(r)
        return pick

    idx = np.array([2, 0], np.int32)
    for a, b in zip(didax.vmap(pick(didax), (None, 0))(xs[0], idx),
                    jax.vmap(pick(jax), (None, 0))(xs[0], idx)):
        _same(a, b)

    refs = didax.new_ref(jnp.zeros((3, 2)))  # a reference mapped along its axis 1
    didax.vmap(lambda r, w: r.__setitem__(..., w), in_axes=(1, 0))(refs, jnp.asarray(xs))
    _same(refs[...], xs.T)


# -- errors ------------------------------------------------------------------------------------


def test_errors_name_what_is_wrong():
    r = didax.new_ref(jnp.zeros(3))
    with pytest.raises(ValueError, match=r"Out of bound indexer: idx=5, dim=3"):
        r[5]
    with pytest.raises(ValueError, match="too many indices"):
        r[0, 0]
    with pytest.raises(TypeError, match="not a valid index"):
        r["a"]
    with pytest.raises(NotImplementedError, match="integer array"):
        r[jnp.array([0, 2])]
    with pytest.raises(ValueError, match=r"step >= 1"):
        r[::-1]
    with pytest.raises(ValueError, match=r"shape \(4,\).*Ref\{f32\[3\]\}.*holds shape \(3,\)"):
        r[...] = jnp.ones(4)
    with pytest.raises(ValueError, match=r"a int32 value.*holds float32"):
        r[...] = jnp.ones(3, jnp.int32)
    with pytest.raises(TypeError, match="unsupported operand"):
        r + 1
    with pytest.raises(TypeError, match="'add' does not take a mutable array reference"):
        didax.jit(lambda r: r + 1)(r)
    with pytest.raises(TypeError, match="freeze: expected a mutable array reference"):
        didax.freeze(jnp.ones(2))
    with pytest.raises(TypeError, match="new_ref as a JAX value"):
        didax.new_ref([1.0, 2.0])
    with pytest.raises(ValueError, match="mutable array references cannot be returned"):
        didax.jit(lambda r: r)(r)

    @didax.jit
    def f(a, b):
        a[...] += 1.0
        return b[...]

    with pytest.raises(ValueError, match="only one reference.*appeared at both a and b"):
        f(r, r)
    with pytest.raises(ValueError, match="both closed over and passed as the argument a"):
        didax.jit(lambda a: (a.__setitem__(..., r[...]), r[0])[1])(r)
    _same(f(r, didax.new_ref(jnp.ones(3))), np.ones(3, np.float32))
    _same(r[...], np.ones(3, np.float32))


def test_a_reference_outliving_its_transformation():
    leak = []

    @didax.jit
    def f(x):
        leak.append(didax.new_ref(x))
        return x

    f(jnp.ones(2))
    with pytest.raises(UnexpectedTracerError, match=r"Ref\{f32\[2\]\}.*already ended"):
        leak[0][...]
    with pytest.raises(UnexpectedTracerError):
        leak[0][...] = jnp.ones(2)


def test_transformation_errors():
    r = didax.new_ref(jnp.zeros(3))
    with pytest.raises(TypeError, match="mutable array reference.*differentiating"):
        didax.grad(lambda r: r[...].sum())(r)

    def write_outside(x):
        r[...] = x * 2
        return x.sum()

    with pytest.raises(ValueError, match="non-differentiated array reference"):
        didax.grad(write_outside)(jnp.ones(3))
    assert float(r[0]) == 0.0  # (nothing was written)
    with pytest.raises(ValueError, match="made outside the vmapped function"):
        didax.vmap(lambda w: r.__setitem__(..., w))(jnp.ones((2, 3)))

    def loop(x):
        ref = didax.new_ref(x)
        lax.fori_loop(0, 3, lambda i, c: (ref.__setitem__(i, ref[i] + 1.0), c)[1], 0.0)
        return didax.freeze(ref)

    with pytest.raises(TypeError, match="does not take a mutable array reference"):
        didax.jit(loop)(jnp.ones(3))


# -- JAX's names ---------------------------------------------------------------------------------


def test_jax_names_under_install_as_jax():
    code = ("import didax; didax.install_as_jax()\n"
            "import jax, jax.numpy as jnp\n"
            "from jax._src.state.types import AbstractRef\n"
            "r = jax.new_ref(jnp.zeros(2))\n"
            "assert isinstance(jax.typeof(r), AbstractRef) and isinstance(r, jax.Ref)\n"
            "assert isinstance(r, jax.Array | AbstractRef | jax.Ref)\n"
            "r[0] = 1.0\n"
            "print(jax.freeze(r).tolist(), jax.ref.get(r, 0).item())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["[1.0,", "0.0]", "1.0"]
