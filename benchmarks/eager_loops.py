"""Eager loops: `lax.fori_loop`, `lax.scan` and `lax.while_loop` called on concrete arrays
outside `jit`, their derivatives, and the special functions that sum series in such loops,
didax against JAX. Medians over interleaved rounds, one thread each; run pinned:

    taskset -c 0 python benchmarks/eager_loops.py [--rounds N] [--frameworks didax jax]

Each call traces its loop's body again (didax) or finds it traced (JAX caches the trace of a
body function it saw), then runs it: didax interprets a short loop and compiles a long one's
body (lax/control_flow/eager_bodies.py); JAX compiles the loop once per body and runs the
compiled loop on every later call. Every case is checked first: both give the same numbers.
(JAX's derivative of hyp1f1 in its parameters is nan; that row is didax's alone.)
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import harness  # noqa: E402 - sets single-thread environment before NumPy loads
import numpy as np  # noqa: E402

FRAMEWORKS = ("didax", "jax")
RNG = np.random.default_rng(0)
W = (RNG.standard_normal((32, 32)) / 6).astype(np.float32)
XS = RNG.standard_normal((200, 32)).astype(np.float32)
H = RNG.standard_normal(32).astype(np.float32)
SQUARES = np.array([2.0, 1e6, 1e30, 7.0], np.float32)
PARAMETER_GRAD = "grad of hyp1f1 in a (its series' loops differentiated)"
POINTS = np.linspace(-0.3, 0.9, 12).astype(np.float32)  # (where JAX is accurate)


def framework_cases(api, jnp, special, block):
    lax = api.lax

    def oscillator(i, c):
        x, v = c
        return x + 0.01 * v, v - 0.01 * (0.5 * x + 0.1 * v)

    def rnn_step(h, x):
        h = jnp.tanh(h @ W + x)
        return h, jnp.sum(h)

    def newton(x):
        def body(c):
            y, k = c
            return 0.5 * (y + x / y), k + 1
        return lax.while_loop(lambda c: jnp.max(jnp.abs(c[0] * c[0] - x) / x) > 1e-6,
                              body, (x + 1.0, 0))

    start = (jnp.ones(8, np.float32), jnp.zeros(8, np.float32))
    xs, h, squares = jnp.asarray(XS), jnp.asarray(H), jnp.asarray(SQUARES)

    def loss(h):
        return jnp.sum(lax.scan(rnn_step, h, xs)[1])

    return {
        "fori_loop, 10 steps of (8,) arithmetic": lambda: block(
            lax.fori_loop(0, 10, oscillator, start)),
        "fori_loop, 1000 steps of (8,) arithmetic": lambda: block(
            lax.fori_loop(0, 1000, oscillator, start)),
        "scan, RNN of 200 steps, (32,) state": lambda: block(lax.scan(rnn_step, h, xs)),
        "grad through the RNN scan": lambda: block(api.grad(loss)(h)),
        "while_loop, Newton's square roots": lambda: block(newton(squares)),
        "hyp1f1 on 12 float32 points": lambda: block(special.hyp1f1(1.5, 2.5, 10 * POINTS)),
        PARAMETER_GRAD: lambda: block(api.grad(
            lambda a: special.hyp1f1(a, 2.5, 0.7))(np.float32(1.5))),
    }


def cases(frameworks) -> dict:
    out = {}
    if "didax" in frameworks:
        import didax
        import didax.numpy as dnp
        import didax.scipy.special as dspecial

        block = didax.block_until_ready
        for label, fn in framework_cases(didax, dnp, dspecial, block).items():
            out[label, "didax"] = fn
    if "jax" in frameworks:
        import jax
        import jax.numpy as jjnp
        import jax.scipy.special as jspecial

        block = jax.block_until_ready
        for label, fn in framework_cases(jax, jjnp, jspecial, block).items():
            if label != PARAMETER_GRAD:  # (JAX's derivative of hyp1f1 in a is nan)
                out[label, "jax"] = fn
    return out


def check(all_cases) -> None:
    labels = dict.fromkeys(label for label, _ in all_cases)
    results = {}
    for label in labels:
        for column in ("didax", "jax"):
            if (label, column) in all_cases:
                results[f"{column} {label}"] = all_cases[label, column]()
        harness.assert_same_numbers({k: v for k, v in results.items() if k.endswith(label)},
                                    label, rtol=2e-4)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--frameworks", nargs="*", default=list(FRAMEWORKS))
    args = parser.parse_args()
    all_cases = cases(args.frameworks)
    check(all_cases)
    results = harness.time_interleaved(all_cases, rounds=args.rounds, target_seconds=0.05)
    print(harness.table(harness.rows(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
