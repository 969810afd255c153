"""Clipping: bound the updates elementwise, per leaf, or by the norm of all of them together."""
from didax._src import tree_util
from didax._src.numpy import namespace as jnp
from didax._src.optim import base, numerics


def clip(max_delta):
    """Clips every element of the updates to [-max_delta, max_delta]."""
    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(lambda g: jnp.clip(g, -max_delta, max_delta), updates), state
    return base.GradientTransformation(base.init_empty_state, update_fn)


def clip_by_global_norm(max_norm):
    """Rescales the updates so that their global norm is at most `max_norm`.

    All leaves shrink by the same factor, so the direction of the whole update is kept.
    """
    def update_fn(updates, state, params=None):
        del params
        g_norm = numerics.global_norm(updates)
        keep = jnp.squeeze(g_norm < max_norm)
        if jnp.ndim(keep) != 0:
            raise ValueError(f"clip_by_global_norm needs a scalar max_norm, got shape "
                             f"{jnp.shape(max_norm)}")
        updates = tree_util.tree_map(
            lambda t: jnp.where(keep, t, (t / g_norm.astype(t.dtype)) * max_norm), updates)
        return updates, state
    return base.GradientTransformation(base.init_empty_state, update_fn)


def clip_by_block_rms(threshold):
    """Rescales each leaf so that its root mean square is at most `threshold`."""
    def update_fn(updates, state, params=None):
        del params

        def clip_leaf(u):
            return u / jnp.maximum(1.0, jnp.sqrt(jnp.mean(numerics.abs_sq(u))) / threshold)
        return tree_util.tree_map(clip_leaf, updates), state
    return base.GradientTransformation(base.init_empty_state, update_fn)
