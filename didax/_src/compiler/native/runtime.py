"""The helpers every native module calls (checking operands, finding NumPy's loops, reusing
and copying arrays), compiled once per machine into a module of their own instead of into
every module.

A small module's build was 0.19 s, of which 0.05 s is loading the precompiled headers and
0.10 s compiling these helpers and NumPy's `import_array`, identical in every module. A
module now declares the helpers' table (`DECLARATIONS`) and reaches them, and NumPy's C API,
through the table's address, which its `make` receives; the runtime is built (and cached, as
any module of kernels) the first time a module needs it, while the module itself builds.
"""
from __future__ import annotations

import threading

from didax._src.compiler.native.kernel_module import KernelModule

# What a module (each of its translation units) declares. `size` guards against a table
# of another layout (a module of another didax in the same cache: its source, and so its
# key, would differ, but a check costs nothing).
DECLARATIONS = r"""typedef struct { PyUFuncGenericFunction fn; void *data; } didax_loop;
/* Sets of reused arrays a compiled function keeps, one per call running at once (pmap's
   shards; a NumPy-tier segment or a long loop lets other threads in); further calls
   allocate their own. (Claimed under the GIL.) */
#define DIDAX_KEPT_SETS 4
/* A module's function, as the runtime calls it and makes it. */
struct didax_layout {
    Py_ssize_t n_in, n_slots, n_keep, n_results, n_loops;
    const Py_ssize_t *results;  /* the slots holding the results, in order */
    /* Computes the results into the slots `v` (NULL at first); 0, or -1 with an
       exception set. */
    int (*body)(PyObject **v, PyObject **keep, PyObject *segments, PyObject *consts,
                PyObject *const *args);
    PyObject **kept;            /* DIDAX_KEPT_SETS sets of n_keep arrays */
    int *kept_busy;             /* whether a call holds each set */
    PyMethodDef *run;
    didax_loop *loops;          /* the module's table of NumPy's loops, and its cells */
    int **threads;
    void ***array_api;
    int *array_version;
};
struct didax_runtime {
    size_t size;
    void **array_api;
    int array_version;
    int (*as_carray)(PyObject **slot, int typenum, int ndim, const npy_intp *dims);
    int (*find_loops)(PyObject *table, didax_loop *loops);
    PyObject *(*scratch)(PyObject **keep, int ndim, npy_intp *dims, int typenum);
    int (*copy_into)(PyObject *dst, PyObject *src, int typenum);
    int (*window)(PyObject **win, PyObject *base, char *data, int ndim, npy_intp *dims,
                  int typenum);
    PyObject *(*fresh_copy)(PyObject *src, int typenum, int ndim, npy_intp *dims);
    PyObject *(*call)(const struct didax_layout *layout, PyObject *state,
                      PyObject *const *args, Py_ssize_t nargs);
    PyObject *(*make)(const struct didax_layout *layout, PyObject *state);
};"""

# In a module: the names its code calls, through the table.
MODULE_NAMES = r"""extern __attribute__((visibility("hidden")))
    const struct didax_runtime *didax_rt;
#define as_carray (didax_rt->as_carray)
#define find_loops (didax_rt->find_loops)
#define scratch (didax_rt->scratch)
#define copy_into (didax_rt->copy_into)
#define window (didax_rt->window)
#define fresh_copy (didax_rt->fresh_copy)"""



def module_function(n_in: int, n_slots: int, n_keep: int, results: list, n_loops: int) -> str:
    """A module's `run` and `make` (and its init), whose work the runtime does: `didax_body` (a
    function of the module's, defined before) computes the results into the slots
    `results`."""
    return f"""static PyObject *didax_kept[DIDAX_KEPT_SETS * {n_keep}];
static int didax_kept_busy[DIDAX_KEPT_SETS];
static const Py_ssize_t didax_results[] = {{{", ".join(map(str, results)) or "0"}}};
static PyObject *run(PyObject *state, PyObject *const *args, Py_ssize_t nargs);
static PyMethodDef run_def = {{"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL, NULL}};
static const struct didax_layout didax_layout = {{{n_in}, {n_slots}, {n_keep}, {len(results)},
    {n_loops}, didax_results, didax_body, didax_kept, didax_kept_busy,
    &run_def, didax_loops, &didax_threads,
    &PyArray_API, &PyArray_RUNTIME_VERSION}};
__attribute__((visibility("hidden"))) const struct didax_runtime *didax_rt;

static PyObject *run(PyObject *state, PyObject *const *args, Py_ssize_t nargs) {{
    return didax_rt->call(&didax_layout, state, args, nargs);
}}

/* make((segments, consts, loops, threads, runtime)): see the runtime's make. */
static PyObject *make(PyObject *self, PyObject *state) {{
    if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != 5) {{
        PyErr_SetString(PyExc_TypeError, "make expects (segments, consts, loops, threads, "
                        "runtime)");
        return NULL;
    }}
    const struct didax_runtime *rt = PyLong_AsVoidPtr(PyTuple_GET_ITEM(state, 4));
    if (rt == NULL) return NULL;
    if (rt->size != sizeof(struct didax_runtime)) {{
        PyErr_SetString(PyExc_RuntimeError, "didax native: the runtime's table has another "
                        "layout than the module was built for");
        return NULL;
    }}
    didax_rt = rt;
    return rt->make(&didax_layout, state);
}}

static PyMethodDef methods[] = {{{{"make", make, METH_O, NULL}}, {{NULL, NULL, 0, NULL}}}};
static struct PyModuleDef module_def = {{PyModuleDef_HEAD_INIT, DIDAX_STR(DIDAX_MODULE), NULL,
                                        -1, methods}};
PyMODINIT_FUNC DIDAX_CAT(PyInit_, DIDAX_MODULE)(void) {{
    return PyModule_Create(&module_def);
}}"""

_HELPERS = r"""#include <string.h>
/* Makes *slot a C-contiguous, aligned array of `typenum` (converting if needed)
   and checks its shape. */
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

/* Fills `loops` with NumPy's inner loops named by `table`: ((ufunc, (type
   numbers of its operands and results)), ...). 0, or -1 with an exception set. */
static int find_loops(PyObject *table, didax_loop *loops) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(table); k++) {
        PyObject *entry = PyTuple_GET_ITEM(table, k);
        PyObject *ufunc = PyTuple_GET_ITEM(entry, 0), *types = PyTuple_GET_ITEM(entry, 1);
        if (strcmp(Py_TYPE(ufunc)->tp_name, "numpy.ufunc") != 0) {
            PyErr_SetString(PyExc_TypeError, "didax native: a loop's table names no ufunc");
            return -1;
        }
        PyUFuncObject *u = (PyUFuncObject *)ufunc;
        int j, found = 0;
        for (j = 0; j < u->ntypes && !found; j++) {
            found = PyTuple_GET_SIZE(types) == u->nargs && u->functions[j] != NULL;
            for (int a = 0; found && a < u->nargs; a++)
                found = u->types[j * u->nargs + a] == PyLong_AsLong(PyTuple_GET_ITEM(types, a));
        }
        if (!found) {
            PyErr_Format(PyExc_RuntimeError, "didax native: NumPy's %s has no loop for the "
                         "types the module needs", u->name);
            return -1;
        }
        loops[k].fn = u->functions[j - 1];
        loops[k].data = u->data ? u->data[j - 1] : NULL;
    }
    return 0;
}

/* keep[k] again if nothing but keep holds it (the previous call's array, dead
   now), else a new array left in keep[k]; a new reference either way. */
static PyObject *scratch(PyObject **keep, int ndim, npy_intp *dims, int typenum) {
    PyObject *a = *keep;
    if (a == NULL || Py_REFCNT(a) != 1) {
        a = PyArray_SimpleNew(ndim, dims, typenum);
        if (a == NULL) return NULL;
        Py_XDECREF(*keep);
        *keep = a;
    }
    Py_INCREF(a);
    return a;
}

/* Copies the value `src` (an array or a NumPy or Python scalar) into the C-contiguous array
   `dst` of the same shape. */
static int copy_into(PyObject *dst, PyObject *src, int typenum) {
    if (dst == src) return 0;
    PyArrayObject *d = (PyArrayObject *)dst;
    PyObject *c = PyArray_FROMANY(src, typenum, 0, 0, NPY_ARRAY_CARRAY_RO);
    if (c == NULL) return -1;
    if (PyArray_SIZE((PyArrayObject *)c) != PyArray_SIZE(d)) {
        Py_DECREF(c);
        PyErr_SetString(PyExc_RuntimeError, "didax native: a result has an unexpected shape");
        return -1;
    }
    memcpy(PyArray_DATA(d), PyArray_DATA((PyArrayObject *)c), PyArray_NBYTES(d));
    Py_DECREF(c);
    return 0;
}

/* *win: an array of `ndim`, `dims` and `typenum` over `data` inside the C-contiguous array
   `base` (one slice of a stacked value). The object is reused, its data pointer moved, when
   nothing but *win holds it; 0, or -1 with an exception set. */
static int window(PyObject **win, PyObject *base, char *data, int ndim, npy_intp *dims,
                  int typenum) {
    PyObject *w = *win;
    if (w != NULL && Py_REFCNT(w) == 1) {
        ((PyArrayObject_fields *)w)->data = data;
        return 0;
    }
    Py_XDECREF(w);
    *win = NULL;
    PyArray_Descr *descr = PyArray_DescrFromType(typenum);
    if (descr == NULL) return -1;
    w = PyArray_NewFromDescr(&PyArray_Type, descr, ndim, dims, NULL, data,
                             NPY_ARRAY_CARRAY, NULL);
    if (w == NULL) return -1;
    Py_INCREF(base);
    if (PyArray_SetBaseObject((PyArrayObject *)w, base) < 0) {
        Py_DECREF(w);
        return -1;
    }
    *win = w;
    return 0;
}

/* A new C-contiguous copy of the array value `src` (of `typenum`), for a carry buffer. */
static PyObject *fresh_copy(PyObject *src, int typenum, int ndim, npy_intp *dims) {
    PyObject *a = PyArray_SimpleNew(ndim, dims, typenum);
    if (a == NULL) return NULL;
    if (copy_into(a, src, typenum) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* The module's function on `args`: its results, a tuple. */
static PyObject *call(const struct didax_layout *l, PyObject *state, PyObject *const *args,
                      Py_ssize_t nargs) {
    if (nargs != l->n_in) {
        PyErr_Format(PyExc_TypeError, "expected %zd arguments, got %zd", l->n_in, nargs);
        return NULL;
    }
    PyObject *on_stack[256];
    PyObject **v = l->n_slots <= 256 ? on_stack : PyMem_Calloc(l->n_slots, sizeof(PyObject *));
    if (v == NULL) return PyErr_NoMemory();
    if (v == on_stack) memset(v, 0, l->n_slots * sizeof(PyObject *));
    int mine = 0;
    while (mine < DIDAX_KEPT_SETS && l->kept_busy[mine]) mine++;
    PyObject **own = NULL, **keep;
    if (mine < DIDAX_KEPT_SETS) {
        keep = l->kept + mine * l->n_keep;
        l->kept_busy[mine] = 1;
    } else {
        keep = own = PyMem_Calloc(l->n_keep, sizeof(PyObject *));
        if (own == NULL) {
            if (v != on_stack) PyMem_Free(v);
            return PyErr_NoMemory();
        }
    }
    PyObject *result = NULL;
    if (l->body(v, keep, PyTuple_GET_ITEM(state, 0), PyTuple_GET_ITEM(state, 1), args) == 0) {
        result = PyTuple_New(l->n_results);
        for (Py_ssize_t k = 0; result != NULL && k < l->n_results; k++) {
            PyObject *r = v[l->results[k]];
            Py_INCREF(r);
            PyTuple_SET_ITEM(result, k, r);
        }
    }
    for (Py_ssize_t k = 0; k < l->n_slots; k++) Py_XDECREF(v[k]);
    if (v != on_stack) PyMem_Free(v);
    if (own == NULL) l->kept_busy[mine] = 0;
    else {
        for (Py_ssize_t k = 0; k < l->n_keep; k++) Py_XDECREF(own[k]);
        PyMem_Free(own);
    }
    return result;
}

/* make((segments, consts, loops, threads, runtime)): the module's compiled function,
   holding what it calls; `loops`: the NumPy loops it calls, ((ufunc, (type numbers...)),
   ...); `threads`: the address of the C int counting the parallel loops' threads;
   `runtime`: this table's address (which the module read already). */
static PyObject *make(const struct didax_layout *l, PyObject *state) {
    PyObject *loops = PyTuple_GET_ITEM(state, 2);
    if (!PyTuple_Check(loops) || PyTuple_GET_SIZE(loops) != l->n_loops) {
        PyErr_SetString(PyExc_TypeError, "make expects (segments, consts, loops, threads, "
                        "runtime), with a loop for each of the module's");
        return NULL;
    }
    *l->array_api = PyArray_API;
    *l->array_version = PyArray_RUNTIME_VERSION;
    if (find_loops(loops, l->loops) < 0) return NULL;
    int *threads = (int *)PyLong_AsVoidPtr(PyTuple_GET_ITEM(state, 3));
    if (threads == NULL) return NULL;
    *l->threads = threads;
    return PyCFunction_NewEx(l->run, state, NULL);
}

static struct didax_runtime table = {sizeof(struct didax_runtime), NULL, 0, as_carray,
                                     find_loops, scratch, copy_into, window, fresh_copy,
                                     call, make};

/* table(): the table's address (NumPy's C API filled in: this module imported it). */
static PyObject *table_address(PyObject *self, PyObject *args) {
    table.array_api = PyArray_API;
    table.array_version = PyArray_RUNTIME_VERSION;
    return PyLong_FromVoidPtr(&table);
}
"""

_RUNTIME = KernelModule(DECLARATIONS + "\n" + _HELPERS, ("table_address",),
                        makes_preludes=False)
_address: list = []
_lock = threading.Lock()


def prepare():
    """Starts building the runtime if it is neither loaded nor cached (a module being built
    needs it next), so that the two compile at once. (Only builds: a build that fails is
    reported once, by the `address` the module's build asks for next.)"""
    if not _address:
        threading.Thread(target=_RUNTIME.load, name="didax-runtime", daemon=True).start()


def address(cached_only: bool = False) -> int | None:
    """The address of the runtime's table, building the runtime if it is not cached (with
    `cached_only`: None then). Raises RuntimeError where it cannot be built (then no native
    module can run either)."""
    with _lock:
        if not _address:
            module = _RUNTIME.get_cached() if cached_only else _RUNTIME.load()
            if module is None:
                if cached_only:
                    return None
                raise RuntimeError("didax native: the runtime module could not be built")
            _address.append(module.table_address())
        return _address[0]


def source() -> str:
    """The runtime's C source (as built)."""
    return _RUNTIME.source()
