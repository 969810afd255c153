"""The jax.extend.core names of didax/_src/compat/extend_core.py, against JAX."""
import jax
import jax.extend.core as jc
import numpy as np
import pytest
from jax_absent import needs_jax

import didax
import didax.extend.core as dc
import didax.numpy as jnp


def _flags(core):
    return (core.unsafe_am_i_under_a_jit_DO_NOT_USE(), core.unsafe_am_i_under_a_vmap_DO_NOT_USE(),
            core.unsafe_get_axis_names_DO_NOT_USE(), core.nonempty_axis_env_DO_NOT_USE())


@pytest.mark.parametrize("wrap", [lambda m, f: f, lambda m, f: m.jit(f),
                                  lambda m, f: m.vmap(f), lambda m, f: m.vmap(f, axis_name="i"),
                                  lambda m, f: m.jit(m.vmap(f, axis_name="i"))])
def test_trace_queries_as_jax(wrap):
    seen = {}

    def probe(mod, core):
        def f(x):
            seen[mod] = _flags(core)
            return x
        return f

    wrap(didax, probe(didax, dc))(np.ones(2, np.float32))
    wrap(jax, probe(jax, jc))(np.ones(2, np.float32))
    assert seen[didax] == seen[jax]


@needs_jax
def test_dtypes_jaxprs_and_errors():
    for d in (np.int32, np.float16, np.bool_):
        assert dc.primal_dtype_to_tangent_dtype(d) == jc.primal_dtype_to_tangent_dtype(d)
    assert dc.concrete_or_error(int, 3, "c") == 3
    with pytest.raises(didax.errors.ConcretizationTypeError, match="the ctx"):
        didax.jit(lambda x: dc.concrete_or_error(int, x, "the ctx"))(1)
    closed = didax.make_jaxpr(lambda x: didax.lax.cond(x > 0, jnp.sin, jnp.cos, x))(1.0)
    dc.check_jaxpr(closed.jaxpr)
    assert len(list(dc.subjaxprs(closed.jaxpr))) == 2
    eqn = closed.jaxpr.eqns[0]
    copy = dc.new_jaxpr_eqn(eqn.invars, eqn.outvars, eqn.primitive, eqn.params, set())
    assert str(copy) == str(eqn)
    var = dc.gensym()(didax.core.ShapedArray((2,), np.float32))
    assert var.aval.shape == (2,)
    bad = dc.Jaxpr([], [], [var], [])
    with pytest.raises(dc.JaxprTypeError):
        dc.check_jaxpr(bad)
    assert issubclass(dc.JaxprTypeError, TypeError)
    assert repr(dc.AbstractToken()) == "AbstractToken()"
    with dc.take_current_trace() as t:
        with dc.set_current_trace(t) as t2:
            assert t2 is t
