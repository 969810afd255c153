"""A small neural-network library of `(init_fun, apply_fun)` layer pairs.

`init_fun(rng, input_shape) -> (output_shape, params)` builds the parameters of a layer for
inputs of a given shape; `apply_fun(params, inputs, **kwargs)` runs it. `serial` and
`parallel` combine layers into layers, so a whole network is one pair. Keyword arguments
(`rng` for dropout, anything else) reach every layer; combinators give each sublayer its
own key split from the one they get.
"""
import functools
import math

import numpy as np

from didax import lax, random
from didax import numpy as jnp
from didax.nn import (  # noqa: F401  (re-exported, as stax users expect)
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from didax.nn.initializers import glorot_normal, normal, ones, zeros  # noqa: F401

logsoftmax = log_softmax
glorot = glorot_normal
randn = normal

# the layers' default initializers, made once (they are stateless functions of key and shape)
_GLOROT_NORMAL = glorot_normal()
_NORMAL = normal()
_NORMAL_1E_6 = normal(1e-6)


# -- single layers ---------------------------------------------------------------------------

def Dense(out_dim, W_init=_GLOROT_NORMAL, b_init=_NORMAL):
    """Affine layer `inputs @ W + b` on the last axis."""
    def init_fun(rng, input_shape):
        w_key, b_key = random.split(rng)
        W = W_init(w_key, (input_shape[-1], out_dim))
        b = b_init(b_key, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _spatial_only(filter_shape, strides):
    strides = (1,) * len(filter_shape) if strides is None else tuple(strides)
    if len(strides) != len(filter_shape):
        raise ValueError(f"strides {strides} and filter_shape {tuple(filter_shape)} must have "
                         "one entry per spatial dimension")
    return strides


def _kernel_shape(rhs_spec, filter_shape, in_chan, out_chan):
    """The kernel's shape laid out as `rhs_spec` says ('I', 'O' and spatial letters)."""
    spatial = iter(filter_shape)
    return tuple(in_chan if c == "I" else out_chan if c == "O" else next(spatial)
                 for c in rhs_spec)


def _bias_shape(out_spec, out_chan):
    return tuple(out_chan if c == "C" else 1 for c in out_spec)


def _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
                shape_fn, conv_fn):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    filter_shape = tuple(filter_shape)
    strides = _spatial_only(filter_shape, strides)
    if W_init is None:
        W_init = glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        in_chan = input_shape[lhs_spec.index("C")]
        kernel_shape = _kernel_shape(rhs_spec, filter_shape, in_chan, out_chan)
        output_shape = shape_fn(input_shape, kernel_shape, strides, padding, dimension_numbers)
        w_key, b_key = random.split(rng)
        W = W_init(w_key, kernel_shape)
        b = b_init(b_key, _bias_shape(out_spec, out_chan))
        return tuple(int(d) for d in output_shape), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return conv_fn(inputs, W, strides, padding, dimension_numbers) + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=_NORMAL_1E_6):
    """Convolution with layouts given as `(lhs_spec, rhs_spec, out_spec)`, e.g.
    `('NHWC', 'HWIO', 'NHWC')`; the kernel defaults to Glorot-normal over its I and O axes."""
    def conv(x, W, strides, padding, dn):
        return lax.conv_general_dilated(x, W, strides, padding, dimension_numbers=dn)
    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init, lax.conv_general_shape_tuple, conv)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=_NORMAL_1E_6):
    """Transposed convolution (`lax.conv_transpose`) with explicit layouts."""
    def conv(x, W, strides, padding, dn):
        return lax.conv_transpose(x, W, strides, padding, dimension_numbers=dn)
    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init, lax.conv_transpose_shape_tuple, conv)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Normalises over `axis` with the batch's own statistics, then scales by `gamma` and
    shifts by `beta` (each `()` when switched off)."""
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        kept = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        beta_key, gamma_key = random.split(rng)
        beta = beta_init(beta_key, kept) if center else ()
        gamma = gamma_init(gamma_key, kept) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        # the parameters carry only the kept axes: give them back the normalised ones
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        out = standardize(x, axis, epsilon=epsilon)
        if scale:
            out = gamma[expand] * out
        if center:
            out = out + beta[expand]
        return out
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameter-free layer applying `fun(inputs, **fun_kwargs)`."""
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


def _pool_layer(reducer, init_value, average=False):
    def make(window_shape, strides=None, padding="VALID", spec=None):
        window_shape = tuple(window_shape)
        strides = _spatial_only(window_shape, strides)
        if spec is None:  # NHWC-like: batch first, channels last
            batch_axis, chan_axis = 0, len(window_shape) + 1
        else:
            batch_axis, chan_axis = spec.index("N"), spec.index("C")

        def full(spatial):
            """Spatial sizes with 1 at the batch and channel axes."""
            out = list(spatial)
            for a in sorted((batch_axis, chan_axis)):
                out.insert(a, 1)
            return tuple(out)
        dims, steps = full(window_shape), full(strides)

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, dims, steps, padding)
            shape = lax.reduce_window_shape_tuple(input_shape, dims, steps, pads)
            return tuple(int(d) for d in shape), ()

        def apply_fun(params, inputs, **kwargs):
            init = np.array(init_value, inputs.dtype)
            out = lax.reduce_window(inputs, init, reducer, dims, steps, padding)
            if not average:
                return out
            if padding == "VALID":
                return out / math.prod(window_shape)
            # windows at the edges hold fewer elements: count them
            spatial_shape = tuple(d for i, d in enumerate(inputs.shape)
                                  if i not in (batch_axis, chan_axis))
            spatial_dims = tuple(d for i, d in enumerate(dims) if i not in (batch_axis, chan_axis))
            spatial_steps = tuple(d for i, d in enumerate(steps)
                                  if i not in (batch_axis, chan_axis))
            counts = lax.reduce_window(jnp.ones(spatial_shape, inputs.dtype),
                                       np.array(0, inputs.dtype), lax.add, spatial_dims,
                                       spatial_steps, padding)
            return out / jnp.expand_dims(counts, tuple(sorted((batch_axis, chan_axis))))
        return init_fun, apply_fun
    return make


MaxPool = _pool_layer(lax.max, -np.inf)
SumPool = _pool_layer(lax.add, 0.0)
AvgPool = _pool_layer(lax.add, 0.0, average=True)
MaxPool.__doc__ = "Max over windows of the spatial axes (layout `spec`, default NHWC)."
SumPool.__doc__ = "Sum over windows of the spatial axes (layout `spec`, default NHWC)."
AvgPool.__doc__ = ("Mean over windows of the spatial axes; with padding, over the elements "
                   "each window actually covers.")


def _flatten_init(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()


def _flatten_apply(params, inputs, **kwargs):
    return jnp.reshape(inputs, (inputs.shape[0], -1))


Flatten = (_flatten_init, _flatten_apply)
Identity = (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)


def FanOut(num):
    """Copies its input into a list of `num` inputs for `parallel`."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


FanInSum = (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: functools.reduce(lambda a, b: a + b, inputs))


def FanInConcat(axis=-1):
    """Concatenates a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        rank = len(input_shape[0])
        ax = axis % rank
        size = sum(shape[ax] for shape in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Keeps each element with probability `rate` (scaled by `1 / rate`) in mode 'train';
    the identity otherwise. `apply_fun` needs `rng=` in both modes."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. "
                "That is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng)` where `rng` is a PRNG key "
                "(e.g. from `jax.random.key`).")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


# -- combinators -----------------------------------------------------------------------------

def serial(*layers):
    """Layers one after another; params is the list of their params."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, p = init(layer_rng, input_shape)
            params.append(p)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        for fun, p, r in zip(apply_funs, params, rngs):
            inputs = fun(p, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Layers side by side: input i goes to layer i (use after `FanOut`); params and output
    shapes are tuples, outputs a list."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        shapes, params = [], []
        for init, r, shape in zip(init_funs, rngs, input_shape):
            s, p = init(r, shape)
            shapes.append(s)
            params.append(p)
        return tuple(shapes), tuple(params)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer chosen by `make_layer(input_shape)` when it is initialised or applied."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
