"""Eager operations beyond arithmetic: indexing, `.at[]` updates, shape operations and random
draws, outside any transformation, against NumPy, PyTorch and JAX. Medians over interleaved
rounds, one thread each; run pinned:

    taskset -c 0 python benchmarks/eager_ops.py [--rounds N] [--frameworks didax torch ...]

X is float32 (1438, 64), idx holds 32 int32 indices, v is (32, 64). NumPy's and PyTorch's
`.at[idx].set(v)` are a copy and an in-place set (they have no functional update); random
draws compare against a fresh generator's draw where the framework has no keys. Every case is
checked first: didax gives NumPy's numbers, and the random draws give JAX's bits.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("DIDAX_NATIVE_TIER", "sync")  # eager draws' steps: the native tier's
# steady state (with the default, the NumPy tier serves them until a background build ends)

import harness  # noqa: E402 - sets single-thread environment before NumPy loads
import numpy as np  # noqa: E402

FRAMEWORKS = ("didax", "numpy", "torch", "jax")
N, D, B = 1438, 64, 32


def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D)).astype(np.float32)
    idx = rng.integers(0, N, B).astype(np.int32)
    v = rng.standard_normal((B, D)).astype(np.float32)
    return X, idx, v


def jnp_like_cases(jnp, random, X, idx, v, block=lambda r: r):
    """The cases for didax or JAX, which share an API; `block` waits for a result."""
    Xa, ia, va = jnp.asarray(X), jnp.asarray(idx), jnp.asarray(v)
    key = random.PRNGKey(0)
    return {
        "X[idx]": lambda: block(Xa[ia]),
        "X[i]": lambda: block(Xa[7]),
        "X[a:b]": lambda: block(Xa[100:200]),
        "X[:, 3]": lambda: block(Xa[:, 3]),
        "X.at[idx].set(v)": lambda: block(Xa.at[ia].set(va)),
        "jnp.take(X, idx, axis=0)": lambda: block(jnp.take(Xa, ia, axis=0)),
        "jnp.concatenate([v, v])": lambda: block(jnp.concatenate([va, va])),
        "v.reshape(64, 32).T": lambda: block(va.reshape(64, 32).T),
        "jnp.stack([v, v])": lambda: block(jnp.stack([va, va])),
        "jnp.expand_dims(v, 0)": lambda: block(jnp.expand_dims(va, 0)),
        "random.normal(key, (32,))": lambda: block(random.normal(key, (32,))),
        "random.split(key)": lambda: block(random.split(key)),
        "random.fold_in(key, 3)": lambda: block(random.fold_in(key, 3)),
        "random.permutation(key, 1438)": lambda: block(random.permutation(key, N)),
    }


def numpy_cases(X, idx, v):
    gen = np.random.default_rng(0)
    return {
        "X[idx]": lambda: X[idx],
        "X[i]": lambda: X[7],
        "X[a:b]": lambda: X[100:200],
        "X[:, 3]": lambda: X[:, 3],
        "X.at[idx].set(v)": lambda: _np_set(X, idx, v),
        "jnp.take(X, idx, axis=0)": lambda: np.take(X, idx, axis=0),
        "jnp.concatenate([v, v])": lambda: np.concatenate([v, v]),
        "v.reshape(64, 32).T": lambda: v.reshape(64, 32).T,
        "jnp.stack([v, v])": lambda: np.stack([v, v]),
        "jnp.expand_dims(v, 0)": lambda: np.expand_dims(v, 0),
        "random.normal(key, (32,))": lambda: gen.standard_normal(32, dtype=np.float32),
        "random.permutation(key, 1438)": lambda: gen.permutation(N),
    }


def _np_set(X, idx, v):
    out = X.copy()
    out[idx] = v
    return out


def torch_cases(X, idx, v):
    import torch

    Xt, it, vt = torch.from_numpy(X), torch.from_numpy(idx.astype(np.int64)), torch.from_numpy(v)
    gen = torch.Generator().manual_seed(0)

    def at_set():
        out = Xt.clone()
        out[it] = vt
        return out

    return {
        "X[idx]": lambda: Xt[it],
        "X[i]": lambda: Xt[7],
        "X[a:b]": lambda: Xt[100:200],
        "X[:, 3]": lambda: Xt[:, 3],
        "X.at[idx].set(v)": at_set,
        "jnp.take(X, idx, axis=0)": lambda: torch.index_select(Xt, 0, it),
        "jnp.concatenate([v, v])": lambda: torch.cat([vt, vt]),
        "v.reshape(64, 32).T": lambda: vt.reshape(64, 32).T,
        "jnp.stack([v, v])": lambda: torch.stack([vt, vt]),
        "jnp.expand_dims(v, 0)": lambda: torch.unsqueeze(vt, 0),
        "random.normal(key, (32,))": lambda: torch.randn(32, generator=gen),
        "random.permutation(key, 1438)": lambda: torch.randperm(N, generator=gen),
    }


def cases(frameworks) -> dict:
    X, idx, v = data()
    out = {}
    if "didax" in frameworks:
        import didax.numpy as dnp
        import didax.random as drandom

        for label, fn in jnp_like_cases(dnp, drandom, X, idx, v).items():
            out[label, "didax"] = fn
    if "numpy" in frameworks:
        for label, fn in numpy_cases(X, idx, v).items():
            out[label, "numpy"] = fn
    if "torch" in frameworks:
        for label, fn in torch_cases(X, idx, v).items():
            out[label, "torch"] = fn
    if "jax" in frameworks:
        import jax
        import jax.numpy as jjnp

        block = jax.block_until_ready
        for label, fn in jnp_like_cases(jjnp, jax.random, X, idx, v, block).items():
            out[label, "jax"] = fn
    return out


def check(all_cases) -> None:
    """didax agrees with NumPy on the deterministic cases and with JAX's bits on the random ones."""
    labels = dict.fromkeys(label for label, _ in all_cases)
    for label in labels:
        ref = "jax" if label.startswith("random.") else "numpy"
        if (label, "didax") not in all_cases or (label, ref) not in all_cases:
            continue
        got = np.asarray(all_cases[label, "didax"]())
        want = np.asarray(all_cases[label, ref]())
        np.testing.assert_array_equal(got, want, err_msg=f"{label}: didax vs {ref}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--frameworks", nargs="*", default=list(FRAMEWORKS))
    parser.add_argument("--only", nargs="*", default=None,
                        help="time only the operations whose labels start with these")
    args = parser.parse_args()
    all_cases = cases(args.frameworks)
    if args.only:
        all_cases = {k: fn for k, fn in all_cases.items()
                     if any(k[0].startswith(p) for p in args.only)}
    check(all_cases)
    results = harness.time_interleaved(all_cases, rounds=args.rounds, target_seconds=0.01)
    print(harness.table(harness.rows(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
