"""The regularized incomplete gamma and beta functions as elementwise primitives.

Why primitives and not compositions (as `zeta` is): their series and continued fractions run
a data-dependent number of steps, which NumPy does over the active elements only
(`incomplete_algorithms`); jit calls that impl. The derivative rules are JAX's: exact in x,
in a through `igamma_grad_a` for igamma/igammac, and none in a or b for `betainc` (JAX raises
`ValueError`). Beyond JAX, `igamma_grad_a` and `random_gamma_grad` differentiate in x.
"""
from __future__ import annotations

from didax._src.interpreters.jvp import defjvp
from didax._src.lax.base import naryop
from didax._src.lax.elementwise import (
    _SCALAR_TYPES,
    _lift_scalars,
    add,
    digamma,
    div,
    exp,
    lgamma,
    log,
    log1p,
    mul,
    neg,
    sub,
)
from didax._src.numerics import incomplete as incomplete_algorithms
from didax._src.typecheck import const_like, float_


def _impl(name):
    def impl(*args):
        return getattr(incomplete_algorithms, name)(*args)

    impl.__name__ = name
    return impl


def _binder(p):
    def wrapper(*args):
        if any(type(v) in _SCALAR_TYPES for v in args):
            args = _lift_scalars(*args)
        return p.bind(*args)

    wrapper.__name__ = p.name
    return wrapper


def _density(a, x):
    """dP(a, x)/dx = x^(a-1) e^-x / Gamma(a), written as JAX writes it."""
    return exp(sub(add(neg(x), mul(sub(a, const_like(a, 1)), log(x))), lgamma(a)))


def _no_derivative_in_a(name):
    def rule(g, *primals):
        raise NotImplementedError(
            f"Differentiation rule for '{name}' with respect to a not implemented (as in JAX): "
            "it needs the second derivative of the incomplete gamma function in a")
    return rule


igamma_p = naryop("igamma", float_, _impl("igamma"))
igamma = _binder(igamma_p)
igamma.__doc__ = "Elementwise regularized lower incomplete gamma function P(a, x)."

igammac_p = naryop("igammac", float_, _impl("igammac"))
igammac = _binder(igammac_p)
igammac.__doc__ = "Elementwise regularized upper incomplete gamma function Q(a, x) = 1 - P."

igamma_grad_a_p = naryop("igamma_grad_a", float_, _impl("igamma_grad_a"))
igamma_grad_a = _binder(igamma_grad_a_p)
igamma_grad_a.__doc__ = "Elementwise dP(a, x)/da."

random_gamma_grad_p = naryop("random_gamma_grad", float_, _impl("random_gamma_grad"))
random_gamma_grad = _binder(random_gamma_grad_p)
random_gamma_grad.__doc__ = ("Elementwise derivative of a Gamma(a, 1) sample x in a: "
                             "-(dP/da) / (dP/dx), the implicit reparameterization gradient.")

defjvp(igamma_p, lambda g, a, x: mul(g, igamma_grad_a(a, x)),
       lambda g, a, x: mul(g, _density(a, x)))
defjvp(igammac_p, lambda g, a, x: neg(mul(g, igamma_grad_a(a, x))),
       lambda g, a, x: neg(mul(g, _density(a, x))))
# d/dx dP/da = d/da dP/dx = dP/dx (log x - digamma(a))
defjvp(igamma_grad_a_p, _no_derivative_in_a("igamma_grad_a"),
       lambda g, a, x: mul(g, mul(_density(a, x), sub(log(x), digamma(a)))))
# r = -P_a / P_x: dr/dx = digamma(a) - log x - r ((a - 1) / x - 1)
defjvp(random_gamma_grad_p, _no_derivative_in_a("random_gamma_grad"),
       lambda g, a, x: mul(g, sub(sub(digamma(a), log(x)), mul(
           random_gamma_grad(a, x), sub(div(sub(a, const_like(a, 1)), x), const_like(x, 1))))))


betainc_p = naryop("regularized_incomplete_beta", float_, _impl("betainc"))
betainc = _binder(betainc_p)
betainc.__doc__ = "Elementwise regularized incomplete beta function I_x(a, b)."


def _betainc_not_in_ab(g, a, b, x):
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_dx(g, a, b, x):
    one = const_like(a, 1)
    lbeta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    return mul(g, exp(sub(add(mul(sub(b, one), log1p(neg(x))), mul(sub(a, one), log(x))),
                          lbeta)))


defjvp(betainc_p, _betainc_not_in_ab, _betainc_not_in_ab, _betainc_dx)
