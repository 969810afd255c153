"""Every optimizer against its update rule written out in NumPy (float64), over a few steps on
a dict of parameters; and optimizer steps under jit, vmap and grad."""
import numpy as np
import pytest

import didax
import didax.numpy as jnp
import didax.optim as optim
from didax._src.config import enable_x64

RNG = np.random.default_rng(0)
PARAMS = {"w": RNG.normal(size=(3, 2)).astype(np.float32),
          "b": RNG.normal(size=(2,)).astype(np.float32)}
GRADS = [{k: RNG.normal(size=v.shape).astype(np.float32) for k, v in PARAMS.items()}
         for _ in range(4)]
LR = 0.05


def run_didax(opt):
    """Updates (as NumPy) of `opt` over GRADS, applying each to the params."""
    params = {k: jnp.asarray(v) for k, v in PARAMS.items()}
    state = opt.init(params)
    steps = []
    for grads in GRADS:
        updates, state = opt.update({k: jnp.asarray(v) for k, v in grads.items()}, state,
                                    params)
        assert {k: u.dtype for k, u in updates.items()} == {"w": np.float32, "b": np.float32}
        params = optim.apply_updates(params, updates)
        steps.append({k: np.asarray(u) for k, u in updates.items()})
    return steps, state


def run_reference(step):
    """Runs `step(g, p, state, t) -> update` on each leaf in float64; t counts from 1."""
    params = {k: v.astype(np.float64) for k, v in PARAMS.items()}
    states = {k: {} for k in PARAMS}
    steps = []
    for t, grads in enumerate(GRADS, start=1):
        updates = {k: step(grads[k].astype(np.float64), params[k], states[k], t) for k in PARAMS}
        params = {k: params[k] + updates[k] for k in PARAMS}
        steps.append(updates)
    return steps


def adam_moments(g, s, b1, b2):
    s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
    return s["m"], s["v"]


def adam_step(lr=LR, b1=0.9, b2=0.999, eps=1e-8, nesterov=False, wd=0.0):
    def step(g, p, s, t):
        m, v = adam_moments(g, s, b1, b2)
        if nesterov:
            m_hat = b1 * m / (1 - b1 ** (t + 1)) + (1 - b1) * g / (1 - b1 ** t)
        else:
            m_hat = m / (1 - b1 ** t)
        v_hat = v / (1 - b2 ** t)
        return -lr * (m_hat / (np.sqrt(v_hat) + eps) + wd * p)
    return step


def sgd_step(momentum=None, nesterov=False):
    def step(g, p, s, t):
        if momentum is None:
            return -LR * g
        s["trace"] = g + momentum * s.get("trace", 0.0)
        return -LR * (g + momentum * s["trace"] if nesterov else s["trace"])
    return step


def rmsprop_step(decay=0.9, eps=1e-8, centered=False, momentum=None, bias_corrected=False):
    def step(g, p, s, t):
        s["v"] = decay * s.get("v", 0.0) + (1 - decay) * g * g
        s["m"] = decay * s.get("m", 0.0) + (1 - decay) * g
        if bias_corrected:  # and eps outside the square root
            return -LR * g / (np.sqrt(s["v"] / (1 - decay ** t)) + eps)
        var = s["v"] - s["m"] ** 2 if centered else s["v"]
        u = -LR * g / np.sqrt(var + eps)
        if momentum is not None:
            s["trace"] = u + momentum * s.get("trace", 0.0)
            u = s["trace"]
        return u
    return step


def adagrad_step(init=0.1, eps=1e-7):
    def step(g, p, s, t):
        s["sum"] = s.get("sum", init) + g * g
        return -LR * g / np.sqrt(s["sum"] + eps)
    return step


def adamax_step(b1=0.9, b2=0.999, eps=1e-8):
    def step(g, p, s, t):
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["u"] = np.maximum(np.abs(g) + eps, b2 * s.get("u", 0.0))
        return -LR * s["m"] / (1 - b1 ** t) / s["u"]
    return step


def amsgrad_step(b1=0.9, b2=0.999, eps=1e-8):
    def step(g, p, s, t):
        m, v = adam_moments(g, s, b1, b2)
        s["v_max"] = np.maximum(s.get("v_max", 0.0), v / (1 - b2 ** t))
        return -LR * (m / (1 - b1 ** t)) / (np.sqrt(s["v_max"]) + eps)
    return step


def adabelief_step(b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16):
    def step(g, p, s, t):
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["s"] = b2 * s.get("s", 0.0) + (1 - b2) * (g - s["m"]) ** 2 + eps_root
        m_hat, s_hat = s["m"] / (1 - b1 ** t), s["s"] / (1 - b2 ** t)
        return -LR * m_hat / (np.sqrt(s_hat) + eps)
    return step


def lion_step(b1=0.9, b2=0.99, wd=1e-3):
    def step(g, p, s, t):
        m = s.get("m", 0.0)
        u = -LR * (np.sign((1 - b1) * g + b1 * m) + wd * p)
        s["m"] = b2 * m + (1 - b2) * g
        return u
    return step


def optimistic_step(alpha=1.0, beta=1.0):
    def step(g, p, s, t):
        previous = s.get("previous", g)
        s["previous"] = g
        return -LR * ((alpha + beta) * g - beta * previous)
    return step


def scheduled_adam_step():
    inner = adam_step(lr=1.0)
    return lambda g, p, s, t: LR * 0.5 ** ((t - 1) / 2) * inner(g, p, s, t)


CASES = {
    "sgd": (optim.sgd(LR), sgd_step()),
    "sgd_momentum": (optim.sgd(LR, momentum=0.9), sgd_step(0.9)),
    "sgd_nesterov": (optim.sgd(LR, momentum=0.9, nesterov=True), sgd_step(0.9, True)),
    "adam": (optim.adam(LR), adam_step()),
    "adam_b1_b2_eps": (optim.adam(LR, b1=0.5, b2=0.9, eps=1e-3), adam_step(b1=0.5, b2=0.9,
                                                                           eps=1e-3)),
    "adam_scheduled": (optim.adam(optim.exponential_decay(LR, 2, 0.5)), scheduled_adam_step()),
    "nadam": (optim.nadam(LR), adam_step(nesterov=True)),
    "adamw": (optim.adamw(LR, weight_decay=0.1), adam_step(wd=0.1)),
    "nadamw": (optim.nadamw(LR, weight_decay=0.1), adam_step(nesterov=True, wd=0.1)),
    "rmsprop": (optim.rmsprop(LR), rmsprop_step()),
    "rmsprop_centered_momentum": (optim.rmsprop(LR, decay=0.8, centered=True, momentum=0.5),
                                  rmsprop_step(decay=0.8, centered=True, momentum=0.5)),
    "rmsprop_bias_corrected": (optim.rmsprop(LR, eps=1e-3, eps_in_sqrt=False,
                                             bias_correction=True),
                               rmsprop_step(eps=1e-3, bias_corrected=True)),
    "adagrad": (optim.adagrad(LR), adagrad_step()),
    "adamax": (optim.adamax(LR), adamax_step()),
    "adamax_large_eps": (optim.adamax(LR, eps=0.5), adamax_step(eps=0.5)),
    "amsgrad": (optim.amsgrad(LR), amsgrad_step()),
    "adabelief": (optim.adabelief(LR), adabelief_step()),
    "adabelief_large_eps": (optim.adabelief(LR, eps=1e-3, eps_root=1e-2),
                            adabelief_step(eps=1e-3, eps_root=1e-2)),
    "lion": (optim.lion(LR), lion_step()),
    "sign_sgd": (optim.sign_sgd(LR), lambda g, p, s, t: -LR * np.sign(g)),
    "optimistic_gradient_descent": (optim.optimistic_gradient_descent(LR), optimistic_step()),
    "optimistic_alpha_beta": (optim.optimistic_gradient_descent(LR, alpha=0.5, beta=2.0),
                              optimistic_step(0.5, 2.0)),
}


@pytest.mark.parametrize("name", CASES)
def test_updates_follow_the_written_out_rule(name):
    opt, reference_step = CASES[name]
    got, _ = run_didax(opt)
    want = run_reference(reference_step)
    for t, (g, w) in enumerate(zip(got, want)):
        for k in PARAMS:
            np.testing.assert_allclose(g[k], w[k], rtol=2e-5, atol=2e-7,
                                       err_msg=f"{name}, step {t}, leaf {k}")


def test_adam_state_is_a_pytree_of_count_and_moments():
    _, (adam_state, lr_state) = run_didax(optim.adam(LR))
    assert isinstance(adam_state, optim.ScaleByAdamState) and lr_state == optim.EmptyState()
    assert adam_state.count.dtype == np.int32 and int(adam_state.count) == len(GRADS)
    assert adam_state.mu["w"].dtype == np.float32 and adam_state.nu["b"].shape == (2,)
    m = sum(0.1 * 0.9 ** (len(GRADS) - 1 - i) * g["w"].astype(np.float64)
            for i, g in enumerate(GRADS))
    np.testing.assert_allclose(adam_state.mu["w"], m, rtol=1e-5)


def test_adamw_mask_leaves_unmasked_leaves_undecayed():
    masked, _ = run_didax(optim.adamw(LR, weight_decay=0.1, mask={"w": True, "b": False}))
    masked_fn, _ = run_didax(optim.adamw(LR, weight_decay=0.1,
                                         mask=lambda p: {"w": True, "b": False}))
    want = {"w": run_reference(adam_step(wd=0.1)), "b": run_reference(adam_step())}
    for t in range(len(GRADS)):
        for k in PARAMS:
            np.testing.assert_allclose(masked[t][k], want[k][t][k], rtol=2e-5)
            np.testing.assert_allclose(masked_fn[t][k], want[k][t][k], rtol=2e-5)


def test_float64_params_under_x64_keep_their_dtype():
    with enable_x64():
        params = {"w": jnp.asarray(PARAMS["w"], dtype=jnp.float64)}
        opt = optim.adam(LR)
        state = opt.init(params)
        updates, state = opt.update({"w": jnp.asarray(GRADS[0]["w"], jnp.float64)}, state)
        assert updates["w"].dtype == np.float64 and state[0].count.dtype == np.int32
        np.testing.assert_allclose(updates["w"], -LR * np.sign(GRADS[0]["w"]), rtol=1e-6)


def _train_step(opt):
    def step(params, state, grads):
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state
    return step


@pytest.mark.parametrize("name", ["adamw", "rmsprop_centered_momentum",
                                  "optimistic_gradient_descent", "adam_scheduled"])
def test_optimizer_state_passes_through_jit(name):
    opt = CASES[name][0]
    step = _train_step(opt)
    jitted = didax.jit(step)
    params = {k: jnp.asarray(v) for k, v in PARAMS.items()}
    eager_params, eager_state = params, opt.init(params)
    jit_params, jit_state = params, opt.init(params)
    for grads in GRADS:
        eager_params, eager_state = step(eager_params, eager_state, grads)
        jit_params, jit_state = jitted(jit_params, jit_state, grads)
    for e, j in zip(didax.tree.leaves((eager_params, eager_state)),
                    didax.tree.leaves((jit_params, jit_state))):
        assert np.asarray(e).dtype == np.asarray(j).dtype
        # (eagerly decay ** count is integer_pow of the concrete count, under jit pow, as in
        # JAX: they round differently)
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-6, atol=1e-6)


def test_vmap_runs_independent_optimizers_in_one_batch():
    opt = optim.adam(LR)
    batch = {k: np.stack([v, 2 * v, -v]) for k, v in PARAMS.items()}
    grads = {k: np.stack([v, v + 1, 3 * v]) for k, v in GRADS[0].items()}
    states = didax.vmap(opt.init)(batch)
    assert states[0].count.shape == (3,)
    updates, states = didax.vmap(opt.update)(grads, states, batch)
    for i in range(3):
        one = {k: v[i] for k, v in batch.items()}
        want, _ = opt.update({k: v[i] for k, v in grads.items()}, opt.init(one), one)
        for k in PARAMS:
            np.testing.assert_allclose(updates[k][i], want[k], rtol=1e-6)


def test_grad_through_an_optimizer_step_gives_the_meta_gradient():
    """d/d(lr) of the loss after one SGD-with-momentum step is -<grad L(p'), g>."""
    target = jnp.asarray(PARAMS["w"] * 0.0 + 1.0)

    def loss(p):
        return jnp.sum((p - target) ** 2)

    def loss_after_step(lr):
        opt = optim.sgd(lr, momentum=0.9)
        p = jnp.asarray(PARAMS["w"])
        updates, _ = opt.update(didax.grad(loss)(p), opt.init(p))
        return loss(optim.apply_updates(p, updates))

    lr = 0.1
    g = 2 * (PARAMS["w"] - 1.0)
    new_p = PARAMS["w"] - lr * g
    np.testing.assert_allclose(didax.grad(loss_after_step)(lr),
                               -np.sum(2 * (new_p - 1.0) * g), rtol=1e-5)
    didax.test_util.check_grads(loss_after_step, (lr,), order=2, modes=("fwd", "rev"),
                                rtol=2e-2)


def _play_bilinear_game(opt, steps=500):
    """min over x, max over y of x * y from (1, 1); returns the final distance to (0, 0)."""
    def descent_ascent_grads(p):
        g = didax.grad(lambda q: q["x"] * q["y"])(p)
        return {"x": g["x"], "y": -g["y"]}
    params = {"x": jnp.asarray(1.0), "y": jnp.asarray(1.0)}
    state = opt.init(params)
    for _ in range(steps):
        updates, state = opt.update(descent_ascent_grads(params), state, params)
        params = optim.apply_updates(params, updates)
    return float(jnp.sqrt(params["x"] ** 2 + params["y"] ** 2))


def test_optimistic_gradient_descent_converges_on_a_bilinear_game_where_gd_diverges():
    start = np.sqrt(2.0)
    # Simultaneous gradient descent-ascent spirals out by sqrt(1 + lr^2) per step.
    np.testing.assert_allclose(_play_bilinear_game(optim.sgd(0.1)), start * 1.01 ** 250,
                               rtol=1e-3)
    assert _play_bilinear_game(optim.optimistic_gradient_descent(0.1)) < 0.1 * start
