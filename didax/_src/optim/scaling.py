"""Transformations that multiply or add: learning rates (fixed or scheduled) and weight decay.

A learning rate is a float or a schedule, a function of the step count; a schedule keeps the
count in the transformation's state, so it advances with every `update`.
"""
from typing import NamedTuple

from didax._src import tree_util
from didax._src.numpy import namespace as jnp
from didax._src.optim import base, masking, numerics


class ScaleByScheduleState(NamedTuple):
    count: object  # int32 scalar: the number of updates so far


class WeightDecaySchedule(NamedTuple):
    count: object  # int32 scalar


def scale(step_size):
    """Multiplies the updates by a fixed `step_size`."""
    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(lambda g: step_size * g, updates), state
    return base.GradientTransformation(base.init_empty_state, update_fn)


def scale_by_schedule(step_size_fn):
    """Multiplies the updates by `step_size_fn(count)`, counting updates from 0."""
    def init_fn(params):
        del params
        return ScaleByScheduleState(count=jnp.zeros([], jnp.int32))

    def update_fn(updates, state, params=None):
        del params
        step_size = step_size_fn(state.count)
        updates = tree_util.tree_map(lambda g: jnp.array(step_size, dtype=g.dtype) * g, updates)
        return updates, ScaleByScheduleState(count=numerics.safe_increment(state.count))

    return base.GradientTransformation(init_fn, update_fn)


def scale_by_learning_rate(learning_rate, *, flip_sign=True):
    """Multiplies by -learning_rate (a float or a schedule): the descent step of an optimizer."""
    if learning_rate is None:
        return base.identity()
    sign = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale_by_schedule(lambda count: sign * learning_rate(count))
    return scale(sign * learning_rate)


def add_decayed_weights(weight_decay=0.0, mask=None):
    """Adds weight_decay * params to the updates (decoupled weight decay, as in AdamW).

    `weight_decay` may be a schedule; `mask` (a pytree of bools or a function of the params)
    limits the decay to some leaves, e.g. weights and not biases.
    """
    def init_fn(params):
        del params
        if callable(weight_decay):
            return WeightDecaySchedule(count=jnp.zeros([], jnp.int32))
        return base.EmptyState()

    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError(base.NO_PARAMS_MSG)
        if callable(weight_decay):
            new_state = WeightDecaySchedule(count=numerics.safe_increment(state.count))
        else:
            new_state = state
        if isinstance(weight_decay, (int, float)) and weight_decay == 0.0:
            return updates, new_state
        s = weight_decay(state.count) if callable(weight_decay) else weight_decay
        updates = tree_util.tree_map(lambda g, p: None if g is None else g + s * p,
                                     updates, params, is_leaf=lambda x: x is None)
        return updates, new_state

    tx = base.GradientTransformation(init_fn, update_fn)
    return tx if mask is None else masking.masked(tx, mask)


def scale_by_sign():
    """Replaces each update by its sign (signSGD)."""
    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(jnp.sign, updates), state
    return base.GradientTransformation(base.init_empty_state, update_fn)
