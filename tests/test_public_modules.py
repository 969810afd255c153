"""The thin public modules (didax.core, dtypes, errors, stages, typing) and top-level names,
used as JAX programs use them, against jax 0.10.2 where it has an answer; and
`isinstance(tracer, didax.Array)` under every transformation."""
import contextlib
import io

import jax
import numpy as np
import pytest
from jax_absent import needs_jax

import didax
import didax.numpy as jnp
from didax._src import core as _core

# -- didax.Array and tracers ----------------------------------------------------------------

def test_tracers_are_instances_of_array_as_in_jax():
    seen = []

    def f(x):
        seen.append((isinstance(x, didax.Array), isinstance(x, didax.core.Tracer)))
        return x * 2
    didax.jit(f)(1.)
    didax.vmap(f)(jnp.ones(2))
    didax.grad(f)(1.)
    didax.jvp(f, (1.,), (1.,))
    didax.make_jaxpr(f)(1.)
    assert seen == [(True, True)] * 5
    assert isinstance(jnp.ones(2), didax.Array) and not isinstance(jnp.ones(2), didax.core.Tracer)
    for x in (np.ones(2), 1.0, [1.0], None):
        assert not isinstance(x, didax.Array)
    # nothing else changes: concrete arrays keep their type, tracers stay no subclass
    assert type(jnp.ones(2)) is didax.Array and not issubclass(didax.core.Tracer, didax.Array)
    assert issubclass(jax.core.Tracer, jax.Array) is False


# -- didax.core -----------------------------------------------------------------------------

def test_core_names_map_onto_didax_objects():
    c = didax.core
    assert c.Tracer is _core.Tracer and c.ShapedArray is _core.ShapedArray
    assert c.Trace is _core.Interpreter
    aval = c.ShapedArray((2,), np.float32)
    ref = jax.core.ShapedArray((2,), np.float32)
    assert isinstance(aval, c.AbstractValue) and isinstance(ref, jax.core.AbstractValue)
    assert (aval.shape, aval.dtype, aval.weak_type) == (ref.shape, ref.dtype, ref.weak_type)
    assert isinstance(didax.typeof(jnp.ones(2)), c.AbstractValue)
    closed = didax.make_jaxpr(lambda x: x * 2 + 1)(1.)
    assert all(isinstance(v, c.Atom) for v in closed.jaxpr.invars + closed.jaxpr.eqns[0].invars)
    assert float(c.eval_jaxpr(closed.jaxpr, closed.consts, 3.)[0]) == 7.0
    assert c.max_dim(3, 4) == jax.core.max_dim(3, 4) and c.min_dim(3, 4) == jax.core.min_dim(3, 4)
    assert c.ParamDict == jax.core.ParamDict
    with c.ensure_compile_time_eval():
        pass

    def f(x):
        with c.eval_context():
            y = jnp.arange(3.) * 2  # evaluated now, not staged
            assert not isinstance(y, c.Tracer)
        return x + y
    np.testing.assert_array_equal(didax.jit(f)(1.), [1., 3., 5.])


# -- didax.dtypes ---------------------------------------------------------------------------

def test_dtypes_against_jax():
    d, jd = didax.dtypes, jax.dtypes
    for args in [(np.float32, np.int32), (1.0, np.int8), (jnp.ones(2, jnp.int16), 2)]:
        assert d.result_type(*args) == jd.result_type(*args)
    assert d.canonicalize_dtype(np.float64) == jd.canonicalize_dtype(np.float64)
    assert d.scalar_type_of(1.0) is jd.scalar_type_of(1.0) is float
    assert d.scalar_type_of(jnp.ones(2, jnp.int32)) is int
    assert d.finfo(np.float32).eps == jd.finfo(np.float32).eps
    assert d.iinfo(jnp.ones(2, jnp.int8)).max == 127
    assert d.issubdtype(np.float32, np.floating) and not d.issubdtype(np.int32, np.floating)
    assert d.itemsize_bits(np.bool_) == jd.itemsize_bits(np.bool_) == 8
    assert d.itemsize_bits("float32") == jd.itemsize_bits("float32") == 32
    assert d.float0 == jd.float0 == didax.float0
    assert issubclass(d.TypePromotionError, ValueError)
    assert issubclass(d.prng_key, d.extended) and issubclass(d.extended, np.generic)


def test_typed_key_dtypes_are_prng_keys():
    d = didax.dtypes
    for key, jkey in [(didax.random.key(0), jax.random.key(0))]:
        for b in (d.prng_key, d.extended):
            jb = jax.dtypes.prng_key if b is d.prng_key else jax.dtypes.extended
            assert d.issubdtype(key.dtype, b) == jax.dtypes.issubdtype(jkey.dtype, jb) is True
        assert jnp.issubdtype(key.dtype, np.floating) is False
        assert d.issubdtype(key.dtype, key.dtype) and not d.issubdtype(np.float32, key.dtype)
        assert not d.issubdtype(np.float32, d.extended)
        assert not d.issubdtype(didax.random.PRNGKey(0).dtype, d.prng_key)  # raw uint32 keys
        with pytest.raises(ValueError):
            d.itemsize_bits(key.dtype)


# -- didax.errors ---------------------------------------------------------------------------

@needs_jax
def test_error_hierarchy_matches_jax():
    e, je = didax.errors, jax.errors
    for name in ("ConcretizationTypeError", "TracerArrayConversionError", "KeyReuseError",
                 "NonConcreteBooleanIndexError", "JaxRuntimeError", "JaxprTypeError",
                 "InconclusiveDimensionOperation", "JAXIndexError", "JAXTypeError"):
        ours, theirs = getattr(e, name), getattr(je, name)
        for builtin in (TypeError, IndexError, RuntimeError, ValueError, Exception):
            assert issubclass(ours, builtin) == issubclass(theirs, builtin), (name, builtin)
    assert issubclass(e.ConcretizationTypeError, e.JAXTypeError)
    assert issubclass(e.NonConcreteBooleanIndexError, e.JAXIndexError)
    assert issubclass(e.KeyReuseError, e.JAXTypeError)


def test_errors_didax_raises_are_caught_by_jax_names():
    with pytest.raises(didax.errors.JAXTypeError):
        didax.jit(lambda x: 1 if x > 0 else 2)(1.)
    with pytest.raises(didax.errors.JAXIndexError):
        didax.jit(lambda x: x[x > 0])(jnp.ones(3))
    closed = didax.make_jaxpr(lambda x: x + 1)(1.)
    closed.jaxpr.eqns[0].outvars[0] = closed.jaxpr.invars[0]  # defined twice
    with pytest.raises(didax.errors.JaxprTypeError):
        didax._src.ir.check_jaxpr(closed.jaxpr)


# -- didax.stages, typing and top-level names -----------------------------------------------

def test_stages_are_the_classes_jit_returns():
    f = didax.jit(lambda x: x * 2)
    assert isinstance(f, didax.stages.Wrapped)
    traced = f.trace(1.)
    lowered = traced.lower()
    compiled = lowered.compile()
    assert isinstance(traced, didax.stages.Traced) and isinstance(lowered, didax.stages.Lowered)
    assert isinstance(compiled, didax.stages.Compiled)
    assert isinstance(f.lower(1.), didax.stages.Lowered)


def test_typing_annotations():
    from didax.typing import ArrayLike, DTypeLike

    def f(x: ArrayLike, dtype: DTypeLike = None):
        return jnp.asarray(x, dtype)
    assert f(1, np.float32).dtype == np.float32
    for x in (jnp.ones(2), np.ones(2), np.float32(1), True, 1, 1.0, 1j):
        assert isinstance(x, ArrayLike)
    assert not isinstance([1.0], ArrayLike)


def test_clear_caches_retraces():
    traces = []
    f = didax.jit(lambda x: traces.append(1) or x + 1)
    f(1.)
    f(1.)
    didax.clear_caches()
    f(1.)
    assert len(traces) == 2 and f.cache_info().misses == 2


def test_context_managers_and_environment():
    assert didax.default_backend() == jax.default_backend() == "cpu"
    with didax.enable_x64():
        assert jnp.ones(1).dtype == np.float64
    assert jnp.ones(1).dtype == np.float32
    with didax.debug_nans(True):
        assert didax.config.jax_debug_nans
        with pytest.raises(FloatingPointError):
            jnp.log(-jnp.ones(1))
    assert not didax.config.jax_debug_nans
    with didax.named_scope("layer1"):
        np.testing.assert_array_equal(didax.jit(lambda x: x + 1)(1.), 2.)
    with pytest.raises(TypeError):
        with didax.named_scope(3):
            pass
    text = didax.print_environment_info(return_string=True)
    assert "numpy:" in text and "python:" in text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert didax.print_environment_info() is None
    assert "didax:" in out.getvalue()
