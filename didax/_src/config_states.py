"""JAX's per-flag context managers (`jax.log_compiles`, `jax.transfer_guard`...), each a
`State` over one `config` flag: `with didax.log_compiles(True): ...` sets it for a block,
`.value` reads it, and `config.update("jax_log_compiles", True)` sets it for good.

Flags that steer accelerators or XLA accept JAX's values and say in their docstring what
didax does with them (everything runs on the host, in NumPy). Flags whose JAX behaviour
didax does not have raise NotImplementedError when set to the value that would need it.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable

from didax._src.config import config, flag_context

_NO_DEFAULT = object()


class State:
    """A context manager factory for one flag: `state(value)` sets it inside a `with` block
    (or for a decorated function); `state.value` is its current value."""

    def __init__(self, name: str, default_context_value: Any = _NO_DEFAULT, doc: str = ""):
        self.name = name
        self._context_default = default_context_value
        self.__doc__ = f"Context manager for the `{name}` config option.\n\n{doc}"

    @property
    def value(self) -> Any:
        return config.read(self.name)

    def __call__(self, new_val: Any = _NO_DEFAULT):
        if new_val is _NO_DEFAULT:
            if self._context_default is _NO_DEFAULT:
                short = self.name.removeprefix("jax_")
                raise TypeError(f"Context manager for {short} config option requires an "
                                "argument representing the new value for the config option.")
            new_val = self._context_default
        return flag_context(self.name, new_val)

    def __repr__(self):
        return f"State({self.name}={self.value!r})"


def _enum(name: str, choices: tuple, optional: bool) -> Callable[[Any], Any]:
    def validate(value):
        if (value is None and optional) or value in choices:
            return value
        none = "None or " if optional else ""
        raise ValueError(f"new enum value must be {none}in {list(choices)}, got {value!r} of "
                         f"type {type(value)}.")
    return validate


def _unsupported_unless(name: str, supported, why: str) -> Callable[[Any], Any]:
    """A flag didax has only at `supported` (a bool flag's other value needs `why`)."""
    def validate(value):
        value = bool(value)
        if value != supported:
            raise NotImplementedError(f"{name}={value} is not implemented: {why}")
        return value
    return validate


def _define_bool(name: str, default: bool, doc: str, validator=bool) -> State:
    config.define(name, default, validator)
    return State(name, True, doc)


def _define(name: str, default: Any, validator, doc: str) -> State:
    config.define(name, default, validator)
    return State(name, doc=doc)


# ---- flags with an effect in didax -------------------------------------------------------

debug_infs = State("jax_debug_infs", True, (
    "Raise FloatingPointError where an inf first appears in a floating-point result, eager "
    "or inside jit (as `debug_nans` does for NaN); an inf computed from an inf is not "
    "reported again."))
explain_cache_misses = State("jax_explain_cache_misses", True, (
    "Log (logger 'didax', level WARNING) why a jitted function traces again."))
default_matmul_precision = State("jax_default_matmul_precision", doc=(
    "The default `precision` of dot products and convolutions on 32-bit inputs. didax "
    "computes them at full precision whatever the value; the value is checked as JAX "
    "does."))
log_compiles = _define_bool("jax_log_compiles", False, (
    "Log (logger 'didax', level WARNING; DEBUG when off) each time `jit` or `pmap` "
    "compiles a function, with its argument types."))
check_tracer_leaks = _define_bool("jax_check_tracer_leaks", False, (
    "After each `jit` trace (and `make_jaxpr`), raise an Exception naming any traced value "
    "still referenced from outside (a global, a list, an attribute), and what refers to "
    "it. Makes tracing slower (it runs the garbage collector)."))
enable_checks = _define_bool("jax_enable_checks", False, (
    "Type-check every jaxpr `jit` traces (variables defined once, before use; every "
    "equation's types as its primitive's rule says), raising JaxprTypeError."))
no_tracing = _define_bool("jax_no_tracing", False, (
    "Raise RuntimeError when `jit` would trace a function (a cache miss). JAX traces its "
    "eager operations too; didax runs them without tracing, so only `jit` is stopped."))
no_execution = _define_bool(
    "jax_no_execution", False, "JAX raises RuntimeError on any execution while it is set.",
    _unsupported_unless("jax_no_execution", False,
                        "didax cannot refuse executions (its eager operations run "
                        "directly); use no_tracing to catch jit traces"))
numpy_rank_promotion = _define(
    "jax_numpy_rank_promotion", "allow", _enum("jax_numpy_rank_promotion",
                                               ("allow", "warn", "raise"), False), (
        "What `didax.numpy` does when operands of different ranks (both at least 1-d) are "
        "broadcast: 'allow' it (NumPy's rule), 'warn', or 'raise' ValueError."))
legacy_prng_key = _define(
    "jax_legacy_prng_key", "allow", _enum("jax_legacy_prng_key", ("allow", "warn", "error"),
                                          False), (
        "What `didax.random` functions do with a raw uint32 key (from `PRNGKey`): 'allow' "
        "it, 'warn', or raise ValueError ('error'). (JAX's value is an enum; didax's is its "
        "string.)"))


# ---- flags with no effect here (and why) -------------------------------------------------

allow_f16_reductions = _define_bool("jax_allow_f16_reductions", True, (
    "JAX refuses float16/bfloat16 sums on some accelerators when False; on the CPU, as in "
    "didax, such sums always run."))
array_garbage_collection_guard = _define(
    "jax_array_garbage_collection_guard", None,
    _enum("jax_array_garbage_collection_guard", ("allow", "log", "fatal"), True), (
        "JAX logs or aborts when Python's cycle collector frees a device array. didax's "
        "arrays hold NumPy buffers in host memory, which the collector frees like any "
        "object: the value is checked and nothing is logged."))
auto_pcast = _define_bool("jax_auto_pcast", True, (
    "JAX inserts `pvary` to match the varying manual axes of operands; didax's types carry "
    "no varying axes, so there is nothing to insert."))
jax2tf_associative_scan_reductions = _define_bool("jax2tf_associative_scan_reductions", False, (
    "Chooses jax2tf's lowering of cumulative reductions; didax has no TensorFlow export, so "
    "the value is only kept."))
remove_size_one_mesh_axis_from_type = _define_bool(
    "jax_remove_size_one_mesh_axis_from_type", False, (
        "JAX drops size-1 mesh axes from the sharding in array types; didax's types carry "
        "no sharding, so the value is only kept."))
softmax_custom_jvp = _define_bool("jax_softmax_custom_jvp", False, (
    "Chooses between two derivative rules of `nn.softmax` that compute the same values; "
    "didax has one rule, used either way."))
thread_guard = _define_bool("jax_thread_guard", False, (
    "JAX raises when a multi-process operation is called from another thread than the one "
    "that set the guard. didax's processes exchange values only from the calling thread, "
    "so the value is only kept."))
threefry_partitionable = _define_bool(
    "jax_threefry_partitionable", True, "Whether random bits are generated by the "
    "partitionable threefry scheme (JAX's default, the one didax implements).",
    _unsupported_unless("jax_threefry_partitionable", True,
                        "didax generates random bits only by the partitionable threefry "
                        "scheme (JAX's default), so the bits of the older scheme are not "
                        "available"))
enable_custom_prng = _define_bool(
    "jax_enable_custom_prng", False, "Whether `random.PRNGKey` makes typed keys.",
    _unsupported_unless("jax_enable_custom_prng", False,
                        "didax's PRNGKey always makes raw uint32 keys; use "
                        "didax.random.key(seed) for a typed key"))
debug_key_reuse = _define_bool(
    "jax_debug_key_reuse", False, "Tracks typed PRNG keys to raise KeyReuseError on reuse.",
    _unsupported_unless("jax_debug_key_reuse", False,
                        "didax does not track the use of PRNG keys; split keys with "
                        "didax.random.split before each use"))


def _prng_impl(value):
    choices = ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32")
    _enum("jax_default_prng_impl", choices, False)(value)
    if value != "threefry2x32":
        raise NotImplementedError(f"jax_default_prng_impl={value!r} is not implemented: "
                                  "didax implements only 'threefry2x32'")
    return value


default_prng_impl = _define("jax_default_prng_impl", "threefry2x32", _prng_impl,
                            "The PRNG implementation of new keys (only 'threefry2x32').")


_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_GUARD_DOC = (
    "JAX logs or refuses {what} transfers at levels 'log', 'disallow' (and their "
    "'_explicit' forms, which apply to explicit transfers only). Every didax device shares "
    "the host's memory, so no transfer ever happens: any level is accepted and nothing is "
    "logged or refused.")
transfer_guard_host_to_device = _define(
    "jax_transfer_guard_host_to_device", None,
    _enum("jax_transfer_guard_host_to_device", _GUARD_LEVELS, True),
    _GUARD_DOC.format(what="host-to-device"))
transfer_guard_device_to_device = _define(
    "jax_transfer_guard_device_to_device", None,
    _enum("jax_transfer_guard_device_to_device", _GUARD_LEVELS, True),
    _GUARD_DOC.format(what="device-to-device"))
transfer_guard_device_to_host = _define(
    "jax_transfer_guard_device_to_host", None,
    _enum("jax_transfer_guard_device_to_host", _GUARD_LEVELS, True),
    _GUARD_DOC.format(what="device-to-host"))
config.define("jax_transfer_guard", None, _enum("jax_transfer_guard", _GUARD_LEVELS, True))


@contextlib.contextmanager
def transfer_guard(new_val: str):
    """Sets the guard level of all three kinds of transfer for a block. No transfer ever
    happens in didax (the devices share the host's memory), so this only checks and
    records the level (see `transfer_guard_host_to_device`)."""
    with contextlib.ExitStack() as stack:
        for name in ("jax_transfer_guard_host_to_device", "jax_transfer_guard_device_to_device",
                     "jax_transfer_guard_device_to_host", "jax_transfer_guard"):
            stack.enter_context(flag_context(name, new_val))
        yield


def float_checks() -> tuple[bool, bool]:
    """(debug_nans, debug_infs): which values eager evaluation and compiled code check."""
    return bool(config.read("jax_debug_nans")), bool(config.read("jax_debug_infs"))


# The flag is defined with the devices it names (parallel/device.py), which check its values.
default_device = State("jax_default_device", doc=(
    "The device arrays are said to live on when nothing else places them (`x.devices()`, "
    "`device_put(x)`): one of `didax.devices()`, or 'cpu' (the first local device). All "
    "devices share the host's memory, so this only changes where arrays say they are."))


def legacy_key_used() -> None:
    """A `random` function was given a raw uint32 key: warn or raise as
    `jax_legacy_prng_key` says."""
    import warnings

    message = ("Legacy uint32 key array passed as key to jax.random function. Please create "
               "keys using jax.random.key(). If use of a raw key array was intended, set "
               'jax_legacy_prng_key="allow".')
    if config.read("jax_legacy_prng_key") == "error":
        raise ValueError(message)
    warnings.warn(message, stacklevel=4)
