"""Ready-made optimizers: a direction (`scale_by_*`) chained with the learning-rate step.

`learning_rate` is a float or a schedule (a function of the step count) everywhere.
Typical use:

    opt = optim.adam(1e-3)
    state = opt.init(params)
    updates, state = opt.update(grads, state, params)
    params = optim.apply_updates(params, updates)
"""
from didax._src.optim import base, transforms
from didax._src.optim.scaling import (
    add_decayed_weights,
    scale_by_learning_rate,
    scale_by_sign,
)


def sgd(learning_rate, momentum=None, nesterov=False, accumulator_dtype=None):
    """Stochastic gradient descent, with (Nesterov) momentum if `momentum` is given."""
    if momentum is None:
        direction = base.identity()
    else:
        direction = transforms.trace(decay=momentum, nesterov=nesterov,
                                     accumulator_dtype=accumulator_dtype)
    return base.chain(direction, scale_by_learning_rate(learning_rate))


def adam(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None, *,
         nesterov=False):
    """Adam (Kingma and Ba, 2015); `nesterov=True` gives Nadam."""
    return base.chain(
        transforms.scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                                 nesterov=nesterov),
        scale_by_learning_rate(learning_rate))


def nadam(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None):
    """Adam with Nesterov momentum (Dozat, 2016)."""
    return adam(learning_rate, b1, b2, eps, eps_root, mu_dtype, nesterov=True)


def adamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None,
          weight_decay=1e-4, mask=None, *, nesterov=False):
    """Adam with decoupled weight decay (Loshchilov and Hutter, 2019).

    The decay, weight_decay * params, is added to Adam's direction before the learning rate
    scales it; `mask` (bools shaped like the params, or a function of them) limits it.
    """
    return base.chain(
        transforms.scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                                 nesterov=nesterov),
        add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate))


def nadamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None,
           weight_decay=1e-4, mask=None):
    """AdamW with Nesterov momentum."""
    return adamw(learning_rate, b1, b2, eps, eps_root, mu_dtype, weight_decay, mask,
                 nesterov=True)


def amsgrad(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None):
    """AMSGrad (Reddi et al., 2018): Adam whose second moment never decreases."""
    return base.chain(
        transforms.scale_by_amsgrad(b1=b1, b2=b2, eps=eps, eps_root=eps_root,
                                    mu_dtype=mu_dtype),
        scale_by_learning_rate(learning_rate))


def adamax(learning_rate, b1=0.9, b2=0.999, eps=1e-8):
    """Adamax: Adam with the infinity norm in place of the second moment."""
    return base.chain(transforms.scale_by_adamax(b1=b1, b2=b2, eps=eps),
                      scale_by_learning_rate(learning_rate))


def adabelief(learning_rate, b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16, *, nesterov=False):
    """AdaBelief (Zhuang et al., 2020)."""
    return base.chain(
        transforms.scale_by_belief(b1=b1, b2=b2, eps=eps, eps_root=eps_root, nesterov=nesterov),
        scale_by_learning_rate(learning_rate))


def rmsprop(learning_rate, decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True,
            centered=False, momentum=None, nesterov=False, bias_correction=False):
    """RMSProp (Hinton's lecture 6e); `centered=True` divides by an estimate of the variance
    instead of the second moment; `momentum` adds a trace after the learning rate."""
    scale_by = transforms.scale_by_stddev if centered else transforms.scale_by_rms
    return base.chain(
        scale_by(decay=decay, eps=eps, initial_scale=initial_scale, eps_in_sqrt=eps_in_sqrt,
                 bias_correction=bias_correction),
        scale_by_learning_rate(learning_rate),
        (transforms.trace(decay=momentum, nesterov=nesterov) if momentum is not None
         else base.identity()))


def adagrad(learning_rate, initial_accumulator_value=0.1, eps=1e-7):
    """Adagrad (Duchi et al., 2011): per-coordinate steps shrinking with the gradients seen."""
    return base.chain(
        transforms.scale_by_rss(initial_accumulator_value=initial_accumulator_value, eps=eps),
        scale_by_learning_rate(learning_rate))


def lion(learning_rate, b1=0.9, b2=0.99, mu_dtype=None, weight_decay=1e-3, mask=None):
    """Lion (Chen et al., 2023): sign updates with decoupled weight decay."""
    return base.chain(
        transforms.scale_by_lion(b1=b1, b2=b2, mu_dtype=mu_dtype),
        add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate))


def sign_sgd(learning_rate):
    """SGD on the sign of the gradient."""
    return base.chain(scale_by_sign(), scale_by_learning_rate(learning_rate))


def optimistic_gradient_descent(learning_rate, alpha=1.0, beta=1.0):
    """Optimistic gradient descent (Mokhtari et al., 2020), for min-max games.

    Steps along (alpha + beta) * g_t - beta * g_{t-1}; on a bilinear game such as
    min_x max_y x * y, where simultaneous gradient descent-ascent spirals out, this converges.
    """
    return base.chain(transforms.scale_by_optimistic_gradient(alpha=alpha, beta=beta),
                      scale_by_learning_rate(learning_rate))
