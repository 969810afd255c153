"""Runs many corner cases under didax and JAX and prints where they differ (not a test:
`python tests/corner_survey.py [section ...]`, from the repository root).

Each case is a program `f(jax_module, numpy_module, *args)` run by both libraries, eagerly
and under jit; a difference from JAX's result in the same mode is printed with the first
differing elements (JAX's eager result differing from its own jit one is printed too: there,
XLA's fusion decides). Sections: ints (integer primitives at their limits), casts, indexing
(derivatives at out-of-bounds indices), lowp (float16/bfloat16 derivatives), nan (NaN and
infinities through selects, extrema and their derivatives), bool (products by booleans).
The differences left are listed in the README's deliberate differences, or are a few ulps
of libm and XLA's approximations.
"""
import os
import sys
import warnings

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import didax  # noqa: E402
import didax.numpy as dnp  # noqa: E402

LIBS = {"jax": (jax, jnp), "didax": (didax, dnp)}
found = []


def _run(lib, jit, f, args):
    j, n = LIBS[lib]

    def g(*a):
        return f(j, n, *a)

    try:
        out = (j.jit(g) if jit else g)(*[n.asarray(a) for a in args])
        return [np.asarray(v) for v in jax.tree_util.tree_leaves(out)]
    except Exception as e:  # noqa: BLE001 - the error type is the result
        return type(e).__name__


def _same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return len(a) == len(b) and all(
        x.dtype == y.dtype and x.shape == y.shape and np.array_equal(
            x.astype(np.float64) if x.dtype.kind == "V" else x,
            y.astype(np.float64) if y.dtype.kind == "V" else y,
            equal_nan=x.dtype.kind in "fcV") for x, y in zip(a, b))


def _show(r):
    """An error's name, or the first elements of each result."""
    return r if isinstance(r, str) else [np.ravel(v)[:6].tolist() for v in r]


def compare(name, f, *args):
    """f under didax against JAX, eager against eager and jit against jit."""
    for jit in (False, True):
        want, got = _run("jax", jit, f, args), _run("didax", jit, f, args)
        if not _same(got, want):
            found.append(name)
            print(f"{name} [{'jit' if jit else 'eager'}]: didax {_show(got)} jax {_show(want)}")


INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _edges(dtype):
    info = np.iinfo(dtype)
    v = {0, 1, 2, 3, 7, 100, info.max, info.max - 1, info.min, info.min + 1}
    if info.min < 0:
        v |= {-1, -2, -7}
    return np.array(sorted(v), dtype)


def ints():
    for d in INTS:
        v = _edges(d)
        x, y = [a.ravel() for a in np.meshgrid(v, v)]
        bits = 8 * np.dtype(d).itemsize
        counts = np.array([0, 1, bits - 1, bits, bits + 1] + ([-1] if v.min() < 0 else []), d)
        xs, s = [a.ravel() for a in np.meshgrid(v, counts)]
        name = np.dtype(d).name
        for op in ("add", "sub", "mul", "div", "rem", "max", "min"):
            compare(f"lax.{op} {name}", lambda j, n, a, b, op=op: getattr(j.lax, op)(a, b), x, y)
        for op in ("shift_left", "shift_right_logical", "shift_right_arithmetic"):
            compare(f"lax.{op} {name}", lambda j, n, a, b, op=op: getattr(j.lax, op)(a, b),
                    xs, s)
        for op in ("neg", "sign", "clz", "population_count", "bitwise_not"):
            compare(f"lax.{op} {name}", lambda j, n, a, op=op: getattr(j.lax, op)(a), v)
        for p in (2, 3, 8, 63):
            compare(f"integer_pow {p} {name}", lambda j, n, a, p=p: j.lax.integer_pow(a, p), v)
        for op in ("floor_divide", "remainder", "fmod", "power", "right_shift", "left_shift"):
            compare(f"jnp.{op} {name}", lambda j, n, a, b, op=op: getattr(n, op)(a, b), x, y)
        for op in ("abs", "negative", "sign", "bitwise_count", "square"):
            compare(f"jnp.{op} {name}", lambda j, n, a, op=op: getattr(n, op)(a), v)
        compare(f"python int past {name}",
                lambda j, n, a: [a + 1000, a * -129, a < 1000, n.maximum(a, 300)], v)


def casts():
    values = np.array([np.inf, -np.inf, np.nan, 0.9, -0.9, -1.5, 127.5, 128.0, -129.0, 255.9,
                       256.0, 32767.9, 65535.5, 2.0 ** 31, 3e9, -3e9, 2.0 ** 32, 2.0 ** 63,
                       1.8e19, 2.0 ** 64, 1e20])
    for src in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64):
        x = values.astype(src)
        for d in INTS + [np.bool_]:
            compare(f"convert {np.dtype(src).name} -> {np.dtype(d).name}",
                    lambda j, n, a, d=d: j.lax.convert_element_type(a, d), x)
    for src in INTS:
        for d in INTS + [np.bool_, np.float16, np.float32]:
            compare(f"convert {np.dtype(src).name} -> {np.dtype(d).name}",
                    lambda j, n, a, d=d: j.lax.convert_element_type(a, d), _edges(src))


def indexing():
    x = np.arange(5.0, dtype=np.float32) + 1
    i = np.array([1, 9, -7, 4, 4, -1])
    u = np.array([10.0, -20.0, 30.0, 40.0, 50.0, 60.0], np.float32)
    for mode in (None, "clip", "fill", "promise_in_bounds"):
        compare(f"grad get {mode}", lambda j, n, x, i, mode=mode: j.grad(
            lambda x: n.sum(x.at[i].get(mode=mode) ** 2))(x), x, i)
        for op in ("set", "add", "min", "max"):
            compare(f"grad {op} {mode}", lambda j, n, x, i, u, mode=mode, op=op: j.grad(
                lambda x, u: n.sum(getattr(x.at[i], op)(u, mode=mode) ** 2), (0, 1))(x, u),
                x, i, u)
    for s in (-3, 0, 3, 7):
        compare(f"grad dynamic_slice {s}", lambda j, n, x, s: j.grad(
            lambda x: n.sum(j.lax.dynamic_slice(x, (s,), (3,)) ** 2))(x), x, np.int32(s))
        compare(f"grad dynamic_update_slice {s}", lambda j, n, x, u, s: j.grad(
            lambda x, u: n.sum(j.lax.dynamic_update_slice(x, u, (s,)) ** 2), (0, 1))(x, u),
            x, u[:3], np.int32(s))


def lowp():
    rng = np.random.default_rng(0)
    unary = ("exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan",
             "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt",
             "rsqrt", "cbrt", "erf", "erfc", "erf_inv", "lgamma", "digamma")
    domain = {"log": (0.1, 5), "sqrt": (0.1, 5), "rsqrt": (0.1, 5), "cbrt": (0.1, 5),
              "acosh": (1.1, 4), "lgamma": (0.5, 4), "digamma": (0.5, 4)}
    for dt in (np.float16, ml_dtypes.bfloat16):
        for name in unary:
            lo, hi = domain.get(name, (-0.9, 0.9))
            x, t = rng.uniform(lo, hi, 200).astype(dt), rng.normal(size=200).astype(dt)
            compare(f"{np.dtype(dt).name} {name}", lambda j, n, x, t, name=name: j.jvp(
                getattr(j.lax, name), (x,), (t,)), x, t)
        for name in ("div", "pow", "atan2", "max", "rem"):
            x, y = rng.uniform(0.5, 3, (2, 200)).astype(dt)
            compare(f"{np.dtype(dt).name} {name}", lambda j, n, x, y, name=name: j.jvp(
                getattr(j.lax, name), (x, y), (y, x)), x, y)


def nan():
    x = np.array([np.nan, 1.0, -np.inf, np.inf, 0.0, -0.0, 2.0, np.nan], np.float32)
    y = np.array([1.0, np.nan, np.inf, np.inf, -0.0, 0.0, 2.0, np.nan], np.float32)
    for op in ("maximum", "minimum", "fmax", "fmin"):
        compare(op, lambda j, n, a, b, op=op: getattr(n, op)(a, b), x, y)
        compare(f"grad {op}", lambda j, n, a, b, op=op: j.vmap(j.grad(
            lambda a, b: getattr(n, op)(a, b), (0, 1)))(a, b), x, y)
    for op in ("max", "min", "argmax", "sort", "cumsum", "mean"):
        compare(op, lambda j, n, a, op=op: getattr(n, op)(a), x)
    compare("grad where sqrt", lambda j, n, a: j.grad(
        lambda a: n.sum(n.where(a > 0, n.sqrt(a), 0.0)))(a), np.array([-1.0, 0.0, 4.0]))
    compare("grad clip", lambda j, n, a: j.vmap(j.grad(lambda a: n.clip(a, -1.0, 1.0)))(a), x)


def bool_products():
    b = np.array([True, False, False, True, False])
    x = np.array([np.inf, np.inf, np.nan, np.nan, -5.0], np.float32)
    compare("b * x", lambda j, n, b, x: [b * x, x * b, b.astype(n.float32) * x,
                                         b * 1.0 + (~b) * n.inf, b[None] * n.stack([x, x])],
            b, x)


SECTIONS = {"ints": ints, "casts": casts, "indexing": indexing, "lowp": lowp, "nan": nan,
            "bool": bool_products}

if __name__ == "__main__":
    warnings.simplefilter("ignore")
    jax.config.update("jax_enable_x64", True)
    didax.config.update("jax_enable_x64", True)
    for section in sys.argv[1:] or SECTIONS:
        SECTIONS[section]()
    print(f"{len(found)} cases differ")
