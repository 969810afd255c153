"""C source for an optimised jaxpr: fused loops where primitives have native rules,
calls back into the NumPy tier for every other run of equations.

First products.py's pass gives the products with nothing to sum their elementwise form,
moved to their first reader, and recompute.py's computes cheap results again in the later
loops that read them. The equations are then cut, in order, into segments: a
native segment is a maximal run of equations with native rules and one result shape,
computed by one loop nest (operands broadcast as lax broadcasts: size-1 dimensions, lower
ranks); a Python segment is a maximal run of the others, compiled by the NumPy-tier
compiler into a function the C code calls with NumPy arrays. Values that cross segments
are NumPy arrays (a native result is a new array, an intermediate's array reused, or that
of a dead operand it is written over: see in_place); values inside a native segment are C
locals.

Every result is the NumPy tier's, bit for bit (see loops.py and rules.py): products call
NumPy's matmul loop on the operand layouts the NumPy tier gives it (lax.dot.gemm_plan),
so the same BLAS routine computes them.

The source depends only on the jaxpr's structure (constants, the Python segments and
NumPy's loops are handed to the module when it is instantiated), and every name in it is
one made here.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from didax._src import core
from didax._src.compiler.native import parts as function_parts
from didax._src.compiler.native import product_kernel, runtime
from didax._src.compiler.native.loops import (
    FREE_GIL_FROM,
    LEAF_SUMS,
    Body,
    Reduction,
    contiguous,
    loop_nest,
    over,
    pairwise_dims,
)
from didax._src.compiler.native.matrix_views import matrix_views
from didax._src.compiler.native.products import elementwise_products
from didax._src.compiler.native.recompute import recomputed_in_readers
from didax._src.compiler.native.rules import (
    C_TYPENUMS,
    C_TYPES,
    FLOATS,
    IN_ORDER,
    CExpr,
    ViewAt,
    c_constant,
)
from didax._src.compiler.native.toolchain import UNIT_MARK, module_prelude
from didax._src.compiler.numpy_tier import compile_jaxpr
from didax._src.compiler.passes import optimize
from didax._src.ir import ClosedJaxpr, DropVar, Jaxpr, Literal, derived


class Plan(NamedTuple):
    source: str              # C source of the module (its init function: PyInit_<name>)
    python_segments: tuple   # the NumPy-tier functions the C code calls
    consts: tuple            # NumPy values the C code reads (constants, literal results)
    loops: tuple             # NumPy's loops it calls: (ufunc, NumPy type numbers)
    native_equations: int    # how many equations run natively
    python_equations: int    # how many run on the NumPy tier, inside the native function
    products: tuple = ()     # (index in loops, key): products the native tier's own loop
    #                          may compute instead (product_kernel.choose_loops)


def native_kind(eqn):
    """How `eqn` runs natively ("elementwise", "view", "reduce", "gemm"), or None: a native
    rule that accepts it, dtypes C handles, and (elementwise) operands that broadcast to
    its one result."""
    rule = eqn.primitive.rules.get("native")
    if rule is None:
        return None
    if rule.kind == "block":
        return "block" if rule.when(eqn) else None
    if eqn.primitive.multiple_results or len(eqn.outvars) != 1:
        return None
    out = eqn.outvars[0].aval
    for a in (*eqn.invars, eqn.outvars[0]):
        if a.aval.dtype not in C_TYPES:
            return None
    if rule.kind == "elementwise":
        for a in eqn.invars:
            s = a.aval.shape
            if len(s) > len(out.shape) or any(d not in (1, o) for d, o in
                                              zip(s[::-1], out.shape[::-1])):
                return None
    elif any(type(a) is Literal for a in eqn.invars):
        # (a view of a scalar constant, such as a broadcast one, is that constant everywhere:
        # a loop computes it as an elementwise value; see loop_segment)
        lit = eqn.invars[0]
        return ("elementwise" if rule.kind == "view" and len(eqn.invars) == 1
                and lit.aval.shape == () else None)
    return rule.kind if rule.when(eqn) else None


def native_ok(eqn) -> bool:
    return native_kind(eqn) is not None


def plan(closed: ClosedJaxpr) -> Plan | None:
    """The module for `closed`, or None if no equation runs natively. Its name is the
    macro DIDAX_MODULE, defined when it is built (see toolchain.build)."""
    return _Emitter(_Module(), recomputed_in_readers(elementwise_products(closed),
                                                     native_kind)).emit()


def native_counts(closed: ClosedJaxpr) -> tuple:
    """(equations that would run natively, equations on the NumPy tier) in `closed`, control
    flow counted through its bodies: what a control-flow rule weighs before compiling
    (kept per jaxpr: nested loops would otherwise count inner bodies once per level)."""
    return derived(closed, "native counts", lambda: _count(closed))


def _count(closed: ClosedJaxpr) -> tuple:
    native = python = 0
    for eqn in closed.jaxpr.eqns:
        kind = native_kind(eqn)
        if kind == "block":
            n, p = eqn.primitive.rules["native"].counts(eqn)
            native, python = native + n, python + p
        elif kind is None:
            python += 1
        else:
            native += 1
    return native, python


class _Module:
    """What the functions of one C module share: constants, NumPy-tier segments, NumPy's
    loops, shape arrays, and the functions compiled for control-flow bodies."""

    def __init__(self):
        self.consts: list = []
        self.py_segments: list = []
        self.loops: list = []       # (ufunc, type numbers) of the loops called
        self.products: dict = {}    # index in loops -> key of a product_kernel.eligible one
        self.statics: list = []     # file-scope shape arrays
        self.shape_names: dict = {}
        self.helpers: list = []     # C functions of bodies, each before its first caller
        self.counts = [0, 0]        # native, NumPy-tier equations in all functions
        self.n_bodies = 0
        self.lifted: dict = {}      # a lifted block's text -> its function's name
        self.lifted_functions: list = []

    def shared(self, text: str, n_slots: int) -> str:
        """The name of the module's function running the lifted block `text` (see
        parts.lift), added if new: the C compiler's time goes to distinct code only."""
        name = self.lifted.get(text)
        if name is None:
            name = self.lifted[text] = f"block{len(self.lifted)}"
            self.lifted_functions.append(function_parts.lifted_function(name, text, n_slots))
        return name

    def loop(self, name: str, dtype) -> int:
        """The number of NumPy's loop of `np.<name>` over `dtype` (all its operands and
        results), added to the module's table if new."""
        ufunc = getattr(np, name)
        types = (np.dtype(dtype).num,) * ufunc.nargs
        key = (ufunc, types)
        for k, entry in enumerate(self.loops):
            if entry == key and k not in self.products:  # (a product's own entry may change)
                return k
        self.loops.append(key)
        return len(self.loops) - 1

    def product_loop(self, dtype, key) -> int:
        """The number of a loop of its own for products of `key` (see product_kernel): NumPy's
        matmul's, or the native tier's own when the module is made, if it gives its bits."""
        for k, other in self.products.items():
            if other == key:
                return k
        self.loops.append((np.matmul, (np.dtype(dtype).num,) * 3))
        self.products[len(self.loops) - 1] = key
        return len(self.loops) - 1

    def shape_array(self, shape) -> str:
        name = self.shape_names.get(shape)
        if name is None:
            name = self.shape_names[shape] = f"shape{len(self.shape_names)}"
            dims = ", ".join(str(d) for d in shape) or "0"
            self.statics.append(f"static npy_intp {name}[] = {{{dims}}};")
        return name


class Function(NamedTuple):
    """A jaxpr compiled as a C function `int name(segments, consts, io, keep)`: `io` holds
    its inputs, then arrays its results are written into (C-contiguous, of their types,
    aliasing no input); `keep` holds `n_keep` arrays it reuses from call to call (NULL at
    first); 0 on success, -1 with a Python exception set."""
    name: str
    n_in: int
    n_out: int
    n_keep: int


def _at(pointer: str, offset: int) -> str:
    return f"({pointer} + {offset})" if offset else pointer


def _summed(eqn):
    """The dimensions a reduction equation sums pairwise (a float sum), or None."""
    x = eqn.invars[0].aval
    if x.dtype not in FLOATS:
        return None
    _, _, is_sum = eqn.primitive.rules["native"](CExpr(x.dtype, None, None), eqn)
    if not is_sum:
        return None
    return tuple(pairwise_dims(x.shape, eqn.params["axes"])) or None


class _Seg:
    __slots__ = ("kind", "eqns", "shape", "reduced", "summed")

    def __init__(self, kind, eqn, shape=None):
        self.kind, self.eqns, self.shape, self.reduced = kind, [eqn], shape, set()
        self.summed = None  # (loops) the dimensions its float sums sum pairwise


class _Emitter:
    """Writes one C function for a jaxpr: the module's `run` (`body` is None) or, for a
    control-flow body, a `Function` (`body` is its name)."""

    def __init__(self, module: _Module, closed, body: str | None = None):
        self.m = module
        self.closed = closed
        self.jaxpr = closed.jaxpr
        self.fname = body
        self.slots: dict = {}       # variable -> index in v[] (values held as objects)
        self.body: list = []
        self.alias: dict = {}       # a view's variable -> (base, element strides, offset)
        self.n_slots = 0
        self.n_keep = 0             # keep[] entries: reused arrays, bodies' own keeps
        self.keep_of: dict = {}     # an intermediate -> its keep[] entry
        self.free_keeps: dict = {}  # (shape, dtype) -> keep[] entries no live value holds
        self.dest: dict = {}        # (bodies) a result variable -> its io index
        self.direct: set = set()    # (bodies) results computed in their io array
        self.results = set(v for v in closed.jaxpr.outvars if type(v) is not Literal)
        self.n_names = 0            # C identifiers made by fresh()
        self.segment = None         # the index of the block segment being written
        self.declared = None        # slots whose p<slot> the block being written declared

    def shape_array(self, shape) -> str:
        return self.m.shape_array(shape)

    # segments ---------------------------------------------------------------------------

    def base(self, a):
        return self.alias[a][0] if a in self.alias else a

    def segments(self):
        """Cuts the equations, in order, into python, loop, gemm and control segments;
        views become aliases (strided reads of their base)."""
        segs: list = []
        where: dict = {}  # variable -> the segment defining it
        open_loop = None
        for eqn in self.jaxpr.eqns:
            kind = native_kind(eqn)
            out = eqn.outvars[0] if eqn.outvars else None
            if kind == "view":
                x = eqn.invars[0]
                base, st, off = self.alias.get(x, (x, contiguous(x.aval.shape), 0))
                new = eqn.primitive.rules["native"](eqn, st)
                if isinstance(new, ViewAt):
                    new, off = new.strides, off + new.offset
                open_py = segs and segs[-1].kind == "py" and where.get(base) is segs[-1]
                if new is IN_ORDER and not open_py:
                    segs.append(_Seg("in order", eqn))
                    open_loop = None
                    where[out] = segs[-1]
                    continue
                if new is not None and not open_py:  # (a view of a value the open NumPy-tier
                    # segment computes is computed there too)
                    self.alias[out] = (base, tuple(new), off)
                    continue
                kind = None
            if kind is None:
                if segs and segs[-1].kind == "py":
                    segs[-1].eqns.append(eqn)
                else:
                    segs.append(_Seg("py", eqn))
                open_loop = None
            elif kind in ("gemm", "block"):
                segs.append(_Seg(kind, eqn))
                open_loop = None
            else:
                shape = (out.aval.shape if kind == "elementwise"
                         else eqn.invars[0].aval.shape)
                summed = _summed(eqn) if kind == "reduce" else None
                seg = segs[open_loop] if open_loop is not None else None
                if seg is None or seg.shape != shape or not all(
                        type(a) is Literal or (where.get(self.base(a)) is not seg if a in
                                               self.alias else a not in seg.reduced)
                        for a in eqn.invars) or (summed and seg.summed not in (None, summed)):
                    seg = _Seg("loop", eqn, shape)
                    segs.append(seg)
                    open_loop = len(segs) - 1
                else:
                    seg.eqns.append(eqn)
                if kind == "reduce":
                    seg.reduced.add(out)
                    seg.summed = seg.summed or summed
            for v in eqn.outvars:
                where[v] = segs[-1] if kind != "view" else None
        return segs

    def slot(self, v) -> int:
        s = self.slots.get(v)
        if s is None:
            s = self.slots[v] = self.n_slots
            self.n_slots += 1
        return s

    def emit(self) -> Plan | None:
        segs = self.segments()
        n_native = sum(len(s.eqns) for s in segs if s.kind not in ("py", "block"))
        n_native += len(self.alias)
        n_python = sum(len(s.eqns) for s in segs if s.kind == "py")
        n_block = sum(1 for s in segs if s.kind == "block")
        if not n_native + n_block and self.fname is None:
            return None
        self.m.counts[0] += n_native + n_block  # (control-flow bodies count their own)
        self.m.counts[1] += n_python
        j = self.jaxpr
        # Where each variable (a view: its base) is read: segments' indices, len(segs) for
        # results.
        readers: dict = {}
        for i, seg in enumerate(segs):
            for eqn in seg.eqns:
                for a in eqn.invars:
                    if type(a) is not Literal:
                        readers.setdefault(self.base(a), set()).add(i)
        for a in j.outvars:
            if type(a) is not Literal:
                readers.setdefault(self.base(a), set()).add(len(segs))
        self.readers = readers
        self.last_reader = {a: max(r) for a, r in readers.items()}
        args = "args" if self.fname is None else "io"
        for k, v in enumerate(j.invars):
            self.body.append(f"    v[{self.slot(v)}] = {args}[{k}]; Py_INCREF({args}[{k}]);")
        for v, c in zip(j.constvars, self.closed.consts):
            value = c._value if type(c) is core.Array else c
            self._hold_const(self.slot(v), np.array(value, v.aval.dtype, order="C"))
        if self.fname is not None:  # results computed where they are written
            for k, a in enumerate(j.outvars):
                if (type(a) is not Literal and a not in self.alias and a not in j.invars
                        and a not in self.dest):
                    self.dest[a] = len(j.invars) + k
        for i, seg in enumerate(segs):
            if seg.kind == "loop":
                start = len(self.body)
                self.loop_segment(i, seg)
                self.share(start)
            elif seg.kind == "in order":
                start = len(self.body)
                self.copy_in_order(seg.eqns[0])
                self.share(start)
            else:
                views = self.gemm_views(seg.eqns[0]) if seg.kind == "gemm" else None
                temps = [] if views else self.materialize_all(seg.eqns)
                if seg.kind == "gemm":
                    start = len(self.body)
                    self.gemm_segment(i, seg.eqns[0], views)
                    self.share(start)
                elif seg.kind == "block":
                    self.block_segment(i, seg.eqns[0])
                else:
                    self.python_segment(i, seg.eqns)
                for a in temps:
                    self.body.append(function_parts.clear(self.slots.pop(a)))
                    self.free_keep(a)
            self.release(i)
        result_items = []
        for k, a in enumerate(j.outvars):
            if type(a) is Literal:
                s = self.slot(("literal result", k))
                self._hold_const(s, np.asarray(a.val, a.aval.dtype))
            elif a in self.alias:
                s = self.materialize(a)
            else:
                s = self.slots[a]
            result_items.append(s)
        if self.fname is not None:
            return self.finish_function(result_items)
        source = self.module_source(len(j.invars), result_items)
        m = self.m
        loops = tuple(m.loops)
        return Plan(source, tuple(m.py_segments), tuple(m.consts), loops, m.counts[0],
                    m.counts[1], tuple(m.products.items()))

    def finish_function(self, result_items) -> Function:
        """Copies the results not computed in place into their io arrays; adds the C
        function to the module."""
        j = self.jaxpr
        n_in = len(j.invars)
        for k, (a, s) in enumerate(zip(j.outvars, result_items)):
            if type(a) is Literal or a not in self.direct or self.dest.get(a) != n_in + k:
                typenum = C_TYPENUMS[j.outvars[k].aval.dtype]
                self.body.append(f"    if (copy_into(io[{n_in + k}], v[{s}], {typenum}) < 0) "
                                 "goto done;")
        n_slots = max(self.n_slots, 1)
        self.m.helpers.append("\n".join([
            f"static int {self.fname}(PyObject *segments, PyObject *consts, "
            "PyObject *const *io, PyObject **keep) {",
            f"    PyObject *v[{n_slots}] = {{NULL}};",
            "    int status = -1;",
            *self.body,
            "    status = 0;",
            "done:",
            f"    for (int k = 0; k < {n_slots}; k++) Py_XDECREF(v[k]);",
            "    return status;",
            "}", ""]))
        return Function(self.fname, n_in, len(j.outvars), self.n_keep)

    def share(self, start: int):
        """Replaces the block written from line `start` on by a call of the module's
        function for it."""
        lifted = function_parts.lift(self.body[start:])
        if lifted is not None:
            text, slots = lifted
            name = self.m.shared(text, len(slots))
            self.body[start + 1:] = [f"        if ({name}({', '.join('&' + s for s in slots)})"
                                     " < 0) goto done;", "    }"]

    def _hold_const(self, slot: int, value):
        self.body.append(f"    v[{slot}] = PyTuple_GET_ITEM(consts, {len(self.m.consts)}); "
                         f"Py_INCREF(v[{slot}]);")
        self.m.consts.append(value)

    def release(self, i: int):
        """Drops the values whose last reader was segment `i`; their keep[] entries go to
        the next new intermediate of their shape (see new_array)."""
        for a, last in self.last_reader.items():
            if last == i and a in self.slots:
                self.body.append(function_parts.clear(self.slots[a]))
                self.free_keep(a)

    def new_keep(self) -> int:
        self.n_keep += 1
        return self.n_keep - 1

    def take_keep(self, shape, dtype) -> int:
        """A keep[] entry for a new value of `shape` and `dtype`: one a dead value of that
        shape held (its array, written a moment ago, is likely still in the core's cache),
        else a new one."""
        free = self.free_keeps.get((shape, dtype))
        return free.pop() if free else self.new_keep()

    def give_back(self, shape, dtype, k: int):
        """keep[k], whose value is dropped now, serves the next new value of its shape."""
        self.free_keeps.setdefault((shape, dtype), []).append(k)

    def free_keep(self, a):
        """The keep[] entry of the value `a`, dropped now, goes back (see give_back)."""
        if a in self.keep_of:
            self.give_back(a.aval.shape, a.aval.dtype, self.keep_of.pop(a))

    def needed_after(self, v, i: int) -> bool:
        return any(r > i for r in self.readers.get(v, ()))

    # views ------------------------------------------------------------------------------

    def materialize_all(self, eqns) -> list:
        """Makes arrays of the views `eqns` read (their slots, to clear after)."""
        temps = []
        for eqn in eqns:
            for a in eqn.invars:
                if type(a) is not Literal and a in self.alias and a not in self.slots:
                    self.materialize(a)
                    temps.append(a)
        return temps

    def materialize(self, a) -> int:
        """The view `a` as an array in its own slot: a reshaped base if it reads it in
        order, else a copy by a loop."""
        if a in self.slots:
            return self.slots[a]
        base, st, off = self.alias[a]
        shape, s = a.aval.shape, self.slot(a)
        b = self.body
        keep = [d for d in range(len(shape)) if shape[d] != 1]
        in_order = (off == 0 and math.prod(shape) == math.prod(base.aval.shape) and
                    [st[d] for d in keep] == [contiguous(shape)[d] for d in keep])
        start = len(b)
        b.append("    {  /* a view */")
        self.as_array(base)
        if in_order:
            b.append(f"        PyArray_Dims dims = {{{self.shape_array(shape)}, {len(shape)}}};")
            b.append(f"        v[{s}] = PyArray_Newshape((PyArrayObject *)v[{self.slots[base]}],"
                     " &dims, NPY_CORDER);")
            b.append(f"        if (v[{s}] == NULL) goto done;")
        else:
            self.new_array(s, a.aval, var=a)
            self.copy_loop(base, st, off, a.aval, s)
        b.append("    }")
        self.share(start)
        return s

    def copy_in_order(self, eqn):
        """The result of the view `eqn` (see rules.IN_ORDER): its operand's elements, read
        where they are, copied in order into a new array of the result's shape. (The
        operand is a view: an array of its own is read in order, which its rule expresses
        by strides.)"""
        x, out = eqn.invars[0], eqn.outvars[0]
        base, st, off = self.alias[x]
        s = self.slot(out)
        b = self.body
        b.append("    {  /* a view copied in order */")
        self.as_array(base)
        self.new_array(s, out.aval, var=out)
        self.copy_loop(base, st, off, x.aval, s)
        b.append("    }")

    def copy_loop(self, base, st, off, aval, s):
        """A loop copying the view of `base` (element strides `st`, offset `off`) of `aval`
        in order into q<s>."""
        shape = aval.shape
        loop_nest(self.body, shape, [(C_TYPES[aval.dtype], _at(f"p{self.slots[base]}", off),
                                      over(shape, shape, st))],
                  lambda block, names: None, [(f"q{s}", lambda: "t0")], [])

    def as_array(self, a, restrict: bool = True):
        """Declares p<slot>, the data of `a` (converted to a C-contiguous array), once in a
        block (an operand may appear twice: a concatenation of x with itself); not
        `restrict` where a result is written over it (see in_place)."""
        s = self.slots[a]
        if self.declared is not None:
            if s in self.declared:
                return
            self.declared.add(s)
        ctype, typenum = C_TYPES[a.aval.dtype], C_TYPENUMS[a.aval.dtype]
        qualifier = "*restrict" if restrict else "*"
        self.body.append(f"        if (as_carray(&v[{s}], {typenum}, {a.aval.ndim}, "
                         f"{self.shape_array(a.aval.shape)}) < 0) goto done;")
        self.body.append(f"        const {ctype} {qualifier} p{s} = (const {ctype} *)"
                         f"PyArray_DATA((PyArrayObject *)v[{s}]);")

    def new_array(self, s, aval, var=None):
        """Declares q<s>, the data of a new array of `aval` in slot `s`: in a body, the io
        array `var` is written into if it is a result; else (and for values of `run` that
        are not its results) an array of keep[] reused when nothing else holds it (no page
        faults for large intermediates, such as stacked residuals, on every call): that of
        a value of the same shape dropped before this one is made (see take_keep), else
        its own from the previous call. Results of `run` are new arrays."""
        ctype, typenum = C_TYPES[aval.dtype], C_TYPENUMS[aval.dtype]
        shape = self.shape_array(aval.shape)
        b = self.body
        if var is not None and var in self.dest and var not in self.direct:
            self.direct.add(var)
            b.append(f"        v[{s}] = io[{self.dest[var]}]; Py_INCREF(v[{s}]);")
        elif self.fname is not None or (var is not None and var not in self.results):
            if var is None:
                k = self.new_keep()
            else:
                k = self.keep_of[var] = self.take_keep(aval.shape, aval.dtype)
            b.append(f"        v[{s}] = scratch(&keep[{k}], {aval.ndim}, {shape}, {typenum});")
        else:
            b.append(f"        v[{s}] = PyArray_SimpleNew({aval.ndim}, {shape}, {typenum});")
        b.append(f"        if (v[{s}] == NULL) goto done;")
        b.append(f"        {ctype} *restrict q{s} = ({ctype} *)"
                 f"PyArray_DATA((PyArrayObject *)v[{s}]);")

    # Python segments --------------------------------------------------------------------

    def python_segment(self, i: int, eqns):
        defined = set()
        ins = []
        for eqn in eqns:
            for a in eqn.invars:
                if type(a) is not Literal and a not in defined and a not in ins:
                    ins.append(a)
            defined.update(v for v in eqn.outvars if type(v) is not DropVar)
        outs = [v for eqn in eqns for v in eqn.outvars
                if type(v) is not DropVar and self.needed_after(v, i)]
        sub = ClosedJaxpr(Jaxpr([], ins, outs, eqns), [])
        fn = compile_jaxpr(sub, "segment", debug_nans=False, optimized=True)
        k = len(self.m.py_segments)
        self.m.py_segments.append(fn.run)
        argv = ", ".join(f"v[{self.slots[a]}]" for a in ins) or "NULL"
        b = self.body
        b.append(f"    {{  /* equations on the NumPy tier: {len(eqns)} */")
        b.append(f"        PyObject *argv[{len(ins) + 1}] = {{{argv}}};")
        b.append(f"        PyObject *r = PyObject_Vectorcall(PyTuple_GET_ITEM(segments, {k}), "
                 f"argv, {len(ins)}, NULL);")
        b.append("        if (r == NULL) goto done;")
        b.append(f"        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != {len(outs)}) {{")
        b.append("            Py_DECREF(r);")
        b.append('            PyErr_SetString(PyExc_RuntimeError, "didax native: a NumPy-tier '
                 'segment returned an unexpected value");')
        b.append("            goto done;")
        b.append("        }")
        for n, v in enumerate(outs):
            s = self.slot(v)
            b.append(f"        v[{s}] = PyTuple_GET_ITEM(r, {n}); Py_INCREF(v[{s}]);")
        b.append("        Py_DECREF(r);")
        b.append("    }")

    # control flow -----------------------------------------------------------------------

    def block_segment(self, i: int, eqn):
        """An equation whose rule writes its C itself (control flow: the loop or branch)
        with this emitter's helpers below; results nobody reads are dropped."""
        self.body.append(f"    {{  /* {eqn.primitive.name}, native */")
        self.segment = i
        self.declared = set()
        eqn.primitive.rules["native"](self, eqn)
        self.declared = None
        self.body.append("    }")
        for v in eqn.outvars:
            if type(v) is DropVar or not self.needed_after(v, i):
                self.body.append(function_parts.clear(self.slot(v)))

    def line(self, text: str):
        """Appends a line of C (inside the segment's block)."""
        self.body.append("        " + text)

    def operand(self, a) -> str:
        """The C expression of the object holding operand `a` (a literal becomes a
        constant); views were made arrays before the rule runs."""
        if type(a) is Literal:
            s = self.slot(("literal", id(a), len(self.m.consts)))
            self.body.append("    {")
            self._hold_const(s, np.asarray(a.val, a.aval.dtype))
            self.body.append("    }")
        else:
            s = self.slots[a]
        return f"v[{s}]"

    def result(self, v) -> str:
        """The C expression of the slot result `v` is put in (the rule stores a new
        reference there)."""
        return f"v[{self.slot(v)}]"

    def copy_or_take(self, eqn, x, out) -> bool:
        """Declares q<slot of out>, the array the block `eqn` computes `out` in, holding the
        values of its operand `x` (of out's shape and dtype; x is made an array first): x's
        own array if x is an intermediate that nothing reads after `eqn` (no other operand
        of it a view of it) and that nothing else holds when the block runs (a NumPy view
        made of it by a NumPy-tier equation would), its keep[] entry passing to `out`; else
        a copy. Whether it may take x's array (a scatter into new zeros need not copy
        them)."""
        self.as_array(x)
        xs, s = self.slots[x], self.slot(out)
        ctype, typenum = C_TYPES[out.aval.dtype], C_TYPENUMS[out.aval.dtype]
        nbytes = math.prod(out.aval.shape) * out.aval.dtype.itemsize
        if (x in self.alias or x not in self.keep_of or out in self.dest
                or (out.aval.shape, out.aval.dtype) != (x.aval.shape, x.aval.dtype)
                or self.last_reader.get(x) != self.segment
                or sum(type(a) is not Literal and self.base(a) is x for a in eqn.invars) > 1):
            self.new_array(s, out.aval, var=out)
            self.line(f"memcpy(q{s}, p{xs}, {nbytes});")
            return False
        k = self.keep_of[out] = self.keep_of.pop(x)
        b = self.body
        b.append(f"        if (Py_REFCNT(v[{xs}]) == 2) {{  /* its slot and keep[{k}] alone */")
        b.append(f"            v[{s}] = v[{xs}]; Py_INCREF(v[{s}]);")
        b.append("        } else {")
        b.append(f"            v[{s}] = scratch(&keep[{k}], {out.aval.ndim}, "
                 f"{self.shape_array(out.aval.shape)}, {typenum});")
        b.append(f"            if (v[{s}] == NULL) goto done;")
        b.append(f"            memcpy(PyArray_DATA((PyArrayObject *)v[{s}]), p{xs}, {nbytes});")
        b.append("        }")
        b.append(f"        {ctype} *restrict q{s} = ({ctype} *)"
                 f"PyArray_DATA((PyArrayObject *)v[{s}]);")
        return True

    def function(self, closed) -> Function:
        """`closed` (optimised here) compiled as a C function of this module."""
        self.m.n_bodies += 1
        return _Emitter(self.m, elementwise_products(optimize(closed)),
                        f"body{self.m.n_bodies}").emit()

    def keep_range(self, n: int) -> str:
        """A C expression of `n` keep[] entries reserved for a body this function calls."""
        at = self.n_keep
        self.n_keep += n
        return f"keep + {at}"

    def fresh(self, hint: str) -> str:
        """A C identifier unique in this function."""
        self.n_names += 1
        return f"{hint}{self.n_names}"

    def ctype(self, aval) -> tuple:
        """(C type, NumPy type number macro, shape array name) of `aval`."""
        return C_TYPES[aval.dtype], C_TYPENUMS[aval.dtype], self.shape_array(aval.shape)

    # native segments --------------------------------------------------------------------

    def loop_segment(self, i: int, seg):
        shape, eqns = seg.shape, seg.eqns
        defined, ins = set(), []  # operands read from arrays (or views of arrays)
        for eqn in eqns:
            for a in eqn.invars:
                if type(a) is not Literal and a not in defined and a not in ins:
                    ins.append(a)
            defined.add(eqn.outvars[0])
        outs = [e.outvars[0] for e in eqns if e.outvars[0] not in seg.reduced and
                type(e.outvars[0]) is not DropVar and self.needed_after(e.outvars[0], i)]
        b = self.body
        b.append(f"    {{  /* native loop over {shape}: {len(eqns)} equations */")
        reductions: dict = {}
        names: dict = {}

        def body(block, read_names):
            names.update(zip(ins, read_names))
            for eqn in eqns:
                args = [c_constant(a.val, a.aval.dtype) if type(a) is Literal else names[a]
                        for a in eqn.invars]
                if eqn in reductions:
                    reductions[eqn].local = args[0]
                    continue
                out = eqn.outvars[0]
                c = CExpr(out.aval.dtype, block, self.m.loop)
                rule = eqn.primitive.rules["native"]
                expression = args[0] if rule.kind == "view" else rule(c, eqn, *args)
                names[out] = block.let(C_TYPES[out.aval.dtype], expression)

        over_operand = self.in_place(i, seg, ins, outs, body)
        reads, done = [], set()
        for a in ins:
            base, st, off = self.alias.get(a, (a, contiguous(a.aval.shape), 0))
            if base not in done:
                done.add(base)
                self.as_array(base, restrict=base not in over_operand.values())
            reads.append((C_TYPES[a.aval.dtype], _at(f"p{self.slots[base]}", off),
                          over(shape, a.aval.shape, st)))
        for v in outs:
            if v in over_operand:
                self.write_over(self.slot(v), v, over_operand[v])
            else:
                self.new_array(self.slot(v), v.aval, var=v)
        for eqn in eqns:
            out = eqn.outvars[0]
            if out in seg.reduced:
                s = self.slot(out)
                self.new_array(s, out.aval, var=out)
                c = CExpr(out.aval.dtype, None, None)
                rule = eqn.primitive.rules["native"]
                init, combine, is_sum = rule(c, eqn)
                axes = eqn.params["axes"]
                kept = tuple(d not in axes for d in range(len(shape)))
                reductions[eqn] = Reduction(s, C_TYPES[out.aval.dtype], kept, init, combine,
                                            is_sum, is_sum and out.aval.dtype in FLOATS,
                                            rule.any_order)

        writes = [(f"q{self.slots[v]}", lambda v=v: names[v]) for v in outs]
        # A long loop lets other Python threads run (as NumPy's loops do): it touches no
        # Python object.
        free = math.prod(shape) >= FREE_GIL_FROM
        if free:
            b.append("        Py_BEGIN_ALLOW_THREADS")
        loop_nest(b, shape, reads, body, writes, list(reductions.values()),
                  lambda k: f"didax_loops[{k}]")
        if free:
            b.append("        Py_END_ALLOW_THREADS")
        b.append("    }")

    def in_place(self, i: int, seg, ins, outs, body) -> dict:
        """{result: operand} for the loop segment `i`: results written over an operand of
        their shape and dtype that the loop reads in order and nothing reads after it (an
        intermediate array of this function, not a view, read by no view in the loop).
        The operand's array was written a moment ago and is in the cache, a new one is not:
        an MLP's SGD update into its gradient's array took 15 % less of the step at batch
        16. Each iteration reads its elements before it writes them, so only loops of whole
        elements qualify: none that reduces or calls NumPy's loops (which run in phases,
        reading operands again after earlier phases wrote)."""
        if seg.reduced or not outs:
            return {}
        viewed = {self.alias[a][0] for a in ins if a in self.alias}
        free = [a for a in ins if a not in self.alias and a not in viewed
                and a in self.keep_of and self.last_reader.get(a) == i
                and a.aval.shape == tuple(seg.shape)]
        taken: dict = {}
        for v in outs:
            if v in self.dest:
                continue
            for a in free:
                if a.aval == v.aval and a not in taken.values():
                    taken[v] = a
                    break
        if taken:
            probe = Body()
            body(probe, [probe.read(C_TYPES[a.aval.dtype], n) for n, a in enumerate(ins)])
            if any(stmt[3] is not None for stmt in probe.stmts):
                return {}
        return taken

    def write_over(self, s: int, v, x):
        """Declares q<s>, the data of the loop's result `v`, written over its operand `x`
        (see in_place) when only x's slot and keep[] entry hold x's array; else a new array
        as new_array makes it. A result of `run` takes the array from keep[] (the next call
        makes another); an intermediate takes x's keep[] entry."""
        xs = self.slots[x]
        ctype, typenum = C_TYPES[v.aval.dtype], C_TYPENUMS[v.aval.dtype]
        ndim, shape = v.aval.ndim, self.shape_array(v.aval.shape)
        k = self.keep_of.pop(x)
        result = self.fname is None and v in self.results
        b = self.body
        b.append(f"        if (Py_REFCNT(v[{xs}]) == 2) {{  /* written over its operand, which "
                 f"its slot and keep[{k}] alone hold */")
        b.append(f"            v[{s}] = v[{xs}]; Py_INCREF(v[{s}]);")
        if result:
            b.append(f"            Py_CLEAR(keep[{k}]);")
            b.append("        } else {")
            b.append(f"            v[{s}] = PyArray_SimpleNew({ndim}, {shape}, {typenum});")
            self.give_back(x.aval.shape, x.aval.dtype, k)
        else:
            self.keep_of[v] = k
            b.append("        } else {")
            b.append(f"            v[{s}] = scratch(&keep[{k}], {ndim}, {shape}, {typenum});")
        b.append(f"            if (v[{s}] == NULL) goto done;")
        b.append("        }")
        b.append(f"        {ctype} *q{s} = ({ctype} *)PyArray_DATA((PyArrayObject *)v[{s}]);")

    def gemm_views(self, eqn):
        """The MatrixViews of a product's operands if it reads views of arrays where they
        are (see matrix_views), else None (its views are copied)."""
        mm = eqn.primitive.rules["native"](eqn)
        lhs, rhs = eqn.invars
        if (mm.swapped or not mm.targets or product_kernel.eligible(mm, lhs.aval.dtype)
                or not (lhs in self.alias or rhs in self.alias)
                or self.base(lhs) is self.base(rhs)):  # (as the NumPy tier's A @ A.T)
            return None
        strides = [self.alias[a][1] if a in self.alias else contiguous(a.aval.shape)
                   for a in (lhs, rhs)]
        return matrix_views([lhs.aval.shape, rhs.aval.shape], strides, mm.nb, mm.targets,
                            mm.transposed)

    def gemm_segment(self, i: int, eqn, views=None):
        """A product: NumPy's matmul loop on the operands' data, read as the NumPy tier's
        views read them (see the rule's Matmul), so the same BLAS routine computes it;
        with `views` (gemm_views), read where they are."""
        if views:
            return self.gemm_on_views(eqn, views)
        mm = eqn.primitive.rules["native"](eqn)
        lhs, rhs = eqn.invars
        out = eqn.outvars[0]
        b = self.body
        sz = out.aval.dtype.itemsize
        b.append("    {  /* a product: NumPy's matmul loop */")
        self.as_array(lhs)
        if rhs is not lhs:
            self.as_array(rhs)
        s = self.slot(out)
        self.new_array(s, out.aval, var=out)
        first, second = (rhs, lhs) if mm.swapped else (lhs, rhs)
        if mm.swapped:  # the transposed product, into a scratch array
            ctype, typenum = C_TYPES[out.aval.dtype], C_TYPENUMS[out.aval.dtype]
            t = self.fresh("t")
            k_t = self.take_keep((mm.M, mm.N), out.aval.dtype)
            b.append(f"        PyObject *{t}_a = scratch(&keep[{k_t}], 2, "
                     f"{self.shape_array((mm.M, mm.N))}, {typenum});")
            b.append(f"        if ({t}_a == NULL) goto done;")
            b.append(f"        {ctype} *restrict {t} = ({ctype} *)"
                     f"PyArray_DATA((PyArrayObject *){t}_a);")
            dest = t
        else:
            dest = f"q{s}"
        if product_kernel.eligible(mm, out.aval.dtype):
            k = self.m.product_loop(out.aval.dtype, (mm.M, mm.K, mm.N, mm.first, mm.second))
        else:
            k = self.m.loop("matmul", out.aval.dtype)
        self.matmul_call("        ", k, mm, (f"p{self.slots[first]}", f"p{self.slots[second]}",
                                               dest), mm.batch, mm.first, mm.second, sz)
        if mm.swapped:
            b.append(f"        for (npy_intp r = 0; r < {mm.N}; r++)")
            b.append(f"            for (npy_intp j = 0; j < {mm.M}; j++)")
            b.append(f"                q{s}[r * {mm.M} + j] = {t}[j * {mm.N} + r];")
            b.append(f"        Py_DECREF({t}_a);")
            self.give_back((mm.M, mm.N), out.aval.dtype, k_t)
        b.append("    }")

    def matmul_call(self, ind, k, mm, pointers, batch, first, second, sz):
        """Calls NumPy's matmul loop number `k` on the product `mm` over `batch` matrices
        of the operands and the (row-major) result at `pointers` (C expressions), the
        operands read with byte strides `first` and `second` (batch, row, column), the
        result's elements `sz` bytes."""
        b = self.body
        steps = (first[0], second[0], mm.M * mm.N * sz, *first[1:], *second[1:], mm.N * sz,
                 sz)
        b.append(f"{ind}{{ char *args[] = {{{', '.join(f'(char *){p}' for p in pointers)}}};")
        b.append(f"{ind}  npy_intp dims[] = {{{batch}, {mm.M}, {mm.K}, {mm.N}}};")
        b.append(f"{ind}  npy_intp steps[] = {{{', '.join(map(str, steps))}}};")
        # (BLAS needs no Python object: a long product lets other Python threads run)
        free = mm.batch * mm.M * mm.K * mm.N >= FREE_GIL_FROM
        b.append(f"{ind}  {'Py_BEGIN_ALLOW_THREADS ' if free else ''}"
                 f"didax_loops[{k}].fn(args, dims, steps, didax_loops[{k}].data);"
                 f"{' Py_END_ALLOW_THREADS' if free else ''} }}")

    def gemm_on_views(self, eqn, views):
        """The product read from its operands' views in place: NumPy's matmul loop over the
        batch dimensions it walks, called once per element of the outer ones."""
        mm = eqn.primitive.rules["native"](eqn)
        out = eqn.outvars[0]
        b = self.body
        sz = out.aval.dtype.itemsize
        b.append("    {  /* a product: NumPy's matmul loop, on views */")
        pointers = []
        for a in eqn.invars:  # (of two bases: see gemm_views)
            base, _, off = self.alias.get(a, (a, None, 0))
            self.as_array(base)
            pointers.append(f"p{self.slots[base]} + {off}")
        s = self.slot(out)
        self.new_array(s, out.aval, var=out)
        lead = [n for n, _ in views[0].outer]
        ind = "        "
        for d, n in enumerate(lead):
            b.append(f"{ind}for (npy_intp o{d} = 0; o{d} < {n}; o{d}++) {{")
            ind += "    "
        out_lead = contiguous((*lead, math.prod(out.aval.shape) // max(math.prod(lead), 1)))
        at = [" + ".join(["0"] + [f"o{d} * {st}" for d, (_, st) in enumerate(v.outer)])
              for v in views]
        at.append(" + ".join(["0"] + [f"o{d} * {out_lead[d]}" for d in range(len(lead))]))
        self.matmul_call(ind, self.m.loop("matmul", out.aval.dtype), mm,
                         (f"({pointers[0]} + {at[0]})", f"({pointers[1]} + {at[1]})",
                          f"(q{s} + {at[2]})"), mm.batch // max(math.prod(lead), 1),
                         *(tuple(n * sz for n in (v.batch, v.row, v.col)) for v in views), sz)
        for _ in lead:
            ind = ind[:-4]
            b.append(f"{ind}}}")
        b.append("    }")

    # the module -------------------------------------------------------------------------

    def module_source(self, n_in: int, results: list) -> str:
        n_slots = max(self.n_slots, 1)
        n_keep = max(self.n_keep, 1)
        m = self.m
        run_parts, run_body = function_parts.cut(self.body, "run")
        run_parts, units = function_parts.spread([*m.lifted_functions, *run_parts])
        n_loops = max(len(m.loops), 1)
        common = [  # (what every translation unit's code may use)
            "#include <string.h>",
            *m.statics,
            "",
            runtime.DECLARATIONS,
            runtime.MODULE_NAMES,
            '#define DIDAX_SHARED __attribute__((visibility("hidden")))',
            "#define DIDAX_NT (*didax_threads)",
            LEAF_SUMS,
            function_parts.NOINLINE,
            function_parts.CLEAR,
            *map(function_parts.prototype, m.lifted_functions),
        ]
        further = ["\n".join([UNIT_MARK, module_prelude(unit=True), *common,
                               f"extern DIDAX_SHARED didax_loop didax_loops[{n_loops}];",
                               "extern DIDAX_SHARED int *didax_threads;",
                               *map(function_parts.shared, unit)]) for unit in units]
        parts = [
            module_prelude(),
            *common,
            f"DIDAX_SHARED didax_loop didax_loops[{n_loops}];",
            "/* The number of threads of the parallel loops (threads.py's cell). */",
            "static int didax_one_thread = 1;",
            "DIDAX_SHARED int *didax_threads = &didax_one_thread;",
            *m.helpers,
            *(function_parts.prototype(f) for unit in units for f in unit),
            *run_parts,
            "static int didax_body(PyObject **v, PyObject **keep, PyObject *segments, "
            "PyObject *consts, PyObject *const *args) {",
            *(line.replace("goto done;", "return -1;") for line in run_body),
            "    return 0;",
            "}",
            "",
            runtime.module_function(n_in, n_slots, n_keep, results, len(m.loops)),
            *further,
        ]
        return "\n".join(parts) + "\n"
