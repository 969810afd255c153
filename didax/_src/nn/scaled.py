"""Block-scaled products (`jax.nn.scaled_matmul`, `scaled_dot_general`): low-precision
operands whose blocks of K elements share one scale. didax computes the product by its
definition, in float32 (operands times their repeated scales, then a batched contraction),
whatever the dtypes; the quantizing `scaled_dot_general` configurations are not implemented."""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from didax._src import dtypes
from didax._src.lax.dot import dot_general
from didax._src.numpy import einsum as _einsum
from didax._src.numpy.util import asarray, check_arraylike

__all__ = ["BlockScaleConfig", "get_scaled_dot_general_config", "scaled_matmul",
           "scaled_dot_general"]


@dataclasses.dataclass
class BlockScaleConfig:
    """How `scaled_dot_general` would quantize an operand: blocks of `block_size` elements
    in `data_type`, one `scale_type` scale each (and an optional global scale)."""
    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any | None
    infer_only: bool


def get_scaled_dot_general_config(mode: str, global_scale=None) -> BlockScaleConfig:
    """The standard configurations: 'mxfp8' (float8_e4m3fn data, float8_e8m0fnu scales per
    32 elements) and 'nvfp4' (float4_e2m1fn data, float8_e4m3fn scales per 16)."""
    if mode == "mxfp8":
        return BlockScaleConfig("mxfp8", 32, np.dtype("float8_e4m3fn").type,
                                np.dtype("float8_e8m0fnu").type, None, False)
    if mode == "nvfp4":
        scale = asarray(1.0 if global_scale is None else global_scale, np.float32)
        return BlockScaleConfig("nvfp4", 16, np.dtype("float4_e2m1fn").type,
                                np.dtype("float8_e4m3fn").type, scale, False)
    raise ValueError(f"Unsupported mode: {mode} (expected 'mxfp8' or 'nvfp4')")


def _scaled(x, scales, name):
    *lead, k = x.shape
    if scales.ndim != x.ndim or tuple(scales.shape[:-1]) != tuple(lead) or \
            scales.shape[-1] == 0 or k % scales.shape[-1]:
        raise ValueError(f"scaled_matmul: {name} of shape {x.shape} needs scales of shape "
                         f"{(*lead, 'K_s')} with K_s dividing {k}; got {scales.shape}")
    block = k // scales.shape[-1]
    x32, s32 = x.astype(np.float32), scales.astype(np.float32)
    return (x32.reshape((*lead, scales.shape[-1], block)) * s32[..., None]).reshape(x.shape)


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """einsum('BMK,BNK->BMN') of lhs and rhs, each multiplied by its scales repeated over
    blocks of K // K_s elements; computed in float32, returned in `preferred_element_type`."""
    check_arraylike("scaled_matmul", lhs, rhs, lhs_scales, rhs_scales)
    lhs, rhs, lhs_scales, rhs_scales = map(asarray, (lhs, rhs, lhs_scales, rhs_scales))
    if lhs.ndim != 3 or rhs.ndim != 3 or lhs.shape[0] != rhs.shape[0] or \
            lhs.shape[2] != rhs.shape[2]:
        raise ValueError(f"scaled_matmul expects lhs (B, M, K) and rhs (B, N, K); got "
                         f"{lhs.shape} and {rhs.shape}")
    a, b = _scaled(lhs, lhs_scales, "lhs"), _scaled(rhs, rhs_scales, "rhs")
    out = _einsum.einsum("bmk,bnk->bmn", a, b, preferred_element_type=np.float32)
    return out.astype(dtypes.canonicalize_dtype(preferred_element_type))


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs=None, implementation=None):
    """`lax.dot_general` with block-scaled quantization of its operands by `configs`; with
    `configs=None` it is dot_general itself."""
    if configs is not None:
        raise NotImplementedError(
            "scaled_dot_general with quantization configs (mxfp8/nvfp4 block quantization "
            "of the operands and gradients) is not implemented in didax; configs=None computes "
            "the plain dot_general, and scaled_matmul takes operands already quantized")
    return dot_general(asarray(lhs), asarray(rhs), dimension_numbers,
                       preferred_element_type=dtypes.canonicalize_dtype(preferred_element_type))
