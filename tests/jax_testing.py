"""Shared helpers of the tests that run JAX (the specification) beside didax."""
import contextlib

import jax
import jax.scipy.stats as jax_stats
import numpy as np

import didax.scipy.stats as didax_stats
from didax._src.config import enable_x64


@contextlib.contextmanager
def both_x64(on=True):
    """64-bit types in didax and in JAX alike."""
    with enable_x64(on), jax.enable_x64(on):
        yield


def assert_same(got, want, tol=1e-5):
    """didax's result against the reference's (JAX's or SciPy's): same shapes and dtypes, values
    within `tol`; a tuple of results is compared element by element."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def assert_stats_function_as_jax(dist, fn, args, x64, rtol32, atol, scalar_values=False):
    """`scipy.stats.<dist>.<fn>(*args)` under didax and JAX: the same dtypes and weak types (also
    for a Python-scalar first argument) and values within rtol 1e-9 (x64) or `rtol32` (with
    `scalar_values`, the Python-scalar call's values too)."""
    dtype = np.float64 if x64 else np.float32
    arr = (args[0].astype(dtype),) + args[1:]
    ours, theirs = getattr(getattr(didax_stats, dist), fn), getattr(getattr(jax_stats, dist), fn)
    with both_x64(x64):
        got, want = ours(*arr), theirs(*arr)
        scalar, scalar_ref = ours(*((0.5,) + args[1:])), theirs(*((0.5,) + args[1:]))
    assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
    assert (scalar.dtype, scalar.weak_type) == (scalar_ref.dtype, scalar_ref.weak_type)
    rtol = 1e-9 if x64 else rtol32
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)
    if scalar_values:
        np.testing.assert_allclose(np.asarray(scalar), np.asarray(scalar_ref), rtol=rtol)


def _leaves(tree):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def assert_same_values(got, want, rtol=0.0, what=""):
    """Same dtype and shape, NaN where `want` has NaN, and equal values (within `rtol`)."""
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), (what, got.dtype, got.shape,
                                                               want.dtype, want.shape)
    if got.dtype.kind == "V":  # (ml_dtypes' floats: compared as float32, NaN and all)
        got, want = got.astype(np.float32), want.astype(np.float32)
    if rtol:
        np.testing.assert_allclose(got, want, rtol=rtol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def assert_as_jax(program, *args, jax_jit=True, rtol=0.0, didax_jit=True):
    """`program(lib, lib.numpy, lib.lax, *args)` gives JAX's results under didax, eagerly and
    (if `didax_jit`) under `didax.jit`: the same dtypes and shapes, the same values (exactly,
    NaN in the same places, unless `rtol`). JAX runs it under `jit` if `jax_jit`, else
    eagerly, or (`jax_jit="same"`) as didax does: eagerly against eagerly, jit against
    jit. The arguments are NumPy arrays, converted to each library's arrays."""
    import didax

    def run(lib, jit):
        fn = lambda *a: program(lib, lib.numpy, lib.lax, *a)  # noqa: E731
        return _leaves((lib.jit(fn) if jit else fn)(*[lib.numpy.asarray(a) for a in args]))

    want = None if jax_jit == "same" else run(jax, jax_jit)
    for jit in (False, True) if didax_jit else (False,):
        if jax_jit == "same":
            want = run(jax, jit)
        got = run(didax, jit)
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same_values(g, w, rtol, f"result {i}, {'jit' if jit else 'eager'}")


INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def integer_edges(dtype):
    """0, 1, 2, 3, 7, 100, the extremes and their neighbours (and the negatives of some)."""
    info = np.iinfo(dtype)
    values = {0, 1, 2, 3, 7, 100, info.max, info.max - 1, info.min, info.min + 1}
    if info.min < 0:
        values |= {-1, -2, -3, -7}
    return np.array(sorted(values), dtype)


def integer_edge_pairs(dtype):
    """Every pair of integer_edges, as two flat arrays."""
    v = integer_edges(dtype)
    return [a.ravel() for a in np.meshgrid(v, v)]
