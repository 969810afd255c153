"""What the debugging flags do when `jit` traces or compiles: `jax_no_tracing` refuses a
trace, `jax_check_tracer_leaks` looks for traced values kept after one, `jax_log_compiles`
logs each compilation and `jax_enable_checks` type-checks what is compiled."""
from __future__ import annotations

import gc
import logging

from didax._src import core
from didax._src.config import config
from didax._src.ir import check_jaxpr

logger = logging.getLogger("didax")


def tracing(fun_name: str, site: str) -> None:
    """Called before `jit` traces a function (a cache miss)."""
    if config.read("jax_no_tracing"):
        raise RuntimeError(f"re-tracing function {site or fun_name} for `jit`, but "
                           "'no_tracing' is set")


def compiling(closed, name: str) -> None:
    """Called before a jaxpr is compiled for `jit` or `pmap`."""
    log = logger.warning if config.read("jax_log_compiles") else logger.debug
    log("Compiling jit(%s) with global shapes and types %s.", name,
        tuple(a.str_short() for a in closed.in_avals))
    if config.read("jax_enable_checks"):
        check_jaxpr(closed.jaxpr)


def check_leaks(interp, outputs, fun_name: str) -> None:
    """With `jax_check_tracer_leaks` on: raise if a tracer of the finished trace `interp`
    (other than its `outputs`) is still referenced, naming what refers to it."""
    if not config.read("jax_check_tracer_leaks"):
        return
    gc.collect()
    returned = {id(x) for x in outputs}
    leaked = [o for o in gc.get_objects()
              if isinstance(o, core.Tracer) and o._interp is interp and id(o) not in returned]
    if not leaked:
        return
    lines = []
    for t in leaked:
        holders = [r for r in gc.get_referrers(t) if r is not leaked]
        where = ", ".join(_describe(r) for r in holders[:3]) or "an unknown referrer"
        lines.append(f"{t.aval.str_short()} traced value, referred to by {where}")
    raise Exception(
        f"Leaked trace of {fun_name} for jit (jax_check_tracer_leaks is on). Leaked "
        "tracer(s):\n  " + "\n  ".join(lines) + "\nA traced value must not outlive its "
        "trace: return it from the function instead of storing it.")


def _describe(obj) -> str:
    if isinstance(obj, dict):
        return f"a dict with keys {list(obj)[:5]}"
    return f"a {type(obj).__name__}"
