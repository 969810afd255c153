"""Mirrors `jax.nn`: activations, softmax and friends, attention, one_hot, standardize, and
the `initializers` module."""
from didax._src.nn.functions import (  # noqa: F401
    celu, dot_product_attention, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish,
    hard_tanh, identity, leaky_relu, log1mexp, log_sigmoid, log_softmax, logmeanexp, logsumexp,
    mish, one_hot, relu, relu6, selu, sigmoid, silu, soft_sign, softmax, softplus, sparse_plus,
    sparse_sigmoid, squareplus, standardize, swish, tanh,
)
from didax._src.nn.scaled import (  # noqa: F401
    get_scaled_dot_general_config, scaled_dot_general, scaled_matmul,
)
from didax.nn import initializers  # noqa: F401
