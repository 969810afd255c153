"""The properties every random program (`random_programs.py`) must have, checked in float64.

- jit: `jit(f)` computes what `f` computes eagerly;
- vmap: `vmap(f)`, `jit(vmap(f))` and `vmap(jit(f))` are a loop over the batch, with batch
  axes first, last or absent per input;
- jvp_vjp: `<w, J u> == <J^T w, u>`, and both give `f`'s value (also linearize, and both
  under jit);
- jacobians: jacfwd (JVPs under vmap) and jacrev agree, and contract with u to J u;
- fd: first and second derivatives (forward, forward over reverse, reverse over reverse)
  against central finite differences;
- grad_jit: `grad(L) == jit(grad(L)) == grad(jit(f)) ...` for `L = <w, f>`;
- vmap_grad: `vmap(grad(L))` is a loop of `grad(L)`;
- jax: the same source under JAX gives the same value, JVP and VJP.

A finite difference is trusted only where it is smooth: at step h and 2h it must agree. Where
it does not, a kink (max, abs, a branch predicate) lies within a step of the point, the
derivative is not defined by the difference, and that comparison is set aside and counted
(`Report.set_aside`) rather than failed.

Exceptions: a program with a `while_loop` is checked in forward mode only (JAX refuses its
reverse mode; didax's needs the trip count at linearization, which staged bodies do not
give); JAX has no forward mode for `custom_vjp`, so those comparisons with JAX are left out
(didax's are kept).
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field

import jax
import jax.numpy as jjnp
import numpy as np

import didax
import didax.numpy as dnp
from didax import lax as dlax

H = 1e-5  # finite-difference step; inputs and values are O(1)
FD_TOL = 1e-6  # relative to max(1, |derivative|)
TIGHT = 1e-10  # the same arithmetic, perhaps in another order
JAX_TOL = 1e-9  # another library's kernels

ALL_CHECKS = ("jit", "vmap", "jvp_vjp", "jacobians", "fd", "grad_jit", "vmap_grad")


@dataclass
class Report:
    failures: list = field(default_factory=list)  # (check, message)
    set_aside: list = field(default_factory=list)  # finite differences across a kink

    def __bool__(self):
        return not self.failures

    def describe(self, program):
        lines = [f"{check}: {message}" for check, message in self.failures]
        return "\n".join(["random program:", str(program), *lines])


def _leaves(out):
    items = out if isinstance(out, (tuple, list)) else (out,)
    return [np.asarray(o, dtype=np.float64) for o in items]


def _raw_leaves(out):
    items = out if isinstance(out, (tuple, list)) else (out,)
    return [np.asarray(o) for o in items]


def _flat(out):
    leaves = _leaves(out)
    return np.concatenate([x.ravel() for x in leaves]) if leaves else np.zeros(0)


def _mismatch(got, want, tol):
    """None if close, else a description of the largest difference."""
    got, want = _raw_leaves(got), _raw_leaves(want)
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"output {k}: {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
        if not np.all(np.isfinite(w)):
            if not np.array_equal(np.isfinite(g), np.isfinite(w)):
                return f"output {k}: non-finite pattern differs"
            g, w = g[np.isfinite(w)], w[np.isfinite(w)]
        scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
        err = float(np.max(np.abs(g - w), initial=0.0))
        if not err <= tol * scale:
            return (f"output {k}: max difference {err:.3g} (tolerance {tol * scale:.3g})\n"
                    f"got\n{g}\nexpected\n{w}")
    return None


def _inner(a, b):
    return float(sum(np.vdot(np.asarray(x, np.float64), np.asarray(y, np.float64))
                     for x, y in zip(_leaves(a), _leaves(b))))


class _Checker:
    def __init__(self, program, seed, lib=(didax, dnp, dlax)):
        self.program = program
        self.jax, self.jnp, _ = lib
        self.f = program.build(*lib)
        rng = np.random.default_rng(seed + 1)
        self.args = [self.jnp.asarray(a) for a in program.arguments(seed)]
        self.u = [rng.standard_normal(a.shape) for a in self.args]
        self.v = [rng.standard_normal(a.shape) for a in self.args]
        self.z = [rng.standard_normal(a.shape) for a in self.args]
        self.w = [rng.standard_normal(s) for s in program.shapes]
        self.rng = rng
        self.report = Report()
        # JAX has no reverse mode for while_loop; didax's works eagerly only, and the
        # program's own rules (cond, checkpoint) stage their bodies: forward mode only.
        self.reverse = "while" not in program.features
        self.eager = (self.f if lib[0] is didax else self.jax.jit(self.f))(*self.args)

    def fail(self, check, message):
        self.report.failures.append((check, message))

    def compare(self, check, got, want, tol):
        problem = _mismatch(got, want, tol)
        if problem:
            self.fail(check, problem)

    # -- the properties ---------------------------------------------------------------------

    def check_jit(self):
        self.compare("jit", self.jax.jit(self.f)(*self.args), self.eager, TIGHT)

    def check_vmap(self):
        batch = 3
        axes = [int(self.rng.choice([0, -1, -2])) for _ in self.args]  # -2: not batched
        axes = [None if a == -2 else (a if a == 0 else np.ndim(x))
                for a, x in zip(axes, self.args)]
        if all(a is None for a in axes):
            axes[0] = 0
        stacked = []
        for x, a in zip(self.args, axes):
            if a is None:
                stacked.append(x)
            else:
                extra = self.rng.standard_normal((batch,) + np.shape(x))
                stacked.append(self.jnp.asarray(np.moveaxis(extra, 0, a)))
        got = self.jax.vmap(self.f, in_axes=tuple(axes))(*stacked)
        rows = [self.f(*[x if a is None else self.jnp.asarray(np.take(np.asarray(x), b, axis=a))
                         for x, a in zip(stacked, axes)]) for b in range(batch)]
        want = [np.stack([_leaves(r)[k] for r in rows]) for k in range(len(_leaves(rows[0])))]
        self.compare("vmap", got, want, TIGHT)
        batched = self.jax.vmap(self.f, in_axes=tuple(axes))
        self.compare("vmap", self.jax.jit(batched)(*stacked), want, TIGHT)
        self.compare("vmap", self.jax.vmap(self.jax.jit(self.f), in_axes=tuple(axes))(*stacked),
                     want, TIGHT)

    def _tangents(self, dirs):
        return tuple(self.jnp.asarray(d) for d in dirs)

    def jvp(self, fun, args, dirs):
        return self.jax.jvp(fun, tuple(args), self._tangents(dirs))

    def pullback(self, fun, args, ct):
        out, pull = self.jax.vjp(fun, *args)
        return out, pull(self._ct(out, ct))

    def _ct(self, out, ct):
        if isinstance(out, (tuple, list)):
            return type(out)(self.jnp.asarray(c) for c in ct)
        return self.jnp.asarray(ct[0])

    def grad_of_loss(self, *args):
        """The gradient of `<w, f>` with respect to every input (reverse mode)."""
        _, pull = self.jax.vjp(self.f, *args)
        return list(pull(self._ct(self.eager, self.w)))

    def check_jvp_vjp(self):
        jax = self.jax
        y1, t = self.jvp(self.f, self.args, self.u)
        self.compare("jvp_vjp", y1, self.eager, TIGHT)
        staged = jax.jit(lambda a, d: jax.jvp(self.f, tuple(a), tuple(d)))
        self.compare("jvp_vjp", staged(self.args, self._tangents(self.u))[1], t, TIGHT)
        if not self.reverse:
            return
        y3, lin = jax.linearize(self.f, *self.args)
        self.compare("jvp_vjp", y3, self.eager, TIGHT)
        self.compare("jvp_vjp", lin(*self._tangents(self.u)), t, TIGHT)
        y2, g = self.pullback(self.f, self.args, self.w)
        self.compare("jvp_vjp", y2, self.eager, TIGHT)
        self._transposed("jvp_vjp", t, g)
        self.compare("jvp_vjp", jax.jit(lambda a: self.pullback(self.f, a, self.w)[1])(self.args),
                     g, TIGHT)

    def check_jacobians(self):
        """jacfwd (JVPs batched by vmap) == jacrev (VJPs batched), contracted with u == J u."""
        jax = self.jax
        argnums = tuple(range(len(self.args)))
        fwd = jax.jacfwd(self.f, argnums=argnums)(*self.args)
        _, t = self.jvp(self.f, self.args, self.u)
        outs = _as_list(fwd) if isinstance(self.eager, (tuple, list)) else [fwd]
        contracted = []
        for per_out, shape in zip(outs, self.program.shapes):
            total = np.zeros(shape)
            for jac, u in zip(per_out, self.u):
                j = np.asarray(jac).reshape(int(np.prod(shape)), u.size)
                total = total + (j @ u.ravel()).reshape(shape)
            contracted.append(total)
        self.compare("jacobians", contracted, t, TIGHT)
        if self.reverse:
            rev = jax.jacrev(self.f, argnums=argnums)(*self.args)
            self.compare("jacobians", [np.asarray(j) for o in _as_list(rev) for j in _as_list(o)]
                         if isinstance(self.eager, (tuple, list)) else list(rev),
                         [np.asarray(j) for o in outs for j in _as_list(o)], TIGHT)

    def _transposed(self, check, t, g):
        lhs, rhs = _inner(self.w, t), _inner(g, self.u)
        scale = max(1.0, np.linalg.norm(_flat(self.w)) * np.linalg.norm(_flat(t)),
                    np.linalg.norm(_flat(g)) * np.linalg.norm(_flat(self.u)))
        if not abs(lhs - rhs) <= 1e-9 * scale:
            self.fail(check, f"<w, J u> = {lhs!r} but <J^T w, u> = {rhs!r}")

    def _fd(self, fun, dirs, step):
        plus = [x + step * d for x, d in zip(self.args, dirs)]
        minus = [x - step * d for x, d in zip(self.args, dirs)]
        return (_flat(fun(*[self.jnp.asarray(p) for p in plus]))
                - _flat(fun(*[self.jnp.asarray(m) for m in minus]))) / (2 * step)

    def against_fd(self, check, fun, derivative, dirs):
        """`derivative` (flat) against central differences of `fun` along `dirs`."""
        d1, d2 = self._fd(fun, dirs, H), self._fd(fun, dirs, 2 * H)
        scale = max(1.0, float(np.max(np.abs(d1), initial=0.0)))
        if not np.max(np.abs(d1 - d2), initial=0.0) <= FD_TOL * scale:
            self.report.set_aside.append(check)
            return
        err = float(np.max(np.abs(_flat(derivative) - d1), initial=0.0))
        if not err <= FD_TOL * scale:
            self.fail(check, f"derivative differs from finite differences by {err:.3g} "
                             f"(scale {scale:.3g})\nAD {_flat(derivative)}\nFD {d1}")

    def check_fd(self):
        jax = self.jax
        _, t = self.jvp(self.f, self.args, self.u)
        self.against_fd("fd jvp", self.f, t, self.u)

        def tangent(*xs):
            return jax.jvp(self.f, tuple(xs), self._tangents(self.u))[1]

        _, tt = self.jvp(tangent, self.args, self.v)
        self.against_fd("fd jvp of jvp", tangent, tt, self.v)
        if not self.reverse:
            return

        def gradient(*xs):
            _, pull = jax.vjp(self.f, *xs)
            return list(pull(self._ct(self.eager, self.w)))

        g = gradient(*self.args)
        lhs = _inner(g, self.u)
        self.against_fd("fd vjp", lambda *xs: [_inner(self.w, self.f(*xs))], [lhs], self.u)
        _, hv = self.jvp(gradient, self.args, self.v)
        self.against_fd("fd jvp of vjp", gradient, hv, self.v)
        _, pull = jax.vjp(gradient, *self.args)
        hz = pull([self.jnp.asarray(z) for z in self.z])
        self.against_fd("fd vjp of vjp", lambda *xs: [_inner(self.z, gradient(*xs))],
                        [_inner(hz, self.v)], self.v)

    def check_grad_jit(self):
        jax = self.jax
        w = [self.jnp.asarray(x) for x in self.w]
        argnums = tuple(range(len(self.args)))

        def loss(*xs):
            out = _as_list(self.f(*xs))
            return sum(self.jnp.vdot(a, b) for a, b in zip(w, out))

        def loss_of_jit(*xs):
            out = _as_list(jax.jit(self.f)(*xs))
            return sum(self.jnp.vdot(a, b) for a, b in zip(w, out))

        if not self.reverse:
            return
        eager = jax.grad(loss, argnums=argnums)(*self.args)
        self.compare("grad_jit", eager, self.grad_of_loss(*self.args), TIGHT)
        self.compare("grad_jit", jax.jit(jax.grad(loss, argnums=argnums))(*self.args), eager,
                     TIGHT)
        self.compare("grad_jit", jax.grad(loss_of_jit, argnums=argnums)(*self.args), eager,
                     TIGHT)

    def check_vmap_grad(self):
        if not self.reverse:
            return
        jax = self.jax
        batch = 2
        stacked = [self.jnp.asarray(self.rng.standard_normal((batch,) + np.shape(x)))
                   for x in self.args]
        w = [self.jnp.asarray(x) for x in self.w]

        def loss(*xs):
            out = _as_list(self.f(*xs))
            return sum(self.jnp.vdot(a, b) for a, b in zip(w, out))

        argnums = tuple(range(len(self.args)))
        fun = jax.grad(loss, argnums=argnums)
        got = jax.vmap(fun)(*stacked)
        rows = [fun(*[x[b] for x in stacked]) for b in range(batch)]
        want = [np.stack([np.asarray(r[k]) for r in rows]) for k in range(len(self.args))]
        self.compare("vmap_grad", got, want, TIGHT)


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check_program(program, seed=0, checks=ALL_CHECKS) -> Report:
    """Runs the named properties; an exception in one is that property's failure."""
    try:
        checker = _Checker(program, seed)
    except Exception:  # noqa: BLE001 (the report names it)
        return Report([("eager", traceback.format_exc(limit=-6))])
    for name in checks:
        try:
            getattr(checker, "check_" + name)()
        except Exception:  # noqa: BLE001
            checker.fail(name, traceback.format_exc(limit=-6))
    return checker.report


def check_against_jax(program, seed=0) -> Report:
    """didax and JAX on the same source: values, JVPs and VJPs (where JAX defines them)."""
    report = Report()
    try:
        ours = _Checker(program, seed)
        theirs = _Checker(program, seed, lib=(jax, jjnp, jax.lax))
        pairs = [("jax value", lambda c: c.eager, lambda c: c.eager)]
        if "custom_vjp" not in program.features:
            pairs.append(("jax jvp", lambda c: c.jvp(c.f, c.args, c.u)[1],
                          lambda c: jax.jit(lambda a: c.jvp(c.f, a, c.u)[1])(c.args)))
        if "while" not in program.features:
            pairs.append(("jax vjp", lambda c: c.pullback(c.f, c.args, c.w)[1],
                          lambda c: jax.jit(lambda a: c.pullback(c.f, a, c.w)[1])(c.args)))
        for name, get, get_jax in pairs:  # JAX compiled: op by op it is slow
            problem = _mismatch(get(ours), get_jax(theirs), JAX_TOL)
            if problem:
                report.failures.append((name, problem))
    except Exception:  # noqa: BLE001
        report.failures.append(("jax", traceback.format_exc(limit=-6)))
    return report
