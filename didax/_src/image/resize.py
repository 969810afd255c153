"""didax.image: resizing and scale-and-translate resampling of n-d images.

Pixels are half-centred: pixel i covers [i, i + 1] with its centre at i + 0.5. Along each
resampled axis an output pixel j samples the input at x_j = (j + 0.5 - translation) / scale
(the inverse warp), and its value is a weighted sum over the input pixels, with weights
k((i + 0.5 - x_j) * s) / (their sum) for the method's kernel k, where s = scale when
downsampling with antialiasing (the kernel widened by 1/scale, a low-pass filter) and 1
otherwise. Output pixels whose sample falls outside the input are zero. Each axis is one
product with a (out, in) weight matrix, so the whole is differentiable in the image, the
scale and the translation.
"""
from __future__ import annotations

import enum
import operator

import numpy as np

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import check_arraylike

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """The resampling kernels; `from_string` accepts the usual aliases."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        key = s.lower()
        for method, names in _ALIASES.items():
            if key in names:
                return method
        raise ValueError(f"Unknown resize method: {s!r}; use one of "
                         f"{sorted(n for names in _ALIASES.values() for n in names)}")


_ALIASES = {
    ResizeMethod.NEAREST: ("nearest",),
    ResizeMethod.LINEAR: ("linear", "bilinear", "trilinear", "triangle"),
    ResizeMethod.LANCZOS3: ("lanczos3",),
    ResizeMethod.LANCZOS5: ("lanczos5",),
    ResizeMethod.CUBIC: ("cubic", "bicubic", "tricubic"),
    ResizeMethod.CUBIC_PYTORCH: ("cubic-pytorch", "bicubic-pytorch"),
    ResizeMethod.AREA: ("area",),
}


def _method(method) -> ResizeMethod:
    if isinstance(method, ResizeMethod):
        return method
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    raise TypeError(f"method must be a ResizeMethod or a string, got {type(method).__name__}")


# -- kernels: functions of the distance (in input pixels, possibly scaled) ------------------

def _triangle(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


def _keys_cubic(a):
    def kernel(x):
        x = jnp.abs(x)
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return jnp.where(x < 1, near, jnp.where(x < 2, far, 0))
    return kernel


def _lanczos(radius):
    def kernel(x):
        return jnp.where(jnp.abs(x) < radius, jnp.sinc(x) * jnp.sinc(x / radius), 0)
    return kernel


_KERNELS = {
    ResizeMethod.LINEAR: _triangle,
    ResizeMethod.CUBIC: _keys_cubic(-0.5),
    ResizeMethod.CUBIC_PYTORCH: _keys_cubic(-0.75),  # without antialiasing; CUBIC with it
    ResizeMethod.LANCZOS3: _lanczos(3.0),
    ResizeMethod.LANCZOS5: _lanczos(5.0),
}


def _weights(method, in_size, out_size, scale, translation, antialias, dtype):
    """The (out_size, in_size) resampling matrix of one axis."""
    centres = jnp.arange(out_size, dtype=dtype) + 0.5
    sample = (centres - translation) / scale  # where each output pixel samples the input
    pixels = jnp.arange(in_size, dtype=dtype)
    if method is ResizeMethod.AREA:
        # the overlap of output pixel j's footprint [x(j), x(j + 1)] with input pixel i
        start = (centres - 0.5 - translation) / scale
        stop = start + 1 / scale
        w = jnp.maximum(0, jnp.minimum(stop[:, None], pixels[None, :] + 1)
                        - jnp.maximum(start[:, None], pixels[None, :]))
    elif method is ResizeMethod.CUBIC_PYTORCH and not antialias:
        # edge padding: taps beyond the border read the border pixel, so samples up to two
        # pixels outside the input take the border's values rather than zero
        reach = 2
        virtual = jnp.arange(-reach, in_size + reach, dtype=dtype)
        taps = _KERNELS[method](virtual[None, :] + 0.5 - sample[:, None])
        fold = np.zeros((in_size + 2 * reach, in_size))
        fold[np.arange(in_size + 2 * reach),
             np.clip(np.arange(-reach, in_size + reach), 0, in_size - 1)] = 1
        w = taps @ jnp.asarray(fold, dtype)
    else:
        widen = jnp.minimum(scale, 1) if antialias else jnp.ones((), dtype)
        kernel = _KERNELS[ResizeMethod.CUBIC if method is ResizeMethod.CUBIC_PYTORCH
                          else method]
        w = kernel((pixels[None, :] + 0.5 - sample[:, None]) * widen)
    total = jnp.sum(w, axis=1, keepdims=True)
    tiny = 1000 * jnp.finfo(dtype).eps
    w = jnp.where(jnp.abs(total) > tiny, w / jnp.where(jnp.abs(total) > tiny, total, 1), 0)
    if method is ResizeMethod.CUBIC_PYTORCH and not antialias:
        return w
    inside = (sample >= 0) & (sample <= in_size)
    return jnp.where(inside[:, None], w, 0)


def _float_dtype(image):
    return image.dtype if jnp.issubdtype(image.dtype, jnp.inexact) else jnp.result_type(float)


def _check_shape(name, image, shape):
    shape = tuple(operator.index(d) for d in shape)
    if len(shape) != image.ndim:
        raise ValueError(f"{name}: shape must have one entry per image dimension: got shape "
                         f"{shape} for an image of shape {image.shape}")
    if any(d < 0 for d in shape):
        raise ValueError(f"{name}: shape must be nonnegative, got {shape}")
    return shape


def _resample(image, shape, axes, scales, translations, method, antialias, precision):
    dtype = _float_dtype(image)
    out = image.astype(dtype)
    for axis, scale, shift in zip(axes, scales, translations):
        if image.shape[axis] == 0 or shape[axis] == 0:
            raise ValueError(f"cannot resample an empty axis: {image.shape} -> {shape}")
        real = jnp.finfo(dtype).dtype
        w = _weights(method, image.shape[axis], shape[axis], jnp.asarray(scale, real),
                     jnp.asarray(shift, real), antialias, real).astype(dtype)
        moved = jnp.moveaxis(out, axis, -1)
        out = jnp.moveaxis(jnp.matmul(moved, w.T, precision=precision), -1, axis)
    return out


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias=True, precision="highest"):
    """image resampled to `shape`, mapping input location x to x * scale + translation
    along each of `spatial_dims`; samples falling outside the input give zero."""
    check_arraylike("scale_and_translate", image)
    image = jnp.asarray(image)
    shape = _check_shape("scale_and_translate", image, shape)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate does not support the nearest method; use "
                         "LINEAR, CUBIC, CUBIC_PYTORCH, LANCZOS3, LANCZOS5 or AREA")
    spatial_dims = tuple(operator.index(d) % image.ndim for d in spatial_dims)
    scale = jnp.asarray(scale)
    translation = jnp.asarray(translation)
    if scale.shape != (len(spatial_dims),) or translation.shape != (len(spatial_dims),):
        raise ValueError(f"scale_and_translate: scale and translation need one entry per "
                         f"spatial dimension ({len(spatial_dims)}), got shapes {scale.shape} "
                         f"and {translation.shape}")
    for d in range(image.ndim):
        if d not in spatial_dims and shape[d] != image.shape[d]:
            raise ValueError(f"scale_and_translate: dimension {d} is not spatial, so its "
                             f"size cannot change ({image.shape[d]} -> {shape[d]})")
    return _resample(image, shape, spatial_dims, [scale[i] for i in range(len(spatial_dims))],
                     [translation[i] for i in range(len(spatial_dims))], method, antialias,
                     precision)


def _resize_nearest(image, shape):
    out = image
    for axis, (n_in, n_out) in enumerate(zip(image.shape, shape)):
        if n_in == n_out:
            continue
        src = np.floor((np.arange(n_out) + 0.5) * (n_in / n_out)).astype(np.int64)
        out = jnp.take(out, np.clip(src, 0, n_in - 1), axis=axis)
    return out


def resize(image, shape, method, antialias=True, precision="highest"):
    """image resampled to `shape` (every dimension, batch and channel ones included: leave
    those unchanged) with the method's kernel."""
    check_arraylike("resize", image)
    image = jnp.asarray(image)
    shape = _check_shape("resize", image, shape)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    axes = [d for d in range(image.ndim) if shape[d] != image.shape[d]]
    if not axes:
        return image.astype(_float_dtype(image))
    scales = [shape[d] / image.shape[d] for d in axes]
    return _resample(image, shape, axes, scales, [0.0] * len(axes), method, antialias,
                     precision)
