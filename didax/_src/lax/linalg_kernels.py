"""Small-matrix factorizations (LU with partial pivoting, Cholesky, triangular solves) in C,
looping over a batch of matrices, with NumPy twins that compute the same bits.

For small matrices the cost of a batched decomposition is the work per matrix around the
arithmetic (NumPy's LAPACK wrappers copy each matrix to Fortran order and call LAPACK once
per matrix): one C loop over the batch running an unblocked kernel is many times faster.
Each kernel does its arithmetic in one fixed order, element by element, which its NumPy
twin does too, batched over the matrices (one NumPy operation per column): products,
differences, quotients and square roots round the same way in C (built without contraction
into fused multiply-adds) and in NumPy, so the two agree to the bit. Whichever runs, every
call gives the same result: NumPy serves while the C module builds (or when there is no C
compiler), and both jit tiers and eager evaluation call these functions.

The algorithms, all right-looking (each column's update applied to what remains at once):
- getrf: the pivot is the first entry of largest magnitude in the column (a NaN first),
  the rows are swapped whole, the column below the pivot divided by it (by 1 if it is zero,
  as LAPACK leaves a zero column unscaled), then the trailing block updated.
- potrf: the lower factor from the lower triangle; a matrix whose pivot is not positive
  comes out all NaN; the strict upper triangle is zero.
- lower_solve: forward substitution by columns of the unknowns (x_j = b_j / t_jj, then
  b_i -= t_ij x_j below), reading only the lower triangle.
Only float32 and float64 have C kernels; complex matrices take the NumPy twin. Square
matrices up to 8 x 8 are factored eight at a time, interleaved (one vector instruction does
a step of all eight): a factorization that small is a chain of dependent divisions and
square roots, which one matrix at a time leaves the vector units idle waiting on.

The C module is built once per machine (cached on disk) as `didax_native_tier` says:
"background" (the default) builds it in a thread while NumPy serves the first calls, "sync"
before the first call returns, "off" never; "check" (a test mode) runs both and compares
their bits.
"""
from __future__ import annotations

import numpy as np

from didax._src.compiler.native.kernel_module import C_FLOATS, KernelModule

_BODY = r"""
#define DIDAX_INLINE static inline __attribute__((always_inline))
#define DIDAX_W 8 /* matrices factored side by side */
#define DIDAX_SIMD _Pragma("omp simd")
/* Square matrices up to 8 x 8 get loops of constant trip counts, which gcc unrolls: at these
   sizes the loops' own overhead is most of the time. The arithmetic is the same. */
#define DIDAX_SMALL_CASES(CALL) \
    switch (n) { case 1: CALL(1); break; case 2: CALL(2); break; case 3: CALL(3); break;     \
                 case 4: CALL(4); break; case 5: CALL(5); break; case 6: CALL(6); break;     \
                 case 7: CALL(7); break; case 8: CALL(8); break; default: CALL(n); }

#define DIDAX_DEF(NAME, T, ABS, SQRT)                                                       \
/* W matrices at once, element e of lane w at v[e * W + w]: each step is one vector         \
   instruction over the lanes, so W factorizations' dependency chains run side by side. */  \
DIDAX_INLINE void NAME##_potrf_lanes(T *restrict v, const npy_intp n, int *restrict ok) {   \
    for (npy_intp j = 0; j < n; j++) {                                                      \
        T s[DIDAX_W];                                                                       \
        T *restrict vjj = v + (j * n + j) * DIDAX_W;                                        \
        DIDAX_SIMD                                                                          \
        for (int w = 0; w < DIDAX_W; w++) {                                                 \
            ok[w] &= vjj[w] > 0;                                                            \
            s[w] = SQRT(vjj[w]);                                                            \
            vjj[w] = s[w];                                                                  \
        }                                                                                   \
        for (npy_intp i = j + 1; i < n; i++) {                                              \
            T *restrict vij = v + (i * n + j) * DIDAX_W;                                    \
            DIDAX_SIMD                                                                      \
            for (int w = 0; w < DIDAX_W; w++) vij[w] = vij[w] / s[w];                       \
        }                                                                                   \
        for (npy_intp i = j + 1; i < n; i++) {                                              \
            const T *restrict vij = v + (i * n + j) * DIDAX_W;                              \
            for (npy_intp c = j + 1; c <= i; c++) {                                         \
                T *restrict vic = v + (i * n + c) * DIDAX_W;                                \
                const T *restrict vcj = v + (c * n + j) * DIDAX_W;                          \
                DIDAX_SIMD                                                                  \
                for (int w = 0; w < DIDAX_W; w++) vic[w] = vic[w] - vij[w] * vcj[w];        \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
}                                                                                           \
DIDAX_INLINE void NAME##_getrf_lanes(T *restrict v, const npy_intp n,                       \
                                     npy_int32 *restrict pv, npy_int32 *restrict pm) {      \
    for (npy_intp i = 0; i < n; i++)                                                        \
        DIDAX_SIMD                                                                          \
        for (int w = 0; w < DIDAX_W; w++) pm[i * DIDAX_W + w] = (npy_int32)i;               \
    for (npy_intp j = 0; j < n; j++) {                                                      \
        T best[DIDAX_W], d[DIDAX_W];                                                        \
        int seen[DIDAX_W];                                                                  \
        npy_int32 p[DIDAX_W];                                                               \
        const T *restrict vjj = v + (j * n + j) * DIDAX_W;                                  \
        DIDAX_SIMD                                                                          \
        for (int w = 0; w < DIDAX_W; w++) {                                                 \
            best[w] = ABS(vjj[w]);                                                          \
            seen[w] = best[w] != best[w];                                                   \
            p[w] = (npy_int32)j;                                                            \
        }                                                                                   \
        for (npy_intp i = j + 1; i < n; i++) {                                              \
            const T *restrict vij = v + (i * n + j) * DIDAX_W;                              \
            DIDAX_SIMD                                                                      \
            for (int w = 0; w < DIDAX_W; w++) {                                             \
                const T x = ABS(vij[w]);                                                    \
                const int isnan_ = x != x;                                                  \
                const int take = !seen[w] & ((x > best[w]) | isnan_);                       \
                p[w] = take ? (npy_int32)i : p[w];                                          \
                best[w] = take ? x : best[w];                                               \
                seen[w] |= isnan_;                                                          \
            }                                                                               \
        }                                                                                   \
        for (int w = 0; w < DIDAX_W; w++) {                                                 \
            const npy_intp q = p[w];                                                        \
            pv[j * DIDAX_W + w] = (npy_int32)q;                                             \
            if (q == j) continue;                                                           \
            for (npy_intp c = 0; c < n; c++) {                                              \
                T t = v[(j * n + c) * DIDAX_W + w];                                         \
                v[(j * n + c) * DIDAX_W + w] = v[(q * n + c) * DIDAX_W + w];                \
                v[(q * n + c) * DIDAX_W + w] = t;                                           \
            }                                                                               \
            npy_int32 t = pm[j * DIDAX_W + w];                                              \
            pm[j * DIDAX_W + w] = pm[q * DIDAX_W + w];                                      \
            pm[q * DIDAX_W + w] = t;                                                        \
        }                                                                                   \
        DIDAX_SIMD                                                                          \
        for (int w = 0; w < DIDAX_W; w++) d[w] = vjj[w] == 0 ? (T)1 : vjj[w];               \
        for (npy_intp i = j + 1; i < n; i++) {                                              \
            T *restrict vij = v + (i * n + j) * DIDAX_W;                                    \
            DIDAX_SIMD                                                                      \
            for (int w = 0; w < DIDAX_W; w++) vij[w] = vij[w] / d[w];                       \
        }                                                                                   \
        for (npy_intp i = j + 1; i < n; i++) {                                              \
            const T *restrict vij = v + (i * n + j) * DIDAX_W;                              \
            for (npy_intp c = j + 1; c < n; c++) {                                          \
                T *restrict vic = v + (i * n + c) * DIDAX_W;                                \
                const T *restrict vjc = v + (j * n + c) * DIDAX_W;                          \
                DIDAX_SIMD                                                                  \
                for (int w = 0; w < DIDAX_W; w++) vic[w] = vic[w] - vij[w] * vjc[w];        \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
}                                                                                           \
/* Loads matrices b0.. of `a` (count, n, n) into the lanes; lanes past the end get the      \
   identity (factored, never stored). Returns how many lanes hold matrices. */              \
static int NAME##_load_lanes(const T *restrict a, npy_intp count, npy_intp b0, npy_intp n,  \
                             T *restrict v) {                                               \
    const int lanes = count - b0 < DIDAX_W ? (int)(count - b0) : DIDAX_W;                   \
    const T *restrict src = a + b0 * n * n;                                                 \
    for (int w = 0; w < lanes; w++)                                                         \
        for (npy_intp e = 0; e < n * n; e++) v[e * DIDAX_W + w] = src[w * n * n + e];      \
    for (int w = lanes; w < DIDAX_W; w++)                                                   \
        for (npy_intp i = 0; i < n; i++)                                                    \
            for (npy_intp c = 0; c < n; c++) v[(i * n + c) * DIDAX_W + w] = (T)(i == c);    \
    return lanes;                                                                           \
}                                                                                           \
DIDAX_INLINE void NAME##_getrf_one(T *restrict A, const npy_intp m, const npy_intp n,      \
                                   npy_int32 *restrict pv, npy_int32 *restrict pm) {        \
    const npy_intp k = m < n ? m : n;                                                       \
    for (npy_intp i = 0; i < m; i++) pm[i] = (npy_int32)i;                                  \
    for (npy_intp j = 0; j < k; j++) {                                                      \
        npy_intp p = j;                                                                     \
        T best = ABS(A[j * n + j]);                                                         \
        if (best == best) {                                                                 \
            for (npy_intp i = j + 1; i < m; i++) {                                          \
                T v = ABS(A[i * n + j]);                                                    \
                if (v != v) { p = i; break; }                                               \
                if (v > best) { best = v; p = i; }                                          \
            }                                                                               \
        }                                                                                   \
        pv[j] = (npy_int32)p;                                                               \
        if (p != j) {                                                                       \
            T *restrict rj = A + j * n, *restrict rp = A + p * n;                           \
            for (npy_intp c = 0; c < n; c++) { T t = rj[c]; rj[c] = rp[c]; rp[c] = t; }     \
            npy_int32 t = pm[j]; pm[j] = pm[p]; pm[p] = t;                                  \
        }                                                                                   \
        T d = A[j * n + j];                                                                 \
        if (d == 0) d = 1;                                                                  \
        const T *restrict u = A + j * n;                                                    \
        for (npy_intp i = j + 1; i < m; i++) {                                              \
            T *restrict r = A + i * n;                                                      \
            const T l = r[j] / d;                                                           \
            r[j] = l;                                                                       \
            for (npy_intp c = j + 1; c < n; c++) r[c] = r[c] - l * u[c];                    \
        }                                                                                   \
    }                                                                                       \
}                                                                                           \
static void NAME##_getrf(T *restrict a, npy_intp count, npy_intp m, npy_intp n,             \
                         npy_int32 *restrict piv, npy_int32 *restrict perm) {               \
    const npy_intp k = m < n ? m : n;                                                       \
    if (m == n && n <= 8) {                                                                 \
        T v[64 * DIDAX_W];                                                                  \
        npy_int32 pvl[8 * DIDAX_W], pml[8 * DIDAX_W];                                       \
        for (npy_intp b0 = 0; b0 < count; b0 += DIDAX_W) {                                  \
            const int lanes = NAME##_load_lanes(a, count, b0, n, v);                        \
            DIDAX_SMALL_CASES(NAME##_GETRF_LANES_CALL)                                      \
            for (int w = 0; w < lanes; w++) {                                               \
                T *dst = a + (b0 + w) * n * n;                                              \
                for (npy_intp e = 0; e < n * n; e++) dst[e] = v[e * DIDAX_W + w];           \
                for (npy_intp i = 0; i < n; i++) {                                          \
                    piv[(b0 + w) * n + i] = pvl[i * DIDAX_W + w];                           \
                    perm[(b0 + w) * n + i] = pml[i * DIDAX_W + w];                          \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
        return;                                                                             \
    }                                                                                       \
    for (npy_intp b = 0; b < count; b++)                                                    \
        NAME##_getrf_one(a + b * m * n, m, n, piv + b * k, perm + b * m);                   \
}                                                                                           \
DIDAX_INLINE void NAME##_potrf_one(T *restrict A, const npy_intp n, T *restrict col) {     \
    int failed = 0;                                                                         \
    for (npy_intp j = 0; j < n; j++) {                                                      \
        const T d = A[j * n + j];                                                           \
        if (!(d > 0)) { failed = 1; break; }                                                \
        const T s = SQRT(d);                                                                \
        A[j * n + j] = s;                                                                   \
        for (npy_intp i = j + 1; i < n; i++) {                                              \
            A[i * n + j] = A[i * n + j] / s;                                                \
            col[i] = A[i * n + j];                                                          \
        }                                                                                   \
        for (npy_intp i = j + 1; i < n; i++) {                                              \
            T *restrict r = A + i * n;                                                      \
            const T l = col[i];                                                             \
            for (npy_intp c = j + 1; c <= i; c++) r[c] = r[c] - l * col[c];                 \
        }                                                                                   \
    }                                                                                       \
    if (failed) {                                                                           \
        for (npy_intp e = 0; e < n * n; e++) A[e] = (T)NAN;                                 \
    } else {                                                                                \
        for (npy_intp i = 0; i < n; i++)                                                    \
            for (npy_intp c = i + 1; c < n; c++) A[i * n + c] = 0;                          \
    }                                                                                       \
}                                                                                           \
static void NAME##_potrf(T *restrict a, npy_intp count, npy_intp n, T *restrict col) {      \
    if (n <= 8) {                                                                           \
        T v[64 * DIDAX_W];                                                                  \
        int ok[DIDAX_W];                                                                    \
        for (npy_intp b0 = 0; b0 < count; b0 += DIDAX_W) {                                  \
            const int lanes = NAME##_load_lanes(a, count, b0, n, v);                        \
            for (int w = 0; w < DIDAX_W; w++) ok[w] = 1;                                    \
            DIDAX_SMALL_CASES(NAME##_POTRF_LANES_CALL)                                      \
            for (int w = 0; w < lanes; w++) {                                               \
                T *dst = a + (b0 + w) * n * n;                                              \
                for (npy_intp i = 0; i < n; i++)                                            \
                    for (npy_intp c = 0; c < n; c++) {                                      \
                        const T x = c > i ? (T)0 : v[(i * n + c) * DIDAX_W + w];            \
                        dst[i * n + c] = ok[w] ? x : (T)NAN;                                \
                    }                                                                       \
            }                                                                               \
        }                                                                                   \
        return;                                                                             \
    }                                                                                       \
    for (npy_intp b = 0; b < count; b++) {                                                  \
        NAME##_potrf_one(a + b * n * n, n, col);                                            \
    }                                                                                       \
}                                                                                           \
DIDAX_INLINE void NAME##_lower_solve_one(const T *restrict L, T *restrict X,               \
                                         const npy_intp m, const npy_intp k, int unit) {    \
    for (npy_intp j = 0; j < m; j++) {                                                      \
        T *restrict xj = X + j * k;                                                         \
        if (!unit) {                                                                        \
            const T d = L[j * m + j];                                                       \
            for (npy_intp c = 0; c < k; c++) xj[c] = xj[c] / d;                             \
        }                                                                                   \
        for (npy_intp i = j + 1; i < m; i++) {                                              \
            const T l = L[i * m + j];                                                       \
            T *restrict xi = X + i * k;                                                     \
            for (npy_intp c = 0; c < k; c++) xi[c] = xi[c] - l * xj[c];                     \
        }                                                                                   \
    }                                                                                       \
}                                                                                           \
static void NAME##_lower_solve(const T *restrict t, T *restrict x, npy_intp count,         \
                               npy_intp m, npy_intp k, int unit) {                          \
    const npy_intp n = m;                                                                   \
    for (npy_intp b = 0; b < count; b++) {                                                  \
        const T *L = t + b * m * m;                                                         \
        T *X = x + b * m * k;                                                               \
        if (k == 1) { DIDAX_SMALL_CASES(NAME##_SOLVE1_CALL) }                               \
        else NAME##_lower_solve_one(L, X, m, k, unit);                                      \
    }                                                                                       \
}

#define f32_GETRF_LANES_CALL(N) f32_getrf_lanes(v, N, pvl, pml)
#define f64_GETRF_LANES_CALL(N) f64_getrf_lanes(v, N, pvl, pml)
#define f32_POTRF_LANES_CALL(N) f32_potrf_lanes(v, N, ok)
#define f64_POTRF_LANES_CALL(N) f64_potrf_lanes(v, N, ok)
#define f32_SOLVE1_CALL(N) f32_lower_solve_one(L, X, N, 1, unit)
#define f64_SOLVE1_CALL(N) f64_lower_solve_one(L, X, N, 1, unit)

DIDAX_DEF(f32, float, fabsf, sqrtf)
DIDAX_DEF(f64, double, fabs, sqrt)

/* The callers pass C-contiguous arrays of the dtypes named, of matching sizes. */
static PyObject *getrf(PyObject *self, PyObject *args) {
    PyArrayObject *a, *piv, *perm;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyArray_Type, &a, &PyArray_Type, &piv,
                          &PyArray_Type, &perm))
        return NULL;
    npy_intp count = PyArray_DIM(a, 0), m = PyArray_DIM(a, 1), n = PyArray_DIM(a, 2);
    int f32 = PyArray_TYPE(a) == NPY_FLOAT32;
    void *d = PyArray_DATA(a);
    npy_int32 *pv = (npy_int32 *)PyArray_DATA(piv), *pm = (npy_int32 *)PyArray_DATA(perm);
    Py_BEGIN_ALLOW_THREADS
    if (f32) f32_getrf((float *)d, count, m, n, pv, pm);
    else f64_getrf((double *)d, count, m, n, pv, pm);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *potrf(PyObject *self, PyObject *args) {
    PyArrayObject *a;
    if (!PyArg_ParseTuple(args, "O!", &PyArray_Type, &a)) return NULL;
    npy_intp count = PyArray_DIM(a, 0), n = PyArray_DIM(a, 1);
    int f32 = PyArray_TYPE(a) == NPY_FLOAT32;
    void *d = PyArray_DATA(a);
    double *col = (double *)malloc((size_t)(n + 1) * sizeof(double));
    if (col == NULL) return PyErr_NoMemory();
    Py_BEGIN_ALLOW_THREADS
    if (f32) f32_potrf((float *)d, count, n, (float *)col);
    else f64_potrf((double *)d, count, n, col);
    Py_END_ALLOW_THREADS
    free(col);
    Py_RETURN_NONE;
}

static PyObject *lower_solve(PyObject *self, PyObject *args) {
    PyArrayObject *t, *x;
    int unit;
    if (!PyArg_ParseTuple(args, "O!O!p", &PyArray_Type, &t, &PyArray_Type, &x, &unit))
        return NULL;
    npy_intp count = PyArray_DIM(x, 0), m = PyArray_DIM(x, 1), k = PyArray_DIM(x, 2);
    int f32 = PyArray_TYPE(x) == NPY_FLOAT32;
    const void *l = PyArray_DATA(t);
    void *d = PyArray_DATA(x);
    Py_BEGIN_ALLOW_THREADS
    if (f32) f32_lower_solve((const float *)l, (float *)d, count, m, k, unit);
    else f64_lower_solve((const double *)l, (double *)d, count, m, k, unit);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}
"""

_KERNELS = KernelModule(_BODY, ("getrf", "potrf", "lower_solve"))


def native_module(wait: bool = False):
    """The C kernels' module, or None while it is not (yet) there (see KernelModule)."""
    return _KERNELS.get(wait)


def _run(name, c_call, numpy_twin, outputs):
    """`c_call()` if the C module is there (it fills `outputs` in place), else
    `numpy_twin()`, which returns them; in the "check" mode both, compared bit for bit."""
    if outputs[0].dtype not in C_FLOATS or not outputs[0].size:
        return numpy_twin()
    return _KERNELS.run(name, c_call, numpy_twin, outputs)


# ------------------------------------------------------------------------------------------
# The kernels, on C-contiguous batches of matrices (count, rows, columns)


def getrf(a: np.ndarray):
    """(lu, pivots, permutation) of each matrix of `a` (count, m, n)."""
    count, m, n = a.shape
    lu = np.array(a, order="C", copy=True)
    pivots = np.zeros((count, min(m, n)), np.int32)
    perm = np.empty((count, m), np.int32)
    return _run("getrf", lambda mod: mod.getrf(lu, pivots, perm),
                lambda: _getrf_numpy(a), [lu, pivots, perm])


def _getrf_numpy(x):
    count, m, n = x.shape
    a = x.copy()
    rows = np.arange(count)
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), (count, m)).copy()
    pivots = np.zeros((count, min(m, n)), np.int32)
    for j in range(min(m, n)):
        col = a[:, j:, j]
        size = np.abs(col.real) + np.abs(col.imag) if np.iscomplexobj(col) else np.abs(col)
        p = j + np.argmax(size, axis=1)
        pivots[:, j] = p
        a[rows, j], a[rows, p] = a[rows, p], a[rows, j].copy()
        perm[rows, j], perm[rows, p] = perm[rows, p], perm[rows, j].copy()
        pivot = a[:, j, j]
        a[:, j + 1:, j] /= np.where(pivot != 0, pivot, 1)[:, None]
        a[:, j + 1:, j + 1:] -= a[:, j + 1:, j, None] * a[:, j, None, j + 1:]
    return [a, pivots, perm]


def potrf(a: np.ndarray) -> np.ndarray:
    """The lower Cholesky factor of each matrix of `a` (count, n, n), from its lower
    triangle; all NaN where a matrix is not positive definite."""
    out = np.array(a, order="C", copy=True)
    return _run("potrf", lambda mod: mod.potrf(out), lambda: [_potrf_numpy(a)], [out])[0]


def _potrf_numpy(x):
    count, n, _ = x.shape
    a = x.copy()
    ok = np.ones(count, bool)
    with np.errstate(all="ignore"):
        for j in range(n):
            d = a[:, j, j]
            ok &= d > 0  # (a failed matrix computes on; it comes out all NaN)
            s = np.sqrt(d)
            a[:, j, j] = s
            a[:, j + 1:, j] /= s[:, None]
            a[:, j + 1:, j + 1:] -= a[:, j + 1:, j, None] * a[:, None, j + 1:, j]
    a[:, np.triu(np.ones((n, n), bool), 1)] = 0
    a[~ok] = np.nan
    return a


def lower_solve(t: np.ndarray, b: np.ndarray, unit_diagonal: bool) -> np.ndarray:
    """X with T X = B for each lower-triangular T of `t` (count, m, m) (its strict upper
    triangle, and its diagonal if `unit_diagonal`, unread) and B of `b` (count, m, k)."""
    t = np.ascontiguousarray(t)
    x = np.array(b, order="C", copy=True)
    return _run("lower_solve", lambda mod: mod.lower_solve(t, x, bool(unit_diagonal)),
                lambda: [_lower_solve_numpy(t, b, unit_diagonal)], [x])[0]


def _lower_solve_numpy(t, b, unit_diagonal):
    x = b.copy()
    for j in range(t.shape[-1]):
        if not unit_diagonal:
            x[:, j, :] /= t[:, j, j, None]
        x[:, j + 1:, :] -= t[:, j + 1:, j, None] * x[:, j, None, :]
    return x
