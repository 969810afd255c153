"""Gaussian kernel density estimation (jax.scipy.stats.gaussian_kde): a weighted mixture of
normals centred on the data points, all with the data's weighted covariance scaled by the
squared bandwidth factor (Scott's or Silverman's rule, a number, or a function of the
estimator). A pytree, so it passes through jit and vmap."""
from __future__ import annotations

import numpy as np

from didax._src import random
from didax._src.nn.functions import logsumexp
from didax._src.numpy import namespace as jnp
from didax._src.scipy.special import ndtr
from didax._src.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]


def _log_normal_mixture(points, centres, weights, cov):
    """log sum_i weights_i N(points; centres_i, cov) for points (d, m), centres (d, n)."""
    d = centres.shape[0]
    chol = jnp.linalg.cholesky(cov)
    diff = centres[:, :, None] - points[:, None, :]  # (d, n, m)
    white = jnp.linalg.solve(chol, diff.reshape(d, -1)).reshape(diff.shape)
    energy = jnp.sum(white * white, axis=0) / 2  # (n, m)
    log_norm = jnp.sum(jnp.log(jnp.diagonal(chol))) + d / 2 * np.log(2 * np.pi)
    return logsumexp(-energy, axis=0, b=weights[:, None]) - log_norm


@register_pytree_node_class
class gaussian_kde:
    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = jnp.atleast_2d(dataset)
        if not jnp.issubdtype(dataset.dtype, jnp.inexact):
            dataset = dataset.astype(jnp.result_type(float))
        if dataset.size <= 1:
            raise ValueError("gaussian_kde: the dataset needs more than one element")
        d, n = dataset.shape
        if weights is None:
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        else:
            weights = jnp.atleast_1d(weights).astype(dataset.dtype)
            if weights.ndim != 1 or weights.shape[0] != n:
                raise ValueError(f"gaussian_kde: weights of shape {weights.shape} do not match "
                                 f"the {n} data points (dataset shape {dataset.shape})")
            weights = weights / jnp.sum(weights)
        self.dataset, self.weights, self.d, self.n = dataset, weights, d, n
        self.neff = 1 / jnp.sum(weights ** 2)
        if bw_method is None or bw_method == "scott":
            factor = self.neff ** (-1.0 / (d + 4))
        elif bw_method == "silverman":
            factor = (self.neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif callable(bw_method):
            factor = bw_method(self)
        elif isinstance(bw_method, str):
            raise ValueError("gaussian_kde: bw_method must be 'scott', 'silverman', a scalar or "
                             f"a callable, got {bw_method!r}")
        else:
            factor = bw_method
        data_cov = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        self.covariance = data_cov * factor ** 2
        self.inv_cov = jnp.linalg.inv(self.covariance)

    def tree_flatten(self):
        return ((self.neff, self.dataset, self.weights, self.covariance, self.inv_cov),
                (self.d, self.n))

    @classmethod
    def tree_unflatten(cls, aux, children):
        kde = object.__new__(cls)
        kde.neff, kde.dataset, kde.weights, kde.covariance, kde.inv_cov = children
        kde.d, kde.n = aux
        return kde

    def _points(self, points):
        points = jnp.atleast_2d(jnp.asarray(points)).astype(self.dataset.dtype)
        if points.shape[0] != self.d:
            if points.shape == (1, self.d):
                return points.T
            raise ValueError(f"points have dimension {points.shape[0]}, dataset has dimension "
                             f"{self.d}")
        return points

    def logpdf(self, points):
        return _log_normal_mixture(self._points(points), self.dataset, self.weights,
                                   self.covariance)

    def evaluate(self, points):
        return jnp.exp(self.logpdf(points))

    __call__ = evaluate
    pdf = evaluate

    def integrate_gaussian(self, mean, cov):
        """The integral of the estimate times the normal density N(mean, cov)."""
        mean = jnp.atleast_1d(jnp.squeeze(jnp.asarray(mean)))
        cov = jnp.atleast_2d(jnp.asarray(cov))
        if mean.shape != (self.d,) or cov.shape != (self.d, self.d):
            raise ValueError(f"integrate_gaussian: mean {mean.shape} and cov {cov.shape} must "
                             f"have shapes ({self.d},) and ({self.d}, {self.d})")
        return jnp.exp(_log_normal_mixture(mean[:, None], self.dataset, self.weights,
                                           self.covariance + cov))[0]

    def integrate_box_1d(self, low, high):
        """The estimate's mass between low and high (one-dimensional data only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        sd = jnp.sqrt(self.covariance[0, 0])
        x = self.dataset[0]
        return jnp.sum(self.weights * (ndtr((high - x) / sd) - ndtr((low - x) / sd)))

    def integrate_kde(self, other):
        """The integral of the product of two estimates."""
        if other.d != self.d:
            raise ValueError(f"integrate_kde: the estimates have dimensions {self.d} and "
                             f"{other.d}")
        log_terms = _log_normal_mixture(other.dataset, self.dataset, self.weights,
                                        self.covariance + other.covariance)
        return jnp.sum(other.weights * jnp.exp(log_terms))

    def resample(self, key, shape=()):
        """Draws (d, *shape): a data point chosen by weight plus normal noise."""
        ind_key, eps_key = random.split(key)
        index = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(eps_key, jnp.zeros(self.d, self.dataset.dtype),
                                           self.covariance, shape=shape)
        return self.dataset[:, index] + jnp.moveaxis(noise, -1, 0)

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        raise NotImplementedError("gaussian_kde.integrate_box: only 1D box integrations are "
                                  "supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        raise NotImplementedError("gaussian_kde.set_bandwidth: the bandwidth is fixed at "
                                  "construction; build a new gaussian_kde instead")
