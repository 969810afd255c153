"""Mirrors `jax.typing`: annotations for functions taking arrays and dtypes."""
from __future__ import annotations

from typing import Any, Union

import numpy as np

from didax._src.core import Array

ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
"""Anything a didax function accepts as an array: arrays, NumPy arrays and scalars, Python
scalars (not lists, which JAX refuses too)."""

DTypeLike = Union[str, type, np.dtype, Any]
"""Anything accepted as a dtype: a name, a scalar type, a NumPy dtype, an object with
a `dtype` attribute."""
