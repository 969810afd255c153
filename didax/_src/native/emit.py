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
from didax._src.native.rules import C_TYPENUMS, C_TYPES, CExpr, c_constant
from didax._src.native.toolchain import module_prelude


class Plan(NamedTuple):
    source: str              # C source of the module (its init function: PyInit_<name>)
    python_segments: tuple   # the NumPy-tier functions the C code calls
    consts: tuple            # NumPy values the C code reads (constants, literal results)
    native_equations: int    # how many equations run natively


def native_ok(eqn) -> bool:
    """Whether `eqn` runs natively: a native rule that accepts it, dtypes C handles, and
    operands that broadcast to its one result."""
    rule = eqn.primitive.rules.get("native")
    if rule is None or eqn.primitive.multiple_results or len(eqn.outvars) != 1:
        return False
    out = eqn.outvars[0].aval
    for a in (*eqn.invars, eqn.outvars[0]):
        if a.aval.dtype not in C_TYPES:
            return False
    for a in eqn.invars:
        s = a.aval.shape
        if len(s) > len(out.shape) or any(d not in (1, o) for d, o in
                                          zip(s[::-1], out.shape[::-1])):
            return False
    return rule.when(eqn)


def plan(closed: ClosedJaxpr, vector_math: bool) -> Plan | None:
    """The module for `closed`, or None if no equation runs natively. Its name is the
    macro DIDAX_MODULE, defined when it is built (see toolchain.build)."""
    return _Emitter(closed, vector_math).emit()


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

    # segments ---------------------------------------------------------------------------

    def segments(self):
        """[(native, [equations])], in order."""
        out = []
        for eqn in self.jaxpr.eqns:
            ok = native_ok(eqn)
            shape = eqn.outvars[0].aval.shape if ok else None
            if out and out[-1][0] == ok and (not ok or out[-1][2] == shape):
                out[-1][1].append(eqn)
            else:
                out.append((ok, [eqn], shape))
        return [(ok, eqns) for ok, eqns, _ in out]

    def slot(self, v) -> int:
        s = self.slots.get(v)
        if s is None:
            s = self.slots[v] = len(self.slots)
        return s

    def emit(self) -> Plan | None:
        segs = self.segments()
        n_native = sum(len(e) for ok, e in segs if ok)
        if not n_native:
            return None
        j = self.jaxpr
        # Where each variable is read: the segments' indices, and len(segs) for results.
        readers: dict = {}
        for i, (_, eqns) in enumerate(segs):
            for eqn in eqns:
                for a in eqn.invars:
                    if type(a) is not Literal:
                        readers.setdefault(a, set()).add(i)
        for a in j.outvars:
            if type(a) is not Literal:
                readers.setdefault(a, set()).add(len(segs))
        self.readers = readers
        self.last_reader = {a: max(r) for a, r in readers.items()}
        for k, v in enumerate(j.invars):
            self.body.append(f"    v[{self.slot(v)}] = args[{k}]; Py_INCREF(args[{k}]);")
        for v, c in zip(j.constvars, self.closed.consts):
            value = c._value if type(c) is core.Array else c
            self._hold_const(self.slot(v), np.array(value, v.aval.dtype, order="C"))
        for i, (ok, eqns) in enumerate(segs):
            if ok:
                self.native_segment(i, eqns)
            else:
                self.python_segment(i, eqns)
            self.release(i)
        result_items = []
        for k, a in enumerate(j.outvars):
            if type(a) is Literal:
                s = self.slot(("literal result", k))
                self._hold_const(s, np.asarray(a.val, a.aval.dtype))
            else:
                s = self.slots[a]
            result_items.append(s)
        self.body.append(f"    result = PyTuple_New({len(result_items)});")
        self.body.append("    if (result == NULL) goto done;")
        for k, s in enumerate(result_items):
            self.body.append(f"    Py_INCREF(v[{s}]); PyTuple_SET_ITEM(result, {k}, v[{s}]);")
        source = self.module_source(len(j.invars))
        return Plan(source, tuple(self.py_segments), tuple(self.consts), n_native)

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

    def native_segment(self, i: int, eqns):
        shape = eqns[0].outvars[0].aval.shape
        rank, size = len(shape), math.prod(shape)
        defined = set()
        ins = []  # operands read from arrays
        for eqn in eqns:
            for a in eqn.invars:
                if type(a) is not Literal and a not in defined and a not in ins:
                    ins.append(a)
            defined.add(eqn.outvars[0])
        outs = [e.outvars[0] for e in eqns
                if type(e.outvars[0]) is not DropVar and self.needed_after(e.outvars[0], i)]
        b = self.body
        b.append(f"    {{  /* native loop over {shape}: {len(eqns)} equations */")
        for a in ins:
            s = self.slots[a]
            ctype, typenum = C_TYPES[a.aval.dtype], C_TYPENUMS[a.aval.dtype]
            b.append(f"        if (as_carray(&v[{s}], {typenum}, {a.aval.ndim}, "
                     f"{self.shape_array(a.aval.shape)}) < 0) goto done;")
            b.append(f"        const {ctype} *restrict p{s} = (const {ctype} *)"
                     f"PyArray_DATA((PyArrayObject *)v[{s}]);")
        for v in outs:
            s = self.slot(v)
            ctype, typenum = C_TYPES[v.aval.dtype], C_TYPENUMS[v.aval.dtype]
            b.append(f"        v[{s}] = PyArray_SimpleNew({rank}, {self.shape_array(shape)}, "
                     f"{typenum});")
            b.append(f"        if (v[{s}] == NULL) goto done;")
            b.append(f"        {ctype} *restrict q{s} = ({ctype} *)"
                     f"PyArray_DATA((PyArrayObject *)v[{s}]);")
        # Each operand's element strides over the result's dimensions (0 where broadcast).
        strides = {}
        for a in ins:
            s = (1,) * (rank - a.aval.ndim) + a.aval.shape
            st, acc = [], 1
            for d in reversed(s):
                st.append(0 if d == 1 else acc)
                acc *= d
            strides[a] = st[::-1]
        flat = all(a.aval.shape == shape or math.prod(a.aval.shape) == 1 for a in ins)
        indent = "        "
        if flat:  # one loop over all elements
            index = {a: "i" if a.aval.shape == shape else "0" for a in ins}
            loops, out_index = [("i", size)], "i"
        else:  # a loop per dimension, the innermost vectorized
            index = {}
            for a in ins:
                terms = [f"i{d} * {strides[a][d]}" for d in range(rank - 1) if strides[a][d]]
                base = " + ".join(terms) or "0"
                index[a] = f"{base} + j" if strides[a][-1] else base
            row = " + ".join(f"i{d} * {math.prod(shape[d + 1:])}" for d in range(rank - 1))
            loops = [(f"i{d}", shape[d]) for d in range(rank - 1)] + [("j", shape[-1])]
            out_index = f"{row} + j"
        for n, (var, extent) in enumerate(loops):
            if n == len(loops) - 1:
                b.append(f"{indent}#pragma omp simd")
            b.append(f"{indent}for (npy_intp {var} = 0; {var} < {extent}; {var}++) {{")
            indent += "    "
        names: dict = {}
        counter = [0]

        def fresh_local(ctype, expression):
            n = f"t{counter[0]}"
            counter[0] += 1
            b.append(f"{indent}const {ctype} {n} = {expression};")
            return n

        for a in ins:
            names[a] = fresh_local(C_TYPES[a.aval.dtype], f"p{self.slots[a]}[{index[a]}]")
        for eqn in eqns:
            args = [c_constant(a.val, a.aval.dtype) if type(a) is Literal else names[a]
                    for a in eqn.invars]
            out = eqn.outvars[0]
            c = CExpr(out.aval.dtype, fresh_local, self.functions)
            expression = eqn.primitive.rules["native"](c, eqn, *args)
            names[out] = fresh_local(C_TYPES[out.aval.dtype], expression)
        for v in outs:
            b.append(f"{indent}q{self.slots[v]}[{out_index}] = {names[v]};")
        for _ in loops:
            indent = indent[:-4]
            b.append(f"{indent}}}")
        b.append("    }")

    # the module -------------------------------------------------------------------------

    def module_source(self, n_in: int) -> str:
        n_slots = max(len(self.slots), 1)
        parts = [
            module_prelude(self.vector_math, self.functions),
            *self.statics,
            "",
            _AS_CARRAY,
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
            "/* make((segments, consts)): the compiled function, holding what it calls. */",
            "static PyObject *make(PyObject *self, PyObject *state) {",
            "    if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != 2) {",
            '        PyErr_SetString(PyExc_TypeError, "make expects (segments, consts)");',
            "        return NULL;",
            "    }",
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
