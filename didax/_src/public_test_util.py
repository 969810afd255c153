"""Numerical derivative checks: `check_jvp` and `check_grads`, as in `jax.test_util`.

Derivatives are compared against central finite differences along random directions,
recursively for higher orders (the derivative of the JVP is checked in turn).
"""
from __future__ import annotations

import numpy as np

from didax._src import api, core
from didax._src.tree_util import tree_flatten, tree_map, tree_unflatten

EPS = 1e-4


def _np(x):
    return np.asarray(x)


def _is_float(x):
    return np.issubdtype(_np(x).dtype, np.inexact)


def _rand_like(rng, x):
    a = _np(x)
    if not _is_float(a):
        return None
    t = rng.standard_normal(a.shape)
    if np.issubdtype(a.dtype, np.complexfloating):
        t = t + 1j * rng.standard_normal(a.shape)
    return core.Array(t.astype(a.dtype))


def _default_tol(dtype):
    return {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-2}.get(np.dtype(dtype), 1e-5)


def check_close(actual, expected, atol=None, rtol=None, err_msg=""):
    flat_a, tree_a = tree_flatten(actual)
    flat_e, tree_e = tree_flatten(expected)
    if tree_a != tree_e:
        raise AssertionError(f"{err_msg}: tree structures differ: {tree_a} vs {tree_e}")
    for a, e in zip(flat_a, flat_e):
        a, e = _np(a), _np(e)
        if a.dtype.names or e.dtype.names:  # float0 tangents of integer outputs
            continue
        tol_a = atol if atol is not None else _default_tol(a.dtype)
        tol_r = rtol if rtol is not None else _default_tol(a.dtype)
        np.testing.assert_allclose(a.astype(np.result_type(a, np.float64)), e, atol=tol_a,
                                   rtol=tol_r, err_msg=err_msg)


def numerical_jvp(f, primals, tangents, eps=EPS):
    def shifted(sign):
        return [p if t is None else core.Array(_np(p) + sign * eps * _np(t))
                for p, t in zip(primals, tangents)]

    f_pos = f(*shifted(1))
    f_neg = f(*shifted(-1))

    def diff(a, b):
        a, b = _np(a), _np(b)
        if not _is_float(a):
            return np.zeros(a.shape, np.float64)
        return (a - b) / (2 * eps)

    return tree_map(diff, f_pos, f_neg)


def check_jvp(f, args, atol=None, rtol=None, eps=EPS, rng=None):
    """The JVP of `f` at `args` (a tuple) along a random direction matches finite differences."""
    rng = rng or np.random.default_rng(0)
    tangents = [_rand_like(rng, a) for a in args]
    diff_idx = [i for i, t in enumerate(tangents) if t is not None]
    if not diff_idx:
        return

    def f_diff(*dargs):
        full = list(args)
        for i, v in zip(diff_idx, dargs):
            full[i] = v
        return f(*full)

    dprimals = tuple(args[i] for i in diff_idx)
    dtangents = tuple(tangents[i] for i in diff_idx)
    out, t_out = api.jvp(f_diff, dprimals, dtangents)
    check_close(out, f_diff(*dprimals), atol=atol, rtol=rtol, err_msg="jvp primal output")
    t_expected = numerical_jvp(f_diff, list(dprimals), list(dtangents), eps)
    check_close(t_out, t_expected, atol=atol, rtol=rtol, err_msg="jvp tangent output")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=EPS):
    """Checks derivatives of `f` up to `order` in the given modes against finite differences."""
    args = tuple(args)
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads: unknown modes {sorted(unknown)}; use 'fwd' and/or 'rev'")
    if "rev" in modes:
        raise NotImplementedError("check_grads: mode 'rev' needs reverse-mode differentiation "
                                  "(vjp), which is not implemented yet")
    rng = np.random.default_rng(0)

    def _check(fun, fargs, k):
        check_jvp(fun, fargs, atol, rtol, eps, rng)
        if k > 1:
            tangents = [_rand_like(rng, a) for a in fargs]
            idx = [i for i, t in enumerate(tangents) if t is not None]

            def fun_jvp(*xs):
                full = list(fargs)
                for i, v in zip(idx, xs):
                    full[i] = v

                def g(*ys):
                    inner = list(full)
                    for i, v in zip(idx, ys):
                        inner[i] = v
                    return fun(*inner)

                return api.jvp(g, tuple(full[i] for i in idx), tuple(tangents[i] for i in idx))[1]

            _check(fun_jvp, tuple(fargs[i] for i in idx), k - 1)

    _check(f, args, order)


del tree_unflatten
