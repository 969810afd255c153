"""Random programs over the jnp/lax surface, for checking transformations against each other.

A program is Python source: a function of named float64 arrays, one statement per
operation, drawn from a typed grammar (the shape of every value is known when it is made,
so every program is well formed). The same source runs under didax and under JAX, and it
is what a failure report shows.

Choices come from a `Chooser`: hypothesis draws (a failing program then shrinks toward
fewer and simpler operations, since the first option of every choice is the simplest) or a
seeded `random.Random` (the long run: program k is seed k).

Values stay smooth and bounded so that finite differences mean something: domains are
kept by construction (`log1p(x * x)`, `sqrt(1 + x * x)`), growth-prone operations are
followed by `tanh`, loop carries contract. Kinks (max, min, abs, branch predicates) are kept
too; at random inputs a kink within a finite-difference step is improbable, and the checks
in `program_checks.py` detect and set aside such points rather than compare across them.
"""
from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

MAX_INPUTS = 4
MAX_RANK = 3
MAX_SIZE = 64  # elements of one value
MAX_DEPTH = 2  # functions nested inside functions (loop bodies, branches, custom rules)


class Chooser:
    """Integer choices from some source; everything else derives from `int`."""

    def __init__(self, draw_int):
        self._draw = draw_int

    def int(self, lo, hi):
        return self._draw(lo, hi)

    def pick(self, options):
        return options[self.int(0, len(options) - 1)]

    def coin(self, chance=0.5):
        return self.int(0, 99) < chance * 100

    @classmethod
    def from_seed(cls, seed):
        rng = random.Random(seed)
        return cls(rng.randint)

    @classmethod
    def from_hypothesis(cls, draw):
        return cls(lambda lo, hi: draw(st.integers(lo, hi)))


@dataclass
class Program:
    params: list  # (name, shape) of the inputs, in order
    lines: list  # the body of `f`, indented
    outputs: list  # names returned
    shapes: list  # their shapes
    features: set = field(default_factory=set)  # "while", "custom_vjp", "kink"

    def source(self) -> str:
        head = f"def f({', '.join(n for n, _ in self.params)}):"
        ret = ", ".join(self.outputs) + ("," if len(self.outputs) == 1 else "")
        tail = f"    return {self.outputs[0]}" if len(self.outputs) == 1 else f"    return ({ret})"
        return "\n".join([head, *self.lines, tail]) + "\n"

    def build(self, jax, jnp, lax):
        """The program as a function over the given library (didax or JAX)."""
        namespace = {"jax": jax, "jnp": jnp, "lax": lax}
        exec(compile(self.source(), "<random program>", "exec"), namespace)  # noqa: S102
        return namespace["f"]

    def arguments(self, seed=0):
        rng = np.random.default_rng(seed)
        return [rng.standard_normal(shape) for _, shape in self.params]

    def __str__(self):
        notes = f"  # features: {sorted(self.features)}" if self.features else ""
        shapes = ", ".join(f"{n}: {s}" for n, s in self.params)
        return f"# inputs {shapes}{notes}\n{self.source()}"


# ---------------------------------------------------------------------------------------
# Shapes

def _size(shape):
    return math.prod(shape)


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def _factorizations(size, max_rank=MAX_RANK):
    """Every shape of rank 1..max_rank with this size and no dimension above 9."""
    found = []
    for rank in range(1, max_rank + 1):
        for dims in itertools.product(range(1, min(size, 9) + 1), repeat=rank):
            if _size(dims) == size:
                found.append(dims)
    return found


def _indexed_shape(shape, index):
    return np.empty(shape)[index].shape


def _fmt_index(parts):
    def one(p):
        if isinstance(p, slice):
            start = "" if p.start is None else str(p.start)
            stop = "" if p.stop is None else str(p.stop)
            step = "" if p.step is None else f":{p.step}"
            return f"{start}:{stop}{step}"
        if isinstance(p, np.ndarray):
            return f"jnp.array({p.tolist()})"
        return str(p)

    return ", ".join(one(p) for p in parts)


def _axes_arg(axes):
    if axes is None:
        return ""
    if isinstance(axes, int):
        return f", axis={axes}"
    return f", axis={tuple(axes)}"


def _reduced_shape(shape, axes, keepdims):
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = {a % len(shape) for a in axes}
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


# ---------------------------------------------------------------------------------------
# Templates. `{x}`, `{a}`, `{b}` are names of values; every template is safe on all reals.

UNARY = [
    "jnp.sin({x})", "jnp.tanh({x})", "jnp.cos({x})", "-{x}", "jax.nn.sigmoid({x})",
    "jnp.log1p({x} * {x})", "jnp.sqrt(1.0 + {x} ** 2)", "jnp.exp(jnp.tanh({x}))",
    "jnp.arctan({x})", "jnp.arcsinh({x})", "jax.nn.softplus({x})",
    "lax.integer_pow(jnp.tanh({x}), 3)", "jnp.log(2.0 + jnp.sin({x}))",
    "lax.rsqrt(1.0 + {x} * {x})", "jnp.square(jnp.sin({x}))", "jax.nn.gelu({x})",
    "jax.nn.silu({x})", "jnp.expm1(jnp.tanh({x}))", "lax.erf({x})", "0.5 * {x}",
    "jnp.cosh(jnp.tanh({x}))", "jnp.tanh({x}) ** 2", "jnp.abs({x})", "jax.nn.relu({x})",
    "jnp.clip({x}, -0.5, 0.8)",
]
KINKY_UNARY = {"jnp.abs({x})", "jax.nn.relu({x})", "jnp.clip({x}, -0.5, 0.8)"}

BINARY = [
    "{a} + {b}", "{a} * jnp.tanh({b})", "{a} - {b}", "{a} / (1.0 + {b} * {b})",
    "jnp.logaddexp({a}, {b})", "jnp.arctan2({a}, 2.0 + jnp.cos({b}))",
    "jnp.power(1.5 + jnp.sin({a}), jnp.cos({b}))", "0.5 * ({a} + {b})",
    "jnp.hypot({a}, 1.0 + {b} * {b})", "jnp.maximum({a}, {b})", "jnp.minimum({a}, {b})",
    "jnp.where({a} > {b}, jnp.sin({a}), {b})",
]
KINKY_BINARY = {"jnp.maximum({a}, {b})", "jnp.minimum({a}, {b})",
                "jnp.where({a} > {b}, jnp.sin({a}), {b})"}

REDUCTIONS = [
    "jnp.sum({x}{ax})", "jnp.mean({x}{ax})", "jnp.max({x}{ax})", "jnp.min({x}{ax})",
    "jnp.prod(jnp.cos({x}){ax})", "jax.nn.logsumexp({x}{ax})", "jnp.var({x}{ax})",
    "jnp.prod(1.0 + 0.25 * jnp.tanh({x}){ax})",
]
KINKY_REDUCTIONS = {"jnp.max({x}{ax})", "jnp.min({x}{ax})"}

# Elementwise functions with their true derivatives, for custom_jvp/custom_vjp rules.
DERIVATIVES = [
    ("jnp.sin({x}) * jnp.tanh({x})",
     "jnp.cos({x}) * jnp.tanh({x}) + jnp.sin({x}) * (1.0 - jnp.tanh({x}) ** 2)"),
    ("jnp.log1p({x} * {x})", "2.0 * {x} / (1.0 + {x} * {x})"),
    ("jax.nn.softplus({x})", "jax.nn.sigmoid({x})"),
    ("jnp.sqrt(1.0 + {x} * {x})", "{x} / jnp.sqrt(1.0 + {x} * {x})"),
]

EINSUMS = ["ij,jk->ik", "ij->ji", "ij,ij->", "i,i->", "ij,j->i", "ijk,ik->ij",
           "bij,bjk->bik", "i,j->ij", "ijk->kj", "ij,kj->ik", "ii->i"]


class Scope:
    """Where statements go: the body of `f`, or of a function nested in it."""

    def __init__(self, gen, parent=None, closed=False):
        self.gen = gen
        self.parent = parent
        self.closed = closed  # sees nothing of its parent (custom rules take their operands)
        self.indent = 1 if parent is None else parent.indent + 1
        self.depth = 0 if parent is None else parent.depth + 1
        self.values = []  # (name, shape) made here, in order
        self.reversed = parent is not None and parent.reversed  # see Generator.ctl_while

    @property
    def opened(self):
        return not any(s.closed for s in self.chain())

    def chain(self):
        s = self
        while s is not None:
            yield s
            s = s.parent

    def visible(self):
        found = list(self.values)
        if not self.closed and self.parent is not None:
            found += self.parent.visible()
        elif self.parent is None:
            found += self.gen.params
        return found

    def emit(self, line):
        self.gen.lines.append("    " * self.indent + line)

    def new(self, expr, shape):
        name = self.gen.fresh("v")
        self.emit(f"{name} = {expr}")
        self.values.append((name, tuple(shape)))
        return name


class Generator:
    """Draws one program: operations on the values in scope, each typed by its shape."""

    def __init__(self, chooser: Chooser, max_ops=8):
        self.c = chooser
        self.max_ops = max_ops
        self.params = []
        self.lines = []
        self.used = set()
        self.features = set()
        self._count = itertools.count()

    def fresh(self, prefix):
        return f"{prefix}{next(self._count)}"

    # -- values ---------------------------------------------------------------------------

    def shape(self, max_rank=MAX_RANK, min_rank=0):
        rank = self.c.int(min_rank, max_rank)
        return tuple(self.c.int(1, 3) for _ in range(rank))

    def take(self, scope, ok=lambda shape: True):
        """A visible value (recent ones first) whose shape satisfies `ok`, or None."""
        options = [v for v in reversed(scope.visible()) if ok(v[1])]
        if not options:
            return None
        name, shape = options[self.c.int(0, len(options) - 1)]
        self.used.add(name)
        return name, shape

    def need(self, scope, shape):
        """An expression of exactly this shape: a value that has it, a new input, or another
        value fitted to it."""
        shape = tuple(shape)
        if self.c.coin(0.6):
            found = self.take(scope, lambda s: s == shape)
            if found:
                return found[0]
        if scope.opened and len(self.params) < MAX_INPUTS:
            name = self.fresh("x")
            self.params.append((name, shape))
            self.used.add(name)
            return name
        name, have = self.take(scope)
        return self.fit(name, have, shape)

    def fit(self, name, have, shape):
        if have == shape:
            return name
        if _broadcasts(have, shape) and np.broadcast_shapes(have, shape) == shape:
            return f"jnp.broadcast_to({name}, {shape})"
        if _size(have) == _size(shape):
            return f"jnp.reshape({name}, {shape})"
        return f"jnp.broadcast_to(jnp.mean({name}), {shape})"

    def any_value(self, scope, min_rank=0):
        found = self.take(scope, lambda s: len(s) >= min_rank)
        if found is None:
            shape = self.shape(min_rank=min_rank)
            return self.need(scope, shape), shape
        return found

    # -- the program ----------------------------------------------------------------------

    def program(self) -> Program:
        top = Scope(self)
        first = self.shape()
        self.params.append(("x", first))
        for _ in range(self.c.int(1, self.max_ops)):
            self.operation(top)
        sinks = [v for v in top.values if v[0] not in self.used] or [top.values[-1]]
        outputs = sinks[-3:]
        return Program(list(self.params), list(self.lines), [n for n, _ in outputs],
                       [s for _, s in outputs], set(self.features))

    def operation(self, scope):
        ops = [self.unary, self.binary, self.reduction, self.shape_op, self.indexing,
               self.update, self.product, self.control]
        for _ in range(20):  # an operation may not apply to what is in scope
            if self.c.pick(ops)(scope):
                return
        self.unary(scope)

    def unary(self, scope):
        x, shape = self.any_value(scope)
        template = self.c.pick(UNARY)
        if template in KINKY_UNARY:
            self.features.add("kink")
        scope.new(template.format(x=x), shape)
        return True

    def binary(self, scope):
        a, sa = self.any_value(scope)
        template = self.c.pick(BINARY)
        found = self.take(scope, lambda s: _broadcasts(s, sa)) if self.c.coin(0.7) else None
        if found is None:
            sb = tuple(d if self.c.coin(0.7) else 1 for d in sa[self.c.int(0, len(sa)):])
            found = self.need(scope, sb), sb
        b, sb = found
        if self.c.coin(0.3):
            a, sa, b, sb = b, sb, a, sa
        if template in KINKY_BINARY:
            self.features.add("kink")
        scope.new(template.format(a=a, b=b), np.broadcast_shapes(sa, sb))
        return True

    def reduction(self, scope):
        x, shape = self.any_value(scope, min_rank=1)
        rank = len(shape)
        kind = self.c.int(0, 2)
        if kind == 0:
            axes = None
        elif kind == 1:
            axes = self.c.int(-rank, rank - 1)
        else:
            axes = tuple(sorted({self.c.int(0, rank - 1) for _ in range(self.c.int(1, rank))}))
        keepdims = self.c.coin(0.25)
        template = self.c.pick(REDUCTIONS)
        if template in KINKY_REDUCTIONS:
            self.features.add("kink")
        if self.c.coin(0.15):  # running reductions
            axis = self.c.int(0, rank - 1)
            scope.new(self.c.pick([
                f"jnp.cumsum({x}, axis={axis})", f"jnp.cumprod(jnp.cos({x}), axis={axis})",
                f"lax.associative_scan(jnp.logaddexp, {x}, axis={axis})",
                f"lax.associative_scan(jnp.add, {x}, reverse=True, axis={axis})"]), shape)
            return True
        arg = _axes_arg(axes) + (", keepdims=True" if keepdims else "")
        scope.new(template.format(x=x, ax=arg), _reduced_shape(shape, axes, keepdims))
        return True

    def shape_op(self, scope):
        x, shape = self.any_value(scope)
        rank = len(shape)
        kind = self.c.pick(["reshape", "transpose", "broadcast", "expand", "squeeze",
                            "concatenate", "stack", "slice", "flip", "roll", "pad", "repeat"])
        c = self.c
        if kind == "reshape":
            target = c.pick(_factorizations(_size(shape)) + [()] * (_size(shape) == 1))
            if c.coin(0.2) and target:
                scope.new(f"{x}.reshape(-1)", (_size(shape),))
            else:
                scope.new(f"jnp.reshape({x}, {target})", target)
        elif kind == "transpose":
            if rank < 2:
                return False
            perm = list(range(rank))
            for i in range(rank - 1, 0, -1):  # a Fisher-Yates shuffle from the chooser
                j = c.int(0, i)
                perm[i], perm[j] = perm[j], perm[i]
            if rank == 2 and c.coin(0.3):
                scope.new(f"{x}.T", shape[::-1])
            elif c.coin(0.2):
                a, b = c.int(0, rank - 1), c.int(0, rank - 1)
                out = list(shape)
                out[a], out[b] = out[b], out[a]
                scope.new(f"jnp.swapaxes({x}, {a}, {b})", tuple(out))
            else:
                scope.new(f"jnp.transpose({x}, {tuple(perm)})", tuple(shape[p] for p in perm))
        elif kind == "broadcast":
            lead = (c.int(1, 3),) if rank < MAX_RANK + 1 and c.coin() else ()
            target = lead + tuple(c.int(1, 3) if d == 1 else d for d in shape)
            if _size(target) > MAX_SIZE:
                return False
            scope.new(f"jnp.broadcast_to({x}, {target})", target)
        elif kind == "expand":
            if rank > MAX_RANK:
                return False
            axis = c.int(-rank - 1, rank)
            out = list(shape)
            out.insert(axis % (rank + 1), 1)
            scope.new(f"jnp.expand_dims({x}, {axis})", tuple(out))
        elif kind == "squeeze":
            ones = [i for i, d in enumerate(shape) if d == 1]
            if not ones:
                return False
            if c.coin():
                scope.new(f"jnp.squeeze({x})", tuple(d for d in shape if d != 1))
            else:
                axis = c.pick(ones)
                scope.new(f"jnp.squeeze({x}, axis={axis})",
                          tuple(d for i, d in enumerate(shape) if i != axis))
        elif kind in ("concatenate", "stack"):
            if kind == "concatenate" and rank == 0:
                return False
            axis = c.int(0, rank - 1) if kind == "concatenate" else c.int(0, rank)
            other = list(shape)
            if kind == "concatenate":
                other[axis] = c.int(1, 3)
            if 2 * _size(shape) > MAX_SIZE:
                return False
            y = self.need(scope, tuple(other))
            if kind == "concatenate":
                out = list(shape)
                out[axis] += other[axis]
                scope.new(f"jnp.concatenate([{x}, {y}], axis={axis})", tuple(out))
            else:
                out = list(shape)
                out.insert(axis, 2)
                scope.new(f"jnp.stack([{x}, {y}], axis={axis})", tuple(out))
        elif kind == "slice":
            if rank == 0:
                return False
            parts = []
            for d in shape:
                k = c.int(0, 3)
                if k == 0:
                    parts.append(slice(None))
                elif k == 1:
                    parts.append(c.int(-d, d - 1))
                elif k == 2:
                    start = c.int(0, d - 1)
                    parts.append(slice(start, c.int(start + 1, d)))
                else:
                    parts.append(slice(None, None, c.pick([-1, 2, -2])))
            if c.coin(0.2):
                starts = tuple(c.int(0, d - 1) for d in shape)
                sizes = tuple(c.int(1, d - s) for d, s in zip(shape, starts))
                scope.new(f"lax.dynamic_slice({x}, {starts}, {sizes})", sizes)
            else:
                scope.new(f"{x}[{_fmt_index(parts)}]", _indexed_shape(shape, tuple(parts)))
        elif kind == "flip":
            if rank == 0:
                return False
            axis = c.pick([None, *range(rank)])
            scope.new(f"jnp.flip({x}{_axes_arg(axis)})", shape)
        elif kind == "roll":
            if rank == 0:
                return False
            shift = c.int(-4, 4)
            axis = c.pick([None, *range(rank)])
            scope.new(f"jnp.roll({x}, {shift}{_axes_arg(axis)})", shape)
        elif kind == "pad":
            if rank == 0:
                return False
            pads = tuple((c.int(0, 2), c.int(0, 2)) for _ in shape)
            out = tuple(d + lo + hi for d, (lo, hi) in zip(shape, pads))
            if _size(out) > MAX_SIZE:
                return False
            scope.new(f"jnp.pad({x}, {pads})", out)
        elif kind == "repeat":
            if rank == 0:
                return False
            axis, times = c.int(0, rank - 1), c.int(1, 3)
            out = list(shape)
            out[axis] *= times
            if _size(out) > MAX_SIZE:
                return False
            scope.new(f"jnp.repeat({x}, {times}, axis={axis})", tuple(out))
        return True

    def _int_array(self, size, count, unique=False):
        if unique:
            count = min(count, size)
            pool = list(range(size))
            chosen = [pool.pop(self.c.int(0, len(pool) - 1)) for _ in range(count)]
        else:
            chosen = [self.c.int(-size, size - 1) for _ in range(count)]
        return np.array(chosen)

    def indexing(self, scope):
        x, shape = self.any_value(scope, min_rank=1)
        rank = len(shape)
        axis = self.c.int(0, rank - 1)
        idx = self._int_array(shape[axis], self.c.int(1, 4))
        if self.c.coin(0.3):
            scope.new(f"jnp.take({x}, jnp.array({idx.tolist()}), axis={axis})",
                      np.take(np.empty(shape), idx, axis=axis).shape)
        else:
            if self.c.coin(0.2) and len(idx) % 2 == 0:
                idx = idx.reshape(2, -1)
            parts = (slice(None),) * axis + (idx,)
            scope.new(f"{x}[{_fmt_index(parts)}]", _indexed_shape(shape, parts))
        return True

    def update(self, scope):
        x, shape = self.any_value(scope, min_rank=1)
        method = self.c.pick(["set", "add", "mul"])
        flags = ""
        if self.c.coin():  # static integers and slices
            parts = []
            for d in shape[:self.c.int(1, len(shape))]:
                if self.c.coin():
                    parts.append(self.c.int(-d, d - 1))
                else:
                    start = self.c.int(0, d - 1)
                    parts.append(slice(start, self.c.int(start + 1, d)))
            parts = tuple(parts)
        else:  # an integer array on one axis; `set` with repeats has no defined winner
            axis = self.c.int(0, len(shape) - 1)
            idx = self._int_array(shape[axis], self.c.int(1, 3), unique=(method != "add"))
            parts = (slice(None),) * axis + (idx,)
            if method == "mul":  # as in JAX, scatter_mul differentiates only so
                flags = ", unique_indices=True"
        if self.c.coin(0.15):
            starts = tuple(self.c.int(0, d - 1) for d in shape)
            sizes = tuple(self.c.int(1, d - s) for d, s in zip(shape, starts))
            y = self.need(scope, sizes)
            scope.new(f"lax.dynamic_update_slice({x}, {y}, {starts})", shape)
            return True
        target = _indexed_shape(shape, parts)
        if self.c.coin(0.3):
            y = self.need(scope, ())
        else:
            y = self.need(scope, target)
        if method == "mul":
            y = f"jnp.tanh({y})"
        scope.new(f"{x}.at[{_fmt_index(parts)}].{method}({y}{flags})", shape)
        return True

    def product(self, scope):
        c = self.c
        kind = c.pick(["matmul", "einsum", "dot", "tensordot", "outer", "dot_general"])
        if kind == "dot_general":  # one batch dimension, contracting the last of `a`
            a, sa = self.any_value(scope, min_rank=2)
            b_shape = (sa[0], sa[-1], c.int(1, 3))
            b = self.need(scope, b_shape)
            dims = f"((({len(sa) - 1},), (1,)), ((0,), (0,)))"
            scope.new(f"lax.dot_general({a}, {b}, {dims})", sa[:-1] + b_shape[2:])
            return True
        if kind == "einsum":
            spec = c.pick(EINSUMS)
            sizes = {ch: c.int(1, 3) for ch in "bijk"}
            ins, out = spec.split("->")
            ops = [self.need(scope, tuple(sizes[ch] for ch in term)) for term in ins.split(",")]
            quoted = ", ".join(ops)
            scope.new(f'jnp.einsum("{spec}", {quoted})', tuple(sizes[ch] for ch in out))
            return True
        a, sa = self.any_value(scope, min_rank=1)
        n = sa[-1]
        if kind == "outer":
            m = c.int(1, 3)
            b = self.need(scope, (m,))
            scope.new(f"jnp.outer({a}, {b})", (_size(sa), m))
            return True
        if kind == "tensordot":
            tail = (n,) if c.coin() or len(sa) < 2 else sa[-2:]
            k = len(tail)
            rest = tuple(c.int(1, 3) for _ in range(c.int(0, 1)))
            b = self.need(scope, tail + rest)
            scope.new(f"jnp.tensordot({a}, {b}, axes={k})", sa[:-k] + rest)
            return True
        if c.coin(0.3) or len(sa) == 1 and c.coin():
            b = self.need(scope, (n,))
            out = sa[:-1]
        elif kind == "dot":
            m = c.int(1, 3)
            b = self.need(scope, (n, m))
            out = sa[:-1] + (m,)
        else:
            m = c.int(1, 3)
            batch = sa[:-2]
            bb = batch[c.int(0, len(batch)):] if batch else ()
            b = self.need(scope, bb + (n, m))
            if len(sa) == 1:
                out = (m,)
            else:
                out = np.broadcast_shapes(batch, bb) + (sa[-2], m)
        text = f"jnp.dot({a}, {b})" if kind == "dot" else c.pick([f"{a} @ {b}",
                                                                   f"jnp.matmul({a}, {b})"])
        scope.new(text, out)
        return True

    # -- functions and control flow -------------------------------------------------------

    def function(self, scope, params, results, closed=False, carry=None, counter=None,
                 reversed_=False):
        """Emits `def name(params):` with a random body returning `results` (shapes).
        With `carry`, each result mixes in that parameter and contracts (loop bodies); a
        `counter` parameter (an integer) is read as a float `t` the body may use."""
        name = self.fresh("fn")
        inner = Scope(self, scope, closed=closed)
        inner.reversed = inner.reversed or reversed_
        names = []
        for pname, shape in params:
            names.append(pname)
            if shape is not None:
                inner.values.append((pname, shape))
                self.used.add(pname)
        scope.emit(f"def {name}({', '.join(names)}):")
        scale = "0.5"
        if counter is not None:
            t = inner.new(f"0.25 * {counter}", ())
            scale = f"jnp.cos({t})"
        for _ in range(self.c.int(1, 3)):
            self.operation(inner)
        outs = []
        for i, shape in enumerate(results):
            v, have = self.take(inner)
            expr = self.fit(v, have, shape)
            if carry is not None:
                expr = f"jnp.tanh({scale} * {carry[i]} + {expr})"
            outs.append(expr)
        inner.emit("return " + (outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"))
        return name

    def control(self, scope):
        if scope.depth >= MAX_DEPTH:
            return False
        kind = self.c.pick(["fori", "cond", "scan", "custom_jvp", "custom_vjp", "checkpoint",
                            "switch", "while", "vmap", "grad", "jit", "jvp", "map"])
        return getattr(self, "ctl_" + kind)(scope)

    def _pred(self, scope):
        v, _ = self.any_value(scope)
        self.features.add("kink")
        return self.c.pick([f"jnp.sum({v}) > 0.0", f"jnp.ravel({v})[0] < 0.3",
                            f"jnp.mean(jnp.sin({v})) > jnp.mean(jnp.cos({v}))"])

    def ctl_fori(self, scope):
        x, shape = self.any_value(scope)
        carry = self.fresh("c")
        i = self.fresh("i")
        fn = self.function(scope, [(i, None), (carry, shape)], [shape], carry=[carry],
                           counter=i)
        lo, hi = self.c.int(0, 1), self.c.int(1, 4)
        scope.new(f"lax.fori_loop({lo}, {hi}, {fn}, {x})", shape)
        return True

    def ctl_while(self, scope):
        """A while_loop with a fixed trip count. Its reverse mode needs the trip count when
        it is linearized, which a body the program itself differentiates in reverse (grad,
        custom_vjp, checkpoint) does not give: as in JAX, no while loop goes there."""
        if scope.reversed:
            return False
        x, shape = self.any_value(scope)
        self.features.add("while")
        carry = self.fresh("c")
        self.fresh("i")  # unused, but drawing it keeps the names of the programs generated
        n = self.c.int(0, 3)
        cond = self.fresh("fn")
        scope.emit(f"def {cond}(s):")
        scope.emit(f"    return s[0] < {n}")
        fn = self.function(scope, [(carry, shape)], [shape], carry=[carry])
        state = self.fresh("s")
        scope.emit(f"def {state}(s):")
        scope.emit(f"    return (s[0] + 1, {fn}(s[1]))")
        scope.new(f"lax.while_loop({cond}, {state}, (0, {x}))[1]", shape)
        return True

    def ctl_cond(self, scope, switch=False):
        ops = [self.any_value(scope) for _ in range(self.c.int(1, 2))]
        shape = ops[0][1] if self.c.coin(0.7) else self.shape()
        params = [(self.fresh("a"), s) for _, s in ops]
        branches = [self.function(scope, params, [shape])
                    for _ in range(self.c.int(2, 3) if switch else 2)]
        args = ", ".join(v for v, _ in ops)
        if switch:
            v, _ = self.any_value(scope)
            if self.c.coin(0.3):
                index = str(self.c.int(-1, len(branches)))
            else:
                self.features.add("kink")
                index = self.c.pick([f"jnp.argmax(jnp.ravel({v}))",
                                     f"(jnp.sum({v}) > 0.0).astype(jnp.int32)",
                                     f"jnp.argmin(jnp.ravel({v})) - 1"])
            scope.new(f"lax.switch({index}, [{', '.join(branches)}], {args})", shape)
        else:
            pred = "True" if self.c.coin(0.15) else self._pred(scope)
            scope.new(f"lax.cond({pred}, {branches[0]}, {branches[1]}, {args})", shape)
        return True

    def ctl_switch(self, scope):
        return self.ctl_cond(scope, switch=True)

    def ctl_scan(self, scope):
        init, cshape = self.any_value(scope)
        carry, slot = self.fresh("c"), self.fresh("e")
        if self.c.coin(0.8):
            xs, xshape = self.any_value(scope, min_rank=1)
            length, eshape, xs_arg = xshape[0], xshape[1:], xs
        else:
            length, eshape, xs_arg = self.c.int(1, 3), None, "None"
        yshape = self.shape(max_rank=2)
        fn = self.function(scope, [(carry, cshape), (slot, eshape)], [cshape, yshape],
                           carry=[carry, carry if yshape == cshape else "0.0"])
        extra = f", length={length}" if xs_arg == "None" else ""
        extra += ", reverse=True" if self.c.coin(0.3) else ""
        last, ys = self.fresh("v"), self.fresh("v")
        scope.emit(f"{last}, {ys} = lax.scan({fn}, {init}, {xs_arg}{extra})")
        scope.values += [(last, cshape), (ys, (length,) + yshape)]
        return True

    def ctl_checkpoint(self, scope):
        ops = [self.any_value(scope) for _ in range(self.c.int(1, 2))]
        shape = self.c.pick([s for _, s in ops])
        fn = self.function(scope, [(self.fresh("a"), s) for _, s in ops], [shape],
                           reversed_=True)
        policy = self.c.pick(["", ", policy=jax.checkpoint_policies.nothing_saveable",
                              ", prevent_cse=False"])
        args = ", ".join(v for v, _ in ops)
        scope.new(f"jax.checkpoint({fn}{policy})({args})", shape)
        return True

    def _custom_body(self, scope, shape):
        """A closed function of one operand, and an expression for its derivative rule:
        (name of the function, template pair or None for "differentiate the body")."""
        if self.c.coin():
            primal, deriv = self.c.pick(DERIVATIVES)
            fn = self.fresh("fn")
            scope.emit(f"def {fn}(a):")
            scope.emit("    return " + primal.format(x="a"))
            return fn, deriv
        a = self.fresh("a")
        return self.function(scope, [(a, shape)], [shape], closed=True, reversed_=True), None

    def ctl_custom_jvp(self, scope):
        x, shape = self.any_value(scope)
        fn, deriv = self._custom_body(scope, shape)
        name = self.fresh("cj")
        scope.emit("@jax.custom_jvp")
        scope.emit(f"def {name}(a):")
        scope.emit(f"    return {fn}(a)")
        scope.emit(f"@{name}.defjvp")
        scope.emit(f"def {name}_jvp(primals, tangents):")
        if deriv is None:
            scope.emit(f"    return jax.jvp({fn}, primals, tangents)")
        else:
            scope.emit("    (a,), (t,) = primals, tangents")
            scope.emit(f"    return {name}(a), ({deriv.format(x='a')}) * t")
        scope.new(f"{name}({x})", shape)
        return True

    def ctl_custom_vjp(self, scope):
        x, shape = self.any_value(scope)
        self.features.add("custom_vjp")
        fn, deriv = self._custom_body(scope, shape)
        name = self.fresh("cv")
        scope.emit("@jax.custom_vjp")
        scope.emit(f"def {name}(a):")
        scope.emit(f"    return {fn}(a)")
        scope.emit(f"def {name}_fwd(a):")
        scope.emit(f"    return {fn}(a), a")
        scope.emit(f"def {name}_bwd(a, ct):")
        if deriv is None:
            scope.emit(f"    return jax.vjp({fn}, a)[1](ct)")
        else:
            scope.emit(f"    return (ct * ({deriv.format(x='a')}),)")
        scope.emit(f"{name}.defvjp({name}_fwd, {name}_bwd)")
        scope.new(f"{name}({x})", shape)
        return True

    def ctl_vmap(self, scope):
        x, shape = self.any_value(scope, min_rank=1)
        axis = self.c.int(0, len(shape) - 1)
        inner = shape[:axis] + shape[axis + 1:]
        out = self.shape(max_rank=2)
        fn = self.function(scope, [(self.fresh("a"), inner)], [out])
        out_axis = self.c.int(0, len(out))
        result = list(out)
        result.insert(out_axis, shape[axis])
        scope.new(f"jax.vmap({fn}, in_axes={axis}, out_axes={out_axis})({x})", tuple(result))
        return True

    def ctl_grad(self, scope):
        x, shape = self.any_value(scope)
        fn = self.function(scope, [(self.fresh("a"), shape)], [()], reversed_=True)
        scope.new(f"jax.grad({fn})({x})", shape)
        return True


    def ctl_jit(self, scope):
        ops = [self.any_value(scope) for _ in range(self.c.int(1, 2))]
        shape = self.c.pick([s for _, s in ops])
        fn = self.function(scope, [(self.fresh("a"), s) for _, s in ops], [shape])
        scope.new(f"jax.jit({fn})({', '.join(v for v, _ in ops)})", shape)
        return True

    def ctl_jvp(self, scope):
        x, shape = self.any_value(scope)
        t = self.need(scope, shape)
        out = self.shape(max_rank=2)
        fn = self.function(scope, [(self.fresh("a"), shape)], [out])
        scope.new(f"jax.jvp({fn}, ({x},), ({t},))[1]", out)
        return True

    def ctl_map(self, scope):
        x, shape = self.any_value(scope, min_rank=1)
        out = self.shape(max_rank=2)
        fn = self.function(scope, [(self.fresh("a"), shape[1:])], [out])
        scope.new(f"lax.map({fn}, {x})", (shape[0],) + out)
        return True


def generate(chooser: Chooser, max_ops=8) -> Program:
    return Generator(chooser, max_ops).program()


def from_seed(seed: int, max_ops=8) -> Program:
    return generate(Chooser.from_seed(seed), max_ops)


def programs(max_ops=8):
    """A hypothesis strategy of programs."""
    @st.composite
    def draw_program(draw):
        return generate(Chooser.from_hypothesis(draw), max_ops)

    return draw_program()
