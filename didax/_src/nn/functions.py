"""Activations and normalisations of `didax.nn`, written with didax.numpy and didax.lax.

Each follows JAX's formula, so values, dtypes (weak types included) and derivative
conventions agree with `jax.nn`: relu and relu6 have custom JVPs that give 0 at their kinks,
the softmax family subtracts a `stop_gradient`ed maximum, softplus is `logaddexp(x, 0)`.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from didax._src import dtypes
from didax._src.core import get_aval
from didax._src.eager.registry import step
from didax._src.lax import lax
from didax._src.numpy import namespace as jnp
from didax._src.numpy import reductions
from didax._src.numpy.util import (
    asarray,
    canonical_axis,
    check_arraylike,
    concrete_or_error,
    promote_args_inexact,
)
from didax._src.primitives.custom_derivatives import custom_jvp

__all__ = [
    "celu", "dot_product_attention", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu",
    "hard_swish", "hard_tanh", "identity", "leaky_relu", "log1mexp", "log_sigmoid",
    "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot", "relu", "relu6", "selu",
    "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid",
    "squareplus", "standardize", "swish", "tanh",
]


def _arrays(name, *args):
    """Array-likes as didax arrays, as JAX's jitted nn functions receive them: a Python
    scalar becomes a weakly typed array, a NumPy float64 array float32 unless x64."""
    check_arraylike(name, *args)
    return [asarray(a) for a in args]


def _zeros_where_not(pred, g):
    return lax.select_n(pred, lax.full_like(g, 0), g)


def identity(x):
    [x] = _arrays("identity", x)
    return x


# --------------------------------------------------------------------------------------
# Rectifiers


@custom_jvp
def relu(x):
    """max(x, 0), with derivative 0 at 0, as JAX takes it (see "Numerical influence of
    ReLU'(0) on backpropagation", NeurIPS 2021)."""
    [x] = _arrays("relu", x)
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: _zeros_where_not(x > 0, g))
relu = step(relu)  # (eager reverse mode: one step)


@custom_jvp
def relu6(x):
    """min(max(x, 0), 6), with derivative 0 at both kinks."""
    [x] = _arrays("relu6", x)
    return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: _zeros_where_not((x > 0) & (x < 6), g))
relu6 = step(relu6)  # (eager reverse mode: one step)


@step
def leaky_relu(x, negative_slope=1e-2):
    [x] = _arrays("leaky_relu", x)
    return jnp.where(x >= 0, x, negative_slope * x)


@step
def hard_tanh(x):
    [x] = _arrays("hard_tanh", x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@step
def elu(x, alpha=1.0):
    [x] = _arrays("elu", x)
    # The inner where keeps expm1 finite on the unused branch, so its gradient is not nan.
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0., x)))


@step
def celu(x, alpha=1.0):
    [x] = _arrays("celu", x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


@step
def selu(x):
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    [x] = _arrays("selu", x)
    return scale * elu(x, alpha)


@step
def sparse_plus(x):
    [x] = _arrays("sparse_plus", x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@step
def squareplus(x, b=4):
    x, b = _arrays("squareplus", x, b)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


# --------------------------------------------------------------------------------------
# Sigmoids and smooth activations


@step
def sigmoid(x):
    [x] = _arrays("sigmoid", x)
    return lax.logistic(x)


@step
def sparse_sigmoid(x):
    [x] = _arrays("sparse_sigmoid", x)
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@step
def hard_sigmoid(x):
    [x] = _arrays("hard_sigmoid", x)
    return relu6(x + 3.) / 6.


@step
def softplus(x):
    """log(1 + exp(x)) as logaddexp(x, 0): no overflow for large x."""
    [x] = _arrays("softplus", x)
    return jnp.logaddexp(x, 0)


@step
def log_sigmoid(x):
    [x] = _arrays("log_sigmoid", x)
    return -softplus(-x)


@step
def soft_sign(x):
    [x] = _arrays("soft_sign", x)
    return x / (jnp.abs(x) + 1)


@step
def silu(x):
    [x] = _arrays("silu", x)
    return x * sigmoid(x)


swish = silu


@step
def hard_silu(x):
    [x] = _arrays("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@step
def mish(x):
    [x] = _arrays("mish", x)
    return x * jnp.tanh(softplus(x))


def tanh(x):
    return jnp.tanh(x)


@step
def gelu(x, approximate: bool = True):
    """Gaussian error linear unit: the tanh approximation, or exactly x * Phi(x) via erfc."""
    [x] = promote_args_inexact("gelu", x)
    dtype = get_aval(x).dtype
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(dtype)
    return jnp.array(0.5 * x * lax.erfc(-x * sqrt_half), dtype=dtype)


@step
def glu(x, axis: int = -1):
    """First half of `x` along `axis`, gated by the sigmoid of the second half."""
    [x] = _arrays("glu", x)
    size = get_aval(x).shape[axis]
    if size % 2:
        raise ValueError(f"glu: the size of axis {axis} must be divisible by 2, got {size}")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


@custom_jvp
def log1mexp(x):
    """log(1 - exp(-x)) for x >= 0, switching forms at log 2 (Maechler's note)."""
    [x] = _arrays("log1mexp", x)
    return jnp.where(x < jnp.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))
log1mexp = step(log1mexp)  # (eager reverse mode: one step)


# --------------------------------------------------------------------------------------
# Normalisations over axes


@step
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over `axis`, computed around the (stop_gradient) maximum so it
    neither overflows nor underflows; `return_sign` gives (log|sum|, sign(sum)), otherwise a
    negative sum (possible with `b`) gives nan. Shared by didax.nn and didax.scipy.special."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = promote_args_inexact("logsumexp", a, b)
        a = jnp.where(b != 0, a, -np.inf)
    else:
        a, = promote_args_inexact("logsumexp", a)
    aval = get_aval(a)
    is_complex = dtypes.issubdtype(aval.dtype, np.complexfloating)
    dims = reductions._reduction_dims(aval.ndim, reductions._static_axis(axis))
    amax = jnp.max(jnp.real(a), axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(lax.select_n(jnp.isfinite(amax), lax.full_like(amax, 0), amax))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a, amax_with_dims.astype(aval.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = exp_a.sum(axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not is_complex:
        sumexp = jnp.abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(get_aval(sumexp).dtype))
    if return_sign:
        return out, sign
    if b is not None and not is_complex:
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=get_aval(out).dtype), out)
    return out


@step
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x); the maximum subtracted for stability is a constant to derivatives."""
    [x] = _arrays("log_softmax", x)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    if where is not None:
        return jnp.where(where, result, -np.inf)
    return result


@step
def softmax(x, axis=-1, where=None):
    """exp(x) normalised along `axis`; masked-out entries (`where` False) are 0."""
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


@step
def logmeanexp(x, axis=None, where=None, keepdims=False):
    """logsumexp(x) - log(n), n the number of (unmasked) entries reduced."""
    [x] = _arrays("logmeanexp", x)
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    axis = reductions._static_axis(axis)
    count = reductions._count(x, axis, keepdims, where, get_aval(lse).dtype)
    return lse - jnp.log(count)


@step
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm: str = "fast"):
    """(x - mean) / sqrt(variance + epsilon); "fast" is E[x^2] - E[x]^2 clipped at 0 (JAX's
    default), "stable" the two-pass E[(x - E[x])^2]."""
    [x] = _arrays("standardize", x)
    mean, variance, where = (None if v is None else _arrays("standardize", v)[0]
                             for v in (mean, variance, where))
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True,
                                where=where)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) \
                - jnp.square(mean)
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """x[..., None] == arange(num_classes), with the new axis at `axis`; out-of-range
    indices (negative too) give all-zero rows."""
    num_classes = operator.index(concrete_or_error(
        num_classes, "The error arose in didax.nn.one_hot argument `num_classes`."))
    if not isinstance(axis, int):
        raise NotImplementedError("didax.nn.one_hot: named axes (axis names of vmap) are not "
                                  "supported; pass an integer axis")
    x = asarray(x)
    aval = get_aval(x)
    if not dtypes.isdtype(aval.dtype, "integral"):
        warnings.warn(f"didax.nn.one_hot input should be integer-typed; got dtype={aval.dtype}",
                      DeprecationWarning, stacklevel=2)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    out_axis = canonical_axis(axis, aval.ndim + 1, "one_hot")
    lhs = lax.expand_dims(x, (out_axis,))
    rhs_shape = [1] * aval.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(aval.dtype, rhs_shape, out_axis)
    return (lhs == rhs).astype(dtype)


# --------------------------------------------------------------------------------------
# Attention


def _ensure_4d(t):
    t = asarray(t)
    missing = 4 - get_aval(t).ndim
    return lax.expand_dims(t, tuple(range(missing))) if missing > 0 else t


def _check_shape_and_dtype(t, shape, dtype, name):
    if t is None:
        return
    aval = get_aval(t)
    if aval.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {aval.ndim}")
    if dtype is not None and aval.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {aval.dtype}")
    if any(want != -1 and got != want for got, want in zip(aval.shape, shape)):
        raise ValueError(f"{name} shape should be {shape}: but got {aval.shape}")


def _attention_mask(shape, mask, is_causal, q_seqlen, kv_seqlen, local_window_size):
    """Where the logits of shape (B, K, G, T, S) are kept, or None to keep all."""
    T, S = shape[-2:]
    keep = None

    def both(a, b):
        return b if a is None else jnp.logical_and(a, b)

    if mask is not None:
        keep = both(keep, mask)
    if is_causal:
        keep = both(keep, jnp.tril(jnp.ones((T, S), dtype=bool)))
    if local_window_size is not None:
        left, right = local_window_size
        q_pos, k_pos = jnp.arange(T)[:, None], jnp.arange(S)[None, :]
        keep = both(keep, (q_pos <= k_pos + left) & (q_pos >= k_pos - right))
    if q_seqlen is not None:
        keep = both(keep, (jnp.arange(T) < q_seqlen[:, None])[:, None, None, :, None])
    if kv_seqlen is not None:
        keep = both(keep, (jnp.arange(S) < kv_seqlen[:, None])[:, None, None, None, :])
    return keep


def _grouped(t, K, G):
    """A (B, N or 1, T, S) bias or mask as (B, K or 1, G or 1, T, S), so query head
    k * G + g meets it at [:, k, g]."""
    if t is None:
        return None
    tB, tN, tT, tS = get_aval(t).shape
    if tN == 1:
        return lax.expand_dims(t, (2,))
    return jnp.reshape(t, (tB, K, G, tT, tS))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None, return_residual=False):
    """softmax(q k^T * scale + bias, masked) v over (batch B, length T or S, heads, head
    dim H) arrays, as JAX's "xla" implementation: N query heads share K key/value heads in
    groups of N / K, logits and the softmax are float32 at least, masked logits are a large
    negative number (so fully masked rows average v rather than give nan), and padded query
    positions (beyond query_seq_lengths) give 0."""
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise NotImplementedError("dot_product_attention: implementation='cudnn' (didax "
                                      "runs on the CPU; use 'xla' or None)")
        raise ValueError(f"Unsupported implementation option: {implementation}")
    output_shape = get_aval(asarray(query)).shape
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    q_seqlen = None if query_seq_lengths is None else asarray(query_seq_lengths)
    kv_seqlen = None if key_value_seq_lengths is None else asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)

    B, S, K, H = get_aval(k).shape
    k_dtype = get_aval(k).dtype
    _check_shape_and_dtype(v, [B, S, K, H], k_dtype, "value")
    _check_shape_and_dtype(q, [B, -1, -1, H], k_dtype, "query")
    _check_shape_and_dtype(mask, [-1] * 4, np.dtype(bool), "mask")
    _check_shape_and_dtype(bias, [-1] * 4, None, "bias")
    _check_shape_and_dtype(q_seqlen, [B], np.dtype("int32"), "query_seq_lengths")
    _check_shape_and_dtype(kv_seqlen, [B], np.dtype("int32"), "key_value_seq_lengths")
    _, T, N, _ = get_aval(q).shape
    if N % K:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, "
                         f"but got {N} vs {K}")
    G = N // K
    scale = 1.0 / np.sqrt(H) if scale is None else scale

    logits_dtype = jnp.promote_types(k_dtype, np.float32)
    q = jnp.reshape(q, (B, T, K, G, H))
    logits = jnp.einsum("BTKGH,BSKH->BKGTS", q, k, preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale, dtype=logits_dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, K, G)).astype(logits_dtype)
    keep = _attention_mask((T, S), _grouped(mask, K, G), is_causal, q_seqlen, kv_seqlen,
                           local_window_size)
    if keep is not None:
        # Finite in float32 too, where the softmax is computed.
        large_negative = -0.7 * min(dtypes.finfo(logits_dtype).max, dtypes.finfo(np.float32).max)
        logits = jnp.where(keep, logits, jnp.asarray(large_negative, dtype=logits_dtype))
    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(k_dtype)
    encoded = jnp.einsum("BKGTS,BSKH->BTKGH", probs, v)
    if q_seqlen is not None:
        valid = jnp.arange(T)[None, :] < q_seqlen[:, None]
        encoded = encoded * valid[:, :, None, None, None].astype(get_aval(encoded).dtype)
    encoded = jnp.reshape(encoded, output_shape)
    if not return_residual:
        return encoded
    lse = logsumexp(logits, axis=-1).astype(k_dtype)  # (B, K, G, T)
    lse = jnp.reshape(jnp.transpose(lse, (0, 3, 1, 2)), output_shape[:-1])
    return encoded, lax.stop_gradient(lse)
