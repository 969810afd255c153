"""The max-pool gradient (`select_and_scatter_add`) as one C loop, with the NumPy path as its
twin.

NumPy selects each window's element with one masked copy per window position over all
windows, and adds the sources in with `np.add.at` on flat indices: both far slower than the
arithmetic. The C loop visits the windows in row-major order; per window it walks the
positions in XLA's order, keeping the current choice unless `choice >= element` (`<=` for
min), and adds the window's source to the chosen element. `np.add.at` adds in that same
order, one addition per source, so the two give the same bits for any windows, overlapping
or not. Only float32 and float64 (operand and source of one dtype) have the C loop.

The module is built once per machine (cached on disk) as `didax_native_tier` says, as
linalg_kernels': "background" builds it in a thread while NumPy serves, "sync" before the
first call returns, "off" never; "check" runs both and compares their bits.
"""
from __future__ import annotations

import numpy as np

from didax._src.compiler.native.kernel_module import C_FLOATS, KernelModule

_BODY = r"""
#define DIDAX_MAXDIM 32
/* out[i] += src[j] where i is window j's chosen element: windows start at
   start + sum(index_d * steps_d) of buf (index over out_shape), their elements at the
   offsets `window` (in visiting order). */
#define DIDAX_SCATTER(NAME, T)                                                               \
static void NAME(const T *restrict buf, const T *restrict src, T *restrict out, int ndim,   \
                 const npy_intp *shape, const npy_intp *steps, const npy_intp *window,      \
                 npy_intp nwin, npy_intp start, int ge) {                                   \
    npy_intp idx[DIDAX_MAXDIM] = {0}, count = 1;                                            \
    for (int d = 0; d < ndim; d++) count *= shape[d];                                       \
    const npy_intp inner = ndim ? shape[ndim - 1] : 1, step = ndim ? steps[ndim - 1] : 0;   \
    npy_intp base = start;                                                                  \
    for (npy_intp j = 0; j < count; j += inner) {                                           \
        for (npy_intp t = 0; t < inner; t++) {                                              \
            const T *restrict b = buf + base + t * step;                                    \
            npy_intp at = window[0];                                                        \
            T key = b[at];                                                                  \
            for (npy_intp w = 1; w < nwin; w++) {                                           \
                const T v = b[window[w]];                                                   \
                const int keep = ge ? key >= v : key <= v;                                  \
                if (!keep) { key = v; at = window[w]; }                                     \
            }                                                                               \
            out[base + t * step + at] += src[j + t];                                        \
        }                                                                                   \
        for (int d = ndim - 2; d >= 0; d--) {                                               \
            base += steps[d];                                                               \
            if (++idx[d] < shape[d]) break;                                                 \
            base -= steps[d] * shape[d];                                                    \
            idx[d] = 0;                                                                     \
        }                                                                                   \
    }                                                                                       \
}

DIDAX_SCATTER(f32_scatter, float)
DIDAX_SCATTER(f64_scatter, double)

/* The callers pass C-contiguous arrays: buf and out of one size, src of out_shape's, of one
   float dtype; out_shape, steps and window int64 (npy_intp). */
static PyObject *scatter_selected(PyObject *self, PyObject *args) {
    PyArrayObject *buf, *src, *out, *shape, *steps, *window;
    Py_ssize_t start;
    int ge;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!np", &PyArray_Type, &buf, &PyArray_Type, &src,
                          &PyArray_Type, &out, &PyArray_Type, &shape, &PyArray_Type, &steps,
                          &PyArray_Type, &window, &start, &ge))
        return NULL;
    int ndim = (int)PyArray_DIM(shape, 0);
    if (ndim > DIDAX_MAXDIM) {
        PyErr_SetString(PyExc_ValueError, "scatter_selected: too many dimensions");
        return NULL;
    }
    const npy_intp *sh = (const npy_intp *)PyArray_DATA(shape);
    const npy_intp *st = (const npy_intp *)PyArray_DATA(steps);
    const npy_intp *win = (const npy_intp *)PyArray_DATA(window);
    npy_intp nwin = PyArray_DIM(window, 0);
    int f32 = PyArray_TYPE(buf) == NPY_FLOAT32;
    Py_BEGIN_ALLOW_THREADS
    if (f32) f32_scatter((const float *)PyArray_DATA(buf), (const float *)PyArray_DATA(src),
                         (float *)PyArray_DATA(out), ndim, sh, st, win, nwin, start, ge);
    else f64_scatter((const double *)PyArray_DATA(buf), (const double *)PyArray_DATA(src),
                     (double *)PyArray_DATA(out), ndim, sh, st, win, nwin, start, ge);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}
"""

_KERNELS = KernelModule(_BODY, ("scatter_selected",))


def native_module(wait: bool = False):
    """The C kernels' module, or None while it is not (yet) there (see KernelModule)."""
    return _KERNELS.get(wait)


def scatter_selected(buf, source, steps, window, start, ge, numpy_twin):
    """The sums of `source` at each window's chosen element of `buf` (C-contiguous), as a
    flat array of buf's size, or None where there is no C loop for these dtypes (yet);
    `numpy_twin()` computes the same, and is compared with in the "check" mode."""
    if buf.dtype not in C_FLOATS or source.dtype != buf.dtype:
        return None
    if native_module() is None:
        return None
    out = np.zeros(buf.size, buf.dtype)

    def c_call(module):
        module.scatter_selected(buf, np.ascontiguousarray(source), out,
                                np.asarray(source.shape, np.intp), np.asarray(steps, np.intp),
                                np.asarray(window, np.intp), int(start), bool(ge))

    return _KERNELS.run("select_and_scatter_add", c_call, lambda: [numpy_twin()], [out])[0]
