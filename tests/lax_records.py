"""One record per primitive: how to apply it, on what, and what it must equal.

A record names a primitive of `didax._src.core.all_primitives` and gives a function that binds
it through the public API (`didax.lax` mostly), the operands it takes (shapes, dtypes and the
domain their values are drawn from), the dtypes it runs at, a NumPy/SciPy reference (or None,
with the reason beside it), tolerances per dtype, and whether it is differentiable (and in
which operands and modes). tests/_src/lax/test_records.py drives every record through eager
evaluation, jit (both tiers), check_grads and vmap.

Primitives that no record can drive (they need an axis environment, a device mesh, or exist
only inside another interpreter's work) are in EXEMPT, each with the test file covering it.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import ml_dtypes
import numpy as np
import scipy.linalg as sla
import scipy.special as sp
from numpy.lib.stride_tricks import sliding_window_view

import didax as jax
import didax.numpy as jnp
import didax.random as jrandom
from didax import lax
from didax._src import core
from didax._src.lax import device_put as _device_put
from didax._src.lax import linalg as linalg_internal
from didax._src.lax.select_and_scatter import select_and_scatter
from didax.ad_checkpoint import checkpoint_name

F32, F64 = np.dtype("float32"), np.dtype("float64")
C64, C128 = np.dtype("complex64"), np.dtype("complex128")
I32, U32, BOOL = np.dtype("int32"), np.dtype("uint32"), np.dtype("bool")
FLOATS = (F32, F64)
COMPLEX = (C64, C128)
INTS = (I32, U32)

# Tolerances (rtol = atol) of a comparison, by dtype: eager against the reference, jit against
# eager, vmap against a loop. Float32 transcendentals may differ by an ulp between CPUs (NumPy's
# SIMD paths), so no float comparison here is exact; integers and booleans always are.
TOL = {F32: 2e-6, F64: 1e-12, C64: 2e-6, C128: 1e-12}


@dataclasses.dataclass(frozen=True)
class Arg:
    """An operand: its shape, and how its values are drawn.

    kind: "uniform" in [lo, hi); "int", integers in [lo, hi]; "offgrid", real numbers
    between lo and hi at least 0.1 from the integers (floor, round...); "nonzero", magnitudes
    in [lo, hi) of either sign; "perm", distinct integers in [0, hi) (indices that never
    collide); "spd", a symmetric positive definite matrix; "tril", a well-conditioned lower
    triangular matrix; "value", `value` itself. dtype None means the record's dtype."""
    shape: tuple = (2, 3)
    lo: float = -2.0
    hi: float = 2.0
    kind: str = "uniform"
    dtype: Any = None
    value: Any = None

    def make(self, rng, dtype):
        dtype = np.dtype(self.dtype if self.dtype is not None else dtype)
        shape, lo, hi = self.shape, self.lo, self.hi
        if self.kind == "value":
            return np.array(self.value, dtype)
        if self.kind == "perm":
            return rng.permutation(int(hi))[:int(np.prod(shape, dtype=int))].reshape(
                shape).astype(dtype)
        if self.kind == "int" or dtype.kind in "biu":
            if dtype.kind == "b":
                return rng.integers(0, 2, shape).astype(bool)
            if dtype.kind not in "iu":  # integral values of a float dtype
                return rng.integers(int(lo), int(hi), shape, endpoint=True).astype(dtype)
            info = np.iinfo(dtype)
            lo, hi = max(int(lo), int(info.min)), min(int(hi), int(info.max))
            return rng.integers(lo, hi, shape, endpoint=True, dtype=np.int64).astype(dtype)
        if self.kind == "offgrid":
            x = rng.integers(int(lo), int(hi), shape) + rng.uniform(0.1, 0.4, shape)
        elif self.kind == "nonzero":
            x = rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)
        elif self.kind == "spd":
            m = rng.uniform(-1, 1, shape)
            x = m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])
        elif self.kind == "tril":
            x = np.tril(rng.uniform(-1, 1, shape)) + shape[-1] * np.eye(shape[-1])
        else:
            x = rng.uniform(lo, hi, shape)
        if dtype.kind == "c":
            x = x + 1j * rng.uniform(lo, hi, shape)
        return x.astype(dtype)


def _shape(shape):
    return shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape


def x(*shape, lo=-2.0, hi=2.0, kind="uniform", dtype=None):
    """An operand of the record's dtype, shape (2, 3) unless given (as dims, or a tuple)."""
    return Arg(_shape(shape) if shape else (2, 3), lo, hi, kind, dtype)


def ints(*shape, lo=0, hi=3, dtype=I32):
    """Integers in [lo, hi] (of `dtype`; None: the record's), shape () unless given."""
    return Arg(_shape(shape), lo, hi, "int", dtype)


def const(value, dtype=None):
    return Arg(np.shape(value), kind="value", dtype=dtype, value=value)


POS = dict(lo=0.5, hi=2.0)
UNIT = dict(lo=-0.8, hi=0.8)


@dataclasses.dataclass(frozen=True)
class Record:
    """How to drive one primitive (see the module's docstring).

    fn(*operands) applies the primitive; reference(*operands) is its NumPy/SciPy counterpart
    (on NumPy arrays), None where there is none. diff: the operands to differentiate
    (default: every operand of the record's dtype, if it is a float or complex dtype);
    () for a primitive that is not differentiable. grad_fn: a function of the same operands
    differentiated instead of fn (the float part of a result with integer parts)."""
    prim: str
    fn: Callable
    args: tuple
    dtypes: tuple = FLOATS
    reference: Callable | None = None
    tol: dict | None = None
    diff: tuple | None = None
    grad_fn: Callable | None = None
    modes: tuple = ("fwd", "rev")
    order: int = 2
    grad_tol: float | None = None
    vmap: bool = True
    native: bool = True  # jit's native tier compiles fn (if the primitive has a native rule)
    label: str = ""
    xfail: dict = dataclasses.field(default_factory=dict)  # check -> reason (a known bug)

    @property
    def id(self):
        return self.prim + (":" + self.label if self.label else "")

    def tolerance(self, dtype):
        tol = {**TOL, **(self.tol or {})}
        return tol.get(np.dtype(dtype), 0.0)

    def make_args(self, dtype, rng=None):
        rng = rng if rng is not None else np.random.default_rng(
            [ord(c) for c in self.id] + [np.dtype(dtype).num])
        return tuple(a.make(rng, dtype) for a in self.args)

    def grad_dtype(self):
        """The dtype derivatives are checked at (the record's 64-bit float or complex)."""
        for d in (F64, C128):
            if d in self.dtypes:
                return d
        return None

    def diff_argnums(self):
        if self.diff is not None:
            return self.diff
        if self.grad_dtype() is None:
            return ()
        return tuple(i for i, a in enumerate(self.args) if a.dtype is None)


RECORDS: list[Record] = []


def record(prim, fn, args, **kw):
    RECORDS.append(Record(prim, fn, tuple(args), **kw))


# --------------------------------------------------------------------------------------
# Elementwise: unary floats

UNARY = [  # name, reference, operand, extra fields
    ("neg", np.negative, x(), {}),
    ("sign", np.sign, x(kind="nonzero", lo=0.3), {}),
    ("floor", np.floor, x(kind="offgrid", lo=-3, hi=3), {}),
    ("ceil", np.ceil, x(kind="offgrid", lo=-3, hi=3), {}),
    ("exp", np.exp, x(), {}),
    ("exp2", np.exp2, x(), {}),
    ("log", np.log, x(**POS), {}),
    ("log1p", np.log1p, x(lo=-0.5), {}),
    ("expm1", np.expm1, x(), {}),
    ("tanh", np.tanh, x(), {}),
    ("logistic", sp.expit, x(), {}),
    ("sin", np.sin, x(), {}),
    ("cos", np.cos, x(), {}),
    ("tan", np.tan, x(lo=-0.9, hi=0.9), {}),  # higher derivatives blow up towards pi/2
    ("asin", np.arcsin, x(**UNIT), {}),
    ("acos", np.arccos, x(**UNIT), {}),
    ("atan", np.arctan, x(), {}),
    ("sinh", np.sinh, x(), {}),
    ("cosh", np.cosh, x(), {}),
    ("asinh", np.arcsinh, x(), {}),
    ("acosh", np.arccosh, x(lo=1.2, hi=3.0), {}),
    ("atanh", np.arctanh, x(**UNIT), {}),
    ("sqrt", np.sqrt, x(**POS), {}),
    ("rsqrt", lambda v: 1 / np.sqrt(v), x(**POS), {}),
    ("cbrt", np.cbrt, x(kind="nonzero", lo=0.3), {}),
    ("abs", np.abs, x(kind="nonzero", lo=0.3), {}),
    ("erf", sp.erf, x(), {}),
    ("erfc", sp.erfc, x(), {}),
    ("erf_inv", sp.erfinv, x(**UNIT), {}),
    ("lgamma", sp.gammaln, x(lo=0.5, hi=4.0), {}),
    ("digamma", sp.digamma, x(lo=0.5, hi=4.0), {}),
    ("bessel_i0e", sp.i0e, x(lo=-4.0, hi=4.0), {}),
    ("bessel_i1e", sp.i1e, x(lo=-4.0, hi=4.0), {}),
    ("square", np.square, x(), {}),
]
for _name, _ref, _arg, _kw in UNARY:
    record(_name, getattr(lax, _name), [_arg], reference=_ref, **_kw)

record("round", lambda v: lax.round(v, 0), [x(kind="offgrid", lo=-3, hi=3)],  # away from 0
       reference=lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5))
record("is_finite", lax.is_finite, [const([[1.0, np.inf, -np.inf], [np.nan, -0.0, 3e38]])],
       reference=np.isfinite, diff=())  # a boolean result
record("integer_pow", lambda v: lax.integer_pow(v, 3), [x()], reference=lambda v: v ** 3)
record("stop_gradient", lax.stop_gradient, [x()], reference=lambda v: v,
       diff=())  # its derivative is zero by definition; finite differences see the identity
record("real", lax.real, [x()], dtypes=COMPLEX, reference=np.real)
record("imag", lax.imag, [x()], dtypes=COMPLEX, reference=np.imag)
record("conj", lax.conj, [x()], dtypes=COMPLEX, reference=np.conj)


def _float_counterpart(v):
    return lax.convert_element_type(v, F64 if v.dtype == F32 else F32)


record("convert_element_type", _float_counterpart, [x()],
       reference=lambda v: v.astype(F64 if v.dtype == F32 else F32),
       tol={F64: 1e-7},  # (float64 -> float32 rounds)
       grad_fn=lambda v: lax.convert_element_type(v, F64, weak_type=True))
record("bitcast_convert_type",
       lambda v: lax.bitcast_convert_type(v, np.int32 if v.dtype == F32 else np.int64), [x()],
       reference=lambda v: v.view(np.int32 if v.dtype == F32 else np.int64),
       diff=())  # an integer result

# --------------------------------------------------------------------------------------
# Elementwise: binary and ternary

BINARY = [  # name, reference, operands, extra fields
    ("add", np.add, [x(), x()], {}),
    ("sub", np.subtract, [x(), x()], {}),
    ("mul", np.multiply, [x(), x()], {}),
    ("div", np.divide, [x(), x(kind="nonzero", lo=0.5)], {}),
    ("rem", np.fmod, [x(lo=0.5, hi=5.0), x(lo=1.7, hi=1.9)], {}),
    ("pow", np.power, [x(**POS), x()], {}),
    ("max", np.maximum, [x(), x()], {}),
    ("min", np.minimum, [x(), x()], {}),
    ("atan2", np.arctan2, [x(), x(**POS)], {}),  # away from the singularity at the origin
    ("complex", lambda a, b: a + 1j * b, [x(), x()], {}),
    # (as JAX: no second derivative in a, which would need igamma_grad_a's derivative in a)
    ("igamma", sp.gammainc, [x(lo=0.5, hi=3.0), x(lo=0.5, hi=3.0)], dict(order=1)),
    ("igammac", sp.gammaincc, [x(lo=0.5, hi=3.0), x(lo=0.5, hi=3.0)], dict(order=1)),
]
for _name, _ref, _args, _kw in BINARY:
    record(_name, getattr(lax, _name), _args, reference=_ref, **_kw)

record("nextafter", lax.nextafter, [x(), x()], reference=np.nextafter,
       diff=())  # a step function: its derivative is zero (as JAX's), not the identity's
record("polygamma", lax.polygamma, [x(lo=0, hi=3, kind="int"), x(lo=0.5, hi=3.0)],
       reference=sp.polygamma, tol={F32: 2e-5, F64: 1e-10},
       diff=(1,))  # the order m is an integer


def _dgammainc_da(a, v, h=1e-5):
    a = a.astype(F64)
    return (sp.gammainc(a + h, v) - sp.gammainc(a - h, v)) / (2 * h)


record("igamma_grad_a", lax.igamma_grad_a, [x(lo=0.5, hi=3.0), x(lo=0.5, hi=3.0)],
       reference=_dgammainc_da,  # a central difference of SciPy's igamma
       tol={F32: 1e-4, F64: 1e-7},
       diff=(1,))  # as JAX: no derivative in a (it needs igamma's second derivative in a)
record("random_gamma_grad", lax.random_gamma_grad, [x(lo=0.5, hi=3.0), x(lo=0.5, hi=3.0)],
       # d sample / d a = -(d igamma / d a) / density, at the sample x
       reference=lambda a, v: -_dgammainc_da(a, v) / np.exp(
           (a - 1) * np.log(v.astype(F64)) - v - sp.gammaln(a)),
       tol={F32: 1e-4, F64: 1e-7}, diff=(1,))  # as igamma_grad_a
record("regularized_incomplete_beta", lax.betainc,
       [x(lo=0.5, hi=3.0), x(lo=0.5, hi=3.0), x(lo=0.1, hi=0.9)], reference=sp.betainc,
       tol={F32: 2e-5, F64: 1e-10},
       diff=(2,))  # as JAX: derivatives in a and b are not implemented
record("select_n", lax.select_n, [ints(2, 3, hi=1, dtype=BOOL), x(), x()],
       reference=lambda w, a, b: np.where(w, b, a))
record("clamp", lax.clamp, [x((), lo=-1.5, hi=-1.0), x(), x((), lo=1.0, hi=1.5)],
       reference=lambda lo, v, hi: np.clip(v, lo, hi))
record("add_any", core.all_primitives["add_any"].bind, [x(), x()], reference=np.add)

# Comparisons: boolean results (their derivatives are float0: tested in test_elementwise.py)
for _name, _ref in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                    ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    record(_name, getattr(lax, _name), [x(lo=0, hi=2, kind="int"), x(lo=0, hi=2, kind="int")],
           dtypes=(F32, I32), reference=_ref, diff=())

# --------------------------------------------------------------------------------------
# Integers and booleans

for _name, _fn, _ref in [("and", lax.bitwise_and, np.bitwise_and),
                         ("or", lax.bitwise_or, np.bitwise_or),
                         ("xor", lax.bitwise_xor, np.bitwise_xor)]:
    record(_name, _fn, [ints(2, 3, lo=-100, hi=100, dtype=None)] * 2,
           dtypes=(BOOL, I32, U32), reference=_ref)
record("not", lax.bitwise_not, [ints(2, 3, lo=-100, hi=100, dtype=None)],
       dtypes=(BOOL, I32, U32), reference=np.invert)


def _unsigned(v):
    return v.view(np.uint32 if v.dtype.itemsize == 4 else np.uint8)


def _clz(v):
    u = _unsigned(v).astype(np.uint64)
    bits = 8 * v.dtype.itemsize
    return np.array([bits - int(e).bit_length() for e in u.ravel()], v.dtype).reshape(v.shape)


_FULL_RANGE = ints(2, 3, lo=-(2 ** 31), hi=2 ** 32 - 1, dtype=None)
record("population_count", lax.population_count, [_FULL_RANGE], dtypes=INTS,
       reference=lambda v: np.bitwise_count(_unsigned(v)).astype(v.dtype))
record("clz", lax.clz, [_FULL_RANGE], dtypes=INTS, reference=_clz)
record("mulhi", lax.mulhi, [_FULL_RANGE, _FULL_RANGE], dtypes=INTS,
       reference=lambda a, b: ((a.astype(np.int64) * b.astype(np.int64)) >> 32).astype(a.dtype)
       if a.dtype == I32 else ((a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(32)
                               ).astype(a.dtype))
_SHIFTED, _COUNT = ints(2, 3, lo=-1000, hi=1000, dtype=None), ints(2, 3, lo=0, hi=31, dtype=None)
record("shift_left", lax.shift_left, [_SHIFTED, _COUNT], dtypes=INTS, reference=np.left_shift)
record("shift_right_arithmetic", lax.shift_right_arithmetic, [_SHIFTED, _COUNT], dtypes=INTS,
       reference=lambda a, s: np.right_shift(a.astype(np.int32), s.astype(np.int32)).astype(
           a.dtype))
record("shift_right_logical", lax.shift_right_logical, [_SHIFTED, _COUNT], dtypes=INTS,
       reference=lambda a, s: np.right_shift(a.view(np.uint32), s.view(np.uint32)).view(a.dtype))

# Integer arithmetic at its edges, as XLA defines it: x / 0 is -1 (all bits set), x % 0 is
# x, INT_MIN / -1 wraps to INT_MIN and INT_MIN % -1 is 0, |INT_MIN| is INT_MIN.
_INT_EDGES = {
    I32: ([[-2 ** 31, -2 ** 31, -7, 7, 0, 2 ** 31 - 1], [-1, -2 ** 31, 13, -13, 5, -8]],
          [[-1, 0, 2, -2, 0, -1], [3, -1, -5, 4, 1, 0]]),
    U32: ([[2 ** 32 - 1, 0, 7, 13, 2 ** 31, 5], [1, 2 ** 32 - 2, 100, 3, 9, 0]],
          [[0, 3, 2, 2 ** 32 - 1, 7, 0], [1, 5, 0, 4, 2 ** 31, 3]]),
}


def _truncated(op):
    """XLA's integer `op` ("div" or "rem"), computed on Python integers, then wrapped."""
    def reference(a, b):
        out = []
        for p, q in zip(a.ravel().tolist(), b.ravel().tolist()):
            t = abs(p) // abs(q) * (1 if (p < 0) == (q < 0) else -1) if q else None
            out.append((-1 if t is None else t) if op == "div" else (p if t is None else p - t * q))
        return np.array(out, np.int64).astype(a.dtype).reshape(a.shape)
    return reference


for _dt, (_values, _divisors) in _INT_EDGES.items():
    for _op in ("div", "rem"):
        record(_op, getattr(lax, _op), [const(_values, _dt), const(_divisors, _dt)],
               dtypes=(_dt,), reference=_truncated(_op), label=f"{_dt.name} edges")
    record("sign", lax.sign, [const(_values, _dt)], dtypes=(_dt,), reference=np.sign,
           label=f"{_dt.name} edges")
record("abs", lax.abs, [const(_INT_EDGES[I32][0], I32)], dtypes=(I32,), reference=np.abs,
       label="int32 edges")

# --------------------------------------------------------------------------------------
# Shapes

record("broadcast_in_dim", lambda v: lax.broadcast_in_dim(v, (2, 3, 4), (0, 2)), [x(2, 4)],
       reference=lambda v: np.broadcast_to(v[:, None, :], (2, 3, 4)))
record("reshape", lambda v: lax.reshape(v, (3, 2)), [x()], reference=lambda v: v.reshape(3, 2))
record("squeeze", lambda v: lax.squeeze(v, (1,)), [x(2, 1, 3)],
       reference=lambda v: v.squeeze(1))
record("expand_dims", lambda v: lax.expand_dims(v, (1,)), [x()],
       reference=lambda v: v[:, None])
record("transpose", lambda v: lax.transpose(v, (1, 0)), [x()], reference=np.transpose)
record("rev", lambda v: lax.rev(v, (0,)), [x()], reference=lambda v: v[::-1])


def _pad_reference(v, value):
    out = np.full((2 + 1 + 1, 3 + 2), value, v.dtype)  # config ((1, 0, 1), (0, 2, 0))
    out[1::2, :3] = v
    return out


record("pad", lambda v, p: lax.pad(v, p, ((1, 0, 1), (0, 2, 0))), [x(), x(())],
       reference=_pad_reference, native=False)  # interior padding: the NumPy tier's code
record("pad", lambda v, p: lax.pad(v, p, ((1, 0, 0), (0, 2, 0))), [x(), x(())],
       reference=lambda v, p: np.pad(v, ((1, 0), (0, 2)), constant_values=p), label="edges")
record("concatenate", lambda a, b: lax.concatenate([a, b], 0), [x(), x(1, 3)],
       reference=lambda a, b: np.concatenate([a, b], 0))
record("slice", lambda v: lax.slice(v, (0, 1), (2, 4), (1, 2)), [x(2, 4)],
       reference=lambda v: v[0:2, 1:4:2])
record("split", lambda v: lax.split(v, (1, 3), axis=1), [x(2, 4)],
       reference=lambda v: tuple(np.split(v, [1], axis=1)))
record("iota", lambda: lax.iota(I32, 5), [], dtypes=(I32,),
       reference=lambda: np.arange(5, dtype=np.int32))

# --------------------------------------------------------------------------------------
# Indexing: indices drawn distinct, so scatters never collide and derivatives are defined

record("dynamic_slice", lambda v, i, j: lax.dynamic_slice(v, (i, j), (2, 2)),
       [x(3, 4), ints(lo=0, hi=1), ints(lo=0, hi=2)],
       reference=lambda v, i, j: v[i:i + 2, j:j + 2])


def _dus_reference(v, u, i, j):
    out = v.copy()
    out[i:i + 2, j:j + 2] = u
    return out


record("dynamic_update_slice", lambda v, u, i, j: lax.dynamic_update_slice(v, u, (i, j)),
       [x(3, 4), x(2, 2), ints(lo=0, hi=1), ints(lo=0, hi=2)], reference=_dus_reference)

_GATHER = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                     start_index_map=(0,))
_SCATTER = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))
_INDICES = Arg((2, 1), hi=4, kind="perm", dtype=I32)
record("gather", lambda v, i: lax.gather(v, i, _GATHER, (1, 3)), [x(4, 3), _INDICES],
       reference=lambda v, i: v[i[:, 0]])


def _scatter_reference(ufunc):
    def reference(v, i, u):
        out = v.copy()
        if ufunc is None:
            out[i[:, 0]] = u
        else:
            ufunc.at(out, i[:, 0], u)
        return out
    return reference


for _name, _fn, _ufunc in [("scatter", lax.scatter, None), ("scatter-add", lax.scatter_add,
                                                             np.add),
                           ("scatter-sub", lax.scatter_sub, np.subtract),
                           ("scatter-mul", lax.scatter_mul, np.multiply),
                           ("scatter-min", lax.scatter_min, np.minimum),
                           ("scatter-max", lax.scatter_max, np.maximum)]:
    record(_name, lambda v, i, u, _fn=_fn: _fn(v, i, u, _SCATTER, unique_indices=True),
           [x(4, 3), _INDICES, x(2, 3)],
           reference=_scatter_reference(_ufunc))

# --------------------------------------------------------------------------------------
# Reductions, cumulative reductions, sorting



def _along_axis_1(name, *extra, keyword=False):
    """lax.<name> along axis 1 (as `axis=1` if `keyword`, else (1,) or 1 then `extra`)."""
    fn = getattr(lax, name)
    if keyword:
        return lambda v: fn(v, axis=1)
    return lambda v: fn(v, (1,)) if not extra else fn(v, 1, *extra)


for _name, _ref in [("reduce_sum", np.sum), ("reduce_prod", np.prod), ("reduce_max", np.max),
                    ("reduce_min", np.min)]:
    record(_name, _along_axis_1(_name), [x()], reference=lambda v, _r=_ref: _r(v, axis=1))
for _name, _ref in [("reduce_and", np.bitwise_and), ("reduce_or", np.bitwise_or),
                    ("reduce_xor", np.bitwise_xor)]:
    record(_name, _along_axis_1(_name), [ints(2, 3, lo=0, hi=100, dtype=None)],
           dtypes=(BOOL, I32), reference=lambda v, _r=_ref: _r.reduce(v, axis=1))
for _name, _ref in [("argmax", np.argmax), ("argmin", np.argmin)]:
    record(_name, _along_axis_1(_name, np.int32), [x()],
           reference=lambda v, _r=_ref: _r(v, axis=1).astype(np.int32), diff=())  # indices
for _name, _ref in [("cumsum", np.cumsum), ("cumprod", np.cumprod),
                    ("cummax", np.maximum.accumulate), ("cummin", np.minimum.accumulate),
                    ("cumlogsumexp", np.logaddexp.accumulate)]:
    record(_name, _along_axis_1(_name, keyword=True), [x()],
           reference=lambda v, _r=_ref: _r(v, axis=1))
record("sort", lambda v: lax.sort(v, dimension=1), [x()], reference=lambda v: np.sort(v, 1))
record("top_k", lambda v: lax.top_k(v, 2), [x(2, 4)],
       reference=lambda v: (-np.sort(-v, 1)[:, :2], np.argsort(-v, 1)[:, :2].astype(np.int32)),
       grad_fn=lambda v: lax.top_k(v, 2)[0])

# Windowed reductions, and the derivatives of max/min windows (which select, then add)

_WINDOW = dict(window_dimensions=(2, 2), window_strides=(1, 1), padding="VALID")


def _windows(v):
    return sliding_window_view(v, (2, 2)).reshape(v.shape[0] - 1, v.shape[1] - 1, 4)


record("reduce_window_sum", lambda v: lax.reduce_window(v, 0.0, lax.add, **_WINDOW),
       [x(3, 4)], reference=lambda v: _windows(v).sum(-1))
record("reduce_window_max", lambda v: lax.reduce_window(v, -np.inf, lax.max, **_WINDOW),
       [x(3, 4)], reference=lambda v: _windows(v).max(-1))
record("reduce_window_min", lambda v: lax.reduce_window(v, np.inf, lax.min, **_WINDOW),
       [x(3, 4)], reference=lambda v: _windows(v).min(-1))


def _compound(a, b):  # (1 + a)(1 + b) - 1: associative, identity 0 (not a monoid of lax's)
    return a * b + a + b


record("reduce", lambda v: lax.reduce(v, 0.0, _compound, (1,)), [x(3, 4)],
       reference=lambda v: np.prod(1 + v, axis=1) - 1)
record("reduce_window", lambda v: lax.reduce_window(v, 0.0, _compound, **_WINDOW), [x(3, 4)],
       reference=lambda v: np.prod(1 + _windows(v), -1) - 1,
       modes=("fwd",))  # its JVP is not linear: no reverse mode (as in JAX)


def _max_pool(v):
    return lax.reduce_window(v, -np.inf, lax.max, **_WINDOW)


def _select_and_gather_reference(v, t):  # the tangent at each window's maximum
    best = _windows(v).argmax(-1)[..., None]
    return np.take_along_axis(_windows(t), best, -1)[..., 0]


def _select_and_scatter_reference(v, g):  # each cotangent added at its window's maximum
    out = np.zeros_like(v)
    best = _windows(v).argmax(-1)
    for (r, c), k in np.ndenumerate(best):
        out[r + k // 2, c + k % 2] += g[r, c]
    return out


record("select_and_gather_add", lambda v, t: jax.jvp(_max_pool, (v,), (t,))[1],
       [x(3, 4), x(3, 4)], reference=_select_and_gather_reference,
       diff=(1,))  # linear in the tangent; piecewise constant in the operand
record("select_and_scatter_add", lambda v, g: jax.vjp(_max_pool, v)[1](g)[0],
       [x(3, 4), x(2, 3)], reference=_select_and_scatter_reference, diff=(1,))


_SAS_GEOMETRY = ((2, 2), (1, 2), ((1, 0), (0, 1)))  # windows, strides, padding


def _select_and_scatter_general(v, g):  # a scatter of its own (not commutative)
    return select_and_scatter(v, lax.ge, *_SAS_GEOMETRY, g, v.dtype.type(0.5),
                              lambda a, b: a * 2 + b)


def _select_and_scatter_general_reference(v, g):
    """Per window in row-major order: its real positions in row-major order, the first
    greatest chosen; then out[choice] = 2 * out[choice] + g."""
    (wd, ws, pad), out = _SAS_GEOMETRY, np.full(v.shape, 0.5, v.dtype)
    for w in np.ndindex(*g.shape):
        at = [tuple(i * s + k - lo for i, s, k, (lo, _) in zip(w, ws, p, pad))
              for p in np.ndindex(*wd)]
        at = [q for q in at if all(0 <= i < n for i, n in zip(q, v.shape))]
        best = max(at, key=lambda q: v[q])  # (the first of the greatest)
        out[best] = out[best] * 2 + g[w]
    return out


record("select_and_scatter", _select_and_scatter_general, [x(3, 4), x(3, 2)],
       reference=_select_and_scatter_general_reference, dtypes=(F32, F64, I32), diff=(),
       vmap=False)  # (no derivatives nor batching rule, as in JAX)

# --------------------------------------------------------------------------------------
# Contractions, FFT

record("dot_general", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
       [x(2, 2, 3), x(2, 3, 2)], reference=lambda a, b: np.einsum("bij,bjk->bik", a, b),
       tol={F32: 1e-5})


def _conv_reference(lhs, rhs):  # NCHW, OIHW, stride 1, VALID
    patches = sliding_window_view(lhs, rhs.shape[2:], axis=(2, 3))  # n c h w kh kw
    return np.einsum("nchwij,ocij->nohw", patches, rhs)


record("conv_general_dilated", lambda a, k: lax.conv_general_dilated(a, k, (1, 1), "VALID"),
       [x(1, 2, 3, 3), x(2, 2, 2, 2)], reference=_conv_reference, tol={F32: 1e-5})
record("fft", lambda v: lax.fft(v, lax.FftType.FFT, (4,)), [x(2, 4)], dtypes=COMPLEX,
       reference=lambda v: np.fft.fft(v, axis=-1), tol={C64: 1e-5})

# --------------------------------------------------------------------------------------
# Linear algebra. Eigenvectors and the factors of QR and SVD are unique up to signs: the
# records compare their magnitudes.

_MATRIX = x(3, 3, lo=-1.0, hi=1.0)
_LINALG_TOL = {F32: 1e-4, F64: 1e-10}
record("cholesky", lax.linalg.cholesky, [x(3, 3, kind="spd")], reference=np.linalg.cholesky,
       tol=_LINALG_TOL)
record("triangular_solve",
       lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
       [x(3, 3, kind="tril"), x(3, 2)],
       reference=lambda a, b: sla.solve_triangular(a, b, lower=True), tol=_LINALG_TOL)


def _eigh(v):
    vectors, values = lax.linalg.eigh(v)
    return jnp.abs(vectors), values


def _eigh_reference(v):
    values, vectors = np.linalg.eigh(v)
    return np.abs(vectors), values


record("eigh", _eigh, [x(3, 3, kind="spd")], reference=_eigh_reference, tol=_LINALG_TOL)
record("eig", lambda v: lax.linalg.eig(v, compute_right_eigenvectors=False)[0],
       [x(3, 3, kind="spd")], reference=lambda v: np.linalg.eigvals(v).astype(
           C64 if v.dtype == F32 else C128), tol=_LINALG_TOL,
       order=1)  # the eigenvalues' derivative takes eigenvectors, whose own is not defined


def _lu(v):
    lu, pivots, perm = lax.linalg.lu(v)
    return lu, pivots, perm


def _lu_reference(v):
    lu, pivots = sla.lu_factor(v)
    perm = np.arange(3)
    for i, p in enumerate(pivots):
        perm[[i, p]] = perm[[p, i]]
    return lu, pivots.astype(np.int32), perm.astype(np.int32)


record("lu", _lu, [_MATRIX], reference=_lu_reference, tol=_LINALG_TOL, grad_tol=1e-4,
       grad_fn=lambda v: lax.linalg.lu(v)[0])
record("lu_pivots_to_permutation", lambda p: lax.linalg.lu_pivots_to_permutation(p, 4),
       [const([2, 3, 2], I32)], dtypes=(I32,), reference=lambda p: np.array([2, 3, 0, 1],
                                                                             np.int32))


def _qr(v):
    q, r = lax.linalg.qr(v, full_matrices=False)
    return jnp.abs(q), jnp.abs(r)


def _qr_reference(v):
    q, r = np.linalg.qr(v)
    return np.abs(q), np.abs(r)


record("qr", _qr, [x(3, 2, lo=-1.0, hi=1.0)], reference=_qr_reference, tol=_LINALG_TOL)


# QR in LAPACK's packed form, against LAPACK itself (SciPy's wrappers). JAX defines no
# derivatives for these primitives (its jvp raises "Differentiation rule ... not
# implemented"), so neither does didax: their records are not differentiable.


def _lapack(name, *args):
    return sla.lapack.get_lapack_funcs(name, args[:1])


def _geqrf_reference(v):
    packed, taus, _, _ = _lapack("geqrf", v)(v)
    return packed, taus


def _householder_reference(a, taus):
    name = "ungqr" if a.dtype.kind == "c" else "orgqr"
    return _lapack(name, a)(a, taus)[0]


def _ormqr_reference(left, transpose):
    def reference(a, taus, c):
        k = taus.shape[-1]
        name = "unmqr" if a.dtype.kind == "c" else "ormqr"
        trans = ("C" if a.dtype.kind == "c" else "T") if transpose else "N"
        return _lapack(name, a)("L" if left else "R", trans, a[:, :k], taus, c,
                                lwork=64 * max(c.shape))[0]
    return reference


def _geqp3_reference(v, jpvt):  # (SciPy's wrapper takes no jpvt: all columns free)
    packed, jpvt_out, taus, _, _ = _lapack("geqp3", v)(v)
    return packed, jpvt_out.astype(np.int32), taus


record("geqrf", linalg_internal.geqrf, [x(4, 3, lo=-1.0, hi=1.0)], reference=_geqrf_reference,
       tol=_LINALG_TOL, diff=())  # not differentiable, as in JAX
record("geqp3", linalg_internal.geqp3, [x(4, 3, lo=-1.0, hi=1.0), const([0, 0, 0], I32)],
       reference=_geqp3_reference, tol=_LINALG_TOL, diff=())  # not differentiable, as in JAX
record("householder_product", lax.linalg.householder_product,
       [x(4, 3, lo=-1.0, hi=1.0), x(2, lo=0.5, hi=1.5)],  # (any reflectors and scalars)
       reference=_householder_reference, tol=_LINALG_TOL, diff=())  # not differentiable, as
# in JAX (not even in taus, of which it is a polynomial)
record("ormqr", lax.linalg.ormqr, [x(4, 3, lo=-1.0, hi=1.0), x(3, lo=0.5, hi=1.5), x(4, 2)],
       reference=_ormqr_reference(True, False), tol=_LINALG_TOL,
       diff=())  # not differentiable, as in JAX (not even in c, in which it is linear)
record("ormqr", lambda a, taus, c: lax.linalg.ormqr(a, taus, c, left=False, transpose=True),
       [x(4, 3, lo=-1.0, hi=1.0), x(2, lo=0.5, hi=1.5), x(2, 4)],
       reference=_ormqr_reference(False, True), tol=_LINALG_TOL, label="right_transposed",
       diff=())  # not differentiable, as in JAX


def _svd(v):
    u, s, vt = lax.linalg.svd(v, full_matrices=False)
    return jnp.abs(u), s, jnp.abs(vt)


def _svd_reference(v):
    u, s, vt = np.linalg.svd(v, full_matrices=False)
    return np.abs(u), s, np.abs(vt)


record("svd", _svd, [x(3, 2, lo=-1.0, hi=1.0)], reference=_svd_reference, tol=_LINALG_TOL)

# --------------------------------------------------------------------------------------
# Random bits and samples

# Random123's known answer for Threefry-2x32 with 20 rounds (as JAX's tests use).
record("threefry2x32", core.all_primitives["threefry2x32"].bind,
       [const(0x13198A2E, U32), const(0x03707344, U32), const([0x243F6A88], U32),
        const([0x85A308D3], U32)], dtypes=(U32,),
       reference=lambda *_: (np.array([0xC4923A9C], np.uint32),
                             np.array([0x483DF7A0], np.uint32)))
record("random_gamma", lambda a: jrandom.gamma(jrandom.key(0), a), [x(lo=0.5, hi=3.0)],
       reference=None,  # random samples: no NumPy counterpart draws the same ones
       diff=())  # the implicit (reparameterized) derivative is not the derivative of the
# sampler's rejection path that finite differences see: random_gamma_grad's record checks it

# --------------------------------------------------------------------------------------
# Higher-order primitives, with fixed bodies: control flow, custom rules, staging


_softplus = jax.custom_jvp(lambda v: jnp.logaddexp(v, 0.0))  # its own derivative, by rule
_softplus.defjvps(lambda t, ans, v: t * lax.logistic(v))
_sin = jax.custom_vjp(jnp.sin)  # the derivative of sin, as a custom reverse rule
_sin.defvjp(lambda v: (jnp.sin(v), jnp.cos(v)), lambda cos_v, g: (cos_v * g,))


def _remat_body(v):
    return jnp.sin(jnp.sin(v)) * v


def _remat_body_reference(v):
    return np.sin(np.sin(v)) * v


def _while(v):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * 1.5),
                          (0, v))[1]


def _while_reference(v):
    for _ in range(3):
        v = np.sin(v) * 1.5
    return v


def _scan(c, xs):
    return lax.scan(lambda c, v: (c * v + jnp.sin(c), c), c, xs)


def _scan_reference(c, xs):
    ys = []
    for v in xs:
        ys.append(c)
        c = c * v + np.sin(c)
    return c, np.stack(ys)


_inner_jit = jax.jit(lambda a, b: a * b + jnp.cos(a))

record("cond", lambda p, v: lax.cond(p, jnp.sin, lambda v: jnp.cos(v) * v, v),
       [ints(lo=0, hi=1, dtype=BOOL), x()],
       reference=lambda p, v: np.where(p, np.sin(v), np.cos(v) * v))
record("while", _while, [x()], reference=_while_reference)  # (reverse mode too: beyond JAX)
record("scan", _scan, [x(3), x(2, 3, lo=-1.0, hi=1.0)], reference=_scan_reference)
record("custom_jvp_call", _softplus, [x()], reference=lambda v: np.logaddexp(v, 0.0))
record("custom_vjp_call", _sin, [x()], reference=np.sin,
       modes=("rev",))  # a custom_vjp function has no forward mode (as in JAX)
record("custom_lin", lambda v, t: jax.jvp(_sin, (v,), (t,)), [x(), x()],
       reference=lambda v, t: (np.sin(v), np.cos(v) * t), modes=("rev",))
record("checkpoint", jax.checkpoint(_remat_body), [x()], reference=_remat_body_reference)
record("remat_jvp", lambda v, t: jax.jvp(jax.checkpoint(_remat_body), (v,), (t,)), [x(), x()],
       reference=lambda v, t: (_remat_body_reference(v),
                               (np.cos(np.sin(v)) * np.cos(v) * v + np.sin(np.sin(v))) * t))
record("jit", lambda a, b: _inner_jit(_inner_jit(a, b), b), [x(), x()],
       reference=lambda a, b: (lambda c: c * b + np.cos(c))(a * b + np.cos(a)))


def _closed_call(a, b):
    """`closed_call_p` applying the closed jaxpr of `c * b + cos(c)` (as libraries bind it)."""
    from didax.extend.core.primitives import closed_call_p
    closed = jax.make_jaxpr(lambda c, d: c * d + jnp.cos(c))(a, b)
    return closed_call_p.bind(a, b, call_jaxpr=closed)[0]


record("closed_call", _closed_call, [x(), x()], reference=lambda a, b: a * b + np.cos(a))

# Mutable array references (didax/_src/state): each function makes its reference, so eager
# evaluation, jit (which discharges it), derivatives and vmap all see one.


def _ref_new(v):
    r = jax.new_ref(v)
    r[...] = jnp.sin(r[...])
    return jax.freeze(r)


def _ref_get(v):
    r = jax.new_ref(v)
    return r[1:, ::2], r[0, 1], r[..., 2], r[-1]


def _ref_swap(v, w):  # (w of shape (2,): a column; then a strided write)
    r = jax.new_ref(v)
    old = jax.ref.swap(r, (slice(None), 1), w)
    r[:, ::2] = r[:, ::2] * v[:, 1:]
    return old, jax.freeze(r)


def _ref_swap_reference(v, w):
    new = v.copy()
    new[:, 1] = w
    new[:, ::2] = new[:, ::2] * v[:, 1:]
    return v[:, 1], new


def _ref_addupdate(v, w):  # (w of shape (3,): a row)
    r = jax.new_ref(v * 2.0)
    r.addupdate(w, (0,))
    r[1] += w * v[1]
    return jax.freeze(r)


def _ref_addupdate_reference(v, w):
    new = v * 2.0
    new[0] += w
    new[1] += w * v[1]
    return new


record("new_ref", _ref_new, [x()], reference=np.sin)
record("get", _ref_get, [x()], reference=lambda v: (v[1:, ::2], v[0, 1], v[..., 2], v[-1]))
record("swap", _ref_swap, [x(), x(2)], reference=_ref_swap_reference)
record("addupdate", _ref_addupdate, [x(), x(3)], reference=_ref_addupdate_reference)
record("freeze", lambda v: jax.freeze(jax.new_ref(v)) * v, [x()], reference=lambda v: v * v)
record("name", lambda v: checkpoint_name(v * 2.0, "doubled"), [x()],
       reference=lambda v: v * 2.0)


def _symmetric_solve(m, b):
    a = (m + m.T) / 2  # symmetric under any perturbation of m, as symmetric=True claims
    return lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, r: jnp.linalg.solve(a, r),
                                   symmetric=True)


record("custom_linear_solve", _symmetric_solve, [x(3, 3, kind="spd"), x(3)],
       reference=lambda m, b: np.linalg.solve((m + m.T) / 2, b), tol=_LINALG_TOL)

# The decompositions of lax/linalg_schur.py, linalg_tridiagonal.py, linalg_updates.py: LAPACK's
# forms (SciPy's wrappers), and no derivatives where JAX defines none.


def _schur_product(v):
    t, z = lax.linalg.schur(v)
    return z @ t @ z.T


def _tridiagonal_matrix(dl, d, du):
    return np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)


record("hessenberg", lambda v: jnp.triu(lax.linalg.hessenberg(v)[0], -1), [x(4, 4)],
       reference=sla.hessenberg, tol=_LINALG_TOL, diff=())
record("schur", _schur_product, [x(4, 4)], reference=lambda v: v, tol=_LINALG_TOL, diff=())
record("tridiagonal", lambda v: lax.linalg.tridiagonal(v)[1], [x(4, 4, kind="spd")],
       reference=lambda v: (sla.lapack.ssytrd if v.dtype == F32 else sla.lapack.dsytrd)(
           v, lower=1)[1], tol=_LINALG_TOL, diff=())
record("tridiagonal_solve", lax.linalg.tridiagonal_solve,
       [x(4, lo=-1.0, hi=1.0), x(4, lo=3.0, hi=4.0), x(4, lo=-1.0, hi=1.0), x(4, 2)],
       reference=lambda dl, d, du, b: np.linalg.solve(_tridiagonal_matrix(dl, d, du), b),
       tol=_LINALG_TOL)
record("cholesky_update",
       lambda a, w: lax.linalg.cholesky_update(jnp.swapaxes(lax.linalg.cholesky(a), 0, 1), w),
       [x(3, 3, kind="spd"), x(3)],
       reference=lambda a, w: np.linalg.cholesky(a + np.outer(w, w)).T, tol=_LINALG_TOL,
       diff=(), vmap=False)  # (no batching rule, as in JAX)
record("symmetric_product",
       lambda a, c: lax.linalg.symmetric_product(a, c, alpha=2.0, beta=0.5), [x(3, 2), x(3, 3)],
       reference=lambda a, c: 2.0 * a @ a.T + 0.5 * c, tol=_LINALG_TOL, diff=())

# --------------------------------------------------------------------------------------
# Primitives of JAX's lax names (barrier.py, array_copy.py, precision.py, rng.py, stacking.py,
# approx_top_k.py, dimension_comparisons.py); their tests against JAX are beside them

record("optimization_barrier", lax.optimization_barrier, [x()], reference=lambda v: v)
record("copy", lax.copy_p.bind, [x()], reference=np.copy)
_CONSTRAINT = jax.sharding.NamedSharding(jax.make_mesh((1,), ("x",)), jax.P(None, "x"))
record("sharding_constraint", lambda v: lax.sharding_constraint_p.bind(
    v, sharding=_CONSTRAINT, layout=None, unconstrained_dims=frozenset()), [x()],
    reference=lambda v: v)
record("device_put", lambda v: lax.device_put_p.bind(
    v, devices=(jax.devices()[0],), srcs=(None,),
    copy_semantics=(_device_put.ArrayCopySemantics.ALWAYS_COPY,))[0], [x()],
    reference=lambda v: v)
record("zeta", lax.zeta, [x(lo=1.5, hi=4.0), x(lo=0.5, hi=3.0)], reference=sp.zeta,
       tol={F32: 1e-5, F64: 1e-12}, diff=())  # (no derivative rule, as in JAX)
record("reduce_precision", lambda v: lax.reduce_precision(v, 8, 7), [x()],
       reference=lambda v: v.astype(ml_dtypes.bfloat16).astype(v.dtype),
       diff=())  # a step function to finite differences (its derivative rounds the tangent)
record("rng_bit_generator", lambda k: lax.rng_bit_generator(k, (2, 3)), [x(4, lo=0, hi=99,
       kind="int")], dtypes=(U32,), diff=())  # (no reference: XLA's bits, JAX's in test_rng)
record("tile", lambda v: lax.tile_p.bind(v, reps=(2, 1)), [x()],
       reference=lambda v: np.tile(v, (2, 1)))
record("stack", lambda a, b: lax.stack_p.bind(a, b, axis=1), [x(), x()],
       reference=lambda a, b: np.stack([a, b], 1))
record("unstack", lambda v: tuple(lax.unstack_p.bind(v, axis=1)), [x()],
       reference=lambda v: tuple(np.moveaxis(v, 1, 0)))
record("approx_top_k", lambda v: tuple(lax.approx_top_k_p.bind(
    v, k=2, reduction_dimension=1, recall_target=0.95, is_max_k=True,
    reduction_input_size_override=-1, aggregate_to_topk=True)), [x(2, 4)],
       reference=lambda v: (-np.sort(-v, 1)[:, :2], np.argsort(-v, 1)[:, :2].astype(np.int32)),
       grad_fn=lambda v: lax.approx_top_k_p.bind(
           v, k=2, reduction_dimension=1, recall_target=0.95, is_max_k=True,
           reduction_input_size_override=-1, aggregate_to_topk=True)[0])
for _name, _ref in [("eq_to", np.equal), ("le_to", np.less_equal), ("lt_to", np.less)]:
    record(_name, getattr(lax, f"{_name}_p").bind, [x(lo=0, hi=2, kind="int"),
                                                    x(lo=0, hi=2, kind="int")],
           dtypes=(F32, I32), reference=_ref, diff=())

# --------------------------------------------------------------------------------------
# Primitives no record can drive, and where they are tested

_COLLECTIVE = ("a collective over a named axis: exists only inside the vmap or pmap naming "
               "the axis (vmap resolves it while tracing); tests/_src/lax/test_parallel.py "
               "(values, jit, grads, vmap) and tests/_src/parallel/test_pmap.py")
EXEMPT = {name: _COLLECTIVE for name in (
    "psum", "pmax", "pmin", "axis_index", "all_gather", "reduce_scatter", "ppermute",
    "all_to_all")}
EXEMPT["ragged_all_to_all"] = (
    "a collective over a named axis: exists only inside the vmap, pmap or shard_map naming "
    "the axis; tests/_src/lax/test_parallel_extras.py (values under vmap, nested vmap, pmap "
    "and jit, grads) and tests/_src/lax/test_primitive_exports.py (JAX's params and rules)")
EXEMPT.update({
    "pmap": "maps a jaxpr over devices (needs a device mesh and axis names): "
            "tests/_src/parallel/test_pmap.py",
    "linearized": "exists only inside an eager vjp's linear jaxpr, never bound by a program: "
                  "tests/_src/eager/test_vjp.py",
    "linearized_n": "exists only inside an eager vjp's linear jaxpr, never bound by a "
                    "program: tests/_src/eager/test_vjp.py",
    "debug_callback": "an effect (a Python callback run for its side effect), no value: "
                      "tests/_src/transforms/test_jit.py",
    "debug_print": "an effect (prints), no value: tests/_src/transforms/test_jit.py",
    "io_callback": "an ordered effect calling Python: "
                   "tests/jax_libraries/test_jax_extension_points.py",
    "pure_callback": "calls a Python function (no derivative; batched by the callback's "
                     "vmap_method): tests/_src/primitives/test_callback.py",
    "check": "checkify's effect: raises (or is functionalized into an error value), has no "
             "value: tests/jax_libraries/test_jax_extension_points.py",
    "while_transpose": "the backward loop of a while_loop differentiated inside jit (JAX "
                       "refuses): tests/_src/lax/control_flow/test_while_reverse.py",
})
EXEMPT.update({
    "stage": "never staged (bound on a traced value it returns it, as JAX's): "
             "tests/_src/lax/test_primitive_exports.py",
    "create_token": "makes a token, not an array (no values to compare, differentiate or "
                    "batch): tests/_src/lax/test_primitive_exports.py",
    "after_all": "takes and makes tokens, not arrays: tests/_src/lax/test_primitive_exports.py",
})
EXEMPT.update({
    "rng_uniform": "draws from a hidden state, so no two runs agree: tests/_src/lax/test_rng.py",
    "dce_sink": "an effect with no value: tests/_src/lax/test_dce_sink.py",
})
EXEMPT.update({name: "a sparse primitive (its integer indices must describe a valid layout): "
               "tests/_src/sparse/test_sparse_primitives.py" for name in (
                   "bcoo_todense", "bcoo_extract", "bcoo_fromdense", "bcoo_dot_general",
                   "bcoo_dot_general_transpose_data")})
_SPARSE_TESTS = {
    "tests/_src/sparse/test_sparse_bcsr.py": ("bcsr_todense", "bcsr_extract", "bcsr_fromdense",
                                              "bcsr_dot_general", "todense"),
    "tests/_src/sparse/test_sparse_reorder_spdot.py": (
        "bcoo_transpose", "bcoo_sort_indices", "bcoo_sum_duplicates", "bcoo_spdot_general",
        "bcoo_dot_general_sampled"),
    "tests/_src/sparse/test_sparse_coo_csr.py": (
        "coo_todense", "coo_fromdense", "coo_matvec", "coo_matmat", "csr_todense",
        "csr_fromdense", "csr_matvec", "csr_matmat"),
}
EXEMPT.update({name: "a sparse primitive (its integer indices must describe a valid layout): "
               + path for path, names in _SPARSE_TESTS.items() for name in names})


def by_id():
    return {r.id: r for r in RECORDS}


def uncovered(primitives, records=None, exempt=None):
    """The primitives in `primitives` with neither a record nor an exemption (sorted)."""
    records = RECORDS if records is None else records
    exempt = EXEMPT if exempt is None else exempt
    return sorted(set(primitives) - {r.prim for r in records} - set(exempt))
