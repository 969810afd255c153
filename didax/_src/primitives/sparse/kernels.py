"""Sparse matrix products (a COO or CSR matrix times a dense vector or matrix) in C, built at
run time by the native tier's compiler and cache, with a NumPy fallback of the same bits.

What both compute, for real floats: each stored element's product `data[k] * rhs[col, j]`
in the compute dtype (float32 or float64), then every output entry summed in float64 in the
order of the stored elements, starting from 0.0, and rounded once to the compute dtype.
The fallback is `np.bincount` with those products as weights (a sequential float64 sum in
input order), so the C loop and NumPy agree to the bit whichever runs, on every call.
Elements whose row or column is out of bounds are dropped. Other dtypes (integers, bool,
complex) take a NumPy path (`segment_sum`).

The C module picks its loop by what the indices allow (the bits are the same whichever):
a CSR matrix with a plain indptr (from 0 or more, nondecreasing, within the elements) times
a vector, and a COO matrix whose rows are sorted and in bounds (checked in one pass) read
row by row in interleaved branchless streams. Times a matrix, a CSR matrix, and a COO one
while its rows are sorted and in bounds (checked on the way), sum each row's outputs in
registers, a tile of columns at a time. Other COO matrices sum into an array.

The C module is built once per machine (cached on disk) as `didax_native_tier` says:
"background" (the default) builds it in a thread while NumPy serves the first calls, "sync"
before the first call returns, "off" never; "check" (a test mode) runs both and compares
their bits.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.compiler.native.kernel_module import C_FLOATS, KernelModule
from didax._src.primitives.sparse.layout import segment_sum

_BODY = r"""
/* Rows of random length make the branch at each row's end the cost of a plain row loop
   (it mispredicts once a row). The vector products (K == 1) therefore run a few interleaved
   streams, each a run of whole rows summed as one branchless chain: the float64 running
   total is masked to +0.0 where a row starts, then the product added (the same bits as a
   sum from 0.0), and written to the row's output at every element (the last write is the
   row's sum; `out` starts zeroed for rows with no elements). An element whose column is out
   of bounds adds +0.0 (a no-op: a sum from +0.0 is never -0.0). Streams split at row starts,
   so each row is summed whole, in element order. */
typedef double didax_v2d __attribute__((vector_size(16)));
typedef long long didax_v2l __attribute__((vector_size(16)));
#define DIDAX_AI static inline __attribute__((always_inline))
#define DIDAX_OWN static __attribute__((noinline))  /* (its own registers) */
#define DIDAX_BLK 512  /* elements a CSR stream takes per step (its row starts flagged) */
#define DIDAX_CSR_STREAMS 3
#define DIDAX_COO_STREAMS 2

/* a, restarted at +0.0 where `restart` (0 or 1), plus p */
DIDAX_AI didax_v2d didax_restart_add(didax_v2d a, long long restart, double p) {
    didax_v2l keep = (didax_v2l){restart - 1, 0};
    return (didax_v2d)((didax_v2l)a & keep) + (didax_v2d){p, 0.0};
}

/* The matrix products (K > 1 columns) sum a row's outputs in registers, a tile of columns
   at a time: vectors of DIDAX_L float64 totals (the machine's width), DIDAX_T of them in a
   wide tile (16 columns), then single vectors and single columns for the rest; each output
   is still summed alone, in element order from +0.0. Rows of B are read in random order:
   the one an element DIDAX_AHEAD places on will need is prefetched. */
#if defined(__AVX512F__)
#define DIDAX_VB 64
#elif defined(__AVX__)
#define DIDAX_VB 32
#else
#define DIDAX_VB 16
#endif
#define DIDAX_L (DIDAX_VB / 8)
#define DIDAX_T (16 / DIDAX_L)
#define DIDAX_AHEAD 16
typedef double didax_vd __attribute__((vector_size(DIDAX_VB)));  /* totals, float64 products */
typedef float didax_vf __attribute__((vector_size(DIDAX_VB / 2)));  /* float32 products */

#define DIDAX_DEF(NAME, VAL, IDX, VP)                                                       \
/* element k's product, 0 if its column is out of bounds (nB > 0) */                        \
DIDAX_AI VAL NAME##_elem(const VAL *restrict data, const IDX *restrict cols, npy_intp sc,   \
                         npy_intp k, const VAL *restrict B, npy_intp nB) {                  \
    npy_intp c = (npy_intp)cols[k * sc];                                                    \
    int ok = (npy_uintp)c < (npy_uintp)nB;                                                  \
    VAL p = data[k] * B[ok ? c : 0];                                                        \
    return ok ? p : (VAL)0;                                                                 \
}                                                                                           \
/* indptr[0] >= 0, nondecreasing, indptr[nR] <= nse: the CSR streams' precondition */       \
DIDAX_AI int NAME##_indptr_plain_(const IDX *restrict indptr, npy_intp sp, npy_intp nR,    \
                                  npy_intp nse) {                                           \
    int bad = indptr[0] < 0 || (npy_intp)indptr[nR * sp] > nse;                             \
    for (npy_intp r = 0; r < nR; r++) bad |= indptr[(r + 1) * sp] < indptr[r * sp];         \
    return !bad;                                                                            \
}                                                                                           \
static int NAME##_indptr_plain(const IDX *restrict indptr, npy_intp sp, npy_intp nR,        \
                               npy_intp nse) {                                              \
    return sp == 1 ? NAME##_indptr_plain_(indptr, 1, nR, nse)                               \
                   : NAME##_indptr_plain_(indptr, sp, nR, nse);                             \
}                                                                                           \
/* f[i] = the number of rows (from *rc, before rend) starting at element k + i, i < n */    \
DIDAX_AI void NAME##_flags(IDX *restrict f, const IDX *restrict indptr, npy_intp sp,        \
                           npy_intp *rc, npy_intp rend, npy_intp k, npy_intp n) {           \
    memset(f, 0, (size_t)n * sizeof(IDX));                                                  \
    npy_intp j = *rc;                                                                       \
    for (; j < rend && (npy_intp)indptr[j * sp] < k + n; j++) f[indptr[j * sp] - k]++;      \
    *rc = j;                                                                                \
}                                                                                           \
DIDAX_AI void NAME##_csr_step(const VAL *restrict data, const IDX *restrict cols,           \
                              npy_intp k, const VAL *restrict B, npy_intp nB,               \
                              VAL *restrict out, IDX f, npy_intp *r, didax_v2d *a) {        \
    VAL p = NAME##_elem(data, cols, 1, k, B, nB);                                           \
    *r += f;                                                                                \
    *a = didax_restart_add(*a, f != 0, (double)p);                                          \
    out[*r] = (VAL)(*a)[0];                                                                 \
}                                                                                           \
/* CSR times a vector, columns of unit stride; indptr plain, out zeroed, nB > 0 */          \
DIDAX_OWN void NAME##_csr_streams(const VAL *restrict data, const IDX *restrict cols,       \
                                  const IDX *restrict indptr, npy_intp sp,                  \
                                  const VAL *restrict B, npy_intp nB, VAL *restrict out,    \
                                  npy_intp nR) {                                            \
    enum { NS = DIDAX_CSR_STREAMS };                                                        \
    npy_intp row[NS + 1], k[NS], kend[NS], rc[NS], r[NS];                                   \
    didax_v2d a[NS];                                                                        \
    IDX f[NS][DIDAX_BLK];                                                                   \
    npy_intp first = (npy_intp)indptr[0], last = (npy_intp)indptr[nR * sp];                 \
    row[0] = 0;                                                                             \
    row[NS] = nR;                                                                           \
    for (int s = 1; s < NS; s++) { /* the first row starting at or after its share */       \
        npy_intp target = first + (last - first) / NS * s, lo = row[s - 1], hi = nR;        \
        while (lo < hi) {                                                                   \
            npy_intp mid = lo + (hi - lo) / 2;                                              \
            if ((npy_intp)indptr[mid * sp] >= target) hi = mid; else lo = mid + 1;          \
        }                                                                                   \
        row[s] = lo;                                                                        \
    }                                                                                       \
    for (int s = 0; s < NS; s++) {                                                          \
        k[s] = (npy_intp)indptr[row[s] * sp];                                               \
        kend[s] = (npy_intp)indptr[row[s + 1] * sp];                                        \
        rc[s] = row[s];                                                                     \
        r[s] = row[s] - 1;                                                                  \
        a[s] = (didax_v2d){0.0, 0.0};                                                       \
    }                                                                                       \
    for (;;) {                                                                              \
        int full = 1;                                                                       \
        for (int s = 0; s < NS; s++) full &= kend[s] - k[s] >= DIDAX_BLK;                   \
        if (!full) break;                                                                   \
        for (int s = 0; s < NS; s++)                                                        \
            NAME##_flags(f[s], indptr, sp, &rc[s], row[s + 1], k[s], DIDAX_BLK);            \
        for (npy_intp i = 0; i < DIDAX_BLK; i++)                                            \
            for (int s = 0; s < NS; s++)                                                    \
                NAME##_csr_step(data, cols, k[s] + i, B, nB, out, f[s][i], &r[s], &a[s]);   \
        for (int s = 0; s < NS; s++) k[s] += DIDAX_BLK;                                     \
    }                                                                                       \
    for (int s = 0; s < NS; s++)                                                            \
        while (k[s] < kend[s]) {                                                            \
            npy_intp n = kend[s] - k[s] < DIDAX_BLK ? kend[s] - k[s] : DIDAX_BLK;           \
            NAME##_flags(f[0], indptr, sp, &rc[s], row[s + 1], k[s], n);                    \
            for (npy_intp i = 0; i < n; i++)                                                \
                NAME##_csr_step(data, cols, k[s] + i, B, nB, out, f[0][i], &r[s], &a[s]);   \
            k[s] += n;                                                                      \
        }                                                                                   \
}                                                                                           \
/* rows nondecreasing, within [0, nR): a COO matrix read row by row as it is */             \
DIDAX_AI int NAME##_rows_sorted_(const IDX *restrict rows, npy_intp sr, npy_intp nse,       \
                                 npy_intp nR) {                                             \
    if (nse == 0) return 1;                                                                 \
    if (rows[0] < 0 || (npy_intp)rows[(nse - 1) * sr] >= nR) return 0;                     \
    for (npy_intp k0 = 1; k0 < nse; k0 += 4096) { /* (stops soon on unsorted rows) */    \
        npy_intp k1 = nse - k0 < 4096 ? nse : k0 + 4096;                                    \
        int bad = 0;                                                                        \
        for (npy_intp k = k0; k < k1; k++) bad |= rows[k * sr] < rows[(k - 1) * sr];       \
        if (bad) return 0;                                                                  \
    }                                                                                       \
    return 1;                                                                               \
}                                                                                           \
static int NAME##_rows_sorted(const IDX *restrict rows, npy_intp sr, npy_intp nse,          \
                              npy_intp nR) {                                                \
    if (sr == 1) return NAME##_rows_sorted_(rows, 1, nse, nR);                              \
    if (sr == 2) return NAME##_rows_sorted_(rows, 2, nse, nR);                              \
    return NAME##_rows_sorted_(rows, sr, nse, nR);                                          \
}                                                                                           \
DIDAX_AI void NAME##_coo_step(const VAL *restrict data, const IDX *restrict rows,           \
                              npy_intp sr, const IDX *restrict cols, npy_intp sc,           \
                              npy_intp k, const VAL *restrict B, npy_intp nB,               \
                              VAL *restrict out, npy_intp *prev, didax_v2d *a) {            \
    npy_intp r = (npy_intp)rows[k * sr];                                                    \
    VAL p = NAME##_elem(data, cols, sc, k, B, nB);                                          \
    *a = didax_restart_add(*a, r != *prev, (double)p);                                      \
    out[r] = (VAL)(*a)[0];                                                                  \
    *prev = r;                                                                              \
}                                                                                           \
/* sorted COO times a vector; out zeroed, nB > 0 */                                         \
DIDAX_AI void NAME##_coo_streams_(const VAL *restrict data, const IDX *restrict rows,       \
                                  npy_intp sr, const IDX *restrict cols, npy_intp sc,       \
                                  npy_intp nse, const VAL *restrict B, npy_intp nB,         \
                                  VAL *restrict out) {                                      \
    enum { NS = DIDAX_COO_STREAMS };                                                        \
    npy_intp k0[NS + 1], prev[NS];                                                          \
    didax_v2d a[NS];                                                                        \
    k0[0] = 0;                                                                              \
    k0[NS] = nse;                                                                           \
    for (int s = 1; s < NS; s++) { /* the first row start at or after its share */         \
        npy_intp t = nse / NS * s;                                                          \
        if (t < k0[s - 1]) t = k0[s - 1];                                                   \
        while (t > 0 && t < nse && rows[t * sr] == rows[(t - 1) * sr]) t++;                 \
        k0[s] = t;                                                                          \
    }                                                                                       \
    npy_intp m = nse;                                                                       \
    for (int s = 0; s < NS; s++) {                                                          \
        prev[s] = -1;                                                                       \
        a[s] = (didax_v2d){0.0, 0.0};                                                       \
        if (k0[s + 1] - k0[s] < m) m = k0[s + 1] - k0[s];                                   \
    }                                                                                       \
    for (npy_intp i = 0; i < m; i++)                                                        \
        for (int s = 0; s < NS; s++)                                                        \
            NAME##_coo_step(data, rows, sr, cols, sc, k0[s] + i, B, nB, out, &prev[s], &a[s]); \
    for (int s = 0; s < NS; s++)                                                            \
        for (npy_intp k = k0[s] + m; k < k0[s + 1]; k++)                                    \
            NAME##_coo_step(data, rows, sr, cols, sc, k, B, nB, out, &prev[s], &a[s]);      \
}                                                                                           \
DIDAX_OWN void NAME##_coo_streams(const VAL *restrict data, const IDX *restrict rows,       \
                                  npy_intp sr, const IDX *restrict cols, npy_intp sc,       \
                                  npy_intp nse, const VAL *restrict B, npy_intp nB,         \
                                  VAL *restrict out) {                                      \
    if (sr == 1 && sc == 1) NAME##_coo_streams_(data, rows, 1, cols, 1, nse, B, nB, out);   \
    else if (sr == 2 && sc == 2)                                                            \
        NAME##_coo_streams_(data, rows, 2, cols, 2, nse, B, nB, out);                       \
    else NAME##_coo_streams_(data, rows, sr, cols, sc, nse, B, nB, out);                    \
}                                                                                           \
/* One row's outputs o[j0 .. j0 + T * DIDAX_L) from its elements k on, while k < end and    \
   (for COO) rows[k] == r, in T vectors of float64 running totals; returns where it         \
   stopped. */                                                                              \
DIDAX_AI npy_intp NAME##_tile(int T, const VAL *restrict data, const IDX *restrict rows,    \
                              npy_intp sr, npy_intp r, const IDX *restrict cols,            \
                              npy_intp sc, npy_intp k, npy_intp end, npy_intp nse,          \
                              const VAL *restrict B, npy_intp nB, npy_intp K, npy_intp j0,  \
                              VAL *restrict o) {                                            \
    didax_vd a[DIDAX_T];                                                                    \
    for (int t = 0; t < T; t++) a[t] = (didax_vd){0};                                       \
    for (; k < end && (rows == NULL || (npy_intp)rows[k * sr] == r); k++) {                 \
        npy_intp ka = k + DIDAX_AHEAD < nse ? k + DIDAX_AHEAD : k;                          \
        npy_uintp ca = (npy_uintp)cols[ka * sc];                                            \
        __builtin_prefetch(B + (ca < (npy_uintp)nB ? ca : 0) * K + j0);                     \
        npy_intp c = (npy_intp)cols[k * sc];                                                \
        if ((npy_uintp)c >= (npy_uintp)nB) continue;                                        \
        const VAL d = data[k];                                                              \
        for (int t = 0; t < T; t++) {                                                       \
            VP b;                                                                           \
            memcpy(&b, B + c * K + j0 + t * DIDAX_L, sizeof b);                             \
            a[t] += __builtin_convertvector(d * b, didax_vd);                               \
        }                                                                                   \
    }                                                                                       \
    for (int t = 0; t < T; t++) {                                                           \
        VP s = __builtin_convertvector(a[t], VP);                                           \
        memcpy(o + j0 + t * DIDAX_L, &s, sizeof s);                                         \
    }                                                                                       \
    return k;                                                                               \
}                                                                                           \
/* the same for the single column j */                                                      \
DIDAX_AI npy_intp NAME##_column(const VAL *restrict data, const IDX *restrict rows,         \
                                npy_intp sr, npy_intp r, const IDX *restrict cols,          \
                                npy_intp sc, npy_intp k, npy_intp end,                      \
                                const VAL *restrict B, npy_intp nB, npy_intp K, npy_intp j, \
                                VAL *restrict o) {                                          \
    double a = 0.0;                                                                         \
    for (; k < end && (rows == NULL || (npy_intp)rows[k * sr] == r); k++) {                 \
        npy_intp c = (npy_intp)cols[k * sc];                                                \
        if ((npy_uintp)c >= (npy_uintp)nB) continue;                                        \
        VAL p = data[k] * B[c * K + j];                                                     \
        a += (double)p;                                                                     \
    }                                                                                       \
    o[j] = (VAL)a;                                                                          \
    return k;                                                                               \
}                                                                                           \
/* one row's K outputs (K > 0), wide tiles first; returns where the row ended */            \
DIDAX_AI npy_intp NAME##_row(const VAL *restrict data, const IDX *restrict rows,            \
                             npy_intp sr, npy_intp r, const IDX *restrict cols,             \
                             npy_intp sc, npy_intp k, npy_intp end, npy_intp nse,           \
                             const VAL *restrict B, npy_intp nB, npy_intp K,                \
                             VAL *restrict o) {                                             \
    npy_intp j = 0, stop = k;                                                               \
    for (; j + DIDAX_T * DIDAX_L <= K; j += DIDAX_T * DIDAX_L)                              \
        stop = NAME##_tile(DIDAX_T, data, rows, sr, r, cols, sc, k, end, nse, B, nB, K, j,  \
                           o);                                                              \
    for (; j + DIDAX_L <= K; j += DIDAX_L)                                                  \
        stop = NAME##_tile(1, data, rows, sr, r, cols, sc, k, end, nse, B, nB, K, j, o);    \
    for (; j < K; j++)                                                                      \
        stop = NAME##_column(data, rows, sr, r, cols, sc, k, end, B, nB, K, j, o);          \
    return stop;                                                                            \
}                                                                                           \
/* COO times a matrix, row by row while the rows are nondecreasing and in bounds; 0 where   \
   they are not (out then partly written), else 1 (rows with no elements zeroed) */         \
DIDAX_AI int NAME##_coo_rows_(const VAL *restrict data, const IDX *restrict rows,           \
                              npy_intp sr, const IDX *restrict cols, npy_intp sc,           \
                              npy_intp nse, const VAL *restrict B, npy_intp nB, npy_intp K, \
                              VAL *restrict out, npy_intp nR) {                             \
    npy_intp k = 0, next = 0;  /* (next: the first row not written) */                      \
    while (k < nse) {                                                                       \
        npy_intp r = (npy_intp)rows[k * sr];                                                \
        if (r < next || r >= nR) return 0;                                                  \
        memset(out + next * K, 0, (size_t)((r - next) * K) * sizeof(VAL));                  \
        k = NAME##_row(data, rows, sr, r, cols, sc, k, nse, nse, B, nB, K, out + r * K);    \
        next = r + 1;                                                                       \
    }                                                                                       \
    memset(out + next * K, 0, (size_t)((nR - next) * K) * sizeof(VAL));                     \
    return 1;                                                                               \
}                                                                                           \
DIDAX_OWN int NAME##_coo_rows(const VAL *restrict data, const IDX *restrict rows,           \
                              npy_intp sr, const IDX *restrict cols, npy_intp sc,           \
                              npy_intp nse, const VAL *restrict B, npy_intp nB, npy_intp K, \
                              VAL *restrict out, npy_intp nR) {                             \
    if (sr == 1 && sc == 1)                                                                 \
        return NAME##_coo_rows_(data, rows, 1, cols, 1, nse, B, nB, K, out, nR);            \
    if (sr == 2 && sc == 2)                                                                 \
        return NAME##_coo_rows_(data, rows, 2, cols, 2, nse, B, nB, K, out, nR);            \
    return NAME##_coo_rows_(data, rows, sr, cols, sc, nse, B, nB, K, out, nR);              \
}                                                                                           \
/* COO in any order: each row's consecutive elements summed in a register (K == 1), or     \
   every output entry in `acc` (nR * K, zeroed) */                                          \
DIDAX_OWN void NAME##_coo(const VAL *restrict data, const IDX *restrict rows, npy_intp sr,  \
                          const IDX *restrict cols, npy_intp sc, npy_intp nse,              \
                          const VAL *restrict B, npy_intp nB, npy_intp K,                   \
                          double *restrict acc, VAL *restrict out, npy_intp nR) {           \
    if (K == 1) {                                                                           \
        npy_intp cur = -1;                                                                  \
        double a = 0.0;                                                                     \
        for (npy_intp k = 0; k < nse; k++) {                                                \
            npy_intp r = (npy_intp)rows[k * sr], c = (npy_intp)cols[k * sc];                \
            if ((npy_uintp)r >= (npy_uintp)nR || (npy_uintp)c >= (npy_uintp)nB)             \
                continue;                                                                   \
            if (r != cur) {                                                                 \
                if (cur >= 0) acc[cur] = a;                                                 \
                cur = r;                                                                    \
                a = acc[r];                                                                 \
            }                                                                               \
            VAL p = data[k] * B[c];                                                         \
            a += (double)p;                                                                 \
        }                                                                                   \
        if (cur >= 0) acc[cur] = a;                                                         \
    } else {                                                                                \
        for (npy_intp k = 0; k < nse; k++) {                                                \
            npy_intp r = (npy_intp)rows[k * sr], c = (npy_intp)cols[k * sc];                \
            if ((npy_uintp)r >= (npy_uintp)nR || (npy_uintp)c >= (npy_uintp)nB)             \
                continue;                                                                   \
            const VAL d = data[k];                                                          \
            const VAL *restrict b = B + c * K;                                              \
            double *restrict o = acc + r * K;                                               \
            for (npy_intp j = 0; j < K; j++) { VAL p = d * b[j]; o[j] += (double)p; }       \
        }                                                                                   \
    }                                                                                       \
    for (npy_intp i = 0; i < nR * K; i++) out[i] = (VAL)acc[i];                             \
}                                                                                           \
/* Row r holds the elements k with indptr[r] <= k < indptr[r + 1] (within [0, nse)). */     \
DIDAX_AI void NAME##_csr_(const VAL *restrict data, const IDX *restrict cols, npy_intp sc,  \
                          const IDX *restrict indptr, npy_intp sp, npy_intp nse,            \
                          const VAL *restrict B, npy_intp nB, npy_intp K,                   \
                          VAL *restrict out, npy_intp nR) {                                 \
    for (npy_intp r = 0; r < nR; r++) {                                                     \
        npy_intp lo = (npy_intp)indptr[r * sp], hi = (npy_intp)indptr[(r + 1) * sp];        \
        if (lo < 0) lo = 0;                                                                 \
        if (hi > nse) hi = nse;                                                             \
        NAME##_row(data, NULL, 0, 0, cols, sc, lo, hi, nse, B, nB, K, out + r * K);         \
    }                                                                                       \
}                                                                                           \
DIDAX_OWN void NAME##_csr(const VAL *restrict data, const IDX *restrict cols, npy_intp sc,  \
                          const IDX *restrict indptr, npy_intp sp, npy_intp nse,            \
                          const VAL *restrict B, npy_intp nB, npy_intp K,                   \
                          VAL *restrict out, npy_intp nR) {                                 \
    if (sc == 1 && sp == 1) NAME##_csr_(data, cols, 1, indptr, 1, nse, B, nB, K, out, nR);  \
    else NAME##_csr_(data, cols, sc, indptr, sp, nse, B, nB, K, out, nR);                   \
}                                                                                           \
/* the product, by the fastest kernel whose precondition holds; 0, or -1 out of memory */   \
static int NAME##_product(int csr, const VAL *restrict d, const IDX *restrict a,            \
                          npy_intp sa, const IDX *restrict b, npy_intp sb, npy_intp nse,    \
                          const VAL *restrict x, npy_intp nB, npy_intp K,                   \
                          VAL *restrict o, npy_intp nR) {                                   \
    if (csr) {                                                                              \
        if (K == 1 && sa == 1 && nB > 0 && NAME##_indptr_plain(b, sb, nR, nse)) {           \
            memset(o, 0, (size_t)nR * sizeof(VAL));                                         \
            NAME##_csr_streams(d, a, b, sb, x, nB, o, nR);                                  \
        } else {                                                                            \
            NAME##_csr(d, a, sa, b, sb, nse, x, nB, K, o, nR);                              \
        }                                                                                   \
        return 0;                                                                           \
    }                                                                                       \
    if (K == 1 && nB > 0 && NAME##_rows_sorted(a, sa, nse, nR)) {                           \
        memset(o, 0, (size_t)nR * sizeof(VAL));                                             \
        NAME##_coo_streams(d, a, sa, b, sb, nse, x, nB, o);                                 \
        return 0;                                                                           \
    }                                                                                       \
    if (K > 1 && NAME##_coo_rows(d, a, sa, b, sb, nse, x, nB, K, o, nR)) return 0;          \
    double *acc = (double *)calloc((size_t)(nR * K > 0 ? nR * K : 1), sizeof(double));      \
    if (acc == NULL) return -1;                                                             \
    NAME##_coo(d, a, sa, b, sb, nse, x, nB, K, acc, o, nR);                                 \
    free(acc);                                                                              \
    return 0;                                                                               \
}

DIDAX_DEF(f32_i32, float, npy_int32, didax_vf)
DIDAX_DEF(f32_i64, float, npy_int64, didax_vf)
DIDAX_DEF(f64_i32, double, npy_int32, didax_vd)
DIDAX_DEF(f64_i64, double, npy_int64, didax_vd)

/* product(csr, data, a, b, x, out): `data` (nse,), `x` (nB, K) and `out` (nR, K) are
   C-contiguous arrays of one float dtype; `a` and `b` 1-D arrays of one index dtype, of any
   stride: the rows and columns of a COO matrix, or (csr) the column indices and indptr of
   a CSR one. */
static PyObject *product(PyObject *self, PyObject *args) {
    int csr;
    PyArrayObject *data, *ia, *ib, *xa, *oa;
    if (!PyArg_ParseTuple(args, "pO!O!O!O!O!", &csr, &PyArray_Type, &data, &PyArray_Type,
                          &ia, &PyArray_Type, &ib, &PyArray_Type, &xa, &PyArray_Type, &oa))
        return NULL;
    int vt = PyArray_TYPE(data), it = PyArray_TYPE(ia), status;
    npy_intp nse = PyArray_DIM(data, 0), nB = PyArray_DIM(xa, 0), K = PyArray_DIM(xa, 1);
    npy_intp nR = PyArray_DIM(oa, 0), isz = PyArray_ITEMSIZE(ia);
    npy_intp sa = PyArray_STRIDE(ia, 0) / isz, sb = PyArray_STRIDE(ib, 0) / isz;
    const void *d = PyArray_DATA(data), *a = PyArray_DATA(ia), *b = PyArray_DATA(ib);
    const void *x = PyArray_DATA(xa);
    void *o = PyArray_DATA(oa);
    Py_BEGIN_ALLOW_THREADS
#define DIDAX_CALL(NAME, VAL, IDX)                                                          \
    status = NAME##_product(csr, (const VAL *)d, (const IDX *)a, sa, (const IDX *)b, sb,    \
                            nse, (const VAL *)x, nB, K, (VAL *)o, nR);
    if (vt == NPY_FLOAT32 && it == NPY_INT32) { DIDAX_CALL(f32_i32, float, npy_int32) }
    else if (vt == NPY_FLOAT32) { DIDAX_CALL(f32_i64, float, npy_int64) }
    else if (it == NPY_INT32) { DIDAX_CALL(f64_i32, double, npy_int32) }
    else { DIDAX_CALL(f64_i64, double, npy_int64) }
    Py_END_ALLOW_THREADS
    if (status < 0) return PyErr_NoMemory();
    Py_RETURN_NONE;
}
"""

_KERNELS = KernelModule(_BODY, ("product",))


def native_module(wait: bool = False):
    """The C kernels' module, or None while it is not (yet) there (see KernelModule)."""
    return _KERNELS.get(wait)



def compute_dtype(dtype) -> np.dtype:
    """16-bit floats are multiplied and summed in float32 (as XLA's CPU products do)."""
    dtype = np.dtype(dtype)
    if dtypes.kind(dtype) == "f" and dtype.itemsize < 4:
        return np.dtype(np.float32)
    return dtype


# ------------------------------------------------------------------------------------------
# The products


def coo_matmul(data, rows, cols, B, n_rows: int, out_dtype) -> np.ndarray:
    """The matrix of `n_rows` rows holding `data[k]` at (rows[k], cols[k]) (duplicates
    added; out of bounds dropped) times `B` (a vector or a matrix), in `out_dtype`."""
    return _product(False, data, rows, cols, B, n_rows, out_dtype)


def csr_matmul(data, indices, indptr, B, out_dtype) -> np.ndarray:
    """The CSR matrix (data, indices, indptr) (row r: the elements from indptr[r] to
    indptr[r + 1]; columns out of bounds dropped) times `B`, in `out_dtype`."""
    indptr = np.asarray(indptr)
    return _product(True, data, indices, indptr, B, indptr.shape[0] - 1, out_dtype)


def _product(csr: bool, data, a, b, B, n_rows: int, out_dtype) -> np.ndarray:
    out_dtype = np.dtype(out_dtype)
    cdt = compute_dtype(out_dtype)
    B = np.asarray(B)
    shape = (n_rows,) + B.shape[1:]
    K = int(np.prod(B.shape[1:], dtype=np.int64))
    data = np.ascontiguousarray(np.asarray(data).astype(cdt, copy=False))
    x = np.ascontiguousarray(B.astype(cdt, copy=False).reshape(B.shape[0], K))
    a, b = _index_arrays(a, b)
    if cdt not in C_FLOATS:
        rows, k = _csr_elements(b, n_rows, data.shape[0]) if csr else (a, None)
        cols = a[k] if csr else b
        out = _other_dtypes(data if k is None else data[k], rows, cols, x, n_rows)
    else:
        out = _run(csr, data, a, b, x, n_rows)
    return out.reshape(shape).astype(out_dtype, copy=False)


def _index_arrays(a, b):
    """Both index arrays 1-D, in one of the C kernels' index dtypes (views where they are)."""
    a, b = np.asarray(a), np.asarray(b)
    both = np.result_type(a.dtype, b.dtype)
    dtype = np.dtype(np.int32) if both == np.int32 else np.dtype(np.int64)
    return a.reshape(-1).astype(dtype, copy=False), b.reshape(-1).astype(dtype, copy=False)


def _run(csr: bool, data, a, b, x, n_rows: int) -> np.ndarray:
    """The product of real floats: in C if its module is there, else NumPy's twin; in the
    "check" mode both, compared bit for bit."""
    if not n_rows * x.shape[1]:
        return _twin(csr, data, a, b, x, n_rows)
    out = np.empty((n_rows, x.shape[1]), data.dtype)
    return _KERNELS.run("sparse product", lambda m: m.product(csr, data, a, b, x, out),
                        lambda: [_twin(csr, data, a, b, x, n_rows)], [out])[0]


def _csr_elements(indptr, n_rows: int, nse: int):
    """(row, element) of each element a CSR matrix holds, row by row, in the C kernel's
    order: row r holds the k with indptr[r] <= k < indptr[r + 1], within [0, nse)."""
    lo = np.clip(indptr[:-1].astype(np.int64), 0, nse)
    hi = np.clip(indptr[1:].astype(np.int64), 0, nse)
    counts = np.maximum(hi - lo, 0)
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    k = np.arange(rows.shape[0], dtype=np.int64) - np.repeat(starts - lo, counts)
    return rows, k


def _twin(csr: bool, data, a, b, x, n_rows: int) -> np.ndarray:
    """The C kernel's result in NumPy: the products in their dtype, each output entry summed
    in float64 in element order (`np.bincount`), rounded once."""
    if csr:
        rows, k = _csr_elements(b, n_rows, data.shape[0])
        data, cols = data[k], a[k]
    else:
        rows, cols = a.astype(np.int64), b
    n_b, K = x.shape
    ok = (rows >= 0) & (rows < n_rows) & (cols >= 0) & (cols < n_b)
    rows, cols, data = rows[ok], cols[ok], data[ok]
    products = (data[:, None] * x[cols]).astype(np.float64)
    flat = (rows[:, None] * K + np.arange(K, dtype=np.int64)).reshape(-1)
    acc = np.bincount(flat, products.reshape(-1), minlength=n_rows * K)
    return acc.astype(data.dtype).reshape(n_rows, K)


def _other_dtypes(data, rows, cols, x, n_rows: int) -> np.ndarray:
    """Integers, bool and complex: the products summed per row by `segment_sum`."""
    rows = np.asarray(rows, np.int64)
    ok = (rows >= 0) & (rows < n_rows) & (cols >= 0) & (cols < x.shape[0])
    return segment_sum(rows[ok], data[ok][:, None] * x[cols[ok]], n_rows)
