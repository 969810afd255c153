"""Mirrors `jax.example_libraries.stax`: neural-network layers as `(init_fun, apply_fun)`."""
from didax._src.example_libraries.stax import (  # noqa: F401
    AvgPool, BatchNorm, Conv, Conv1DTranspose, ConvTranspose, Dense, Dropout, Elu, Exp,
    FanInConcat, FanInSum, FanOut, Flatten, Gelu, GeneralConv, GeneralConvTranspose, Identity,
    LeakyRelu, LogSoftmax, MaxPool, Relu, Selu, Sigmoid, Softmax, Softplus, SumPool, Tanh,
    elementwise, elu, gelu, glorot, glorot_normal, leaky_relu, log_softmax, logsoftmax, normal,
    ones, parallel, randn, relu, selu, serial, shape_dependent, sigmoid, softmax, softplus,
    standardize, zeros,
)
