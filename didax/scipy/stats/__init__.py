"""Mirrors `jax.scipy.stats`: one submodule per distribution."""
from didax.scipy.stats import norm  # noqa: F401
from didax.scipy.stats import beta  # noqa: F401
from didax.scipy.stats import chi2  # noqa: F401
from didax.scipy.stats import gamma  # noqa: F401
from didax.scipy.stats import t  # noqa: F401
from didax.scipy.stats import poisson  # noqa: F401
from didax.scipy.stats import dirichlet  # noqa: F401
from didax.scipy.stats import multivariate_normal  # noqa: F401
from didax.scipy.stats import expon  # noqa: F401
from didax.scipy.stats import laplace  # noqa: F401
from didax.scipy.stats import logistic  # noqa: F401
from didax.scipy.stats import cauchy  # noqa: F401
from didax.scipy.stats import uniform  # noqa: F401
