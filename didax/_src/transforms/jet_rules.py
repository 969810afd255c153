"""The jet rules: how each primitive maps truncated Taylor series, in one table (which `jet`
gives the jet interpreter, didax._src.interpreters.jet).

A rule takes the operands' primals and series (a list of the K coefficients
`[x1, ..., xK]` of `x(t) = x0 + x1 t + ... + xK t^K`, or None for an operand whose series is
zero) and returns the result's primal and series. Rules run with the parent interpreter
current. The primal is always the primitive applied to the primals, so it is exactly what
the function computes without jet.

Linear and structural primitives map each coefficient; products take Cauchy products
(`(xy)_n = sum_i x_i y_(n-i)`); the other nonlinear primitives use recurrences from their
series identities: for `z = f(x)` with `z' = g x'`, the coefficients of `z' = sum n z_n
t^(n-1)` give `z_n = (g x')_(n-1) / n`, where `g` is itself a series (of `x`, or of the
lower coefficients of `z`, as `exp' = exp`).
"""
from __future__ import annotations

import math

from didax._src import dtypes
from didax._src.base_prims import (
    add_any_p,
    broadcast_in_dim,
    broadcast_in_dim_p,
    convert_element_type,
    convert_element_type_p,
    reduce_sum,
    reduce_sum_p,
    reshape,
    reshape_p,
    transpose_p,
    zeros_like_aval,
)
from didax._src.core import get_aval
from didax._src.interpreters.jet import Call, Composite
from didax._src.lax import elementwise as ew
from didax._src.lax.bitcast import bitcast_convert_type_p
from didax._src.lax.conv import conv_general_dilated_p
from didax._src.lax.dot import dot_general_p
from didax._src.lax.fft import fft_p
from didax._src.lax.indexing import (
    dynamic_slice_p,
    dynamic_update_slice_p,
    gather_p,
    scatter_add_p,
)
from didax._src.lax.reduction import (
    associative_scan_flat,
    cummax_p,
    cummin_p,
    cumprod_p,
    cumsum_p,
    reduce_max_p,
    reduce_min_p,
)
from didax._src.lax.shape import (
    concatenate_p,
    expand_dims_p,
    pad_p,
    rev_p,
    slice_p,
    split_p,
    squeeze_p,
)
from didax._src.lax.windowed import reduce_window_sum_p
from didax._src.primitives.jit_call import bind_call, closed_call_p, jit_p
from didax._src.typecheck import broadcast_shapes

# --------------------------------------------------------------------------------------
# Series arithmetic on full coefficient lists [x0, x1, ..., xK]


def _order(series) -> int:
    return next(len(s) for s in series if s is not None)


def _zeros(p):
    return zeros_like_aval(get_aval(p))


def _full(p, s, k):
    """[p, s1, ..., sk], zeros for an absent series."""
    return [p] + (list(s) if s is not None else [_zeros(p)] * k)


def _cauchy(a, b, n, start=0):
    """sum_{i=start}^{n-start} a_i b_(n-i): coefficient n of the product of two series."""
    total = a[start] * b[n - start]
    for i in range(start + 1, n - start + 1):
        total = total + a[i] * b[n - i]
    return total


def _over(v, n):
    return v if n == 1 else v / n


def _mul(a, b):
    return [_cauchy(a, b, n) for n in range(len(a))]


def _derivative(a):
    """The coefficients of d/dt of the series `a` (one fewer)."""
    return [a[m + 1] * (m + 1) if m else a[1] for m in range(len(a) - 1)]


def _div(a, b, c0=None):
    """a / b; `c0`, when given, is the quotient's known constant term."""
    c = [a[0] / b[0] if c0 is None else c0]
    for n in range(1, len(a)):
        c.append((a[n] - _known_part(c, b, n)) / b[0])
    return c


def _known_part(c, b, n):
    """sum_{j=1}^n c_(n-j) b_j: the part of (cb)_n known before c_n."""
    total = c[n - 1] * b[1]
    for j in range(2, n + 1):
        total = total + c[n - j] * b[j]
    return total


def _integrate(z0, q):
    """The series z with z_0 = z0 and z' = q (q known to order K-1)."""
    return [z0] + [_over(q[n - 1], n) for n in range(1, len(q) + 1)]


def _exp_series(z0, u):
    """exp(u) given its value z0: z' = z u'."""
    du = _derivative(u)
    z = [z0]
    for n in range(1, len(u)):
        z.append(_over(_cauchy(z, du, n - 1), n))
    return z


def _power_series(z0, x, p):
    """x^p for a constant p, given its value z0: x z' = p z x'."""
    z = [z0]
    for n in range(1, len(x)):
        total = None
        for j in range(1, n + 1):
            term = x[j] * z[n - j] * (p * j - (n - j))
            total = term if total is None else total + term
        z.append(total / (x[0] * n))
    return z


def _where(which, on_true, on_false):
    """`on_true` where `which`, else `on_false` (operands of lax's broadcasting: one rank, or
    rank 0), each broadcast to the common shape."""
    shape = broadcast_shapes("jet", *(get_aval(v).shape for v in (which, on_true, on_false)))
    return ew.select(*(_broadcast_to(v, shape) for v in (which, on_true, on_false)))


def _broadcast_to(x, shape):
    """`x`, of rank 0 or of `shape`'s rank with size-1 dimensions, broadcast to `shape`."""
    x_shape = get_aval(x).shape
    if x_shape == shape:
        return x
    kept = [i for i, d in enumerate(x_shape) if d == shape[i]]
    if len(kept) < len(x_shape):
        x = reshape(x, [x_shape[i] for i in kept])
    return broadcast_in_dim(x, shape, tuple(kept))


def _trunc(x):
    """x rounded toward zero."""
    return ew.select(x < 0, ew.ceil(x), ew.floor(x))


def _by_integration(prim, slope):
    """z = f(x) with z' = slope(x) x', `slope` mapping x's series to f''s series."""
    def rule(primals, series, **params):
        (x,), (s,) = primals, series
        out = prim.bind(x, **params)
        xs = [x] + s
        q = _mul(slope(xs[:-1]), _derivative(xs))
        return out, _integrate(out, q)[1:]
    return rule


# --------------------------------------------------------------------------------------
# Rule families


def _linear(prim, linear_in=None):
    """Linear in the operands at the positions `linear_in(i)` accepts (all by default),
    jointly; the others (integer indices, boolean predicates: never with a series) are held
    at their primals."""
    def rule(primals, series, **params):
        out = prim.bind(*primals, **params)
        k = _order(series)
        lin = [linear_in is None or linear_in(i) for i in range(len(primals))]
        terms = [prim.bind(*[(_zeros(p) if s is None else s[n]) if is_lin else p
                             for p, s, is_lin in zip(primals, series, lin)], **params)
                 for n in range(k)]
        if prim.multiple_results:
            return out, [[t[r] for t in terms] for r in range(len(out))]
        return out, terms
    return rule


def _zero(prim):
    """The result is locally constant in its operands (comparisons, rounding, bits)."""
    def rule(primals, series, **params):
        out = prim.bind(*primals, **params)
        return out, ([None] * len(out) if prim.multiple_results else None)
    return rule


def _bilinear(prim):
    """Products: the Cauchy product of the operands' series, through `prim` itself."""
    def rule(primals, series, **params):
        (x, y), (sx, sy) = primals, series
        out = prim.bind(x, y, **params)
        k = _order(series)
        xs = [x] + (sx or [None] * k)
        ys = [y] + (sy or [None] * k)
        terms = []
        for n in range(1, k + 1):
            total = None
            for i in range(n + 1):
                if xs[i] is None or ys[n - i] is None:
                    continue
                term = prim.bind(xs[i], ys[n - i], **params)
                total = term if total is None else total + term
            terms.append(total)
        return out, terms
    return rule


def _convert(primals, series, *, new_dtype, weak_type, **params):
    (x,), (s,) = primals, series
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type, **params)
    if dtypes.kind(new_dtype) not in "fc":
        return out, None
    return out, [convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type,
                                             **params) for t in s]


# --------------------------------------------------------------------------------------
# Elementwise nonlinear primitives


def _div_rule(primals, series):
    (x, y), (sx, sy) = primals, series
    out = ew.div_p.bind(x, y)
    k = _order(series)
    if sy is None:
        return out, [t / y for t in sx]
    return out, _div(_full(x, sx, k), _full(y, sy, k), out)[1:]


def _exp(primals, series):
    (x,), (s,) = primals, series
    out = ew.exp_p.bind(x)
    return out, _exp_series(out, [x] + s)[1:]


def _expm1(primals, series):
    (x,), (s,) = primals, series
    out = ew.expm1_p.bind(x)
    return out, _exp_series(out + 1, [x] + s)[1:]


def _log_slope(shift):
    return lambda xs: _div([1.0] + [0.0] * (len(xs) - 1), [xs[0] + shift] + xs[1:])


def _sin_cos(sign, first, second, want_second):
    """sin/cos (sign -1) and sinh/cosh (sign +1): s' = c x', c' = sign s x'."""
    def rule(primals, series):
        (x,), (t,) = primals, series
        s, c = [first.bind(x)], [second.bind(x)]
        dx = _derivative([x] + t)
        for n in range(1, len(t) + 1):
            s_n = _over(_cauchy(c, dx, n - 1), n)
            c_n = _over(_cauchy(s, dx, n - 1), n)
            s.append(s_n)
            c.append(c_n if sign > 0 else -c_n)
        out = c if want_second else s
        return out[0], out[1:]
    return rule


def _self_slope(prim, slope):
    """z = f(x) with z' = slope(z) x', `slope(z, n)` giving coefficient n of slope(z)."""
    def rule(primals, series):
        (x,), (t,) = primals, series
        z = [prim.bind(x)]
        dx = _derivative([x] + t)
        g = [slope(z, 0)]
        for n in range(1, len(t) + 1):
            z.append(_over(_cauchy(g, dx, n - 1), n))
            g.append(slope(z, n))
        return z[0], z[1:]
    return rule


def _tanh_slope(z, n):  # 1 - z^2
    return 1 - z[0] * z[0] if n == 0 else -_cauchy(z, z, n)


def _logistic_slope(z, n):  # z - z^2
    return z[n] - _cauchy(z, z, n)


def _erf_inv(primals, series):
    """z' = (sqrt(pi) / 2) exp(z^2) x', with exp(z^2) grown alongside z."""
    (x,), (t,) = primals, series
    z = [ew.erf_inv_p.bind(x)]
    dx = _derivative([x] + t)
    half_root_pi = math.sqrt(math.pi) / 2
    u = [z[0] * z[0]]
    e = [ew.exp(u[0])]
    for n in range(1, len(t) + 1):
        z.append(_cauchy(e, dx, n - 1) * (half_root_pi / n))
        u.append(_cauchy(z, z, n))
        e.append(_over(_cauchy(e, _derivative(u), n - 1), n))
    return z[0], z[1:]


def _erf_slope(sign):
    def slope(xs):  # sign * 2/sqrt(pi) exp(-x^2)
        neg_sq = [-c for c in _mul(xs, xs)]
        e = _exp_series(ew.exp(neg_sq[0]), neg_sq)
        return [c * (sign * 2 / math.sqrt(math.pi)) for c in e]
    return slope


def _root_slope(shift, p, sign=1, scale=1):
    """scale (sign x^2 + shift)^p, the slope of asin, acos, atan, asinh, acosh and atanh."""
    def slope(xs):
        v = [c * sign for c in _mul(xs, xs)]
        v[0] = v[0] + shift
        z = _power_series(1 / ew.sqrt(v[0]) if p == -0.5 else 1 / v[0], v, p)
        return z if scale == 1 else [c * scale for c in z]
    return slope


def _tan_slope(z, n):  # 1 + z^2
    return 1 + z[0] * z[0] if n == 0 else _cauchy(z, z, n)


def _by_derivatives(prim, derivatives):
    """z = g(x) from g's derivatives at x0 (`derivatives(x0, k)`: the first k), by Taylor's
    formula in the centred series d = x - x0: z_n = sum_m g^(m)(x0) / m! (d^m)_n."""
    def rule(primals, series):
        (x,), (s,) = primals, series
        k = len(s)
        d = [None] + s
        power = d  # d^m, whose coefficients below m are zero (None)
        terms = [None] * (k + 1)
        for m, g_m in enumerate(derivatives(x, k), 1):
            if m > 1:
                power = [None] * m + [_sum(d[i] * power[n - i] for i in range(1, n - m + 2))
                                      for n in range(m, k + 1)]
            c = g_m / math.factorial(m)
            for n in range(m, k + 1):
                terms[n] = power[n] * c if terms[n] is None else terms[n] + power[n] * c
        return prim.bind(x), terms[1:]
    return rule


def _sum(values):
    values = iter(values)
    total = next(values)
    for v in values:
        total = total + v
    return total


def _polygammas(first):
    """The derivatives polygamma(first), polygamma(first + 1), ... of lgamma (first -1,
    digamma) or digamma (first 0)."""
    def derivatives(x, k):
        return [ew.digamma(x) if m == 0 else ew.polygamma(float(m), x)
                for m in range(first + 1, first + k + 1)]
    return derivatives


def _sqrt(primals, series):
    (x,), (s,) = primals, series
    z = [ew.sqrt_p.bind(x)]
    for n in range(1, len(s) + 1):
        known = s[n - 1] - _cauchy(z, z, n, 1) if n > 1 else s[0]
        z.append(known / (z[0] * 2))
    return z[0], z[1:]


def _rsqrt(primals, series):
    (x,), (s,) = primals, series
    out = ew.rsqrt_p.bind(x)
    return out, _power_series(out, [x] + s, -0.5)[1:]


def _integer_pow(primals, series, *, y):
    (x,), (s,) = primals, series
    out = ew.integer_pow_p.bind(x, y=y)
    if y == 0:
        return out, None
    xs = [x] + s
    result, base, m = None, xs, abs(y)
    while m:  # products by repeated squaring: exact at x0 = 0, unlike x^p's recurrence
        if m & 1:
            result = base if result is None else _mul(result, base)
        m >>= 1
        if m:
            base = _mul(base, base)
    if y < 0:
        result = _div([1.0] + [0.0] * len(s), result, out)
    return out, result[1:]


def _square(primals, series):
    (x,), (s,) = primals, series
    xs = [x] + s
    return ew.square_p.bind(x), _mul(xs, xs)[1:]


def _pow(primals, series):
    """x^y = exp(y log x) (NaN for x <= 0, as JAX's)."""
    (x, y), (sx, sy) = primals, series
    out = ew.pow_p.bind(x, y)
    k = _order(series)
    xs, ys = _full(x, sx, k), _full(y, sy, k)
    logs = _integrate(ew.log(x), _mul(_log_slope(0)(xs[:-1]), _derivative(xs)))
    return out, _exp_series(out, _mul(ys, logs))[1:]


def _atan2(primals, series):
    """atan2(x, y)' = (y x' - x y') / (x^2 + y^2)."""
    (x, y), (sx, sy) = primals, series
    out = ew.atan2_p.bind(x, y)
    k = _order(series)
    xs, ys = _full(x, sx, k), _full(y, sy, k)
    num = [a - b for a, b in zip(_mul(ys[:-1], _derivative(xs)),
                                 _mul(xs[:-1], _derivative(ys)))]
    den = [a + b for a, b in zip(_mul(xs[:-1], xs[:-1]), _mul(ys[:-1], ys[:-1]))]
    return out, _integrate(out, _div(num, den))[1:]


def _abs(primals, series):
    (x,), (s,) = primals, series
    nonnegative = x >= 0
    return ew.abs_p.bind(x), [ew.select(nonnegative, t, -t) for t in s]


def _rem(primals, series):
    """rem(x, y) = x - y trunc(x / y), the quotient locally constant."""
    (x, y), (sx, sy) = primals, series
    out = ew.rem_p.bind(x, y)
    k = _order(series)
    quotient = _trunc(x / y)
    xs, ys = _full(x, sx, k), _full(y, sy, k)
    return out, [a - quotient * b for a, b in zip(xs[1:], ys[1:])]


def _extremum(prim, wins):
    """max/min: the series of the operand chosen; at a tie, the mean of both (JAX's)."""
    def rule(primals, series):
        (x, y), (sx, sy) = primals, series
        out = prim.bind(x, y)
        k = _order(series)
        xs, ys = _full(x, sx, k), _full(y, sy, k)
        x_wins, y_wins = wins(x, y), wins(y, x)
        return out, [_where(x_wins, a, _where(y_wins, b, (a + b) / 2))
                     for a, b in zip(xs[1:], ys[1:])]
    return rule


def _clamp(lo, x, hi):
    return ew.min(ew.max(x, lo), hi)


# --------------------------------------------------------------------------------------
# Reductions and scans


def _reduce_chooser(prim):
    """reduce_max/min: the mean of the series at the locations attaining the extremum."""
    def rule(primals, series, *, axes, **params):
        (x,), (s,) = primals, series
        out = prim.bind(x, axes=axes, **params)
        shape = tuple(1 if i in axes else d for i, d in enumerate(get_aval(x).shape))
        at = convert_element_type(ew.eq(x, reshape(out, shape)), get_aval(s[0]).dtype)
        count = reduce_sum(at, axes)
        return out, [reduce_sum(at * t, axes) / count for t in s]
    return rule


def _scan_of(combine):
    """A cumulative primitive as the prefix scan of `combine` (whose tree JAX's rules use,
    so ties split as JAX's do)."""
    def fn(x, *, axis, reverse):
        return associative_scan_flat(lambda a, b: [combine(a[0], b[0])], [x], axis,
                                     reverse)[0]
    return Composite(fn)


def _rebind_jit(prim, args, jaxpr, params):
    return bind_call(args, jaxpr=jaxpr, name=params["name"])


def _rebind_closed_call(prim, args, jaxpr, params):
    return prim.bind(*args, call_jaxpr=jaxpr)


# --------------------------------------------------------------------------------------
# The table (primitive -> rule), by family

jet_rules: dict = {}

# Linear and structural: each coefficient maps through the primitive itself.
for _p in (ew.neg_p, ew.add_p, ew.sub_p, add_any_p, ew.complex_p, ew.real_p, ew.imag_p,
           ew.conj_p, broadcast_in_dim_p, reshape_p, transpose_p, squeeze_p, expand_dims_p,
           rev_p, slice_p, concatenate_p, split_p, pad_p, reduce_sum_p, reduce_window_sum_p,
           cumsum_p, fft_p):
    jet_rules[_p] = _linear(_p)
jet_rules[ew.select_n_p] = _linear(ew.select_n_p, lambda i: i > 0)  # (not the predicate)
jet_rules[dynamic_slice_p] = _linear(dynamic_slice_p, lambda i: i == 0)
jet_rules[dynamic_update_slice_p] = _linear(dynamic_update_slice_p, lambda i: i < 2)
jet_rules[gather_p] = _linear(gather_p, lambda i: i == 0)
jet_rules[scatter_add_p] = _linear(scatter_add_p, lambda i: i != 1)  # (not the indices)
jet_rules[convert_element_type_p] = _convert

# Locally constant: no series. (Integer and boolean values never carry a series, so the
# bitwise primitives need no entry.)
for _p in (ew.sign_p, ew.floor_p, ew.ceil_p, ew.round_p, ew.is_finite_p, ew.stop_gradient_p,
           ew.eq_p, ew.ne_p, ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p, bitcast_convert_type_p):
    jet_rules[_p] = _zero(_p)

# Products.
for _p in (ew.mul_p, dot_general_p, conv_general_dilated_p):
    jet_rules[_p] = _bilinear(_p)
jet_rules[ew.div_p] = _div_rule

# Exponentials, logarithms and powers.
jet_rules[ew.exp_p] = _exp
jet_rules[ew.expm1_p] = _expm1
jet_rules[ew.log_p] = _by_integration(ew.log_p, _log_slope(0))
jet_rules[ew.log1p_p] = _by_integration(ew.log1p_p, _log_slope(1))
jet_rules[ew.pow_p] = _pow
jet_rules[ew.integer_pow_p] = _integer_pow
jet_rules[ew.square_p] = _square
jet_rules[ew.sqrt_p] = _sqrt
jet_rules[ew.rsqrt_p] = _rsqrt

# Trigonometric and hyperbolic functions.
jet_rules[ew.sin_p] = _sin_cos(-1, ew.sin_p, ew.cos_p, want_second=False)
jet_rules[ew.cos_p] = _sin_cos(-1, ew.sin_p, ew.cos_p, want_second=True)
jet_rules[ew.sinh_p] = _sin_cos(1, ew.sinh_p, ew.cosh_p, want_second=False)
jet_rules[ew.cosh_p] = _sin_cos(1, ew.sinh_p, ew.cosh_p, want_second=True)
jet_rules[ew.tanh_p] = _self_slope(ew.tanh_p, _tanh_slope)
jet_rules[ew.logistic_p] = _self_slope(ew.logistic_p, _logistic_slope)
jet_rules[ew.asinh_p] = _by_integration(ew.asinh_p, _root_slope(1.0, -0.5))
jet_rules[ew.acosh_p] = _by_integration(ew.acosh_p, _root_slope(-1.0, -0.5))
jet_rules[ew.atanh_p] = _by_integration(ew.atanh_p, _root_slope(1.0, -1, sign=-1))
jet_rules[ew.atan2_p] = _atan2
# (beyond JAX's jet, which has no rules for these five)
jet_rules[ew.tan_p] = _self_slope(ew.tan_p, _tan_slope)
jet_rules[ew.asin_p] = _by_integration(ew.asin_p, _root_slope(1.0, -0.5, sign=-1))
jet_rules[ew.acos_p] = _by_integration(ew.acos_p, _root_slope(1.0, -0.5, sign=-1, scale=-1))
jet_rules[ew.atan_p] = _by_integration(ew.atan_p, _root_slope(1.0, -1))

# Error functions.
jet_rules[ew.erf_p] = _by_integration(ew.erf_p, _erf_slope(1))
jet_rules[ew.erfc_p] = _by_integration(ew.erfc_p, _erf_slope(-1))
jet_rules[ew.erf_inv_p] = _erf_inv

# Gamma functions (beyond JAX's jet, which has no rules for them).
jet_rules[ew.lgamma_p] = _by_derivatives(ew.lgamma_p, _polygammas(-1))
jet_rules[ew.digamma_p] = _by_derivatives(ew.digamma_p, _polygammas(0))

# Piecewise: the series of the piece the primal lies in.
jet_rules[ew.abs_p] = _abs
jet_rules[ew.rem_p] = _rem
jet_rules[ew.max_p] = _extremum(ew.max_p, lambda a, b: a > b)
jet_rules[ew.min_p] = _extremum(ew.min_p, lambda a, b: a < b)
jet_rules[ew.clamp_p] = Composite(_clamp)

# Reductions and cumulative reductions.
jet_rules[reduce_max_p] = _reduce_chooser(reduce_max_p)
jet_rules[reduce_min_p] = _reduce_chooser(reduce_min_p)
jet_rules[cumprod_p] = _scan_of(ew.mul)
jet_rules[cummax_p] = _scan_of(ew.max)
jet_rules[cummin_p] = _scan_of(ew.min)

# Calls: the jaxpr's jet, applied.
jet_rules[jit_p] = Call("jaxpr", _rebind_jit)
jet_rules[closed_call_p] = Call("call_jaxpr", _rebind_closed_call)

del _p
