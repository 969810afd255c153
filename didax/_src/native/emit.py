"""C source for an optimised jaxpr: fused loops where primitives have native rules,
calls back into the NumPy tier for every other run of equations.

The equations are cut, in order, into segments: a native segment is a maximal run of
equations with native rules and one result shape, computed by one loop nest (operands
broadcast as lax broadcasts: size-1 dimensions, lower ranks); a Python segment is a
maximal run of the others, compiled by the NumPy-tier compiler into a function the C code
calls with NumPy arrays. Values that cross segments are NumPy arrays (native results are
allocated with PyArray_SimpleNew); values inside a native segment are C locals.

The source depends only on the jaxpr's structure (constants and the Python segments are
handed to the module when it is instantiated), and every name in it is one made here.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from didax._src import core
from didax._src.ir import ClosedJaxpr, DropVar, Jaxpr, Literal
from didax._src.jit.compiler import compile_jaxpr
from didax._src.native.loops import Reduction, contiguous, loop_nest, over
from didax._src.native.rules import C_TYPENUMS, C_TYPES, CExpr, c_constant
from didax._src.native.toolchain import module_prelude


class Plan(NamedTuple):
    source: str              # C source of the module (its init function: PyInit_<name>)
    python_segments: tuple   # the NumPy-tier functions the C code calls
    consts: tuple            # NumPy values the C code reads (constants, literal results)
    native_equations: int    # how many equations run natively
    python_equations: int    # how many run on the NumPy tier, inside the native function
    uses_blas: bool          # whether it calls BLAS (then its key includes the library)


def native_kind(eqn):
    """How `eqn` runs natively ("elementwise", "view", "reduce", "gemm"), or None: a native
    rule that accepts it, dtypes C handles, and (elementwise) operands that broadcast to
    its one result."""
    rule = eqn.primitive.rules.get("native")
    if rule is None or eqn.primitive.multiple_results or len(eqn.outvars) != 1:
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
        return None
    return rule.kind if rule.when(eqn) else None


def native_ok(eqn) -> bool:
    return native_kind(eqn) is not None


def plan(closed: ClosedJaxpr, vector_math: bool) -> Plan | None:
    """The module for `closed`, or None if no equation runs natively. Its name is the
    macro DIDAX_MODULE, defined when it is built (see toolchain.build)."""
    return _Emitter(closed, vector_math).emit()


class _Seg:
    __slots__ = ("kind", "eqns", "shape", "reduced")

    def __init__(self, kind, eqn, shape=None):
        self.kind, self.eqns, self.shape, self.reduced = kind, [eqn], shape, set()


class _Emitter:
    def __init__(self, closed, vector_math):
        self.closed = closed
        self.jaxpr = closed.jaxpr
        self.vector_math = vector_math
        self.slots: dict = {}       # variable -> index in v[] (values held as objects)
        self.consts: list = []
        self.py_segments: list = []
        self.functions: set = set()
        self.statics: list = []     # file-scope shape arrays
        self.shape_names: dict = {}
        self.body: list = []
        self.alias: dict = {}       # a view's variable -> (base variable, element strides)
        self.uses_blas = False
        self.n_slots = 0

    # segments ---------------------------------------------------------------------------

    def base(self, a):
        return self.alias[a][0] if a in self.alias else a

    def segments(self):
        """Cuts the equations, in order, into python, loop and gemm segments; views
        become aliases (strided reads of their base)."""
        segs: list = []
        where: dict = {}  # variable -> the segment defining it
        open_loop = None
        for eqn in self.jaxpr.eqns:
            kind = native_kind(eqn)
            out = eqn.outvars[0]
            if kind == "view":
                x = eqn.invars[0]
                base, st = self.alias.get(x, (x, contiguous(x.aval.shape)))
                new = eqn.primitive.rules["native"](eqn, st)
                if new is not None:
                    self.alias[out] = (base, tuple(new))
                    continue
                kind = None
            if kind is None:
                if segs and segs[-1].kind == "py":
                    segs[-1].eqns.append(eqn)
                else:
                    segs.append(_Seg("py", eqn))
                open_loop = None
            elif kind == "gemm":
                segs.append(_Seg("gemm", eqn))
                open_loop = None
            else:
                shape = (out.aval.shape if kind == "elementwise"
                         else eqn.invars[0].aval.shape)
                seg = segs[open_loop] if open_loop is not None else None
                if seg is None or seg.shape != shape or not all(
                        type(a) is Literal or (where.get(self.base(a)) is not seg if a in
                                               self.alias else a not in seg.reduced)
                        for a in eqn.invars):
                    seg = _Seg("loop", eqn, shape)
                    segs.append(seg)
                    open_loop = len(segs) - 1
                else:
                    seg.eqns.append(eqn)
                if kind == "reduce":
                    seg.reduced.add(out)
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
        n_native = sum(len(s.eqns) for s in segs if s.kind != "py") + len(self.alias)
        n_python = sum(len(s.eqns) for s in segs if s.kind == "py")
        if not n_native:
            return None
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
        for k, v in enumerate(j.invars):
            self.body.append(f"    v[{self.slot(v)}] = args[{k}]; Py_INCREF(args[{k}]);")
        for v, c in zip(j.constvars, self.closed.consts):
            value = c._value if type(c) is core.Array else c
            self._hold_const(self.slot(v), np.array(value, v.aval.dtype, order="C"))
        for i, seg in enumerate(segs):
            if seg.kind == "loop":
                self.loop_segment(i, seg)
            else:
                temps = self.materialize_all(seg.eqns)
                if seg.kind == "gemm":
                    self.gemm_segment(i, seg.eqns[0])
                else:
                    self.python_segment(i, seg.eqns)
                for a in temps:
                    self.body.append(f"    Py_CLEAR(v[{self.slots.pop(a)}]);")
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
        self.body.append(f"    result = PyTuple_New({len(result_items)});")
        self.body.append("    if (result == NULL) goto done;")
        for k, s in enumerate(result_items):
            self.body.append(f"    Py_INCREF(v[{s}]); PyTuple_SET_ITEM(result, {k}, v[{s}]);")
        source = self.module_source(len(j.invars))
        return Plan(source, tuple(self.py_segments), tuple(self.consts), n_native, n_python,
                    self.uses_blas)

    def _hold_const(self, slot: int, value):
        self.body.append(f"    v[{slot}] = PyTuple_GET_ITEM(consts, {len(self.consts)}); "
                         f"Py_INCREF(v[{slot}]);")
        self.consts.append(value)

    def release(self, i: int):
        """Drops the values whose last reader was segment `i`."""
        for a, last in self.last_reader.items():
            if last == i and a in self.slots:
                self.body.append(f"    Py_CLEAR(v[{self.slots[a]}]);")

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
        base, st = self.alias[a]
        shape, s = a.aval.shape, self.slot(a)
        b = self.body
        keep = [d for d in range(len(shape)) if shape[d] != 1]
        in_order = (math.prod(shape) == math.prod(base.aval.shape) and
                    [st[d] for d in keep] == [contiguous(shape)[d] for d in keep])
        b.append("    {  /* a view */")
        self.as_array(base)
        if in_order:
            b.append(f"        PyArray_Dims dims = {{{self.shape_array(shape)}, {len(shape)}}};")
            b.append(f"        v[{s}] = PyArray_Newshape((PyArrayObject *)v[{self.slots[base]}],"
                     " &dims, NPY_CORDER);")
            b.append(f"        if (v[{s}] == NULL) goto done;")
        else:
            ctype = C_TYPES[a.aval.dtype]
            self.new_array(s, a.aval)
            loop_nest(b, shape, [(ctype, f"p{self.slots[base]}", over(shape, shape, st))],
                      lambda fresh, names: None, [(f"q{s}", lambda: "t0")], [])
        b.append("    }")
        return s

    def as_array(self, a):
        """Declares p<slot>, the data of `a` (converted to a C-contiguous array)."""
        s = self.slots[a]
        ctype, typenum = C_TYPES[a.aval.dtype], C_TYPENUMS[a.aval.dtype]
        self.body.append(f"        if (as_carray(&v[{s}], {typenum}, {a.aval.ndim}, "
                         f"{self.shape_array(a.aval.shape)}) < 0) goto done;")
        self.body.append(f"        const {ctype} *restrict p{s} = (const {ctype} *)"
                         f"PyArray_DATA((PyArrayObject *)v[{s}]);")

    def new_array(self, s, aval, zero=False):
        ctype, typenum = C_TYPES[aval.dtype], C_TYPENUMS[aval.dtype]
        new = (f"PyArray_ZEROS({aval.ndim}, {self.shape_array(aval.shape)}, {typenum}, 0)"
               if zero else
               f"PyArray_SimpleNew({aval.ndim}, {self.shape_array(aval.shape)}, {typenum})")
        self.body.append(f"        v[{s}] = {new};")
        self.body.append(f"        if (v[{s}] == NULL) goto done;")
        self.body.append(f"        {ctype} *restrict q{s} = ({ctype} *)"
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
        k = len(self.py_segments)
        self.py_segments.append(fn.run)
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

    # native segments --------------------------------------------------------------------

    def shape_array(self, shape) -> str:
        name = self.shape_names.get(shape)
        if name is None:
            name = self.shape_names[shape] = f"shape{len(self.shape_names)}"
            dims = ", ".join(str(d) for d in shape) or "0"
            self.statics.append(f"static npy_intp {name}[] = {{{dims}}};")
        return name


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
        reads, done = [], set()
        for a in ins:
            base, st = self.alias.get(a, (a, contiguous(a.aval.shape)))
            if base not in done:
                done.add(base)
                self.as_array(base)
            reads.append((C_TYPES[a.aval.dtype], f"p{self.slots[base]}",
                          over(shape, a.aval.shape, st)))
        for v in outs:
            self.new_array(self.slot(v), v.aval)
        reductions = {}
        for eqn in eqns:
            out = eqn.outvars[0]
            if out in seg.reduced:
                s = self.slot(out)
                self.new_array(s, out.aval)
                c = CExpr(out.aval.dtype, None, self.functions)
                init, combine, is_sum = eqn.primitive.rules["native"](c, eqn)
                axes = eqn.params["axes"]
                kept = tuple(d not in axes for d in range(len(shape)))
                reductions[eqn] = Reduction(s, C_TYPES[out.aval.dtype], kept, init, combine,
                                            is_sum)
        names: dict = {}

        def body(fresh_local, read_names):
            names.update(zip(ins, read_names))
            for eqn in eqns:
                args = [c_constant(a.val, a.aval.dtype) if type(a) is Literal else names[a]
                        for a in eqn.invars]
                if eqn in reductions:
                    reductions[eqn].local = args[0]
                    continue
                out = eqn.outvars[0]
                c = CExpr(out.aval.dtype, fresh_local, self.functions)
                expression = eqn.primitive.rules["native"](c, eqn, *args)
                names[out] = fresh_local(C_TYPES[out.aval.dtype], expression)

        writes = [(f"q{self.slots[v]}", lambda v=v: names[v]) for v in outs]
        loop_nest(b, shape, reads, body, writes, list(reductions.values()))
        b.append("    }")

    def gemm_segment(self, i: int, eqn):
        """A product through BLAS: batch x (M x K) @ (K x N), written row-major."""
        g = eqn.primitive.rules["native"](eqn)
        lhs, rhs = eqn.invars
        out = eqn.outvars[0]
        b = self.body
        self.uses_blas = True
        fn = "didax_sgemm" if out.aval.dtype == np.float32 else "didax_dgemm"
        b.append("    {  /* a product through BLAS */")
        self.as_array(lhs)
        self.as_array(rhs)
        s = self.slot(out)
        self.new_array(s, out.aval, zero=g.K == 0)
        if g.M * g.N * g.K:
            pl, pr = f"p{self.slots[lhs]}", f"p{self.slots[rhs]}"
            b.append(f"        for (npy_intp k = 0; k < {g.batch}; k++)")
            b.append(f"            {fn}(101, {112 if g.trans_a else 111}, "
                     f"{112 if g.trans_b else 111}, {g.M}, {g.N}, {g.K}, 1, "
                     f"{pl} + k * {g.M * g.K}, {g.lda}, {pr} + k * {g.K * g.N}, {g.ldb}, 0, "
                     f"q{s} + k * {g.M * g.N}, {g.N});")
        b.append("    }")

    # the module -------------------------------------------------------------------------

    def module_source(self, n_in: int) -> str:
        n_slots = max(self.n_slots, 1)
        parts = [
            module_prelude(self.vector_math, self.functions),
            *self.statics,
            "",
            _AS_CARRAY,
            _GEMM,
            "static PyObject *run(PyObject *state, PyObject *const *args, Py_ssize_t nargs) {",
            "    PyObject *segments = PyTuple_GET_ITEM(state, 0);",
            "    PyObject *consts = PyTuple_GET_ITEM(state, 1);",
            f"    PyObject *v[{n_slots}] = {{NULL}};",
            "    PyObject *result = NULL;",
            f"    if (nargs != {n_in}) {{",
            f'        PyErr_Format(PyExc_TypeError, "expected {n_in} arguments, got %zd", '
            "nargs);",
            "        return NULL;",
            "    }",
            *self.body,
            "done:",
            f"    for (int k = 0; k < {n_slots}; k++) Py_XDECREF(v[k]);",
            "    return result;",
            "}",
            "",
            "static PyMethodDef run_def = {\"run\", (PyCFunction)(void (*)(void))run, "
            "METH_FASTCALL, NULL};",
            "",
            "/* make((segments, consts, (sgemm, dgemm))): the compiled function, holding what",
            "   it calls; the BLAS functions' addresses. */",
            "static PyObject *make(PyObject *self, PyObject *state) {",
            "    if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != 3",
            "        || !PyTuple_Check(PyTuple_GET_ITEM(state, 2))",
            "        || PyTuple_GET_SIZE(PyTuple_GET_ITEM(state, 2)) != 2) {",
            '        PyErr_SetString(PyExc_TypeError, "make expects (segments, consts, blas)");',
            "        return NULL;",
            "    }",
            "    didax_sgemm = (sgemm_t)PyLong_AsVoidPtr("
            "PyTuple_GET_ITEM(PyTuple_GET_ITEM(state, 2), 0));",
            "    didax_dgemm = (dgemm_t)PyLong_AsVoidPtr("
            "PyTuple_GET_ITEM(PyTuple_GET_ITEM(state, 2), 1));",
            "    if (PyErr_Occurred()) return NULL;",
            "    return PyCFunction_NewEx(&run_def, state, NULL);",
            "}",
            "",
            "static PyMethodDef methods[] = {{\"make\", make, METH_O, NULL}, "
            "{NULL, NULL, 0, NULL}};",
            "static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "
            "DIDAX_STR(DIDAX_MODULE), NULL, -1, methods};",
            "PyMODINIT_FUNC DIDAX_CAT(PyInit_, DIDAX_MODULE)(void) {",
            "    import_array();",
            "    return PyModule_Create(&module_def);",
            "}",
        ]
        return "\n".join(parts) + "\n"


_AS_CARRAY = r"""/* Makes *slot a C-contiguous, aligned array of `typenum` (converting if needed) and
   checks its shape. */
static int as_carray(PyObject **slot, int typenum, int ndim, const npy_intp *dims) {
    PyObject *o = *slot;
    if (!(PyArray_CheckExact(o) && PyArray_TYPE((PyArrayObject *)o) == typenum
          && PyArray_ISCARRAY_RO((PyArrayObject *)o))) {
        PyObject *c = PyArray_FROMANY(o, typenum, 0, 0, NPY_ARRAY_CARRAY_RO);
        if (c == NULL) return -1;
        Py_DECREF(o);
        *slot = o = c;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_NDIM(a) != ndim) goto bad;
    for (int d = 0; d < ndim; d++) if (PyArray_DIMS(a)[d] != dims[d]) goto bad;
    return 0;
bad:
    PyErr_SetString(PyExc_TypeError, "didax native: an operand has an unexpected shape");
    return -1;
}
"""

_GEMM = r"""/* cblas_?gemm of the 64-bit-integer OpenBLAS NumPy ships (see native/blas.py). */
typedef void (*sgemm_t)(int, int, int, npy_int64, npy_int64, npy_int64, float, const float *,
                        npy_int64, const float *, npy_int64, float, float *, npy_int64);
typedef void (*dgemm_t)(int, int, int, npy_int64, npy_int64, npy_int64, double,
                        const double *, npy_int64, const double *, npy_int64, double, double *,
                        npy_int64);
static sgemm_t didax_sgemm;
static dgemm_t didax_dgemm;
"""
