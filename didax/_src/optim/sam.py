"""Sharpness-aware minimisation (SAM; Foret et al., 2021).

SAM descends along the gradient taken at an adversarially perturbed point,

    eps = rho * g / ||g||,    g_sam = grad L(params + eps),

which favours flat minima. Two ways to use it:

- `sam_gradient(loss_fn, params, rho, *args)` returns g_sam directly; give it to any
  optimizer. This is the simplest form: one call, two gradient evaluations.

      grads = optim.sam_gradient(loss, params, 0.05, batch)
      updates, state = opt.update(grads, state, params)

- `sam(optimizer, adv_optimizer, sync_period=2)` is optax.contrib's transformation, for
  training loops that must stay `update(grads, state, params)`: calls alternate between an
  adversarial step (the update moves the params to params + eps) and an outer step (the
  update moves them back and applies `optimizer` to the gradient taken at the perturbed
  point). With `adv_optimizer = chain(normalize(), sgd(rho))` two such calls equal one step
  of `optimizer` on `sam_gradient`. With `opaque_mode=True`, every call does the whole
  round itself, through `update(..., grad_fn=lambda params, i: grads)`.
"""
from typing import Any, NamedTuple

from didax._src import tree_util
from didax._src.numpy import namespace as jnp
from didax._src.optim import base, numerics
from didax._src.transforms import api


def normalize():
    """Divides the updates by their global norm (the adversarial direction of SAM)."""
    def update_fn(updates, state, params=None):
        del params
        g_norm = numerics.global_norm(updates)
        return tree_util.tree_map(lambda g: g / g_norm, updates), state
    return base.GradientTransformation(base.init_empty_state, update_fn)


def sam_gradient(loss_fn, params, rho, *args, **kwargs):
    """The gradient of `loss_fn(params, *args, **kwargs)` at params + rho * g / ||g||.

    A zero gradient gives no perturbation (rather than a division by zero).
    """
    grad_fn = api.grad(loss_fn)
    g = grad_fn(params, *args, **kwargs)
    g_norm = numerics.global_norm(g)
    safe_norm = jnp.where(g_norm > 0, g_norm, 1.0)
    perturbed = tree_util.tree_map(
        lambda p, gi: p + (rho / safe_norm).astype(gi.dtype) * gi, params, g)
    return grad_fn(perturbed, *args, **kwargs)


class SAMState(NamedTuple):
    steps_since_sync: Any  # int32 scalar: adversarial steps since the last outer step
    opt_state: Any
    adv_state: Any
    cache: Any  # the unperturbed params (None in opaque mode)


def sam(optimizer, adv_optimizer, sync_period=2, reset_state=True, opaque_mode=False):
    """SAM as a transformation: `sync_period - 1` adversarial steps, then one outer step.

    `adv_optimizer`'s updates are ascended (negated) to perturb the params; the usual choice
    is `chain(normalize(), sgd(rho))`. `reset_state` restarts it after every outer step.
    See the module docstring for the two modes.
    """
    if sync_period < 1:
        raise ValueError(f"sam needs sync_period >= 1, got {sync_period}")

    def init_fn(params):
        return SAMState(steps_since_sync=jnp.zeros((), jnp.int32),
                        opt_state=optimizer.init(params),
                        adv_state=adv_optimizer.init(params),
                        cache=None if opaque_mode else params)

    def pick(cond, if_true, if_false):
        return tree_util.tree_map(lambda t, f: cond * t + (1 - cond) * f, if_true, if_false)

    def transparent_update_fn(updates, state, params=None, *, grad_fn=None):
        del grad_fn
        if params is None:
            raise ValueError(base.NO_PARAMS_MSG)
        first_step = state.steps_since_sync == 0
        last_step = state.steps_since_sync == sync_period - 1

        adv_updates, adv_state = adv_optimizer.update(updates, state.adv_state, params)
        adv_updates = tree_util.tree_map(lambda x: -x, adv_updates)

        opt_updates, opt_state = optimizer.update(updates, state.opt_state, state.cache)
        opt_updates = tree_util.tree_map(lambda c, p, u: c - p + u,
                                         state.cache, params, opt_updates)

        cache = pick(first_step, params, state.cache)
        updates = pick(last_step, opt_updates, adv_updates)
        if reset_state:
            adv_state = pick(last_step, adv_optimizer.init(params), adv_state)
        else:
            adv_state = pick(last_step, state.adv_state, adv_state)
        opt_state = pick(last_step, opt_state, state.opt_state)
        steps_since_sync = (state.steps_since_sync + 1) % sync_period
        return updates, SAMState(steps_since_sync=steps_since_sync, opt_state=opt_state,
                                 adv_state=adv_state, cache=cache)

    def opaque_update_fn(updates, state, params=None, *, grad_fn=None):
        if grad_fn is None:
            raise ValueError("sam(opaque_mode=True) needs the gradient function: call "
                             "update(grads, state, params, grad_fn=lambda params, i: ...)")
        if params is None:
            raise ValueError(base.NO_PARAMS_MSG)
        adv_params, adv_updates, adv_state = params, updates, state.adv_state
        for i in range(sync_period - 1):
            adv_updates, adv_state = adv_optimizer.update(adv_updates, adv_state, adv_params)
            adv_updates = tree_util.tree_map(lambda x: -x, adv_updates)
            adv_params = base.apply_updates(adv_params, adv_updates)
            adv_updates = grad_fn(adv_params, i)
        if reset_state:
            adv_state = adv_optimizer.init(params)
        updates, opt_state = optimizer.update(adv_updates, state.opt_state, params)
        return updates, SAMState(steps_since_sync=jnp.zeros((), jnp.int32),
                                 opt_state=opt_state, adv_state=adv_state, cache=None)

    update_fn = opaque_update_fn if opaque_mode else transparent_update_fn
    return base.GradientTransformationExtraArgs(init_fn, update_fn)
