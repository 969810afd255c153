"""The sparse product kernels: the C module and the NumPy fallback give the same bits
(float32 and float64, int32 and int64 indices, entries out of bounds, empty rows), on every
call, and the right values; other dtypes take the NumPy path."""
import numpy as np
import pytest

from didax._src.compiler.native import toolchain
from didax._src.config import flag_context
from didax._src.primitives.sparse import kernels


def _coo(rng, n_rows, n_cols, nse, index_dtype):
    rows = rng.integers(-1, n_rows + 1, nse).astype(index_dtype)  # (some out of bounds)
    cols = rng.integers(-1, n_cols + 1, nse).astype(index_dtype)
    rows[: nse // 3] = 2  # (a row of many entries, and rows 0..n with none)
    return rows, cols


def _reference(data, rows, cols, B, n_rows):
    ok = (rows >= 0) & (rows < n_rows) & (cols >= 0) & (cols < B.shape[0])
    dense = np.zeros((n_rows, B.shape[0]))
    np.add.at(dense, (rows[ok], cols[ok]), data[ok].astype(np.float64))
    return dense @ B.astype(np.float64)


def _csr(data, rows, cols, n_rows):
    ok = (rows >= 0) & (rows < n_rows)
    order = np.argsort(np.where(ok, rows, n_rows), kind="stable")
    indptr = np.searchsorted(rows[order][: ok.sum()], np.arange(n_rows + 1))
    return data[order], cols[order], indptr.astype(rows.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_native_and_numpy_agree_bitwise(dtype, index_dtype):
    if toolchain.toolchain() is None:
        pytest.skip("no C compiler: the NumPy fallback serves every product")
    assert kernels.native_module(wait=True) is not None
    rng = np.random.default_rng(1)
    n_rows, n_cols, nse = 40, 30, 500
    rows, cols = _coo(rng, n_rows, n_cols, nse, index_dtype)
    data = rng.standard_normal(nse).astype(dtype)
    for B in (rng.standard_normal(n_cols).astype(dtype),
              rng.standard_normal((n_cols, 5)).astype(dtype)):
        with flag_context("didax_native_tier", "check"):  # (raises if the bits differ)
            coo = kernels.coo_matmul(data, rows, cols, B, n_rows, dtype)
            d, c, indptr = _csr(data, rows, cols, n_rows)
            csr = kernels.csr_matmul(d, c, indptr, B, dtype)
            csr_strided = kernels.csr_matmul(d, np.stack([c, c], 1)[:, 0], indptr, B, dtype)
        want = _reference(data, rows, cols, B.reshape(n_cols, -1), n_rows).reshape(coo.shape)
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(coo, want, rtol=tol, atol=tol)
        np.testing.assert_allclose(csr, want, rtol=tol, atol=tol)
        np.testing.assert_array_equal(csr_strided, csr)
        with flag_context("didax_native_tier", "sync"):
            again = kernels.coo_matmul(data, rows, cols, B, n_rows, dtype)
        assert again.tobytes() == coo.tobytes() and coo.dtype == dtype


@pytest.mark.parametrize("dtype", [np.int32, np.complex64, np.bool_, np.float16])
def test_other_dtypes(dtype):
    rng = np.random.default_rng(2)
    rows, cols = _coo(rng, 6, 5, 20, np.int32)
    data = (rng.standard_normal(20) * 3).astype(dtype)
    B = (rng.standard_normal((5, 2)) * 3).astype(dtype)
    got = kernels.coo_matmul(data, rows, cols, B, 6, dtype)
    assert got.dtype == dtype
    ok = (rows >= 0) & (rows < 6) & (cols >= 0) & (cols < 5)
    dense = np.zeros((6, 5), complex)
    np.add.at(dense, (rows[ok], cols[ok]), data[ok])
    want = dense @ B.astype(complex)
    if dtype != np.complex64:
        want = want.real != 0 if dtype == np.bool_ else want.real
    np.testing.assert_allclose(got.astype(want.dtype), want, rtol=2e-3, atol=2e-3)


def _long_rows(rng, n_rows, n_cols, index_dtype):
    """Rows of random length, with runs of empty rows (some longer than a C stream's block
    of 512 elements), rows longer than a block, and some columns out of bounds: every
    boundary case of the streamed row-by-row kernels."""
    counts = rng.poisson(6, n_rows)
    counts[rng.random(n_rows) < 0.2] = 0
    counts[100:700] = 0
    counts[5] = 1500
    counts[-1] = 700
    rows = np.repeat(np.arange(n_rows), counts).astype(index_dtype)
    cols = rng.integers(-1, n_cols + 1, rows.shape[0]).astype(index_dtype)
    return rows, cols


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_sorted_rows_agree_bitwise(dtype, index_dtype):
    """CSR and row-sorted COO (also as the (nse, 2) index array BCOO holds) take the streamed
    kernels (a vector) or the row-by-row tiled ones (a matrix: 3 columns, and 27 for wide and
    narrow tiles and single columns); their bits match the NumPy twin and the unsorted path,
    also where the rows stop being sorted only near the end."""
    if toolchain.toolchain() is None:
        pytest.skip("no C compiler: the NumPy fallback serves every product")
    assert kernels.native_module(wait=True) is not None
    rng = np.random.default_rng(3)
    n_rows, n_cols = 2000, 300
    rows, cols = _long_rows(rng, n_rows, n_cols, index_dtype)
    data = rng.standard_normal(rows.shape[0]).astype(dtype)
    indptr = np.searchsorted(rows, np.arange(n_rows + 1)).astype(index_dtype)
    pairs = np.stack([rows, cols], 1)
    shuffled = rng.permutation(rows.shape[0])
    for B in (rng.standard_normal(n_cols).astype(dtype),
              rng.standard_normal((n_cols, 3)).astype(dtype),
              rng.standard_normal((n_cols, 27)).astype(dtype)):
        with flag_context("didax_native_tier", "check"):  # (raises if the bits differ)
            csr = kernels.csr_matmul(data, cols, indptr, B, dtype)
            coo = kernels.coo_matmul(data, rows, cols, B, n_rows, dtype)
            bcoo = kernels.coo_matmul(data, pairs[:, 0], pairs[:, 1], B, n_rows, dtype)
            unsorted = kernels.coo_matmul(data[shuffled], rows[shuffled], cols[shuffled],
                                          B, n_rows, dtype)
            for last_row in (0, n_rows):  # (unsorted, or out of bounds, at the last element)
                late = pairs.copy()
                late[-1, 0] = last_row
                kernels.coo_matmul(data, late[:, 0], late[:, 1], B, n_rows, dtype)
        want = _reference(data, rows, cols, B.reshape(n_cols, -1), n_rows).reshape(csr.shape)
        tol = 1e-4 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(csr, want, rtol=tol, atol=tol)
        assert coo.tobytes() == csr.tobytes() and bcoo.tobytes() == csr.tobytes()
        np.testing.assert_allclose(unsorted, want, rtol=tol, atol=tol)


def test_irregular_indptr_and_rows_agree_bitwise():
    """An indptr that decreases or leaves [0, nse), and rows out of bounds, take the general
    kernels: still the twin's bits."""
    if toolchain.toolchain() is None:
        pytest.skip("no C compiler: the NumPy fallback serves every product")
    assert kernels.native_module(wait=True) is not None
    rng = np.random.default_rng(4)
    data = rng.standard_normal(3000).astype(np.float32)
    cols = rng.integers(0, 50, 3000).astype(np.int32)
    B = rng.standard_normal(50).astype(np.float32)
    with flag_context("didax_native_tier", "check"):
        for indptr in ([-5, 1000, 900, 2000, 3100], [0, 1500, 1500, 3000, 3000]):
            for x in (B, B[:, None], np.stack([B] * 9, 1)):
                kernels.csr_matmul(data, cols, np.array(indptr, np.int32), x, np.float32)
        rows = np.sort(rng.integers(0, 4, 3000)).astype(np.int32)
        for bad_row in (-1, 4):
            r = rows.copy()
            r[[0, -1][bad_row > 0]] = bad_row
            kernels.coo_matmul(data, r, cols, B, 4, np.float32)
