"""didax.scipy.cluster.vq.vq: vector quantization, i.e. each observation's nearest code (by
Euclidean distance) in a code book, as `jax.scipy.cluster.vq.vq`."""
from __future__ import annotations

from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import check_arraylike, promote_dtypes_inexact

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
    """(code, dist): for each row of `obs` (M, N), the index of the nearest row of
    `code_book` (K, N) and the Euclidean distance to it. 1-D inputs are read as M and K
    observations and codes of length 1. `check_finite` is accepted and ignored, as in JAX."""
    del check_finite  # (as in JAX: no check, which could not run under jit anyway)
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs, code_book = promote_dtypes_inexact(obs, code_book)
    if obs.ndim != code_book.ndim:
        raise ValueError(f"Observation and code_book should have the same rank, got obs of "
                         f"shape {tuple(obs.shape)} and code_book of shape "
                         f"{tuple(code_book.shape)}")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError(f"ndim different than 1 or 2 are not supported: obs and code_book "
                         f"have {obs.ndim} dimensions (shapes {tuple(obs.shape)} and "
                         f"{tuple(code_book.shape)}); pass (M, N) observations and (K, N) "
                         f"codes")
    n_obs, n_code = obs.shape[1], code_book.shape[1]
    if n_obs != n_code and 1 not in (n_obs, n_code):  # (1 broadcasts, as in JAX)
        raise TypeError(f"scipy.cluster.vq.vq: observations and codes have different numbers "
                        f"of features: obs has shape {tuple(obs.shape)}, code_book "
                        f"{tuple(code_book.shape)}; their last dimensions must be equal")
    dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)  # (M, K)
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
