"""didax.image: `resize`, `scale_and_translate` and `ResizeMethod`, as `jax.image` has them.

JAX's algorithm, ported: for each resized axis a dense weight matrix (input size by output
size) holds the kernel (triangle, Keys cubic, OpenCV cubic, Lanczos 3 or 5, or the area
overlap), widened when downsampling with antialiasing, evaluated between the output pixel
centres mapped back to the input and the input pixels, then normalized; the image is
contracted with each matrix in one einsum. 'nearest' picks the input pixel under each output
pixel centre, computing the offsets in float32 as JAX does. With 'cubic-pytorch' and no
antialiasing the kernel reaches past the edges and its weight is moved onto the edge pixels.
"""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import didax.numpy as jnp
from didax._src.lax import shape as lax_shape
from didax._src.lax.dot import Precision
from didax._src.numpy.util import concrete_or_error, promote_dtypes_inexact

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


def _fill_lanczos_kernel(radius, x):
    y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi**2 * x**2, 1)), 1)
    return jnp.where(x > radius, 0.0, out)


def _fill_keys_cubic_kernel(x):
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = jnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _fill_opencv_cubic_kernel(x):
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _fill_triangle_kernel(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


_area_kernel = object()


def compute_weight_mat(
    input_size: int,
    output_size: int,
    scale,
    translation,
    kernel: Callable,
    antialias: bool,
    edge_padding: bool,
    radius: int | None,
):
    dtype = jnp.result_type(scale, translation)
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0

    sample_f = (
        (jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    )

    if edge_padding:
        assert radius is not None
        if antialias:
            concrete_scale = concrete_or_error(
                scale, "Antialiasing with edge padding requires a static scale."
            )
            inv_scale_val = 1.0 / float(concrete_scale)
            kernel_scale_val = max(inv_scale_val, 1.0)
            k = math.ceil(radius * kernel_scale_val)
        else:
            k = radius
    else:
        k = 0

    expanded_indices = jnp.arange(-k, input_size + k, dtype=dtype)
    if kernel is _area_kernel:
        L_i = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        R_i = L_i + inv_scale

        L_j = jnp.arange(input_size, dtype=dtype)
        R_j = L_j + 1.0

        weights = jnp.maximum(
            0.0,
            jnp.minimum(R_i[np.newaxis, :], R_j[:, np.newaxis])
            - jnp.maximum(L_i[np.newaxis, :], L_j[:, np.newaxis]),
        )
    else:
        x = jnp.abs(sample_f[np.newaxis, :] - expanded_indices[:, np.newaxis])
        x = x / kernel_scale
        weights = kernel(x)

    if edge_padding:
        clamped_indices = jnp.clip(expanded_indices.astype(jnp.int32), 0, input_size - 1)
        output_indices = jnp.arange(output_size)
        weight_mat = jnp.zeros((input_size, output_size), dtype=dtype)
        output_indices_expanded = lax_shape.broadcast_in_dim(
            output_indices, (expanded_indices.shape[0], output_size), (1,)
        )
        weight_mat = weight_mat.at[clamped_indices[:, np.newaxis], output_indices_expanded].add(
            weights
        )
        total_weight_sum = jnp.sum(weight_mat, axis=0, keepdims=True)
        weights = jnp.where(
            jnp.abs(total_weight_sum) > 1000.0 * float(np.finfo(np.float32).eps),
            jnp.divide(weight_mat, jnp.where(total_weight_sum != 0, total_weight_sum, 1)),
            0,
        )
    else:
        total_weight_sum = jnp.sum(weights, axis=0, keepdims=True)
        weights = jnp.where(
            jnp.abs(total_weight_sum) > 1000.0 * float(np.finfo(np.float32).eps),
            jnp.divide(weights, jnp.where(total_weight_sum != 0, total_weight_sum, 1)),
            0,
        )

        input_size_minus_0_5 = input_size - 0.5
        weights = jnp.where(
            jnp.logical_and(sample_f >= -0.5, sample_f <= input_size_minus_0_5)[np.newaxis, :],
            weights,
            0,
        )

    return weights


def _scale_and_translate(
    x,
    output_shape: tuple,
    spatial_dims: Sequence[int],
    scale,
    translation,
    kernel,
    antialias: bool,
    precision,
    edge_padding: bool = False,
    radius: int | None = None,
):
    input_shape = x.shape
    assert len(input_shape) == len(output_shape)
    assert len(spatial_dims) == len(scale)
    assert len(spatial_dims) == len(translation)
    if len(spatial_dims) == 0:
        return x
    contractions = []
    in_indices = list(range(len(output_shape)))
    out_indices = list(range(len(output_shape)))
    for i, d in enumerate(spatial_dims):
        d = d % x.ndim
        m = input_shape[d]
        n = output_shape[d]
        w = compute_weight_mat(
            m,
            n,
            scale[i],
            translation[i],
            kernel,
            antialias,
            edge_padding=edge_padding,
            radius=radius,
        ).astype(x.dtype)
        contractions.append(w)
        contractions.append([d, len(output_shape) + i])
        out_indices[d] = len(output_shape) + i
    contractions.append(out_indices)
    return jnp.einsum(x, in_indices, *contractions, precision=precision)


class ResizeMethod(enum.Enum):
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str):
        if s == "nearest":
            return ResizeMethod.NEAREST
        if s in ["linear", "bilinear", "trilinear", "triangle"]:
            return ResizeMethod.LINEAR
        elif s == "lanczos3":
            return ResizeMethod.LANCZOS3
        elif s == "lanczos5":
            return ResizeMethod.LANCZOS5
        elif s in ["cubic", "bicubic", "tricubic"]:
            return ResizeMethod.CUBIC
        elif s in ["cubic-pytorch", "bicubic-pytorch"]:
            return ResizeMethod.CUBIC_PYTORCH
        elif s == "area":
            return ResizeMethod.AREA
        else:
            raise ValueError(f'Unknown resize method "{s}"')


_kernels = {
    ResizeMethod.LINEAR: (1, _fill_triangle_kernel),
    ResizeMethod.LANCZOS3: (3, lambda x: _fill_lanczos_kernel(3.0, x)),
    ResizeMethod.LANCZOS5: (5, lambda x: _fill_lanczos_kernel(5.0, x)),
    ResizeMethod.CUBIC: (2, _fill_keys_cubic_kernel),
    ResizeMethod.CUBIC_PYTORCH: (2, _fill_opencv_cubic_kernel),
    ResizeMethod.AREA: (1, _area_kernel),
}


def scale_and_translate(
    image,
    shape: tuple,
    spatial_dims: Sequence[int],
    scale,
    translation,
    method: str | ResizeMethod,
    antialias: bool = True,
    precision=Precision.HIGHEST,
):
    """Scales by `scale` and shifts by `translation` the `spatial_dims` of `image`, sampled
    into `shape` with `method` (any but 'nearest')."""
    shape = tuple(operator.index(d) for d in shape)
    image = jnp.asarray(image)
    if len(shape) != image.ndim:
        msg = (
            "shape must have length equal to the number of dimensions of x; "
            f" {shape} vs {image.shape}"
        )
        raise ValueError(msg)
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError(
            "Nearest neighbor resampling is not currently supported for scale_and_translate."
        )
    assert isinstance(method, ResizeMethod)

    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _kernels[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    (image,) = promote_dtypes_inexact(image)
    scale, translation = promote_dtypes_inexact(scale, translation)
    return _scale_and_translate(
        image,
        shape,
        spatial_dims,
        scale,
        translation,
        kernel,
        antialias,
        precision,
        edge_padding=edge_padding,
        radius=radius,
    )


def _resize_nearest(x, output_shape: tuple):
    input_shape = x.shape
    assert len(input_shape) == len(output_shape)
    spatial_dims = tuple(i for i in range(len(input_shape)) if input_shape[i] != output_shape[i])
    for d in spatial_dims:
        m = input_shape[d]
        n = output_shape[d]
        offsets = (jnp.arange(n, dtype=np.float32) + 0.5) * m / n
        offsets = jnp.floor(offsets.astype(np.float32)).astype(np.int32)
        indices: list[Any] = [slice(None)] * len(input_shape)
        indices[d] = offsets
        x = x[tuple(indices)]
    return x


def _resize(image, shape: tuple, method: str | ResizeMethod, antialias: bool, precision):
    image = jnp.asarray(image)
    if len(shape) != image.ndim:
        msg = (
            "shape must have length equal to the number of dimensions of x; "
            f" {shape} vs {image.shape}"
        )
        raise ValueError(msg)
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    assert isinstance(method, ResizeMethod)

    (image,) = promote_dtypes_inexact(image)
    spatial_dims = tuple(i for i in range(len(shape)) if image.shape[i] != shape[i])
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _kernels[method]
    scale = [1.0 if (shape[d] == 0) else shape[d] / image.shape[d] for d in spatial_dims]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    return _scale_and_translate(
        image,
        shape,
        spatial_dims,
        scale,
        [0.0] * len(spatial_dims),
        kernel,
        antialias,
        precision,
        edge_padding=edge_padding,
        radius=radius,
    )


def resize(
    image,
    shape: tuple,
    method: str | ResizeMethod,
    antialias: bool = True,
    precision=Precision.HIGHEST,
):
    """Resizes `image` to `shape` with `method` (a ResizeMethod or its name), antialiasing
    when downsampling unless told not to."""
    return _resize(image, tuple(operator.index(d) for d in shape), method, antialias, precision)
