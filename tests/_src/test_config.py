"""Tests for the ``config`` flags object and the x64 context manager."""

import pytest

from didax._src import config as config_module
from didax._src.config import Config, config, enable_x64, flag_context


@pytest.fixture(autouse=True)
def flags_are_restored():
    """Run each test in x32 mode, whatever JAX_ENABLE_X64 says, and check flags are restored."""
    with enable_x64(False):
        before = config.values
        yield
        assert config.values == before


def test_defaults():
    assert config.read("jax_debug_nans") is False
    assert config.jax_debug_infs is False and config.jax_disable_jit is False
    assert config.jax_default_matmul_precision is None
    assert config.jax_explicit_x64_dtypes == "warn"


def test_update_and_read():
    try:
        config.update("jax_enable_x64", True)
        assert config.jax_enable_x64 is True and config.read("jax_enable_x64") is True
        assert config.x64_enabled is True
        config.update("jax_debug_nans", 1)  # coerced to bool, as in JAX
        assert config.jax_debug_nans is True
        config.update("jax_default_matmul_precision", "highest")
        assert config.jax_default_matmul_precision == "highest"
        config.update("jax_platforms", "cpu")
        config.update("jax_platform_name", "cpu")
        assert config.jax_platforms == config.jax_platform_name == "cpu"
    finally:
        config.update("jax_enable_x64", False)
        config.update("jax_debug_nans", False)
        config.update("jax_default_matmul_precision", None)
        config.update("jax_platforms", None)
        config.update("jax_platform_name", None)
    assert config.x64_enabled is False


def test_unknown_flags_are_errors():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_foo.*jax_enable_x64"):
        config.update("jax_foo", 1)
    with pytest.raises(AttributeError, match="jax_foo"):
        config.read("jax_foo")
    with pytest.raises(AttributeError, match="Known options: .*jax_debug_nans"):
        _ = config.jax_foo


def test_invalid_values():
    with pytest.raises(ValueError, match="jax_default_matmul_precision"):
        config.update("jax_default_matmul_precision", "bogus")
    with pytest.raises(ValueError, match="jax_explicit_x64_dtypes"):
        config.update("jax_explicit_x64_dtypes", "sometimes")
    with pytest.raises(TypeError, match="jax_platforms"):
        config.update("jax_platforms", 3)


def test_enable_x64_restores_previous_value():
    with enable_x64():
        assert config.x64_enabled and config.jax_enable_x64
        with enable_x64(False):
            assert not config.x64_enabled
        assert config.x64_enabled
    assert not config.x64_enabled
    with pytest.raises(RuntimeError):
        with enable_x64(True):
            raise RuntimeError("boom")
    assert not config.x64_enabled


def test_flag_context():
    with flag_context("jax_disable_jit", True):
        assert config.jax_disable_jit is True
    assert config.jax_disable_jit is False


def test_on_change_callbacks():
    seen = []
    callback = config.on_change(lambda name, value: seen.append((name, value)))
    try:
        with enable_x64():
            config.update("jax_enable_x64", True)  # unchanged: no callback
        assert seen == [("jax_enable_x64", True), ("jax_enable_x64", False)]
    finally:
        config._callbacks.remove(callback)


@pytest.mark.parametrize("text, expected", [("1", True), ("Yes", True), ("off", False),
                                            ("f", False), ("TRUE", True)])
def test_defaults_from_environment(monkeypatch, text, expected):
    monkeypatch.setenv("JAX_ENABLE_X64", text)
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    fresh = Config()
    fresh.define("jax_enable_x64", False)
    fresh.define("jax_platforms", None, config_module._optional_str("jax_platforms"))
    assert fresh.jax_enable_x64 is expected and fresh.x64_enabled is expected
    assert fresh.jax_platforms == "cpu"


def test_bad_environment_value(monkeypatch):
    monkeypatch.setenv("JAX_ENABLE_X64", "maybe")
    with pytest.raises(ValueError, match="invalid truth value 'maybe'"):
        Config().define("jax_enable_x64", False)


def test_define_twice_is_an_error():
    with pytest.raises(ValueError, match="already defined"):
        config.define("jax_enable_x64", False)
