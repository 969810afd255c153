"""Eager evaluation is one path, `Primitive.bind` to `EvalInterpreter.process_primitive`: a
jnp function's eager result has the bits, dtype and weak type of the same function staged and
evaluated (`eval_jaxpr(make_jaxpr(f))`) and jitted, on the NumPy tier alone and on both tiers.
The cases are those jnp's inline NumPy paths once took (one and two arrays, Python scalars on
either side, weak types, broadcasting, large operands that look like temporaries), and no
operand is ever written to."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax._src import core
from didax._src.ir import eval_jaxpr

pytestmark = pytest.mark.usefixtures("jit_tier")

_RNG = np.random.default_rng(0)


def _array(shape, dtype, weak=False):
    values = _RNG.standard_normal(shape) * 3
    if np.dtype(dtype).kind in "iu":
        values = np.round(values)
    if np.dtype(dtype).kind == "b":
        values = values > 0
    if np.dtype(dtype).kind == "c":
        values = values + 1j * _RNG.standard_normal(shape)
    return core.Array(np.asarray(values).astype(dtype), weak)


def _assert_same(got, want, what):
    assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype, want.weak_type), (
        what, got.aval, want.aval)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (what, got, want)


def _assert_eager_is_staged(f, *args):
    """f's eager result is the staged and the jitted one, bit for bit; no operand changes."""
    before = [np.array(a, copy=True) for a in args]
    eager = f(*args)
    closed = jax.make_jaxpr(f)(*args)
    (staged,) = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    _assert_same(eager, staged, "eval_jaxpr(make_jaxpr(f))")
    for _ in range(2):  # (the second call through the signature's matcher)
        _assert_same(eager, jax.jit(f)(*args), "jit(f)")
    for a, b in zip(args, before):
        assert np.asarray(a).tobytes() == b.tobytes(), "an operand was written to"


UNARY = [jnp.sin, jnp.tanh, jnp.exp, jnp.log1p, jnp.sqrt, jnp.log2, jnp.arctan]


@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype, weak", [(np.float32, False), (np.float32, True),
                                         (np.float16, False), (np.int32, False),
                                         (np.bool_, False), (np.complex64, False),
                                         ("bfloat16", False)])
def test_unary(fn, dtype, weak):
    if fn in (jnp.log1p, jnp.sqrt, jnp.log2) and np.dtype(dtype).kind != "b":
        x = core.Array(np.abs(np.asarray(_array((3, 4), dtype))), weak)
    else:
        x = _array((3, 4), dtype, weak)
    _assert_eager_is_staged(fn, x)


BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.true_divide, jnp.maximum, jnp.minimum,
          jnp.less, jnp.equal, jnp.arctan2]


OPERAND_PAIRS = [
    (((4,), np.float32, False), ((4,), np.float32, False)),  # one type
    (((4,), np.float32, True), ((4,), np.float32, True)),  # one weak type
    (((4,), np.float32, False), ((4,), np.float32, True)),  # the weak one takes the other's
    (((4,), np.float32, True), ((), np.float64, False)),
    (((3, 1), np.float32, False), ((4,), np.float32, False)),  # broadcasting
    (((2, 3), np.float16, False), ((3,), np.float16, True)),  # ranks promoted
    (((4,), np.int32, False), ((4,), np.int32, False)),
    (((4,), np.int32, False), ((4,), np.float32, False)),  # promoted to float
    (((4,), np.bool_, False), ((4,), np.float32, False)),  # bool times: a select
    (((4,), np.complex64, False), ((4,), np.complex64, False)),
]
REAL_ONLY = (jnp.less, jnp.maximum, jnp.minimum, jnp.arctan2)  # (not defined on complex)


def _operand_id(operand):
    return f"{np.dtype(operand[1]).name}{list(operand[0])}{'w' * operand[2]}"


@pytest.mark.parametrize("fn, x, y", [
    pytest.param(fn, x, y, id=f"{fn.__name__}-{_operand_id(x)}-{_operand_id(y)}")
    for fn in BINARY for x, y in OPERAND_PAIRS
    if not (fn in REAL_ONLY and "c" in np.dtype(x[1]).kind + np.dtype(y[1]).kind)])
def test_binary_arrays(fn, x, y):
    _assert_eager_is_staged(fn, _array(*x), _array(*y))


SCALARS = [0.5, -0.0, 0.0, 2, -3, 1e40, float("nan"), True]


@pytest.mark.parametrize("fn", [jnp.add, jnp.subtract, jnp.multiply, jnp.true_divide,
                                jnp.maximum, jnp.greater], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype, weak", [(np.float32, False), (np.float32, True),
                                         (np.float16, False), (np.int32, False),
                                         ("bfloat16", False)])
@pytest.mark.parametrize("c", SCALARS, ids=repr)
def test_binary_with_python_scalars(fn, dtype, weak, c, jit_tier):
    """A Python scalar on either side: closed over, as a program writes it (staged, it is a
    literal of the array's type, or converted first)."""
    x = _array((5,), dtype, weak)
    if np.dtype(dtype).kind == "i" and type(c) is float and abs(c) > 2 ** 31:
        return
    _assert_eager_is_staged(lambda v: fn(v, c), x)
    _assert_eager_is_staged(lambda v: fn(c, v), x)


def test_operators_and_chains_on_operands_that_look_like_temporaries():
    """Results reused at once (`x * y + x`), large enough that buffers were once reused by
    reference count: the same bits, and nothing any name can reach is written to."""
    x, y = _array((256, 256), np.float32), _array((256, 256), np.float32)
    for f in (lambda a, b: a * b + a, lambda a, b: (a * b) * (a + b) - b / 3.0,
              lambda a, b: jnp.tanh(a * b) + 1.0, lambda a, b: -(a - b) * 2.0 + a):
        _assert_eager_is_staged(f, x, y)
    t = x * y
    seen = np.asarray(t).copy()
    u = t + x  # `t` is named: its buffer is the user's
    t + 1.0
    jnp.sin(t)
    assert np.asarray(t).tobytes() == seen.tobytes()
    np.testing.assert_array_equal(np.asarray(u), seen + np.asarray(x))
    view = np.asarray(x * y)  # a view of a temporary's buffer, taken before it is used
    kept = view.copy()
    x * y + view
    assert view.tobytes() == kept.tobytes()


def test_eager_errors_are_the_staged_errors():
    """The same error, message and the user's line, eagerly and while staging."""
    a, b = jnp.ones(3), jnp.ones(4)
    for f in (lambda: a + b, lambda: jnp.sin(a)[None] * jnp.ones((2, 3, 4)),
              lambda: jnp.ones(3, np.int32) + 2 ** 40):
        with pytest.raises(Exception) as eager:
            f()
        with pytest.raises(type(eager.value)) as staged:
            jax.make_jaxpr(lambda _, f=f: f())(0.0)
        assert str(eager.value) == str(staged.value)
