"""Image patches and unshared (locally connected) convolutions, as compositions of
`conv_general_dilated` and `dot_general`.

`conv_general_dilated_patches` convolves with a constant kernel of ones and zeros that copies
each input value of the receptive field into its own output channel (one feature group per
input channel), so the output's feature dimension holds the flattened patches, ordered channel
first and then the spatial dimensions in rhs_spec's order. `conv_general_dilated_local` takes
those patches and contracts them at each output location with that location's own kernel.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from didax._src.core import get_aval
from didax._src.lax.conv import conv_dimension_numbers, conv_general_dilated
from didax._src.lax.dot import dot_general
from didax._src.lax.shape import transpose


def _identity_kernel(channels: int, filter_shape, rhs_spec, dtype) -> np.ndarray:
    """The (O, I, *filter) kernel, laid out as rhs_spec says, with O = channels * patch size
    and I = 1: output channel c * size + p copies the p-th element of the window."""
    size = math.prod(filter_shape)
    eye = np.eye(size, dtype=dtype).reshape((size, 1, *filter_shape))
    canonical = np.concatenate([eye] * channels, axis=0)
    return canonical.transpose(np.argsort(rhs_spec))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The receptive field of each output location of `conv_general_dilated`, flattened into
    the output's feature dimension (size: input channels times the window size)."""
    aval = get_aval(lhs)
    filter_shape = tuple(operator.index(d) for d in filter_shape)
    if len(filter_shape) != len(aval.shape) - 2:
        raise TypeError(f"conv_general_dilated_patches: filter_shape {filter_shape} must have "
                         f"one entry per spatial dimension of lhs of shape {aval.shape} "
                         f"({len(aval.shape) - 2}).")
    dnums = conv_dimension_numbers(aval.shape, aval.shape, dimension_numbers)
    channels = aval.shape[dnums.lhs_spec[1]]
    kernel = _identity_kernel(channels, filter_shape, dnums.rhs_spec, aval.dtype)
    return conv_general_dilated(lhs, kernel, window_strides, padding, lhs_dilation,
                                rhs_dilation, dnums, feature_group_count=channels,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """A convolution whose kernel differs at each output location: rhs's spatial dimensions
    index output locations, and its input feature dimension holds flattened patches (channel
    first, then the window in rhs_spec's order)."""
    lhs_aval, rhs_aval = get_aval(lhs), get_aval(rhs)
    dnums = conv_dimension_numbers(lhs_aval.shape, rhs_aval.shape, dimension_numbers)
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dnums, precision)
    out_spec, rhs_spec = dnums.out_spec, dnums.rhs_spec
    patches_shape = get_aval(patches).shape
    want = tuple(patches_shape[d] for d in (out_spec[1], *out_spec[2:]))
    have = tuple(rhs_aval.shape[d] for d in (rhs_spec[1], *rhs_spec[2:]))
    if want != have:
        raise TypeError(f"conv_general_dilated_local: rhs of shape {rhs_aval.shape} must have "
                        f"an input feature dimension of size {want[0]} (input channels times "
                        f"the window {tuple(filter_shape)}) and spatial dimensions {want[1:]} "
                        f"(the output locations), got {have[0]} and {have[1:]}.")
    # Batch over the output locations, contract the patches: (*spatial, N, O).
    out = dot_general(patches, rhs, (((out_spec[1],), (rhs_spec[1],)),
                                     (tuple(out_spec[2:]), tuple(rhs_spec[2:]))), precision)
    nspatial = len(out_spec) - 2
    canonical = (nspatial, nspatial + 1, *range(nspatial))  # -> (N, O, *spatial)
    return transpose(out, tuple(canonical[i] for i in np.argsort(out_spec)))
