"""didax.numpy elementwise functions: values against NumPy, result dtypes and weak types
against JAX (the table below was produced by running JAX 0.10.2), derivatives."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

INPUTS = {"f32": np.ones(3, np.float32), "i32": np.ones(3, np.int32), "i8": np.ones(3, np.int8),
          "u8": np.ones(3, np.uint8), "b": np.ones(3, bool), "f16": np.ones(3, np.float16),
          "py_int": 2, "py_float": 2.0}

JAX_DTYPES = {
    ('negative', 'f32'): ('float32', False),
    ('negative', 'i32'): ('int32', False),
    ('negative', 'i8'): ('int8', False),
    ('negative', 'u8'): ('uint8', False),
    ('negative', 'b'): ('error', 'TypeError'),
    ('negative', 'f16'): ('float16', False),
    ('negative', 'py_int'): ('int32', True),
    ('negative', 'py_float'): ('float32', True),
    ('positive', 'f32'): ('float32', False),
    ('positive', 'i32'): ('int32', False),
    ('positive', 'i8'): ('int8', False),
    ('positive', 'u8'): ('uint8', False),
    ('positive', 'b'): ('bool', False),
    ('positive', 'f16'): ('float16', False),
    ('positive', 'py_int'): ('int32', True),
    ('positive', 'py_float'): ('float32', True),
    ('absolute', 'f32'): ('float32', False),
    ('absolute', 'i32'): ('int32', False),
    ('absolute', 'i8'): ('int8', False),
    ('absolute', 'u8'): ('uint8', False),
    ('absolute', 'b'): ('bool', False),
    ('absolute', 'f16'): ('float16', False),
    ('absolute', 'py_int'): ('int32', True),
    ('absolute', 'py_float'): ('float32', True),
    ('sign', 'f32'): ('float32', False),
    ('sign', 'i32'): ('int32', False),
    ('sign', 'i8'): ('int8', False),
    ('sign', 'u8'): ('uint8', False),
    ('sign', 'b'): ('error', 'TypeError'),
    ('sign', 'f16'): ('float16', False),
    ('sign', 'py_int'): ('int32', True),
    ('sign', 'py_float'): ('float32', True),
    ('floor', 'f32'): ('float32', False),
    ('floor', 'i32'): ('int32', False),
    ('floor', 'i8'): ('int8', False),
    ('floor', 'u8'): ('uint8', False),
    ('floor', 'b'): ('bool', False),
    ('floor', 'f16'): ('float16', False),
    ('floor', 'py_int'): ('int32', True),
    ('floor', 'py_float'): ('float32', True),
    ('ceil', 'f32'): ('float32', False),
    ('ceil', 'i32'): ('int32', False),
    ('ceil', 'i8'): ('int8', False),
    ('ceil', 'u8'): ('uint8', False),
    ('ceil', 'b'): ('bool', False),
    ('ceil', 'f16'): ('float16', False),
    ('ceil', 'py_int'): ('int32', True),
    ('ceil', 'py_float'): ('float32', True),
    ('trunc', 'f32'): ('float32', False),
    ('trunc', 'i32'): ('int32', False),
    ('trunc', 'i8'): ('int8', False),
    ('trunc', 'u8'): ('uint8', False),
    ('trunc', 'b'): ('bool', False),
    ('trunc', 'f16'): ('float16', False),
    ('trunc', 'py_int'): ('int32', True),
    ('trunc', 'py_float'): ('float32', True),
    ('rint', 'f32'): ('float32', False),
    ('rint', 'i32'): ('float32', False),
    ('rint', 'i8'): ('float32', False),
    ('rint', 'u8'): ('float32', False),
    ('rint', 'b'): ('float32', False),
    ('rint', 'f16'): ('float16', False),
    ('rint', 'py_int'): ('float32', False),
    ('rint', 'py_float'): ('float32', True),
    ('exp', 'f32'): ('float32', False),
    ('exp', 'i32'): ('float32', False),
    ('exp', 'i8'): ('float32', False),
    ('exp', 'u8'): ('float32', False),
    ('exp', 'b'): ('float32', False),
    ('exp', 'f16'): ('float16', False),
    ('exp', 'py_int'): ('float32', True),
    ('exp', 'py_float'): ('float32', True),
    ('exp2', 'f32'): ('float32', False),
    ('exp2', 'i32'): ('float32', False),
    ('exp2', 'i8'): ('float32', False),
    ('exp2', 'u8'): ('float32', False),
    ('exp2', 'b'): ('float32', False),
    ('exp2', 'f16'): ('float16', False),
    ('exp2', 'py_int'): ('float32', True),
    ('exp2', 'py_float'): ('float32', True),
    ('expm1', 'f32'): ('float32', False),
    ('expm1', 'i32'): ('float32', False),
    ('expm1', 'i8'): ('float32', False),
    ('expm1', 'u8'): ('float32', False),
    ('expm1', 'b'): ('float32', False),
    ('expm1', 'f16'): ('float16', False),
    ('expm1', 'py_int'): ('float32', True),
    ('expm1', 'py_float'): ('float32', True),
    ('log', 'f32'): ('float32', False),
    ('log', 'i32'): ('float32', False),
    ('log', 'i8'): ('float32', False),
    ('log', 'u8'): ('float32', False),
    ('log', 'b'): ('float32', False),
    ('log', 'f16'): ('float16', False),
    ('log', 'py_int'): ('float32', True),
    ('log', 'py_float'): ('float32', True),
    ('log1p', 'f32'): ('float32', False),
    ('log1p', 'i32'): ('float32', False),
    ('log1p', 'i8'): ('float32', False),
    ('log1p', 'u8'): ('float32', False),
    ('log1p', 'b'): ('float32', False),
    ('log1p', 'f16'): ('float16', False),
    ('log1p', 'py_int'): ('float32', True),
    ('log1p', 'py_float'): ('float32', True),
    ('log2', 'f32'): ('float32', False),
    ('log2', 'i32'): ('float32', False),
    ('log2', 'i8'): ('float32', False),
    ('log2', 'u8'): ('float32', False),
    ('log2', 'b'): ('float32', False),
    ('log2', 'f16'): ('float16', False),
    ('log2', 'py_int'): ('float32', False),
    ('log2', 'py_float'): ('float32', False),
    ('log10', 'f32'): ('float32', False),
    ('log10', 'i32'): ('float32', False),
    ('log10', 'i8'): ('float32', False),
    ('log10', 'u8'): ('float32', False),
    ('log10', 'b'): ('float32', False),
    ('log10', 'f16'): ('float16', False),
    ('log10', 'py_int'): ('float32', False),
    ('log10', 'py_float'): ('float32', False),
    ('sqrt', 'f32'): ('float32', False),
    ('sqrt', 'i32'): ('float32', False),
    ('sqrt', 'i8'): ('float32', False),
    ('sqrt', 'u8'): ('float32', False),
    ('sqrt', 'b'): ('float32', False),
    ('sqrt', 'f16'): ('float16', False),
    ('sqrt', 'py_int'): ('float32', True),
    ('sqrt', 'py_float'): ('float32', True),
    ('cbrt', 'f32'): ('float32', False),
    ('cbrt', 'i32'): ('float32', False),
    ('cbrt', 'i8'): ('float32', False),
    ('cbrt', 'u8'): ('float32', False),
    ('cbrt', 'b'): ('float32', False),
    ('cbrt', 'f16'): ('float16', False),
    ('cbrt', 'py_int'): ('float32', True),
    ('cbrt', 'py_float'): ('float32', True),
    ('sin', 'f32'): ('float32', False),
    ('sin', 'i32'): ('float32', False),
    ('sin', 'i8'): ('float32', False),
    ('sin', 'u8'): ('float32', False),
    ('sin', 'b'): ('float32', False),
    ('sin', 'f16'): ('float16', False),
    ('sin', 'py_int'): ('float32', True),
    ('sin', 'py_float'): ('float32', True),
    ('cos', 'f32'): ('float32', False),
    ('cos', 'i32'): ('float32', False),
    ('cos', 'i8'): ('float32', False),
    ('cos', 'u8'): ('float32', False),
    ('cos', 'b'): ('float32', False),
    ('cos', 'f16'): ('float16', False),
    ('cos', 'py_int'): ('float32', True),
    ('cos', 'py_float'): ('float32', True),
    ('tan', 'f32'): ('float32', False),
    ('tan', 'i32'): ('float32', False),
    ('tan', 'i8'): ('float32', False),
    ('tan', 'u8'): ('float32', False),
    ('tan', 'b'): ('float32', False),
    ('tan', 'f16'): ('float16', False),
    ('tan', 'py_int'): ('float32', True),
    ('tan', 'py_float'): ('float32', True),
    ('arcsin', 'f32'): ('float32', False),
    ('arcsin', 'i32'): ('float32', False),
    ('arcsin', 'i8'): ('float32', False),
    ('arcsin', 'u8'): ('float32', False),
    ('arcsin', 'b'): ('float32', False),
    ('arcsin', 'f16'): ('float16', False),
    ('arcsin', 'py_int'): ('float32', True),
    ('arcsin', 'py_float'): ('float32', True),
    ('arccos', 'f32'): ('float32', False),
    ('arccos', 'i32'): ('float32', False),
    ('arccos', 'i8'): ('float32', False),
    ('arccos', 'u8'): ('float32', False),
    ('arccos', 'b'): ('float32', False),
    ('arccos', 'f16'): ('float16', False),
    ('arccos', 'py_int'): ('float32', True),
    ('arccos', 'py_float'): ('float32', True),
    ('arctan', 'f32'): ('float32', False),
    ('arctan', 'i32'): ('float32', False),
    ('arctan', 'i8'): ('float32', False),
    ('arctan', 'u8'): ('float32', False),
    ('arctan', 'b'): ('float32', False),
    ('arctan', 'f16'): ('float16', False),
    ('arctan', 'py_int'): ('float32', True),
    ('arctan', 'py_float'): ('float32', True),
    ('sinh', 'f32'): ('float32', False),
    ('sinh', 'i32'): ('float32', False),
    ('sinh', 'i8'): ('float32', False),
    ('sinh', 'u8'): ('float32', False),
    ('sinh', 'b'): ('float32', False),
    ('sinh', 'f16'): ('float16', False),
    ('sinh', 'py_int'): ('float32', True),
    ('sinh', 'py_float'): ('float32', True),
    ('cosh', 'f32'): ('float32', False),
    ('cosh', 'i32'): ('float32', False),
    ('cosh', 'i8'): ('float32', False),
    ('cosh', 'u8'): ('float32', False),
    ('cosh', 'b'): ('float32', False),
    ('cosh', 'f16'): ('float16', False),
    ('cosh', 'py_int'): ('float32', True),
    ('cosh', 'py_float'): ('float32', True),
    ('tanh', 'f32'): ('float32', False),
    ('tanh', 'i32'): ('float32', False),
    ('tanh', 'i8'): ('float32', False),
    ('tanh', 'u8'): ('float32', False),
    ('tanh', 'b'): ('float32', False),
    ('tanh', 'f16'): ('float16', False),
    ('tanh', 'py_int'): ('float32', True),
    ('tanh', 'py_float'): ('float32', True),
    ('arcsinh', 'f32'): ('float32', False),
    ('arcsinh', 'i32'): ('float32', False),
    ('arcsinh', 'i8'): ('float32', False),
    ('arcsinh', 'u8'): ('float32', False),
    ('arcsinh', 'b'): ('float32', False),
    ('arcsinh', 'f16'): ('float16', False),
    ('arcsinh', 'py_int'): ('float32', True),
    ('arcsinh', 'py_float'): ('float32', True),
    ('arccosh', 'f32'): ('float32', False),
    ('arccosh', 'i32'): ('float32', False),
    ('arccosh', 'i8'): ('float32', False),
    ('arccosh', 'u8'): ('float32', False),
    ('arccosh', 'b'): ('float32', False),
    ('arccosh', 'f16'): ('float16', False),
    ('arccosh', 'py_int'): ('float32', True),
    ('arccosh', 'py_float'): ('float32', True),
    ('arctanh', 'f32'): ('float32', False),
    ('arctanh', 'i32'): ('float32', False),
    ('arctanh', 'i8'): ('float32', False),
    ('arctanh', 'u8'): ('float32', False),
    ('arctanh', 'b'): ('float32', False),
    ('arctanh', 'f16'): ('float16', False),
    ('arctanh', 'py_int'): ('float32', True),
    ('arctanh', 'py_float'): ('float32', True),
    ('deg2rad', 'f32'): ('float32', False),
    ('deg2rad', 'i32'): ('float32', False),
    ('deg2rad', 'i8'): ('float32', False),
    ('deg2rad', 'u8'): ('float32', False),
    ('deg2rad', 'b'): ('float32', False),
    ('deg2rad', 'f16'): ('float16', False),
    ('deg2rad', 'py_int'): ('float32', True),
    ('deg2rad', 'py_float'): ('float32', True),
    ('rad2deg', 'f32'): ('float32', False),
    ('rad2deg', 'i32'): ('float32', False),
    ('rad2deg', 'i8'): ('float32', False),
    ('rad2deg', 'u8'): ('float32', False),
    ('rad2deg', 'b'): ('float32', False),
    ('rad2deg', 'f16'): ('float16', False),
    ('rad2deg', 'py_int'): ('float32', True),
    ('rad2deg', 'py_float'): ('float32', True),
    ('square', 'f32'): ('float32', False),
    ('square', 'i32'): ('int32', False),
    ('square', 'i8'): ('int8', False),
    ('square', 'u8'): ('uint8', False),
    ('square', 'b'): ('int32', False),
    ('square', 'f16'): ('float16', False),
    ('square', 'py_int'): ('int32', True),
    ('square', 'py_float'): ('float32', True),
    ('reciprocal', 'f32'): ('float32', False),
    ('reciprocal', 'i32'): ('float32', False),
    ('reciprocal', 'i8'): ('float32', False),
    ('reciprocal', 'u8'): ('float32', False),
    ('reciprocal', 'b'): ('float32', False),
    ('reciprocal', 'f16'): ('float16', False),
    ('reciprocal', 'py_int'): ('float32', True),
    ('reciprocal', 'py_float'): ('float32', True),
    ('isfinite', 'f32'): ('bool', False),
    ('isfinite', 'i32'): ('bool', False),
    ('isfinite', 'i8'): ('bool', False),
    ('isfinite', 'u8'): ('bool', False),
    ('isfinite', 'b'): ('bool', False),
    ('isfinite', 'f16'): ('bool', False),
    ('isfinite', 'py_int'): ('bool', False),
    ('isfinite', 'py_float'): ('bool', True),
    ('isnan', 'f32'): ('bool', False),
    ('isnan', 'i32'): ('bool', False),
    ('isnan', 'i8'): ('bool', False),
    ('isnan', 'u8'): ('bool', False),
    ('isnan', 'b'): ('bool', False),
    ('isnan', 'f16'): ('bool', False),
    ('isnan', 'py_int'): ('bool', True),
    ('isnan', 'py_float'): ('bool', True),
    ('isinf', 'f32'): ('bool', False),
    ('isinf', 'i32'): ('bool', False),
    ('isinf', 'i8'): ('bool', False),
    ('isinf', 'u8'): ('bool', False),
    ('isinf', 'b'): ('bool', False),
    ('isinf', 'f16'): ('bool', False),
    ('isinf', 'py_int'): ('bool', False),
    ('isinf', 'py_float'): ('bool', False),
    ('signbit', 'f32'): ('bool', False),
    ('signbit', 'i32'): ('bool', False),
    ('signbit', 'i8'): ('bool', False),
    ('signbit', 'u8'): ('bool', False),
    ('signbit', 'b'): ('bool', False),
    ('signbit', 'f16'): ('bool', False),
    ('signbit', 'py_int'): ('bool', False),
    ('signbit', 'py_float'): ('bool', False),
    ('logical_not', 'f32'): ('bool', False),
    ('logical_not', 'i32'): ('bool', False),
    ('logical_not', 'i8'): ('bool', False),
    ('logical_not', 'u8'): ('bool', False),
    ('logical_not', 'b'): ('bool', False),
    ('logical_not', 'f16'): ('bool', False),
    ('logical_not', 'py_int'): ('bool', True),
    ('logical_not', 'py_float'): ('bool', True),
    ('real', 'f32'): ('float32', False),
    ('real', 'i32'): ('int32', False),
    ('real', 'i8'): ('int8', False),
    ('real', 'u8'): ('uint8', False),
    ('real', 'b'): ('bool', False),
    ('real', 'f16'): ('float16', False),
    ('real', 'py_int'): ('int32', True),
    ('real', 'py_float'): ('float32', True),
    ('imag', 'f32'): ('float32', False),
    ('imag', 'i32'): ('int32', False),
    ('imag', 'i8'): ('int8', False),
    ('imag', 'u8'): ('uint8', False),
    ('imag', 'b'): ('bool', False),
    ('imag', 'f16'): ('float16', False),
    ('imag', 'py_int'): ('int32', True),
    ('imag', 'py_float'): ('float32', True),
    ('conjugate', 'f32'): ('float32', False),
    ('conjugate', 'i32'): ('int32', False),
    ('conjugate', 'i8'): ('int8', False),
    ('conjugate', 'u8'): ('uint8', False),
    ('conjugate', 'b'): ('bool', False),
    ('conjugate', 'f16'): ('float16', False),
    ('conjugate', 'py_int'): ('int32', True),
    ('conjugate', 'py_float'): ('float32', True),
    ('add', 'f32,f32'): ('float32', False),
    ('add', 'f32,i32'): ('float32', False),
    ('add', 'i32,i32'): ('int32', False),
    ('add', 'i8,u8'): ('int16', False),
    ('add', 'b,b'): ('bool', False),
    ('add', 'i8,py_int'): ('int8', False),
    ('add', 'i32,py_float'): ('float32', True),
    ('add', 'f16,py_float'): ('float16', False),
    ('add', 'b,py_int'): ('int32', True),
    ('add', 'u8,py_int'): ('uint8', False),
    ('add', 'py_int,py_float'): ('float32', True),
    ('add', 'f16,i32'): ('float16', False),
    ('subtract', 'f32,f32'): ('float32', False),
    ('subtract', 'f32,i32'): ('float32', False),
    ('subtract', 'i32,i32'): ('int32', False),
    ('subtract', 'i8,u8'): ('int16', False),
    ('subtract', 'b,b'): ('error', 'TypeError'),
    ('subtract', 'i8,py_int'): ('int8', False),
    ('subtract', 'i32,py_float'): ('float32', True),
    ('subtract', 'f16,py_float'): ('float16', False),
    ('subtract', 'b,py_int'): ('int32', True),
    ('subtract', 'u8,py_int'): ('uint8', False),
    ('subtract', 'py_int,py_float'): ('float32', True),
    ('subtract', 'f16,i32'): ('float16', False),
    ('multiply', 'f32,f32'): ('float32', False),
    ('multiply', 'f32,i32'): ('float32', False),
    ('multiply', 'i32,i32'): ('int32', False),
    ('multiply', 'i8,u8'): ('int16', False),
    ('multiply', 'b,b'): ('bool', False),
    ('multiply', 'i8,py_int'): ('int8', False),
    ('multiply', 'i32,py_float'): ('float32', True),
    ('multiply', 'f16,py_float'): ('float16', False),
    ('multiply', 'b,py_int'): ('int32', True),
    ('multiply', 'u8,py_int'): ('uint8', False),
    ('multiply', 'py_int,py_float'): ('float32', True),
    ('multiply', 'f16,i32'): ('float16', False),
    ('true_divide', 'f32,f32'): ('float32', False),
    ('true_divide', 'f32,i32'): ('float32', False),
    ('true_divide', 'i32,i32'): ('float32', False),
    ('true_divide', 'i8,u8'): ('float32', False),
    ('true_divide', 'b,b'): ('float32', False),
    ('true_divide', 'i8,py_int'): ('float32', False),
    ('true_divide', 'i32,py_float'): ('float32', True),
    ('true_divide', 'f16,py_float'): ('float16', False),
    ('true_divide', 'b,py_int'): ('float32', True),
    ('true_divide', 'u8,py_int'): ('float32', False),
    ('true_divide', 'py_int,py_float'): ('float32', True),
    ('true_divide', 'f16,i32'): ('float16', False),
    ('floor_divide', 'f32,f32'): ('float32', False),
    ('floor_divide', 'f32,i32'): ('float32', False),
    ('floor_divide', 'i32,i32'): ('int32', False),
    ('floor_divide', 'i8,u8'): ('int16', False),
    ('floor_divide', 'b,b'): ('int32', False),
    ('floor_divide', 'i8,py_int'): ('int8', False),
    ('floor_divide', 'i32,py_float'): ('float32', True),
    ('floor_divide', 'f16,py_float'): ('float16', False),
    ('floor_divide', 'b,py_int'): ('int32', True),
    ('floor_divide', 'u8,py_int'): ('uint8', False),
    ('floor_divide', 'py_int,py_float'): ('float32', True),
    ('floor_divide', 'f16,i32'): ('float16', False),
    ('remainder', 'f32,f32'): ('float32', False),
    ('remainder', 'f32,i32'): ('float32', False),
    ('remainder', 'i32,i32'): ('int32', False),
    ('remainder', 'i8,u8'): ('int16', False),
    ('remainder', 'b,b'): ('int32', False),
    ('remainder', 'i8,py_int'): ('int8', False),
    ('remainder', 'i32,py_float'): ('float32', True),
    ('remainder', 'f16,py_float'): ('float16', False),
    ('remainder', 'b,py_int'): ('int32', True),
    ('remainder', 'u8,py_int'): ('uint8', False),
    ('remainder', 'py_int,py_float'): ('float32', True),
    ('remainder', 'f16,i32'): ('float16', False),
    ('power', 'f32,f32'): ('float32', False),
    ('power', 'f32,i32'): ('float32', False),
    ('power', 'i32,i32'): ('int32', False),
    ('power', 'i8,u8'): ('int16', False),
    ('power', 'b,b'): ('int32', False),
    ('power', 'i8,py_int'): ('int8', False),
    ('power', 'i32,py_float'): ('float32', True),
    ('power', 'f16,py_float'): ('float16', False),
    ('power', 'b,py_int'): ('int32', False),
    ('power', 'u8,py_int'): ('uint8', False),
    ('power', 'py_int,py_float'): ('float32', True),
    ('power', 'f16,i32'): ('float16', False),
    ('float_power', 'f32,f32'): ('float32', False),
    ('float_power', 'f32,i32'): ('float32', False),
    ('float_power', 'i32,i32'): ('float32', False),
    ('float_power', 'i8,u8'): ('float32', False),
    ('float_power', 'b,b'): ('float32', False),
    ('float_power', 'i8,py_int'): ('float32', False),
    ('float_power', 'i32,py_float'): ('float32', True),
    ('float_power', 'f16,py_float'): ('float16', False),
    ('float_power', 'b,py_int'): ('float32', True),
    ('float_power', 'u8,py_int'): ('float32', False),
    ('float_power', 'py_int,py_float'): ('float32', True),
    ('float_power', 'f16,i32'): ('float16', False),
    ('maximum', 'f32,f32'): ('float32', False),
    ('maximum', 'f32,i32'): ('float32', False),
    ('maximum', 'i32,i32'): ('int32', False),
    ('maximum', 'i8,u8'): ('int16', False),
    ('maximum', 'b,b'): ('bool', False),
    ('maximum', 'i8,py_int'): ('int8', False),
    ('maximum', 'i32,py_float'): ('float32', True),
    ('maximum', 'f16,py_float'): ('float16', False),
    ('maximum', 'b,py_int'): ('int32', True),
    ('maximum', 'u8,py_int'): ('uint8', False),
    ('maximum', 'py_int,py_float'): ('float32', True),
    ('maximum', 'f16,i32'): ('float16', False),
    ('minimum', 'f32,f32'): ('float32', False),
    ('minimum', 'f32,i32'): ('float32', False),
    ('minimum', 'i32,i32'): ('int32', False),
    ('minimum', 'i8,u8'): ('int16', False),
    ('minimum', 'b,b'): ('bool', False),
    ('minimum', 'i8,py_int'): ('int8', False),
    ('minimum', 'i32,py_float'): ('float32', True),
    ('minimum', 'f16,py_float'): ('float16', False),
    ('minimum', 'b,py_int'): ('int32', True),
    ('minimum', 'u8,py_int'): ('uint8', False),
    ('minimum', 'py_int,py_float'): ('float32', True),
    ('minimum', 'f16,i32'): ('float16', False),
    ('arctan2', 'f32,f32'): ('float32', False),
    ('arctan2', 'f32,i32'): ('float32', False),
    ('arctan2', 'i32,i32'): ('float32', False),
    ('arctan2', 'i8,u8'): ('float32', False),
    ('arctan2', 'b,b'): ('float32', False),
    ('arctan2', 'i8,py_int'): ('float32', False),
    ('arctan2', 'i32,py_float'): ('float32', True),
    ('arctan2', 'f16,py_float'): ('float16', False),
    ('arctan2', 'b,py_int'): ('float32', True),
    ('arctan2', 'u8,py_int'): ('float32', False),
    ('arctan2', 'py_int,py_float'): ('float32', True),
    ('arctan2', 'f16,i32'): ('float16', False),
    ('hypot', 'f32,f32'): ('float32', False),
    ('hypot', 'f32,i32'): ('float32', False),
    ('hypot', 'i32,i32'): ('float32', False),
    ('hypot', 'i8,u8'): ('float32', False),
    ('hypot', 'b,b'): ('float32', False),
    ('hypot', 'i8,py_int'): ('float32', False),
    ('hypot', 'i32,py_float'): ('float32', False),
    ('hypot', 'f16,py_float'): ('float16', False),
    ('hypot', 'b,py_int'): ('float32', False),
    ('hypot', 'u8,py_int'): ('float32', False),
    ('hypot', 'py_int,py_float'): ('float32', True),
    ('hypot', 'f16,i32'): ('float16', False),
    ('logaddexp', 'f32,f32'): ('float32', False),
    ('logaddexp', 'f32,i32'): ('float32', False),
    ('logaddexp', 'i32,i32'): ('float32', False),
    ('logaddexp', 'i8,u8'): ('float32', False),
    ('logaddexp', 'b,b'): ('float32', False),
    ('logaddexp', 'i8,py_int'): ('float32', False),
    ('logaddexp', 'i32,py_float'): ('float32', True),
    ('logaddexp', 'f16,py_float'): ('float16', False),
    ('logaddexp', 'b,py_int'): ('float32', True),
    ('logaddexp', 'u8,py_int'): ('float32', False),
    ('logaddexp', 'py_int,py_float'): ('float32', True),
    ('logaddexp', 'f16,i32'): ('float16', False),
    ('logaddexp2', 'f32,f32'): ('float32', False),
    ('logaddexp2', 'f32,i32'): ('float32', False),
    ('logaddexp2', 'i32,i32'): ('float32', False),
    ('logaddexp2', 'i8,u8'): ('float32', False),
    ('logaddexp2', 'b,b'): ('float32', False),
    ('logaddexp2', 'i8,py_int'): ('float32', False),
    ('logaddexp2', 'i32,py_float'): ('float32', False),
    ('logaddexp2', 'f16,py_float'): ('float16', False),
    ('logaddexp2', 'b,py_int'): ('float32', False),
    ('logaddexp2', 'u8,py_int'): ('float32', False),
    ('logaddexp2', 'py_int,py_float'): ('float32', True),
    ('logaddexp2', 'f16,i32'): ('float16', False),
    ('copysign', 'f32,f32'): ('float32', False),
    ('copysign', 'f32,i32'): ('float32', False),
    ('copysign', 'i32,i32'): ('float32', False),
    ('copysign', 'i8,u8'): ('float32', False),
    ('copysign', 'b,b'): ('float32', False),
    ('copysign', 'i8,py_int'): ('float32', False),
    ('copysign', 'i32,py_float'): ('float32', True),
    ('copysign', 'f16,py_float'): ('float16', False),
    ('copysign', 'b,py_int'): ('float32', True),
    ('copysign', 'u8,py_int'): ('float32', False),
    ('copysign', 'py_int,py_float'): ('float32', True),
    ('copysign', 'f16,i32'): ('float16', False),
    ('fmax', 'f32,f32'): ('float32', False),
    ('fmax', 'f32,i32'): ('float32', False),
    ('fmax', 'i32,i32'): ('int32', False),
    ('fmax', 'i8,u8'): ('int16', False),
    ('fmax', 'b,b'): ('bool', False),
    ('fmax', 'i8,py_int'): ('int8', False),
    ('fmax', 'i32,py_float'): ('float32', True),
    ('fmax', 'f16,py_float'): ('float16', False),
    ('fmax', 'b,py_int'): ('int32', True),
    ('fmax', 'u8,py_int'): ('uint8', False),
    ('fmax', 'py_int,py_float'): ('float32', True),
    ('fmax', 'f16,i32'): ('float16', False),
    ('fmin', 'f32,f32'): ('float32', False),
    ('fmin', 'f32,i32'): ('float32', False),
    ('fmin', 'i32,i32'): ('int32', False),
    ('fmin', 'i8,u8'): ('int16', False),
    ('fmin', 'b,b'): ('bool', False),
    ('fmin', 'i8,py_int'): ('int8', False),
    ('fmin', 'i32,py_float'): ('float32', True),
    ('fmin', 'f16,py_float'): ('float16', False),
    ('fmin', 'b,py_int'): ('int32', True),
    ('fmin', 'u8,py_int'): ('uint8', False),
    ('fmin', 'py_int,py_float'): ('float32', True),
    ('fmin', 'f16,i32'): ('float16', False),
    ('fmod', 'f32,f32'): ('float32', False),
    ('fmod', 'f32,i32'): ('float32', False),
    ('fmod', 'i32,i32'): ('int32', False),
    ('fmod', 'i8,u8'): ('int16', False),
    ('fmod', 'b,b'): ('int32', False),
    ('fmod', 'i8,py_int'): ('int8', False),
    ('fmod', 'i32,py_float'): ('float32', True),
    ('fmod', 'f16,py_float'): ('float16', False),
    ('fmod', 'b,py_int'): ('int32', True),
    ('fmod', 'u8,py_int'): ('uint8', False),
    ('fmod', 'py_int,py_float'): ('float32', True),
    ('fmod', 'f16,i32'): ('float16', False),
    ('equal', 'f32,f32'): ('bool', False),
    ('equal', 'f32,i32'): ('bool', False),
    ('equal', 'i32,i32'): ('bool', False),
    ('equal', 'i8,u8'): ('bool', False),
    ('equal', 'b,b'): ('bool', False),
    ('equal', 'i8,py_int'): ('bool', False),
    ('equal', 'i32,py_float'): ('bool', True),
    ('equal', 'f16,py_float'): ('bool', False),
    ('equal', 'b,py_int'): ('bool', True),
    ('equal', 'u8,py_int'): ('bool', False),
    ('equal', 'py_int,py_float'): ('bool', True),
    ('equal', 'f16,i32'): ('bool', False),
    ('not_equal', 'f32,f32'): ('bool', False),
    ('not_equal', 'f32,i32'): ('bool', False),
    ('not_equal', 'i32,i32'): ('bool', False),
    ('not_equal', 'i8,u8'): ('bool', False),
    ('not_equal', 'b,b'): ('bool', False),
    ('not_equal', 'i8,py_int'): ('bool', False),
    ('not_equal', 'i32,py_float'): ('bool', True),
    ('not_equal', 'f16,py_float'): ('bool', False),
    ('not_equal', 'b,py_int'): ('bool', True),
    ('not_equal', 'u8,py_int'): ('bool', False),
    ('not_equal', 'py_int,py_float'): ('bool', True),
    ('not_equal', 'f16,i32'): ('bool', False),
    ('less', 'f32,f32'): ('bool', False),
    ('less', 'f32,i32'): ('bool', False),
    ('less', 'i32,i32'): ('bool', False),
    ('less', 'i8,u8'): ('bool', False),
    ('less', 'b,b'): ('bool', False),
    ('less', 'i8,py_int'): ('bool', False),
    ('less', 'i32,py_float'): ('bool', True),
    ('less', 'f16,py_float'): ('bool', False),
    ('less', 'b,py_int'): ('bool', True),
    ('less', 'u8,py_int'): ('bool', False),
    ('less', 'py_int,py_float'): ('bool', True),
    ('less', 'f16,i32'): ('bool', False),
    ('greater', 'f32,f32'): ('bool', False),
    ('greater', 'f32,i32'): ('bool', False),
    ('greater', 'i32,i32'): ('bool', False),
    ('greater', 'i8,u8'): ('bool', False),
    ('greater', 'b,b'): ('bool', False),
    ('greater', 'i8,py_int'): ('bool', False),
    ('greater', 'i32,py_float'): ('bool', True),
    ('greater', 'f16,py_float'): ('bool', False),
    ('greater', 'b,py_int'): ('bool', True),
    ('greater', 'u8,py_int'): ('bool', False),
    ('greater', 'py_int,py_float'): ('bool', True),
    ('greater', 'f16,i32'): ('bool', False),
    ('logical_and', 'f32,f32'): ('bool', False),
    ('logical_and', 'f32,i32'): ('bool', False),
    ('logical_and', 'i32,i32'): ('bool', False),
    ('logical_and', 'i8,u8'): ('bool', False),
    ('logical_and', 'b,b'): ('bool', False),
    ('logical_and', 'i8,py_int'): ('bool', False),
    ('logical_and', 'i32,py_float'): ('bool', False),
    ('logical_and', 'f16,py_float'): ('bool', False),
    ('logical_and', 'b,py_int'): ('bool', False),
    ('logical_and', 'u8,py_int'): ('bool', False),
    ('logical_and', 'py_int,py_float'): ('bool', True),
    ('logical_and', 'f16,i32'): ('bool', False),
    ('logical_xor', 'f32,f32'): ('bool', False),
    ('logical_xor', 'f32,i32'): ('bool', False),
    ('logical_xor', 'i32,i32'): ('bool', False),
    ('logical_xor', 'i8,u8'): ('bool', False),
    ('logical_xor', 'b,b'): ('bool', False),
    ('logical_xor', 'i8,py_int'): ('bool', False),
    ('logical_xor', 'i32,py_float'): ('bool', False),
    ('logical_xor', 'f16,py_float'): ('bool', False),
    ('logical_xor', 'b,py_int'): ('bool', False),
    ('logical_xor', 'u8,py_int'): ('bool', False),
    ('logical_xor', 'py_int,py_float'): ('bool', True),
    ('logical_xor', 'f16,i32'): ('bool', False),
    ('heaviside', 'f32,f32'): ('float32', False),
    ('heaviside', 'f32,i32'): ('float32', False),
    ('heaviside', 'i32,i32'): ('float32', False),
    ('heaviside', 'i8,u8'): ('float32', False),
    ('heaviside', 'b,b'): ('float32', False),
    ('heaviside', 'i8,py_int'): ('float32', False),
    ('heaviside', 'i32,py_float'): ('float32', False),
    ('heaviside', 'f16,py_float'): ('float16', False),
    ('heaviside', 'b,py_int'): ('float32', False),
    ('heaviside', 'u8,py_int'): ('float32', False),
    ('heaviside', 'py_int,py_float'): ('float32', True),
    ('heaviside', 'f16,i32'): ('float16', False),
}


@pytest.mark.parametrize("key", sorted(JAX_DTYPES), ids=lambda k: "-".join(k))
def test_result_dtype_matches_jax(key):
    name, args = key
    fn = getattr(jnp, name)
    expected = JAX_DTYPES[key]
    vals = [INPUTS[a] for a in args.split(",")]
    if expected[0] == "error":
        with pytest.raises({"TypeError": TypeError, "ValueError": ValueError}[expected[1]]):
            fn(*vals)
        return
    out = fn(*vals)
    assert (str(out.dtype), bool(out.weak_type)) == expected


UNARY_REF = {
    "negative": (np.negative, (-2, 2)), "absolute": (np.abs, (-2, 2)), "sign": (np.sign, (-2, 2)),
    "floor": (np.floor, (-3, 3)), "ceil": (np.ceil, (-3, 3)), "trunc": (np.trunc, (-3, 3)),
    "rint": (np.rint, (-3, 3)), "exp": (np.exp, (-2, 2)), "exp2": (np.exp2, (-2, 2)),
    "expm1": (np.expm1, (-2, 2)), "log": (np.log, (0.1, 3)), "log1p": (np.log1p, (-0.5, 3)),
    "log2": (np.log2, (0.1, 3)), "log10": (np.log10, (0.1, 3)), "sqrt": (np.sqrt, (0.1, 3)),
    "cbrt": (np.cbrt, (-3, 3)), "sin": (np.sin, (-3, 3)), "cos": (np.cos, (-3, 3)),
    "tan": (np.tan, (-1, 1)), "arcsin": (np.arcsin, (-0.9, 0.9)),
    "arccos": (np.arccos, (-0.9, 0.9)), "arctan": (np.arctan, (-3, 3)),
    "sinh": (np.sinh, (-2, 2)), "cosh": (np.cosh, (-2, 2)), "tanh": (np.tanh, (-2, 2)),
    "arcsinh": (np.arcsinh, (-2, 2)), "arccosh": (np.arccosh, (1.1, 3)),
    "arctanh": (np.arctanh, (-0.9, 0.9)), "deg2rad": (np.deg2rad, (-90, 90)),
    "rad2deg": (np.rad2deg, (-2, 2)), "square": (np.square, (-2, 2)),
    "reciprocal": (np.reciprocal, (0.5, 2)), "sinc": (np.sinc, (-2, 2)),
    "signbit": (np.signbit, (-2, 2)), "isfinite": (np.isfinite, (-2, 2)),
}

BINARY_REF = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "fmod": np.fmod,
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum, "arctan2": np.arctan2,
    "hypot": np.hypot, "logaddexp": np.logaddexp, "logaddexp2": np.logaddexp2,
    "copysign": np.copysign, "fmax": np.fmax, "fmin": np.fmin, "nextafter": np.nextafter,
    "heaviside": np.heaviside, "equal": np.equal, "less_equal": np.less_equal,
}


@pytest.mark.parametrize("name", sorted(UNARY_REF))
def test_unary_values_against_numpy(name):
    ref, (lo, hi) = UNARY_REF[name]
    x = np.random.default_rng(0).uniform(lo, hi, (4, 5)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(getattr(jnp, name)(x)), ref(x), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(BINARY_REF))
@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((4, 5), (5,)), ((3, 1, 5), (4, 1)),
                                    ((), (2,))])
def test_binary_values_against_numpy(name, shapes):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 4, shapes[0]).astype(np.float32) * rng.choice([-1, 1], shapes[0])
    y = rng.uniform(0.5, 4, shapes[1]).astype(np.float32) * rng.choice([-1, 1], shapes[1])
    if name == "power":
        x = np.abs(x)
    np.testing.assert_allclose(np.asarray(getattr(jnp, name)(x, y)),
                               BINARY_REF[name](x, y), rtol=2e-6, atol=1e-6)


def test_integer_arithmetic_matches_numpy():
    x = np.array([-7, -3, 0, 3, 7], np.int32)
    y = np.array([2, -2, 3, 3, -4], np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.floor_divide(x, y)), np.floor_divide(x, y))
    np.testing.assert_array_equal(np.asarray(jnp.remainder(x, y)), np.remainder(x, y))
    np.testing.assert_array_equal(np.asarray(jnp.power(x, np.abs(y))), np.power(x, np.abs(y)))
    np.testing.assert_array_equal(np.asarray(x // 2), x // 2)
    np.testing.assert_array_equal(np.asarray(jnp.right_shift(x, 1)), np.right_shift(x, 1))
    np.testing.assert_array_equal(np.asarray(jnp.left_shift(x, 2)), np.left_shift(x, 2))
    q, r = jnp.divmod(x, y)
    np.testing.assert_array_equal(np.asarray(q), np.floor_divide(x, y))
    np.testing.assert_array_equal(np.asarray(r), np.remainder(x, y))


def test_special_values():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.isnan(x)), np.isnan(x))
    np.testing.assert_array_equal(np.asarray(jnp.isinf(x)), np.isinf(x))
    np.testing.assert_array_equal(np.asarray(jnp.isposinf(x)), np.isposinf(x))
    np.testing.assert_array_equal(np.asarray(jnp.signbit(x[[0, 1, 3, 4]])),
                                  np.signbit(x[[0, 1, 3, 4]]))
    np.testing.assert_array_equal(np.asarray(jnp.hypot(x[:2], 1.0)), [np.inf, np.inf])
    np.testing.assert_array_equal(np.asarray(jnp.logaddexp(-np.inf, -np.inf)), -np.inf)
    np.testing.assert_array_equal(np.asarray(jnp.round(np.array([0.5, 1.5, 2.5, -0.5]))),
                                  [0.0, 2.0, 2.0, -0.0])
    np.testing.assert_allclose(np.asarray(jnp.round(np.float32(1.23456), 2)), 1.23, rtol=1e-6)


def test_where_and_clip():
    x = np.arange(-3.0, 3.0, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.where(x > 0, x, 0)), np.where(x > 0, x, 0))
    np.testing.assert_array_equal(np.asarray(jnp.clip(x, -1, 1)), np.clip(x, -1, 1))
    np.testing.assert_array_equal(np.asarray(jnp.clip(x, max=0.5)), np.clip(x, None, 0.5))
    assert jnp.where(True, 1, 2.0).dtype == np.float32


def test_lists_are_rejected_like_jax():
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        jnp.sin([1.0, 2.0])


DIFFERENTIABLE = [
    ("exp", (-1, 1)), ("log", (0.5, 2)), ("log2", (0.5, 2)), ("log10", (0.5, 2)),
    ("sqrt", (0.5, 2)), ("cbrt", (0.5, 2)), ("tanh", (-1, 1)), ("arcsinh", (-1, 1)),
    ("arccosh", (1.2, 2)), ("reciprocal", (0.5, 2)), ("sinc", (0.2, 1)), ("square", (-1, 1)),
    ("deg2rad", (-1, 1)), ("expm1", (-1, 1)), ("log1p", (0, 1)),
]


@pytest.mark.parametrize("name,dom", DIFFERENTIABLE, ids=[d[0] for d in DIFFERENTIABLE])
def test_unary_derivatives(name, dom):
    with enable_x64(True):
        x = np.random.default_rng(2).uniform(*dom, (3,))
        check_grads(getattr(jnp, name), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["hypot", "logaddexp", "logaddexp2", "arctan2", "power",
                                  "true_divide", "copysign", "maximum", "fmax"])
def test_binary_derivatives(name):
    with enable_x64(True):
        rng = np.random.default_rng(3)
        x, y = rng.uniform(0.5, 2, (3,)), rng.uniform(0.6, 1.9, (2, 3))
        check_grads(getattr(jnp, name), (x, y), order=2, modes=("fwd", "rev"))


def test_eager_fast_path_agrees_with_general_path():
    rng = np.random.default_rng(4)
    x = jnp.asarray(rng.normal(size=(5,)).astype(np.float32))
    y = jnp.asarray(rng.normal(size=(5,)).astype(np.float32))
    for f in (lambda a, b: a * b + a, lambda a, b: a / b - 2.0, lambda a, b: 3 * a - b,
              lambda a, b: (a > b) == (b < a)):
        eager = f(x, y)
        closed = jax.make_jaxpr(f)(x, y)
        staged = closed(x, y)[0]
        assert eager.dtype == staged.dtype and eager.weak_type == staged.weak_type
        np.testing.assert_array_equal(np.asarray(eager), np.asarray(staged))


def test_temporary_elision_never_changes_live_arrays():
    rng = np.random.default_rng(5)
    xn = rng.normal(size=(256, 256)).astype(np.float32)
    yn = rng.normal(size=(256, 256)).astype(np.float32)
    x, y = jnp.asarray(xn), jnp.asarray(yn)
    t = x * y
    kept = [x * y]
    view = np.asarray(x * 2.0)
    reshaped = jnp.reshape(x * 3.0, (-1,))
    r = t + x                      # `t` is named: its buffer must not be reused
    s = kept[0] - y                # held by a list
    u = x * y + x                  # a true temporary: may be reused
    w = reshaped.reshape(256, 256) + x  # a view of another array
    np.testing.assert_array_equal(np.asarray(t), xn * yn)
    np.testing.assert_array_equal(np.asarray(kept[0]), xn * yn)
    np.testing.assert_array_equal(view, xn * 2.0)
    np.testing.assert_array_equal(np.asarray(reshaped), (xn * 3.0).reshape(-1))
    np.testing.assert_array_equal(np.asarray(x), xn)
    np.testing.assert_array_equal(np.asarray(y), yn)
    np.testing.assert_array_equal(np.asarray(r), xn * yn + xn)
    np.testing.assert_array_equal(np.asarray(s), xn * yn - yn)
    np.testing.assert_array_equal(np.asarray(u), xn * yn + xn)
    np.testing.assert_array_equal(np.asarray(w), xn * 3.0 + xn)


# --------------------------------------------------------------------------------------
# fabs, frexp and spacing: dtypes as JAX 0.10.2 gives them, values bit for bit as NumPy's

FLOAT_BITS_DTYPES = {
    'fabs': ['float32', 'float32', 'float32', 'float32', 'float32', 'float16', 'float32*',
             'float32*'],
    'spacing': ['float32', 'float32', 'float32', 'float32', 'float32', 'float16', 'float32',
                'float32'],
    'frexp': ['float32,int32'] * 5 + ['float16,int32', 'float32,int32', 'float32,int32'],
}


@pytest.mark.parametrize("name", sorted(FLOAT_BITS_DTYPES))
def test_float_bits_dtypes_match_jax(name):
    got = []
    for x in INPUTS.values():
        out = getattr(jnp, name)(x)
        out = out if isinstance(out, tuple) else (out,)
        got.append(",".join(str(o.dtype) + ("*" if o.weak_type else "") for o in out))
    assert got == FLOAT_BITS_DTYPES[name]


def _float_bits_sample(dtype):
    rng = np.random.default_rng(0)
    info = np.finfo(dtype)
    x = rng.standard_normal(500) * 10.0 ** rng.integers(info.minexp // 4, info.maxexp // 4, 500)
    special = [0., -0., 1., -1., 0.5, 3., -7.25, np.inf, -np.inf, np.nan, float(info.max),
               -float(info.max), float(info.tiny), float(info.smallest_subnormal),
               -3 * float(info.smallest_subnormal), 1 - float(info.epsneg)]
    return np.concatenate([x, special]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_frexp_spacing_fabs_match_numpy_exactly(dtype):
    x = _float_bits_sample(dtype)
    with enable_x64(dtype == np.float64):
        m, e = jnp.frexp(x)
        s, a = jnp.spacing(x), jnp.fabs(x)
    wm, we = np.frexp(x)  # subnormals too (JAX on CPU flushes them; didax does not)
    np.testing.assert_array_equal(np.asarray(m), wm)
    np.testing.assert_array_equal(np.asarray(e), we)
    want = np.spacing(x)
    # JAX's (and so didax's) differences: spacing(-0.0) is the negative smallest subnormal
    # (float32, float64), and float16's spacing(-inf) is inf (float16 steps towards +inf)
    if dtype == np.float16:
        want[x == -np.inf] = np.inf
    else:
        want[(x == 0) & np.signbit(x)] = -np.finfo(dtype).smallest_subnormal
    np.testing.assert_array_equal(np.asarray(s), want)
    np.testing.assert_array_equal(np.asarray(a), np.fabs(x))
    np.testing.assert_array_equal(np.asarray(jnp.frexp(np.arange(5))[1]),
                                  np.frexp(np.arange(5.))[1])


def test_frexp_spacing_fabs_derivatives_and_errors():
    with enable_x64():
        x = np.array([-3.5, -0.7, 0.3, 1.25, 6.0])
        check_grads(lambda x: jnp.frexp(x)[0], (x,), order=2, modes=("fwd", "rev"))
        check_grads(jnp.fabs, (x,), order=2, modes=("fwd", "rev"))
        _, t = jax.jvp(lambda x: jnp.frexp(x)[0], (np.array([3., 0.]),), (np.ones(2),))
        np.testing.assert_array_equal(np.asarray(t), [0.25, 1.])  # JAX's: t 2^-e
        np.testing.assert_array_equal(np.asarray(jax.jit(jnp.frexp)(x)[1]), np.frexp(x)[1])
        np.testing.assert_array_equal(np.asarray(jax.vmap(jnp.spacing)(x)), np.spacing(x))
    with pytest.raises(TypeError, match="frexp does not support complex"):
        jnp.frexp(np.ones(2, np.complex64))
    with pytest.raises(ValueError, match="spacing is not defined for complex"):
        jnp.spacing(np.ones(2, np.complex64))
    with pytest.raises(TypeError, match="'fabs' does not support complex"):
        jnp.fabs(np.ones(2, np.complex64))
