"""didax's own float32 exp and tanh: one algorithm, written twice (as C for the native tier
and the eager kernels, as NumPy operations for when there is no C), giving the same bits.

Why: NumPy's float32 exp and tanh are SIMD loops chosen by the CPU (AVX-512, AVX2, SSE,
Arm), whose results differ by an ulp between them, and a compiled loop cannot call them
element by element, so a fused native loop left its block of elements to NumPy's loop and
was bound by its speed (the fused reduction spent 80 % of its time there on an AVX2
machine). These algorithms use only IEEE-754 operations correctly rounded everywhere
(products, sums, quotients, comparisons, bit moves), in one fixed order, never contracted
into fused multiply-adds: every CPU, every tier and every thread count computes the same
bits, and a compiled loop inlines them (gcc vectorizes them).

exp(x) = 2^k (1 + r + r^2 q(r)), where k = round(x / ln 2) (by the 1.5 * 2^23 shifter),
r = x - k ln 2 (ln 2 in two parts, the first with trailing zeros so that k * it is exact),
and q a degree-4 polynomial (a minimax fit of (e^r - 1 - r) / r^2 on |r| <= ln(2) / 2),
evaluated in Estrin's scheme. x is clamped above at 89 (beyond which e^x overflows), and
2^k is applied as two factors so that results near the overflow and in the subnormal range
round once. Below -103.97208 (EXP_ZERO), where the result rounds to 0, the lane computes
e^0 and 0 is selected: a product underflowing to 0 or a subnormal takes a microcode assist
on Intel CPUs (about 150 cycles), and a causal attention's masked half of its softmax
took 5 times as long as the other (results in the subnormal range, above -103.97 and
below -87.34, still do). Largest error 1.04 ulp (NumPy's AVX2 loop: 2.5).

tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2 |x|) = 2^k (1 + p) by the same core as exp
(|x| clamped to 9.125, where tanh rounds to 1), computed as ((1 - 2^k) - 2^k p) /
((1 + 2^k) + 2^k p): 1 - 2^k and 1 + 2^k are exact, so there is no cancellation near 0
and one formula serves the whole range. Largest error 2.08 ulp, over every float32 (glibc's
tanhf: 2, NumPy's AVX2 loop: 1.37). A polynomial below 0.625 and this formula above, both
computed for every element and one selected, was more accurate (1.53 ulp) and 9 % slower
in the fused reduction's loop (benchmarks/fused_reduction.py), whose time it bounds.

NaN in gives that NaN out (quieted), signed zeros and infinities as IEEE says.
"""
from __future__ import annotations

import numpy as np

F32 = np.float32

# (name, value) of each constant, in the order the C source declares them.
_CONSTANTS = (
    ("EXP_ZERO", float.fromhex("-0x1.9fe368p+6")), ("EXP_HI", 89.0),
    ("LOG2E", float.fromhex("0x1.715476p+0")), ("SHIFTER", float.fromhex("0x1.8p+23")),
    ("LN2_HI", float.fromhex("0x1.62e4p-1")), ("LN2_LO", float.fromhex("0x1.7f7d1cp-20")),
    ("Q0", float.fromhex("0x1.fffffep-2")), ("Q1", float.fromhex("0x1.5554e2p-3")),
    ("Q2", float.fromhex("0x1.5557e4p-5")), ("Q3", float.fromhex("0x1.120868p-7")),
    ("Q4", float.fromhex("0x1.6a2418p-10")),
    ("TANH_ONE", 9.125),
)
_C = {name: F32(value) for name, value in _CONSTANTS}
assert all(float(_C[name]) == value for name, value in _CONSTANTS)  # (exact in float32)
_SHIFTER_BITS = int(_C["SHIFTER"].view(np.uint32))


def _c_constant(value: float) -> str:
    # (numerics sits below the compiler's layer, so not native.rules' c_constant)
    return f"({float(value).hex()}f)"


C_SOURCE = "".join(
    f"#define DIDAX_F32_{name} {_c_constant(value)}\n" for name, value in _CONSTANTS) + f"""\
static inline float didax_f32_of_bits(npy_uint32 u) {{
    union {{ npy_uint32 u; float f; }} v = {{u}};
    return v.f;
}}
static inline npy_uint32 didax_bits_of_f32(float f) {{
    union {{ float f; npy_uint32 u; }} v = {{f}};
    return v.u;
}}
/* r + r^2 q(r) for x = k ln 2 + r (e^x = 2^k (1 + it)); *k receives k. */
static inline float didax_expm1_core_f32(float x, npy_uint32 *k) {{
    const float t = x * DIDAX_F32_LOG2E + DIDAX_F32_SHIFTER;
    *k = didax_bits_of_f32(t) - {_SHIFTER_BITS:#x}u;
    const float n = t - DIDAX_F32_SHIFTER;
    float r = x - n * DIDAX_F32_LN2_HI;
    r = r - n * DIDAX_F32_LN2_LO;
    const float r2 = r * r;
    const float a = r * DIDAX_F32_Q1 + DIDAX_F32_Q0, b = r * DIDAX_F32_Q3 + DIDAX_F32_Q2;
    const float q = a + r2 * (b + r2 * DIDAX_F32_Q4);
    return r2 * q + r;
}}
/* 2^k (1 + r + r^2 q(r)) for x = k ln 2 + r; *k receives k. */
static inline float didax_exp_core_f32(float x, npy_uint32 *k) {{
    return didax_expm1_core_f32(x, k) + 1.0f;
}}
static inline float didax_exp_f32(float x) {{
    const int zero = x < DIDAX_F32_EXP_ZERO;
    float xc = didax_select_f32(zero, 0.0f, x);
    xc = didax_select_f32(xc > DIDAX_F32_EXP_HI, DIDAX_F32_EXP_HI, xc);
    npy_uint32 k;
    const float p = didax_exp_core_f32(xc, &k);
    const npy_uint32 k1 = (npy_uint32)((npy_int32)k >> 1), k2 = k - k1;
    return didax_select_f32(
        zero, 0.0f,
        p * didax_f32_of_bits((k1 + 127u) << 23) * didax_f32_of_bits((k2 + 127u) << 23));
}}
static inline float didax_tanh_f32(float x) {{
    const float a = fabsf(x);
    const float y = didax_select_f32(a > DIDAX_F32_TANH_ONE, DIDAX_F32_TANH_ONE, a) * -2.0f;
    npy_uint32 k;
    const float p = didax_expm1_core_f32(y, &k);
    const float s = didax_f32_of_bits((k + 127u) << 23), sp = s * p;
    return copysignf(((1.0f - s) - sp) / ((1.0f + s) + sp), x);
}}
"""


def _expm1_core(x):
    """The NumPy twin of didax_expm1_core_f32 on a 1-d float32 array: (p, k)."""
    t = x * _C["LOG2E"]
    t += _C["SHIFTER"]
    k = t.view(np.uint32) - np.uint32(_SHIFTER_BITS)
    n = t - _C["SHIFTER"]
    r = x - n * _C["LN2_HI"]
    r -= n * _C["LN2_LO"]
    r2 = r * r
    a = r * _C["Q1"]
    a += _C["Q0"]
    b = r * _C["Q3"]
    b += _C["Q2"]
    c = r2 * _C["Q4"]
    b += c
    b *= r2
    a += b
    a *= r2
    a += r
    return a, k


def _exp_core(x):
    """The NumPy twin of didax_exp_core_f32 on a 1-d float32 array: (p, k)."""
    p, k = _expm1_core(x)
    p += F32(1)
    return p, k


def _bits(u):
    return u.view(F32)


def exp(x) -> np.ndarray:
    """didax_exp_f32 of float32 `x`, by NumPy operations (a new array of x's shape)."""
    x = np.asarray(x, F32)
    flat = x.reshape(-1)
    with np.errstate(all="ignore"):
        zero = flat < _C["EXP_ZERO"]
        xc = np.where(zero, F32(0), flat)
        np.minimum(xc, _C["EXP_HI"], out=xc)
        p, k = _exp_core(xc)
        k1 = (k.view(np.int32) >> 1).view(np.uint32)
        k2 = k - k1
        p *= _bits((k1 + np.uint32(127)) << np.uint32(23))
        p *= _bits((k2 + np.uint32(127)) << np.uint32(23))
        p[zero] = 0
    return p.reshape(x.shape)


def tanh(x) -> np.ndarray:
    """didax_tanh_f32 of float32 `x`, by NumPy operations (a new array of x's shape)."""
    x = np.asarray(x, F32)
    flat = x.reshape(-1)
    with np.errstate(all="ignore"):
        y = np.abs(flat)
        np.minimum(y, _C["TANH_ONE"], out=y)
        y *= F32(-2)
        p, k = _expm1_core(y)
        s = _bits((k + np.uint32(127)) << np.uint32(23))
        p *= s
        out = F32(1) - s
        out -= p
        s += F32(1)
        s += p
        out /= s
        np.copysign(out, flat, out=out)
    return out.reshape(x.shape)
