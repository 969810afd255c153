"""Shared helpers of the didax.numpy tests: compare results with NumPy's, in both x64 modes."""
import numpy as np
import pytest

X64 = pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])


def leaves(r):
    """Arrays of a (nested) result; a list of plain numbers is one leaf."""
    if isinstance(r, (tuple, list)) and not all(isinstance(x, (int, float, complex)) for x in r):
        return [leaf for x in r for leaf in leaves(x)]
    return [r]


def assert_matches(got, want, exact=False, rtol=1e-5, atol=1e-6):
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        if exact or w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
