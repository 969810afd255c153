"""`masked`: run a transformation on some leaves of the params only.

The typical use is weight decay on weights but not on biases. Leaves outside the mask are
replaced by an empty `MaskedNode` before the inner transformation sees them, so its state
holds nothing for them, and their updates pass through unchanged.
"""
from typing import Any, NamedTuple

from didax._src import tree_util
from didax._src.optim import base


class MaskedState(NamedTuple):
    inner_state: Any


class MaskedNode(NamedTuple):
    """Stands in for a leaf outside the mask: a pytree node with no leaves."""


def _mask_is_callable(mask):
    callable_leaves = tree_util.tree_leaves(tree_util.tree_map(callable, mask))
    return len(callable_leaves) > 0 and all(callable_leaves)


def _mask_tree(pytree, mask_tree):
    return tree_util.tree_map(lambda m, p: p if m else MaskedNode(), mask_tree, pytree)


def masked(inner, mask):
    """Applies `inner` where `mask` is True and leaves the other updates untouched.

    `mask` is a pytree of bools shaped like the params (a prefix of them is not enough), or a
    function of the params (or updates) returning one.
    """
    inner = base.with_extra_args_support(inner)

    def resolve(tree):
        return mask(tree) if _mask_is_callable(mask) else mask

    def init_fn(params):
        return MaskedState(inner_state=inner.init(_mask_tree(params, resolve(params))))

    def update_fn(updates, state, params=None, **extra_args):
        mask_tree = resolve(updates)
        masked_params = None if params is None else _mask_tree(params, mask_tree)
        new_masked_updates, inner_state = inner.update(
            _mask_tree(updates, mask_tree), state.inner_state, masked_params, **extra_args)
        new_updates = tree_util.tree_map(lambda m, new, old: new if m else old,
                                         mask_tree, new_masked_updates, updates)
        return new_updates, MaskedState(inner_state=inner_state)

    return base.GradientTransformationExtraArgs(init_fn, update_fn)
