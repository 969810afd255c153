"""Tree arithmetic shared by the gradient transformations.

Optimizer states hold one moment per parameter leaf; these helpers update them leaf by leaf
with optax's exact formulas, so that the numbers (and dtypes) match it. A leaf may be None
(a parameter without an update), which every helper passes through.
"""
import operator

from didax._src import tree_util
from didax._src.numpy import namespace as jnp


def _is_none(x):
    return x is None


def abs_sq(x):
    """|x|^2 that also holds for complex leaves (x * x would not)."""
    x = jnp.asarray(x)
    return x * x if jnp.isrealobj(x) else (x.conj() * x).real


def safe_increment(count):
    """count + 1 that saturates at the dtype's largest value instead of wrapping round."""
    count = jnp.asarray(count)
    if jnp.issubdtype(count.dtype, jnp.integer):
        max_value = jnp.iinfo(count.dtype).max
    elif jnp.issubdtype(count.dtype, jnp.floating):
        max_value = jnp.finfo(count.dtype).max
    else:
        raise ValueError(f"Cannot safely increment a count of dtype {count.dtype}; use an "
                         "integer or floating count.")
    max_value = jnp.array(max_value, count.dtype)
    return jnp.where(count < max_value, count + jnp.array(1, count.dtype), max_value)


def zeros_like(tree, dtype=None):
    return tree_util.tree_map(lambda x: jnp.zeros_like(x, dtype=dtype), tree)


def full_like(tree, fill_value, dtype=None):
    return tree_util.tree_map(lambda x: jnp.full_like(x, fill_value, dtype=dtype), tree)


def cast(tree, dtype):
    """Casts every leaf to `dtype`; None keeps the leaves' own dtypes (optax's convention)."""
    if dtype is None:
        return tree
    return tree_util.tree_map(lambda x: jnp.asarray(x).astype(dtype), tree)


def cast_like(tree, like):
    return tree_util.tree_map(lambda x, y: jnp.asarray(x).astype(jnp.asarray(y).dtype), tree,
                              like)


def update_moment(updates, moments, decay, order):
    """Exponential moving average of the `order`-th power of the updates."""
    return tree_util.tree_map(
        lambda g, t: None if g is None else (1 - decay) * (g ** order) + decay * t,
        updates, moments, is_leaf=_is_none)


def update_moment_per_elem_norm(updates, moments, decay, order):
    """Exponential moving average of |g|^order (for real g, g ** order as optax writes it)."""
    def orderth_norm(g):
        if jnp.isrealobj(g):
            return g ** order
        half_order = order / 2
        if float(half_order).is_integer():
            half_order = int(half_order)
        return abs_sq(g) ** half_order

    return tree_util.tree_map(
        lambda g, t: None if g is None else (1 - decay) * orderth_norm(g) + decay * t,
        updates, moments, is_leaf=_is_none)


def update_infinity_moment(updates, moments, decay, eps):
    return tree_util.tree_map(
        lambda g, t: None if g is None else jnp.maximum(jnp.abs(g) + eps, decay * t),
        updates, moments, is_leaf=_is_none)


def bias_correction(moment, decay, count):
    """Divides out the (1 - decay^count) bias of a moving average started at zero.

    The factor is computed in the count's promoted precision and only then cast to each
    leaf's dtype, so a low-precision moment does not round decay^count to 1.
    """
    correction = 1 - decay ** count
    return tree_util.tree_map(lambda t: t / jnp.asarray(correction).astype(t.dtype), moment)


def tree_sum(tree):
    return tree_util.tree_reduce(operator.add, tree_util.tree_map(jnp.sum, tree), 0)


def global_norm(updates):
    """The L2 norm of all leaves of `updates` taken together, as one vector."""
    return jnp.sqrt(tree_sum(tree_util.tree_map(abs_sq, updates)))
