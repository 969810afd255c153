"""Config flags and their context managers (didax/_src/config_states.py), against JAX."""
import logging
import warnings

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax_absent import needs_jax

import didax
import didax.numpy as jnp

BOOL_FLAGS = ["allow_f16_reductions", "auto_pcast", "check_tracer_leaks", "debug_infs",
              "enable_checks", "explain_cache_misses", "log_compiles", "no_tracing",
              "remove_size_one_mesh_axis_from_type", "softmax_custom_jvp", "thread_guard"]
ENUM_FLAGS = ["numpy_rank_promotion", "transfer_guard_host_to_device",
              "array_garbage_collection_guard", "default_matmul_precision"]


@pytest.mark.parametrize("name", BOOL_FLAGS + ENUM_FLAGS + ["threefry_partitionable"])
def test_defaults_and_names_match_jax(name):
    ours, theirs = getattr(didax, name), getattr(jax, name)
    assert ours.name == theirs.name
    assert ours.value == theirs.value


@pytest.mark.parametrize("name", BOOL_FLAGS)
def test_bool_context_manager_sets_and_restores(name):
    state = getattr(didax, name)
    before = state.value
    with state():
        assert state.value is True
    with state(False):
        assert state.value is False
    assert state.value == before


@needs_jax
@pytest.mark.parametrize("name", ENUM_FLAGS)
def test_enum_values_checked_as_jax_does(name):
    for mod in (didax, jax):
        with pytest.raises(TypeError, match="requires an argument"):
            getattr(mod, name)()
        with pytest.raises(ValueError, match="must be (None or )?(in|one of)"):
            with getattr(mod, name)("bogus"):
                pass


def test_config_update_reaches_the_state():
    didax.config.update("jax_log_compiles", True)
    try:
        assert didax.log_compiles.value is True
    finally:
        didax.config.update("jax_log_compiles", False)


@needs_jax
@pytest.mark.parametrize("jitted", [False, True])
def test_debug_infs_raises_where_the_inf_appears(jitted):
    def f(x):
        return jnp.log(x) * 2

    def g(x):
        return jjnp.log(x) * 2

    x = np.zeros(2, np.float32)
    with jax.debug_infs(True), pytest.raises(FloatingPointError, match=r"\(inf\).*log"):
        (jax.jit(g) if jitted else g)(x)
    with didax.debug_infs(True), pytest.raises(FloatingPointError, match=r"\(inf\).*log"):
        (didax.jit(f) if jitted else f)(x)
    np.testing.assert_array_equal(didax.jit(f)(x), g(x))  # off again: no check


def test_debug_infs_ignores_nan_and_debug_nans_ignores_inf():
    with didax.debug_infs(True):
        assert np.isnan(didax.jit(lambda x: jnp.sqrt(x))(-1.0))
    with didax.debug_nans(True):
        assert np.isinf(didax.jit(lambda x: 1.0 / x)(0.0))


@needs_jax
def test_numpy_rank_promotion_raise_and_warn_as_jax():
    a, b = np.ones(3, np.float32), np.ones((2, 3), np.float32)
    for mod, np_ in ((jax, jjnp), (didax, jnp)):
        with mod.numpy_rank_promotion("raise"):
            with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
                np_.asarray(a) + np_.asarray(b)
            assert (np_.asarray(a) + 1.0).shape == (3,)  # scalars are not promoted ranks
        with mod.numpy_rank_promotion("warn"):
            with pytest.warns(UserWarning, match="automatic rank promotion for multiply"):
                np_.multiply(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (jnp.asarray(a) + jnp.asarray(b)).shape == (2, 3)  # "allow" again


def test_log_compiles_logs_each_compilation(caplog):
    f = didax.jit(lambda x: x * 3)
    with caplog.at_level(logging.WARNING, logger="didax"), didax.log_compiles(True):
        f(np.float32(1))
        f(np.float32(2))  # (a hit: no compilation)
    compiled = [r for r in caplog.records if "Compiling" in r.getMessage()]
    assert len(compiled) == 1 and "f32[]" in compiled[0].getMessage()


def test_explain_cache_misses_logs_the_reason(caplog):
    f = didax.jit(lambda x: x * 3)
    with caplog.at_level(logging.WARNING, logger="didax"), didax.explain_cache_misses(True):
        f(np.ones(2, np.float32))
        f(np.ones(3, np.float32))
    assert any("changed shape" in r.getMessage() for r in caplog.records)


def test_check_tracer_leaks_names_the_leak():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2

    with didax.check_tracer_leaks(True):
        with pytest.raises(Exception, match=r"(?s)Leaked trace.*referred to by a list"):
            didax.jit(f)(1.0)
        assert didax.jit(lambda x: jnp.sin(x) * 2)(1.0) == pytest.approx(np.sin(1.0) * 2)
    leaked.clear()
    assert didax.jit(f)(1.0) == 2.0  # off: no check


def test_no_tracing_refuses_a_trace_but_not_a_hit():
    f = didax.jit(lambda x: x + 1)
    f(1.0)
    with didax.no_tracing(True):
        assert f(2.0) == 3.0
        with pytest.raises(RuntimeError, match="'no_tracing' is set"):
            f(np.ones(2))


def test_enable_checks_type_checks_what_jit_compiles():
    with didax.enable_checks(True):
        assert didax.jit(lambda x: jnp.cos(x) + x)(0.0) == 1.0


def test_user_context_retraces_when_it_changes_and_hits_when_it_returns():
    ctx = didax.make_user_context(0)
    traces = []

    @didax.jit
    def f(x):
        traces.append(ctx.value)
        return x + ctx.value

    assert f(1.0) == 1.0
    with ctx(5):
        assert ctx.value == 5 and f(1.0) == 6.0
    assert f(1.0) == 1.0
    assert traces == [0, 5]


def test_default_device_is_where_unplaced_arrays_say_they_live():
    dev = didax.devices()[0]
    with didax.default_device(dev):
        assert jnp.ones(2).devices() == {dev}
    with didax.default_device("cpu"):
        assert didax.default_device.value == "cpu"
    with pytest.raises(ValueError, match="Device object"):
        with didax.default_device(3):
            pass


@needs_jax
@pytest.mark.parametrize("mode", ["warn", "error"])
def test_legacy_prng_key_as_jax(mode):
    for mod in (jax, didax):
        key = mod.random.PRNGKey(0)
        with mod.legacy_prng_key(mode):
            if mode == "error":
                with pytest.raises(ValueError, match="Legacy uint32 key"):
                    mod.random.uniform(key)
            else:
                with pytest.warns(UserWarning, match="Legacy uint32 key"):
                    mod.random.uniform(key)
            mod.random.uniform(mod.random.key(0))  # typed keys are fine


@pytest.mark.parametrize("name,value", [("threefry_partitionable", False),
                                        ("debug_key_reuse", True),
                                        ("enable_custom_prng", True),
                                        ("no_execution", True),
                                        ("default_prng_impl", "rbg")])
def test_unimplemented_settings_say_so(name, value):
    with pytest.raises(NotImplementedError, match="not implemented"):
        with getattr(didax, name)(value):
            pass


def test_transfer_guard_sets_all_levels():
    with didax.transfer_guard("disallow"):
        for kind in ("host_to_device", "device_to_device", "device_to_host"):
            assert getattr(didax, f"transfer_guard_{kind}").value == "disallow"
        assert float(jnp.ones(3).sum()) == 3.0  # nothing is a transfer here
    assert didax.transfer_guard_host_to_device.value is None
