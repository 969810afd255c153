"""Gradient transformations: pairs of pure functions `(init, update)`, and how they compose.

An optimizer is a `GradientTransformation`: `init(params)` builds its state, and
`update(updates, state, params=None)` turns gradients into the updates to add to the params,
returning the next state. States are pytrees of arrays (NamedTuples), and the functions are
pure, so a whole training step can be differentiated, batched with `vmap` and compiled with
`jit`. This is optax's interface, so optax code runs unchanged.
"""
import collections
from typing import Any, Callable, NamedTuple

from didax._src import tree_util
from didax._src.numpy import namespace as jnp

NO_PARAMS_MSG = ("This transformation needs the current parameters: pass them to update, as "
                 "`update(updates, state, params)`.")


class GradientTransformation(NamedTuple):
    """An optimizer as two pure functions: `init(params) -> state` and
    `update(updates, state, params=None) -> (updates, state)`."""
    init: Callable
    update: Callable


class GradientTransformationExtraArgs(GradientTransformation):
    """A transformation whose `update` also accepts (and may ignore) keyword arguments, such as
    the `grad_fn` that `sam(..., opaque_mode=True)` needs."""


class EmptyState(NamedTuple):
    """The state of a stateless transformation."""


def init_empty_state(params):
    del params
    return EmptyState()


def identity():
    """Leaves the updates as they are (compare `set_to_zero`, which leaves the params)."""
    def update_fn(updates, state, params=None):
        del params
        return updates, state
    return GradientTransformation(init_empty_state, update_fn)


def set_to_zero():
    """Maps every update to zero, so the params stay fixed (used with `masked` to freeze)."""
    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(jnp.zeros_like, updates), state
    return GradientTransformation(init_empty_state, update_fn)


def stateless(f: Callable[[Any, Any], Any]):
    """A transformation from a function `f(updates, params) -> updates` that needs no state."""
    def update_fn(updates, state, params=None):
        del state
        return f(updates, params), EmptyState()
    return GradientTransformation(init_empty_state, update_fn)


def stateless_with_tree_map(f: Callable[[Any, Any], Any]):
    """Like `stateless`, with `f(update, param)` applied leaf by leaf."""
    def update_fn(updates, state, params=None):
        del state
        if params is None:
            return tree_util.tree_map(lambda u: f(u, None), updates), EmptyState()
        return tree_util.tree_map(f, updates, params), EmptyState()
    return GradientTransformation(init_empty_state, update_fn)


def with_extra_args_support(tx):
    """Wraps `tx` so that its update accepts keyword arguments it does not use."""
    if isinstance(tx, GradientTransformationExtraArgs):
        return tx

    def update_fn(updates, state, params=None, **extra_args):
        del extra_args
        return tx.update(updates, state, params)
    return GradientTransformationExtraArgs(tx.init, update_fn)


def chain(*transformations):
    """Applies the transformations one after the other; the state is the tuple of their states.

    Order matters: `chain(clip_by_global_norm(1.0), scale(-0.1))` clips the gradient and then
    scales it, while the reverse order would clip the already scaled step.
    """
    transformations = [with_extra_args_support(t) for t in transformations]

    def init_fn(params):
        return tuple(t.init(params) for t in transformations)

    def update_fn(updates, state, params=None, **extra_args):
        if len(state) != len(transformations):
            raise ValueError(f"chain of {len(transformations)} transformations was given a state "
                             f"of {len(state)} entries; build the state with this chain's init.")
        new_state = []
        for t, s in zip(transformations, state):
            updates, s = t.update(updates, s, params, **extra_args)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformationExtraArgs(init_fn, update_fn)


def named_chain(*named_transformations):
    """`chain` whose state maps the given names to the states, in order, for inspection."""
    names = [name for name, _ in named_transformations]
    if len(names) != len(set(names)):
        raise ValueError(f"named_chain needs unique names, got {names}")
    transformations = [(name, with_extra_args_support(t)) for name, t in named_transformations]

    def init_fn(params):
        return collections.OrderedDict((name, t.init(params)) for name, t in transformations)

    def update_fn(updates, state, params=None, **extra_args):
        new_state = collections.OrderedDict()
        for name, t in transformations:
            updates, new_state[name] = t.update(updates, state[name], params, **extra_args)
        return updates, new_state

    return GradientTransformationExtraArgs(init_fn, update_fn)


def apply_updates(params, updates):
    """params + updates, leaf by leaf, keeping each param's dtype (a float32 param stays float32
    even if its update was computed in float64)."""
    return tree_util.tree_map(
        lambda p, u: None if p is None else jnp.asarray(p + u).astype(jnp.asarray(p).dtype),
        params, updates, is_leaf=lambda x: x is None)


def incremental_update(new_tensors, old_tensors, step_size):
    """step_size * new + (1 - step_size) * old: a Polyak average, e.g. for target networks."""
    return tree_util.tree_map(
        lambda new, old: None if new is None else step_size * new + (1.0 - step_size) * old,
        new_tensors, old_tensors, is_leaf=lambda x: x is None)
