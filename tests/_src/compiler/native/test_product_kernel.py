"""The native tier's own float32 product loop (product_kernel.py): it computes each element
as OpenBLAS's kernels do on one thread, and a module uses it only for products whose shape
and strides gave np.matmul's bits, so a module's results are the NumPy tier's with it or
without it; with OpenBLAS on more threads, it calls NumPy's loop."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax._src.compiler.native import blas_threads, emit, product_kernel, toolchain
from didax._src.config import flag_context

from .conftest import executable, have_compiler

ROOT = str(pathlib.Path(__file__).resolve().parents[4])  # the repository


@pytest.fixture
def one_blas_thread():
    """OpenBLAS on one thread (as on one core), where the loop computes products."""
    before = blas_threads.count()
    blas_threads.set_count(1)
    yield
    if before is not None:
        blas_threads.set_count(before)


def _loop():
    """The loop's gufunc (its module built now if it must be); the test skips, saying why,
    where there is none."""
    if have_compiler():
        product_kernel._KERNELS.get(wait=True)
    ufunc = product_kernel.matmul_ufunc() if have_compiler() else None
    if ufunc is None:
        pytest.skip("no C compiler, or no AVX-512: the native tier keeps NumPy's matmul loop")
    return ufunc


def _key(a, b):
    """product_kernel's key of the product a @ b (2-D views of float32 arrays)."""
    return (a.shape[0], a.shape[1], b.shape[1], (0, *a.strides), (0, *b.strides))


def _operands(rng, shape_a, shape_b, transpose_a=False, transpose_b=False):
    def make(shape, transposed):
        x = rng.standard_normal(shape[::-1] if transposed else shape).astype(np.float32)
        return x.T if transposed else x
    return make(shape_a, transpose_a), make(shape_b, transpose_b)


# (M, K, N, A stored transposed, B stored transposed): an MLP's products at batch 16 (the
# forward pass, the weight gradient with A transposed, the input gradient computed swapped
# with B transposed), rows and columns that leave partial tiles (of 4 x 64 and 16 x 16),
# and K cut into two blocks; then products large on every side (12 x 32 tiles over a
# copied strip of B): an MLP's at batch 256 (K in two blocks; B transposed, copied by
# 16 x 16 transposes), a partial tile of rows and of columns with B transposed and K not in
# sixteens, and both operands transposed with K in two unequal blocks.
SHAPES = [(16, 512, 512, False, False), (512, 16, 512, True, False),
          (512, 512, 16, False, True), (16, 256, 512, False, False),
          (256, 16, 512, True, False), (256, 512, 10, False, False),
          (37, 300, 50, False, False), (50, 20, 300, True, False), (200, 600, 9, False, True),
          (23, 700, 40, False, False), (22, 300, 200, False, False), (20, 700, 130, False, False),
          (96, 30, 200, True, False),
          (256, 512, 512, False, False), (512, 256, 512, True, False),
          (256, 512, 512, False, True), (100, 300, 77, False, True),
          (45, 700, 50, True, True)]


@pytest.mark.parametrize("M,K,N,ta,tb", SHAPES)
def test_the_loop_is_close_to_float64_and_gives_numpys_bits_where_it_agreed(
        M, K, N, ta, tb, one_blas_thread):
    """Agreement is checked on one draw; here another draw, and special values, must give
    the same bits too (an order of operations that differs would show on most elements)."""
    ufunc = _loop()
    rng = np.random.default_rng(7)
    a, b = _operands(rng, (M, K), (K, N), ta, tb)
    a[0, :3] = [0.0, -0.0, np.inf]
    b[1, :2] = [np.nan, -0.0]
    with np.errstate(all="ignore"):  # (inf times zero)
        got = ufunc(a, b)
        exact = a.astype(np.float64) @ b.astype(np.float64)
    finite = np.isfinite(exact)
    np.testing.assert_allclose(got[finite], exact[finite], rtol=1e-4,
                               atol=1e-4 * np.abs(exact[finite]).max())
    np.testing.assert_array_equal(np.isnan(got), np.isnan(exact))
    if product_kernel.agrees(_key(a, b)):
        with np.errstate(all="ignore"):
            assert got.tobytes() == np.matmul(a, b).tobytes()


def test_the_batch_16_products_agree_here_or_keep_numpys_loop(one_blas_thread):
    """On a CPU whose OpenBLAS sums as described, the products of an MLP at batch 16 use
    the loop; elsewhere agreement fails and they keep NumPy's loop (choose_loops)."""
    _loop()
    rng = np.random.default_rng(0)
    a, b = _operands(rng, (16, 512), (512, 512))
    key = _key(a, b)
    loops = ((np.matmul, (11, 11, 11)), (np.matmul, (11, 11, 11)))
    chosen = product_kernel.choose_loops(loops, {1: key})
    assert chosen[0] == loops[0]
    if product_kernel.agrees(key):
        assert chosen[1][0] is product_kernel.matmul_ufunc()
    else:
        assert chosen[1] == loops[1]


def test_with_more_blas_threads_the_loop_calls_numpys():
    """A product over 1000 terms, which two OpenBLAS threads cut otherwise than one."""
    ufunc = _loop()
    before = blas_threads.count()
    rng = np.random.default_rng(5)
    a, b = _operands(rng, (16, 1000), (1000, 512))
    try:
        blas_threads.set_count(2)
        assert ufunc(a, b).tobytes() == np.matmul(a, b).tobytes()
    finally:
        blas_threads.set_count(before)


def test_nothing_is_compared_with_more_blas_threads(monkeypatch):
    monkeypatch.setattr(product_kernel, "_agreed", {})
    monkeypatch.setattr(blas_threads, "count", lambda: 2)
    key = (16, 512, 512, (0, 2048, 4), (0, 2048, 4))
    assert not product_kernel.agrees(key)
    assert product_kernel._agreed == {}


def test_a_product_that_disagrees_keeps_numpys_loop(monkeypatch):
    monkeypatch.setattr(product_kernel, "_agreed", {})
    monkeypatch.setattr(product_kernel, "_same_bits", lambda *args: False)
    loops = ((np.matmul, (11, 11, 11)),)
    key = (16, 512, 512, (0, 2048, 4), (0, 2048, 4))
    assert product_kernel.choose_loops(loops, {0: key}) == loops


def test_eligible_products_get_a_loop_entry_of_their_own():
    """Each product the loop may compute has its own entry in the module's table (the
    entry may change when the module is made), never shared with other products."""
    def f(x, w, v):
        return jnp.tanh(x @ w) @ v, x @ jnp.ones((512, 4), np.float32)
    x = np.ones((16, 512), np.float32)
    w = np.ones((512, 512), np.float32)
    v = np.ones((512, 300), np.float32)
    plan = emit.plan(didax.make_jaxpr(f)(x, w, v))
    products = dict(plan.products)
    assert len(products) == 2  # (x @ ones(512, 4): 32768 multiply-adds, NumPy's loop)
    assert len(set(products)) == 2
    assert all(plan.loops[k][0] is np.matmul for k in products)
    others = [k for k, (u, _) in enumerate(plan.loops) if u is np.matmul and k not in products]
    assert len(others) == 1


def _mlp_step(params, x, y):
    def loss(params):
        h = x
        for w, b in params[:-1]:
            h = jnp.maximum(h @ w + b, 0.0)
        w, b = params[-1]
        logits = h @ w + b
        return -jnp.mean(jnp.sum(y * didax.nn.log_softmax(logits), axis=-1))
    value, grads = didax.value_and_grad(loss)(params)
    return [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads)], value


@pytest.mark.skipif(not have_compiler(), reason="no C compiler: the native tier is off")
@pytest.mark.parametrize("batch", [1, 16, 40, 128])
def test_an_mlp_step_gives_the_numpy_tiers_bits_with_the_loop(batch, one_blas_thread):
    """At batch 16 products small on one side use the loop, at 128 also those large on
    every side (batch 40: NumPy's loop for those of 40 rows)."""
    product_kernel._KERNELS.get(wait=True)  # (else a first call may not wait for it)
    rng = np.random.default_rng(batch)
    sizes = (64, 256, 256, 10)
    params = [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
               np.zeros(n, np.float32)) for m, n in zip(sizes, sizes[1:])]
    x = rng.standard_normal((batch, 64)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(10, size=batch)]
    with flag_context("didax_native_tier", "off"):
        want = didax.jit(_mlp_step)(params, x, y)
    step = didax.jit(_mlp_step)
    with flag_context("didax_native_tier", "check"):  # (each call compares the tiers too)
        got = step(params, x, y)
    for g, w in zip(didax.tree_util.tree_leaves(got), didax.tree_util.tree_leaves(want)):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
    plan = executable(step, params, x, y).native.plan
    if batch == 16:
        assert plan.products, "the products of 16 rows may use the loop"
    if batch == 128:  # (the forward pass's, the weight and input gradients')
        assert len(plan.products) >= 5, plan.products


_FIRST_CALL = textwrap.dedent("""
    import numpy as np, didax, didax.numpy as jnp
    from didax._src.compiler.native import blas_threads, product_kernel as pk
    blas_threads.set_count(1)
    x = np.ones((16, 512), np.float32)
    w = np.full((512, 512), 1 / 512, np.float32)
    didax.jit(lambda x, w: jnp.tanh(x @ w))(x, w)  # (sync: native code before this call)
    after_first_call = pk._KERNELS.status
    if after_first_call == "building":
        pk._KERNELS._built.wait(300)
    print(after_first_call, pk._KERNELS.status)
""")

# A compiler that notes its priority when it builds the loop's module, then runs the real one.
_NOTING_CC = """#!/bin/sh
for a in "$@"; do
  case "$a" in *.c) if grep -q didax_matmul_loop "$a" 2>/dev/null; then nice >> {log}; fi;; esac
done
exec {cc} "$@"
"""


@pytest.mark.skipif(not have_compiler(), reason="no C compiler: the native tier is off")
def test_a_first_call_does_not_wait_for_the_loops_module_which_builds_at_lowest_priority(
        tmp_path):
    """Building the loop's module takes 0.7 s: a first call in the "sync" mode, native code
    built before it, takes NumPy's loop for its products if the module is not cached, and
    the module builds in the background, at the lowest priority (there, a step of the
    program that goes on is not slowed)."""
    if blas_threads._openblas() is None:
        pytest.skip("no OpenBLAS: the loop is never built")
    log = tmp_path / "priorities"
    cc = tmp_path / "noting-cc"
    cc.write_text(_NOTING_CC.format(log=log, cc=toolchain.toolchain().cc[0]))
    cc.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIDAX_")}
    env.update(CC=str(cc), DIDAX_CACHE_DIR=str(tmp_path / "cache"), DIDAX_NATIVE_TIER="sync",
               PYTHONPATH=os.pathsep.join([ROOT, env.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=400)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["building", "ready"]
    assert log.read_text().split() == ["19"]
