"""Code generation: a jaxpr becomes Python source over NumPy, compiled with `compile()`.

One function per jaxpr (control-flow bodies get their own), one statement per equation,
named as the printed jaxpr names its variables, so the source reads like the jaxpr.
Each primitive's statement comes from its `codegen` rule (declared beside its other rules,
written with codegen.py); a primitive without one calls its NumPy impl. Buffers are
reused: an elementwise result is written `out=` into a buffer that is owned by this
function (made by an earlier statement, never an input or a view) and dead after this
statement, as NumPy's temporary elision does for expressions, but across statements.

Every name in the generated source is one this module made: constants, impls and
parameters are passed in as globals under generated names, never spelled in the text.
"""
from __future__ import annotations

import keyword
import math
import time

import numpy as np

from didax._src import core, dtypes, monitoring
from didax._src.compiler.codegen import as_dtype, emit_impl_call
from didax._src.compiler.passes import optimize
from didax._src.config_states import float_checks
from didax._src.errors import format_source_info
from didax._src.ir import ClosedJaxpr, DropVar, Literal, derived
from didax._src.jit_events import compiling
from didax._src.pretty import encode_name


class Executable:
    """A compiled jaxpr: `run(*numpy_values) -> tuple of numpy values`. `native` is what
    the native tier keeps about it (see compiler/native/tier.py): a tiered executable's own,
    when its code is ready it replaces `run`. `switch`: see SwitchTier."""

    __slots__ = ("jaxpr", "source", "run", "native", "switch")

    def __init__(self, jaxpr, source, run, switch=None):
        self.jaxpr = jaxpr
        self.source = source
        self.run = run
        self.native = None
        self.switch = switch

    def __call__(self, *vals):
        return self.run(*vals)


class SwitchTier(Exception):
    """Raised at the top of a loop's iteration by code compiled with a `switch` (a one-item
    list) once switch[0] is true: the native code of the function is ready, and the call,
    which has no effects, starts over on it (the two tiers compute the same bits, so only
    the time changes: a long first call of a sampler or solver finishes natively)."""


def numpy_executable(closed: ClosedJaxpr, name: str = "f") -> Executable:
    """The NumPy tier's executable for `closed`, compiled once per jaxpr (and debug_nans,
    debug_infs setting); never given native code (native.tier.tiered_executable is)."""
    checks = float_checks()
    return derived(closed, ("compiled", checks),
                   lambda: _timed(compile_jaxpr, closed, name, debug_nans=checks))


def switchable_executable(closed: ClosedJaxpr, name: str = "f") -> Executable:
    """An executable of its own for `closed` whose loops can hand the call over to the
    native tier (see SwitchTier)."""
    return _timed(compile_jaxpr, closed, name, debug_nans=float_checks(), switch=[False])


def _timed(compile_fn, closed, name, **kwargs):
    """`compile_fn(...)`, its duration recorded for monitoring's listeners if there are any."""
    compiling(closed, name)  # (jax_log_compiles, jax_enable_checks)
    if not monitoring.listening():
        return compile_fn(closed, name, **kwargs)
    start = time.perf_counter()
    exe = compile_fn(closed, name, **kwargs)
    monitoring.record_event_duration_secs(monitoring.COMPILE_DURATION,
                                          time.perf_counter() - start, fun_name=f"jit({name})")
    return exe


def compile_jaxpr(closed: ClosedJaxpr, name: str = "f", debug_nans: bool = False,
                  optimized: bool = False, switch: list | None = None) -> Executable:
    if not optimized:
        closed = optimize(closed)
    module = Module(debug_nans, switch)
    fname = module.function(closed, "f", optimized=True)  # never the user's name
    source = module.source()
    code = compile(source, f"<didax jit: {_identifier(name)}>", "exec")
    env = dict(module.globals)
    env["__name__"] = "didax._src.jit.generated"  # NumPy's warnings are silenced as for impls
    exec(code, env)
    return Executable(closed, source, env[fname], switch)


def _identifier(name: str) -> str:
    """A Python identifier made from a function's name (only letters, digits, '_')."""
    s = "".join(c if (c.isascii() and (c.isalnum() or c == "_")) else "_" for c in name)
    s = s.strip("_") or "f"
    if s[0].isdigit() or keyword.iskeyword(s):
        s = "f_" + s
    return s


# --------------------------------------------------------------------------------------
# Modules and functions


class Module:
    """The source of one compilation: functions and the globals they read."""

    def __init__(self, debug_nans: bool | tuple[bool, bool] = False, switch=None):
        self.globals: dict = {"np": np, "_as_dtype": as_dtype}
        # (loops test switch[0] at each iteration, raising SwitchTier; see Executable)
        self.switch = switch
        self._switch_names = None
        self.blocks: list[str] = []
        self.used_names: set[str] = set(self.globals)
        # (check for NaN, check for inf) after each equation; a bool: NaN only
        self.float_checks = (debug_nans if type(debug_nans) is tuple
                             else (bool(debug_nans), False))
        self.debug_nans = any(self.float_checks)

    def global_name(self, value, hint: str) -> str:
        """Binds `value` as a global of the module under a fresh name made from `hint`."""
        name = self.fresh_name("_" + _identifier(hint))
        self.globals[name] = value
        return name

    def fresh_name(self, base: str) -> str:
        """`base`, or `base_2`, `base_3`... whichever no global of the module has yet."""
        name, i = base, 1
        while name in self.used_names:
            i += 1
            name = f"{base}_{i}"
        self.used_names.add(name)
        return name

    def function(self, closed: ClosedJaxpr, hint: str, optimized: bool = False) -> str:
        """Generates a function for `closed` (optimising it first) and returns its name."""
        if not optimized:
            closed = optimize(closed)
        fname = self.fresh_name(_identifier(hint))
        FunctionBuilder(self, closed, fname).build()
        return fname

    def source(self) -> str:
        return "\n\n".join(self.blocks) + "\n"

    def switch_point(self) -> str | None:
        """The statement a loop's iteration starts with in a module compiled with a switch
        (see SwitchTier), or None."""
        if self.switch is None:
            return None
        if self._switch_names is None:
            self._switch_names = (self.global_name(self.switch, "switch"),
                                  self.global_name(SwitchTier, "SwitchTier"))
        cell, exc = self._switch_names
        return f"if {cell}[0]: raise {exc}"


_RESERVED = {"np", "i", "out"}


class FunctionBuilder:
    def __init__(self, module: Module, closed: ClosedJaxpr, fname: str):
        self.module = module
        self.closed = closed
        self.jaxpr = closed.jaxpr
        self.fname = fname
        self.lines: list[str] = []
        self.names: dict = {}
        self._count = 0
        self.indent = 1

    # naming ------------------------------------------------------------------------

    def _fresh(self) -> str:
        while True:
            name = encode_name(self._count)
            self._count += 1
            if not keyword.iskeyword(name) and name not in _RESERVED:
                return name

    def name(self, v) -> str:
        if type(v) is Literal:
            return self.literal(v)
        n = self.names.get(v)
        if n is None:
            n = self.names[v] = self._fresh()
        return n

    def temp(self) -> str:
        """A fresh local name that is no variable's."""
        return self._fresh()

    def literal(self, lit: Literal) -> str:
        """A literal as source: a Python number where NumPy keeps the other operand's type
        (NEP 50), otherwise a typed global."""
        val = lit.val
        dtype = lit.aval.dtype
        if dtype == np.bool_:
            return "True" if bool(val) else "False"
        if dtype.kind not in "iufc":  # ml_dtypes' types: NumPy computes them with a Python
            return self.module.global_name(np.asarray(val, dtype)[()], "lit")  # float in f32
        py = val.item() if hasattr(val, "item") else val
        if isinstance(py, float) and math.isfinite(py):
            return repr(py)
        if isinstance(py, int) and not isinstance(py, bool):
            return repr(py)
        return self.module.global_name(np.asarray(val, dtype)[()], "lit")

    def typed(self, a) -> str:
        """An atom as a value of its exact dtype (literals as typed NumPy scalars)."""
        if type(a) is Literal:
            return self.module.global_name(np.asarray(a.val, a.aval.dtype)[()], "lit")
        return self.name(a)

    def array(self, a) -> str:
        """An atom as an array of its exact dtype, as impls are handed operands when
        evaluating (a 0-d value may be a NumPy scalar here: literals, operators' results)."""
        if a.aval.shape:
            return self.name(a)
        if type(a) is Literal:
            return self.module.global_name(np.asarray(a.val, a.aval.dtype), "lit")
        return f"np.asarray({self.name(a)})"

    def line(self, text: str):
        self.lines.append("    " * self.indent + text)

    # buffers --------------------------------------------------------------------------

    def _analyse(self):
        eqns = self.jaxpr.eqns
        self.uses: dict = {}  # variable -> the equations reading it, in order
        for k, eqn in enumerate(eqns):
            for a in eqn.invars:
                if type(a) is not Literal:
                    self.uses.setdefault(a, []).append(k)
        self.last_use: dict = {a: ks[-1] for a, ks in self.uses.items()}
        for a in self.jaxpr.outvars:
            if type(a) is not Literal:
                self.last_use[a] = len(eqns)
        self.viewed: set = set()  # values some other live value may be a view of
        for eqn in eqns:
            if not _outputs_fresh(eqn):
                self.viewed.update(a for a in eqn.invars if type(a) is not Literal)
        self.fresh: set = set()
        self.pool: dict = {}
        self._find_padded_adds()

    def _find_padded_adds(self):
        """Zero pads whose only use is a sum: `add(a, pad(x))` becomes `a[region] += x` (no
        zeros buffer, no full-size add). Transposed slices (e.g. of split gates) give these."""
        eqns = self.jaxpr.eqns
        outs = {a for a in self.jaxpr.outvars if type(a) is not Literal}
        self.deferred_pads: dict = {}  # pad output var -> (operand, region text)
        # sums of pads, which hold no -0.0 (each element 0.0 + something): adding a pad to
        # one needs no + 0.0 outside the pad's region
        self.no_negative_zeros: set = set()
        for eqn in eqns:
            zero_pad_region = eqn.primitive.traits.zero_pad_region
            region = None if zero_pad_region is None else zero_pad_region(eqn)
            if region is None:
                continue
            v = eqn.outvars[0]
            where = self.uses.get(v, [])
            if v in outs or len(where) != 1:
                continue
            user = eqns[where[0]]
            if not user.primitive.traits.is_addition or user.invars[0] is user.invars[1]:
                continue
            if any(a.aval.shape != v.aval.shape or a.aval.dtype != v.aval.dtype
                   for a in user.invars):
                continue
            x = eqn.invars[0]
            self.deferred_pads[v] = (x, region)
            if type(x) is not Literal:  # read at the sum, so it lives until then
                self.last_use[x] = max(self.last_use.get(x, -1), where[0])
                self.viewed.add(x)

    def _emit_padded_add(self, k, eqn, out) -> bool:
        a, b = eqn.invars
        pa, pb = self.deferred_pads.get(a), self.deferred_pads.get(b)
        if pa is None and pb is None:
            return False
        if pa is not None and pb is not None:  # both padded: materialise one
            x, region = pa
            dtype = self.module.global_name(a.aval.dtype, a.aval.dtype.name)
            self.line(f"{out} = np.zeros({a.aval.shape}, {dtype})")
            # (added to the zeros, as the sum of the pads adds: a -0.0 becomes +0.0)
            self.line(f"{out}[{region}] += {self.name(x)}")
            x, region = pb
            self.line(f"{out}[{region}] += {self.name(x)}")
            self.no_negative_zeros.add(eqn.outvars[0])
            return True
        base, (x, region) = (b, pa) if pa is not None else (a, pb)
        if base in self.no_negative_zeros:  # (nor has the sum: only -0.0 + -0.0 is -0.0)
            self.no_negative_zeros.add(eqn.outvars[0])
        if (base not in self.no_negative_zeros
                and dtypes.issubdtype(base.aval.dtype, np.inexact)):
            # Outside the region the sum is base + 0.0, which makes a -0.0 +0.0; inside it,
            # base + x from base's own values.
            inside = self.temp()
            self.line(f"{inside} = {self.typed(base)}[{region}] + {self.name(x)}")
            in_place = f"np.add({self.name(base)}, 0.0, out={self.name(base)})"
            copied, last = f"np.add({self.typed(base)}, 0.0)", f"{out}[{region}] = {inside}"
        else:
            in_place, copied = self.name(base), f"{self.typed(base)}.copy()"
            last = f"{out}[{region}] += {self.name(x)}"
        if self._reusable(base, k):
            self._take(base)
            self.line(f"{out} = {in_place}")
        else:
            self.line(f"{out} = {copied}")
        self.line(last)
        return True

    def _reusable(self, a, k: int) -> bool:
        """Whether `a` holds a buffer this function owns, nothing may view, and that dies at
        equation `k` (so `k` may write into it)."""
        return (type(a) is not Literal and a in self.fresh and a not in self.viewed
                and self.last_use.get(a) == k)

    def _take(self, a):
        """Hands `a`'s buffer over to the output of the current equation."""
        self.fresh.discard(a)
        self._taken.add(a)

    def out_buffer(self, k: int, eqn, aval, allow_inputs: bool = True) -> str | None:
        """A dead buffer of `aval`'s type that equation `k` may write its result into."""
        if aval.shape == ():
            return None
        if allow_inputs:
            for a in eqn.invars:
                if (self._reusable(a, k) and a.aval.shape == aval.shape
                        and a.aval.dtype == aval.dtype):
                    self._take(a)
                    return self.names[a]
        stack = self.pool.get((aval.shape, aval.dtype))
        if stack:
            return stack.pop()
        return None

    def _release(self, k: int, eqn):
        """After equation `k`: buffers of owned values that died here (or were never read)
        go to the pool."""
        dead = [a for a in dict.fromkeys(eqn.invars)  # (in order: the source is deterministic)
                if self._reusable(a, k) and a not in self._taken]
        dead += [v for v in eqn.outvars if (type(v) is DropVar or v not in self.last_use)
                 and v in self.fresh and v not in self.viewed]
        for a in dead:
            self.fresh.discard(a)
            self.pool.setdefault((a.aval.shape, a.aval.dtype), []).append(self.names[a])

    # building -----------------------------------------------------------------------

    def build(self):
        j = self.jaxpr
        for v, c in zip(j.constvars, self.closed.consts):
            value = c._value if type(c) is core.Array else np.asarray(c)
            self.names[v] = self.module.global_name(value, "const")
        params = [self.name(v) for v in j.invars]
        self._analyse()
        for k, eqn in enumerate(j.eqns):
            self._taken = set()
            outs = [self.name(v) if type(v) is not DropVar else self._drop_name(v)
                    for v in eqn.outvars]
            rule = eqn.primitive.rules.get("codegen")
            if eqn.outvars and eqn.outvars[0] in self.deferred_pads:
                continue  # emitted where it is summed (see _find_padded_adds)
            if eqn.primitive.traits.is_addition and self._emit_padded_add(k, eqn, outs[0]):
                self.fresh.add(eqn.outvars[0])
            elif rule is None:
                emit_impl_call(self, k, eqn, outs)
            else:
                rule(self, k, eqn, outs)
                if _outputs_fresh(eqn):
                    self.fresh.update(v for v in eqn.outvars if v.aval.shape != ())
            if self.module.debug_nans:
                self._nan_checks(eqn, outs)
            self._release(k, eqn)
        # a literal result keeps its dtype: a cond branch's result is read like any array
        results = [self.typed(a) for a in j.outvars]
        ret = "(" + ", ".join(results) + ("," if len(results) == 1 else "") + ")"
        self.line(f"return {ret}")
        header = f"def {self.fname}({', '.join(params)}):"
        self.module.blocks.append("\n".join([header] + self.lines))

    def _drop_name(self, v) -> str:
        n = self._fresh()
        self.names[v] = n
        return n

    def _nan_checks(self, eqn, outs):
        for v, n in zip(eqn.outvars, outs):
            if dtypes.kind(v.aval.dtype) in "fc":
                where = format_source_info(eqn.source_info) if eqn.source_info else None
                fn = self.module.global_name(
                    _nan_checker(eqn.primitive.name, where, self.module.float_checks),
                    "check_nan")
                self.line(f"{fn}({n})")

    def loop_iteration(self):
        """Starts a loop's iteration: the switch point of SwitchTier, if the module has one."""
        point = self.module.switch_point()
        if point is not None:
            self.line(point)

    def call_sub(self, jaxpr, hint: str) -> str:
        """Generates `jaxpr` (closed or not) as its own function in this module; returns its
        name."""
        closed = jaxpr if isinstance(jaxpr, ClosedJaxpr) else ClosedJaxpr(jaxpr, [])
        return self.module.function(closed, hint)


def _outputs_fresh(eqn) -> bool:
    """Whether the statement for `eqn` makes new buffers (that alias none of its operands)."""
    rule = eqn.primitive.rules.get("codegen")
    fresh = getattr(rule, "fresh", None)
    return fresh is not None and fresh(eqn)


def _nan_checker(prim_name: str, where, checks=(True, False)):
    tests = [(what, test) for what, test, on in (("nan", np.isnan, checks[0]),
                                                 ("inf", np.isinf, checks[1])) if on]

    def check(x):
        for what, test in tests:
            if test(x).any():
                at = f" at {where}" if where else ""
                raise FloatingPointError(
                    f"invalid value ({what}) encountered in {prim_name}{at} (inside a "
                    f"jit-compiled function; jax_debug_{what}s is on). Run without jit "
                    "(didax.disable_jit()) to debug it eagerly.")
    return check
