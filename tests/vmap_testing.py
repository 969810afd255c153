"""Shared helpers of the vmap tests: the specification of vmap is a loop over examples."""
import numpy as np


def _take(x, i, axis):
    return x if axis is None else np.take(x, i, axis)


def loop(f, in_axes, size, *args):
    """f applied to each example, the results stacked along a new leading axis."""
    outs = [f(*(_take(a, i, ax) for a, ax in zip(args, in_axes))) for i in range(size)]
    if isinstance(outs[0], (tuple, list)):
        return tuple(np.stack([np.asarray(o[k]) for o in outs]) for k in range(len(outs[0])))
    return np.stack([np.asarray(o) for o in outs])


def assert_same(out, expected):
    """Equal shapes and dtypes; values to 1e-12 (exact for integers and booleans)."""
    if isinstance(expected, tuple):
        assert isinstance(out, (tuple, list)) and len(out) == len(expected)
        for o, e in zip(out, expected):
            assert_same(o, e)
        return
    out = np.asarray(out)
    assert out.shape == expected.shape
    assert out.dtype == expected.dtype
    if np.issubdtype(expected.dtype, np.inexact):
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(out, expected)
