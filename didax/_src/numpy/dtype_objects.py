"""`jnp.float32` and friends: dtype-like objects that also construct arrays when called.

`jnp.float32(2)` returns an array (not a NumPy scalar), and `np.dtype(jnp.float32)` works
because each object carries a `dtype` attribute.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.numpy.util import asarray


class _ScalarType:
    """A named scalar type; calling it converts a value to an array of that dtype."""

    def __init__(self, np_type):
        self.dtype = np.dtype(np_type)
        self.type = np_type
        self.__name__ = self.dtype.name if np_type is not np.bool_ else "bool"

    def __repr__(self):
        return f"<class 'didax.numpy.{self.__name__}'>"

    def __call__(self, x):
        return asarray(x, dtype=self.dtype)

    def __eq__(self, other):
        if isinstance(other, _ScalarType):
            return self.dtype == other.dtype
        return self.type == other or self.dtype == other

    def __hash__(self):
        return hash(self.type)

    def __instancecheck__(self, instance):
        return isinstance(instance, self.type)


bool_ = _ScalarType(np.bool_)
int8, int16, int32, int64 = (_ScalarType(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (_ScalarType(t) for t in (np.uint8, np.uint16, np.uint32,
                                                          np.uint64))
float16, float32, float64 = (_ScalarType(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = _ScalarType(np.complex64), _ScalarType(np.complex128)
# The ml_dtypes types: jnp.bfloat16, jnp.float8_e4m3fn, jnp.int4, ...
_ML_TYPES = {name: _ScalarType(np.dtype(name).type)
             for name in dtypes.ML_FLOAT_NAMES + dtypes.ML_INT_NAMES}
globals().update(_ML_TYPES)
uint = uint64
double = float64
single = float32
half = float16
csingle = complex64
cdouble = complex128


def _default(kind):
    def make():
        return {"i": dtypes.default_int_dtype, "f": dtypes.default_float_dtype,
                "c": dtypes.default_complex_dtype}[kind]()

    return make


class _DefaultScalarType(_ScalarType):
    """`jnp.int_`, `jnp.float_`-like names whose dtype follows the x64 flag."""

    def __init__(self, kind, name):
        self._kind = kind
        self.__name__ = name

    @property
    def dtype(self):
        return _default(self._kind)()

    @property
    def type(self):
        return self.dtype.type


int_ = _DefaultScalarType("i", "int_")
float_ = float64  # as in JAX (results are canonicalized: float32 without x64)
bool = bool_  # noqa: A001 - JAX's name
object_ = np.object_  # NumPy's own (didax arrays cannot hold objects)
complex_ = _DefaultScalarType("c", "complex_")

__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "uint",
    "float16", "float32", "float64", "complex64", "complex128", "double", "single", "half",
    "csingle", "cdouble", "int_", "complex_", "float_", "bool", "object_", *_ML_TYPES,
]
