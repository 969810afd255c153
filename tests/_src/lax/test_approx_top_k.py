"""approx_top_k_p against JAX 0.10.2 on CPU (exact there): values and indices for the max and
the min, each reduction dimension, with and without aggregation to k; its derivative, vmap
against a loop, and jit."""
import jax
import numpy as np
import pytest

import didax
from didax import lax
from didax.test_util import check_grads

X = np.random.default_rng(0).permutation(3 * 1200).astype(np.float32).reshape(3, 1200) / 100


def _params(k=5, dim=-1, is_max=True, aggregate=True, recall=0.95, override=-1):
    return dict(k=k, reduction_dimension=dim, recall_target=recall, is_max_k=is_max,
                reduction_input_size_override=override, aggregate_to_topk=aggregate)


@pytest.mark.parametrize("params", [
    _params(), _params(dim=0, k=2, is_max=False), _params(aggregate=False, recall=0.9),
    _params(dim=1, is_max=False, aggregate=False, k=3),
])
def test_approx_top_k_p_matches_jax(params):
    got = lax.approx_top_k_p.bind(X, **params)
    want = jax.lax.approx_top_k_p.bind(X, **params)
    for g, w in zip(got, want):
        assert (g.shape, g.dtype, g.weak_type) == (w.shape, w.dtype, w.weak_type)
        np.testing.assert_array_equal(g, w)
    for g, w in zip(didax.jit(lambda v: lax.approx_top_k_p.bind(v, **params))(X), want):
        np.testing.assert_array_equal(g, w)


def test_approx_top_k_p_derivative_vmap_and_errors():
    x, params = X[:, :40], _params(k=3, is_max=False)
    t = np.cos(x)
    (_, _), (tv, _) = didax.jvp(lambda v: lax.approx_top_k_p.bind(v, **params), (x,), (t,))
    (_, _), (jtv, _) = jax.jvp(lambda v: jax.lax.approx_top_k_p.bind(v, **params), (x,), (t,))
    np.testing.assert_array_equal(tv, jtv)
    check_grads(lambda v: lax.approx_top_k_p.bind(v, **params)[0], (x,), order=2,
                modes=("fwd", "rev"))
    batched = didax.vmap(lambda v: lax.approx_top_k_p.bind(v, **_params(k=2, dim=0)), 1)(x)
    for j in range(x.shape[1]):
        v, i = lax.approx_top_k_p.bind(x[:, j], **_params(k=2, dim=0))
        np.testing.assert_array_equal(batched[0][j], v)
        np.testing.assert_array_equal(batched[1][j], i)
    with pytest.raises(ValueError, match="k must be in"):
        lax.approx_top_k_p.bind(x, **_params(k=41))
    with pytest.raises(TypeError, match="floating"):
        lax.approx_top_k_p.bind(np.arange(4), **_params(k=1))
