"""didax.nn.initializers: the same key gives JAX's numbers (literals recorded by running JAX
0.10.2), sample variances are scale / fan, orthogonal matrices are orthogonal."""
import numpy as np
import pytest

import didax
from didax import random
from didax._src.config import enable_x64
from didax.nn import initializers as init

KEY = random.PRNGKey(0)

# (initializer, shape, values JAX gives for PRNGKey(0) in float32)
JAX_VALUES = [
    (init.glorot_normal(), (2, 3),
     [[1.0468423, 1.2329134, -0.29671577], [-0.053949434, 0.12079362, -0.65617436]]),
    (init.he_uniform(), (3, 2),
     [[1.2661935, 1.3536283], [-0.47435132, -0.08861897], [0.19767512, -0.9461003]]),
    (init.orthogonal(), (3, 2),
     [[0.96083665, 0.18604839], [-0.25675002, 0.3188112], [0.10427104, -0.92937905]]),
    (init.variance_scaling(2.0, "fan_avg", "uniform", in_axis=0, out_axis=2), (2, 2, 3),
     [[[0.9807893, 1.048516, -0.36743096], [-0.068643965, 0.1531185, -0.7328462]],
      [[-0.4158428, 0.4151311, 0.5406385], [-0.720771, 1.063357, -1.0400537]]]),
    (init.truncated_normal(2.0), (2, 3),
     [[2.9119184, 3.4294975, -0.8253507], [-0.15006687, 0.33600202, -1.8252282]]),
    (init.uniform(), (3,), [0.00947667, 0.009785798, 0.0033229147]),
]


@pytest.mark.parametrize("case", range(len(JAX_VALUES)))
def test_values_match_jax(case):
    initializer, shape, expected = JAX_VALUES[case]
    got = initializer(KEY, shape)
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


def test_values_match_jax_float64_and_complex():
    key = random.PRNGKey(1)
    with enable_x64():
        np.testing.assert_allclose(
            init.glorot_uniform()(key, (2, 2), np.float64),
            [[-0.935337054083521, -0.11326748156249747],
             [0.1679187872189488, 0.8102762247760822]], rtol=1e-14)
        np.testing.assert_allclose(
            init.lecun_normal()(key, (2, 2), np.float64),
            [[-0.8847821313533839, -0.08911921717802317],
             [0.132445693813341, 0.7228895854324693]], rtol=1e-13)
    got = init.he_normal()(key, (2, 2), np.complex64)
    assert np.asarray(got).dtype == np.complex64
    np.testing.assert_allclose(got, [[-0.93332183 + 0.645957j, -0.5119521 - 0.1624225j],
                                     [0.2287241 + 1.3173325j, 0.2018841 + 0.4018157j]],
                               rtol=1e-6)
    got = init.orthogonal(column_axis=0)(key, (2, 3), np.complex64)
    np.testing.assert_allclose(
        got, [[0.20248616 - 0.09285008j, 0.34535459 - 0.29056001j, -0.7374894 + 0.45032516j],
              [-0.3562598 + 0.30032527j, -0.133421 - 0.80234504j, -0.08781244 - 0.33706686j]],
        rtol=1e-5, atol=1e-6)


# (initializer, expected variance for SHAPE = (fan_in, fan_out) = (300, 200))
SHAPE = (300, 200)
VARIANCES = {
    "glorot_normal": (init.glorot_normal(), 2 / 500),
    "glorot_uniform": (init.glorot_uniform(), 2 / 500),
    "he_normal": (init.he_normal(), 2 / 300),
    "he_uniform": (init.he_uniform(), 2 / 300),
    "lecun_normal": (init.lecun_normal(), 1 / 300),
    "lecun_uniform": (init.lecun_uniform(), 1 / 300),
    "fan_out_normal": (init.variance_scaling(3.0, "fan_out", "normal"), 3 / 200),
    "fan_geo_avg": (init.variance_scaling(1.0, "fan_geo_avg", "uniform"), 1 / np.sqrt(6e4)),
    "normal": (init.normal(0.5), 0.25),
    "uniform": (init.uniform(2.0), 4 / 12),
}


@pytest.mark.parametrize("name", sorted(VARIANCES))
def test_sample_variance(name):
    initializer, variance = VARIANCES[name]
    w = np.asarray(initializer(KEY, SHAPE), np.float64)
    # 60000 samples: the sample variance is within 2% (about 3.5 standard errors).
    assert np.var(w) == pytest.approx(variance, rel=0.02)
    if name != "uniform":
        assert abs(np.mean(w)) < 4 * np.sqrt(variance / w.size)


def test_truncated_normal_bounds_and_variance():
    w = np.asarray(init.glorot_normal()(KEY, SHAPE))
    stddev = np.sqrt(2 / 500) / 0.87962566103423978  # before truncation at 2 stddev
    assert np.all(np.abs(w) < 2 * stddev)
    assert np.all(np.abs(np.asarray(init.he_uniform()(KEY, SHAPE))) <= np.sqrt(6 / 300))


def test_complex_variance():
    w = np.asarray(init.glorot_uniform()(KEY, SHAPE, np.complex64))
    assert w.dtype == np.complex64
    assert np.mean(np.abs(w) ** 2) == pytest.approx(2 / 500, rel=0.02)
    w = np.asarray(init.lecun_normal()(KEY, SHAPE, np.complex64))
    assert np.mean(np.abs(w) ** 2) == pytest.approx(1 / 300, rel=0.02)


def test_fans_of_convolution_kernels():
    # HWIO kernel: fan_in = 3 * 3 * 16, fan_out = 3 * 3 * 32 (the window is the receptive field).
    w = np.asarray(init.variance_scaling(1.0, "fan_in", "normal")(KEY, (3, 3, 16, 32)))
    assert np.var(w) == pytest.approx(1 / 144, rel=0.05)
    # A batch axis is excluded from both fans; tuple axes multiply.
    w = np.asarray(init.variance_scaling(1.0, "fan_out", "normal", in_axis=(1, 2), out_axis=3,
                                         batch_axis=0)(KEY, (10, 8, 4, 250)))
    assert np.var(w) == pytest.approx(1 / 250, rel=0.05)


def _assert_orthonormal_columns(q, rtol=1e-5):
    q = np.asarray(q, np.complex128)
    np.testing.assert_allclose(q.conj().T @ q, np.eye(q.shape[1]), atol=rtol)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5)])
def test_orthogonal(shape):
    q = np.asarray(init.orthogonal(scale=2.0)(KEY, shape))
    assert q.shape == shape and q.dtype == np.float32
    _assert_orthonormal_columns((q if shape[0] >= shape[1] else q.T) / 2)
    with enable_x64():
        q64 = np.asarray(init.orthogonal()(KEY, shape, np.float64))
    _assert_orthonormal_columns(q64 if shape[0] >= shape[1] else q64.T, rtol=1e-13)


def test_orthogonal_column_axis_and_higher_rank():
    # As a (2 * 3) x 8 matrix of rows and columns (column_axis 0), fewer rows than columns:
    # orthonormal rows, i.e. orthonormal columns of its transpose q.reshape(8, 6).
    q = np.asarray(init.orthogonal(column_axis=0)(KEY, (8, 2, 3)))
    _assert_orthonormal_columns(q.reshape(8, 6))
    q = np.asarray(init.orthogonal()(KEY, (2, 3, 10)))
    _assert_orthonormal_columns(q.reshape(6, 10).T)
    u = np.asarray(init.orthogonal()(KEY, (7, 4), np.complex64))
    _assert_orthonormal_columns(u)
    assert np.asarray(init.orthogonal()(KEY, (0, 3))).shape == (0, 3)


def test_delta_orthogonal():
    w = np.array(init.delta_orthogonal()(KEY, (3, 3, 4, 6)))
    centre = w[1, 1]
    _assert_orthonormal_columns(centre.T)
    w[1, 1] = 0
    assert not w.any()
    w = np.asarray(init.delta_orthogonal()(KEY, (4, 5, 5)))
    _assert_orthonormal_columns(w[1])
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        init.delta_orthogonal()(KEY, (4, 4))
    with pytest.raises(ValueError, match="fan_in"):
        init.delta_orthogonal()(KEY, (3, 6, 4))


def test_constants_and_dtypes():
    assert np.asarray(init.zeros(KEY, (2, 3))).dtype == np.float32
    np.testing.assert_array_equal(init.ones(KEY, (2,), np.int32), [1, 1])
    np.testing.assert_array_equal(init.constant(-0.5)(KEY, (2, 2)), np.full((2, 2), -0.5))
    assert np.asarray(init.constant(3, dtype=np.int8)(KEY, (2,))).dtype == np.int8
    assert np.asarray(init.normal()(KEY, (2,), np.float16)).dtype == np.float16
    assert np.asarray(init.glorot_normal(dtype=np.float16)(KEY, (2, 2))).dtype == np.float16
    with enable_x64():
        assert np.asarray(init.he_normal()(KEY, (2, 2))).dtype == np.float64
    assert init.xavier_normal is init.glorot_normal and init.kaiming_uniform is init.he_uniform
    assert isinstance(init.lecun_normal(), init.Initializer)


def test_errors():
    with pytest.raises(ValueError, match="at least 2D"):
        init.glorot_normal()(KEY, (5,))
    np.testing.assert_equal(np.asarray(init.lecun_normal(in_axis=0, out_axis=0)(KEY, (5,))).shape,
                            (5,))
    with pytest.raises(ValueError, match="invalid mode"):
        init.variance_scaling(1.0, "fan_max", "normal")(KEY, (2, 2))
    with pytest.raises(ValueError, match="invalid distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")(KEY, (2, 2))
    with pytest.raises(ValueError, match="2D"):
        init.orthogonal()(KEY, (4,))


def test_jit_and_vmap_over_keys():
    keys = random.split(KEY, 3)
    eager = np.stack([np.asarray(init.orthogonal()(k, (4, 3))) for k in keys])
    np.testing.assert_allclose(didax.vmap(lambda k: init.orthogonal()(k, (4, 3)))(keys), eager,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(didax.jit(lambda k: init.glorot_normal()(k, (4, 3)))(KEY),
                               init.glorot_normal()(KEY, (4, 3)), rtol=1e-6)
