"""The core: abstract values, primitives, tracers, and the interpreter context.

A program is a composition of primitives. `Primitive.bind` hands each application to
the *current interpreter*, held in a thread-local context. An interpreter runs its
rules with its parent current, so interpreters nest (higher-order derivatives come for
free). A tracer belongs to exactly one interpreter; values of other interpreters are
constants to it, which is what prevents perturbation confusion.
"""
from __future__ import annotations

import dataclasses
import threading
import warnings
from typing import Any, Callable

import numpy as np

from didax._src import caches, dtypes
from didax._src.config import config
from didax._src.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
    concretization_error,
    differentiated_value_error,
    format_source_info,
    user_error,
    user_location,
    user_source_info,
)

# NumPy's floating-point warnings (log(0), 0/0, overflow) from didax's own impls are
# silenced, as JAX computes inf/nan silently; a filter costs nothing per operation, where
# np.errstate around every impl would cost more than the impl itself.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"didax\._src(\.|$)")

# --------------------------------------------------------------------------------------
# Abstract values


_interned_avals = caches.memo("core.avals", interns=True)  # (shape, dtype, weak) -> its one


class ShapedArray:
    """The type of an array value: shape, dtype, and whether the dtype is weak.

    Interned: one object per (shape, dtype, weak_type), so equal types are the same object
    and comparing or hashing them (every cache keyed by types: jit's, abstract evaluation's)
    is by identity, in C. Never mutate one.
    """

    __slots__ = ("shape", "dtype", "weak_type")
    # JAX's types also say how a value is laid out over devices; a didax value is one array
    # in host memory, so code reading `typeof(x).sharding` to pass it on gets None.
    sharding = None

    def __new__(cls, shape, dtype, weak_type: bool = False, *, sharding=None,
                manual_axis_type=None, memory_space=None):
        # (JAX's other type fields, which code building JAX's types may pass, are not kept:
        # one memory, no device axes; see `sharding` above)
        shape = tuple(shape)
        dtype = np.dtype(dtype)
        weak_type = bool(weak_type)
        key = (shape, dtype, weak_type)
        a = _interned_avals.get(key)
        if a is None:
            a = object.__new__(cls)
            a.shape = tuple(int(d) for d in shape)
            a.dtype = dtype
            a.weak_type = weak_type
            a = caches.add(_interned_avals, key, a)  # one object even across threads
        return a

    def __reduce__(self):
        return (ShapedArray, (self.shape, self.dtype, self.weak_type))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def update(self, shape=None, dtype=None, weak_type=None) -> ShapedArray:
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    def str_short(self) -> str:
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"

    def to_tangent_aval(self) -> ShapedArray:
        if dtypes.kind(self.dtype) in "fc":  # inexact values are their own tangent type
            return self
        return ShapedArray(self.shape, dtypes.tangent_dtype(self.dtype), self.weak_type)


class AbstractToken:
    """The type of a token (`lax.create_token`, `lax.after_all`), which holds no data: one
    object, printed `Tok` in jaxprs, as JAX's. Only primitives declaring the `tokens` trait
    take one as an operand."""

    __slots__ = ()
    _the = None
    sharding = None
    # Inside compiled code a token is this 0-d boolean array: impls return it, calls pass it
    # for a Token argument, and `value_from_impl` makes the Token value of it.
    buffer = np.False_
    shape = ()
    dtype = np.dtype(bool)
    weak_type = False
    ndim = 0
    size = 1

    def __new__(cls):
        if cls._the is None:
            cls._the = object.__new__(cls)
        return cls._the

    def __reduce__(self):
        return (AbstractToken, ())

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def str_short(self) -> str:
        return "Tok"

    def __repr__(self):
        return "AbstractToken()"

    def to_tangent_aval(self):
        return self

    def strip_weak_type(self):
        return self

    def value_from_impl(self, value) -> Token:
        return value if type(value) is Token else Token()


abstract_token = AbstractToken()


class Token:
    """A token's value: no data, only its place in the program (XLA sequences effects by
    them; didax runs ordered effects in program order, so nothing waits on one)."""

    __slots__ = ("__weakref__",)
    aval = abstract_token

    def block_until_ready(self):
        return self


def _shaped(shape: tuple, dtype: np.dtype, weak: bool) -> ShapedArray:
    """A ShapedArray from already-normalised fields (skips the constructor's conversions)."""
    a = _interned_avals.get((shape, dtype, weak))
    return a if a is not None else ShapedArray(shape, dtype, weak)


_PY_SCALARS = (bool, int, float, complex)


def _ndarray_aval(x) -> ShapedArray:
    return _shaped(np.shape(x), dtypes.canonicalize_dtype(np.asarray(x).dtype), False)


# The types of values get_aval knows, each with its function (JAX's `pytype_aval_mappings`):
# libraries add theirs, often copying the entry of `np.ndarray` for a subclass of their own.
pytype_aval_mappings: dict = {np.ndarray: _ndarray_aval}
pytype_aval_mappings.update((t, _ndarray_aval) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128))


def get_aval(x) -> ShapedArray:
    """The abstract value of any didax value, tracer, NumPy array or Python scalar."""
    if type(x) is Array:
        return x.aval
    if type(x) is np.ndarray:  # (plain NumPy arrays have no `aval`)
        return _shaped(x.shape, dtypes.canonicalize_dtype(x.dtype), False)
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if isinstance(x, (np.ndarray, np.generic)):  # before Python scalars: np.float64 is a float
        return _shaped(x.shape, dtypes.canonicalize_dtype(x.dtype), False)
    if isinstance(x, _PY_SCALARS):
        return _shaped((), dtypes.python_scalar_dtype(x), type(x) is not bool)
    mapping = pytype_aval_mappings.get(type(x))
    if mapping is not None:  # a type a library registered (as JAX's table lets it)
        return mapping(x)
    raise TypeError(
        f"Value {x!r} of type {type(x).__name__} is not a valid array: expected a didax Array, "
        "a NumPy array, or a Python scalar (bool, int, float, complex)."
    )


def concrete_value(x):
    """The concrete NumPy value behind `x`, or None if `x` is abstract (staged)."""
    if isinstance(x, Tracer):
        return x.to_concrete_value()
    value = getattr(x, "_value", None)
    if value is not None:
        return value
    if isinstance(x, (np.ndarray, np.generic) + _PY_SCALARS):
        return x
    return None


# --------------------------------------------------------------------------------------
# Primitives and their rules

# "partial_eval": a primitive's own split into known and unknown parts (control flow);
# others are staged whole when an input is unknown. "rewrite": jit's rewrite of its
# equations (see compiler/passes.rewrite_equations).
RULE_KINDS = ("impl", "abstract_eval", "jvp", "transpose", "batch", "partial_eval", "codegen",
              "native", "rewrite", "sharding")
PP_ALWAYS_HIDE = object()  # a `pp_hidden` value: never print this parameter


@dataclasses.dataclass(frozen=True)
class StackedLoop:
    """Where a loop over the leading axis of stacked operands (lax.scan's form) keeps what it
    is, each field the name of the param holding it: its body, a closed jaxpr (consts,
    carry, x) -> (carry, y); its number of steps; whether it runs backwards; how many of
    its operands are constants and carries (the stacked inputs follow)."""
    body: str
    length: str
    reverse: str
    num_consts: str
    num_carry: str


@dataclasses.dataclass(frozen=True)
class Traits:
    """Facts about a primitive that jit's passes, code generation and the interpreters read
    (they never compare names). Each primitive declares its record once, beside its rules
    (`Primitive.def_traits`); the defaults claim nothing."""

    # Effects and structure
    effectful: bool = False  # has effects: never removed, merged or evaluated at compile time
    tokens: bool = False  # takes tokens as operands (after_all): no other primitive does
    refs: bool = False  # makes, reads or writes mutable array references (state/): no other
    # primitive but a call takes one as an operand, and differentiation and vmap run its rules
    # even for operands without tangents or batch dimensions (a new reference gets a tangent,
    # and a value per example, that later writes update)
    call_jaxpr_param: str | None = None  # a call's param holding the jaxpr it applies to its
    # operands (after that jaxpr's own constants): jit inlines the call
    axis_name_param: str | None = None  # a collective's param naming the vmap axes (a name
    # or a tuple of names) it acts over: vmap batches it even when unbatched
    stacked_loop: StackedLoop | None = None  # a loop over stacked operands, and its params:
    # jit moves work out of its body (compiler/loop_passes.py)
    loop: bool = False  # runs a body many times (while, scan): one call of a function holding
    # one may be long, so jit's native tier loads its cached code before the first call
    # Algebra
    returns_operand: Callable | None = None  # eqn -> index of the operand it returns
    # unchanged when that operand has the result's type, or None: jit forwards it
    unit: Any = None  # u with op(x, u) == op(u, x) == x exactly: jit forwards x
    involution: bool = False  # op(op(x)) == x exactly: jit cancels the pair
    is_addition: bool = False  # x + y elementwise: jit sums a zero pad into its region in
    # place, and a loop's accumulation of products is one product after it
    cheap: bool = False  # elementwise, and cheaper per element than a read from memory: a
    # loop computes it again from stacked values it reads rather than read its result stacked
    # Products
    contraction_param: str | None = None  # a param holding dimension numbers ((lhs
    # contracting, rhs contracting), (lhs batch, rhs batch)) over which the primitive sums
    # the products of its two operands' elements (a dot_general): loops stack such products
    elementwise_form: Callable | None = None  # eqn -> equations computing exactly what jit
    # computes for it, elementwise (a product with nothing to sum: its operands multiplied,
    # read broadcast), or None: the native tier fuses them with their neighbours
    # Layout
    zero_pad_region: Callable | None = None  # eqn -> index text of where the operand lands
    # in an otherwise zero result, or None: jit adds the operand there instead
    permutation_param: str | None = None  # a param holding the permutation of its operand's
    # dimensions that is all the primitive does (a transpose)
    permuted_result: Callable | None = None  # (eqn, perm) -> (invars, params) of an equation
    # of this primitive computing its result permuted by `perm`, or None: jit computes a
    # product transposed for its only use that way, so it comes out row-major
    permuted_operand: Callable | None = None  # (eqn, i, perm) -> params with which it
    # computes the same result from what operand `i` is the permutation `perm` of, or None:
    # the eager backward pass drops such permutations (see interpreters/transpose)


class Primitive:
    """A primitive operation and every rule that gives it meaning, in one place.

    Rules are looked up by kind through `get_rule`; interpreters never switch on
    primitives. `absent` records rules deliberately left out, with the reason.
    """

    call_primitive = False  # whether it applies a function given as a parameter (JAX's flag:
    # libraries walking jaxprs read it)

    def __init__(self, name: str, *, multiple_results: bool = False, linear: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self.linear = linear
        self.rules: dict[str, Callable] = {}
        self.absent: dict[str, str] = {}
        self.impl = None
        self.abstract_eval = None
        self.pp_hidden: dict[str, Any] = {}  # params not printed when equal to these values
        self.pp_first: tuple = ()  # params printed before the others (which are sorted)
        self.pp_same_names: str | None = None  # a sub-jaxpr param whose binders print with
        # the names of the equation's own variables (as JAX prints calls)
        self.traits = Traits()  # what passes read instead of its name (see def_traits)
        # Result types of its applications without parameters to one operand, and to two
        # of one type (most eager operations), keyed by that operand type: read without
        # building a key (see `abstract_eval`, which fills them). Registered per primitive
        # object (two may share a name: a library's and ours).
        table = f"core.result_avals.{name}@{id(self):x}"
        self.types_of_one = caches.memo(f"{table}.one", limit=1024)
        self.types_of_pair = caches.memo(f"{table}.pair", limit=1024)

    def __repr__(self):
        return self.name

    # Result types are cached per (input types, parameters) unless a primitive has effects,
    # acts over named axes (whose binding is context), or sets this:
    types_depend_on_context = False

    def bind(self, *args, **params):
        return _ctx.interp.process_primitive(self, args, params)

    def def_rule(self, kind: str, fn: Callable | None = None):
        assert kind in RULE_KINDS, kind
        if fn is None:
            return lambda f: self.def_rule(kind, f)
        self.rules[kind] = fn
        if kind == "impl":
            self.impl = fn
        elif kind == "abstract_eval":
            self.abstract_eval = fn
        return fn

    def def_impl(self, fn):
        return self.def_rule("impl", fn)

    def def_abstract_eval(self, fn):
        return self.def_rule("abstract_eval", fn)

    def def_jvp(self, fn):
        return self.def_rule("jvp", fn)

    def def_transpose(self, fn):
        return self.def_rule("transpose", fn)

    def def_batch(self, fn):
        return self.def_rule("batch", fn)

    def def_traits(self, **facts):
        """Declares the primitive's traits (the fields of `Traits`), once, beside its rules."""
        assert self.traits == Traits(), f"traits of '{self.name}' declared twice"
        self.traits = Traits(**facts)

    def mark_absent(self, kind: str, reason: str):
        self.absent[kind] = reason

    def get_rule(self, kind: str) -> Callable:
        rule = self.rules.get(kind)
        if rule is None:
            reason = self.absent.get(kind)
            extra = f": {reason}" if reason else ""
            raise NotImplementedError(f"{kind} rule for '{self.name}' not implemented{extra}")
        return rule


# A registry of all primitives, so tests can enumerate primitive x rule kind.
all_primitives: dict[str, Primitive] = {}


def primitive(name: str, **kwargs) -> Primitive:
    p = Primitive(name, **kwargs)
    assert name not in all_primitives, f"primitive {name} defined twice"
    all_primitives[name] = p
    return p


# --------------------------------------------------------------------------------------
# Interpreters and the context that chooses them


class Interpreter:
    """Gives primitives a meaning. `level` is the nesting depth; 0 is evaluation."""

    level = 0
    active = True
    parent: Interpreter | None = None
    origin_info = None  # (file, line, function) of the user's line that started this
    # transformation, formatted when an error names it

    @property
    def origin(self) -> str:
        return format_source_info(self.origin_info) if self.origin_info else ""

    @property
    def main(self) -> Interpreter:
        """What tells this transformation apart from every other (JAX's trace tag): libraries
        test `tracer._trace.main is main`."""
        return self

    def process_primitive(self, prim: Primitive, args, params):
        raise NotImplementedError

    # `prim` applied without parameters to one operand or two: library functions' hottest
    # calls (jnp's arithmetic), which evaluation answers without packing them.
    def process_one(self, prim: Primitive, x):
        return self.process_primitive(prim, (x,), {})

    def process_pair(self, prim: Primitive, x, y):
        return self.process_primitive(prim, (x, y), {})

    # Functions with custom derivative rules, and checkpointed functions, are handed to
    # the current interpreter whole. By default they simply run; the differentiating and
    # staging interpreters override these (see custom_derivatives.py, checkpoint.py).
    def process_custom_jvp(self, fn, args):
        return fn.call(*args)

    def process_custom_vjp(self, fn, args):
        return fn.call(*args)

    def process_checkpoint(self, fn, args):
        return fn.call(*args)

    def run_in_parent(self, method: str, fn, args):
        """Hands a function application to the parent interpreter, made current."""
        prev = _ctx.interp
        _ctx.interp = self.parent
        try:
            return getattr(self.parent, method)(fn, args)
        finally:
            _ctx.interp = prev

    def check_foreign(self, x: Tracer):
        """A tracer that is not ours must belong to a live enclosing interpreter."""
        owner = x._interp
        if not owner.active or owner.level >= self.level:
            raise escaped_tracer_error(x)


def escaped_tracer_error(x: Tracer) -> UnexpectedTracerError:
    owner = x._interp
    created = x.creation_site()
    state = "has already ended" if not owner.active else "is not an enclosing one here"
    return UnexpectedTracerError(
        f"Encountered an unexpected tracer: a traced value of type {x.aval.str_short()} "
        f"from the {owner.describe()} transformation started at {owner.origin or '<unknown>'}, "
        f"which {state}.\n"
        f"  at {user_location(3)}\n"
        + (f"  The tracer was created at {created}.\n" if created else "")
        + "A tracer must not outlive its transformation: this usually means a traced value "
        "was stored in a global, a closure or an object attribute and used later. Return "
        "it from the transformed function instead."
    )


class _Context(threading.local):
    def __init__(self):
        self.interp: Interpreter = eval_interpreter
        self.phase: str | None = None  # "backward" while a backward pass runs: staged
        # equations record it, so a picture of a gradient tells its two passes apart
        self.compile_time_eval = False  # ensure_compile_time_eval: staging evaluates
        # operations on concrete values now (per thread, as the interpreter is)
        self.source_info = None  # the user's line of the equations being re-bound, where
        # it is not the innermost user frame (a checkpointed function's forward pass)


class EvalInterpreter(Interpreter):
    """Evaluates primitives on concrete NumPy data, checking types first.

    `process_primitive` is the one eager path: every primitive applied to concrete values,
    by a library, a rule or the user, runs here, so an eager result is what staging the same
    application and evaluating its jaxpr gives (the types from the same type rule, the values
    from the same impl)."""

    level = 0

    def describe(self):
        return "eval"

    def process_primitive(self, prim, args, params):
        if not params:
            n = len(args)
            if n == 2:
                return self._fast_pair(prim, *args)
            if n == 1:
                return self._fast_one(prim, args[0])
        return self._evaluated(prim, args, params)

    # One or two Arrays, no parameters and a cached single result type (most applications)
    # are spelled out: their type is one dictionary lookup, their impl one call, their result
    # built in place. (The impl gave this type's shape for these operand types when the type
    # was cached; impls are deterministic, so only the result's kind and dtype are checked
    # again.) Checking modes (debugging.py, result_shardings.py) replace process_pair and
    # process_one with the packing ones, never these.
    def _fast_pair(self, prim, x, y):
        if type(x) is Array and type(y) is Array:
            a = x.aval
            out_aval = (prim.types_of_pair.get(a) if y.aval is a
                        else _aval_cache.get((prim, a, y.aval)))
            if type(out_aval) is ShapedArray:
                out = prim.impl(x._value, y._value)
                if type(out) is _ndarray and out.dtype is out_aval.dtype:
                    r = _new_object(Array)
                    r._value = out
                    r.aval = out_aval
                    return r
                return Array.from_numpy(out, out_aval)
        return self._evaluated(prim, (x, y), {})

    def _fast_one(self, prim, x):
        if type(x) is Array:
            out_aval = prim.types_of_one.get(x.aval)
            if type(out_aval) is ShapedArray:
                out = prim.impl(x._value)
                if type(out) is _ndarray and out.dtype is out_aval.dtype:
                    r = _new_object(Array)
                    r._value = out
                    r.aval = out_aval
                    return r
                return Array.from_numpy(out, out_aval)
        return self._evaluated(prim, (x,), {})

    process_pair = _fast_pair
    process_one = _fast_one

    @staticmethod
    def _evaluated(prim, args, params):
        out_aval, out = _evaluate(prim, args, params)
        if prim.multiple_results:
            return [Array.from_numpy(o, a) if type(a) is ShapedArray else a.value_from_impl(o)
                    for o, a in zip(out, out_aval)]
        if type(out_aval) is not ShapedArray:  # a mutable array reference: its type makes
            return out_aval.value_from_impl(out)  # the box holding the impl's buffer
        return Array.from_numpy(out, out_aval)


def _evaluate(prim, args, params):
    """The type and NumPy value of `prim` applied to any operands."""
    avals, vals = _operands(args)
    return abstract_eval(prim, avals, params), prim.impl(*vals, **params)


def _operands(args):
    """The avals of `args` and their NumPy values (of the abstract dtype)."""
    avals = []
    vals = []
    for x in args:
        if type(x) is Array:
            vals.append(x._value)
            avals.append(x.aval)
            continue
        if isinstance(x, Tracer):
            raise escaped_tracer_error(x)
        aval = get_aval(x)
        avals.append(aval)
        # (a mutable array reference, the one value of another type, goes to impls as it is)
        vals.append(np.asarray(x, aval.dtype) if type(aval) is ShapedArray else x)
    return avals, vals


# The result types of applications, keyed by (primitive, input types, parameters): eager
# evaluation and staging type-check every application, and shape rules (broadcasting,
# reductions, products) cost more than a dictionary lookup. Only successes are cached, so
# errors are raised (and located) every time; the types are interned, so keys hash and compare
# by identity. Cleared when a flag changes (x64 mode changes result types) and when full.
# Applications without parameters to one operand, or two of one type, are the primitive's own
# tables (`types_of_one`, `types_of_pair`), keyed by the operand type alone.
_aval_cache = caches.memo("core.result_avals", limit=8192)


@config.on_change
def _clear_aval_cache(name, value):
    caches.clear("core.result_avals")  # (the shared table and every primitive's own)


def abstract_eval(prim: Primitive, avals, params):
    """Type-checks an application of `prim`; errors gain the user's line."""
    key = None
    if not (prim.traits.effectful or prim.traits.axis_name_param
            or prim.types_depend_on_context):
        n = len(avals)
        if not params and (n == 1 or n == 2 and avals[0] is avals[1]):
            table = prim.types_of_one if n == 1 else prim.types_of_pair
            key = avals[0]
            out = table.get(key)
        else:
            table = _aval_cache
            try:
                key = (prim, *avals, *params.items()) if params else (prim, *avals)
                out = table.get(key)  # (TypeError: a parameter is not hashable)
            except TypeError:
                key = out = None
        if out is not None:
            return out
    try:
        if not (prim.traits.refs or prim.traits.call_jaxpr_param):
            for a in avals:
                if type(a) is AbstractToken and not prim.traits.tokens:
                    raise TypeError(f"'{prim.name}' does not take a token as an operand (only "
                                    "after_all does)")
                if type(a) is not ShapedArray and type(a) is not AbstractToken:
                    raise TypeError(
                        f"'{prim.name}' does not take a mutable array reference "
                        f"({a.str_short()}) as an operand (a loop or branch takes one when its "
                        "body reads or writes a reference made outside it); read its value "
                        "first (ref[...]), pass that, and write the result back")
        out = prim.abstract_eval(*avals, **params)
    except (TypeError, ValueError) as e:
        if getattr(e, "_didax_located", False):
            raise
        where = user_location(3)
        err = type(e)(f"{e}\n  (in primitive '{prim.name}' applied to "
                      f"{', '.join(a.str_short() for a in avals)}, at {where})")
        err._didax_located = True
        raise err.with_traceback(e.__traceback__) from None
    if key is not None:
        if prim.multiple_results:
            out = tuple(out)  # shared from now on: never a list a caller could change
        out = caches.add(table, key, out)
    return out


eval_interpreter = EvalInterpreter()
_ctx = _Context()


def current_interpreter() -> Interpreter:
    return _ctx.interp


class interpreter_context:
    """Makes `interp` current for the duration of a `with` block."""

    __slots__ = ("interp", "prev")

    def __init__(self, interp: Interpreter):
        self.interp = interp

    def __enter__(self):
        self.prev = _ctx.interp
        _ctx.interp = self.interp
        return self.interp

    def __exit__(self, *exc):
        _ctx.interp = self.prev


class transformation(interpreter_context):
    """Starts a new interpreter nested under the current one, and ends it on exit.

    Ending it marks it inactive, so its tracers are recognised if they escape.
    """

    __slots__ = ()

    def __exit__(self, *exc):
        _ctx.interp = self.prev
        self.interp.active = False


def new_level(interp: Interpreter, parent: Interpreter | None = None) -> Interpreter:
    """Initialise nesting fields of a freshly made interpreter."""
    interp.parent = parent if parent is not None else _ctx.interp
    interp.level = interp.parent.level + 1
    interp.active = True
    interp.origin_info = user_source_info(3)
    return interp


# --------------------------------------------------------------------------------------
# Values: concrete arrays and tracers share one set of array methods (installed by
# didax.numpy), so `x + 1` means the same thing whatever interpreter owns x.


class ArrayBase:
    """Operator overloading and methods shared by Array and every Tracer."""

    __slots__ = ()
    __array_priority__ = 1000  # NumPy arrays mixed with ours defer to us
    __hash__ = None  # arrays are unhashable, as in NumPy and JAX

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: int(np.prod(self.aval.shape, dtype=np.int64)))
    weak_type = property(lambda self: self.aval.weak_type)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a 0-d array)")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def __setitem__(self, idx, value):
        aval = self.aval
        if type(aval) is not ShapedArray:  # a traced mutable array reference (state/types.py)
            return aval._setitem(self, idx, value)
        raise user_error(TypeError,
            f"{type(self).__name__} objects are immutable: `x[idx] = v` is not supported.\n"
            "What to do: use `x = x.at[idx].set(v)` (or .add/.multiply/.min/.max), which "
            "returns an updated copy."
        )


class _ArrayMeta(type):
    """`isinstance(x, Array)` holds for tracers too, as `isinstance(x, jax.Array)` does under
    jit, vmap and grad (libraries such as equinox test it); `type(x) is Array` still tells
    a concrete array apart, and `issubclass(Tracer, Array)` stays False, as in JAX."""

    virtual: tuple = ()  # other array types (typed PRNG key arrays), as `register` adds them

    def __instancecheck__(cls, x):
        return (cls is Array and isinstance(x, (ArrayBase, *_ArrayMeta.virtual))
                or type.__instancecheck__(cls, x))

    @staticmethod
    def register(array_type: type) -> None:
        """`isinstance(x, Array)` holds for instances of `array_type` (a key array is a
        `jax.Array` too: flax tests it)."""
        _ArrayMeta.virtual += (array_type,)


def value_repr(kind: str, v: np.ndarray, weak_type: bool) -> str:
    """`kind(values, dtype=...)`, as an Array (or a box holding one) prints."""
    if v.size == 0:
        body = f"[], shape={v.shape}"
    else:
        body = np.array2string(v, separator=", ", prefix="Array(", threshold=1000)
    weak = ", weak_type=True" if weak_type else ""
    return f"{kind}({body}, dtype={v.dtype.name}{weak})"


class Array(ArrayBase, metaclass=_ArrayMeta):
    """An immutable concrete array: a NumPy buffer and its type (which holds the weak-type
    flag NumPy has no place for)."""

    __slots__ = ("_value", "aval", "_placement", "__weakref__")  # (placement: see device.py;
    # weak references: libraries cache by array, as TFP's bijectors do)

    def __init__(self, value, weak_type: bool = False):
        value = np.asarray(value)
        dtype = dtypes.canonicalize_dtype(value.dtype)
        self._value = value = value if value.dtype == dtype else value.astype(dtype)
        self.aval = _shaped(value.shape, value.dtype, bool(weak_type))

    @staticmethod
    def from_numpy(value, aval: ShapedArray) -> Array:
        """Wraps an impl's NumPy output, casting to the dtype abstract eval promised: the one
        way results become Arrays (an ndarray of the promised type is taken as it is)."""
        if type(value) is not _ndarray or (value.dtype is not aval.dtype
                                           and value.dtype != aval.dtype):
            value = np.asarray(value, aval.dtype)
        if value.shape != aval.shape:
            raise AssertionError(f"internal error: an impl produced shape {value.shape} where "
                                 f"abstract evaluation promised {aval.str_short()}")
        a = _new_object(Array)  # (no `__init__`: its conversions are done)
        a._value = value
        a.aval = aval
        return a

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)

    def __array__(self, dtype=None, copy=None):
        view = self._value.view()
        view.flags.writeable = False
        if dtype is not None and np.dtype(dtype) != view.dtype:
            return view.astype(dtype)
        if copy:
            return view.copy()
        return view

    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        return int(self._value)

    def __float__(self):
        return float(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        if not dtypes.issubdtype(self._value.dtype, np.integer):
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        return int(self._value)

    def __repr__(self):
        return value_repr("Array", self._value, self.aval.weak_type)

    def __str__(self):
        return str(self._value)

    def __format__(self, spec):
        if self._value.ndim == 0:
            return format(self._value.item(), spec)
        return format(str(self), spec)

    def block_until_ready(self):
        return self

    def item(self, *args):
        return self._value.item(*args)

    def tolist(self):
        return self._value.tolist()

    def copy(self):
        return Array.from_numpy(self._value.copy(), self.aval)

    def __reduce__(self):
        return (Array, (self._value, self.aval.weak_type))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def to_concrete_value(self):
        return self._value

    @property
    def is_fully_addressable(self):
        return True


_ndarray = np.ndarray
_new_object = object.__new__


class Tracer(ArrayBase):
    """A value owned by one interpreter while a transformation runs."""

    __slots__ = ("_interp", "__weakref__")  # (weak references: as an Array's)

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    @property
    def _trace(self) -> Interpreter:
        """The interpreter owning this value, by JAX's name for it (libraries read it)."""
        return self._interp

    abstract_kind = "staged"  # why a value of this kind is unknown: a key of the messages
    # in errors.py ("batched" for vmap)

    def to_concrete_value(self):
        """The concrete value, if this tracer has one (JVP of concrete values does)."""
        return None

    def carries_tangent(self) -> bool:
        """Whether converting this value to a Python or NumPy one would drop a derivative."""
        return False

    def abstract_source(self) -> Tracer:
        """The tracer whose interpreter leaves this value unknown (self, or one it wraps)."""
        return self

    def creation_site(self) -> str:
        return ""

    # Conversions to Python and NumPy values, as in JAX: shape and dtype errors first; then
    # float(), complex(), tolist() and np.asarray() refuse a value carrying a tangent, whose
    # derivative they would drop; bool(), int() and __index__ (piecewise constant: their
    # derivative is zero) read the concrete primal if there is one.

    def _concrete_or_raise(self, what, cls=ConcretizationTypeError, topic="branch"):
        if not self._interp.active:
            raise escaped_tracer_error(self)
        v = self.to_concrete_value()
        if v is None:
            raise concretization_error(self, what, cls, topic)
        return v

    def _undifferentiated_or_raise(self, what, cls=ConcretizationTypeError, topic="branch"):
        if self._interp.active and self.carries_tangent():
            raise differentiated_value_error(self, what, cls)
        return self._concrete_or_raise(what, cls, topic)

    def _scalar_or_raise(self):
        if self.aval.shape:
            raise TypeError("Only scalar arrays can be converted to Python scalars; got a "
                            f"{self.aval.str_short()} value")

    def __bool__(self):
        size = self.aval.size
        if size != 1:
            raise ValueError("The truth value of an empty array is ambiguous. Use "
                             "`array.size > 0` to check that an array is not empty."
                             if size == 0 else
                             "The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self._concrete_or_raise(
            "bool() (also behind `if`, `while`, `and`, `or`, `not`)", TracerBoolConversionError))

    def __int__(self):
        self._scalar_or_raise()
        return int(self._concrete_or_raise("int()", topic="int"))

    def __float__(self):
        self._scalar_or_raise()
        return float(self._undifferentiated_or_raise("float()", topic="float"))

    def __complex__(self):
        self._scalar_or_raise()
        return complex(self._undifferentiated_or_raise("complex()"))

    def __index__(self):
        aval = self.aval
        if aval.shape or not dtypes.issubdtype(aval.dtype, np.integer):
            raise TypeError("Only integer scalar arrays can be converted to a scalar index; "
                            f"got a {aval.str_short()} value")
        return int(self._concrete_or_raise("use as a Python index (__index__)",
                                           TracerIntegerConversionError, "index"))

    def item(self, *args):
        # (JAX returns the primal of a value being differentiated: a dropped derivative)
        return np.asarray(self._undifferentiated_or_raise("item()")).item(*args)

    def tolist(self):
        return np.asarray(self._undifferentiated_or_raise("tolist()")).tolist()

    def __array__(self, dtype=None, copy=None):
        what = "conversion to a NumPy array (np.asarray, or a NumPy function such as np.sin)"
        return np.asarray(self._undifferentiated_or_raise(what, TracerArrayConversionError,
                                                          "array"), dtype)

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>with<{self._interp.describe()}>"

    def block_until_ready(self):
        return self


# --------------------------------------------------------------------------------------
# Symbolic zeros: tangents (and later cotangents) that are known to be zero are never
# materialised unless a rule needs them.


class Zero:
    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


def is_zero(x) -> bool:
    return type(x) is Zero


_zero_tangents = caches.memo("core.zero_tangents")  # aval -> the Zero of its tangent type


def zero_tangent(aval: ShapedArray) -> Zero:
    """The symbolic zero tangent of a value of type `aval`."""
    z = _zero_tangents.get(aval)
    if z is None:
        z = caches.add(_zero_tangents, aval, Zero(aval.to_tangent_aval()))
    return z


def asarray_value(x):
    """Outputs of transformations are Arrays (or tracers), never bare Python scalars."""
    if isinstance(x, ArrayBase):
        return x
    aval = get_aval(x)
    return Array(np.asarray(x, aval.dtype), aval.weak_type)
