"""XLA's random bit generators: `lax.rng_bit_generator` (a counter-based generator whose
state, a uint32[4] key, is passed in and returned advanced) and `lax.rng_uniform` (a
stateful draw).

`rng_bit_generator` computes XLA's CPU bits exactly, for every `RandomAlgorithm`: the
state's words are (key0, key1, counter low, counter high).
  RNG_THREE_FRY: Threefry-2x32 of the key on successive 64-bit counters. 32-bit results
    (and 8/16-bit ones: their low bits) come in two halves: the shape is split in half along
    its first even dimension (else its largest), one counter per element of the half, and
    each hash pair's two words land side by side along that dimension. 64-bit results take
    one counter each, (second word << 32) | first word.
  RNG_PHILOX, RNG_DEFAULT (Philox on CPU): Philox-4x32-10 of the key on a 128-bit counter
    whose high half is the key, four words per counter, in order (two per 64-bit result).
The counter advances by the number of counters used. Under vmap each example's key draws
its own bits and advances alone (JAX's vmap draws every example's bits from the first key).

`rng_uniform` draws from a NumPy generator of didax's own: its values differ from JAX's,
which are XLA's, not reproducible either. It has no derivative and no batching, as in JAX.
"""
from __future__ import annotations

import enum
import math
import warnings

import numpy as np

from didax._src import core, dtypes
from didax._src.core import ShapedArray
from didax._src.interpreters.batching import bdim_at_front
from didax._src.interpreters.jvp import defjvp_zero
from didax._src.lax.control_flow.loops import map as lax_map
from didax._src.lax.elementwise import _lift_scalars
from didax._src.primitives.prng import _threefry2x32_impl
from didax._src.typecheck import check_dtype, num, static_shape


class RandomAlgorithm(enum.IntEnum):
    """The bit generator `rng_bit_generator` runs (XLA's names)."""

    RNG_DEFAULT = 0  # the backend's choice: Philox on CPU
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


_U32, _U64 = np.dtype(np.uint32), np.dtype(np.uint64)
_BIT_DTYPES = tuple(np.dtype(f"uint{b}") for b in (8, 16, 32, 64))
_MASK32 = 0xFFFFFFFF
_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def _u64_words(values):
    """(low, high) uint32 words of uint64 values."""
    return ((values & np.uint64(_MASK32)).astype(_U32),
            (values >> np.uint64(32)).astype(_U32))


def _counters(start: int, count: int):
    """`count` successive 64-bit counters from `start` (wrapping)."""
    return np.uint64(start) + np.arange(count, dtype=_U64)  # (uint64 adds wrap)


def _threefry_halves(shape) -> tuple[int, tuple]:
    """The dimension a 32-bit draw is split along, and the shape of one half."""
    if not shape:
        return 0, (1,)
    even = [i for i, d in enumerate(shape) if d % 2 == 0]
    axis = even[0] if even else max(range(len(shape)), key=lambda i: (shape[i], -i))
    return axis, shape[:axis] + (-(-shape[axis] // 2),) + shape[axis + 1:]


def _threefry(key, shape, bits: int):
    k0, k1 = key[0], key[1]
    start = int(key[2]) | int(key[3]) << 32
    if bits == 64:
        count = math.prod(shape)
        a, b = _threefry2x32_impl(k0, k1, *_u64_words(_counters(start, count)))
        out = (b.astype(_U64) << np.uint64(32)) | a.astype(_U64)
        return out.reshape(shape), count
    axis, half = _threefry_halves(tuple(shape))
    count = math.prod(half)
    a, b = _threefry2x32_impl(k0, k1, *_u64_words(_counters(start, count)))
    pairs = np.stack([a.reshape(half), b.reshape(half)], axis + 1)
    whole = pairs.reshape(half[:axis] + (2 * half[axis],) + half[axis + 1:])
    index = (slice(None),) * axis + (slice(0, shape[axis] if shape else 1),)
    return whole[index].reshape(shape), count


def _philox_words(key, count: int):
    """`count` blocks of Philox-4x32-10, as 4 * count uint32 words."""
    k0, k1 = int(key[0]), int(key[1])
    low = _counters(int(key[2]) | int(key[3]) << 32, count)
    carry = (low < low[:1]).astype(_U64) if count else low  # the low half wrapped
    high = np.uint64(k0 | k1 << 32) + carry
    c0, c1 = _u64_words(low)
    c2, c3 = _u64_words(high)
    c = [w.astype(_U64) for w in (c0, c1, c2, c3)]
    ks = [np.uint64(k0), np.uint64(k1)]
    mask, shift = np.uint64(_MASK32), np.uint64(32)
    for _ in range(10):
        p0, p1 = np.uint64(_PHILOX_M[0]) * c[0], np.uint64(_PHILOX_M[1]) * c[2]
        c = [(p1 >> shift) ^ c[1] ^ ks[0], p1 & mask, (p0 >> shift) ^ c[3] ^ ks[1], p0 & mask]
        ks = [(k + np.uint64(w)) & mask for k, w in zip(ks, _PHILOX_W)]
    return np.stack(c, 1).astype(_U32).ravel()


def _philox(key, shape, bits: int):
    n = math.prod(shape) * (2 if bits == 64 else 1)
    count = -(-n // 4)
    words = _philox_words(key, count)[:n]
    if bits == 64:
        words = words.reshape(-1, 2).astype(_U64)
        return ((words[:, 1] << np.uint64(32)) | words[:, 0]).reshape(shape), count
    return words.reshape(shape), count


def _rng_bit_generator_impl(key, *, shape, dtype, algorithm, out_sharding=None):
    key = np.asarray(key)
    generate = _threefry if algorithm == RandomAlgorithm.RNG_THREE_FRY else _philox
    bits = np.dtype(dtype).itemsize * 8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (uint64 products wrap, as meant)
        out, used = generate(key, tuple(shape), bits)
        counter = np.uint64(int(key[2]) | int(key[3]) << 32) + np.uint64(used)
    new_key = np.array([key[0], key[1], *_u64_words(counter)], _U32)
    return [new_key, out.astype(dtype)]


def _rng_bit_generator_aval(key, *, shape, dtype, algorithm, out_sharding=None):
    if key.dtype != _U32 or key.shape != (4,):
        raise TypeError(f"rng_bit_generator: the key must be a uint32[4] array, got "
                        f"{key.str_short()}")
    return [key, ShapedArray(shape, dtype)]


rng_bit_generator_p = core.primitive("rng_bit_generator", multiple_results=True)
rng_bit_generator_p.def_impl(_rng_bit_generator_impl)
rng_bit_generator_p.def_abstract_eval(_rng_bit_generator_aval)
defjvp_zero(rng_bit_generator_p)


@rng_bit_generator_p.def_batch
def _rng_bit_generator_batch(size, vals, dims, **params):
    (key,), (d,) = vals, dims
    keys, bits = lax_map(lambda k: tuple(rng_bit_generator_p.bind(k, **params)),
                         bdim_at_front(key, d, size))
    return [keys, bits], [0, 0]


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
    """(the advanced key, random bits of `shape` and unsigned `dtype`) from a uint32[4] key,
    by XLA's `algorithm` (see the module's notes for the bits)."""
    dtype = np.dtype(dtype)
    if dtype not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype.name}: use one of "
                        "uint8, uint16, uint32, uint64")
    canonical = dtypes.canonicalize_dtype(dtype)
    if canonical != dtype:
        warnings.warn(f"Explicitly requested dtype {dtype.name} requested in rng_bit_generator "
                      f"is not available, and will be truncated to dtype {canonical.name}. To "
                      "enable more dtypes, set the jax_enable_x64 configuration option.",
                      stacklevel=2)
    shape = static_shape("rng_bit_generator", shape)
    new_key, bits = rng_bit_generator_p.bind(key, shape=shape, dtype=canonical,
                                             algorithm=RandomAlgorithm(algorithm),
                                             out_sharding=out_sharding)
    return new_key, bits


_uniform_state = np.random.default_rng()


def _rng_uniform_impl(a, b, *, shape):
    a, b = np.asarray(a), np.asarray(b)
    if dtypes.kind(a.dtype) in "iu":
        return _uniform_state.integers(a, b, size=shape, dtype=a.dtype, endpoint=False)
    return (a + (b - a) * _uniform_state.random(size=shape)).astype(a.dtype)


def _rng_uniform_aval(a, b, *, shape):
    if a.shape or b.shape:
        raise ValueError(f"rng_uniform: a and b must be scalars, got {a.str_short()} and "
                         f"{b.str_short()}")
    if a.dtype != b.dtype:
        raise TypeError(f"rng_uniform: a and b must have one dtype, got {a.dtype.name} and "
                        f"{b.dtype.name}")
    check_dtype("rng_uniform", a, num)
    return ShapedArray(shape, a.dtype, a.weak_type)


rng_uniform_p = core.primitive("rng_uniform")
rng_uniform_p.def_impl(_rng_uniform_impl)
rng_uniform_p.def_abstract_eval(_rng_uniform_aval)
rng_uniform_p.def_traits(effectful=True)  # each application draws anew: never merged or folded
rng_uniform_p.mark_absent("jvp", "rng_uniform has no derivative (as in JAX)")
rng_uniform_p.mark_absent("batch", "rng_uniform has no batching rule (as in JAX): use "
                          "didax.random, which does")


def rng_uniform(a, b, shape):
    """Uniform random numbers in [a, b) from a hidden state (see the module's notes)."""
    a, b = _lift_scalars(a, b)
    return rng_uniform_p.bind(a, b, shape=static_shape("rng_uniform", shape))


__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_uniform"]
