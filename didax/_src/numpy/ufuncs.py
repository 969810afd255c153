"""Elementwise functions of didax.numpy, with NumPy's promotion and broadcasting.

Operands that need no promotion (arrays of one type, or an array and a Python scalar that
takes its type) bind the primitive at once, eagerly or traced alike; everything else
promotes first, through lax, in a function declared a step of eager reverse mode
(`eager.registry.step`).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import broadcast_in_dim_p, scalar_array, to_rank_params
from didax._src.config import config
from didax._src.core import Array, ArrayBase, _ctx, get_aval
from didax._src.eager.registry import step
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy.util import (
    asarray,
    broadcast_arrays,
    check_arraylike,
    operand_or_none,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
    promote_dtypes,
    promote_dtypes_inexact,
    promote_dtypes_numeric,
    promote_shapes,
)
from didax._src.primitives.custom_derivatives import custom_jvp
from didax._src.typecheck import const_like

_FLOAT_KINDS = "fc"
_PY_NUMBERS = (float, int)  # Python scalars a floating array's type takes (bool does not)


def _binary(name, lax_fn, prim=None, promote=promote_args, kinds="iufc", special=None):
    """A jnp binary function: `lax_fn(*promote(name, x1, x2))`, or `special(x1, x2)` where
    that gives a result; a step of eager reverse mode. `prim`: the primitive `lax_fn` binds on
    operands of one type of the given `kinds`, which promotion leaves as they are (as it
    leaves a Python number with a strongly typed floating array, made an array of its type):
    such operands bind it at once (an eager vjp takes a step of the primitive)."""

    def general(x1, x2, /):
        if special is not None:
            out = special(x1, x2)
            if out is not None:
                return out
        if prim is not None:
            out = _broadcast_and_bind(prim, kinds, x1, x2)
            if out is not None:
                return out
        x1, x2 = promote(name, x1, x2)
        return lax_fn(x1, x2)

    general.__name__ = general.__qualname__ = name
    general = step(general)

    def as_operator(x1, x2, /):
        """The fallback of the `__op__`/`__rop__` form: unknown operand types get
        NotImplemented (Python then asks the other operand)."""
        y1, y2 = operand_or_none(x1), operand_or_none(x2)
        if y1 is None or y2 is None:
            return NotImplemented
        return general(y1, y2)

    if prim is None:
        general.operator = as_operator
        return general

    def specialised(fallback):
        def fn(x1, x2, /):
            a = x1.aval if type(x1) is Array or isinstance(x1, ArrayBase) else None  # (types)
            b = x2.aval if type(x2) is Array or isinstance(x2, ArrayBase) else None
            if a is not None:
                if b is a:
                    if a.dtype.kind in kinds:
                        return _ctx.interp.process_pair(prim, x1, x2)  # (its bind)
                elif (b is None and type(x2) in _PY_NUMBERS and not a.weak_type
                      and a.dtype.kind in _FLOAT_KINDS):
                    return _ctx.interp.process_pair(prim, x1, scalar_array(x2, a.dtype, False))
            elif (b is not None and type(x1) in _PY_NUMBERS and not b.weak_type
                  and b.dtype.kind in _FLOAT_KINDS):
                return _ctx.interp.process_pair(prim, scalar_array(x1, b.dtype, False), x2)
            if a is not None and b is not None:  # (two arrays: an operator's too)
                return general(x1, x2)
            return fallback(x1, x2)

        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = f"Elementwise {name} with NumPy broadcasting and JAX type promotion."
        return fn

    fn = specialised(general)
    fn.operator = specialised(as_operator)  # (the same fast path: arrays' operators are hot)
    return fn


def _broadcast_and_bind(prim, kinds, x1, x2):
    """Two strong arrays of one dtype (of `kinds`) whose shapes broadcast: the lower-rank one
    given leading size-1 dimensions, then `prim` bound, as promotion and `lax_fn` would bind
    them (a bias added to a batch: a quarter of the time). Else None."""
    if not (isinstance(x1, ArrayBase) and isinstance(x2, ArrayBase)):
        return None
    a, b = x1.aval, x2.aval
    if a.dtype != b.dtype or a.weak_type or b.weak_type or a.dtype.kind not in kinds:
        return None
    s1, s2 = a.shape, b.shape
    if any(m != n and m != 1 and n != 1 for m, n in zip(reversed(s1), reversed(s2))):
        return None  # (promotion raises its error)
    interp = _ctx.interp
    if s1 and s2 and len(s1) != len(s2):  # (broadcast_to_rank's equation, bound at once)
        if config.read("jax_numpy_rank_promotion") != "allow":
            return None  # (promotion warns or raises)
        if len(s1) < len(s2):
            x1 = interp.process_primitive(broadcast_in_dim_p, (x1,), to_rank_params(s1, len(s2)))
        else:
            x2 = interp.process_primitive(broadcast_in_dim_p, (x2,), to_rank_params(s2, len(s1)))
    return interp.process_pair(prim, x1, x2)  # (its bind)


def _unary(name, lax_fn):
    """A jnp function of one operand, computed in floating point: an integer or boolean
    operand is converted first (JAX's `promote_dtypes_inexact`); a step of eager reverse
    mode. A floating operand binds the primitive of `lax_fn`, if it is one, at once."""
    prim = getattr(lax_fn, "primitive", None)

    def general(x, /):
        check_arraylike(name, x)
        (x,) = promote_dtypes_inexact(x)
        return lax_fn(x)

    general.__name__ = general.__qualname__ = name
    general = step(general)
    if prim is None:
        return general

    def fn(x, /):
        a = x.aval if type(x) is Array or isinstance(x, ArrayBase) else None
        if a is not None and a.dtype.kind in _FLOAT_KINDS:
            return _ctx.interp.process_one(prim, x)  # (its bind)
        return general(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name}."
    return fn


def _strong(x, value):
    """A strongly typed constant of `x`'s dtype (JAX's `_constant_like`): results that
    combine it with `x` are strongly typed, as in JAX's own compositions."""
    return np.asarray(value, get_aval(x).dtype)


def _lax_const(x, value):
    """JAX's `lax._const`: weakly typed only when `x` is a weakly typed scalar."""
    aval = get_aval(x)
    if aval.weak_type and aval.shape == ():
        return const_like(x, value)
    return np.asarray(value, aval.dtype)


def _is_int_or_bool(x):
    return dtypes.kind(get_aval(x).dtype) in "biu"


def _is_bool(x):
    return get_aval(x).dtype == np.bool_


# --------------------------------------------------------------------------------------
# Arithmetic


_BOOL = np.dtype(bool)
_PY_SCALAR_TYPES = (bool, int, float, complex)


def _add(x, y):  # (after promotion: operands are arrays or tracers of one dtype)
    return lax.bitwise_or(x, y) if x.aval.dtype is _BOOL else lax.add(x, y)


def _mul(x, y):
    return lax.bitwise_and(x, y) if x.aval.dtype is _BOOL else lax.mul(x, y)


def _sub(x, y):
    if x.aval.dtype is _BOOL:
        raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the "
                        "bitwise_xor, the `^` operator, or the logical_xor function instead.")
    return lax.sub(x, y)


def _bool_times(x1, x2):
    """A boolean array `b` times `x` where `b` has the product's shape: select(b, x, 0), as
    XLA computes convert(b) * x, so 0 * inf and 0 * NaN are 0 (JAX's jnp.multiply is one
    jitted program: eagerly too). Else None."""
    for b, x in ((x1, x2), (x2, x1)):
        if type(b) in _PY_SCALAR_TYPES or not hasattr(b, "dtype") or b.dtype != _BOOL:
            continue
        if type(x) is bool or (hasattr(x, "dtype") and x.dtype == _BOOL):
            return None
        dtype, weak = dtypes.result_type(x1, x2, return_weak_type_flag=True)
        shape = get_aval(b).shape
        if dtypes.canonicalize_dtype(dtype) not in lax.SELECT_PRODUCT_DTYPES or (
                np.broadcast_shapes(shape, np.shape(x)) != shape):
            return None
        b = asarray(b)
        x = lax.convert_element_type(x, dtype, weak)
        if get_aval(x).shape != shape:
            x = lax_shape.broadcast_to_rank(x, len(shape))
            x = lax_shape.broadcast_in_dim(x, shape, tuple(range(len(shape))))
        return lax.select_n(b, lax.convert_element_type(b, dtype, weak), x)  # (0 where not b)
    return None


add = _binary("add", _add, lax.add_p)
multiply = _binary("multiply", _mul, lax.mul_p, special=_bool_times)
subtract = _binary("subtract", _sub, lax.sub_p)
true_divide = _binary("true_divide", lax.div, lax.div_p, promote_args_inexact,
                      kinds="fc")
divide = true_divide
maximum = _binary("maximum", lax.max, lax.max_p)
minimum = _binary("minimum", lax.min, lax.min_p)
arctan2 = _binary("arctan2", lax.atan2, promote=promote_args_inexact)
nextafter = _binary("nextafter", lax.nextafter, promote=promote_args_inexact)
def _nonzero_int_divisor(x2):
    """An integer divisor with its zeros replaced by 1: jnp's remainders of integers by 0 are
    0, as JAX's (lax.rem's is the dividend)."""
    if dtypes.kind(get_aval(x2).dtype) not in "iu":
        return x2
    value = core.concrete_value(x2)
    if value is not None and np.all(value):  # (known to have no zeros: nothing to replace)
        return x2
    return lax.select_n(lax.eq(x2, const_like(x2, 0)), x2, lax.full_like(x2, 1))


def _fmod(x1, x2):
    return lax.rem(x1, _nonzero_int_divisor(x2))


fmod = _binary("fmod", _fmod, promote=promote_args_numeric)


def _float_divmod(x1, x2):
    """CPython's float divmod, as JAX's (x / 0 is an infinity, not NaN)."""
    mod = lax.rem(x1, x2)
    div = lax.div(where(lax.eq(x2, const_like(x2, 0)), x1, lax.sub(x1, mod)), x2)
    ind = lax.bitwise_and(lax.ne(mod, const_like(mod, 0)), lax.ne(lax.sign(x2), lax.sign(mod)))
    mod = lax.select_n(ind, mod, lax.add(mod, x2))
    div = lax.select_n(ind, div, lax.sub(div, const_like(div, 1)))
    return lax.round(div), mod


def _floor_divide(x1, x2):
    if _is_bool(x1):
        raise TypeError("floor_divide does not support boolean arguments")
    if _is_int_or_bool(x1):
        div = lax.div(x1, x2)
        zero = const_like(x1, 0)
        if dtypes.kind(get_aval(x1).dtype) == "u":
            return div
        sign_differs = lax.ne(lax.sign(x1), lax.sign(x2))
        inexact_div = lax.ne(lax.rem(x1, x2), zero)
        return lax.select_n(lax.bitwise_and(sign_differs, inexact_div), div,
                            lax.sub(div, const_like(div, 1)))
    return _float_divmod(x1, x2)[0]


def _remainder(x1, x2):
    x2 = _nonzero_int_divisor(x2)
    trunc_mod = lax.rem(x1, x2)
    zero = const_like(trunc_mod, 0)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, const_like(x2, 0))),
                              lax.ne(trunc_mod, zero))
    return lax.select_n(do_plus, trunc_mod, lax.add(trunc_mod, x2))


floor_divide = _binary("floor_divide", _floor_divide, promote=promote_args_numeric)
remainder = _binary("remainder", _remainder, promote=promote_args_numeric)
mod = remainder


def divmod(x1, x2, /):  # noqa: A001 - mirrors jnp.divmod
    x1, x2 = promote_args_numeric("divmod", x1, x2)
    if _is_int_or_bool(x1):
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


def _int_pow(base, exponent):
    """JAX's integer power: binary exponentiation over the exponent's low 6 bits (more would
    overflow any base above 1), unrolled; pow(0, y) is 0 for y != 0. (So negative
    exponents, which JAX leaves implementation-defined, give what JAX's give.)"""
    zero, one = const_like(exponent, 0), const_like(exponent, 1)
    acc = where(lax.bitwise_and(lax.eq(base, zero), lax.ne(exponent, zero)), zero, one)
    for _ in range(6):
        odd = lax.ne(lax.bitwise_and(exponent, one), zero)
        acc = lax.select_n(odd, acc, lax.mul(acc, base))
        base = lax.mul(base, base)
        exponent = lax.shift_right_logical(exponent, one)
    return acc


def _concrete_index(x):
    """`operator.index` of `x` if it is concrete and an integer (a Python int, a NumPy
    integer, a concrete 0-d integer array), else None."""
    value = core.concrete_value(x)
    if value is None:
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def power(x1, x2, /):
    """x1 ** x2 as JAX computes it: a concrete integer exponent (a Python int, or a
    concrete 0-d integer array) becomes integer_pow, so a negative one with an integer base
    is a TypeError; an integer base with an integer array exponent, JAX's `_int_pow`; a
    float base with an integer exponent, `pow` without promoting the exponent (whose
    derivative at 0 ** 0 is 0)."""
    check_arraylike("power", x1, x2)
    n = _concrete_index(x2)
    if n is not None:
        (x1,) = promote_dtypes_numeric(x1)
        return lax.integer_pow(x1, n)
    x1, x2 = promote_shapes("power", x1, x2)
    p1, p2 = promote_args_numeric("power", x1, x2)
    if _is_int_or_bool(p1):
        return _int_pow(p1, p2)
    if dtypes.kind(get_aval(x1).dtype) in "fc" and dtypes.kind(get_aval(x2).dtype) in "iu":
        return lax.pow(x1, x2)
    return lax.pow(p1, p2)


pow = power  # noqa: A001


def float_power(x1, x2, /):
    x1, x2 = promote_args_inexact("float_power", x1, x2)
    return lax.pow(x1, x2)


def negative(x, /):
    check_arraylike("negative", x)
    x = asarray(x)
    if _is_bool(x):
        raise TypeError("The numpy boolean negative, the `-` operator, is not supported, use "
                        "the `~` operator or the logical_not function instead.")
    return lax.neg(x)


def positive(x, /):
    check_arraylike("positive", x)
    return asarray(x)


def absolute(x, /):
    check_arraylike("absolute", x)
    x = asarray(x)
    return x if dtypes.kind(get_aval(x).dtype) in "bu" else lax.abs(x)


abs = absolute  # noqa: A001


def sign(x, /):
    check_arraylike("sign", x)
    x = asarray(x)
    if _is_bool(x):
        raise TypeError("sign does not accept dtype bool. Accepted dtypes are subtypes of "
                        "integer, floating, complexfloating.")
    return lax.sign(x)


def _int_passthrough(name, lax_fn):
    def fn(x, /):
        check_arraylike(name, x)
        x = asarray(x)
        if _is_int_or_bool(x):
            return x
        return lax_fn(x)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name}; integer inputs are returned unchanged."
    return fn


floor = _int_passthrough("floor", lax.floor)
ceil = _int_passthrough("ceil", lax.ceil)
trunc = _int_passthrough(
    "trunc", lambda x: lax.select_n(lax.lt(x, const_like(x, 0)), lax.floor(x), lax.ceil(x)))
fix = trunc
def rint(x, /):
    check_arraylike("rint", x)
    x = asarray(x)
    if _is_int_or_bool(x):  # JAX converts integers to a strongly typed float
        return lax.convert_element_type(x, dtypes.default_float_dtype())
    return lax.round(x, 1)


def round(a, decimals=0, out=None):  # noqa: A001 - mirrors jnp.round
    """Rounds half to even, as NumPy does, optionally to `decimals` places."""
    if out is not None:
        raise NotImplementedError("round: the out argument is not supported (arrays are "
                                  "immutable)")
    check_arraylike("round", a)
    a = asarray(a)
    if _is_int_or_bool(a):
        if decimals < 0:  # (as JAX: NumPy would round half to even)
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    if dtypes.issubdtype(get_aval(a).dtype, np.complexfloating):
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    if decimals == 0:
        return lax.round(a, 1)
    factor = const_like(a, 10.0 ** decimals)
    return lax.div(lax.round(lax.mul(a, factor), 1), factor)


around = round

# --------------------------------------------------------------------------------------
# Exponents, logarithms, trigonometry

exp = _unary("exp", lax.exp)
exp2 = _unary("exp2", lax.exp2)
expm1 = _unary("expm1", lax.expm1)
log = _unary("log", lax.log)
log1p = _unary("log1p", lax.log1p)
log2 = _unary("log2", lambda x: lax.div(lax.log(x), lax.log(_strong(x, 2))))
log10 = _unary("log10", lambda x: lax.div(lax.log(x), lax.log(_strong(x, 10))))
sqrt = _unary("sqrt", lax.sqrt)
cbrt = _unary("cbrt", lax.cbrt)
sin = _unary("sin", lax.sin)
cos = _unary("cos", lax.cos)
tan = _unary("tan", lax.tan)
arcsin = _unary("arcsin", lax.asin)
arccos = _unary("arccos", lax.acos)
arctan = _unary("arctan", lax.atan)
sinh = _unary("sinh", lax.sinh)
cosh = _unary("cosh", lax.cosh)
tanh = _unary("tanh", lax.tanh)
arcsinh = _unary("arcsinh", lax.asinh)
arccosh = _unary("arccosh", lax.acosh)
arctanh = _unary("arctanh", lax.atanh)
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh
atan2 = arctan2
deg2rad = _unary("deg2rad", lambda x: lax.mul(x, const_like(x, math.pi / 180)))
rad2deg = _unary("rad2deg", lambda x: lax.mul(x, const_like(x, 180 / math.pi)))
radians, degrees = deg2rad, rad2deg


def square(x, /):
    check_arraylike("square", x)
    x = asarray(x)
    if _is_bool(x):
        x = lax.convert_element_type(x, dtypes.default_int_dtype())
    return lax.integer_pow(x, 2)


def reciprocal(x, /):
    check_arraylike("reciprocal", x)
    (x,) = promote_dtypes_inexact(x)
    return lax.integer_pow(x, -1)


def hypot(x1, x2, /):
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    x1, x2 = lax.abs(x1), lax.abs(x2)
    inf = _strong(x1, np.inf)
    idx_inf = lax.bitwise_or(lax.eq(x1, inf), lax.eq(x2, inf))
    big, small = lax.max(x1, x2), lax.min(x1, x2)
    safe_big = lax.select_n(lax.eq(big, _strong(big, 0)), big, lax.full_like(big, 1))
    out = lax.mul(big, lax.sqrt(lax.add(_lax_const(big, 1), lax.square(lax.div(small, safe_big)))))
    return lax.select_n(idx_inf, out, lax.add(lax.full_like(out, 0), _lax_const(out, np.inf)))


def _logaddexp(x1, x2):
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    return lax.select_n(lax.ne(delta, delta),
                        lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))),
                        lax.add(x1, x2))


def _replace_inf(x):
    return lax.select_n(lax.eq(x, const_like(x, math.inf)), x, lax.full_like(x, 0))


def _logaddexp_jvp(primals, tangents):
    """JAX's rule: t1 exp(x1 - out) + t2 exp(x2 - out), with +inf replaced by 0 (so the
    derivative at infinities is finite), cheaper than differentiating max and select."""
    x1, x2 = primals
    t1, t2 = tangents
    out = logaddexp(x1, x2)
    t1 = lax.convert_element_type(t1, get_aval(out).dtype) if get_aval(t1).dtype != \
        get_aval(out).dtype else t1
    t2 = lax.convert_element_type(t2, get_aval(out).dtype) if get_aval(t2).dtype != \
        get_aval(out).dtype else t2
    r = _replace_inf(out)
    return out, lax.add(lax.mul(t1, lax.exp(lax.sub(_replace_inf(x1), r))),
                        lax.mul(t2, lax.exp(lax.sub(_replace_inf(x2), r))))


def _make_logaddexp():
    _logaddexp.__name__ = "logaddexp"  # the name its staged call prints with, as in JAX
    fn = custom_jvp(_logaddexp)
    fn.defjvp(_logaddexp_jvp)
    return fn


_logaddexp_custom = None


def logaddexp(x1, x2, /):
    global _logaddexp_custom
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    if _logaddexp_custom is None:
        _logaddexp_custom = _make_logaddexp()
    return _logaddexp_custom(x1, x2)


def _logaddexp2(x1, x2):
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    inv_ln2 = _lax_const(amax, 1 / math.log(2))
    return lax.select_n(
        lax.ne(delta, delta),
        lax.add(amax, lax.mul(inv_ln2, lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))))),
        lax.add(x1, x2))


def _logaddexp2_jvp(primals, tangents):
    """JAX's rule: t1 2**(x1 - out) + t2 2**(x2 - out), +inf replaced by 0 (differentiating
    max and abs instead gives (0, 1) at ties, where JAX gives (0.5, 0.5))."""
    x1, x2 = primals
    t1, t2 = tangents
    out = logaddexp2(x1, x2)
    r = _replace_inf(out)
    return out, lax.add(lax.mul(t1, lax.exp2(lax.sub(_replace_inf(x1), r))),
                        lax.mul(t2, lax.exp2(lax.sub(_replace_inf(x2), r))))


_logaddexp2_custom = None


def logaddexp2(x1, x2, /):
    global _logaddexp2_custom
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    if _logaddexp2_custom is None:
        _logaddexp2.__name__ = "logaddexp2"  # the name its staged call prints with
        _logaddexp2_custom = custom_jvp(_logaddexp2)
        _logaddexp2_custom.defjvp(_logaddexp2_jvp)
    return _logaddexp2_custom(x1, x2)


def sinc(x, /):
    check_arraylike("sinc", x)
    (x,) = promote_dtypes_inexact(x)
    is_zero = lax.eq(x, const_like(x, 0))
    one = lax.full_like(x, 1)
    pi_x = lax.mul(const_like(x, math.pi), lax.select_n(is_zero, x, one))
    return lax.select_n(is_zero, lax.div(lax.sin(pi_x), pi_x), one)


def ldexp(x1, x2, /):
    check_arraylike("ldexp", x1, x2)
    (x1,) = promote_dtypes_inexact(x1)
    x2 = asarray(x2)
    if not _is_int_or_bool(x2):
        raise TypeError(f"ldexp: the exponent must be an integer array, got {get_aval(x2).dtype}")
    x1, x2 = promote_shapes("ldexp", x1, lax.convert_element_type(x2, get_aval(x1).dtype))
    return lax.mul(x1, lax.exp2(x2))


# --------------------------------------------------------------------------------------
# Comparisons, logic, bits

equal = _binary("equal", lax.eq, lax.eq_p, kinds="biufc")
not_equal = _binary("not_equal", lax.ne, lax.ne_p, kinds="biufc")
less = _binary("less", lax.lt, lax.lt_p, kinds="biuf")
less_equal = _binary("less_equal", lax.le, lax.le_p, kinds="biuf")
greater = _binary("greater", lax.gt, lax.gt_p, kinds="biuf")
greater_equal = _binary("greater_equal", lax.ge, lax.ge_p, kinds="biuf")

def _to_bool(x):
    x = asarray(x)
    return x if _is_bool(x) else lax.ne(x, const_like(x, 0))


def _logical(name, lax_fn):
    def fn(x1, x2, /):
        check_arraylike(name, x1, x2)
        a, b = promote_shapes(name, _to_bool(x1), _to_bool(x2))
        return lax_fn(a, b)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} of the truth values."
    return fn


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x, /):
    check_arraylike("logical_not", x)
    return lax.bitwise_not(_to_bool(x))


def _check_int_or_bool(name, *args):
    for a in args:
        if not _is_int_or_bool(a):
            raise TypeError(f"{name} is only defined for integer and boolean arrays, got "
                            f"{get_aval(a).dtype.name}")


def _bitwise(name, lax_fn):
    def fn(x1, x2, /):
        x1, x2 = promote_args(name, x1, x2)
        _check_int_or_bool(name, x1)
        return lax_fn(x1, x2)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} of integer or boolean arrays."
    return fn


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and)
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor)
left_shift = _bitwise("left_shift", lax.shift_left)
bitwise_left_shift = left_shift


def _right_shift(x1, x2):
    if dtypes.kind(get_aval(x1).dtype) == "u":
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


right_shift = _bitwise("right_shift", _right_shift)
bitwise_right_shift = right_shift


def bitwise_not(x, /):
    check_arraylike("bitwise_not", x)
    x = asarray(x)
    _check_int_or_bool("bitwise_not", x)
    return lax.bitwise_not(x)


invert = bitwise_invert = bitwise_not


def bitwise_count(x, /):
    check_arraylike("bitwise_count", x)
    x = asarray(x)
    _check_int_or_bool("bitwise_count", x)
    return lax.convert_element_type(lax.population_count(absolute(x)), np.uint8)


# --------------------------------------------------------------------------------------
# Floating-point classification and related


def isfinite(x, /):
    check_arraylike("isfinite", x)
    x = asarray(x)
    dt = get_aval(x).dtype
    if dtypes.kind(dt) in "biu":
        return lax_shape.full(get_aval(x).shape, True, np.bool_)
    if dtypes.kind(dt) == "c":
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def isnan(x, /):
    check_arraylike("isnan", x)
    x = asarray(x)
    return lax.ne(x, x)


def isinf(x, /):
    check_arraylike("isinf", x)
    x = asarray(x)
    dt = get_aval(x).dtype
    if dtypes.kind(dt) in "biu":
        return lax_shape.full(get_aval(x).shape, False, np.bool_)
    if dtypes.kind(dt) == "c":
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    return lax.eq(lax.abs(x), _strong(x, np.inf))


def isposinf(x, /):
    x = asarray(x)
    if _is_int_or_bool(x):
        return lax_shape.full(get_aval(x).shape, False, np.bool_)
    return lax.eq(x, const_like(x, np.inf))


def isneginf(x, /):
    x = asarray(x)
    if _is_int_or_bool(x):
        return lax_shape.full(get_aval(x).shape, False, np.bool_)
    return lax.eq(x, const_like(x, -np.inf))


def signbit(x, /):
    """True where the sign bit is set (including -0.0)."""
    check_arraylike("signbit", x)
    x = asarray(x)
    dt = get_aval(x).dtype
    if dtypes.kind(dt) == "u" or dtypes.kind(dt) == "b":
        return lax_shape.full(get_aval(x).shape, False, np.bool_)
    zero = _strong(x, 0)
    if dtypes.kind(dt) == "i":
        return lax.lt(x, zero)
    negative_zero = lax.bitwise_and(lax.eq(x, zero), lax.lt(lax.atan2(x, _strong(x, -1)), zero))
    return lax.bitwise_or(lax.lt(x, zero), negative_zero)


def copysign(x1, x2, /):
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    return where(signbit(x2), lax.neg(lax.abs(x1)), lax.abs(x1))


def fmax(x1, x2, /):
    x1, x2 = promote_args("fmax", x1, x2)
    return where(lax.bitwise_or(lax.gt(x1, x2), isnan(x2)), x1, x2)


def fmin(x1, x2, /):
    x1, x2 = promote_args("fmin", x1, x2)
    return where(lax.bitwise_or(lax.lt(x1, x2), isnan(x2)), x1, x2)


def heaviside(x1, x2, /):
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    zero = _lax_const(x1, 0)
    return where(lax.lt(x1, zero), zero, where(lax.gt(x1, zero), _lax_const(x1, 1), x2))


def modf(x, /):
    check_arraylike("modf", x)
    (x,) = promote_dtypes_inexact(x)
    whole = trunc(x)
    return lax.sub(x, whole), whole


def fabs(x, /):
    """The absolute value as a float (complex inputs are an error)."""
    check_arraylike("fabs", x)
    if dtypes.kind(get_aval(asarray(x)).dtype) == "c":
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(*promote_args_inexact("fabs", x))


def frexp(x, /):
    """Mantissa m (0.5 <= |m| < 1, or x itself at 0, inf and NaN) and int32 exponent e with
    x = m 2^e. Without bit casts: e from floor(log2|x|) + 1, corrected by one either way;
    m is x scaled by exact powers of two (in two halves, so that neither overflows), which
    also gives JAX's derivative dm = dx 2^-e."""
    check_arraylike("frexp", x)
    (x,) = promote_dtypes_inexact(asarray(x))
    if dtypes.kind(get_aval(x).dtype) == "c":
        raise TypeError("frexp does not support complex-valued inputs")
    regular = lax.bitwise_and(isfinite(x), lax.ne(x, _strong(x, 0)))
    ax = where(regular, lax.abs(x), _strong(x, 1))
    e = lax.add(floor(log2(ax)), _strong(x, 1))
    half = floor(lax.mul(e, _strong(x, 0.5)))
    m = lax.mul(lax.mul(ax, lax.exp2(lax.neg(half))), lax.exp2(lax.sub(half, e)))
    over = lax.ge(m, _strong(x, 1))
    m = where(over, lax.mul(m, _strong(x, 0.5)), m)
    e = where(over, lax.add(e, _strong(x, 1)), e)
    under = lax.lt(m, _strong(x, 0.5))
    m = where(under, lax.mul(m, _strong(x, 2)), m)
    e = where(under, lax.sub(e, _strong(x, 1)), e)
    m = where(lax.lt(x, _strong(x, 0)), lax.neg(m), m)
    e = where(regular, e, _strong(x, 0))
    return where(regular, m, x), lax.convert_element_type(e, np.int32)


def spacing(x, /):
    """The distance from x to the next float away from zero (float16: towards +inf, as
    NumPy); at 0 the smallest subnormal with x's sign."""
    (x,) = promote_args_inexact("spacing", x)
    dt = get_aval(x).dtype
    if dtypes.kind(dt) == "c":
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = _lax_const(x, np.inf)
    if dt == np.float16:
        return lax.sub(lax.nextafter(x, inf), x)
    result = lax.sub(lax.nextafter(x, copysign(inf, x)), x)
    tiny = dtypes.finfo(dt).smallest_subnormal
    return where(lax.eq(result, _lax_const(x, 0)), copysign(_strong(x, tiny), x), result)


# --------------------------------------------------------------------------------------
# Complex parts


def real(val, /):
    val = asarray(val)
    return lax.real(val) if dtypes.kind(get_aval(val).dtype) == "c" else val


def imag(val, /):
    val = asarray(val)
    if dtypes.kind(get_aval(val).dtype) == "c":
        return lax.imag(val)
    return lax.full_like(val, 0)


def conjugate(x, /):
    x = asarray(x)
    return lax.conj(x) if dtypes.kind(get_aval(x).dtype) == "c" else x


conj = conjugate


def angle(z, deg=False):
    z = asarray(z)
    if dtypes.kind(get_aval(z).dtype) == "c":
        out = lax.atan2(lax.imag(z), lax.real(z))
    else:
        (z,) = promote_dtypes_inexact(z)
        out = lax.atan2(lax.mul(z, const_like(z, 0)), z)
    return rad2deg(out) if deg else out


def iscomplex(x):
    x = asarray(x)
    return lax.ne(imag(x), const_like(imag(x), 0))


def isreal(x):
    x = asarray(x)
    return lax.eq(imag(x), const_like(imag(x), 0))


def _dtype_of_obj(x):
    """The dtype of anything with one (arrays, ShapeDtypeStructs, NumPy dtypes' holders),
    else of `x` as an array."""
    dtype = getattr(x, "dtype", None)
    return np.dtype(dtype) if dtype is not None else get_aval(asarray(x)).dtype


def isrealobj(x):
    return x is None or dtypes.kind(_dtype_of_obj(x)) != "c"


def iscomplexobj(x):
    return x is not None and dtypes.kind(_dtype_of_obj(x)) == "c"


# --------------------------------------------------------------------------------------
# where and clip


def where(condition, x, y, /):
    """Chooses elementwise from `x` where `condition` holds, else from `y` (the three-argument
    form of `jnp.where`, which `searching.where` completes)."""
    check_arraylike("where", condition, x, y)
    cond = _to_bool(condition)
    x, y = promote_dtypes(x, y)
    if len({get_aval(a).shape for a in (cond, x, y)}) > 1:
        cond, x, y = broadcast_arrays(cond, x, y)
    return lax.select_n(cond, y, x)


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):  # noqa: A002
    """Limits values to [min, max]; either bound may be None."""
    if arr is None:
        arr = a
    if min is None:
        min = a_min
    if max is None:
        max = a_max
    check_arraylike("clip", arr)
    arr = asarray(arr)
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return arr
