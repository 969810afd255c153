"""Numerical derivative checks: `check_jvp`, `check_vjp` and `check_grads`, as in
`jax.test_util`.

JVPs are compared with central finite differences along random directions; VJPs through
`<ct, J u> == <J^T ct, u>`. Higher orders recurse on the JVP (a function of primals and
tangents) and on the VJP (pulling back the output itself), in every requested mode.
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.errors import function_site, user_error
from didax._src.transforms import api
from didax._src.tree_util import tree_flatten, tree_map

EPS = 1e-4


def _np(x):
    return np.asarray(x)


def _is_float(x):
    return dtypes.issubdtype(_np(x).dtype, np.inexact)


def _default_tol(dtype):
    return {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-2,
            np.dtype(np.complex64): 1e-2}.get(np.dtype(dtype), 1e-5)


def _rand_like(rng, tree):
    """A random direction with the structure of `tree`; integer leaves get float0 zeros."""

    def leaf(x):
        a = _np(x)
        if not _is_float(a):
            return core.Array(np.zeros(a.shape, np.dtype([("float0", np.void, 0)])))
        t = rng.standard_normal(a.shape)
        if dtypes.issubdtype(a.dtype, np.complexfloating):
            t = t + 1j * rng.standard_normal(a.shape)
        return core.Array(t.astype(a.dtype))

    return tree_map(leaf, tree)


def check_close(actual, expected, atol=None, rtol=None, err_msg=""):
    flat_a, tree_a = tree_flatten(actual)
    flat_e, tree_e = tree_flatten(expected)
    if tree_a != tree_e:
        raise AssertionError(f"{err_msg}: tree structures differ: {tree_a} vs {tree_e}")
    for a, e in zip(flat_a, flat_e):
        a, e = _np(a), _np(e)
        if a.dtype.names or e.dtype.names:  # float0 tangents of integer values
            continue
        tol_a = atol if atol is not None else _default_tol(a.dtype)
        tol_r = rtol if rtol is not None else _default_tol(a.dtype)
        np.testing.assert_allclose(a.astype(np.result_type(a, np.float64)), e, atol=tol_a,
                                   rtol=tol_r, err_msg=err_msg)


def _shift(primals, tangents, scale):
    def leaf(p, t):
        t = _np(t)
        if t.dtype.names:
            return p
        return core.Array((_np(p) + scale * t).astype(_np(p).dtype))

    return tree_map(leaf, primals, tangents)


def numerical_jvp(f, primals, tangents, eps=EPS):
    """Central finite difference of `f(*primals)` along `tangents` (pytrees)."""
    f_pos = f(*_shift(primals, tangents, eps))
    f_neg = f(*_shift(primals, tangents, -eps))

    def diff(a, b):
        a, b = _np(a), _np(b)
        if not _is_float(a):
            return np.zeros(a.shape, np.float64)
        return (a.astype(np.result_type(a, np.float64)) - b) / (2 * eps)

    return tree_map(diff, f_pos, f_neg)


def _inner(xs, ys) -> float:
    """Re <x, y>, the real inner product JAX's checks use (complex numbers as pairs)."""
    total = 0.0
    for x, y in zip(tree_flatten(xs)[0], tree_flatten(ys)[0]):
        x, y = _np(x), _np(y)
        if x.dtype.names or y.dtype.names:
            continue
        total += float(np.real(np.vdot(x.astype(np.complex128), y.astype(np.complex128))))
    return total


def _conj(tree):
    def leaf(x):
        a = _np(x)
        return core.Array(np.conj(a)) if dtypes.issubdtype(a.dtype, np.complexfloating) else x

    return tree_map(leaf, tree)


def _tol(tree, given):
    if given is not None:
        return given
    leaves = [_np(x) for x in tree_flatten(tree)[0] if _is_float(x)]
    return max((_default_tol(x.dtype) for x in leaves), default=1e-5)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg="", rng=None):
    """`f_jvp(args, tangents)` agrees with `f` and with finite differences of `f`."""
    rng = rng if rng is not None else np.random.default_rng(0)
    tangents = _rand_like(rng, args)
    out, t_out = f_jvp(args, tangents)
    check_close(out, f(*args), atol=atol, rtol=rtol, err_msg=f"{err_msg} primal")
    t_expected = numerical_jvp(f, args, tangents, eps)
    check_close(t_out, t_expected, atol=_tol(t_out, atol), rtol=_tol(t_out, rtol),
                err_msg=f"{err_msg} tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg="", rng=None):
    """`f_vjp(*args)` agrees with `f`, and its pullback is the transpose of the Jacobian
    (measured by finite differences): `<ct, J u> == <J^T ct, u>`."""
    rng = rng if rng is not None else np.random.default_rng(0)
    out, vjp_fun = f_vjp(*args)
    check_close(out, f(*args), atol=atol, rtol=rtol, err_msg=f"{err_msg} primal")
    ct = _rand_like(rng, out)
    ct_in = _conj(vjp_fun(_conj(ct)))  # JAX's convention for complex cotangents
    tangents = _rand_like(rng, args)
    lhs = _inner(ct, numerical_jvp(f, args, tangents, eps))
    rhs = _inner(ct_in, tangents)
    tol = _tol(args, atol)
    np.testing.assert_allclose(rhs, lhs, atol=tol, rtol=_tol(args, rtol),
                               err_msg=f"{err_msg}: <J^T ct, u> differs from <ct, J u>")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=EPS):
    """Checks derivatives of `f` up to `order` in the given modes against finite differences."""
    args = tuple(args)
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads: unknown modes {sorted(unknown)}; use 'fwd' and/or 'rev'")
    rng = np.random.default_rng(0)

    stage = ["", 0]  # which check runs: its name ("JVP of VJP"...) and derivative order

    def _check(fun, fargs, k, msg):
        if "fwd" in modes:
            fwd_msg = f"JVP of {msg}" if msg else "JVP"
            stage[:] = [fwd_msg, order - k + 1]
            check_jvp(fun, lambda a, t: api.jvp(fun, a, t), fargs, atol, rtol, eps, fwd_msg, rng)
            if k > 1:
                tangents = tree_map(lambda a: a if _is_float(a) else _rand_like(rng, a), fargs)
                _check(lambda p, t: api.jvp(fun, p, t), (fargs, tangents), k - 1, fwd_msg)
        if "rev" in modes:
            rev_msg = f"VJP of {msg}" if msg else "VJP"
            stage[:] = [rev_msg, order - k + 1]
            check_vjp(fun, lambda *a: api.vjp(fun, *a), fargs, atol, rtol, eps, rev_msg, rng)
            if k > 1:
                def fun_vjp(*a):
                    out, pullback = api.vjp(fun, *a)
                    return pullback(out)

                _check(fun_vjp, fargs, k - 1, rev_msg)

    try:
        _check(f, args, order, "")
    except AssertionError as e:
        shapes = ", ".join(_type_of(x) for x in tree_flatten(args)[0])
        mode = "forward mode (JVP)" if stage[0].startswith("JVP") else "reverse mode (VJP)"
        raise user_error(AssertionError, (
            f"check_grads: the order-{stage[1]} derivative of {function_site(f)} in {mode}"
            f"{f' ({stage[0]})' if ' of ' in stage[0] else ''} disagrees with finite "
            f"differences (eps={eps}) at arguments of type ({shapes}).\nWhat to do: check "
            "the derivative rules this function uses (`custom_jvp`/`custom_vjp` rules first); "
            "if the function has a kink or a "
            "discontinuity near the point, check at another point, or pass a larger "
            f"atol/rtol.\nThe comparison:{e}")) from None


def _type_of(x) -> str:
    try:
        return core.get_aval(x).str_short()
    except TypeError:
        return type(x).__name__
