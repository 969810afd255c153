"""The BLAS native products call: the OpenBLAS NumPy ships (64-bit integer interface).

It is found in NumPy's install (`numpy.libs/libscipy_openblas64_*.so`, already loaded by
NumPy), and its sgemm/dgemm addresses are handed to a module when it is instantiated, so
the C source never names a path. The library's path and hash are part of the cache key.
"""
from __future__ import annotations

import ctypes
import functools
import glob
import hashlib
import os

import numpy as np

SYMBOLS = ("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_")


@functools.lru_cache(maxsize=1)
def library():
    """(path, sha256, (sgemm address, dgemm address)) or None if NumPy has no such BLAS."""
    root = os.path.dirname(os.path.dirname(np.__file__))
    for path in sorted(glob.glob(os.path.join(root, "numpy.libs", "libscipy_openblas64_*.so"))):
        try:
            lib = ctypes.CDLL(path)
            addresses = tuple(ctypes.cast(getattr(lib, s), ctypes.c_void_p).value
                              for s in SYMBOLS)
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
        except (OSError, AttributeError):
            continue
        return path, digest, addresses
    return None


def available() -> bool:
    return library() is not None


def key() -> str:
    """What a module calling BLAS depends on besides its source."""
    found = library()
    return f"{found[0]} {found[1]}" if found else ""


def addresses() -> tuple:
    found = library()
    return found[2] if found else (0, 0)
