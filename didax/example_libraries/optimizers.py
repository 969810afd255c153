"""Mirrors `jax.example_libraries.optimizers`: `(init_fun, update_fun, get_params)` triples."""
from didax._src.example_libraries.optimizers import (  # noqa: F401
    JoinPoint, Optimizer, OptimizerState, Schedule, adagrad, adam, adamax, clip_grads, constant,
    exponential_decay, inverse_time_decay, l2_norm, make_schedule, momentum, nesterov, optimizer,
    pack_optimizer_state, piecewise_constant, polynomial_decay, rmsprop, rmsprop_momentum, sgd,
    sm3, unpack_optimizer_state,
)
