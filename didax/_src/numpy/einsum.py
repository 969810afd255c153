"""einsum: Einstein summation as a sequence of pairwise `dot_general` contractions.

Subscripts are parsed into one letter per dimension (an ellipsis becomes fresh letters,
right-aligned across operands). NumPy's `einsum_path`, run on shape-only dummies, picks the
contraction order. Each step first sums the letters no later step needs, takes diagonals of
repeated letters (a `select_n` with an identity mask, then a sum), and contracts what is left
with one `dot_general` whose output order is chosen to avoid a final transpose when it can.
"""
from __future__ import annotations

import collections
import functools
import string

import numpy as np

from didax._src import dtypes
from didax._src.errors import user_error
from didax._src.lax import elementwise as lax
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.lax.dot import dot_general
from didax._src.numpy.util import asarray, check_arraylike

__all__ = ["einsum", "einsum_path"]

_LETTERS = string.ascii_letters


# --------------------------------------------------------------------------------------
# Parsing


def _sublist_to_str(sublist) -> str:
    """NumPy's interleaved form: integers 0..51 name axes, Ellipsis is '...'."""
    out = []
    for s in sublist:
        if s is Ellipsis:
            out.append("...")
        else:
            s = int(s)
            if not 0 <= s < len(_LETTERS):
                raise ValueError(f"einsum: subscript {s} in a sublist must be in [0, 52)")
            out.append(_LETTERS[s])
    return "".join(out)


def _split_args(subscripts, operands):
    """(subscripts string, operands) from either calling convention."""
    if isinstance(subscripts, str):
        return subscripts, list(operands)
    args = [subscripts, *operands]
    ops, subs = args[0::2], args[1::2]
    output = None
    if len(ops) > len(subs):  # a trailing output sublist
        output = ops.pop()
    spec = ",".join(_sublist_to_str(s) for s in subs)
    if output is not None:
        spec += "->" + _sublist_to_str(output)
    return spec, ops


def _parse(spec: str, shapes):
    """Input letter strings (one letter per dimension) and the output letter string."""
    spec = spec.replace(" ", "")
    bad = set(spec) - set(_LETTERS) - set(".,->")
    if bad:
        raise ValueError(f"einsum: invalid subscript characters {sorted(bad)} in {spec!r}")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} operand subscripts in {spec!r} for "
                         f"{len(shapes)} operands")
    used = set(spec) - set(".,->")
    spare = [c for c in _LETTERS if c not in used]
    ell_ndims = []
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        n_letters = len(term.replace("...", ""))
        if "." in term.replace("...", "") or term.count("...") > 1:
            raise ValueError(f"einsum: invalid ellipsis in subscripts {term!r}")
        ell = len(shape) - n_letters if "..." in term else 0
        if ell < 0 or ("..." not in term and n_letters != len(shape)):
            raise ValueError(f"Einstein sum subscript {term!r} does not contain the correct "
                             f"number of indices for operand {i} of shape {tuple(shape)}.")
        ell_ndims.append(ell)
    n_ell = max(ell_ndims, default=0)
    if n_ell > len(spare):
        raise ValueError("einsum: too many dimensions for the available subscript letters")
    ell_letters = "".join(spare[:n_ell])
    terms = [t.replace("...", ell_letters[n_ell - k:]) for t, k in zip(terms, ell_ndims)]
    if arrow:
        if "." in output.replace("...", "") or output.count("...") > 1:
            raise ValueError(f"einsum: invalid ellipsis in output subscripts {output!r}")
        output = output.replace("...", ell_letters)
        for c in output:
            if output.count(c) > 1:
                raise ValueError(f"Output character {c!r} appeared more than once in the "
                                 "output.")
            if not any(c in t for t in terms):
                raise user_error(ValueError, (
                    f"Output character {c!r} did not appear in the input: the output "
                    f"{output!r} may use only labels of the inputs {', '.join(terms)}."))
    else:  # implicit: the ellipsis, then the letters used once, in alphabetical order
        counts = collections.Counter("".join(terms))
        output = ell_letters + "".join(sorted(c for c, k in counts.items()
                                              if k == 1 and c not in ell_letters))
    return terms, output


def _letter_sizes(terms, shapes) -> dict:
    """The size of each letter; size-1 dimensions broadcast against the others."""
    sizes = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        seen = {}
        for c, d in zip(term, shape):
            if c in seen and seen[c] != d:
                raise user_error(ValueError, (
                    f"Size of label {c!r} for operand {i} ({d}) does not match "
                    f"previous terms ({seen[c]})."))
            seen[c] = d
            prev = sizes.get(c, 1)
            if d != 1 and prev != 1 and d != prev:
                raise user_error(ValueError, (
                    f"Size of label {c!r} for operand {i} ({d}) does not match "
                    f"previous terms ({prev})."))
            sizes[c] = d if prev == 1 else prev
    return sizes


def _numpy_path(terms, output, sizes, optimize):
    """Contraction order as a list of operand-index tuples, in NumPy's path convention."""
    n = len(terms)
    if isinstance(optimize, tuple):  # an explicit path
        return list(optimize[1:] if optimize and optimize[0] == "einsum_path" else optimize)
    if n <= 2:
        return [tuple(range(n))]
    if optimize is False or optimize is None:
        return [(0, 1)] * (n - 1)
    strategy = "optimal" if optimize in (True, "optimal") else "greedy"
    dummies = [_dummy(tuple(sizes[c] for c in t)) for t in terms]
    path, _ = np.einsum_path(",".join(terms) + "->" + output, *dummies,
                             optimize=(strategy, 2 ** 62))
    return path[1:]


@functools.lru_cache(maxsize=512)
def _plan(spec, shapes, optimize):
    """(letters of each operand, output letters, letter sizes, contraction path)."""
    terms, output = _parse(spec, shapes)
    sizes = _letter_sizes(terms, shapes)
    return tuple(terms), output, sizes, tuple(_numpy_path(terms, output, sizes, optimize))


def _hashable_path(optimize):
    if isinstance(optimize, (list, tuple)):
        return tuple(step if isinstance(step, str) else tuple(step) for step in optimize)
    return optimize


def _dummy(shape):
    return np.broadcast_to(np.zeros((), np.float32), shape)  # shape only, no memory


# --------------------------------------------------------------------------------------
# Contraction steps


def _sum(x, axes, dtype):
    if not axes:
        return x
    if dtypes.result_type(x, dtype) != x.dtype:
        x = lax.convert_element_type(x, dtype)
    if x.dtype == np.bool_:
        return lax_red.reduce_or(x, axes)
    return lax_red.reduce_sum(x, axes)


def _delta(shape, axes):
    """True where the coordinates along all `axes` are equal (a generalised identity)."""
    base = tuple(shape[a] for a in axes)
    iotas = [lax_shape.broadcasted_iota(np.int32, base, i) for i in range(len(axes))]
    mask = lax.eq(iotas[0], iotas[1])
    for i in range(2, len(axes)):
        mask = lax.bitwise_and(mask, lax.eq(iotas[0], iotas[i]))
    return lax_shape.broadcast_in_dim(mask, shape, axes)


def _reduce_unneeded(x, names: str, keep, dtype):
    """Sums letters not in `keep` and takes the diagonal of repeated letters."""
    counts = collections.Counter(names)
    uniques = [i for i, c in enumerate(names) if counts[c] == 1 and c not in keep]
    x = _sum(x, uniques, dtype)
    names = "".join(c for c in names if counts[c] > 1 or c in keep)
    for c, k in counts.items():
        if k < 2:
            continue
        axes = [i for i, n in enumerate(names) if n == c]
        shape = x.shape
        x = lax.select_n(_delta(shape, axes), lax_shape.full(shape, 0, x.dtype), x)
        if c in keep:
            x = _sum(x, axes[:-1], dtype)
            names = "".join(n for i, n in enumerate(names) if i not in axes[:-1])
        else:
            x = _sum(x, axes, dtype)
            names = names.replace(c, "")
    return x, names


def _drop_broadcast_dims(x, names, other_shape, other_names):
    """Squeezes size-1 dimensions whose letter has a larger size in the other operand."""
    shape = x.shape
    drop = [i for i, c in enumerate(names)
            if shape[i] == 1 and c in other_names and other_shape[other_names.index(c)] != 1]
    if not drop:
        return x, names
    return lax_shape.squeeze(x, drop), "".join(c for i, c in enumerate(names) if i not in drop)


def _contract_pair(lhs, lnames, rhs, rnames, keep, output, precision, dtype):
    """One dot_general of two operands; returns (result, its letters)."""
    lhs, lnames = _drop_broadcast_dims(lhs, lnames, rhs.shape, rnames)
    rhs, rnames = _drop_broadcast_dims(rhs, rnames, lhs.shape, lnames)
    lhs, lnames = _reduce_unneeded(lhs, lnames, keep | set(rnames), dtype)
    rhs, rnames = _reduce_unneeded(rhs, rnames, keep | set(lnames), dtype)
    shared = [c for c in lnames if c in rnames]
    batch = sorted((c for c in shared if c in keep),  # in output order where possible
                   key=lambda c: (c not in output, output.find(c), lnames.index(c)))
    contracted = [c for c in shared if c not in keep]
    lfree = "".join(c for c in lnames if c not in rnames)
    rfree = "".join(c for c in rnames if c not in lnames)
    batch = "".join(batch)
    if batch + lfree + rfree != output and batch + rfree + lfree == output:
        lhs, lnames, rhs, rnames, lfree, rfree = rhs, rnames, lhs, lnames, rfree, lfree
    def positions(names, letters):
        return tuple(names.index(c) for c in letters)

    dims = ((positions(lnames, contracted), positions(rnames, contracted)),
            (positions(lnames, batch), positions(rnames, batch)))
    out = dot_general(lhs, rhs, dims, precision, preferred_element_type=dtype)
    return out, batch + lfree + rfree


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None):
    """Einstein summation, e.g. einsum('bij,bjk->bik', x, y)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    spec, operands = _split_args(subscripts, operands)
    check_arraylike("einsum", *operands)
    operands = [asarray(x) for x in operands]
    terms, output, _, path = _plan(spec, tuple(x.shape for x in operands),
                                   _hashable_path(optimize))
    if preferred_element_type is None:
        dtype, weak = dtypes.result_type(*operands, return_weak_type_flag=True)
    else:
        dtype = dtypes.check_and_canonicalize_user_dtype(preferred_element_type, "einsum")
        weak = False
    names = list(terms)
    for step_num, step in enumerate(path):
        idx = sorted(step, reverse=True)
        ops = [operands.pop(i) for i in idx][::-1]
        nms = [names.pop(i) for i in idx][::-1]
        keep = set("".join(names) + output)
        x, xn = _reduce_unneeded(ops[0], nms[0], keep | set("".join(nms[1:])), dtype)
        for j in range(1, len(ops)):  # a step of several operands contracts left to right
            final = step_num == len(path) - 1 and j == len(ops) - 1
            x, xn = _contract_pair(x, xn, ops[j], nms[j], keep | set("".join(nms[j + 1:])),
                                   output if final else "", precision, dtype)
        operands.append(x)
        names.append(xn)
    (x,), (xn,) = operands, names
    x, xn = _reduce_unneeded(x, xn, set(output), dtype)
    x = lax_shape.transpose(x, tuple(xn.index(c) for c in output))
    return lax.convert_element_type(x, dtype, weak)


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """NumPy's (path, description) for the contraction, computed from the operand shapes."""
    spec, operands = _split_args(subscripts, operands)
    shapes = tuple(tuple(x.shape) if hasattr(x, "shape") else np.shape(x) for x in operands)
    terms, output, sizes, path = _plan(spec, shapes, _hashable_path(optimize))
    dummies = [_dummy(tuple(sizes[c] for c in t)) for t in terms]
    return np.einsum_path(",".join(terms) + "->" + output, *dummies,
                          optimize=["einsum_path", *path])
