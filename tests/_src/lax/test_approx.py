"""approx_max_k and approx_min_k: values, indices, shapes and dtypes against JAX on CPU
(exact top k), the candidate counts kept without aggregation (against JAX's shapes over
sizes, ranks, k, recall targets and size overrides), errors, jit, vmap and derivatives."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax import lax as jlax
from jax_absent import needs_jax

import didax
from didax import lax
from didax._src.config import enable_x64
from didax.test_util import check_grads

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 50)).astype(np.float32)


def assert_same(got, want):
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g, np.float32), np.asarray(w, np.float32))


@pytest.mark.parametrize("name", ["approx_max_k", "approx_min_k"])
@pytest.mark.parametrize("kwargs", [dict(k=5), dict(k=2, reduction_dimension=0),
                                    dict(k=2, reduction_dimension=-2),
                                    dict(k=3, aggregate_to_topk=False),
                                    dict(k=4, recall_target=0.5)])
def test_against_jax(name, kwargs):
    assert_same(getattr(lax, name)(X, **kwargs), getattr(jlax, name)(X, **kwargs))


@needs_jax  # (NumPy probes JAX's bfloat16 as a dtype)
def test_ties_nans_and_dtypes_against_jax():
    for x in [np.array([3., 1, 3, 2, 3], np.float32), np.array([3., 1, 3, 1, 3], np.float16),
              X.astype(jjnp.bfloat16)]:
        assert_same(lax.approx_max_k(x, 3), jlax.approx_max_k(x, 3))
        assert_same(lax.approx_min_k(x, 3), jlax.approx_min_k(x, 3))
    x = np.array([1., np.nan, 3., 3., -np.inf, np.inf], np.float32)
    assert_same(lax.approx_max_k(x, 3), jlax.approx_max_k(x, 3))


def _kept_shape(shape, k, recall, override):
    return didax.eval_shape(lambda x: lax.approx_max_k(
        x, k, recall_target=recall, aggregate_to_topk=False,
        reduction_input_size_override=override), didax.ShapeDtypeStruct(shape, np.float32)
    )[0].shape


@pytest.mark.parametrize("rank", [1, 2])
def test_candidates_kept_without_aggregation_match_jax(rank):
    for n in (100, 129, 257, 1000, 1025, 2000, 4096, 10000):
        for k in (1, 2, 10, 50):
            for recall in (0.5, 0.95, 0.99, 1.0):
                for override in (-1, 3 * n):
                    shape = (n,) if rank == 1 else (2, n)
                    spec = jax.ShapeDtypeStruct(shape, np.float32)
                    want = jax.eval_shape(lambda x: jlax.approx_max_k(  # noqa: B023
                        x, k, recall_target=recall, aggregate_to_topk=False,  # noqa: B023
                        reduction_input_size_override=override), spec)[0].shape  # noqa: B023
                    if want[-1] > n:  # JAX's shape, whose computation then fails
                        with pytest.raises(ValueError, match="override"):
                            _kept_shape(shape, k, recall, override)
                    else:
                        assert _kept_shape(shape, k, recall, override) == want, (
                            n, rank, k, recall, override)


def test_unaggregated_values_are_the_exact_best_candidates():
    x = RNG.standard_normal((2, 5000)).astype(np.float32)
    assert_same(lax.approx_max_k(x, 3, aggregate_to_topk=False),
                jlax.approx_max_k(x, 3, aggregate_to_topk=False))


@pytest.mark.parametrize("kwargs, error", [
    (dict(k=0), ValueError), (dict(k=51), ValueError),
    (dict(k=5, reduction_dimension=2), IndexError),
])
def test_errors_match_jax(kwargs, error):
    with pytest.raises(error):
        jlax.approx_max_k(X, **kwargs)
    with pytest.raises(error):
        lax.approx_max_k(X, **kwargs)


@pytest.mark.parametrize("kwargs", [dict(recall_target=0.0), dict(recall_target=1.5),
                                    dict(reduction_input_size_override=10)])
def test_out_of_range_settings_raise(kwargs):
    with pytest.raises(ValueError, match="approx_max_k"):
        lax.approx_max_k(X, 5, **kwargs)


def test_integer_operands_are_rejected_as_in_jax():
    xi = np.arange(10, dtype=np.int32)
    with pytest.raises(ValueError, match="floating"):
        jlax.approx_max_k(xi, 3)
    with pytest.raises(ValueError, match="floating"):
        lax.approx_max_k(xi, 3)


def test_jit_and_vmap():
    f = lambda x: lax.approx_min_k(x, 4)  # noqa: E731
    assert_same(didax.jit(f)(X), f(X))
    got = didax.vmap(f)(X)
    want = [np.stack([np.asarray(f(x)[i]) for x in X]) for i in range(2)]
    assert_same(got, want)


def test_derivatives_against_jax_and_finite_differences():
    g = didax.grad(lambda x: lax.approx_max_k(x, 5)[0].sum())(X[0])
    want = jax.grad(lambda x: jlax.approx_max_k(x, 5)[0].sum())(X[0])
    np.testing.assert_array_equal(np.asarray(g), np.asarray(want))
    with enable_x64(True):
        check_grads(lambda x: lax.approx_min_k(x, 3)[0], (X[0].astype(np.float64),), order=2,
                    modes=("fwd", "rev"))
