"""jnp.frompyfunc / jnp.ufunc (call, reduce, accumulate, reduceat, outer, at) and the file
and buffer functions (save, savez, load, from_dlpack, fromfile, ComplexWarning), against JAX."""
import io
import operator

import jax.numpy as jnp_jax
import numpy as np
import pytest
from jax_absent import needs_jax
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax.test_util import check_grads


def _programs(m):
    add = m.frompyfunc(operator.add, nin=2, nout=1, identity=0)
    affine = m.frompyfunc(lambda a, b: a * b + 1.0, nin=2, nout=1)
    big = m.frompyfunc(m.maximum, 2, 1, identity=-np.inf)
    pair = m.frompyfunc(lambda a: (a * 2, a - 1), 1, 2)
    x = m.arange(4)
    mat = m.arange(12.0).reshape(3, 4) / 5
    return {
        "call": lambda: add(x, 10), "outer": lambda: add.outer(x, x),
        "reduce": lambda: add.reduce(x), "accumulate": lambda: add.accumulate(x),
        "at": lambda: add.at(x, 1, 10, inplace=False),
        "call_float": lambda: affine(mat, 2.0),
        "reduce_rows": lambda: affine.reduce(mat, axis=1),
        "reduce_cols": lambda: affine.reduce(mat, axis=0),
        "reduce_all": lambda: affine.reduce(mat, axis=None),  # folds mat.ravel() in order
        "accumulate_rows": lambda: affine.accumulate(mat, axis=1),
        "outer_float": lambda: affine.outer(m.arange(3.0), m.arange(2.0)),
        "at_repeated": lambda: affine.at(mat[0], m.array([0, 2, 0]), 3.0, inplace=False),
        "keepdims": lambda: big.reduce(mat, axis=1, keepdims=True),
        "initial": lambda: add.reduce(x, initial=5),
        "where": lambda: add.reduce(m.arange(6.0).reshape(2, 3), axis=1,
                                    where=m.array([True, False, True])),
        "reduceat": lambda: add.reduceat(m.arange(8), m.array([0, 4, 1, 5])),
        "two_outputs": lambda: pair(mat),
    }


@pytest.mark.parametrize("name", list(_programs(jnp)))
def test_ufunc_methods_match_jax(name):
    ours, theirs = _programs(jnp)[name](), _programs(jnp_jax)[name]()
    for a, b in zip(ours if isinstance(ours, tuple) else (ours,),
                    theirs if isinstance(theirs, tuple) else (theirs,)):
        assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_ufunc_attributes_errors_and_derivatives():
    add = jnp.frompyfunc(operator.add, nin=2, nout=1, identity=0)
    assert (add.nin, add.nout, add.nargs, add.identity) == (2, 1, 2, 0)
    assert isinstance(add, jnp.ufunc) and "add" in repr(add)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        add.at(jnp.arange(3), 0, 1)
    with pytest.raises(ValueError, match="binary ufuncs"):
        jnp.frompyfunc(jnp.sin, 1, 1).reduce(jnp.ones(3))
    with pytest.raises(ValueError, match="no identity"):
        jnp.frompyfunc(operator.mul, 2, 1).reduce(jnp.ones((0,)))
    f = jnp.frompyfunc(lambda a, b: a * jnp.sin(b) + b, nin=2, nout=1)
    with both_x64():
        x = np.linspace(0.1, 1.2, 6)
        check_grads(lambda v: f.reduce(v), (x,), order=2, modes=("fwd", "rev"))
        check_grads(lambda v: f.accumulate(v), (x,), order=1, modes=("fwd", "rev"))
        check_grads(lambda v: f.outer(v, v[:3]), (x,), order=1, modes=("fwd", "rev"))
    np.testing.assert_allclose(didax.jit(lambda v: f.reduce(v))(x.astype(np.float32)),
                               jnp_jax.frompyfunc(lambda a, b: a * jnp_jax.sin(b) + b, 2, 1)
                               .reduce(x.astype(np.float32)), rtol=1e-6)


@needs_jax
def test_save_load_savez_and_buffers():
    buf = io.BytesIO()
    jnp.save(buf, jnp.arange(3.0))
    buf.seek(0)
    loaded = jnp.load(buf)
    assert isinstance(loaded, jnp.ndarray) and loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, [0.0, 1.0, 2.0])
    buf = io.BytesIO()
    jnp.savez(buf, a=jnp.ones(2, jnp.float16), b=jnp.arange(2))
    buf.seek(0)
    archive = jnp.load(buf)
    assert archive["a"].dtype == jnp.float16 and list(archive["b"]) == [0, 1]
    assert jnp.save is jnp_jax.save and jnp.savez is jnp_jax.savez
    x = jnp.from_dlpack(np.arange(4.0, dtype=np.float32))
    y = jnp_jax.from_dlpack(np.arange(4.0, dtype=np.float32))
    assert x.dtype == y.dtype and isinstance(x, jnp.ndarray)
    np.testing.assert_array_equal(x, y)
    for module in (jnp, jnp_jax):
        with pytest.raises(NotImplementedError, match="np.fromfile"):
            module.fromfile(io.BytesIO())
    assert jnp.ComplexWarning is jnp_jax.ComplexWarning
