"""Every primitive, from its record (tests/lax_records.py), through every interpreter:

- eager evaluation against the record's NumPy/SciPy reference, at each of its dtypes;
- didax.jit against eager evaluation, in jit's "check" mode: the native tier is built before
  the first call and both tiers run, raising TierMismatchError unless their results are the
  same bits; the result is then compared with eager evaluation (to the record's tolerance:
  jit may round differently from eager evaluation, its two tiers never differ);
- derivatives (check_grads, to second order unless the record says otherwise, forward and
  reverse mode) in float64 or complex128, for differentiable records;
- vmap against a Python loop over the batch, batching each operand in turn and all at once
  (then on their last axis).

A gate makes every primitive in didax._src.core.all_primitives have a record or an exemption
that names the test file covering it.
"""
from __future__ import annotations

import os
import shutil

import lax_records
import numpy as np
import pytest
from lax_records import EXEMPT, RECORDS

import didax as jax
from didax._src import core
from didax._src.compiler.native import emit
from didax._src.config import enable_x64, flag_context
from didax._src.ir import ClosedJaxpr, Jaxpr
from didax.test_util import check_grads

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
BATCH = 2


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):  # records choose their dtypes; 64-bit ones need x64 mode
        yield


def _params(records, check, per_dtype=True):
    """pytest params: one per record (and dtype), xfail(strict) where the record names a
    known bug for `check`."""
    out = []
    for r in records:
        marks = ([pytest.mark.xfail(strict=True, reason=r.xfail[check])]
                 if check in r.xfail else [])
        dtypes = r.dtypes if per_dtype else r.dtypes[:1]
        for d in dtypes:
            out.append(pytest.param(r, np.dtype(d), marks=marks,
                                    id=f"{r.id}-{np.dtype(d).name}" if per_dtype else r.id))
    return out


def _leaves(tree):
    return [np.asarray(v) for v in jax.tree_util.tree_leaves(tree)]


def assert_close(got, want, tol, what, same_dtype=True):
    """Same structure and shapes (and dtypes, if `same_dtype`; else the same kind); integers
    and booleans equal, floats within `tol` (relative and absolute), NaN where `want` has
    NaN."""
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want), f"{what}: {len(got)} results, expected {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        where = f"{what}, result {k}"
        assert g.shape == w.shape, f"{where}: shape {g.shape}, expected {w.shape}"
        if same_dtype:
            assert g.dtype == w.dtype, f"{where}: dtype {g.dtype}, expected {w.dtype}"
        else:
            assert g.dtype.kind == w.dtype.kind, f"{where}: dtype {g.dtype}, expected {w.dtype}"
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=where)
        else:
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True, err_msg=where)


def primitives_in(closed) -> set:
    """Names of the primitives a closed jaxpr applies, those of jaxprs in params included."""
    names, eqns = set(), list(closed.jaxpr.eqns)
    while eqns:
        eqn = eqns.pop()
        names.add(eqn.primitive.name)
        params = [q for p in eqn.params.values()
                  for q in (p if isinstance(p, (tuple, list)) else (p,))]
        eqns += [e for q in params if isinstance(q, (ClosedJaxpr, Jaxpr))
                 for e in (q.jaxpr if isinstance(q, ClosedJaxpr) else q).eqns]
    return names


# --------------------------------------------------------------------------------------
# The gate: every primitive has a record or an exemption


def test_every_primitive_has_a_record_or_an_exemption():
    missing = lax_records.uncovered(core.all_primitives)
    assert not missing, (f"primitives with neither a record in tests/lax_records.py nor an "
                         f"exemption (EXEMPT there): {missing}")


def test_the_gate_reports_a_primitive_without_a_record():
    primitives = list(core.all_primitives) + ["fake_primitive"]
    assert lax_records.uncovered(primitives) == ["fake_primitive"]
    without_sin = [r for r in RECORDS if r.prim != "sin"]
    assert lax_records.uncovered(core.all_primitives, records=without_sin) == ["sin"]
    assert lax_records.uncovered(core.all_primitives, exempt={}) == sorted(EXEMPT)


def test_records_and_exemptions_name_real_primitives_once():
    recorded = {r.prim for r in RECORDS}
    assert recorded <= set(core.all_primitives), recorded - set(core.all_primitives)
    assert set(EXEMPT) <= set(core.all_primitives), set(EXEMPT) - set(core.all_primitives)
    assert not recorded & set(EXEMPT), "a primitive is both recorded and exempt"
    ids = [r.id for r in RECORDS]
    assert len(ids) == len(set(ids)), "two records share an id"


@pytest.mark.parametrize("name", sorted(EXEMPT))
def test_exemptions_name_the_tests_covering_them(name):
    files = [w.rstrip(",;:)") for w in EXEMPT[name].split() if w.startswith("tests/")]
    assert files, f"{name}: the exemption names no test file"
    for f in files:
        assert os.path.isfile(os.path.join(REPO, f)), f"{name}: {f} does not exist"


@pytest.mark.parametrize("rec,dtype", _params(RECORDS, "applies", per_dtype=False))
def test_record_applies_its_primitive(rec, dtype):
    closed = jax.make_jaxpr(rec.fn)(*rec.make_args(dtype))
    assert rec.prim in primitives_in(closed), str(closed)


# --------------------------------------------------------------------------------------
# Eager evaluation against NumPy/SciPy


@pytest.mark.parametrize("rec,dtype", _params([r for r in RECORDS if r.reference], "eager"))
def test_eager_matches_reference(rec, dtype):
    args = rec.make_args(dtype)
    got = rec.fn(*args)
    want = rec.reference(*args)
    assert_close(got, want, rec.tolerance(dtype), f"{rec.id} against its reference",
                 same_dtype=False)


# --------------------------------------------------------------------------------------
# jit, both tiers, against eager evaluation


def _native_tier_builds(rec, args):
    """Whether jit's native tier must serve `rec.fn` on `args`: where its primitive's native
    rule accepts the equation (and the record does not say otherwise) and a C compiler can
    build it."""
    has_compiler = shutil.which(os.environ.get("CC") or "gcc") or shutil.which("cc")
    if not (has_compiler and rec.native and "native" in core.all_primitives[rec.prim].rules):
        return False
    eqns = jax.make_jaxpr(rec.fn)(*args).jaxpr.eqns
    return any(emit.native_kind(e) is not None for e in eqns if e.primitive.name == rec.prim)


@pytest.mark.parametrize("rec,dtype", _params(RECORDS, "jit"))
def test_jit_matches_eager_on_both_tiers(rec, dtype):
    args = rec.make_args(dtype)
    want = rec.fn(*args)
    jitted = jax.jit(rec.fn)
    with flag_context("didax_native_tier", "check"):
        got = jitted(*args)  # (TierMismatchError unless both tiers give the same bits)
    assert_close(got, want, rec.tolerance(dtype), f"{rec.id}: jit against eager")
    if _native_tier_builds(rec, args):  # (else the NumPy tier alone may serve it)
        assert jitted.tiers() == ["native"]


# --------------------------------------------------------------------------------------
# Derivatives against finite differences


@pytest.mark.parametrize("rec,dtype", _params([r for r in RECORDS if r.diff_argnums()],
                                               "grad", per_dtype=False))
def test_derivatives(rec, dtype):
    dtype = rec.grad_dtype()
    args = rec.make_args(dtype)
    argnums = rec.diff_argnums()
    fn = rec.grad_fn or rec.fn

    def of_differentiated(*diff_args):
        full = list(args)
        for i, a in zip(argnums, diff_args):
            full[i] = a
        return fn(*full)

    check_grads(of_differentiated, tuple(args[i] for i in argnums), order=rec.order,
                modes=rec.modes, atol=rec.grad_tol, rtol=rec.grad_tol)


# --------------------------------------------------------------------------------------
# vmap against a loop over the batch


def _batchings(records):
    out = []
    for r in records:
        if not r.vmap or not r.args:
            continue
        which = [str(i) for i in range(len(r.args))] + (["all"] if len(r.args) > 1 else [])
        for w in which:
            marks = ([pytest.mark.xfail(strict=True, reason=r.xfail["vmap"])]
                     if "vmap" in r.xfail else [])
            out.append(pytest.param(r, w, marks=marks, id=f"{r.id}-{w}"))
    return out


@pytest.mark.parametrize("rec,which", _batchings(RECORDS))
def test_vmap_matches_a_loop(rec, which):
    dtype = np.dtype(rec.dtypes[0])
    rng = np.random.default_rng([ord(c) for c in rec.id + which])
    args = rec.make_args(dtype)
    batched = [i for i in range(len(args))] if which == "all" else [int(which)]
    axis = -1 if which == "all" else 0  # (all at once: the batch on each operand's last axis)
    in_axes, vmap_args, examples = [], [], []
    for i, a in enumerate(args):
        if i in batched:
            stack = np.stack([rec.args[i].make(rng, dtype) for _ in range(BATCH)], axis)
            in_axes.append(axis)
            vmap_args.append(stack)
            examples.append([np.take(stack, b, axis) for b in range(BATCH)])
        else:
            in_axes.append(None)
            vmap_args.append(a)
            examples.append([a] * BATCH)
    got = jax.vmap(rec.fn, in_axes=tuple(in_axes))(*vmap_args)
    per_example = [rec.fn(*(e[b] for e in examples)) for b in range(BATCH)]
    want = jax.tree_util.tree_map(lambda *outs: np.stack([np.asarray(o) for o in outs]),
                                  *per_example)
    assert_close(got, want, rec.tolerance(dtype), f"{rec.id}: vmap over {which}")
