"""First-order optimizers as `(init_fun, update_fun, get_params)` triples.

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = opt_update(step, grads, state)
    params = get_params(state)

Each optimizer is written for one array (`@optimizer` lifts it to any pytree of
parameters). Its state, an `OptimizerState`, is a pytree, so it passes through `jit`,
`vmap` and `lax.scan`; `unpack_optimizer_state` and `pack_optimizer_state` turn it into
plain Python containers (to pickle) and back. Step sizes are numbers or schedules
(functions of the step number).
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable

from didax import numpy as jnp
from didax.tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
Schedule = Callable[[Step], float]
InitFn = Callable[[Params], "OptimizerState"]
UpdateFn = Callable[[Step, Updates, "OptimizerState"], "OptimizerState"]
ParamsFn = Callable[["OptimizerState"], Params]

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
# only the per-leaf states are children: the tree structures are static
register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux))

Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


def _pack_states(states):
    """Per-parameter states (pytrees) as (a tuple of their leaf lists, a tuple of their
    structures): the leaves are the OptimizerState's children, the structures static."""
    flattened = [tree_flatten(state) for state in states]
    return (tuple(leaves for leaves, _ in flattened),
            tuple(structure for _, structure in flattened))


def _unpack_states(opt_state):
    """The per-parameter states of an OptimizerState, rebuilt as their pytrees."""
    return [tree_unflatten(structure, leaves)
            for structure, leaves in zip(opt_state.subtree_defs, opt_state.packed_state)]


def _leading_params(state):
    """`get_params` of an optimizer whose per-array state starts with the parameters."""
    return state[0]


class _LeafwiseOptimizer:
    """An optimizer written for one array, applied to every leaf of a parameter tree."""

    def __init__(self, leaf_init, leaf_update, leaf_params):
        self.leaf_init, self.leaf_update, self.leaf_params = leaf_init, leaf_update, leaf_params

    def init(self, params):
        leaves, params_structure = tree_flatten(params)
        packed, state_structures = _pack_states([self.leaf_init(p) for p in leaves])
        return OptimizerState(packed, params_structure, state_structures)

    def update(self, step, grads, opt_state):
        grad_leaves, grads_structure = tree_flatten(grads)
        if grads_structure != opt_state.tree_def:
            raise TypeError(
                "optimizer update function was passed a gradient tree that did not match "
                "the parameter tree structure with which it was initialized: parameter "
                f"tree {opt_state.tree_def} and grad tree {grads_structure}.")
        new_states = [self.leaf_update(step, g, state)
                      for g, state in zip(grad_leaves, _unpack_states(opt_state))]
        packed, state_structures = _pack_states(new_states)
        for old, new in zip(opt_state.subtree_defs, state_structures):
            if old != new:
                raise TypeError(
                    "optimizer update function produced an output structure that did not "
                    f"match its input structure: input {old} and output {new}.")
        return OptimizerState(packed, opt_state.tree_def, opt_state.subtree_defs)

    def params(self, opt_state):
        return tree_unflatten(opt_state.tree_def,
                              [self.leaf_params(state) for state in _unpack_states(opt_state)])


def optimizer(opt_maker):
    """Lifts an optimizer written for one array to pytrees of parameters.

    `opt_maker(*args, **kwargs)` returns `(init, update, get_params)` on one array:
    `init(x0) -> state`, `update(step, g, state) -> state`, `get_params(state) -> x`, where a
    state is any pytree. The result returns an `Optimizer` whose functions take and give
    whole parameter trees and an `OptimizerState`.
    """
    @functools.wraps(opt_maker)
    def make(*args, **kwargs):
        leafwise = _LeafwiseOptimizer(*opt_maker(*args, **kwargs))
        return Optimizer(leafwise.init, leafwise.update, leafwise.params)
    return make


# -- optimizers ------------------------------------------------------------------------------

@optimizer
def sgd(step_size):
    """Plain gradient descent: `x -= step_size(i) * g`."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x
    return init, update, get_params


@optimizer
def momentum(step_size: Schedule, mass: float):
    """Heavy-ball momentum: `v = mass * v + g`, `x -= step_size(i) * v`."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return init, update, _leading_params


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """Nesterov's accelerated gradient: the step looks ahead along the new velocity."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return init, update, _leading_params


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al., 2011) with momentum on the scaled gradient."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        # coordinates that never saw a gradient do not move
        inv_root = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv_root) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, _leading_params


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: divides by the root of a running mean of squared gradients."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, mean_sq = state
        mean_sq = mean_sq * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(mean_sq + eps), mean_sq

    return init, update, _leading_params


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp whose scaled steps accumulate in a momentum buffer."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, mean_sq, mom = state
        mean_sq = mean_sq * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(mean_sq + eps)
        return x - mom, mean_sq, mom

    return init, update, _leading_params


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba, 2015) with bias-corrected moment estimates."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return init, update, _leading_params


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adamax: Adam with the infinity norm in place of the second moment."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        scale = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - scale * m / (u + eps), m, u

    return init, update, _leading_params


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al., 2019): one accumulator per axis slice instead of one per entry,
    so the optimizer's memory grows with the sum of the dimensions, not their product."""
    step_size = make_schedule(step_size)

    def init(x0):
        shape = tuple(jnp.shape(x0))
        x0 = jnp.atleast_1d(x0)
        accumulators = [jnp.zeros(n, x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), accumulators, shape

    def along(ndim, vector, axis):
        """`vector` as an array of rank `ndim` varying along `axis` only."""
        return jnp.reshape(vector, tuple(-1 if a == axis else 1 for a in range(ndim)))

    def update(i, g, state):
        x, m, accumulators, shape = state
        g = jnp.reshape(g, x.shape)
        bounds = [along(g.ndim, v, a) for a, v in enumerate(accumulators)]
        accum = functools.reduce(jnp.minimum, bounds) + jnp.square(g)
        inv_root = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * inv_root) + momentum * m
        x = x - step_size(i) * m
        accumulators = [jnp.max(accum, axis=tuple(b for b in range(x.ndim) if b != a))
                        for a in range(x.ndim)]
        return x, m, accumulators, shape

    def get_params(state):
        x, _, _, shape = state
        return jnp.reshape(x, shape)
    return init, update, get_params


# -- schedules -------------------------------------------------------------------------------

def constant(step_size) -> Schedule:
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """`step_size * decay_rate ** (i / decay_steps)`."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """`step_size / (1 + decay_rate * i / decay_steps)`, the ratio floored when `staircase`."""
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From `step_size` to `final_step_size` along `(1 - i / decay_steps) ** power`, then flat."""
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        mult = (1 - step_num / decay_steps) ** power
        return mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any):
    """`values[k]` for steps past `k` of the `boundaries` (one fewer than values)."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule from a schedule (kept) or a scalar step size (held constant)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# -- utilities -------------------------------------------------------------------------------

def l2_norm(tree):
    """The Euclidean norm of all the leaves of `tree` together."""
    leaves, _ = tree_flatten(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scales `grad_tree` down to global norm `max_norm` when it is longer."""
    norm = l2_norm(grad_tree)

    def clip(g):
        return jnp.where(norm < max_norm, g, g * (max_norm / norm))
    return tree_map(clip, grad_tree)


class JoinPoint:
    """Marks where a parameter's own state starts in an unpacked optimizer state (a leaf to
    tree functions, so the parameter tree and the state trees stay apart)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """The state as the parameter tree with a `JoinPoint` per parameter holding its state in
    plain containers (for pickling); `pack_optimizer_state` inverts it."""
    return tree_unflatten(opt_state.tree_def,
                          [JoinPoint(state) for state in _unpack_states(opt_state)])


def pack_optimizer_state(marked_pytree):
    """The `OptimizerState` of a tree made by `unpack_optimizer_state`."""
    joins, tree_def = tree_flatten(marked_pytree)
    for j in joins:
        if not isinstance(j, JoinPoint):
            raise TypeError("pack_optimizer_state expects the tree unpack_optimizer_state "
                            f"returns, with a JoinPoint at every leaf; found {type(j).__name__}")
    packed, state_structures = _pack_states([j.subtree for j in joins])
    return OptimizerState(packed, tree_def, state_structures)
