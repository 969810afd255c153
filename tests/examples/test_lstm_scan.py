import numpy as np

import didax as jax
import didax.numpy as jnp
from didax import random
from didax._src.config import enable_x64


def test_scan_gradient_equals_unrolled_loop_gradient(load_example):
    lstm = load_example("lstm_scan")

    def unrolled_loss(params, inputs, targets):
        hidden = params["w_h"].shape[0]
        carry = (jnp.zeros((inputs.shape[1], hidden)),) * 2
        predictions = []
        for x in inputs:
            carry, h = lstm.lstm_cell(params, carry, x)
            predictions.append((h @ params["w_out"] + params["b_out"])[:, 0])
        return jnp.mean((jnp.stack(predictions) - targets) ** 2)

    with enable_x64():
        k_params, k_data = random.split(random.key(3))
        params = lstm.init_params(k_params, hidden=5)
        inputs, targets = lstm.sample_batch(k_data, batch_size=3, length=6)
        assert inputs.dtype == np.float64
        expected = jax.grad(unrolled_loss)(params, inputs, targets)
        actual = jax.jit(jax.grad(lstm.loss_fn))(params, inputs, targets)
        for name in params:
            np.testing.assert_allclose(actual[name], expected[name], rtol=1e-10, atol=1e-12,
                                       err_msg=name)
        np.testing.assert_allclose(lstm.loss_fn(params, inputs, targets),
                                   unrolled_loss(params, inputs, targets), rtol=1e-12)


def test_batches_are_noisy_shifted_sines(load_example):
    lstm = load_example("lstm_scan")
    inputs, targets = lstm.sample_batch(random.key(4), batch_size=64, length=30)
    assert inputs.shape == targets.shape == (30, 64)
    residual = np.asarray(inputs[1:] - targets[:-1])  # the noise on the clean values
    assert abs(residual.std() - lstm.NOISE) < 0.01
    assert abs(residual.mean()) < 0.01
