"""Windows in C, each loop with a NumPy twin of the same bits: the max-pool gradient
(`select_and_scatter_add`), the window reductions (`reduce_window_sum`, `_max`, `_min`), the
copy of a convolution's windows into rows (im2col), and a convolution's products a block of
patches at a time (`patch_products`).

NumPy selects each window's element with one masked copy per window position over all
windows, and adds the sources in with `np.add.at` on flat indices: both far slower than the
arithmetic. The C loop visits the windows in row-major order; per window it walks the
positions in XLA's order, keeping the current choice unless `choice >= element` (`<=` for
min), and adds the window's source to the chosen element. `np.add.at` adds in that same
order, one addition per source, so the two give the same bits for any windows, overlapping
or not. The reductions fold each window's elements in visiting order, as the twin's ufunc
calls do one window position at a time. The windows of a row (the last dimension) are
worked on side by side, in vector registers. Only float32 and float64 (operand and source
of one dtype) have the C loops. Large ones share their rows among the native tier's threads
(threads.py): each window's result is computed alone, so the bits do not depend on the
count; the max-pool gradient does so only where no two windows overlap (an element two
windows choose gets their sources in one order).

The module is built once per machine (cached on disk) as `didax_native_tier` says, as
linalg_kernels': "background" builds it in a thread while NumPy serves, "sync" before the
first call returns, "off" never; "check" runs both and compares their bits.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src.compiler.native import blas_threads
from didax._src.compiler.native import threads as native_threads
from didax._src.compiler.native.kernel_module import C_FLOATS, KernelModule

_BODY = r"""
#define DIDAX_MAXDIM 32
#define DIDAX_BLOCK 64
#define DIDAX_PARTS_RUN 2048  /* elements of the parts' sum a thread takes at a time */
#define DIDAX_PRAGMA_SIMD _Pragma("omp simd")

/* The windows of `shape` (row-major) start at start + sum(index_d * steps_d) of buf; a row
   is a run of the last dimension (length inner, step step). The start of row r. */
static inline npy_intp didax_row_start(npy_intp r, npy_intp start, int ndim,
                                       const npy_intp *shape, const npy_intp *steps) {
    npy_intp base = start;
    for (int d = ndim - 2; d >= 0; d--) {
        base += (r % shape[d]) * steps[d];
        r /= shape[d];
    }
    return base;
}

/* Rows are shared among `threads` threads when there is this much work (window elements
   visited): each row's results are computed alone, in one order, whichever thread runs it. */
#define DIDAX_PARALLEL_FROM (1 << 17)
/* (before a loop over rows, where `threads` and `work` are locals) */
#define DIDAX_ROWS_PARALLEL                                                                 \
    const int nt = threads > 1 && work >= DIDAX_PARALLEL_FROM ? threads : 1;                \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")

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
                 npy_intp nwin, npy_intp start, int ge, int threads) {                      \
    npy_intp count = 1;                                                                     \
    for (int d = 0; d < ndim; d++) count *= shape[d];                                       \
    const npy_intp inner = ndim ? shape[ndim - 1] : 1, step = ndim ? steps[ndim - 1] : 0;   \
    const npy_intp rows = inner ? count / inner : 0, work = count * nwin;                   \
    DIDAX_ROWS_PARALLEL                                                                     \
    for (npy_intp r = 0; r < rows; r++) {                                                   \
        const npy_intp base = didax_row_start(r, start, ndim, shape, steps), j = r * inner; \
        T key[DIDAX_BLOCK];                                                                 \
        npy_intp at[DIDAX_BLOCK];                                                           \
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
                 npy_intp start, int op, int threads) {                                     \
    npy_intp count = 1;                                                                     \
    for (int d = 0; d < ndim; d++) count *= shape[d];                                       \
    const npy_intp inner = ndim ? shape[ndim - 1] : 1, step = ndim ? steps[ndim - 1] : 0;   \
    const npy_intp rows = inner ? count / inner : 0, work = count * nwin;                   \
    DIDAX_ROWS_PARALLEL                                                                     \
    for (npy_intp r = 0; r < rows; r++) {                                                   \
        const T *restrict b = buf + didax_row_start(r, start, ndim, shape, steps);          \
        T *restrict o = out + r * inner;                                                    \
        for (npy_intp t = 0; t < inner; t++) o[t] = b[t * step + window[0]];                \
        if (op == 0) { DIDAX_FOLD(T, a + v) }                                               \
        else if (op == 1) { DIDAX_FOLD(T, (a > v) | (a != a) ? a : v) }                     \
        else { DIDAX_FOLD(T, (a < v) | (a != a) ? a : v) }                                  \
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
    int threads;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!npi", &PyArray_Type, &buf, &PyArray_Type, &src,
                          &PyArray_Type, &out, &PyArray_Type, &shape, &PyArray_Type, &steps,
                          &PyArray_Type, &window, &start, &ge, &threads))
        return NULL;
    if (window_args(shape, steps, window, &ndim, &sh, &st, &win, &nwin) < 0) return NULL;
    int f32 = PyArray_TYPE(buf) == NPY_FLOAT32;
    Py_BEGIN_ALLOW_THREADS
    if (f32) f32_scatter((const float *)PyArray_DATA(buf), (const float *)PyArray_DATA(src),
                         (float *)PyArray_DATA(out), ndim, sh, st, win, nwin, start, ge,
                         threads);
    else f64_scatter((const double *)PyArray_DATA(buf), (const double *)PyArray_DATA(src),
                     (double *)PyArray_DATA(out), ndim, sh, st, win, nwin, start, ge, threads);
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
    int threads;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!nii", &PyArray_Type, &buf, &PyArray_Type, &out,
                          &PyArray_Type, &shape, &PyArray_Type, &steps, &PyArray_Type,
                          &window, &start, &op, &threads))
        return NULL;
    if (window_args(shape, steps, window, &ndim, &sh, &st, &win, &nwin) < 0) return NULL;
    int f32 = PyArray_TYPE(buf) == NPY_FLOAT32;
    Py_BEGIN_ALLOW_THREADS
    if (f32) f32_reduce((const float *)PyArray_DATA(buf), (float *)PyArray_DATA(out), ndim,
                        sh, st, win, nwin, start, op, threads);
    else f64_reduce((const double *)PyArray_DATA(buf), (double *)PyArray_DATA(out), ndim, sh,
                    st, win, nwin, start, op, threads);
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

/* Copies the view at s, of `shape` and byte `strides` (ndim of them, trailing ones that
   read on in memory merged into one run), into the C-contiguous d. */
static void didax_copy_view(const char *s, char *d, int ndim, const npy_intp *shape,
                            const npy_intp *strides, npy_intp itemsize) {
    npy_intp sh[DIDAX_MAXDIM], st[DIDAX_MAXDIM], run = itemsize, count = 1;
    for (int k = 0; k < ndim; k++) {
        sh[k] = shape[k];
        st[k] = strides[k];
        count *= sh[k];
    }
    if (count == 0) return;
    while (ndim > 0 && (sh[ndim - 1] == 1 || st[ndim - 1] == run)) {
        run *= sh[ndim - 1];
        ndim--;
    }
    const npy_intp rows = count * itemsize / run;
    switch (run) {  /* (one channel of a 3, 5 or 7 wide window, float32 or float64...) */
    DIDAX_RUN(4) DIDAX_RUN(8) DIDAX_RUN(12) DIDAX_RUN(16) DIDAX_RUN(20) DIDAX_RUN(24)
    DIDAX_RUN(28) DIDAX_RUN(32) DIDAX_RUN(56) DIDAX_RUN(64)
    default: didax_copy_rows(s, d, ndim, sh, st, run, rows, 0);
    }
}

/* Copies the view of `src` at byte `offset` from its data, of `shape` and byte `strides`,
   into the C-contiguous `dst` (im2col: every window of an image, as rows). */
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
    const char *s = (const char *)PyArray_DATA(src) + offset;
    Py_BEGIN_ALLOW_THREADS
    didax_copy_view(s, (char *)PyArray_DATA(dst), ndim, (const npy_intp *)PyArray_DATA(shape),
                    (const npy_intp *)PyArray_DATA(strides), PyArray_ITEMSIZE(dst));
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* NumPy's matmul loop for three operands of `typenum`, as np.matmul calls it. */
static int didax_matmul_loop(PyObject *ufunc, int typenum, PyUFuncGenericFunction *fn,
                             void **data) {
    if (strcmp(Py_TYPE(ufunc)->tp_name, "numpy.ufunc") != 0) {
        PyErr_SetString(PyExc_TypeError, "patch_products: expected np.matmul");
        return -1;
    }
    PyUFuncObject *u = (PyUFuncObject *)ufunc;
    for (int j = 0; j < u->ntypes; j++) {
        int found = u->nargs == 3 && u->functions[j] != NULL;
        for (int a = 0; found && a < 3; a++) found = u->types[j * 3 + a] == typenum;
        if (found) {
            *fn = u->functions[j];
            *data = u->data ? u->data[j] : NULL;
            return 0;
        }
    }
    PyErr_SetString(PyExc_RuntimeError, "patch_products: NumPy's matmul has no such loop");
    return -1;
}

/* patch_products(base, offset, shape, strides, lead, step, rows, width, kernel, out, parts,
   matmul, threads): the view of base (at byte offset; shape and byte strides) holds items
   along its first `lead` dimensions (in row-major order), each `rows` rows of `width`
   patches. It is cut into blocks of `step` items, each copied (item by item, as
   copy_strided copies) into a (block's rows, width) matrix and multiplied by NumPy's matmul
   loop, one block per thread at a time:
   - parts is None: the block's patches times kernel (width, N), into the block's rows of
     out (items x rows, N);
   - else: the block's patches, transposed, times the kernel's rows of the block's items
     (kernel: items x rows, N), into parts[b] (width, N); then out = parts[0] + parts[1] +
     ..., in that order.
   Each block's product is the one NumPy's loop computes for the same operands, so any
   thread count gives the NumPy twin's bits. */
static PyObject *patch_products(PyObject *self, PyObject *args) {
    PyArrayObject *src, *shape, *strides, *kernel, *out;
    PyObject *parts_obj, *matmul;
    Py_ssize_t offset, step, item_rows, width;
    int lead, threads;
    if (!PyArg_ParseTuple(args, "O!nO!O!innnO!O!OOi", &PyArray_Type, &src, &offset,
                          &PyArray_Type, &shape, &PyArray_Type, &strides, &lead, &step,
                          &item_rows, &width, &PyArray_Type, &kernel, &PyArray_Type, &out,
                          &parts_obj, &matmul, &threads))
        return NULL;
    const int ndim = (int)PyArray_DIM(shape, 0), typenum = PyArray_TYPE(out);
    if (ndim > DIDAX_MAXDIM || lead < 1 || lead > ndim || step < 1) {
        PyErr_SetString(PyExc_ValueError, "patch_products: bad view or step");
        return NULL;
    }
    PyArrayObject *parts = NULL;
    if (parts_obj != Py_None) {
        if (!PyArray_Check(parts_obj)) {
            PyErr_SetString(PyExc_TypeError, "patch_products: parts must be an array");
            return NULL;
        }
        parts = (PyArrayObject *)parts_obj;
    }
    PyUFuncGenericFunction fn;
    void *fn_data;
    if (didax_matmul_loop(matmul, typenum, &fn, &fn_data) < 0) return NULL;
    const npy_intp *sh = (const npy_intp *)PyArray_DATA(shape);
    const npy_intp *st = (const npy_intp *)PyArray_DATA(strides);
    npy_intp items = 1;
    for (int k = 0; k < lead; k++) items *= sh[k];
    const npy_intp is = PyArray_ITEMSIZE(out), n = PyArray_DIM(kernel, 1);
    const npy_intp per_item = item_rows * width;  /* elements of one item's patches */
    const npy_intp nblocks = (items + step - 1) / step;
    const char *base = (const char *)PyArray_DATA(src) + offset;
    const char *kdata = (const char *)PyArray_DATA(kernel);
    char *odata = (char *)PyArray_DATA(out), *pdata = parts ? (char *)PyArray_DATA(parts) : NULL;
    int nt = threads < nblocks ? threads : (int)nblocks, failed = 0;
    if (nt < 1) nt = 1;
    Py_BEGIN_ALLOW_THREADS
    #pragma omp parallel num_threads(nt) if(nt > 1)
    {
        char *buf = malloc((size_t)(step * per_item * is) + 64);
        if (buf == NULL) {
            #pragma omp atomic write
            failed = 1;
        }
        #pragma omp for schedule(dynamic)
        for (npy_intp b = 0; b < nblocks; b++) {
            if (buf == NULL) continue;
            const npy_intp i0 = b * step, cnt = items - i0 < step ? items - i0 : step;
            for (npy_intp i = i0; i < i0 + cnt; i++) {  /* (item i's patches, in place) */
                npy_intp at = 0, rest = i;
                for (int k = lead - 1; k >= 0; k--) {
                    at += (rest % sh[k]) * st[k];
                    rest /= sh[k];
                }
                didax_copy_view(base + at, buf + (i - i0) * per_item * is, ndim - lead,
                                sh + lead, st + lead, is);
            }
            char *operands[3];
            npy_intp dims[4], steps[9] = {0, 0, 0};
            if (parts == NULL) {  /* (cnt * item_rows, width) times (width, n) */
                operands[0] = buf;
                operands[1] = (char *)kdata;
                operands[2] = odata + i0 * item_rows * n * is;
                dims[0] = 1; dims[1] = cnt * item_rows; dims[2] = width; dims[3] = n;
                steps[3] = width * is; steps[4] = is;
            } else {  /* (cnt * item_rows, width) transposed, times (cnt * item_rows, n) */
                operands[0] = buf;
                operands[1] = (char *)kdata + i0 * item_rows * n * is;
                operands[2] = pdata + b * width * n * is;
                dims[0] = 1; dims[1] = width; dims[2] = cnt * item_rows; dims[3] = n;
                steps[3] = is; steps[4] = width * is;
            }
            steps[5] = n * is; steps[6] = is; steps[7] = n * is; steps[8] = is;
            fn(operands, dims, steps, fn_data);
        }
        free(buf);
        /* out = parts[0] + parts[1] + ..., in that order for every element; each thread
           sums a run of the elements (after the products: the loop above ends in a
           barrier), a piece of DIDAX_PARTS_RUN at a time */
        if (parts != NULL && !failed) {
            const npy_intp size = width * n;
#define DIDAX_SUM_PARTS(T)                                                                  \
            {                                                                               \
                T *o = (T *)odata;                                                          \
                const T *p = (const T *)pdata;                                              \
                _Pragma("omp for schedule(static)")                                         \
                for (int t = 0; t < nt; t++) {                                              \
                    const npy_intp end = size * (t + 1) / nt;                               \
                    for (npy_intp e0 = size * t / nt; e0 < end; e0 += DIDAX_PARTS_RUN) {    \
                        const npy_intp e1 = e0 + DIDAX_PARTS_RUN < end ? e0 + DIDAX_PARTS_RUN  \
                                                                        : end;              \
                        for (npy_intp e = e0; e < e1; e++) o[e] = p[e];                     \
                        for (npy_intp b = 1; b < nblocks; b++)                              \
                            for (npy_intp e = e0; e < e1; e++) o[e] += p[b * size + e];     \
                    }                                                                       \
                }                                                                           \
            }
            if (typenum == NPY_FLOAT32) DIDAX_SUM_PARTS(float) else DIDAX_SUM_PARTS(double)
#undef DIDAX_SUM_PARTS
        }
    }
    Py_END_ALLOW_THREADS
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}
"""

_KERNELS = KernelModule(_BODY, ("scatter_selected", "reduce_windows", "copy_strided",
                                 "patch_products"))


def native_module(wait: bool = False):
    """The C kernels' module, or None while it is not (yet) there (see KernelModule)."""
    return _KERNELS.get(wait)


def scatter_selected(buf, source, steps, window, start, ge, numpy_twin, disjoint=False):
    """The sums of `source` at each window's chosen element of `buf` (C-contiguous), as a
    flat array of buf's size, or None where there is no C loop for these dtypes (yet);
    `numpy_twin()` computes the same, and is compared with in the "check" mode. Rows of
    windows run on several threads only where the windows are `disjoint` (no element gets
    two windows' sources, so no sum's order depends on the threads)."""
    if buf.dtype not in C_FLOATS or source.dtype != buf.dtype:
        return None
    if native_module() is None:
        return None
    out = np.zeros(buf.size, buf.dtype)

    def c_call(module):
        module.scatter_selected(buf, np.ascontiguousarray(source), out,
                                np.asarray(source.shape, np.intp), np.asarray(steps, np.intp),
                                np.asarray(window, np.intp), int(start), bool(ge),
                                native_threads.count() if disjoint else 1)

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
                              int(start), _FOLDS[fold], native_threads.count())

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


# OpenBLAS runs a product of at most this many multiply-adds (M x N x K) on the calling
# thread, whatever its thread count (its build's default threshold): such products run side
# by side on our threads, with no OpenBLAS thread woken (one woken spins after its product,
# taking a core from ours).
SINGLE_THREADED_PRODUCT = 1 << 18


def _product_threads(block_products: int) -> int:
    """The threads the blocks run on: the native tier's, where each block's product runs
    on the thread calling it (OpenBLAS on one thread, or a product under its threshold)."""
    if block_products <= SINGLE_THREADED_PRODUCT or blas_threads.count() == 1:
        return native_threads.count()
    return 1


def patch_products(windows, base, lead, step, rows, width, kernel, by_feature, numpy_twin):
    """The products of a convolution's patches a block at a time (see conv.py): windows'
    items (along its first `lead` dimensions; `rows` rows of `width` patches an item) in
    blocks of `step`, times `kernel` (C-contiguous), as a new array, or None where there is
    no C loop for these dtypes (yet). By features, the blocks' patches are transposed, each
    times its items' rows of the kernel, and their products summed in order. The blocks
    run on the native tier's threads, each product by NumPy's matmul loop as
    `numpy_twin()` calls it, which computes the same."""
    dtype = windows.dtype
    if (dtype not in C_FLOATS or kernel.dtype != dtype or not windows.size
            or native_module() is None):
        return None
    items, n = math.prod(windows.shape[:lead]), kernel.shape[1]
    blocks = -(-items // step)
    out = np.empty((width, n) if by_feature else (items * rows, n), dtype)
    parts = np.empty((blocks, width, n), dtype) if by_feature and blocks > 1 else None
    threads = _product_threads(min(step, items) * rows * width * n)

    def c_call(module):
        module.patch_products(base, windows.ctypes.data - base.ctypes.data,
                              np.asarray(windows.shape, np.intp),
                              np.asarray(windows.strides, np.intp), lead, step, rows, width,
                              kernel, out,
                              out[None] if by_feature and parts is None else parts,
                              np.matmul, threads)

    return _KERNELS.run("conv_general_dilated", c_call, lambda: [numpy_twin()], [out])[0]


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
