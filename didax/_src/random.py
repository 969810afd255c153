"""didax.random: JAX's samplers over threefry2x32 bits, so that a key gives the numbers
jax.random gives: keys, bits, integers, permutations and [0, 1) uniforms bit for bit; floats
that go through log, erf_inv or a multiply-add (which XLA fuses) to within an ulp or two.

Every sampler follows the recipe of `jax.random` (the same bits, the same transformation of
them), written with lax operations and `didax.numpy`, so samplers work under `jit`, `vmap`
and `grad`. Called eagerly, the common samplers run a compiled step: the draw as jit
compiles it, kept per signature (see "Eager draws as compiled steps"). Keys are raw
uint32[2] arrays (`PRNGKey`) or typed keys (`key`); `split` and `fold_in` return keys of
the kind they were given. The samplers' `out_sharding=` is accepted and has no effect: every
device shares the host's memory, so a sharding changes no number.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from didax._src import caches, core, dtypes
from didax._src.base_prims import broadcast, transpose
from didax._src.compiler.native import tier
from didax._src.config import config
from didax._src.config_states import legacy_key_used
from didax._src.core import Tracer, get_aval
from didax._src.errors import user_error
from didax._src.lax import elementwise as lax
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.lax.control_flow.scan import scan
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.lax.incomplete import random_gamma_grad
from didax._src.numerics import special as special_algorithms
from didax._src.numpy import linalg
from didax._src.numpy import namespace as jnp
from didax._src.numpy._helpers import _canonical_shape
from didax._src.numpy.util import concrete_or_error, promote_dtypes_inexact
from didax._src.primitives import prng
from didax._src.primitives.custom_derivatives import custom_jvp
from didax._src.primitives.prng import PRNGKeyArray
from didax._src.transforms.api import vmap
from didax._src.transforms.jit import jit
from didax._src.tree_util import tree_unflatten, treedef_is_leaf

_IMPL_NAME = "threefry2x32"


# --------------------------------------------------------------------------------------
# Eager draws as compiled steps
#
# A sampler called outside any transformation, on a concrete key and concrete arguments,
# runs a compiled step: the sampler traced as jit traces it (shape, dtype and the other
# static arguments fixed; the key data and array arguments as operands) and compiled as
# jit compiles it (the NumPy tier's code first, native code swapped in once built: both
# give the same bits). Its numbers are therefore those of the same draw under jit. Steps
# are kept in a bounded table, per (sampler, static arguments, operand types, settings);
# the hottest samplers also keep theirs under the caller's own spelling of the static
# arguments, so that a repeated call finds its step before any argument is canonicalized.
# A signature's first call runs op by op (to the same bits): tracing and compiling cost
# milliseconds, which only a repeated draw repays (a model's initialization draws once per
# parameter shape).

_steps = caches.memo("random.eager_steps", limit=512)
_seen = caches.memo("random.eager_signatures_seen", limit=4096)  # signature -> True
_settings_snapshots = caches.memo("random.settings", interns=True)
_CTX = core._ctx
_EVAL = core.eval_interpreter
_KEY_AVAL = get_aval(np.zeros(2, np.uint32))
_from_numpy = core.Array.from_numpy
_SCALAR_DTYPES = (float, int, bool, complex)
_OPERAND_TYPES = frozenset({core.Array, np.ndarray, float, int, bool})


def _current_settings() -> int:
    """The identity of the configuration now (equal configurations, one number): any
    option may change what a sampler traces to (x64 its dtypes) or how it runs."""
    now = tuple(sorted(config.values.items()))
    return id(caches.add(_settings_snapshots, now, now))


_settings = _current_settings()


@config.on_change
def _update_settings(name, value):
    global _settings
    _settings = _current_settings()


class _Step:
    """A draw compiled for one signature: jit's executable for it (whose `run` the native
    tier replaces once built), its results' types and structure (None: one array)."""

    __slots__ = ("exe", "avals", "tree")

    def __init__(self, exe, avals, tree):
        self.exe, self.avals = exe, avals
        self.tree = None if treedef_is_leaf(tree) else tree

    def one(self, *vals):
        """The one result, of the NumPy operands `vals`."""
        return _from_numpy(self.exe.run(*vals)[0], self.avals[0])

    def __call__(self, *vals):
        if self.tree is None:
            return _from_numpy(self.exe.run(*vals)[0], self.avals[0])
        outs = self.exe.run(*vals)
        return tree_unflatten(self.tree, [_from_numpy(o, a) for o, a in zip(outs, self.avals)])


def _lookup(key):
    """The step kept under `key`, if any (None also for unhashable spellings)."""
    try:
        return _steps.get(key)
    except TypeError:
        return None


def _plain_shape(shape) -> bool:
    """A shape spelled as an int or a tuple of ints (whose equal spellings are the same
    shape: a tuple of floats equal to it is not, so it is never looked up)."""
    if type(shape) is tuple:
        for d in shape:
            if type(d) is not int:
                return False
        return True
    return type(shape) is int


def _key_value(key):
    """The NumPy data of a concrete single key, typed or raw, else None."""
    if type(key) is PRNGKeyArray:
        key = key._base_array
    if type(key) is core.Array and key.aval is _KEY_AVAL:
        return key._value
    return None


def _as_spelled(name, shape, dtype, canonical):
    """The key a sampler's step is also kept under: its caller's spelling of shape and
    dtype (None if that is not a plain shape, or a dtype whose canonicalization may warn)."""
    if not _plain_shape(shape):
        return None
    if not (dtype is None or isinstance(dtype, type) and dtype in _SCALAR_DTYPES):
        try:
            if np.dtype(dtype) != canonical:  # (e.g. float64 without x64: it warns)
                return None
        except TypeError:
            return None
    return (name, shape, type(dtype), dtype, _settings)


def _operand(x):
    """(`x`'s abstract value, the NumPy value jit passes its compiled code), or None if `x`
    is not an operand of a step (a list, a tracer...)."""
    kind = type(x)
    if kind is core.Array:
        return x.aval, x._value
    if kind not in _OPERAND_TYPES and not isinstance(x, np.generic):
        return None
    try:
        aval = get_aval(x)
        return aval, np.asarray(x, aval.dtype)
    except (OverflowError, TypeError, ValueError):  # (a Python int beyond its dtype)
        return None


def _eager_draw(statics, fn, data, *args, spelled=None):
    """`fn(data, *args)` run by its compiled step if this call is eager, else None.

    `statics` names the draw with the static arguments `fn` closes over (its first item is
    the sampler's name); the step is also kept under `spelled` (see _as_spelled) if given.
    """
    if _CTX.interp is not _EVAL or config.read("jax_disable_jit"):
        return None
    operands = [_operand(x) for x in (data, *args)]
    if None in operands:
        return None
    key = (statics, tuple(aval for aval, _ in operands[1:]), _settings)
    step = _steps.get(key)
    if step is None:
        if key not in _seen:  # (a first call: op by op)
            caches.add(_seen, key, True)
            return None
        traced = jit(fn).trace(data, *args)
        closed = traced.jaxpr
        step = _Step(tier.tiered_executable(closed, statics[0]), closed.out_avals,
                     traced.out_tree)
        step = caches.add(_steps, key, step)
    if spelled is not None:
        caches.add(_steps, spelled, step)
    return step(*[value for _, value in operands])


def _kept_step(spelled, key, *vals):
    """The draw, on `key` (and the NumPy operands `vals`), of the step an earlier eager call
    kept under `spelled`, its caller's spelling of the static arguments; None if there is
    none or the call is not eager. (The fast path: nothing canonicalized, nothing checked
    again.)"""
    if _CTX.interp is _EVAL:
        step, value = _lookup(spelled), _key_value(key)
        if step is not None and value is not None:
            return step.one(value, *vals)
    return None


def _spelled_step(name, shape, dtype, key):
    """`_kept_step` of a sampler spelled by its shape and dtype (see _as_spelled)."""
    if _plain_shape(shape):
        return _kept_step((name, shape, type(dtype), dtype, _settings), key)
    return None


def _drawn(statics, fn, data, *args, spelled=None):
    """`fn(data, *args)`: by its compiled step if the call is eager, else traced (or run op
    by op, with jit disabled)."""
    out = _eager_draw(statics, fn, data, *args, spelled=spelled)
    return fn(data, *args) if out is None else out


# --------------------------------------------------------------------------------------
# Keys


def _check_impl(impl):
    if impl is None or impl == _IMPL_NAME or isinstance(impl, prng.KeyDtype):
        return
    raise NotImplementedError(f"PRNG implementation {impl!r}: didax implements only "
                              f"'{_IMPL_NAME}'")


def _key_data_of(name: str, key, allow_batched: bool = False):
    """The raw uint32[..., 2] data of a typed or raw key, and whether it was typed."""
    if type(key) is PRNGKeyArray:
        data, typed = key._base_array, True
    elif isinstance(key, (core.ArrayBase, np.ndarray)):
        data, typed = key, False
        prng.check_key_data(data, name)
        if config.read("jax_legacy_prng_key") != "allow":
            legacy_key_used()
    else:
        raise user_error(TypeError, (
            f"{name}: unexpected PRNG key type {type(key).__name__}; make keys "
            "with didax.random.key(seed) or didax.random.PRNGKey(seed)."))
    if not allow_batched and get_aval(data).ndim > 1:
        shape = get_aval(data).shape[:-1] if typed else get_aval(data).shape
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{shape} != (). Use didax.vmap for batching.")
    return data, typed


def _rewrap(typed: bool, data):
    return PRNGKeyArray(data) if typed else data


def PRNGKey(seed, *, impl=None):
    """A raw key: uint32[2] holding the high and low words of the (64-bit) seed."""
    _check_impl(impl)
    _check_seed("PRNGKey", seed)
    return prng.seed_key_data(seed)


def key(seed, *, impl=None, dtype=None):
    """A typed key (shape (), dtype key<fry>) from an integer seed."""
    _check_impl(impl)
    _check_impl(dtype)
    _check_seed("key", seed)
    return PRNGKeyArray(prng.seed_key_data(seed))


def _check_seed(name, seed):
    if type(seed) is PRNGKeyArray:
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed) if not isinstance(seed, core.ArrayBase) else seed.ndim:
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use didax.vmap for batching.")


def key_data(keys):
    """The uint32[..., 2] data under typed keys (raw keys are returned as they are)."""
    data, _ = _key_data_of("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys over uint32[..., 2] key data."""
    _check_impl(impl)
    _check_impl(dtype)
    if type(key_bits_array) is PRNGKeyArray:
        raise TypeError("wrap_key_data: the argument is already a typed key array")
    if not isinstance(key_bits_array, (core.ArrayBase, np.ndarray)):
        key_bits_array = np.asarray(key_bits_array)
    prng.check_key_data(key_bits_array, "wrap_key_data")
    return PRNGKeyArray(key_bits_array)


def key_impl(keys):
    """The name of the keys' PRNG implementation (always 'threefry2x32')."""
    _key_data_of("key_impl", keys, allow_batched=True)
    return _IMPL_NAME


def key_dtype(impl=None):
    """The dtype of typed keys."""
    _check_impl(impl)
    return prng.key_dtype


def clone(key):
    """The same key: arrays are immutable, so there is nothing to copy."""
    return key


def _split(data, num: int = 2):
    """`num` keys from one raw key, as a list of raw keys."""
    keys = prng.split_key_data(data, (num,))
    if prng.is_eager(keys):
        return [core.Array(k) for k in keys._value]
    return [lax_shape.reshape(lax_shape.slice(keys, (i, 0), (i + 1, 2)), (2,))
            for i in range(num)]


def split(key, num=2):
    """New keys (shape `num`, an int or a tuple) derived from one key."""
    if _plain_shape(num):
        out = _kept_step(("split", num, _settings), key)
        if out is not None:
            return _rewrap(type(key) is PRNGKeyArray, out)
    data, typed = _key_data_of("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    shape = _canonical_shape(shape, "split", "random.")
    out = _eager_draw(("split", shape), lambda d: prng.split_key_data(d, shape), data,
                      spelled=("split", num, _settings) if _plain_shape(num) else None)
    if out is None:
        out = prng.split_key_data(data, shape)
    return _rewrap(typed, out)


def fold_in(key, data):
    """A new key from a key and a 32-bit integer (e.g. a step number)."""
    if type(data) is int and 0 <= data <= 0xFFFFFFFF:
        out = _kept_step(("fold_in", _settings), key, np.array(data, np.uint32))
        if out is not None:
            return _rewrap(type(key) is PRNGKeyArray, out)
    key_data_, typed = _key_data_of("fold_in", key)
    if np.ndim(data) if not isinstance(data, core.ArrayBase) else data.ndim:
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data)} != (). Use didax.vmap for batching.")
    if not isinstance(data, core.ArrayBase):
        data = np.asarray(data, np.uint32)
    out = _eager_draw(("fold_in",), _fold_in, key_data_, data,
                      spelled=("fold_in", _settings) if type(data) is np.ndarray else None)
    return _rewrap(typed, _fold_in(key_data_, data) if out is None else out)


def _fold_in(key_data_, data):
    return prng.fold_in_key_data(key_data_, lax.convert_element_type(data, np.uint32))


# --------------------------------------------------------------------------------------
# Argument checks


def _shape(shape, name):
    return _canonical_shape(shape, name, "random.")


def _float_dtype(name, dtype):
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype, name)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")
    return dtype


def _int_dtype(name, dtype):
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype, name)
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `{name}` must be an int dtype, got {dtype}")
    return dtype


def _np_shape(x):
    if type(x) in _PY_SCALARS:
        return ()
    return get_aval(x).shape if isinstance(x, core.ArrayBase) else np.shape(x)


_PY_SCALARS = frozenset({float, int, bool, complex})


def _check_shape(name, shape, *param_shapes):
    if any(param_shapes):  # (scalars broadcast to any shape)
        try:
            out = np.broadcast_shapes(shape, *param_shapes)
        except ValueError:
            out = None
        if out != shape:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, "
                f"and the result of broadcasting the shapes must equal the shape argument, but "
                f"got parameter shapes {list(param_shapes)} for shape argument {shape}.")


def _shape_or_broadcast(name, shape, *params):
    """`shape` checked against the parameters' shapes, or their broadcast shape if None."""
    param_shapes = [_np_shape(p) for p in params]
    if shape is None:
        return np.broadcast_shapes(*param_shapes) if param_shapes else ()
    shape = _shape(shape, name)
    _check_shape(name, shape, *param_shapes)
    return shape


def _is_concrete(x) -> bool:
    """A value whose number may be folded into constants now (never a tracer)."""
    return not isinstance(x, Tracer)


def _const(value, dtype):
    return np.asarray(value, dtype)


def _to_dtype(x, dtype):
    if isinstance(x, core.ArrayBase):
        return lax.convert_element_type(x, dtype)
    return np.asarray(x, dtype)


# --------------------------------------------------------------------------------------
# Bits and uniforms


def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniform random bits as unsigned integers (uint32, or uint64 under x64)."""
    out = _spelled_step("bits", shape, dtype, key)
    if out is not None:
        return out
    data, _ = _key_data_of("bits", key)
    if dtype is None:
        canonical = np.dtype(dtypes.default_uint_dtype())
    else:
        canonical = dtypes.check_and_canonicalize_user_dtype(dtype, "bits")
    if not dtypes.issubdtype(canonical, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got "
                         f"{canonical}")
    width, shape_ = np.dtype(canonical).itemsize * 8, _shape(shape, "bits")
    return _drawn(("bits", shape_, width), lambda d: prng.random_bits(d, width, shape_), data,
                  spelled=_as_spelled("bits", shape, dtype, canonical))


class _NumpyOps:
    """The NumPy functions behind the lax operations the uniform and normal samplers use:
    draws evaluated op by op call them directly (the numbers are the same, the dispatch is
    saved): with jit disabled, and inside samplers that have no compiled step."""

    add, sub, mul, neg, max = np.add, np.subtract, np.multiply, np.negative, np.maximum
    lt, eq, abs, sqrt, log1p = np.less, np.equal, np.abs, np.sqrt, np.log1p
    shift_right_logical = np.right_shift
    convert_element_type = staticmethod(lambda x, dtype: x.astype(dtype))
    select_n = staticmethod(lambda which, if_false, if_true: np.where(which, if_true, if_false))
    erf_inv = staticmethod(special_algorithms.erf_inv)


def _ops(*args):
    """NumPy's operations when evaluating eagerly on concrete values, else lax's."""
    return _NumpyOps if prng.is_eager(*args) else lax


def _as_result(xp, x, dtype):
    if xp is _NumpyOps:
        return core.Array(np.asarray(x, dtype))
    return x


def _unit_floats(xp, data, shape, dtype):
    """Floats in [0, 1): the top `nmant` random bits as the mantissa.

    JAX ors those bits into the pattern of 1.0, bitcasts and subtracts 1; m * 2**-nmant is
    the same number exactly (m < 2**nmant is exactly representable).
    """
    finfo = dtypes.finfo(dtype)
    nmant = finfo.nmant
    # As JAX: the narrowest of 8/16/32/64 random bits that holds the mantissa and one more
    # (bfloat16 and the float8 types draw 8 bits, not as many as they are wide).
    nbits = next(w for w in (8, 16, 32, 64) if w > nmant)
    raw = prng.random_bits(data, nbits, shape)
    if xp is _NumpyOps:
        raw = raw._value
    uint = get_aval(raw).dtype
    mant = xp.shift_right_logical(raw, _const(nbits - nmant, uint))
    return xp.mul(xp.convert_element_type(mant, dtype), _const(2.0 ** -nmant, dtype))


def _scale_into(xp, floats, minval, maxval, shape, dtype):
    """`max(minval, floats * (maxval - minval) + minval)`, as JAX computes it.

    (XLA contracts the multiply-add into a fused one, so where the product is inexact the
    result can be one float32 ulp from JAX's.)
    """
    rank = len(shape)
    if _is_concrete(minval) and _is_concrete(maxval):
        lo = np.asarray(minval, dtype)
        hi = np.asarray(maxval, dtype)
        if lo.ndim == 0 and hi.ndim == 0 and lo == 0 and hi == 1:
            return floats  # f * 1 + 0 is f, and f >= 0
        span = np.asarray(hi - lo, dtype)
        if span.ndim:  # (scalars broadcast as they are, and print as literals)
            span, lo = _to_rank(span, rank), _to_rank(lo, rank)
    else:
        lo = lax_shape.broadcast_to_rank(_to_dtype(minval, dtype), rank)
        span = lax.sub(lax_shape.broadcast_to_rank(_to_dtype(maxval, dtype), rank), lo)
    return xp.max(lo, xp.add(xp.mul(floats, span), lo))


def _to_rank(a, rank):
    return a.reshape((1,) * (rank - a.ndim) + a.shape)


def _uniform(data, minval, maxval, shape, dtype):
    _check_shape("uniform", shape, _np_shape(minval), _np_shape(maxval))
    xp = _ops(data, minval, maxval)
    u = _scale_into(xp, _unit_floats(xp, data, shape, dtype), minval, maxval, shape, dtype)
    return _as_result(xp, u, dtype)


def _unit_scalars(minval, maxval) -> bool:
    """Bounds 0 and 1 spelled as Python numbers (uniform's defaults)."""
    return (type(minval) in (float, int) and minval == 0
            and type(maxval) in (float, int) and maxval == 1)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform floats in [minval, maxval)."""
    if _unit_scalars(minval, maxval):
        out = _spelled_step("uniform", shape, dtype, key)
        if out is not None:
            return out
    data, _ = _key_data_of("uniform", key)
    shape_, dtype_ = _shape(shape, "uniform"), _float_dtype("uniform", dtype)
    out = None
    if _is_concrete(minval) and _is_concrete(maxval):
        _check_shape("uniform", shape_, _np_shape(minval), _np_shape(maxval))
        # Bounds converted to the dtype here, as the sampler converts concrete ones.
        lo, hi = np.asarray(minval, dtype_), np.asarray(maxval, dtype_)
        if lo.ndim == 0 and hi.ndim == 0 and lo == 0 and hi == 1:
            spelled = (_as_spelled("uniform", shape, dtype, dtype_)
                       if _unit_scalars(minval, maxval) else None)
            out = _eager_draw(("uniform", shape_, dtype_),
                              lambda d: _uniform(d, 0.0, 1.0, shape_, dtype_), data,
                              spelled=spelled)
        else:
            out = _eager_draw(("uniform", shape_, dtype_),
                              lambda d, lo, hi: _uniform(d, lo, hi, shape_, dtype_), data, lo, hi)
    return _uniform(data, minval, maxval, shape_, dtype_) if out is None else out


# --------------------------------------------------------------------------------------
# Integers


def _clip_to(x, dtype):
    """Integer `x` converted to integer `dtype`, clipped to its range instead of wrapping."""
    src = get_aval(x).dtype
    lo = max(int(dtypes.iinfo(dtype).min), int(dtypes.iinfo(src).min))
    hi = min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(src).max))
    return lax.convert_element_type(lax.clamp(_const(lo, src), x, _const(hi, src)), dtype)


def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Integers in [minval, maxval), by JAX's scheme: two draws of the dtype's width combined
    modulo the span (slightly biased unless the span is a power of two)."""
    data, _ = _key_data_of("randint", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype,
                                                     "randint")
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    shape = _shape(shape, "randint")
    return _drawn(("randint", shape, dtype),
                  lambda d, lo, hi: _randint_draw(d, lo, hi, shape, dtype), data, minval, maxval)


def _randint_draw(data, minval, maxval, shape, dtype):
    info = dtypes.iinfo(dtype)
    sampling_dtype = dtype
    if info.bits < 32:  # sample in 32 bits: less bias
        sampling_dtype = np.dtype(np.int32)
        minval = jnp.clip(jnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
        maxval = jnp.clip(jnp.asarray(maxval).astype(np.int32), int(info.min),
                          int(info.max) + 1)
    out = _randint(data, minval, maxval, shape, np.dtype(sampling_dtype))
    return out if sampling_dtype == dtype else lax.convert_element_type(out, dtype)


def _randint(data, minval, maxval, shape, dtype):
    _check_shape("randint", shape, _np_shape(minval), _np_shape(maxval))
    minval = jnp.asarray(minval)
    maxval = jnp.asarray(maxval)
    if not dtypes.issubdtype(minval.dtype, np.integer):
        minval = minval.astype(int)
    if not dtypes.issubdtype(maxval.dtype, np.integer):
        maxval = maxval.astype(int)
    rank = len(shape)
    dtype_max = min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(maxval.dtype).max))
    maxval_out_of_range = lax_shape.broadcast_to_rank(
        lax.gt(maxval, _const(dtype_max, maxval.dtype)), rank)
    minval = lax_shape.broadcast_to_rank(_clip_to(minval, dtype), rank)
    maxval = lax_shape.broadcast_to_rank(_clip_to(maxval, dtype), rank)
    nbits = dtypes.iinfo(dtype).bits
    unsigned = np.dtype(f"uint{nbits}")

    k1, k2 = _split(data)
    higher_bits = prng.random_bits(k1, nbits, shape)
    lower_bits = prng.random_bits(k2, nbits, shape)

    span = lax.convert_element_type(jnp.subtract(maxval, minval), unsigned)
    # maxval <= minval gives span 1, so minval is returned; a maxval past the dtype's range
    # means the span is one larger (wrapping to 0 for the full range).
    span = jnp.where(jnp.less_equal(maxval, minval), _const(1, unsigned), span)
    span = jnp.where(jnp.logical_and(maxval_out_of_range, jnp.greater(maxval, minval)),
                     jnp.add(span, _const(1, unsigned)), span)
    # (hi * 2**nbits + lo) % span, with 2**nbits % span computed without overflow.
    multiplier = lax.rem(jnp.full_like(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier),
                     lax.rem(lower_bits, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


# --------------------------------------------------------------------------------------
# Permutations and choices


def _shuffle(data, x, axis: int):
    """Sorts by fresh 32-bit random keys, as many rounds as make collisions unlikely
    (JAX's rule: ceil(3 * log(size) / log(2**32 - 1)))."""
    size = math.prod(get_aval(x).shape)
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(dtypes.iinfo(np.uint32).max)))
    for _ in range(rounds):
        data, sub = _split(data)
        sort_keys = prng.random_bits(sub, 32, get_aval(x).shape)
        _, x = lax_red.sort_key_val(sort_keys, x, axis)
    return x


def _canonical_axis(axis, ndim, name):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def permutation(key, x, axis: int = 0, independent: bool = False, *, out_sharding=None):
    """A random permutation of `range(x)` (an integer `x`) or of `x` along `axis`."""
    if type(x) is int and type(axis) is int and -1 <= axis <= 0:
        out = _kept_step(("permutation", x, _settings), key)
        if out is not None:
            return out
    data, _ = _key_data_of("permutation", key)
    ndim = _np_ndim(x)
    axis = _canonical_axis(axis, ndim or 1, "permutation")
    if not ndim:
        if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        n = int(concrete_or_error(x, "argument x of didax.random.permutation()"))
        return _drawn(("permutation", n), lambda d: _shuffle(d, jnp.arange(n), 0), data,
                      spelled=("permutation", x, _settings) if type(x) is int else None)
    independent = bool(independent)
    return _drawn(("permutation", axis, independent),
                  lambda d, x: _permute(d, x, axis, independent), data, x)


def _permute(data, x, axis, independent):
    x = jnp.asarray(x)
    if independent or x.ndim == 1:
        return _shuffle(data, x, axis)
    ind = _shuffle(data, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis, unique_indices=True)


def _np_ndim(x):
    return get_aval(x).ndim if isinstance(x, core.ArrayBase) else np.ndim(x)


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0, mode=None):
    """Samples from `a` (or `range(a)`), with or without replacement, optionally weighted."""
    data, _ = _key_data_of("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of didax.random.choice must be a sequence, got "
                        f"{shape}")
    shape = _shape(shape, "choice")
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(concrete_or_error(a, "The error occurred in didax.random.choice()"))
    else:
        axis = _canonical_axis(axis, arr.ndim, "choice")
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    p_arr = None
    if p is not None:
        (p_arr,) = promote_dtypes_inexact(p)
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p_arr.shape} and a.shape[axis] is "
                             f"{n_inputs}.")
    replace = bool(replace)
    operands = [x for x in (None if arr.ndim == 0 else arr, p_arr) if x is not None]
    scalar, weighted = arr.ndim == 0, p_arr is not None

    def draw(d, *ops):
        ops = iter(ops)
        a_ = None if scalar else next(ops)
        return _choice(d, a_, next(ops) if weighted else None, n_inputs, shape, replace,
                       axis, mode)

    return _drawn(("choice", n_inputs, shape, replace, axis, mode, scalar, weighted), draw,
                  data, *operands)


def _choice(data, arr, p_arr, n_inputs, shape, replace, axis, mode):
    """The choice of `shape` samples from `arr` (None: from range(n_inputs))."""
    n_draws = math.prod(shape)
    scalar = arr is None
    if p_arr is None:
        if replace:
            ind = randint(data, shape, 0, n_inputs)
            result = ind if scalar else jnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(data, n_inputs if scalar else arr, axis)[slices]
    else:
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(data, shape, dtype=p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:  # the Gumbel top-k trick
            g = gumbel(data, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = lax_red.top_k(g, n_draws)[1].astype(int)
        result = ind if scalar else jnp.take(arr, ind, axis)
    return result.reshape(shape if scalar else
                          arr.shape[:axis] + tuple(shape) + arr.shape[axis + 1:])


# --------------------------------------------------------------------------------------
# Normals


# Giles' single-precision erfinv ("Approximating the erfinv function", 2010): the polynomial
# XLA evaluates for float32 erf_inv, lowest order last.
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_GILES_CENTRAL, _GILES_TAIL = (tuple(np.array(c, np.float32) for c in cs)
                               for cs in (_GILES_CENTRAL, _GILES_TAIL))


def _horner(xp, coeffs, w):
    p = coeffs[0]
    for c in coeffs[1:]:
        p = xp.add(xp.mul(p, w), c)
    return p


_HALF_FLOATS = (np.dtype(np.float16), np.dtype(dtypes.bfloat16))


def _erf_inv(xp, x, dtype):
    """erf_inv as XLA computes it, so that samples match JAX's to float32 rounding: Giles'
    polynomial in float32 (good to a few 1e-7 relative, so samples drawn with lax.erf_inv,
    exact to float32 rounding, would differ from JAX's by as much); float16 and bfloat16
    upcast to it and round back, as XLA does; other dtypes use lax.erf_inv."""
    if dtype in _HALF_FLOATS:
        f32 = np.dtype(np.float32)
        up = _erf_inv(xp, xp.convert_element_type(x, f32), f32)
        return xp.convert_element_type(up, dtype)
    if dtype != np.float32:
        return xp.erf_inv(x)
    if xp is _NumpyOps:
        return _giles_erf_inv(xp, x)
    return _giles_erf_inv_lax(x)


def _giles_erf_inv(xp, x):
    dtype = np.dtype(np.float32)
    w = xp.neg(xp.log1p(xp.neg(xp.mul(x, x))))
    central = xp.lt(w, _const(5.0, dtype))
    p = xp.select_n(central,
                    _horner(xp, _GILES_TAIL, xp.sub(xp.sqrt(w), _const(3.0, dtype))),
                    _horner(xp, _GILES_CENTRAL, xp.sub(w, _const(2.5, dtype))))
    edge = xp.eq(xp.abs(x), _const(1.0, dtype))
    return xp.select_n(edge, xp.mul(p, x), xp.mul(x, _const(np.inf, dtype)))


@custom_jvp
def _giles_erf_inv_lax(x):
    """Giles' erf_inv with erf_inv's derivative, sqrt(pi)/2 exp(y**2) (the polynomial's own
    derivative is less accurate, and its branches would send 0 * inf = nan backwards)."""
    return _giles_erf_inv(lax, x)


@_giles_erf_inv_lax.defjvp
def _giles_erf_inv_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _giles_erf_inv_lax(x)
    scale = lax.mul(_const(np.sqrt(np.pi) / 2, np.float32), lax.exp(lax.mul(y, y)))
    return y, lax.mul(t, scale)


def _normal_real(data, shape, dtype):
    xp = _ops(data)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _scale_into(xp, _unit_floats(xp, data, shape, dtype), lo, np.array(1.0, dtype), shape,
                    dtype)
    z = xp.mul(_const(np.sqrt(2), dtype), _erf_inv(xp, u, dtype))
    return _as_result(xp, z, dtype)


def _normal(data, shape, dtype):
    if dtypes.issubdtype(dtype, np.complexfloating):
        real_dtype = dtypes.finfo(dtype).dtype
        k_re, k_im = _split(data)
        z = lax.complex(_normal_real(k_re, shape, real_dtype),
                        _normal_real(k_im, shape, real_dtype))
        return lax.div(z, _const(np.sqrt(2), dtype))
    return _normal_real(data, shape, dtype)


def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal samples: sqrt(2) * erf_inv(u) with u uniform in (-1, 1); complex
    dtypes draw the real and imaginary parts from split keys, scaled by 1/sqrt(2)."""
    out = _spelled_step("normal", shape, dtype, key)
    if out is not None:
        return out
    data, _ = _key_data_of("normal", key)
    dtype_ = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype,
                                                      "normal")
    if not dtypes.issubdtype(dtype_, np.inexact):
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, got "
                         f"{dtype_}")
    shape_ = _shape(shape, "normal")
    return _drawn(("normal", shape_, dtype_), lambda d: _normal(d, shape_, dtype_), data,
                  spelled=_as_spelled("normal", shape, dtype, dtype_))


def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Normal samples restricted to the open interval (lower, upper), by inverting the CDF."""
    data, _ = _key_data_of("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    shape = _shape_or_broadcast("truncated_normal", shape, lower, upper)
    if _is_concrete(lower) and _is_concrete(upper):  # converted as the sampler converts them
        lower, upper = np.asarray(lower, dtype), np.asarray(upper, dtype)
    return _drawn(("truncated_normal", shape, dtype),
                  lambda d, lo, hi: _truncated_normal(d, lo, hi, shape, dtype), data, lower, upper)


def _truncated_normal(data, lower, upper, shape, dtype):
    sqrt2 = _const(np.sqrt(2), dtype)
    lower = _to_dtype(lower, dtype)
    upper = _to_dtype(upper, dtype)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    u = _uniform(data, a, b, shape, dtype)
    out = lax.mul(sqrt2, _erf_inv(lax, u, dtype))
    # Rounding (or u == a) must not push samples onto or past the bounds.
    return jnp.clip(out, lax.nextafter(lax.stop_gradient(lower), _const(np.inf, dtype)),
                    lax.nextafter(lax.stop_gradient(upper), _const(-np.inf, dtype)))


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method: str = "cholesky",
                        *, out_sharding=None):
    """Samples of N(mean, cov): mean + factor @ z, where factor factor^T = cov comes from a
    Cholesky, SVD or eigendecomposition of `cov` (per `method`)."""
    data, _ = _key_data_of("multivariate_normal", key)
    mean, cov = promote_dtypes_inexact(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else _float_dtype("multivariate_normal", dtype)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got "
                         f"{dtype}")
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    if shape is None:
        shape = np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        shape = _shape(shape, "multivariate_normal")
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    factor = _covariance_factor(cov, method)
    z = _normal(data, shape + mean.shape[-1:], dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, z)


def _covariance_factor(cov, method):
    name = {"cholesky": "cholesky", "svd": "svd", "eigh": "eigh"}[method]
    fn = getattr(linalg, name, None)
    if fn is None:
        raise NotImplementedError(f"multivariate_normal(method={method!r}) needs "
                                  f"didax.numpy.linalg.{name}, which didax does not have yet")
    if method == "svd":
        u, s, _ = fn(cov)
        return u * jnp.sqrt(s[..., None, :])
    if method == "eigh":
        w, v = fn(cov)
        return v * jnp.sqrt(w[..., None, :])
    return fn(cov)


_F32_ONE = np.float32(1)  # lognormal's default sigma (a NumPy scalar, immutable)


def lognormal(key, sigma=_F32_ONE, shape=None, dtype=None, *, out_sharding=None):
    """exp(sigma * z) with z standard normal."""
    data, _ = _key_data_of("lognormal", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype,
                                                     "lognormal")
    if not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"dtype argument to `lognormal` must be a float or complex dtype, "
                         f"got {dtype}")
    shape = _shape_or_broadcast("lognormal", shape, sigma)
    return lax.exp(_mul_bcast(_normal(data, shape, dtype), _to_dtype(sigma, dtype)))


def _mul_bcast(x, y):
    """`x * y` with NumPy broadcasting (lax needs equal ranks)."""
    return jnp.multiply(x, y)


# --------------------------------------------------------------------------------------
# Discrete samplers


def bernoulli(key, p=0.5, shape=None, mode: str = "low", *, out_sharding=None):
    """Booleans that are True with probability p: uniform(...) < p ('high' mode adds a second
    draw below the first's resolution, for tiny p)."""
    data, _ = _key_data_of("bernoulli", key)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    dtype = dtypes.dtype(p, canonicalize=True)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    shape = _shape_or_broadcast("bernoulli", shape, p)
    return _drawn(("bernoulli", shape, mode), lambda d, p: _bernoulli(d, p, shape, mode),
                  data, p)


def _bernoulli(data, p, shape, mode):
    dtype = dtypes.dtype(p, canonicalize=True)
    p = lax_shape.broadcast_to_rank(_to_dtype(p, dtype), len(shape))
    if mode == "high":
        u = _uniform(data, 0.0, 1.0, (2,) + shape, dtype)
        u1, u2 = (lax_shape.reshape(lax_shape.index_in_dim(u, i, 0), shape) for i in (0, 1))
        u2 = lax.mul(u2, _const(2.0 ** -dtypes.finfo(dtype).nmant, dtype))
        return lax.lt(u2, lax.sub(p, u1))
    return lax.lt(_uniform(data, 0.0, 1.0, shape, dtype), p)


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """-1 or +1 with equal probability."""
    data, _ = _key_data_of("rademacher", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype,
                                                     "rademacher")
    shape = _shape(shape, "rademacher")
    return _drawn(("rademacher", shape, dtype), lambda d: _rademacher(d, shape, dtype), data)


def _rademacher(data, shape, dtype):
    b = lax.convert_element_type(bernoulli(data, 0.5, shape), dtype)
    return lax.sub(lax.mul(_const(2, dtype), b), _const(1, dtype))


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Number of Bernoulli(p) trials up to the first success: floor(log u / log1p(-p)) + 1."""
    data, _ = _key_data_of("geometric", key)
    dtype = _int_dtype("geometric", dtype)
    shape = _shape_or_broadcast("geometric", shape, p)
    (p,) = promote_dtypes_inexact(p)
    u = _uniform(data, 0.0, 1.0, shape, p.dtype)
    u = jnp.where(u == 0, 1, u)  # as JAX: u = 0 maps to 1 rather than to an infinite log
    log_one_minus_p = jnp.broadcast_to(lax.log1p(lax.neg(p)), shape)
    g = lax.add(lax.floor(lax.div(lax.log(u), log_one_minus_p)), _const(1, p.dtype))
    return lax.convert_element_type(g, dtype)


def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """Gumbel samples -log(-log(u)); mode 'high' builds u from two draws so that it reaches
    further into the tails."""
    data, _ = _key_data_of("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    shape = _shape(shape, "gumbel")
    return _drawn(("gumbel", shape, dtype, mode), lambda d: _gumbel(d, shape, dtype, mode), data)


def _gumbel(data, shape, dtype, mode):
    info = dtypes.finfo(dtype)
    if mode == "highest" and dtype == np.float32:
        raise NotImplementedError("gumbel(mode='highest') for float32 (it needs lax.clz)")
    if mode in ("high", "highest"):
        u = _uniform(data, 0.0, 1.0, (2,) + shape, dtype)
        high, low = (lax_shape.reshape(lax_shape.index_in_dim(u, i, 0), shape) for i in (0, 1))
        x = jnp.where(high >= 0.5, high,
                      high + _const(2.0 ** -info.nmant, dtype) * low + _const(info.tiny, dtype))
        return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))
    u = _uniform(data, _const(info.tiny, dtype), 1.0, shape, dtype)
    return lax.neg(lax.log(lax.neg(lax.log(u))))


def categorical(key, logits, axis: int = -1, shape=None, replace: bool = True, mode=None,
                *, out_sharding=None):
    """Category indices with probabilities softmax(logits): the Gumbel-max trick (Gumbel
    top-k without replacement)."""
    data, _ = _key_data_of("categorical", key)
    logits = jnp.asarray(logits)
    axis = operator.index(axis)
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = _shape(shape, "categorical")
        _check_shape("categorical", shape, batch_shape)
    replace = bool(replace)
    return _drawn(("categorical", axis, shape, replace, mode),
                  lambda d, x: _categorical(d, x, axis, shape, replace, mode), data, logits)


def _categorical(data, logits, axis, shape, replace, mode):
    ndim = logits.ndim
    batch_shape = tuple(np.delete(logits.shape, axis))
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        if axis >= 0:
            axis -= ndim
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % ndim, logits.shape[axis])
        g = gumbel(data, (*prefix, *logits_shape), logits.dtype, mode=mode)
        return jnp.argmax(g + lax_shape.expand_dims(logits, tuple(range(len(prefix)))),
                          axis=axis)
    logits = logits + gumbel(data, logits.shape, logits.dtype, mode=mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    _, indices = lax_red.top_k(jnp.moveaxis(logits, axis, -1), k)
    dimensions = (indices.ndim - 1, *range(indices.ndim - 1))
    return lax_shape.reshape(indices, shape, dimensions)


# --------------------------------------------------------------------------------------
# Continuous samplers by inverse CDF


def exponential(key, shape=(), dtype=None, *, out_sharding=None):
    """Exponential(1) samples: -log1p(-u)."""
    data, _ = _key_data_of("exponential", key)
    dtype = _float_dtype("exponential", dtype)
    shape = _shape(shape, "exponential")
    return _drawn(("exponential", shape, dtype), lambda d: _exponential(d, shape, dtype), data)


def _exponential(data, shape, dtype):
    u = _uniform(data, 0.0, 1.0, shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))


def laplace(key, shape=(), dtype=None, *, out_sharding=None):
    """Laplace(0, 1) samples: sign(u) * log1p(-|u|), u uniform in (-1, 1)."""
    data, _ = _key_data_of("laplace", key)
    dtype = _float_dtype("laplace", dtype)
    shape = _shape(shape, "laplace")
    return _drawn(("laplace", shape, dtype), lambda d: _laplace(d, shape, dtype), data)


def _laplace(data, shape, dtype):
    u = _uniform(data, _const(-1.0 + dtypes.finfo(dtype).epsneg, dtype), 1.0, shape, dtype)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None, *, out_sharding=None):
    """Logistic samples: log(u) - log1p(-u)."""
    data, _ = _key_data_of("logistic", key)
    dtype = _float_dtype("logistic", dtype)
    shape = _shape(shape, "logistic")
    return _drawn(("logistic", shape, dtype), lambda d: _logistic(d, shape, dtype), data)


def _logistic(data, shape, dtype):
    x = _uniform(data, _const(dtypes.finfo(dtype).tiny, dtype), 1.0, shape, dtype)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def cauchy(key, shape=(), dtype=None, *, out_sharding=None):
    """Cauchy samples: tan(pi * (u - 1/2))."""
    data, _ = _key_data_of("cauchy", key)
    dtype = _float_dtype("cauchy", dtype)
    shape = _shape(shape, "cauchy")
    return _drawn(("cauchy", shape, dtype), lambda d: _cauchy(d, shape, dtype), data)


def _cauchy(data, shape, dtype):
    u = _uniform(data, _const(dtypes.finfo(dtype).eps, dtype), 1.0, shape, dtype)
    return lax.tan(lax.mul(_const(np.pi, dtype), lax.sub(u, _const(0.5, dtype))))


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto(b) samples: exp(e / b) with e exponential."""
    data, _ = _key_data_of("pareto", key)
    dtype = _float_dtype("pareto", dtype)
    shape = _shape_or_broadcast("pareto", shape, b)
    return lax.exp(jnp.divide(_exponential(data, shape, dtype), _to_dtype(b, dtype)))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples: scale * (-log1p(-u)) ** (1 / concentration)."""
    data, _ = _key_data_of("weibull_min", key)
    dtype = _float_dtype("weibull_min", dtype)
    u = _uniform(data, 0, 1, _shape(shape, "weibull_min"), dtype)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh samples: scale * sqrt(-2 log u)."""
    data, _ = _key_data_of("rayleigh", key)
    dtype = _float_dtype("rayleigh", dtype)
    shape = _shape_or_broadcast("rayleigh", shape, scale)
    u = _uniform(data, 0.0, 1.0, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), _const(-2, dtype))))


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular(left, mode, right) samples by inverting the piecewise-quadratic CDF."""
    data, _ = _key_data_of("triangular", key)
    dtype = _float_dtype("triangular", dtype)
    shape = _shape_or_broadcast("triangular", shape, left, mode, right)
    left, mode, right = (jnp.broadcast_to(_to_dtype(v, dtype), shape)
                         for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = _uniform(data, 0.0, 1.0, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select_n(lax.lt(u, fc), out2, out1)


def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) samples by Michael, Schucany and Haas's transformation."""
    data, _ = _key_data_of("wald", key)
    dtype = _float_dtype("wald", dtype)
    shape = _shape_or_broadcast("wald", shape, mean)
    k1, k2 = _split(data)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = _normal(k1, shape, dtype)
    z = _uniform(k2, 0.0, 1.0, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select_n(lax.le(z, mean / (mean + x)), mean_sq / x, x)


def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
    """Maxwell samples: the norm of three standard normals."""
    data, _ = _key_data_of("maxwell", key)
    dtype = _float_dtype("maxwell", dtype)
    shape = _shape(shape, "maxwell")
    return jnp.linalg.norm(_normal(data, shape + (3,), dtype), axis=-1)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell samples with a random sign, scaled and shifted."""
    data, _ = _key_data_of("double_sided_maxwell", key)
    dtype = _float_dtype("double_sided_maxwell", dtype)
    shape = _shape(shape, "double_sided_maxwell")
    params_shape = np.broadcast_shapes(_np_shape(loc), _np_shape(scale))
    if not shape:
        shape = params_shape
    shape = shape + params_shape
    maxwell_key, rademacher_key = _split(data)
    maxwell_rvs = maxwell(maxwell_key, shape, dtype)
    random_sign = rademacher(rademacher_key, shape, dtype)
    return random_sign * maxwell_rvs * scale + loc


# --------------------------------------------------------------------------------------
# Gamma and the distributions built on it


def _gamma_one(data, alpha, log_space: bool):
    """One Gamma(alpha) sample by Marsaglia and Tsang's rejection method, as JAX draws it
    (the same key splits, the same acceptance test); alpha < 1 is boosted to alpha + 1 and
    scaled by u**(1/alpha) (in log space: log u / alpha)."""
    dtype = get_aval(alpha).dtype
    zero, one = _const(0, dtype), _const(1, dtype)
    minus_one, two = _const(-1, dtype), _const(2, dtype)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select_n(boost_mask, lax.add(alpha, one), alpha)
    d = lax.sub(alpha, _const(1 / 3, dtype))
    c = lax.div(_const(1 / 3, dtype), lax.sqrt(d))

    def rejected(state):
        _, x2, v, u = state
        squeeze = lax.ge(u, lax.sub(one, lax.mul(_const(0.0331, dtype), lax.mul(x2, x2))))
        full = lax.ge(lax.log(u), lax.add(lax.mul(x2, _const(0.5, dtype)),
                                          lax.mul(d, lax.add(lax.sub(one, v), lax.log(v)))))
        return lax.bitwise_and(squeeze, full)

    def next_normal(state):
        k, sub = _split(state[0])
        x = _normal(sub, (), dtype)
        return k, x, lax.add(one, lax.mul(x, c))

    def propose(state):
        k, x_key, u_key = _split(state[0], 3)
        _, x, v = while_loop(lambda s: lax.le(s[2], zero), next_normal, (x_key, zero, minus_one))
        return k, lax.mul(x, x), lax.mul(lax.mul(v, v), v), _uniform(u_key, 0.0, 1.0, (), dtype)

    data, sub = _split(data)
    _, _, v, _ = while_loop(rejected, propose, (data, zero, one, two))
    if log_space:
        log_samples = lax.neg(_exponential(sub, (), dtype))
        log_boost = lax.select_n(lax.bitwise_or(boost_mask, lax.eq(log_samples, zero)),
                                 lax.mul(log_samples, lax.div(one, alpha_orig)), zero)
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = lax.sub(one, _uniform(sub, 0.0, 1.0, (), dtype))
    boost = lax.select_n(boost_mask, lax.pow(samples, lax.div(one, alpha_orig)), one)
    return lax.mul(lax.mul(d, v), boost)


def _gamma_samples_impl(data, a, log_space):
    shape = get_aval(a).shape
    size = math.prod(shape)
    keys = prng.split_key_data(data, (size,))
    flat = lax_shape.reshape(a, (size,))
    samples = vmap(lambda k, x: _gamma_one(k, x, log_space))(keys, flat)
    return lax_shape.reshape(samples, shape)


# random_gamma: Gamma(a, 1) samples (or their logs), one key per element split from `key`.
# Its derivative in `a` is the implicit reparameterization gradient dx/da = -(dF/da)/(dF/dx)
# of the CDF F, which lax.random_gamma_grad computes (as JAX differentiates it). It is a
# primitive, as in JAX, so that jaxprs show it and the rule lives in one place.

random_gamma_p = core.primitive("random_gamma")


# The sampler (a vmapped rejection loop), compiled once per shape: eager calls and the
# compiled code of an enclosing jit both run it through here.
_gamma_sampler = jit(_gamma_samples_impl, static_argnums=2)


def _random_gamma_impl(data, a, *, log_space):
    return np.asarray(_gamma_sampler(data, a, log_space))


def _random_gamma_aval(data, a, *, log_space):
    if data.dtype != np.uint32 or data.shape != (2,):
        raise TypeError(f"random_gamma expects threefry key data (uint32[2]), got "
                        f"{data.str_short()}")
    return core.ShapedArray(a.shape, a.dtype)


@random_gamma_p.def_jvp
def _random_gamma_jvp(primals, tangents, *, log_space):
    (data, a), (_, a_dot) = primals, tangents
    x = random_gamma_p.bind(data, a, log_space=log_space)
    if type(a_dot) is core.Zero:
        return x, core.Zero(get_aval(x).to_tangent_aval())
    if log_space:  # d log(g)/da = (dg/da) / g
        dx_da = lax.div(random_gamma_grad(a, lax.exp(x)), lax.exp(x))
    else:
        dx_da = random_gamma_grad(a, x)
    return x, lax.mul(a_dot, dx_da)


def _batch_first(v, d, size):
    """`v` with its batch dimension `d` first; an unbatched value (`d` None) broadcast."""
    if d is None:
        return broadcast(v, (size,))
    ndim = get_aval(v).ndim
    d %= ndim
    return v if d == 0 else transpose(v, [d, *(i for i in range(ndim) if i != d)])


@random_gamma_p.def_batch
def _random_gamma_batch(size, vals, dims, *, log_space):
    """One draw per batch member, each with its own key, as a loop over the batch."""
    data, a = (_batch_first(v, d, size) for v, d in zip(vals, dims))
    _, out = scan(lambda c, ka: (c, random_gamma_p.bind(ka[0], ka[1], log_space=log_space)),
                  (), (data, a))
    return out, 0


random_gamma_p.def_impl(_random_gamma_impl)
random_gamma_p.def_abstract_eval(_random_gamma_aval)


def _gamma_samples(data, a):
    return random_gamma_p.bind(data, a, log_space=False)


def _log_gamma_samples(data, a):
    return random_gamma_p.bind(data, a, log_space=True)


def _gamma(data, a, shape, dtype, log_space=False):
    if shape is None:
        shape = _np_shape(a)
    else:
        _check_shape("gamma", shape, _np_shape(a))
    a = jnp.broadcast_to(_to_dtype(a, dtype), shape)
    return (_log_gamma_samples if log_space else _gamma_samples)(data, a)


def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Gamma(a, 1) samples (divide by a rate or multiply by a scale for other scales)."""
    data, _ = _key_data_of("gamma", key)
    dtype = _float_dtype("gamma", dtype)
    shape = None if shape is None else _shape(shape, "gamma")
    return _gamma(data, a, shape, dtype)


def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """log of Gamma(a, 1) samples, computed in log space (accurate for small a, whose
    samples underflow)."""
    data, _ = _key_data_of("loggamma", key)
    dtype = _float_dtype("loggamma", dtype)
    shape = None if shape is None else _shape(shape, "loggamma")
    return _gamma(data, a, shape, dtype, log_space=True)


def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta(a, b) samples: Ga / (Ga + Gb), from log-gamma samples without underflow."""
    data, _ = _key_data_of("beta", key)
    dtype = _float_dtype("beta", dtype)
    shape = _shape_or_broadcast("beta", shape, a, b)
    key_a, key_b = _split(data)
    a = jnp.broadcast_to(_to_dtype(a, dtype), shape)
    b = jnp.broadcast_to(_to_dtype(b, dtype), shape)
    log_gamma_a = _gamma(key_a, a, shape, dtype, log_space=True)
    log_gamma_b = _gamma(key_b, b, shape, dtype, log_space=True)
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = jnp.exp(log_gamma_a - log_max)
    gamma_b_scaled = jnp.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet(alpha) samples over the last axis: the softmax of log-gamma samples."""
    data, _ = _key_data_of("dirichlet", key)
    dtype = _float_dtype("dirichlet", dtype)
    alpha_shape = _np_shape(alpha)
    if len(alpha_shape) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{len(alpha_shape)}")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        shape = _shape(shape, "dirichlet")
        _check_shape("dirichlet", shape, alpha_shape[:-1])
    log_gamma = _gamma(data, _to_dtype(alpha, dtype), shape + alpha_shape[-1:], dtype,
                       log_space=True)
    unnormalized = jnp.exp(log_gamma - lax.stop_gradient(jnp.max(log_gamma, -1, keepdims=True)))
    return unnormalized / jnp.sum(unnormalized, -1, keepdims=True)


def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square(df) samples: 2 * Gamma(df / 2)."""
    data, _ = _key_data_of("chisquare", key)
    dtype = _float_dtype("chisquare", dtype)
    shape = _shape_or_broadcast("chisquare", shape, df)
    return _chisquare(data, df, shape, dtype)


def _chisquare(data, df, shape, dtype):
    two = _const(2, dtype)
    half_df = jnp.divide(_to_dtype(df, dtype), two)
    return lax.mul(jnp.exp(_gamma(data, half_df, shape, dtype, log_space=True)), two)


def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t(df) samples: z * sqrt((df / 2) / Gamma(df / 2))."""
    data, _ = _key_data_of("t", key)
    dtype = _float_dtype("t", dtype)
    shape = _shape_or_broadcast("t", shape, df)
    key_n, key_g = _split(data)
    n = _normal(key_n, shape, dtype)
    half_df = jnp.divide(_to_dtype(df, dtype), _const(2, dtype))
    g = _gamma(key_g, half_df, shape, dtype)
    return n * jnp.sqrt(half_df / g)


def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F(dfnum, dfden) samples: the ratio of two scaled chi-square samples."""
    data, _ = _key_data_of("f", key)
    dtype = _float_dtype("f", dtype)
    shape = _shape_or_broadcast("f", shape, dfnum, dfden)
    dfden = _to_dtype(dfden, dtype)
    dfnum = _to_dtype(dfnum, dtype)
    key_dfd, key_dfn = _split(data)
    num = jnp.divide(_chisquare(key_dfn, dfnum, shape, dtype), dfnum)
    den = jnp.divide(_chisquare(key_dfd, dfden, shape, dtype), dfden)
    return jnp.divide(num, den)


def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Generalized normal samples, density proportional to exp(-|x|**p): a random sign
    times Gamma(1/p)**(1/p)."""
    data, _ = _key_data_of("generalized_normal", key)
    dtype = _float_dtype("generalized_normal", dtype)
    return _generalized_normal(data, p, _shape(shape, "generalized_normal"), dtype)


def _generalized_normal(data, p, shape, dtype):
    k_gamma, k_sign = _split(data)
    g = _gamma(k_gamma, 1 / p, shape, dtype)
    r = rademacher(k_sign, shape, dtype)
    return r * g ** (1 / p)


def orthogonal(key, n: int, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Matrices with orthonormal columns (or rows), uniform (Haar) on the orthogonal group:
    the Q of a QR factorisation of a normal matrix, signs fixed by R's diagonal (Mezzadri)."""
    data, _ = _key_data_of("orthogonal", key)
    dtype = _float_dtype("orthogonal", dtype)
    shape = _shape(shape, "orthogonal")
    n = operator.index(concrete_or_error(n, "The error occurred in didax.random.orthogonal()"))
    m = n if m is None else operator.index(
        concrete_or_error(m, "The error occurred in didax.random.orthogonal()"))
    z = normal(data, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


def ball(key, d: int, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Points uniform in the unit Lp ball of dimension d (Barthe, Guedon, Mendelson and
    Naor's construction)."""
    data, _ = _key_data_of("ball", key)
    dtype = _float_dtype("ball", dtype)
    shape = _shape(shape, "ball")
    d = operator.index(concrete_or_error(d, "The error occurred in didax.random.ball()"))
    k1, k2 = _split(data)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = _exponential(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


# --------------------------------------------------------------------------------------
# Poisson


def _poisson_knuth(data, lam, shape, dtype, max_iters):
    """Knuth's method: count uniforms until their product drops below exp(-lam)."""
    def body(carry):
        i, k, rng, log_prod = carry
        rng, sub = _split(rng)
        k = jnp.where(log_prod > -lam, k + 1, k)
        return i + 1, k, rng, log_prod + jnp.log(_uniform(sub, 0.0, 1.0, shape, np.float32))

    def running(carry):
        i, _, _, log_prod = carry
        return jnp.any(log_prod > -lam) & (i < max_iters)

    init = (0, jnp.zeros(shape, dtype), data, jnp.zeros(shape, np.float32))
    k = while_loop(running, body, init)[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(data, lam, shape, dtype, max_iters):
    """Hormann's transformed rejection (PTRS), for lam >= 10."""
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, rng = carry
        rng, sub0, sub1 = _split(rng, 3)
        u = _uniform(sub0, 0.0, 1.0, shape, lam.dtype) - 0.5
        v = _uniform(sub1, 0.0, 1.0, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, jnp.where(accept, k, k_out), accepted | accept, rng

    def running(carry):
        i, _, accepted, _ = carry
        return jnp.any(~accepted) & (i < max_iters)

    init = (0, jnp.full(shape, -1, lam.dtype), jnp.zeros(shape, bool), data)
    return while_loop(running, body, init)[1].astype(dtype)


def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Poisson(lam) counts: Knuth's method below lam = 10, transformed rejection above
    (as TensorFlow, NumPy and JAX do)."""
    data, _ = _key_data_of("poisson", key)
    dtype = _int_dtype("poisson", dtype)
    shape = _shape(shape, "poisson") if shape is not None else _np_shape(lam)
    lam = lax.convert_element_type(jnp.broadcast_to(lam, shape), np.float32)
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = jnp.where(use_knuth, lam, 0.0)
    lam_rejection = jnp.where(use_knuth, 1e5, lam)  # (any rate where rejection is fast)
    max_iters = dtypes.iinfo(dtype).max
    result = jnp.where(use_knuth, _poisson_knuth(data, lam_knuth, shape, dtype, max_iters),
                       _poisson_rejection(data, lam_rejection, shape, dtype, max_iters))
    return jnp.where(lam == 0, jnp.zeros_like(result), result)


# --------------------------------------------------------------------------------------
# Binomial and multinomial

_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                           0.00833056343336287])


def _stirling_approx_tail(k):
    """log(k!) minus Stirling's approximation of it: tabulated up to 9, then a series."""
    use_table = k <= 9
    k = jnp.clip(k, 0.0, 9.0)
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    table = jnp.asarray(_STIRLING_TAIL.astype(k.dtype))
    return jnp.where(use_table, table[jnp.floor(k).astype(np.int32)], approx)


def _binomial_inversion(data, count, prob, shape, dtype, max_iters):
    """Counts successes by summing geometric waiting times until they pass `count`."""
    log1minusprob = jnp.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, rng = carry
        sub, rng = _split(rng)  # (JAX's order: the first key draws)
        num_geom_out = jnp.where(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(sub, 0.0, 1.0, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, rng

    def running(carry):
        i, _, geom_sum, _ = carry
        return jnp.any(geom_sum <= count) & (i < max_iters)

    zeros = jnp.zeros(shape, prob.dtype)
    k = while_loop(running, body, (0, zeros, zeros, data))[1]
    return (k - 1).astype(dtype)


def _btrs(data, count, prob, shape, dtype, max_iters):
    """Hormann's transformed rejection with squeeze (BTRS), for count * prob > 10."""
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, rng = carry
        rng, sub0, sub1 = _split(rng, 3)
        u = _uniform(sub0, 0.0, 1.0, shape, prob.dtype) - 0.5
        v = _uniform(sub1, 0.0, 1.0, shape, prob.dtype)
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, jnp.where(accept, k, k_out), accepted | accept, rng

    def running(carry):
        i, _, accepted, _ = carry
        return jnp.any(~accepted) & (i < max_iters)

    init = (0, jnp.full(shape, -1, prob.dtype), jnp.zeros(shape, bool), data)
    return while_loop(running, body, init)[1].astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts (as floats, like JAX): inversion for n * min(p, 1 - p) <= 10,
    BTRS above; nan for invalid n or p, inf for infinite n."""
    data, _ = _key_data_of("binomial", key)
    dtype = _float_dtype("binomial", dtype)
    if shape is None:
        shape = np.broadcast_shapes(_np_shape(n), _np_shape(p))
    else:
        shape = _shape(shape, "binomial")
        _check_shape("binomial", shape, _np_shape(n), _np_shape(p))
    return _binomial(data, n, p, shape, dtype)


def _binomial(data, count, prob, shape, dtype):
    (prob,) = promote_dtypes_inexact(prob)
    count = jnp.broadcast_to(lax.convert_element_type(jnp.asarray(count), prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = jnp.where(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = jnp.where(q_is_nan | q_l_0, jnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)  # as np.random.binomial does for float counts
    count_inv = jnp.where(use_inversion, count, 0.0)
    count_btrs = jnp.where(use_inversion, 1e4, count)
    q_btrs = jnp.where(use_inversion, 0.5, q)
    max_iters = dtypes.finfo(dtype).max
    samples = jnp.where(use_inversion,
                        _binomial_inversion(data, count_inv, q, shape, dtype, max_iters),
                        _btrs(data, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = jnp.where(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = jnp.where(count_inf & ~invalid, jnp.full_like(samples, np.inf, dtype), samples)
    return jnp.where(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                     count.astype(dtype) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(n, p) counts over the last axis of p: a scan of binomial draws of each
    outcome's share of the trials left."""
    data, _ = _key_data_of("multinomial", key)
    dtype = _float_dtype("multinomial", dtype)
    n, p = promote_dtypes_inexact(n, p)
    shape = p.shape if shape is None else _shape(shape, "multinomial")
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = lax_red.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining == 0, 1, remaining)

    def draw(remainder, ratio_key):
        ratio, k = ratio_key
        count = _binomial(k, remainder, jnp.clip(ratio, 0, 1), get_aval(remainder).shape,
                          get_aval(remainder).dtype)
        return remainder - count, count

    keys = prng.split_key_data(data, (ratios.shape[0],))
    _, counts = scan(draw, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)
