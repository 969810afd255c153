"""`canonicalize_dtype_handlers`: per Python type, the function giving a value of it as a
NumPy array of its canonical dtype (64-bit types narrowed unless x64 is on)."""
from __future__ import annotations

import numpy as np

from didax._src import dtypes


def _canonical_array(x):
    value = np.asarray(x)
    return value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)


canonicalize_dtype_handlers: dict = {np.ndarray: _canonical_array}
canonicalize_dtype_handlers.update((t, _canonical_array) for t in (
    bool, int, float, complex, np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
    np.uint16, np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
    np.complex128))
