"""A small neural-network library of `(init_fun, apply_fun)` pairs, as `jax.example_libraries.stax`.

A layer is a pair: `init_fun(rng, input_shape) -> (output_shape, params)` and
`apply_fun(params, inputs, **kwargs) -> outputs`. Combinators (`serial`, `parallel`) build
networks out of layers. Kept behaviourally identical to JAX's (same PRNG splits, same
initializers), so the same key gives the same parameters; programs written for JAX's stax run
unchanged.
"""
from __future__ import annotations

import functools
import math

import didax.numpy as jnp
from didax import lax, random
from didax.nn import (  # noqa: F401  (re-exported, as stax does)
    elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus, standardize,
)
from didax.nn.initializers import glorot_normal, normal, ones, zeros  # noqa: F401

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


# --------------------------------------------------------------------------------------
# Layers with parameters


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: `inputs @ W + b`."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _conv_layer(shape_fn, conv_fn):
    """Builds GeneralConv and GeneralConvTranspose, which differ only in their shape rule and
    the convolution they apply."""
    def layer(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
              W_init=None, b_init=normal(1e-6)):
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        strides = strides or (1,) * len(filter_shape)
        W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

        def init_fun(rng, input_shape):
            spatial = iter(filter_shape)
            kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                            if c == "I" else next(spatial) for c in rhs_spec]
            output_shape = shape_fn(input_shape, kernel_shape, strides, padding,
                                    dimension_numbers)
            bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
            k1, k2 = random.split(rng)
            return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

        def apply_fun(params, inputs, **kwargs):
            W, b = params
            return conv_fn(inputs, W, strides, padding, dimension_numbers) + b
        return init_fun, apply_fun
    return layer


def _conv(inputs, W, strides, padding, dn):
    one = (1,) * (W.ndim - 2)
    return lax.conv_general_dilated(inputs, W, strides, padding, one, one, dimension_numbers=dn)


def _conv_transpose(inputs, W, strides, padding, dn):
    return lax.conv_transpose(inputs, W, strides, padding, dimension_numbers=dn)


GeneralConv = _conv_layer(lax.conv_general_shape_tuple, _conv)
GeneralConv.__name__ = GeneralConv.__qualname__ = "GeneralConv"
GeneralConv.__doc__ = "A convolution layer with the given dimension numbers."
GeneralConvTranspose = _conv_layer(lax.conv_transpose_shape_tuple, _conv_transpose)
GeneralConvTranspose.__name__ = GeneralConvTranspose.__qualname__ = "GeneralConvTranspose"
GeneralConvTranspose.__doc__ = "A transposed-convolution layer with the given dimension numbers."
Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Normalizes over `axis` with the batch's own statistics (no running averages, as in
    JAX's stax), then scales by `gamma` and shifts by `beta`."""
    axis = (axis,) if jnp.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[ed] * z
        return z + beta[ed] if center else z
    return init_fun, apply_fun


# --------------------------------------------------------------------------------------
# Layers without parameters


def elementwise(fun, **fun_kwargs):
    """A layer applying `fun(inputs, **fun_kwargs)`."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(name, reducer, init_val, average=False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """A pooling layer over the spatial axes (all but N and C of `spec`, NHWC by default)."""
        window_shape = tuple(window_shape)
        strides = tuple(strides or (1,) * len(window_shape))
        spatial_window, spatial_strides = window_shape, strides
        if spec is None:
            non_spatial = (0, len(window_shape) + 1)
        else:
            non_spatial = (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
            ones_ = (1,) * len(window_shape)
            return lax.reduce_window_shape_tuple(input_shape, window_shape, strides, pads,
                                                 ones_, ones_), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            if not average:
                return out
            # divide by the number of inputs each window saw (fewer at padded edges)
            axes = (0, inputs.ndim - 1) if spec is None else non_spatial
            spatial_shape = tuple(d for i, d in enumerate(inputs.shape) if i not in axes)
            counts = lax.reduce_window(jnp.ones(spatial_shape, inputs.dtype), 0., lax.add,
                                       spatial_window, spatial_strides, padding)
            for i in sorted(axes):
                counts = jnp.expand_dims(counts, i)
            return out / counts
        return init_fun, apply_fun
    PoolingLayer.__name__ = PoolingLayer.__qualname__ = name
    return PoolingLayer


MaxPool = _pooling_layer("MaxPool", lax.max, -jnp.inf)
SumPool = _pooling_layer("SumPool", lax.add, 0.)
AvgPool = _pooling_layer("AvgPool", lax.add, 0., average=True)


def _flatten():
    """Flattens all but the leading (batch) dimension."""
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()


def _identity():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs
    return init_fun, apply_fun


Identity = _identity()


def FanOut(num):
    """Copies its input into a list of `num` inputs (for `parallel`)."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):
    """Concatenates a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Keeps each input with probability `rate` (JAX's convention: `rate` is the KEEP rate)
    and divides by it; needs `apply_fun(params, inputs, rng=key)` in 'train' mode."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
                "is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng)` where `rng` is a PRNG key (e.g. from "
                "`jax.random.key`).")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


# --------------------------------------------------------------------------------------
# Combinators


def serial(*layers):
    """Composes layers in sequence; each gets its own key, split from the one given."""
    n = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, n) if rng is not None else (None,) * n
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Applies the i-th layer to the i-th of a sequence of inputs (see FanOut, FanInSum)."""
    n = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, n)
        # JAX returns the zip iterator itself; a tuple unpacks the same and can be reused
        return tuple(zip(*[init(r, s) for init, r, s in zip(init_funs, rngs, input_shape)]))

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, n) if rng is not None else (None,) * n
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """Delays building a layer until its input shape is known: `make_layer(shape)`."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
