"""Weight initializers, as `jax.nn.initializers`: each factory returns
`init(key, shape, dtype=None)`. With didax.random's bit-identical PRNG, the same key gives the
same weights as JAX.

`out_sharding` is accepted for compatibility and has no effect (there is one device).
"""
from __future__ import annotations

import math
import operator
from typing import Protocol, runtime_checkable

import numpy as np

from didax._src import dtypes, random
from didax._src.lax.control_flow.scan import scan
from didax._src.numpy import namespace as jnp

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
    "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
    "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
    "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]


@runtime_checkable
class Initializer(Protocol):
    def __call__(self, key, shape, dtype=None, out_sharding=None):
        raise NotImplementedError


def _dtype(dtype):
    return dtypes.default_float_dtype() if dtype is None else dtype


def _shape(shape):
    if isinstance(shape, int) or not np.iterable(shape):
        shape = (shape,)
    return tuple(operator.index(d) for d in shape)


def zeros(key, shape, dtype=None, out_sharding=None):
    return jnp.zeros(shape, _dtype(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    return jnp.ones(shape, _dtype(dtype))


def constant(value, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        return jnp.full(shape, value, dtype=_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """Uniform on [0, scale)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """stddev times a standard normal truncated to (lower, upper) (so the spread is less than
    stddev)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) \
            * jnp.array(stddev, dtype)
    return init


# --------------------------------------------------------------------------------------
# Variance scaling


def _size(shape, axes):
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): the in and out sizes times the receptive field (every dimension
    that is neither in, out nor batch, e.g. a convolution's window)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         f"weights tensor with default in_axis. Must be at least 2D or specify "
                         f"in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive_field_size, out_size * receptive_field_size


def _real_dtype(dtype):
    return np.array(0, dtype).real.dtype


def _complex_uniform(key, shape, dtype):
    """Uniform on the disc of radius sqrt(2) (so E|z|^2 = 1)."""
    key_r, key_theta = random.split(key)
    real_dtype = _real_dtype(dtype)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real_dtype)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """A complex standard normal conditioned on |z| < upper, by inverting |z|'s CDF."""
    key_r, key_theta = random.split(key)
    real_dtype = _real_dtype(dtype)
    t = ((1 - jnp.exp(jnp.array(-(upper ** 2), dtype)))
         * random.uniform(key_r, shape, real_dtype).astype(dtype))
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Samples with variance scale / n, n = fan_in, fan_out, their mean ("fan_avg") or
    geometric mean ("fan_geo_avg"), from a truncated normal (rescaled so the variance is
    exact), a normal or a uniform distribution."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _shape(shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dtype)
        is_real = dtypes.issubdtype(dtype, np.floating)
        if distribution == "truncated_normal":
            if is_real:
                # The stddev of a standard normal truncated to (-2, 2).
                stddev = jnp.sqrt(variance) / jnp.array(.87962566103423978, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            # The stddev of a complex standard normal truncated to |z| < 2.
            stddev = jnp.sqrt(variance) / jnp.array(.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if distribution == "uniform":
            if is_real:
                return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
            return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
        raise ValueError(
            f"invalid distribution for variance scaling initializer: {distribution}")
    return init


def _variance_scaling_factory(scale, mode, distribution, name):
    def factory(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis,
                                out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)
    factory.__name__ = factory.__qualname__ = name
    return factory


glorot_uniform = _variance_scaling_factory(1.0, "fan_avg", "uniform", "glorot_uniform")
glorot_normal = _variance_scaling_factory(1.0, "fan_avg", "truncated_normal", "glorot_normal")
lecun_uniform = _variance_scaling_factory(1.0, "fan_in", "uniform", "lecun_uniform")
lecun_normal = _variance_scaling_factory(1.0, "fan_in", "truncated_normal", "lecun_normal")
he_uniform = _variance_scaling_factory(2.0, "fan_in", "uniform", "he_uniform")
he_normal = _variance_scaling_factory(2.0, "fan_in", "truncated_normal", "he_normal")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


# --------------------------------------------------------------------------------------
# Orthogonal matrices


def _orthonormal_columns(z):
    """The Q of z = QR whose R has a positive diagonal: unique, so it is the matrix JAX
    gets from LAPACK's QR after fixing signs. Classical Gram-Schmidt applied twice per
    column (CGS2) is orthogonal to working precision; the loop is a scan, so it traces."""
    cols = z.shape[1]

    def add_column(q, index_and_column):
        j, v = index_and_column
        for _ in range(2):
            v = v - q @ (jnp.conj(q).T @ v)
        v = v / jnp.linalg.norm(v)
        return q + v[:, None] * (jnp.arange(cols) == j), None

    q, _ = scan(add_column, jnp.zeros_like(z), (jnp.arange(cols), z.T))
    return q


def _random_orthogonal(key, n, m, dtype):
    """An n x m matrix with orthonormal rows (n <= m) or columns (m <= n), Haar distributed
    (Mezzadri 2007): as jax.random.orthogonal."""
    q = _orthonormal_columns(random.normal(key, (max(n, m), min(n, m)), dtype))
    return q.T if n < m else q


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """scale times a (semi-)orthogonal matrix: the weights reshaped to (rows, shape[column_axis])
    have orthonormal columns, or rows when there are fewer rows."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _shape(shape)
        dtype = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = _random_orthogonal(key, n_rows, n_cols, dtype)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """A convolution kernel that is an orthogonal matrix at the window's centre and 0
    elsewhere (Xiao et al. 2018), so deep CNNs start norm preserving."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _shape(shape)
        dtype = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho_matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(
            key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[centre + (Ellipsis,)].set(ortho_matrix)
    return init
