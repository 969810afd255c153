"""Windows in C, each loop with a NumPy twin of the same bits: the max-pool gradient
(`select_and_scatter_add`), the window reductions (`reduce_window_sum`, `_max`, `_min`), and
the copy of a convolution's windows into rows (im2col).

NumPy selects each window's element with one masked copy per window position over all
windows, and adds the sources in with `np.add.at` on flat indices: both far slower than the
arithmetic. The C loop visits the windows in row-major order; per window it walks the
positions in XLA's order, keeping the current choice unless `choice >= element` (`<=` for
min), and adds the window's source to the chosen element. `np.add.at` adds in that same
order, one addition per source, so the two give the same bits for any windows, overlapping
or not. The reductions fold each window's elements in visiting order, as the twin's ufunc
calls do one window position at a time. The windows of a row (the last dimension) are
worked on side by side, in vector registers. Only float32 and float64 (operand and source
of one dtype) have the C loops.

The module is built once per machine (cached on disk) as `didax_native_tier` says, as
linalg_kernels': "background" builds it in a thread while NumPy serves, "sync" before the
first call returns, "off" never; "check" runs both and compares their bits.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src.compiler.native.kernel_module import C_FLOATS, KernelModule

_BODY = r"""
#define DIDAX_MAXDIM 32
#define DIDAX_BLOCK 64
#define DIDAX_PRAGMA_SIMD _Pragma("omp simd")

/* The windows of `shape` (row-major) start at start + sum(index_d * steps_d) of buf; a row
   is a run of the last dimension (length inner, step step). Moves base to the next row. */
static inline npy_intp didax_next_row(npy_intp *idx, npy_intp base, int ndim,
                                      const npy_intp *shape, const npy_intp *steps) {
    for (int d = ndim - 2; d >= 0; d--) {
        base += steps[d];
        if (++idx[d] < shape[d]) break;
        base -= steps[d] * shape[d];
        idx[d] = 0;
    }
    return base;
}

/* out[i] += src[j] where i is window j's chosen element: the windows' elements are at the
   offsets `window` (in visiting order) from their starts. A row's windows are chosen
   DIDAX_BLOCK at a time, each window's choice as in XLA (keep unless choice >= element,
   <= for min), then their sources added in the windows' order. */
#define DIDAX_CHOOSE(T, CMP)                                                                 \
    for (npy_intp w = 1; w < nwin; w++) {                                                   \
        const npy_intp off = window[w];                                                     \
        DIDAX_PRAGMA_SIMD                                                                   \
        for (npy_intp t = 0; t < nb; t++) {                                                 \
            const T v = b[t * step + off];                                                  \
            const int take = !(key[t] CMP v);                                               \
            key[t] = take ? v : key[t];                                                     \
            at[t] = take ? off : at[t];                                                     \
        }                                                                                   \
    }
#define DIDAX_SCATTER(NAME, T)                                                               \
static void NAME(const T *restrict buf, const T *restrict src, T *restrict out, int ndim,   \
                 const npy_intp *shape, const npy_intp *steps, const npy_intp *window,      \
                 npy_intp nwin, npy_intp start, int ge) {                                   \
    npy_intp idx[DIDAX_MAXDIM] = {0}, count = 1;                                            \
    for (int d = 0; d < ndim; d++) count *= shape[d];                                       \
    const npy_intp inner = ndim ? shape[ndim - 1] : 1, step = ndim ? steps[ndim - 1] : 0;   \
    npy_intp base = start;                                                                  \
    T key[DIDAX_BLOCK];                                                                     \
    npy_intp at[DIDAX_BLOCK];                                                               \
    for (npy_intp j = 0; j < count; j += inner) {                                           \
        for (npy_intp t0 = 0; t0 < inner; t0 += DIDAX_BLOCK) {                              \
            const npy_intp nb = inner - t0 < DIDAX_BLOCK ? inner - t0 : DIDAX_BLOCK;        \
            const T *restrict b = buf + base + t0 * step;                                   \
            for (npy_intp t = 0; t < nb; t++) {                                             \
                key[t] = b[t * step + window[0]];                                           \
                at[t] = window[0];                                                          \
            }                                                                               \
            if (ge) { DIDAX_CHOOSE(T, >=) } else { DIDAX_CHOOSE(T, <=) }                    \
            for (npy_intp t = 0; t < nb; t++)                                               \
                out[base + (t0 + t) * step + at[t]] += src[j + t0 + t];                     \
        }                                                                                   \
        base = didax_next_row(idx, base, ndim, shape, steps);                               \
    }                                                                                       \
}

DIDAX_SCATTER(f32_scatter, float)
DIDAX_SCATTER(f64_scatter, double)

/* out[j] = the fold of window j's elements in visiting order: op 0 sums (a + v), 1 takes
   the maximum ((a > v) | (a != a) ? a : v), 2 the minimum (< for >), as the NumPy twin's
   ufuncs applied one window position at a time. */
#define DIDAX_FOLD(T, EXPR)                                                                 \
    for (npy_intp w = 1; w < nwin; w++) {                                                   \
        const T *restrict bw = b + window[w];                                               \
        DIDAX_PRAGMA_SIMD                                                                   \
        for (npy_intp t = 0; t < inner; t++) {                                              \
            const T a = o[t], v = bw[t * step];                                             \
            o[t] = EXPR;                                                                    \
        }                                                                                   \
    }
#define DIDAX_REDUCE(NAME, T)                                                                \
static void NAME(const T *restrict buf, T *restrict out, int ndim, const npy_intp *shape,   \
                 const npy_intp *steps, const npy_intp *window, npy_intp nwin,              \
                 npy_intp start, int op) {                                                  \
    npy_intp idx[DIDAX_MAXDIM] = {0}, count = 1;                                            \
    for (int d = 0; d < ndim; d++) count *= shape[d];                                       \
    const npy_intp inner = ndim ? shape[ndim - 1] : 1, step = ndim ? steps[ndim - 1] : 0;   \
    npy_intp base = start;                                                                  \
    for (npy_intp j = 0; j < count; j += inner) {                                           \
        const T *restrict b = buf + base;                                                   \
        T *restrict o = out + j;                                                            \
        for (npy_intp t = 0; t < inner; t++) o[t] = b[t * step + window[0]];                \
        if (op == 0) { DIDAX_FOLD(T, a + v) }                                               \
        else if (op == 1) { DIDAX_FOLD(T, (a > v) | (a != a) ? a : v) }                     \
        else { DIDAX_FOLD(T, (a < v) | (a != a) ? a : v) }                                  \
        base = didax_next_row(idx, base, ndim, shape, steps);                               \
    }                                                                                       \
}

DIDAX_REDUCE(f32_reduce, float)
DIDAX_REDUCE(f64_reduce, double)

/* Reads the (shape, steps, window) int64 arrays every window kernel takes. */
static int window_args(PyArrayObject *shape, PyArrayObject *steps, PyArrayObject *window,
                       int *ndim, const npy_intp **sh, const npy_intp **st,
                       const npy_intp **win, npy_intp *nwin) {
    *ndim = (int)PyArray_DIM(shape, 0);
    if (*ndim > DIDAX_MAXDIM) {
        PyErr_SetString(PyExc_ValueError, "window kernels: too many dimensions");
        return -1;
    }
    *sh = (const npy_intp *)PyArray_DATA(shape);
    *st = (const npy_intp *)PyArray_DATA(steps);
    *win = (const npy_intp *)PyArray_DATA(window);
    *nwin = PyArray_DIM(window, 0);
    return 0;
}

/* The callers pass C-contiguous arrays: buf and out of one size, src of out_shape's, of one
   float dtype; out_shape, steps and window int64 (npy_intp). */
static PyObject *scatter_selected(PyObject *self, PyObject *args) {
    PyArrayObject *buf, *src, *out, *shape, *steps, *window;
    Py_ssize_t start;
    int ge, ndim;
    const npy_intp *sh, *st, *win;
    npy_intp nwin;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!np", &PyArray_Type, &buf, &PyArray_Type, &src,
                          &PyArray_Type, &out, &PyArray_Type, &shape, &PyArray_Type, &steps,
                          &PyArray_Type, &window, &start, &ge))
        return NULL;
    if (window_args(shape, steps, window, &ndim, &sh, &st, &win, &nwin) < 0) return NULL;
    int f32 = PyArray_TYPE(buf) == NPY_FLOAT32;
    Py_BEGIN_ALLOW_THREADS
    if (f32) f32_scatter((const float *)PyArray_DATA(buf), (const float *)PyArray_DATA(src),
                         (float *)PyArray_DATA(out), ndim, sh, st, win, nwin, start, ge);
    else f64_scatter((const double *)PyArray_DATA(buf), (const double *)PyArray_DATA(src),
                     (double *)PyArray_DATA(out), ndim, sh, st, win, nwin, start, ge);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* buf C-contiguous, out C-contiguous of out_shape, one float dtype. */
static PyObject *reduce_windows(PyObject *self, PyObject *args) {
    PyArrayObject *buf, *out, *shape, *steps, *window;
    Py_ssize_t start;
    int op, ndim;
    const npy_intp *sh, *st, *win;
    npy_intp nwin;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!ni", &PyArray_Type, &buf, &PyArray_Type, &out,
                          &PyArray_Type, &shape, &PyArray_Type, &steps, &PyArray_Type,
                          &window, &start, &op))
        return NULL;
    if (window_args(shape, steps, window, &ndim, &sh, &st, &win, &nwin) < 0) return NULL;
    int f32 = PyArray_TYPE(buf) == NPY_FLOAT32;
    Py_BEGIN_ALLOW_THREADS
    if (f32) f32_reduce((const float *)PyArray_DATA(buf), (float *)PyArray_DATA(out), ndim,
                        sh, st, win, nwin, start, op);
    else f64_reduce((const double *)PyArray_DATA(buf), (double *)PyArray_DATA(out), ndim, sh,
                    st, win, nwin, start, op);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* The rows of copy_strided. A run of a constant size (RUN > 0) is a copy the compiler
   writes in place, not a call (a call per run of 12 bytes took most of the time of a
   one-channel image's im2col). */
static inline __attribute__((always_inline)) void didax_copy_rows(
        const char *s, char *d, int ndim, const npy_intp *sh, const npy_intp *st, npy_intp run,
        npy_intp rows, const npy_intp RUN) {
    npy_intp idx[DIDAX_MAXDIM] = {0};
    for (npy_intp r = 0; r < rows; r++, d += run) {
        memcpy(d, s, RUN ? RUN : run);
        for (int k = ndim - 1; k >= 0; k--) {
            s += st[k];
            if (++idx[k] < sh[k]) break;
            s -= st[k] * sh[k];
            idx[k] = 0;
        }
    }
}

#define DIDAX_RUN(n) case n: didax_copy_rows(s, d, ndim, sh, st, run, rows, n); break;

/* Copies the view of `src` at byte `offset` from its data, of `shape` and byte `strides`,
   into the C-contiguous `dst` (im2col: every window of an image, as rows): trailing
   dimensions that read on in memory are merged into one run. */
static PyObject *copy_strided(PyObject *self, PyObject *args) {
    PyArrayObject *src, *dst, *shape, *strides;
    Py_ssize_t offset;
    if (!PyArg_ParseTuple(args, "O!nO!O!O!", &PyArray_Type, &src, &offset, &PyArray_Type,
                          &dst, &PyArray_Type, &shape, &PyArray_Type, &strides))
        return NULL;
    int ndim = (int)PyArray_DIM(shape, 0);
    if (ndim > DIDAX_MAXDIM) {
        PyErr_SetString(PyExc_ValueError, "copy_strided: too many dimensions");
        return NULL;
    }
    const npy_intp *sh = (const npy_intp *)PyArray_DATA(shape);
    const npy_intp *st = (const npy_intp *)PyArray_DATA(strides);
    npy_intp run = PyArray_ITEMSIZE(dst), count = 1;
    for (int d = 0; d < ndim; d++) count *= sh[d];
    if (count == 0) Py_RETURN_NONE;
    while (ndim > 0 && (sh[ndim - 1] == 1 || st[ndim - 1] == run)) {
        run *= sh[ndim - 1];
        ndim--;
    }
    const char *s = (const char *)PyArray_DATA(src) + offset;
    char *d = (char *)PyArray_DATA(dst);
    const npy_intp rows = count * PyArray_ITEMSIZE(dst) / run;
    Py_BEGIN_ALLOW_THREADS
    switch (run) {  /* (one channel of a 3, 5 or 7 wide window, float32 or float64...) */
    DIDAX_RUN(4) DIDAX_RUN(8) DIDAX_RUN(12) DIDAX_RUN(16) DIDAX_RUN(20) DIDAX_RUN(24)
    DIDAX_RUN(28) DIDAX_RUN(32) DIDAX_RUN(56) DIDAX_RUN(64)
    default: didax_copy_rows(s, d, ndim, sh, st, run, rows, 0);
    }
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}
"""

_KERNELS = KernelModule(_BODY, ("scatter_selected", "reduce_windows", "copy_strided"))


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


_FOLDS = {"sum": 0, "max": 1, "min": 2}


def reduce_windows(buf, out_shape, steps, window, start, fold, numpy_twin):
    """Every window of `buf` (C-contiguous) folded by `fold` ("sum", "max" or "min") in
    visiting order, as an array of `out_shape`, or None where there is no C loop for this
    dtype (yet); `numpy_twin()` computes the same."""
    if buf.dtype not in C_FLOATS or native_module() is None:
        return None
    out = np.empty(out_shape, buf.dtype)

    def c_call(module):
        module.reduce_windows(buf, out, np.asarray(out_shape, np.intp),
                              np.asarray(steps, np.intp), np.asarray(window, np.intp),
                              int(start), _FOLDS[fold])

    return _KERNELS.run(f"reduce_window_{fold}", c_call, lambda: [numpy_twin()], [out])[0]


def contiguous_copy(view, base):
    """`view` (a strided view of the array `base`) copied into a new C-contiguous array:
    in C where the kernels are built (NumPy copies runs shorter than a few elements, such as
    a one-channel image's windows, one inner loop call at a time), else by NumPy."""
    module = native_module()
    if module is None or not view.size:
        return np.ascontiguousarray(view)
    out = np.empty(view.shape, view.dtype)
    module.copy_strided(base, view.ctypes.data - base.ctypes.data, out,
                        np.asarray(view.shape, np.intp), np.asarray(view.strides, np.intp))
    return out


def contiguous_blocks(view, base, axis: int, step: int):
    """(start, stop, copy) for the blocks view[start:stop] along `axis`, `step` at a time,
    each copied as contiguous_copy would, into one buffer reused from block to block (a
    block's copy is read before the next is asked for)."""
    n = view.shape[axis]
    module = native_module() if view.size else None
    shape = np.asarray(view.shape, np.intp)
    strides = np.asarray(view.strides, np.intp)
    first = view.ctypes.data - base.ctypes.data
    block_shape = list(view.shape)
    block_shape[axis] = min(step, n)
    buffer = np.empty(math.prod(block_shape), view.dtype)
    for start in range(0, n, step):
        stop = min(n, start + step)
        block_shape[axis] = stop - start
        out = buffer[:math.prod(block_shape)].reshape(block_shape)
        if module is None:
            out[...] = view[(slice(None),) * axis + (slice(start, stop),)]
        else:
            shape[axis] = stop - start
            module.copy_strided(base, first + start * view.strides[axis], out, shape, strides)
        yield start, stop, out
