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
from didax._src.lax import lax as _lax  # noqa: F401  (every primitive is registered)
from didax._src.ir import ClosedJaxpr


def _fresh(rule):
    """Marks a rule whose outputs are always new buffers."""
    rule.fresh = _always
    return rule


def _always(eqn) -> bool:
    return True


def _fresh_when(predicate):
    """Marks a rule whose outputs are new buffers for the equations `predicate` accepts (the
    others fall back to the impl, whose results may alias its operands)."""
    def mark(rule):
        rule.fresh = predicate
        return rule
    return mark


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
    @_fresh
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


def _ufunc_for_inexact(prim_name, ufunc):
    """A primitive whose impl is `ufunc` on floating-point and complex operands."""
    plain = _ufunc_rule(ufunc)

    @_rule(prim_name)
    @_fresh_when(lambda eqn: eqn.invars[0].aval.dtype.kind in "fc")
    def rule(fb, k, eqn, outs):
        if eqn.invars[0].aval.dtype.kind not in "fc":
            from didax._src.jit.compiler import emit_impl_call

            return emit_impl_call(fb, k, eqn, outs)
        plain(fb, k, eqn, outs)

    return rule


def install_ufunc_rules():
    for prim in list(core.all_primitives.values()):
        if isinstance(prim.impl, np.ufunc) and "codegen" not in prim.rules:
            prim.def_rule("codegen", _ufunc_rule(prim.impl))


def _rule(name):
    def register(fn):
        core.all_primitives[name].def_rule("codegen", fn)
        return fn
    return register


@_rule("logistic")
@_fresh
def _logistic(fb, k, eqn, outs):
    """The impl, whose result is always a new buffer (see lax/elementwise.py)."""
    from didax._src.jit.compiler import emit_impl_call

    emit_impl_call(fb, k, eqn, outs)


_ufunc_for_inexact("div", np.true_divide)
_ufunc_for_inexact("rem", np.fmod)
_ufunc_for_inexact("pow", np.power)


# --------------------------------------------------------------------------------------
# Rules for common structural and arithmetic primitives


@_rule("integer_pow")
@_fresh_when(lambda eqn: eqn.params["y"] == 2)
def _integer_pow(fb, k, eqn, outs):
    y = eqn.params["y"]
    x = eqn.invars[0]
    if y != 2:
        from didax._src.jit.compiler import emit_impl_call

        return emit_impl_call(fb, k, eqn, outs)
    buf = fb.out_buffer(k, eqn, eqn.outvars[0].aval)
    out = f", out={buf}" if buf else ""
    if x.aval.shape == ():
        fb.line(f"{outs[0]} = {fb.name(x)} * {fb.name(x)}")
    else:
        fb.line(f"{outs[0]} = np.multiply({fb.name(x)}, {fb.name(x)}{out})")



def _dot_expr(fb, eqn):
    """`a @ b` forms of a 2-D (or matrix-vector) dot_general, or None."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    pet = eqn.params.get("preferred_element_type")
    if lhs.aval.dtype != rhs.aval.dtype or (pet is not None and pet != lhs.aval.dtype):
        return None
    if lb or rb:
        return None
    a, b = fb.name(lhs), fb.name(rhs)
    lc, rc = tuple(lc), tuple(rc)
    if lhs.aval.ndim == 2 and rhs.aval.ndim == 2:
        forms = {((1,), (0,)): (a, b), ((0,), (0,)): (f"{a}.T", b),
                 ((1,), (1,)): (a, f"{b}.T"), ((0,), (1,)): (f"{a}.T", f"{b}.T")}
        return forms.get((lc, rc))
    if rc == (0,) and lc == (lhs.aval.ndim - 1,) and rhs.aval.ndim <= 2 and lhs.aval.ndim >= 1:
        return (a, b)
    return None


def _outer_product(fb, eqn):
    """A dot_general without contraction is a broadcast product: batch, lhs free, rhs free."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    if lc or rc or lhs.aval.dtype != rhs.aval.dtype:
        return None
    pet = eqn.params.get("preferred_element_type")
    if pet is not None and pet != lhs.aval.dtype:
        return None
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

    return (arrange(lhs, lb, lf, 0, len(rf)), arrange(rhs, rb, rf, len(lf), 0))


def _dot_general_fresh(eqn) -> bool:
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


@_rule("dot_general")
@_fresh_when(_dot_general_fresh)
def _dot_general(fb, k, eqn, outs):
    ab = _dot_expr(fb, eqn)
    aval = eqn.outvars[0].aval
    outer = _outer_product(fb, eqn) if ab is None else None
    if outer is not None:
        buf = fb.out_buffer(k, eqn, aval, allow_inputs=False)
        out = f", out={buf}" if buf else ""
        fb.line(f"{outs[0]} = np.multiply({outer[0]}, {outer[1]}{out})")
        return
    if ab is None or aval.shape == ():
        from didax._src.jit.compiler import emit_impl_call

        return emit_impl_call(fb, k, eqn, outs)
    buf = fb.out_buffer(k, eqn, aval, allow_inputs=False)
    if buf:
        fb.line(f"{outs[0]} = np.matmul({ab[0]}, {ab[1]}, out={buf})")
    else:
        fb.line(f"{outs[0]} = {ab[0]} @ {ab[1]}")


def _axes(axes) -> str:
    axes = tuple(int(a) for a in axes)
    return f"({axes[0]},)" if len(axes) == 1 else str(axes)


def _reduction(ufunc_name, prim_name, empty_ok):
    def fallback(eqn):
        x = eqn.invars[0]
        return (x.aval.dtype.kind not in "fc" or (not empty_ok and x.aval.size == 0)
                or eqn.outvars[0].aval.shape == () or not eqn.params["axes"])

    @_rule(prim_name)
    @_fresh_when(lambda eqn: not fallback(eqn))
    def rule(fb, k, eqn, outs):
        x = eqn.invars[0]
        axes = eqn.params["axes"]
        if fallback(eqn):
            from didax._src.jit.compiler import emit_impl_call

            return emit_impl_call(fb, k, eqn, outs)
        fb.line(f"{outs[0]} = np.{ufunc_name}.reduce({fb.name(x)}, axis={_axes(axes)})")
    return rule


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


@_rule("reshape")
def _reshape(fb, k, eqn, outs):
    if eqn.params.get("dimensions") is not None:
        from didax._src.jit.compiler import emit_impl_call

        return emit_impl_call(fb, k, eqn, outs)
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.reshape({tuple(eqn.params['new_sizes'])})")


@_rule("squeeze")
def _squeeze(fb, k, eqn, outs):
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.reshape({eqn.outvars[0].aval.shape})")


@_rule("expand_dims")
def _expand_dims(fb, k, eqn, outs):
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.reshape({eqn.outvars[0].aval.shape})")


@_rule("transpose")
def _transpose(fb, k, eqn, outs):
    perm = tuple(int(p) for p in eqn.params["permutation"])
    fb.line(f"{outs[0]} = {fb.typed(eqn.invars[0])}.transpose({perm})")


@_rule("convert_element_type")
def _convert(fb, k, eqn, outs):
    x = eqn.invars[0]
    src, dst = x.aval.dtype, np.dtype(eqn.params["new_dtype"])
    simple = (src.kind in "biuf" and dst.kind in "fc") or (src.kind in "biu" and dst.kind in "iu")
    if not simple:
        from didax._src.jit.compiler import emit_impl_call

        return emit_impl_call(fb, k, eqn, outs)
    dtype = fb.module.global_name(dst, dst.name)
    fb.line(f"{outs[0]} = {fb.typed(x)}.astype({dtype})")


@_rule("select_n")
@_fresh_when(lambda eqn: len(eqn.invars) == 3 and eqn.invars[0].aval.dtype == np.bool_)
def _select_n(fb, k, eqn, outs):
    which, *cases = eqn.invars
    if len(cases) != 2 or which.aval.dtype != np.bool_:
        from didax._src.jit.compiler import emit_impl_call

        return emit_impl_call(fb, k, eqn, outs)
    fb.line(f"{outs[0]} = np.where({fb.name(which)}, {fb.typed(cases[1])}, "
            f"{fb.typed(cases[0])})")


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


def _slice_text(parts) -> str:
    return "[" + ", ".join(parts) + "]"


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
    strides = p.get("strides") or (1,) * x.aval.ndim
    parts = [_range_text(lo, hi, n, st) for lo, hi, n, st in
             zip(p["start_indices"], p["limit_indices"], x.aval.shape, strides)]
    while parts and parts[-1] == ":":
        parts.pop()
    if x.aval.ndim == 0:
        fb.line(f"{outs[0]} = {fb.typed(x)}")
        return
    fb.line(f"{outs[0]} = {fb.typed(x)}{_slice_text(parts or [':'])}")


def pad_region(eqn):
    """For a zero pad without interior or negative padding: the slice text of where its
    operand lands; otherwise None."""
    if eqn.primitive.name != "pad" or not _pad_simple(eqn):
        return None
    value = eqn.invars[1]
    if type(value).__name__ != "Literal" or value.val != 0:
        return None
    x = eqn.invars[0]
    parts = [_range_text(lo, lo + n, n + lo + hi)
             for (lo, hi, _), n in zip(eqn.params["padding_config"], x.aval.shape)]
    while parts and parts[-1] == ":":
        parts.pop()
    return ", ".join(parts) or ":"


def _pad_simple(eqn) -> bool:
    return (eqn.invars[0].aval.shape != ()
            and all(i == 0 and lo >= 0 and hi >= 0 for lo, hi, i in eqn.params["padding_config"]))


@_rule("pad")
@_fresh_when(_pad_simple)
def _pad(fb, k, eqn, outs):
    x, value = eqn.invars
    config = eqn.params["padding_config"]
    if not _pad_simple(eqn):
        from didax._src.jit.compiler import emit_impl_call

        return emit_impl_call(fb, k, eqn, outs)
    aval = eqn.outvars[0].aval
    dtype = fb.module.global_name(aval.dtype, aval.dtype.name)
    if type(value).__name__ == "Literal" and value.val == 0:
        fb.line(f"{outs[0]} = np.zeros({aval.shape}, {dtype})")
    else:
        fb.line(f"{outs[0]} = np.full({aval.shape}, {fb.typed(value)}, {dtype})")
    parts = [_range_text(lo, lo + n, n + lo + hi) for (lo, hi, _), n in zip(config, x.aval.shape)]
    fb.line(f"{outs[0]}{_slice_text(parts)} = {fb.name(x)}")


@_rule("concatenate")
@_fresh
def _concatenate(fb, k, eqn, outs):
    args = ", ".join(fb.typed(a) for a in eqn.invars)
    fb.line(f"{outs[0]} = np.concatenate(({args},), axis={int(eqn.params['dimension'])})")
