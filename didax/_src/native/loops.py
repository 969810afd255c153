"""C loop nests: one loop nest over a shape reads its operands through element strides
(0 where broadcast: views and lax broadcasting are reindexed reads, never copies), computes
a run of elementwise expressions, writes some of them out and accumulates reductions.

A reduction over the innermost dimension accumulates in a local (a sum vectorizes with an
`omp simd reduction`, reassociating as NumPy's pairwise sum does; max and min stay in order);
over other dimensions it updates its output in place, each lane its own element.
"""
from __future__ import annotations

import math


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
    not in `kept` (a mask), starting at `init`, combined by `combine` ({0} acc, {1} value)."""

    def __init__(self, slot, ctype, kept, init, combine, is_sum):
        self.slot, self.ctype, self.kept = slot, ctype, kept
        self.init, self.combine, self.is_sum = init, combine, is_sum
        self.local = None


def loop_nest(b: list, shape, reads, body, writes, reductions):
    """Appends to `b` the loop nest over `shape`. `reads`: [(ctype, pointer, strides)];
    `body(fresh_local, names)` computes the locals from the names of `reads` (in order) and
    sets each reduction's `local`; `writes`: [(pointer, local-name getter)] row-major."""
    rank, size = len(shape), math.prod(shape)
    ind = "        "
    for r in reductions:  # outputs start at the initial value
        osize = math.prod(d for d, k in zip(shape, r.kept) if k)
        b.append(f"{ind}for (npy_intp k = 0; k < {osize}; k++) q{r.slot}[k] = {r.init};")
    cont = contiguous(shape)
    flat = not reductions and all(
        tuple(s for s, d in zip(st, shape) if d != 1) in
        (tuple(c for c, d in zip(cont, shape) if d != 1), tuple(0 for d in shape if d != 1))
        for _, _, st in reads)
    if flat or rank == 0:
        loops = [("i", size)]

        def index(st):
            return "i" if any(st) else "0"
        out_index = "i"
    else:
        loops = [(f"i{d}", shape[d]) for d in range(rank - 1)] + [("j", shape[-1])]
        names = [f"i{d}" for d in range(rank - 1)] + ["j"]

        def index(st):
            return " + ".join(f"{n} * {s}" for n, s in zip(names, st) if s) or "0"
        out_index = index(cont)
    inner_reduced = [r for r in reductions if not r.kept[-1]] if rank else list(reductions)
    simd = all(r.is_sum for r in inner_reduced)
    for r in reductions:  # each output's element index over the loop
        ost = contiguous(tuple(d for d, k in zip(shape, r.kept) if k))
        it = iter(ost)
        r.strides = tuple(next(it) if k else 0 for k in r.kept)
    for n, (var, extent) in enumerate(loops):
        if n == len(loops) - 1:
            for r in inner_reduced:
                outer = index(r.strides[:-1] + (0,)) if len(loops) > 1 else "0"
                b.append(f"{ind}{r.ctype} a{r.slot} = q{r.slot}[{outer}];")
            if simd:
                clause = "".join(f" reduction(+:a{r.slot})" for r in inner_reduced)
                b.append(f"{ind}#pragma omp simd{clause}")
        b.append(f"{ind}for (npy_intp {var} = 0; {var} < {extent}; {var}++) {{")
        ind += "    "
    counter = [0]

    def fresh_local(ctype, expression):
        n = f"t{counter[0]}"
        counter[0] += 1
        # Booleans are held as int: a char among floats stops gcc vectorizing.
        b.append(f"{ind}const {'int' if ctype == 'npy_bool' else ctype} {n} = {expression};")
        return n

    names_ = [fresh_local(ct, f"{p}[{index(st)}]") for ct, p, st in reads]
    body(fresh_local, names_)
    for r in reductions:
        if r in inner_reduced:
            b.append(f"{ind}a{r.slot} = {r.combine.format(f'a{r.slot}', r.local)};")
        else:
            at = f"q{r.slot}[{index(r.strides)}]"
            b.append(f"{ind}{at} = {r.combine.format(at, r.local)};")
    for p, local in writes:
        b.append(f"{ind}{p}[{out_index}] = {local()};")
    for n in range(len(loops)):
        ind = ind[:-4]
        b.append(f"{ind}}}")
        if n == 0:
            for r in inner_reduced:
                outer = index(r.strides[:-1] + (0,)) if len(loops) > 1 else "0"
                b.append(f"{ind}q{r.slot}[{outer}] = a{r.slot};")
