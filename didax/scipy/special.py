"""Mirrors `jax.scipy.special`."""
from didax._src.scipy.faddeeva import wofz  # noqa: F401
from didax._src.scipy.hyp1f1 import hyp1f1  # noqa: F401
from didax._src.scipy.hyp2f1 import hyp2f1  # noqa: F401
from didax._src.scipy.special import (  # noqa: F401
    bernoulli,
    beta,
    betainc,
    betaln,
    boxcox,
    boxcox1p,
    comb,
    digamma,
    entr,
    erf,
    erfc,
    erfinv,
    expit,
    factorial,
    gamma,
    gammainc,
    gammaincc,
    gammaln,
    gammasgn,
    kl_div,
    log_ndtr,
    log_softmax,
    loggamma,
    logit,
    logsumexp,
    multigammaln,
    ndtr,
    ndtri,
    poch,
    polygamma,
    rel_entr,
    softmax,
    xlog1py,
    xlogy,
    zeta,
)
from didax._src.scipy.special_bessel import bessel_jn, i0, i0e, i1, i1e  # noqa: F401
from didax._src.scipy.special_harmonics import sph_harm_y  # noqa: F401
from didax._src.scipy.special_integrals import (  # noqa: F401
    dawsn,
    erfcx,
    exp1,
    expi,
    expn,
    fresnel,
    sici,
    spence,
)
from didax._src.scipy.special_owens import owens_t  # noqa: F401
