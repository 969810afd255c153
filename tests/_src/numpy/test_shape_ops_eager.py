"""Eager shape operations on concrete Arrays (their plans, didax/_src/numpy/_plans.py): the first
call (the general path, which remembers a plan) and later calls (the plan: one NumPy call) give
what staging and evaluating the function gives, what `jit` gives and what JAX gives: values
(bit for bit), shape, dtype and weak type, for bool, integer, float16, bfloat16, float32 and
complex arrays, weakly typed arrays and 0-d arrays, negative axes. Errors are JAX's exception
types every time (a plan never stands in for an error); operands are never written to and
results never share a buffer a user can write; the jaxprs, gradients and batching through
these functions are what they were."""
import jax
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest
from jax._src.lax import lax as jax_lax

import didax
import didax.numpy as jnp
from didax._src import caches, core
from didax._src.config import enable_x64
from didax._src.ir import eval_jaxpr
from didax._src.numpy import _plans

_RNG = np.random.default_rng(0)

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.float16, ml_dtypes.bfloat16, np.float32,
          np.complex64]


def _values(shape, dtype):
    x = _RNG.standard_normal(shape) * 3
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return x > 0
    if dtype.kind == "c":
        return (x + 1j * _RNG.standard_normal(shape)).astype(dtype)
    if dtype.kind in "iu":
        return np.round(np.abs(x) if dtype.kind == "u" else x).astype(dtype)
    return x.astype(dtype)


def _ours(x, weak):
    return core.Array(np.array(x), weak)


def _theirs(x, weak):
    return jax_lax._convert_element_type(jjnp.asarray(x), weak_type=True) if weak else (
        jjnp.asarray(x))


def _key(r):
    return (tuple(r.shape), np.dtype(r.dtype), bool(r.weak_type))


def _assert_same(got, want, what):
    assert _key(got) == _key(want), (what, _key(got), _key(want))
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (what, got, want)


def _flat(r):
    return list(r) if isinstance(r, (list, tuple)) else [r]


# name: (function of (jnp module, *arrays), operand shapes)
CASES = {
    "reshape": (lambda m, x: m.reshape(x, (4, -1)), [(2, 3, 2)]),
    "reshape_same": (lambda m, x: m.reshape(x, (2, 3)), [(2, 3)]),
    "reshape_list": (lambda m, x: m.reshape(x, [-1]), [(2, 3)]),
    "reshape_int": (lambda m, x: m.reshape(x, 6), [(2, 3)]),
    "reshape_0d": (lambda m, x: m.reshape(x, (1, 1)), [()]),
    "reshape_empty": (lambda m, x: m.reshape(x, (0, 2)), [(2, 0, 1)]),
    "method_reshape": (lambda m, x: x.reshape(3, 4), [(4, 3)]),
    "method_reshape_T": (lambda m, x: x.reshape(3, 4).T, [(4, 3)]),
    "ravel": (lambda m, x: m.ravel(x), [(2, 3)]),
    "ravel_1d": (lambda m, x: m.ravel(x), [(5,)]),
    "ravel_transposed": (lambda m, x: m.ravel(x.T), [(2, 3)]),
    "flatten": (lambda m, x: x.flatten(), [(2, 3)]),
    "T": (lambda m, x: x.T, [(2, 3, 4)]),
    "T_1d": (lambda m, x: x.T, [(3,)]),
    "mT": (lambda m, x: x.mT, [(2, 3, 4)]),
    "transpose": (lambda m, x: m.transpose(x), [(2, 3)]),
    "transpose_axes": (lambda m, x: m.transpose(x, (1, -1, 0)), [(2, 3, 4)]),
    "transpose_list": (lambda m, x: m.transpose(x, [2, 0, 1]), [(2, 3, 4)]),
    "transpose_identity": (lambda m, x: m.transpose(x, (0, 1)), [(2, 3)]),
    "method_transpose": (lambda m, x: x.transpose(1, 0), [(2, 3)]),
    "permute_dims": (lambda m, x: m.permute_dims(x, (1, 0)), [(2, 3)]),
    "matrix_transpose": (lambda m, x: m.matrix_transpose(x), [(2, 3, 4)]),
    "swapaxes": (lambda m, x: m.swapaxes(x, 0, -1), [(2, 3, 4)]),
    "swapaxes_same": (lambda m, x: m.swapaxes(x, 1, -2), [(2, 3, 4)]),
    "moveaxis": (lambda m, x: m.moveaxis(x, 0, -1), [(2, 3, 4)]),
    "moveaxis_many": (lambda m, x: m.moveaxis(x, (0, 1), (-1, 0)), [(2, 3, 4)]),
    "squeeze": (lambda m, x: m.squeeze(x), [(1, 3, 1, 2)]),
    "squeeze_axis": (lambda m, x: m.squeeze(x, -2), [(1, 3, 1, 2)]),
    "squeeze_axes": (lambda m, x: m.squeeze(x, (0, 2)), [(1, 3, 1, 2)]),
    "squeeze_none": (lambda m, x: m.squeeze(x), [(2, 3)]),
    "squeeze_0d": (lambda m, x: m.squeeze(x), [()]),
    "expand_dims": (lambda m, x: m.expand_dims(x, 0), [(2, 3)]),
    "expand_dims_neg": (lambda m, x: m.expand_dims(x, -1), [(2, 3)]),
    "expand_dims_many": (lambda m, x: m.expand_dims(x, (0, -1)), [(2, 3)]),
    "expand_dims_0d": (lambda m, x: m.expand_dims(x, 0), [()]),
    "expand_dims_none": (lambda m, x: m.expand_dims(x, ()), [(2,)]),
    "broadcast_to": (lambda m, x: m.broadcast_to(x, (4, 3)), [(3,)]),
    "broadcast_to_stretch": (lambda m, x: m.broadcast_to(x, (2, 4, 3)), [(4, 1)]),
    "broadcast_to_same": (lambda m, x: m.broadcast_to(x, (2, 3)), [(2, 3)]),
    "broadcast_to_0d": (lambda m, x: m.broadcast_to(x, (3,)), [()]),
    "broadcast_to_large": (lambda m, x: m.broadcast_to(x, (100, 64)), [(64,)]),
    "atleast_1d": (lambda m, x: m.atleast_1d(x), [()]),
    "atleast_1d_kept": (lambda m, x: m.atleast_1d(x), [(2, 3)]),
    "atleast_2d": (lambda m, x: m.atleast_2d(x), [(3,)]),
    "atleast_3d_1d": (lambda m, x: m.atleast_3d(x), [(3,)]),
    "atleast_3d_2d": (lambda m, x: m.atleast_3d(x), [(2, 3)]),
    "atleast_3d_0d": (lambda m, x: m.atleast_3d(x), [()]),
    "atleast_many": (lambda m, x, y: m.atleast_2d(x, y), [(), (3,)]),
    "concatenate": (lambda m, x, y: m.concatenate([x, y]), [(2, 3), (4, 3)]),
    "concatenate_neg": (lambda m, x, y: m.concatenate([x, y, x], -1), [(2, 3), (2, 1)]),
    "concatenate_tuple": (lambda m, x, y: m.concatenate((x, y), axis=1), [(2, 3), (2, 3)]),
    "concatenate_one": (lambda m, x: m.concatenate([x]), [(2, 3)]),
    "concatenate_empty": (lambda m, x, y: m.concatenate([x, y]), [(0, 3), (2, 3)]),
    "concatenate_transposed": (lambda m, x, y: m.concatenate([x.T, y]), [(3, 2), (2, 3)]),
    "concat": (lambda m, x, y: m.concat([x, y], axis=-1), [(2, 3), (2, 2)]),
    "stack": (lambda m, x, y: m.stack([x, y]), [(2, 3), (2, 3)]),
    "stack_mid": (lambda m, x, y: m.stack([x, y, x], 1), [(2, 3), (2, 3)]),
    "stack_last": (lambda m, x, y: m.stack((x, y), -1), [(2, 3), (2, 3)]),
    "stack_0d": (lambda m, x, y: m.stack([x, y]), [(), ()]),
    "stack_one": (lambda m, x: m.stack([x], 1), [(2, 3)]),
    "stack_transposed": (lambda m, x, y: m.stack([x.T, y], 1), [(3, 2), (2, 3)]),
    "hstack": (lambda m, x, y: m.hstack([x, y]), [(2, 3), (2, 1)]),
    "vstack": (lambda m, x, y: m.vstack([x, y]), [(3,), (3,)]),
    "hstack_1d": (lambda m, x, y: m.hstack((x, y)), [(3,), (2,)]),
    "hstack_0d": (lambda m, x, y: m.hstack([x, y]), [(), ()]),
    "vstack_2d": (lambda m, x, y: m.vstack([x, y]), [(1, 3), (2, 3)]),
    "vstack_one": (lambda m, x: m.vstack([x]), [(3,)]),
    "vstack_one_kept": (lambda m, x: m.vstack([x]), [(2, 3)]),
    "dstack": (lambda m, x, y: m.dstack([x, y]), [(2, 3), (2, 3)]),
    "dstack_ranks": (lambda m, x, y, z: m.dstack([x, y, z]), [(), (1,), (1, 1)]),
    "column_stack": (lambda m, x, y: m.column_stack([x, y]), [(3,), (3, 2)]),
}


def _run_case(name, dtype, weak):
    fn, shapes = CASES[name]
    values = [_values(s, dtype) for s in shapes]
    ours = [_ours(v, weak) for v in values]
    before = [np.asarray(a).tobytes() for a in ours]
    f = lambda *a: fn(jnp, *a)  # noqa: E731
    first = _flat(f(*ours))  # the general path, which remembers a plan
    again = _flat(f(*ours))  # the plan
    third = _flat(f(*[_ours(v, weak) for v in values]))  # the plan, on other Arrays
    for a, b in zip(ours, before):
        assert np.asarray(a).tobytes() == b, "an operand was written to"
    want = _flat(fn(jjnp, *[_theirs(v, weak) for v in values]))
    closed = didax.make_jaxpr(f)(*ours)
    staged = eval_jaxpr(closed.jaxpr, closed.consts, *ours)
    jitted = _flat(didax.jit(f)(*ours))
    assert len(first) == len(want) == len(again) == len(staged) == len(jitted)
    for i, w in enumerate(want):
        for got, what in ((first[i], "eager, first call"), (again[i], "eager, plan"),
                          (third[i], "eager, plan on new arrays"), (staged[i], "staged"),
                          (jitted[i], "jit")):
            _assert_same(got, w, (name, what))
        for r in (first[i], again[i]):
            assert type(r) is core.Array
            assert not np.asarray(r).flags.writeable  # (what users can reach is read-only)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(CASES))
def test_eager_is_staged_jitted_and_jax(name, dtype):
    _run_case(name, dtype, weak=False)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16, np.complex64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(CASES))
def test_weakly_typed_operands(name, dtype):
    _run_case(name, dtype, weak=True)


def test_mixed_weak_and_dtypes_promote_as_jax():
    """Operands whose promotion converts some of them take the general path: JAX's types."""
    f32 = _values((2, 3), np.float32)
    i32 = _values((2, 3), np.int32)
    f16 = _values((2, 3), np.float16)
    combos = [(f32, False, f32, True), (i32, False, f32, False), (f16, False, f32, True),
              (i32, True, f16, False), (f32, True, f32, True), (f16, False, f16, True)]
    for x, wx, y, wy in combos:
        for fn in (lambda m, a, b: m.concatenate([a, b]), lambda m, a, b: m.stack([a, b], 1),
                   lambda m, a, b: m.vstack([a, b])):
            want = fn(jjnp, _theirs(x, wx), _theirs(y, wy))
            for _ in range(2):
                _assert_same(fn(jnp, _ours(x, wx), _ours(y, wy)), want, (x.dtype, wx, wy))


def test_python_scalars_and_numpy_operands():
    x = _values((2, 3), np.float32)
    for fn in (lambda m: m.expand_dims(2.0, 0), lambda m: m.reshape(3, (1, 1)),
               lambda m: m.stack([1, 2.0]), lambda m: m.concatenate([x, x]),
               lambda m: m.atleast_2d(1.5), lambda m: m.broadcast_to(2.0, (2, 2)),
               lambda m: m.transpose(x), lambda m: m.squeeze(x[None])):
        want = fn(jjnp)
        for _ in range(2):
            got = fn(jnp)
            _assert_same(got, want, "scalars")
            assert not np.shares_memory(np.asarray(got), x)  # never the caller's buffer


def test_results_never_write_through_to_operands():
    x = jnp.asarray(np.arange(6, dtype=np.float32))
    kept = np.asarray(x).copy()
    for _ in range(2):
        for r in (jnp.reshape(x, (2, 3)), jnp.expand_dims(x, 0), x.T, jnp.ravel(x),
                  jnp.atleast_2d(x), jnp.broadcast_to(x, (2, 6)), jnp.stack([x])):
            with pytest.raises(ValueError):
                np.asarray(r)[...] = 0
    assert np.asarray(x).tobytes() == kept.tobytes()


# --------------------------------------------------------------------------------------
# Errors: JAX's exception types, on the first call and after a plan exists for the types

_V = np.ones((2, 3), np.float32)

ERRORS = [
    ("expand_dims_axis", lambda m, v: m.expand_dims(v, 3)),
    ("expand_dims_neg_axis", lambda m, v: m.expand_dims(v, -4)),
    ("expand_dims_repeated", lambda m, v: m.expand_dims(v, (0, 0))),
    ("expand_dims_float", lambda m, v: m.expand_dims(v, 1.0)),
    ("squeeze_size", lambda m, v: m.squeeze(v, 0)),
    ("squeeze_axis", lambda m, v: m.squeeze(v, 2)),
    ("transpose_perm", lambda m, v: m.transpose(v, (0, 0))),
    ("transpose_short", lambda m, v: m.transpose(v, (0,))),
    ("transpose_axis", lambda m, v: m.transpose(v, (0, 2))),
    ("transpose_float", lambda m, v: m.transpose(v, (1.0, 0))),
    ("swapaxes_axis", lambda m, v: m.swapaxes(v, 0, 2)),
    ("swapaxes_float", lambda m, v: m.swapaxes(v, 0.0, 1)),
    ("moveaxis_repeated", lambda m, v: m.moveaxis(v, (0, 0), (1, 0))),
    ("moveaxis_count", lambda m, v: m.moveaxis(v, (0, 1), 0)),
    ("moveaxis_float", lambda m, v: m.moveaxis(v, 0.0, 1)),
    ("reshape_size", lambda m, v: m.reshape(v, (4, 2))),
    ("reshape_unknown", lambda m, v: m.reshape(v, (4, -1))),
    ("reshape_two_unknown", lambda m, v: m.reshape(v, (-1, -1))),
    ("reshape_float", lambda m, v: m.reshape(v, (3.0, 2))),
    ("reshape_float_method", lambda m, v: v.reshape(3.0, 2)),
    ("broadcast_to", lambda m, v: m.broadcast_to(v, (3, 3))),
    ("broadcast_to_rank", lambda m, v: m.broadcast_to(v, (3,))),
    ("broadcast_to_float", lambda m, v: m.broadcast_to(v, (2.0, 3))),
    ("concatenate_shapes", lambda m, v: m.concatenate([v, v.T])),
    ("concatenate_ranks", lambda m, v: m.concatenate([v, v[0]])),
    ("concatenate_axis", lambda m, v: m.concatenate([v, v], 2)),
    ("concatenate_0d", lambda m, v: m.concatenate([v[0, 0], v[0, 0]])),
    ("concatenate_float", lambda m, v: m.concatenate([v, v], 1.0)),
    ("concatenate_empty", lambda m, v: m.concatenate([])),
    ("stack_shapes", lambda m, v: m.stack([v, v.T])),
    ("stack_axis", lambda m, v: m.stack([v, v], 3)),
    ("stack_float", lambda m, v: m.stack([v, v], 1.0)),
    ("stack_empty", lambda m, v: m.stack([])),
    ("matrix_transpose_1d", lambda m, v: m.matrix_transpose(v[0])),
]

# What succeeds on the same operand types first, so that a plan exists for them
_GOOD = [lambda m, v: m.expand_dims(v, 0), lambda m, v: m.squeeze(v),
         lambda m, v: m.transpose(v, (1, 0)), lambda m, v: m.swapaxes(v, 0, 1),
         lambda m, v: m.moveaxis(v, 0, 1), lambda m, v: m.reshape(v, (3, 2)),
         lambda m, v: v.reshape(3, 2), lambda m, v: m.broadcast_to(v, (2, 2, 3)),
         lambda m, v: m.concatenate([v, v], 1), lambda m, v: m.concatenate([v, v]),
         lambda m, v: m.stack([v, v], 1), lambda m, v: m.stack([v, v]),
         lambda m, v: m.concatenate([v[0], v[0]]), lambda m, v: m.matrix_transpose(v)]


def _error_of(fn, m, v):
    with pytest.raises(Exception) as info:
        fn(m, v)
    return info.value


@pytest.mark.parametrize("name, fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_jax_types_before_and_after_plans(name, fn):
    jax_error = _error_of(fn, jjnp, jjnp.asarray(_V))
    x = jnp.asarray(_V)
    first = _error_of(fn, jnp, x)
    assert isinstance(first, type(jax_error)), (name, type(first), type(jax_error), first)
    assert str(first)
    for good in _GOOD:
        good(jnp, x)
        good(jnp, x)
    later = _error_of(fn, jnp, x)
    assert type(later) is type(first) and str(later) == str(first), (name, later, first)


def test_plans_never_take_floats_for_ints():
    """2.0 == 2 and hashes alike: a plan remembered for ints never answers floats."""
    x = jnp.ones((2, 3))
    jnp.reshape(x, (3, 2))
    jnp.expand_dims(x, 1)
    jnp.transpose(x, (1, 0))
    jnp.broadcast_to(x, (2, 2, 3))
    for fn in (lambda: jnp.reshape(x, (3.0, 2)), lambda: jnp.expand_dims(x, 1.0),
               lambda: jnp.transpose(x, (1.0, 0)), lambda: jnp.broadcast_to(x, (2.0, 2, 3)),
               lambda: jnp.reshape(x, (np.float64(3), 2))):
        with pytest.raises(TypeError):
            fn()


def test_plans_follow_x64_mode():
    """Promotion depends on x64 mode: the plans are dropped when a flag changes."""
    with enable_x64(True):
        a = jnp.asarray(np.arange(3, dtype=np.int64))
        assert jnp.concatenate([a, a]).dtype == np.int64
        assert jnp.stack([a, a]).dtype == np.int64
    for _ in range(2):  # an int64 array outside x64 mode is converted, as promotion does
        assert jnp.concatenate([a, a]).dtype == np.int32
        assert jnp.stack([a, a]).dtype == np.int32


def test_plan_table_is_bounded():
    table = caches.tables()["numpy.shape_plans"]
    assert table.table is _plans.plans and table.limit is not None


# --------------------------------------------------------------------------------------
# Under transformations: the general path, unchanged


JAXPR_AS_JAX = {  # the jaxpr text JAX gives, for functions whose text didax matches
    "concatenate": lambda m, x: m.concatenate([x, x], -1),
    "reshape_T": lambda m, x: x.reshape(4, 3).T,
    "reshape": lambda m, x: m.reshape(x, (-1,)),
    "transpose": lambda m, x: m.transpose(x, (1, 0)),
    "swapaxes": lambda m, x: m.swapaxes(x, 0, 1),
    "moveaxis": lambda m, x: m.moveaxis(x, 0, -1),
    "mT": lambda m, x: x.mT,
    "squeeze": lambda m, x: m.squeeze(x[None]),
    "broadcast_to": lambda m, x: m.broadcast_to(x[0], (3, 4)),
    "ravel": lambda m, x: m.ravel(x),
}


@pytest.mark.parametrize("name", list(JAXPR_AS_JAX))
def test_jaxpr_text_is_jax(name):
    fn = JAXPR_AS_JAX[name]
    x = np.ones((3, 4), np.float32)
    jnp.asarray(x)  # (a plan for eager calls exists first: staging never reads it)
    fn(jnp, jnp.asarray(x))
    ours = str(didax.make_jaxpr(lambda a: fn(jnp, a))(x))
    theirs = str(jax.make_jaxpr(lambda a: fn(jjnp, a))(x))
    assert ours == theirs


def test_stack_and_expand_dims_jaxprs():
    """JAX 0.10.2 has primitives of its own for these; didax binds what it always did."""
    x = np.ones((3, 4), np.float32)
    jnp.stack([jnp.asarray(x)] * 2, -1)
    text = str(didax.make_jaxpr(lambda a: jnp.stack([a, a], -1))(x))
    assert "expand_dims[dimensions=(2,)]" in text and "concatenate[dimension=2]" in text
    text = str(didax.make_jaxpr(lambda a: jnp.expand_dims(a, (0, -1)))(x))
    assert "expand_dims[dimensions=(0, 3)]" in text


GRAD_CASES = {
    "reshape_T": lambda m, x: x.reshape(4, 3).T,
    "concatenate": lambda m, x: m.concatenate([x, 2 * x], -1),
    "stack": lambda m, x: m.stack([x, 3 * x], 1),
    "expand_squeeze": lambda m, x: m.squeeze(m.expand_dims(x, (0, -1))),
    "moveaxis": lambda m, x: m.moveaxis(x[None], 0, -1),
    "broadcast_to": lambda m, x: m.broadcast_to(x, (2, 3, 4)),
    "atleast_3d": lambda m, x: m.atleast_3d(x),
    "vstack": lambda m, x: m.vstack([x, x[:1]]),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_grad_and_vmap_through_them(name):
    fn = GRAD_CASES[name]
    x = _values((3, 4), np.float32)
    w = _values(np.shape(fn(np, x)), np.float32)

    def loss(m, lib):
        return lambda a: (fn(m, a) * w).sum()

    got = didax.grad(loss(jnp, didax))(jnp.asarray(x))
    want = jax.grad(loss(jjnp, jax))(jjnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    xs = np.stack([x, 2 * x])
    got = didax.vmap(lambda a: fn(jnp, a))(jnp.asarray(xs))
    want = jax.vmap(lambda a: fn(jjnp, a))(jjnp.asarray(xs))
    _assert_same(got, want, name)
    fn(jnp, jnp.asarray(x))  # after a plan exists for the eager call: the same again
    got = didax.vmap(lambda a: fn(jnp, a))(jnp.asarray(xs))
    _assert_same(got, want, name)
