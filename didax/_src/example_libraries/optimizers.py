"""First-order optimizers as `(init_fun, update_fun, get_params)` triples, as
`jax.example_libraries.optimizers`.

`init_fun(params) -> opt_state`, `update_fun(step, grads, opt_state) -> opt_state`,
`get_params(opt_state) -> params`. Each optimizer is written for one array and lifted to
pytrees by the `optimizer` decorator; the state is an `OptimizerState` pytree, so training
steps run under `didax.jit`. The arithmetic follows JAX's, operation for operation, so both
give the same numbers.
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import didax.numpy as jnp
from didax import tree_util

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))

Schedule = Callable[[int], float]


class Optimizer(NamedTuple):
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def _flatten_all(trees):
    pairs = [tree_util.tree_flatten(t) for t in trees]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def optimizer(opt_maker):
    """Lifts a maker of per-array `(init, update, get_params)` to one acting on pytrees of
    parameters, whose state is an `OptimizerState` (per-leaf states, flattened)."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_util.tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_all([init(x0) for x0 in x0_flat])
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_util.tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    f"the parameter tree structure with which it was initialized: parameter "
                    f"tree {tree} and grad tree {tree2}.")
            states = [tree_util.tree_unflatten(d, s) for d, s in zip(subtrees, states_flat)]
            new_flat, subtrees2 = _flatten_all(
                [update(i, g, s) for g, s in zip(grad_flat, states)])
            for d, d2 in zip(subtrees, subtrees2):
                if d2 != d:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not "
                        f"match its input structure: input {d} and output {d2}.")
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            return tree_util.tree_unflatten(
                tree, [get_params(tree_util.tree_unflatten(d, s))
                       for d, s in zip(subtrees, states_flat)])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


def _first(state):
    return state[0]


@optimizer
def sgd(step_size):
    """Stochastic gradient descent."""
    step_size = make_schedule(step_size)
    return Optimizer(lambda x0: x0, lambda i, g, x: x - step_size(i) * g, lambda x: x)


@optimizer
def momentum(step_size, mass: float):
    """SGD with (heavy-ball) momentum `mass`."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def nesterov(step_size, mass: float):
    """SGD with Nesterov momentum `mass`."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011), with momentum."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq += jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: steps scaled by a running RMS of the gradients (decay `gamma`)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return init, update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba 2014), with bias correction."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v
    return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u
    return init, update, _first


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): one accumulator per axis instead of one per entry."""
    step_size = make_schedule(step_size)

    def along(ndim, v, axis):  # v, a vector, broadcast along `axis` of an ndim array
        return v[tuple(slice(None) if k == axis else None for k in range(ndim))]

    def init(x0):
        x_shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        return x0, jnp.zeros_like(x0), [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape], x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        vs = [along(g.ndim, v, k) for k, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0)
        m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(tuple(k for k in range(x.ndim) if k != j)) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return x.reshape(x_shape)
    return init, update, get_params


# --------------------------------------------------------------------------------------
# Step-size schedules: step index -> step size


def constant(step_size) -> Schedule:
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any):
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule) -> Schedule:
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# --------------------------------------------------------------------------------------
# Utilities


def l2_norm(tree):
    """The l2 norm of a pytree of arrays (e.g. for weight decay)."""
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in tree_util.tree_leaves(tree)))


def clip_grads(grad_tree, max_norm):
    """Rescales a pytree of gradients so that its l2 norm is at most `max_norm`."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)),
                              grad_tree)


class JoinPoint:
    """Marks the boundary between the parameter tree and a leaf's state tree."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):  # pytrees of arrays look iterable
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as the parameter tree with a JoinPoint (holding that leaf's state)
    at each leaf: a plain structure for serialization."""
    states_flat, tree_def, subtree_defs = opt_state
    return tree_util.tree_unflatten(
        tree_def, [JoinPoint(tree_util.tree_unflatten(d, s))
                   for d, s in zip(subtree_defs, states_flat)])


def pack_optimizer_state(marked_pytree):
    """The inverse of `unpack_optimizer_state`."""
    sentinels, tree_def = tree_util.tree_flatten(marked_pytree)
    assert all(isinstance(s, JoinPoint) for s in sentinels)
    states_flat, subtree_defs = _flatten_all([s.subtree for s in sentinels])
    return OptimizerState(states_flat, tree_def, subtree_defs)
