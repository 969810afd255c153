"""`codegen` rules: the Python statement each primitive compiles to.

A rule `rule(fb, k, eqn, outs)` writes the statement(s) for equation `k` through the
function builder `fb`, assigning the names in `outs`. A rule marked `fresh` promises its
outputs are new buffers that alias nothing else (so later statements may write into them
once they are dead); all others are treated as possible views of their inputs.
Each rule computes exactly what the primitive's impl computes (the tests compare jit with
eager evaluation for every primitive); anything without a rule calls the impl.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.ir import ClosedJaxpr, Literal
from didax._src.jit.compiler import emit_impl_call
from didax._src.lax import lax as _lax  # noqa: F401  (every primitive is registered)


def _always(eqn) -> bool:
    return True


def _rule(name, *, when=None, fresh=False):
    """Registers `fn` as the codegen rule of primitive `name`. Equations `when` rejects call
    the impl instead. `fresh`: the rule's own statements make new buffers (an impl's results
    may alias its operands, so a fallback never is)."""
    def register(fn):
        if when is None:
            rule = fn
        else:
            def rule(fb, k, eqn, outs):
                if when(eqn):
                    return fn(fb, k, eqn, outs)
                return emit_impl_call(fb, k, eqn, outs)
        if fresh:
            rule.fresh = when or _always
        core.all_primitives[name].def_rule("codegen", rule)
        return fn
    return register


def _np_name(fb, fn) -> str:
    name = getattr(fn, "__name__", None)
    if name and getattr(np, name, None) is fn:
        return f"np.{name}"
    return fb.module.global_name(fn, name or "fn")


# --------------------------------------------------------------------------------------
# Elementwise primitives whose impl is a NumPy ufunc


# On 0-d values (NumPy scalars) Python's operators cost a tenth of a ufunc call and
# compute the same thing in the same dtype.
_OPERATORS = {np.add: "{} + {}", np.subtract: "{} - {}", np.multiply: "{} * {}",
              np.negative: "-{}", np.less: "{} < {}", np.less_equal: "{} <= {}",
              np.greater: "{} > {}", np.greater_equal: "{} >= {}", np.equal: "{} == {}",
              np.not_equal: "{} != {}"}
_FLOAT_OPERATORS = {np.true_divide: "{} / {}"}


def _ufunc_rule(ufunc):
    def rule(fb, k, eqn, outs):
        out_aval = eqn.outvars[0].aval
        if out_aval.shape == () and all(a.aval.shape == () for a in eqn.invars):
            form = _OPERATORS.get(ufunc) or (eqn.invars[0].aval.dtype.kind in "fc"
                                             and _FLOAT_OPERATORS.get(ufunc))
            if form:
                fb.line(f"{outs[0]} = " + form.format(*(fb.name(a) for a in eqn.invars)))
                return
        args = ", ".join(fb.name(a) for a in eqn.invars)
        buf = fb.out_buffer(k, eqn, eqn.outvars[0].aval)
        out = f", out={buf}" if buf else ""
        fb.line(f"{outs[0]} = {_np_name(fb, ufunc)}({args}{out})")
    return rule


def install_ufunc_rules():
    for prim in list(core.all_primitives.values()):
        if isinstance(prim.impl, np.ufunc) and "codegen" not in prim.rules:
            _rule(prim.name, fresh=True)(_ufunc_rule(prim.impl))


def _inexact(eqn) -> bool:
    return eqn.invars[0].aval.dtype.kind in "fc"


# Primitives whose impl is this ufunc on floating-point and complex operands.
_rule("div", when=_inexact, fresh=True)(_ufunc_rule(np.true_divide))
_rule("rem", when=_inexact, fresh=True)(_ufunc_rule(np.fmod))
_rule("pow", when=_inexact, fresh=True)(_ufunc_rule(np.power))
# The impl, whose result is always a new buffer (see lax/elementwise.py).
_rule("logistic", fresh=True)(emit_impl_call)


# --------------------------------------------------------------------------------------
# Rules for common structural and arithmetic primitives


@_rule("integer_pow", when=lambda eqn: eqn.params["y"] == 2, fresh=True)
def _square(fb, k, eqn, outs):
    x = fb.name(eqn.invars[0])
    if eqn.invars[0].aval.shape == ():
        fb.line(f"{outs[0]} = {x} * {x}")
        return
    buf = fb.out_buffer(k, eqn, eqn.outvars[0].aval)
    out = f", out={buf}" if buf else ""
    fb.line(f"{outs[0]} = np.multiply({x}, {x}{out})")


def _dot_as_product(eqn) -> bool:
    """dot_generals written as `a @ b` (2-D or matrix-vector, either side transposed) or, without
    contraction, as a broadcast product; in their operands' dtype, with a non-0-d result."""
    if eqn.outvars[0].aval.shape == ():
        return False
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    pet = eqn.params.get("preferred_element_type")
    if lhs.aval.dtype != rhs.aval.dtype or (pet is not None and pet != lhs.aval.dtype):
        return False
    if not lc and not rc:
        return True  # a broadcast product
    if lb or rb:
        return False
    lc, rc = tuple(lc), tuple(rc)
    if lhs.aval.ndim == 2 and rhs.aval.ndim == 2:
        return len(lc) == 1 and len(rc) == 1
    return rc == (0,) and lc == (lhs.aval.ndim - 1,) and rhs.aval.ndim <= 2


def _matmul_operands(fb, eqn):
    """`a`, `b` of `a @ b` for a dot_general `_dot_as_product` accepts, with contraction."""
    (lc, rc), _ = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    a, b = fb.name(lhs), fb.name(rhs)
    if lhs.aval.ndim == 2 and rhs.aval.ndim == 2:
        return (a if tuple(lc) == (1,) else f"{a}.T", b if tuple(rc) == (0,) else f"{b}.T")
    return a, b


def _broadcast_operands(fb, eqn):
    """The operands of a dot_general without contraction arranged for a broadcast product:
    batch dimensions, then lhs free, then rhs free."""
    _, (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    lf = [d for d in range(lhs.aval.ndim) if d not in lb]
    rf = [d for d in range(rhs.aval.ndim) if d not in rb]

    def arrange(x, batch, free, before, after):
        name = fb.typed(x)
        perm = tuple(batch) + tuple(free)
        if perm != tuple(range(x.aval.ndim)):
            name = f"{name}.transpose({perm})"
        shape = ([x.aval.shape[d] for d in batch] + [1] * before
                 + [x.aval.shape[d] for d in free] + [1] * after)
        if tuple(shape) != tuple(x.aval.shape[d] for d in perm):
            name = f"{name}.reshape({tuple(shape)})"
        return name

    return arrange(lhs, lb, lf, 0, len(rf)), arrange(rhs, rb, rf, len(lf), 0)


@_rule("dot_general", when=_dot_as_product, fresh=True)
def _dot_general(fb, k, eqn, outs):
    buf = fb.out_buffer(k, eqn, eqn.outvars[0].aval, allow_inputs=False)
    (lc, rc), _ = eqn.params["dimension_numbers"]
    if not lc and not rc:
        a, b = _broadcast_operands(fb, eqn)
        fb.line(f"{outs[0]} = np.multiply({a}, {b}{f', out={buf}' if buf else ''})")
        return
    a, b = _matmul_operands(fb, eqn)
    if buf:
        fb.line(f"{outs[0]} = np.matmul({a}, {b}, out={buf})")
    else:
        fb.line(f"{outs[0]} = {a} @ {b}")


def _axes(axes) -> str:
    axes = tuple(int(a) for a in axes)
    return f"({axes[0]},)" if len(axes) == 1 else str(axes)


def _reduction(ufunc_name, prim_name, empty_ok):
    def applies(eqn):
        x = eqn.invars[0]
        return (x.aval.dtype.kind in "fc" and (empty_ok or x.aval.size != 0)
                and eqn.outvars[0].aval.shape != () and bool(eqn.params["axes"]))

    @_rule(prim_name, when=applies, fresh=True)
    def rule(fb, k, eqn, outs):
        fb.line(f"{outs[0]} = np.{ufunc_name}.reduce({fb.name(eqn.invars[0])}, "
                f"axis={_axes(eqn.params['axes'])})")


_reduction("add", "reduce_sum", True)
_reduction("maximum", "reduce_max", False)
_reduction("minimum", "reduce_min", False)


@_rule("broadcast_in_dim")
def _broadcast_in_dim(fb, k, eqn, outs):
    x = eqn.invars[0]
    shape = tuple(eqn.params["shape"])
    expanded = [1] * len(shape)
    for d, size in zip(eqn.params["broadcast_dimensions"], x.aval.shape):
        expanded[d] = size
    src = fb.typed(x)
    if tuple(expanded) != x.aval.shape and x.aval.shape != ():
        src = f"{src}.reshape({tuple(expanded)})"
        if tuple(expanded) == shape:  # only unit dimensions were added
            fb.line(f"{outs[0]} = {src}")
            return
    fb.line(f"{outs[0]} = np.broadcast_to({src}, {shape})")


@_rule("reshape", when=lambda eqn: eqn.params.get("dimensions") is None)
def _reshape(fb, k, eqn, outs):
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.reshape({tuple(eqn.params['new_sizes'])})")


@_rule("squeeze")
@_rule("expand_dims")
def _to_out_shape(fb, k, eqn, outs):
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.reshape({eqn.outvars[0].aval.shape})")


@_rule("transpose")
def _transpose(fb, k, eqn, outs):
    perm = tuple(int(p) for p in eqn.params["permutation"])
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.transpose({perm})")


def _plain_conversion(eqn) -> bool:
    """Conversions `astype` does as the impl does (no complex parts dropped, no float to
    integer saturation, no test against zero for bool)."""
    src, dst = eqn.invars[0].aval.dtype, np.dtype(eqn.params["new_dtype"])
    return (src.kind in "biuf" and dst.kind in "fc") or (src.kind in "biu" and dst.kind in "iu")


@_rule("convert_element_type", when=_plain_conversion)
def _convert(fb, k, eqn, outs):
    dst = np.dtype(eqn.params["new_dtype"])
    dtype = fb.module.global_name(dst, dst.name)
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.astype({dtype})")


@_rule("select_n", fresh=True,
       when=lambda eqn: len(eqn.invars) == 3 and eqn.invars[0].aval.dtype == np.bool_)
def _select_n(fb, k, eqn, outs):
    which, case0, case1 = eqn.invars
    fb.line(f"{outs[0]} = np.where({fb.name(which)}, {fb.typed(case1)}, {fb.typed(case0)})")


# --------------------------------------------------------------------------------------
# Control flow: loops and branches over functions generated for the bodies


def _tuple(names) -> str:
    return ", ".join(names) + ("," if len(names) == 1 else "")


def _as_closed(j):
    return j if isinstance(j, ClosedJaxpr) else ClosedJaxpr(j, [])


@_rule("scan")
def _scan(fb, k, eqn, outs):
    p = eqn.params
    body = fb.call_sub(_as_closed(p["jaxpr"]), f"{fb.fname}_scan_body")
    nc, nk = p["num_consts"], p["num_carry"]
    length, reverse = p["length"], p["reverse"]
    args = [fb.typed(a) for a in eqn.invars]
    consts, init, xs = args[:nc], args[nc:nc + nk], args[nc + nk:]
    carry, ys = outs[:nk], outs[nk:]
    if carry:
        fb.line(f"{_tuple(carry)} = {_tuple(init)}")
    y_vars = eqn.outvars[nk:]
    for v, n in zip(y_vars, ys):
        dtype = fb.module.global_name(v.aval.dtype, v.aval.dtype.name)
        fb.line(f"{n} = np.empty({v.aval.shape}, {dtype})")
    steps = f"range({length - 1}, -1, -1)" if reverse else f"range({length})"
    fb.line(f"for i in {steps}:")
    fb.indent += 1
    y_tmp = [f"{n}_i" for n in ys]
    call = f"{body}({', '.join(consts + carry + [f'{x}[i]' for x in xs])})"
    fb.line(f"{_tuple(carry + y_tmp)} = {call}" if carry or y_tmp else call)
    for n, t in zip(ys, y_tmp):
        fb.line(f"{n}[i] = {t}")
    fb.indent -= 1


@_rule("while")
def _while(fb, k, eqn, outs):
    p = eqn.params
    cond = fb.call_sub(_as_closed(p["cond_jaxpr"]), f"{fb.fname}_while_cond")
    body = fb.call_sub(_as_closed(p["body_jaxpr"]), f"{fb.fname}_while_body")
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    args = [fb.typed(a) for a in eqn.invars]
    cc, bc, init = args[:nc], args[nc:nc + nb], args[nc + nb:]
    fb.line(f"{_tuple(outs)} = {_tuple(init)}")
    fb.line(f"while {cond}({', '.join(cc + outs)})[0]:")
    fb.indent += 1
    fb.line(f"{_tuple(outs)} = {body}({', '.join(bc + outs)})")
    fb.indent -= 1


@_rule("cond")
def _cond(fb, k, eqn, outs):
    branches = eqn.params["branches"]
    index, *ops = [fb.typed(a) for a in eqn.invars]
    names = [fb.call_sub(_as_closed(b), f"{fb.fname}_branch{i}") for i, b in enumerate(branches)]
    call = f"({', '.join(ops)})"
    lhs = _tuple(outs)
    if len(names) == 1:
        fb.line(f"{lhs} = {names[0]}{call}")
        return
    for i, n in enumerate(names):
        if i == 0:
            fb.line(f"if {index} <= 0:")
        elif i == len(names) - 1:
            fb.line("else:")
        else:
            fb.line(f"elif {index} == {i}:")
        fb.indent += 1
        fb.line(f"{lhs} = {n}{call}")
        fb.indent -= 1


def _index_text(parts) -> str:
    """`parts` (one range per dimension) as an index, trailing full ranges left out."""
    parts = list(parts)
    while parts and parts[-1] == ":":
        parts.pop()
    return ", ".join(parts) or ":"


def _range_text(lo, hi, size, step=1) -> str:
    if step == 1:
        if lo == 0 and hi == size:
            return ":"
        return f"{lo if lo else ''}:{hi if hi != size else ''}"
    return f"{lo}:{hi}:{step}"


@_rule("slice")
def _slice(fb, k, eqn, outs):
    p = eqn.params
    x = eqn.invars[0]
    if x.aval.ndim == 0:
        fb.line(f"{outs[0]} = {fb.typed(x)}")
        return
    strides = p.get("strides") or (1,) * x.aval.ndim
    parts = [_range_text(lo, hi, n, st) for lo, hi, n, st in
             zip(p["start_indices"], p["limit_indices"], x.aval.shape, strides)]
    fb.line(f"{outs[0]} = {fb.typed(x)}[{_index_text(parts)}]")


def _pad_simple(eqn) -> bool:
    return (eqn.invars[0].aval.shape != ()
            and all(i == 0 and lo >= 0 and hi >= 0 for lo, hi, i in eqn.params["padding_config"]))


def _pad_index(eqn) -> str:
    """Where the operand of a `_pad_simple` pad lands in its result."""
    config, shape = eqn.params["padding_config"], eqn.invars[0].aval.shape
    return _index_text(_range_text(lo, lo + n, n + lo + hi) for (lo, hi, _), n in
                       zip(config, shape))


def _zero_padding(eqn) -> bool:
    value = eqn.invars[1]
    return type(value) is Literal and value.val == 0


def pad_region(eqn):
    """For a zero pad without interior or negative padding: the index of where its operand
    lands; otherwise None."""
    if eqn.primitive.name != "pad" or not _pad_simple(eqn) or not _zero_padding(eqn):
        return None
    return _pad_index(eqn)


@_rule("pad", when=_pad_simple, fresh=True)
def _pad(fb, k, eqn, outs):
    x, value = eqn.invars
    aval = eqn.outvars[0].aval
    dtype = fb.module.global_name(aval.dtype, aval.dtype.name)
    if _zero_padding(eqn):
        fb.line(f"{outs[0]} = np.zeros({aval.shape}, {dtype})")
    else:
        fb.line(f"{outs[0]} = np.full({aval.shape}, {fb.typed(value)}, {dtype})")
    fb.line(f"{outs[0]}[{_pad_index(eqn)}] = {fb.name(x)}")


@_rule("concatenate", fresh=True)
def _concatenate(fb, k, eqn, outs):
    args = ", ".join(fb.typed(a) for a in eqn.invars)
    fb.line(f"{outs[0]} = np.concatenate(({args},), axis={int(eqn.params['dimension'])})")
