"""Sparse products: a 10^5 x 10^5 matrix with 10^6 stored elements times a dense vector and
times a dense (10^5, 16) matrix, as didax BCOO, BCSR and CSR (eager and under jit) against
scipy.sparse CSR, one thread each, interleaved rounds, each timed call right after an untimed
one of the same product (else a case pays for the cache its predecessor's operands evicted);
reported as medians and as ratios of medians (didax / SciPy: below 1 is faster). Every
product is checked against SciPy first. The C kernels (primitives/sparse/kernels.py) are
built (or loaded from the cache) first.

    taskset -c 0 python benchmarks/sparse_products.py [--rounds N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import harness  # noqa: E402, F401 - single-thread environment before NumPy loads
import numpy as np  # noqa: E402
import scipy.sparse as ssp  # noqa: E402

import didax  # noqa: E402
from didax._src.primitives.sparse import kernels  # noqa: E402
from didax.experimental import sparse  # noqa: E402

N, NNZ, K = 100_000, 1_000_000, 16


def operands():
    rng = np.random.default_rng(0)
    rows = rng.integers(0, N, NNZ)
    cols = rng.integers(0, N, NNZ)
    vals = rng.standard_normal(NNZ).astype(np.float32)
    csr = ssp.csr_matrix((vals, (rows, cols)), shape=(N, N))
    csr.sum_duplicates()
    v = rng.standard_normal(N).astype(np.float32)
    X = rng.standard_normal((N, K)).astype(np.float32)
    return csr, v, X


def cases(csr, v, X):
    bcoo = sparse.BCOO.from_scipy_sparse(csr)
    bcsr = sparse.BCSR.from_scipy_sparse(csr)
    csr2d = sparse.CSR((bcsr.data, bcsr.indices, bcsr.indptr), shape=bcsr.shape)
    va, Xa = didax.numpy.asarray(v), didax.numpy.asarray(X)
    matmul = didax.jit(lambda m, x: m @ x)
    out = {}
    for name, x, xa in (("matvec", v, va), ("matmat (16 columns)", X, Xa)):
        out[(name, "scipy CSR")] = lambda x=x: csr @ x
        out[(name, "BCOO eager")] = lambda xa=xa: (bcoo @ xa).block_until_ready()
        out[(name, "BCOO jit")] = lambda xa=xa: matmul(bcoo, xa).block_until_ready()
        out[(name, "BCSR eager")] = lambda xa=xa: (bcsr @ xa).block_until_ready()
        out[(name, "BCSR jit")] = lambda xa=xa: matmul(bcsr, xa).block_until_ready()
        out[(name, "CSR eager")] = lambda xa=xa: (csr2d @ xa).block_until_ready()
        out[(name, "CSR jit")] = lambda xa=xa: matmul(csr2d, xa).block_until_ready()
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    kernels.native_module(wait=True)  # (else NumPy serves the products while it builds)
    csr, v, X = operands()
    table = cases(csr, v, X)
    for (name, _who), fn in table.items():  # checked (and warmed up: jit traces here)
        want = table[(name, "scipy CSR")]()
        np.testing.assert_allclose(np.asarray(fn()), want, rtol=2e-4, atol=2e-4)
    times = {key: [] for key in table}
    for _ in range(args.rounds):
        for key, fn in table.items():
            fn()  # (untimed: each case timed with its operands in cache, as in a loop)
            t = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t)
    med = {key: statistics.median(ts) for key, ts in times.items()}
    print(f"{N} x {N}, {csr.nnz} stored elements, float32; medians of {args.rounds} rounds")
    for (name, who), m in med.items():
        ratio = m / med[(name, "scipy CSR")]
        print(f"  {name:22s} {who:12s} {m * 1e3:8.2f} ms   {ratio:5.2f} x scipy")


if __name__ == "__main__":
    main()
