"""Mirrors `jax.scipy.special`."""
from didax._src.scipy.special import (  # noqa: F401
    bernoulli, beta, betaln, boxcox, boxcox1p, comb, digamma, entr, erf, erfc, erfinv, expit,
    factorial, gamma, gammaln, gammasgn, kl_div, log_ndtr, log_softmax, loggamma, logit,
    logsumexp, multigammaln, ndtr, ndtri, poch, polygamma, rel_entr, softmax, xlog1py, xlogy,
    zeta,
)
