"""The native tier against the NumPy tier on a jitted chain of 20 elementwise operations
(float32, (32, 128) and (8, 8)): medians of repeated timings. Run pinned to one core:

    OMP_NUM_THREADS=1 taskset -c 0 python benchmarks/native_tier.py
"""
import statistics
import time

import numpy as np

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.config import flag_context


def chain(x, y):
    a = jnp.tanh(x) * 1.5 + y              # tanh, mul, add
    b = jnp.exp(-jnp.abs(a)) - 0.25        # abs, neg, exp, sub
    c = lax.logistic(b * y) + a * a        # mul, logistic, mul, add
    d = jnp.sqrt(jnp.maximum(c, 0.0)) / (1.0 + y * y)  # max, sqrt, mul, add, div
    e = jnp.where(d > 0.5, d, -d) + jnp.log1p(jnp.abs(c))  # gt, neg, select, abs, log1p, add
    return e * 0.5 - x                     # mul, sub


def median_us(f, *args, repeat=2000):
    for _ in range(50):
        f(*args)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main():
    rng = np.random.RandomState(0)
    for shape in [(32, 128), (8, 8)]:
        x = didax.numpy.asarray(rng.randn(*shape).astype(np.float32))
        y = didax.numpy.asarray(rng.randn(*shape).astype(np.float32))
        with flag_context("didax_native_tier", "off"):
            f_np = didax.jit(chain)
            t_np = median_us(f_np, x, y)
        with flag_context("didax_native_tier", "sync"):
            f_c = didax.jit(chain)
            t0 = time.perf_counter()
            f_c(x, y)
            build = time.perf_counter() - t0
            t_c = median_us(f_c, x, y)
        n_eqns = len(f_c.lower(x, y).jaxpr.jaxpr.eqns)
        print(f"{shape}: {n_eqns} equations; NumPy tier {t_np:8.1f} us, native {t_c:8.1f} us "
              f"({t_np / t_c:4.1f}x); first native call (build or cache) {build * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
