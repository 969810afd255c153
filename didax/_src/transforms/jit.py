"""`jit`: trace once per signature, optimise, generate Python over NumPy, cache.

The cache key is what JAX keys on: the pytree structure of the arguments, each leaf's
shape, dtype and weak type, and the values of static arguments (plus the x64 and
debug-nans settings, which change what tracing and compilation produce). A miss traces
the function (running its Python side effects), and says why it missed when
`jax_explain_cache_misses` is on; `cache_info()` keeps the last reason too.

Called eagerly, a jitted function runs its generated code directly; a call with the last
eager call's signature is recognised by a function generated for that signature (see
`_matcher`), which neither flattens the arguments nor builds a key. Under another
transformation it binds the `jit` call primitive, whose rules transform the jaxpr and call
again (see call.py), so transformations of jitted functions are compiled too.
"""
from __future__ import annotations

import functools
import inspect
import logging
import threading
import time
import weakref
from types import NoneType
from typing import NamedTuple

import numpy as np

from didax._src import caches, core, jit_events, monitoring, profiler
from didax._src.compiler.native import tier
from didax._src.compiler.numpy_tier import compile_jaxpr
from didax._src.compiler.passes import optimize
from didax._src.config import config, flag_context
from didax._src.config_states import float_checks
from didax._src.core import ShapedArray, Tracer, get_aval
from didax._src.errors import function_site, user_error
from didax._src.interpreters import batching
from didax._src.interpreters.staging import StagingInterpreter, trace_to_jaxpr
from didax._src.ir import hoist_consts
from didax._src.primitives.jit_call import bind_call
from didax._src.state import discharge as state_discharge
from didax._src.state.types import AbstractRef, Ref
from didax._src.transforms.api import ShapeDtypeStruct
from didax._src.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from didax._src.user_context import on_new_context, user_context_values

logger = logging.getLogger("didax")


# The settings that change what tracing or compiling produces, kept current for cheap keys:
# (x64, (debug_nans, debug_infs), disable_jit, user contexts). Interned: equal settings are
# one tuple, so a signature's matcher (see `_matcher`) can compare them by identity after
# they change and change back.
_all_settings = caches.memo("jit.settings", interns=True)


def _current_settings():
    now = (config.x64_enabled, float_checks(), bool(config.read("jax_disable_jit")),
           user_context_values())
    return caches.add(_all_settings, now, now)


_settings = _current_settings()


@config.on_change
@on_new_context  # (a new user context joins the key)
def _update_settings(name, value):
    global _settings
    _settings = _current_settings()


def named_call(fun, *, name=None):
    """`fun` itself (JAX uses the name for profiling scopes, which didax does not have)."""
    if not callable(fun):
        raise TypeError(f"named_call: expected a function, got {fun!r}")
    return fun


def disable_jit(disable: bool = True):
    """Context manager: jitted functions run eagerly, op by op (for debugging)."""
    return flag_context("jax_disable_jit", disable)


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    size: int
    last_miss: str | None


class _Entry:
    __slots__ = ("discharged", "donated", "executable", "hoisted", "in_tree", "jaxpr",
                 "matchers", "out_avals", "out_tree", "static")

    def __init__(self, jaxpr, in_tree, static, out_tree, hoisted, donated):
        self.donated = (False,) * len(hoisted) + donated
        self.jaxpr = jaxpr
        # Mutable array references (state/): the jaxpr with their values passed in and out,
        # which runs (the references read before and written after), or None
        self.discharged = state_discharge.discharge(jaxpr)
        self.in_tree = in_tree  # of (dynamic positional args, dynamic keyword args)
        self.static = static  # ((position or name, value), ...) of the static arguments
        self.out_tree = out_tree
        self.out_avals = jaxpr.out_avals
        self.hoisted = hoisted  # constants (tracers of enclosing transformations) as operands
        self.executable = None
        self.matchers = {}  # the types of the leaves -> `_matcher(self, ...)`, or not yet


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    return tuple(x)


def jit(fun=None, /, *, in_shardings=None, out_shardings=None, static_argnums=None,
        static_argnames=None, donate_argnums=None, donate_argnames=None, keep_unused=False,
        device=None, backend=None, inline=False, compiler_options=None):
    """Compiles `fun`: traced once per argument signature into a jaxpr, optimised, and
    turned into Python source over NumPy (`f.lower(*args).as_text()` shows the jaxpr,
    `.compile().as_text()` the source)."""
    if fun is None:
        return functools.partial(jit, in_shardings=in_shardings, out_shardings=out_shardings,
                                 static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames, keep_unused=keep_unused,
                                 inline=inline)
    if not callable(fun):
        raise user_error(TypeError, f"jit: expected a function, got {fun!r} of type "
                         f"{type(fun).__name__}; use `jax.jit(f)` or the `@jax.jit` decorator, "
                         "and call the result with the arguments")
    return JitWrapped(fun, _as_tuple(static_argnums), _as_tuple(static_argnames),
                      _as_tuple(donate_argnums), _as_tuple(donate_argnames), in_shardings,
                      out_shardings)


_all_jitted: weakref.WeakSet = weakref.WeakSet()  # every live jitted function: clear_caches
_all_jitted_lock = threading.Lock()  # (made on any thread)


class _Placement:
    """How a jitted call's results get their shardings: `place(jitted, entry, arguments,
    results)`, installed by the parallel layer (which knows meshes). `active` once any
    array has a sharding of several devices, or a function names shardings: from then on,
    calls with a sharded argument, or of a function that names shardings, take the general
    path, which places results (a program that never shards pays nothing; one that does,
    a check of its Array arguments in the last signature's shortcut)."""
    place = None
    active = False
    on_activate: list = []  # functions called once, when it becomes active


placement = _Placement()


def activate_placement():
    if placement.active:
        return
    placement.active = True
    for f in placement.on_activate:
        f()
    with _all_jitted_lock:
        jitted = list(_all_jitted)
    for f in jitted:  # (their shortcuts, made without the check, are made again)
        f._mono = _no_match
        for entry in list(f._cache.values()):
            entry.matchers.clear()


def _placed(x) -> bool:
    """Whether an Array carries a sharding (not a plain placement on devices)."""
    where = getattr(x, "_placement", None)
    return where is not None and type(where) is not tuple


def clear_caches():
    """Empties the compiled-code cache of every jitted function and every memo table (as
    `jax.clear_caches`): the next call traces and compiles again, and eager reverse mode
    builds its steps again. The native tier's disk cache stays."""
    with _all_jitted_lock:
        jitted = list(_all_jitted)
    for f in jitted:
        f.clear_cache()
    caches.clear_all()


class JitWrapped:
    # What every call reads and writes lives in slots: attributes in the instance's
    # dictionary, which `functools.update_wrapper` fills, are slower to update.
    __slots__ = ("__dict__", "__weakref__", "_hits", "_mono")

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                 in_shardings=None, out_shardings=None):
        functools.update_wrapper(self, fun)
        self.in_shardings = in_shardings  # (pytree prefixes of the dynamic positional
        self.out_shardings = out_shardings  # arguments and of the results)
        if in_shardings is not None or out_shardings is not None:
            activate_placement()
        with _all_jitted_lock:
            _all_jitted.add(self)
        self._fun = fun
        self._name = getattr(fun, "__name__", type(fun).__name__)
        try:
            self._signature = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None
        self._check_argnums("static_argnums", static_argnums, "static_argnames",
                            static_argnames)
        self._check_argnums("donate_argnums", donate_argnums, "donate_argnames",
                            donate_argnames)
        static_argnums, static_argnames = self._resolve(static_argnums, static_argnames)
        donate_argnums, _ = self._resolve(donate_argnums, donate_argnames)
        self._static_argnums = frozenset(static_argnums)
        self._static_argnames = frozenset(static_argnames)
        self._donate_argnums = frozenset(donate_argnums)
        self._cache: dict = {}  # the cache: signature key -> `_Entry`
        self._mono = _no_match  # not a second cache but the entry last called eagerly (with
        # arrays and Python scalars), as a matcher (see `_matcher`): tried first, so a loop
        # calling with one signature neither flattens its arguments nor builds a key
        self._hits = 0
        self._misses = 0
        self._last_miss: str | None = None
        self._last_key = None

    def _check_argnums(self, nums_name, nums, names_name, names):
        """Positions and names must exist in the signature (unless it takes *args or
        **kwargs): a typo would otherwise silently trace the argument instead."""
        if self._signature is None:
            return
        kinds = {p.kind for p in self._signature.parameters.values()}
        params = self._positional_params()
        site = function_site(self._fun)
        if inspect.Parameter.VAR_POSITIONAL not in kinds:
            bad = [n for n in nums if not -len(params) <= n < len(params)]
            if bad:
                raise user_error(ValueError, (
                    f"jit: {nums_name}={tuple(nums)} names position {bad[0]}, but the jitted "
                    f"function {site} only accepts {len(params)} positional argument"
                    f"{'s' if len(params) != 1 else ''} {tuple(params)}.\nWhat to do: count "
                    "positions from 0, or name the argument with "
                    f"{names_name}=..."))
        if inspect.Parameter.VAR_KEYWORD not in kinds:
            known = set(self._signature.parameters)
            bad = sorted(set(names) - known)
            if bad:
                raise user_error(ValueError, (
                    f"jit: {names_name} names {bad}, which the jitted function {site} does not "
                    f"take; its parameters are {sorted(known)}."))

    def _resolve(self, argnums, argnames):
        """Static arguments may be named by position or name; each implies the other."""
        nums, names = set(argnums), set(argnames)
        params = self._positional_params()
        if params is not None:
            for n in list(nums):
                if -len(params) <= n < len(params):
                    names.add(params[n])
            for name in list(names):
                if name in params:
                    nums.add(params.index(name))
        return nums, names

    def _positional_params(self):
        if self._signature is None:
            return None
        return [p.name for p in self._signature.parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    def __repr__(self):
        return f"<didax.jit of {self._fun!r}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    # signatures -------------------------------------------------------------------

    def _split(self, args, kwargs):
        n = len(args)
        static_nums = {i if i >= 0 else i + n for i in self._static_argnums}
        static = []
        for i in sorted(static_nums):
            if 0 <= i < n:
                static.append((i, _hashable_static(args[i], self._arg_label(i))))
        for k in sorted(kwargs):
            if k in self._static_argnames:
                static.append((k, _hashable_static(kwargs[k], f"`{k}`")))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        flat, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        return tuple(static), static_nums, flat, in_tree

    def _arg_label(self, i) -> str:
        params = self._positional_params() or []
        return f"{i} (`{params[i]}`)" if i < len(params) else str(i)

    def _avals(self, flat, in_tree):
        avals = []
        for i, x in enumerate(flat):
            try:
                avals.append(get_aval(x))
            except TypeError:
                shown = repr(x)
                shown = shown if len(shown) <= 60 else shown[:57] + "..."
                raise user_error(TypeError, (
                    f"Error interpreting argument `{self._path(in_tree, i)}` of the jitted "
                    f"function {function_site(self._fun)} as an abstract array: it is a "
                    f"{type(x).__name__} ({shown}), and jit traces only arrays and Python "
                    "numbers (and pytrees of them).\nWhat to do: mark the argument static "
                    "(`jax.jit(f, static_argnames=...)` or `static_argnums=...`), so its value "
                    "is part of the compiled function's signature; or close over it.")) from None
        return avals

    def _path(self, in_tree, i) -> str:
        """The user-facing name of flat argument `i` (e.g. `x`, `params['w']`)."""
        dummy = tree_unflatten(in_tree, list(range(in_tree.num_leaves)))
        (path, _), = [pl for pl in tree_flatten_with_path(dummy)[0] if pl[1] == i]
        group, first, *rest = path
        if group.idx == 1:  # a keyword argument
            return f"{first.key}{keystr(tuple(rest))}"
        dyn_positions = (j for j in range(1 << 16) if j not in self._static_argnums)
        pos = next(p for k, p in enumerate(dyn_positions) if k == first.idx)
        params = self._positional_params() or []
        head = params[pos] if pos < len(params) else f"args[{pos}]"
        return head + keystr(tuple(rest))

    def _key(self, static, in_tree, avals):
        return (in_tree, tuple((a.shape, a.dtype, a.weak_type) if type(a) is ShapedArray
                               else _TOKEN_KEY if type(a) is core.AbstractToken
                               else (a.shape, a.dtype, a.weak_type, "Ref") for a in avals),
                static,
                *_settings, tuple(batching.axis_frames()))  # collectives read the named axes

    # tracing ------------------------------------------------------------------------

    def _trace(self, args, kwargs):
        static, static_nums, flat, in_tree = self._split(args, kwargs)
        avals = self._avals(flat, in_tree)
        key = self._key(static, in_tree, avals)
        entry = self._cache.get(key)
        if entry is not None:
            self._hits += 1
            return entry, flat
        self._misses += 1
        if self._last_key is not None:
            self._last_miss = self._explain(self._last_key, key)
            if config.jax_explain_cache_misses:
                logger.warning("didax.jit(%s): tracing again: %s", self._name, self._last_miss)
        else:
            self._last_miss = "first call"
        jit_events.tracing(self._name, function_site(self._fun))
        self._last_key = key
        n_args = len(args)
        out_box = []
        traced_in = []
        fun = self._fun

        def flat_fun(*flat_args):
            interp = core.current_interpreter()  # names arguments in concretization errors
            interp.arg_name = functools.partial(self._path, in_tree)
            interp.traced_fun = function_site(fun)
            interp.traced_by = "jit"
            traced_in.append(interp)
            dyn_args, dyn_kwargs = tree_unflatten(in_tree, flat_args)
            it = iter(dyn_args)
            statics = dict(static)
            full = [statics[i] if i in static_nums else next(it) for i in range(n_args)]
            kw = dict(dyn_kwargs)
            kw.update({k: v for k, v in static if isinstance(k, str)})
            out = fun(*full, **kw)
            leaves, out_tree = tree_flatten(out)
            for x in leaves:
                if type(x) is Ref or isinstance(x, Tracer) and type(x.aval) is AbstractRef:
                    raise user_error(ValueError, (
                        f"function {function_site(fun)} traced for jit returned a mutable "
                        f"array reference of type {x.aval!r}, but mutable array references "
                        "cannot be returned.\nWhat to do: return its value (ref[...] or "
                        "jax.freeze(ref)); the references passed in are updated in place."))
                if not isinstance(x, (core.ArrayBase, np.ndarray, np.generic, bool, int, float,
                                      complex, core.Token)):
                    raise TypeError(
                        f"didax.jit({self._name}): the function returned a value of type "
                        f"{type(x).__name__} ({x!r}), which is not an array; return arrays, "
                        "scalars or pytrees of them.")
            out_box.append(out_tree)
            return leaves

        start = time.perf_counter() if monitoring.listening() else None
        closed, outs = trace_to_jaxpr(flat_fun, avals)
        jit_events.check_leaks(traced_in[0], outs, self._name)
        del outs
        if start is not None:
            monitoring.record_event_duration_secs(monitoring.TRACE_DURATION,
                                                  time.perf_counter() - start,
                                                  fun_name=self._name)
        hoisted = []
        if any(isinstance(c, Tracer) for c in closed.consts):
            closed, hoisted = hoist_consts(closed)  # they change with every enclosing trace
        donated = ()
        if self._donate_argnums:
            for i, a in enumerate(args):
                if i not in static_nums:
                    donated += (i in self._donate_argnums,) * len(tree_flatten(a)[0])
        donated += (False,) * (len(flat) - len(donated))
        entry = _Entry(closed, in_tree, static, out_box[-1], hoisted, donated)
        if not hoisted:
            self._cache[key] = entry
        return entry, flat

    def _explain(self, old, new) -> str:
        o_tree, o_types, o_static, o_x64, o_nans, _, o_user, o_axes = old
        n_tree, n_types, n_static, n_x64, n_nans, _, n_user, n_axes = new
        if o_axes != n_axes:
            return f"the named vmap axes (name, size) changed from {o_axes} to {n_axes}"
        if o_x64 != n_x64:
            return f"jax_enable_x64 changed from {o_x64} to {n_x64}"
        if o_nans != n_nans:
            return (f"(jax_debug_nans, jax_debug_infs) changed from {o_nans} to {n_nans}")
        if o_user != n_user:
            return f"a user context (make_user_context) changed from {o_user} to {n_user}"
        if o_static != n_static:
            old_s, new_s = dict(o_static), dict(n_static)
            for k in new_s.keys() | old_s.keys():
                if old_s.get(k, _ABSENT) != new_s.get(k, _ABSENT):
                    name = self._static_name(k)
                    return (f"static argument {name} changed from {old_s.get(k, _ABSENT)!r} "
                            f"to {new_s.get(k, _ABSENT)!r}")
        if o_tree != n_tree:
            return f"the argument structure changed from {o_tree} to {n_tree}"
        for i, (a, b) in enumerate(zip(o_types, n_types)):
            if a != b:
                what = ("shape" if a[0] != b[0] else "dtype" if a[1] != b[1] else
                        "weak type" if a[2] != b[2] else "kind (an array or a Ref)")
                return (f"argument {self._path(n_tree, i)} changed {what}: "
                        f"{_type_str(a)} -> {_type_str(b)}")
        return "a new signature"

    def _static_name(self, k):
        if isinstance(k, str):
            return k
        params = self._positional_params() or []
        return params[k] if k < len(params) else f"args[{k}]"

    # calling -------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if profiler.recording:  # a trace runs: the call is a span of it, with its tier
            return profiler.jit_call(self._name, self._call, args, kwargs)
        if not kwargs:
            out = self._mono(args)
            if out is not _MISS:
                self._hits += 1
                return out
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        if _settings[2]:  # jax_disable_jit
            return self._fun(*args, **kwargs)
        eager = core._ctx.interp is core.eval_interpreter
        entry, flat = self._trace(args, kwargs)
        discharged = entry.discharged
        if discharged is not None and discharged.ref_inputs:
            self._check_aliases(entry, flat)
        if discharged is not None and not (eager and not entry.hoisted):
            outs = _call_with_refs(entry, [*entry.hoisted, *flat], self._name)
        elif eager and not entry.hoisted:
            if entry.executable is None:
                entry.executable = tier.tiered_executable(
                    entry.jaxpr if discharged is None else discharged.jaxpr, self._name)
            if profiler.recording:  # (names the tier running this call in the trace)
                profiler.ran_on(tier.tier_of(entry.executable))
            if discharged is not None and not discharged.same_signature:
                return tree_unflatten(entry.out_tree, _run_with_refs(
                    entry.executable, discharged, flat, entry.out_avals))
            vals = []
            for x in flat:
                if type(x) is core.Array:
                    vals.append(x._value)
                elif isinstance(x, Tracer):
                    raise core.escaped_tracer_error(x)
                elif type(x) is core.Token:
                    vals.append(core.abstract_token.buffer)
                else:
                    vals.append(np.asarray(x, get_aval(x).dtype))
            outs = _run(entry.executable, entry.out_avals, vals)
            if placement.active:
                outs = placement.place(self, entry, flat, outs)
            if not kwargs and not (placement.active and self._names_shardings()):
                self._remember(entry, flat)
        else:
            outs = bind_call([*entry.hoisted, *flat], jaxpr=entry.jaxpr, name=self._name,
                             donated_invars=entry.donated)
        return tree_unflatten(entry.out_tree, outs)

    def _check_aliases(self, entry, flat):
        """A reference passed twice, or passed and closed over, would be two references to
        one array in the discharged function: refused, as in JAX."""
        d, n = entry.discharged, len(entry.hoisted)
        seen = {id(b): None for b in d.ref_consts}
        for i in d.ref_inputs:
            if i < n:
                continue
            x = flat[i - n]
            where = self._path(entry.in_tree, i - n)
            if id(x) in seen:
                first = seen[id(x)]
                raise user_error(ValueError, (
                    f"only one reference to a mutable array may be passed to a function, but "
                    f"when calling {function_site(self._fun)} for jit the mutable array "
                    f"reference of type {get_aval(x)!r} "
                    + (f"appeared at both {first} and {where}." if first is not None else
                       f"was both closed over and passed as the argument {where}.")))
            seen[id(x)] = where

    def _names_shardings(self) -> bool:
        return self.in_shardings is not None or self.out_shardings is not None

    def _remember(self, entry, leaves):
        """Makes `entry`'s matcher for the types of these argument leaves the one `__call__`
        tries first, if they are Arrays and Python scalars (which is all a matcher takes)."""
        kinds = tuple(map(type, leaves))
        matcher = entry.matchers.get(kinds)
        if matcher is None:  # a first call: built at the second (most signatures of most
            entry.matchers[kinds] = _NOT_YET  # functions traced are called once)
            return
        if matcher is _NOT_YET:
            matcher = entry.matchers[kinds] = (
                all(k in _MATCHED_KINDS for k in kinds) and _matcher(entry, kinds) or _NO_MATCHER)
        if matcher is not _NO_MATCHER:
            self._mono = matcher

    # inspection ------------------------------------------------------------------------

    def trace(self, *args, **kwargs) -> Traced:
        entry, _ = self._trace(args, kwargs)
        return Traced(entry.jaxpr, self._name, entry.out_tree, entry.discharged)

    def lower(self, *args, **kwargs) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        entry, _ = self._trace(args, kwargs)
        return tree_unflatten(entry.out_tree, [ShapeDtypeStruct(a.shape, a.dtype)
                                               for a in entry.out_avals])

    def cache_info(self) -> CacheInfo:
        return CacheInfo(self._hits, self._misses, len(self._cache), self._last_miss)

    def tiers(self) -> list[str]:
        """The tier each cached signature runs on now: "native", "building" (the NumPy tier
        while native code is built), or "numpy". (A didax extension.)"""
        out = []
        for entry in self._cache.values():
            native = getattr(entry.executable, "native", None)
            status = native.status if native is not None else None
            out.append("native" if status == "ready" else
                       "building" if status == "queued" else "numpy")
        return out

    def _cache_size(self) -> int:
        return len(self._cache)

    def clear_cache(self):
        self._cache.clear()
        self._mono = _no_match
        self._last_key = None


_MISS = object()  # what a matcher returns for arguments it does not take


def _no_match(args):
    return _MISS


_NOT_YET = object()  # in `_Entry.matchers`: called once with these leaf types
_NO_MATCHER = object()  # in `_Entry.matchers`: none for these leaf types (the general path)
_MATCHED_KINDS = frozenset({core.Array, float, int, bool, complex})
_STATIC_KINDS = frozenset({int, float, bool, str, NoneType})  # compared in a matcher


def _matcher(entry, kinds):
    """A function of a call's positional arguments that runs `entry` if they are exactly
    what it was traced for (the same settings, no transformation, the same pytree structure,
    leaves of the types `kinds`: Arrays of the same avals, or Python scalars, whose avals
    depend only on their type and x64; equal static arguments of the same type), and else
    returns `_MISS`: the fixed cost of an eager call on the last signature. It is generated
    as straight-line Python for this entry's structure (no flattening, no key) and builds
    the output Arrays inline. None for what it does not handle (namedtuples, custom pytree
    nodes, static arguments other than numbers, strings and None): the general path."""
    if any(type(a) is not ShapedArray for a in entry.out_avals):
        return None  # (a token: see _run)
    root = entry.in_tree
    (args_tree, kwargs_tree) = root.children()
    if kwargs_tree.node_data() != (dict, []) or args_tree.node_data()[0] is not tuple:
        return None
    static = dict(entry.static)  # positions -> values, when called with positions only
    if not all(type(i) is int and type(v) in _STATIC_KINDS for i, v in static.items()):
        return None
    env = {"MISS": _MISS, "CTX": core._ctx,
           "EVAL": core.eval_interpreter, "ARRAY": core.Array,
           "FROM": core.Array.from_numpy, "EXE": entry.executable,
           "ASARRAY": np.asarray}
    n_const = len(env)

    def const(value):  # (named by the order of use: the source tells only the structure)
        name = f"c{len(env) - n_const}"
        env[name] = value
        return name

    body = []
    leaves = []
    names = iter(f"a{i}" for i in range(1 << 30))

    def take(var, tree):
        """Checks that `var` has the structure `tree`; collects its leaves' names."""
        data = tree.node_data()
        if data is None:
            kind = kinds[len(leaves)]
            body.append(f"    if type({var}) is not "
                        f"{'ARRAY' if kind is core.Array else kind.__name__}: return MISS")
            leaves.append(var)
            return True
        kind, aux = data
        children = tree.children()
        subs = [next(names) for _ in children]
        if kind is NoneType:
            body.append(f"    if {var} is not None: return MISS")
            return True
        if kind is tuple or kind is list:
            body.append(f"    if type({var}) is not {kind.__name__} or len({var}) != "
                        f"{len(children)}: return MISS")
            if subs:
                body.append(f"    {', '.join(subs)}, = {var}")
        elif kind is dict:
            body.append(f"    if type({var}) is not dict or len({var}) != {len(children)}: "
                        "return MISS")
            if subs:
                body.append("    try:")
                for sub, key in zip(subs, aux):
                    body.append(f"        {sub} = {var}[{const(key)}]")
                body.append("    except KeyError: return MISS")
        else:
            return False  # a namedtuple or custom node: flattened the general way
        return all(take(sub, child) for sub, child in zip(subs, children))

    args = [next(names) for _ in range(len(args_tree.children()) + len(static))]
    body.append(f"    if _settings is not {const(_settings)} or CTX.interp is not EVAL: "
                "return MISS")
    if args:
        body += ["    try:", f"        {', '.join(args)}, = args",
                 "    except ValueError: return MISS  # another number of arguments"]
    else:
        body.append("    if args: return MISS")
    dynamic = iter(args_tree.children())
    for i, a in enumerate(args):
        if i in static and static[i] is None:
            body.append(f"    if {a} is not None: return MISS")
        elif i in static:  # compared as the cache compares it, and of the same type too
            value = static[i]
            body.append(f"    if type({a}) is not {type(value).__name__} or {a} != "
                        f"{const(value)}: return MISS")
        elif not take(a, next(dynamic)):
            return None
    checks = [f"{v}.aval is not {const(a)}"
              for v, a, k in zip(leaves, entry.jaxpr.in_avals, kinds) if k is core.Array]
    if placement.active:  # (a sharded argument's results are placed by the general path)
        checks += [f"{const(_placed)}({v})" for v, k in zip(leaves, kinds) if k is core.Array]
    if checks:
        body.append(f"    if {' or '.join(checks)}: return MISS")
    values = [f"{v}._value" if k is core.Array else f"ASARRAY({v}, {const(a.dtype)})"
              for v, a, k in zip(leaves, entry.jaxpr.in_avals, kinds)]
    outs = [f"o{i}" for i in range(len(entry.out_avals))]
    call = f"EXE.run({', '.join(values)})"
    body.append(f"    {', '.join(outs)}, = {call}" if outs else f"    {call}")
    for o, aval in zip(outs, entry.out_avals):
        body.append(f"    {o} = FROM({o}, {const(aval)})")
    body.append(f"    return {_build_source(entry.out_tree, iter(outs), const)}")
    # Its constants are the closure of a factory; its one global is this module's
    # `_settings`, read as the module reads it. The source depends only on the structure
    # of the call, so signatures of one structure share its compiled code.
    source = (f"def make({', '.join(env)}):\n    def match(args):\n"
              + "".join(f"    {line}\n" for line in body) + "    return match\n")
    make = _matcher_factories.get(source)
    if make is None:
        made = {}
        exec(compile(source, "<didax jit call>", "exec"), globals(), made)
        make = caches.add(_matcher_factories, source, made["make"])
    return make(**env)


# source -> the compiled `make` of `_matcher`
_matcher_factories = caches.memo("jit.matcher_factories", limit=1024)


def _build_source(tree, outs, const) -> str:
    """An expression building the pytree `tree` from the names in `outs`."""
    data = tree.node_data()
    if data is None:
        return next(outs)
    kind, aux = data
    if kind not in (tuple, list, dict, NoneType):  # a namedtuple or custom node
        leaves = [next(outs) for _ in range(tree.num_leaves)]
        return f"{const(tree)}.unflatten([{', '.join(leaves)}])"
    parts = [_build_source(c, outs, const) for c in tree.children()]
    if kind is tuple:
        return f"({''.join(p + ', ' for p in parts)})"
    if kind is list:
        return f"[{', '.join(parts)}]"
    if kind is dict:
        return "{" + ", ".join(f"{const(k)}: {p}" for k, p in zip(aux, parts)) + "}"
    return "None"


def _run(executable, out_avals, vals):
    """Runs generated code on NumPy values; its outputs as Arrays of the traced types (the
    optimised jaxpr may have forwarded an output to a value of another weak type)."""
    from_numpy = core.Array.from_numpy
    return [from_numpy(o, a) if type(a) is ShapedArray else a.value_from_impl(o)  # (a token)
            for o, a in zip(executable.run(*vals), out_avals)]


def _run_with_refs(executable, discharged, flat, out_avals):
    """Runs the code of a discharged jaxpr: the references among the arguments (and those
    the function closes over) read before, written after (in place, as in JAX)."""
    operands = []
    for x, a in zip(flat, discharged.jaxpr.in_avals[len(discharged.ref_consts):]):
        if type(x) is core.Array or type(x) is Ref:
            operands.append(x)
        elif isinstance(x, Tracer):
            raise core.escaped_tracer_error(x)
        else:
            operands.append(np.asarray(x, a.dtype))
    outs = state_discharge.run(
        discharged, [x._value if type(x) is core.Array else x for x in operands],
        executable.run)
    from_numpy = core.Array.from_numpy
    return [from_numpy(o, a) for o, a in zip(outs, out_avals)]


def _call_with_refs(entry, operands, name):
    """A call, under a transformation, of a jitted function that reads or writes references.
    Staged to a jaxpr (make_jaxpr, an enclosing jit), the call takes the references, as in
    JAX; under any other transformation (grad, vmap...), it is the discharged call between
    reads and writes of the references, which that transformation sees."""
    if type(core._ctx.interp) is StagingInterpreter:
        return bind_call(operands, jaxpr=entry.jaxpr, name=name, donated_invars=entry.donated)
    d = entry.discharged
    return state_discharge.call_under_transformation(
        d, operands, lambda *vals: bind_call(vals, jaxpr=d.jaxpr, name=name))


class _Absent:
    def __repr__(self):
        return "<absent>"


_ABSENT = _Absent()


_TOKEN_KEY = ((), None, False, "Tok")  # (a token argument's part of a signature)


def _type_str(t):
    if t == _TOKEN_KEY:
        return "Tok"
    shape, dtype, weak, *ref = t
    text = ShapedArray(shape, dtype, weak).str_short() + (" (weak)" if weak else "")
    return f"Ref{{{text}}}" if ref else text


def _hashable_static(x, name):
    try:
        hash(x)
    except TypeError as e:
        shown = repr(x)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        hint = {list: "a tuple", dict: "a tuple of (key, value) pairs or a frozen mapping",
                set: "a frozenset"}.get(type(x), "a hashable value (define __hash__ and __eq__)")
        raise user_error(ValueError, (
            f"Non-hashable static arguments are not supported: static argument {name} is a "
            f"{type(x).__name__} ({shown}), and hashing it failed ({e}). jit caches compiled "
            "code by the static arguments' hashes.\n"
            f"What to do: pass {hint} instead, or pass it as a traced (non-static) array if it "
            "holds numbers.")) from None
    return x


class Traced:
    """A traced jitted function: its jaxpr before optimisation."""

    def __init__(self, jaxpr, name, out_tree, discharged=None):
        self.jaxpr = jaxpr
        self.name = name
        self.out_tree = out_tree
        self.discharged = discharged

    def lower(self) -> Lowered:
        """Optimised (with references discharged: the jaxpr that runs)."""
        d = self.discharged
        return Lowered(optimize(self.jaxpr if d is None else d.jaxpr), self.name,
                       self.out_tree, self.jaxpr.out_avals, d)


class Lowered:
    """The optimised jaxpr of a jitted function; `compile()` generates its Python code."""

    def __init__(self, jaxpr, name, out_tree, out_avals, discharged=None):
        self.jaxpr = jaxpr
        self.name = name
        self.out_tree = out_tree
        self.out_avals = out_avals
        self.discharged = discharged

    def as_text(self) -> str:
        return str(self.jaxpr)

    def compile(self) -> Compiled:
        """Generates the NumPy-tier code and, unless the native tier is off, builds the
        native code before returning (ahead-of-time compilation waits for it)."""
        checks = float_checks()
        exe = compile_jaxpr(self.jaxpr, self.name, checks, optimized=True)
        if config.read("didax_native_tier") != "off" and not any(checks):
            tier.attach(exe, "sync")
        return Compiled(exe, self.out_tree, self.out_avals, self.discharged)


class Compiled:
    """Generated Python source and the function compiled from it (called with the
    dynamic arguments, in the signature it was lowered for); and the native tier's C
    source when it has one."""

    def __init__(self, executable, out_tree, out_avals, discharged=None):
        self.executable = executable
        self.out_tree = out_tree
        self.out_avals = out_avals
        self.discharged = discharged

    def as_text(self) -> str:
        native = self.executable.native
        if native is None or native.source is None:
            return self.executable.source
        return (f"{self.executable.source}\n/* The native tier: */\n\n{native.source}")

    def __call__(self, *args, **kwargs):
        flat, _ = tree_flatten((args, kwargs))
        if self.discharged is not None and not self.discharged.same_signature:
            return tree_unflatten(self.out_tree, _run_with_refs(
                self.executable, self.discharged, flat, self.out_avals))
        vals = [x._value if type(x) is core.Array else np.asarray(x, a.dtype)
                for x, a in zip(flat, self.executable.jaxpr.in_avals)]
        return tree_unflatten(self.out_tree, _run(self.executable, self.out_avals, vals))
