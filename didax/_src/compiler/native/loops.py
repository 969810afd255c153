"""C loop nests: one loop nest over a shape reads its operands through element strides
(0 where broadcast: views and lax broadcasting are reindexed reads, never copies), computes
a run of elementwise expressions, writes some of them out and accumulates reductions.

Everything is computed as the NumPy tier computes it, bit for bit:
- Functions NumPy computes with its own SIMD loops (exp, tanh, sin...) are not C library
  calls but calls of NumPy's loops themselves, block by block: the innermost loop runs in
  blocks of at most BLOCK elements, in phases between the calls, values crossing a call
  kept in block buffers. (NumPy's loops compute each element alone, whatever the stride or
  the block: tests/_src/compiler/native check it.)
- A float sum sums in NumPy's order for a C-contiguous operand (the NumPy tier makes its
  operand one, see lax.reduction): pairwise over the trailing run of reduced dimensions
  (blocks of 8 accumulators on leaves of at most 128 elements, halves at multiples of 8
  above), each such row added in turn to the output, which starts at +0. The row is walked
  leaf by leaf (a stack of the pairwise tree's pending halves), so the summed expression is
  never written out. NumPy before 2.3 sums a row in pieces of 8192 elements (its
  iterator's buffer), each pairwise, added in turn: then so do these loops (`ROW_PIECE`).
  Integer sums (exact) may accumulate in any order, and so may max and min (NaN
  propagates, -0 < +0: one value in any order, NaNs' payloads aside): in vector lanes,
  combined at the loop's end (`Reduction.simd_reduction`).
"""
from __future__ import annotations

import math
import re

import numpy as np

from didax._src.compiler.native.rules import C_TYPES

BLOCK = 128  # elements per block: a pairwise leaf is at most this long too
# The blocks of loops calling NumPy's loops (exp, tanh...), which 1024 elements call a
# tenth as often as 128 (measured: 128, 512, 1024, 2048, 4096); a float sum's blocks are its
# pairwise tree's nodes of at most this many elements, each summed by `pw_sum_*` (its
# subtree, down to the leaves), at the same bits. Only while the block buffers (on the stack
# of whichever thread runs the loop) take at most BUFFER_BUDGET bytes; else BLOCK elements.
CALL_BLOCK = 1024
BUFFER_BUDGET = 1 << 16
_C_SIZES = {"float": 4, "double": 8, "int": 4}
_C_SIZE_OF = {ctype: dtype.itemsize for dtype, ctype in C_TYPES.items()}
# NumPy < 2.3 reduces a contiguous row through its iterator's buffers, 8192 elements each
# (np.getbufsize()'s default), summing each pairwise; 2.3 passes the whole row at once.
ROW_PIECE = 8192 if tuple(map(int, np.__version__.split(".")[:2])) < (2, 3) else None
_LOCAL = re.compile(r"\bt(\d+)\b")
# Loop nests over at least this many elements run in parallel (see `loop_nest`): plain
# arithmetic, memory-bound, from 2^17 (a relu loop on two threads took 11 us against 16 us
# on one at 2^17 elements, 7 against 7 at 2^16); loops calling NumPy's functions (exp,
# tanh...: ~10x the work per element) from 2^15.
PARALLEL_FROM = 1 << 17
PARALLEL_CALLS_FROM = 1 << 15
# Loop nests over at least this many elements let other Python threads run meanwhile.
FREE_GIL_FROM = 1 << 16
# A float sum's row in parallel: its pairwise tree cut this many levels down (at most), or
# (NumPy < 2.3) its pieces summed this many at a time.
TREE_DEPTH = 4
PIECES_AT_ONCE = 64
_POINTER = re.compile(r"\b[pq]\d+\b")
# A maximum or minimum over a row of at most this many elements: the row's values are kept
# in a buffer, then combined by halves in vector loops of known lengths, instead of in
# vector lanes combined one by one after the loop (`Reduction.simd_reduction`): over rows
# of 64 floats 2.2x faster, of 128 1.6x, of 256 equal, of 512 and more slower (measured).
TREE_MAX = 256


def _parallel_for(captured: str, schedule: str = "guided", simd: bool = False) -> str:
    """The pragma of a loop split among the threads. (guided, dynamic: a thread another
    process delays leaves its share to the others. The arrays' pointers `captured` are
    each thread's own copies: read through the shared ones, gcc no longer knows they do not
    alias, and the loop ran at half speed.)"""
    return (f"#pragma omp parallel for{' simd' if simd else ''} schedule({schedule}) "
            f"num_threads(DIDAX_NT) firstprivate({captured})")


def contiguous(shape) -> tuple:
    st, acc = [], 1
    for d in reversed(shape):
        st.append(acc)
        acc *= d
    return tuple(st[::-1])


def over(shape, vshape, strides) -> tuple:
    """Strides of a value of `vshape` (read with `strides`) broadcast over `shape`."""
    pad = len(shape) - len(vshape)
    return (0,) * pad + tuple(0 if d == 1 else s for d, s in zip(vshape, strides))


class Reduction:
    """An output array `q{slot}` of `ctype`, accumulating `local` over the loop dimensions
    not in `kept` (a mask), starting at `init`, combined by `combine` ({0} acc, {1} value);
    `pairwise`: a float sum (summed in NumPy's order, see the module's docstring);
    `any_order`: `combine` gives one value in any order and grouping (a maximum)."""

    def __init__(self, slot, ctype, kept, init, combine, is_sum, pairwise=False,
                 any_order=False):
        self.slot, self.ctype, self.kept = slot, ctype, kept
        self.init, self.combine, self.is_sum = init, combine, is_sum
        self.pairwise, self.any_order = pairwise, any_order
        self.local = None

    def simd_reduction(self) -> tuple[str, str]:
        """(the declaration, the clause) that let an `omp simd` loop accumulate `a{slot}`
        in vector lanes, combined at its end: integer sums exactly; `any_order` ones by
        their own combination, declared in the loop's block."""
        a = f"a{self.slot}"
        if self.is_sum:
            return "", f" reduction(+:{a})"
        name = f"didax_r{self.slot}"
        combined = self.combine.format("omp_out", "omp_in")
        return (f"#pragma omp declare reduction({name} : {self.ctype} : omp_out = "
                f"{combined}) initializer(omp_priv = {self.init})", f" reduction({name}:{a})")

    def vector_lanes(self) -> int:
        """The lanes of one 64-byte vector of the accumulator: an `any_order` reduction's
        lanes are combined one by one in a scalar loop after the vector loop, and gcc
        otherwise chose as many lanes as the loop's narrowest type has (64 for a mask of
        bools, so a max over rows of 64 was mostly that loop: 330 us for 8 x 4 x 64 rows of
        64 against 145 us at 16 lanes; 8 or 32 lanes were slower)."""
        return 64 // _C_SIZE_OF[self.ctype]


class Body:
    """The statements computing one element, recorded for the loop nest to place: `let`
    binds a C expression to a local, `call` a NumPy loop's result over the block."""

    def __init__(self):
        self.stmts: list = []  # (name, ctype, expression or None, call or None, is_read)

    def _new(self, ctype, expression, call, is_read) -> str:
        name = f"t{len(self.stmts)}"
        self.stmts.append((name, ctype, expression, call, is_read))
        return name

    def let(self, ctype: str, expression: str) -> str:
        return self._new(ctype, expression, None, False)

    def read(self, ctype: str, operand: int) -> str:
        """Operand number `operand`'s element; its index is set once the loops are known."""
        return self._new(ctype, operand, None, True)

    def call(self, loop: int, ctype: str, args, where: str | None = None) -> str:
        """The result of NumPy loop number `loop` (see emit) on the locals `args`; with
        `where` (a C condition), only the elements it holds for are read, and the loop is
        called only for blocks with such an element."""
        args = [a if _LOCAL.fullmatch(a) else self.let(ctype, a) for a in args]
        guard = None if where is None else self.let("npy_bool", where)
        return self._new(ctype, None, (loop, tuple(args), guard), False)


def _deps(expression: str) -> list:
    return [f"t{n}" for n in _LOCAL.findall(expression)]


def _c_type(ctype: str) -> str:
    return "int" if ctype == "npy_bool" else ctype  # (a char among floats stops gcc vectorizing)


class _Axis:
    """A loop over one or more dimensions of the shape, merged."""

    def __init__(self, dims, shape):
        self.dims = list(dims)
        self.extent = math.prod(shape[d] for d in dims)


def _flat(dims, shape, st) -> bool:
    """Whether an operand with strides `st` reads `dims` as one dimension."""
    return all(st[d] == st[e] * shape[e] for d, e in zip(dims, dims[1:]))


def _index(axes, var_names, shape, st) -> str:
    """The element offset of an operand with strides `st` at the loops' indices."""
    terms = []
    for axis, v in zip(axes, var_names):
        dims = axis.dims
        if not dims:
            continue
        if _flat(dims, shape, st):
            s = st[dims[-1]]
            if s:
                terms.append(v if s == 1 else f"{v} * {s}")
            continue
        inner = 1
        for d in reversed(dims):  # a merged axis an operand reads across: its indices
            if st[d]:
                q = v if inner == 1 else f"({v} / {inner})"
                if d != dims[0]:
                    q = f"({q} % {shape[d]})"
                terms.append(f"{q} * {st[d]}")
            inner *= shape[d]
    return " + ".join(terms) or "0"


def loop_nest(b: list, shape, reads, body, writes, reductions, loops=None):
    """Appends to `b` the loop nest over `shape`. `reads`: [(ctype, pointer, strides)];
    `body(block, names)` records with `block` (a Body) the locals computed from the names
    of `reads` (in order) and sets each reduction's `local`; `writes`: [(pointer,
    local-name getter)] row-major; `loops`: the C expression of NumPy loop number k's
    (function, data) pair is `loops(k)` (see emit)."""
    ind = "        "
    size = math.prod(shape)
    for r in reductions:  # outputs start at the initial value
        osize = math.prod(d for d, k in zip(shape, r.kept) if k)
        b.append(f"{ind}for (npy_intp k = 0; k < {osize}; k++) q{r.slot}[k] = {r.init};")
        ost = iter(contiguous(tuple(d for d, k in zip(shape, r.kept) if k)))
        r.strides = tuple(next(ost) if k else 0 for k in r.kept)
    if size == 0:
        return
    block = Body()
    names = [block.read(ct, n) for n, (ct, _, _) in enumerate(reads)]
    body(block, names)
    for r in reductions:  # (a sum along kept or size-1 dimensions only adds in order)
        r.pairwise = r.pairwise and bool(_trailing_reduced(shape, r))
    out_st = contiguous(shape)
    operands = [st for _, _, st in reads] + [out_st] + [r.strides for r in reductions]
    axes = _axes(shape, operands, reductions)
    if not axes:  # one element
        axes = [_Axis([], shape)]
    calls = any(s[3] is not None for s in block.stmts)
    pairwise = [r for r in reductions if r.pairwise]
    var_names = [f"i{k}" for k in range(len(axes) - 1)] + ["j"]
    inner = axes[-1]
    # Reductions accumulated in a local over the inner loop (reduced along all of it).
    local_acc = [r for r in reductions
                 if not r.pairwise and not any(r.kept[d] for d in inner.dims)]
    in_place = [r for r in reductions if not r.pairwise and r not in local_acc]

    def at(st):
        return _index(axes, var_names, shape, st)

    read_at = [at(st) for _, _, st in reads]
    for n, (name, ct, k, _, is_read) in enumerate(block.stmts):
        if is_read:
            block.stmts[n] = (name, ct, f"{reads[k][1]}[{read_at[k]}]", None, True)
    out_index = at(out_st)
    parallel = size >= (PARALLEL_CALLS_FROM if calls else PARALLEL_FROM)
    outer_parallel = parallel and len(axes) > 1 and all(
        all(r.kept[d] for d in axes[0].dims) for r in reductions)
    # one row: in parallel if nothing accumulates across it but float sums (summed pairwise,
    # in parts)
    inner_parallel = (parallel and len(axes) == 1 and all(r.pairwise for r in reductions)
                      and (not pairwise or _row_parts(inner.extent) is not None))
    # (the pointers the loops read: the parallel loops' threads each copy them)
    captured = ", ".join(sorted(set(_POINTER.findall(" ".join(
        [p for _, p, _ in reads] + [p for p, _ in writes]
        + [f"q{r.slot}" for r in reductions]))), key=lambda n: (n[0], int(n[1:]))))

    def nest(ind, parallel):
        """The loops; `parallel`: split among the threads."""
        inner_split = captured if parallel and inner_parallel else None
        for k, (axis, v) in enumerate(zip(axes[:-1], var_names)):
            if k == 0 and parallel:  # (each iteration writes outputs of its own)
                b.append(f"{ind}{_parallel_for(captured)}")
            b.append(f"{ind}for (npy_intp {v} = 0; {v} < {axis.extent}; {v}++) {{")
            ind += "    "
        for r in local_acc:
            b.append(f"{ind}{r.ctype} a{r.slot} = q{r.slot}[{at(r.strides)}];")
        if not calls and not pairwise:
            _plain_inner(b, ind, inner, block, writes, local_acc, in_place, out_index, at,
                         inner_split)
        else:
            _blocked_inner(b, ind, inner, block, writes, local_acc, in_place, pairwise,
                           out_index, at, loops, inner_split, "_p" if parallel else "")
        for r in local_acc:
            b.append(f"{ind}q{r.slot}[{at(r.strides)}] = a{r.slot};")
        for _ in axes[:-1]:
            ind = ind[:-4]
            b.append(f"{ind}}}")

    if outer_parallel or inner_parallel:
        # Two copies: OpenMP's loop run by a team of one was measured 3-5x slower than
        # the plain loop (the threads' loop is vectorized, yet slow alone).
        b.append(f"{ind}if (DIDAX_NT > 1) {{")
        nest(ind + "    ", True)
        b.append(f"{ind}}} else {{")
        nest(ind + "    ", False)
        b.append(f"{ind}}}")
    else:
        nest(ind, False)


def _axes(shape, operands, reductions) -> list:
    """The loops: dimensions of size 1 dropped, neighbours merged where every operand reads
    them as one and every reduction keeps or reduces both; a float sum's trailing reduced
    dimensions always one loop (its rows, summed pairwise)."""
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    group = []
    for r in reductions:
        if r.pairwise:
            g = _trailing_reduced(shape, r)
            if group and g != group:
                raise ValueError("float sums over different trailing dimensions in one loop")
            group = g
    axes: list = []
    for d in dims:
        if d in group and group and d != group[0]:
            axes[-1] = _Axis(axes[-1].dims + [d], shape)
            continue
        if axes and (not group or d != group[0]):
            merged = axes[-1].dims + [d]
            if (all(_flat(merged, shape, st) for st in operands)
                    and all(len({r.kept[e] for e in merged}) == 1 for r in reductions)):
                axes[-1] = _Axis(merged, shape)
                continue
        axes.append(_Axis([d], shape))
    return axes


def pairwise_dims(shape, reduced) -> list:
    """The dimensions a float sum over the dimensions `reduced` sums pairwise: its trailing
    reduced dimensions of size > 1 (none: it adds in order)."""
    g = []
    for d in reversed(range(len(shape))):
        if shape[d] == 1:
            continue
        if d not in reduced:
            break
        g.insert(0, d)
    return g


def _trailing_reduced(shape, r) -> list:
    return pairwise_dims(shape, [d for d, k in enumerate(r.kept) if not k])


def _plain_inner(b, ind, inner, block, writes, local_acc, in_place, out_index, at,
                 parallel=False):
    """The inner loop, each element computed whole; vectorized where its elements are
    independent (gcc would otherwise check at run time whether outputs overlap inputs, and
    was seen to run its scalar loop: they never do); `parallel` (nothing accumulates
    across it): split among the threads too. A maximum or minimum over a short row is
    kept in a buffer and combined by halves (`_tree`)."""
    scoped = False
    trees = []
    if parallel:
        b.append(f"{ind}{_parallel_for(parallel, 'simd:static', simd=True)}")
    elif _independent(inner, local_acc, in_place):
        trees = [r for r in local_acc if not r.is_sum and 1 < inner.extent <= TREE_MAX]
        b.extend(f"{ind}{r.ctype} bt{r.slot}[{inner.extent}];" for r in trees)
        scoped = _simd_pragma(b, ind, [r for r in local_acc if r not in trees])
        ind = ind + "    " if scoped else ind
    b.append(f"{ind}for (npy_intp j = 0; j < {inner.extent}; j++) {{")
    ind2 = ind + "    "
    for name, ct, expr, _, _ in block.stmts:
        b.append(f"{ind2}const {_c_type(ct)} {name} = {expr};")
    for r in local_acc:
        if r in trees:
            b.append(f"{ind2}bt{r.slot}[j] = {r.local};")
        else:
            b.append(f"{ind2}a{r.slot} = {r.combine.format(f'a{r.slot}', r.local)};")
    for r in in_place:
        q = f"q{r.slot}[{at(r.strides)}]"
        b.append(f"{ind2}{q} = {r.combine.format(q, r.local)};")
    for p, local in writes:
        b.append(f"{ind2}{p}[{out_index}] = {local()};")
    b.append(f"{ind}}}")
    if scoped:
        b.append(f"{ind[:-4]}}}")
        ind = ind[:-4]
    for r in trees:
        _tree(b, ind, r, inner.extent)


def _tree(b, ind, r, n):
    """Combines the buffer bt<slot> of `n` values into a<slot>: each half into the other,
    down to one value (the combination is one value in any order: `any_order`)."""
    buf = f"bt{r.slot}"
    while n > 1:
        h = n // 2
        b.append(f"{ind}#pragma omp simd")
        b.append(f"{ind}for (npy_intp u = 0; u < {h}; u++) "
                 f"{buf}[u] = {r.combine.format(f'{buf}[u]', f'{buf}[u + {h}]')};")
        if n % 2:
            b.append(f"{ind}{buf}[0] = {r.combine.format(f'{buf}[0]', f'{buf}[{n - 1}]')};")
        n = h
    b.append(f"{ind}a{r.slot} = {r.combine.format(f'a{r.slot}', f'{buf}[0]')};")


def _simd_pragma(b, ind, accumulating, extra="") -> bool:
    """Appends the `omp simd` pragma of a loop accumulating `accumulating` (and `extra`
    clauses); True if it opened a block (for the reductions it declares) that the loop's
    end must close."""
    declared = [r.simd_reduction() for r in accumulating]
    declarations = [d for d, _ in declared if d]
    if declarations:
        b.append(f"{ind}{{")
        ind += "    "
        b.extend(f"{ind}{d}" for d in declarations)
    lanes = [r.vector_lanes() for r in accumulating if not r.is_sum]
    if lanes:
        extra += f" safelen({min(lanes)})"
    b.append(f"{ind}#pragma omp simd" + "".join(c for _, c in declared) + extra)
    return bool(declarations)


def _independent(inner, local_acc, in_place) -> bool:
    """Whether the inner loop's iterations may run in any order: no accumulation across it
    that depends on the order (a float sum's), and each element of an output updated in
    place written by one iteration only (its reduction keeps all of the inner loop's
    dimensions). Integer sums reassociate exactly; maxima and minima are one value in any
    order."""
    return (all(r.is_sum or r.any_order for r in local_acc)
            and all(all(r.kept[d] for d in inner.dims) for r in in_place))


def _blocked_inner(b, ind, inner, block, writes, local_acc, in_place, pairwise, out_index,
                   at, loops, parallel=None, tag=""):
    """The inner loop in blocks of at most CALL_BLOCK elements (a float sum's: subtrees of
    its pairwise tree), each block in phases: the statements computable before NumPy's loops
    are called, the calls, the statements after them... A value a later phase or a call
    reads is kept in a block buffer `b<name>`; reads of operands are read again where
    needed.

    `parallel` (nothing accumulates across the loop but float sums): the blocks are split
    among the threads; a float sum's row is cut into parts its serial order sums
    separately anyway (subtrees of its pairwise tree, or NumPy < 2.3's pieces), summed in
    parallel and combined in that order, so the bits are the serial loop's."""
    stmts = {s[0]: s for s in block.stmts}
    phase: dict = {}
    for name, _, expr, call, is_read in block.stmts:
        if is_read:
            phase[name] = 0
        elif call is not None:
            _, args, guard = call
            phase[name] = 1 + max(phase[a] for a in (*args, guard) if a is not None)
        else:
            phase[name] = max((phase[d] for d in _deps(expr)), default=0)
    n_phases = 1 + max(phase.values())
    lets = [[] for _ in range(n_phases)]   # computed in each phase, in order
    calls = [[] for _ in range(n_phases)]  # called before each phase
    for s in block.stmts:
        if s[3] is not None:
            calls[phase[s[0]]].append(s)
        elif not s[4]:
            lets[phase[s[0]]].append(s)
    finals = [[] for _ in range(n_phases)]  # (kind, local, target), where the local is
    for s in block.stmts:  # a guarded call's flag: whether its guard holds in the block
        if s[3] is not None and s[3][2] is not None:
            finals[phase[s[3][2]]].append(("any", s[3][2], f"g{s[0]}"))
    for p, local in writes:
        finals[phase[local()]].append(("write", local(), p))
    for kind, rs in (("acc", local_acc), ("in place", in_place), ("pairwise", pairwise)):
        for r in rs:
            finals[phase[r.local]].append((kind, r.local, r))
    buffered = {r.local for r in pairwise}  # locals held in block buffers
    for s in block.stmts:
        if s[3] is not None:
            buffered.update((s[0], *s[3][1]))
    uses = [set() for _ in range(n_phases)]
    for p in range(n_phases):
        for s in lets[p]:
            uses[p].update(_deps(s[2]))
        uses[p].update(local for _, local, _ in finals[p])
        buffered.update(n for n in uses[p] if phase[n] < p and not stmts[n][4])
    per_element = sum(_C_SIZES.get(_c_type(stmts[name][1]), 8) for name in buffered)
    size = CALL_BLOCK if per_element * CALL_BLOCK <= BUFFER_BUDGET else BLOCK
    decls = [f"{_c_type(stmts[name][1])} b{name}[{size}];"
             for name in sorted(buffered, key=lambda n: int(n[1:]))]
    flags = [t for fs in finals for kind, _, t in fs if kind == "any"]
    extent = inner.extent
    rounds = None  # (parallel float sums) the loop over rounds of parts to close, if any
    single = False  # (a row of one block: the pairwise tree's only leaf, no walk)
    if pairwise:
        label = f"summed_{pairwise[0].slot}{tag}"  # (tag: which copy of the loops)
        pieces = ROW_PIECE is not None and extent > ROW_PIECE  # the row piece by piece
        parts = _row_parts(extent) if parallel else None
        single = parts is None and not pieces and extent <= size
        if single:
            decls.extend(f"{r.ctype} v{r.slot};" for r in pairwise)
        else:
            decls.append("npy_intp ws[64], wn[64]; int wd[64], top = 0;  /* the pairwise "
                         "walk */")
            decls.extend(f"{r.ctype} wl{r.slot}[64], v{r.slot};" for r in pairwise)
        if parts is not None:
            for r in pairwise:
                b.append(f"{ind}{r.ctype} s{r.slot}[{PIECES_AT_ONCE if pieces else len(parts)}];")
            if pieces:  # rounds of pieces summed in parallel, added in turn
                n = -(-extent // ROW_PIECE)
                b.append(f"{ind}for (npy_intp r0 = 0; r0 < {n}; r0 += {PIECES_AT_ONCE}) {{")
                rounds = ind
                ind += "    "
                b.append(f"{ind}const npy_intp rn = {n} - r0 < {PIECES_AT_ONCE} ? {n} - r0 : "
                         f"{PIECES_AT_ONCE};")
                start = (f"ws[0] = (r0 + task) * {ROW_PIECE}; wn[0] = {extent} - ws[0] < "
                         f"{ROW_PIECE} ? {extent} - ws[0] : {ROW_PIECE};")
                count = "rn"
            else:  # the subtrees of the pairwise tree, summed in parallel
                b.append(f"{ind}static const npy_intp ts[] = "
                         f"{{{', '.join(str(p[0]) for p in parts)}}};")
                b.append(f"{ind}static const npy_intp tn[] = "
                         f"{{{', '.join(str(p[1]) for p in parts)}}};")
                start, count = "ws[0] = ts[task]; wn[0] = tn[task];", len(parts)
            b.append(f"{ind}{_parallel_for(parallel, 'dynamic')}")
            b.append(f"{ind}for (npy_intp task = 0; task < {count}; task++) {{")
            ind += "    "
            b.extend(ind + d for d in decls)
            b.append(f"{ind}{start} wd[0] = 0;")
            pieces = False
        elif pieces:
            b.extend(ind + d for d in decls)
            b.append(f"{ind}for (npy_intp c0 = 0; c0 < {extent}; c0 += {ROW_PIECE}) {{")
            ind += "    "
            b.append(f"{ind}top = 0; ws[0] = c0; wd[0] = 0; wn[0] = {extent} - c0 < "
                     f"{ROW_PIECE} ? {extent} - c0 : {ROW_PIECE};")
        else:
            b.extend(ind + d for d in decls)
            if not single:
                b.append(f"{ind}ws[0] = 0; wn[0] = {extent}; wd[0] = 0;")
        ind2 = ind + "    "
        if single:
            b.append(f"{ind}{{")
            b.append(f"{ind2}const npy_intp j0 = 0, len = {extent};")
        else:
            b.append(f"{ind}for (;;) {{")
            b.append(f"{ind2}while (wn[top] > {size}) {{  /* down to the next block */")
            b.append(f"{ind2}    npy_intp h = wn[top] / 2; h -= h % 8;")
            b.append(f"{ind2}    ws[top + 1] = ws[top]; wn[top + 1] = h; wd[top + 1] = 0; "
                     "top++;")
            b.append(f"{ind2}}}")
            b.append(f"{ind2}const npy_intp j0 = ws[top], len = wn[top];")
        b.extend(f"{ind2}int {flag} = 0;" for flag in flags)
    else:
        if parallel:  # (the block buffers declared inside: each thread its own)
            b.append(f"{ind}{_parallel_for(parallel)}")
        else:
            b.extend(ind + d for d in decls)
        b.append(f"{ind}for (npy_intp j0 = 0; j0 < {extent}; j0 += {size}) {{")
        ind2 = ind + "    "
        if parallel:
            b.extend(ind2 + d for d in decls)
        b.append(f"{ind2}const npy_intp len = {extent} - j0 < {size} ? "
                 f"{extent} - j0 : {size};")
        b.extend(f"{ind2}int {flag} = 0;" for flag in flags)
    stored_reads = sorted((n for n in buffered if stmts[n][4]), key=lambda n: int(n[1:]))
    for p in range(n_phases):
        for name, ct, _, (k, args, guard), _ in calls[p]:  # NumPy's loops, on whole blocks
            argv = ", ".join(f"(char *)b{a}" for a in (*args, name))
            steps = ", ".join(f"sizeof({ct})" for _ in range(len(args) + 1))
            b.append(f"{ind2}if ({'g' + name if guard else 1}) {{ char *args[] = {{{argv}}}; "
                     f"npy_intp steps[] = {{{steps}}};")
            b.append(f"{ind2}  {loops(k)}.fn(args, &len, steps, {loops(k)}.data); }}")
        stores = [s[0] for s in lets[p] if s[0] in buffered] + (stored_reads if p == 0 else [])
        if not lets[p] and not finals[p] and not stores:
            continue
        accumulating = [t for kind, _, t in finals[p] if kind == "acc"]
        scoped = False
        if _independent(inner, accumulating, [t for kind, _, t in finals[p]
                                               if kind == "in place"]):
            scoped = _simd_pragma(b, ind2, accumulating, "".join(
                f" reduction(|:{t})" for kind, _, t in finals[p] if kind == "any"))
        b.append(f"{ind2}for (npy_intp jj = 0; jj < len; jj++) {{")
        ind3 = ind2 + "    "
        b.append(f"{ind3}const npy_intp j = j0 + jj;")
        computed = {s[0] for s in lets[p]}
        needed = uses[p] | set(stored_reads if p == 0 else ())
        for name in sorted(needed - computed, key=lambda n: int(n[1:])):
            s = stmts[name]
            source = s[2] if s[4] else f"b{name}[jj]"
            b.append(f"{ind3}const {_c_type(s[1])} {name} = {source};")
        for name, ct, expr, _, _ in lets[p]:
            b.append(f"{ind3}const {_c_type(ct)} {name} = {expr};")
        for name in stores:
            b.append(f"{ind3}b{name}[jj] = {name};")
        for kind, local, target in finals[p]:
            if kind == "any":
                b.append(f"{ind3}{target} |= {local};")
            elif kind == "write":
                b.append(f"{ind3}{target}[{out_index}] = {local};")
            elif kind == "acc":
                acc = f"a{target.slot}"
                b.append(f"{ind3}{acc} = {target.combine.format(acc, local)};")
            elif kind == "in place":
                q = f"q{target.slot}[{at(target.strides)}]"
                b.append(f"{ind3}{q} = {target.combine.format(q, local)};")
        b.append(f"{ind2}}}")
        if scoped:  # (the block of the loop's declared reductions)
            b.append(f"{ind2}}}")
    if not pairwise:
        b.append(f"{ind}}}")
        return
    for r in pairwise:
        node = "pw_sum_f" if r.ctype == "float" else "pw_sum_d"
        b.append(f"{ind2}v{r.slot} = {node}(b{r.local}, len);")
    if not single:
        b.append(f"{ind2}for (;;) {{  /* up the tree: a left half waits for its right "
                 "half */")
        b.append(f"{ind2}    if (top == 0) goto {label};")
        b.append(f"{ind2}    top--;")
        b.append(f"{ind2}    if (!wd[top]) {{")
        b.append(f"{ind2}        wd[top] = 1;")
        b.extend(f"{ind2}        wl{r.slot}[top] = v{r.slot};" for r in pairwise)
        b.append(f"{ind2}        npy_intp h = wn[top] / 2; h -= h % 8;")
        b.append(f"{ind2}        ws[top + 1] = ws[top] + h; wn[top + 1] = wn[top] - h; "
                 "wd[top + 1] = 0; top++;")
        b.append(f"{ind2}        break;")
        b.append(f"{ind2}    }}")
        b.extend(f"{ind2}    v{r.slot} = wl{r.slot}[top] + v{r.slot};" for r in pairwise)
        b.append(f"{ind2}}}")
    b.append(f"{ind}}}")
    if not single:
        b.append(f"{ind}{label}:;")
    if parts is not None:  # each part's sum kept, then combined in the serial order
        b.extend(f"{ind}s{r.slot}[task] = v{r.slot};" for r in pairwise)
        ind = ind[:-4]
        b.append(f"{ind}}}")
        for r in pairwise:
            q = f"q{r.slot}[{at(r.strides)}]"
            if rounds is not None:
                b.append(f"{ind}for (npy_intp t = 0; t < rn; t++) {q} = {q} + s{r.slot}[t];")
            else:
                b.append(f"{ind}{q} = {q} + {_combined(f's{r.slot}', 0, len(parts))};")
        if rounds is not None:
            b.append(f"{rounds}}}")
        return
    for r in pairwise:
        q = f"q{r.slot}[{at(r.strides)}]"
        b.append(f"{ind}{q} = {q} + v{r.slot};")
    if pieces:
        b.append(f"{ind[:-4]}}}")


def _row_parts(extent):
    """The parts a float sum's row of `extent` elements is summed in by threads, or None
    (too short to pay): NumPy < 2.3's pieces (one part each; summed in rounds), else the
    subtrees of its pairwise tree at the deepest level up to TREE_DEPTH above which every
    node is split ([(start, length)...], left to right)."""
    if ROW_PIECE is not None and extent > ROW_PIECE:
        return [(c, min(ROW_PIECE, extent - c)) for c in range(0, extent, ROW_PIECE)]
    level = [(0, extent)]
    for _ in range(TREE_DEPTH):
        if any(n <= BLOCK for _, n in level):
            break
        nxt = []
        for start, n in level:
            h = n // 2
            h -= h % 8
            nxt += [(start, h), (start + h, n - h)]
        level = nxt
    return level if len(level) > 1 else None


def _combined(array, lo, hi) -> str:
    """The sum of `array[lo:hi]` (a power of two of parts) as the pairwise tree adds it."""
    if hi - lo == 1:
        return f"{array}[{lo}]"
    mid = (lo + hi) // 2
    return f"({_combined(array, lo, mid)} + {_combined(array, mid, hi)})"


LEAF_SUMS = r"""/* A pairwise sum's leaf (at most 128 values), as NumPy sums it. */
#define DIDAX_PW_LEAF(name, T)                                                         \
static inline T name(const T *a, npy_intp n) {                                         \
    if (n < 8) {                                                                       \
        T res = 0;                                                                     \
        for (npy_intp i = 0; i < n; i++) res += a[i];                                  \
        return res;                                                                    \
    }                                                                                  \
    T r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3], r4 = a[4], r5 = a[5], r6 = a[6],     \
      r7 = a[7];                                                                       \
    npy_intp i;                                                                        \
    for (i = 8; i < n - (n % 8); i += 8) {                                             \
        r0 += a[i]; r1 += a[i + 1]; r2 += a[i + 2]; r3 += a[i + 3];                    \
        r4 += a[i + 4]; r5 += a[i + 5]; r6 += a[i + 6]; r7 += a[i + 7];                \
    }                                                                                  \
    T res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));                         \
    for (; i < n; i++) res += a[i];                                                    \
    return res;                                                                        \
}
DIDAX_PW_LEAF(pw_leaf_f, float)
DIDAX_PW_LEAF(pw_leaf_d, double)
/* A node of the pairwise tree: its halves (split at a multiple of 8) summed, down to the
   leaves, as NumPy sums it. */
#define DIDAX_PW_SUM(name, leaf, T)                                                    \
static T name(const T *a, npy_intp n) {                                                \
    if (n <= 128) return leaf(a, n);                                                   \
    npy_intp h = n / 2;                                                                \
    h -= h % 8;                                                                        \
    return name(a, h) + name(a + h, n - h);                                            \
}
DIDAX_PW_SUM(pw_sum_f, pw_leaf_f, float)
DIDAX_PW_SUM(pw_sum_d, pw_leaf_d, double)
"""
