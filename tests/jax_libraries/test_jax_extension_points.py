"""What libraries written for JAX build on: install_as_jax's aliasing (in a subprocess),
primitives declared through jax.extend.core with rules set in the jax.interpreters tables,
checkify, io_callback and symbolic zeros in custom rules; compared with JAX where it has an
answer."""
import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import checkify as jcheckify
from jax_absent import needs_jax

import didax
import didax.numpy as jnp
from didax.custom_derivatives import CustomVJPPrimal, SymbolicZero
from didax.experimental import checkify, io_callback
from didax.extend.core import Primitive
from didax.interpreters import ad, batching, mlir
from didax.test_util import check_grads

ROOT = pathlib.Path(__file__).parents[2]


@needs_jax
def test_install_as_jax_aliases_modules_in_a_fresh_process():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(pathlib.Path(__file__).parent /
                                               "alias_script.py")],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok"


# -- a primitive declared the way libraries declare theirs ----------------------------------

cube_p = Primitive("library_cube")
cube_p.def_impl(lambda x: x * x * x)  # written with jax.numpy operations
cube_p.def_abstract_eval(lambda aval: didax.core.ShapedArray(aval.shape, aval.dtype))
mlir.register_lowering(cube_p, mlir.lower_fun(lambda x: x * x * x, multiple_results=False))


def _cube_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    t = ad.instantiate_zeros(t)
    return cube_p.bind(x), 3 * x * x * t


def _cube_batch(vals, dims):
    return cube_p.bind(vals[0]), dims[0]


ad.primitive_jvps[cube_p] = _cube_jvp
batching.primitive_batchers[cube_p] = _cube_batch


def test_library_primitive_rules_reach_didax_interpreters():
    assert ad.primitive_jvps[cube_p] is _cube_jvp and cube_p in batching.primitive_batchers
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(cube_p.bind(x), x ** 3)
    f = lambda x: jnp.sum(jnp.sin(cube_p.bind(x)))  # noqa: E731
    np.testing.assert_allclose(didax.grad(f)(x), np.cos(x ** 3) * 3 * x ** 2, rtol=1e-6)
    np.testing.assert_allclose(didax.jit(didax.grad(f))(x), didax.grad(f)(x), rtol=1e-6)
    np.testing.assert_allclose(didax.vmap(cube_p.bind)(np.arange(6.).reshape(3, 2)),
                               np.arange(6.).reshape(3, 2) ** 3)
    with didax.enable_x64():
        check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    assert "library_cube" in str(didax.make_jaxpr(f)(x))
    with pytest.raises(TypeError, match="primitives"):
        ad.primitive_jvps["not a primitive"] = _cube_jvp


def _axis_probe(table, rule_of):
    """vmaps a primitive whose batch rule, set in `table`, records what it was given."""
    seen = []
    p = Primitive(f"library_axis_probe_{len(table)}")
    p.def_impl(lambda x: x + 1)
    p.def_abstract_eval(lambda a: a)
    table[p] = rule_of(p, seen)
    out = didax.vmap(p.bind, axis_name="i")(jnp.zeros(4))
    np.testing.assert_array_equal(out, np.ones(4))
    return seen


def test_axis_batch_rules_get_the_axis_as_jax_gives_it():
    def fancy(p, seen):
        def rule(axis_data, vals, dims):
            seen.append((axis_data.size, axis_data.name))
            return p.bind(vals[0]), dims[0]
        return rule

    def older(p, seen):  # equinox's primitives: (size, name, trace type, values, dims)
        def rule(axis_size, axis_name, trace_type, vals, dims):
            seen.append((axis_size, axis_name, trace_type))
            return p.bind(vals[0]), dims[0]
        return rule
    assert _axis_probe(batching.fancy_primitive_batchers, fancy) == [(4, "i")]
    assert _axis_probe(batching.axis_primitive_batchers, older) == [(4, "i", None)]


# -- checkify ---------------------------------------------------------------------------------

def _positive_log(np_mod, check_mod):
    def f(x):
        check_mod.check(x > 0, "x must be positive, got {}", x)
        return np_mod.log(x)
    return f


@pytest.mark.parametrize("value", [2.0, -1.0])
def test_checkify_matches_jax(value):
    x, jx = jnp.float32(value), jjnp.float32(value)  # (JAX wants arrays, not NumPy scalars)
    err, out = checkify.checkify(_positive_log(jnp, checkify))(x)
    jerr, jout = jcheckify.checkify(_positive_log(jjnp, jcheckify))(jx)
    assert err.get() == jerr.get()
    np.testing.assert_allclose(out, jout)
    xs = [1.0, -2.0, 3.0]
    err, _ = checkify.checkify(didax.vmap(_positive_log(jnp, checkify)))(jnp.array(xs))
    jerr, _ = jcheckify.checkify(jax.vmap(_positive_log(jjnp, jcheckify)))(jjnp.array(xs))
    assert err.get() == jerr.get()
    err, out = checkify.checkify(didax.jit(_positive_log(jnp, checkify)))(x)
    jerr, _ = jcheckify.checkify(_positive_log(jjnp, jcheckify))(jx)
    assert err.get() == jerr.get()


def test_checks_raise_outside_checkify_and_pass_derivatives():
    f = _positive_log(jnp, checkify)
    with pytest.raises(didax.errors.JaxRuntimeError, match="must be positive"):
        f(np.float32(-1.0))
    with pytest.raises(didax.errors.JaxRuntimeError, match="must be positive"):
        checkify.checkify(f)(np.float32(-1.0))[0].throw()
    assert float(didax.grad(lambda x: checkify.checkify(f)(x)[1])(2.0)) == 0.5
    assert float(didax.jit(didax.grad(f))(2.0)) == 0.5
    with pytest.raises(NotImplementedError, match="automatic checks"):
        checkify.checkify(f, errors=checkify.all_checks)


# -- io_callback ------------------------------------------------------------------------------

def test_io_callback_runs_for_its_effect_under_jit_and_vmap():
    log = []

    def record(x):
        log.append(np.asarray(x).copy())
        return np.asarray(x * 2)

    def f(x):
        io_callback(record, jax.ShapeDtypeStruct(x.shape, x.dtype), x)  # result unused
        return io_callback(record, jax.ShapeDtypeStruct(x.shape, x.dtype), x + 1)
    out = didax.jit(f)(np.float32(1.0))
    assert float(out) == 4.0 and [float(v) for v in log] == [1.0, 2.0]
    log.clear()
    out = didax.vmap(f)(np.arange(2, dtype=np.float32))
    np.testing.assert_array_equal(out, [2.0, 4.0])
    assert len(log) == 4
    with pytest.raises(ValueError, match="not differentiable"):
        didax.grad(f)(1.0)


# -- symbolic zeros -----------------------------------------------------------------------------

def _mul_with_symbolic_zeros(lib, zero_type):
    @lib.custom_jvp
    def f(x, y):
        return x * y

    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        seen.append(tuple(isinstance(t, zero_type) for t in tangents))
        out = 0.0
        if not isinstance(tx, zero_type):
            out = out + tx * y
        if not isinstance(ty, zero_type):
            out = out + ty * x
        return x * y, out
    f.defjvp(f_jvp, symbolic_zeros=True)
    return f


seen = []


def test_custom_jvp_symbolic_zeros_as_jax():
    from jax.custom_derivatives import SymbolicZero as JSymbolicZero
    seen.clear()
    ours = _mul_with_symbolic_zeros(didax, SymbolicZero)
    g = didax.grad(ours)(2.0, 3.0)
    ours_seen = list(seen)
    seen.clear()
    ref = _mul_with_symbolic_zeros(jax, JSymbolicZero)
    jg = jax.grad(ref)(2.0, 3.0)
    assert float(g) == float(jg) == 3.0
    assert ours_seen == seen == [(False, True)]
    assert float(didax.grad(ours, argnums=1)(2.0, 3.0)) == 2.0
    np.testing.assert_allclose(didax.vmap(didax.grad(ours))(jnp.ones(3), jnp.arange(3.0)),
                               np.arange(3.0))


def test_custom_vjp_symbolic_zeros_sees_perturbed_inputs():
    perturbed = []

    @didax.custom_vjp
    def f(x, y):
        return x * y

    def fwd(x, y):
        assert isinstance(x, CustomVJPPrimal)
        perturbed.append((x.perturbed, y.perturbed))
        return x.value * y.value, (x.value, y.value)

    def bwd(res, ct):
        x, y = res
        return ct * y, SymbolicZero.from_primal_value(y)
    f.defvjp(fwd, bwd, symbolic_zeros=True)
    assert float(didax.grad(f)(2.0, 3.0)) == 3.0
    assert perturbed == [(True, False)]
    assert float(didax.grad(f, argnums=1)(2.0, 3.0)) == 0.0  # bwd said zero


# -- small names libraries read ------------------------------------------------------------

def test_small_names_libraries_use():
    with didax.numpy_dtype_promotion("standard"):
        assert (jnp.ones(2, jnp.int32) + 1.5).dtype == jjnp.float32
    with pytest.raises(NotImplementedError, match="strict"):
        with didax.numpy_dtype_promotion("strict"):
            pass
    with pytest.raises(ValueError, match="standard"):
        with didax.numpy_dtype_promotion("loose"):
            pass
    for like in (jnp.zeros_like, jnp.ones_like):
        spec = didax.ShapeDtypeStruct((2, 3), np.int32)
        ref = getattr(jjnp, like.__name__)(jax.ShapeDtypeStruct((2, 3), np.int32))
        out = like(spec)
        assert out.shape == ref.shape and out.dtype == ref.dtype
        np.testing.assert_array_equal(out, ref)
    assert didax.typeof(jnp.ones(2)).sharding is None
    assert didax.__version_info__ == tuple(int(v) for v in jax.__version__.split(".")[:3])
    from didax._src import traceback_util
    frame = sys._getframe()
    assert traceback_util.include_frame(frame)  # a test is user code; didax's files are not
    traceback_util.register_exclusion(os.path.dirname(__file__))
    try:
        assert not traceback_util.include_frame(frame)
    finally:
        traceback_util.excluded_paths.pop()
    assert didax.core.mapped_aval(3, 1, didax.core.ShapedArray((2, 3), np.float32)).shape == (2,)
    assert didax.core.unmapped_aval(3, 0, didax.core.ShapedArray((2,), np.float32)).shape == \
        (3, 2)


# -- what lineax, optimistix, diffrax and blackjax rely on ------------------------------------

def test_trace_api_tells_transformations_apart():
    from didax._src.compat.jax_core import trace_state_clean  # (numpyro's: jax._src.core)
    from didax.extend.core import find_top_trace, get_opaque_trace_state
    assert trace_state_clean() and find_top_trace(()) is find_top_trace([1.0])
    top = get_opaque_trace_state()
    mains = []

    def f(x):
        main = find_top_trace([x]).main
        mains.append(main)
        assert x._trace.main is main and not trace_state_clean()
        assert get_opaque_trace_state() != top and get_opaque_trace_state() == \
            get_opaque_trace_state()
        return x * 2

    didax.jvp(f, (1.0,), (1.0,))
    didax.jvp(f, (1.0,), (1.0,))
    assert mains[0] is not mains[1]  # each transformation its own
    assert get_opaque_trace_state() == top


class _Omega:
    """An operand arrays do not know, with reflected operators (as lineax's `ω`)."""

    def __rpow__(self, other):
        return ("rpow", other.shape)

    def __radd__(self, other):
        return "radd"

    def __rmatmul__(self, other):
        return "rmatmul"


@pytest.mark.parametrize("mod", ["didax", "jax"])
def test_array_operators_defer_to_unknown_operands(mod):
    np_mod = jnp if mod == "didax" else jjnp
    x = np_mod.ones(3)
    assert x ** _Omega() == ("rpow", (3,))
    assert x + _Omega() == "radd" and x @ _Omega() == "rmatmul"
    assert (x == None) is False and (x != "text") is True  # noqa: E711
    with pytest.raises(TypeError):
        assert x == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError):
        x + (1.0,)

    class Wrapped:
        def __jax_array__(self):
            return np_mod.full(3, 2.0)
    np.testing.assert_array_equal(x * Wrapped(), np.full(3, 2.0))
    np.testing.assert_array_equal(x - 1, np.zeros(3))  # (the fast path stays)
    np.testing.assert_array_equal(2.0 ** x, np.full(3, 2.0))


@pytest.mark.parametrize("mod", ["didax", "jax"])
def test_shape_dtype_struct_keeps_a_sharding_and_eval_shape_passes_structs(mod):
    j = didax if mod == "didax" else jax
    np_mod = jnp if mod == "didax" else jjnp
    x = np_mod.ones(3)
    s = j.ShapeDtypeStruct((3,), np.float32, sharding=x.sharding)
    assert s.sharding == x.sharding and "sharding=" in repr(s)
    assert j.ShapeDtypeStruct((3,), np.float32).sharding is None
    out = j.eval_shape(lambda: (s, 1.0, np_mod.ones(2, np.int32)))
    assert out[0] == j.ShapeDtypeStruct((3,), np.float32)  # (no sharding)
    assert (out[1].shape, out[1].dtype, out[1].weak_type) == ((), np.float32, True)
    assert (out[2].shape, out[2].dtype) == ((2,), np.int32)
    assert j.eval_shape(lambda v: v * 2, x).sharding is None
    assert np_mod.iscomplexobj(j.ShapeDtypeStruct((), np.complex64))
    assert not np_mod.iscomplexobj(s) and not np_mod.isrealobj(
        j.ShapeDtypeStruct((), np.complex64))
    assert j.config.jax_numpy_dtype_promotion == "standard"


def _newton_root(j, lax_mod):
    """x ** 2 = a, by the older form of `lax.cond` (pred, true operand, true function, false
    operand, false function) inside a loop, linearized with auxiliary output."""
    def f(a):
        def step(x, _):
            x = lax_mod.cond(x > 0, x, lambda v: 0.5 * (v + a / v), 1.0, lambda v: v)
            return x, x
        x, xs = lax_mod.scan(step, 1.0, None, length=6)
        return x, {"last": xs[-1]}
    out, f_jvp, aux = j.linearize(f, 2.0, has_aux=True)
    return float(out), float(f_jvp(1.0)), float(aux["last"])


def test_old_cond_form_and_linearize_with_aux_as_jax():
    ours, ref = _newton_root(didax, didax.lax), _newton_root(jax, jax.lax)
    np.testing.assert_allclose(ours, ref, rtol=1e-6)
    np.testing.assert_allclose(ours[0], np.sqrt(2.0), rtol=1e-6)


def test_custom_jvp_call_in_a_linear_function_transposes():
    @didax.custom_jvp
    def scale(x):
        return 3.0 * x
    scale.defjvp(lambda p, t: (scale(p[0]), scale(t[0])))

    def linear(t):
        return didax.jit(scale)(t) + t  # staged: a custom_jvp_call equation

    (ct,) = didax.linear_transpose(linear, 1.0)(2.0)
    assert float(ct) == 8.0
    assert float(didax.grad(lambda x: didax.jvp(linear, (x,), (x,))[1])(1.0)) == 4.0


def test_custom_vjp_symbolic_zeros_and_python_residuals_under_jit():
    """equinox's pattern: fwd passes its `perturbed` flags (Python bools) to bwd as residuals,
    and asserts an input is unperturbed; staged by jit, differentiated outside."""
    seen = []

    @didax.custom_vjp
    def f(x, y):
        return x * y

    def fwd(x, y):
        assert y.perturbed is False
        flags = (x.perturbed, y.perturbed)
        return x.value * y.value, (y.value, flags)

    def bwd(res, ct):
        y, flags = res
        seen.append(flags)
        assert all(type(b) is bool for b in flags)
        return ct * y, None
    f.defvjp(fwd, bwd, symbolic_zeros=True)
    g = didax.grad(didax.jit(lambda x: f(x, 3.0)))(2.0)
    assert float(g) == 3.0 and seen == [(True, False)]
    gs = didax.vmap(didax.grad(lambda x: f(x, 3.0)))(jnp.arange(3.0))
    np.testing.assert_array_equal(gs, np.full(3, 3.0))


def test_integer_outputs_of_a_jitted_call_get_symbolic_zero_cotangents():
    got = []
    p = Primitive("library_int_identity")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda a: a)
    ad.primitive_jvps[p] = lambda primals, tangents: (p.bind(*primals), tangents[0])

    def transpose(ct, x):
        got.append(type(ct).__name__)
        return [ct]
    ad.primitive_transposes[p] = transpose

    @didax.jit
    def inner(x):
        return x * 2.0, (x > 0).astype(jnp.int32)

    def f(x):
        y, n = inner(x)
        return y + p.bind(n).astype(jnp.float32)
    assert float(didax.grad(f)(1.5)) == 2.0
    assert got in ([], ["Zero"])  # never a float0 array


# -- what flax, numpyro, distrax and TFP's substrate rely on ----------------------------------

def _partial_eval_program(j, lu, api_util, pe, core_mod):
    """flax's check of its scan's broadcast variables: which outputs are known when the
    inputs are unknown types (and what they are)."""
    def body(carry, x):
        return {"known": np.float32(3.0), "from_input": carry * x}, carry + 1
    args = (j.numpy.ones(2), j.numpy.ones(2))
    flat, in_tree = j.tree_util.tree_flatten(args)
    info = api_util.debug_info("test scan", body, args, {})
    f_flat, out_tree = api_util.flatten_fun_nokwargs(lu.wrap_init(body, debug_info=info),
                                                     in_tree)
    pvals = [pe.PartialVal.unknown(core_mod.ShapedArray(x.shape, x.dtype)) for x in flat]
    _, out_pvals, _ = pe.trace_to_jaxpr_nounits(f_flat, pvals)
    known = [pv is None for pv, _ in out_pvals]
    consts = [float(c) for pv, c in out_pvals if pv is None]
    return known, consts, str(out_tree())


def test_linear_util_api_util_and_partial_eval_as_jax():
    import jax.api_util
    import jax.extend.linear_util
    import jax.interpreters.partial_eval
    ours = _partial_eval_program(didax, didax.extend.linear_util, didax.api_util,
                                 didax.interpreters.partial_eval, didax.core)
    ref = _partial_eval_program(jax, jax.extend.linear_util, jax.api_util,
                                jax.interpreters.partial_eval, jax.core)
    assert ours[:2] == ref[:2] == ([False, True, False], [3.0])
    assert ours[2].count("*") == ref[2].count("*")  # the same output structure
    info = didax.api_util.debug_info("jit", lambda a, b: a, (1.0, (2.0, 3.0)), {})
    assert info.arg_names == ("a", "b", "b") and info.traced_for == "jit"
    assert didax.api_util.safe_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    with pytest.raises(ValueError, match="length"):
        didax.api_util.safe_zip([1], [1, 2])


def test_call_primitives_and_the_primitives_table():
    from didax.extend.core import CallPrimitive
    from didax.extend.core.primitives import add_p, call_p, closed_call_p, jit_p, while_p
    assert add_p is didax._src.core.all_primitives["add"] and while_p.name == "while"
    assert closed_call_p.call_primitive and call_p.call_primitive
    assert isinstance(call_p, CallPrimitive) and not add_p.call_primitive
    closed = didax.make_jaxpr(lambda a, b: a * b + jnp.sin(a))(1.0, 2.0)
    assert closed.literals is closed.consts

    def f(a):
        return closed_call_p.bind(a, 2.0, call_jaxpr=closed)[0]
    np.testing.assert_allclose(f(1.0), 2.0 + np.sin(1.0), rtol=1e-6)
    with didax.enable_x64():
        closed64 = didax.make_jaxpr(lambda a, b: a * b + jnp.sin(a))(1.0, 2.0)
        check_grads(lambda a: closed_call_p.bind(a, 2.0, call_jaxpr=closed64)[0],
                    (np.float64(0.7),), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(didax.jit(f)(0.7), f(0.7), rtol=1e-6)
    np.testing.assert_allclose(didax.vmap(f)(jnp.arange(3.0)),
                               [f(float(v)) for v in range(3)], rtol=1e-6)
    staged = didax.make_jaxpr(f)(1.0)
    assert [e.primitive for e in staged.eqns] == [closed_call_p]
    assert call_p.bind(lambda x: [x * 2], 3.0) == [6.0]
    assert didax.make_jaxpr(didax.jit(f))(1.0).eqns[0].primitive is jit_p


class _Tagged(np.ndarray):
    """An array subclass a library registers (as TFP registers its variables)."""


def test_value_type_tables_and_valid_jaxtype():
    from didax.extend.core import valid_jaxtype
    from didax.interpreters import xla
    assert valid_jaxtype(1.0) and valid_jaxtype(np.ones(2)) and valid_jaxtype(jnp.ones(2))
    assert not valid_jaxtype("text") and not valid_jaxtype(object())

    class Opaque:
        def __init__(self, n):
            self.n = n
    assert not valid_jaxtype(Opaque(3))
    didax.core.pytype_aval_mappings[Opaque] = lambda o: didax.core.ShapedArray((o.n,),
                                                                               np.float32)
    xla.canonicalize_dtype_handlers[Opaque] = lambda o: np.zeros(o.n, np.float32)
    try:
        assert valid_jaxtype(Opaque(3))
        assert didax._src.core.get_aval(Opaque(3)).shape == (3,)
        np.testing.assert_array_equal(jnp.asarray(Opaque(2)), np.zeros(2))
    finally:
        del didax.core.pytype_aval_mappings[Opaque], xla.canonicalize_dtype_handlers[Opaque]
    xla.canonicalize_dtype_handlers[_Tagged] = xla.canonicalize_dtype_handlers[np.ndarray]
    out = jnp.asarray(np.arange(3.0).view(_Tagged))
    assert out.dtype == np.float32  # (canonical: float64 narrowed with x64 off)


def test_meshes_layouts_versions_and_extended_dtypes_as_jax():
    for j in (didax, jax):
        s = j.sharding
        assert s.get_abstract_mesh().empty and s.get_abstract_mesh().axis_names == ()
        mesh = j.make_mesh((1,), ("x",))
        with j.set_mesh(mesh):
            assert s.get_abstract_mesh().shape == {"x": 1}
            assert s.get_abstract_mesh().axis_types == (s.AxisType.Explicit,)
        assert s.get_abstract_mesh().empty
        abstract = s.AbstractMesh((2, 3), ("a", "b"))
        assert abstract.shape == {"a": 2, "b": 3} and abstract.axis_types == (
            s.AxisType.Auto,) * 2
        from importlib import import_module
        layout = import_module(f"{j.__name__}.experimental.layout")
        one = j.numpy.ones(2).sharding
        fmt = layout.Format(layout.Layout((1, 0)), one)
        assert fmt.layout.major_to_minor == (1, 0) and fmt.sharding == one
        assert layout.Format().layout is None
        with pytest.raises(ValueError, match="sharding"):
            layout.Format(layout.Layout((0,)))
        assert j.version.__version_info__ >= (0, 10, 2)
        assert isinstance(j.random.key(0), j.Array)
        dtypes_src = import_module(f"{j.__name__}._src.dtypes")  # (what flax imports)
        assert isinstance(j.random.key(0).dtype, dtypes_src.ExtendedDType)
        assert not dtypes_src.supports_inf(j.numpy.float8_e4m3fn)
        assert not hasattr(j.dtypes, "ExtendedDType")
    assert didax.version.__version__ == jax.__version__


def test_hijax_declarations_work_and_using_them_raises():
    """flax's nnx declares hijax types and primitives at import (and uses them only with
    `flax_hijax_variable` on): declaring works; binding, or tracing such a value, says what
    is missing."""
    from didax.experimental import hijax
    from didax.extend.core import Effect

    class VarEffect(Effect):
        pass
    hijax.control_flow_allowed_effects.add_type(VarEffect)
    assert hijax.control_flow_allowed_effects.contains(VarEffect())

    class NewThing(hijax.HiPrimitive):
        def impl(self, x):
            return x
    new_thing_p = NewThing("new_thing")

    class Thing:
        def __init__(self, x):
            self.x = x

        @hijax.aval_method
        def doubled(self):
            return 2 * self.x

        size = hijax.aval_property(fget=lambda self: 1)

    class AbstractThing(hijax.MutableHiType):
        pass
    hijax.register_hitype(Thing, lambda t: AbstractThing())
    assert Thing(3).doubled() == 6 and Thing(3).size == 1 and AbstractThing.mutable
    with pytest.raises(NotImplementedError, match="new_thing"):
        new_thing_p.bind(1.0)
    with pytest.raises(NotImplementedError, match="Thing"):
        didax.jit(lambda t: t)(Thing(1.0))


def test_samplers_take_an_out_sharding_as_jax_does():
    key = didax.random.key(0)
    for name in ("normal", "uniform", "bits"):
        plain = getattr(didax.random, name)(key, (3,))
        np.testing.assert_array_equal(
            getattr(didax.random, name)(key, (3,), out_sharding=didax.P()), plain)
    mask = didax.random.bernoulli(key, 0.5, (4,), out_sharding=jnp.ones(4).sharding)
    np.testing.assert_array_equal(mask, didax.random.bernoulli(key, 0.5, (4,)))


def test_key_types_and_the_node_table_as_jax():
    for j in (didax, jax):
        key = j.random.key(0)
        t = j.typeof(key)
        assert t.shape == () and t.dtype == key.dtype and str(t.dtype) == "key<fry>"
        assert j.typeof(j.random.split(key, 3)).shape == (3,)
    from didax._src.tree_util import _registry
    assert tuple in _registry and dict in _registry and int not in _registry
    with pytest.raises(NotImplementedError, match="key_data"):
        didax.new_ref(didax.random.key(0))


def test_monitoring_events_and_mesh_utils_as_jax():
    for j in (didax, jax):
        seen = []

        def listener(event, duration, seen=seen, **kwargs):
            seen.append((event, duration >= 0, kwargs.get("fun_name")))

        def on_event(event, seen=seen, **kwargs):
            seen.append((event, kwargs))
        j.monitoring.register_event_duration_secs_listener(listener)
        j.monitoring.register_event_listener(on_event)
        try:
            j.jit(lambda x: x * 3)(2.0)
            j.monitoring.record_event("/user/event", step=1)
        finally:
            j.monitoring.unregister_event_duration_listener(listener)
            j.monitoring.unregister_event_listener(on_event)
        assert ("/jax/core/compile/jaxpr_trace_duration", True, "<lambda>") in seen
        assert ("/jax/core/compile/backend_compile_duration", True, "jit(<lambda>)") in seen
        assert ("/user/event", {"step": 1}) in seen
        with pytest.raises(AssertionError):
            j.monitoring.unregister_event_listener(on_event)
        from importlib import import_module
        mesh_utils = import_module(f"{j.__name__}.experimental.mesh_utils")
        mesh = mesh_utils.create_device_mesh((1,))
        assert isinstance(mesh, np.ndarray) and mesh.shape == (1,)
        with pytest.raises(ValueError):
            mesh_utils.create_device_mesh((len(j.devices()) + 1,))
