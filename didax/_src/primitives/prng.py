"""The threefry2x32 hash and the key operations built on it, bit-identical to jax.random.

Keys here are raw key data: uint32 arrays whose last dimension holds the two key words.
Seeding, splitting, folding in and drawing bits are compositions of lax operations and the
one `threefry2x32` primitive, so they work under every transformation. The scheme is JAX's
default `jax_threefry_partitionable=True` one: element i of a draw hashes the 64-bit counter
i, split into its high and low 32-bit words. The primitive's native rule computes the 20
rounds in C, so jitted draws hash natively with the NumPy impl's bits.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import core, dtypes, tree_util
from didax._src.compiler.native.loops import contiguous, loop_nest, over
from didax._src.compiler.native.rules import c_constant, native_rule
from didax._src.errors import user_error
from didax._src.interpreters import batching
from didax._src.interpreters.jvp import defjvp_zero
from didax._src.ir import DropVar, Literal
from didax._src.lax import elementwise as lax_elem
from didax._src.lax import shape as lax_shape
from didax._src.lax.reduction import reduce_and
from didax._src.typecheck import broadcast_shapes

_U32 = np.dtype(np.uint32)
_KEY_PARITY = np.uint32(0x1BD11BDA)
_ZERO = np.array(0, _U32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))

# --------------------------------------------------------------------------------------
# The primitive: four uint32 operands (two key words, two counter words), broadcasting as
# lax elementwise operations do, and two uint32 results.

threefry2x32_p = core.primitive("threefry2x32", multiple_results=True)


# Rotation amounts (and their complements) and round constants as 0-d arrays: NumPy's
# ufuncs take those faster than scalars.
_ROT_ARRAYS = tuple(tuple((np.array(r, _U32), np.array(32 - r, _U32)) for r in rots)
                    for rots in _ROTATIONS)
_ROUND_NUMBERS = tuple(np.array(i + 1, _U32) for i in range(5))


# Up to this many hashes, Python integers beat NumPy's ~100 ufunc calls (splits, fold_in and
# scalar draws are that small).
_SCALAR_PATH_MAX_SIZE = 8
_MASK = 0xFFFFFFFF


def _threefry2x32_scalar(k1, k2, x0, x1):
    """The hash of one counter pair, on Python ints."""
    ks = (k1, k2, k1 ^ k2 ^ 0x1BD11BDA)
    x0 = (x0 + k1) & _MASK
    x1 = (x1 + k2) & _MASK
    for i in range(5):
        for r in _ROTATIONS[i & 1]:
            x0 = (x0 + x1) & _MASK
            x1 = (((x1 << r) & _MASK) | (x1 >> (32 - r))) ^ x0
        x0 = (x0 + ks[(i + 1) % 3]) & _MASK
        x1 = (x1 + ks[(i + 2) % 3] + i + 1) & _MASK
    return x0, x1


def _as_ints(v, shape, size):
    """The elements of `v` broadcast to `shape`, as a list of Python ints."""
    v = np.asarray(v)
    if v.ndim == 0:
        return [int(v)] * size
    return np.broadcast_to(v, shape).ravel().tolist()


def _threefry2x32_impl(k1, k2, x0, x1):
    """Threefry-2x32 with 20 rounds, on NumPy uint32 arrays (arithmetic wraps mod 2**32).

    Works in place on two output buffers and one scratch buffer: this is the hot path of
    every sampler, and allocation would dominate on small draws.
    """
    shape = np.broadcast_shapes(np.shape(k1), np.shape(k2), np.shape(x0), np.shape(x1))
    size = math.prod(shape)
    if size <= _SCALAR_PATH_MAX_SIZE:
        columns = [_as_ints(v, shape, size) for v in (k1, k2, x0, x1)]
        pairs = [_threefry2x32_scalar(*words) for words in zip(*columns)]
        return (np.array([p[0] for p in pairs], _U32).reshape(shape),
                np.array([p[1] for p in pairs], _U32).reshape(shape))
    k1 = np.asarray(k1, _U32)
    k2 = np.asarray(k2, _U32)
    ks = (k1, k2, k1 ^ k2 ^ _KEY_PARITY)
    add, lshift, rshift, xor = np.add, np.left_shift, np.right_shift, np.bitwise_xor
    a = np.empty(shape, _U32)
    b = np.empty(shape, _U32)
    tmp = np.empty(shape, _U32)
    add(x0, k1, out=a)
    add(x1, k2, out=b)
    for i in range(5):
        for r, r_complement in _ROT_ARRAYS[i % 2]:
            add(a, b, out=a)
            lshift(b, r, out=tmp)  # b = rotl(b, r) ^ a; the two shifted parts share no bits
            rshift(b, r_complement, out=b)
            xor(b, tmp, out=b)
            xor(b, a, out=b)
        add(a, ks[(i + 1) % 3], out=a)
        add(b, ks[(i + 2) % 3] + _ROUND_NUMBERS[i], out=b)
    return a, b


def _threefry2x32_aval(k1, k2, x0, x1):
    avals = (k1, k2, x0, x1)
    if any(a.dtype != _U32 for a in avals):
        got = ", ".join(a.dtype.name for a in avals)
        raise TypeError(f"threefry2x32 requires uint32 operands, got {got}")
    shape = broadcast_shapes("threefry2x32", *(a.shape for a in avals))
    out = core.ShapedArray(shape, _U32)
    return [out, out]


threefry2x32_p.def_impl(_threefry2x32_impl)
threefry2x32_p.def_abstract_eval(_threefry2x32_aval)
defjvp_zero(threefry2x32_p)  # integer outputs: their tangents are zero
batching.defbroadcasting(threefry2x32_p)
_broadcasting_batch = threefry2x32_p.rules["batch"]


def _threefry2x32_batch(size, vals, dims):
    outs, out_dim = _broadcasting_batch(size, vals, dims)
    return outs, [out_dim, out_dim]


threefry2x32_p.def_batch(_threefry2x32_batch)
threefry2x32_p.mark_absent("transpose", "threefry2x32 is not linear (integer hash)")


def _threefry2x32_native_when(eqn) -> bool:
    return all(v.aval.dtype == _U32 for v in (*eqn.invars, *eqn.outvars))


@native_rule(threefry2x32_p, kind="block", when=_threefry2x32_native_when,
             counts=lambda eqn: (1, 0))
def _threefry2x32_native(em, eqn):
    """One loop over the result computing both words of each element: the 20 rounds as C
    uint32 arithmetic (wrapping mod 2**32, as the NumPy impl's), operands read broadcast
    (a literal, such as the zero high counter word, becomes a constant)."""
    shape = eqn.outvars[0].aval.shape
    reads, words = [], []
    for n, a in enumerate(eqn.invars):
        if type(a) is Literal:
            words.append(c_constant(a.val, _U32))
            continue
        if a not in eqn.invars[:n]:  # (an operand given twice is declared once)
            em.as_array(a)
        words.append(len(reads))
        reads.append(("npy_uint32", f"p{em.slots[a]}",
                      over(shape, a.aval.shape, contiguous(a.aval.shape))))
    slots = []  # (which word, the slot of its result): words nobody reads are not written
    for n, v in enumerate(eqn.outvars):
        if type(v) is not DropVar:
            s = em.slot(v)
            em.new_array(s, v.aval, var=v)
            slots.append((n, s))
    locals_ = {}

    def body(block, names):
        def let(expression):
            return block.let("npy_uint32", expression)

        k1, k2, x0, x1 = (names[w] if type(w) is int else w for w in words)
        ks = (k1, k2, let(f"({k1} ^ {k2} ^ {c_constant(_KEY_PARITY, _U32)})"))
        x0, x1 = let(f"({x0} + {k1})"), let(f"({x1} + {k2})")
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                x0 = let(f"({x0} + {x1})")
                x1 = let(f"((({x1} << {r}) | ({x1} >> {32 - r})) ^ {x0})")
            x0 = let(f"({x0} + {ks[(i + 1) % 3]})")
            x1 = let(f"({x1} + {ks[(i + 2) % 3]} + {c_constant(i + 1, _U32)})")
        locals_["out"] = (x0, x1)

    writes = [(f"q{s}", lambda n=n: locals_["out"][n]) for n, s in slots]
    loop_nest(em.body, shape, reads, body, writes, [])


def _as_uint32(x):
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return np.uint32(x)
    return x


def threefry2x32(k1, k2, x0, x1):
    """The hash of counters (x0, x1) under key (k1, k2); returns the two output words."""
    return threefry2x32_p.bind(*map(_as_uint32, (k1, k2, x0, x1)))


# --------------------------------------------------------------------------------------
# Key data operations (`key` is uint32[..., 2]; the functions below take a single key,
# shape (2,), and are mapped over batches of keys by vmap)


def check_key_data(data, name: str = "key"):
    """Raises unless `data` is uint32 with a trailing dimension of 2 (the threefry key)."""
    aval = core.get_aval(data)
    if aval.dtype != _U32:
        raise user_error(TypeError, f"{name}: invalid PRNG key data: expected dtype uint32, got "
                        f"{aval.dtype.name}. Make keys with didax.random.key or PRNGKey.")
    if not aval.shape or aval.shape[-1] != 2:
        raise user_error(TypeError, (
            f"{name}: invalid PRNG key data: expected a shape ending in (2,) for "
            f"threefry2x32, got {aval.shape}."))


def _key_words(key):
    """The two key words of a single key (shape (2,)) as scalars."""
    k1 = lax_shape.reshape(lax_shape.slice(key, (0,), (1,)), ())
    k2 = lax_shape.reshape(lax_shape.slice(key, (1,), (2,)), ())
    return k1, k2


def _stack_words(w1, w2):
    shape = core.get_aval(w1).shape
    ones = shape + (1,)
    return lax_shape.concatenate([lax_shape.reshape(w1, ones), lax_shape.reshape(w2, ones)],
                                 len(shape))


def _check_size(shape):
    if math.prod(shape) >= 2 ** 32:
        raise NotImplementedError(f"random draws of 2**32 or more elements (shape {shape})")


def iota_2x32(shape):
    """The high and low uint32 words of the row-major flat index of each element of
    `shape` (the high words are zero: no array here has 2**32 elements)."""
    _check_size(shape)
    size = math.prod(shape)
    lo = lax_shape.reshape(lax_shape.iota(_U32, size), shape) if shape else np.uint32(0)
    return np.uint32(0), lo


def _seed_int(seed):
    """A Python integer seed as the integer array JAX makes of it: int64 wrapped to int32
    unless x64 is enabled."""
    if not -2 ** 63 <= seed < 2 ** 63:
        raise OverflowError(f"PRNG seed {seed} does not fit in a 64-bit integer")
    value = np.int64(seed)
    return value if dtypes.canonicalize_dtype(np.int64) == np.int64 else value.astype(np.int32)


def seed_key_data(seed):
    """A key from an integer seed: the two 32-bit halves of the 64-bit seed (a 32-bit seed
    has a zero high word)."""
    if isinstance(seed, (bool, float, complex)):
        raise TypeError(f"PRNG key seed must be an integer, got {seed!r}")
    if isinstance(seed, int):
        seed = _seed_int(seed)
    aval = core.get_aval(seed)
    if aval.shape:
        raise TypeError(f"PRNG key seed must be a scalar, got an array of shape {aval.shape}. "
                        "Use didax.vmap for batching.")
    if not dtypes.issubdtype(aval.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer, got dtype {aval.dtype.name}")
    if isinstance(seed, np.generic):
        seed = np.asarray(seed, dtypes.canonicalize_dtype(seed.dtype))
        aval = core.get_aval(seed)
    lo = lax_elem.convert_element_type(seed, _U32)
    if aval.dtype.itemsize == 8:
        hi = lax_elem.shift_right_logical(seed, np.asarray(32, aval.dtype))
        hi = lax_elem.convert_element_type(hi, _U32)
    else:
        hi = np.zeros((), _U32)
    return _stack_words(hi, lo)


def is_eager(*args) -> bool:
    """Whether this call evaluates now, on concrete values: then key operations run their
    NumPy kernels directly (the same numbers as binding the primitives, without dispatch)."""
    return core._ctx.interp is core.eval_interpreter and not any(
        isinstance(a, core.Tracer) for a in args)


def _eager_words(key, hi, lo):
    k = np.asarray(key)
    return _threefry2x32_impl(k[0], k[1], hi, lo)


def _np_iota(shape):
    return np.arange(math.prod(shape), dtype=_U32).reshape(shape)


def split_key_data(key, shape: tuple):
    """`shape` new keys from one: new key i is the hash of counter i."""
    _check_size(shape)
    if is_eager(key):
        w1, w2 = _eager_words(key, _ZERO, _np_iota(shape))
        return core.Array(np.stack([w1, w2], axis=-1))
    k1, k2 = _key_words(key)
    hi, lo = iota_2x32(shape)
    w1, w2 = threefry2x32(k1, k2, hi, lo)
    return _stack_words(w1, w2)


def fold_in_key_data(key, data):
    """A new key from a key and a uint32 scalar: the hash of the counter (0, data)."""
    if is_eager(key, data):
        w1, w2 = _eager_words(key, _ZERO, np.asarray(data, _U32))
        return core.Array(np.stack([w1, w2], axis=-1))
    k1, k2 = _key_words(key)
    w1, w2 = threefry2x32(k1, k2, np.uint32(0), data)
    return _stack_words(w1, w2)


_UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32,
                64: np.dtype(np.uint64)}


def random_bits(key, bit_width: int, shape: tuple):
    """Uniform random bits of an unsigned dtype `bit_width` wide: element i hashes counter i;
    32 bits are the xor of the two output words, 64 bits their concatenation, 8 and 16 bits
    the xor truncated."""
    if bit_width not in _UINT_DTYPES:
        raise TypeError(f"random_bits requires an 8-, 16-, 32- or 64-bit width, got {bit_width}")
    _check_size(shape)
    if is_eager(key):
        w1, w2 = _eager_words(key, _ZERO, _np_iota(shape))
        return core.Array(_combine_words(_NumpyBits, w1, w2, bit_width))
    k1, k2 = _key_words(key)
    hi, lo = iota_2x32(shape)
    w1, w2 = threefry2x32(k1, k2, hi, lo)
    return _combine_words(_LaxBits, w1, w2, bit_width)


class _NumpyBits:
    bitwise_or = np.bitwise_or
    bitwise_xor = np.bitwise_xor
    left_shift = np.left_shift
    astype = staticmethod(lambda x, dtype: x.astype(dtype))


class _LaxBits:
    bitwise_or = staticmethod(lax_elem.bitwise_or)
    bitwise_xor = staticmethod(lax_elem.bitwise_xor)
    left_shift = staticmethod(lax_elem.shift_left)
    astype = staticmethod(lax_elem.convert_element_type)


def _combine_words(xp, w1, w2, bit_width):
    """Bits of the requested width from the two hash words, with NumPy's operations
    (eagerly) or lax's (`xp`)."""
    if bit_width == 64:
        u64 = _UINT_DTYPES[64]
        w1 = xp.astype(w1, u64)
        w2 = xp.astype(w2, u64)
        return xp.bitwise_or(xp.left_shift(w1, np.asarray(32, u64)), w2)
    bits = xp.bitwise_xor(w1, w2)
    if bit_width == 32:
        return bits
    return xp.astype(bits, _UINT_DTYPES[bit_width])


# --------------------------------------------------------------------------------------
# Typed keys


class KeyDtype(dtypes.ExtendedDType):
    """The dtype of typed threefry keys, printed as JAX prints it (`key<fry>`)."""

    name = "key<fry>"
    impl = "threefry2x32"
    type = dtypes.prng_key  # what `issubdtype(key.dtype, dtypes.prng_key)` checks
    _rules = None  # (keys' arithmetic is random.py's, not rules a library reads)

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyDtype) or other == self.name

    def __hash__(self):
        return hash(self.name)


key_dtype = KeyDtype()


class KeyArrayType:
    """The type of a typed key array (what `typeof` gives for one, as JAX's
    `ShapedArray((), key<fry>)`): its shape and the key dtype. Transformations never see it
    (they see the uint32 key data); code asking for a value's type does."""

    __slots__ = ("shape",)
    dtype = key_dtype
    weak_type = False
    sharding = None

    def __init__(self, shape):
        self.shape = tuple(shape)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def str_short(self) -> str:
        return f"{key_dtype.name}[{','.join(map(str, self.shape))}]"

    def __eq__(self, other):
        return isinstance(other, KeyArrayType) and self.shape == other.shape

    def __hash__(self):
        return hash(("key", self.shape))

    def __repr__(self):
        return f"ShapedArray({self.str_short()})"


@tree_util.register_pytree_node_class
class PRNGKeyArray:
    """An array of typed keys (what `didax.random.key` returns): shape `data.shape[:-1]`,
    dtype `key<fry>`, over uint32 key data whose last dimension holds the two key words.

    Unlike JAX, where typed keys are arrays of an extended dtype known to every primitive,
    this is a pytree with the key data as its one leaf: transformations see the uint32 data,
    so keys pass through `jit`, `vmap` (mapping over leading key dimensions) and `grad`
    (as integer, non-differentiated values), and `didax.numpy` functions do not accept them.
    Indexing, `reshape`, `len`, iteration and `==` act on the key dimensions only.
    """

    __slots__ = ("_base_array",)
    __hash__ = None

    def __init__(self, data):
        self._base_array = data

    def tree_flatten(self):
        return (self._base_array,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0])

    dtype = key_dtype
    itemsize = 8
    shape = property(lambda self: tuple(self._base_array.shape[:-1]))
    aval = property(lambda self: KeyArrayType(self.shape))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d key array)")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        return PRNGKeyArray(self._base_array[idx + (slice(None),)])

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        shape = tuple(shape)
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape = tuple(self.size // known if d == -1 else d for d in shape)
        return PRNGKeyArray(lax_shape.reshape(self._base_array, shape + (2,)))

    def ravel(self):
        return self.reshape(self.size)

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        a, b = self._base_array, other._base_array
        shape = np.broadcast_shapes(core.get_aval(a).shape, core.get_aval(b).shape)
        same = lax_elem.eq(_broadcast_to(a, shape), _broadcast_to(b, shape))
        return reduce_and(same, (len(shape) - 1,))

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else lax_elem.bitwise_not(eq)

    def __repr__(self):
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{self._base_array}"

    __str__ = __repr__

core.Array.__class__.register(PRNGKeyArray)  # (a key array is an Array to isinstance)


def _broadcast_to(x, shape):
    aval = core.get_aval(x)
    if aval.shape == shape:
        return x
    dims = tuple(range(len(shape) - aval.ndim, len(shape)))
    return lax_shape.broadcast_in_dim(x, shape, dims)
