"""The native tier's own float32 product loop, used where it gives NumPy's matmul's bits.

NumPy's OpenBLAS (its SKYLAKEX kernels, on one thread) computes each element of a product
as a chain of fused multiply-adds over k, in order, from zero, one chain per block of K,
the blocks' chains added into the result in order; its level-3 driver cuts K into blocks
of at most 448 (a K between 448 and 896 into halves rounded up to 16), and a product of at
most 10^6 multiply-adds is one chain. The loop here computes exactly that, with AVX-512
tiles of 16 rows by 16 columns, reading the operands where they are: no packed copy of the
weight for a product of 16 rows, no zeroed result for a weight gradient of 16 terms (the
two cost a third of an MLP step at batch 16). Where rows come in fours, tiles of 4 rows by
64 columns read 256 consecutive bytes of each of the weight's rows, which the hardware
prefetches (16 columns, one cache line a row, it does not): a product of batch 16 whose
512 x 512 weight comes from beyond the L2 cache takes 96 us instead of 112, an MLP step at
batch 16 8 % less. Products of more than 32 rows, columns and terms (in modules: at least
96 rows and 2^20 multiply-adds, A within 1 MB, see `eligible`) use tiles of 12 rows by 32
columns over a strip of B copied to consecutive memory, A read where it is; OpenBLAS packs
both operands, and takes 5-20 % longer (an MLP step at batch 256 6 % less, all its
products in the loop).

Whether it gives NumPy's bits is not assumed: a product's shape and strides are checked
once, on random operands, against np.matmul with OpenBLAS on one thread (`agrees`), and
the loop computes a product only while OpenBLAS has one thread (with more, OpenBLAS cuts
K by its thread count, and the loop calls NumPy's instead). So a module computes the same
bits with either loop, and the choice, made when a module is made (tier.py), may follow
the kernel's module being built in the background. Products of more than 2 x 448 terms,
or of several matrices, keep NumPy's loop.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from didax._src.compiler.native import blas_threads
from didax._src.compiler.native.kernel_module import KernelModule

_BODY = r"""
#ifdef __AVX512F__
#include <immintrin.h>

#define DIDAX_Q 448
#define DIDAX_U 16
#define DIDAX_SMALL 32   /* as SMALL below */

/* The blocks of K OpenBLAS's driver sums separately (see the Python module). */
static int k_blocks(npy_intp M, npy_intp N, npy_intp K, npy_intp *blocks) {
    int nb = 0;
    if ((double)M * (double)N * (double)K <= 1e6 || K <= DIDAX_Q) {
        blocks[nb++] = K;
        return nb;
    }
    for (npy_intp ls = 0; ls < K && nb < 63;) {
        npy_intp m = K - ls;
        if (m >= 2 * DIDAX_Q) m = DIDAX_Q;
        else if (m > DIDAX_Q) m = ((m / 2 + DIDAX_U - 1) / DIDAX_U) * DIDAX_U;
        blocks[nb++] = m;
        ls += m;
    }
    return nb;
}

#define DIDAX_DECL(r) __m512 c##r = _mm512_setzero_ps();
#define DIDAX_FMA(r) c##r = _mm512_fmadd_ps(_mm512_set1_ps( \
    ((r) < 4 ? a : (r) < 8 ? a4 : (r) < 12 ? a8 : a12)[((r) % 4) * sai]), b, c##r);
#define DIDAX_STORE(r) { float *c = C + (r) * ldc; _mm512_mask_storeu_ps(c, m, first ? c##r \
    : _mm512_add_ps(_mm512_maskz_loadu_ps(m, c), c##r)); }
/* R rows by (up to, `m`) 16 columns over k0 <= k < k1: C = the chains, or C += them. */
#define DIDAX_TILE(R, DECLS, FMAS, STORES)                                                \
static inline __attribute__((always_inline)) void tile##R(                               \
        const float *A, npy_intp sai, npy_intp sak, const float *B, npy_intp ldb,        \
        float *C, npy_intp ldc, npy_intp k0, npy_intp k1, __mmask16 m, int first) {      \
    DECLS                                                                                \
    for (npy_intp k = k0; k < k1; k++) {                                                 \
        const __m512 b = _mm512_maskz_loadu_ps(m, B + k * ldb);                          \
        const float *a = A + k * sak, *a4 = a + 4 * sai, *a8 = a + 8 * sai;              \
        const float *a12 = a + 12 * sai;                                                 \
        (void)a4; (void)a8; (void)a12;                                                   \
        FMAS                                                                             \
    }                                                                                    \
    STORES                                                                               \
}
#define DIDAX_L1(X) X(0)
#define DIDAX_L2(X) DIDAX_L1(X) X(1)
#define DIDAX_L3(X) DIDAX_L2(X) X(2)
#define DIDAX_L4(X) DIDAX_L3(X) X(3)
#define DIDAX_L5(X) DIDAX_L4(X) X(4)
#define DIDAX_L6(X) DIDAX_L5(X) X(5)
#define DIDAX_L7(X) DIDAX_L6(X) X(6)
#define DIDAX_L8(X) DIDAX_L7(X) X(7)
#define DIDAX_L9(X) DIDAX_L8(X) X(8)
#define DIDAX_L10(X) DIDAX_L9(X) X(9)
#define DIDAX_L11(X) DIDAX_L10(X) X(10)
#define DIDAX_L12(X) DIDAX_L11(X) X(11)
#define DIDAX_L13(X) DIDAX_L12(X) X(12)
#define DIDAX_L14(X) DIDAX_L13(X) X(13)
#define DIDAX_L15(X) DIDAX_L14(X) X(14)
#define DIDAX_L16(X) DIDAX_L15(X) X(15)
#define DIDAX_T(R) DIDAX_TILE(R, DIDAX_L##R(DIDAX_DECL), DIDAX_L##R(DIDAX_FMA), \
                              DIDAX_L##R(DIDAX_STORE))
DIDAX_T(1) DIDAX_T(2) DIDAX_T(3) DIDAX_T(4) DIDAX_T(5) DIDAX_T(6) DIDAX_T(7) DIDAX_T(8)
DIDAX_T(9) DIDAX_T(10) DIDAX_T(11) DIDAX_T(12) DIDAX_T(13) DIDAX_T(14) DIDAX_T(15)
DIDAX_T(16)

static void tile_rows(npy_intp rows, const float *A, npy_intp sai, npy_intp sak,
                      const float *B, npy_intp ldb, float *C, npy_intp ldc, npy_intp k0,
                      npy_intp k1, __mmask16 m, int first) {
    switch (rows) {
#define DIDAX_CASE(R) case R: tile##R(A, sai, sak, B, ldb, C, ldc, k0, k1, m, first); break;
    DIDAX_CASE(1) DIDAX_CASE(2) DIDAX_CASE(3) DIDAX_CASE(4) DIDAX_CASE(5) DIDAX_CASE(6)
    DIDAX_CASE(7) DIDAX_CASE(8) DIDAX_CASE(9) DIDAX_CASE(10) DIDAX_CASE(11) DIDAX_CASE(12)
    DIDAX_CASE(13) DIDAX_CASE(14) DIDAX_CASE(15) DIDAX_CASE(16)
    }
}

/* 16 rows (the first `rows` stored) by 16 columns, A's 16 values of each k consecutive
   (at A + k * apk): its addresses are constants apart, the loop holds them in no register. */
#define DIDAX_FMA_P(r) c##r = _mm512_fmadd_ps(_mm512_set1_ps(a[r]), b, c##r);
#define DIDAX_STORE_P(r) if ((r) < rows) DIDAX_STORE(r)
static inline __attribute__((always_inline)) void tile_packed(
        npy_intp rows, const float *A, npy_intp apk, const float *B, npy_intp ldb, float *C,
        npy_intp ldc, npy_intp k0, npy_intp k1, __mmask16 m, int first) {
    DIDAX_L16(DIDAX_DECL)
    for (npy_intp k = k0; k < k1; k++) {
        _mm_prefetch((const char *)(B + (k + 16) * ldb), _MM_HINT_T0);
        const __m512 b = _mm512_maskz_loadu_ps(m, B + k * ldb);
        const float *a = A + k * apk;
        DIDAX_L16(DIDAX_FMA_P)
    }
    DIDAX_L16(DIDAX_STORE_P)
}

/* 4 rows (from r0) by 64 columns, A's values of each k at A + k * apk as in tile_packed:
   B's rows are read 256 consecutive bytes at a time, which the hardware prefetches. */
#define DIDAX_ACC4(r) __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = _mm512_setzero_ps(), \
    c##r##2 = _mm512_setzero_ps(), c##r##3 = _mm512_setzero_ps();
#define DIDAX_FMA4(r) { const __m512 s = _mm512_set1_ps(a[r]); \
    c##r##0 = _mm512_fmadd_ps(s, b0, c##r##0); c##r##1 = _mm512_fmadd_ps(s, b1, c##r##1); \
    c##r##2 = _mm512_fmadd_ps(s, b2, c##r##2); c##r##3 = _mm512_fmadd_ps(s, b3, c##r##3); }
#define DIDAX_ST1(p, v) _mm512_storeu_ps(p, first ? v : _mm512_add_ps(_mm512_loadu_ps(p), v));
#define DIDAX_STORE4(r) { float *c = C + (r) * ldc; DIDAX_ST1(c, c##r##0) \
    DIDAX_ST1(c + 16, c##r##1) DIDAX_ST1(c + 32, c##r##2) DIDAX_ST1(c + 48, c##r##3) }
static inline __attribute__((always_inline)) void tile_4x64(
        const float *A, npy_intp apk, const float *B, npy_intp ldb, float *C, npy_intp ldc,
        npy_intp k0, npy_intp k1, int first) {
    DIDAX_ACC4(0) DIDAX_ACC4(1) DIDAX_ACC4(2) DIDAX_ACC4(3)
    for (npy_intp k = k0; k < k1; k++) {
        const float *bk = B + k * ldb;
        const __m512 b0 = _mm512_loadu_ps(bk), b1 = _mm512_loadu_ps(bk + 16),
                     b2 = _mm512_loadu_ps(bk + 32), b3 = _mm512_loadu_ps(bk + 48);
        const float *a = A + k * apk;
        DIDAX_FMA4(0) DIDAX_FMA4(1) DIDAX_FMA4(2) DIDAX_FMA4(3)
    }
    DIDAX_STORE4(0) DIDAX_STORE4(1) DIDAX_STORE4(2) DIDAX_STORE4(3)
}

/* One product: C (M x N, row stride ldc, unit column stride) = A (element (i, k) at
   A[i * sai + k * sak]) times B (row stride ldb, unit column stride). */
static void product(npy_intp M, npy_intp N, npy_intp K, const float *A, npy_intp sai,
                    npy_intp sak, const float *B, npy_intp ldb, float *C, npy_intp ldc) {
    npy_intp blocks[64];
    int nb = k_blocks(M, N, K, blocks);
    /* A's rows are packed 16 at a time (k-major) unless they are consecutive already; a
       product of one strip of 16 columns reads them in place. */
    const int direct = sai == 1 && M % 16 == 0;
    float *packed = direct || N <= 16 ? NULL : (float *)malloc(K * 16 * sizeof(float));
    if (direct || packed != NULL) {
        for (npy_intp i0 = 0; i0 < M; i0 += 16) {
            npy_intp rows = M - i0 < 16 ? M - i0 : 16, apk = 16;
            const float *a = packed;
            if (direct) {
                a = A + i0;
                apk = sak;
            } else {
                for (npy_intp k = 0; k < K; k++)
                    for (npy_intp r = 0; r < 16; r++)
                        packed[k * 16 + r] = r < rows ? A[(i0 + r) * sai + k * sak] : 0.0f;
            }
            npy_intp j0 = 0;
            if (rows % 4 == 0)
                for (; j0 + 64 <= N; j0 += 64)
                    for (npy_intp r0 = 0; r0 < rows; r0 += 4) {
                        npy_intp k0 = 0;
                        for (int b = 0; b < nb; b++) {
                            tile_4x64(a + r0, apk, B + j0, ldb, C + (i0 + r0) * ldc + j0, ldc,
                                      k0, k0 + blocks[b], b == 0);
                            k0 += blocks[b];
                        }
                    }
            for (; j0 < N; j0 += 16) {
                npy_intp jn = N - j0 < 16 ? N - j0 : 16, k0 = 0;
                __mmask16 m = (__mmask16)((1u << jn) - 1);
                for (int b = 0; b < nb; b++) {
                    tile_packed(rows, a, apk, B + j0, ldb, C + i0 * ldc + j0, ldc, k0,
                                k0 + blocks[b], m, b == 0);
                    k0 += blocks[b];
                }
            }
        }
        free(packed);
        return;
    }
    for (npy_intp i0 = 0; i0 < M; i0 += 16) {
        npy_intp rows = M - i0 < 16 ? M - i0 : 16;
        for (npy_intp j0 = 0; j0 < N; j0 += 16) {
            npy_intp jn = N - j0 < 16 ? N - j0 : 16, k0 = 0;
            __mmask16 m = (__mmask16)((1u << jn) - 1);
            for (int b = 0; b < nb; b++) {
                if (rows == 16)
                    tile16(A + i0 * sai, sai, sak, B + j0, ldb, C + i0 * ldc + j0, ldc, k0,
                           k0 + blocks[b], m, b == 0);
                else
                    tile_rows(rows, A + i0 * sai, sai, sak, B + j0, ldb, C + i0 * ldc + j0,
                              ldc, k0, k0 + blocks[b], m, b == 0);
                k0 += blocks[b];
            }
        }
    }
}

/* Products of more than DIDAX_SMALL rows, columns and terms: tiles of 12 rows by 32
   columns (24 accumulators) over a strip of B's columns copied to consecutive memory
   (it stays in the L1 cache while every row tile of A reads it: B's rows in place, 2 KB
   apart, fall into a few of its sets). A's rows are read where they are, consecutive per
   k (A stored transposed) or per row; only a last partial tile of rows is packed. Faster
   than OpenBLAS's sgemm (which packs both operands) by 5-20 % on an MLP's products at
   batch 256 and a transformer's; the same chains, so the same bits. */
#define DIDAX_MR 12
#define DIDAX_R12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define DIDAX_DECL2(r) __m512 c##r##a = _mm512_setzero_ps(), c##r##b = _mm512_setzero_ps();
#define DIDAX_FMA2(r, x) { const __m512 s = _mm512_set1_ps(x); \
    c##r##a = _mm512_fmadd_ps(s, b0, c##r##a); c##r##b = _mm512_fmadd_ps(s, b1, c##r##b); }
#define DIDAX_FMA_K(r) DIDAX_FMA2(r, a[r])
#define DIDAX_FMA_ROW(r) DIDAX_FMA2(r, ((r) < 3 ? a0 : (r) < 6 ? a3 : (r) < 9 ? a6 : a9) \
    [((r) % 3) * sai])
#define DIDAX_ST2(p, m, v) _mm512_mask_storeu_ps(p, m, first ? v \
    : _mm512_add_ps(_mm512_maskz_loadu_ps(m, p), v));
#define DIDAX_STORE2(r) if ((r) < rows) { float *c = C + (r) * ldc; \
    DIDAX_ST2(c, m0, c##r##a) DIDAX_ST2(c + 16, m1, c##r##b) }

/* 12 rows (the first `rows` stored), A's values of each k consecutive at A + k * apk. */
static inline __attribute__((always_inline)) void tile_12x32_k(
        npy_intp rows, const float *A, npy_intp apk, const float *S, float *C, npy_intp ldc,
        npy_intp k0, npy_intp k1, __mmask16 m0, __mmask16 m1, int first) {
    DIDAX_R12(DIDAX_DECL2)
    for (npy_intp k = k0; k < k1; k++) {
        const __m512 b0 = _mm512_load_ps(S + 32 * k), b1 = _mm512_load_ps(S + 32 * k + 16);
        const float *a = A + k * apk;
        _mm_prefetch((const char *)(a + 8 * apk), _MM_HINT_T0);
        DIDAX_R12(DIDAX_FMA_K)
    }
    DIDAX_R12(DIDAX_STORE2)
}

/* 12 rows, each A's row consecutive (row stride sai): four bases and 0-2 strides. */
static inline __attribute__((always_inline)) void tile_12x32_row(
        const float *A, npy_intp sai, const float *S, float *C, npy_intp ldc, npy_intp k0,
        npy_intp k1, __mmask16 m0, __mmask16 m1, int first) {
    const npy_intp rows = DIDAX_MR;
    const float *a0 = A + k0, *a3 = a0 + 3 * sai, *a6 = a0 + 6 * sai, *a9 = a0 + 9 * sai;
    DIDAX_R12(DIDAX_DECL2)
    for (npy_intp k = k0; k < k1; k++) {
        const __m512 b0 = _mm512_load_ps(S + 32 * k), b1 = _mm512_load_ps(S + 32 * k + 16);
        DIDAX_R12(DIDAX_FMA_ROW)
        a0++; a3++; a6++; a9++;
    }
    DIDAX_R12(DIDAX_STORE2)
}

/* 16 of B's columns (each consecutive over k, column stride sbj) from k into S's rows
   (32 floats apart): 16 x 16 transposes in registers. */
static void transpose_16(const float *B, npy_intp sbj, npy_intp k, float *S) {
    __m512 r[16], t[16];
    for (int j = 0; j < 16; j++) r[j] = _mm512_loadu_ps(B + j * sbj + k);
    for (int j = 0; j < 16; j += 2) {
        t[j] = _mm512_unpacklo_ps(r[j], r[j + 1]);
        t[j + 1] = _mm512_unpackhi_ps(r[j], r[j + 1]);
    }
    for (int j = 0; j < 16; j += 4) {
        r[j] = _mm512_shuffle_ps(t[j], t[j + 2], 0x44);
        r[j + 1] = _mm512_shuffle_ps(t[j], t[j + 2], 0xEE);
        r[j + 2] = _mm512_shuffle_ps(t[j + 1], t[j + 3], 0x44);
        r[j + 3] = _mm512_shuffle_ps(t[j + 1], t[j + 3], 0xEE);
    }
    for (int j = 0; j < 4; j++) {
        t[j] = _mm512_shuffle_f32x4(r[j], r[j + 4], 0x88);
        t[j + 4] = _mm512_shuffle_f32x4(r[j], r[j + 4], 0xDD);
        t[j + 8] = _mm512_shuffle_f32x4(r[j + 8], r[j + 12], 0x88);
        t[j + 12] = _mm512_shuffle_f32x4(r[j + 8], r[j + 12], 0xDD);
    }
    for (int j = 0; j < 8; j++) {  /* r[q]: the 16 columns' values of k + q */
        r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
        r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xDD);
    }
    for (int q = 0; q < 16; q++) _mm512_store_ps(S + 32 * (k + q), r[q]);
}

/* The masks of a strip's first and second 16 columns, jn (<= 32) of them there. */
static inline __mmask16 strip_mask(npy_intp jn, int half) {
    npy_intp n = jn - 16 * half;
    return n >= 16 ? 0xffff : n <= 0 ? 0 : (__mmask16)((1u << n) - 1);
}

/* B's columns j0 .. j0 + jn (jn <= 32, the rest zeros) into S (row k at S + 32 k). */
static void copy_strip(npy_intp K, const float *B, npy_intp ldb, npy_intp sbj, npy_intp j0,
                       npy_intp jn, float *S) {
    if (sbj == 1) {
        const __mmask16 m0 = strip_mask(jn, 0), m1 = strip_mask(jn, 1);
        for (npy_intp k = 0; k < K; k++) {
            const float *b = B + k * ldb + j0;
            _mm512_store_ps(S + 32 * k, _mm512_maskz_loadu_ps(m0, b));
            _mm512_store_ps(S + 32 * k + 16, _mm512_maskz_loadu_ps(m1, b + 16));
        }
        return;
    }
    npy_intp k = 0;
    if (ldb == 1 && jn == 32)
        for (; k + 16 <= K; k += 16) {
            transpose_16(B + j0 * sbj, sbj, k, S);
            transpose_16(B + (j0 + 16) * sbj, sbj, k, S + 16);
        }
    for (; k < K; k++)
        for (npy_intp j = 0; j < 32; j++)
            S[32 * k + j] = j < jn ? B[k * ldb + (j0 + j) * sbj] : 0.0f;
}

/* product's large case: A's rows consecutive per k (sai 1) or per row (sak 1); B's
   element (k, j) at B[k * ldb + j * sbj], sbj or ldb 1. -1: no memory. */
static int product_large(npy_intp M, npy_intp N, npy_intp K, const float *A, npy_intp sai,
                         npy_intp sak, const float *B, npy_intp ldb, npy_intp sbj, float *C,
                         npy_intp ldc) {
    npy_intp blocks[64];
    int nb = k_blocks(M, N, K, blocks);
    const npy_intp full = M / DIDAX_MR * DIDAX_MR, rest = M - full;
    float *S = (float *)aligned_alloc(64, K * 32 * sizeof(float));
    /* a last partial tile of rows is packed, 12 by K (the rows past M zeros) */
    float *tail = rest ? (float *)malloc(K * DIDAX_MR * sizeof(float)) : NULL;
    if (S == NULL || (rest && tail == NULL)) {
        free(S); free(tail);
        return -1;
    }
    for (npy_intp k = 0; rest && k < K; k++)
        for (npy_intp r = 0; r < DIDAX_MR; r++)
            tail[k * DIDAX_MR + r] = r < rest ? A[(full + r) * sai + k * sak] : 0.0f;
    for (npy_intp j0 = 0; j0 < N; j0 += 32) {
        const npy_intp jn = N - j0 < 32 ? N - j0 : 32;
        const __mmask16 m0 = strip_mask(jn, 0), m1 = strip_mask(jn, 1);
        copy_strip(K, B, ldb, sbj, j0, jn, S);
        npy_intp k0 = 0;
        for (int b = 0; b < nb; b++) {
            const npy_intp k1 = k0 + blocks[b];
            for (npy_intp i0 = 0; i0 < full; i0 += DIDAX_MR) {
                float *c = C + i0 * ldc + j0;
                if (sai == 1)
                    tile_12x32_k(DIDAX_MR, A + i0, sak, S, c, ldc, k0, k1, m0, m1, b == 0);
                else
                    tile_12x32_row(A + i0 * sai, sai, S, c, ldc, k0, k1, m0, m1, b == 0);
            }
            if (rest)
                tile_12x32_k(rest, tail, DIDAX_MR, S, C + full * ldc + j0, ldc, k0, k1, m0,
                             m1, b == 0);
            k0 = k1;
        }
    }
    free(S); free(tail);
    return 0;
}

/* The loop of a gufunc (m,k),(k,n)->(m,n) over float32, as NumPy's matmul's: dims
   {outer, M, K, N}; steps (bytes) {three outer steps, A's row and column, B's row and
   column, C's row and column}. A B read with another column stride than one element is
   copied row-major first. NumPy's loop computes the products while OpenBLAS has more than
   one thread, and any this loop does not take (a C written with another column stride, no
   terms, no memory for a copy). */
static struct {
    int (*blas_threads)(void);       /* OpenBLAS's thread count now */
    PyUFuncGenericFunction numpy_loop;  /* NumPy's matmul loop over float32, and its data */
    void *numpy_data;
} didax_fallback;

static void didax_matmul_loop(char **args, npy_intp const *dims, npy_intp const *steps,
                              void *data) {
    npy_intp outer = dims[0], M = dims[1], K = dims[2], N = dims[3];
    const npy_intp sz = sizeof(float);
    const int large = M > DIDAX_SMALL && N > DIDAX_SMALL && K > DIDAX_SMALL
                      && (steps[3] == sz || steps[4] == sz) && (steps[5] == sz || steps[6] == sz);
    const int copy_b = steps[6] != sz && !large;
    float *bt = NULL;
    /* (its bits were compared with OpenBLAS's on one thread) */
    if (didax_fallback.blas_threads() != 1 || steps[8] != sz || K == 0
            || (copy_b && N && (bt = (float *)malloc(K * N * sz)) == NULL)) {
        didax_fallback.numpy_loop(args, dims, steps, didax_fallback.numpy_data);
        return;
    }
    for (npy_intp o = 0; o < outer; o++) {
        const char *a = args[0] + o * steps[0], *b = args[1] + o * steps[1];
        char *c = args[2] + o * steps[2];
        const float *B = (const float *)b;
        npy_intp ldb = steps[5] / sz;
        if (large) {
            if (product_large(M, N, K, (const float *)a, steps[3] / sz, steps[4] / sz, B, ldb,
                              steps[6] / sz, (float *)c, steps[7] / sz) == 0)
                continue;
            char *one[3] = {(char *)a, (char *)b, c};  /* no memory: NumPy's loop */
            npy_intp dims1[4] = {1, M, K, N};
            didax_fallback.numpy_loop(one, dims1, steps, didax_fallback.numpy_data);
            continue;
        }
        if (copy_b) {
            for (npy_intp k = 0; k < K; k++)
                for (npy_intp j = 0; j < N; j++)
                    bt[k * N + j] = *(const float *)(b + k * steps[5] + j * steps[6]);
            B = bt;
            ldb = N;
        }
        product(M, N, K, (const float *)a, steps[3] / sz, steps[4] / sz, B, ldb,
                (float *)c, steps[7] / sz);
    }
    free(bt);
}

static PyUFuncGenericFunction didax_matmul_loops[1] = {didax_matmul_loop};
static char didax_matmul_types[3] = {NPY_FLOAT, NPY_FLOAT, NPY_FLOAT};
static void *didax_matmul_data[1] = {NULL};
#endif

/* matmul_ufunc(blas_threads, matmul): the gufunc of the loop, given the address of
   OpenBLAS's function returning its thread count and NumPy's matmul, whose float32 loop
   it calls while OpenBLAS has more than one thread; None where the loop has no vector
   code (there it would be slower than OpenBLAS). */
static PyObject *matmul_ufunc(PyObject *self, PyObject *args) {
#ifdef __AVX512F__
    PyObject *address, *matmul;
    if (!PyArg_ParseTuple(args, "OO", &address, &matmul)) return NULL;
    void *get = PyLong_AsVoidPtr(address);
    if (get == NULL) return NULL;
    if (_import_umath() < 0) return NULL;
    if (!PyObject_TypeCheck(matmul, &PyUFunc_Type)) {
        PyErr_SetString(PyExc_TypeError, "matmul_ufunc: matmul is not a ufunc");
        return NULL;
    }
    PyUFuncObject *u = (PyUFuncObject *)matmul;
    int found = -1;
    for (int j = 0; j < u->ntypes && found < 0; j++)
        if (u->types[3 * j] == NPY_FLOAT && u->types[3 * j + 1] == NPY_FLOAT
                && u->types[3 * j + 2] == NPY_FLOAT && u->functions[j] != NULL)
            found = j;
    if (found < 0) {
        PyErr_SetString(PyExc_RuntimeError, "matmul_ufunc: NumPy's matmul has no float32 loop");
        return NULL;
    }
    didax_fallback.blas_threads = (int (*)(void))get;
    didax_fallback.numpy_loop = u->functions[found];
    didax_fallback.numpy_data = u->data ? u->data[found] : NULL;
    return PyUFunc_FromFuncAndDataAndSignature(
        didax_matmul_loops, didax_matmul_data, didax_matmul_types, 1, 2, 1, PyUFunc_None,
        "didax_matmul", "float32 products as OpenBLAS computes them", 0,
        "(m,k),(k,n)->(m,n)");
#else
    Py_RETURN_NONE;
#endif
}
"""

_KERNELS = KernelModule(_BODY, ("matmul_ufunc",))

MAX_K = 2 * 448   # products summing more terms keep NumPy's loop
SMALL = 32        # a product with at most this many rows, columns or terms...
MIN_WORK = 1 << 16  # ...and at least this many multiply-adds may use the loop
LARGE_WORK = 1 << 20  # a product larger on every side may, with at least this many,
LARGE_ROWS = 96       # at least this many rows,
LARGE_A = 1 << 18     # and at most this many elements of A (1 MB: it stays in the L2 cache)

_lock = threading.Lock()
_ufunc: list = []      # [the gufunc or None], once the module is there
_agreed: dict = {}     # (M, K, N, first, second) -> whether the loop gives NumPy's bits


def eligible(mm, dtype) -> bool:
    """Whether the product `mm` (a rules.Matmul) is one the loop may compute: float32, one
    product (no batch), long enough to be worth a loop of its own. Where it is large on
    every side, the loop is faster than OpenBLAS from 2^20 multiply-adds and 96 rows, with
    A in the L2 cache (measured: 0.8-0.94 of its time; 64 rows 1.04-1.09, 4096 x 512
    rows 1.13)."""
    work = mm.M * mm.N * mm.K
    if min(mm.M, mm.N, mm.K) <= SMALL:
        fits = work >= MIN_WORK
    else:
        fits = work >= LARGE_WORK and mm.M >= LARGE_ROWS and mm.M * mm.K <= LARGE_A
    return np.dtype(dtype) == np.float32 and mm.batch == 1 and 0 < mm.K <= MAX_K and fits


def matmul_ufunc(wait: bool = False, idle: bool = False):
    """The loop's gufunc (`wait`: its module built now if it is not cached; `idle`: else
    built in the background at the lowest priority), or None while its module is not
    there, where it has no vector code, or without OpenBLAS."""
    if _ufunc:
        return _ufunc[0]
    fns = blas_threads._openblas()
    module = _KERNELS.get(wait, idle) if fns is not None else None
    if module is None:
        return None
    with _lock:
        if not _ufunc:
            get = ctypes.cast(fns[0], ctypes.c_void_p).value
            _ufunc.append(module.matmul_ufunc(get, np.matmul))
    return _ufunc[0]


def agrees(key) -> bool:
    """Whether the loop computes np.matmul's bits for products of `key` (M, K, N, and both
    operands' byte strides (batch, row, column)), on random operands, with OpenBLAS on one
    thread (the loop runs only then: with more, it calls NumPy's loop; and with one
    thread only are they compared, since OpenBLAS cuts K by its thread count)."""
    got = _agreed.get(key)
    if got is None:
        ufunc = matmul_ufunc()
        if ufunc is None or blas_threads.count() != 1:
            return False
        got = _agreed[key] = _same_bits(ufunc, *key)
    return got


def _same_bits(ufunc, M, K, N, first, second) -> bool:
    rng = np.random.default_rng(0)

    def operand(rows, cols, strides):
        extent = (rows - 1) * strides[1] + (cols - 1) * strides[2] + 4
        data = rng.standard_normal(extent // 4 + 1).astype(np.float32)
        return np.lib.stride_tricks.as_strided(data, (rows, cols), strides[1:])

    a, b = operand(M, K, first), operand(K, N, second)
    return np.matmul(a, b).tobytes() == ufunc(a, b).tobytes()


def choose_loops(loops: tuple, products: dict, wait: bool = True, idle: bool = False) -> tuple:
    """`loops` (a Plan's) with the entries of `products` ({index: key}, products that may use
    the loop) that agree with NumPy replaced by the loop's. `wait`: the loop's module is
    built now if it must be (once per machine, in the background tier's build); else, if it
    is not there yet, it is built in the background (`idle`: at the lowest priority, for a
    first call that must not wait: 0.7 s of compiling) and NumPy's loop serves this module,
    with the same bits. Where the loop would not run, it is not built."""
    if (not products or blas_threads.count() != 1
            or matmul_ufunc(wait, idle and not wait) is None):
        return loops
    out = list(loops)
    for k, key in products.items():
        if agrees(key):
            out[k] = (matmul_ufunc(), out[k][1])
    return tuple(out)
