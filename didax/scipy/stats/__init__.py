"""Mirrors `jax.scipy.stats`: one submodule per distribution."""
from didax._src.scipy.stats.descriptive import ModeResult, mode, rankdata, sem  # noqa: F401
from didax._src.scipy.stats.kde import gaussian_kde  # noqa: F401
from didax.scipy.stats import (
    bernoulli,  # noqa: F401
    beta,  # noqa: F401
    betabinom,  # noqa: F401
    binom,  # noqa: F401
    cauchy,  # noqa: F401
    chi2,  # noqa: F401
    dirichlet,  # noqa: F401
    expon,  # noqa: F401
    gamma,  # noqa: F401
    gennorm,  # noqa: F401
    geom,  # noqa: F401
    gumbel_l,  # noqa: F401
    gumbel_r,  # noqa: F401
    laplace,  # noqa: F401
    logistic,  # noqa: F401
    multinomial,  # noqa: F401
    multivariate_normal,  # noqa: F401
    nbinom,  # noqa: F401
    norm,  # noqa: F401
    pareto,  # noqa: F401
    poisson,  # noqa: F401
    t,  # noqa: F401
    truncnorm,  # noqa: F401
    uniform,  # noqa: F401
    vonmises,  # noqa: F401
    wrapcauchy,  # noqa: F401
)
