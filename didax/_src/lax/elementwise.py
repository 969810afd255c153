"""Elementwise primitives: unary math, binary arithmetic, comparisons, logic, select.

Each primitive is one block: its declaration (`unop`/`binop` give the NumPy impl, type rule,
batching rule and, for a ufunc impl, the codegen rule), the `lax` wrapper that binds it, its
JVP rule, and whatever transpose, batching or codegen rule it has of its own. JVP rules are
JAX's expressions, operation for operation, so that derivatives round as JAX's do (visibly
so in float16 and bfloat16, where each operation rounds to 11 or 8 bits).
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import core, dtypes, tree_util
from didax._src.base_prims import (
    add_any_p,
    add_tangents,
    broadcast_in_dim,
    broadcast_in_dim_p,
    convert_element_type,
    convert_element_type_p,
    reshape,
    saturation_bounds,
    scalar_array,
)
from didax._src.compiler.codegen import codegen_rule, emit_impl_call, np_name, ufunc_rule
from didax._src.compiler.native.rules import (
    C_TYPES,
    FLOATS,
    c_constant,
    c_expr,
    c_function,
    native_rule,
    numeric,
    wrapping,
)
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.interpreters import batching, sharding
from didax._src.interpreters.jvp import defjvp, defjvp2, defjvp_zero, deflinear, instantiate
from didax._src.interpreters.transpose import is_undefined, unbroadcast
from didax._src.ir import JaxprEqn, Literal, Var
from didax._src.lax import transcendental_kernels
from didax._src.lax.base import binop, unop
from didax._src.lax.rounding_method import RoundingMethod
from didax._src.numerics import special as special_algorithms
from didax._src.typecheck import (
    any_,
    check_dtype,
    complex_,
    const_like,
    float_,
    inexact,
    int_,
    int_or_bool,
    naryop_aval,
    num,
    sint,
)


def _special(name):
    """The impl of a special-function primitive: NumPy algorithms (SciPy's when present)."""
    def impl(*args):
        return getattr(special_algorithms, name)(*args)

    impl.__name__ = name
    return impl


# --------------------------------------------------------------------------------------
# Wrappers used by rules and by didax.lax (Python scalars take the other operand's type)


_SCALAR_TYPES = (int, float, complex)  # captured before `complex` is redefined below


def _lift_scalars(*args):
    """Python scalars in a lax binary op take the dtype of the array operand."""
    ref = next((a for a in args if type(a) not in _SCALAR_TYPES), None)
    if ref is None:
        return args
    dtype = get_aval(ref).dtype
    return tuple(scalar_array(a, dtype, True) if type(a) in _SCALAR_TYPES else a
                 for a in args)


def _bind1(p):
    def wrapper(x):
        return p.bind(x)

    wrapper.primitive = p  # (jnp's wrappers evaluate it directly when nothing is traced)
    wrapper.__name__ = p.name
    wrapper.__doc__ = f"Elementwise {p.name} (the `{p.name}` primitive)."
    return wrapper


def _bind2(p):
    def wrapper(x, y):
        if type(x) in _SCALAR_TYPES:
            if type(y) not in _SCALAR_TYPES:
                x = scalar_array(x, get_aval(y).dtype, True)
        elif type(y) in _SCALAR_TYPES:
            y = scalar_array(y, get_aval(x).dtype, True)
        return p.bind(x, y)

    wrapper.__name__ = p.name
    wrapper.__doc__ = f"Elementwise {p.name} (the `{p.name}` primitive); no type promotion."
    return wrapper


def _inexact(eqn) -> bool:
    """Whether an equation's operands are floating or complex (codegen rules' `when`)."""
    return dtypes.kind(eqn.invars[0].aval.dtype) in "fc"


def _c_operands(eqn) -> bool:
    """Whether an equation's operands are of dtypes native loops handle."""
    return all(a.aval.dtype in C_TYPES for a in eqn.invars)


def _ints(eqn) -> bool:
    """Integer operands and results of the widths native loops handle."""
    return all(a.aval.dtype in C_TYPES and dtypes.kind(a.aval.dtype) in "iu"
               for a in (*eqn.invars, *eqn.outvars))


def _unsigned_c(dtype) -> str:
    """The C unsigned type of `dtype`'s width: integer arithmetic in it wraps, never traps."""
    return f"npy_uint{8 * np.dtype(dtype).itemsize}"


def _wrapped_neg(c, x) -> str:
    """-x of an integer in unsigned arithmetic: wraps as NumPy does (-INT_MIN is INT_MIN)."""
    u = "npy_uint64" if c.dtype.itemsize == 8 else "npy_uint32"
    return f"(({c.ctype})(({u})0 - ({u}){x}))"


def _int_or_bool(eqn) -> bool:
    return all(a.aval.dtype in C_TYPES and dtypes.kind(a.aval.dtype) in "biu"
               for a in (*eqn.invars, *eqn.outvars))


def _float_operands(eqn) -> bool:
    """Whether an equation's operands are float32 or float64 (native rules' `when`)."""
    return all(a.aval.dtype in FLOATS for a in eqn.invars)


# --------------------------------------------------------------------------------------
# Unary primitives

neg_p = unop("neg", num, np.negative)
deflinear(neg_p)
neg_p.def_traits(involution=True, cheap=True)
neg = _bind1(neg_p)
@native_rule(neg_p, when=numeric)
def _neg_native(c, eqn, x):
    return _wrapped_neg(c, x) if dtypes.kind(c.dtype) in "iu" else f"(-{x})"
neg_p.def_transpose(lambda ct, x: [neg(ct)])

sign_p = unop("sign", num, np.sign)
defjvp_zero(sign_p)
sign = _bind1(sign_p)


@native_rule(sign_p, when=_ints)
def _sign_native(c, eqn, x):
    """-1, 0 or 1 (unsigned: 0 or 1), as np.sign's."""
    if dtypes.kind(c.dtype) == "u":
        return f"(({c.ctype})({x} != 0))"
    return f"(({c.ctype})(({x} > 0) - ({x} < 0)))"

floor_p = unop("floor", float_, np.floor)
defjvp_zero(floor_p)
floor = _bind1(floor_p)

ceil_p = unop("ceil", float_, np.ceil)
defjvp_zero(ceil_p)
ceil = _bind1(ceil_p)


def _round_impl(x, rounding_method=0):
    if int(rounding_method) == 1:  # to nearest even
        return np.round(x)
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)).astype(x.dtype)


round_p = unop("round", float_, _round_impl)
defjvp_zero(round_p)


def round(x, rounding_method=0):  # noqa: A001 - mirrors lax.round
    """Rounds to the nearest integer: 0 rounds halves away from zero, 1 to even."""
    return round_p.bind(x, rounding_method=int(RoundingMethod(rounding_method)))


is_finite_p = unop("is_finite", float_, np.isfinite, out_dtype=lambda d: np.bool_)
defjvp_zero(is_finite_p)
is_finite = _bind1(is_finite_p)

def _own_float32(fn, ufunc):
    """The codegen and native rules of a function that float32 computes by didax's own
    algorithm (see lax.transcendental_kernels), and other dtypes by NumPy's `ufunc`."""
    numpy_rule = ufunc_rule(ufunc)

    def codegen(fb, k, eqn, outs):
        if eqn.invars[0].aval.dtype != np.float32:
            return numpy_rule(fb, k, eqn, outs)
        buf = fb.out_buffer(k, eqn, eqn.outvars[0].aval)
        out = f", out={buf}" if buf else ""
        fb.line(f"{outs[0]} = {np_name(fb, fn)}({fb.name(eqn.invars[0])}{out})")

    def native(c, eqn, x):
        if c.dtype == np.float32:
            return f"didax_{ufunc.__name__}_f32({x})"
        return c.call(ufunc.__name__, x)
    return codegen, native


exp_p = unop("exp", inexact, transcendental_kernels.exp)
defjvp2(exp_p, lambda g, ans, x: mul(g, ans))
exp = _bind1(exp_p)
_exp_codegen, _exp_native = _own_float32(transcendental_kernels.exp, np.exp)
codegen_rule(exp_p, fresh=True)(_exp_codegen)
native_rule(exp_p)(_exp_native)

# Exact at integers, where XLA's exp(log(2) * x) is not (a deliberate difference).
exp2_p = unop("exp2", inexact, np.exp2)
defjvp2(exp2_p, lambda g, ans, x: mul(const_like(x, math.log(2.0)), mul(g, ans)))
exp2 = _bind1(exp2_p)

log_p = unop("log", inexact, np.log)
defjvp(log_p, lambda g, x: div(g, x))
log = _bind1(log_p)
native_rule(log_p)(c_function("log"))

log1p_p = unop("log1p", inexact, np.log1p)
defjvp(log1p_p, lambda g, x: div(g, add(x, const_like(x, 1))))
log1p = _bind1(log1p_p)
native_rule(log1p_p)(c_function("log1p"))

expm1_p = unop("expm1", inexact, np.expm1)
defjvp2(expm1_p, lambda g, ans, x: mul(g, add(ans, const_like(x, 1))))
expm1 = _bind1(expm1_p)
native_rule(expm1_p)(c_function("expm1"))

tanh_p = unop("tanh", inexact, transcendental_kernels.tanh)
defjvp2(tanh_p, lambda g, ans, x: mul(add(g, mul(g, ans)), sub(const_like(x, 1), ans)))
tanh = _bind1(tanh_p)
_tanh_codegen, _tanh_native = _own_float32(transcendental_kernels.tanh, np.tanh)
codegen_rule(tanh_p, fresh=True)(_tanh_codegen)
native_rule(tanh_p)(_tanh_native)


def _logistic_impl(x):
    """1 / (1 + exp(-x)) in four passes over one buffer; where exp(-x) overflows, the result
    is exp(x) (to the last subnormal), as the stable two-sided formula gives."""
    t = np.negative(x)
    if type(t) is not np.ndarray:  # a 0-d value
        t = np.asarray(t)
    t = transcendental_kernels.exp(t, out=t)
    np.add(t, 1, out=t)
    np.reciprocal(t, out=t)
    if t.size and dtypes.kind(t.dtype) == "f":
        tail = x < -np.log(dtypes.finfo(t.dtype).max)
        if tail.any():
            t[tail] = transcendental_kernels.exp(x[tail])
    return t


logistic_p = unop("logistic", inexact, _logistic_impl)
defjvp2(logistic_p, lambda g, ans, x: mul(g, mul(ans, sub(const_like(x, 1), ans))))
logistic = _bind1(logistic_p)
# The impl, whose result is always a new buffer (see _logistic_impl).
codegen_rule(logistic_p, fresh=True)(emit_impl_call)


@native_rule(logistic_p)
def _logistic_native(c, eqn, x):
    """As the impl: 1 / (1 + exp(-x)), and exp(x) where exp(-x) overflows (computed for
    the blocks holding such an x only)."""
    big = c.const(-np.log(dtypes.finfo(c.dtype).max))
    if c.dtype == np.float32:
        head = c.let(f"1.0f / (1.0f + didax_exp_f32(-{x}))")
        tail = f"didax_exp_f32({x})"
    else:
        head = c.let(f"{c.const(1)} / ({c.const(1)} + {c.call('exp', f'(-{x})')})")
        tail = c.call("exp", x, where=f"{x} < {big}")
    return f"({x} < {big} ? {tail} : {head})"


sin_p = unop("sin", inexact, np.sin)
defjvp(sin_p, lambda g, x: mul(g, cos(x)))
sin = _bind1(sin_p)
native_rule(sin_p)(c_function("sin"))

cos_p = unop("cos", inexact, np.cos)
defjvp(cos_p, lambda g, x: neg(mul(g, sin(x))))
cos = _bind1(cos_p)
native_rule(cos_p)(c_function("cos"))

tan_p = unop("tan", inexact, np.tan)
defjvp2(tan_p, lambda g, ans, x: mul(g, add(const_like(x, 1), square(ans))))
tan = _bind1(tan_p)

asin_p = unop("asin", inexact, np.arcsin)
defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(const_like(x, 1), square(x)))))
asin = _bind1(asin_p)

acos_p = unop("acos", inexact, np.arccos)
defjvp(acos_p, lambda g, x: neg(mul(g, rsqrt(sub(const_like(x, 1), square(x))))))
acos = _bind1(acos_p)

atan_p = unop("atan", inexact, np.arctan)
defjvp(atan_p, lambda g, x: div(g, add(const_like(x, 1), square(x))))
atan = _bind1(atan_p)

sinh_p = unop("sinh", inexact, np.sinh)
defjvp(sinh_p, lambda g, x: mul(g, cosh(x)))
sinh = _bind1(sinh_p)

cosh_p = unop("cosh", inexact, np.cosh)
defjvp(cosh_p, lambda g, x: mul(g, sinh(x)))
cosh = _bind1(cosh_p)

asinh_p = unop("asinh", inexact, np.arcsinh)
defjvp(asinh_p, lambda g, x: mul(g, rsqrt(add(square(x), const_like(x, 1)))))
asinh = _bind1(asinh_p)

acosh_p = unop("acosh", inexact, np.arccosh)
defjvp(acosh_p, lambda g, x: mul(g, rsqrt(sub(square(x), const_like(x, 1)))))
acosh = _bind1(acosh_p)

atanh_p = unop("atanh", inexact, np.arctanh)
defjvp(atanh_p, lambda g, x: mul(integer_pow(add(const_like(x, 1), x), -1),
                                 div(g, sub(const_like(x, 1), x))))
atanh = _bind1(atanh_p)

sqrt_p = unop("sqrt", inexact, np.sqrt)
defjvp2(sqrt_p, lambda g, ans, x: mul(g, div(const_like(x, 0.5), ans)))
sqrt = _bind1(sqrt_p)
native_rule(sqrt_p)(c_function("sqrt"))

def _rsqrt_impl(x):
    """1 / sqrt(x); for 16-bit floats computed in float32 and rounded once, as XLA does (in
    16 bits the square root would round twice)."""
    if x.dtype.itemsize == 2:
        return (1 / np.sqrt(x.astype(np.float32))).astype(x.dtype)
    return (1 / np.sqrt(x)).astype(x.dtype)


rsqrt_p = unop("rsqrt", inexact, _rsqrt_impl)
defjvp2(rsqrt_p, lambda g, ans, x: mul(g, mul(const_like(x, -0.5), div(ans, x))))
rsqrt = _bind1(rsqrt_p)


@native_rule(rsqrt_p)
def _rsqrt_native(c, eqn, x):
    return f"({c.const(1)} / {c.call('sqrt', x)})"


cbrt_p = unop("cbrt", float_, np.cbrt)
defjvp2(cbrt_p, lambda g, ans, x: mul(g, mul(const_like(x, 1 / 3), integer_pow(ans, -2))))
cbrt = _bind1(cbrt_p)


def _abs_out_dtype(d):
    return dtypes.finfo(d).dtype if dtypes.issubdtype(d, np.complexfloating) else d


abs_p = unop("abs", sint + inexact, np.abs, out_dtype=_abs_out_dtype)  # (as JAX: no unsigned)


def _abs_jvp(primals, tangents):
    """JAX's rule: the slope is +1 at 0 (and -1 at NaN) for reals; 0 at 0 for complex."""
    (x,), (g,) = primals, tangents
    ans = abs(x)
    if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating):
        safe = select_n(eq(ans, const_like(ans, 0)), ans, full_like(ans, 1))
        return ans, div(real(mul(conj(x), g)), safe)
    return ans, select_n(ge(x, const_like(x, 0)), neg(g), g)


abs_p.def_jvp(_abs_jvp)
abs = _bind1(abs_p)  # noqa: A001 - mirrors lax.abs


@native_rule(abs_p, when=numeric)
def _abs_native(c, eqn, x):
    """NumPy's absolute on floats; on integers |x| wrapping as NumPy's (|INT_MIN| is
    INT_MIN)."""
    kind = dtypes.kind(c.dtype)
    if kind == "f":
        return c.call("absolute", x)
    if kind == "u":
        return x
    return f"({x} < 0 ? {_wrapped_neg(c, x)} : {x})"

erf_p = unop("erf", float_, _special("erf"))
defjvp(erf_p, lambda g, x: mul(const_like(x, 2 / math.sqrt(math.pi)),
                               mul(g, exp(neg(square(x))))))
erf = _bind1(erf_p)

erfc_p = unop("erfc", float_, _special("erfc"))
defjvp(erfc_p, lambda g, x: mul(const_like(x, -2 / math.sqrt(math.pi)),
                                mul(g, exp(neg(square(x))))))
erfc = _bind1(erfc_p)

erf_inv_p = unop("erf_inv", float_, _special("erf_inv"))
defjvp2(erf_inv_p, lambda g, ans, x: mul(const_like(x, math.sqrt(math.pi) / 2),
                                         mul(g, exp(square(ans)))))
erf_inv = _bind1(erf_inv_p)

lgamma_p = unop("lgamma", float_, _special("lgamma"))
defjvp(lgamma_p, lambda g, x: mul(g, digamma(x)))
lgamma = _bind1(lgamma_p)

digamma_p = unop("digamma", float_, _special("digamma"))
defjvp(digamma_p, lambda g, x: mul(g, polygamma(const_like(x, 1), x)))
digamma = _bind1(digamma_p)

polygamma_p = binop("polygamma", float_, _special("polygamma"))
defjvp(polygamma_p, None, lambda g, m, x: mul(g, polygamma(add(m, const_like(m, 1)), x)))
polygamma = _bind2(polygamma_p)


def _integer_pow_impl(x, *, y):
    """Repeated squaring, as XLA expands integer powers (x**2 is x * x, ...)."""
    if y < 0 and dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError("integer_pow with a negative exponent needs a floating-point base")
    n, acc = -y if y < 0 else y, None  # (`abs` is lax.abs here)
    while n:
        if n & 1:
            acc = x if acc is None else np.multiply(acc, x)
        n >>= 1
        if n:
            x = np.multiply(x, x)
    if acc is None:
        return np.ones_like(x)
    acc = np.asarray(acc, x.dtype)
    return acc if y > 0 else (1 / acc).astype(x.dtype)


integer_pow_p = core.primitive("integer_pow")
integer_pow_p.def_impl(_integer_pow_impl)


def _integer_pow_aval(x, *, y):
    check_dtype("integer_pow", x, num)
    if not isinstance(y, int):
        raise TypeError(f"integer_pow: the exponent must be a Python int, got {y!r}")
    if y < 0 and dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(f"integer_pow: a negative exponent {y} needs a floating-point base, "
                        f"got {x.dtype.name}")
    return x


integer_pow_p.def_abstract_eval(_integer_pow_aval)


def _integer_pow_jvp(g, x, *, y):
    if y == 0:
        return Zero(get_aval(g))
    return mul(g, mul(const_like(x, y), x if y == 2 else integer_pow(x, y - 1)))


defjvp(integer_pow_p, _integer_pow_jvp)
batching.defvectorized(integer_pow_p)
integer_pow_p.def_traits(cheap=True)
integer_pow_p.def_rule("sharding", sharding.elementwise)


def integer_pow(x, y: int):
    return integer_pow_p.bind(x, y=int(y))


@native_rule(integer_pow_p)
def _integer_pow_native(c, eqn, x):
    """Repeated squaring in the impl's order (so it rounds as the impl does)."""
    y = eqn.params["y"]
    n, acc = -y if y < 0 else y, None  # (`abs` is lax.abs here)
    while n:
        if n & 1:
            acc = x if acc is None else c.let(f"{acc} * {x}")
        n >>= 1
        if n:
            x = c.let(f"{x} * {x}")
    if acc is None:
        return c.const(1)
    return acc if y > 0 else f"({c.const(1)} / {acc})"


@codegen_rule(integer_pow_p, when=lambda eqn: eqn.params["y"] == 2, fresh=True)
def _square_codegen(fb, k, eqn, outs):
    x = fb.name(eqn.invars[0])
    if eqn.invars[0].aval.shape == ():
        fb.line(f"{outs[0]} = {x} * {x}")
        return
    buf = fb.out_buffer(k, eqn, eqn.outvars[0].aval)
    out = f", out={buf}" if buf else ""
    fb.line(f"{outs[0]} = np.multiply({x}, {x}{out})")


square_p = unop("square", num, np.square)
defjvp(square_p, lambda g, x: mul(g, mul(const_like(x, 2), x)))
square_p.def_traits(cheap=True)
square = _bind1(square_p)
native_rule(square_p)(c_expr("({0} * {0})"))

complex_p = binop("complex", float_, lambda x, y: x + 1j * y,
                  out_dtype=lambda d: np.result_type(d, np.complex64))
deflinear(complex_p)
complex = _bind2(complex_p)  # noqa: A001 - mirrors lax.complex


def _complex_transpose(ct, x, y):
    return [real(ct) if is_undefined(x) else None,
            neg(imag(ct)) if is_undefined(y) else None]


complex_p.def_transpose(_complex_transpose)

real_p = unop("real", complex_, np.real, out_dtype=lambda d: dtypes.finfo(d).dtype)
deflinear(real_p)
real = _bind1(real_p)
real_p.def_transpose(lambda ct, x: [complex(ct, full_like(ct, 0))])

imag_p = unop("imag", complex_, np.imag, out_dtype=lambda d: dtypes.finfo(d).dtype)
deflinear(imag_p)
imag = _bind1(imag_p)
imag_p.def_transpose(lambda ct, x: [complex(full_like(ct, 0), neg(ct))])

conj_p = unop("conj", inexact, np.conj)
deflinear(conj_p)
conj = _bind1(conj_p)
conj_p.def_transpose(lambda ct, x: [conj(ct)])

not_p = unop("not", int_or_bool, lambda x: np.invert(x))


@native_rule(not_p, when=_int_or_bool)
def _not_native(c, eqn, x):
    return f"(!{x})" if c.dtype == np.bool_ else f"(({c.ctype})~{x})"
defjvp_zero(not_p)
bitwise_not = _bind1(not_p)

def _population_count_impl(x):
    """Set bits of the two's-complement representation (np.bitwise_count counts |x|'s)."""
    bits = x.view(np.dtype(f"u{x.dtype.itemsize}")) if dtypes.kind(x.dtype) == "i" else x
    return np.bitwise_count(bits).astype(x.dtype)


population_count_p = unop("population_count", int_, _population_count_impl)
defjvp_zero(population_count_p)
population_count = _bind1(population_count_p)


@native_rule(population_count_p, when=_ints)
def _population_count_native(c, eqn, x):
    return f"(({c.ctype})__builtin_popcountll((npy_uint64)({_unsigned_c(c.dtype)}){x}))"


def _clz_impl(x):
    """Leading zeros by binary search on the unsigned bits: at each halving, if the top
    `shift` bits are zero, count them and shift them out."""
    bits = 8 * x.dtype.itemsize
    u = x.astype(np.dtype(f"u{x.dtype.itemsize}"))
    count = np.zeros(x.shape, x.dtype)
    shift = bits // 2
    while shift:
        top_zero = (u >> np.array(bits - shift, u.dtype)) == 0
        count += np.where(top_zero, np.array(shift, x.dtype), np.array(0, x.dtype))
        u = np.where(top_zero, u << np.array(shift, u.dtype), u)
        shift //= 2
    count += (u >> np.array(bits - 1, u.dtype) == 0).astype(x.dtype)  # all zero: one more
    return count


clz_p = unop("clz", int_, _clz_impl)
defjvp_zero(clz_p)
clz = _bind1(clz_p)


# --------------------------------------------------------------------------------------
# Binary primitives

add_p = binop("add", num, np.add)
defjvp(add_p, lambda g, x, y: g, lambda g, x, y: g)
add_p.linear = True
add_p.def_traits(is_addition=True, cheap=True)
add = _bind2(add_p)
native_rule(add_p, when=numeric)(wrapping("+"))


def _add_transpose(ct, x, y):
    return [unbroadcast(ct, x.aval) if is_undefined(x) else None,
            unbroadcast(ct, y.aval) if is_undefined(y) else None]


add_p.def_transpose(_add_transpose)


def _add_any_jvp(primals, tangents):
    return add_tangents(*primals), add_tangents(*tangents)


def _add_any_batch(size, vals, dims):
    (x, y), (dx, dy) = vals, dims
    d = dx if dx is not None else dy
    return add_any_p.bind(batching.matchaxis(x, dx, d, size),
                          batching.matchaxis(y, dy, d, size)), d


# add_any (declared in base_prims: the interpreters sum tangents and cotangents with it)
add_any_p.def_jvp(_add_any_jvp)
add_any_p.def_traits(is_addition=True, cheap=True)
add_any_p.def_transpose(lambda ct, x, y: [ct, ct])
add_any_p.def_batch(_add_any_batch)
add_any_p.def_rule("sharding", sharding.elementwise)
codegen_rule(add_any_p, fresh=True)(ufunc_rule(np.add))
native_rule(add_any_p, when=numeric)(wrapping("+"))

sub_p = binop("sub", num, np.subtract)
defjvp(sub_p, lambda g, x, y: g, lambda g, x, y: neg(g))
sub_p.linear = True
sub_p.def_traits(cheap=True)
sub = _bind2(sub_p)
native_rule(sub_p, when=numeric)(wrapping("-"))


def _sub_transpose(ct, x, y):
    return [unbroadcast(ct, x.aval) if is_undefined(x) else None,
            unbroadcast(neg(ct), y.aval) if is_undefined(y) else None]


sub_p.def_transpose(_sub_transpose)

mul_p = binop("mul", num, np.multiply)
defjvp(mul_p, lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g))
mul_p.def_traits(unit=1, cheap=True)
mul = _bind2(mul_p)
native_rule(mul_p, when=numeric)(wrapping("*"))


def _mul_transpose(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        raise NotImplementedError("transpose of 'mul': the product of two linear values is "
                                  "not linear")
    if is_undefined(x):
        return [unbroadcast(mul(ct, y), x.aval), None]
    return [None, unbroadcast(mul(x, ct), y.aval)]


mul_p.def_transpose(_mul_transpose)


def _nonzero_divisor(y):
    """`y` with its zeros replaced by 1, and the mask of them (None if there are none)."""
    zero = y == 0
    if not zero.any():
        return y, None
    return np.where(zero, np.ones((), y.dtype), y), zero


def _int_div(x, y):
    """XLA's integer division: truncated towards zero; x / 0 is -1 (all bits set, so the
    largest unsigned value), and INT_MIN / -1 wraps to INT_MIN."""
    y, zero = _nonzero_divisor(y)
    with np.errstate(over="ignore"):
        if dtypes.kind(x.dtype) == "u":
            q = np.floor_divide(x, y)
        else:  # floor to truncation: one more where the (floor) remainder's sign is not x's
            q, r = np.divmod(x, y)
            q = q + ((r != 0) & ((r < 0) != (x < 0)))
    if zero is not None:
        q = np.where(zero, np.array(-1).astype(x.dtype), q)
    return np.asarray(q, x.dtype)


def _div_impl(x, y):
    if dtypes.kind(x.dtype) in "iu":
        return _int_div(x, y)
    return np.true_divide(x, y).astype(x.dtype, copy=False)


div_p = binop("div", num, _div_impl)
defjvp(div_p, lambda g, x, y: div(g, y),
       lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2)))
div = _bind2(div_p)


@native_rule(div_p, when=numeric)
def _div_native(c, eqn, x, y):
    """IEEE division; on integers the impl's (XLA's): truncated, x / 0 is -1 (all bits set),
    INT_MIN / -1 wraps to INT_MIN (C would trap on both)."""
    kind = dtypes.kind(c.dtype)
    if kind == "f":
        return f"({x} / {y})"
    if kind == "u":
        return f"({y} == 0 ? ({c.ctype})-1 : ({c.ctype})({x} / {y}))"
    return (f"({y} == 0 ? ({c.ctype})-1 : {y} == -1 ? {_wrapped_neg(c, x)} : "
            f"({c.ctype})({x} / {y}))")


def _div_transpose(ct, x, y):
    _linear_in("div", (x, y), 0)
    return [unbroadcast(div(ct, y), x.aval), None]


div_p.def_transpose(_div_transpose)
# Primitives whose impl is this ufunc on floating-point and complex operands.
codegen_rule(div_p, when=_inexact, fresh=True)(ufunc_rule(np.true_divide))


def _rem_impl(x, y):
    """C's remainder (the sign of x), as XLA's: on integers x % 0 is x, INT_MIN % -1 is 0."""
    if dtypes.kind(x.dtype) in "iu":
        y, zero = _nonzero_divisor(y)
        r = np.fmod(x, y)
        return np.asarray(r if zero is None else np.where(zero, x, r), x.dtype)
    return np.fmod(x, y)


rem_p = binop("rem", num, _rem_impl)
defjvp(rem_p, lambda g, x, y: g,
       lambda g, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))))
rem = _bind2(rem_p)
codegen_rule(rem_p, when=_inexact, fresh=True)(ufunc_rule(np.fmod))


@native_rule(rem_p, when=_ints)
def _rem_native(c, eqn, x, y):
    """C's remainder, with the impl's x % 0 == x and INT_MIN % -1 == 0 (C would trap)."""
    if dtypes.kind(c.dtype) == "u":
        return f"({y} == 0 ? {x} : ({c.ctype})({x} % {y}))"
    return f"({y} == 0 ? {x} : {y} == -1 ? {c.const(0)} : ({c.ctype})({x} % {y}))"


def _pow_impl(x, y):
    """np.power of operands laid out in full: for an exponent read with stride 0 (a scalar,
    or broadcast) NumPy squares, inverts or takes the square root itself where it is 2, -1
    or 0.5 (which exponents depends on its version), elsewhere it calls its pow; so the
    bits would depend on the layout. (The native tier calls NumPy's loop on blocks read in
    full too.) An integer exponent is converted to the base's type, as XLA does."""
    if y.dtype != x.dtype:
        y = y.astype(x.dtype)
    if x.dtype not in (np.float32, np.float64):
        return np.power(x, y)
    shape = np.broadcast_shapes(x.shape, y.shape)
    return np.power(_in_full(x, shape), _in_full(y, shape)).reshape(shape)


def _in_full(a, shape):
    """`a` as an array of `shape` (at least 1-d) with no zero stride."""
    shape = shape or (1,)
    if a.shape == shape and all(s or d == 1 for s, d in zip(a.strides, shape)):
        return a
    return np.array(np.broadcast_to(a, shape))


pow_p = binop("pow", inexact, _pow_impl)


def _pow_aval(x, y):
    """A floating or complex base; an exponent of its type or, as in JAX, an integer."""
    if dtypes.kind(y.dtype) in "iu":
        y = ShapedArray(y.shape, x.dtype, y.weak_type)
    return naryop_aval("pow", (x, y), inexact)


pow_p.def_abstract_eval(_pow_aval)


def _pow_jvp_x(g, ans, x, y):
    """JAX's rule: y x**(y - 1); for an integer y, 0 where y is 0 (even at x = 0)."""
    if dtypes.kind(get_aval(y).dtype) not in "iu":
        return mul(g, mul(y, pow(x, sub(y, const_like(y, 1)))))
    yx = convert_element_type(y, get_aval(x).dtype, get_aval(y).weak_type)
    jac = mul(yx, pow(x, sub(y, const_like(y, 1))))
    y_is_zero = _broadcast_like(eq(y, const_like(y, 0)), jac)
    return mul(g, select_n(y_is_zero, jac, zeros_like(jac)))


def _pow_jvp_y(g, ans, x, y):
    safe_x = select_n(eq(x, const_like(x, 0)), x, full_like(x, 1))
    return mul(g, mul(log(safe_x), ans))


defjvp2(pow_p, _pow_jvp_x, _pow_jvp_y)


def pow(x, y):  # noqa: A001 - mirrors lax.pow
    """x ** y elementwise (the `pow` primitive): a Python int exponent stays an integer, as
    in JAX; other Python scalars take the other operand's type."""
    if type(y) is int:
        y = scalar_array(y, dtypes.python_scalar_dtype(y), True)
    if type(x) in _SCALAR_TYPES:
        y_dtype = get_aval(y).dtype
        x = scalar_array(x, y_dtype if dtypes.kind(y_dtype) in "fc" else
                         dtypes.python_scalar_dtype(float(x) if type(x) is int else x), True)
    elif type(y) in _SCALAR_TYPES:
        y = scalar_array(y, get_aval(x).dtype, True)
    return pow_p.bind(x, y)


native_rule(pow_p)(c_function("power"))  # (NumPy's loop, on operands read in full)
codegen_rule(pow_p, fresh=True, when=lambda eqn: dtypes.kind(eqn.outvars[0].aval.dtype) == "c"
             and eqn.invars[0].aval.dtype == eqn.invars[1].aval.dtype)(ufunc_rule(np.power))

# NumPy's maximum and minimum loop over a 0-d (broadcast) operand three times slower than
# over two arrays (17.7 us against 5.2 us on float32 (128, 256)): beside an array of at least
# this many elements, the 0-d operand is filled out first (bit-identical results).
_FILL_MIN = 4096


def _extremum_impl(ufunc):
    def impl(x, y):
        if x.ndim != y.ndim:  # (lax: equal ranks, or one operand 0-d)
            if y.ndim == 0 and x.size >= _FILL_MIN:
                y = np.full(x.shape, y)
            elif x.ndim == 0 and y.size >= _FILL_MIN:
                x = np.full(y.shape, x)
        return ufunc(x, y)

    impl.__name__ = ufunc.__name__
    return impl


def _extremum_codegen(ufunc):
    """The ufunc's call, with a 0-d operand beside a large array filled out: a literal once,
    when the code is compiled (a constant of the module), a variable at each call."""
    plain = ufunc_rule(ufunc)

    def rule(fb, k, eqn, outs):
        aval = eqn.outvars[0].aval
        if math.prod(aval.shape) < _FILL_MIN or all(a.aval.shape for a in eqn.invars):
            return plain(fb, k, eqn, outs)
        args = []
        for a in eqn.invars:
            if a.aval.shape:
                args.append(fb.name(a))
            elif type(a) is Literal:
                full = np.full(aval.shape, a.val, a.aval.dtype)
                full.flags.writeable = False
                args.append(fb.module.global_name(full, "full"))
            else:
                args.append(f"np.full({aval.shape}, {fb.name(a)})")
        buf = fb.out_buffer(k, eqn, aval)
        out = f", out={buf}" if buf else ""
        fb.line(f"{outs[0]} = {np_name(fb, ufunc)}({', '.join(args)}{out})")

    return rule


max_p = binop("max", any_, _extremum_impl(np.maximum))
defjvp2(max_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
        lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
max = _bind2(max_p)  # noqa: A001
codegen_rule(max_p, fresh=True)(_extremum_codegen(np.maximum))
# NaN from either operand; the second operand at ties (-0 and 0), as np.maximum.
native_rule(max_p, when=numeric)(c_expr("(({0} > {1}) | ({0} != {0}) ? {0} : {1})"))

min_p = binop("min", any_, _extremum_impl(np.minimum))
defjvp2(min_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
        lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
min = _bind2(min_p)  # noqa: A001
codegen_rule(min_p, fresh=True)(_extremum_codegen(np.minimum))
native_rule(min_p, when=numeric)(c_expr("(({0} < {1}) | ({0} != {0}) ? {0} : {1})"))


def _balanced_eq(x, z, y):
    """1 where x alone attains z, 1/2 where x and y tie, 0 elsewhere (JAX's tie split)."""
    dtype = get_aval(z).dtype  # booleans converted to 0/1: cheaper than selecting constants
    x_eq = convert_element_type(eq(x, z), dtype)
    y_eq = convert_element_type(eq(y, z), dtype)
    return div(x_eq, add(const_like(z, 1), y_eq))


atan2_p = binop("atan2", float_, np.arctan2)
defjvp(atan2_p, lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
       lambda g, x, y: mul(g, div(neg(x), add(square(x), square(y)))))
atan2 = _bind2(atan2_p)

nextafter_p = binop("nextafter", float_, np.nextafter)
defjvp_zero(nextafter_p)
nextafter = _bind2(nextafter_p)


def _mulhi_impl(x, y):
    """The high half of the double-width product. Up to 32 bits, a 64-bit product; for 64
    bits, schoolbook multiplication of 32-bit halves, then the signed correction
    hi(x * y) = hi_unsigned(x, y) - (y if x < 0) - (x if y < 0) (mod 2**64)."""
    x, y = np.broadcast_arrays(x, y)
    bits = 8 * x.dtype.itemsize
    if bits < 64:
        wide = np.int64 if dtypes.kind(x.dtype) == "i" else np.uint64
        return ((x.astype(wide) * y.astype(wide)) >> np.array(bits, wide)).astype(x.dtype)
    u64 = np.uint64
    a, b = x.astype(u64), y.astype(u64)
    mask, k32 = u64(0xFFFFFFFF), u64(32)
    a_lo, a_hi, b_lo, b_hi = a & mask, a >> k32, b & mask, b >> k32
    lo_lo, hi_lo, lo_hi = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi
    middle = (lo_lo >> k32) + (hi_lo & mask) + (lo_hi & mask)
    hi = a_hi * b_hi + (hi_lo >> k32) + (lo_hi >> k32) + (middle >> k32)
    if dtypes.kind(x.dtype) == "i":
        hi = hi - np.where(x < 0, b, u64(0)) - np.where(y < 0, a, u64(0))
    return hi.astype(x.dtype)


mulhi_p = binop("mulhi", int_, _mulhi_impl)
defjvp_zero(mulhi_p)
mulhi = _bind2(mulhi_p)
# Comparisons and logic: boolean or integer outputs, no derivative.
eq_p = binop("eq", any_, np.equal, out_dtype=np.bool_)
eq = _bind2(eq_p)
native_rule(eq_p, when=_c_operands)(c_expr("({0} == {1})"))

ne_p = binop("ne", any_, np.not_equal, out_dtype=np.bool_)
ne = _bind2(ne_p)
native_rule(ne_p, when=_c_operands)(c_expr("({0} != {1})"))

lt_p = binop("lt", any_, np.less, out_dtype=np.bool_)
lt = _bind2(lt_p)
native_rule(lt_p, when=_c_operands)(c_expr("({0} < {1})"))

le_p = binop("le", any_, np.less_equal, out_dtype=np.bool_)
le = _bind2(le_p)
native_rule(le_p, when=_c_operands)(c_expr("({0} <= {1})"))

gt_p = binop("gt", any_, np.greater, out_dtype=np.bool_)
gt = _bind2(gt_p)
native_rule(gt_p, when=_c_operands)(c_expr("({0} > {1})"))

ge_p = binop("ge", any_, np.greater_equal, out_dtype=np.bool_)
ge = _bind2(ge_p)
native_rule(ge_p, when=_c_operands)(c_expr("({0} >= {1})"))

and_p = binop("and", int_or_bool, np.bitwise_and)
bitwise_and = _bind2(and_p)
native_rule(and_p, when=_int_or_bool)(c_expr("({0} & {1})"))

or_p = binop("or", int_or_bool, np.bitwise_or)
native_rule(or_p, when=_int_or_bool)(c_expr("({0} | {1})"))
bitwise_or = _bind2(or_p)

xor_p = binop("xor", int_or_bool, np.bitwise_xor)
native_rule(xor_p, when=_int_or_bool)(c_expr("({0} ^ {1})"))
bitwise_xor = _bind2(xor_p)


def _shift_impl(fn):
    """XLA's shifts read the count as unsigned: counts that are negative or at least the
    width shift every bit out (0)."""
    def impl(x, y):
        bits = x.dtype.itemsize * 8
        out = fn(x, np.clip(y, 0, bits - 1).astype(y.dtype))
        return np.where((y < 0) | (y >= bits), np.zeros_like(out), out).astype(x.dtype)

    return impl


def _shift_right_logical(x, y):
    ux = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return np.right_shift(ux, y.astype(ux.dtype)).view(x.dtype)


def _shift_right_arithmetic(x, y):
    """Shifts the bits as signed (also of unsigned operands, as XLA does); counts that are
    negative or at least the width fill every bit with the sign bit."""
    bits = x.dtype.itemsize * 8
    sx = x.view(np.dtype(f"i{x.dtype.itemsize}"))
    y = np.where((y < 0) | (y >= bits), np.array(bits - 1, y.dtype), y)
    return np.asarray(np.right_shift(sx, y.astype(sx.dtype)), sx.dtype).view(x.dtype)


shift_left_p = binop("shift_left", int_, _shift_impl(np.left_shift))
shift_left = _bind2(shift_left_p)

shift_right_arithmetic_p = binop("shift_right_arithmetic", int_, _shift_right_arithmetic)
shift_right_arithmetic = _bind2(shift_right_arithmetic_p)

shift_right_logical_p = binop("shift_right_logical", int_, _shift_impl(_shift_right_logical))
shift_right_logical = _bind2(shift_right_logical_p)


def _native_shift(op: str):
    """A shift in the unsigned type of the operands' width (no undefined C shifts): counts
    that are negative or at least the width give 0, as the impl's."""
    def rule(c, eqn, x, y):
        bits = 8 * c.dtype.itemsize
        u = f"npy_uint{bits}"
        return (f"(({u}){y} < {bits} ? ({c.ctype})({u})(({u}){x} {op} ({u}){y}) : "
                f"{c.const(0)})")
    return rule


native_rule(shift_left_p, when=_int_or_bool)(_native_shift("<<"))
native_rule(shift_right_logical_p, when=_int_or_bool)(_native_shift(">>"))


@native_rule(shift_right_arithmetic_p, when=_ints)
def _shift_right_arithmetic_native(c, eqn, x, y):
    """The bits shifted as signed (the sign bit fills; C's >> on a signed value does so in
    every compiler the tier probes), counts negative or at least the width read as
    width - 1, as the impl's."""
    bits = 8 * c.dtype.itemsize
    u, s = _unsigned_c(c.dtype), f"npy_int{bits}"
    return f"(({c.ctype})(({s}){x} >> (({u}){y} < {bits} ? ({s}){y} : {bits - 1})))"


def _unsigned_by_literal_in_range(eqn) -> bool:
    """An unsigned shift by a constant count below the width: NumPy's own shift (the impl's
    clipping and masking change nothing there; random bits to floats shift so)."""
    x, y = eqn.invars
    return (dtypes.kind(x.aval.dtype) == "u" and type(y) is Literal
            and 0 <= int(y.val) < 8 * x.aval.dtype.itemsize)


codegen_rule(shift_left_p, when=_unsigned_by_literal_in_range, fresh=True)(
    ufunc_rule(np.left_shift))
codegen_rule(shift_right_logical_p, when=_unsigned_by_literal_in_range, fresh=True)(
    ufunc_rule(np.right_shift))
for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p, and_p, or_p, xor_p, shift_left_p,
           shift_right_arithmetic_p, shift_right_logical_p):
    defjvp_zero(_p)

# --------------------------------------------------------------------------------------
# select_n, clamp, convert_element_type, stop_gradient

select_n_p = core.primitive("select_n")


def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return select2(which, cases[0], cases[1])
    return np.choose(which.astype(np.intp), np.broadcast_arrays(*cases))


# np.where branches on each element: over random predicates it takes 42 us on float32
# (128, 256), where masking the cases' bits takes 22 us. Arrays of at least this many
# elements, of items of these sizes, are selected by their bits (bit-identical).
_SELECT_BITS_MIN = 4096
_UINTS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def select2(which, case0, case1):
    """`np.where(which, case1, case0)` for a boolean `which` of the cases' shape."""
    u = _UINTS.get(case0.dtype.itemsize)
    if (u is None or which.size < _SELECT_BITS_MIN or type(case0) is not np.ndarray
            or type(case1) is not np.ndarray or not which.shape == case0.shape == case1.shape):
        return np.where(which, case1, case0)
    mask = which.view(np.uint8).astype(u)
    np.negative(mask, out=mask)  # all ones where `which`
    out = np.bitwise_and(case1.view(u), mask)
    np.invert(mask, out=mask)
    np.bitwise_and(case0.view(u), mask, out=mask)
    np.bitwise_or(out, mask, out=out)
    return out.view(case0.dtype)


def _select_n_aval(which, *cases):
    if not cases:
        raise TypeError("select_n needs at least one case")
    if which.dtype != np.bool_ and not dtypes.issubdtype(which.dtype, np.integer):
        raise TypeError(f"select_n: the selector must be bool or int32, got {which.dtype.name}")
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError("select_n: a boolean selector allows at most two cases, got "
                        f"{len(cases)}")
    shapes = {c.shape for c in cases}
    if len(shapes) != 1:
        raise TypeError(f"select_n: all cases must have the same shape, got {sorted(shapes)}")
    if len({c.dtype for c in cases}) != 1:
        raise TypeError("select_n: all cases must have the same dtype, got "
                        f"{', '.join(c.dtype.name for c in cases)}")
    shape = cases[0].shape
    if which.shape and which.shape != shape:
        raise TypeError(f"select_n: the selector must be a scalar or have the cases' shape "
                        f"{shape}, got {which.shape}")
    return ShapedArray(shape, cases[0].dtype, all(c.weak_type for c in cases))


select_n_p.def_impl(_select_n_impl)
select_n_p.def_abstract_eval(_select_n_aval)


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = select_n(which, *cases)
    case_tangents = tangents[1:]
    if all(type(t) is Zero for t in case_tangents):
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, select_n(which, *[instantiate(t) for t in case_tangents])


select_n_p.def_jvp(_select_n_jvp)


def select_n(which, *cases):
    """`cases[which]` elementwise; a bool `which` picks cases[1] where True."""
    return select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    """`on_true` where `pred`, else `on_false`: select_n with its cases the other way round."""
    return select_n_p.bind(pred, on_false, on_true)


def _select_n_transpose(ct, which, *cases):
    _linear_in("select_n", (which,) + cases, *range(1, len(cases) + 1))
    zeros = full_like(ct, 0)
    if get_aval(which).shape != get_aval(ct).shape:
        which = _broadcast_like(which, ct)
    return [None] + [
        select_n(which, *[ct if j == i else zeros for j in range(len(cases))])
        if is_undefined(c) else None
        for i, c in enumerate(cases)]


select_n_p.def_transpose(_select_n_transpose)


def _select_n_batch(size, vals, dims):
    which, *cases = vals
    case_shape = next(get_aval(c).shape[:d] + get_aval(c).shape[d + 1:] if d is not None
                      else get_aval(c).shape for c, d in zip(cases, dims[1:]))
    cases = [_to_full_front(c, d, size, case_shape) for c, d in zip(cases, dims[1:])]
    which_rank = get_aval(which).ndim - (dims[0] is not None)
    if dims[0] is None and which_rank == 0:
        return select_n(which, *cases), 0
    return select_n(_to_full_front(which, dims[0], size, case_shape), *cases), 0


select_n_p.def_batch(lambda size, vals, dims: _select_n_batch(size, vals, dims))
select_n_p.def_rule("sharding", sharding.elementwise)


@codegen_rule(select_n_p, fresh=True,
              when=lambda eqn: len(eqn.invars) == 3 and eqn.invars[0].aval.dtype == np.bool_)
def _select_n_codegen(fb, k, eqn, outs):
    which, case0, case1 = eqn.invars
    if which.aval.shape and math.prod(which.aval.shape) >= _SELECT_BITS_MIN:
        fn = fb.module.global_name(select2, "select2")
        fb.line(f"{outs[0]} = {fn}({fb.name(which)}, {fb.typed(case0)}, {fb.typed(case1)})")
        return
    fb.line(f"{outs[0]} = np.where({fb.name(which)}, {fb.typed(case1)}, {fb.typed(case0)})")


@native_rule(select_n_p, when=lambda eqn: (len(eqn.invars) == 3
                                          and eqn.invars[0].aval.dtype == np.bool_
                                          and eqn.outvars[0].aval.dtype in C_TYPES))
def _select_n_native(c, eqn, which, case0, case1):
    dtype = eqn.outvars[0].aval.dtype
    if dtype in FLOATS:  # (by bits: see toolchain.module_prelude)
        return f"didax_select_f{8 * dtype.itemsize}({which}, {case1}, {case0})"
    return f"({which} ? {case1} : {case0})"


clamp_p = core.primitive("clamp")
clamp_p.def_impl(lambda lo, x, hi: np.clip(x, lo, hi).astype(x.dtype))


def _clamp_aval(lo, x, hi):
    for name, a in (("min", lo), ("max", hi)):
        if a.shape and a.shape != x.shape:
            raise TypeError(f"clamp: {name} must be a scalar or have the operand's shape "
                            f"{x.shape}, got {a.shape}")
    naryop_aval("clamp", (lo, x, hi), any_)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


clamp_p.def_abstract_eval(_clamp_aval)


@native_rule(clamp_p, when=_ints)
def _clamp_native(c, eqn, lo, x, hi):
    """np.clip's order on integers: the larger of x and lo, then the smaller of that and hi
    (hi when lo > hi)."""
    low = c.let(f"({x} > {lo} ? {x} : {lo})")
    return f"({low} < {hi} ? {low} : {hi})"
defjvp(  # JAX's rules: the bounds' tangents where they are attained (min only below max)
    clamp_p,
    lambda g, lo, x, hi: select_n(bitwise_and(gt(lo, x), lt(lo, hi)), zeros_like(mul(g, x)),
                                  mul(g, full_like(x, 1))),
    lambda g, lo, x, hi: select_n(bitwise_and(gt(x, lo), lt(x, hi)), zeros_like(g), g),
    lambda g, lo, x, hi: select_n(lt(hi, x), zeros_like(mul(g, x)), mul(g, full_like(x, 1))),
)


def clamp(min, x, max):  # noqa: A002 - mirrors lax.clamp
    x_aval = get_aval(x)
    lo, hi = (np.asarray(v, x_aval.dtype) if isinstance(v, (int, float)) else v
              for v in (min, max))
    return clamp_p.bind(lo, x, hi)


def _clamp_batch(size, vals, dims):
    lo, x, hi = vals
    _, dx, _ = dims
    x_shape = get_aval(x).shape if dx is None else (
        get_aval(x).shape[:dx] + get_aval(x).shape[dx + 1:])
    x = _to_full_front(x, dx, size, x_shape)
    bounds = [b if d is None and get_aval(b).ndim == 0 else _to_full_front(b, d, size, x_shape)
              for b, d in ((lo, dims[0]), (hi, dims[2]))]
    return clamp_p.bind(bounds[0], x, bounds[1]), 0


clamp_p.def_batch(lambda size, vals, dims: _clamp_batch(size, vals, dims))
clamp_p.def_rule("sharding", sharding.elementwise)


# convert_element_type (declared in base_prims: the interpreters convert cotangents with it)


def _convert_jvp(primals, tangents, *, new_dtype, weak_type):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if not dtypes.issubdtype(new_dtype, np.inexact) or not dtypes.issubdtype(get_aval(x).dtype,
                                                                     np.inexact):
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


convert_element_type_p.def_jvp(_convert_jvp)
batching.defvectorized(convert_element_type_p)
convert_element_type_p.linear = True
convert_element_type_p.def_traits(returns_operand=lambda eqn: 0)  # (to the operand's type)


def _convert_transpose(ct, x, *, new_dtype, weak_type):
    return [convert_element_type(ct, x.aval.dtype, x.aval.weak_type)]


convert_element_type_p.def_transpose(_convert_transpose)
convert_element_type_p.def_rule("sharding", sharding.elementwise)


def _plain_conversion(eqn) -> bool:
    """Conversions `astype` does as the impl does (no complex parts dropped, no float to
    integer saturation, no test against zero for bool)."""
    src, dst = eqn.invars[0].aval.dtype, np.dtype(eqn.params["new_dtype"])
    src, dst = dtypes.kind(src), dtypes.kind(dst)
    return (src in "biuf" and dst in "fc") or (src in "biu" and dst in "iu")


@codegen_rule(convert_element_type_p, when=_plain_conversion)
def _convert_codegen(fb, k, eqn, outs):
    dst = np.dtype(eqn.params["new_dtype"])
    dtype = fb.module.global_name(dst, dst.name)
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.astype({dtype})")


@native_rule(convert_element_type_p,
             when=lambda eqn: (eqn.invars[0].aval.dtype in C_TYPES
                               and eqn.outvars[0].aval.dtype in C_TYPES))
def _convert_native(c, eqn, x):
    """C conversions, as NumPy's astype (integers wrap); to bool: a test against zero; float
    to integer saturating and NaN to 0, as the impl (the C cast only of values in range)."""
    if c.dtype == np.bool_:
        return f"({x} != 0)"
    src = eqn.invars[0].aval.dtype
    if dtypes.kind(src) == "f" and dtypes.kind(c.dtype) in "iu":
        lo, hi, imin, imax = saturation_bounds(src, c.dtype)
        lo, hi = c_constant(lo, src), c_constant(hi, src)
        return (f"({x} > {hi} ? {c.const(imax)} : {x} < {lo} ? {c.const(imin)} : "
                f"{x} == {x} ? ({c.ctype}){x} : {c.const(0)})")
    return f"(({c.ctype}){x})"


# XLA computes a product by a boolean converted to a float or complex type, convert(p) * x
# with convert(p) of the product's shape, as select(p, x, 0): so under jit 0 * inf and
# 0 * NaN are 0 there (JAX eagerly multiplies, giving NaN, when the conversion is an
# operation of its own). Not bfloat16, which XLA on CPU multiplies in float32, nor through a
# broadcast of convert(p), nor for a conversion from anything but bool (as JAX 0.10.2).
SELECT_PRODUCT_DTYPES = frozenset(np.dtype(d) for d in (np.float16, np.float32, np.float64,
                                                        np.complex64, np.complex128))


def _rewrite_bool_product(eqn, program):
    """jit's rewrite of `mul(c, x)` (either order), `c = convert(p)`, into
    `select_n(p, c, x)`: c is the 0 where p is false (a scalar x broadcast first)."""
    out = eqn.outvars[0].aval
    if out.dtype not in SELECT_PRODUCT_DTYPES:
        return None
    for i, c in enumerate(eqn.invars):
        conv = program.producer.get(c) if type(c) is not Literal else None
        if (conv is None or conv.primitive is not convert_element_type_p
                or conv.invars[0].aval.dtype != np.bool_ or c.aval.shape != out.shape):
            continue
        x, eqns = eqn.invars[1 - i], []
        if x.aval.shape != out.shape:  # a scalar (lax broadcasting)
            full = Var(ShapedArray(out.shape, out.dtype, x.aval.weak_type))
            eqns.append(JaxprEqn(broadcast_in_dim_p, [x], [full],
                                 dict(shape=out.shape, broadcast_dimensions=(), sharding=None),
                                 eqn.source_info, eqn.phase))
            x = full
        eqns.append(JaxprEqn(select_n_p, [conv.invars[0], c, x], eqn.outvars, {},
                             eqn.source_info, eqn.phase))
        return eqns, {}
    return None


mul_p.def_rule("rewrite", _rewrite_bool_product)

stop_gradient_p = unop("stop_gradient", any_, lambda x: x)
defjvp_zero(stop_gradient_p)
stop_gradient_p.def_traits(returns_operand=lambda eqn: 0)
stop_gradient_prim = _bind1(stop_gradient_p)


def stop_gradient(x):
    """Identity whose derivative is zero (maps over pytrees)."""
    def stop(v):
        if dtypes.issubdtype(get_aval(v).dtype, np.inexact):
            return stop_gradient_p.bind(v)
        return v

    if isinstance(x, core.ArrayBase):  # one array: no tree to map over
        return stop(x)
    return tree_util.tree_map(stop, x)


# --------------------------------------------------------------------------------------
# Compositions of the primitives above, and helpers their rules share


def reciprocal(x):
    """1 / x, as x ** -1 (so integers are rejected, as in JAX)."""
    return integer_pow(x, -1)


def full_like(x, value):
    """`value` broadcast to `x`'s shape and dtype, keeping `x`'s weak type."""
    aval = get_aval(x)
    fill = const_like(x, value) if aval.weak_type else np.asarray(value, aval.dtype)
    return broadcast_in_dim(fill, aval.shape, ())


def zeros_like(x):
    return full_like(x, 0)


def _broadcast_like(x, ref):
    """Broadcasts `x` (same rank with size-1 dims, or rank 0) to the shape of `ref`."""
    shape, ref_shape = get_aval(x).shape, get_aval(ref).shape
    if shape == ref_shape:
        return x
    if not shape:
        return broadcast_in_dim(x, ref_shape, ())
    kept = [i for i, d in enumerate(shape) if d == ref_shape[i]]
    return broadcast_in_dim(reshape(x, [shape[i] for i in kept]), ref_shape, tuple(kept))


def _linear_in(name, args, *positions):
    for i, a in enumerate(args):
        if is_undefined(a) and i not in positions:
            raise NotImplementedError(f"transpose of '{name}': the operation is not linear in "
                                      f"argument {i}")


def _to_full_front(v, d, size, shape):
    """An operand as a (size, *shape) array: batch dimension first, broadcast if needed."""
    if d is None:
        return broadcast_in_dim(v, (size,) + tuple(shape),
                                tuple(range(1 + len(shape) - get_aval(v).ndim, 1 + len(shape))))
    v = batching.moveaxis(v, d, 0)
    if get_aval(v).shape[1:] != tuple(shape):
        v = broadcast_in_dim(v, (size,) + tuple(shape), tuple(range(get_aval(v).ndim)))
    return v
