"""exp and tanh of float32 arrays by didax's own algorithms (numerics.float32_math): a C loop
over the array once the kernel module is built, its NumPy twin before (or without a
compiler), the same bits either way and the same as the native tier's inlined ones. Other
dtypes take NumPy's functions."""
from __future__ import annotations

import numpy as np

from didax._src.compiler.native.kernel_module import KernelModule
from didax._src.config import config
from didax._src.numerics import float32_math

_BODY = r"""
#include <numpy/arrayscalars.h>
#define DIDAX_UNARY_F32(NAME, FN)                                                     \
static PyObject *NAME(PyObject *self, PyObject *args) {                             \
    PyObject *xo, *out;                                                             \
    if (!PyArg_ParseTuple(args, "OO", &xo, &out)) return NULL;                      \
    if (out == Py_None && PyArray_IsScalar(xo, Float)) {                          \
        PyObject *r = PyArrayScalar_New(Float);                                   \
        if (r != NULL) PyArrayScalar_VAL(r, Float) = FN(PyArrayScalar_VAL(xo, Float)); \
        return r;                                                                   \
    }                                                                               \
    if (!PyArray_Check(xo)) Py_RETURN_NOTIMPLEMENTED;  /* (the caller's general path) */ \
    PyArrayObject *x = (PyArrayObject *)xo;                                         \
    if (out != Py_None)                                                             \
        Py_INCREF(out);                                                             \
    else if (PyArray_TYPE(x) != NPY_FLOAT32 || !PyArray_IS_C_CONTIGUOUS(x))         \
        Py_RETURN_NOTIMPLEMENTED;                                                   \
    else if (PyArray_NDIM(x) == 0) {  /* (a 0-d result is a scalar, as a ufunc's) */ \
        PyObject *r = PyArrayScalar_New(Float);                                   \
        if (r != NULL) PyArrayScalar_VAL(r, Float) = FN(*(const float *)PyArray_DATA(x)); \
        return r;                                                                   \
    } else                                                                          \
        out = PyArray_SimpleNew(PyArray_NDIM(x), PyArray_DIMS(x), NPY_FLOAT32);      \
    if (out == NULL) return NULL;                                                   \
    const npy_intp n = PyArray_SIZE(x);                                             \
    const float *a = (const float *)PyArray_DATA(x);                                \
    float *o = (float *)PyArray_DATA((PyArrayObject *)out);                         \
    /* (the lock is let go for long arrays only: it costs more than a short one) */   \
    PyThreadState *released = n >= 4096 ? PyEval_SaveThread() : NULL;              \
    _Pragma("omp simd")                                                             \
    for (npy_intp i = 0; i < n; i++) o[i] = FN(a[i]);                               \
    if (released != NULL) PyEval_RestoreThread(released);                           \
    return out;                                                                     \
}
/* `out` None: FN of `x` (a new array, or a float32 scalar for a float32 scalar or 0-d
   array), or NotImplemented unless x is a float32 scalar or C-contiguous array. Else `out`
   a C-contiguous float32 array of x's size, x itself or apart from it, and x a C-contiguous
   float32 array: FN of x into out, which is returned. */
DIDAX_UNARY_F32(exp_f32, didax_exp_f32)
DIDAX_UNARY_F32(tanh_f32, didax_tanh_f32)
"""

_KERNELS = KernelModule(_BODY, ("exp_f32", "tanh_f32"))
_F32 = np.dtype(np.float32)


def native_module(wait: bool = False):
    """The C kernels' module, or None while it is not (yet) there (see KernelModule)."""
    return _KERNELS.get(wait)


def _unary(name, twin, numpy_fn):
    kernel = None  # the module's function, once it is there

    def fn(x, out=None):
        nonlocal kernel
        if out is None:
            if _fast and kernel is not None:
                result = kernel(x, None)
                if result is not NotImplemented:
                    return result
            dtype = getattr(x, "dtype", None)
            if dtype is not None and dtype != _F32:
                return numpy_fn(x)
        a = np.asarray(x)
        if a.dtype != _F32:
            return numpy_fn(x) if out is None else numpy_fn(x, out=out)
        scalar = out is None and a.ndim == 0  # (as a ufunc returns a 0-d value)
        if out is None or out.shape != a.shape or out.dtype != _F32 \
                or not out.flags.c_contiguous or (out is not a and np.may_share_memory(out, a)):
            out = np.empty(a.shape, _F32)
        src = a if a.flags.c_contiguous else a.copy(order="C")  # (`out`, or apart from it)

        def c_call(module):
            nonlocal kernel
            kernel = getattr(module, name)
            kernel(src, out)
        result = _KERNELS.run(name, c_call, lambda: [twin(src)], [out])[0]
        return result[()] if scalar else result
    fn.__name__ = fn.__qualname__ = name.removesuffix("_f32")
    fn.__doc__ = (f"np.{fn.__name__} of `x`, by didax's own algorithm if it is float32 "
                  "(into `out` where it can).")
    return fn


_FAST_MODES = ("background", "sync")  # (not "off", nor "check": they take KernelModule.run)
_fast = config.read("didax_native_tier") in _FAST_MODES


@config.on_change
def _tier_changed(name, value):
    global _fast
    if name == "didax_native_tier":
        _fast = value in _FAST_MODES


exp = _unary("exp_f32", float32_math.exp, np.exp)
tanh = _unary("tanh_f32", float32_math.tanh, np.tanh)
